"""``book/retraining.md``, generated from the model records: ``tfc book recipes``.

Every in-house checkpoint has a record under ``results/models/<name>/``: ``training_summary.json`` (what the
training engine wrote: configuration, data, steps, device, time, dev evaluations), its card ``README.md`` and
``identity.json`` (the hash its committed scores are filed under). :func:`render` turns those records into one
page: per model, what it started from, its data, its settings, the device and time it took, whether its weights
ship (a folder under ``results/release/``) or it is a record only, and the command that retrains it where the
code has one. Every number on the page is read from a record or from the code; the prose holds none.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

from tfc import config

PAGE = config.REPO_ROOT / "book" / "retraining.md"
FAMILIES = (("sentence", "Sentence-level models"), ("pairs", "NLI and AlignScore models"),
            ("qa", "QA readers"), ("wecheck", "WeCheck"), ("other", "Other records"))
MIXES = "artifacts/mixes"
# options of `tfc train sentence|nli|alignscore` (tfc.cli.train_inhouse) and of `tfc train qa` (tfc.cli.train), by
# the configuration field they set; the fields left out have no option
PAIR_OPTIONS = ("base", "init", "dev_from", "tasks", "batch_size", "grad_accum", "lr", "max_length", "seed", "epochs",
                "max_steps", "max_minutes", "dtype", "num_threads", "device", "save_dtype", "name")
QA_OPTIONS = ("base", "init", "batch_size", "lr", "max_length", "seed", "max_steps", "max_minutes", "eval_every",
              "checkpoint_every", "doc_stride", "num_threads", "device", "dtype", "freeze", "quant_aware_steps", "name")


# ---- reading the records ------------------------------------------------------------------------

def _read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def load_records(root: Path | None = None) -> list[dict]:
    """One entry per folder of ``root`` (default ``results/models``) holding a training summary or an identity:
    ``folder``, ``summary``, ``identity``, ``recipe`` (its ``recipe.json``, see :func:`tfc.runs.inhouse_models.recipes`;
    empty when absent) and ``card`` (whether a README.md is there)."""
    root = Path(root or config.model_records_dir())
    out = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        summary, ident = _read_json(d / "training_summary.json"), _read_json(d / "identity.json")
        if summary or ident:
            out.append({"folder": d.name, "summary": summary, "identity": ident,
                        "recipe": _read_json(d / "recipe.json"), "card": (d / "README.md").is_file()})
    return out


def release_meta(folder: str, release_root: Path | None = None) -> dict | None:
    """``results/release/<folder>/release.json`` when the weights ship, else None."""
    from tfc.models import release

    d = Path(release_root) / folder if release_root else release.release_dir(folder)
    return _read_json(d / release.META) if (d / release.META).is_file() else None


def family(rec: dict) -> str:
    """sentence | pairs (nli, alignscore) | qa | wecheck | other, from the record's own fields."""
    s = rec["summary"]
    kind = (s.get("mix_report") or {}).get("kind")
    if kind == "sentence":
        return "sentence"
    if kind in ("nli", "alignscore"):
        return "pairs"
    if s.get("objective") == "qa-span" or "task" in s or str(s.get("snapshot_of", "")).startswith("tfc/qa"):
        return "qa"
    if "pool_seconds" in s or "label_model" in (s.get("config") or {}):
        return "wecheck"
    return "other"


def release_parent(rec: dict, by_identity: dict) -> str | None:
    """The record folder whose weights this checkpoint's int8 release was made from (None: not such a release)."""
    src = ((rec["summary"].get("eval_results") or {}).get("release") or {}).get("source_identity")
    parent = by_identity.get(src)
    return parent if parent and parent != rec["folder"] else None


# ---- formatting -----------------------------------------------------------------------------------

def num(x) -> str:
    """A record's number as the page prints it: with thousands separators, floats to the recorded digits."""
    if isinstance(x, bool) or x is None:
        return str(x)
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) >= 1000):
        return f"{int(x):,}"
    return f"{x:,}" if isinstance(x, float) else str(x)


def _metric(x) -> str:
    return f"{x:.3f}" if isinstance(x, float) else num(x)


def _cfg(s: dict) -> dict:
    """The training run's configuration: the engine's where the recipe wraps it (WeCheck, QA), merged."""
    return {**(s.get("engine_config") or {}), **(s.get("config") or {})}


