"""The dataset registry: one :class:`DatasetSpec` per dataset, with what its data card states."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from tfc.data import builders as B
from tfc.data import training_builders as T

STATUSES = ("text", "label-only", "approximate", "unavailable")
ROLES = ("eval", "train")


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    group: str                      # TRUE | SummaC | scores | Q2 paper | training
    task: str                       # summarization | dialogue | paraphrase | fact verification | NLI | STS
    status: str                     # text | label-only | approximate | unavailable
    role: str                       # eval | train (never evaluate on role=train)
    source: str                     # upstream repository (commit / path detail lives in data/MANIFEST)
    licence: str
    rule: str                       # binarisation rule in plain words
    raw_files: tuple[str, ...] = ()
    builder: Callable | None = None
    splits: tuple[str, ...] = ("dev",)
    gaps: str = "none known"
    reason: str = ""                # why unavailable / label-only
    crosscheck: str = ""            # how the build was checked
    label_space: str = "binary (1 = consistent)"
    extra_columns: tuple[str, ...] = field(default=())
    # False only for an evaluation set added after the in-house training mixes were filtered: as a leakage
    # target it would change those filters, and every committed run that samples from them (say why in gaps)
    leakage_target: bool = True

    def __post_init__(self):
        assert self.status in STATUSES and self.role in ROLES, self


_TRUE_SRC = "google-research/true (CSV as committed in asappresearch/scale-score)"


def _load_polytope():
    import tfc.data

    return tfc.data.load("summac_polytope")  # reuses the cached build


def _true_csv_builder(name):
    return lambda: B.true_csv(name)


SPECS: list[DatasetSpec] = [
    # ------------------------------------------------------------------ TRUE, with text
    DatasetSpec("frank", "TRUE", "summarization", "text", "eval", _TRUE_SRC + "; artidoro/frank", "MIT",
                "A summary is consistent when the FRANK annotators found no factual error in any of its sentences "
                "(TRUE's labels, read from TRUE's CSV).",
                ("true/frank.csv",), _true_csv_builder("frank"),
                gaps="Raw sentence-level FRANK annotations are not offline, so the label rule cannot be re-run; "
                     "the CSV is checked against TRUE's label vector.",
                crosscheck="labels = TRUE label vector"),
    DatasetSpec("summeval", "TRUE", "summarization", "text", "eval", _TRUE_SRC + "; Yale-LILY/SummEval",
                "MIT (annotations); CNN/DM text own terms",
                "Consistent only when all three expert annotators gave the top consistency score (5).",
                ("true/summeval.csv",), _true_csv_builder("summeval"),
                gaps="Individual expert scores are not offline (only their mean, see summeval_scores).",
                crosscheck="labels = TRUE label vector; = (expert mean == 5) on the BARTScore copy"),
    DatasetSpec("mnbm", "TRUE", "summarization", "text", "eval",
                "google-research-datasets/xsum_hallucination_annotations + XSum articles (via AggreFact)",
                "CC BY 4.0 (annotations); XSum text BBC research terms",
                "Each of the three annotators votes consistent unless they marked an intrinsic or extrinsic "
                "hallucination; the summary is consistent when the majority votes consistent.",
                ("xsum_hallucination_annotations/hallucination_annotations_xsum_summaries.csv",
                 "xsum_hallucination_annotations/xsum_test_docs_from_aggrefact.jsonl"), B.mnbm,
                gaps="bbcid 12620805 has no article offline: its 5 summaries (TRUE rows 146, 587, 1134, 1953, "
                     "2127, all consistent) are missing, so 2495 rows and 250/2495 = 10.0% consistent "
                     "instead of 255/2500 = 10.2%. Ids keep TRUE's row positions (gaps at the 5 rows).",
                crosscheck="rebuilt from raw; labels = TRUE label vector at the same positions; text = "
                           "true/mnbm_reconstructed.csv"),
    DatasetSpec("qags_cnndm", "TRUE", "summarization", "text", "eval", "W4ngatang/qags", "none stated",
                "A summary sentence is consistent when at least 2 of its 3 MTurk workers answered yes; the "
                "summary is consistent only when every sentence is.",
                ("qags/mturk_cnndm.jsonl",), lambda: B.qags("qags_cnndm"),
                crosscheck="rebuilt from raw; identical to TRUE's CSV (text and labels)", extra_columns=("human_score",)),
    DatasetSpec("qags_xsum", "TRUE", "summarization", "text", "eval", "W4ngatang/qags", "none stated",
                "As QAGS-CNNDM: majority vote per sentence, consistent only when all sentences are.",
                ("qags/mturk_xsum.jsonl",), lambda: B.qags("qags_xsum"),
                crosscheck="rebuilt from raw; identical to TRUE's CSV (text and labels)", extra_columns=("human_score",)),
    DatasetSpec("begin", "TRUE", "dialogue", "text", "eval", "google/BEGIN-dataset (v1, commit 6f88199)", "CC BY 4.0",
                "A response is consistent when its gold label is 'entailment' (generic, hallucination, off-topic "
                "and contradiction are inconsistent).",
                ("begin/dev_05_24_21.tsv",), B.begin,
                crosscheck="rebuilt from raw; identical to TRUE's CSV"),
    DatasetSpec("q2", "TRUE", "dialogue", "text", "eval", "orhonovich/q-squared (cross_annotation.csv)", "MIT",
                "Each WoW turn gives two rows (dodeca, memnet); Q² marks inconsistency, so the label is 1 minus "
                "the system's annotation.",
                ("q2/cross_annotation.csv",), B.q2,
                crosscheck="rebuilt from raw; identical to TRUE's CSV"),
    DatasetSpec("dialfact", "TRUE", "dialogue", "text", "eval", _TRUE_SRC + "; salesforce/DialFact", "BSD-3-Clause",
                "Valid-split factual responses with evidence; consistent when the response is SUPPORTED by the "
                "concatenated evidence (TRUE's labels).",
                ("true/dialfact.csv",), _true_csv_builder("dialfact"),
                gaps="DialFact's raw valid split is not offline; TRUE's CSV is read and checked against the label vector."),
    DatasetSpec("paws", "TRUE", "paraphrase", "text", "eval", _TRUE_SRC + "; google-research-datasets/paws",
                "PAWS terms (free use, attribution)",
                "Sentence 2 is consistent with sentence 1 when PAWS labels the pair a paraphrase.",
                ("true/paws.csv",), _true_csv_builder("paws"),
                gaps="PAWS raw dev file not offline; TRUE's CSV is read and checked against the label vector."),
    # ------------------------------------------------------------------ TRUE, label only
    DatasetSpec("fever", "TRUE", "fact verification", "label-only", "eval", "asappresearch/scale-score label vectors",
                "CC BY-SA 3.0 (Wikipedia)", "A claim is consistent when FEVER labels it SUPPORTS given its evidence.",
                ("true/true_label_vectors_from_scale_score.json",), None,
                reason="FEVER dev text is not in the offline mirror; labels and imported peer scores only."),
    DatasetSpec("vitaminc", "TRUE", "fact verification", "label-only", "eval", "asappresearch/scale-score label vectors",
                "CC BY-SA 3.0 (Wikipedia)", "A claim is consistent when VitaminC labels it SUPPORTS given its evidence.",
                ("true/true_label_vectors_from_scale_score.json",), None,
                reason="VitaminC dev text is not in the offline mirror (static/vitaminc.zip is missing); labels and "
                       "imported peer scores only."),
    # ------------------------------------------------------------------ SummaC benchmark
    DatasetSpec("summac_cogensumm", "SummaC", "summarization", "text", "eval", "NKWBTB/SummaCoz (SummaC-format export)",
                "CC BY-SA 4.0", "A summary is consistent when the CoGenSumm annotators marked it Correct.",
                ("summac/cogensumm/cogensumm_test.jsonl",), B.summac_cogensumm, splits=("test",),
                gaps="The val cut (1281 rows) has no CNN/DM articles offline, so only the test cut is built."),
    DatasetSpec("summac_xsumfaith", "SummaC", "summarization", "text", "eval",
                "google-research-datasets/xsum_hallucination_annotations", "CC BY 4.0",
                "The most frequent hallucination_type over the pair's annotation rows decides: NULL means "
                "consistent (SummaC's rule, which differs from MNBM's per-worker majority). Val/test alternate "
                "over the 2500 pairs in file order.",
                ("xsum_hallucination_annotations/hallucination_annotations_xsum_summaries.csv",
                 "xsum_hallucination_annotations/xsum_test_docs_from_aggrefact.jsonl"),
                B.summac_xsumfaith, splits=("val", "test"),
                gaps="bbcid 12620805 (5 summaries) has no article; its slots are kept so the split does not shift."),
    DatasetSpec("summac_polytope", "SummaC", "summarization", "text", "eval", "hddbang/PolyTope via alejorba/AlignScore-summac-benchmark",
                "not verified", "Consistent when no error of any kind is logged for the summary (SummaC 'overall'); "
                "val/test alternate by row inside each workbook.",
                tuple(f"summac/polytope/Human_Annotation_Summarization_{m}.xlsm" for m in B.POLYTOPE_MODELS),
                B.summac_polytope, splits=("val", "test"),
                gaps="AlignScore relabels Polytope (only inaccuracy and positive-negative-aspect errors count); "
                     "this set follows SummaC's original rule."),
    DatasetSpec("summac_polytope_alignscore", "SummaC", "summarization", "text", "eval",
                "hddbang/PolyTope via alejorba/AlignScore-summac-benchmark", "not verified",
                "AlignScore's relabelling: inconsistent only when an intrinsic or extrinsic inaccuracy or a "
                "positive-negative-aspect error is logged (omission, addition and duplication do not count); "
                "same rows and val/test cut as summac_polytope.",
                tuple(f"summac/polytope/Human_Annotation_Summarization_{m}.xlsm" for m in B.POLYTOPE_MODELS),
                lambda: B.summac_polytope_alignscore(_load_polytope()), splits=("val", "test"),
                gaps="Use this set for AlignScore Tables 2/9 (PolyTope column)."),
    DatasetSpec("summac_frank", "SummaC", "summarization", "text", "eval", "artidoro/frank (via TRUE's CSV)", "MIT",
                "Consistent when no sentence carries a majority-confirmed error (labels from TRUE's FRANK CSV; "
                "SummaC applies the same sentence-majority rule to the sentence annotations).",
                ("true/frank.csv",), B.summac_frank, splits=("val",),
                gaps="Only the validation cut: the FRANK test text is not offline (see summac_frank_test)."),
    DatasetSpec("summac_summeval", "SummaC", "summarization", "approximate", "eval", "neulab/BARTScore (SummEval copy)",
                "MIT (annotations)", "SummaC: consistent when more than half of the 3 experts gave 5. Only the expert "
                "mean is offline, so means 3.67/4.0/4.33 are ambiguous and set to 0 (meta label_exact=False); "
                "the val/test alternation runs over the BARTScore file order, not SummEval's jsonl order.",
                ("bartscore_meta_eval/SUM_SummEval_data.json",), B.summac_summeval, splits=("val", "test"),
                gaps="Approximate labels and approximate split."),
    DatasetSpec("summac_factcc", "SummaC", "summarization", "unavailable", "eval", "salesforce/factCC", "BSD-3-Clause",
                "Consistent when the FactCC annotators marked the claim CORRECT.", (), None, splits=("val", "test"),
                reason="The FactCC annotated val/test files and their CNN/DM articles are not in the offline mirror."),
    DatasetSpec("summac_frank_test", "SummaC", "summarization", "unavailable", "eval", "artidoro/frank", "MIT",
                "As summac_frank.", (), None, splits=("test",),
                reason="FRANK's test-split text (human_annotations_sentence.json, benchmark_data.json) is above the "
                       "mirror's size limit; only hash-keyed labels exist offline."),
    # ------------------------------------------------------------------ continuous human scores
    DatasetSpec("qags_cnndm_scores", "scores", "summarization", "text", "eval", "W4ngatang/qags", "none stated",
                "human_score = mean over sentences of the majority-vote sentence label (QAGS' score); label = TRUE rule.",
                ("qags/mturk_cnndm.jsonl",), lambda: B.qags_scores("qags_cnndm_scores"), extra_columns=("human_score",)),
    DatasetSpec("qags_xsum_scores", "scores", "summarization", "text", "eval", "W4ngatang/qags", "none stated",
                "As qags_cnndm_scores.", ("qags/mturk_xsum.jsonl",), lambda: B.qags_scores("qags_xsum_scores"),
                extra_columns=("human_score",)),
    DatasetSpec("summeval_scores", "scores", "summarization", "text", "eval", "neulab/BARTScore (SummEval copy)",
                "MIT (annotations)", "human_score = mean of the 3 experts' consistency (1-5); label = 1 when the mean is 5.",
                ("bartscore_meta_eval/SUM_SummEval_data.json",), B.summeval_scores, extra_columns=("human_score",),
                gaps="Only the mean of the experts is offline."),
    DatasetSpec("frank_scores", "scores", "summarization", "text", "eval", "artidoro/frank", "MIT",
                "human_score = FRANK's summary-level Factuality (share of sentences without error); label = TRUE's.",
                ("true/frank.csv", "frank/human_annotations.json"), B.frank_scores, extra_columns=("human_score",),
                gaps="Validation split only (test text missing). Factuality == 1 agrees with TRUE's label on 647/671."),
    # ------------------------------------------------------------------ Q2 paper
    DatasetSpec("q2_paper", "Q2 paper", "dialogue", "text", "eval", "orhonovich/q-squared", "MIT",
                "The file a response comes from is its label: *_consistent = 1, *_inconsistent = 0.",
                tuple(f"q2/{m}_{k}.csv" for m in ("dodeca", "memnet") for k in ("inconsistent", "consistent")), B.q2_paper,
                splits=("dodeca_inconsistent", "dodeca_consistent", "memnet_inconsistent", "memnet_consistent"),
                gaps="The 'random' responses of Q² Table 9 and the DNLI set are not offline; Topical-Chat is topicalchat_usr."),
    DatasetSpec("topicalchat_usr", "Q2 paper", "dialogue", "text", "eval", "maszhongming/UniEval (USR Topical-Chat copy)",
                "MIT (UniEval repo); Topical-Chat: CDLA-Sharing-1.0",
                "human_score = USR's 'Uses Knowledge' (UniEval: groundedness), mean of 3 judges' 0/1; label = 1 when "
                "the mean is above 0.5. The 8 contexts without a fact (48 rows) are left out, as in Q² Table 6.",
                ("unieval_meta_eval/topical_chat.json",), B.topicalchat_usr, extra_columns=("human_score",),
                gaps="Only the 6 responses × 60 contexts USR rated; the dialogue history is not used. Not a leakage "
                     "target (added after the training mixes were filtered; 12 wecheck_dialogue rows and 1 BEGIN test row share its texts): "
                     "no in-house model is scored on it except through Q²'s QA model, whose Table 6 cell is not computed.",
                leakage_target=False),
    # ------------------------------------------------------------------ training side
    DatasetSpec("vitaminc_test", "training", "fact verification", "text", "train", "TalSchuster/VitaminC (test split)",
                "CC BY-SA 3.0", "label3 from SUPPORTS/NOT ENOUGH INFO/REFUTES; label = 1 for SUPPORTS (entailment).",
                ("vitaminc/vitaminc_real.zip", "vitaminc/vitaminc_synthetic.zip"), T.vitaminc_test,
                splits=("real", "synthetic"), label_space="nli3 (label3) + binary entailment", extra_columns=("label3",),
                gaps="Train/dev splits missing; overlap with TRUE's VitaminC dev cannot be checked (no dev text)."),
    DatasetSpec("anli_test", "training", "NLI", "text", "train", "facebookresearch/anli via VitaminC baselines",
                "CC BY-NC 4.0", "label3 from the ANLI label; label = 1 for entailment.",
                ("vitaminc_baselines/anli.zip",), T.anli_test, splits=("test",), label_space="nli3",
                extra_columns=("label3",), gaps="Training on ANLI test forbids reporting ANLI results."),
    DatasetSpec("fever_symmetric", "training", "fact verification", "text", "train", "TalSchuster/VitaminC baselines",
                "CC BY-SA 3.0", "label3 from SUPPORTS/REFUTES/NEI; label = 1 for SUPPORTS.",
                ("vitaminc_baselines/fever_symmetric.zip",), T.fever_symmetric, splits=("dev", "test"),
                label_space="nli3", extra_columns=("label3",)),
    DatasetSpec("fever_adversarial", "training", "fact verification", "text", "train", "TalSchuster/VitaminC baselines",
                "CC BY-SA 3.0", "label3 from SUPPORTS/REFUTES; label = 1 for SUPPORTS.",
                ("vitaminc_baselines/fever_adversarial.zip",), T.fever_adversarial, splits=("test",),
                label_space="nli3", extra_columns=("label3",)),
    DatasetSpec("fever_triggers", "training", "fact verification", "text", "train", "TalSchuster/VitaminC baselines",
                "see copenlu/fever-adversarial-attacks", "label3 from SUPPORTS/REFUTES; label = 1 for SUPPORTS.",
                ("vitaminc_baselines/fever_triggers.zip",), T.fever_triggers, splits=("test",),
                label_space="nli3", extra_columns=("label3",)),
    DatasetSpec("sick2014", "training", "NLI", "text", "train", "brmson/dataset-sts (SICK 2014)", "CC BY-NC-SA 3.0",
                "label3 = entailment judgement; label = 1 for ENTAILMENT; relatedness (1-5) kept in a column.",
                ("sick2014/SICK_train.txt", "sick2014/SICK_trial.txt", "sick2014/SICK_test_annotated.txt"), T.sick2014,
                splits=("train", "trial", "test"), label_space="nli3 + relatedness", extra_columns=("label3", "relatedness")),
    DatasetSpec("msrp", "training", "paraphrase", "text", "train", "brmson/dataset-sts (MSRP)", "MSR Paraphrase licence",
                "label = 1 when the pair is a paraphrase (Quality 1).",
                ("msrp/msr-para-train.tsv", "msrp/msr-para-val.tsv", "msrp/msr-para-test.tsv"), T.msrp,
                splits=("train", "val", "test"), label_space="paraphrase (binary)"),
    DatasetSpec("wecheck_paws", "training", "paraphrase", "text", "train", "nightdessert/WeCheck", "none stated",
                "No gold label (label = -1); weak ANLI / SummaC scores per beam in meta.",
                tuple(f"wecheck_train/paws/qafacteval_score_{k}.json" for k in range(8)), lambda: T.wecheck_train("paws"),
                splits=("train",), label_space="weak (no gold label, label = -1)",
                gaps="7999/8000 pairs are TRUE-PAWS evaluation pairs: training_mix removes them."),
    DatasetSpec("wecheck_dialogue", "training", "dialogue", "text", "train", "nightdessert/WeCheck", "none stated",
                "No gold label (label = -1); weak ANLI / SummaC scores per beam in meta.",
                tuple(f"wecheck_train/dialogue/qafacteval_score_{k}.json" for k in range(4)),
                lambda: T.wecheck_train("dialogue"), splits=("train",), label_space="weak (no gold label, label = -1)",
                gaps="Many knowledge passages are TRUE-Q2 / DialFact / BEGIN groundings: use training_mix."),
    DatasetSpec("begin_test", "training", "dialogue", "text", "train", "google/BEGIN-dataset (v1 test)", "CC BY 4.0",
                "As BEGIN: consistent when the gold label is 'entailment'.",
                ("begin/test_05_24_21.tsv",), B.begin_test, splits=("test",),
                gaps="21 evidence passages are also TRUE-Q2 groundings: use training_mix."),
    DatasetSpec("dialfact_test", "training", "dialogue", "text", "train", "salesforce/DialFact (scripts/testsmall.jsonl)",
                "BSD-3-Clause", "TRUE's DialFact rule: factual responses only; label = 1 for SUPPORTS, 0 for REFUTES "
                "or NOT ENOUGH INFO (label3); the evidence sentences joined as the grounding.",
                ("dialfact/testsmall.jsonl",), T.dialfact_test, splits=("test",), label_space="nli3",
                extra_columns=("label3",),
                gaps="A 300-row test-split sample (261 factual); no response is in TRUE's DialFact (valid), but some "
                     "evidence passages are TRUE-DialFact groundings: use training_mix."),
    # ------------------------------------------------------------------ human-labelled sentence-level sets
    DatasetSpec("snli_devtest", "training", "NLI", "text", "train", "OanaMariaCamburu/e-SNLI (SNLI dev/test)",
                "CC BY-SA 4.0", "label3 = SNLI gold label; label = 1 for entailment.",
                tuple(f"snli_devtest_esnli/{k}.{s}" for s in ("dev", "test") for k in ("s1", "s2", "labels")),
                T.snli_devtest, splits=("dev", "test"), label_space="nli3", extra_columns=("label3",),
                gaps="Tokenised text (spaces before punctuation)."),
    DatasetSpec("cad_snli", "training", "NLI", "text", "train", "acmi-lab/counterfactually-augmented-data (NLI)",
                "Apache-2.0", "label3 = gold label of the (revised) pair; label = 1 for entailment.",
                tuple(f"cad_snli/{k}_{s}.tsv" for k in ("original", "revised_premise", "revised_hypothesis")
                      for s in ("train", "dev", "test")), T.cad_snli,
                splits=tuple(f"{k}_{s}" for k in ("original", "revised_premise", "revised_hypothesis")
                             for s in ("train", "dev", "test")), label_space="nli3", extra_columns=("label3",),
                gaps="original dev/test repeat 600 SNLI dev/test pairs (deduplicated in the mix)."),
    DatasetSpec("med", "training", "NLI", "text", "train", "verypluming/MED", "CC BY-SA 4.0",
                "label3 = gold label (entailment or neutral only); label = 1 for entailment.",
                ("med/MED.tsv",), T.med, splits=("all",), label_space="nli3 (two of three labels used)",
                extra_columns=("label3",)),
    DatasetSpec("breaking_nli", "training", "NLI", "text", "train", "BIU-NLP/Breaking_NLI", "CC BY-SA 4.0",
                "label3 = gold label; label = 1 for entailment.", ("breaking_nli/breaking_nli_dataset.zip",),
                T.breaking_nli, splits=("test",), label_space="nli3", extra_columns=("label3",),
                gaps="Mostly contradictions (7164 of 8193)."),
    DatasetSpec("anli_dev", "training", "NLI", "text", "train", "facebookresearch/anli (analysis dev files)",
                "CC BY-NC 4.0", "label3 from e/n/c; label = 1 for entailment.",
                tuple(f"anli_dev/ANLI_analysis_{r}_dev.csv" for r in ("r1", "r2", "r3")), T.anli_dev,
                splits=("r1", "r2", "r3"), label_space="nli3", extra_columns=("label3",),
                gaps="R1 rows 241, 713, R2 978 and R3 887 are dropped (they share a sentence with DialFact groundings)."),
    DatasetSpec("taxinli", "training", "NLI", "text", "train", "microsoft/TaxiNLI", "Computational Use of Data Agreement",
                "label3 = MNLI gold label; label = 1 for entailment.", ("taxinli/taxinli10k.tsv",), T.taxinli,
                splits=("all",), label_space="nli3", extra_columns=("label3",),
                gaps="About 1.8k pairs per split overlap mnli_hard (deduplicated in the mix)."),
    DatasetSpec("conjnli", "training", "NLI", "text", "train", "swarnaHub/ConjNLI (dev)", "MIT",
                "label3 = gold label; label = 1 for entailment.", ("conjnli/conj_dev.tsv",), T.conjnli,
                splits=("dev",), label_space="nli3", extra_columns=("label3",),
                gaps="Rows 27 and 290 are dropped: they equal a TRUE-PAWS generated text."),
    DatasetSpec("mnli_hard", "training", "NLI", "text", "train", "MNLI dev hard subsets", "MNLI terms",
                "label3 = gold label; label = 1 for entailment.",
                tuple(f"mnli_hard/{m}_hard_{k}.test" for m in ("matched", "mismatched") for k in ("s1", "s2", "labels")),
                T.mnli_hard, splits=("matched", "mismatched"), label_space="nli3", extra_columns=("label3",)),
    DatasetSpec("rte_glue", "training", "NLI", "text", "train", "GLUE RTE", "PASCAL RTE terms",
                "label = 1 for entailment (GLUE's 0), 0 for not_entailment.", ("rte_glue/train.tsv", "rte_glue/dev.tsv"),
                T.rte_glue, splits=("train", "dev"), label_space="binary entailment"),
]

REGISTRY: dict[str, DatasetSpec] = {s.name: s for s in SPECS}
