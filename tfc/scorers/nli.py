"""NLI scorer: P(entailment | premise = grounding, hypothesis = generated text), from any
``AutoModelForSequenceClassification`` checkpoint (hub id, local directory, ``tfc/<name>``).

* **Label order** is read from the checkpoint's ``id2label`` and checked against ``label_names``
  when given (:func:`tfc.models.label_names`); for checkpoints with generic labels (``LABEL_0``...)
  ``label_names`` is the override that says which index is entailment.
* **Modes**: ``"document"`` -- the grounding is cut at sentence boundaries into chunks that fit
  ``max_length`` together with the hypothesis (never truncated silently), the score is the maximum
  entailment probability over chunks; ``"sentence"`` -- each generated sentence is scored against
  the (chunked) grounding in the same way, and the sentence scores are averaged (``aggregation``
  ``mean`` or ``min``).
* **Batching**: all (premise, hypothesis) pairs of a call are deduplicated, sorted by token length and
  batched across examples; the attention mask is always passed; ``torch.inference_mode``; softmax in
  float32. Scores do not depend on batch size or on the order of the inputs (tested to 1e-5), which
  is why ``batch_size`` and ``device`` are not part of the signature; ``dtype`` is.
* ``clean_claims=True`` applies AlignScore's claim cleaning (:mod:`tfc.text.claims`: PTB bracket
  escapes, detokenisation, capitalisation of lower-cased text) to the generated text first.
* If a generated text (or sentence) alone leaves fewer than ``min_chunk_tokens`` tokens for the
  grounding, the hypothesis is truncated to make room and the row is flagged
  ``aux_hyp_truncated`` in the cache. In sentence mode ``aux_n_generated_units`` counts the generated sentences.
* **Head** (how a checkpoint's output becomes P(consistent); it lets the papers' own checkpoints load,
  see ``book/checkpoints.md``):

  - ``"softmax"``: a sequence classifier; softmax over its labels, the entailment index read from
    ``id2label`` (checked against ``label_names``; a wrong or missing order is a
    :class:`~tfc.models.LabelOrderError`, never a silent flip);
  - ``"logit0-sigmoid"``: ``sigmoid(logits[:, 0])``, the convention of WeCheck's released
    ``nightdessert/WeCheck`` (DeBERTa-v3), which has no entailment label to read;
  - ``"seq2seq-1"``: a text-to-text NLI model such as TRUE's ``google/t5_xxl_true_nli_mixture``, read
    through :class:`tfc.scorers.seq2seq_nli.Seq2SeqNLIEngine` (prompt ``premise: ... hypothesis: ...``,
    score = probability of the token ``1`` at the first decoding step);
  - ``"auto"`` (default): ``seq2seq-1`` for an encoder-decoder checkpoint without a classification
    head, ``logit0-sigmoid`` for a one-logit classifier, ``softmax`` otherwise. The choice is made from
    the checkpoint's config alone (architecture and number of logits), never from label names.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tfc import models
from tfc.scorers.base import ModelScorer, ScorerConfig
from tfc.scorers.nli_engine import NLIEngine  # noqa: F401  (re-exported: the engine of every NLI-based scorer)


@dataclass(frozen=True)
class NLIConfig(ScorerConfig):
    checkpoint: str = "tfc/nli-minilm"
    revision: str | None = None
    label_names: tuple[str, ...] | None = None   # expected/override label order, index order
    mode: str = "document"                       # "document" | "sentence"
    aggregation: str = "mean"                    # over generated sentences in sentence mode
    max_length: int | None = None                # None: min(tokenizer.model_max_length, 512)
    min_chunk_tokens: int = 64
    sentence_splitter: str = "auto"
    clean_claims: bool = False                   # AlignScore-style cleaning of the generated text
    dtype: str = "float32"
    batch_size: int = 16
    device: str | None = None
    head: str = "auto"                           # "auto" | "softmax" | "logit0-sigmoid" | "seq2seq-1"
    calibration: str | None = None               # a shipped calibration map tfc/<name> (tfc.scorers.calibration)

    def __post_init__(self):
        if self.mode not in ("document", "sentence"):
            raise ValueError("mode must be 'document' or 'sentence'")
        if self.aggregation not in ("mean", "min"):
            raise ValueError("aggregation must be 'mean' or 'min'")
        if self.head not in NLI_HEADS:
            raise ValueError(f"head must be one of {NLI_HEADS}; got {self.head!r}")


NLI_HEADS = ("auto", "softmax", "logit0-sigmoid", "seq2seq-1")


def resolve_head(checkpoint: str, revision: str | None = None, head: str = "auto") -> str:
    """The head an ``"auto"`` config means for this checkpoint, from its config only (see module doc)."""
    if head not in NLI_HEADS:
        raise ValueError(f"head must be one of {NLI_HEADS}; got {head!r}")
    if head != "auto":
        return head
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(models.resolve(checkpoint), revision=revision)
    archs = list(getattr(cfg, "architectures", None) or [])
    if getattr(cfg, "is_encoder_decoder", False) and not any(a.endswith("ForSequenceClassification") for a in archs):
        return "seq2seq-1"
    if int(getattr(cfg, "num_labels", 0) or 0) == 1:
        return "logit0-sigmoid"
    return "softmax"


def make_engine(checkpoint, revision=None, label_names=None, max_length=None, dtype="float32", device=None,
                head="auto"):
    """The pair scorer for a checkpoint: :class:`NLIEngine` or, for ``seq2seq-1``, the seq2seq engine."""
    head = resolve_head(checkpoint, revision, head)
    if head == "seq2seq-1":
        from tfc.scorers.seq2seq_nli import Seq2SeqNLIEngine

        if label_names is not None:
            raise ValueError("label_names does not apply to a text-to-text NLI model (head='seq2seq-1')")
        return Seq2SeqNLIEngine(checkpoint, revision, max_length=max_length, dtype=dtype, device=device)
    return NLIEngine(checkpoint, revision, label_names, max_length, dtype, device, head=head)


class NLIScorer(ModelScorer):
    """P(entailment) of an NLI model, the maximum over the grounding's chunks: for the whole generated text
    (``mode="document"``) or for each generated sentence, reduced by ``aggregation`` (``mode="sentence"``)."""

    name = "nli"
    config_cls = NLIConfig
    output_range = (0.0, 1.0)

    def tag(self):
        c = self.config
        extra = "" if c.head == "auto" else f"-{c.head}"
        return f"{models.short_name(c.checkpoint)}-{c.mode[:3]}{extra}"

    def _load(self):
        c = self.config
        self.engine = make_engine(c.checkpoint, c.revision, c.label_names, c.max_length, c.dtype, c.device,
                                  c.head)

    def _score(self, groundings, generations, batch_size, progress):
        from tfc.text.chunking import chunk_many
        from tfc.text.sentences import split_many

        c, eng = self.config, self.engine
        if c.clean_claims:
            from tfc.text.claims import clean_claims

            generations = clean_claims(generations)
        if c.mode == "document":
            hyps_per = [[h] for h in generations]
        else:
            hyps_per = [s or [h] for s, h in zip(split_many(generations, c.sentence_splitter), generations)]
        flat_h = [h for hs in hyps_per for h in hs]
        flat_h, budgets, cut = eng.hyp_budget(flat_h, c.min_chunk_tokens)
        # chunk each grounding once, with the smallest budget any of its hypotheses allows
        pos, g_budget = 0, []
        for hs in hyps_per:
            g_budget.append(min(budgets[pos:pos + len(hs)]))
            pos += len(hs)
        chunks = [None] * len(groundings)
        for b in sorted(set(g_budget)):
            idx = [i for i, x in enumerate(g_budget) if x == b]
            for i, ch in zip(idx, chunk_many([groundings[i] for i in idx], eng.tok, b, splitter=c.sentence_splitter)):
                chunks[i] = ch
        pairs, owner = [], []
        pos = 0
        for i, hs in enumerate(hyps_per):
            for j in range(len(hs)):
                for ch in chunks[i].chunks:
                    pairs.append((ch, flat_h[pos + j]))
                    owner.append((i, pos + j))
            pos += len(hs)
        p_ent = eng.probs(pairs, batch_size, progress)[:, eng.i_ent]
        best = np.full(len(flat_h), -np.inf)
        np.maximum.at(best, [o[1] for o in owner], p_ent)
        out = np.empty(len(groundings))
        pos = 0
        agg = np.mean if c.aggregation == "mean" else np.min
        for i, hs in enumerate(hyps_per):
            out[i] = agg(best[pos:pos + len(hs)])
            pos += len(hs)
        cut_any, pos = [], 0
        for hs in hyps_per:
            cut_any.append(any(cut[pos:pos + len(hs)]))
            pos += len(hs)
        self._aux_keep = {"aux_n_chunks": np.array([len(ch.chunks) for ch in chunks], dtype=np.int32),
                          "aux_split_sentences": np.array([ch.n_split_sentences for ch in chunks], dtype=np.int32),
                          "aux_hyp_truncated": np.array(cut_any)}
        if c.mode == "sentence":       # the generated sentences each row was read as
            self._aux_keep["aux_n_generated_units"] = np.array([len(hs) for hs in hyps_per], dtype=np.int32)
        return out
