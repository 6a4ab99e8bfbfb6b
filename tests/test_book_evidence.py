"""The evidence helpers behind the ledger's miss register: hand-computed values on tiny frames."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tfc.book import reference


def test_missing_rows_auc_range_hand_computed(monkeypatch):
    """pos 0.9, 0.3 against neg 0.8, 0.1: AUC 3/4. Two more positives scored lowest: 3/8; highest: 7/8."""
    from tfc.book.chapters import true as T

    monkeypatch.setattr(reference, "value", lambda table, row, col: {"f1": 50.0, "bleu4": 90.0}[col])
    f = pd.DataFrame({"label": [1, 0, 1, 0], "score": [0.9, 0.8, 0.3, 0.1]})
    other = pd.concat([f.assign(dataset="mnbm"), f.assign(dataset="frank", label=[0, 1, 0, 1])])
    out = T.missing_rows_auc_range({"f1": f, "bleu4": other}, "mnbm", 2, 1,
                                   {"f1": ("TRUE-T3", "f1"), "bleu4": ("TRUE-T9", "bleu4")}).set_index("metric")
    for m in ("f1", "bleu4"):                   # the frame's other dataset is left out
        assert out.loc[m, "ours"] == 75.0 and out.loc[m, "n"] == 4
        assert (out.loc[m, "lowest with them"], out.loc[m, "highest with them"]) == (37.5, 87.5)
    assert out.loc["f1", "paper in range"] and not out.loc["bleu4", "paper in range"]
    missing_neg = T.missing_rows_auc_range({"f1": f}, "mnbm", 2, 0, {"f1": ("TRUE-T3", "f1")}).iloc[0]
    assert (missing_neg["lowest with them"], missing_neg["highest with them"]) == (37.5, 87.5)
    for n, label in ((0, 1), (2, 2)):
        with pytest.raises(ValueError, match="n_missing"):
            T.missing_rows_auc_range({"f1": f}, "mnbm", n, label, {"f1": ("TRUE-T3", "f1")})


def test_f1_normalisations_differ_only_in_their_one_step():
    from tfc.book.chapters import data as st

    n = st.F1_NORMALISATIONS
    assert n["SQuAD (preset)"]("The cat's toy, a ball!") == ["cats", "toy", "ball"]
    assert n["articles kept"]("The cat's toy, a ball!") == ["the", "cats", "toy", "a", "ball"]
    assert n["punctuation to space"]("The cat's toy, a ball!") == ["cat", "s", "toy", "ball"]
    assert n["case kept"]("The cat's toy, a ball!") == ["The", "cats", "toy", "ball"]
    assert n["white space, lower-cased"]("The cat's toy, a ball!") == ["the", "cat's", "toy,", "a", "ball!"]
    # T5's TriviaQA rule turns typographic quotes into spaces too; "Unicode marks" drops any non-word mark
    assert n["T5's TriviaQA rule"]("The cat’s toy – a ball!") == ["cat", "s", "toy", "–", "ball"]
    assert n["SQuAD (preset)"]("The cat’s toy – a ball!") == ["cat’s", "toy", "–", "ball"]
    assert n["Unicode marks dropped"]("The cat’s toy – a ball!") == ["cats", "toy", "ball"]
    assert n["Treebank tokens"]("The cat's toy, a ball!") == ["cat", "'s", "toy", "ball"]


def test_q2_t9_implied_sums_reads_the_printed_mean_backwards(monkeypatch):
    """Two inconsistent responses of 5 + 3 characters and 3 + 2 tokens; a printed mean of 4.00 characters
    over two responses allows exactly 8 (7.99 to 8.01), a printed 2.51 tokens allows 5.01 to 5.03: none."""
    from tfc.book.chapters import data as st

    df = pd.DataFrame({"split": ["dodeca_inconsistent"] * 2 + ["dodeca_consistent", "memnet_consistent"],
                       "label": [0, 0, 1, 1], "generated": ["a b c", "d e", "f", "g h i j"]})
    df["meta"] = [{"model": sp.split("_")[0]} for sp in df["split"]]
    monkeypatch.setattr(st.D, "load", lambda name: df)
    paper = {("inconsistent", "avg_chars"): 4.0, ("inconsistent", "avg_tokens"): 2.51,
             ("consistent", "avg_chars"): 1.0, ("consistent", "avg_tokens"): 1.5}
    monkeypatch.setattr(reference, "value", lambda table, row, col: paper[(row, col)])
    out = st.q2_t9_implied_sums().set_index(["row", "column"])
    assert out.loc[("inconsistent", "avg_chars"), "ours total"] == 8
    assert out.loc[("inconsistent", "avg_chars"), "difference (paper − ours)"] == "+0"
    assert out.loc[("inconsistent", "avg_tokens"), "spaCy tokens total"] == 5
    assert out.loc[("inconsistent", "avg_tokens"), "paper total (from its mean)"] == "none"   # no integer fits
    assert out.loc[("inconsistent", "avg_tokens"), "difference (paper − ours)"] == "n/a"
    assert out.loc[("consistent", "avg_chars"), "n"] == 1                                     # dodeca only
    assert np.isnan(out.loc[("consistent", "avg_chars"), "spaCy tokens total"])
    assert out.loc[("consistent", "avg_chars"), "paper total (from its mean)"] == "1"


def test_q2_paper_rows_in_true_counts_pairs_and_labels(monkeypatch):
    """Three released rows: one in TRUE's set with its label, one there with the other label, one absent."""
    from tfc import data
    from tfc.book.chapters import q2 as T

    paper = pd.DataFrame({"grounding": ["k1", "k2", "k3"], "generated": ["r1", "r2", "r3"], "label": [1, 0, 1]})
    true = pd.DataFrame({"grounding": ["k1", "k2", "k2", "k9"], "generated": ["r1", "r2", "r2", "r9"],
                         "label": [1, 1, 1, 0]})
    monkeypatch.setattr(data, "load", lambda name: {"q2_paper": paper, "q2": true}[name])
    assert T.q2_paper_rows_in_true() == {"rows": 3, "in_true": 2, "same_label": 1}


