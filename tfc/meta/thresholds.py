"""Today's conventions for judging a checker at a threshold: balanced accuracy (BAcc) at a fixed threshold or
at one tuned on a dev set and frozen, and the PR-AUC of the inconsistent class.

Conventions (those of :mod:`tfc.meta.binary`): labels 1 = consistent, 0 = inconsistent; higher score = more
consistent; **a row is predicted consistent when ``score >= threshold``** (a score equal to the threshold is
predicted consistent).

* **Fixed threshold** (e.g. 0.5 for a checker that outputs P(consistent)):
  :func:`tfc.meta.balanced_accuracy` ``(labels, scores, t)``; :func:`check_threshold` refuses a threshold
  outside the observed score range, where every row would get the same prediction.
* **Dev-tuned threshold** (:func:`tune_bacc_threshold`, :func:`dev_tuned_bacc`): the rule is
  :data:`DEV_RULE`. Candidates are the smallest distinct dev score, the midpoints between consecutive
  distinct dev scores, and the largest distinct dev score; the threshold with the highest BAcc on the dev
  rows wins, ties going to the **smallest** such threshold. Midpoints keep a test score that equals a dev
  score off the boundary. The threshold is then frozen and applied to the test rows, which never take part
  in the tuning. (The in-sample threshold of :func:`tfc.meta.tuned_accuracy` is tuned on the rows it is
  evaluated on, and is optimistic.)
* **PR-AUC of the inconsistent class** (:func:`pr_auc_inconsistent`): sklearn's ``average_precision_score``
  with label 0 as the positive class and ``-score`` as the detector (the lower the score, the more
  inconsistent), i.e. the step-wise area sum_k (R_k - R_{k-1}) P_k over the distinct thresholds. Its
  chance level is the share of inconsistent rows, not 0.5.

Every function raises ``ValueError`` naming the problem on empty input, NaN/inf scores, a length mismatch
or a single class (via :mod:`tfc.meta._checks`); none returns NaN.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tfc.meta._checks import as_labels, as_scores, both_classes, labels_scores

PREDICTION_RULE = "consistent when score >= threshold"
DEV_RULE = ("max balanced accuracy on the dev rows over the candidate thresholds (the smallest distinct dev score, "
            "the midpoints between consecutive distinct dev scores, the largest distinct dev score); "
            "ties -> the smallest such threshold; then frozen and applied to the evaluated rows")
PR_AUC_RULE = "average precision of the inconsistent class: label 0 as the positive class, -score as the detector"


def pr_auc_inconsistent(labels, scores) -> float:
    """Average precision for detecting inconsistent rows (label 0 positive, ``-score`` the detector).

    Equals ``sklearn.metrics.average_precision_score(1 - labels, -scores)``. Needs both classes.
    """
    from sklearn.metrics import average_precision_score

    y, s = labels_scores(labels, scores, what="PR-AUC")
    return float(average_precision_score(1 - y, -s))


def threshold_candidates(scores) -> np.ndarray:
    """The candidate thresholds of :data:`DEV_RULE`, ascending: the smallest distinct score, the midpoints of
    consecutive distinct scores, the largest distinct score (one value when all scores are equal)."""
    s = as_scores(scores)
    if s.size == 0:
        raise ValueError("scores is empty")
    u = np.unique(s)
    if u.size == 1:
        return u
    mids = u[:-1] + (u[1:] - u[:-1]) / 2.0    # no overflow for large scores
    return np.unique(np.r_[u[0], mids, u[-1]])


def bacc_at_thresholds(labels, scores, thresholds) -> np.ndarray:
    """Balanced accuracy at each threshold ("consistent iff score >= t"), vectorised; needs both classes."""
    y, s = labels_scores(labels, scores, what="balanced accuracy")
    t = np.asarray(thresholds, dtype=float)
    if not np.isfinite(t).all():
        raise ValueError("thresholds must be finite")
    pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
    tpr = (pos.size - np.searchsorted(pos, t, side="left")) / pos.size     # consistent rows with s >= t
    tnr = np.searchsorted(neg, t, side="left") / neg.size                  # inconsistent rows with s < t
    return (tpr + tnr) / 2.0


def tune_bacc_threshold(labels, scores) -> tuple[float, float]:
    """``(threshold, balanced accuracy)`` by :data:`DEV_RULE` on these rows (the dev rows): the candidate of
    :func:`threshold_candidates` with the highest BAcc, the smallest one among ties."""
    y, s = labels_scores(labels, scores, what="threshold tuning")
    cand = threshold_candidates(s)
    bacc = bacc_at_thresholds(y, s, cand)
    i = int(np.flatnonzero(bacc >= bacc.max() - 1e-12)[0])    # candidates ascend: the first is the smallest
    return float(cand[i]), float(bacc[i])


def check_threshold(scores, threshold: float, name: str = "scores") -> float:
    """``threshold`` as a float; ``ValueError`` when it is not finite or lies outside ``[min, max]`` of
    ``scores`` (there every row gets the same prediction, and BAcc is 0.5 whatever the checker)."""
    s = as_scores(scores, name=name)
    if s.size == 0:
        raise ValueError(f"{name} is empty")
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise ValueError(f"threshold must be a number, got {threshold!r}") from None
    if not np.isfinite(t):
        raise ValueError(f"threshold must be finite, got {t}")
    lo, hi = float(s.min()), float(s.max())
    if not lo <= t <= hi:
        raise ValueError(f"threshold {t:g} lies outside the range of {name} ({lo:g} to {hi:g}): every row would be "
                         "predicted the same class")
    return t


@dataclass(frozen=True)
class DevTunedBAcc:
    """A threshold tuned on dev rows by :data:`DEV_RULE` and the balanced accuracy it gives on both sets."""
    threshold: float
    bacc_dev: float
    bacc_test: float
    n_dev: int
    n_test: int
    rule: str = DEV_RULE


def dev_tuned_bacc(dev_labels, dev_scores, test_labels, test_scores) -> DevTunedBAcc:
    """Tune the threshold on the dev rows (:func:`tune_bacc_threshold`), freeze it, and compute BAcc on the
    test rows with "consistent iff score >= threshold". The test rows never enter the tuning. Both sets need
    both classes (``ValueError`` naming which set lacks one)."""
    yd = as_labels(dev_labels, "dev_labels")
    sd = as_scores(dev_scores, n=yd.size, name="dev_scores")
    both_classes(yd, "threshold tuning on the dev rows")
    yt = as_labels(test_labels, "test_labels")
    st = as_scores(test_scores, n=yt.size, name="test_scores")
    both_classes(yt, "balanced accuracy on the test rows")
    thr, bacc_dev = tune_bacc_threshold(yd, sd)
    bacc_test = float(bacc_at_thresholds(yt, st, [thr])[0])
    return DevTunedBAcc(threshold=thr, bacc_dev=bacc_dev, bacc_test=bacc_test, n_dev=int(yd.size),
                        n_test=int(yt.size))
