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


def _conv_head(head: dict):
    import torch

    from tfc.scorers.summac_conv import _package_module

    module = _package_module(len(head["state"]["mlp.weight"][0]))
    module.load_state_dict({k: torch.tensor(v) for k, v in head["state"].items()})
    return module.eval()


@pytest.mark.parametrize("i", [0, 1])
def test_summac_conv_package_head_equals_the_package(i):
    import torch

    from tfc.scorers.summac_conv import package_histograms

    c = REF["summac_conv"]
    head = c["heads"][i]
    mats = [np.transpose(np.array(im), (1, 2, 0)) for im in c["images_e_c_n"]]
    cols = [0, 1][:len(head["nli_labels"])]
    hist = package_histograms(mats, cols, head["bins"])
    np.testing.assert_array_equal(hist, np.array(head["histograms"], dtype=np.float32))
    with torch.no_grad():
        got = torch.softmax(_conv_head(head)(torch.as_tensor(hist)), dim=-1)[:, 1].numpy()
    np.testing.assert_allclose(got, head["scores"], atol=1e-7, rtol=0)


def test_summac_conv_reads_ten_rows_and_counts_per_bin():
    from tfc.scorers.summac_conv import package_histograms

    c = REF["summac_conv"]
    mats = [np.transpose(np.array(im), (1, 2, 0)) for im in c["images_e_c_n"]]
    hist = package_histograms(mats, [0], "percentile")
    assert hist.shape == (4, 10, 23)
    # the 3 x 2 image: P(e) column 0 is (0.9, 0.2, 0.1) -> bins [0.90, 0.91), [0.13, 0.37), [0.07, 0.13)
    assert np.flatnonzero(hist[0, 0]).tolist() == [5, 6, 8] and hist[0, 0].sum() == 3 and hist[0, 2:].sum() == 0
    assert (hist[1].sum(axis=1) == 4).all()                 # 12 generated sentences: the first 10 rows, 4 counts each
    # 1.0 falls in the last bin (numpy closes it), 0.0 in the first
    assert hist[2, 0, 0] == 1 and hist[2, 0, 22] == 1
    assert hist[3, 0, 0] == 1 and hist[3].sum() == 1        # an example without sentences: one cell of zeros
    # the empty matrices tfc builds for such an example read the same
    empty = package_histograms([np.zeros((0, 2, 3)), np.zeros((3, 0, 3))], [0], "percentile")
    np.testing.assert_array_equal(empty, np.repeat(hist[3:4], 2, axis=0))
