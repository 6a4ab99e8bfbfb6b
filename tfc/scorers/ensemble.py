"""Ensemble scorer: a (weighted) mean of normalised member scores.

Members are registry names (with their default config) or signatures of cached scores.

* ``score_dataset`` (the usual path) reads each member's scores for the dataset from the score cache
  (computing what is missing, through :func:`tfc.results.dataset.score_dataset`, which combines the
  members with :meth:`Ensemble.combine`), normalises them over the
  dataset and averages. ``normalisation``:
  ``"range"`` -- min-max over the member's *declared* output range (fixed, batch-independent);
  ``"minmax"`` -- min-max over the dataset; ``"zscore"`` -- standardised over the dataset;
  ``"rank"`` -- rank / n over the dataset (TRUE's ensemble averages the members' scores; ranks make
  members on different scales comparable without assuming a range).
* ``score(groundings, generations)`` on arbitrary text runs the members live and supports only
  ``"range"`` (any data-dependent normalisation would make one example's score depend on the others).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tfc.scorers.base import Scorer, ScorerConfig

NORMS = ("range", "minmax", "zscore", "rank")


@dataclass(frozen=True)
class EnsembleConfig(ScorerConfig):
    members: tuple[str, ...] = ("f1", "rougeL")
    weights: tuple[float, ...] | None = None
    normalisation: str = "rank"

    def __post_init__(self):
        if self.normalisation not in NORMS:
            raise ValueError(f"normalisation must be one of {NORMS}")
        if len(self.members) < 1:
            raise ValueError("an ensemble needs at least one member")
        if self.weights is not None and len(self.weights) != len(self.members):
            raise ValueError("weights and members differ in length")


def normalise(x: np.ndarray, how: str, output_range=(0.0, 1.0)) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if how == "range":
        lo, hi = output_range
        return (x - lo) / (hi - lo)
    if how == "minmax":
        span = np.nanmax(x) - np.nanmin(x)
        return np.zeros_like(x) if span == 0 else (x - np.nanmin(x)) / span
    if how == "zscore":
        sd = np.nanstd(x)
        return np.zeros_like(x) if sd == 0 else (x - np.nanmean(x)) / sd
    if how == "rank":
        return pd.Series(x).rank(method="average").to_numpy() / len(x)
    raise ValueError(f"normalisation must be one of {NORMS}")


class Ensemble(Scorer):
    name = "ensemble"
    config_cls = EnsembleConfig
    from_cache = True

    def __init__(self, config=None, **overrides):
        if "members" in overrides:
            overrides["members"] = tuple(overrides["members"])
        if overrides.get("weights") is not None:
            overrides["weights"] = tuple(float(w) for w in overrides["weights"])
        super().__init__(config, **overrides)
        c = self.config
        self.output_range = (0.0, 1.0) if c.normalisation in ("range", "minmax", "rank") else (-np.inf, np.inf)

    def _members(self):
        from tfc import scorers

        return [scorers.get(m) for m in self.config.members]

    def signature_fields(self):
        d = super().signature_fields()
        d["members"] = [m.signature for m in self._members()]
        return d

    def tag(self):
        return "+".join(m.replace(":", "-").replace("/", "-") for m in self.config.members)

    def _weights(self):
        w = np.asarray(self.config.weights or [1.0] * len(self.config.members), dtype=float)
        return w / w.sum()

    def combine(self, member_scores) -> np.ndarray:
        """The ensemble score of one dataset from its members' scores (one array per member, same rows)."""
        cols = [normalise(np.asarray(sc), self.config.normalisation, m.output_range)
                for m, sc in zip(self._members(), member_scores)]
        return np.average(np.vstack(cols), axis=0, weights=self._weights())

    def _score(self, groundings, generations, batch_size, progress):
        if self.config.normalisation != "range":
            raise ValueError("Ensemble.score() on arbitrary text supports only normalisation='range'; "
                             "use tfc.results.dataset.score_dataset for data-dependent normalisations")
        cols = [normalise(m.score(groundings, generations, batch_size=batch_size, progress=progress),
                          "range", m.output_range) for m in self._members()]
        return np.average(np.vstack(cols), axis=0, weights=self._weights())
