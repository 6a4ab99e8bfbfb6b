"""What the score cache holds, so the TRUE tables pick up every scorer with committed scores.

:func:`committed_signatures` lists every signature in the score cache with the TRUE datasets it covers
(rows cached vs rows in the dataset). :func:`committed_frames` turns the signatures that cover every
requested dataset completely into score frames (``id, score, label``) for :mod:`tfc.results.tables`, so
``tables.auc_table(committed_frames(TRUE9), TRUE9)`` is a Table-3-style AUC table of all of them:
alignscore, wecheck, qags and q2 appear there as soon as their caches are committed, with no change to
the chapters. :data:`PUBLISHED` says which published column each scorer family is compared with and
in which role (the same computation, or a smaller stand-in for the paper's model).
"""
from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
import pandas as pd

from tfc import config
from tfc.meta.ties import tie_range
import tfc.results.dataset as RD
import tfc.scorers as S
from tfc.book import ledger
from tfc.book.reference import compare_summary, paper_vs_ours

# scorer name -> (table, published column, ledger role, note)
PUBLISHED: dict[str, tuple[str, str, str, str]] = {
    "f1": ("TRUE-T3", "f1", "reproduction", "token F1 recomputed"),
    "rougeL-squad": ("TRUE-T9", "rouge_l", "reproduction", "ROUGE-L recomputed (SQuAD-normalised texts)"),
    "bleu4-squad": ("TRUE-T9", "bleu4", "reproduction", "BLEU-4 recomputed (SQuAD-normalised texts)"),
    "bertscore": ("TRUE-T3", "bertscore", "stand-in", "BERTScore with a small encoder beside DeBERTa-xl-MNLI"),
    "nli": ("TRUE-T3", "anli_t5_11b", "stand-in", "small NLI model beside ANLI T5-11B"),
    "summac-zs": ("TRUE-T3", "summac_zs", "stand-in", "SummaC-ZS on a small NLI model"),
    "summac-conv": ("TRUE-T9", "summac_conv", "stand-in", "SummaC-Conv on a small NLI model"),
    "alignscore": ("AS-T3", "alignscore_base", "stand-in", "small alignment model beside AlignScore-base"),
    "wecheck": ("WC-T1", "wecheck", "stand-in", "small WeCheck-style model beside WeCheck"),
    "q2": ("TRUE-T3", "q2_metric", "stand-in", "small QG/QA models beside TRUE's T5-11B Q²"),
}


@lru_cache(maxsize=None)
def _dataset_ids(dataset: str) -> pd.DataFrame:
    from tfc import data

    return data.load(dataset)[["id", "label"]].reset_index(drop=True)


def committed_signatures(datasets=None, root=None) -> pd.DataFrame:
    """One row per (signature, dataset) in the score cache for ``datasets`` (default: the nine TRUE sets
    with text): ``signature, scorer, dataset, rows, dataset_rows, complete``. Partial caches (sampled
    runs, e.g. ablations) are listed with ``complete=False``."""
    from tfc.data import TRUE_TEXT

    datasets = list(datasets or TRUE_TEXT)
    root = config.cache_dir() if root is None else root
    rows = []
    for sig_dir in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        for d in datasets:
            sides = sorted((sig_dir / d).glob("*.json"))
            if not sides:
                continue
            n, scorer = 0, None
            for s in sides:
                try:
                    meta = json.loads(s.read_text())
                except ValueError:
                    continue          # a corrupt sidecar is reported by `tfc cache ls`; not counted here
                n += int(meta.get("row_count") or 0)
                scorer = scorer or meta.get("scorer")
            total = len(_dataset_ids(d))
            rows.append({"signature": sig_dir.name, "scorer": scorer or sig_dir.name.split(".")[0], "dataset": d,
                         "rows": n, "dataset_rows": total, "complete": n >= total})
    return pd.DataFrame(rows, columns=["signature", "scorer", "dataset", "rows", "dataset_rows", "complete"])


