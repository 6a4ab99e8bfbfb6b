"""All myst-nb glue keys of the book, in one place.

Notebooks call :func:`glue` with a key registered here; the book's pages reference the same keys
with ``{glue:}`` roles. ``tests/test_book_static.py`` checks that every key used in ``book/`` and
``notebooks/`` is registered, so a renamed key cannot leave a "Pending glue" hole in the book.
Add new keys to ``KEYS`` (key -> what it holds).
"""
from __future__ import annotations

KEYS: dict[str, str] = {
    # 00_overview
    "overview_true_t2_table": "TRUE Table 2 (counts, % consistent): paper / ours / delta",
    "overview_n_datasets_text": "number of TRUE datasets with text in the mirror",
    "overview_n_examples_text": "total examples over the TRUE datasets with text",
    "overview_max_abs_delta_pct": "largest |delta| of % consistent against TRUE Table 2",
    # --- 01_data (data layer) ---
    "data_n_sets": "number of registered datasets (all statuses)",
    "data_n_text_sets": "number of datasets loadable with text (text or approximate)",
    "data_t2_max_abs_delta_n": "TRUE T2: largest |delta| of # examples (the 9 text sets + FEVER, VitaminC)",
    "data_t2_max_abs_delta_pct": "TRUE T2: largest |delta| of % consistent",
    "data_t2_n_exact": "TRUE sets whose T2 count and % consistent match the paper exactly",
    "data_t2_n_sets": "TRUE sets compared in T2",
    "data_t2_off_sets": "TRUE sets that do not match T2 exactly",
    "data_len_close_sets": "TRUE sets whose T6/T7 cells are all within one word of the paper",
    "data_mnbm_max_paper": "TRUE T6: MNBM longest grounding (paper)",
    "data_mnbm_max_ours": "TRUE T6: MNBM longest grounding (ours)",
    "data_t8_rouge_higher": "TRUE T8: ROUGE-L pos/neg cells where ours > paper ('x of y')",
    "data_q2t9_max_abs_delta_both": "Q2 T9 largest |delta| when dodeca and MemNet files are pooled",
    "data_mnbm_rows": "MNBM rows rebuilt offline",
    "data_mnbm_pct": "MNBM % consistent over the rebuilt rows",
    "data_mnbm_missing_bbcid": "bbcid of the MNBM article missing offline",
    "data_t6_max_abs_delta": "TRUE T6 (grounding words): largest |delta| over all cells",
    "data_t6_max_abs_delta_wo_mnbm_max": "TRUE T6: largest |delta| without the MNBM max cell",
    "data_t6_max_cell_wo_mnbm_max": "TRUE T6: dataset and statistic of that cell",
    "data_t7_max_abs_delta": "TRUE T7 (generated words): largest |delta|",
    "data_tokenizer_mae_whitespace": "T6+T7 mean |delta| with the whitespace tokenizer",
    "data_tokenizer_mae_regex": "T6+T7 mean |delta| with the regex tokenizer",
    "data_t8_max_abs_delta": "TRUE T8 (ROUGE-L, token F1 by class): largest |delta|",
    "data_t8_max_abs_delta_f1": "TRUE T8: largest |delta| of the token-F1 cells",
    "data_t8_max_abs_delta_rouge": "TRUE T8: largest |delta| of the ROUGE-L cells",
    "data_q2t9_max_abs_delta": "Q2 T9 (response lengths): largest |delta|",
    "data_leak_removed_total": "pairs removed by the leakage filter over all training sources",
    "data_leak_removed_wecheck_paws": "wecheck_paws pairs removed by the leakage filter",
    "data_leak_n_in_wecheck_paws": "wecheck_paws pairs before the leakage filter",
    "data_leak_removed_wecheck_dialogue": "wecheck_dialogue pairs removed by the leakage filter",
    "data_leak_removed_begin_test": "begin_test pairs removed by the leakage filter",
    # --- 02_true (meta-evaluation chapters) ---
    # --- scorers (lexical, BERTScore, NLI, SummaC sections) ---
    # --- other chapters ---
}


def register(key: str, description: str) -> None:
    """Register a key at run time (for chapters added by users; the book's own keys live in KEYS)."""
    KEYS.setdefault(key, description)


def glue(key: str, value, display: bool = False):
    """``myst_nb.glue`` with a registered-key check (imports myst_nb lazily)."""
    if key not in KEYS:
        raise KeyError(f"glue key {key!r} is not registered in tfc.glue.KEYS")
    from myst_nb import glue as _glue

    return _glue(key, value, display=display)
