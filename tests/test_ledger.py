"""tfc.book.ledger: recording paper-vs-ours frames and the reproduction ledger built from them."""
import pandas as pd
import pytest

from tfc.book import ledger, reference


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


def _lex(rows_offsets, table="TRUE-T9", column="rouge_l", signature=None):
    """A paper_vs_ours frame of our own (as-published) lexical scorer with ours = paper + offset."""
    from tfc import scorers

    sig = signature or scorers.get("rougeL").signature
    ours = pd.DataFrame({"row": [r for r, _ in rows_offsets], "column": column,
                         "value": [reference.value(table, r, column) + o for r, o in rows_offsets],
                         "signature": sig})
    return reference.paper_vs_ours(ours, table, decimals=None)


def test_counts_roles_and_worst_delta_per_cell(ledger_dir):
    ledger.record(_lex([("frank", -0.1), ("summeval", 2.0)]), chapter="02_true_auc", mode="smoke")
    ledger.record(_lex([("frank", 0.4)]), chapter="02_true_scorers")      # a second run of the same cell
    ledger.record(_t3([("mnbm", 10.0)]), chapter="02_true_scorers", role="stand-in", note="small model")
    assert (ledger_dir / "02_true_auc.parquet").is_file()
    rec = ledger.collected()
    assert len(rec) == 4 and set(rec["chapter"]) == {"02_true_auc", "02_true_scorers"}
    row = ledger.table_ledger().set_index("table").loc["TRUE-T9"]
    assert row["n_published"] == 84
    assert row["n_compared"] == 2                       # frank, summeval (distinct cells)
    assert row["n_within_tol"] == 1                     # frank: the worse run, |0.4| <= 0.5; 2.0 is not
    assert row["median_abs_delta"] == pytest.approx((0.4 + 2.0) / 2)   # the largest |Δ| per cell, never the best
    assert row["max_abs_delta"] == pytest.approx(2.0)
    assert row["status"] == "partially reproduced" and row["category"] == "partial"
    assert "2 of 84 cells reproduced" in row["detail"]
    assert row["chapter"] == "02_true_auc, 02_true_scorers"
    t3 = ledger.table_ledger().set_index("table").loc["TRUE-T3"]
    assert t3["n_standin"] == 1 and t3["standin_median_abs_delta"] == pytest.approx(10.0)
    assert t3["status"] == "stand-in only" and "small model" in t3["detail"]


def test_a_table_with_only_stand_in_cells_is_never_partially_reproduced():
    ledger.record(_t3([("frank", 0.0), ("summeval", 0.1), ("mnbm", -0.2)]), chapter="02_true_scorers",
                  role="stand-in", note="small model")
    row = ledger.table_ledger().set_index("table").loc["TRUE-T3"]
    assert row["n_standin"] == 3 and row["n_compared"] == 0 and row["n_within_tol"] == 0
    assert row["status"] == "stand-in only" and row["status"] != "partially reproduced"


def test_imported_cells_never_count_as_reproduction():
    # the chapter forgets the role: the imported signature decides
    ledger.record(_t3([("frank", 0.0), ("summeval", 0.0)]), chapter="02_true_auc")
    rec = ledger.collected()
    assert set(rec["role"]) == {"imported"}
    row = ledger.table_ledger().set_index("table").loc["TRUE-T3"]
    assert (row["n_compared"], row["n_within_tol"]) == (0, 0)
    assert (row["n_imported"], row["imported_n_within_tol"]) == (2, 2)
    assert row["status"] == "imported only"
    # an old record that says "reproduction" for an imported signature is not counted either
    old = rec.assign(role="reproduction")
    row = ledger.table_ledger(old).set_index("table").loc["TRUE-T3"]
    assert row["n_compared"] == 0 and row["status"] == "imported only"
    assert ledger.counts(ledger.table_ledger(old))["imported-only"] >= 1


def test_raw_delta_054_is_outside_a_tolerance_of_05():
    # rounded to one decimal the delta would read 0.5 and pass; the ledger uses the unrounded value
    from tfc import scorers

    sig = scorers.get("rougeL").signature
    paper = reference.value("TRUE-T9", "frank", "rouge_l")
    ours = pd.DataFrame({"row": ["frank"], "column": "rouge_l", "value": [paper + 0.54], "signature": sig})
    shown = reference.paper_vs_ours(ours, "TRUE-T9")             # decimals=1: what the chapter displays
    assert shown["delta"].iloc[0] == pytest.approx(0.5)
    d = ledger.record(shown, chapter="02_true_auc")
    assert d["delta"].iloc[0] == pytest.approx(0.54)
    row = ledger.table_ledger().set_index("table").loc["TRUE-T9"]
    assert row["tolerance"] == 0.5 and row["n_compared"] == 1 and row["n_within_tol"] == 0
    assert row["status"] == "not reproduced (outside tolerance)"
    # the same cell at a raw 0.46 is inside
    ledger.record(reference.paper_vs_ours(ours.assign(value=paper + 0.46), "TRUE-T9"), chapter="02_true_scorers")
    ledger.clear("02_true_auc")
    row = ledger.table_ledger().set_index("table").loc["TRUE-T9"]
    assert row["n_within_tol"] == 1 and row["status"] == "partially reproduced"


