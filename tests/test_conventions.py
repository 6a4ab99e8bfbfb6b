"""The conventions chapter's numbers (tfc.book.chapters.conventions) on hand-made scores."""
import numpy as np
import pandas as pd
import pytest

from tfc import scorers
from tfc.book.chapters import conventions as C

DEV = pd.DataFrame({"label": [0, 0, 1, 1], "score": [0.1, 0.3, 0.35, 0.9]})
TEST = pd.DataFrame({"label": [0, 0, 1, 1, 1], "score": [0.2, 0.4, 0.33, 0.45, 0.8]})


@pytest.fixture
def fake_scores(monkeypatch):
    monkeypatch.setattr(C, "_scores", lambda scorer, dataset, split, smoke: DEV if split == C.DEV_SPLIT else TEST)


def test_measure_by_hand(fake_scores):
    m = C.measure("NLI", scorers.get("nli"), "d")
    # AUC: of the 6 (consistent, inconsistent) pairs, 0.33 < 0.4 is the one out of order -> 5/6
    assert m["roc_auc"] == pytest.approx(100 * 5 / 6)
    # at 0.5: inconsistent 2/2 right, consistent 1/3 -> (1 + 1/3) / 2
    assert m["bacc_0.5"] == pytest.approx(100 * (1 + 1 / 3) / 2)
    # validation: the midpoint 0.325 separates the classes (BAcc 1); on test it gets 1/2 and 3/3 -> 0.75
    assert m["threshold_dev"] == pytest.approx(0.325)
    assert m["bacc_dev"] == pytest.approx(75.0)
    assert np.isfinite(m["ece"]) and m["rows"] == 5


def test_lexical_checkers_get_no_ece(fake_scores):
    assert np.isnan(C.measure("ROUGE-L", scorers.get("rougeL"), "d")["ece"])


def test_gaps_are_tuned_minus_fixed():
    t = pd.DataFrame({"checker": ["a", "b"], "dataset": ["d", "d"], "bacc_dev": [80.0, 60.0], "bacc_0.5": [70.0, 65.0]})
    assert C.gaps(t)["gap"].tolist() == [10.0, -5.0]


def test_peer_rows_are_the_published_values():
    p = C.peers()
    assert set(p.index) <= set(C.PEERS) and "mean" in p.columns
    raw = pd.read_csv(__import__("tfc").config.reference_dir() / C.PEER_FILE)
    one = raw[(raw["column"] == p.index[0]) & (raw["row"] == p.columns[0])]["value"].iloc[0]
    assert p.iloc[0, 0] == pytest.approx(one, abs=0.05)


def test_display_rounds_points_to_one_decimal():
    t = pd.DataFrame([{"checker": "x", "roc_auc": 71.0222, "bacc_0.5": 62.444, "threshold_dev": 0.26612,
                       "bacc_dev": 67.111, "ece": 0.15234, "signature": "s"}])
    row = C.display_frame(t).iloc[0]
    assert (row["ROC AUC"], row["BAcc at 0.5"], row["BAcc at that threshold"]) == ("71.0", "62.4", "67.1")
    assert (row["threshold (validation)"], row["ECE"]) == ("0.266", "0.152")
    assert C.display_frame(t.assign(ece=float("nan"))).iloc[0]["ECE"] == "—"


def test_the_table_uses_every_summac_set_with_both_splits_in_the_mirror():
    assert C.DATASETS == C.split_sets()
    f = C.sets_frame().set_index("dataset")
    assert f.loc["summac_cogensumm", "splits"] == "test" and not f.loc["summac_cogensumm", "used"]
    assert f.loc["summac_factcc", "status"] == "unavailable"


def test_macro_rows_average_the_datasets_and_gaps_leave_them_out(fake_scores, monkeypatch):
    monkeypatch.setattr(C, "DATASETS", ("d1", "d2"))
    monkeypatch.setattr(C, "CHECKERS", (("ROUGE-L", "rougeL"), ("NLI", "nli")))
    t = C.table()
    macro = t[t["dataset"] == "macro-average"].set_index("checker")
    one = t[(t["checker"] == "NLI") & (t["dataset"] == "d1")].iloc[0]
    assert macro.loc["NLI", "roc_auc"] == pytest.approx(one["roc_auc"])      # both sets score alike here
    assert np.isnan(macro.loc["ROUGE-L", "ece"]) and np.isfinite(macro.loc["NLI", "ece"])
    assert len(C.gaps(t)) == 4 and "macro-average" not in set(C.gaps(t)["dataset"])
    m = C.macro_frame(t)
    assert list(m["checker"]) == ["ROUGE-L", "NLI"] and "dataset" not in m.columns
    assert C.display_frame(t).iloc[-1]["test rows"] == "—"
