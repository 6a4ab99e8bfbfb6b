"""Training code of the in-house checkpoints, on a tiny random BERT and a few dozen hand-made rows."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tfc.models import multihead  # noqa: E402
from tfc.train import batches, checkpoints, engine, pair_objective  # noqa: E402
from tfc.train.alignscore import (  # noqa: E402
    aggregate_max_mean, aggregate_soft_lcs, build_units, chunk_sentences, load_alignscore_model)

WORDS = ("the a cat dog sat on mat is not was never big small red blue man woman he she runs ran "
         "in park house paris london 1990 2001 three five and of to yes no tall short").split()


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    """A random 2-layer BERT (hidden 32) with a word-level vocab, saved as an HF directory."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    d = tmp_path_factory.mktemp("tiny_bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + WORDS
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizerFast(vocab=str(d / "vocab.txt"), do_lower_case=True)  # transformers 5: `vocab`
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    BertModel(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return str(d)


def toy_frame(n_per_task=16, tasks=("3way", "bin", "reg")):
    """Learnable toy rows: the hypothesis repeats the premise (aligned) or negates it."""
    rng = np.random.default_rng(0)
    subj = ["the cat", "the dog", "a man", "a woman"]
    pred = ["sat on the mat", "runs in the park", "is big", "is small", "ran in paris"]
    rows = []
    for task in tasks:
        for i in range(n_per_task):
            s = f"{subj[rng.integers(4)]} {pred[rng.integers(5)]} ."
            if task == "3way":
                lab = i % 3
                hyp = {0: s, 1: "the red house is tall .", 2: s.replace(" is ", " is not ").replace(" ran ", " never ran ").replace(" sat ", " never sat ").replace(" runs ", " never runs ")}[lab]
            elif task == "bin":
                lab = i % 2
                hyp = s if lab == 1 else "the blue house is short ."
            else:
                lab = float(i % 5) / 4
                hyp = s if lab >= 0.5 else "yes no three five ."
            rows.append({"text_a": s, "text_b": hyp, "task": task, "label": lab, "source": f"toy_{task}"})
    return pd.DataFrame(rows)


def cfg_for(base, **kw):
    args = dict(name="tiny", base=base, max_length=32, batch_size=8, lr=3e-3, warmup_ratio=0.1,
                max_steps=60, seed=7, log_every=5, num_threads=1, length_pool=1)
    args.update(kw)
    return engine.TrainConfig(**args)


@pytest.fixture(scope="module")
def trained(tiny_base, tmp_path_factory):
    out = tmp_path_factory.mktemp("ckpt") / "tiny"
    res = engine.train(toy_frame(), cfg_for(tiny_base), out_dir=out, progress=False, keep_model=True,
                     mix_report={"removed_as_leakage": {"toy": 2}})
    return res


# --- training ---------------------------------------------------------------------------------------

def test_loss_goes_down(trained, tiny_base):
    """Loss over the whole frame (eval mode): fresh model with the same seed vs the trained one."""
    cfg = cfg_for(tiny_base)
    torch.manual_seed(cfg.seed)
    fresh, tok = pair_objective.build_model(tiny_base)
    df = toy_frame()
    before = pair_objective.frame_loss(fresh, tok, df, cfg.max_length)
    after = pair_objective.frame_loss(trained.model, trained.tokenizer, df, cfg.max_length)
    assert trained.steps == 60 and len(trained.losses) == 60
    assert after < 0.6 * before, (before, after)


def test_checkpoint_files_and_summary(trained):
    d = trained.out_dir
    for f in ("config.json", "model.safetensors", "tokenizer.json", multihead.HEADS_FILE, multihead.HEADS_META,
              "README.md", "training_summary.json", "train_log.jsonl"):
        assert (d / f).is_file(), f
    cfg = json.loads((d / "config.json").read_text())
    assert cfg["id2label"] == {"0": "entailment", "1": "neutral", "2": "contradiction"}
    s = json.loads((d / "training_summary.json").read_text())
    assert s["steps"] == 60 and s["config"]["seed"] == 7 and s["mix"]["rows"] == 48
    assert {(r["source"], r["task"], r["rows"]) for r in s["mix"]["by_source"]} == {
        ("toy_3way", "3way", 16), ("toy_bin", "bin", 16), ("toy_reg", "reg", 16)}
    assert s["mix_report"] == {"removed_as_leakage": {"toy": 2}}
    card = (d / "README.md").read_text()
    assert "toy_bin" in card and "seed: 7" in card and "removed_as_leakage" in card
    checkpoints.record_eval_results(d, {"true_mean_auc": 0.5})
    assert "true_mean_auc" in (d / "README.md").read_text()


def test_roundtrip_through_hf_and_multihead_loader(trained):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    d = trained.out_dir
    a, b = ["the cat sat on the mat .", "a man is big ."], ["the cat sat .", "a man is not big ."]
    hf = AutoModelForSequenceClassification.from_pretrained(d).eval()
    tok = AutoTokenizer.from_pretrained(d)
    enc = tok(a, b, padding=True, return_tensors="pt")
    with torch.no_grad():
        hf_logits = hf(**enc).logits
        mem = trained.model.eval()(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                   token_type_ids=enc["token_type_ids"])
    m = load_alignscore_model(d, "cpu")
    assert m.heads == ("3way", "bin", "reg")
    p = m.predict(a, b)
    torch.testing.assert_close(hf_logits, mem["3way"])
    np.testing.assert_allclose(p["3way"], torch.softmax(hf_logits, -1).numpy(), atol=1e-6)
    np.testing.assert_allclose(p["bin"], torch.softmax(mem["bin"], -1).numpy(), atol=1e-6)
    np.testing.assert_allclose(p["reg"], mem["reg"].numpy(), atol=1e-6)


def test_head_shapes(trained):
    m = load_alignscore_model(trained.out_dir, "cpu")
    p = m.predict(["the cat ."] * 5, ["the dog ."] * 5, batch_size=2)
    assert p["3way"].shape == (5, 3) and p["bin"].shape == (5, 2) and p["reg"].shape == (5,)
    np.testing.assert_allclose(p["3way"].sum(1), 1, atol=1e-6)
    assert ((p["reg"] >= 0) & (p["reg"] <= 1)).all()
    e = m.predict([], [])
    assert e["3way"].shape == (0, 3) and e["reg"].shape == (0,)


def test_batch_order_does_not_change_scores(trained):
    m = load_alignscore_model(trained.out_dir, "cpu")
    a = ["the cat sat on the mat .", "a man .", "the dog runs in the park and the cat is big ."]
    b = ["the cat sat .", "a woman is small .", "the dog runs ."]
    full = m.pair_scores(a, b, batch_size=3)
    one = np.array([m.pair_scores([x], [y])[0] for x, y in zip(a, b)])
    np.testing.assert_allclose(full, one, atol=1e-5)


def test_deterministic_same_seed(tiny_base):
    df = toy_frame(8)
    threads, det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    r1 = engine.train(df, cfg_for(tiny_base, max_steps=6), out_dir=False, progress=False, keep_model=True)
    r2 = engine.train(df, cfg_for(tiny_base, max_steps=6), out_dir=False, progress=False, keep_model=True)
    r3 = engine.train(df, cfg_for(tiny_base, max_steps=6, seed=8), out_dir=False, progress=False, keep_model=True)
    s1, s2, s3 = (r.model.state_dict() for r in (r1, r2, r3))
    assert r1.losses == r2.losses
    assert all(torch.equal(s1[k], s2[k]) for k in s1)
    assert not all(torch.equal(s1[k], s3[k]) for k in s1)
    # process-global torch settings are restored after training
    assert torch.get_num_threads() == threads and torch.are_deterministic_algorithms_enabled() == det


def test_nli_only_model_has_no_side_heads(tiny_base, tmp_path):
    from transformers import AutoModelForSequenceClassification

    df = toy_frame(12, tasks=("3way",))
    res = engine.train(df, cfg_for(tiny_base, tasks=("3way",), max_steps=3), out_dir=tmp_path / "nli",
                     progress=False)
    assert not (res.out_dir / multihead.HEADS_FILE).exists()
    assert AutoModelForSequenceClassification.from_pretrained(res.out_dir).config.num_labels == 3
    m = load_alignscore_model(res.out_dir)
    assert m.heads == ("3way",)
    with pytest.raises(ValueError, match="no 'bin' head"):
        m.score(["the cat ."], ["the cat ."], head="bin")
    with pytest.raises(ValueError, match="does not train"):
        engine.train(toy_frame(8), cfg_for(tiny_base, tasks=("3way",)), out_dir=False, progress=False)


def test_max_minutes_stops_and_saves(tiny_base, tmp_path):
    res = engine.train(toy_frame(8), cfg_for(tiny_base, max_steps=10_000, max_minutes=0.002),
                     out_dir=tmp_path / "t", progress=False)
    assert res.stopped_by == "max_minutes" and 0 < res.steps < 10_000
    assert (res.out_dir / "model.safetensors").is_file()


def test_length_grouped_batches_cover_each_row_once_per_epoch(tiny_base, monkeypatch):
    """With length grouping every row is still seen exactly once per epoch, and batches are length-sorted pools."""
    seen = []
    orig = batches.collate

    def spy(tok, idx, pad_id, device="cpu"):
        seen.extend(int(i) for i in idx)
        return orig(tok, idx, pad_id, device)

    monkeypatch.setattr(engine, "collate", spy)   # the name the loop calls
    df = toy_frame(16).assign(text_a=lambda d: d.text_a + " " + pd.Series(["x " * i for i in range(48)]))
    engine.train(df, cfg_for(tiny_base, max_steps=6, length_pool=3), out_dir=False, progress=False)
    assert sorted(seen) == list(range(48))  # 6 steps x 8 = 48 rows = one epoch


def test_epoch_batches_pure_and_length_sorted():
    lengths = np.array([5, 40, 7, 33, 12, 9, 28, 3, 17, 21, 30, 11])
    a = batches.epoch_batches(lengths, 3, 2, seed=1, epoch=0)
    b = batches.epoch_batches(lengths, 3, 2, seed=1, epoch=0)
    c = batches.epoch_batches(lengths, 3, 2, seed=1, epoch=1)
    assert [x.tolist() for x in a] == [x.tolist() for x in b]
    assert [x.tolist() for x in a] != [x.tolist() for x in c]
    assert sorted(np.concatenate(a).tolist()) == list(range(12))
    # inside a pool of 2 batches, rows are sorted by length: each batch's lengths are non-decreasing
    assert all(list(lengths[x]) == sorted(lengths[x]) for x in a)


def test_pretokenize_cache_and_collate(trained, tmp_path):
    tok = trained.tokenizer
    df = toy_frame(4)
    t1 = batches.pretokenize(tok, df, 16, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("tok-*.npz"))) == 1 and not list(tmp_path.glob("*.tmp*"))
    t2 = batches.pretokenize(tok, df, 16, cache_dir=tmp_path)
    assert t1.key == t2.key and np.array_equal(t1.input_ids, t2.input_ids)
    ref = tok(list(df.text_a[:3]), list(df.text_b[:3]), truncation="longest_first", max_length=16, padding=True,
              return_tensors="pt")
    got = batches.collate(t1, [0, 1, 2], tok.pad_token_id)
    for k in ("input_ids", "attention_mask", "token_type_ids"):
        assert torch.equal(got[k], ref[k]), k
    # a longer max_length is another cache entry; truncation is counted
    t3 = batches.pretokenize(tok, df, 8, cache_dir=tmp_path)
    assert t3.key != t1.key and t3.truncated == len(df) and t3.lengths.max() == 8


