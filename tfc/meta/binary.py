"""Binary detection: ROC AUC, ROC curves, tuned thresholds, accuracy and per-class precision/recall.

Conventions used everywhere in :mod:`tfc.meta`:

* ``labels``: 1 = factually consistent (grounded), 0 = inconsistent (ungrounded), as in TRUE.
* ``scores``: higher = more consistent.
* A threshold ``t`` predicts *consistent* when ``score >= t`` (sklearn's ``roc_curve`` convention) in
  the ``"tfc"`` convention, and when ``score > t`` in TRUE's (below).

**Two threshold conventions** (``convention=`` on every thresholded function):

* ``"true"``: TRUE's own library (google-research/true, ``src/meta_evaluation_lib.py``), exactly.
  An example is *ungrounded* when ``score <= t`` and grounded otherwise (a strict comparison for
  "consistent"). The geometric-mean threshold is tuned the way TRUE tunes it: sklearn's
  ``roc_curve`` on ``1 - labels`` and ``1 - scores`` (ungrounded as the positive class) with its
  default ``drop_intermediate=True``, the first maximiser of sqrt(TPR * (1 - FPR)), and ``1 -`` that
  threshold (so the tuned value carries the float error of ``1 - (1 - s)``: TRUE's own test expects
  0.2 "almost equal" where the arithmetic gives 0.19999999999999996, and an example scored exactly 0.2
  is then predicted grounded). Precision of a class that is never predicted is **0** (sklearn's
  ``zero_division`` default, with its warning silenced). This is the ``as-published`` convention of the
  TRUE tables (:data:`AS_PUBLISHED`; :func:`tfc.results.tables.accuracy_table` uses it).
* ``"tfc"``: the project's earlier convention, kept as an option: consistent when ``score >= t``,
  every distinct score a candidate (intermediate ROC points kept), the largest best threshold, and
  precision NaN ("no prediction made") for a class never predicted.

The two differ on ties at the threshold, when a threshold tuned on dev is applied to other data (a
test score equal to the dev threshold), and for a class that is never predicted.

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

CONVENTIONS = ("true", "tfc")
AS_PUBLISHED = "true"   # the TRUE tables' convention (google-research/true meta_evaluation_lib)


def _check_convention(convention: str) -> str:
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    return convention


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


def true_gmean_threshold(labels, scores) -> tuple[float, float]:
    """TRUE's ``get_optimal_gmeans_threshold``: (threshold, G-mean), computed as TRUE computes it
    (see the module docstring); predictions then use ``score <= threshold`` for ungrounded."""
    from sklearn.metrics import roc_curve as _roc

    y, s = labels_scores(labels, scores, what="threshold tuning")
    fpr, tpr, thr = _roc(1 - y, 1 - s)      # drop_intermediate=True, sklearn's default, as in TRUE
    g = np.sqrt(tpr * (1 - fpr))
    i = int(np.argmax(g))
    return float(1 - thr[i]), float(g[i])


def tune_threshold(labels, scores, convention: str = "tfc") -> float:
    """Threshold that maximises the geometric mean sqrt(TPR * (1 - FPR)), as TRUE tunes it.

    ``convention="true"`` is TRUE's own computation (:func:`true_gmean_threshold`); the default
    ``"tfc"`` is described below.

    Candidates are the distinct score values; the rule is "predict consistent when score >= t".
    The geometric mean is symmetric in the two classes (it is sqrt(recall_consistent *
    recall_inconsistent)), so TRUE's inconsistency framing gives the same optimum. Among equally good
    thresholds the **largest** is returned, which is what ``argmax`` over sklearn's ``roc_curve``
    thresholds (listed in decreasing order) picks. Intermediate ROC points are kept: sklearn's default
    ``drop_intermediate=True`` can drop the maximiser, since the geometric mean is not linear along
    a collinear stretch of the curve.
    """
    if _check_convention(convention) == "true":
        return true_gmean_threshold(labels, scores)[0]
    y, s = labels_scores(labels, scores, what="threshold tuning")
    thr, g, _, _ = _gmean_curve(y, s)
    return float(thr[int(np.argmax(g))])  # argmax = first = largest threshold among ties


def _gmean_and_accuracy(labels, scores) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate threshold of :func:`_gmean_curve` ("consistent iff score >= t"), its g-mean and accuracy."""
    y, s = labels_scores(labels, scores, what="threshold tuning")
    _, g, tpr, fpr = _gmean_curve(y, s)
    pos = float(y.sum())
    return g, (tpr * pos + (1.0 - fpr) * (y.size - pos)) / y.size


def gmean_accuracy_range(labels, scores, tol: float = 0.01) -> dict:
    """How well the g-mean optimum pins down an accuracy: over every candidate threshold (distinct scores,
    "consistent iff score >= t") whose sqrt(TPR * (1 - FPR)) is within ``tol`` of the maximum, the lowest and
    highest accuracy. Where the optimum is flat (many thresholds nearly tie) and the classes are unbalanced,
    accuracy at "the" tuned threshold is ill-determined: a small change in the scores (a tokenizer, a tie
    rule) moves the argmax along the flat stretch and the accuracy with it.

    Returns ``{"gmean": max, "acc_min", "acc_max", "n_thresholds": candidates within tol}`` (accuracies as
    fractions)."""
    if not (isinstance(tol, (int, float)) and not isinstance(tol, bool) and 0.0 <= tol < 1.0):
        raise ValueError(f"tol must be a number in [0, 1); got {tol!r}")
    g, acc = _gmean_and_accuracy(labels, scores)
    near = g >= g.max() - tol - 1e-12
    return {"gmean": float(g.max()), "acc_min": float(acc[near].min()), "acc_max": float(acc[near].max()),
            "n_thresholds": int(near.sum())}


