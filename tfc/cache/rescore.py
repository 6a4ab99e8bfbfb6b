"""Score again the caches that read a checkpoint whose weights changed: ``tfc cache rescore CHECKPOINT``.

A cache's signature hashes its scorer's configuration *and* the identity (content hash) of every checkpoint the
configuration reads. When a shipped release is replaced under the same name (retrained, or packed otherwise), every
cache computed with the old weights sits under a signature that no configuration has any more: the book no longer
finds it. :mod:`tfc.cache.migrate` must not move such a cache, because its scores are the old weights'. This module
scores the same rows again with the new weights:

1. every sidecar whose configuration names ``checkpoint`` (any field) and whose configuration's signature is another
   today is planned;
2. its rows (the cached ids, read from the dataset and checked against the cached input hashes, so that the inputs
   are those the old scores were computed on) are scored under the new signature through the score cache, in
   resumable parts;
3. once the new cache holds every row, the old one is removed, and the model records that named the old signature
   name the new one (:func:`tfc.cache.migrate.rewrite_records`).

A run that is interrupted resumes where it stopped: the new cache keeps its parts, and the old one stays until the
new one is whole.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path


def _names(value) -> set[str]:
    """Every string inside a configuration value (nested lists and dicts included)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_names(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(_names(v) for v in value)) if value else set()
    return set()


def plan(checkpoint: str, root=None) -> list[dict]:
    """The caches under ``root`` (default: the score cache) whose configuration reads ``checkpoint`` and whose
    signature moved: ``{"scorer", "config", "old", "new", "dataset", "split"}`` each."""
    from tfc import config
    from tfc.cache.migrate import rebuilt

    root = Path(root or config.cache_dir())
    out = []
    for side in sorted(root.glob("*/*/*.json")):
        meta = json.loads(side.read_text())
        name, cfg = meta.get("scorer"), meta.get("config")
        if not name or not isinstance(cfg, dict) or checkpoint not in _names(cfg):
            continue
        new = rebuilt(name, cfg).signature
        if new != side.parts[-3]:
            out.append({"scorer": name, "config": cfg, "old": side.parts[-3], "new": new,
                        "dataset": side.parts[-2], "split": side.stem})
    return out


def _rows(dataset: str, split: str, cached):
    """The dataset's rows for the cached ids, in the cache's order; inputs that differ from those the cache was
    computed on are refused."""
    from tfc import data
    from tfc.cache import CacheMismatchError, input_sha

    df = data.load(dataset, split=split)
    df = df[df["id"].isin(set(cached["id"]))].drop_duplicates("id").set_index("id").loc[cached["id"]].reset_index()
    shas = [input_sha(g, h) for g, h in zip(df["grounding"], df["generated"])]
    bad = [i for i, s, want in zip(df["id"], shas, cached["input_sha"]) if s != want]
    if bad:
        raise CacheMismatchError(f"{dataset}: {len(bad)} row(s) read otherwise than when they were cached "
                                 f"(first: {bad[0]}); the old scores cannot be redone on the same inputs")
    return df


def rescore_one(entry: dict, root=None, progress: bool = False) -> int:
    """Score one planned cache again under its new signature and remove the old one; returns the rows scored."""
    from tfc import config
    from tfc.cache import ScoreCache
    from tfc.cache.migrate import rebuilt

    root = Path(root or config.cache_dir())
    old = ScoreCache(entry["old"], entry["dataset"], entry["split"], root=root)
    cached = old.read(check=True)
    df = _rows(entry["dataset"], entry["split"], cached)
    scorer = rebuilt(entry["scorer"], entry["config"])
    if scorer.signature != entry["new"]:
        raise RuntimeError(f"{entry['old']}: its configuration reads {scorer.signature} now, not {entry['new']}")
    new = ScoreCache(entry["new"], entry["dataset"], entry["split"], root=root)
    new.compute(scorer, df["id"].tolist(), df["grounding"].tolist(), df["generated"].tolist(), progress=progress)
    got = new.read(check=True)
    if set(got["id"]) != set(cached["id"]):
        raise RuntimeError(f"{new.dir}: {len(got)} rows after scoring, {len(cached)} wanted; the old cache is kept")
    for p in (old.parquet, old.sidecar):
        p.unlink()
    shutil.rmtree(old.parts, ignore_errors=True)
    for d in (old.dir, old.dir.parent):
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()
    return int(len(got))


def rescore(checkpoint: str, root=None, records=None, log=None) -> list[dict]:
    """:func:`rescore_one` for every cache of :func:`plan`, then the model records (``records``, default
    results/models) renamed from the old signatures to the new; returns the plan with each entry's rows."""
    from tfc.cache.migrate import rewrite_records

    todo = plan(checkpoint, root)
    for e in todo:
        e["rows"] = rescore_one(e, root)
        if log:
            log(f"{e['old']} -> {e['new']} ({e['dataset']}/{e['split']}): {e['rows']} rows")
    rewrite_records({e["old"]: e["new"] for e in todo}, root=records)
    return [{k: v for k, v in e.items() if k != "config"} for e in todo]
