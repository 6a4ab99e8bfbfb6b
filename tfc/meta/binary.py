"""Binary detection: ROC AUC, ROC curves, tuned thresholds, accuracy and per-class precision/recall.

Conventions used everywhere in :mod:`tfc.meta`:

* ``labels``: 1 = factually consistent (grounded), 0 = inconsistent (ungrounded), as in TRUE.
* ``scores``: higher = more consistent.
* A threshold ``t`` predicts *consistent* when ``score >= t`` (sklearn's ``roc_curve`` convention).

**Direction of the AUC.** TRUE reports the ROC AUC "for detecting inconsistent examples". Detecting
inconsistency means ranking the inconsistent examples first, i.e. using ``-score`` as the detector
and ``1 - label`` as the positive class. The AUC is the probability that a random positive is ranked
above a random negative (ties count one half), and swapping both the class and the sign of the score
leaves that probability unchanged: P(-s_inc > -s_con) = P(s_con > s_inc). So the AUC for detecting
inconsistency equals the AUC for consistency that :func:`roc_auc` computes with ``labels`` as given.
(``tests/test_meta.py`` checks the identity numerically.)

sklearn is imported inside the functions so that ``import tfc.meta`` stays light.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tfc.meta._checks import as_labels, as_scores, both_classes, labels_scores


def roc_auc(labels, scores) -> float:
    """ROC AUC in 0..1 with labels 1 = consistent (equal to TRUE's AUC for detecting inconsistency).

    Ties between a consistent and an inconsistent example count one half (sklearn's trapezoidal
    rule). Raises ``ValueError`` on a single class, on NaN/inf scores and on mismatched lengths.
    """
    from sklearn.metrics import roc_auc_score

    y, s = labels_scores(labels, scores)
    return float(roc_auc_score(y, s))


def roc_curve(labels, scores, *, positive: str = "consistent") -> pd.DataFrame:
    """ROC curve as a frame ``fpr, tpr, threshold`` (every distinct score is a point).

    ``positive='consistent'`` (default): TPR = share of consistent examples with ``score >= t``,
    FPR = share of inconsistent examples with ``score >= t``.
    ``positive='inconsistent'``: TRUE's framing, with ``-score`` as the detector: TPR = share of
    inconsistent examples with ``score <= t``, FPR = share of consistent ones with ``score <= t``.
    The area is the same either way (see the module docstring).
    """
    from sklearn.metrics import roc_curve as _roc

    y, s = labels_scores(labels, scores)
    if positive == "consistent":
        fpr, tpr, thr = _roc(y, s, drop_intermediate=False)
    elif positive == "inconsistent":
        fpr, tpr, thr = _roc(1 - y, -s, drop_intermediate=False)
        thr = -thr
    else:
        raise ValueError("positive must be 'consistent' or 'inconsistent'")
    return pd.DataFrame({"fpr": fpr, "tpr": tpr, "threshold": thr})


def _gmean_curve(y: np.ndarray, s: np.ndarray):
    """Candidate thresholds (distinct scores, descending) and sqrt(TPR*(1-FPR)) at each."""
    order = np.argsort(-s, kind="mergesort")
    s_sorted, y_sorted = s[order], y[order]
    # last index of each run of equal scores: predicting consistent for score >= s_k takes the whole run
    last = np.r_[np.flatnonzero(np.diff(s_sorted) != 0), s_sorted.size - 1]
    tp = np.cumsum(y_sorted)[last]
    fp = np.cumsum(1 - y_sorted)[last]
    tpr = tp / y.sum()
    fpr = fp / (y.size - y.sum())
    return s_sorted[last], np.sqrt(tpr * (1 - fpr)), tpr, fpr


def tune_threshold(labels, scores) -> float:
    """Threshold that maximises the geometric mean sqrt(TPR * (1 - FPR)), as TRUE tunes it.

    Candidates are the distinct score values; the rule is "predict consistent when score >= t".
    The geometric mean is symmetric in the two classes (it is sqrt(recall_consistent *
    recall_inconsistent)), so TRUE's inconsistency framing gives the same optimum. Among equally good
    thresholds the **largest** is returned, which is what ``argmax`` over sklearn's ``roc_curve``
    thresholds (listed in decreasing order) picks. Intermediate ROC points are kept: sklearn's default
    ``drop_intermediate=True`` can drop the maximiser, since the geometric mean is not linear along
    a collinear stretch of the curve.
    """
    y, s = labels_scores(labels, scores, what="threshold tuning")
    thr, g, _, _ = _gmean_curve(y, s)
    return float(thr[int(np.argmax(g))])  # argmax = first = largest threshold among ties


def predict(scores, threshold: float) -> np.ndarray:
    """1 (consistent) where ``score >= threshold``, else 0."""
    s = as_scores(scores)
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold}")
    return (s >= threshold).astype(np.int8)


def accuracy(labels, scores, threshold: float) -> float:
    """Share of examples whose prediction (``score >= threshold``) equals the label."""
    y = as_labels(labels)
    s = as_scores(scores, n=y.size)
    return float((predict(s, threshold) == y).mean())


def balanced_accuracy(labels, scores, threshold: float) -> float:
    """Mean of the two per-class recalls (sklearn ``balanced_accuracy_score``); needs both classes."""
    from sklearn.metrics import balanced_accuracy_score

    y, s = labels_scores(labels, scores, what="balanced accuracy")
    return float(balanced_accuracy_score(y, predict(s, threshold)))


def precision_recall(labels, scores, threshold: float) -> dict:
    """Precision and recall for grounded (consistent, 1) and ungrounded (inconsistent, 0) examples.

    A class that is never predicted has precision NaN (0/0, not an error: "no prediction made").
    """
    from sklearn.metrics import precision_recall_fscore_support

    y, s = labels_scores(labels, scores, what="per-class precision/recall")
    p, r, f, n = precision_recall_fscore_support(y, predict(s, threshold), labels=[1, 0],
                                                 zero_division=np.nan)
    return {"precision_grounded": float(p[0]), "recall_grounded": float(r[0]), "f1_grounded": float(f[0]),
            "precision_ungrounded": float(p[1]), "recall_ungrounded": float(r[1]),
            "f1_ungrounded": float(f[1]), "n_grounded": int(n[0]), "n_ungrounded": int(n[1])}


@dataclass(frozen=True)
class ThresholdResult:
    """Threshold tuned on ``tune`` data and the metrics it gives on ``eval`` data."""
    threshold: float
    accuracy: float
    balanced_accuracy: float
    n_tune: int
    n_eval: int
    same_data: bool


def tuned_accuracy(tune_labels, tune_scores, eval_labels=None, eval_scores=None) -> ThresholdResult:
    """Accuracy and balanced accuracy at a threshold tuned (geometric mean) on ``tune``.

    * TRUE Table 11: tune and evaluate on dev (leave ``eval_*`` as None).
    * TRUE Table 12 and the SummaC/AlignScore protocol: tune on dev/val, apply to test.

    The evaluation set may hold a single class (accuracy is still defined); balanced accuracy is
    then NaN, documented rather than raised, because the test split is what it is.
    """
    thr = tune_threshold(tune_labels, tune_scores)
    same = eval_labels is None and eval_scores is None
    if same:
        eval_labels, eval_scores = tune_labels, tune_scores
    elif eval_labels is None or eval_scores is None:
        raise ValueError("give both eval_labels and eval_scores, or neither")
    y = as_labels(eval_labels, "eval_labels")
    s = as_scores(eval_scores, n=y.size, name="eval_scores")
    try:
        both_classes(y)
        bacc = balanced_accuracy(y, s, thr)
    except ValueError:
        bacc = float("nan")
    return ThresholdResult(threshold=thr, accuracy=accuracy(y, s, thr), balanced_accuracy=bacc,
                           n_tune=int(np.asarray(tune_labels).size), n_eval=int(y.size), same_data=same)
