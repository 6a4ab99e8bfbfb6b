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


def drift_verdict(drift: pd.DataFrame, by: str = "preset", limit: float = DRIFT_LIMIT, n_sets: int | None = None) -> str:
    """One sentence per ``by`` group (a preset, or a scorer): its largest |drift| and whether it is within
    ``limit`` on every set (``n_sets`` sets when given, else every set of the table)."""
    if drift.empty:
        return "n/a (no drift sample scored)"
    need = n_sets if n_sets is not None else drift["dataset"].nunique()
    out = []
    for key, g in drift.groupby(by, sort=False):
        worst = float(g["drift"].abs().max())
        ok = worst <= limit and g["dataset"].nunique() >= need
        out.append(f"{key}: largest |drift| {worst:.2f} AUC points over {g['dataset'].nunique()} sets, "
                   + ("within the limit, so it qualifies as a fast preset" if ok
                      else f"beyond the {limit} allowed" if worst > limit else f"only {g['dataset'].nunique()} of {need} sets measured"))
    return "; ".join(out)
