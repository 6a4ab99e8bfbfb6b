"""The WeCheck chapter's tables and figures (``notebooks/06_wecheck.md``): per-example scores and AUC x 100
of the in-house WeCheck runs with WeCheck's summary rows, the ablation tables, the paired bootstrap of
mean AUCs, the abstractiveness bins, the timing and run summaries. The weak supervision, the training and
the evaluation runs live in :mod:`tfc.train.wecheck`."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import seaborn as sns

from tfc import config, models, scorers
from tfc import data as D
from tfc.book import ledger, reference
from tfc.meta import roc_auc
from tfc.meta.bins import ABSTRACTIVENESS_EDGES, binned_auc, novel_unigram_pct
from tfc.meta.significance import bootstrap_mean_auc_diff
from tfc.results.dataset import score_dataset
from tfc.train.wecheck import ABLATION_SUBSET, EVAL_SAMPLE, EVAL_SEED, eval_frame, scorer_for


def scores_frame(checkpoints: dict, datasets=None, sample: int | None = EVAL_SAMPLE, seed: int = EVAL_SEED,
                 subset: int | None = None) -> pd.DataFrame:
    """Wide per-example frame: ``id, dataset, label, grounding, generated`` + one score column per label
    (cache only); ``subset``: the nested ablation subset (:func:`eval_frame`)."""
    out = []
    for ds in datasets or D.TRUE_TEXT:
        df = eval_frame(ds, sample, seed, subset)[["id", "dataset", "label", "grounding", "generated"]]
        for lab, ck in checkpoints.items():
            s = score_dataset(scorer_for(ck) if isinstance(ck, str) and ck.startswith("tfc/") else ck, ds,
                              sample=sample, seed=seed, cache_only=True)
            df[lab] = s.set_index("id")["score"].reindex(df["id"]).to_numpy()
        out.append(df)
    return pd.concat(out, ignore_index=True)


TASK_GROUPS = {"avg_summarization": ("frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum"),
               "avg_dialogue": ("begin", "q2", "dialfact"),
               "avg_wo_vitc_fever": ("frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2",
                                     "dialfact", "paws")}


def with_task_averages(long: pd.DataFrame) -> pd.DataFrame:
    """AUC x 100 long table (``row, column, value[, signature]``) plus WeCheck's rows per column: task
    averages, the nine-set average and ``var_wo_vitc_fever`` (sample variance, ddof 1, of the nine AUCs
    x 100, as WeCheck's "Var"). A summary row is added only when all its members are finite."""
    rows = []
    for col, g in long.groupby("column", sort=False):
        vals = dict(zip(g["row"], g["value"]))
        sig = g["signature"].iloc[0] if "signature" in g else None
        for avg, members in TASK_GROUPS.items():
            if all(m in vals and np.isfinite(vals[m]) for m in members):
                rows.append({"row": avg, "column": col, "value": float(np.mean([vals[m] for m in members])),
                             "signature": sig})
        nine = TASK_GROUPS["avg_wo_vitc_fever"]
        if all(m in vals and np.isfinite(vals[m]) for m in nine):
            rows.append({"row": "var_wo_vitc_fever", "column": col,
                         "value": float(np.var([vals[m] for m in nine], ddof=1)), "signature": sig})
    return pd.concat([long, pd.DataFrame(rows)], ignore_index=True) if rows else long


def _signature(ck) -> str:
    if isinstance(ck, str):
        return (scorer_for(ck) if ck.startswith("tfc/") else scorers.get(ck, preset="as-published")).signature
    return ck.signature


def subsample_rows(wide: pd.DataFrame, n: int | None, seed: int = 0) -> pd.DataFrame:
    """At most ``n`` random rows per dataset (seeded; ``None`` keeps all), in the original order."""
    if not n:
        return wide
    shuffled = wide.sample(frac=1.0, random_state=seed)
    keep = shuffled[shuffled.groupby("dataset").cumcount() < n]
    return wide.loc[wide.index.isin(keep.index)]


def auc_x100(checkpoints: dict, datasets=None, sample: int | None = EVAL_SAMPLE, seed: int = EVAL_SEED,
             subsample: int | None = None, subset: int | None = None) -> pd.DataFrame:
    """AUC x 100 per dataset and label (cache only) with WeCheck's summary rows; ``subset``: the nested
    ablation subset; ``subsample`` then keeps that many rows per dataset (smoke runs)."""
    wide = subsample_rows(scores_frame(checkpoints, datasets, sample, seed, subset), subsample, seed)
    rows = []
    for lab, ck in checkpoints.items():
        sig = _signature(ck)
        for ds, g in wide.groupby("dataset", sort=False):
            got = g.dropna(subset=[lab])
            ok = got["label"].nunique() == 2
            rows.append({"row": ds, "column": lab, "value": 100 * roc_auc(got["label"], got[lab]) if ok else np.nan,
                         "n": len(g), "n_scored": len(got), "signature": sig})
    return with_task_averages(pd.DataFrame(rows))


def mean_auc_bootstrap(wide: pd.DataFrame, a: str, b: str, n: int = 1000, seed: int = 0):
    """Paired bootstrap (within each dataset) of mean-over-datasets AUC(a) - AUC(b) on a
    :func:`scores_frame` (rows with a missing score in either column are left out, and counted)."""
    groups = {}
    for ds, g in wide.groupby("dataset", sort=False):
        g = g.dropna(subset=[a, b])
        if g["label"].nunique() == 2:
            groups[ds] = (g["label"].to_numpy(), g[a].to_numpy(), g[b].to_numpy())
    if not groups:
        raise ValueError("no dataset has scores for both metrics and both classes")
    return bootstrap_mean_auc_diff(groups, n=n, seed=seed)


def abstractiveness_auc(wide: pd.DataFrame, metrics, n_per_bin: int | None = None, seed: int = 0) -> pd.DataFrame:
    """WeCheck Figure 3: AUC of each metric in 10 bins of novel-unigram % (``tfc.meta.bins``), over all
    rows of ``wide`` (every TRUE set pooled, as the paper does). Rows whose generated text has no word
    (novelty undefined) are left out and counted in the ``attrs['n_undefined']``."""
    nov = novel_unigram_pct(wide["grounding"], wide["generated"])
    ok = ~np.isnan(nov)
    for m in metrics:
        ok &= wide[m].notna().to_numpy()
    sub = wide.loc[ok]
    res = binned_auc(sub["label"].to_numpy(), {m: sub[m].to_numpy() for m in metrics}, nov[ok],
                     ABSTRACTIVENESS_EDGES, n_per_bin=n_per_bin, seed=seed)
    res.attrs["n_undefined"] = int((~ok).sum())
    return res


def load_timing(checkpoint: str = "tfc/wecheck-minilm") -> pd.DataFrame | None:
    p = config.model_records_dir() / checkpoint[4:] / "inference_timing.json"
    return pd.DataFrame(json.loads(p.read_text())["rows"]) if p.is_file() else None


def run_summaries(checkpoints) -> pd.DataFrame:
    """One row per in-house checkpoint with a training record: its run settings, rows and times."""
    rows = []
    for ck in checkpoints:
        try:
            s = models.training_record(ck)
        except (FileNotFoundError, ValueError):
            continue
        c = s.get("config", {})
        lab = s.get("mix_report", {}).get("labels", {}) if isinstance(s.get("mix_report"), dict) else {}
        rows.append({"checkpoint": ck, "base": c.get("base", s.get("base_model")), "label_model": c.get("label_model"),
                     "noise_filter": c.get("noise_filter"), "hard_labels": c.get("hard_labels"),
                     "tasks": "+".join(c.get("tasks", [])) + (" (LEAKED)" if c.get("leaked") else ""),
                     "pool_rows": lab.get("pool_rows"), "kept_by_noise_filter": lab.get("kept_by_noise_filter"),
                     "train_rows": s.get("mix", {}).get("train_rows"), "steps": s.get("steps"),
                     "train_seconds": s.get("train_seconds"), "wall_seconds": s.get("wall_seconds")})
    return pd.DataFrame(rows).set_index("checkpoint") if rows else pd.DataFrame()


CHAPTER = "06_wecheck"
ABLATION_ROWS = ["avg_summarization", "avg_dialogue", "paws", "avg_wo_vitc_fever"]


def available(runs_: dict) -> dict:
    """The ``{label: checkpoint}`` entries whose checkpoint has weights or a committed record; the others
    are left out, each with the command that trains it."""
    out = {}
    for k, v in runs_.items():
        try:
            models.identity(v)
            out[k] = v
        except FileNotFoundError:
            print(f"{k}: {v} has neither weights nor a committed record; run `tfc train wecheck --run {v[4:]}`")
    return out


def ablation(table: str, runs_: dict, datasets, sample, mode: str):
    """One of WeCheck's ablation tables at our scale: AUC x 100 of the available runs on the ablation subset,
    beside the paper's ``table`` (recorded in the ledger as a stand-in); returns the long paper-vs-ours
    frame and the wide table (one row per run; paper, ours, delta per summary row)."""
    a = auc_x100(available(runs_), datasets, subset=ABLATION_SUBSET, subsample=sample)
    j = reference.paper_vs_ours(a[a["row"].isin(ABLATION_ROWS)], table, scale=1)
    if "paper" in j:
        ledger.record(j.dropna(subset=["paper"]), chapter=CHAPTER, role="stand-in", mode=mode,
                      note=f"MiniLM-L6 runs at our scale (dialogue data), {ABLATION_SUBSET} rows per TRUE set")
    w = j.pivot(index="column", columns="row", values=["paper", "ours", "delta"]).reindex(list(runs_))
    return j, w.swaplevel(axis=1)[[(r, k) for r in ABLATION_ROWS for k in ("paper", "ours", "delta")]].round(1)


def signal_densities(pool: pd.DataFrame, sigcols, p_lab):
    """WeCheck Figure 1 at our scale: the density of each weak signal on the pool and of ``p(y+)``, whose
    panel shows the noise filter's band (dashed at 0.25 and 0.75); returns seaborn's FacetGrid."""
    dens = pool[sigcols].assign(**{"p(y+)": p_lab}).melt(var_name="signal", value_name="score")
    g = sns.displot(dens, x="score", col="signal", col_wrap=3, bins=25, stat="density", common_norm=False,
                    height=2.0, aspect=1.4, facet_kws={"sharey": False})
    for ax in g.axes.flat:
        if ax.get_title().endswith("p(y+)"):
            ax.axvline(0.25, ls="--", color="grey")
            ax.axvline(0.75, ls="--", color="grey")
    return g


def strong_warmup_models() -> dict:
    """``{label: (scorer, config)}``: a strong in-house warm-up and WeCheck's recipe trained on it (the WeCheck
    recipe whose record is read as its warm-up: :func:`tfc.runs.inhouse_models.warmup_pairs`), both read the way
    the warm-up's dev-data sweep chose, so the two differ only in the weak-supervision fine-tuning. Empty when
    there is no such pair or the warm-up has no recorded sweep."""
    from tfc.runs.inhouse_models import chosen_readings, warmup_pairs

    wecheck, warm = next(iter(warmup_pairs().items()), (None, None))
    chosen = list(chosen_readings([warm]).values()) if warm else []
    if not chosen:
        return {}
    name, kw = chosen[0]
    return {f"warm-up: {warm[4:]}": (name, kw), f"WeCheck on {warm[4:]}": (name, {**kw, "checkpoint": wecheck})}


def strong_warmup_texts(full: pd.DataFrame, sig: pd.DataFrame, n_sets: int) -> dict:
    """Glue text of the strong-warm-up comparison: nine-set means (``n/a`` unless a model covers every row of all
    ``n_sets`` sets), the paired-bootstrap gain "+x.x [lo, hi]" and a verdict; plus the WeCheck run's training
    facts from its record."""
    labels = list(strong_warmup_models())
    out = {"wc_v8_mean_warmup": "n/a", "wc_v8_mean_wecheck": "n/a", "wc_v8_gain": "n/a",
           "wc_v8_verdict": "not measured (the runs do not cover every row)", "wc_v8_train": "n/a"}
    ok = full.dropna(subset=["auc"]) if len(full) else full
    for key, label in zip(("wc_v8_mean_warmup", "wc_v8_mean_wecheck"), labels):
        got = ok[(ok["model"] == label) & (ok["coverage"] >= 0.999)] if len(ok) else ok
        if len(got) == n_sets:
            out[key] = f"{got['auc'].mean():.1f}"
    out["wc_v8_up_sets"], out["wc_v8_largest_drop"] = "n/a", "n/a"
    if "n/a" not in (out["wc_v8_mean_warmup"], out["wc_v8_mean_wecheck"]):
        d = (ok[ok["model"] == labels[1]].set_index("dataset")["auc"]
             - ok[ok["model"] == labels[0]].set_index("dataset")["auc"])
        out["wc_v8_up_sets"] = ", ".join(f"{k} ({v:+.1f})" for k, v in d[d > 0].items()) or "none"
        out["wc_v8_largest_drop"] = f"{d.idxmin()} ({d.min():+.1f})" if (d < 0).any() else "none"
    if len(sig) and "n/a" not in (out["wc_v8_mean_warmup"], out["wc_v8_mean_wecheck"]):
        r = sig.iloc[0]
        out["wc_v8_gain"] = f"{r['diff']:+.1f} [{r['ci_low']:+.1f}, {r['ci_high']:+.1f}]"
        out["wc_v8_verdict"] = ("WeCheck is above its warm-up (the interval lies above 0)" if r["ci_low"] > 0 else
                                "WeCheck is below its warm-up (the interval lies below 0)" if r["ci_high"] < 0 else
                                "no difference the bootstrap can tell apart (the interval holds 0)")
    try:
        rec = models.training_record("tfc/wecheck-minilm-v8")
        rows = rec["mix"]["train_rows"]
        out["wc_v8_train"] = (f"{rec['steps']} steps over {rows} weakly labelled dialogue rows in "
                              f"{rec['train_seconds'] / 60:.1f} min ({rec['device']})")
    except (FileNotFoundError, KeyError):
        pass
    return out


def _cached_aux(scorer, dataset: str, column: str) -> pd.Series:
    """One ``aux_*`` column of a scorer's cached rows of a TRUE set, by id (every split)."""
    from tfc.cache import ScoreCache

    parts = [ScoreCache(scorer.signature, dataset, str(sp)).read(check=True)
             for sp in D.load(dataset, sample=EVAL_SAMPLE, seed=EVAL_SEED)["split"].unique()]
    got = pd.concat(parts).drop_duplicates("id").set_index("id")
    return got[column] if column in got else pd.Series(dtype=float)


TOTAL = "mean (rows: total)"
README_COLUMNS = {"truncate": "as published (README: truncate)", "chunk": "chunks (default)"}


def readme_readings_table(datasets, sample: int | None = None, seed: int = EVAL_SEED) -> pd.DataFrame:
    """Per TRUE set (cache only): AUC x 100 of the shipped WeCheck model read as WeCheck's README calls it
    (``truncate``, the as-published reading) and in chunks (the default's reading), their difference, and the rows
    whose input the README's call cut (``aux_truncated``); ``sample`` keeps fewer rows per set (smoke runs). The
    last row is the mean over the sets."""
    from tfc.train.wecheck_eval import readme_readings

    readings = readme_readings()
    rows = []
    for ds in datasets:
        got = {k: score_dataset(sc, ds, sample=EVAL_SAMPLE, seed=EVAL_SEED, cache_only=True).assign(dataset=ds)
               for k, sc in readings.items()}
        t = subsample_rows(got["truncate"], sample, seed).dropna(subset=["score"])
        c = got["chunk"].set_index("id")["score"].reindex(t["id"]).to_numpy()
        ok = ~np.isnan(c)
        cut = _cached_aux(readings["truncate"], ds, "aux_truncated").reindex(t["id"]).fillna(False).astype(bool)
        rows.append({"dataset": ds, "rows": int(ok.sum()), "cut by the README's call": int(cut.to_numpy()[ok].sum()),
                     README_COLUMNS["truncate"]: 100 * roc_auc(t["label"][ok], t["score"][ok]),
                     README_COLUMNS["chunk"]: 100 * roc_auc(t["label"][ok], c[ok])})
    out = pd.DataFrame(rows).set_index("dataset")
    counts = ["rows", "cut by the README's call"]
    out.loc[TOTAL] = out.mean(numeric_only=True)
    out.loc[TOTAL, counts] = out.drop(index=TOTAL)[counts].sum()
    out[counts] = out[counts].astype(int)
    out["Δ (README − chunks)"] = out[README_COLUMNS["truncate"]] - out[README_COLUMNS["chunk"]]
    return out
