"""The in-house models: what was trained and how each is read and scored, from the committed records.

The checkpoints (``tfc/nli-minilm``, ``tfc/alignscore-minilm``, the sentence-level models ``tfc/sent-minilm*``
and their GPU recipes), the scoring plans of ``tfc train score-inhouse`` (:func:`plans`; the ``PLANS`` are what
``tfc train reproduce`` and ``make reproduce`` rerun after retraining, run by :func:`tfc.runs.scoring_runs.run_plan`),
the readings each model is scored with (including the one its dev-data sweep chose), "what we tried", and the
committed records under ``results/models/<name>/`` (card, training summary, identity) that the book reads
without the weights.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pandas as pd

from tfc import config

# the SummaC sets with text in the mirror (summac_factcc and summac_frank_test are unavailable)
SUMMAC_SETS = ("summac_cogensumm", "summac_xsumfaith", "summac_polytope", "summac_polytope_alignscore",
               "summac_frank", "summac_summeval")
ABLATION_SAMPLE = 200      # per TRUE set, stratified by label, for the splitting ablation
ABLATION_SEED = 0
# The shipped sentence-level model. v2 continued v1's training on the v2 mix (copy and compression positives,
# tfc.train.mix.SENTENCE_MIX_VERSIONS) after v1 was found to call identical sentences a contradiction; v1's
# release was replaced (its weights stay in git history, its record and scores stay committed).
SENT_CHECKPOINT = "tfc/sent-minilm-v2"
SENT_SOURCE = "tfc/sent-minilm-v2-fp32"   # the training run's own weights, before the int8 weight-only release
SENT_LABEL = "sent-minilm-v2"
SENT_V1 = "tfc/sent-minilm"               # the first sentence-level model (record and caches only)
# v3: the data-structure ablation (sentence mix v3: the six human-labelled 3-way sources alone, nothing generated,
# no teacher), trained from MiniLM with the 3-way head only; scored on the full sets, record and caches committed
SENT_V3 = "tfc/sent-minilm-v3"
# v4: v3 continued on sentence mix v4 (v3's rows + word-order contrast with PAWS's own edits), v3's dev rows held out
SENT_V4 = "tfc/sent-minilm-v4"
# v5: v3 continued on sentence mix v5 (every human-labelled 3-way sentence source: v3's six + CAD-SNLI, Breaking NLI,
# ConjNLI, MED, the FEVER stress sets; nothing generated, no teacher), v3's dev rows held out
SENT_V5 = "tfc/sent-minilm-v5"
# v6, v7: trained from MiniLM on a GPU (tfc.runs.gpu.VARIANTS): v3's data for 5 epochs; mix v2 (every lever) for 3
SENT_V6 = "tfc/sent-minilm-v6"
SENT_V7 = "tfc/sent-minilm-v7"
SENT_V8 = "tfc/sent-minilm-v8"     # v4's mix (v3 + contrast with copies) for 3 epochs, on a GPU
# v8's int8 weight-only release (results/release/sent-minilm-v8-int8), the second shipped model: the best nine-set
# mean of the sentence models, read the way v8's dev-data sweep chose
SENT_V8_RELEASE = "tfc/sent-minilm-v8-int8"
# v9: v8 continued for one more epoch of its own mix (sentence mix v4) at lr 3e-5, on a CPU with native bf16 (AMX),
# bf16 autocast, batches of 128. It starts from v8's int8 release, the one copy of v8 that outlived the GPU
# session's machine. Asked before it was scored: does word-order contrast trained past three epochs keep lifting
# PAWS, and what does it cost elsewhere?
SENT_V9 = "tfc/sent-minilm-v9"
SENT_V9_RECIPE = {"init": SENT_V8_RELEASE, "mix": "sentence-v4.parquet", "epochs": 1, "batch_size": 128, "lr": 3e-5,
                  "dtype": "bf16"}
# v10: the first in-house model on a larger backbone, all-mpnet-base-v2 (110M, five times MiniLM-L6's parameters), trained
# on a GPU from v8's data (sentence mix v4) with v8's recipe otherwise. Asked before it was trained: v3-v9 varied data
# and epochs on MiniLM-L6 and the nine-set mean stalled near 74, so is the small backbone the limit? Its weights
# (about 220 MB in fp16) exceed what a device call brings back, so only its record and caches return.
SENT_V10 = "tfc/sent-mpnet-v10"
WECHECK_V8 = "tfc/wecheck-minilm-v8"   # WeCheck's recipe with v8 as the warm-up (tfc.train.wecheck.RUNS)
# At v3's 32 rows per batch an H100 ran 17 steps/s at 11 % use (the step's Python side dominates), so the GPU
# variants take 128 rows per batch, with the learning rate raised from 6e-5 to 1e-4 (about the square-root rule)
GPU_BATCH = {"batch_size": 128, "lr": 1e-4}
BASE_NAMES = {"minilm": "MiniLM", "mpnet": "all-mpnet-base-v2"}   # a recipe's `base` (default minilm), as the book names it
# What a GPU job (tfc.runs.gpu) trains: name -> recipe. Each starts from the MiniLM-L6 base at 128 tokens, with bf16
# autocast; the epochs were fixed before any run. `note` says what the variant asks.
GPU_VARIANTS = {
    "sent-minilm-v6": {"mix": "sentence-v3.parquet", "epochs": 5, "tasks": ("3way",), "retrain": "sentence",
                       **GPU_BATCH, "note": "v3's data (the six human-labelled sources) trained longer: does more "
                                            "training alone help?"},
    "sent-minilm-v7": {"mix": "sentence-v2.parquet", "epochs": 3, "tasks": ("3way", "bin", "reg"),
                       "retrain": "sentence", **GPU_BATCH,
                       "note": "every lever of the issue at once: human 3-way, binary and regression sources, "
                               "word-order contrast with copies and compressions, leave-one-out passages, the "
                               "WeCheck teacher's soft targets; all three heads"},
    "sent-minilm-v8": {"mix": "sentence-v4.parquet", "epochs": 3, "tasks": ("3way",), "retrain": "sentence",
                       **GPU_BATCH,
                       "note": "v3's human pairs plus word-order contrast with copies and compressions; added after "
                               "v6's first scores fell on FRANK and SummEval (the rule splitter's doing, it turned "
                               "out, not the model's)"},
    "sent-mpnet-v10": {"mix": "sentence-v4.parquet", "epochs": 2, "tasks": ("3way",), "retrain": "sentence",
                       "base": "mpnet", "batch_size": 128, "lr": 3e-5, "max_minutes": 6.0,
                       "note": "v8's data on a backbone five times larger (all-mpnet-base-v2, 110M): is MiniLM-L6 the "
                               "limit? Two epochs (not three) and lr 3e-5 (the usual rate for a base-size encoder) "
                               "were fixed before the run, to fit a 15-minute device lease"},
}
SENT_VARIANT_PLANS = {"sent3-true": SENT_V3, "sent4-true": SENT_V4, "sent5-true": SENT_V5, "sent6-true": SENT_V6,
                      "sent7-true": SENT_V7, "sent8-true": SENT_V8, "sent9-true": SENT_V9,
                      "sent10-true": SENT_V10}
DRIFT_SAMPLE = 60          # per TRUE set, stratified: the drift of the release and of int8-dynamic (paired rows)
# per TRUE set, stratified: the drift of the fast preset (tfc.scorers.FAST_DTYPE) against fp32 for each model scorer
# on the shipped model. 500 rows make one swapped (consistent, inconsistent) pair worth about 0.002 AUC points on a
# balanced set, so the 0.2-point limit is not a matter of a single flip, as it is on the 60-row sample
FAST_DRIFT_SAMPLE = 500
SENT_ORDER = ("paws", "begin", "q2", "qags_xsum", "dialfact", "mnbm", "qags_cnndm", "frank", "summeval")


# scorer -> (registry name, overrides, dtypes to score on the drift sample) for the fast-preset drift
FAST_DRIFT_READINGS = {
    "sent": ("summac-zs", {"checkpoint": SENT_CHECKPOINT}, ("bfloat16",)),
    "align": ("alignscore", {"checkpoint": SENT_CHECKPOINT}, ("float32", "bfloat16")),
    "nli": ("nli", {"checkpoint": SENT_CHECKPOINT, "mode": "document"}, ("float32", "bfloat16")),
    # BERTScore's model is the MiniLM encoder itself; its fp32 side is the full-set cache of the TRUE chapter
    "bert": ("bertscore", {"checkpoint": "minilm"}, ("bfloat16",)),
}
SPLIT_MODES = ("chunk", "document", "smart-n", "smart-l")   # the AlignScore splitting modes the plans score


def _true_sets():
    from tfc.data import TRUE_TEXT

    return tuple(TRUE_TEXT)


def _chosen_plan(plan: str, checkpoint: str, datasets) -> dict:
    """``{"<plan>-chosen": runs}`` scoring the reading a model's dev-data sweep chose, when it is not the preset."""
    return {f"{plan}-chosen": [{"scorer": "summac-zs", "overrides": kw, "dataset": d}
                               for d in sorted(datasets, key=SENT_ORDER.index)]
            for _, (_, kw) in chosen_readings([checkpoint]).items()}


