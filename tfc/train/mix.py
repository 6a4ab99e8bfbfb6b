"""The training mix: training-side sets of the data layer cast into AlignScore's three label spaces.

Sources (all ``role="train"`` in :mod:`tfc.data`; never an evaluation set):

===================  ===========  ==========================================================================
source               label space  casting
===================  ===========  ==========================================================================
vitaminc_test        3way         ``label3`` (real and synthetic parts kept as two sources)
anli_test            3way         ``label3``
sick2014             3way + reg   ``label3``; relatedness 1-5 scaled to [0, 1] by ``(r - 1) / 4``
fever_symmetric      3way         ``label3``
fever_adversarial    3way         ``label3``
fever_triggers       3way         ``label3``
msrp                 bin          ``label`` (1 = paraphrase = aligned)
begin_test           bin          ``label`` (1 = entailment, 0 = the rest)
synthetic/*          bin          :mod:`tfc.train.synthetic`, from the groundings of the filtered mix
===================  ===========  ==========================================================================

``wecheck_paws`` is never used: it is TRUE's PAWS evaluation set (7,999 of its 8,000 pairs).

Every source goes through :func:`tfc.data.training_mix` (the leakage filter against every evaluation
text, exact and near-duplicate); the synthetic pairs, made from the already-filtered groundings, go
through it once more. BEGIN test is thereby deduplicated against TRUE's BEGIN.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from tfc.models.multihead import LABEL2ID
from tfc.train.frames import frame_sha256, mix_table

THREE_WAY = ("vitaminc_test", "anli_test", "sick2014", "fever_symmetric", "fever_adversarial", "fever_triggers")
BINARY = ("msrp", "begin_test")
REGRESSION = ("sick2014",)
FORBIDDEN = {"wecheck_paws": "it is TRUE's PAWS evaluation set (7,999 of its 8,000 pairs)"}
SPLIT_AS_SOURCE = {"vitaminc_test"}  # real / synthetic parts reported as separate sources
RELATEDNESS_RANGE = (1.0, 5.0)


def refuse_forbidden(sources) -> None:
    """Raise ``ValueError`` for a source (``"name"`` or ``"name:split"``; frames pass) that :data:`FORBIDDEN` names."""
    for n in sources:
        if isinstance(n, str) and n.split(":")[0] in FORBIDDEN:
            raise ValueError(f"{n} must not be trained on: {FORBIDDEN[n.split(':')[0]]}")


def cap_rows(df: pd.DataFrame, cap: int | None, seed: int) -> pd.DataFrame:
    """At most ``cap`` rows (a seeded sample kept in its original order; None keeps all), index reset."""
    if cap is not None and len(df) > cap:
        df = df.sample(n=cap, random_state=seed).sort_index()
    return df.reset_index(drop=True)


def _source_names(df: pd.DataFrame) -> pd.Series:
    ds = df["dataset"].astype(str)
    if "split" in df:
        split_src = ds + "_" + df["split"].astype(str)
        return split_src.where(ds.isin(SPLIT_AS_SOURCE), ds)
    return ds


def cast_3way(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with a ``label3`` in {entailment, neutral, contradiction} -> 3way training rows."""
    if "label3" not in df:
        raise ValueError(f"3-way casting needs a label3 column; {sorted(set(df.get('dataset', ['?'])))} has none")
    lab = df["label3"].astype(str).str.lower().map(LABEL2ID)
    if lab.isna().any():
        bad = sorted(set(df.loc[lab.isna(), "label3"].astype(str)))[:5]
        raise ValueError(f"{int(lab.isna().sum())} rows have a label3 outside {list(LABEL2ID)}: {bad}")
    return pd.DataFrame({"text_a": df["grounding"].values, "text_b": df["generated"].values, "task": "3way",
                         "label": lab.astype(int).values, "source": _source_names(df).values})


def cast_binary(df: pd.DataFrame) -> pd.DataFrame:
    """``label`` in {0, 1} (1 = aligned) -> bin training rows. Unlabelled rows (-1) are an error."""
    lab = pd.to_numeric(df["label"], errors="coerce")
    if not lab.isin([0, 1]).all():
        bad = sorted(set(df.loc[~lab.isin([0, 1]), "label"]))[:5]
        raise ValueError(f"binary casting needs labels in {{0, 1}}; found {bad}")
    return pd.DataFrame({"text_a": df["grounding"].values, "text_b": df["generated"].values, "task": "bin",
                         "label": lab.astype(int).values, "source": _source_names(df).values})


