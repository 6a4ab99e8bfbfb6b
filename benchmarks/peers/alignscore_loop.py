"""The AlignScore reference inference loop, re-written for a tfc checkpoint (benchmarks only).

``alignscore-speedofmagic`` (the PyPI fork of AlignScore) loads only its own PyTorch-Lightning
``.ckpt`` files (``BERTAlignModel.load_from_checkpoint``), not a tfc checkpoint, and pins numpy<2 and
transformers<5. So this module reproduces its ``Inferencer.inference_per_example`` (the ``nli_sp``
path the paper's AlignScore uses) step by step on our model:

* one example at a time;
* the grounding's sentences are grouped into chunks of about 350 words (``n_chunk = words // 350 + 1``
  groups of ``len(sentences) // n_chunk`` sentences);
* every (chunk, claim sentence) pair is tokenised with ``padding="max_length"`` to the tokenizer's
  ``model_max_length`` (512) and ``truncation="only_first"``, in mini-batches of 32 (per example); a
  mini-batch the tokenizer cannot cut that way (a claim sentence longer than the budget on its own) is
  tokenised again with ``truncation=True``, as the reference's ``batch_tokenize`` does;
* ``torch.no_grad``; softmax of the 3-way head; P(entailment); max over chunks, mean over sentences.

Sentence splitting: the fork uses NLTK's ``sent_tokenize`` (its punkt data cannot be downloaded
here); this loop takes the splitter as an argument and the benchmark passes tfc's, so both sides see
the same units and the score comparison tests the inference path.
"""
from __future__ import annotations

import numpy as np


def _chunks(lst, n):
    for i in range(0, len(lst), n):
        yield " ".join(lst[i:i + n])


class ReferenceLoop:
    def __init__(self, checkpoint: str, device: str = "cpu", batch_size: int = 32):
        from tfc.scorers.alignscore_model import load_alignscore_model

        self.am = load_alignscore_model(checkpoint, device=device)
        self.tok = self.am.tokenizer
        self.device = device
        self.batch_size = batch_size
        self.i_ent = int(self.am.model.label_index["entailment"])
        self.max_length = min(int(self.tok.model_max_length), self.am.max_length)

    def _inference(self, premise: list[str], hypo: list[str]) -> np.ndarray:
        import torch

        out = []
        for s in range(0, len(premise), self.batch_size):
            kw = dict(padding="max_length", max_length=self.max_length, return_tensors="pt")
            try:
                enc = self.tok(premise[s:s + self.batch_size], hypo[s:s + self.batch_size], truncation="only_first", **kw)
            except Exception:  # noqa: BLE001 - the reference catches every error here too
                enc = self.tok(premise[s:s + self.batch_size], hypo[s:s + self.batch_size], truncation=True, **kw)
            enc = {k: v.to(self.device) for k, v in enc.items()
                   if k in ("input_ids", "attention_mask", "token_type_ids")}
            with torch.no_grad():
                logits = self.am.model(**enc)["3way"]
            out.append(torch.softmax(logits.float(), -1)[:, self.i_ent].cpu().numpy())
        return np.concatenate(out)

    def score_one(self, premise: str, hypo: str, split, chunker: str = "published") -> float:
        """``chunker="published"``: the fork's rule (equal groups of sentences); ``"greedy"``: tfc's greedy
        packing into <= 350-word chunks (same units as tfc, to check agreement of the inference path)."""
        premise_sents = split(premise) or [""]
        if chunker == "greedy":
            from tfc.scorers.alignscore_model import chunk_sentences

            premise_sents = chunk_sentences(premise_sents, 350)
        else:
            n_chunk = len(premise.strip().split()) // 350 + 1
            n_chunk = max(len(premise_sents) // n_chunk, 1)
            premise_sents = list(_chunks(premise_sents, n_chunk))
        hypo_sents = split(hypo)
        pa = [p for p in premise_sents for _ in hypo_sents]
        pb = [h for _ in premise_sents for h in hypo_sents]
        scores = self._inference(pa, pb).reshape(len(premise_sents), len(hypo_sents))
        return float(scores.max(axis=0).mean())

    def score(self, groundings, generations, split, chunker: str = "published") -> np.ndarray:
        return np.array([self.score_one(g, h, split, chunker) for g, h in zip(groundings, generations)])
