"""The scorer protocol.

Every scorer is a :class:`Scorer` holding a frozen :class:`ScorerConfig` that names every setting
able to change its scores. From it:

* ``signature``: ``<name>.<readable tag>.<hash10>``, a readable part plus a sha256 of the whole config
  (canonical JSON), every field included whatever its value, so a default can change without two
  configurations sharing a signature (``tfc cache migrate`` rewrites committed caches when a field is added
  or renamed). Only the fields listed in ``ScorerConfig.RUNTIME`` (batch size, device, progress) are left out: the tests assert that scores do not depend on batch size (to 1e-5)
  and the same code runs on CPU and GPU. ``dtype`` *is* part of the signature (fp16 changes scores).
  Model checkpoints enter the hash through :func:`tfc.models.identity` (content hash of a local
  directory, ``id@revision`` for the hub), so retraining a checkpoint changes the signature.
* ``output_range``: the declared (low, high) of scores; higher always means more consistent.
* ``load()``: loads models once (idempotent); construction never loads anything.
* ``score(groundings, generations, batch_size=None, progress=True) -> np.ndarray`` (float64).

Input rules, shared by all scorers (:func:`validate_inputs`): two sequences of equal length whose
items are ``str``; ``None`` or any non-string raises ``TypeError`` naming the index; a length mismatch
raises ``ValueError``; a string that is not valid Unicode (a lone surrogate such as ``"\\ud800"``,
which no tokenizer can encode) raises ``ValueError`` naming the index. **Blank strings** -- empty,
white space only, or nothing but invisible characters (control characters such as NUL, format
characters such as the zero-width space; :func:`is_blank`) -- on the grounding *or* the generated
side get the scorer's ``empty_score``, by default the lower end of ``output_range`` (nothing to
check, or nothing to check against: no credit is given), without calling the model. Everything else
(emoji, right-to-left scripts, HTML, numbers as text, one-token claims, 50,000-word groundings) is
scored; ``tests/test_robustness.py`` checks that every registered scorer returns a finite score in
its ``output_range`` for such inputs.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import unicodedata
from dataclasses import dataclass, fields
from typing import ClassVar, Sequence

import numpy as np


@dataclass(frozen=True)
class ScorerConfig:
    """Base of every scorer config. Subclasses add fields; all must be JSON-serialisable."""

    RUNTIME: ClassVar[tuple[str, ...]] = ("batch_size", "device", "progress")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def signature_fields(self) -> dict:
        return {k: v for k, v in self.to_dict().items() if k not in self.RUNTIME}

    def to_json(self) -> dict:
        """:meth:`to_dict` as JSON holds it (tuples as lists), what a sidecar or a shipped file records."""
        return json.loads(json.dumps(self.to_dict(), default=str))

    def replace(self, **overrides) -> "ScorerConfig":
        known = {f.name for f in fields(self)}
        unknown = set(overrides) - known
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {sorted(unknown)}; "
                            f"fields: {sorted(known)}")
        return dataclasses.replace(self, **overrides)


def config_hash(d: dict, n: int = 10) -> str:
    blob = json.dumps(d, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:n]


def validate_inputs(groundings, generations) -> tuple[list[str], list[str]]:
    if isinstance(groundings, str) or isinstance(generations, str):
        raise TypeError("score() takes two sequences of strings, not a single string; wrap it in a list")
    try:
        g, h = list(groundings), list(generations)
    except TypeError as exc:
        raise TypeError(f"score() takes two sequences of strings: {exc}") from None
    if len(g) != len(h):
        raise ValueError(f"groundings and generations differ in length: {len(g)} != {len(h)}")
    for side, seq in (("groundings", g), ("generations", h)):
        for i, x in enumerate(seq):
            if x is None:
                raise TypeError(f"{side}[{i}] is None; every item must be a string")
            if not isinstance(x, str):
                raise TypeError(f"{side}[{i}] is {type(x).__name__}, not str")
            exc = unicode_error(x)
            if exc is not None:
                raise ValueError(f"{side}[{i}] is not valid Unicode ({exc.reason} at position {exc.start}: "
                                 f"{x[exc.start]!r}); decode your text properly (no lone surrogates)")
    return g, h


def unicode_error(text: str) -> UnicodeEncodeError | None:
    """The error UTF-8 encoding raises on ``text`` (a lone surrogate), or None when it encodes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc
    return None


_INVISIBLE = ("Cc", "Cf")   # control characters (NUL, ESC, ...) and format characters (zero-width space, ...)


def is_blank(text: str) -> bool:
    """True for text with nothing to score: empty, white space, or only control/format characters."""
    if not text.strip():
        return True
    return all(ch.isspace() or unicodedata.category(ch) in _INVISIBLE for ch in text)  # stops at the first visible char


