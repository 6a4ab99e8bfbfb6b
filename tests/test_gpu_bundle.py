"""`tfc gpu`: the bundle that goes to a GPU machine and the export that comes back (tfc.runs.gpu), on a CPU
with a tiny model."""
from __future__ import annotations

import json
import tarfile

import pytest

torch = pytest.importorskip("torch")
from safetensors.torch import load_file  # noqa: E402

from tfc import config, models  # noqa: E402
from tfc.models.tiny import make_tiny_classifier  # noqa: E402
from tfc.runs import gpu as G  # noqa: E402


@pytest.fixture()
def dirs(tmp_path, monkeypatch):
    """Artifacts, cache and records of a 'GPU job' under tmp_path (what job_env sets there)."""
    env = G.job_env(tmp_path / "work")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return tmp_path


def _bundle(tmp_path, tiny):
    """A minimal bundle: the tiny model as base, one data file, an empty mix folder."""
    b = tmp_path / "bundle"
    b.mkdir()
    meta = G._pack_base(str(tiny), b / G.BASE_DIR)
    (tmp_path / "mirror" / "true").mkdir(parents=True)
    (tmp_path / "mirror" / "true" / "x.csv").write_text("id,label\n1,0\n")
    with tarfile.open(b / G.DATA_TAR, "w:xz") as tar:
        tar.add(tmp_path / "mirror" / "true" / "x.csv", arcname="true/x.csv")
    (b / G.MIX_DIR).mkdir()
    (b / G.DEV_DIR).mkdir()
    G._manifest(b, {"format": G.BUNDLE_FORMAT, "variants": {}, **meta})
    return b


def test_bundle_round_trip_restores_the_base_within_int8_error(tmp_path):
    tiny = make_tiny_classifier(tmp_path / "tiny", hidden=32)
    b = _bundle(tmp_path, tiny)
    man = G.open_bundle(b, tmp_path / "work")
    base = tmp_path / "work" / "base"
    assert man["paths"]["base"] == str(base)
    assert (tmp_path / "work" / "data" / "true" / "x.csv").read_text() == "id,label\n1,0\n"
    orig, back = load_file(tiny / "model.safetensors"), load_file(base / "model.safetensors")
    assert set(orig) == set(back)
    for k, w in orig.items():
        assert back[k].dtype == torch.float32
        if w.dim() == 2:   # int8 per row: error at most half a step of that row's scale
            step = w.abs().amax(dim=1, keepdim=True) / 127
            assert ((back[k] - w).abs() <= step / 2 + 1e-7).all(), k
        else:              # vectors travel in fp16
            assert torch.allclose(back[k], w.to(torch.float16).float()), k
    assert json.loads((base / "config.json").read_text())["hidden_size"] == 32
    # the restored base loads as an ordinary HF model
    from transformers import AutoModelForSequenceClassification

    AutoModelForSequenceClassification.from_pretrained(base)


def test_a_tampered_or_missing_bundle_file_is_refused_by_name(tmp_path):
    b = _bundle(tmp_path, make_tiny_classifier(tmp_path / "tiny"))
    with open(b / G.DATA_TAR, "ab") as fh:
        fh.write(b"x")
    with pytest.raises(ValueError, match="data.tar.xz"):
        G.open_bundle(b, tmp_path / "work")
    (b / G.DATA_TAR).unlink()
    with pytest.raises(FileNotFoundError, match="data.tar.xz"):
        G.verify(b)
    with pytest.raises(FileNotFoundError, match="MANIFEST"):
        G.verify(tmp_path / "tiny")


def _trained(dirs, name="sent-minilm-v6"):
    """A 'trained' tiny checkpoint with a record and one cache folder, where a GPU job leaves them."""
    ck = make_tiny_classifier(config.artifacts_dir() / name)
    (ck / "training_summary.json").write_text(json.dumps({"name": name}))
    rec = config.model_records_dir() / name
    rec.mkdir(parents=True)
    (rec / "identity.json").write_text(json.dumps({"identity": models.identity(f"tfc/{name}")}))
    (rec / "scoring_runs.json.lock").write_text("")
    cache = config.cache_dir() / f"summac-zs.{name}-sent-sent.0123456789" / "paws"
    cache.mkdir(parents=True)
    (cache / "dev.parquet").write_bytes(b"PAR1 scores")
    (cache / "dev.json").write_text("{}")
    (config.cache_dir() / "rougeL.abc" / "paws").mkdir(parents=True)   # another scorer: not exported
    return ck


def test_export_and_unpack_round_trip_in_several_parts(dirs, monkeypatch):
    ck = _trained(dirs)
    monkeypatch.setattr(G, "PART_BYTES", 50_000)
    out = G.export_variant("sent-minilm-v6", dirs / "work")
    parts = sorted(out.glob("*.weights.part*"))
    assert len(parts) > 1 and all(p.stat().st_size <= 50_000 for p in parts)
    with tarfile.open(out / "sent-minilm-v6.files.tar.xz") as tar:
        names = tar.getnames()
    assert "results/models/sent-minilm-v6/identity.json" in names
    assert not any(n.endswith(".lock") or "rougeL" in n for n in names)
    repo = dirs / "clone"
    res = G.unpack(out, repo=repo)
    assert res["identity"] == models.identity("tfc/sent-minilm-v6")
    assert (repo / "artifacts/sent-minilm-v6/model.safetensors").read_bytes() == (ck / "model.safetensors").read_bytes()
    assert (repo / "results/scores/summac-zs.sent-minilm-v6-sent-sent.0123456789/paws/dev.parquet").is_file()
    assert not (repo / "artifacts" / ".sent-minilm-v6.unpacking").exists()
    assert G.unpack(out, repo=repo)["files"] == res["files"]     # the same export again: idempotent


