"""Tables of the QAGS and Q² chapters, computed from the score cache (the loops live here, not in notebooks).

* :func:`qags_table1` -- QAGS Table 1: summary-level Pearson r × 100 with the QAGS human scores
  (``qags_cnndm_scores``/``qags_xsum_scores``) for ROUGE-1/2/L, BLEU-1..4, BERTScore and QAGS. The
  QAGS human-score sets have the same texts, row for row, as TRUE's ``qags_cnndm``/``qags_xsum``
  (checked), so scores cached for the TRUE sets are joined by position.
* :func:`qags_table4` -- the number of questions K, from the ``aux_mean_k<K>`` cache columns.
* :func:`qags_variant_table` -- the analogues of QAGS Tables 2 and 3 (readers / question generators of
  different quality against the correlation they give); :func:`qa_dev_curve` -- the QA model's dev curve.
* :func:`q2_table2`, :func:`q2_table3` -- Q² Tables 2 and 3 on the ``q2_paper`` subsets (:func:`q2_t3_row_sets`:
  Table 3 on the released files and on the cross-annotated rows side by side).
* :func:`q2_table4` -- Q² Table 4: system-level Spearman correlation on simulated systems (bootstrap), from
  the cached Q² scores of TRUE's ``q2`` set (the cross-annotated contexts).
* :func:`q2_table6` -- Q² Table 6: turn-level correlation with USR's Topical-Chat "Uses Knowledge".
* :func:`q2_true_auc` -- Q² on TRUE sets (AUC on covered rows and 0-filled) with token F1 beside it and a
  paired bootstrap of the difference.

Every function takes ``cache_only``: the book reads the committed caches; ``cache_only=False``
computes missing rows (slow for QAGS/Q² on a CPU).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
from scipy.stats import pearsonr
from sklearn.metrics import average_precision_score, precision_recall_curve

from tfc import data as D
from tfc.book import reference
from tfc.data.manifest import raw_path
from tfc.runs.qgqa import F1_FORM  # noqa: F401  (the NLI sweep's key for the F1 form; the chapter reads it as T.F1_FORM)
from tfc.scorers.lexical import bleu_parts

QAGS_SETS = {"qags_cnndm": "qags_cnndm_scores", "qags_xsum": "qags_xsum_scores"}
Q2_SUBSETS = ("dodeca_inconsistent", "dodeca_consistent", "memnet_inconsistent", "memnet_consistent")
DIALOGUE = ("begin", "q2", "dialfact")
# BLEU with sacrebleu's default "exp" smoothing: without smoothing most one-sentence summaries and
# dialogue responses get BLEU 0 (no 4-gram match), which is not what either paper reports
_EXP = {"smooth_method": "exp"}
LEXICAL_T1 = {"rouge_1": ("rouge1", {}), "rouge_2": ("rouge2", {}), "rouge_l": ("rougeL", {}),
              "bleu1": ("bleu4", {"max_ngram_order": 1, **_EXP}), "bleu2": ("bleu4", {"max_ngram_order": 2, **_EXP}),
              "bleu3": ("bleu4", {"max_ngram_order": 3, **_EXP}), "bleu4": ("bleu4", _EXP),
              "bertscore": ("bertscore", {})}


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


def _pearson(x, y) -> tuple[float, float, int]:
    from tfc.meta.correlation import correlation

    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = ~(np.isnan(x) | np.isnan(y))
    if ok.sum() < 3:
        return float("nan"), float("nan"), int(ok.sum())
    r, p = correlation(x[ok], y[ok], "pearson")
    return float(r), float(p), int(ok.sum())


def human_scores(dataset: str) -> pd.Series:
    """QAGS human scores for the TRUE set ``dataset`` (positional join, texts checked equal)."""
    from tfc import data

    a, b = data.load(dataset), data.load(QAGS_SETS[dataset])
    if len(a) != len(b) or not ((a["grounding"].values == b["grounding"].values).all()
                                and (a["generated"].values == b["generated"].values).all()):
        raise ValueError(f"{dataset} and {QAGS_SETS[dataset]} no longer hold the same texts in the same order")
    return pd.Series(b["human_score"].to_numpy(), index=a["id"].to_numpy())


def _lexical(scorer, dataset: str) -> pd.DataFrame:
    from tfc import data

    df = data.load(dataset)
    return pd.DataFrame({"id": df["id"], "label": df["label"],
                         "score": scorer.score(df["grounding"], df["generated"], progress=False)})


def overlap_baselines(dataset: str) -> dict:
    """The two overlap baselines of Q² Tables 3, 4 and 6 on ``dataset`` (response vs knowledge): the Q² paper's
    token F1 (``overlap_f1_rk``: scorer ``f1-q2``, spaCy tokens without stop words and punctuation, as the authors'
    baseline script computes it) and the paper's BLEU × 100 (``bleu``: scorer ``bleu-q2``, the authors' sacrebleu
    call against the lower-cased knowledge), each as ``(scores, signature)`` in data order."""
    from tfc import scorers

    out = {}
    for column, sc, scale in (("overlap_f1_rk", scorers.get("f1-q2", preset="as-published"), 1.0), ("bleu", scorers.get("bleu-q2", preset="as-published"), 100.0)):
        out[column] = (scale * _lexical(sc, dataset)["score"].to_numpy(float), sc.signature)
    return out


def qags_table1(qags_scorer, cache_only: bool = True) -> pd.DataFrame:
    """Long form: ``row`` (dataset), ``column`` (metric id as in QAGS-T1), ``value`` (Pearson r × 100),
    ``p_value``, ``n``, ``signature``. QAGS rows without a question (NaN) are left out (``n`` says how many
    remain). BERTScore is read from the cache only (computing it is slow); the lexical metrics are
    computed in memory."""
    from tfc import scorers

    rows = []
    for ds in QAGS_SETS:
        human = human_scores(ds)
        metrics = {k: scorers.get(n, preset="as-published", **kw) for k, (n, kw) in LEXICAL_T1.items()}
        metrics["qags"] = qags_scorer
        for col, sc in metrics.items():
            try:
                if col in ("qags", "bertscore"):
                    got = cached(sc, ds, cache_only=cache_only if col == "qags" else True)
                else:   # lexical: cheap, computed in memory (no cache written outside this scorer's namespace)
                    got = _lexical(sc, ds)
            except Exception as exc:  # noqa: BLE001 - a missing cache shows as NaN with the reason
                rows.append({"row": ds, "column": col, "value": np.nan, "p_value": np.nan, "n": 0,
                             "signature": sc.signature, "note": f"not available: {exc}"})
                continue
            r, p, n = _pearson(got["score"], human.loc[got["id"]].to_numpy())
            rows.append({"row": ds, "column": col, "value": 100 * r, "p_value": p, "n": n,
                         "signature": sc.signature, "note": ""})
    return pd.DataFrame(rows)


def t1_value_text(t1: pd.DataFrame, dataset: str, column: str = "qags") -> str:
    """One cell of :func:`qags_table1` as text with one decimal (``n/a`` when absent)."""
    v = t1.loc[(t1["row"] == dataset) & (t1["column"] == column), "value"]
    return f"{v.iloc[0]:.1f}" if len(v) and pd.notna(v.iloc[0]) else "n/a"


# the offline copies of the QAGS sets whose "reference" field the BLEU evidence checks: (BARTScore, UniEval)
REFERENCE_COPIES = {"qags_cnndm": ("bartscore_meta_eval/SUM_QAGS_CNN_data.json", "unieval_meta_eval/qags_cnndm.json"),
                    "qags_xsum": ("bartscore_meta_eval/SUM_QAGS_XSUM_data.json", "unieval_meta_eval/qags_xsum.json")}


def bleu_evidence() -> pd.DataFrame:
    """Why our BLEU-1 differs from QAGS Table 1: per QAGS set, Pearson r x 100 with the human scores of
    BLEU-1 and of its two parts (brevity penalty, unigram precision), the median brevity penalty and
    lengths, the paper's BLEU-1, and how many rows of the offline copies have the article as "reference"."""
    rows = []
    for ds in QAGS_SETS:
        d = D.load(ds)
        human = human_scores(ds).loc[d["id"]].to_numpy()
        parts = bleu_parts(d["grounding"], d["generated"], **LEXICAL_T1["bleu1"][1])
        bart = json.loads(raw_path(REFERENCE_COPIES[ds][0]).read_text())
        uni = json.loads(raw_path(REFERENCE_COPIES[ds][1]).read_text())
        rows.append({
            "dataset": ds,
            "BLEU-1 (r x100)": 100 * pearsonr(parts["bleu"], human)[0],
            "brevity penalty alone (r x100)": 100 * pearsonr(parts["bp"], human)[0],
            "unigram precision alone (r x100)": 100 * pearsonr(parts["p1"], human)[0],
            "median brevity penalty": float(parts["bp"].median()),
            "median words: summary / article": f"{parts['hyp_len'].median():.0f} / {parts['ref_len'].median():.0f}",
            "paper BLEU-1": reference.value("QAGS-T1", ds, "bleu1"),
            "offline 'reference' = article (BARTScore copy)": f"{sum(v['ref_summ'] == v['src'] for v in bart.values())} of {len(bart)}",
            "offline 'reference' = article (UniEval copy)": f"{sum(x['reference'] == x['source'] for x in uni)} of {len(uni)}",
        })
    return pd.DataFrame(rows).set_index("dataset").round(4)


