"""A worked example: one inconsistent summary through NLI, SummaC, AlignScore and Q², step by step.

Each ``*_steps`` function recomputes a scorer's result from its intermediates (the chunks and their
entailment probabilities, the sentence matrix, the (chunk, claim sentence) alignment scores, the
questions and answers) with the scorer's own building blocks, and returns them with the scorer's
final score so the page can show that the two agree. Nothing is cached: the example is scored live,
which needs the checkpoints: the shipped ones by default; :func:`available` tells whether another is
installed.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import models
from tfc.scorers import SHIPPED_NLI, SHIPPED_QA

# tqdm's notebook-widget warning is noise on a book page (the steps show no progress bars)
warnings.filterwarnings("ignore", message="IProgress not found")

# the shipped models (results/release/): the steps run on a fresh clone, each reading as its paper publishes it
CHECKPOINTS = {"nli": SHIPPED_NLI, "summac": SHIPPED_NLI, "alignscore": SHIPPED_NLI, "q2_qa": SHIPPED_QA,
               "q2_nli": SHIPPED_NLI}


def available(checkpoint: str) -> bool:
    """True when ``checkpoint`` can be loaded offline (a local directory, or an installed in-house name)."""
    try:
        return models.is_local(checkpoint) and Path(models.resolve(checkpoint)).is_dir()
    except Exception:   # an unresolvable name is simply "not available" here
        return False


def pick_example(dataset: str = "qags_cnndm", min_sentences: int = 2, max_grounding_words: int = 600,
                 min_grounding_words: int = 360) -> pd.Series:
    """The inconsistent example (label 0) of ``dataset`` with the shortest grounding among those whose
    generated text has at least ``min_sentences`` sentences and whose grounding has between
    ``min_grounding_words`` and ``max_grounding_words`` whitespace words (long enough for two
    AlignScore chunks, short enough to read). Deterministic: ties are broken by id."""
    from tfc import data
    from tfc.text.sentences import split_many

    df = data.load(dataset)
    df = df[df["label"] == 0].copy()
    df["g_words"] = df["grounding"].str.split().str.len()
    df = df[(df["g_words"] >= min_grounding_words) & (df["g_words"] <= max_grounding_words)]
    if df.empty:
        raise ValueError(f"no inconsistent {dataset} example with a grounding of "
                         f"{min_grounding_words}-{max_grounding_words} words")
    df["n_sent"] = [len(s) for s in split_many(df["generated"].tolist(), "auto")]
    df = df[df["n_sent"] >= min_sentences].sort_values(["g_words", "id"])
    if df.empty:
        raise ValueError(f"no such example with >= {min_sentences} generated sentences")
    return df.iloc[0]


def short(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def nli_steps(grounding: str, generated: str, checkpoint: str = CHECKPOINTS["nli"], device: str | None = None):
    """Document-mode NLI: the grounding's chunks, P(entailment/neutral/contradiction) of the generated text
    given each chunk; the score is the largest P(entailment). Returns ``(table, score, scorer_score)``."""
    from tfc import scorers
    from tfc.text.chunking import chunk_many

    s = scorers.get("nli", preset="as-published", checkpoint=checkpoint, mode="document", **({"device": device} if device else {}))
    s.load()
    eng = s.engine
    hyp, budgets, _ = eng.hyp_budget([generated], s.config.min_chunk_tokens)
    chunks = chunk_many([grounding], eng.tok, budgets[0], splitter=s.config.sentence_splitter)[0].chunks
    p = eng.probs([(c, hyp[0]) for c in chunks], batch_size=8)
    t = pd.DataFrame({"chunk": range(1, len(chunks) + 1), "words": [len(c.split()) for c in chunks],
                      "starts with": [short(c, 70) for c in chunks]})
    for j, lab in enumerate(eng.labels):
        t[f"P({lab})"] = p[:, j].round(3)
    score = float(p[:, eng.i_ent].max())
    return t, score, float(s.score([grounding], [generated], progress=False)[0])


def summac_steps(grounding: str, generated: str, checkpoint: str = CHECKPOINTS["summac"], device: str | None = None):
    """SummaC-ZS as published: the matrix of P(entailment) for every (grounding sentence, generated sentence) pair;
    per generated sentence the largest P(entailment) over grounding sentences minus the largest P(contradiction);
    the score is their mean. Returns ``(P(entailment) DataFrame, per-sentence table, score, scorer_score)``."""
    from tfc import scorers
    from tfc.scorers.summac import _units

    s = scorers.get("summac-zs", preset="as-published", checkpoint=checkpoint, **({"device": device} if device else {}))
    m = s.matrices([grounding], [generated], batch_size=8)[0]
    eng = s.engine
    ent, con = m[:, :, eng.i_ent], m[:, :, eng.i_con]
    gen_units = _units([generated], s.config.generated_granularity, s.config.sentence_splitter)[0]
    mat = pd.DataFrame(ent.round(2), index=[f"g{i + 1}" for i in range(ent.shape[0])],
                       columns=[f"s{j + 1}" for j in range(ent.shape[1])])
    per_unit = ent.max(axis=0) - con.max(axis=0)
    per = pd.DataFrame({"sentence": [f"s{j + 1}" for j in range(ent.shape[1])],
                        "text": [short(u, 110) for u in gen_units[: ent.shape[1]]],
                        "most entailing": [f"g{i + 1}" for i in ent.argmax(axis=0)],
                        "max e": ent.max(axis=0).round(3),
                        "most contradicting": [f"g{i + 1}" for i in con.argmax(axis=0)],
                        "max c": con.max(axis=0).round(3),
                        "max e - max c": per_unit.round(3)})
    return mat, per, float(per_unit.mean()), float(s.score([grounding], [generated], progress=False)[0])


def alignscore_steps(grounding: str, generated: str, checkpoint: str = CHECKPOINTS["alignscore"],
                     device: str | None = None, chunk_words: int = 350):
    """AlignScore as published: the grounding's sentences in equal groups (one more group per ``chunk_words``
    words), the claim in sentences, the alignment score of every (group, sentence) pair, max over groups, mean
    over sentences.
    Returns ``(pair table, per-sentence table, score, scorer_score)``."""
    from tfc import scorers
    from tfc.scorers.alignscore_model import build_units, truncation_rule

    s = scorers.get("alignscore", preset="as-published", checkpoint=checkpoint, chunk_words=chunk_words,
                    **({"device": device} if device else {}))
    s.load()
    ctx, claims = build_units([grounding], [generated], split=s.config.split, chunk_words=chunk_words,
                              splitter=s.config.sentence_splitter)
    ctx, claims = ctx[0], claims[0]
    a = [c for c in ctx for _ in claims]
    b = [h for _ in ctx for h in claims]
    p = s.model.pair_scores(a, b, head=s.config.head, batch_size=8, truncation=truncation_rule(s.config.split))
    p = p.reshape(len(ctx), len(claims))
    pairs = pd.DataFrame(p.round(3), index=[f"chunk {i + 1} ({len(c.split())} words)" for i, c in enumerate(ctx)],
                         columns=[f"s{j + 1}" for j in range(len(claims))])
    best = p.max(axis=0)
    per = pd.DataFrame({"sentence": [f"s{j + 1}" for j in range(len(claims))],
                        "text": [short(c, 110) for c in claims],
                        "best chunk": [int(i) + 1 for i in p.argmax(axis=0)], "max P(aligned)": best.round(3)})
    return pairs, per, float(best.mean()), float(s.score([grounding], [generated], progress=False)[0])


def q2_steps(grounding: str, generated: str, checkpoint: str = CHECKPOINTS["q2_qa"],
             nli_checkpoint: str = CHECKPOINTS["q2_nli"], device: str | None = None):
    """Q²: answer candidates of the generated text, a question per candidate, the answers on the generated
    text (validation) and on the grounding, their token F1, the NLI fallback and the sub-scores.
    Returns ``(per-question table, score recomputed from the table, scorer_score)``."""
    from tfc import scorers

    s = scorers.get("q2", preset="as-published", checkpoint=checkpoint, nli_checkpoint=nli_checkpoint,
                    **({"device": device} if device else {}))
    t = s.explain([grounding], [generated])
    t = t.drop(columns=[c for c in ("example",) if c in t.columns])
    used = t[t["used"]] if "used" in t.columns else t
    sub = next((c for c in ("score", "sub_score", "subscore") if c in used.columns), None)
    score = float(used[sub].astype(float).mean()) if sub is not None and len(used) else float("nan")
    return t, score, float(s.score([grounding], [generated], progress=False)[0])


def summary(rows: list[tuple[str, float, float]]) -> pd.DataFrame:
    """``scorer, recomputed, scorer's score, agree`` (agree within 1e-4; NaN == NaN)."""
    out = pd.DataFrame(rows, columns=["scorer", "recomputed from the steps", "scorer's score"])
    a, b = out["recomputed from the steps"].astype(float), out["scorer's score"].astype(float)
    out["agree"] = np.isclose(a, b, atol=1e-4, equal_nan=True)
    return out.round(4)
