"""Fit, measure and ship the calibration map of a scorer's default (:mod:`tfc.scorers.calibration`).

The map is fitted on training-side dev pairs (the sources of :mod:`tfc.runs.readings`, another draw: seed
:data:`FIT_SEED`, without any row of the readings' dev frames) and measured, never fitted, on the readings' dev
frames and on stratified rows of TRUE's nine sets: the expected calibration error (ECE, :data:`BINS` equal-width
bins) before and after, and the ROC AUC, which a strictly increasing map leaves unchanged. The ECE isotonic
regression reaches on the same held-out rows is recorded beside it, for comparison: the shipped map is Platt
scaling, because isotonic steps tie scores that were distinct and so can move an AUC.
Records: ``results/models/<calibration name>/calibration_record.json``.
"""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd

FIT_SEED = 3
FIT_ROWS = 300           # per dev source, before the dev frames' rows are removed
TRUE_ROWS = 60           # per TRUE set, stratified (measured only): the drift rule's rows
BINS = 10
RECORD = "calibration_record.json"
TRUE9 = ("frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2", "dialfact", "paws")


def fit_frames(rows: int = FIT_ROWS, seed: int = FIT_SEED) -> pd.DataFrame:
    """Training-side fitting rows: the readings' sources drawn with ``seed``, the readings' dev rows removed."""
    from tfc.runs import readings as R

    seen = set()
    for f in R.dev_frames(R.ROWS, R.SEED).values():
        seen |= set(zip(f["grounding"], f["generated"]))
    parts = [f.assign(source=k) for k, f in R.dev_frames(rows, seed).items()]
    df = pd.concat(parts, ignore_index=True)
    return df[[(g, h) not in seen for g, h in zip(df["grounding"], df["generated"])]].reset_index(drop=True)


def _measure(raw_scores, cal_scores, labels) -> dict:
    from tfc.meta import expected_calibration_error, roc_auc

    y = np.asarray(labels, dtype=int)
    raw = np.asarray(raw_scores, dtype=float)
    out = {"rows": int(len(y)), "auc": 100 * roc_auc(y, cal_scores),
           "auc_change": 100 * (roc_auc(y, cal_scores) - roc_auc(y, raw)),
           "ece_after": expected_calibration_error(y, cal_scores, bins=BINS)}
    out["ece_before"] = (expected_calibration_error(y, raw, bins=BINS)
                         if raw.min() >= 0 and raw.max() <= 1 else None)   # a raw score outside [0, 1] has no ECE
    return out


def run(name: str, cal_name: str, frames: dict | None = None, fit: pd.DataFrame | None = None) -> dict:
    """Fit the map of scorer ``name``'s default (raw), ship it as ``tfc/<cal_name>`` and return the record."""
    from tfc import data
    from tfc import scorers as S
    from tfc.runs import readings as R
    from tfc.scorers import calibration as C

    raw = S.get(name, calibration=None)
    fit = fit_frames() if fit is None else fit
    s_fit = raw.score(fit["grounding"].tolist(), fit["generated"].tolist(), progress=False)
    m = {**C.fit(s_fit, fit["label"].to_numpy(), raw.output_range), **C.raw_identity(raw),
         "fitted_on": {"rows": int(len(fit)), "by_source": fit["source"].value_counts().to_dict(), "seed": FIT_SEED}}
    C.write(m, cal_name)
    frames = R.dev_frames(R.ROWS, R.SEED) if frames is None else frames
    dev = pd.concat([f.assign(source=k) for k, f in frames.items()], ignore_index=True)
    s_dev = raw.score(dev["grounding"].tolist(), dev["generated"].tolist(), progress=False)
    rec = {"scorer": name, "calibration": f"tfc/{cal_name}", "map": m, "bins": BINS,
           "fit": _measure(s_fit, C.apply(m, s_fit), fit["label"]),
           "dev": _measure(s_dev, C.apply(m, s_dev), dev["label"]),
           "dev_by_set": {k: _measure(s_dev[dev["source"] == k], C.apply(m, s_dev[dev["source"] == k]),
                                      dev.loc[dev["source"] == k, "label"]) for k in frames},
           "true_by_set": {}}
    # isotonic regression for comparison: fitted on the same fitting rows, measured on the same dev rows
    rec["isotonic_dev_ece"] = C.isotonic_ece(np.concatenate([s_fit, s_dev]),
                                             np.concatenate([fit["label"], dev["label"]]),
                                             np.arange(len(fit)), len(fit) + np.arange(len(dev)))
    for ds in TRUE9:
        df = data.load(ds, sample=TRUE_ROWS, seed=0)
        s = raw.score(df["grounding"].tolist(), df["generated"].tolist(), progress=False)
        rec["true_by_set"][ds] = _measure(s, C.apply(m, s), df["label"])
    rec["recorded"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return rec


def record(rec: dict) -> None:
    from tfc.runs import write_record

    write_record(rec["calibration"], RECORD, rec)


def recorded(cal_name: str) -> dict | None:
    from tfc.runs import read_record

    return read_record(cal_name, RECORD)
