"""QG-QA machinery, QAGS and Q² scorers, the in-house QA training (tiny models, hand-computed values)."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from tfc.scorers import qgqa
from tfc.runs.qgqa import Q2_RUN_STEPS
from tfc.scorers import get as S_get
from tfc.scorers.qags import QAGSScorer, filter_questions, pick_candidates, prepend_reference, select_k
from tfc.scorers.q2 import Q2Scorer, fill_no_valid, is_personal, nli_fallback
from tfc.scorers.qgqa import QAResult, squad_em, squad_f1


# ---------------------------------------------------------------------------------------------- F1 / EM
@pytest.mark.parametrize("gold,pred,f1", [
    ("the Cat sat", "cat sat.", 1.0),              # articles, case, punctuation normalised away
    ("New York City", "York", 0.5),                # p = 1, r = 1/3 -> 2*(1/3)/(4/3) = 0.5
    ("Barack Obama", "Obama was president", 0.4),  # common 1: p = 1/3, r = 1/2 -> 0.4
    ("two", "2", 0.0),
    ("", "", 1.0),                                 # both "no answer"
    ("Paris", "", 0.0),                            # no answer against an answer
    ("a", "the", 1.0),                             # both normalise to nothing
    ("the the cat", "cat cat", 0.5),              # bag counts: common 1, p = 1/2, r = 1 -> 2/3? see below
])
def test_squad_f1(gold, pred, f1):
    if gold == "the the cat":   # "the the cat" -> ["cat"]; "cat cat" -> ["cat","cat"]: common 1, p 1/2, r 1
        f1 = 2 * 0.5 * 1 / 1.5
    assert squad_f1(gold, pred) == pytest.approx(f1)


def test_squad_em():
    assert squad_em("The  Eiffel Tower!", "eiffel tower") == 1.0
    assert squad_em("Eiffel Tower", "the tower") == 0.0
    assert squad_em("", "") == 1.0
    assert qgqa.normalize_answer("An  apple, a DAY.") == "apple day"


# ---------------------------------------------------------------------------------------------- rule QG
@pytest.mark.parametrize("sentence,answer,wh", [
    ("Marie Curie won the Nobel Prize in 1903.", "Marie Curie", "Who"),
    ("Marie Curie won the Nobel Prize in 1903.", "1903", "When"),
    ("Barack Obama was born in Hawaii.", "Hawaii", "Where"),
    ("The company hired 300 workers last year.", "300", "How many"),
])
def test_rule_qg_wh_words(sentence, answer, wh):
    qg = qgqa.RuleQG(num_return=2)
    (qs,) = qg.generate([sentence], [answer])
    assert qs, "no question generated"
    q, score = qs[0]
    assert q.startswith(wh + " ") and q.endswith("?")
    assert answer not in q and score == 0.0
    if len(qs) > 1:
        assert qs[1][1] == -1.0


def test_rule_qg_forms():
    qg = qgqa.RuleQG()
    assert qg.generate(["Barack Obama was born in Hawaii."], ["Hawaii"])[0][0][0] == "Where was Barack Obama born?"
    assert qg.generate(["The company hired 300 workers last year."], ["300"])[0][0][0] == \
        "How many workers did the company hire last year?"
    assert qg.generate(["Marie Curie won the Nobel Prize in 1903."], ["Marie Curie"])[0][0][0] == \
        "Who won the Nobel Prize in 1903?"
    # an answer that is not in the text: no question; length mismatch: error
    assert qg.generate(["Cats purr."], ["dogs"]) == [[]]
    with pytest.raises(ValueError):
        qg.generate(["a", "b"], ["a"])
    with pytest.raises(ValueError):
        qgqa.question_generator("seq2seq")
    with pytest.raises(ValueError):
        qgqa.question_generator("magic")


def test_answer_candidates():
    (c,) = qgqa.answer_candidates(["Barack Obama visited Paris with two friends."])
    texts = [x.text for x in c]
    assert texts[:3] == ["Barack Obama", "Paris", "two"]     # entities first
    assert "two friends" in texts                            # then noun chunks not already taken
    assert all("Barack Obama visited Paris with two friends."[x.start:x.end] == x.text for x in c)
    assert qgqa.answer_candidates(["Yes!", ""]) == [[], []]
    with pytest.raises(ValueError):
        qgqa.answer_candidates(["x"], kinds=("verbs",))


def test_candidate_rules_follow_the_q2_authors_code():
    text = "I met Obama and obama in Paris; the Paris trip was fun for them."
    tfc_rule, code, no_pron = ([(c.text, c.label) for c in qgqa.answer_candidates([text], rule=r)[0]]
                               for r in ("tfc", "q2-code", "q2-code-no-pronouns"))
    # the first committed runs: each text once (exact text), "I" kept
    assert tfc_rule == [("Obama", "PERSON"), ("Paris", "GPE"), ("I", "NP"), ("obama", "NP"), ("the Paris trip", "NP"),
                        ("them", "NP")]
    # the authors' code: every entity (the repeated one too), noun chunks compared lower-cased, "i" dropped
    assert code == [("Obama", "PERSON"), ("Paris", "GPE"), ("Paris", "GPE"), ("the Paris trip", "NP"), ("them", "NP")]
    assert no_pron == code[:-1]                                 # the stand-in for coreference: lone pronouns out
    assert all(text[c.start:c.end] == c.text for c in qgqa.answer_candidates([text], rule="q2-code")[0])
    with pytest.raises(ValueError, match="candidate rule"):
        qgqa.answer_candidates(["x"], rule="mine")


def test_q2_candidate_rule_drops_lowercase_i_and_keeps_old_signatures():
    (c,) = qgqa.answer_candidates(["i love them too ! i love how they are made with wheat tortillas ."], rule="q2-code")
    assert [x.text for x in c] == ["them", "they", "wheat tortillas"]
    assert Q2Scorer(checkpoint="x").signature == Q2Scorer(checkpoint="x", candidate_rule="q2-code").signature
    assert Q2Scorer(checkpoint="x").signature != Q2Scorer(checkpoint="x", candidate_rule="tfc").signature
    with pytest.raises(ValueError, match="candidate_rule"):
        Q2Scorer(checkpoint="x", candidate_rule="mine")


# ---------------------------------------------------------------------------------------------- QAGS filters and K
def test_filter_questions():
    items = [("a", "Who won the prize? Maybe him", 1.0), ("b", "Who won the prize?", 0.5), ("c", "Who won?", 0.9),
             ("d", "What did she win in 1903?", -1.0)]
    out = filter_questions(items, min_tokens=3)
    assert out == [("a", "Who won the prize?", 1.0), ("d", "What did she win in 1903?", -1.0)]
    # without truncation the first one is kept whole and the second survives as a distinct question
    out2 = filter_questions(items, min_tokens=3, truncate=False)
    assert [x[1] for x in out2] == ["Who won the prize? Maybe him", "Who won the prize?", "What did she win in 1903?"]


def test_select_k_and_pick_candidates():
    rng = np.random.default_rng(0)
    items = [("a", "q1", -1.0), ("b", "q2", 0.0), ("c", "q3", 0.0), ("d", "q4", -2.0)]
    assert [x[1] for x in select_k(items, 2, False, rng)] == ["q2", "q3"]          # ties keep order
    filled = select_k(items[:2], 5, True, rng)
    assert len(filled) == 5 and [x[1] for x in filled[:2]] == ["q2", "q1"] and {x[1] for x in filled} <= {"q1", "q2"}
    assert select_k([], 5, True, rng) == []
    cands = list("abcdefghijkl")
    got = pick_candidates(cands, 10, "sample", np.random.default_rng(1))
    assert len(got) == 10 and len(set(got)) == 10
    few = pick_candidates(["x", "y", "z"], 10, "sample", np.random.default_rng(1))
    assert len(few) == 10 and few[:3] == ["x", "y", "z"] and set(few) == {"x", "y", "z"}
    assert pick_candidates(cands, 10, "all", rng) == cands
    assert prepend_reference(["article"], ["ref."]) == ["ref. article"]
    assert prepend_reference(["article"], [None]) == ["article"]


# ---------------------------------------------------------------------------------------------- stubs
class StubQG:
    def generate(self, texts, answers, progress=False):
        return [[(f"What about {a.text} here?", 0.0), (f"And {a.text} there?", -1.0)] for a in answers]


class StubQA:
    """Answers from a dict keyed by (question, context); missing -> no answer."""

    def __init__(self, table):
        self.table = table
        self.calls = 0

    def answer(self, questions, contexts, batch_size=32, progress=False):
        self.calls += 1
        out = []
        for q, c in zip(questions, contexts):
            a = self.table.get((q, c), self.table.get((q, "*"), ""))
            i = c.find(a) if a else -1
            out.append(QAResult(a, i, i + len(a), 1.0) if a else QAResult("", -1, -1, -1.0))
        return out


class StubNLI:
    def __init__(self, labels):
        self.map = labels
        self.seen = []

    def labels(self, premises, hypotheses):
        self.seen += list(zip(premises, hypotheses))
        return [self.map.get(h, "neutral") for h in hypotheses]


def _stub_q2(qa_table, nli_map=None, **cfg):
    s = Q2Scorer(checkpoint="unused", nli_checkpoint="unused", **{**Q2_RUN_STEPS, **cfg})     # tfc's steps
    s.qg, s.qa = StubQG(), StubQA(qa_table)
    s.nli = StubNLI(nli_map or {}) if s.config.use_nli else None
    s._loaded = True
    return s


def test_nli_fallback_branches():
    assert nli_fallback(0.3, "entailment") == 1.0
    assert nli_fallback(0.3, "contradiction") == 0.0
    assert nli_fallback(0.3, "neutral") == 0.3
    assert nli_fallback(0.3, None) == 0.3


RESP = "Barack Obama visited Paris."   # candidates: Barack Obama (PERSON), Paris (GPE)
KNOW = "The president Obama travelled to the French capital, Paris, in 2009."


def test_q2_stub_pipeline_and_nli():
    qa = {("What about Barack Obama here?", RESP): "Barack Obama", ("What about Paris here?", RESP): "Paris",
          ("What about Barack Obama here?", KNOW): "The president Obama", ("What about Paris here?", KNOW): "Paris"}
    # F1 only: Obama: gold "Barack Obama" vs "president Obama": p 1/2, r 1/2 -> 0.5; Paris: 1.0 -> mean 0.75
    s = _stub_q2(qa, use_nli=False)
    score, t = s.run([KNOW], [RESP])
    assert score[0] == pytest.approx(0.75)
    assert t["valid"].sum() == 2 and set(t.loc[t["valid"], "f1"]) == {0.5, 1.0}
    # NLI: entailment for the Obama pair -> 1.0; Paris (F1 = 1) never reaches the NLI model
    s = _stub_q2(qa, {"What about Barack Obama here? Barack Obama": "entailment"})
    assert s.run([KNOW], [RESP])[0][0] == pytest.approx(1.0)
    assert s._aux_keep["aux_f1_only"][0] == pytest.approx(0.75)     # the same questions without NLI
    # TRUE's F1 validation keeps the same two questions here (both answers match exactly)
    assert s._aux_keep["aux_true_q2"][0] == pytest.approx(1.0) and s._aux_keep["aux_n_valid_true"][0] == 2
    assert s.nli.seen == [("What about Barack Obama here? The president Obama", "What about Barack Obama here? Barack Obama")]
    s = _stub_q2(qa, {"What about Barack Obama here? Barack Obama": "contradiction"})
    assert s.run([KNOW], [RESP])[0][0] == pytest.approx(0.5)      # (0 + 1) / 2
    s = _stub_q2(qa, {})                                           # neutral keeps F1
    assert s.run([KNOW], [RESP])[0][0] == pytest.approx(0.75)


def test_true_variant_validates_by_token_f1():
    """A question whose answer on the response only overlaps its candidate (F1 2/3 >= 0.54) fails Q²'s exact
    match but passes TRUE's F1 validation: it is answered on the knowledge and enters aux_true_q2 only; a
    response with no valid question of either kind has NaN there (TRUE's NLI fallback fills it)."""
    qa = {("What about Barack Obama here?", RESP): "Obama", ("What about Paris here?", RESP): "Paris",
          ("What about Barack Obama here?", KNOW): "The president Obama", ("What about Paris here?", KNOW): "Paris"}
    s = _stub_q2(qa, use_nli=False)
    score, t = s.run([KNOW, KNOW], [RESP, "Yes!"])
    assert score[0] == pytest.approx(1.0)                     # Q²: only Paris is valid (EM)
    aux = s._aux_keep
    # TRUE: Obama too ("Obama" vs "Barack Obama": F1 2/3); on the knowledge "The president Obama" vs candidate
    # "Barack Obama": F1 1/2 -> mean (1 + 1/2) / 2
    assert aux["aux_n_valid"][0] == 1 and aux["aux_n_valid_true"][0] == 2
    assert aux["aux_true_q2"][0] == pytest.approx(0.75)
    assert np.isnan(aux["aux_true_q2"][1]) and aux["aux_n_valid_true"][1] == 0 and score[1] == 0.0
    assert t.loc[t["valid_true"] & ~t["valid"], "answer_grounding"].tolist() == ["The president Obama"]


def test_q2_validation_no_answer_and_no_valid():
    # the QA model finds "Obama" on the response: EM fails (invalid), F1 = 2/3 >= 0.54 passes
    qa = {("What about Barack Obama here?", RESP): "Obama", ("What about Paris here?", RESP): "Paris",
          ("What about Barack Obama here?", KNOW): "Obama"}
    s = _stub_q2(qa, use_nli=False)
    score, t = s.run([KNOW], [RESP])
    assert t["valid"].sum() == 1 and score[0] == 0.0              # Paris has no answer on KNOW -> 0
    assert s.last_aux() == {} and s._aux_keep["aux_n_no_answer"].tolist() == [1]
    s = _stub_q2(qa, use_nli=False, validation="f1")
    score, _ = s.run([KNOW], [RESP])
    assert score[0] == pytest.approx((squad_f1("Barack Obama", "Obama") + 0.0) / 2)
    # Q2*: discard the unanswerable question when another one has an answer
    s = _stub_q2(qa, use_nli=False, validation="f1", discard_unanswerable=True)
    assert s.run([KNOW], [RESP])[0][0] == pytest.approx(squad_f1("Barack Obama", "Obama"))
    # nothing valid -> the no_questions policy: 0 by default
    s = _stub_q2({}, use_nli=False)
    assert s.run([KNOW], [RESP])[0][0] == 0.0 and s._aux_keep["aux_n_valid"].tolist() == [0]
    assert fill_no_valid([np.nan, 0.4]).tolist() == [0.0, 0.4]


def test_q2_no_candidates_and_empty_text():
    s = _stub_q2({}, use_nli=False)
    out = s.score(["Some knowledge.", "Some knowledge.", ""], ["Yes!", "", "Paris is nice."])
    assert out[0] == 0.0                       # no candidates -> no valid question -> the "zero" policy
    assert out[1] == 0.0 and out[2] == 0.0     # empty side -> empty_score (lower end of the range)
    assert s.last_aux()["aux_n_candidates"].tolist()[0] == 0


def test_q2_filter_personal():
    docs = qgqa.parse(["What do I love?", "What is your favourite food?", "Where was Obama born?"])
    assert [is_personal(d) for d in docs] == [True, True, False]


def test_config_errors_and_signature():
    with pytest.raises(ValueError):
        Q2Scorer(validation="cosine")
    with pytest.raises(TypeError):
        Q2Scorer(nonsense=1)
    with pytest.raises(ValueError):
        QAGSScorer(candidate_fill="some")
    with pytest.raises(ValueError):
        QAGSScorer(k=0)
    s = _stub_q2({}, use_nli=False)
    with pytest.raises(TypeError):
        s.score([None], ["x"])


# ---------------------------------------------------------------------------------------------- QAGS with stubs
def test_qags_stub_pipeline():
    summ = "Barack Obama visited Paris."
    art = "Obama went to Paris in 2009."
    qa = {("What about Barack Obama here?", summ): "Barack Obama", ("What about Paris here?", summ): "Paris",
          ("What about Barack Obama here?", art): "Obama", ("What about Paris here?", art): "Paris"}
    s = QAGSScorer(checkpoint="unused", k=20, steps="tfc")
    s.qg, s.qa, s._loaded = StubQG(), StubQA(qa), True
    score, t = s.run([art], [summ])
    # questions: "What about X here?" (0.0, answerable) and "And X there?" (-1.0, unanswerable on the summary:
    # filtered); K = 20 filled by repeating the two kept questions -> the mean is a mix of 0.667 and 1.0
    assert set(t["question"]) == {"What about Barack Obama here?", "What about Paris here?"}
    assert len(t) == 20
    f = t.groupby("question")["f1"].first()
    assert f["What about Paris here?"] == 1.0 and f["What about Barack Obama here?"] == pytest.approx(2 / 3)
    assert score[0] == pytest.approx(t["f1"].mean())
    aux = s._aux_keep   # prefix means over the best distinct questions: Obama (2/3) ranks first on the tie
    assert aux["aux_mean_k1"][0] == pytest.approx(2 / 3) and aux["aux_mean_k2"][0] == pytest.approx(5 / 6)
    assert aux["aux_mean_k10"][0] == pytest.approx(5 / 6) and aux["aux_n_questions"][0] == 2
    # four questions written (two per candidate); the two "What about" ones come back with their own candidate
    assert aux["aux_n_generated"][0] == 4 and aux["aux_n_self_consistent"][0] == 2
    s2 = QAGSScorer(checkpoint="unused", k=20, fill_to_k=False, steps="tfc")
    s2.qg, s2.qa, s2._loaded = StubQG(), StubQA(qa), True
    assert s2.run([art], [summ])[0][0] == pytest.approx((1.0 + 2 / 3) / 2)
    s3 = QAGSScorer(checkpoint="unused", k=1, fill_to_k=False, steps="tfc")
    s3.qg, s3.qa, s3._loaded = StubQG(), StubQA(qa), True
    assert s3.run([art], [summ])[0][0] == pytest.approx(2 / 3)    # K = 1: the first best (Obama, tie order)
    # no question survives -> the no_questions policy (0); batching does not matter
    s4 = QAGSScorer(checkpoint="unused", steps="tfc")
    s4.qg, s4.qa, s4._loaded = StubQG(), StubQA({}), True
    assert s4.run([art], [summ])[0][0] == 0.0
    both = s.run([art, art], [summ, "Yes!"])[0]
    assert both[0] == pytest.approx(score[0]) and both[1] == 0.0


# ---------------------------------------------------------------------------------------------- tiny models end to end
@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tfc.models.tiny import make_tiny_classifier
    from tfc.train.qa import make_tiny_qa

    d = tmp_path_factory.mktemp("qgqa")
    return {"qa": str(make_tiny_qa(d / "qa")), "nli": str(make_tiny_classifier(d / "nli"))}


def test_extractive_qa_tiny(tiny):
    qa = qgqa.ExtractiveQA(tiny["qa"], max_length=64, stride=16, null_threshold=-1e9)
    long_ctx = " ".join(["the cat sat on the mat ."] * 40)   # several windows
    res = qa.answer(["who sat ?", "who sat ?", "", "what ?"], ["the cat sat .", long_ctx, "x", "the dog ran ."],
                    batch_size=2)
    assert res[2] == QAResult("", -1, -1, float("-inf"))
    for r, c in zip([res[0], res[1], res[3]], ["the cat sat .", long_ctx, "the dog ran ."]):
        assert r.has_answer and c[r.start:r.end] == r.text and r.text
    # abstains when the threshold is huge; batch size does not change answers
    assert not any(x.has_answer for x in qgqa.ExtractiveQA(tiny["qa"], null_threshold=1e9).answer(["q ?"], ["the cat ."]))
    again = qa.answer(["who sat ?", "who sat ?", "what ?"], ["the cat sat .", long_ctx, "the dog ran ."], batch_size=1)
    assert [x.text for x in again] == [res[0].text, res[1].text, res[3].text]
    with pytest.raises(ValueError):
        qgqa.ExtractiveQA(tiny["qa"], max_length=64, stride=64)
    with pytest.raises(ValueError):
        qa.answer(["a"], [])


def test_q2_and_qags_tiny_end_to_end(tiny):
    g = ["Marie Curie won the Nobel Prize in 1903 in Stockholm.", "The cat sat on the mat."]
    h = ["Marie Curie won the prize in 1903.", "Yes!"]
    q2 = Q2Scorer(checkpoint=tiny["qa"], nli_checkpoint=tiny["nli"], qa_null_threshold=-1e9, validation="f1",
                  validation_f1=0.0, **Q2_RUN_STEPS)
    out = q2.score(g, h, batch_size=3)
    assert out.shape == (2,) and 0.0 <= out[0] <= 1.0 and out[1] == 0.0
    t = q2.explain(g, h)
    assert list(t.columns[:11]) == ["example", "candidate", "question", "qg_score", "answer_generated", "valid",
                                    "valid_true", "answer_grounding", "f1", "nli", "sub_score"]
    assert (t["example"] == 0).all() and len(t) >= 3
    assert np.allclose(q2.score(g, h, batch_size=1), out)
    assert q2.last_aux()["aux_n_chunks"].tolist() == [1, 1]
    assert q2.signature.startswith("q2.rule-f1-nli.")
    assert "_components" in q2.signature_fields() and q2.signature != Q2Scorer(
        checkpoint=tiny["qa"], nli_checkpoint=tiny["nli"]).signature
    qags = QAGSScorer(checkpoint=tiny["qa"], qa_null_threshold=-1e9, k=5, steps="tfc")
    o2 = qags.score(g, h)
    assert 0.0 <= o2[0] <= 1.0 and o2[1] == 0.0
    assert qags.last_aux()["aux_n_questions"][0] >= 1
    e = qags.explain(g[:1], h[:1])
    assert len(e) == 5 and set(e.columns) >= {"candidate", "question", "answer_generated", "answer_grounding", "f1"}
    assert "rule-based QG" in qags.backends_label()


def test_q2_and_qags_as_published_tiny_end_to_end(tiny):
    """The authors' steps on tiny models: scores in [0, 1] whatever the batch, no NaN; a response without a valid
    question gets the NLI label of the whole response (1, 0.5 or 0), a summary without a question the policy's 0."""
    g = ["Marie Curie won the Nobel Prize in 1903 in Stockholm.", "The cat sat on the mat."]
    h = ["Marie Curie won the prize in 1903.", "Yes!"]
    q2 = S_get("q2", preset="as-published", checkpoint=tiny["qa"], nli_checkpoint=tiny["nli"])
    assert q2.config.steps == "q2-code"
    out = q2.score(g, h, batch_size=3)
    assert out.shape == (2,) and not np.isnan(out).any() and ((0 <= out) & (out <= 1)).all()
    assert out[1] in (0.0, 0.5, 1.0) and q2.last_aux()["aux_n_valid"][1] == 0
    assert q2.qa.span_rule == "argmax"
    assert np.allclose(q2.score(g[::-1], h[::-1], batch_size=1), out[::-1])
    qags = S_get("qags", preset="as-published", checkpoint=tiny["qa"], qa_null_threshold=-1e9, k=5)
    assert qags.config.steps == "qags-code"
    o2 = qags.score(g, h)
    assert not np.isnan(o2).any() and ((0 <= o2) & (o2 <= 1)).all() and o2[1] == 0.0
    assert np.allclose(qags.score(g[:1], h[:1]), o2[:1])


def test_registry():
    import tfc.scorers as S

    assert {"qags", "q2"} <= set(S.names())
    assert S.get("q2").config.validation == "em" and S.get("qags").config.k == 20


# ---------------------------------------------------------------------------------------------- QA training
def test_contrast_span():
    from tfc.train.qa_set import contrast_span

    sup = "Westlife sold 13 million albums in the UK ."
    ref = "Westlife sold 9.8 million albums in the UK ."
    i = sup.index("13 million")
    s = contrast_span(sup, ref, i, i + len("13 million"))
    assert ref[s[0]:s[1]] == "9.8 million"   # "13" was replaced by "9.8", "million" is unchanged
    j = sup.index("the UK")
    assert contrast_span(sup, ref, j, j + 6) is None     # unchanged region: no contrast


def _pairs():
    rows = [
        ("Marie Curie won the Nobel Prize in 1903 in Stockholm.", "Marie Curie won a prize in 1903.", "vitaminc_test", "entailment"),
        ("Marie Curie won the Nobel Prize in 1905 in Stockholm.", "Marie Curie won a prize in 1903.", "vitaminc_test", "contradiction"),
        ("The company hired 300 workers in Boston last year.", "Boston firms hired 300 people.", "msrp", ""),
        ("Two dogs are playing in the snow.", "Two dogs play outside in the snow.", "sick2014", "entailment"),
        ("Paris is the capital of France and home to the Louvre.", "I love Paris and its museums.", "wecheck_dialogue", ""),
        ("A man is slicing a tomato in the kitchen.", "A woman is cutting an onion.", "sick2014", "contradiction"),
    ] * 3
    return pd.DataFrame([{"grounding": a, "generated": b, "dataset": d, "label3": l} for a, b, d, l in rows])


def test_build_qa_set_and_tiny_training(tiny, tmp_path):
    from tfc.train.qa import QATrainConfig, encode_examples, evaluate_qa, train_qa
    from tfc.train.qa_set import build_qa_set

    train, held, rep = build_qa_set(pairs=_pairs(), seed=0, heldout_pairs=2, per_pair=3)
    df = pd.concat([train, held])
    assert set(df["kind"]) >= {"self", "cross", "contrast", "other", "ground"}
    ans = df[df["answer_start"] >= 0]
    assert all(c[s:s + len(a)] == a for c, s, a in zip(ans["context"], ans["answer_start"], ans["answer_text"]))
    assert (df.loc[df["answer_start"] < 0, "answer_text"] == "").all()
    assert rep["no_answer_frac"] <= 0.33 + 1e-9
    assert not set(held["context"]) & set(train["context"])     # held-out contexts never trained on
    con = df[df["kind"] == "contrast"]
    assert "1905" in set(con["answer_text"])
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny["qa"])
    enc, st, en, keep = encode_examples(tok, ans.head(5), 256)
    assert keep.all()
    for i in range(5):   # the start/end tokens' character offsets are exactly the answer's
        offs = enc["offset_mapping"][i]
        a0 = int(ans["answer_start"].iloc[i])
        assert (offs[st[i]][0], offs[en[i]][1]) == (a0, a0 + len(ans["answer_text"].iloc[i]))
    dev = held[held["answer_start"] >= 0].head(6).assign(kind="xquad")
    s = train_qa(train, QATrainConfig(base=tiny["qa"], max_steps=3, batch_size=4, max_length=128, log_every=1),
                 out_dir=tmp_path / "m", heldout=held, data_report=rep, dev=dev)
    assert s["steps"] == 3 and (tmp_path / "m" / "README.md").is_file()
    assert s["dev_eval_human"]["rows"] == 6 and s["dev_eval_human"]["answerable"] == 6
    assert "Human-written dev set" in (tmp_path / "m" / "README.md").read_text()
    ev = s["heldout_eval"]
    assert ev["rows"] == len(held) and 0 <= ev["f1"] <= 1 and ev["no_answer"] + ev["answerable"] == len(held)
    # evaluate_qa on hand-made answers: a stub that always returns the gold span and abstains on no-answer rows
    table = {(q, c): a for q, c, a in zip(held["question"], held["context"], held["answer_text"])}
    perfect = evaluate_qa(StubQA(table), held)
    assert perfect["exact_match"] == 1.0 and perfect["f1"] == 1.0 and perfect["no_answer_accuracy"] in (1.0, None)
    with pytest.raises(ValueError):
        build_qa_set(pairs=_pairs().iloc[:0])
    with pytest.raises(ValueError):
        train_qa(train.iloc[:0], QATrainConfig(base=tiny["qa"]))


