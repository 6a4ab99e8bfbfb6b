"""The drift rule of the shipped models (tfc.runs.release_drift): the arithmetic of a record, the measurement on
tiny models, and every shipped model's committed record."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tfc import config
from tfc.runs import release_drift as R

RELEASES = config.REPO_ROOT / "results" / "release"
# the releases that hold a model's weights (the others ship a calibration map, a reference sample or a convolution)
SHIPPED_MODELS = sorted(p.name for p in RELEASES.iterdir() if any(p.glob("weights*.safetensors")))


def _set(ds, diff, auc_diff):
    return {"dataset": ds, "rows": 60, "max_abs_diff": diff, "auc_source": 70.0, "auc_release": 70.0 + auc_diff,
            "auc_diff": auc_diff}


def test_verdict_takes_the_worst_set_on_each_figure():
    rec = R.verdict({"per_set": [_set("a", 0.01, -0.15), _set("b", 0.019, 0.05)]})
    assert rec["max_abs_diff"] == 0.019 and rec["max_abs_auc_diff"] == 0.15 and rec["meets_rule"]
    assert not R.verdict({"per_set": [_set("a", 0.021, 0.0)]})["meets_rule"]
    assert not R.verdict({"per_set": [_set("a", 0.0, -0.21)]})["meets_rule"]
    assert rec["rule"] == {"max_abs_diff": 0.02, "max_auc_diff": 0.2}


def test_verdict_refuses_an_empty_record():
    with pytest.raises(ValueError):
        R.verdict({"per_set": []})


def test_set_figures_by_hand():
    y = np.array([0, 0, 1, 1])
    got = R._set_figures("x", y, [0.1, 0.4, 0.35, 0.8], [0.1, 0.3, 0.35, 0.8])
    # source: 3 of the 4 (pos, neg) pairs ordered -> 75; release: all 4 -> 100
    assert got["auc_source"] == pytest.approx(75.0) and got["auc_release"] == pytest.approx(100.0)
    assert got["auc_diff"] == pytest.approx(25.0) and got["max_abs_diff"] == pytest.approx(0.1)
    assert got["rows"] == 4


@pytest.mark.parametrize("release", [[0.1, 0.2, 0.3], [0.1, np.nan, 0.3, 0.4]])
def test_set_figures_refuse_mismatched_or_nan_scores(release):
    with pytest.raises(ValueError):
        R._set_figures("x", np.array([0, 1, 1, 0]), [0.1, 0.2, 0.3, 0.4], release)


def test_measure_on_tiny_models(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from tfc import data
    from tfc.models.tiny import make_tiny_classifier

    a = make_tiny_classifier(tmp_path / "a", seed=0)
    same = make_tiny_classifier(tmp_path / "same", seed=0)
    other = make_tiny_classifier(tmp_path / "other", seed=1)
    frame = pd.DataFrame({"grounding": ["the cat sat on the mat .", "the man walked to the city ."] * 3,
                          "generated": ["the cat sat .", "the dog ran to the house ."] * 3,
                          "label": [1, 0] * 3})
    monkeypatch.setattr(data, "load", lambda name, sample=None, seed=0: frame)
    twin = R.measure(str(a), str(same), "nli", datasets=("s1", "s2"), rows=6)
    assert twin["max_abs_diff"] == 0.0 and twin["max_abs_auc_diff"] == 0.0 and twin["meets_rule"]
    assert [p["dataset"] for p in twin["per_set"]] == ["s1", "s2"] and twin["per_set"][0]["rows"] == 6
    apart = R.measure(str(a), str(other), "nli", datasets=("s1",), rows=6)
    assert apart["max_abs_diff"] > 0 and apart["source_identity"] == twin["source_identity"]


@pytest.mark.parametrize("name", SHIPPED_MODELS)
def test_every_shipped_model_has_a_drift_record_that_follows_from_its_figures(name):
    rec = R.recorded(f"tfc/{name}")
    assert rec is not None, f"no results/models/{name}/{R.RECORD}"
    assert {p["dataset"] for p in rec["per_set"]} == set(R.TRUE9)
    assert rec["rows_per_set"] == "all" or rec["rows_per_set"] >= R.ROWS
    again = R.verdict({k: v for k, v in rec.items() if k not in ("max_abs_diff", "max_abs_auc_diff", "meets_rule")})
    assert (again["max_abs_diff"], again["max_abs_auc_diff"], again["meets_rule"]) == \
        (rec["max_abs_diff"], rec["max_abs_auc_diff"], rec["meets_rule"])
    shipped = json.loads((RELEASES / name / "release.json").read_text())
    assert rec["packed_from"] == shipped["source_identity"]
    # measured against another output than the one packed (a rerun of its recipe) only when the record says so
    assert rec["source_identity"] == rec["packed_from"] or rec["source_note"]


# the known miss, kept visible (its record holds the figures): the sentence model's int8 release (trained on a GPU,
# its weights quantised with the word embeddings) moves scores by up to 0.154 against its training output, though no
# set's AUC by more than 0.11 points; its training output is no longer at hand to pack another way
MISSES = {"sent-minilm-v8-int8"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="recorded miss"))
                                  if n in MISSES else n for n in SHIPPED_MODELS])
def test_every_shipped_model_meets_the_drift_rule(name):
    rec = R.recorded(f"tfc/{name}")
    assert rec["max_abs_diff"] <= R.MAX_ABS_DIFF and rec["max_abs_auc_diff"] <= R.MAX_AUC_DIFF


def test_the_cli_reads_a_training_records_drift_without_writing(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from tfc.cli import main

    monkeypatch.setattr(R, "record", lambda res: (_ for _ in ()).throw(AssertionError("wrote a record")))
    out = CliRunner().invoke(main, ["models", "release", "drift", "sent-minilm-v8-int8", "--from-training-record",
                                    "--no-record"])
    assert out.exit_code == 0, out.output
    rec = R.from_training_record("tfc/sent-minilm-v8-int8")
    assert f"{rec['max_abs_diff']:.4f}" in out.output and f"{rec['max_abs_auc_diff']:.3f}" in out.output
    bad = CliRunner().invoke(main, ["models", "release", "drift", "sent-minilm-v8-int8", "--no-record"])
    assert bad.exit_code == 2
