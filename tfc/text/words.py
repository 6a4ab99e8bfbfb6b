"""Word tokenizers for length statistics ("tokens before subword splitting", TRUE Tables 6-7).

Two tokenizers, both dependency-free and deterministic:

* ``"whitespace"`` (default): ``str.split()``: runs of non-whitespace. Punctuation stays attached
  to its word ("said," is one token). This is what "words" means in most length statistics and it
  matches TRUE's published lengths best (see the data chapter).
* ``"regex"``: ``\\w+(?:[-']\\w+)*|[^\\w\\s]``: words (with inner hyphens/apostrophes) and every
  punctuation mark as its own token, i.e. a Penn-style split without a model; counts are higher,
  mostly on news text.

spaCy's rule-based English tokenizer gives counts very close to ``"regex"`` and costs ~100x more
time on the long MNBM/SummEval articles, so it is not offered here.
"""
from __future__ import annotations

import re

_REGEX = re.compile(r"\w+(?:[-']\w+)*|[^\w\s]")
METHODS = ("whitespace", "regex")


def words(text: str, method: str = "whitespace") -> list[str]:
    if not isinstance(text, str):
        raise TypeError(f"words() needs a str, got {type(text).__name__}")
    if method == "whitespace":
        return text.split()
    if method == "regex":
        return _REGEX.findall(text)
    raise ValueError(f"unknown word tokenizer {method!r}; choose one of {METHODS}")


def n_words(text: str, method: str = "whitespace") -> int:
    return len(words(text, method))


def length_stats(texts, method: str = "whitespace") -> dict:
    """min, max, median and mean word count of ``texts`` (TRUE Tables 6 and 7)."""
    import numpy as np

    lengths = np.array([n_words(t, method) for t in texts])
    if lengths.size == 0:
        raise ValueError("length_stats of an empty collection")
    return {"min_len": int(lengths.min()), "max_len": int(lengths.max()),
            "median_len": float(np.median(lengths)), "avg_len": float(lengths.mean())}
