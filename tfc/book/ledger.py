"""The reproduction ledger: every published table and figure, what became of it, and how close we got.

Chapters **record** what they compared; the ledger page (``notebooks/08_ledger.md``, run last by
``tfc book run``) **aggregates** it. Nothing in the ledger is typed by hand except, for tables and
figures that no chapter reproduces, the reason why (``tfc/book/ledger_status.csv``,
``tfc/book/ledger_figures.csv``).

In a chapter notebook::

    from tfc.book import ledger
    joined = reference.paper_vs_ours(ours, "TRUE-T9", scale=100, column="rouge_l")
    ledger.record(joined, chapter="02_true_auc", mode=mode)                      # our computation
    ledger.record(zs_vs_t3, chapter="02_true_auc", role="imported")               # someone's outputs
    ledger.record(minilm_vs_t5, chapter="02_true_scorers", role="stand-in",      # smaller model
                  note="MiniLM NLI beside T5-11B ANLI")
    ledger.figure("TRUE-F2", chapter="02_true_auc", role="imported", note="imported metrics only")

**Roles** (``role=``) say what a comparison is:

* ``reproduction``: the project's own computation of the paper's method, in the scorer's
  ``as-published`` preset (a Δ measures a reproduction gap);
* ``imported``: someone else's per-example outputs (signatures ``imported:…``) with our
  meta-evaluation. A record of imported outputs is *always* stored as ``imported``, whatever role
  the chapter passed, so imported runs can never count as a reproduction;
* ``stand-in``: a different, usually smaller, model beside the paper's (Δ measures the difference
  between systems);
* ``schematic``: a redrawn diagram (figures only).

Only ``reproduction`` cells count toward ``reproduced`` and ``partially reproduced``.

**One preset per cell.** A ``reproduction`` record whose signature belongs to a registered scorer but
is not that scorer's ``as-published`` preset (another tokenizer, another smoothing) is kept in the
records but left out of every count (``n_other_config`` shows how many such cells there were): other
configurations belong in the chapter as an analysis, not in the ledger. When one cell has several
counted records (two chapters, or two runs), the **largest** |Δ| is kept: the ledger never picks the
closest run.

**Constants are not comparisons.** A published cell that describes a set-up the project copies from
the paper (the number of bins, examples per bin, a threshold: :data:`CONSTANT_COLUMNS`,
:data:`CONSTANT_CELLS`) cannot fail, so :func:`record` refuses it.

**Δ and tolerance.** Δ = ours − paper on *unrounded* values (:func:`tfc.book.reference.paper_vs_ours`
remembers what it rounded for display; :func:`normalise` takes the unrounded value back), and a cell
is within tolerance when |Δ| ≤ the table's tolerance, which follows the paper's printed precision
(``tfc/book/ledger_status.csv``: 0.5 for a table printed with one decimal). A raw Δ of 0.54 is outside 0.5.

Records go to ``<ledger dir>/<chapter>.parquet`` (tables) and ``<chapter>.figures.json``; the ledger
dir is ``$TFC_LEDGER_DIR`` or ``book/generated/_ledger`` (``tfc book run`` points it next to the
notebooks it writes, and deletes a chapter's records before re-running that chapter). Within one
process, the first record of a chapter replaces the chapter's file; later ones append.

**Status** of a table (:func:`table_ledger`), first match wins:

* ``reproduced``: every published cell has a counted ``reproduction`` comparison, all within tolerance;
* ``partially reproduced``: at least one counted ``reproduction`` cell is within tolerance;
* ``not reproduced (outside tolerance)``: reproduction cells were compared and none is within tolerance;
* ``imported only``: no reproduction cell, but imported outputs were compared;
* ``stand-in only``: no reproduction or imported cell, only stand-ins;
* otherwise the static status from ``tfc/book/ledger_status.csv`` (``not reproducible offline``, with the
  missing input named, or ``not reproduced yet``) with its reason.

The ``detail`` column always says how many cells of each role were compared and how many are within
tolerance, so a table that is ``imported only`` still shows how close the imported run came.
"""
from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config

