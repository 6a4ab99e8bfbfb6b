"""Imported per-example scores: the outputs of the original metric implementations, with provenance.

These files let the book reproduce published meta-evaluation numbers exactly for metrics whose
checkpoints cannot be obtained offline. Each (source, metric) is listed by :func:`sources` with the
file it comes from and the upstream repository/commit/path recorded in the folder's ``SOURCE.txt``;
:func:`load` returns ``id, score, label`` aligned with the data layer's ids and **checks** the
alignment against the gold labels. A mismatch raises :class:`AlignmentError` with the report; rows
are never dropped silently (:func:`alignment_report` lists every check).

Sources (``imported:<source>/<metric>`` in the scorer registry, which wraps :func:`load`):

* ``scale_score_true/{bertscore_f, summac_zs, summac_conv, unieval}``: all 11 TRUE sets in TRUE row
  order (asappresearch/scale-score). The SummaC-ZS run is **not** the one behind TRUE Table 3; it
  matches AlignScore Table 3's SummaC-ZS row (see ``peer_scores/scale_score_true/SOURCE.txt``).
* ``scale_xl_true/{scale_xl, scale_xl_retrieval}``: SCALE-xl, a later metric (extra reference row).
* ``frank_baselines/<metric>``: FRANK's baseline outputs (artidoro/frank), keyed by (hash, model);
  joined to TRUE-FRANK ids through ``true/frank.csv``'s ``hash``/``model`` columns (validation split).
* ``maynez/<metric>``: Maynez et al.'s metric scores on XSum summaries, keyed by ``<system>_<bbcid>``;
  joined to TRUE-MNBM ids through ``true/mnbm_reconstructed.csv``'s ``bbcid``/``model`` columns.
  1992 of MNBM's 2500 rows get a score: the 500 Gold summaries were never scored upstream, nor were
  the 4 system summaries of bbcids 39553812 and 40254741 (8 rows); those rows carry NaN.

Ids: TRUE sets use ``"{name}/dev/{i:06d}"`` with ``i`` the row in TRUE's original order (MNBM keeps
TRUE's 2500 positions even though 5 rows have no text offline; FEVER/VitaminC follow the label-vector
order). Gold labels come from ``true/true_label_vectors_from_scale_score.json``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config

TRUE_DATASETS = ["frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2", "dialfact", "paws",
                 "fever", "vitaminc"]
TEXT_DATASETS = TRUE_DATASETS[:9]
LABEL_FILE = "true/true_label_vectors_from_scale_score.json"
# canonical dataset -> key in the scale-score files (label vectors use the same keys)
_SCALE_SCORE_KEYS = {"begin": "begin_dev", "dialfact": "dialfact_valid", "fever": "fever_dev",
                     "frank": "frank_valid", "mnbm": "mnbm", "paws": "paws", "q2": "q2",
                     "qags_cnndm": "qags_cnndm", "qags_xsum": "qags_xsum", "summeval": "summeval",
                     "vitaminc": "vitc_dev"}
_SCALE_XL_KEYS = {**{k: k for k in _SCALE_SCORE_KEYS}, "vitaminc": "vitc"}
# TRUE MNBM rows (0-based, TRUE order) of bbcid 12620805, whose article is missing offline
MNBM_MISSING_POSITIONS = (146, 587, 1134, 1953, 2127)
MNBM_MISSING_BBCID = 12620805
# Maynez system names -> MNBM model names (checked by the label agreement in alignment_report)
MAYNEZ_SYSTEMS = {"ptgen": "PtGen", "tconvs2s": "TConvS2S", "bert_nockpt": "TranS2S", "bert_withckpt": "BERTS2S"}
MAYNEZ_MIN_FAITHFUL_AUC = 0.9
FRANK_METRICS = {"rouge_1": "Rouge 1", "rouge_2": "Rouge 2", "rouge_l": "Rouge L", "bleu": "Bleu",
                 "meteor": "Meteor", "bertscore_p": "BertScore P", "bertscore_r": "BertScore R",
                 "bertscore_f1": "BertScore F1", "bertscore_p_art": "BertScore P Art",
                 "bertscore_r_art": "BertScore R Art", "bertscore_f1_art": "BertScore F1 Art",
                 "factcc": "FactCC", "feqa": "FEQA", "dae": "Dep Entail", "qags": "QAGS"}
MAYNEZ_METRICS = {"rouge_1": "R1", "rouge_2": "R2", "rouge_l": "RL", "bertscore": "BERTScore",
                  "entailment": "Entailment"}


class AlignmentError(ValueError):
    """Imported scores do not line up with the gold labels; ``report`` says where."""

    def __init__(self, message: str, report: dict):
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class Source:
    source: str
    metric: str
    file: str                      # relative to the data mirror
    datasets: tuple[str, ...]
    description: str
    provenance: dict = field(default_factory=dict, compare=False)

    @property
    def name(self) -> str:
        return f"imported:{self.source}/{self.metric}"


_SCALE_SCORE_FILES = {"bertscore_f": "bert_score_f_true_results.json", "summac_zs": "summac_zs_true_results.json",
                      "summac_conv": "summac_conv_true_results.json", "unieval": "unieval_true_results.json"}
_SCALE_XL_FILES = {"scale_xl": "scale_xl_true_results.json", "scale_xl_retrieval": "scale_xl_true_retrieval_results.json"}
_DESCRIPTIONS = {
    "bertscore_f": "BERTScore-F1 (roberta-large, rescaled) as run by the SCALE authors; not TRUE's BERTScore-P (deberta-xl-mnli)",
    "summac_zs": "SummaC-ZS (vitc, sentence); matches AlignScore T3, not TRUE T3",
    "summac_conv": "SummaC-Conv (vitc, percentile bins); matches TRUE T9 SC_Conv",
    "unieval": "UniEval fact-consistency (not in TRUE)",
    "scale_xl": "SCALE-xl (Flan-T5-xl, chunked; later metric, not in the papers)",
    "scale_xl_retrieval": "SCALE-xl retrieval variant (not in the papers)",
}


def _folder_provenance(folder: str, filename: str) -> dict:
    """Repo, commit, original path, sha256 and licence of ``filename`` from the folder's SOURCE.txt."""
    path = config.data_dir() / folder / "SOURCE.txt"
    prov = {"source_txt": f"{folder}/SOURCE.txt"}
    if not path.is_file():
        prov["error"] = f"missing {path}"
        return prov
    text = path.read_text()
    lic = re.search(r"^Licence:\s*(.+)$", text, flags=re.M)
    if lic:
        prov["licence"] = lic.group(1).strip()
    # per-file block: "<filename>\n  repo: ...\n  commit: ...\n  original path: ...\n  sha256: ..."
    block = re.search(rf"^{re.escape(filename)}\s*\n((?:[ \t]+\S.*\n?)+)", text, flags=re.M)
    if block:
        for key in ("repo", "commit", "original path", "sha256"):
            m = re.search(rf"^\s+{key}:\s*(\S+)", block.group(1), flags=re.M)
            if m:
                prov[key.replace(" ", "_")] = m.group(1)
    else:  # scale_xl_true lists files in a compact header
        for key, pat in (("repo", r"^Repo:\s*(\S+)"), ("commit", r"^Commit:\s*(\S+)")):
            m = re.search(pat, text, flags=re.M)
            if m:
                prov[key] = m.group(1)
        m = re.search(rf"(experiments/\S*{re.escape(filename)})\s+\(sha256 (\w+)\)", text)
        if m:
            prov["original_path"], prov["sha256"] = m.group(1), m.group(2)
    return prov


