"""Committed records of in-house checkpoints: signatures of committed scores without the weights."""
import json

import pytest

from tfc import models


def test_identity_falls_back_to_committed_record(tmp_path, monkeypatch):
    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "artifacts"))
    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path / "records"))
    with pytest.raises(FileNotFoundError):
        models.identity("tfc/foo")           # neither weights nor record
    (tmp_path / "records" / "foo").mkdir(parents=True)
    (tmp_path / "records" / "foo" / "identity.json").write_text(json.dumps({"identity": "sha256:abc123abc123"}))
    assert models.identity("tfc/foo") == "sha256:abc123abc123"
    with pytest.raises(FileNotFoundError):
        models.resolve("tfc/foo")             # loading still needs the weights


def test_installed_weights_win_and_records_do_not_change_identity(tmp_path, monkeypatch):
    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "artifacts"))
    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path / "records"))
    d = tmp_path / "artifacts" / "foo"
    d.mkdir(parents=True)
    (d / "config.json").write_text('{"a": 1}')
    (d / "model.safetensors").write_bytes(b"weights")
    (tmp_path / "records" / "foo").mkdir(parents=True)
    (tmp_path / "records" / "foo" / "identity.json").write_text(json.dumps({"identity": "sha256:stale"}))
    first = models.identity("tfc/foo")
    assert first.startswith("sha256:") and first != "sha256:stale"
    (d / "training_summary.json").write_text('{"eval": 0.7}')   # a record, not the model
    (d / "README.md").write_text("card")
    assert models.identity("tfc/foo") == first
    (d / "model.safetensors").write_bytes(b"other weights")
    assert models.identity("tfc/foo") != first


def test_missing_checkpoint_names_how_to_rebuild_it_and_what_ships(tmp_path, monkeypatch):
    """A ``tfc/<name>`` that is neither trained here nor shipped is refused with its record's rebuild note and the
    shipped releases; `tfc score` shows that message without a traceback."""
    from click.testing import CliRunner

    from tfc.cli import main

    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "artifacts"))
    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path / "records"))
    monkeypatch.setenv("TFC_CACHE_DIR", str(tmp_path / "cache"))      # never the committed score cache
    (tmp_path / "records" / "foo").mkdir(parents=True)
    (tmp_path / "records" / "foo" / "identity.json").write_text(json.dumps(
        {"identity": "sha256:abc123abc123", "note": "identity of ...; retrain it with `tfc train foo`"}))
    with pytest.raises(models.CheckpointNotFoundError, match=r"retrain it with `tfc train foo`.*Shipped .*tfc/sent-minilm-v8-int8"):
        models.resolve("tfc/foo")
    with pytest.raises(models.CheckpointNotFoundError, match="train it with `tfc train`"):
        models.resolve("tfc/bar")              # no record either
    with pytest.raises(FileNotFoundError, match="does not exist"):
        models.resolve(str(tmp_path / "nowhere"))
    src = tmp_path / "in.jsonl"
    src.write_text('{"grounding": "A cat sat.", "generated": "A cat sat."}\n')
    r = CliRunner().invoke(main, ["score", "-s", "nli", "-c", "tfc/foo", "-i", str(src), "-o", str(tmp_path / "o.jsonl")])
    assert r.exit_code == 1 and "Error: in-house checkpoint 'tfc/foo'" in r.output
    assert "Traceback" not in r.output and not (tmp_path / "o.jsonl").exists()
