"""SQuAD-style token F1, used by :mod:`tfc.data.stats` only when ``tfc.scorers`` has no lexical scorers.

Written by hand because no library in the stack exposes the SQuAD token-F1 as a function (it is
the same rule as ``tfc.scorers.lexical``: lower-case, drop punctuation and a/an/the, split on spaces).
"""
from __future__ import annotations

import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def _norm(text: str) -> list[str]:
    t = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return _ARTICLES.sub(" ", t).split()


def token_f1(reference: str, candidate: str) -> float:
    ref, cand = _norm(reference), _norm(candidate)
    common = sum((Counter(ref) & Counter(cand)).values())
    if common == 0:
        return 0.0
    p, r = common / len(cand), common / len(ref)
    return 2 * p * r / (p + r)
