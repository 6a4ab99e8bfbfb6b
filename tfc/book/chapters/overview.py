"""The front page's headline table and first figure, read from the reproduction ledger.

Nothing here is typed in except *which* published cell is each paper's main result
(:data:`HEADLINES`). The published value comes from the reference tables (``tfc.book.reference``); our
value, Δ and status come from what the chapters recorded with :func:`tfc.book.ledger.record`, at the time
the front page runs (``tfc book run`` executes it after the chapters). When an in-house model is
retrained and its chapter re-run, the front page shows the new numbers without a change here.

**Rule for "ours".** For each main result, our value is the best value the chapters recorded for
that published table and row among *our own computations*: every signature except imported
per-example outputs of the original implementations (``imported:…``), restricted to the scorer family
named in the spec (``QAGS`` rows take only our QAGS scorer, and so on; the TRUE row takes any of our
scorers, since TRUE is a benchmark and its main result is the best metric). "Best" is the highest
value, or the lowest where the spec says lower is better.

**Status** of a row: ``reproduced`` (our value is a reproduction, the same computation as the paper's,
within the table's tolerance from ``tfc/book/ledger_status.csv``), ``recomputed, off by more than …``
(a reproduction outside the tolerance), ``stand-in`` (a different, smaller model beside the paper's:
Δ measures the gap between the systems, not a reproduction error), or ``not recorded`` with the
ledger's reason. Records from a smoke run are marked as such.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tfc import config

LEXICAL = ("f1", "f1-q2", "rouge1", "rouge2", "rougeL", "rougeL-squad", "rougeL-coco", "bleu4", "bleu4-squad",
           "bleu-q2")


@dataclass(frozen=True)
class Headline:
    """One paper's main result: the published cell (``table``, ``row``, ``column``) and what counts as ours."""

    paper: str
    table: str
    row: str
    column: str
    result: str                      # what the number is, in words
    system: str                      # the paper's system behind the published value
    scorers: tuple | None = None     # scorer families whose records count as ours (None: any of ours)
    same_column: bool = True         # ours must be recorded against the same published column
    better: str = "higher"
    scale: float = 1.0               # shown on this multiple of the printed scale (Q² scores: x100)


HEADLINES: tuple[Headline, ...] = (
    Headline("TRUE", "TRUE-T3", "avg_wo_vitc_fever", "anli_t5_11b",
             "ROC AUC × 100, mean of the 9 TRUE sets with text; best single metric against our best scorer",
             "ANLI, T5-11B", scorers=None, same_column=False),
    Headline("QAGS", "QAGS-T1", "qags_cnndm", "qags",
             "Pearson r × 100 with human judgements, CNN/DM summaries", "QAGS with BART QG and BERT QA",
             scorers=("qags",)),
    Headline("QAGS", "QAGS-T1", "qags_xsum", "qags",
             "Pearson r × 100 with human judgements, XSum summaries", "QAGS with BART QG and BERT QA",
             scorers=("qags",)),
    Headline("Q²", "Q2-T2", "dodeca_inconsistent", "q2_nli",
             "mean Q² score × 100 of responses annotated inconsistent (lower is better)",
             "Q² with T5 QG, ALBERT QA and RoBERTa NLI", scorers=("q2",), better="lower", scale=100),
    Headline("Q²", "Q2-T2", "dodeca_consistent", "q2_nli",
             "mean Q² score × 100 of responses annotated consistent (higher is better)",
             "Q² with T5 QG, ALBERT QA and RoBERTa NLI", scorers=("q2",), scale=100),
    Headline("AlignScore", "AS-T3", "avg_zs_wo_paws_vitc_fever", "alignscore_base",
             "ROC AUC × 100 on TRUE, AVG-ZS (the sets AlignScore was not trained on)",
             "AlignScore-base, RoBERTa-base", scorers=("alignscore",)),
    Headline("WeCheck", "WC-T1", "avg_wo_vitc_fever", "wecheck",
             "ROC AUC × 100, mean of the 9 TRUE sets with text", "WeCheck, DeBERTa-v3-large",
             scorers=("wecheck",)),
)

COLUMNS = ["paper", "result", "system", "table", "row", "column", "published", "ours", "delta", "status",
           "role", "signature", "chapter", "mode", "note"]


def scorer_of(signature: str) -> str:
    """Registry name of a signature (``imported`` for imported per-example outputs)."""
    s = str(signature or "")
    return "imported" if s.startswith("imported:") else s.split(".")[0]


def is_ours(signature: str) -> bool:
    """Our own computation: a scorer signature that is not an imported source."""
    s = str(signature or "")
    return bool(s) and not s.startswith("imported:")