STATUS_CSV = Path(__file__).with_name("ledger_status.csv")
MISSES_CSV = Path(__file__).with_name("ledger_misses.csv")
FIGURES_CSV = Path(__file__).with_name("ledger_figures.csv")
ROLES = ("reproduction", "imported", "stand-in", "schematic")
TABLE_ROLES = ("reproduction", "imported", "stand-in")
RECORD_COLUMNS = ["chapter", "table", "row", "column", "paper", "ours", "delta", "role", "signature",
                  "note", "mode"]
STATUSES = ("reproduced", "partially reproduced", "not reproduced (outside tolerance)", "imported only",
            "stand-in only", "not reproducible offline", "not reproduced yet", "not applicable")
FIGURE_STATUSES = ("reproduced", "partially reproduced", "imported only", "stand-in only", "schematic",
                   "not reproducible offline", "not reproduced yet", "not applicable")
# the headline's per-role categories (short names for counts)
CATEGORIES = {"reproduced": "reproduced", "partially reproduced": "partial",
              "not reproduced (outside tolerance)": "outside tolerance", "imported only": "imported-only",
              "stand-in only": "stand-in-only", "not reproducible offline": "not offline",
              "not reproduced yet": "not reproduced yet", "not applicable": "not applicable"}
# published cells that describe a set-up copied from the paper: constants, not comparisons
CONSTANT_COLUMNS = {"setup"}
CONSTANT_CELLS = {("Q2-IT", "q2_threshold"), ("AS-IT", "context_chunk_tokens")}
TOLERANCE_EPS = 1e-9     # float noise only; a raw |Δ| of 0.54 is outside 0.5
_CHAPTER_RE = re.compile(r"^[A-Za-z0-9][\w\-]*$")

# chapters recorded by this process (the first record replaces the chapter's file)
_TABLES: dict[str, list[pd.DataFrame]] = {}
_FIGURES: dict[str, list[dict]] = {}


def ledger_dir() -> Path:
    """``$TFC_LEDGER_DIR`` or ``<repo>/book/generated/_ledger``."""
    env = os.environ.get("TFC_LEDGER_DIR")
    return Path(env).expanduser().resolve() if env else config.REPO_ROOT / "book" / "generated" / "_ledger"


def _check_chapter(chapter: str) -> str:
    if not isinstance(chapter, str) or not _CHAPTER_RE.match(chapter):
        raise ValueError(f"chapter must be a notebook stem such as '02_true_auc', got {chapter!r}")
    return chapter


def is_constant(table: str, row: str, column: str) -> bool:
    """True for a published cell that states a set-up choice (see :data:`CONSTANT_COLUMNS`)."""
    return column in CONSTANT_COLUMNS or (table, row) in CONSTANT_CELLS or (table, column) in CONSTANT_CELLS


def is_imported(signature) -> bool:
    return str(signature or "").startswith("imported:")


@lru_cache(maxsize=None)
def preset_signature(name: str) -> str | None:
    """Signature of registered scorer ``name`` in its ``as-published`` preset (None when ``name`` is not a
    registered scorer, or when its preset cannot be built here)."""
    from tfc import scorers

    if name not in scorers.names():
        return None
    try:
        return scorers.get(name, preset="as-published").signature
    except Exception:  # noqa: BLE001 - a preset that cannot be built is simply not matched
        return ""


def is_as_published(signature) -> bool:
    """Whether a record's signature may count as a reproduction: not a registered scorer's signature
    (data statistics, a table builder) or exactly that scorer's ``as-published`` preset."""
    s = str(signature or "")
    if not s or is_imported(s):
        return True
    name = s.split(".")[0]
    preset = preset_signature(name)
    return preset is None or s == preset


