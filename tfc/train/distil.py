"""Distilling a large teacher into the shipped MiniLM: the unlabelled pool, the teacher's labels, the student's frame.

The teacher (an MPNet-base sentence model, trained by the one engine on a labelled mix) reads pairs the mix does not
label; the student (MiniLM-L6) learns the teacher's whole 3-way distribution on them (``task="dist"`` rows of
:mod:`tfc.train.pair_objective`, softened at ``TrainConfig.temperature``) beside the human labels. Each step is one
function, so a GPU job (:mod:`tfc.runs.distil`) and the command line (``tfc train distil-pool`` / ``distil-label``)
run the same code:

1. :func:`build_pool` -- training-side (grounding, generated) pairs, every one through the leakage filter against
   every evaluation set: the labelled mix's own pairs, WeCheck's real dialogue outputs with their groundings (never
   WeCheck's PAWS split, which is TRUE's PAWS evaluation set), and pairs cut from training-side documents (a
   sentence against its document, and against the document without it: long premises, as a summary's grounding);
2. :func:`label_pool` -- the teacher's 3-way distribution on every pool pair, written in shards that a stopped run
   does not recompute;
3. :func:`student_frame` -- the labelled pool as ``dist`` rows, with the human-labelled rows of the mix.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from tfc.train.frames import DIST_COLS, frame_sha256

POOL_PARTS = ("mix", "wecheck_outputs", "document_sentences")
DOCUMENT_SOURCES = ("anli_dev", "anli_test", "wecheck_dialogue")   # training-side documents to cut pairs from
MIN_DOC_SENTENCES = 3
MAX_DOC_WORDS = 300       # a document longer than this is not cut (the student reads 128 tokens at a time)
SHARD_ROWS = 8192
HUMAN_TASKS = ("3way", "bin", "reg")


def document_pairs(docs, seed: int = 0, splitter: str = "rule", per_doc: int = 3) -> pd.DataFrame:
    """Unlabelled pairs cut from documents of at least :data:`MIN_DOC_SENTENCES` sentences and at most
    :data:`MAX_DOC_WORDS` words: up to ``per_doc`` distinct sentences of each (seeded), each against the whole
    document and against the document without it. Columns ``text_a, text_b, source``."""
    from tfc.text.sentences import split_many

    rng = np.random.default_rng(seed)
    docs = [d for d in dict.fromkeys(docs) if isinstance(d, str) and len(d.split()) <= MAX_DOC_WORDS]
    rows = []
    for doc, sents in zip(docs, split_many(docs, splitter)):
        if len(sents) < MIN_DOC_SENTENCES:
            continue
        for i in sorted(rng.choice(len(sents), size=min(per_doc, len(sents)), replace=False).tolist()):
            rows.append((doc, sents[i], "pool/doc_sentence"))
            rows.append((" ".join(sents[:i] + sents[i + 1:]), sents[i], "pool/doc_without_sentence"))
    return pd.DataFrame(rows, columns=["text_a", "text_b", "source"])


def extra_pairs(seed: int = 0, wecheck_cap: int | None = None, doc_cap: int | None = 20000,
                eval_sets: list[str] | None = None, sample: int | None = None) -> tuple[pd.DataFrame, dict]:
    """The pool's pairs from outside the mix (``text_a, text_b, source``) and their report: WeCheck's dialogue
    outputs with their groundings, and :func:`document_pairs` cut from :data:`DOCUMENT_SOURCES`, each through
    :func:`tfc.data.training_mix` (the cut pairs a second time, as generated text). ``wecheck_cap`` / ``doc_cap``:
    rows kept of each (seeded); ``sample``: rows per training source read (smoke runs)."""
    from tfc.data import training_mix
    from tfc.train.mix import cap_rows, filter_generated, refuse_forbidden

    refuse_forbidden(DOCUMENT_SOURCES)
    wecheck, rep = training_mix(["wecheck_dialogue"], eval_sets=eval_sets, sample=sample, seed=seed)
    leak = rep.to_dict("records")
    outs = pd.DataFrame({"text_a": wecheck["grounding"].values, "text_b": wecheck["generated"].values,
                         "source": "pool/wecheck_outputs"})
    docs = []
    for name in DOCUMENT_SOURCES:
        kept = wecheck if name == "wecheck_dialogue" else training_mix([name], eval_sets=eval_sets, sample=sample,
                                                                       seed=seed)[0]
        docs += kept["grounding"].tolist()
    cut, rep = filter_generated(document_pairs(docs, seed=seed), eval_sets)
    leak += rep.to_dict("records")
    parts = {"wecheck_outputs": cap_rows(outs, wecheck_cap, seed), "document_sentences": cap_rows(cut, doc_cap, seed)}
    report = {"parts": {k: int(len(v)) for k, v in parts.items()}, "leakage": leak, "seed": seed,
              "caps": {"wecheck_outputs": wecheck_cap, "document_sentences": doc_cap}, "sample_per_source": sample}
    return pd.concat(parts.values(), ignore_index=True).loc[:, ["text_a", "text_b", "source"]], report


def assemble_pool(mix: pd.DataFrame, extra: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The pool: the mix's own pairs (``pool/mix``; they passed the leakage filter when the mix was built) and
    ``extra`` (:func:`extra_pairs`), blank pairs dropped and repeats removed (the first kept). A GPU job rebuilds
    it from the mix and ``extra``, so the mix's text travels once."""
    from tfc.train.mix import dedupe_pairs, drop_empty

    frame = pd.concat([mix.loc[:, ["text_a", "text_b"]].assign(source="pool/mix"), extra.loc[:, ["text_a", "text_b", "source"]]],
                      ignore_index=True).assign(task="pool", label=0.0)
    frame, empty = drop_empty(frame)
    frame, dup = dedupe_pairs(frame)
    return frame.loc[:, ["text_a", "text_b", "source"]], {"duplicates_removed": dup, "dropped_empty_text": empty}


