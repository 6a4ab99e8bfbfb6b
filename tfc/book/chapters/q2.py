"""Tables, figures and numbers of the Q² chapter (``notebooks/04_q2.md``), computed from the score cache
(the loops live here, not in the notebook).

* :func:`q2_table2`, :func:`q2_table3` -- Q² Tables 2 and 3 on the ``q2_paper`` subsets (:func:`q2_t3_row_sets`:
  Table 3 on the released files and on the cross-annotated rows side by side).
* :func:`q2_table4` -- Q² Table 4: system-level Spearman correlation on simulated systems (bootstrap), from
  the cached Q² scores of TRUE's ``q2`` set (the cross-annotated contexts).
* :func:`q2_table6` -- Q² Table 6: turn-level correlation with USR's Topical-Chat "Uses Knowledge".
* :func:`q2_true_auc` -- Q² on TRUE sets (AUC on covered rows and 0-filled) with token F1 beside it and a
  paired bootstrap of the difference.
* :func:`score_robustness` -- Q² Figures 4 and 5 (score robustness on simulated systems).

The parts the QAGS chapter reads too (cached score rows, pipeline stage rates, the hand judgements of generated
questions) live in :mod:`tfc.book.qgqa_scoring` and :mod:`tfc.book.qg_judgements`.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, precision_recall_curve

from tfc.book import reference
from tfc.book.qg_judgements import qg_judgements_path, summarise_qg_judgements
from tfc.book.qgqa_scoring import DIALOGUE, cached, lexical_scores
from tfc.runs.qgqa import F1_FORM  # noqa: F401  (the NLI sweep's key for the F1 form; the chapter reads it as T.F1_FORM)

Q2_SUBSETS = ("dodeca_inconsistent", "dodeca_consistent", "memnet_inconsistent", "memnet_consistent")


def overlap_baselines(dataset: str) -> dict:
    """The two overlap baselines of Q² Tables 3, 4 and 6 on ``dataset`` (response vs knowledge): the Q² paper's
    token F1 (``overlap_f1_rk``: scorer ``f1-q2``, spaCy tokens without stop words and punctuation, as the authors'
    baseline script computes it) and the paper's BLEU × 100 (``bleu``: scorer ``bleu-q2``, the authors' sacrebleu
    call against the lower-cased knowledge), each as ``(scores, signature)`` in data order."""
    from tfc import scorers

    out = {}
    for column, sc, scale in (("overlap_f1_rk", scorers.get("f1-q2", preset="as-published"), 1.0), ("bleu", scorers.get("bleu-q2", preset="as-published"), 100.0)):
        out[column] = (scale * lexical_scores(sc, dataset)["score"].to_numpy(float), sc.signature)
    return out


def covered(got: pd.DataFrame) -> pd.Series:
    """Rows with at least one question (``aux_n_valid`` / ``aux_n_questions`` > 0) and a score. Under the
    ``no_questions`` policies "zero"/"nli" the other rows have a defined score too; under the legacy "nan"
    policy they are NaN. Either way they count as not covered."""
    ok = got["score"].notna()
    for col in ("aux_n_valid", "aux_n_questions"):
        if col in got:
            ok &= got[col].fillna(0) > 0
    return ok


def q2_table2(q2_scorer, dataset: str = "q2_paper") -> pd.DataFrame:
    """Per subset: valid questions, Q² (F1 only), Q² + NLI (means over responses with a valid question),
    % of valid questions without an answer on the knowledge, coverage. Long form (row = subset)."""
    got = cached(q2_scorer, dataset)
    rows = []
    for sp, g in got.groupby("split", sort=False):
        cov = covered(g)
        nv = g["aux_n_valid"].fillna(0).sum() if "aux_n_valid" in g else np.nan
        na = g["aux_n_no_answer"].fillna(0).sum() if "aux_n_no_answer" in g else np.nan
        vals = {"n_questions": nv, "q2_f1": g.loc[cov, "aux_f1_only"].mean() if "aux_f1_only" in g else np.nan,
                "q2_nli": g.loc[cov, "score"].mean(), "pct_no_answer": 100 * na / nv if nv else np.nan,
                "coverage": 100 * cov.mean(), "responses": len(g)}
        rows += [{"row": sp, "column": k, "value": float(v), "signature": q2_scorer.signature}
                 for k, v in vals.items()]
    return pd.DataFrame(rows)


def system_class(df: pd.DataFrame) -> np.ndarray:
    """Q² Table 3's row per response: ``"<system>_consistent"`` or ``"<system>_inconsistent"``, from the row's
    ``meta["model"]`` and its label (1 = consistent). On ``q2_paper`` it equals the file split."""
    model = df["meta"].map(lambda m: m["model"]).to_numpy(str)
    return np.char.add(model, np.where(df["label"].to_numpy() == 1, "_consistent", "_inconsistent"))


def q2_table3(dataset: str = "q2_paper") -> pd.DataFrame:
    """Overlap (token F1 of response vs knowledge) and BLEU (× 100) means per system and class (computed, cheap)
    on ``dataset``: the Q² paper's released files (``q2_paper``, 150 responses a row) or the cross-annotated set
    TRUE's Q² set is (``q2``: every response of both systems on 544 contexts)."""
    from tfc import data

    group = system_class(data.load(dataset))
    n = pd.Series(group).value_counts()
    rows = []
    for column, (scores, sig) in overlap_baselines(dataset).items():
        means = pd.Series(scores).groupby(group, sort=False).mean()
        rows += [{"row": sp, "column": column, "value": v, "n": int(n[sp]), "signature": sig}
                 for sp, v in means.items()]
    return pd.DataFrame(rows)


