"""Ensemble scorer: a (weighted) mean of normalised member scores.

Members are registry names, each in its default configuration (``tfc.scorers.get(name)``).

* ``score_dataset`` (the usual path) reads each member's scores for the dataset from the score cache
  (computing what is missing, through :func:`tfc.results.dataset.score_dataset`, which combines the
  members with :meth:`Ensemble.combine`), normalises them over the
  dataset and averages. ``normalisation``:
  ``"range"`` -- min-max over the member's *declared* output range (fixed, batch-independent);
  ``"minmax"`` -- min-max over the dataset; ``"zscore"`` -- standardised over the dataset;
  ``"rank"`` -- rank / n over the dataset (TRUE's ensemble averages the members' scores; ranks make
  members on different scales comparable without assuming a range).
  ``"ecdf"`` -- each member's score through a fixed empirical CDF of that member on a reference sample of
  training-side dev pairs, shipped with the release (``reference``, a folder under ``results/release`` with a
  sha256 manifest; :func:`fit_reference` writes it): a monotone map fitted once, so a row's score never
  depends on the other rows, and members on different scales (Q² in [0, 1] with many exact zeros, SummaC-ZS's
  P(e) - P(c) in [-1, 1]) are put on one footing, the share of reference pairs they score at or below.
* ``score(groundings, generations)`` on arbitrary text runs the members live and supports the fixed
  normalisations ``"range"`` and ``"ecdf"`` (a data-dependent one would make one example's score depend on the
  others). The default is TRUE's ensemble, Q², NLI and SummaC-ZS, under ``"ecdf"``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tfc.scorers.base import Scorer, ScorerConfig

NORMS = ("range", "minmax", "zscore", "rank", "ecdf")
FIXED = ("range", "ecdf")          # the normalisations that do not depend on the other rows
REFERENCE_FILE = "reference.json"


@dataclass(frozen=True)
class EnsembleConfig(ScorerConfig):
    members: tuple[str, ...] = ("f1", "rougeL")
    weights: tuple[float, ...] | None = None
    normalisation: str = "rank"
    reference: str | None = None       # the shipped reference distributions ("ecdf"): tfc/<release name>

    def __post_init__(self):
        if self.normalisation not in NORMS:
            raise ValueError(f"normalisation must be one of {NORMS}")
        if len(self.members) < 1:
            raise ValueError("an ensemble needs at least one member")
        if self.weights is not None and len(self.weights) != len(self.members):
            raise ValueError("weights and members differ in length")
        if self.normalisation == "ecdf" and not self.reference:
            raise ValueError("normalisation 'ecdf' needs a reference (the shipped member distributions)")


def ecdf(x, reference) -> np.ndarray:
    """The mid-rank empirical CDF of ``reference`` at ``x``: (#{r < x} + #{r <= x}) / 2n, in [0, 1]; monotone in
    ``x`` and the same for a value wherever it stands in a batch."""
    ref = np.sort(np.asarray(reference, dtype=float))
    if not len(ref) or np.isnan(ref).any():
        raise ValueError("a reference distribution needs at least one value and no NaN")
    x = np.asarray(x, dtype=float)
    lo, hi = np.searchsorted(ref, x, side="left"), np.searchsorted(ref, x, side="right")
    return (lo + hi) / (2.0 * len(ref))


REFERENCE_NOTE = "the ensemble's fixed normalisation: each member's scores on training-side dev pairs"


def load_reference(name: str) -> dict:
    """The shipped reference ``tfc/<name>`` (manifest checked): member signature -> sorted scores."""
    from tfc.models import release

    folder = release.release_dir(name.removeprefix("tfc/"))
    release.verify(folder)
    return json.loads((folder / REFERENCE_FILE).read_text())


def fit_reference(members, frames: dict, name: str, out_root=None, batch_size: int | None = None,
                  reuse: dict | None = None) -> dict:
    """Score ``frames`` (dev set -> frame of grounding, generated, label) with each member (default config) and
    ship the sorted scores, with each member's configuration (:func:`tfc.cache.migrate.migrate_references` reads it),
    as release ``name`` (``reference.json`` and a sha256 manifest). A member whose
    signature ``reuse`` (an earlier reference) holds, fitted on the same rows, keeps those scores unscored."""
    from tfc import scorers
    from tfc.models import release

    rows = pd.concat([f.assign(dev_set=k) for k, f in frames.items()], ignore_index=True)
    out = {"members": {}, "rows": int(len(rows)), "rows_sha256": _rows_digest(rows),
           "dev_sets": {k: int(len(f)) for k, f in frames.items()}}
    for m in members:
        sc = scorers.get(m)
        old = (reuse or {}).get("members", {}).get(sc.signature)
        if old is not None and (reuse or {}).get("rows_sha256") == out["rows_sha256"]:
            out["members"][sc.signature] = old
            continue
        s = sc.score(rows["grounding"].tolist(), rows["generated"].tolist(), batch_size=batch_size, progress=False)
        out["members"][sc.signature] = {"name": m, "config": sc.config.to_json(),
                                        "scores": sorted(round(float(v), 6) for v in s)}
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / REFERENCE_FILE).write_text(json.dumps(out, indent=0) + "\n")
        release.pack_files(tmp, name.removeprefix("tfc/"), out_root=out_root, note=REFERENCE_NOTE)
    return out


def _rows_digest(rows: pd.DataFrame) -> str:
    import hashlib

    h = hashlib.sha256()
    for g, t in zip(rows["grounding"], rows["generated"]):
        h.update(f"{g}\x00{t}\x01".encode())
    return h.hexdigest()


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
        self.output_range = (0.0, 1.0) if c.normalisation in ("range", "minmax", "rank", "ecdf") else (-np.inf, np.inf)

    def _members(self):
        from tfc import scorers

        return [scorers.get(m) for m in self.config.members]

    def signature_fields(self):
        d = super().signature_fields()
        d["members"] = [m.signature for m in self._members()]
        if self.config.normalisation == "ecdf":
            from tfc.models import release

            d["reference"] = release.sha256_file(release.release_dir(self.config.reference.removeprefix("tfc/"))
                                                 / REFERENCE_FILE)
        return d

    def _normalise(self, member, scores) -> np.ndarray:
        if self.config.normalisation != "ecdf":
            return normalise(np.asarray(scores), self.config.normalisation, member.output_range)
        ref = getattr(self, "_reference", None)
        if ref is None:
            ref = self._reference = load_reference(self.config.reference)["members"]
        if member.signature not in ref:
            raise ValueError(f"the reference {self.config.reference} has no distribution for {member.signature} "
                             f"(fitted for {sorted(ref)}); fit one with `tfc train ensemble-reference`")
        return ecdf(scores, ref[member.signature]["scores"])

    def tag(self):
        return "+".join(m.replace(":", "-").replace("/", "-") for m in self.config.members)

    def _weights(self):
        w = np.asarray(self.config.weights or [1.0] * len(self.config.members), dtype=float)
        return w / w.sum()

    def combine(self, member_scores) -> np.ndarray:
        """The ensemble score of one dataset from its members' scores (one array per member, same rows)."""
        cols = [self._normalise(m, sc) for m, sc in zip(self._members(), member_scores)]
        return np.average(np.vstack(cols), axis=0, weights=self._weights())

    def _score(self, groundings, generations, batch_size, progress):
        if self.config.normalisation not in FIXED:
            raise ValueError(f"Ensemble.score() on arbitrary text supports only the fixed normalisations {FIXED}; "
                             "use tfc.results.dataset.score_dataset for data-dependent normalisations")
        cols = [self._normalise(m, m.score(groundings, generations, batch_size=batch_size, progress=progress))
                for m in self._members()]
        return np.average(np.vstack(cols), axis=0, weights=self._weights())