def test_q2_t3_row_sets_compares_both_row_sets_per_cell(monkeypatch):
    """Q² Table 3 on the released files and on the cross-annotated rows: means per system and class, Δ on
    unrounded values, and which set is nearer the paper. The baselines are stubbed with the responses' lengths."""
    from tfc import data
    from tfc.book.chapters import q2 as T

    def frame(models, labels, lengths):
        return pd.DataFrame({"meta": [{"model": m} for m in models], "label": labels,
                             "grounding": ["k"] * len(models), "generated": ["x" * n for n in lengths]})

    files = frame(["dodeca", "dodeca", "memnet", "memnet"], [1, 0, 1, 0], [4, 2, 6, 1])
    cross = frame(["dodeca", "dodeca", "dodeca", "memnet", "memnet"], [1, 1, 0, 1, 0], [4, 5, 2, 6, 3])
    monkeypatch.setattr(data, "load", lambda name: {"q2_paper": files, "q2": cross}[name])
    monkeypatch.setattr(T, "overlap_baselines", lambda ds: {"bleu": (
        data.load(ds)["generated"].str.len().to_numpy(float), "stub")})
    pub = pd.DataFrame({"row": ["dodeca_consistent", "dodeca_inconsistent", "memnet_inconsistent", "memnet_random"],
                        "column": "bleu", "value": [4.4, 2.0, 2.9, 9.0], "flags": ""})
    monkeypatch.setattr(reference, "load", lambda table: pub)
    assert list(T.system_class(cross)) == ["dodeca_consistent", "dodeca_consistent", "dodeca_inconsistent",
                                           "memnet_consistent", "memnet_inconsistent"]
    t3 = T.q2_table3("q2").set_index("row")
    assert t3.loc["dodeca_consistent", "value"] == 4.5 and t3.loc["dodeca_consistent", "n"] == 2
    out = T.q2_t3_row_sets().set_index("row")
    assert sorted(out.index) == ["dodeca_consistent", "dodeca_inconsistent", "memnet_inconsistent"]
    assert out.loc["dodeca_consistent", "delta_files"] == pytest.approx(-0.4)   # 4 against 4.4
    assert out.loc["dodeca_consistent", "delta_cross"] == pytest.approx(0.1)    # 4.5 against 4.4
    assert out.loc["dodeca_consistent", "n_cross"] == 2 and out.loc["dodeca_consistent", "n_files"] == 1
    # dodeca_inconsistent: 2 on both sets (a tie is not nearer); memnet_inconsistent: 3 against 1, paper 2.9
    assert dict(out["cross_closer"]) == {"dodeca_consistent": True, "dodeca_inconsistent": False,
                                         "memnet_inconsistent": True}


def test_q2_class_counts_reads_labels_of_the_system(monkeypatch):
    from tfc.book.chapters import data as st

    df = pd.DataFrame({"meta": [{"model": m} for m in ("dodeca", "dodeca", "dodeca", "memnet")],
                       "label": [0, 1, 1, 0]})
    monkeypatch.setattr(st.D, "load", lambda name: df)
    assert st.q2_class_counts("q2") == "1 inconsistent and 2 consistent"
    assert st.q2_class_counts("q2", systems=("memnet",)) == "1 inconsistent and 0 consistent"