def q2_t3_row_sets() -> pd.DataFrame:
    """Q² Table 3 on the two row sets offline: the released files and the cross-annotated set. One row per
    published cell with a value on both: ``row, column, paper, files, cross, delta_files, delta_cross``,
    ``cross_closer`` (the cross-annotated rows are nearer the paper than the files) and the responses behind
    each mean, ``n_files`` and ``n_cross``. Tests the reading that the
    published cells came from other rows than the released files, against the one other candidate offline."""
    t3 = {name: q2_table3(ds) for name, ds in (("files", "q2_paper"), ("cross", "q2"))}
    j = {name: reference.paper_vs_ours(t, "Q2-T3", how="left", decimals=None)
         .dropna(subset=["paper", "ours"]).set_index(["row", "column"]) for name, t in t3.items()}
    out = j["files"][["paper"]].assign(files=j["files"]["ours"], cross=j["cross"]["ours"]).dropna()
    out = out.assign(delta_files=out["files"] - out["paper"], delta_cross=out["cross"] - out["paper"])
    out = out.assign(cross_closer=out["delta_cross"].abs() < out["delta_files"].abs()).reset_index()
    for name, t in t3.items():
        out[f"n_{name}"] = out["row"].map(t.groupby("row")["n"].first())
    return out


def q2_paper_rows_in_true(dataset: str = "q2_paper", true_set: str = "q2") -> dict:
    """Are the Q² paper's released annotation files the rows of the cross-annotated set TRUE derives its Q² set
    from? Counts the ``dataset`` rows, those whose (knowledge, response) pair is in ``true_set``, and those whose
    label there is the same: ``{"rows", "in_true", "same_label"}``."""
    from tfc import data

    p, q = data.load(dataset), data.load(true_set)
    m = p.merge(q[["grounding", "generated", "label"]].drop_duplicates(["grounding", "generated"]),
                on=["grounding", "generated"], how="left", suffixes=("", "_true"))
    return {"rows": int(len(p)), "in_true": int(m["label_true"].notna().sum()),
            "same_label": int((m["label"] == m["label_true"]).sum())}


def q2_wins(tr: pd.DataFrame) -> list[str]:
    """The dialogue sets of a :func:`q2_true_auc` frame where Q² + NLI (0-filled) beats token F1 with the
    bootstrap interval above 0."""
    if not len(tr):
        return []
    dial = tr[tr["dataset"].isin(DIALOGUE)]
    return dial[(dial["diff_vs_f1"] > 0) & (dial["ci_low"] > 0)]["dataset"].tolist()


def q2_wins_summary(tr: pd.DataFrame, target: int = 2) -> dict:
    """From a :func:`q2_true_auc` frame: ``wins``, the dialogue sets on which Q² (in the frame's form, 0-filled)
    beats token F1 with the bootstrap interval above 0 (:func:`q2_wins`), out of ``scored``, the dialogue sets
    scored in full; ``met`` says whether ``wins`` reaches ``target`` (the chapter's 2 of 3), and ``not_scored``
    lists the dialogue sets the frame lacks."""
    dial = set(tr["dataset"]) & set(DIALOGUE) if len(tr) else set()
    wins = len(q2_wins(tr))
    return {"wins": wins, "scored": len(dial), "target": target, "met": wins >= target,
            "not_scored": [d for d in DIALOGUE if d not in dial]}


