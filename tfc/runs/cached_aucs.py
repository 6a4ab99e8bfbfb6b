"""AUC tables of named scorers, read from the score cache (nothing is recomputed).

:func:`named_scorers` turns ``{label: (registry name, overrides)}`` specs (the readings of
:mod:`tfc.runs.inhouse_models`) into scorers, naming in :data:`MISSING` a model whose identity cannot be
established; :func:`full_set_aucs` gives each model's ROC AUC with a bootstrap interval on every cached row of
a set, and :func:`significance_vs_lexical` the paired bootstrap of the mean-AUC difference of each model against
each baseline. Shared by the AlignScore and WeCheck chapters and by the release facts
(:mod:`tfc.runs.release_facts`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from tfc.runs.inhouse_models import _true_sets

MISSING: dict[str, str] = {}   # label -> why: the models :func:`named_scorers` skipped


def cached_scores(scorer, dataset, split=None, sample=None, seed=0, cache_only=True) -> pd.DataFrame:
    """One dataset's rows with ``scorer``'s scores (:func:`tfc.results.dataset.score_dataset`; NaN where the cache
    holds none when ``cache_only``)."""
    from tfc.results.dataset import score_dataset

    return score_dataset(scorer, dataset, split=split, sample=sample, seed=seed, cache_only=cache_only)


def named_scorers(spec: dict, skip_missing: bool = True) -> dict:
    """``{label: (registry name, overrides)}`` -> ``{label: scorer}``; a model whose identity cannot be
    established (no weights, no release, no record) is skipped and named in :data:`MISSING`."""
    from tfc import scorers

    out = {}
    for label, (name, kw) in spec.items():
        sc = scorers.get(name, preset="as-published", **kw)
        try:
            sc.signature
        except FileNotFoundError as exc:
            if not skip_missing:
                raise
            MISSING[label] = str(exc)
            continue
        out[label] = sc
    return out


def full_set_aucs(models: dict, datasets=None, n: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per model and dataset: ROC AUC x 100 with a 95 % percentile bootstrap CI, on every cached row.

    ``coverage`` is the share of the dataset's rows the cache holds; a table built from a partial cache says
    so in that column (it is never silently a sample)."""
    from tfc.meta import bootstrap_aucs, roc_auc

    rows = []
    for ds in list(datasets or _true_sets()):
        for label, sc in models.items():
            got = cached_scores(sc, ds, None, None, seed, True)   # every row of the set; NaN where not cached
            n_rows = max(len(got), 1)
            got = got.dropna(subset=["score"])
            if len(got) == 0 or got["label"].nunique() < 2:
                rows.append({"model": label, "dataset": ds, "auc": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                             "rows": int(len(got)), "coverage": len(got) / n_rows, "signature": sc.signature})
                continue
            y, s = got["label"].to_numpy(), got["score"].to_numpy()
            b = bootstrap_aucs(y, s, n=n, seed=seed)[:, 0]
            b = b[np.isfinite(b)]
            rows.append({"model": label, "dataset": ds, "auc": 100 * roc_auc(y, s),
                         "ci_low": 100 * float(np.percentile(b, 2.5)), "ci_high": 100 * float(np.percentile(b, 97.5)),
                         "rows": int(len(got)), "coverage": len(got) / n_rows, "signature": sc.signature})
    return pd.DataFrame(rows)


def resamples_for(n_tests: int, n: int, alpha: float = 0.05) -> int:
    """At least ``n`` bootstrap resamples, and enough that the smallest p-value a bootstrap can give,
    1 / (resamples + 1), stays below ``alpha`` / 2 once Holm-adjusted over ``n_tests`` comparisons. Without this
    floor a table of 54 comparisons on 1,000 resamples could never call a difference significant (its smallest
    adjusted p-value is 54 / 1,001 = 0.054), however wide the gap."""
    return max(int(n), int(np.ceil(2 * n_tests / alpha)))


def significance_vs_lexical(models: dict, baselines=("f1", "rougeL", "bleu4"), datasets=None, n: int = 1000,
                            seed: int = 0, sample=None, alpha: float = 0.05) -> pd.DataFrame:
    """Paired bootstrap (within each dataset) of mean-AUC differences over the TRUE sets, each in-house
    model vs each lexical baseline, all metrics on one set of resamples
    (:func:`tfc.meta.bootstrap_mean_aucs`); p-values Holm-adjusted over the table, on at least ``n`` resamples
    (more where the table's size needs them: :func:`resamples_for`; ``n_resamples`` says how many). Only examples every
    metric scored are used (``n_examples``); a model with no scores on some dataset is left out; a dataset
    whose usable rows hold one class only is left out of the mean and listed in ``datasets_skipped``."""
    from tfc import scorers
    from tfc.meta import bootstrap_mean_aucs, correct_pvalues
    from tfc.meta.significance import _shifted_null

    datasets = list(datasets or _true_sets())
    # baselines: registry names, or {label: scorer} (e.g. BERTScore-P with its MiniLM configuration)
    base = dict(baselines) if isinstance(baselines, dict) else {b: scorers.get(b, preset="as-published") for b in baselines}
    have = {}
    for ds in datasets:
        for k, sc in {**models, **base}.items():
            have[(k, ds)] = cached_scores(sc, ds, None, sample, seed, True).set_index("id")
    usable = [m for m in models if all(have[(m, ds)]["score"].notna().any() for ds in datasets)]
    if not usable:
        return pd.DataFrame()
    metrics = usable + list(base)
    groups, n_ex, skipped = {}, 0, []
    for ds in datasets:
        j = pd.concat({k: have[(k, ds)]["score"] for k in metrics}, axis=1).dropna()
        lab = have[(metrics[0], ds)]["label"].loc[j.index].to_numpy()
        if len(np.unique(lab)) < 2:
            # AUC is undefined on one class (e.g. a small smoke sample that barely overlaps the cache):
            # the set is left out of the mean and named in the result, never silently.
            skipped.append(ds)
            continue
        groups[ds] = (lab, {k: j[k].to_numpy() for k in metrics})
        n_ex += len(j)
    datasets = [ds for ds in datasets if ds not in skipped]
    if not datasets:
        return pd.DataFrame()
    n = resamples_for(len(usable) * len(base), n, alpha)
    boot, names, per = bootstrap_mean_aucs(groups, n=n, seed=seed)
    mean = {k: float(np.mean([per[ds][k] for ds in datasets])) for k in names}
    rows = []
    for m in usable:
        for b in base:
            d_star = boot[:, names.index(m)] - boot[:, names.index(b)]
            d_star = d_star[np.isfinite(d_star)]
            d = mean[m] - mean[b]
            ci, p = _shifted_null(d, d_star, alpha)
            rows.append({"model": m, "baseline": b, "mean_auc_model": 100 * mean[m],
                         "mean_auc_baseline": 100 * mean[b], "diff": 100 * d, "ci_low": 100 * ci[0],
                         "ci_high": 100 * ci[1], "p_value": p, "n_resamples": int(n), "n_valid": int(d_star.size),
                         "n_examples": n_ex, "n_datasets": len(datasets), "datasets_skipped": ",".join(skipped),
                         "signature": models[m].signature, "baseline_signature": base[b].signature})
    df = pd.DataFrame(rows)
    adj = correct_pvalues(df["p_value"].to_numpy(), method="holm")
    df["p_holm"] = adj["p_adjusted"].to_numpy()
    sig = df["p_holm"] < alpha
    df["verdict"] = np.where(sig & (df["diff"] > 0), "better", np.where(sig & (df["diff"] < 0), "worse",
                                                                        "no significant difference"))
    return df
