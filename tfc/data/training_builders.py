"""Builders of the training-side sets (NLI, paraphrase and fact-verification sources the in-house models train on;
never evaluated on): raw mirror files -> DataFrames in the common schema of :mod:`tfc.data.builders`."""
from __future__ import annotations

import io
import json
import zipfile

import pandas as pd

from tfc.data import rules
from tfc.data.builders import _jsonl, _read_csv, _zip_jsonl, frame
from tfc.data.manifest import raw_path


# --------------------------------------------------------------------------- training-side sets
def _nli_frame(name: str, split: str, recs: list[dict], prem: str, hyp: str, lab: str, meta_keys=()) -> pd.DataFrame:
    l3 = [rules.nli3(r[lab]) for r in recs]
    meta = [{k: r.get(k) for k in meta_keys} | {"label_space": "nli3"} for r in recs]
    return frame(name, split, [r[prem] for r in recs], [r[hyp] for r in recs], [int(x == "entailment") for x in l3],
                 meta, label3=l3)


def vitaminc_test() -> pd.DataFrame:
    parts = []
    for part in ("real", "synthetic"):
        recs = _zip_jsonl(f"vitaminc/vitaminc_{part}.zip", f"vitaminc_{part}/test.jsonl")
        parts.append(_nli_frame("vitaminc_test", part, recs, "evidence", "claim", "label", ("unique_id", "page")))
    return pd.concat(parts, ignore_index=True)


def _vitc_baseline(name: str, zipname: str, split: str) -> pd.DataFrame:
    recs = _zip_jsonl(f"vitaminc_baselines/{zipname}.zip", f"{zipname}/{split}.jsonl")
    return _nli_frame(name, split, recs, "evidence", "claim", "label", ("unique_id",))


def dialfact_test() -> pd.DataFrame:
    """DialFact's 300-row test-split sample, built by TRUE's rule for DialFact: the factual (verifiable) responses
    only, consistent when SUPPORTS, the evidence sentences of a response joined as its grounding."""
    recs = [r for r in _jsonl("dialfact/testsmall.jsonl") if r["type_label"] == "factual"]
    recs = [{**r, "evidence": " ".join(e[2].strip() for e in r["evidence_list"])} for r in recs]
    return _nli_frame("dialfact_test", "test", recs, "evidence", "response", "response_label",
                      ("id", "data_type", "response_label"))


def anli_test() -> pd.DataFrame:
    return _vitc_baseline("anli_test", "anli", "test")


def fever_symmetric() -> pd.DataFrame:
    return pd.concat([_vitc_baseline("fever_symmetric", "fever_symmetric", s) for s in ("dev", "test")], ignore_index=True)


def fever_adversarial() -> pd.DataFrame:
    return _vitc_baseline("fever_adversarial", "fever_adversarial", "test")


def fever_triggers() -> pd.DataFrame:
    return _vitc_baseline("fever_triggers", "fever_triggers", "test")


def sick2014() -> pd.DataFrame:
    parts = []
    for split, fn in (("train", "SICK_train.txt"), ("trial", "SICK_trial.txt"), ("test", "SICK_test_annotated.txt")):
        raw = _read_csv(f"sick2014/{fn}", sep="\t")
        recs = raw.to_dict("records")
        df = _nli_frame("sick2014", split, recs, "sentence_A", "sentence_B", "entailment_judgment", ("pair_ID",))
        df["relatedness"] = raw["relatedness_score"].astype(float).values
        parts.append(df)
    return pd.concat(parts, ignore_index=True)


def msrp() -> pd.DataFrame:
    import csv

    parts = []
    for split in ("train", "val", "test"):
        raw = pd.read_csv(raw_path(f"msrp/msr-para-{split}.tsv"), sep="\t", quoting=csv.QUOTE_NONE,
                          encoding="utf-8-sig", dtype=str, keep_default_na=False)
        meta = [{"id1": a, "id2": b, "label_space": "paraphrase"} for a, b in zip(raw["#1 ID"], raw["#2 ID"])]
        parts.append(frame("msrp", split, raw["#1 String"], raw["#2 String"], raw["Quality"].astype(int), meta))
    return pd.concat(parts, ignore_index=True)


def wecheck_train(task: str) -> pd.DataFrame:
    """WeCheck weak-label samples, one row per (article, beam); ``label`` is -1 (no gold label) and the
    weak signals sit in ``meta`` (anli_score, summac_score per beam)."""
    n_files = {"paws": 8, "dialogue": 4}[task]
    name = f"wecheck_{task}"
    g, r, meta = [], [], []
    for k in range(n_files):
        for j, rec in enumerate(_jsonl(f"wecheck_train/{task}/qafacteval_score_{k}.json")):
            beams = rec["beams"] if isinstance(rec["beams"], list) else [rec["beams"]]
            for b, beam in enumerate(beams):
                g.append(rec["article"])
                r.append(beam)
                meta.append({"file": k, "row": j, "beam": b, "label_space": "weak (no gold label)",
                             "anli_score": _at(rec.get("anli_score"), b), "summac_score": _at(rec.get("summac_score"), b)})
    return frame(name, "train", g, r, [-1] * len(g), meta)


def _at(x, i):
    if isinstance(x, list):
        return float(x[i]) if i < len(x) else None
    return None if x is None else float(x)


