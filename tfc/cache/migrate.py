"""Move score caches to the signature their configuration has today: ``tfc cache migrate``.

A cache directory is named by its scorer's signature, a hash of the whole configuration (every field but the
runtime ones, plus the checkpoint's identity). When a configuration field is added, renamed or dropped, a cache
written before sits under a signature that the same configuration no longer has, and the book would not find
it. This module moves such caches without recomputing a score:

1. each sidecar's ``config`` is read through :data:`SCHEMA`, the record of every change of a config's fields:
   ``renamed`` (old key -> new key; both present must agree), ``dropped`` (old key -> the values it may have had
   while meaning what the configuration means without it; any other value is refused) and ``absent`` (the value
   a field had in the computation before it existed, for sidecars written before it);
2. the scorer is rebuilt from that config (:func:`tfc.scorers.from_config`), and its signature computed;
3. when it differs from the directory's, the parquet and the sidecar (its ``signature`` and ``config``
   rewritten, the old signature kept in ``migrated_from``) move there, atomically per file; a sidecar's
   ``derived_from`` signature is rewritten too.

A target that already holds the same rows (same ``inputs_sha256`` and scores) makes the old copy a duplicate,
which is removed; a target with other scores is a conflict: both stay, and it is reported (two caches claim one
configuration; one of them was computed with a checkpoint whose identity has changed since). A cache whose
configuration the schema leaves unchanged but whose signature moved was computed with a checkpoint's earlier weights:
it is not moved (its scores are not the new weights') but reported as skipped, for :mod:`tfc.cache.rescore`. The
migration is idempotent: a second run moves nothing.

A shipped calibration map names the raw configuration it was fitted for (``raw_signature``, checked when a
calibrated scorer loads it). :func:`migrate_calibrations` reads each map's ``raw_scorer`` and ``raw_config``
through the same schema and, where the signature moved, rewrites the map's ``raw_signature`` and ``raw_config``
and its release's manifest (the map's coefficients are unchanged). :func:`migrate_references` does the same for the
ensemble's shipped reference distributions, which are keyed by their member's signature, and
:func:`rewrite_records` replaces the moved signatures in the model records (``results/models``), which name the
caches their runs wrote.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

_QG_TEMPLATE = "answer: {answer}  context: {context}"
_ROUGE_ABSENT = {"tokenizer": "rouge_score", "beta": 1.0, "normalize": "none"}
_BLEU_ABSENT = {"effective_order": True, "reference_case": "keep", "normalize": "none"}
_QGQA_RENAMED = {"qa_checkpoint": "checkpoint"}

# scorer name -> the changes of its configuration's fields (see the module doc)
SCHEMA: dict[str, dict[str, dict]] = {
    "q2": {"renamed": _QGQA_RENAMED, "dropped": {"no_valid_score": (0.0,)},
           "absent": {"qg_template": _QG_TEMPLATE, "qg_rules": "v1", "candidate_rule": "tfc", "no_questions": "zero",
                      "steps": "tfc", "q_per_candidate": "multi"}},
    "qags": {"renamed": _QGQA_RENAMED, "dropped": {"no_question_score": (0.0,)},
             "absent": {"qg_template": _QG_TEMPLATE, "qg_rules": "v1", "nli_checkpoint": "tfc/nli-minilm",
                        "nli_label_names": None, "no_questions": "zero", "steps": "tfc"}},
    "summac-zs": {"absent": {"reduction": "cell", "generated_reduction": "mean", "calibration": None}},
    "summac-conv": {"absent": {"reduction": "cell", "generated_reduction": "mean", "calibration": None}},
    "nli": {"absent": {"head": "auto", "calibration": None}},
    "wecheck": {"absent": {"head": "auto", "calibration": None, "long_grounding": "chunk"}},
    "alignscore": {"absent": {"calibration": None}},
    "bertscore": {"absent": {"dtype": "float32"}},
    **{n: {"absent": _ROUGE_ABSENT} for n in ("rouge1", "rouge2", "rougeL", "rougeL-coco", "rougeL-squad")},
    **{n: {"absent": _BLEU_ABSENT} for n in ("bleu4", "bleu4-squad", "bleu-q2")},
}


class MigrationError(ValueError):
    """A sidecar's configuration cannot be read through the schema."""


