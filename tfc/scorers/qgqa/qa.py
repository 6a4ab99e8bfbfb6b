"""Extractive question answering of the QG-QA scorers (:class:`ExtractiveQA`): any
``AutoModelForQuestionAnswering`` checkpoint, batched, read in overlapping windows, with SQuAD 2.0 abstention."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tfc.scorers.base import pad_batch, progress_bar

NO_ANSWER = ""  # what a QA call returns when the model abstains


@dataclass(frozen=True)
class QAResult:
    text: str          # "" = no answer
    start: int         # character offsets in the context (-1 for no answer)
    end: int
    score: float       # best span score minus the null score (logit units)

    @property
    def has_answer(self) -> bool:
        return self.start >= 0


SPAN_RULES = ("best-pair", "argmax")


class ExtractiveQA:
    """Batched extractive QA with SQuAD 2.0 abstention on any ``AutoModelForQuestionAnswering`` checkpoint.

    ``span_rule`` decodes the answer of a window:

    * ``"best-pair"``: the best start <= end pair inside the context (at most ``max_answer_tokens`` long), returned
      when its score beats the null (``[CLS]``) score by more than ``null_threshold``; the text is the context's
      own characters;
    * ``"argmax"``: Q²'s ``question_answering.get_answer`` (the transformers task-summary recipe): the arg-max
      start and the arg-max end taken independently over the whole input (question and special tokens
      included), the text the tokenizer's ``convert_tokens_to_string`` of the tokens between them -- empty when
      the end comes before the start, ``[CLS]`` (no answer here) when both fall on it. The reference reads one
      input; a context longer than a window is read here in windows and the window with the largest
      start + end logit is kept. ``max_answer_tokens`` and ``null_threshold`` do not apply.
    """

    def __init__(self, checkpoint: str, revision: str | None = None, max_length: int = 384, stride: int = 128,
                 max_answer_tokens: int = 30, null_threshold: float = 0.0, device: str | None = None,
                 dtype: str = "float32", span_rule: str = "best-pair"):
        if stride >= max_length:
            raise ValueError("stride must be smaller than max_length")
        if span_rule not in SPAN_RULES:
            raise ValueError(f"span_rule must be one of {SPAN_RULES}; got {span_rule!r}")
        self.span_rule = span_rule
        self.checkpoint, self.revision = checkpoint, revision
        self.max_length, self.stride, self.max_answer_tokens = max_length, stride, max_answer_tokens
        self.null_threshold, self.device, self.dtype = null_threshold, device, dtype
        self.model = None

    def identity(self) -> str:
        from tfc import models

        return models.identity(self.checkpoint, self.revision)

    @classmethod
    def from_model(cls, model, tok, max_length: int = 384, stride: int = 128, **kw) -> "ExtractiveQA":
        """A reader around a model already in memory (the QA trainer's dev curve evaluates the model it is
        training without a save-and-reload); the model's own device is used and it is not moved."""
        qa = cls("<in-memory>", max_length=max_length, stride=stride, **kw)
        qa._attach(model, tok, next(model.parameters()).device)
        return qa

    def _attach(self, model, tok, device) -> None:
        """Use ``model`` and ``tok`` (a fast tokenizer: answers need offset mappings) on ``device``."""
        if not getattr(tok, "is_fast", False):
            raise TypeError("ExtractiveQA needs a fast tokenizer (offset mappings)")
        self.model, self.tok, self._device = model, tok, device
        self._max_len = min(self.max_length, int(getattr(tok, "model_max_length", 512) or 512))

    def load(self) -> "ExtractiveQA":
        if self.model is None:
            from transformers import AutoModelForQuestionAnswering

            from tfc import models

            path = models.resolve(self.checkpoint)
            model = AutoModelForQuestionAnswering.from_pretrained(
                path, revision=self.revision, dtype=models.torch_dtype(self.dtype))
            device = models.resolve_device(self.device)
            model.to(device).eval()
            self._attach(model, models.load_tokenizer(self.checkpoint, self.revision), device)
        return self

    def windows(self, questions: list[str], contexts: list[str]) -> list[int]:
        """How many windows (``max_length`` tokens, ``stride`` overlap) :meth:`answer` reads each
        (question, context) pair in; 0 for an empty context."""
        self.load()
        tok = self.tok
        q_max = self._max_len // 2
        out = []
        for q, c in zip(questions, contexts):
            if not c.strip():
                out.append(0)
                continue
            q = q if q.strip() else "?"
            ids = tok(q, add_special_tokens=False, verbose=False)["input_ids"]
            q = tok.decode(ids[:q_max]) if len(ids) > q_max else q
            enc = tok(q, c, truncation="only_second", max_length=self._max_len, stride=self.stride,
                      return_overflowing_tokens=True, padding=False, verbose=False)
            out.append(len(enc["input_ids"]))
        return out

    def answer(self, questions: list[str], contexts: list[str], batch_size: int = 32,
               progress: bool = False) -> list[QAResult]:
        """Answer each (question, context) pair; duplicates are computed once. Empty question or context
        -> no answer."""
        import torch

        if len(questions) != len(contexts):
            raise ValueError(f"questions and contexts differ in length: {len(questions)} != {len(contexts)}")
        none = QAResult(NO_ANSWER, -1, -1, float("-inf"))
        pairs = [(q, c) for q, c in zip(questions, contexts)]
        uniq = [p for p in dict.fromkeys(pairs) if p[0].strip() and p[1].strip()]
        if not uniq:
            return [none] * len(pairs)
        self.load()
        tok = self.tok
        pad_right = tok.padding_side == "right"
        # a question too long to leave room for a context window (a degenerate generated question) is cut
        # to half the window; the tokenizer would otherwise refuse the whole batch
        q_max = self._max_len // 2
        q_ids = tok([q for q, _ in uniq], add_special_tokens=False, verbose=False)["input_ids"]
        qs = [tok.decode(ids[:q_max]) if len(ids) > q_max else q for ids, (q, _) in zip(q_ids, uniq)]
        enc = tok(qs, [c for _, c in uniq], truncation="only_second",
                  max_length=self._max_len, stride=self.stride, return_overflowing_tokens=True,
                  return_offsets_mapping=True, padding=False)
        owner = enc["overflow_to_sample_mapping"]
        n_feat = len(owner)
        keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc]
        order = sorted(range(n_feat), key=lambda i: (len(enc["input_ids"][i]), i))
        starts, ends = [None] * n_feat, [None] * n_feat
        batches = [order[s:s + batch_size] for s in range(0, n_feat, batch_size)]
        with torch.inference_mode():
            for b in progress_bar(batches, desc="qa", enabled=progress):
                feats = pad_batch(tok, enc, b, keys)
                feats = {k: v.to(self._device) for k, v in feats.items()}
                out = self.model(**feats)
                s = out.start_logits.float().cpu().numpy()
                e = out.end_logits.float().cpu().numpy()
                for j, i in enumerate(b):
                    n = len(enc["input_ids"][i])
                    sl = slice(0, n) if pad_right else slice(s.shape[1] - n, s.shape[1])
                    starts[i], ends[i] = s[j, sl], e[j, sl]
        if self.span_rule == "argmax":
            return self._argmax_answers(pairs, uniq, enc, owner, starts, ends, none)
        best: dict[int, tuple] = {}
        null: dict[int, float] = {}
        L = self.max_answer_tokens
        for i in range(n_feat):
            u = owner[i]
            seq_ids = enc.sequence_ids(i)
            offs = enc["offset_mapping"][i]
            ctx = np.array([sid == 1 for sid in seq_ids])
            st, en = starts[i], ends[i]
            null[u] = min(null.get(u, np.inf), float(st[0] + en[0]))
            if not ctx.any():
                continue
            # all valid (start, end) pairs: both in the context, start <= end < start + L
            idx = np.flatnonzero(ctx)
            m = st[idx][:, None] + en[idx][None, :]
            valid = (idx[None, :] >= idx[:, None]) & (idx[None, :] - idx[:, None] < L)
            m = np.where(valid, m, -np.inf)
            k = int(np.argmax(m))
            a, bb = divmod(k, m.shape[1])
            sc = float(m[a, bb])
            if u not in best or sc > best[u][0]:
                best[u] = (sc, offs[idx[a]][0], offs[idx[bb]][1])
        res = {}
        for u, (q, c) in enumerate(uniq):
            if u in best and best[u][0] - null[u] > self.null_threshold:
                sc, a, b2 = best[u]
                res[(q, c)] = QAResult(c[a:b2], int(a), int(b2), sc - null[u])
            else:
                diff = (best[u][0] - null[u]) if u in best else float("-inf")
                res[(q, c)] = QAResult(NO_ANSWER, -1, -1, diff)
        return [res.get(p, none) for p in pairs]

    def _argmax_answers(self, pairs, uniq, enc, owner, starts, ends, none) -> list[QAResult]:
        """``span_rule="argmax"`` (see the class doc): per window the arg-max start and end, the window with the
        largest start + end logit kept; ``[CLS]`` alone is no answer."""
        tok = self.tok
        best: dict[int, tuple] = {}
        for i, u in enumerate(owner):
            st, en = starts[i], ends[i]
            a, b = int(np.argmax(st)), int(np.argmax(en))
            sc = float(st[a] + en[b])
            if u in best and sc <= best[u][0]:
                continue
            ids = enc["input_ids"][i]
            text = tok.convert_tokens_to_string(tok.convert_ids_to_tokens(ids[a:b + 1]))
            seq, offs = enc.sequence_ids(i), enc["offset_mapping"][i]
            start = offs[a][0] if seq[a] == 1 else 0
            end = offs[b][1] if b < len(seq) and seq[b] == 1 else start
            best[u] = (sc, text, int(start), int(end))
        res = {}
        for u, p in enumerate(uniq):
            sc, text, a, b = best[u]
            res[p] = (QAResult(NO_ANSWER, -1, -1, sc) if text.strip() == tok.cls_token
                      else QAResult(text, a, max(a, b), sc))
        return [res.get(p, none) for p in pairs]
