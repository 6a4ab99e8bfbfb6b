"""tfc: a reproducible companion to five papers on factual-consistency evaluation.

``import tfc`` is deliberately light: it imports no torch, transformers or spaCy. Submodules
(``tfc.data``, ``tfc.meta``, ``tfc.scorers``, ``tfc.cache`` ...) are loaded on first attribute access.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = {
    "cache", "config", "data", "meta", "models", "reference", "scorers", "text", "train", "glue",
    "imported", "provenance",
}


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"tfc.{name}")
    raise AttributeError(f"module 'tfc' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
