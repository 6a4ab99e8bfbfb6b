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
        s = S.get("summac-zs", preset="as-published", checkpoint=tiny, **overrides).score(FRAME["grounding"].tolist(),
                                                                   FRAME["generated"].tolist(), progress=False)
        want = 100 * roc_auc(y, s)
        got = float(table.loc[table["reading"] == name, "auc"].iloc[0])
        assert got == pytest.approx(want, abs=1e-9), name


def test_sweep_refuses_a_one_label_dev_set(tiny):
    with pytest.raises(ValueError, match="both labels"):
        A.sweep(tiny, {"d": FRAME.assign(label=1)})


def _table(values: dict) -> pd.DataFrame:
    return pd.DataFrame([(r, d, v) for r, vs in values.items() for d, v in zip(("x", "y"), vs)],
                        columns=["reading", "dev set", "auc"])


W_MEAN, W_MIN, E_ONLY = "window12, max(e-c), mean", "window12, max(e-c), min", "sentence, max e, mean"


def test_choose_by_hand():
    # the best reading (mean 70) gains 5 over the preset (65): it is chosen
    assert A.choose(_table({A.PRESET: (66.0, 64.0), W_MEAN: (50.0, 90.0), E_ONLY: (70.0, 60.0)})) == W_MEAN
    # within the 0.5 margin of the best, the preset stays
    assert A.choose(_table({A.PRESET: (66.0, 64.0), W_MEAN: (66.4, 64.4)})) == A.PRESET
    # the session-7 case: window12 mean and min tie up to a hair; the one change beats two changes
    assert A.choose(_table({A.PRESET: (80.9, 95.9), W_MEAN: (80.90, 98.5), W_MIN: (80.95, 98.5),
                            E_ONLY: (83.6, 95.6)})) == W_MEAN
    # a second change that earns more than the margin is taken
    assert A.choose(_table({A.PRESET: (80.0, 90.0), W_MEAN: (80.0, 92.0), W_MIN: (82.0, 92.0)})) == W_MIN
    assert A._changes(A.PRESET) == 0 and A._changes(W_MIN) == 2 and A._changes(E_ONLY) == 1


def test_every_reading_is_a_valid_scorer_config():
    sigs = {S.get("summac-zs", preset="as-published", **o).signature for o in A.AGGREGATIONS.values()}
    assert len(sigs) == len(A.AGGREGATIONS)
    ours = S.get("summac-zs", preset="improved")                 # the reading the models were scored with
    assert S.get("summac-zs", preset="as-published", **A.AGGREGATIONS[A.PRESET]).signature == ours.signature


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


def test_chosen_readings_follow_the_recorded_sweep(tmp_path, monkeypatch):
    import json

    from tfc.runs.inhouse_models import chosen_readings

    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path / "records"))
    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "artifacts"))

    def write(name, chosen):
        d = tmp_path / "records" / name
        d.mkdir(parents=True)
        rec = {"eval_results": {"aggregation_dev": {"chosen": chosen, "preset": A.PRESET,
                                                    "chosen_overrides": A.AGGREGATIONS[chosen]}}}
        (d / "training_summary.json").write_text(json.dumps(rec))

    write("m-a", W_MEAN)
    write("m-b", A.PRESET)
    got = chosen_readings(["tfc/m-a", "tfc/m-b", "tfc/m-none"])
    assert got == {f"m-a ({W_MEAN})": ("summac-zs", {"checkpoint": "tfc/m-a", "dtype": "float32",
                                                     "grounding_granularity": "window12", "reduction": "cell",
                                                     "sentence_splitter": "auto"})}
    assert A.recorded("tfc/m-none") is None


def test_the_longer_dev_set_hides_each_passage_among_more_premises(data_dir):
    """loo_longer: the same pairs as loo_long, each passage among LONGER_DISTRACTORS other premises, so most
    groundings run past a 512-token input; only a sweep with a reading that cuts text asks for it."""
    from tfc.runs import readings as R

    long = R.long_loo_dev(40, R.SEED)
    longer = R.long_loo_dev(40, R.SEED, R.LONGER_DISTRACTORS)
    base = A.loo_dev(40, R.SEED).reset_index(drop=True)
    assert (longer["generated"].tolist() == base["generated"].tolist()
            and longer["label"].tolist() == base["label"].tolist())
    assert all(p in g for p, g in zip(base["grounding"], longer["grounding"]))
    words = longer["grounding"].str.split().str.len()
    assert words.median() > 2.5 * long["grounding"].str.split().str.len().median() and words.median() > 450
    assert set(R.CUTS_TEXT) == {"wecheck"}
