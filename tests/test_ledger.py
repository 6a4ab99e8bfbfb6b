"""tfc.ledger: recording paper-vs-ours frames and the reproduction ledger built from them."""
import pandas as pd
import pytest

from tfc import ledger, reference


pytestmark = pytest.mark.usefixtures("ledger_dir")  # conftest: a private ledger per test


def _t3(rows_offsets):
    """A paper_vs_ours frame for TRUE-T3 summac_zs with ours = paper + offset."""
    ours = pd.DataFrame({"row": [r for r, _ in rows_offsets], "column": "summac_zs",
                         "value": [reference.value("TRUE-T3", r, "summac_zs") + o for r, o in rows_offsets],
                         "signature": "imported:x/summac_zs"})
    return reference.paper_vs_ours(ours, "TRUE-T3", decimals=None)


def test_every_index_table_has_a_status_entry_and_a_ledger_row():
    idx = set(reference.index()["table"])
    st = ledger.status_table()
    assert set(st["table"]) == idx, sorted(idx ^ set(st["table"]))
    assert st["reason"].str.len().min() > 5
    assert set(st["status_if_unrecorded"]) <= set(ledger.STATUSES)
    tab = ledger.table_ledger()
    assert set(tab["table"]) == idx and len(tab) == len(idx)
    assert set(tab["status"]) <= set(ledger.STATUSES)


def test_unrecorded_table_takes_the_static_status():
    tab = ledger.table_ledger().set_index("table")
    st = ledger.status_table().set_index("table")
    assert tab.loc["TRUE-T10", "status"] == st.loc["TRUE-T10", "status_if_unrecorded"] == "not reproducible offline"
    assert tab.loc["TRUE-T10", "n_compared"] == 0 and pd.isna(tab.loc["TRUE-T10", "max_abs_delta"])
    assert tab.loc["TRUE-T10", "detail"] == st.loc["TRUE-T10", "reason"]


def test_counts_and_deltas_best_per_cell(ledger_dir):
    ledger.record(_t3([("frank", -0.1), ("summeval", 2.0)]), chapter="02_true_auc", mode="smoke")
    ledger.record(_t3([("frank", 0.4)]), chapter="02_true_auc")          # a second run of the same cell
    ledger.record(_t3([("mnbm", 10.0)]), chapter="02_true_scorers", role="stand-in", note="small model")
    assert (ledger_dir / "02_true_auc.parquet").is_file()
    rec = ledger.collected()
    assert len(rec) == 4 and set(rec["chapter"]) == {"02_true_auc", "02_true_scorers"}
    row = ledger.table_ledger().set_index("table").loc["TRUE-T3"]
    assert row["n_published"] == 120
    assert row["n_compared"] == 2                       # frank, summeval (distinct cells)
    assert row["n_within_tol"] == 1                     # |-0.1| <= 0.5; 2.0 is not
    assert row["median_abs_delta"] == pytest.approx((0.1 + 2.0) / 2)
    assert row["max_abs_delta"] == pytest.approx(2.0)
    assert row["n_standin"] == 1 and row["standin_median_abs_delta"] == pytest.approx(10.0)
    assert row["status"] == "partially reproduced"
    assert "2 of 120 cells" in row["detail"] and "small model" in row["detail"]
    assert row["chapter"] == "02_true_auc, 02_true_scorers"
    assert row["signatures"] == "imported:x/summac_zs"


def test_fully_covered_table_within_tolerance_is_reproduced():
    pub = reference.load("QAGS-T5")
    ours = pub[["row", "column"]].assign(value=pub["value"] + 0.1)
    ledger.record(reference.paper_vs_ours(ours, "QAGS-T5", decimals=None), chapter="03_qags")
    row = ledger.table_ledger().set_index("table").loc["QAGS-T5"]
    assert (row["status"], row["n_compared"], row["n_within_tol"]) == ("reproduced", 5, 5)
    assert row["max_abs_delta"] == pytest.approx(0.1)
    # one cell outside the tolerance makes it partial
    ours.loc[0, "value"] += 1.0
    ledger.record(reference.paper_vs_ours(ours.iloc[[0]], "QAGS-T5", decimals=None), chapter="03_qags_b")
    ledger._TABLES.clear()
    ledger.clear("03_qags")
    row = ledger.table_ledger().set_index("table").loc["QAGS-T5"]
    assert row["status"] == "partially reproduced" and row["n_compared"] == 1


