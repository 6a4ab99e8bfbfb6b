"""The NLI warm-up model (``tfc/nli-minilm``): a 3-way classifier trained on the 3-way sources only.

The checkpoint is a plain ``*ForSequenceClassification`` directory with
``id2label = {0: entailment, 1: neutral, 2: contradiction}``; the generic NLI scorer uses it as is.
"""
from __future__ import annotations

import pandas as pd

from tfc.train.core import TrainConfig, TrainResult, train

DEFAULT_NAME = "nli-minilm"


def default_config(**overrides) -> TrainConfig:
    base = dict(name=DEFAULT_NAME, tasks=("3way",), max_length=256, batch_size=16, lr=5e-5,
                loss_weights={"3way": 1.0}, eval_rows=500)
    base.update({k: v for k, v in overrides.items() if v is not None})
    return TrainConfig(**base)


def train_nli(df: pd.DataFrame | None = None, cfg: TrainConfig | None = None, out_dir=None,
              mix_report: dict | None = None, **mix_kwargs) -> TrainResult:
    """Train the 3-way model. ``df=None`` builds the 3-way part of the mix (:func:`tfc.train.mix.build_mix`);
    a given frame must hold only ``task == "3way"`` rows."""
    cfg = cfg or default_config()
    if df is None:
        from tfc.train.mix import build_mix

        df, mix_report = build_mix(kind="nli", seed=cfg.seed, **mix_kwargs)
    return train(df, cfg, out_dir=out_dir, mix_report=mix_report)