def test_partially_reproduced_needs_a_reproduction_cell_within_tolerance():
    ledger.record(_lex([("frank", 3.0), ("summeval", -2.0)]), chapter="02_true_auc")
    ledger.record(_t3([("frank", 0.0)]), chapter="02_true_auc", role="imported")
    tab = ledger.table_ledger().set_index("table")
    assert tab.loc["TRUE-T9", "status"] == "not reproduced (outside tolerance)"
    assert tab.loc["TRUE-T9", "n_compared"] == 2 and tab.loc["TRUE-T9", "n_within_tol"] == 0


def test_one_preset_per_cell_other_configurations_are_not_counted():
    from tfc import scorers

    other = scorers.get("rougeL", use_stemmer=True).signature
    assert other != scorers.get("rougeL").signature
    ledger.record(_lex([("frank", 0.0), ("summeval", 0.0)], signature=other), chapter="02_true_auc",
                  note="stemmed ROUGE-L")
    ledger.record(_lex([("summeval", 2.0)]), chapter="02_true_auc")
    row = ledger.table_ledger().set_index("table").loc["TRUE-T9"]
    assert row["n_compared"] == 1 and row["n_within_tol"] == 0    # only the preset's summeval counts
    assert row["n_other_config"] == 1                              # frank, seen only by the other config
    assert row["status"] == "not reproduced (outside tolerance)"
    assert ledger.is_as_published(scorers.get("bleu4").signature)
    assert not ledger.is_as_published(scorers.get("bleu4", smooth_method="floor").signature)
    assert ledger.is_as_published("") and ledger.is_as_published("tfc.book.chapters.data")
    # a separately registered scorer (TRUE Table 8's ROUGE-L code) is its own as-published preset
    assert ledger.is_as_published(scorers.get("rougeL-coco").signature)
    assert not ledger.is_as_published(scorers.get("rougeL", tokenizer="space-cased", beta=1.2).signature)
    # TRUE Table 9's presets: the SQuAD-normalised scorers; the raw-text scorer with that option is another config
    assert ledger.is_as_published(scorers.get("rougeL-squad").signature)
    assert ledger.is_as_published(scorers.get("bleu4-squad").signature)
    assert not ledger.is_as_published(scorers.get("bleu4", normalize="squad").signature)
    assert not ledger.is_as_published(scorers.get("bleu4-squad", smooth_method="none").signature)


def test_tolerance_per_table():
    assert ledger.tolerance("TRUE-T9") == 0.5 and ledger.tolerance("TRUE-T8") == 0.005
    with pytest.raises(KeyError, match="NOPE"):
        ledger.tolerance("NOPE")


def test_constants_are_not_comparisons():
    setup = pd.DataFrame({"row": ["length_analysis_n_bins", "length_analysis_examples_per_bin"],
                          "column": "setup", "value": [6, 1000], "signature": "tfc.meta.bins"})
    with pytest.raises(ValueError, match="constant"):
        ledger.record(reference.paper_vs_ours(setup, "TRUE-IT"), chapter="02_true_length")
    assert ledger.is_constant("Q2-IT", "q2_threshold", "x") and not ledger.is_constant("TRUE-T3", "frank", "f1")
    assert ledger.collected().empty


def test_counts_per_category():
    ledger.record(_lex([("frank", 0.0)]), chapter="02_true_auc")
    ledger.record(_t3([("frank", 0.0)]), chapter="02_true_auc", role="imported")
    c = ledger.counts(ledger.table_ledger())
    assert c["partial"] >= 1 and c["imported-only"] >= 1
    assert c["reproduction cells"] == 1 and c["imported cells"] == 1
    assert set(ledger.CATEGORIES.values()) <= set(c)


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
    assert row["status"] == "not reproduced (outside tolerance)" and row["n_compared"] == 1


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
    with pytest.raises(ValueError, match="role"):
        ledger.record(good, chapter="02_true_auc", role="schematic")
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
    ledger.figure("TRUE-F2", chapter="02_true_auc", role="imported", note="imported metrics")
    ledger.figure("QAGS-F1", chapter="03_qags", note="redrawn pipeline")
    figs = ledger.figure_ledger().set_index("figure")
    assert figs.loc["TRUE-F2", "status"] == "imported only"
    assert figs.loc["QAGS-F1", "status"] == "schematic" and figs.loc["QAGS-F1", "role"] == "schematic"
    assert figs.loc["Q2-F2", "status"] == "schematic"                   # a diagram, even unrecorded
    with pytest.raises(ValueError, match="role"):
        ledger.figure("TRUE-F1", chapter="02_true_length", role="guess")
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