def test_coverage_auc_hand_computed():
    from tfc.runs.qgqa import coverage_auc

    # covered rows: labels 1,0,1 with scores .9,.2,.5 -> perfect ranking (AUC 1); the NaN row (label 0)
    # becomes 0 in the 0-filled AUC: positives .9,.5 vs negatives .2,0 -> still 1.0
    out = coverage_auc([1, 0, 1, 0], [0.9, 0.2, 0.5, np.nan])
    assert out["coverage"] == 0.75 and out["covered"] == 3
    assert out["auc_covered"] == 1.0 and out["auc_zero_fill"] == 1.0
    # a NaN positive set to 0 ranks below both negatives: 2 of 4 positive-negative pairs right -> 0.5
    out = coverage_auc([1, 0, 1, 0], [0.9, 0.2, np.nan, 0.1])
    assert out["auc_zero_fill"] == 0.5 and out["auc_covered"] == 1.0


def test_qa_trains_on_the_one_engine(tiny, tmp_path):
    """The span objective on tfc.train.engine: the loss falls, the record says which objective ran."""
    from tfc.train.qa import QATrainConfig, train_qa
    from tfc.train.qa_set import build_qa_set

    train, held, rep = build_qa_set(pairs=_pairs(), seed=0, heldout_pairs=2, per_pair=3)
    s = train_qa(train, QATrainConfig(base=tiny["qa"], max_steps=40, batch_size=4, max_length=128, lr=3e-3,
                                      warmup_ratio=0.0, log_every=1, num_threads=1), out_dir=tmp_path / "m")
    log = [json.loads(x) for x in (tmp_path / "m" / "train_log.jsonl").read_text().splitlines()]
    first, last = np.mean([r["loss"] for r in log[:5]]), np.mean([r["loss"] for r in log[-5:]])
    assert last < 0.9 * first, (first, last)   # seeded: 4.95 -> 4.22 over 40 steps of a tiny random model
    assert s["objective"] == "qa-span" and s["engine_config"]["tasks"] == []
    assert s["mix"]["train_rows"] + s["train_rows_answer_truncated"] == len(train)


