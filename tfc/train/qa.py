"""The in-house extractive QA model ``tfc/qa-minilm``: a self-supervised QA set from training-side text
and a small training loop (``tfc train qa``).

**Data** (:func:`build_qa_set`). The mirror holds no SQuAD, so questions are made with the offline
rule-based QG of :mod:`tfc.scorers.qgqa` from training-side pairs (text *a* = evidence / grounding /
knowledge, text *b* = claim / paraphrase / response) of ``vitaminc_test``, ``sick2014``, ``msrp`` and
``wecheck_dialogue``, all through :func:`tfc.data.training_mix` (the leakage filter against every
evaluation text). Per pair, for up to ``per_pair`` answer candidates of *b* (spaCy entities and noun
chunks), with question *q* generated from *b*:

* ``self`` -- (q, b) answered by the candidate's span in *b* (what Q²/QAGS's validation step asks);
* ``cross`` -- (q, a) answered by the candidate's first (case-insensitive) occurrence in *a*;
* ``contrast`` -- VitaminC: the same claim has a supporting and a refuting evidence that differ in a
  few words; when the candidate occurs in the supporting one, the words that replace it in the
  refuting one (a token diff, :mod:`difflib`) are the answer on the refuting evidence;
* ``nei`` -- VitaminC "not enough info" evidence not containing the candidate: no answer;
* ``other`` -- (q, a') with a' a grounding of another pair of the same source that does not contain
  the candidate: no answer;
* ``ground`` -- one question generated from *a* itself, answered in *a* (more varied contexts).

No-answer rows are down-sampled to at most ``max_no_answer_frac`` of the set. The held-out slice is
made of whole pairs (their contexts never appear in training), ``heldout_pairs`` of them.

**Model**: the offline MiniLM-L6 encoder with a fresh ``AutoModelForQuestionAnswering`` span head;
the no-answer target is position 0 (``[CLS]``) for both start and end, the SQuAD 2.0 convention that
:class:`tfc.scorers.qgqa.ExtractiveQA` decodes. Seeded, length-grouped batches, AdamW with linear
warm-up/decay, gradient clipping, optional time limit. Evaluation on the held-out slice: exact match and
F1 on answerable questions, accuracy on no-answer questions (:func:`evaluate_qa`).
"""
from __future__ import annotations

import difflib
import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config

SOURCES = ("vitaminc_test", "sick2014", "msrp", "wecheck_dialogue")
KINDS = ("self", "cross", "contrast", "nei", "other", "ground", "long")
ANSWERABLE = {"self", "cross", "contrast", "ground", "long", "xquad"}
XQUAD_FILE = "xquad_en/xquad.en.json"
COLUMNS = ("question", "context", "answer_text", "answer_start", "kind", "source", "pair")


def _find_ci(text: str, needle: str) -> int:
    return text.lower().find(needle.lower()) if needle.strip() else -1


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def contrast_span(support: str, refute: str, start: int, end: int) -> tuple[int, int] | None:
    """Char span in ``refute`` that corresponds to ``support[start:end]`` when a token diff (difflib) shows
    that at least one of the answer's tokens was replaced: unchanged tokens map one to one, a replaced
    region maps to its whole replacement. None when nothing in the answer changed, a token was deleted,
    or the mapped span is more than 3 tokens wider than the answer (not a clean swap)."""
    ts, tr = _tokens(support), _tokens(refute)
    sm = difflib.SequenceMatcher(a=[t[0] for t in ts], b=[t[0] for t in tr], autojunk=False)
    a_tok = [i for i, t in enumerate(ts) if t[1] < end and t[2] > start]
    if not a_tok:
        return None
    where: dict[int, tuple[int, int, bool]] = {}
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        for i in range(i1, i2):
            if op == "equal":
                where[i] = (j1 + i - i1, j1 + i - i1, False)
            elif op == "replace":
                where[i] = (j1, j2 - 1, True)
    if any(i not in where for i in a_tok) or not any(where[i][2] for i in a_tok):
        return None
    j_lo, j_hi = min(where[i][0] for i in a_tok), max(where[i][1] for i in a_tok)
    if j_hi - j_lo + 1 > len(a_tok) + 3:
        return None
    return tr[j_lo][1], tr[j_hi][2]