def qags_table4(qags_scorer, ks=(1, 2, 5, 10, 20)) -> pd.DataFrame:
    """Pearson r × 100 with the human scores when QAGS averages over the K best questions (cache only)."""
    rows = []
    for ds in QAGS_SETS:
        human = human_scores(ds)
        got = cached(qags_scorer, ds)
        for k in ks:
            col = "score" if k == qags_scorer.config.k else f"aux_mean_k{k}"
            if col not in got:
                continue
            r, p, n = _pearson(got[col], human.loc[got["id"]].to_numpy())
            rows.append({"row": ds, "column": f"qags_k{k}", "value": 100 * r, "p_value": p, "n": n,
                         "signature": qags_scorer.signature})
    return pd.DataFrame(rows)


def qa_dev_curve(record: dict) -> pd.DataFrame:
    """The QA model's dev curve from its training record (``dev_curve``: the model in training read the held-out
    self-supervised pairs and XQuAD-English every ``eval_every`` steps): one row per point with F1 × 100 on
    the held-out answerable questions, on their ``cross`` (answer read in the partner text) and ``contrast``
    (VitaminC) kinds, the no-answer accuracy, and XQuAD's F1 and exact match. Empty without a curve."""
    rows = []
    for pt in record.get("dev_curve") or []:
        h, x = pt.get("heldout") or {}, pt.get("xquad") or {}
        kinds = h.get("by_kind_f1") or {}

        def pct(v):
            return np.nan if v is None else 100 * float(v)

        rows.append({"step": int(pt["step"]), "examples": int(pt.get("examples", 0)),
                     "heldout_f1": pct(h.get("f1")), "cross_f1": pct(kinds.get("cross")),
                     "contrast_f1": pct(kinds.get("contrast")), "no_answer_acc": pct(h.get("no_answer_accuracy")),
                     "xquad_f1": pct(x.get("f1")), "xquad_em": pct(x.get("exact_match"))})
    return pd.DataFrame(rows, columns=["step", "examples", "heldout_f1", "cross_f1", "contrast_f1", "no_answer_acc",
                                       "xquad_f1", "xquad_em"])


def qa_plateau_text(name: str, within: float = 1.0) -> str:
    """One sentence on a QA run's dev curve: for held-out F1 and XQuAD-English F1, the first step from which every
    later reading stays within ``within`` points of the curve's best, and the final cross-text F1."""
    from tfc import models

    try:
        rec = models.training_record(name)
    except FileNotFoundError:
        return f"{name} is not recorded."
    curve = qa_dev_curve(rec)
    if curve.empty:
        return f"{name} records no dev curve."
    passes = rec.get("epochs_seen")
    parts = []
    for col, label in (("heldout_f1", "held-out F1"), ("xquad_f1", "XQuAD-English F1")):
        c = curve.dropna(subset=[col])
        if c.empty:
            continue
        best = c[col].max()
        far = np.flatnonzero(c[col].to_numpy() < best - within)    # the plateau starts after the last far reading
        first = far[-1] + 1 if len(far) else 0
        parts.append(f"{label} stays within {within:g} point of its best ({best:.1f}) from step "
                     f"{int(c['step'].iloc[first]):,} on")
    cross = ((rec.get("heldout_eval") or {}).get("by_kind") or {}).get("cross", {}).get("f1")
    return (f"{name} ran {int(rec['steps']):,} steps" + (f" ({passes:.2f} passes)" if passes else "") + ": "
            + ", and ".join(parts) + (f"; its final cross-text F1 is {100 * cross:.1f}" if cross is not None else "")
            + ".")


QA_CURVE_LINES = {"heldout_f1": "held-out F1", "cross_f1": "held-out cross F1", "contrast_f1": "VitaminC contrast F1",
                  "xquad_f1": "XQuAD-English F1"}


def qa_curve_axes(curve: pd.DataFrame, ax, title: str | None = None):
    """Draw a :func:`qa_dev_curve` frame on ``ax`` (F1 × 100 against the optimizer step, with the cross-text
    target as a dotted line); returns ``ax``."""
    for col, lab in QA_CURVE_LINES.items():
        ax.plot(curve["step"], curve[col], marker="o", label=lab)
    ax.axhline(100 * QA_CROSS_TARGET, color="grey", ls=":", lw=1)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("F1 × 100")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=.3)
    return ax


def qa_curves_figure(names, per_row: int = 2):
    """One panel per QA run (``tfc/<name>``) with its dev curve (:func:`qa_curve_axes`), at most ``per_row``
    panels a row; a run without a committed record gets a titled empty panel. Returns the figure."""
    import matplotlib.pyplot as plt

    from tfc import models

    cols = min(len(names), per_row)
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.4 * rows), sharey=True, squeeze=False)
    for ax, name in zip(axes.flat, names):
        try:
            qa_curve_axes(qa_dev_curve(models.training_record(name)), ax, title=name)
        except FileNotFoundError:
            ax.set_title(f"{name}: no record", fontsize=9)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


QA_CROSS_TARGET = 0.7   # issue 17: cross-text F1 on the held-out training-side passages


def qa_runs_table(checkpoints: dict) -> pd.DataFrame:
    """One row per QA training run (``{label: "tfc/<name>"}``; a run with no committed record is left out): how
    long it trained (steps, examples, passes over the training rows, minutes, examples/s, dtype) and its final
    dev metrics × 100 (held-out F1, the cross-text and VitaminC contrast kinds, XQuAD-English F1), with whether
    cross-text F1 reaches the issue's target."""
    from tfc import models

    rows = []
    for label, ckpt in checkpoints.items():
        try:
            rec = models.training_record(ckpt)
        except FileNotFoundError:
            continue
        ev, xq = rec.get("heldout_eval") or {}, rec.get("dev_eval_human") or {}
        kinds = ev.get("by_kind") or {}

        def pct(v):
            return np.nan if v is None else round(100 * float(v), 1)

        cross = (kinds.get("cross") or {}).get("f1")
        rows.append({"run": label, "steps": rec.get("steps"), "examples": rec.get("examples_seen"),
                     "passes": rec.get("epochs_seen"), "stopped by": rec.get("stopped_by"),
                     "train minutes": round(rec["train_seconds"] / 60, 1) if rec.get("train_seconds") else np.nan,
                     "examples/s": rec.get("examples_per_second"), "dtype": rec.get("dtype"),
                     "device": str(rec.get("device") or "").split(" (")[0] or None,
                     "held-out F1": pct(ev.get("f1")), "cross F1": pct(cross),
                     "contrast F1": pct((kinds.get("contrast") or {}).get("f1")), "XQuAD F1": pct(xq.get("f1")),
                     f"cross F1 ≥ {100 * QA_CROSS_TARGET:.0f}": None if cross is None else bool(cross >= QA_CROSS_TARGET)})
    return pd.DataFrame(rows)


def qa_longer_text(runs: pd.DataFrame, run: str | None = None, what: str = "The longer run") -> str:
    """One sentence on a later QA run (``run``, a label of the table; default its last row) against the first
    (the table's first row)."""
    if len(runs) < 2:
        return "No longer run is recorded yet."
    a = runs.iloc[0]
    b = runs.iloc[-1] if run is None else runs.set_index("run").loc[run]
    met = b[f"cross F1 ≥ {100 * QA_CROSS_TARGET:.0f}"]
    minutes = b["train minutes"]
    where = f" on {b['device']}" if isinstance(b.get("device"), str) and b.get("device") else ""
    return (f"{what} trained {int(b['steps']):,} steps ({b['passes']:.2f} passes over the training rows) in "
            f"{minutes:.{1 if minutes < 10 else 0}f} minutes at {b['examples/s']:.1f} examples/s ({b['dtype']}{where}), "
            f"against {int(a['steps']):,} steps ({a['passes']:.2f} passes) for the first; its cross-text F1 is "
            f"{b['cross F1']:.1f} (first run {a['cross F1']:.1f}), VitaminC contrast F1 {b['contrast F1']:.1f} "
            f"({a['contrast F1']:.1f}), XQuAD-English F1 {b['XQuAD F1']:.1f} ({a['XQuAD F1']:.1f}); the cross-text "
            f"target of {100 * QA_CROSS_TARGET:.0f} is "
            + ("met" if met else "still missed") + ".")