# ---------------------------------------------------------------------------------------------- checkpoint, no_questions
def test_checkpoint_is_the_qa_model():
    for cls in (Q2Scorer, QAGSScorer):
        a, b = cls(checkpoint="some/qa"), cls(checkpoint="some/qa")
        assert a.config.checkpoint == "some/qa" and a.config.signature_fields()["checkpoint"] == "some/qa"
        assert a.signature == b.signature != cls(checkpoint="other/qa").signature
        assert a.components()["qa"] == "some/qa@main"
        with pytest.raises(ValueError, match="checkpoint"):
            cls(checkpoint="")
        with pytest.raises(TypeError, match="qa_checkpoint"):
            cls(qa_checkpoint="x")


def test_no_questions_policy_is_validated_and_in_the_signature():
    for cls in (Q2Scorer, QAGSScorer):
        for bad in ("skip", "nan"):
            with pytest.raises(ValueError, match="no_questions"):
                cls(no_questions=bad)
        zero, nli, label = cls(no_questions="zero"), cls(no_questions="nli"), cls(no_questions="nli-label")
        assert zero.config.signature_fields()["no_questions"] == "zero"
        assert len({zero.signature, nli.signature, label.signature}) == 3
        assert "nli" in nli.components() and "nli" in label.components()


def test_no_questions_nli_uses_the_end_to_end_nli_score():
    class StubNLIScorer:
        def score(self, g, h, batch_size=None, progress=False):
            return np.array([0.25 + 0.5 * ("Paris" in x) for x in h])

    s = _stub_q2({}, use_nli=False, no_questions="nli")
    s._nli_scorer = StubNLIScorer()
    out, _ = s.run([KNOW, KNOW], [RESP, "Yes!"])
    assert out.tolist() == [0.75, 0.25]