def complete_signatures(datasets=None, root=None) -> list[str]:
    """Signatures whose cache covers every row of every dataset in ``datasets``."""
    from tfc.data import TRUE_TEXT

    datasets = list(datasets or TRUE_TEXT)
    inv = committed_signatures(datasets, root)
    if inv.empty:
        return []
    ok = inv[inv["complete"]].groupby("signature")["dataset"].nunique()
    return sorted(ok[ok == len(datasets)].index)


def committed_frames(datasets=None, signatures=None, sample: int | None = None, seed: int = 0) -> dict:
    """``{signature: DataFrame(id, score, label)}`` from the cache (nothing is computed).

    ``signatures`` defaults to :func:`complete_signatures`. ``sample`` keeps the same label-stratified
    ids per dataset for every signature (:func:`tfc.results.tables.sample_ids`). Scores are joined to the
    dataset's ids; a cached id that is not in the dataset raises ``ValueError``.
    """
    from tfc.cache import load_scores
    from tfc.data import TRUE_TEXT
    from tfc.results.tables import sample_ids

    datasets = list(datasets or TRUE_TEXT)
    sigs = list(signatures) if signatures is not None else complete_signatures(datasets)
    out = {}
    for sig in sigs:
        parts = []
        for d in datasets:
            ids = _dataset_ids(d)
            sc = load_scores(sig, d)[["id", "score"]]
            extra = set(sc["id"]) - set(ids["id"])
            if extra:
                raise ValueError(f"{sig} on {d}: {len(extra)} cached ids are not in the dataset (e.g. {sorted(extra)[0]})")
            parts.append(ids.merge(sc, on="id", how="left")[["id", "score", "label"]])
        f = pd.concat(parts, ignore_index=True)
        f.attrs["signature"] = sig
        out[sig] = f
    if sample is not None and out:
        keep = sample_ids(next(iter(out.values())), sample, seed)
        out = {k: v[v["id"].isin(keep)].reset_index(drop=True) for k, v in out.items()}
        for k in out:
            out[k].attrs["signature"] = k
    return out


def scorer_of(signature: str) -> str:
    """Registry name of a signature (its first dot-separated part; ``imported`` for imported sources)."""
    return "imported" if signature.startswith("imported:") else signature.split(".")[0]


def compare(long: pd.DataFrame, table_map: dict | None = None) -> list[tuple[pd.DataFrame, str, str]]:
    """Paper-vs-ours frames for a table whose columns are signatures: one per column with a published
    counterpart in :data:`PUBLISHED`, as ``(frame, role, note)`` (for ``tfc.book.ledger.record``).

    ``table_map`` redirects published tables and keeps only those (``{"TRUE-T3": "TRUE-T11"}`` compares
    dev accuracies with Table 11, whose columns are Table 3's)."""
    out = []
    for col, g in long.groupby("column", sort=False):
        spec = PUBLISHED.get(scorer_of(col))
        if spec is None:
            continue
        table, pub, role, note = spec
        if table_map is not None:
            if table not in table_map:
                continue
            table = table_map[table]
        j = paper_vs_ours(g.assign(signature=col), table, column=pub).dropna(subset=["paper"])
        if len(j):
            out.append((j, role, note))
    return out


def record_comparisons(ours: pd.DataFrame, chapter: str, mode: str, table_map: dict | None = None,
                       published_table: str | None = None) -> list[dict]:
    """Each :func:`compare` frame of ``ours``, recorded in the reproduction ledger unless it is a
    reproduction whose signature is not the as-published preset (one preset per cell); one summary row
    per frame: ``signature, published_as`` (``<table>:<column>``; ``published_table`` names the table
    when given), ``role, in_ledger`` and :func:`tfc.book.reference.compare_summary`."""
    rows = []
    for j, role, note in compare(ours, table_map=table_map):
        sig = j["signature"].iloc[0]
        in_ledger = not (role == "reproduction" and not ledger.is_as_published(sig))   # one preset per cell
        if in_ledger:
            ledger.record(j, chapter=chapter, mode=mode, role=role, note=note)
        rows.append({"signature": sig, "published_as": f"{published_table or j['table'].iloc[0]}:{j['column'].iloc[0]}",
                     "role": role, "in_ledger": in_ledger, **compare_summary(j)})
    return rows


