"""Faults: a killed scoring run resumes from its cache parts; damaged cache files,
changed or missing data files, wrong label orders, missing checkpoints and an absent GPU each give a
clear error naming the culprit; scores are the same across runs and batch sizes.

Parametrised over the registry where the fault concerns a scorer, so later scorers are covered too.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tfc.results.dataset as RD
import tfc.scorers as S
from tfc.cache import CacheCorruptError, CacheMismatchError, ScoreCache
from tfc.models import LabelOrderError
from tfc.models.tiny import make_tiny_classifier

ROOT = Path(__file__).resolve().parents[1]
IDS = [f"toy/dev/{i:06d}" for i in range(12)]
G = [f"the cat number {i} sat on the mat. the dog ran to the house." for i in range(12)]
H = [f"the cat {i} sat." for i in range(12)]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(make_tiny_classifier(tmp_path_factory.mktemp("faults") / "tiny", seed=5))


def _model_scorers():
    """Registered scorers whose config names a checkpoint (the model scorers)."""
    out = []
    for n in S.names():
        cls = S._cls(S._REGISTRY[n][0])
        if "checkpoint" in cls.config_cls.__dataclass_fields__:
            out.append(n)
    return out


MODEL_SCORERS = _model_scorers()
QGQA = {"q2", "qags"}     # `checkpoint` is their extractive QA model (a tiny one below); Q² adds a tiny NLI model


@pytest.fixture(scope="module")
def tiny_qa(tmp_path_factory):
    from tfc.train.qa import make_tiny_qa

    return str(make_tiny_qa(tmp_path_factory.mktemp("faults-qa") / "qa", seed=5))


def _kw(name, tiny, tiny_qa):
    """Overrides that build ``name`` on the tiny checkpoints."""
    if name in QGQA:
        return {"checkpoint": tiny_qa, **({"nli_checkpoint": tiny} if name == "q2" else {})}
    return {"checkpoint": tiny}


# ------------------------------------------------------------------------------- killed run resumes
KILLER = textwrap.dedent("""
    import os, signal, sys
    import tfc.scorers as S
    from tfc.cache import ScoreCache
    ids, g, h = {ids!r}, {g!r}, {h!r}

    class DiesAtThirdChunk:
        def __init__(self):
            self.inner, self.calls = S.get("f1"), 0
            self.config, self.signature = self.inner.config, self.inner.signature
        def score(self, a, b, batch_size=None, progress=True):
            self.calls += 1
            if self.calls == 3:                      # two parts are on disk: die like a kill -9 would
                os.kill(os.getpid(), signal.SIGKILL)
            return self.inner.score(a, b, progress=False)
        def last_aux(self):
            return {{}}
        def describe(self):
            return self.inner.describe()

    sc = DiesAtThirdChunk()
    ScoreCache(sc.signature, "toy", "dev").compute(sc, ids, g, h, chunk_size=4, progress=False)
