"""The AlignScore chapter's tables (``notebooks/05_alignscore.md``): the in-house models beside the paper's
AlignScore columns, the full-set AUC tables, the criterion the in-house models are held to, the in-house models'
training facts and identity probes, the fast presets' drift verdict, the ledger frames, and the evaluation tables
of the in-house models beside the paper's (AlignScore Tables 2, 3 and 9, read from the score cache). The models, runs and records behind them live
in :mod:`tfc.runs` (:mod:`tfc.runs.inhouse_models`, :mod:`tfc.runs.scoring_runs`, :mod:`tfc.runs.cached_aucs`,
:mod:`tfc.runs.auc_drift`, :mod:`tfc.runs.alignscore_ablations`)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

import tfc.data as D
from tfc import config, models
from tfc.book.reference import paper_vs_ours
from tfc.results.tables import add_averages
from tfc.runs.auc_drift import DRIFT_LIMIT, drift_table
from tfc.runs.cached_aucs import MISSING, cached_scores, full_set_aucs, named_scorers
from tfc.runs.inhouse_models import (ABLATION_SAMPLE, SENT_FAST, SENT_FAST_PC, SENT_LABEL, _true_sets, recipes,
                                     sentence_models, shipped_readings, training_facts)

# our SummaC dataset -> AlignScore Table 2/9 row. Polytope: AlignScore relabelled it (App. B.1), so the
# paper's row is compared with ``summac_polytope_alignscore``; FRANK's SummaC test split is unavailable.
SUMMAC_ROWS = {"summac_cogensumm": "cogensumm", "summac_xsumfaith": "xsumfaith",
               "summac_polytope_alignscore": "polytope", "summac_summeval": "summac_summeval",
               "summac_frank": "summac_frank"}
OURS = {
    "alignscore-minilm": ("alignscore", {"checkpoint": "tfc/alignscore-minilm", "split": "chunk"}),
    "nli-minilm": ("nli", {"checkpoint": "tfc/nli-minilm", "mode": "document"}),
}
OURS_LABEL = "in-house MiniLM (22M), trained offline"
PAPER_COLUMNS = {"alignscore_base": "AlignScore-base (paper, 125M)",
                 "alignscore_large": "AlignScore-large (paper, 355M)"}


def ledger_frame(long: pd.DataFrame, table: str, column: str = "alignscore_base") -> pd.DataFrame:
    """The paper-vs-ours frame for the reproduction ledger: comparable rows only (test splits), our
    models set beside the paper's ``column`` (a stand-in comparison)."""
    d = long.dropna(subset=["value"])
    if "split" in d:
        d = d[d["split"] == "test"]
    out = [paper_vs_ours(g[["row", "column", "value", "signature"]], table, scale=100, column=column)
           for _, g in d.groupby("column", sort=False)]
    return pd.concat(out, ignore_index=True).dropna(subset=["paper"]) if out else pd.DataFrame()


def vs_paper(long: pd.DataFrame, table: str, paper_columns=tuple(PAPER_COLUMNS)) -> pd.DataFrame:
    """Our rows beside the paper's AlignScore rows: ``dataset, model, <paper columns>, ours, delta, note,
    signature``; Δ = ours − the first paper column (AlignScore-base), all x100."""
    first = paper_columns[0]
    out = []
    for label, g in long.groupby("column", sort=False):
        j = paper_vs_ours(g[["row", "column", "value", "signature"]], table, scale=100, column=first)
        for pc in paper_columns[1:]:
            other = paper_vs_ours(g[["row", "column", "value"]], table, scale=100, column=pc)
            j[PAPER_COLUMNS.get(pc, pc)] = other["paper"].to_numpy()
        j = j.rename(columns={"paper": PAPER_COLUMNS.get(first, first), "row": "dataset"})
        j["model"] = f"{label} ({OURS_LABEL})"
        note = []
        for r in j["dataset"]:
            m = long[(long["row"] == r) & (long["column"] == label)]
            if "split" in m and len(m) and m["split"].iloc[0] != "test":
                note.append(f"{m['split'].iloc[0]} split (paper: test, unavailable here): not comparable")
            else:
                note.append("")
        j["note"] = note
        j.loc[j["note"] != "", "delta"] = np.nan
        cols = ["dataset", "model"] + [PAPER_COLUMNS.get(c, c) for c in paper_columns] + \
            ["ours", "delta", "note", "signature"]
        out.append(j[cols])
    return pd.concat(out, ignore_index=True)


