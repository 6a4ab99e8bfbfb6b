"""Choosing a sentence model's reading on training-side dev data (tfc.runs.aggregation), on a tiny model."""
import numpy as np
import pandas as pd
import pytest

import tfc.scorers as S
from tfc.meta import roc_auc
from tfc.models.tiny import make_tiny_classifier
from tfc.runs import aggregation as A

FRAME = pd.DataFrame({
    "grounding": ["the cat sat on the mat. the dog ran to the house. it rained.",
                  "paris is in france. the river is long.",
                  "the team won the game. fans cheered loudly. the coach smiled.",
                  "a man plays a guitar. a woman sings."],
    "generated": ["the cat sat. the dog ran.", "paris is in spain.", "the team lost. the coach smiled.",
                  "a woman sings."],
    "label": [1, 0, 0, 1],
})


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(make_tiny_classifier(tmp_path_factory.mktemp("agg_nli"), seed=4))


def test_sweep_equals_each_reading_scored_by_the_scorer(tiny):
    table = A.sweep(tiny, {"d": FRAME})
    assert sorted(table["reading"]) == sorted(A.AGGREGATIONS)
    assert (table["rows"] == 4).all() and (table["positives"] == 2).all()
    y = FRAME["label"].to_numpy()
    for name, overrides in A.AGGREGATIONS.items():
        s = S.get("summac-zs", checkpoint=tiny, **overrides).score(FRAME["grounding"].tolist(),
                                                                   FRAME["generated"].tolist(), progress=False)
        want = 100 * roc_auc(y, s)
        got = float(table.loc[table["reading"] == name, "auc"].iloc[0])
        assert got == pytest.approx(want, abs=1e-9), name


def test_sweep_refuses_a_one_label_dev_set(tiny):
    with pytest.raises(ValueError, match="both labels"):
        A.sweep(tiny, {"d": FRAME.assign(label=1)})


def test_choose_by_hand():
    rows = [("a", "x", 70.0), ("a", "y", 60.0), (A.PRESET, "x", 66.0), (A.PRESET, "y", 64.0),
            ("b", "x", 50.0), ("b", "y", 90.0)]
    t = pd.DataFrame(rows, columns=["reading", "dev set", "auc"])
    assert A.choose(t) == "b"                      # mean 70 beats 65 and 65
    t.loc[t["reading"] == "b", "auc"] = [50.0, 80.0]
    assert A.choose(t) == A.PRESET                 # 65 = 65 = 65: the preset wins the tie


def test_every_reading_is_a_valid_scorer_config():
    sigs = {S.get("summac-zs", **o).signature for o in A.AGGREGATIONS.values()}
    assert len(sigs) == len(A.AGGREGATIONS)
    assert S.get("summac-zs", **A.AGGREGATIONS[A.PRESET]).signature == S.get("summac-zs").signature


def test_frame_digest_changes_with_a_label():
    assert A.frame_digest(FRAME) != A.frame_digest(FRAME.assign(label=[1, 0, 0, 0]))
    assert A.frame_digest(FRAME) == A.frame_digest(FRAME.copy())


def test_dev_frames_are_training_side_and_filtered(data_dir):
    from tfc.data import TRUE_TEXT, load

    dev = A.begin_dev(n=200)
    assert len(dev) == 200 and set(dev["label"]) == {0, 1}
    true_groundings = set(pd.concat([load(d)["grounding"] for d in ("begin", "q2")]))
    assert not set(dev["grounding"]) & true_groundings
    assert "begin_test" not in TRUE_TEXT
    assert np.isin(dev["label"], [0, 1]).all()
