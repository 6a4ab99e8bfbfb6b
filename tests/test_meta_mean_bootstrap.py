"""tfc.meta.bootstrap_mean_auc_diff: the paired bootstrap of a mean-over-datasets AUC difference."""
from __future__ import annotations

import numpy as np
import pytest

from tfc.meta import bootstrap_aucs, bootstrap_mean_auc_diff, roc_auc


def test_hand_computed_means_and_perfect_separation():
    # dataset x: a ranks perfectly (AUC 1), b reversed (AUC 0); dataset z: a = 3/4 by hand, b = 1/2 (ties)
    gx = ([1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1], [0.1, 0.2, 0.8, 0.9])
    gz = ([1, 0, 1, 0], [0.9, 0.8, 0.3, 0.1], [0.5, 0.5, 0.5, 0.5])
    assert roc_auc(gz[0], gz[1]) == pytest.approx(0.75)
    r = bootstrap_mean_auc_diff({"x": gx, "z": gz}, n=300, seed=1)
    assert r.per_dataset == {"x": (1.0, 0.0), "z": (0.75, 0.5)}
    assert r.mean_auc_a == pytest.approx(0.875) and r.mean_auc_b == pytest.approx(0.25)
    assert r.diff == pytest.approx(0.625)
    assert r.n == 300 and r.n_valid <= 300 and r.diffs.size == r.n_valid
    # x contributes exactly 1 - 0 in every valid resample and z's difference lies in [-1/2, 1/2]
    # (b is constant: AUC 1/2), so every resampled mean difference lies in [1/4, 3/4]
    assert (r.diffs >= 0.25 - 1e-12).all() and (r.diffs <= 0.75 + 1e-12).all()
    assert 0.25 - 1e-12 <= r.ci[0] <= r.ci[1] <= 0.75 + 1e-12


def test_identical_metrics_give_zero_and_p_one():
    rng = np.random.default_rng(0)
    g = {d: (rng.integers(0, 2, 50), rng.random(50)) for d in ("a", "b", "c")}
    groups = {d: (y, s, s.copy()) for d, (y, s) in g.items()}
    r = bootstrap_mean_auc_diff(groups, n=200, seed=0)
    assert r.diff == 0.0 and r.p_value == 1.0 and r.ci == (0.0, 0.0)


def test_resamples_are_within_each_dataset():
    """Each resampled mean equals the mean of the per-dataset paired bootstraps with the derived seeds."""
    rng = np.random.default_rng(3)
    groups = {}
    for d, size in (("small", 30), ("large", 200)):
        y = rng.integers(0, 2, size)
        groups[d] = (y, y + rng.normal(0, 1.0, size), y + rng.normal(0, 2.0, size))
    r = bootstrap_mean_auc_diff(groups, n=100, seed=7)
    seeds = np.random.default_rng(7).integers(0, 2**32 - 1, size=2)
    per = []
    for (d, (y, a, b)), s in zip(groups.items(), seeds):
        bo = bootstrap_aucs(y, [a, b], n=100, seed=int(s))
        per.append(bo[:, 0] - bo[:, 1])
    want = np.mean(np.column_stack(per), axis=1)
    np.testing.assert_allclose(r.diffs, want[np.isfinite(want)])
    assert 0 < r.p_value <= 1


def test_clear_difference_is_significant():
    rng = np.random.default_rng(1)
    groups = {}
    for d in ("a", "b", "c"):
        y = rng.integers(0, 2, 300)
        groups[d] = (y, y + rng.normal(0, 0.5, 300), rng.random(300))
    r = bootstrap_mean_auc_diff(groups, n=500, seed=0)
    assert r.diff > 0.3 and r.p_value < 0.01 and r.ci[0] > 0


@pytest.mark.parametrize("groups, err", [
    ({}, ValueError), ([], ValueError),
    ({"a": ([1, 0], [0.1, 0.2])}, ValueError),                       # not a triple
    ({"a": ([1, 0], [0.1, 0.2], [0.3])}, ValueError),                # length mismatch
    ({"a": ([1, 1], [0.1, 0.2], [0.3, 0.4])}, ValueError),           # one class only
])
def test_bad_input(groups, err):
    with pytest.raises(err):
        bootstrap_mean_auc_diff(groups, n=10)


