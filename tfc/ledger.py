"""The reproduction ledger: every published table and figure, what became of it, and how close we got.

Chapters **record** what they compared; the ledger page (``notebooks/08_ledger.ipynb``, run last by
``tfc book run``) **aggregates** it. Nothing in the ledger is typed by hand except, for tables and
figures that no chapter reproduces, the reason why (``tfc/ledger_status.csv``,
``tfc/ledger_figures.csv``).

In a chapter notebook::

    from tfc import ledger
    joined = reference.paper_vs_ours(ours, "TRUE-T3", scale=100, column="summac_zs")
    ledger.record(joined, chapter="02_true_auc", mode=mode)                      # same system
    ledger.record(minilm_vs_t5, chapter="02_true_scorers", role="stand-in",      # smaller model
                  note="MiniLM NLI beside T5-11B ANLI")
    ledger.figure("TRUE-F2", chapter="02_true_auc", note="imported metrics only")

``role`` says what the comparison is: ``"reproduction"`` (the same system or computation as the
paper's cell: a Δ measures a reproduction gap) or ``"stand-in"`` (another, usually smaller, model or
configuration set beside the paper's cell: the Δ measures the difference between systems).

Records go to ``<ledger dir>/<chapter>.parquet`` (tables) and ``<chapter>.figures.json``; the ledger
dir is ``$TFC_LEDGER_DIR`` or ``book/generated/_ledger`` (``tfc book run`` points it next to the
notebooks it writes, and deletes a chapter's records before re-running that chapter). Within one
process, the first record of a chapter replaces the chapter's file; later ones append.

**Status** of a table (:func:`table_ledger`):

* ``reproduced``: every published cell has a ``reproduction`` comparison and all are within the
  table's tolerance (``tfc/ledger_status.csv``, on the printed scale);
* ``partially reproduced``: at least one comparison was recorded (the ``detail`` column says how
  many cells, by which role, and how many are within tolerance);
* otherwise the static status from ``tfc/ledger_status.csv`` (``not reproducible offline`` or
  ``not reproduced yet``) with its reason.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config

STATUS_CSV = Path(__file__).with_name("ledger_status.csv")
FIGURES_CSV = Path(__file__).with_name("ledger_figures.csv")
ROLES = ("reproduction", "stand-in")
RECORD_COLUMNS = ["chapter", "table", "row", "column", "paper", "ours", "delta", "role", "signature",
                  "note", "mode"]
STATUSES = ("reproduced", "partially reproduced", "not reproducible offline", "not reproduced yet",
            "not applicable")
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


def normalise(df: pd.DataFrame, table: str | None = None) -> pd.DataFrame:
    """A paper-vs-ours frame in the ledger's columns ``table, row, column, paper, ours, delta, signature``.

    Accepts the output of :func:`tfc.reference.paper_vs_ours` (``table, row, column, paper, ours, delta``)
    and of :func:`tfc.scorers.dataset.true_comparison` (``dataset, metric, published_as, paper, ours,
    delta``; the published table and column come from ``published_as = "TABLE:column"``). ``table``
    fills a missing table column. Rows without a published value (paper NaN) are kept; the ledger
    counts only rows with both numbers.
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
                         "(pass the output of tfc.reference.paper_vs_ours)")
    for c in ("paper", "ours"):
        d[c] = pd.to_numeric(d[c], errors="raise").astype(float)
    d["delta"] = d["ours"] - d["paper"]
    if "signature" not in d:
        d["signature"] = ""
    d["signature"] = d["signature"].fillna("").astype(str)
    return d[["table", "row", "column", "paper", "ours", "delta", "signature"]].reset_index(drop=True)


def record(df: pd.DataFrame, chapter: str, *, table: str | None = None, role: str = "reproduction",
           note: str = "", mode: str | None = None) -> pd.DataFrame:
    """Record a paper-vs-ours frame of ``chapter`` for the ledger; returns the normalised frame.

    Unknown table ids (not in the reference INDEX) raise ``KeyError``, so a typo cannot create a
    ledger row for a table that does not exist.
    """
    _check_chapter(chapter)
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    d = normalise(df, table)
    from tfc import reference

    known = set(reference.index()["table"])
    unknown = sorted(set(d["table"]) - known)
    if unknown:
        raise KeyError(f"unknown published table(s) {unknown}; known: {', '.join(sorted(known))}")
    d.insert(0, "chapter", chapter)
    d["role"], d["note"], d["mode"] = role, str(note or ""), str(mode or "")
    _TABLES.setdefault(chapter, []).append(d[RECORD_COLUMNS])
    out = ledger_dir() / f"{chapter}.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    pd.concat(_TABLES[chapter], ignore_index=True).to_parquet(tmp, index=False)
    os.replace(tmp, out)
    return d