def dev_text(s: dict) -> str | None:
    """The dev evaluations of a record, one ``set: metric value`` group each (nested breakdowns left out)."""
    ev = s.get("dev_eval") or s.get("dev_eval_human")
    if not ev:
        return None
    if "f1" in ev and not isinstance(ev.get("f1"), dict):
        ev = {"XQuAD": ev}
    parts = []
    for name, m in ev.items():
        if not isinstance(m, dict):
            continue
        rows = f" ({num(m['rows'])} rows)" if isinstance(m.get("rows"), int) else ""
        vals = ", ".join(f"{k} {_metric(v)}" for k, v in m.items()
                         if k not in ("rows", "answerable", "no_answer") and isinstance(v, (int, float)) and v is not None)
        parts.append(f"{name}: {vals}{rows}")
    return "; ".join(parts) or None


def time_text(s: dict) -> str | None:
    """Device, threads, training and wall time, throughput and date of a record (what it has of them)."""
    bits = []
    if s.get("device"):
        bits.append(f"{s['device']}" + (f", {s['dtype']}" if s.get("dtype") else ""))
    if s.get("train_seconds") is not None:
        t = f"training {num(float(s['train_seconds']))} s ({num(round(s['train_seconds'] / 60, 1))} min)"
        if s.get("wall_seconds") is not None:
            t += f", wall {num(float(s['wall_seconds']))} s"
        bits.append(t)
    if s.get("examples_per_second") is not None:
        bits.append(f"{num(s['examples_per_second'])} examples/s")
    if s.get("created_utc"):
        bits.append(f"recorded {s['created_utc'][:10]}")
    return "; ".join(bits) or None


# ---- what each record says ------------------------------------------------------------------------

def start_text(rec: dict, parent: str | None) -> str | None:
    s, c = rec["summary"], _cfg(rec["summary"])
    if parent:
        rel = (s.get("eval_results") or {}).get("release") or {}
        return (f"the weights of `tfc/{parent}` (identity `{rel.get('source_identity')}`), quantised "
                f"{rel.get('scheme', 'to int8')}; its training summary repeats that run's")
    if s.get("snapshot_of"):
        return f"a snapshot of the run of `{s['snapshot_of']}` at step {num(s.get('steps'))}"
    if family(rec) == "wecheck" and (s.get("config") or {}).get("base"):
        base = s["config"]["base"]
        return f"`{base}` " + ("(the warm-up model)" if base.startswith("tfc/") else "(the base encoder: no warm-up)")
    if c.get("init"):
        return f"`{c['init']}` (`init`: " + ("its encoder)" if family(rec) == "qa" else "its trained weights and heads)")
    base = s.get("base_model") or c.get("base")
    if base is None:
        return None
    return f"`{base}`" + (f" ({s['base_model_path']})" if s.get("base_model_path") not in (None, base) else "")


def mix_path(rec: dict) -> str | None:
    """Where ``tfc train mix`` puts the record's mix for ``--mix-file`` (None: the record has no saved mix kind)."""
    rep = rec["summary"].get("mix_report") or {}
    kind = rep.get("kind")
    if kind == "sentence":
        return f"{MIXES}/sentence-v{rep.get('version') or 1}.parquet"
    return f"{MIXES}/{kind}.parquet" if kind in ("nli", "alignscore") else None


def data_text(rec: dict) -> str | None:
    s, fam = rec["summary"], family(rec)
    mix, rep, c = s.get("mix") or {}, s.get("mix_report") or {}, _cfg(s)
    if fam in ("sentence", "pairs") and mix:
        v = f" version {rep['version']}" if rep.get("version") else ""
        t = (f"the {rep.get('kind')} mix{v} (seed {rep.get('seed')}): {num(mix.get('rows'))} rows "
             f"({num(mix.get('train_rows'))} train, {num(mix.get('dev_rows'))} dev) from "
             f"{len(mix.get('by_source') or [])} sources, sha256 `{str(mix.get('sha256'))[:16]}`")
        if rep.get("removed_total") is not None:
            t += f"; {num(rep['removed_total'])} rows removed as leakage"
        return t + (f"; dev rows from `{c['dev_from']}`" if c.get("dev_from") else "")
    if fam == "qa" and s.get("data"):
        d = s["data"]
        return (f"the self-supervised QA set from {', '.join(d.get('sources') or [])}: {num(d.get('sample_per_source'))} "
                f"pairs per source (seed {d.get('seed')}), {num(d.get('pairs'))} pairs, {num(s.get('train_rows'))} "
                f"training rows, long-context share {d.get('long_frac')}, mix sha256 `{str(mix.get('sha256'))[:16]}`")
    if fam == "wecheck":
        w = s.get("config") or {}
        return (f"the weak pool of {', '.join(w.get('tasks') or [])} ({num(w.get('pool_sample'))} rows per task"
                f"{', leaked' if w.get('leaked') else ''}), labelled by the {w.get('label_model')} label model from "
                f"{', '.join(w.get('signals') or [])}, noise filter {'on' if w.get('noise_filter') else 'off'}"
                f"{', hard labels' if w.get('hard_labels') else ''}: {num(mix.get('train_rows'))} training rows, "
                f"{num(mix.get('dev_rows'))} held out")
    return None


