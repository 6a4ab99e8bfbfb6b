"""GPU throughput: tokens per second of the nli and alignscore forward passes, and the fraction of the
GPU's *measured* bf16 matrix-multiply rate they achieve; plus a device="cuda" smoke run of every model
scorer. Skipped, with a message and exit code 0, when torch sees no CUDA GPU.

Not a test. The matmul rate is measured here (square bf16 matmuls, best of several), not taken from a
data sheet. Model FLOPs per token for a BERT-style encoder with L layers, width h, sequence length s:
``L * (8 h^2 + 4 h ff + 4 s h)`` (the four attention projections, the feed-forward layers of width ``ff``,
and the two attention products; 2 FLOPs per multiply-add); the classification heads are negligible. Inputs are full-length (``--seq`` tokens),
so the figure is an upper bound of what real, length-sorted batches see.

    .venv/bin/python benchmarks/bench_gpu.py [--batch-sizes 128 512] [--seq 512]
    .venv/bin/python benchmarks/bench_gpu.py --device cpu --batch-sizes 4 --seq 128   # dry run of the code

Writes ``benchmarks/results/bench_gpu.json`` and ``bench_gpu.md`` (with the device name).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
HERE = Path(__file__).resolve().parent


def sync(device):
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def matmul_rate(device: str, n: int, reps: int) -> float:
    """Best measured bf16 (fp32 on CPU) matmul rate in FLOP/s."""
    import torch

    dt = torch.bfloat16 if device.startswith("cuda") else torch.float32
    a = torch.randn(n, n, device=device, dtype=dt)
    b = torch.randn(n, n, device=device, dtype=dt)
    best = float("inf")
    for _ in range(3):
        sync(device)
        t0 = time.perf_counter()
        for _ in range(reps):
            a @ b
        sync(device)
        best = min(best, (time.perf_counter() - t0) / reps)
    return 2 * n ** 3 / best


def encoder_flops_per_token(cfg, seq: int) -> float:
    h, L = cfg.hidden_size, cfg.num_hidden_layers
    ff = getattr(cfg, "intermediate_size", 4 * h)
    return L * (8 * h * h + 4 * h * ff + 4 * seq * h)


def forward_rate(model, cfg, device, batch, seq, reps, call):
    import torch

    ids = torch.randint(1000, 2000, (batch, seq), device=device)
    mask = torch.ones_like(ids)
    amp = (torch.autocast("cuda", dtype=torch.bfloat16) if device.startswith("cuda")
           else torch.autocast("cpu", enabled=False))
    with torch.inference_mode(), amp:
        call(model, ids, mask)                                      # warm-up
        sync(device)
        t0 = time.perf_counter()
        for _ in range(reps):
            call(model, ids, mask)
        sync(device)
    dt = (time.perf_counter() - t0) / reps
    tok_s = batch * seq / dt
    return tok_s, tok_s * encoder_flops_per_token(cfg, seq)


# encoder shapes measured from their configurations (random weights: speed does not depend on the values)
SHAPES = {"minilm-l6 (6 x 384)": dict(num_hidden_layers=6, hidden_size=384, num_attention_heads=12,
                                       intermediate_size=1536),
          "large (24 x 1024)": dict(num_hidden_layers=24, hidden_size=1024, num_attention_heads=16,
                                    intermediate_size=4096)}


def minilm_installed() -> bool:
    from tfc import models

    try:
        models.minilm_dir()
        return True
    except FileNotFoundError:
        return False


def config_rows(dev, args, peak) -> list[dict]:
    """Forward throughput of BERT-style classifiers built from :data:`SHAPES`, with PyTorch's SDPA attention,
    under bf16 autocast (fp32 weights, what the scorers do) and with bf16 weights."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    rows = []
    for shape, kw in SHAPES.items():
        cfg = BertConfig(vocab_size=30522, num_labels=3, max_position_embeddings=512, attn_implementation="sdpa", **kw)
        torch.manual_seed(0)
        model = BertForSequenceClassification(cfg).to(dev).eval()
        for weights in ("fp32 + bf16 autocast", "bf16"):
            if weights == "bf16":
                if not dev.startswith("cuda"):
                    continue
                model = model.to(torch.bfloat16)
            for bs in args.batch_sizes:
                tok_s, flops = forward_rate(model, cfg, dev, bs, args.seq, args.reps,
                                            lambda m, i, a: m(input_ids=i, attention_mask=a).logits)
                rows.append({"model": shape, "checkpoint": f"random weights, {weights}, sdpa", "batch_size": bs,
                             "seq": args.seq, "tokens_per_second": round(tok_s),
                             "achieved_tflops": round(flops / 1e12, 2), "fraction_of_matmul_rate": round(flops / peak, 4)})
                print(rows[-1], flush=True)
        del model
    return rows