def nine_set_signatures(scorers: dict, complete) -> dict:
    """``{label: signature}`` for the entries of ``scorers`` (``{label: scorer}``) whose cache covers every row of the
    nine TRUE sets with text (``complete``: those signatures, from :func:`tfc.book.chapters.true.complete_signatures`;
    passed in because one chapter module does not import another), and so appear in the TRUE AUC chapter's table
    of every committed signature."""
    done = set(complete)
    return {lab: sc.signature for lab, sc in scorers.items() if sc.signature in done}


Q2_TRUE_AUC_COLUMNS = ["dataset", "rows", "coverage", "true_q2", "q2_nli_covered", "q2_nli", "q2_f1", "token_f1",
                       "diff_vs_f1", "ci_low", "ci_high", "p_value", "form", "signature"]


def q2_true_auc(q2_scorer, datasets=DIALOGUE, n_boot: int = 1000, seed: int = 0, true_scorer=None,
                form: str = "nli") -> pd.DataFrame:
    """Per TRUE set with cached Q² scores: rows scored, coverage, AUC × 100 of Q² (covered rows and
    0-filled), of Q² without NLI (0-filled) and of token F1 on the same rows, and the paired bootstrap of
    Q² (0-filled) minus F1 (difference, 95% CI, p-value). Only sets whose every row is cached are shown
    (``attrs["partial"]`` names the sets a run has only begun, ``attrs["missing"]`` those with no cached row or
    a single label). With ``true_scorer`` (TRUE's variant, e.g.
    :func:`tfc.runs.qgqa.derive_true_variant`'s), its AUC on the same rows (``true_q2``; NaN unless it has
    every one of them). ``form="f1"`` bootstraps Q²'s F1 form (no NLI step, ``aux_f1_only``, 0-filled) against
    token F1 instead of Q² + NLI (``diff_vs_f1`` and its interval then describe that form)."""
    from tfc import scorers
    from tfc.meta import bootstrap_auc_diff, roc_auc

    if form not in ("nli", "f1"):
        raise ValueError(f"form must be 'nli' or 'f1'; got {form!r}")

    f1 = scorers.get("f1", preset="as-published")
    rows, partial, missing = [], [], []
    for ds in datasets:
        got = cached(q2_scorer, ds)
        n_all = len(got)
        got = got[got["score"].notna() | got.get("aux_n_candidates", pd.Series(np.nan, index=got.index)).notna()]
        if 0 < len(got) < n_all:
            partial.append(ds)     # a run still under way: no AUC on the rows it happened to reach first
            continue
        if len(got) == 0 or got["label"].nunique() < 2:
            missing.append(ds)
            continue
        lex = cached(f1, ds, cache_only=False).set_index("id").loc[got["id"], "score"].to_numpy()
        y = got["label"].to_numpy()
        s = got["score"].to_numpy(float)
        cov = covered(got).to_numpy()
        zero = np.where(cov, s, 0.0)
        f1only = np.where(cov, got["aux_f1_only"].to_numpy(float), 0.0) if "aux_f1_only" in got else zero
        bd = bootstrap_auc_diff(y, zero if form == "nli" else f1only, lex, n=n_boot, seed=seed)
        tv = np.nan
        if true_scorer is not None:
            tvs = cached(true_scorer, ds).set_index("id")["score"].reindex(got["id"]).to_numpy(float)
            tv = 100 * roc_auc(y, tvs) if not np.isnan(tvs).any() else np.nan
        rows.append({"dataset": ds, "rows": len(got), "coverage": 100 * cov.mean(), "true_q2": tv,
                     "q2_nli_covered": 100 * roc_auc(y[cov], s[cov]) if len(set(y[cov])) == 2 else np.nan,
                     "q2_nli": 100 * roc_auc(y, zero), "q2_f1": 100 * roc_auc(y, f1only),
                     "token_f1": 100 * roc_auc(y, lex), "diff_vs_f1": 100 * bd.diff,
                     "ci_low": 100 * bd.ci[0], "ci_high": 100 * bd.ci[1], "p_value": bd.p_value,
                     "form": form, "signature": q2_scorer.signature})
    out = pd.DataFrame(rows, columns=Q2_TRUE_AUC_COLUMNS)
    out.attrs["partial"] = partial
    out.attrs["missing"] = missing
    return out


