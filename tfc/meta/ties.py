"""How much of a ROC AUC is decided by ties: the range that breaking tied scores alone can produce.

ROC AUC counts a tied (consistent, inconsistent) pair as half a win. A metric that gives many examples
the same score (sentence BLEU without smoothing gives 0 to every pair without a shared 4-gram) leaves
a large share of the AUC to that convention: any implementation detail that breaks those ties (a
smoothing, a different tokenisation, a tiny epsilon) can move the AUC anywhere inside
``[wins, wins + ties]``. :func:`tie_range` returns that interval, so a chapter can show whether a
published value lies inside it (then ties alone can explain the gap).
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def tie_range(labels, scores) -> dict:
    """``auc`` (ties as half), ``auc_low`` (every tie lost), ``auc_high`` (every tie won), the share of
    (positive, negative) pairs that are tied (``tied_pairs``) and the share of examples at the lowest
    score (``at_min``). Labels: 1 = consistent (the positive class); higher scores = more consistent."""
    y = np.asarray(labels).astype(int)
    s = np.asarray(scores, float)
    if s.shape != y.shape or s.ndim != 1:
        raise ValueError("labels and scores must be 1-d and of equal length")
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    pos, neg = s[y == 1], s[y == 0]
    if len(pos) == 0 or len(neg) == 0:
        raise ValueError("both classes are needed")
    neg_sorted = np.sort(neg)
    below = np.searchsorted(neg_sorted, pos, side="left")        # negatives strictly below each positive
    upto = np.searchsorted(neg_sorted, pos, side="right")        # ... at or below
    n_pairs = len(pos) * len(neg)
    wins, ties = below.sum() / n_pairs, (upto - below).sum() / n_pairs
    return {"auc": float(wins + ties / 2), "auc_low": float(wins), "auc_high": float(wins + ties),
            "tied_pairs": float(ties), "at_min": float(np.mean(s == s.min()))}


def tie_table(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """:func:`tie_range` × 100 for each ``{name: frame with label, score}``; one row per name."""
    rows = []
    for name, df in frames.items():
        r = tie_range(df["label"], df["score"])
        rows.append({"dataset": name, **{k: 100 * v for k, v in r.items()}})
    return pd.DataFrame(rows)
