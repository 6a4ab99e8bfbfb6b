"""Builders: raw mirror files -> DataFrames in the common schema.

Every builder reads its inputs through :func:`tfc.data.manifest.raw_path` (sha256-checked) and returns
``id, dataset, split, grounding, generated, label, meta`` (plus optional extra columns such as
``human_score`` or ``label3``). Builders that re-derive a TRUE set from raw files also check the result
against TRUE's CSV (:func:`crosscheck_true`).
"""
from __future__ import annotations

import io
import json
import warnings
import zipfile
from collections import OrderedDict

import pandas as pd

from tfc.data import rules
from tfc.data.errors import DataError
from tfc.data.manifest import raw_path

SCHEMA = ["id", "dataset", "split", "grounding", "generated", "label", "meta"]

# TRUE label-vector keys (true/true_label_vectors_from_scale_score.json) per dataset name
TRUE_VECTOR_KEY = {"frank": "frank_valid", "summeval": "summeval", "mnbm": "mnbm", "qags_cnndm": "qags_cnndm",
                   "qags_xsum": "qags_xsum", "begin": "begin_dev", "q2": "q2", "dialfact": "dialfact_valid",
                   "paws": "paws", "fever": "fever_dev", "vitaminc": "vitc_dev"}
MNBM_MISSING_BBCID = "12620805"


def frame(name: str, split: str, grounding, generated, label, meta=None, ids=None, **extra) -> pd.DataFrame:
    n = len(grounding)
    if ids is None:
        ids = [f"{name}/{split}/{i:06d}" for i in range(n)]
    df = pd.DataFrame({
        "id": list(ids), "dataset": name, "split": split,
        "grounding": [str(x) for x in grounding], "generated": [str(x) for x in generated],
        "label": pd.array(list(label), dtype="int64"),
        "meta": list(meta) if meta is not None else [{} for _ in range(n)],
    })
    for k, v in extra.items():
        df[k] = list(v)
    return df


def _read_csv(rel: str, **kw) -> pd.DataFrame:
    return pd.read_csv(raw_path(rel), **kw)


