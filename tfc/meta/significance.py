"""Significance: a paired bootstrap over examples for AUC differences, TRUE's interval comparison, and
multiple-comparison correction.

**Why a hand-written bootstrap.** ``scipy.stats.bootstrap`` resamples by materialising every
resample and calling the statistic on it; for AUC that means one sort per resample and metric.
Here the resamples are drawn once as per-example *counts* (``bincount`` of the drawn indices), the
examples are sorted by score once per metric, and the AUC of every resample is a weighted
Mann-Whitney sum over groups of tied scores:

    AUC_b = sum_g  P_bg * (N_b,<g + N_bg / 2)  /  (P_b * N_b)

where ``P_bg``/``N_bg`` are the resampled counts of consistent/inconsistent examples with the g-th
distinct score, ``N_b,<g`` the inconsistent count below it, and ``P_b``/``N_b`` the totals. That is
exact (ties count one half, like :func:`tfc.meta.roc_auc`), costs O(n_resamples x n_examples) with
no per-resample sort, and reuses the same counts for every metric (a *paired* bootstrap).
``tests/test_meta.py`` checks it against ``roc_auc_score`` on explicitly resampled data.

**Number of resamples.** ``DEFAULT_N = 1000``. TRUE does not state its number. With 1000 resamples
the Monte-Carlo standard error of a p-value near 0.05 is sqrt(.05*.95/1000) = 0.007 and near 0.01 it
is 0.003, so the two thresholds TRUE marks (0.05, 0.01) are resolved; the smallest reportable
p-value is 1/1001 < 0.01; and the 2.5%/97.5% percentiles rest on 25 resamples in each tail. The
significance chapter re-runs every comparison at 2000 and shows that the marks do not change.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tfc.meta._checks import as_labels, as_scores, both_classes

DEFAULT_N = 1000
_MAX_CELLS = 4_000_000  # resamples x examples per chunk (~32 MB per float array)


def _resample_counts(n_examples: int, n: int, rng: np.random.Generator, chunk: int):
    """Yield (b, n_examples) int arrays: how often each example is drawn in each resample."""
    done = 0
    while done < n:
        b = min(chunk, n - done)
        idx = rng.integers(0, n_examples, size=(b, n_examples))
        idx += (np.arange(b) * n_examples)[:, None]
        yield np.bincount(idx.ravel(), minlength=b * n_examples).reshape(b, n_examples)
        done += b


class _RankedMetric:
    """One metric's example order and tie groups, prepared once for all resamples."""

    def __init__(self, y: np.ndarray, s: np.ndarray):
        self.order = np.argsort(s, kind="mergesort")
        s_sorted = s[self.order]
        self.starts = np.r_[0, np.flatnonzero(np.diff(s_sorted) != 0) + 1]
        self.pos = y[self.order].astype(bool)

    def aucs(self, counts: np.ndarray) -> np.ndarray:
        c = counts[:, self.order]
        wp = np.where(self.pos, c, 0)
        wn = c - wp
        gp = np.add.reduceat(wp, self.starts, axis=1).astype(float)
        gn = np.add.reduceat(wn, self.starts, axis=1).astype(float)
        below = np.cumsum(gn, axis=1) - gn
        num = (gp * (below + 0.5 * gn)).sum(axis=1)
        den = gp.sum(axis=1) * gn.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / den, np.nan)


