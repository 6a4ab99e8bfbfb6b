"""Benchmark results and the bad-input catalogue, for the book's performance and reliability page.

The benchmark scripts (``benchmarks/bench_*.py``, run by ``make bench``) write JSON under
``benchmarks/results/`` (``TFC_BENCH_DIR`` overrides). This module only reads them: a book build never
re-runs a benchmark. :func:`bad_input_outcomes` runs a catalogue of bad and odd inputs through a scorer
and reports what happened to each (the same kinds of input ``tests/test_robustness.py`` checks for
every registered scorer).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd


def results_dir() -> Path:
    env = os.environ.get("TFC_BENCH_DIR")
    from tfc.config import REPO_ROOT

    return Path(env) if env else REPO_ROOT / "benchmarks" / "results"


def load(name: str) -> dict | None:
    """``benchmarks/results/<name>.json`` as a dict, or None when that benchmark has not been run."""
    p = results_dir() / f"{name}.json"
    return json.loads(p.read_text()) if p.is_file() else None


def peer_table(res: dict | None = None) -> pd.DataFrame:
    """One row per peer comparison: seconds on each side, ratio (peer / tfc), target, agreement (Pearson r, the
    largest |score difference| and the bound the as-published side is held to)."""
    res = res if res is not None else load("bench_peers")
    cols = ["comparison", "pairs", "tfc_seconds", "peer_seconds", "ratio", "target", "met", "pearson",
            "max_abs_diff", "agreement_bound", "agrees"]
    if not res:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(res["results"])
    if "max_abs_diff_exact" in df.columns:
        df["max_abs_diff"] = df["max_abs_diff_exact"].fillna(df["max_abs_diff"])
    return df.reindex(columns=cols)


def peer_extra(res: dict | None, comparison: str, key: str, measure: str) -> float | None:
    """A nested agreement figure of one peer comparison (e.g. ``agreement_tfc_reading``/``pearson``), or None."""
    row = next((r for r in (res or {}).get("results", []) if r["comparison"] == comparison), {})
    return (row.get(key) or {}).get(measure)


def peer_agreement_cells(res: dict | None, by: pd.DataFrame) -> dict[str, str]:
    """The agreement figures the page glues, as text: per peer (``summac``, ``summac-conv``, ``alignscore``) the
    as-published side's largest |score difference| (``perf_<peer>_max_diff``, ``-`` written ``_``) and, where tfc
    has a reading of its own against the same peer scores (``summac``, ``alignscore``), its Pearson r and largest
    difference (``perf_<peer>_tfc_reading_pearson``, ``..._max_abs_diff``)."""
    out = {}
    for comp in ("summac", "summac-conv", "alignscore"):
        key = comp.replace("-", "_")
        out[f"perf_{key}_max_diff"] = peer_cell(by, comp, "max_abs_diff", "{:.1e}")
        if comp == "summac-conv":
            continue
        for measure, fmt in (("pearson", "{:.4f}"), ("max_abs_diff", "{:.2f}")):
            v = peer_extra(res, comp, "agreement_tfc_reading", measure)
            out[f"perf_{key}_tfc_reading_{measure}"] = fmt.format(v) if v is not None else "not measured"
    return out


def growth_frame(res: dict | None = None) -> pd.DataFrame:
    """Seconds per example against grounding words, one row per (scorer, length)."""
    res = res if res is not None else load("bench_growth")
    if not res:
        return pd.DataFrame(columns=["scorer", "words", "seconds"])
    return pd.DataFrame(res["results"])


def growth_fits(res: dict | None = None) -> pd.DataFrame:
    res = res if res is not None else load("bench_growth")
    if not res:
        return pd.DataFrame(columns=["scorer", "seconds_per_1000_words", "r2", "loglog_slope_from_1000_words"])
    return pd.DataFrame([{"scorer": k, **v} for k, v in res["fits"].items()])


def throughput_table(res: dict | None = None) -> pd.DataFrame:
    """``bench_scorers.py``'s rows: pairs/s per scorer, dtype and batch size (dtype ``float32`` for results
    written before the script measured the fast preset)."""
    res = res if res is not None else load("bench_scorers")
    cols = ["scorer", "dtype", "batch_size", "pairs", "seconds", "pairs_per_second"]
    if not res:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(res["results"])
    if "dtype" not in df.columns:
        df["dtype"] = "float32"
    return df[cols]


def dtype_speedup(res: dict | None = None) -> pd.DataFrame:
    """Per scorer and batch size: pairs/s at each measured dtype and, for each dtype other than fp32, its
    speed-up over fp32 (``× <dtype>``). Empty when only fp32 was measured."""
    t = throughput_table(res)
    if not len(t) or set(t["dtype"]) <= {"float32"}:
        return pd.DataFrame(columns=["scorer", "batch_size"])
    w = t.pivot_table(index=["scorer", "batch_size"], columns="dtype", values="pairs_per_second")
    dtypes = ["float32"] + [d for d in dict.fromkeys(t["dtype"]) if d != "float32"]
    w = w[[d for d in dtypes if d in w.columns]]
    for d in dtypes[1:]:
        if d in w.columns and "float32" in w.columns:
            w[f"× {d}"] = (w[d] / w["float32"]).round(2)
    w = w.rename(columns={d: f"{d} pairs/s" for d in dtypes}).reset_index()
    w.columns.name = None
    return w


def book_build(res: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """``bench_book.py``'s default-mode runs: seconds per run and stage, and the page's glue values as text (minutes
    of the cold and the warm run; the machine's CPU, its core count and the 1-minute load average at the start of the
    first run). A result written before cold/warm runs counts as one run."""
    res = res if res is not None else load("bench_book_default")
    texts = dict.fromkeys(("perf_book_cold", "perf_book_warm", "perf_book_cpu", "perf_book_cores", "perf_book_load"),
                          "not measured")
    if not res:
        return pd.DataFrame(columns=["run", "stage", "seconds"]), texts
    runs = res.get("runs") or [{"kind": "one run", **res}]
    rows = [{"run": r["kind"], "stage": s["stage"], "seconds": s["seconds"]} for r in runs for s in r["stages"]]
    rows += [{"run": r["kind"], "stage": "total", "seconds": r["total_seconds"]} for r in runs]
    for r in runs:
        if r["kind"] in ("cold", "warm"):
            texts[f"perf_book_{r['kind']}"] = f"{r['total_seconds'] / 60:.1f}"
    texts.update(perf_book_cpu=str(res.get("cpu") or res.get("platform", "?")), perf_book_cores=str(res.get("cpu_count", "?")),
                 perf_book_load=str(runs[0]["loadavg_start"][0]))
    return pd.DataFrame(rows), texts


def scorers_machine(res: dict | None = None) -> dict:
    """Where and when ``bench_scorers.py`` ran: ``cpu``, ``torch_threads``, ``bf16_native`` (bool), ``load_start``
    and ``load_end`` (the 1-, 5- and 15-minute load averages). A figure not recorded is None: every one when the
    benchmark has not been run."""
    res = res if res is not None else load("bench_scorers")
    if not res:
        return dict.fromkeys(("cpu", "torch_threads", "bf16_native", "load_start", "load_end"))
    return {"cpu": res.get("cpu") or res.get("platform"), "torch_threads": res.get("torch_threads"),
            "bf16_native": res.get("bf16_native"), "load_start": res.get("loadavg_start"),
            "load_end": res.get("loadavg_end")}


def fast_drift(datasets=None) -> pd.DataFrame:
    """The fast preset (:data:`tfc.scorers.FAST_DTYPE`) of each model scorer against its fp32 reading, on the
    shipped model and the rows both caches hold (:data:`tfc.runs.inhouse_models.FAST_DRIFT_READINGS`, scored by
    the ``fast-*-sample`` plans): one :func:`tfc.runs.auc_drift.drift_table` per scorer, stacked, with ``scorer``
    and ``preset`` columns."""
    from tfc.runs.auc_drift import drift_table
    from tfc.runs.cached_aucs import named_scorers
    from tfc.runs.inhouse_models import FAST_DRIFT_READINGS
    from tfc.scorers import FAST_DTYPE

    parts = []
    for name, kw, _ in FAST_DRIFT_READINGS.values():
        sc = named_scorers({"fp32": (name, {**kw, "dtype": "float32"}), "fast": (name, {**kw, "dtype": FAST_DTYPE})})
        if {"fp32", "fast"} <= set(sc):
            d = drift_table(sc["fp32"], sc["fast"], datasets)
            if len(d):
                parts.append(d.assign(scorer=name, preset=FAST_DTYPE, signature=sc["fast"].signature))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def fast_drift_frame(datasets=None) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    """The fast preset against fp32 per model scorer and TRUE set (:func:`fast_drift`, read from the committed
    caches), the page's glue values as text (dtype, sample size, limit, checkpoint, largest |drift|) and
    :func:`tfc.runs.auc_drift.drift_verdicts` of the table, per scorer."""
    from tfc.runs.auc_drift import DRIFT_LIMIT, drift_verdicts
    from tfc.runs.inhouse_models import FAST_DRIFT_SAMPLE, SENT_CHECKPOINT, _true_sets
    from tfc.scorers import FAST_DTYPE

    d = fast_drift(datasets)
    n_sets = len(datasets) if datasets is not None else len(_true_sets())
    texts = {"perf_fast_dtype": FAST_DTYPE, "perf_fast_n": str(FAST_DRIFT_SAMPLE),
             "perf_fast_limit": f"{DRIFT_LIMIT}", "perf_fast_checkpoint": SENT_CHECKPOINT,
             "perf_fast_max": f"{d['drift'].abs().max():.2f}" if len(d) else "not measured"}
    if len(d):
        d = d[["scorer", "dataset", "rows", "auc_fp32", "auc_fast", "drift", "max_abs_score_diff", "signature"]]
    return d, texts, drift_verdicts(d, by="scorer", n_sets=n_sets)


# (what, groundings, generations): each run as one score() call
BAD_INPUTS: list[tuple[str, object, object]] = [
    ("None as a generated text", ["the cat sat."], [None]),
    ("a number as a grounding", [42], ["the cat sat."]),
    ("bytes instead of str", [b"the cat sat."], ["the cat."]),
    ("a bare string instead of a list", "the cat sat.", "the cat."),
    ("lists of different lengths", ["a", "b"], ["a"]),
    ("a lone surrogate (invalid Unicode)", ["the cat \ud800 sat."], ["the cat."]),
    ("empty generated text", ["the cat sat."], [""]),
    ("white space only", ["   \n\t"], ["the cat."]),
    ("control characters only", ["the cat sat."], ["\x00\x01\x1b"]),
    ("zero-width characters only", ["the cat sat."], ["\u200b\u200d"]),
    ("a one-token claim", ["the cat sat on the mat."], ["cat"]),
    ("emoji", ["the cat 😀 sat."], ["😀 👍🏽 🇫🇷"]),
    ("right-to-left scripts", ["שלום עולם. مرحبا بالعالم."], ["שלום"]),
    ("HTML", ["<p>the cat <b>sat</b></p>"], ["<script>alert('x')</script>"]),
    ("numbers as text", ["3.14159 1,000,000"], ["NaN"]),
    ("a 50,000-word grounding", None, ["cat"]),   # filled in by bad_input_outcomes
]


def _long_text(words: int = 50_000) -> str:
    rng = np.random.default_rng(0)
    vocab = "the cat sat on mat dog ran to house and a man saw city police said".split()
    sents = [" ".join(rng.choice(vocab, 10)).capitalize() + "." for _ in range(words // 10)]
    return " ".join(sents)


def bad_input_outcomes(scorer, long_words: int = 50_000) -> pd.DataFrame:
    """Run :data:`BAD_INPUTS` through ``scorer``; one row per input: ``input``, ``outcome``, ``detail``.

    ``outcome`` is ``error`` (with the exception type and message), ``empty score`` (the scorer's
    documented ``empty_score`` for blank text) or ``scored`` (the score, and whether it is finite and in
    the output range). Anything else would be a bug (a crash from inside a library fails loudly here).
    """
    rows = []
    lo, hi = scorer.output_range
    for what, g, h in BAD_INPUTS:
        if g is None:
            g = [_long_text(long_words)]
        try:
            v = float(scorer.score(g, h, progress=False)[0])
        except (TypeError, ValueError) as exc:
            rows.append({"input": what, "outcome": "error", "detail": f"{type(exc).__name__}: {exc}"})
            continue
        aux = {k: int(a[0]) for k, a in scorer.last_aux().items() if k.startswith("aux_n_")}
        if v == scorer.empty_score and what.split()[0] in ("empty", "white", "control", "zero-width"):
            rows.append({"input": what, "outcome": "empty score", "detail": f"{v:g} (empty_score)"})
        else:
            ok = np.isfinite(v) and lo <= v <= hi
            extra = f"; {aux}" if aux else ""
            rows.append({"input": what, "outcome": "scored" if ok else "OUT OF RANGE",
                         "detail": f"{v:.4f} in [{lo:g}, {hi:g}]{extra}"})
    return pd.DataFrame(rows)


def scale_table(res: dict | None = None) -> pd.DataFrame:
    """``benchmarks/bench_scale.py``'s runs (one process, then 1 and 2 local Ray workers): pairs/s, the
    marginal rate without start-up, and whether each run's cache is byte-identical to the local one."""
    res = res if res is not None else load("scale")
    if res is None:
        return pd.DataFrame({"note": ["benchmarks/bench_scale.py has not been run"]})
    cols = ["engine", "workers", "pairs", "seconds", "pairs_per_second", "marginal_pairs_per_second",
            "identical_to_local"]
    return pd.DataFrame(res["results"])[cols]