def cast_regression(df: pd.DataFrame, column: str = "relatedness", lo: float = RELATEDNESS_RANGE[0],
                    hi: float = RELATEDNESS_RANGE[1]) -> pd.DataFrame:
    """A score column in [lo, hi] -> reg rows with ``label = (score - lo) / (hi - lo)`` in [0, 1]."""
    if column not in df:
        raise ValueError(f"regression casting needs a {column!r} column")
    v = pd.to_numeric(df[column], errors="coerce")
    if v.isna().any() or (v < lo).any() or (v > hi).any():
        raise ValueError(f"{column} must be numeric within [{lo}, {hi}]; found {v.min()}..{v.max()}, "
                         f"{int(v.isna().sum())} missing")
    return pd.DataFrame({"text_a": df["grounding"].values, "text_b": df["generated"].values, "task": "reg",
                         "label": ((v - lo) / (hi - lo)).values, "source": (_source_names(df) + "_relatedness").values})


def drop_empty(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Remove pairs with a blank premise or hypothesis (e.g. 2 FEVER-adversarial rows have no evidence);
    returns the kept rows and ``{source: rows removed}`` for the report."""
    blank = ~(frame["text_a"].map(lambda t: isinstance(t, str) and bool(t.strip()))
              & frame["text_b"].map(lambda t: isinstance(t, str) and bool(t.strip())))
    counts = {str(k): int(v) for k, v in frame.loc[blank, "source"].value_counts().sort_index().items()}
    return frame.loc[~blank].reset_index(drop=True), counts


def _filter_sources(spaces: dict, training_mix, eval_sets, sample, seed) -> tuple[dict, list[dict]]:
    """Run the leakage filter once per distinct source of ``spaces`` (sick2014 feeds two label spaces):
    ``{source name: kept rows}`` and the filter's report rows."""
    distinct = []
    for names in spaces.values():
        for n in names:
            if not any(n is d or (isinstance(n, str) and n == d) for d in distinct):
                distinct.append(n)
    filtered, leak_rows = {}, []
    for n in distinct:
        kept, rep = training_mix([n], eval_sets=eval_sets, sample=sample, seed=seed)
        key = n if isinstance(n, str) else str(n["dataset"].iloc[0])
        filtered[key] = kept
        leak_rows += rep.to_dict("records")
    return filtered, leak_rows


def build_mix(kind: str = "alignscore", seed: int = 0, synthetic: int | None = 10000, sample: int | None = None,
              eval_sets: list[str] | None = None, sources: dict | None = None, training_mix=None,
              progress: bool = False) -> tuple[pd.DataFrame, dict]:
    """Build the leakage-filtered training frame and its report.

    ``kind``: ``"alignscore"`` (3way + bin + reg + synthetic) or ``"nli"`` (3way sources only).
    ``synthetic``: how many groundings (seeded sample of the filtered mix's unique groundings) to make
    synthetic pairs from (about two pairs each); 0/None for none. ``sample``: rows per source (smoke
    runs). ``sources``: override ``{"3way": [...], "bin": [...], "reg": [...]}`` with data-layer names or
    frames in the data layer's schema. ``training_mix``: the filter function (default
    :func:`tfc.data.training_mix`).

    The report: ``leakage`` (per source: rows in, removed exact / near, rows out), ``removed_total``,
    ``rows`` (per source and label space, with hashes), ``dropped_empty_text`` (pairs with a blank side,
    per source), ``synthetic`` (rows per transformation), and ``sha256`` of the whole frame.
    """
    if kind not in ("alignscore", "nli"):
        raise ValueError(f"kind must be 'alignscore' or 'nli'; got {kind!r}")
    if training_mix is None:
        from tfc.data import training_mix
    spaces = sources or ({"3way": THREE_WAY, "bin": BINARY, "reg": REGRESSION} if kind == "alignscore"
                         else {"3way": THREE_WAY})
    if kind == "nli" and set(spaces) - {"3way"}:
        raise ValueError("the NLI warm-up model trains on 3-way sources only")
    refuse_forbidden(n for names in spaces.values() for n in names)

    filtered, leak_rows = _filter_sources(spaces, training_mix, eval_sets, sample, seed)

    parts = []
    for space, names in spaces.items():
        cast = {"3way": cast_3way, "bin": cast_binary, "reg": cast_regression}[space]
        for n in names:
            key = n if isinstance(n, str) else str(n["dataset"].iloc[0])
            df = filtered[key]
            if len(df):
                parts.append(cast(df))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["text_a", "text_b", "task", "label", "source"])
    frame, dropped_empty = drop_empty(frame)

    syn_report = {}
    if kind == "alignscore" and synthetic:
        from tfc.train.synthetic import make_pairs

        texts = pd.Series(pd.unique(pd.concat([filtered[k]["grounding"] for k in filtered], ignore_index=True)))
        if len(texts) > synthetic:
            texts = texts.sample(n=synthetic, random_state=seed).sort_index()
        syn = make_pairs(texts.tolist(), seed=seed)
        as_data = pd.DataFrame({"grounding": syn["text_a"], "generated": syn["text_b"], "dataset": "synthetic",
                                "row": range(len(syn))})
        kept, rep = training_mix([as_data], eval_sets=eval_sets)
        leak_rows += rep.to_dict("records")
        syn = syn.iloc[kept["row"].to_numpy()] if len(kept) else syn.iloc[:0]
        syn_report = {"groundings_used": int(len(texts)), "rows_by_kind": syn["kind"].value_counts().sort_index().to_dict()}
        frame = pd.concat([frame, syn[["text_a", "text_b", "task", "label", "source"]]], ignore_index=True)

    leak = pd.DataFrame(leak_rows)
    report = {
        "kind": kind, "seed": seed, "sample_per_source": sample,
        "leakage": leak.to_dict("records"),
        "removed_total": int(leak[["removed_exact", "removed_near"]].to_numpy().sum()) if len(leak) else 0,
        "rows": mix_table(frame).to_dict("records") if len(frame) else [],
        "rows_by_task": frame["task"].value_counts().sort_index().to_dict() if len(frame) else {},
        "dropped_empty_text": dropped_empty,
        "synthetic": syn_report,
        "sha256": frame_sha256(frame) if len(frame) else None,
    }
    return frame, report


