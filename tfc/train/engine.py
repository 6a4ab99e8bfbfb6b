"""The one training engine of the in-house checkpoints: a run's configuration, the loop, resumable state, the run record.

Every in-house model is a configuration of :func:`train`; what differs is the *objective* (the multi-head pair
classifier, :class:`tfc.train.pair_objective.PairObjective`, by default; :class:`tfc.train.qa.SpanObjective` for the
extractive QA model). The engine's parts beside it: :mod:`tfc.train.batches` (pre-tokenised rows and batches),
:mod:`tfc.train.base_encoders` (base encoders and their portable names), :mod:`tfc.train.checkpoints` (dtype on
disk, model card).

Determinism: seeded (``torch.manual_seed``) head initialisation, dropout and sampling order (one
``torch.Generator``); ``torch.use_deterministic_algorithms(True, warn_only=True)`` on the CPU. Two runs
with the same seed, data and thread count give bitwise-equal weights on the CPU.
"""
from __future__ import annotations

import hashlib
import json
import math
import platform
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config
from tfc.models.multihead import ID2LABEL, TASKS
from tfc.train.base_encoders import portable_config, portable_name, resolve_base
from tfc.train.batches import collate, epoch_batches
from tfc.train.checkpoints import convert_checkpoint_dtype
from tfc.train import quant_aware
from tfc.train.pair_objective import PairObjective


# --------------------------------------------------------------------------------------------------
# configuration

@dataclass
class TrainConfig:
    """Every knob of one training run (recorded verbatim in ``training_summary.json``)."""

    name: str = "alignscore-minilm"
    base: str = "minilm"
    tasks: tuple[str, ...] = TASKS
    max_length: int = 256
    batch_size: int = 16
    grad_accum: int = 1
    lr: float = 5e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    max_steps: int = 1000          # optimizer steps (each = batch_size * grad_accum examples)
    max_minutes: float | None = None
    seed: int = 2022
    device: str = "cpu"
    loss_weights: dict = field(default_factory=lambda: {"3way": 1.0, "bin": 1.0, "reg": 1.0})
    eval_rows: int = 0             # rows per task held out for a dev evaluation (0 = none)
    grad_clip: float = 1.0
    log_every: int = 10
    num_threads: int | None = None  # torch CPU threads (None = torch default)
    save_dtype: str = "fp32"       # "fp16" halves the checkpoint (MiniLM: 90 -> 45 MB) for a GPU round trip
    length_pool: int = 8           # batches per length-grouping pool (1 = plain random batches)
    dtype: str = "fp32"            # "bf16": autocast forward (CPU with avx512_bf16, or GPU); weights stay fp32
    epochs: float | None = None    # when set, the step count is ceil(epochs * train rows / (batch * accum))
    checkpoint_every: int = 0      # steps between resumable state writes (0 = none)
    eval_every: int = 0            # steps between dev evaluations (the dev curve; 0 = end only)
    init: str | None = None        # continue from a trained tfc checkpoint (dir or tfc/<name>) instead of `base`
    dev_from: str | None = None    # a saved mix (parquet): its dev rows (same eval_rows, seed) are this run's dev
                                   # set and are kept out of training (a continued run keeps its parent's dev set)
    freeze: tuple[str, ...] = ()   # parameters kept at their starting values: names containing any of these, e.g.
                                   # "embeddings.word_embeddings" (a release then shares that tensor with its base)
    temperature: float = 1.0       # distillation temperature of "dist" rows (a teacher's 3-way distribution)
    quant_aware_steps: int = 0     # the last N steps train through the int8 delta packing against `base` that the
                                   # release ships (tfc.train.quant_aware); the checkpoint is then the packed model

    def total_steps(self, n_train_rows: int) -> int:
        if self.epochs is None:
            return int(self.max_steps)
        return max(1, int(math.ceil(self.epochs * n_train_rows / (self.batch_size * self.grad_accum))))

    def row_tasks(self) -> tuple[str, ...]:
        """Row tasks this model can train: its heads, plus ``soft`` and ``dist`` (a teacher's P(entail) or its whole
        3-way distribution) when it has the 3-way head."""
        return tuple(self.tasks) + (("soft", "dist") if "3way" in self.tasks else ())

    def validate(self) -> None:
        # the heads; empty for an objective that brings its own head (PairObjective requires at least one)
        bad = set(self.tasks) - set(TASKS)
        if bad:
            raise ValueError(f"tasks must be a subset of {TASKS}; got {self.tasks}")
        for k in ("max_length", "batch_size", "grad_accum", "max_steps"):
            if int(getattr(self, k)) < 1:
                raise ValueError(f"{k} must be >= 1; got {getattr(self, k)}")
        if self.max_minutes is not None and self.max_minutes <= 0:
            raise ValueError(f"max_minutes must be > 0; got {self.max_minutes}")
        if self.dtype not in ("fp32", "bf16"):
            raise ValueError(f"dtype must be 'fp32' or 'bf16'; got {self.dtype!r}")
        if not (self.temperature > 0 and math.isfinite(self.temperature)):
            raise ValueError(f"temperature must be a positive number; got {self.temperature}")
        if self.epochs is not None and self.epochs <= 0:
            raise ValueError(f"epochs must be > 0; got {self.epochs}")
        for k in ("checkpoint_every", "eval_every", "quant_aware_steps"):
            if int(getattr(self, k)) < 0:
                raise ValueError(f"{k} must be >= 0; got {getattr(self, k)}")
        if self.save_dtype not in ("fp32", "fp16"):
            raise ValueError(f"save_dtype must be 'fp32' or 'fp16'; got {self.save_dtype!r}")
        if self.device not in ("cpu", "cuda") and not str(self.device).startswith("cuda:"):
            raise ValueError(f"device must be 'cpu' or 'cuda[:n]'; got {self.device!r}")


