"""Q² Table 3's overlap baselines under whatever sacrebleu and spaCy this interpreter has.

The Q² authors' ``baselines.py`` (orhonovich/q-squared) pins sacrebleu 1.4.14 and spaCy 2.3.2; the
project runs sacrebleu 2.x and spaCy 3.x (scorers ``bleu-q2`` and ``f1-q2``). This script repeats the
authors' two calls with no project code, so it runs in a throw-away environment of the old versions:

    python -m venv /tmp/q2old && /tmp/q2old/bin/pip install sacrebleu==1.4.14 spacy==2.3.9 "numpy<2"
    /tmp/q2old/bin/python benchmarks/q2_baselines_versions.py ../shared/data/q2

(spaCy 2.3.2 has no wheel for current Pythons; 2.3.9 is the same line's last release.) Stop words and
punctuation are lexical attributes of spaCy's English defaults, so ``spacy.blank("en")`` gives the same
tokens as the authors' ``en_core_web_sm`` here. Prints the per-file means (BLEU × 100, F1 in [0, 1]).
"""
from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

import sacrebleu
import spacy

FILES = ("dodeca_inconsistent", "dodeca_consistent", "memnet_inconsistent", "memnet_consistent")


def main(folder: str) -> None:
    nlp = spacy.blank("en")

    def tokens(text):
        return [t.text.lower() for t in nlp(text) if not t.is_stop and not t.is_punct]

    def f1(gold, pred):        # the authors' f1_score, unchanged in substance
        g, p = tokens(gold), tokens(pred)
        same = sum((Counter(g) & Counter(p)).values())
        if same == 0:
            return 0.0
        prec, rec = same / len(p), same / len(g)
        return 2 * prec * rec / (prec + rec)

    print(f"sacrebleu {sacrebleu.__version__}, spaCy {spacy.__version__}")
    for name in FILES:
        with open(Path(folder) / f"{name}.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
        bleu = [sacrebleu.corpus_bleu([r["response"]], [[r["knowledge"].lower()]]).score for r in rows]
        over = [f1(r["knowledge"].lower(), r["response"]) for r in rows]
        print(f"{name:22s} n={len(rows)}  bleu={sum(bleu) / len(bleu):.3f}  overlap_f1={sum(over) / len(over):.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/q2")
