"""Q² (Honovich et al., 2021): question generation and answering over the knowledge, with an NLI fallback.

Per response (generated text) and its knowledge (grounding), as published:

1. **candidates**: all named entities and noun chunks of the response (:func:`tfc.scorers.qgqa.answer_candidates`);
   ``candidate_rule="q2-code"`` follows the authors' code exactly (noun chunks compared case-insensitively
   with the entities, the candidate "i" dropped), ``"q2-code-no-pronouns"`` also drops lone-pronoun chunks
   (a stand-in for the coreference step below); ``"tfc"``, the default, is what the committed runs used;
2. **QG**: one question per candidate, greedy (``qg_num_beams=1``); the beam variant keeps the top
   ``qg_num_return`` beams;
3. **validation**: the QA model answers each question *on the response*; the question is valid when
   that answer matches the candidate -- ``validation="em"`` (exact match after SQuAD normalisation,
   the original code) or ``"f1"`` (token F1 >= ``validation_f1``, 0.54 as in TRUE's re-implementation);
4. **QA on the knowledge**, then per valid question: no answer -> 0; else token F1 between the
   candidate and the knowledge answer; with ``use_nli`` and F1 < 1, an NLI model reads premise =
   question + knowledge answer, hypothesis = question + candidate: entailment -> 1, contradiction -> 0,
   neutral -> keep the F1;
5. **score**: the mean over valid questions.

A response with **no valid question** gets the score of the ``no_questions`` policy (recorded in the
signature; :class:`tfc.scorers.qgqa.QGQAConfigMixin`): ``"zero"`` (default; 0.0, the alternative the
paper reports next to leaving such responses out) or ``"nli"`` (the end-to-end NLI score with
``nli_checkpoint``, TRUE's fallback). The scorer never returns NaN (the paper itself left such responses
out of its correlations, as mostly chit-chat). The cache keeps ``aux_n_valid`` (valid questions; 0 marks a row the policy
filled), ``aux_n_candidates``, ``aux_n_no_answer`` (valid questions without an answer on the knowledge),
``aux_f1_only`` (the score without the NLI step, over the same questions; without a valid question NaN under
tfc's steps, and under ``steps="q2-code"`` the row's score, as ``run_nli.py`` gives ``q2_no_nli`` the fallback too),
``aux_true_q2`` / ``aux_n_valid_true`` (TRUE's re-implementation: questions validated by token F1 >=
``validation_f1`` instead of exact match, a superset answered in the same run; NaN without such a
question, where TRUE falls back to an end-to-end NLI score)
and ``aux_n_chunks`` / ``aux_n_generated_chunks`` (QA windows over the knowledge / the response: long
texts are read in full, in overlapping windows) per row, so coverage, "% no answer", Q² vs Q²+NLI (Q²
Table 2) come from one run.

``checkpoint`` names the extractive **QA** model; the NLI model is ``nli_checkpoint``. ``qg_rules`` picks the
rule-based QG rule set (``"v2"`` fixes the flaws listed in :mod:`tfc.scorers.qgqa`; ``"v3"`` reads the response
detokenised and fixes version 2's judged flaws; ``"v1"`` gives the first committed caches' questions).

Options from the paper's appendix: ``filter_personal`` (drop questions whose subject is *I*/*you* or
that contain *my*/*your* as a possessive) and ``discard_unanswerable`` (Q²*, for DNLI: drop
no-answer questions when at least one valid question has an answer).

``explain(groundings, generations)`` returns the per-question table (candidate, question, answer on the
response, valid, answer on the knowledge, F1, NLI label, sub-score). The original used coreference
resolution for pronouns (appendix A); that step is not reproduced (no offline coreference model).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tfc.scorers.base import Scorer, ScorerConfig
from tfc.scorers.qgqa import (DEFAULT_QA_CHECKPOINT, NLIComparer, QGQAConfigMixin, QGQAScorerBase, answer_candidates,
                               check_candidate_rule, parse, q2_clean_text, q2_f1, squad_em, squad_f1)

PERSONAL_SUBJECTS = {"i", "you"}
PERSONAL_POSSESSIVES = {"my", "your"}


@dataclass(frozen=True)
class Q2Config(QGQAConfigMixin, ScorerConfig):
    checkpoint: str = DEFAULT_QA_CHECKPOINT   # the extractive QA model
    qa_revision: str | None = None
    qa_max_length: int = 384
    qa_stride: int = 128
    qa_max_answer_tokens: int = 30
    qa_null_threshold: float = 0.0
    qg_backend: str = "rule"               # "rule" | "seq2seq"
    qg_checkpoint: str | None = None       # e.g. mrm8488/t5-base-finetuned-question-generation-ap
    qg_num_beams: int = 1                  # 1 = greedy (as published)
    qg_num_return: int = 1                 # questions kept per candidate (beam variant: top-k)
    candidate_kinds: tuple[str, ...] = ("ents", "noun_chunks")
    candidate_rule: str = "q2-code"        # "q2-code" (the authors' code) | "tfc" | "q2-code-no-pronouns"
    validation: str = "em"                 # "em" (original code) | "f1" (TRUE's re-implementation)
    validation_f1: float = 0.54
    use_nli: bool = True
    nli_checkpoint: str = "tfc/sent-minilm-v8"   # the strongest in-house NLI model (3-way head)
    nli_label_names: tuple[str, ...] | None = None
    filter_personal: bool = False          # "+filter personal" (Q² Table 7)
    discard_unanswerable: bool = False     # Q²* (Q² Table 5)
    dtype: str = "float32"
    batch_size: int = 32
    device: str | None = None
    qg_template: str = "answer: {answer}  context: {context}"   # the seq2seq QG input: see QGQAConfigMixin
    no_questions: str = "nli-label"        # responses without a valid question (QGQAConfigMixin): the code's label
    qg_rules: str = "v2"                   # the rule-QG rule set (tfc.scorers.qgqa.RULE_SETS)
    steps: str = "q2-code"                 # "q2-code" (the authors' code, step for step) | "tfc" (see STEPS)
    q_per_candidate: str = "single"        # "single" (the README's run: the first valid question per candidate) | "multi"

    def __post_init__(self):
        super().__post_init__()
        check_candidate_rule(self.candidate_rule)
        if self.validation not in ("em", "f1"):
            raise ValueError("validation must be 'em' or 'f1'")
        if not 0 <= self.validation_f1 <= 1:
            raise ValueError("validation_f1 must lie in [0, 1]")
        self._check_qg()
        if self.qg_num_return < 1 or self.qg_num_beams < 1:
            raise ValueError("qg_num_beams and qg_num_return must be >= 1")
        if self.steps not in STEPS:
            raise ValueError(f"steps must be one of {STEPS}; got {self.steps!r}")
        if self.q_per_candidate not in ("single", "multi"):
            raise ValueError("q_per_candidate must be 'single' or 'multi'")


STEPS = ("q2-code", "tfc")


def is_personal(doc, passive: bool = True) -> bool:
    """True for a question about a personal statement: subject I/you, or possessive my/your. ``passive=False`` is
    ``run_pipeline.non_personal``, which looks at active subjects (``nsubj``) only."""
    subjects = ("nsubj", "nsubjpass") if passive else ("nsubj",)
    for t in doc:
        low = t.lower_
        if low in PERSONAL_SUBJECTS and t.dep_ in subjects:
            return True
        if low in PERSONAL_POSSESSIVES and t.dep_ == "poss":
            return True
    return False


def nli_fallback(f1: float, label: str | None) -> float:
    """Q²'s NLI update of one sub-score: entailment -> 1, contradiction -> 0, anything else -> F1."""
    if label == "entailment":
        return 1.0
    if label == "contradiction":
        return 0.0
    return float(f1)


