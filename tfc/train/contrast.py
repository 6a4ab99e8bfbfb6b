"""Structured synthetic data for the alignment mix: PAWS-style word-order contrast and MiniCheck-style
leave-one-sentence-out passages. Made with spaCy from training-side text only.

**Word-order contrast** (one sentence in, pairs ``(sentence, edited sentence)`` out). Every rule keeps the
bag of words (up to case and a comma), so a model that ignores order cannot separate the two labels:

* not aligned (``contradiction``): ``swap_args`` (the subject and object noun phrases of a verb change
  places: "A defeated B" -> "B defeated A"), ``swap_entities`` (two different same-type entities of the
  sentence change places), ``swap_numbers`` (two different numbers or dates change places),
  ``antonym`` (a word from a small list of opposites is replaced: the one rule that changes a word);
* aligned (``entailment``): ``swap_conjuncts`` ("A and B" -> "B and A" for two noun conjuncts),
  ``move_pp`` (a sentence-final prepositional phrase of the main verb moves to the front, or a fronted one
  to the end).

Two optional families (``contrast_pairs(..., copies=True, compress=True)``; mix v2) exist because a model
trained without them (v1 mix) calls an *identical* sentence pair a contradiction (P(contradict) 0.7-0.88 on
training-side sentences): the v1 contrast data holds 10k near-identical pairs labelled contradiction against
4.7k labelled entailment, and no pair whose two sides are the same sentence. Extractive summaries are
full of such copies, so the model must see them:

* ``copy`` (``entailment``): the sentence against itself, or (half of them, seeded) against its
  lower-cased, PTB-tokenised form ("does n't", "the man 's", " ." -- the form CNN/DM and XSum summaries
  are distributed in). One per sentence that received a negative, so every swapped sentence also comes
  with its untouched twin, PAWS style;
* ``drop_pp`` (``entailment``, a positive that changes the bag of words): compression, one prepositional
  phrase of the main verb is deleted. Skipped in sentences with a negation or a non-monotone word
  ("only", "no", "never", ...), where deleting a phrase can break the entailment.

**Leave-one-sentence-out passages** (one passage of 3+ sentences in):

* ``loo_support`` (``entailment``): a claim (one sentence of the passage, or two of them fused) against
  the whole passage;
* ``loo_removed`` (``neutral``): the same claim against the passage without the claim's sentence(s),
  kept only when no remaining sentence shares an entity or number with the claim (else the claim may
  still be supported);
* ``loo_extrinsic`` (``neutral``): the sentence of *another* passage with the largest word overlap with
  this one (TF-IDF cosine, scikit-learn) as the claim; a hard negative that talks about the same things.

Rules are hand-written over spaCy's parse because no library ships PAWS's or MiniCheck's generators.
All outputs are deterministic given the seed (one ``numpy`` generator per input, keyed by
``[seed, index]``). Each rule returns ``None`` when it does not apply.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tfc.train.synthetic import fuse, load_nlp

NEGATIVE_RULES = ("swap_args", "swap_entities", "swap_numbers", "antonym")
POSITIVE_RULES = ("swap_conjuncts", "move_pp")
COMPRESSION_RULES = ("drop_pp",)
COPY_RULES = ("copy",)
# PAWS's own edits (mix v4, ``contrast_pairs(..., paws=True)``): word swaps that are not entity swaps
PAWS_NEGATIVE_RULES = ("swap_modifiers", "swap_nouns")
PAWS_POSITIVE_RULES = ("shuffle_list",)
CONTRAST_RULES = (NEGATIVE_RULES + POSITIVE_RULES + COMPRESSION_RULES + COPY_RULES + PAWS_NEGATIVE_RULES
                  + PAWS_POSITIVE_RULES)
LOO_KINDS = ("loo_support", "loo_removed", "loo_extrinsic")
LABEL_OF = {**{r: "contradiction" for r in NEGATIVE_RULES},
            **{r: "neutral" for r in PAWS_NEGATIVE_RULES},
            **{r: "entailment" for r in POSITIVE_RULES + COMPRESSION_RULES + COPY_RULES + PAWS_POSITIVE_RULES},
            "loo_support": "entailment", "loo_removed": "neutral", "loo_extrinsic": "neutral"}
SWAP_ENTITY_LABELS = {"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART", "PRODUCT"}
NUMBER_ENTITY_LABELS = {"DATE", "CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL", "TIME"}
_PAIRS = [("before", "after"), ("larger", "smaller"), ("largest", "smallest"), ("first", "last"),
          ("older", "younger"), ("oldest", "youngest"), ("north", "south"), ("east", "west"),
          ("northern", "southern"), ("eastern", "western"), ("higher", "lower"), ("highest", "lowest"),
          ("more", "fewer"), ("increased", "decreased"), ("won", "lost"), ("above", "below"),
          ("earlier", "later"), ("longer", "shorter"), ("male", "female"), ("left", "right"),
          ("upper", "lower"), ("inside", "outside"), ("maximum", "minimum"), ("victory", "defeat"),
          ("entered", "left"), ("opened", "closed"), ("born", "died"), ("began", "ended"),
          ("started", "ended"), ("bought", "sold"), ("best", "worst"), ("heavier", "lighter"),
          ("always", "never"), ("successful", "unsuccessful"), ("legal", "illegal"), ("private", "public")]
ANTONYMS = {**{a: b for a, b in _PAIRS}, **{b: a for a, b in _PAIRS if b not in {x for x, _ in _PAIRS}}}


def _text(tokens) -> str:
    return "".join(t.text_with_ws for t in tokens).strip()


def _replace_spans(sent, spans: list[tuple[int, int]], news: list[str]) -> str:
    """The sentence with each (start, end) token span (sentence-relative, non-overlapping) replaced."""
    toks = list(sent)
    order = sorted(range(len(spans)), key=lambda k: spans[k][0])
    out, pos = [], 0
    for k in order:
        s, e = spans[k]
        out.append("".join(t.text_with_ws for t in toks[pos:s]))
        out.append(news[k] + toks[e - 1].whitespace_)
        pos = e
    out.append("".join(t.text_with_ws for t in toks[pos:]))
    return "".join(out).strip()


def _case_for(text: str, at_start: bool, proper: bool) -> str:
    if at_start:
        return text[:1].upper() + text[1:]
    if proper or text[:2].isupper() or text.startswith("I "):
        return text
    return text[:1].lower() + text[1:]


def _swap_two(sent, a: tuple[int, int], b: tuple[int, int]) -> str | None:
    if a[1] > b[0] and b[1] > a[0]:
        return None
    toks = list(sent)
    ta, tb = _text(toks[a[0]:a[1]]), _text(toks[b[0]:b[1]])
    if ta.lower() == tb.lower():
        return None
    first, second = sorted([a, b])
    prop = {x: toks[x[0]].pos_ == "PROPN" or toks[x[0]].ent_type_ != "" for x in (a, b)}
    new_first = _case_for(_text(toks[second[0]:second[1]]), first[0] == 0, prop[second])
    new_second = _case_for(_text(toks[first[0]:first[1]]), False, prop[first])
    return _replace_spans(sent, [first, second], [new_first, new_second])


def _np_span(tok) -> tuple[int, int]:
    """The token's subtree as a sentence-relative span, without a leading or trailing punctuation token."""
    sub = list(tok.subtree)
    s, e = sub[0].i - tok.sent.start, sub[-1].i - tok.sent.start + 1
    return s, e


