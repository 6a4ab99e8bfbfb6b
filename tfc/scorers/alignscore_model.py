"""AlignScore inference as published, with the paper's ablations (the model behind :mod:`tfc.scorers.alignscore`).

Inference as published (AlignScore's ``Inferencer.inference_per_example``, "nli_sp" mode), ``split="groups"``:

1. split the claim into sentences;
2. cut the context's sentences into ``n`` groups of ``len(sentences) // n`` consecutive sentences (at least
   one; the remainder makes one more, shorter group), where ``n = words // chunk_words + 1`` and ``words`` is
   the context's whitespace word count (:func:`equal_groups`);
3. score every (group, claim sentence) pair with the 3-way head's "aligned" (= entailment) probability, a pair
   over ``max_length`` tokens cut from its first text only (``only_first``; from the longer side when the claim
   sentence alone is too long, where the reference code falls back for its whole mini-batch);
4. for each claim sentence take the max over groups, then average over the claim's sentences.

``split="chunk"`` is tfc's packing: consecutive sentences greedily into chunks of at most ``chunk_words``
words (:func:`chunk_sentences`), so no chunk exceeds the budget unless one sentence does; over-long pairs
are cut from their longer side. Both are reported per row (``aux_n_truncated_pairs``). The sentence splitter
is tfc's (the reference calls NLTK's ``sent_tokenize``, whose punkt model is not available offline).

Ablations (AlignScore Figures 3 and 4) are options of :meth:`AlignScoreModel.score`:

* ``head``: ``"3way"`` (P(entailment)), ``"bin"`` (P(aligned)) or ``"reg"`` (the regression output);
* ``split``: ``"groups"`` (published), ``"chunk"`` (tfc's greedy packing), ``"document"`` (no splitting: one pair, truncated to ``max_length``),
  ``"smart-n"`` (context *sentences* x claim sentences, max over context then mean over claim: the
  SMART-N-style sentence matching) and ``"smart-l"`` (the same sentence matrix aggregated by a soft
  longest-common-subsequence, SMART-L-style, normalised by the number of claim sentences).

All (context unit x claim sentence) pairs of all examples are scored in large batches at once (sorted by
length to limit padding), then scattered back per example. Pairs are padded with attention masks, so a
pair's score does not depend on the batch it lands in beyond floating-point noise (~1e-6).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfc.models.multihead import load_multihead

HEADS = ("3way", "bin", "reg")
SPLITS = ("groups", "chunk", "document", "smart-n", "smart-l")


# --------------------------------------------------------------------------------------------------
# aggregation (pure numpy; unit-tested on hand-made matrices)

def aggregate_max_mean(matrix) -> float:
    """``matrix[context_unit, claim_sentence]`` -> mean over claim sentences of the max over context units."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.size == 0:
        raise ValueError(f"score matrix must be 2-D and non-empty; got shape {m.shape}")
    return float(m.max(axis=0).mean())