def model_sizes(auc_long: pd.DataFrame) -> pd.DataFrame:
    """TRUE Table 4 beside what exists here: per family, the published larger/smaller variants and our
    in-house sizes with their nine-dataset mean AUC (``avg_wo_vitc_fever`` rows of ``auc_long``, whose
    columns are signatures). Sizes we could not train or load offline appear with ``ours`` NaN and a
    reason, computed from the committed model records (``results/models``)."""
    from tfc.book import reference

    pub = reference.load("TRUE-T4")
    pub = pub[pub["row"] == "avg_wo_vitc_fever"].set_index("column")["value"]
    avg = auc_long[auc_long["row"] == "avg_wo_vitc_fever"]
    records = sorted(p.name for p in config.model_records_dir().iterdir() if p.is_dir()) \
        if config.model_records_dir().is_dir() else []

    def ours(scorer: str, tag: str) -> tuple[float, str]:
        hit = avg[avg["column"].map(scorer_of).eq(scorer) & avg["column"].str.contains(tag, regex=False)]
        if hit.empty:
            return np.nan, ""
        best = hit.loc[hit["value"].idxmax()]
        return float(best["value"]), best["column"]

    nli_small, nli_sig = ours("nli", "nli-minilm")
    bs_small, bs_sig = ours("bertscore", "minilm")
    mpnet = any("mpnet" in r for r in records)
    rows = [
        ("NLI", "ANLI T5-11B", 11e9, pub.get("anli_t5_11b"), np.nan, "", "not available offline"),
        ("NLI", "ANLI T5-Large", 770e6, pub.get("anli_t5_large"), np.nan, "", "not available offline"),
        ("NLI", "tfc/nli-minilm (MiniLM-L6)", 22.7e6, np.nan, nli_small, nli_sig,
         "in-house, trained on CPU" if np.isfinite(nli_small) else "no committed scores"),
        ("NLI", "tfc/nli-mpnet (MPNet-base)", 110e6, np.nan, np.nan, "",
         "record present but no committed scores" if mpnet else "not trained (CPU budget)"),
        ("BERTScore", "DeBERTa-xl-MNLI (P)", 750e6, pub.get("bertscore"), np.nan, "", "not available offline"),
        ("BERTScore", "RoBERTa-large (P)", 355e6, pub.get("bertscore_p_roberta_large"), np.nan, "",
         "not available offline"),
        ("BERTScore", "MiniLM-L6 (P)", 22.7e6, np.nan, bs_small, bs_sig,
         "offline encoder" if np.isfinite(bs_small) else "no committed scores"),
        ("BLEURT", "BLEURT-20", np.nan, pub.get("bleurt"), np.nan, "", "not available offline"),
        ("BLEURT", "BLEURT-20-D6", np.nan, pub.get("bleurt_20_d6"), np.nan, "", "not available offline"),
    ]
    return pd.DataFrame(rows, columns=["family", "model", "params", "paper", "ours", "signature", "status"])


def model_size_comparison(sizes: pd.DataFrame) -> pd.DataFrame:
    """Our small models beside TRUE Table 4's *smaller* variants (ledger role: stand-in):
    ``row, column, value, signature`` for :func:`tfc.book.reference.paper_vs_ours` (table ``TRUE-T4``)."""
    pairs = {"NLI": "anli_t5_large", "BERTScore": "bertscore_p_roberta_large"}
    ok = sizes[sizes["ours"].notna() & sizes["family"].isin(pairs)]
    return pd.DataFrame({"row": "avg_wo_vitc_fever", "column": ok["family"].map(pairs).to_numpy(),
                         "value": ok["ours"].to_numpy(), "signature": ok["signature"].to_numpy()})


def with_true_average(auc: pd.DataFrame) -> pd.DataFrame:
    """Append TRUE's 9-dataset average row (``avg_wo_vitc_fever``) per column when all nine are present."""
    from tfc.results.tables import add_averages

    return add_averages(auc, ("avg_wo_vitc_fever",))


