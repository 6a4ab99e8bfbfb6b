"""The WeCheck pool: weakly labelled training rows, their weak signals, the leakage overlap, and their labels (``p(y+)``).

**Training data.** The mirror holds the authors' weak-supervision samples (``wecheck_train``): PAWS
(8,000 pairs, 1 hypothesis each) and Wizard-of-Wikipedia dialogue (7,420 knowledge passages x 5
model responses = 37,100 pairs). The summarisation part (BART samples on CNN/DM and XSum) is missing,
and it cannot be rebuilt honestly: we have no summarisation model, and every news article in the
mirror belongs to an evaluation set. So WeCheck-MiniLM trains on **dialogue only**, after the leakage
filter (:func:`tfc.data.leakage.training_mix`). The PAWS file *is* TRUE's PAWS evaluation set (every
article, 7,999 of 8,000 pairs): the filter removes all of it; a run that keeps it (``tasks=("dialogue",
"paws")`` with ``leaked=True``) exists only to measure how much the overlap inflates PAWS, and its
checkpoint name says ``leaked``.

**Weak signals** (columns ``sig_*``, all in [0, 1], higher = consistent):

* ``sig_anli`` -- the file's ``anli_score``: the entailment probability of an ANLI-trained NLI model,
  i.e. the authors' NLI warm-up signal (one per beam);
* ``sig_summac`` -- the file's ``summac_score``: SummaC (one per beam; its range is [0, 1] here);
* ``sig_qafacteval`` -- the file's ``qafacteval_score`` (QAFactEval). Its list does not follow the
  beams: row ``i`` holds a 16-long window of one running list (row ``i+1``'s list is row ``i``'s shifted
  by one). For PAWS (1 beam) the first element is the row's own score (it correlates 0.75 with
  ``anli_score``); for dialogue (5 beams per row, shift 1 per row) no beam alignment exists, so the
  signal is NaN there (abstains) -- see :func:`released_signals`;
* ``sig_nli`` -- ours: ``tfc/nli-minilm`` entailment probability (document mode, the ``nli`` scorer);
* ``sig_summac_zs`` -- ours: SummaC-ZS with ``tfc/nli-minilm`` (``e - c`` in [-1, 1], mapped to
  ``(x + 1) / 2``).

Thresholds of the unification are computed per task (the signal distributions differ by task, the
reason the paper sets them by probability mass); one labelling model is fitted on all rows.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


TASK_SETS = {"dialogue": "wecheck_dialogue", "paws": "wecheck_paws"}
RELEASED = ("sig_anli", "sig_summac", "sig_qafacteval")
OURS = ("sig_nli", "sig_summac_zs")
ALL_SIGNALS = RELEASED + OURS
# The default leaves out our SummaC-ZS: it runs the same tfc/nli-minilm as sig_nli (correlation 0.88 on
# the dialogue pool), so the two are not independent given the label, which the label model assumes;
# with both in, EM makes them near-perfect (learned accuracy of sig_nli 0.9999) and the labels follow
# our weak warm-up. The chapter shows this fit. The default trio mirrors the paper's (an NLI model, SummaC,
# and the target's own NLI warm-up; QAFactEval where aligned, i.e. PAWS only).
DEFAULT_SIGNALS = ("sig_anli", "sig_summac", "sig_qafacteval", "sig_nli")
SIGNAL_DOC = {
    "sig_anli": "released anli_score: entailment probability of the authors' ANLI-trained NLI model",
    "sig_summac": "released summac_score: SummaC score, [0, 1]",
    "sig_qafacteval": "released qafacteval_score: QAFactEval, first element of the row's window (PAWS only)",
    "sig_nli": "ours: tfc/nli-minilm P(entailment), document mode",
    "sig_summac_zs": "ours: SummaC-ZS with tfc/nli-minilm, (e - c + 1) / 2",
}
OWN_SCORERS = {"sig_nli": ("nli", {"checkpoint": "tfc/nli-minilm", "mode": "document"}),
               "sig_summac_zs": ("summac-zs", {"checkpoint": "tfc/nli-minilm", "reduction": "cell",
                                               "sentence_splitter": "auto"})}


# --------------------------------------------------------------------------------------------------
# signals and leakage

def released_signals(task: str) -> pd.DataFrame:
    """``id`` plus the released signals of ``wecheck_<task>`` (one row per (article, beam))."""
    from tfc import data as D
    from tfc.data.builders import _jsonl

    if task not in TASK_SETS:
        raise ValueError(f"task must be one of {sorted(TASK_SETS)}; got {task!r}")
    df = D.load(TASK_SETS[task])
    meta = pd.DataFrame(list(df["meta"]))
    out = pd.DataFrame({"id": df["id"].to_numpy(), "sig_anli": meta["anli_score"].astype(float).to_numpy(),
                        "sig_summac": meta["summac_score"].astype(float).to_numpy()})
    if task == "paws":
        qa = []
        for k in range(8):
            qa += [float(rec["qafacteval_score"][0]) for rec in _jsonl(f"wecheck_train/paws/qafacteval_score_{k}.json")]
        if len(qa) != len(out):
            raise RuntimeError(f"paws: {len(qa)} QAFactEval values for {len(out)} rows")
        out["sig_qafacteval"] = qa
    else:
        out["sig_qafacteval"] = np.nan   # not aligned with the beams (module doc)
    return out


def _case_space(t: str) -> str:
    return " ".join(str(t).lower().split())


def overlap_report(normalizer: str = "leakage") -> pd.DataFrame:
    """Exact overlaps of the WeCheck files with TRUE's sets, after ``normalizer``: ``"leakage"``
    (:func:`tfc.data.leakage.normalize`: NFKC, lower case, punctuation dropped; the filter's rule 1) or
    ``"case-space"`` (lower case and white space only; the data README's count).

    One row per (task, TRUE set): articles of the file (its rows; one article has several beams in
    dialogue) that are groundings of the set, and rows (article, hypothesis) of the file whose pair is a
    pair of the set.
    """
    from tfc import data as D
    from tfc.data.leakage import normalize as _leak

    normalize = {"leakage": _leak, "case-space": _case_space}.get(normalizer)
    if normalize is None:
        raise ValueError(f"normalizer must be 'leakage' or 'case-space'; got {normalizer!r}")
    rows = []
    true_sets = {n: D.load(n) for n in D.TRUE_TEXT}
    norm_true = {n: (set(map(normalize, df["grounding"])),
                     set(zip(map(normalize, df["grounding"]), map(normalize, df["generated"]))))
                 for n, df in true_sets.items()}
    for task, name in TASK_SETS.items():
        w = D.load(name)
        g = list(map(normalize, w["grounding"]))
        pairs = list(zip(g, map(normalize, w["generated"])))
        arts = pd.DataFrame(list(w["meta"]))[["file", "row"]].assign(g=g).drop_duplicates(["file", "row"])
        for n, (tg, tp) in norm_true.items():
            rows.append({"task": task, "true_set": n, "file_articles": len(arts), "file_pairs": len(w),
                         "articles_in_set": int(arts["g"].isin(tg).sum()),
                         "pairs_in_set": sum(pr in tp for pr in pairs)})
    return pd.DataFrame(rows)


def weak_frame(tasks=("dialogue",), leaked: bool = False, sample: int | None = None, seed: int = 0,
               with_own=OURS, progress: bool = False, cache_only: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The weakly labelled pool: common-schema rows + ``sig_*`` columns, and the leakage report.

    ``leaked=False`` applies the leakage filter to every task; ``leaked=True`` keeps the PAWS rows
    unfiltered (the labelled "leaked" comparison only; dialogue is always filtered). ``sample`` rows per
    task are drawn (seeded) after filtering. ``with_own``: our signals to add through the score cache
    (names from ``OURS``; ``()`` or False adds none).
    """
    from tfc import data as D
    from tfc.data.leakage import training_mix

    bad = set(tasks) - set(TASK_SETS)
    if bad or not tasks:
        raise ValueError(f"tasks must be a non-empty subset of {sorted(TASK_SETS)}; got {tasks}")
    frames, reports = [], []
    for task in tasks:
        name = TASK_SETS[task]
        if task == "paws" and leaked:
            df = D.load(name)
            rep = pd.DataFrame([{"source": name, "n_in": len(df), "removed_exact": 0, "removed_near": 0,
                                 "n_out": len(df), "note": "LEAKED: kept unfiltered for the comparison"}])
        else:
            df, rep = training_mix([name])
        if sample is not None and len(df) > sample:
            df = df.sample(n=sample, random_state=seed).sort_index()
        df = df.merge(released_signals(task), on="id", how="left", validate="one_to_one")
        df["task"] = task
        frames.append(df)
        reports.append(rep)
    pool = pd.concat(frames, ignore_index=True)
    if with_own:
        pool = add_own_signals(pool, progress=progress, cache_only=cache_only,
                               columns=OURS if with_own is True else tuple(with_own))
    return pool, pd.concat(reports, ignore_index=True)


def add_own_signals(pool: pd.DataFrame, progress: bool = False, batch_size: int | None = None,
                    cache_only: bool = False, columns=OURS) -> pd.DataFrame:
    """Add ``sig_nli`` and ``sig_summac_zs`` (score cache: only rows not cached yet are computed;
    ``cache_only=True`` computes nothing and leaves NaN where the cache has no score)."""
    from tfc import scorers
    from tfc.runs import scoring_runs as inhouse
    from tfc.cache import ScoreCache

    bad = set(columns) - set(OWN_SCORERS)
    if bad:
        raise ValueError(f"unknown own signal(s) {sorted(bad)}; known: {sorted(OWN_SCORERS)}")
    out = pool.copy()
    for col, (name, kw) in OWN_SCORERS.items():
        if col not in columns:
            continue
        scorer = scorers.get(name, preset="as-published", **kw)
        vals = pd.Series(np.nan, index=out.index)
        for ds, g in out.groupby("dataset", sort=False):
            cache = ScoreCache(scorer.signature, ds, "train")
            if cache_only:
                got = cache.read(check=True)
            else:
                inhouse.reuse_identical(scorer, cache, g)   # identical pairs scored elsewhere (TRUE-PAWS)
                got = cache.compute(scorer, g["id"].tolist(), g["grounding"].tolist(), g["generated"].tolist(),
                                    batch_size=batch_size, progress=progress)
            sc = got.drop_duplicates("id").set_index("id")["score"]
            vals.loc[g.index] = sc.reindex(g["id"]).to_numpy()
        if name == "summac-zs":
            vals = (vals + 1.0) / 2.0     # e - c in [-1, 1] -> [0, 1]
        out[col] = vals.clip(0.0, 1.0)
    return out


# --------------------------------------------------------------------------------------------------
# labels

def label_pool(pool: pd.DataFrame, signals=DEFAULT_SIGNALS, label_model: str = "generative",
               reading: str = "quantile", p_pos: float = 0.75, p_neg: float = 0.25) -> tuple[np.ndarray, dict]:
    """``p(y+)`` per row of the pool. Unification thresholds per task; one labelling model for all rows.
    Signals absent from the pool's columns, or NaN on every row, are dropped (and reported)."""
    from tfc.train import labelmodel as LM

    if label_model not in LM.LABEL_MODELS:
        raise ValueError(f"label_model must be one of {LM.LABEL_MODELS}; got {label_model!r}")
    used = [s for s in signals if s in pool.columns and pool[s].notna().any()]
    dropped = [s for s in signals if s not in used]
    if not used:
        raise ValueError(f"none of the signals {list(signals)} is available in the pool")
    S = pool[used].to_numpy(dtype=float)
    report = {"signals": used, "dropped_signals": dropped, "label_model": label_model, "reading": reading,
              "p_pos": p_pos, "p_neg": p_neg, "by_task": {}}
    if label_model == "average":
        return LM.average_signals(S), report
    L = np.full(S.shape, LM.ABSTAIN, dtype=np.int8)
    for task, idx in pool.groupby("task", sort=False).indices.items():
        sub = S[idx]
        have = ~np.isnan(sub).all(0)
        L_t = np.full(sub.shape, LM.ABSTAIN, dtype=np.int8)
        L_t[:, have] = LM.unify(sub[:, have], p_pos, p_neg, reading)
        L[idx] = L_t
        g_pos, g_neg = LM.thresholds(sub[:, have], p_pos, p_neg, reading)
        report["by_task"][task] = {"rows": int(len(idx)),
                                   "gamma_pos": dict(zip(np.array(used)[have].tolist(), np.round(g_pos, 4).tolist())),
                                   "gamma_neg": dict(zip(np.array(used)[have].tolist(), np.round(g_neg, 4).tolist()))}
    report["vote_share"] = {s: {"pos": round(float((L[:, j] == 1).mean()), 4), "neg": round(float((L[:, j] == 0).mean()), 4),
                                "abstain": round(float((L[:, j] == LM.ABSTAIN).mean()), 4)} for j, s in enumerate(used)}
    if label_model == "majority":
        return LM.majority_vote(L), report
    lm = LM.GenerativeLabelModel() if label_model == "generative" else LM.DawidSkeneLabelModel()
    lm.fit(L)
    report["accuracy"] = dict(zip(used, np.round(lm.accuracy_, 4).tolist()))
    report["iterations"] = lm.fit_info_.iterations
    report["converged"] = lm.fit_info_.converged
    return lm.predict_proba(L), report


__all__ = ["TASK_SETS", "DEFAULT_SIGNALS", "ALL_SIGNALS", "SIGNAL_DOC", "released_signals", "overlap_report",
           "weak_frame", "add_own_signals", "label_pool"]
