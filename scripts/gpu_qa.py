"""A QA reader trained on a lent GPU in one device call (how tfc/qa-minilm-v4 was made).

    .venv/bin/python scripts/gpu_qa.py pack                  # here: the QA set and the MiniLM base (int8) in .gx/qa
    python3 scripts/gpu_qa.py job qa-minilm-v4 --steps 4545 --eval-every 939   # there, repo on PYTHONPATH
    tfc gpu unpack DIR                                         # here: the export that came back
    .venv/bin/python scripts/gpu_qa.py reread qa-minilm-v4 --device-name "an H200"   # here: after the round trip

``tfc train qa --device cuda`` does the same on a GPU machine with the project installed. A lent machine has
neither spaCy nor the data mirror, and a call moves 64 MiB, so ``pack`` builds the self-supervised QA set here
(the rule questions need spaCy) with ``tfc train qa``'s defaults, and carries the base encoder as int8
weight-only tensors (23 MB; dequantised there, as ``tfc gpu`` does). ``job`` trains with ``tfc train qa``'s
recipe at a fixed step count (bf16 autocast), saves fp16 weights and exports them in parts with the card and
record (``tfc.runs.gpu.export_variant``) into ``<work>/export/<name>/``, the folder to bring back. ``reread``
evaluates the weights that came back (fp16, read at fp32) on this CPU and records it as ``weights_round_trip``
beside the device's own reading. The tracked tree must fit the call as well: take the score caches and release
weights out of the index for it (book/retraining.md, "On a GPU machine").
"""
import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pack(out: Path, sample: int, seed: int, long_frac: float) -> None:
    from tfc.runs.gpu import BASE_DIR, _pack_base
    from tfc.train.qa_set import build_qa_set, xquad_frame

    out.mkdir(parents=True, exist_ok=True)
    train_df, heldout, report = build_qa_set(sample=sample, seed=seed, per_pair=2, heldout_pairs=300,
                                             long_frac=long_frac)
    train_df.to_parquet(out / "train.parquet", index=False)
    heldout.to_parquet(out / "heldout.parquet", index=False)
    xquad_frame().to_parquet(out / "xquad.parquet", index=False)
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    _pack_base("minilm", out / BASE_DIR)
    print(f"{out}: {len(train_df):,} training rows, {len(heldout):,} held out")


def job(name: str, bundle: Path, work: Path, steps: int, eval_every: int, device: str, max_minutes: float,
        weights: bool = True) -> None:
    from tfc.runs import gpu

    os.environ.update(gpu.job_env(work))
    import pandas as pd

    from tfc import config
    from tfc.train.checkpoints import convert_checkpoint_dtype
    from tfc.train.qa import QATrainConfig, train_qa

    base = gpu.restore_base(bundle / gpu.BASE_DIR, work / "base")
    (work / "scores").mkdir(parents=True, exist_ok=True)
    cfg = QATrainConfig(name=name, base=str(base), max_length=384, batch_size=32, lr=1e-4, max_steps=steps,
                        max_minutes=max_minutes, seed=2022, device=device, eval_every=eval_every,
                        dtype="bf16" if device == "cuda" else "fp32")
    t = time.perf_counter()
    s = train_qa(pd.read_parquet(bundle / "train.parquet"), cfg, heldout=pd.read_parquet(bundle / "heldout.parquet"),
                 data_report=json.loads((bundle / "report.json").read_text()), progress=False,
                 dev=pd.read_parquet(bundle / "xquad.parquet"))
    print(json.dumps({k: s.get(k) for k in ("steps", "stopped_by", "train_seconds", "examples_per_second", "device")}))
    for what, ev in (("held-out", s["heldout_eval"]), ("XQuAD", s["dev_eval_human"])):
        print(what, json.dumps({k: v for k, v in ev.items() if k != "by_kind"}))
    ckpt = config.artifacts_dir() / name
    convert_checkpoint_dtype(ckpt, "fp16")
    rec = config.model_records_dir() / name
    rec.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ckpt / "training_summary.json", rec / "training_summary.json")
    from tfc import models

    (rec / "identity.json").write_text(json.dumps({    # what unpack checks when the weights stay behind
        "checkpoint": f"tfc/{name}", "identity": models.identity(f"tfc/{name}"),
        "note": "identity of the fp16 weights this record describes" + ("" if weights else "; they were not brought back")},
        indent=1) + "\n")
    out = gpu.export_variant(name, work, weights=weights)
    print("exported", sorted(p.name for p in out.iterdir()), f"{time.perf_counter() - t:.0f} s")


