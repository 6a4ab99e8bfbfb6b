"""Datasets in the common schema: ``id, dataset, split, grounding, generated, label, meta``.

Public API (stable)::

    tfc.data.names(include_unavailable=False, group=None, role=None)  # default: the nine TRUE text sets
    tfc.data.load(name, split=None, sample=None, seed=0)              # DataFrame in the common schema
    tfc.data.load(name, as_hf=True)                                   # the same as a datasets.Dataset
    tfc.data.labels(name)                                             # id, label for every TRUE set
    tfc.data.status(name)                                             # text | label-only | approximate | unavailable
    tfc.data.info(name)                                               # the registry entry (DatasetSpec)
    tfc.data.training_mix(sources, ...)                               # leakage-filtered training set + report

``label`` is an int, 1 = consistent (training-side NLI sets: 1 = entailment, with the 3-way label in
``label3``; WeCheck weak-label sets: -1 = no gold label). ``meta`` is a dict per row. Every raw file is
checked against ``data/MANIFEST`` before it is read (:class:`ChecksumError` otherwise).

``as_hf=True`` returns a Hugging Face ``datasets.Dataset`` with the same rows and columns: the five
text columns as strings, ``label`` int64, and ``meta`` as a **JSON-encoded string** (``json.loads``
gives the dict; :func:`tfc.data.hf.from_hf` decodes a whole Dataset back to the frame). ``tfc data
export NAME --format hf|parquet|jsonl --out DIR`` writes a set for ``datasets.load_from_disk`` (hf) or
``datasets.load_dataset(DIR)`` (parquet, jsonl); see :mod:`tfc.data.hf`.

Sampling: ``sample=n`` draws a **stratified** random sample by ``label`` (proportional allocation,
largest remainders, at least one row of each class when n allows), with ``numpy.random.default_rng(seed)``;
it is deterministic for a given seed and keeps the original row order.
"""
from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config
from tfc.data.errors import (ChecksumError, DataError, LabelOnlyError, MissingRawFileError,  # noqa: F401
                             UnavailableError, UnknownDatasetError)
from tfc.data.registry import REGISTRY, SPECS, STATUSES, DatasetSpec  # noqa: F401

SCHEMA = ["id", "dataset", "split", "grounding", "generated", "label", "meta"]
TRUE_TEXT = ["frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2", "dialfact", "paws"]
TRUE_LABEL_ONLY = ["fever", "vitaminc"]
TRUE_ALL = TRUE_TEXT + TRUE_LABEL_ONLY
BUILD_VERSION = "1"  # bump when a builder changes its output, to invalidate data/processed caches
PROCESSED_DIR = config.REPO_ROOT / "data" / "processed"
SLOW_BUILDS = {"summac_polytope"}  # builders slow enough to be cached on disk (keyed by raw sha256)

_MEMO: dict[tuple, pd.DataFrame] = {}


def names(include_unavailable: bool = False, group: str | None = None, role: str | None = None,
          all: bool = False) -> list[str]:
    """Dataset names. With no argument: the nine TRUE text sets in TRUE's order (what the overview
    chapter and the meta-evaluation loop over). ``all=True`` lists every registered set that can be
    loaded or labelled (``include_unavailable=True`` adds the unavailable ones); ``group`` (TRUE,
    SummaC, scores, Q2 paper, training) and ``role`` (eval, train) filter."""
    if not (all or include_unavailable or group or role):
        return list(TRUE_TEXT)
    out = []
    for s in SPECS:
        if s.status == "unavailable" and not include_unavailable:
            continue
        if group and s.group != group:
            continue
        if role and s.role != role:
            continue
        out.append(s.name)
    return out


def info(name: str) -> DatasetSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownDatasetError(
            f"unknown dataset {name!r}; known: {', '.join(names(include_unavailable=True))}") from None


def status(name: str) -> str:
    return info(name).status


def _cache_key(spec: DatasetSpec) -> str:
    from tfc.data.manifest import raw_path, _cached_sha

    h = hashlib.sha256(f"{spec.name}:{BUILD_VERSION}".encode())
    for rel in spec.raw_files:
        h.update(_cached_sha(raw_path(rel)).encode())  # raw_path refuses a changed file
    return h.hexdigest()[:16]