# --------------------------------------------------------------------------- human-labelled sentence-level sets
# (added to the mirror 2026-11-24; all training-side). Rows the mirror's SOURCE.txt names as overlapping an
# evaluation text are dropped here, by their 0-based data-row index, and recorded in ``meta``-free form by the
# leakage report of :func:`tfc.data.training_mix`, which also removes anything else that matches.
SOURCE_DROPS = {
    "conjnli": {"dev": (27, 290)},                      # both equal a TRUE-PAWS generated text
    "anli_dev": {"r1": (241, 713), "r2": (978,), "r3": (887,)},  # share a Wikipedia sentence with DialFact groundings
}


def _lines(rel: str) -> list[str]:
    with open(raw_path(rel), encoding="utf-8") as f:
        return [line.rstrip("\n").strip() for line in f]


def _s1s2(name: str, split: str, s1: str, s2: str, labels: str) -> pd.DataFrame:
    a, b, lab = _lines(s1), _lines(s2), _lines(labels)
    while lab and not lab[-1]:
        lab.pop()
    a, b = a[:len(lab)], b[:len(lab)]
    if not (len(a) == len(b) == len(lab)):
        raise ValueError(f"{name}/{split}: s1/s2/labels have {len(a)}/{len(b)}/{len(lab)} lines")
    recs = [{"p": x, "h": y, "l": z} for x, y, z in zip(a, b, lab) if z.strip() and z.strip() != "-"]
    return _nli_frame(name, split, recs, "p", "h", "l")


def _drop_rows(df: pd.DataFrame, name: str, split: str) -> pd.DataFrame:
    drop = SOURCE_DROPS.get(name, {}).get(split, ())
    return df.drop(index=[i for i in drop if i in df.index]).reset_index(drop=True) if drop else df


def snli_devtest() -> pd.DataFrame:
    return pd.concat([_s1s2("snli_devtest", s, f"snli_devtest_esnli/s1.{s}", f"snli_devtest_esnli/s2.{s}",
                            f"snli_devtest_esnli/labels.{s}") for s in ("dev", "test")], ignore_index=True)


def mnli_hard() -> pd.DataFrame:
    return pd.concat([_s1s2("mnli_hard", s, f"mnli_hard/{s}_hard_s1.test", f"mnli_hard/{s}_hard_s2.test",
                            f"mnli_hard/{s}_hard_labels.test") for s in ("matched", "mismatched")], ignore_index=True)


def cad_snli() -> pd.DataFrame:
    parts = []
    for kind in ("original", "revised_premise", "revised_hypothesis"):
        for split in ("train", "dev", "test"):
            raw = _read_csv(f"cad_snli/{kind}_{split}.tsv", sep="\t", dtype=str, keep_default_na=False)
            raw = raw[raw["gold_label"].str.strip().str.len() > 0]
            parts.append(_nli_frame("cad_snli", f"{kind}_{split}", raw.to_dict("records"), "sentence1", "sentence2",
                                    "gold_label"))
    return pd.concat(parts, ignore_index=True)


def med() -> pd.DataFrame:
    raw = _read_csv("med/MED.tsv", sep="\t", dtype=str, keep_default_na=False)
    return _nli_frame("med", "all", raw.to_dict("records"), "sentence1", "sentence2", "gold_label", ("genre",))


def breaking_nli() -> pd.DataFrame:
    with zipfile.ZipFile(raw_path("breaking_nli/breaking_nli_dataset.zip")) as z:
        with z.open("data/dataset.jsonl") as f:
            recs = [json.loads(line) for line in io.TextIOWrapper(f, encoding="utf-8") if line.strip()]
    return _nli_frame("breaking_nli", "test", recs, "sentence1", "sentence2", "gold_label", ("category",))


def anli_dev() -> pd.DataFrame:
    parts = []
    for r in ("r1", "r2", "r3"):
        raw = _read_csv(f"anli_dev/ANLI_analysis_{r}_dev.csv", dtype=str, keep_default_na=False)
        raw = _drop_rows(raw, "anli_dev", r)
        parts.append(_nli_frame("anli_dev", r, raw.to_dict("records"), "context", "statement", "gold_label", ("uid",)))
    return pd.concat(parts, ignore_index=True)


def taxinli() -> pd.DataFrame:
    raw = _read_csv("taxinli/taxinli10k.tsv", sep="\t", dtype=str, keep_default_na=False)
    return _nli_frame("taxinli", "all", raw.to_dict("records"), "prem", "hyp", "label", ("pairID", "genre"))


def conjnli() -> pd.DataFrame:
    raw = _read_csv("conjnli/conj_dev.tsv", sep="\t", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    raw = _drop_rows(raw, "conjnli", "dev")
    return _nli_frame("conjnli", "dev", raw.to_dict("records"), "Premise", "Hypothesis", "Label")


def rte_glue() -> pd.DataFrame:
    import csv

    parts = []
    for split in ("train", "dev"):
        raw = pd.read_csv(raw_path(f"rte_glue/{split}.tsv"), sep="\t", quoting=csv.QUOTE_NONE, dtype=str,
                          keep_default_na=False)
        lab = raw["label"].astype(int)
        if not lab.isin([0, 1]).all():
            raise ValueError("rte_glue: labels must be 0 (entailment) or 1 (not_entailment)")
        meta = [{"label_space": "binary entailment (GLUE: 0 = entailment)"} for _ in range(len(raw))]
        parts.append(frame("rte_glue", split, raw["sentence1"], raw["sentence2"], (1 - lab).tolist(), meta))
    return pd.concat(parts, ignore_index=True)
