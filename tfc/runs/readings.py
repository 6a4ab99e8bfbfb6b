"""The reading of each alignment-family scorer's default, chosen on training-side dev data with long groundings.

A shipped sentence-level model can be read several ways: the ``nli`` scorer reads the whole grounding (in
chunks that fit the model) or sentence by sentence; ``summac-zs`` reads grounding sentences (or sentences and
adjacent pairs) and reduces P(e) - P(c) or P(e); ``alignscore`` reads chunks of 350 words (as published), or
shorter ones. A model trained on 128-token sentence pairs need not carry over to 350-word chunks, so the
choice is measured, per scorer, on dev sets whose groundings range from one dialogue turn to a few hundred
words:

* ``begin_test`` and ``dialfact_test``: knowledge-grounded dialogue (BEGIN v1's test split; DialFact's test
  sample), through the leakage filter (:mod:`tfc.runs.aggregation`);
* ``loo_anli``: leave-one-sentence-out pairs on ANLI's paragraph premises (about 60 words);
* ``loo_long``: the same pairs with the passage set among other premises (``distractors`` of them, shuffled):
  about 250 words of evidence, of which the claim's support is one paragraph.

Never an evaluation set: the leakage filter runs on every source, and no TRUE or SummaC row is read. Each
reading is an ordinary scorer configuration, scored by the scorer itself. :func:`choose` picks, per scorer,
the reading with the best mean dev AUC; the as-published reading stays unless another gains more than
:data:`MARGIN` AUC points. The result is recorded under the model's record (``readings_dev.json``) and the
registry's ``DEFAULTS`` must agree with it (``tests/test_defaults.py``).
"""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd

# scorer -> reading name -> overrides on the as-published configuration (the first reading of each scorer
# is its as-published one)
READINGS: dict[str, dict[str, dict]] = {
    "nli": {
        "document": {"mode": "document"},
        "sentence, mean": {"mode": "sentence"},
        "sentence, min": {"mode": "sentence", "aggregation": "min"},
        "document, chunks of 128 tokens": {"mode": "document", "max_length": 128},
        "sentence, chunks of 128 tokens": {"mode": "sentence", "max_length": 128},
    },
    "summac-zs": {
        "sentence, max(e-c), mean": {"reduction": "cell", "sentence_splitter": "auto"},
        "sentence, max e, mean": {"score_type": "e", "sentence_splitter": "auto"},
        "window12, max(e-c), mean": {"grounding_granularity": "window12", "reduction": "cell",
                                     "sentence_splitter": "auto"},
        "window12, max e, mean": {"grounding_granularity": "window12", "score_type": "e", "sentence_splitter": "auto"},
    },
    "alignscore": {
        "chunks of 350 words": {"split": "chunk", "chunk_words": 350},
        "chunks of 100 words": {"split": "chunk", "chunk_words": 100},
        "chunks of 50 words": {"split": "chunk", "chunk_words": 50},
        "sentences": {"split": "smart-n"},
    },
    # WeCheck's model reads a whole generated text; how it reads a grounding longer than its input
    "wecheck": {
        "the README's call (truncate)": {"long_grounding": "truncate"},
        "chunks": {"long_grounding": "chunk"},
    },
}
# readings that drop part of a long input: one that reads every token replaces such a reading when its mean dev AUC
# is not lower (dev groundings that all fit the model's input cannot tell the two apart)
CUTS_TEXT: dict[str, tuple[str, ...]] = {"wecheck": ("the README's call (truncate)",)}
# the scorers a sentence-level NLI / alignment checkpoint is swept for (a WeCheck checkpoint: ("wecheck",))
ALIGNMENT_SCORERS = ("nli", "summac-zs", "alignscore")
DEV_SETS = ("begin_test", "dialfact_test", "loo_anli", "loo_long")
ROWS = 600              # per dev set, stratified by label
SEED = 1                # not the aggregation sweep's seed 0: another draw of the same sources
DISTRACTORS = 3         # other premises around a loo_long passage
# a scorer with a reading that drops part of a long input (CUTS_TEXT) is also measured where inputs are long: the
# passage among LONGER_DISTRACTORS other premises (median well over 512 tokens), the dev set "loo_longer"
LONGER_DISTRACTORS = 12
MARGIN = 0.5            # AUC points: a reading replaces the as-published one only for a larger mean gain
RECORD = "readings_dev.json"


