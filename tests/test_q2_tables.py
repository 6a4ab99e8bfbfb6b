"""Q² Tables 4 and 6 on hand cases: the system-level simulation (Spearman over simulated systems) and the
turn-level correlations with human ratings."""
import numpy as np
import pandas as pd
import pytest

from tfc.book.chapters.q2 import Q2_T4_LEVELS, system_corr_bootstrap, usr_correlations

N = 40


def test_a_perfect_metric_ranks_every_simulated_system_right():
    # consistent responses score 1, inconsistent 0: system score = 1 - level exactly, so rho = 1 every time
    rho = system_corr_bootstrap({"m": (np.ones(N), np.zeros(N))}, n_boot=50, n_draw=100)["m"]
    assert rho.shape == (50,) and np.allclose(rho, 1.0)


def test_a_reversed_metric_gives_minus_one_and_a_blind_one_zero():
    rho = system_corr_bootstrap({"rev": (np.zeros(N), np.ones(N)), "blind": (np.full(N, .3), np.full(N, .3))},
                                n_boot=20, n_draw=100)
    assert np.allclose(rho["rev"], -1.0)
    assert np.allclose(rho["blind"], 0.0)        # every system ties: defined as 0, never NaN


def test_values_are_five_point_spearman_steps_and_the_draws_are_seeded():
    rng = np.random.default_rng(1)
    g, b = rng.random(N), rng.random(N) * 0.9
    a = system_corr_bootstrap({"m": (g, b)}, n_boot=200, n_draw=60, seed=3)["m"]
    again = system_corr_bootstrap({"m": (g, b)}, n_boot=200, n_draw=60, seed=3)["m"]
    assert np.array_equal(a, again)
    assert np.allclose(np.round(a * 10), a * 10)   # 1 - sum(d^2)/20 with an even sum: multiples of 0.1
    assert -1 <= a.min() and a.max() <= 1


def test_every_metric_sees_the_same_draws():
    rng = np.random.default_rng(2)
    g, b = rng.random(N), rng.random(N)
    both = system_corr_bootstrap({"x": (g, b), "y": (g, b)}, n_boot=30, n_draw=50, seed=0)
    assert np.array_equal(both["x"], both["y"])


@pytest.mark.parametrize("kw, msg", [
    ({"levels": (0.1, 0.2)}, "at least 3"),
    ({"levels": (0.0, 0.1, 0.2)}, "in \\(0, 1\\)"),
    ({"n_boot": 0}, "positive"),
])
def test_bad_settings_are_refused(kw, msg):
    with pytest.raises(ValueError, match=msg):
        system_corr_bootstrap({"m": (np.ones(N), np.zeros(N))}, **kw)


def test_bad_arrays_are_refused():
    with pytest.raises(ValueError, match="same number"):
        system_corr_bootstrap({"m": (np.ones(N), np.zeros(N - 1))})
    with pytest.raises(ValueError, match="NaN"):
        system_corr_bootstrap({"m": (np.r_[np.nan, np.ones(N - 1)], np.zeros(N))})


def test_the_paper_levels():
    assert Q2_T4_LEVELS == (0.05, 0.10, 0.15, 0.20, 0.25)


def test_usr_correlations_by_hand():
    h, s = [0, 1, 2, 3], [0, 1, 2, 3]
    res = usr_correlations(h, s, covered=[1, 1, 1, 0])
    assert res[("spearman", "covered")][0] == pytest.approx(1.0) and res[("spearman", "covered")][2] == 3
    # zero-filled: y = [0, 1, 2, 0]; cov(x, y) = 0.5, var sums 5 and 2.75 -> r = 0.5 / sqrt(13.75)
    assert res[("pearson", "zero_filled")][0] == pytest.approx(0.5 / np.sqrt(13.75))
    assert res[("pearson", "zero_filled")][2] == 4
    every = usr_correlations(h, [3, 2, 1, 0])
    assert every[("spearman", "covered")][0] == pytest.approx(-1.0)


