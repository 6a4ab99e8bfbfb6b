"""A training frame's content: its required columns and content hashes (the mix's identity).

Kept apart from the engine (:mod:`tfc.train.engine`) so that the mix builders (:mod:`tfc.train.mix`,
:mod:`tfc.train.contrast`) hash frames without importing the training loop.
"""
from __future__ import annotations

import hashlib
import json

import pandas as pd

REQUIRED_COLUMNS = ("text_a", "text_b", "task", "label", "source")


def frame_sha256(df: pd.DataFrame) -> str:
    """sha256 of the frame's content in row order (columns text_a, text_b, task, label, source)."""
    h = hashlib.sha256()
    for row in df.loc[:, list(REQUIRED_COLUMNS)].itertuples(index=False):
        h.update(json.dumps([row.text_a, row.text_b, row.task, float(row.label), row.source],
                            ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


def mix_table(df: pd.DataFrame) -> pd.DataFrame:
    """Rows per (source, task) with their content hash (short)."""
    rows = []
    for (src, task), g in df.groupby(["source", "task"], sort=True):
        rows.append({"source": src, "task": task, "rows": len(g), "sha256": frame_sha256(g)[:16]})
    return pd.DataFrame(rows, columns=["source", "task", "rows", "sha256"])
