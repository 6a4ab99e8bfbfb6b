"""The drift rule of a shipped model: its release scores like its training output.

A release stores a model in int8 (and may take some matrices from its base), so its scores are not bit for bit
those of the weights the training run wrote. The rule: on :data:`ROWS` stratified rows of each of TRUE's nine
sets, scored by the model's default scorer with the training output and with the release, the largest absolute
score difference is at most :data:`MAX_ABS_DIFF` and every set's ROC AUC moves by at most :data:`MAX_AUC_DIFF`
points. The TRUE rows are only read here, never fitted on. The figures are recorded as
``results/models/<name>/release_drift.json`` (``tfc models release drift``); ``tests/test_release_drift.py`` checks
that every shipped model has one, that its verdict follows from its figures, and that it meets the rule.

The scorer reads each side in its default configuration with the checkpoint swapped and no calibration map (a
map is fitted to one checkpoint's raw scores, and the rule is about the model, not the map).
"""
from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np

ROWS = 60
SEED = 0
MAX_ABS_DIFF = 0.02
MAX_AUC_DIFF = 0.2
RECORD = "release_drift.json"
TRUE9 = ("frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2", "dialfact", "paws")


def measure(source: str, release: str, scorer: str, overrides: dict | None = None, datasets=TRUE9,
            rows: int = ROWS, seed: int = SEED, note: str = "", log=None) -> dict:
    """Score the drift rows with ``scorer`` (its default configuration, plus ``overrides``, uncalibrated) reading
    ``source`` (the training output's folder) and ``release`` (``tfc/<name>``); the record of :func:`record`.
    ``note`` says what the source is when it is not the output the release was packed from (``packed_from``)."""
    from tfc import data
    from tfc import scorers as S

    uncal = {"calibration": None} if "calibration" in S.get(scorer).config.signature_fields() else {}
    sides = {k: S.get(scorer, **{**(overrides or {}), "checkpoint": ck, **uncal})
             for k, ck in (("source", source), ("release", release))}
    per_set = []
    for ds in datasets:
        df = data.load(ds, sample=rows, seed=seed)
        got = {k: sc.score(df["grounding"].tolist(), df["generated"].tolist(), progress=False)
               for k, sc in sides.items()}
        per_set.append(_set_figures(ds, df["label"].to_numpy(), got["source"], got["release"]))
        if log:
            log(f"{ds}: {per_set[-1]['rows']} rows, max |diff| {per_set[-1]['max_abs_diff']:.4f}, "
                f"AUC diff {per_set[-1]['auc_diff']:+.3f}")
    return verdict({"release": release, "scorer": scorer, "overrides": overrides or {},
                    "source_identity": "sha256:" + _identity(source), "packed_from": _packed_from(release),
                    "source_note": note, "signature": sides["release"].signature,
                    "rows_per_set": rows, "seed": seed, "per_set": per_set,
                    "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds")})


def _identity(path: str) -> str:
    from tfc.models.identity import content_hash

    return content_hash(path)[:12]


def _packed_from(release: str) -> str | None:
    """The identity of the training output the shipped release ``tfc/<name>`` was packed from (its release.json)."""
    from tfc.models import release as rel

    meta = rel.release_dir(release.removeprefix("tfc/")) / "release.json"
    return json.loads(meta.read_text()).get("source_identity") if meta.is_file() else None


def _set_figures(dataset: str, labels, source, release) -> dict:
    """One set's figures: rows, the largest |score difference|, both ROC AUCs (x 100) and their difference."""
    from tfc.meta import roc_auc

    source, release = np.asarray(source, float), np.asarray(release, float)
    if source.shape != release.shape or not (np.isfinite(source).all() and np.isfinite(release).all()):
        raise ValueError(f"{dataset}: the two sides gave {source.shape} and {release.shape} scores, or a NaN")
    a, b = 100 * roc_auc(labels, source), 100 * roc_auc(labels, release)
    return {"dataset": dataset, "rows": int(len(source)), "max_abs_diff": float(np.max(np.abs(source - release))),
            "auc_source": a, "auc_release": b, "auc_diff": b - a}


def verdict(rec: dict) -> dict:
    """``rec`` with its worst figures over the sets and whether they meet the rule (recomputed from ``per_set``)."""
    if not rec.get("per_set"):
        raise ValueError("a drift record needs at least one set's figures")
    worst = max(p["max_abs_diff"] for p in rec["per_set"])
    worst_auc = max(abs(p["auc_diff"]) for p in rec["per_set"])
    return {**rec, "max_abs_diff": worst, "max_abs_auc_diff": worst_auc,
            "rule": {"max_abs_diff": MAX_ABS_DIFF, "max_auc_diff": MAX_AUC_DIFF},
            "meets_rule": bool(worst <= MAX_ABS_DIFF and worst_auc <= MAX_AUC_DIFF)}


def record(result: dict) -> None:
    from tfc.runs import write_record

    write_record(result["release"], RECORD, result)


def recorded(release: str) -> dict | None:
    from tfc.runs import read_record

    return read_record(release, RECORD)


def from_training_record(release: str) -> dict:
    """The rule's record from the drift a release's training record measured when it was packed
    (``eval_results.drift_release_vs_source`` of ``results/models/<name>/training_summary.json``: every TRUE row, the source
    read at the reading of its record's note), for a release whose training output is no longer at hand."""
    from tfc.runs import read_record

    evals = (read_record(release, "training_summary.json") or {}).get("eval_results") or {}
    rows = evals.get("drift_release_vs_source")
    if not rows:
        raise ValueError(f"{release}: its training record holds no drift_release_vs_source")
    per_set = [{"dataset": r["dataset"], "rows": int(r["rows"]), "max_abs_diff": float(r["max_abs_score_diff"]),
                "auc_source": float(r["auc_fp32"]), "auc_release": float(r["auc_fast"]),
                "auc_diff": float(r["auc_fast"]) - float(r["auc_fp32"])} for r in rows]
    return verdict({"release": release, "scorer": None, "overrides": {},
                    "source_identity": (evals.get("release") or {}).get("source_identity"),
                    "packed_from": _packed_from(release), "source_note": "",
                    "rows_per_set": "all", "seed": None, "per_set": per_set,
                    "measured_by": "the release's training record (every TRUE row, when it was packed)",
                    "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds")})
