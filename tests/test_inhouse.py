"""The in-house models' runs and tables: measured scoring runs with reuse of identical inputs (tfc.runs.scoring_runs),
run records and plans (tfc.runs.inhouse_models), the cached AUC tables, ablations and release facts, and the AlignScore
chapter's tables."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tfc.book.chapters import alignscore as A
from tfc.runs import alignscore_ablations as AB
from tfc.runs import cached_aucs as C
from tfc.runs import inhouse_models as M
from tfc.runs import release_facts as RF
from tfc.runs import scoring_runs as R


def frame(name, ctx, claims, labels, split="test"):
    return pd.DataFrame({"id": [f"{name}/{split}/{i:03d}" for i in range(len(ctx))], "dataset": name,
                         "split": split, "grounding": ctx, "generated": claims, "label": labels,
                         "meta": [{}] * len(ctx)})


@pytest.fixture
def toy_data(monkeypatch, tmp_cache, tmp_path):
    from tfc import data

    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path / "records"))
    a = frame("toya", ["the cat sat on the mat", "a dog ran", "it rained"], ["the cat sat", "a cat ran", "sun"],
              [1, 0, 0])
    # toyb shares two inputs with toya (under other ids) and adds one new pair
    b = frame("toyb", ["the cat sat on the mat", "it rained", "snow fell today"], ["the cat sat", "sun", "snow fell"],
              [1, 0, 1])
    sets = {"toya": a, "toyb": b}
    monkeypatch.setattr(data, "load", lambda name, split=None, sample=None, seed=0: sets[name].copy())
    return sets


def test_score_run_measures_and_reuses_identical_inputs(toy_data):
    rec = R.score_run("f1", "toya")
    assert (rec["rows"], rec["computed_rows"], rec["reused_rows"]) == (3, 3, 0)
    assert rec["pairs"] == 3 and rec["wall_seconds"] >= 0
    assert rec["splits"]["test"]["auc"] == pytest.approx(1.0)   # SQuAD-normalised token F1 2/3, 1/2, 0 vs labels 1, 0, 0
    rec_b = R.score_run("f1", "toyb")
    assert (rec_b["computed_rows"], rec_b["reused_rows"]) == (1, 2)
    from tfc.cache import load_scores
    from tfc.scorers import get

    sb = load_scores(get("f1").signature, "toyb").set_index("id")["score"]
    fresh = get("f1").score(toy_data["toyb"]["grounding"], toy_data["toyb"]["generated"], progress=False)
    np.testing.assert_allclose(sb.loc[toy_data["toyb"]["id"]].to_numpy(), fresh)
    # a rerun computes and reuses nothing
    again = R.score_run("f1", "toyb")
    assert (again["computed_rows"], again["reused_rows"], again["pairs_per_second"]) == (0, 0, None)


def test_records_append_replace_and_keep_measurements(toy_data):
    rec = R.score_run("f1", "toya")
    R.append_record("tfc/toy-model", rec)
    R.append_record("tfc/toy-model", {**rec, "wall_seconds": 9.0})          # same key: replaced
    R.append_record("tfc/toy-model", {**rec, "computed_rows": 0, "wall_seconds": 0.0})  # cached rerun: kept
    rows = json.loads(R.record_path("tfc/toy-model").read_text())
    assert len(rows) == 1 and rows[0]["wall_seconds"] == 9.0
    t = R.load_records("tfc/toy-model")
    assert list(t["dataset"]) == ["toya"] and t["rows"].iloc[0] == 3
    with pytest.raises(ValueError, match="in-house"):
        R.record_path("some/hub-model")
    assert R.load_records("tfc/none").empty


def test_plans_cover_true_sets_split_ablation_and_summac_sets():
    from tfc.data import TRUE_TEXT

    p = M.plans()
    assert [r["dataset"] for r in p["alignscore-true"]] == list(TRUE_TEXT)
    assert {r["overrides"]["split"] for r in p["alignscore-split-ablation"]} == {"chunk", "document", "smart-n",
                                                                                   "smart-l"}
    assert all(r["sample"] == M.ABLATION_SAMPLE for r in p["alignscore-split-ablation"])
    assert {r["dataset"] for r in p["nli-summac"]} == set(M.SUMMAC_SETS)
    assert "summac_factcc" not in M.SUMMAC_SETS and "summac_frank_test" not in M.SUMMAC_SETS
    with pytest.raises(KeyError, match="unknown plan"):
        R.run_plan("nope")


def test_ours_scorers_skip_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "art"))
    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path / "rec"))
    got = A.ours_scorers(skip_missing=True)
    assert got == {} and set(C.MISSING) == {"alignscore-minilm", "nli-minilm"}
    with pytest.raises(FileNotFoundError):
        A.ours_scorers()
    with pytest.raises(KeyError):
        A.ours_scorers(["nope"])


def test_vs_paper_labels_and_non_comparable_rows():
    from tfc import config

    if not (config.reference_dir() / "INDEX.csv").is_file():
        pytest.skip("reference tables not found")
    long = pd.DataFrame({"row": ["cogensumm", "summac_frank"], "split": ["test", "val"], "column": "m",
                         "value": [0.8, 0.7], "signature": "sig"})
    t = A.vs_paper(long, "AS-T2")
    assert list(t["dataset"]) == ["cogensumm", "summac_frank"]
    assert t["AlignScore-base (paper, 125M)"].iloc[0] == 83.7 and t["ours"].iloc[0] == 80.0
    assert t["delta"].iloc[0] == pytest.approx(-3.7) and np.isnan(t["delta"].iloc[1])
    assert "not comparable" in t["note"].iloc[1] and "in-house MiniLM (22M)" in t["model"].iloc[0]
    led = A.ledger_frame(long, "AS-T2")
    assert list(led["row"]) == ["cogensumm"] and led["column"].iloc[0] == "alignscore_base"


def test_vs_paper_wide_keeps_labels_that_prefix_each_other_apart():
    from tfc import config

    if not (config.reference_dir() / "INDEX.csv").is_file():
        pytest.skip("reference tables not found")
    long = pd.DataFrame({"row": ["cogensumm", "cogensumm"], "split": "test", "column": ["m", "m (reading)"],
                         "value": [0.8, 0.6], "signature": "sig"})
    w = A.vs_paper_wide(long, "AS-T2")
    assert w.loc["cogensumm", "ours: m"] == 80.0 and w.loc["cogensumm", "ours: m (reading)"] == 60.0


def test_full_set_wide_mean_ignores_a_model_without_scores():
    long = pd.DataFrame({"model": ["a", "a", "b", "b"], "dataset": ["x", "y", "x", "y"],
                         "auc": [70.0, 80.0, np.nan, np.nan], "ci_low": [60.0, 70.0, np.nan, np.nan],
                         "ci_high": [80.0, 90.0, np.nan, np.nan], "coverage": [1.0, 1.0, 0.0, 0.0]})
    w = A.full_set_wide(long)
    assert w.loc["mean (2 full sets)", "a"] == "75.0" and w.loc["x", "b"] == "n/a"
    assert w.loc["mean (2 full sets)", "b"] == "n/a"          # no mean of a model without scores, not "nan"


def test_cli_commands():
    from click.testing import CliRunner

    from tfc.cli.train import train

    r = CliRunner().invoke(train, ["score-inhouse", "bogus"])
    assert r.exit_code != 0 and "unknown plan" in r.output
    r = CliRunner().invoke(train, ["reproduce", "--help"])
    assert r.exit_code == 0 and "--skip-training" in r.output and "--only" in r.output
    r = CliRunner().invoke(train, ["reproduce", "--only", "sent-minilm-v2"])
    assert r.exit_code != 0 and "qa-minilm" in r.output        # the choices are named, nothing is trained


def test_reproduce_repeats_the_qa_readers_record():
    """`tfc train reproduce --only qa-minilm` calls `tfc train qa` with tfc/qa-minilm's committed recipe: the
    recorded step count instead of the time budget it ran under, its batch, length, rate, seed and QA-set sampling."""
    from tfc.cli.train_inhouse import _recorded_qa_args

    a = _recorded_qa_args("cpu", None)
    assert (a["max_steps"], a["batch_size"], a["max_length"], a["lr"], a["seed"]) == (1400, 16, 384, 1e-4, 2022)
    assert (a["sample"], a["long_frac"], a["eval_every"], a["threads"], a["dtype"]) == (3000, 0.25, 350, 2, "fp32")
    assert a["max_minutes"] is None and a["name"] == "qa-minilm" and a["device"] == "cpu"
    assert _recorded_qa_args(None, 8)["threads"] == 8


def test_reproduce_only_qa_invokes_the_qa_trainer_with_the_record(monkeypatch):
    """The wiring: `--only qa-minilm` trains the QA reader alone, with the recorded arguments,
    writes its record and scores nothing."""
    from click.testing import CliRunner

    from tfc.cli import train as cli_train
    from tfc.cli.train_inhouse import _recorded_qa_args
    from tfc.runs import inhouse_models

    calls, records = [], []
    monkeypatch.setattr(cli_train.qa_cmd, "callback", lambda **kw: calls.append(kw))
    monkeypatch.setattr(inhouse_models, "write_record", lambda name, retrain=None: records.append((name, retrain)) or name)
    r = CliRunner().invoke(cli_train.train, ["reproduce", "--only", "qa-minilm", "--skip-scoring", "--device", "cpu"])
    assert r.exit_code == 0, r.output
    assert calls == [_recorded_qa_args("cpu", None)] and records == [("qa-minilm", "reproduce --only qa-minilm")]
    assert "training tfc/qa-minilm (1400 steps)" in r.output
    # without --skip-scoring it still scores nothing: no in-house scoring plan reads the QA reader
    calls.clear()
    r = CliRunner().invoke(cli_train.train, ["reproduce", "--only", "qa-minilm", "--device", "cpu"])
    assert r.exit_code == 0 and len(calls) == 1 and "no plan of `tfc train score-inhouse` reads" in r.output


def test_reproduce_retrains_with_the_recorded_step_count(monkeypatch):
    """Retraining tfc/nli-minilm repeats its committed record's step count, not its time budget."""
    from click.testing import CliRunner

    from tfc.cli import train as cli_train
    from tfc.cli import train_inhouse as ti
    from tfc.runs import inhouse_models

    calls = []
    monkeypatch.setattr(ti.nli_cmd, "callback", lambda **kw: calls.append(kw))
    monkeypatch.setattr(inhouse_models, "write_record", lambda name, retrain=None: name)
    r = CliRunner().invoke(cli_train.train, ["reproduce", "--only", "nli-minilm", "--skip-scoring", "--device", "cpu"])
    assert r.exit_code == 0, r.output
    assert len(calls) == 1 and calls[0]["max_steps"] == 2300 and calls[0]["max_minutes"] is None