def test_bad_alpha_and_n():
    g = {"a": ([1, 0, 1, 0], [0.9, 0.1, 0.8, 0.2], [0.5, 0.4, 0.3, 0.2])}
    with pytest.raises(ValueError):
        bootstrap_mean_auc_diff(g, alpha=1.5)
    with pytest.raises(ValueError):
        bootstrap_mean_auc_diff(g, n=0)


def test_many_metrics_share_the_resamples():
    from tfc.meta import bootstrap_mean_aucs

    rng = np.random.default_rng(5)
    groups, pairs = {}, {}
    for d, size in (("p", 40), ("q", 90)):
        y = rng.integers(0, 2, size)
        m = {"a": y + rng.normal(0, 1, size), "b": rng.random(size), "c": y + rng.normal(0, 3, size)}
        groups[d] = (y, m)
        pairs[d] = (y, m["a"], m["c"])
    boot, names, per = bootstrap_mean_aucs(groups, n=120, seed=3)
    assert names == ["a", "b", "c"] and boot.shape == (120, 3)
    assert per["p"]["a"] == pytest.approx(roc_auc(groups["p"][0], groups["p"][1]["a"]))
    r = bootstrap_mean_auc_diff(pairs, n=120, seed=3)
    d = boot[:, 0] - boot[:, 2]
    np.testing.assert_allclose(r.diffs, d[np.isfinite(d)])
    with pytest.raises(ValueError, match="metrics"):
        bootstrap_mean_aucs({"p": groups["p"], "q": (groups["q"][0], {"a": groups["q"][1]["a"]})}, n=5)
    with pytest.raises(ValueError):
        bootstrap_mean_aucs({"p": (groups["p"][0], {})}, n=5)


def test_mean_auc_contrasts_equal_the_pairwise_bootstrap_and_share_resamples():
    """Each row of mean_auc_contrasts is bootstrap_mean_auc_diff(metric, reference) on the same seed: same
    difference, interval and p-value; the hand case gives diff 62.5 (AUC x 100)."""
    from tfc.meta import mean_auc_contrasts

    gx = ([1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1], [0.1, 0.2, 0.8, 0.9])
    gz = ([1, 0, 1, 0], [0.9, 0.8, 0.3, 0.1], [0.5, 0.5, 0.5, 0.5])
    groups = {d: (g[0], {"ref": np.asarray(g[2]), "a": np.asarray(g[1]), "same": np.asarray(g[2])})
              for d, g in (("x", gx), ("z", gz))}
    out = mean_auc_contrasts(groups, "ref", n=300, seed=1).set_index("metric")
    assert list(out.index) == ["a", "same"]
    pair = bootstrap_mean_auc_diff({"x": gx, "z": gz}, n=300, seed=1)
    assert out.loc["a", "diff"] == pytest.approx(100 * pair.diff) == pytest.approx(62.5)
    assert (out.loc["a", "ci_low"], out.loc["a", "ci_high"]) == pytest.approx((100 * pair.ci[0], 100 * pair.ci[1]))
    assert out.loc["a", "p_value"] == pytest.approx(pair.p_value)
    assert out.loc["a", "mean_auc"] == pytest.approx(87.5) and out.loc["a", "mean_auc_reference"] == pytest.approx(25)
    assert out.loc["same", "diff"] == 0.0 and out.loc["same", "p_value"] == 1.0
    assert (out["n_datasets"] == 2).all()


def test_mean_auc_contrasts_refuses_bad_input():
    from tfc.meta import mean_auc_contrasts

    g = {"x": ([1, 0, 1, 0], {"a": [0.9, 0.1, 0.8, 0.2], "b": [0.5, 0.4, 0.3, 0.2]})}
    with pytest.raises(ValueError, match="reference 'c'"):
        mean_auc_contrasts(g, "c", n=10)
    with pytest.raises(ValueError, match="alpha"):
        mean_auc_contrasts(g, "a", n=10, alpha=1.5)
    with pytest.raises(ValueError, match="metrics"):
        mean_auc_contrasts({**g, "y": ([1, 0], {"a": [0.1, 0.2]})}, "a", n=10)