def settings_text(s: dict) -> str | None:
    c = _cfg(s)
    if not c:
        return None
    bits = []
    if c.get("tasks") and family({"summary": s}) != "wecheck":
        bits.append(f"heads {', '.join(c['tasks'])}")
    if s.get("steps") is not None:
        ep = f"; epochs seen {s['epochs_seen']}" if s.get("epochs_seen") is not None else ""
        bits.append(f"{num(s['steps'])} optimizer steps (stopped by {s.get('stopped_by')}{ep})")
    if c.get("batch_size"):
        bits.append(f"batch {c['batch_size']}" + (f" x {c['grad_accum']}" if c.get("grad_accum", 1) != 1 else ""))
    bits += [f"{k.replace('_', ' ')} {c[k]}" for k in ("lr", "max_length", "seed") if c.get(k) is not None]
    if c.get("freeze"):
        bits.append(f"frozen: {', '.join(c['freeze'])}")
    if c.get("quant_aware_steps"):
        bits.append(f"the last {num(c['quant_aware_steps'])} steps through the release's int8 packing")
    return ", ".join(bits) or None


def weights_text(folder: str, meta: dict | None) -> str:
    if meta is None:
        return "a record only: the weights are not committed"
    shared = sorted({v.get("base") for v in (meta.get("shared") or {}).values()})
    t = (f"they ship as `results/release/{folder}/` ({meta.get('scheme')}, {num(meta.get('bytes'))} bytes"
         + (f"; shares {len(meta['shared'])} tensor(s) with `{', '.join(shared)}`" if shared else "") + ")")
    return t + f"; `tfc/{folder}` installs them on first use (`tfc models release install {folder}`)"


# ---- the commands ---------------------------------------------------------------------------------

def _opt(name: str, value) -> list[str]:
    if value is None or value is False or value == () or value == []:
        return []
    if isinstance(value, (list, tuple)):
        return [f"--{name} {','.join(map(str, value))}"] if name == "tasks" else [f"--{name} {v}" for v in value]
    return [f"--{name} {num(value) if isinstance(value, float) else value}"]


def _steps_opts(s: dict, c: dict) -> list[str]:
    """The step budget: epochs, the recorded steps, or (a time-bound run) the recorded budget."""
    if c.get("epochs"):
        return _opt("epochs", c["epochs"])
    if s.get("stopped_by") == "max_minutes":
        return _opt("max-steps", c.get("max_steps")) + _opt("max-minutes", c.get("max_minutes"))
    return _opt("max-steps", s.get("steps") or c.get("max_steps"))


def _head_opts(folder: str, c: dict) -> list[str]:
    """Which model: its name, and what it starts from when that is not the default MiniLM base."""
    out = _opt("name", folder)
    if c.get("base") not in (None, "minilm"):
        out += _opt("base", c["base"])
    return out + _opt("init", c.get("init"))


def _tail_opts(s: dict, c: dict) -> list[str]:
    """How it trains: batch, rate, length, seed, the step budget, arithmetic, threads and device."""
    out = []
    for key in ("batch_size", "grad_accum", "lr", "max_length", "seed"):
        if not (key == "grad_accum" and c.get(key) in (None, 1)):
            out += _opt(key.replace("_", "-"), c.get(key))
    out += _steps_opts(s, c) + (_opt("dtype", "bf16") if c.get("dtype") == "bf16" else [])
    out += _opt("threads", c.get("num_threads"))
    return out + (_opt("device", c["device"]) if str(c.get("device", "cpu")).startswith("cuda") else [])


