"""Scorers behind one protocol (see :mod:`tfc.scorers.base`) and a registry (dataset-level scoring through the cache: :mod:`tfc.results.dataset`).

>>> import tfc.scorers as S
>>> s = S.get("rougeL")                       # or S.get("nli", checkpoint="tfc/nli-minilm")
>>> s.score(["The cat sat."], ["A cat sat."]) # np.ndarray, higher = more consistent
>>> from tfc.results.dataset import score_dataset
>>> score_dataset("f1", "frank")              # DataFrame id, label, score (cached, resumable)

Registry names: ``f1, f1-q2, rouge1, rouge2, rougeL, rougeL-coco, rougeL-squad, bleu4, bleu4-squad, bleu-q2,
bertscore, nli, summac-zs, summac-conv, ensemble, alignscore, wecheck, qags, q2`` and ``imported:<source>/<metric>``.

Presets (``PRESETS``), each a set of overrides on top of the registry's base configuration:

* ``"default"`` (what ``get(name)`` gives): the recommended configuration, the best one measured on
  training-side dev data, runnable on a fresh clone with the shipped weights (``DEFAULTS``; each scorer's card
  gives its evidence);
* ``"as-published"``: the paper's computation (no overrides on the base configuration);
* ``"improved"`` (where it differs) and ``"fast"`` (as published, with bf16 weights in the model scorers).

The book names the configuration each of its tables reads (``preset="as-published"`` plus explicit
overrides), so the default can change without orphaning a committed score.
"""
from __future__ import annotations

import importlib

from tfc.scorers.base import Scorer, ScorerConfig, validate_inputs

# name -> ("module:Class", default overrides)
_REGISTRY: dict[str, tuple[str, dict]] = {
    "f1": ("tfc.scorers.lexical:TokenF1", {}),
    "f1-q2": ("tfc.scorers.lexical:Q2OverlapF1", {"normalisation": "q2-spacy"}),
    "rouge1": ("tfc.scorers.lexical:Rouge", {"rouge_type": "rouge1"}),
    "rouge2": ("tfc.scorers.lexical:Rouge", {"rouge_type": "rouge2"}),
    "rougeL": ("tfc.scorers.lexical:Rouge", {"rouge_type": "rougeL"}),
    "rougeL-coco": ("tfc.scorers.lexical:CocoRougeL", {"rouge_type": "rougeL", "tokenizer": "space-cased",
                                                       "beta": 1.2}),
    "rougeL-squad": ("tfc.scorers.lexical:SquadRougeL", {"rouge_type": "rougeL", "normalize": "squad"}),
    "bleu4": ("tfc.scorers.lexical:Bleu", {}),
    "bleu4-squad": ("tfc.scorers.lexical:SquadBleu", {"normalize": "squad"}),
    "bleu-q2": ("tfc.scorers.lexical:Q2Bleu", {"smooth_method": "exp", "effective_order": False,
                                               "reference_case": "lower"}),
    "bertscore": ("tfc.scorers.bertscore:BERTScore", {}),
    "nli": ("tfc.scorers.nli:NLIScorer", {}),
    "summac-zs": ("tfc.scorers.summac:SummaCZS", {}),
    "summac-conv": ("tfc.scorers.summac_conv:SummaCConv", {}),
    "ensemble": ("tfc.scorers.ensemble:Ensemble", {}),
    "alignscore": ("tfc.scorers.alignscore:AlignScoreScorer", {}),
    "wecheck": ("tfc.scorers.wecheck:WeCheckScorer", {}),
    "qags": ("tfc.scorers.qags:QAGSScorer", {}),
    "q2": ("tfc.scorers.q2:Q2Scorer", {}),
}

