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
