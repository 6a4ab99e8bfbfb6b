"""The aggregation of a sentence-level model, chosen on training-side dev data (never on TRUE).

A SummaC-ZS reading has three choices beside the model: which grounding units are read (single sentences,
or sentences plus every pair of adjacent sentences, ``window12``), how one generated unit's support is
taken from the (grounding unit x label) probabilities (the per-cell max of P(e) - P(c), the PyPI package's
max P(e) - max P(c), or max P(e) alone), and how the generated units are combined (mean or min).
:data:`AGGREGATIONS` lists the readings compared; each is a real ``summac-zs`` configuration, so the chosen
one is scored on TRUE by the ordinary scorer with its own signature.

The dev data is training-side only, and the leakage filter runs on it like on any training source:

* ``begin_test``: BEGIN v1's *test* split (human-labelled knowledge-grounded dialogue responses; TRUE uses
  the dev split). 21 of its evidence passages are also TRUE-Q² groundings; the filter drops those rows.
* ``loo_anli``: leave-one-sentence-out passages built from ANLI's premises (:func:`tfc.train.contrast.loo_pairs`):
  a claim from the passage is consistent (1); the claim against the passage without it, or a nearest sentence
  from another passage, is not (0). Multi-sentence groundings, as in summarisation.

Every reading of one granularity comes from one pass of the model (:meth:`SummaCZS.matrices`), so the sweep
costs two scoring passes, whatever the number of readings.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np
import pandas as pd

# reading name -> summac-zs overrides (the first is the reading the models were scored with: the "improved" preset)
AGGREGATIONS: dict[str, dict] = {
    "sentence, max(e-c), mean": {"grounding_granularity": "sentence", "reduction": "cell"},
    "sentence, max(e-c), min": {"grounding_granularity": "sentence", "reduction": "cell", "generated_reduction": "min"},
    "sentence, max e - max c, mean": {"grounding_granularity": "sentence", "reduction": "package"},
    "sentence, max e, mean": {"grounding_granularity": "sentence", "score_type": "e"},
    "window12, max(e-c), mean": {"grounding_granularity": "window12", "reduction": "cell"},
    "window12, max(e-c), min": {"grounding_granularity": "window12", "reduction": "cell", "generated_reduction": "min"},
}
# every reading keeps every sentence (the splitter of tfc's reading, not summac 0.0.4's short-sentence filter)
AGGREGATIONS = {k: {**v, "sentence_splitter": "auto"} for k, v in AGGREGATIONS.items()}
PRESET = "sentence, max(e-c), mean"
DEV_SETS = ("begin_test", "loo_anli")
DEV_ROWS = 1500          # per dev set, stratified by label
DEV_SEED = 0


def _stratified(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    from tfc.data import stratified_sample

    return stratified_sample(df.reset_index(drop=True), n, seed=seed) if len(df) > n else df.reset_index(drop=True)


def begin_dev(n: int = DEV_ROWS, seed: int = DEV_SEED) -> pd.DataFrame:
    """BEGIN v1 test rows through the leakage filter, ``n`` stratified (``grounding, generated, label``)."""
    from tfc.data import training_mix

    kept, _ = training_mix(["begin_test"])
    return _stratified(kept[["grounding", "generated", "label"]], n, seed)


def dialfact_dev(n: int = DEV_ROWS, seed: int = DEV_SEED) -> pd.DataFrame:
    """DialFact's test-split sample (``dialfact_test``: factual responses, TRUE's DialFact rule) through the
    leakage filter, ``n`` stratified: a dev frame with TRUE's dialogue label semantics, where a personal statement
    is no row at all (in BEGIN it is a negative)."""
    from tfc.data import training_mix

    kept, _ = training_mix(["dialfact_test"])
    return _stratified(kept[["grounding", "generated", "label"]], n, seed)


@lru_cache(maxsize=4)
def _loo_pairs(seed: int) -> pd.DataFrame:
    """Every leave-one-sentence-out pair of ANLI dev + test premises (filtered) for ``seed`` (parsed once per
    process: the spaCy pass over the premises is the slow part)."""
    from tfc.data import training_mix
    from tfc.train.contrast import loo_pairs
    from tfc.train.mix import filter_generated

    kept, _ = training_mix(["anli_dev", "anli_test"])
    passages = sorted(pd.unique(kept["grounding"]))
    pairs, _ = filter_generated(loo_pairs(passages, seed=seed))
    return pd.DataFrame({"grounding": pairs["text_a"].values, "generated": pairs["text_b"].values,
                         "label": (pairs["rule"] == "loo_support").astype(int).values})


def loo_dev(n: int = DEV_ROWS, seed: int = DEV_SEED) -> pd.DataFrame:
    """Leave-one-sentence-out pairs from ANLI dev + test premises (filtered), binary labels, ``n`` stratified."""
    return _stratified(_loo_pairs(seed).copy(), n, seed)


def dev_frames(n: int = DEV_ROWS, seed: int = DEV_SEED) -> dict[str, pd.DataFrame]:
    return {"begin_test": begin_dev(n, seed), "loo_anli": loo_dev(n, seed)}


def frame_digest(df: pd.DataFrame) -> str:
    h = hashlib.sha256()
    for g, t, y in zip(df["grounding"], df["generated"], df["label"]):
        h.update(f"{g}\x1f{t}\x1f{int(y)}\x1e".encode())
    return h.hexdigest()[:16]


def sweep(checkpoint: str, frames: dict[str, pd.DataFrame], dtype: str = "float32", batch_size: int = 32,
          progress: bool = False) -> pd.DataFrame:
    """ROC AUC of every reading in :data:`AGGREGATIONS` on every dev frame: one model pass per granularity."""
    import tfc.scorers as S
    from tfc.meta import roc_auc
    from tfc.scorers.summac import reduce_zs

    cfgs = {name: _config(name) for name in AGGREGATIONS}

    rows = []
    for gran in dict.fromkeys(o["grounding_granularity"] for o in AGGREGATIONS.values()):
        # one matrix per granularity serves every reduction (each reading keeps every sentence)
        z = S.get("summac-zs", preset="as-published", checkpoint=checkpoint, dtype=dtype, grounding_granularity=gran,
                  sentence_splitter="auto").load()
        for dev, df in frames.items():
            if df["label"].nunique() != 2:
                raise ValueError(f"dev set {dev} needs both labels")
            mats = z.matrices(df["grounding"].tolist(), df["generated"].tolist(), batch_size, progress)
            for name, o in AGGREGATIONS.items():
                if o["grounding_granularity"] != gran:
                    continue
                c = cfgs[name]
                i_con = None if c.score_type == "e" else z.engine.i_con
                s = np.array([reduce_zs(m, z.engine.i_ent, i_con, c.reduction, c.generated_reduction) for m in mats])
                rows.append({"reading": name, "dev set": dev, "rows": len(df), "positives": int(df["label"].sum()),
                             "auc": 100 * roc_auc(df["label"].to_numpy(), s)})
    return pd.DataFrame(rows)


MARGIN = 0.5   # AUC points: a setting leaves the preset only for a dev gain larger than this
CHOICE_RULE = (f"among readings within {MARGIN} AUC points of the best mean dev AUC, the fewest settings changed "
               "against the preset, then the higher mean")


SETTINGS = ("grounding_granularity", "reduction", "score_type", "generated_reduction")


def _config(name: str):
    """A reading's full summac-zs configuration (the scorer's own defaults fill what the reading leaves out)."""
    from tfc.scorers.summac import SummaCZSConfig

    return SummaCZSConfig(**AGGREGATIONS[name])


def _changes(name: str) -> int:
    """How many settings a reading changes against the preset."""
    a, b = _config(name), _config(PRESET)
    return sum(getattr(a, k) != getattr(b, k) for k in SETTINGS)


def choose(table: pd.DataFrame, margin: float = MARGIN) -> str:
    """The reading to use: among the readings whose mean dev AUC (over the dev sets) is within ``margin`` of the
    best, the one that changes the fewest settings of the preset (then the higher mean, then the name). So the
    preset stays unless a change gains more than ``margin``, and a second change must earn its own place: on dev
    sets of mostly one-sentence responses and claims, "min" and "mean" over generated sentences hardly differ,
    and a hair's difference is not a reason to change."""
    mean = table.groupby("reading")["auc"].mean()
    near = mean[mean >= mean.max() - margin]
    return str(min(near.index, key=lambda r: (_changes(r), -near[r], r)))


