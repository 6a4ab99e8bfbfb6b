"""Tables for the chapters: loops over datasets and metrics live here, not in notebooks.

Score frames are ``DataFrame(id, score[, label])`` whose ids start with the dataset name
(``frank/dev/000123``), one frame per metric spanning any number of datasets. Gold labels come from
the frame's ``label`` column when present, else from :func:`tfc.data.imported.labels` (the TRUE label
vectors). Every result is long form (``row`` = dataset or average, ``column`` = metric, ``value``),
ready for :func:`tfc.book.reference.paper_vs_ours`.

Averages use the papers' exact definitions (:data:`AVERAGES`); an average is emitted only when
every member dataset has a value (a partial mean would not be comparable with the paper).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from tfc.meta.binary import AS_PUBLISHED, roc_auc, roc_curve, tuned_accuracy
from tfc.meta.significance import DEFAULT_N, correct_pvalues, interval_comparison

from tfc.data import TRUE_ALL, TRUE_TEXT  # noqa: E402  (the data registry is the one list of TRUE sets)

TRUE9 = tuple(TRUE_TEXT)
TRUE11 = tuple(TRUE_ALL)
AVERAGES = {
    "avg_wo_vitc_fever": TRUE9,                                   # TRUE T3/T9/T11, WeCheck "Ave"
    "avg_all11": TRUE11,                                          # AlignScore T3 "AVG"
    "avg_zs_wo_paws_vitc_fever": tuple(d for d in TRUE9 if d != "paws"),  # AlignScore T3 "AVG-ZS"
}


def dataset_of(ids: pd.Series) -> pd.Series:
    return ids.astype(str).str.split("/").str[0]


def imported_frames(names, datasets=TRUE11, sample: int | None = None, seed: int = 0) -> dict:
    """``{name: DataFrame(id, score, label)}`` for imported scores (``imported:<source>/<metric>``).

    ``sample`` keeps a stratified sample of that many examples per dataset (the same ids for every
    metric; at least one of each class), for smoke runs.
    """
    from tfc.data import imported

    out = {}
    for name in names:
        src, met = imported.parse_name(name)
        parts = [imported.load(src, met, d) for d in datasets]
        df = pd.concat(parts, ignore_index=True)
        df.attrs["signature"] = f"imported:{src}/{met}"
        out[f"imported:{src}/{met}"] = df
    if sample is not None:
        keep = sample_ids(next(iter(out.values())), sample, seed)
        out = {k: v[v["id"].isin(keep)].reset_index(drop=True) for k, v in out.items()}
    return out


def sample_ids(frame: pd.DataFrame, n: int, seed: int = 0) -> set:
    """Ids of a label-stratified sample of ``n`` rows per dataset (>= 1 per class when possible)."""
    keep = []
    rng = np.random.default_rng(seed)
    for _, g in frame.groupby(dataset_of(frame["id"]), sort=False):
        if len(g) <= n:
            keep.extend(g["id"])
            continue
        pos = g.loc[g["label"] == 1, "id"].to_numpy()
        neg = g.loc[g["label"] == 0, "id"].to_numpy()
        k_pos = int(round(n * pos.size / len(g)))
        k_pos = min(max(k_pos, 1 if pos.size else 0), pos.size, n - (1 if neg.size else 0))
        keep.extend(rng.choice(pos, k_pos, replace=False))
        keep.extend(rng.choice(neg, min(n - k_pos, neg.size), replace=False))
    return set(keep)


def _with_labels(frame: pd.DataFrame) -> pd.DataFrame:
    if "label" in frame:
        return frame[["id", "score", "label"]]
    from tfc.data import imported

    ds = dataset_of(frame["id"]).unique()
    gold = pd.concat([imported.labels(d) for d in ds], ignore_index=True)
    return frame[["id", "score"]].merge(gold, on="id", how="left", validate="one_to_one")


def per_dataset(frames: dict, datasets=None):
    """Yield ``(metric, dataset, labels, scores, n_nan)``; NaN scores are dropped *and counted*."""
    for metric, f in frames.items():
        df = _with_labels(f)
        if df["label"].isna().any():
            raise ValueError(f"{metric}: {int(df['label'].isna().sum())} ids have no gold label")
        ds = dataset_of(df["id"])
        for d in (datasets or list(dict.fromkeys(ds))):
            g = df[ds == d]
            if g.empty:
                continue
            nan = g["score"].isna()
            g = g[~nan]
            yield metric, d, g["label"].to_numpy(int), g["score"].to_numpy(float), int(nan.sum())


def add_averages(long: pd.DataFrame, averages) -> pd.DataFrame:
    """Append each paper average (keys of ``AVERAGES``) per column, only where every member dataset has a
    finite value; count columns (``n``, ``n_scored``, ``n_nan_dropped``) are summed over the members."""
    counts = [c for c in ("n", "n_scored", "n_nan_dropped") if c in long]
    rows = []
    for col, g in long.groupby("column", sort=False):
        vals = dict(zip(g["row"], g["value"]))
        sig = g["signature"].iloc[0] if "signature" in g else None
        for avg in averages:
            members = AVERAGES[avg]
            if all(m in vals and np.isfinite(vals[m]) for m in members):
                inside = g["row"].isin(members)
                rows.append({"row": avg, "column": col, "value": float(np.mean([vals[m] for m in members])),
                             **{c: int(g.loc[inside, c].sum()) for c in counts}, "signature": sig})
    return pd.concat([long, pd.DataFrame(rows)], ignore_index=True) if rows else long


def auc_table(frames: dict, datasets=None, averages=tuple(AVERAGES), signatures: dict | None = None) -> pd.DataFrame:
    """ROC AUC x100 of every metric on every dataset, plus the papers' averages.

    Returns ``row, column, value, n, n_nan_dropped, signature`` (``column`` = the key in ``frames``).
    """
    rows = []
    for metric, d, y, s, n_nan in per_dataset(frames, datasets):
        sig = (signatures or {}).get(metric) or frames[metric].attrs.get("signature", metric)
        rows.append({"row": d, "column": metric, "value": 100 * roc_auc(y, s), "n": int(y.size),
                     "n_nan_dropped": n_nan, "signature": sig})
    return add_averages(pd.DataFrame(rows), averages)


def accuracy_table(dev_frames: dict, datasets=None, *, test_frames: dict | None = None,
                   averages=("avg_wo_vitc_fever",), convention: str = AS_PUBLISHED) -> pd.DataFrame:
    """Accuracy x100 at the geometric-mean threshold (TRUE T11 when ``test_frames`` is None: tuned and
    evaluated on dev; T12 otherwise: tuned on dev, applied to test, datasets present in both).

    ``convention`` defaults to TRUE's own (``"true"``: strict comparison, TRUE's threshold tuning;
    see :mod:`tfc.meta.binary`); ``"tfc"`` is the earlier ``score >= t`` convention.

    Returns ``row, column, value`` (accuracy) plus ``balanced_accuracy, threshold, n, signature``.
    """
    rows = []
    dev = {(m, d): (y, s) for m, d, y, s, _ in per_dataset(dev_frames, datasets)}
    test = None if test_frames is None else {(m, d): (y, s) for m, d, y, s, _ in per_dataset(test_frames, datasets)}
    for (m, d), (y, s) in dev.items():
        if test is None:
            r = tuned_accuracy(y, s, convention=convention)
        elif (m, d) in test:
            r = tuned_accuracy(y, s, *test[(m, d)], convention=convention)
        else:
            continue
        rows.append({"row": d, "column": m, "value": 100 * r.accuracy,
                     "balanced_accuracy": 100 * r.balanced_accuracy, "threshold": r.threshold,
                     "n": r.n_eval, "signature": dev_frames[m].attrs.get("signature", m)})
    return add_averages(pd.DataFrame(rows), averages)


def significance_table(frames: dict, datasets=None, n: int = DEFAULT_N, seed: int = 0,
                       method: str = "overlap", correction: str = "holm") -> pd.DataFrame:
    """TRUE's significance marks: per dataset, best vs second-best metric by paired bootstrap.

    All metrics must cover the same ids on a dataset (rows are aligned by id). Adds the
    multiple-comparison correction (statsmodels ``multipletests``, ``correction``) across datasets.
    """
    rows = []
    merged = None
    for m, f in frames.items():
        g = _with_labels(f).rename(columns={"score": m})
        merged = g if merged is None else merged.merge(g, on=["id", "label"], how="outer")
    ds = dataset_of(merged["id"])
    for d in (datasets or list(dict.fromkeys(ds))):
        g = merged[ds == d]
        if g.empty:
            continue
        if g[list(frames)].isna().any().any():
            raise ValueError(f"{d}: metrics cover different ids or have NaN scores; align them first")
        res = interval_comparison(g["label"].to_numpy(int), {m: g[m].to_numpy(float) for m in frames},
                                  n=n, seed=seed, method=method)
        rows.append({"row": d, **{k: v for k, v in res.items() if not k.startswith("ci_")},
                     "ci_diff_0.05": res["ci_diff_0.05"], "ci_diff_0.01": res["ci_diff_0.01"],
                     "n_examples": int(len(g))})
    out = pd.DataFrame(rows)
    if not out.empty:
        corr = correct_pvalues(out["p_value"].to_numpy(), method=correction)
        out["p_adjusted"] = corr["p_adjusted"].to_numpy()
        out["reject_adjusted"] = corr["reject"].to_numpy()
    return out


def roc_curves(frames: dict, datasets=None, grid: int | None = None) -> pd.DataFrame:
    """ROC curves (consistent = positive) of every metric on every dataset, long form for seaborn.

    ``grid`` resamples each curve at that many evenly spaced FPR values (TPR linearly interpolated,
    the upper point at a vertical step), which keeps figures of the 63k-example VitaminC light.
    """
    parts = []
    for m, d, y, s, _ in per_dataset(frames, datasets):
        c = roc_curve(y, s)
        if grid is not None:
            f = np.linspace(0, 1, int(grid))
            last = c.groupby("fpr", sort=True)["tpr"].max()  # upper end of vertical steps
            c = pd.DataFrame({"fpr": f, "tpr": np.interp(f, last.index.to_numpy(), last.to_numpy()),
                              "threshold": np.nan})
        c["metric"], c["dataset"] = m, d
        parts.append(c)
    return pd.concat(parts, ignore_index=True)


ROW_ORDER = TRUE11 + tuple(AVERAGES)


def order_rows(df: pd.DataFrame, col: str = "row") -> pd.DataFrame:
    """Sort a long frame in the papers' dataset order, averages last."""
    rank = {r: i for i, r in enumerate(ROW_ORDER)}
    return df.sort_values(col, key=lambda s: s.map(lambda r: rank.get(r, len(rank)))).reset_index(drop=True)