def swap_args(sent, rng=None) -> str | None:
    """Subject and object (direct, prepositional after the verb, or passive agent) change places."""
    for verb in sent:
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        subj = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
        objs = [c for c in verb.children if c.dep_ in ("dobj", "attr")]
        objs += [g for c in verb.children if c.dep_ in ("agent", "prep") for g in c.children if g.dep_ == "pobj"]
        for s in subj:
            for o in objs:
                if s.pos_ not in ("PROPN", "NOUN") or o.pos_ not in ("PROPN", "NOUN"):
                    continue
                if not (s.pos_ == "PROPN" or s.ent_type_) or not (o.pos_ == "PROPN" or o.ent_type_):
                    continue  # named things only: "the man ate the apple" -> "the apple ate the man" is too easy
                a, b = _np_span(s), _np_span(o)
                if b[1] - b[0] > 6 or a[1] - a[0] > 6:
                    continue
                new = _swap_two(sent, a, b)
                if new:
                    return new
    return None


def _ent_spans(sent, labels) -> list:
    return [e for e in sent.ents if e.label_ in labels]


def _swap_ents(sent, rng, labels) -> str | None:
    ents = _ent_spans(sent, labels)
    pairs = [(x, y) for i, x in enumerate(ents) for y in ents[i + 1:]
             if x.label_ == y.label_ and x.text.lower() != y.text.lower()]
    if not pairs:
        return None
    x, y = pairs[int(rng.integers(len(pairs)))] if rng is not None else pairs[0]
    s0 = sent.start
    return _swap_two(sent, (x.start - s0, x.end - s0), (y.start - s0, y.end - s0))