def normalise(df: pd.DataFrame, table: str | None = None) -> pd.DataFrame:
    """A paper-vs-ours frame in the ledger's columns ``table, row, column, paper, ours, delta, signature``.

    Accepts the output of :func:`tfc.book.reference.paper_vs_ours` (``table, row, column, paper, ours, delta``)
    and of :func:`tfc.book.chapters.true.true_comparison` (``dataset, metric, published_as, paper, ours,
    delta``; the published table and column come from ``published_as = "TABLE:column"``). ``table``
    fills a missing table column. Rows without a published value (paper NaN) are kept; the ledger
    counts only rows with both numbers. ``ours`` is the unrounded value where
    :func:`tfc.book.reference.paper_vs_ours` rounded it, and Δ is recomputed from it.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"ledger.record needs a DataFrame, got {type(df).__name__}")
    d = df.copy()
    if "published_as" in d and "row" not in d:
        pub = d["published_as"].fillna("").astype(str)
        has = pub.str.contains(":")
        d = d[has].copy()
        d["table"] = pub[has].str.split(":", n=1).str[0]
        d["column"] = pub[has].str.split(":", n=1).str[1]
        d["row"] = d["dataset"]
    if "table" not in d:
        if table is None:
            raise ValueError("the frame has no 'table' column: pass table='TRUE-T3' (or the like)")
        d["table"] = table
    elif table is not None:
        d["table"] = d["table"].fillna(table)
    missing = {"row", "column", "paper", "ours"} - set(d.columns)
    if missing:
        raise ValueError(f"ledger.record: frame lacks columns {sorted(missing)} "
                         "(pass the output of tfc.book.reference.paper_vs_ours)")
    for c in ("paper", "ours"):
        d[c] = pd.to_numeric(d[c], errors="raise").astype(float)
    if "signature" not in d:
        d["signature"] = ""
    d["signature"] = d["signature"].fillna("").astype(str)
    from tfc.book import reference

    d["ours"] = [reference.unrounded(t, r, c, s, o)
                 for t, r, c, s, o in zip(d["table"], d["row"], d["column"], d["signature"], d["ours"])]
    d["delta"] = d["ours"] - d["paper"]
    return d[["table", "row", "column", "paper", "ours", "delta", "signature"]].reset_index(drop=True)


def record(df: pd.DataFrame, chapter: str, *, table: str | None = None, role: str = "reproduction",
           note: str = "", mode: str | None = None) -> pd.DataFrame:
    """Record a paper-vs-ours frame of ``chapter`` for the ledger; returns the normalised frame.

    Unknown table ids (not in the reference INDEX) raise ``KeyError``, so a typo cannot create a
    ledger row for a table that does not exist; a constant copied from the paper (:func:`is_constant`)
    raises ``ValueError``. Rows with an ``imported:`` signature are stored with role ``imported``.
    """
    _check_chapter(chapter)
    if role not in TABLE_ROLES:
        raise ValueError(f"role must be one of {TABLE_ROLES} for a table (schematic is a figure role), got {role!r}")
    d = normalise(df, table)
    from tfc.book import reference

    known = set(reference.index()["table"])
    unknown = sorted(set(d["table"]) - known)
    if unknown:
        raise KeyError(f"unknown published table(s) {unknown}; known: {', '.join(sorted(known))}")
    const = [f"{t}:{r}/{c}" for t, r, c in zip(d["table"], d["row"], d["column"]) if is_constant(t, r, c)]
    if const:
        raise ValueError(f"{', '.join(const)}: a set-up constant copied from the paper is not a comparison "
                         "(it cannot fail); show it in the chapter, do not record it")
    d.insert(0, "chapter", chapter)
    d["role"] = np.where(d["signature"].map(is_imported) & (role == "reproduction"), "imported", role)
    d["note"], d["mode"] = str(note or ""), str(mode or "")
    _TABLES.setdefault(chapter, []).append(d[RECORD_COLUMNS])
    out = ledger_dir() / f"{chapter}.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    pd.concat(_TABLES[chapter], ignore_index=True).to_parquet(tmp, index=False)
    os.replace(tmp, out)
    return d


def _figure_kinds() -> dict:
    figs = pd.read_csv(FIGURES_CSV, keep_default_na=False)
    return dict(zip(figs["figure"], figs["kind"]))


def figure(figure_id: str, chapter: str, *, status: str = "partially reproduced", role: str | None = None,
           note: str = "", mode: str | None = None) -> None:
    """Record that ``chapter`` draws an analogue of a paper figure (ids in ``tfc/book/ledger_figures.csv``).

    ``role`` is ``reproduction`` (default for data figures), ``imported`` or ``stand-in`` (drawn from
    someone else's outputs or another model) or ``schematic``; a figure of kind ``diagram`` is always a
    ``schematic`` and never counts as reproduced. Returns None, so that a call ending a notebook cell
    prints nothing on the page."""
    _check_chapter(chapter)
    kinds = _figure_kinds()
    if figure_id not in kinds:
        raise KeyError(f"unknown figure {figure_id!r}; known: {', '.join(kinds)}")
    if status not in ("reproduced", "partially reproduced"):
        raise ValueError("a recorded figure is 'reproduced' or 'partially reproduced'")
    if role is not None and role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    role = "schematic" if kinds[figure_id] == "diagram" else (role or "reproduction")
    rec = {"figure": figure_id, "chapter": chapter, "status": status, "role": role, "note": str(note or ""),
           "mode": str(mode or "")}
    _FIGURES.setdefault(chapter, []).append(rec)
    out = ledger_dir() / f"{chapter}.figures.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(_FIGURES[chapter], indent=1))


def clear(chapter: str, directory: Path | None = None) -> None:
    """Delete a chapter's records (``tfc book run`` does this before re-running the chapter)."""
    _check_chapter(chapter)
    d = Path(directory or ledger_dir())
    for p in (d / f"{chapter}.parquet", d / f"{chapter}.figures.json"):
        p.unlink(missing_ok=True)
    _TABLES.pop(chapter, None)
    _FIGURES.pop(chapter, None)


def collected(directory: Path | None = None) -> pd.DataFrame:
    """All recorded comparisons (one row per compared cell and recording)."""
    d = Path(directory or ledger_dir())
    files = sorted(d.glob("*.parquet")) if d.is_dir() else []
    if not files:
        return pd.DataFrame(columns=RECORD_COLUMNS)
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)[RECORD_COLUMNS]


