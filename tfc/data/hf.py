"""Hugging Face ``datasets`` views of the common schema, and ``tfc data export``.

* :func:`to_hf` turns a frame in the common schema into a ``datasets.Dataset`` with fixed features:
  ``id, dataset, split, grounding, generated`` strings, ``label`` int64 and ``meta`` a **JSON-encoded
  string** (the per-row ``meta`` dicts differ in keys and value types between datasets, and a JSON
  string keeps each one exactly; ``json.loads`` gives the dict back; a NaN inside ``meta`` is written
  as ``NaN``, as Python's ``json`` does). Any further columns (e.g.
  ``label3`` of the NLI training sets) follow, with the types Arrow infers.
* :func:`from_hf` is the inverse: a DataFrame in the common schema with ``meta`` as dicts again.
* :func:`export` writes a registered dataset to a directory, one split per ``datasets`` split:
  ``hf`` (``DatasetDict.save_to_disk``; read with ``datasets.load_from_disk``), ``parquet`` or
  ``jsonl`` (``data/<split>.<ext>`` plus a ``README.md`` whose YAML header lists the splits and
  features, so ``datasets.load_dataset(DIR)`` reads it back with the same splits and types).

``datasets`` is imported only inside these functions.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd

FORMATS = ("hf", "parquet", "jsonl")
_STRING_COLS = ("id", "dataset", "split", "grounding", "generated")


def _require():
    try:
        import datasets
    except ImportError:  # pragma: no cover - datasets is pinned in requirements.txt
        raise ImportError("Hugging Face 'datasets' is not installed; pip install datasets "
                          "(it is pinned in requirements.txt)") from None
    return datasets


def features_for(df: pd.DataFrame):
    """``datasets.Features`` for a common-schema frame (extra columns inferred by Arrow)."""
    datasets = _require()
    import pyarrow as pa

    feats = {c: datasets.Value("string") for c in _STRING_COLS}
    feats["label"] = datasets.Value("int64")
    feats["meta"] = datasets.Value("string")
    extra = [c for c in df.columns if c not in feats]
    if extra:
        inferred = datasets.Features.from_arrow_schema(pa.Table.from_pandas(df[extra], preserve_index=False).schema)
        for c in extra:
            feats[c] = inferred[c]
    cols = [c for c in df.columns]
    return datasets.Features({c: feats[c] for c in cols})


def _encode_meta(m) -> str:
    if isinstance(m, str):
        return m
    return json.dumps({} if m is None else m, ensure_ascii=False, sort_keys=True, default=str)


def to_hf(df: pd.DataFrame):
    """A ``datasets.Dataset`` of a common-schema frame (``meta`` JSON-encoded; see the module docstring)."""
    datasets = _require()
    from tfc.data import SCHEMA

    missing = [c for c in SCHEMA if c not in df.columns]
    if missing:
        raise ValueError(f"not in the common schema: missing column(s) {missing}; columns: {list(df.columns)}")
    out = df[SCHEMA + [c for c in df.columns if c not in SCHEMA]].reset_index(drop=True).copy()
    for c in _STRING_COLS:
        out[c] = out[c].astype(object)
    out["label"] = out["label"].astype("int64")
    out["meta"] = [_encode_meta(m) for m in out["meta"]]
    return datasets.Dataset.from_pandas(out, features=features_for(out), preserve_index=False)


def from_hf(ds) -> pd.DataFrame:
    """The common-schema frame of a Dataset made by :func:`to_hf` (``meta`` decoded back to dicts)."""
    df = ds.to_pandas()
    if "meta" in df.columns:
        df["meta"] = [json.loads(m) if isinstance(m, str) else m for m in df["meta"]]
    return df


def _readme(name: str, fmt: str, splits, feats) -> str:
    import yaml

    from tfc import __version__

    header = {
        "configs": [{"config_name": "default",
                     "data_files": [{"split": s, "path": f"data/{s}.{fmt}"} for s in splits]}],
        "dataset_info": {"features": [{"name": k, "dtype": v.dtype} for k, v in feats.items()
                                      if hasattr(v, "dtype") and type(v).__name__ == "Value"]},
    }
    if len(header["dataset_info"]["features"]) != len(feats):   # a nested feature: let datasets infer
        del header["dataset_info"]
    return ("---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n\n"
            f"# {name}\n\nExported by tfc {__version__} (`tfc data export {name} --format {fmt}`) in tfc's common "
            "schema: `id, dataset, split, grounding, generated, label` (1 = consistent) and `meta` (a JSON-encoded "
            f"string). Splits: {', '.join(splits)}. Provenance, licence and statistics: `tfc data show {name}`.\n")


def export(name: str, fmt: str, out, split: str | None = None, sample: int | None = None, seed: int = 0,
           overwrite: bool = False) -> Path:
    """Write dataset ``name`` to directory ``out`` in ``fmt`` (``hf``, ``parquet``, ``jsonl``); see the
    module docstring for the layout. The directory is built under a temporary name and renamed, so a
    failed export leaves nothing; an existing ``out`` is refused unless ``overwrite``."""
    datasets = _require()
    from tfc.data import load

    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    out = Path(out)
    if out.exists() and not overwrite:
        raise FileExistsError(f"{out} exists; pass --overwrite to replace it")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"{out}: directory {out.parent} does not exist")
    df = load(name, split=split, sample=sample, seed=seed)
    if len(df) == 0:
        raise ValueError(f"{name}: nothing to export (no rows)")
    splits = list(dict.fromkeys(df["split"].astype(str)))
    dd = datasets.DatasetDict({s: to_hf(df[df["split"].astype(str) == s]) for s in splits})
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        if fmt == "hf":
            dd.save_to_disk(str(tmp))
        else:
            (tmp / "data").mkdir(parents=True)
            for s, ds in dd.items():
                path = tmp / "data" / f"{s}.{fmt}"
                if fmt == "parquet":
                    ds.to_parquet(str(path))
                else:
                    ds.to_json(str(path), lines=True, force_ascii=False)
            feats = next(iter(dd.values())).features
            (tmp / "README.md").write_text(_readme(name, fmt, splits, feats), encoding="utf-8")
        if out.exists():
            shutil.rmtree(out) if out.is_dir() else out.unlink()
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out
