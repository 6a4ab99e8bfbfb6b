"""The shared scorer base of QAGS and Q²: the config rules both configs mix in (:class:`QGQAConfigMixin`) and the
scorer mixin that builds the QG, QA (and NLI) components and puts their identities into the signature
(:class:`QGQAScorerBase`)."""
from __future__ import annotations

import time
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from tfc.scorers.qgqa.candidates import SPACY_MODEL
from tfc.scorers.qgqa.qa import ExtractiveQA
from tfc.scorers.qgqa.qg import RULE_SETS, QuestionGenerator, RuleQG, question_generator
from tfc.scorers.qgqa.qg_rules_clause import reading_text

DEFAULT_QA_CHECKPOINT = "tfc/qa-minilm"
NO_QUESTIONS = ("zero", "nli", "nli-label")
# run_nli.py's end-to-end fallback: the NLI label of (knowledge, response), both lower-cased, read as a score
E2E_LABEL_SCORES = {"entailment": 1.0, "contradiction": 0.0}
E2E_OTHER_SCORE = 0.5


class QGQAConfigMixin:
    """Shared rules of the QAGS and Q² configs (mixed into their frozen dataclasses).

    **checkpoint.** ``checkpoint`` is the main model field of every model scorer; here it names the
    extractive **QA** model (the one model both metrics cannot do without). Q²'s NLI model has its own field
    ``nli_checkpoint``; so does QG (``qg_checkpoint``).

    **no_questions.** What a text with no question to ask (no answer candidate, or none surviving QG,
    validation and filtering) scores; the policy is part of the signature:

    * ``"zero"``: 0.0. Nothing in the text could be checked against the grounding, so no credit is given --
      the same rule as for blank text (``empty_score``). For Q² it is the alternative the paper reports next
      to leaving such responses out (it measured higher correlations with it, and warned that such responses
      are mostly chit-chat);
    * ``"nli"``: the end-to-end NLI score (P(entailment), the ``nli`` scorer on the whole grounding and
      text with ``nli_checkpoint``): the fallback of TRUE's Q² re-implementation;
    * ``"nli-label"``: the fallback of Q²'s own code (``run_nli.get_e2e_nli_score``): the predicted label of
      premise = the grounding lower-cased, hypothesis = the text lower-cased, read as 1 (entailment), 0
      (contradiction) or 0.5 (neutral).

    The rows a policy filled are counted in the aux columns (``aux_n_valid`` / ``aux_n_questions`` = 0), so
    coverage is still known.

    **qg_template.** The seq2seq QG input (``{answer}``, ``{context}``). :data:`T5_AP_TEMPLATE` fits
    mrm8488/t5-base-finetuned-question-generation-ap (Q²'s QG); QAGS's own QG data read
    ``"{context} [ANS] {answer}"`` (:data:`QAGS_TEMPLATE`).
    """

    def __post_init__(self):
        if not isinstance(self.checkpoint, str) or not self.checkpoint.strip():
            raise ValueError(f"checkpoint (the QA model) must name a checkpoint; got {self.checkpoint!r}")
        if self.no_questions not in NO_QUESTIONS:
            raise ValueError(f"no_questions must be one of {NO_QUESTIONS}; got {self.no_questions!r}")
        if self.qg_rules not in RULE_SETS:
            raise ValueError(f"qg_rules must be one of {tuple(RULE_SETS)}; got {self.qg_rules!r}")

    def _check_qg(self) -> None:
        """Checks of the QG fields shared by the QG-QA configs (called from their ``__post_init__``)."""
        if self.qg_backend not in ("rule", "seq2seq"):
            raise ValueError("qg_backend must be 'rule' or 'seq2seq'")
        t = self.qg_template
        if not isinstance(t, str) or "{answer}" not in t or "{context}" not in t:
            raise ValueError(f"qg_template must contain {{answer}} and {{context}}; got {t!r}")


def example_rng(seed: int, text: str) -> np.random.Generator:
    """A generator keyed by (seed, text), so random choices do not depend on batch composition."""
    import zlib

    return np.random.default_rng([int(seed), zlib.crc32(text.encode("utf-8"))])


