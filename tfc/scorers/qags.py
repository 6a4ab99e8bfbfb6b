"""QAGS (Wang, Cho and Lewis, 2020): ask questions about the summary, answer them on the summary and on
the article, compare the answers.

As published (appendix B of the paper), per summary (generated text) and article (grounding):

1. **candidates**: ``n_candidates`` = 10 named entities and noun chunks -- a random 10 when there are
   more, random duplicates to fill up when there are fewer (``candidate_fill="sample"``);
   ``"all"`` keeps every candidate once;
2. **QG**: beam search (``qg_num_beams`` = 10), keeping ``qg_num_return`` = 10 questions per candidate
   with their scores (the rule-based backend gives at most 2 per candidate: the moved and the in-situ
   question, scored 0 and -1);
3. **filters**: cut each question after its first "?", drop duplicates, drop questions with fewer than
   ``min_question_tokens`` = 3 tokens, drop those the QA model finds unanswerable on the summary
   (``filter_unanswerable``); ``filter_answer_mismatch`` also drops those whose summary answer differs
   from the candidate (the stricter rule in the paper's main text; off by default, as in the appendix);
4. **K**: the ``k`` = 20 most probable questions (QG score, ties in candidate order); when fewer remain,
   random filtered questions are repeated to reach K (``fill_to_k``, as the paper says);
5. **answers** on the article and on the summary, compared by SQuAD token F1 (a no-answer on the
   article scores 0), averaged over the K questions.

A summary with no question left after filtering (or no answer candidate) gets the score of the
``no_questions`` policy, recorded in the signature (:class:`tfc.scorers.qgqa.QGQAConfigMixin`):
``"zero"`` (default: nothing could be checked, no credit) or ``"nli"`` (the end-to-end NLI score with
``nli_checkpoint``); such rows have ``aux_n_questions`` = 0. The paper does not say what it did with them
(its fill-to-K rule needs at least one question). ``checkpoint`` names the extractive QA model;
``qg_rules`` picks the rule-QG version (``"v2"`` default, the fixed rules; ``"v3"`` the summary read detokenised and version 2's judged
flaws fixed; ``"v1"`` the first rules). ``aux_n_chunks`` / ``aux_n_generated_chunks`` count the QA
windows over the article / the summary (long texts are read in full); ``aux_n_generated`` counts the questions
written (after the length/duplicate filters) and ``aux_n_self_consistent`` those the reader answers, on the
summary, with exactly their own candidate (their ratio is the QG-quality measure of the QAGS Table 3 analogue). The cache also keeps ``aux_mean_k<K>`` for K in :data:`AUX_KS` below ``k``:
the mean F1 over the K best distinct questions (no fill), the QAGS Table 4 ablation without rescoring. Random choices use a generator keyed by (``seed``, summary text), so scores do
not depend on batching. The XSum quirk (the original scored XSum summaries against the reference
summary prepended to the article) needs the reference summaries: :func:`prepend_reference` builds such
groundings where a data set has them.

``explain(...)`` returns the per-question table (candidate, question, answer on the summary, answer on
the article, F1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tfc.scorers.base import Scorer, ScorerConfig
from tfc.scorers.qgqa import (DEFAULT_QA_CHECKPOINT, QGQAConfigMixin, QGQAScorerBase, answer_candidates, example_rng,
                               squad_em, squad_f1)

AUX_KS = (1, 2, 5, 10)   # prefix means kept in the cache (``aux_mean_k<K>``) for the K ablation
STEPS = ("qags-code", "tfc")
SELECTED = ["example", "candidate", "question", "qg_score", "answer_generated"]


@dataclass(frozen=True)
class QAGSConfig(QGQAConfigMixin, ScorerConfig):
    checkpoint: str = DEFAULT_QA_CHECKPOINT   # the extractive QA model
    qa_revision: str | None = None
    qa_max_length: int = 384
    qa_stride: int = 128
    qa_max_answer_tokens: int = 30
    qa_null_threshold: float = 0.0
    qg_backend: str = "rule"            # "rule" | "seq2seq"
    qg_checkpoint: str | None = None
    qg_num_beams: int = 10
    qg_num_return: int = 10
    candidate_kinds: tuple[str, ...] = ("ents", "noun_chunks")
    n_candidates: int = 10
    candidate_fill: str = "sample"      # "sample" (sample / duplicate to n_candidates) | "all"
    truncate_at_question_mark: bool = True
    drop_duplicates: bool = True
    min_question_tokens: int = 3
    filter_unanswerable: bool = True
    filter_answer_mismatch: bool = False
    k: int = 20
    fill_to_k: bool = True
    seed: int = 0
    dtype: str = "float32"
    batch_size: int = 32
    device: str | None = None
    qg_template: str = "answer: {answer}  context: {context}"   # the seq2seq QG input: see QGQAConfigMixin
    # `no_questions` ("zero" | "nli", QGQAConfigMixin); `nli_checkpoint` and `nli_label_names` are read by
    # no_questions="nli" only; `qg_rules` is the rule-QG rule set (tfc.scorers.qgqa.RULE_SETS)
    no_questions: str = "zero"
    nli_checkpoint: str = "tfc/nli-minilm"
    nli_label_names: tuple[str, ...] | None = None
    qg_rules: str = "v2"
    steps: str = "qags-code"            # "qags-code" (qa_utils.filter_qsts, step for step) | "tfc" (see the module doc)

    def __post_init__(self):
        super().__post_init__()
        if self.candidate_fill not in ("sample", "all"):
            raise ValueError("candidate_fill must be 'sample' or 'all'")
        if self.steps not in STEPS:
            raise ValueError(f"steps must be one of {STEPS}; got {self.steps!r}")
        self._check_qg()
        if min(self.k, self.n_candidates, self.qg_num_beams, self.qg_num_return) < 1:
            raise ValueError("k, n_candidates, qg_num_beams and qg_num_return must be >= 1")


def pick_candidates(cands: list, n: int, fill: str, rng: np.random.Generator) -> list:
    """QAGS's candidate rule: ``n`` of them, sampled without replacement when there are more, all of them
    plus random duplicates when fewer (``fill="sample"``); ``fill="all"`` returns ``cands`` unchanged."""
    if fill == "all" or not cands:
        return list(cands)
    if len(cands) >= n:
        idx = sorted(rng.choice(len(cands), size=n, replace=False).tolist())
        return [cands[i] for i in idx]
    extra = rng.choice(len(cands), size=n - len(cands), replace=True).tolist()
    return list(cands) + [cands[i] for i in extra]


def filter_questions(items: list[tuple[str, str, float]], min_tokens: int = 3, truncate: bool = True,
                     dedupe: bool = True) -> list[tuple[str, str, float]]:
    """(candidate, question, score) items -> the heuristic filters: cut after the first "?", drop exact
    duplicate questions (first kept), drop questions under ``min_tokens`` white-space tokens."""
    out, seen = [], set()
    for cand, q, s in items:
        if truncate and "?" in q:
            q = q[: q.index("?") + 1]
        q = q.strip()
        if len(q.split()) < min_tokens:
            continue
        if dedupe:
            if q in seen:
                continue
            seen.add(q)
        out.append((cand, q, s))
    return out


def select_k(items: list, k: int, fill: bool, rng: np.random.Generator, key=lambda x: x[2]) -> list:
    """The ``k`` items with the highest score (stable: ties keep their order); with ``fill`` and fewer than
    ``k`` items, random items (with replacement) are appended until there are ``k``."""
    order = sorted(range(len(items)), key=lambda i: -key(items[i]))
    top = [items[i] for i in order[:k]]
    if fill and top and len(top) < k:
        top += [top[i] for i in rng.choice(len(top), size=k - len(top), replace=True).tolist()]
    return top


def filter_qsts(items: list[tuple[str, str, float]], answers: list[str], k: int, rng: np.random.Generator,
                min_tokens: int = 3, answerable: bool = True, matching: bool = False,
                fill: bool = True) -> list[tuple[str, str, float]]:
    """``qa_utils.filter_qsts`` of QAGS's code, step for step, on one summary's generated (candidate, question,
    score) ``items`` and the summary's ``answers`` to them as generated: keep the answered ones (``answerable``;
    with ``matching`` only those answered exactly with their candidate), sort by score (stable, most probable
    first), cut each after its first "?" and drop one without "?", a repeat of a kept question or one under
    ``min_tokens`` white-space tokens, take the first ``k``; with ``fill``, when fewer remain, add a random sample
    without replacement of *all* generated questions (uncut, unfiltered) up to ``k`` (the reference's
    ``random.sample`` raises when there are too few; here all of them are added then)."""
    kept = [(it, a) for it, a in zip(items, answers) if (a or not answerable) and (a == it[0] or not matching)]
    kept = sorted(kept, key=lambda x: -x[0][2])
    out, seen = [], set()
    for (cand, q, score), _ in kept:
        if "?" not in q:
            continue
        q = q[: q.index("?") + 1]
        if q in seen or len(q.split()) < min_tokens:
            continue
        seen.add(q)
        out.append((cand, q, score))
    out = out[:k]
    if fill and len(out) < k and items:
        draw = rng.choice(len(items), size=min(k - len(out), len(items)), replace=False)
        out += [items[int(i)] for i in draw]
    return out


def prepend_reference(groundings, references) -> list[str]:
    """QAGS's XSum input: the reference summary, then the article (a missing reference leaves it as is)."""
    return [f"{r.strip()} {g}" if isinstance(r, str) and r.strip() else g for g, r in zip(groundings, references)]