def wide(joined: pd.DataFrame) -> pd.DataFrame:
    """A :func:`tfc.book.reference.paper_vs_ours` frame pivoted for display: one row per dataset, a
    (paper, ours, delta) group per published column, and the scorer signature(s)."""
    j = order_rows(joined)
    out = j.pivot_table(index="row", columns="column", values=["paper", "ours", "delta"], sort=False, dropna=False)
    out = out.swaplevel(0, 1, axis=1)
    cols = list(dict.fromkeys(j["column"]))
    out = out[[(c, v) for c in cols for v in ("paper", "ours", "delta") if (c, v) in out.columns]]
    out = out.reindex([r for r in ROW_ORDER if r in set(j["row"])] + [r for r in j["row"].unique() if r not in ROW_ORDER])
    if "signature" in j:
        for c in cols:
            out[(c, "signature")] = j[j["column"] == c].set_index("row")["signature"].reindex(out.index)
        out = out[[(c, v) for c in cols for v in ("paper", "ours", "delta", "signature") if (c, v) in out.columns]]
    out.index.name = None
    return out


def max_abs_delta(joined: pd.DataFrame, rows=None) -> tuple[float, str]:
    """Largest |delta| of a paper-vs-ours frame (optionally over ``rows`` only) and its row."""
    j = joined if rows is None else joined[joined["row"].isin(rows)]
    j = j.dropna(subset=["delta"])
    if j.empty:
        return float("nan"), ""
    i = j["delta"].abs().idxmax()
    return float(abs(j.loc[i, "delta"])), str(j.loc[i, "row"])


