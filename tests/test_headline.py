"""tfc.book.chapters.overview: the front page's headline table and figure are read from the ledger, never typed."""
import re

import matplotlib

matplotlib.use("Agg")

import jupytext  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from tfc.book.chapters import overview as H  # noqa: E402
from tfc import scorers  # noqa: E402
from tfc.book import ledger, reference
from tfc.results.tables import TRUE9  # noqa: E402

ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent


pytestmark = pytest.mark.usefixtures("ledger_dir")  # conftest: a private ledger per test


def _frame(table, column, rows_values, signature, published_as=None):
    """A paper_vs_ours frame: ``ours`` values beside ``table``'s ``published_as`` column (default: ``column``)."""
    ours = pd.DataFrame({"row": [r for r, _ in rows_values], "value": [v for _, v in rows_values],
                         "signature": signature})
    return reference.paper_vs_ours(ours, table, column=published_as or column, decimals=None)


def _true9(signature, value, table="TRUE-T3", column="anli_t5_11b"):
    """Nine TRUE sets at ``value`` (+ the set's position / 10), and the nine-set mean row."""
    rows = [(d, value + i / 10) for i, d in enumerate(TRUE9)]
    mean = sum(v for _, v in rows) / len(rows)
    rows = rows + ([("avg_wo_vitc_fever", mean)] if table != "AS-T3" else [("avg_zs_wo_paws_vitc_fever", mean)])
    return _frame(table, column, rows, signature).dropna(subset=["paper"])


def _row(head, paper, row=None):
    h = head[head["paper"] == paper]
    if row is not None:
        h = h[h["row"] == row]
    assert len(h) == 1
    return h.iloc[0]


def test_one_row_per_main_result_with_published_values_from_the_reference():
    head = H.headline()
    assert list(head["paper"]) == [h.paper for h in H.HEADLINES]
    assert set(head["paper"]) == {"TRUE", "QAGS", "Q²", "AlignScore", "WeCheck"}
    for spec, r in zip(H.HEADLINES, head.itertuples(index=False)):
        assert r.published == pytest.approx(reference.value(spec.table, spec.row, spec.column) * spec.scale)
    # an empty ledger: no value of ours, and the status says why
    assert head["ours"].isna().all()
    assert head["status"].str.startswith(("not recorded yet", "not reproducible offline")).all()


def test_ours_is_the_best_own_computation_not_an_imported_run():
    ledger.record(_true9("nli.nli-minilm-doc.aaaa", 60.0), chapter="02_true_auc", role="stand-in")
    ledger.record(_true9("bertscore.minilm-l6.bbbb", 70.0, column="bertscore"), chapter="02_true_auc",
                  role="stand-in")
    ledger.record(_true9("imported:src/summac_zs", 79.0, column="summac_zs"), chapter="02_true_auc")
    r = _row(H.headline(), "TRUE")
    assert r["signature"] == "bertscore.minilm-l6.bbbb"          # best of ours, any column; imported excluded
    assert r["ours"] == pytest.approx(70.4)
    assert r["delta"] == pytest.approx(70.4 - reference.value("TRUE-T3", "avg_wo_vitc_fever", "anli_t5_11b"))
    assert r["status"].startswith("stand-in") and r["chapter"] == "02_true_auc"


def test_method_rows_take_only_their_family_and_pick_up_a_new_model():
    ledger.record(_true9("nli.nli-minilm-doc.aaaa", 75.0, table="AS-T3", column="alignscore_base"),
                  chapter="05_alignscore", role="stand-in")
    ledger.record(_true9("alignscore.alignscore-minilm-3way-chunk.cccc", 60.0, table="AS-T3",
                         column="alignscore_base"), chapter="05_alignscore", role="stand-in")
    r = _row(H.headline(), "AlignScore")
    assert r["signature"].startswith("alignscore.") and r["ours"] == pytest.approx(60.4)
    # a newly trained in-house model recorded by the chapter shows up without a change to tfc.book.chapters.overview
    ledger.record(_true9("alignscore.alignscore-minilm-v2-chunk.dddd", 66.0, table="AS-T3",
                         column="alignscore_base"), chapter="05_alignscore", role="stand-in")
    r = _row(H.headline(), "AlignScore")
    assert r["signature"] == "alignscore.alignscore-minilm-v2-chunk.dddd" and r["ours"] == pytest.approx(66.4)