@pytest.fixture(scope="module")
def tiny3(tmp_path_factory):
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from tfc.models.tiny import make_tiny_classifier
    from tfc.models.multihead import TASKS, multihead_class, save_checkpoint

    base = make_tiny_classifier(tmp_path_factory.mktemp("inh_nli"), seed=3)
    d = tmp_path_factory.mktemp("inh_3head")
    torch.manual_seed(5)
    model = multihead_class()(AutoModelForSequenceClassification.from_pretrained(base), TASKS)
    for p in model.heads.parameters():
        torch.nn.init.normal_(p, std=0.5)
    save_checkpoint(model, AutoTokenizer.from_pretrained(base), d)
    return str(d)


def test_head_and_split_ablation_from_the_cache(toy_data, tiny3):
    from tfc.meta import roc_auc
    from tfc.results.dataset import head_scores

    for sp in M.SPLIT_MODES:
        for ds in ("toya", "toyb"):
            rec = R.score_run("alignscore", ds, {"checkpoint": tiny3, "split": sp})
            assert rec["pairs"] >= 3 or rec["reused_rows"] > 0
    heads = AB.head_ablation(tiny3, ["toya", "toyb"])
    assert set(heads["head"]) == {"3way", "bin", "reg"} and set(heads["dataset"]) == {"toya", "toyb", "mean"}
    h = head_scores("alignscore", "toyb", preset="improved", checkpoint=tiny3)
    want = 100 * roc_auc(h["label"], h["bin"])
    got = heads[(heads["dataset"] == "toyb") & (heads["head"] == "bin")]["auc"].iloc[0]
    assert got == pytest.approx(want)
    spl = AB.split_ablation(tiny3, ["toya", "toyb"], sample=None)
    assert set(spl["split"]) == set(M.SPLIT_MODES)
    assert "mean (2 sets)" in set(spl["dataset"]) and spl.attrs["n_sets"] == 2
    doc = spl[(spl["split"] == "document") & (spl["dataset"] != "mean (2 sets)")]
    assert doc["pairs"].tolist() == [3, 3]          # one pair per example in document mode
    # the paired ablation frames: every row of both sets, one column per head / per splitting mode
    groups, cov = AB.ablation_groups(tiny3, "head", ["toya", "toyb"])
    assert set(groups) == {"toya", "toyb"} and cov["scored"].tolist() == cov["rows"].tolist() == [3, 3]
    y, cols = groups["toyb"]
    assert set(cols) == {"3way", "bin", "reg"} and 100 * roc_auc(y, cols["bin"]) == pytest.approx(want)
    con = AB.ablation_contrasts(tiny3, "head", ["toya", "toyb"], n=50)
    assert list(con["head"]) == ["bin", "reg"] and (con["p_holm"] >= con["p_value"] - 1e-12).all()
    mean3 = heads[(heads["dataset"] == "mean") & (heads["head"] == "3way")]["auc"].iloc[0]
    assert con["mean_auc_3way"].iloc[0] == pytest.approx(mean3)
    sgroups, _ = AB.ablation_groups(tiny3, "split", ["toya", "toyb"])
    assert list(sgroups["toya"][1]) == list(M.SPLIT_MODES)
    con = AB.ablation_contrasts(tiny3, "split", ["toya", "toyb"], n=50)
    assert list(con["split"]) == ["document", "smart-n", "smart-l"]
    with pytest.raises(ValueError, match="kind"):
        AB.ablation_groups(tiny3, "heads", ["toya"])


