"""How good is a checker, by today's conventions: BAcc at a fixed and at a dev-tuned threshold, PR-AUC of the
inconsistent class, ECE with a reliability diagram, per-group rows with a macro-average, each with a bootstrap
interval (tfc.meta.thresholds, tfc.meta.calibration, tfc.meta.resample, tfc.results.own_eval, tfc evaluate)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tfc
from tfc import meta as M
from tfc.cli import main
from tfc.results import own_eval as E
from tfc.results import own_files as O

# the small case, worked by hand below
Y = np.array([0, 0, 1, 1, 1])
S = np.array([0.2, 0.5, 0.5, 0.7, 0.9])


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# -- balanced accuracy at a fixed threshold ---------------------------------------------------------
def test_bacc_at_a_fixed_threshold_with_ties_by_hand_and_sklearn():
    from sklearn.metrics import balanced_accuracy_score

    # t = 0.5, consistent iff score >= t: the two rows scored exactly 0.5 are predicted consistent.
    # predictions [0, 1, 1, 1, 1]; recall of consistent = 3/3, of inconsistent = 1/2 -> BAcc = (1 + 0.5) / 2 = 0.75
    assert M.balanced_accuracy(Y, S, 0.5) == pytest.approx(0.75)
    assert M.bacc_at_thresholds(Y, S, [0.5])[0] == pytest.approx(0.75)
    assert M.balanced_accuracy(Y, S, 0.5) == pytest.approx(balanced_accuracy_score(Y, S >= 0.5))
    # t = 0.6: predictions [0, 0, 0, 1, 1]; recalls 2/3 and 2/2 -> (2/3 + 1) / 2 = 5/6
    assert M.bacc_at_thresholds(Y, S, [0.6])[0] == pytest.approx(5 / 6)
    rng = np.random.default_rng(0)
    y, s = rng.integers(0, 2, 200), np.round(rng.random(200), 1)   # many ties
    for t in (0.1, 0.3, 0.5, 0.55, 0.9):
        want = balanced_accuracy_score(y, s >= t)
        assert M.bacc_at_thresholds(y, s, [t])[0] == pytest.approx(want)
        assert M.balanced_accuracy(y, s, t) == pytest.approx(want)


def test_check_threshold_refuses_a_threshold_outside_the_scores():
    assert M.check_threshold(S, 0.2) == 0.2 and M.check_threshold(S, 0.9) == 0.9   # the ends are inside
    for bad in (0.1, 0.95, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            M.check_threshold(S, bad)
    with pytest.raises(ValueError):
        M.check_threshold([], 0.5)


# -- PR-AUC of the inconsistent class -----------------------------------------------------------------
def test_pr_auc_inconsistent_by_hand_and_sklearn():
    from sklearn.metrics import average_precision_score

    # positives = label 0, detector -score. Ranked by -score: row 0 (-0.2, positive) first, then the tie at
    # -0.5 (one positive, one negative) together, then the negatives.
    # threshold 1: TP 1, FP 0 -> precision 1, recall 1/2;  threshold 2: TP 2, FP 1 -> precision 2/3, recall 1
    # AP = (1/2 - 0) * 1 + (1 - 1/2) * 2/3 = 1/2 + 1/3 = 5/6
    assert M.pr_auc_inconsistent(Y, S) == pytest.approx(5 / 6)
    assert M.pr_auc_inconsistent(Y, S) == pytest.approx(average_precision_score(1 - Y, -S))
    rng = np.random.default_rng(1)
    y, s = rng.integers(0, 2, 300), np.round(rng.normal(size=300), 1)
    assert M.pr_auc_inconsistent(y, s) == pytest.approx(average_precision_score(1 - y, -s))
    # a perfect checker: every inconsistent row scored below every consistent one
    assert M.pr_auc_inconsistent([0, 0, 1], [0.1, 0.2, 0.9]) == 1.0


# -- ECE ---------------------------------------------------------------------------------------------
def test_ece_by_hand():
    # 10 bins: 0.2 -> bin 2 (label 0: |0.2 - 0| = 0.2); 0.5, 0.5 -> bin 5 (labels 0, 1: |0.5 - 0.5| = 0);
    # 0.7 -> bin 7 (label 1: 0.3); 0.9 -> bin 9 (label 1: 0.1). ECE = (1*0.2 + 2*0 + 1*0.3 + 1*0.1) / 5 = 0.12
    assert M.expected_calibration_error(Y, S, bins=10) == pytest.approx(0.12)
    # 2 bins: [0, 0.5) holds 0.2 (gap 0.2); [0.5, 1] holds 0.5, 0.5, 0.7, 0.9 with labels 0, 1, 1, 1:
    # mean score 2.6/4 = 0.65, share consistent 3/4 = 0.75, gap 0.1. ECE = 1/5 * 0.2 + 4/5 * 0.1 = 0.12
    assert M.expected_calibration_error(Y, S, bins=2) == pytest.approx(0.12)
    # 1 bin: |mean score - share consistent| = |2.8/5 - 3/5| = 0.04
    assert M.expected_calibration_error(Y, S, bins=1) == pytest.approx(0.04)
    t = M.reliability_bins(Y, S, bins=2)
    assert t["n"].tolist() == [1, 4]
    assert t["mean_score"].tolist() == pytest.approx([0.2, 0.65])
    assert t["frac_consistent"].tolist() == pytest.approx([0.0, 0.75])
    # a score of exactly 1.0 lies in the last bin; edges are the printed ones: 0.3 is in bin 3 of 10
    assert M.reliability_bins([1, 0], [1.0, 0.3], bins=10)["n"].tolist() == [0, 0, 0, 1, 0, 0, 0, 0, 0, 1]
    # perfectly calibrated in each bin: bin 5 mean 0.5, share 1/2; bin 2 mean 0.25, share 1/4 -> ECE 0
    assert M.expected_calibration_error([0, 1, 1, 0, 0, 0], [0.5, 0.5, 0.25, 0.25, 0.25, 0.25]) == 0.0
    # 0.5, 0.5, 0.55, 0.55 share bin 5: mean 0.525 against share 1/2 -> 0.025
    assert M.expected_calibration_error([0, 1, 0, 1], [0.5, 0.5, 0.55, 0.55]) == pytest.approx(0.025)


def test_ece_refuses_non_probability_scores_and_bad_bins():
    assert not M.is_probability([0.2, 1.3]) and M.is_probability([0.0, 1.0])
    with pytest.raises(ValueError):
        M.expected_calibration_error([0, 1], [0.2, 1.3])
    with pytest.raises(ValueError):
        M.expected_calibration_error([0, 1], [0.2, -0.1])
    for bins in (0, -1, 2.5, True):
        with pytest.raises(ValueError):
            M.expected_calibration_error([0, 1], [0.2, 0.3], bins=bins)


# -- the dev-tuned threshold ---------------------------------------------------------------------------
DEV_Y, DEV_S = [0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4]
TEST_Y, TEST_S = [0, 0, 1, 1], [0.5, 0.6, 0.7, 0.8]


def test_dev_threshold_by_hand_and_ties_go_to_the_smallest():
    # candidates: 0.1, 0.15, 0.25, 0.35, 0.4 -> BAcc 0.5, 0.75, 1.0, 0.75, 0.75: 0.25 wins
    assert M.threshold_candidates(DEV_S) == pytest.approx([0.1, 0.15, 0.25, 0.35, 0.4])
    thr, bacc = M.tune_bacc_threshold(DEV_Y, DEV_S)
    assert thr == pytest.approx(0.25) and bacc == 1.0
    # labels 0, 1, 0, 1 on the same scores: BAcc 0.5, 0.75, 0.5, 0.75, 0.75 -> tie, the smallest (0.15)
    thr, bacc = M.tune_bacc_threshold([0, 1, 0, 1], DEV_S)
    assert thr == pytest.approx(0.15) and bacc == pytest.approx(0.75)
    # one distinct score: the only candidate, BAcc 0.5
    assert M.tune_bacc_threshold([0, 1], [0.3, 0.3]) == (0.3, 0.5)


def test_the_dev_threshold_is_never_fitted_on_the_test_rows():
    # the test rows' own best threshold is 0.65 (BAcc 1); the dev one is 0.25, below every test score, so every
    # test row is predicted consistent: BAcc = (1 + 0) / 2 = 0.5
    assert M.tune_bacc_threshold(TEST_Y, TEST_S)[0] == pytest.approx(0.65)
    r = M.dev_tuned_bacc(DEV_Y, DEV_S, TEST_Y, TEST_S)
    assert r.threshold == pytest.approx(0.25) and r.bacc_dev == 1.0 and r.bacc_test == 0.5
    assert (r.n_dev, r.n_test) == (4, 4)
    # the same through evaluate_frame: dev threshold and test BAcc at it; in-sample tuning kept apart
    df, dev = (pd.DataFrame({"y": y, "a": s}) for y, s in ((TEST_Y, TEST_S), (DEV_Y, DEV_S)))
    (row,) = tfc.evaluate_frame(df, "y", ["a"], n_boot=50, dev=dev)["scores"]
    assert row["threshold_dev"] == pytest.approx(0.25) and row["bacc_dev"] == 0.5 and row["bacc_dev_on_dev"] == 1.0
    assert row["threshold_in_sample"] == pytest.approx(0.7) and row["bacc_in_sample"] == 1.0


def test_one_class_missing_is_an_error():
    for f in (M.pr_auc_inconsistent, M.tune_bacc_threshold, lambda y, s: M.balanced_accuracy(y, s, 0.5),
              lambda y, s: M.bacc_at_thresholds(y, s, [0.5])):
        with pytest.raises(ValueError, match="one class"):
            f([1, 1, 1], [0.1, 0.5, 0.9])
    with pytest.raises(ValueError, match="dev"):
        M.dev_tuned_bacc([1, 1], [0.2, 0.3], TEST_Y, TEST_S)
    with pytest.raises(ValueError, match="test"):
        M.dev_tuned_bacc(DEV_Y, DEV_S, [0, 0], [0.2, 0.3])


def test_bad_scores_are_errors_not_nan():
    for f in (M.pr_auc_inconsistent, M.tune_bacc_threshold, M.expected_calibration_error):
        with pytest.raises(ValueError):
            f([0, 1, 1], [0.1, float("nan"), 0.9])
        with pytest.raises(ValueError):
            f([0, 1, 1], [0.1, 0.9])          # length mismatch
        with pytest.raises(ValueError):
            f([], [])
    with pytest.raises(ValueError):
        M.bacc_at_thresholds([0, 1], [0.1, 0.9], [float("nan")])


# -- bootstrap ----------------------------------------------------------------------------------------
def test_bootstrap_metrics_are_the_metrics_on_explicit_resamples():
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(2)
    y, s = rng.integers(0, 2, 40), np.round(rng.random(40), 1)
    vals, ok = M.bootstrap_metrics(y, [s], n=60, seed=5, fixed=[0.5], dev=[0.35], bins=10, calibrated=[True])
    np.testing.assert_allclose(vals["roc_auc"], M.bootstrap_aucs(y, [s], n=60, seed=5))   # the same resamples
    gen = np.random.default_rng(5)
    idx = gen.integers(0, 40, size=(60, 40))           # what _resample_counts draws for one chunk
    for b in np.flatnonzero(ok)[:15]:
        yb, sb = y[idx[b]], s[idx[b]]
        assert vals["pr_auc_inconsistent"][b, 0] == pytest.approx(average_precision_score(1 - yb, -sb))
        assert vals["bacc_fixed"][b, 0] == pytest.approx(M.balanced_accuracy(yb, sb, 0.5))
        assert vals["bacc_dev"][b, 0] == pytest.approx(M.balanced_accuracy(yb, sb, 0.35))
        assert vals["bacc_in_sample"][b, 0] == pytest.approx(M.tuned_accuracy(yb, sb).balanced_accuracy)
        assert vals["ece"][b, 0] == pytest.approx(M.expected_calibration_error(yb, sb, 10))
    assert np.isnan(vals["roc_auc"][~ok]).all()


def test_evaluate_frame_intervals_hold_the_estimates_and_macro_matches_mean_bootstrap():
    rng = np.random.default_rng(4)
    n = 150
    y = rng.integers(0, 2, n)
    df = pd.DataFrame({"y": y, "p": np.clip(0.3 * y + 0.7 * rng.random(n), 0, 1), "g": rng.choice(["x", "w"], n)})
    rep = tfc.evaluate_frame(df, "y", ["p"], n_boot=300, group_col="g", bins=5)
    (row,) = rep["scores"]
    for key, ci in E.CI_KEYS.items():
        if key != "bacc_dev":
            assert ci in row and row[ci][0] <= row[ci][1]
    assert row["bacc_dev"] is None and row["bacc_dev_ci"] is None
    assert row["ece"] == pytest.approx(M.expected_calibration_error(y, df["p"], 5))
    assert [r["group"] for r in rep["groups"]] == ["w", "x"]
    for r in rep["groups"]:
        sub = df[df["g"] == r["group"]]
        assert r["rows"] == len(sub) and r["roc_auc"] == pytest.approx(M.roc_auc(sub["y"], sub["p"]))
        assert r["bacc_fixed"] == pytest.approx(M.balanced_accuracy(sub["y"], sub["p"], 0.5))
    (macro,) = rep["macro"]
    for key in E.CI_KEYS:
        if key != "bacc_dev":
            assert macro[key] == pytest.approx(np.mean([r[key] for r in rep["groups"]]))
    groups = {g: (df.loc[df["g"] == g, "y"].to_numpy(), {"p": df.loc[df["g"] == g, "p"].to_numpy()})
              for g in ("w", "x")}
    boot, _, _ = M.bootstrap_mean_aucs(groups, n=300, seed=0)
    boot = boot[np.isfinite(boot[:, 0]), 0]
    assert macro["auc_ci"] == pytest.approx(np.quantile(boot, [0.025, 0.975]).tolist())


# -- the command line ---------------------------------------------------------------------------------
def _files(tmp_path):
    test = pd.DataFrame({"dataset": ["A"] * 4 + ["B"] * 4, "label": TEST_Y * 2,
                         "a": TEST_S + [0.5, 0.75, 0.6, 0.8]})
    dev = pd.DataFrame({"dataset": ["A"] * 4, "label": DEV_Y, "a": DEV_S})
    test.to_csv(tmp_path / "test.csv", index=False)
    dev.to_csv(tmp_path / "dev.csv", index=False)
    return test, dev


def test_cli_dev_threshold_groups_plot_json(tmp_path):
    test, _ = _files(tmp_path)
    png = tmp_path / "out.png"
    r = run("evaluate", "--input", tmp_path / "test.csv", "--label-col", "label", "--score-cols", "a", "--dev",
            tmp_path / "dev.csv", "--threshold", 0.5, "--group-col", "dataset", "--plot", png, "--json",
            "--n-boot", 200)
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["threshold_fixed"] == 0.5 and rep["threshold_fixed_given"] is True and rep["warnings"] == []
    assert rep["rows"] == 8 and rep["dev"]["rows"] == 4 and rep["bins"] == 10
    (row,) = rep["scores"]
    y, s = test["label"].to_numpy(), test["a"].to_numpy()
    # dev threshold 0.25 lies below every test score: all predicted consistent, BAcc 0.5
    assert row["threshold_dev"] == pytest.approx(0.25) and row["bacc_dev"] == 0.5
    # fixed 0.5: predictions A [1, 1, 1, 1], B [1, 1, 1, 1] (0.5 >= 0.5) -> BAcc 0.5
    assert row["bacc_fixed"] == 0.5 == M.balanced_accuracy(y, s, 0.5)
    assert row["roc_auc"] == pytest.approx(M.roc_auc(y, s))
    assert row["pr_auc_inconsistent"] == pytest.approx(M.pr_auc_inconsistent(y, s))
    assert row["ece"] == pytest.approx(M.expected_calibration_error(y, s, 10))
    assert row["bacc_in_sample"] == pytest.approx(M.tuned_accuracy(y, s).balanced_accuracy)
    by = {g["group"]: g for g in rep["groups"]}
    # group A: the test rows of the dev test above (AUC 1, in-sample BAcc 1); group B: scores 0.5, 0.75 (label 0),
    # 0.6, 0.8 (label 1): AUC = 3/4 (pairs (0.6>0.5), (0.8>0.5), (0.8>0.75) of 4)
    assert by["A"]["roc_auc"] == 1.0 and by["A"]["bacc_in_sample"] == 1.0 and by["B"]["roc_auc"] == 0.75
    assert rep["macro"][0]["roc_auc"] == pytest.approx((1.0 + 0.75) / 2)
    assert rep["macro"][0]["n_groups"] == 2
    assert rep["plot"] == str(png) and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(rep["rules"]) >= {"prediction", "threshold_fixed", "threshold_dev", "threshold_in_sample",
                                 "pr_auc_inconsistent", "ece", "intervals", "groups"}
    assert "NaN" not in r.stdout
    text = run("evaluate", "--input", tmp_path / "test.csv", "--label-col", "label", "--score-cols", "a", "--dev",
               tmp_path / "dev.csv", "--group-col", "dataset", "--n-boot", 50)
    assert text.exit_code == 0, text.output
    assert "0.25" in text.stdout and "macro" in text.stdout and "in-sample" in text.stdout


def test_cli_dev_file_without_both_classes(tmp_path):
    _files(tmp_path)
    pd.DataFrame({"label": [1, 1, 1], "a": [0.2, 0.4, 0.6]}).to_csv(tmp_path / "dev1.csv", index=False)
    r = run("evaluate", "--input", tmp_path / "test.csv", "--label-col", "label", "--score-cols", "a",
            "--dev", tmp_path / "dev1.csv", "--json")
    assert r.exit_code == 1 and r.stdout == "" and "dev1.csv" in r.stderr and "'label'" in r.stderr
    pd.DataFrame({"label": [0, 1], "b": [0.2, 0.4]}).to_csv(tmp_path / "dev2.csv", index=False)
    r = run("evaluate", "--input", tmp_path / "test.csv", "--label-col", "label", "--score-cols", "a",
            "--dev", tmp_path / "dev2.csv")
    assert r.exit_code == 1 and "'a'" in r.stderr and "dev2.csv" in r.stderr


def test_cli_explicit_threshold_outside_the_score_range(tmp_path):
    _files(tmp_path)          # scores 0.5 .. 0.8
    for t in (0.3, 0.9, 2):
        r = run("evaluate", "--input", tmp_path / "test.csv", "--label-col", "label", "--score-cols", "a",
                "--threshold", t, "--json")
        assert r.exit_code == 1 and r.stdout == "" and "'a'" in r.stderr and "0.5" in r.stderr and "0.8" in r.stderr
    r = run("evaluate", "--input", tmp_path / "test.csv", "--label-col", "label", "--score-cols", "a",
            "--threshold", 0.8, "--json", "--n-boot", 20)
    # 0.8 (the top score) is inside: only the row scored 0.8 in each group is predicted consistent
    # recall consistent 2/4, recall inconsistent 4/4 -> 0.75
    assert r.exit_code == 0 and json.loads(r.stdout)["scores"][0]["bacc_fixed"] == 0.75


def test_cli_default_threshold_on_scores_outside_0_1_warns(tmp_path):
    df = pd.DataFrame({"label": [0, 0, 1, 1, 1], "z": [-2.0, 0.4, 0.6, 3.0, 5.0], "p": S})
    df.to_csv(tmp_path / "in.csv", index=False)
    r = run("evaluate", "--input", tmp_path / "in.csv", "--label-col", "label", "--json", "--n-boot", 50)
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["threshold_fixed"] == 0.5 and rep["threshold_fixed_given"] is False
    assert len(rep["warnings"]) == 1 and "'z'" in rep["warnings"][0] and "'z'" in r.stderr
    z, p = rep["scores"]
    # the documented result: BAcc still computed at 0.5 (predictions [0, 0, 1, 1, 1]: 1.0), ECE skipped with a reason
    assert z["bacc_fixed"] == 1.0 and z["ece"] is None and z["ece_ci"] is None and z["ece_skipped"]
    assert p["ece"] == pytest.approx(0.12) and p["ece_skipped"] is None and p["bacc_fixed"] == 0.75
    r = run("evaluate", "--input", tmp_path / "in.csv", "--label-col", "label", "--json", "--n-boot", 50,
            "--threshold", 0.5)
    assert r.exit_code == 0 and json.loads(r.stdout)["warnings"] == [] and r.stderr == ""
    # a reliability diagram needs a probability column; a non-PNG path is refused before any work
    r = run("evaluate", "--input", tmp_path / "in.csv", "--label-col", "label", "--score-cols", "z",
            "--plot", tmp_path / "r.png")
    assert r.exit_code == 1 and not (tmp_path / "r.png").exists()
    r = run("evaluate", "--input", tmp_path / "in.csv", "--label-col", "label", "--plot", tmp_path / "r.pdf")
    assert r.exit_code == 1 and not (tmp_path / "r.pdf").exists()


def test_group_with_one_class_and_bad_group_column(tmp_path):
    df = pd.DataFrame({"y": [0, 1, 1, 1], "s": [0.1, 0.9, 0.4, 0.6], "g": ["a", "a", "b", "b"]})
    with pytest.raises(O.OwnFileError, match="'b'"):
        tfc.evaluate_frame(df, "y", ["s"], n_boot=10, group_col="g")
    with pytest.raises(O.OwnFileError, match="'h'"):
        tfc.evaluate_frame(df, "y", ["s"], n_boot=10, group_col="h")
    with pytest.raises(O.OwnFileError):
        tfc.evaluate_frame(df, "y", ["s", "g"], n_boot=10, group_col="g")


def test_moved_functions_stay_reachable_from_own_files():
    assert O.evaluate_frame is E.evaluate_frame and O.binary_labels is E.binary_labels
    from tfc.results import own_report

    assert O.format_report is own_report.format_report
    with pytest.raises(AttributeError):
        O.no_such_function  # noqa: B018