def plans() -> dict[str, list[dict]]:
    """name -> list of runs (scorer name, overrides, dataset, sample)."""
    true9 = _true_sets()
    nli = {"scorer": "nli", "overrides": {"checkpoint": "tfc/nli-minilm", "mode": "document"}}
    align = {"scorer": "alignscore", "overrides": {"checkpoint": "tfc/alignscore-minilm"}}
    # fp32 is the preset: int8-dynamic drifted by more than 0.2 AUC (the drift plan below measures it again)
    sent = {"scorer": "summac-zs", "overrides": {"checkpoint": SENT_CHECKPOINT, "dtype": "float32"}}
    sent8 = {"scorer": "summac-zs", "overrides": {"checkpoint": SENT_CHECKPOINT, "dtype": "int8-dynamic"}}
    sent8pc = {"scorer": "summac-zs", "overrides": {"checkpoint": SENT_CHECKPOINT, "dtype": "int8-dynamic-pc"}}
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
    # the shipped model under the reading its dev-data sweep chose (recorded on its card), where that differs
    out.update(_chosen_plan("sent-true", SENT_CHECKPOINT, true9))
    # a variant's own weights (not shipped) are scored only where they exist (a fresh clone has its record and
    # committed caches, so `make reproduce` never asks for them)
    for plan, ckpt in SENT_VARIANT_PLANS.items():
        if (config.artifacts_dir() / ckpt[4:]).is_dir():
            run = {"scorer": "summac-zs", "overrides": {"checkpoint": ckpt, "dtype": "float32"}}
            out[plan] = [{**run, "dataset": d} for d in sorted(true9, key=SENT_ORDER.index)]
            out[plan.replace("-true", "-summac")] = [{**run, "dataset": d} for d in SUMMAC_SETS]
            out.update(_chosen_plan(plan, ckpt, true9))   # the reading its dev-data sweep chose
    # v7 is the one new model with all three heads (AlignScore's recipe: every lever, 3-way + binary + regression),
    # so the AlignScore chapter's head and splitting ablations are rerun with it on every TRUE row: the published
    # chunk mode (one pass gives all three heads), then the other splittings (SMART-L after SMART-N in the same
    # process reuses its sentence pairs)
    if (config.artifacts_dir() / SENT_V7[4:]).is_dir():
        align7 = {"scorer": "alignscore", "overrides": {"checkpoint": SENT_V7}}
        out["align7-true"] = [{**align7, "dataset": d} for d in sorted(true9, key=SENT_ORDER.index)]
        out["align7-split"] = [{**align7, "overrides": {**align7["overrides"], "split": sp}, "dataset": d}
                               for d in sorted(true9, key=SENT_ORDER.index) for sp in SPLIT_MODES[1:]]
    # WeCheck's recipe on v8 as the warm-up (tfc.train.wecheck.RUNS), read as v8's sweep chose, so that the pair
    # (WeCheck, its warm-up) differs only in the weak-supervision fine-tuning
    if (config.artifacts_dir() / WECHECK_V8[4:]).is_dir():
        out["wecheck8-true"] = [{"scorer": "summac-zs", "overrides": {**kw, "checkpoint": WECHECK_V8}, "dataset": d}
                                for _, (_, kw) in chosen_readings([SENT_V8]).items()
                                for d in sorted(true9, key=SENT_ORDER.index)]
    # the second release, under the reading v8's sweep chose (the release is v8 quantised; the fp16 source's scores
    # are committed under tfc/sent-minilm-v8)
    out["sent8r-true-chosen"] = [{"scorer": "summac-zs", "overrides": {**kw, "checkpoint": SENT_V8_RELEASE},
                                  "dataset": d} for _, (_, kw) in chosen_readings([SENT_V8]).items()
                                 for d in sorted(true9, key=SENT_ORDER.index)]
    # the unquantised training output (artifacts/sent-minilm-v2-fp32, not shipped) on the drift rows: only where
    # that directory exists (a fresh clone has the release alone), so `make reproduce` never asks for it
    if (config.artifacts_dir() / SENT_SOURCE[4:]).is_dir():
        out["sent-true-source-sample"] = [
            {"scorer": "summac-zs", "overrides": {"checkpoint": SENT_SOURCE, "dtype": "float32"}, "dataset": d,
             "sample": DRIFT_SAMPLE, "seed": ABLATION_SEED} for d in sorted(true9, key=SENT_ORDER.index)]
    return out


