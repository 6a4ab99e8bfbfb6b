"""All myst-nb glue keys of the book, in one place.

Notebooks call :func:`glue` with a key registered here; the book's pages reference the same keys
with ``{glue:}`` roles. ``tests/test_notebooks_static.py`` checks that every key used in ``book/`` and
``notebooks/`` is registered, so a renamed key cannot leave a "Pending glue" hole in the book.
Add new keys to ``glue_keys.csv`` beside this module (key, the section it belongs to, what it holds): the
registry is data, read once into ``KEYS``.
"""
from __future__ import annotations

import csv
from pathlib import Path

KEYS_FILE = "glue_keys.csv"

def _registered() -> dict[str, str]:
    """The registered keys, in the order of ``glue_keys.csv`` (key, section: the chapter or page, description)."""
    with open(Path(__file__).with_name(KEYS_FILE), newline="", encoding="utf-8") as f:
        return {r["key"]: r["description"] for r in csv.DictReader(f)}


KEYS: dict[str, str] = _registered()


def register(key: str, description: str) -> None:
    """Register a key at run time (for chapters added by users; the book's own keys live in KEYS)."""
    KEYS.setdefault(key, description)


def glue(key: str, value, display: bool = False):
    """``myst_nb.glue`` with a registered-key check (imports myst_nb lazily)."""
    if key not in KEYS:
        raise KeyError(f"glue key {key!r} is not registered in tfc.book.glue.KEYS")
    from myst_nb import glue as _glue

    return _glue(key, _plain(value), display=display)


def _plain(value):
    """A whole float is glued as an integer (``2495.0`` reads ``2495`` in the prose); numpy scalars
    become Python numbers so that the text shows the number, not its type."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    f = float(value)
    return int(f) if f.is_integer() else f
