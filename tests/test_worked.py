"""tfc.book.chapters.worked: the worked example's steps recompute each scorer's score (tiny random checkpoints)."""
import pandas as pd
import pytest

from tfc.book.chapters import worked
from tfc.models.tiny import make_tiny_classifier

G = ("The council approved the new park on Monday. Work will start in May. The park will cost two million "
     "pounds. Residents said they were pleased.")
H = "The council rejected the park. Work starts in May."


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(make_tiny_classifier(tmp_path_factory.mktemp("m") / "tiny-nli", seed=1))


def test_available(tiny, tmp_path):
    assert worked.available(tiny)
    assert not worked.available(str(tmp_path / "nope"))
    assert not worked.available("tfc/definitely-not-trained")


def test_nli_steps_recompute_the_score(tiny):
    t, s, ss = worked.nli_steps(G, H, tiny)
    assert list(t.columns[:3]) == ["chunk", "words", "starts with"]
    assert {"P(entailment)", "P(neutral)", "P(contradiction)"} <= set(t.columns)
    assert s == pytest.approx(ss, abs=1e-5)
    assert s == pytest.approx(t["P(entailment)"].max(), abs=1e-3)


def test_summac_steps_recompute_the_score(tiny):
    mat, per, s, ss = worked.summac_steps(G, H, tiny)
    assert mat.shape == (4, 2)                 # 4 grounding sentences x 2 summary sentences
    assert s == pytest.approx(ss, abs=1e-5)
    assert list(per["max e"]) == pytest.approx(list(mat.max(axis=0)), abs=6e-3)
    assert list(per["max e - max c"]) == pytest.approx(list(per["max e"] - per["max c"]), abs=2e-3)


def test_alignscore_steps_with_a_plain_nli_checkpoint(tiny):
    pairs, per, s, ss = worked.alignscore_steps(G, H, tiny, chunk_words=12)
    assert pairs.shape[1] == 2 and pairs.shape[0] >= 2      # several chunks at 12 words each
    assert s == pytest.approx(ss, abs=1e-5)
    assert per["best chunk"].between(1, pairs.shape[0]).all()


def test_summary_flags_disagreement():
    out = worked.summary([("a", 0.5, 0.5), ("b", 0.5, 0.6), ("c", float("nan"), float("nan"))])
    assert out["agree"].tolist() == [True, False, True]


def test_short():
    assert worked.short("abc", 10) == "abc"
    assert worked.short("abcdefghijkl", 5) == "abcd…"


def test_pick_example_follows_its_rule(data_dir):
    ex = worked.pick_example("qags_cnndm")
    assert ex["label"] == 0 and ex["n_sent"] >= 2 and 360 <= ex["g_words"] <= 600
    assert worked.pick_example("qags_cnndm")["id"] == ex["id"]
    with pytest.raises(ValueError):
        worked.pick_example("qags_cnndm", min_grounding_words=10**6, max_grounding_words=10**7)