def run_shift(frames: dict) -> pd.DataFrame:
    """Several :func:`q2_true_auc` frames made in one form (``{configuration: frame}``, in the order the choices
    were added) side by side: per dialogue set scored in all of them, the form's AUC × 100 with each configuration,
    and ``Δ <configuration>``, its change from the configuration before it. ValueError for frames in different
    forms."""
    forms = set().union(*(set(f.get("form", pd.Series(dtype=str))) for f in frames.values()))
    if len(forms) > 1:
        raise ValueError(f"the frames are in different forms {sorted(forms)}")
    col = "q2_f1" if forms == {"f1"} else "q2_nli"
    wide = pd.DataFrame({name: (f[f["dataset"].isin(DIALOGUE)].set_index("dataset")[col] if len(f) else
                                pd.Series(dtype=float)) for name, f in frames.items()}).dropna()
    names = list(frames)
    for prev, name in zip(names, names[1:]):
        wide[f"Δ {name}"] = wide[name] - wide[prev]
    return wide.rename_axis("dataset")


def speaker_candidate_share(frames: dict, word: str = "i") -> pd.DataFrame:
    """Per dev frame (name -> ``grounding, generated, label``) and label: the share of responses with an answer
    candidate (tfc's rule) equal to ``word`` in any case, the candidate the Q² authors' code drops."""
    from tfc.scorers.qgqa import answer_candidates

    rows = []
    for name, df in frames.items():
        has = np.array([any(c.text.lower() == word for c in cs) for cs in answer_candidates(df["generated"].tolist())])
        y = df["label"].astype(int).to_numpy()
        rows += [{"dev set": name, "label": "supported" if lab else "unsupported", "responses": int((y == lab).sum()),
                  f"share with the candidate '{word}'": float(has[y == lab].mean()) if (y == lab).any() else float("nan")}
                 for lab in (1, 0)]
    return pd.DataFrame(rows)


def outcome_table(rec: dict | None) -> pd.DataFrame:
    """:func:`tfc.runs.qgqa.question_outcomes`' record as a table: per class (consistent / inconsistent) and
    candidate kind, the used questions, their share of the class's questions (%) and the share (%) of each outcome."""
    from tfc.runs.qgqa import CANDIDATE_KINDS, OUTCOMES

    cols = ["class", "candidate", "questions", "% of the class's questions", *OUTCOMES]
    if not rec or not rec["counts"]:
        return pd.DataFrame(columns=cols)
    c = pd.DataFrame(rec["counts"])
    c["class"] = c["label"].map({1: "consistent", 0: "inconsistent"})
    w = c.pivot_table(index=["class", "kind"], columns="outcome", values="questions", aggfunc="sum", fill_value=0)
    w = w.reindex(columns=list(OUTCOMES), fill_value=0)
    n = w.sum(axis=1)
    out = (100 * w.div(n, axis=0)).round(1)
    out.insert(0, "% of the class's questions", (100 * n / n.groupby(level="class").transform("sum")).round(1))
    out.insert(0, "questions", n.astype(int))
    order = [(k, kind) for k in ("consistent", "inconsistent") for kind in CANDIDATE_KINDS if (k, kind) in out.index]
    return out.loc[order].rename_axis(["class", "candidate"]).reset_index()[cols]


Q2_T4_LEVELS = (0.05, 0.10, 0.15, 0.20, 0.25)   # inconsistent shares of the five simulated systems (paper §6)


