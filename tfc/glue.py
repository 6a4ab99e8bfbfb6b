"""All myst-nb glue keys of the book, in one place.

Notebooks call :func:`glue` with a key registered here; the book's pages reference the same keys
with ``{glue:}`` roles. ``tests/test_book_static.py`` checks that every key used in ``book/`` and
``notebooks/`` is registered, so a renamed key cannot leave a "Pending glue" hole in the book.
Add new keys to ``KEYS`` (key -> what it holds).
"""
from __future__ import annotations

KEYS: dict[str, str] = {
    # 00_overview
    "overview_true_t2_table": "TRUE Table 2 (counts, % consistent): paper / ours / delta",
    "overview_n_datasets_text": "number of TRUE datasets with text in the mirror",
    "overview_n_examples_text": "total examples over the TRUE datasets with text",
    "overview_max_abs_delta_pct": "largest |delta| of % consistent against TRUE Table 2",
    # --- 01_data (data layer) ---
    # --- 02_true (meta-evaluation chapters) ---
    # --- scorers (lexical, BERTScore, NLI, SummaC sections) ---
    # --- other chapters ---
}


def register(key: str, description: str) -> None:
    """Register a key at run time (for chapters added by users; the book's own keys live in KEYS)."""
    KEYS.setdefault(key, description)


def glue(key: str, value, display: bool = False):
    """``myst_nb.glue`` with a registered-key check (imports myst_nb lazily)."""
    if key not in KEYS:
        raise KeyError(f"glue key {key!r} is not registered in tfc.glue.KEYS")
    from myst_nb import glue as _glue

    return _glue(key, value, display=display)
