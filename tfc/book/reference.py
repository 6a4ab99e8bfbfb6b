"""The papers' published tables (``../shared/reference``) and the paper-vs-ours join.

Every reproduced table in the book goes through :func:`paper_vs_ours`, so that each of our numbers
is shown beside the published value and the difference. Published values stay on their printed
scale (AUC x100); pass ``scale=100`` when joining 0..1 results.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config

COLUMNS = ["table", "row", "column", "value", "flags", "note"]

# (table, row, column, signature, rounded ours) -> the unrounded ours that paper_vs_ours rounded for
# display; the ledger takes the unrounded value back (tfc.book.ledger.normalise), so Δ is never computed on
# a rounded number. Process-local: a chapter rounds and records in the same kernel.
_UNROUNDED: dict[tuple, float] = {}


@lru_cache(maxsize=None)
def _index(ref_dir: str) -> pd.DataFrame:
    path = Path(ref_dir) / "INDEX.csv"
    if not path.is_file():
        raise FileNotFoundError(
            f"published-table index not found: {path}. Set TFC_REFERENCE_DIR to the folder holding "
            "the reference CSVs (../shared/reference in the companion layout).")
    return pd.read_csv(path)


def index() -> pd.DataFrame:
    """INDEX.csv: one row per published table (table id, file, paper, title, kind)."""
    return _index(str(config.reference_dir())).copy()


@lru_cache(maxsize=None)
def _load(ref_dir: str, table: str) -> pd.DataFrame:
    idx = _index(ref_dir)
    hit = idx.loc[idx["table"] == table, "file"]
    if hit.empty:
        raise KeyError(f"unknown published table {table!r}; known: {', '.join(idx['table'])}")
    df = pd.read_csv(Path(ref_dir) / hit.iloc[0], dtype={"flags": str, "note": str},
                     keep_default_na=False, na_values={"value": ["nan", ""]})
    missing = set(COLUMNS) - set(df.columns)
    if missing:
        raise ValueError(f"{hit.iloc[0]}: missing columns {sorted(missing)}")
    return df


def load(table: str) -> pd.DataFrame:
    """One published table in long form: ``table, row, column, value, flags, note``."""
    return _load(str(config.reference_dir()), table).copy()


def value(table: str, row: str, column: str) -> float:
    df = load(table)
    hit = df[(df["row"] == row) & (df["column"] == column)]
    if hit.empty:
        raise KeyError(f"{table} has no cell ({row!r}, {column!r})")
    return float(hit["value"].iloc[0])


def paper_vs_ours(ours: pd.DataFrame, table: str, *, value_col: str = "value", scale: float = 1.0,
                  how: str = "left", column: str | None = None, column_map: dict | None = None,
                  signature_col: str | None = "signature", decimals: int | None = 1) -> pd.DataFrame:
    """Join our results with a published table by (row, column) and add Δ = ours − paper.

    ``ours`` is long form with columns ``row``, ``column`` and ``value_col`` (and optionally a
    ``signature`` column naming the scorer that produced the value). ``column`` forces every row of
    ``ours`` onto one published column (e.g. our MiniLM BERTScore beside the paper's ``bertscore``);
    ``column_map`` renames ours' columns to published ones. ``scale`` multiplies our values first
    (``scale=100`` for AUCs computed on 0..1). ``how='left'`` keeps our rows (paper NaN where the
    paper has no cell); ``how='outer'`` also shows published cells we could not reproduce.

    Returns columns ``table, row, column, paper, ours, delta, flags, [signature]``.
    """
    need = {"row", value_col} | (set() if column else {"column"})
    missing = need - set(ours.columns)
    if missing:
        raise ValueError(f"paper_vs_ours: result frame lacks columns {sorted(missing)}")
    o = ours.copy()
    if column is not None:
        o["ours_column"] = o["column"] if "column" in o else column
        o["column"] = column
    elif column_map:
        o["ours_column"] = o["column"]
        o["column"] = o["column"].map(lambda c: column_map.get(c, c))
    o = o.rename(columns={value_col: "ours"})
    o["ours"] = o["ours"].astype(float) * scale
    pub = load(table)[["row", "column", "value", "flags"]].rename(columns={"value": "paper"})
    out = o.merge(pub, on=["row", "column"], how=how)
    out.insert(0, "table", table)
    out["delta"] = out["ours"] - out["paper"]
    cols = ["table", "row", "column", "paper", "ours", "delta", "flags"]
    if "ours_column" in out:
        cols.append("ours_column")
    if signature_col and signature_col in out:
        cols.append(signature_col)
    out = out[cols]
    out["flags"] = out["flags"].fillna("")
    if decimals is not None:
        sig = out[signature_col] if signature_col and signature_col in out else pd.Series("", index=out.index)
        for r, c, sg, v in zip(out["row"], out["column"], sig.fillna("").astype(str), out["ours"].astype(float)):
            if pd.notna(v):
                _UNROUNDED[(table, r, c, sg, float(np.round(v, decimals)))] = float(v)
        for c in ("paper", "ours", "delta"):
            out[c] = out[c].astype(float).round(decimals)
    return out.reset_index(drop=True)


def unrounded(table: str, row: str, column: str, signature: str, ours: float) -> float:
    """The unrounded value behind ``ours`` when :func:`paper_vs_ours` rounded it in this process (the
    same table, cell and signature, and ``ours`` equal to the rounded value); else ``ours`` itself."""
    try:
        v = float(ours)
    except (TypeError, ValueError):
        return ours
    if not pd.notna(v):
        return v
    raw = _UNROUNDED.get((table, row, column, str(signature or ""), v))
    return v if raw is None else raw


def compare_summary(joined: pd.DataFrame) -> dict:
    """Cells compared, median |Δ| and max |Δ| of a :func:`paper_vs_ours` frame (for the ledger)."""
    d = joined["delta"].dropna().abs()
    return {"n_cells": int(d.size), "median_abs_delta": float(d.median()) if d.size else None,
            "max_abs_delta": float(d.max()) if d.size else None}
