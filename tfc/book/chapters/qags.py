"""Tables, figures and numbers of the QAGS chapter (``notebooks/03_qags.md``), computed from the score cache
and the QA model's training records (the loops live here, not in the notebook).

* :func:`qags_table1` -- QAGS Table 1: summary-level Pearson r × 100 with the QAGS human scores
  (``qags_cnndm_scores``/``qags_xsum_scores``) for ROUGE-1/2/L, BLEU-1..4, BERTScore and QAGS. The
  QAGS human-score sets have the same texts, row for row, as TRUE's ``qags_cnndm``/``qags_xsum``
  (checked), so scores cached for the TRUE sets are joined by position.
* :func:`qags_table4` -- the number of questions K, from the ``aux_mean_k<K>`` cache columns.
* :func:`qags_variant_table` -- the analogues of QAGS Tables 2 and 3 (readers / question generators of
  different quality against the correlation they give); :func:`qa_dev_curve` -- the QA model's dev curve.

The parts the Q² chapter reads too (cached score rows, pipeline stage rates, the hand judgements of generated
questions) live in :mod:`tfc.book.qgqa_scoring` and :mod:`tfc.book.qg_judgements`. ``cache_only`` (where taken):
the book reads the committed caches; ``cache_only=False`` computes missing rows (slow for QAGS on a CPU).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
from scipy.stats import pearsonr

from tfc import data as D
from tfc.book import reference
from tfc.book.qgqa_scoring import DIALOGUE, cached, lexical_scores
from tfc.data.manifest import raw_path
from tfc.scorers.lexical import bleu_parts

QAGS_SETS = {"qags_cnndm": "qags_cnndm_scores", "qags_xsum": "qags_xsum_scores"}
# BLEU with sacrebleu's default "exp" smoothing: without smoothing most one-sentence summaries and
# dialogue responses get BLEU 0 (no 4-gram match), which is not what either paper reports
_EXP = {"smooth_method": "exp"}
LEXICAL_T1 = {"rouge_1": ("rouge1", {}), "rouge_2": ("rouge2", {}), "rouge_l": ("rougeL", {}),
              "bleu1": ("bleu4", {"max_ngram_order": 1, **_EXP}), "bleu2": ("bleu4", {"max_ngram_order": 2, **_EXP}),
              "bleu3": ("bleu4", {"max_ngram_order": 3, **_EXP}), "bleu4": ("bleu4", _EXP),
              "bertscore": ("bertscore", {})}


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
                    got = lexical_scores(sc, ds)
            except Exception as exc:  # noqa: BLE001 - a missing cache shows as NaN with the reason
                rows.append({"row": ds, "column": col, "value": np.nan, "p_value": np.nan, "n": 0,
                             "signature": sc.signature, "note": f"not available: {exc}"})
                continue
            r, p, n = _pearson(got["score"], human.loc[got["id"]].to_numpy())
            rows.append({"row": ds, "column": col, "value": 100 * r, "p_value": p, "n": n,
                         "signature": sc.signature, "note": ""})
    return pd.DataFrame(rows)


def t1_value(t1: pd.DataFrame, dataset: str, column: str = "qags") -> float:
    """One cell of :func:`qags_table1`: Pearson r × 100 of ``column`` on ``dataset`` (NaN when absent)."""
    v = t1.loc[(t1["row"] == dataset) & (t1["column"] == column), "value"]
    return float(v.iloc[0]) if len(v) else float("nan")


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


def qa_plateau(record: dict, within: float = 1.0) -> dict:
    """Where a QA run's dev curve (:func:`qa_dev_curve`) levels off: for held-out F1 and XQuAD-English F1 (× 100),
    the curve's best reading (``heldout_best``, ``xquad_best``) and the first step from which every later reading
    stays within ``within`` points of it (``heldout_from``, ``xquad_from``); NaN where the curve has no such
    reading."""
    curve = qa_dev_curve(record)
    out = {}
    for col, key in (("heldout_f1", "heldout"), ("xquad_f1", "xquad")):
        c = curve.dropna(subset=[col])
        best = first = np.nan
        if len(c):
            best = float(c[col].max())
            far = np.flatnonzero(c[col].to_numpy() < best - within)    # the plateau starts after the last far reading
            first = int(c["step"].iloc[far[-1] + 1 if len(far) else 0])
        out[f"{key}_best"], out[f"{key}_from"] = best, first
    return out


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


QA_CROSS_TARGET = 0.7   # the cross-text F1 a QA reader should reach on the held-out training-side passages


def qa_runs_table(checkpoints: dict, within: float = 1.0) -> pd.DataFrame:
    """One row per QA training run (``{label: "tfc/<name>"}``; a run with no committed record is left out): how
    long it trained (steps, examples, passes over the training rows, minutes, examples/s, dtype) and its final
    dev metrics × 100 (held-out F1, the cross-text and VitaminC contrast kinds, XQuAD-English F1), with whether
    cross-text F1 reaches :data:`QA_CROSS_TARGET`, and where its dev curve levels off (``curve: ...`` columns,
    :func:`qa_plateau`: the curve's best held-out and XQuAD F1 and the step from which it stays within ``within``
    points of each; the final metrics are the record's last evaluation, not a curve reading)."""
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
        flat = qa_plateau(rec, within)
        rows.append({"run": label, "steps": rec.get("steps"), "examples": rec.get("examples_seen"),
                     "passes": rec.get("epochs_seen"), "stopped by": rec.get("stopped_by"),
                     "train minutes": round(rec["train_seconds"] / 60, 1) if rec.get("train_seconds") else np.nan,
                     "examples/s": rec.get("examples_per_second"), "dtype": rec.get("dtype"),
                     "device": str(rec.get("device") or "").split(" (")[0] or None,
                     "held-out F1": pct(ev.get("f1")), "cross F1": pct(cross),
                     "contrast F1": pct((kinds.get("contrast") or {}).get("f1")), "XQuAD F1": pct(xq.get("f1")),
                     f"cross F1 ≥ {100 * QA_CROSS_TARGET:.0f}": None if cross is None else bool(cross >= QA_CROSS_TARGET),
                     "curve: best held-out F1": round(flat["heldout_best"], 1),
                     f"curve: held-out F1 within {within:g} from step": flat["heldout_from"],
                     "curve: best XQuAD F1": round(flat["xquad_best"], 1),
                     f"curve: XQuAD F1 within {within:g} from step": flat["xquad_from"]})
    out = pd.DataFrame(rows)
    for col in (f"curve: held-out F1 within {within:g} from step", f"curve: XQuAD F1 within {within:g} from step"):
        if col in out:
            out[col] = out[col].astype("Int64")
    return out


QA_ROUND_TRIP_METRICS = {"heldout_f1": "held-out F1", "cross_f1": "cross-text F1", "xquad_f1": "XQuAD-English F1"}


def qa_round_trip_table(names) -> pd.DataFrame:
    """Per QA run (``"tfc/<name>"``) whose record has ``weights_round_trip`` (trained elsewhere, its weights brought
    back as fp16 and read again here): the dev metrics of :data:`QA_ROUND_TRIP_METRICS` × 100 as read on the
    training device and as read again on this CPU, and the change. Runs without a record or a re-reading are left
    out."""
    from tfc import models

    cols = ["run", "metric", "on the device", "re-read on a CPU", "Δ"]
    rows = []
    for name in names:
        try:
            rec = models.training_record(name)
        except FileNotFoundError:
            continue
        again = (rec.get("weights_round_trip") or {}).get("cpu_reeval_after_round_trip") or {}
        ev, xq = rec.get("heldout_eval") or {}, rec.get("dev_eval_human") or {}
        device = {"heldout_f1": ev.get("f1"), "cross_f1": ((ev.get("by_kind") or {}).get("cross") or {}).get("f1"),
                  "xquad_f1": xq.get("f1")}
        rows += [{"run": name, "metric": label, "on the device": 100 * device[key], "re-read on a CPU": 100 * again[key],
                  "Δ": 100 * (again[key] - device[key])}
                 for key, label in QA_ROUND_TRIP_METRICS.items()
                 if device[key] is not None and again.get(key) is not None]
    return pd.DataFrame(rows, columns=cols)


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


def rerun_summary(drift: pd.DataFrame, original: str = "tfc/qa-minilm", rerun: str = RERUN_READER) -> dict:
    """The reader rebuilt from its record against the committed one, in numbers: the rerun's training (``steps``,
    ``minutes``, ``examples_per_second``); ``same_qa_set`` (its QA set's sha256 equals the record's; None when
    either is unrecorded); its dev curve against the record's at the steps both read (``curve_points``, and
    ``curve_gap``: the largest |Δ| in F1 points over every reading); the weights' identities (``identity``,
    ``committed_identity``, ``same_identity``); and :func:`rerun_drift_table` over the sets the rerun scored
    (``rows``, ``sets``, ``same_pct``: the row-weighted share of unchanged scores, ``max_score_delta``, and
    ``max_metric_delta``: the largest |Δ| of a set's Pearson or AUC × 100). NaN (None for the identities) where a
    record or a score is missing."""
    from tfc import models

    out = dict.fromkeys(("steps", "minutes", "examples_per_second", "curve_points", "curve_gap", "rows", "sets",
                         "same_pct", "max_score_delta", "max_metric_delta"), np.nan)
    out.update(same_qa_set=None, identity=None, committed_identity=None, same_identity=None)
    try:
        ra, rb = models.training_record(original), models.training_record(rerun)
    except FileNotFoundError:
        return out
    ca, cb = qa_dev_curve(ra).set_index("step"), qa_dev_curve(rb).set_index("step")
    common = ca.index.intersection(cb.index)
    cols = [c for c in ca.columns if c != "examples"]      # every reading: held-out F1 by kind, no-answer, XQuAD
    sha_a, sha_b = ((r.get("mix") or {}).get("sha256") for r in (ra, rb))
    ida, idb = (models.committed_identity(original) or {}).get("identity"), models.identity(rerun)
    out.update(steps=int(rb["steps"]), minutes=rb["train_seconds"] / 60, examples_per_second=rb["examples_per_second"],
               same_qa_set=None if not (sha_a and sha_b) else sha_a == sha_b, curve_points=len(common),
               identity=idb, committed_identity=ida, same_identity=ida == idb)
    if len(common):
        out["curve_gap"] = float(np.nanmax(np.abs(ca.loc[common, cols].to_numpy(float)
                                                  - cb.loc[common, cols].to_numpy(float))))
    d = drift.dropna(subset=["Δ"])
    if len(d):
        out.update(rows=int(d["rows"].sum()), sets=len(d), same_pct=float(np.average(d["same %"], weights=d["rows"])),
                   max_score_delta=float(d["max |Δ score|"].max()), max_metric_delta=float(d["Δ"].abs().max()))
    return out


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


def variant_pair(t: pd.DataFrame, a: str, b: str, paper: str | None = None) -> pd.DataFrame:
    """Two variants of a :func:`qags_variant_table` frame side by side, one row per QAGS set: QAGS's Pearson r × 100
    with ``a`` and with ``b`` and their difference (``a_minus_b``); with ``paper`` (a reference table with a ``qags``
    column, e.g. "QAGS-T1") also the paper's cell and ``a``'s difference to it (``a_minus_paper``). NaN where a variant
    has no fully scored set; KeyError for a variant not in the table."""
    t = t.set_index("variant")
    out = pd.DataFrame({"a": [t.loc[a, f"{ds}_pearson"] for ds in QAGS_SETS],
                        "b": [t.loc[b, f"{ds}_pearson"] for ds in QAGS_SETS]}, index=list(QAGS_SETS), dtype=float)
    out["a_minus_b"] = out["a"] - out["b"]
    if paper is not None:
        ref = reference.load(paper)
        ref = ref[ref["column"] == "qags"].set_index("row")["value"]
        out["paper"] = [float(ref.get(ds, np.nan)) for ds in QAGS_SETS]
        out["a_minus_paper"] = out["a"] - out["paper"]
    return out


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