def vs_paper_wide(long: pd.DataFrame, table: str, paper_columns=tuple(PAPER_COLUMNS)) -> pd.DataFrame:
    """:func:`vs_paper` as one row per dataset: the paper's AlignScore columns, then ``ours`` and ``Δ`` per
    in-house model (Δ vs AlignScore-base), rows scored / rows, and the note. Signatures: see ``vs_paper``."""
    t = vs_paper(long, table, paper_columns)
    first = PAPER_COLUMNS.get(paper_columns[0], paper_columns[0])
    pcols = [PAPER_COLUMNS.get(c, c) for c in paper_columns]
    out = t.drop_duplicates("dataset").set_index("dataset")[pcols].rename(columns=lambda c: f"paper: {c}")
    for label in long["column"].unique():
        g = t[t["model"] == f"{label} ({OURS_LABEL})"].set_index("dataset")   # exact: one label may prefix another
        out[f"ours: {label}"] = g["ours"]
        out[f"Δ {label} vs base"] = g["delta"]
    if "n_scored" in long:
        cnt = long.groupby("row").agg(n=("n", "max"), n_scored=("n_scored", "min"))
        out["rows scored"] = [f"{cnt.loc[d, 'n_scored']}/{cnt.loc[d, 'n']}" if d in cnt.index else "" for d in out.index]
    notes = t.groupby("dataset")["note"].first()
    out["note"] = notes.reindex(out.index).fillna("")
    out.attrs["delta_vs"] = first
    return out


CRITERION_MEAN, CRITERION_PAWS = 75.0, 70.0   # the in-house models' criterion (mean AUC over the nine full sets; PAWS)


def auc_text(full: pd.DataFrame, model: str, dataset: str) -> str:
    """One cell of :func:`full_set_aucs`' frame as prose text ("75.9"), "n/a" when that model has no AUC
    on that set (e.g. a smoke run without its cache)."""
    hit = full[(full["model"] == model) & (full["dataset"] == dataset)]["auc"].dropna()
    return f"{hit.iloc[0]:.1f}" if len(hit) else "n/a"

def mean_text(full: pd.DataFrame, model: str, n_sets: int) -> str:
    """A model's mean AUC over the sets of :func:`full_set_aucs` as prose text, "n/a" unless it has an AUC on
    all ``n_sets`` sets."""
    hit = full[full["model"] == model]["auc"].dropna()
    return f"{hit.mean():.1f}" if len(hit) == n_sets else "n/a"


def criterion_table(full: pd.DataFrame, sig: pd.DataFrame, models, n_sets: int,
              baselines=("ROUGE-L", "BERTScore-P (MiniLM)")) -> pd.DataFrame:
    """Per in-house model: its mean AUC over the full sets, PAWS, the paired-bootstrap interval of its mean
    difference to each baseline, and whether the criterion holds (mean >= 75 over all ``n_sets`` full sets,
    both intervals above 0, PAWS >= 70). ``full``: :func:`full_set_aucs` rows; ``sig``:
    :func:`significance_vs_lexical` rows (``model``, ``baseline``, ``diff``, ``ci_low``, ``ci_high``)."""
    rows = []
    for m in models:
        g = full[(full["model"] == m)].dropna(subset=["auc"])
        complete = len(g) == n_sets and bool((g["coverage"] >= 0.999).all())
        row = {"model": m, "full sets": int((g["coverage"] >= 0.999).sum()), "mean AUC": g["auc"].mean() if complete else np.nan,
               "PAWS": g.set_index("dataset")["auc"].get("paws", np.nan)}
        ok = complete
        for b in baselines:
            r = sig[(sig["model"] == m) & (sig["baseline"] == b)] if len(sig) else sig
            if len(r):
                row[f"vs {b}"] = f"{r['diff'].iloc[0]:+.1f} [{r['ci_low'].iloc[0]:+.1f}, {r['ci_high'].iloc[0]:+.1f}]"
                ok = ok and bool(r["ci_low"].iloc[0] > 0)
            else:
                row[f"vs {b}"], ok = "n/a", False
        ok = ok and row["mean AUC"] >= CRITERION_MEAN and row["PAWS"] >= CRITERION_PAWS
        row["criterion met"] = "yes" if ok else "no"
        rows.append(row)
    return pd.DataFrame(rows)