def qa_round_trip_text(name: str) -> str:
    """One sentence from a GPU-trained QA record's ``weights_round_trip``: its dev F1 read on the device and read
    again here after the weights came back (fp16), × 100."""
    from tfc import models

    try:
        rec = models.training_record(name)
    except FileNotFoundError:
        return f"{name} is not recorded."
    again = (rec.get("weights_round_trip") or {}).get("cpu_reeval_after_round_trip")
    if not again:
        return f"{name} records no re-reading after its weights came back."
    ev, xq = rec.get("heldout_eval") or {}, rec.get("dev_eval_human") or {}
    cross = ((ev.get("by_kind") or {}).get("cross") or {}).get("f1")
    pairs = [("held-out F1", ev.get("f1"), again.get("heldout_f1")), ("cross-text F1", cross, again.get("cross_f1")),
             ("XQuAD-English F1", xq.get("f1"), again.get("xquad_f1"))]
    return ("Read again on this CPU after the round trip, " + name + " gives " + ", ".join(
        f"{lab} {100 * b:.2f} (on the device {100 * a:.2f})" for lab, a, b in pairs if a is not None and b is not None)
        + ".")


BACKBONE_LEAD = "Started from the alignment model's encoder instead of MiniLM"


def qa_backbone_text(runs: pd.DataFrame, own: str, shared: str, lead: str = BACKBONE_LEAD,
                     what: str = "shared-backbone") -> str:
    """One sentence: the same QA recipe in two runs, two labels of :func:`qa_runs_table` (by default from MiniLM,
    ``own``, and from the alignment model's encoder, ``shared``; ``lead`` says what the second run changed and
    ``what`` names it when it is not recorded): cross-text and XQuAD F1 side by side, and which way they moved."""
    t = runs.set_index("run")
    if own not in t.index or shared not in t.index:
        return f"The {what} run is not recorded."
    a, b = t.loc[own], t.loc[shared]
    d_cross, d_xq = b["cross F1"] - a["cross F1"], b["XQuAD F1"] - a["XQuAD F1"]
    way = ("lower on both" if d_cross < 0 and d_xq < 0 else "higher on both" if d_cross > 0 and d_xq > 0
           else "mixed")
    return (f"{lead}, the same recipe ({int(b['steps']):,} "
            f"steps against {int(a['steps']):,}) reads with cross-text F1 {b['cross F1']:.1f} against "
            f"{a['cross F1']:.1f} ({d_cross:+.1f}) and XQuAD-English F1 {b['XQuAD F1']:.1f} against "
            f"{a['XQuAD F1']:.1f} ({d_xq:+.1f}): {way}.")


# the scorers' reader run again on a CPU from its committed record (`tfc train reproduce --only qa-minilm`),
# under another name so that tfc/qa-minilm's committed signatures keep their meaning
RERUN_READER = "tfc/qa-minilm-rerun"


def rerun_pairs(reader: str = RERUN_READER) -> list[tuple]:
    """(pipeline, dataset, committed scorer, rerun scorer, compared column) for the reader's rerun: QAGS's score on
    both QAGS sets, and Q²'s F1 form (``aux_f1_only``, no question = 0) on the three dialogue sets. The rerun's Q²
    names v8's int8 release for its NLI step because v8's fp32 weights are lost; the F1 form has no NLI step,
    so only the reader differs in the compared columns."""
    from tfc.runs import qgqa as R

    qags, qags_r = R.scorer_for("qags"), R.scorer_for("qags", checkpoint=reader)
    q2, q2_r = R.scorer_for("q2"), R.scorer_for("q2", checkpoint=reader, nli_checkpoint="tfc/sent-minilm-v8-int8")
    return ([("QAGS", ds, qags, qags_r, "score") for ds in QAGS_SETS]
            + [("Q² (F1 form)", ds, q2, q2_r, "aux_f1_only") for ds in DIALOGUE])


def rerun_drift_table(pairs: list[tuple]) -> pd.DataFrame:
    """One row per :func:`rerun_pairs` entry, on the rows both caches hold: how many, the share whose compared
    value is the same (|Δ| ≤ 1e-9), the largest |Δ|, and the set's metric for each reader (QAGS: Pearson r × 100
    with the human scores; Q²: ROC AUC × 100) with its Δ. A set the rerun has not scored gets 0 rows and NaN."""
    from tfc.meta import roc_auc

    rows = []
    for what, ds, a, b, col in pairs:
        x, y = cached(a, ds), cached(b, ds)
        ok = (x["score"].notna() & y["score"].notna()).to_numpy()
        row = {"pipeline": what, "dataset": ds, "rows": int(ok.sum()), "same %": np.nan, "max |Δ score|": np.nan,
               "metric": "Pearson × 100" if what == "QAGS" else "ROC AUC × 100", "committed reader": np.nan,
               "rerun": np.nan, "Δ": np.nan}
        if ok.sum() >= 3 and col in x and col in y:
            u = np.nan_to_num(x[col].to_numpy(float)[ok], nan=0.0)
            v = np.nan_to_num(y[col].to_numpy(float)[ok], nan=0.0)
            d = np.abs(u - v)
            if what == "QAGS":
                h = human_scores(ds).loc[x["id"][ok]].to_numpy()
                ma, mb = _pearson(u, h)[0], _pearson(v, h)[0]
            else:
                lab = x["label"].to_numpy()[ok]
                ma, mb = roc_auc(lab, u), roc_auc(lab, v)
            row.update({"same %": 100 * float((d <= 1e-9).mean()), "max |Δ score|": float(d.max()),
                        "committed reader": 100 * ma, "rerun": 100 * mb, "Δ": 100 * (mb - ma)})
        rows.append(row)
    return pd.DataFrame(rows)


def rerun_text(drift: pd.DataFrame, original: str = "tfc/qa-minilm", rerun: str = RERUN_READER) -> str:
    """One sentence: the rerun's training time, how its dev curve compares with the committed record's (points at
    the same steps, largest |Δ| in F1 points), its identity against the committed one, and what
    :func:`rerun_drift_table` found downstream."""
    from tfc import models

    try:
        ra, rb = models.training_record(original), models.training_record(rerun)
    except FileNotFoundError:
        return f"{rerun} is not recorded."
    ca, cb = qa_dev_curve(ra).set_index("step"), qa_dev_curve(rb).set_index("step")
    common = ca.index.intersection(cb.index)
    cols = [c for c in ca.columns if c != "examples"]      # every reading: held-out F1 by kind, no-answer, XQuAD
    if not len(common):
        return f"{rerun}'s dev curve shares no step with {original}'s."
    gap = float(np.nanmax(np.abs(ca.loc[common, cols].to_numpy(float) - cb.loc[common, cols].to_numpy(float))))
    curve = (f"every reading at all {len(common)} points of its dev curve equals the record's" if gap == 0 else
             f"its dev curve stays within {gap:.2g} points of the record's at {len(common)} points")
    ida, idb = (models.committed_identity(original) or {}).get("identity"), models.identity(rerun)
    same = "the same" if ida == idb else f"not the same ({idb} against {ida})"
    sha_a, sha_b = ((r.get("mix") or {}).get("sha256") for r in (ra, rb))
    data = ("" if not (sha_a and sha_b) else ", from the same QA set (its sha256 equals the record's)" if sha_a == sha_b
            else f", from a different QA set (sha256 {sha_b[:12]} against {sha_a[:12]})")
    text = (f"Run again on this machine's CPU from its record ({int(rb['steps']):,} steps, "
            f"{rb['train_seconds'] / 60:.0f} minutes of training at {rb['examples_per_second']:.1f} examples/s){data}, "
            f"{curve}, and its weights' identity is {same}.")
    d = drift.dropna(subset=["Δ"])
    if d.empty:
        return text + " Its scores are not recorded yet."
    if (d["max |Δ score|"] == 0).all():
        return text + (f" {'And' if ida == idb else 'Yet'} every one of its {int(d['rows'].sum()):,} compared scores on {len(d)} sets equals the "
                       "committed one, so the committed QAGS and Q² (F1 form) numbers are the ones the rebuilt reader "
                       "gives.")
    return text + (f" On {int(d['rows'].sum()):,} rows of {len(d)} sets, {np.average(d['same %'], weights=d['rows']):.1f}% "
                   f"of the scores are unchanged, the largest score difference is {d['max |Δ score|'].max():.3g}, and "
                   f"each set's Pearson or AUC moves by at most {d['Δ'].abs().max():.2f} points.")