def swap_entities(sent, rng=None) -> str | None:
    return _swap_ents(sent, rng, SWAP_ENTITY_LABELS)


def swap_numbers(sent, rng=None) -> str | None:
    return _swap_ents(sent, rng, NUMBER_ENTITY_LABELS)


def antonym(sent, rng=None) -> str | None:
    hits = [t for t in sent if t.lower_ in ANTONYMS]
    if not hits:
        return None
    t = hits[int(rng.integers(len(hits)))] if rng is not None else hits[0]
    new = ANTONYMS[t.lower_]
    new = new.capitalize() if t.text[:1].isupper() else new
    i = t.i - sent.start
    return _replace_spans(sent, [(i, i + 1)], [new])


def swap_conjuncts(sent, rng=None) -> str | None:
    """"A and B" -> "B and A" for exactly two noun conjuncts joined by "and"."""
    for t in sent:
        if t.pos_ not in ("NOUN", "PROPN") or t.dep_ == "conj":
            continue
        conj = [c for c in t.children if c.dep_ == "conj"]
        cc = [c for c in t.children if c.dep_ == "cc" and c.lower_ == "and"]
        if len(conj) != 1 or len(cc) != 1 or conj[0].pos_ not in ("NOUN", "PROPN"):
            continue
        c = conj[0]
        if any(g.dep_ == "conj" for g in c.children):
            continue
        # the first conjunct: t and its left dependents plus right ones before "and"
        left = [x for x in t.subtree if x.i < cc[0].i]
        right = list(c.subtree)
        s0 = sent.start
        a = (left[0].i - s0, left[-1].i - s0 + 1)
        b = (right[0].i - s0, right[-1].i - s0 + 1)
        if any(x.is_punct for x in sent[a[0]:b[1]] if x.i - s0 not in range(a[0], a[1]) and x.i - s0 not in range(b[0], b[1])):
            continue  # "A, B and C"-like lists
        if b[1] - b[0] > 6 or a[1] - a[0] > 6:
            continue
        return _swap_two(sent, a, b)
    return None


def move_pp(sent, rng=None) -> str | None:
    """A prepositional phrase of the main verb moves between the end and the front of the sentence."""
    toks = list(sent)
    root = sent.root
    end_punct = toks[-1].is_punct and toks[-1].text in ".!?"
    body_end = len(toks) - 1 if end_punct else len(toks)
    if any(t.dep_ == "cc" for t in sent):
        return None  # "moved to A in 1995 and to B in 2001": moving one phrase would re-pair the facts
    preps = [c for c in root.children if c.dep_ == "prep"]
    s0 = sent.start
    for p in preps:
        a, b = _np_span(p)
        if b - a < 2 or b - a > 7:
            continue
        punct = toks[-1].text if end_punct else ""
        if a == 0 and b < body_end and toks[b].text == ",":  # fronted: move to the end
            rest = _text(toks[b + 1:body_end])
            pp = _text(toks[a:b])
            first = toks[a]
            pp = pp if (first.pos_ == "PROPN" or first.ent_type_) else pp[:1].lower() + pp[1:]
            return f"{rest[:1].upper()}{rest[1:]} {pp}{punct}"
        if b == body_end and a > 2 and toks[a - 1].dep_ != "punct":  # final: move to the front
            rest = _text(toks[:a])
            first = toks[0]
            rest = rest if (first.pos_ == "PROPN" or first.ent_type_ or first.text == "I") else rest[:1].lower() + rest[1:]
            pp = _text(toks[a:b])
            return f"{pp[:1].upper()}{pp[1:]}, {rest}{punct}"
    return None


