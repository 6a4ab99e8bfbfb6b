"""A checkpoint's identity: the sha256 of the files that make the model (not the records beside them).

Score signatures name a checkpoint by this hash, so a retrained model never reads another's cached scores.
"""
from __future__ import annotations

import hashlib
import os
import re
from functools import lru_cache
from pathlib import Path

_HASHED = re.compile(r".*\.(json|txt|model|safetensors|bin|pt|merges)$")
# records written beside the weights (training summary, evaluation results): not part of the model's identity
_RECORDS = {"training_summary.json", "eval_results.json", "identity.json", "release.json"}


@lru_cache(maxsize=64)
def _dir_hash(path: str, stamp: tuple) -> str:
    h = hashlib.sha256()
    for f in sorted(Path(path).rglob("*")):
        if f.is_file() and _HASHED.match(f.name) and "README" not in f.name and f.name not in _RECORDS:
            h.update(str(f.relative_to(path)).encode())
            with open(f, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 22), b""):
                    h.update(block)
    return h.hexdigest()


def content_hash(path: str | os.PathLike) -> str:
    """sha256 over the checkpoint directory's model/config/tokenizer files (memoised by mtime+size)."""
    path = str(Path(path).resolve())
    stamp = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns)
                  for f in sorted(Path(path).rglob("*")) if f.is_file())
    return _dir_hash(path, stamp)
