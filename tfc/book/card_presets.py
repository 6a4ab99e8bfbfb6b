"""A scorer card's call of the ``as-published`` preset on a fresh clone.

The preset is the paper's computation read with the checkpoints the book's tables name; several of those were
trained here and are not shipped (their records are), so on a fresh clone the preset alone stops with "not
shipped". The same computation reads the shipped weights when they are named: :func:`shipped_swaps` gives, for each
checkpoint field of the preset that names an unshipped in-house checkpoint, the default's shipped checkpoint in that
field; the card (:func:`tfc.book.cards.as_published`) prints the call with those overrides and its output on its
example pairs.
"""
from __future__ import annotations


def _available(value) -> bool | None:
    """True/False for a ``tfc/<name>`` checkpoint (shipped or not); None for anything else."""
    from tfc.models import release

    if not (isinstance(value, str) and value.startswith("tfc/")):
        return None
    return release.available(value[4:])


def shipped_swaps(name: str) -> tuple[dict, list[str]]:
    """``(overrides, missing)``: the default's shipped checkpoint for each checkpoint field of ``name``'s
    as-published preset that names an unshipped in-house checkpoint, and the unshipped ones no default replaces."""
    from tfc import scorers

    pub = scorers.get(name, preset="as-published").config.to_dict()
    default = scorers.get(name).config.to_dict()
    swaps, missing = {}, []
    for field, value in pub.items():
        if not field.endswith("checkpoint") or _available(value) is not False:
            continue
        if _available(default.get(field)):
            swaps[field] = default[field]
        else:
            missing.append(value)
    return swaps, missing