def save_mix(frame: pd.DataFrame, report: dict, path) -> "Path":
    """Write a built mix as parquet (``text_a, text_b, task, label, source``) + ``<path>.json`` (the report).

    For training elsewhere (e.g. on a GPU machine that cannot see the data mirror). The file holds the
    mirror's text: keep it under the git-ignored artifacts directory, never in git.
    """
    import json
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.loc[:, ["text_a", "text_b", "task", "label", "source"]].to_parquet(path, index=False)
    Path(str(path) + ".json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    return path


def load_mix(path) -> tuple[pd.DataFrame, dict]:
    """Read a mix written by :func:`save_mix`; checks the frame's sha256 against the report."""
    import json
    from pathlib import Path

    path = Path(path)
    frame = pd.read_parquet(path)
    side = Path(str(path) + ".json")
    report = json.loads(side.read_text()) if side.is_file() else {}
    want = report.get("sha256")
    if want and frame_sha256(frame) != want:
        raise ValueError(f"{path}: content sha256 does not match its report ({want[:12]}...)")
    return frame, report


# --------------------------------------------------------------------------------------------------
# the sentence-level alignment mix of the in-house models: human-labelled sentence pairs, word-order
# contrast, leave-one-sentence-out passages and teacher distillation, every part leakage-filtered

SENTENCE_3WAY = ("vitaminc_test:real", "snli_devtest", "cad_snli", "breaking_nli", "anli_dev", "anli_test", "taxinli",
                 "conjnli", "mnli_hard", "sick2014", "med", "fever_symmetric", "fever_adversarial", "fever_triggers")
SENTENCE_BIN = ("msrp", "rte_glue")
SENTENCE_REG = ("sick2014",)
TEACHER_SOURCE = "wecheck_dialogue"
BREAKING_NLI_CONTRADICTION_CAP = 2000   # the set is 87 % contradiction; keep the label balance of the mix sane


def _norm_pair(a: str, b: str) -> str:
    import re

    return re.sub(r"\W+", " ", f"{a} || {b}".lower()).strip()


def dedupe_pairs(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Drop repeated (text_a, text_b) pairs within a label space (case and punctuation ignored); the first
    occurrence (source order of the mix) is kept. Returns the frame and ``{source: rows removed}``."""
    key = frame["task"].astype(str) + "##" + [_norm_pair(a, b) for a, b in zip(frame["text_a"], frame["text_b"])]
    dup = key.duplicated(keep="first")
    counts = {str(k): int(v) for k, v in frame.loc[dup, "source"].value_counts().sort_index().items()}
    return frame.loc[~dup].reset_index(drop=True), counts


def teacher_rows(df: pd.DataFrame, cap: int | None, seed: int) -> pd.DataFrame:
    """WeCheck dialogue beams with the ANLI teacher's P(entail) as a soft target (``task="soft"``).

    ``df``: the leakage-filtered ``wecheck_dialogue`` rows (one per beam; ``meta["anli_score"]``). Beams are
    deduplicated per article (case/punctuation-insensitive); rows without a score in [0, 1] are dropped.
    """
    score = pd.to_numeric(df["meta"].map(lambda m: (m or {}).get("anli_score")), errors="coerce")
    ok = score.between(0, 1)
    out = pd.DataFrame({"text_a": df["grounding"].values, "text_b": df["generated"].values, "task": "soft",
                        "label": score.values, "source": "teacher/wecheck_dialogue_anli"})[ok.values]
    out, _ = dedupe_pairs(out.reset_index(drop=True))
    return cap_rows(out, cap, seed)


def _contrast_sentences(filtered: dict, n: int, seed: int) -> list[str]:
    """Single training-side sentences (Wikipedia evidence, ANLI contexts split into sentences, MSRP)."""
    from tfc.text.sentences import split_many

    pool = []
    for key in ("vitaminc_test:real", "fever_symmetric", "fever_adversarial", "msrp"):
        if key in filtered:
            pool += filtered[key]["grounding"].tolist() + (filtered[key]["generated"].tolist() if key == "msrp" else [])
    anli = pd.concat([filtered[k]["grounding"] for k in ("anli_dev", "anli_test") if k in filtered] or [pd.Series([], dtype=str)])
    for sents in split_many(pd.unique(anli).tolist(), "rule"):
        pool += sents
    pool = pd.Series(pd.unique(pd.Series(pool, dtype=str)))
    pool = pool[pool.str.split().str.len().between(6, 45)]
    if len(pool) > n:
        pool = pool.sample(n=n, random_state=seed)
    return pool.sort_index().tolist()


def filter_generated(syn: pd.DataFrame, eval_sets: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Generated pairs (``text_a``, ``text_b``) through the leakage filter: a pair goes when either side
    matches an evaluation text exactly or nearly. Returns the kept rows and the filter's report."""
    from tfc.data import training_mix

    as_data = pd.DataFrame({"grounding": syn["text_a"].values, "generated": syn["text_b"].values,
                            "dataset": "generated", "row": range(len(syn))})
    kept, rep = training_mix([as_data], eval_sets=eval_sets)
    return (syn.iloc[kept["row"].to_numpy()] if len(kept) else syn.iloc[:0]), rep


# Versions of the sentence mix. v1 trained tfc/sent-minilm (2100 steps). v2 adds the contrast generators'
# ``copy`` and ``drop_pp`` positives (tfc.train.contrast): the v1 model called identical sentences a
# contradiction, which inverted its scores on extractive summaries.
# v3 is an ablation of the data's structure: the human-labelled 3-way sentence pairs alone, the six sources of
# the human-labelled 3-way core (VitaminC real, SNLI, TaxiNLI, MNLI-hard, SICK, ANLI), with no generated
# pairs, no binary / regression rows and no teacher rows.
HUMAN_SIX = ("vitaminc_test:real", "snli_devtest", "taxinli", "mnli_hard", "sick2014", "anli_dev", "anli_test")
SENTENCE_MIX_VERSIONS = {
    1: {"copies": False, "compress": False},
    2: {"copies": True, "compress": True},
    3: {"three_way": HUMAN_SIX, "binary": (), "regression": (), "generated": False, "teacher": False},
    # v4: v3 plus word-order contrast only (no leave-one-out passages): the v2 rules with copies and compressions,
    # and PAWS's own edits (modifier and noun swaps as negatives, reordered lists as positives)
    4: {"three_way": HUMAN_SIX, "binary": (), "regression": (), "generated": True, "loo": False, "teacher": False,
        "copies": True, "compress": True, "paws": True},
    # v5: the "new data" lever alone: every human-labelled 3-way sentence source (v3's six plus CAD-SNLI's minimal
    # edits, Breaking NLI, ConjNLI, MED and the FEVER stress sets), still nothing generated and no teacher
    5: {"three_way": SENTENCE_3WAY, "binary": (), "regression": (), "generated": False, "teacher": False},
}


def _version_spec(version: int) -> dict:
    """The full recipe of a mix version (defaults: every source, the generators, the teacher)."""
    if version not in SENTENCE_MIX_VERSIONS:
        raise ValueError(f"sentence mix version must be one of {sorted(SENTENCE_MIX_VERSIONS)}; got {version!r}")
    spec = {"three_way": SENTENCE_3WAY, "binary": SENTENCE_BIN, "regression": SENTENCE_REG, "generated": True,
            "teacher": True, "copies": False, "compress": False, "paws": False, "loo": True}
    return spec | SENTENCE_MIX_VERSIONS[version]


def build_sentence_mix(seed: int = 0, contrast_sentences: int = 16000, teacher_cap: int | None = 12000,
                       sample: int | None = None, eval_sets: list[str] | None = None, progress: bool = False,
                       version: int = 1):
    """The alignment mix of the in-house sentence models; returns ``(frame, report)``.

    Parts: human-labelled sentence pairs (3-way: :data:`SENTENCE_3WAY`; binary: MSRP, RTE; regression: SICK
    relatedness), word-order contrast and leave-one-sentence-out passages (:mod:`tfc.train.contrast`, from
    training-side text only), and the WeCheck ANLI teacher's scores on the dialogue rows as soft targets.
    Everything goes through :func:`tfc.data.training_mix` (generated pairs a second time), then one
    cross-source deduplication. ``sample`` (rows per source) is for smoke runs.
    """
    from tfc.data import training_mix
    from tfc.train import contrast as C

    spec = _version_spec(version)
    three, binary, reg = tuple(spec["three_way"]), tuple(spec["binary"]), tuple(spec["regression"])
    names = list(dict.fromkeys(three + binary + reg + ((TEACHER_SOURCE,) if spec["teacher"] else ())))
    filtered, leak_rows = {}, []
    for n in names:
        kept, rep = training_mix([n], eval_sets=eval_sets, sample=sample, seed=seed)
        filtered[n] = kept
        leak_rows += rep.to_dict("records")
    parts = [cast_3way(filtered[n]) for n in three if len(filtered[n])]
    parts += [cast_binary(filtered[n]) for n in binary if len(filtered[n])]
    parts += [cast_regression(filtered[n]) for n in reg if len(filtered[n])]
    human = pd.concat(parts, ignore_index=True)
    bnli = human["source"].eq("breaking_nli") & human["label"].eq(LABEL2ID["contradiction"]) & human["task"].eq("3way")
    if int(bnli.sum()) > BREAKING_NLI_CONTRADICTION_CAP:
        drop = human[bnli].sample(n=int(bnli.sum()) - BREAKING_NLI_CONTRADICTION_CAP, random_state=seed).index
        human = human.drop(index=drop).reset_index(drop=True)

    cols = ["text_a", "text_b", "task", "label", "source"]
    sents, passages, con, loo = [], [], pd.DataFrame(columns=cols + ["rule"]), pd.DataFrame(columns=cols + ["rule"])
    syn = pd.DataFrame(columns=cols)
    if spec["generated"]:
        sents = _contrast_sentences(filtered, contrast_sentences, seed)
        con = C.contrast_pairs(sents, seed=seed, copies=spec["copies"], compress=spec["compress"], paws=spec["paws"])
        if spec["loo"]:
            passages = pd.unique(pd.concat([filtered[k]["grounding"] for k in ("anli_dev", "anli_test")])).tolist()
            loo = C.loo_pairs(passages, seed=seed)
        syn, rep = filter_generated(pd.concat([con, loo], ignore_index=True), eval_sets)
        leak_rows += rep.to_dict("records")
    teach = teacher_rows(filtered[TEACHER_SOURCE], teacher_cap, seed) if spec["teacher"] else pd.DataFrame(columns=cols)

    frame = pd.concat([x for x in (human, syn[cols], teach) if len(x)], ignore_index=True)
    frame, dropped_empty = drop_empty(frame)
    frame, dup = dedupe_pairs(frame)
    synthetic_share = float(frame["source"].str.startswith(("contrast/", "loo/")).mean())
    leak = pd.DataFrame(leak_rows)
    report = {
        "kind": "sentence", "version": version, "generators": SENTENCE_MIX_VERSIONS[version],
        "sources": {"3way": list(three), "bin": list(binary), "reg": list(reg),
                    "generated": bool(spec["generated"]), "teacher": bool(spec["teacher"])}, "seed": seed,
        "sample_per_source": sample,
        "leakage": leak.to_dict("records"),
        "removed_total": int(leak[["removed_exact", "removed_near"]].to_numpy().sum()) if len(leak) else 0,
        "source_drops": "conjnli rows 27, 290; anli_dev r1 241, 713, r2 978, r3 887 (mirror README)",
        "breaking_nli_contradiction_cap": BREAKING_NLI_CONTRADICTION_CAP,
        "duplicates_removed": dup, "dropped_empty_text": dropped_empty,
        "generated": {"contrast_sentences": len(sents), "contrast_rows_by_rule": con["rule"].value_counts().sort_index().to_dict(),
                      "loo_passages": len(passages), "loo_rows_by_kind": loo["rule"].value_counts().sort_index().to_dict()},
        "teacher": {"source": TEACHER_SOURCE, "score": "anli_score (DeBERTa-v3-large NLI teacher, one per beam)",
                    "rows": int(len(teach)), "cap": teacher_cap},
        "synthetic_share": round(synthetic_share, 4),
        "rows": mix_table(frame).to_dict("records"),
        "rows_by_task": frame["task"].value_counts().sort_index().to_dict(),
        "sha256": frame_sha256(frame),
    }
    return frame, report


def qafacteval_check(task: str = "dialogue", offsets=(-1, 0, 1)) -> dict:
    """Is WeCheck's ``qafacteval_score`` usable? (Recorded in the data card of the sentence mix.)

    Two tests per file: (1) does the list have one value per beam (as ``anli_score`` and ``summac_score``
    do)? (2) Pearson r between a row's mean ANLI score and the mean ``qafacteval_score`` of the row at each
    offset (0 = same row, +1 = the next row): an aligned column should correlate best at offset 0 and
    clearly; a shifted one at +-1. The verdict is ``"corrupt"`` unless (1) holds for every row; the
    project then uses the column nowhere.
    """
    import json

    from tfc.data.manifest import raw_path

    n_files = {"paws": 8, "dialogue": 4}[task]
    rows = []
    for k in range(n_files):
        with open(raw_path(f"wecheck_train/{task}/qafacteval_score_{k}.json"), encoding="utf-8") as fh:
            rows += [json.loads(line) for line in fh if line.strip()]
    if not rows:
        raise ValueError(f"wecheck_train/{task}: no rows")
    n_beams = np.array([len(r["beams"]) if isinstance(r["beams"], list) else 1 for r in rows])
    n_q = np.array([len(r.get("qafacteval_score") or []) for r in rows])
    anli = np.array([float(np.mean(r["anli_score"])) for r in rows])
    qa = np.array([float(np.mean(r["qafacteval_score"])) if r.get("qafacteval_score") else np.nan for r in rows])
    corr = {}
    for off in offsets:
        x, y = (anli[off:], qa[:len(qa) - off]) if off >= 0 else (anli[:off], qa[-off:])
        ok = ~np.isnan(y)
        corr[str(off)] = round(float(np.corrcoef(x[ok], y[ok])[0, 1]), 4) if ok.sum() > 2 else None
    per_beam = float(np.mean(n_q == n_beams))
    return {"task": task, "rows": len(rows), "share_rows_one_value_per_beam": round(per_beam, 4),
            "values_per_row_mode": int(pd.Series(n_q).mode().iloc[0]), "beams_per_row_mode": int(pd.Series(n_beams).mode().iloc[0]),
            "pearson_mean_anli_vs_mean_qafacteval_by_offset": corr,
            "verdict": "usable" if per_beam == 1.0 else "corrupt",
            "use": "not used anywhere in tfc" if per_beam < 1.0 else "may be used per beam"}