def scale_facts(res: dict | None = None) -> dict:
    """The machine the scale-out benchmark ran on and what it measured: ``cores``, the 1-minute load average at the
    start and end (``load_start``, ``load_end``), the marginal ``speedup`` of 2 over 1 workers and the ``ray``
    version; every value None when the benchmark has not been run."""
    res = res if res is not None else load("scale")
    if res is None:
        return dict.fromkeys(("cores", "load_start", "load_end", "speedup", "ray"))
    return {"cores": res["cpu_count"], "load_start": res["load_average_start"][0],
            "load_end": res["load_average_end"][0], "speedup": res["marginal_speedup_2_vs_1_workers"],
            "ray": res["ray"]}


def peer_cell(by: pd.DataFrame, comparison: str, column: str, fmt: str = "{:.2f}") -> str:
    """One cell of :func:`peer_table` (indexed by ``comparison``) as text, or ``not measured``."""
    return fmt.format(by.loc[comparison, column]) if comparison in by.index else "not measured"


def peer_met(by: pd.DataFrame, comparison: str) -> bool | None:
    """Whether a peer comparison (a row of :func:`peer_table` indexed by ``comparison``) meets its speed target;
    None when it was not measured."""
    return bool(by.loc[comparison, "met"]) if comparison in by.index else None