def full_set_wide(long: pd.DataFrame) -> pd.DataFrame:
    """``dataset x model`` table of 'AUC [low, high]' strings plus a mean row (sets every model covers fully)."""
    if long.empty:
        return pd.DataFrame()
    cell = long.assign(txt=[("n/a" if pd.isna(a) else f"{a:.1f} [{lo:.1f}, {hi:.1f}]" + ("" if c >= 0.999 else f" ({100 * c:.0f} % of rows)"))
                            for a, lo, hi, c in zip(long["auc"], long["ci_low"], long["ci_high"], long["coverage"])])
    wide = cell.pivot(index="dataset", columns="model", values="txt")
    wide = wide.reindex(index=list(dict.fromkeys(long["dataset"])), columns=list(dict.fromkeys(long["model"])))
    scored = long.groupby("model")["coverage"].max() > 0        # a model with no cache yet does not empty the mean
    full = long[long["model"].isin(scored[scored].index)].groupby("dataset")["coverage"].min() >= 0.999
    sets = [d for d in wide.index if full.get(d, False)]
    means = long[long["dataset"].isin(sets)].groupby("model")["auc"].mean()
    wide.loc[f"mean ({len(sets)} full sets)"] = ["n/a" if pd.isna(means.get(m, np.nan)) else f"{means[m]:.1f}"
                                                 for m in wide.columns]
    return wide


def training_table(checkpoints=None) -> pd.DataFrame:
    """One row per in-house model with a recipe (default: the pair-level and sentence-level models, in training
    order): what it started from, its mix, the epochs over it, optimizer steps and batch size, examples seen,
    training minutes, examples/s, dtype, the machine it trained on, its held-out 3-way accuracy (rows of its own mix)
    and whether it ships. An int8 release trains nothing (its record repeats its parent's), so its training columns
    are empty."""
    rec_of = recipes()
    rows = []
    for ckpt in ([c for c, r in rec_of.items() if r["family"] in ("pairs", "sentence")] if checkpoints is None
                 else checkpoints):
        r = rec_of.get(ckpt, {})
        row = {"model": ckpt[4:], "started from": r.get("parent"), "mix": r.get("mix"), "epochs": r.get("epochs"),
               "trained on": r.get("device"), "status": r.get("status")}
        try:
            rec = models.training_record(ckpt)
        except FileNotFoundError:
            rec = {}
        acc = (rec.get("dev_eval") or {}).get("3way", {}).get("accuracy")
        if rec and r.get("epochs"):
            row |= {"steps": rec.get("steps"), "batch size": (rec.get("config") or {}).get("batch_size"),
                    "examples seen": rec.get("examples_seen"),
                    "training minutes": round(rec["train_seconds"] / 60, 1) if rec.get("train_seconds") else None,
                    "examples/s": rec.get("examples_per_second"), "dtype": rec.get("dtype")}
        row["dev 3-way accuracy"] = acc
        rows.append(row)
    cols = ["model", "started from", "mix", "epochs", "steps", "batch size", "examples seen", "training minutes",
            "examples/s", "dtype", "trained on", "dev 3-way accuracy", "status"]
    return pd.DataFrame(rows).reindex(columns=cols).astype({"steps": "Int64", "batch size": "Int64",
                                                            "examples seen": "Int64"})


