"""Lexical overlap scorers: token F1, ROUGE-1/2/L (Google's ``rouge-score``) and BLEU-4 (``sacrebleu``).

As in TRUE, the **grounding is the reference** and the generated text is the candidate.

Tokenisation (and why):

* ``f1`` -- SQuAD-style normalisation (lower-case, punctuation removed, the articles a/an/the
  removed, white-space split), then bag-of-tokens precision/recall/F1. This is the standard
  "token-level F1" that TRUE names (its Q² re-implementation uses the same F1 token overlap). No
  library in our stack exposes it as a function, so it is written here (10 lines).
* ``rouge*`` -- ``rouge_score``'s own tokenizer (lower-case, non-alphanumerics to spaces), which
  mirrors Lin's ROUGE-1.5.5; Porter stemming is a config option (off in the as-published preset,
  the library default). ``tokenizer="whitespace"`` (lower-cased white-space split, punctuation kept
  attached) is an alternative examined in the TRUE chapter.
* ``bleu4`` -- ``sacrebleu``'s sentence-level BLEU with its default ``13a`` tokenisation,
  case-sensitive, divided by 100 to lie in [0, 1]. TRUE does not state its smoothing; *no*
  smoothing (``smooth_method="none"``) lands much closer to TRUE Table 9 than sacrebleu's default
  ``exp`` (e.g. FRANK 78.8 vs 69.4 against the published 78.0), so it is the as-published preset.

``component`` picks precision, recall or F-measure for F1/ROUGE (``fmeasure`` by default, which is
what "F1"/"ROUGE-L" means without qualification).
"""
from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass

import numpy as np

from tfc.scorers.base import Scorer, ScorerConfig, progress_bar

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)


def squad_normalize(text: str) -> list[str]:
    t = text.lower()
    t = "".join(ch for ch in t if ch not in _PUNCT)
    t = _ARTICLES.sub(" ", t)
    return t.split()


def token_prf(reference: str, candidate: str) -> tuple[float, float, float]:
    """Bag-of-tokens (precision, recall, F1) of ``candidate`` against ``reference`` (SQuAD rules)."""
    ref, cand = squad_normalize(reference), squad_normalize(candidate)
    common = sum((Counter(ref) & Counter(cand)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    p, r = common / len(cand), common / len(ref)
    return p, r, 2 * p * r / (p + r)


_COMPONENTS = ("precision", "recall", "fmeasure")


@dataclass(frozen=True)
class TokenF1Config(ScorerConfig):
    component: str = "fmeasure"
    normalisation: str = "squad"   # lower-case, strip punctuation and articles
    reference: str = "grounding"


class TokenF1(Scorer):
    name = "f1"
    config_cls = TokenF1Config
    output_range = (0.0, 1.0)

    def _score(self, groundings, generations, batch_size, progress):
        idx = _COMPONENTS.index(self.config.component)
        it = progress_bar(zip(groundings, generations), total=len(groundings), desc=self.name, enabled=progress)
        return np.array([token_prf(g, h)[idx] for g, h in it])


@dataclass(frozen=True)
class RougeConfig(ScorerConfig):
    ADDED = {"tokenizer": "rouge_score"}

    rouge_type: str = "rougeL"
    component: str = "fmeasure"
    use_stemmer: bool = False
    reference: str = "grounding"
    tokenizer: str = "rouge_score"   # or "whitespace": lower-cased white-space split, punctuation kept


class _WhitespaceTokenizer:
    """Lower-case and split on white space; punctuation stays attached to words (as ``"said."``)."""

    def tokenize(self, text):
        return text.lower().split()


class Rouge(Scorer):
    name = "rougeL"
    config_cls = RougeConfig
    output_range = (0.0, 1.0)

    def __init__(self, config=None, **overrides):
        super().__init__(config, **overrides)
        if self.config.component not in _COMPONENTS:
            raise ValueError(f"component must be one of {_COMPONENTS}")
        self.name = self.config.rouge_type  # registry names rouge1 / rouge2 / rougeL

    def _load(self):
        from rouge_score import rouge_scorer

        c = self.config
        if c.tokenizer not in ("rouge_score", "whitespace"):
            raise ValueError("tokenizer must be 'rouge_score' or 'whitespace'")
        tok = _WhitespaceTokenizer() if c.tokenizer == "whitespace" else None
        self._scorer = rouge_scorer.RougeScorer([c.rouge_type], use_stemmer=c.use_stemmer, tokenizer=tok)

    def _score(self, groundings, generations, batch_size, progress):
        rt, comp = self.config.rouge_type, self.config.component
        it = progress_bar(zip(groundings, generations), total=len(groundings), desc=self.name, enabled=progress)
        # RougeScorer.score(target, prediction): the grounding is the target (reference)
        return np.array([getattr(self._scorer.score(g, h)[rt], comp) for g, h in it])


@dataclass(frozen=True)
class BleuConfig(ScorerConfig):
    tokenize: str = "13a"
    smooth_method: str = "none"   # closest to TRUE-T9 (see the chapter); sacrebleu default is "exp"
    lowercase: bool = False
    max_ngram_order: int = 4
    reference: str = "grounding"


class Bleu(Scorer):
    name = "bleu4"
    config_cls = BleuConfig
    output_range = (0.0, 1.0)

    def _load(self):
        from sacrebleu.metrics import BLEU

        c = self.config
        self._bleu = BLEU(tokenize=c.tokenize, smooth_method=c.smooth_method, lowercase=c.lowercase,
                          max_ngram_order=c.max_ngram_order, effective_order=True)

    def _score(self, groundings, generations, batch_size, progress):
        it = progress_bar(zip(groundings, generations), total=len(groundings), desc=self.name, enabled=progress)
        return np.array([self._bleu.sentence_score(h, [g]).score / 100.0 for g, h in it])
