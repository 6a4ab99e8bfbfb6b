"""Meta-evaluation: ROC AUC, thresholds, accuracy, correlations, bootstrap, ensembles, bins.

Public contract (see ``DESIGN.md``)::

    tfc.meta.roc_auc(labels, scores) -> float              # 0..1, labels 1 = consistent
    tfc.meta.tune_threshold(labels, scores) -> float       # max sqrt(TPR * (1 - FPR)); consistent iff score >= t
    tfc.meta.tune_threshold(labels, scores, convention="true")  # TRUE's own: consistent iff score > t
    tfc.meta.bootstrap_auc_diff(labels, a, b, n=1000, seed=0) -> BootstrapResult(.diff .ci .p_value ...)
    tfc.meta.balanced_accuracy(labels, scores, 0.5)        # BAcc at a fixed threshold; consistent iff score >= t
    tfc.meta.dev_tuned_bacc(dev_y, dev_s, y, s) -> DevTunedBAcc(.threshold .bacc_dev .bacc_test ...)  # never fit on test
    tfc.meta.pr_auc_inconsistent(labels, scores) -> float  # average precision, label 0 positive, -score detector
    tfc.meta.expected_calibration_error(labels, scores, bins=10) -> float   # probability scores in [0, 1]

Modules: :mod:`~tfc.meta.binary` (AUC, ROC, thresholds, accuracy, precision/recall),
:mod:`~tfc.meta.thresholds` (BAcc at fixed and dev-tuned thresholds, PR-AUC of the inconsistent class),
:mod:`~tfc.meta.calibration` (reliability bins, ECE, reliability diagram), :mod:`~tfc.meta.resample`
(bootstrap intervals of all of these on the resamples of :func:`bootstrap_aucs`),
:mod:`~tfc.meta.correlation`, :mod:`~tfc.meta.significance`, :mod:`~tfc.meta.ensemble`,
:mod:`~tfc.meta.bins`: pure functions of labels and scores. They import no other part of ``tfc``
than :mod:`tfc.text` (word counts); the loops over datasets live in :mod:`tfc.results.tables`, the
paper-vs-ours join in :func:`tfc.book.reference.paper_vs_ours`. Only numpy and pandas are imported eagerly; sklearn, scipy and statsmodels load inside the functions that use them.
"""
from __future__ import annotations

from tfc.meta.binary import (ThresholdResult, accuracy, balanced_accuracy, gmean_accuracy_range, gmean_gap_at_accuracy,
                             precision_recall, predict, roc_auc, roc_curve, tune_threshold, tuned_accuracy)
from tfc.meta.bins import binned_auc, count_words, novel_unigram_pct
from tfc.meta.calibration import (expected_calibration_error, is_probability, plot_reliability,
                                  reliability_bins)
from tfc.meta.correlation import correlation, correlations, summary_level, system_level
from tfc.meta.ensemble import disagreement, ensemble_frame, ensemble_scores, normalise
from tfc.meta.significance import (DEFAULT_N, BootstrapResult, MeanBootstrapResult, bootstrap_auc_diff,
                                   bootstrap_aucs, bootstrap_mean_auc_diff, bootstrap_mean_aucs, correct_pvalues,
                                   interval_comparison, mean_auc_contrasts)
from tfc.meta.resample import bootstrap_metrics, percentile_ci
from tfc.meta.thresholds import (DevTunedBAcc, bacc_at_thresholds, check_threshold, dev_tuned_bacc,
                                 pr_auc_inconsistent, threshold_candidates, tune_bacc_threshold)

__all__ = [
    "roc_auc", "roc_curve", "tune_threshold", "predict", "accuracy", "balanced_accuracy", "precision_recall",
    "tuned_accuracy", "gmean_accuracy_range", "gmean_gap_at_accuracy", "ThresholdResult", "correlation", "correlations", "summary_level", "system_level",
    "bootstrap_auc_diff", "bootstrap_aucs", "BootstrapResult", "bootstrap_mean_auc_diff", "bootstrap_mean_aucs", "MeanBootstrapResult", "interval_comparison", "correct_pvalues",
    "mean_auc_contrasts",
    "DEFAULT_N", "normalise", "ensemble_scores", "ensemble_frame", "disagreement", "binned_auc",
    "count_words", "novel_unigram_pct",
    "pr_auc_inconsistent", "threshold_candidates", "bacc_at_thresholds", "tune_bacc_threshold", "check_threshold",
    "dev_tuned_bacc", "DevTunedBAcc", "expected_calibration_error", "reliability_bins", "is_probability",
    "plot_reliability", "bootstrap_metrics", "percentile_ci",
]