def build_pool(mix: pd.DataFrame, seed: int = 0, wecheck_cap: int | None = None, doc_cap: int | None = 20000,
               eval_sets: list[str] | None = None, sample: int | None = None) -> tuple[pd.DataFrame, dict]:
    """The unlabelled pool (``text_a, text_b, source``: :data:`POOL_PARTS`) and its report; see
    :func:`extra_pairs` and :func:`assemble_pool`."""
    extra, report = extra_pairs(seed, wecheck_cap, doc_cap, eval_sets, sample)
    frame, kept = assemble_pool(mix, extra)
    report = {"kind": "distillation pool", **report, "parts": {"mix": int(len(mix)), **report["parts"]}, **kept,
              "mix_sha256": frame_sha256(mix), "rows": int(len(frame)),
              "rows_by_source": frame["source"].value_counts().sort_index().to_dict(), "sha256": pool_sha256(frame)}
    return frame, report


def pool_sha256(pool: pd.DataFrame) -> str:
    """sha256 of a pool's pairs in row order."""
    h = hashlib.sha256()
    for a, b in zip(pool["text_a"], pool["text_b"]):
        h.update(json.dumps([a, b], ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()


# --------------------------------------------------------------------------------------------------
# the teacher's labels

def label_pool(pool: pd.DataFrame, teacher: str, out_dir, batch_size: int = 128, device: str = "cpu",
               dtype: str = "fp32", max_length: int = 128, shard_rows: int = SHARD_ROWS,
               progress: bool = False) -> pd.DataFrame:
    """The pool with the teacher's 3-way distribution in :data:`~tfc.train.frames.DIST_COLS`.

    ``teacher``: a 3-way NLI checkpoint (``tfc/<name>``, a folder or a hub id) whose ``id2label`` names
    entailment, neutral and contradiction. Shards of ``shard_rows`` rows are written atomically to ``out_dir``
    under a key of (pool, teacher identity, max_length); a shard that exists with the same key is read, not
    recomputed, so a stopped run resumes. Within a shard, pairs are batched by length."""
    import torch

    from tfc import models

    if len(pool) == 0:
        raise ValueError("the pool is empty")
    if dtype not in ("fp32", "bf16"):
        raise ValueError(f"dtype must be 'fp32' or 'bf16'; got {dtype!r}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(json.dumps([pool_sha256(pool), models.identity(teacher), max_length]).encode()).hexdigest()[:16]
    loaded = None                           # the teacher is loaded only when a shard is missing
    shards = []
    starts = range(0, len(pool), shard_rows)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc="teacher labels", unit="shard")
    for k, start in enumerate(starts):
        path = out_dir / f"shard-{key}-{k:05d}.parquet"
        if path.is_file():
            shards.append(pd.read_parquet(path))
            continue
        model, tok, order = loaded = loaded or _load_teacher(teacher, device)
        with torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=dtype == "bf16"):
            probs = _teacher_probs(model, tok, pool.iloc[start:start + shard_rows], batch_size, max_length, device)
        shard = pd.DataFrame(probs[:, order], columns=list(DIST_COLS))
        tmp = path.with_suffix(".tmp")
        shard.to_parquet(tmp, index=False)
        tmp.replace(path)
        shards.append(shard)
    dist = pd.concat(shards, ignore_index=True)
    return pd.concat([pool.reset_index(drop=True), dist], axis=1)


def _load_teacher(teacher: str, device: str):
    """The teacher's classifier (fp32 whatever the checkpoint stores: a GPU run saves fp16; bf16 is the caller's
    autocast), its tokenizer, and the column order that puts its labels in DIST_COLS' order (read from its
    ``id2label`` by :func:`tfc.models.label_names`)."""
    from tfc import models

    model, tok = models.load_sequence_classifier(teacher, device=device)
    want = [c[2:] for c in DIST_COLS]
    names = models.label_names(model.config.id2label) if model.config.num_labels == len(want) else ()
    order = [models.label_index(names, w) for w in want]
    if None in order:
        raise ValueError(f"teacher {teacher!r} has labels {sorted(model.config.id2label.values())}; a 3-way NLI "
                         f"teacher needs {want}")
    return model, tok, order


def _teacher_probs(model, tok, part: pd.DataFrame, batch_size: int, max_length: int, device: str) -> np.ndarray:
    import torch

    a, b = part["text_a"].tolist(), part["text_b"].tolist()
    order = np.argsort([len(x) + len(y) for x, y in zip(a, b)], kind="stable")
    out = np.zeros((len(a), model.config.num_labels), dtype=np.float64)
    with torch.no_grad():
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            enc = tok([a[j] for j in idx], [b[j] for j in idx], truncation="longest_first", max_length=max_length,
                      padding=True, return_tensors="pt").to(device)
            out[idx] = torch.softmax(model(**enc).logits.float(), dim=-1).cpu().numpy()
    return out


# --------------------------------------------------------------------------------------------------
# the student's frame

def student_frame(labelled: pd.DataFrame, mix: pd.DataFrame | None = None, human_tasks=HUMAN_TASKS) -> pd.DataFrame:
    """The training frame of the student: every labelled pool pair as a ``dist`` row (its label column holds the
    teacher's P(entailment), for reports), and the rows of ``mix`` whose task is one of ``human_tasks`` (their
    distribution columns 0, never read)."""
    missing = [c for c in ("text_a", "text_b", "source", *DIST_COLS) if c not in labelled.columns]
    if missing:
        raise ValueError(f"the labelled pool lacks columns {missing} (label it with label_pool)")
    dist = labelled.loc[:, ["text_a", "text_b", "source", *DIST_COLS]].assign(task="dist", label=labelled[DIST_COLS[0]])
    parts = [dist]
    if mix is not None:
        human = mix[mix["task"].isin(human_tasks)].loc[:, ["text_a", "text_b", "task", "label", "source"]]
        parts.append(human.assign(**{c: 0.0 for c in DIST_COLS}))
    return pd.concat(parts, ignore_index=True).loc[:, ["text_a", "text_b", "task", "label", "source", *DIST_COLS]]