def identity_probes(checkpoints=None) -> pd.DataFrame:
    """Every identity probe recorded on the cards of ``checkpoints`` (default: the sentence-level models), one row
    per (model, form): a premise paired with itself (or its PTB form), P(entail), P(contradict) and the share read
    as entailment (:func:`tfc.runs.inhouse_models.recorded_identity_probe`). Empty when none is recorded."""
    from tfc.runs.inhouse_models import recorded_identity_probe

    parts = [recorded_identity_probe(c) for c in (sentence_models() if checkpoints is None else checkpoints)]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True).drop_duplicates(["model", "form"]) if parts else pd.DataFrame()


def chosen_mean_text(full: pd.DataFrame, checkpoint: str, n_sets: int) -> str:
    """A sentence model's nine-set mean (:func:`mean_text`) under the reading its dev-data sweep chose (its
    preset reading when the sweep kept the preset)."""
    from tfc.runs.inhouse_models import chosen_readings

    return mean_text(full, next(iter(chosen_readings([checkpoint])), checkpoint[4:]), n_sets)


def sent_ledger_long(full: pd.DataFrame, model: str) -> pd.DataFrame:
    """One model's rows of :func:`full_set_aucs` in the long form of :func:`true_auc` (value on 0..1, the
    papers' averages added only over sets the cache covers in full), for :func:`ledger_frame`."""
    d = full[(full["model"] == model) & (full["coverage"] >= 0.999)].dropna(subset=["auc"])
    if d.empty:
        return pd.DataFrame()
    long = pd.DataFrame({"row": d["dataset"], "column": model, "value": d["auc"] / 100, "n": d["rows"],
                         "n_scored": d["rows"], "signature": d["signature"]})
    return add_averages(long, ("avg_zs_wo_paws_vitc_fever", "avg_wo_vitc_fever")).assign(split="test")


def training_facts_by_model(scorers: dict) -> dict:
    """:func:`tfc.runs.inhouse_models.training_facts` of each ``{label: scorer}``'s checkpoint; a model without a
    training record is left out, and said so."""
    facts = {}
    for label, s in scorers.items():
        try:
            facts[label] = training_facts(s.config.checkpoint)
        except (FileNotFoundError, ValueError) as exc:
            print(f"{label}: no training record ({exc})")
    return facts


def true_mean_values(means: pd.DataFrame, align_label: str) -> dict:
    """The glue values ``as_true9_mean``, ``as_avg_zs``, ``as_nli_true9_mean``, ``as_nli_avg_zs``: the
    TRUE averages (x100, one decimal) of the AlignScore model and of nli-minilm; NaN when missing."""
    out = {}
    for label, key in ((align_label, "as"), ("nli-minilm", "as_nli")):
        for avg, suffix in (("avg_wo_vitc_fever", "true9_mean"), ("avg_zs_wo_paws_vitc_fever", "avg_zs")):
            v = means.loc[label, avg] if label in means.index and avg in means.columns else float("nan")
            out[f"{key}_{suffix}"] = round(float(v), 1)
    return out


def pct_consistent(dataset: str, split: str = "test") -> float:
    """Share of consistent rows (label 1) of one split of a dataset, in % with one decimal."""
    d = D.load(dataset)
    return round(100 * float(d.loc[d["split"] == split, "label"].mean()), 1)


def aggregation_table(checkpoints) -> pd.DataFrame:
    """The recorded dev-data sweeps of the sentence models (:mod:`tfc.runs.aggregation`): one row per
    (model, reading), AUC x100 per dev set, their mean, and which reading the sweep chose. Models without
    a recorded sweep are left out."""
    from tfc.runs import aggregation

    parts = []
    for ckpt in checkpoints:
        rec = aggregation.recorded(ckpt)
        if not rec:
            continue
        t = aggregation.wide(rec["table"])
        t["mean"] = t.mean(axis=1)
        t["chosen"] = np.where(t.index == rec["chosen"], "chosen", "")
        t.insert(0, "model", ckpt[4:])
        parts.append(t.reset_index())
    return pd.concat(parts, ignore_index=True).round(1) if parts else pd.DataFrame()