def q2_t4_contexts(q2_scorer, dataset: str = "q2") -> pd.DataFrame:
    """The contexts Q² Table 4 uses: TRUE's ``q2`` set holds two responses per WoW context (dodeca, then
    memnet, row for row); a context qualifies when one response is consistent and the other is not (the
    paper counts 244) and both have at least one valid question under ``q2_scorer`` (the paper: 186).

    One row per qualifying context: ``good_*``/``bad_*`` hold the Q² F1 score (``aux_f1_only``), the
    overlap F1 and the BLEU × 100 of its consistent and its inconsistent response."""
    from tfc import data

    df = data.load(dataset)
    meta = pd.DataFrame(list(df["meta"]))
    ctx = meta["episode_idx"].astype(str) + "/" + meta["round"].astype(str)
    pairs = ctx.to_numpy().reshape(-1, 2)
    if len(df) % 2 or not (pairs[:, 0] == pairs[:, 1]).all() or not (
            meta["model"].to_numpy().reshape(-1, 2) == ["dodeca", "memnet"]).all():
        raise ValueError(f"{dataset}: rows are no longer (dodeca, memnet) pairs of one context")
    got = cached(q2_scorer, dataset).set_index("id").reindex(df["id"])
    if "aux_f1_only" not in got:
        raise ValueError(f"{q2_scorer.signature}: the cache of {dataset} has no aux_f1_only column")
    base = overlap_baselines(dataset)
    per = {"q2_f1": got["aux_f1_only"].to_numpy(float), **{m: v for m, (v, _) in base.items()}}
    lab = df["label"].to_numpy().reshape(-1, 2)
    valid = covered(got.reset_index()).to_numpy().reshape(-1, 2)
    mixed = lab[:, 0] != lab[:, 1]
    keep = mixed & valid.all(axis=1)
    good = np.where(lab[:, 0] == 1, 0, 1)       # column of the consistent response within the pair
    rows = np.flatnonzero(keep)
    out = pd.DataFrame({"context": pairs[rows, 0]})
    for name, v in per.items():
        v2 = v.reshape(-1, 2)
        out[f"good_{name}"] = v2[rows, good[rows]]
        out[f"bad_{name}"] = v2[rows, 1 - good[rows]]
    out.attrs.update(mixed=int(mixed.sum()), contexts=int(len(lab)),
                     signatures={"q2_f1": q2_scorer.signature, **{m: sig for m, (_, sig) in base.items()}})
    return out


def system_corr_bootstrap(pairs: dict, levels=Q2_T4_LEVELS, n_boot: int = 1000, n_draw: int = 350,
                          seed: int = 0) -> dict:
    """The simulation behind :func:`q2_table4`, on plain arrays: ``pairs`` maps a metric name to
    ``(good, bad)``, its scores of the consistent and the inconsistent response of each context (equal
    lengths). Returns, per metric, the ``n_boot`` Spearman correlations (0 where all system scores tie).
    Every metric sees the same draws."""
    from scipy.stats import spearmanr

    levels = np.asarray(levels, float)
    if len(levels) < 3 or ((levels <= 0) | (levels >= 1)).any():
        raise ValueError(f"levels must be at least 3 shares in (0, 1), got {levels.tolist()}")
    if n_boot < 1 or n_draw < 1:
        raise ValueError(f"n_boot and n_draw must be positive, got {n_boot}, {n_draw}")
    n = {len(np.asarray(a)) for g_b in pairs.values() for a in g_b}
    if len(n) != 1 or n == {0} or n == {1}:
        raise ValueError(f"every good/bad array must hold the same number (at least 2) of contexts, got {sorted(n)}")
    for m, (g, b) in pairs.items():
        if np.isnan(np.asarray(g, float)).any() or np.isnan(np.asarray(b, float)).any():
            raise ValueError(f"{m}: NaN scores; leave uncovered contexts out first")
    (n_ctx,) = n
    rng = np.random.default_rng(seed)
    n_bad = np.rint(levels * n_draw).astype(int)
    rho = {m: np.empty(n_boot) for m in pairs}
    for b in range(n_boot):
        pick = rng.integers(0, n_ctx, n_draw)
        bad_mask = np.zeros((len(levels), n_draw), bool)
        for i, k in enumerate(n_bad):
            bad_mask[i, rng.choice(n_draw, k, replace=False)] = True
        for m, (g, x) in pairs.items():
            sys_score = np.where(bad_mask, np.asarray(x, float)[pick], np.asarray(g, float)[pick]).mean(axis=1)
            if np.ptp(sys_score) == 0:
                rho[m][b] = 0.0      # all systems tie: no ranking (spearmanr would return NaN)
            else:
                rho[m][b] = spearmanr(sys_score, 1 - levels).statistic
    return rho