def test_resume_after_kill_is_bitwise_identical(tiny_base, tmp_path):
    """Kill after step 5 (state written at 4), resume: the weights equal an uninterrupted run's."""
    df = toy_frame(8)
    cfg = cfg_for(tiny_base, max_steps=8, checkpoint_every=2, length_pool=2)
    full = engine.train(df, cfg, out_dir=tmp_path / "a", progress=False, keep_model=True)

    class Kill(Exception):
        pass

    def kill(step):
        if step == 5:
            raise Kill

    with pytest.raises(Kill):
        engine.train(df, cfg, out_dir=tmp_path / "b", progress=False, on_step=kill)
    assert (tmp_path / "b" / engine.RESUME_FILE).is_file()
    resumed = engine.train(df, cfg, out_dir=tmp_path / "b", progress=False, keep_model=True)
    assert resumed.summary["resumed"] and resumed.steps == 8
    sa, sb = full.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert full.losses == resumed.losses
    assert not (tmp_path / "b" / engine.RESUME_FILE).exists()  # a finished run drops its state
    # a state from another configuration is refused, not silently mixed in
    with pytest.raises(Kill):
        engine.train(df, cfg, out_dir=tmp_path / "c", progress=False, on_step=kill)
    with pytest.raises(ValueError, match="another run"):
        engine.train(df, cfg_for(tiny_base, max_steps=8, checkpoint_every=2, lr=1e-3), out_dir=tmp_path / "c",
                   progress=False)