def aggregation_rows(checkpoints) -> str:
    """Rows per dev set of the recorded sweeps (one number when they agree, as they do by construction)."""
    from tfc.runs import aggregation

    sizes = {v["rows"] for c in checkpoints for v in ((aggregation.recorded(c) or {}).get("dev_sets") or {}).values()}
    return ", ".join(str(n) for n in sorted(sizes)) or "n/a"


def release_texts(source, release, name: str, datasets) -> dict:
    """Prose values of a shipped release beside the weights it was quantised from (``sent_v8r_*``): its size,
    the largest |AUC drift| on the rows both scorers' caches hold, and the verdict against the drift limit.
    ``source``/``release``: the two scorers (same reading), None when unavailable; ``name``: the release."""
    from tfc.models import release as R

    meta = R.release_dir(name) / R.META
    out = {"sent_v8r_mb": f"{json.loads(meta.read_text())['bytes'] / 1e6:.1f}" if meta.is_file() else "n/a",
           "sent_v8r_limit": f"{DRIFT_LIMIT}", "sent_v8r_drift": "n/a", "sent_v8r_verdict": "not measured yet"}
    d = drift_table(source, release, datasets) if source is not None and release is not None else pd.DataFrame()
    if len(d):
        worst = float(d["drift"].abs().max())
        out["sent_v8r_drift"] = f"{worst:.2f}"
        out["sent_v8r_verdict"] = (f"within the limit on all {len(d)} sets scored" if worst <= DRIFT_LIMIT
                                   else f"over the limit on {int((d['drift'].abs() > DRIFT_LIMIT).sum())} of {len(d)} sets")
    return out


def coverage_text(cov: pd.DataFrame) -> str:
    """How much of the TRUE sets an ablation run covers (the ``coverage`` frame of
    :func:`tfc.runs.alignscore_ablations.ablation_groups`), as prose: "every row of all 9 sets (23,853 rows)" or
    "13,102 of 23,853 rows; complete: frank, q2"."""
    if cov.empty:
        return "no rows"
    done = cov[cov["scored"] == cov["rows"]]["dataset"].tolist()
    scored, rows = int(cov["scored"].sum()), int(cov["rows"].sum())
    if len(done) == len(cov):
        return f"every row of all {len(cov)} sets ({rows:,} rows)"
    return f"{scored:,} of {rows:,} rows; complete: {', '.join(done) or 'none'}"


def ablation_texts(con: pd.DataFrame, kind: str, alpha: float = 0.05) -> dict:
    """Glue text of an ablation's contrasts (:func:`tfc.runs.alignscore_ablations.ablation_contrasts`): per alternative
    ``as_<kind>_vs_<alt>`` = "alternative − published [95 % CI]" (AUC x 100), and ``as_<kind>_verdict``, which
    alternatives the published choice beats, loses to or ties (Holm-adjusted p against ``alpha``). "n/a" when the
    run does not cover every row."""
    from tfc.runs.alignscore_ablations import ABLATION_REFERENCE
    from tfc.runs.inhouse_models import SPLIT_MODES
    from tfc.scorers.alignscore import HEADS

    alts = [a for a in (HEADS if kind == "head" else SPLIT_MODES) if a != ABLATION_REFERENCE[kind]]
    out = {f"as_{kind}_vs_{a.replace('-', '_')}": "n/a" for a in alts}
    out[f"as_{kind}_verdict"] = "n/a (the run does not cover every row yet)"
    if con.empty:
        return out
    groups = {"beats": [], "loses to": [], "is level with": []}
    for r in con.itertuples(index=False):
        alt = getattr(r, kind)
        out[f"as_{kind}_vs_{alt.replace('-', '_')}"] = f"{r.diff:+.1f} [{r.ci_low:+.1f}, {r.ci_high:+.1f}]"
        side = "is level with" if r.p_holm >= alpha else ("beats" if r.diff < 0 else "loses to")
        groups[side].append(alt)
    ref = ABLATION_REFERENCE[kind]
    out[f"as_{kind}_verdict"] = f"{ref} " + "; ".join(f"{k} {', '.join(v)}" for k, v in groups.items() if v)
    return out