def q2_table4(q2_scorer, dataset: str = "q2", n_boot: int = 1000, n_draw: int = 350, levels=Q2_T4_LEVELS,
              seed: int = 0) -> pd.DataFrame:
    """Q² Table 4: system-level correlation on simulated systems.

    Each bootstrap repeat draws ``n_draw`` contexts with replacement from :func:`q2_t4_contexts`; simulated
    system *i* answers a random ``levels[i]`` share of them with the inconsistent response and the rest with
    the consistent one; its system score is the metric's mean over its responses. The repeat's value is the
    Spearman correlation between the five system scores and the systems' consistent shares (1 − level).
    Mean and 2.5/97.5 percentiles over ``n_boot`` repeats; every metric sees the same draws.

    The paper says "correlation" without naming it; its printed bounds (0.9, 1, 0.5, −0.8) are all
    multiples of 0.1, the only values a Spearman correlation of five points takes, so Spearman it is.
    Written by hand: the simulation is the paper's own procedure, not a library routine."""
    ctx = q2_t4_contexts(q2_scorer, dataset)
    metrics = ("q2_f1", "overlap_f1_rk", "bleu")
    rho = system_corr_bootstrap({m: (ctx[f"good_{m}"].to_numpy(), ctx[f"bad_{m}"].to_numpy()) for m in metrics},
                                levels=levels, n_boot=n_boot, n_draw=n_draw, seed=seed)
    sig = ctx.attrs["signatures"]
    rows = []
    for m in metrics:
        for stat, v in (("system_corr_mean", rho[m].mean()), ("system_corr_ci95_lower", np.percentile(rho[m], 2.5)),
                        ("system_corr_ci95_upper", np.percentile(rho[m], 97.5))):
            rows.append({"row": stat, "column": m, "value": float(v), "signature": sig[m],
                         "contexts": len(ctx), "mixed_contexts": ctx.attrs["mixed"]})
    return pd.DataFrame(rows)


def usr_correlations(human, score, covered=None) -> dict:
    """Spearman and Pearson of ``score`` with the human ratings: on the ``covered`` rows (a valid question;
    Q² Table 6's choice) and with uncovered rows set to 0 (the alternative the paper also reports).
    Without ``covered`` every row counts. Returns ``{(stat, variant): (r, p, n)}``."""
    from tfc.meta.correlation import correlation

    h, s = np.asarray(human, float), np.asarray(score, float)
    if len(h) != len(s):
        raise ValueError(f"human ratings and scores differ in length: {len(h)} vs {len(s)}")
    cov = np.ones(len(s), bool) if covered is None else np.asarray(covered, bool)
    if np.isnan(h).any() or np.isnan(s[cov]).any():
        raise ValueError("NaN in the human ratings or in a covered score")
    out = {}
    for variant, (x, y) in {"covered": (h[cov], s[cov]), "zero_filled": (h, np.where(cov, s, 0.0))}.items():
        for stat in ("spearman", "pearson"):
            r, p = correlation(x, y, stat)     # raises on fewer than 3 pairs or a constant side
            out[(stat, variant)] = (float(r), float(p), int(len(x)))
    return out


def q2_table6(q2_scorer, dataset: str = "topicalchat_usr") -> pd.DataFrame:
    """Q² Table 6: turn-level Spearman and Pearson with USR's Topical-Chat "Uses Knowledge" ratings
    (``topicalchat_usr``), Q² F1 (``aux_f1_only``) on the responses with a valid question and 0-filled, and
    our overlap F1 and BLEU beside it (not in the paper's table). Q² rows need its committed cache: none
    without one. Long form: row ``topicalchat_uses_knowledge_<stat>``, column, value, p_value, n, signature."""
    from tfc import data

    df = data.load(dataset)
    got = cached(q2_scorer, dataset)
    rows = []

    def add(column, res, variant, sig):
        for stat in ("spearman", "pearson"):
            r, p, n = res[(stat, variant)]
            rows.append({"row": f"topicalchat_uses_knowledge_{stat}", "column": column, "value": r, "p_value": p,
                         "n": n, "signature": sig})

    if got["score"].notna().all() and "aux_f1_only" in got:
        res = usr_correlations(df["human_score"], got["aux_f1_only"].fillna(0.0), covered(got))
        add("q2_f1", res, "covered", q2_scorer.signature)
        add("q2_f1_zero_filled", res, "zero_filled", q2_scorer.signature)
    for column, (scores, sig) in overlap_baselines(dataset).items():
        add(column, usr_correlations(df["human_score"], scores), "covered", sig)
    return pd.DataFrame(rows)



QG_JUDGED_DRAWS = {"rule version 2 (seed 0)": "v2", "rule version 3, the same draw (seed 0)": "v3",
                   "rule version 3, a fresh draw (seed 1)": "v3-seed1"}


