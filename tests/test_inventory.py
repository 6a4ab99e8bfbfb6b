"""tfc.book.chapters.true: committed signatures picked up automatically, their frames, comparisons, T4 rows."""
import json

import numpy as np
import pandas as pd
import pytest

from tfc.book.chapters import true as inventory
from tfc.cache import ScoreCache, inputs_sha256


def _write(root, sig, dataset, ids, scores, split="dev", scorer="f1"):
    c = ScoreCache(sig, dataset, split, root=root)
    df = pd.DataFrame({"id": ids, "score": scores, "input_sha": [f"s{i}" for i in range(len(ids))]})
    c._write_atomic(df, c.parquet)
    c.sidecar.write_text(json.dumps({"signature": sig, "scorer": scorer, "row_count": len(df),
                                     "inputs_sha256": inputs_sha256(df["id"], df["input_sha"])}))


@pytest.fixture
def fake(monkeypatch, tmp_cache):
    ids = {"a": pd.DataFrame({"id": [f"a/dev/{i}" for i in range(4)], "label": [1, 0, 1, 0]}),
           "b": pd.DataFrame({"id": [f"b/dev/{i}" for i in range(3)], "label": [0, 1, 1]})}
    monkeypatch.setattr(inventory, "_dataset_ids", lambda d: ids[d])
    _write(tmp_cache, "f1.full", "a", ids["a"]["id"], [0.9, 0.1, 0.8, 0.2])
    _write(tmp_cache, "f1.full", "b", ids["b"]["id"], [0.1, 0.2, 0.9])
    _write(tmp_cache, "nli.partial", "a", ids["a"]["id"][:2], [0.5, 0.4], scorer="nli")
    _write(tmp_cache, "nli.partial", "b", ids["b"]["id"], [0.3, 0.6, 0.7], scorer="nli")
    return ids


def test_committed_signatures_and_completeness(fake):
    inv = inventory.committed_signatures(["a", "b"])
    got = {(r.signature, r.dataset): (r.rows, r.dataset_rows, r.complete) for r in inv.itertuples()}
    assert got == {("f1.full", "a"): (4, 4, True), ("f1.full", "b"): (3, 3, True),
                   ("nli.partial", "a"): (2, 4, False), ("nli.partial", "b"): (3, 3, True)}
    assert inventory.complete_signatures(["a", "b"]) == ["f1.full"]
    assert inventory.complete_signatures(["b"]) == ["f1.full", "nli.partial"]


def test_committed_frames_join_labels_and_sample(fake):
    fr = inventory.committed_frames(["a", "b"])
    assert list(fr) == ["f1.full"]
    f = fr["f1.full"]
    assert f["label"].tolist() == [1, 0, 1, 0, 0, 1, 1]
    assert f["score"].tolist() == [0.9, 0.1, 0.8, 0.2, 0.1, 0.2, 0.9]
    assert f.attrs["signature"] == "f1.full"
    # a partial cache asked for explicitly: missing rows are NaN, not dropped
    p = inventory.committed_frames(["a"], signatures=["nli.partial"])["nli.partial"]
    assert p["score"].isna().sum() == 2 and len(p) == 4
    s = inventory.committed_frames(["a", "b"], sample=2, seed=0)["f1.full"]
    assert len(s) == 4 and s.attrs["signature"] == "f1.full"


def test_cached_ids_outside_the_dataset_are_refused(fake, tmp_cache):
    _write(tmp_cache, "f1.bad", "b", ["b/dev/0", "b/dev/9"], [0.1, 0.2])
    with pytest.raises(ValueError, match="not in the dataset"):
        inventory.committed_frames(["b"], signatures=["f1.bad"])


def test_compare_uses_the_published_mapping():
    long = pd.DataFrame({"row": ["frank", "frank", "frank"], "column": ["f1.x", "nli.y", "rouge1.z"],
                         "value": [80.0, 70.0, 60.0]})
    got = {j["column"].iloc[0]: (j["table"].iloc[0], role) for j, role, _ in inventory.compare(long)}
    assert got == {"f1": ("TRUE-T3", "reproduction"), "anli_t5_11b": ("TRUE-T3", "stand-in")}
    j = [j for j, _, _ in inventory.compare(long) if j["column"].iloc[0] == "f1"][0]
    from tfc.book import reference

    assert j["delta"].iloc[0] == pytest.approx(round(80.0 - reference.value("TRUE-T3", "frank", "f1"), 1))
    acc = inventory.compare(long, table_map={"TRUE-T3": "TRUE-T11"})
    assert {j["table"].iloc[0] for j, _, _ in acc} == {"TRUE-T11"}


def test_model_sizes_rows(monkeypatch, tmp_path):
    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path))
    auc = pd.DataFrame({"row": ["avg_wo_vitc_fever"] * 3, "column": ["nli.nli-minilm-doc.1", "nli.nli-minilm-sen.2",
                                                                      "bertscore.minilm-l6-L5-p.3"],
                        "value": [63.0, 61.0, 58.0]})
    t = inventory.model_sizes(auc).set_index("model")
    assert t.loc["tfc/nli-minilm (MiniLM-L6)", "ours"] == 63.0          # the better of the two modes
    assert t.loc["tfc/nli-minilm (MiniLM-L6)", "signature"] == "nli.nli-minilm-doc.1"
    assert t.loc["ANLI T5-Large", "paper"] == 76.8 and np.isnan(t.loc["ANLI T5-Large", "ours"])
    assert t.loc["tfc/nli-mpnet (MPNet-base)", "status"] == "not trained (CPU budget)"
    cmp = inventory.model_size_comparison(t.reset_index())
    assert cmp.set_index("column")["value"].to_dict() == {"anli_t5_large": 63.0, "bertscore_p_roberta_large": 58.0}