def gpu_table(res: dict | None = None) -> pd.DataFrame:
    """``benchmarks/bench_gpu.py``'s throughput rows (tokens/s and the share of the measured bf16 matmul rate);
    empty when no GPU run is recorded."""
    res = res if res is not None else load("bench_gpu")
    cols = ["model", "checkpoint", "batch_size", "seq", "tokens_per_second", "achieved_tflops",
            "fraction_of_matmul_rate"]
    if not res:
        return pd.DataFrame(columns=cols)
    return pd.DataFrame(res["results"])[cols]


def gpu_facts(res: dict | None = None) -> dict:
    """``bench_gpu.py``'s machine: ``device``, ``torch``, ``cuda``, the measured bf16 matmul rate
    (``matmul_tflops``) and its shape (``matmul``); every value None when no GPU run is recorded."""
    res = res if res is not None else load("bench_gpu")
    if not res:
        return dict.fromkeys(("device", "torch", "cuda", "matmul_tflops", "matmul"))
    return {"device": res["device"], "torch": res["torch"], "cuda": res["cuda"],
            "matmul_tflops": res["measured_matmul_tflops"], "matmul": res["matmul"]}


def gpu_smoke(res: dict | None = None) -> pd.DataFrame:
    """``bench_gpu.py``'s scorer smoke run on the device: ``scorer``, ``dtype`` and ``ok`` (True, False, or None
    when skipped), one row per run; empty when no GPU run is recorded."""
    res = res if res is not None else load("bench_gpu")
    rows = [{"scorer": s["scorer"], "dtype": s["dtype"], "ok": s["ok"]} for s in (res or {}).get("scorer_smoke", [])]
    return pd.DataFrame(rows, columns=["scorer", "dtype", "ok"]).astype({"ok": object})


