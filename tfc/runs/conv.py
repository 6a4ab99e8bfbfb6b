"""SummaC-Conv's shipped convolution: fitted on training-side dev pairs, measured on held-out ones.

The convolution reads histograms of the shipped sentence model's entailment matrices. It is fitted on the dev
frames of :mod:`tfc.runs.readings` drawn with another seed (:data:`FIT_SEED`), without any pair that is also in
the measurement frames (the readings' own draw), at the grounding granularity the readings chose for SummaC-ZS
(the same matrices, so the same long-evidence behaviour). It ships as a file release (``conv.safetensors`` and
``summac_conv.json``), and its record (``results/models/<name>/training_summary.json``) says what the run asked
and the AUC it measured on each held-out dev frame.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd

FIT_SEED = 0
NAME = "summac-conv-minilm"


def held_out(fit: pd.DataFrame, measure: pd.DataFrame) -> pd.DataFrame:
    """``fit`` without the (grounding, generated) pairs that ``measure`` holds."""
    seen = set(zip(measure["grounding"], measure["generated"]))
    keep = [(g, h) not in seen for g, h in zip(fit["grounding"], fit["generated"])]
    return fit[keep].reset_index(drop=True)


def run(checkpoint: str | None = None, name: str = NAME, rows: int | None = None, granularity: str | None = None,
        epochs: int = 200, lr: float = 1e-2) -> dict:
    """Fit, measure, ship ``results/release/<name>`` and write its record; returns the record."""
    from tfc import scorers as S
    from tfc.meta import roc_auc
    from tfc.models import release
    from tfc.runs import readings as R
    from tfc.runs import write_record
    from tfc.scorers.summac import train_conv

    checkpoint = checkpoint or S.SHIPPED_NLI
    rows = rows or R.ROWS
    if granularity is None:
        chosen = (R.recorded(checkpoint) or {}).get("chosen_overrides", {}).get("summac-zs", {})
        granularity = chosen.get("grounding_granularity", "sentence")
    measure = R.dev_frames(rows, R.SEED)
    fit = {k: held_out(v, measure[k]) for k, v in R.dev_frames(rows, FIT_SEED).items()}
    fit = {k: v for k, v in fit.items() if len(v)}
    with tempfile.TemporaryDirectory() as tmp:
        meta = train_conv(checkpoint, [], tmp, frames=fit, seed=FIT_SEED, epochs=epochs, lr=lr,
                          grounding_granularity=granularity)
        sc = S.get("summac-conv", preset="as-published", checkpoint=checkpoint, conv_checkpoint=tmp,
                   grounding_granularity=granularity)
        meta["fit_seed"], meta["measured_seed"] = FIT_SEED, R.SEED
        meta["dev_auc"] = {k: round(100 * roc_auc(df["label"].to_numpy(),
                                                  sc.score(df["grounding"].tolist(), df["generated"].tolist(),
                                                           progress=False)), 2)
                           for k, df in measure.items()}
        (Path(tmp) / "summac_conv.json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
        out = release.pack_files(tmp, name, note=f"SummaC-Conv's convolution over {checkpoint}'s {granularity} "
                                                 "matrices, fitted on training-side dev pairs")
    write_record(name, "training_summary.json", meta)
    ident = json.loads((out / release.META).read_text())["materialized_identity"]
    write_record(name, "identity.json", {"checkpoint": f"tfc/{name}", "identity": ident,
                                         "note": f"identity of the shipped release results/release/{name}"})
    return meta
