"""Conversion rules on hand-made rows (no data mirror needed)."""
import pandas as pd
import pytest

from tfc.data import rules
from tfc.data.leakage import EvalIndex, filter_frame, normalize
from tfc.data import stratified_sample
from tfc.text.words import n_words, words


def test_qags_sentence_majority():
    assert rules.qags_sentence_consistent(["yes", "yes", "no"]) == 1
    assert rules.qags_sentence_consistent(["yes", "no", "no"]) == 0
    assert rules.qags_sentence_consistent(["Yes", "YES", "yes"]) == 1
    with pytest.raises(ValueError):
        rules.qags_sentence_consistent([])


def test_qags_summary_all_sentences_and_score():
    s = [["yes", "yes", "no"], ["yes", "yes", "yes"], ["no", "no", "yes"]]
    assert rules.qags_summary_label(s) == 0            # third sentence fails the majority
    assert rules.qags_summary_label(s[:2]) == 1
    assert rules.qags_summary_score(s) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        rules.qags_summary_label([])


def test_q2_label_is_one_minus_inconsistency():
    assert rules.q2_label(1) == 0 and rules.q2_label(0) == 1 and rules.q2_label("1") == 0
    with pytest.raises(ValueError):
        rules.q2_label(2)


def test_begin_only_entailment_is_consistent():
    assert rules.begin_label("entailment") == 1
    for lab in ("hallucination", "generic", "off-topic", "contradiction"):
        assert rules.begin_label(lab) == 0
    with pytest.raises(ValueError):
        rules.begin_label(float("nan"))


def test_mnbm_worker_majority():
    # two of three workers mark a hallucination -> inconsistent
    rows = [("w0", "extrinsic"), ("w0", "intrinsic"), ("w1", None), ("w2", "intrinsic")]
    assert rules.mnbm_label(rows) == 0
    # one worker marks (twice) -> two consistent votes out of three -> consistent
    assert rules.mnbm_label([("w0", "extrinsic"), ("w0", "extrinsic"), ("w1", "NULL"), ("w2", float("nan"))]) == 1
    # a pair annotated by two workers only: the third vote stays "consistent" (TRUE starts with 3 votes)
    assert rules.mnbm_label([("w0", "extrinsic"), ("w1", None)]) == 1
    assert rules.mnbm_label([("w0", "extrinsic"), ("w1", "intrinsic")]) == 0
    with pytest.raises(ValueError):
        rules.mnbm_label([("a", None), ("b", None), ("c", None), ("d", None)])


def test_xsumfaith_majority_of_rows_differs_from_mnbm():
    # rows: w0 marks two spans, w1 and w2 mark none -> rows: extrinsic, extrinsic, NULL, NULL
    # SummaC: tie between 'extrinsic' (seen first) and NULL -> extrinsic wins -> 0 ; MNBM: 2 of 3 vote 1 -> 1
    rows = [("w0", "extrinsic"), ("w0", "extrinsic"), ("w1", None), ("w2", None)]
    assert rules.xsumfaith_label([h for _, h in rows]) == 0
    assert rules.mnbm_label(rows) == 1
    assert rules.xsumfaith_label([None, None, "intrinsic"]) == 1
    assert [rules.alternate_cut(i) for i in range(4)] == ["val", "test", "val", "test"]


def test_summeval_label_from_mean():
    assert rules.summeval_summac_label_from_mean(5.0) == (1, True)
    assert rules.summeval_summac_label_from_mean(14 / 3) == (1, True)      # 5, 5, 4
    assert rules.summeval_summac_label_from_mean(13 / 3) == (0, False)     # 5,5,3 or 5,4,4: ambiguous
    assert rules.summeval_summac_label_from_mean(11 / 3) == (0, False)     # 5,5,1 possible
    assert rules.summeval_summac_label_from_mean(10 / 3) == (0, True)
    with pytest.raises(ValueError):
        rules.summeval_summac_label_from_mean(0.5)


def test_polytope_and_nli3():
    assert rules.polytope_label([]) == 1 and rules.polytope_label(["Omission"]) == 0
    assert rules.polytope_alignscore_label(["Omission", "Addition", "Duplication"]) == 1
    assert rules.polytope_alignscore_label(["Omission", "Inaccuracy_internal"]) == 0
    assert rules.polytope_alignscore_label(["Positive_Negative_Aspect"]) == 0
    assert rules.nli3("SUPPORTS") == "entailment" and rules.nli3("NOT ENOUGH INFO") == "neutral"
    assert rules.nli3("contradiction") == "contradiction"
    with pytest.raises(ValueError):
        rules.nli3("MAYBE")


def test_word_tokenizers():
    t = "The cat's toy, sadly, broke -- twice."
    assert n_words(t) == 7
    assert words(t, "regex") == ["The", "cat's", "toy", ",", "sadly", ",", "broke", "-", "-", "twice", "."]
    with pytest.raises(ValueError):
        words(t, "bpe")
    with pytest.raises(TypeError):
        words(None)


def test_stratified_sample_deterministic_and_ordered():
    df = pd.DataFrame({"label": [1] * 10 + [0] * 90, "x": range(100)})
    a = stratified_sample(df, 10, seed=3)
    b = stratified_sample(df, 10, seed=3)
    assert a.equals(b) and len(a) == 10
    assert list(a.index) == sorted(a.index)
    assert a["label"].sum() == 1                      # 10% of 10
    assert stratified_sample(df, 2, seed=0)["label"].tolist().count(1) == 1  # at least one per class
    assert len(stratified_sample(df, 500)) == 100
    with pytest.raises(ValueError):
        stratified_sample(df, 0)


def test_leakage_filter_removes_planted_duplicates():
    eval_texts = ["The quick brown fox jumps over the lazy dog near the river bank today.",
                  "Paris is the capital of France."]
    idx = EvalIndex(eval_texts, n=5)
    train = pd.DataFrame({
        "grounding": ["Something unrelated entirely about cooking pasta at home.",
                      "the QUICK brown fox jumps over the lazy dog, near the river bank today",  # exact after norm
                      "Totally new premise text here.",
                      "A story: the quick brown fox jumps over the lazy dog near the river bank"],  # near dup
        "generated": ["Pasta needs salt.", "A fox.", "Paris is the capital of France!", "Fox story."],
    })
    kept, why = filter_frame(train, idx, near_threshold=0.8)
    assert list(why) == ["", "exact", "exact", "near"]
    assert list(kept.index) == [0]
    assert normalize("  Hello,   WORLD! ") == "hello world"