def test_bf16_autocast_close_to_fp32(tiny_base):
    df = toy_frame(8)
    r32 = engine.train(df, cfg_for(tiny_base, max_steps=4), out_dir=False, progress=False, keep_model=True)
    r16 = engine.train(df, cfg_for(tiny_base, max_steps=4, dtype="bf16"), out_dir=False, progress=False,
                     keep_model=True)
    assert r16.summary["dtype"] == "bf16-autocast"
    np.testing.assert_allclose(r32.losses, r16.losses, rtol=0.05, atol=0.02)
    enc = pair_objective._encode(r32.tokenizer, ["the cat sat ."], ["the cat ."], 32, "cpu")
    with torch.no_grad():
        a = torch.softmax(r32.model.eval()(**enc)["3way"], -1)
        b = torch.softmax(r16.model.eval()(**enc)["3way"], -1)
    assert float((a - b).abs().max()) < 0.05


def test_soft_rows_train_the_entailment_probability(tiny_base):
    """Teacher rows ('soft', label = P(entail)) pull the 3-way head's P(entailment) toward the teacher."""
    base = toy_frame(16, tasks=("3way",))
    soft = pd.DataFrame({"text_a": ["the dog runs in the park ."] * 16, "text_b": ["the dog runs ."] * 16,
                         "task": "soft", "label": 0.95, "source": "toy_teacher"})
    probs = {}
    for target in (0.95, 0.05):
        res = engine.train(pd.concat([base, soft.assign(label=target)], ignore_index=True),
                         cfg_for(tiny_base, tasks=("3way",), max_steps=40), out_dir=False, progress=False,
                         keep_model=True)
        enc = pair_objective._encode(res.tokenizer, ["the dog runs in the park ."], ["the dog runs ."], 32, "cpu")
        with torch.no_grad():
            probs[target] = float(torch.softmax(res.model.eval()(**enc)["3way"], -1)[0, multihead.LABEL2ID["entailment"]])
    assert probs[0.95] > 0.6 > 0.3 > probs[0.05], probs
    with pytest.raises(ValueError, match="soft"):
        pair_objective.validate_frame(soft.assign(label=1.5), pair_objective.ROW_TASKS)
    # the soft loss by hand: -(t log p + (1 - t) log(1 - p))
    logits = torch.tensor([[2.0, 0.0, -1.0]])
    pe = torch.softmax(logits, -1)[0, 0]
    loss, _ = pair_objective._loss({"3way": logits}, torch.tensor([pair_objective.TASK_CODE["soft"]]), torch.tensor([0.7]), {})
    assert abs(float(loss) - float(-(0.7 * torch.log(pe) + 0.3 * torch.log(1 - pe)))) < 1e-5


