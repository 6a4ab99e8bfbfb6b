"""Score cache: chunked writes, resume after an interruption, refusal of mismatched/corrupt files."""
import json

import numpy as np
import pandas as pd
import pytest

import tfc.results.dataset as RD
import tfc.scorers as S
from tfc.cache import CacheCorruptError, CacheMismatchError, ScoreCache, entries, load_scores

IDS = [f"toy/dev/{i:06d}" for i in range(10)]
G = [f"the cat number {i} sat on the mat" for i in range(10)]
H = [f"the cat {i} sat" for i in range(10)]


class Counting:
    """Wraps a scorer and counts the examples it was asked to score."""

    def __init__(self, inner):
        self.inner, self.n = inner, 0
        self.config, self.signature = inner.config, inner.signature

    def score(self, g, h, batch_size=None, progress=True):
        self.n += len(g)
        return self.inner.score(g, h, batch_size=batch_size, progress=False)

    def last_aux(self):
        return {}

    def describe(self):
        return self.inner.describe()


def test_resume_after_interruption(tmp_cache):
    sc = Counting(S.get("f1"))
    cache = ScoreCache(sc.signature, "toy", "dev")
    with pytest.raises(RuntimeError, match="chunk 2"):
        cache.compute(sc, IDS, G, H, chunk_size=3, fail_at_chunk=2)
    assert sc.n == 6 and len(list(cache.parts.glob("part-*.parquet"))) == 2
    assert not cache.parquet.exists()
    assert "partial" in entries().iloc[0]["state"]
    sc2 = Counting(S.get("f1"))
    out = cache.compute(sc2, IDS, G, H, chunk_size=3)
    assert sc2.n == 4                                    # only the 4 missing rows were computed
    assert list(out["id"]) == IDS
    assert np.allclose(out["score"], S.get("f1").score(G, H, progress=False))
    assert cache.parquet.exists() and not cache.parts.exists()
    meta = json.loads(cache.sidecar.read_text())
    assert meta["row_count"] == 10 and meta["signature"] == sc.signature and meta["config"]["component"] == "fmeasure"
    assert {"tfc", "torch", "transformers"} <= set(meta["versions"])
    sc3 = Counting(S.get("f1"))
    cache.compute(sc3, IDS, G, H)
    assert sc3.n == 0                                    # fully cached
    got = load_scores(sc.signature, "toy")
    assert list(got.columns[:2]) == ["id", "score"] and len(got) == 10
    assert len(load_scores("f1", "toy", "dev")) == 10   # by registry name


def test_sampled_then_full(tmp_cache):
    sc = Counting(S.get("f1"))
    cache = ScoreCache(sc.signature, "toy", "dev")
    cache.compute(sc, IDS[:4], G[:4], H[:4])
    cache.compute(sc, IDS, G, H)
    assert sc.n == 10


def test_sidecar_signature_mismatch_refused(tmp_cache):
    sc = S.get("f1")
    cache = ScoreCache(sc.signature, "toy", "dev")
    cache.compute(sc, IDS, G, H, progress=False)
    meta = json.loads(cache.sidecar.read_text())
    meta["signature"] = "f1.0000000000"
    cache.sidecar.write_text(json.dumps(meta))
    with pytest.raises(CacheMismatchError, match="signature"):
        cache.compute(sc, IDS, G, H)


def test_sidecar_not_describing_parquet_refused(tmp_cache):
    sc = S.get("f1")
    cache = ScoreCache(sc.signature, "toy", "dev")
    cache.compute(sc, IDS, G, H, progress=False)
    meta = json.loads(cache.sidecar.read_text())
    meta["inputs_sha256"] = "0" * 64
    cache.sidecar.write_text(json.dumps(meta))
    with pytest.raises(CacheMismatchError, match="does not describe"):
        load_scores(sc.signature, "toy")


def test_changed_inputs_refused(tmp_cache):
    sc = S.get("f1")
    cache = ScoreCache(sc.signature, "toy", "dev")
    cache.compute(sc, IDS, G, H, progress=False)
    with pytest.raises(CacheMismatchError, match="different inputs"):
        cache.compute(sc, IDS, G, [h + " changed" for h in H])


def test_corrupt_files_named(tmp_cache):
    sc = S.get("f1")
    cache = ScoreCache(sc.signature, "toy", "dev")
    cache.compute(sc, IDS, G, H, progress=False)
    cache.parquet.write_bytes(b"not a parquet file")
    with pytest.raises(CacheCorruptError, match=str(cache.parquet)):
        cache.read()
    cache.sidecar.write_text("{broken")
    with pytest.raises(CacheCorruptError, match=str(cache.sidecar)):
        cache.read()


def test_bad_cache_keys():
    with pytest.raises(ValueError):
        ScoreCache("../x", "toy", "dev")
    with pytest.raises(FileNotFoundError):
        load_scores("f1.nothing", "toy")


def test_verify_and_cli(tmp_cache, data_dir):
    from click.testing import CliRunner

    from tfc.cache import verify
    from tfc.cli import main

    RD.score_dataset("rougeL", "q2", sample=15)
    sig = S.get("rougeL").signature
    res = verify(sig, "q2", sample=5)
    assert res["ok"] and res["n"] == 5 and res["max_abs_diff"] == 0
    r = CliRunner().invoke(main, ["cache", "ls"])
    assert r.exit_code == 0 and sig in r.output
    r = CliRunner().invoke(main, ["cache", "verify", "--sample", "4"])
    assert r.exit_code == 0 and "ok" in r.output, r.output
    # tamper with one cached score: verify must report the mismatch
    cache = ScoreCache(sig, "q2", "dev")
    df = pd.read_parquet(cache.parquet)
    df["score"] = df["score"] + 0.5
    df.to_parquet(cache.parquet, index=False)
    r = CliRunner().invoke(main, ["cache", "verify", "--sample", "4"])
    assert r.exit_code != 0 and "MISMATCH" in r.output


def test_live_lock_refused_stale_lock_taken(tmp_cache):
    import os

    from tfc.cache import CacheBusyError

    sc = S.get("f1")
    cache = ScoreCache(sc.signature, "toy", "dev")
    cache.dir.mkdir(parents=True)
    cache.lockfile.write_text(str(os.getppid()))      # a live process that is not us
    with pytest.raises(CacheBusyError, match="held by running process"):
        cache.compute(sc, IDS, G, H, progress=False)
    cache.lockfile.write_text("999999999")            # no such process: a stale lock of a killed run
    out = cache.compute(sc, IDS, G, H, progress=False)
    assert len(out) == 10 and not cache.lockfile.exists()