def test_ablation_contrasts_need_every_row(toy_data, tiny3):
    """A run that scored part of a set is shown in the coverage and gives no contrast (never a silent sample)."""
    for ds in ("toya", "toyb"):
        R.score_run("alignscore", ds, {"checkpoint": tiny3, "split": "chunk"})   # the ablations' reading
    toy_data["toyb"] = pd.concat([toy_data["toyb"], frame("toyb", ["x y z"], ["x y"], [0]).assign(id="toyb/test/new")],
                                 ignore_index=True)                 # a row the cache does not hold
    groups, cov = AB.ablation_groups(tiny3, "head", ["toya", "toyb"])
    assert set(groups) == {"toya"} and cov.set_index("dataset").loc["toyb", ["rows", "scored"]].tolist() == [4, 3]
    assert AB.ablation_contrasts(tiny3, "head", ["toya", "toyb"], n=20).empty


def test_significance_vs_lexical_on_toy_sets(toy_data, tiny3):
    from tfc import scorers

    for ds in ("toya", "toyb"):
        R.score_run("alignscore", ds, {"checkpoint": tiny3})
        for b in ("f1", "rougeL"):
            R.score_run(b, ds)
    m = {"tiny": scorers.get("alignscore", preset="as-published", checkpoint=tiny3)}
    sig = C.significance_vs_lexical(m, baselines=("f1", "rougeL"), datasets=["toya", "toyb"], n=50)
    assert list(sig["baseline"]) == ["f1", "rougeL"] and (sig["n_examples"] == 6).all()
    assert (sig["n_resamples"] == 80).all()          # 2 comparisons: at least 2 * 2 / 0.05 resamples, not 50
    assert set(sig["verdict"]) <= {"better", "worse", "no significant difference"}
    assert (sig["p_holm"] >= sig["p_value"]).all()


