"""Every registered scorer with its defaults: shipped weights, seconds per 100 pairs on this CPU, and the mean ROC AUC
over TRUE's nine sets where the score cache holds the default's scores for all nine.

    python benchmarks/bench_defaults.py              # -> benchmarks/results/bench_defaults.json and .md
    python benchmarks/bench_defaults.py --aucs-only  # the AUC column again from the cache, the timings kept

The pairs: 12 stratified rows of each of the nine TRUE sets (108), scored once to load and warm the models, then
timed; "per 100 pairs" scales the timed run. Speed is only compared between runs whose scores are equal.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd

OUT = Path(__file__).resolve().parent / "results"
TRUE9 = ("frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2", "dialfact", "paws")


def shipped(cfg: dict) -> list[str]:
    from tfc.models import release

    names = [v for k, v in cfg.items() if (k.endswith("checkpoint") or k == "reference") and isinstance(v, str)
             and v.startswith("tfc/") and release.available(v[4:])]
    return sorted(set(names))


def mean_auc(scorer) -> float | None:
    from tfc.cache import ScoreCache
    from tfc.meta import roc_auc
    from tfc.data import load

    aucs = []
    for ds in TRUE9:
        c = ScoreCache(scorer.signature, ds, "dev")
        if not c.exists():
            return None
        got = c.read().set_index("id")["score"]
        df = load(ds)
        if not set(df["id"]) <= set(got.index):
            return None
        aucs.append(100 * roc_auc(df["label"].to_numpy(), got.reindex(df["id"]).to_numpy()))
    return sum(aucs) / len(aucs)


def main() -> None:
    import torch

    from tfc import data
    from tfc import scorers as S

    torch.set_num_threads(int(os.environ.get("TFC_BENCH_THREADS", "2")))
    pairs = pd.concat([data.load(d, sample=12, seed=0) for d in TRUE9], ignore_index=True)
    g, h = pairs["grounding"].tolist(), pairs["generated"].tolist()
    rows = []
    for name in S.names():
        s = S.get(name)
        s.score(g[:4], h[:4], progress=False)                      # load once
        t0 = time.perf_counter()
        s.score(g, h, progress=False)
        sec = time.perf_counter() - t0
        cfg = {k: v for k, v in s.config.to_dict().items() if k in S.DEFAULTS.get(name, {})}
        rows.append({"scorer": name, "default overrides": json.dumps(cfg, default=str), "signature": s.signature,
                     "shipped weights": ", ".join(shipped(s.config.to_dict())) or "(none needed)",
                     "seconds per 100 pairs": round(100 * sec / len(g), 2), "mean AUC, nine TRUE sets": mean_auc(s)})
    meta = {"cpu": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads(), "pairs": len(g)}
    write(meta, rows)


def write(meta: dict, rows: list[dict]) -> None:
    df = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    (OUT / "bench_defaults.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1, default=str) + "\n")
    (OUT / "bench_defaults.md").write_text(df.to_markdown(index=False) + "\n")
    print(df.to_string(index=False))


def aucs_only() -> None:
    """The mean-AUC column read again from the cache (scores committed since the timed run); the timings and
    their CPU stay those of the timed run. A scorer whose default signature moved since then is refused: its
    timing would describe another configuration."""
    from tfc import scorers as S

    rec = json.loads((OUT / "bench_defaults.json").read_text())
    for row in rec["rows"]:
        s = S.get(row["scorer"])
        if s.signature != row["signature"]:
            raise SystemExit(f"{row['scorer']}: the default is now {s.signature}, timed as {row['signature']}; "
                             "run the whole benchmark again")
        row["mean AUC, nine TRUE sets"] = mean_auc(s)
    write(rec["meta"], rec["rows"])


if __name__ == "__main__":
    import sys

    aucs_only() if sys.argv[1:] == ["--aucs-only"] else main()