# The tfc side's input path in the recorded GPU runs, by the run's time (runs from before bench_peers.py wrote
# ``tfc_input_path`` itself): what changed between them, so the runs table can say which code each row timed.
# A change to the AlignScore engine's batching or copies adds a row here (bench_peers.py records the last).
INPUT_PATHS = (("", "tokenizer.pad, blocking copies"),
               ("2026-11-26T23:50:00Z", "pad_batch, blocking copies"),
               ("2026-11-26T23:59:30Z", "pad_batch, pinned non-blocking copies"))


def input_path(res: dict) -> str:
    """The tfc side's input path of one bench_peers run: its own record, else :data:`INPUT_PATHS` by run time."""
    if res.get("tfc_input_path"):
        return res["tfc_input_path"]
    at = min((r.get("run_at") or "" for r in res.get("results", [])), default="")
    return [name for start, name in INPUT_PATHS if at >= start][-1]


def gpu_peer_summary(res: dict | None = None) -> dict:
    """The figures of ``bench_peers.py --device cuda`` (``bench_peers_gpu*.json``): tfc's alignscore against the
    per-example loop on a GPU. From the first run (``res``, by default ``bench_peers_gpu.json``): ``gpu``, ``pairs``,
    ``rounds``, ``threads``, seconds per side at fp32 (``tfc_s``, ``loop_s``) and tfc's with the fast preset
    (``fast_tfc_s``), the two ratios (``ratio``, ``fast_ratio``), the speed ``target`` and ``same_units_max_diff``
    (the largest |score difference| on greedy chunks). From every recorded run (:func:`gpu_peer_runs`; only when
    ``res`` is not given) see :func:`_gpu_runs_summary`. ``path`` is the current input path (the last of
    :data:`INPUT_PATHS`). ``met``: the target is reached by a current-path run at fp32 where there is one, else by
    the first run (fp32 or the fast preset). A figure not recorded is None: every one when no run is."""
    recorded = res is None          # the committed runs: compare with the others recorded beside it
    res = res if res is not None else load("bench_peers_gpu")
    out = dict.fromkeys(GPU_SUMMARY_KEYS)
    out["path"] = INPUT_PATHS[-1][1]
    by = {r["comparison"]: r for r in (res or {}).get("results", [])}
    a, f = by.get("alignscore"), by.get("alignscore/fast") or {}
    if a is None:
        return out
    out.update(gpu=(res.get("machine") or {}).get("cuda") or res.get("device"), pairs=a["pairs"],
               rounds=res.get("rounds"), threads=res.get("torch_threads"), tfc_s=a["tfc_seconds"],
               loop_s=a["peer_seconds"], ratio=a["ratio"], fast_tfc_s=f.get("tfc_seconds"), fast_ratio=f.get("ratio"),
               target=a["target"], same_units_max_diff=(a.get("agreement_same_units") or {}).get("max_abs_diff"),
               met=bool(a["met"] or f.get("met")))
    if recorded:
        out.update(_gpu_runs_summary(gpu_peer_runs(), a["target"], out["met"]))
    return out