def fill_no_valid(scores, value: float = 0.0) -> np.ndarray:
    """Scores with NaN (a row without a valid question, e.g. in ``aux_f1_only``) replaced by ``value``
    (the paper's alternative to leaving them out is 0; the ``"zero"`` policy gives the same scores directly)."""
    s = np.asarray(scores, dtype=float).copy()
    s[np.isnan(s)] = value
    return s


class Q2Scorer(QGQAScorerBase, Scorer):
    name = "q2"
    config_cls = Q2Config
    output_range = (0.0, 1.0)

    def tag(self):
        c = self.config
        parts = ["rule" if c.qg_backend == "rule" else "s2s", c.validation]
        if c.use_nli:
            parts.append("nli")
        return "-".join(parts)

    def _load(self):
        super()._load()
        c = self.config
        self.nli = (NLIComparer(c.nli_checkpoint, c.nli_label_names, c.device, c.batch_size)
                    if c.use_nli or c.no_questions == "nli-label" else None)
        self._nli_scorer = None

    def _span_rule(self) -> str:
        return "argmax" if self.config.steps == "q2-code" else "best-pair"

    def _valid(self, cand: str, ans: str, has_answer: bool = True) -> bool:
        """run_pipeline.filter_questions (``steps="q2-code"``: ``[CLS]`` is no match, else the cleaned texts equal,
        so an empty answer matches a candidate that cleans to nothing) or tfc's SQuAD exact match; ``validation="f1"``
        compares by token F1 instead."""
        c = self.config
        if c.steps == "q2-code":
            if not has_answer:
                return False
            if c.validation == "em":
                return q2_clean_text(cand) == q2_clean_text(ans)
            return q2_f1(cand, ans) >= c.validation_f1
        if not ans:
            return False
        if c.validation == "em":
            return bool(squad_em(cand, ans))
        return squad_f1(cand, ans) >= c.validation_f1

    def _f1(self, cand: str, ans: str, has_answer: bool) -> float:
        """A valid question's F1 between its candidate and the knowledge's answer (no answer: 0)."""
        if not has_answer:
            return 0.0
        if self.config.steps == "q2-code":
            return q2_f1(cand, ans)
        return squad_f1(cand, ans) if ans else 0.0

    def _nli_pair(self, question: str, cand: str, ans: str, f1: float) -> tuple[str, str] | None:
        """The NLI step's (premise, hypothesis), or None where the step is not taken: run_nli.scores_with_nli asks
        only for 0 <= F1 < 1 and an answer that is neither empty nor holds ``[CLS]``, and ends both texts with '.'
        (get_nli_label); tfc asks for F1 < 1 and an answer, without the full stops."""
        if self.config.steps == "q2-code":
            cls = getattr(getattr(self.qa, "tok", None), "cls_token", None) or "[CLS]"
            if not (0 <= f1 < 1) or ans == "" or cls in ans:
                return None
            return f"{question} {ans}.", f"{question} {cand}."
        if not ans or f1 >= 1.0:
            return None
        return f"{question} {ans}", f"{question} {cand}"

    def run(self, groundings: list[str], generations: list[str], batch_size: int = 32,
            progress: bool = False) -> tuple[np.ndarray, pd.DataFrame]:
        """(scores, per-question table) for already validated inputs (see :meth:`explain`)."""
        self.load()
        c = self.config
        generations = self._response_text(generations)
        with self.stage("candidates"):
            cands = answer_candidates(generations, c.candidate_kinds, c.candidate_rule)
        flat = [(i, cd) for i, cs in enumerate(cands) for cd in cs]
        with self.stage("qg"):
            gen_qs = self.qg.generate([generations[i] for i, _ in flat], [cd for _, cd in flat], progress=progress)
        rows = []  # example, slot (the candidate's position), candidate, question, qg_score
        for slot, ((i, cd), qs) in enumerate(zip(flat, gen_qs)):
            for q, s in qs[: c.qg_num_return]:
                if q.strip():
                    rows.append((i, slot, cd.text, q, s))
        cols = ["example", "candidate", "question", "qg_score", "answer_generated", "valid", "valid_true",
                "answer_grounding", "f1", "nli", "sub_score"]
        if not rows:
            return self._aggregate(groundings, generations, pd.DataFrame(columns=cols), cands)
        t = pd.DataFrame(rows, columns=["example", "slot", "candidate", "question", "qg_score"])
        self._validate(t, generations, batch_size, progress)
        self._compare(t, groundings, batch_size, progress)
        return self._aggregate(groundings, generations, t[cols], cands)

    def _validate(self, t: pd.DataFrame, generations, batch_size, progress) -> None:
        """Answer each question on its response and mark it ``valid`` (and ``valid_true``, TRUE's F1 rule)."""
        c = self.config
        with self.stage("qa_generated"):
            on_gen = self.qa.answer(t["question"].tolist(), [generations[i] for i in t["example"]], batch_size,
                                    progress)
        t["answer_generated"] = [r.text for r in on_gen]
        t["valid"] = [self._valid(cd, r.text, r.has_answer) for cd, r in zip(t["candidate"], on_gen)]
        # TRUE's re-implementation validates by token F1 >= validation_f1 instead of exact match; those questions
        # (a superset of the EM-valid ones) are answered and compared too, for the aux_true_q2 column
        t["valid_true"] = [bool(a) and squad_f1(cd, a) >= c.validation_f1
                           for cd, a in zip(t["candidate"], t["answer_generated"])]
        if c.filter_personal:
            with self.stage("qg"):
                personal = self.personal(t["question"].tolist())
            t["valid"] = t["valid"] & ~personal
            t["valid_true"] = t["valid_true"] & ~personal
        if c.q_per_candidate == "single":   # run_pipeline.get_response_score: `if single: break` after a valid one
            first = t[t["valid"]].groupby("slot").head(1).index
            t["valid"] = t.index.isin(first)

    def personal(self, questions: list[str]) -> np.ndarray:
        """Which questions the personal filter drops (:func:`is_personal`; the authors' code looks at active
        subjects only)."""
        return np.array([is_personal(d, passive=self.config.steps != "q2-code") for d in parse(list(questions))],
                        dtype=bool)

    def _compare(self, t: pd.DataFrame, groundings, batch_size, progress) -> None:
        """Answer the valid questions on the knowledge; F1 with the candidate, then the NLI step."""
        t["answer_grounding"] = ""
        t["f1"] = np.nan
        t["nli"] = None
        t["sub_score"] = np.nan
        v = t.index[t["valid"] | t["valid_true"]]
        if not len(v):
            return
        with self.stage("qa_grounding"):
            on_g = self.qa.answer(t.loc[v, "question"].tolist(), [groundings[i] for i in t.loc[v, "example"]],
                                  batch_size, progress)
        t.loc[v, "answer_grounding"] = [r.text for r in on_g]
        f1 = [self._f1(cd, r.text, r.has_answer) for cd, r in zip(t.loc[v, "candidate"], on_g)]
        t.loc[v, "f1"] = f1
        t.loc[v, "sub_score"] = f1
        if self.nli is None or not self.config.use_nli:
            return
        asks = {k: self._nli_pair(t.at[k, "question"], t.at[k, "candidate"], r.text, f) if r.has_answer else None
                for k, r, f in zip(v, on_g, f1)}
        need = [k for k, pair in asks.items() if pair is not None]
        with self.stage("compare"):
            labels = self.nli.labels([asks[k][0] for k in need], [asks[k][1] for k in need])
        for k, lab in zip(need, labels):
            t.at[k, "nli"] = lab
            t.at[k, "sub_score"] = nli_fallback(t.at[k, "f1"], lab)

    def _aggregate(self, groundings, generations, t: pd.DataFrame, cands) -> tuple[np.ndarray, pd.DataFrame]:
        c = self.config
        n = len(generations)
        out = np.full(n, np.nan)
        n_valid = np.zeros(n, dtype=np.int32)
        n_noans = np.zeros(n, dtype=np.int32)
        f1_only = np.full(n, np.nan)   # Q² without the NLI step, from the same questions (Q² Table 2)
        # TRUE's variant: the mean over the F1-validated questions (NaN without one: TRUE falls back to NLI)
        true_q2 = np.full(n, np.nan)
        n_valid_true = np.zeros(n, dtype=np.int32)
        t = t.copy()
        t["used"] = False
        if len(t):
            for i, g in t[t["valid_true"].astype(bool)].groupby("example"):
                true_q2[i] = float(g["sub_score"].mean())
                n_valid_true[i] = len(g)
            for i, g in t[t["valid"].astype(bool)].groupby("example"):
                ans = g["answer_grounding"].astype(bool)
                keep = g[ans] if (c.discard_unanswerable and ans.any()) else g
                out[i] = float(keep["sub_score"].mean())
                n_valid[i] = len(keep)
                n_noans[i] = int((~keep["answer_grounding"].astype(bool)).sum())
                f1_only[i] = float(keep["f1"].astype(float).mean())
                t.loc[keep.index, "used"] = True
        none = np.flatnonzero(n_valid == 0)
        with self.stage("no_questions"):
            out[none] = self._no_question_scores(groundings, generations, none)
        if c.steps == "q2-code":    # run_nli.py gives q2_no_nli the same end-to-end fallback as the score
            f1_only[none] = out[none]
        # QA windows over each text (for the row's longest question): long texts are read in full
        longest = [""] * n
        for i, q in zip(t["example"], t["question"]):
            if len(q) > len(longest[int(i)]):
                longest[int(i)] = q
        self._aux_keep = {"aux_n_valid": n_valid, "aux_n_candidates": np.array([len(x) for x in cands], dtype=np.int32),
                          "aux_n_no_answer": n_noans, "aux_f1_only": f1_only,
                          "aux_true_q2": true_q2, "aux_n_valid_true": n_valid_true,
                          "aux_n_chunks": self._windows(longest, groundings),
                          "aux_n_generated_chunks": self._windows(longest, generations)}
        return out, t

    def _score(self, groundings, generations, batch_size, progress):
        return self.run(groundings, generations, batch_size, progress)[0]

    def explain(self, groundings, generations, batch_size: int | None = None) -> pd.DataFrame:
        """The per-question table of a call (``example`` indexes the inputs; ``used`` marks the questions
        that entered the mean)."""
        from tfc.scorers.base import validate_inputs

        g, h = validate_inputs(groundings, generations)
        return self.run(g, h, batch_size or self.config.batch_size)[1]
