"""SummaC-Conv's shipped heads: fitted on training-side dev pairs, measured on held-out ones.

Two heads read the shipped sentence model's matrices (:mod:`tfc.scorers.summac_conv`):

* ``summac-conv-minilm``, tfc's head, on the matrices at the grounding granularity the readings chose for
  SummaC-ZS (the same matrices, so the same long-evidence behaviour), every sentence kept;
* ``summac-conv-package-minilm``, the package's head (as published: percentile bins, the first 10 generated
  sentences, sentence matrices with the package's short-sentence filter), trained with the package's loop.

Each is fitted on the dev frames of :mod:`tfc.runs.readings` drawn with another seed (:data:`FIT_SEED`), without
any pair that is also in the measurement frames (the readings' own draw). It ships as a file release (the head's
weights and ``summac_conv.json``), and its record (``results/models/<name>/training_summary.json``) says what the
run asked and the AUC it measured on each held-out dev frame.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd

FIT_SEED = 0
NAME = "summac-conv-minilm"
PACKAGE_NAME = "summac-conv-package-minilm"
# what each head reads and how it is trained: the configuration overrides and the trainer's arguments
HEADS = {
    "tfc": {"name": NAME, "overrides": {"sentence_splitter": "auto"}, "train": {"epochs": 200, "lr": 1e-2}},
    "package": {"name": PACKAGE_NAME, "overrides": {"grounding_granularity": "sentence", "sentence_splitter": "summac"},
                "train": {"epochs": 5, "lr": 1e-2, "bins": "percentile"}},
}


def held_out(fit: pd.DataFrame, measure: pd.DataFrame) -> pd.DataFrame:
    """``fit`` without the (grounding, generated) pairs that ``measure`` holds."""
    seen = set(zip(measure["grounding"], measure["generated"]))
    keep = [(g, h) not in seen for g, h in zip(fit["grounding"], fit["generated"])]
    return fit[keep].reset_index(drop=True)


def _granularity(checkpoint: str, head: str) -> str:
    from tfc.runs import readings as R

    if "grounding_granularity" in HEADS[head]["overrides"]:
        return HEADS[head]["overrides"]["grounding_granularity"]
    chosen = (R.recorded(checkpoint) or {}).get("chosen_overrides", {}).get("summac-zs", {})
    return chosen.get("grounding_granularity", "sentence")


def run(checkpoint: str | None = None, head: str = "tfc", rows: int | None = None) -> dict:
    """Fit ``head`` ("tfc" or "package"), measure it, ship ``results/release/<name>`` and write its record;
    returns the record."""
    from tfc import scorers as S
    from tfc.meta import roc_auc
    from tfc.models import release
    from tfc.runs import readings as R
    from tfc.runs import write_record
    from tfc.scorers.summac_conv import train_conv, train_package_head

    checkpoint = checkpoint or S.SHIPPED_NLI
    rows = rows or R.ROWS
    spec = HEADS[head]
    reading = {**spec["overrides"], "grounding_granularity": _granularity(checkpoint, head)}
    measure = R.dev_frames(rows, R.SEED)
    fit = {k: held_out(v, measure[k]) for k, v in R.dev_frames(rows, FIT_SEED).items()}
    fit = {k: v for k, v in fit.items() if len(v)}
    trainer = train_package_head if head == "package" else train_conv
    with tempfile.TemporaryDirectory() as tmp:
        meta = trainer(checkpoint, [], tmp, frames=fit, seed=FIT_SEED, **spec["train"], **reading)
        sc = S.get("summac-conv", preset="as-published", checkpoint=checkpoint, conv_checkpoint=tmp, **reading)
        meta["fit_seed"], meta["measured_seed"] = FIT_SEED, R.SEED
        meta["dev_auc"] = {k: round(100 * roc_auc(df["label"].to_numpy(),
                                                  sc.score(df["grounding"].tolist(), df["generated"].tolist(),
                                                           progress=False)), 2)
                           for k, df in measure.items()}
        (Path(tmp) / "summac_conv.json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
        out = release.pack_files(tmp, spec["name"], note=f"SummaC-Conv's {head} head over {checkpoint}'s "
                                 f"{reading['grounding_granularity']} matrices, fitted on training-side dev pairs")
    write_record(spec["name"], "training_summary.json", meta)
    ident = json.loads((out / release.META).read_text())["materialized_identity"]
    write_record(spec["name"], "identity.json", {"checkpoint": f"tfc/{spec['name']}", "identity": ident,
                                                 "note": f"identity of the shipped release results/release/{spec['name']}"})
    return meta
