"""Scoring runs of the in-house checkpoints and their run records.

One *run* scores one dataset (all its splits, or a stratified sample) with one scorer through the score
cache and measures it: rows computed, model pairs scored, wall time, pairs/s. The records are appended
to ``results/models/<name>/scoring_runs.json`` so the book can show throughput without recomputing.

**Reuse of identical inputs.** A score is a deterministic function of (grounding, generated) for a given
signature, so before computing, rows whose inputs (``input_sha``) already have a score under the same
signature in *another* dataset's cache are copied (e.g. SummaC's FRANK split is TRUE's FRANK; the
AlignScore relabelling of Polytope has the same texts as Polytope). The run record counts them as
``reused_rows``; nothing else changes in the cache.

:func:`run_plan` runs one of the plans of :func:`tfc.runs.inhouse_models.plans`.
"""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone

import pandas as pd

from tfc import config
from tfc.runs.inhouse_models import plans


def _pairs(df: pd.DataFrame) -> int:
    """Model forward pairs behind cached rows (``aux_n_pairs``, else ``aux_n_chunks``, else the SummaC unit
    matrix, else one per row; pairs shared by several rows are counted for each row)."""
    for col in ("aux_n_pairs", "aux_n_chunks"):
        if col in df.columns:
            return int(df[col].sum())
    if {"aux_n_grounding_units", "aux_n_generated_units"} <= set(df.columns):  # SummaC: the unit matrix
        return int((df["aux_n_grounding_units"] * df["aux_n_generated_units"]).sum())
    return int(len(df))


def reuse_identical(scorer, cache, sub: pd.DataFrame) -> int:
    """Copy scores of identical inputs cached under ``scorer.signature`` for other datasets into ``cache``
    (as a part file, compacted by the next compute). Returns the number of rows copied."""
    from tfc.cache import ScoreCache, input_sha

    have = set(cache.read(check=True)["id"])
    todo = sub[~sub["id"].isin(have)]
    if todo.empty:
        return 0
    want = pd.DataFrame({"id": todo["id"].to_numpy(),
                         "input_sha": [input_sha(g, h) for g, h in zip(todo["grounding"], todo["generated"])]})
    root = config.cache_dir() / scorer.signature
    if not root.is_dir():
        return 0
    found = []
    for pq in sorted(root.glob("*/*.parquet")):
        ds, sp = pq.parent.name, pq.stem
        if ds == cache.dataset and sp == cache.split:
            continue
        other = ScoreCache(scorer.signature, ds, sp).read(check=True)
        found.append(other.drop(columns=["id"]).drop_duplicates("input_sha"))
    if not found:
        return 0
    pool = pd.concat(found, ignore_index=True).drop_duplicates("input_sha")
    got = want.merge(pool, on="input_sha", how="inner")
    if got.empty:
        return 0
    cache.write_part(got)
    return int(len(got))


def measured_split(scorer, dataset: str, split, sub: pd.DataFrame, reuse: bool = True, chunk_size: int = 128,
                   batch_size: int | None = None, progress: bool = False):
    """Score one split's rows ``sub`` through the cache (resumable), timing only the computation.

    Rows whose inputs are cached under the same signature elsewhere are copied first (``reuse``). Returns
    ``(got, new, labels, reused, wall)``: all rows' cache frame, the rows computed now, the labels in
    ``got``'s order, the number of copied rows and the seconds spent computing. Shared by the in-house
    runs here and the QG-QA runs (:mod:`tfc.runs.qgqa`)."""
    from tfc.cache import ScoreCache

    cache = ScoreCache(scorer.signature, dataset, str(split))
    reused = int(reuse_identical(scorer, cache, sub)) if reuse else 0
    before = set(cache.read(check=True)["id"])
    t0 = time.perf_counter()
    got = cache.compute(scorer, sub["id"].tolist(), sub["grounding"].tolist(), sub["generated"].tolist(),
                        chunk_size=chunk_size, batch_size=batch_size, progress=progress)
    wall = time.perf_counter() - t0
    new = got[~got["id"].isin(before)]
    labels = sub.set_index("id")["label"].loc[got["id"]].to_numpy()
    return got, new, labels, reused, wall