def qg_judgement_table(draws: dict | None = None) -> pd.DataFrame:
    """The committed hand judgements of several rule versions and draws side by side: ``{label: file version}``
    (default :data:`QG_JUDGED_DRAWS`; files :func:`qg_judgements_path`), one :func:`summarise_qg_judgements` row per
    source and overall, labelled in a ``draw`` column."""
    parts = [summarise_qg_judgements(qg_judgements_path(v)).assign(draw=label)
             for label, v in (QG_JUDGED_DRAWS if draws is None else draws).items()]
    t = pd.concat(parts, ignore_index=True)
    return t[["draw", "source", "questions", "well_formed", "answer_is_candidate", "both"]]


# Q² Figures 4 and 5: the inconsistent shares of the simulated systems (paper §6.1, "Score Robustness")
Q2_F4_LEVELS = tuple(round(0.1 * i, 1) for i in range(11))
Q2_F5_LEVELS = (0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 1.0)


def score_robustness(metrics: dict, consistent, levels=Q2_F4_LEVELS, n_boot: int = 1000, n_draw: int = 400,
                     seed: int = 0) -> pd.DataFrame:
    """Q² Figures 4 and 5 ("score robustness"): the system-level score each metric gives a simulated system
    whose responses are inconsistent in a share *c* of cases, whatever the input.

    For each *c* of ``levels`` and each of ``n_boot`` repeats, round(*c* · ``n_draw``) responses are drawn
    with replacement from the inconsistent ones (``consistent`` false) and the rest from the consistent ones;
    the system score is the mean over the ``n_draw`` responses (the paper draws 400 from both systems' annotated
    responses and repeats 1000 times). Every metric sees the same draws. ``metrics`` maps a name to one score
    per response (no NaN: fill responses without a valid question first). Returns ``metric, level, mean,
    ci_low, ci_high`` (2.5 and 97.5 percentiles over the repeats). Written by hand: the paper's simulation,
    not a library routine."""
    ok = np.asarray(consistent, bool)
    levels = np.asarray(levels, float)
    if ok.all() or not ok.any():
        raise ValueError("score_robustness needs both consistent and inconsistent responses")
    if levels.size == 0 or ((levels < 0) | (levels > 1)).any():
        raise ValueError(f"levels must be shares in [0, 1], got {levels.tolist()}")
    if n_boot < 1 or n_draw < 1:
        raise ValueError(f"n_boot and n_draw must be positive, got {n_boot}, {n_draw}")
    scores = {}
    for name, v in metrics.items():
        v = np.asarray(v, float)
        if len(v) != len(ok) or np.isnan(v).any():
            raise ValueError(f"{name}: need {len(ok)} scores without NaN, got {len(v)} ({int(np.isnan(v).sum())} NaN)")
        scores[name] = (v[ok], v[~ok])
    good_n, bad_n = int(ok.sum()), int((~ok).sum())
    rng = np.random.default_rng(seed)
    rows = []
    for c in levels:
        k = int(np.rint(c * n_draw))
        pick_bad = rng.integers(0, bad_n, (n_boot, k))
        pick_good = rng.integers(0, good_n, (n_boot, n_draw - k))
        for name, (g, b) in scores.items():
            sys_score = (b[pick_bad].sum(axis=1) + g[pick_good].sum(axis=1)) / n_draw
            rows.append({"metric": name, "level": float(c), "mean": float(sys_score.mean()),
                         "ci_low": float(np.percentile(sys_score, 2.5)), "ci_high": float(np.percentile(sys_score, 97.5))})
    return pd.DataFrame(rows)


def robustness_figure(curves: dict):
    """One row of panels per :func:`score_robustness` frame (``{row title: frame}``), one panel per metric: the
    mean system score against the share of inconsistent responses, with its 95% band. Each metric keeps its own
    y scale (BLEU's is not F1's). Returns the figure."""
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(m for c in curves.values() for m in c["metric"]))
    fig, axes = plt.subplots(len(curves), len(metrics), figsize=(3.2 * len(metrics), 2.8 * len(curves)),
                             squeeze=False, sharey="col")
    for row, (title, curve) in zip(axes, curves.items()):
        for ax, m in zip(row, metrics):
            d = curve[curve["metric"] == m].sort_values("level")
            ax.fill_between(d["level"], d["ci_low"], d["ci_high"], alpha=0.3)
            ax.plot(d["level"], d["mean"], marker="o", ms=3)
            ax.set_title(f"{m} ({title})", fontsize=9)
            ax.set_xlabel("share of inconsistent responses")
    for row in axes:
        row[0].set_ylabel("system score")
    fig.tight_layout()
    return fig