def wrap(cmd: str, width: int = 110) -> str:
    """A long command cut before its options, with shell continuations (a trailing comment stays on its line)."""
    if len(cmd) <= width or "#" in cmd:
        return cmd
    out, line = [], ""
    for word in re.split(r" (?=--)", cmd):
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    return " \\\n".join(out + [line])


def mix_command(rec: dict) -> str | None:
    rep, path = rec["summary"].get("mix_report") or {}, mix_path(rec)
    if path is None:
        return None
    version = f" --version {rep.get('version') or 1}" if rep.get("kind") == "sentence" else ""
    return f"tfc train mix --kind {rep['kind']}{version} --seed {rep.get('seed')} --out {path}"


def pair_command(rec: dict) -> list[str]:
    """``tfc train mix`` then ``tfc train sentence|nli|alignscore`` with the record's settings."""
    s, c, kind = rec["summary"], _cfg(rec["summary"]), (rec["summary"].get("mix_report") or {}).get("kind")
    opts = _head_opts(rec["folder"], c) + ["--mix-file " + mix_path(rec)] + _opt("dev-from", c.get("dev_from"))
    opts += _opt("tasks", c.get("tasks")) + _tail_opts(s, c)
    opts += _opt("save-dtype", c.get("save_dtype") if c.get("save_dtype") == "fp16" else None)
    return [mix_command(rec), f"tfc train {kind} " + " ".join(opts)]


def qa_command(rec: dict) -> list[str]:
    """``tfc train qa`` with the record's QA-set sampling and settings."""
    s, c, d = rec["summary"], _cfg(rec["summary"]), rec["summary"].get("data") or {}
    c = {**c, "dtype": (s.get("config") or {}).get("dtype") or (s.get("engine_config") or {}).get("dtype")}
    opts = _head_opts(rec["folder"], c) + _opt("sample", d.get("sample_per_source"))
    opts += _opt("long-frac", d.get("long_frac")) + _tail_opts(s, c)
    for key in ("eval_every", "checkpoint_every", "doc_stride"):
        opts += _opt(key.replace("_", "-"), c.get(key) or None)
    opts += _opt("freeze", c.get("freeze")) + _opt("quant-aware-steps", c.get("quant_aware_steps") or None)
    return ["tfc train qa " + " ".join(opts)]


def gpu_commands(folder: str, rec: dict) -> list[str]:
    pre = ["scripts/fetch_mpnet.sh"] if rec["recipe"]["gpu_job"].get("base") == "mpnet" else []
    return [mix_command(rec), *pre, f"tfc gpu pack --variant {folder}                # here",
            f"python3 -m tfc.cli gpu job .gpu --work WORK --variant {folder}    # on the GPU machine",
            f"tfc gpu unpack WORK/export/{folder}             # here, with what came back"]


def release_command(folder: str, source: str, meta: dict | None) -> str:
    from tfc.models.release import scheme_group_size

    meta = meta or {}
    bases = sorted({v.get("base") for key in ("shared", "delta") for v in (meta.get(key) or {}).values()})
    group = scheme_group_size(meta.get("scheme") or "")
    return (f"tfc models release pack tfc/{source}" + (f" --name {folder}" if folder != source else "")
            + "".join(f" --share-with {b}" for b in bases) + (" --delta" if meta.get("delta") else "")
            + (f" --group-size {group}" if group else ""))


def commands(rec: dict, parent: str | None) -> tuple[list[str], str, str]:
    """The commands that retrain a record, a sentence that leads into them (without commands: says why), and
    how: release | snapshot | reproduce | gpu | wecheck | conv | train | none."""
    from tfc.runs.conv import HEADS as CONV_HEADS
    from tfc.train import REPRODUCED
    from tfc.train.wecheck import RUNS

    folder, s, fam = rec["folder"], rec["summary"], family(rec)
    if parent:
        return [], f"Rebuild `tfc/{parent}` (its section), then pack its weights as this release:", "release"
    if s.get("snapshot_of"):
        return [], ("No command retrains it on its own: it is a copy of that run's resumable state "
                    "(`tfc.train.qa.snapshot_from_state`)."), "snapshot"
    if folder in REPRODUCED:
        return ([f"tfc train reproduce --only {folder}"],
                "`tfc train reproduce` retrains it with its recorded settings (and rescores its plans):", "reproduce")
    if (rec.get("recipe") or {}).get("gpu_job"):
        return (gpu_commands(folder, rec),
                "A GPU job trains it from its recipe's `gpu_job` (see On a GPU machine above):", "gpu")
    conv = {spec["name"]: kind for kind, spec in CONV_HEADS.items()}
    if folder in conv:
        return ([f"tfc train conv-release --head {conv[folder]}"],
                "`tfc train conv-release` fits it on the training-side dev pairs again and ships it:", "conv")
    if fam == "wecheck" and folder in RUNS:
        return ([f"tfc train wecheck --run {folder}"],
                "`tfc train wecheck` runs its recipe from `tfc.train.wecheck.RUNS`:", "wecheck")
    if fam in ("sentence", "pairs") and mix_path(rec):
        return pair_command(rec), "With the recorded settings:", "train"
    if fam == "qa" and s.get("data"):
        return qa_command(rec), "With the recorded settings:", "train"
    return [], "No command in the code retrains it.", "none"


