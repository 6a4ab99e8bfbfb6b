"""Dataset statistics for the data chapter: TRUE Tables 2, 6, 7, 8 and Q² Table 9, plus ``tfc data list``.

Every function returns a long frame ``row, column, value`` ready for
:func:`tfc.book.reference.paper_vs_ours`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

import tfc.data as D
import tfc.results.dataset as RD
import tfc.scorers as S
from tfc.book import reference
from tfc.data.cards import dataset_summary  # noqa: F401  (the data chapter's first table)
from tfc.scorers.lexical import F1_READINGS, token_prf
from tfc.text.words import length_stats, n_words  # noqa: F401


def true_t2(names: list[str] | None = None) -> pd.DataFrame:
    """Counts and % consistent of the TRUE sets (label-only sets from their label vectors)."""
    out = []
    for n in names or D.TRUE_ALL:
        lab = D.load(n)["label"] if D.status(n) == "text" else D.labels(n)["label"]
        out += [{"row": n, "column": "n_examples", "value": len(lab)},
                {"row": n, "column": "pct_consistent", "value": 100 * float(lab.mean())}]
    return pd.DataFrame(out)


def true_lengths(field: str, names: list[str] | None = None, method: str = "whitespace",
                 sample: int | None = None, seed: int = 0) -> pd.DataFrame:
    """TRUE Table 6 (``field='grounding'``) or Table 7 (``field='generated'``) in long form."""
    if field not in ("grounding", "generated"):
        raise ValueError("field must be 'grounding' or 'generated'")
    out = []
    for n in names or D.TRUE_TEXT:
        df = D.load(n, sample=sample, seed=seed)
        for k, v in length_stats(df[field], method).items():
            out.append({"row": n, "column": k, "value": v})
    return pd.DataFrame(out)


T8_ROUGE_L = "rougeL-coco"


def _overlap_scores(groundings, generations) -> tuple[np.ndarray, np.ndarray, dict]:
    """ROUGE-L and token F1 of each generated text against its grounding (grounding = reference).

    Uses the project's lexical scorers: ``rougeL-coco`` (:data:`T8_ROUGE_L`, the COCO caption evaluation's
    ROUGE-L, which TRUE's Table 8 matches; its Table 9 AUCs match ``rougeL-squad`` instead, see
    :func:`rouge_l_by_tokens`) and ``f1``. Returns the two score arrays and the signature of each metric.
    """
    import warnings

    from tfc.scorers import get

    with warnings.catch_warnings():  # tqdm warns about missing ipywidgets when imported in a notebook
        warnings.simplefilter("ignore")
        rs, fs = get(T8_ROUGE_L, preset="as-published"), get("f1", preset="as-published")
        r = rs.score(list(groundings), list(generations), progress=False)
        f = fs.score(list(groundings), list(generations), progress=False)
    return np.asarray(r, float), np.asarray(f, float), {"rouge_l": rs.signature, "f1": fs.signature}


def true_overlap(names: list[str] | None = None, sample: int | None = None, seed: int = 0) -> pd.DataFrame:
    """TRUE Table 8: mean ROUGE-L and token F1 of consistent (pos) vs inconsistent (neg) targets.

    ``diff`` is pos − neg, signed (TRUE prints it unsigned).
    """
    out = []
    for n in names or D.TRUE_TEXT:
        df = D.load(n, sample=sample, seed=seed)
        r, f, sig = _overlap_scores(df["grounding"], df["generated"])
        pos = (df["label"] == 1).to_numpy()
        for metric, v in (("rouge_l", r), ("f1", f)):
            p, q = float(v[pos].mean()), float(v[~pos].mean())
            out += [{"row": n, "column": f"pos_{metric}", "value": p, "signature": sig[metric]},
                    {"row": n, "column": f"neg_{metric}", "value": q, "signature": sig[metric]},
                    {"row": n, "column": f"diff_{metric}", "value": p - q, "signature": sig[metric]}]
    return pd.DataFrame(out)


def _q2_paper_rows(systems, dataset: str = "q2_paper") -> pd.DataFrame:
    """The rows of the dialogue ``systems`` (``dodeca``, ``memnet``) in ``dataset``: the Q² paper's released
    annotation files (``q2_paper``) or the cross-annotated set TRUE's Q² set is (``q2``)."""
    df = D.load(dataset)
    return df[df["meta"].map(lambda m: m["model"]).isin(systems)]


