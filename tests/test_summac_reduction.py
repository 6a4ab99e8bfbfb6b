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
    assert_field_in_signature("summac-zs", "reduction", "package", "mean", "reduction")
    assert S.get("summac-zs", preset="as-published").config.reduction == "cell"


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
