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
    "data_mnbm_avg_paper": "TRUE T6: MNBM mean grounding words (paper)",
    "data_mnbm_avg_ours_full": "MNBM mean grounding words over all rebuilt rows (always the full set)",
    "data_mnbm_avg_if_missing_longest": "MNBM mean grounding words if the 5 missing rows had the paper's max length",
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
    "true_auc_t3_table": "TRUE T3: imported SummaC-ZS and BERTScore-F vs the paper (paper / ours / delta / signature)",
    "true_auc_t9_table": "TRUE T9: imported SummaC-Conv vs the paper",
    "true_auc_as_t3_table": "AlignScore T3: imported SummaC-ZS, SummaC-Conv, BERTScore-F and UniEval vs the paper",
    "true_auc_extra_table": "AUC of imported metrics that no paper reports on TRUE (SCALE-xl) and of ensembles",
    "true_auc_other_table": "FRANK / Maynez baseline outputs joined to TRUE-FRANK / MNBM rows: AUC vs TRUE T3 and AS-T3",
    "true_auc_zs_t3_max": "largest |delta| of imported SummaC-ZS against TRUE T3 (11 datasets)",
    "true_auc_zs_t3_max_row": "dataset of that largest |delta|",
    "true_auc_zs_t3_avg_delta": "delta of the 9-dataset average of imported SummaC-ZS against TRUE T3",
    "true_auc_zs_as_max": "largest |delta| of imported SummaC-ZS against AlignScore T3 (11 datasets)",
    "true_auc_conv_t9_max": "largest |delta| of imported SummaC-Conv against TRUE T9 (11 datasets)",
    "true_auc_conv_t9_max_row": "dataset of that largest |delta|",
    "true_auc_conv_t9_n_within": "number of TRUE T9 SummaC-Conv cells reproduced within 0.1",
    "true_auc_conv_as_max": "largest |delta| of imported SummaC-Conv against AlignScore T3 (11 datasets)",
    "true_auc_conv_as_max_row": "dataset of that largest |delta|",
    "true_auc_best_ensemble": "best ensemble of the imported metrics (members)",
    "true_auc_best_ensemble_avg": "its 9-dataset average AUC",
    "true_auc_best_single_avg": "best single imported metric's 9-dataset average AUC (SCALE-xl excluded)",
    "true_auc_disagreement_table": "ensemble disagreement: members right when the ensemble is right and >=1 member wrong",
    "true_auc_disagreement_n": "number of such cases",
    "true_auc_roc_fig": "ROC curves of the imported metrics on the 11 TRUE datasets (TRUE Fig. 2 analogue)",
    "true_acc_t11_table": "TRUE T11: dev accuracy at dev-tuned thresholds, imported SummaC-ZS vs the paper",
    "true_acc_zs_t11_max": "largest |delta| of imported SummaC-ZS accuracy against TRUE T11",
    "true_acc_zs_t11_avg_delta": "delta of the 9-dataset average accuracy against TRUE T11",
    "true_acc_balanced_table": "balanced accuracy and thresholds of the imported metrics (dev-tuned)",
    "true_acc_splits_table": "TRUE T12 datasets: which test splits and scores exist offline",
    "true_acc_split_half_table": "accuracy on half B: threshold tuned on B itself vs tuned on half A",
    "true_acc_split_half_mean_gap": "mean optimism (self-tuned minus dev-tuned accuracy) over datasets and metrics",
    "true_acc_split_half_max_gap": "largest such optimism",
    "true_sig_table": "significance marks by paired bootstrap, best vs second best per dataset",
    "true_sig_n": "bootstrap resamples used",
    "true_sig_n2": "resamples of the stability re-run (2n)",
    "true_sig_seconds": "wall time of the bootstrap over all datasets at n",
    "true_sig_marks_changed": "number of datasets whose mark changes between n and 2n",
    "true_sig_max_p_change": "largest change of a p-value between n and 2n",
    "true_sig_n_marked": "number of datasets with a significant best metric (p < 0.05)",
    "true_sig_stability_table": "marks and p-values at n and 2n side by side",
    "true_sig_pairwise_table": "paired-bootstrap AUC difference SummaC-Conv minus SummaC-ZS per dataset",
    "true_sig_pairwise_n_sig": "datasets where that difference is significant after Holm correction",
    "true_sig_pairwise_fig": "forest plot of that difference with bootstrap intervals",
    "true_len_setup_table": "TRUE Fig. 1 set-up (bins, examples per bin): paper / ours / delta",
    "true_len_table": "AUC per grounding-length bin of the imported metrics (TRUE Fig. 1 analogue)",
    "true_len_fig": "AUC by grounding length (TRUE Fig. 1 analogue)",
    "true_len_n_examples": "examples pooled for the length analysis",
    "true_len_zs_drop": "SummaC-ZS AUC in the shortest bin minus in the longest bin (points)",
    "true_len_worst_bin_metric_count": "number of metrics whose lowest AUC is in a bin of 200+ words",
    "true_len_n_metrics": "number of metrics in the length analysis",
    "true_abs_table": "AUC per abstractiveness bin (% novel unigrams; WeCheck Fig. 3 analogue)",
    "true_abs_fig": "AUC by abstractiveness (WeCheck Fig. 3 analogue)",
    "true_abs_n_nan": "examples without a word in the generated text (excluded from abstractiveness bins)",
    "true_abs_zs_drop": "SummaC-ZS AUC in the least minus the most abstractive bin with both classes (points)",
    # --- scorers (lexical, BERTScore, NLI, SummaC sections) ---
    "scorers_nli_record": "training record of the in-house NLI checkpoint (table)",
    "scorers_nli_train_minutes": "training time of tfc/nli-minilm, minutes",
    "scorers_nli_table": "NLI (tfc/nli-minilm) AUC vs TRUE-T3 ANLI: paper / ours / delta",
    "scorers_nli_avg": "nine-dataset mean AUC of tfc/nli-minilm",
    "scorers_nli_paws": "PAWS AUC of tfc/nli-minilm",
    "scorers_nli_best_lexical_avg": "best nine-dataset mean AUC among the lexical scorers",
    "scorers_nli_modes_table": "tfc/nli-minilm AUC, document vs sentence mode",
    "scorers_nli_sentence_gain": "mean AUC change, sentence minus document mode",
    "scorers_lex_n_examples": "examples scored by the lexical metrics in 02_true_scorers",
    "scorers_lex_table": "F1 (T3), ROUGE-L and BLEU-4 (T9) AUC: paper / ours / delta per TRUE dataset",
    "scorers_lex_fig": "scatter of our lexical AUCs against TRUE's",
    "scorers_f1_max_abs_delta": "largest |delta| of token-F1 AUC vs TRUE-T3 over the nine sets",
    "scorers_f1_avg_delta": "delta of the nine-set average token-F1 AUC vs TRUE-T3",
    "scorers_rougel_max_abs_delta": "largest |delta| of ROUGE-L AUC vs TRUE-T9",
    "scorers_rougel_avg_delta": "delta of the nine-set average ROUGE-L AUC vs TRUE-T9",
    "scorers_bleu4_max_abs_delta": "largest |delta| of BLEU-4 AUC vs TRUE-T9",
    "scorers_bleu4_avg_delta": "delta of the nine-set average BLEU-4 AUC vs TRUE-T9",
    "scorers_lex_n_within_1": "published lexical cells our AUC matches within 1 point",
    "scorers_lex_n_cells": "published lexical cells compared",
    "scorers_lex_over_1": "list of lexical cells more than 1 point from the paper (metric, dataset, delta)",
    "scorers_variants_table": "AUC of BLEU smoothing and ROUGE stemming variants",
    "scorers_bleu_exp_mean": "mean AUC of BLEU-4 with sacrebleu's exp smoothing",
    "scorers_bleu_none_mean": "mean AUC of BLEU-4 without smoothing",
    "scorers_bert_table": "BERTScore-P MiniLM vs TRUE-T3 bertscore (different encoder)",
    "scorers_bert_avg_delta": "delta of the nine-set average BERTScore AUC (MiniLM vs DeBERTa-xl)",
    "scorers_bert_n_scored": "examples with a cached MiniLM BERTScore",
    "scorers_bert_chunking_table": "per dataset: BERTScore rows with a chunked grounding, max chunks, truncated outputs",
    "scorers_bert_rows_chunked": "BERTScore rows whose grounding needed more than one chunk",
    "scorers_bert_max_abs_delta": "largest |delta| of MiniLM BERTScore AUC vs TRUE-T3 bertscore over the nine sets",
    # --- 03_qags / 04_q2 (QG-QA scorers) ---
    # --- 05_alignscore ---
    # --- 06_wecheck ---
    # --- 07_byoc, ledger, worked example, provenance (book as a whole) ---
    "ledger_n_tables": "published tables in the reference INDEX (all five papers)",
    "ledger_n_reproduced": "tables with status 'reproduced'",
    "ledger_n_partial": "tables with status 'partially reproduced'",
    "ledger_n_offline": "tables with status 'not reproducible offline'",
    "ledger_n_not_yet": "tables with status 'not reproduced yet'",
    "ledger_n_cells": "published cells compared by the same system (reproduction role), all tables",
    "ledger_n_cells_within": "of those, cells within their table's tolerance",
    "ledger_n_published": "published cells in all tables",
    "ledger_n_standin": "published cells set beside a stand-in model only or also",
    "ledger_n_figures": "paper figures listed in tfc/ledger_figures.csv",
    "ledger_n_figures_drawn": "paper figures a chapter draws an analogue of",
    "ledger_status_fig": "bar chart: tables per paper and status",
    "byoc_tiny_signature": "signature of the NLI scorer built on the demo's tiny random checkpoint",
    "byoc_tiny_n_rows": "rows the demo scored with the tiny checkpoint",
    "byoc_tiny_auc": "AUC of the tiny random checkpoint on those rows (chance level expected)",
    "byoc_scorer_names": "registry names after registering the demo scorer",
    "teach_true_diagram": "pipeline diagram of the TRUE meta-evaluation",
    "teach_data_diagram": "pipeline diagram of the data layer",
    # --- benchmarks / robustness ---
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
