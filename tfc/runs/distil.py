"""The stronger shipped checker: an MPNet-base teacher distilled into MiniLM-L6, as one job on a GPU machine.

Three commands, as for the other GPU runs (:mod:`tfc.runs.gpu`):

``tfc gpu distil-pack`` (here)
    builds the distillation pool (:func:`tfc.train.distil.build_pool`: leakage-filtered, from the labelled mix and
    training-side text) and writes a bundle: the teacher's and the student's base encoders as int8 weight-only
    tensors, the labelled mix, the pool and the plan (:class:`DistilPlan`), with a sha256 manifest. One transfer
    to the GPU machine carries at most 64 MiB, and the MPNet base alone is about 105 MB as int8, so the bundle is
    cut into volumes of at most :data:`VOLUME_BYTES` (a file too large for one is cut into parts); each volume
    travels in its own call, and what an earlier call left on the machine stays there while it is held.

``tfc gpu distil`` (there)
    joins the volumes, checks the manifest, and runs each stage once (a stage whose output exists is skipped, so a
    job cut short goes on where it stopped): the teacher trained by the one engine (bf16 autocast), the teacher's
    3-way distribution on every pool pair (:func:`tfc.train.distil.label_pool`), the student trained on those
    distributions at the plan's temperature beside the mix's human labels, the two records (recipe, card,
    training summary, identity), and the student's export (fp16 weights in parts, record, log). The teacher's
    weights (about 220 MB) do not fit what comes back; its record does.

``tfc gpu unpack`` (here)
    puts the student in place (the same export format as every GPU run). Its reading is then chosen on
    training-side dev data (``tfc train aggregation``), it is scored on the TRUE and SummaC sets on this CPU, and
    a release packs it within the weights budget (``tfc models release``).
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from tfc import config
from tfc.models.release import sha256_file
from tfc.runs import gpu as G

BUNDLE_FORMAT = "tfc-distil-bundle"
VOLUME_BYTES = 48 * 2 ** 20    # one volume and the tracked tree (without caches and releases) fit one 64 MiB transfer
VOLUME_FILE = "VOLUME.json"
POOL, PLAN, LABELS = "pool-extra.parquet", "plan.json", "labels"   # the pool's pairs from outside the mix
TEACHER_BASE, STUDENT_BASE = "base-teacher", "base-student"


@dataclass(frozen=True)
class DistilPlan:
    """What a distillation job asks: names, bases, the mix, the pool's caps and both runs' settings."""

    teacher: str = "sent-mpnet-teacher"
    student: str = "sent-minilm-distil"
    teacher_base: str = "mpnet"
    student_base: str = "minilm"
    mix: str = "sentence-v2.parquet"      # the mix of every human-labelled source, contrast and long premises
    tasks: tuple[str, ...] = ("3way", "bin", "reg")
    teacher_epochs: float = 2.0
    teacher_lr: float = 3e-5
    teacher_minutes: float = 4.0          # the budgets keep the job inside one lent device's time
    student_epochs: float = 3.0
    student_lr: float = 1e-4
    student_minutes: float = 4.0
    batch_size: int = 128
    max_length: int = 128
    temperature: float = 2.0
    wecheck_cap: int | None = None        # every leakage-filtered WeCheck dialogue output
    doc_cap: int = 20000
    seed: int = 0
    compared_with: str = "tfc/sent-minilm-v8-int8"

    @classmethod
    def read(cls, path) -> "DistilPlan":
        """The plan a bundle carries (``plan.json``)."""
        raw = json.loads(Path(path).read_text())
        return cls(**{**raw, "tasks": tuple(raw["tasks"])})

    def role(self, role: str) -> dict:
        """The run of ``role`` ("teacher" or "student"): name, base, epochs, lr, time cap, the mix it reads and
        the question it asks (what its record says)."""
        if role == "teacher":
            return {"name": self.teacher, "base": self.teacher_base, "epochs": self.teacher_epochs,
                    "lr": self.teacher_lr, "minutes": self.teacher_minutes,
                    "mix": "every human-labelled sentence source + word-order contrast + leave-one-out passages + "
                           "teacher targets",
                    "question": f"As a teacher for the shipped MiniLM: how far does a {self.teacher_base} encoder "
                                "trained on every human-labelled source and long premises read the TRUE sets?"}
        if role == "student":
            return {"name": self.student, "base": self.student_base, "epochs": self.student_epochs,
                    "lr": self.student_lr, "minutes": self.student_minutes,
                    "mix": f"tfc/{self.teacher}'s 3-way distributions on the distillation pool + the mix's human labels",
                    "question": f"Does a {self.student_base} student of the {self.teacher_base} teacher's 3-way "
                                f"distributions (temperature {self.temperature:g}) on the distillation pool, with the "
                                f"human labels, beat {self.compared_with} within the same size?"}
        raise ValueError(f"role must be 'teacher' or 'student'; got {role!r}")


# ---- pack (here) ----------------------------------------------------------------------------------

def pack(plan: DistilPlan = DistilPlan(), out=None, volume_bytes: int = VOLUME_BYTES, sample: int | None = None) -> dict:
    """Write the bundle (``out``, default ``.gpu-distil``, git-ignored) and its volumes (``<out>-volumes/1..k``);
    returns the manifest with the volumes' sizes. ``sample``: rows per training source the pool reads (tests)."""
    from tfc.train.distil import build_pool
    from tfc.train.mix import load_mix

    out = Path(out or config.REPO_ROOT / ".gpu-distil")
    mix_file = config.artifacts_dir() / "mixes" / plan.mix
    if not mix_file.is_file():
        raise FileNotFoundError(f"{mix_file}: build it first (`tfc train mix --kind sentence --version 2 --out {mix_file}`)")
    mix, _ = load_mix(mix_file)
    work = out.with_name(out.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    pool, report = build_pool(mix, seed=plan.seed, wecheck_cap=plan.wecheck_cap, doc_cap=plan.doc_cap, sample=sample)
    # the mix's own pairs travel once, in the mix: the job rebuilds the pool (tfc.train.distil.assemble_pool)
    pool[pool["source"] != "pool/mix"].to_parquet(work / POOL, index=False)
    (work / (POOL + ".json")).write_text(json.dumps(report, indent=1, default=str) + "\n")
    for f in (mix_file, Path(str(mix_file) + ".json")):
        shutil.copy2(f, work / f.name)
    (work / PLAN).write_text(json.dumps(dataclasses.asdict(plan), indent=1) + "\n")
    bases = {TEACHER_BASE: G._pack_base(plan.teacher_base, work / TEACHER_BASE),
             STUDENT_BASE: G._pack_base(plan.student_base, work / STUDENT_BASE)}
    man = G._manifest(work, {"format": BUNDLE_FORMAT, "bases": bases, "pool_rows": int(len(pool)),
                             "commit": G._git_commit()})
    shutil.rmtree(out, ignore_errors=True)
    work.replace(out)
    vols = split_volumes(out, out.with_name(out.name + "-volumes"), volume_bytes)
    return {**man, "volumes": {str(v): G.bundle_bytes(v) for v in vols}}


def _blocks(path: Path, size: int):
    """The file's bytes in blocks of at most ``size``; an empty file is one empty block."""
    with open(path, "rb") as fh:
        block = fh.read(size)
        yield block
        while block := fh.read(size):
            yield block


def split_volumes(folder, dest, volume_bytes: int = VOLUME_BYTES) -> list[Path]:
    """Cut ``folder`` into volumes ``dest/1..k`` of at most ``volume_bytes`` each: files whole where they fit,
    else in parts (``<file>.partN``); each volume's ``VOLUME.json`` says which file each part belongs to."""
    folder, dest = Path(folder), Path(dest)
    if volume_bytes < 2 ** 20:
        raise ValueError("volume_bytes must be at least 1 MiB")
    shutil.rmtree(dest, ignore_errors=True)
    vols: list[dict] = []
    chunk = volume_bytes - 2 ** 16          # leaves room for the volume's own small files
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = f.relative_to(folder).as_posix()
        for i, block in enumerate(_blocks(f, chunk)):
            if not vols or vols[-1]["bytes"] + len(block) > volume_bytes:
                vols.append({"bytes": 0, "files": {}})
            target = dest / str(len(vols)) / f"{rel}.part{i}"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(block)
            vols[-1]["files"][f"{rel}.part{i}"] = {"file": rel, "part": i, "sha256": sha256_file(target)}
            vols[-1]["bytes"] += len(block)
    for k, v in enumerate(vols, start=1):
        (dest / str(k) / VOLUME_FILE).write_text(json.dumps({"volume": k, "of": len(vols), **v}, indent=1) + "\n")
    return [dest / str(k) for k in range(1, len(vols) + 1)]


def gather(volumes, out) -> dict:
    """Join the volumes (``volumes/1..k``) into the bundle ``out`` and check it against its manifest; a missing
    volume or part, or a changed one, is refused by name. Returns the manifest."""
    volumes, out = Path(volumes), Path(out)
    found = sorted((p for p in volumes.iterdir() if (p / VOLUME_FILE).is_file()), key=lambda p: int(p.name))
    if not found:
        raise FileNotFoundError(f"{volumes}: no volumes (folders with {VOLUME_FILE})")
    metas = [json.loads((p / VOLUME_FILE).read_text()) for p in found]
    want = metas[0]["of"]
    missing = sorted(set(range(1, want + 1)) - {m["volume"] for m in metas})
    if missing:
        raise FileNotFoundError(f"{volumes}: volumes {missing} of {want} are not here (carry each in its own call)")
    parts: dict[str, list] = {}
    for p, m in zip(found, metas):
        for name, meta in m["files"].items():
            if sha256_file(p / name) != meta["sha256"]:
                raise ValueError(f"{p / name} does not match its sha256 in {VOLUME_FILE}")
            parts.setdefault(meta["file"], []).append((meta["part"], p / name))
    shutil.rmtree(out, ignore_errors=True)
    for rel, ps in parts.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(out / rel, "wb") as fh:
            for _, p in sorted(ps):
                fh.write(p.read_bytes())
    man = G.verify(out)
    if man.get("format") != BUNDLE_FORMAT:
        raise ValueError(f"{out}: format {man.get('format')!r}, expected {BUNDLE_FORMAT!r}")
    return man


# ---- the job (there) ------------------------------------------------------------------------------

def job(volumes, work, device: str = "cuda", smoke: bool = False, log=print) -> list[Path]:
    """Every stage of the distillation (module doc) under ``work``; returns the export folders."""
    from unittest import mock

    work = Path(work)
    with mock.patch.dict(os.environ, G.job_env(work)):
        bundle = work / "bundle"
        man = G.verify(bundle) if (bundle / G.MANIFEST).is_file() else gather(volumes, bundle)
        plan = DistilPlan.read(bundle / PLAN)
        G._seed_records(work)
        bases = {k: G.restore_base(bundle / k, work / k) for k in (TEACHER_BASE, STUDENT_BASE)}
        return run_stages(plan, bundle, work, bases, man, device, smoke, log)


def run_stages(plan: DistilPlan, bundle: Path, work: Path, bases: dict, man: dict, device: str, smoke: bool,
               log) -> list[Path]:
    import pandas as pd

    from tfc.runs.inhouse_models import write_record
    from tfc.train.distil import assemble_pool, label_pool, pool_sha256, student_frame
    from tfc.train.mix import load_mix

    mix, mix_report = load_mix(bundle / plan.mix)
    pool_report = json.loads((bundle / (POOL + ".json")).read_text())
    pool, _ = assemble_pool(mix, pd.read_parquet(bundle / POOL))
    if pool_sha256(pool) != pool_report["sha256"]:
        raise ValueError(f"{bundle}: the pool rebuilt from the mix differs from the one packed (sha256)")
    if smoke:
        mix = mix.groupby("task", group_keys=False).head(32).reset_index(drop=True)
        pool = pool.head(64)
    t0 = time.time()
    _train(plan, "teacher", mix, bases[TEACHER_BASE], device, smoke, mix_report, log)
    labelled = label_pool(pool, f"tfc/{plan.teacher}", work / LABELS, batch_size=256 if device != "cpu" else 32,
                          device=device, dtype="bf16" if device != "cpu" else "fp32", max_length=plan.max_length)
    log(json.dumps({"stage": "labels", "rows": int(len(labelled)), "seconds": round(time.time() - t0, 1)}))
    frame = student_frame(labelled, mix)
    _train(plan, "student", frame, bases[STUDENT_BASE], device, smoke,
           {"mix": mix_report, "pool": pool_report, "teacher": f"tfc/{plan.teacher}"}, log)
    outs = []
    for role in ("teacher", "student"):
        name = plan.role(role)["name"]
        write_recipe(plan, role, man)
        write_record(name, retrain="gpu distil")
        outs.append(G.export_variant(name, work, weights=role == "student"))
    log(json.dumps({"stage": "exported", "folders": [str(o) for o in outs], "seconds": round(time.time() - t0, 1)}))
    return outs


def _train(plan: DistilPlan, role: str, frame, base: Path, device: str, smoke: bool, report: dict, log):
    """Train the teacher or the student with the one engine (skipped when its checkpoint exists)."""
    from tfc.train import sentence
    from tfc.train.engine import train

    run = plan.role(role)
    name, epochs, lr, minutes = run["name"], run["epochs"], run["lr"], run["minutes"]
    target = config.artifacts_dir() / name
    if (target / "training_summary.json").is_file():
        return
    weights = {t: 1.0 for t in (*plan.tasks, "soft", "dist")}
    cfg = sentence.default_config(name=name, base=str(base), tasks=tuple(plan.tasks), device=device,
                                  dtype="bf16" if device != "cpu" else "fp32", save_dtype="fp16", eval_every=500,
                                  checkpoint_every=0, log_every=50, batch_size=8 if smoke else plan.batch_size, lr=lr,
                                  max_minutes=None if smoke else minutes, loss_weights=weights,
                                  temperature=plan.temperature, num_threads=None, max_length=plan.max_length)
    cfg = dataclasses.replace(cfg, epochs=None if smoke else epochs, max_steps=4 if smoke else cfg.max_steps,
                              eval_rows=8 if smoke else cfg.eval_rows, seed=2022)
    res = train(frame, cfg, out_dir=target, mix_report=report, progress=not smoke)
    s = res.summary
    log(json.dumps({"stage": role, "name": name, "steps": s["steps"], "train_seconds": s["train_seconds"],
                    "stopped_by": s["stopped_by"], "dev": s["dev_eval"]}))


def write_recipe(plan: DistilPlan, role: str, man: dict) -> Path:
    """``results/models/<name>/recipe.json`` of the teacher or the student: what the run asked and started from."""
    run = plan.role(role)
    name = run["name"]
    summary = json.loads((config.artifacts_dir() / name / "training_summary.json").read_text())
    rec = {"checkpoint": f"tfc/{name}", "family": "sentence", "parent": run["base"], "mix": run["mix"],
           "mix_file": plan.mix, "epochs": run["epochs"], "device": summary["device"], "question": run["question"],
           "status": "record only", "compared_with": plan.compared_with}
    if role == "student":
        rec |= {"teacher": f"tfc/{plan.teacher}", "temperature": plan.temperature, "pool_rows": man.get("pool_rows")}
    dst = config.model_records_dir() / name
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "recipe.json").write_text(json.dumps(rec, indent=1) + "\n")
    return dst / "recipe.json"
