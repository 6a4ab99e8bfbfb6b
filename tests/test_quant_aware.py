"""Quantisation-aware training (tfc.train.quant_aware): a run whose last steps train through the release's int8 delta
packing is its own release, and a plain run's saved state continues it bit for bit."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tfc.models import release as R
from tfc.train import quant_aware as QA
from test_qgqa import _pairs, tiny  # noqa: E402,F401  (the tiny QA model and its training pairs)

pytest.importorskip("transformers")


def _run(tiny, out, steps=8, qat=0, on_step=None, checkpoint_every=0):
    from tfc.train import engine
    from tfc.train.qa import QATrainConfig, SpanObjective, engine_config
    from tfc.train.qa_set import build_qa_set

    train, _, _ = build_qa_set(pairs=_pairs(), seed=0, heldout_pairs=2, per_pair=3)
    cfg = QATrainConfig(base=tiny["qa"], max_steps=steps, batch_size=4, max_length=64, lr=3e-3, warmup_ratio=0.0,
                        num_threads=1, freeze=("embeddings.word_embeddings",), quant_aware_steps=qat,
                        checkpoint_every=checkpoint_every)
    return engine.train(train, engine_config(cfg), out_dir=out, progress=False, objective=SpanObjective(stride=None),
                        on_step=on_step, keep_model=True)


def _weights(folder):
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def _release_error(tiny, ckpt, tmp_path, name):
    """Largest |weight difference| between a checkpoint and its delta release materialised again."""
    out = R.pack(ckpt, name, out_root=tmp_path / "rel", share_with=str(tiny["qa"]), delta=True)
    back = _weights(R.materialize(name, target=tmp_path / f"inst-{name}", root=tmp_path / "rel"))
    mine = _weights(ckpt)
    assert json.loads((out / R.META).read_text())["scheme"] == R.DELTA_SCHEME
    return max(float((back[k].float() - v.float()).abs().max()) for k, v in mine.items() if v.is_floating_point())


def test_a_quant_aware_run_is_its_own_release(tiny, tmp_path):
    """Trained plainly, the release moves weights by up to half an int8 step; with its last 3 steps trained through
    the packing, the checkpoint is the packed model, so the release gives it back to float32 rounding."""
    plain = _run(tiny, tmp_path / "plain")
    qat = _run(tiny, tmp_path / "qat", qat=3)
    assert plain.summary["quant_aware_from"] is None and qat.summary["quant_aware_from"] == 5
    assert qat.summary["config"]["quant_aware_steps"] == 3
    err_plain = _release_error(tiny, tmp_path / "plain", tmp_path, "plain")
    err_qat = _release_error(tiny, tmp_path / "qat", tmp_path, "qat")
    assert err_plain > 1e-5, err_plain
    # float32 rounding of base + delta: at most two units in the last place of weights below 2 (2 * 2**-23)
    assert err_qat <= 2 ** -22 and err_qat < err_plain / 100, (err_qat, err_plain)
    # the frozen word embeddings stay the base's, bit for bit: the release shares them rather than quantising
    key = "bert.embeddings.word_embeddings.weight"
    assert torch.equal(_weights(tmp_path / "qat")[key], _weights(Path(tiny["qa"]))[key])
    # every matrix the release quantises trained through the packing, the frozen one did not
    names = QA.PackedWeights(qat.model, tiny["qa"]).names()
    assert key not in names and "qa_outputs.weight" in names and "bert.embeddings.position_embeddings.weight" in names


def test_a_plain_runs_state_continues_a_quant_aware_run_bit_for_bit(tiny, tmp_path):
    """The steps before the quantisation-aware ones are the plain run's: a plain run stopped at step 5 resumes as a
    run whose last 3 of 8 steps train through the packing, and ends where an uninterrupted one does; a state saved
    after step 5 of a plain run is refused."""
    whole = _run(tiny, tmp_path / "whole", qat=3)

    def stop_at(n):
        def hook(step):
            if step == n:
                raise KeyboardInterrupt
        return hook

    for n, ok in ((5, True), (6, False)):
        out = tmp_path / f"resumed{n}"
        with pytest.raises(KeyboardInterrupt):
            _run(tiny, out, on_step=stop_at(n), checkpoint_every=1)
        if not ok:
            with pytest.raises(ValueError, match="trained through the packing"):
                _run(tiny, out, qat=3, checkpoint_every=1)
            continue
        again = _run(tiny, out, qat=3, checkpoint_every=1)
        assert again.summary["resumed"] and again.summary["quant_aware_from"] == 5
        a, b = _weights(tmp_path / "whole"), _weights(out)
        assert all(torch.equal(a[k], b[k]) for k in a)
    assert whole.steps == 8


@pytest.mark.parametrize("saved_step,saved_from,start,ok", [
    (1200, None, 1200, True), (1300, None, 1200, False), (1300, 1200, 1200, True), (100, None, None, True),
    (1300, 1200, None, False), (1200, 1200, None, True), (1250, 1200, 1100, False), (1100, 1200, 1100, True)])
def test_which_saved_states_resume(saved_step, saved_from, start, ok):
    if ok:
        QA.check_resume(saved_step, saved_from, start)
    else:
        with pytest.raises(ValueError, match="trained through the packing"):
            QA.check_resume(saved_step, saved_from, start)


def test_start_step_and_bad_settings(tiny):
    from tfc.train.engine import TrainConfig

    assert QA.start_step(1400, 0) is None and QA.start_step(1400, 200) == 1200 and QA.start_step(5, 5) == 0
    with pytest.raises(ValueError, match="exceeds"):
        QA.start_step(10, 11)
    with pytest.raises(ValueError, match="quant_aware_steps"):
        TrainConfig(quant_aware_steps=-1).validate()
    with pytest.raises(ValueError, match="exceeds"):
        _run(tiny, False, steps=2, qat=3)


def test_packed_matrix_is_the_release_arithmetic():
    """packed_matrix is what pack + materialize give back: base + dequant(quant(w - base)), and idempotent."""
    g = torch.Generator().manual_seed(0)
    base = torch.randn(6, 10, generator=g)
    w = base + 1e-3 * torch.randn(6, 10, generator=g)
    p = R.packed_matrix(w, base)
    q = R.quantize_matrix(w - base)
    assert torch.equal(p, base + R.dequantize_matrix(q["q"], q["scale"]))
    assert float((p - w).abs().max()) <= float(q["scale"].max()) / 2 + 1e-9
    assert float((R.packed_matrix(p, base) - p).abs().max()) < 1e-9
    assert torch.equal(R.packed_matrix(w), R.dequantize_matrix(**R.quantize_matrix(w)))
