"""Scorers behind one protocol (see :mod:`tfc.scorers.base`) and a registry (dataset-level scoring through the cache: :mod:`tfc.results.dataset`).

>>> import tfc.scorers as S
>>> s = S.get("rougeL")                       # or S.get("nli", checkpoint="tfc/nli-minilm")
>>> s.score(["The cat sat."], ["A cat sat."]) # np.ndarray, higher = more consistent
>>> from tfc.results.dataset import score_dataset
>>> score_dataset("f1", "frank")              # DataFrame id, label, score (cached, resumable)

Registry names: ``f1, f1-q2, rouge1, rouge2, rougeL, rougeL-coco, rougeL-squad, bleu4, bleu4-squad, bleu-q2,
bertscore, nli, summac-zs, summac-conv, ensemble, alignscore, wecheck, qags, q2`` and ``imported:<source>/<metric>``. Names in ``RESERVED`` (none
left) belong to later issues (``get`` says so). Presets: ``get(name, preset="as-published")`` (default) or
``preset="improved"`` where the two differ, or ``preset="fast"`` (as published, with bf16 weights in the model
scorers; see ``PRESETS`` and ``FAST_DTYPE``).
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
    "summac-conv": ("tfc.scorers.summac:SummaCConv", {}),
    "ensemble": ("tfc.scorers.ensemble:Ensemble", {}),
    "alignscore": ("tfc.scorers.alignscore:AlignScoreScorer", {}),
    "wecheck": ("tfc.scorers.wecheck:WeCheckScorer", {}),
    "qags": ("tfc.scorers.qags:QAGSScorer", {}),
    "q2": ("tfc.scorers.q2:Q2Scorer", {}),
}
RESERVED: set[str] = set()

# preset -> name -> overrides applied on top of the registry defaults
# (BERTScore: TRUE's bert-score 0.3.11 truncated long groundings; we chunk in both presets because
# silent truncation is a bug here -- pass long_grounding="truncate" to mimic it, recorded per row.)
# The fast preset: the as-published settings with bf16 weights in every model scorer (the lexical scorers are
# unchanged). Chosen by measured drift, not by speed alone: on a CPU with native bf16, bf16 ran about as fast as
# int8-dynamic or faster (benchmarks/bench_scorers.py), and int8 moved TRUE sets by several AUC points where bf16
# stays within tfc.runs.inhouse.DRIFT_LIMIT (the Performance page shows the drift per scorer and set). On a CPU without
# native bf16 arithmetic (AVX2 only) bf16 is emulated and slower than fp32: ``tfc.models.bf16_native`` says which.
FAST_DTYPE = "bfloat16"
FAST_SCORERS = ("nli", "summac-zs", "summac-conv", "alignscore", "wecheck", "qags", "q2", "bertscore")
PRESETS: dict[str, dict[str, dict]] = {
    "as-published": {},
    "improved": {
        "bleu4": {"smooth_method": "exp"},
    },
    "fast": {name: {"dtype": FAST_DTYPE} for name in FAST_SCORERS},
}


def register(name: str, target: str, **defaults) -> None:
    """Add a scorer class (``"module:Class"``) under ``name`` (for later issues and users)."""
    _REGISTRY[name] = (target, defaults)
    RESERVED.discard(name)


def names() -> list[str]:
    return list(_REGISTRY)


def _cls(target: str):
    mod, attr = target.split(":")
    return getattr(importlib.import_module(mod), attr)


def get(name: str, preset: str = "as-published", **overrides) -> Scorer:
    """A scorer by registry name with config overrides; nothing is loaded until ``load``/``score``."""
    if isinstance(name, Scorer):
        return name
    if name.startswith("imported:"):
        from tfc.scorers.imported import ImportedScorer

        return ImportedScorer(source_metric=name.split(":", 1)[1], **overrides)
    if name in RESERVED and name not in _REGISTRY:
        raise NotImplementedError(f"scorer {name!r} is reserved for a later issue and not implemented yet")
    if name not in _REGISTRY:
        raise KeyError(f"unknown scorer {name!r}; known: {', '.join(names())}, imported:<source>/<metric>")
    if preset not in PRESETS:
        raise KeyError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    target, defaults = _REGISTRY[name]
    kw = {**defaults, **PRESETS[preset].get(name, {}), **overrides}
    return _cls(target)(**kw)


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
           "PRESETS", "FAST_DTYPE", "FAST_SCORERS", "RESERVED"]