def reread(name: str, bundle: Path, device_name: str, threads: int) -> dict:
    """Evaluate ``tfc/<name>`` (the fp16 weights that came back, upcast to fp32) on this CPU on the bundle's held-out
    pairs and XQuAD, and write the figures as ``weights_round_trip`` into its training summary: the committed
    record and, where the weights are installed, the copy beside them (which ``tfc.models.training_record`` reads
    first)."""
    import pandas as pd
    import torch

    from tfc import config
    from tfc.runs.gpu import PART_BYTES
    from tfc.scorers.qgqa import ExtractiveQA
    from tfc.train.qa import evaluate_qa

    torch.set_num_threads(threads)
    parts = -(-(config.artifacts_dir() / name / "model.safetensors").stat().st_size // PART_BYTES)
    qa = ExtractiveQA(f"tfc/{name}", max_length=384, stride=128, device="cpu").load()  # train_qa's own reading
    ev = evaluate_qa(qa, pd.read_parquet(bundle / "heldout.parquet"))
    dev = evaluate_qa(qa, pd.read_parquet(bundle / "xquad.parquet"))
    trip = {"how": f"trained on {device_name} (bf16 autocast, fp32 weights); brought back as fp16 in {parts} parts and upcast "
                   "to fp32 here, so the identity is that of the fp16-rounded weights",
            "cpu_reeval_after_round_trip": {
                "heldout_f1": round(ev["f1"], 4), "cross_f1": round(ev["by_kind"]["cross"]["f1"], 4),
                "contrast_f1": round(ev["by_kind"]["contrast"]["f1"], 4), "xquad_f1": round(dev["f1"], 4)}}
    for base in (config.model_records_dir(), config.artifacts_dir()):
        p = base / name / "training_summary.json"
        if p.is_file():
            s = json.loads(p.read_text())
            s["weights_round_trip"] = trip
            p.write_text(json.dumps(s, indent=2, default=str) + "\n")
    print(json.dumps(trip))
    return trip


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--out", type=Path, default=Path(".gx/qa"))
    p.add_argument("--sample", type=int, default=3000)
    p.add_argument("--seed", type=int, default=2022)
    p.add_argument("--long-frac", type=float, default=0.25)
    j = sub.add_parser("job")
    j.add_argument("name")
    j.add_argument("--bundle", type=Path, default=Path(".gx/qa"))
    j.add_argument("--work", type=Path, default=Path("/tmp/gj"))
    j.add_argument("--steps", type=int, required=True)
    j.add_argument("--eval-every", type=int, default=0)
    j.add_argument("--device", default="cuda")
    j.add_argument("--max-minutes", type=float, default=6.0, help="a safety stop inside the device call's limit")
    j.add_argument("--no-weights", action="store_true",
                   help="bring back the card, record and dev curve only (a run made to read its curve)")
    r = sub.add_parser("reread")
    r.add_argument("name")
    r.add_argument("--bundle", type=Path, default=Path(".gx/qa"))
    r.add_argument("--device-name", default="a GPU", help="where it trained, for the record (e.g. 'an H200')")
    r.add_argument("--threads", type=int, default=2)
    a = ap.parse_args(argv)
    if a.cmd == "pack":
        pack(a.out, a.sample, a.seed, a.long_frac)
    elif a.cmd == "reread":
        reread(a.name, a.bundle, a.device_name, a.threads)
    else:
        job(a.name, a.bundle, a.work, a.steps, a.eval_every, a.device, a.max_minutes, weights=not a.no_weights)


if __name__ == "__main__":
    main()