def collected_figures(directory: Path | None = None) -> pd.DataFrame:
    d = Path(directory or ledger_dir())
    rows = []
    for f in sorted(d.glob("*.figures.json")) if d.is_dir() else []:
        rows += json.loads(f.read_text())
    out = pd.DataFrame(rows, columns=["figure", "chapter", "status", "role", "note", "mode"])
    out["role"] = out["role"].fillna("reproduction")
    return out


def status_table() -> pd.DataFrame:
    """``tfc/book/ledger_status.csv``: per INDEX table its chapter, tolerance, and status/reason when unrecorded."""
    st = pd.read_csv(STATUS_CSV, keep_default_na=False)
    st["tolerance"] = st["tolerance"].astype(float)
    return st


def tolerance(table: str) -> float:
    """The ledger's tolerance for ``table`` (``ledger_status.csv``); KeyError for a table it does not list."""
    tol = status_table().set_index("table")["tolerance"]
    if table not in tol.index:
        raise KeyError(f"{table!r} is not in {STATUS_CSV.name}")
    return float(tol[table])


def counted(records: pd.DataFrame) -> pd.DataFrame:
    """The records that enter the counts: both numbers present, a table role, and (for reproductions)
    the ``as-published`` preset. Adds ``counted_role``: the role, or ``other-config`` for a reproduction
    record of a non-preset configuration (kept out of every count)."""
    rec = records.dropna(subset=["paper", "ours"]) if len(records) else records.copy()
    if not len(rec):
        return rec.assign(counted_role=pd.Series(dtype=str))
    rec = rec.copy()
    # an imported signature is never a reproduction, whatever an old record says
    rec["role"] = np.where(rec["signature"].map(is_imported) & (rec["role"] == "reproduction"), "imported",
                           rec["role"])
    preset = rec["signature"].map(is_as_published)
    rec["counted_role"] = np.where((rec["role"] == "reproduction") & ~preset, "other-config", rec["role"])
    return rec