def qags_variant_table(variants: dict, quality: dict | None = None) -> pd.DataFrame:
    """The QAGS Table 2 / Table 3 analogue: one row per pipeline variant (``{label: qags scorer}``, e.g. two QA
    readers, or two QG rule versions), with the Pearson r × 100 of its cached scores with the human scores on
    each QAGS set (every summary; a set not fully cached is NaN with its row count), the variant's mean
    self-consistency (share of written questions the reader answers with their own candidate on the summary,
    from ``aux_n_self_consistent / aux_n_generated``), the questions written on both sets, and ``quality`` (``{label: value}``, e.g. the reader's
    XQuAD F1) when given."""
    rows = []
    for label, sc in variants.items():
        row = {"variant": label, "quality": (quality or {}).get(label, np.nan)}
        gen = cons = 0
        for ds in QAGS_SETS:
            got = cached(sc, ds)
            full = bool(got["score"].notna().all())
            r = _pearson(got["score"], human_scores(ds).loc[got["id"]].to_numpy())[0] if full else np.nan
            row[f"{ds}_pearson"] = 100 * r
            row[f"{ds}_rows"] = int(got["score"].notna().sum())
            if full and "aux_n_generated" in got:
                gen += int(got["aux_n_generated"].sum())
                cons += int(got["aux_n_self_consistent"].sum())
        row["questions_written"] = gen if gen else np.nan
        row["self_consistent"] = 100 * cons / gen if gen else np.nan
        row["signature"] = sc.signature
        rows.append(row)
    return pd.DataFrame(rows)


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


def reader_pearson_text(t2: pd.DataFrame, reader: str, default: str) -> str:
    """One sentence from the QAGS Table 2 analogue (:func:`qags_variant_table`, variant = checkpoint): QAGS's
    Pearson r × 100 with ``reader`` on each QAGS set, beside the ``default`` reader's and the paper's QAGS row of
    Table 1 (with Δ to the paper)."""
    paper = reference.load("QAGS-T1")
    paper = paper[paper["column"] == "qags"].set_index("row")["value"]
    t = t2.set_index("variant")
    if reader not in t.index or default not in t.index:
        return f"{reader} has no QAGS row."
    parts = [f"{ds}: not fully scored" if pd.isna(r) else
             f"{ds} {r:.1f} (default reader {d:.1f}; paper {paper.get(ds, np.nan):.1f}, Δ {r - paper.get(ds, np.nan):+.1f})"
             for ds, r, d in _pearson_pairs(t, reader, default)]
    return f"With {reader}, QAGS's Pearson r × 100: " + "; ".join(parts) + "."


def _pearson_pairs(t: pd.DataFrame, a: str, b: str) -> list:
    """(QAGS set, variant ``a``'s Pearson, variant ``b``'s) per set, from a :func:`qags_variant_table` frame indexed
    by variant."""
    return [(ds, t.loc[a, f"{ds}_pearson"], t.loc[b, f"{ds}_pearson"]) for ds in QAGS_SETS]


def variant_pair_text(t: pd.DataFrame, a: str, b: str) -> str:
    """One sentence from a :func:`qags_variant_table` frame: QAGS's Pearson r × 100 on each QAGS set with variant
    ``a`` beside variant ``b``, and their ``quality`` column where both have one."""
    t = t.set_index("variant")
    if a not in t.index or b not in t.index:
        return f"{a if a not in t.index else b} has no row."
    parts = [f"{ds}: not fully scored" if pd.isna(x) or pd.isna(y) else f"{ds} {x:.1f} against {y:.1f} ({x - y:+.1f})"
             for ds, x, y in _pearson_pairs(t, a, b)]
    qa, qb = t.loc[a].get("quality", np.nan), t.loc[b].get("quality", np.nan)
    qual = f", with quality {qa:.1f} against {qb:.1f}" if pd.notna(qa) and pd.notna(qb) else ""
    return f"QAGS's Pearson r × 100 with {a} against {b}: " + "; ".join(parts) + qual + "."


def reader_dev_f1(checkpoints) -> dict:
    """XQuAD-English F1 × 100 of each in-house QA checkpoint with a training record that has it (the quality
    axis of the QAGS Table 2 analogue); checkpoints without one are left out."""
    from tfc import models

    out = {}
    for ck in checkpoints:
        try:
            f1 = (models.training_record(ck).get("dev_eval_human") or {}).get("f1")
        except (FileNotFoundError, ValueError):
            continue
        if f1 is not None:
            out[ck] = 100 * float(f1)
    return out


def qg_judgements_path(rules: str = "v2"):
    """The committed hand judgements of ``rules``' questions (``results/qg_judgements/rules-<v>.csv``)."""
    from tfc import config

    return config.model_records_dir().parent / "qg_judgements" / f"rules-{rules}.csv"


def covered(got: pd.DataFrame) -> pd.Series:
    """Rows with at least one question (``aux_n_valid`` / ``aux_n_questions`` > 0) and a score. Under the
    ``no_questions`` policies "zero"/"nli" the other rows have a defined score too; under the legacy "nan"
    policy they are NaN. Either way they count as not covered."""
    ok = got["score"].notna()
    for col in ("aux_n_valid", "aux_n_questions"):
        if col in got:
            ok &= got[col].fillna(0) > 0
    return ok


def q2_table2(q2_scorer, dataset: str = "q2_paper") -> pd.DataFrame:
    """Per subset: valid questions, Q² (F1 only), Q² + NLI (means over responses with a valid question),
    % of valid questions without an answer on the knowledge, coverage. Long form (row = subset)."""
    got = cached(q2_scorer, dataset)
    rows = []
    for sp, g in got.groupby("split", sort=False):
        cov = covered(g)
        nv = g["aux_n_valid"].fillna(0).sum() if "aux_n_valid" in g else np.nan
        na = g["aux_n_no_answer"].fillna(0).sum() if "aux_n_no_answer" in g else np.nan
        vals = {"n_questions": nv, "q2_f1": g.loc[cov, "aux_f1_only"].mean() if "aux_f1_only" in g else np.nan,
                "q2_nli": g.loc[cov, "score"].mean(), "pct_no_answer": 100 * na / nv if nv else np.nan,
                "coverage": 100 * cov.mean(), "responses": len(g)}
        rows += [{"row": sp, "column": k, "value": float(v), "signature": q2_scorer.signature}
                 for k, v in vals.items()]
    return pd.DataFrame(rows)


def system_class(df: pd.DataFrame) -> np.ndarray:
    """Q² Table 3's row per response: ``"<system>_consistent"`` or ``"<system>_inconsistent"``, from the row's
    ``meta["model"]`` and its label (1 = consistent). On ``q2_paper`` it equals the file split."""
    model = df["meta"].map(lambda m: m["model"]).to_numpy(str)
    return np.char.add(model, np.where(df["label"].to_numpy() == 1, "_consistent", "_inconsistent"))


def q2_table3(dataset: str = "q2_paper") -> pd.DataFrame:
    """Overlap (token F1 of response vs knowledge) and BLEU (× 100) means per system and class (computed, cheap)
    on ``dataset``: the Q² paper's released files (``q2_paper``, 150 responses a row) or the cross-annotated set
    TRUE's Q² set is (``q2``: every response of both systems on 544 contexts)."""
    from tfc import data

    group = system_class(data.load(dataset))
    n = pd.Series(group).value_counts()
    rows = []
    for column, (scores, sig) in overlap_baselines(dataset).items():
        means = pd.Series(scores).groupby(group, sort=False).mean()
        rows += [{"row": sp, "column": column, "value": v, "n": int(n[sp]), "signature": sig}
                 for sp, v in means.items()]
    return pd.DataFrame(rows)


