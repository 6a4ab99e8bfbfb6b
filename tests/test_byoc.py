"""Bring your own checkpoint: the demo scorer, the demo checkpoint, `make chapter`, and a smoke run of
the 07_byoc chapter with a tiny local checkpoint passed on the command line."""
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from tfc import scorers
from tfc.book.chapters import byoc

ROOT = Path(__file__).resolve().parent.parent


def test_word_overlap_values_and_registration(monkeypatch):
    monkeypatch.setattr(scorers, "_REGISTRY", dict(scorers._REGISTRY))    # the registration stays in this test
    s = byoc.WordOverlap()
    # "The cat sat." -> the, cat, sat all in the grounding; "A dog sat" -> only "sat" of 3 words
    got = s.score(["The cat sat on the mat.", "The cat sat on the mat.", "x"], ["The cat sat.", "A dog sat", "   "],
                  progress=False)
    np.testing.assert_allclose(got, [1.0, 1 / 3, 0.0])
    assert byoc.WordOverlap(lowercase=False).score(["the cat"], ["The cat"], progress=False)[0] == 0.5
    assert byoc.register_demo() == "word-overlap"
    assert "word-overlap" in scorers.names()
    assert scorers.get("word-overlap").signature == s.signature
    assert scorers.get("word-overlap", lowercase=False).signature != s.signature
    with pytest.raises(TypeError):
        s.score(["a"], [None])


def test_commands_name_the_checkpoint():
    c = byoc.commands("02_true_auc", "org/model", "cuda")
    assert list(c["with"]) == ["papermill", "make", "tfc"]
    assert c["command"].str.contains("org/model").all() and c["command"].str.contains("02_true_auc").all()


def test_make_chapter_passes_checkpoint_and_device():
    out = subprocess.run(["make", "-n", "chapter", "NB=07_byoc", "CHECKPOINT=/x/my-ckpt", "DEVICE=cuda"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60).stdout
    assert "--only 07_byoc" in out and "--checkpoint /x/my-ckpt" in out and "--device cuda" in out
    assert "book build" in out
    bad = subprocess.run(["make", "chapter"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "usage: make chapter NB=" in bad.stdout + bad.stderr


def test_score_with_checkpoint_bad_n():
    with pytest.raises(ValueError):
        byoc.score_with_checkpoint("whatever", n=1)


@pytest.mark.slow
def test_byoc_chapter_smoke_with_a_tiny_checkpoint(tmp_path, data_dir, tmp_cache):
    """`tfc book run --mode smoke --only 07_byoc --checkpoint <tiny dir>`: the checkpoint reaches the scorer
    (its directory name and content hash are in the signature the chapter prints) and nothing is cached."""
    ckpt = byoc.demo_checkpoint(tmp_path / "my-tiny-nli", seed=3)
    want = scorers.get("nli", preset="as-published", checkpoint=str(ckpt)).signature
    assert want.startswith("nli.my-tiny-nli-doc.")
    out_dir = tmp_path / "generated"
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, "-m", "tfc.cli", "book", "run", "--mode", "smoke", "--only", "07_byoc",
                        "--checkpoint", str(ckpt), "--output-dir", str(out_dir)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    nb = nbformat.read(out_dir / "07_byoc.ipynb", as_version=4)
    text = "\n".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
                     for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert f"signature: {want}" in text
    assert "Traceback" not in text and "Error" not in text
    assert not tmp_cache.exists() or not any(tmp_cache.rglob("*.parquet"))
