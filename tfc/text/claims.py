"""Claim cleaning in the manner of AlignScore's evaluation scripts (an option, off by default).

Several benchmark sets (XSum/CNN-DM model outputs, FRANK, SummEval) store text in PTB-tokenised,
lower-cased form: ``-lrb- the us -rrb- said .``. AlignScore cleans the claims before scoring. We do
the same steps, written from their description rather than copied:

1. PTB bracket escapes (``-LRB-``, ``-RRB-``, ``-LSB-``, ``-RSB-``, ``-LCB-``, ``-RCB-``, any case)
   become the bracket characters;
2. detokenisation of the common PTB spacing: no space before ``. , ; : ! ? ' n't 's %``, none
   after an opening bracket or before a closing one, ````/''`` become ``"``;
3. capitalisation: the first letter of the text and of each sentence is upper-cased, and a
   stand-alone ``i`` becomes ``I`` (only when the text has no upper-case letter at all, i.e. it
   was lower-cased upstream).
"""
from __future__ import annotations

import re

_BRACKETS = {"-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]", "-lcb-": "{", "-rcb-": "}"}
_BRACKET_RE = re.compile(r"-(?:lrb|rrb|lsb|rsb|lcb|rcb)-", re.IGNORECASE)


def clean_claim(text: str, capitalise: bool = True) -> str:
    if not isinstance(text, str):
        raise TypeError(f"clean_claim expects str, got {type(text).__name__}")
    t = _BRACKET_RE.sub(lambda m: _BRACKETS[m.group(0).lower()], text)
    t = t.replace("``", '"').replace("''", '"')
    t = re.sub(r"\s+([.,;:!?%)\]}])", r"\1", t)
    t = re.sub(r"([(\[{$])\s+", r"\1", t)
    t = re.sub(r"\s+(n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", t, flags=re.IGNORECASE)
    t = re.sub(r"\s+", " ", t).strip()
    if capitalise and t and not re.search(r"[A-Z]", t):
        t = re.sub(r"\bi\b", "I", t)
        t = re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), t)
    return t


def clean_claims(texts: list[str], capitalise: bool = True) -> list[str]:
    return [clean_claim(t, capitalise) for t in texts]