def sources() -> list[Source]:
    """Every imported (source, metric) with its datasets and provenance."""
    out = []
    for metric, fn in _SCALE_SCORE_FILES.items():
        out.append(Source("scale_score_true", metric, f"peer_scores/scale_score_true/{fn}", tuple(TRUE_DATASETS),
                          _DESCRIPTIONS[metric], _folder_provenance("peer_scores/scale_score_true", fn)))
    for metric, fn in _SCALE_XL_FILES.items():
        out.append(Source("scale_xl_true", metric, f"peer_scores/scale_xl_true/{fn}", tuple(TRUE_DATASETS),
                          _DESCRIPTIONS[metric], _folder_provenance("peer_scores/scale_xl_true", fn)))
    fprov = _folder_provenance("frank", "baseline_factuality_metrics_outputs.json")
    for metric, col in FRANK_METRICS.items():
        out.append(Source("frank_baselines", metric, "frank/baseline_factuality_metrics_outputs.json", ("frank",),
                          f"FRANK baseline output '{col}' (valid split joined to TRUE-FRANK; "
                          + ("against the article)" if col.endswith("Art") or metric in ("factcc", "feqa", "dae", "qags")
                             else "against the reference summary)"), fprov))
    mprov = _folder_provenance("xsum_hallucination_annotations", "eval_scores_xsum_summaries.csv")
    for metric, col in MAYNEZ_METRICS.items():
        out.append(Source("maynez", metric, "xsum_hallucination_annotations/eval_scores_xsum_summaries.csv",
                          ("mnbm",), f"Maynez et al. metric '{col}' (4 systems, no Gold summaries; "
                          + ("against the document)" if metric == "entailment" else "against the reference summary)"),
                          mprov))
    return out


