"""Bring your own checkpoint (and your own scorer): what the ``07_byoc`` chapter demonstrates.

* :func:`demo_checkpoint` writes a tiny random-weight 3-way NLI classifier (``tfc.models.tiny``) to a
  directory: a stand-in for *your* checkpoint, so the chapter runs offline in seconds. Its scores are
  meaningless (AUC near 0.5).
* :func:`score_with_checkpoint` scores a few rows of a dataset with the ``nli`` scorer on any
  checkpoint (hub id, local directory, ``tfc/<name>``) **without writing the score cache**, and returns
  the scores, the signature and the AUC.
* :class:`WordOverlap` is a complete, minimal scorer (the share of the generated text's words that
  occur in the grounding) used to show how a new scorer joins the registry with
  :func:`tfc.scorers.register`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tfc.scorers.base import Scorer, ScorerConfig

DEMO_NAME = "word-overlap"
_WORD = re.compile(r"\w+")


def demo_checkpoint(path, seed: int = 0) -> Path:
    """A tiny random 3-way NLI checkpoint (BERT, 2 layers, hidden 32) saved to ``path``."""
    from tfc.models.tiny import make_tiny_classifier

    return make_tiny_classifier(path, seed=seed)


def score_with_checkpoint(checkpoint: str, dataset: str = "qags_xsum", n: int = 32, seed: int = 0,
                          device: str | None = None, mode: str = "document") -> dict:
    """Score ``n`` rows (label-stratified sample) of ``dataset`` with ``nli`` on ``checkpoint``.

    Nothing is written to the score cache (a demo checkpoint must not leave entries beside the
    committed ones). Returns ``{"signature", "scores" (id, label, score), "auc", "n"}``.
    """
    from tfc import scorers
    from tfc.meta import roc_auc
    from tfc.results.dataset import score_dataset

    if not isinstance(n, int) or isinstance(n, bool) or n < 2:
        raise ValueError(f"n must be an int >= 2, got {n!r}")
    scorer = scorers.get("nli", preset="as-published", checkpoint=str(checkpoint), mode=mode,
                         **({"device": device} if device else {}))
    res = score_dataset(scorer, dataset, sample=n, seed=seed, use_cache=False)
    auc = roc_auc(res["label"], res["score"]) if res["label"].nunique() == 2 else float("nan")
    return {"signature": scorer.signature, "scores": res, "auc": float(auc), "n": int(len(res))}


@dataclass(frozen=True)
class WordOverlapConfig(ScorerConfig):
    lowercase: bool = True


class WordOverlap(Scorer):
    """Share of the generated text's word tokens (``\\w+``) that occur in the grounding, in [0, 1].

    A deliberately simple example of the scorer protocol: a frozen config (every setting that can
    change a score), ``name``, ``output_range`` and ``_score``; the base class validates inputs, gives
    blank rows the ``empty_score`` and derives the signature from the config.
    """

    name = DEMO_NAME
    config_cls = WordOverlapConfig
    output_range = (0.0, 1.0)

    def _words(self, text: str) -> list[str]:
        return _WORD.findall(text.lower() if self.config.lowercase else text)

    def _score(self, groundings, generations, batch_size, progress):
        out = []
        for g, h in zip(groundings, generations):
            vocab, words = set(self._words(g)), self._words(h)
            out.append(sum(w in vocab for w in words) / len(words) if words else self.empty_score)
        return np.array(out, dtype=float)


def register_demo() -> str:
    """Register :class:`WordOverlap` as ``word-overlap`` (idempotent); returns the name."""
    from tfc import scorers

    scorers.register(DEMO_NAME, "tfc.book.chapters.byoc:WordOverlap")
    return DEMO_NAME


def commands(notebook: str = "02_true_scorers", checkpoint: str = "my-org/my-nli-model",
             device: str = "cuda") -> pd.DataFrame:
    """The ways to rerun a chapter with another checkpoint, as a table (for the chapter page)."""
    rows = [
        ("papermill", f"jupytext --to ipynb notebooks/{notebook}.md -o in.ipynb && "
                      f"papermill in.ipynb out.ipynb -p checkpoint {checkpoint} -p device {device}"),
        ("make", f"make chapter NB={notebook} CHECKPOINT={checkpoint} DEVICE={device}"),
        ("tfc", f"tfc book run --only {notebook} --checkpoint {checkpoint} --device {device} && tfc book build"),
    ]
    return pd.DataFrame(rows, columns=["with", "command"])