def run(checkpoint: str, n: int = DEV_ROWS, seed: int = DEV_SEED, dtype: str = "float32", progress: bool = True,
        frames: dict[str, pd.DataFrame] | None = None) -> dict:
    """Sweep ``checkpoint``'s readings on the dev frames, choose one, and return the record (written to the
    model's training summary under ``eval_results["aggregation_dev"]`` by :func:`record`). ``frames``: the
    frames :func:`dev_frames` ``(n, seed)`` made earlier (a GPU bundle carries them; the data mirror stays here)."""
    frames = dev_frames(n, seed) if frames is None else frames
    table = sweep(checkpoint, frames, dtype=dtype, progress=progress)
    chosen = choose(table)
    return {"checkpoint": checkpoint, "dtype": dtype, "rows_per_set": n, "seed": seed, "chosen": chosen,
            "chosen_overrides": AGGREGATIONS[chosen], "preset": PRESET, "choice_rule": CHOICE_RULE,
            "dev_sets": {k: {"rows": len(v), "positives": int(v["label"].sum()), "digest": frame_digest(v)}
                         for k, v in frames.items()},
            "table": table.to_dict("records")}


def rechoose(checkpoint: str) -> dict:
    """Apply the current :func:`choose` to a recorded sweep's table (no model run) and record it again."""
    res = recorded(checkpoint)
    if not res:
        raise FileNotFoundError(f"no recorded aggregation sweep for {checkpoint}")
    chosen = choose(pd.DataFrame(res["table"]))
    res = {**res, "chosen": chosen, "chosen_overrides": AGGREGATIONS[chosen], "choice_rule": CHOICE_RULE}
    record(checkpoint, res)
    return res


def record(checkpoint: str, result: dict) -> None:
    """Put the sweep on the model's card (artifacts) and refresh its committed record."""
    from tfc.runs.inhouse_models import record_on_card

    record_on_card(checkpoint, {"aggregation_dev": result})


def wide(table) -> pd.DataFrame:
    """A sweep's records (or frame) as ``reading x dev set`` AUCs, rows in :data:`AGGREGATIONS` order."""
    t = pd.DataFrame(table).pivot(index="reading", columns="dev set", values="auc")
    t.columns.name = None
    return t.reindex([r for r in AGGREGATIONS if r in t.index])


def recorded(checkpoint: str) -> dict | None:
    """The recorded sweep of an in-house checkpoint (from its committed record), or None."""
    from tfc.runs.inhouse_models import recorded_sweep

    return recorded_sweep(checkpoint)
