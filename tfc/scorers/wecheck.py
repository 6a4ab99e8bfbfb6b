"""WeCheck scorer: a sequence classifier fine-tuned with weak supervision (:mod:`tfc.train.wecheck`).

The in-house checkpoint ``tfc/wecheck-minilm`` is an ordinary 3-way NLI classifier whose
``P(entailment)`` was trained (binary cross-entropy) towards WeCheck's probabilistic labels, so scoring
is the NLI scorer's: premise = grounding, hypothesis = the whole generated text (``mode="document"``, as
WeCheck scores a whole hypothesis). The class changes the name (so its cache and signature are its own), the
default checkpoint and how a long grounding is read; every :class:`~tfc.scorers.nli.NLIConfig` field applies.

``long_grounding`` says how a grounding longer than the model's input is read:

* ``"truncate"`` (the registry's, so the ``as-published`` preset's) is the call of WeCheck's README: one input per
  pair, ``tokenizer(premise, hypothesis, truncation=True, max_length=512)``, so transformers' ``longest_first``
  cut (the README also passes ``truncation_strategy="only_first"``, which transformers ignores once
  ``truncation=True`` is given), and the model's output read by its head. The README's batched call passes only
  ``input_ids``, so the padding of a batch is attended to and a pair's score depends on the other pairs of its
  batch; tfc passes the attention mask, which gives every pair the score the README's one-pair call gives it. The
  rows whose input was cut are recorded (``aux_truncated``);
* ``"chunk"`` (the recommended ``default`` preset) cuts the grounding at sentence boundaries into chunks that fit
  together with the hypothesis and takes the largest P(consistent) over chunks, so nothing is dropped.

The original WeCheck checkpoint (``nightdessert/WeCheck``, DeBERTa-v3 with a single logit read
through a sigmoid) is read with ``head="logit0-sigmoid"`` (``sigmoid(logits[:, 0])``), which the
default ``head="auto"`` picks for any one-logit classifier; see :class:`~tfc.scorers.nli.NLIConfig`
and ``book/checkpoints.md``. It cannot be downloaded here; a tiny DeBERTa-v2 of the same layout is
tested in ``tests/test_checkpoints_compat.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tfc.scorers.nli import NLIConfig, NLIScorer

LONG_GROUNDINGS = ("truncate", "chunk")


@dataclass(frozen=True)
class WeCheckConfig(NLIConfig):
    checkpoint: str = "tfc/wecheck-minilm"
    mode: str = "document"
    long_grounding: str = "truncate"      # "truncate" (the README's call) | "chunk" (max over chunks)

    def __post_init__(self):
        super().__post_init__()
        if self.long_grounding not in LONG_GROUNDINGS:
            raise ValueError(f"long_grounding must be one of {LONG_GROUNDINGS}; got {self.long_grounding!r}")
        if self.long_grounding == "truncate" and self.mode != "document":
            raise ValueError("long_grounding='truncate' (WeCheck's README call) reads whole texts: mode='document'")


class WeCheckScorer(NLIScorer):
    name = "wecheck"
    config_cls = WeCheckConfig

    def _score(self, groundings, generations, batch_size, progress):
        c = self.config
        if c.long_grounding == "chunk":
            return super()._score(groundings, generations, batch_size, progress)
        if c.clean_claims:
            from tfc.text.claims import clean_claims

            generations = clean_claims(generations)
        from tfc.scorers.nli_engine import NLIEngine

        if not isinstance(self.engine, NLIEngine):
            raise ValueError("long_grounding='truncate' is the README's call of a sequence classifier; a text-to-text "
                             "model (head='seq2seq-1') reads long groundings with long_grounding='chunk'")
        pairs = list(zip(groundings, generations))
        probs = self.engine.probs(pairs, batch_size, progress, truncation="longest_first")
        self._aux_keep = {"aux_truncated": self.engine.last_cut.copy()}
        return probs[:, self.engine.i_ent]