# --------------------------------------------------------------------------------------------------
# training: the one engine
#
# Every in-house model is a configuration of this engine (tfc/nli-*, tfc/alignscore-*). Its parts:
#   pretokenize()      the frame tokenised once, cached per (tokenizer, mix sha256, max_length)
#   epoch_batches()    seeded, length-bucketed batches, a pure function of (seed, epoch), so a resumed run
#                      replays exactly the batches an uninterrupted one would have seen
#   collate()          dynamic padding of one batch
#   _step()            forward (bf16 autocast on CPU or GPU when cfg.dtype == "bf16"), loss, backward
#   ResumeState        model, optimiser, scheduler, RNG and batch position, written atomically every
#                      cfg.checkpoint_every steps; `train(..., resume=True)` continues from it bitwise-exactly


@dataclass
class TrainResult:
    out_dir: Path | None
    steps: int
    losses: list[float]
    wall_s: float
    stopped_by: str
    summary: dict
    model: object = None
    tokenizer: object = None


# ---- resumable state ------------------------------------------------------------------------------

RESUME_FILE = "resume_state.pt"


def _resume_key(cfg, data_sha: str) -> str:
    # quant_aware_steps is checked against the saved state instead (tfc.train.quant_aware.check_resume): the steps
    # before a run's quantisation-aware ones are those of the same run without them
    skip = ("max_minutes", "checkpoint_every", "log_every", "quant_aware_steps")
    keep = {k: v for k, v in asdict(cfg).items() if k not in skip}
    return hashlib.sha256(json.dumps([keep, data_sha], sort_keys=True, default=str).encode()).hexdigest()[:16]


def _save_resume(path: Path, state: dict) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def _load_resume(path: Path, key: str):
    import torch

    if not path.is_file():
        return None
    state = torch.load(path, map_location="cpu", weights_only=True)   # tensors and primitives only
    if state.get("key") != key:
        raise ValueError(f"{path} belongs to another run (config or data changed: key {state.get('key')} != {key}); "
                         "delete it or pass resume=False")
    return state


def _resume_into(saved, qat_from, model, opt, sched) -> dict:
    """The loop's state: fresh, or ``saved`` loaded into the model, optimiser, scheduler and RNG (a state that
    trained through its packing otherwise than this run would is refused)."""
    import torch

    st = {"step": 0, "epoch": 0, "pos": 0, "examples": 0, "losses": [], "log": [], "dev_curve": [], "train_s": 0.0}
    if saved is not None:
        quant_aware.check_resume(saved["st"]["step"], saved["st"].get("quant_aware_from"), qat_from)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        sched.load_state_dict(saved["sched"])
        torch.set_rng_state(saved["rng"])
        st = saved["st"]
    st["quant_aware_from"] = qat_from
    return st


def _packing(packed, qat_from, step: int):
    """The packed weights' context for the optimizer step after ``step`` steps (nothing before ``qat_from``)."""
    if packed is None or step < qat_from:
        return nullcontext()
    return packed.active()