def _per_cell(rr: pd.DataFrame) -> pd.Series:
    """|Δ| per published cell: the largest over the cell's records (never the closest run)."""
    if not len(rr):
        return pd.Series(dtype=float)
    return rr.assign(ad=rr["delta"].abs()).groupby(["row", "column"])["ad"].max()


def _n_within(cell: pd.Series, tol: float) -> int:
    """How many cells lie within ``tol`` (|Δ| per cell, :func:`_per_cell`)."""
    return int((cell <= tol + TOLERANCE_EPS).sum())


def _status_and_detail(rep, imp, sti, other, r, n_pub: int, tol: float, s) -> tuple[str, str]:
    """A table's ledger status and its detail sentence (see the module docstring for the rules), from the
    per-cell largest |Δ| of each role (``rep``, ``imp``, ``sti``, ``other``), its records ``r`` and its
    row of ``ledger_status.csv`` (``s``, or None)."""
    n_within = _n_within(rep, tol)
    parts = []
    if rep.size:
        parts.append(f"{rep.size} of {n_pub} cells reproduced by our own computation, "
                     f"{n_within} within {tol:g}")
    if imp.size:
        parts.append(f"{imp.size} cells from imported outputs, {_n_within(imp, tol)} within {tol:g}")
    if sti.size:
        parts.append(f"{sti.size} cells beside stand-in models")
    if other.size:
        parts.append(f"{other.size} cells only by non-preset configurations (not counted)")
    notes = sorted({x for x in r["note"] if x}) if len(r) else []
    detail = "; ".join(parts) + (f" ({'; '.join(notes)})" if notes and parts else "")
    if rep.size == n_pub and n_pub and n_within == n_pub:
        status = "reproduced"
    elif n_within:
        status = "partially reproduced"
    elif rep.size:
        status = "not reproduced (outside tolerance)"
    elif imp.size:
        status = "imported only"
    elif sti.size:
        status = "stand-in only"
    elif s is not None:
        status = s["status_if_unrecorded"]
        detail = s["reason"] + (f". Recorded: {detail}" if detail else "")
    else:
        status = "not reproduced yet"
        detail = "no chapter compares this table and tfc/book/ledger_status.csv has no entry"
    if status in ("partially reproduced", "not reproduced (outside tolerance)", "imported only",
                  "stand-in only") and s is not None and s["status_if_unrecorded"] == "not reproducible offline":
        detail += f". Not reproducible offline: {s['reason']}"
    return status, detail


