"""tfc.book.readable: how the book shows a table (integers, one number of decimals per table, word headers)."""
import re

import numpy as np
import pandas as pd
import pytest

from tfc.book import readable as R


def _cells(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", html)]


def test_counts_are_integers_and_decimals_are_one_per_table():
    t = pd.DataFrame({"n_examples": [836.0, 2500.0], "auc": [81.25, 63.4], "other": [0.5, 1.0]})
    f = R.formatted(t)
    assert f["examples"].tolist() == ["836", "2500"]            # no "836.0"
    assert f["AUC"].tolist() == ["81.25", "63.40"]               # the table's decimals: 2
    assert f["other"].tolist() == ["0.50", "1.00"]
    assert R.table_decimals(t) == 2


def test_decimals_follow_the_rounding_of_the_table_and_cap_at_three():
    assert R.table_decimals(pd.DataFrame({"a": [1.5, 2.25]})) == 2
    assert R.table_decimals(pd.DataFrame({"a": [0.123456, 2.0]})) == 3
    assert R.table_decimals(pd.DataFrame({"a": [81.2, 70.0]})) == 1
    assert R.formatted(pd.DataFrame({"a": [1 / 3]}))["a"].iloc[0] == "0.333"


def test_a_zero_delta_beside_percentages_keeps_their_decimals():
    t = pd.DataFrame({"pct_consistent paper": [33.7], "pct_consistent ours": [33.7],
                      "pct_consistent delta": [0.0], "n_examples paper": [836.0], "n_examples ours": [836.0],
                      "n_examples delta": [0.0]})
    f = R.formatted(t)
    assert list(f.columns) == [("% consistent", "paper"), ("% consistent", "ours"), ("% consistent", "Δ"),
                               ("examples", "paper"), ("examples", "ours"), ("examples", "Δ")]
    assert f.iloc[0].tolist() == ["33.7", "33.7", "0.0", "836", "836", "0"]


def test_thousands_separators_ids_signs_and_missing():
    t = pd.DataFrame({"rows": [1234.0, 63054.0], "bbcid": [12620805.0, 1.0], "delta": [-5.0, -0.0001]})
    f = R.formatted(t)
    assert f["rows"].tolist() == ["1,234", "63,054"]
    assert f["bbcid"].tolist() == ["12620805", "1"]              # an id keeps its digits
    assert f["Δ"].tolist() == ["−5.0", "0.0"]                     # a minus sign; none on a rounded zero
    assert R.cell_text(-0.04, 1) == "0.0"                        # no "-0.0"
    assert R.cell_text(float("nan"), 1) == R.MISSING and R.cell_text(None, 1) == R.MISSING
    assert R.cell_text(0.0004, 3, p_value=True) == "< 0.001"
    assert R.cell_text(np.int64(7), 2) == "7" and R.cell_text(True, 1) == "yes"


def test_headers_become_words_and_identifiers_stay():
    assert R.header("pct_consistent") == "% consistent"
    assert R.header("median_abs_delta") == "median |Δ|"
    assert R.header("n_questions") == "# questions"
    assert R.header("anli_t5_11b") == "ANLI T5-11B"
    assert R.header("pos_rouge_l") == "pos ROUGE-L"
    assert R.header("n_examples paper") == "examples paper"
    for ident in ("imported:scale_score_true/summac_zs", "nli.nli-minilm-doc.3f63aa7dba", "examples/s", "Paper"):
        assert R.header(ident) == ident
    # no header of a formatted table is snake_case
    t = pd.DataFrame({"n_compared": [1], "max_abs_delta": [0.5], "standin_median_abs_delta": [0.1]})
    assert not any(re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", c) for c in R.formatted(t).columns)


def test_row_values_are_not_renamed():
    t = pd.DataFrame({"auc": [80.0, 70.5]}, index=pd.Index(["qags_cnndm", "avg_wo_vitc_fever"], name="row"))
    html = R.to_html(t)
    assert "qags_cnndm" in html.replace("<wbr>", "") and ">row<" in html


def test_html_wraps_escapes_and_marks_numbers():
    t = pd.DataFrame({"name": ["<b>x</b>", "alignscore.alignscore-minilm-3way-chunk.0e23b3e7ba"], "n": [1.0, 2.0]})
    html = R.to_html(t)
    assert html.startswith('<div class="tfc-table-wrap"><table class="dataframe tfc-table">')
    assert "&lt;b&gt;" in html and "<b>x</b>" not in html
    assert "<wbr>" in html                                        # the long signature may wrap
    assert '<td class="tfc-num">1</td>' in html
    assert "<th>" not in html.split("<tbody>")[1]                # a default RangeIndex is not shown


def test_html_columns_are_kept_raw_and_truncation_is_optional():
    t = pd.DataFrame({"chapter": ['<a href="x.html">x</a>'], "detail": ["y" * 200]})
    html = R.to_html(t, html_columns=["chapter"], max_colwidth=None)
    assert '<a href="x.html">x</a>' in html and "y" * 200 in html.replace("<wbr>", "")
    with pd.option_context("display.max_colwidth", 20):
        assert "…" in R.to_html(t)


def test_multiindex_headers_span_and_long_tables_are_cut():
    m = pd.DataFrame([[81.5, 63.4, -18.1]], index=["avg_wo_vitc_fever"],
                     columns=pd.MultiIndex.from_tuples([("anli_t5_11b", "paper"), ("anli_t5_11b", "ours"),
                                                        ("anli_t5_11b", "delta")]))
    html = R.to_html(m)
    assert '<th colspan="3">ANLI T5-11B</th>' in html and ">Δ<" in html and "−18.1" in html
    long = pd.DataFrame({"v": np.arange(100, dtype=float)})
    with pd.option_context("display.max_rows", 20, "display.min_rows", 10):
        cut = R.to_html(long)
    assert "90 more rows" in cut and len(_cells(cut)) == 11


def test_install_registers_the_dataframe_formatter():
    IPython = pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        assert R.install(shell)
        data, _ = shell.display_formatter.format(pd.DataFrame({"n_examples": [836.0]}))
        assert "tfc-table" in data["text/html"] and ">836<" in data["text/html"]
        R.uninstall(shell)
        data, _ = shell.display_formatter.format(pd.DataFrame({"n_examples": [836.0]}))
        assert "tfc-table" not in data.get("text/html", "")
    finally:
        R.uninstall(shell)
        InteractiveShell.clear_instance()


def test_the_book_runner_loads_the_extension():
    from tfc.book import runner as book

    assert "tfc.book.readable" in book.KERNEL_EXTENSIONS
    assert "--InteractiveShellApp.extensions=tfc.book.readable" in book.kernel_arguments()
    assert book.kernel_arguments()[-1] == "--IPKernelApp.log_level=ERROR"   # no per-chapter TCP notice on the console


def test_glue_plain_numbers():
    from tfc.book.glue import _plain

    assert _plain(2495.0) == 2495 and isinstance(_plain(2495.0), int)
    assert _plain(np.float64(0.25)) == 0.25 and _plain(np.int64(3)) == 3
    assert _plain("x") == "x" and _plain(True) is True


def test_a_transposed_record_is_judged_cell_by_cell():
    rec = pd.DataFrame({"value": {"training rows": 12345, "device": "cpu", "accuracy": 0.8123, "minutes": 12.0}})
    f = R.formatted(rec)["value"]
    assert f.tolist() == ["12,345", "cpu", "0.812", "12"]


def test_the_kernel_extension_also_quiets_progress_bars_and_the_widget_warning(monkeypatch):
    """Every chapter kernel loads tfc.book.readable: besides the table rendering, it turns off transformers'
    weight-loading progress bars and tqdm's "IProgress not found" warning (stderr noise on a page)."""
    import warnings

    from transformers.utils import logging as hf_logging

    from tfc.book import readable

    class Shell:      # the one piece of an IPython shell install() touches
        class display_formatter:
            formatters = {"text/html": type("F", (), {"for_type": staticmethod(lambda t, f: None)})()}

    monkeypatch.setattr(warnings, "filters", list(warnings.filters))     # the test leaves the filters as found
    hf_logging.enable_progress_bar()
    try:
        readable.load_ipython_extension(Shell())
        assert not hf_logging.is_progress_bar_enabled()
        with warnings.catch_warnings(record=True) as got:
            warnings.warn("IProgress not found. Please update jupyter and ipywidgets.")
        assert got == []
    finally:
        hf_logging.enable_progress_bar()