def inhouse_models() -> list[str]:
    """Names of the in-house checkpoints with a committed model record (``results/models/<name>``),
    longest first so that ``wecheck-minilm-em`` wins over ``wecheck-minilm``."""
    d = config.model_records_dir()
    names = [p.name for p in d.iterdir() if p.is_dir()] if d.is_dir() else []
    return sorted(names, key=lambda n: (-len(n), n))


def kind_of(signature: str, inhouse=None) -> str:
    """``imported``, ``lexical``, ``in-house`` (uses one of our trained checkpoints) or ``off-the-shelf``."""
    sc = scorer_of(signature)
    if sc == "imported":
        return "imported"
    if sc in LEXICAL:
        return "lexical"
    tag = str(signature).split(".")[1] if "." in str(signature) else ""
    models = inhouse_models() if inhouse is None else inhouse
    return "in-house" if any(m in tag for m in models) else "off-the-shelf"


def _records(records: pd.DataFrame | None) -> pd.DataFrame:
    """The ledger's records as the front page may use them: with a value of ours, imported outputs
    never in the ``reproduction`` role, and no reproduction record of a non-preset configuration
    (one preset per cell: another tokenizer or smoothing may not be picked because it lands closer)."""
    from tfc.book import ledger

    rec = ledger.collected() if records is None else records
    if not len(rec):
        return pd.DataFrame(columns=ledger.RECORD_COLUMNS)
    rec = ledger.counted(rec.dropna(subset=["ours"]))
    rec = rec[rec["counted_role"] != "other-config"]
    return rec.drop(columns=["counted_role"]).reset_index(drop=True)


def candidates(spec: Headline, records: pd.DataFrame | None = None) -> pd.DataFrame:
    """The ledger records that count as "ours" for ``spec`` (see the module docstring)."""
    rec = _records(records)
    if not len(rec):
        return rec
    m = (rec["table"] == spec.table) & (rec["row"] == spec.row) & rec["signature"].map(is_ours)
    if spec.same_column:
        m &= rec["column"] == spec.column
    if spec.scorers is not None:
        m &= rec["signature"].map(scorer_of).isin(spec.scorers)
    return rec[m].reset_index(drop=True)


def _status(role: str, delta: float, tol: float, scale: float) -> str:
    if role == "reproduction":
        if abs(delta) <= tol * scale + 1e-9:
            return "reproduced"
        return f"recomputed, off by more than {tol * scale:g}"
    return "stand-in (smaller model)"


def headline(records: pd.DataFrame | None = None, specs=HEADLINES) -> pd.DataFrame:
    """One row per main result (:data:`HEADLINES`): published value, ours, Δ, status, and where ours
    comes from (role, signature, chapter, mode). Reads the ledger unless ``records`` is given."""
    from tfc.book import ledger, reference

    rec = _records(records)
    status = ledger.status_table().set_index("table")
    tables = None
    rows = []
    for spec in specs:
        published = reference.value(spec.table, spec.row, spec.column) * spec.scale
        tol = float(status.loc[spec.table, "tolerance"]) if spec.table in status.index else 0.5
        cand = candidates(spec, rec)
        out = {"paper": spec.paper, "result": spec.result, "system": spec.system, "table": spec.table,
               "row": spec.row, "column": spec.column, "published": published}
        if len(cand):
            asc = spec.better == "lower"
            best = cand.sort_values(["ours", "signature"], ascending=[asc, True], kind="stable").iloc[0]
            ours = float(best["ours"]) * spec.scale
            delta = ours - published
            st = _status(best["role"], delta, tol, spec.scale)
            if best["mode"] and best["mode"] != "default" and best["mode"] != "full":
                st += f" ({best['mode']} run: a few examples per set)"
            out.update({"ours": ours, "delta": delta, "status": st, "role": best["role"],
                        "signature": best["signature"], "chapter": best["chapter"], "mode": best["mode"],
                        "note": best["note"]})
        else:
            if tables is None:
                tables = ledger.table_ledger(rec).set_index("table")
            t = tables.loc[spec.table] if spec.table in tables.index else None
            chapter = str(status.loc[spec.table, "chapter"]) if spec.table in status.index else ""
            if t is not None and t["status"] == "not reproducible offline":
                st = f"not reproducible offline: {t['detail']}"
            elif t is not None and t["recorded"]:
                st = "no value of ours for this cell in the chapter's records"
            else:
                st = "not recorded yet (run the chapter)"
            out.update({"ours": np.nan, "delta": np.nan, "status": st, "role": "", "signature": "",
                        "chapter": chapter, "mode": "", "note": ""})
        rows.append(out)
    return pd.DataFrame(rows, columns=COLUMNS)


