"""Dataset-level scoring through the cache (the loop over datasets lives here, not in notebooks)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from tfc.cache import ScoreCache


def roc_auc(labels, scores) -> float:
    """``tfc.meta.roc_auc`` when the meta layer provides it, else sklearn's ``roc_auc_score``."""
    try:
        from tfc.meta import roc_auc as _meta_auc  # written in parallel by the meta engineer
    except ImportError:
        _meta_auc = None
    if _meta_auc is not None:
        return float(_meta_auc(labels, scores))
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(np.asarray(labels), np.asarray(scores)))


def score_dataset(scorer_or_name, dataset, split=None, sample=None, seed=0, use_cache=True,
                  chunk_size=512, batch_size=None, progress=False, **overrides) -> pd.DataFrame:
    from tfc import data, scorers

    scorer = scorers.get(scorer_or_name, **overrides) if isinstance(scorer_or_name, str) else scorer_or_name
    if overrides and not isinstance(scorer_or_name, str):
        raise TypeError("overrides are only allowed with a scorer name")
    if not scorer.needs_text:   # imported scores: by id only
        return scorer.score_dataset(dataset, split=split, sample=sample, seed=seed)
    if getattr(scorer, "from_cache", False):   # ensembles read their members from the cache
        return scorer.score_dataset(dataset, split=split, sample=sample, seed=seed, use_cache=use_cache)
    df = data.load(dataset, split=split, sample=sample, seed=seed)
    if len(df) == 0:
        return pd.DataFrame({"id": [], "label": [], "score": []})
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
        frames.append(got[["id", "score"]])
    sc = pd.concat(frames).set_index("id")["score"]
    return pd.DataFrame({"id": df["id"].to_numpy(), "label": df["label"].to_numpy(),
                         "score": sc.loc[df["id"]].to_numpy()})


def auc_table(scorer_list, datasets, sample=None, seed=0, use_cache=True, **kw) -> pd.DataFrame:
    from tfc import scorers

    rows = []
    for s in scorer_list:
        scorer = scorers.get(s) if isinstance(s, str) else s
        label = s if isinstance(s, str) else scorer.name
        for ds in datasets:
            res = score_dataset(scorer, ds, sample=sample, seed=seed, use_cache=use_cache, **kw)
            ok = res["label"].nunique() == 2
            rows.append({"row": ds, "column": label,
                         "value": roc_auc(res["label"], res["score"]) if ok else np.nan,
                         "n": len(res), "signature": scorer.signature})
    return pd.DataFrame(rows)
