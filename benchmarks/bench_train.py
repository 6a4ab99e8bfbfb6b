"""Training-throughput probe for the in-house checkpoints (MiniLM-L6, three heads) on this machine.

For each (max_length, batch_size) it times a few optimizer steps of :mod:`tfc.train.engine` (the real
model, loss and optimizer) on synthetic text pairs padded to the full max length (the worst case:
real pairs are often shorter, and batches are padded only to their longest pair), after one warm-up
step. Prints a table and writes ``benchmarks/results/train_throughput.json``.

    .venv/bin/python benchmarks/bench_train.py [--lengths 128 256] [--batches 8 16 32] [--steps 3] [--device cpu]
        [--threads N] [--mix-steps N]

Budget: about 2 minutes on the 2-core CPU with the defaults.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def cpu_bf16_flags() -> list[str]:
    """The CPU flags that decide whether bf16 autocast is native (avx512_bf16, AMX) or emulated; torch's
    ``get_cpu_capability`` says only "AVX512" or "AVX2". Empty where /proc/cpuinfo is absent."""
    try:
        flags = next((ln.split(":", 1)[1].split() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                      if ln.startswith("flags")), [])
    except OSError:
        return []
    return sorted(f for f in set(flags) if f in ("avx512_bf16", "amx_bf16", "amx_tile", "amx_int8", "avx512_vnni"))


def probe(length: int, batch: int, steps: int, device: str, base: str, dtype: str = "fp32") -> dict:
    import torch

    from tfc.models.multihead import TASKS
    from tfc.train.pair_objective import _encode, _loss, build_model

    torch.manual_seed(0)
    model, tok = build_model(base, TASKS)
    model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    words = ("the quick brown fox jumps over the lazy dog while a cat watches from the warm window " * 40).split()
    a = [" ".join(words[i % 7:]) for i in range(batch)]  # long enough to fill any max_length
    b = [" ".join(words[:20])] * batch
    codes = torch.tensor([i % 3 for i in range(batch)], device=device)
    labels = torch.tensor([float(i % 2) for i in range(batch)], device=device)
    enc = _encode(tok, a, b, length, device)
    assert enc["input_ids"].shape[1] == length, enc["input_ids"].shape
    # the engine's own switch (TrainConfig.dtype): bf16 autocast on the CPU or the GPU, else none
    autocast = torch.autocast("cuda" if device.startswith("cuda") else "cpu", dtype=torch.bfloat16,
                              enabled=dtype == "bf16")

    def step():
        opt.zero_grad(set_to_none=True)
        with autocast:
            out = model(**enc)
        loss, _ = _loss(out, codes, labels, {})
        loss.backward()
        opt.step()
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    step()  # warm-up
    t = time.perf_counter()
    for _ in range(steps):
        step()
    dt = (time.perf_counter() - t) / steps
    return {"max_length": length, "batch_size": batch, "dtype": dtype, "seconds_per_step": round(dt, 3),
            "examples_per_second": round(batch / dt, 2)}


def probe_mix(steps: int, batch: int, length: int, device: str, base: str, length_pool: int,
              threads: int | None) -> dict:
    """Real training (tfc.train.engine.train) on a seeded sample of the real AlignScore mix."""
    from tfc.train.engine import TrainConfig, train
    from tfc.train.mix import build_mix

    df, _ = build_mix("alignscore", sample=300, synthetic=300, seed=0)
    cfg = TrainConfig(name="bench", base=base, max_length=length, batch_size=batch, max_steps=steps, device=device,
                      length_pool=length_pool, num_threads=threads, eval_rows=0, seed=0)
    res = train(df, cfg, out_dir=False, progress=False)
    s = res.summary
    return {"mode": "real mix sample", "max_length": length, "batch_size": batch, "length_pool": length_pool,
            "steps": s["steps"], "seconds_per_step": round(s["train_seconds"] / s["steps"], 3),
            "examples_per_second": s["examples_per_second"], "mix_rows": s["mix"]["rows"]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--batches", type=int, nargs="+", default=[8, 16, 32])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--base", default="minilm")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--dtypes", nargs="+", default=["fp32"], choices=["fp32", "bf16"],
                    help="training precision(s) to compare: fp32, bf16 autocast")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "train_throughput.json"))
    ap.add_argument("--mix-steps", type=int, default=0,
                    help="also time this many real training steps on a sample of the real mix "
                         "(batch = first of --batches, max length = last of --lengths), with and without "
                         "length grouping")
    args = ap.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    rows = []
    t0 = time.time()
    for length in args.lengths:
        for batch in args.batches:
            for dtype in args.dtypes:
                r = probe(length, batch, args.steps, args.device, args.base, dtype)
                rows.append(r)
                print(f"max_length {length:4d}  batch {batch:3d}  {dtype}  {r['seconds_per_step']:7.3f} s/step  "
                      f"{r['examples_per_second']:8.2f} examples/s", flush=True)
    mix_rows = []
    if args.mix_steps:
        for pool in (8, 1):
            r = probe_mix(args.mix_steps, args.batches[0], args.lengths[-1], args.device, args.base, pool,
                          args.threads)
            mix_rows.append(r)
            # steps that fit 60 minutes of training at this rate, keeping 10% slack
            r["steps_in_60_min"] = int(0.9 * 3600 / r["seconds_per_step"])
            print(f"real mix  max_length {r['max_length']}  batch {r['batch_size']}  length_pool {pool}  "
                  f"{r['seconds_per_step']:7.3f} s/step  {r['examples_per_second']:8.2f} examples/s  "
                  f"-> {r['steps_in_60_min']} steps in 60 min", flush=True)
    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover
        load = None
    dev = (torch.cuda.get_device_name(0) if args.device.startswith("cuda")
           else f"cpu {platform.machine()}, {os.cpu_count()} cores, {torch.get_num_threads()} torch threads")
    try:
        cap = torch.backends.cpu.get_cpu_capability()
    except AttributeError:  # pragma: no cover
        cap = None
    result = {"device": dev, "cpu_capability": cap, "cpu_bf16_flags": cpu_bf16_flags(), "base": args.base, "torch": torch.__version__, "steps_timed": args.steps,
              "padding": "every pair padded/truncated to max_length (worst case)",
              "load_average_at_end": load, "wall_seconds": round(time.time() - t0, 1),
              "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": rows,
              "real_mix_rows": mix_rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return result


if __name__ == "__main__":
    main()