def _build(spec: DatasetSpec) -> pd.DataFrame:
    key = _cache_key(spec)  # verifies every raw file's checksum, even on a cache hit
    memo_key = (spec.name, key, str(config.data_dir()))
    if memo_key in _MEMO:
        return _MEMO[memo_key]
    df = None
    disk = PROCESSED_DIR / f"{spec.name}-{key}.pkl"
    if spec.name in SLOW_BUILDS and disk.is_file():
        df = pd.read_pickle(disk)  # our own cache file, written below from verified raw inputs
    if df is None:
        df = spec.builder()
        if spec.name in SLOW_BUILDS:
            PROCESSED_DIR.mkdir(parents=True, exist_ok=True)
            tmp = disk.with_suffix(".tmp")
            with open(tmp, "wb") as f:
                pickle.dump(df, f, protocol=pickle.HIGHEST_PROTOCOL)
            tmp.replace(disk)
    _MEMO[memo_key] = df
    return df


def _check_loadable(spec: DatasetSpec) -> None:
    if spec.status == "label-only":
        raise LabelOnlyError(
            f"{spec.name}: the text of this dataset is not available offline ({spec.reason}) "
            f"tfc.data.labels({spec.name!r}) and imported peer scores still work for the meta-evaluation.")
    if spec.status == "unavailable":
        raise UnavailableError(f"{spec.name} is unavailable: {spec.reason}")


def stratified_sample(df: pd.DataFrame, n: int, seed: int = 0, by: str = "label") -> pd.DataFrame:
    """Deterministic stratified sample of ``n`` rows (proportional to class sizes), original order kept."""
    if n is None or n >= len(df):
        return df
    if n <= 0:
        raise ValueError(f"sample must be a positive integer, got {n}")
    rng = np.random.default_rng(seed)
    groups = {k: np.flatnonzero((df[by] == k).to_numpy()) for k in sorted(df[by].unique())}
    sizes = {k: len(v) for k, v in groups.items()}
    quota = {k: n * s / len(df) for k, s in sizes.items()}
    alloc = {k: int(np.floor(q)) for k, q in quota.items()}
    if n >= len(groups):  # at least one of each class
        for k in alloc:
            alloc[k] = max(alloc[k], 1)
    rest = n - sum(alloc.values())
    for k in sorted(quota, key=lambda k: (-(quota[k] - np.floor(quota[k])), str(k))):
        if rest <= 0:
            break
        if alloc[k] < sizes[k]:
            alloc[k] += 1
            rest -= 1
    while sum(alloc.values()) > n:  # the at-least-one rule overshot: trim the largest class
        k = max(alloc, key=lambda k: alloc[k])
        alloc[k] -= 1
    idx = np.concatenate([rng.choice(groups[k], size=alloc[k], replace=False) for k in groups if alloc[k] > 0])
    return df.iloc[np.sort(idx)]


def load(name: str, split: str | None = None, sample: int | None = None, seed: int = 0, as_hf: bool = False):
    """A dataset in the common schema (a fresh copy). ``split=None`` gives every split of the set.
    ``as_hf=True`` returns it as a ``datasets.Dataset`` (``meta`` JSON-encoded; see the module docstring).

    Raises :class:`UnknownDatasetError`, :class:`LabelOnlyError` (FEVER, VitaminC),
    :class:`UnavailableError`, :class:`ChecksumError` or :class:`MissingRawFileError`.
    """
    spec = info(name)
    _check_loadable(spec)
    if sample is not None and (not isinstance(sample, (int, np.integer)) or isinstance(sample, bool)):
        raise TypeError(f"sample must be an int or None, got {sample!r}")
    df = _build(spec)
    if split is not None:
        if split not in spec.splits:
            raise ValueError(f"{name} has no split {split!r}; splits: {', '.join(spec.splits)}")
        df = df[df["split"] == split]
    df = stratified_sample(df, sample, seed) if sample is not None else df
    out = df.reset_index(drop=True).copy()
    out["meta"] = [dict(m) for m in out["meta"]]
    if as_hf:
        from tfc.data.hf import to_hf

        return to_hf(out)
    return out


def labels(name: str) -> pd.DataFrame:
    """``id, label`` of a TRUE set in TRUE's row order (label-only sets included); MNBM gives all 2500
    TRUE rows, including the 5 whose text is missing offline."""
    if name not in TRUE_ALL:
        spec = info(name)
        _check_loadable(spec)
        return load(name)[["id", "label"]]
    from tfc.data.builders import true_labels

    info(name)
    return true_labels(name)


def training_mix(sources, **kwargs):
    """Leakage-filtered training set; see :func:`tfc.data.leakage.training_mix`."""
    from tfc.data.leakage import training_mix as _tm

    return _tm(sources, **kwargs)


def summary(names_: list[str] | None = None, include_unavailable: bool = True) -> pd.DataFrame:
    """One row per dataset: name, group, role, status, splits, rows, % consistent (what ``tfc data list`` shows)."""
    from tfc.data.cards import dataset_summary

    return dataset_summary(names_ or names(include_unavailable=include_unavailable))