class QGQAScorerBase:
    """Mixin for :class:`tfc.scorers.base.Scorer` subclasses whose config has ``qa_*``, ``qg_*`` (and
    optionally ``nli_*``) fields: builds the components once and puts their identities into the
    signature (a retrained in-house QA checkpoint changes the signature)."""

    STAGES = ("candidates", "qg", "qa_generated", "qa_grounding", "compare", "no_questions", "aux_windows")

    @contextmanager
    def stage(self, name: str):
        """Time one pipeline stage: wall seconds accumulate in ``stage_seconds[name]`` over every call of this
        scorer (the scoring runs report responses/s per stage: candidates = spaCy parse, QG, QA on the
        generated text, QA on the grounding, compare = the NLI step, the no-question policy, and the count of
        QA windows kept in the cache's aux columns)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            st = self.__dict__.setdefault("stage_seconds", {})
            st[name] = st.get(name, 0.0) + time.perf_counter() - t0

    def _qg(self) -> QuestionGenerator:
        c = self.config
        if c.qg_backend == "rule":
            return RuleQG(num_return=min(c.qg_num_return, 2), rules=c.qg_rules)
        return question_generator(c.qg_backend, c.qg_checkpoint, num_beams=c.qg_num_beams,
                                  num_return=c.qg_num_return, device=c.device,
                                  template=c.qg_template)

    def _span_rule(self) -> str:
        """How the reader decodes an answer (:class:`ExtractiveQA`'s ``span_rule``)."""
        return "best-pair"

    def _qa(self) -> ExtractiveQA:
        c = self.config
        return ExtractiveQA(c.checkpoint, c.qa_revision, max_length=c.qa_max_length, stride=c.qa_stride,
                            max_answer_tokens=c.qa_max_answer_tokens, null_threshold=c.qa_null_threshold,
                            device=c.device, dtype=c.dtype, span_rule=self._span_rule())

    def components(self) -> dict:
        """Identities of the QG, QA (and NLI) components, as they enter the signature."""
        c = self.config
        from tfc import models

        d = {"qa": models.identity(c.checkpoint, c.qa_revision),
             "qg": (RuleQG(rules=c.qg_rules).identity() if c.qg_backend == "rule"
                    else models.identity(c.qg_checkpoint)),
             "spacy": f"{SPACY_MODEL}@{_spacy_model_version()}"}
        if self._needs_nli():
            d["nli"] = models.identity(c.nli_checkpoint)
        return d

    def _response_text(self, generations: list[str]) -> list[str]:
        """The generated texts as the pipeline reads them (candidates, QG, QA on the text, the no-question
        policy): :func:`detokenize`-d under the repaired clause rules (``"v3"``), as given otherwise."""
        c = self.config
        return reading_text(generations, c.qg_rules if c.qg_backend == "rule" else "v1")

    def _needs_nli(self) -> bool:
        c = self.config
        return bool(getattr(c, "use_nli", False)) or c.no_questions in ("nli", "nli-label")

    def _no_question_scores(self, groundings: list[str], generations: list[str], rows) -> np.ndarray:
        """Scores of the rows without a question, by the ``no_questions`` policy."""
        c = self.config
        rows = [int(i) for i in rows]
        if c.no_questions == "zero" or not rows:
            return np.zeros(len(rows))
        if c.no_questions == "nli-label":
            if getattr(self, "nli", None) is None:
                from tfc.scorers.qgqa.compare import NLIComparer

                self.nli = NLIComparer(c.nli_checkpoint, c.nli_label_names, c.device, c.batch_size)
            labels = self.nli.labels([groundings[i].lower() for i in rows], [generations[i].lower() for i in rows])
            return np.array([E2E_LABEL_SCORES.get(lab, E2E_OTHER_SCORE) for lab in labels])
        if getattr(self, "_nli_scorer", None) is None:
            from tfc.scorers import get

            self._nli_scorer = get("nli", preset="as-published", checkpoint=c.nli_checkpoint,
                                   label_names=c.nli_label_names, device=c.device, dtype=c.dtype)
        return np.asarray(self._nli_scorer.score([groundings[i] for i in rows], [generations[i] for i in rows],
                                                 batch_size=c.batch_size, progress=False), dtype=float)

    def _windows(self, questions: list[str], contexts: list[str]) -> np.ndarray:
        """QA windows each context is read in (a long grounding is read in full in several windows, never
        cut): the ``aux_n_chunks`` / ``aux_n_generated_chunks`` columns."""
        fn = getattr(self.qa, "windows", None)
        if fn is None:
            return np.ones(len(contexts), dtype=np.int32)
        with self.stage("aux_windows"):
            return np.asarray(fn(questions, contexts), dtype=np.int32)

    def signature_fields(self) -> dict:
        d = super().signature_fields()
        d["_components"] = self.components()
        return d

    def backends_label(self) -> str:
        """Readable 'QG / QA (/ NLI)' label for tables."""
        c = self.config
        from tfc import models

        qg = "rule-based QG" if c.qg_backend == "rule" else f"QG {models.short_name(c.qg_checkpoint)}"
        parts = [qg, f"QA {c.checkpoint}"]
        if self._needs_nli():
            parts.append(f"NLI {c.nli_checkpoint}")
        return " / ".join(parts)

    def _load(self):
        self.qg = self._qg()
        self.qa = self._qa().load()
        if hasattr(self.qg, "load"):
            self.qg.load()


@lru_cache(maxsize=1)
def _spacy_model_version() -> str:
    try:
        from importlib import metadata

        return metadata.version(SPACY_MODEL)
    except Exception:  # noqa: BLE001 - a missing distribution only loses the version in the signature
        return "unknown"