def test_dev_eval_split(tiny_base):
    res = engine.train(toy_frame(20), cfg_for(tiny_base, max_steps=2, eval_rows=4), out_dir=False,
                     progress=False)
    s = res.summary
    assert s["mix"]["dev_rows"] == 12 and s["mix"]["train_rows"] == 48
    assert set(s["dev_eval"]) == {"3way", "bin", "reg"} and s["dev_eval"]["bin"]["rows"] == 4


# --- input validation ------------------------------------------------------------------------------

@pytest.mark.parametrize("mutate, msg", [
    (lambda d: d.drop(columns="task"), "lacks columns"),
    (lambda d: d.assign(task="nli"), "unknown task"),
    (lambda d: d.assign(text_b=[""] + list(d.text_b[1:])), "empty or non-string text_b"),
    (lambda d: d.assign(label=[3] + list(d.label[1:])), "task 3way: labels must be in"),
    (lambda d: d.assign(label=np.where(d.task == "reg", 4.0, d.label)), "scale them first"),
    (lambda d: d.iloc[:0], "empty"),
])
def test_bad_frames_raise(mutate, msg):
    with pytest.raises(ValueError, match=msg):
        pair_objective.validate_frame(mutate(toy_frame(4)))


def test_bad_config_raises():
    with pytest.raises(ValueError, match="tasks"):
        engine.TrainConfig(tasks=("nli",)).validate()
    with pytest.raises(ValueError, match="device"):
        engine.TrainConfig(device="tpu").validate()