def q2_t3_row_sets() -> pd.DataFrame:
    """Q² Table 3 on the two row sets offline: the released files and the cross-annotated set. One row per
    published cell with a value on both: ``row, column, paper, files, cross, delta_files, delta_cross``,
    ``cross_closer`` (the cross-annotated rows are nearer the paper than the files) and the responses behind
    each mean, ``n_files`` and ``n_cross``. Tests the reading that the
    published cells came from other rows than the released files, against the one other candidate offline."""
    t3 = {name: q2_table3(ds) for name, ds in (("files", "q2_paper"), ("cross", "q2"))}
    j = {name: reference.paper_vs_ours(t, "Q2-T3", how="left", decimals=None)
         .dropna(subset=["paper", "ours"]).set_index(["row", "column"]) for name, t in t3.items()}
    out = j["files"][["paper"]].assign(files=j["files"]["ours"], cross=j["cross"]["ours"]).dropna()
    out = out.assign(delta_files=out["files"] - out["paper"], delta_cross=out["cross"] - out["paper"])
    out = out.assign(cross_closer=out["delta_cross"].abs() < out["delta_files"].abs()).reset_index()
    for name, t in t3.items():
        out[f"n_{name}"] = out["row"].map(t.groupby("row")["n"].first())
    return out


def q2_paper_rows_in_true(dataset: str = "q2_paper", true_set: str = "q2") -> dict:
    """Are the Q² paper's released annotation files the rows of the cross-annotated set TRUE derives its Q² set
    from? Counts the ``dataset`` rows, those whose (knowledge, response) pair is in ``true_set``, and those whose
    label there is the same: ``{"rows", "in_true", "same_label"}``."""
    from tfc import data

    p, q = data.load(dataset), data.load(true_set)
    m = p.merge(q[["grounding", "generated", "label"]].drop_duplicates(["grounding", "generated"]),
                on=["grounding", "generated"], how="left", suffixes=("", "_true"))
    return {"rows": int(len(p)), "in_true": int(m["label_true"].notna().sum()),
            "same_label": int((m["label"] == m["label_true"]).sum())}


def q2_wins(tr: pd.DataFrame) -> list[str]:
    """The dialogue sets of a :func:`q2_true_auc` frame where Q² + NLI (0-filled) beats token F1 with the
    bootstrap interval above 0."""
    if not len(tr):
        return []
    dial = tr[tr["dataset"].isin(DIALOGUE)]
    return dial[(dial["diff_vs_f1"] > 0) & (dial["ci_low"] > 0)]["dataset"].tolist()


def q2_wins_text(tr: pd.DataFrame) -> str:
    """One sentence from a :func:`q2_true_auc` frame: on which dialogue sets Q² + NLI (or the F1 form, for a frame
    made with ``form="f1"``; 0-filled) beats token F1 with
    the bootstrap interval above 0, out of how many scored, against the issue's target of 2 of 3; the sets not
    (fully) scored are named."""
    dial = tr[tr["dataset"].isin(DIALOGUE)] if len(tr) else tr
    wins = q2_wins(tr)
    diffs = ", ".join(f"{r.dataset} {r.diff_vs_f1:+.1f}" for r in dial.itertuples()) if len(dial) else ""
    not_scored = [d for d in DIALOGUE if d not in set(dial["dataset"] if len(dial) else [])]
    name = "Q²'s F1 form" if len(tr) and "form" in tr and (tr["form"] == "f1").all() else "Q² + NLI"
    text = (f"{name} beats token F1 (95% interval above 0) on {len(wins)} of the {len(dial)} dialogue sets scored"
            + (f" ({', '.join(wins)})" if wins else "") + (f"; AUC differences {diffs}" if diffs else "")
            + f". The issue's target is 2 of {len(DIALOGUE)}: " + ("met" if len(wins) >= 2 else "missed") + ".")
    if not_scored:
        text += f" Not scored in full: {', '.join(not_scored)}."
    return text


def nine_set_text(scorers: dict, complete) -> str:
    """Which of ``scorers`` (``{label: scorer}``) have a cache covering every row of the nine TRUE sets with text
    (``complete``: those signatures, from :func:`tfc.book.chapters.true.complete_signatures`; passed in because
    one chapter module does not import another), and so appear in the TRUE AUC chapter's table of every
    committed signature."""
    done = set(complete)
    have = [f"{lab} (`{sc.signature}`)" for lab, sc in scorers.items() if sc.signature in done]
    if not have:
        return "No Q² run covers all nine TRUE sets yet, so Q² is not in the TRUE AUC chapter's nine-set table."
    return ("Covering all nine TRUE sets, and so in the TRUE AUC chapter's table of every committed signature: "
            + ", ".join(have) + ".")


Q2_TRUE_AUC_COLUMNS = ["dataset", "rows", "coverage", "true_q2", "q2_nli_covered", "q2_nli", "q2_f1", "token_f1",
                       "diff_vs_f1", "ci_low", "ci_high", "p_value", "form", "signature"]


def q2_true_auc(q2_scorer, datasets=DIALOGUE, n_boot: int = 1000, seed: int = 0, true_scorer=None,
                form: str = "nli") -> pd.DataFrame:
    """Per TRUE set with cached Q² scores: rows scored, coverage, AUC × 100 of Q² (covered rows and
    0-filled), of Q² without NLI (0-filled) and of token F1 on the same rows, and the paired bootstrap of
    Q² (0-filled) minus F1 (difference, 95% CI, p-value). Only sets whose every row is cached are shown
    (``attrs["partial"]`` names the sets a run has only begun, ``attrs["missing"]`` those with no cached row or
    a single label). With ``true_scorer`` (TRUE's variant, e.g.
    :func:`tfc.runs.qgqa.derive_true_variant`'s), its AUC on the same rows (``true_q2``; NaN unless it has
    every one of them). ``form="f1"`` bootstraps Q²'s F1 form (no NLI step, ``aux_f1_only``, 0-filled) against
    token F1 instead of Q² + NLI (``diff_vs_f1`` and its interval then describe that form)."""
    from tfc import scorers
    from tfc.meta import bootstrap_auc_diff, roc_auc

    if form not in ("nli", "f1"):
        raise ValueError(f"form must be 'nli' or 'f1'; got {form!r}")

    f1 = scorers.get("f1", preset="as-published")
    rows, partial, missing = [], [], []
    for ds in datasets:
        got = cached(q2_scorer, ds)
        n_all = len(got)
        got = got[got["score"].notna() | got.get("aux_n_candidates", pd.Series(np.nan, index=got.index)).notna()]
        if 0 < len(got) < n_all:
            partial.append(ds)     # a run still under way: no AUC on the rows it happened to reach first
            continue
        if len(got) == 0 or got["label"].nunique() < 2:
            missing.append(ds)
            continue
        lex = cached(f1, ds, cache_only=False).set_index("id").loc[got["id"], "score"].to_numpy()
        y = got["label"].to_numpy()
        s = got["score"].to_numpy(float)
        cov = covered(got).to_numpy()
        zero = np.where(cov, s, 0.0)
        f1only = np.where(cov, got["aux_f1_only"].to_numpy(float), 0.0) if "aux_f1_only" in got else zero
        bd = bootstrap_auc_diff(y, zero if form == "nli" else f1only, lex, n=n_boot, seed=seed)
        tv = np.nan
        if true_scorer is not None:
            tvs = cached(true_scorer, ds).set_index("id")["score"].reindex(got["id"]).to_numpy(float)
            tv = 100 * roc_auc(y, tvs) if not np.isnan(tvs).any() else np.nan
        rows.append({"dataset": ds, "rows": len(got), "coverage": 100 * cov.mean(), "true_q2": tv,
                     "q2_nli_covered": 100 * roc_auc(y[cov], s[cov]) if len(set(y[cov])) == 2 else np.nan,
                     "q2_nli": 100 * roc_auc(y, zero), "q2_f1": 100 * roc_auc(y, f1only),
                     "token_f1": 100 * roc_auc(y, lex), "diff_vs_f1": 100 * bd.diff,
                     "ci_low": 100 * bd.ci[0], "ci_high": 100 * bd.ci[1], "p_value": bd.p_value,
                     "form": form, "signature": q2_scorer.signature})
    out = pd.DataFrame(rows, columns=Q2_TRUE_AUC_COLUMNS)
    out.attrs["partial"] = partial
    out.attrs["missing"] = missing
    return out


