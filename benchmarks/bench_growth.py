"""Cost growth: seconds per example against grounding length (100 to 10,000 words) for nli, summac-zs
and alignscore, with the real in-house checkpoints.

Not a test. Groundings are real CNN/DM articles from FRANK, concatenated (at sentence boundaries) until
each target length; the generated text is one real summary sentence. Each length is scored once per
scorer after a warm-up (models loaded once). The chunking makes the work grow linearly with the
grounding: the script fits ``seconds = a + b * words`` and reports ``b`` (seconds per 1,000 words),
R², and the log-log slope (1.0 = linear, 2.0 = quadratic).

    .venv/bin/python benchmarks/bench_growth.py [--lengths 100 300 1000 3000 10000] [--threads 1]

Writes ``benchmarks/results/bench_growth.json``, ``bench_growth.md`` and ``bench_growth.png``.
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


def groundings(lengths: list[int], seed: int = 0):
    from tfc import data
    from tfc.text.sentences import split_many

    df = data.load("frank", sample=200, seed=seed)
    arts = list(dict.fromkeys(df["grounding"]))
    sents = [s for ss in split_many(arts, "rule") for s in ss]
    out = {}
    for n in lengths:
        cur, k = [], 0
        i = 0
        while k < n:
            s = sents[i % len(sents)]
            cur.append(s)
            k += len(s.split())
            i += 1
        out[n] = " ".join(cur)
    claim = split_many([df["generated"].iloc[0]], "rule")[0][0]
    return out, claim


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[100, 300, 1000, 3000, 10000])
    ap.add_argument("--scorers", nargs="+", default=["nli", "summac-zs", "alignscore"])
    ap.add_argument("--nli-checkpoint", default="tfc/nli-minilm")
    ap.add_argument("--align-checkpoint", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_growth.json"))
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    import tfc.scorers as S
    from tfc import config, models

    torch.set_num_threads(args.threads)
    align = args.align_checkpoint or ("tfc/alignscore-minilm" if (config.artifacts_dir() / "alignscore-minilm").is_dir()
                                      else args.nli_checkpoint)
    ckpt = {"nli": args.nli_checkpoint, "summac-zs": args.nli_checkpoint, "alignscore": align}
    texts, claim = groundings(args.lengths)
    load0 = os.getloadavg()
    rows = []
    for name in args.scorers:
        # the rule splitter keeps spaCy's own (linear) cost out of the model-path measurement
        s = S.get(name, preset="as-published", checkpoint=ckpt[name], device="cpu", sentence_splitter="rule")
        s.score([texts[args.lengths[0]]], [claim], progress=False)        # warm-up
        memos = getattr(type(s), "_MEMOS", None)   # alignscore's cross-call pair memo: texts share chunks
        for n in args.lengths:
            if isinstance(memos, dict):
                memos.clear()
            t0 = time.perf_counter()
            v = s.score([texts[n]], [claim], progress=False)[0]
            dt = time.perf_counter() - t0
            aux = {k: int(a[0]) for k, a in s.last_aux().items() if k.startswith("aux_n_")}
            rows.append({"scorer": name, "checkpoint": ckpt[name], "words": n, "seconds": round(dt, 3),
                         "score": round(float(v), 5), **aux})
            print(f"{name:10s} {n:6d} words {dt:8.2f} s {aux}", flush=True)
    fits = {}
    for name in args.scorers:
        r = [x for x in rows if x["scorer"] == name]
        w = np.array([x["words"] for x in r], float)
        t = np.array([x["seconds"] for x in r], float)
        b, a = np.polyfit(w, t, 1)
        pred = a + b * w
        r2 = 1 - ((t - pred) ** 2).sum() / ((t - t.mean()) ** 2).sum()
        big = w >= 1000   # above the fixed per-call overhead
        slope = float(np.polyfit(np.log(w[big]), np.log(t[big]), 1)[0]) if big.sum() >= 2 else None
        fits[name] = {"seconds_per_1000_words": round(b * 1000, 3), "intercept_seconds": round(a, 3),
                      "r2": round(float(r2), 4), "loglog_slope_from_1000_words": round(slope, 3) if slope else None}
    res = {"what": "seconds per example vs grounding length", "threads": args.threads,
           "checkpoints": {c: models.identity(c) for c in set(ckpt.values())}, "claim": claim,
           "loadavg_start": [round(x, 2) for x in load0], "loadavg_end": [round(x, 2) for x in os.getloadavg()],
           "note": "real in-house checkpoints; shared 2-core CPU (see loadavg)", "fits": fits, "results": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    md = ["| scorer | " + " | ".join(f"{n} words" for n in args.lengths) + " | s / 1000 words | R² | log-log slope |",
          "|---" * (len(args.lengths) + 4) + "|"]
    for name in args.scorers:
        secs = [f"{x['seconds']:.2f}" for x in rows if x["scorer"] == name]
        f = fits[name]
        md.append(f"| {name} | " + " | ".join(secs) +
                  f" | {f['seconds_per_1000_words']} | {f['r2']} | {f['loglog_slope_from_1000_words']} |")
    md += ["", f"Seconds per example, {args.threads} torch thread(s), load average {res['loadavg_start']} -> "
               f"{res['loadavg_end']}; checkpoints {ckpt}."]
    out.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import pandas as pd
        import seaborn as sns

        ax = sns.lineplot(data=pd.DataFrame(rows), x="words", y="seconds", hue="scorer", marker="o")
        ax.set(xscale="log", yscale="log", xlabel="grounding length (words)", ylabel="seconds per example",
               title="Cost growth with grounding length")
        ax.figure.savefig(out.with_suffix(".png"), dpi=110, bbox_inches="tight")
    except Exception as exc:  # noqa: BLE001 - the figure is optional
        print(f"no figure: {exc}")
    return res


if __name__ == "__main__":
    main()