def table_counts(tables: pd.DataFrame) -> pd.DataFrame:
    """The ledger's tables per category, for the front page: reproduced, partially reproduced (at
    least one of our own cells within tolerance), reproduction outside tolerance, imported only,
    stand-in only, not reproducible offline and not reproduced yet (one row each, with the count)."""
    from tfc.book import ledger

    c = ledger.counts(tables)
    labels = [("reproduced", "reproduced (all cells, our own computation, within tolerance)"),
              ("partial", "partially reproduced (at least one of our own cells within tolerance)"),
              ("outside tolerance", "our own computation, no cell within tolerance"),
              ("imported-only", "imported outputs only"), ("stand-in-only", "stand-in models only"),
              ("not offline", "not reproducible offline"), ("not reproduced yet", "not reproduced yet")]
    return pd.DataFrame({"tables": [c[k] for k, _ in labels]}, index=[v for _, v in labels])


def fmt(x, decimals: int = 1) -> str:
    """A number for the prose (``n/a`` when missing)."""
    return "n/a" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.{decimals}f}"


def summary_numbers(head: pd.DataFrame, tables: pd.DataFrame, matrix: pd.DataFrame | None = None,
                    records: pd.DataFrame | None = None) -> dict:
    """The numbers the front page's prose quotes, as text: the TRUE row, how many main results have a
    value of ours and how many are reproduced, the ledger's table counts, the figure's best rows, and
    the largest |Δ| of an imported run's nine-set mean on TRUE Tables 3 and 9 (reads the ledger unless
    ``records`` is given)."""
    true = head[head["paper"] == "TRUE"]
    t = true.iloc[0] if len(true) else None
    from tfc.book import ledger

    recorded = head["ours"].notna()
    touched = tables["status"].isin(["reproduced", "partially reproduced"])
    cat = ledger.counts(tables)
    out = {
        "true_paper": fmt(t["published"]) if t is not None else "n/a",
        "true_ours": fmt(t["ours"]) if t is not None else "n/a",
        "true_scorer": (t["signature"] or "none recorded") if t is not None else "none recorded",
        "n_results": str(len(head)),
        "n_recorded": str(int(recorded.sum())),
        "n_reproduced": str(int((head["status"] == "reproduced").sum())),
        "n_standin": str(int(head["status"].str.startswith("stand-in").sum())),
        "n_tables": str(len(tables)),
        "n_tables_touched": str(int(touched.sum())),
        # tables per role category (only reproduction cells make a table reproduced or partial)
        "n_tables_reproduced": str(cat["reproduced"]),
        "n_tables_partial": str(cat["partial"]),
        "n_tables_outside": str(cat["outside tolerance"]),
        "n_tables_imported_only": str(cat["imported-only"]),
        "n_tables_standin_only": str(cat["stand-in-only"]),
        "n_tables_offline": str(cat["not offline"]),
        "n_tables_not_yet": str(cat["not reproduced yet"]),
    }
    w = matrix_wide(matrix) if matrix is not None and len(matrix) else pd.DataFrame()
    kinds = matrix.drop_duplicates("system").set_index("system")["kind"] if len(w) else pd.Series(dtype=str)
    inh = w[w.index.map(lambda s: kinds.get(s) == "in-house")] if len(w) else w
    pub = w[w.index.map(lambda s: kinds.get(s) == "paper")] if len(w) else w
    out["best_inhouse"] = str(inh["mean"].idxmax()).rsplit(" (", 1)[0] if len(inh) else "none recorded"
    out["best_inhouse_mean"] = fmt(float(inh["mean"].max())) if len(inh) else "n/a"
    out["best_published_mean"] = fmt(float(pub["mean"].max())) if len(pub) else "n/a"
    rec = _records(records)
    imp = rec[rec["table"].isin(["TRUE-T3", "TRUE-T9"]) & (rec["row"] == "avg_wo_vitc_fever")
              & rec["signature"].map(scorer_of).eq("imported")] if len(rec) else rec
    out["imported_max_abs_delta"] = fmt(float(imp["delta"].abs().max())) if len(imp) else "n/a"
    return out