def test_q2_code_steps_give_the_f1_form_the_fallback_too():
    """run_nli.py: a response without a valid question gets the end-to-end label's score in q2_no_nli as well;
    tfc's steps leave the F1 form NaN there (no question, no F1)."""
    for steps, want_f1 in (("q2-code", [0.5, 1.0]), ("tfc", [np.nan, np.nan])):
        s = _stub_q2({}, use_nli=False, no_questions="nli-label", steps=steps)
        s.nli = StubNLI({"yes!": "entailment"})
        out, _ = s.run([KNOW, KNOW], [RESP, "Yes!"])
        assert out.tolist() == [0.5, 1.0]
        np.testing.assert_array_equal(s._aux_keep["aux_f1_only"], want_f1)
        assert s._aux_keep["aux_n_valid"].tolist() == [0, 0]


def _sidecars():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "results" / "scores"
    return sorted(p for p in root.glob("*/*/*.json") if p.parts[-3].split(".")[0] in ("q2", "qags"))


def test_committed_cache_signatures_are_unchanged():
    """Every committed Q² / QAGS cache sidecar rebuilds to the signature it is filed under, under a policy that
    never gives NaN ("zero"; "nli" for TRUE's derived variant; "nli-label", the authors' fallback, for the
    as-published readings), and holds no NaN score."""
    import tfc.scorers as S
    from tfc.runs import qgqa as R

    cars = _sidecars()
    assert cars, "no committed q2/qags caches found"
    for p in cars:
        meta = json.loads(p.read_text())
        s = S.from_config(meta["scorer"], meta["config"])
        assert s.signature == meta["signature"] == p.parts[-3], p
        assert s.config.no_questions in ("zero", "nli", "nli-label")
        scores = pd.read_parquet(p.with_suffix(".parquet"))["score"]
        assert not scores.isna().any(), p
    # the chapters' run configurations point at them; the legacy configuration is a different signature
    sigs = {p.parts[-3] for p in cars}
    assert R.scorer_for("q2").signature in sigs and R.scorer_for("qags").signature in sigs


# ---------------------------------------------------------------------------------------------- rule QG version 2
@pytest.mark.parametrize("sentence,answer,v1,v2", [
    # a number in a name is not a count
    ("John almost died in Ted 2.", "2", "How many", "What"),
    # an answer inside the subject: asked in place
    ("Megatron's music video has more than 50 million views.", "Megatron", None,
     "Whose music video has more than 50 million views?"),
    # phrases attached to the answer move with it
    ("Germany had more than 1,000 cases of coronavirus during the pandemic.", "more than 1,000 cases",
     "What did Germany have of coronavirus during the pandemic?", "What did Germany have during the pandemic?"),
    # the answer's own clause, not the whole sentence
    ("i am not sure, but i do know that the unicycle is one wheel.", "one wheel", None, "What is the unicycle?"),
    # a modifier before the subject goes to the end
    ("As of 3 March, there has been no reported case in Comoros.", "Comoros",
     "Where has there As of 3 March, been no reported case?", "Where has there been no reported case, as of 3 March?"),
    # subject questions agree with the wh-word
    ("do you like beetroot?", "you", None, "Who likes beetroot?"),
])
def test_rule_qg_v2_fixes(sentence, answer, v1, v2):
    old = qgqa.RuleQG(rules="v1").generate([sentence], [answer])[0]
    new = qgqa.RuleQG(rules="v2").generate([sentence], [answer])[0]
    assert new and (new[0][0] == v2 or new[0][0].startswith(v2 + " "))
    if v1 is not None:
        assert old and (old[0][0] == v1 or old[0][0].startswith(v1 + " "))
    assert old != new


def test_rule_versions_in_identity_and_signature():
    assert qgqa.RuleQG().identity() == "rule-qg-v1+" + qgqa.SPACY_MODEL      # the committed caches' identity
    assert qgqa.RuleQG(rules="v2").identity() == "rule-qg-v2+" + qgqa.SPACY_MODEL
    with pytest.raises(ValueError):
        qgqa.RuleQG(rules="v9")
    with pytest.raises(ValueError, match="qg_rules"):
        Q2Scorer(qg_rules="v9")
    for cls in (Q2Scorer, QAGSScorer):
        assert cls().config.qg_rules == "v2"                                # the fixed rules are the default
        assert cls(qg_rules="v1").config.signature_fields()["qg_rules"] == "v1"  # the whole config is hashed
        assert cls(qg_rules="v1").signature != cls().signature
        assert cls().components()["qg"].startswith("rule-qg-v2")
        assert cls(qg_rules="v1").components()["qg"].startswith("rule-qg-v1")
    # v1 is unchanged: the questions of the tests above
    assert qgqa.RuleQG().generate(["The company hired 300 workers last year."], ["300"])[0][0][0] == \
        "How many workers did the company hire last year?"


# ---------------------------------------------------------------------------------------------- rule QG version 3
@pytest.mark.parametrize("text,want", [
    ("i ' m not sure , but they ' ve been around .", "i'm not sure, but they've been around."),
    ("i didn ' t know . he broke another swimmer ' s record", "i didn't know. he broke another swimmer's record"),
    ("I do n't know , it 's fine .", "I don't know, it's fine."),
    ("the trail is 2 , 200 miles ( video ) long , 3 . 5 %", "the trail is 2,200 miles (video) long, 3.5%"),
    ("1 , 000 , 000 fans", "1,000,000 fans"),
    ("on April 9 , 2020 .", "on April 9, 2020."),          # a date's comma is not a thousands separator
    ("`` The Incredibles 2 '' is out", '"The Incredibles 2" is out'),
    ("the players ' union", "the players ' union"),         # a plural possessive is left alone
    ("Normal text, with 3.5% and (brackets).", "Normal text, with 3.5% and (brackets)."),
    ("", ""),
])
def test_detokenize(text, want):
    assert qgqa.detokenize(text) == want
    assert qgqa.detokenize(want) == want                    # untokenised text comes back as it is