def robustness_summary(curve: pd.DataFrame) -> pd.DataFrame:
    """Per metric of a :func:`score_robustness` frame: the mean system score with no and with only inconsistent
    responses (the lowest and highest level), their difference, the mean width of the 95% interval over the
    levels, and the ratio of the two (how many interval widths the full range of inconsistency moves a
    system's score: the paper's point that a wider interval can still separate better)."""
    rows = []
    for name, d in curve.groupby("metric", sort=False):
        d = d.sort_values("level")
        lo, hi = float(d["mean"].iloc[0]), float(d["mean"].iloc[-1])
        width = float((d["ci_high"] - d["ci_low"]).mean())
        rows.append({"metric": name, "score, fewest inconsistent": lo, "score, most inconsistent": hi,
                     "drop": lo - hi, "mean 95% interval width": width,
                     "drop / width": (lo - hi) / width if width > 0 else float("inf")})
    return pd.DataFrame(rows).set_index("metric")


def pr_curves(y, metrics: dict) -> tuple[pd.DataFrame, dict]:
    """Precision-recall curves (stacked, with a ``metric`` column) and the average precision of each
    ``{name: scores}`` at detecting ``y == 1``; every score is negated (a low score flags the positive)."""
    curves, ap = [], {}
    for name, s in metrics.items():
        p, r, _ = precision_recall_curve(y, -np.asarray(s))
        curves.append(pd.DataFrame({"metric": name, "precision": p, "recall": r}))
        ap[name] = average_precision_score(y, -np.asarray(s))
    return pd.concat(curves), ap


def sweep_labels(rec: dict | None, candidates: dict) -> dict:
    """``{name in the record: name in candidates}`` for each candidate of a sweep record whose options equal those of
    a candidate of ``candidates`` (e.g. :data:`tfc.runs.qgqa.CANDIDATE_CANDIDATES`), so that a table shows the
    candidates under their current names whatever they were recorded as."""
    if not rec or "options" not in rec:
        return {}
    key = {json.dumps(opts, sort_keys=True): name for name, opts in candidates.items()}
    return {name: key[json.dumps(opts, sort_keys=True)] for name, opts in rec["options"].items()
            if json.dumps(opts, sort_keys=True) in key}


def nli_sweep_table(rec: dict | None, what: str = "NLI step", labels: dict | None = None) -> pd.DataFrame:
    """A dev sweep's record (:func:`tfc.runs.qgqa.nli_step_sweep`'s, or :func:`~tfc.runs.qgqa.option_sweep`'s with
    ``what="options"``) as a table: one row per candidate (renamed by ``labels``, e.g. :func:`sweep_labels`), dev
    AUC × 100 per dev set and their mean, the current and the chosen candidate marked."""
    if not rec:
        return pd.DataFrame(columns=[what, "current", "chosen"])
    rows = [{what: (labels or {}).get(k, k), **v, "current": k == rec["current"], "chosen": k == rec["chosen"]}
            for k, v in rec["auc"].items()]
    return pd.DataFrame(rows)


def sweep_summary(rec: dict | None, labels: dict | None = None) -> dict:
    """A dev sweep's record in numbers: the ``current`` candidate and its mean dev AUC × 100 (``current_auc``), the
    ``best`` candidate and its (``best_auc``), the gain of the best over the current (``gain``, 0 when the current is
    the best), and the ``chosen`` candidate (the best only if its gain exceeds the record's ``margin``); candidates
    renamed by ``labels``. NaN and "n/a" without a record."""
    if not rec:
        return {"current": "n/a", "current_auc": np.nan, "best": "n/a", "best_auc": np.nan, "gain": np.nan,
                "chosen": "n/a"}
    auc, name = rec["auc"], (lambda k: (labels or {}).get(k, k))
    best = max(auc, key=lambda k: auc[k]["mean"])
    return {"current": name(rec["current"]), "current_auc": auc[rec["current"]]["mean"], "best": name(best),
            "best_auc": auc[best]["mean"], "gain": auc[best]["mean"] - auc[rec["current"]]["mean"],
            "chosen": name(rec["chosen"])}
