"""tfc.meta against hand computations and independent implementations (sklearn, scipy, brute force)."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from tfc import meta
from tfc.meta import bins, ensemble, significance
from tfc.results import tables


def _tied(rng, n, levels=5):
    y = rng.integers(0, 2, n)
    s = rng.integers(0, levels, n) + y * rng.integers(0, 2, n)  # heavy ties, informative
    return y, s.astype(float)


# ---------------------------------------------------------------- ROC AUC
def test_auc_hand_computed_with_ties():
    # pairs (pos, neg): (.8>.2)=1 (.8>.5)=1 (.5=.5)=.5 (.5>.2)=1 -> 3.5/4
    assert meta.roc_auc([1, 1, 0, 0], [0.8, 0.5, 0.5, 0.2]) == pytest.approx(0.875)


@pytest.mark.parametrize("seed", range(5))
def test_auc_matches_sklearn_on_random_ties(seed):
    rng = np.random.default_rng(seed)
    y, s = _tied(rng, 200 + 50 * seed)
    assert meta.roc_auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_auc_direction_inconsistency_equals_consistency():
    rng = np.random.default_rng(0)
    y, s = _tied(rng, 300)
    assert meta.roc_auc(y, s) == pytest.approx(roc_auc_score(1 - y, -s))


@pytest.mark.parametrize("labels,scores,msg", [
    ([1, 1, 1], [0.1, 0.2, 0.3], "one class"),
    ([1, 0, 1], [0.1, np.nan, 0.3], "NaN"),
    ([1, 0, 1], [0.1, 0.2], "has 2 values"),
    ([1, 2, 0], [0.1, 0.2, 0.3], "0/1"),
    ([], [], "empty"),
])
def test_auc_bad_input(labels, scores, msg):
    with pytest.raises(ValueError, match=msg):
        meta.roc_auc(labels, scores)


def test_roc_curve_area_and_mirror():
    rng = np.random.default_rng(1)
    y, s = _tied(rng, 150)
    c = meta.roc_curve(y, s)
    assert np.trapezoid(c["tpr"], c["fpr"]) == pytest.approx(meta.roc_auc(y, s))
    ci = meta.roc_curve(y, s, positive="inconsistent")
    assert np.trapezoid(ci["tpr"], ci["fpr"]) == pytest.approx(meta.roc_auc(y, s))


# ---------------------------------------------------------------- thresholds and accuracy
def _brute_threshold(y, s):
    best, best_t = -1.0, None
    for t in sorted(set(s), reverse=True):          # descending: keep the largest among ties
        pred = s >= t
        tpr = (pred & (y == 1)).sum() / (y == 1).sum()
        fpr = (pred & (y == 0)).sum() / (y == 0).sum()
        g = np.sqrt(tpr * (1 - fpr))
        if g > best + 1e-15:
            best, best_t = g, t
    return best_t


@pytest.mark.parametrize("seed", range(8))
def test_tune_threshold_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    y, s = _tied(rng, 120, levels=4 + seed)
    if seed % 2:
        s = s + rng.normal(0, 0.3, s.size)           # also continuous scores
    assert meta.tune_threshold(y, s) == pytest.approx(_brute_threshold(y, s))


def test_tune_threshold_hand_case():
    # scores 0.1 0.4 0.35 0.8, labels 0 0 1 1: t=0.35 -> TPR 1, FPR 1/2 -> g=.707; t=0.8 -> TPR .5, FPR 0 -> .707
    # tie -> the larger threshold (0.8); t=0.4 -> TPR .5 FPR .5 -> .5
    assert meta.tune_threshold([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.8
    assert meta.tune_threshold([0, 1, 0, 1], [0.1, 0.6, 0.3, 0.9]) == 0.6   # separable


def test_accuracy_balanced_and_dev_to_test():
    y, s = np.array([0, 0, 0, 1]), np.array([0.1, 0.2, 0.6, 0.7])
    assert meta.accuracy(y, s, 0.5) == 0.75
    assert meta.balanced_accuracy(y, s, 0.5) == pytest.approx((2 / 3 + 1) / 2)
    r = meta.tuned_accuracy(y, s)
    assert r.threshold == 0.7 and r.accuracy == 1.0 and r.same_data
    r2 = meta.tuned_accuracy(y, s, [1, 0, 1], [0.9, 0.65, 0.69])  # threshold 0.7 applied to test
    assert r2.accuracy == pytest.approx(2 / 3) and r2.balanced_accuracy == pytest.approx(0.75)
    r3 = meta.tuned_accuracy(y, s, [1, 1], [0.9, 0.1])  # single-class test: bacc documented NaN
    assert r3.accuracy == 0.5 and np.isnan(r3.balanced_accuracy)
    with pytest.raises(ValueError):
        meta.tuned_accuracy(y, s, [1, 0], None)


def test_precision_recall_per_class():
    y, s = [1, 1, 0, 0, 0], [0.9, 0.2, 0.8, 0.1, 0.3]
    pr = meta.precision_recall(y, s, 0.5)          # predicted consistent: idx 0, 2
    assert pr["precision_grounded"] == 0.5 and pr["recall_grounded"] == 0.5
    assert pr["precision_ungrounded"] == pytest.approx(2 / 3) and pr["recall_ungrounded"] == pytest.approx(2 / 3)
    assert np.isnan(meta.precision_recall(y, s, 5.0)["precision_grounded"])  # never predicted


# ---------------------------------------------------------------- correlations
def test_correlations_match_scipy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    h = x + rng.normal(size=60)
    c = meta.correlations(x, h)
    assert c["pearson"] == pytest.approx(stats.pearsonr(x, h)[0])
    assert c["spearman_p"] == pytest.approx(stats.spearmanr(x, h)[1])
    assert c["kendall"] == pytest.approx(stats.kendalltau(x, h)[0])
    assert meta.correlation([1, 2, 3, 4], [2, 4, 6, 8])[0] == pytest.approx(1.0)


def test_system_level_and_bad_input():
    df = pd.DataFrame({"system": list("aabbcc"), "score": [1, 3, 2, 4, 5, 7], "human": [0, 2, 1, 1, 3, 5]})
    r = meta.system_level(df)   # means: a (2, 1), b (3, 1), c (6, 4)
    assert r["n_systems"] == 3
    assert r["pearson"] == pytest.approx(stats.pearsonr([2, 3, 6], [1, 1, 4])[0])
    with pytest.raises(ValueError, match="constant"):
        meta.correlation([1, 1, 1, 1], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="NaN"):
        meta.correlation([1, 2, np.nan], [1, 2, 3])
    with pytest.raises(ValueError, match="at least 3"):
        meta.correlation([1, 2], [1, 2])


# ---------------------------------------------------------------- bootstrap
def test_bootstrap_aucs_equal_explicit_resamples():
    rng = np.random.default_rng(4)
    y, s = _tied(rng, 250)
    s2 = s + rng.normal(0, 1, s.size)
    boot = significance.bootstrap_aucs(y, [s, s2], n=7, seed=11)
    idx = np.random.default_rng(11).integers(0, y.size, size=(7, y.size))  # same draws
    for b in range(7):
        assert boot[b, 0] == pytest.approx(roc_auc_score(y[idx[b]], s[idx[b]]), abs=1e-12)
        assert boot[b, 1] == pytest.approx(roc_auc_score(y[idx[b]], s2[idx[b]]), abs=1e-12)


def test_bootstrap_identical_metrics_and_fields():
    rng = np.random.default_rng(0)
    y, s = _tied(rng, 200)
    r = meta.bootstrap_auc_diff(y, s, s, n=200, seed=0)
    assert r.diff == 0 and r.p_value == 1.0 and r.ci == (0.0, 0.0)
    good = y + rng.normal(0, 0.3, y.size)
    r1 = meta.bootstrap_auc_diff(y, good, -good, n=200, seed=3)
    r2 = meta.bootstrap_auc_diff(y, good, -good, n=200, seed=3)
    assert r1 == r2 and r1.p_value == pytest.approx(1 / 201)   # large gap: smallest possible p
    assert r1.ci[0] <= r1.diff <= r1.ci[1]


def test_bootstrap_p_value_calibrated_under_null():
    """Two different metrics with the same true AUC: p roughly uniform."""
    rng = np.random.default_rng(123)
    ps = []
    for i in range(150):
        y = rng.integers(0, 2, 150)
        a = y + rng.normal(0, 1.2, y.size)
        b = y + rng.normal(0, 1.2, y.size)
        ps.append(meta.bootstrap_auc_diff(y, a, b, n=200, seed=i).p_value)
    ps = np.array(ps)
    assert stats.kstest(ps, "uniform").pvalue > 0.01
    assert 0.01 <= (ps < 0.05).mean() <= 0.12
    assert 0.3 <= (ps < 0.5).mean() <= 0.7


def test_bootstrap_detects_large_gap():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 400)
    good = y + rng.normal(0, 0.5, y.size)
    bad = y + rng.normal(0, 3.0, y.size)
    r = meta.bootstrap_auc_diff(y, good, bad, n=500, seed=0)
    assert r.diff > 0.15 and r.p_value < 0.01 and r.ci[0] > 0


def test_bootstrap_bad_input():
    with pytest.raises(ValueError, match="one class"):
        meta.bootstrap_auc_diff([1, 1, 1], [1, 2, 3], [3, 2, 1])
    with pytest.raises(ValueError, match="has 2 values"):
        meta.bootstrap_auc_diff([1, 0, 1], [1, 2, 3], [3, 2])
    with pytest.raises(ValueError, match="n must be"):
        significance.bootstrap_aucs([1, 0], [[1, 2]], n=0)


def test_interval_comparison_marks():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 500)
    scores = {"good": y + rng.normal(0, 0.4, y.size), "bad": y + rng.normal(0, 3, y.size),
              "worse": rng.normal(size=y.size)}
    r = meta.interval_comparison(y, scores, n=300, seed=0)
    assert r["best"] == "good" and r["second"] == "bad" and r["mark"] == "**"
    twin = {"a": scores["good"], "b": scores["good"] + 1e-9 * rng.normal(size=y.size)}
    assert meta.interval_comparison(y, twin, n=300, seed=0, method="diff")["mark"] == ""
    with pytest.raises(ValueError):
        meta.interval_comparison(y, {"a": scores["good"]})


def test_correct_pvalues_matches_statsmodels_holm():
    out = meta.correct_pvalues([0.01, 0.04, 0.03])
    # Holm by hand: sorted .01*3=.03, .03*2=.06, .04*1 -> max(.06,.04)=.06
    assert out["p_adjusted"].tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert out["reject"].tolist() == [True, False, False]
    with pytest.raises(ValueError):
        meta.correct_pvalues([0.1, np.nan])


# ---------------------------------------------------------------- ensembles
def test_normalise_and_ensemble():
    assert meta.normalise([2, 4, 6]).tolist() == [0, 0.5, 1]
    assert meta.normalise([5, 5]).tolist() == [0.5, 0.5]
    assert meta.normalise([-1, 0, 2], lo=-1, hi=1).tolist() == [0, 0.5, 1]
    e = meta.ensemble_scores({"a": [0, 10], "b": [1, 0]})
    assert e.tolist() == [0.5, 0.5]
    with pytest.raises(ValueError):
        meta.ensemble_scores({"a": [0, 1], "b": [1, 0, 2]})


def test_ensemble_frame_normalises_per_dataset_and_rejects_gaps():
    fa = pd.DataFrame({"id": ["x/dev/0", "x/dev/1", "y/dev/0", "y/dev/1"], "score": [0, 1, 100, 300]})
    fb = pd.DataFrame({"id": ["x/dev/0", "x/dev/1", "y/dev/0", "y/dev/1"], "score": [1, 0, 0, 1]})
    e = meta.ensemble_frame({"a": fa, "b": fb}, ["a", "b"])
    assert e["score"].tolist() == [0.5, 0.5, 0.0, 1.0]
    with pytest.raises(ValueError, match="different ids"):
        meta.ensemble_frame({"a": fa, "b": fb.iloc[:3]}, ["a", "b"])


def test_disagreement_counts():
    y = np.array([1, 1, 0, 0])
    m = {"a": np.array([1, 0, 0, 0.]), "b": np.array([1, 1, 1, 0.]), "c": np.array([0, 1, 0, 0.])}
    th = {"a": 0.5, "b": 0.5, "c": 0.5}
    e = np.array([0.9, 0.9, 0.1, 0.1])      # ensemble right everywhere
    t = ensemble.disagreement(y, m, th, e, 0.5)
    # ex0: a,b right (2); ex1: b,c right (2); ex2: a,c right (2); ex3: all right (excluded)
    assert t["n"].tolist() == [0, 0, 3] and t["pct"].tolist() == [0, 0, 100]


# ---------------------------------------------------------------- bins
def test_count_words_and_novel_unigrams():
    assert bins.count_words(["It's a well-known fact, isn't it?", ""]).tolist() == [6, 0]
    assert bins.count_words(["It's a well-known fact, isn't it?"], method="regex").tolist() == [8]
    pct = bins.novel_unigram_pct(["The cat sat on the mat."], ["The dog sat."])
    assert pct[0] == pytest.approx(100 / 3)
    assert np.isnan(bins.novel_unigram_pct(["a"], ["..."])[0])
    with pytest.raises(ValueError):
        bins.count_words([None])


def test_assign_bins_edges():
    e = bins.LENGTH_EDGES
    assert bins.assign_bins([0, 49, 50, 199, 200, 500, 10_000], e).tolist() == [0, 0, 1, 2, 3, 5, 5]
    assert bins.assign_bins([0, 9.99, 10, 100], bins.ABSTRACTIVENESS_EDGES).tolist() == [0, 0, 1, 9]
    with pytest.raises(ValueError):
        bins.assign_bins([-1], e)
    with pytest.raises(ValueError):
        bins.assign_bins([np.nan], e)


def test_binned_auc_sampling_and_single_class():
    rng = np.random.default_rng(0)
    n = 600
    length = np.r_[rng.integers(0, 50, 300), rng.integers(50, 100, 290), rng.integers(100, 200, 10)]
    y = np.r_[rng.integers(0, 2, 590), np.ones(10, int)]
    s = y + rng.normal(size=n)
    t = meta.binned_auc(y, {"m": s}, length, bins.LENGTH_EDGES, n_per_bin=100, seed=1)
    assert t["n"].tolist()[:3] == [100, 100, 10] and t["n_available"].tolist()[:3] == [300, 290, 10]
    assert t.loc[2, "note"] == "single class" and np.isnan(t.loc[2, "auc"])
    assert t.loc[3:, "n"].tolist() == [0, 0, 0]
    idx0 = np.flatnonzero(length < 50)
    full = meta.binned_auc(y, {"m": s}, length, bins.LENGTH_EDGES)
    assert full.loc[0, "auc"] == pytest.approx(roc_auc_score(y[idx0], s[idx0]))


# ---------------------------------------------------------------- tables
def _frames():
    rng = np.random.default_rng(0)
    rows = []
    for d in tables.TRUE9:
        y = rng.integers(0, 2, 60)
        for i, lab in enumerate(y):
            rows.append((f"{d}/dev/{i:06d}", lab))
    ids, y = zip(*rows)
    y = np.array(y)
    a = pd.DataFrame({"id": ids, "score": y + rng.normal(0, 0.5, y.size), "label": y})
    b = pd.DataFrame({"id": ids, "score": rng.normal(size=y.size), "label": y})
    return {"a": a, "b": b}


def test_auc_table_values_and_averages():
    fr = _frames()
    t = tables.auc_table(fr)
    frank = fr["a"][fr["a"]["id"].str.startswith("frank/")]
    got = t[(t.row == "frank") & (t.column == "a")]["value"].item()
    assert got == pytest.approx(100 * roc_auc_score(frank["label"], frank["score"]))
    avg = t[(t.row == "avg_wo_vitc_fever") & (t.column == "a")]["value"].item()
    assert avg == pytest.approx(t[(t.column == "a") & t.row.isin(tables.TRUE9)]["value"].mean())
    assert "avg_all11" not in set(t.row)            # FEVER/VitaminC missing: no partial average
    zs = t[(t.row == "avg_zs_wo_paws_vitc_fever") & (t.column == "a")]["value"].item()
    assert zs == pytest.approx(t[(t.column == "a") & t.row.isin(set(tables.TRUE9) - {"paws"})]["value"].mean())


def test_accuracy_and_significance_tables():
    fr = _frames()
    acc = tables.accuracy_table(fr)
    assert set(acc.columns) >= {"row", "column", "value", "balanced_accuracy", "threshold"}
    sig = tables.significance_table(fr, n=100)
    assert (sig["best"] == "a").all() and len(sig) == 9 and "p_adjusted" in sig
    curves = tables.roc_curves(fr, datasets=["frank"])
    assert set(curves["metric"]) == {"a", "b"}


def test_sample_ids_stratified():
    fr = _frames()
    keep = tables.sample_ids(fr["a"], 10, seed=0)
    sub = fr["a"][fr["a"]["id"].isin(keep)]
    per = sub.groupby(tables.dataset_of(sub["id"]))["label"].agg(["size", "min", "max"])
    assert (per["size"] == 10).all() and (per["min"] == 0).all() and (per["max"] == 1).all()


def test_pairwise_split_half_and_binned_tables():
    fr = _frames()
    pw = tables.pairwise_diff_table(fr, "a", "b", n=100)
    assert len(pw) == 9 and (pw["diff"] > 0).all() and (pw["ci_low"] <= pw["diff"]).all() and "p_holm" in pw
    with pytest.raises(ValueError, match="different ids"):
        tables.pairwise_diff_table({"a": fr["a"], "b": fr["b"].iloc[:-1]}, "a", "b", n=10)
    half = tables.split_half_accuracy(fr, seed=0)
    assert len(half) == 18 and np.allclose(half["gap"], half["self_tuned"] - half["dev_tuned"])
    feats = pd.DataFrame({"id": fr["a"]["id"], "grounding_words": np.arange(len(fr["a"])) % 600,
                          "novel_unigram_pct": np.r_[np.nan, np.linspace(0, 100, len(fr["a"]) - 1)]})
    t = tables.binned_auc_table(fr, feats, "grounding_words", bins.LENGTH_EDGES, n_per_bin=50, seed=0)
    assert set(t["metric"]) == {"a", "b"} and (t["n"] <= 50).all()
    t2 = tables.binned_auc_table(fr, feats, "novel_unigram_pct", bins.ABSTRACTIVENESS_EDGES)
    assert t2.attrs["n_nan"] == 1 and t2.groupby("metric")["n"].sum().tolist() == [len(feats) - 1] * 2


def test_text_features_on_real_data(data_dir):
    f = tables.text_features(["qags_xsum"], sample=20, seed=0)
    assert len(f) == 20 and (f["grounding_words"] > f["generated_words"]).mean() > 0.9
    assert f["novel_unigram_pct"].between(0, 100).all()


# --- TRUE's own conventions (google-research/true, src/meta_evaluation_lib.py and its tests) ----------

_TRUE_LABELS = [1, 1, 0, 0]


@pytest.mark.parametrize("scores, threshold, gmean", [
    ([1, 1, 0, 0], 0.0, 1.0),              # TRUE test 'int_scores_perfect_gmean'
    ([0.7, 1, 0.5, 0], 0.5, 1.0),          # 'float_scores_perfect_gmean'
    ([0.5, 0.4, 0.7, 0.2], 0.2, 0.707106781),   # 'imperfect_gmean'
])
def test_true_gmean_threshold_matches_trues_test_cases(scores, threshold, gmean):
    t, g = meta.binary.true_gmean_threshold(_TRUE_LABELS, scores)
    assert t == pytest.approx(threshold) and g == pytest.approx(gmean)
    assert meta.tune_threshold(_TRUE_LABELS, scores, convention="true") == pytest.approx(threshold)


def test_true_imperfect_case_by_hand():
    # ungrounded is the positive class, scored 1 - s: 0.8 (ungr.), 0.6, 0.5 (gr.), 0.3 (ungr.).
    # At 1 - s >= 0.8: TPR 1/2, FPR 0 -> G = sqrt(0.5) (the maximum); threshold 1 - 0.8.
    t = meta.tune_threshold(_TRUE_LABELS, [0.5, 0.4, 0.7, 0.2], convention="true")
    assert t == 1 - (1 - 0.2) and t != 0.2          # TRUE's float round trip: 0.19999999999999996
    # so, exactly as in TRUE, the example scored 0.2 is predicted grounded (0.2 <= t is False)
    assert meta.predict([0.2], t, convention="true").tolist() == [1]
    # the tfc convention tunes at a score value: 0.4 (consistent iff score >= 0.4), the partition TRUE
    # meant ({0.2} ungrounded), which TRUE's threshold misses by the float round trip
    assert meta.tune_threshold(_TRUE_LABELS, [0.5, 0.4, 0.7, 0.2]) == 0.4
    assert meta.accuracy(_TRUE_LABELS, [0.5, 0.4, 0.7, 0.2], 0.4) == 0.75
    assert meta.accuracy(_TRUE_LABELS, [0.5, 0.4, 0.7, 0.2], t, convention="true") == 0.5


@pytest.mark.parametrize("scores, labels, threshold, expected", [
    # TRUE's test_compute_precision_recall cases:
    # (grounded P, R, F1, ungrounded P, R, F1)
    ([1, 1, 0, 0], _TRUE_LABELS, 0.5, (1, 1, 1, 1, 1, 1)),                       # all_ones
    ([0.8, 1, 0.5, 0], _TRUE_LABELS, 0.7, (1, 1, 1, 1, 1, 1)),                   # different threshold
    ([0, 0, 0, 0], _TRUE_LABELS, 0.5, (0, 0, 0, 0.5, 1, 2 / 3)),                 # zero_grounded_values
    ([1, 1, 1, 1], _TRUE_LABELS, 0.5, (0.5, 1, 2 / 3, 0, 0, 0)),                 # zero_ungrounded_values
    ([0, 0, 1, 1], _TRUE_LABELS, 0.5, (0, 0, 0, 0, 0, 0)),                       # all_zeros
    ([1, 1, 0.5, 0.5], _TRUE_LABELS, 0.5, (1, 1, 1, 1, 1, 1)),                   # scores equal to the threshold
    ([1, 0.2, 0.2, 1], _TRUE_LABELS, 0.5, (0.5,) * 6),                           # all_half
    ([0.88, 0, 0.42, 0.83, 0.6, 0], [1, 0, 0, 0, 0, 1], 0.5,
     (1 / 3, 0.5, 0.4, 2 / 3, 0.5, 4 / 7)),                                      # float_values
])
def test_true_precision_recall_cases(scores, labels, threshold, expected):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr = meta.precision_recall(labels, scores, threshold, convention="true")
    got = tuple(pr[k] for k in ("precision_grounded", "recall_grounded", "f1_grounded",
                                "precision_ungrounded", "recall_ungrounded", "f1_ungrounded"))
    assert got == pytest.approx(expected)


def test_conventions_differ_on_ties_and_on_empty_predictions():
    y, s = [1, 1, 0, 0], [1, 1, 0.5, 0.5]
    # a score equal to the threshold: ungrounded in TRUE's convention, consistent in tfc's
    assert meta.accuracy(y, s, 0.5, convention="true") == 1.0
    assert meta.accuracy(y, s, 0.5) == 0.5
    # nothing predicted ungrounded: precision 0 (TRUE) or NaN (tfc)
    assert meta.precision_recall(y, [1, 1, 1, 1], 0.5, convention="true")["precision_ungrounded"] == 0.0
    assert np.isnan(meta.precision_recall(y, [1, 1, 1, 1], 0.5)["precision_ungrounded"])
    # a dev-tuned threshold applied to test data holding that exact score
    r_true = meta.tuned_accuracy([1, 0], [0.9, 0.4], [1, 0], [0.4, 0.4], convention="true")
    r_tfc = meta.tuned_accuracy([1, 0], [0.9, 0.4], [1, 0], [0.4, 0.4])
    assert r_tfc.threshold == 0.9 and r_tfc.accuracy == 0.5         # tfc tunes at 0.9: both predicted 0
    assert r_true.threshold == pytest.approx(0.4) and r_true.accuracy == 0.5
    with pytest.raises(ValueError, match="convention"):
        meta.predict([0.1], 0.5, convention="sklearn")


def test_accuracy_table_defaults_to_trues_convention():
    from tfc.results import tables

    f = pd.DataFrame({"id": [f"frank/dev/{i}" for i in range(4)], "score": [1, 1, 0.5, 0.5], "label": [1, 1, 0, 0]})
    a = tables.accuracy_table({"m": f}, ["frank"], averages=())
    assert a["value"].iloc[0] == pytest.approx(100.0)
    b = tables.accuracy_table({"m": f}, ["frank"], averages=(), convention="tfc")
    assert b["value"].iloc[0] == pytest.approx(100.0) and b["threshold"].iloc[0] == 1.0


def test_gmean_accuracy_range_hand_computed():
    """y = 1 1 0 0 1 0 over descending scores: g-mean per threshold 0.577, 0.816, 0.667, 0.471, 0.577, 0
    with accuracies 4/6, 5/6, 4/6, 3/6, 4/6, 3/6."""
    from tfc.meta import gmean_accuracy_range

    y = [1, 1, 0, 0, 1, 0]
    s = [0.9, 0.8, 0.7, 0.6, 0.5, 0.1]
    r = gmean_accuracy_range(y, s, tol=0.01)
    assert r["gmean"] == pytest.approx((2 / 3) ** 0.5) and r["n_thresholds"] == 1
    assert r["acc_min"] == pytest.approx(5 / 6) and r["acc_max"] == pytest.approx(5 / 6)
    r = gmean_accuracy_range(y, s, tol=0.2)                  # 0.816 and 0.667
    assert r["n_thresholds"] == 2 and (r["acc_min"], r["acc_max"]) == pytest.approx((4 / 6, 5 / 6))
    r = gmean_accuracy_range(y, s, tol=0.25)                 # also both 0.577s
    assert r["n_thresholds"] == 4 and (r["acc_min"], r["acc_max"]) == pytest.approx((4 / 6, 5 / 6))
    for bad in (-0.1, 1.0, "x", True):
        with pytest.raises(ValueError, match="tol"):
            gmean_accuracy_range(y, s, tol=bad)
    with pytest.raises(ValueError):
        gmean_accuracy_range([1, 1], [0.2, 0.3])             # one class only


def test_accuracy_flat_optimum_reads_the_paper_cell_and_the_range(monkeypatch):
    """A synthetic MNBM-like frame: our accuracy at TRUE's threshold, the near-optimum range, and whether the
    paper's Table 11 value (40.4, read to its printed precision) lies inside."""
    import numpy as np
    import pandas as pd

    from tfc.book.chapters import true as T
    from tfc.book import reference

    monkeypatch.setattr(reference, "value", lambda table, row, col: {"mnbm": 40.4}[row])
    y = np.array([1, 1, 0, 0, 1, 0])
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.1])
    frame = pd.DataFrame({"id": [f"mnbm/dev/{i}" for i in range(6)], "score": s, "label": y})
    flat = T.accuracy_flat_optimum(frame, ["mnbm"], "f1", tol=0.2)
    r = flat.iloc[0]
    assert r["ours"] == 83.3 and r["Δ"] == 42.9 and r["outside tolerance"]
    assert r["accuracy range"] == "66.7 to 83.3" and not r["paper in range"] and r["thresholds near the optimum"] == 2
    summary = T.flat_optimum_summary(flat)
    assert summary["n_out"] == 1 and summary["n_out_in_range"] == 0
    assert summary["out_not_in_range"] == "mnbm (paper 40.4, range 66.7 to 83.3, one example = 16.67 points)"
    assert r["g-mean gap at the paper's accuracy"] == float("inf") and r["thresholds better than that"] == -1
    assert summary["gap_text"] == "mnbm: no threshold gives the paper's accuracy"
    monkeypatch.setattr(reference, "value", lambda table, row, col: 66.7)
    r = T.accuracy_flat_optimum(frame, ["mnbm"], "f1", tol=0.2).iloc[0]
    assert r["paper in range"]
    assert r["g-mean gap at the paper's accuracy"] == 0.1498 and r["thresholds better than that"] == 1


