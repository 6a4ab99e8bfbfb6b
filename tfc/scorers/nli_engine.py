"""The NLI pair engine: a sequence classifier read as P(entailment) (or its first logit), batched.

:func:`tfc.scorers.nli.make_engine` builds it (or, for a text-to-text model, the
:class:`tfc.scorers.seq2seq_nli.Seq2SeqNLIEngine`, which has the same interface).
"""
from __future__ import annotations

import numpy as np

from tfc import models
from tfc.scorers.base import length_batches, pad_batch, progress_bar


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

    def probs(self, pairs: list[tuple[str, str]], batch_size: int, progress: bool = False,
              truncation: str | None = None) -> np.ndarray:
        """Class probabilities (n, n_labels) for (premise, hypothesis) pairs; duplicates computed once.

        A pair longer than ``max_length`` is cut by the tokenizer's ``truncation`` strategy when one is named (a
        reading that truncates, such as WeCheck's README call); with none, the callers' chunk budgets should have
        made it fit, and the premise of a pair that still does not is cut ``only_first`` with a warning. After the
        call, ``last_truncated`` counts the distinct pairs that were cut and ``last_cut[i]`` says whether pair ``i``
        was."""
        import torch

        if not pairs:
            self.last_truncated, self.last_cut = 0, np.zeros(0, dtype=bool)
            return np.zeros((0, len(self.labels)))
        uniq = list(dict.fromkeys(pairs))
        index = {p: i for i, p in enumerate(uniq)}
        enc = self.tok([p for p, _ in uniq], [h for _, h in uniq], truncation=False, verbose=False)
        ids = enc["input_ids"]
        over = [i for i, x in enumerate(ids) if len(x) > self.max_length]
        self.last_truncated = len(over)
        if over:
            if truncation is None:
                # chunk budgets make this rare (a tokenizer whose pair encoding differs from the sum of its
                # parts); cut the premise to fit and say so, never silently
                import warnings

                warnings.warn(f"{len(over)} NLI input(s) exceeded max_length={self.max_length} after chunking; "
                              "their premise was truncated (see NLIEngine.last_truncated)")
            fix = self.tok([uniq[i][0] for i in over], [uniq[i][1] for i in over],
                           truncation=truncation or "only_first", max_length=self.max_length)
            for k in enc.keys():
                for j, i in enumerate(over):
                    enc[k][i] = fix[k][j]
            ids = enc["input_ids"]
        out = np.zeros((len(uniq), len(self.labels)), dtype=np.float64)
        keys = [k for k in enc.keys()]
        batches = [b.tolist() for b in length_batches([len(x) for x in ids], batch_size)]   # longest first
        with torch.inference_mode(), models.torch_threads():    # TFC_THREADS, when set
            for b in progress_bar(batches, desc="nli", enabled=progress):
                feats = pad_batch(self.tok, enc, b, keys)
                feats = {k: v.to(self.device) for k, v in feats.items()}
                assert "attention_mask" in feats
                logits = self.model(**feats).logits.float()
                if self.head == "logit0-sigmoid":
                    p = torch.sigmoid(logits[:, 0])
                    out[b] = torch.stack([p, 1.0 - p], dim=-1).double().cpu().numpy()
                else:
                    out[b] = torch.softmax(logits, dim=-1).double().cpu().numpy()
        rows = [index[p] for p in pairs]
        cut = np.zeros(len(uniq), dtype=bool)
        cut[over] = True
        self.last_cut = cut[rows]
        return out[rows]

    def hyp_budget(self, hyps: list[str], min_chunk: int) -> tuple[list[str], list[int], list[bool]]:
        """Token budget left for the premise given each hypothesis; over-long hypotheses are cut."""
        from tfc.text.chunking import count_tokens

        room = self.max_length - self.n_special
        lens = count_tokens(self.tok, hyps)
        out_h, budgets, cut = [], [], []
        for h, n in zip(hyps, lens):
            if room - n < min_chunk:
                keep = max(room - min_chunk, 1)
                # verbose=False: the cut is the point here, and recorded (aux_hyp_truncated), not an error
                ids = self.tok(h, add_special_tokens=False, verbose=False)["input_ids"][:keep]
                h = self.tok.decode(ids)
                n = len(ids)
                cut.append(True)
            else:
                cut.append(False)
            out_h.append(h)
            budgets.append(room - n)
        return out_h, budgets, cut
