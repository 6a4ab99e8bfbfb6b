"""Bootstrap intervals for today's checker metrics, on the resamples :func:`tfc.meta.bootstrap_aucs` draws.

The resamples are the per-row counts of :mod:`tfc.meta.significance` (``_resample_counts``, same seed,
same chunks): :func:`bootstrap_metrics` with seed ``s`` sees exactly the resamples of
``bootstrap_aucs(..., seed=s)``, so its ROC AUC column equals that function's, and every metric is paired
with every other. Each metric is computed on a resample as the same metric with the counts as row weights
(exact, no per-resample sort):

* ``roc_auc``: the weighted Mann-Whitney sum of :mod:`tfc.meta.significance` (on the same tie groups);
* ``pr_auc_inconsistent``: average precision of label 0 with ``-score`` as the detector
  (:func:`tfc.meta.pr_auc_inconsistent`; sklearn's step-wise sum with ``sample_weight`` = counts);
* ``bacc_fixed`` / ``bacc_dev``: balanced accuracy at a threshold held fixed ("consistent iff score >= t");
  a dev-tuned threshold stays the one tuned on dev (the dev rows are not resampled);
* ``bacc_in_sample``: the threshold **re-tuned on each resample** by max sqrt(TPR * (1 - FPR)) (largest among
  ties, as :func:`tfc.meta.tuned_accuracy`), then its balanced accuracy: the interval includes the tuning's
  own variation;
* ``ece``: :func:`tfc.meta.expected_calibration_error` with weights (probability scores only).

A resample that holds a single class gives NaN in every metric of its row; ``valid`` marks the others.
"""
from __future__ import annotations

import numpy as np

from tfc.meta._checks import as_labels, as_scores
from tfc.meta.significance import _MAX_CELLS, DEFAULT_N, _RankedMetric, _resample_counts

METRICS = ("roc_auc", "pr_auc_inconsistent", "bacc_fixed", "bacc_dev", "bacc_in_sample", "ece")


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.full(np.broadcast(num, den).shape, np.nan), where=den > 0)


class _WeightedMetrics:
    """One score column's order, tie groups and bins, prepared once for all resamples."""

    def __init__(self, y: np.ndarray, s: np.ndarray, bins: int | None):
        self.ranked = _RankedMetric(y, s)
        self.s, self.y = s, y.astype(float)
        self.inc_sorted = ~self.ranked.pos
        self.onehot = None
        if bins:
            from tfc.meta.calibration import bin_index

            self.onehot = np.eye(bins)[bin_index(s, bins)]

    def _groups(self, counts: np.ndarray):
        c = counts[:, self.ranked.order].astype(float)
        st = self.ranked.starts
        gp = np.add.reduceat(np.where(self.ranked.pos, c, 0.0), st, axis=1)
        gn = np.add.reduceat(np.where(self.inc_sorted, c, 0.0), st, axis=1)
        return gp, gn     # per tie group, scores ascending: consistent / inconsistent weight

    @staticmethod
    def auc(gp: np.ndarray, gn: np.ndarray) -> np.ndarray:
        """The weighted Mann-Whitney sum of :class:`tfc.meta.significance._RankedMetric` from the tie groups."""
        below = np.cumsum(gn, axis=1) - gn
        return _ratio((gp * (below + 0.5 * gn)).sum(axis=1), gp.sum(axis=1) * gn.sum(axis=1))

    @staticmethod
    def pr_auc(gp: np.ndarray, gn: np.ndarray) -> np.ndarray:
        tp, seen = np.cumsum(gn, axis=1), np.cumsum(gp + gn, axis=1)   # ascending score: most inconsistent first
        prec = np.divide(tp, seen, out=np.zeros_like(tp), where=seen > 0)
        return _ratio((gn * prec).sum(axis=1), tp[:, -1])

    def bacc_at(self, counts: np.ndarray, t: float) -> np.ndarray:
        c = counts.astype(float)
        pred = (self.s >= t).astype(float)
        pos, neg = c @ self.y, c @ (1.0 - self.y)
        tp, tn = c @ (self.y * pred), c @ ((1.0 - self.y) * (1.0 - pred))
        return (_ratio(tp, pos) + _ratio(tn, neg)) / 2.0

    @staticmethod
    def bacc_gmean(gp: np.ndarray, gn: np.ndarray) -> np.ndarray:
        pos, neg = gp.sum(axis=1, keepdims=True), gn.sum(axis=1, keepdims=True)
        tpr = _ratio(pos - (np.cumsum(gp, axis=1) - gp), pos)   # threshold u_g: rows with score >= u_g
        fpr = _ratio(neg - (np.cumsum(gn, axis=1) - gn), neg)
        g = np.sqrt(np.clip(tpr * (1.0 - fpr), 0.0, None))
        g = np.where(np.isfinite(g) & (gp + gn > 0), g, -1.0)   # candidates: the scores present in the resample
        last = g.shape[1] - 1 - np.argmax(g[:, ::-1], axis=1)     # the largest threshold among ties
        rows = np.arange(g.shape[0])
        out = (tpr[rows, last] + 1.0 - fpr[rows, last]) / 2.0
        return np.where((pos[:, 0] > 0) & (neg[:, 0] > 0), out, np.nan)

    def ece(self, counts: np.ndarray) -> np.ndarray:
        c = counts.astype(float)
        gap = c @ (self.onehot * self.s[:, None]) - c @ (self.onehot * self.y[:, None])
        return _ratio(np.abs(gap).sum(axis=1), c.sum(axis=1))