def _pick(pairs, rng):
    return pairs[int(rng.integers(len(pairs)))] if rng is not None else pairs[0]


def swap_modifiers(sent, rng=None) -> str | None:
    """Two one-word modifiers (adjectives or noun compounds) of *different* nouns change places:
    "the parliamentary election ... a local election" -> "the local election ... a parliamentary election"
    (PAWS's commonest non-paraphrase). Labelled ``neutral``: the new sentence says something else, which need
    not contradict the old one."""
    mods = [t for t in sent if t.dep_ in ("amod", "compound") and t.pos_ in ("ADJ", "NOUN")
            and t.head.pos_ in ("NOUN", "PROPN") and t.n_lefts == 0 and t.n_rights == 0 and t.is_alpha]
    pairs = [(x, y) for i, x in enumerate(mods) for y in mods[i + 1:]
             if x.head.i != y.head.i and x.pos_ == y.pos_ and x.lower_ != y.lower_]
    if not pairs:
        return None
    x, y = _pick(pairs, rng)
    s0 = sent.start
    return _swap_two(sent, (x.i - s0, x.i - s0 + 1), (y.i - s0, y.i - s0 + 1))


def swap_nouns(sent, rng=None) -> str | None:
    """Two common nouns heading different noun phrases (same fine tag, so number agreement holds) change
    places: "the introduction of the globe and the motion of the planets" -> "... of the planets ... of the
    globe"-like re-pairings. Labelled ``neutral`` (see :func:`swap_modifiers`)."""
    nouns = [t for t in sent if t.pos_ == "NOUN" and t.dep_ in ("pobj", "dobj", "nsubj", "nsubjpass", "attr")
             and t.is_alpha and not t.ent_type_]
    pairs = [(x, y) for i, x in enumerate(nouns) for y in nouns[i + 1:]
             if x.tag_ == y.tag_ and x.lemma_.lower() != y.lemma_.lower() and abs(x.i - y.i) > 1]
    if not pairs:
        return None
    x, y = _pick(pairs, rng)
    s0 = sent.start
    return _swap_two(sent, (x.i - s0, x.i - s0 + 1), (y.i - s0, y.i - s0 + 1))


def _conj_chain(t) -> list:
    """``t`` and its noun conjuncts, whether spaCy attached them flat (all to ``t``) or as a chain."""
    items, cur = [t], t
    while True:
        conj = [c for c in cur.children if c.dep_ == "conj"]
        if not conj:
            return items
        if cur is not t and len(conj) > 1:
            return []
        items += conj if cur is t and len(conj) > 1 else conj[:1]
        if len(conj) > 1:
            return items if all(not any(g.dep_ == "conj" for g in c.children) for c in conj) else []
        cur = conj[0]


def shuffle_list(sent, rng=None) -> str | None:
    """A list of three or more short noun conjuncts joined by "and" is put in another order ("A, B and C" ->
    "C, A and B"): the meaning is kept, the order is not (PAWS's reordered lists)."""
    s0 = sent.start
    for t in sent:
        if t.pos_ not in ("NOUN", "PROPN") or t.dep_ == "conj":
            continue
        items = _conj_chain(t)
        if len(items) < 3 or any(c.pos_ not in ("NOUN", "PROPN") for c in items):
            continue
        ccs = [g for c in items for g in c.children if g.dep_ == "cc"]
        if [c.lower_ for c in ccs] != ["and"]:
            continue
        spans = []
        for k, c in enumerate(items):   # an item: its subtree up to the next item's left edge, no "and" or comma
            stop = items[k + 1].left_edge.i if k + 1 < len(items) else 10 ** 9
            own = [x for x in c.subtree if x.i < stop and x.dep_ != "cc" and not (x.is_punct and x.i > c.i)]
            if not own or own[-1].i - own[0].i + 1 != len(own):
                spans = []
                break
            spans.append((own[0].i - s0, own[-1].i - s0 + 1))
        if not spans or any(e - b > 4 for b, e in spans) or any(spans[k][1] > spans[k + 1][0] for k in range(len(spans) - 1)):
            continue
        texts = [_text(sent[b:e]) for b, e in spans]
        if len({x.lower() for x in texts}) < len(texts):
            continue
        order = list(range(1, len(texts))) + [0]
        if rng is not None:
            perm = [int(k) for k in rng.permutation(len(texts))]
            order = perm if perm != list(range(len(texts))) else order
        toks = list(sent)
        news = [_case_for(texts[order[k]], spans[k][0] == 0,
                          toks[spans[order[k]][0]].pos_ == "PROPN" or toks[spans[order[k]][0]].ent_type_ != "")
                for k in range(len(texts))]
        return _replace_spans(sent, spans, news)
    return None


