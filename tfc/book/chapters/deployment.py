"""Choosing a threshold for a deployment: tune it on a dev split, freeze it, report the test split.

A checker used as a filter needs a cut: a text passes when its score is at least ``t``. This module takes a
benchmark with a validation and a test split in the mirror (SummaC's XSumFaith by default), scores both with a
scorer's recommended default through the score cache, and evaluates the test rows with
:func:`tfc.evaluate_frame` (the code behind ``tfc evaluate --dev``): the balanced accuracy at the fixed 0.5, at
the threshold tuned on the validation rows and frozen, and at the threshold tuned on the test rows themselves
(in-sample, so optimistic), each with its bootstrap interval. A calibrated scorer's raw score (the cache's
``aux_raw_score``) is evaluated beside it, so the page shows what calibration changes (the 0.5 cut, the ECE) and
what it cannot change (the AUC, the dev-tuned balanced accuracy).
"""
from __future__ import annotations

import pandas as pd

DATASET = "summac_xsumfaith"
DEV_SPLIT, TEST_SPLIT = "val", "test"
SCORER = "nli"
N_BOOT = 1000
ROWS = 250                # per split, label-stratified (seed 0), through the cache
SMOKE_ROWS = 120          # per split in smoke mode (scored live, nothing cached)

# report key -> (metric, threshold key or None, interval key)
METRICS = {"roc_auc": ("ROC AUC", None, "auc_ci"),
           "bacc_fixed": ("BAcc, fixed threshold", "threshold_fixed", "bacc_fixed_ci"),
           "bacc_dev": ("BAcc, threshold tuned on validation and frozen", "threshold_dev", "bacc_dev_ci"),
           "bacc_in_sample": ("BAcc, threshold tuned on test (in-sample)", "threshold_in_sample",
                              "bacc_in_sample_ci"),
           "ece": ("ECE (10 bins)", None, "ece_ci")}


def _frame(scorer, dataset: str, split: str, sample: int | None, use_cache: bool) -> pd.DataFrame:
    """``label`` and the scorer's score of one split; ``raw`` too when the scorer is calibrated."""
    from tfc.results.dataset import score_dataset

    got = score_dataset(scorer, dataset, split=split, sample=sample, use_cache=use_cache)
    out = pd.DataFrame({"label": got["label"].to_numpy(), scorer.name: got["score"].to_numpy()})
    if scorer.calibrated and use_cache:
        out[f"{scorer.name} (raw)"] = got["aux_raw_score"].to_numpy()
    return out


def evaluate(scorer: str = SCORER, dataset: str = DATASET, smoke: bool = False, device: str | None = None,
             n_boot: int = N_BOOT) -> dict:
    """Score the validation and test splits with ``scorer``'s default and evaluate the test rows with the
    threshold frozen from the validation rows. Returns ``{"signature", "dataset", "report", "table"}``."""
    from tfc import scorers
    from tfc.results.own_eval import evaluate_frame

    sc = scorers.get(scorer, **({"device": device} if device else {}))
    sample, use_cache = (SMOKE_ROWS, False) if smoke else (ROWS, True)
    dev = _frame(sc, dataset, DEV_SPLIT, sample, use_cache)
    test = _frame(sc, dataset, TEST_SPLIT, sample, use_cache)
    rep = evaluate_frame(test, "label", n_boot=n_boot, seed=0, dev=dev, dev_where=f"{dataset} {DEV_SPLIT}",
                         where=f"{dataset} {TEST_SPLIT}")
    return {"signature": sc.signature, "dataset": dataset, "report": rep, "table": table(rep)}


def table(rep: dict) -> pd.DataFrame:
    """One row per (score column, metric): value, 95% interval and threshold, rounded for the page."""
    rows = []
    for col in rep["scores"]:
        for key, (metric, thr, ci) in METRICS.items():
            if col.get(key) is None:
                continue
            lo, hi = col.get(ci) or (float("nan"), float("nan"))
            rows.append({"score": col["column"], "metric": metric, "value": round(float(col[key]), 3),
                         "95% CI": f"[{lo:.3f}, {hi:.3f}]",
                         "threshold": round(float(col[thr]), 3) if thr and col.get(thr) is not None else None})
    return pd.DataFrame(rows)


def value(rep: dict, column: str, key: str) -> float:
    """One number of the report (for the page's glue)."""
    return float(next(c for c in rep["scores"] if c["column"] == column)[key])


# the page's glue keys: (column, report key) for the calibrated score and its raw twin
GLUED = {f"deploy_{tag}_{key}": (col, key) for tag, col in (("cal", "nli"), ("raw", "nli (raw)"))
         for key in ("threshold_dev", "bacc_dev", "bacc_fixed", "bacc_in_sample", "ece", "roc_auc")}


def glue_values(dep: dict) -> dict[str, str]:
    """The numbers the page cites, formatted (three decimals), keyed by glue key."""
    rep = dep["report"]
    out = {"deploy_signature": dep["signature"], "deploy_n_dev": str(rep["dev"]["rows"]),
           "deploy_n_test": str(rep["rows"]), "deploy_test_consistent": str(rep["consistent"])}
    cols = {c["column"] for c in rep["scores"]}
    out.update({k: f"{value(rep, col, key):.3f}" for k, (col, key) in GLUED.items() if col in cols})
    return out