def test_unpack_refuses_a_changed_part_and_a_clashing_cache_file(dirs):
    _trained(dirs)
    out = G.export_variant("sent-minilm-v6", dirs / "work")
    repo = dirs / "clone"
    clash = repo / "results/scores/summac-zs.sent-minilm-v6-sent-sent.0123456789/paws/dev.parquet"
    clash.parent.mkdir(parents=True)
    clash.write_bytes(b"other scores")
    with pytest.raises(FileExistsError, match="dev.parquet"):
        G.unpack(out, repo=repo)
    assert clash.read_bytes() == b"other scores"                    # never overwritten
    assert not (repo / "artifacts" / "sent-minilm-v6").exists()     # nothing placed
    part = next(out.glob("*.weights.part0"))
    part.write_bytes(part.read_bytes()[:-1] + b"\0")
    with pytest.raises(ValueError, match="part0"):
        G.unpack(out, repo=repo)


def test_weights_too_large_to_bring_back_are_left_out_and_the_scores_still_unpack(dirs, monkeypatch):
    _trained(dirs)
    monkeypatch.setattr(G, "PART_BYTES", 1_000)          # the tiny model's weights no longer fit in 4 parts
    out = G.export_variant("sent-minilm-v6", dirs / "work")
    man = G.verify(out)
    assert man["weights"]["exported"] is False and not list(out.glob("*.weights.part*"))
    repo = dirs / "clone"
    res = G.unpack(out, repo=repo)
    assert res["weights"] == "not exported" and res["identity"] == models.identity("tfc/sent-minilm-v6")
    assert (repo / "results/scores/summac-zs.sent-minilm-v6-sent-sent.0123456789/paws/dev.parquet").is_file()
    assert (repo / "results/models/sent-minilm-v6/identity.json").is_file()
    assert not (repo / "artifacts" / "sent-minilm-v6").exists()    # a card without weights is not placed as a model
    # a record whose identity differs from the export's is refused, and nothing new is placed
    man["identity"] = "sha256:000000000000"
    (out / G.MANIFEST).write_text(json.dumps(man))
    with pytest.raises(ValueError, match="identity"):
        G.unpack(out, repo=dirs / "clone2")
    assert not (dirs / "clone2" / "results").exists()


def test_a_bundle_carries_one_base():
    assert G.variants_base(["sent-minilm-v6", "sent-minilm-v8"]) == "minilm"
    assert G.variants_base(["sent-mpnet-v10"]) == "mpnet"
    with pytest.raises(ValueError, match="different bases"):
        G.variants_base(["sent-minilm-v8", "sent-mpnet-v10"])


def test_unpack_refuses_a_tar_member_outside_its_folders(tmp_path):
    bad = tmp_path / "bad.tar"
    (tmp_path / "f").write_text("x")
    with tarfile.open(bad, "w") as tar:
        tar.add(tmp_path / "f", arcname="../outside")
        tar.add(tmp_path / "f", arcname="tfc/config.py")
    with tarfile.open(bad) as tar, pytest.raises(ValueError, match="outside"):
        list(G._safe_members(tar))


def test_plan_names_and_unknown_variants():
    assert G.plan_names("sent-minilm-v8") == ["sent8-true", "sent8-true-chosen", "sent8-summac"]
    with pytest.raises(KeyError):
        G.plan_names("sent-minilm-v99")
    with pytest.raises(KeyError, match="unknown variant"):
        G.pack(variants=["nope"])


def test_raw_files_closes_over_files_a_builder_reads_beyond_its_registered_ones():
    from tfc.data.manifest import raw_path

    try:
        raw_path("qags/mturk_xsum.jsonl")
        raw_path("true/true_label_vectors_from_scale_score.json")
    except FileNotFoundError:
        pytest.skip("the data mirror lacks QAGS-XSum")
    got = G.raw_files(["qags_xsum"])
    # registered: the QAGS file; reached for while building: TRUE's label vectors
    assert got[0] == "qags/mturk_xsum.jsonl"
    assert "true/true_label_vectors_from_scale_score.json" in got


def test_the_job_refuses_to_start_without_spacy(tmp_path, monkeypatch):
    import tfc.text.sentences as T

    monkeypatch.setattr(T, "spacy_available", lambda: False)
    with pytest.raises(RuntimeError, match="rule splitter"):
        G.job(tmp_path / "no-bundle", tmp_path / "work")
    with pytest.raises(FileNotFoundError, match="MANIFEST"):        # allowed: it gets as far as the bundle
        G.job(tmp_path / "no-bundle", tmp_path / "work", allow_rule_splitter=True)


def test_the_job_leaves_the_process_environment_as_it_found_it(tmp_path):
    import os

    before = {k: os.environ.get(k) for k in G.job_env(tmp_path)}
    with pytest.raises(FileNotFoundError):
        G.job(tmp_path / "no-bundle", tmp_path / "work", allow_rule_splitter=True)
    assert {k: os.environ.get(k) for k in before} == before


def test_the_mpnet_base_resolves_to_its_assembled_folder_or_says_how_to_build_it(tmp_path, monkeypatch):
    from tfc.train.base_encoders import resolve_base

    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="fetch_mpnet.sh"):
        resolve_base("mpnet")
    folder = tmp_path / "bases" / "all-mpnet-base-v2"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    assert resolve_base("mpnet") == str(folder)
    assert resolve_base("some/hub-id") == "some/hub-id"
