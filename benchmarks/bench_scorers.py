"""Throughput of the model scorers on the CPU (pairs per second) at two batch sizes, at fp32, at the fast
preset's dtype (``tfc.scorers.FAST_DTYPE``) and with dynamic int8.

Not a test. The model is the offline MiniLM-L6 encoder with a *randomly initialised* 3-way classification
head (seeded; scores are meaningless, speed is not), the same for nli, summac-zs and alignscore; bertscore
uses the MiniLM encoder itself. The fast preset's effect on the scores is measured on the real shipped model
by the ``fast-*-sample`` plans of ``tfc train score-inhouse`` (the Performance page's drift table).
"Pairs" are (grounding, generated) examples; ``model_inputs_before_dedup`` counts the (chunk or
sentence, hypothesis) inputs they expand to. Pairs are a fixed random sample of a TRUE dataset (FRANK by default: CNN/DM and XSum articles, i.e.
long groundings that need chunking). Each configuration is run once after a warm-up call on a few
pairs; the model is loaded once per scorer and reused.

    .venv/bin/python benchmarks/bench_scorers.py [--dataset frank] [--n 64] [--batch-sizes 8 32] [--dtypes float32 bfloat16 int8-dynamic]

Writes ``benchmarks/results/bench_scorers.json`` and prints a table.
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


def model_inputs(aux: dict, n: int) -> int:
    """Model inputs behind a call, before deduplication: nli's grounding chunks, alignscore's pairs, SummaC's
    unit matrix, bertscore's chunks (one per pair without chunking)."""
    for col in ("aux_n_pairs", "aux_n_chunks"):
        if col in aux:
            return int(aux[col].sum())
    if "aux_n_grounding_units" in aux:
        return int((aux["aux_n_grounding_units"] * aux["aux_n_generated_units"]).sum())
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="frank")
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--scorers", nargs="+", default=["nli", "summac-zs", "alignscore", "bertscore"])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16", "int8-dynamic"])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_scorers.json"))
    args = ap.parse_args(argv)

    import torch

    import tfc.scorers as S
    from tfc import data
    from tfc.models.tiny import make_minilm_classifier

    if args.threads:
        torch.set_num_threads(args.threads)
    load_start = os.getloadavg()
    df = data.load(args.dataset, sample=args.n, seed=args.seed)
    g, h = df["grounding"].tolist(), df["generated"].tolist()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = str(make_minilm_classifier(Path(tmp) / "minilm-random-head", seed=args.seed))
        for name in args.scorers:
            for dtype in args.dtypes:
                kw = {} if name == "bertscore" else {"checkpoint": ckpt}
                s = S.get(name, preset="as-published", device="cpu", dtype=dtype, **kw)
                s.score(g[:2], h[:2], progress=False)       # warm-up: load model, spaCy, tokenizer
                for bs in args.batch_sizes:
                    memos = getattr(type(s), "_MEMOS", None)
                    if isinstance(memos, dict):             # alignscore's cross-call pair memo: redo the work
                        memos.clear()
                    t0 = time.perf_counter()
                    s.score(g, h, batch_size=bs, progress=False)
                    dt = time.perf_counter() - t0
                    rows.append({"scorer": name, "dtype": dtype, "batch_size": bs, "pairs": len(g),
                                 "seconds": round(dt, 2), "pairs_per_second": round(len(g) / dt, 2),
                                 "model_inputs_before_dedup": model_inputs(s.last_aux(), len(g)),
                                 "signature_tag": s.tag()})
                    print(f"{name:10s} {dtype:9s} bs={bs:3d}  {len(g)} pairs  {dt:7.1f} s  {len(g) / dt:7.2f} pairs/s",
                          flush=True)
    from tfc.models import bf16_native

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "") \
        if os.path.exists("/proc/cpuinfo") else ""
    res = {"dataset": args.dataset, "n": args.n, "seed": args.seed, "device": "cpu", "bf16_native": bf16_native(),
           "cpu": cpu, "loadavg_start": [round(x, 2) for x in load_start],
           "loadavg_end": [round(x, 2) for x in os.getloadavg()],
           "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count(),
           "platform": platform.platform(), "model": "MiniLM-L6 encoder + random 3-way head (seeded)",
           "note": "machine shared with other jobs; figures are indicative", "results": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1))
    print(f"\n{'scorer':10s} {'dtype':9s} {'batch':>5s} {'pairs/s':>8s}")
    for r in rows:
        print(f"{r['scorer']:10s} {r['dtype']:9s} {r['batch_size']:5d} {r['pairs_per_second']:8.2f}")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
