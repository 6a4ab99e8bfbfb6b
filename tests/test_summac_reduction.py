"""SummaC-ZS reductions: the paper's per-cell max of P(e)-P(c) vs the PyPI package's max P(e) - max P(c)."""
import numpy as np
import pytest

import tfc.scorers as S
from conftest import assert_field_in_signature
from tfc.scorers.summac import reduce_zs


def _m():
    # 2 grounding units x 2 generated units x labels (e, n, c)
    m = np.zeros((2, 2, 3))
    m[0, 0] = [0.9, 0.0, 0.1]
    m[1, 0] = [0.2, 0.0, 0.8]
    m[0, 1] = [0.5, 0.5, 0.0]
    m[1, 1] = [0.4, 0.0, 0.6]
    return m


def test_cell_reduction_by_hand():
    # unit 0: max(0.9-0.1, 0.2-0.8) = 0.8 ; unit 1: max(0.5-0.0, 0.4-0.6) = 0.5 ; mean 0.65
    assert reduce_zs(_m(), 0, 2, "cell") == pytest.approx(0.65)


def test_package_reduction_by_hand():
    # unit 0: 0.9 - 0.8 = 0.1 ; unit 1: 0.5 - 0.6 = -0.1 ; mean 0.0
    assert reduce_zs(_m(), 0, 2, "package") == pytest.approx(0.0)


def test_entailment_only_ignores_reduction():
    # max P(e): 0.9 and 0.5 -> 0.7, whatever the reduction
    assert reduce_zs(_m(), 0, None, "cell") == pytest.approx(0.7)
    assert reduce_zs(_m(), 0, None, "package") == pytest.approx(0.7)


def test_reduction_is_in_the_signature():
    assert_field_in_signature("summac-zs", "reduction", "cell", "mean", "reduction")
    assert S.get("summac-zs", preset="as-published").config.reduction == "package"   # the reference code's


def test_reduction_is_one_value_where_it_is_not_used():
    # with P(e) alone both reductions are max P(e): one configuration, one signature; the conv model reads neither
    e_pkg = S.get("summac-zs", preset="as-published", score_type="e", reduction="package")
    e_cell = S.get("summac-zs", preset="as-published", score_type="e", reduction="cell")
    assert e_pkg.config == e_cell.config and e_pkg.config.reduction == "cell"
    ec = S.get("summac-zs", preset="as-published")
    assert ec.signature != S.get("summac-zs", preset="as-published", reduction="cell").signature
    conv = S.get("summac-conv", preset="as-published")
    assert conv.config.reduction == "cell" == S.get("summac-conv", preset="as-published", reduction="package").config.reduction


def test_bad_reduction():
    with pytest.raises(ValueError, match="reduction"):
        S.get("summac-zs", reduction="mean")


def test_min_over_generated_units_by_hand():
    # per generated unit (cell): 0.8 and 0.5 -> min 0.5 ; package: 0.1 and -0.1 -> min -0.1 ; "e": 0.9, 0.5 -> 0.5
    assert reduce_zs(_m(), 0, 2, "cell", "min") == pytest.approx(0.5)
    assert reduce_zs(_m(), 0, 2, "package", "min") == pytest.approx(-0.1)
    assert reduce_zs(_m(), 0, None, "cell", "min") == pytest.approx(0.5)


def test_generated_reduction_is_in_the_signature():
    assert_field_in_signature("summac-zs", "generated_reduction", "min", "median", "generated_reduction")


def test_window12_units_are_sentences_and_adjacent_pairs():
    from tfc.scorers.summac import _units

    units = _units(["One is here. Two is there. Three is gone.", "Only one."], "window12", "rule")
    assert units[0] == ["One is here.", "Two is there.", "Three is gone.",
                        "One is here. Two is there.", "Two is there. Three is gone."]
    assert units[1] == ["Only one."]
    assert S.get("summac-zs", grounding_granularity="window12").config.grounding_granularity == "window12"


# --- summac 0.0.4's sentence filter (the as-published splitter) ----------------------------------------
def test_summac_splitter_drops_sentences_of_ten_characters_or_fewer():
    from tfc.text.sentences import DROP_SHORT, resolve_splitter, split_many

    rule = "rule" + DROP_SHORT
    assert resolve_splitter(rule) == "rule-v1" + DROP_SHORT
    assert resolve_splitter("summac") == resolve_splitter("auto") + DROP_SHORT
    text = "Yes. It is. The cat sat on the mat. Ten chars.. Eleven char."
    assert split_many([text], "rule") == [["Yes.", "It is.", "The cat sat on the mat.", "Ten chars..", "Eleven char."]]
    # len("Ten chars..") == 11 and len("Eleven char.") == 12 are kept; "It is." (6) and "Yes." (4) are dropped
    assert split_many([text, "Ok.", ""], rule) == [["The cat sat on the mat.", "Ten chars..", "Eleven char."], [], []]


def test_summac_splitter_is_the_as_published_one_and_in_the_signature():
    assert S.get("summac-zs", preset="as-published").config.sentence_splitter == "summac"
    assert S.get("summac-zs", preset="improved").config.sentence_splitter == "auto"
    assert S.get("summac-conv", preset="as-published").config.sentence_splitter == "summac"   # the package's imager
    assert S.get("summac-conv", preset="improved").config.sentence_splitter == "auto"
    assert S.get("summac-conv").config.sentence_splitter == "auto"
    assert S.get("summac-zs").config.sentence_splitter == "auto"             # the default keeps every sentence


def test_empty_matrix_scores_zero_as_the_package():
    assert reduce_zs(np.zeros((0, 2, 3)), 0, 2, "package") == 0.0
    assert reduce_zs(np.zeros((3, 0, 3)), 0, None, "cell") == 0.0


def test_an_example_without_units_scores_zero(tmp_path):
    pytest.importorskip("torch")
    from tfc.models.tiny import make_tiny_classifier

    ckpt = str(make_tiny_classifier(tmp_path / "nli", seed=1))
    pub = S.get("summac-zs", preset="as-published", checkpoint=ckpt, sentence_splitter="rule+drop-short-10")
    ours = S.get("summac-zs", preset="as-published", checkpoint=ckpt, sentence_splitter="rule")
    g = ["The cat sat on the mat all day.", "Ok. No.", "The cat sat on the mat all day. Yes."]
    h = ["Yes.", "The cat sat on the mat.", "The cat sat on the mat. Fine."]
    got = pub.score(g, h, progress=False)
    assert got[0] == 0.0 and got[1] == 0.0                                   # no generated / no grounding unit
    assert pub.last_aux()["aux_n_grounding_units"].tolist()[2] == 1          # "Yes." dropped
    assert np.isfinite(ours.score(g, h, progress=False)).all()
    # the third row: its one long grounding sentence against its one long generated sentence, either way
    one = ours.score(["The cat sat on the mat all day."], ["The cat sat on the mat."], progress=False)[0]
    assert got[2] == pytest.approx(one, abs=1e-6)
