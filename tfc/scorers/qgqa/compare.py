"""Answer comparison of the QG-QA scorers: the SQuAD answer match (:func:`squad_f1`, :func:`squad_em` with the
official normalisation) and Q²'s NLI comparison of two answers (:class:`NLIComparer`)."""
from __future__ import annotations

from collections import Counter

from tfc.scorers.lexical import squad_text


def normalize_answer(s: str) -> str:
    """SQuAD normalisation: lower-case, drop punctuation, drop articles, collapse white space
    (:func:`tfc.scorers.lexical.squad_text`, the token F1 scorer's rule joined)."""
    return squad_text(s)


def squad_em(a: str, b: str) -> float:
    """Exact match after :func:`normalize_answer` (1.0 or 0.0)."""
    return float(normalize_answer(a) == normalize_answer(b))


def squad_f1(gold: str, pred: str) -> float:
    """SQuAD token F1. If either side normalises to no tokens (e.g. "no answer"), 1.0 when both do, else 0."""
    g, p = normalize_answer(gold).split(), normalize_answer(pred).split()
    if not g or not p:
        return float(g == p)
    common = sum((Counter(g) & Counter(p)).values())
    if common == 0:
        return 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec)


def q2_clean_text(text: str) -> str:
    """Q²'s ``clean_text`` (pipeline/score.py), step for step: lower-case, drop ASCII punctuation, drop the words
    a, an, the, in and our, collapse runs of spaces (only spaces: tabs and newlines stay)."""
    import re
    import string

    text = text.lower().translate(str.maketrans("", "", string.punctuation))
    text = re.sub(r"\b(a|an|the|in|our)\b", " ", text)
    return re.sub(" +", " ", text).strip()


def q2_f1(gold: str, pred: str) -> float:
    """Q²'s ``f1_score`` (pipeline/score.py), step for step: 0 for an empty prediction, token F1 over
    :func:`q2_clean_text` tokens, 0 when no token is shared (so also when either side cleans to nothing)."""
    if pred == "":
        return 0.0
    g, p = q2_clean_text(gold).split(), q2_clean_text(pred).split()
    common = sum((Counter(g) & Counter(p)).values())
    if common == 0:
        return 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec)


class NLIComparer:
    """Q²'s answer comparison by NLI: premise = question + knowledge answer, hypothesis = question +
    response answer; returns the predicted label per pair (``entailment``/``neutral``/``contradiction``
    by arg-max over the checkpoint's labels)."""

    def __init__(self, checkpoint: str = "tfc/nli-minilm", label_names=None, device: str | None = None,
                 batch_size: int = 32):
        self.checkpoint, self.label_names, self.device, self.batch_size = checkpoint, label_names, device, batch_size
        self._engine = None

    def identity(self) -> str:
        from tfc import models

        return models.identity(self.checkpoint)

    def labels(self, premises: list[str], hypotheses: list[str]) -> list[str]:
        if not premises:
            return []
        if self._engine is None:
            from tfc.scorers import get

            scorer = get("nli", preset="as-published", checkpoint=self.checkpoint, label_names=self.label_names,
                         device=self.device)
            self._engine = scorer.load().engine
        p = self._engine.probs(list(zip(premises, hypotheses)), self.batch_size)
        return [self._engine.labels[int(i)] for i in p.argmax(axis=1)]