class QAGSScorer(QGQAScorerBase, Scorer):
    name = "qags"
    config_cls = QAGSConfig
    output_range = (0.0, 1.0)

    def tag(self):
        return f"{'rule' if self.config.qg_backend == 'rule' else 's2s'}-k{self.config.k}"

    def _read_on_summary(self, t: pd.DataFrame, generations, batch_size, progress):
        """Answer each question on its summary and apply the filters; returns the kept questions and, per
        summary, how many questions came back with exactly their own candidate (self-consistent)."""
        c = self.config
        if not len(t):
            return t, np.zeros(len(generations), dtype=np.int32)
        with self.stage("qa_generated"):
            on_gen = self.qa.answer(t["question"].tolist(), [generations[i] for i in t["example"]], batch_size,
                                    progress)
        t["answer_generated"] = [r.text for r in on_gen]
        consistent = np.array([bool(squad_em(a, b)) for a, b in zip(t["candidate"], t["answer_generated"])])
        keep = np.ones(len(t), dtype=bool)
        if c.filter_unanswerable:
            keep &= t["answer_generated"].astype(bool).to_numpy()
        if c.filter_answer_mismatch:
            keep &= consistent
        n_cons = np.bincount(t["example"].to_numpy(int)[consistent], minlength=len(generations)).astype(np.int32)
        return t[keep], n_cons

    def _select_tfc(self, t: pd.DataFrame, rngs) -> tuple[pd.DataFrame, list[int]]:
        """tfc's K: the ``k`` most probable filtered questions of each summary, kept ones repeated up to ``k``."""
        c = self.config
        sel, ranks = [], []
        for i in range(len(rngs)):
            g = t[t["example"] == i] if len(t) else t
            top = select_k(list(g.itertuples(index=False)), c.k, c.fill_to_k, rngs[i], key=lambda x: x.qg_score)
            sel += top
            ranks += list(range(len(top)))
        return pd.DataFrame(sel, columns=t.columns if len(t) else SELECTED), ranks

    def _select_reference(self, picked, qmap, generations, rngs, batch_size, progress):
        """QAGS's code: every generated question answered on the summary as generated, then :func:`filter_qsts`;
        the kept questions (cut) and the fillers (as generated) are answered on the summary again for the F1."""
        c = self.config
        raw = [[(cd.text, q, sc) for cd in cs for q, sc in qmap[(i, cd)][: c.qg_num_return]]
               for i, cs in enumerate(picked)]
        flat = [(i, it) for i, its in enumerate(raw) for it in its]
        with self.stage("qa_generated"):
            got = self.qa.answer([it[1] for _, it in flat], [generations[i] for i, _ in flat], batch_size, progress)
        answers = [[] for _ in raw]
        for (i, _), r in zip(flat, got):
            answers[i].append(r.text)
        n_cons = np.array([sum(bool(squad_em(it[0], a)) for it, a in zip(raw[i], answers[i])) for i in range(len(raw))],
                          dtype=np.int32)
        rows, ranks = [], []
        for i in range(len(raw)):
            top = filter_qsts(raw[i], answers[i], c.k, rngs[i], c.min_question_tokens, c.filter_unanswerable,
                              c.filter_answer_mismatch, c.fill_to_k)
            rows += [(i, cd, q, sc) for cd, q, sc in top]
            ranks += list(range(len(top)))
        s = pd.DataFrame(rows, columns=SELECTED[:4])
        # a kept question already asked as generated (no text after its "?") keeps that answer; the reader's answer
        # to a pair does not depend on the call it is asked in
        known = {(i, it[1]): r.text for (i, it), r in zip(flat, got)}
        new = list(dict.fromkeys(k for k in zip(s["example"], s["question"]) if k not in known))
        if new:
            with self.stage("qa_generated"):
                on = self.qa.answer([q for _, q in new], [generations[i] for i, _ in new], batch_size, progress)
            known.update({k: r.text for k, r in zip(new, on)})
        s["answer_generated"] = [known[k] for k in zip(s["example"], s["question"])]
        return s, ranks, n_cons

    def run(self, groundings, generations, batch_size=32, progress=False):
        self.load()
        c = self.config
        generations = self._response_text(generations)
        with self.stage("candidates"):
            cands = answer_candidates(generations, c.candidate_kinds)
        rngs = [example_rng(c.seed, h) for h in generations]
        picked = [pick_candidates(cs, c.n_candidates, c.candidate_fill, r) for cs, r in zip(cands, rngs)]
        # duplicated candidates give the same questions: generate once per distinct candidate
        flat = list(dict.fromkeys((i, cd) for i, cs in enumerate(picked) for cd in cs))
        with self.stage("qg"):
            gen_qs = self.qg.generate([generations[i] for i, _ in flat], [cd for _, cd in flat], progress=progress)
        qmap = dict(zip(flat, gen_qs))
        rows = []
        for i, cs in enumerate(picked):
            items = [(cd.text, q, s) for cd in cs for q, s in qmap[(i, cd)][: c.qg_num_return]]
            for cand, q, s in filter_questions(items, c.min_question_tokens, c.truncate_at_question_mark,
                                               c.drop_duplicates):
                rows.append((i, cand, q, s))
        cols = ["example", "candidate", "question", "qg_score", "answer_generated", "answer_grounding", "f1"]
        t = pd.DataFrame(rows, columns=["example", "candidate", "question", "qg_score"])
        # questions written, and those the reader answers with their own candidate on the summary (QG quality)
        n_gen = np.bincount(t["example"].to_numpy(int), minlength=len(generations)).astype(np.int32) if len(t) \
            else np.zeros(len(generations), dtype=np.int32)
        if c.steps == "qags-code":
            s, ranks, n_cons = self._select_reference(picked, qmap, generations, rngs, batch_size, progress)
        else:
            t, n_cons = self._read_on_summary(t, generations, batch_size, progress)
            s, ranks = self._select_tfc(t, rngs)
        if len(s):
            # each distinct question is answered once on the article (duplicates from fill_to_k reuse it)
            with self.stage("qa_grounding"):
                on_art = self.qa.answer(s["question"].tolist(), [groundings[i] for i in s["example"]], batch_size,
                                        progress)
            s["answer_grounding"] = [r.text for r in on_art]
            # QAGS's f1_score: two empty answers agree (1); tfc gives a no-answer on the article 0
            s["f1"] = [squad_f1(a, b) if b or c.steps == "qags-code" else 0.0
                       for a, b in zip(s["answer_generated"], s["answer_grounding"])]
        else:
            s = pd.DataFrame(columns=cols)
        out = np.full(len(generations), np.nan)
        n_q = np.zeros(len(generations), dtype=np.int32)
        # QAGS Table 4 from one run: the mean over the first K' < K distinct questions (rank order, no fill)
        prefix = {kk: np.full(len(generations), np.nan) for kk in AUX_KS if kk < c.k}
        if len(s):
            s["_rank"] = ranks
        for i, g in s.groupby("example"):
            out[int(i)] = float(g["f1"].mean())
            n_q[int(i)] = int(g["question"].nunique())
            first = g.sort_values("_rank").drop_duplicates("question")
            for kk in prefix:
                prefix[kk][int(i)] = float(first["f1"].iloc[:kk].mean())
        none = np.flatnonzero(n_q == 0)
        with self.stage("no_questions"):
            out[none] = self._no_question_scores(groundings, generations, none)
        longest = [""] * len(generations)
        for i, q in zip(s["example"], s["question"]):
            if len(q) > len(longest[int(i)]):
                longest[int(i)] = q
        self._aux_keep = {"aux_n_questions": n_q, "aux_n_candidates": np.array([len(x) for x in cands], dtype=np.int32),
                          "aux_n_generated": n_gen, "aux_n_self_consistent": n_cons,
                          **{f"aux_mean_k{kk}": v for kk, v in prefix.items()},
                          "aux_n_chunks": self._windows(longest, groundings),
                          "aux_n_generated_chunks": self._windows(longest, generations)}
        return out, s[cols].reset_index(drop=True)

    def _score(self, groundings, generations, batch_size, progress):
        return self.run(groundings, generations, batch_size, progress)[0]

    def explain(self, groundings, generations, batch_size: int | None = None) -> pd.DataFrame:
        from tfc.scorers.base import validate_inputs

        g, h = validate_inputs(groundings, generations)
        return self.run(g, h, batch_size or self.config.batch_size)[1]
