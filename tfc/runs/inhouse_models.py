"""The in-house models: what was trained and how each is read and scored, from the committed records.

The checkpoints and their recipes (:func:`recipes`: each record's ``recipe.json`` says what a model started from,
its mix, epochs, device, the question it asked and whether it ships; every list of models, plans, readings and
tried variants below is read from them), the scoring plans of ``tfc train score-inhouse`` (:func:`plans`; the ``PLANS`` are what
``tfc train reproduce`` and ``make reproduce`` rerun after retraining, run by :func:`tfc.runs.scoring_runs.run_plan`),
the readings each model is scored with (including the one its dev-data sweep chose), "what we tried", and the
committed records under ``results/models/<name>/`` (card, training summary, identity) that the book reads
without the weights.
"""
from __future__ import annotations

import functools
import json
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from tfc import config
from tfc.scorers import PRESETS

# the readings the in-house models' tables were scored with: tfc's own (the "improved" preset: SummaC-ZS keeping
# every sentence with the per-cell reduction, AlignScore on greedy chunks), not the reference code's
SUMMAC_TFC = PRESETS["improved"]["summac-zs"]
ALIGN_TFC = PRESETS["improved"]["alignscore"]
# the SummaC sets with text in the mirror (summac_factcc and summac_frank_test are unavailable)
SUMMAC_SETS = ("summac_cogensumm", "summac_xsumfaith", "summac_polytope", "summac_polytope_alignscore",
               "summac_frank", "summac_summeval")
ABLATION_SAMPLE = 200      # per TRUE set, stratified by label, for the splitting ablation
ABLATION_SEED = 0
# The default sentence-level model of the plans and the book (its recipe: results/models/sent-minilm-v2)
SENT_CHECKPOINT = "tfc/sent-minilm-v2"
SENT_SOURCE = "tfc/sent-minilm-v2-fp32"   # the training run's own weights, before the int8 weight-only release
SENT_LABEL = "sent-minilm-v2"
BASE_NAMES = {"minilm": "MiniLM", "mpnet": "all-mpnet-base-v2"}   # the base encoders a recipe's `parent` may name
RECIPE = "recipe.json"     # results/models/<name>/recipe.json (see recipes())
DRIFT_SAMPLE = 60          # per TRUE set, stratified: the drift of the release and of int8-dynamic (paired rows)
# per TRUE set, stratified: the drift of the fast preset (tfc.scorers.FAST_DTYPE) against fp32 for each model scorer
# on the shipped model. 500 rows make one swapped (consistent, inconsistent) pair worth about 0.002 AUC points on a
# balanced set, so the 0.2-point limit is not a matter of a single flip, as it is on the 60-row sample
FAST_DRIFT_SAMPLE = 500
SENT_ORDER = ("paws", "begin", "q2", "qags_xsum", "dialfact", "mnbm", "qags_cnndm", "frank", "summeval")


# scorer -> (registry name, overrides, dtypes to score on the drift sample) for the fast-preset drift
FAST_DRIFT_READINGS = {
    "sent": ("summac-zs", {"checkpoint": SENT_CHECKPOINT, **SUMMAC_TFC}, ("bfloat16",)),
    "align": ("alignscore", {"checkpoint": SENT_CHECKPOINT, **ALIGN_TFC}, ("float32", "bfloat16")),
    "nli": ("nli", {"checkpoint": SENT_CHECKPOINT, "mode": "document"}, ("float32", "bfloat16")),
    # BERTScore's model is the MiniLM encoder itself, read as its default reads it (chunks); its fp32 side is the
    # full-set cache of the TRUE chapter
    "bert": ("bertscore", {"checkpoint": "minilm", "long_grounding": "chunk"}, ("bfloat16",)),
}
SPLIT_MODES = ("chunk", "document", "smart-n", "smart-l")   # the AlignScore splitting modes the plans score


def _true_sets():
    from tfc.data import TRUE_TEXT

    return tuple(TRUE_TEXT)


