"""Pre-tokenised training rows and their batches: the token cache, dynamic padding and seeded length-grouped epochs."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tfc.train.frames import frame_sha256


# ---- pre-tokenised data ---------------------------------------------------------------------------

@dataclass
class Tokenized:
    """One frame tokenised once: flat id arrays with row offsets (no padding)."""

    input_ids: np.ndarray          # int32, all rows concatenated
    token_type_ids: np.ndarray | None
    offsets: np.ndarray            # int64, len(rows) + 1
    truncated: int                 # rows that hit max_length (truncated longest-first, recorded)
    key: str

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


def tokenizer_fingerprint(tokenizer) -> str:
    """sha256 (16) of a tokenizer's vocabulary, class and lower-casing: the cache key's tokenizer part."""
    vocab = sorted(tokenizer.get_vocab().items())
    blob = json.dumps([type(tokenizer).__name__, getattr(tokenizer, "do_lower_case", None), vocab])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def pretokenize(tokenizer, df: pd.DataFrame, max_length: int, cache_dir=None, chunk: int = 4096) -> Tokenized:
    """Tokenise every (text_a, text_b) pair once, truncating longest-first at ``max_length``.

    Cached as ``<cache_dir>/tok-<tokenizer>-<frame sha>-<max_length>.npz`` (written to a temporary
    name and renamed, so a killed run never leaves a partial file). ``cache_dir=None``: no cache.
    """
    key = f"tok-{tokenizer_fingerprint(tokenizer)}-{frame_sha256(df)[:16]}-{int(max_length)}"
    path = Path(cache_dir) / f"{key}.npz" if cache_dir else None
    if path is not None and path.is_file():
        z = np.load(path)
        tt = z["token_type_ids"] if z["token_type_ids"].size else None
        return Tokenized(z["input_ids"], tt, z["offsets"], int(z["truncated"]), key)
    ids, tts, lens, truncated = [], [], [], 0
    a, b = df["text_a"].tolist(), df["text_b"].tolist()
    for i in range(0, len(a), chunk):
        full = tokenizer(a[i:i + chunk], b[i:i + chunk], truncation="longest_first", max_length=max_length)
        for j, row in enumerate(full["input_ids"]):
            ids.append(np.asarray(row, dtype=np.int32))
            lens.append(len(row))
            if "token_type_ids" in full:
                tts.append(np.asarray(full["token_type_ids"][j], dtype=np.int8))
        truncated += sum(1 for n in lens[-len(full["input_ids"]):] if n >= max_length)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    flat = np.concatenate(ids) if ids else np.zeros(0, np.int32)
    flat_tt = np.concatenate(tts) if tts else None
    tok = Tokenized(flat, flat_tt, offsets, truncated, key)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, input_ids=flat, token_type_ids=flat_tt if flat_tt is not None else np.zeros(0, np.int8),
                 offsets=offsets, truncated=np.int64(truncated))
        tmp.replace(path)
    return tok


def collate(tok: Tokenized, idx, pad_id: int, device="cpu") -> dict:
    """Dynamic padding: one batch padded to its own longest row."""
    import torch

    idx = np.asarray(idx)
    lens = tok.lengths[idx]
    width = int(lens.max())
    ids = np.full((len(idx), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(idx), width), dtype=np.int64)
    tt = np.zeros((len(idx), width), dtype=np.int64) if tok.token_type_ids is not None else None
    for r, i in enumerate(idx):
        s, e = tok.offsets[i], tok.offsets[i + 1]
        ids[r, :e - s] = tok.input_ids[s:e]
        mask[r, :e - s] = 1
        if tt is not None:
            tt[r, :e - s] = tok.token_type_ids[s:e]
    out = {"input_ids": torch.from_numpy(ids).to(device), "attention_mask": torch.from_numpy(mask).to(device)}
    if tt is not None:
        out["token_type_ids"] = torch.from_numpy(tt).to(device)
    return out


def epoch_batches(lengths: np.ndarray, batch_size: int, length_pool: int, seed: int, epoch: int) -> list[np.ndarray]:
    """The batches of one epoch: a seeded permutation cut into pools of ``length_pool`` batches, each pool
    sorted by token length (so a batch pads little) and cut into batches, the batch order shuffled.
    A pure function of (lengths, sizes, seed, epoch): every row appears exactly once per epoch."""
    rng = np.random.default_rng([int(seed), int(epoch)])
    perm = rng.permutation(len(lengths))
    pool = batch_size * max(1, int(length_pool))
    cut = []
    for p in range(0, len(perm), pool):
        chunk = perm[p:p + pool]
        if length_pool > 1:
            chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        cut += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [cut[j] for j in rng.permutation(len(cut))]