# The keys of gpu_peer_summary, in the order the page reads them.
GPU_SUMMARY_KEYS = ("gpu", "pairs", "rounds", "threads", "tfc_s", "loop_s", "ratio", "fast_tfc_s", "fast_ratio",
                    "target", "same_units_max_diff", "path", "runs_pairs", "path_runs", "path_gpus", "path_at_target",
                    "path_below_batches", "path_min", "path_max", "path_fast_min", "path_fast_max",
                    "path_not_timed_on", "old_best", "old_best_gpu", "old_best_path", "loop_min", "loop_max", "met")


def _gpu_runs_summary(runs: pd.DataFrame, target: float, met: bool) -> dict:
    """From :func:`gpu_peer_runs`: on the largest sample (``runs_pairs`` pairs), the current input path's runs
    (``path_runs``), their GPUs, how many reach ``target`` at fp32 (``path_at_target``), the batch sizes of those
    that do not, the fp32 and fast-preset ranges and the GPUs with no such run (``path_not_timed_on``); over all
    samples, the best fp32 run of the earlier paths (``old_best``, its GPU and path); the loop's time range on the
    largest sample (``loop_min``, ``loop_max``); and ``met`` (by the current path's fp32 runs, if any)."""
    if not len(runs):
        return {}
    full = runs[runs["pairs"] == runs["pairs"].max()]
    now = full[full["input path"] == INPUT_PATHS[-1][1]]
    old = runs[runs["input path"] != INPUT_PATHS[-1][1]]
    ok = now["× fp32"] >= target
    num = (lambda col, how: float(getattr(now[col], how)()) if len(now) else None)
    out = {"runs_pairs": int(full["pairs"].iloc[0]), "path_runs": len(now),
           "path_gpus": sorted(set(now["gpu"].dropna())), "path_at_target": int(ok.sum()),
           "path_below_batches": sorted({int(b) for b in now.loc[~ok, "batch"]}),
           "path_min": num("× fp32", "min"), "path_max": num("× fp32", "max"),
           "path_fast_min": num("× fast", "min"), "path_fast_max": num("× fast", "max"),
           "path_not_timed_on": sorted(set(runs["gpu"].dropna()) - set(now["gpu"].dropna())),
           "loop_min": float(full["loop s"].min()), "loop_max": float(full["loop s"].max()),
           "met": bool(ok.any()) if len(now) else met}
    if len(old):
        best = old.loc[old["× fp32"].idxmax()]
        out.update(old_best=float(best["× fp32"]), old_best_gpu=best["gpu"] if pd.notna(best["gpu"]) else None,
                   old_best_path=best["input path"])
    return out


