"""The read hook: who is told when scores are read.

The score cache (:mod:`tfc.cache`) and the imported score files (:mod:`tfc.data.imported`) call
:func:`report_read` for every read; they do not know who listens. The book's provenance footer
(:mod:`tfc.book.provenance`) adds its log with :func:`add_read_hook` when it is imported (``tfc.book``
imports it, and every notebook kernel of ``tfc book run`` starts with a ``tfc.book`` extension loaded).
"""
from __future__ import annotations

from typing import Callable

ReadHook = Callable[[str, str, str, "str | None", "int | None"], None]
_HOOKS: list[ReadHook] = []


def add_read_hook(hook: ReadHook) -> ReadHook:
    """Call ``hook(kind, signature, dataset, split, rows)`` on every read (once, however often added)."""
    if hook not in _HOOKS:
        _HOOKS.append(hook)
    return hook


def remove_read_hook(hook: ReadHook) -> None:
    if hook in _HOOKS:
        _HOOKS.remove(hook)


def report_read(kind: str, signature: str, dataset: str, split: str | None = None, rows: int | None = None) -> None:
    """Tell every hook that this process read scores (``kind`` = ``cache`` or ``imported``)."""
    for hook in list(_HOOKS):
        hook(kind, signature, dataset, split, rows)