def q2_response_lengths(method: str = "whitespace", systems=("dodeca",), dataset: str = "q2_paper") -> pd.DataFrame:
    """Q² Table 9: average characters and tokens of consistent / inconsistent responses.

    Computed on the Q² paper's annotated files of ``systems`` (the text reads the table as dodeca
    outputs), or with ``dataset="q2"`` on every response of those systems in the cross-annotated set; the
    "random" row has no data offline.
    """
    df = _q2_paper_rows(systems, dataset)
    out = []
    for lab, row in ((0, "inconsistent"), (1, "consistent")):
        g = df.loc[df["label"] == lab, "generated"]
        out += [{"row": row, "column": "avg_chars", "value": float(g.str.len().mean())},
                {"row": row, "column": "avg_tokens", "value": float(np.mean([n_words(t, method) for t in g]))}]
    return pd.DataFrame(out)


def q2_class_counts(dataset: str = "q2_paper", systems=("dodeca",)) -> str:
    """How many inconsistent and consistent responses of ``systems`` ``dataset`` holds, as text for the
    chapter: "186 inconsistent and 358 consistent"."""
    labels = _q2_paper_rows(systems, dataset)["label"]
    return f"{int((labels == 0).sum())} inconsistent and {int((labels == 1).sum())} consistent"


def q2_t9_implied_sums(systems=("dodeca",), printed: float = 0.01) -> pd.DataFrame:
    """Q² Table 9 read backwards: a mean printed to ``printed`` over n responses pins the total to a few
    integers, so per cell the totals the paper's value allows beside ours, and the difference. Characters
    are ``len(text)`` and tokens are counted both on white space and as the Q² authors' length script does
    (``baselines.py``'s ``length_baseline``: the number of spaCy tokens). When the tokens agree under both
    counts and the characters differ too, no tokenizer explains the gap: the rows differ."""
    import math

    from tfc.scorers.lexical import _q2_nlp

    df = _q2_paper_rows(systems)
    nlp = _q2_nlp()
    out = []
    for lab, row in ((0, "inconsistent"), (1, "consistent")):
        g = df.loc[df["label"] == lab, "generated"].tolist()
        n = len(g)
        counts = {"avg_chars": sum(len(t) for t in g), "avg_tokens": sum(n_words(t) for t in g)}
        spacy_tokens = sum(len(doc) for doc in nlp.pipe(g, batch_size=256))
        for col, ours in counts.items():
            paper = reference.value("Q2-T9", row, col)
            lo, hi = math.ceil((paper - printed / 2) * n - 1e-9), math.floor((paper + printed / 2) * n + 1e-9)
            if lo > hi:      # no total of n integers has this printed mean: say so rather than guess
                allowed, diff = "none", "n/a"
            elif lo == hi:
                allowed, diff = f"{lo}", f"{lo - ours:+d}"
            else:
                allowed, diff = f"{lo} to {hi}", f"{lo - ours:+d} to {hi - ours:+d}"
            out.append({"row": row, "column": col, "n": n, "ours total": ours,
                        "spaCy tokens total": spacy_tokens if col == "avg_tokens" else np.nan,
                        "paper total (from its mean)": allowed, "difference (paper − ours)": diff})
    return pd.DataFrame(out)


# TRUE does not say how its Table 8 token F1 normalises; the readings we test live beside the scorer's own
# normalisation (tfc.scorers.lexical.F1_READINGS), so the TRUE scorers chapter reads the same ones
F1_NORMALISATIONS = F1_READINGS


