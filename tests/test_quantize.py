"""int8 dynamic quantisation presets of the model scorers (tfc.models.quantize_dynamic_int8), on a tiny model."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tfc import models, scorers  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tfc.models.tiny import make_tiny_classifier

    return str(make_tiny_classifier(tmp_path_factory.mktemp("q") / "nli",
                                    id2label={0: "entailment", 1: "neutral", 2: "contradiction"}))


def _linears(model):
    return {n: type(m) for n, m in model.named_modules() if "Linear" in type(m).__name__}


def test_per_tensor_quantises_every_linear(tiny):
    m, _ = models.load_sequence_classifier(tiny, dtype="int8-dynamic")
    kinds = _linears(m)
    assert kinds and all("quantized" in t.__module__ for t in kinds.values()), kinds


def test_per_channel_keeps_the_classifier_in_fp32(tiny):
    m, _ = models.load_sequence_classifier(tiny, dtype="int8-dynamic-pc")
    kinds = _linears(m)
    head = {n: t for n, t in kinds.items() if n.split(".")[0] == "classifier"}
    body = {n: t for n, t in kinds.items() if n.split(".")[0] != "classifier"}
    assert head and all(t is torch.nn.Linear for t in head.values()), head
    assert body and all("quantized" in t.__module__ for t in body.values()), body
    w = dict(m.named_modules())[next(iter(body))].weight()
    assert w.qscheme() == torch.per_channel_affine     # one scale per output row


def test_int8_presets_stay_close_to_fp32_and_are_in_the_signature(tiny):
    g = ["the cat sat on the mat .", "a man plays a guitar .", "the company was founded in 1990 ."]
    h = ["the cat sat .", "a woman sings .", "it was founded in 1990 ."]
    ref = scorers.get("nli", checkpoint=tiny)
    s32 = ref.score(g, h)
    sigs = {ref.signature}
    for dtype in ("int8-dynamic", "int8-dynamic-pc"):
        sc = scorers.get("nli", checkpoint=tiny, dtype=dtype)
        np.testing.assert_allclose(sc.score(g, h), s32, atol=0.1)   # hidden-32 random weights: coarse
        sigs.add(sc.signature)
    assert len(sigs) == 3


def test_int8_is_cpu_only(tiny):
    with pytest.raises(ValueError, match="CPU only"):
        models.quantize_dynamic_int8(torch.nn.Linear(2, 2), "cuda", per_channel=True)
