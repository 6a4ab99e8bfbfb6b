"""Release weights (tfc.models.release): int8 per-row packing, the sha256 manifest, dequantisation."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tfc.models import release as R  # noqa: E402


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory):
    """A tiny 3-way BERT classifier with an extra side-heads file, saved as an HF directory."""
    from safetensors.torch import save_file
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    d = tmp_path_factory.mktemp("tiny_cls")
    words = "the a company was founded in boston paris france capital of is she plays violin . , 1990 2004".split()
    (d / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words) + "\n")
    tok = BertTokenizerFast(vocab=str(d / "vocab.txt"), do_lower_case=True)
    cfg = BertConfig(vocab_size=5 + len(words), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, num_labels=3,
                     id2label={0: "entailment", 1: "neutral", 2: "contradiction"},
                     label2id={"entailment": 0, "neutral": 1, "contradiction": 2})
    torch.manual_seed(0)
    BertForSequenceClassification(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    save_file({"bin.weight": torch.randn(2, 32), "bin.bias": torch.zeros(2)}, str(d / R.HEADS_FILE))
    (d / "tfc_heads.json").write_text(json.dumps({"format": "tfc-heads-v1", "heads": {"bin": {}}}))
    return d


def test_quantize_roundtrip_error_is_bounded():
    torch.manual_seed(1)
    state = {"w": torch.randn(8, 16), "b": torch.randn(16), "ids": torch.arange(4)}
    q = R.quantize_state(state)
    assert q["w.q"].dtype == torch.int8 and q["w.scale"].shape == (8,) and q["b.f16"].dtype == torch.float16
    back = R.dequantize_state(q)
    # per-row absmax int8: the error of every weight is at most half a step of its row
    step = state["w"].abs().amax(dim=1, keepdim=True) / 127
    assert bool(((back["w"] - state["w"]).abs() <= step / 2 + 1e-7).all())
    assert torch.equal(back["ids"], state["ids"])
    assert float((back["b"] - state["b"]).abs().max()) < 1e-2


def test_pack_materialize_load_and_scores(tiny_ckpt, tmp_path):
    from transformers import AutoModelForSequenceClassification

    out = R.pack(tiny_ckpt, "tiny", out_root=tmp_path / "rel")
    names = {f.name for f in out.iterdir()}
    assert {R.WEIGHTS, R.MANIFEST, R.META, "config.json", "tokenizer.json"} <= names
    assert "model.safetensors" not in names
    meta = json.loads((out / R.META).read_text())
    assert meta["scheme"] == R.SCHEME and len(meta["check_probs"]) == len(R.CHECK_PAIRS)
    target = R.materialize("tiny", target=tmp_path / "inst", root=tmp_path / "rel")
    model = AutoModelForSequenceClassification.from_pretrained(target)   # an ordinary HF model
    assert model.config.id2label[0] == "entailment" and (target / R.HEADS_FILE).is_file()
    # the dequantised model reproduces the recorded probabilities exactly, and stays close to the source
    probs = R.check_outputs(target)
    np.testing.assert_allclose(probs, meta["check_probs"], atol=1e-5)
    np.testing.assert_allclose(probs, R.check_outputs(tiny_ckpt), atol=0.02)
    # deterministic: materialising again gives the same identity
    from tfc import models

    again = R.materialize("tiny", target=tmp_path / "inst2", root=tmp_path / "rel")
    assert models.content_hash(again) == models.content_hash(target)
    assert "sha256:" + models.content_hash(target)[:12] == meta["materialized_identity"]


def test_tampered_missing_or_unlisted_files_are_refused(tiny_ckpt, tmp_path):
    out = R.pack(tiny_ckpt, "tiny", out_root=tmp_path / "rel")
    R.verify(out)
    w = out / R.WEIGHTS
    data = bytearray(w.read_bytes())
    data[-1] ^= 1
    w.write_bytes(bytes(data))
    with pytest.raises(R.ReleaseError, match=R.WEIGHTS):
        R.materialize("tiny", target=tmp_path / "x", root=tmp_path / "rel")
    assert not (tmp_path / "x").exists()
    out = R.pack(tiny_ckpt, "tiny", out_root=tmp_path / "rel")
    (out / "config.json").unlink()
    with pytest.raises(R.ReleaseError, match="config.json"):
        R.verify(out)
    out = R.pack(tiny_ckpt, "tiny", out_root=tmp_path / "rel")
    (out / "extra.bin").write_bytes(b"x")
    with pytest.raises(R.ReleaseError, match="extra.bin"):
        R.verify(out)
    with pytest.raises(R.ReleaseError, match="no MANIFEST"):
        R.verify(tmp_path)


def test_oversize_release_is_refused(tiny_ckpt, tmp_path, monkeypatch):
    monkeypatch.setattr(R, "MAX_BYTES", 1000)
    with pytest.raises(R.ReleaseError, match="over the"):
        R.pack(tiny_ckpt, "tiny", out_root=tmp_path / "rel")
    assert not (tmp_path / "rel" / "tiny").exists()


def test_shipped_releases_verify_and_reproduce_their_recorded_outputs(tmp_path):
    """Every release committed under results/release: manifest and size limit; a model release dequantised
    (its shared tensors restored from its base) reproduces the outputs recorded on the check pairs (class
    probabilities, or a QA reader's span scores)."""
    from tfc.models import resolve

    root = R.release_root()
    folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    assert folders
    for f in folders:
        R.verify(f)
        assert sum(x.stat().st_size for x in f.iterdir()) <= R.MAX_BYTES
        meta = json.loads((f / R.META).read_text())
        if meta["scheme"] == "files":
            assert not (f / R.WEIGHTS).exists() and meta["bytes"] < 1_000_000
            continue
        target = R.materialize(f.name, target=tmp_path / f.name, folder=f, resolver=resolve)
        want = meta["check_outputs"] if "check_outputs" in meta else meta["check_probs"]
        np.testing.assert_allclose(R.check_outputs(target), want, atol=1e-5)


def test_shared_tensors_leave_the_release_and_come_back_from_the_base(tiny_ckpt, tmp_path):
    """A model trained with frozen word embeddings ships without them: packed with share_with, the release drops
    the tensor equal to the base's, and materialising restores it bit for bit (a base with another tensor is
    refused)."""
    import shutil

    from safetensors.torch import load_file, save_file
    from transformers import BertForSequenceClassification

    base = tmp_path / "base"
    shutil.copytree(tiny_ckpt, base)
    child = tmp_path / "child"
    shutil.copytree(tiny_ckpt, child)
    state = load_file(str(child / "model.safetensors"))
    for k in state:
        if "word_embeddings" not in k and state[k].is_floating_point():
            state[k] = state[k] + 0.01            # fine-tuned everywhere but the (frozen) word embeddings
    save_file(state, str(child / "model.safetensors"), metadata={"format": "pt"})
    full = R.pack(child, "full", out_root=tmp_path / "rel")
    lean = R.pack(child, "lean", out_root=tmp_path / "rel", share_with=str(base))
    meta = json.loads((lean / R.META).read_text())
    key = "bert.embeddings.word_embeddings.weight"
    assert list(meta["shared"]) == [key] and meta["shared"][key]["base"] == str(base)
    assert (lean / R.WEIGHTS).stat().st_size < (full / R.WEIGHTS).stat().st_size
    # the shared matrix is exact (not int8), so the outputs move within the quantisation error only
    np.testing.assert_allclose(meta["check_probs"], json.loads((full / R.META).read_text())["check_probs"], atol=1e-3)
    target = R.materialize("lean", target=tmp_path / "inst", root=tmp_path / "rel")
    got = load_file(str(target / "model.safetensors"))
    assert torch.equal(got[key], load_file(str(base / "model.safetensors"))[key])
    BertForSequenceClassification.from_pretrained(target)
    moved = load_file(str(base / "model.safetensors"))
    moved[key] = moved[key] + 1.0
    save_file(moved, str(base / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(R.ReleaseError, match="does not hold the tensor"):
        R.materialize("lean", target=tmp_path / "inst2", root=tmp_path / "rel")
    with pytest.raises(R.ReleaseError, match="nothing to share"):
        R.pack(child, "none", out_root=tmp_path / "rel", share_with=str(base))


def test_a_delta_release_restores_a_fine_tuned_model_far_closer_than_int8_weights(tiny_ckpt, tmp_path):
    """Packed as int8 differences from its base (delta), a model fine-tuned from that base comes back within a
    small fraction of the plain int8 release's error; 1-D tensors come back exactly; a base whose matrix moved
    is refused; a delta release without a base is refused."""
    import shutil

    from safetensors.torch import load_file, save_file

    base = tmp_path / "base"
    shutil.copytree(tiny_ckpt, base)
    child = tmp_path / "child"
    shutil.copytree(tiny_ckpt, child)
    state = load_file(str(child / "model.safetensors"))
    gen = torch.Generator().manual_seed(1)
    for k in state:
        if "word_embeddings" not in k and state[k].is_floating_point():
            state[k] = state[k] + 1e-3 * torch.randn(state[k].shape, generator=gen)
    save_file(state, str(child / "model.safetensors"), metadata={"format": "pt"})
    plain = R.pack(child, "plain", out_root=tmp_path / "rel", share_with=str(base))
    delta = R.pack(child, "delta", out_root=tmp_path / "rel", share_with=str(base), delta=True)
    meta = json.loads((delta / R.META).read_text())
    assert meta["scheme"] == R.DELTA_SCHEME and "bert.encoder.layer.0.attention.self.query.weight" in meta["delta"]
    err = {}
    for name in ("plain", "delta"):
        got = load_file(str(R.materialize(name, target=tmp_path / f"inst-{name}", root=tmp_path / "rel")
                            / "model.safetensors"))
        err[name] = max(float((got[k] - v).abs().max()) for k, v in state.items() if v.is_floating_point())
        if name == "delta":
            assert all(torch.equal(got[k], v) for k, v in state.items() if v.dim() == 1 and v.is_floating_point())
    assert err["delta"] < err["plain"] / 20, err
    moved = load_file(str(base / "model.safetensors"))
    qkey = "bert.encoder.layer.0.attention.self.query.weight"
    moved[qkey] = moved[qkey] + 1.0
    save_file(moved, str(base / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(R.ReleaseError, match="does not hold the tensor"):
        R.materialize("delta", target=tmp_path / "inst3", root=tmp_path / "rel")
    with pytest.raises(R.ReleaseError, match="needs a base"):
        R.pack(child, "nobase", out_root=tmp_path / "rel", delta=True)


def test_a_qa_reader_release_records_its_best_spans(tmp_path):
    from tfc.train.qa import make_tiny_qa

    ckpt = make_tiny_qa(tmp_path / "qa")
    out = R.pack(ckpt, "reader", out_root=tmp_path / "rel")
    meta = json.loads((out / R.META).read_text())
    assert R.is_reader(ckpt) and "check_probs" not in meta and len(meta["check_outputs"]) == len(R.CHECK_PAIRS)
    target = R.materialize("reader", target=tmp_path / "inst", root=tmp_path / "rel")
    assert R.check_outputs(target) == meta["check_outputs"]


def test_an_install_from_an_earlier_release_is_replaced(tmp_path, monkeypatch):
    """A shipped release that changed (a new materialized identity) is reinstalled on the next use; a directory
    without release metadata (a checkpoint trained here) is left alone."""
    from tfc import models

    monkeypatch.setattr(R, "release_root", lambda: tmp_path / "rel")
    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "art"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "conv.json").write_text('{"v": 1}')
    R.pack_files(src, "thing")
    first = Path(models.resolve("tfc/thing"))
    assert json.loads((first / "conv.json").read_text()) == {"v": 1}
    (src / "conv.json").write_text('{"v": 2}')
    R.pack_files(src, "thing")
    assert json.loads((Path(models.resolve("tfc/thing")) / "conv.json").read_text()) == {"v": 2}
    (tmp_path / "art" / "mine").mkdir()
    (tmp_path / "art" / "mine" / "config.json").write_text("{}")
    assert models.resolve("tfc/mine") == str(tmp_path / "art" / "mine")


def test_group_wise_quantisation_bounds_each_weight_by_its_groups_step_and_beats_per_row_on_an_outlier_column():
    """A matrix whose column 5 is 50 times larger than the rest: per row, that column sets every weight's step; in
    groups of 32 columns, only its own group's. Every weight is within half its group's step (never more than half
    its row's), and the weights away from the outlier come back many times closer. Columns not a multiple of the
    group size, an all-zero group and the scheme name's group size round-trip too."""
    torch.manual_seed(3)
    w = torch.randn(16, 200) * 1e-3
    w[:, 5] *= 50
    w[3, 64:96] = 0.0
    row = R.dequantize_matrix(**R.quantize_matrix(w))
    packed = R.quantize_matrix(w, group_size=32)
    assert packed["q"].dtype == torch.int8 and packed["gscale"].shape == (16, 7)
    assert packed["gscale"].dtype == torch.float16 and float(packed["gscale"].max()) <= 1.0
    grp = R.dequantize_matrix(**packed, group_size=32)
    err_row, err_grp = (row - w).abs(), (grp - w).abs()
    row_step = w.abs().amax(dim=1, keepdim=True) / 127
    g = R._groups(w, 32)
    grp_step = (g.abs().amax(dim=2, keepdim=True) / 127).expand_as(g).reshape(16, -1)[:, :200]
    assert bool((err_grp <= grp_step / 2 * (1 + 1e-3) + 1e-12).all())
    assert bool((err_grp <= row_step / 2 + 1e-9).all())
    assert torch.equal(grp[3, 64:96], torch.zeros(32))
    away = torch.ones(200, dtype=torch.bool)
    away[:32] = False
    assert float(err_grp[:, away].mean()) < float(err_row[:, away].mean()) / 10
    assert float((grp - w).norm()) < float((row - w).norm()) / 2
    with pytest.raises(R.ReleaseError, match="group size"):
        R.dequantize_matrix(**packed)
    assert R.scheme_group_size(R.group_scheme(32)) == 32 == R.scheme_group_size("int8-delta-group32-absmax")
    assert R.scheme_group_size(R.DELTA_SCHEME) is None and R.scheme_group_size(R.SCHEME) is None


def test_group_state_keeps_small_matrices_and_vectors_in_fp32():
    torch.manual_seed(4)
    state = {"big": torch.randn(300, 256), "head": torch.randn(2, 64), "b": torch.randn(64), "ids": torch.arange(3)}
    q = R.quantize_state(state, group_size=64)
    assert set(q) == {"big.q", "big.scale", "big.gscale", "head.f32", "b.f32", "ids"}
    back = R.dequantize_state(q, group_size=64)
    assert torch.equal(back["head"], state["head"]) and torch.equal(back["b"], state["b"])
    assert torch.equal(back["ids"], state["ids"])
    assert float((back["big"] - state["big"]).abs().max()) < float(state["big"].abs().max()) / 127
    # the per-row scheme's tensors read as before (no group size needed)
    old = R.quantize_state(state, vectors_fp32=True)
    assert "big.gscale" not in old and "head.q" in old
    assert torch.equal(R.dequantize_state(old)["big"], R.dequantize_state(old, group_size=64)["big"])


@pytest.fixture(scope="module")
def fine_tuned(tiny_ckpt, tmp_path_factory):
    """A base (the tiny classifier) and a child fine-tuned from it, one input column of every matrix moved 30 times
    more than the rest (the outlier that coarsens a per-row step)."""
    import shutil

    from safetensors.torch import load_file, save_file

    root = tmp_path_factory.mktemp("fine_tuned")
    base, child = root / "base", root / "child"
    shutil.copytree(tiny_ckpt, base)
    shutil.copytree(tiny_ckpt, child)
    state = load_file(str(child / "model.safetensors"))
    gen = torch.Generator().manual_seed(2)
    for k in state:
        if "word_embeddings" not in k and state[k].is_floating_point():
            d = 1e-3 * torch.randn(state[k].shape, generator=gen)
            if d.dim() == 2:
                d[:, 0] *= 30
            state[k] = state[k] + d
    save_file(state, str(child / "model.safetensors"), metadata={"format": "pt"})
    return base, child, state


def test_a_group_delta_release_round_trips_closer_than_per_row_and_old_releases_still_load(fine_tuned, tmp_path,
                                                                                         monkeypatch):
    from safetensors import safe_open
    from safetensors.torch import load_file

    base, child, state = fine_tuned
    monkeypatch.setattr(R, "SMALL_MATRIX", 256)     # the tiny model's 32 x 32 matrices are quantised, its heads not
    rel = tmp_path / "rel"
    row = R.pack(child, "row", out_root=rel, share_with=str(base), delta=True)
    grp = R.pack(child, "grp", out_root=rel, share_with=str(base), delta=True, group_size=16)
    meta = {n: json.loads((rel / n / R.META).read_text()) for n in ("row", "grp")}
    assert meta["row"]["scheme"] == R.DELTA_SCHEME == "int8-delta-per-row-absmax"
    assert meta["grp"]["scheme"] == "int8-delta-group16-absmax"
    assert set(meta["grp"]["delta"]) == set(meta["row"]["delta"])
    err = {}
    for name, folder in (("row", row), ("grp", grp)):
        got = load_file(str(R.materialize(name, target=tmp_path / f"inst-{name}", root=rel) / "model.safetensors"))
        # away from the outlier's group (columns 16 on), where per row its step coarsens every weight
        err[name] = sum(float((got[k] - v)[:, 16:].pow(2).sum()) for k, v in state.items() if v.dim() == 2) ** 0.5
        probs = R.check_outputs(tmp_path / f"inst-{name}")
        np.testing.assert_allclose(probs, meta[name]["check_probs"], atol=1e-5)
        np.testing.assert_allclose(probs, R.check_outputs(child), atol=1e-3)
        if name == "grp":       # the classifier head (3 x 32) and the token-type embeddings come back exactly
            small = [k for k, v in state.items() if v.dim() == 2 and v.numel() <= R.SMALL_MATRIX]
            assert "classifier.weight" in small and all(torch.allclose(got[k], state[k], rtol=0, atol=1e-7)
                                                        for k in small)
    assert err["grp"] < err["row"] / 5, err
    assert (grp / R.WEIGHTS).stat().st_size > (row / R.WEIGHTS).stat().st_size
    with safe_open(str(grp / R.WEIGHTS), "pt") as fh:
        keys = set(fh.keys())
    assert "bert.encoder.layer.0.attention.self.query.weight.gscale" in keys and "classifier.weight.f32" in keys


def test_a_tampered_group_delta_release_is_refused(fine_tuned, tmp_path):
    base, child, _ = fine_tuned
    out = R.pack(child, "grp", out_root=tmp_path / "rel", share_with=str(base), delta=True, group_size=16)
    R.verify(out)
    meta = json.loads((out / R.META).read_text())
    meta["scheme"] = R.DELTA_SCHEME       # read as per-row: the manifest catches the edit first
    (out / R.META).write_text(json.dumps(meta))
    with pytest.raises(R.ReleaseError, match=R.META):
        R.materialize("grp", target=tmp_path / "x", root=tmp_path / "rel")
    out = R.pack(child, "grp", out_root=tmp_path / "rel", share_with=str(base), delta=True, group_size=16)
    data = bytearray((out / R.WEIGHTS).read_bytes())
    data[len(data) // 2] ^= 1
    (out / R.WEIGHTS).write_bytes(bytes(data))
    with pytest.raises(R.ReleaseError, match=R.WEIGHTS):
        R.materialize("grp", target=tmp_path / "y", root=tmp_path / "rel")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


@pytest.mark.parametrize("kw", [{"group_size": 16}, {"group_size": 0, "delta": True}])
def test_a_group_size_needs_a_delta_release(fine_tuned, tmp_path, kw):
    base, child, _ = fine_tuned
    with pytest.raises(R.ReleaseError, match="group size"):
        R.pack(child, "bad", out_root=tmp_path / "rel", share_with=str(base), **kw)


def test_the_cli_packs_a_group_delta_release(fine_tuned, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from tfc.cli import main

    base, child, _ = fine_tuned
    monkeypatch.setattr(R, "release_root", lambda: tmp_path / "rel")
    run = CliRunner().invoke(main, ["models", "release", "pack", str(child), "--name", "c", "--share-with", str(base),
                                    "--delta", "--group-size", "16"])
    assert run.exit_code == 0, run.output
    assert json.loads((tmp_path / "rel" / "c" / R.META).read_text())["scheme"] == "int8-delta-group16-absmax"
    bad = CliRunner().invoke(main, ["models", "release", "pack", str(child), "--name", "d", "--group-size", "16"])
    assert bad.exit_code == 2 and "--delta" in bad.output