def score_run(scorer_name: str, dataset: str, overrides: dict | None = None, sample: int | None = None,
              seed: int = 0, batch_size: int | None = None, reuse: bool = True, progress: bool = False,
              split: str | None = None, chunk_size: int = 128) -> dict:
    """Score one dataset (all splits, or ``split``) through the cache (resumable) and measure it; returns
    the run record."""
    from tfc import data, scorers
    from tfc.meta import roc_auc

    scorer = scorers.get(scorer_name, preset="as-published", **(overrides or {}))
    df = data.load(dataset, split=split, sample=sample, seed=seed)
    rec = {"scorer": scorer_name, "signature": scorer.signature, "dataset": dataset, "sample": sample,
           "split": split,
           "seed": seed, "splits": {}, "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    total_wall, total_pairs, total_computed, total_reused = 0.0, 0, 0, 0
    for sp in df["split"].unique():
        sub = df[df["split"] == sp]
        # parts of 128 rows: an interrupted run loses little, and batches still fill (pairs span examples)
        got, new, lab, reused, wall = measured_split(scorer, dataset, sp, sub, reuse=reuse, chunk_size=chunk_size,
                                                     batch_size=batch_size, progress=progress)
        pairs = _pairs(new)
        auc = roc_auc(lab, got["score"].to_numpy()) if len(set(lab)) == 2 else float("nan")
        rec["splits"][str(sp)] = {"rows": int(len(sub)), "computed_rows": int(len(new)), "reused_rows": reused,
                                  "pairs": pairs, "wall_seconds": round(wall, 2),
                                  "pairs_per_second": round(pairs / wall, 2) if len(new) and wall > 0 else None,
                                  "auc": round(float(auc), 4)}
        total_wall += wall
        total_pairs += pairs
        total_computed += len(new)
        total_reused += reused
    rec.update(rows=int(len(df)), computed_rows=total_computed, reused_rows=total_reused, pairs=total_pairs,
               wall_seconds=round(total_wall, 2),
               pairs_per_second=round(total_pairs / total_wall, 2) if total_computed and total_wall > 0 else None,
               examples_per_second=round(total_computed / total_wall, 2) if total_computed and total_wall > 0 else None,
               threads=_threads(), device=getattr(scorer.config, "device", None) or config.default_device())
    return rec


def _threads():
    try:
        import torch

        return int(torch.get_num_threads())
    except ImportError:  # pragma: no cover
        return None


def record_path(checkpoint: str):
    if not checkpoint.startswith("tfc/"):
        raise ValueError(f"run records are kept for in-house checkpoints (tfc/<name>) only, not {checkpoint!r}")
    return config.model_records_dir() / checkpoint[4:] / "scoring_runs.json"


def append_record(checkpoint: str, rec: dict) -> None:
    """Add (or replace: same signature, dataset, sample) a run record in the checkpoint's record file."""
    import fcntl

    p = record_path(checkpoint)
    p.parent.mkdir(parents=True, exist_ok=True)

    def key(r):
        return r["signature"], r["dataset"], r.get("sample"), r.get("split")

    # several scoring processes may finish at once: read-modify-write under an exclusive lock, then rename
    with open(p.with_name(p.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rows = json.loads(p.read_text()) if p.is_file() else []
        old = [r for r in rows if key(r) == key(rec)]
        if old and rec["computed_rows"] == 0:   # a fully cached rerun measures nothing: keep the measurement
            return
        rows = [r for r in rows if key(r) != key(rec)] + [rec]
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(rows, indent=1) + "\n")
        tmp.replace(p)


def load_records(checkpoint: str) -> pd.DataFrame:
    """The run records of an in-house checkpoint as a flat table (one row per run)."""
    p = record_path(checkpoint)
    cols = ["scorer", "signature", "dataset", "sample", "split", "rows", "computed_rows", "reused_rows", "pairs",
            "wall_seconds", "pairs_per_second", "examples_per_second", "threads", "device"]
    if not p.is_file():
        return pd.DataFrame(columns=cols)
    return pd.DataFrame(json.loads(p.read_text())).reindex(columns=cols)


def run_plan(name: str, threads: int | None = None, batch_size: int | None = None, log=print,
             datasets=None, split: str | None = None) -> list[dict]:
    """Run one of :func:`tfc.runs.inhouse_models.plans` (resumable: cached rows are not recomputed) and record every run;
    ``datasets``/``split`` restrict it (a dataset without that split is skipped)."""
    all_plans = plans()
    if name not in all_plans:
        raise KeyError(f"unknown plan {name!r}; known: {', '.join(all_plans)}")
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    out = []
    for run in all_plans[name]:
        if datasets and run["dataset"] not in datasets:
            continue
        want = split or run.get("split")
        if want is not None:
            from tfc import data

            if want not in data.info(run["dataset"]).splits:
                continue
        rec = score_run(run["scorer"], run["dataset"], run.get("overrides"), sample=run.get("sample"),
                        seed=run.get("seed", 0), batch_size=batch_size, split=split or run.get("split"))
        rec["plan"] = name
        if str(run["overrides"].get("checkpoint", "")).startswith("tfc/"):   # records: in-house checkpoints only
            append_record(run["overrides"]["checkpoint"], rec)
        log(json.dumps({k: rec[k] for k in ("signature", "dataset", "rows", "computed_rows", "reused_rows",
                                            "pairs", "wall_seconds", "pairs_per_second")}
                       | {"auc": {s: v["auc"] for s, v in rec["splits"].items()}}))
        out.append(rec)
    return out