# --------------------------------------------------------------------------------------------------
# the recipes: results/models/<name>/recipe.json, one per in-house model. Fields: checkpoint, family (sentence |
# pairs | wecheck), parent (a record's checkpoint or a base of BASE_NAMES), mix (named by what it holds), mix_file,
# epochs, device, question (what the run asked), status ("shipped" | "record only"), and where they apply:
# compared_with (the model the question is measured against), label (the book's name for it), plan (its scoring
# plan in plans()), reads_as (a model whose dev-chosen reading it is scored under), alignscore_plan, readings
# ({label, role, scorer, overrides}: further readings the book scores it with), tried (its rows of "what we
# tried": variant, data, and scorer + overrides or a readings label) and gpu_job (what `tfc gpu` trains).

@functools.lru_cache(maxsize=4)
def _recipes(root: str) -> dict:
    found = []
    for path in sorted(Path(root).glob(f"*/{RECIPE}")):
        summary = path.parent / "training_summary.json"
        made = (json.loads(summary.read_text()).get("created_utc") or "") if summary.is_file() else ""
        found.append((made, path.parent.name, json.loads(path.read_text())))
    return {rec["checkpoint"]: rec for _, _, rec in sorted(found, key=lambda t: t[:2])}


def recipes(family: str | None = None, status: str | None = None) -> dict[str, dict]:
    """``{checkpoint: recipe}`` from the committed records, in the order the models were trained (the training
    summary's ``created_utc``); ``family`` / ``status`` keep only those."""
    return {c: r for c, r in _recipes(str(config.model_records_dir())).items()
            if family in (None, r["family"]) and status in (None, r["status"])}


def recipe(checkpoint: str) -> dict:
    """One model's recipe (KeyError when its record has none)."""
    return recipes()[checkpoint]


def sentence_models(status: str | None = None) -> list[str]:
    """The sentence-level models with a recipe, in training order (``status``: "shipped" or "record only")."""
    return list(recipes("sentence", status))


def shipped_sentence_model() -> str:
    """The shipped sentence-level model (its release is under ``results/release``), the latest if several."""
    return sentence_models("shipped")[-1]


def variant_plans() -> dict[str, str]:
    """``{plan: checkpoint}``: the sentence models scored under their own readings by a plan of :func:`plans`."""
    return {r["plan"]: c for c, r in recipes("sentence").items() if r.get("plan") and not r.get("reads_as")}


def variant_readings() -> dict:
    """``{name: spec}``: every model of :func:`variant_plans` under the preset reading (fp32)."""
    return {c[4:]: sent_reading(c) for c in variant_plans().values()}


def _spec(checkpoint: str, entry: dict) -> tuple:
    """``(scorer, config)`` of a recipe's reading or tried row on its own checkpoint."""
    kw = entry.get("overrides") or {}
    if entry["scorer"] == "summac-zs":
        return sent_reading(checkpoint, **kw)
    return (entry["scorer"], {"checkpoint": checkpoint, **kw})


def readings(role: str) -> dict:
    """``{label: spec}`` of the recipes' further readings with ``role`` (e.g. "shipped", "alignscore",
    "rule splitter", "int8 preset")."""
    return {x["label"]: _spec(c, x) for c, r in recipes().items() for x in r.get("readings", []) if x["role"] == role}


def shipped_readings() -> dict:
    """``{label: spec}``: the default sentence model (preset reading) and every shipped one under its recorded
    reading."""
    return {SENT_LABEL: sent_reading(SENT_CHECKPOINT), **readings("shipped")}


def alignscore_model() -> str | None:
    """The sentence model whose AlignScore reading has plans (head and splitting ablations), or None."""
    return next((c for c, r in recipes().items() if r.get("alignscore_plan")), None)


def warmup_pairs() -> dict[str, str]:
    """``{wecheck checkpoint: its warm-up}``: WeCheck runs scored under their warm-up's dev-chosen reading."""
    return {c: r["reads_as"] for c, r in recipes("wecheck").items() if r.get("reads_as")}