def display_frame(head: pd.DataFrame, built_chapters=None) -> pd.DataFrame:
    """The headline table as the front page shows it: the paper's system goes with the result, and
    the signature of our value with the chapter that recorded it (a link when the chapter is built)."""
    import html as _html

    from tfc.book import ledger

    linked = ledger.chapter_links(head[["chapter"]], built_chapters)["chapter"]
    source = []
    for sig, chap in zip(head["signature"], linked):
        if sig:
            source.append(f"<code>{_wbr(_html.escape(sig))}</code> in {chap}")
        else:
            source.append(f"chapter: {chap}" if chap else "")
    return pd.DataFrame({
        "Paper": head["paper"],
        "Main result": head["result"] + " (paper: " + head["system"] + ")",
        "Published": head["published"], "Ours": head["ours"], "Δ": head["delta"],
        "Status": head["status"], "Ours from": source,
    })


def _wbr(text: str) -> str:
    return text.replace(".", ".<wbr>").replace("/", "/<wbr>").replace("-", "-<wbr>")


def to_html(head: pd.DataFrame, built_chapters=None) -> str:
    """HTML of :func:`display_frame` (one decimal throughout: every value is on a × 100 scale)."""
    from tfc.book import readable

    return readable.to_html(display_frame(head, built_chapters), decimals=1, html_columns=["Ours from"],
                            classes="tfc-headline", max_colwidth=None)


# --- the first figure: ROC AUC per TRUE set, papers beside our scorers ---------------------------

TRUE_TABLES = ("TRUE-T3", "TRUE-T9", "AS-T3", "WC-T1")
KIND_LABEL = {"paper": "published", "imported": "imported outputs", "lexical": "recomputed",
              "in-house": "in-house model", "off-the-shelf": "small off-the-shelf model"}
_HOME = {"nli": "TRUE-T3", "alignscore": "AS-T3", "wecheck": "WC-T1", "bertscore": "TRUE-T3"}
_PAPER_NAMES = {("TRUE-T3", "anli_t5_11b"): "ANLI T5-11B (TRUE)", ("AS-T3", "alignscore_base"): "AlignScore-base",
                ("WC-T1", "wecheck"): "WeCheck", ("TRUE-T3", "summac_zs"): "SummaC-ZS (TRUE)",
                ("TRUE-T3", "bertscore"): "BERTScore (TRUE)", ("TRUE-T3", "f1"): "token F1 (TRUE)",
                ("TRUE-T3", "q2_metric"): "Q² (TRUE)"}


def true_auc_matrix(records: pd.DataFrame | None = None, datasets=None) -> pd.DataFrame:
    """ROC AUC × 100 per TRUE set with text, long form (``system, kind, signature, dataset, auc``), read
    from the ledger's records on TRUE-style tables (TRUE-T3/T9, AlignScore T3, WeCheck T1):

    * ``lexical``: the best recomputed lexical metric, ``imported``: the best imported run,
      ``in-house``: the best signature of each in-house family (NLI, AlignScore, WeCheck, …) and
      ``off-the-shelf``: the best other scorer of ours; "best" is the highest mean over the nine sets,
      among signatures recorded on all nine;
    * ``paper``: the published values our in-house families were compared with in their chapters.

    A signature recorded in several tables is read from its family's own table (NLI from TRUE-T3,
    AlignScore from AS-T3, WeCheck from WC-T1): the chapters may evaluate on different samples.
    """
    from tfc.results.tables import TRUE9

    ds = list(datasets or TRUE9)
    rec = _records(records)
    cols = ["system", "kind", "signature", "dataset", "auc"]
    if not len(rec):
        return pd.DataFrame(columns=cols)
    rec = rec[rec["table"].isin(TRUE_TABLES) & rec["row"].isin(ds)].copy()
    if not len(rec):
        return pd.DataFrame(columns=cols)
    inhouse = inhouse_models()
    rec["scorer"] = rec["signature"].map(scorer_of)
    rec["kind"] = rec["signature"].map(lambda s: kind_of(s, inhouse))
    rec = rec[rec["signature"].astype(bool)]
    # one table per signature: the family's home table when recorded there, else the first recorded
    home = rec["scorer"].map(_HOME)
    rec["prefer"] = np.where(rec["table"] == home, 0, 1)
    first = rec.sort_values(["prefer"], kind="stable").groupby("signature")["table"].first()
    rec = rec[rec["table"] == rec["signature"].map(first)]
    per = rec.groupby(["signature", "row"], sort=False).agg(auc=("ours", "first"), kind=("kind", "first"),
                                                          scorer=("scorer", "first"), table=("table", "first"),
                                                          column=("column", "first"), paper=("paper", "first"))
    per = per.reset_index()
    full = per.groupby("signature")["row"].nunique()
    per = per[per["signature"].map(full) == len(ds)]
    mean = per.groupby("signature")["auc"].mean()
    per["mean"] = per["signature"].map(mean)
    per["group"] = np.where(per["kind"] == "in-house", per["kind"] + ":" + per["scorer"], per["kind"])
    best = per.sort_values(["mean", "signature"], ascending=[False, True]).groupby("group")["signature"].first()
    chosen = per[per["signature"].isin(set(best))].copy()
    ours_rows, paper_rows, paper_done = [], [], set()
    order = {"in-house": 0, "off-the-shelf": 1, "imported": 2, "lexical": 3}
    groups = sorted(chosen.groupby("signature"),
                    key=lambda kv: (order.get(kv[1]["kind"].iloc[0], 9), -kv[1]["mean"].iloc[0], kv[0]))
    for sig, g in groups:
        kind = g["kind"].iloc[0]
        ours_rows += [{"system": f"{_short(sig)} ({KIND_LABEL[kind]})", "kind": kind, "signature": sig,
                       "dataset": r.row, "auc": float(r.auc)} for r in g.itertuples(index=False)]
        key = (g["table"].iloc[0], g["column"].iloc[0])
        if kind == "in-house" and key not in paper_done and g["paper"].notna().all():
            paper_done.add(key)
            label = _PAPER_NAMES.get(key, f"{key[1]} ({key[0]})")
            paper_rows += [{"system": f"{label} ({KIND_LABEL['paper']})", "kind": "paper", "signature": "",
                            "dataset": r.row, "auc": float(r.paper)} for r in g.itertuples(index=False)]
    return pd.DataFrame(paper_rows + ours_rows, columns=cols)


