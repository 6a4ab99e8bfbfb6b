"""AlignScore training (``tfc/alignscore-minilm``): the three-head recipe of the one engine.

Inference as published (chunking, max over chunks, mean over claim sentences) and the paper's ablations
live in :mod:`tfc.scorers.alignscore_model`, the model behind :mod:`tfc.scorers.alignscore`; they are
re-exported here for the training recipes and their tests.
"""
from __future__ import annotations

from functools import partial

import pandas as pd

from tfc.scorers.alignscore_model import (HEADS, SPLITS, AlignScoreModel, aggregate_max_mean,  # noqa: F401
                                          aggregate_soft_lcs, build_units, chunk_sentences,
                                          load_alignscore_model, resolve_checkpoint)
from tfc.models.multihead import TASKS
from tfc.train.engine import TrainConfig, TrainResult, recipe_config, train_on_mix

DEFAULT_NAME = "alignscore-minilm"


# --------------------------------------------------------------------------------------------------
# training

def default_config(**overrides) -> TrainConfig:
    """The AlignScore training configuration (three heads, task-mixed sampling)."""
    return recipe_config(dict(name=DEFAULT_NAME, tasks=TASKS, max_length=256, batch_size=16, lr=5e-5,
                              loss_weights={"3way": 1.0, "bin": 1.0, "reg": 1.0}, eval_rows=500), overrides)


def train_alignscore(df: pd.DataFrame | None = None, cfg: TrainConfig | None = None, out_dir=None,
                     mix_report: dict | None = None, **mix_kwargs) -> TrainResult:
    """Train the three-head alignment model. ``df=None`` builds the full mix (:func:`tfc.train.mix.build_mix`)."""
    from tfc.train.mix import build_mix

    return train_on_mix(df, cfg or default_config(), out_dir, mix_report, partial(build_mix, kind="alignscore"),
                        **mix_kwargs)
