"""tfc cache rescore: the caches of a checkpoint whose weights changed are scored again on the same rows."""
import json

import pytest

from tfc import cache
from tfc import scorers as S
from tfc.cache import rescore as R
from tfc.results.dataset import score_dataset

pytest.importorskip("transformers")


@pytest.fixture
def tiny_nli_dir(tmp_path):
    from tfc.models.tiny import NLI3, make_tiny_classifier

    return make_tiny_classifier(tmp_path / "ck", id2label=NLI3)


def _retrain(folder):
    """New weights under the same name: the classifier's bias moves."""
    import os

    from safetensors.torch import load_file, save_file

    path = folder / "model.safetensors"
    state = load_file(str(path))
    state["classifier.bias"] = state["classifier.bias"] + 1.0
    stamp = path.stat().st_mtime_ns
    save_file(state, str(path), metadata={"format": "pt"})
    # a later write, as a retraining is: the identity is memoised by size and mtime, which one clock tick may not move
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))


def test_the_caches_of_a_changed_checkpoint_are_scored_again(tmp_cache, tiny_nli_dir, tmp_path):
    ck = str(tiny_nli_dir)
    before = S.get("nli", checkpoint=ck, calibration=None)
    first = score_dataset(before, "begin", sample=5, seed=0)
    old = before.signature                                       # (a signature reads the weights' identity live)
    records = tmp_path / "records" / "m"
    records.mkdir(parents=True)
    (records / "run.json").write_text(json.dumps({"signature": old}))
    assert R.plan(ck) == []                                      # nothing moved yet
    _retrain(tiny_nli_dir)
    after = S.get("nli", checkpoint=ck, calibration=None)
    assert after.signature != old
    todo = R.plan(ck)
    assert [(e["old"], e["new"], e["dataset"]) for e in todo] == [(old, after.signature, "begin")]
    assert R.plan("some/other-checkpoint") == []
    done = R.rescore(ck, records=tmp_path / "records")
    assert [e["rows"] for e in done] == [5]
    want = after.score(*[first.merge(_texts(), on="id")[c].tolist() for c in ("grounding", "generated")],
                       progress=False)
    got = cache.ScoreCache(after.signature, "begin", todo[0]["split"]).read().set_index("id")["score"]
    assert got.reindex(first["id"]).tolist() == pytest.approx(list(want), abs=1e-6)
    assert not (tmp_cache / old).exists()           # the old weights' cache is gone
    assert json.loads((records / "run.json").read_text())["signature"] == after.signature
    assert R.plan(ck) == []                                      # done: a second run finds nothing


def test_rows_read_otherwise_than_when_cached_are_refused(tmp_cache, tiny_nli_dir, monkeypatch):
    from tfc import data

    ck = str(tiny_nli_dir)
    sc = S.get("nli", checkpoint=ck, calibration=None)
    first = score_dataset(sc, "begin", sample=3, seed=0)
    _retrain(tiny_nli_dir)
    entry = R.plan(ck)[0]
    load = data.load

    def edited(name, split=None, **kw):                          # one cached row's text changed since
        df = load(name, split=split, **kw)
        df.loc[df["id"] == first["id"].iloc[0], "generated"] += " Edited."
        return df

    monkeypatch.setattr(data, "load", edited)
    with pytest.raises(cache.CacheMismatchError, match="read otherwise"):
        R.rescore_one(entry)
    assert cache.ScoreCache(entry["old"], "begin", entry["split"]).parquet.is_file()   # the old cache stays


def _texts():
    from tfc import data

    return data.load("begin")[["id", "grounding", "generated"]]


def test_migrate_leaves_the_old_weights_caches_to_rescore(tmp_cache, tiny_nli_dir):
    """A signature that moved with the weights (the configuration unchanged) is not a schema change: tfc cache
    migrate reports the cache as skipped instead of filing the old weights' scores under the new weights' name."""
    from tfc.cache import migrate as M

    ck = str(tiny_nli_dir)
    sc = S.get("nli", checkpoint=ck, calibration=None)
    score_dataset(sc, "begin", sample=3, seed=0)
    old = sc.signature
    _retrain(tiny_nli_dir)
    rep = M.migrate(tmp_cache)
    assert rep.moved == [] and [e["sidecar"].split("/")[0] for e in rep.skipped] == [old]
    assert (tmp_cache / old).is_dir() and not (tmp_cache / sc.signature).exists()