def run_shift_text(a: pd.DataFrame, b: pd.DataFrame, a_name: str, b_name: str) -> str:
    """One sentence from two :func:`q2_true_auc` frames made in the same form: per dialogue set scored in both, the
    form's AUC × 100 in run ``a`` and in run ``b`` and the change."""
    forms = set(a.get("form", pd.Series(dtype=str))) | set(b.get("form", pd.Series(dtype=str)))
    if len(forms) > 1:
        raise ValueError(f"the two frames are in different forms {sorted(forms)}")
    col = "q2_f1" if forms == {"f1"} else "q2_nli"
    both = (a[a["dataset"].isin(DIALOGUE)].merge(b, on="dataset", suffixes=("_a", "_b"))
            if len(a) and len(b) else pd.DataFrame())
    if not len(both):
        return f"{b_name} and {a_name} have no dialogue set scored in full in common yet."
    what = "Q²'s F1 form" if col == "q2_f1" else "Q² + NLI"
    return (f"{what}, AUC × 100 with {a_name} → with {b_name}: " + ", ".join(
        f"{r['dataset']} {r[col + '_a']:.1f} → {r[col + '_b']:.1f} ({r[col + '_b'] - r[col + '_a']:+.1f})"
        for _, r in both.iterrows()) + ".")


def next_run_text(rec: dict | None, prev_sig: str, next_sig: str, prev: str, nxt: str) -> str:
    """One sentence on whether a dev sweep's choice makes a new run: with ``next_sig == prev_sig`` the sweep kept
    the earlier configuration, so run ``nxt`` is run ``prev`` and TRUE is not scored again."""
    if not rec:
        return f"No dev sweep is recorded, so the {nxt} run takes the current choice and is scored on its own."
    if next_sig == prev_sig:
        return (f"The sweep's choice is the {prev} run's configuration ({rec['chosen']}), so the {nxt} run is the {prev} "
                f"(signature {next_sig}) and TRUE is not scored again.")
    return f"The sweep chose {rec['chosen']}, so the {nxt} run (signature {next_sig}) scores TRUE's dialogue sets anew."


def speaker_candidate_share(frames: dict, word: str = "i") -> pd.DataFrame:
    """Per dev frame (name -> ``grounding, generated, label``) and label: the share of responses with an answer
    candidate (tfc's rule) equal to ``word`` in any case, the candidate the Q² authors' code drops."""
    from tfc.scorers.qgqa import answer_candidates

    rows = []
    for name, df in frames.items():
        has = np.array([any(c.text.lower() == word for c in cs) for cs in answer_candidates(df["generated"].tolist())])
        y = df["label"].astype(int).to_numpy()
        rows += [{"dev set": name, "label": "supported" if lab else "unsupported", "responses": int((y == lab).sum()),
                  f"share with the candidate '{word}'": float(has[y == lab].mean()) if (y == lab).any() else float("nan")}
                 for lab in (1, 0)]
    return pd.DataFrame(rows)


def outcome_table(rec: dict | None) -> pd.DataFrame:
    """:func:`tfc.runs.qgqa.question_outcomes`' record as a table: per class (consistent / inconsistent) and
    candidate kind, the used questions, their share of the class's questions (%) and the share (%) of each outcome."""
    from tfc.runs.qgqa import CANDIDATE_KINDS, OUTCOMES

    cols = ["class", "candidate", "questions", "% of the class's questions", *OUTCOMES]
    if not rec or not rec["counts"]:
        return pd.DataFrame(columns=cols)
    c = pd.DataFrame(rec["counts"])
    c["class"] = c["label"].map({1: "consistent", 0: "inconsistent"})
    w = c.pivot_table(index=["class", "kind"], columns="outcome", values="questions", aggfunc="sum", fill_value=0)
    w = w.reindex(columns=list(OUTCOMES), fill_value=0)
    n = w.sum(axis=1)
    out = (100 * w.div(n, axis=0)).round(1)
    out.insert(0, "% of the class's questions", (100 * n / n.groupby(level="class").transform("sum")).round(1))
    out.insert(0, "questions", n.astype(int))
    order = [(k, kind) for k in ("consistent", "inconsistent") for kind in CANDIDATE_KINDS if (k, kind) in out.index]
    return out.loc[order].rename_axis(["class", "candidate"]).reset_index()[cols]


Q2_T4_LEVELS = (0.05, 0.10, 0.15, 0.20, 0.25)   # inconsistent shares of the five simulated systems (paper §6)


def q2_t4_contexts(q2_scorer, dataset: str = "q2") -> pd.DataFrame:
    """The contexts Q² Table 4 uses: TRUE's ``q2`` set holds two responses per WoW context (dodeca, then
    memnet, row for row); a context qualifies when one response is consistent and the other is not (the
    paper counts 244) and both have at least one valid question under ``q2_scorer`` (the paper: 186).

    One row per qualifying context: ``good_*``/``bad_*`` hold the Q² F1 score (``aux_f1_only``), the
    overlap F1 and the BLEU × 100 of its consistent and its inconsistent response."""
    from tfc import data

    df = data.load(dataset)
    meta = pd.DataFrame(list(df["meta"]))
    ctx = meta["episode_idx"].astype(str) + "/" + meta["round"].astype(str)
    pairs = ctx.to_numpy().reshape(-1, 2)
    if len(df) % 2 or not (pairs[:, 0] == pairs[:, 1]).all() or not (
            meta["model"].to_numpy().reshape(-1, 2) == ["dodeca", "memnet"]).all():
        raise ValueError(f"{dataset}: rows are no longer (dodeca, memnet) pairs of one context")
    got = cached(q2_scorer, dataset).set_index("id").reindex(df["id"])
    if "aux_f1_only" not in got:
        raise ValueError(f"{q2_scorer.signature}: the cache of {dataset} has no aux_f1_only column")
    base = overlap_baselines(dataset)
    per = {"q2_f1": got["aux_f1_only"].to_numpy(float), **{m: v for m, (v, _) in base.items()}}
    lab = df["label"].to_numpy().reshape(-1, 2)
    valid = covered(got.reset_index()).to_numpy().reshape(-1, 2)
    mixed = lab[:, 0] != lab[:, 1]
    keep = mixed & valid.all(axis=1)
    good = np.where(lab[:, 0] == 1, 0, 1)       # column of the consistent response within the pair
    rows = np.flatnonzero(keep)
    out = pd.DataFrame({"context": pairs[rows, 0]})
    for name, v in per.items():
        v2 = v.reshape(-1, 2)
        out[f"good_{name}"] = v2[rows, good[rows]]
        out[f"bad_{name}"] = v2[rows, 1 - good[rows]]
    out.attrs.update(mixed=int(mixed.sum()), contexts=int(len(lab)),
                     signatures={"q2_f1": q2_scorer.signature, **{m: sig for m, (_, sig) in base.items()}})
    return out


def system_corr_bootstrap(pairs: dict, levels=Q2_T4_LEVELS, n_boot: int = 1000, n_draw: int = 350,
                          seed: int = 0) -> dict:
    """The simulation behind :func:`q2_table4`, on plain arrays: ``pairs`` maps a metric name to
    ``(good, bad)``, its scores of the consistent and the inconsistent response of each context (equal
    lengths). Returns, per metric, the ``n_boot`` Spearman correlations (0 where all system scores tie).
    Every metric sees the same draws."""
    from scipy.stats import spearmanr

    levels = np.asarray(levels, float)
    if len(levels) < 3 or ((levels <= 0) | (levels >= 1)).any():
        raise ValueError(f"levels must be at least 3 shares in (0, 1), got {levels.tolist()}")
    if n_boot < 1 or n_draw < 1:
        raise ValueError(f"n_boot and n_draw must be positive, got {n_boot}, {n_draw}")
    n = {len(np.asarray(a)) for g_b in pairs.values() for a in g_b}
    if len(n) != 1 or n == {0} or n == {1}:
        raise ValueError(f"every good/bad array must hold the same number (at least 2) of contexts, got {sorted(n)}")
    for m, (g, b) in pairs.items():
        if np.isnan(np.asarray(g, float)).any() or np.isnan(np.asarray(b, float)).any():
            raise ValueError(f"{m}: NaN scores; leave uncovered contexts out first")
    (n_ctx,) = n
    rng = np.random.default_rng(seed)
    n_bad = np.rint(levels * n_draw).astype(int)
    rho = {m: np.empty(n_boot) for m in pairs}
    for b in range(n_boot):
        pick = rng.integers(0, n_ctx, n_draw)
        bad_mask = np.zeros((len(levels), n_draw), bool)
        for i, k in enumerate(n_bad):
            bad_mask[i, rng.choice(n_draw, k, replace=False)] = True
        for m, (g, x) in pairs.items():
            sys_score = np.where(bad_mask, np.asarray(x, float)[pick], np.asarray(g, float)[pick]).mean(axis=1)
            if np.ptp(sys_score) == 0:
                rho[m][b] = 0.0      # all systems tie: no ranking (spearmanr would return NaN)
            else:
                rho[m][b] = spearmanr(sys_score, 1 - levels).statistic
    return rho


