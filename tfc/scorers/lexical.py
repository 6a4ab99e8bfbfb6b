"""Lexical overlap scorers: token F1, ROUGE-1/2/L (Google's ``rouge-score``) and BLEU-4 (``sacrebleu``).

As in TRUE, the **grounding is the reference** and the generated text is the candidate. Every lexical
config has ``reference="grounding"`` (the default, the preset) or ``"generated"``, which swaps the roles (the
grounding is scored as the candidate); it matters for BLEU and for the precision / recall components, not
for the symmetric F-measures, and is an analysis option, never a preset.

Tokenisation (and why):

* ``f1`` -- SQuAD-style normalisation (lower-case, punctuation removed, the articles a/an/the
  removed, white-space split), then bag-of-tokens precision/recall/F1. This is the standard
  "token-level F1" that TRUE names (its Q² re-implementation uses the same F1 token overlap). No
  library in our stack exposes it as a function, so it is written here (10 lines).
* ``rouge*`` -- ``rouge_score``'s own tokenizer (lower-case, non-alphanumerics to spaces), which
  mirrors Lin's ROUGE-1.5.5; Porter stemming is a config option (off in the as-published preset,
  the library default, and off in T5's and Hugging Face's wrappers of the same library).
  ``tokenizer="whitespace"`` (lower-cased white-space split, punctuation kept attached) and
  ``tokenizer="whitespace-cased"`` (plain ``str.split``, case kept) are alternatives examined in the
  TRUE and data chapters, never the preset.
* ``rougeL-coco`` -- ROUGE-L as the COCO caption evaluation computes it (pycocoevalcap's ``Rouge``): case-kept
  tokens split on single spaces, F_beta with beta = 1.2. A separate scorer, not a preset of ``rougeL``: it is
  the code TRUE's Table 8 overlap means match (18 of 18 cells within the printed precision, data chapter),
  while its Table 9 AUCs match ``rougeL-squad`` and not this one, so the paper used two ROUGE-L implementations.
* ``rougeL-squad`` / ``bleu4-squad`` -- TRUE's Table 9 ROUGE-L and BLEU-4: both texts first go through the
  ``f1`` scorer's SQuAD normalisation (``normalize="squad"``), then the ``rougeL`` / ``bleu4`` computation runs
  on the normalised strings. TRUE's Table 9 was first compared with ``rougeL`` and
  ``bleu4`` on the raw texts; the shared normalisation was found by testing one hypothesis (TRUE normalised
  once for all its lexical baselines) on every Table 9 cell at once, and it puts 8 and 7 of the nine cells
  within a point against 7 and 4 (the TRUE scorers chapter). The raw-text scorers stay registered as the
  libraries' own computations (the QAGS chapter's baselines).
* ``bleu4`` -- sentence-level BLEU-4 with ``sacrebleu``'s default ``13a`` tokenisation, case-sensitive,
  in [0, 1]. TRUE names no implementation and cites only Papineni et al. (2002), whose BLEU has no
  smoothing. The as-published preset is ``smooth_method="nltk"``: NLTK's ``sentence_bleu`` at its
  defaults (no smoothing function) on the 13a tokens. NLTK's "no smoothing" is not an exact zero: it
  floors every n-gram precision that has no match at the smallest positive float
  (``SmoothingFunction.method0``), so a pair without a shared 4-gram gets a tiny score that still
  ranks it by its lower-order matches and brevity penalty; only a pair without a shared word scores 0.
  For a ranking metric this matters: sacrebleu's ``smooth_method="none"`` gives all such pairs exactly
  0, and on the dialogue sets most pairs tie there. The preset was first sacrebleu's
  ``"none"`` (chosen for the cited definition, documented then as "also NLTK's
  default", which it is not); NLTK's floor was adopted after comparing tie treatments against TRUE
  Table 9, where it alone brings BEGIN and DialFact within a point (the TRUE scorers chapter shows
  every configuration beside it). The tokenisation was not changed. ``"none"``, ``"exp"`` (sacrebleu's
  default) and T5's call (``intl`` tokens, ``exp``, no effective order) stay available as analyses;
  ``effective_order`` is sacrebleu's switch for sentence-level BLEU.

* ``f1-q2`` -- the Q² paper's own overlap baseline ("Overlap(r, k)", its Tables 3, 4 and 6), as the authors'
  released baseline script computes it: spaCy tokens (``en_core_web_sm``; here its packaged copy, whose name
  and version enter the signature), lower-cased, stop words and punctuation dropped, then the same
  bag-of-tokens F1 (0 when nothing is shared). A separate scorer, not an option of ``f1``, because it is a
  different paper's definition with its own as-published preset; ``f1`` stays TRUE's.

``component`` picks precision, recall or F-measure for F1/ROUGE (``fmeasure`` by default, which is
what "F1"/"ROUGE-L" means without qualification).
"""
from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass
from functools import partial

