"""Dataset-level scoring through the cache (the loop over datasets lives here, not in notebooks)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from tfc.cache import ScoreCache
from tfc.meta import roc_auc


def score_dataset(scorer_or_name, dataset, split=None, sample=None, seed=0, use_cache=True,
                  chunk_size=512, batch_size=None, progress=False, cache_only=False, preset="default",
                  **overrides) -> pd.DataFrame:
    """Score ``dataset`` (cached, resumable): ``id, label, score`` and, read through the cache, the scorer's
    ``aux_*`` columns (the same for every split; ``use_cache=False`` and ``cache_only=True`` give the first three).
    A scorer name is read in ``preset`` (the recommended ``"default"``, or ``"as-published"`` as the book's tables
    read it) with ``overrides``. ``cache_only=True`` computes nothing: rows missing from the cache get NaN (used by
    the book for scorers too slow to recompute in a build)."""
    from tfc import data, scorers

    scorer = scorers.get(scorer_or_name, preset=preset, **overrides) if isinstance(scorer_or_name, str) else scorer_or_name
    if overrides and not isinstance(scorer_or_name, str):
        raise TypeError("overrides are only allowed with a scorer name")
    if not scorer.needs_text:   # imported scores: by id only
        return scorer.score_dataset(dataset, split=split, sample=sample, seed=seed)
    if getattr(scorer, "from_cache", False):   # ensembles read their members from the cache
        return _ensemble_dataset(scorer, dataset, split=split, sample=sample, seed=seed, use_cache=use_cache)
    df = data.load(dataset, split=split, sample=sample, seed=seed)
    if len(df) == 0:
        return pd.DataFrame({"id": [], "label": [], "score": []})
    if cache_only:
        from tfc.cache import ScoreCache as _SC

        have = pd.concat([_SC(scorer.signature, dataset, str(sp)).read(check=True) for sp in df["split"].unique()])
        sc = have.drop_duplicates("id").set_index("id")["score"].reindex(df["id"])
        return pd.DataFrame({"id": df["id"].to_numpy(), "label": df["label"].to_numpy(), "score": sc.to_numpy()})
    if not use_cache:
        vals = scorer.score(df["grounding"].tolist(), df["generated"].tolist(), batch_size=batch_size,
                            progress=progress)
        return pd.DataFrame({"id": df["id"], "label": df["label"], "score": vals})
    splits = df["split"].unique()
    frames = []
    for sp in splits:  # one cache file per split
        sub = df[df["split"] == sp]
        cache = ScoreCache(scorer.signature, dataset, str(sp))
        got = cache.compute(scorer, sub["id"].tolist(), sub["grounding"].tolist(), sub["generated"].tolist(),
                            chunk_size=chunk_size, batch_size=batch_size, progress=progress)
        frames.append(got[["id", "score"] + sorted(c for c in got.columns if c.startswith("aux_"))])
    got = pd.concat(frames).set_index("id").loc[df["id"]]
    return pd.DataFrame({"id": df["id"].to_numpy(), "label": df["label"].to_numpy(),
                         **{c: got[c].to_numpy() for c in got.columns}})


def _ensemble_dataset(ensemble, dataset, split=None, sample=None, seed=0, use_cache=True) -> pd.DataFrame:
    """An ensemble's scores of one dataset: each member through the cache, then :meth:`combine`."""
    base, member_scores = None, []
    for m in ensemble._members():
        r = score_dataset(m, dataset, split=split, sample=sample, seed=seed, use_cache=use_cache)
        if base is None:
            base = r[["id", "label"]].reset_index(drop=True)
        elif not (r["id"].to_numpy() == base["id"].to_numpy()).all():
            raise ValueError(f"ensemble member {m.signature} returned different ids on {dataset}")
        member_scores.append(r["score"].to_numpy())
    base["score"] = ensemble.combine(member_scores)
    return base


def auc_table(scorer_list, datasets, sample=None, seed=0, use_cache=True, preset="default", **kw) -> pd.DataFrame:
    """Long-form AUC table; ``n`` examples, ``n_scored`` of them with a score (NaN ones are left out). Scorer
    names are read in ``preset``."""
    from tfc import scorers

    rows = []
    for s in scorer_list:
        label = None
        if isinstance(s, tuple):   # (label, scorer or name)
            label, s = s
        scorer = scorers.get(s, preset=preset) if isinstance(s, str) else s
        label = label or (s if isinstance(s, str) else scorer.name)
        for ds in datasets:
            res = score_dataset(scorer, ds, sample=sample, seed=seed, use_cache=use_cache, **kw)
            got = res.dropna(subset=["score"])
            ok = got["label"].nunique() == 2
            rows.append({"row": ds, "column": label,
                         "value": roc_auc(got["label"], got["score"]) if ok else np.nan,
                         "n": len(res), "n_scored": len(got), "signature": scorer.signature})
    return pd.DataFrame(rows)


def chunking_summary(scorer_or_signature, datasets, split=None, preset="default") -> pd.DataFrame:
    """From the cache's ``aux_*`` columns: per dataset, rows scored, rows whose grounding was chunked,
    the most chunks, rows whose grounding was truncated (a reading that truncates, such as bert-score's own, records
    them) and rows whose generated text had to be truncated (never silent). A scorer name is read in ``preset``."""
    from tfc import scorers
    from tfc.cache import load_scores

    sig = scorer_or_signature if not hasattr(scorer_or_signature, "signature") else scorer_or_signature.signature
    if isinstance(sig, str) and sig in scorers.names():
        sig = scorers.get(sig, preset=preset).signature
    rows = []
    for ds in datasets:
        try:
            df = load_scores(sig, ds, split)
        except FileNotFoundError:
            continue
        n_chunks = df["aux_n_chunks"] if "aux_n_chunks" in df else pd.Series(1, index=df.index)
        trunc = next((df[c] for c in ("aux_gen_truncated", "aux_hyp_truncated") if c in df), None)
        cut = df["aux_grounding_truncated"] if "aux_grounding_truncated" in df else pd.Series(False, index=df.index)
        rows.append({"dataset": ds, "rows": len(df), "rows_chunked": int((n_chunks > 1).sum()),
                     "max_chunks": int(n_chunks.max()) if len(df) else 0, "grounding_truncated": int(cut.sum()),
                     "generated_truncated": int(trunc.sum()) if trunc is not None else 0})
    return pd.DataFrame(rows, columns=["dataset", "rows", "rows_chunked", "max_chunks", "grounding_truncated",
                                       "generated_truncated"])


def head_scores(scorer_or_name="alignscore", dataset: str = "frank", split: str | None = None,
                preset="default", **overrides):
    """All heads' cached scores of one dataset (``id, label, 3way, bin, reg``) from one cache entry.

    The chosen head is the ``score`` column, the others its ``aux_*`` columns; a head the checkpoint lacks
    is absent. Reads the cache only (rows not cached are left out).
    """
    from tfc import data, scorers
    from tfc.scorers.alignscore import HEADS

    s = scorers.get(scorer_or_name, preset=preset, **overrides) if isinstance(scorer_or_name, str) else scorer_or_name
    df = data.load(dataset, split=split)
    frames = [ScoreCache(s.signature, dataset, str(sp)).read(check=True) for sp in df["split"].unique()]
    cached = pd.concat(frames, ignore_index=True).drop_duplicates("id")
    out = cached.rename(columns={"score": s.config.head, **{f"aux_{h}": h for h in HEADS}})
    keep = ["id"] + [h for h in HEADS if h in out.columns]
    out = df[["id", "label"]].merge(out[keep], on="id", how="inner")
    return out
