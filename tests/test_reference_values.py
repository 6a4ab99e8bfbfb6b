"""tfc's as-published reductions and grouping against values the reference code computed on fixed inputs
(tests/golden/reference_values.json, written by the command it records: benchmarks/peers/reference_values.py in
the peer venv). No peer environment is needed here."""
import json
from pathlib import Path

import numpy as np
import pytest

from tfc.scorers.alignscore_model import aggregate_max_mean, equal_groups
from tfc.scorers.summac import reduce_zs

REF = json.loads((Path(__file__).parent / "golden" / "reference_values.json").read_text())


def _matrix():
    # the package's image[label, grounding, generated] (labels e, c, n) -> tfc's m[grounding, generated, label]
    return np.transpose(np.array(REF["summac"]["image_e_c_n"]), (1, 2, 0))


def test_summac_package_reduction_equals_the_package():
    assert reduce_zs(_matrix(), 0, 1, "package") == pytest.approx(REF["summac"]["e-c"], abs=1e-12)
    assert REF["summac"]["e-c"] == pytest.approx(-0.15)                     # (0.9 - 0.8 + 0.5 - 0.9) / 2


def test_summac_entailment_only_equals_the_package():
    for reduction in ("package", "cell"):
        assert reduce_zs(_matrix(), 0, None, reduction) == pytest.approx(REF["summac"]["e"], abs=1e-12)


def test_summac_cell_reduction_is_another_computation():
    # tfc's per-cell reading on the same image: max(0.8, -0.6, -0.2) and max(0.5, -0.2, -0.85) -> 0.65
    assert reduce_zs(_matrix(), 0, 1, "cell") == pytest.approx(0.65)
    assert abs(reduce_zs(_matrix(), 0, 1, "cell") - REF["summac"]["e-c"]) > 0.5


def test_alignscore_groups_equal_the_reference():
    a = REF["alignscore"]
    got = equal_groups(a["sentences"], a["text"], a["chunk_words"])
    assert got == a["groups"]
    assert [len(g.split()) for g in got] == [255, 243, 256, 52]             # 806 words -> 3 wanted, 10 // 3 = 3 each


def test_alignscore_reduction_equals_the_reference():
    a = REF["alignscore"]
    assert aggregate_max_mean(np.array(a["matrix"])) == pytest.approx(a["score"], abs=1e-7)
