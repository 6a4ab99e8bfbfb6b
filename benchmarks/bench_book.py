"""End-to-end time of ``make book`` (and, with ``--reproduce``, of ``make reproduce``), per stage.

Not a test. ``make book`` is ``make notebooks`` (papermill, one stage per notebook) followed by
``make html`` (Jupyter Book); this script runs the two make targets, times each, and reads the
per-notebook seconds that ``tfc book run`` records in ``book/generated/timings.json``.
``--reproduce`` runs ``make reproduce`` instead (``--mode full``: recomputes scores and trains; hours on a
CPU; pass ``--device cuda`` on a GPU machine).

    .venv/bin/python benchmarks/bench_book.py [--mode default|smoke] [--reproduce] [--device cuda]
    .venv/bin/python benchmarks/bench_book.py --reproduce --stage STAGE [--only NB ...] --device cuda

``--stage`` times one piece of ``make reproduce`` and merges it into
``benchmarks/results/bench_reproduce_<device>.json``: ``train`` (``tfc train reproduce --skip-scoring``),
``score`` (``tfc train reproduce --skip-training``), ``notebooks`` (``tfc book run --mode full``, optionally
``--only`` some notebooks) and ``html`` (``tfc book build``). The pieces add up to ``make reproduce``; they
exist because a lent GPU machine runs at most 10 minutes a command, so the end-to-end figure is measured as
the sum of its stages over several commands. The file says which stages (and notebooks) are still
unmeasured and on which device each was measured; the total is only called complete when none is missing.

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


REPRODUCE_STAGES = ("train", "score", "notebooks", "html")


def tfc(*argv: str) -> float:
    """Seconds of one ``tfc`` command (the venv's, as ``make`` runs it; ``TFC_BIN`` overrides)."""
    exe = os.environ.get("TFC_BIN", str(ROOT / ".venv" / "bin" / "tfc"))
    t0 = time.perf_counter()
    subprocess.run([exe, *argv], cwd=ROOT, check=True)
    return time.perf_counter() - t0


def stage_command(stage: str, device: str | None, only: list[str] | None) -> list[str]:
    """The ``tfc`` arguments of one stage of ``make reproduce`` (the Makefile's three commands, the first split
    into training and rescoring)."""
    dev = ["--device", device] if device else []
    if stage == "train":
        return ["train", "reproduce", "--skip-scoring", *dev]
    if stage == "score":
        return ["train", "reproduce", "--skip-training", *dev]
    if stage == "notebooks":
        return ["book", "run", "--mode", "full", *dev, *[a for nb in (only or []) for a in ("--only", nb)]]
    if stage == "html":
        return ["book", "build"]
    raise ValueError(f"stage must be one of {REPRODUCE_STAGES}, not {stage!r}")


def merge_stage(path: Path, stage: str, seconds: float, device: str, notebooks: list[dict] | None = None,
                all_notebooks: list[str] | None = None) -> dict:
    """Merge one measured stage into the staged record at ``path`` (a later measurement of the same stage or
    notebook replaces the earlier one) and recompute what is missing and the total. ``notebooks``: the
    per-notebook seconds of a ``notebooks`` stage; ``all_notebooks``: every notebook the full run has."""
    if stage not in REPRODUCE_STAGES:
        raise ValueError(f"stage must be one of {REPRODUCE_STAGES}, not {stage!r}")
    rec = json.loads(path.read_text()) if path.is_file() else {}
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    stages = rec.get("stages", {})
    nbs = rec.get("notebooks", {})
    if stage == "notebooks":
        for n in notebooks or []:
            nbs[n["notebook"]] = {"seconds": round(float(n["seconds"]), 1), "device": device, "when": when}
    else:
        stages[stage] = {"seconds": round(float(seconds), 1), "device": device, "when": when}
    expected = sorted(set(all_notebooks or rec.get("all_notebooks", [])) | set(nbs))
    missing = [s for s in ("train", "score", "html") if s not in stages]
    missing += [f"notebook {n}" for n in expected if n not in nbs]
    if not expected:
        missing.append("notebooks (none measured yet)")
    total = sum(v["seconds"] for v in stages.values()) + sum(v["seconds"] for v in nbs.values())
    devices = sorted({v["device"] for v in list(stages.values()) + list(nbs.values())})
    rec.update({"what": "make reproduce, measured stage by stage", "stages": stages, "notebooks": nbs,
                "all_notebooks": expected, "missing": missing, "complete": not missing,
                "total_seconds": round(total, 1), "devices": devices,
                "note": ("sum of every stage" if not missing else "partial: the total leaves out the missing stages")
                        + ("; measured on more than one device" if len(devices) > 1 else "")})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(rec, indent=1))
    tmp.replace(path)            # never a half-written record
    return rec


def run_stage(args) -> dict:
    """Time one stage of ``make reproduce`` and merge it into ``bench_reproduce_<device>.json``."""
    device = args.device or "default"
    if args.only and args.stage != "notebooks":
        raise SystemExit("--only applies to --stage notebooks")
    seconds = tfc(*stage_command(args.stage, args.device, args.only))
    per_nb = None
    all_nb = sorted(p.stem for p in (ROOT / "notebooks").glob("*.md"))
    if args.stage == "notebooks":
        tpath = ROOT / "book" / "generated" / "timings.json"
        rows = [r for r in json.loads(tpath.read_text()) if r.get("mode") == "full"] if tpath.is_file() else []
        done = set(args.only or all_nb)
        per_nb = [{"notebook": stem, "seconds": r["seconds"]} for r in rows
                  if (stem := r["notebook"].removesuffix(".ipynb")) in done]
    out = HERE / "results" / f"bench_reproduce_{device}.json"
    rec = merge_stage(out, args.stage, seconds, device_name(args.device), per_nb, all_nb)
    print(json.dumps({k: rec[k] for k in ("total_seconds", "complete", "missing", "devices")}, indent=1))
    return rec


def device_name(device: str | None) -> str:
    """The GPU's name where ``device`` is cuda and torch sees one, else the CPU's."""
    if device and device.startswith("cuda"):
        try:
            import torch

            if torch.cuda.is_available():
                return torch.cuda.get_device_name(0)
        except ImportError:
            pass
    return cpu_name() or platform.processor() or "cpu"


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
    ap.add_argument("--stage", default=None, choices=REPRODUCE_STAGES,
                    help="with --reproduce: time one stage and merge it into bench_reproduce_<device>.json")
    ap.add_argument("--only", nargs="+", default=None, help="with --stage notebooks: these notebooks only")
    ap.add_argument("--runs", nargs="+", default=["cold", "warm"], choices=["cold", "warm"],
                    help="cold: book/generated and book/_build removed first (a fresh clone's state, the venv "
                         "kept); warm: straight after, everything left in place")
    args = ap.parse_args(argv)
    if args.stage:
        if not args.reproduce:
            raise SystemExit("--stage needs --reproduce")
        return run_stage(args)
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
