"""The clause rules of rule-based question generation: questions built from the answer's **own clause** with a
wh-phrase that takes the answer's attached words along (:func:`clause_questions`, ``qg_rules="v2"``), the same
rules with the repairs found by judging their questions (:func:`repaired_clause_questions`, ``qg_rules="v3"``),
and the detokenised reading of the text that the repaired rules ask about (:func:`detokenize`,
:func:`reading_text`).

**Current: the repaired clause rules** (``"v3"``), the rule set of the ``q2`` and ``qags`` defaults
(``tfc.scorers.DEFAULTS``). The unrepaired clause rules (``"v2"``, the scorer configs' own default and the
as-published presets) and the sentence rules (``"v1"``, :mod:`~tfc.scorers.qgqa.qg_rules_sentence`) stay only
because committed tables read score caches computed with them: one flag (``repairs``) switches between the two
clause rule sets, and each is kept exactly as those caches were scored. The values ``"v1"``/``"v2"``/``"v3"``
are the names the caches' signatures hold (:data:`~tfc.scorers.qgqa.qg.RULE_SETS`)."""
from __future__ import annotations

import re

from tfc.scorers.qgqa.qg_rules_sentence import _DO, _drop_end_punct, _join, wh_word


# -- the clause rules (``qg_rules="v2"``, :func:`clause_questions`) -----------------------------------------
# The sentence rules (``"v1"``, :func:`~tfc.scorers.qgqa.qg_rules_sentence.sentence_questions`) are kept unchanged:
# committed QAGS/Q² caches were computed with them and their signatures name them. The clause rules ("v2" below)
# fix the flaws found by reading a sample of the sentence rules' questions:
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

# -- the repaired clause rules (``qg_rules="v3"``, :func:`repaired_clause_questions`; current) ---------------
# The repairs (``repairs=True``) fix the flaws of the 61 ill-formed questions among the 200 judged questions of
# the clause rules (results/qg_judgements/rules-v2.csv, drawn from training-side mirrors only); "v3" below:
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
    """Generated texts as the rule set ``rules`` (a ``qg_rules`` value) reads them: :func:`detokenize`-d under the
    repaired clause rules (``"v3"``), as given otherwise (the scorers' candidates, QG and QA, and the hand-judged
    question draws, all read through here)."""
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


def _wh_phrase(span) -> tuple[str, set[int]]:
    """wh-phrase and the extra token ids it absorbs, for the clause rules."""
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


def _answer_span(doc, start_char: int, end_char: int):
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


def _inverted_question(toks, ans: set, head, subj, s_ids: set, wh: str, full_aux: bool = False) -> str:
    """The question with the wh-phrase moved to the front and subject-auxiliary inversion ("Who did the
    team beat?"), for an answer that is neither the clause's subject nor inside it (``full_aux``: a contracted
    auxiliary is written out at the front, "What have i never been to?")."""
    s_toks = [t for t in subj.subtree]
    s_text = _lower_first(s_toks, _join(s_toks))
    aux = next((c for c in head.children if c.dep_ in ("aux", "auxpass") and c.i < head.i), None)
    if aux is not None:
        first, skip = [_full_aux(aux) if full_aux else aux.text], {aux.i}
    elif _split_be(head):
        first, skip = [_split_be(head)], {head.i, head.i - 1}
    elif head.lemma_ == "be" or head.pos_ == "AUX":
        first, skip = [_full_aux(head) if full_aux else head.text], {head.i}
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


