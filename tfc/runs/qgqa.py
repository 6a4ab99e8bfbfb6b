"""Scoring runs of the QAGS and Q² scorers with the in-house backends, their records and summary tables.

A run scores one dataset (or a stratified sample) through the score cache (resumable) and is recorded
in ``results/models/qa-minilm/scoring_runs.json`` with rows, questions asked, wall time, examples/s,
coverage (rows with a score, i.e. at least one valid question) and ROC AUC on the covered rows and with
uncovered rows set to 0. Rows whose inputs already have a score under the same signature in another
dataset's cache are copied first (:func:`tfc.runs.scoring_runs.reuse_identical`; e.g. ``q2_paper`` repeats
``q2`` texts).

``PLAN`` is the order of the runs: every row of every set, the dialogue sets and both QAGS sets first, the
long-document summarisation sets last (what was actually committed is in the run records and the chapters).
``tfc train score-qgqa q2 --dataset D`` runs one entry; two one-thread processes may run side by side.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pandas as pd

QA_CHECKPOINT = "tfc/qa-minilm"
# the same run's weights at step 400 (a weaker reader; the QAGS Table 2 analogue): tfc.train.qa.snapshot_from_state
QA_SNAPSHOT = "tfc/qa-minilm-s400"
# the reader trained on a GPU (chosen by its dev metrics on cross-text questions, not by QAGS): a third
# reader of the QAGS Table 2 analogue and the reader of the Q² dialogue variant (VARIANT_Q2). Not the scorers'
# default: swapping the default means rescoring every committed QAGS and Q² set
QA_GPU = "tfc/qa-minilm-v3"
# Q²'s NLI step (and TRUE's NLI fallback) reads with the strongest in-house NLI model, sent-minilm-v8 (its 3-way
# head: entailment / neutral / contradiction) rather than the weaker tfc/nli-minilm
NLI_CHECKPOINT = "tfc/sent-minilm-v8"
# the steps every committed Q² and QAGS run read with, named because the as-published configurations follow the
# authors' code: tfc's own steps (SQuAD normalisation, the best start <= end span, the QAGS filters in candidate
# order), Q²'s first candidate rule, 0 for a text without a valid question, every valid beam of a candidate
Q2_RUN_STEPS = {"steps": "tfc", "candidate_rule": "tfc", "no_questions": "zero", "q_per_candidate": "multi"}
QAGS_RUN_STEPS = {"steps": "tfc"}
Q2_DEFAULT = {"checkpoint": QA_CHECKPOINT, "nli_checkpoint": NLI_CHECKPOINT, "qa_max_length": 384, **Q2_RUN_STEPS}
QAGS_DEFAULT = {"checkpoint": QA_CHECKPOINT, "qa_max_length": 512, **QAGS_RUN_STEPS}
# Q² with the GPU reader on the dialogue sets: v8's fp32 weights are lost, so its NLI step reads with v8's int8
# release (two changes against Q2_DEFAULT, both named in the chapter)
NLI_RELEASE = "tfc/sent-minilm-v8-int8"
VARIANT_Q2 = {"checkpoint": QA_GPU, "nli_checkpoint": NLI_RELEASE, "qa_max_length": 384}
QUESTION_COLUMN = {"q2": "aux_n_valid", "qags": "aux_n_questions"}
# every row of every set, the dialogue sets and QAGS first (the papers' own sets), the long-document sets last
PLAN = (
    [{"scorer": "q2", "dataset": d} for d in ("q2", "begin", "q2_paper", "topicalchat_usr", "dialfact")]
    + [{"scorer": "qags", "dataset": d} for d in ("qags_xsum", "qags_cnndm")]
    + [{"scorer": "q2", "dataset": d} for d in ("qags_xsum", "paws", "qags_cnndm", "mnbm", "frank", "summeval")]
)


def scorer_for(name: str, **overrides):
    """The in-house QAGS / Q² scorer (``name`` in {"qags", "q2"}) with the run defaults plus overrides."""
    from tfc import scorers

    base = {"q2": Q2_DEFAULT, "qags": QAGS_DEFAULT}[name]
    return scorers.get(name, preset="as-published", **{**base, **overrides})


TRUE_VARIANT = {"validation": "f1", "no_questions": "nli"}   # TRUE's Q²: F1 >= 0.54 validation, NLI fallback


def true_variant_frame(frame: pd.DataFrame, nli_scores) -> pd.DataFrame:
    """A Q² cache frame (the run's defaults: exact-match validation) as TRUE's variant: the score is the
    ``aux_true_q2`` column (the same run's F1-validated questions) where the row has such a question, else the
    end-to-end NLI score (``nli_scores(row_mask)`` -> scores of those rows, in order); ``aux_n_valid`` becomes
    the F1-validated count; the columns a direct run of the variant would compute differently are dropped."""
    for col in ("aux_true_q2", "aux_n_valid_true"):
        if col not in frame:
            raise ValueError(f"the Q² cache has no {col} column (computed before TRUE's variant was kept)")
    has = frame["aux_n_valid_true"].fillna(0).to_numpy() > 0
    if np.isnan(frame.loc[has, "aux_true_q2"].to_numpy(float)).any():
        raise ValueError("aux_true_q2 is NaN on a row with an F1-validated question")
    score = frame["aux_true_q2"].to_numpy(float).copy()
    score[~has] = np.asarray(nli_scores(~has), dtype=float)
    frame["score"] = score
    frame["aux_n_valid"] = frame["aux_n_valid_true"].astype("int32")
    return frame.drop(columns=["aux_true_q2", "aux_n_valid_true", "aux_f1_only", "aux_n_no_answer"], errors="ignore")


def derive_true_variant(dataset: str, root=None, **overrides) -> list[dict]:
    """TRUE's Q² (``TRUE_VARIANT``) on ``dataset`` from the committed Q² cache: the run kept the F1-validated
    questions' mean (``aux_true_q2``), so only the rows without one need a model, the end-to-end NLI score of
    ``nli_checkpoint`` (:func:`true_variant_frame`; written with :func:`tfc.cache.derive`). A split whose source
    cache does not cover it, or whose target exists, is skipped. ``overrides`` pick the run the variant is taken
    from (e.g. :data:`VARIANT_Q2`; default the committed run). One entry per derived split."""
    from tfc import cache, config, data

    root = config.cache_dir() if root is None else root
    src_sc, dst_sc = scorer_for("q2", **overrides), scorer_for("q2", **overrides, **TRUE_VARIANT)
    nli_ck = {**Q2_DEFAULT, **overrides}["nli_checkpoint"]
    df = data.load(dataset)
    out = []
    for split, sub in df.groupby("split", sort=False):
        src = cache.ScoreCache(src_sc.signature, dataset, str(split), root=root)
        dst = cache.ScoreCache(dst_sc.signature, dataset, str(split), root=root)
        if dst.exists() or not src.exists() or len(src.read()) < len(sub):
            continue
        texts = sub.set_index("id")[["grounding", "generated"]]
        n_nli = []

        def transform(frame, texts=texts, n_nli=n_nli):
            def nli(mask):
                t = texts.loc[frame.loc[mask, "id"]]
                n_nli.append(int(mask.sum()))
                return dst_sc._no_question_scores(t["grounding"].tolist(), t["generated"].tolist(),
                                                  range(int(mask.sum())))
            return true_variant_frame(frame, nli)

        cache.derive(src, dst, transform, dst_sc.describe(),
                     f"TRUE's Q² from the exact-match run's aux_true_q2; the rows without an F1-validated question "
                     f"scored end to end by {nli_ck} (the NLI model run on those rows only)")
        out.append({"dataset": dataset, "split": str(split), "from": src_sc.signature, "to": dst_sc.signature,
                    "rows_nli": n_nli[0] if n_nli else 0})
    return out


def coverage_auc(labels, scores, covered=None) -> dict:
    """AUC on the covered rows, AUC with uncovered rows set to 0, and the coverage (share of covered rows).
    A row is covered when it had a question (``covered``, e.g. ``aux_n_valid > 0``); without ``covered``,
    when its score is not NaN (the legacy ``no_questions="nan"`` caches)."""
    from tfc.meta import roc_auc

    y = np.asarray(labels)
    s = np.asarray(scores, dtype=float)
    ok = ~np.isnan(s) if covered is None else (np.asarray(covered, dtype=bool) & ~np.isnan(s))
    out = {"rows": int(len(s)), "covered": int(ok.sum()), "coverage": float(ok.mean()) if len(s) else float("nan")}
    out["auc_covered"] = float(roc_auc(y[ok], s[ok])) if ok.any() and len(set(y[ok])) == 2 else float("nan")
    out["auc_zero_fill"] = float(roc_auc(y, np.where(ok, s, 0.0))) if len(set(y)) == 2 else float("nan")
    return out


def stage_throughput(stage_seconds: dict, rows: int) -> dict:
    """The run record's per-stage cost: wall seconds per pipeline stage (:meth:`QGQAScorerBase.stage`) and
    responses per second through each stage alone (rows / stage seconds); empty when nothing was computed."""
    secs = {k: float(v) for k, v in stage_seconds.items() if v > 0}
    if not rows or not secs:
        return {}
    return {"stage_seconds": {k: round(v, 2) for k, v in secs.items()},
            "stage_responses_per_second": {k: round(rows / v, 2) for k, v in secs.items()}}


def score_run(name: str, dataset: str, sample: int | None = None, seed: int = 0, chunk_size: int = 64,
              batch_size: int | None = None, **overrides) -> dict:
    from tfc import data
    from tfc.runs.scoring_runs import measured_split

    scorer = scorer_for(name, **overrides)
    df = data.load(dataset, sample=sample, seed=seed)
    rec = {"scorer": name, "signature": scorer.signature, "backends": scorer.backends_label(), "dataset": dataset,
           "sample": sample, "seed": seed, "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "splits": {}}
    wall, computed, questions = 0.0, 0, 0
    frames = []
    for sp in df["split"].unique():
        sub = df[df["split"] == sp]
        got, new, lab, reused, w = measured_split(scorer, dataset, sp, sub, chunk_size=chunk_size,
                                                  batch_size=batch_size)
        qcol = "aux_n_valid" if name == "q2" else "aux_n_questions"
        nq = int(new[qcol].sum()) if qcol in new else 0
        cov = (got[qcol].fillna(0).to_numpy() > 0) if qcol in got else None
        rec["splits"][str(sp)] = {"rows": int(len(sub)), "computed_rows": int(len(new)), "reused_rows": int(reused),
                                  "wall_seconds": round(w, 1), **coverage_auc(lab, got["score"].to_numpy(), cov)}
        wall += w
        computed += len(new)
        questions += nq
        frames.append(pd.DataFrame({"label": lab, "score": got["score"].to_numpy(),
                                    "covered": cov if cov is not None else ~np.isnan(got["score"].to_numpy(float))}))
    allf = pd.concat(frames)
    rec.update(coverage_auc(allf["label"], allf["score"], allf["covered"]))
    rec.update(stage_throughput(getattr(scorer, "stage_seconds", {}), computed))
    rec.update(rows=int(len(df)), computed_rows=computed, wall_seconds=round(wall, 1),
               examples_per_second=round(computed / wall, 3) if computed and wall > 0 else None,
               questions_scored=questions)
    try:
        import torch

        rec["threads"] = int(torch.get_num_threads())
    except ImportError:  # pragma: no cover
        pass
    return rec


def record_path():
    from tfc import config

    return config.model_records_dir() / QA_CHECKPOINT[4:] / "scoring_runs.json"


def append_record(rec: dict) -> None:
    """Add (or replace) a run record in the QA model's record file (locked: parallel runs may finish at once)."""
    from tfc.runs.scoring_runs import append_record as _append

    _append(QA_CHECKPOINT, rec)


def load_records() -> pd.DataFrame:
    p = record_path()
    return pd.DataFrame(json.loads(p.read_text())) if p.is_file() else pd.DataFrame()


def run_plan(plan=None, threads: int | None = 1, deadline: str | None = None, log=print) -> list[dict]:
    """Run ``plan`` (default :data:`PLAN`) in order, recording each run; stops starting new runs after
    ``deadline`` (UTC ``HH:MM``)."""
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    out = []
    for run in plan or PLAN:
        now = datetime.now(timezone.utc).strftime("%H:%M")
        if deadline and now >= deadline:
            log(f"{now}: deadline {deadline} reached; not starting {run}")
            break
        rec = score_run(run["scorer"], run["dataset"], sample=run.get("sample"), **run.get("overrides", {}))
        append_record(rec)
        log(json.dumps({k: rec.get(k) for k in ("scorer", "dataset", "sample", "rows", "computed_rows",
                                                 "wall_seconds", "examples_per_second", "coverage",
                                                 "auc_covered", "auc_zero_fill")}))
        out.append(rec)
    return out


# --------------------------------------------------------------------------------------------------
# Q²'s NLI step, chosen on training-side dev data (never TRUE)

# candidates for the NLI step of the dialogue variant: the current one first (it stays unless another gains
# more than tfc.runs.aggregation.MARGIN in mean dev AUC); None = no NLI step (Q²'s F1 form, the aux_f1_only column)
NLI_CANDIDATES = (NLI_RELEASE, "tfc/sent-minilm-v2", "tfc/sent-minilm-v9", None)
NLI_SWEEP_ROWS = {"begin_test": 1500, "loo_anli": 600}
F1_FORM = "F1 form (no NLI step)"     # the NLI sweep's key for the F1 form (the None candidate)


def nli_sweep_path():
    from tfc import config

    return config.model_records_dir() / QA_GPU[4:] / "q2_nli_dev.json"


def _dev_frames(rows: dict | None, seed: int) -> dict:
    """The dev frames named in ``rows`` (name -> rows; default :data:`NLI_SWEEP_ROWS`), in its order."""
    from tfc.runs import aggregation as A

    build = {"begin_test": A.begin_dev, "loo_anli": A.loo_dev, "dialfact_test": A.dialfact_dev}
    rows = dict(NLI_SWEEP_ROWS if rows is None else rows)
    unknown = set(rows) - set(build)
    if unknown:
        raise ValueError(f"unknown dev frame(s) {sorted(unknown)}; known: {sorted(build)}")
    return {k: build[k](n, seed) for k, n in rows.items()}


def dev_frames(rec: dict | None = None) -> dict:
    """The dev frames a sweep record (:func:`load_nli_sweep`, :func:`load_option_sweep`, ...) was run on: its rows
    and seed, or the default rows and seed 0 without a record."""
    return _dev_frames(rec["rows"] if rec else None, rec["seed"] if rec else 0)


def _dev_auc(scorer, frames: dict, log=print, what: str = "") -> tuple[dict, dict]:
    """ROC AUC x100 of ``scorer`` on each dev frame: (Q²'s own score, its F1 form from ``aux_f1_only``, no
    question = 0 as the ``zero`` policy scores it)."""
    import time

    from tfc.meta import roc_auc

    own, f1_form = {}, {}
    for name, df in frames.items():
        t = time.perf_counter()
        s = scorer.score(df["grounding"].tolist(), df["generated"].tolist(), progress=False)
        f1 = np.nan_to_num(scorer.last_aux()["aux_f1_only"], nan=0.0)
        y = df["label"].astype(int).to_numpy()
        own[name], f1_form[name] = round(100 * roc_auc(y, s), 2), round(100 * roc_auc(y, f1), 2)
        log(f"{what} {name}: {own[name]} (F1 form {f1_form[name]}), {time.perf_counter() - t:.0f} s")
    return own, f1_form


def _with_mean(auc: dict) -> dict:
    for v in auc.values():
        v["mean"] = round(float(np.mean([x for k, x in v.items() if k != "mean"])), 2)
    return auc


def nli_step_sweep(candidates=NLI_CANDIDATES, rows: dict | None = None, seed: int = 0, write: bool = True,
                   log=print) -> dict:
    """Q² (:data:`VARIANT_Q2`'s reader) on the aggregation sweep's dev frames (:func:`tfc.runs.aggregation.dev_frames`:
    BEGIN v1 test through the leakage filter, leave-one-sentence-out ANLI passages), once per NLI checkpoint;
    ROC AUC x100 of each and of the F1 form (``None``; the same questions without the NLI step, read from
    ``aux_f1_only``, no question = 0 as the ``zero`` policy scores it). The rule is fixed before the run: the
    best mean AUC replaces the current step (the first candidate) only by a gain above
    :data:`tfc.runs.aggregation.MARGIN`. Writes the record (:func:`nli_sweep_path`) unless ``write=False``."""
    frames = _dev_frames(rows, seed)
    auc: dict = {}
    sigs: dict = {}
    for ck in [c for c in candidates if c is not None]:
        scorer = scorer_for("q2", **{**VARIANT_Q2, "nli_checkpoint": ck})
        sigs[ck] = scorer.signature
        auc[ck], f1_form = _dev_auc(scorer, frames, log, ck)
        if None in candidates:
            auc[F1_FORM] = f1_form
    _with_mean(auc)
    return _sweep_record({"what": "Q² NLI step chosen on training-side dev data (never TRUE)",
                          "reader": VARIANT_Q2["checkpoint"]}, frames, seed, candidates[0], auc, sigs,
                         nli_sweep_path() if write else None)


def _sweep_record(head: dict, frames: dict, seed: int, current: str, auc: dict, sigs: dict, path=None,
                  **extra) -> dict:
    """A dev sweep's record: ``head``, the dev rows, the rule's margin, the current and the chosen candidate
    (:func:`choose_step`), the AUCs and signatures; written to ``path`` when given."""
    from tfc.runs import aggregation as A

    rec = {**head, "rows": {k: len(v) for k, v in frames.items()}, "seed": seed, "margin": A.MARGIN,
           "current": current, "auc": auc, **extra, "signatures": sigs, "chosen": choose_step(auc, current, A.MARGIN),
           "run_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    if path is not None:
        _write_record(rec, path)
    return rec


def _write_record(rec: dict, path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec, indent=1) + "\n")


def _read_record(path) -> dict | None:
    """A committed sweep or analysis record, or None when it is not written."""
    return json.loads(path.read_text()) if path.is_file() else None


# The dev-chosen configuration (:func:`dev_chosen`): three sweeps on the same dev data, each run over the previous
# one's choice (:data:`SWEEPS`). They start from the dialogue variant read with QA_GPU's recipe trained again on
# a GPU (QA_GPU's own weights are lost; a retrain has its own identity). The first sweep is over Q²'s options:
# the paper's own (appendix: +filter personal, Q²*) and TRUE's re-implementation's validation, plus the
# answer-candidate kinds; fixed before the sweep, the current configuration first. Each is read in the form the
# NLI-step sweep chose (the F1 form, or Q² + NLI), and the rule is the NLI sweep's: the best mean dev AUC replaces
# the current configuration only by a gain above tfc.runs.aggregation.MARGIN
QA_GPU_RETRAINED = "tfc/qa-minilm-v4"
VARIANT_Q2_RETRAINED = {**VARIANT_Q2, "checkpoint": QA_GPU_RETRAINED}
OPTION_CANDIDATES = {
    "as run (exact-match validation, entities and noun chunks)": {},
    "+filter personal (Q² Table 7)": {"filter_personal": True},
    "Q²* (unanswerable questions discarded, Q² Table 5)": {"discard_unanswerable": True},
    "TRUE's validation (token F1 ≥ 0.54)": {"validation": "f1"},
    "named entities only": {"candidate_kinds": ["ents"]},
    "noun chunks only": {"candidate_kinds": ["noun_chunks"]},
}


def option_sweep_path():
    from tfc import config

    return config.model_records_dir() / QA_GPU_RETRAINED[4:] / "q2_option_dev.json"


def option_sweep(candidates: dict | None = None, rows: dict | None = None, seed: int = 0, write: bool = True,
                 log=print, base: dict | None = None, path=None, what: str = "Q² options") -> dict:
    """Q² with ``base`` (default :data:`VARIANT_Q2_RETRAINED`) once per option set of ``candidates`` (default
    :data:`OPTION_CANDIDATES`, the current one first) on the NLI-step sweep's dev frames, read in the form that
    sweep chose; the choice follows :func:`choose_step`. Writes the record (``path``, default
    :func:`option_sweep_path`) unless ``write=False``."""
    candidates = dict(OPTION_CANDIDATES if candidates is None else candidates)
    base = dict(VARIANT_Q2_RETRAINED if base is None else base)
    step = load_nli_sweep()
    form = "f1" if step and step["chosen"] == F1_FORM else "nli"
    frames = _dev_frames(rows, seed)
    auc, other, sigs = {}, {}, {}
    for label, kw in candidates.items():
        scorer = scorer_for("q2", **{**base, **_as_config(kw)})
        sigs[label] = scorer.signature
        own, f1_form = _dev_auc(scorer, frames, log, label)
        auc[label], other[label] = (f1_form, own) if form == "f1" else (own, f1_form)
    _with_mean(auc)
    _with_mean(other)
    return _sweep_record({"what": f"{what} chosen on training-side dev data (never TRUE)",
                          "reader": base["checkpoint"], "base": base, "form": form}, frames, seed,
                         next(iter(candidates)), auc, sigs, (path or option_sweep_path()) if write else None,
                         options=candidates, auc_other_form=other)


def _as_config(kw: dict) -> dict:
    """JSON-stored options as config values (lists back to the tuples the frozen configs hold)."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}


def load_option_sweep() -> dict | None:
    """The committed record of :func:`option_sweep`, or None."""
    return _read_record(option_sweep_path())


# The answer-candidate sweep, over the options the first sweep chose: the Q² authors' rule
# (tfc.scorers.qgqa.candidates_from_doc) is a fidelity fix, made the current choice before any sweep; the one
# stand-in beside it (lone pronouns dropped, for the coreference step that is not offline) and tfc's own rule
# replace it only by the sweep's margin on the same dev data
CANDIDATE_CANDIDATES = {
    "the authors' rule (entities, noun chunks, 'i' dropped)": {"candidate_rule": "q2-code"},
    "the authors' rule, lone pronouns dropped": {"candidate_rule": "q2-code-no-pronouns"},
    "tfc's rule (entities and noun chunks, 'i' kept)": {"candidate_rule": "tfc"},
}


def candidate_sweep_path():
    from tfc import config

    return config.model_records_dir() / QA_GPU_RETRAINED[4:] / "q2_candidate_dev.json"


# the candidate sweep's dev frames: the NLI-step sweep's two and DialFact's test sample, every kept row (TRUE's
# dialogue label semantics: factual responses only; see tfc.runs.aggregation.dialfact_dev)
CANDIDATE_SWEEP_ROWS = {**NLI_SWEEP_ROWS, "dialfact_test": 261}


def candidate_sweep(rows: dict | None = None, seed: int = 0, write: bool = True, log=print) -> dict:
    """:func:`option_sweep` of :data:`CANDIDATE_CANDIDATES` over the options the option sweep chose
    (``sweep_steps()["options"]``), on the dev frames of ``rows`` (default :data:`CANDIDATE_SWEEP_ROWS`; record:
    :func:`candidate_sweep_path`). A recorded sweep on other frames is kept in the new record's ``earlier`` list,
    so no sweep disappears from the record."""
    rec = option_sweep(CANDIDATE_CANDIDATES, dict(CANDIDATE_SWEEP_ROWS if rows is None else rows), seed, False, log,
                       base=sweep_steps()["options"], what="Q²'s answer-candidate rule")
    prev = load_candidate_sweep() or {}
    earlier = prev.pop("earlier", [])
    if prev and (prev["rows"], prev["seed"]) != (rec["rows"], rec["seed"]):
        earlier.append(prev)
    if earlier:
        rec["earlier"] = earlier
    if write:
        _write_record(rec, candidate_sweep_path())
    return rec


def load_candidate_sweep() -> dict | None:
    """The committed record of :func:`candidate_sweep`, or None."""
    return _read_record(candidate_sweep_path())


# The rule-QG sweep, over the candidate rule the candidate sweep chose: rule-QG version 3 (tfc.scorers.qgqa: the
# response read detokenised and the flaws of the 200 judged version-2 questions fixed; judgements in
# results/qg_judgements/) is a fix of judged flaws, made the current choice before any sweep; version 2 replaces it
# only if it beats version 3 by the sweep's margin on the candidate sweep's dev frames
QG_RULE_CANDIDATES = {
    "rule version 3 (detokenised, the judged flaws fixed)": {"qg_rules": "v3"},
    "rule version 2 (the judged flaws kept)": {"qg_rules": "v2"},
}


def qg_rule_sweep_path():
    from tfc import config

    return config.model_records_dir() / QA_GPU_RETRAINED[4:] / "q2_qg_rules_dev.json"


def qg_rule_sweep(rows: dict | None = None, seed: int = 0, write: bool = True, log=print) -> dict:
    """:func:`option_sweep` of :data:`QG_RULE_CANDIDATES` over the candidate rule the candidate sweep chose
    (``sweep_steps()["candidates"]``), on the candidate sweep's dev frames (:data:`CANDIDATE_SWEEP_ROWS`); record:
    :func:`qg_rule_sweep_path`."""
    return option_sweep(QG_RULE_CANDIDATES, dict(CANDIDATE_SWEEP_ROWS if rows is None else rows), seed, write, log,
                        base=sweep_steps()["candidates"], path=qg_rule_sweep_path(), what="Q²'s rule-QG version")


def load_qg_rule_sweep() -> dict | None:
    """The committed record of :func:`qg_rule_sweep`, or None."""
    return _read_record(qg_rule_sweep_path())


# the dev sweeps that make the dev-chosen configuration, in the order they compose (each over the previous choice):
# name -> (the function reading its committed record, the options it adds when no sweep is recorded: the current
# choice, i.e. nothing for the options, the authors' candidate rule, rule-QG version 3)
SWEEPS = {"options": ("load_option_sweep", {}),
          "candidates": ("load_candidate_sweep", next(iter(CANDIDATE_CANDIDATES.values()))),
          "qg-rules": ("load_qg_rule_sweep", next(iter(QG_RULE_CANDIDATES.values())))}


def sweep_steps() -> dict[str, dict]:
    """Q²'s configuration after each dev sweep of :data:`SWEEPS`, in order: :data:`VARIANT_Q2_RETRAINED` with the
    options :func:`option_sweep` chose ("options"), then also the answer-candidate rule :func:`candidate_sweep`
    chose ("candidates"), then also the rule-QG version :func:`qg_rule_sweep` chose ("qg-rules")."""
    steps, cfg = {}, dict(VARIANT_Q2_RETRAINED)
    for name, (loader, default) in SWEEPS.items():
        rec = globals()[loader]()
        cfg = steps[name] = {**cfg, **_as_config(rec["options"][rec["chosen"]] if rec else default)}
    return steps


def dev_chosen(up_to: str = "qg-rules") -> dict:
    """Q²'s configuration chosen on training-side dev data (never TRUE): :func:`sweep_steps`' last step, or the
    step ``up_to`` (a key of :data:`SWEEPS`)."""
    if up_to not in SWEEPS:
        raise ValueError(f"unknown sweep {up_to!r}; known: {', '.join(SWEEPS)}")
    return sweep_steps()[up_to]


def choose_step(auc: dict, current: str, margin: float) -> str:
    """The candidate with the best mean dev AUC if it beats ``current`` by more than ``margin`` points, else
    ``current`` (ties on the best mean go to the first listed)."""
    if current not in auc:
        raise KeyError(f"the current step {current!r} has no dev AUC")
    best = max(auc, key=lambda k: auc[k]["mean"])
    return best if auc[best]["mean"] - auc[current]["mean"] > margin else current


def load_nli_sweep() -> dict | None:
    """The committed record of :func:`nli_step_sweep`, or None."""
    return _read_record(nli_sweep_path())


# --------------------------------------------------------------------------------------------------
# Where Q²'s valid questions go: counts per (label, candidate kind, outcome), no text (the record is committed;
# the per-question table holds the mirror's text and stays local)

OUTCOMES = ("same answer", "partly the same", "different answer", "no answer on the knowledge")
CANDIDATE_KINDS = ("the speaker 'i'", "another pronoun", "entity or noun phrase")


def question_outcome(f1: float, answer: str) -> str:
    """A used question's outcome: no answer read on the knowledge, or the token F1 between the candidate and that
    answer (1 -> same, in (0, 1) -> partly, 0 -> different)."""
    if not answer:
        return OUTCOMES[3]
    return OUTCOMES[0] if f1 >= 1 else OUTCOMES[1] if f1 > 0 else OUTCOMES[2]


def candidate_kind(doc) -> str:
    """A candidate's kind from its spaCy parse: "i", another lone pronoun, or anything else."""
    if len(doc) == 1 and doc[0].lower_ == "i":
        return CANDIDATE_KINDS[0]
    return CANDIDATE_KINDS[1] if len(doc) == 1 and doc[0].pos_ == "PRON" else CANDIDATE_KINDS[2]


def outcomes_path(dataset: str):
    from tfc import config

    return config.model_records_dir() / QA_GPU_RETRAINED[4:] / f"q2_question_outcomes_{dataset}.json"


def question_outcomes(dataset: str = "q2_paper", config: dict | None = None, write: bool = True) -> dict:
    """Q² (default ``sweep_steps()["options"]``: the options chosen, before the candidate sweep) on every row of
    ``dataset`` through ``explain``: the used questions counted per label, candidate kind (:func:`candidate_kind`)
    and outcome (:func:`question_outcome`), and the responses per label. Writes the record (:func:`outcomes_path`)
    unless ``write=False``."""
    from tfc import data
    from tfc.scorers.qgqa import parse

    config = dict(sweep_steps()["options"] if config is None else config)
    scorer = scorer_for("q2", **config)
    df = data.load(dataset)
    t = scorer.explain(df["grounding"].tolist(), df["generated"].tolist())
    used = t[t["used"].astype(bool)].copy()
    used["label"] = df["label"].to_numpy()[used["example"].to_numpy(int)]
    used["kind"] = [candidate_kind(d) for d in parse(used["candidate"].tolist())]
    used["outcome"] = [question_outcome(float(f), str(a)) for f, a in zip(used["f1"], used["answer_grounding"])]
    counts = used.groupby(["label", "kind", "outcome"]).size()
    rec = {"what": "where Q²'s used questions go, per label, candidate kind and outcome", "dataset": dataset,
           "config": config, "signature": scorer.signature,
           "responses": {str(k): int(v) for k, v in df["label"].value_counts().sort_index().items()},
           "counts": [{"label": int(k[0]), "kind": k[1], "outcome": k[2], "questions": int(v)}
                      for k, v in counts.items()],
           "run_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    if write:
        _write_record(rec, outcomes_path(dataset))
    return rec


def load_question_outcomes(dataset: str = "q2_paper") -> dict | None:
    """The committed record of :func:`question_outcomes`, or None."""
    return _read_record(outcomes_path(dataset))