def test_significance_skips_a_one_class_set_and_names_it(toy_data):
    """A set whose usable rows hold one label (AUC undefined) leaves the mean and is listed, not a crash."""
    from tfc import scorers

    toy_data["toyc"] = frame("toyc", ["a b c", "d e f"], ["a b", "d e"], [1, 1])
    for ds in ("toya", "toyb", "toyc"):
        for b in ("f1", "rougeL"):
            R.score_run(b, ds)
    m = {"bleu": scorers.get("bleu4")}
    for ds in ("toya", "toyb", "toyc"):
        R.score_run("bleu4", ds)
    sig = C.significance_vs_lexical(m, baselines=("f1", "rougeL"), datasets=["toya", "toyb", "toyc"], n=50)
    assert (sig["n_datasets"] == 2).all() and (sig["datasets_skipped"] == "toyc").all()
    assert (sig["n_examples"] == 6).all()
    # every set one-class: no table at all
    assert C.significance_vs_lexical(m, baselines=("f1",), datasets=["toyc"], n=10).empty


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory):
    """A tiny random 3-way BERT classifier (word-level vocabulary) saved as an HF directory."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    d = tmp_path_factory.mktemp("tiny_probe")
    words = "the a man woman is are in on of and dog . , 's n't".split()
    (d / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words) + "\n")
    BertTokenizerFast(vocab=str(d / "vocab.txt"), do_lower_case=True).save_pretrained(d)
    cfg = BertConfig(vocab_size=5 + len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=512, num_labels=3,
                     id2label={0: "entailment", 1: "neutral", 2: "contradiction"},
                     label2id={"entailment": 0, "neutral": 1, "contradiction": 2})
    import torch

    torch.manual_seed(0)
    BertForSequenceClassification(cfg).save_pretrained(d)
    return d


def test_identity_probe_on_a_tiny_model(tiny_nli, data_dir):
    pytest.importorskip("spacy")
    from tfc.scorers.nli import NLIEngine

    got = RF.identity_probe({"tiny": str(tiny_nli), "absent": str(tiny_nli / "nope")}, n=6, seed=1)
    tiny = got[got["model"] == "tiny"].set_index("form")
    assert list(tiny.index) == ["identical", "PTB form"] and (tiny["pairs"] == 6).all()
    assert got.loc[got["model"] == "absent", "pairs"].tolist() == [0]
    for col in ("mean P(entail)", "mean P(contradict)", "share read as entailment"):
        assert tiny[col].between(0, 1).all()
    # the identical form by hand: the same 6 premises, each paired with itself
    from tfc import data

    pool = pd.concat([data.load(d)["grounding"] for d in ("snli_devtest", "taxinli")], ignore_index=True)
    pool = pd.Series(pd.unique(pool))
    sents = pool[pool.str.split().str.len().between(6, 45)].sample(n=6, random_state=1).tolist()
    eng = NLIEngine(str(tiny_nli), None, None, None, "float32", None)
    p = eng.probs([(s, s) for s in sents], 4, False)
    assert tiny.loc["identical", "mean P(entail)"] == pytest.approx(float(p[:, eng.i_ent].mean()), abs=1e-6)
    assert tiny.loc["identical", "share read as entailment"] == pytest.approx(float((p.argmax(1) == eng.i_ent).mean()))


def test_identity_probes_stack_every_card_once():
    """The probes recorded on the sentence models' cards come back as one table, one row per (model, form): v2's
    card carries v1's rows too, and no model appears twice; a model without a card gives nothing."""
    t = A.identity_probes()
    assert not t.duplicated(["model", "form"]).any()
    assert {"sent-minilm (v1)", "sent-minilm-v2"} <= set(t["model"])
    assert set(t["form"]) == {"identical", "PTB form"}
    assert A.identity_probes(["tfc/no-such-model"]).empty


