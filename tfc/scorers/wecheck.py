"""WeCheck scorer: a sequence classifier fine-tuned with weak supervision (:mod:`tfc.train.wecheck`).

The in-house checkpoint ``tfc/wecheck-minilm`` is an ordinary 3-way NLI classifier whose
``P(entailment)`` was trained (binary cross-entropy) towards WeCheck's probabilistic labels, so scoring
is exactly the NLI scorer's: premise = grounding, hypothesis = generated text, long groundings chunked
at sentence boundaries and the maximum over chunks taken (``mode="document"``, the default here, as
WeCheck scores a whole hypothesis). The class only changes the name (so its cache and signature are
its own) and the default checkpoint; every :class:`~tfc.scorers.nli.NLIConfig` field applies.

The original WeCheck checkpoint (``nightdessert/WeCheck``, DeBERTa-v3 with a single logit read
through a sigmoid) is read with ``head="logit0-sigmoid"`` (``sigmoid(logits[:, 0])``), which the
default ``head="auto"`` picks for any one-logit classifier; see :class:`~tfc.scorers.nli.NLIConfig`
and ``book/checkpoints.md``. It cannot be downloaded here; a tiny DeBERTa-v2 of the same layout is
tested in ``tests/test_checkpoints_compat.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

from tfc.scorers.nli import NLIConfig, NLIScorer


@dataclass(frozen=True)
class WeCheckConfig(NLIConfig):
    checkpoint: str = "tfc/wecheck-minilm"
    mode: str = "document"


class WeCheckScorer(NLIScorer):
    name = "wecheck"
    config_cls = WeCheckConfig