def text_cells(values: dict, formats: dict[str, str], prefix: str = "", missing: str = "not recorded") -> dict[str, str]:
    """``values`` as the text a page glues, ``{prefix + key: text}``: a value through its format in ``formats``
    (``str`` without one), a list joined with commas (``none`` when empty), None as ``missing``."""
    def cell(key, value):
        if value is None:
            return missing
        if isinstance(value, (list, tuple)):
            return ", ".join(map(str, value)) or "none"
        return formats.get(key, "{}").format(value)

    return {prefix + k: cell(k, v) for k, v in values.items()}


def gpu_peer_runs() -> pd.DataFrame:
    """Every recorded GPU run of the AlignScore comparison (``bench_peers_gpu*.json``): pairs, CPU threads, the tfc
    side's input path (:func:`input_path`), seconds per side and the two ratios (fp32 and the fast preset), one
    row per run, sorted by pairs, threads, batch size and time."""
    cols = ["run", "gpu", "input path", "pairs", "threads", "batch", "tfc s (fp32)", "tfc s (fast)", "loop s",
            "× fp32", "× fast", "run at"]
    rows = []
    for p in sorted(results_dir().glob("bench_peers_gpu*.json")):
        res = json.loads(p.read_text())
        by = {r["comparison"]: r for r in res.get("results", [])}
        a, f = by.get("alignscore"), by.get("alignscore/fast") or {}
        if a is None:
            continue
        rows.append({"run": p.stem, "gpu": (res.get("machine") or {}).get("cuda") or res.get("device"),
                     "input path": input_path(res), "pairs": a["pairs"], "threads": res.get("torch_threads"),
                     "batch": res.get("align_batch_size") or 32, "tfc s (fp32)": a["tfc_seconds"],
                     "tfc s (fast)": f.get("tfc_seconds"), "loop s": a["peer_seconds"], "× fp32": a["ratio"],
                     "× fast": f.get("ratio"), "run at": a.get("run_at")})
    return pd.DataFrame(rows, columns=cols).sort_values(["pairs", "threads", "batch", "run at"], ignore_index=True)


REPRODUCE_TARGET_MINUTES = 20.0     # make reproduce DEVICE=cuda on an H100, end to end


def reproduce_summary(target_minutes: float = REPRODUCE_TARGET_MINUTES) -> pd.DataFrame:
    """``make reproduce``'s measured time per device, one row per staged record ``bench_reproduce_<device>.json``
    (written by ``benchmarks/bench_book.py --reproduce --stage ...``): ``device`` (the devices its stages ran on),
    ``minutes`` over the stages measured so far, ``complete`` (every stage and notebook measured), ``within
    target`` (``minutes <= target_minutes``; None while partial), ``stages missing`` (a count) and ``missing``
    (their names). Empty when no record exists; raises ``ValueError`` on a record that cannot be read."""
    cols = ["device", "minutes", "complete", "within target", "stages missing", "missing"]
    rows = []
    for f in sorted(results_dir().glob("bench_reproduce_*.json")):
        try:
            r = json.loads(f.read_text())
        except (OSError, ValueError) as e:
            raise ValueError(f"{f}: not a readable staged record ({e})") from e
        minutes, complete, miss = r.get("total_seconds", 0.0) / 60, bool(r.get("complete")), list(r.get("missing", []))
        rows.append({"device": ", ".join(r.get("devices", [])) or f.stem.removeprefix("bench_reproduce_"),
                     "minutes": minutes, "complete": complete,
                     "within target": minutes <= target_minutes if complete else None,
                     "stages missing": len(miss), "missing": miss})
    return pd.DataFrame(rows, columns=cols)