def _vitaminc_sample(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` VitaminC rows, half of them (when there are enough) from contrastive groups: a claim with one
    supporting and one refuting evidence (for the ``contrast`` questions), the rest drawn at random."""
    if len(df) <= n:
        return df
    rng = np.random.default_rng(seed)
    lab = df["label3"].astype(str).str.lower()
    ent = df[lab == "entailment"].drop_duplicates("generated")
    con = df[lab == "contradiction"].drop_duplicates("generated")
    both = np.array(sorted(set(ent["generated"]) & set(con["generated"])), dtype=object)
    take = rng.choice(both, size=min(len(both), n // 4), replace=False) if len(both) else []
    take = set(take)
    pick = pd.concat([ent[ent["generated"].isin(take)], con[con["generated"].isin(take)]])
    rest = df.drop(index=pick.index)
    pick = pd.concat([pick, rest.sample(n=min(n - len(pick), len(rest)), random_state=seed)])
    return pick.sort_index()


def _load_pairs(sources, sample, seed, training_mix=None):
    if training_mix is None:
        from tfc.data import training_mix
    frames, leak = [], []
    for src in sources:
        if src == "vitaminc_test" and sample is not None:
            kept, rep = training_mix([src])
            kept = _vitaminc_sample(kept, sample, seed)
        else:
            kept, rep = training_mix([src], sample=sample, seed=seed)
        leak += rep.to_dict("records")
        frames.append(kept)
    df = pd.concat(frames, ignore_index=True)
    ok = df["grounding"].map(lambda t: isinstance(t, str) and bool(t.strip())) & \
        df["generated"].map(lambda t: isinstance(t, str) and bool(t.strip()))
    return df.loc[ok].reset_index(drop=True), leak, int((~ok).sum())


def _pair_index(src: list[str], label3: list[str], b_txt: list[str]):
    """Row indices per source, and for VitaminC's contrast the supporting and the refuting evidence rows
    of each claim (``{claim: first supporting row}``, ``{claim: [refuting rows]}``)."""
    by_src: dict[str, list[int]] = {}
    for i, s in enumerate(src):
        by_src.setdefault(s, []).append(i)
    support_of: dict[str, int] = {}
    refute_of: dict[str, list[int]] = {}
    for i in range(len(src)):
        if src[i] == "vitaminc_test":
            if label3[i] == "entailment":
                support_of.setdefault(b_txt[i], i)
            elif label3[i] == "contradiction":
                refute_of.setdefault(b_txt[i], []).append(i)
    return by_src, support_of, refute_of


def _cap_and_hold_out(rows: list[tuple], rng, max_no_answer_frac: float, heldout_pairs: int, seed: int):
    """The generated rows as a frame (duplicates dropped), with no-answer rows capped at
    ``max_no_answer_frac`` and a held-out slice of whole pairs (and every row whose context belongs to
    them): ``(all rows, train, heldout, rows per kind before the cap)``; draws from ``rng`` in order."""
    df = pd.DataFrame(rows, columns=list(COLUMNS)).drop_duplicates(["question", "context"]).reset_index(drop=True)
    n_before = df["kind"].value_counts().to_dict()
    noans = df["answer_start"] < 0
    cap = int(max_no_answer_frac / (1 - max_no_answer_frac) * int((~noans).sum()))
    if noans.sum() > cap:
        drop = rng.choice(np.flatnonzero(noans.to_numpy()), size=int(noans.sum()) - cap, replace=False)
        df = df.drop(index=df.index[drop]).reset_index(drop=True)
    uniq_pairs = np.array(sorted(set(df["pair"])))
    held = set(rng.choice(uniq_pairs, size=min(heldout_pairs, len(uniq_pairs) // 5), replace=False).tolist())
    held_ctx = set(df.loc[df["pair"].isin(held), "context"])
    is_held = df["pair"].isin(held)
    train = df.loc[~is_held & ~df["context"].isin(held_ctx)].sample(frac=1.0, random_state=seed).reset_index(drop=True)
    heldout = df.loc[is_held].reset_index(drop=True)
    return df, train, heldout, n_before


def long_contexts(train: pd.DataFrame, rng, frac: float, extra=(4, 14)) -> pd.DataFrame:
    """``long`` rows: for a share ``frac`` of the answerable ``cross`` and ``ground`` rows, the same question on a
    longer context -- the row's context placed at a random position among ``extra`` (low, high) other training
    contexts of the same source that do not contain the answer (case-insensitive), joined by spaces. The short
    self-supervised contexts alone never teach a reader to find an answer in a long document, which is what
    QAGS and Q² ask of it on news articles; with document stride these rows also give the windows that lack
    the answer (no-answer windows). Only training contexts are used, so no held-out text enters training."""
    if not frac:
        return train.iloc[:0]
    pool = {src: g["context"].drop_duplicates().tolist() for src, g in train.groupby("source")}
    cand = train.index[train["kind"].isin(["cross", "ground"]) & (train["answer_start"] >= 0)]
    pick = rng.choice(cand, size=int(round(frac * len(cand))), replace=False) if len(cand) else []
    rows = []
    for i in sorted(pick):
        r = train.loc[i]
        others = pool[r["source"]]
        k = int(rng.integers(extra[0], extra[1] + 1))
        parts = []
        for j in rng.permutation(len(others))[: 4 * k]:
            o = others[int(j)]
            if o != r["context"] and _find_ci(o, r["answer_text"]) < 0:
                parts.append(o)
            if len(parts) == k:
                break
        if not parts:
            continue
        at = int(rng.integers(len(parts) + 1))
        head = " ".join(parts[:at])
        ctx = " ".join(parts[:at] + [r["context"]] + parts[at:])
        start = int(r["answer_start"]) + (len(head) + 1 if at else 0)
        rows.append((r["question"], ctx, r["answer_text"], start, "long", r["source"], r["pair"]))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _add_long(df: pd.DataFrame, train: pd.DataFrame, rng, long_frac: float, seed: int):
    """The set and the training slice with the :func:`long_contexts` rows added (training slice reshuffled)."""
    if not 0 <= long_frac <= 1:
        raise ValueError("long_frac must lie in [0, 1]")
    long = long_contexts(train, rng, long_frac)
    if not len(long):
        return df, train
    train = pd.concat([train, long], ignore_index=True).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return pd.concat([df, long], ignore_index=True), train


def build_qa_set(sources=SOURCES, sample: int | None = 4000, seed: int = 0, per_pair: int = 2,
                 max_no_answer_frac: float = 0.33, heldout_pairs: int = 300, pairs: pd.DataFrame | None = None,
                 progress: bool = False, long_frac: float = 0.0) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(train, heldout, report). ``sample``: rows per source (seeded stratified sample of the data layer);
    ``pairs``: a ready frame in the data layer's schema instead (tests). Columns: ``question, context,
    answer_text, answer_start`` (-1 and "" for no answer), ``kind, source, pair``. ``long_frac``: the share of
    training ``cross``/``ground`` rows also given a long context (:func:`long_contexts`); the held-out slice
    never has them."""
    from tfc.scorers.qgqa import candidates_from_doc, parse, rule_questions

    if not 0 <= max_no_answer_frac < 1:
        raise ValueError("max_no_answer_frac must lie in [0, 1)")
    leak, dropped = [], 0
    if pairs is None:
        pairs, leak, dropped = _load_pairs(sources, sample, seed)
    if len(pairs) == 0:
        raise ValueError("no training pairs (all sources empty after the leakage filter?)")
    rng = np.random.default_rng(seed)
    a_txt = pairs["grounding"].tolist()
    b_txt = pairs["generated"].tolist()
    src = pairs["dataset"].astype(str).tolist()
    label3 = pairs["label3"].astype(str).str.lower().tolist() if "label3" in pairs else [""] * len(pairs)
    t0 = time.time()
    docs_b = parse(b_txt)
    docs_a = parse(a_txt)
    parse_s = time.time() - t0
    by_src, support_of, refute_of = _pair_index(src, label3, b_txt)
    rows = []

    def add(q, ctx, ans, start, kind, i):
        rows.append((q, ctx, ans, start, kind, src[i], i))

    for i in range(len(pairs)):
        cands = candidates_from_doc(docs_b[i])
        if cands:
            pick = rng.choice(len(cands), size=min(per_pair, len(cands)), replace=False)
            for k in pick:
                c = cands[int(k)]
                qs = rule_questions(docs_b[i], c.start, c.end)
                if not qs:
                    continue
                q = qs[0] if len(qs) == 1 or rng.random() < 0.7 else qs[1]
                add(q, b_txt[i], b_txt[i][c.start:c.end], c.start, "self", i)
                j = _find_ci(a_txt[i], c.text)
                if j >= 0:
                    add(q, a_txt[i], a_txt[i][j:j + len(c.text)], j, "cross", i)
                elif label3[i] == "neutral" and src[i] == "vitaminc_test":
                    add(q, a_txt[i], "", -1, "nei", i)
                if src[i] == "vitaminc_test" and b_txt[i] in support_of and b_txt[i] in refute_of:
                    s_i = support_of[b_txt[i]]
                    js = _find_ci(a_txt[s_i], c.text)
                    if js >= 0:
                        r_i = refute_of[b_txt[i]][0]
                        sp = contrast_span(a_txt[s_i], a_txt[r_i], js, js + len(c.text))
                        if sp is not None:
                            add(q, a_txt[r_i], a_txt[r_i][sp[0]:sp[1]], sp[0], "contrast", r_i)
                pool = by_src[src[i]]
                for _ in range(5):
                    o = pool[int(rng.integers(len(pool)))]
                    if a_txt[o] != a_txt[i] and _find_ci(a_txt[o], c.text) < 0:
                        add(q, a_txt[o], "", -1, "other", i)
                        break
        ca = candidates_from_doc(docs_a[i])
        if ca:
            c = ca[int(rng.integers(len(ca)))]
            qs = rule_questions(docs_a[i], c.start, c.end)
            if qs:
                add(qs[0], a_txt[i], a_txt[i][c.start:c.end], c.start, "ground", i)
    df, train, heldout, n_before = _cap_and_hold_out(rows, rng, max_no_answer_frac, heldout_pairs, seed)
    df, train = _add_long(df, train, rng, long_frac, seed)
    report = {"sources": list(sources) if pairs is None or leak else sorted(set(src)), "sample_per_source": sample,
              "seed": seed, "pairs": int(len(pairs)), "long_frac": long_frac, "leakage": leak,
              "dropped_blank_pairs": dropped,
              "rows_by_kind_before_cap": {k: int(v) for k, v in n_before.items()},
              "rows_by_kind": {k: int(v) for k, v in df["kind"].value_counts().sort_index().items()},
              "rows_by_source": {k: int(v) for k, v in df["source"].value_counts().sort_index().items()},
              "no_answer_frac": float((df["answer_start"] < 0).mean()) if len(df) else 0.0,
              "train_rows": int(len(train)), "heldout_rows": int(len(heldout)),
              "spacy_parse_seconds": round(parse_s, 1)}
    return train, heldout, report


# --------------------------------------------------------------------------------------------------
# training

@dataclass
class QATrainConfig:
    name: str = "qa-minilm"
    base: str = "minilm"
    max_length: int = 384
    batch_size: int = 32
    lr: float = 1e-4
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    max_steps: int = 2000
    max_minutes: float | None = None
    seed: int = 2022
    device: str = "cpu"
    num_threads: int | None = None
    grad_clip: float = 1.0
    log_every: int = 20
    length_pool: int = 8
    doc_stride: int | None = None  # window overlap in tokens; None = max_length // 3 (128 at 384), 0 = no windows
    eval_every: int = 0            # steps between dev-curve points (held-out pairs and XQuAD); 0 = end only
    checkpoint_every: int = 0      # steps between resumable state writes (0 = none)
    init: str | None = None        # start from a trained checkpoint's encoder (dir or tfc/<name>) instead of `base`
    dtype: str = "fp32"            # "bf16": autocast (fp32 weights), fast only where the CPU or GPU has native bf16
    freeze: tuple[str, ...] = ()   # parameter-name parts kept at the base's values (tfc.train.core.freeze_parameters)

    @property
    def stride(self) -> int:
        return self.max_length // 3 if self.doc_stride is None else int(self.doc_stride)

    def validate(self):
        for k in ("max_length", "batch_size", "max_steps"):
            if int(getattr(self, k)) < 1:
                raise ValueError(f"{k} must be >= 1; got {getattr(self, k)}")
        if self.max_minutes is not None and self.max_minutes <= 0:
            raise ValueError("max_minutes must be > 0")
        if not 0 <= self.stride < self.max_length:
            raise ValueError(f"doc_stride must lie in [0, max_length); got {self.doc_stride}")
        for k in ("eval_every", "checkpoint_every"):
            if int(getattr(self, k)) < 0:
                raise ValueError(f"{k} must be >= 0; got {getattr(self, k)}")


def encode_examples(tok, frame: pd.DataFrame, max_length: int, stride: int | None = None):
    """Tokenise (question, context) with ``only_second`` truncation and map answers to token positions
    (0, 0 for no answer). Rows whose answer falls outside the kept context are returned as ``lost``
    (counted, never silently mislabelled).

    ``stride=None``: one feature per row (the context cut at ``max_length``); returns
    ``(enc, starts, ends, keep)``. ``stride`` = k > 0: **document stride**, as SQuAD readers are trained and as
    :class:`tfc.scorers.qgqa.ExtractiveQA` reads: a long context becomes windows of ``max_length`` tokens that
    overlap by ``k``; a window holding the whole answer is labelled with it, a window without it is labelled
    no-answer (position 0), the SQuAD 2.0 convention. Returns ``(enc, starts, ends, keep, owner)`` per window
    (``owner`` = the row it came from); a row is lost only when no window holds its whole answer (an answer
    longer than a window) or its question leaves no room for context."""
    if stride is None:
        enc = tok(frame["question"].tolist(), frame["context"].tolist(), truncation="only_second",
                  max_length=max_length, return_offsets_mapping=True)
        owner = np.arange(len(frame))
    else:
        if not 0 < stride < max_length:
            raise ValueError(f"stride must lie in (0, max_length); got {stride}")
        enc = tok(frame["question"].tolist(), frame["context"].tolist(), truncation="only_second",
                  max_length=max_length, stride=stride, return_overflowing_tokens=True, return_offsets_mapping=True)
        owner = np.asarray(enc["overflow_to_sample_mapping"])
    a_starts = frame["answer_start"].to_numpy()
    a_texts = frame["answer_text"].tolist()
    starts, ends, has = [], [], []
    for i, r in enumerate(owner):
        a_start = int(a_starts[r])
        if a_start < 0:
            starts.append(0), ends.append(0), has.append(True)
            continue
        a_end = a_start + len(a_texts[r])
        s = e = None
        for t, (sid, (o1, o2)) in enumerate(zip(enc.sequence_ids(i), enc["offset_mapping"][i])):
            if sid != 1:
                continue
            if s is None and o1 <= a_start < o2:
                s = t
            if o1 < a_end <= o2:
                e = t
        ok = s is not None and e is not None and e >= s
        starts.append(s if ok else 0), ends.append(e if ok else 0), has.append(ok)
    has = np.array(has, dtype=bool)
    if stride is None:
        return enc, np.array(starts), np.array(ends), has
    # a row whose whole answer no window holds is dropped with all its windows (never taught as no-answer);
    # the other windows of an answerable row that lack the answer are no-answer windows
    found = np.zeros(len(frame), dtype=bool)
    found[owner[has]] = True
    return enc, np.array(starts), np.array(ends), found[owner], owner


class SpanObjective:
    """The extractive QA objective of the one training engine (:func:`tfc.train.core.train`): rows are
    ``question, context, answer_text, answer_start``; the model is ``AutoModelForQuestionAnswering`` on the
    base encoder (a fresh span head); targets are token positions (0, 0 = no answer); the loss is the
    span head's own (mean of the start and end cross-entropies). Rows whose answer falls outside the kept
    context are dropped and counted (``lost``), never mislabelled."""

    kind = "qa-span"
    loss_doc = "mean of the start- and end-position cross-entropies (the span head's loss); no answer = position 0"

    def __init__(self, stride: int | None = None, dev_sets: dict[str, pd.DataFrame] | None = None):
        self.lost = 0
        self.kept_rows = 0
        self.stride = stride
        self.resume_salt = f"stride={stride}"
        # the dev curve: named frames in the QA set's columns (the held-out self-supervised pairs, XQuAD), read
        # by the model in training every ``eval_every`` steps (the engine calls evaluate with their concatenation)
        self.dev_sets = {k: v for k, v in (dev_sets or {}).items() if v is not None and len(v)}

    def validate(self, df: pd.DataFrame, cfg) -> pd.DataFrame:
        missing = set(COLUMNS) - set(df.columns) - {"pair"}
        if missing:
            raise ValueError(f"QA training frame lacks columns {sorted(missing)}")
        if len(df) == 0:
            raise ValueError("QA training frame is empty")
        return df.reset_index(drop=True)

    def split(self, data: pd.DataFrame, cfg):
        # the held-out slice is made of whole pairs by build_qa_set; the dev sets come in through the constructor
        if not self.dev_sets:
            return data, data.iloc[:0]
        return data, pd.concat([f.assign(_dev=k) for k, f in self.dev_sets.items()], ignore_index=True)

    def data_sha(self, data: pd.DataFrame) -> str:
        import hashlib

        h = hashlib.sha256()
        for r in data.loc[:, ["question", "context", "answer_text", "answer_start", "kind", "source"]].itertuples(index=False):
            h.update(json.dumps([r.question, r.context, r.answer_text, int(r.answer_start), r.kind, r.source],
                                ensure_ascii=False).encode() + b"\n")
        return h.hexdigest()

    def build(self, cfg):
        from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer
        from transformers.utils import logging as hf_logging

        from tfc import models
        from tfc.train.core import resolve_base

        path = models.resolve(cfg.init) if cfg.init else resolve_base(cfg.base)
        tok = AutoTokenizer.from_pretrained(path)
        v = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()   # "newly initialised qa_outputs" is expected from a plain encoder
        try:
            mcfg = AutoConfig.from_pretrained(path)
            # the span head has 2 outputs (start, end); a classifier's label map must not leak into it
            mcfg.id2label, mcfg.label2id = {0: "start", 1: "end"}, {"start": 0, "end": 1}
            model = AutoModelForQuestionAnswering.from_pretrained(path, config=mcfg)
        finally:
            hf_logging.set_verbosity(v)
        return model, tok

    def prepare(self, tok, train_df: pd.DataFrame, cfg, cache_dir):
        import torch

        from tfc.train.core import Tokenized

        # a question that leaves no room for context (over half the window) cannot be read: dropped, counted
        q_len = np.array([len(x) for x in tok(train_df["question"].tolist(), add_special_tokens=False)["input_ids"]])
        fits = q_len <= cfg.max_length // 2
        frame = train_df.loc[fits].reset_index(drop=True)
        if self.stride:
            enc, st, en, keep, owner = encode_examples(tok, frame, cfg.max_length, self.stride)
            self.kept_rows = int(len(np.unique(owner[keep])))
        else:
            enc, st, en, keep = encode_examples(tok, frame, cfg.max_length)
            self.kept_rows = int(keep.sum())
        self.lost = int(len(train_df) - self.kept_rows)
        rows = np.flatnonzero(keep)
        ids = [np.asarray(enc["input_ids"][i], dtype=np.int32) for i in rows]
        tts = [np.asarray(enc["token_type_ids"][i], dtype=np.int8) for i in rows] if "token_type_ids" in enc else None
        offsets = np.concatenate([[0], np.cumsum([len(x) for x in ids])]).astype(np.int64)
        key = f"qa-{self.data_sha(train_df)[:16]}-{cfg.max_length}-{self.stride or 0}"
        toks = Tokenized(np.concatenate(ids) if ids else np.zeros(0, np.int32),
                         np.concatenate(tts) if tts else None, offsets,
                         int(sum(len(x) >= cfg.max_length for x in ids)), key)
        return toks, {"start": torch.as_tensor(st[rows]), "end": torch.as_tensor(en[rows])}

    def loss(self, model, feats: dict, targets: dict, idx, cfg, device, autocast):
        with autocast:
            out = model(**feats, start_positions=targets["start"][idx].to(device),
                        end_positions=targets["end"][idx].to(device))
        loss = out.loss.float()
        return loss, {"span": float(loss.detach())}

    def evaluate(self, model, tok, eval_df, cfg, device) -> dict:
        """F1 / EM / abstention per dev set (:func:`evaluate_qa`), read as the scorers read (windows of
        ``max_length`` with the run's stride); the engine records it on the dev curve."""
        if eval_df is None or not len(eval_df) or "_dev" not in eval_df:
            return {}
        from tfc.scorers.qgqa import ExtractiveQA

        was_training = model.training
        model.eval()
        qa = ExtractiveQA.from_model(model, tok, max_length=cfg.max_length,
                                     stride=self.stride or max(1, cfg.max_length // 4))
        out = {}
        for name, frame in eval_df.groupby("_dev", sort=False):
            ev = evaluate_qa(qa, frame.drop(columns="_dev"))
            out[name] = {k: ev[k] for k in ("f1", "exact_match", "answerable_abstained", "no_answer_accuracy")}
            out[name]["by_kind_f1"] = {k: v["f1"] for k, v in ev["by_kind"].items() if "f1" in v}
        model.train(was_training)
        return out

    def data_facts(self, data, train_df, eval_df, toks) -> dict:
        return {"rows": int(len(data)), "train_rows": self.kept_rows, "train_windows": int(len(toks.lengths)),
                "stride": self.stride, "answer_truncated_rows": self.lost,
                "sha256": self.data_sha(data), "by_kind": data["kind"].value_counts().sort_index().to_dict(),
                "median_tokens": float(np.median(toks.lengths)) if len(toks.lengths) else None}

    def save(self, model, tok, target: Path) -> None:
        target.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(target, safe_serialization=True)
        tok.save_pretrained(target)

    def card(self, target: Path, summary: dict) -> None:
        pass                                 # train_qa writes the QA card once the held-out scores exist


def engine_config(cfg: QATrainConfig):
    """The one engine's configuration for a QA run (no pair heads: the span objective brings its own)."""
    from tfc.train.core import TrainConfig

    return TrainConfig(name=cfg.name, base=cfg.base, tasks=(), max_length=cfg.max_length, batch_size=cfg.batch_size,
                       lr=cfg.lr, weight_decay=cfg.weight_decay, warmup_ratio=cfg.warmup_ratio, max_steps=cfg.max_steps,
                       max_minutes=cfg.max_minutes, seed=cfg.seed, device=cfg.device, num_threads=cfg.num_threads,
                       grad_clip=cfg.grad_clip, log_every=cfg.log_every, length_pool=cfg.length_pool,
                       loss_weights={}, eval_rows=0, dtype=cfg.dtype, eval_every=cfg.eval_every,
                       checkpoint_every=cfg.checkpoint_every, init=cfg.init, freeze=tuple(cfg.freeze))


def train_qa(train_df: pd.DataFrame, cfg: QATrainConfig, out_dir=None, heldout: pd.DataFrame | None = None,
             data_report: dict | None = None, progress: bool = False, dev: pd.DataFrame | None = None) -> dict:
    """Train on the one engine, save (``out_dir`` or ``<artifacts>/<name>``), evaluate on ``heldout`` (the
    held-out self-supervised pairs) and on ``dev`` (a human-written dev set, e.g. :func:`xquad_frame`);
    returns the summary."""
    from tfc.train import core

    cfg.validate()
    target = Path(out_dir) if out_dir else config.artifacts_dir() / cfg.name
    # the dev curve reads the held-out pairs and the human-written dev set every eval_every steps
    obj = SpanObjective(stride=cfg.stride or None,
                        dev_sets={"heldout": heldout, "xquad": dev} if cfg.eval_every else None)
    res = core.train(train_df, engine_config(cfg), out_dir=target, progress=progress, objective=obj,
                     resume=bool(cfg.checkpoint_every))
    ev, dev_ev = {}, {}
    if (heldout is not None and len(heldout)) or (dev is not None and len(dev)):
        from tfc.scorers.qgqa import ExtractiveQA

        qa = ExtractiveQA(str(target), max_length=cfg.max_length, stride=cfg.stride or max(1, cfg.max_length // 4),
                          device=cfg.device)
        ev = evaluate_qa(qa, heldout) if heldout is not None and len(heldout) else {}
        dev_ev = evaluate_qa(qa, dev) if dev is not None and len(dev) else {}
    summary = dict(res.summary)
    summary.update({
        "task": "extractive QA with no-answer ([CLS] = position 0)",
        "config": core.portable_config(asdict(cfg)), "engine_config": res.summary["config"],
        "data": data_report or {},
        "train_rows": int(len(train_df)), "train_rows_answer_truncated": obj.lost,
        "last_loss_mean20": float(np.mean(res.losses[-20:])) if res.losses else None,
        "heldout_eval": ev, "dev_eval_human": dev_ev,
    })
    (target / "training_summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    write_qa_card(target, summary)
    return summary


def xquad_frame(path=None) -> pd.DataFrame:
    """XQuAD-English (1,190 human-written SQuAD v1.1 dev questions on 240 Wikipedia paragraphs) in the QA set's
    columns (``kind="xquad"``, ``pair`` = paragraph number): the QA model's human-written **dev** set. It is
    never trained on, so its F1 measures reading on questions that the rule-based QG did not write. Every
    ``answer_start`` is checked against its context; a mismatch is an error, not a silent skip."""
    from tfc.data.manifest import raw_path

    p = Path(path) if path else raw_path(XQUAD_FILE)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read XQuAD file {p}: {exc}") from None
    rows, k = [], 0
    for art in doc.get("data", []):
        for para in art["paragraphs"]:
            ctx = para["context"]
            for qa in para["qas"]:
                ans = qa["answers"][0]
                start, text = int(ans["answer_start"]), ans["text"]
                if ctx[start:start + len(text)] != text:
                    raise ValueError(f"{p}: question {qa.get('id')}: answer_start {start} does not point at {text!r}")
                rows.append((qa["question"], ctx, text, start, "xquad", "xquad_en", k))
            k += 1
    if not rows:
        raise ValueError(f"{p}: no questions")
    return pd.DataFrame(rows, columns=list(COLUMNS))


def evaluate_qa(qa, frame: pd.DataFrame, batch_size: int = 64) -> dict:
    """EM and F1 (SQuAD) on answerable rows, accuracy on no-answer rows, and the overall SQuAD-2 style
    F1 (no-answer rows score 1 when the model abstains)."""
    from tfc.scorers.qgqa import squad_em, squad_f1

    res = qa.answer(frame["question"].tolist(), frame["context"].tolist(), batch_size=batch_size)
    pred = [r.text for r in res]
    has = (frame["answer_start"] >= 0).to_numpy()
    em = np.array([squad_em(g, p) for g, p in zip(frame["answer_text"], pred)])
    f1 = np.array([squad_f1(g, p) for g, p in zip(frame["answer_text"], pred)])
    abst = np.array([not r.has_answer for r in res])
    out = {"rows": int(len(frame)), "answerable": int(has.sum()), "no_answer": int((~has).sum()),
           "exact_match": float(em[has].mean()) if has.any() else None,
           "f1": float(f1[has].mean()) if has.any() else None,
           "answerable_abstained": float(abst[has].mean()) if has.any() else None,
           "no_answer_accuracy": float(abst[~has].mean()) if (~has).any() else None,
           "overall_f1": float(np.where(has, f1, abst).mean()) if len(frame) else None}
    kinds = {}
    for k, g in frame.assign(_f1=f1, _ab=abst).groupby("kind"):
        kinds[k] = {"rows": int(len(g)), "f1" if k in ANSWERABLE else "abstained":
                    float(g["_f1"].mean()) if k in ANSWERABLE else float(g["_ab"].mean())}
    out["by_kind"] = kinds
    return out


def write_qa_card(ckpt_dir, summary: dict) -> Path:
    cfg = summary["config"]
    ev = summary.get("heldout_eval") or {}
    lines = ["---", "library_name: transformers", "pipeline_tag: question-answering", "tags: [extractive-qa, squad2-style, tfc]", "---",
             f"# {summary['name']}", "",
             "In-house extractive QA model of the tfc project (no-answer = the [CLS] position), trained offline on "
             "a self-supervised QA set made with rule-based questions from training-side text only "
             "(leakage-filtered; see `tfc.train.qa`). Loads with `AutoModelForQuestionAnswering`.", "",
             "## Training", "",
             f"- base: `{summary['base_model']}`; steps {summary['steps']} ({summary['stopped_by']}), batch "
             f"{cfg['batch_size']}, lr {cfg['lr']}, max length {cfg['max_length']}, seed {cfg['seed']}",
             f"- {summary['train_rows']} training rows ({summary['train_rows_answer_truncated']} lost to truncation), "
             f"{summary['examples_per_second']} examples/s, {summary['train_seconds']} s on {summary['device']} "
             f"({summary['torch_threads']} threads)", "",
             "## Data", "", "```json", json.dumps({k: v for k, v in (summary.get("data") or {}).items() if k != "leakage"},
                                                 indent=1), "```", "",
             "## Held-out evaluation", ""]
    if ev:
        def f(x):
            return "n/a" if x is None else f"{x:.3f}"

        lines += [f"- exact match {f(ev['exact_match'])}, F1 {f(ev['f1'])} on {ev['answerable']} answerable questions",
                  f"- no-answer accuracy {f(ev['no_answer_accuracy'])} on {ev['no_answer']} unanswerable questions",
                  "", "```json", json.dumps(ev.get("by_kind", {}), indent=1), "```"]
    else:
        lines += ["none"]
    dev = summary.get("dev_eval_human") or {}
    if dev:
        lines += ["", "## Human-written dev set (XQuAD-English, never trained on)", "",
                  f"- exact match {dev['exact_match']:.3f}, F1 {dev['f1']:.3f} on {dev['answerable']} questions; "
                  f"abstained on {dev['answerable_abstained']:.3f} of them"]
    p = Path(ckpt_dir) / "README.md"
    p.write_text("\n".join(lines) + "\n")
    return p