def unset_settings(rec: dict) -> str | None:
    """Recorded settings that the printed command cannot set and that differ from what it would use."""
    from tfc.train.qa import QATrainConfig
    from tfc.train.wecheck import RUNS, run_config

    s, fam, folder = rec["summary"], family(rec), rec["folder"]
    rec_cfg = s.get("config") or {}
    if fam == "wecheck" and folder in RUNS:
        today, skip = asdict(run_config(folder)), {"device", "num_threads", "max_minutes"}
    elif fam == "qa" and s.get("data") and not s.get("snapshot_of"):
        today, skip = asdict(QATrainConfig()), set(QA_OPTIONS)
    elif fam == "sentence" and mix_path(rec):
        from tfc.train import sentence

        today, skip = asdict(sentence.default_config()), set(PAIR_OPTIONS)
    else:
        return None
    diff = [f"{k} {_plain(v)} (the command: {_plain(today[k])})" for k, v in rec_cfg.items()
            if k in today and k not in skip and _plain(v) != _plain(today[k])]
    return "; ".join(diff) or None


def _plain(v):
    return json.dumps(list(v) if isinstance(v, tuple) else v, sort_keys=True)


# ---- the page -------------------------------------------------------------------------------------

INTRO = """\
```{note}
This page is generated by `tfc book recipes` from the records under `results/models/` (and the code's recipes);
change those, not the page.
```

The book reads the in-house models' committed scores, so it renders without their weights. Each model has a
record in `results/models/<name>/`: `training_summary.json` (what the training engine wrote), its card
`README.md`, and `identity.json`, the hash of its weights that its scores are filed under. A retrained
model has new weights with their own identity, so its scores land under new signatures beside the committed
ones; move `artifacts/<name>` aside to read the committed scores again. Each section below gives what a model
started from, its data, its settings, the device and time it took, whether its weights ship, and the command
that retrains it where the code has one.
"""

