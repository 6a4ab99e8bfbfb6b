"""Scale-out: score across workers with Ray Data, through the same score cache (``pip install tfc[scale]``).

Command line::

    tfc score -s nli -c tfc/nli-minilm -d frank --engine ray --workers 4
    tfc score -s mine=alignscore --input outputs.parquet --engine ray --workers 8 --gpus-per-worker 1 \\
        --ray-address auto                      # an existing cluster (``ray start --head`` / KubeRay ...)

Python::

    from tfc.cache import scale
    from tfc.results.dataset import score_dataset
    with scale.engine("ray", workers=4):        # every ScoreCache.compute inside runs on Ray
        score_dataset("nli", "frank")

**How.** :meth:`tfc.cache.ScoreCache.compute` plans the work as always -- the ids not yet cached, in
dataset order, cut into chunks of ``chunk_size`` -- and, when an engine is active, hands the chunks
to it instead of scoring them one after the other. :class:`RayEngine` makes a Ray Dataset with one
row per chunk and runs ``map_batches(batch_size=1)`` over a fixed pool of ``workers`` actors
(:class:`ShardScorer`): each actor builds the scorer once from its class and config (checked
against the signature) and loads the model once, then scores whole chunks, exactly the chunks and
batch size a single-process run would score, so the scores are bitwise the same (same library
versions, hardware and thread count). Each chunk becomes one **shard**,
``<split>.parts/part-ray-<hash>.parquet`` (hash of the chunk's ``id:input_sha`` lines), written
atomically by the worker and returned to the driver, which writes it too when the worker's file
system is not the driver's. When every chunk is in, the driver **merges** the shards with the
ordinary compaction (:meth:`~tfc.cache.ScoreCache.compact`): one parquet sorted by id and its
sidecar, the same as a single-process run gives.

**Failures.** A killed worker loses only the chunk it was scoring: Ray restarts the actor (up to
``max_restarts`` times) and retries that chunk; the shards already written stay. If the whole run
dies, the next run (Ray or not) reads the shards like any parts and computes only the rest; the
remaining ids fall into the same chunks again, because every lost unit is a whole chunk. The driver
holds the cache entry's lock for the whole run, as a single-process run does.

**Clusters.** Install ``tfc[scale]`` at the same versions on every node, with the checkpoints at the
same paths (a different checkpoint gives a different signature, which the worker refuses). Put the
score cache (``TFC_CACHE_DIR``) on shared storage to let the workers write their shards directly;
otherwise the driver writes them from what the workers return. ``--gpus-per-worker`` asks Ray for
GPUs per actor (the scorer then runs on ``cuda``).
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import io
import os
import signal
import time
import uuid
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ENGINES = ("local", "ray")
SHARD_PREFIX = "part-ray-"
INSTALL_HINT = "pip install 'tfc[scale]'"


class EngineError(RuntimeError):
    """The scale-out engine cannot run (Ray missing, resources absent, an unsupported scorer)."""


def require_ray():
    """``import ray`` or an :class:`EngineError` that names the extra to install."""
    try:
        import ray
        import ray.data  # noqa: F401 - Ray Data is what the engine uses
    except ImportError as exc:
        raise EngineError(f"--engine ray needs Ray Data, which is not installed ({exc}); install the "
                          f"extra: {INSTALL_HINT}  (or pip install 'ray[data]')") from None
    return ray


def shard_name(ids, shas) -> str:
    """The file name of the shard holding these rows: a hash of its ``id:input_sha`` lines, in order."""
    h = hashlib.sha256("\n".join(f"{i}:{s}" for i, s in zip(ids, shas)).encode()).hexdigest()[:16]
    return f"{SHARD_PREFIX}{h}.parquet"


def _write_bytes_atomic(data: bytes, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _scorer_factory(scorer):
    """(class, config, signature) of the scorer under any wrapper: what a worker rebuilds it from."""
    base = scorer.unwrap() if hasattr(scorer, "unwrap") else scorer
    return type(base), base.config, scorer.signature


class ShardScorer:
    """A Ray Data actor: builds and loads the scorer once, then scores one chunk per call.

    Each input row is one chunk (``chunk``, ``ids``, ``groundings``, ``generations``, ``shas``,
    ``shard``); the output row is the shard's name, row count, the device used and the shard's
    parquet bytes.
    """

    def __init__(self, cls, config, signature, parts_dir, batch_size=None, threads=None, kill=None):
        if threads:
            os.environ["TFC_THREADS"] = str(threads)
        self.scorer = cls(config)
        if self.scorer.signature != signature:
            raise EngineError(f"worker {os.uname().nodename}: the scorer rebuilt from its config has signature "
                              f"{self.scorer.signature}, not {signature} (a different checkpoint or tfc version "
                              "on this node?)")
        self.scorer.load()
        self.parts_dir, self.batch_size, self.kill = Path(parts_dir), batch_size, kill
        cfg = self.scorer.config
        if hasattr(cfg, "device"):
            from tfc import config as tfc_config

            self.device = getattr(cfg, "device", None) or tfc_config.default_device()
        else:
            self.device = "cpu"

    def __call__(self, batch: dict) -> dict:
        out = {"shard": [], "rows": [], "device": [], "payload": []}
        for k in range(len(batch["chunk"])):
            ids = [str(x) for x in batch["ids"][k]]
            shas = [str(x) for x in batch["shas"][k]]
            g = [str(x) for x in batch["groundings"][k]]
            h = [str(x) for x in batch["generations"][k]]
            vals = self.scorer.score(g, h, batch_size=self.batch_size, progress=False)
            part = pd.DataFrame({"id": ids, "score": np.asarray(vals).astype(float), "input_sha": shas})
            for name, arr in self.scorer.last_aux().items():
                part[name] = arr
            buf = io.BytesIO()
            part.to_parquet(buf, index=False)
            data = buf.getvalue()
            path = self.parts_dir / str(batch["shard"][k])
            if self.kill is not None and int(batch["chunk"][k]) == self.kill[0] and not Path(self.kill[1]).exists():
                # test hook: die like a killed worker, half-way through writing the shard
                path.with_name(path.name + f".tmp{os.getpid()}").parent.mkdir(parents=True, exist_ok=True)
                path.with_name(path.name + f".tmp{os.getpid()}").write_bytes(data[: len(data) // 2])
                Path(self.kill[1]).write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)
            if self.parts_dir.parent.is_dir():   # the cache is visible here: write the shard (else the driver does)
                _write_bytes_atomic(data, path)
            out["shard"].append(str(batch["shard"][k]))
            out["rows"].append(len(ids))
            out["device"].append(self.device)
            out["payload"].append(data)
        return {"shard": np.array(out["shard"], dtype=object), "rows": np.array(out["rows"], dtype=np.int64),
                "device": np.array(out["device"], dtype=object), "payload": np.array(out["payload"], dtype=object)}


class RayEngine:
    """Runs the chunks of a :meth:`~tfc.cache.ScoreCache.compute` call on a pool of Ray actors.

    ``workers`` actors, each with ``cpus_per_worker`` CPUs and ``gpus_per_worker`` GPUs (Ray
    resources); ``address``: a Ray cluster (``"auto"``, ``ray://...``), else the one already
    initialised in this process, else a local one started here. ``threads``: torch threads per worker
    (default ``TFC_THREADS``, else ``cpus_per_worker``). ``kill``: ``(chunk index, marker file)``, a
    test hook that SIGKILLs the worker on that chunk the first time (while the marker file is absent).
    """

    name = "ray"

    def __init__(self, workers: int = 2, cpus_per_worker: float = 1.0, gpus_per_worker: float = 0.0,
                 address: str | None = None, threads: int | None = None, max_restarts: int = 3,
                 progress: bool = True, kill: tuple[int, str] | None = None):
        if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
            raise ValueError(f"workers must be a positive int, got {workers!r}")
        if cpus_per_worker <= 0:
            raise ValueError(f"cpus_per_worker must be > 0, got {cpus_per_worker}")
        if gpus_per_worker < 0:
            raise ValueError(f"gpus_per_worker must be >= 0, got {gpus_per_worker}")
        self.workers, self.cpus, self.gpus = int(workers), float(cpus_per_worker), float(gpus_per_worker)
        self.address, self.max_restarts, self.progress, self.kill = address, int(max_restarts), progress, kill
        env_threads = os.environ.get("TFC_THREADS")
        self.threads = threads or (int(env_threads) if env_threads else max(1, int(self.cpus)))
        self.last_report: dict = {}

    def __repr__(self):
        return (f"<RayEngine workers={self.workers} cpus/worker={self.cpus:g} gpus/worker={self.gpus:g} "
                f"address={self.address or 'local'}>")

    def _init(self, ray) -> None:
        if not ray.is_initialized():
            kw = {"address": self.address} if self.address else {"include_dashboard": False}
            ray.init(log_to_driver=False, **kw)
        res = ray.cluster_resources()
        if self.gpus > 0 and res.get("GPU", 0) < self.gpus:
            raise EngineError(f"--gpus-per-worker {self.gpus:g} asked, but the Ray cluster has "
                              f"{res.get('GPU', 0):g} GPU(s); leave it out to score on CPUs")
        need = self.workers * self.cpus
        if res.get("CPU", 0) < need:
            warnings.warn(f"{self.workers} workers x {self.cpus:g} CPUs = {need:g} CPUs, but the Ray cluster has "
                          f"{res.get('CPU', 0):g}; the run waits for an autoscaler to add them", stacklevel=3)

    def run(self, cache, scorer, chunks, ids, groundings, generations, shas, batch_size=None, on_rows=None):
        """Score ``chunks`` (lists of positions into ``ids``), one shard each; returns the device used."""
        ray = require_ray()
        if not getattr(scorer, "needs_text", True) or getattr(scorer, "from_cache", False):
            raise EngineError(f"{scorer.signature} reads its scores (imported or from the cache); "
                              "nothing to scale out")
        self._init(ray)
        from ray.data import ActorPoolStrategy, DataContext

        ctx = DataContext.get_current()
        ctx.enable_progress_bars = bool(self.progress)
        cls, cfg, sig = _scorer_factory(scorer)
        rows, names = [], {}
        for c, sel in enumerate(chunks):
            cid, csha = [ids[k] for k in sel], [shas[k] for k in sel]
            name = shard_name(cid, csha)
            names[name] = sel
            rows.append({"chunk": c, "shard": name, "ids": cid, "shas": csha,
                         "groundings": [groundings[k] for k in sel], "generations": [generations[k] for k in sel]})
        ds = ray.data.from_items(rows, override_num_blocks=len(rows))
        extra = {}
        if "ray_remote_args_fn" in inspect.signature(ds.map_batches).parameters:
            # bounded restarts (Ray Data's default restarts forever: a chunk that always kills its worker,
            # e.g. out of memory, would loop); deprecated in Ray 2.60, to go in 2.64, when the default holds
            extra["ray_remote_args_fn"] = functools.partial(dict, max_restarts=self.max_restarts,
                                                            max_task_retries=self.max_restarts)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*ray_remote_args.* is deprecated")
            ds = ds.map_batches(
                ShardScorer, batch_size=1, batch_format="numpy",
                fn_constructor_kwargs={"cls": cls, "config": cfg, "signature": sig, "parts_dir": str(cache.parts),
                                       "batch_size": batch_size, "threads": self.threads, "kill": self.kill},
                compute=ActorPoolStrategy(size=min(self.workers, len(rows)), max_tasks_in_flight_per_actor=1),
                num_cpus=self.cpus, num_gpus=self.gpus or None, **extra)
        t0, done, device = time.perf_counter(), 0, None
        cache.parts.mkdir(parents=True, exist_ok=True)
        try:
            for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
                for name, n, dev, data in zip(batch["shard"], batch["rows"], batch["device"], batch["payload"]):
                    path = cache.parts / str(name)
                    if not path.exists():    # the worker could not see the cache directory
                        _write_bytes_atomic(bytes(data), path)
                    done += int(n)
                    device = device or str(dev)
                    if on_rows is not None:
                        on_rows(int(n))
        except Exception as exc:  # noqa: BLE001 - Ray wraps worker errors in several types
            msg = " ".join(str(exc).split())
            raise EngineError(f"the Ray run failed after {done} of {sum(map(len, chunks))} rows "
                              f"({type(exc).__name__}: {msg[:600]}); the finished shards are kept in {cache.parts}: "
                              "run the same command again to compute only the rest") from exc
        missing = [n for n in names if not (cache.parts / n).exists()]
        if missing:
            raise EngineError(f"{len(missing)} shard(s) missing after the Ray run, e.g. {missing[0]}; run again to "
                              "compute them")
        self.last_report = {"engine": "ray", "workers": self.workers, "chunks": len(rows), "rows": done,
                            "seconds": time.perf_counter() - t0, "ray": ray.__version__}
        return device


def make_engine(name: str | None, **kw):
    """``None``/``"local"`` gives ``None`` (score in this process); ``"ray"`` a :class:`RayEngine`."""
    if name in (None, "local"):
        if kw.get("workers") not in (None, 1):
            raise ValueError("workers > 1 needs engine='ray'")
        return None
    if name == "ray":
        require_ray()
        return RayEngine(**{k: v for k, v in kw.items() if v is not None})
    raise ValueError(f"unknown engine {name!r}; use one of {', '.join(ENGINES)}")


@contextlib.contextmanager
def engine(name="ray", **kw):
    """Run every :meth:`~tfc.cache.ScoreCache.compute` in the block on this engine (a name or an engine)."""
    from tfc import cache

    eng = make_engine(name, **kw) if isinstance(name, str) or name is None else name
    token = cache.ENGINE.set(eng)
    try:
        yield eng
    finally:
        cache.ENGINE.reset(token)