def test_word_count_rules_hand_counted(monkeypatch):
    """Two texts of 3 and 5 white-space tokens, a lone '--' in the first and a lone '.' in the second, against a
    paper row of 2 / 4 / 3.0 / 3.0: the letter-or-digit rule meets all four cells, the lone-period rule three."""
    from tfc.book import ledger
    from tfc.book.chapters import data as st

    df = pd.DataFrame({"grounding": ["a -- b", "c d . e f"]})
    monkeypatch.setattr(st.D, "load", lambda name: df)
    paper = {"min_len": 2.0, "max_len": 4.0, "median_len": 3.0, "avg_len": 3.0}
    monkeypatch.setattr(reference, "value", lambda table, row, col: paper[col])
    monkeypatch.setattr(ledger, "tolerance", lambda table: 0.5)
    out = st.word_count_rules(["x"]).set_index("rule")
    ws = out.loc["white-space words (counted)"]
    assert (ws["min_len"], ws["max_len"], ws["median_len"], ws["avg_len"]) == (3, 5, 4.0, 4.0) and ws["within"] == 0
    lone = out.loc["white-space words, a lone '.' not counted"]
    # min 3 against 2 is out; max equal; median and mean 3.5 against 3 sit at the tolerance, which counts as within
    assert (lone["min_len"], lone["max_len"], lone["median_len"], lone["within"]) == (3, 4, 3.5, 3)
    alnum = out.loc["tokens with a letter or digit"]
    assert (alnum["min_len"], alnum["max_len"], alnum["median_len"], alnum["within"]) == (2, 4, 3.0, 4)
    assert out.loc["TRUE Table 6", "lone_periods"] == 0.5


def test_f1_reading_aucs_and_span_text(monkeypatch):
    """Two readings on a toy set whose AUC the tokenisation decides. Lower-cased, both consistent pairs match in
    full (F1 1) and the inconsistent ones do not (2/3, 1/3): AUC 100. Case kept, the consistent pairs drop to 2/3
    and tie with the first inconsistent one: (0.5 + 1 + 0.5 + 1) / 4 = 75."""
    import tfc.book.reference as ref
    import tfc.data
    from tfc.book.chapters import data as st
    from tfc.book.chapters import true as T

    df = pd.DataFrame({"grounding": ["Paris is big", "Paris is big", "Rome is old", "Rome is old"],
                       "generated": ["paris is big", "Paris was big", "rome is old", "Rome was new"],
                       "label": [1, 0, 1, 0]})
    monkeypatch.setattr(tfc.data, "load", lambda name, sample=None, seed=0: df)
    monkeypatch.setattr(ref, "value", lambda table, row, col: 60.0)
    import tfc.scorers.lexical as lex

    monkeypatch.setattr(lex, "F1_READINGS", {"lower": st.F1_NORMALISATIONS["SQuAD (preset)"],
                                             "case kept": st.F1_NORMALISATIONS["case kept"]})
    t = T.f1_reading_aucs(["toy"])
    row = t.set_index("dataset").loc["toy"]
    assert row["lower"] == 100.0
    assert row["case kept"] == 75.0
    assert row["span"] == 25.0 and row["paper"] == 60.0
    assert T.span_text(t, "toy") == "spans 75.0 to 100.0, the paper 60.0"
    assert T.span_text(t, "other") == "is not scored here"


def _frank_tiny(monkeypatch):
    """Two CNN/DM and two XSum validation rows (TRUE's CSV), one XSum test row, two CNN/DM test rows."""
    from tfc.book.chapters import data as st
    from tfc.data import builders as B

    ours = pd.DataFrame({"meta": [{"hash": "c1"}, {"hash": "c2"}, {"hash": "1"}, {"hash": "2"}],
                         "grounding": [" ".join(["w"] * 10), " ".join(["w"] * 20), "x yz",
                                       "Share this with Email p q"],
                         "generated": ["s"] * 4})
    xs = pd.DataFrame({"hash": ["1", "2", "3"], "model": ["m"] * 3, "split": ["valid", "valid", "test"],
                       "document": ["x y\nz", "p q", "a\nb c d"], "summary": ["one two three", "a b", "u v w x y"]})
    ann = pd.DataFrame({"hash": ["c1", "c2", "1", "2", "3", "c3", "c3"],
                        "dataset": ["cnndm", "cnndm", "bbc", "bbc", "bbc", "cnndm", "cnndm"],
                        "split": ["valid"] * 4 + ["test"] * 3})
    monkeypatch.setattr(st.D, "load", lambda name: ours)
    monkeypatch.setattr(B, "frank_xsum_rows", lambda: xs.copy())
    monkeypatch.setattr(B, "frank_annotations", lambda: ann)
    monkeypatch.setattr(reference, "value", lambda table, row, col: {"min_len": 5.0, "median_len": 10.0,
                                                                    "avg_len": 10.0}[col])
    return st


