"""What both QG-QA chapters, QAGS (``notebooks/03_qags.md``) and Q² (``notebooks/04_q2.md``), read about their
scoring: the rows of a dataset with a scorer's cached scores (:func:`cached`), a lexical scorer's scores computed
in memory (:func:`lexical_scores`), the recorded runs' responses per second through each pipeline stage
(:func:`stage_table`), and TRUE's dialogue sets (:data:`DIALOGUE`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

DIALOGUE = ("begin", "q2", "dialfact")   # TRUE's dialogue sets, where Q² is scored


def cached(scorer, dataset: str, sample=None, seed: int = 0, cache_only: bool = True) -> pd.DataFrame:
    """Rows of ``dataset`` (in data order) with ``label``, ``score`` and the cache's ``aux_*`` columns
    (NaN where not cached)."""
    from tfc import data
    from tfc.cache import ScoreCache

    df = data.load(dataset, sample=sample, seed=seed)
    if not cache_only:
        from tfc.results.dataset import score_dataset

        score_dataset(scorer, dataset, sample=sample, seed=seed)
    parts = []
    for sp in df["split"].unique():
        got = ScoreCache(scorer.signature, dataset, str(sp)).read(check=True)
        parts.append(got)
    have = pd.concat(parts).drop_duplicates("id").set_index("id") if parts else pd.DataFrame()
    out = df[["id", "split", "label"] + [c for c in ("human_score",) if c in df]].copy()
    cols = [c for c in have.columns if c == "score" or c.startswith("aux_")]
    for c in cols:
        out[c] = have[c].reindex(out["id"]).to_numpy()
    if "score" not in out:
        out["score"] = np.nan
    return out.reset_index(drop=True)


def lexical_scores(scorer, dataset: str) -> pd.DataFrame:
    """``id``, ``label`` and ``scorer``'s ``score`` of every row of ``dataset``, computed in memory (no cache
    written): for cheap lexical scorers."""
    from tfc import data

    df = data.load(dataset)
    return pd.DataFrame({"id": df["id"], "label": df["label"],
                         "score": scorer.score(df["grounding"], df["generated"], progress=False)})


STAGE_ORDER = ("candidates", "qg", "qa_generated", "qa_grounding", "compare", "no_questions", "aux_windows")


def stage_table(runs: pd.DataFrame, scorer: str) -> pd.DataFrame:
    """Responses per second through each pipeline stage, per recorded run of ``scorer`` (runs recorded before
    the stages were timed are left out) and over all of them: one row per dataset plus ``all``, one column per
    stage (rows computed / that stage's wall seconds), and the whole pipeline's rate."""
    if runs.empty or "stage_seconds" not in runs:
        return pd.DataFrame()
    r = runs[(runs["scorer"] == scorer) & runs["stage_seconds"].map(lambda x: isinstance(x, dict) and bool(x))]
    if r.empty:
        return pd.DataFrame()
    secs = pd.DataFrame(list(r["stage_seconds"]), index=r["dataset"].to_numpy()).fillna(0.0)
    # a stage that took no measurable time (the "zero" no-question policy) would show an absurd rate: left out
    secs = secs.reindex(columns=[c for c in STAGE_ORDER if c in secs and secs[c].sum() >= 0.01])
    rows = pd.Series(r["computed_rows"].to_numpy(float), index=secs.index)
    wall = pd.Series(r["wall_seconds"].to_numpy(float), index=secs.index)
    secs.loc["all"], rows.loc["all"], wall.loc["all"] = secs.sum(), rows.sum(), wall.sum()
    out = secs.rdiv(rows, axis=0).where(secs > 0)
    out["pipeline"] = rows / wall
    out.insert(0, "responses", rows.astype(int))
    return out.round(2)
