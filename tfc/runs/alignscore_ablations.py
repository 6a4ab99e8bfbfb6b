"""The AlignScore ablations of the in-house models, read from the score cache only: which head (3-way, binary,
regression) and which splitting of the grounding (:data:`tfc.runs.inhouse_models.SPLIT_MODES`) reads best,
per TRUE set and as paired-bootstrap contrasts against a reference choice (:data:`ABLATION_REFERENCE`).
The runs behind them are plans of :func:`tfc.runs.inhouse_models.plans` (``alignscore-split-ablation``,
``align7-true``, ``align7-split``).
"""
from __future__ import annotations

import pandas as pd

from tfc.runs.cached_aucs import cached_scores
from tfc.runs.inhouse_models import ABLATION_SAMPLE, ABLATION_SEED, SPLIT_MODES, _true_sets, alignscore_model


def head_ablation(checkpoint="tfc/alignscore-minilm", datasets=None, **overrides) -> pd.DataFrame:
    """AUC (x100) of each head from one cached run (the other heads are its ``aux_*`` columns), with the
    TRUE 9-set mean: ``dataset, head, auc``."""
    from tfc import scorers
    from tfc.meta import roc_auc
    from tfc.results.dataset import head_scores

    rows = []
    for ds in datasets or _true_sets():
        try:
            # tfc's greedy chunks (the "improved" preset), the reading the ablations were scored with
            hs = head_scores(scorers.get("alignscore", preset="improved", checkpoint=checkpoint, **overrides), ds)
        except (FileNotFoundError, ValueError):
            continue
        for h in ("3way", "bin", "reg"):
            if h in hs and hs["label"].nunique() == 2:
                rows.append({"dataset": ds, "head": h, "auc": 100 * roc_auc(hs["label"], hs[h]), "n": len(hs)})
    df = pd.DataFrame(rows, columns=["dataset", "head", "auc", "n"])
    if len(df) and df["dataset"].nunique() == len(datasets or _true_sets()):
        mean = df.groupby("head", as_index=False)["auc"].mean().assign(dataset="mean", n=df.groupby("head")["n"].sum().to_numpy())
        df = pd.concat([df, mean], ignore_index=True)
    return df



def split_ablation(checkpoint="tfc/alignscore-minilm", datasets=None, sample=ABLATION_SAMPLE,
                   seed=ABLATION_SEED) -> pd.DataFrame:
    """AUC (x100) per splitting mode on the fixed stratified sample, from the cache only:
    ``dataset, split, auc, n_scored, pairs``; plus the mean over the datasets every mode covers (a row
    ``mean (<n> sets)``, with ``n`` also in ``attrs["n_sets"]``)."""
    from tfc import scorers
    from tfc.cache import ScoreCache
    from tfc.meta import roc_auc

    rows = []
    for sp in SPLIT_MODES:
        sc = scorers.get("alignscore", preset="as-published", checkpoint=checkpoint, split=sp)
        for ds in datasets or _true_sets():
            res = cached_scores(sc, ds, None, sample, seed, True)
            got = res.dropna(subset=["score"])
            if len(got) < len(res) or got["label"].nunique() < 2:
                continue
            from tfc import data

            pairs = 0
            for spl in data.load(ds, sample=sample, seed=seed)["split"].unique():
                c = ScoreCache(sc.signature, ds, spl).read(check=True)
                c = c[c["id"].isin(set(got["id"]))]
                pairs += int(c["aux_n_pairs"].sum()) if "aux_n_pairs" in c else len(c)
            rows.append({"dataset": ds, "split": sp, "auc": 100 * roc_auc(got["label"], got["score"]),
                         "n_scored": len(got), "pairs": pairs})
    df = pd.DataFrame(rows, columns=["dataset", "split", "auc", "n_scored", "pairs"])
    if len(df):
        full = df.groupby("dataset")["split"].nunique()
        common = set(full[full == df["split"].nunique()].index)
        m = df[df["dataset"].isin(common)].groupby("split", as_index=False).agg(
            auc=("auc", "mean"), n_scored=("n_scored", "sum"), pairs=("pairs", "sum"))
        df = pd.concat([df, m.assign(dataset=f"mean ({len(common)} sets)")], ignore_index=True)
        df.attrs["n_sets"] = len(common)
    return df