def sources_frame() -> pd.DataFrame:
    """:func:`sources` as a table (one row per source/metric, provenance flattened)."""
    rows = []
    for s in sources():
        rows.append({"name": s.name, "source": s.source, "metric": s.metric, "file": s.file,
                     "datasets": ",".join(s.datasets), "description": s.description,
                     **{k: v for k, v in s.provenance.items() if k != "source_txt"}})
    return pd.DataFrame(rows)


def _get_source(source: str, metric: str) -> Source:
    for s in sources():
        if s.source == source and s.metric == metric:
            return s
    known = sorted({f"{s.source}/{s.metric}" for s in sources()})
    raise KeyError(f"unknown imported scores {source}/{metric}; known: {', '.join(known)}")


def parse_name(name: str) -> tuple[str, str]:
    """``'imported:scale_score_true/summac_zs'`` (prefix optional) -> ``('scale_score_true', 'summac_zs')``."""
    body = name.split(":", 1)[1] if name.startswith("imported:") else name
    if body.count("/") != 1:
        raise ValueError(f"imported score name must look like 'imported:<source>/<metric>', got {name!r}")
    src, met = body.split("/")
    return src, met


def ids(dataset: str, n: int) -> list[str]:
    return [f"{dataset}/dev/{i:06d}" for i in range(n)]


@lru_cache(maxsize=None)
def _json(path: str) -> dict:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"imported-score file missing from the data mirror: {p}")
    return json.loads(p.read_text())


def _check_dataset(dataset: str, allowed) -> None:
    if dataset not in allowed:
        raise KeyError(f"unknown dataset {dataset!r}; this source covers: {', '.join(allowed)}")


def labels(dataset: str) -> pd.DataFrame:
    """Gold labels of one TRUE set in TRUE order: ``id, label`` (the label-vector JSON)."""
    _check_dataset(dataset, TRUE_DATASETS)
    y = _json(str(config.data_dir() / LABEL_FILE))[_SCALE_SCORE_KEYS[dataset]]
    return pd.DataFrame({"id": ids(dataset, len(y)), "label": np.asarray(y, dtype=np.int8)})


def _csv_labels(dataset: str) -> np.ndarray | None:
    """Labels of the TRUE CSV with text, as a TRUE-ordered vector (MNBM: NaN at the 5 missing rows)."""
    if dataset not in TEXT_DATASETS:
        return None
    fn = "mnbm_reconstructed.csv" if dataset == "mnbm" else f"{dataset}.csv"
    lab = pd.read_csv(config.data_dir() / "true" / fn, usecols=["label"])["label"].to_numpy(float)
    if dataset == "mnbm":
        full = np.full(lab.size + len(MNBM_MISSING_POSITIONS), np.nan)
        keep = np.setdiff1d(np.arange(full.size), MNBM_MISSING_POSITIONS)
        full[keep] = lab
        return full
    return lab


def _peer_json(src: Source, dataset: str) -> tuple[np.ndarray, np.ndarray]:
    data = _json(str(config.data_dir() / src.file))
    key = (_SCALE_SCORE_KEYS if src.source == "scale_score_true" else _SCALE_XL_KEYS)[dataset]
    if key not in data:
        raise AlignmentError(f"{src.file}: no key {key!r} for {dataset}", {"dataset": dataset, "missing_key": key})
    scores, labs = data[key]
    return np.asarray(scores, dtype=float), np.asarray(labs, dtype=float)


