"""The engine's default objective, pair classification on the multi-head model: frame checks, the model, its loss, dev metrics.

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
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tfc.models.multihead import (
    ID2LABEL, LABEL2ID, TASKS, load_multihead, multihead_class as _make_multihead_class, save_checkpoint)
from tfc.train.base_encoders import resolve_base
from tfc.train.batches import pretokenize
from tfc.train.checkpoints import write_model_card
from tfc.train.frames import DIST_COLS, REQUIRED_COLUMNS, frame_sha256, mix_table

# "TrainConfig" annotations name tfc.train.engine.TrainConfig; not imported here (the engine imports this module)

# what a training row may ask for; both read the 3way head: "soft" = a teacher's P(entail), "dist" = a teacher's
# whole 3-way distribution (the columns DIST_COLS, in the head's label order ID2LABEL), learnt at cfg.temperature
ROW_TASKS = TASKS + ("soft", "dist")
TASK_CODE = {t: i for i, t in enumerate(ROW_TASKS)}
DIST_SUM_TOL = 1e-3      # a teacher distribution's probabilities must sum to 1 within this


# --------------------------------------------------------------------------------------------------
# data checks and hashes

def validate_frame(df: pd.DataFrame, tasks=TASKS) -> pd.DataFrame:
    """Check the training-frame schema; return a clean copy (labels typed). Raises ``ValueError``."""
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"training frame lacks columns {missing}; needs {list(REQUIRED_COLUMNS)}")
    if len(df) == 0:
        raise ValueError("training frame is empty")
    out = df.loc[:, list(REQUIRED_COLUMNS) + [c for c in DIST_COLS if c in df.columns]].copy().reset_index(drop=True)
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
    if (out["task"] == "dist").any():
        _check_dist(out)
    return out


def _check_dist(out: pd.DataFrame) -> None:
    """``dist`` rows need :data:`DIST_COLS`: finite probabilities in [0, 1] that sum to 1 (within
    :data:`DIST_SUM_TOL`). Other rows' distribution columns are set to 0 (they are never read)."""
    missing = [c for c in DIST_COLS if c not in out.columns]
    if missing:
        raise ValueError(f"task dist: rows need the teacher's distribution in columns {list(DIST_COLS)}; missing {missing}")
    m = (out["task"] == "dist").to_numpy()
    p = out.loc[m, list(DIST_COLS)].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(p).all(axis=1) | (p < 0).any(axis=1) | (p > 1).any(axis=1) | (np.abs(p.sum(axis=1) - 1) > DIST_SUM_TOL)
    if bad.any():
        raise ValueError(f"task dist: {int(bad.sum())} rows have no probability distribution in {list(DIST_COLS)} "
                         f"(finite, in [0, 1], summing to 1 within {DIST_SUM_TOL}); first: row {int(np.flatnonzero(m)[bad][0])}")
    for i, c in enumerate(DIST_COLS):
        vals = np.zeros(len(out))
        vals[m] = p[:, i]
        out[c] = vals


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


def _encode(tokenizer, a, b, max_length, device):
    enc = tokenizer(list(a), list(b), truncation="longest_first", max_length=max_length,
                    padding=True, return_tensors="pt")
    return {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}


def _loss(out, tasks_t, labels_t, weights, dist_t=None, temperature: float = 1.0):
    """Weighted multi-task loss; each term = sum over its rows / batch rows (see module doc).

    ``soft`` rows (a teacher's P(entail)) read the 3-way head: binary cross-entropy between the model's
    P(entailment) and the teacher's probability, computed from log-softmax for stability. ``dist`` rows (a
    teacher's 3-way distribution ``dist_t``) read it too: Hinton et al.'s distillation term,
    ``T**2 * KL(q_T || p_T)`` with both distributions softened at temperature ``T`` (``q_T = softmax(log q / T)``,
    the teacher's logits up to a constant; the ``T**2`` keeps the gradient's scale as ``T`` changes).
    """
    import torch

    n = labels_t.shape[0]
    total = out["3way"].new_zeros((), dtype=torch.float32)
    parts = {}
    for code, task in enumerate(ROW_TASKS):
        m = tasks_t == code
        head = "3way" if task in ("soft", "dist") else task
        if not bool(m.any()) or head not in out:
            continue
        term = _task_term(task, out[head][m].float(), labels_t[m], None if dist_t is None else dist_t[m], temperature)
        parts[task] = float(term.detach()) / int(m.sum())
        total = total + weights.get(task, 1.0) * term / n
    return total, parts