# --------------------------------------------------------------------------------------------------
# the sentence-level model (tfc/sent-minilm-v2) on the full sets, beside the cheap baselines

def sent_reading(checkpoint: str, dtype: str = "float32", **reading) -> tuple:
    """The SummaC-ZS reading of a sentence model, as a ``(scorer, config)`` spec (``reading``: the settings of
    :data:`tfc.runs.aggregation.AGGREGATIONS`, e.g. ``grounding_granularity="window12"``)."""
    return ("summac-zs", {"checkpoint": checkpoint, "dtype": dtype, **reading})


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
    for ckpt in checkpoints or [SENT_CHECKPOINT, *SENT_VARIANT_PLANS.values()]:
        rec = recorded_sweep(ckpt)
        if rec and rec["chosen"] != rec["preset"]:
            out[f"{ckpt[4:]} ({rec['chosen']})"] = sent_reading(ckpt, **rec["chosen_overrides"])
    return out


SENT_V8_RELEASE_LABEL = "sent-minilm-v8-int8 (shipped; sentence, max e, mean)"
# the shipped models: v2 (the default, preset reading) and v8's release under the reading v8's sweep chose
SENT_MODELS = {SENT_LABEL: sent_reading(SENT_CHECKPOINT),
               SENT_V8_RELEASE_LABEL: sent_reading(SENT_V8_RELEASE, grounding_granularity="sentence", score_type="e")}
