"""As published against tfc's own readings of the same checkpoint, on TRUE's nine sets.

SummaC-ZS, SummaC-Conv, AlignScore, WeCheck, Q² and QAGS each have an ``as-published`` configuration that computes
what the reference code computes (``benchmarks/bench_peers.py`` holds SummaC and AlignScore to the peers within
1e-4; ``tests/test_reference_values_qgqa.py`` holds Q² and QAGS to the authors' functions) and a reading of tfc's
own, the ``improved`` preset (:data:`READINGS`: SummaC-ZS's per-cell reduction, SummaC-Conv's head of bin fractions,
AlignScore's greedy chunks, WeCheck's chunks of a long grounding, Q²'s and QAGS's steps of tfc). Each SummaC-Conv
head is the shipped one fitted on training-side dev pairs for its matrices. This run scores both on the same
:data:`ROWS` label-stratified rows of each TRUE set with the shipped models (:func:`shipped_models`), through the score
cache, so the Performance chapter can set their ROC AUCs side by side. TRUE is only read here: nothing is chosen on
it.

    python -m tfc.runs.reference_readings [SCORER ...]   # resumable (score cache); Q² and QAGS take most of it

:func:`table` reads the committed caches only (a chapter never scores).
"""
from __future__ import annotations

import pandas as pd

TRUE9 = ("frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2", "dialfact", "paws")
ROWS = 60
SEED = 0
# scorer -> (label of the as-published configuration, label of tfc's reading: the "improved" preset)
READINGS: dict[str, tuple[str, str]] = {
    "summac-zs": ("as published: short sentences dropped, max P(e) − max P(c)",
                  "improved: every sentence, max (P(e) − P(c)) per cell"),
    "summac-conv": ("as published: the package's head (bin counts, first 10 sentences) on sentence matrices",
                    "improved: tfc's head (bin fractions, every sentence) on window12 matrices"),
    "alignscore": ("as published: equal groups of sentences", "improved: greedy chunks ≤ 350 words"),
    "wecheck": ("as published: the README's call, cut at 512 tokens", "improved: the grounding in chunks"),
    "q2": ("as published: Q²'s code (clean_text, arg-max span, NLI pairs ending in '.', NLI-label fallback)",
           "improved: tfc's steps (SQuAD normalisation and F1, best start ≤ end span)"),
    "qags": ("as published: filter_qsts (answerable as generated, most probable first, '?' required, random fill)",
             "improved: tfc's filters (in candidate order, kept questions repeated to K, no-answer 0)"),
}
# the scorers read with the shipped NLI model; the others read with their own shipped models (shipped_models())
NLI_FAMILY = ("summac-zs", "summac-conv", "alignscore")


def shipped_models(name: str, checkpoint: str | None = None) -> dict:
    """The models ``name`` reads here: ``checkpoint`` (default: the shipped NLI model) for the NLI family, the
    default's shipped checkpoint for WeCheck, the shipped QA reader (and the shipped NLI model for Q²'s NLI step and
    the no-question fallbacks) for Q² and QAGS."""
    from tfc import scorers as S

    if name in NLI_FAMILY:
        return {"checkpoint": checkpoint or S.SHIPPED_NLI}
    if name in ("q2", "qags"):
        return {"checkpoint": S.SHIPPED_QA, "nli_checkpoint": S.SHIPPED_NLI}
    return {"checkpoint": S.DEFAULTS[name]["checkpoint"]}


def scorers(checkpoint: str | None = None, names=tuple(READINGS)) -> dict[tuple[str, str], object]:
    """``{(scorer, label): scorer}``: each scorer as published and in tfc's reading (the ``improved`` preset), on
    the models of :func:`shipped_models` (``checkpoint``: the NLI family's; default the shipped NLI model)."""
    from tfc import scorers as S

    out = {}
    for name in names:
        published, ours = READINGS[name]
        out[(name, published)] = S.get(name, preset="as-published", **shipped_models(name, checkpoint))
        out[(name, ours)] = S.get(name, preset="improved", **shipped_models(name, checkpoint))
    return out


