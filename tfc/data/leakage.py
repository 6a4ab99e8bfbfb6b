"""Training mixes with a leakage filter against every evaluation example.

A training pair is removed when its grounding **or** its generated text

1. equals an evaluation text (grounding or generated of any ``role="eval"`` set with text) after
   normalisation (:func:`normalize`: NFKC, lower-case, punctuation dropped, whitespace collapsed); or
2. is a near-duplicate: at least ``near_threshold`` of its word ``n``-gram shingles (default 5-grams,
   share 0.8) occur in the evaluation texts. Shingles are hashed (``hash()`` of the n-gram tuple with
   a fixed key, see :func:`_shingles`) and held in one Python set, an exact inverted index without
   MinHash; texts shorter than ``n`` words are covered by rule 1 only.

Rule 2 measures containment of the *training* text in the union of evaluation shingles, so a
training passage stitched from two evaluation passages is also caught. The report gives, per source,
rows in, rows removed by each rule and rows kept.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Iterable

import pandas as pd

import tfc.data as D

_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    t = unicodedata.normalize("NFKC", str(text)).lower()
    t = _PUNCT.sub(" ", t)
    return _WS.sub(" ", t).strip()


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=12).digest()


def _shingles(norm: str, n: int) -> set[int]:
    w = norm.split()
    if len(w) < n:
        return set()
    # Python's hash of a str tuple is salted per process (PYTHONHASHSEED) but is consistent within the
    # process, which is all the index needs; nothing is persisted.
    return {hash(tuple(w[i:i + n])) for i in range(len(w) - n + 1)}


class EvalIndex:
    """Exact-match keys and n-gram shingles of a set of evaluation texts."""

    def __init__(self, texts: Iterable[str], n: int = 5):
        self.n = n
        self.exact: set[bytes] = set()
        self.shingles: set[int] = set()
        for t in texts:
            norm = normalize(t)
            if not norm:
                continue
            k = _key(norm)
            if k in self.exact:
                continue
            self.exact.add(k)
            self.shingles |= _shingles(norm, n)

    def check(self, text: str, near_threshold: float) -> str | None:
        """``'exact'``, ``'near'`` or None for one training text."""
        norm = normalize(text)
        if not norm:
            return None
        if _key(norm) in self.exact:
            return "exact"
        sh = _shingles(norm, self.n)
        if sh and sum(1 for s in sh if s in self.shingles) / len(sh) >= near_threshold:
            return "near"
        return None


_INDEX_MEMO: dict[tuple, EvalIndex] = {}


def eval_texts(eval_sets: list[str] | None = None) -> list[str]:
    """Groundings and generated texts of every evaluation set with text (all splits) that is a leakage target
    (``DatasetSpec.leakage_target``)."""
    names = eval_sets or [n for n in D.names(role="eval")
                          if D.status(n) in ("text", "approximate") and D.info(n).leakage_target]
    texts = []
    for n in names:
        if D.info(n).role != "eval":
            raise ValueError(f"{n} is a training-side set, not an evaluation set")
        df = D.load(n)
        texts += df["grounding"].tolist() + df["generated"].tolist()
    return texts


def eval_index(eval_sets: list[str] | None = None, n: int = 5) -> EvalIndex:
    key = (tuple(eval_sets) if eval_sets else None, n)
    if key not in _INDEX_MEMO:
        _INDEX_MEMO[key] = EvalIndex(eval_texts(eval_sets), n=n)
    return _INDEX_MEMO[key]


def filter_frame(df: pd.DataFrame, index: EvalIndex, near_threshold: float = 0.8) -> tuple[pd.DataFrame, pd.Series]:
    """Return (kept rows, reason per row: '' | 'exact' | 'near'). A pair goes when either text leaks."""
    memo: dict[str, str | None] = {}

    def chk(t):
        if t not in memo:
            memo[t] = index.check(t, near_threshold)
        return memo[t]

    reasons = []
    for g, h in zip(df["grounding"], df["generated"]):
        a, b = chk(g), chk(h)
        reasons.append("exact" if "exact" in (a, b) else ("near" if "near" in (a, b) else ""))
    reasons = pd.Series(reasons, index=df.index)
    return df[reasons == ""], reasons


def training_mix(sources, eval_sets: list[str] | None = None, n: int = 5, near_threshold: float = 0.8,
                 sample: int | None = None, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Concatenate training sources and drop every pair that leaks evaluation text.

    ``sources``: names of ``role="train"`` sets (``"name"`` or ``"name:split"``) or DataFrames in the
    common schema (their ``dataset`` column names the source in the report). ``eval_sets``: the
    evaluation sets to protect (default: every evaluation set with text). Returns ``(mix, report)``;
    ``report`` has columns ``source, n_in, removed_exact, removed_near, n_out``.
    """
    if isinstance(sources, (str, pd.DataFrame)):
        sources = [sources]
    if not (0 < near_threshold <= 1):
        raise ValueError("near_threshold must lie in (0, 1]")
    index = eval_index(eval_sets, n)
    frames, report = [], []
    for src in sources:
        if isinstance(src, pd.DataFrame):
            missing = {"grounding", "generated"} - set(src.columns)
            if missing:
                raise ValueError(f"training frame lacks columns {sorted(missing)}")
            df = src
            label = str(df["dataset"].iloc[0]) if "dataset" in df and len(df) else "frame"
        else:
            name, _, split = str(src).partition(":")
            if D.info(name).role != "train":
                raise ValueError(f"{name} is an evaluation set (role='eval'); training on it is not allowed")
            df = D.load(name, split=split or None, sample=sample, seed=seed)
            label = str(src)
        kept, reasons = filter_frame(df, index, near_threshold)
        report.append({"source": label, "n_in": len(df), "removed_exact": int((reasons == "exact").sum()),
                       "removed_near": int((reasons == "near").sum()), "n_out": len(kept)})
        frames.append(kept)
    mix = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=D.SCHEMA)
    return mix, pd.DataFrame(report)