def snapshot_from_state(state_path, like, out_dir, dev: pd.DataFrame | None = None, note: str = "") -> dict:
    """A checkpoint from a QA run's resumable state (``resume_state.pt`` copied during the run): the weights at
    that step, with the architecture and tokenizer of ``like`` (the run's saved checkpoint). Evaluated on
    ``dev`` (e.g. XQuAD-English) when given; writes ``training_summary.json`` (step, examples seen, the dev
    scores, ``note``) and returns it. A weaker reader of the same run, for the QAGS Table 2 analogue."""
    import torch
    from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer

    from tfc import models

    state = torch.load(state_path, map_location="cpu", weights_only=True)
    like_name, like = str(like), models.resolve(str(like))
    model = AutoModelForQuestionAnswering.from_config(AutoConfig.from_pretrained(like))
    model.load_state_dict(state["model"])
    tok = AutoTokenizer.from_pretrained(like)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    st = state["st"]
    summary = {"name": f"tfc/{out.name}", "snapshot_of": like_name, "steps": int(st["step"]),
               "examples_seen": int(st["examples"]), "train_seconds": round(float(st["train_s"]), 1), "note": note,
               "stopped_by": "snapshot", "dev_eval_human": {}}
    if dev is not None and len(dev):
        from tfc.scorers.qgqa import ExtractiveQA

        cfg = json.loads((Path(like) / "training_summary.json").read_text())["config"]
        run = QATrainConfig(**{k: v for k, v in cfg.items() if k in QATrainConfig.__dataclass_fields__})
        qa = ExtractiveQA(str(out), max_length=run.max_length, stride=run.stride or max(1, run.max_length // 4))
        summary["dev_eval_human"] = evaluate_qa(qa, dev)
    (out / "training_summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return summary


def make_tiny_qa(path, seed: int = 0) -> Path:
    """A tiny random-weight BERT extractive QA checkpoint (tests and smoke runs; its answers are noise)."""
    import torch
    from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer

    from tfc.models.tiny import make_tiny_classifier

    path = Path(path)
    make_tiny_classifier(path, seed=seed, max_position=256)
    cfg = AutoConfig.from_pretrained(path)
    cfg.id2label, cfg.label2id = {0: "start", 1: "end"}, {"start": 0, "end": 1}
    torch.manual_seed(seed)
    model = AutoModelForQuestionAnswering.from_config(cfg).eval()
    tok = AutoTokenizer.from_pretrained(path)
    for f in path.glob("*.safetensors"):
        f.unlink()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