def current_config(name: str, config: dict) -> dict:
    """``config`` (a sidecar's) in today's schema of scorer ``name``."""
    rules = SCHEMA.get(name, {})
    cfg = dict(config)
    for old, new in rules.get("renamed", {}).items():
        if old in cfg:
            value = cfg.pop(old)
            if new in cfg and cfg[new] is not None and cfg[new] != value:
                raise MigrationError(f"{name}: {old}={value!r} and {new}={cfg[new]!r} disagree")
            cfg[new] = value
    for old, allowed in rules.get("dropped", {}).items():
        if old in cfg:
            value = cfg.pop(old)
            if value not in allowed:
                raise MigrationError(f"{name}: {old}={value!r} has no meaning today (only {allowed} migrate)")
    for key, value in rules.get("absent", {}).items():
        cfg.setdefault(key, value)
    return cfg


def rebuilt(name: str, config: dict):
    """The scorer a sidecar's config describes today."""
    from tfc import scorers

    return scorers.from_config(name, current_config(name, config))


@dataclass
class Report:
    moved: list[dict] = field(default_factory=list)
    duplicates: list[dict] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"moved": self.moved, "duplicates": self.duplicates, "conflicts": self.conflicts,
                "unchanged": self.unchanged, "skipped": self.skipped}


def _same_scores(a: Path, b: Path) -> bool:
    x, y = pd.read_parquet(a), pd.read_parquet(b)
    if len(x) != len(y):
        return False
    x, y = x.sort_values("id").reset_index(drop=True), y.sort_values("id").reset_index(drop=True)
    return (x["id"].tolist() == y["id"].tolist() and x["input_sha"].tolist() == y["input_sha"].tolist()
            and np.allclose(x["score"].to_numpy(float), y["score"].to_numpy(float), rtol=0, atol=0, equal_nan=True))


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    os.replace(tmp, path)


def _plan(root: Path) -> list[tuple[Path, dict, str]]:
    """Every sidecar under ``root`` with its content and the signature its configuration has today."""
    out = []
    for side in sorted(root.glob("*/*/*.json")):
        meta = json.loads(side.read_text())
        name = meta.get("scorer")
        if not name or str(name).startswith("imported") or "config" not in meta:
            continue
        out.append((side, meta, rebuilt(name, meta["config"]).signature))
    return out


def migrate(root=None, dry_run: bool = False) -> Report:
    """Move every cache under ``root`` (default: the score cache) to its configuration's signature."""
    from tfc import config

    root = Path(root or config.cache_dir())
    rep = Report()
    plan = _plan(root)
    renames = {side.parts[-3]: new for side, _, new in plan}
    for side, meta, new in plan:
        old = side.parts[-3]
        parquet = side.with_suffix(".parquet")
        derived = (meta.get("derived_from") or {}).get("signature")
        if new == old and renames.get(derived, derived) == derived:
            rep.unchanged += 1
            continue
        if not parquet.is_file():
            rep.skipped.append({"sidecar": str(side.relative_to(root)), "why": "no parquet beside it"})
            continue
        target = root / new / side.parts[-2] / side.name
        entry = {"from": old, "to": new, "dataset": side.parts[-2], "split": side.stem}
        if new != old and target.is_file():
            (rep.duplicates if _same_scores(parquet, target.with_suffix(".parquet")) else rep.conflicts).append(entry)
            if not dry_run and entry in rep.duplicates:
                parquet.unlink()
                side.unlink()
            continue
        if new != old and current_config(meta["scorer"], meta["config"]) == meta["config"]:
            # nothing in the configuration changed, so a checkpoint's weights did: these are the old weights' scores
            rep.skipped.append({"sidecar": str(side.relative_to(root)), "why": "the configuration is unchanged and "
                                "the signature moved with a checkpoint's weights: score it again (tfc cache rescore)"})
            continue
        rep.moved.append(entry)
        if not dry_run:
            _move(side, meta, target, new, renames)
    if not dry_run:
        for d in sorted(root.glob("*/*"), reverse=True):       # folders left empty
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        for d in sorted(root.glob("*")):
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
    return rep


