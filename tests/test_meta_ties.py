import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from tfc.meta.ties import tie_range


def test_tie_range_brackets_sklearn_auc():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.where(rng.random(300) < 0.5, 0.0, rng.random(300) + y * 0.3)   # half the scores tied at 0
    r = tie_range(y, s)
    assert r["auc"] == pytest.approx(roc_auc_score(y, s))
    assert r["auc_low"] < r["auc"] < r["auc_high"]
    assert r["auc_high"] - r["auc_low"] == pytest.approx(r["tied_pairs"])
    assert r["at_min"] == pytest.approx(np.mean(s == 0))


def test_tie_range_without_ties_is_a_point():
    r = tie_range([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert r["auc_low"] == r["auc"] == r["auc_high"] == pytest.approx(0.75)
    assert r["tied_pairs"] == 0


def test_all_tied():
    r = tie_range([0, 1, 0, 1], [0, 0, 0, 0])
    assert (r["auc_low"], r["auc"], r["auc_high"]) == (0.0, 0.5, 1.0)


def test_tie_range_refuses_one_class_and_nan():
    with pytest.raises(ValueError):
        tie_range([1, 1], [0.1, 0.2])
    with pytest.raises(ValueError):
        tie_range([0, 1], [np.nan, 0.2])