# --- inference aggregation -------------------------------------------------------------------------

def test_max_over_chunks_mean_over_sentences():
    # rows = context chunks, columns = claim sentences
    m = [[0.1, 0.9, 0.2],
         [0.7, 0.3, 0.4]]
    # max per column: 0.7, 0.9, 0.4 -> mean 2.0 / 3
    assert aggregate_max_mean(m) == pytest.approx(2.0 / 3)
    assert aggregate_max_mean([[0.25]]) == 0.25
    with pytest.raises(ValueError):
        aggregate_max_mean(np.zeros((0, 2)))


def test_soft_lcs():
    # in-order perfect alignment of 2 claim sentences to context sentences 0 and 2 -> 1.0
    m = [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]
    assert aggregate_soft_lcs(m) == pytest.approx(1.0)
    # reversed order: LCS can use only one of the two matches -> 0.5 (max-mean would give 1.0)
    r = [[0.0, 1.0], [1.0, 0.0]]
    assert aggregate_soft_lcs(r) == pytest.approx(0.5)
    assert aggregate_max_mean(r) == pytest.approx(1.0)
    # soft scores: best monotone path 0.6 (0,0) + 0.8 (1,1) = 1.4 over 2 sentences
    assert aggregate_soft_lcs([[0.6, 0.9], [0.1, 0.8]]) == pytest.approx(0.7)


def test_chunking_at_sentence_boundaries():
    s = ["one two three .", "four five .", "six seven eight nine .", "ten ."]
    # word counts 4, 3, 5, 2: a budget of 7 packs (4 + 3) and (5 + 2)
    assert chunk_sentences(s, 7) == ["one two three . four five .", "six seven eight nine . ten ."]
    assert chunk_sentences(s, 3) == ["one two three .", "four five .", "six seven eight nine .", "ten ."]
    assert chunk_sentences(s, 100) == [" ".join(s)]
    with pytest.raises(ValueError):
        chunk_sentences(s, 0)