def long_loo_dev(n: int = ROWS, seed: int = SEED, distractors: int = DISTRACTORS) -> pd.DataFrame:
    """``loo_anli`` pairs whose passage sits among ``distractors`` other premises (seeded, shuffled)."""
    from tfc.runs.aggregation import loo_dev

    df = loo_dev(n, seed).reset_index(drop=True)
    pool = sorted(pd.unique(df["grounding"]))
    rng = np.random.default_rng(seed)
    long = []
    for g in df["grounding"]:
        others = [p for p in rng.choice(len(pool), size=distractors + 1, replace=False) if pool[p] != g][:distractors]
        parts = [g] + [pool[p] for p in others]
        order = rng.permutation(len(parts))
        long.append(" ".join(parts[i] for i in order))
    return df.assign(grounding=long)


def dev_frames(n: int = ROWS, seed: int = SEED, longer: bool = False) -> dict[str, pd.DataFrame]:
    """The dev frames of :data:`DEV_SETS`; with ``longer``, also ``loo_longer`` (see :data:`LONGER_DISTRACTORS`)."""
    from tfc.runs import aggregation as A

    out = {"begin_test": A.begin_dev(n, seed), "dialfact_test": A.dialfact_dev(n, seed),
           "loo_anli": A.loo_dev(n, seed), "loo_long": long_loo_dev(n, seed)}
    if longer:
        out["loo_longer"] = long_loo_dev(n, seed, LONGER_DISTRACTORS)
    return out


def sweep(checkpoint: str, frames: dict[str, pd.DataFrame], scorers=ALIGNMENT_SCORERS, batch_size: int = 32,
          progress: bool = False) -> pd.DataFrame:
    """ROC AUC (points) and seconds of every reading of ``scorers`` on every dev frame."""
    import time

    from tfc import scorers as S
    from tfc.meta import roc_auc

    rows = []
    for name in scorers:
        for reading, overrides in READINGS[name].items():
            sc = S.get(name, preset="as-published", checkpoint=checkpoint, **overrides)
            for dev, df in frames.items():
                t0 = time.perf_counter()
                s = sc.score(df["grounding"].tolist(), df["generated"].tolist(), batch_size=batch_size,
                             progress=progress)
                rows.append({"scorer": name, "reading": reading, "dev set": dev, "rows": len(df),
                             "positives": int(df["label"].sum()), "auc": 100 * roc_auc(df["label"].to_numpy(), s),
                             "seconds": round(time.perf_counter() - t0, 2)})
    return pd.DataFrame(rows)


def choose(table: pd.DataFrame, margin: float = MARGIN) -> dict[str, str]:
    """Per scorer, the reading with the best mean dev AUC; the as-published (first) reading stays unless the best
    is more than ``margin`` points above it, or it drops part of a long input (:data:`CUTS_TEXT`) and a reading
    that reads all of it scores a mean at least as high."""
    out = {}
    for name, g in table.groupby("scorer", sort=False):
        mean = g.groupby("reading", sort=False)["auc"].mean()
        first = next(iter(READINGS[name]))
        best = str(mean.idxmax())
        out[name] = best if mean[best] > mean[first] + margin else first
        whole = [r for r in mean.index if r not in CUTS_TEXT.get(name, ())]
        if out[name] in CUTS_TEXT.get(name, ()) and whole and mean[whole].max() >= mean[out[name]]:
            out[name] = str(mean[whole].idxmax())
    return out


def run(checkpoint: str, n: int = ROWS, seed: int = SEED, progress: bool = False,
        scorers=ALIGNMENT_SCORERS) -> dict:
    """Sweep ``scorers``' readings, choose and return the record (see :func:`record`)."""
    from tfc.runs.aggregation import frame_digest

    frames = dev_frames(n, seed, longer=any(name in CUTS_TEXT for name in scorers))
    table = sweep(checkpoint, frames, scorers=scorers, progress=progress)
    chosen = choose(table)
    return {"checkpoint": checkpoint, "rows_per_set": n, "seed": seed, "margin": MARGIN,
            "dev_sets": {k: {"rows": len(v), "positives": int(v["label"].sum()), "digest": frame_digest(v),
                             "median_grounding_words": float(v["grounding"].str.split().str.len().median())}
                         for k, v in frames.items()},
            "chosen": chosen, "chosen_overrides": {k: READINGS[k][v] for k, v in chosen.items()},
            "table": table.to_dict(orient="records"),
            "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def record(result: dict) -> None:
    from tfc.runs import write_record

    write_record(result["checkpoint"], RECORD, result)


def recorded(checkpoint: str) -> dict | None:
    from tfc.runs import read_record

    return read_record(checkpoint, RECORD)



def wide(result: dict) -> pd.DataFrame:
    """The sweep as one row per (scorer, reading): AUC per dev set and the mean."""
    t = pd.DataFrame(result["table"])
    w = t.pivot_table(index=["scorer", "reading"], columns="dev set", values="auc", sort=False)
    w["mean"] = w.mean(axis=1)
    return w.reset_index()
