"""Input checks shared by the meta-evaluation functions (one clear error for every bad input)."""
from __future__ import annotations

import numpy as np


def as_labels(labels, name: str = "labels") -> np.ndarray:
    """Binary labels as an int array (1 = consistent, 0 = inconsistent); raises on anything else."""
    y = np.asarray(labels)
    if y.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {y.shape}")
    if y.size == 0:
        raise ValueError(f"{name} is empty")
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise ValueError(f"{name} contain NaN")
    if y.dtype == bool:
        y = y.astype(int)
    bad = ~np.isin(y, (0, 1))
    if bad.any():
        raise ValueError(f"{name} must be 0/1 (1 = consistent); found {sorted(set(np.asarray(y)[bad].tolist()))[:5]}")
    return y.astype(np.int8)


def as_scores(scores, n: int | None = None, name: str = "scores") -> np.ndarray:
    """Scores as a float array; raises on NaN/inf or a length that differs from ``n``."""
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {s.shape}")
    if n is not None and s.size != n:
        raise ValueError(f"{name} has {s.size} values but labels have {n}")
    if not np.isfinite(s).all():
        k = int((~np.isfinite(s)).sum())
        raise ValueError(f"{name} contain {k} NaN/inf value(s); drop or impute them explicitly first")
    return s


def both_classes(y: np.ndarray, what: str = "ROC AUC") -> None:
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == y.size:
        raise ValueError(f"{what} is undefined when only one class is present "
                         f"({y.size} examples, all labelled {int(y[0])})")


def labels_scores(labels, scores, what: str = "ROC AUC"):
    y = as_labels(labels)
    s = as_scores(scores, n=y.size)
    both_classes(y, what)
    return y, s