def test_training_table_reads_every_record_and_leaves_releases_empty():
    """One row per in-house pair and sentence model, in training order; an int8 release (no epochs of its own) has
    no training columns, a trained model has its steps, minutes and machine from the record."""
    t = A.training_table().set_index("model")
    assert {"nli-minilm", "alignscore-minilm", "sent-minilm-v8-int8", "sent-mpnet-v10"} <= set(t.index)
    assert pd.isna(t.loc["sent-minilm-v8-int8", "steps"]) and t.loc["sent-minilm-v8-int8", "status"] == "shipped"
    from tfc import models

    v9 = t.loc["sent-minilm-v9"]
    rec = models.training_record("tfc/sent-minilm-v9")
    assert v9["steps"] == rec["steps"] and v9["training minutes"] == round(rec["train_seconds"] / 60, 1)
    assert v9["dev 3-way accuracy"] == rec["dev_eval"]["3way"]["accuracy"]
    none = A.training_table(["tfc/no-such-model"])
    assert len(none) == 1 and pd.isna(none["steps"].iloc[0])


def test_the_shipped_release_is_read_the_way_its_parents_dev_sweep_chose():
    """The shipped release is read with the settings its parent's recorded dev-data sweep chose (not picked by
    hand), under the label its recipe gives."""
    rel = M.recipe(M.shipped_sentence_model())
    assert rel["reads_as"] == rel["parent"]
    chosen = M.chosen_readings([rel["parent"]])
    assert len(chosen) == 1
    (_, want), = chosen.values()
    name, got = M.shipped_readings()[rel["label"]]
    assert name == "summac-zs" and got["checkpoint"] == rel["checkpoint"]
    assert {k: v for k, v in got.items() if k != "checkpoint"} == {k: v for k, v in want.items() if k != "checkpoint"}