def q2_table4(q2_scorer, dataset: str = "q2", n_boot: int = 1000, n_draw: int = 350, levels=Q2_T4_LEVELS,
              seed: int = 0) -> pd.DataFrame:
    """Q² Table 4: system-level correlation on simulated systems.

    Each bootstrap repeat draws ``n_draw`` contexts with replacement from :func:`q2_t4_contexts`; simulated
    system *i* answers a random ``levels[i]`` share of them with the inconsistent response and the rest with
    the consistent one; its system score is the metric's mean over its responses. The repeat's value is the
    Spearman correlation between the five system scores and the systems' consistent shares (1 − level).
    Mean and 2.5/97.5 percentiles over ``n_boot`` repeats; every metric sees the same draws.

    The paper says "correlation" without naming it; its printed bounds (0.9, 1, 0.5, −0.8) are all
    multiples of 0.1, the only values a Spearman correlation of five points takes, so Spearman it is.
    Written by hand: the simulation is the paper's own procedure, not a library routine."""
    ctx = q2_t4_contexts(q2_scorer, dataset)
    metrics = ("q2_f1", "overlap_f1_rk", "bleu")
    rho = system_corr_bootstrap({m: (ctx[f"good_{m}"].to_numpy(), ctx[f"bad_{m}"].to_numpy()) for m in metrics},
                                levels=levels, n_boot=n_boot, n_draw=n_draw, seed=seed)
    sig = ctx.attrs["signatures"]
    rows = []
    for m in metrics:
        for stat, v in (("system_corr_mean", rho[m].mean()), ("system_corr_ci95_lower", np.percentile(rho[m], 2.5)),
                        ("system_corr_ci95_upper", np.percentile(rho[m], 97.5))):
            rows.append({"row": stat, "column": m, "value": float(v), "signature": sig[m],
                         "contexts": len(ctx), "mixed_contexts": ctx.attrs["mixed"]})
    return pd.DataFrame(rows)


def usr_correlations(human, score, covered=None) -> dict:
    """Spearman and Pearson of ``score`` with the human ratings: on the ``covered`` rows (a valid question;
    Q² Table 6's choice) and with uncovered rows set to 0 (the alternative the paper also reports).
    Without ``covered`` every row counts. Returns ``{(stat, variant): (r, p, n)}``."""
    from tfc.meta.correlation import correlation

    h, s = np.asarray(human, float), np.asarray(score, float)
    if len(h) != len(s):
        raise ValueError(f"human ratings and scores differ in length: {len(h)} vs {len(s)}")
    cov = np.ones(len(s), bool) if covered is None else np.asarray(covered, bool)
    if np.isnan(h).any() or np.isnan(s[cov]).any():
        raise ValueError("NaN in the human ratings or in a covered score")
    out = {}
    for variant, (x, y) in {"covered": (h[cov], s[cov]), "zero_filled": (h, np.where(cov, s, 0.0))}.items():
        for stat in ("spearman", "pearson"):
            r, p = correlation(x, y, stat)     # raises on fewer than 3 pairs or a constant side
            out[(stat, variant)] = (float(r), float(p), int(len(x)))
    return out


def q2_table6(q2_scorer, dataset: str = "topicalchat_usr") -> pd.DataFrame:
    """Q² Table 6: turn-level Spearman and Pearson with USR's Topical-Chat "Uses Knowledge" ratings
    (``topicalchat_usr``), Q² F1 (``aux_f1_only``) on the responses with a valid question and 0-filled, and
    our overlap F1 and BLEU beside it (not in the paper's table). Q² rows need its committed cache: none
    without one. Long form: row ``topicalchat_uses_knowledge_<stat>``, column, value, p_value, n, signature."""
    from tfc import data

    df = data.load(dataset)
    got = cached(q2_scorer, dataset)
    rows = []

    def add(column, res, variant, sig):
        for stat in ("spearman", "pearson"):
            r, p, n = res[(stat, variant)]
            rows.append({"row": f"topicalchat_uses_knowledge_{stat}", "column": column, "value": r, "p_value": p,
                         "n": n, "signature": sig})

    if got["score"].notna().all() and "aux_f1_only" in got:
        res = usr_correlations(df["human_score"], got["aux_f1_only"].fillna(0.0), covered(got))
        add("q2_f1", res, "covered", q2_scorer.signature)
        add("q2_f1_zero_filled", res, "zero_filled", q2_scorer.signature)
    for column, (scores, sig) in overlap_baselines(dataset).items():
        add(column, usr_correlations(df["human_score"], scores), "covered", sig)
    return pd.DataFrame(rows)

# --------------------------------------------------------------------------------------------------
# hand judgements of rule-generated questions (issue 17, item 2)

QG_SOURCES = ("vitaminc_test", "wecheck_dialogue")   # training-side mirrors, never evaluation sets
JUDGEMENT_COLUMNS = ["id", "source", "context", "candidate", "question", "well_formed", "answer_is_candidate",
                     "note"]


def sample_qg_questions(n: int = 200, seed: int = 0, rules: str = "v2", sources=QG_SOURCES,
                        max_context: int = 240) -> pd.DataFrame:
    """A seeded sample of rule-generated questions for hand judgement: ``n // len(sources)`` per source;
    per row of a source (visited in a seeded order), one answer candidate of its generated text drawn at
    random, and the question Q² would ask about it (the first question of :class:`RuleQG`). Rows without a
    candidate, or whose candidate gets no question, are passed over (counted in ``attrs["passed_over"]``).
    ``context`` is the generated text, cut at ``max_context`` characters."""
    from tfc import data
    from tfc.scorers.qgqa import RuleQG, answer_candidates, reading_text

    qg = RuleQG(num_return=1, rules=rules)
    per = n // len(sources)
    rows, passed = [], {}
    for src in sources:
        df = data.load(src)
        rng = np.random.default_rng([seed, len(src)])
        order = rng.permutation(len(df))
        got, skipped, pos = 0, 0, 0
        while got < per and pos < len(order):
            chunk = order[pos: pos + 4 * per]
            pos += len(chunk)
            texts = reading_text(df["generated"].iloc[chunk], rules)   # as the scorers read it
            ids = df["id"].iloc[chunk].tolist()
            for rid, text, cands in zip(ids, texts, answer_candidates(texts)):
                if got >= per:
                    break
                if not cands:
                    skipped += 1
                    continue
                cd = cands[int(rng.integers(len(cands)))]
                qs = qg.generate([text], [cd])[0]
                if not qs:
                    skipped += 1
                    continue
                ctx = text if len(text) <= max_context else text[:max_context].rsplit(" ", 1)[0] + " ..."
                rows.append({"id": rid, "source": src, "context": ctx, "candidate": cd.text, "question": qs[0][0]})
                got += 1
        passed[src] = skipped
    out = pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS[:5])
    out.attrs.update(rules=qg.version, seed=seed, passed_over=passed)
    return out


def summarise_qg_judgements(path) -> pd.DataFrame:
    """Shares of a judged question sample (a CSV with :data:`JUDGEMENT_COLUMNS`, 0/1 judgements): per source
    and overall, the number of questions, the share well-formed, the share whose answer is the candidate,
    and the share with both. The rule version is read from the file name (``rules-<version>.csv``)."""
    from pathlib import Path

    p = Path(path)
    df = pd.read_csv(p)
    missing = set(JUDGEMENT_COLUMNS) - set(df.columns)
    if missing:
        raise ValueError(f"{p} lacks columns {sorted(missing)}")
    for col in ("well_formed", "answer_is_candidate"):
        bad = ~df[col].isin([0, 1])
        if bad.any():
            raise ValueError(f"{p}: {col} must be 0 or 1; rows {df.index[bad].tolist()[:5]}")
    version = p.stem.split("rules-", 1)[1] if "rules-" in p.stem else ""
    rows = []
    for name, g in [*df.groupby("source", sort=True), ("all", df)]:
        rows.append({"source": name, "questions": len(g), "well_formed": g["well_formed"].mean(),
                     "answer_is_candidate": g["answer_is_candidate"].mean(),
                     "both": (g["well_formed"].astype(bool) & g["answer_is_candidate"].astype(bool)).mean(),
                     "rules": version})
    return pd.DataFrame(rows)


QG_JUDGED_DRAWS = {"rule version 2 (seed 0)": "v2", "rule version 3, the same draw (seed 0)": "v3",
                   "rule version 3, a fresh draw (seed 1)": "v3-seed1"}