# ---- the recipes' two steps ------------------------------------------------------------------------

def recipe_config(defaults: dict, overrides: dict) -> TrainConfig:
    """A recipe's :class:`TrainConfig`: its ``defaults`` with the caller's ``overrides`` (None keeps the default)."""
    return TrainConfig(**{**defaults, **{k: v for k, v in overrides.items() if v is not None}})


def train_on_mix(df, cfg: TrainConfig, out_dir, mix_report, build, **mix_kwargs) -> TrainResult:
    """:func:`train` on ``df``; ``df=None`` first builds the recipe's mix, ``build(seed=cfg.seed, **mix_kwargs)``."""
    if df is None:
        df, mix_report = build(seed=cfg.seed, **mix_kwargs)
    return train(df, cfg, out_dir=out_dir, mix_report=mix_report)


# ---- the loop -------------------------------------------------------------------------------------

#
# The loop below is the same for every in-house model; what differs is the *objective*: which rows a frame
# holds, the model it builds, how rows become token arrays and targets, the loss, the dev metrics and how
# the checkpoint is saved. PairObjective is the default (the multi-head pair classifier: 3way, bin, reg
# and soft rows); tfc.train.qa.SpanObjective trains the extractive QA model on the same loop.


def train(df: pd.DataFrame, cfg: TrainConfig, out_dir=None, mix_report: dict | None = None,
          progress: bool = True, keep_model: bool = False, resume: bool = True, on_step=None,
          objective=None) -> TrainResult:
    """Train a (multi-head) model on ``df`` and write the checkpoint to ``out_dir``.

    ``out_dir=None`` writes to ``tfc.config.artifacts_dir()/cfg.name``; ``out_dir=False`` writes nothing
    (tests). ``mix_report`` (rows removed as leakage, source hashes...) is copied into the summary.
    Stops cleanly at ``cfg.max_steps`` optimizer steps (or ``cfg.epochs``) or ``cfg.max_minutes``,
    whichever comes first, and saves in both cases. With ``cfg.checkpoint_every`` > 0 and an ``out_dir``,
    the full training state is written every that many steps; ``resume=True`` continues from it (the
    weights then equal those of an uninterrupted run, bit for bit, on the same device and thread count).
    ``on_step(step)`` is called after every optimizer step (progress hooks; tests use it to interrupt).
    ``objective`` (default :class:`tfc.train.pair_objective.PairObjective`) says what the rows are and how they are learnt.
    """
    import torch

    # the thread count and deterministic-algorithms flag are process-global: restore them afterwards
    prev = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        return _train(df, cfg, out_dir, mix_report, progress, keep_model, resume, on_step,
                      objective or PairObjective())
    finally:
        torch.set_num_threads(prev[0])
        torch.use_deterministic_algorithms(prev[1], warn_only=prev[2])


def _setup(cfg, device, objective):
    """The seeded starting model and its tokenizer (the objective builds them)."""
    import torch

    torch.manual_seed(cfg.seed)
    model, tok = objective.build(cfg)
    model.to(device).train()
    freeze_parameters(model, cfg.freeze)
    return model, tok


def freeze_parameters(model, patterns) -> list[str]:
    """Turn off the gradient of every parameter whose name contains one of ``patterns``; returns their names.
    A pattern that matches nothing is an error (a misspelt name would otherwise train everything)."""
    names = []
    for pattern in patterns:
        hit = [n for n, p in model.named_parameters() if pattern in n]
        if not hit:
            raise ValueError(f"freeze pattern {pattern!r} matches no parameter of {type(model).__name__}")
        names.extend(hit)
    for n, p in model.named_parameters():
        if n in names:
            p.requires_grad_(False)
    return sorted(set(names))