def _short(signature: str) -> str:
    """A signature without its hash: ``nli.nli-minilm-doc.3f63aa7dba`` -> ``nli-minilm-doc``;
    ``imported:scale_score_true/summac_zs`` -> ``summac_zs``."""
    s = str(signature)
    if s.startswith("imported:"):
        from tfc.book.readable import header

        return header(s.split("/")[-1])
    parts = s.split(".")
    if len(parts) >= 3:
        return parts[1] if parts[1].startswith(parts[0].split("-")[0]) else f"{parts[0]} {parts[1]}"
    return parts[0]


def matrix_wide(matrix: pd.DataFrame) -> pd.DataFrame:
    """The matrix as a table: one row per system, one column per TRUE set, and the mean of the nine."""
    from tfc.results.tables import TRUE9

    if not len(matrix):
        return pd.DataFrame()
    w = matrix.pivot_table(index="system", columns="dataset", values="auc", sort=False)
    w = w[[d for d in TRUE9 if d in w.columns]]
    w["mean"] = w.mean(axis=1)
    w.index.name = None
    w.columns.name = None
    return w


DATASET_LABELS = {"mean": "mean of 9", "frank": "FRANK", "summeval": "SummEval", "mnbm": "MNBM", "qags_cnndm": "QAGS-C",
                  "qags_xsum": "QAGS-X", "begin": "BEGIN", "q2": "Q²", "dialfact": "DialFact", "paws": "PAWS"}


def true_auc_figure(matrix: pd.DataFrame, ax=None):
    """Heatmap of :func:`matrix_wide` (seaborn): published rows on top, ours below, 50 = chance."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    w = matrix_wide(matrix)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.6, 0.36 * max(len(w), 2) + 1.5))
    else:
        fig = ax.figure
    if not len(w):
        ax.text(0.5, 0.5, "no TRUE records in the ledger yet (run the chapters)", ha="center", va="center")
        ax.set_axis_off()
        return fig
    w = w.rename(columns=DATASET_LABELS)
    sns.heatmap(w, annot=True, fmt=".1f", cmap="RdYlGn", vmin=40, vmax=95, center=65, linewidths=0.5,
                linecolor="white", cbar_kws={"label": "ROC AUC × 100 (50 = chance)", "shrink": 0.8},
                annot_kws={"fontsize": 7.5}, ax=ax)
    n_paper = int((matrix.drop_duplicates("system")["kind"] == "paper").sum())
    if 0 < n_paper < len(w):
        ax.axhline(n_paper, color="black", lw=1.5)
    ax.axvline(w.shape[1] - 1, color="black", lw=1.5)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.tick_params(axis="y", labelsize=8)
    ax.tick_params(axis="x", labelsize=8, rotation=30)
    for lab in ax.get_xticklabels():
        lab.set_horizontalalignment("right")
    ax.set_title("ROC AUC on the nine TRUE sets: the papers' models (top), ours (below)", fontsize=9)
    fig.tight_layout()
    return fig