SENT_FAST = sent_reading(SENT_CHECKPOINT, "int8-dynamic")   # drift-checked, not the preset
SENT_FAST_PC = sent_reading(SENT_CHECKPOINT, "int8-dynamic-pc")
SENT_V1_MODELS = {"sent-minilm (v1, int8)": sent_reading(SENT_V1, "int8-dynamic")}
# the later training variants, read from their committed caches beside the shipped model (weights not shipped)
SENT_VARIANTS = {SENT_V3[4:]: sent_reading(SENT_V3), SENT_V4[4:]: sent_reading(SENT_V4),
                 SENT_V5[4:]: sent_reading(SENT_V5), SENT_V6[4:]: sent_reading(SENT_V6),
                 SENT_V7[4:]: sent_reading(SENT_V7), SENT_V8[4:]: sent_reading(SENT_V8),
                 SENT_V9[4:]: sent_reading(SENT_V9), SENT_V10[4:]: sent_reading(SENT_V10)}
# v7 (all three heads) read the published AlignScore way, beside the sentence readings in the full-set tables: the
# AlignScore chapter's in-house stand-in for the paper's own reading (its head and splitting ablations use this run)
ALIGN_READINGS = {f"{SENT_V7[4:]} (AlignScore: chunks, 3-way head)": ("alignscore", {"checkpoint": SENT_V7})}
# The GPU machine had no spaCy at first, so the sentence splitter resolved to the rule splitter there; its scores
# are kept for one model, as the measured cost of that splitter on lower-cased news text
SENT_V8_RULE = sent_reading(SENT_V8, score_type="e", sentence_splitter="rule")
SENT_BASELINES = {"ROUGE-L": ("rougeL", {}), "BERTScore-P (MiniLM)": ("bertscore", {}),
                  "nli-minilm": ("nli", {"checkpoint": "tfc/nli-minilm", "mode": "document"})}


