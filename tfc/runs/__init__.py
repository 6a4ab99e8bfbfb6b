"""Scoring runs and their records: which checkpoint scored which dataset, when, and how fast.

* :mod:`tfc.runs.qgqa` runs the QG-QA scorers (QAGS, Q²) over their datasets;
* :mod:`tfc.runs.readings`, :mod:`tfc.runs.calibrate` and :mod:`tfc.runs.release_drift` measure the shipped
  defaults (their readings, calibration maps and release drift) and record what they measured beside the model's
  other records (:func:`write_record`, :func:`read_record`).
"""
from __future__ import annotations

import json


def _record_path(model: str, filename: str):
    from tfc import config

    return config.model_records_dir() / model.removeprefix("tfc/") / filename


def write_record(model: str, filename: str, data: dict) -> None:
    """Write ``results/models/<model>/<filename>`` (JSON)."""
    p = _record_path(model, filename)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, indent=1, default=float) + "\n")


def read_record(model: str, filename: str) -> dict | None:
    """The JSON record ``results/models/<model>/<filename>``, or None."""
    p = _record_path(model, filename)
    return json.loads(p.read_text()) if p.is_file() else None