def test_train_dtype_benchmark_reads_every_machine(tmp_path):
    """Both committed probes (an AVX2 machine that emulates bf16, one with avx512_bf16/AMX) come back as one
    table, each row naming its machine's bf16 flags; a single file can be read alone; nothing gives an empty
    frame."""
    from tfc.book.chapters.alignscore import train_dtype_benchmark

    t = train_dtype_benchmark()
    assert {"fp32", "bf16"} <= set(t["dtype"]) and t["created"].nunique() >= 2
    flags = set(t["cpu_bf16_flags"])
    assert "not recorded" in flags and any("amx_bf16" in f for f in flags)
    rec = {"device": "cpu", "cpu_capability": "AVX512", "cpu_bf16_flags": ["avx512_bf16"],
           "rows": [{"max_length": 128, "batch_size": 8, "dtype": "bf16", "seconds_per_step": 1.0,
                     "examples_per_second": 8.0}]}
    (tmp_path / "one.json").write_text(json.dumps(rec))
    one = train_dtype_benchmark(tmp_path / "one.json")
    assert len(one) == 1 and one["cpu_bf16_flags"].iloc[0] == "avx512_bf16"
    assert train_dtype_benchmark(tmp_path / "missing.json").empty


STEP_SETS = ["frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2", "dialfact", "paws"]