def figure(figure_id: str, chapter: str, *, status: str = "partially reproduced", note: str = "",
           mode: str | None = None) -> None:
    """Record that ``chapter`` draws an analogue of a paper figure (ids in ``tfc/ledger_figures.csv``).

    Returns None, so that a call ending a notebook cell prints nothing on the page."""
    _check_chapter(chapter)
    figs = pd.read_csv(FIGURES_CSV)
    if figure_id not in set(figs["figure"]):
        raise KeyError(f"unknown figure {figure_id!r}; known: {', '.join(figs['figure'])}")
    if status not in ("reproduced", "partially reproduced"):
        raise ValueError("a recorded figure is 'reproduced' or 'partially reproduced'")
    rec = {"figure": figure_id, "chapter": chapter, "status": status, "note": str(note or ""),
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
    return pd.DataFrame(rows, columns=["figure", "chapter", "status", "note", "mode"])


def status_table() -> pd.DataFrame:
    """``tfc/ledger_status.csv``: per INDEX table its chapter, tolerance, and status/reason when unrecorded."""
    st = pd.read_csv(STATUS_CSV, keep_default_na=False)
    st["tolerance"] = st["tolerance"].astype(float)
    return st


def table_ledger(records: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per table of the reference INDEX (see the module docstring for the status rules).

    Columns: ``table, paper, title, kind, chapter, status, detail, n_published, n_compared,
    n_within_tol, median_abs_delta, max_abs_delta, n_standin, standin_median_abs_delta, signatures,
    modes`` (the running modes of the recording chapters: in smoke mode the deltas are sampling noise).
    ``n_compared`` counts distinct published cells with a reproduction comparison (the best |Δ|
    per cell when several runs were compared); the ``standin`` columns do the same for stand-ins.
    """
    from tfc import reference

    idx = reference.index()
    st = status_table().set_index("table")
    rec = collected() if records is None else records
    rec = rec.dropna(subset=["paper", "ours"]) if len(rec) else rec
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
        best = {}
        for role in ROLES:
            rr = r[r["role"] == role] if len(r) else r
            per_cell = rr.assign(ad=rr["delta"].abs()).groupby(["row", "column"])["ad"].min() if len(rr) else pd.Series(dtype=float)
            best[role] = per_cell
        rep, sti = best["reproduction"], best["stand-in"]
        out.update({
            "n_compared": int(rep.size), "n_within_tol": int((rep <= tol + 1e-9).sum()),
            "median_abs_delta": float(rep.median()) if rep.size else np.nan,
            "max_abs_delta": float(rep.max()) if rep.size else np.nan,
            "n_standin": int(sti.size),
            "standin_median_abs_delta": float(sti.median()) if sti.size else np.nan,
            "signatures": ", ".join(sorted({x for x in r["signature"] if x})) if len(r) else "",
            "modes": ", ".join(sorted({x for x in r["mode"] if x})) if len(r) else "",
        })
        if rep.size == n_pub and n_pub and out["n_within_tol"] == n_pub:
            status, detail = "reproduced", f"all {n_pub} cells within {tol:g}"
        elif rep.size or sti.size:
            status = "partially reproduced"
            parts = []
            if rep.size:
                parts.append(f"{rep.size} of {n_pub} cells by the same system, {out['n_within_tol']} within {tol:g}")
            if sti.size:
                parts.append(f"{sti.size} cells beside stand-in models")
            notes = sorted({x for x in r["note"] if x}) if len(r) else []
            detail = "; ".join(parts) + (f" ({'; '.join(notes)})" if notes else "")
            if s is not None and rep.size < n_pub:
                detail += f". Not compared: {s['reason']}" if s["status_if_unrecorded"] == "not reproducible offline" else ""
        elif s is not None:
            status, detail = s["status_if_unrecorded"], s["reason"]
        else:
            status, detail = "not reproduced yet", "no chapter compares this table and tfc/ledger_status.csv has no entry"
        out["status"], out["detail"] = status, detail
        rows.append(out)
    cols = ["table", "paper", "title", "kind", "chapter", "recorded", "status", "detail", "n_published",
            "n_compared", "n_within_tol", "tolerance", "median_abs_delta", "max_abs_delta", "n_standin",
            "standin_median_abs_delta", "signatures", "modes"]
    return pd.DataFrame(rows)[cols]


def figure_ledger(records: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per paper figure of ``tfc/ledger_figures.csv``, with the recorded status where a chapter drew it."""
    figs = pd.read_csv(FIGURES_CSV, keep_default_na=False)
    rec = collected_figures() if records is None else records
    rows = []
    for f in figs.itertuples(index=False):
        r = rec[rec["figure"] == f.figure] if len(rec) else rec
        if len(r):
            status = "reproduced" if (r["status"] == "reproduced").any() else "partially reproduced"
            chapter = ", ".join(dict.fromkeys(r["chapter"]))
            detail = "; ".join(x for x in dict.fromkeys(r["note"]) if x) or "drawn by the chapter"
        else:
            status, chapter, detail = f.status_if_unrecorded, f.chapter, f.reason
        rows.append({"figure": f.figure, "paper": f.paper, "title": f.title, "kind": f.kind,
                     "chapter": chapter, "recorded": bool(len(r)), "status": status, "detail": detail})
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
    in words, counts as integers; see :mod:`tfc.readable`)."""
    from tfc import readable

    return readable.to_html(frame, decimals=float_digits, html_columns=["chapter"], classes="tfc-ledger",
                            max_colwidth=None)