# The model of the AlignScore ablations is the sentence model whose recipe names an AlignScore plan
# (tfc.runs.inhouse_models.alignscore_model: the three-head one, scored on every TRUE row); the first model
# (tfc/alignscore-minilm) stays on its sample
# what each ablation is measured against: the published head, and tfc's chunks (the reading the plans scored; the
# published equal groups of sentences differ from them only on groundings over 350 words)
ABLATION_REFERENCE = {"head": "3way", "split": "chunk"}


def ablation_groups(checkpoint: str | None = None, kind: str = "head", datasets=None) -> tuple[dict, pd.DataFrame]:
    """The paired scores of an AlignScore ablation, read from the cache only (``checkpoint``: default
    :func:`tfc.runs.inhouse_models.alignscore_model`).

    ``kind="head"``: the 3-way, binary and regression heads of one published-splitting (chunk) run (the other
    heads are its ``aux_*`` columns); ``kind="split"``: the 3-way head under each of
    :data:`tfc.runs.inhouse_models.SPLIT_MODES`.
    Returns ``(groups, coverage)``: ``groups`` is ``{dataset: (labels, {column: scores})}`` for the datasets where
    every column scored every row of the set and both classes occur (the input of
    :func:`tfc.meta.mean_auc_contrasts`); ``coverage`` is ``dataset, rows, scored`` (rows all columns scored) for
    every dataset asked, so a partial run is visible, never silently a sample."""
    from tfc import data, scorers
    from tfc.results.dataset import head_scores
    from tfc.scorers.alignscore import HEADS

    if kind not in ABLATION_REFERENCE:
        raise ValueError(f"kind must be one of {tuple(ABLATION_REFERENCE)}; got {kind!r}")
    checkpoint = checkpoint or alignscore_model()
    groups, cov = {}, []
    for ds in list(datasets or _true_sets()):
        if kind == "head":
            got = head_scores("alignscore", ds, preset="improved", checkpoint=checkpoint)
            cols = [h for h in HEADS if h in got.columns]
        else:
            frames = [cached_scores(scorers.get("alignscore", preset="as-published", checkpoint=checkpoint, split=sp), ds).set_index("id")
                      for sp in SPLIT_MODES]
            got = pd.concat([frames[0]["label"]] + [f["score"].rename(sp) for f, sp in zip(frames, SPLIT_MODES)],
                            axis=1).reset_index()
            cols = list(SPLIT_MODES)
        n_rows = len(data.load(ds))
        got = got.dropna(subset=cols)
        cov.append({"dataset": ds, "rows": n_rows, "scored": int(len(got))})
        if len(got) == n_rows and got["label"].nunique() == 2:
            groups[ds] = (got["label"].to_numpy(), {c: got[c].to_numpy() for c in cols})
    return groups, pd.DataFrame(cov, columns=["dataset", "rows", "scored"])


def ablation_contrasts(checkpoint: str | None = None, kind: str = "head", datasets=None, n: int = 1000,
                       seed: int = 0, groups: dict | None = None) -> pd.DataFrame:
    """The ablation's alternatives against the published choice (:data:`ABLATION_REFERENCE`): paired bootstrap of
    the mean-AUC difference over the datasets, all on one set of resamples, Holm-adjusted p-values. Empty unless
    every dataset asked is scored on every row (:func:`ablation_groups`; pass its ``groups`` when already read)."""
    from tfc.meta import correct_pvalues, mean_auc_contrasts

    datasets = list(datasets or _true_sets())
    if groups is None:
        groups, _ = ablation_groups(checkpoint, kind, datasets)
    groups = {d: groups[d] for d in datasets if d in groups}
    if len(groups) < len(datasets):
        return pd.DataFrame()
    out = mean_auc_contrasts(groups, ABLATION_REFERENCE[kind], n=n, seed=seed)
    out["p_holm"] = correct_pvalues(out["p_value"].to_numpy())["p_adjusted"].to_numpy()
    return out.rename(columns={"metric": kind, "mean_auc_reference": f"mean_auc_{ABLATION_REFERENCE[kind]}"})