def true_comparison(auc: pd.DataFrame, table_columns: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """Our AUCs (0..1) beside TRUE's: ``table_columns`` maps our column -> (table id, published column).

    Returns ``dataset, metric, paper, ours, delta, signature`` (AUC x 100, Δ = ours - paper); columns
    without a published counterpart get NaN paper/delta.
    """
    auc = with_true_average(auc)
    out = []
    for col, g in auc.groupby("column", sort=False):
        if col in table_columns:
            table, pub = table_columns[col]
            j = paper_vs_ours(g, table, scale=100, column=pub)
            j["metric"] = col
            j["published_as"] = f"{table}:{pub}"
        else:
            j = g.rename(columns={"value": "ours"}).assign(paper=np.nan, delta=np.nan, metric=col,
                                                            published_as="")
            j["ours"] = (j["ours"] * 100).round(1)
        out.append(j.rename(columns={"row": "dataset"})[
            ["dataset", "metric", "published_as", "paper", "ours", "delta", "signature"]])
    return pd.concat(out, ignore_index=True)


def bleu_zero_treatments(over: pd.DataFrame, var_wide: pd.DataFrame, alt_cols: list, sample=None,
                         seed: int = 0, metric: str = "bleu4-squad") -> tuple[pd.DataFrame, list]:
    """For each ``metric`` cell in ``over`` (cells further than a point from the paper): the share of pairs
    without a shared 4-gram (the pairs whose score depends on the zero treatment; on the texts as ``metric``
    sees them, normalised for ``bleu4-squad``) and the AUC under each configuration in ``alt_cols`` (columns
    of ``var_wide``, labelled by what follows their ``"<metric> ("`` prefix). Also the datasets whose published
    value lies within the range spanned by ours and those AUCs."""
    from tfc import data
    from tfc.scorers.lexical import bleu_parts

    normalize = S.get(metric, preset="as-published").config.normalize
    rows, between = [], []
    for r in over[over["metric"] == metric].itertuples():
        d = data.load(r.dataset, sample=sample, seed=seed)
        # the counts only: sacrebleu's "none" skips NLTK's scoring, which these precisions do not need
        no4 = float((bleu_parts(d["grounding"], d["generated"], smooth_method="none",
                                normalize=normalize)["p4"] == 0).mean())
        alts = {c.split("(", 1)[1].rstrip(")"): float(var_wide.loc[r.dataset, c]) for c in alt_cols}
        rows.append({"dataset": r.dataset, "paper": r.paper, "ours": r.ours,
                     "% pairs without a shared 4-gram": round(100 * no4, 1), **alts})
        span = [r.ours, *alts.values()]
        if min(span) <= r.paper <= max(span):
            between.append(r.dataset)
    return pd.DataFrame(rows), between


def tie_causes(over: pd.DataFrame, var_wide: pd.DataFrame, alt_cols: dict, sample=None, seed: int = 0) -> pd.DataFrame:
    """For each ``over`` row (``metric, dataset, paper, ours, delta``: a lexical cell off the paper), what ties
    can explain: the share of rows at the lowest score and of tied pairs, the AUC with every tie lost and
    with every tie won (:func:`tfc.meta.ties.tie_range`), whether the paper lies inside that range, and the
    AUC of the other configurations (``alt_cols[metric]``: columns of ``var_wide``)."""
    rows = []
    for r in over.itertuples():
        got = RD.score_dataset(S.get(r.metric, preset="as-published"), r.dataset, sample=sample, seed=seed)
        tr = tie_range(got["label"], got["score"])
        lo, hi = 100 * tr["auc_low"], 100 * tr["auc_high"]
        alts = "; ".join(f"{c.split('(')[1].rstrip(')')}: {var_wide.loc[r.dataset, c]:.1f}" for c in alt_cols[r.metric]
                         if r.dataset in var_wide.index)
        rows.append({"metric": r.metric, "dataset": r.dataset, "paper": r.paper, "ours": round(r.ours, 1),
                     "delta": round(r.delta, 1), "% at lowest score": round(100 * tr["at_min"], 1),
                     "% pairs tied": round(100 * tr["tied_pairs"], 1), "AUC, ties all lost": round(lo, 1),
                     "AUC, ties all won": round(hi, 1), "paper inside tie range": bool(lo <= r.paper <= hi),
                     "other configurations (AUC)": alts or "-"})
    return pd.DataFrame(rows)


def accuracy_flat_optimum(frame: pd.DataFrame, datasets, column: str, table: str = "TRUE-T11",
                          tol: float = 0.01, printed: float = 0.1) -> pd.DataFrame:
    """Why an accuracy cell can miss the paper while the AUC agrees: per dataset, our dev accuracy at TRUE's
    tuned threshold beside the paper's (``table``, ``column``), and the range of accuracies over every
    threshold whose g-mean is within ``tol`` of the optimum (:func:`tfc.meta.gmean_accuracy_range`). Where
    that range is wide, a small change in the scores moves the tuned threshold along a flat optimum, and
    the paper's value lying inside the range is the evidence for that cause. The last two columns say how far
    from the optimum the paper's accuracy is reached at all (:func:`tfc.meta.gmean_gap_at_accuracy`: the
    smallest g-mean gap, and how many thresholds are better; ``inf`` and -1 where no threshold reaches it). ``tol`` is fixed before
    looking (0.01 g-mean), not fitted to the cells. ``printed``: the paper's printed precision (one decimal), so
    its value stands for an interval of half that either side."""
    from tfc.book import reference
    from tfc.meta import gmean_accuracy_range, gmean_gap_at_accuracy, tuned_accuracy
    from tfc.results.tables import per_dataset

    tol_table = ledger.tolerance(table)
    rows = []
    for _, d, y, s, _ in per_dataset({column: frame}, datasets):
        try:
            paper = reference.value(table, d, column)
        except KeyError:
            continue
        ours = 100 * tuned_accuracy(y, s, convention="true").accuracy
        r = gmean_accuracy_range(y, s, tol)
        lo, hi = 100 * r["acc_min"], 100 * r["acc_max"]
        at = gmean_gap_at_accuracy(y, s, max(0.0, (paper - printed / 2) / 100), min(1.0, (paper + printed / 2) / 100))
        rows.append({"set": d, "n": int(len(y)), "share consistent": round(float(np.mean(y)), 2),
                     "paper": paper, "ours": round(ours, 1), "Δ": round(ours - paper, 1),
                     "outside tolerance": bool(abs(ours - paper) > tol_table + ledger.TOLERANCE_EPS),
                     "thresholds near the optimum": r["n_thresholds"],
                     "accuracy range": f"{lo:.1f} to {hi:.1f}",
                     "paper in range": bool(lo - printed / 2 <= paper <= hi + printed / 2),
                     "one example (points)": round(100 / len(y), 2),
                     "g-mean gap at the paper's accuracy": round(at["gap"], 4),
                     "thresholds better than that": at["n_better"]})
    return pd.DataFrame(rows)


def flat_optimum_summary(flat: pd.DataFrame) -> dict:
    """The sentences' numbers for :func:`accuracy_flat_optimum`'s table: cells outside tolerance, how many of
    them have the paper's value inside the near-optimum range, the others named, and the widest range."""
    out = flat[flat["outside tolerance"]]
    miss = out[~out["paper in range"]]
    width = flat["accuracy range"].str.split(" to ").map(lambda p: float(p[1]) - float(p[0]))
    top = flat.loc[width.idxmax()] if len(flat) else None
    return {"n_out": int(len(out)), "n_out_in_range": int(out["paper in range"].sum()),
            "out_not_in_range": "; ".join(
                f"{r['set']} (paper {r['paper']}, range {r['accuracy range']}, one example = "
                f"{r['one example (points)']} points)" for _, r in miss.iterrows()) or "none",
            "gap_text": "; ".join(_gap_words(r) for _, r in miss.iterrows()) or "none",
            "widest": "none" if top is None else
            f"{top['set']} ({top['accuracy range']}, {top['share consistent']:.0%} consistent)"}


def _gap_words(r) -> str:
    gap, k = r["g-mean gap at the paper's accuracy"], r["thresholds better than that"]
    if not np.isfinite(gap):
        return f"{r['set']}: no threshold gives the paper's accuracy"
    return f"{r['set']}: {gap:.3f} below the best g-mean, with {k} thresholds better"


def missing_rows_auc_range(frames: dict, dataset: str, n_missing: int, label: int, refs: dict,
                           printed: float = 0.1) -> pd.DataFrame:
    """What rows missing offline can do to an AUC: per metric (``frames``: column -> cached score frame with
    ``label`` and ``score``), our AUC on the rows we have, and the lowest and highest AUC once ``n_missing``
    rows of class ``label`` are added, all scored below every other row or all above it (the extremes any
    scores of theirs could take, ties aside). The paper's value (``refs[column]`` = (table, column) at row
    ``dataset``), read to its ``printed`` precision, is flagged when it lies in that range: then the
    missing rows alone can account for the gap. AUCs × 100."""
    from tfc.book import reference
    from tfc.meta import roc_auc

    if n_missing < 1 or label not in (0, 1):
        raise ValueError(f"need n_missing >= 1 and label 0 or 1; got {n_missing!r}, {label!r}")
    rows = []
    for col, frame in frames.items():
        f = frame[frame["dataset"] == dataset] if "dataset" in frame else frame
        y, s = f["label"].to_numpy(int), f["score"].to_numpy(float)
        if not len(y):
            continue
        add_y = np.r_[y, np.full(n_missing, label)]
        lo_s, hi_s = np.r_[s, np.full(n_missing, s.min() - 1.0)], np.r_[s, np.full(n_missing, s.max() + 1.0)]
        a, b = 100 * roc_auc(add_y, lo_s), 100 * roc_auc(add_y, hi_s)
        lo, hi = min(a, b), max(a, b)
        try:
            paper = reference.value(refs[col][0], dataset, refs[col][1])
        except KeyError:
            paper = np.nan
        rows.append({"metric": col, "dataset": dataset, "n": int(len(y)), "missing rows": n_missing,
                     "paper": paper, "ours": round(100 * roc_auc(y, s), 2),
                     "lowest with them": round(lo, 2), "highest with them": round(hi, 2),
                     "paper in range": bool(np.isfinite(paper) and lo - printed / 2 <= paper <= hi + printed / 2)})
    return pd.DataFrame(rows)


def f1_reading_aucs(datasets, sample=None, seed: int = 0) -> pd.DataFrame:
    """Token F1's ROC AUC × 100 per TRUE set under each tokenisation reading of the data chapter
    (:data:`tfc.scorers.lexical.F1_READINGS`), beside TRUE Table 3's F1 column: ``dataset, paper,
    <reading>..., span`` (``span``: the highest minus the lowest reading)."""
    from tfc.book.reference import value
    from tfc.data import load
    from tfc.meta import roc_auc
    from tfc.scorers.lexical import F1_READINGS, token_prf

    rows = []
    for n in datasets:
        d = load(n, sample=sample, seed=seed)
        y = d["label"].astype(int).to_numpy()
        row = {"dataset": n, "paper": value("TRUE-T3", n, "f1")}
        for label, norm in F1_READINGS.items():
            s = [token_prf(g, h, norm)[2] for g, h in zip(d["grounding"], d["generated"])]
            row[label] = round(100 * roc_auc(y, np.asarray(s)), 1)
        vals = [row[k] for k in F1_READINGS]
        row["span"] = round(max(vals) - min(vals), 1)
        rows.append(row)
    return pd.DataFrame(rows)


def span_text(readings: pd.DataFrame, dataset: str) -> str:
    """One clause from :func:`f1_reading_aucs`: the lowest and highest AUC of ``dataset`` across the readings,
    with the published value ("spans 48.4 to 51.2, the paper 51.1"); "is not scored here" without the set."""
    r = readings.set_index("dataset")
    if dataset not in r.index:
        return "is not scored here"
    vals = r.loc[dataset].drop(["paper", "span"])
    return f"spans {vals.min():.1f} to {vals.max():.1f}, the paper {r.loc[dataset, 'paper']:.1f}"
