"""End-to-end time of ``make book`` (and, with ``--reproduce``, of ``make reproduce``), per stage.

Not a test. ``make book`` is ``make notebooks`` (papermill, one stage per notebook) followed by
``make html`` (Jupyter Book); this script runs the two make targets, times each, and reads the
per-notebook seconds that ``tfc book run`` records in ``book/generated/timings.json``.
``--reproduce`` runs ``make reproduce`` instead (``--mode full``: recomputes scores and trains; hours on a
CPU; pass ``--device cuda`` on a GPU machine).

    .venv/bin/python benchmarks/bench_book.py [--mode default|smoke] [--reproduce] [--device cuda]

Writes ``benchmarks/results/bench_book[_<mode>].json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="default", choices=["smoke", "default"])
    ap.add_argument("--reproduce", action="store_true", help="time `make reproduce` (full mode) instead")
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)
    mode = "full" if args.reproduce else args.mode
    load0 = os.getloadavg()
    stages = []
    if args.reproduce:
        stages.append({"stage": "make reproduce", "seconds": round(make("reproduce", DEVICE=args.device), 1)})
    else:
        stages.append({"stage": "make notebooks", "seconds": round(make("notebooks", MODE=mode, DEVICE=args.device), 1)})
        stages.append({"stage": "make html", "seconds": round(make("html"), 1)})
    tpath = ROOT / "book" / "generated" / "timings.json"
    per_nb = [r for r in json.loads(tpath.read_text()) if r.get("mode") == mode] if tpath.is_file() else []
    res = {"what": f"make {'reproduce' if args.reproduce else 'book'} (mode {mode})", "mode": mode,
           "device": args.device or "default", "total_seconds": round(sum(s["seconds"] for s in stages), 1),
           "stages": stages, "notebooks": per_nb, "cpu_count": os.cpu_count(), "platform": platform.platform(),
           "loadavg_start": [round(x, 2) for x in load0], "loadavg_end": [round(x, 2) for x in os.getloadavg()],
           "when": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    out = HERE / "results" / f"bench_book_{mode}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    md = ["| stage | seconds |", "|---|---|"] + [f"| {s['stage']} | {s['seconds']} |" for s in stages]
    md += [f"| {r['notebook']} | {r['seconds']} |" for r in per_nb]
    md += ["", f"Total {res['total_seconds']} s; load average {res['loadavg_start']} -> {res['loadavg_end']}."]
    out.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return res


if __name__ == "__main__":
    main()