def test_chosen_mean_text_reads_the_dev_chosen_reading():
    """A model's nine-set mean under the reading its sweep chose; "n/a" when that reading lacks a set."""
    ckpt = M.alignscore_model()
    label = next(iter(M.chosen_readings([ckpt])), ckpt[4:])
    aucs = dict(zip(STEP_SETS, [80.0, 70.0, 68.0, 74.0, 74.0, 80.0, 69.0, 78.0, 67.0]))
    full = pd.DataFrame([{"model": label, "dataset": d, "auc": a} for d, a in aucs.items()] +
                        [{"model": ckpt[4:], "dataset": d, "auc": 50.0} for d in STEP_SETS])
    assert A.chosen_mean_text(full, ckpt, len(STEP_SETS)) == f"{np.mean(list(aucs.values())):.1f}"
    assert A.chosen_mean_text(full[full["dataset"] != "paws"], ckpt, len(STEP_SETS)) == "n/a"


def test_drift_verdicts_per_preset_need_every_set_within_the_limit():
    import pandas as pd

    from tfc.runs.auc_drift import drift_verdicts

    d = pd.DataFrame({"preset": ["a", "a", "b", "b", "c"], "dataset": ["x", "y", "x", "y", "x"],
                      "drift": [0.1, -0.2, 0.05, -0.21, 0.0]})
    got = drift_verdicts(d)                                  # needs every set of the table: 2
    assert got["preset"].tolist() == ["a", "b", "c"] and got["needed"].tolist() == [2, 2, 2]
    assert got["largest"].round(2).tolist() == [0.2, 0.21, 0.0] and got["sets"].tolist() == [2, 2, 1]
    assert got["status"].tolist() == ["within", "beyond", "partial"]
    assert list(drift_verdicts(pd.DataFrame()).columns) == ["preset", "largest", "sets", "needed", "status"]


def test_fast_drift_plans_pair_every_set_at_both_dtypes():
    p = M.plans()
    for key, (name, kw, dtypes) in M.FAST_DRIFT_READINGS.items():
        runs = p[f"fast-{key}-sample"]
        assert {r["scorer"] for r in runs} == {name}
        assert {(r["dataset"], r["overrides"]["dtype"]) for r in runs} == {(d, t) for d in M._true_sets() for t in dtypes}
        assert all(r["sample"] == M.FAST_DRIFT_SAMPLE and r["overrides"]["checkpoint"] == kw["checkpoint"] for r in runs)


def test_write_record_names_the_recipe_that_rebuilds_the_weights(tmp_path, monkeypatch):
    """The committed record of a retrained checkpoint: its identity, and the command that retrains it
    (which `tfc/<name>`'s missing-weights error quotes)."""
    pytest.importorskip("torch")
    from tfc import models
    from tfc.models.tiny import make_tiny_classifier
    from tfc.runs import inhouse_models

    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "art"))
    monkeypatch.setenv("TFC_MODEL_RECORDS_DIR", str(tmp_path / "rec"))
    make_tiny_classifier(tmp_path / "art" / "qa-minilm", seed=1)
    rec = json.loads((inhouse_models.write_record("qa-minilm", retrain="reproduce --only qa-minilm") / "identity.json").read_text())
    assert rec["identity"] == models.identity("tfc/qa-minilm") and rec["identity"].startswith("sha256:")
    assert "`tfc train reproduce --only qa-minilm`, its recorded recipe" in rec["note"]
    rec = json.loads((inhouse_models.write_record("qa-minilm") / "identity.json").read_text())
    assert rec["note"].endswith("(retrain with `tfc train qa`)")
    with pytest.raises(FileNotFoundError):
        inhouse_models.write_record("absent")


RECIPE_FIELDS = {"checkpoint", "family", "parent", "mix", "epochs", "device", "question", "status"}