def test_frank_full_set_hand_computed(monkeypatch):
    """Known words 10, 20 (CNN/DM), 2, 6 (XSum valid) and 3 + 4 (XSum test, with the bar): sum 45 over 5 of
    7 rows. TRUE's mean 10 needs (70 - 45) / 2 = 12.5 from the two CNN/DM test rows; its median 10 needs
    4 of 7 rows at 10 or more, 2 known, so both test rows (100%)."""
    st = _frank_tiny(monkeypatch)
    assert st.frank_joined_words("a\nb c d") == 3 and st.frank_joined_words("Kosaka.\nAnd it") == 2
    r = st.frank_full_set(n_boot=2000, seed=0)
    assert r["rule"] == {"articles": 2, "equal": 1, "prefix": 1, "other": 0}
    assert (r["n_all"], r["need_mean"], r["need_share"]) == (7, 12.5, 1.0)
    assert (r["valid_mean"], r["valid_share"]) == (15.0, 1.0)
    assert r["p_share"] == 1.0 and 0.45 < r["p_mean"] < 0.55        # one article drawn: 20 half the time
    assert (r["xsum_min_summary"], r["xsum_test_below_min"]) == (2, 1)
    t = r["table"]
    assert list(t["rows"]) == [2, 2, 1, 2] and list(t["articles"]) == [2, 2, 1, 1]
    assert t.iloc[2]["mean"] == 7.0 and np.isnan(t.iloc[3]["mean"])
    assert st.draws_text(0.0, 10_000) == "in none of the 10,000 draws"
    assert st.draws_text(0.0012, 10_000) == "in 12 of the 10,000 draws"


def test_frank_cnn_test_mix_hand_computed(monkeypatch):
    """Validation words 10, 20 (CNN/DM), 2, 6 (XSum), one-word summaries; FRANK-test has one CNN/DM article, drawn
    as c1 (mean 48 / 5 = 9.6, within 0.5 of TRUE's 10) or c2 (58 / 5 = 11.6); the median is 10 either way.
    The summaries stay at one word, so Table 7's mean and median (TRUE: 10) are never within tolerance."""
    st = _frank_tiny(monkeypatch)
    r = st.frank_cnn_test_mix(n_boot=2000, seed=0)
    t = r["table"]
    assert (r["rows"], r["n_boot"]) == (5, 2000)
    mean6, med6 = t.loc["TRUE-T6 avg_len (grounding)"], t.loc["TRUE-T6 median_len (grounding)"]
    assert (mean6["TRUE"], mean6["validation rows"], mean6["2.5%"], mean6["97.5%"]) == (10.0, 9.5, 9.6, 11.6)
    assert 0.45 < mean6["share within tolerance"] < 0.55
    assert (med6["validation rows"], med6["50%"], med6["share within tolerance"]) == (8.0, 10.0, 1.0)
    t7 = t.loc[["TRUE-T7 avg_len (generated)", "TRUE-T7 median_len (generated)"]]
    assert (t7["50%"] == 1.0).all() and (t7["share within tolerance"] == 0.0).all()


def test_frank_rule_check_refuses_an_article_missing_from_true_rows(monkeypatch):
    st = _frank_tiny(monkeypatch)
    from tfc.data import builders as B

    xs = pd.concat([B.frank_xsum_rows(), pd.DataFrame({"hash": ["9"], "model": ["m"], "split": ["valid"],
                                                       "document": ["a"], "summary": ["b"]})])
    monkeypatch.setattr(B, "frank_xsum_rows", lambda: xs.copy())
    with pytest.raises(ValueError, match="not in TRUE's FRANK rows"):
        st.frank_full_set(n_boot=10)


def test_frank_xsum_rows_names_a_row_without_text(monkeypatch):
    from tfc.data import builders as B

    monkeypatch.setattr(B, "frank_annotations", lambda: pd.DataFrame(
        {"hash": ["1", "2"], "model_name": ["PtGen", "PtGen"], "dataset": ["bbc", "bbc"], "split": ["valid", "test"]}))
    monkeypatch.setattr(B, "_xsum_pairs", lambda: {("1", "PtGen"): {"summary": "s", "rows": []}})
    monkeypatch.setattr(B, "xsum_documents", lambda: {"1": "doc", "2": "doc two"})
    with pytest.raises(ValueError, match=r"1 rows have no text.*\('2', 'PtGen'\)"):
        B.frank_xsum_rows()
    monkeypatch.setattr(B, "_xsum_pairs", lambda: {("1", "PtGen"): {"summary": "s", "rows": []},
                                                   ("2", "PtGen"): {"summary": "t u", "rows": []}})
    got = B.frank_xsum_rows()
    assert list(got["split"]) == ["valid", "test"] and list(got["summary"]) == ["s", "t u"]
    assert list(got["document"]) == ["doc", "doc two"]