def gpu_variants() -> dict[str, dict]:
    """``{name: job}``: what a GPU job (:mod:`tfc.runs.gpu`) trains, from the recipes' ``gpu_job`` (mix file,
    epochs, tasks, retrain, batch_size, lr, base, max_minutes) with the question as ``note``."""
    return {c[4:]: {**r["gpu_job"], "note": r["question"]} for c, r in recipes().items() if r.get("gpu_job")}


def _installed(checkpoint: str) -> bool:
    return (config.artifacts_dir() / checkpoint[4:]).is_dir()


def _record_plans(true9) -> dict[str, list[dict]]:
    """The recipes' plans. A model's own weights (not shipped) are scored only where they exist (a fresh clone has
    its record and committed caches, so `make reproduce` never asks for them)."""
    out, order = {}, sorted(true9, key=SENT_ORDER.index)
    for plan, ckpt in variant_plans().items():
        if _installed(ckpt):
            run = {"scorer": "summac-zs", "overrides": {"checkpoint": ckpt, "dtype": "float32", **SUMMAC_TFC}}
            out[plan] = [{**run, "dataset": d} for d in order]
            out[plan.replace("-true", "-summac")] = [{**run, "dataset": d} for d in SUMMAC_SETS]
            out.update(_chosen_plan(plan, ckpt, true9))   # the reading its dev-data sweep chose
    # the model with all three heads (AlignScore's recipe) read the published way on every TRUE row: chunks (one
    # pass gives all three heads), then the other splittings (SMART-L after SMART-N reuses its sentence pairs)
    align = alignscore_model()
    if align and _installed(align):
        plan = recipe(align)["alignscore_plan"]
        run = {"scorer": "alignscore", "overrides": {"checkpoint": align, **ALIGN_TFC}}
        out[f"{plan}-true"] = [{**run, "dataset": d} for d in order]
        out[f"{plan}-split"] = [{**run, "overrides": {**run["overrides"], "split": sp}, "dataset": d}
                                for d in order for sp in SPLIT_MODES[1:]]
    # a model scored under another's dev-chosen reading (a release, WeCheck on a warm-up), so that the pair differs
    # only in the weights; a shipped one always (its release is committed)
    for ckpt, r in recipes().items():
        if r.get("reads_as") and (r["status"] == "shipped" or _installed(ckpt)):
            out[r["plan"]] = [{"scorer": "summac-zs", "overrides": {**kw, "checkpoint": ckpt}, "dataset": d}
                              for _, (_, kw) in chosen_readings([r["reads_as"]]).items() for d in order]
    return out


def _chosen_plan(plan: str, checkpoint: str, datasets) -> dict:
    """``{"<plan>-chosen": runs}`` scoring the reading a model's dev-data sweep chose, when it is not the preset."""
    return {f"{plan}-chosen": [{"scorer": "summac-zs", "overrides": kw, "dataset": d}
                               for d in sorted(datasets, key=SENT_ORDER.index)]
            for _, (_, kw) in chosen_readings([checkpoint]).items()}