class Scorer:
    """Base class. Subclasses set ``name``, ``config_cls`` and implement ``_score`` (and ``_load``)."""

    name: ClassVar[str] = "scorer"
    config_cls: ClassVar[type] = ScorerConfig
    output_range: tuple[float, float] = (0.0, 1.0)
    needs_text: ClassVar[bool] = True  # False for imported scores (by id only)

    def __init__(self, config: ScorerConfig | None = None, **overrides):
        cfg = config if config is not None else self.config_cls()
        if overrides:
            cfg = cfg.replace(**overrides)
        self.config = cfg
        self._loaded = False

    # -- identity -------------------------------------------------------------------------------
    def tag(self) -> str:
        """Readable middle part of the signature (overridden by model-based scorers)."""
        return ""

    def signature_fields(self) -> dict:
        d = self.config.signature_fields()
        d["_scorer"] = self.name
        return d

    @property
    def signature(self) -> str:
        parts = [self.name] + ([self.tag()] if self.tag() else []) + [config_hash(self.signature_fields())]
        return ".".join(parts)

    @property
    def empty_score(self) -> float:
        return float(self.output_range[0])

    @property
    def calibrated(self) -> bool:
        """True when the scores pass through a shipped calibration map (then they lie in [0, 1])."""
        return bool(getattr(self.config, "calibration", None))

    def describe(self) -> dict:
        return {"name": self.name, "signature": self.signature, "output_range": list(self.output_range),
                "empty_score": self.empty_score, "config": self.config.to_dict()}

    def __repr__(self):
        return f"<{type(self).__name__} {self.signature}>"

    # -- lifecycle ------------------------------------------------------------------------------
    def load(self) -> "Scorer":
        if not self._loaded:
            self._load()
            self._loaded = True
        return self

    def _load(self) -> None:
        pass

    def score(self, groundings: Sequence[str], generations: Sequence[str], batch_size: int | None = None,
              progress: bool = True) -> np.ndarray:
        g, h = validate_inputs(groundings, generations)
        out = np.full(len(g), np.nan, dtype=np.float64)
        mask = np.array([not (is_blank(a) or is_blank(b)) for a, b in zip(g, h)], dtype=bool)
        keep = np.flatnonzero(mask).tolist()
        out[~mask] = self.empty_score
        self._aux = {}
        if keep:
            self.load()
            # `is None`, not `or`: batch_size=0 is an error, not a request for the default
            bs = batch_size if batch_size is not None else (getattr(self.config, "batch_size", None) or 32)
            if isinstance(bs, bool) or not isinstance(bs, (int, np.integer)):
                raise TypeError(f"batch_size must be an int, got {type(bs).__name__} {bs!r}")
            if bs < 1:
                raise ValueError(f"batch_size must be >= 1, got {bs}")
            bs = int(bs)
            vals = np.asarray(self._score([g[i] for i in keep], [h[i] for i in keep], bs, progress),
                              dtype=np.float64)
            if vals.shape != (len(keep),):
                raise RuntimeError(f"{self.name}: scorer returned shape {vals.shape}, expected ({len(keep)},)")
            cal = self._calibration_map()
            if cal is not None:
                from tfc.scorers import calibration

                self._aux_keep = {**getattr(self, "_aux_keep", {}), "aux_raw_score": vals}
                vals = calibration.apply(cal, vals)
            out[keep] = vals
            aux = {}
            for k, v in getattr(self, "_aux_keep", {}).items():
                full = np.zeros(len(g), dtype=np.asarray(v).dtype)
                full[keep] = v
                aux[k] = full
            self._aux, self._aux_keep = aux, {}
        return out

    def _score(self, groundings: list[str], generations: list[str], batch_size: int,
               progress: bool) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _calibration_map(self) -> dict | None:
        """The shipped calibration map named by the config's ``calibration`` field (None: raw scores), checked
        against this scorer's raw configuration (:mod:`tfc.scorers.calibration`)."""
        name = getattr(self.config, "calibration", None)
        if not name:
            return None
        cal = getattr(self, "_cal", None)
        if cal is None:
            from tfc.scorers import calibration

            cal = calibration.load(name)
            raw = type(self)(self.config.replace(calibration=None)).signature
            if cal.get("raw_signature") != raw:
                raise ValueError(f"calibration map {name} was fitted for {cal.get('raw_signature')}, not for this "
                                 f"scorer's raw configuration {raw}")
            self._cal = cal
        return cal

    # optional auxiliary columns (``aux_*``) for the cache, filled by the last ``score`` call
    # (subclasses put arrays aligned with their ``_score`` inputs into ``self._aux_keep``)
    def last_aux(self) -> dict[str, np.ndarray]:
        return dict(getattr(self, "_aux", {}))


