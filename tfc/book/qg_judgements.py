"""Hand judgements of rule-generated questions, read by both QG-QA chapters: QAGS
(``notebooks/03_qags.md``) and Q² (``notebooks/04_q2.md``). :func:`sample_qg_questions` draws the questions
judged by hand, :func:`qg_judgements_path` finds the committed judgements and :func:`summarise_qg_judgements`
sums them up."""
from __future__ import annotations

import numpy as np
import pandas as pd

QG_SOURCES = ("vitaminc_test", "wecheck_dialogue")   # training-side mirrors, never evaluation sets
JUDGEMENT_COLUMNS = ["id", "source", "context", "candidate", "question", "well_formed", "answer_is_candidate",
                     "note"]


def sample_qg_questions(n: int = 200, seed: int = 0, rules: str = "v2", sources=QG_SOURCES,
                        max_context: int = 240) -> pd.DataFrame:
    """A seeded sample of rule-generated questions for hand judgement: ``n // len(sources)`` per source;
    per row of a source (visited in a seeded order), one answer candidate of its generated text drawn at
    random, and the question Q² would ask about it (the first question of :class:`RuleQG`). Rows without a
    candidate, or whose candidate gets no question, are passed over (counted in ``attrs["passed_over"]``).
    ``context`` is the generated text, cut at ``max_context`` characters."""
    from tfc import data
    from tfc.scorers.qgqa import RuleQG, answer_candidates, reading_text

    qg = RuleQG(num_return=1, rules=rules)
    per = n // len(sources)
    rows, passed = [], {}
    for src in sources:
        df = data.load(src)
        rng = np.random.default_rng([seed, len(src)])
        order = rng.permutation(len(df))
        got, skipped, pos = 0, 0, 0
        while got < per and pos < len(order):
            chunk = order[pos: pos + 4 * per]
            pos += len(chunk)
            texts = reading_text(df["generated"].iloc[chunk], rules)   # as the scorers read it
            ids = df["id"].iloc[chunk].tolist()
            for rid, text, cands in zip(ids, texts, answer_candidates(texts)):
                if got >= per:
                    break
                if not cands:
                    skipped += 1
                    continue
                cd = cands[int(rng.integers(len(cands)))]
                qs = qg.generate([text], [cd])[0]
                if not qs:
                    skipped += 1
                    continue
                ctx = text if len(text) <= max_context else text[:max_context].rsplit(" ", 1)[0] + " ..."
                rows.append({"id": rid, "source": src, "context": ctx, "candidate": cd.text, "question": qs[0][0]})
                got += 1
        passed[src] = skipped
    out = pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS[:5])
    out.attrs.update(rules=qg.version, seed=seed, passed_over=passed)
    return out


def summarise_qg_judgements(path) -> pd.DataFrame:
    """Shares of a judged question sample (a CSV with :data:`JUDGEMENT_COLUMNS`, 0/1 judgements): per source
    and overall, the number of questions, the share well-formed, the share whose answer is the candidate,
    and the share with both. The rule version is read from the file name (``rules-<version>.csv``)."""
    from pathlib import Path

    p = Path(path)
    df = pd.read_csv(p)
    missing = set(JUDGEMENT_COLUMNS) - set(df.columns)
    if missing:
        raise ValueError(f"{p} lacks columns {sorted(missing)}")
    for col in ("well_formed", "answer_is_candidate"):
        bad = ~df[col].isin([0, 1])
        if bad.any():
            raise ValueError(f"{p}: {col} must be 0 or 1; rows {df.index[bad].tolist()[:5]}")
    version = p.stem.split("rules-", 1)[1] if "rules-" in p.stem else ""
    rows = []
    for name, g in [*df.groupby("source", sort=True), ("all", df)]:
        rows.append({"source": name, "questions": len(g), "well_formed": g["well_formed"].mean(),
                     "answer_is_candidate": g["answer_is_candidate"].mean(),
                     "both": (g["well_formed"].astype(bool) & g["answer_is_candidate"].astype(bool)).mean(),
                     "rules": version})
    return pd.DataFrame(rows)


def qg_judgements_path(rules: str = "v2"):
    """The committed hand judgements of ``rules``' questions (``results/qg_judgements/rules-<v>.csv``)."""
    from tfc import config

    return config.model_records_dir().parent / "qg_judgements" / f"rules-{rules}.csv"
