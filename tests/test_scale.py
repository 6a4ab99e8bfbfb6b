"""Scale-out on Ray Data (tfc.cache.scale): sharded and merged caches equal a single-process run, bitwise.

One test starts Ray (a local instance for the module, 2 CPUs, two actors): ``tfc score --input ...
--engine ray --workers 2`` resumes a partial run while one of its workers is SIGKILLed half-way
through writing a shard, and must leave the same parquet file, byte for byte, and the same sidecar
(signature, config, rows, input hash) as a single-process run. The other tests need no Ray: the same
shards resume a local run, the ``-d`` path of the CLI runs through an engine, and a missing Ray
names the extra to install.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tfc.scorers as S
from tfc.cache import scale
from test_cache import Counting as CacheCounting  # noqa: E402  (the tests' one counting wrapper)
from tfc.cache import ScoreCache, input_sha

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")   # Ray's own config
N, CHUNK = 40, 8          # five chunks of eight
SIDE_KEYS = ("signature", "dataset", "split", "scorer", "output_range", "config", "row_count", "inputs_sha256",
             "columns", "device", "dtype")


def _texts(n=N):
    from tfc.models.tiny import WORDS

    rng = np.random.default_rng(7)
    words = [w for w in WORDS if w.isalpha()]
    g = [" ".join(rng.choice(words, size=int(rng.integers(4, 40)))) + " ." for _ in range(n)]
    h = [" ".join(rng.choice(words, size=int(rng.integers(2, 12)))) for _ in range(n)]
    g[5], h[9] = "", "   "          # blank rows take the scorer's empty_score, in every engine
    return g, h


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Bitwise equality needs the same float summation order: every run here, the single-process reference
    and each Ray worker alike, scores with one torch thread (CI leaves TFC_THREADS unset, and torch's default
    thread count would make the reference differ from the workers in the last bits). Module-scoped, so it is
    in force before the module's other fixtures compute the reference."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TFC_THREADS", "1")
        yield


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tfc.models.tiny import make_tiny_classifier

    d = tmp_path_factory.mktemp("scale")
    ck = str(make_tiny_classifier(d / "tiny", seed=11))
    g, h = _texts()
    ids = [f"toy/dev/{i:06d}" for i in range(N)]
    scorer = S.get("nli", checkpoint=ck)
    ref = ScoreCache(scorer.signature, "toy", "dev", root=d / "ref")
    ref.compute(scorer, ids, g, h, chunk_size=CHUNK, progress=False)      # the single-process run
    return {"dir": d, "ck": ck, "g": g, "h": h, "ids": ids, "scorer": scorer, "ref": ref}


def _same_as_reference(cache: ScoreCache, ref: ScoreCache):
    assert cache.parquet.read_bytes() == ref.parquet.read_bytes()          # the merged cache, byte for byte
    a, b = json.loads(cache.sidecar.read_text()), json.loads(ref.sidecar.read_text())
    assert {k: a.get(k) for k in SIDE_KEYS} == {k: b.get(k) for k in SIDE_KEYS}
    assert not cache.parts.exists() and not cache.lockfile.exists()
    x, y = cache.read()["score"].to_numpy(), ref.read()["score"].to_numpy()
    assert x.tobytes() == y.tobytes()


def _prewrite_shards(cache: ScoreCache, scorer, ids, g, h, chunks):
    """What a killed Ray run leaves: the shards of the chunks it finished, and a half-written one."""
    worker = scale.ShardScorer(type(scorer), scorer.config, scorer.signature, str(cache.parts))
    shas = [input_sha(a, b) for a, b in zip(g, h)]
    cache.parts.mkdir(parents=True)
    for c in chunks:
        sel = range(c * CHUNK, min(N, (c + 1) * CHUNK))
        row = {"chunk": [c], "ids": [[ids[k] for k in sel]], "shas": [[shas[k] for k in sel]],
               "groundings": [[g[k] for k in sel]], "generations": [[h[k] for k in sel]],
               "shard": [scale.shard_name([ids[k] for k in sel], [shas[k] for k in sel])]}
        worker(row)
    (cache.parts / (scale.SHARD_PREFIX + "0123456789abcdef.parquet.tmp999")).write_bytes(b"PAR1 half a shard")
    assert len(list(cache.parts.glob("part-ray-*.parquet"))) == len(chunks)


class Counting(CacheCounting):
    """test_cache's counting wrapper, passing the wrapped scorer's aux columns through."""

    def last_aux(self):
        return self.inner.last_aux()

    def describe(self):
        return self.inner.describe()


# -- without Ray --------------------------------------------------------------------------------
def test_shards_of_a_killed_run_resume_a_local_run(tiny):
    cache = ScoreCache(tiny["scorer"].signature, "toy", "dev", root=tiny["dir"] / "local-resume")
    _prewrite_shards(cache, tiny["scorer"], tiny["ids"], tiny["g"], tiny["h"], chunks=[0, 3])
    sc = Counting(tiny["scorer"])
    out = cache.compute(sc, tiny["ids"], tiny["g"], tiny["h"], chunk_size=CHUNK, progress=False)
    assert sc.n == N - 2 * CHUNK                      # only the chunks the killed run had not finished
    assert list(out["id"]) == tiny["ids"]
    _same_as_reference(cache, tiny["ref"])


def test_worker_refuses_a_scorer_with_another_signature(tiny, tmp_path):
    s = tiny["scorer"]
    with pytest.raises(scale.EngineError, match="not nli.tiny.0000"):
        scale.ShardScorer(type(s), s.config, "nli.tiny.0000", str(tmp_path / "parts"))


def test_shard_names():
    a = scale.shard_name(["x", "y"], ["1", "2"])
    assert a == scale.shard_name(["x", "y"], ["1", "2"]) and a.startswith("part-ray-") and a.endswith(".parquet")
    assert a != scale.shard_name(["y", "x"], ["2", "1"]) and a != scale.shard_name(["x", "y"], ["1", "3"])


class InProcessEngine:
    """An engine with RayEngine's interface that runs ShardScorer in this process (CLI wiring, no Ray)."""

    name, last_report = "ray", {}

    def __init__(self):
        self.chunks = []

    def run(self, cache, scorer, chunks, ids, groundings, generations, shas, batch_size=None, on_rows=None):
        cls, cfg, sig = scale._scorer_factory(scorer)
        w = scale.ShardScorer(cls, cfg, sig, str(cache.parts), batch_size=batch_size)
        for c, sel in enumerate(chunks):
            cid, csha = [ids[k] for k in sel], [shas[k] for k in sel]
            w({"chunk": [c], "ids": [cid], "shas": [csha], "groundings": [[groundings[k] for k in sel]],
               "generations": [[generations[k] for k in sel]], "shard": [scale.shard_name(cid, csha)]})
            self.chunks.append(len(sel))
        return w.device