def f1_normalisation_variants(names: list[str] | None = None, sample: int | None = None, seed: int = 0,
                              tolerance: float = 0.005) -> pd.DataFrame:
    """TRUE Table 8's mean token F1 of consistent (``pos``) and inconsistent (``neg``) targets under each of
    :data:`F1_NORMALISATIONS`: ``dataset, cell, normalisation, ours, paper, delta, within`` (``within``:
    |Δ| ≤ ``tolerance``, the table's printed precision)."""
    variants = {label: (lambda n, d, norm=norm: [token_prf(g, h, norm)[2]
                                                 for g, h in zip(d["grounding"], d["generated"])])
                for label, norm in F1_NORMALISATIONS.items()}
    return _t8_variant_means(names or D.TRUE_TEXT, variants, "f1", "normalisation", tolerance, sample, seed)


def _t8_variant_means(names, variants: dict, metric: str, kind: str, tolerance: float,
                      sample: int | None, seed: int) -> pd.DataFrame:
    """TRUE Table 8's pos / neg mean of ``metric`` per set under each variant (``variants``: label ->
    ``f(name, frame)`` giving one score per row of the loaded set), beside the paper's:
    ``dataset, cell, <kind>, ours, paper, delta, within`` (|Δ| ≤ ``tolerance``)."""
    from tfc.book.ledger import TOLERANCE_EPS

    pub = reference.load("TRUE-T8").set_index(["row", "column"])["value"]
    rows = []
    for n in names:
        d = D.load(n, sample=sample, seed=seed)
        pos = (d["label"] == 1).to_numpy()
        for label, score in variants.items():
            v = np.asarray(score(n, d), float)
            for cls, m in (("pos", pos), ("neg", ~pos)):
                cell = f"{cls}_{metric}"
                rows.append({"dataset": n, "cell": cell, kind: label, "ours": float(v[m].mean()),
                             "paper": float(pub.get((n, cell), float("nan")))})
    out = pd.DataFrame(rows)
    out["delta"] = out["ours"] - out["paper"]
    out["within"] = out["delta"].abs() <= tolerance + TOLERANCE_EPS
    return out


