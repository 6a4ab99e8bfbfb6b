"""Ensembles: the per-example mean of member scores normalised to [0, 1] (TRUE's Ensemble, Table 9's
pairwise ensembles), and TRUE's ensemble-disagreement analysis.

Normalisation is min-max **within one dataset** (the data's own range), because the members live on
different scales (SummaC-ZS in [-1, 1], BERTScore can be negative, NLI probabilities in [0, 1]). A
``ranges`` mapping fixes a member's range instead (e.g. its documented output range), which makes
the ensemble independent of the sample. AUC is invariant to any increasing transform of a single
metric, but not of a mean of several, so the choice matters for ensembles and is recorded here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from tfc.meta._checks import as_labels, as_scores


def normalise(scores, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    """Min-max scale to [0, 1] using ``lo``/``hi`` (default: the data's min and max).

    A constant vector maps to 0.5 (documented, not an error: it carries no ranking information).
    Values outside a given ``[lo, hi]`` are clipped to [0, 1].
    """
    s = as_scores(scores)
    lo = float(s.min()) if lo is None else float(lo)
    hi = float(s.max()) if hi is None else float(hi)
    if hi < lo:
        raise ValueError(f"normalise: hi ({hi}) < lo ({lo})")
    if hi == lo:
        return np.full(s.shape, 0.5)
    return np.clip((s - lo) / (hi - lo), 0.0, 1.0)


def ensemble_scores(member_scores: dict, ranges: dict | None = None) -> np.ndarray:
    """Mean of the members' normalised scores (all vectors aligned, same length)."""
    if not member_scores:
        raise ValueError("ensemble needs at least one member")
    ranges = ranges or {}
    vecs = [normalise(v, *ranges.get(k, (None, None))) for k, v in member_scores.items()]
    n = {v.size for v in vecs}
    if len(n) != 1:
        raise ValueError(f"ensemble members have different lengths: {sorted(n)}")
    return np.mean(vecs, axis=0)


def ensemble_frame(frames: dict, members, ranges: dict | None = None) -> pd.DataFrame:
    """Ensemble of ``members`` (keys of ``frames``: DataFrames ``id, score`` spanning any datasets).

    Rows are joined on ``id`` (inner join, and the number of ids not shared is reported in
    ``attrs['n_dropped']`` and raises when non-zero unless every member covers the same ids);
    normalisation is done per dataset (the id prefix before the first ``/``).
    """
    members = list(members)
    missing = [m for m in members if m not in frames]
    if missing:
        raise KeyError(f"ensemble members without scores: {missing}")
    merged = None
    for m in members:
        f = frames[m][["id", "score"]].rename(columns={"score": m})
        merged = f if merged is None else merged.merge(f, on="id", how="outer")
    na = merged[members].isna().any(axis=1)
    if na.any():
        raise ValueError(f"ensemble members cover different ids: {int(na.sum())} ids lack a member score "
                         "(align or drop them explicitly first)")
    merged["dataset"] = merged["id"].str.split("/").str[0]
    parts = []
    for _, g in merged.groupby("dataset", sort=False):
        parts.append(pd.DataFrame({"id": g["id"].to_numpy(),
                                   "score": ensemble_scores({m: g[m].to_numpy() for m in members}, ranges)}))
    return pd.concat(parts, ignore_index=True)


def disagreement(labels, member_scores: dict, member_thresholds: dict, ensemble: np.ndarray,
                 ensemble_threshold: float, convention: str = "tfc") -> pd.DataFrame:
    """TRUE's ensemble analysis on one set of examples (predictions by
    :func:`tfc.meta.binary.predict` in ``convention``).

    Among the examples the ensemble classifies correctly while at least one member is wrong, count
    how many members are right (0 .. k-1). Returns ``n_members_right, n, pct``.
    """
    y = as_labels(labels)
    e = as_scores(ensemble, n=y.size, name="ensemble")
    from tfc.meta.binary import predict

    right = np.column_stack([predict(as_scores(member_scores[m], n=y.size, name=m), member_thresholds[m],
                                     convention) == y for m in member_scores])
    ens_right = predict(e, ensemble_threshold, convention) == y
    sel = ens_right & ~right.all(axis=1)
    k = right.shape[1]
    counts = np.bincount(right[sel].sum(axis=1), minlength=k)[:k]
    n = int(sel.sum())
    return pd.DataFrame({"n_members_right": np.arange(k), "n": counts,
                         "pct": 100 * counts / n if n else np.nan})