def task_rows_text(checkpoint: str) -> str:
    """A checkpoint's training rows per head (label space) with their sources, from its committed record:
    "3way 143,319 (…); bin 8,555 (msrp, rte_glue); …"; "n/a" without a record."""
    try:
        rows = models.training_record(checkpoint).get("mix_report", {}).get("rows", [])
    except FileNotFoundError:
        return "n/a"
    if not rows:
        return "n/a"
    mix = pd.DataFrame(rows)
    parts = []
    for task, g in mix.groupby("task", sort=False):
        src = ", ".join(g["source"]) if len(g) <= 3 else f"{len(g)} sources"
        parts.append(f"{task} {int(g['rows'].sum()):,} ({src})")
    return "; ".join(parts)


# --------------------------------------------------------------------------------------------------
# evaluation tables of the in-house models beside the paper's (all read the score cache; nothing is
# recomputed when ``cache_only=True``)

def ours_scorers(names=tuple(OURS), checkpoint: str | None = None, skip_missing: bool = False,
                 **overrides) -> dict:
    """``{label: scorer}`` for our in-house models (``OURS``), with extra config overrides.

    ``checkpoint`` replaces the AlignScore model's checkpoint (bring your own; its label is the
    checkpoint's short name). ``skip_missing=True`` leaves out a model whose identity cannot be
    established (neither installed weights nor a committed record);
    :data:`tfc.runs.cached_aucs.MISSING` then names it.
    """
    spec = {}
    MISSING.clear()
    for n in names:
        if n not in OURS:
            raise KeyError(f"unknown in-house model {n!r}; known: {', '.join(OURS)}")
        name, kw = OURS[n]
        label = n
        if checkpoint and name == "alignscore" and checkpoint != kw["checkpoint"]:
            kw = {**kw, "checkpoint": checkpoint}
            label = models.short_name(checkpoint)
        spec[label] = (name, {**kw, **overrides})
    return named_scorers(spec, skip_missing=skip_missing)


def _auc_row(res: pd.DataFrame) -> tuple[float, int]:
    from tfc.meta import roc_auc

    got = res.dropna(subset=["score"])
    ok = len(got) and got["label"].nunique() == 2
    return (roc_auc(got["label"], got["score"]) if ok else float("nan")), int(len(got))


def coverage(models: dict, datasets, split_of=None) -> pd.DataFrame:
    """Cached rows per model and dataset (``model, dataset, rows, cached``), read from the cache only;
    ``split_of`` maps a dataset to the split to count (default: all splits)."""
    rows = []
    for ds in datasets:
        split = (split_of or {}).get(ds)
        for label, sc in models.items():
            res = cached_scores(sc, ds, split, None, 0, True)
            rows.append({"model": label, "dataset": ds, "rows": len(res), "cached": int(res["score"].notna().sum())})
    return pd.DataFrame(rows, columns=["model", "dataset", "rows", "cached"])


def evaluation_sample(models: dict, datasets, sample=None, split_of=None):
    """The sample to evaluate on: ``sample`` when given; else None (all rows) when every model has every
    row cached, else the fixed stratified sample :data:`ABLATION_SAMPLE` (runs score it first)."""
    if sample is not None:
        return sample
    cov = coverage(models, datasets, split_of)
    return None if len(cov) and (cov["cached"] == cov["rows"]).all() else ABLATION_SAMPLE


def summac_auc(models: dict, sample=None, seed=0, cache_only=True) -> pd.DataFrame:
    """ROC AUC (0..1) on the SummaC *test* splits (AlignScore Table 2); a set without a test split in
    the mirror (FRANK) is scored on its val split and flagged. Long form: ``row, dataset, split, column,
    value, n, n_scored, signature``."""
    from tfc import data

    rows = []
    for ds, row in SUMMAC_ROWS.items():
        split = "test" if "test" in data.info(ds).splits else "val"
        for label, sc in models.items():
            res = cached_scores(sc, ds, split, sample, seed, cache_only)
            auc, n_scored = _auc_row(res)
            rows.append({"row": row, "dataset": ds, "split": split, "column": label, "value": auc,
                         "n": len(res), "n_scored": n_scored, "signature": sc.signature})
    return pd.DataFrame(rows)