def _jsonl(rel: str) -> list[dict]:
    with open(raw_path(rel), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _zip_jsonl(rel: str, member: str) -> list[dict]:
    with zipfile.ZipFile(raw_path(rel)) as z:
        with z.open(member) as f:
            return [json.loads(line) for line in io.TextIOWrapper(f, encoding="utf-8") if line.strip()]


# --------------------------------------------------------------------------- TRUE label vectors
_VECTORS: dict | None = None


def true_label_vector(name: str) -> list[int]:
    global _VECTORS
    if _VECTORS is None:
        with open(raw_path("true/true_label_vectors_from_scale_score.json")) as f:
            _VECTORS = json.load(f)
    return [int(x) for x in _VECTORS[TRUE_VECTOR_KEY[name]]]


def check_true_labels(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """Raise :class:`DataError` unless ``df``'s labels equal TRUE's label vector at the same ids."""
    vec = true_labels(name).set_index("id")["label"]
    unknown = set(df["id"]) - set(vec.index)
    if unknown:
        raise DataError(f"{name}: {len(unknown)} ids are not TRUE rows, e.g. {sorted(unknown)[0]}")
    bad = int((vec.loc[df["id"]].to_numpy() != df["label"].to_numpy()).sum())
    if bad:
        raise DataError(f"{name}: {bad} labels differ from TRUE's label vector "
                        "(true/true_label_vectors_from_scale_score.json); refusing to return the set")
    return df


def true_labels(name: str) -> pd.DataFrame:
    vec = true_label_vector(name)
    return pd.DataFrame({"id": [f"{name}/dev/{i:06d}" for i in range(len(vec))], "label": vec})


# --------------------------------------------------------------------------- TRUE CSVs as written by TRUE
def true_csv(name: str) -> pd.DataFrame:
    """A TRUE-format CSV read as is (frank, summeval, dialfact, paws and the cross-check targets)."""
    raw = _read_csv(f"true/{name}.csv")
    extra_cols = [c for c in raw.columns if c not in ("Unnamed: 0", "grounding", "generated_text", "label")]
    meta = raw[extra_cols].to_dict("records") if extra_cols else None
    df = frame(name, "dev", raw["grounding"], raw["generated_text"], raw["label"].astype(int), meta)
    return check_true_labels(df, name)


def crosscheck_true(built: pd.DataFrame, name: str) -> dict:
    """Compare a rebuilt TRUE set with TRUE's CSV row by row (by id); returns mismatch counts."""
    ref = true_csv(name) if name != "mnbm" else None
    if ref is None:
        vec = true_labels("mnbm").set_index("id")["label"]
        lab = built.set_index("id")["label"]
        return {"rows": len(built), "label_mismatch": int((vec.loc[lab.index] != lab).sum()),
                "missing_ids": int(len(vec) - len(lab))}
    m = built.merge(ref, on="id", suffixes=("", "_true"))
    return {"rows": len(built), "rows_true": len(ref),
            "grounding_mismatch": int((m["grounding"] != m["grounding_true"]).sum()),
            "generated_mismatch": int((m["generated"] != m["generated_true"]).sum()),
            "label_mismatch": int((m["label"] != m["label_true"]).sum())}


# --------------------------------------------------------------------------- QAGS
def _qags_records(which: str) -> list[dict]:
    return _jsonl(f"qags/mturk_{which}.jsonl")


def qags(name: str) -> pd.DataFrame:
    """QAGS-C / QAGS-X from the MTurk files: binary TRUE label + the continuous QAGS human score."""
    which = {"qags_cnndm": "cnndm", "qags_xsum": "xsum"}[name]
    recs = _qags_records(which)
    gen, lab, score, meta = [], [], [], []
    for r in recs:
        sents = r["summary_sentences"]
        votes = [[x["response"] for x in s["responses"]] for s in sents]
        gen.append(" ".join(s["sentence"] for s in sents))
        lab.append(rules.qags_summary_label(votes))
        score.append(rules.qags_summary_score(votes))
        meta.append({"n_sentences": len(sents), "sentence_labels": [rules.qags_sentence_consistent(v) for v in votes]})
    df = frame(name, "dev", [r["article"] for r in recs], gen, lab, meta, human_score=score)
    return check_true_labels(df, name)


def qags_scores(name: str) -> pd.DataFrame:
    base = name.replace("_scores", "")
    df = qags(base)
    df["dataset"] = name
    df["id"] = [f"{name}/dev/{i:06d}" for i in range(len(df))]
    return df


# --------------------------------------------------------------------------- Q2
def q2() -> pd.DataFrame:
    """TRUE's Q² set: two rows (dodeca, memnet) per cross-annotated WoW turn; label = 1 - <model>_label."""
    ca = _read_csv("q2/cross_annotation.csv")
    g, r, lab, meta = [], [], [], []
    for row in ca.itertuples(index=False):
        for model in ("dodeca", "memnet"):
            g.append(row.knowledge)
            r.append(getattr(row, f"{model}_response"))
            lab.append(rules.q2_label(getattr(row, f"{model}_label")))
            meta.append({"model": model, "episode_idx": int(row.episode_idx), "round": int(row.round),
                         "topic": row.topic, "message": row.message})
    return check_true_labels(frame("q2", "dev", g, r, lab, meta), "q2")


def q2_paper() -> pd.DataFrame:
    """The Q² paper's four 150-response files; ``split`` names the file."""
    parts = []
    for model in ("dodeca", "memnet"):
        for kind, lab in (("inconsistent", 0), ("consistent", 1)):
            df = _read_csv(f"q2/{model}_{kind}.csv")
            split = f"{model}_{kind}"
            meta = [{"model": model, "episode_idx": int(x.episode_idx), "round": int(x.round), "topic": x.topic,
                     "message": x.message, "gold": x.gold} for x in df.itertuples(index=False)]
            parts.append(frame("q2_paper", split, df["knowledge"], df["response"], [lab] * len(df), meta))
    return pd.concat(parts, ignore_index=True)



def topicalchat_usr() -> pd.DataFrame:
    """USR's Topical-Chat turn-level ratings (Mehri and Eskenazi, 2020), as UniEval ships them: 60 contexts ×
    6 responses, each with the fact the response was meant to use. Q² Table 6 uses the 52 contexts whose fact
    is not ``_nofact``, so the 48 no-fact rows are left out (312 remain). ``human_score`` is UniEval's
    "groundedness", its name for USR's "Uses Knowledge" (the mean of three 0/1 judgements);
    ``label`` = 1 when most judges said the response uses the fact (the table reads ``human_score``)."""
    import ast

    with open(raw_path("unieval_meta_eval/topical_chat.json"), encoding="utf-8") as f:
        recs = json.load(f)
    g, r, lab, hs, meta = [], [], [], [], []
    for i, rec in enumerate(recs):
        if rec["context"].strip() == "_nofact":
            continue
        sc = rec["scores"] if isinstance(rec["scores"], dict) else ast.literal_eval(rec["scores"])
        if "groundedness" not in sc:
            raise DataError(f"topical_chat.json record {i}: no 'groundedness' score")
        g.append(rec["context"].strip())
        r.append(rec["system_output"])
        hs.append(float(sc["groundedness"]))
        lab.append(int(float(sc["groundedness"]) > 0.5))
        meta.append({"system": rec["system_id"], "record": i})
    return frame("topicalchat_usr", "dev", g, r, lab, meta, human_score=hs)

# --------------------------------------------------------------------------- BEGIN
def _begin(rel: str, name: str, split: str) -> pd.DataFrame:
    raw = _read_csv(rel, sep="\t", keep_default_na=False)
    lab = [rules.begin_label(x) for x in raw["gold label"]]
    meta = [{"previous_turn": a, "gold_label": b, "coarse_label": c, "full_label_set": d}
            for a, b, c, d in zip(raw["previous turn"], raw["gold label"], raw["coarse label"], raw["full label set"])]
    return frame(name, split, raw["evidence"], raw["response"], lab, meta)


def begin() -> pd.DataFrame:
    return check_true_labels(_begin("begin/dev_05_24_21.tsv", "begin", "dev"), "begin")


def begin_test() -> pd.DataFrame:
    return _begin("begin/test_05_24_21.tsv", "begin_test", "test")


# --------------------------------------------------------------------------- MNBM / XSumFaith
def _xsum_pairs():
    """(bbcid, system) pairs in order of first appearance, with their annotation rows."""
    ann = _read_csv("xsum_hallucination_annotations/hallucination_annotations_xsum_summaries.csv",
                    dtype={"bbcid": str})
    pairs: OrderedDict = OrderedDict()
    for r in ann.itertuples(index=False):
        key = (r.bbcid, r.system)
        if key not in pairs:
            pairs[key] = {"summary": r.summary, "rows": []}
        pairs[key]["rows"].append((r.worker_id, r.hallucination_type))
    return pairs


def xsum_documents() -> dict[str, str]:
    return {str(d["bbcid"]): d["document"] for d in _jsonl("xsum_hallucination_annotations/xsum_test_docs_from_aggrefact.jsonl")}


def mnbm() -> pd.DataFrame:
    """MNBM rebuilt from the hallucination annotations and the XSum articles (TRUE's rule).

    Ids keep TRUE's row positions (first-appearance order of the 2500 pairs); the 5 pairs of bbcid
    12620805, whose article is missing offline, leave gaps in the id sequence.
    """
    pairs, docs = _xsum_pairs(), xsum_documents()
    ids, g, r, lab, meta = [], [], [], [], []
    for i, ((bbcid, system), p) in enumerate(pairs.items()):
        if bbcid not in docs:
            continue
        ids.append(f"mnbm/dev/{i:06d}")
        g.append(docs[bbcid].replace("\n", " "))
        summary = p["summary"]
        r.append(summary)
        lab.append(rules.mnbm_label(p["rows"]))
        meta.append({"bbcid": bbcid, "model": system, "true_row": i})
    return check_true_labels(frame("mnbm", "dev", g, r, lab, meta, ids=ids), "mnbm")


def mnbm_missing() -> pd.DataFrame:
    """The TRUE MNBM rows that cannot be rebuilt offline (position, bbcid, system, TRUE label)."""
    pairs, docs = _xsum_pairs(), xsum_documents()
    vec = true_label_vector("mnbm")
    rows = [{"true_row": i, "id": f"mnbm/dev/{i:06d}", "bbcid": b, "system": s, "label": vec[i]}
            for i, (b, s) in enumerate(pairs) if b not in docs]
    return pd.DataFrame(rows)


def summac_xsumfaith() -> pd.DataFrame:
    """SummaC XSumFaith: same raw files as MNBM, SummaC's majority-of-rows rule and alternating cut.

    The cut is assigned over all 2500 pairs (so the missing article does not shift the split) and the
    id keeps the position within the cut.
    """
    pairs, docs = _xsum_pairs(), xsum_documents()
    out = {"val": [], "test": []}
    pos = {"val": 0, "test": 0}
    for i, ((bbcid, system), p) in enumerate(pairs.items()):
        cut = rules.alternate_cut(i)
        j = pos[cut]
        pos[cut] += 1
        if bbcid not in docs:
            continue
        out[cut].append({"id": f"summac_xsumfaith/{cut}/{j:06d}", "grounding": docs[bbcid], "generated": p["summary"],
                         "label": rules.xsumfaith_label([h for _, h in p["rows"]]),
                         "meta": {"bbcid": bbcid, "model": system}})
    parts = []
    for cut, recs in out.items():
        d = pd.DataFrame(recs)
        parts.append(frame("summac_xsumfaith", cut, d["grounding"], d["generated"], d["label"], d["meta"], ids=d["id"]))
    return pd.concat(parts, ignore_index=True)


# --------------------------------------------------------------------------- SummaC: CoGenSumm, Polytope, FRANK, SummEval
def summac_cogensumm() -> pd.DataFrame:
    recs = _jsonl("summac/cogensumm/cogensumm_test.jsonl")
    meta = [{"cnndm_id": r.get("cnndm_id"), "filename": r.get("filename")} for r in recs]
    return frame("summac_cogensumm", "test", [r["document"] for r in recs], [r["claim"] for r in recs],
                 [int(r["label"]) for r in recs], meta)


POLYTOPE_MODELS = ["BART", "Bert_Ext", "Bert_Ext_Abs", "BottomUp", "PG", "PG_Coverage", "Summa", "TextRank", "seq2seq"]


def summac_polytope() -> pd.DataFrame:
    """Polytope with SummaC's rule (overall label: no logged error) and alternating cut per workbook.

    SummaC lists the folder with ``os.listdir`` (order undefined); we take the workbooks in the
    alphabetical order of the model names above, which changes only the row order, not the split.
    """
    out = {"val": [], "test": []}
    for model in POLYTOPE_MODELS:
        path = raw_path(f"summac/polytope/Human_Annotation_Summarization_{model}.xlsm")
        with warnings.catch_warnings():  # openpyxl warns about Excel extensions it drops (validation, formats)
            warnings.simplefilter("ignore", UserWarning)
            seg = pd.read_excel(path, sheet_name="Scores per segment", engine="openpyxl")
            errs = pd.read_excel(path, sheet_name="Error Log", engine="openpyxl")
        id2 = {}
        for i, s in seg.iterrows():
            if str(s["ID"]) != "nan":
                id2[s["ID"]] = {"doc": s["Source"], "claim": s["Target"], "errors": [], "cut": rules.alternate_cut(i)}
        for _, e in errs.iterrows():
            if str(e["Subtypes"]) != "nan":
                if e["ID"] not in id2:
                    raise ValueError(f"Polytope {model}: error logged for unknown ID {e['ID']!r}")
                id2[e["ID"]]["errors"].append(str(e["Subtypes"]))
        for k, d in id2.items():
            out[d["cut"]].append({"grounding": d["doc"], "generated": d["claim"], "label": rules.polytope_label(d["errors"]),
                                  "meta": {"model": model, "polytope_id": str(k), "errors": d["errors"]}})
    parts = []
    for cut, recs in out.items():
        d = pd.DataFrame(recs)
        parts.append(frame("summac_polytope", cut, d["grounding"], d["generated"], d["label"], d["meta"]))
    return pd.concat(parts, ignore_index=True)


def summac_polytope_alignscore(base: pd.DataFrame | None = None) -> pd.DataFrame:
    """Polytope with AlignScore's labels (factual errors only); same rows and cuts as SummaC's."""
    df = (summac_polytope() if base is None else base).copy()
    df["dataset"] = "summac_polytope_alignscore"
    df["id"] = df["id"].str.replace("summac_polytope/", "summac_polytope_alignscore/", regex=False)
    df["label"] = pd.array([rules.polytope_alignscore_label(m["errors"]) for m in df["meta"]], dtype="int64")
    return df


def frank_annotations() -> pd.DataFrame:
    """FRANK's summary-level annotation rows, both splits (2,246: hash, model_name, dataset, split, scores)."""
    with open(raw_path("frank/human_annotations.json")) as f:
        ann = pd.DataFrame(json.load(f))
    return ann


def frank_xsum_rows() -> pd.DataFrame:
    """Every FRANK XSum summary, validation and test (996), with the texts Maynez et al.'s files hold.

    FRANK's own text files are not offline (SOURCE.txt), so FRANK-test has no text here. Its XSum
    summaries are, though: FRANK took them from Maynez et al.'s four systems, and the hallucination
    annotations carry each (bbcid, system) summary and the recovered article. Columns: ``hash``,
    ``model``, ``split``, ``document`` (Maynez et al.'s line-broken article, not FRANK's layout) and
    ``summary``. A FRANK row without its text in those files is an error, not a silent drop.
    """
    ann = frank_annotations()
    ann = ann[ann["dataset"] == "bbc"]
    pairs, docs = _xsum_pairs(), xsum_documents()
    keys = list(zip(ann["hash"].astype(str), ann["model_name"]))
    missing = [k for k in keys if k not in pairs or k[0] not in docs]
    if missing:
        raise ValueError(f"FRANK XSum: {len(missing)} rows have no text in Maynez et al.'s files, e.g. {missing[0]}")
    return pd.DataFrame({"hash": [k[0] for k in keys], "model": [k[1] for k in keys], "split": list(ann["split"]),
                         "document": [docs[k[0]] for k in keys], "summary": [pairs[k]["summary"] for k in keys]})


def summac_frank() -> pd.DataFrame:
    """SummaC FRANK, validation cut: TRUE's FRANK (same 671 summaries, labels from TRUE's CSV)."""
    df = true_csv("frank")
    df["dataset"] = "summac_frank"
    df["split"] = "val"
    df["id"] = [f"summac_frank/val/{i:06d}" for i in range(len(df))]
    return df


def frank_scores() -> pd.DataFrame:
    """FRANK validation summaries with the summary-level human Factuality score (frank/human_annotations.json)."""
    df = true_csv("frank")
    ann = frank_annotations()
    ann = ann[ann["split"] == "valid"].set_index(["hash", "model_name"])
    keys = [(m["hash"], m["model"]) for m in df["meta"]]
    missing = [k for k in keys if k not in ann.index]
    if missing:
        raise ValueError(f"FRANK: {len(missing)} TRUE rows have no human annotation, e.g. {missing[0]}")
    df["human_score"] = [float(ann.loc[k, "Factuality"]) for k in keys]
    df["dataset"] = "frank_scores"
    df["id"] = [f"frank_scores/dev/{i:06d}" for i in range(len(df))]
    return df


def _summeval_bartscore() -> list[dict]:
    with open(raw_path("bartscore_meta_eval/SUM_SummEval_data.json")) as f:
        data = json.load(f)
    rows = []
    for doc_id, d in data.items():
        for system, s in d["sys_summs"].items():
            rows.append({"doc_id": doc_id, "system": system, "src": d["src"], "summ": s["sys_summ"],
                         "consistency": float(s["scores"]["consistency"])})
    return rows


def summeval_scores() -> pd.DataFrame:
    """SummEval with the mean expert consistency (BARTScore copy); label = mean 5 (all 3 experts gave 5)."""
    rows = _summeval_bartscore()
    lab = [int(round(r["consistency"] * 3) == 15) for r in rows]
    meta = [{"doc_id": r["doc_id"], "system": r["system"]} for r in rows]
    return frame("summeval_scores", "dev", [r["src"] for r in rows], [r["summ"] for r in rows], lab, meta,
                 human_score=[r["consistency"] for r in rows])


def summac_summeval() -> pd.DataFrame:
    """Approximate SummaC SummEval: labels from the expert mean (ambiguous means -> 0, flagged in meta),
    alternating cut over the BARTScore file order (SummaC alternates over the SummEval jsonl order)."""
    rows = _summeval_bartscore()
    out = {"val": [], "test": []}
    for i, r in enumerate(rows):
        lab, exact = rules.summeval_summac_label_from_mean(r["consistency"])
        out[rules.alternate_cut(i)].append({"grounding": r["src"], "generated": r["summ"], "label": lab,
                                            "meta": {"doc_id": r["doc_id"], "system": r["system"],
                                                     "mean_consistency": r["consistency"], "label_exact": exact}})
    parts = []
    for cut, recs in out.items():
        d = pd.DataFrame(recs)
        parts.append(frame("summac_summeval", cut, d["grounding"], d["generated"], d["label"], d["meta"]))
    return pd.concat(parts, ignore_index=True)
