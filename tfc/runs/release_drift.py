"""The drift rule of a shipped model: its release scores like its training output.

A release stores a model in int8 (and may take some matrices from its base), so its scores are not bit for bit
those of the weights the training run wrote. The rule: on :data:`ROWS` stratified rows of each of TRUE's nine
sets, scored by the model's default scorer with the training output and with the release, the largest absolute
score difference is at most :data:`MAX_ABS_DIFF` and every set's ROC AUC moves by at most :data:`MAX_AUC_DIFF`
points. The TRUE rows are only read here, never fitted on. The figures are recorded as
``results/models/<name>/release_drift.json``; ``tests/test_defaults.py`` checks that each shipped model's record
meets the rule.
"""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np

ROWS = 60
SEED = 0
MAX_ABS_DIFF = 0.02
MAX_AUC_DIFF = 0.2
RECORD = "release_drift.json"
TRUE9 = ("frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2", "dialfact", "paws")


def measure(source: str, release: str, scorer: str, overrides: dict | None = None, datasets=TRUE9,
            rows: int = ROWS, seed: int = SEED) -> dict:
    """Score the drift rows with ``scorer`` (as published, plus ``overrides``) reading ``source`` (the training
    output's folder) and ``release`` (``tfc/<name>``); the record of :func:`record`."""
    from tfc import data
    from tfc import scorers as S
    from tfc.meta import roc_auc

    sides = {k: S.get(scorer, preset="as-published", **{**(overrides or {}), "checkpoint": ck})
             for k, ck in (("source", source), ("release", release))}
    per_set = []
    for ds in datasets:
        df = data.load(ds, sample=rows, seed=seed)
        got = {k: sc.score(df["grounding"].tolist(), df["generated"].tolist(), progress=False)
               for k, sc in sides.items()}
        y = df["label"].to_numpy()
        auc = {k: 100 * roc_auc(y, v) for k, v in got.items()}
        per_set.append({"dataset": ds, "rows": int(len(df)),
                        "max_abs_diff": float(np.max(np.abs(got["source"] - got["release"]))),
                        "auc_source": auc["source"], "auc_release": auc["release"],
                        "auc_diff": auc["release"] - auc["source"]})
    worst = max(p["max_abs_diff"] for p in per_set)
    worst_auc = max(abs(p["auc_diff"]) for p in per_set)
    return {"release": release, "scorer": scorer, "overrides": overrides or {}, "rows_per_set": rows, "seed": seed,
            "per_set": per_set, "max_abs_diff": worst, "max_abs_auc_diff": worst_auc,
            "rule": {"max_abs_diff": MAX_ABS_DIFF, "max_auc_diff": MAX_AUC_DIFF},
            "meets_rule": bool(worst <= MAX_ABS_DIFF and worst_auc <= MAX_AUC_DIFF),
            "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def record(result: dict) -> None:
    from tfc.runs import write_record

    write_record(result["release"], RECORD, result)


def recorded(release: str) -> dict | None:
    from tfc.runs import read_record

    return read_record(release, RECORD)