def test_first_record_of_a_new_process_replaces_the_chapter_file():
    ledger.record(_t3([("frank", 0.0)]), chapter="02_true_auc")
    ledger._TABLES.clear()                               # as if the notebook ran again in a new kernel
    ledger.record(_t3([("summeval", 0.0)]), chapter="02_true_auc")
    assert list(ledger.collected()["row"]) == ["summeval"]


def test_true_comparison_frames_are_accepted():
    df = pd.DataFrame({"dataset": ["frank", "frank", "avg_wo_vitc_fever"], "metric": ["f1", "x", "f1"],
                       "published_as": ["TRUE-T3:f1", "", "TRUE-T3:f1"], "paper": [76.2, None, 67.0],
                       "ours": [76.0, 50.0, 66.0], "delta": [-0.2, None, -1.0], "signature": ["f1.abc"] * 3})
    d = ledger.normalise(df)
    assert list(d["table"]) == ["TRUE-T3", "TRUE-T3"] and list(d["column"]) == ["f1", "f1"]
    assert list(d["row"]) == ["frank", "avg_wo_vitc_fever"]
    assert d["delta"].tolist() == pytest.approx([-0.2, -1.0])


def test_bad_input():
    good = _t3([("frank", 0.0)])
    with pytest.raises(KeyError, match="unknown published table"):
        ledger.record(good.assign(table="TRUE-T99"), chapter="02_true_auc")
    with pytest.raises(ValueError, match="role"):
        ledger.record(good, chapter="02_true_auc", role="guess")
    for bad in ("", "../x", "a/b", None):
        with pytest.raises(ValueError, match="chapter"):
            ledger.record(good, chapter=bad)
    with pytest.raises(ValueError, match="lacks columns"):
        ledger.record(good.drop(columns=["paper"]), chapter="02_true_auc")
    with pytest.raises(ValueError, match="table="):
        ledger.record(good.drop(columns=["table"]), chapter="02_true_auc")
    with pytest.raises(TypeError):
        ledger.record([1, 2], chapter="02_true_auc")
    with pytest.raises((ValueError, TypeError)):
        ledger.record(good.assign(ours="high"), chapter="02_true_auc")
    assert ledger.collected().empty


def test_figures():
    figs = ledger.figure_ledger().set_index("figure")
    assert {"TRUE-F1", "TRUE-F2", "WC-F3", "Q2-F3"} <= set(figs.index)
    assert not figs.loc["TRUE-F1", "recorded"]
    ledger.figure("TRUE-F1", chapter="02_true_length", note="imported metrics")
    figs = ledger.figure_ledger().set_index("figure")
    assert figs.loc["TRUE-F1", "status"] == "partially reproduced" and figs.loc["TRUE-F1", "recorded"]
    assert figs.loc["TRUE-F1", "detail"] == "imported metrics"
    with pytest.raises(KeyError):
        ledger.figure("TRUE-F9", chapter="02_true_length")
    with pytest.raises(ValueError):
        ledger.figure("TRUE-F1", chapter="02_true_length", status="not reproducible offline")
    ledger.clear("02_true_length")
    assert not ledger.figure_ledger().set_index("figure").loc["TRUE-F1", "recorded"]


def test_chapter_links_only_for_built_chapters():
    f = pd.DataFrame({"chapter": ["02_true_auc", "03_qags", "02_true_auc, 09_x"]})
    out = ledger.chapter_links(f, built_chapters={"02_true_auc"})
    assert out["chapter"].tolist() == ['<a href="02_true_auc.html">02_true_auc</a>', "03_qags",
                                       '<a href="02_true_auc.html">02_true_auc</a>, 09_x']
    html = ledger.to_html(out.assign(x=[1.234, float("nan"), 2.0], t=["<b>", "a", "b"]))
    assert "&lt;b&gt;" in html and "1.23" in html and 'href="02_true_auc.html"' in html


def test_figure_returns_nothing_to_display(tmp_path, monkeypatch):
    """A figure record ending a notebook cell must not print its dict on the page."""
    monkeypatch.setenv("TFC_LEDGER_DIR", str(tmp_path))
    assert ledger.figure("TRUE-F1", chapter="02_true_length", note="x") is None
    assert (tmp_path / "02_true_length.figures.json").exists()
