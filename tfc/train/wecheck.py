"""WeCheck at our scale: weak signals -> unification -> labelling model -> noise filter -> fine-tuning.

The weak pool, its signals and labels are :mod:`tfc.train.wecheck_pool`; the evaluation runs are
:mod:`tfc.train.wecheck_eval`; this module fine-tunes.

**Fine-tuning** (:func:`train_wecheck`). The model is a 3-way NLI classifier (warm-started from
``tfc/nli-minilm``; ``base="minilm"`` is the "w/o NLI warm-up" ablation, a fresh head on the plain
encoder). Its score is ``P(entailment)`` (softmax over the three classes), the same number the NLI
scorer reads, and the loss is binary cross-entropy between that probability and ``p(y+)``
(:func:`tfc.train.labelmodel.noise_aware_loss`), so the checkpoint stays an ordinary NLI model that the
``wecheck`` scorer (and ``nli``) load unchanged. The labels are fixed (computed once before training).
The fine-tuning itself runs on the project's one training engine (:func:`tfc.train.engine.train`, its
``soft`` row task is exactly this loss; :func:`engine_config` maps the run's knobs onto it): pre-tokenised,
length-bucketed batches, AdamW with linear warm-up and decay, gradient clipping, seeding, the run record
and the model card. WeCheck keeps its own dev rows (the loss before and after training).
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config
from tfc.train.wecheck_pool import DEFAULT_SIGNALS, OURS, SIGNAL_DOC, TASK_SETS, label_pool, weak_frame

# kept importable here for files that still import them from tfc.train.wecheck (tfc/book/chapters/wecheck.py,
# notebooks/06_wecheck.md); their owners are tfc.train.wecheck_pool and tfc.train.wecheck_eval
from tfc.train.wecheck_pool import ALL_SIGNALS, overlap_report  # noqa: E402,F401
from tfc.train.wecheck_eval import (ABLATION_SUBSET, EVAL_SAMPLE, EVAL_SEED, eval_frame, readme_readings,  # noqa: E402,F401
                                    scorer_for)


# --------------------------------------------------------------------------------------------------
# fine-tuning

@dataclass
class WeCheckConfig:
    """Every knob of one WeCheck run (recorded in the checkpoint's ``training_summary.json``)."""

    name: str = "wecheck-minilm"
    base: str = "tfc/nli-minilm"        # the NLI warm-up; "minilm" = w/o warm-up (Table 2)
    tasks: tuple[str, ...] = ("dialogue",)
    leaked: bool = False                # keep the PAWS rows unfiltered (labelled comparison only)
    pool_sample: int | None = 2000      # rows per task drawn (seeded) after the leakage filter (CPU budget)
    signals: tuple[str, ...] = DEFAULT_SIGNALS
    reading: str = "quantile"
    p_pos: float = 0.75
    p_neg: float = 0.25
    label_model: str = "generative"     # generative | em | average | majority
    noise_filter: bool = True
    filter_mode: str = "band"
    hard_labels: bool = False
    max_train_rows: int | None = 800    # cap after the noise filter (CPU budget on a shared 2-core CPU), seeded
    dev_rows: int = 200                 # held out: loss before/after training
    epochs: float = 1.0
    batch_size: int = 16
    max_length: int = 256
    lr: float = 2e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    grad_clip: float = 1.0
    seed: int = 2023
    device: str = "cpu"
    num_threads: int | None = None
    max_minutes: float | None = None
    save_dtype: str = "fp32"
    freeze: tuple[str, ...] = ()        # parameter-name parts kept at the base's values (tfc.train.engine.freeze_parameters)
    # fields read by tfc.train.checkpoints.write_model_card
    grad_accum: int = 1
    loss_weights: dict = field(default_factory=lambda: {"bce_p_entailment": 1.0})

    def validate(self) -> None:
        from tfc.train.labelmodel import LABEL_MODELS, READINGS

        if self.label_model not in LABEL_MODELS:
            raise ValueError(f"label_model must be one of {LABEL_MODELS} ('none' is the warm-up itself: "
                             f"score tfc/nli-minilm); got {self.label_model!r}")
        if self.reading not in READINGS:
            raise ValueError(f"reading must be one of {READINGS}; got {self.reading!r}")
        if set(self.tasks) - set(TASK_SETS) or not self.tasks:
            raise ValueError(f"tasks must be a non-empty subset of {sorted(TASK_SETS)}; got {self.tasks}")
        if "paws" in self.tasks and not self.leaked:
            raise ValueError("no PAWS rows survive the leakage filter (all are TRUE-PAWS pairs); "
                             "pass leaked=True for the labelled leaked comparison")
        if self.leaked and "leaked" not in self.name:
            raise ValueError("a leaked run's name must say so (contain 'leaked')")
        if self.epochs <= 0 or self.batch_size < 1 or self.max_length < 8 or self.lr <= 0:
            raise ValueError("epochs, batch_size, max_length and lr must be positive")


def resolve_base(base: str) -> str:
    """``tfc/<name>`` -> its artifacts folder; other values as :func:`tfc.train.base_encoders.resolve_base`."""
    from tfc import models
    from tfc.train.base_encoders import resolve_base as core_base

    return models.resolve(base) if base.startswith("tfc/") else core_base(base)


def training_frame(pool: pd.DataFrame, cfg: WeCheckConfig) -> tuple[pd.DataFrame, dict]:
    """Label, filter and cap the pool -> core-format frame (``text_a, text_b, task='reg', label=target,
    source``) plus ``p_label`` and a report."""
    from tfc.train.labelmodel import noise_filter

    p, rep = label_pool(pool, cfg.signals, cfg.label_model, cfg.reading, cfg.p_pos, cfg.p_neg)
    keep = noise_filter(p, cfg.p_pos, cfg.p_neg, cfg.filter_mode) if cfg.noise_filter else np.ones(len(p), bool)
    rep.update(pool_rows=int(len(pool)), kept_by_noise_filter=int(keep.sum()),
               p_label_mean=round(float(p.mean()), 4), p_label_mean_kept=round(float(p[keep].mean()), 4) if keep.any() else None)
    sel = pool.loc[keep].assign(p_label=p[keep])
    if sel.empty:
        raise ValueError("the noise filter left no training rows")
    if cfg.max_train_rows is not None and len(sel) > cfg.max_train_rows:
        sel = sel.sample(n=cfg.max_train_rows, random_state=cfg.seed).sort_index()
    target = np.round(sel["p_label"].to_numpy()) if cfg.hard_labels else sel["p_label"].to_numpy()
    frame = pd.DataFrame({"text_a": sel["grounding"].to_numpy(), "text_b": sel["generated"].to_numpy(),
                          "task": "reg", "label": target.astype(float), "source": sel["dataset"].to_numpy(),
                          "id": sel["id"].to_numpy(), "p_label": sel["p_label"].to_numpy()})
    rep["train_rows"] = int(len(frame))
    rep["target_positive_share"] = round(float((target >= 0.5).mean()), 4)
    return frame, rep


def _p_entail(model, tok, a, b, max_length, device, i_ent=0):
    import torch

    from tfc.train.pair_objective import _encode

    logits = model(**_encode(tok, a, b, max_length, device))["3way"].float()
    return torch.softmax(logits, dim=-1)[:, i_ent]


def frame_bce(model, tok, frame: pd.DataFrame, max_length: int, device="cpu", batch_size: int = 64) -> float:
    """Mean noise-aware loss of a model on a frame (eval mode, no gradient)."""
    import torch

    from tfc.train.labelmodel import noise_aware_loss

    if len(frame) == 0:
        return float("nan")
    model.eval()
    tot = 0.0
    with torch.no_grad():
        for i in range(0, len(frame), batch_size):
            ch = frame.iloc[i:i + batch_size]
            p = _p_entail(model, tok, ch["text_a"], ch["text_b"], max_length, device)
            tot += float(noise_aware_loss(p, torch.tensor(ch["label"].to_numpy(), dtype=torch.float32))) * len(ch)
    return tot / len(frame)


@dataclass
class WeCheckResult:
    out_dir: Path | None
    steps: int
    losses: list
    summary: dict
    model: object = None
    tokenizer: object = None


def train_wecheck(cfg: WeCheckConfig | None = None, pool: pd.DataFrame | None = None, leak_report=None,
                  out_dir=None, progress: bool = True, keep_model: bool = False) -> WeCheckResult:
    """Run the WeCheck pipeline and save ``tfc/<cfg.name>`` (``out_dir=False``: save nothing, tests).

    ``pool``: a weak pool (:func:`tfc.train.wecheck_pool.weak_frame`) to use instead of building one (tests pass a hand-made
    pool with ``task``, ``dataset``, ``id``, ``grounding``, ``generated`` and ``sig_*`` columns).
    """
    import torch

    cfg = cfg or WeCheckConfig()
    cfg.validate()
    prev = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        return _train(cfg, pool, leak_report, out_dir, progress, keep_model)
    finally:
        torch.set_num_threads(prev[0])
        torch.use_deterministic_algorithms(prev[1], warn_only=prev[2])


def engine_config(cfg: WeCheckConfig, base_path: str):
    """The one training engine's configuration for a WeCheck run: the 3-way head, ``soft`` rows (binary
    cross-entropy between P(entailment) and the label model's probability, WeCheck's noise-aware loss),
    the run's optimiser settings, no engine-side dev split (WeCheck holds out its own rows)."""
    from tfc.train import engine

    return engine.TrainConfig(
        name=cfg.name, base=base_path, tasks=("3way",), max_length=cfg.max_length, batch_size=cfg.batch_size,
        grad_accum=cfg.grad_accum, lr=cfg.lr, weight_decay=cfg.weight_decay, warmup_ratio=cfg.warmup_ratio,
        epochs=cfg.epochs, max_minutes=cfg.max_minutes, seed=cfg.seed, device=cfg.device,
        loss_weights={"3way": 1.0, "soft": 1.0}, eval_rows=0, grad_clip=cfg.grad_clip, log_every=10,
        num_threads=cfg.num_threads, save_dtype=cfg.save_dtype, length_pool=8, dtype="fp32", freeze=tuple(cfg.freeze))


def _train(cfg, pool, leak_report, out_dir, progress, keep_model):
    """Label the pool, hold out dev rows, then train with the one engine (:func:`tfc.train.engine.train`)."""
    import torch

    from tfc.train import checkpoints, engine, frames, pair_objective

    t0 = time.time()
    if pool is None:
        pool, leak_report = weak_frame(cfg.tasks, leaked=cfg.leaked, sample=cfg.pool_sample, seed=cfg.seed,
                                       progress=progress, with_own=tuple(c for c in cfg.signals if c in OURS))
    t_pool = time.time() - t0
    frame, label_rep = training_frame(pool, cfg)
    rng = np.random.default_rng(cfg.seed)
    n_dev = min(cfg.dev_rows, len(frame) // 5)
    dev_idx = np.sort(rng.choice(len(frame), size=n_dev, replace=False)) if n_dev else np.array([], int)
    dev = frame.iloc[dev_idx].reset_index(drop=True)
    train_df = frame.drop(index=frame.index[dev_idx]).reset_index(drop=True)

    device = torch.device(cfg.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' requested but torch sees no GPU")
    base_path = resolve_base(cfg.base)
    ecfg = engine_config(cfg, base_path)
    # the model the engine starts from (same seed, same construction): the dev loss before training
    torch.manual_seed(cfg.seed)
    start, tok = pair_objective.build_model(base_path, tasks=("3way",))
    dev_before = frame_bce(start.to(device), tok, dev, cfg.max_length, str(device))
    del start
    mix_report = {"leakage": (leak_report.to_dict("records") if isinstance(leak_report, pd.DataFrame)
                              else leak_report or []),
                  "labels": label_rep, "signal_doc": {s: SIGNAL_DOC.get(s, s) for s in label_rep["signals"]}}
    target = None if out_dir is False else (Path(out_dir) if out_dir else config.artifacts_dir() / cfg.name)
    rows = train_df.assign(task="soft")[["text_a", "text_b", "task", "label", "source"]]
    res = engine.train(rows, ecfg, out_dir=False if target is None else target, mix_report=mix_report,
                     progress=progress, keep_model=True, resume=False)
    dev_after = frame_bce(res.model, res.tokenizer, dev, cfg.max_length, str(device))
    summary = dict(res.summary)
    summary.update({
        "config": asdict(cfg) | {"tasks": list(cfg.tasks), "signals": list(cfg.signals)},
        "engine_config": res.summary["config"],
        "loss": "BCE(P(entailment), p(y+)): binary cross-entropy of the 3-way head's entailment probability "
                "against the fixed probabilistic label (hard labels: rounded); the engine's `soft` rows",
        "mix": {"rows": int(len(frame)), "train_rows": int(len(train_df)), "dev_rows": int(len(dev)),
                "sha256": frames.frame_sha256(frame), "by_source": frames.mix_table(frame).to_dict("records")},
        "pool_seconds": round(t_pool, 1), "wall_seconds": round(time.time() - t0, 1),
        "dev_eval": {"reg": {"rows": int(len(dev)), "bce_before": round(dev_before, 5), "bce_after": round(dev_after, 5)}},
    })
    if target is not None:
        (target / "training_summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
        checkpoints.write_model_card(target, summary)
    return WeCheckResult(target, res.steps, res.losses, summary, res.model if keep_model else None,
                         res.tokenizer if keep_model else None)


def write_record(name: str) -> Path:
    """Copy a trained checkpoint's card and summary to ``results/models/<name>/`` with its identity, so
    the book finds its committed scores without the weights."""
    import shutil
    from datetime import datetime, timezone

    from tfc import models

    src = config.artifacts_dir() / name
    if not (src / "config.json").is_file():
        raise FileNotFoundError(f"no checkpoint {src}")
    dst = config.model_records_dir() / name
    dst.mkdir(parents=True, exist_ok=True)
    for f in ("README.md", "training_summary.json", "train_log.jsonl"):
        if (src / f).is_file():
            shutil.copy2(src / f, dst / f)
    (dst / "identity.json").write_text(json.dumps({
        "checkpoint": f"tfc/{name}", "identity": models.identity(f"tfc/{name}"),
        "note": "identity of the weights the committed scores under results/scores were computed with; the "
                "weights themselves are not committed (retrain with `tfc train wecheck`)",
        "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds")}, indent=1) + "\n")
    return dst


# --------------------------------------------------------------------------------------------------
# the runs of the chapter (WeCheck Tables 1, 2, 3, 5 at our scale)

RUNS: dict[str, dict] = {     # in priority order (the order `tfc train wecheck --all` runs them)
    "wecheck-minilm": {},                                                     # main model
    "wecheck-minilm-nowarmup": {"base": "minilm"},                            # Table 2
    "wecheck-minilm-nofilter": {"noise_filter": False},                       # Table 2
    "wecheck-minilm-hard": {"hard_labels": True},                             # Table 2
    "wecheck-minilm-leaked": {"tasks": ("dialogue", "paws"), "leaked": True},  # Table 3 / leaked PAWS
    "wecheck-minilm-average": {"label_model": "average"},                     # Table 5
    "wecheck-minilm-majority": {"label_model": "majority"},                   # Table 5
    "wecheck-minilm-em": {"label_model": "em"},                               # Table 5
    # the same recipe on the strongest in-house warm-up (the sentence-level v8, trained on a GPU); it asks
    # whether WeCheck beats its own warm-up on every TRUE row, read the way v8's dev-data sweep chose
    "wecheck-minilm-v8": {"base": "tfc/sent-minilm-v8"},
    # the shipped WeCheck: the shipped sentence model as warm-up, its word embeddings frozen so that the release
    # shares them with that base
    "wecheck-minilm-shared-emb": {"base": "tfc/sent-minilm-v8-int8", "freeze": ("embeddings.word_embeddings",)},
}


# runs scored on fewer sets (CPU budget): the leaked run exists for its PAWS number
RUN_EVAL_SETS: dict[str, tuple[str, ...]] = {"wecheck-minilm-leaked": ("paws",)}


def run_config(name: str, **overrides) -> WeCheckConfig:
    if name not in RUNS:
        raise KeyError(f"unknown run {name!r}; known: {', '.join(RUNS)}")
    return WeCheckConfig(name=name, **{**RUNS[name], **overrides})


__all__ = ["WeCheckConfig", "training_frame", "train_wecheck", "write_record", "RUNS", "RUN_EVAL_SETS", "run_config"]