def contrast_counts(checkpoint: str = SENT_V1) -> dict:
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


# "what we tried": every training / reading variant of the in-house models, with what it measured. The
# numbers are computed here from the training records and the score caches; only the descriptions are text.
TRIED = (
    {"variant": "nli-minilm, whole-document NLI", "checkpoint": "tfc/nli-minilm",
     "scorer": ("nli", {"checkpoint": "tfc/nli-minilm", "mode": "document"}),
     "data": "3-way sources (VitaminC, ANLI test, SICK, FEVER sets), 256 tokens, fp32"},
    {"variant": "nli-minilm, sentence-level NLI", "checkpoint": "tfc/nli-minilm",
     "scorer": ("nli", {"checkpoint": "tfc/nli-minilm", "mode": "sentence"}),
     "data": "as above; grounding read in sentence chunks at inference"},
    {"variant": "alignscore-minilm, published chunk reading", "checkpoint": "tfc/alignscore-minilm",
     "scorer": ("alignscore", {"checkpoint": "tfc/alignscore-minilm"}),
     "data": "3-way + binary + regression sources, perturbation-only synthetic pairs, 256 tokens, fp32"},
    {"variant": "sent-minilm (v1), SummaC-ZS reading (int8 dynamic)", "checkpoint": SENT_V1,
     "scorer": sent_reading(SENT_V1, "int8-dynamic"),
     "data": "sentence mix v1: human-labelled sentence pairs, word-order contrast, leave-one-out passages, "
             "WeCheck ANLI teacher targets; 128 tokens, fp32, 2100 steps from MiniLM"},
    {"variant": "sent-minilm (v1), SummaC-ZS reading (fp32, 60-row samples)", "checkpoint": SENT_V1,
     "scorer": sent_reading(SENT_V1),
     "data": "as above, unquantised inference"},
    {"variant": "sent-minilm-v2, SummaC-ZS reading (fp32)", "checkpoint": SENT_CHECKPOINT,
     "scorer": sent_reading(SENT_CHECKPOINT),
     "data": "sentence mix v2 (v1 + identical-sentence and PTB-form copies, PP-deletion compressions); "
             "continued from v1's weights, v1's dev rows held out; 128 tokens, fp32"},
    {"variant": "sent-minilm-v3, SummaC-ZS reading (fp32)", "checkpoint": SENT_V3,
     "scorer": sent_reading(SENT_V3),
     "data": "sentence mix v3: the six human-labelled 3-way sources alone (VitaminC real, SNLI, TaxiNLI, "
             "MNLI-hard, SICK, ANLI), no generated pairs, no teacher; 3-way head only, from MiniLM, one pass, "
             "128 tokens, fp32"},
    {"variant": "sent-minilm-v4, SummaC-ZS reading (fp32)", "checkpoint": SENT_V4,
     "scorer": sent_reading(SENT_V4),
     "data": "sentence mix v4: v3's rows + word-order contrast (v2's rules with copies and compressions, plus "
             "PAWS-style modifier / noun swaps and reordered lists), no passages, no teacher; continued from v3, "
             "v3's dev rows held out; 128 tokens, fp32"},
    {"variant": "sent-minilm-v5, SummaC-ZS reading (fp32)", "checkpoint": SENT_V5,
     "scorer": sent_reading(SENT_V5),
     "data": "sentence mix v5: every human-labelled 3-way sentence source (v3's six + CAD-SNLI minimal edits, "
             "Breaking NLI, ConjNLI, MED, FEVER symmetric / adversarial / triggers), nothing generated, no teacher; "
             "continued from v3 (a second pass over v3's rows), v3's dev rows held out; 128 tokens, fp32"},
    *({"variant": f"{name}, SummaC-ZS reading (fp32)", "checkpoint": f"tfc/{name}",
       "scorer": sent_reading(f"tfc/{name}"),
       "data": f"{recipe['note']}; {recipe['epochs']} epochs of {recipe['mix'].removesuffix('.parquet')} from "
               f"{BASE_NAMES.get(recipe.get('base', 'minilm'), recipe.get('base'))}, "
               f"batches of {recipe['batch_size']} at lr {recipe['lr']:g}, 128 tokens, on an H100 (`tfc gpu`)"}
      for name, recipe in GPU_VARIANTS.items()),
    {"variant": "sent-minilm-v9, SummaC-ZS reading (fp32)", "checkpoint": SENT_V9,
     "scorer": sent_reading(SENT_V9),
     "data": f"v8 continued for {SENT_V9_RECIPE['epochs']} more epoch of its own mix "
             f"({SENT_V9_RECIPE['mix'].removesuffix('.parquet')}: v3's pairs plus word-order contrast) from v8's int8 "
             f"release, batches of {SENT_V9_RECIPE['batch_size']} at lr {SENT_V9_RECIPE['lr']:g}, v8's dev rows held "
             f"out, 128 tokens, bf16 autocast on a 2-core CPU with AMX"},
    {"variant": "sent-minilm-v7, AlignScore reading (chunks x claim sentences, 3-way head)", "checkpoint": SENT_V7,
     "scorer": next(iter(ALIGN_READINGS.values())),
     "data": "v7's weights (all three heads) read the published AlignScore way, 350-word chunks at up to 512 tokens; "
             "the head and splitting ablations below come from this run and its siblings"},
    {"variant": "wecheck-minilm-v8, v8's chosen reading", "checkpoint": WECHECK_V8,
     "scorer": ("summac-zs", {**sent_reading(SENT_V8, grounding_granularity="sentence", score_type="e")[1],
                              "checkpoint": WECHECK_V8}),
     "data": "WeCheck's recipe as for wecheck-minilm (the same weak dialogue pool, label model, noise filter and "
             "settings; tfc.train.wecheck.RUNS) from v8 instead of nli-minilm; the WeCheck chapter compares it with v8"},
    {"variant": "sent-minilm-v8, max P(e), rule sentence splitter", "checkpoint": SENT_V8,
     "scorer": SENT_V8_RULE,
     "data": "the same weights and reading, split by the rule splitter (the GPU machine's first scoring, "
             "before spaCy was carried there)"},
)


def tried_variants() -> tuple:
    """:data:`TRIED` plus one row per reading a model's dev-data sweep chose over the preset (read from the
    committed records: the rows appear when a sweep is recorded, with no code change)."""
    extra = tuple({"variant": f"{label}, chosen on training-side dev data", "checkpoint": spec[1]["checkpoint"],
                   "scorer": spec, "data": "the same model; the reading chosen by `tfc train aggregation` on BEGIN v1 "
                                           "test and leave-one-out ANLI passages (never TRUE)"}
                  for label, spec in chosen_readings().items())
    return TRIED + extra


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