def aggregate_soft_lcs(matrix) -> float:
    """Soft longest common subsequence of the ordered context units and claim sentences, / #claim sentences.

    ``L[i, j] = max(L[i-1, j], L[i, j-1], L[i-1, j-1] + m[i, j])`` -- the LCS recursion with the 0/1 match
    replaced by the pair score, as SMART-L does. Hand-written: no library offers this recursion.
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.size == 0:
        raise ValueError(f"score matrix must be 2-D and non-empty; got shape {m.shape}")
    n, k = m.shape
    L = np.zeros((n + 1, k + 1))
    for i in range(1, n + 1):
        for j in range(1, k + 1):
            L[i, j] = max(L[i - 1, j], L[i, j - 1], L[i - 1, j - 1] + m[i - 1, j - 1])
    return float(L[n, k] / k)


# --------------------------------------------------------------------------------------------------
# splitting

def chunk_sentences(sentences: list[str], chunk_words: int = 350) -> list[str]:
    """Greedily pack consecutive sentences into chunks of at most ``chunk_words`` whitespace words.

    A single sentence longer than the budget becomes its own chunk (it is not cut mid-sentence).
    """
    if chunk_words < 1:
        raise ValueError("chunk_words must be >= 1")
    chunks, cur, n = [], [], 0
    for s in sentences:
        w = len(s.split())
        if cur and n + w > chunk_words:
            chunks.append(" ".join(cur))
            cur, n = [], 0
        cur.append(s)
        n += w
    if cur:
        chunks.append(" ".join(cur))
    return chunks


def equal_groups(sentences: list[str], text: str, chunk_words: int = 350) -> list[str]:
    """AlignScore's grouping of a context's sentences (``inference_per_example``): ``n = words // chunk_words + 1``
    with ``words`` the whitespace words of ``text``, then consecutive groups of ``max(len(sentences) // n, 1)``
    sentences joined by a space. The groups are not bounded in words: uneven sentences make uneven groups."""
    if chunk_words < 1:
        raise ValueError("chunk_words must be >= 1")
    n = len(text.strip().split()) // chunk_words + 1
    size = max(len(sentences) // n, 1)
    return [" ".join(sentences[i:i + size]) for i in range(0, len(sentences), size)]


def truncation_rule(split: str) -> str:
    """How a (context unit, claim sentence) pair over the length budget is cut: AlignScore's loop cuts the context
    only (``only_first``, for ``split="groups"``); tfc's readings cut the longer side (``longest_first``)."""
    return "only_first" if split == "groups" else "longest_first"


def _check_truncation(truncation: str) -> None:
    if truncation not in ("only_first", "longest_first"):
        raise ValueError(f"truncation must be 'only_first' or 'longest_first'; got {truncation!r}")


def _split_many(texts, splitter):
    try:
        from tfc.text.sentences import split_many
    except ImportError:  # pragma: no cover - the text layer is part of the package
        return [[t] for t in texts]
    return split_many(list(texts), splitter)


def build_units(contexts, claims, split: str = "chunk", chunk_words: int = 350, splitter: str = "auto",
                chunk_unit: str = "words", tokenizer=None):
    """Context units and claim units per example, for the chosen splitting mode.

    ``chunk_unit``: ``"words"`` counts the chunk budget in whitespace words (the published code);
    ``"tokens"`` counts it in the model tokenizer's tokens (``tokenizer`` required), through
    :func:`tfc.text.chunking.chunk_many` (which also cuts a single over-long sentence at token boundaries).

    A text that the splitter returns no sentence for (it is non-empty, e.g. only punctuation) counts as
    one unit, so every example has a score. Empty/blank texts raise ``ValueError``.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use one of {SPLITS}")
    contexts, claims = list(contexts), list(claims)
    if len(contexts) != len(claims):
        raise ValueError(f"{len(contexts)} contexts but {len(claims)} claims")
    for name, seq in (("context", contexts), ("claim", claims)):
        for i, t in enumerate(seq):
            if not isinstance(t, str) or not t.strip():
                raise ValueError(f"{name} {i} is empty or not a string")
    if split == "document":
        return [[c] for c in contexts], [[c] for c in claims]
    claim_units = [s or [c] for s, c in zip(_split_many(claims, splitter), claims)]
    ctx_sents = [s or [c] for s, c in zip(_split_many(contexts, splitter), contexts)]
    if chunk_unit not in ("words", "tokens"):
        raise ValueError(f"chunk_unit must be 'words' or 'tokens'; got {chunk_unit!r}")
    if split == "chunk" and chunk_unit == "tokens":
        if tokenizer is None:
            raise ValueError("chunk_unit='tokens' needs the model's tokenizer")
        from tfc.text.chunking import chunk_many

        ctx_units = [c.chunks for c in chunk_many(contexts, tokenizer, chunk_words, sentences=ctx_sents)]
    elif split == "chunk":
        ctx_units = [chunk_sentences(s, chunk_words) for s in ctx_sents]
    elif split == "groups":
        ctx_units = [equal_groups(s, c, chunk_words) for s, c in zip(ctx_sents, contexts)]
    else:
        ctx_units = ctx_sents
    return ctx_units, claim_units


# --------------------------------------------------------------------------------------------------
# the inference model

@dataclass
class AlignScoreModel:
    """A loaded three-head checkpoint. Build with :func:`load_alignscore_model`."""

    model: object
    tokenizer: object
    device: str
    max_length: int = 512
    path: str = ""

    @property
    def heads(self) -> tuple[str, ...]:
        return ("3way",) + tuple(self.model.heads.keys())

    def _aligned_index(self) -> int:
        return int(self.model.label_index["entailment"])

    BATCH_TOKEN_UNIT = None   # None: tfc.scorers.base.BATCH_TOKEN_UNIT (a class-level override for tests)

    def batches(self, lengths, batch_size: int = 32) -> list[np.ndarray]:
        """Index batches over pairs of token ``lengths`` (:func:`tfc.scorers.base.length_batches`)."""
        from tfc.scorers.base import length_batches

        return length_batches(lengths, batch_size, self.BATCH_TOKEN_UNIT)

    def predict(self, text_a, text_b, batch_size: int = 32, progress: bool = False,
                truncation: str = "longest_first") -> dict[str, np.ndarray]:
        """All heads for each (text_a, text_b) pair in one forward pass per batch.

        Returns ``{"3way": probs [N, 3] in id2label order, "bin": probs [N, 2], "reg": [N]}`` (the extra
        keys only when the checkpoint has those heads) and ``"truncated"`` ([N] bool: the pair was longer than
        ``max_length`` tokens and the tokenizer cut it, by ``truncation``: :func:`truncation_rule`). The pairs are tokenized once, batched by
        :meth:`batches` (longest first, a token budget per batch) and returned in input order; a pair's
        result does not depend on its batch (the attention mask is always passed).
        """
        import torch

        from tfc.scorers.base import pad_batch

        a, b = list(text_a), list(text_b)
        if len(a) != len(b):
            raise ValueError(f"{len(a)} text_a but {len(b)} text_b")
        n = len(a)
        out = {h: None for h in self.heads}
        if n == 0:
            shapes = {"3way": (0, 3), "bin": (0, 2), "reg": (0,)}
            return {**{h: np.zeros(shapes[h]) for h in out}, "truncated": np.zeros(0, dtype=bool)}
        keep = ("input_ids", "attention_mask", "token_type_ids")
        # tokenized once untruncated; only the pairs over max_length are tokenized again, cut from their longer
        # side, and reported (as tfc.scorers.nli_engine does; never silent)
        enc = self.tokenizer(a, b, truncation=False, verbose=False)
        enc = {k: list(v) for k, v in enc.items() if k in keep}
        truncated = np.array([len(x) > self.max_length for x in enc["input_ids"]], dtype=bool)
        over = np.flatnonzero(truncated)
        if len(over):
            fix = self._truncated_many([a[i] for i in over], [b[i] for i in over], truncation)
            for k in enc:
                for j, i in enumerate(over):
                    enc[k][i] = fix[k][j]
        groups = self.batches([len(x) for x in enc["input_ids"]], batch_size)
        chunks = {h: [] for h in out}
        if progress:
            from tqdm.auto import tqdm

            groups = tqdm(groups, desc="alignscore pairs", unit="batch", mininterval=5)
        order = []
        with torch.inference_mode():
            for idx in groups:
                order.extend(idx.tolist())
                batch = pad_batch(self.tokenizer, enc, idx, device=self.device)
                res = self.model(**batch)
                # kept on the device and copied back once at the end: on a GPU a copy per batch is a
                # synchronisation per batch (no effect on a CPU)
                chunks["3way"].append(torch.softmax(res["3way"].float(), -1))
                if "bin" in res:
                    chunks["bin"].append(torch.softmax(res["bin"].float(), -1))
                if "reg" in res:
                    chunks["reg"].append(res["reg"].float())
        inv = np.empty(n, dtype=int)
        inv[np.asarray(order)] = np.arange(n)
        return {**{h: torch.cat(v).cpu().numpy()[inv] for h, v in chunks.items() if v}, "truncated": truncated}

    def _truncated_many(self, a: list[str], b: list[str], truncation: str) -> dict:
        """Pairs cut to ``max_length`` by ``truncation`` in one tokenizer call; when the tokenizer refuses an
        ``only_first`` cut (a second text that alone does not fit), each pair is cut on its own
        (:meth:`_truncated`), so only the refused pairs fall back and no pair depends on its neighbours."""
        _check_truncation(truncation)
        try:
            return self.tokenizer(a, b, truncation=truncation, max_length=self.max_length)
        except Exception:  # noqa: BLE001 - the fast tokenizer raises a plain Exception for an impossible cut
            one = [self._truncated(x, y, truncation) for x, y in zip(a, b)]
            return {k: [o[k] for o in one] for k in one[0]}

    def _truncated(self, a: str, b: str, truncation: str) -> dict:
        """One pair cut to ``max_length`` by ``truncation``; ``only_first`` falls back to ``longest_first`` when
        the second text alone does not fit (the tokenizer refuses)."""
        _check_truncation(truncation)
        try:
            return self.tokenizer(a, b, truncation=truncation, max_length=self.max_length)
        except Exception:  # noqa: BLE001 - the fast tokenizer raises a plain Exception for an impossible cut
            return self.tokenizer(a, b, truncation="longest_first", max_length=self.max_length)

    def pair_scores(self, text_a, text_b, head: str = "3way", batch_size: int = 32,
                    progress: bool = False, truncation: str = "longest_first") -> np.ndarray:
        """The "aligned" score of each pair from one head."""
        if head not in HEADS:
            raise ValueError(f"unknown head {head!r}; use one of {HEADS}")
        if head not in self.heads:
            raise ValueError(f"checkpoint {self.path} has no {head!r} head (heads: {self.heads})")
        p = self.predict(text_a, text_b, batch_size, progress, truncation)
        if head == "3way":
            return p["3way"][:, self._aligned_index()]
        if head == "bin":
            return p["bin"][:, 1]
        return p["reg"]

    def predict_unique(self, text_a, text_b, batch_size: int = 32, progress: bool = False,
                       memo: dict | None = None, truncation: str = "longest_first") -> dict[str, np.ndarray]:
        """:meth:`predict` computing each distinct pair once; ``memo`` (a dict kept by the caller, keyed
        by a sha1 of the pair) carries pair results across calls, e.g. from SMART-N to SMART-L, which
        score the same sentence pairs. Results equal :meth:`predict` (a pair's score does not depend on
        its batch)."""
        import hashlib

        a, b = list(text_a), list(text_b)
        if len(a) != len(b):
            raise ValueError(f"{len(a)} text_a but {len(b)} text_b")
        keys = [hashlib.sha1(f"{truncation}\x00{x}\x00{y}".encode()).digest() for x, y in zip(a, b)]
        memo = {} if memo is None else memo
        todo = {}
        for k, x, y in zip(keys, a, b):
            if k not in memo and k not in todo:
                todo[k] = (x, y)
        if todo:
            got = self.predict([x for x, _ in todo.values()], [y for _, y in todo.values()], batch_size, progress,
                               truncation)
            for i, k in enumerate(todo):
                memo[k] = {h: v[i] for h, v in got.items()}
        if not keys:
            return self.predict([], [], batch_size)
        return {h: np.stack([memo[k][h] for k in keys]) for h in memo[keys[0]]}

    def score_heads(self, contexts, claims, split: str = "chunk", chunk_words: int = 350,
                    splitter: str = "auto", batch_size: int = 32, chunk_unit: str = "words",
                    progress: bool = False, return_matrices: bool = False, memo: dict | None = None) -> dict:
        """AlignScore of each (context, claim) from *every* head of the checkpoint, in one pass.

        All (context unit x claim sentence) pairs of all examples go through :meth:`predict` together
        (not one example at a time; each distinct pair once, see :meth:`predict_unique` for ``memo``); each
        head's pair scores are then aggregated per example (max over
        context units, mean over claim sentences; soft LCS for ``smart-l``). Returns
        ``{"scores": {head: [N]}, "n_pairs": [N] int, "n_truncated": [N] int, "matrices": {head: [matrix
        per example]}}`` (``n_truncated``: the example's pairs cut to ``max_length``; ``matrices`` only with
        ``return_matrices``).
        """
        ctx_units, claim_units = build_units(contexts, claims, split, chunk_words, splitter, chunk_unit,
                                             self.tokenizer)
        pa, pb, spans = [], [], []
        for cu, su in zip(ctx_units, claim_units):
            start = len(pa)
            for c in cu:
                for s in su:
                    pa.append(c)
                    pb.append(s)
            spans.append((start, len(cu), len(su)))
        probs = self.predict_unique(pa, pb, batch_size, progress, memo, truncation_rule(split))
        flat = {"3way": probs["3way"][:, self._aligned_index()]}
        if "bin" in probs:
            flat["bin"] = probs["bin"][:, 1]
        if "reg" in probs:
            flat["reg"] = probs["reg"]
        agg = aggregate_soft_lcs if split == "smart-l" else aggregate_max_mean
        cut = np.asarray(probs["truncated"], dtype=np.int64)
        out = {"scores": {h: np.empty(len(spans)) for h in flat},
               "n_pairs": np.array([nc * ns for _, nc, ns in spans], dtype=np.int64),
               "n_truncated": np.array([int(cut[start:start + nc * ns].sum()) for start, nc, ns in spans],
                                       dtype=np.int64)}
        if return_matrices:
            out["matrices"] = {h: [] for h in flat}
        for h, v in flat.items():
            for i, (start, nc, ns) in enumerate(spans):
                mat = v[start:start + nc * ns].reshape(nc, ns)
                out["scores"][h][i] = agg(mat)
                if return_matrices:
                    out["matrices"][h].append(mat)
        return out

    def score(self, contexts, claims, head: str = "3way", split: str = "chunk", chunk_words: int = 350,
              splitter: str = "auto", batch_size: int = 32, return_matrices: bool = False,
              chunk_unit: str = "words", progress: bool = False):
        """AlignScore of each (context, claim) from one head; higher = more consistent, in [0, 1].

        ``chunk_words`` is the chunk budget, in ``chunk_unit`` (``"words"`` as published, or ``"tokens"``).
        See :meth:`score_heads` for all heads at once.
        """
        if head not in HEADS:
            raise ValueError(f"unknown head {head!r}; use one of {HEADS}")
        if head not in self.heads:
            raise ValueError(f"checkpoint {self.path} has no {head!r} head (heads: {self.heads})")
        res = self.score_heads(contexts, claims, split, chunk_words, splitter, batch_size, chunk_unit,
                               progress, return_matrices)
        scores = res["scores"][head]
        return (scores, res["matrices"][head]) if return_matrices else scores


def load_alignscore_model(ckpt_dir, device: str = "cpu", max_length: int = 512) -> AlignScoreModel:
    """Load a tfc checkpoint directory (``tfc/<name>`` in-house names are resolved) for inference.

    The object computes all heads the checkpoint has in one forward pass (:meth:`AlignScoreModel.predict`)
    and AlignScore scores (:meth:`AlignScoreModel.score`). A plain NLI checkpoint (no side heads) gives
    the 3-way head only.
    """
    path = resolve_checkpoint(ckpt_dir)
    model, tok = load_multihead(path, device)
    limit = getattr(model.model.config, "max_position_embeddings", max_length)
    # BERT-like models reserve no positions; RoBERTa-like ones reserve padding_idx + 1 positions.
    if getattr(model.model.config, "model_type", "") in ("roberta", "xlm-roberta", "mpnet"):
        limit -= 2
    return AlignScoreModel(model, tok, device, min(max_length, limit), str(path))


def resolve_checkpoint(name) -> Path:
    """``tfc/<name>`` -> ``artifacts_dir()/<name>``; a path is returned as is (must exist)."""
    s = str(name)
    try:  # the models layer owns resolution; use it when present
        from tfc.models import resolve as _resolve  # type: ignore[attr-defined]

        p = Path(_resolve(s))
        if p.exists():
            return p
    except (ImportError, AttributeError, Exception):  # noqa: BLE001 - fall back to the documented rule
        pass
    from tfc import config

    p = config.artifacts_dir() / s.split("/", 1)[1] if s.startswith("tfc/") else Path(s)
    if not p.is_dir():
        raise FileNotFoundError(f"checkpoint {s!r} not found at {p} (train it with `tfc train ...`)")
    return p


def load_alignscore_dir(path, device: str = "cpu", max_length: int = 512):
    """An :class:`AlignScoreModel` over a converted directory (same scoring code as
    the in-house checkpoints: chunking, max-mean, every head in one pass)."""
    from tfc.models.convert import ROBERTA_TYPES, load_pooled_multihead

    model, tok = load_pooled_multihead(path, device)
    cfg = model.model.config
    limit = int(getattr(cfg, "max_position_embeddings", max_length))
    if cfg.model_type in ROBERTA_TYPES:   # RoBERTa reserves padding_idx + 1 positions
        limit -= int(getattr(cfg, "pad_token_id", 1) or 1) + 1
    return AlignScoreModel(model, tok, device, min(max_length, limit), str(path))
