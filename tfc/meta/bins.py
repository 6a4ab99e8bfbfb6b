"""Binning analyses: AUC by grounding length (TRUE Figure 1) and by abstractiveness (WeCheck Figure 3).

**Words.** TRUE measures length "in tokens before subword splitting". :func:`count_words` uses the
data layer's :func:`tfc.text.words.words` (default ``"whitespace"``, the tokenizer that matches
TRUE's published lengths; see the data chapter). For abstractiveness, punctuation must not stick to
words ("sat." is not a novel word next to "sat"), so :func:`novel_unigram_pct` uses its ``"regex"``
split and keeps only tokens with a letter or digit. Should ``tfc.text.words`` be unavailable, the
fallback is ``WORD_RE`` (letters/digits with inner apostrophes or hyphens) for both.

**Length bins (TRUE Fig. 1).** The paper gives 6 bins, 1,000 examples sampled per bin, VitaminC
excluded, and mentions 200 and 500 tokens, but not the edges. We use ``LENGTH_EDGES`` =
0-50, 50-100, 100-200, 200-300, 300-500, 500+ words (left-closed: ``[lo, hi)``), so that 200 and 500
are edges. A bin with fewer than ``n_per_bin`` examples uses all of them and says so
(``n < n_per_bin`` in the result; nothing is padded or dropped silently).

**Abstractiveness (WeCheck Fig. 3).** The % of the generated text's distinct unigrams (lower-cased
words) that do not occur in the grounding (See et al., 2017), in 10 equal-width bins of 10 points:
``[0, 10), [10, 20), ..., [90, 100]``.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tfc.meta._checks import as_labels, as_scores

WORD_RE = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
LENGTH_EDGES = (0, 50, 100, 200, 300, 500, np.inf)
ABSTRACTIVENESS_EDGES = tuple(range(0, 101, 10))


def _words(text: str, method: str = "whitespace") -> list[str]:
    try:  # the data layer's tokenizer
        from tfc.text.words import words as _w
    except ImportError:  # pragma: no cover - documented fallback
        return WORD_RE.findall(text)
    return _w(text, method)


def _unigrams(text: str) -> set[str]:
    return {w.lower() for w in _words(text, "regex") if any(ch.isalnum() for ch in w)}


def count_words(texts, method: str = "whitespace") -> np.ndarray:
    """Number of words in each text (``tfc.text.words``, ``method`` as there); non-strings raise."""
    out = []
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ValueError(f"text {i} is not a string: {t!r}")
        out.append(len(_words(t, method)))
    return np.asarray(out, dtype=int)


def novel_unigram_pct(groundings, generations) -> np.ndarray:
    """% of each generation's distinct lower-cased unigrams absent from its grounding (NaN if empty)."""
    g, h = list(groundings), list(generations)
    if len(g) != len(h):
        raise ValueError(f"{len(g)} groundings but {len(h)} generations")
    out = np.empty(len(h))
    for i, (src, hyp) in enumerate(zip(g, h)):
        hw, sw = _unigrams(hyp), _unigrams(src)
        out[i] = 100.0 * len(hw - sw) / len(hw) if hw else np.nan
    return out


def assign_bins(values, edges) -> np.ndarray:
    """Bin index of each value for left-closed bins ``[e_i, e_{i+1})``; the last bin is closed.

    Values outside ``[edges[0], edges[-1]]`` or NaN raise (no silent dropping).
    """
    v = np.asarray(values, dtype=float)
    e = np.asarray(edges, dtype=float)
    if np.isnan(v).any():
        raise ValueError(f"{int(np.isnan(v).sum())} NaN value(s) cannot be binned; drop them explicitly")
    if (v < e[0]).any() or (v > e[-1]).any():
        raise ValueError(f"values outside the bin range [{e[0]}, {e[-1]}]")
    idx = np.searchsorted(e, v, side="right") - 1
    return np.minimum(idx, e.size - 2)


def bin_labels(edges) -> list[str]:
    e = list(edges)
    last_close = ")" if np.isinf(e[-1]) else "]"
    return [f"[{e[i]:g}, {e[i + 1]:g}" + (")" if i < len(e) - 2 else last_close) for i in range(len(e) - 1)]


def binned_auc(labels, scores: dict, values, edges, n_per_bin: int | None = None, seed: int = 0) -> pd.DataFrame:
    """AUC of each metric within each bin of ``values``.

    ``n_per_bin`` examples are sampled per bin without replacement (the same rows for every metric,
    ``seed`` fixed); ``None`` uses every row. Bins holding a single class get AUC NaN and
    ``note='single class'``. Returns ``bin, bin_label, metric, auc, n, n_available, n_consistent, note``.
    """
    from tfc.meta.binary import roc_auc

    y = as_labels(labels)
    vals = {k: as_scores(v, n=y.size, name=k) for k, v in scores.items()}
    b = assign_bins(np.asarray(values, dtype=float), edges)
    if b.size != y.size:
        raise ValueError(f"{b.size} bin values but {y.size} labels")
    rng = np.random.default_rng(seed)
    names = bin_labels(edges)
    rows = []
    for i, name in enumerate(names):
        idx = np.flatnonzero(b == i)
        avail = idx.size
        if n_per_bin is not None and avail > n_per_bin:
            idx = np.sort(rng.choice(idx, size=n_per_bin, replace=False))
        yy = y[idx]
        single = yy.size == 0 or yy.min() == yy.max()
        for k, s in vals.items():
            rows.append({"bin": i, "bin_label": name, "metric": k,
                         "auc": np.nan if single else roc_auc(yy, s[idx]), "n": int(idx.size),
                         "n_available": int(avail), "n_consistent": int(yy.sum()),
                         "note": "single class" if single else ""})
    return pd.DataFrame(rows)