def _modifier_wh(span):
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
        return None               # a count: the clause rules' "How many <noun>"
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
    is a relative pronoun or expletive *there* (the repaired rules ask those in place)."""
    if subj is not None and (subj.dep_ == "expl" or subj.tag_ in ("WDT", "WP")):
        return True
    cur = anchor
    while cur.i != head.i and cur.head is not cur:
        if cur.dep_ in ("relcl", "acl"):
            return True
        cur = cur.head
    return False


def _bad_moved_question(q: str) -> bool:
    """A moved question the repaired rules drop: fewer than three words, or a word doubled ("in in")."""
    words = re.findall(r"[\w']+", q.lower())
    return len(words) < 3 or any(a == b and not a.isdigit() for a, b in zip(words, words[1:]))


def _answer_ids(doc, span, repairs: bool):
    """(wh-phrase, the token ids that move with the answer, the token standing for the answer in the clause) of
    the clause rules; with ``repairs``, a modifier's noun phrase, a whole name and a determiner go with it."""
    wh, extra = _wh_phrase(span)
    anchor = span.root
    modifier = _modifier_wh(span) if repairs else None
    if modifier is not None:
        wh, extra, anchor = modifier
    elif repairs and span.root.dep_ == "compound" and span.root.head.pos_ == "PROPN" and span.root.pos_ == "PROPN" \
            and span.root.head.i >= span.end:
        name = span.root.head   # a first name inside a name: ask about the name
        extra = {t.i for t in doc[span.end: name.i + 1]}
        anchor = name
    ans = set(range(span.start, span.end)) | extra
    root_a = span.root
    if repairs and modifier is None and span.start > 0:
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
    """The repaired rules: the clause without the discourse words before its subject ("yes, ...", "well, ...") and their
    commas."""
    lead = []
    for t in toks:
        if t.i in ans or not (t.is_punct or t.lower_ in _DISCOURSE or t.dep_ in ("intj", "discourse")):
            break
        lead.append(t.i)
    return [t for t in toks if t.i not in lead] or toks


def _subject_question(toks, ans: set, anchor, head, subj, wh: str) -> str:
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


def clause_questions(doc, start_char: int, end_char: int, repairs: bool = False) -> list[str]:
    """Questions about the answer at ``doc.text[start_char:end_char]`` from its own clause: [moved question,
    in-situ question] (the in-situ one alone where the answer is asked in place; the moved one alone for a
    subject), see the notes at the top of this module. ``repairs=True`` adds the repairs of the judged questions
    (the current rule set, :func:`repaired_clause_questions`; the text is expected detokenised)."""
    span = _answer_span(doc, start_char, end_char)
    if span is None:
        return []
    wh, ans, anchor = _answer_ids(doc, span, repairs)
    head = _clause_head(anchor)
    toks = _clause_tokens(head, ans)
    if not ans & {t.i for t in toks}:
        toks, head = _drop_end_punct([t for t in span.sent]), span.sent.root
    if repairs:
        toks = _drop_discourse(toks, ans)
    subj = next((c for c in head.children if c.dep_ in _SUBJ_DEP), None)
    s_ids = {t.i for t in subj.subtree} if subj is not None else set()
    in_subject = bool(s_ids & ans) and anchor.i != subj.i if subj is not None else False
    in_conj = anchor.dep_ == "conj" or any(c.dep_ == "conj" for c in anchor.children)
    in_place = repairs and _in_relative_or_expletive(anchor, head, subj)

    out = []
    is_subject = subj is not None and anchor.i == subj.i and not in_place
    if is_subject or (span.start == toks[0].i and span.root.dep_ == "ROOT" and not in_place):
        out.append(_subject_question(toks, ans, anchor, head, subj, wh))
    elif in_subject or in_conj or is_subject or in_place:
        pass   # asked in place below
    elif subj is not None and head.pos_ in ("VERB", "AUX"):
        out.append(_inverted_question(toks, ans, head, subj, s_ids, wh, full_aux=repairs))
    if repairs:
        out = [_attach_clitics(q) for q in out if q and not _bad_moved_question(q)]
    q2 = _in_situ_question(toks, ans, wh)
    if repairs and q2:
        q2 = _attach_clitics(q2)
    if q2 and q2 not in out and not is_subject:   # for a subject the moved question is already in place
        out.append(q2)
    return [q for q in out if q]


def repaired_clause_questions(doc, start_char: int, end_char: int) -> list[str]:
    """The current rule set (``qg_rules="v3"``): :func:`clause_questions` with the repairs of its judged questions
    (the notes at the top of this module). The text is expected detokenised (:func:`detokenize`; the scorers
    read it through :func:`reading_text`)."""
    return clause_questions(doc, start_char, end_char, repairs=True)
