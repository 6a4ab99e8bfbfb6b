"""Scale-out: pairs per second of ``tfc score --engine ray`` on 1 and 2 local Ray workers, beside one process.

Not a test. The workload is the ``nli`` scorer on a fixed random sample of a TRUE dataset (FRANK by
default: long groundings, chunked), with the offline MiniLM-L6 encoder and a *randomly initialised*
3-way head (seeded; scores are meaningless, speed is not); ``--model tiny`` uses the 2-layer test
model and made-up texts instead (seconds, no data mirror needed). Every configuration scores the
same pairs into a fresh, empty score cache through :meth:`tfc.cache.ScoreCache.compute`, with the
same chunks (``--chunk-size``), one torch thread per worker, and is checked to leave the same
parquet file, byte for byte, as the single-process run.

Two figures per configuration:

* ``pairs_per_second``: end to end (``n`` pairs over the wall time of the call), i.e. including
  starting the Ray actors and loading the model in each;
* ``marginal_pairs_per_second``: ``(n - s) / (t_n - t_s)``, where ``t_s`` is the wall time of a run
  on ``s`` = one chunk per worker (start-up plus one chunk each): the rate once the workers are up,
  which is what a large corpus sees.

On the 2-core development machine, with other jobs running, two workers cannot double anything:
they share two cores with the driver, Ray's own processes and the background load. The figures say
what the engine costs and that it scales at all; on a real cluster start Ray there
(``ray start --head`` on one node, ``ray start --address=<head>:6379`` on the others, or KubeRay) and
run ``tfc score ... --engine ray --workers N --ray-address auto [--gpus-per-worker 1]``.

    .venv/bin/python benchmarks/bench_scale.py [--model minilm|tiny] [--dataset frank] [--n 96]
        [--chunk-size 16] [--workers 1 2]

Writes ``benchmarks/results/scale.json`` and prints a table.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TFC_THREADS", "1")      # one torch thread per worker (and in the single process)


def _workload(args, tmp: Path):
    from tfc.models.tiny import WORDS, make_minilm_classifier, make_tiny_classifier

    if args.model == "tiny":
        import numpy as np

        rng = np.random.default_rng(args.seed)
        words = [w for w in WORDS if w.isalpha()]
        g = [" ".join(rng.choice(words, size=int(rng.integers(20, 120)))) + " ." for _ in range(args.n)]
        h = [" ".join(rng.choice(words, size=int(rng.integers(4, 16)))) for _ in range(args.n)]
        ids = [f"synthetic/{i:06d}" for i in range(args.n)]
        return str(make_tiny_classifier(tmp / "tiny", seed=args.seed)), "tiny BERT (2 layers, hidden 32), random", \
            "synthetic", ids, g, h
    from tfc import data

    df = data.load(args.dataset, sample=args.n, seed=args.seed)
    return (str(make_minilm_classifier(tmp / "minilm-random-head", seed=args.seed)),
            "MiniLM-L6 encoder + random 3-way head (seeded)", args.dataset, df["id"].tolist(),
            df["grounding"].tolist(), df["generated"].tolist())


def _run(scorer, root, ids, g, h, chunk_size, batch_size, engine):
    from tfc.cache import ScoreCache

    cache = ScoreCache(scorer.signature, "bench", "rows", root=root)
    t0 = time.perf_counter()
    cache.compute(scorer, ids, g, h, chunk_size=chunk_size, batch_size=batch_size, progress=False, engine=engine)
    return time.perf_counter() - t0, cache.parquet.read_bytes()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["minilm", "tiny"], default="minilm")
    ap.add_argument("--dataset", default="frank")
    ap.add_argument("--n", type=int, default=96)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk-size", type=int, default=16)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "scale.json"))
    args = ap.parse_args(argv)

    import ray

    import tfc.scorers as S
    from tfc.cache import scale

    load0 = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ckpt, model, dataset, ids, g, h = _workload(args, tmp)
        scorer = S.get("nli", preset="as-published", checkpoint=ckpt, device="cpu")
        # one process: the model is loaded once, before the clock (as a long-running process has it)
        t_load = time.perf_counter()
        scorer.load()
        t_load = time.perf_counter() - t_load
        s_one = args.chunk_size
        t_s, _ = _run(scorer, tmp / "local-s", ids[:s_one], g[:s_one], h[:s_one], args.chunk_size,
                      args.batch_size, None)
        t_n, ref = _run(scorer, tmp / "local", ids, g, h, args.chunk_size, args.batch_size, None)
        rows.append({"engine": "local", "workers": 1, "pairs": args.n, "seconds": round(t_n, 2),
                     "pairs_per_second": round(args.n / t_n, 2),
                     "marginal_pairs_per_second": round((args.n - s_one) / max(t_n - t_s, 1e-9), 2),
                     "model_load_seconds": round(t_load, 2), "identical_to_local": True})
        ray.init(num_cpus=max(args.workers), include_dashboard=False, log_to_driver=False)
        try:
            from ray.data import DataContext

            DataContext.get_current().enable_progress_bars = False
            for w in args.workers:
                eng = scale.RayEngine(workers=w, threads=1, progress=False)
                s = min(args.n, w * args.chunk_size)
                t_s, _ = _run(scorer, tmp / f"ray{w}-s", ids[:s], g[:s], h[:s], args.chunk_size, args.batch_size, eng)
                t_n, got = _run(scorer, tmp / f"ray{w}", ids, g, h, args.chunk_size, args.batch_size, eng)
                rows.append({"engine": "ray", "workers": w, "pairs": args.n, "seconds": round(t_n, 2),
                             "pairs_per_second": round(args.n / t_n, 2),
                             "marginal_pairs_per_second": round((args.n - s) / max(t_n - t_s, 1e-9), 2),
                             "startup_run_seconds": round(t_s, 2), "startup_run_pairs": s,
                             "identical_to_local": got == ref})
        finally:
            ray.shutdown()
    ray_rows = {r["workers"]: r for r in rows if r["engine"] == "ray"}
    speedup = (round(ray_rows[2]["marginal_pairs_per_second"] / ray_rows[1]["marginal_pairs_per_second"], 2)
               if 1 in ray_rows and 2 in ray_rows else None)
    out = {
        "scorer": "nli", "model": model, "dataset": dataset, "n": args.n, "seed": args.seed,
        "chunk_size": args.chunk_size, "batch_size": args.batch_size, "torch_threads_per_worker": 1,
        "cpu_count": os.cpu_count(), "platform": platform.platform(), "ray": ray.__version__,
        "load_average_start": [round(x, 2) for x in load0],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "results": rows, "marginal_speedup_2_vs_1_workers": speedup,
        "all_identical_to_local": all(r["identical_to_local"] for r in rows),
        "note": (f"{os.cpu_count()} cores, shared with the Ray driver, Ray's own processes and any background "
                 "job: they bound what 2 workers can gain here; the figures show the engine's overhead and "
                 "that it scales, not what a cluster gives"),
        "cluster_command": ("ray start --head  (then ray start --address=<head>:6379 on each other node); "
                            "tfc score -s nli -c <checkpoint> --input <file> --engine ray --workers N "
                            "--ray-address auto [--gpus-per-worker 1]"),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"{'engine':<6} {'workers':>7} {'seconds':>8} {'pairs/s':>8} {'marginal':>9} identical")
    for r in rows:
        print(f"{r['engine']:<6} {r['workers']:>7} {r['seconds']:>8.2f} {r['pairs_per_second']:>8.2f} "
              f"{r['marginal_pairs_per_second']:>9.2f} {r['identical_to_local']}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
