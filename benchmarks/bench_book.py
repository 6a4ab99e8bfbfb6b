"""End-to-end time of ``make book`` (and, with ``--reproduce``, of ``make reproduce``), per stage.

Not a test. ``make book`` is ``make notebooks`` (papermill, one stage per notebook) followed by
``make html`` (Jupyter Book); this script runs the two make targets, times each, and reads the
per-notebook seconds that ``tfc book run`` records in ``book/generated/timings.json``.
``--reproduce`` runs ``make reproduce`` instead (``--mode full``: recomputes scores and trains; hours on a
CPU; pass ``--device cuda`` on a GPU machine).

    .venv/bin/python benchmarks/bench_book.py [--mode default|smoke] [--reproduce] [--device cuda]

By default it times two runs: ``cold`` (``book/generated`` and ``book/_build`` removed first: what a fresh
clone does, with the venv already built) and ``warm`` (straight after, with everything in place).

Writes ``benchmarks/results/bench_book_<mode>.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def make(target: str, **vars_) -> float:
    cmd = ["make", target] + [f"{k}={v}" for k, v in vars_.items() if v]
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True)
    return time.perf_counter() - t0


def run_once(args, mode: str) -> dict:
    """One timed ``make book`` (or ``make reproduce``): seconds per stage and per notebook."""
    load0 = os.getloadavg()
    stages = []
    if args.reproduce:
        stages.append({"stage": "make reproduce", "seconds": round(make("reproduce", DEVICE=args.device), 1)})
    else:
        stages.append({"stage": "make notebooks", "seconds": round(make("notebooks", MODE=mode, DEVICE=args.device), 1)})
        stages.append({"stage": "make html", "seconds": round(make("html"), 1)})
    tpath = ROOT / "book" / "generated" / "timings.json"
    per_nb = [r for r in json.loads(tpath.read_text()) if r.get("mode") == mode] if tpath.is_file() else []
    return {"total_seconds": round(sum(s["seconds"] for s in stages), 1), "stages": stages, "notebooks": per_nb,
            "loadavg_start": [round(x, 2) for x in load0], "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "when": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="default", choices=["smoke", "default"])
    ap.add_argument("--reproduce", action="store_true", help="time `make reproduce` (full mode) instead")
    ap.add_argument("--device", default=None)
    ap.add_argument("--runs", nargs="+", default=["cold", "warm"], choices=["cold", "warm"],
                    help="cold: book/generated and book/_build removed first (a fresh clone's state, the venv "
                         "kept); warm: straight after, everything left in place")
    args = ap.parse_args(argv)
    mode = "full" if args.reproduce else args.mode
    runs = []
    for kind in args.runs:
        if kind == "cold":
            for d in ("generated", "_build"):
                shutil.rmtree(ROOT / "book" / d, ignore_errors=True)
        runs.append({"kind": kind, **run_once(args, mode)})
        print(f"{kind}: {runs[-1]['total_seconds']} s", flush=True)
    res = {"what": f"make {'reproduce' if args.reproduce else 'book'} (mode {mode})", "mode": mode,
           "device": args.device or "default", "cpu_count": os.cpu_count(), "platform": platform.platform(),
           "cpu": cpu_name(), "runs": runs,
           # the last run's figures at the top level, as results written before cold/warm runs have them
           **{k: runs[-1][k] for k in ("total_seconds", "stages", "notebooks", "loadavg_start", "loadavg_end", "when")}}
    out = HERE / "results" / f"bench_book_{mode}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    md = ["| run | stage | seconds |", "|---|---|---|"]
    for r in runs:
        md += [f"| {r['kind']} | {s['stage']} | {s['seconds']} |" for s in r["stages"]]
        md += [f"| {r['kind']} | {n['notebook']} | {n['seconds']} |" for n in r["notebooks"]]
    md += [""] + [f"{r['kind']}: total {r['total_seconds']} s; load average {r['loadavg_start']} -> {r['loadavg_end']}."
                  for r in runs]
    out.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return res


def cpu_name() -> str:
    try:
        return next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "")
    except OSError:
        return ""


if __name__ == "__main__":
    main()
