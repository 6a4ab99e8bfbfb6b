"""Derived caches (tfc.cache.derive) and TRUE's Q² variant derived from the Q² caches."""
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


def test_derive_writes_once_keeps_rows_and_records_the_source(tmp_path):
    src = _src(tmp_path, [("a", 0.5, 1), ("b", np.nan, 0)])
    dst = cache.ScoreCache("q2.dst.1111111111", "d", "dev", root=tmp_path)
    meta = cache.derive(src, dst, lambda df: df.assign(score=df["score"].fillna(0.0)),
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


def test_true_variant_frame_by_hand():
    df = pd.DataFrame({"id": list("abc"), "score": [0.5, 0.0, 1.0], "aux_n_valid": [1, 0, 2],
                       "aux_true_q2": [0.75, np.nan, 1.0], "aux_n_valid_true": [2, 0, 2], "aux_f1_only": [0.5, np.nan, 1.0]})
    out = R.true_variant_frame(df.copy(), lambda mask: [0.9] * int(mask.sum()))
    assert out["score"].tolist() == [0.75, 0.9, 1.0] and out["aux_n_valid"].tolist() == [2, 0, 2]
    assert "aux_f1_only" not in out and "aux_true_q2" not in out
    with pytest.raises(ValueError, match="aux_true_q2"):
        R.true_variant_frame(df.drop(columns="aux_true_q2"), lambda m: [])
    with pytest.raises(ValueError, match="NaN"):
        R.true_variant_frame(df.assign(aux_true_q2=[np.nan, np.nan, 1.0]), lambda m: [0.0])


def test_true_variant_derived_equals_a_direct_run():
    """On the stub pipeline: TRUE's variant derived from the exact-match run equals scoring with validation="f1"
    and the NLI fallback directly (the end-to-end NLI stubbed: 0.2 for every row that needs it)."""
    from tests.test_qgqa import KNOW, RESP, _stub_q2

    qa = {("What about Barack Obama here?", RESP): "Obama", ("What about Paris here?", RESP): "Paris",
          ("What about Barack Obama here?", KNOW): "The president Obama", ("What about Paris here?", KNOW): "Paris"}
    g, h = [KNOW, KNOW, "Some knowledge."], [RESP, "Yes!", "Barack Obama visited Paris."]
    em = _stub_q2(qa, use_nli=False)
    s_em = em.score(g, h, progress=False)
    frame = pd.DataFrame({"score": s_em, **em.last_aux()})
    direct = _stub_q2(qa, use_nli=False, **R.TRUE_VARIANT)
    direct._no_question_scores = lambda gg, hh, rows: np.full(len(list(rows)), 0.2)
    s_true = direct.score(g, h, progress=False)
    derived = R.true_variant_frame(frame, lambda mask: np.full(int(mask.sum()), 0.2))
    assert derived["score"].tolist() == pytest.approx(list(s_true))
    assert derived["aux_n_valid"].tolist() == list(direct.last_aux()["aux_n_valid"])
    assert s_true[1] == pytest.approx(0.2) and s_em[1] == 0.0      # "Yes!": no question -> NLI instead of 0


def test_stage_throughput_by_hand():
    assert R.stage_throughput({"qg": 2.0, "qa_grounding": 8.0, "compare": 0.0}, 40) == {
        "stage_seconds": {"qg": 2.0, "qa_grounding": 8.0},
        "stage_responses_per_second": {"qg": 20.0, "qa_grounding": 5.0}}
    assert R.stage_throughput({"qg": 1.0}, 0) == {} and R.stage_throughput({}, 10) == {}


def test_derive_true_variant_writes_once_and_skips_partial_splits(tmp_path, monkeypatch):
    from tfc import data

    df = pd.DataFrame({"id": list("abcd"), "score": [0.5, 0.0, 1.0, 0.0], "aux_n_valid": [1, 0, 1, 0],
                       "aux_true_q2": [0.75, np.nan, 1.0, 0.5], "aux_n_valid_true": [2, 0, 1, 1]})
    df["input_sha"] = [cache.input_sha(f"g{i}", f"h{i}") for i in df["id"]]
    frame = pd.DataFrame({"id": list("abcde"), "split": ["dev"] * 4 + ["test"], "label": [1, 0, 1, 0, 1],
                          "grounding": [f"g{i}" for i in "abcde"], "generated": [f"h{i}" for i in "abcde"]})

    class Stub:
        def __init__(self, sig):
            self.signature = sig

        def describe(self):
            return {"name": "q2", "output_range": [0, 1], "config": {}}

        def _no_question_scores(self, g, h, rows):
            assert h == ["hb"] and list(rows) == [0]          # the one row without an F1-validated question
            return np.array([0.9])

    stubs = {False: Stub("q2.em.0000000000"), True: Stub("q2.true.1111111111")}
    monkeypatch.setattr(R, "scorer_for", lambda name, **kw: stubs[bool(kw)])
    monkeypatch.setattr(data, "load", lambda name, **kw: frame)
    src = cache.ScoreCache("q2.em.0000000000", "toy", "dev", root=tmp_path)
    src.write_part(df)
    src.compact(stubs[False].describe(), wall_seconds=3.0, device="cpu", dtype="float32")
    out = R.derive_true_variant("toy", root=tmp_path)
    assert out == [{"dataset": "toy", "split": "dev", "from": "q2.em.0000000000", "to": "q2.true.1111111111",
                    "rows_nli": 1}]
    got = cache.ScoreCache("q2.true.1111111111", "toy", "dev", root=tmp_path).read().sort_values("id")
    assert got["score"].tolist() == [0.75, 0.9, 1.0, 0.5] and got["aux_n_valid"].tolist() == [2, 0, 1, 1]
    assert not cache.ScoreCache("q2.true.1111111111", "toy", "test", root=tmp_path).exists()   # not cached: skipped
    assert R.derive_true_variant("toy", root=tmp_path) == []                                     # written once
    # another run (overrides): both scorers get them, and the target is that run's variant
    seen = []
    monkeypatch.setattr(R, "scorer_for", lambda name, **kw: seen.append(kw) or stubs[bool(kw)])
    assert R.derive_true_variant("toy", root=tmp_path, checkpoint="tfc/other") == []          # target exists
    assert seen == [{"checkpoint": "tfc/other"}, {"checkpoint": "tfc/other", **R.TRUE_VARIANT}]


def test_stage_throughput_survives_a_stage_that_rounds_to_zero():
    out = R.stage_throughput({"qg": 0.001, "qa_grounding": 2.0}, 10)     # 0.001 s rounds to 0.0 for display
    assert out["stage_seconds"]["qg"] == 0.0 and out["stage_responses_per_second"]["qg"] == 10000.0