def _optimizer(cfg, model, steps: int):
    """AdamW (no weight decay on biases and norms) with linear warm-up and decay over ``steps``."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if p.requires_grad and not any(s in n for s in no_decay)],
         "weight_decay": cfg.weight_decay},
        {"params": [p for n, p in model.named_parameters() if p.requires_grad and any(s in n for s in no_decay)],
         "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=cfg.lr)
    sched = get_linear_schedule_with_warmup(opt, int(math.ceil(cfg.warmup_ratio * steps)), steps)
    return opt, sched


def _autocast(cfg, device):
    import torch

    if cfg.dtype == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return torch.autocast(device.type, enabled=False)


def _device(cfg):
    """The run's torch device, with its thread count and, on a CPU, deterministic algorithms set."""
    import torch

    device = torch.device(cfg.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' requested but torch sees no GPU")
    if cfg.num_threads:
        torch.set_num_threads(int(cfg.num_threads))
    if device.type == "cpu":
        torch.use_deterministic_algorithms(True, warn_only=True)
    return device


def _accumulate(cfg, st, plan, toks, targets, pad_id, device, autocast, model, objective):
    """One optimizer step's forward and backward passes over ``cfg.grad_accum`` batches (the next epoch's
    plan drawn when this one runs out; ``st`` advances): the step's loss, its parts per batch, the plan."""
    step_loss, parts_acc = 0.0, {}
    for _ in range(cfg.grad_accum):
        if st["pos"] >= len(plan):
            st["epoch"], st["pos"] = st["epoch"] + 1, 0
            plan = epoch_batches(toks.lengths, cfg.batch_size, cfg.length_pool, cfg.seed, st["epoch"])
        idx = plan[st["pos"]]
        st["pos"] += 1
        loss, parts = objective.loss(model, collate(toks, idx, pad_id, device), targets, idx, cfg, device, autocast)
        (loss / cfg.grad_accum).backward()
        step_loss += float(loss.detach()) / cfg.grad_accum
        for k, v in parts.items():
            parts_acc.setdefault(k, []).append(v)
        st["examples"] += len(idx)
    return step_loss, parts_acc, plan


def _train(df, cfg, out_dir, mix_report, progress, keep_model, resume, on_step, objective):
    import torch

    cfg.validate()
    t0 = time.time()
    data = objective.validate(df, cfg)
    train_df, eval_df = objective.split(data, cfg)
    device = _device(cfg)
    target = None if out_dir is False else (Path(out_dir) if out_dir else config.artifacts_dir() / cfg.name)
    tok_cache = (target.parent / ".tokens") if target is not None else None
    model, tok = _setup(cfg, device, objective)
    # the objective may drop rows it cannot learn from (a QA answer cut off by max_length): it says how many
    toks, targets = objective.prepare(tok, train_df, cfg, tok_cache)
    if len(toks.lengths) == 0:
        raise ValueError("no training rows left after preparing the frame")
    total_steps = cfg.total_steps(len(toks.lengths))
    opt, sched = _optimizer(cfg, model, total_steps)
    # an objective's own settings outside TrainConfig (the QA document stride) also key the saved state
    key = _resume_key(cfg, objective.data_sha(data) + getattr(objective, "resume_salt", ""))
    resume_path = target / RESUME_FILE if target is not None else None
    qat_from = quant_aware.start_step(total_steps, cfg.quant_aware_steps)
    saved = _load_resume(resume_path, key) if (resume and resume_path is not None) else None
    st = _resume_into(saved, qat_from, model, opt, sched)
    packed = quant_aware.PackedWeights(model, cfg.base) if qat_from is not None else None
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    autocast = _autocast(cfg, device)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total_steps, initial=st["step"], desc=f"train {cfg.name}", unit="step", mininterval=10)
    plan = epoch_batches(toks.lengths, cfg.batch_size, cfg.length_pool, cfg.seed, st["epoch"])
    stopped_by = "max_steps"
    t_run = time.time()
    train_s0 = st["train_s"]
    while st["step"] < total_steps:
        if cfg.max_minutes is not None and train_s0 + time.time() - t_run > cfg.max_minutes * 60:
            stopped_by = "max_minutes"
            break
        model.train()
        opt.zero_grad(set_to_none=True)
        with _packing(packed, qat_from, st["step"]):
            step_loss, parts_acc, plan = _accumulate(cfg, st, plan, toks, targets, pad_id, device, autocast, model,
                                                     objective)
        if cfg.grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        sched.step()
        st["step"] += 1
        st["losses"].append(step_loss)
        st["train_s"] = train_s0 + time.time() - t_run
        _after_step(cfg, st, step_loss, parts_acc, sched, model, tok, eval_df, device, total_steps, objective,
                    packing=lambda: _packing(packed, qat_from, st["step"] - 1))
        if resume_path is not None and cfg.checkpoint_every and st["step"] % cfg.checkpoint_every == 0:
            _save_resume(resume_path, {"key": key, "model": model.state_dict(), "opt": opt.state_dict(),
                                       "sched": sched.state_dict(), "rng": torch.get_rng_state(), "st": st})
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{step_loss:.3f}")
        if on_step is not None:
            on_step(st["step"])
    if bar is not None:
        bar.close()
    model.eval()
    if packed is not None and st["step"] > qat_from:
        packed.snap()
    dev = objective.evaluate(model, tok, eval_df, cfg, device)
    summary = _summary(cfg, data, train_df, eval_df, toks, st, stopped_by, dev, mix_report, device,
                       time.time() - t0, resumed=saved is not None, objective=objective)
    if target is not None:
        _write_run(target, model, tok, cfg, summary, st, objective)
        if stopped_by == "max_steps" and resume_path.is_file():
            resume_path.unlink()  # finished: the state is no longer needed (it is ~3x the model's size)
    return TrainResult(target, st["step"], st["losses"], time.time() - t0, stopped_by, summary,
                       model if keep_model else None, tok if keep_model else None)