""")


class Counting:
    def __init__(self, inner):
        self.inner, self.rows = inner, []
        self.config, self.signature = inner.config, inner.signature

    def score(self, g, h, batch_size=None, progress=True):
        self.rows += list(g)
        return self.inner.score(g, h, batch_size=batch_size, progress=False)

    def last_aux(self):
        return {}

    def describe(self):
        return self.inner.describe()


def test_sigkilled_run_resumes_without_recomputing(tmp_path, monkeypatch):
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    env = {**os.environ, "TFC_CACHE_DIR": str(killed), "PYTHONPATH": f"{ROOT}{os.pathsep}" + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", KILLER.format(ids=IDS, g=G, h=H)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    monkeypatch.setenv("TFC_CACHE_DIR", str(killed))
    cache = ScoreCache(S.get("f1").signature, "toy", "dev")
    parts = sorted(cache.parts.glob("part-*.parquet"))
    assert len(parts) == 2 and not cache.parquet.exists()
    assert cache.lockfile.exists()                               # left behind by the dead process
    resumed = Counting(S.get("f1"))
    out = cache.compute(resumed, IDS, G, H, chunk_size=4, progress=False)
    assert resumed.rows == G[8:]                                 # only the third chunk was computed
    assert not cache.lockfile.exists() and not cache.parts.exists()
    # the final cache equals an uninterrupted run's
    monkeypatch.setenv("TFC_CACHE_DIR", str(clean))
    ref_cache = ScoreCache(S.get("f1").signature, "toy", "dev")
    ref = ref_cache.compute(S.get("f1"), IDS, G, H, chunk_size=4, progress=False)
    pd.testing.assert_frame_equal(out, ref)
    pd.testing.assert_frame_equal(pd.read_parquet(cache.parquet), pd.read_parquet(ref_cache.parquet))
    a, b = json.loads(cache.sidecar.read_text()), json.loads(ref_cache.sidecar.read_text())
    for k in ("signature", "row_count", "inputs_sha256", "config", "columns"):
        assert a[k] == b[k], k


# ------------------------------------------------------------------------------- damaged cache files
def _filled(tmp_cache):
    cache = ScoreCache(S.get("f1").signature, "toy", "dev")
    cache.compute(S.get("f1"), IDS, G, H, chunk_size=5, progress=False)
    return cache


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_damaged_parquet_refused_with_its_name(tmp_cache, damage):
    cache = _filled(tmp_cache)
    raw = cache.parquet.read_bytes()
    cache.parquet.write_bytes({"garbage": b"not a parquet file", "truncated": raw[: len(raw) // 2],
                               "empty": b""}[damage])
    with pytest.raises(CacheCorruptError, match=str(cache.parquet)):
        cache.compute(S.get("f1"), IDS, G, H, progress=False)
    from tfc.cache import load_scores

    with pytest.raises(CacheCorruptError, match=str(cache.parquet)):   # the public reader checks too
        load_scores(S.get("f1").signature, "toy", "dev")


def test_damaged_part_refused_with_its_name(tmp_cache):
    cache = ScoreCache(S.get("f1").signature, "toy", "dev")
    with pytest.raises(RuntimeError, match="simulated"):
        cache.compute(S.get("f1"), IDS, G, H, chunk_size=4, fail_at_chunk=2)
    part = sorted(cache.parts.glob("part-*.parquet"))[1]
    part.write_bytes(part.read_bytes()[:20])
    with pytest.raises(CacheCorruptError, match=str(part)):
        cache.compute(S.get("f1"), IDS, G, H, chunk_size=4)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", ""])
def test_damaged_sidecar_refused_with_its_name(tmp_cache, content):
    cache = _filled(tmp_cache)
    cache.sidecar.write_text(content)
    with pytest.raises(CacheCorruptError, match=str(cache.sidecar)):
        cache.compute(S.get("f1"), IDS, G, H, progress=False)


def test_parquet_without_columns_or_sidecar_refused(tmp_cache):
    cache = _filled(tmp_cache)
    pd.DataFrame({"id": IDS, "value": 0.0}).to_parquet(cache.parquet)
    with pytest.raises(CacheCorruptError, match="lacks columns"):
        cache.read()
    cache.parquet.unlink()
    cache.sidecar.unlink()
    _filled(tmp_cache).sidecar.unlink()          # a good parquet whose sidecar is gone
    with pytest.raises(CacheCorruptError, match="has no sidecar"):
        cache.read()


def test_tampered_scores_refused(tmp_cache):
    cache = _filled(tmp_cache)
    df = pd.read_parquet(cache.parquet)
    pd.concat([df, df.iloc[:1].assign(id="toy/dev/999999")]).to_parquet(cache.parquet)
    with pytest.raises(CacheMismatchError, match="does not describe"):
        cache.read()


# ------------------------------------------------------------------------------- data files
def test_changed_data_file_stops_scoring_with_its_name(tmp_path, monkeypatch, data_dir, tmp_cache):
    from tfc.data import ChecksumError, MissingRawFileError

    rel = "q2/cross_annotation.csv"
    (tmp_path / "q2").mkdir()
    shutil.copy(data_dir / rel, tmp_path / rel)
    monkeypatch.setenv("TFC_DATA_DIR", str(tmp_path))
    with open(tmp_path / rel, "a") as f:
        f.write("999,0,0,x,y,z,w,k,g,1,1\n")
    with pytest.raises(ChecksumError, match=rel):
        RD.score_dataset("f1", "q2")
    (tmp_path / rel).unlink()
    with pytest.raises(MissingRawFileError, match="cross_annotation"):
        RD.score_dataset("f1", "q2")


def test_empty_mirror_names_the_missing_file(tmp_path, monkeypatch):
    from tfc import data
    from tfc.data import DataError

    monkeypatch.setenv("TFC_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match=str(tmp_path)):
        data.load("frank")


# ------------------------------------------------------------------------------- checkpoints
def _config_fields(name):
    return S._cls(S._REGISTRY[name][0]).config_cls.__dataclass_fields__


@pytest.mark.parametrize("name", MODEL_SCORERS)
def test_missing_checkpoint_dir_named(name, tmp_path):
    missing = tmp_path / "no-such-checkpoint"
    with pytest.raises(FileNotFoundError, match="no-such-checkpoint"):
        S.get(name, checkpoint=str(missing)).score(["the cat sat."], ["the cat."], progress=False)
    with pytest.raises(FileNotFoundError, match="tfc/never-trained"):
        S.get(name, checkpoint="tfc/never-trained").score(["the cat sat."], ["the cat."], progress=False)


@pytest.mark.parametrize("name", [n for n in MODEL_SCORERS if "label_names" in _config_fields(n)])
def test_swapped_id2label_refused(name, tmp_path):
    swapped = make_tiny_classifier(tmp_path / "swapped", id2label={0: "contradiction", 1: "entailment",
                                                                    2: "neutral"})
    kw = {"conv_checkpoint": str(tmp_path)} if "conv_checkpoint" in _config_fields(name) else {}
    s = S.get(name, checkpoint=str(swapped), label_names=("entailment", "neutral", "contradiction"), **kw)
    with pytest.raises(LabelOrderError, match="label order mismatch"):
        s.score(["the cat sat."], ["the cat."], progress=False)


# BERTScore: encoder only; QAGS / Q²: `checkpoint` is a QA model (start/end logits, no labels)
@pytest.mark.parametrize("name", [n for n in MODEL_SCORERS if n != "bertscore" and n not in QGQA])
def test_generic_labels_need_an_explicit_order(name, tmp_path):
    generic = make_tiny_classifier(tmp_path / "generic", id2label={0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    kw = {"conv_checkpoint": str(tmp_path)} if "conv_checkpoint" in _config_fields(name) else {}
    # LabelOrderError is a ValueError; alignscore raises a ValueError of its own naming the label set
    with pytest.raises(ValueError, match="(?i)label"):
        S.get(name, checkpoint=str(generic), **kw).score(["the cat sat."], ["the cat."], progress=False)


# ------------------------------------------------------------------------------- device
@pytest.mark.parametrize("name", [n for n in MODEL_SCORERS if "device" in _config_fields(n)])
def test_cuda_without_gpu_is_a_clear_error(name, tiny, tiny_qa, monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    kw = _kw(name, tiny, tiny_qa)
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        S.get(name, device="cuda", **kw).score(["the cat sat."], ["the cat."], progress=False)
    with pytest.raises(ValueError, match="device must be"):
        S.get(name, device="gpu", **kw).score(["the cat sat."], ["the cat."], progress=False)
    monkeypatch.setenv("TFC_DEVICE", "cuda")     # the default device comes from the environment
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        S.get(name, **kw).score(["the cat sat."], ["the cat."], progress=False)


def test_trainer_cuda_without_gpu_is_a_clear_error(tmp_path):
    import torch

    from tfc.train.engine import TrainConfig

    from tfc.train.engine import train

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(ValueError, match="device must be"):
        TrainConfig(device="gpu").validate()
    df = pd.DataFrame({"text_a": ["the cat sat."] * 2, "text_b": ["the cat."] * 2, "task": ["3way"] * 2,
                       "label": [0, 2], "source": ["toy"] * 2})
    with pytest.raises(RuntimeError, match="no GPU"):
        train(df, TrainConfig(device="cuda", max_steps=1), out_dir=False, progress=False)


# ------------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("name", MODEL_SCORERS)
def test_scores_repeat_and_ignore_batch_size(name, tiny, tiny_qa, tmp_path):
    fields = _config_fields(name)
    kw = _kw(name, tiny, tiny_qa)
    if "conv_checkpoint" in fields:
        pytest.skip("SummaC-Conv adds a fixed linear map to SummaC-ZS's matrices (covered through summac-zs)")
    if "num_layers" in fields:
        kw["num_layers"] = 2
    s = S.get(name, **kw)
    g = G[:5] + [" ".join(G)]          # one grounding long enough to need several chunks at 128 positions
    h = H[:5] + ["the cat sat. the dog ran."]
    a = s.score(g, h, batch_size=1, progress=False)
    b = s.score(g, h, batch_size=4, progress=False)
    c = S.get(name, **kw).score(g, h, batch_size=4, progress=False)   # a fresh load
    assert np.isfinite(a).all()
    assert np.abs(a - b).max() <= 1e-5
    assert np.array_equal(b, c)


def test_torch_threads_setting_is_scoped(monkeypatch):
    import torch

    from tfc.models import torch_threads

    before = torch.get_num_threads()
    monkeypatch.setenv("TFC_THREADS", "1")
    with torch_threads():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match=">= 1"):
        with torch_threads(0):
            pass
    monkeypatch.delenv("TFC_THREADS")
    with torch_threads():
        assert torch.get_num_threads() == before