@pytest.mark.parametrize("sentence,answer,v2,v3", [
    # a year modifying a name: the phrase is asked about, the determiner absorbed
    ("The 2012 NHL Entry Draft was held at the Consol Energy Center.", "2012",
     "The when NHL Entry Draft was held at the Consol Energy Center?",
     "Which NHL Entry Draft was held at the Consol Energy Center?"),
    # an adjective of nationality
    ("The Grateful Dead was an American rock band.", "American", "Who was the Grateful Dead an rock band?",
     "What kind of rock band was the Grateful Dead?"),
    # the article goes with the answer
    ("Manchester by the Sea received an Academy Award.", "Academy Award",
     "What did Manchester by the Sea receive an?", "What did Manchester by the Sea receive?"),
    # a discourse word is dropped, not moved to the end
    ("yeah, he broke the record in 1972.", "the record", "What did he break in 1972, yeah?",
     "What did he break in 1972?"),
    # nothing is moved out of a relative clause or an expletive clause
    ("yoga is a group of practices that originated in ancient india.", "ancient india",
     "What is yoga a group of practices that originated in?", "Yoga is a group of practices that originated in what?"),
    ("there are only 49 zoos in captivity in china.", "captivity", "What are there only 49 zoos in in china?",
     "There are only 49 zoos in what in china?"),
    # a contracted auxiliary is written out at the front, and contractions are joined
    ("i've never been to the area.", "the area", "What 've i never been to?", "What have i never been to?"),
    ("it's been around for a while.", "a while", "What 's it been around for?", "What has it been around for?"),
])
def test_rule_qg_v3_fixes(sentence, answer, v2, v3):
    old = qgqa.RuleQG(rules="v2").generate([sentence], [answer])[0]
    new = qgqa.RuleQG(rules="v3").generate([sentence], [answer])[0]
    assert old[0][0] == v2 and new[0][0] == v3


def test_rule_v3_drops_bad_moved_questions_and_keeps_v2():
    from tfc.scorers.qgqa.qg_rules_clause import _bad_moved_question

    assert _bad_moved_question("Who?") and _bad_moved_question("What are there only 49 zoos in in china?")
    assert not _bad_moved_question("What did 1 1 mean?")      # repeated numbers are not a doubled word
    assert qgqa.RuleQG(rules="v3").identity() == "rule-qg-v3+" + qgqa.SPACY_MODEL
    for cls in (Q2Scorer, QAGSScorer):
        assert cls(qg_rules="v3").signature != cls().signature
        assert cls(qg_rules="v3").config.signature_fields()["qg_rules"] == "v3"
    # the scorers read the text detokenised under v3 only (candidates, QG and QA all see the same text)
    assert Q2Scorer(qg_rules="v3")._response_text(["i ' m here ."]) == ["i'm here."]
    assert Q2Scorer()._response_text(["i ' m here ."]) == ["i ' m here ."]
    assert QAGSScorer(qg_rules="v3")._response_text(["do n't"]) == ["don't"]


def test_v3_scorer_questions_come_from_the_detokenised_text(tiny):
    s = Q2Scorer(checkpoint=tiny["qa"], nli_checkpoint=tiny["nli"], qg_rules="v3", qa_null_threshold=-1e9)
    t = s.explain(["He broke Mark Spitz's record in 1972."], ["yeah , he broke another swimmer ' s record in 1972 ."])
    assert "another swimmer's record" in set(t["candidate"])
    assert not t["question"].str.contains(" ' ").any() and not t["question"].str.contains("yeah").any()
    old = Q2Scorer(checkpoint=tiny["qa"], nli_checkpoint=tiny["nli"], qa_null_threshold=-1e9).explain(
        ["He broke Mark Spitz's record in 1972."], ["yeah , he broke another swimmer ' s record in 1972 ."])
    assert "another swimmer ' s record" in set(old["candidate"])      # v2 reads the text as given


def test_qg_judgements_summary(tmp_path):
    from pathlib import Path

    from tfc.book.qg_judgements import JUDGEMENT_COLUMNS, summarise_qg_judgements

    p = tmp_path / "rules-v9.csv"
    pd.DataFrame([["a", "x", "c", "cand", "q?", 1, 1, ""], ["b", "x", "c", "cand", "q?", 0, 1, "bad"],
                  ["c", "y", "c", "cand", "q?", 1, 0, ""], ["d", "y", "c", "cand", "q?", 1, 1, ""]],
                 columns=JUDGEMENT_COLUMNS).to_csv(p, index=False)
    t = summarise_qg_judgements(p).set_index("source")
    assert t.loc["all", "questions"] == 4 and t.loc["all", "well_formed"] == 0.75
    assert t.loc["all", "answer_is_candidate"] == 0.75 and t.loc["all", "both"] == 0.5
    assert t.loc["x", "well_formed"] == 0.5 and (t["rules"] == "v9").all()
    bad = tmp_path / "rules-bad.csv"
    pd.DataFrame([["a", "x", "c", "cand", "q?", 2, 1, ""]], columns=JUDGEMENT_COLUMNS).to_csv(bad, index=False)
    with pytest.raises(ValueError, match="0 or 1"):
        summarise_qg_judgements(bad)
    # the committed judgements: 200 questions of rule version 2
    committed = Path(__file__).resolve().parents[1] / "results" / "qg_judgements" / "rules-v2.csv"
    c = summarise_qg_judgements(committed).set_index("source")
    assert c.loc["all", "questions"] == 200 and set(c.index) == {"vitaminc_test", "wecheck_dialogue", "all"}
    # rule version 3: the same draw (200) and a fresh one (seed 1, 100), each judged in full
    for name, n in (("rules-v3.csv", 200), ("rules-v3-seed1.csv", 100)):
        v3 = summarise_qg_judgements(committed.with_name(name)).set_index("source")
        assert v3.loc["all", "questions"] == n and v3.loc["all", "rules"].startswith("v3")
        assert v3.loc["vitaminc_test", "questions"] == v3.loc["wecheck_dialogue", "questions"] == n // 2


def test_xquad_frame_reads_the_mirror_and_refuses_bad_offsets(data_dir, tmp_path):
    from tfc.train.qa_set import COLUMNS, xquad_frame

    df = xquad_frame()
    assert len(df) == 1190 and df["pair"].nunique() == 240 and list(df.columns) == list(COLUMNS)
    assert (df["answer_start"] >= 0).all() and set(df["kind"]) == {"xquad"}
    for c, a, t in df[["context", "answer_start", "answer_text"]].head(50).itertuples(index=False):
        assert c[a:a + len(t)] == t
    bad = {"data": [{"paragraphs": [{"context": "Paris is in France.",
                                     "qas": [{"id": "x", "question": "Where?", "answers": [{"text": "France", "answer_start": 3}]}]}]}]}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="does not point at"):
        xquad_frame(tmp_path / "bad.json")
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ValueError, match="cannot read"):
        xquad_frame(tmp_path / "broken.json")


# ---------------------------------------------------------------------------------------------- document stride, dev curve
def test_encode_examples_document_stride_windows(tiny):
    """A long context read in overlapping windows: the window holding the answer points at exactly its
    characters, the others are no-answer windows (position 0); a no-answer row gives no-answer windows only;
    an answer longer than a window loses its row (every window dropped, never taught as no-answer)."""
    from transformers import AutoTokenizer

    from tfc.train.qa import encode_examples

    tok = AutoTokenizer.from_pretrained(tiny["qa"])
    filler = " ".join(f"word{i}" for i in range(120))
    ctx = filler + " Marie Curie won the prize in 1903 ."
    long_answer = " ".join(["nobel"] * 80)
    frame = pd.DataFrame({"question": ["When did she win?", "Who won?", "What?"],
                          "context": [ctx, ctx, "Intro " + long_answer + " end"],
                          "answer_text": ["1903", "", long_answer],
                          "answer_start": [ctx.index("1903"), -1, 6]})
    enc, st, en, keep, owner = encode_examples(tok, frame, 48, stride=16)
    w0 = np.flatnonzero(owner == 0)
    assert len(w0) > 2                                  # the 120-word filler needs several windows
    hit = [i for i in w0 if st[i] > 0]
    assert len(hit) >= 1
    for i in hit:
        offs = enc["offset_mapping"][i]
        assert ctx[offs[st[i]][0]:offs[en[i]][1]] == "1903"
    assert all(st[i] == en[i] == 0 for i in w0 if i not in hit)
    assert keep[w0].all() and keep[owner == 1].all() and (st[owner == 1] == 0).all()
    assert not keep[owner == 2].any()                   # an answer no window holds whole
    with pytest.raises(ValueError):
        encode_examples(tok, frame, 48, stride=48)


def test_long_contexts_keep_the_answer_offsets():
    from tfc.train.qa_set import build_qa_set, long_contexts

    train, held, rep = build_qa_set(pairs=_pairs(), seed=0, heldout_pairs=2, per_pair=3, long_frac=1.0)
    lng = train[train["kind"] == "long"]
    assert len(lng) > 0 and rep["rows_by_kind"]["long"] == len(lng) and "long" not in set(held["kind"])
    for c, s, a in zip(lng["context"], lng["answer_start"], lng["answer_text"]):
        assert c[s:s + len(a)] == a
    assert (lng["context"].str.len() > 0).all()
    assert not set(held["context"]) & set(train["context"])
    assert len(long_contexts(train, np.random.default_rng(0), 0.0)) == 0
    with pytest.raises(ValueError):
        build_qa_set(pairs=_pairs(), seed=0, heldout_pairs=2, long_frac=1.5)


