"""``imported:<source>/<metric>``: per-example scores of the original implementations, by id.

Wraps :func:`tfc.data.imported.load` (the meta layer's loader of ``peer_scores``/``aggrefact``), which
returns a frame with at least ``id`` and ``score`` (and optionally ``label``) for one dataset.
Imported scores exist only for the benchmark examples they were computed on, so ``score()`` on
arbitrary text raises; :func:`tfc.results.dataset.score_dataset` works, also for the label-only sets
(fever, vitaminc), taking labels from the imported frame when the dataset has no text here.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from tfc.scorers.base import Scorer, ScorerConfig


@dataclass(frozen=True)
class ImportedConfig(ScorerConfig):
    source_metric: str = ""

    def __post_init__(self):
        sm = self.source_metric
        if sm.count("/") != 1 or not all(sm.split("/")):
            raise ValueError(f"imported scorer name must be 'imported:<source>/<metric>', got {sm!r}")


class ImportedScorer(Scorer):
    name = "imported"
    config_cls = ImportedConfig
    needs_text = False
    output_range = (float("-inf"), float("inf"))

    def __init__(self, config=None, **overrides):
        if config is None and "source_metric" in overrides:   # the default (empty) name is not a valid config
            config = ImportedConfig(source_metric=overrides.pop("source_metric"))
        super().__init__(config, **overrides)
        self.source, self.metric = self.config.source_metric.split("/")

    @property
    def signature(self) -> str:
        return f"imported-{self.source}-{self.metric}"

    def score(self, groundings, generations, batch_size=None, progress=True):
        raise TypeError(f"imported:{self.config.source_metric} holds precomputed scores for known dataset "
                        "examples only; it cannot score arbitrary text. Use tfc.results.dataset.score_dataset(...)")

    def score_dataset(self, dataset, split=None, sample=None, seed=0):
        from tfc.data import imported

        got = imported.load(self.source, self.metric, dataset)
        if "id" not in got or "score" not in got:
            raise ValueError(f"tfc.data.imported.load({self.source!r}, {self.metric!r}, {dataset!r}) lacks id/score")
        try:
            from tfc import data

            ex = data.load(dataset, split=split, sample=sample, seed=seed)[["id", "label"]]
        except Exception:   # label-only sets (fever, vitaminc: LabelOnlyError), unknown to tfc.data
            if "label" not in got:
                raise
            ex = got[["id", "label"]]
            if split is not None and "split" in got:
                ex = ex[got["split"] == split]
            if sample is not None and sample < len(ex):
                ex = ex.sample(n=sample, random_state=seed).sort_index()
        sc = got.drop_duplicates("id").set_index("id")["score"]
        missing = set(ex["id"]) - set(sc.index)
        if missing:
            raise KeyError(f"imported {self.source}/{self.metric} has no score for {len(missing)} "
                           f"{dataset} example(s), e.g. {sorted(missing)[0]}")
        return pd.DataFrame({"id": ex["id"].to_numpy(), "label": ex["label"].to_numpy(),
                             "score": sc.loc[ex["id"]].to_numpy()})