import numpy as np

from tfc.scorers.base import Scorer, ScorerConfig, progress_bar

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_TRIVIA = string.punctuation + "‘’´"     # T5's normalize_trivia_qa: these marks become spaces
_PUNCT = {"drop": str.maketrans("", "", string.punctuation),
          "space": str.maketrans(string.punctuation, " " * len(string.punctuation)),
          "trivia": str.maketrans(_TRIVIA, " " * len(_TRIVIA))}
_NON_WORD = re.compile(r"[^\w\s]", re.UNICODE)


def squad_normalize(text: str, *, lower: bool = True, articles: bool = True, punctuation: str = "drop") -> list[str]:
    """SQuAD's answer normalisation as tokens: lower-case, ASCII punctuation removed, the articles a/an/the
    removed, white-space split. The keywords turn single steps off or change them (``punctuation="space"``
    replaces each mark by a space, ``"trivia"`` also the typographic quotes as T5's TriviaQA rule does,
    ``"unicode"`` drops every character that is not a word character or white space); the data chapter uses them
    to test which step TRUE's Table 8 differs in.
    The defaults are the ``f1`` scorer's preset."""
    t = text.lower() if lower else text
    t = _NON_WORD.sub("", t) if punctuation == "unicode" else t.translate(_PUNCT[punctuation])
    if articles:
        t = _ARTICLES.sub(" ", t)
    return t.split()


def squad_text(text: str, **steps) -> str:
    """:func:`squad_normalize` joined back into one string (what SQuAD's ``normalize_answer`` returns); the
    ``normalize="squad"`` text of the ROUGE / BLEU scorers and the QG-QA answer comparison."""
    return " ".join(squad_normalize(text, **steps))


def treebank_tokens(text: str) -> list[str]:
    """NLTK's Treebank word tokens, lower-cased, without punctuation-only tokens and the articles a/an/the."""
    from nltk.tokenize import TreebankWordTokenizer

    toks = (w.lower() for w in TreebankWordTokenizer().tokenize(text))
    return [w for w in toks if w not in ("a", "an", "the") and not all(c in string.punctuation for c in w)]


# Readings of token F1's tokenisation, for the chapters that test which one TRUE used (Tables 3 and 8): the
# preset (SQuAD's) with one step changed each, T5's TriviaQA rule (TRUE's models ran on T5's stack), every Unicode
# mark dropped, a word tokenizer, and a plain lower-cased white-space split
F1_READINGS = {"SQuAD (preset)": squad_normalize,
               "articles kept": partial(squad_normalize, articles=False),
               "punctuation to space": partial(squad_normalize, punctuation="space"),
               "case kept": partial(squad_normalize, lower=False),
               "T5's TriviaQA rule": partial(squad_normalize, punctuation="trivia"),
               "Unicode marks dropped": partial(squad_normalize, punctuation="unicode"),
               "Treebank tokens": treebank_tokens,
               "white space, lower-cased": lambda t: t.lower().split()}


def token_prf(reference: str, candidate: str, norm=squad_normalize) -> tuple[float, float, float]:
    """Bag-of-tokens (precision, recall, F1) of ``candidate`` against ``reference``, both tokenised by ``norm``
    (SQuAD's rules; any of :data:`F1_READINGS`)."""
    return bag_prf(norm(reference), norm(candidate))


_COMPONENTS = ("precision", "recall", "fmeasure")


NORMALISATIONS = ("squad", "q2-spacy")


