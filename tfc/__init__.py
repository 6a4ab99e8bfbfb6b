"""tfc: a reproducible companion to five papers on factual-consistency evaluation.

``import tfc`` is deliberately light: it imports no torch, transformers or spaCy. Submodules
(``tfc.data``, ``tfc.meta``, ``tfc.scorers``, ``tfc.cache``, ``tfc.results`` ...) are loaded on first attribute access,
as are the top-level functions ``tfc.score_frame`` (:mod:`tfc.results.own_files`) and ``tfc.evaluate_frame``
(:mod:`tfc.results.own_eval`).
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

# the layers (see the book's Design page): library first, then the book side and the command line
_SUBMODULES = {
    "config", "text", "meta", "data", "models", "scorers", "cache", "results", "train", "runs", "book", "cli",
}
# functions at the top level, imported on first use: tfc.score_frame(df, "rougeL", grounding_col=...)
_FUNCTIONS = {
    "score_frame": "tfc.results.own_files:score_frame",
    "evaluate_frame": "tfc.results.own_eval:evaluate_frame",
}


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"tfc.{name}")
    if name in _FUNCTIONS:
        module, attr = _FUNCTIONS[name].split(":")
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'tfc' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES) + list(_FUNCTIONS))
