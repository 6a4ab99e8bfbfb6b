"""tfc's as-published Q² and QAGS steps against values the authors' code computed on fixed inputs
(tests/golden/reference_values_qgqa.json: the functions of orhonovich/q-squared and W4ngatang/qags at the commits it
names, run verbatim on fixed inputs; the runner copies the authors' code, so it is not committed). No peer environment
is needed here.

The models (QG, QA, NLI) are not offline: both sides read the same fixed tables (the golden file's ``fixture``), so
what is compared is each pipeline's own code -- candidates, validation, token F1, the NLI step, the no-question rule,
filtering, fill to K and averaging. Where tfc's as-published preset computes something else than the reference code,
the test is ``xfail(strict=True)`` with the difference as its reason: it is recorded, and it turns into a failure
("XPASS(strict)") the day tfc follows the reference, so the mark must then be removed. tfc's scorer code is not
changed for these: that would change the signatures of committed scores.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from tfc.scorers import get
from tfc.scorers.q2 import is_personal
from tfc.scorers.qags import pick_candidates
from tfc.scorers.qgqa import QAResult, answer_candidates, candidates_from_doc, normalize_answer, parse, squad_f1

REF = json.loads((Path(__file__).parent / "golden" / "reference_values_qgqa.json").read_text())
Q2, QAGS = REF["q2"], REF["qags"]


def _xfail(reason: str):
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)


# reasons, each naming the reference function and tfc's
IN_OUR = ("Q²'s clean_text (pipeline/score.py) also deletes the words 'in' and 'our' and collapses only spaces; "
          "tfc reads answers with SQuAD's normalisation (tfc.scorers.qgqa.normalize_answer), which keeps them")
BOTH_EMPTY = ("Q²'s f1_score returns 0 when either side is empty after clean_text; tfc's squad_f1 scores two empty "
              "sides 1 (SQuAD's rule)")
CANDIDATES = ("Q²'s get_answer_candidates drops noun chunks equal to an entity or earlier candidate up to case and "
              "drops the candidate 'i'; as-published candidate_rule='tfc' keeps both (candidate_rule='q2-code' is the "
              "authors' rule)")
NLI_STRINGS = ("run_nli.get_nli_label ends premise and hypothesis with '.' (question + ' ' + answer + '.'); tfc's "
               "Q2Scorer.run passes them without it")
NO_QUESTION = ("run_nli.scores_with_nli scores a response without a valid question by end-to-end NLI (premise = the "
               "knowledge lower-cased, hypothesis = the response lower-cased; entailment 1, neutral 0.5, "
               "contradiction 0); as-published no_questions='zero' gives 0")
NSUBJPASS = ("run_pipeline.non_personal looks at dep 'nsubj' only; tfc's is_personal also counts a passive subject "
             "('nsubjpass': 'What was I given?')")
BEAM_SINGLE = ("the README's run (--gen_method beam --q_per_cand single) keeps the first valid beam per candidate; tfc "
               "has no such option: qg_num_return=k keeps every valid beam")
SPAN = ("question_answering.get_answer takes the arg-max start and the arg-max end independently (an end before the "
        "start gives '', a start on [CLS] gives a span from [CLS], the question's tokens can be returned); tfc's "
        "ExtractiveQA takes the best start <= end pair in the context and abstains only when the null score wins")
NO_QMARK = ("qa_utils.filter_qsts drops a question without '?'; tfc's filter_questions keeps it uncut")
DUP_PROB = ("qa_utils.filter_qsts sorts by probability before removing duplicates (the most probable copy stays); "
            "tfc drops duplicates first, in candidate order, keeping the first copy's score")
RAW_ANSWERABLE = ("qa_utils.filter_qsts drops questions the QA model cannot answer as generated (before the cut at "
                  "'?'); tfc asks the QA model the cut question")
FILL = ("qa_utils.filter_qsts fills up to K with random.sample of all generated questions (uncut, unfiltered, "
        "without replacement; an unanswerable filler answered '' on both texts scores F1 1); tfc repeats kept "
        "questions (with replacement)")


def _quirky(s: str) -> bool:
    return bool(re.search(r"\b(in|our)\b", s.lower())) or "\t" in s or "\n" in s


# ---------------------------------------------------------------------------------------------- Q²: text, F1
def _split(rows, quirky):
    return [r for r in rows if quirky(r)], [r for r in rows if not quirky(r)]


CLEAN_Q, CLEAN_PLAIN = _split(Q2["clean_text"], lambda r: _quirky(r[0]))


def _f1_quirky(r):
    return _quirky(r[0]) or _quirky(r[1]) or (not normalize_answer(r[0]) and not normalize_answer(r[1]))


F1_Q, F1_PLAIN = _split(Q2["f1_score"], _f1_quirky)


def test_q2_clean_text_equals_squad_normalisation_elsewhere():
    assert CLEAN_PLAIN and all(normalize_answer(s) == out for s, out in CLEAN_PLAIN)


@_xfail(IN_OUR)
def test_q2_clean_text_on_in_and_our():
    assert [normalize_answer(s) for s, _ in CLEAN_Q] == [out for _, out in CLEAN_Q]


def test_q2_token_f1_equals_the_reference_elsewhere():
    assert len(F1_PLAIN) >= 5
    for g, p, v in F1_PLAIN:
        got = squad_f1(g, p) if p else 0.0        # Q2Scorer.run: an empty knowledge answer scores 0
        assert got == pytest.approx(v, abs=1e-12), (g, p)


@_xfail(f"{IN_OUR}; {BOTH_EMPTY}")
def test_q2_token_f1_on_in_our_and_empty_sides():
    assert [squad_f1(g, p) for g, p, _ in F1_Q] == pytest.approx([v for _, _, v in F1_Q], abs=1e-12)


def _valid(cand, ans):
    return get("q2", preset="as-published")._valid(cand, "" if ans is None else ans)


VAL_Q, VAL_PLAIN = _split(Q2["filter_questions"],
                          lambda r: _quirky(r[0]) or _quirky(r[1] or "") or (r[1] == "" and not normalize_answer(r[0])))


def test_q2_validation_is_the_references_exact_match_elsewhere():
    assert get("q2", preset="as-published").config.validation == "em"
    assert VAL_PLAIN and all(_valid(c, a) == (out == "VALID") for c, a, out in VAL_PLAIN)


@_xfail(f"{IN_OUR}; run_pipeline.filter_questions also passes an empty answer '' (not the null '[CLS]') when the "
        "candidate cleans to ''")
def test_q2_validation_on_in_our_and_empty_answers():
    assert [_valid(c, a) for c, a, _ in VAL_Q] == [out == "VALID" for _, _, out in VAL_Q]


# ---------------------------------------------------------------------------------------------- Q²: candidates
def _cands(rule):
    texts = [t for t, _ in Q2["get_answer_candidates"]]
    return [[c.text for c in candidates_from_doc(d, rule=rule)] for d in parse(texts)]


def test_q2_authors_candidate_rule_equals_get_answer_candidates():
    assert _cands("q2-code") == [c for _, c in Q2["get_answer_candidates"]]


@_xfail(CANDIDATES)
def test_q2_as_published_candidates_equal_get_answer_candidates():
    assert _cands(get("q2", preset="as-published").config.candidate_rule) == [c for _, c in Q2["get_answer_candidates"]]


# ---------------------------------------------------------------------------------------------- Q²: personal filter
PASSIVE = {"What was I given?", "Where was I born?", "What are you known for?"}


def test_q2_personal_filter_equals_non_personal_elsewhere():
    rows = [r for r in Q2["non_personal"] if r[0] not in PASSIVE]
    assert [not is_personal(d) for d in parse([q for q, _ in rows])] == [v for _, v in rows]


@_xfail(NSUBJPASS)
def test_q2_personal_filter_on_passive_subjects():
    rows = [r for r in Q2["non_personal"] if r[0] in PASSIVE]
    assert [not is_personal(d) for d in parse([q for q, _ in rows])] == [v for _, v in rows]


# ---------------------------------------------------------------------------------------------- Q²: span decoding
class _Out:
    def __init__(self, s, e):
        self.start_logits, self.end_logits = s, e


def _reader(vocab, tmp_path, case):
    import torch
    from transformers import BertTokenizerFast

    from tfc.scorers.qgqa import ExtractiveQA

    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizerFast(vocab=str(tmp_path / "vocab.txt"), do_lower_case=True, model_max_length=512)

    def model(input_ids, **kw):   # the case's fixed logits (the golden file's), one unpadded row
        assert input_ids.shape[0] == 1 and input_ids[0].tolist() == case["input_ids"]
        return _Out(torch.tensor([case["start_logits"]]), torch.tensor([case["end_logits"]]))

    c = get("q2", preset="as-published").config
    qa = ExtractiveQA("<fixed logits>", max_length=c.qa_max_length, stride=c.qa_stride,
                      max_answer_tokens=c.qa_max_answer_tokens, null_threshold=c.qa_null_threshold)
    qa._attach(model, tok, torch.device("cpu"))
    return qa


SPAN_CASES = {x["name"]: x for x in Q2["span_decoding"]["cases"]}


@pytest.mark.parametrize("name", [
    "clear-span", "null",
    pytest.param("end-before-start", marks=_xfail(SPAN)),
    pytest.param("start-at-null", marks=_xfail(SPAN)),
    pytest.param("argmax-in-question", marks=_xfail(SPAN)),
])
def test_q2_span_decoding_equals_get_answer(name, tmp_path):
    case = SPAN_CASES[name]
    got = _reader(Q2["span_decoding"]["vocab"], tmp_path, case).answer([case["question"]], [case["context"]],
                                                                        batch_size=1)[0]
    want = case["reference_answer"]
    assert (got.text if got.has_answer else "[CLS]") == want     # '[CLS]' is the reference's null answer


# ---------------------------------------------------------------------------------------------- Q²: pipeline (stubs)
TABLES = Q2["fixture"]["tables"]


class _QG:
    def __init__(self):
        self.t = {(r, c): qs for r, c, qs in TABLES["qg"]}

    def generate(self, texts, answers, progress=False):
        return [[(q, -float(i)) for i, q in enumerate(self.t.get((t, a.text), [f"What about {a.text}?"]))]
                for t, a in zip(texts, answers)]


class _QA:
    def __init__(self):
        self.t = {(q, c): a for q, c, a in TABLES["qa"]}

    def answer(self, questions, contexts, batch_size=32, progress=False):
        out = []
        for q, c in zip(questions, contexts):
            a = self.t.get((q, c)) or ""
            out.append(QAResult(a, max(c.find(a), 0), max(c.find(a), 0) + len(a), 1.0) if a
                       else QAResult("", -1, -1, -1.0))
        return out


class _NLI:
    def __init__(self):
        self.t = {(q, e, c): lab for q, e, c, lab in TABLES["nli"]}
        self.seen = []

    def labels(self, premises, hypotheses):
        self.seen += [[p, h] for p, h in zip(premises, hypotheses)]
        return [next((lab for (q, e, c), lab in self.t.items() if p == f"{q} {e}" and h == f"{q} {c}"), "neutral")
                for p, h in zip(premises, hypotheses)]


def _q2(**overrides):
    s = get("q2", preset="as-published", **overrides)
    s.qg, s.qa, s.nli, s._loaded = _QG(), _QA(), _NLI(), True
    return s


def _q2_scores(fixture: str, **overrides):
    fx = Q2["fixture"][fixture]
    s = _q2(**overrides)
    return s.run(fx["knowledge"], fx["responses"])[0], s


def test_q2_pipeline_as_published_equals_the_reference_on_plain_inputs():
    """Greedy QG, personal questions kept (the paper's base row): validation, F1, the NLI step (entailment 1,
    contradiction 0, neutral keeps F1; none at F1 1 or without an answer) and the mean match."""
    got, _ = _q2_scores("plain")
    np.testing.assert_allclose(got, Q2["plain_greedy"]["q2"], atol=1e-12, rtol=0)


QUIRK_IDS = Q2["fixture"]["quirks"]["ids"]
QUIRK_REASON = {"i-candidate": CANDIDATES, "case-duplicate": CANDIDATES, "in-our-validation": IN_OUR,
                "in-knowledge-f1": IN_OUR, "no-valid-question": NO_QUESTION}


@pytest.mark.parametrize("row", [pytest.param(r, marks=_xfail(QUIRK_REASON[r])) for r in QUIRK_IDS])
def test_q2_pipeline_as_published_equals_the_reference(row):
    got, _ = _q2_scores("quirks")
    i = QUIRK_IDS.index(row)
    assert got[i] == pytest.approx(Q2["quirks_greedy"]["q2"][i], abs=1e-12)


def test_q2_authors_candidate_rule_fixes_the_candidate_rows():
    got, _ = _q2_scores("quirks", candidate_rule="q2-code")
    for row in ("i-candidate", "case-duplicate"):
        i = QUIRK_IDS.index(row)
        assert got[i] == pytest.approx(Q2["quirks_greedy"]["q2"][i], abs=1e-12)


@_xfail(NLI_STRINGS)
def test_q2_nli_premise_and_hypothesis_equal_the_reference():
    _, s = _q2_scores("plain")
    assert sorted(map(tuple, Q2["plain_greedy"]["nli_asked"])) == sorted(map(tuple, s.nli.seen))


@_xfail(BEAM_SINGLE)
def test_q2_readme_run_beam_single_remove_personal():
    got, _ = _q2_scores("plain", qg_num_beams=5, qg_num_return=5, filter_personal=True)
    np.testing.assert_allclose(got, Q2["plain_beam_single_remove_personal"]["q2"], atol=1e-12, rtol=0)


# ---------------------------------------------------------------------------------------------- QAGS: text, F1
def test_qags_normalize_answer_equals_the_reference():
    assert [normalize_answer(s) for s, _ in QAGS["normalize_answer"]] == [o for _, o in QAGS["normalize_answer"]]


def test_qags_token_f1_equals_the_reference():
    for g, p, v in QAGS["f1_score"]:
        assert squad_f1(g, p) == pytest.approx(v, abs=1e-12), (g, p)


# ---------------------------------------------------------------------------------------------- QAGS: candidates
def test_qags_candidates_equal_extract_ans():
    texts = [t for t, _ in QAGS["extract_ans"]]
    got = [sorted({c.text for c in cs}) for cs in answer_candidates(texts)]
    assert got == [a for _, a in QAGS["extract_ans"]]


def test_qags_candidate_sampling_follows_the_references_rule():
    """prepare_ans_conditional_data: n = 10 answers per text, all candidates plus random duplicates when fewer,
    a random 10 without repetition when more (the draws themselves are random on both sides)."""
    n = get("qags", preset="as-published").config.n_candidates
    pool = {t: a for t, a in QAGS["extract_ans"]}
    rng = np.random.default_rng(0)
    for t, sampled in QAGS["answers_sampled"]:
        cands = answer_candidates([t])[0]
        ours = [c.text for c in pick_candidates(cands, n, "sample", rng)]
        for picks in (sampled, ours):
            assert len(picks) == n and set(picks) <= set(pool[t])
            if len(pool[t]) < n:
                assert set(picks) == set(pool[t])
            else:
                assert len(set(picks)) == n


# ---------------------------------------------------------------------------------------------- QAGS: pipeline (stubs)
QT = QAGS["fixture"]["tables"]
DOC_IDS = [d["id"] for d in QAGS["fixture"]["docs"]]


class _QAGSQG:
    def __init__(self):
        self.t = {(s, c): qs for s, c, qs in QT["qg"]}

    def generate(self, texts, answers, progress=False):
        return [[(q, float(p)) for q, p in self.t[(t, a.text)]] for t, a in zip(texts, answers)]


class _QAGSQA(_QA):
    def __init__(self):
        self.t = {(q, c): a for q, c, a in QT["qa"]}


@pytest.fixture(scope="module")
def qags_run():
    s = get("qags", preset="as-published")
    assert s.config.k == QAGS["pipeline"]["k"] and s.config.n_candidates == QAGS["pipeline"]["n_ans"]
    s.qg, s.qa, s._loaded = _QAGSQG(), _QAGSQA(), True
    docs = QAGS["fixture"]["docs"]
    return s.run([d["article"] for d in docs], [d["summary"] for d in docs])


QAGS_REASON = {"no-question-mark": NO_QMARK, "duplicate-probabilities": DUP_PROB,
               "answerable-after-the-cut": RAW_ANSWERABLE, "fill-to-k": FILL}


@pytest.mark.parametrize("doc", [d if d == "plain" else pytest.param(d, marks=_xfail(QAGS_REASON[d])) for d in DOC_IDS])
def test_qags_pipeline_as_published_equals_the_reference(doc, qags_run):
    """Answer sampling, QG lookup, answerability on the summary, the cut at '?', duplicates, fewer than 3 tokens,
    the K = 20 most probable, F1 of the summary's and the article's answers, the mean over K."""
    scores, table = qags_run
    i = DOC_IDS.index(doc)
    kept = table[table["example"] == i]
    assert list(dict.fromkeys(kept["question"])) == QAGS["pipeline"]["questions"][i]
    assert scores[i] == pytest.approx(QAGS["pipeline"]["scores"][i], abs=1e-12)
