"""WeCheck's evaluation at our scale: the checkpoints' TRUE scores through the cache, the AUC table, inference timing."""
from __future__ import annotations

import json
import time

import pandas as pd

from tfc import config


EVAL_SAMPLE = 100    # per TRUE set, stratified by label (tfc.data.load(sample=...)), seed EVAL_SEED
EVAL_SEED = 0
ABLATION_SUBSET = 50  # ablation runs: a label-stratified half of the evaluation sample (nested, same seed)


def eval_frame(dataset: str, sample: int | None = EVAL_SAMPLE, seed: int = EVAL_SEED,
               subset: int | None = None) -> pd.DataFrame:
    """The evaluation rows of a TRUE set: the stratified ``sample``, or ``subset`` rows of it (each label
    keeps its share, at least one row per label; nested in the sample, so main-model scores are reused)."""
    from tfc import data as D

    df = D.load(dataset, sample=sample, seed=seed)
    if subset is None or subset >= len(df):
        return df
    frac = subset / len(df)
    parts = [g.sample(n=max(1, int(round(frac * len(g)))), random_state=seed) for _, g in df.groupby("label", sort=True)]
    return df.loc[sorted(pd.concat(parts).index)]


# how the WeCheck runs' TRUE scores were read: the NLI scorer's chunks of the grounding (not the README's
# truncation at 512 tokens, the as-published reading), so the warm-up and every run read alike
RUN_READING = {"long_grounding": "chunk"}


def scorer_for(checkpoint: str):
    """The scorer whose cache holds a checkpoint's TRUE scores (``nli`` for the warm-up, else ``wecheck``): every
    run is read the same way, its groundings cut into chunks (:data:`RUN_READING`)."""
    from tfc import scorers

    if checkpoint == "tfc/nli-minilm":
        return scorers.get("nli", preset="as-published", checkpoint=checkpoint, mode="document")
    return scorers.get("wecheck", preset="as-published", checkpoint=checkpoint, **RUN_READING)


def readme_readings(checkpoint: str | None = None) -> dict:
    """``{reading: scorer}``: a WeCheck checkpoint (the shipped default's unless named) as WeCheck's README calls it
    (``truncate``, the as-published reading) and in chunks (``chunk``, the default's reading), raw scores both."""
    from tfc import scorers

    ck = checkpoint or scorers.DEFAULTS["wecheck"]["checkpoint"]
    return {"truncate": scorers.get("wecheck", preset="as-published", checkpoint=ck),
            "chunk": scorers.get("wecheck", preset="as-published", checkpoint=ck, **RUN_READING)}