def _per_column(values, k: int, what: str) -> list:
    if values is None:
        return [None] * k
    values = list(values)
    if len(values) != k:
        raise ValueError(f"{what} must give one value (or None) per score column: {len(values)} for {k} columns")
    return [None if v is None else float(v) for v in values]


def _chunk_metrics(w: list, counts: np.ndarray, fixed: list, dev: list) -> dict:
    out = {m: [] for m in METRICS}
    nan = np.full(counts.shape[0], np.nan)
    for j, m in enumerate(w):
        gp, gn = m._groups(counts)      # once per column and chunk: the three rank-based metrics share them
        out["roc_auc"].append(m.auc(gp, gn))
        out["pr_auc_inconsistent"].append(m.pr_auc(gp, gn))
        out["bacc_fixed"].append(nan if fixed[j] is None else m.bacc_at(counts, fixed[j]))
        out["bacc_dev"].append(nan if dev[j] is None else m.bacc_at(counts, dev[j]))
        out["bacc_in_sample"].append(m.bacc_gmean(gp, gn))
        out["ece"].append(nan if m.onehot is None else m.ece(counts))
    return {k: np.column_stack(v) for k, v in out.items()}


def bootstrap_metrics(labels, scores, n: int = DEFAULT_N, seed: int = 0, *, fixed=None, dev=None,
                      bins: int | None = None, calibrated=None) -> tuple[dict, np.ndarray]:
    """Every metric of :data:`METRICS` for every score column on the same ``n`` resamples of the rows.

    ``scores``: a list of score vectors (k columns). ``fixed`` / ``dev``: one threshold per column (or None
    for a column without one); ``bins`` with ``calibrated`` (one bool per column: probability scores) gives
    the ECE. Returns ``(values, valid)``: ``values`` maps each metric to an (n, k) array, NaN in the rows of
    single-class resamples and in the columns a metric does not apply to; ``valid`` (n,) marks the resamples
    with both classes. The resamples are those of ``bootstrap_aucs(labels, scores, n, seed)``.
    """
    y = as_labels(labels)
    cols = [as_scores(s, n=y.size, name=f"scores[{i}]") for i, s in enumerate(scores)]
    if not cols:
        raise ValueError("no score vectors given")
    if int(n) < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    k = len(cols)
    fixed, dev = _per_column(fixed, k, "fixed"), _per_column(dev, k, "dev")
    calibrated = [False] * k if calibrated is None or not bins else [bool(c) for c in calibrated]
    if len(calibrated) != k:
        raise ValueError(f"calibrated must give one bool per score column: {len(calibrated)} for {k} columns")
    w = [_WeightedMetrics(y, s, bins if cal else None) for s, cal in zip(cols, calibrated)]
    rng = np.random.default_rng(seed)
    chunk = max(1, _MAX_CELLS // y.size)
    parts, valid = [], []
    for counts in _resample_counts(y.size, int(n), rng, chunk):
        parts.append(_chunk_metrics(w, counts, fixed, dev))
        npos = counts @ y.astype(np.int64)
        valid.append((npos > 0) & (npos < counts.sum(axis=1)))
    values = {m: np.vstack([p[m] for p in parts]) for m in METRICS}
    ok = np.concatenate(valid)
    for m in METRICS:
        values[m][~ok] = np.nan
    return values, ok


def percentile_ci(values: np.ndarray, alpha: float = 0.05) -> list | None:
    """The ``[alpha/2, 1 - alpha/2]`` percentile interval of the finite values, or None when there are none."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return None
    lo, hi = np.quantile(v, [alpha / 2, 1 - alpha / 2])
    return [float(lo), float(hi)]