def test_usr_correlations_refuse_bad_input():
    with pytest.raises(ValueError, match="length"):
        usr_correlations([0, 1, 2], [0, 1])
    with pytest.raises(ValueError, match="NaN"):
        usr_correlations([0, 1, np.nan, 2], [0, 1, 2, 3])
    with pytest.raises(ValueError):
        usr_correlations([0, 1, 2, 3], [0, 1, 2, 3], covered=[1, 1, 0, 0])   # two covered pairs only


def test_qa_dev_curve_from_a_record():
    from tfc.book.chapters.qags import qa_dev_curve

    rec = {"dev_curve": [
        {"step": 350, "examples": 5600, "heldout": {"f1": 0.5, "no_answer_accuracy": 0.9,
                                                     "by_kind_f1": {"cross": 0.4, "contrast": 0.25}},
         "xquad": {"f1": 0.3, "exact_match": 0.2}},
        {"step": 700, "examples": 11200, "heldout": {"f1": 0.75, "no_answer_accuracy": None, "by_kind_f1": {}},
         "xquad": {"f1": 0.5, "exact_match": 0.375}}]}
    c = qa_dev_curve(rec)
    assert c["step"].tolist() == [350, 700] and c["cross_f1"].iloc[0] == pytest.approx(40.0)
    assert c["xquad_em"].tolist() == pytest.approx([20.0, 37.5]) and np.isnan(c["cross_f1"].iloc[1])
    assert np.isnan(c["no_answer_acc"].iloc[1])
    assert qa_dev_curve({}).empty and list(qa_dev_curve({}).columns)[:2] == ["step", "examples"]


def test_qa_plateau_finds_where_the_curve_stays_near_its_best():
    from tfc.book.chapters import qags as T

    def pt(step, f1, xq):
        return {"step": step, "heldout": {"f1": f1}, "xquad": {"f1": xq}}

    # held-out: 80, 89.5, 88.9, 90, 89.6 -> best 90; 88.9 is more than a point below, so the plateau starts at 400;
    # XQuAD: 30, 40, 39.5, 39.2, 40.1 -> within a point of 40.1 from 200 on
    rec = {"steps": 500, "epochs_seen": 2.5, "heldout_eval": {"by_kind": {"cross": {"f1": 0.7125}}},
           "dev_curve": [pt(100, .80, .30), pt(200, .895, .40), pt(300, .889, .395), pt(400, .90, .392),
                         pt(500, .896, .401)]}
    got = T.qa_plateau(rec)
    assert (got["heldout_from"], got["xquad_from"]) == (400, 200)
    assert got["heldout_best"] == pytest.approx(90.0) and got["xquad_best"] == pytest.approx(40.1)
    assert T.qa_plateau(rec, within=2.0)["heldout_from"] == 200
    assert all(np.isnan(v) for v in T.qa_plateau({"steps": 1}).values())
    # a run without the XQuAD dev set: its NaN readings are skipped, not read as a curve
    rec["dev_curve"] = [{"step": p["step"], "heldout": p["heldout"]} for p in rec["dev_curve"]]
    got = T.qa_plateau(rec)
    assert got["heldout_from"] == 400 and np.isnan(got["xquad_best"]) and np.isnan(got["xquad_from"])