def run(checkpoint: str | None = None, datasets=TRUE9, rows: int = ROWS, seed: int = SEED, progress: bool = True,
        names=tuple(READINGS)):
    """Score every (scorer, reading) on the sampled rows of each set (cached; a rerun reads the cache)."""
    from tfc.results.dataset import score_dataset

    for (name, label), sc in scorers(checkpoint, names).items():
        for ds in datasets:
            if progress:
                print(f"{name} [{label}] {ds}", flush=True)
            score_dataset(sc, ds, sample=rows, seed=seed, progress=False)


def table(checkpoint: str | None = None, datasets=TRUE9, rows: int = ROWS, seed: int = SEED) -> pd.DataFrame:
    """ROC AUC (x100) per set and reading from the cache: ``scorer, reading, signature, dataset, rows, auc`` (a set
    whose rows are not all cached is left out)."""
    from tfc.meta import roc_auc
    from tfc.results.dataset import score_dataset

    out = []
    for (name, label), sc in scorers(checkpoint).items():
        for ds in datasets:
            got = score_dataset(sc, ds, sample=rows, seed=seed, cache_only=True)
            if got["score"].isna().any():      # not scored yet (python -m tfc.runs.reference_readings)
                continue
            out.append({"scorer": name, "reading": label, "signature": sc.signature, "dataset": ds,
                        "rows": len(got), "auc": 100 * roc_auc(got["label"], got["score"])})
    return pd.DataFrame(out, columns=["scorer", "reading", "signature", "dataset", "rows", "auc"])


SHORT_CHARS = 10          # summac 0.0.4 drops sentences of at most 10 characters
MAX_DOC_SENTS = 100       # ... reads the first 100 grounding sentences
PACKAGE_MAX_TOKENS = 500  # ... and cuts a (grounding, generated) sentence pair at 500 tokens


def unmatched_steps(checkpoint: str | None = None, datasets=TRUE9, rows: int = ROWS, seed: int = SEED) -> dict:
    """How many of the sampled rows the steps of summac 0.0.4 that the as-published configuration does not take
    could change: ``rows`` in all, and per step the rows it touches (with tfc's sentences): ``short_sentence``
    (a sentence of at most :data:`SHORT_CHARS` characters, which the package drops), ``over_100_sentences``
    (a grounding of more than :data:`MAX_DOC_SENTS` sentences, which the package cuts) and ``pair_over_500_tokens``
    (a sentence pair the package would truncate; tfc chunks it)."""
    from transformers import AutoTokenizer

    from tfc import data, models
    from tfc import scorers as S
    from tfc.text.sentences import split_many

    tok = AutoTokenizer.from_pretrained(models.resolve(checkpoint or S.SHIPPED_NLI))
    counts = {"rows": 0, "short_sentence": 0, "over_100_sentences": 0, "pair_over_500_tokens": 0}
    for ds in datasets:
        df = data.load(ds, sample=rows, seed=seed)
        g_sents = split_many(df["grounding"].tolist())
        h_sents = split_many(df["generated"].tolist())
        for gs, hs in zip(g_sents, h_sents):
            counts["rows"] += 1
            counts["short_sentence"] += any(len(x) <= SHORT_CHARS for x in gs + hs)
            counts["over_100_sentences"] += len(gs) > MAX_DOC_SENTS
            longest = [max((len(t) for t in tok(x, add_special_tokens=False)["input_ids"]), default=0)
                       for x in (gs or [""], hs or [""])]
            counts["pair_over_500_tokens"] += sum(longest) + 3 > PACKAGE_MAX_TOKENS
    return counts


def wide(long: pd.DataFrame) -> pd.DataFrame:
    """One row per set, a column per (scorer, reading), and the nine-set mean as the last row."""
    if not len(long):
        return pd.DataFrame()
    w = long.pivot_table(index="dataset", columns=["scorer", "reading"], values="auc", sort=False)
    w.loc["mean"] = w.mean()
    return w.round(1)


if __name__ == "__main__":
    import sys

    run(names=tuple(sys.argv[1:]) or tuple(READINGS))