# The recommended configuration of each scorer (the "default" preset): measured on training-side dev data, never
# on an evaluation set, and runnable with the weights shipped under results/release (tests/test_defaults.py runs
# every one on a fresh artifacts directory). The evidence is on each scorer's card (book/scorers/<name>.md).
SHIPPED_NLI = "tfc/sent-minilm-v8-int8"          # the strongest shipped sentence-level NLI / alignment model
SHIPPED_QA = "tfc/qa-minilm-shared-emb"           # the shipped extractive QA reader of QAGS and Q²
DEFAULTS: dict[str, dict] = {
    # the readings chosen by tfc.runs.readings on dev sets with groundings from one turn to ~250 words
    # (results/models/sent-minilm-v8-int8/readings_dev.json; tests/test_defaults.py holds the two together)
    # Calibration maps (tfc.runs.calibrate) where they lower the dev ECE: not SummaC-Conv's, whose sigmoid output
    # is already fitted with a cross-entropy on training-side pairs (results/models/calibration-*/). SummaC-Conv
    # reads the matrices at SummaC-ZS's chosen granularity through tfc's head, fitted on them: its mean AUC on the
    # held-out dev frames is above the package's head's (tfc.runs.conv; results/models/summac-conv*-minilm/).
    "nli": {"checkpoint": SHIPPED_NLI, "mode": "sentence", "max_length": 128, "calibration": "tfc/calibration-nli"},
    "summac-zs": {"checkpoint": SHIPPED_NLI, "grounding_granularity": "window12", "score_type": "e",
                  "sentence_splitter": "auto", "calibration": "tfc/calibration-summac-zs"},
    "summac-conv": {"checkpoint": SHIPPED_NLI, "grounding_granularity": "window12", "sentence_splitter": "auto",
                    "conv_checkpoint": "tfc/summac-conv-minilm"},
    "alignscore": {"checkpoint": SHIPPED_NLI, "split": "smart-n", "calibration": "tfc/calibration-alignscore"},
    # WeCheck: long groundings cut into chunks, the maximum over chunks (as the NLI scorer reads them), instead of the
    # README's truncation at 512 tokens (the as-published reading); the calibration map was fitted on this reading
    "wecheck": {"checkpoint": "tfc/wecheck-minilm-shared-emb", "long_grounding": "chunk",
                "calibration": "tfc/calibration-wecheck"},
    # BERTScore: long groundings cut into chunks that fit, the maximum over chunks, instead of bert-score's silent
    # truncation (the as-published reading). The dev frames' groundings fit MiniLM's 512 tokens, so they cannot
    # tell the two apart; chunking is chosen because it never drops part of a grounding
    "bertscore": {"long_grounding": "chunk"},
    # Q²: the options chosen on training-side dev data by the Q² chapter's sweeps (tfc.runs.qgqa; records under
    # results/models/qa-minilm-v3 and -v4): the F1 form without the NLI step (above every NLI model of the sweep), the
    # authors' answer candidates, rule set v3; read with the shipped reader, through the steps those sweeps measured
    # (tfc's: SQuAD normalisation, the best span, 0 without a valid question; the as-published steps are the code's)
    "q2": {"checkpoint": SHIPPED_QA, "use_nli": False, "nli_checkpoint": SHIPPED_NLI, "candidate_rule": "q2-code",
           "qg_rules": "v3", "steps": "tfc", "no_questions": "zero", "q_per_candidate": "multi"},
    "qags": {"checkpoint": SHIPPED_QA, "nli_checkpoint": SHIPPED_NLI, "qa_max_length": 512, "qg_rules": "v3",
             "steps": "tfc"},
    # TRUE's ensemble (Q², NLI, SummaC-ZS), each member in its default configuration, through a fixed normalisation
    "ensemble": {"members": ("q2", "nli", "summac-zs"), "normalisation": "ecdf", "reference": "tfc/ensemble-reference"},
}

