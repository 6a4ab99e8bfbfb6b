"""The self-supervised QA set of the in-house extractive QA model (``tfc/qa-minilm``), and its human-written dev set.

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

The dev set (:func:`xquad_frame`) is XQuAD-English, in the same columns; the model's training is :mod:`tfc.train.qa`.
"""
from __future__ import annotations

import difflib
import json
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd

SOURCES = ("vitaminc_test", "sick2014", "msrp", "wecheck_dialogue")
KINDS = ("self", "cross", "contrast", "nei", "other", "ground", "long")
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
    from tfc.scorers.qgqa import candidates_from_doc, parse, sentence_questions

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
                qs = sentence_questions(docs_b[i], c.start, c.end)
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
            qs = sentence_questions(docs_a[i], c.start, c.end)
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