def test_qa_dev_curve_and_stride_config(tiny, tmp_path):
    from tfc.train.qa import QATrainConfig, train_qa
    from tfc.train.qa_set import build_qa_set

    assert QATrainConfig().stride == 128 and QATrainConfig(max_length=96).stride == 32
    for bad in ({"doc_stride": 384}, {"doc_stride": -1}, {"eval_every": -1}):
        with pytest.raises(ValueError):
            QATrainConfig(**bad).validate()
    train, held, rep = build_qa_set(pairs=_pairs(), seed=0, heldout_pairs=2, per_pair=3, long_frac=0.5)
    dev = held[held["answer_start"] >= 0].head(4).assign(kind="xquad")
    s = train_qa(train, QATrainConfig(base=tiny["qa"], max_steps=4, batch_size=4, max_length=64, doc_stride=16,
                                      eval_every=2, log_every=1, num_threads=1),
                 out_dir=tmp_path / "m", heldout=held, dev=dev)
    curve = s["dev_curve"]
    assert [p["step"] for p in curve] == [2, 4]
    for p in curve:
        assert set(p) >= {"heldout", "xquad"} and 0 <= p["xquad"]["f1"] <= 1 and 0 <= p["heldout"]["f1"] <= 1
    assert s["mix"]["stride"] == 16 and s["mix"]["train_windows"] >= s["mix"]["train_rows"]
    assert s["mix"]["train_rows"] + s["train_rows_answer_truncated"] == len(train)
    # the last curve point reads the same model as the saved one: the same held-out F1
    assert curve[-1]["heldout"]["f1"] == pytest.approx(s["heldout_eval"]["f1"])


def test_q2_and_qags_time_their_stages():
    """Every pipeline stage a call goes through is timed (the runs report responses/s per stage)."""
    qa = {("What about Barack Obama here?", RESP): "Barack Obama", ("What about Paris here?", RESP): "Paris",
          ("What about Barack Obama here?", KNOW): "The president Obama", ("What about Paris here?", KNOW): "Paris"}
    s = _stub_q2(qa, {"What about Barack Obama here? Barack Obama": "entailment"})
    s.run([KNOW, KNOW], [RESP, "Yes!"])
    st = s.stage_seconds
    assert {"candidates", "qg", "qa_generated", "qa_grounding", "compare", "no_questions"} <= set(st)
    assert all(v >= 0 for v in st.values()) and set(st) <= set(s.STAGES)
    before = dict(st)
    s.run([KNOW], [RESP])
    assert all(s.stage_seconds[k] >= before[k] for k in before)        # seconds accumulate over calls


def test_snapshot_from_a_resumable_state(tiny, tmp_path):
    """A reader made from a run's saved state has exactly that state's weights and the run's tokenizer."""
    import torch
    from transformers import AutoModelForQuestionAnswering

    from tfc.train.qa import QATrainConfig, snapshot_from_state, train_qa
    from tfc.train.qa_set import build_qa_set

    train, held, rep = build_qa_set(pairs=_pairs(), seed=0, heldout_pairs=2, per_pair=3)
    train_qa(train, QATrainConfig(base=tiny["qa"], max_steps=2, batch_size=4, max_length=64, num_threads=1),
             out_dir=tmp_path / "run")
    m = AutoModelForQuestionAnswering.from_pretrained(tiny["qa"])
    torch.save({"model": m.state_dict(), "st": {"step": 7, "examples": 28, "train_s": 1.5}}, tmp_path / "state.pt")
    dev = held[held["answer_start"] >= 0].head(3).assign(kind="xquad")
    s = snapshot_from_state(tmp_path / "state.pt", tmp_path / "run", tmp_path / "snap", dev=dev, note="t")
    assert s["steps"] == 7 and s["examples_seen"] == 28 and s["dev_eval_human"]["rows"] == 3
    got = AutoModelForQuestionAnswering.from_pretrained(tmp_path / "snap").state_dict()
    assert all(torch.equal(got[k], v) for k, v in m.state_dict().items())
    assert (tmp_path / "snap" / "tokenizer.json").is_file()


def test_score_qgqa_cli_passes_settings_and_records(monkeypatch):
    from click.testing import CliRunner

    from tfc.cli.train_inhouse import score_qgqa_cmd
    from tfc.runs import qgqa as R

    seen, recs = [], []
    monkeypatch.setattr(R, "score_run", lambda name, d, **kw: seen.append((name, d, kw)) or
                        {"scorer": name, "dataset": d, "computed_rows": 1})
    monkeypatch.setattr(R, "append_record", recs.append)
    res = CliRunner().invoke(score_qgqa_cmd, ["qags", "--dataset", "qags_xsum", "--dataset", "qags_cnndm",
                                              "--set", "qg_rules=v1", "--set", "k=5", "--set", "fill_to_k=false"])
    assert res.exit_code == 0, res.output
    assert [(n, d) for n, d, _ in seen] == [("qags", "qags_xsum"), ("qags", "qags_cnndm")]
    assert seen[0][2] == {"sample": None, "batch_size": None, "qg_rules": "v1", "k": 5, "fill_to_k": False}
    assert len(recs) == 2
    bad = CliRunner().invoke(score_qgqa_cmd, ["q2", "--dataset", "q2", "--set", "novalue"])
    assert bad.exit_code != 0 and "KEY=VALUE" in bad.output
    # --dev-chosen: the dev-chosen configuration, with --set still over it; --up-to picks a sweep's step
    steps = {"options": {"checkpoint": "tfc/qa-minilm-v4", "filter_personal": True},
             "candidates": {"checkpoint": "tfc/qa-minilm-v4", "filter_personal": True, "candidate_rule": "q2-code"},
             "qg-rules": {"checkpoint": "tfc/qa-minilm-v4", "filter_personal": True, "candidate_rule": "q2-code",
                          "qg_rules": "v3"}}
    monkeypatch.setattr(R, "sweep_steps", lambda: steps)
    for args, want in ((["--dev-chosen"], steps["qg-rules"]),
                       (["--dev-chosen", "--set", "filter_personal=false"], {**steps["qg-rules"], "filter_personal": False}),
                       (["--dev-chosen", "--up-to", "options"], steps["options"]),
                       (["--dev-chosen", "--up-to", "candidates", "--set", "qg_rules=v2"],
                        {**steps["candidates"], "qg_rules": "v2"})):
        seen.clear()
        res = CliRunner().invoke(score_qgqa_cmd, ["q2", *args, "--dataset", "begin"])
        assert res.exit_code == 0, res.output
        assert seen[0][2] == {"sample": None, "batch_size": None, **want}
    # the steps --up-to offers are the sweeps'; a QAGS run, --up-to alone and an unknown step are refused
    up_to = next(p for p in score_qgqa_cmd.params if p.name == "up_to")
    assert list(up_to.type.choices) == list(R.SWEEPS)
    seen.clear()
    for args in (["qags", "--dev-chosen", "--dataset", "qags_xsum"], ["q2", "--up-to", "options", "--dataset", "q2"],
                 ["q2", "--dev-chosen", "--up-to", "nli-step", "--dataset", "q2"]):
        assert CliRunner().invoke(score_qgqa_cmd, args).exit_code != 0
    assert seen == []


def test_q2_sweep_cli_runs_the_named_sweep(monkeypatch):
    from click.testing import CliRunner

    from tfc.cli.train_inhouse import q2_sweep_cmd
    from tfc.runs import qgqa as R

    calls = []
    fake = {"auc": {"a": {"mean": 1.0}}, "current": "a", "chosen": "a"}
    for name in ("nli_step_sweep", "option_sweep", "candidate_sweep"):
        monkeypatch.setattr(R, name, lambda log, name=name: calls.append(name) or fake)
    for what, name in (("nli-step", "nli_step_sweep"), ("options", "option_sweep"), ("candidates", "candidate_sweep")):
        res = CliRunner().invoke(q2_sweep_cmd, [what, "--threads", "1"])
        assert res.exit_code == 0, res.output
        assert calls[-1] == name and '"chosen": "a"' in res.output
    assert CliRunner().invoke(q2_sweep_cmd, ["everything"]).exit_code != 0


def test_rules_v2_leading_space_before_a_fronted_modifier():
    """A response that starts with a space (BEGIN has them): spaCy's SPACE token is the only 'fronted
    modifier' left, which used to join to an empty string and crash v2's inversion; now no tail is added."""
    text = " Could you try microinjections of dopamine in the amygdala ?"      # a BEGIN response, as is
    doc = qgqa.parse([text])[0]
    c = next(c for c in qgqa.answer_candidates([text])[0] if c.text == "microinjections")
    qs = qgqa.clause_questions(doc, c.start, c.end)
    assert qs and all(q.strip() and "," not in q for q in qs)


def test_qa_training_dtype_reaches_the_engine_and_is_checked():
    from tfc.train.qa import QATrainConfig, engine_config

    assert engine_config(QATrainConfig()).dtype == "fp32"
    assert engine_config(QATrainConfig(dtype="bf16")).dtype == "bf16"
    with pytest.raises(ValueError, match="dtype"):
        engine_config(QATrainConfig(dtype="fp8")).validate()


