"""Derived caches (tfc.cache.derive) and the no-question policy conversion of the Q² / QAGS caches."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from tfc import cache
from tfc.runs import qgqa as R


def _src(root, rows):
    df = pd.DataFrame(rows, columns=["id", "score", "aux_n_valid"])
    df["input_sha"] = [cache.input_sha(f"g{i}", f"h{i}") for i in df["id"]]
    c = cache.ScoreCache("q2.src.0000000000", "d", "dev", root=root)
    c.write_part(df)
    c.compact({"name": "q2", "output_range": [0, 1], "config": {}}, wall_seconds=12.5, device="cpu", dtype="float32")
    return c


def test_zero_policy_frame_by_hand():
    df = pd.DataFrame({"score": [0.4, np.nan, 1.0], "aux_n_valid": [2, 0, 1]})
    out = R.zero_policy_frame(df.copy(), "q2")
    assert out["score"].tolist() == [0.4, 0.0, 1.0]


def test_zero_policy_frame_refuses_a_nan_with_questions_and_a_missing_column():
    with pytest.raises(ValueError, match="rows with questions"):
        R.zero_policy_frame(pd.DataFrame({"score": [np.nan], "aux_n_valid": [3]}), "q2")
    with pytest.raises(ValueError, match="aux_n_questions"):
        R.zero_policy_frame(pd.DataFrame({"score": [np.nan]}), "qags")


def test_derive_writes_once_keeps_rows_and_records_the_source(tmp_path):
    src = _src(tmp_path, [("a", 0.5, 1), ("b", np.nan, 0)])
    dst = cache.ScoreCache("q2.dst.1111111111", "d", "dev", root=tmp_path)
    meta = cache.derive(src, dst, lambda df: R.zero_policy_frame(df, "q2"),
                        {"name": "q2", "output_range": [0, 1], "config": {"no_questions": "zero"}}, "test")
    got = dst.read().sort_values("id")
    assert got["score"].tolist() == [0.5, 0.0] and got["aux_n_valid"].tolist() == [1, 0]
    side = json.loads(dst.sidecar.read_text())
    assert side["derived_from"]["signature"] == "q2.src.0000000000" and side["wall_seconds"] == 12.5
    assert meta["row_count"] == 2 and side["config"] == {"no_questions": "zero"}
    assert math.isnan(src.read().set_index("id").loc["b", "score"])       # the source is untouched
    with pytest.raises(FileExistsError):
        cache.derive(src, dst, lambda df: df, {"name": "q2"}, "again")


def test_derive_refuses_a_transform_that_changes_rows(tmp_path):
    src = _src(tmp_path, [("a", 0.5, 1), ("b", 0.1, 1)])
    dst = cache.ScoreCache("q2.dst.2222222222", "d", "dev", root=tmp_path)
    with pytest.raises(ValueError, match="only scores may change"):
        cache.derive(src, dst, lambda df: df.iloc[:1], {"name": "q2"}, "drop a row")
    assert not dst.parquet.exists()


def test_the_zero_policy_is_the_legacy_scores_with_nan_set_to_zero():
    """The conversion's premise, on the stub pipeline: scoring under "nan" and converting equals scoring under
    "zero" directly (the policy only touches rows without a valid question)."""
    from tests.test_qgqa import KNOW, RESP, _stub_q2

    qa = {("What about Barack Obama here?", RESP): "Barack Obama", ("What about Paris here?", RESP): "Paris",
          ("What about Barack Obama here?", KNOW): "The president Obama", ("What about Paris here?", KNOW): "Paris"}
    g, h = [KNOW, KNOW, "Some knowledge."], [RESP, "Yes!", "Paris is nice."]
    legacy = _stub_q2(qa, use_nli=False, no_valid_score=None)
    s_nan = legacy.score(g, h, progress=False)
    frame = pd.DataFrame({"score": s_nan, "aux_n_valid": legacy.last_aux()["aux_n_valid"]})
    s_zero = _stub_q2(qa, use_nli=False).score(g, h, progress=False)
    assert np.isnan(s_nan).any()
    assert R.zero_policy_frame(frame, "q2")["score"].tolist() == pytest.approx(list(s_zero))