def _align_report(name: str, dataset: str, gold: np.ndarray, file_labels: np.ndarray | None,
                  scores: np.ndarray, n_joined: int | None = None) -> dict:
    rep = {"name": name, "dataset": dataset, "n_gold": int(gold.size), "n_scores": int(scores.size),
           "n_nan_scores": int(np.isnan(scores).sum()) if scores.size else 0}
    rep["length_ok"] = scores.size == gold.size
    if file_labels is not None and file_labels.size == gold.size:
        ok = ~np.isnan(file_labels)
        rep["label_mismatches"] = int((file_labels[ok] != gold[ok]).sum())
        rep["n_label_checked"] = int(ok.sum())
    elif file_labels is not None:
        rep["label_mismatches"] = None
        rep["n_label_checked"] = 0
    if n_joined is not None:
        rep["n_joined"] = n_joined
    rep["ok"] = bool(rep["length_ok"] and (rep.get("label_mismatches") in (0, None) if file_labels is None
                                           else rep.get("label_mismatches") == 0))
    return rep


def load(source: str, metric: str, dataset: str, *, strict: bool = True) -> pd.DataFrame:
    """Imported scores of one metric on one TRUE dataset: ``id, score, label`` in TRUE order.

    Alignment is checked against the gold label vector (length, and row-by-row labels where the
    file carries them). A mismatch raises :class:`AlignmentError` (``strict=False`` returns the frame
    with the report in ``df.attrs['alignment']`` instead). Scores the upstream file lacks (FRANK
    baselines with NaN, MNBM Gold summaries that Maynez did not score) stay as NaN rows: callers
    decide, visibly, whether to drop them; :func:`tfc.meta.roc_auc` refuses NaN.
    """
    src = _get_source(source, metric)
    _check_dataset(dataset, src.datasets)
    gold = labels(dataset)
    y = gold["label"].to_numpy(float)
    if source in ("scale_score_true", "scale_xl_true"):
        scores, file_labels = _peer_json(src, dataset)
        rep = _align_report(src.name, dataset, y, file_labels, scores)
    elif source == "frank_baselines":
        scores, file_labels, n_joined = _frank_scores(metric)
        rep = _align_report(src.name, dataset, y, file_labels, scores, n_joined)
        rep["ok"] = rep["ok"] and n_joined == y.size
    else:
        scores, file_labels, n_joined, faithful_auc = _maynez_scores(metric)
        rep = _align_report(src.name, dataset, y, None, scores, n_joined)
        rep["n_unscored"] = int(np.isnan(scores).sum())
        rep["faithful_label_auc"] = round(faithful_auc, 4)
        rep["ok"] = rep["ok"] and faithful_auc > MAYNEZ_MIN_FAITHFUL_AUC
    if not rep["ok"]:
        if strict:
            raise AlignmentError(f"{src.name} on {dataset}: scores do not align with the gold labels: {rep}", rep)
    df = pd.DataFrame({"id": gold["id"], "score": scores if scores.size == y.size else np.nan,
                       "label": gold["label"]}) if rep["length_ok"] else pd.DataFrame(
                           {"id": [], "score": [], "label": []})
    df.attrs["alignment"] = rep
    df.attrs["signature"] = src.name
    df.attrs["provenance"] = src.provenance
    from tfc.data.reads import report_read   # the read hook (chapter footers list the files they read)

    report_read("imported", src.name, dataset, None, len(df))
    return df


def _frank_scores(metric: str):
    """FRANK baseline column joined to TRUE-FRANK rows by (hash, model); labels from TRUE's CSV."""
    raw = pd.DataFrame(_json(str(config.data_dir() / "frank/baseline_factuality_metrics_outputs.json")))
    true = pd.read_csv(config.data_dir() / "true/frank.csv", usecols=["hash", "model", "label"])
    raw["key"] = raw["hash"].astype(str) + "|" + raw["model_name"].astype(str)
    true["key"] = true["hash"].astype(str) + "|" + true["model"].astype(str)
    if raw["key"].duplicated().any():
        raise AlignmentError("frank baselines: duplicate (hash, model) keys", {"duplicates": int(raw["key"].duplicated().sum())})
    col = FRANK_METRICS[metric]
    j = true.merge(raw[["key", col]], on="key", how="left", indicator=True)
    n_joined = int((j["_merge"] == "both").sum())
    return j[col].to_numpy(float), j["label"].to_numpy(float), n_joined