def test_qa_runs_table_reads_records_and_the_cross_target(monkeypatch):
    from tfc import models
    from tfc.book.chapters import qags as T

    recs = {"tfc/a": {"steps": 10, "examples_seen": 160, "epochs_seen": 0.5, "stopped_by": "max_steps",
                      "train_seconds": 120.0, "examples_per_second": 1.3, "dtype": "bf16",
                      "heldout_eval": {"f1": 0.8, "by_kind": {"cross": {"f1": 0.71}, "contrast": {"f1": 0.4}}},
                      "dev_eval_human": {"f1": 0.3}},
            "tfc/b": {"steps": 5, "heldout_eval": {"f1": 0.5, "by_kind": {"cross": {"f1": 0.69}}}}}

    def fake(ckpt):
        if ckpt not in recs:
            raise FileNotFoundError(ckpt)
        return recs[ckpt]

    monkeypatch.setattr(models, "training_record", fake)
    t = T.qa_runs_table({"A": "tfc/a", "B": "tfc/b", "missing": "tfc/c"})
    assert t["run"].tolist() == ["A", "B"]
    assert t["cross F1"].tolist() == [71.0, 69.0] and t["cross F1 ≥ 70"].tolist() == [True, False]
    assert t.loc[0, "train minutes"] == 2.0 and t.loc[0, "XQuAD F1"] == 30.0 and np.isnan(t.loc[1, "XQuAD F1"])
    # where the dev curve levels off: no curve in these records, so the plateau columns are empty
    assert t["curve: best held-out F1"].isna().all() and t["curve: held-out F1 within 1 from step"].isna().all()
    recs["tfc/a"]["dev_curve"] = [{"step": 5, "heldout": {"f1": 0.7}, "xquad": {"f1": 0.2}},
                                  {"step": 10, "heldout": {"f1": 0.8}, "xquad": {"f1": 0.3}}]
    recs["tfc/a"]["device"] = "cuda: NVIDIA H100 80GB HBM3 (bf16)"
    t = T.qa_runs_table({"A": "tfc/a"})
    assert t.loc[0, "device"] == "cuda: NVIDIA H100 80GB HBM3"
    assert (t.loc[0, "curve: best held-out F1"], t.loc[0, "curve: held-out F1 within 1 from step"]) == (80.0, 10)
    assert (t.loc[0, "curve: best XQuAD F1"], t.loc[0, "curve: XQuAD F1 within 1 from step"]) == (30.0, 10)


def test_qa_round_trip_table_reads_the_record(monkeypatch):
    from tfc import models
    from tfc.book.chapters import qags as T

    rec = {"heldout_eval": {"f1": 0.9, "by_kind": {"cross": {"f1": 0.72}}}, "dev_eval_human": {"f1": 0.39},
           "weights_round_trip": {"cpu_reeval_after_round_trip": {"heldout_f1": 0.9, "cross_f1": 0.7203,
                                                                  "xquad_f1": 0.3928}}}

    def record(c):
        if c == "tfc/missing":
            raise FileNotFoundError(c)
        return {"tfc/x": rec, "tfc/old": {}}[c]

    monkeypatch.setattr(models, "training_record", record)
    t = T.qa_round_trip_table(["tfc/x", "tfc/old", "tfc/missing"]).set_index("metric")
    assert t["run"].unique().tolist() == ["tfc/x"]      # no re-reading or no record: left out
    assert t.loc["held-out F1", ["on the device", "re-read on a CPU"]].tolist() == pytest.approx([90.0, 90.0])
    assert t.loc["cross-text F1", "Δ"] == pytest.approx(0.03) and t.loc["XQuAD-English F1", "Δ"] == pytest.approx(0.28)
    assert T.qa_round_trip_table(["tfc/old"]).empty


def test_q2_wins_summary_counts_sets_with_the_interval_above_zero():
    import pandas as pd

    from tfc.book.chapters import q2 as T

    tr = pd.DataFrame({"dataset": ["begin", "q2", "dialfact"], "diff_vs_f1": [2.0, 1.0, -3.0],
                       "ci_low": [0.5, -0.2, -5.0]})
    got = T.q2_wins_summary(tr)
    assert (got["wins"], got["scored"], got["target"], got["met"], got["not_scored"]) == (1, 3, 2, False, [])
    tr.loc[1, "ci_low"] = 0.1
    assert (T.q2_wins_summary(tr)["wins"], T.q2_wins_summary(tr)["met"]) == (2, True)
    got = T.q2_wins_summary(tr.iloc[:1])
    assert (got["wins"], got["scored"], got["not_scored"]) == (1, 1, ["q2", "dialfact"])
    got = T.q2_wins_summary(pd.DataFrame())
    assert (got["wins"], got["scored"], got["met"]) == (0, 0, False)
    # a non-dialogue set neither counts as scored nor wins
    other = pd.DataFrame({"dataset": ["frank"], "diff_vs_f1": [5.0], "ci_low": [1.0]})
    assert (T.q2_wins_summary(other)["wins"], T.q2_wins_summary(other)["scored"]) == (0, 0)


def test_variant_pair_sets_two_variants_side_by_side():
    import pandas as pd

    from tfc.book.chapters import qags as T

    t3 = pd.DataFrame({"variant": ["v2", "v3", "half"], "quality": [69.5, 80.0, float("nan")],
                       "qags_cnndm_pearson": [44.46, 44.52, float("nan")], "qags_xsum_pearson": [14.45, 12.96, 10.0]})
    pair = T.variant_pair(t3, "v3", "v2")
    assert pair.index.tolist() == ["qags_cnndm", "qags_xsum"] and list(pair.columns) == ["a", "b", "a_minus_b"]
    assert pair["a"].tolist() == [44.52, 12.96] and pair["b"].tolist() == [44.46, 14.45]
    assert pair["a_minus_b"].tolist() == pytest.approx([0.06, -1.49])
    half = T.variant_pair(t3, "half", "v2")
    assert np.isnan(half.loc["qags_cnndm", "a_minus_b"]) and half.loc["qags_xsum", "a_minus_b"] == pytest.approx(-4.45)
    with pytest.raises(KeyError):
        T.variant_pair(t3, "v9", "v2")
    # beside the paper's QAGS row of Table 1: 17.49 on XSum (../shared/reference)
    t2 = pd.DataFrame({"variant": ["base", "new"], "qags_cnndm_pearson": [40.0, float("nan")],
                       "qags_xsum_pearson": [12.0, 17.0]})
    paper = T.variant_pair(t2, "new", "base", paper="QAGS-T1")
    assert paper.loc["qags_xsum", "paper"] == pytest.approx(17.49)
    assert paper.loc["qags_xsum", "a_minus_paper"] == pytest.approx(-0.49) and np.isnan(paper.loc["qags_cnndm", "a"])


def test_nine_set_signatures_names_only_complete_signatures():
    from types import SimpleNamespace

    from tfc.book.chapters import q2 as T

    a, b = SimpleNamespace(signature="q2.a"), SimpleNamespace(signature="q2.b")
    assert T.nine_set_signatures({"first": a, "second": b}, ["q2.b", "other"]) == {"second": "q2.b"}
    assert T.nine_set_signatures({"first": a}, ["q2.b"]) == {}


def test_nli_step_choice_keeps_the_current_step_within_the_margin():
    from tfc.runs.qgqa import choose_step

    auc = {"cur": {"mean": 80.0}, "a": {"mean": 80.5}, "b": {"mean": 79.0}}
    assert choose_step(auc, "cur", 0.5) == "cur"                 # a gain of exactly the margin is not enough
    auc["a"]["mean"] = 80.51
    assert choose_step(auc, "cur", 0.5) == "a"
    assert choose_step({"cur": {"mean": 90.0}, "a": {"mean": 60.0}}, "cur", 0.5) == "cur"
    with pytest.raises(KeyError, match="current step"):
        choose_step({"a": {"mean": 1.0}}, "cur", 0.5)


def test_option_sweep_records_every_option_and_chooses_by_the_rule(tiny, monkeypatch, tmp_path):
    import json

    import pandas as pd

    from tfc.runs import aggregation as A
    from tfc.runs import qgqa as R

    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path))
    frame = pd.DataFrame({"grounding": ["Marie Curie won the Nobel Prize in 1903 in Stockholm."] * 2
                                      + ["The cat sat on the mat in Paris."] * 2,
                          "generated": ["Marie Curie won the prize in 1903.", "Marie Curie won it in 1911.",
                                        "The cat sat in Paris.", "The dog sat in Rome."],
                          "label": [1, 0, 1, 0]})
    monkeypatch.setattr(R, "_dev_frames", lambda rows, seed: {"begin_test": frame, "loo_anli": frame.iloc[::-1]})
    monkeypatch.setattr(R, "VARIANT_Q2_RETRAINED", {"checkpoint": tiny["qa"], "nli_checkpoint": tiny["nli"],
                                                    "qa_null_threshold": -1e9, "validation": "f1", "validation_f1": 0.0})
    cands = {"cur": {}, "ents": {"candidate_kinds": ["ents"]}}
    assert R.load_option_sweep() is None and R.sweep_steps()["options"] == R.VARIANT_Q2_RETRAINED
    rec = R.option_sweep(candidates=cands, log=lambda *_: None)
    assert rec["form"] == "nli"                          # no NLI-step record here: Q² + NLI is read
    assert set(rec["auc"]) == set(rec["auc_other_form"]) == set(cands) == set(rec["signatures"])
    for v in rec["auc"].values():
        assert v["mean"] == pytest.approx((v["begin_test"] + v["loo_anli"]) / 2, abs=0.01)
    assert rec["chosen"] == R.choose_step(rec["auc"], "cur", A.MARGIN)
    assert rec["signatures"]["ents"] != rec["signatures"]["cur"]
    assert R.load_option_sweep() == json.loads(json.dumps(rec))
    # the chosen options come back as config values (tuples), so the options step's signature is the sweep's own
    chosen = R.sweep_steps()["options"]
    assert R.scorer_for("q2", **chosen).signature == rec["signatures"][rec["chosen"]]
    # with the NLI step recorded as the F1 form, the options are read in that form
    (tmp_path / R.QA_GPU[4:]).mkdir()
    R.nli_sweep_path().write_text(json.dumps({"chosen": R.F1_FORM}))
    rec_f1 = R.option_sweep(candidates={"cur": {}}, log=lambda *_: None, write=False)
    assert rec_f1["form"] == "f1" and rec_f1["auc"]["cur"] == rec["auc_other_form"]["cur"]