def test_build_units_modes():
    ctx = ["The cat sat. The dog ran. A man ran."]
    claim = ["The cat sat. The dog ran."]
    c, s = build_units(ctx, claim, "chunk", chunk_words=6, splitter="rule")  # 3 + 3 words fit
    assert c == [["The cat sat. The dog ran.", "A man ran."]] and s == [["The cat sat.", "The dog ran."]]
    c, s = build_units(ctx, claim, "smart-n", splitter="rule")
    assert c == [["The cat sat.", "The dog ran.", "A man ran."]]
    c, s = build_units(ctx, claim, "document")
    assert c == [ctx] and s == [claim]
    with pytest.raises(ValueError, match="empty"):
        build_units(["x"], [" "])
    with pytest.raises(ValueError, match="unknown split"):
        build_units(["x"], ["y"], "paragraph")
    with pytest.raises(ValueError, match="tokenizer"):
        build_units(ctx, claim, "chunk", chunk_unit="tokens")


def test_token_budget_chunks(trained):
    """chunk_unit='tokens': 'the cat sat on the mat .' is 7 word-level tokens of the tiny vocab."""
    ctx = ["The cat sat on the mat. The dog ran. A man is big."]
    c, _ = build_units(ctx, ["The cat sat."], "chunk", chunk_words=10, splitter="rule", chunk_unit="tokens",
                       tokenizer=trained.tokenizer)
    # sentences of 7, 4 and 5 tokens: 7 + 4 > 10, then 4 + 5 <= 10
    assert c == [["The cat sat on the mat.", "The dog ran. A man is big."]]


def test_score_aggregates_pair_scores(trained):
    """End to end: score() equals the hand aggregation of pair_scores over the unit matrix."""
    m = load_alignscore_model(trained.out_dir, "cpu")
    ctx = ["The cat sat on the mat. The dog runs in the park. A man is big.", "A woman is small."]
    claim = ["The cat sat. A man is not big.", "A woman is small."]
    for split in ("chunk", "smart-n", "smart-l", "document"):
        for head in ("3way", "bin", "reg"):
            got, mats = m.score(ctx, claim, head=head, split=split, chunk_words=8, splitter="rule",
                                return_matrices=True)
            cu, su = build_units(ctx, claim, split, 8, "rule")
            for i in range(2):
                pairs = [(c, s) for c in cu[i] for s in su[i]]
                flat = m.pair_scores([p[0] for p in pairs], [p[1] for p in pairs], head=head)
                mat = flat.reshape(len(cu[i]), len(su[i]))
                np.testing.assert_allclose(mats[i], mat, atol=1e-5)
                agg = aggregate_soft_lcs if split == "smart-l" else aggregate_max_mean
                assert got[i] == pytest.approx(agg(mat), abs=1e-5)
    assert m.score(ctx, claim).shape == (2,)


def test_fp16_checkpoint_loads_as_float32(trained, tmp_path):
    import shutil

    d = tmp_path / "half"
    shutil.copytree(trained.out_dir, d)
    assert checkpoints.convert_checkpoint_dtype(d, "fp16") == ["model.safetensors", multihead.HEADS_FILE]
    assert (d / "model.safetensors").stat().st_size < 0.6 * (trained.out_dir / "model.safetensors").stat().st_size
    full, half = load_alignscore_model(trained.out_dir), load_alignscore_model(d)
    assert next(half.model.parameters()).dtype == torch.float32
    a, b = ["the cat sat on the mat ."], ["the cat sat ."]
    for h in ("3way", "bin", "reg"):
        np.testing.assert_allclose(half.pair_scores(a, b, head=h), full.pair_scores(a, b, head=h), atol=5e-3)
    with pytest.raises(ValueError, match="dtype"):
        checkpoints.convert_checkpoint_dtype(d, "int8")


def test_cli_commands_registered():
    from click.testing import CliRunner

    from tfc.cli.train import train as group

    assert {"nli", "alignscore", "convert"} <= set(group.commands)
    res = CliRunner().invoke(group, ["alignscore", "--help"])
    assert res.exit_code == 0 and "--max-minutes" in res.output and "--save-dtype" in res.output