def _score_subset(checkpoint: str, dataset: str, sample, seed, subset) -> dict:
    """Score the nested ablation subset through the cache and measure it (a run record)."""
    from datetime import datetime, timezone

    from tfc.cache import ScoreCache

    scorer = scorer_for(checkpoint)
    df = eval_frame(dataset, sample, seed, subset)
    rec = {"scorer": scorer.name, "signature": scorer.signature, "dataset": dataset, "sample": sample,
           "subset": subset, "seed": seed, "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    computed, wall = 0, 0.0
    for sp, sub in df.groupby("split", sort=False):
        cache = ScoreCache(scorer.signature, dataset, str(sp))
        before = set(cache.read(check=True)["id"])
        t0 = time.perf_counter()
        cache.compute(scorer, sub["id"].tolist(), sub["grounding"].tolist(), sub["generated"].tolist())
        wall += time.perf_counter() - t0
        computed += int((~sub["id"].isin(before)).sum())
    rec.update(rows=int(len(df)), computed_rows=computed, reused_rows=0, pairs=None, wall_seconds=round(wall, 2),
               pairs_per_second=None, examples_per_second=round(computed / wall, 2) if computed and wall > 0 else None)
    return rec


def evaluate(checkpoint: str, datasets=None, sample: int | None = EVAL_SAMPLE, seed: int = EVAL_SEED,
             subset: int | None = None, log=print) -> list[dict]:
    """Score a checkpoint on the TRUE sets through the cache (resumable) and record the runs;
    ``subset``: only the nested ablation subset of each set (:func:`eval_frame`)."""
    from tfc import data as D
    from tfc.runs import scoring_runs as inhouse

    name = "nli" if checkpoint == "tfc/nli-minilm" else "wecheck"
    over = {"checkpoint": checkpoint} | ({"mode": "document"} if name == "nli" else RUN_READING)
    out = []
    for ds in datasets or D.TRUE_TEXT:
        if subset:
            rec = _score_subset(checkpoint, ds, sample, seed, subset)
        else:
            rec = inhouse.score_run(name, ds, over, sample=sample, seed=seed)
        rec["plan"] = "wecheck"
        inhouse.append_record(checkpoint, rec)
        log(json.dumps({k: rec[k] for k in ("signature", "dataset", "rows", "computed_rows", "wall_seconds")}))
        out.append(rec)
    return out


def auc_long(checkpoints: dict, datasets=None, sample: int | None = EVAL_SAMPLE, seed: int = EVAL_SEED) -> pd.DataFrame:
    """Long AUC table (row = dataset, column = label, value 0..1, signature, n, n_scored) from the cache
    only (missing rows stay NaN and are counted), for ``{label: checkpoint}``."""
    from tfc import data as D
    from tfc.results.dataset import auc_table

    ds = list(datasets or D.TRUE_TEXT)
    parts = [auc_table([(lab, scorer_for(ck))], ds, sample=sample, seed=seed, cache_only=True)
             for lab, ck in checkpoints.items()]
    return pd.concat(parts, ignore_index=True)


# --------------------------------------------------------------------------------------------------
# inference timing (WeCheck Table 4 at our scale); the chapter's tables are in tfc.book.chapters.wecheck

def inference_timing(checkpoint: str = "tfc/wecheck-minilm", n: int = 48, seed: int = 0,
                     datasets=("frank", "q2", "paws"), batch_size: int = 16) -> pd.DataFrame:
    """WeCheck Table 4 at our scale: wall seconds of the WeCheck scorer and of SummaC-ZS (same MiniLM
    NLI model, sentence-level) on the same stratified sample per task, no cache, same process."""
    from tfc import data as D
    from tfc import scorers

    rows = []
    runs = {"wecheck": scorers.get("wecheck", preset="as-published", checkpoint=checkpoint, **RUN_READING),
            "summac_zs": scorers.get("summac-zs", preset="as-published", checkpoint="tfc/nli-minilm")}
    for sc in runs.values():
        sc.load()
    for ds in datasets:
        df = D.load(ds, sample=n, seed=seed)
        for name, sc in runs.items():
            t0 = time.perf_counter()
            sc.score(df["grounding"].tolist(), df["generated"].tolist(), batch_size=batch_size, progress=False)
            rows.append({"dataset": ds, "scorer": name, "rows": len(df), "seconds": round(time.perf_counter() - t0, 3)})
    out = pd.DataFrame(rows)
    base = out[out["scorer"] == "wecheck"].set_index("dataset")["seconds"]
    out["relative_to_wecheck"] = (out["seconds"] / out["dataset"].map(base)).round(2)
    return out


def record_timing(checkpoint: str = "tfc/wecheck-minilm", **kw) -> pd.DataFrame:
    """Run :func:`inference_timing` and store it as ``results/models/<name>/inference_timing.json``."""
    import torch

    tim = inference_timing(checkpoint, **kw)
    p = config.model_records_dir() / checkpoint[4:] / "inference_timing.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"threads": torch.get_num_threads(), "note": "shared 2-core CPU, indicative",
                             "rows": tim.to_dict("records")}, indent=1) + "\n")
    return tim


__all__ = ["record_timing", "inference_timing", "evaluate", "eval_frame", "readme_readings", "RUN_READING", "ABLATION_SUBSET", "auc_long", "EVAL_SAMPLE",
           "EVAL_SEED"]
