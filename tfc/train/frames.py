"""A training frame's content: its required columns and content hashes (the mix's identity).

Kept apart from the engine (:mod:`tfc.train.engine`) so that the mix builders (:mod:`tfc.train.mix`,
:mod:`tfc.train.contrast`) hash frames without importing the training loop.
"""
from __future__ import annotations

import hashlib
import json

import pandas as pd

REQUIRED_COLUMNS = ("text_a", "text_b", "task", "label", "source")


DIST_COLS = ("p_entailment", "p_neutral", "p_contradiction")   # a teacher's 3-way distribution (task "dist")


def frame_sha256(df: pd.DataFrame) -> str:
    """sha256 of the frame's content in row order (columns text_a, text_b, task, label, source, and a teacher's
    distribution :data:`DIST_COLS` where the frame has them)."""
    h = hashlib.sha256()
    dist = all(c in df.columns for c in DIST_COLS)
    cols = list(REQUIRED_COLUMNS) + (list(DIST_COLS) if dist else [])
    for row in df.loc[:, cols].itertuples(index=False):
        vals = [row[0], row[1], row[2], float(row[3]), row[4]] + ([float(v) for v in row[5:]] if dist else [])
        h.update(json.dumps(vals, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


def mix_table(df: pd.DataFrame) -> pd.DataFrame:
    """Rows per (source, task) with their content hash (short)."""
    rows = []
    for (src, task), g in df.groupby(["source", "task"], sort=True):
        rows.append({"source": src, "task": task, "rows": len(g), "sha256": frame_sha256(g)[:16]})
    return pd.DataFrame(rows, columns=["source", "task", "rows", "sha256"])