# words whose presence makes deleting a phrase unsafe (downward-entailing or exclusive contexts)
NON_MONOTONE = frozenset({"no", "not", "n't", "never", "only", "nobody", "nothing", "none", "neither", "nor",
                          "few", "without", "unless", "except", "just", "solely", "exclusively", "hardly"})
_NO_DROP_PREPS = frozenset({"without", "except", "than", "instead", "despite", "unlike", "besides"})


def drop_pp(sent, rng=None) -> str | None:
    """Compression: one prepositional phrase (2-8 tokens) of the main verb is deleted, with one adjacent comma."""
    root = sent.root
    if root.pos_ != "VERB" or any(t.dep_ == "neg" or t.lower_ in NON_MONOTONE for t in sent):
        return None
    toks = list(sent)
    preps = [c for c in root.children if c.dep_ == "prep" and c.lower_ not in _NO_DROP_PREPS]
    order = rng.permutation(len(preps)) if rng is not None else range(len(preps))
    for k in order:
        a, b = _np_span(preps[int(k)])
        if b - a < 2 or b - a > 8:
            continue
        if b < len(toks) and toks[b].text == ",":
            b += 1
        elif a > 0 and toks[a - 1].text == ",":
            a -= 1
        kept = toks[:a] + toks[b:]
        if sum(not t.is_punct for t in kept) < 4:
            continue
        text = re.sub(r"\s+([.,!?;:])", r"\1", "".join(t.text_with_ws for t in kept)).strip()
        if a == 0:
            first = kept[0]
            text = text if (first.pos_ == "PROPN" or first.ent_type_ or first.text == "I") else text[:1].upper() + text[1:]
        return text
    return None


def ptb_form(doc) -> str:
    """The lower-cased, PTB-tokenised form of a parsed sentence (spaCy's tokens already split "n't" and "'s")."""
    return " ".join(t.text for t in doc if not t.is_space).lower()


RULES = {"swap_args": swap_args, "swap_entities": swap_entities, "swap_numbers": swap_numbers, "antonym": antonym,
         "swap_conjuncts": swap_conjuncts, "move_pp": move_pp, "drop_pp": drop_pp, "swap_modifiers": swap_modifiers,
         "swap_nouns": swap_nouns, "shuffle_list": shuffle_list}


def contrast_pairs(sentences, seed: int = 0, nlp=None, min_words: int = 6, max_words: int = 45,
                   batch_size: int = 256, copies: bool = False, compress: bool = False,
                   paws: bool = False) -> pd.DataFrame:
    """Word-order contrast pairs from single sentences: for each sentence, the first negative rule (in a
    seeded order) that applies and the first positive rule that applies (``compress`` adds ``drop_pp`` to
    the positive rules; ``paws`` adds :data:`PAWS_NEGATIVE_RULES` and :data:`PAWS_POSITIVE_RULES`), and with
    ``copies`` a ``copy`` row for every sentence that got a negative.

    Returns ``text_a, text_b, task="3way", label (id of LABEL_OF[rule]), source="contrast/<rule>", rule,
    text_index``.
    """
    from tfc.models.multihead import LABEL2ID

    sentences = [s for s in sentences]
    for i, t in enumerate(sentences):
        if not isinstance(t, str):
            raise TypeError(f"sentence {i} is {type(t).__name__}, not str")
    nlp = nlp or load_nlp()
    rows = []
    for i, doc in enumerate(nlp.pipe(sentences, batch_size=batch_size)):
        n = len(doc.text.split())
        if n < min_words or n > max_words:
            continue
        sent = doc[:]
        rng = np.random.default_rng([seed, i])
        got_negative = False
        negatives = NEGATIVE_RULES + (PAWS_NEGATIVE_RULES if paws else ())
        positives = POSITIVE_RULES + (COMPRESSION_RULES if compress else ()) + (PAWS_POSITIVE_RULES if paws else ())
        for group in (negatives, positives):
            for k in rng.permutation(len(group)):
                rule = group[int(k)]
                new = RULES[rule](sent, rng)
                if new and new.strip() != doc.text.strip():
                    rows.append((doc.text.strip(), new, LABEL2ID[LABEL_OF[rule]], rule, i))
                    got_negative = got_negative or rule in negatives
                    break
        if copies and got_negative:
            twin = ptb_form(doc) if rng.random() < 0.5 else doc.text.strip()
            rows.append((doc.text.strip(), twin, LABEL2ID["entailment"], "copy", i))
    df = pd.DataFrame(rows, columns=["text_a", "text_b", "label", "rule", "text_index"])
    df.insert(2, "task", "3way")
    df["source"] = "contrast/" + df["rule"]
    return df[["text_a", "text_b", "task", "label", "source", "rule", "text_index"]]