def _after_step(cfg, st, step_loss, parts_acc, sched, model, tok, eval_df, device, total_steps, objective,
                packing=nullcontext):
    """Log the step and, every ``cfg.eval_every`` steps, evaluate on the dev rows (inside ``packing()``: the packed
    weights during a run's quantisation-aware steps)."""
    step = st["step"]
    if step % cfg.log_every == 0 or step == 1 or step == total_steps:
        st["log"].append({"step": step, "loss": step_loss, "lr": sched.get_last_lr()[0],
                          "elapsed_s": round(st["train_s"], 2), "examples": st["examples"],
                          **{f"loss_{k}": float(np.mean(v)) for k, v in parts_acc.items()}})
    if cfg.eval_every and len(eval_df) and step % cfg.eval_every == 0:
        with packing():
            dev = objective.evaluate(model, tok, eval_df, cfg, device)
        st["dev_curve"].append({"step": step, "examples": st["examples"], **dev})
        model.train()


def _summary(cfg, data, train_df, eval_df, toks, st, stopped_by, dev, mix_report, device, wall, resumed, objective):
    import torch

    return {
        "name": f"tfc/{cfg.name}",
        "base_model": portable_name(cfg.base),
        "base_model_path": portable_name(resolve_base(cfg.base)),
        "config": portable_config(asdict(cfg) | {"tasks": list(cfg.tasks)}),
        "objective": objective.kind,
        "loss": objective.loss_doc,
        "id2label": {str(k): v for k, v in ID2LABEL.items()} if objective.kind == "pairs" else None,
        "mix": objective.data_facts(data, train_df, eval_df, toks),
        "mix_report": mix_report or {},
        "steps": st["step"], "epochs_seen": round(st["examples"] / max(1, len(toks.lengths)), 3),
        "examples_seen": st["examples"], "stopped_by": stopped_by, "resumed": resumed,
        "quant_aware_from": st.get("quant_aware_from"),
        "first_loss": st["losses"][0] if st["losses"] else None,
        "last_loss_mean10": float(np.mean(st["losses"][-10:])) if st["losses"] else None,
        "train_seconds": round(st["train_s"], 1), "wall_seconds": round(wall, 1),
        "examples_per_second": round(st["examples"] / st["train_s"], 2) if st["train_s"] > 0 else None,
        "device": _device_name(device), "dtype": "bf16-autocast" if cfg.dtype == "bf16" else "fp32",
        "torch_threads": torch.get_num_threads(),
        "versions": _versions(),
        "dev_eval": dev,
        "dev_curve": st["dev_curve"],
        "eval_results": {},
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _write_run(target: Path, model, tok, cfg, summary: dict, st: dict, objective) -> None:
    objective.save(model, tok, target)
    if cfg.save_dtype != "fp32":
        convert_checkpoint_dtype(target, cfg.save_dtype)
    (target / "training_summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    with open(target / "train_log.jsonl", "w") as fh:
        for rec in st["log"]:
            fh.write(json.dumps(rec) + "\n")
    objective.card(target, summary)



def _device_name(device) -> str:
    import torch

    if device.type == "cuda":
        return f"cuda: {torch.cuda.get_device_name(device)}"
    return f"cpu: {platform.processor() or platform.machine()} ({torch.get_num_threads()} threads)"


def _versions() -> dict:
    from importlib import metadata

    out = {}
    for pkg in ("tfc", "torch", "transformers", "spacy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out