def test_misses_lists_reproduction_cells_outside_tolerance_with_their_cause(ledger_dir, monkeypatch, tmp_path):
    """The worst run per cell decides; stand-ins never appear; a cause line matches by full regex, else
    "not explained yet"."""
    causes = tmp_path / "misses.csv"
    causes.write_text("table,rows,columns,chapter,section,cause,settles\n"
                      "TRUE-T9,summeval,rouge_l,02_true_scorers,Why some cells differ,ties,\n"
                      "TRUE-T9,summ,rouge_l,x,y,a prefix must not match,\n"
                      "TRUE-T9,frank,rouge_l,02_true_scorers,Why some cells differ,open: a sensitivity only,the code\n")
    monkeypatch.setattr(ledger, "MISSES_CSV", causes)
    ledger.record(_lex([("frank", 0.3), ("summeval", 2.0), ("mnbm", -0.6)]), chapter="02_true_auc")
    ledger.record(_lex([("frank", 0.7)]), chapter="02_true_scorers")        # frank's worse run: outside
    ledger.record(_t3([("mnbm", 10.0)]), chapter="02_true_scorers", role="stand-in")
    m = ledger.misses().set_index("row")
    assert sorted(m.index) == ["frank", "mnbm", "summeval"] and set(m["table"]) == {"TRUE-T9"}
    assert m.loc["frank", "delta"] == pytest.approx(0.7) and m.loc["frank", "chapter"] == "02_true_scorers"
    assert m.loc["summeval", "cause"] == "ties" and m.loc["summeval", "section"] == "Why some cells differ"
    assert m.loc["mnbm", "cause"] == "not explained yet" and m.loc["mnbm", "section"] == ""
    assert (m.loc["summeval", "evidence"], m.loc["frank", "evidence"], m.loc["mnbm", "evidence"]) == \
        ("cause shown", "cause open", "none")
    assert (m.loc["frank", "settles"], m.loc["summeval", "settles"], m.loc["mnbm", "settles"]) == ("the code", "", "")
    causes.write_text("table,rows,columns,chapter,section,cause,settles\nTRUE-T9,(,rouge_l,x,y,z,\n")
    with pytest.raises(Exception):
        ledger.misses()                                                   # a bad pattern fails loudly
    causes.write_text("table,rows,columns,chapter,section,cause,settles\nTRUE-T9,frank,rouge_l,x,y,open: why, \n")
    with pytest.raises(ValueError, match="TRUE-T9 frank rouge_l"):
        ledger.miss_causes()                                              # an open cause must name what settles it
    causes.write_text("table,rows,columns,chapter,section,cause\nTRUE-T9,frank,rouge_l,x,y,ties\n")
    with pytest.raises(ValueError, match="settles"):
        ledger.miss_causes()                                              # the column itself is required


def test_open_causes_groups_the_open_cells_by_what_would_settle_them():
    miss = pd.DataFrame({"table": ["T11", "B", "A", "T3", "D"], "evidence": ["cause open", "cause open", "cause shown",
                                                                        "cause open", "none"],
                         "settles": ["code", "rows", "", "code", ""]})
    got = ledger.open_causes(miss)
    assert got.to_dict("list") == {"settles": ["code", "rows"], "cells": [2, 1], "tables": ["T3, T11", "B"]}
    assert list(ledger.open_causes(miss.iloc[[2, 4]]).columns) == ["settles", "cells", "tables"]
    assert len(ledger.open_causes(miss.iloc[[2, 4]])) == 0


def test_every_miss_cause_names_a_section_of_its_chapter():
    from pathlib import Path

    nb = Path(__file__).resolve().parents[1] / "notebooks"
    m = ledger.miss_causes()
    assert len(m) and set(m["table"]) <= set(reference.index()["table"])
    for r in m.itertuples():
        text = (nb / f"{r.chapter}.md").read_text()
        assert any(line.lstrip("#").strip() == r.section for line in text.splitlines() if line.startswith("#")), \
            (r.chapter, r.section)
        assert len(r.cause) > 10
        assert (len(r.settles) > 10) == r.cause.startswith("open:"), (r.table, r.rows)   # only open causes name it