def true_auc(models: dict, datasets=None, sample=None, seed=0, cache_only=True,
             averages=("avg_zs_wo_paws_vitc_fever", "avg_wo_vitc_fever")) -> pd.DataFrame:
    """ROC AUC (0..1) on the TRUE text sets (AlignScore Table 3) plus the papers' averages that the nine
    sets allow (AVG-ZS, TRUE's 9-set mean; AlignScore's AVG needs FEVER and VitaminC, label-only here)."""
    rows = []
    for ds in datasets or _true_sets():
        for label, sc in models.items():
            res = cached_scores(sc, ds, None, sample, seed, cache_only)
            auc, n_scored = _auc_row(res)
            rows.append({"row": ds, "column": label, "value": auc, "n": len(res), "n_scored": n_scored,
                         "signature": sc.signature})
    return add_averages(pd.DataFrame(rows), averages)


def summac_balanced_accuracy(models: dict, sample=None, seed=0, cache_only=True) -> pd.DataFrame:
    """AlignScore Table 9: balanced accuracy on the SummaC test split at the threshold tuned on val
    (:func:`tfc.meta.tuned_accuracy`), for the sets with both splits. Long form with ``threshold``."""
    from tfc import data
    from tfc.meta import tuned_accuracy

    rows = []
    for ds, row in SUMMAC_ROWS.items():
        if not {"val", "test"} <= set(data.info(ds).splits):
            continue
        for label, sc in models.items():
            val = cached_scores(sc, ds, "val", sample, seed, cache_only).dropna(subset=["score"])
            test = cached_scores(sc, ds, "test", sample, seed, cache_only).dropna(subset=["score"])
            if val["label"].nunique() < 2 or test.empty:
                acc, thr = float("nan"), float("nan")
            else:
                r = tuned_accuracy(val["label"], val["score"], test["label"], test["score"])
                acc, thr = r.balanced_accuracy, r.threshold
            rows.append({"row": row, "dataset": ds, "column": label, "value": acc, "threshold": thr,
                         "n_val": len(val), "n_test": len(test), "signature": sc.signature})
    return pd.DataFrame(rows)


def preset_drift(datasets=None) -> pd.DataFrame:
    """The shipped sentence model's fast CPU presets against its fp32 preset, on the rows both caches hold
    (the drift sample): one :func:`tfc.runs.auc_drift.drift_table` per preset, stacked, with a ``preset``
    column."""
    sc = named_scorers({"fp32": shipped_readings()[SENT_LABEL], "int8-dynamic": SENT_FAST, "int8-dynamic-pc": SENT_FAST_PC})
    if "fp32" not in sc:
        return pd.DataFrame()
    parts = [drift_table(sc["fp32"], sc[k], datasets).assign(preset=k) for k in ("int8-dynamic", "int8-dynamic-pc") if k in sc]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def train_dtype_benchmark(path=None) -> pd.DataFrame:
    """The fp32 vs bf16-autocast training probes (``benchmarks/bench_train.py --dtypes fp32 bf16``), one table
    over every recorded machine (``benchmarks/results/train_dtype*.json``, or the one file ``path``), each row
    with the machine it ran on: whether bf16 pays depends on native bf16 arithmetic (``cpu_bf16_flags``).
    Empty when no record exists."""
    root = config.REPO_ROOT / "benchmarks" / "results"
    files = [Path(path)] if path else sorted(root.glob("train_dtype*.json"))
    frames = []
    for p in files:
        if not p.is_file():
            continue
        rec = json.loads(p.read_text())
        flags = rec.get("cpu_bf16_flags")
        frames.append(pd.DataFrame(rec["rows"]).assign(
            device=rec.get("device"), cpu_capability=rec.get("cpu_capability"),
            cpu_bf16_flags=", ".join(flags) if flags else "not recorded",
            load_average_at_end=str(rec.get("load_average_at_end")), created=rec.get("created_utc")))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