def wide(joined: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """paper/ours/delta per (row, column) joined frame -> one row per dataset, ``<col> paper|ours|delta``."""
    t = joined.pivot(index="row", columns="column", values=["paper", "ours", "delta"])
    t.columns = [f"{c} {stat}" for stat, c in t.columns]
    order = [f"{c} {s}" for c in columns for s in ("paper", "ours", "delta")]
    t = t[[c for c in order if c in t.columns]]
    if "signature" in joined:
        sigs = joined.groupby("row")["signature"].agg(lambda x: " + ".join(sorted(set(map(str, x)))))
        t["signature"] = sigs.reindex(t.index)
    return t


def tokenizer_comparison(names: list[str] | None = None, sample: int | None = None, seed: int = 0) -> pd.DataFrame:
    """TRUE Tables 6 and 7 beside ours (:func:`tfc.book.reference.paper_vs_ours`, one decimal), once per
    tokenizer of :mod:`tfc.text.words` (``whitespace``, ``regex``), stacked with a ``tokenizer`` column."""
    tok = []
    for method in ("whitespace", "regex"):
        for field, table in (("grounding", "TRUE-T6"), ("generated", "TRUE-T7")):
            j = reference.paper_vs_ours(true_lengths(field, names, method, sample, seed), table, decimals=1)
            tok.append(j.assign(tokenizer=method))
    return pd.concat(tok, ignore_index=True)


# What counts as a word in TRUE Table 6: readings of a white-space token list, tested where the counted rule
# misses (SummEval) and where it matches (QAGS-CNNDM, the other CNN/DM set) so that a reading fitted to one set
# shows what it does to the other
WORD_RULES = {"white-space words (counted)": lambda toks: toks,
              "tokens with a letter or digit": lambda toks: [w for w in toks if any(ch.isalnum() for ch in w)],
              "white-space words, a lone '.' not counted": lambda toks: [w for w in toks if w != "."]}


def word_count_rules(names=("summeval", "qags_cnndm"), field: str = "grounding") -> pd.DataFrame:
    """TRUE Table 6's four statistics per set under each reading of :data:`WORD_RULES`, with the paper's row:
    ``dataset, rule, min_len, max_len, median_len, avg_len, within`` (how many of the four cells lie within
    the ledger's Table 6 tolerance of the paper's value, Δ on unrounded values), plus ``lone_periods`` (the
    mean number of "." tokens per distinct text) on the paper's row."""
    from tfc.book import ledger

    tol = ledger.tolerance("TRUE-T6") + ledger.TOLERANCE_EPS
    cols = ["min_len", "max_len", "median_len", "avg_len"]
    rows = []
    for name in names:
        texts = D.load(name)[field]
        toks = texts.map(str.split)
        paper = {c: reference.value("TRUE-T6", name, c) for c in cols}
        for rule, keep in WORD_RULES.items():
            n = toks.map(lambda t, keep=keep: len(keep(t)))
            st = {"min_len": int(n.min()), "max_len": int(n.max()), "median_len": float(n.median()),
                  "avg_len": float(n.mean())}
            rows.append({"dataset": name, "rule": rule, **st,
                         "within": int(sum(abs(st[c] - paper[c]) <= tol for c in cols))})
        distinct = toks[~texts.duplicated()]
        rows.append({"dataset": name, "rule": "TRUE Table 6", **paper, "within": len(cols),
                     "lone_periods": float(distinct.map(lambda t: t.count(".")).mean())})
    return pd.DataFrame(rows)


ROUGE_L_TOKENS = {"rouge-score, F1 (its own tokens)": ("rougeL", {}),
                  "white-space cased, F1": ("rougeL", {"tokenizer": "whitespace-cased"}),
                  "COCO: space cased, F beta 1.2 (Table 8's)": (T8_ROUGE_L, {})}


def rouge_l_by_tokens(names: list[str], sample: int | None = None, seed: int = 0,
                      tolerance: float = 0.005) -> pd.DataFrame:
    """TRUE Table 8's mean ROUGE-L of the consistent (``pos``) and inconsistent (``neg``) rows per set,
    ours with each of :data:`ROUGE_L_TOKENS` beside the paper's: ``dataset, cell, tokens, ours, paper, delta,
    within`` (|Δ| ≤ ``tolerance``, the ledger's for the table).
    The three ROUGE-L codes separate the two differences: case-kept white-space tokens (as against
    rouge-score's lower-cased alphanumeric ones), then the recall-weighted F-measure of the COCO code."""
    variants = {label: (lambda n, d, name=name, kw=kw: RD.score_dataset(S.get(name, preset="as-published", **kw), n, sample=sample,
                                                                         seed=seed)["score"].to_numpy())
                for label, (name, kw) in ROUGE_L_TOKENS.items()}
    return _t8_variant_means(names, variants, "rouge_l", "tokens", tolerance, sample, seed)


def frank_joined_words(document: str) -> int:
    """White-space words of a line-broken XSum article as FRANK's text would count them: FRANK joins an
    article's lines with nothing between them ("... Kazuhiko Kosaka.And it goes ..."), so a line break is no
    word boundary there (checked on the validation articles by :func:`frank_full_set`)."""
    return len("".join(str(document).split("\n")).split())


def _frank_rule_check(xs: pd.DataFrame, per_article: pd.Series) -> dict:
    """The joining rule against FRANK's own text (``per_article``: words per article hash of TRUE's rows) on the
    validation XSum articles: how many it counts exactly, how many FRANK's text has four words more (the "Share
    this with ..." bar some pages kept), and the rest (an article that Maynez et al.'s file holds in another
    version)."""
    valid = xs[xs["split"] == "valid"].drop_duplicates("hash").set_index("hash")["words"]
    diff = per_article.reindex(valid.index) - valid
    if diff.isna().any():
        raise ValueError("FRANK: a validation XSum article of FRANK's annotations is not in TRUE's FRANK rows")
    return {"articles": len(diff), "equal": int((diff == 0).sum()), "prefix": int((diff == PREFIX_WORDS).sum()),
            "other": int((~diff.isin([0, PREFIX_WORDS])).sum())}


PREFIX_WORDS = 4   # "Share this withEmailFacebook...Copy this link" before some FRANK XSum articles


def _frank_rows() -> tuple[pd.DataFrame, pd.Series, pd.DataFrame]:
    """TRUE's FRANK rows, their article hash per row (FRANK's XSum hashes are digits, its CNN/DM ones are not),
    and FRANK's annotation rows of its CNN/DM test split (whose text is not offline)."""
    from tfc.data import builders as B

    ours, ann = D.load("frank"), B.frank_annotations()
    art_id = ours["meta"].map(lambda m: str(m.get("hash", "")))
    return ours, art_id, ann[(ann["dataset"] == "cnndm") & (ann["split"] == "test")]


def frank_full_set(n_boot: int = 10_000, seed: int = 0) -> dict:
    """Could TRUE's FRANK lengths (Tables 6 and 7) have been counted on FRANK's whole set, test split included?

    FRANK-test's text is not offline, but its XSum rows are: their summaries and articles are Maynez et al.'s
    (:func:`tfc.data.builders.frank_xsum_rows`), counted by :func:`frank_joined_words` and, to lean towards the
    hypothesis, with the four-word prefix added to every test article. Only the CNN/DM test rows stay
    unknown, so the question becomes what they would need for TRUE's mean and median. Returns ``table`` (one
    row per part of the full set: rows, articles, min/median/mean/max words), ``rule`` (the joining rule
    checked on the validation articles), ``need_mean`` and ``need_share`` (the CNN/DM test rows' mean length
    and share at or above TRUE's median that TRUE's mean and median would need), the validation CNN/DM
    articles' ``valid_mean`` and ``valid_share``, ``p_mean`` and ``p_share`` (the share of ``n_boot``
    resamples of the CNN/DM test articles from the validation ones that reach either), ``xsum_min_summary``
    (the shortest of all 996 XSum summaries) and ``xsum_test_below_min`` (XSum test articles shorter than
    TRUE's minimum before the prefix)."""
    from tfc.data import builders as B

    ours, ours_hash, cnn_test = _frank_rows()
    xs = B.frank_xsum_rows()
    xs["words"] = xs["document"].map(frank_joined_words)
    ours_words = ours["grounding"].str.split().str.len()
    paper = {c: reference.value("TRUE-T6", "frank", c) for c in ("min_len", "median_len", "avg_len")}
    is_x = ours_hash.str.isdigit()
    per_article = ours_words.groupby(ours_hash, sort=False).first()       # TRUE's rows' articles, in row order
    x_test = xs[xs["split"] == "test"]
    x_test_words = x_test["words"] + PREFIX_WORDS
    parts = {"validation, CNN/DM (TRUE's CSV)": (ours_words[~is_x], ours_hash[~is_x]),
             "validation, XSum (TRUE's CSV)": (ours_words[is_x], ours_hash[is_x]),
             "test, XSum (Maynez et al.'s text, + prefix)": (x_test_words, x_test["hash"]),
             "test, CNN/DM (not offline)": (pd.Series(dtype=float), cnn_test["hash"])}
    table = pd.DataFrame([{"part": k, "rows": len(h), "articles": h.nunique(), "min": w.min(), "median": w.median(),
                           "mean": w.mean(), "max": w.max()} for k, (w, h) in parts.items()]).set_index("part")
    known = pd.concat([ours_words, x_test_words])
    n_all, n_cnn = len(known) + len(cnn_test), len(cnn_test)
    need_mean = (paper["avg_len"] * n_all - known.sum()) / n_cnn
    need_share = (np.ceil(n_all / 2) - (known >= paper["median_len"]).sum()) / n_cnn
    # each CNN/DM article carries the same number of summaries (5), so an article resample is a row resample
    art = per_article[~per_article.index.str.isdigit()].to_numpy()
    draws = np.random.default_rng(seed).choice(art, size=(n_boot, cnn_test["hash"].nunique()))
    return {"table": table, "rule": _frank_rule_check(xs, per_article), "n_all": n_all,
            "need_mean": float(need_mean), "need_share": float(need_share),
            "valid_mean": float(art.mean()), "valid_share": float((art >= paper["median_len"]).mean()),
            "p_mean": float((draws.mean(axis=1) >= need_mean).mean()),
            "p_share": float(((draws >= paper["median_len"]).mean(axis=1) >= need_share).mean()), "n_boot": n_boot,
            "xsum_min_summary": int(xs["summary"].str.split().str.len().min()),
            "xsum_test_below_min": int((x_test.drop_duplicates("hash")["words"] < paper["min_len"]).sum())}


def frank_cnn_test_mix(n_boot: int = 10_000, seed: int = 0) -> dict:
    """A second mix of FRANK rows: the 671 validation rows (TRUE's CSV) plus only FRANK's CNN/DM test rows.

    Table 6 alone cannot rule it out: the CNN/DM test articles are not offline, but each test article can be
    drawn from the 75 validation CNN/DM articles (FRANK split one sample of articles), and each draw brings its
    five rows: the article's words and its five summaries' words (Table 7's side). Over ``n_boot`` draws of the
    CNN/DM test articles (as many as FRANK-test has), returns ``table``, indexed by statistic (Table 6 and Table 7
    mean and median), with columns ``TRUE`` (the printed value), ``validation rows`` (ours now), the 2.5%,
    50% and 97.5% points over the draws, and ``share within tolerance`` (draws within the ledger's tolerance of
    TRUE's value: 0.5 words for Tables 6 and 7), plus ``rows`` (671 + the test rows) and ``n_boot``."""
    from tfc.book import ledger

    ours, art_id, cnn_test = _frank_rows()
    cnn = ~art_id.str.isdigit()
    doc, summ = ours["grounding"].str.split().str.len(), ours["generated"].str.split().str.len()
    groups = [np.flatnonzero((art_id == a).to_numpy()) for a in art_id[cnn].unique()]
    n_test = cnn_test["hash"].nunique()
    picks = np.random.default_rng(seed).integers(len(groups), size=(n_boot, n_test))
    # every CNN/DM article carries its five summaries, so a draw's rows are its articles' rows
    rows = [np.concatenate([groups[i] for i in p]) for p in picks]
    stats = {}
    for table, field, values in (("TRUE-T6", "grounding", doc.to_numpy()), ("TRUE-T7", "generated", summ.to_numpy())):
        tol = ledger.tolerance(table) + ledger.TOLERANCE_EPS
        for col, fn in (("avg_len", np.mean), ("median_len", np.median)):
            drawn = np.array([fn(np.concatenate([values, values[r]])) for r in rows])
            paper = reference.value(table, "frank", col)
            lo, mid, hi = np.percentile(drawn, [2.5, 50, 97.5])
            stats[f"{table} {col} ({field})"] = {"TRUE": paper, "validation rows": float(fn(values)), "2.5%": lo,
                                                 "50%": mid, "97.5%": hi,
                                                 "share within tolerance": float((abs(drawn - paper) <= tol).mean())}
    return {"table": pd.DataFrame(stats).T, "rows": len(ours) + len(rows[0]), "n_boot": n_boot}


def draws_text(share: float, n_boot: int) -> str:
    """"in none of the 10,000 draws" / "in 12 of the 10,000 draws": a resampling share as a count."""
    k = int(round(share * n_boot))
    return f"in {'none' if k == 0 else f'{k:,}'} of the {n_boot:,} draws"
