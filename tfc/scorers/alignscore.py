"""AlignScore scorer: the alignment function of a (three-head) checkpoint, applied as AlignScore does.

The scorer wraps :func:`tfc.scorers.alignscore_model.load_alignscore_model` (the inference code lives there,
once): split the generated text (claim) into sentences, cut the grounding (context) into groups of sentences
(as many as its word count holds ``chunk_words``, plus one), score every (group, claim sentence) pair, take
the max over groups and the mean over claim sentences.

* ``checkpoint``: ``tfc/alignscore-minilm`` (default, trained offline here by ``tfc train alignscore``),
  any local directory written by :mod:`tfc.train`, or any 3-way NLI sequence classifier (local or hub id)
  whose ``id2label`` names entailment/neutral/contradiction. A plain classifier has only the 3-way head:
  ``head="bin"``/``"reg"`` then raise a clear error. The official AlignScore ``.ckpt`` files (PyTorch
  Lightning, ``AlignScore-base.ckpt`` / ``AlignScore-large.ckpt``) are read after a one-off conversion,
  ``tfc models convert alignscore CKPT OUT_DIR`` (:mod:`tfc.models.convert`): the converted directory's
  bin/reg heads read the pooled features, as AlignScore's do, and its ``reg`` head is the raw regression
  output (AlignScore applies no sigmoid, so it can leave [0, 1] slightly).
* ``head``: ``3way`` (P(aligned) = P(entailment), published), ``bin`` (P(aligned) of the binary head) or
  ``reg`` (the regression head, in [0, 1]).
* ``split``: ``groups`` (published: AlignScore's ``inference_per_example``, step for step but for the sentence
  splitter, see :mod:`tfc.scorers.alignscore_model`), ``chunk`` (tfc's greedy packing into chunks of at most
  ``chunk_words`` words), ``document`` (one pair per example, truncated to ``max_length``),
  ``smart-n`` (grounding sentences x claim sentences, max-mean) or ``smart-l`` (the same matrix with a
  soft-LCS aggregation). See AlignScore Figures 3 and 4 for the ablations.
* The forward pass computes every head at once, so the cache keeps the other heads' scores as
  ``aux_3way``, ``aux_bin``, ``aux_reg`` (the same aggregation, other head) plus ``aux_n_pairs`` (model
  pairs per example): the head ablation needs no rescoring (:func:`tfc.results.dataset.head_scores`).
* ``clean_claims=True`` applies AlignScore's claim cleaning (:mod:`tfc.text.claims`) first.
* Each distinct (context unit, claim sentence) pair is scored once per process and checkpoint (a memo
  shared by scorer instances), so SMART-L after SMART-N costs no forward pass.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tfc import models
from tfc.scorers.base import ModelScorer, ScorerConfig

HEADS = ("3way", "bin", "reg")
SPLITS = ("groups", "chunk", "document", "smart-n", "smart-l")


@dataclass(frozen=True)
class AlignScoreConfig(ScorerConfig):
    checkpoint: str = "tfc/sent-minilm-v2"   # the model the AlignScore chapter scored with (its record; not shipped)
    revision: str | None = None
    head: str = "3way"                 # "3way" | "bin" | "reg"
    split: str = "groups"              # "groups" (as published) | "chunk" | "document" | "smart-n" | "smart-l"
    chunk_words: int = 350             # words per group or chunk (as published)
    max_length: int = 512              # tokens per (context unit, sentence) pair; longer pairs are cut and counted
    sentence_splitter: str = "auto"
    clean_claims: bool = False
    dtype: str = "float32"
    batch_size: int = 32
    device: str | None = None
    calibration: str | None = None     # a shipped calibration map tfc/<name> (tfc.scorers.calibration)

    def __post_init__(self):
        if self.head not in HEADS:
            raise ValueError(f"head must be one of {HEADS}; got {self.head!r}")
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}; got {self.split!r}")
        if not isinstance(self.chunk_words, int) or isinstance(self.chunk_words, bool) or self.chunk_words < 1:
            raise ValueError(f"chunk_words must be an int >= 1; got {self.chunk_words!r}")
        if not isinstance(self.max_length, int) or isinstance(self.max_length, bool) or self.max_length < 8:
            raise ValueError(f"max_length must be an int >= 8; got {self.max_length!r}")
        models.torch_dtype(self.dtype)   # raises on an unknown dtype


class AlignScoreScorer(ModelScorer):
    """AlignScore: each generated sentence's best alignment over the grounding's chunks, read from one head
    of a multi-head alignment model (:mod:`tfc.scorers.alignscore_model`), averaged over sentences."""

    name = "alignscore"
    config_cls = AlignScoreConfig
    output_range = (0.0, 1.0)

    def tag(self):
        c = self.config
        return f"{models.short_name(c.checkpoint)}-{c.head}-{c.split}"

    def _load(self):
        from tfc.scorers.alignscore_model import load_alignscore_dir, load_alignscore_model

        c = self.config
        path = models.resolve(c.checkpoint)
        if not models.is_local(c.checkpoint):   # a hub id: its snapshot in the local HF cache (offline)
            from huggingface_hub import snapshot_download

            path = snapshot_download(c.checkpoint, revision=c.revision)
        from tfc.models import convert

        if convert.is_pooled_alignscore(path):   # an official .ckpt converted by `tfc models convert alignscore`
            self.model = load_alignscore_dir(path, models.resolve_device(c.device), c.max_length)
        else:
            self.model = load_alignscore_model(path, models.resolve_device(c.device), c.max_length)
        if c.head not in self.model.heads:
            raise ValueError(f"checkpoint {c.checkpoint!r} has no {c.head!r} head (it has {self.model.heads}); "
                             "a plain NLI classifier supports head='3way' only")
        # in place: an int8 swap keeps the side heads' feature hooks attached
        models.apply_dtype(self.model.model, c.dtype, self.model.device)

    # pair results shared by the scorers of one process that use the same weights, dtype and max length
    # (SMART-N and SMART-L score the same sentence pairs; a chunk-mode rerun finds its pairs again);
    # bounded: cleared when it exceeds MEMO_MAX pairs
    _MEMOS: dict = {}
    MEMO_MAX = 500_000

    def _memo(self) -> dict:
        c = self.config
        key = (models.identity(c.checkpoint, c.revision), c.dtype, self.model.max_length)
        memo = self._MEMOS.setdefault(key, {})
        if len(memo) > self.MEMO_MAX:
            memo.clear()
        return memo

    def _score(self, groundings, generations, batch_size, progress):
        c = self.config
        if c.clean_claims:
            from tfc.text.claims import clean_claims

            generations = clean_claims(generations)
        res = self.model.score_heads(groundings, generations, split=c.split, chunk_words=c.chunk_words,
                                     splitter=c.sentence_splitter, batch_size=batch_size, progress=progress,
                                     memo=self._memo())
        aux = {f"aux_{h}": v for h, v in res["scores"].items() if h != c.head}
        aux["aux_n_pairs"] = res["n_pairs"].astype(np.int32)
        aux["aux_n_truncated_pairs"] = res["n_truncated"].astype(np.int32)   # pairs cut to max_length
        self._aux_keep = aux
        return res["scores"][c.head]


def diagram(ax=None, n_chunks: int = 3, n_sentences: int = 4, seed: int = 1):
    """Teaching figure: a (chunk x claim sentence) score matrix -> max over chunks -> mean = AlignScore.

    Draws made-up scores (seeded); returns the matplotlib axes.
    """
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(seed)
    m = rng.uniform(0.02, 0.6, size=(n_chunks, n_sentences))
    best = rng.integers(0, n_chunks, size=n_sentences)
    m[best, np.arange(n_sentences)] = rng.uniform(0.55, 0.98, size=n_sentences)
    m[:, -1] = np.minimum(m[:, -1], 0.25)     # one claim sentence no chunk supports
    col_max = m.max(axis=0)
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 3.6))
    ax.imshow(np.vstack([m, np.full(n_sentences, np.nan), col_max[None, :]]), cmap="viridis", vmin=0, vmax=1,
              aspect="auto")
    for i in range(n_chunks):
        for j in range(n_sentences):
            ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center",
                    color="white" if m[i, j] < 0.5 else "black", fontweight="bold" if i == m[:, j].argmax() else None)
    for j in range(n_sentences):
        ax.text(j, n_chunks + 1, f"{col_max[j]:.2f}", ha="center", va="center",
                color="white" if col_max[j] < 0.5 else "black")
    ax.set_xticks(range(n_sentences), [f"claim sent. {j + 1}" for j in range(n_sentences)])
    ax.set_yticks(list(range(n_chunks)) + [n_chunks + 1],
                  [f"chunk {i + 1}" for i in range(n_chunks)] + ["max over chunks"])
    ax.set_title(f"AlignScore = mean of the column maxima = {col_max.mean():.2f}")
    ax.tick_params(length=0)
    return ax