def test_qa_curves_figure_wraps_rows(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from tfc import models
    from tfc.book.chapters import qags as T

    def missing(name):
        raise FileNotFoundError(name)

    monkeypatch.setattr(models, "training_record", missing)
    fig = T.qa_curves_figure(["tfc/a", "tfc/b", "tfc/c"])
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(fig.axes) == 4 and [ax.get_title() for ax in visible] == [f"tfc/{n}: no record" for n in "abc"]


def test_qags_variant_table_by_hand(monkeypatch):
    """Pearson with the human scores per set, self-consistency pooled over both sets, a partial cache -> NaN."""
    from tfc.book.chapters import qags as T

    human = {"qags_cnndm": pd.Series([0.0, 0.5, 1.0], index=["c0", "c1", "c2"]),
             "qags_xsum": pd.Series([1.0, 0.0, 0.5], index=["x0", "x1", "x2"])}

    class Sc:
        def __init__(self, sig, scores):
            self.signature, self.scores = sig, scores

    def cached(sc, ds):
        ids = list(human[ds].index)
        return pd.DataFrame({"id": ids, "score": sc.scores[ds], "aux_n_generated": [4, 4, 2],
                             "aux_n_self_consistent": [2, 1, 1]})

    monkeypatch.setattr(T, "cached", cached)
    monkeypatch.setattr(T, "human_scores", lambda ds: human[ds])
    good = Sc("qags.a", {"qags_cnndm": [0.1, 0.2, 0.3], "qags_xsum": [0.3, 0.1, 0.2]})      # r = 1 and r = 1
    part = Sc("qags.b", {"qags_cnndm": [0.3, 0.2, 0.1], "qags_xsum": [0.1, np.nan, 0.2]})   # r = -1; partial
    t = T.qags_variant_table({"A": good, "B": part}, quality={"A": 55.0}).set_index("variant")
    assert t.loc["A", "qags_cnndm_pearson"] == pytest.approx(100) and t.loc["A", "qags_xsum_pearson"] == pytest.approx(100)
    assert t.loc["A", "self_consistent"] == pytest.approx(100 * 8 / 20) and t.loc["A", "quality"] == 55.0
    assert t.loc["A", "questions_written"] == 20 and t.loc["B", "questions_written"] == 10
    assert t.loc["B", "qags_cnndm_pearson"] == pytest.approx(-100) and np.isnan(t.loc["B", "qags_xsum_pearson"])
    assert t.loc["B", "qags_xsum_rows"] == 2 and t.loc["B", "self_consistent"] == pytest.approx(40.0)
    assert np.isnan(t.loc["B", "quality"])


def test_stage_table_by_hand():
    from tfc.book.qgqa_scoring import stage_table

    runs = pd.DataFrame([
        {"scorer": "q2", "dataset": "a", "computed_rows": 100, "wall_seconds": 50.0,
         "stage_seconds": {"qg": 10.0, "qa_grounding": 25.0}},
        {"scorer": "q2", "dataset": "b", "computed_rows": 50, "wall_seconds": 25.0,
         "stage_seconds": {"qg": 5.0, "compare": 5.0}},
        {"scorer": "q2", "dataset": "old", "computed_rows": 10, "wall_seconds": 9.0, "stage_seconds": np.nan},
        {"scorer": "qags", "dataset": "c", "computed_rows": 10, "wall_seconds": 9.0, "stage_seconds": {"qg": 1.0}}])
    t = stage_table(runs, "q2")
    assert list(t.index) == ["a", "b", "all"] and list(t.columns) == ["responses", "qg", "qa_grounding", "compare",
                                                                     "pipeline"]
    assert t.loc["a", "qg"] == 10.0 and t.loc["a", "qa_grounding"] == 4.0 and np.isnan(t.loc["a", "compare"])
    assert t.loc["all", "qg"] == 10.0 and t.loc["all", "responses"] == 150 and t.loc["all", "pipeline"] == 2.0
    assert stage_table(runs.drop(columns="stage_seconds"), "q2").empty and stage_table(runs, "nli").empty


def test_q2_true_auc_by_hand_and_partial_sets_left_out(monkeypatch):
    from tfc.book.chapters import q2 as T

    lab = [1, 1, 0, 0]
    frames = {
        ("q2", "a"): pd.DataFrame({"id": list("wxyz"), "label": lab, "score": [0.9, 0.0, 0.2, 0.1],
                                   "aux_n_valid": [2, 0, 1, 1], "aux_n_candidates": [3, 1, 2, 2],
                                   "aux_f1_only": [0.9, np.nan, 0.2, 0.1]}),
        ("true", "a"): pd.DataFrame({"id": list("wxyz"), "label": lab, "score": [0.9, 0.5, 0.2, 0.1]}),
        ("f1", "a"): pd.DataFrame({"id": list("wxyz"), "label": lab, "score": [0.1, 0.9, 0.2, 0.3]}),
        ("q2", "b"): pd.DataFrame({"id": list("wxyz"), "label": lab, "score": [0.9, np.nan, 0.2, np.nan],
                                   "aux_n_valid": [1, np.nan, 1, np.nan], "aux_n_candidates": [1, np.nan, 1, np.nan]}),
    }

    class Sc:
        def __init__(self, name):
            self.name, self.signature = name, f"{name}.sig"

    monkeypatch.setattr(T, "cached", lambda sc, ds, **kw: frames[(sc.name, ds)].copy())
    monkeypatch.setattr("tfc.scorers.get", lambda name, **kw: Sc(name))
    frames[("q2", "c")] = frames[("q2", "a")].iloc[:0]   # no cached row: a set not scored at all
    t = T.q2_true_auc(Sc("q2"), ["a", "b", "c"], n_boot=50, true_scorer=Sc("true"))
    assert t["dataset"].tolist() == ["a"] and t.attrs["partial"] == ["b"] and t.attrs["missing"] == ["c"]
    r = t.iloc[0]
    # 0-filled Q²: positives .9, 0 vs negatives .2, .1 -> 2 of 4 pairs; TRUE variant .9, .5 vs .2, .1 -> 4 of 4
    assert r["q2_nli"] == pytest.approx(50.0) and r["true_q2"] == pytest.approx(100.0)
    assert r["q2_nli_covered"] == pytest.approx(100.0) and r["coverage"] == pytest.approx(75.0)
    # token F1: positives .1, .9 vs negatives .2, .3 -> 2 of 4 pairs
    assert r["token_f1"] == pytest.approx(50.0) and r["diff_vs_f1"] == pytest.approx(0.0)
    # the F1 form (0-filled): positives .9, 0 vs negatives .2, .1 -> 2 of 4 pairs, the same here; bootstrapped instead
    f = T.q2_true_auc(Sc("q2"), ["a"], n_boot=50, form="f1").iloc[0]
    assert f["form"] == "f1" and f["q2_f1"] == pytest.approx(50.0) and f["diff_vs_f1"] == pytest.approx(0.0)
    frames[("q2", "a")]["aux_f1_only"] = [0.9, np.nan, 0.95, 0.1]     # now one negative outranks a positive F1 form
    f = T.q2_true_auc(Sc("q2"), ["a"], n_boot=50, form="f1").iloc[0]
    assert f["q2_f1"] == pytest.approx(25.0) and f["diff_vs_f1"] == pytest.approx(-25.0) and r["form"] == "nli"
    with pytest.raises(ValueError, match="form"):
        T.q2_true_auc(Sc("q2"), ["a"], form="em")
    # no set scored at all: an empty table with the columns (the chapters select them), not a column-less frame
    empty = T.q2_true_auc(Sc("q2"), ["c"], n_boot=50)
    assert empty.empty and list(empty.columns) == T.Q2_TRUE_AUC_COLUMNS and empty.attrs["missing"] == ["c"]
    assert list(t.columns) == T.Q2_TRUE_AUC_COLUMNS


def test_stage_table_leaves_out_stages_that_took_no_time():
    from tfc.book.qgqa_scoring import stage_table

    runs = pd.DataFrame([{"scorer": "q2", "dataset": "a", "computed_rows": 10, "wall_seconds": 5.0,
                          "stage_seconds": {"qg": 1.0, "no_questions": 0.0001}}])
    assert list(stage_table(runs, "q2").columns) == ["responses", "qg", "pipeline"]


def test_nli_sweep_table_and_summary():
    from tfc.book.chapters import q2 as T

    rec = {"rows": {"begin_test": 1500, "loo_anli": 600}, "margin": 0.5, "current": "v8",
           "auc": {"v8": {"begin_test": 77.0, "loo_anli": 97.0, "mean": 87.0},
                   T.F1_FORM: {"begin_test": 81.0, "loo_anli": 99.4, "mean": 90.2}}, "chosen": T.F1_FORM}
    t = T.nli_sweep_table(rec)
    assert t["NLI step"].tolist() == ["v8", T.F1_FORM] and t["chosen"].tolist() == [False, True]
    assert t["current"].tolist() == [True, False] and t.loc[1, "mean"] == 90.2
    got = T.sweep_summary(rec)
    assert (got["current"], got["current_auc"], got["best"], got["best_auc"]) == ("v8", 87.0, T.F1_FORM, 90.2)
    assert got["gain"] == pytest.approx(3.2) and got["chosen"] == T.F1_FORM
    rec["chosen"] = "v8"
    assert T.sweep_summary(rec)["chosen"] == "v8"
    rec["auc"]["v8"]["mean"] = 95.0
    got = T.sweep_summary(rec)
    assert (got["best"], got["gain"], got["chosen"]) == ("v8", 0.0, "v8")
    assert T.nli_sweep_table(None).empty and T.sweep_summary(None)["chosen"] == "n/a"
    assert np.isnan(T.sweep_summary(None)["gain"])
    # the option sweep's record reads the same way, its candidates named "options"
    opt = {**rec, "current": "as run", "chosen": "as run",
           "auc": {"as run": {"mean": 83.46}, "+filter personal": {"mean": 83.55}}}
    assert T.nli_sweep_table(opt, what="options").columns[0] == "options"
    got = T.sweep_summary(opt)
    assert (got["current_auc"], got["best"], got["best_auc"]) == (83.46, "+filter personal", 83.55)
    assert got["gain"] == pytest.approx(0.09)


def test_sweep_labels_rename_recorded_candidates_by_their_options():
    from tfc.book.chapters import q2 as T

    rec = {"current": "a", "chosen": "old name", "margin": 0.5,
           "options": {"a": {"candidate_rule": "q2-code"}, "old name": {"candidate_rule": "tfc"},
                       "kinds": {"candidate_kinds": ["ents"]}},
           "auc": {"a": {"mean": 80.0}, "old name": {"mean": 81.0}, "kinds": {"mean": 70.0}}}
    labels = T.sweep_labels(rec, {"the authors' rule": {"candidate_rule": "q2-code"}, "tfc's rule": {"candidate_rule": "tfc"},
                                  "entities only": {"candidate_kinds": ["ents"]}})
    assert labels == {"a": "the authors' rule", "old name": "tfc's rule", "kinds": "entities only"}
    t = T.nli_sweep_table(rec, what="rule", labels=labels)
    assert t["rule"].tolist() == ["the authors' rule", "tfc's rule", "entities only"]
    assert t["chosen"].tolist() == [False, True, False]
    got = T.sweep_summary(rec, labels)
    assert (got["current"], got["best"], got["chosen"]) == ("the authors' rule", "tfc's rule", "tfc's rule")
    assert T.sweep_labels(None, {}) == {} and T.sweep_labels({"auc": {}}, {"x": {}}) == {}


def test_run_shift_pairs_the_sets_in_one_form():
    import pandas as pd

    from tfc.book.chapters import q2 as T

    a = pd.DataFrame({"dataset": ["begin", "q2", "frank"], "q2_f1": [80.0, 66.2, 70.0], "q2_nli": [1, 2, 3],
                      "form": "f1"})
    b = pd.DataFrame({"dataset": ["q2", "begin"], "q2_f1": [67.0, 79.6], "q2_nli": [4, 5], "form": "f1"})
    shift = T.run_shift({"v3": a, "v4": b})
    assert shift.index.tolist() == ["begin", "q2"] and list(shift.columns) == ["v3", "v4", "Δ v4"]
    assert shift["v3"].tolist() == [80.0, 66.2] and shift["v4"].tolist() == [79.6, 67.0]
    assert shift["Δ v4"].tolist() == pytest.approx([-0.4, 0.8])
    nli = T.run_shift({"v3": a.assign(form="nli"), "v4": b.assign(form="nli")})
    assert nli["v4"].tolist() == [5, 4]
    with pytest.raises(ValueError, match="different forms"):
        T.run_shift({"v3": a, "v4": b.assign(form="nli")})
    assert T.run_shift({"v3": a, "v4": b.iloc[:0]}).empty


def test_speaker_candidate_share_counts_responses_per_label():
    import pandas as pd

    from tfc.book.chapters import q2 as T

    frame = pd.DataFrame({"grounding": ["k"] * 4, "label": [1, 1, 0, 0],
                          "generated": ["Paris is the capital of France.", "I think Paris is big.",
                                        "i love paris too !", "well i do n't know , i guess ."]})
    t = T.speaker_candidate_share({"dev": frame})
    share = t.set_index("label")["share with the candidate 'i'"]
    assert share["supported"] == 0.5 and share["unsupported"] == 1.0
    assert t["responses"].tolist() == [2, 2]
    # a frame without one of the labels gives NaN for it, not a division error
    assert pd.isna(T.speaker_candidate_share({"dev": frame.iloc[:2]}).set_index("label").iloc[:, -1]["unsupported"])


def test_outcome_table_shares_per_class_and_kind():
    from tfc.book.chapters import q2 as T
    from tfc.runs.qgqa import OUTCOMES

    rec = {"counts": [{"label": 1, "kind": "another pronoun", "outcome": "different answer", "questions": 3},
                      {"label": 1, "kind": "another pronoun", "outcome": "same answer", "questions": 1},
                      {"label": 1, "kind": "entity or noun phrase", "outcome": "same answer", "questions": 6},
                      {"label": 0, "kind": "entity or noun phrase", "outcome": "no answer on the knowledge",
                       "questions": 2}]}
    t = T.outcome_table(rec).set_index(["class", "candidate"])
    assert t.loc[("consistent", "another pronoun"), "questions"] == 4
    assert t.loc[("consistent", "another pronoun"), "% of the class's questions"] == 40.0
    assert t.loc[("consistent", "another pronoun"), "different answer"] == 75.0
    assert t.loc[("inconsistent", "entity or noun phrase"), "% of the class's questions"] == 100.0
    assert t.loc[("inconsistent", "entity or noun phrase"), "no answer on the knowledge"] == 100.0
    assert list(t.columns[-4:]) == list(OUTCOMES)
    assert list(T.outcome_table(None).columns[:2]) == ["class", "candidate"]


def test_question_outcome_and_candidate_kind():
    from tfc.runs.qgqa import candidate_kind, question_outcome
    from tfc.scorers.qgqa import parse

    assert question_outcome(0.0, "") == "no answer on the knowledge"
    assert question_outcome(1.0, "Paris") == "same answer"
    assert question_outcome(0.5, "the Paris trip") == "partly the same"
    assert question_outcome(0.0, "Rome") == "different answer"
    assert [candidate_kind(d) for d in parse(["i", "I", "they", "them", "the Paris trip", "Obama"])] == [
        "the speaker 'i'", "the speaker 'i'", "another pronoun", "another pronoun", "entity or noun phrase",
        "entity or noun phrase"]


def test_rerun_drift_table_by_hand(monkeypatch):
    """Same share, largest |Δ| and the metric per reader: Pearson with the human scores for QAGS, AUC for Q²'s F1
    form (no question = 0); rows only one cache holds are left out; a set the rerun has not scored is NaN."""
    from tfc.book.chapters import qags as T

    human = pd.Series([0.0, 0.5, 1.0, 0.2], index=["c0", "c1", "c2", "c3"])
    frames = {
        ("A", "qags_cnndm"): pd.DataFrame({"id": list(human.index), "label": [0, 1, 1, 0], "score": [0.1, 0.2, 0.3, 0.9]}),
        ("B", "qags_cnndm"): pd.DataFrame({"id": list(human.index), "label": [0, 1, 1, 0], "score": [0.1, 0.2, 0.35, np.nan]}),
        # Q²'s F1 form: labels 0, 0, 1, 1; committed 0.1, NaN(=0), 0.8, 0.05 -> AUC 3/4; rerun 0.1, 0, 0.8, 0.9 -> 1
        ("C", "q2"): pd.DataFrame({"id": list("abcd"), "label": [0, 0, 1, 1], "score": [1.0] * 4,
                                   "aux_f1_only": [0.1, np.nan, 0.8, 0.05]}),
        ("D", "q2"): pd.DataFrame({"id": list("abcd"), "label": [0, 0, 1, 1], "score": [1.0] * 4,
                                   "aux_f1_only": [0.1, 0.0, 0.8, 0.9]}),
        ("E", "q2"): pd.DataFrame({"id": list("abcd"), "label": [0, 0, 1, 1], "score": [np.nan] * 4}),
    }

    class Sc:
        def __init__(self, sig):
            self.signature = sig

    monkeypatch.setattr(T, "cached", lambda sc, ds: frames[(sc.signature, ds)])
    monkeypatch.setattr(T, "human_scores", lambda ds: human)
    t = T.rerun_drift_table([("QAGS", "qags_cnndm", Sc("A"), Sc("B"), "score"),
                             ("Q² (F1 form)", "q2", Sc("C"), Sc("D"), "aux_f1_only"),
                             ("Q² (F1 form)", "q2", Sc("C"), Sc("E"), "aux_f1_only")])
    qa = t.iloc[0]
    assert qa["rows"] == 3 and qa["same %"] == pytest.approx(200 / 3) and qa["max |Δ score|"] == pytest.approx(0.05)
    assert qa["committed reader"] == pytest.approx(100) and qa["rerun"] == pytest.approx(100 * np.corrcoef(
        [0.1, 0.2, 0.35], [0.0, 0.5, 1.0])[0, 1]) and qa["metric"] == "Pearson × 100"
    q2 = t.iloc[1]
    assert (q2["rows"], q2["same %"], q2["max |Δ score|"]) == (4, 75.0, pytest.approx(0.85))
    assert (q2["committed reader"], q2["rerun"], q2["Δ"]) == (pytest.approx(75.0), pytest.approx(100.0), pytest.approx(25.0))
    assert t.iloc[2]["rows"] == 0 and np.isnan(t.iloc[2]["Δ"])


def test_rerun_summary_reads_the_curves_identities_and_drift(monkeypatch):
    from tfc import models
    from tfc.book.chapters import qags as T

    def pt(step, f1, xq):
        return {"step": step, "heldout": {"f1": f1}, "xquad": {"f1": xq}}

    recs = {"tfc/a": {"steps": 200, "dev_curve": [pt(100, .8, .3), pt(200, .9, .4)], "mix": {"sha256": "ab" * 32}},
            "tfc/b": {"steps": 200, "train_seconds": 1800.0, "examples_per_second": 12.44, "mix": {"sha256": "ab" * 32},
                      "dev_curve": [pt(100, .8, .3), pt(200, .9, .4)]}}

    def record(name):
        if name not in recs:
            raise FileNotFoundError(name)
        return recs[name]

    monkeypatch.setattr(models, "training_record", record)
    monkeypatch.setattr(models, "committed_identity", lambda name: {"identity": "sha256:aaa"})
    monkeypatch.setattr(models, "identity", lambda name: "sha256:bbb")
    drift = pd.DataFrame({"rows": [10, 30], "same %": [100.0, 50.0], "max |Δ score|": [0.0, 0.25], "Δ": [0.0, -0.5]})
    got = T.rerun_summary(drift, "tfc/a", "tfc/b")
    assert (got["steps"], got["minutes"], got["examples_per_second"]) == (200, 30.0, 12.44)
    assert got["same_qa_set"] is True and (got["curve_points"], got["curve_gap"]) == (2, 0.0)
    assert (got["identity"], got["committed_identity"], got["same_identity"]) == ("sha256:bbb", "sha256:aaa", False)
    assert (got["rows"], got["sets"]) == (40, 2) and got["same_pct"] == pytest.approx(62.5)
    assert got["max_score_delta"] == pytest.approx(0.25) and got["max_metric_delta"] == pytest.approx(0.5)
    same = drift.assign(**{"max |Δ score|": 0.0, "same %": 100.0, "Δ": 0.0})
    got = T.rerun_summary(same, "tfc/a", "tfc/b")
    assert (got["same_pct"], got["max_score_delta"], got["max_metric_delta"]) == (100.0, 0.0, 0.0)
    recs["tfc/b"]["dev_curve"][1] = pt(200, .905, .4)
    got = T.rerun_summary(drift.iloc[:0], "tfc/a", "tfc/b")
    assert got["curve_gap"] == pytest.approx(0.5) and got["curve_points"] == 2
    assert np.isnan(got["rows"]) and np.isnan(got["same_pct"])      # no scores compared yet
    missing = T.rerun_summary(drift, "tfc/a", "tfc/missing")
    assert np.isnan(missing["steps"]) and missing["same_identity"] is None
    recs["tfc/b"]["mix"] = {"sha256": "cd" * 32}
    assert T.rerun_summary(drift, "tfc/a", "tfc/b")["same_qa_set"] is False
    del recs["tfc/b"]["mix"]
    assert T.rerun_summary(drift, "tfc/a", "tfc/b")["same_qa_set"] is None


def test_score_robustness_hand_computed():
    """Consistent responses score 1, inconsistent 0: a system with share c inconsistent scores exactly
    1 − round(c · n_draw) / n_draw in every repeat, so its band has no width."""
    from tfc.book.chapters import q2 as T

    ok = np.array([True, True, False, False, False])
    out = T.score_robustness({"m": ok.astype(float)}, ok, levels=(0.0, 0.25, 1.0), n_boot=50, n_draw=400)
    assert list(out["level"]) == [0.0, 0.25, 1.0]
    assert np.allclose(out["mean"], [1.0, 0.75, 0.0]) and np.allclose(out["ci_low"], out["ci_high"])
    # n_draw 3 at c = 0.5: round(1.5) = 2 inconsistent of 3
    assert T.score_robustness({"m": ok.astype(float)}, ok, levels=(0.5,), n_boot=5, n_draw=3)["mean"].iloc[0] == \
        pytest.approx(1 / 3)


def test_score_robustness_means_and_shared_draws():
    """Consistent scores 0.2 and 0.6 (mean 0.4), inconsistent 0: at c = 0.5 the system score averages 0.2. A
    second metric equal to the first plus 1 sees the same draws, so its scores are exactly 1 higher."""
    from tfc.book.chapters import q2 as T

    ok = np.array([True, True, False])
    s = np.array([0.2, 0.6, 0.0])
    out = T.score_robustness({"a": s, "b": s + 1}, ok, levels=(0.5,), n_boot=4000, n_draw=100, seed=3)
    a, b = out.set_index("metric").loc["a"], out.set_index("metric").loc["b"]
    assert a["mean"] == pytest.approx(0.2, abs=0.005)
    assert b["mean"] - a["mean"] == pytest.approx(1.0) and b["ci_low"] - a["ci_low"] == pytest.approx(1.0)
    assert a["ci_low"] < 0.2 < a["ci_high"]
    again = T.score_robustness({"a": s, "b": s + 1}, ok, levels=(0.5,), n_boot=4000, n_draw=100, seed=3)
    pd.testing.assert_frame_equal(out, again)


@pytest.mark.parametrize("kwargs, match", [
    ({"metrics": {"m": [0.1, np.nan, 0.3]}}, "NaN"),
    ({"metrics": {"m": [0.1, 0.2]}}, "need 3 scores"),
    ({"consistent": [True, True, True]}, "both consistent and inconsistent"),
    ({"levels": (0.0, 1.5)}, r"levels must be shares in \[0, 1\]"),
    ({"n_boot": 0}, "must be positive"),
])
def test_score_robustness_refuses_bad_input(kwargs, match):
    from tfc.book.chapters import q2 as T

    args = {"metrics": {"m": [0.1, 0.2, 0.3]}, "consistent": [True, False, True], "levels": (0.0, 1.0),
            "n_boot": 5, **kwargs}
    with pytest.raises(ValueError, match=match):
        T.score_robustness(**args)


def test_robustness_summary_and_text_by_hand():
    from tfc.book.chapters import q2 as T

    curve = pd.DataFrame({"metric": ["q", "q", "o", "o"], "level": [1.0, 0.0, 0.0, 1.0],
                          "mean": [0.2, 0.6, 0.5, 0.4], "ci_low": [0.1, 0.5, 0.48, 0.38],
                          "ci_high": [0.3, 0.7, 0.52, 0.42]})
    s = T.robustness_summary(curve)
    assert s.loc["q", "drop"] == pytest.approx(0.4) and s.loc["q", "mean 95% interval width"] == pytest.approx(0.2)
    assert s.loc["q", "drop / width"] == pytest.approx(2.0) and s.loc["o", "drop / width"] == pytest.approx(2.5)
    assert s.loc["o", "drop"] == pytest.approx(0.1) and s["drop / width"].idxmax() == "o"
    fig = T.robustness_figure({"Figure 4": curve, "Figure 5": curve})
    assert len(fig.axes) == 4


def test_figure_levels_are_the_papers():
    from tfc.book.chapters import q2 as T

    assert T.Q2_F4_LEVELS == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    assert T.Q2_F5_LEVELS == (0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 1.0)