def disagreement_table(frames: dict, members, ensemble: pd.DataFrame, datasets=None,
                       convention: str = AS_PUBLISHED) -> pd.DataFrame:
    """TRUE's ensemble analysis pooled over datasets; thresholds tuned per dataset (on dev itself), in
    TRUE's threshold convention by default.

    Returns ``n_members_right, n, pct`` over the examples where the ensemble is right and at least
    one member is wrong.
    """
    from tfc.meta.binary import tune_threshold
    from tfc.meta.ensemble import disagreement

    members = list(members)
    merged = _with_labels(ensemble).rename(columns={"score": "_ensemble"})
    for m in members:
        merged = merged.merge(frames[m][["id", "score"]].rename(columns={"score": m}), on="id", how="left")
    if merged[members].isna().any().any():
        raise ValueError("disagreement_table: members lack scores for some ensemble ids")
    ds = dataset_of(merged["id"])
    total = None
    for d in (datasets or list(dict.fromkeys(ds))):
        g = merged[ds == d]
        y = g["label"].to_numpy(int)
        sc = {m: g[m].to_numpy(float) for m in members}
        th = {m: tune_threshold(y, v, convention) for m, v in sc.items()}
        e = g["_ensemble"].to_numpy(float)
        t = disagreement(y, sc, th, e, tune_threshold(y, e, convention), convention)
        total = t if total is None else total.assign(n=total["n"] + t["n"])
    total["pct"] = 100 * total["n"] / total["n"].sum() if total["n"].sum() else np.nan
    return total