def test_init_continues_from_a_trained_checkpoint(trained, tiny_base):
    """cfg.init starts from the saved weights (heads included), not from the base encoder."""
    import torch

    res = engine.train(toy_frame(), cfg_for(tiny_base, max_steps=1, lr=1e-12, warmup_ratio=0.0, init=str(trained.out_dir)),
                     out_dir=False, progress=False, keep_model=True)
    ref, _ = multihead.load_multihead(trained.out_dir)
    got, ref_sd = res.model.state_dict(), ref.state_dict()
    assert got.keys() == ref_sd.keys()
    for k in ref_sd:  # one step at lr 1e-12 moves no weight measurably
        torch.testing.assert_close(got[k], ref_sd[k], atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="has heads"):
        df = toy_frame(8)
        engine.train(df[df["task"] == "3way"], cfg_for(tiny_base, tasks=("3way",), max_steps=1, init=str(trained.out_dir)),
                   out_dir=False, progress=False)


def test_dev_from_keeps_the_parents_dev_rows_out_of_training(tiny_base, tmp_path, monkeypatch):
    from tfc.train.mix import save_mix

    parent = toy_frame(30)
    path = save_mix(parent, {"kind": "toy"}, tmp_path / "parent.parquet")
    cfg = cfg_for(tiny_base, max_steps=1, eval_rows=3, dev_from=str(path))
    want_dev = pair_objective.split_eval(pair_objective.validate_frame(parent, cfg.row_tasks()), 3, cfg.seed)[1]
    child = pd.concat([parent.iloc[::-1], toy_frame(5).assign(text_b=lambda d: d["text_b"] + " again")],
                      ignore_index=True)
    train_df, dev = pair_objective.split_like_parent(pair_objective.validate_frame(child, cfg.row_tasks()), cfg)
    pd.testing.assert_frame_equal(dev, want_dev)
    assert not set(pair_objective._pair_key(train_df)) & set(pair_objective._pair_key(dev))
    # rows that repeat a dev row go too (toy_frame repeats pairs); every other row stays
    vc = pair_objective.validate_frame(child, cfg.row_tasks())
    assert len(train_df) == int((~pair_objective._pair_key(vc).isin(set(pair_objective._pair_key(dev)))).sum()) >= len(child) - 3 * len(dev)
    res = engine.train(child, cfg, out_dir=False, progress=False)
    assert res.summary["dev_eval"]["3way"]["rows"] == int((want_dev["task"] == "3way").sum())


def test_cli_dtype_and_epochs_reach_the_engine(tiny_base, tmp_path):
    """`tfc train sentence --dtype bf16 --epochs 0.5` trains with bf16 autocast for half a pass (the step count
    follows the epochs, not the recipe's max_steps), and an unknown dtype is refused before anything runs."""
    import math

    from click.testing import CliRunner

    from tfc.cli.train import train as group
    from tfc.train.mix import save_mix

    df = toy_frame(24, tasks=("3way",))
    mix = save_mix(df, {"kind": "sentence", "rows_by_task": {"3way": len(df)}, "removed_total": 0},
                   tmp_path / "mix.parquet")
    out = tmp_path / "run"
    args = ["sentence", "--base", tiny_base, "--mix-file", str(mix), "--tasks", "3way", "--batch-size", "4",
            "--max-length", "32", "--threads", "1", "--device", "cpu", "--out", str(out)]
    res = CliRunner().invoke(group, [*args, "--dtype", "bf16", "--epochs", "0.5"])
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["dtype"] == "bf16-autocast" and summary["config"]["epochs"] == 0.5
    assert summary["steps"] == math.ceil(0.5 * summary["mix"]["train_rows"] / 4) < 2100
    assert 0 < summary["mix"]["train_rows"] < len(df)       # the dev rows are held out of the pass
    bad = CliRunner().invoke(group, [*args, "--dtype", "fp16"])
    assert bad.exit_code != 0 and "fp16" in bad.output