def test_candidate_sweep_and_its_step(tiny, monkeypatch, tmp_path):
    import pandas as pd

    from tfc.runs import aggregation as A
    from tfc.runs import qgqa as R

    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path))
    frame = pd.DataFrame({"grounding": ["Marie Curie won the Nobel Prize in 1903 in Stockholm."] * 2,
                          "generated": ["i think she won the prize in 1903.", "i think she won it in 1911."],
                          "label": [1, 0]})
    monkeypatch.setattr(R, "_dev_frames", lambda rows, seed: {"begin_test": frame, "loo_anli": frame})
    monkeypatch.setattr(R, "VARIANT_Q2_RETRAINED", {"checkpoint": tiny["qa"], "nli_checkpoint": tiny["nli"],
                                                    "qa_null_threshold": -1e9, "validation": "f1", "validation_f1": 0.0})
    # before any sweep: the authors' rule (a fidelity fix, the current choice before the sweep) over the options step
    assert R.load_candidate_sweep() is None
    steps = R.sweep_steps()
    assert steps["candidates"] == {**steps["options"], "candidate_rule": "q2-code"}
    rec = R.candidate_sweep(log=lambda *_: None)
    assert R.CANDIDATE_CANDIDATES[rec["current"]] == {"candidate_rule": "q2-code"}
    assert rec["base"] == steps["options"] and set(rec["auc"]) == set(R.CANDIDATE_CANDIDATES)
    assert rec["chosen"] == R.choose_step(rec["auc"], rec["current"], A.MARGIN)
    assert R.candidate_sweep_path().is_file() and not R.option_sweep_path().exists()   # its own record
    assert R.scorer_for("q2", **R.sweep_steps()["candidates"]).signature == rec["signatures"][rec["chosen"]]
    # tfc's rule is the options step's own signature: the default rule stays out of the hash
    tfc_rule = next(k for k, v in R.CANDIDATE_CANDIDATES.items() if v == {"candidate_rule": "tfc"})
    assert rec["signatures"][tfc_rule] == R.scorer_for("q2", **steps["options"]).signature
    assert "earlier" not in rec
    # a rerun on other dev frames keeps the earlier record inside the new one; a rerun on the same frames keeps
    # the list as it is
    monkeypatch.setattr(R, "_dev_frames", lambda rows, seed: {k: frame for k in rows})
    rec2 = R.candidate_sweep(rows={"begin_test": 2, "loo_anli": 2, "dialfact_test": 2}, log=lambda *_: None)
    assert set(rec2["rows"]) == {"begin_test", "loo_anli", "dialfact_test"}
    assert [e["rows"] for e in rec2["earlier"]] == [rec["rows"]] and "earlier" not in rec2["earlier"][0]
    rec3 = R.candidate_sweep(rows={"begin_test": 2, "loo_anli": 2, "dialfact_test": 2}, log=lambda *_: None)
    assert rec3["earlier"] == rec2["earlier"] and R.load_candidate_sweep()["earlier"] == rec2["earlier"]


def test_qg_rule_sweep_and_the_dev_chosen_configuration(tiny, monkeypatch, tmp_path):
    import pandas as pd

    from tfc.runs import aggregation as A
    from tfc.runs import qgqa as R

    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path))
    frame = pd.DataFrame({"grounding": ["Marie Curie won the Nobel Prize in 1903 in Stockholm."] * 2,
                          "generated": ["yeah , she won the prize in 1903 .", "she won it in 1911 ."],
                          "label": [1, 0]})
    monkeypatch.setattr(R, "_dev_frames", lambda rows, seed: {k: frame for k in rows})
    monkeypatch.setattr(R, "VARIANT_Q2_RETRAINED", {"checkpoint": tiny["qa"], "nli_checkpoint": tiny["nli"],
                                                    "qa_null_threshold": -1e9, "validation": "f1", "validation_f1": 0.0})
    # before the sweep: version 3 (a fix of judged flaws, the current choice before the sweep) over the candidate step
    assert R.load_qg_rule_sweep() is None
    steps = R.sweep_steps()
    assert list(steps) == list(R.SWEEPS) == ["options", "candidates", "qg-rules"]
    assert R.dev_chosen() == steps["qg-rules"] == {**steps["candidates"], "qg_rules": "v3"}
    assert R.dev_chosen("candidates") == steps["candidates"]
    with pytest.raises(ValueError, match="unknown sweep"):
        R.dev_chosen("nli-step")
    rec = R.qg_rule_sweep(log=lambda *_: None)
    assert R.QG_RULE_CANDIDATES[rec["current"]] == {"qg_rules": "v3"} and rec["base"] == steps["candidates"]
    assert rec["rows"] == {k: 2 for k in R.CANDIDATE_SWEEP_ROWS}           # the candidate sweep's three frames
    assert rec["chosen"] == R.choose_step(rec["auc"], rec["current"], A.MARGIN)
    assert R.qg_rule_sweep_path().is_file() and not R.candidate_sweep_path().exists()
    assert R.scorer_for("q2", **R.dev_chosen()).signature == rec["signatures"][rec["chosen"]]
    # version 2 is the candidate step itself
    v2 = next(k for k, v in R.QG_RULE_CANDIDATES.items() if v == {"qg_rules": "v2"})
    assert rec["signatures"][v2] == R.scorer_for("q2", **steps["candidates"]).signature


def test_the_dev_chosen_configuration_keeps_the_committed_signatures():
    """The committed sweep records compose to the configurations the committed Q² caches were scored with: each
    step's signature is its sweep's recorded signature for the chosen candidate, and the three are pinned."""
    from tfc.runs import qgqa as R

    pinned = {"options": "q2.rule-em-nli.185925d6e7", "candidates": "q2.rule-em-nli.8a508f2fe4",
              "qg-rules": "q2.rule-em-nli.05108130a4"}
    steps = R.sweep_steps()
    for name, (loader, _) in R.SWEEPS.items():
        rec = getattr(R, loader)()
        assert rec is not None, f"no committed record of the {name} sweep"
        sig = R.scorer_for("q2", **steps[name]).signature
        assert sig == rec["signatures"][rec["chosen"]] == pinned[name]
    assert R.scorer_for("q2", **R.dev_chosen()).signature == pinned["qg-rules"]
    assert steps["qg-rules"] == {**R.VARIANT_Q2_RETRAINED, "candidate_rule": "q2-code", "qg_rules": "v3"}


def test_dev_frames_follow_a_sweep_record(monkeypatch):
    from tfc.runs import qgqa as R

    seen = []
    monkeypatch.setattr(R, "_dev_frames", lambda rows, seed: seen.append((rows, seed)) or {})
    R.dev_frames({"rows": {"begin_test": 10, "loo_anli": 5}, "seed": 3})
    R.dev_frames(None)
    assert seen == [({"begin_test": 10, "loo_anli": 5}, 3), (None, 0)]


def test_dev_frames_by_name(monkeypatch):
    from tfc.runs import aggregation as A
    from tfc.runs import qgqa as R

    monkeypatch.setattr(A, "dialfact_dev", lambda n, seed: ("dialfact", n, seed))
    monkeypatch.setattr(A, "begin_dev", lambda n, seed: ("begin", n, seed))
    out = R._dev_frames({"dialfact_test": 5, "begin_test": 7}, 1)
    assert list(out.items()) == [("dialfact_test", ("dialfact", 5, 1)), ("begin_test", ("begin", 7, 1))]
    with pytest.raises(ValueError, match="unknown dev frame"):
        R._dev_frames({"fever": 3}, 0)


def test_question_outcomes_record_counts_every_used_question(tiny, monkeypatch, tmp_path):
    import pandas as pd

    import tfc.data
    from tfc.runs import qgqa as R

    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path))
    frame = pd.DataFrame({"grounding": ["Marie Curie won the Nobel Prize in 1903 in Stockholm."] * 3,
                          "generated": ["i think she won the prize in 1903.", "Marie Curie won it in 1911.", "Yes!"],
                          "label": [1, 0, 1]})
    monkeypatch.setattr(tfc.data, "load", lambda name: frame)
    cfg = {"checkpoint": tiny["qa"], "nli_checkpoint": tiny["nli"], "qa_null_threshold": -1e9,
           "validation": "f1", "validation_f1": 0.0}
    rec = R.question_outcomes("toy", config=cfg)
    s = R.scorer_for("q2", **cfg)
    used = s.explain(frame["grounding"].tolist(), frame["generated"].tolist())
    assert sum(c["questions"] for c in rec["counts"]) == int(used["used"].sum()) > 0
    assert {c["outcome"] for c in rec["counts"]} <= set(R.OUTCOMES)
    assert {c["kind"] for c in rec["counts"]} <= set(R.CANDIDATE_KINDS)
    assert rec["responses"] == {"0": 1, "1": 2} and rec["signature"] == s.signature
    assert R.load_question_outcomes("toy") == rec
    assert R.load_question_outcomes("other") is None
