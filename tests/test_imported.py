"""tfc.data.imported: provenance, alignment with the gold labels, and the published AUCs they reproduce."""
import numpy as np
import pandas as pd
import pytest

from tfc import meta
from tfc.data import imported


@pytest.fixture(scope="module")
def report(data_dir):
    return imported.alignment_report()


def test_sources_have_provenance(data_dir):
    src = imported.sources_frame()
    zs = src[src["name"] == "imported:scale_score_true/summac_zs"].iloc[0]
    assert zs["repo"] == "asappresearch/scale-score"
    assert zs["commit"] == "ada43738521e51f470fe8bfab6764e3a123f89dd"
    assert zs["original_path"] == "experiments/true/results/summac_zs_true_results.json"
    assert zs["licence"].startswith("MIT")
    xl = src[src["name"] == "imported:scale_xl_true/scale_xl"].iloc[0]
    assert xl["repo"] == "RyukiKuwahara/scale" and len(xl["sha256"]) == 64
    assert {"frank_baselines", "maynez"} <= set(src["source"])


def test_every_source_aligns(report):
    assert report["ok"].all(), report[~report["ok"]]
    peer = report[report["name"].str.contains("scale")]
    assert (peer["label_mismatches"] == 0).all() and len(peer) == 6 * 11
    assert (report["csv_label_mismatches"].dropna() == 0).all()   # label vector == TRUE CSVs with text


def test_load_shape_ids_and_counts(data_dir):
    df = imported.load("scale_score_true", "summac_conv", "mnbm")
    assert len(df) == 2500 and df["id"].iloc[146] == "mnbm/dev/000146"   # TRUE positions kept
    assert df["score"].notna().all() and set(df["label"]) == {0, 1}
    assert df.attrs["signature"] == "imported:scale_score_true/summac_conv"
    assert len(imported.load("scale_xl_true", "scale_xl", "vitaminc")) == 63054
    assert len(imported.labels("fever")) == 18209


def test_published_aucs_reproduced(data_dir):
    """SummaC-Conv = TRUE T9 on MNBM/DialFact (67.2, 81.2); SummaC-ZS = AlignScore T3 (58.0, 87.1)."""
    def auc(metric, d):
        df = imported.load("scale_score_true", metric, d)
        return round(100 * meta.roc_auc(df["label"], df["score"]), 1)
    assert auc("summac_conv", "mnbm") == 67.2 and auc("summac_conv", "dialfact") == 81.2
    assert auc("summac_zs", "mnbm") == 58.0 and auc("summac_zs", "dialfact") == 87.1


def test_keyed_sources_join(data_dir):
    f = imported.load("frank_baselines", "factcc", "frank")
    assert len(f) == 671 and f.attrs["alignment"]["n_joined"] == 671
    d = imported.load("frank_baselines", "dae", "frank")     # upstream NaNs stay visible, not dropped
    assert d["score"].isna().sum() == d.attrs["alignment"]["n_nan_scores"] > 0
    m = imported.load("maynez", "entailment", "mnbm")
    assert len(m) == 2500 and m.attrs["alignment"]["n_joined"] == 1992   # Gold summaries unscored
    assert m.attrs["alignment"]["faithful_label_auc"] > 0.95               # system mapping verified
    keys = imported.mnbm_keys()
    assert (keys.loc[list(imported.MNBM_MISSING_POSITIONS), "bbcid"] == imported.MNBM_MISSING_BBCID).all()


def test_misalignment_raises(data_dir, monkeypatch):
    real = imported._peer_json

    def short(src, dataset):
        s, lab = real(src, dataset)
        return s[:-1], lab[:-1]

    monkeypatch.setattr(imported, "_peer_json", short)
    with pytest.raises(imported.AlignmentError) as e:
        imported.load("scale_score_true", "summac_zs", "q2")
    assert e.value.report["n_scores"] == 1087
    df = imported.load("scale_score_true", "summac_zs", "q2", strict=False)
    assert not df.attrs["alignment"]["ok"]

    def flipped(src, dataset):
        s, lab = real(src, dataset)
        lab = lab.copy()
        lab[3] = 1 - lab[3]
        return s, lab

    monkeypatch.setattr(imported, "_peer_json", flipped)
    with pytest.raises(imported.AlignmentError, match="label_mismatches': 1"):
        imported.load("scale_score_true", "summac_zs", "q2")


def test_bad_names():
    with pytest.raises(KeyError):
        imported.load("scale_score_true", "nope", "frank")
    with pytest.raises(ValueError):
        imported.parse_name("imported:summac_zs")
    assert imported.parse_name("imported:scale_xl_true/scale_xl") == ("scale_xl_true", "scale_xl")


def test_cross_check_with_data_layer(data_dir):
    """Once tfc.data.labels exists, its labels must equal the label vectors (ids by TRUE position)."""
    import tfc.data

    if not hasattr(tfc.data, "labels"):
        pytest.skip("tfc.data.labels not available yet")
    for d in ("qags_xsum", "mnbm", "fever"):
        ours = imported.labels(d)
        theirs = tfc.data.labels(d)
        j = theirs.merge(ours, on="id", how="left", suffixes=("_data", "_vec"))
        assert j["label_vec"].notna().all() and (j["label_data"] == j["label_vec"]).all()
