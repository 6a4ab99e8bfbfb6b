"""Datasets in the common schema (``id, dataset, split, grounding, generated, label, meta``).

Minimal first cut: the nine TRUE sets with text, read from the TRUE-format CSVs of the mirror.
(The data-layer issue replaces this with the full registry, builders, cards and checks.)
"""
from __future__ import annotations

import pandas as pd

from tfc import config

SCHEMA = ["id", "dataset", "split", "grounding", "generated", "label", "meta"]
TRUE_TEXT = ["frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2", "dialfact", "paws"]
_FILES = {n: f"true/{n}.csv" for n in TRUE_TEXT} | {"mnbm": "true/mnbm_reconstructed.csv"}


def names() -> list[str]:
    return list(TRUE_TEXT)


def load(name: str, split: str | None = None, sample: int | None = None, seed: int = 0) -> pd.DataFrame:
    if name not in _FILES:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(names())}")
    path = config.data_dir() / _FILES[name]
    if not path.is_file():
        raise FileNotFoundError(f"{name}: raw file missing from the data mirror: {path}")
    raw = pd.read_csv(path)
    df = pd.DataFrame({
        "id": [f"{name}/dev/{i:06d}" for i in range(len(raw))],
        "dataset": name, "split": "dev",
        "grounding": raw["grounding"].astype(str), "generated": raw["generated_text"].astype(str),
        "label": raw["label"].astype(int), "meta": [{} for _ in range(len(raw))],
    })
    if sample is not None and sample < len(df):
        df = df.sample(n=sample, random_state=seed).sort_index()
    return df.reset_index(drop=True)