def plans() -> dict[str, list[dict]]:
    """name -> list of runs (scorer name, overrides, dataset, sample)."""
    true9 = _true_sets()
    nli = {"scorer": "nli", "overrides": {"checkpoint": "tfc/nli-minilm", "mode": "document"}}
    align = {"scorer": "alignscore", "overrides": {"checkpoint": "tfc/alignscore-minilm", **ALIGN_TFC}}
    # fp32 is the preset: int8-dynamic drifted by more than 0.2 AUC (the drift plan below measures it again)
    sent = {"scorer": "summac-zs", "overrides": {"checkpoint": SENT_CHECKPOINT, "dtype": "float32", **SUMMAC_TFC}}
    sent8 = {"scorer": "summac-zs", "overrides": {**sent["overrides"], "dtype": "int8-dynamic"}}
    sent8pc = {"scorer": "summac-zs", "overrides": {**sent["overrides"], "dtype": "int8-dynamic-pc"}}
    out = {
        "nli-true": [{**nli, "dataset": d} for d in true9],
        "alignscore-true": [{**align, "dataset": d} for d in true9],
        "nli-summac": [{**nli, "dataset": d} for d in SUMMAC_SETS],
        "alignscore-summac": [{**align, "dataset": d} for d in SUMMAC_SETS],
        "alignscore-true-sample": [{**align, "dataset": d, "sample": ABLATION_SAMPLE, "seed": ABLATION_SEED}
                                   for d in true9],
        "summac-test-sample": [{**m, "dataset": d, "sample": ABLATION_SAMPLE, "seed": ABLATION_SEED, "split": "test"}
                               for m in (align, nli) for d in SUMMAC_SETS],
        "summac-val-sample": [{**m, "dataset": d, "sample": ABLATION_SAMPLE, "seed": ABLATION_SEED, "split": "val"}
                              for m in (align, nli) for d in SUMMAC_SETS],
        # the sentence-level model, SummaC-ZS style, fp32 (cheap sets first); its rows include the drift rows
        "sent-true": [{**sent, "dataset": d} for d in sorted(true9, key=SENT_ORDER.index)],
        "sent-true-fp32-sample": [{**sent, "dataset": d, "sample": DRIFT_SAMPLE, "seed": ABLATION_SEED}
                                  for d in sorted(true9, key=SENT_ORDER.index)],
        "sent-true-int8-sample": [{**sent8, "dataset": d, "sample": DRIFT_SAMPLE, "seed": ABLATION_SEED}
                                  for d in sorted(true9, key=SENT_ORDER.index)],
        "sent-true-int8pc-sample": [{**sent8pc, "dataset": d, "sample": DRIFT_SAMPLE, "seed": ABLATION_SEED}
                                    for d in sorted(true9, key=SENT_ORDER.index)],

        "sent-summac": [{**sent, "dataset": d} for d in SUMMAC_SETS],
        # the fast preset against fp32, per model scorer on the shipped model (cheap sets first; summac-zs's fp32
        # side is the full-set cache of sent-true)
        **{f"fast-{key}-sample": [{"scorer": sc, "overrides": {**kw, "dtype": dt}, "dataset": d,
                                   "sample": FAST_DRIFT_SAMPLE, "seed": ABLATION_SEED}
                                  for d in sorted(true9, key=SENT_ORDER.index) for dt in dtypes]
           for key, (sc, kw, dtypes) in FAST_DRIFT_READINGS.items()},
        "alignscore-split-ablation": [
            {"scorer": "alignscore", "overrides": {**align["overrides"], "split": sp}, "dataset": d,
             "sample": ABLATION_SAMPLE, "seed": ABLATION_SEED}
            for sp in ("chunk", "document", "smart-l", "smart-n") for d in true9],
    }
    # the default model under the reading its dev-data sweep chose (recorded on its card), where that differs
    out.update(_chosen_plan("sent-true", SENT_CHECKPOINT, true9))
    out.update(_record_plans(true9))   # the recipes' plans
    # the unquantised training output (artifacts/sent-minilm-v2-fp32, not shipped) on the drift rows: only where
    # that directory exists (a fresh clone has the release alone), so `make reproduce` never asks for it
    if (config.artifacts_dir() / SENT_SOURCE[4:]).is_dir():
        out["sent-true-source-sample"] = [
            {"scorer": "summac-zs", "overrides": {"checkpoint": SENT_SOURCE, "dtype": "float32", **SUMMAC_TFC},
             "dataset": d,
             "sample": DRIFT_SAMPLE, "seed": ABLATION_SEED} for d in sorted(true9, key=SENT_ORDER.index)]
    return out


# --------------------------------------------------------------------------------------------------
# the sentence-level model (tfc/sent-minilm-v2) on the full sets, beside the cheap baselines