def markdown(res: dict) -> str:
    """The results as the Markdown table of ``bench_gpu.md``."""
    rows = res["results"]
    md = [f"Device: {res['device']} (measured matmul {res['measured_matmul_tflops']} TFLOP/s, {res['matmul']})", "",
          "| model | batch | seq | tokens/s | TFLOP/s | fraction of matmul rate |", "|---|---|---|---|---|---|"]
    md += [f"| {r['model']} ({r['checkpoint']}) | {r['batch_size']} | {r['seq']} | {r['tokens_per_second']:,} | "
           f"{r['achieved_tflops']} | {r['fraction_of_matmul_rate']:.1%} |" for r in rows]
    state = {True: "ok", False: "FAILED", None: "skipped"}
    smoke = ", ".join(f"{s['scorer']}/{s['dtype']} {state[s['ok']]}" for s in res["scorer_smoke"])
    md += ["", "Scorer smoke on the device: " + smoke]
    return "\n".join(md) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[128, 512])
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--matmul-n", type=int, default=8192)
    ap.add_argument("--nli-checkpoint", default="tfc/nli-minilm")
    ap.add_argument("--align-checkpoint", default="tfc/alignscore-minilm")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_gpu.json"))
    args = ap.parse_args(argv)

    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("bench_gpu: skipped -- torch sees no CUDA GPU on this machine (run it where one is present; "
              "--device cpu gives a dry run of the code)")
        return None
    import tfc.scorers as S
    from tfc import config, models

    dev = args.device
    name = torch.cuda.get_device_name(0) if dev.startswith("cuda") else "cpu"
    peak = matmul_rate(dev, args.matmul_n if dev.startswith("cuda") else 1024, args.reps)
    print(f"{name}: measured matmul rate {peak / 1e12:.1f} TFLOP/s", flush=True)

    def ckpt_or_minilm(c):
        return c if (not c.startswith("tfc/") or (config.artifacts_dir() / c[4:]).is_dir()) else None

    rows = config_rows(dev, args, peak)
    nli_ck = ckpt_or_minilm(args.nli_checkpoint)
    # the trained checkpoint's throughput when it is installed (the configurations above need none)
    model = models.load_sequence_classifier(nli_ck, device=dev)[0] if nli_ck else None
    for bs in args.batch_sizes if model is not None else ():
        tok_s, flops = forward_rate(model, model.config, dev, bs, args.seq, args.reps,
                                    lambda m, i, a: m(input_ids=i, attention_mask=a).logits)
        rows.append({"model": "nli", "checkpoint": nli_ck, "batch_size": bs, "seq": args.seq,
                     "tokens_per_second": round(tok_s), "achieved_tflops": round(flops / 1e12, 2),
                     "fraction_of_matmul_rate": round(flops / peak, 4)})
        print(rows[-1], flush=True)
    if nli_ck is None:   # no trained checkpoint: the scorer smoke below runs on a tiny random model
        from tfc.models.tiny import make_tiny_classifier
        import tempfile

        nli_ck = str(make_tiny_classifier(Path(tempfile.mkdtemp()) / "tiny-nli"))
    al_ck = ckpt_or_minilm(args.align_checkpoint)
    if al_ck is not None:
        from tfc.scorers.alignscore_model import load_alignscore_model

        am = load_alignscore_model(al_ck, device=dev)
        for bs in args.batch_sizes:
            tok_s, flops = forward_rate(am.model, am.model.model.config, dev, bs, args.seq, args.reps,
                                        lambda m, i, a: m(input_ids=i, attention_mask=a))
            rows.append({"model": "alignscore", "checkpoint": al_ck, "batch_size": bs, "seq": args.seq,
                         "tokens_per_second": round(tok_s), "achieved_tflops": round(flops / 1e12, 2),
                         "fraction_of_matmul_rate": round(flops / peak, 4)})
            print(rows[-1], flush=True)
    # every model scorer runs end to end on the device (fp32 and bf16 weights)
    smoke = []
    g = ["The cat sat on the mat. The dog ran to the house."] * 4
    h = ["The cat sat.", "The dog flew.", "A cat sat on a mat.", "Nobody ran."]
    for sname, kw in [("nli", {"checkpoint": nli_ck}), ("summac-zs", {"checkpoint": nli_ck}),
                      ("bertscore", {}), ("alignscore", {"checkpoint": al_ck or nli_ck})]:
        if sname == "bertscore" and not minilm_installed():
            smoke.append({"scorer": sname, "dtype": "float32", "ok": None, "error": "skipped: MiniLM not installed"})
            continue
        for dtype in ("float32", "bfloat16"):
            if sname == "bertscore" and dtype != "float32":
                continue
            extra = {} if sname == "bertscore" else {"dtype": dtype}
            try:
                v = S.get(sname, preset="as-published", device=dev, **kw, **extra).score(g, h, progress=False)
                smoke.append({"scorer": sname, "dtype": dtype, "ok": True, "scores": [round(float(x), 4) for x in v]})
            except Exception as exc:  # noqa: BLE001 - recorded
                smoke.append({"scorer": sname, "dtype": dtype, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]})
            print(smoke[-1], flush=True)
    res = {"device": name, "torch": torch.__version__, "cuda": torch.version.cuda,
           "measured_matmul_tflops": round(peak / 1e12, 2),
           "matmul": f"{args.matmul_n}x{args.matmul_n} bf16" if dev.startswith("cuda") else "1024x1024 fp32",
           "flops_per_token_formula": "L * (8 h^2 + 4 h ff + 4 s h) FLOPs", "results": rows, "scorer_smoke": smoke}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    md = markdown(res)
    out.with_suffix(".md").write_text(md)
    print(md)
    return res


if __name__ == "__main__":
    main()
