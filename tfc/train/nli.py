"""The NLI warm-up model (``tfc/nli-minilm``): a 3-way classifier trained on the 3-way sources only.

The checkpoint is a plain ``*ForSequenceClassification`` directory with
``id2label = {0: entailment, 1: neutral, 2: contradiction}``; the generic NLI scorer uses it as is.
"""
from __future__ import annotations

from functools import partial

import pandas as pd

from tfc.train.engine import TrainConfig, TrainResult, recipe_config, train_on_mix

DEFAULT_NAME = "nli-minilm"


def default_config(**overrides) -> TrainConfig:
    return recipe_config(dict(name=DEFAULT_NAME, tasks=("3way",), max_length=256, batch_size=16, lr=5e-5,
                              loss_weights={"3way": 1.0}, eval_rows=500), overrides)


def train_nli(df: pd.DataFrame | None = None, cfg: TrainConfig | None = None, out_dir=None,
              mix_report: dict | None = None, **mix_kwargs) -> TrainResult:
    """Train the 3-way model. ``df=None`` builds the 3-way part of the mix (:func:`tfc.train.mix.build_mix`);
    a given frame must hold only ``task == "3way"`` rows."""
    from tfc.train.mix import build_mix

    return train_on_mix(df, cfg or default_config(), out_dir, mix_report, partial(build_mix, kind="nli"),
                        **mix_kwargs)
