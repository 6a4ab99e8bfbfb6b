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
  ``aux_hyp_truncated`` in the cache.
* **Head** (how a checkpoint's output becomes P(consistent); added for the papers' own checkpoints,
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
    ``head`` was added after caches were committed: at ``"auto"`` it stays out of the signature hash
    (``ADDED``), and every checkpoint that scored before resolves to ``softmax`` as it did.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tfc import models
from tfc.scorers.base import ModelScorer, ScorerConfig, progress_bar


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
    ADDED = {"head": "auto"}


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


class NLIEngine:
    """Loaded model + tokenizer and the batched, deduplicated, length-sorted pair scorer.

    Shared by :class:`NLIScorer` and the SummaC scorers.
    """

    def __init__(self, checkpoint, revision=None, label_names=None, max_length=None, dtype="float32",
                 device=None, head="softmax"):
        if head not in ("softmax", "logit0-sigmoid"):
            raise ValueError(f"NLIEngine reads head 'softmax' or 'logit0-sigmoid', not {head!r}")
        self.head = head
        self.model, self.tok = models.load_sequence_classifier(checkpoint, revision, device, dtype)
        self.device = models.resolve_device(device)
        if head == "logit0-sigmoid":
            if label_names is not None:
                raise ValueError("label_names does not apply to head='logit0-sigmoid' (one logit, read through a sigmoid)")
            # P(consistent) = sigmoid(logit 0); the second column is its complement
            self.labels = ("entailment", "not_entailment")
            self.i_ent, self.i_con = 0, None
        else:
            try:
                self.labels = models.label_names(self.model.config.id2label, label_names)
            except models.LabelOrderError as exc:
                if int(self.model.config.num_labels) == 1:
                    raise models.LabelOrderError(f"{exc}. This checkpoint has one logit: for WeCheck's "
                                                 "sigmoid(logits[:, 0]) pass head='logit0-sigmoid'") from None
                raise
            self.i_ent = models.label_index(self.labels, "entailment")
            if self.i_ent is None:
                raise models.LabelOrderError(f"no entailment label among {self.labels}")
            self.i_con = models.label_index(self.labels, "contradiction")
        lim = int(getattr(self.tok, "model_max_length", 512) or 512)
        pos = getattr(self.model.config, "max_position_embeddings", None) or lim
        self.max_length = max_length or min(lim, 512, int(pos))
        self.n_special = self.tok.num_special_tokens_to_add(pair=True)

    def probs(self, pairs: list[tuple[str, str]], batch_size: int, progress: bool = False) -> np.ndarray:
        """Class probabilities (n, n_labels) for (premise, hypothesis) pairs; duplicates computed once."""
        import torch

        if not pairs:
            return np.zeros((0, len(self.labels)))
        uniq = list(dict.fromkeys(pairs))
        index = {p: i for i, p in enumerate(uniq)}
        enc = self.tok([p for p, _ in uniq], [h for _, h in uniq], truncation=False, verbose=False)
        ids = enc["input_ids"]
        over = [i for i, x in enumerate(ids) if len(x) > self.max_length]
        self.last_truncated = len(over)
        if over:
            # chunk budgets make this rare (a tokenizer whose pair encoding differs from the sum of its
            # parts); cut the premise to fit and say so, never silently
            import warnings

            warnings.warn(f"{len(over)} NLI input(s) exceeded max_length={self.max_length} after chunking; "
                          "their premise was truncated (see NLIEngine.last_truncated)")
            fix = self.tok([uniq[i][0] for i in over], [uniq[i][1] for i in over], truncation="only_first",
                           max_length=self.max_length)
            for k in enc.keys():
                for j, i in enumerate(over):
                    enc[k][i] = fix[k][j]
            ids = enc["input_ids"]
        order = sorted(range(len(uniq)), key=lambda i: (len(ids[i]), i))
        out = np.zeros((len(uniq), len(self.labels)), dtype=np.float64)
        keys = [k for k in enc.keys()]
        batches = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
        with torch.inference_mode(), models.torch_threads():    # TFC_THREADS, when set
            for b in progress_bar(batches, desc="nli", enabled=progress):
                feats = self.tok.pad({k: [enc[k][i] for i in b] for k in keys}, return_tensors="pt")
                feats = {k: v.to(self.device) for k, v in feats.items()}
                assert "attention_mask" in feats
                logits = self.model(**feats).logits.float()
                if self.head == "logit0-sigmoid":
                    p = torch.sigmoid(logits[:, 0])
                    out[b] = torch.stack([p, 1.0 - p], dim=-1).double().cpu().numpy()
                else:
                    out[b] = torch.softmax(logits, dim=-1).double().cpu().numpy()
        return out[[index[p] for p in pairs]]

    def hyp_budget(self, hyps: list[str], min_chunk: int) -> tuple[list[str], list[int], list[bool]]:
        """Token budget left for the premise given each hypothesis; over-long hypotheses are cut."""
        from tfc.text.chunking import count_tokens

        room = self.max_length - self.n_special
        lens = count_tokens(self.tok, hyps)
        out_h, budgets, cut = [], [], []
        for h, n in zip(hyps, lens):
            if room - n < min_chunk:
                keep = max(room - min_chunk, 1)
                ids = self.tok(h, add_special_tokens=False)["input_ids"][:keep]
                h = self.tok.decode(ids)
                n = len(ids)
                cut.append(True)
            else:
                cut.append(False)
            out_h.append(h)
            budgets.append(room - n)
        return out_h, budgets, cut


class NLIScorer(ModelScorer):
    name = "nli"
    config_cls = NLIConfig
    output_range = (0.0, 1.0)

    def __init__(self, config=None, **overrides):
        super().__init__(config, **overrides)
        c = self.config
        if c.mode not in ("document", "sentence"):
            raise ValueError("mode must be 'document' or 'sentence'")
        if c.aggregation not in ("mean", "min"):
            raise ValueError("aggregation must be 'mean' or 'min'")
        if c.head not in NLI_HEADS:
            raise ValueError(f"head must be one of {NLI_HEADS}; got {c.head!r}")

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
        return out