def sent_reading(checkpoint: str, dtype: str = "float32", **reading) -> tuple:
    """The SummaC-ZS reading of a sentence model, as a ``(scorer, config)`` spec (``reading``: the settings of
    :data:`tfc.runs.aggregation.AGGREGATIONS`, e.g. ``grounding_granularity="window12"``). The models were scored
    with tfc's reading (:data:`SUMMAC_TFC`) unless a reading names another setting."""
    return ("summac-zs", {"checkpoint": checkpoint, "dtype": dtype, **SUMMAC_TFC, **reading})


def recorded_sweep(checkpoint: str) -> dict | None:
    """The dev-data sweep (:mod:`tfc.runs.aggregation`) recorded on an in-house checkpoint's card, or None."""
    from tfc import models

    try:
        rec = models.training_record(checkpoint)
    except FileNotFoundError:
        return None
    return (rec.get("eval_results") or {}).get("aggregation_dev")


def chosen_readings(checkpoints=None) -> dict:
    """``{label: spec}`` for every sentence model whose recorded dev-data sweep (:mod:`tfc.runs.aggregation`)
    chose a reading other than the preset; read from the committed records, so a fresh clone has them."""
    out = {}
    for ckpt in checkpoints or [SENT_CHECKPOINT, *variant_plans().values()]:
        rec = recorded_sweep(ckpt)
        if rec and rec["chosen"] != rec["preset"]:
            out[f"{ckpt[4:]} ({rec['chosen']})"] = sent_reading(ckpt, **rec["chosen_overrides"])
    return out


SENT_FAST = sent_reading(SENT_CHECKPOINT, "int8-dynamic")   # drift-checked, not the preset
SENT_FAST_PC = sent_reading(SENT_CHECKPOINT, "int8-dynamic-pc")
# the baselines the sentence models are measured against, in their recommended readings (BERTScore's chunks)
SENT_BASELINES = {"ROUGE-L": ("rougeL", {}), "BERTScore-P (MiniLM)": ("bertscore", {"long_grounding": "chunk"}),
                  "nli-minilm": ("nli", {"checkpoint": "tfc/nli-minilm", "mode": "document"})}


def contrast_counts(checkpoint: str) -> dict:
    """Word-order contrast rows of a sentence model's mix, from its training record: ``near_identical_negative``
    (rules that keep the words and swap roles, plus antonyms), ``structural_positive`` (conjunct swaps, moved
    phrases), ``copy`` and ``compression`` (mix v2). Empty when the record is absent."""
    from tfc import models
    from tfc.train import contrast as C

    try:
        rec = models.training_record(checkpoint)
    except FileNotFoundError:
        return {}
    rows = {r["source"]: r["rows"] for r in rec.get("mix_report", {}).get("rows", [])}
    def total(rules):
        return int(sum(rows.get(f"contrast/{r}", 0) for r in rules))
    return {"near_identical_negative": total(C.NEGATIVE_RULES), "structural_positive": total(C.POSITIVE_RULES),
            "copy": total(C.COPY_RULES), "compression": total(C.COMPRESSION_RULES)}


def training_facts(checkpoint: str) -> dict:
    """Facts of an in-house model's training from its record (installed weights, else ``results/models``):
    mix per source and label space, leakage rows removed, steps, wall time, held-out evaluation."""
    from tfc import models

    rec = models.training_record(checkpoint)
    mix = pd.DataFrame(rec["mix"]["by_source"])
    leak = pd.DataFrame(rec.get("mix_report", {}).get("leakage", []))
    cfg = rec.get("config", {})
    return {"mix": mix, "leakage": leak, "rows": rec["mix"]["rows"],
            "removed_as_leakage": int(leak[["removed_exact", "removed_near"]].sum().sum()) if len(leak) else 0,
            "steps": rec.get("steps"), "stopped_by": rec.get("stopped_by"), "batch_size": cfg.get("batch_size"),
            "max_length": cfg.get("max_length"), "lr": cfg.get("lr"), "loss_weights": cfg.get("loss_weights"),
            "threads": cfg.get("num_threads"), "wall_seconds": rec.get("wall_seconds"),
            "train_seconds": rec.get("train_seconds"), "examples_per_second": rec.get("examples_per_second"),
            "dev_eval": rec.get("dev_eval", {}), "base_model": rec.get("base_model"), "seed": cfg.get("seed"),
            "device": rec.get("device")}