def bootstrap_aucs(labels, scores: dict | list | np.ndarray, n: int = DEFAULT_N, seed: int = 0) -> np.ndarray:
    """AUCs of several metrics on the same ``n`` resamples of the examples: array (n, k).

    A resample that happens to hold a single class gives NaN in its row (all metrics); callers drop
    those rows and report how many (they only occur with a handful of examples).
    """
    y = as_labels(labels)
    if isinstance(scores, dict):
        scores = list(scores.values())
    elif isinstance(scores, np.ndarray) and scores.ndim == 1:
        scores = [scores]
    metrics = [_RankedMetric(y, as_scores(s, n=y.size, name=f"scores[{i}]")) for i, s in enumerate(scores)]
    if not metrics:
        raise ValueError("no score vectors given")
    if int(n) < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    chunk = max(1, _MAX_CELLS // y.size)
    out = [np.column_stack([m.aucs(c) for m in metrics]) for c in _resample_counts(y.size, int(n), rng, chunk)]
    return np.vstack(out)


@dataclass(frozen=True)
class BootstrapResult:
    """Paired-bootstrap comparison of two metrics' AUCs on one dataset (AUCs on 0..1).

    ``diff`` = AUC(a) - AUC(b) on the full data; ``ci`` its percentile interval at ``1 - alpha``;
    ``p_value`` two-sided for H0: equal AUC (see :func:`bootstrap_auc_diff`); ``n_valid`` resamples
    that held both classes (the others are excluded and counted in ``n - n_valid``).
    """
    diff: float
    ci: tuple[float, float]
    p_value: float
    auc_a: float
    auc_b: float
    n: int
    n_valid: int
    seed: int
    alpha: float
    diffs: np.ndarray = field(repr=False, compare=False)


def bootstrap_auc_diff(labels, scores_a, scores_b, n: int = DEFAULT_N, seed: int = 0,
                       alpha: float = 0.05) -> BootstrapResult:
    """Paired bootstrap over examples for AUC(a) - AUC(b) on one dataset.

    Both metrics are evaluated on the same resamples. ``ci`` is the percentile interval
    (``alpha/2``, ``1 - alpha/2``). The p-value is two-sided and uses the bootstrap distribution
    shifted to the null (Efron & Tibshirani 1993, sec. 16.4): p = (1 + #{|d*_b - d| >= |d|}) /
    (n_valid + 1). Under equal AUCs it is roughly uniform; its smallest value is 1/(n_valid + 1).
    Identical score vectors give diff 0 and p = 1.
    """
    y = as_labels(labels)
    both_classes(y)
    a = as_scores(scores_a, n=y.size, name="scores_a")
    b = as_scores(scores_b, n=y.size, name="scores_b")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    from tfc.meta.binary import roc_auc

    auc_a, auc_b = roc_auc(y, a), roc_auc(y, b)
    boot = bootstrap_aucs(y, [a, b], n=n, seed=seed)
    d_star = boot[:, 0] - boot[:, 1]
    d_star = d_star[np.isfinite(d_star)]
    if d_star.size == 0:
        raise ValueError("every bootstrap resample held a single class; too few examples")
    d = auc_a - auc_b
    lo, hi = np.quantile(d_star, [alpha / 2, 1 - alpha / 2])
    # `>=` with a tolerance so that exact ties (e.g. identical metrics) count as extreme
    extreme = np.abs(d_star - d) >= abs(d) - 1e-12
    p = (1 + int(extreme.sum())) / (d_star.size + 1)
    return BootstrapResult(diff=float(d), ci=(float(lo), float(hi)), p_value=float(min(p, 1.0)),
                           auc_a=auc_a, auc_b=auc_b, n=int(n), n_valid=int(d_star.size), seed=seed,
                           alpha=alpha, diffs=d_star)


@dataclass(frozen=True)
class MeanBootstrapResult:
    """Paired bootstrap of the difference of *mean* AUCs over several datasets (AUCs on 0..1).

    ``diff`` = mean over datasets of AUC(a) - AUC(b); ``per_dataset`` maps each dataset to its own
    (auc_a, auc_b); ``ci``, ``p_value``, ``n_valid`` as in :class:`BootstrapResult`.
    """
    diff: float
    ci: tuple[float, float]
    p_value: float
    mean_auc_a: float
    mean_auc_b: float
    per_dataset: dict
    n: int
    n_valid: int
    seed: int
    alpha: float
    diffs: np.ndarray = field(repr=False, compare=False)


def bootstrap_mean_aucs(groups: dict, n: int = DEFAULT_N, seed: int = 0) -> tuple[np.ndarray, list, dict]:
    """Mean-over-datasets AUCs of several metrics on the same within-dataset resamples.

    ``groups``: ``{dataset: (labels, {metric: scores})}``, the same metrics in every dataset. Dataset
    ``i`` is resampled with the ``i``-th of ``len(groups)`` seeds drawn from ``seed`` (all metrics on the
    same draw: a paired bootstrap). Returns ``(boot, metrics, per_dataset)``: ``boot`` is (n, k), the mean
    over datasets of each metric's resampled AUC (a row is NaN when a resample of some dataset held a
    single class); ``per_dataset`` maps dataset -> {metric: AUC on the full data}.
    """
    if not isinstance(groups, dict) or not groups:
        raise ValueError("groups must be a non-empty dict {dataset: (labels, {metric: scores})}")
    if int(n) < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    from tfc.meta.binary import roc_auc

    seeds = np.random.default_rng(seed).integers(0, 2**32 - 1, size=len(groups))
    metrics, per, total = None, {}, None
    for (name, g), s in zip(groups.items(), seeds):
        if not isinstance(g, (tuple, list)) or len(g) != 2 or not isinstance(g[1], dict) or not g[1]:
            raise ValueError(f"groups[{name!r}] must be (labels, {{metric: scores}})")
        names = list(g[1])
        if metrics is None:
            metrics = names
        elif names != metrics:
            raise ValueError(f"groups[{name!r}] has metrics {names}, expected {metrics}")
        y = as_labels(g[0])
        both_classes(y)
        cols = [as_scores(g[1][m], n=y.size, name=f"{name}: {m}") for m in metrics]
        per[name] = {m: roc_auc(y, c) for m, c in zip(metrics, cols)}
        boot = bootstrap_aucs(y, cols, n=n, seed=int(s))
        total = boot if total is None else total + boot
    return total / len(groups), metrics, per


def _shifted_null(d: float, d_star: np.ndarray, alpha: float):
    """Percentile interval and two-sided p-value (bootstrap distribution shifted to the null)."""
    lo, hi = np.quantile(d_star, [alpha / 2, 1 - alpha / 2])
    extreme = np.abs(d_star - d) >= abs(d) - 1e-12
    p = (1 + int(extreme.sum())) / (d_star.size + 1)
    return (float(lo), float(hi)), float(min(p, 1.0))


def bootstrap_mean_auc_diff(groups: dict, n: int = DEFAULT_N, seed: int = 0,
                            alpha: float = 0.05) -> MeanBootstrapResult:
    """Paired bootstrap for the difference of two metrics' mean AUC over datasets (e.g. TRUE's 9-set mean).

    ``groups``: ``{dataset: (labels, scores_a, scores_b)}``. Each resample draws examples *within each
    dataset* (so every dataset keeps its size and the mean keeps its definition: one AUC per dataset,
    averaged with equal weight), both metrics on the same draw; the statistic is the mean over datasets
    of AUC(a) - AUC(b). Dataset ``i`` uses the ``i``-th of ``len(groups)`` seeds drawn from ``seed``
    (:func:`bootstrap_mean_aucs`, which compares many metrics on one set of resamples). The interval and
    the two-sided p-value are computed as in :func:`bootstrap_auc_diff`. A resample in which any dataset
    held a single class is dropped (counted in ``n - n_valid``).
    """
    if not isinstance(groups, dict) or not groups:
        raise ValueError("groups must be a non-empty dict {dataset: (labels, scores_a, scores_b)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    multi = {}
    for name, g in groups.items():
        if not isinstance(g, (tuple, list)) or len(g) != 3:
            raise ValueError(f"groups[{name!r}] must be (labels, scores_a, scores_b)")
        multi[name] = (g[0], {"a": g[1], "b": g[2]})
    boot, _, per = bootstrap_mean_aucs(multi, n=n, seed=seed)
    d_star = boot[:, 0] - boot[:, 1]
    d_star = d_star[np.isfinite(d_star)]
    if d_star.size == 0:
        raise ValueError("every bootstrap resample held a single class in some dataset; too few examples")
    per = {k: (v["a"], v["b"]) for k, v in per.items()}
    mean_a = float(np.mean([v[0] for v in per.values()]))
    mean_b = float(np.mean([v[1] for v in per.values()]))
    d = mean_a - mean_b
    ci, p = _shifted_null(d, d_star, alpha)
    return MeanBootstrapResult(diff=float(d), ci=ci, p_value=p, mean_auc_a=mean_a, mean_auc_b=mean_b,
                               per_dataset=per, n=int(n), n_valid=int(d_star.size), seed=seed, alpha=alpha,
                               diffs=d_star)


def mean_auc_contrasts(groups: dict, reference: str, n: int = DEFAULT_N, seed: int = 0,
                       alpha: float = 0.05) -> pd.DataFrame:
    """Every metric against ``reference``: the paired bootstrap of the difference of mean-over-datasets AUCs,
    all metrics on one set of within-dataset resamples (:func:`bootstrap_mean_aucs`), so the rows are
    comparable with each other (e.g. an ablation: the 3-way head against the binary and regression heads).

    ``groups``: ``{dataset: (labels, {metric: scores})}``, the same metrics in every dataset, ``reference``
    among them. Returns one row per other metric: ``metric, mean_auc, mean_auc_reference, diff`` (metric minus
    reference, AUC x 100), ``ci_low, ci_high`` (percentile interval), ``p_value`` (two-sided, unadjusted:
    pass the column to :func:`correct_pvalues` for a family), ``n_valid`` (resamples in which every dataset
    held both classes) and ``n_datasets``.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    boot, metrics, per = bootstrap_mean_aucs(groups, n=n, seed=seed)
    if reference not in metrics:
        raise ValueError(f"reference {reference!r} is not one of the metrics {metrics}")
    mean = {m: float(np.mean([per[d][m] for d in per])) for m in metrics}
    ref = metrics.index(reference)
    rows = []
    for i, m in enumerate(metrics):
        if i == ref:
            continue
        d_star = boot[:, i] - boot[:, ref]
        d_star = d_star[np.isfinite(d_star)]
        if d_star.size == 0:
            raise ValueError("every bootstrap resample held a single class in some dataset; too few examples")
        d = mean[m] - mean[reference]
        (lo, hi), p = _shifted_null(d, d_star, alpha)
        rows.append({"metric": m, "mean_auc": 100 * mean[m], "mean_auc_reference": 100 * mean[reference],
                     "diff": 100 * d, "ci_low": 100 * lo, "ci_high": 100 * hi, "p_value": p,
                     "n_valid": int(d_star.size), "n_datasets": len(per)})
    return pd.DataFrame(rows, columns=["metric", "mean_auc", "mean_auc_reference", "diff", "ci_low", "ci_high",
                                       "p_value", "n_valid", "n_datasets"])


def interval_comparison(labels, scores: dict, n: int = DEFAULT_N, seed: int = 0,
                        levels=(0.05, 0.01), method: str = "overlap") -> dict:
    """TRUE's test on one dataset: is the best metric significantly better than the second best?

    Following Laban et al. (2022), whom TRUE cites, each metric's AUC gets a bootstrap percentile
    interval at ``1 - p`` for each ``p`` in ``levels``; all metrics share the same resamples.

    * ``method='overlap'`` (default, TRUE's "interval comparison"): the best is significant at ``p``
      when its interval does not overlap the second best's. This is conservative.
    * ``method='diff'``: significant when the interval of the paired difference excludes 0.

    Returns ``best, second, auc_best, auc_second, diff, p_value`` (the paired p-value of
    :func:`bootstrap_auc_diff`), ``ci_<p>`` intervals and ``mark`` (``'**'`` for the smallest level
    passed, ``'*'`` for the next, ``''`` for none; with the default levels: p<0.01 / p<0.05).
    """
    if method not in ("overlap", "diff"):
        raise ValueError("method must be 'overlap' or 'diff'")
    if len(scores) < 2:
        raise ValueError("need at least two metrics to compare")
    from tfc.meta.binary import roc_auc

    y = as_labels(labels)
    names = list(scores)
    aucs = {k: roc_auc(y, scores[k]) for k in names}
    ranked = sorted(names, key=lambda k: -aucs[k])
    best, second = ranked[0], ranked[1]
    boot = bootstrap_aucs(y, [scores[best], scores[second]], n=n, seed=seed)
    boot = boot[np.isfinite(boot).all(axis=1)]
    d_star = boot[:, 0] - boot[:, 1]
    d = aucs[best] - aucs[second]
    p = (1 + int((np.abs(d_star - d) >= abs(d) - 1e-12).sum())) / (d_star.size + 1)
    out = {"best": best, "second": second, "auc_best": aucs[best], "auc_second": aucs[second],
           "diff": d, "p_value": min(p, 1.0), "n": int(n), "n_valid": int(d_star.size), "method": method}
    passed = []
    for lev in sorted(levels, reverse=True):  # 0.05 then 0.01
        q = [lev / 2, 1 - lev / 2]
        ci_b, ci_s = np.quantile(boot[:, 0], q), np.quantile(boot[:, 1], q)
        ci_d = np.quantile(d_star, q)
        out[f"ci_best_{lev:g}"] = tuple(map(float, ci_b))
        out[f"ci_second_{lev:g}"] = tuple(map(float, ci_s))
        out[f"ci_diff_{lev:g}"] = tuple(map(float, ci_d))
        ok = ci_b[0] > ci_s[1] if method == "overlap" else ci_d[0] > 0
        if ok:
            passed.append(lev)
    levels_sorted = sorted(levels)  # [0.01, 0.05]
    mark = ""
    if passed:
        mark = "*" * (len(levels_sorted) - levels_sorted.index(min(passed)))
    out["mark"] = mark
    return out


def correct_pvalues(p_values, method: str = "holm", alpha: float = 0.05) -> pd.DataFrame:
    """Multiple-comparison correction for a whole table (statsmodels ``multipletests``).

    Returns ``p_value, p_adjusted, reject`` in the input order. NaN p-values raise.
    """
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1 or p.size == 0:
        raise ValueError("p_values must be a non-empty 1-D sequence")
    if not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
        raise ValueError("p_values must be finite and in [0, 1]")
    reject, p_adj, _, _ = multipletests(p, alpha=alpha, method=method)
    return pd.DataFrame({"p_value": p, "p_adjusted": p_adj, "reject": reject})
