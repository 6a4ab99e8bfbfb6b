"""Calibration maps: a scorer's raw score -> a probability that the text is consistent.

A checker's ranking can be good while its 0.5 cut means little (SummaC-ZS's P(e) - P(c) lives in [-1, 1]; a
sentence model's P(entailment) on long evidence is rarely near 1). A calibration map is a fixed monotone function
fitted once on training-side dev data and shipped with the release (``results/release/<name>/calibration.json``,
covered by its manifest); the scorer's ``calibration`` field names it, so it is part of the signature.

The map is Platt scaling: ``p = sigmoid(a * f(s) + b)`` with ``f`` the logit of the score for scores in [0, 1]
(which makes it temperature scaling of the underlying log-odds, with a bias) and the score itself otherwise.
With ``a > 0`` it is strictly increasing, so it never changes a ROC AUC (ties stay ties, order stays order); a
fit that gives ``a <= 0`` is refused. Isotonic regression is fitted beside it for comparison only: its steps tie
scores that were distinct, which can move an AUC.

A map records the signature of the raw configuration it was fitted for; a scorer whose raw configuration
differs refuses it.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

FILE = "calibration.json"
EPS = 1e-6


def feature(scores, kind: str) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    if kind == "logit":
        p = np.clip(s, EPS, 1 - EPS)
        return np.log(p) - np.log1p(-p)
    if kind == "identity":
        return s
    raise ValueError(f"feature must be 'logit' or 'identity'; got {kind!r}")


def apply(m: dict, scores) -> np.ndarray:
    """The calibrated probabilities of ``scores`` under map ``m``."""
    z = m["a"] * feature(scores, m["feature"]) + m["b"]
    return 1.0 / (1.0 + np.exp(-z))


def fit(scores, labels, output_range) -> dict:
    """Platt scaling of ``scores`` against ``labels`` (1 = consistent); the feature follows the output range."""
    from sklearn.linear_model import LogisticRegression

    y = np.asarray(labels, dtype=int)
    if set(np.unique(y)) != {0, 1}:
        raise ValueError("a calibration map needs both labels in its fitting data")
    kind = "logit" if tuple(output_range) == (0.0, 1.0) else "identity"
    x = feature(scores, kind)[:, None]
    lr = LogisticRegression(C=1e6, max_iter=1000).fit(x, y)     # (nearly) unregularised: a two-parameter map
    a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
    if a <= 0:
        raise ValueError(f"the fitted slope is {a:.4g} <= 0: the scores do not rank consistency on these data")
    return {"method": "platt", "feature": kind, "a": a, "b": b}


def isotonic_ece(scores, labels, fit_rows, eval_rows, bins: int = 10) -> float:
    """The ECE isotonic regression reaches on ``eval_rows`` when fitted on ``fit_rows`` (a comparison only)."""
    from sklearn.isotonic import IsotonicRegression

    from tfc.meta import expected_calibration_error

    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=int)
    iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(s[fit_rows], y[fit_rows])
    return float(expected_calibration_error(y[eval_rows], iso.predict(s[eval_rows]), bins=bins))


def raw_identity(raw) -> dict:
    """What a map records of the raw scorer it was fitted for: its signature, and its registry name and configuration,
    from which :func:`tfc.cache.migrate.migrate_calibrations` recomputes the signature when a field is added."""
    return {"raw_signature": raw.signature, "raw_scorer": raw.name,
            "raw_config": raw.config.to_json()}


def load(name: str) -> dict:
    """The shipped map ``tfc/<name>`` (its manifest checked)."""
    from tfc.models import release

    folder = release.release_dir(name.removeprefix("tfc/"))
    if not (folder / FILE).is_file():
        raise FileNotFoundError(f"no calibration map {name!r} under {release.release_root()}")
    release.verify(folder)
    return json.loads((folder / FILE).read_text())


def write(m: dict, name: str, out_root=None) -> Path:
    import tempfile

    from tfc.models import release

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / FILE).write_text(json.dumps(m, indent=1) + "\n")
        return release.pack_files(tmp, name.removeprefix("tfc/"), out_root=out_root,
                                  note=f"calibration map of {m.get('raw_signature', 'a scorer')}")