def test_gmean_gap_at_accuracy_hand_computed():
    """The frame of test_gmean_accuracy_range_hand_computed: g-means 0.577, 0.816, 0.667, 0.471, 0.577, 0 with
    accuracies 4/6, 5/6, 4/6, 3/6, 4/6, 3/6; the closest threshold to the optimum at each accuracy decides."""
    from tfc.meta import gmean_gap_at_accuracy

    y = [1, 1, 0, 0, 1, 0]
    s = [0.9, 0.8, 0.7, 0.6, 0.5, 0.1]
    best = (2 / 3) ** 0.5
    assert gmean_gap_at_accuracy(y, s, 5 / 6, 5 / 6) == {"gap": 0.0, "n_better": 0, "n_thresholds": 1}
    r = gmean_gap_at_accuracy(y, s, 4 / 6, 4 / 6)
    assert r["gap"] == pytest.approx(best - 2 / 3) and r["n_better"] == 1 and r["n_thresholds"] == 3
    r = gmean_gap_at_accuracy(y, s, 0.5, 0.5)
    assert r["gap"] == pytest.approx(best - (2 / 9) ** 0.5) and r["n_better"] == 4 and r["n_thresholds"] == 2
    assert gmean_gap_at_accuracy(y, s, 0.9, 1.0) == {"gap": float("inf"), "n_better": -1, "n_thresholds": 0}
    for lo, hi in ((0.6, 0.5), (-0.1, 0.5), (0.5, 1.2)):
        with pytest.raises(ValueError, match="lo"):
            gmean_gap_at_accuracy(y, s, lo, hi)