def test_cli_dataset_path_runs_through_the_engine(tmp_path, monkeypatch, data_dir):
    from tfc.cli import main

    runs = {}
    for engine in ("local", "ray"):
        monkeypatch.setenv("TFC_CACHE_DIR", str(tmp_path / engine))
        fake = InProcessEngine()
        monkeypatch.setattr(scale, "make_engine", lambda name, **kw: fake if name == "ray" else None)
        args = ["score", "-d", "q2", "-s", "rougeL", "--sample", "15", "--chunk-size", "4", "--no-progress"]
        r = CliRunner().invoke(main, args + (["--engine", "ray", "--workers", "2"] if engine == "ray" else []))
        assert r.exit_code == 0, r.output
        runs[engine] = (r.output, fake)
    assert runs["ray"][1].chunks == [4, 4, 4, 3]
    assert runs["ray"][0].splitlines()[:3] == runs["local"][0].splitlines()[:3]    # scorer, dataset, AUC
    sig = S.get("rougeL").signature
    _same_as_reference(ScoreCache(sig, "q2", "dev", root=tmp_path / "ray"),
                       ScoreCache(sig, "q2", "dev", root=tmp_path / "local"))


@pytest.mark.parametrize("args, message", [
    (["--workers", "2"], "--workers need(s) --engine ray"),
    (["--gpus-per-worker", "1"], "--gpus-per-worker need(s) --engine ray"),
    (["--engine", "ray", "--no-cache"], "leave out --no-cache"),
    (["--engine", "ray", "--workers", "0"], "--workers must be >= 1"),
])
def test_cli_refuses_bad_engine_options(tmp_path, tmp_cache, args, message):
    from tfc.cli import main

    inp = tmp_path / "in.csv"
    pd.DataFrame({"grounding": ["a b"], "generated": ["a"]}).to_csv(inp, index=False)
    r = CliRunner().invoke(main, ["score", "--input", str(inp), "-s", "f1", *args])
    assert r.exit_code == 2 and message in " ".join(r.output.split()), r.output