# a batch holds at most batch_size pairs and at most batch_size * BATCH_TOKEN_UNIT tokens once padded
BATCH_TOKEN_UNIT = 128


def length_batches(lengths, batch_size: int, unit: int | None = None) -> list[np.ndarray]:
    """Index batches over model inputs of token ``lengths`` for the pair engines (NLI, AlignScore): longest
    first, each batch at most ``batch_size`` inputs and at most ``batch_size * unit`` tokens once padded to
    its longest input (``unit`` defaults to :data:`BATCH_TOKEN_UNIT`).

    Fixed-count batches put short inputs beside long ones wherever a call mixes lengths (a user's file, a
    sample over several sets): each short input is then padded to the longest, and attention grows with the
    square of that length. Sorting alone does not help the batch at the boundary between long and short
    inputs, nor a call with fewer inputs than a batch. Scores do not depend on the batching (the attention
    mask is always passed; tested to 1e-5 at fp32)."""
    if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    budget = int(batch_size) * int(unit or BATCH_TOKEN_UNIT)
    out, i = [], 0
    while i < len(order):
        k = max(1, min(int(batch_size), budget // max(int(lengths[order[i]]), 1)))
        out.append(order[i:i + k])
        i += k
    return out


def pad_batch(tok, enc, rows, keys=None, device=None) -> dict:
    """The rows ``rows`` of a tokenizer output ``enc`` (lists of token lists, unpadded) as padded int64
    tensors on the CPU: the same tensors as ``tok.pad({k: [enc[k][i] for i in rows]}, return_tensors="pt")``
    (the tokenizer's ``padding_side``, ``pad_token_id`` and ``pad_token_type_id``; tested against it).

    Written by hand on purpose: ``tokenizer.pad`` converts the nested Python lists through a generic,
    per-element path that took 1.4 s of the 2.1 s of tokenising and batching 2,000 AlignScore pairs (580k
    tokens) on this CPU, more than an H100 needs for their forward passes. Here each key is one flat
    ``np.fromiter`` and one masked assignment.

    ``device``: where the tensors go (default: stay on the CPU). On a CUDA device they are copied from
    pinned memory without blocking, so the host pads and launches the next batch while the GPU still runs
    this one; read the results back once at the end (one synchronisation per call, not per batch)."""
    import itertools

    import torch

    keys = list(enc.keys()) if keys is None else list(keys)
    rows = [int(i) for i in rows]
    if "input_ids" not in keys:
        raise ValueError(f"pad_batch needs input_ids among the keys; got {keys}")
    if tok.pad_token_id is None:
        raise ValueError("the tokenizer has no pad token; batches of unequal lengths cannot be padded")
    fills = {"input_ids": tok.pad_token_id, "attention_mask": 0,
             "token_type_ids": getattr(tok, "pad_token_type_id", 0), "special_tokens_mask": 1}
    unknown = [k for k in keys if k not in fills]
    if unknown:
        raise ValueError(f"pad_batch cannot pad {unknown}; it pads {sorted(fills)}")
    lengths = np.array([len(enc["input_ids"][i]) for i in rows], dtype=np.int64)
    width = int(lengths.max()) if len(rows) else 0
    cols = np.arange(width)
    if getattr(tok, "padding_side", "right") == "left":
        mask = cols[None, :] >= (width - lengths)[:, None]
    else:
        mask = cols[None, :] < lengths[:, None]
    out = {}
    for k in keys:
        seqs = [enc[k][i] for i in rows]
        if [len(x) for x in seqs] != lengths.tolist():
            raise ValueError(f"pad_batch: {k} and input_ids differ in length on some row")
        arr = np.full((len(rows), width), fills[k], dtype=np.int64)
        arr[mask] = np.fromiter(itertools.chain.from_iterable(seqs), dtype=np.int64, count=int(lengths.sum()))
        out[k] = torch.from_numpy(arr)
    if device is not None and str(device).startswith("cuda"):
        return {k: v.pin_memory().to(device, non_blocking=True) for k, v in out.items()}
    if device is not None:
        return {k: v.to(device) for k, v in out.items()}
    return out


def progress_bar(iterable, total=None, desc=None, enabled=True):
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, disable=not enabled, leave=False)


class ModelScorer(Scorer):
    """A scorer built on a checkpoint: its signature also names the checkpoint's identity (hub id@revision
    or a content hash of a local folder) and the sentence splitter actually in use."""

    def signature_fields(self) -> dict:
        from tfc import models
        from tfc.text.sentences import resolve_splitter

        d = super().signature_fields()
        d["checkpoint"] = models.identity(self.config.checkpoint, self.config.revision)
        d["sentence_splitter"] = resolve_splitter(self.config.sentence_splitter)
        return d
