"""The sentence rules of rule-based question generation (:func:`sentence_questions`, ``qg_rules="v1"``), and the
choice of the wh-word from the answer (:func:`wh_word`) that every rule set uses.

The sentence rules ask about an answer (a named entity or noun chunk) from the parse of its **whole sentence**:
the wh-word from the answer's entity label, a subject answer replaced in place, any other answer moved to the
front with auxiliary inversion or *do*-support over the sentence's root verb, and the sentence with the answer
replaced by the wh-word (the in-situ "echo" question) as the second variant.

**Not current.** The current rule set is the repaired clause rules (``"v3"``,
:func:`~tfc.scorers.qgqa.qg_rules_clause.repaired_clause_questions`; the ``q2`` and ``qags`` defaults). The
sentence rules stay, unchanged, only because committed tables read score caches computed with them (their
signatures name ``rule-qg-v1``); :func:`wh_word` and the label/preposition tables stay in any case."""
from __future__ import annotations

import re

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


def sentence_questions(doc, start_char: int, end_char: int) -> list[str]:
    """Questions about the answer at ``doc.text[start_char:end_char]`` from its whole sentence: [moved question,
    in-situ question] (fewer when the parse gives no subject/verb). Returns [] if the span does not align with
    tokens."""
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