def gmean_gap_at_accuracy(labels, scores, lo: float, hi: float) -> dict:
    """How far from the g-mean optimum a given accuracy lies: over the candidate thresholds of
    :func:`gmean_accuracy_range` whose accuracy is in ``[lo, hi]`` (fractions; e.g. a published value
    read to its printed precision), the smallest g-mean gap to the maximum and the number of candidate
    thresholds with a strictly higher g-mean than that closest one (0: the optimum itself gives it).

    Returns ``{"gap", "n_better", "n_thresholds"}``; where no threshold reaches the interval, ``gap`` is
    ``inf``, ``n_better`` is -1 and ``n_thresholds`` 0 (a defined result, not NaN)."""
    if not (0.0 <= lo <= hi <= 1.0):
        raise ValueError(f"need 0 <= lo <= hi <= 1; got lo={lo!r}, hi={hi!r}")
    g, acc = _gmean_and_accuracy(labels, scores)
    ok = (acc >= lo - 1e-12) & (acc <= hi + 1e-12)
    if not ok.any():
        return {"gap": float("inf"), "n_better": -1, "n_thresholds": 0}
    best = float(g[ok].max())
    return {"gap": float(g.max() - best), "n_better": int((g > best + 1e-12).sum()), "n_thresholds": int(ok.sum())}


def predict(scores, threshold: float, convention: str = "tfc") -> np.ndarray:
    """1 (consistent) where ``score >= threshold`` (``"tfc"``) or ``score > threshold`` (``"true"``:
    TRUE marks ``score <= threshold`` ungrounded), else 0."""
    s = as_scores(scores)
    if _check_convention(convention) == "tfc" and not np.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold}")
    if convention == "true":
        if np.isnan(threshold):
            raise ValueError("threshold must not be NaN")
        return (s > threshold).astype(np.int8)
    return (s >= threshold).astype(np.int8)


def accuracy(labels, scores, threshold: float, convention: str = "tfc") -> float:
    """Share of examples whose prediction (:func:`predict`) equals the label."""
    y = as_labels(labels)
    s = as_scores(scores, n=y.size)
    return float((predict(s, threshold, convention) == y).mean())


def balanced_accuracy(labels, scores, threshold: float, convention: str = "tfc") -> float:
    """Mean of the two per-class recalls (sklearn ``balanced_accuracy_score``); needs both classes."""
    from sklearn.metrics import balanced_accuracy_score

    y, s = labels_scores(labels, scores, what="balanced accuracy")
    return float(balanced_accuracy_score(y, predict(s, threshold, convention)))


def precision_recall(labels, scores, threshold: float, convention: str = "tfc") -> dict:
    """Precision and recall for grounded (consistent, 1) and ungrounded (inconsistent, 0) examples.

    A class that is never predicted has precision NaN in the ``"tfc"`` convention (0/0, not an error:
    "no prediction made") and 0 in TRUE's (``"true"``, sklearn's ``zero_division`` default).
    """
    from sklearn.metrics import precision_recall_fscore_support

    y, s = labels_scores(labels, scores, what="per-class precision/recall")
    zero = 0.0 if _check_convention(convention) == "true" else np.nan
    p, r, f, n = precision_recall_fscore_support(y, predict(s, threshold, convention), labels=[1, 0],
                                                 zero_division=zero)
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


def tuned_accuracy(tune_labels, tune_scores, eval_labels=None, eval_scores=None,
                   convention: str = "tfc") -> ThresholdResult:
    """Accuracy and balanced accuracy at a threshold tuned (geometric mean) on ``tune``.

    * TRUE Table 11: tune and evaluate on dev (leave ``eval_*`` as None).
    * TRUE Table 12 and the SummaC/AlignScore protocol: tune on dev/val, apply to test.

    The evaluation set may hold a single class (accuracy is still defined); balanced accuracy is
    then NaN, documented rather than raised, because the test split is what it is.
    """
    thr = tune_threshold(tune_labels, tune_scores, convention)
    same = eval_labels is None and eval_scores is None
    if same:
        eval_labels, eval_scores = tune_labels, tune_scores
    elif eval_labels is None or eval_scores is None:
        raise ValueError("give both eval_labels and eval_scores, or neither")
    y = as_labels(eval_labels, "eval_labels")
    s = as_scores(eval_scores, n=y.size, name="eval_scores")
    try:
        both_classes(y)
        bacc = balanced_accuracy(y, s, thr, convention)
    except ValueError:
        bacc = float("nan")
    return ThresholdResult(threshold=thr, accuracy=accuracy(y, s, thr, convention), balanced_accuracy=bacc,
                           n_tune=int(np.asarray(tune_labels).size), n_eval=int(y.size), same_data=same)