def test_lower_is_better_scaling_and_reproduced_status():
    q2 = _frame("Q2-T2", "q2_nli", [("dodeca_inconsistent", 0.30), ("dodeca_consistent", 0.70)], "q2.rule.eeee")
    ledger.record(q2, chapter="04_q2", role="stand-in")
    q2b = _frame("Q2-T2", "q2_nli", [("dodeca_inconsistent", 0.25), ("dodeca_consistent", 0.60)], "q2.other.ffff")
    ledger.record(q2b, chapter="04_q2", role="stand-in")
    head = H.headline()
    inc, con = _row(head, "Q²", "dodeca_inconsistent"), _row(head, "Q²", "dodeca_consistent")
    assert inc["ours"] == pytest.approx(25.0) and inc["signature"] == "q2.other.ffff"     # lower is better
    assert con["ours"] == pytest.approx(70.0) and con["signature"] == "q2.rule.eeee"
    assert inc["published"] == pytest.approx(100 * reference.value("Q2-T2", "dodeca_inconsistent", "q2_nli"))
    # a reproduction within the table's tolerance is "reproduced"; a smoke run says so
    pub = reference.value("QAGS-T1", "qags_xsum", "qags")
    ledger.record(_frame("QAGS-T1", "qags", [("qags_xsum", pub + 0.2)], scorers.get("qags", preset="as-published").signature),
                  chapter="03_qags", mode="smoke")
    r = _row(H.headline(), "QAGS", "qags_xsum")
    assert r["status"].startswith("reproduced") and "smoke" in r["status"]
    # the other QAGS cell was not recorded by the chapter, which did record the table
    assert _row(H.headline(), "QAGS", "qags_cnndm")["status"].startswith("no value of ours")


def test_display_and_html():
    ledger.record(_true9("wecheck.wecheck-minilm-doc.hhhh", 62.0, table="WC-T1", column="wecheck"),
                  chapter="06_wecheck", role="stand-in")
    head = H.headline()
    show = H.display_frame(head, built_chapters={"06_wecheck"})
    assert list(show.columns) == ["Paper", "Main result", "Published", "Ours", "Δ", "Status", "Ours from"]
    html = H.to_html(head, built_chapters={"06_wecheck"})
    assert "tfc-headline" in html and 'href="06_wecheck.html"' in html
    assert ">WeCheck<" in html and "wecheck-minilm-doc" in html.replace("<wbr>", "")
    # one decimal throughout
    nums = re.findall(r'<td class="tfc-num">([^<]+)</td>', html)
    assert nums and all(n == "—" or re.fullmatch(r"−?\d+\.\d", n) for n in nums)


def test_true_auc_matrix_and_figure(monkeypatch):
    monkeypatch.setattr(H, "inhouse_models", lambda: ["nli-minilm", "wecheck-minilm"])
    ledger.record(_true9("nli.nli-minilm-doc.aaaa", 60.0), chapter="02_true_auc", role="stand-in")
    ledger.record(_true9("nli.nli-minilm-sen.abab", 58.0), chapter="02_true_auc", role="stand-in")
    ledger.record(_true9("wecheck.wecheck-minilm-doc.hhhh", 62.0, table="WC-T1", column="wecheck"),
                  chapter="06_wecheck", role="stand-in")
    f1 = scorers.get("f1").signature                                           # the as-published preset
    ledger.record(_true9(f1, 64.0, column="f1"), chapter="02_true_auc")
    ledger.record(_true9("imported:src/summac_zs", 79.0, column="summac_zs"), chapter="02_true_auc")
    # the same NLI signature on a WeCheck sample: the figure reads NLI from its own table (TRUE-T3)
    ledger.record(_true9("nli.nli-minilm-doc.aaaa", 50.0, table="WC-T1", column="nli_warmup"),
                  chapter="06_wecheck", role="stand-in")
    m = H.true_auc_matrix()
    kinds = m.drop_duplicates("system").set_index("system")["kind"]
    assert set(kinds[kinds == "paper"].index) == {"ANLI T5-11B (TRUE) (published)", "WeCheck (published)"}
    assert list(kinds.iloc[:2]) == ["paper", "paper"]                          # published rows on top
    assert "nli-minilm-doc (in-house model)" in kinds.index                     # best NLI signature only
    assert "nli-minilm-sen (in-house model)" not in kinds.index
    assert {"imported", "lexical", "in-house", "paper"} <= set(kinds)
    w = H.matrix_wide(m)
    assert list(w.columns) == list(TRUE9) + ["mean"]
    assert w.loc["nli-minilm-doc (in-house model)", "mean"] == pytest.approx(60.4)
    assert w.loc["ANLI T5-11B (TRUE) (published)", "frank"] == reference.value("TRUE-T3", "frank", "anli_t5_11b")
    fig = H.true_auc_figure(m)
    assert fig.axes and fig.axes[0].get_title()
    nums = H.summary_numbers(H.headline(), ledger.table_ledger(), m)
    assert nums["best_inhouse"] == "wecheck-minilm-doc" and nums["best_inhouse_mean"] == "62.4"
    assert nums["imported_max_abs_delta"] != "n/a" and nums["true_ours"] == "64.4"   # f1 is ours, recomputed