# --------------------------------------------------------------------------------------------------
# leave-one-sentence-out passages

def _anchors(sent) -> set[str]:
    """Entities and numbers of a sentence (lower-cased): what a remaining sentence must not share."""
    out = {e.text.lower() for e in sent.ents}
    out |= {t.text.lower() for t in sent if t.like_num}
    return out


def loo_pairs(passages, seed: int = 0, nlp=None, min_sents: int = 3, max_words: int = 110,
              fuse_share: float = 0.3, batch_size: int = 64) -> pd.DataFrame:
    """Leave-one-sentence-out pairs from multi-sentence passages (see the module doc).

    Returns ``text_a, text_b, task="3way", label, source="loo/<kind>", rule (the kind), text_index``.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    from tfc.models.multihead import LABEL2ID

    nlp = nlp or load_nlp()
    docs, keep = [], []
    for i, doc in enumerate(nlp.pipe(list(passages), batch_size=batch_size)):
        sents = [s for s in doc.sents if len(s.text.split()) >= 5]
        if len(sents) >= min_sents and len(doc.text.split()) <= max_words:
            docs.append((i, doc, sents))
    rows = []
    all_sents = [(k, s.text.strip()) for k, (_, _, sents) in enumerate(docs) for s in sents]
    for k, (i, doc, sents) in enumerate(docs):
        rng = np.random.default_rng([seed, i])
        j = int(rng.integers(len(sents)))
        picked = [j]
        if rng.random() < fuse_share and j + 1 < len(sents):
            picked = [j, j + 1]
        claim = (fuse(sents[j].text, sents[j + 1].text, sents[j + 1][0].pos_ == "PROPN") if len(picked) == 2
                 else sents[j].text.strip())
        passage = doc.text.strip()
        rows.append((passage, claim, LABEL2ID["entailment"], "loo_support", i))
        anchors = set().union(*(_anchors(sents[p]) for p in picked))
        rest = [s for q, s in enumerate(sents) if q not in picked]
        if anchors and not any(anchors & _anchors(s) for s in rest):
            rows.append((" ".join(s.text.strip() for s in rest), claim, LABEL2ID["neutral"], "loo_removed", i))
    if len(docs) > 1:  # hard extrinsic negatives: the most similar sentence of another passage
        vec = TfidfVectorizer(stop_words="english", min_df=1)
        P = vec.fit_transform([d.text for _, d, _ in docs])
        S = vec.transform([t for _, t in all_sents])
        owner = np.array([k for k, _ in all_sents])
        sim = (P @ S.T).tocsr()
        for k, (i, doc, _) in enumerate(docs):
            row = sim.getrow(k).toarray().ravel()
            row[owner == k] = -1.0
            best = int(row.argmax())
            if row[best] > 0.15:
                rows.append((doc.text.strip(), all_sents[best][1], LABEL2ID["neutral"], "loo_extrinsic", i))
    df = pd.DataFrame(rows, columns=["text_a", "text_b", "label", "rule", "text_index"])
    df.insert(2, "task", "3way")
    df["source"] = "loo/" + df["rule"]
    return df[["text_a", "text_b", "task", "label", "source", "rule", "text_index"]]


def words_key(text: str) -> list[str]:
    """The token multiset used by the meaning-preservation tests (lower-cased words, no punctuation)."""
    return sorted(re.findall(r"\w+", text.lower()))