def _task_term(task: str, z, y, q, temperature: float):
    """One task's loss summed over its rows: ``z`` the head's output, ``y`` the labels, ``q`` the teacher's
    distributions (``dist`` rows)."""
    import torch
    import torch.nn.functional as F

    if task == "reg":
        return F.mse_loss(z, y, reduction="sum")
    if task == "soft":
        logp = F.log_softmax(z, dim=-1)
        e = LABEL2ID["entailment"]
        log_not_e = torch.logsumexp(torch.cat([logp[:, :e], logp[:, e + 1:]], dim=-1), dim=-1)
        return -(y * logp[:, e] + (1 - y) * log_not_e).sum()
    if task == "dist":
        if q is None:
            raise ValueError("dist rows need the teacher's distributions")
        t = float(temperature)
        log_q = F.log_softmax(torch.log(q.clamp_min(1e-12)) / t, dim=-1)
        return t * t * F.kl_div(F.log_softmax(z / t, dim=-1), log_q, reduction="sum", log_target=True)
    return F.cross_entropy(z, y.long(), reduction="sum")


def dist_tensor(data: pd.DataFrame):
    """The teacher distributions of a validated frame as an (n, 3) float tensor (zeros where a row has none)."""
    import torch

    if not all(c in data.columns for c in DIST_COLS):
        return torch.zeros((len(data), 3), dtype=torch.float32)
    return torch.tensor(data.loc[:, list(DIST_COLS)].to_numpy(dtype=np.float32))


def frame_loss(model, tokenizer, df: pd.DataFrame, max_length: int, weights: dict | None = None,
               batch_size: int = 64, device: str = "cpu", temperature: float = 1.0) -> float:
    """The training loss (eval mode, no dropout) averaged over every row of a training-format frame."""
    import torch

    data = validate_frame(df, ROW_TASKS)
    codes = torch.tensor(data["task"].map(TASK_CODE).to_numpy())
    labels = torch.tensor(data["label"].to_numpy(), dtype=torch.float32)
    dist = dist_tensor(data)
    model.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(data), batch_size):
            sl = slice(i, i + batch_size)
            out = model(**_encode(tokenizer, data["text_a"][sl], data["text_b"][sl], max_length, device))
            loss, _ = _loss(out, codes[sl].to(device), labels[sl].to(device), weights or {}, dist[sl].to(device),
                            temperature)
            total += float(loss) * len(codes[sl])
    return total / len(data)


def evaluate_frame(model, tokenizer, df: pd.DataFrame, max_length: int, batch_size: int = 64,
                   device: str = "cpu") -> dict:
    """Dev metrics of a multi-head model on a training-format frame: accuracy (3way, bin), Pearson r
    (reg), for ``soft`` rows the Pearson r between P(entailment) and the teacher's probability, and for ``dist``
    rows the mean KL(teacher || model) at temperature 1 and how often the two agree on the most likely label."""
    import torch

    res = {}
    if len(df) == 0:
        return res
    model.eval()
    order = (df["text_a"].str.len() + df["text_b"].str.len()).sort_values(kind="stable").index
    for task, g in df.loc[order].groupby("task", sort=True):
        head = "3way" if task in ("soft", "dist") else task
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
                elif task == "dist":
                    v = torch.softmax(v, -1)
                elif task != "reg":
                    v = v.argmax(-1)
                preds.append(v.cpu().numpy())
        if not preds:
            continue
        p = np.concatenate(preds)
        y = g["label"].to_numpy()
        if task == "dist":
            q = g.loc[:, list(DIST_COLS)].to_numpy(dtype=float)
            kl = np.sum(q * (np.log(np.clip(q, 1e-12, None)) - np.log(np.clip(p, 1e-12, None))), axis=1)
            res[task] = {"rows": len(g), "kl": float(kl.mean()), "agreement": float(np.mean(p.argmax(1) == q.argmax(1)))}
        elif task in ("reg", "soft"):
            r = float(np.corrcoef(p, y)[0, 1]) if len(g) > 1 and np.std(p) > 0 and np.std(y) > 0 else None
            res[task] = {"rows": len(g), "pearson": r, "mse": float(np.mean((p - y) ** 2))}
        else:
            res[task] = {"rows": len(g), "accuracy": float(np.mean(p == y))}
    return res


# ---- objectives -----------------------------------------------------------------------------------


class PairObjective:
    """Pair classification on the multi-head model (:func:`build_model`): rows ``text_a, text_b, task,
    label, source``; the loss of :func:`_loss`; dev metrics of :func:`evaluate_frame`."""

    kind = "pairs"
    loss_doc = ("w3*CE3 + wb*CEbin + wr*MSE + ws*BCE(P(entail), teacher) + wd*T^2*KL(teacher_T || model_T), each term "
                "summed over its rows / batch rows")

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
                      "labels": torch.tensor(train_df["label"].to_numpy(), dtype=torch.float32),
                      "dist": dist_tensor(train_df)}

    def loss(self, model, feats: dict, targets: dict, idx, cfg: "TrainConfig", device, autocast):
        with autocast:
            out = model(**feats)
        return _loss(out, targets["codes"][idx].to(device), targets["labels"][idx].to(device), cfg.loss_weights,
                     targets["dist"][idx].to(device), cfg.temperature)

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