def qg_judgement_table(draws: dict | None = None) -> pd.DataFrame:
    """The committed hand judgements of several rule versions and draws side by side: ``{label: file version}``
    (default :data:`QG_JUDGED_DRAWS`; files :func:`qg_judgements_path`), one :func:`summarise_qg_judgements` row per
    source and overall, labelled in a ``draw`` column."""
    parts = [summarise_qg_judgements(qg_judgements_path(v)).assign(draw=label)
             for label, v in (QG_JUDGED_DRAWS if draws is None else draws).items()]
    t = pd.concat(parts, ignore_index=True)
    return t[["draw", "source", "questions", "well_formed", "answer_is_candidate", "both"]]


# Q² Figures 4 and 5: the inconsistent shares of the simulated systems (paper §6.1, "Score Robustness")
Q2_F4_LEVELS = tuple(round(0.1 * i, 1) for i in range(11))
Q2_F5_LEVELS = (0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 1.0)


def score_robustness(metrics: dict, consistent, levels=Q2_F4_LEVELS, n_boot: int = 1000, n_draw: int = 400,
                     seed: int = 0) -> pd.DataFrame:
    """Q² Figures 4 and 5 ("score robustness"): the system-level score each metric gives a simulated system
    whose responses are inconsistent in a share *c* of cases, whatever the input.

    For each *c* of ``levels`` and each of ``n_boot`` repeats, round(*c* · ``n_draw``) responses are drawn
    with replacement from the inconsistent ones (``consistent`` false) and the rest from the consistent ones;
    the system score is the mean over the ``n_draw`` responses (the paper draws 400 from both systems' annotated
    responses and repeats 1000 times). Every metric sees the same draws. ``metrics`` maps a name to one score
    per response (no NaN: fill responses without a valid question first). Returns ``metric, level, mean,
    ci_low, ci_high`` (2.5 and 97.5 percentiles over the repeats). Written by hand: the paper's simulation,
    not a library routine."""
    ok = np.asarray(consistent, bool)
    levels = np.asarray(levels, float)
    if ok.all() or not ok.any():
        raise ValueError("score_robustness needs both consistent and inconsistent responses")
    if levels.size == 0 or ((levels < 0) | (levels > 1)).any():
        raise ValueError(f"levels must be shares in [0, 1], got {levels.tolist()}")
    if n_boot < 1 or n_draw < 1:
        raise ValueError(f"n_boot and n_draw must be positive, got {n_boot}, {n_draw}")
    scores = {}
    for name, v in metrics.items():
        v = np.asarray(v, float)
        if len(v) != len(ok) or np.isnan(v).any():
            raise ValueError(f"{name}: need {len(ok)} scores without NaN, got {len(v)} ({int(np.isnan(v).sum())} NaN)")
        scores[name] = (v[ok], v[~ok])
    good_n, bad_n = int(ok.sum()), int((~ok).sum())
    rng = np.random.default_rng(seed)
    rows = []
    for c in levels:
        k = int(np.rint(c * n_draw))
        pick_bad = rng.integers(0, bad_n, (n_boot, k))
        pick_good = rng.integers(0, good_n, (n_boot, n_draw - k))
        for name, (g, b) in scores.items():
            sys_score = (b[pick_bad].sum(axis=1) + g[pick_good].sum(axis=1)) / n_draw
            rows.append({"metric": name, "level": float(c), "mean": float(sys_score.mean()),
                         "ci_low": float(np.percentile(sys_score, 2.5)), "ci_high": float(np.percentile(sys_score, 97.5))})
    return pd.DataFrame(rows)


def robustness_figure(curves: dict):
    """One row of panels per :func:`score_robustness` frame (``{row title: frame}``), one panel per metric: the
    mean system score against the share of inconsistent responses, with its 95% band. Each metric keeps its own
    y scale (BLEU's is not F1's). Returns the figure."""
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(m for c in curves.values() for m in c["metric"]))
    fig, axes = plt.subplots(len(curves), len(metrics), figsize=(3.2 * len(metrics), 2.8 * len(curves)),
                             squeeze=False, sharey="col")
    for row, (title, curve) in zip(axes, curves.items()):
        for ax, m in zip(row, metrics):
            d = curve[curve["metric"] == m].sort_values("level")
            ax.fill_between(d["level"], d["ci_low"], d["ci_high"], alpha=0.3)
            ax.plot(d["level"], d["mean"], marker="o", ms=3)
            ax.set_title(f"{m} ({title})", fontsize=9)
            ax.set_xlabel("share of inconsistent responses")
    for row in axes:
        row[0].set_ylabel("system score")
    fig.tight_layout()
    return fig


def robustness_summary(curve: pd.DataFrame) -> pd.DataFrame:
    """Per metric of a :func:`score_robustness` frame: the mean system score with no and with only inconsistent
    responses (the lowest and highest level), their difference, the mean width of the 95% interval over the
    levels, and the ratio of the two (how many interval widths the full range of inconsistency moves a
    system's score: the paper's point that a wider interval can still separate better)."""
    rows = []
    for name, d in curve.groupby("metric", sort=False):
        d = d.sort_values("level")
        lo, hi = float(d["mean"].iloc[0]), float(d["mean"].iloc[-1])
        width = float((d["ci_high"] - d["ci_low"]).mean())
        rows.append({"metric": name, "score, fewest inconsistent": lo, "score, most inconsistent": hi,
                     "drop": lo - hi, "mean 95% interval width": width,
                     "drop / width": (lo - hi) / width if width > 0 else float("inf")})
    return pd.DataFrame(rows).set_index("metric")


def robustness_text(summary: pd.DataFrame) -> str:
    """One sentence from :func:`robustness_summary`: how far each metric's system score falls over the full
    range of inconsistency, in its own units and in widths of its 95% interval, and which moves most."""
    if not len(summary):
        return "No Q² scores of the annotated responses are cached, so the simulation was not run."
    parts = ", ".join(f"{m} {r['drop']:.3f} ({r['drop / width']:.1f} widths)" for m, r in summary.iterrows())
    best = summary["drop / width"].idxmax()
    return (f"From no inconsistent response to all of them, the mean system score falls by {parts}; the metric "
            f"that moves most for the width of its interval is {best}.")


def pr_curves(y, metrics: dict) -> tuple[pd.DataFrame, dict]:
    """Precision-recall curves (stacked, with a ``metric`` column) and the average precision of each
    ``{name: scores}`` at detecting ``y == 1``; every score is negated (a low score flags the positive)."""
    curves, ap = [], {}
    for name, s in metrics.items():
        p, r, _ = precision_recall_curve(y, -np.asarray(s))
        curves.append(pd.DataFrame({"metric": name, "precision": p, "recall": r}))
        ap[name] = average_precision_score(y, -np.asarray(s))
    return pd.concat(curves), ap


def nli_sweep_table(rec: dict | None, what: str = "NLI step") -> pd.DataFrame:
    """A dev sweep's record (:func:`tfc.runs.qgqa.nli_step_sweep`'s, or :func:`~tfc.runs.qgqa.option_sweep`'s with
    ``what="options"``) as a table: one row per candidate, dev AUC × 100 per dev set and their mean, the current
    and the chosen candidate marked."""
    if not rec:
        return pd.DataFrame(columns=[what, "current", "chosen"])
    rows = [{what: k, **v, "current": k == rec["current"], "chosen": k == rec["chosen"]}
            for k, v in rec["auc"].items()]
    return pd.DataFrame(rows)


def nli_sweep_text(rec: dict | None, what: str = "step") -> str:
    """One sentence: the dev rows, the margin, the current candidate's and the best candidate's mean AUC, and the
    choice (``what`` names a candidate: "step" for the NLI-step sweep, "options" for the option sweep)."""
    if not rec:
        return f"No dev sweep of the {'NLI step' if what == 'step' else what} is recorded."
    auc = rec["auc"]
    best = max(auc, key=lambda k: auc[k]["mean"])
    rows = ", ".join(f"{n:,} {k}" for k, n in rec["rows"].items())
    plural = what.endswith("s")
    text = (f"On {rows} dev rows, the current {what} ({rec['current']}) {'have' if plural else 'has'} mean AUC "
            f"{auc[rec['current']]['mean']:.2f}; the best is {best} at {auc[best]['mean']:.2f}")
    if best == rec["current"]:
        return text.rsplit("; the best", 1)[0] + f", the best of the candidates, so {'they stay' if plural else 'it stays'}."
    if rec["chosen"] == rec["current"]:
        return text + f", not more than {rec['margin']:g} points better, so the current {what} {'stay' if plural else 'stays'}."
    return text + f", {auc[best]['mean'] - auc[rec['current']]['mean']:.1f} points better (margin {rec['margin']:g}), so it is chosen."