HOW = """\
## How the commands run

- `tfc train mix` builds a leakage-filtered training mix and saves it (parquet, under the git-ignored
  `{mixes}/`); `tfc train sentence|nli|alignscore --mix-file` trains on it. Each record keeps its mix's sha256.
- A run that saves its state as it goes (`checkpoint_every` above zero) resumes from the last saved state when
  started again with the same settings, after `--max-minutes` stopped it or it was killed.
- A run that stopped on its time budget (stopped by `max_minutes`) is printed with that budget: its step
  count depends on the machine. `--max-steps` with the recorded steps alone repeats its length instead.
- `tfc train reproduce` retrains {reproduced} from their committed records (a run that stopped on its time
  budget is repeated with its recorded step count), writes their records and rescores the plans of
  `tfc train score-inhouse`; `--only NAME` retrains one, `--skip-scoring` leaves the scores alone.
  `make reproduce` runs it and then builds the book in full mode.
- After training, `tfc train score-inhouse PLAN` scores a model's plans (`tfc.runs.inhouse_models.plans()`) through
  the cache, and `tfc train aggregation tfc/NAME` chooses a sentence model's SummaC-ZS reading on
  training-side dev data (never TRUE) and writes it into the model's record.

## On a GPU machine

`tfc gpu pack --variant NAME` writes a bundle (the git-ignored `.gpu/`): the base encoder as int8 weight-only
tensors, the saved mixes (build them first with `tfc train mix`), the dev frames and the evaluation sets' mirror
files, with a sha256 manifest. On the GPU machine, with the repository on `PYTHONPATH`,
`python3 -m tfc.cli gpu job .gpu --work WORK` trains each variant, runs its dev-data sweep, scores its plans,
writes its record and exports it to `WORK/export/NAME/` (`tfc gpu export NAME --work WORK` exports what a job
has so far, for a job stopped before it ends). Back here, `tfc gpu unpack WORK/export/NAME` checks every file
against the export's manifest and puts the weights, the record and the caches in place. The sentence splitter is
part of each score's signature, so the job refuses to run without spaCy and its English model unless given
`--allow-rule-splitter`. The copy of the repository sent to the GPU machine (tracked files and the bundle) is
limited to {mib} MiB, and the job needs neither the score caches nor the release weights: take them out of the
index before copying (`git rm -r -q --cached results/scores results/release`, the same paths in
`.git/info/exclude`) and put them back afterwards (`git reset -q -- results/scores results/release`);
`tfc gpu pack` prints what would be copied. The variants are those of
the records whose `recipe.json` has a `gpu_job` ({variants}). `scripts/gpu_qa.py` does the same for a QA reader (`pack`
here, `job NAME --steps N` there, `tfc gpu unpack` here).

### Distilling a larger teacher into the shipped MiniLM

`tfc gpu distil-pack` prepares it (`tfc.runs.distil`). It builds the distillation pool here: the labelled mix's
own pairs, WeCheck's dialogue outputs with their groundings, and sentences cut from training-side documents (a
sentence against its document, and against the document without it), every pair through the leakage filter and
never WeCheck's PAWS split. It writes a bundle with both base encoders (int8 weight-only), the mix, the pool and
the plan (`DistilPlan`: the teacher on MPNet-base, the student on MiniLM-L6, temperature, epochs, time budgets),
and cuts it into volumes of at most 48 MiB (`.gpu-distil-volumes/1`, `2`, ...), since the MPNet base alone is
larger than one transfer. Each volume travels in its own call (named in `carry`) and stays on the machine while it
is held. The last call runs `python3 -m tfc.cli gpu distil .gpu-distil-volumes --work .gpu-work --out $OUT`: it
joins and checks the volumes, trains the teacher, labels every pool pair with the teacher's 3-way distribution,
trains the student on those distributions beside the mix's human labels, writes both records and exports the
student (each stage is skipped when its output exists, so a call cut short is continued by the next). Back here,
`tfc gpu unpack` puts the student in place; its reading is chosen on training-side dev data
(`tfc train aggregation`) before it is scored and released.
"""


def _row(rec: dict, parent: str | None, meta: dict | None) -> str:
    s = rec["summary"]
    c = s.get("config") or {}
    first = c.get("init") or c.get("base") or s.get("base_model")
    start = f"`tfc/{parent}` (int8 release)" if parent else (
        f"`{s['snapshot_of']}` (snapshot)" if s.get("snapshot_of") else (f"`{first}`" if first else ""))
    secs = f"{num(float(s['train_seconds']))} s" if s.get("train_seconds") is not None else ""
    steps = num(s["steps"]) if s.get("steps") is not None else ""
    return (f"| {{ref}}`tfc/{rec['folder']} <recipe-{rec['folder']}>` | {start} | {steps} | "
            f"{s.get('device', '')} | {secs} | {'ships' if meta is not None else 'record only'} |")


def section(rec: dict, parent: str | None, meta: dict | None) -> list[str]:
    """One record's section: its facts as a list, then the commands that retrain it."""
    s, folder = rec["summary"], rec["folder"]
    facts = [("Question", recipe_text(rec, "question")), ("Started from", start_text(rec, parent)),
             ("Mix", recipe_text(rec, "mix")), ("Data", data_text(rec)), ("Settings", settings_text(s)),
             ("Device and time", time_text(s)), ("Dev evaluation", dev_text(s)),
             ("Measured against", recipe_text(rec, "compared_with")), ("Status", recipe_text(rec, "status"))]
    sweep = (s.get("eval_results") or {}).get("aggregation_dev") or {}
    if sweep.get("chosen"):
        by = f" (`tfc train aggregation {sweep['checkpoint']}`)" if sweep.get("checkpoint") else ""
        facts.append(("Reading chosen on dev data", f"{sweep['chosen']}{by}"))
    facts.append(("Weights", weights_text(folder, meta)))
    if s.get("name") and s["name"] != f"tfc/{folder}":
        facts.append(("Trained as", f"`{s['name']}`"))
    if s.get("note"):
        facts.append(("Note", s["note"]))
    ident = rec["identity"]
    if ident.get("identity"):
        facts.append(("Identity", f"`{ident['identity']}`" + (f": {ident['note']}" if ident.get("note") else "")))
    lines = [f"(recipe-{folder})=", f"### `tfc/{folder}`", ""]
    lines += [f"- **{k}:** {v}" for k, v in facts if v] + [""]
    return lines + _command_lines(rec, parent, meta)


