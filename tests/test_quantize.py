"""int8 dynamic quantisation presets of the model scorers (tfc.models.quantize_dynamic_int8), on a tiny model."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import assert_field_in_signature  # noqa: E402
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


def test_fast_preset_sets_bf16_in_every_model_scorer_and_leaves_lexical_alone():
    fast = scorers.PRESETS["fast"]
    assert set(fast) == set(scorers.FAST_SCORERS)
    for name in scorers.FAST_SCORERS:
        assert scorers.get(name, preset="fast").config.dtype == scorers.FAST_DTYPE == "bfloat16"
        assert scorers.get(name, preset="fast").config != scorers.get(name).config
    for name in ("f1", "rougeL", "bleu4"):
        assert scorers.get(name, preset="fast").signature == scorers.get(name).signature


def test_fast_preset_changes_the_signature_and_stays_close(tiny):
    g = ["the cat sat on the mat .", "a man plays a guitar ."]
    h = ["the cat sat .", "a woman sings ."]
    ref, fast = scorers.get("nli", checkpoint=tiny), scorers.get("nli", checkpoint=tiny, preset="fast")
    assert fast.signature != ref.signature
    np.testing.assert_allclose(fast.score(g, h), ref.score(g, h), atol=0.02)


def test_bertscore_dtype_is_in_the_signature():
    assert_field_in_signature("bertscore", "dtype", "bfloat16", "int4", "unknown dtype")


def test_apply_dtype_casts_or_quantises_in_place():
    lin = torch.nn.Sequential(torch.nn.Linear(4, 4))
    assert models.apply_dtype(lin, "float32") is lin and lin[0].weight.dtype == torch.float32
    models.apply_dtype(lin, "bfloat16")
    assert lin[0].weight.dtype == torch.bfloat16
    q = torch.nn.Sequential(torch.nn.Linear(4, 4))
    assert models.apply_dtype(q, "int8-dynamic") is q and "quantized" in type(q[0]).__module__


def test_bf16_native_is_a_bool():
    assert isinstance(models.bf16_native(), bool)