def mnbm_keys() -> pd.DataFrame:
    """TRUE-ordered (bbcid, model) of all 2500 MNBM rows: the CSV's 2495 plus bbcid 12620805 reinserted.

    The model of each reinserted row is taken from the CSV row just before it (rows are grouped by
    model in annotation order); ``alignment_report`` checks the result against the label vector.
    """
    csv = pd.read_csv(config.data_dir() / "true/mnbm_reconstructed.csv", usecols=["bbcid", "model", "label"])
    rows = csv.to_dict("records")
    for pos in MNBM_MISSING_POSITIONS:  # ascending, so earlier insertions shift later positions correctly
        model = rows[pos - 1]["model"]
        rows.insert(pos, {"bbcid": MNBM_MISSING_BBCID, "model": model, "label": np.nan})
    out = pd.DataFrame(rows)
    out.insert(0, "id", ids("mnbm", len(out)))
    return out


def _maynez_scores(metric: str):
    raw = pd.read_csv(config.data_dir() / "xsum_hallucination_annotations/eval_scores_xsum_summaries.csv")
    sysname = raw["system_bbcid"].str.rsplit("_", n=1).str[0]
    unknown = set(sysname) - set(MAYNEZ_SYSTEMS)
    if unknown:
        raise AlignmentError(f"maynez: unknown systems {sorted(unknown)}", {"unknown_systems": sorted(unknown)})
    raw["key"] = raw["system_bbcid"].str.rsplit("_", n=1).str[1] + "|" + sysname.map(MAYNEZ_SYSTEMS)
    keys = mnbm_keys()
    keys["key"] = keys["bbcid"].astype(str) + "|" + keys["model"]
    j = keys.merge(raw[["key", MAYNEZ_METRICS[metric], "Faithful"]], on="key", how="left", indicator=True)
    # join check: Maynez's human "Faithful" score must rank TRUE's MNBM labels almost perfectly if the
    # (system -> model) mapping is right (0.96 with it; 0.82 with bert_withckpt/bert_nockpt swapped)
    ok = j["Faithful"].notna() & j["label"].notna()
    from tfc.meta.binary import roc_auc

    check = roc_auc(j.loc[ok, "label"].astype(int), j.loc[ok, "Faithful"])
    return j[MAYNEZ_METRICS[metric]].to_numpy(float), None, int((j["_merge"] == "both").sum()), check


def alignment_report() -> pd.DataFrame:
    """Every alignment check, one row per (source/metric, dataset), never raising.

    Columns: ``name, dataset, n_gold, n_scores, n_nan_scores, length_ok, label_mismatches,
    n_label_checked, n_joined, ok`` plus, for the 9 TRUE sets with text, ``csv_label_mismatches``:
    the label vector against the label column of the mirror's TRUE CSV.
    """
    rows = []
    for s in sources():
        if s.source in ("frank_baselines", "maynez") and s.metric not in ("factcc", "entailment"):
            continue  # one metric per keyed source suffices: the join is the same for all its columns
        for d in s.datasets:
            try:
                rows.append(load(s.source, s.metric, d, strict=False).attrs["alignment"])
            except Exception as e:  # noqa: BLE001 - the report must list failures, not stop at them
                rows.append({"name": s.name, "dataset": d, "ok": False, "error": repr(e)})
    rep = pd.DataFrame(rows)
    csv_mis = {}
    for d in TEXT_DATASETS:
        gold = labels(d)["label"].to_numpy(float)
        lab = _csv_labels(d)
        ok = ~np.isnan(lab)
        csv_mis[d] = int((lab[ok] != gold[ok]).sum()) if lab.size == gold.size else -1
    rep["csv_label_mismatches"] = rep["dataset"].map(csv_mis)
    return rep