def recipe_text(rec: dict, field: str) -> str | None:
    """One field of the record's recipe (``recipe.json``) as page text; None when absent."""
    value = (rec.get("recipe") or {}).get(field)
    if not value:
        return None
    return f"`{value}`" if str(value).startswith("tfc/") else str(value)


def _command_lines(rec: dict, parent: str | None, meta: dict | None) -> list[str]:
    cmds, lead, how = commands(rec, parent)
    if how == "release":
        cmds = [release_command(rec["folder"], parent, meta)]
    elif meta is not None and how not in ("snapshot", "none", "conv"):   # conv-release packs its own release
        cmds = cmds + [release_command(rec["folder"], rec["folder"], meta)]
    lines = [lead, ""]
    if cmds:
        lines += ["```bash", *(wrap(c) for c in cmds), "```", ""]
    rep = rec["summary"].get("mix_report") or {}
    if how in ("train", "gpu") and rep.get("kind") == "sentence" and not rep.get("version"):
        lines += ["The record names no mix version: version 1 is the command's default, and the mix sha256 above "
                  "tells whether a rebuilt mix is the one it trained on.", ""]
    unset = unset_settings(rec) if how in ("train", "wecheck") else None
    if unset:
        what = "today's recipe" if how == "wecheck" else "the command's defaults"
        lines += [f"Recorded settings that differ from {what}: {unset}.", ""]
    return lines


def _ordered(records: list[dict], by_identity: dict) -> list[tuple[dict, str | None]]:
    keyed = []
    for rec in records:
        parent = release_parent(rec, by_identity)
        fam = [f for f, _ in FAMILIES].index(family(rec))
        keyed.append(((fam, rec["summary"].get("created_utc") or "", parent is not None, rec["folder"]), rec, parent))
    return [(rec, parent) for _, rec, parent in sorted(keyed, key=lambda t: t[0])]


def render(records_dir: Path | None = None, release_root: Path | None = None) -> str:
    """The page, from the records in ``records_dir`` and the releases in ``release_root`` (defaults: the
    repository's ``results/models`` and ``results/release``)."""
    from tfc.runs.gpu import TRAVEL_LIMIT
    from tfc.train import REPRODUCED

    records = load_records(records_dir)
    by_identity = {r["identity"].get("identity"): r["folder"] for r in records if r["identity"].get("identity")}
    ordered = _ordered(records, by_identity)
    metas = {rec["folder"]: release_meta(rec["folder"], release_root) for rec, _ in ordered}
    lines = ["# Retraining the in-house models", "", INTRO,
             "| model | started from | steps | device | training time | weights |", "|---|---|---:|---|---:|---|"]
    lines += [_row(rec, parent, metas[rec["folder"]]) for rec, parent in ordered] + [""]
    lines += [HOW.format(mixes=MIXES, reproduced=", ".join(f"`tfc/{n}`" for n in REPRODUCED),
                         mib=TRAVEL_LIMIT // 2 ** 20, variants=", ".join(f"`{r['folder']}`" for r in records if (r.get("recipe") or {}).get("gpu_job")))]
    for fam, title in FAMILIES:
        group = [(rec, parent) for rec, parent in ordered if family(rec) == fam]
        if group:
            lines += [f"## {title}", ""]
            for rec, parent in group:
                lines += section(rec, parent, metas[rec["folder"]])
    return "\n".join(lines).rstrip() + "\n"


def write_page(text: str, path: Path) -> Path:
    """Write a generated page (its folder made if needed); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def write(path: Path | None = None, records_dir: Path | None = None, release_root: Path | None = None) -> Path:
    """Render the page into ``path`` (default ``book/retraining.md``); returns the path."""
    return write_page(render(records_dir, release_root), path or PAGE)
