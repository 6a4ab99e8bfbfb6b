"""The published conversion rules, re-implemented as small pure functions on raw records.

Each function takes records as they appear in the raw files and returns plain Python values, so the
unit tests can feed hand-made rows. The builders in :mod:`tfc.data.builders` apply them to the mirror
and cross-check the result against TRUE's own CSVs.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence


# --------------------------------------------------------------------------- QAGS
def qags_sentence_consistent(responses: Sequence[str]) -> int:
    """A summary sentence is consistent when a strict majority of the workers answered "yes"."""
    if not responses:
        raise ValueError("QAGS sentence without worker responses")
    yes = sum(1 for r in responses if str(r).strip().lower() == "yes")
    return int(yes > len(responses) / 2)


def qags_summary_label(sentences: Sequence[Sequence[str]]) -> int:
    """TRUE's binary QAGS label: 1 only when every sentence is consistent by majority vote."""
    if not sentences:
        raise ValueError("QAGS summary without sentences")
    return int(all(qags_sentence_consistent(s) for s in sentences))


def qags_summary_score(sentences: Sequence[Sequence[str]]) -> float:
    """QAGS' continuous human score: the mean over sentences of the majority-vote sentence label."""
    if not sentences:
        raise ValueError("QAGS summary without sentences")
    return sum(qags_sentence_consistent(s) for s in sentences) / len(sentences)


# --------------------------------------------------------------------------- Q2
def q2_label(model_label) -> int:
    """Q² annotates *inconsistency* (``<model>_label`` 1 = inconsistent); TRUE's label is ``1 - x``."""
    v = int(model_label)
    if v not in (0, 1):
        raise ValueError(f"Q2 label must be 0 or 1, got {model_label!r}")
    return 1 - v


# --------------------------------------------------------------------------- BEGIN
def begin_label(gold_label: str) -> int:
    """BEGIN: only the "entailment" gold label counts as consistent (generic, hallucination, off-topic,
    contradiction are all inconsistent)."""
    if not isinstance(gold_label, str) or not gold_label.strip():
        raise ValueError(f"BEGIN gold label missing: {gold_label!r}")
    return int(gold_label.strip() == "entailment")


# --------------------------------------------------------------------------- MNBM / XSumFaith
def _is_null(x) -> bool:
    return x is None or (isinstance(x, float) and x != x) or str(x).strip() in ("", "NULL", "nan", "NaN")


def mnbm_label(rows: Iterable[tuple[str, object]], n_workers: int = 3) -> int:
    """TRUE's MNBM rule for one (bbcid, system) pair.

    ``rows`` are ``(worker_id, hallucination_type)`` annotation rows. Every worker starts with a
    "consistent" vote; a worker who marked any intrinsic or extrinsic span votes 0. The label is the
    rounded mean of the ``n_workers`` votes (i.e. the majority).
    """
    votes: dict[str, int] = {}
    for wid, htype in rows:
        votes.setdefault(str(wid), 1)
        if not _is_null(htype):
            votes[str(wid)] = 0
    if len(votes) > n_workers:
        raise ValueError(f"MNBM pair has {len(votes)} workers, expected at most {n_workers}")
    vals = list(votes.values()) + [1] * (n_workers - len(votes))
    # round half away from zero, as the mean of 3 votes is never exactly 0.5 this is the majority
    return int(sum(vals) / n_workers >= 0.5)


def xsumfaith_label(hallucination_types: Sequence[object]) -> int:
    """SummaC's XSumFaith rule: the most common value of ``hallucination_type`` over the pair's
    annotation rows; consistent when that value is NULL. Ties go to the value seen first (as
    ``collections.Counter.most_common`` does)."""
    if not hallucination_types:
        raise ValueError("XSumFaith pair without annotation rows")
    vals = ["NULL" if _is_null(h) else str(h) for h in hallucination_types]
    return int(Counter(vals).most_common(1)[0][0] == "NULL")


def alternate_cut(i: int) -> str:
    """SummaC's split rule for XSumFaith, Polytope and SummEval: even positions val, odd test."""
    return "val" if i % 2 == 0 else "test"


# --------------------------------------------------------------------------- SummEval (SummaC)
def summeval_summac_label_from_mean(mean: float, n_experts: int = 3) -> tuple[int, bool]:
    """SummaC's SummEval label (more than half of the experts gave consistency 5) from the *mean* only.

    Returns ``(label, exact)``. With three experts on a 1..5 scale the label is determined when the
    mean is >= 14/3 (at least two 5s) or < 11/3 (at most one 5 is possible: 5+5+x >= 11). For means
    in [11/3, 14/3) (i.e. 3.667, 4.0, 4.333) both labels are possible; we return 0 and ``exact=False``.
    """
    if not 1 <= mean <= 5:
        raise ValueError(f"SummEval mean consistency must lie in [1, 5], got {mean}")
    total = round(mean * n_experts)
    if total >= 14:
        return 1, True
    if total < 11:
        return 0, True
    return 0, False


# --------------------------------------------------------------------------- Polytope (SummaC)
def polytope_label(errors: Sequence[str]) -> int:
    """SummaC's "overall" Polytope label: consistent when no error at all is logged for the ID."""
    return int(len([e for e in errors if not _is_null(e)]) == 0)


POLYTOPE_FACTUAL_ERRORS = ("Inaccuracy_internal", "Inaccuracy_external", "Positive_Negative_Aspect")


def polytope_alignscore_label(errors: Sequence[str]) -> int:
    """AlignScore's Polytope relabelling (its App. B.1): only intrinsic/extrinsic inaccuracy and
    positive-negative-aspect errors make a summary inconsistent; omission, addition, duplication and
    word-form errors do not."""
    return int(not any(str(e) in POLYTOPE_FACTUAL_ERRORS for e in errors))


# --------------------------------------------------------------------------- NLI label spaces
NLI3 = ("entailment", "neutral", "contradiction")
_FEVER_MAP = {"SUPPORTS": "entailment", "REFUTES": "contradiction", "NOT ENOUGH INFO": "neutral",
              "ENTAILMENT": "entailment", "NEUTRAL": "neutral", "CONTRADICTION": "contradiction",
              "E": "entailment", "N": "neutral", "C": "contradiction"}  # ANLI's analysis files use one letter


def nli3(label: str) -> str:
    """Map FEVER/VitaminC (SUPPORTS/REFUTES/NOT ENOUGH INFO) and SICK labels to entailment/neutral/
    contradiction."""
    key = str(label).strip().upper()
    if key not in _FEVER_MAP:
        raise ValueError(f"unknown 3-way label {label!r}")
    return _FEVER_MAP[key]