def table_ledger(records: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per table of the reference INDEX (see the module docstring for the status rules).

    Columns: ``table, paper, title, kind, chapter, recorded, status, category, detail, n_published,
    n_compared, n_within_tol, tolerance, median_abs_delta, max_abs_delta, n_imported,
    imported_n_within_tol, imported_median_abs_delta, n_standin, standin_median_abs_delta,
    n_other_config, signatures, modes``. ``n_compared`` counts distinct published cells with a counted
    ``reproduction`` comparison (the largest |Δ| per cell when several runs were recorded); the
    ``imported`` and ``standin`` columns do the same for those roles; ``n_other_config`` counts cells
    recorded only by non-preset configurations (not counted anywhere). ``modes`` are the running
    modes of the recording chapters: in smoke mode the deltas are sampling noise.
    """
    from tfc.book import reference

    idx = reference.index()
    st = status_table().set_index("table")
    rec = counted(collected() if records is None else records)
    rows = []
    for t in idx.itertuples(index=False):
        pub = reference.load(t.table)
        n_pub = int(pub[["row", "column"]].drop_duplicates().shape[0])
        s = st.loc[t.table] if t.table in st.index else None
        tol = float(s["tolerance"]) if s is not None else 0.5
        r = rec[rec["table"] == t.table] if len(rec) else rec
        chapters = list(dict.fromkeys(r["chapter"])) if len(r) else []
        out = {"table": t.table, "paper": t.paper, "title": t.title, "kind": t.kind,
               "chapter": ", ".join(chapters) if chapters else (s["chapter"] if s is not None else ""),
               "recorded": bool(chapters), "n_published": n_pub, "tolerance": tol}
        cells = {role: _per_cell(r[r["counted_role"] == role] if len(r) else r)
                 for role in TABLE_ROLES + ("other-config",)}
        rep, imp, sti = cells["reproduction"], cells["imported"], cells["stand-in"]
        other = cells["other-config"]
        other = other[~other.index.isin(rep.index)] if len(other) else other
        out.update({
            "n_compared": int(rep.size), "n_within_tol": _n_within(rep, tol),
            "median_abs_delta": float(rep.median()) if rep.size else np.nan,
            "max_abs_delta": float(rep.max()) if rep.size else np.nan,
            "n_imported": int(imp.size), "imported_n_within_tol": _n_within(imp, tol),
            "imported_median_abs_delta": float(imp.median()) if imp.size else np.nan,
            "n_standin": int(sti.size),
            "standin_median_abs_delta": float(sti.median()) if sti.size else np.nan,
            "n_other_config": int(other.size),
            "signatures": ", ".join(sorted({x for x in r["signature"] if x})) if len(r) else "",
            "modes": ", ".join(sorted({x for x in r["mode"] if x})) if len(r) else "",
        })
        out["status"], out["detail"] = _status_and_detail(rep, imp, sti, other, r, n_pub, tol, s)
        out["category"] = CATEGORIES.get(out["status"], out["status"])
        rows.append(out)
    cols = ["table", "paper", "title", "kind", "chapter", "recorded", "status", "category", "detail",
            "n_published", "n_compared", "n_within_tol", "tolerance", "median_abs_delta", "max_abs_delta",
            "n_imported", "imported_n_within_tol", "imported_median_abs_delta", "n_standin",
            "standin_median_abs_delta", "n_other_config", "signatures", "modes"]
    return pd.DataFrame(rows)[cols]


def miss_causes() -> pd.DataFrame:
    """``tfc/book/ledger_misses.csv``: where a chapter shows the cause of reproduction cells outside tolerance.
    One line per (table, row pattern, column pattern) with the chapter, the section title and the cause in a
    few words; patterns are full-match regular expressions. A line whose cause is open ("open: ...") also names,
    in ``settles``, the input that would settle it and that is not available offline (a ValueError otherwise).
    Hand-written like the statuses' reasons: it names where the evidence is, it holds no number."""
    m = pd.read_csv(MISSES_CSV, keep_default_na=False)
    for col in ("rows", "columns"):
        for pat in m[col]:
            re.compile(pat)          # a bad pattern fails here, not silently later
    if "settles" not in m.columns:
        raise ValueError(f"{MISSES_CSV} has no 'settles' column (what would settle an open cause)")
    unnamed = m[m["cause"].map(lambda c: _evidence(c) == "cause open") & (m["settles"].str.strip() == "")]
    if len(unnamed):
        raise ValueError("an open cause must name what would settle it ('settles'): "
                         + ", ".join(f"{r.table} {r.rows} {r.columns}" for r in unnamed.itertuples()))
    return m


def _evidence(cause: str) -> str:
    """A register line's kind: "cause open" where it starts with "open:", else "cause shown"."""
    return "cause open" if cause.startswith("open:") else "cause shown"


def misses(records: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every counted ``reproduction`` cell outside its table's tolerance (the largest |Δ| per cell, as the
    counts take it), with the chapter section that shows its cause (:func:`miss_causes`, first matching line)
    or ``cause`` = "not explained yet". ``evidence`` is "cause shown", "cause open" (the register's line starts
    with "open:": the section rules candidates out or shows a sensitivity, but proves no cause) or "none";
    ``settles`` names, for an open cause, the missing input that would settle it (else "").
    Columns: ``table, row, column, paper, ours, delta, tolerance, chapter, section, cause, evidence, settles``."""
    rec = counted(collected() if records is None else records)
    cols = ["table", "row", "column", "paper", "ours", "delta", "tolerance", "chapter", "section", "cause", "evidence",
            "settles"]
    rep = rec[rec["counted_role"] == "reproduction"] if len(rec) else rec
    if not len(rep):
        return pd.DataFrame(columns=cols)
    tol = status_table().set_index("table")["tolerance"]
    rep = rep.assign(ad=rep["delta"].abs()).sort_values("ad", ascending=False, kind="stable")
    cell = rep.drop_duplicates(["table", "row", "column"]).copy()
    cell["tolerance"] = cell["table"].map(tol).fillna(0.5)
    cell = cell[cell["ad"] > cell["tolerance"] + TOLERANCE_EPS]
    causes = miss_causes()
    out = []
    for r in cell.itertuples(index=False):
        hit = causes[(causes["table"] == r.table)
                     & causes["rows"].map(lambda p: re.fullmatch(p, str(r.row)) is not None)
                     & causes["columns"].map(lambda p: re.fullmatch(p, str(r.column)) is not None)]
        h = hit.iloc[0] if len(hit) else None
        out.append({"table": r.table, "row": r.row, "column": r.column, "paper": r.paper, "ours": r.ours,
                    "delta": r.delta, "tolerance": r.tolerance,
                    "chapter": h["chapter"] if h is not None else r.chapter,
                    "section": h["section"] if h is not None else "",
                    "cause": h["cause"] if h is not None else "not explained yet",
                    "evidence": "none" if h is None else _evidence(h["cause"]),
                    "settles": h["settles"] if h is not None else ""})
    return pd.DataFrame(out, columns=cols).sort_values(["table", "row", "column"], ignore_index=True)


def _natural(name: str) -> list:
    """Sort key that orders the numbers inside a name by value ("TRUE-T3" before "TRUE-T11")."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def open_causes(miss: pd.DataFrame) -> pd.DataFrame:
    """The cells whose cause is open (:func:`misses`, ``evidence == "cause open"``), grouped by what would settle
    them: ``settles, cells, tables`` (table names in natural order, so T3 before T11), most cells first, ties in
    order of appearance. Empty (same columns) when no cause is open."""
    cols = ["settles", "cells", "tables"]
    op = miss[miss["evidence"] == "cause open"]
    if not len(op):
        return pd.DataFrame(columns=cols)
    g = op.groupby("settles", sort=False).agg(cells=("table", "size"),
                                                tables=("table", lambda s: ", ".join(sorted(set(s), key=_natural))))
    return g.reset_index().sort_values("cells", ascending=False, kind="stable", ignore_index=True)[cols]


def counts(tables: pd.DataFrame) -> dict:
    """Tables per headline category (``reproduced, partial, outside tolerance, imported-only,
    stand-in-only, not offline, not reproduced yet, not applicable``) and cells per role."""
    c = tables["status"].map(CATEGORIES).value_counts()
    out = {k: int(c.get(k, 0)) for k in CATEGORIES.values()}
    out.update({
        "reproduction cells": int(tables["n_compared"].sum()),
        "reproduction cells within tolerance": int(tables["n_within_tol"].sum()),
        "imported cells": int(tables["n_imported"].sum()),
        "imported cells within tolerance": int(tables["imported_n_within_tol"].sum()),
        "stand-in cells": int(tables["n_standin"].sum()),
        "other-configuration cells (not counted)": int(tables["n_other_config"].sum()),
    })
    return out


def figure_ledger(records: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per paper figure of ``tfc/book/ledger_figures.csv``, with the recorded status where a chapter
    drew it. Diagrams are ``schematic`` (redrawn or not, they are never counted as reproduced); a figure
    drawn only from imported outputs or stand-ins is ``imported only`` / ``stand-in only``."""
    figs = pd.read_csv(FIGURES_CSV, keep_default_na=False)
    rec = collected_figures() if records is None else records
    if len(rec) and "role" not in rec:
        rec = rec.assign(role="reproduction")
    rows = []
    for f in figs.itertuples(index=False):
        r = rec[rec["figure"] == f.figure] if len(rec) else rec
        if f.kind == "diagram":
            role = "schematic"
        elif len(r):
            roles = set(r["role"])
            role = next(x for x in ("reproduction", "imported", "stand-in", "schematic") if x in roles)
        else:
            role = ""
        if f.kind == "diagram":
            status = "schematic"
            chapter = ", ".join(dict.fromkeys(r["chapter"])) if len(r) else f.chapter
            detail = "; ".join(x for x in dict.fromkeys(r["note"]) if x) if len(r) else f.reason
            detail = detail or "redrawn by the chapter"
        elif len(r):
            rr = r[r["role"] == role]
            if role == "reproduction":
                status = "reproduced" if (rr["status"] == "reproduced").any() else "partially reproduced"
            else:
                status = f"{role} only"
            chapter = ", ".join(dict.fromkeys(r["chapter"]))
            detail = "; ".join(x for x in dict.fromkeys(r["note"]) if x) or "drawn by the chapter"
        else:
            status, chapter, detail = f.status_if_unrecorded, f.chapter, f.reason
        rows.append({"figure": f.figure, "paper": f.paper, "title": f.title, "kind": f.kind,
                     "chapter": chapter, "recorded": bool(len(r)), "role": role, "status": status,
                     "detail": detail})
    return pd.DataFrame(rows)


def summary(tables: pd.DataFrame) -> pd.DataFrame:
    """Counts of tables per paper and status."""
    return (tables.groupby(["paper", "status"]).size().rename("tables").reset_index()
            .pivot(index="paper", columns="status", values="tables").fillna(0).astype(int))


def chapter_links(frame: pd.DataFrame, built_chapters=None, col: str = "chapter") -> pd.DataFrame:
    """Turn the chapter column into HTML links (``<stem>.html``, relative to book/generated/) for
    chapters in ``built_chapters`` (default: the notebook stems listed in book/_toc.yml); others stay text."""
    if built_chapters is None:
        toc = (config.REPO_ROOT / "book" / "_toc.yml").read_text()
        built_chapters = set(re.findall(r"generated/([\w\-]+)", toc))
    out = frame.copy()

    def link(cell: str) -> str:
        parts = [c.strip() for c in str(cell).split(",") if c.strip()]
        return ", ".join(f'<a href="{c}.html">{c}</a>' if c in built_chapters else c for c in parts)

    out[col] = out[col].map(link)
    return out


def to_html(frame: pd.DataFrame, float_digits: int = 2) -> str:
    """An HTML table for the ledger page (links in the chapter column kept, other text escaped, headers
    in words, counts as integers; see :mod:`tfc.book.readable`)."""
    from tfc.book import readable

    return readable.to_html(frame, decimals=float_digits, html_columns=["chapter"], classes="tfc-ledger",
                            max_colwidth=None)
