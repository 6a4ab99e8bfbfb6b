"""Calibration maps (tfc.scorers.calibration): monotone, AUC-preserving, ECE-lowering, tied to their raw scorer."""
import numpy as np
import pytest

from tfc import scorers as S
from tfc.meta import expected_calibration_error, roc_auc
from tfc.scorers import calibration as C


def _overconfident(n, seed):
    """Scores whose truth is P(consistent) = s**3: an over-confident checker."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.01, 0.99, n)
    return s, (rng.uniform(size=n) < s ** 3).astype(int)


def test_a_platt_map_keeps_the_auc_and_lowers_the_ece_on_held_out_rows():
    s_fit, y_fit = _overconfident(2000, 0)
    s_new, y_new = _overconfident(2000, 1)
    m = C.fit(s_fit, y_fit, (0.0, 1.0))
    assert m["method"] == "platt" and m["feature"] == "logit" and m["a"] > 0
    p = C.apply(m, s_new)
    assert abs(roc_auc(y_new, p) - roc_auc(y_new, s_new)) < 1e-12
    assert np.all(np.diff(C.apply(m, np.linspace(0, 1, 101))) > 0)               # strictly increasing
    before, after = expected_calibration_error(y_new, s_new), expected_calibration_error(y_new, p)
    assert after < before / 2, (before, after)


def test_the_map_by_hand_and_a_score_outside_zero_one():
    m = {"method": "platt", "feature": "identity", "a": 2.0, "b": -1.0}
    assert C.apply(m, [0.5, -1.0]) == pytest.approx([0.5, 1 / (1 + np.exp(3.0))])
    assert C.fit(np.r_[np.linspace(-1, 0, 50), np.linspace(0, 1, 50)], [0] * 50 + [1] * 50, (-1.0, 1.0))["feature"] \
        == "identity"


def test_bad_fits_are_refused():
    with pytest.raises(ValueError, match="both labels"):
        C.fit([0.2, 0.4], [1, 1], (0.0, 1.0))
    with pytest.raises(ValueError, match="slope"):
        C.fit(np.linspace(0.05, 0.95, 40), [1] * 20 + [0] * 20, (0.0, 1.0))      # scores rank the wrong way


def test_a_calibrated_scorer_applies_its_map_and_keeps_the_raw_score(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from tfc.models import release
    from tfc.models.tiny import make_tiny_classifier

    tiny = str(make_tiny_classifier(tmp_path / "tiny", seed=3))
    monkeypatch.setattr(release, "release_root", lambda: tmp_path / "rel")
    raw = S.get("nli", preset="as-published", checkpoint=tiny)
    g, h = ["The cat sat on the mat.", "A dog ran in the park."] * 2, ["The cat sat.", "A cat ran.", "x y", "dog"]
    r = raw.score(g, h, progress=False)
    m = {"method": "platt", "feature": "logit", "a": 1.5, "b": 0.25, "raw_signature": raw.signature}
    C.write(m, "cal-tiny")
    cal = S.get("nli", preset="as-published", checkpoint=tiny, calibration="tfc/cal-tiny")
    assert cal.signature != raw.signature and cal.calibrated and not raw.calibrated
    got = cal.score(g, h, progress=False)
    np.testing.assert_allclose(got, C.apply(m, r), atol=1e-12)
    np.testing.assert_allclose(cal.last_aux()["aux_raw_score"], r, atol=1e-12)
    C.write({**m, "raw_signature": "nli.other.0000000000"}, "cal-other")
    with pytest.raises(ValueError, match="fitted for"):
        S.get("nli", preset="as-published", checkpoint=tiny, calibration="tfc/cal-other").score(g, h, progress=False)


def test_overriding_a_scoring_field_drops_the_presets_calibration():
    """The default's map belongs to the raw configuration it was fitted for: a runtime field or a repeated
    default keeps it, another checkpoint or reading gives raw scores unless a map is named."""
    d = S.get("nli")
    assert d.config.calibration == "tfc/calibration-nli"
    assert S.get("nli", batch_size=4, device="cpu").config.calibration == d.config.calibration
    assert S.get("nli", mode=d.config.mode).config.calibration == d.config.calibration
    assert S.get("nli", checkpoint="someone/nli-model").config.calibration is None
    assert S.get("nli", mode="document").config.calibration is None
    named = S.get("nli", mode="document", calibration="tfc/calibration-nli")
    assert named.config.calibration == "tfc/calibration-nli"
    assert S.get("nli", preset="as-published").config.calibration is None