# TRUE T12 datasets -> the data layer's test-split name (None: no test split in the registry)
TRUE_TEST_SPLITS = {"frank": "summac_frank_test", "begin": "begin_test", "dialfact": None, "paws": None,
                    "vitaminc": "vitaminc_test"}


def test_split_status() -> pd.DataFrame:
    """For each TRUE T12 dataset: the offline test split (data-layer name and status), whether it is
    training-side material, and whether imported per-example scores exist for it (none do: the peer
    files cover TRUE's dev sets only)."""
    import tfc.data

    rows = []
    for d, name in TRUE_TEST_SPLITS.items():
        status = "missing"
        if name is not None:
            try:
                status = tfc.data.status(name)
            except Exception as e:  # noqa: BLE001 - reported in the table
                status = f"error: {type(e).__name__}"
        rows.append({"dataset": d, "test_split": name or "-", "status": status,
                     "training_side": name in ("begin_test", "vitaminc_test"),
                     "imported_test_scores": False})
    return pd.DataFrame(rows)


def split_half_accuracy(frames: dict, datasets=None, seed: int = 0) -> pd.DataFrame:
    """How optimistic is tuning the threshold on the evaluation data itself (TRUE T11)?

    Each dataset is split in two label-stratified halves A and B (``seed``). Accuracy on B with the
    threshold tuned on B itself (``self_tuned``) is compared with accuracy on B at the threshold tuned
    on A (``dev_tuned``: the T12 / SummaC protocol). Returns ``row, column, self_tuned, dev_tuned,
    gap`` (accuracy x100; gap = self - dev) and the balanced accuracies.
    """
    rows = []
    for m, d, y, s, _ in per_dataset(frames, datasets):
        rng = np.random.default_rng(seed)
        a = np.zeros(y.size, bool)
        for cls in (0, 1):
            idx = np.flatnonzero(y == cls)
            a[rng.choice(idx, idx.size // 2, replace=False)] = True
        b = ~a
        if min(y[a].sum(), (1 - y[a]).sum(), y[b].sum(), (1 - y[b]).sum()) == 0:
            continue  # a half without both classes (tiny samples): no threshold to tune
        self_t = tuned_accuracy(y[b], s[b])
        dev_t = tuned_accuracy(y[a], s[a], y[b], s[b])
        rows.append({"row": d, "column": m, "self_tuned": 100 * self_t.accuracy, "dev_tuned": 100 * dev_t.accuracy,
                     "gap": 100 * (self_t.accuracy - dev_t.accuracy),
                     "self_tuned_balanced": 100 * self_t.balanced_accuracy,
                     "dev_tuned_balanced": 100 * dev_t.balanced_accuracy, "n_half": int(b.sum())})
    return pd.DataFrame(rows)


def pairwise_diff_table(frames: dict, a: str, b: str, datasets=None, n: int = DEFAULT_N, seed: int = 0,
                        alpha: float = 0.05) -> pd.DataFrame:
    """Paired-bootstrap AUC difference ``a - b`` on every dataset (x100): ``row, diff, ci_low,
    ci_high, p_value, n_examples``, plus the Holm-adjusted p-value over datasets."""
    from tfc.meta.significance import bootstrap_auc_diff

    fa = _with_labels(frames[a])
    fb = frames[b][["id", "score"]].rename(columns={"score": "score_b"})
    j = fa.merge(fb, on="id", how="inner", validate="one_to_one")
    if len(j) != len(fa) or len(j) != len(frames[b]):
        raise ValueError(f"{a} and {b} cover different ids ({len(fa)} vs {len(frames[b])}, {len(j)} shared)")
    ds = dataset_of(j["id"])
    rows = []
    for d in (datasets or list(dict.fromkeys(ds))):
        g = j[ds == d]
        if g.empty:
            continue
        r = bootstrap_auc_diff(g["label"].to_numpy(int), g["score"].to_numpy(float), g["score_b"].to_numpy(float),
                               n=n, seed=seed, alpha=alpha)
        rows.append({"row": d, "diff": 100 * r.diff, "ci_low": 100 * r.ci[0], "ci_high": 100 * r.ci[1],
                     "p_value": r.p_value, "n_examples": int(len(g))})
    out = pd.DataFrame(rows)
    if not out.empty:
        out["p_holm"] = correct_pvalues(out["p_value"].to_numpy(), method="holm")["p_adjusted"].to_numpy()
    return out


def text_features(datasets=TRUE9, sample: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Per-example text features for the binning analyses, from the data layer (datasets with text):
    ``id, dataset, grounding_words, generated_words, novel_unigram_pct``."""
    import tfc.data

    from tfc.meta.bins import count_words, novel_unigram_pct

    parts = []
    for d in datasets:
        df = tfc.data.load(d, sample=sample, seed=seed)
        parts.append(pd.DataFrame({"id": df["id"], "dataset": d,
                                   "grounding_words": count_words(df["grounding"]),
                                   "generated_words": count_words(df["generated"]),
                                   "novel_unigram_pct": novel_unigram_pct(df["grounding"], df["generated"])}))
    return pd.concat(parts, ignore_index=True)


def binned_auc_table(frames: dict, features: pd.DataFrame, by: str, edges, n_per_bin: int | None = None,
                     seed: int = 0) -> pd.DataFrame:
    """AUC of every metric per bin of ``features[by]``, all datasets pooled (TRUE Fig. 1, WeCheck Fig. 3).

    Examples are those present in ``features`` and scored by every metric (inner join on id; the
    number left out is in ``attrs['n_unmatched']``). Rows whose ``by`` value is NaN (e.g. a generated
    text without words for abstractiveness) are excluded and counted in ``attrs['n_nan']``.
    """
    from tfc.meta.bins import binned_auc

    j = features[["id", by]]
    for m, f in frames.items():
        j = j.merge(_with_labels(f).rename(columns={"score": m}), on="id", how="inner",
                    suffixes=("", f"_{m}"))
    n_unmatched = len(features) - len(j)
    nan = j[by].isna() | j[list(frames)].isna().any(axis=1)
    j = j[~nan]
    out = binned_auc(j["label"].to_numpy(int), {m: j[m].to_numpy(float) for m in frames}, j[by].to_numpy(float),
                     edges, n_per_bin=n_per_bin, seed=seed)
    out.attrs["n_unmatched"], out.attrs["n_nan"] = int(n_unmatched), int(nan.sum())
    return out