def test_every_recipe_is_complete_and_names_what_exists():
    """Each recipe carries its fields; a shipped model has its release under results/release (and a release of a
    model with a recipe is marked shipped); every parent is a record or a base encoder; every model a recipe
    measures against or reads as has a record; plan names are unique."""
    from tfc import config

    recs = M.recipes()
    assert len(recs) >= 10
    release_root = config.REPO_ROOT / "results" / "release"
    for ckpt, r in recs.items():
        assert RECIPE_FIELDS <= set(r), ckpt
        assert (config.model_records_dir() / ckpt[4:] / "training_summary.json").is_file(), ckpt
        assert r["status"] in ("shipped", "record only"), ckpt
        assert (r["status"] == "shipped") == (release_root / ckpt[4:]).is_dir(), ckpt
        assert r["parent"] in M.BASE_NAMES or (config.model_records_dir() / r["parent"][4:]).is_dir(), ckpt
        for key in ("compared_with", "reads_as"):
            assert r.get(key) is None or r[key] in recs, (ckpt, key)
        assert r["epochs"] is None or r["epochs"] >= 0
    plans = [r["plan"] for r in recs.values() if r.get("plan")]
    assert len(plans) == len(set(plans))


def test_the_lists_are_read_from_the_records():
    """Models, plans, readings, tried rows and GPU jobs follow the committed recipes."""
    recs = M.recipes()
    assert set(M.variant_plans().values()) == {c for c, r in recs.items() if r.get("plan") and not r.get("reads_as")}
    assert set(M.variant_plans().values()) <= set(M.sentence_models())
    assert M.shipped_sentence_model() in M.sentence_models("shipped")
    assert set(M.variant_readings()) == {c[4:] for c in M.variant_plans().values()}
    tried = M.tried_variants()
    assert {t["checkpoint"] for t in tried} <= set(recs)
    assert sum(len(r.get("tried", [])) for r in recs.values()) + len(M.chosen_readings()) == len(tried)
    assert all(t["scorer"][1]["checkpoint"] == t["checkpoint"] for t in tried)
    assert set(M.gpu_variants()) == {c[4:] for c, r in recs.items() if r.get("gpu_job")}
    assert recs[M.alignscore_model()]["alignscore_plan"]
    assert all(recs[w]["family"] == "wecheck" for w in M.warmup_pairs())
    made = [json.loads((M.config.model_records_dir() / c[4:] / "training_summary.json").read_text()).get("created_utc")
            for c in recs]
    assert made == sorted(made)   # training order


def test_a_new_recipe_is_picked_up_without_code(tmp_path, monkeypatch):
    """A record's recipe alone adds a model to the plans, the tried rows and the GPU jobs."""
    from tfc import config

    d = tmp_path / "sent-new"
    d.mkdir()
    (d / "training_summary.json").write_text(json.dumps({"created_utc": "2030-01-01T00:00:00+00:00"}))
    (d / "recipe.json").write_text(json.dumps({
        "checkpoint": "tfc/sent-new", "family": "sentence", "parent": "minilm", "mix": "pairs", "epochs": 1,
        "device": "GPU", "question": "q", "status": "record only", "plan": "new-true",
        "gpu_job": {"mix": "m.parquet", "epochs": 1, "tasks": ["3way"], "retrain": "sentence"},
        "tried": [{"variant": "new", "scorer": "summac-zs", "overrides": {"dtype": "float32"}, "data": "d"}]}))
    monkeypatch.setattr(config, "model_records_dir", lambda: tmp_path)
    assert M.variant_plans() == {"new-true": "tfc/sent-new"}
    assert M.gpu_variants() == {"sent-new": {"mix": "m.parquet", "epochs": 1, "tasks": ["3way"],
                                             "retrain": "sentence", "note": "q"}}
    assert [(t["variant"], t["scorer"]) for t in M.tried_variants()] == [("new", M.sent_reading("tfc/sent-new"))]
    assert M.sentence_models("shipped") == [] and M.alignscore_model() is None


def test_enough_resamples_for_a_holm_adjusted_p_to_reach_alpha():
    assert C.resamples_for(54, 1000) == 2160 and 54 / (2160 + 1) < 0.05 / 2
    assert C.resamples_for(6, 1000) == 1000            # 1,000 already resolve 6 comparisons
    assert C.resamples_for(1, 50, alpha=0.01) == 200
