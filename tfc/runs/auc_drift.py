"""AUC drift: the same model read two ways (fp32 and a fast preset, or a release and the weights it was quantised
from), compared on the rows both score caches hold, and the limit a fast preset must stay within
(:data:`DRIFT_LIMIT`). The rows are scored by the drift plans of :func:`tfc.runs.inhouse_models.plans`
(:data:`tfc.runs.inhouse_models.DRIFT_SAMPLE`, :data:`tfc.runs.inhouse_models.FAST_DRIFT_SAMPLE`). The drift
rule a shipped release is checked against (a fixed sample scored afresh) is :mod:`tfc.runs.release_drift`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from tfc.runs.cached_aucs import cached_scores
from tfc.runs.inhouse_models import _true_sets


def drift_table(fp32, fast, datasets=None) -> pd.DataFrame:
    """AUC x 100 of the same model at fp32 and at its fast preset, on the rows both caches hold."""
    from tfc.meta import roc_auc

    rows = []
    for ds in list(datasets or _true_sets()):
        a = cached_scores(fp32, ds, None, None, 0, True).dropna(subset=["score"]).set_index("id")
        b = cached_scores(fast, ds, None, None, 0, True).dropna(subset=["score"]).set_index("id")
        common = a.index.intersection(b.index)
        if len(common) == 0 or a.loc[common, "label"].nunique() < 2:
            continue
        y = a.loc[common, "label"].to_numpy()
        x, z = a.loc[common, "score"].to_numpy(), b.loc[common, "score"].to_numpy()
        rows.append({"dataset": ds, "rows": len(common), "auc_fp32": 100 * roc_auc(y, x), "auc_fast": 100 * roc_auc(y, z),
                     "max_abs_score_diff": float(np.max(np.abs(x - z)))})
    df = pd.DataFrame(rows)
    if len(df):
        df["drift"] = df["auc_fast"] - df["auc_fp32"]
    return df


DRIFT_LIMIT = 0.2   # AUC points: the most a fast preset may move any TRUE set against fp32


def drift_verdicts(drift: pd.DataFrame, by: str = "preset", n_sets: int | None = None,
                   limit: float = DRIFT_LIMIT) -> pd.DataFrame:
    """Per ``by`` group of a drift table (a preset, or a scorer): ``largest`` |drift| (AUC points), ``sets``
    measured, ``needed`` (``n_sets``, else every set of the table) and ``status``: ``within`` (within ``limit`` on
    every needed set: it qualifies as a fast preset), ``beyond`` (over the limit) or ``partial`` (within it on fewer
    sets than needed)."""
    cols = [by, "largest", "sets", "needed", "status"]
    if not len(drift):
        return pd.DataFrame(columns=cols)
    need = n_sets if n_sets is not None else drift["dataset"].nunique()
    g = drift.groupby(by, sort=False)
    out = pd.DataFrame({"largest": g["drift"].agg(lambda x: float(x.abs().max())), "sets": g["dataset"].nunique()})
    out["needed"] = need
    out["status"] = np.where(out["largest"] > limit, "beyond", np.where(out["sets"] >= need, "within", "partial"))
    return out.reset_index()[cols]
