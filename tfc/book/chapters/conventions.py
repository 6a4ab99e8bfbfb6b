"""The "today's conventions" chapter (notebooks/11_conventions.md): one checker, three numbers.

TRUE reports ROC AUC; MiniCheck and the LLM-AggreFact leaderboard report balanced accuracy (BAcc) at a fixed
0.5; FactCG and AggreFact tune a threshold per dataset on a dev split and freeze it for test. This module computes
all of them, and the expected calibration error, for each checker the book scores, on every benchmark with both a
validation and a test split in the mirror (SummaC's XSumFaith, Polytope and SummEval), through the score cache and
:mod:`tfc.meta` (the code behind ``tfc evaluate``). It also reads the published leaderboard rows of the peers
(``peer_llm_aggrefact_leaderboard.csv`` in the reference folder), which are on data the mirror does not hold.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

# (label, registry name): each in its recommended default configuration
CHECKERS = (("ROUGE-L", "rougeL"), ("token F1", "f1"), ("BERTScore", "bertscore"), ("NLI", "nli"),
            ("SummaC-ZS", "summac-zs"), ("SummaC-Conv", "summac-conv"), ("AlignScore", "alignscore"),
            ("WeCheck", "wecheck"), ("QAGS", "qags"), ("Q²", "q2"), ("TRUE's ensemble", "ensemble"))
# the checkers whose default outputs a probability of consistency (a calibration map, or SummaC-Conv's sigmoid
# fitted with a cross-entropy): the ECE reads a score as one, so it is given for these only
PROBABILITIES = ("nli", "summac-zs", "summac-conv", "alignscore", "wecheck")
# the SummaC sets with text and both splits in the mirror, in SummaC's order; Polytope under SummaC's own label rule,
# not AlignScore's relabelling. Named here rather than read from split_sets() at build time: a set added to the
# registry would otherwise be scored live by a book build (an hour of CPU); a test holds the two together
DATASETS = ("summac_xsumfaith", "summac_polytope", "summac_summeval")
RELABELLINGS = {"summac_polytope_alignscore": "summac_polytope"}
DEV_SPLIT, TEST_SPLIT = "val", "test"
ROWS = 250               # per split, label-stratified (seed 0): the window readings cost ~35 pairs a row on CPU
SMOKE_ROWS = 60
PEER_FILE = "peer_llm_aggrefact_leaderboard.csv"
PEERS = ("AlignScore", "SummaC-ZS", "SummaC-CV", "MiniCheck-RoBERTa-L", "MiniCheck-DeBERTa-L",
         "MiniCheck-Flan-T5-L", "T5-NLI-Mixed")


def split_sets() -> tuple[str, ...]:
    """The SummaC sets whose text is in the mirror with a validation and a test split (relabellings left out)."""
    from tfc import data

    return tuple(n for n in data.names(group="SummaC", all=True) if n not in RELABELLINGS
                 and {DEV_SPLIT, TEST_SPLIT} <= set(data.info(n).splits) and data.info(n).status in ("text", "approximate"))


def sets_frame() -> pd.DataFrame:
    """Every SummaC set of the registry: its splits in the mirror, its status, and whether the table uses it."""
    from tfc import data

    rows = [{"dataset": n, "splits": "/".join(data.info(n).splits), "status": data.info(n).status,
             "used": n in DATASETS} for n in data.names(group="SummaC", include_unavailable=True, all=True)]
    return pd.DataFrame(rows, columns=["dataset", "splits", "status", "used"])


def _scores(scorer, dataset: str, split: str, smoke: bool) -> pd.DataFrame:
    from tfc.results.dataset import score_dataset

    sample, use_cache = (SMOKE_ROWS, False) if smoke else (ROWS, True)
    return score_dataset(scorer, dataset, split=split, sample=sample, use_cache=use_cache)


def measure(label: str, scorer, dataset: str, smoke: bool = False) -> dict:
    """One checker on one dataset: AUC, BAcc at 0.5, BAcc at the validation-tuned threshold, ECE (test rows)."""
    from tfc.meta import bacc_at_thresholds, dev_tuned_bacc, expected_calibration_error, roc_auc

    dev, test = _scores(scorer, dataset, DEV_SPLIT, smoke), _scores(scorer, dataset, TEST_SPLIT, smoke)
    y, s = test["label"].to_numpy(), test["score"].to_numpy(dtype=float)
    tuned = dev_tuned_bacc(dev["label"].to_numpy(), dev["score"].to_numpy(dtype=float), y, s)
    prob = scorer.name in PROBABILITIES
    return {"checker": label, "dataset": dataset, "signature": scorer.signature, "rows": int(len(y)), "consistent": int(y.sum()),
            "calibrated": bool(scorer.calibrated), "roc_auc": 100 * roc_auc(y, s),
            "bacc_0.5": 100 * float(bacc_at_thresholds(y, s, [0.5])[0]),
            "threshold_dev": tuned.threshold, "bacc_dev": 100 * tuned.bacc_test,
            "ece": float(expected_calibration_error(y, s)) if prob else np.nan}


def table(smoke: bool = False, device: str | None = None) -> pd.DataFrame:
    """Every checker of :data:`CHECKERS` on every dataset of :data:`DATASETS`, and the macro-average rows."""
    from tfc import scorers

    kw = {"device": device} if device else {}
    rows = [measure(label, scorers.get(name, **kw), ds, smoke) for label, name in CHECKERS for ds in DATASETS]
    out = pd.DataFrame(rows)
    if len(DATASETS) > 1:
        macro = out.groupby("checker", sort=False)[["roc_auc", "bacc_0.5", "bacc_dev", "ece"]].mean().reset_index()
        out = pd.concat([out, macro.assign(dataset="macro-average")], ignore_index=True)
    return out


SHOWN = {"checker": "checker", "dataset": "dataset", "rows": "test rows", "consistent": "consistent", "roc_auc": "ROC AUC", "bacc_0.5": "BAcc at 0.5", "threshold_dev": "threshold (validation)",
         "bacc_dev": "BAcc at that threshold", "ece": "ECE", "signature": "signature"}


def display_frame(t: pd.DataFrame) -> pd.DataFrame:
    """The table as the page shows it (text): points to one decimal, the threshold and the ECE to three, a dash
    where a number does not apply."""
    out = t.reindex(columns=list(SHOWN)).copy()
    for cols, fmt in ((("roc_auc", "bacc_0.5", "bacc_dev"), "{:.1f}"), (("threshold_dev", "ece"), "{:.3f}"),
                      (("rows", "consistent"), "{:.0f}")):
        for c in cols:
            out[c] = [fmt.format(v) if np.isfinite(v) else "—" for v in out[c].astype(float)]
    out["signature"] = out["signature"].fillna("—")
    return out.rename(columns=SHOWN)


def macro_frame(t: pd.DataFrame) -> pd.DataFrame:
    """The macro-average rows alone (one per checker), as the leaderboards print them, formatted as
    :func:`display_frame` without the per-dataset columns."""
    m = t[t["dataset"] == "macro-average"]
    return (display_frame(m).drop(columns=["dataset", "test rows", "consistent", "threshold (validation)", "signature"])
            .reset_index(drop=True))


def gaps(t: pd.DataFrame) -> pd.DataFrame:
    """Per checker and dataset: how far BAcc at 0.5 falls below BAcc at the validation-tuned threshold (points);
    the macro-average rows are left out."""
    t = t[t["dataset"] != "macro-average"]
    return t.assign(gap=t["bacc_dev"] - t["bacc_0.5"])[["checker", "dataset", "gap"]].reset_index(drop=True)


def threshold_curve(name: str = "nli", dataset: str = DATASETS[0], smoke: bool = False) -> pd.DataFrame:
    """BAcc on the validation and on the test rows at every threshold on a grid of 101 points over the scores'
    range: the figure that shows why the three numbers differ."""
    from tfc import scorers
    from tfc.meta import bacc_at_thresholds

    sc = scorers.get(name)
    parts = {split: _scores(sc, dataset, split, smoke) for split in (DEV_SPLIT, TEST_SPLIT)}
    lo, hi = sc.output_range
    grid = np.linspace(lo, hi, 101)
    return pd.concat([pd.DataFrame({"threshold": grid, "split": split,
                                    "bacc": 100 * bacc_at_thresholds(p["label"].to_numpy(),
                                                                     p["score"].to_numpy(dtype=float), grid)})
                      for split, p in parts.items()], ignore_index=True)


def peers() -> pd.DataFrame:
    """The published leaderboard rows of the peers (BAcc × 100 at 0.5): dataset × checker, with their mean."""
    from tfc import config

    raw = pd.read_csv(config.reference_dir() / PEER_FILE)
    wide = raw[raw["column"].isin(PEERS)].pivot_table(index="column", columns="row", values="value")
    wide["mean"] = wide.mean(axis=1)
    return wide.reindex([p for p in PEERS if p in wide.index]).round(1)