def test_missing_ray_names_the_extra(tmp_path, tmp_cache, monkeypatch):
    from tfc.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)          # `import ray` raises ImportError
    with pytest.raises(scale.EngineError, match=r"pip install 'tfc\[scale\]'"):
        scale.require_ray()
    inp = tmp_path / "in.csv"
    pd.DataFrame({"grounding": ["a b"], "generated": ["a"]}).to_csv(inp, index=False)
    r = CliRunner().invoke(main, ["score", "--input", str(inp), "-s", "f1", "--engine", "ray"])
    assert r.exit_code == 1 and "tfc[scale]" in r.output, r.output
    with pytest.raises(ValueError, match="engine='ray'"):
        scale.make_engine("local", workers=2)


def test_import_tfc_does_not_import_ray():
    code = ("import sys, tfc, tfc.cache, tfc.cache.scale, tfc.cli.score, tfc.results.own_files; "
            "sys.exit(1 if 'ray' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], env={**os.environ}).returncode == 0


# -- on two Ray workers -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason="Ray is the scale extra: pip install 'tfc[scale]'")
    pytest.importorskip("ray.data")
    from ray.data import DataContext

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    DataContext.get_current().enable_progress_bars = False
    yield ray
    if started:
        ray.shutdown()


def test_cli_input_on_two_workers_equals_a_single_run(tiny, ray_local, tmp_path, monkeypatch):
    """``tfc score --input ... --engine ray --workers 2`` after a partial run (chunk 3's shard on disk),
    with one worker SIGKILLed half-way through writing its shard: Ray restarts it, the run completes,
    and the merged cache equals the single-process one byte for byte."""
    from tfc.results import own_files as O
    from tfc.cli import main

    inp = tmp_path / "mine.csv"
    pd.DataFrame({"article": tiny["g"], "summary": tiny["h"], "y": np.arange(N) % 2}).to_csv(inp, index=False)
    df = O.read_table(inp, text_cols=("article", "summary"))
    g, h = df["article"].tolist(), df["summary"].tolist()
    assert (g, h) == (tiny["g"], tiny["h"])
    scorer = S.get("nli", checkpoint=tiny["ck"])
    key = O.dataset_key(g, h)
    monkeypatch.setenv("TFC_CACHE_DIR", str(tmp_path / "single"))
    ref = O.score_frame(df, "nli", "article", "summary", checkpoint=tiny["ck"], chunk_size=CHUNK)
    monkeypatch.setenv("TFC_CACHE_DIR", str(tmp_path / "ray"))
    cache = ScoreCache(scorer.signature, key, O.CACHE_SPLIT)
    _prewrite_shards(cache, scorer, O.row_ids(N), g, h, chunks=[3])       # a run killed after one chunk

    marker, real = tmp_path / "killed", scale.make_engine
    engines = []

    def with_kill(name, **kw):   # the CLI's engine, plus the test hook: kill the worker on this run's chunk 1
        engines.append(real(name, **kw, kill=(1, str(marker))))
        return engines[-1]

    monkeypatch.setattr(scale, "make_engine", with_kill)
    r = CliRunner().invoke(main, ["score", "--input", str(inp), "--grounding-col", "article", "--generated-col",
                                  "summary", "-s", "nli", "-c", tiny["ck"], "--chunk-size", str(CHUNK),
                                  "--engine", "ray", "--workers", "2", "--no-progress", "-o",
                                  str(tmp_path / "out.parquet")])
    assert r.exit_code == 0, r.output
    assert marker.exists()                         # a worker was SIGKILLed half-way through a shard
    assert isinstance(engines[0], scale.RayEngine) and engines[0].workers == 2
    assert f"{CHUNK} rows from the cache, {N - CHUNK} computed" in r.output
    assert "engine    ray" in r.output and "2 workers, last run 4 chunk(s)" in r.output
    got = pd.read_parquet(tmp_path / "out.parquet")
    assert got["nli"].to_numpy().tobytes() == ref["nli"].to_numpy().tobytes()
    _same_as_reference(cache, ScoreCache(scorer.signature, key, O.CACHE_SPLIT, root=tmp_path / "single"))