@dataclass(frozen=True)
class TokenF1Config(ScorerConfig):
    component: str = "fmeasure"
    normalisation: str = "squad"   # "squad": lower-case, strip punctuation and articles; "q2-spacy": see f1-q2
    reference: str = "grounding"

    def __post_init__(self):
        if self.component not in _COMPONENTS:
            raise ValueError(f"component must be one of {_COMPONENTS}; got {self.component!r}")
        if self.normalisation not in NORMALISATIONS:
            raise ValueError(f"normalisation must be one of {NORMALISATIONS}; got {self.normalisation!r}")
        _check_reference(self.reference)


def bag_prf(ref: list[str], cand: list[str]) -> tuple[float, float, float]:
    """Bag-of-tokens (precision, recall, F1) of token lists; all 0 when no token is shared."""
    common = sum((Counter(ref) & Counter(cand)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    p, r = common / len(cand), common / len(ref)
    return p, r, 2 * p * r / (p + r)


def q2_tokens(texts: list[str]) -> list[list[str]]:
    """The Q² authors' baseline tokens: spaCy tokens, lower-cased, without stop words and punctuation (one
    ``nlp.pipe`` over all texts; only the tokenizer runs, since stop words and punctuation are lexical
    attributes)."""
    from tfc.text.sentences import SPACY_MODEL, spacy_available

    if not spacy_available():
        raise RuntimeError(f"f1-q2 (normalisation='q2-spacy') needs spaCy and {SPACY_MODEL}; install the project's "
                           "spaCy model (see the README)")
    nlp = _q2_nlp()
    return [[t.text.lower() for t in doc if not t.is_stop and not t.is_punct]
            for doc in nlp.pipe(list(texts), batch_size=256)]


def _q2_nlp():
    global _Q2_NLP
    if _Q2_NLP is None:
        import spacy

        from tfc.text.sentences import SPACY_MODEL

        _Q2_NLP = spacy.load(SPACY_MODEL, exclude=["tok2vec", "tagger", "parser", "senter", "attribute_ruler",
                                                   "lemmatizer", "ner"])
        _Q2_NLP.max_length = 10_000_000
    return _Q2_NLP


_Q2_NLP = None


class TokenF1(Scorer):
    name = "f1"
    config_cls = TokenF1Config
    output_range = (0.0, 1.0)

    def _score(self, groundings, generations, batch_size, progress):
        idx = _COMPONENTS.index(self.config.component)
        groundings, generations = _as_reference(self.config, groundings, generations)
        if self.config.normalisation == "q2-spacy":
            toks = q2_tokens(list(groundings) + list(generations))
            n = len(groundings)
            return np.array([bag_prf(g, h)[idx] for g, h in zip(toks[:n], toks[n:])])
        it = progress_bar(zip(groundings, generations), total=len(groundings), desc=self.name, enabled=progress)
        return np.array([token_prf(g, h)[idx] for g, h in it])


class Q2OverlapF1(TokenF1):
    """``f1-q2``: the Q² paper's overlap baseline (see the module docstring); registered with
    ``normalisation="q2-spacy"``. The spaCy model's name and version are part of the signature."""

    name = "f1-q2"

    def signature_fields(self) -> dict:
        d = super().signature_fields()
        if self.config.normalisation == "q2-spacy":
            from tfc.text.sentences import SPACY_MODEL, _spacy_version, spacy_available

            d["spacy"] = f"{SPACY_MODEL}@{_spacy_version()}" if spacy_available() else "missing"
        return d


@dataclass(frozen=True)
class RougeConfig(ScorerConfig):

    rouge_type: str = "rougeL"
    component: str = "fmeasure"
    use_stemmer: bool = False
    reference: str = "grounding"
    tokenizer: str = "rouge_score"   # or "whitespace" / "whitespace-cased" / "space-cased" (see _TOKENIZERS)
    # F-measure weight: F_beta = (1 + beta^2) P R / (R + beta^2 P); beta > 1 weighs recall (of the reference's
    # tokens) more. 1.0 is rouge-score's F1; the COCO caption evaluation's ROUGE-L uses 1.2 (``rougeL-coco``).
    beta: float = 1.0
    # "squad": both texts go through the token F1's SQuAD normalisation first (``rougeL-squad``); see TEXT_NORMALISE
    normalize: str = "none"

    def __post_init__(self):
        if self.component not in _COMPONENTS:
            raise ValueError(f"component must be one of {_COMPONENTS}")
        _check_reference(self.reference)
        _check_normalize(self.normalize)
        if self.tokenizer not in _TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {tuple(_TOKENIZERS)}, not {self.tokenizer!r}")
        if not (isinstance(self.beta, (int, float)) and np.isfinite(self.beta) and self.beta > 0):
            raise ValueError(f"beta must be a finite number > 0, not {self.beta!r}")


_REFERENCES = ("grounding", "generated")

# text normalisations applied to both texts before ROUGE / BLEU tokenise them: "none", or "squad", the token F1's
# SQuAD rule (lower-case, ASCII punctuation and the articles a/an/the removed, white space collapsed). TRUE's
# Table 9 ROUGE-L and BLEU-4 AUCs match this: the paper's lexical baselines share one normalisation (TRUE
# scorers chapter); as a text, so rouge-score's and sacrebleu's tokenisers then run on the normalised string
# "squad-articles-kept" (lower-case and punctuation only) is an analysis: which step of the rule matters
TEXT_NORMALISE = {"none": None, "squad": squad_text,
                  "squad-articles-kept": lambda t: squad_text(t, articles=False)}


def _check_normalize(normalize: str) -> None:
    if normalize not in TEXT_NORMALISE:
        raise ValueError(f"normalize must be one of {tuple(TEXT_NORMALISE)}, not {normalize!r}")


def _check_reference(reference: str) -> None:
    if reference not in _REFERENCES:
        raise ValueError(f"reference must be one of {_REFERENCES} (which text is the reference), not {reference!r}")


def _as_reference(config, groundings, generations) -> tuple[list, list]:
    """(references, candidates): the grounding is the reference unless ``config.reference == "generated"``
    (the roles swapped: the grounding is scored as the candidate against the generated text); both texts
    normalised first where the config has a ``normalize`` other than "none" (:data:`TEXT_NORMALISE`)."""
    refs, cands = ((generations, groundings) if config.reference == "generated" else (groundings, generations))
    f = TEXT_NORMALISE[getattr(config, "normalize", "none")]
    return ([f(t) for t in refs], [f(t) for t in cands]) if f is not None else (list(refs), list(cands))


# name -> the _WhitespaceTokenizer's (cased, single_space), or None for rouge-score's own tokenizer (lower-case,
# non-alphanumerics to spaces). "whitespace" / "whitespace-cased": ``str.split()`` lower-cased / as is;
# "space-cased": ``str.split(" ")`` as is, the COCO caption evaluation's split (pycocoevalcap's ``Rouge``), which
# keeps an empty token for each extra space, as that code does.
_TOKENIZERS = {"rouge_score": None, "whitespace": (False, False), "whitespace-cased": (True, False),
               "space-cased": (True, True)}


class _WhitespaceTokenizer:
    """Split on white space; punctuation stays attached to words (as ``"said."``). Lower-cased unless
    ``cased``; on single spaces only (``str.split(" ")``) when ``single_space``."""

    def __init__(self, cased: bool = False, single_space: bool = False):
        self.cased, self.sep = cased, (" " if single_space else None)

    def tokenize(self, text):
        return (text if self.cased else text.lower()).split(self.sep)


def f_beta(precision: float, recall: float, beta: float) -> float:
    """F_beta = (1 + beta^2) P R / (R + beta^2 P), 0 when P or R is 0 (as pycocoevalcap's ``Rouge`` and
    rouge-score's ``fmeasure`` both define it). rouge-score only offers beta = 1, hence these three lines."""
    if precision <= 0 or recall <= 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (recall + b2 * precision)


class Rouge(Scorer):
    name = "rougeL"
    config_cls = RougeConfig
    output_range = (0.0, 1.0)

    def __init__(self, config=None, **overrides):
        super().__init__(config, **overrides)
        if type(self) is Rouge:
            self.name = self.config.rouge_type  # registry names rouge1 / rouge2 / rougeL

    def _load(self):
        from rouge_score import rouge_scorer

        c = self.config
        split = _TOKENIZERS[c.tokenizer]
        tok = None if split is None else _WhitespaceTokenizer(*split)
        self._scorer = rouge_scorer.RougeScorer([c.rouge_type], use_stemmer=c.use_stemmer, tokenizer=tok)

    def _value(self, s) -> float:
        c = self.config
        if c.component == "fmeasure" and c.beta != 1.0:
            return f_beta(s.precision, s.recall, c.beta)
        return getattr(s, c.component)

    def _score(self, groundings, generations, batch_size, progress):
        rt = self.config.rouge_type
        groundings, generations = _as_reference(self.config, groundings, generations)
        it = progress_bar(zip(groundings, generations), total=len(groundings), desc=self.name, enabled=progress)
        # RougeScorer.score(target, prediction): the reference (the grounding by default) is the target
        return np.array([self._value(self._scorer.score(g, h)[rt]) for g, h in it])


class SquadRougeL(Rouge):
    """``rougeL-squad``: TRUE's Table 9 ROUGE-L. Both texts are normalised as TRUE's token F1 normalises them
    (SQuAD's rule: lower-case, ASCII punctuation and the articles removed), then rouge-score's ROUGE-L F1 at its
    defaults. Registered with ``normalize="squad"``. ``rougeL`` (rouge-score on the raw texts) stays the
    library's own computation, used where a paper means that (QAGS) and as the analysis beside this one."""

    name = "rougeL-squad"


class CocoRougeL(Rouge):
    """``rougeL-coco``: ROUGE-L as the COCO caption evaluation computes it (pycocoevalcap's ``Rouge``, also
    the one in Maluuba's nlg-eval): the longest common subsequence of the case-kept tokens split on single
    spaces, combined as F_beta with beta = 1.2 (recall weighted). Registered with ``tokenizer="space-cased"``,
    ``beta=1.2``; the LCS is rouge-score's, which equals pycocoevalcap's ``my_lcs`` (that package is a 100 MB
    wheel of Java tools, so it is not a dependency). TRUE's Table 8 overlap means match it (the data chapter),
    while TRUE's Table 9 AUCs match ``rougeL-squad``: the two tables used different ROUGE-L code."""

    name = "rougeL-coco"


@dataclass(frozen=True)
class BleuConfig(ScorerConfig):

    tokenize: str = "13a"
    # "nltk": NLTK's unsmoothed sentence_bleu (zero precisions floored at the smallest float, see the module
    # docstring); "none" / "floor" / "add-k" / "exp": sacrebleu's own methods ("exp" is sacrebleu's default)
    smooth_method: str = "nltk"
    lowercase: bool = False
    max_ngram_order: int = 4
    reference: str = "grounding"
    effective_order: bool = True  # sacrebleu's sentence-level default; T5's bleu passes False
    reference_case: str = "keep"  # "lower": lower-case the reference only (the Q² authors' baseline call)
    normalize: str = "none"       # "squad": both texts SQuAD-normalised before tokenising (``bleu4-squad``)

    def __post_init__(self):
        _check_normalize(self.normalize)
        if self.reference_case not in ("keep", "lower"):
            raise ValueError(f"reference_case must be 'keep' or 'lower', not {self.reference_case!r}")
        if self.smooth_method not in _SMOOTH:
            raise ValueError(f"smooth_method must be one of {_SMOOTH}, not {self.smooth_method!r}")
        _check_reference(self.reference)
        if self.smooth_method == "nltk" and not self.effective_order:
            raise ValueError("effective_order is sacrebleu's switch; NLTK's sentence_bleu has no such option "
                             "(use a sacrebleu smooth_method to turn it off)")
        if self.max_ngram_order < 1:
            raise ValueError(f"max_ngram_order must be >= 1, not {self.max_ngram_order}")


_SMOOTH = ("nltk", "none", "floor", "add-k", "exp")


class Bleu(Scorer):
    """Sentence BLEU of the generated text against the grounding as its one reference: NLTK's
    ``sentence_bleu`` on sacrebleu's tokens (``smooth_method="nltk"``), or sacrebleu's own."""

    name = "bleu4"
    config_cls = BleuConfig
    output_range = (0.0, 1.0)

    def _load(self):
        from sacrebleu.metrics import BLEU

        c = self.config
        # with "nltk", sacrebleu only tokenises (and gives bleu_parts its clipped n-gram counts and brevity penalty)
        smooth = "none" if c.smooth_method == "nltk" else c.smooth_method
        self._bleu = BLEU(tokenize=c.tokenize, smooth_method=smooth, lowercase=c.lowercase,
                          max_ngram_order=c.max_ngram_order, effective_order=c.effective_order)

    def _nltk(self, pairs):
        import warnings

        from nltk.translate.bleu_score import sentence_bleu

        n = self.config.max_ngram_order
        weights = (1.0 / n,) * n
        tok = self._bleu._preprocess_segment
        with warnings.catch_warnings():   # NLTK warns once per pair without an n-gram match of some order
            warnings.simplefilter("ignore", UserWarning)
            return np.array([float(sentence_bleu([tok(g).split()], tok(h).split(), weights=weights))
                             for g, h in pairs])

    def _sacre(self, pairs) -> list:
        """sacrebleu's sentence results (score, brevity penalty, precisions, lengths) per (grounding, generated)."""
        import logging

        log = logging.getLogger("sacrebleu")   # with effective_order off it logs a warning per sentence
        level = log.level
        if not self.config.effective_order:
            log.setLevel(logging.ERROR)
        try:
            return [self._bleu.sentence_score(h, [g]) for g, h in pairs]
        finally:
            log.setLevel(level)

    def _pairs(self, groundings, generations) -> tuple[list, list]:
        """(references, candidates) as this configuration scores them: the roles (``reference``) and the
        reference's case (``reference_case``) applied."""
        refs, cands = _as_reference(self.config, groundings, generations)
        if self.config.reference_case == "lower":
            refs = [r.lower() for r in refs]
        return refs, cands

    def _score(self, groundings, generations, batch_size, progress):
        groundings, generations = self._pairs(groundings, generations)
        it = progress_bar(zip(groundings, generations), total=len(groundings), desc=self.name, enabled=progress)
        if self.config.smooth_method == "nltk":
            return self._nltk(it)
        return np.array([r.score / 100.0 for r in self._sacre(it)])


class SquadBleu(Bleu):
    """``bleu4-squad``: TRUE's Table 9 BLEU-4. Both texts are normalised as TRUE's token F1 normalises them
    (SQuAD's rule), then the ``bleu4`` computation (NLTK's unsmoothed ``sentence_bleu``; the 13a tokeniser
    only splits on white space once the ASCII punctuation is gone). Registered with ``normalize="squad"``. A text
    that normalises to nothing (only punctuation and articles) scores 0, as it does under ``f1``."""

    name = "bleu4-squad"


class Q2Bleu(Bleu):
    """``bleu-q2``: the Q² paper's BLEU baseline as its authors' baseline script calls it: sacrebleu's
    ``corpus_bleu`` of the one response against the lower-cased knowledge (13a tokens, exponential smoothing, no
    effective order), here the same BLEU object's sentence score with those settings; in [0, 1] (the paper
    prints it × 100). Registered with ``smooth_method="exp"``, ``effective_order=False``,
    ``reference_case="lower"``."""

    name = "bleu-q2"


def bleu_parts(groundings, generations, **config) -> "pd.DataFrame":
    """Per pair, the pieces of sentence BLEU in the ``bleu4`` scorer's configuration (``config``
    overrides it): ``bleu`` (0..1), the brevity penalty ``bp``, the modified n-gram precisions
    ``p1..pN`` (0..1) and the two lengths in tokens (``hyp_len``, ``ref_len``). The grounding is the
    reference, as in :class:`Bleu`; used to show *why* a BLEU correlation is low (e.g. a brevity
    penalty near 0 against a long reference)."""
    import pandas as pd

    from tfc.scorers.base import validate_inputs

    scorer = Bleu(**config).load()
    g, h = scorer._pairs(*validate_inputs(groundings, generations))
    res = scorer._sacre(zip(g, h))
    bleu = scorer._nltk(zip(g, h)) if scorer.config.smooth_method == "nltk" else [r.score / 100.0 for r in res]
    rows = []
    for b, r in zip(bleu, res):
        row = {"bleu": float(b), "bp": float(r.bp), "hyp_len": int(r.sys_len), "ref_len": int(r.ref_len)}
        row.update({f"p{i + 1}": p / 100.0 for i, p in enumerate(r.precisions)})
        rows.append(row)
    return pd.DataFrame(rows)
