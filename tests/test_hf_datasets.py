"""Hugging Face ``datasets``: ``tfc.data.load(name, as_hf=True)``, ``tfc data export`` and reading back."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

datasets = pytest.importorskip("datasets")

import tfc.data as D  # noqa: E402
from tfc.cli import main  # noqa: E402
from tfc.data.hf import from_hf, to_hf  # noqa: E402

SMALL = "q2"   # ~1,100 rows, one split: quick to build and export


def _meta_equal(a, b) -> bool:
    """Dict equality where NaN equals NaN (JSON keeps NaN; nan != nan in Python)."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def synthetic() -> pd.DataFrame:
    return pd.DataFrame({
        "id": ["a-1", "a-2", "b/3", "007"],
        "dataset": ["toy"] * 4,
        "split": ["dev", "dev", "test", "test"],
        "grounding": ["Zürich café ☕", "مرحبا", "", "line\nbreak\ttab \x00nul"],
        "generated": ["東京", "🐈 cat", " ", "«quoted» \"double\""],
        "label": [1, 0, 1, 0],
        "meta": [{"n": 1, "x": [1, 2]}, {}, {"nested": {"k": "v"}, "f": math.nan}, {"s": "ü"}],
        "label3": [0, 2, 0, 1],
    })


def test_to_hf_from_hf_exact():
    df = synthetic()
    ds = to_hf(df)
    assert isinstance(ds, datasets.Dataset)
    assert ds.column_names == D.SCHEMA + ["label3"]
    assert ds.features["meta"] == datasets.Value("string") and ds.features["label"] == datasets.Value("int64")
    assert ds.features["id"] == datasets.Value("string")
    back = from_hf(ds)
    for c in ("id", "dataset", "split", "grounding", "generated"):
        assert back[c].tolist() == df[c].tolist(), c
    assert back["label"].tolist() == df["label"].tolist() and back["label3"].tolist() == df["label3"].tolist()
    assert all(_meta_equal(a, b) for a, b in zip(back["meta"], df["meta"]))
    assert json.loads(ds[0]["meta"]) == {"n": 1, "x": [1, 2]}
    with pytest.raises(ValueError, match="missing column"):
        to_hf(df.drop(columns=["label"]))


def test_load_as_hf_round_trip(data_dir):
    df = D.load(SMALL)
    ds = D.load(SMALL, as_hf=True)
    assert isinstance(ds, datasets.Dataset) and len(ds) == len(df)
    assert ds.column_names[:7] == D.SCHEMA
    assert ds["id"] == df["id"].tolist()
    assert ds["label"] == df["label"].astype(int).tolist()
    assert ds["grounding"] == df["grounding"].tolist() and ds["generated"] == df["generated"].tolist()
    assert all(_meta_equal(json.loads(m), d) for m, d in zip(ds["meta"], df["meta"]))
    sub = D.load(SMALL, sample=20, seed=1, as_hf=True)
    assert sub["id"] == D.load(SMALL, sample=20, seed=1)["id"].tolist()


@pytest.mark.parametrize("fmt", ["hf", "parquet", "jsonl"])
def test_export_and_read_back(fmt, data_dir, tmp_path):
    out = tmp_path / f"export-{fmt}"
    r = CliRunner().invoke(main, ["data", "export", SMALL, "--format", fmt, "--out", str(out), "--sample", "40"])
    assert r.exit_code == 0, r.output
    want = D.load(SMALL, sample=40)
    if fmt == "hf":
        dd = datasets.load_from_disk(str(out))
    else:
        dd = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))
    assert isinstance(dd, datasets.DatasetDict)
    assert list(dd) == list(dict.fromkeys(want["split"]))
    got = pd.concat([from_hf(dd[s]) for s in dd], ignore_index=True)
    assert got["id"].tolist() == want["id"].tolist()
    assert got["label"].tolist() == want["label"].astype(int).tolist()
    assert got["grounding"].tolist() == want["grounding"].tolist()
    assert got["generated"].tolist() == want["generated"].tolist()
    assert all(_meta_equal(a, b) for a, b in zip(got["meta"], want["meta"]))
    ds = next(iter(dd.values()))
    assert ds.features["meta"] == datasets.Value("string") and ds.features["label"] == datasets.Value("int64")
    # an existing directory is refused, and left as it was
    files = sorted(p.relative_to(out) for p in out.rglob("*"))
    r = CliRunner().invoke(main, ["data", "export", SMALL, "--format", fmt, "--out", str(out)])
    assert r.exit_code != 0 and "exists" in r.output and "--overwrite" in r.output
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == files
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []   # no temporary left


def test_export_overwrite_and_errors(data_dir, tmp_path):
    out = tmp_path / "x"
    out.mkdir()
    (out / "old.txt").write_text("old")
    r = CliRunner().invoke(main, ["data", "export", SMALL, "--out", str(out), "--sample", "10", "--overwrite"])
    assert r.exit_code == 0, r.output
    assert not (out / "old.txt").exists() and len(datasets.load_from_disk(str(out))["dev"]) == 10
    r = CliRunner().invoke(main, ["data", "export", "no-such-set", "--out", str(tmp_path / "y")])
    assert r.exit_code != 0 and "unknown dataset" in r.output and not (tmp_path / "y").exists()
    r = CliRunner().invoke(main, ["data", "export", SMALL, "--out", str(tmp_path / "no" / "y")])
    assert r.exit_code != 0 and "does not exist" in r.output
    r = CliRunner().invoke(main, ["data", "export", SMALL, "--format", "csv", "--out", str(tmp_path / "z")])
    assert r.exit_code != 0 and not (tmp_path / "z").exists()


def test_score_an_exported_datasets_directory(data_dir, tmp_path, tmp_cache):
    out = tmp_path / "hf"
    assert CliRunner().invoke(main, ["data", "export", SMALL, "--out", str(out), "--sample", "24"]).exit_code == 0
    scored = tmp_path / "scored.parquet"
    r = CliRunner().invoke(main, ["score", "--input", str(out), "-s", "f1", "-o", str(scored), "--no-progress"])
    assert r.exit_code == 0, r.output
    got = pd.read_parquet(scored)
    want = D.load(SMALL, sample=24)
    assert got["id"].tolist() == want["id"].tolist() and np.isfinite(got["f1"]).all()
    r = CliRunner().invoke(main, ["evaluate", "--input", str(scored), "--label-col", "label", "--json",
                                  "--n-boot", "200"])
    assert r.exit_code == 0, r.output
    assert [s["column"] for s in json.loads(r.output)["scores"]] == ["f1"]