def tried_variants() -> tuple:
    """"What we tried": the recipes' ``tried`` rows (in training order), each ``{variant, checkpoint, scorer,
    data}``, plus one row per reading a model's dev-data sweep chose over the preset (read from the committed
    records: the rows appear when a sweep is recorded, with no code change)."""
    rows = []
    for ckpt, r in recipes().items():
        named = {x["label"]: x for x in r.get("readings", [])}
        rows += [{"variant": t["variant"], "checkpoint": ckpt, "data": t["data"],
                  "scorer": _spec(ckpt, named[t["reading"]] if "reading" in t else t)} for t in r.get("tried", [])]
    extra = tuple({"variant": f"{label}, chosen on training-side dev data", "checkpoint": spec[1]["checkpoint"],
                   "scorer": spec, "data": "the same model; the reading chosen by `tfc train aggregation` on BEGIN v1 "
                                           "test and leave-one-out ANLI passages (never TRUE)"}
                  for label, spec in chosen_readings().items())
    return tuple(rows) + extra


def recorded_identity_probe(checkpoint: str = SENT_CHECKPOINT) -> pd.DataFrame:
    """The :func:`tfc.runs.release_facts.identity_probe` rows recorded on a model's card by
    :func:`tfc.runs.release_facts.record_release` (the v1 weights
    it compares against are not shipped, so the book reads the recorded rows); empty when absent."""
    from tfc import models

    try:
        rec = models.training_record(checkpoint)
    except FileNotFoundError:
        return pd.DataFrame()
    return pd.DataFrame((rec.get("eval_results") or {}).get("identity_probe", []))


# --------------------------------------------------------------------------------------------------
# committed records (no weights)

def write_record(name: str, retrain: str | None = None) -> "object":
    """Copy an installed checkpoint's card and training summary to ``results/models/<name>/`` with its
    identity (the book then finds its committed scores without the weights)."""
    import shutil

    from tfc import models

    src = config.artifacts_dir() / name
    if not (src / "config.json").is_file():
        raise FileNotFoundError(f"no checkpoint {src}")
    dst = config.model_records_dir() / name
    dst.mkdir(parents=True, exist_ok=True)
    for f in ("README.md", "training_summary.json"):
        if (src / f).is_file():
            shutil.copy2(src / f, dst / f)
    from tfc.models import release

    cmd = retrain or name.split('-')[0]
    how = (f"`tfc train {cmd}`, its recorded recipe; a retrained checkpoint has a new identity"
           if cmd.startswith("reproduce") else f"`tfc train {cmd}`")
    where = (f"the weights ship as the release results/release/{name}" if release.available(name) else
             f"the weights themselves are not committed (retrain with {how})")
    (dst / "identity.json").write_text(json.dumps({
        "checkpoint": f"tfc/{name}", "identity": models.identity(f"tfc/{name}"),
        "note": f"identity of the weights the committed scores under results/scores were computed with; {where}",
        "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds")}, indent=1) + "\n")
    return dst


def record_on_card(checkpoint: str, results: dict, retrain: str = "sentence") -> None:
    """Merge ``results`` into an installed in-house checkpoint's card (``eval_results``) and refresh its
    committed record (:func:`write_record`)."""
    from tfc.train.checkpoints import record_eval_results

    record_eval_results(config.artifacts_dir() / checkpoint[4:], results)
    write_record(checkpoint[4:], retrain=retrain)
