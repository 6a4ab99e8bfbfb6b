"""Calibration of probability scores: reliability bins, the expected calibration error (ECE) and a
reliability diagram.

A score is read as P(consistent) and compared with the label 1 = consistent. Only **probability scores**
(every value in ``[0, 1]``, :func:`is_probability`) are binned; other scores raise ``ValueError`` (the ECE of
a score on another scale is not defined).

**Bins**: ``bins`` equal-width bins over ``[0, 1]``; bin ``i`` (from 0) holds the scores in
``[i/bins, (i+1)/bins)`` (the edges as floats, ``numpy.arange(bins + 1) / bins``), the last bin also holds 1.0. **ECE** = sum over non-empty bins of
``n_b / N * |mean score_b - share of consistent rows_b|`` (empty bins add nothing). The ECE is defined with
a single class too (it is then the mean distance of the scores from that label), so one class is not an
error here.

matplotlib is imported inside :func:`plot_reliability` (the ``book`` extra) so that ``import tfc.meta``
stays light.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from tfc.meta._checks import as_labels, as_scores

DEFAULT_BINS = 10


def ece_rule(bins: int) -> str:
    """The ECE's rule in words, with its bin count (what reports print)."""
    return (f"{bins} equal-width bins over [0, 1] (the last one closed); sum over bins of n_b/N * |mean score_b - "
            "share of consistent rows_b|; score read as P(consistent), label 1 = consistent")


def is_probability(scores) -> bool:
    """True when every score lies in ``[0, 1]`` (finite scores required)."""
    s = as_scores(scores)
    return bool(s.size and s.min() >= 0.0 and s.max() <= 1.0)


def _check_bins(bins) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be a positive int, got {bins!r}")
    return int(bins)


def bin_index(scores, bins: int = DEFAULT_BINS, name: str = "scores") -> np.ndarray:
    """The bin (0 .. bins-1) of each probability score; ``ValueError`` for a score outside ``[0, 1]``."""
    b = _check_bins(bins)
    s = as_scores(scores, name=name)
    if s.size == 0:
        raise ValueError(f"{name} is empty")
    if s.min() < 0.0 or s.max() > 1.0:
        raise ValueError(f"{name} lie outside [0, 1] (min {s.min():g}, max {s.max():g}); calibration needs "
                         "probability scores")
    edges = np.arange(b + 1) / b     # the bin edges reports print: bin i iff edges[i] <= s < edges[i + 1]
    return np.minimum(np.searchsorted(edges, s, side="right") - 1, b - 1)


def reliability_bins(labels, scores, bins: int = DEFAULT_BINS) -> pd.DataFrame:
    """One row per bin: ``bin, lo, hi, n, mean_score, frac_consistent``. In an empty bin ``n`` is 0 and the
    two means are NaN (no rows: nothing to average), which the ECE skips."""
    y = as_labels(labels)
    s = as_scores(scores, n=y.size)
    b = _check_bins(bins)
    idx = bin_index(s, b)
    n = np.bincount(idx, minlength=b)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_s = np.bincount(idx, weights=s, minlength=b) / n
        frac = np.bincount(idx, weights=y.astype(float), minlength=b) / n
    edges = np.arange(b + 1) / b
    return pd.DataFrame({"bin": np.arange(b), "lo": edges[:-1], "hi": edges[1:], "n": n,
                         "mean_score": np.where(n > 0, mean_s, np.nan),
                         "frac_consistent": np.where(n > 0, frac, np.nan)})


def expected_calibration_error(labels, scores, bins: int = DEFAULT_BINS) -> float:
    """ECE of probability scores against label 1 (see the module docstring); in ``[0, 1]``."""
    y = as_labels(labels)
    s = as_scores(scores, n=y.size)
    idx = bin_index(s, bins)
    b = _check_bins(bins)
    gap = np.bincount(idx, weights=s, minlength=b) - np.bincount(idx, weights=y.astype(float), minlength=b)
    return float(np.abs(gap).sum() / y.size)


def plot_reliability(labels, scores: dict, path, bins: int = DEFAULT_BINS, title: str | None = None):
    """Write a reliability diagram (PNG, matplotlib's Agg backend) to ``path``: above, the share of consistent
    rows against the mean score of each non-empty bin, one line per score column, and the diagonal (perfect
    calibration); below, the number of rows in each bin per column. ``scores`` maps a column name to its
    probability scores (all in ``[0, 1]``). An existing file is replaced. Returns the path."""
    from pathlib import Path

    try:   # a bare Figure draws on the Agg canvas: no pyplot, no global backend switch
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ValueError("a reliability diagram needs matplotlib (pip install 'tfc[book]')") from None

    p = Path(path)
    if p.suffix.lower() != ".png":
        raise ValueError(f"{p}: the reliability diagram is written as PNG; give a .png path")
    if not p.parent.is_dir():
        raise ValueError(f"{p}: directory {p.parent} does not exist")
    if not scores:
        raise ValueError("no score columns to plot")
    tables = {name: reliability_bins(labels, s, bins) for name, s in scores.items()}
    fig = Figure(figsize=(6.0, 6.5))
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    top.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfect calibration")
    width = 1.0 / _check_bins(bins) / (len(tables) + 1)
    for k, (name, t) in enumerate(tables.items()):
        ok = t["n"] > 0
        top.plot(t.loc[ok, "mean_score"], t.loc[ok, "frac_consistent"], marker="o", label=str(name))
        bottom.bar(t["lo"] + (k + 0.5) * width, t["n"], width=width, align="edge", label=str(name))
    top.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), ylabel="share consistent (label 1)",
            title=title or f"Reliability diagram ({bins} equal-width bins)")
    top.legend(loc="upper left", fontsize="small")
    bottom.set(xlabel="mean score in bin, read as P(consistent)", ylabel="rows per bin")
    fig.tight_layout()
    fig.savefig(p, format="png", dpi=100)
    return p
