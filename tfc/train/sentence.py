"""The sentence-level alignment model: MiniLM-L6 with the 3-way, binary and regression heads, trained by
the one engine (:mod:`tfc.train.engine`) on the sentence mix (:func:`tfc.train.mix.build_sentence_mix`) at 128
tokens in fp32 (bf16 autocast is emulated, and slower, on a CPU without native bf16).

Two runs make the shipped model: ``tfc/sent-minilm`` (v1: 2100 steps on mix v1 from MiniLM) and
``tfc/sent-minilm-v2`` (continued from v1 on mix v2, which adds identical-sentence and compression
positives; ``init`` and ``dev_from`` of :class:`tfc.train.engine.TrainConfig`). The book's retraining page
(``book/retraining.md``, generated from the records by ``tfc book recipes``) lists the commands.

It is meant to be read SummaC-ZS style (sentence pairs, P(entail) - P(contradict), max over grounding
sentences, mean over generated sentences): see the ``summac-zs`` scorer. The 3-way head loads as an
ordinary NLI model (``AutoModelForSequenceClassification``).
"""
from __future__ import annotations

import pandas as pd

from tfc.train.engine import TrainConfig, TrainResult, recipe_config, train_on_mix

DEFAULT_NAME = "sent-minilm"


def default_config(**overrides) -> TrainConfig:
    return recipe_config(dict(name=DEFAULT_NAME, tasks=("3way", "bin", "reg"), max_length=128, batch_size=32,
                              lr=6e-5, warmup_ratio=0.06, epochs=None, max_steps=2100, dtype="fp32", num_threads=2,
                              length_pool=16, eval_rows=500, checkpoint_every=100, eval_every=1000, log_every=25,
                              seed=2022, loss_weights={"3way": 1.0, "bin": 1.0, "reg": 1.0, "soft": 1.0}),
                         overrides)


def train_sentence(df: pd.DataFrame | None = None, cfg: TrainConfig | None = None, out_dir=None,
                   mix_report: dict | None = None, **mix_kwargs) -> TrainResult:
    """Train the model; ``df=None`` builds the sentence mix."""
    from tfc.train.mix import build_sentence_mix

    return train_on_mix(df, cfg or default_config(), out_dir, mix_report, build_sentence_mix, **mix_kwargs)
