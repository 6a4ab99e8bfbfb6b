"""Text-to-text NLI (TRUE's T5): the pair scorer behind ``nli`` with ``head="seq2seq-1"``.

TRUE (Honovich et al., 2022) released ``google/t5_xxl_true_nli_mixture``, a T5 fine-tuned to read

    premise: {grounding} hypothesis: {generated}

and write ``1`` (entailed) or ``0`` (not entailed). :class:`Seq2SeqNLIEngine` turns it into a score:

* the input is :data:`TRUE_TEMPLATE` filled with the premise and the hypothesis, tokenised with the
  checkpoint's own tokenizer (which appends ``</s>``);
* the decoder gets one step, started from ``config.decoder_start_token_id`` (``<pad>`` for T5);
* **score = the probability of the token ``1`` at that first step, softmax over the whole
  vocabulary**. This is the probability that the model's greedy answer starts with ``1``, as TRUE
  reads its model; the alternative (a softmax restricted to the tokens ``0`` and ``1``) would give
  probability to a model that wants to write neither. We keep the full-vocabulary reading: a
  well-trained model puts nearly all mass on ``0``/``1`` and the two agree; where they do not, the full
  softmax is the faithful one. The token is whatever the tokenizer encodes ``"1"`` to (``▁1`` in T5's
  SentencePiece vocabulary); a tokenizer that needs more than one token for it is an error;
* pairs are deduplicated, sorted by token length and batched (padding with the attention mask), so a
  score does not depend on the batch it lands in;
* ``max_length`` (tokens of the whole prompt) defaults to 2048, TRUE's input limit for its T5-11B
  (T5's relative position buffers have no hard limit). The ``nli`` scorer chunks long groundings to fit
  (maximum over chunks), as it does for classifiers; an input that still does not fit has its premise
  cut, with a warning, never the hypothesis.

The engine has the :class:`tfc.scorers.nli_engine.NLIEngine` interface (``tok``, ``max_length``,
``n_special``, ``labels``, ``i_ent``, ``probs``, ``hyp_budget``), so ``NLIScorer`` uses it unchanged.
Its ``labels`` are ``("entailment", "not_entailment")``: column 0 is P(``1``), column 1 its complement.
"""
from __future__ import annotations

import warnings

import numpy as np

from tfc import models
from tfc.scorers.base import pad_batch, progress_bar
from tfc.scorers.nli_engine import NLIEngine

TRUE_TEMPLATE = "premise: {premise} hypothesis: {hypothesis}"
POSITIVE = "1"
DEFAULT_MAX_LENGTH = 2048


def true_prompt(premise: str, hypothesis: str, template: str = TRUE_TEMPLATE) -> str:
    """The text TRUE's T5 NLI model reads."""
    return template.format(premise=premise, hypothesis=hypothesis)


class Seq2SeqNLIEngine(NLIEngine):
    """P(``1`` at decoding step 1 | TRUE prompt) from an ``AutoModelForSeq2SeqLM`` checkpoint."""

    head = "seq2seq-1"

    def __init__(self, checkpoint, revision=None, max_length=None, dtype="float32", device=None,
                 template: str = TRUE_TEMPLATE, positive: str = POSITIVE):
        from transformers import AutoModelForSeq2SeqLM

        if dtype in models.INT8_DTYPES:
            raise ValueError(f"dtype {dtype!r} is not supported for text-to-text NLI models")
        path = models.resolve(checkpoint)
        self.device = models.resolve_device(device)
        self.model = AutoModelForSeq2SeqLM.from_pretrained(path, revision=revision, dtype=models.torch_dtype(dtype))
        self.model.to(self.device).eval()
        self.tok = models.load_tokenizer(checkpoint, revision)
        self.template = template
        ids = self.tok(positive, add_special_tokens=False)["input_ids"]
        if len(ids) != 1:
            raise ValueError(f"the tokenizer encodes {positive!r} as {len(ids)} tokens {ids}; a text-to-text NLI "
                             "score needs it to be one token")
        self.positive_id = int(ids[0])
        start = self.model.config.decoder_start_token_id
        if start is None:
            raise ValueError("the model config has no decoder_start_token_id")
        self.start_id = int(start)
        self.labels = ("entailment", "not_entailment")
        self.i_ent, self.i_con = 0, None
        self.max_length = int(max_length or DEFAULT_MAX_LENGTH)
        # tokens the template and the end-of-sequence marker add around premise + hypothesis
        self.n_special = len(self.tok(true_prompt("", "", template))["input_ids"])

    def prompt(self, premise: str, hypothesis: str) -> str:
        return true_prompt(premise, hypothesis, self.template)

    def _fit(self, premise: str, hypothesis: str, n: int) -> str:
        """The prompt with the premise cut by the ``n - max_length`` tokens it is over."""
        p_ids = self.tok(premise, add_special_tokens=False, verbose=False)["input_ids"]   # over-long by design
        keep = max(len(p_ids) - (n - self.max_length), 0)
        return self.prompt(self.tok.decode(p_ids[:keep]), hypothesis)

    def probs(self, pairs: list[tuple[str, str]], batch_size: int, progress: bool = False) -> np.ndarray:
        """(n, 2): P(``1``) and 1 - P(``1``) for each (premise, hypothesis); duplicates computed once."""
        import torch

        if not pairs:
            return np.zeros((0, 2))
        uniq = list(dict.fromkeys(pairs))
        index = {p: i for i, p in enumerate(uniq)}
        prompts = [self.prompt(p, h) for p, h in uniq]
        enc = self.tok(prompts, truncation=False, verbose=False)
        ids, mask = list(enc["input_ids"]), list(enc["attention_mask"])
        over = [i for i, x in enumerate(ids) if len(x) > self.max_length]
        self.last_truncated = len(over)
        if over:
            warnings.warn(f"{len(over)} text-to-text NLI input(s) exceeded max_length={self.max_length} after "
                          "chunking; their premise was cut (see Seq2SeqNLIEngine.last_truncated)")
            for i in over:
                fixed = self.tok(self._fit(*uniq[i], len(ids[i])), truncation=True, max_length=self.max_length)
                ids[i], mask[i] = fixed["input_ids"], fixed["attention_mask"]
        order = sorted(range(len(uniq)), key=lambda i: (len(ids[i]), i))
        out = np.zeros((len(uniq), 2), dtype=np.float64)
        batches = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
        with torch.inference_mode(), models.torch_threads():
            for b in progress_bar(batches, desc="nli-seq2seq", enabled=progress):
                feats = pad_batch(self.tok, {"input_ids": ids, "attention_mask": mask}, b)
                feats = {k: v.to(self.device) for k, v in feats.items()}
                dec = torch.full((len(b), 1), self.start_id, dtype=torch.long, device=self.device)
                logits = self.model(**feats, decoder_input_ids=dec).logits[:, 0, :].float()
                p = torch.softmax(logits, dim=-1)[:, self.positive_id]
                out[b] = torch.stack([p, 1.0 - p], dim=-1).double().cpu().numpy()
        return out[[index[p] for p in pairs]]