def test_a_non_preset_configuration_is_never_ours_and_imported_never_a_reproduction():
    pub = reference.value("TRUE-T3", "avg_wo_vitc_fever", "anli_t5_11b")
    best = scorers.get("f1", normalisation="q2-spacy").signature                # not the preset
    ledger.record(_true9(best, pub - 1.0, column="f1"), chapter="02_true_auc")
    ledger.record(_true9(scorers.get("f1").signature, 60.0, column="f1"), chapter="02_true_auc")
    t = _row(H.headline(), "TRUE")
    assert t["signature"] == scorers.get("f1").signature and t["ours"] == pytest.approx(60.4)
    # imported outputs never become ours, whatever role an old record claims
    old = ledger.collected()
    imp = old.iloc[:1].assign(signature="imported:src/x", ours=99.0, role="reproduction", row="avg_wo_vitc_fever")
    head = H.headline(pd.concat([old, imp], ignore_index=True))
    assert _row(head, "TRUE")["signature"] != "imported:src/x"


def test_table_counts_per_category():
    ledger.record(_true9(scorers.get("f1").signature, 64.0, column="f1"), chapter="02_true_auc")
    ledger.record(_true9("imported:src/summac_zs", 79.0, column="summac_zs"), chapter="02_true_auc",
                  role="imported")
    tables = ledger.table_ledger()
    c = H.table_counts(tables)
    assert int(c["tables"].sum()) == len(tables) - int((tables["status"] == "not applicable").sum())
    nums = H.summary_numbers(H.headline(), tables)
    assert int(nums["n_tables_partial"]) + int(nums["n_tables_outside"]) >= 1     # TRUE-T3 via f1
    assert nums["n_tables_not_yet"] == str(int((tables["status"] == "not reproduced yet").sum()))


def test_empty_ledger_figure_and_numbers():
    m = H.true_auc_matrix()
    assert m.empty
    assert H.true_auc_figure(m).axes
    nums = H.summary_numbers(H.headline(), ledger.table_ledger(), m)
    assert nums["true_ours"] == "n/a" and nums["best_inhouse"] == "none recorded"


def test_the_front_page_reads_the_ledger_and_types_no_numbers():
    nb = jupytext.read(ROOT / "notebooks" / "00_overview.md")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "headline.headline()" in code and "headline.true_auc_matrix" in code
    assert not re.search(r"^\s*(def|class)\s", code, flags=re.M), "notebooks hold no def/class"
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    prose = re.sub(r"```.*?```", "", prose, flags=re.S)                 # code blocks
    prose = re.sub(r"\{(glue:\w+|doc)\}`[^`]*`", "", prose)              # glued values, links
    prose = re.sub(r"`[^`]*`", "", prose)                                # inline code
    prose = re.sub(r"\b(19|20)\d\d\b|× 100|T5-11B|Q²|Table \d+", "", prose)  # citation years, units, names
    typed = re.findall(r".{0,20}\d.{0,20}", prose)
    assert not typed, f"a number typed in the front page's prose: {typed}"


def test_overview_runs_after_the_chapters():
    from tfc.book.runner import RUN_LAST, notebooks

    stems = [p.stem for p in notebooks()]
    assert RUN_LAST == ("00_overview", "08_ledger")
    assert stems[-2:] == ["00_overview", "08_ledger"]
