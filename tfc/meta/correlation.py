"""Correlations between metric scores and human judgements (QAGS Table 1; AlignScore Tables 4, 10, 11).

* **Summary level** (AlignScore's "instance level"): one pair per example, correlated directly.
* **System level**: scores and judgements are first averaged per system, then the system means are
  correlated (n = number of systems, so p-values are weak by construction).

scipy computes the coefficients and their p-values: ``pearsonr``, ``spearmanr`` and ``kendalltau``
(tau-b, which handles ties).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from tfc.meta._checks import as_scores

METHODS = ("pearson", "spearman", "kendall")


def _pairs(x, y):
    a = as_scores(x, name="metric scores")
    b = as_scores(y, n=a.size, name="human scores")
    if a.size < 3:
        raise ValueError(f"need at least 3 pairs for a correlation, got {a.size}")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        raise ValueError("correlation is undefined for a constant input")
    return a, b


def correlation(x, y, method: str = "pearson") -> tuple[float, float]:
    """(coefficient, two-sided p-value) between ``x`` and ``y``; raises on NaN, constants, < 3 pairs."""
    from scipy import stats

    a, b = _pairs(x, y)
    fn = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}
    if method not in fn:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    r = fn[method](a, b)
    return float(r[0]), float(r[1])


def correlations(x, y) -> dict:
    """Pearson, Spearman and Kendall with p-values: ``{pearson, pearson_p, spearman, ...}``."""
    out = {}
    for m in METHODS:
        out[m], out[f"{m}_p"] = correlation(x, y, m)
    out["n"] = int(np.asarray(x).size)
    return out


def summary_level(frame: pd.DataFrame, metric: str = "score", human: str = "human") -> dict:
    """Summary-level correlations between two columns of ``frame``."""
    return correlations(frame[metric].to_numpy(float), frame[human].to_numpy(float))


def system_level(frame: pd.DataFrame, system: str = "system", metric: str = "score", human: str = "human") -> dict:
    """System-level correlations: correlate the per-system means of ``metric`` and ``human``."""
    if frame[[metric, human]].isna().any().any():
        raise ValueError("system_level: NaN in metric or human scores; drop them explicitly first")
    means = frame.groupby(system)[[metric, human]].mean()
    out = correlations(means[metric].to_numpy(), means[human].to_numpy())
    out["n_systems"] = int(len(means))
    return out