def _move(side: Path, meta: dict, target: Path, new: str, renames: dict) -> None:
    """Write the sidecar under its new signature (config in today's schema), then move the parquet."""
    old = side.parts[-3]
    scorer = rebuilt(meta["scorer"], meta["config"])
    meta = dict(meta)
    meta["config"] = scorer.config.to_json()
    if new != old:
        meta["signature"] = new
        meta.setdefault("migrated_from", old)
    if meta.get("derived_from", {}).get("signature") in renames:
        meta["derived_from"] = {**meta["derived_from"], "signature": renames[meta["derived_from"]["signature"]]}
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(side.with_suffix(".parquet"), target.with_suffix(".parquet"))
    _write_json(target, meta)
    if target != side:
        side.unlink()


def migrate_calibrations(root=None, dry_run: bool = False) -> list[dict]:
    """Rewrite every shipped calibration map under ``root`` (default: the release folder) whose raw configuration
    has another signature today; returns ``[{"map", "from", "to"}]``. A map without ``raw_config`` is refused."""
    from tfc.models import release
    from tfc.scorers import calibration as C

    root = Path(root) if root else release.release_root()
    out = []
    for path in sorted(root.glob(f"*/{C.FILE}")):
        m = json.loads(path.read_text())
        if "raw_config" not in m or "raw_scorer" not in m:
            raise MigrationError(f"{path}: the map does not record its raw configuration (raw_scorer, raw_config)")
        raw = rebuilt(m["raw_scorer"], m["raw_config"])
        if raw.signature == m["raw_signature"]:
            continue
        out.append({"map": path.parent.name, "from": m["raw_signature"], "to": raw.signature})
        if not dry_run:
            C.write({**m, **C.raw_identity(raw)}, path.parent.name, out_root=root)
    return out


def migrate_references(root=None, dry_run: bool = False) -> list[dict]:
    """Re-key every shipped ensemble reference under ``root`` (default: the release folder) whose members' recorded
    configurations have another signature today; returns ``[{"reference", "from", "to"}]``. A member without its
    ``config`` is refused."""
    import tempfile

    from tfc.models import release
    from tfc.scorers import ensemble as E

    root = Path(root) if root else release.release_root()
    out = []
    for path in sorted(root.glob(f"*/{E.REFERENCE_FILE}")):
        ref = json.loads(path.read_text())
        members = {}
        for sig, m in ref["members"].items():
            if "config" not in m:
                raise MigrationError(f"{path}: member {sig} does not record its configuration")
            scorer = rebuilt(m["name"], m["config"])
            if scorer.signature != sig:
                out.append({"reference": path.parent.name, "from": sig, "to": scorer.signature})
            members[scorer.signature] = {**m, "config": scorer.config.to_json()}
        if members.keys() != ref["members"].keys() and not dry_run:
            with tempfile.TemporaryDirectory() as tmp:
                (Path(tmp) / E.REFERENCE_FILE).write_text(json.dumps({**ref, "members": members}, indent=0) + "\n")
                release.pack_files(tmp, path.parent.name, out_root=root, note=E.REFERENCE_NOTE)
    return out


def renames_of(report: Report) -> dict[str, str]:
    """Old signature -> new signature of every cache a migration moved or found duplicated."""
    return {e["from"]: e["to"] for e in report.moved + report.duplicates if e["from"] != e["to"]}


def rewrite_records(renames: dict[str, str], root=None, dry_run: bool = False) -> list[str]:
    """Replace each old signature by its new one in every JSON and Markdown file under ``root`` (default: the model
    records); returns the files changed. A signature is a whole token (``name.tag.hash10``), so no other text can
    match it."""
    import re

    from tfc import config

    root = Path(root or config.model_records_dir())
    if not renames:
        return []
    pattern = re.compile("|".join(re.escape(k) for k in sorted(renames, key=len, reverse=True)))
    changed = []
    for path in sorted(p for ext in ("*.json", "*.md") for p in root.rglob(ext)):
        text = path.read_text()
        new = pattern.sub(lambda m: renames[m.group(0)], text)
        if new != text:
            changed.append(str(path.relative_to(root)))
            if not dry_run:
                tmp = path.with_name(path.name + f".tmp{os.getpid()}")
                tmp.write_text(new)
                os.replace(tmp, path)
    return changed