# preset -> name -> overrides applied on top of the registry defaults
# The fast preset: the as-published settings with bf16 weights in every model scorer (the lexical scorers are
# unchanged). Chosen by measured drift, not by speed alone: on a CPU with native bf16, bf16 ran about as fast as
# int8-dynamic or faster (benchmarks/bench_scorers.py), and int8 moved TRUE sets by several AUC points where bf16
# stays within tfc.runs.auc_drift.DRIFT_LIMIT (the Performance page shows the drift per scorer and set). On a CPU without
# native bf16 arithmetic (AVX2 only) bf16 is emulated and slower than fp32: ``tfc.models.bf16_native`` says which.
FAST_DTYPE = "bfloat16"
FAST_SCORERS = ("nli", "summac-zs", "summac-conv", "alignscore", "wecheck", "qags", "q2", "bertscore")
PRESETS: dict[str, dict[str, dict]] = {
    "default": DEFAULTS,
    "as-published": {},
    "improved": {
        "bleu4": {"smooth_method": "exp"},
        # tfc's own readings, which the in-house models' tables were scored with: SummaC-ZS keeping every sentence
        # (not summac 0.0.4's short-sentence filter) with the largest P(e) - P(c) of one grounding unit per
        # generated unit; AlignScore on greedy chunks of at most 350 words. Their effect on TRUE's AUC beside the
        # as-published one: tfc.runs.reference_readings, on the Performance page
        "summac-zs": {"reduction": "cell", "sentence_splitter": "auto"},
        "alignscore": {"split": "chunk"},
        # tfc's SummaC-Conv head (fractions of grounding units, every generated unit) on the window12 matrices it
        # was fitted on, beside the package's head (tfc.scorers.summac_conv)
        "summac-conv": {"grounding_granularity": "window12", "sentence_splitter": "auto",
                        "conv_checkpoint": "tfc/summac-conv-minilm"},
        # tfc's steps of Q² and QAGS in place of the authors' code's (SQuAD's answer normalisation and F1, the best
        # start <= end span, a passive personal subject also filtered; QAGS's filters in candidate order, a
        # no-answer on the article scoring 0, kept questions repeated to K), and WeCheck's grounding read in chunks
        "q2": {"steps": "tfc"},
        "qags": {"steps": "tfc"},
        "wecheck": {"long_grounding": "chunk"},
    },
    "fast": {name: {"dtype": FAST_DTYPE} for name in FAST_SCORERS},
}


def register(name: str, target: str, **defaults) -> None:
    """Add a scorer class (``"module:Class"``) under ``name`` (for users' own scorers)."""
    _REGISTRY[name] = (target, defaults)


def names() -> list[str]:
    return list(_REGISTRY)


def _cls(target: str):
    mod, attr = target.split(":")
    return getattr(importlib.import_module(mod), attr)


def get(name: str, preset: str = "default", **overrides) -> Scorer:
    """A scorer by registry name: the ``preset``'s configuration (the recommended ``"default"`` unless named)
    with ``overrides``; nothing is loaded until ``load``/``score``. The preset's calibration map is kept only
    while the overrides leave its raw configuration as it was fitted (runtime fields such as ``batch_size``
    do); another checkpoint or reading scores raw unless ``calibration`` is named too."""
    if isinstance(name, Scorer):
        return name
    if name.startswith("imported:"):
        from tfc.scorers.imported import ImportedScorer

        return ImportedScorer(source_metric=name.split(":", 1)[1], **overrides)
    if name not in _REGISTRY:
        raise KeyError(f"unknown scorer {name!r}; known: {', '.join(names())}, imported:<source>/<metric>")
    if preset not in PRESETS:
        raise KeyError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    target, defaults = _REGISTRY[name]
    base = {**defaults, **PRESETS[preset].get(name, {})}
    scorer = _cls(target)(**{**base, **overrides})
    if base.get("calibration") and "calibration" not in overrides and overrides:
        # a shipped calibration map belongs to the raw configuration it was fitted for: overriding any
        # scoring field (another checkpoint, reading or length) gives that configuration's raw scores
        raw = {k: v for k, v in scorer.config.signature_fields().items() if k != "calibration"}
        ref = {k: v for k, v in _cls(target)(**base).config.signature_fields().items() if k != "calibration"}
        if raw != ref:
            scorer = _cls(target)(**{**base, **overrides, "calibration": None})
    return scorer


def from_config(name: str, config: dict) -> Scorer:
    """Rebuild a scorer from a cache sidecar's ``scorer`` and ``config``."""
    if name.startswith("imported:") or name == "imported":
        return get(f"imported:{config['source_metric']}")
    target = _REGISTRY[name][0] if name in _REGISTRY else None
    if target is None:
        raise KeyError(f"unknown scorer {name!r} in sidecar")
    cls = _cls(target)
    cfg = dict(config)
    for k, v in cfg.items():  # JSON turned tuples into lists
        if isinstance(v, list):
            cfg[k] = tuple(tuple(x) if isinstance(x, list) else x for x in v)
    return cls(cls.config_cls(**cfg))


__all__ = ["Scorer", "ScorerConfig", "validate_inputs", "get", "names", "register", "from_config",
           "PRESETS", "DEFAULTS", "FAST_DTYPE", "FAST_SCORERS"]
