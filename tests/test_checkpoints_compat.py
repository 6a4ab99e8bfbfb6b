"""The papers' released checkpoints, in their released layouts, on tiny random models.

Each test writes a tiny model of the same architecture family and file layout as a released checkpoint
(AlignScore's Lightning ``.ckpt``, TRUE's T5 text-to-text NLI, WeCheck's single-logit DeBERTa-v2,
SummaC's VitaminC ALBERT label order, Q²'s T5 QG + ALBERT SQuAD2 QA, QAGS's BART QG after the fairseq
conversion), loads it through the scorer code, and checks the scores against a forward pass computed
here by hand. Random weights: the numbers mean nothing, the equalities do.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import tfc.scorers as S  # noqa: E402
from tfc import models  # noqa: E402
from tfc.models import convert  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GROUND = ["The cat sat on the mat.", "A man walked to the city in 2001.", "The team won the game."]
GEN = ["A cat sat.", "The man ran to the city.", "The team lost."]


# --------------------------------------------------------------------------------------------------
# tiny tokenizers built offline

def _roberta_tokenizer(max_len: int = 128):
    """A byte-level BPE (RoBERTa) tokenizer with no merges: one token per byte-level character."""
    from tokenizers import pre_tokenizers
    from transformers import RobertaTokenizerFast

    alpha = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>"] + alpha + ["<mask>"])}
    return RobertaTokenizerFast(vocab=vocab, merges=[], model_max_length=max_len)


WORDS = ("premise : hypothesis the a cat sat on mat man walked ran to city in 2001 team won lost game "
         ". , ? answer context question what who where when did is was").split()


def _t5_tokenizer():
    """A T5 tokenizer (``T5TokenizerFast``) over a word-level vocabulary: ``<pad>`` 0, ``</s>`` 1, ``<unk>``
    2 as in T5, then words, ``0`` and ``1`` as tokens of their own."""
    from tokenizers import Tokenizer, models as tm, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["<pad>", "</s>", "<unk>", "0", "1"] + list(dict.fromkeys(WORDS)))}
    tk = Tokenizer(tm.WordLevel(vocab, unk_token="<unk>"))
    tk.normalizer = normalizers.Lowercase()
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                      special_tokens=[("</s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
                                   model_max_length=256)


# --------------------------------------------------------------------------------------------------
# 1. AlignScore Lightning .ckpt -> HF directory + pooled side heads

@pytest.fixture(scope="module")
def roberta_base(tmp_path_factory):
    """A tiny 'roberta-base': config + tokenizer, as ``--base`` points to."""
    from transformers import RobertaConfig

    d = tmp_path_factory.mktemp("roberta_base")
    tok = _roberta_tokenizer()
    cfg = RobertaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=130, pad_token_id=1, bos_token_id=0,
                        eos_token_id=2, type_vocab_size=1)
    cfg.save_pretrained(d)
    tok.save_pretrained(d)
    return d


@pytest.fixture(scope="module")
def alignscore_ckpt(tmp_path_factory, roberta_base):
    """A Lightning-layout AlignScore checkpoint with BERTAlignModel's key names, plus its modules."""
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaModel

    cfg = RobertaConfig.from_pretrained(roberta_base)
    torch.manual_seed(11)
    base = RobertaModel(cfg).eval()              # with its pooler, as RobertaModel.from_pretrained builds it
    for p in base.parameters():                  # large random weights: outputs far from uniform
        torch.nn.init.normal_(p, std=0.3)
    mlm = RobertaForMaskedLM(cfg).lm_head
    heads = {"tri": torch.nn.Linear(32, 3), "bin": torch.nn.Linear(32, 2), "reg": torch.nn.Linear(32, 1)}
    for h in heads.values():
        torch.nn.init.normal_(h.weight, std=1.0)
    sd = {f"base_model.{k}": v for k, v in base.state_dict().items()}
    sd.update({f"mlm_head.{k}": v for k, v in mlm.state_dict().items()})
    for name, lin in heads.items():
        sd.update({f"{name}_layer.{k}": v for k, v in lin.state_dict().items()})
    obj = {"epoch": 1, "global_step": 100, "pytorch-lightning_version": "1.7.7", "state_dict": sd,
           "hyper_parameters": {"model": "roberta-base", "using_pretrained": True, "learning_rate": 1e-5,
                                "adam_epsilon": 1e-6, "warmup_steps_portion": 0.06}}
    path = tmp_path_factory.mktemp("ckpt") / "AlignScore-base.ckpt"
    torch.save(obj, path)
    return path, base, heads


@pytest.fixture(scope="module")
def converted(tmp_path_factory, alignscore_ckpt, roberta_base):
    out = tmp_path_factory.mktemp("converted") / "alignscore-base"
    rec = convert.convert_alignscore(alignscore_ckpt[0], out, base=str(roberta_base))
    return out, rec


def _by_hand(base, heads, tok, premises, hyps):
    """BERTAlignModel.forward + AlignScore's Inferencer.inference: tri[:, 0], bin[:, 1], raw reg."""
    out = {"3way": [], "bin": [], "reg": []}
    with torch.no_grad():
        for p, h in zip(premises, hyps):
            enc = tok(p, h, return_tensors="pt")
            pooled = base(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).pooler_output
            out["3way"].append(torch.softmax(heads["tri"](pooled), -1)[0, 0].item())
            out["bin"].append(torch.softmax(heads["bin"](pooled), -1)[0, 1].item())
            out["reg"].append(heads["reg"](pooled)[0, 0].item())
    return {k: np.array(v) for k, v in out.items()}


def test_alignscore_conversion_layout(converted):
    out, rec = converted
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["model_type"] == "roberta"
    assert {int(k): v for k, v in cfg["id2label"].items()} == {0: "entailment", 1: "neutral", 2: "contradiction"}
    meta = json.loads((out / "tfc_heads.json").read_text())
    assert meta["format"] == convert.POOLED_FORMAT
    assert meta["heads"]["reg"]["activation"] == "identity"
    from safetensors.torch import load_file

    assert sorted(load_file(str(out / "tfc_heads.safetensors"))) == ["bin.bias", "bin.weight", "reg.bias", "reg.weight"]
    assert rec["dropped_keys"] > 0 and rec["hyper_parameters_model"] == "roberta-base"
    assert len(rec["sha256"]) == 64


def test_alignscore_converted_scores_equal_hand_forward(converted, alignscore_ckpt, tmp_cache):
    out, _ = converted
    _, base, heads = alignscore_ckpt
    tok = _roberta_tokenizer()
    want = _by_hand(base, heads, tok, GROUND, GEN)
    assert want["3way"].std() > 1e-3     # the random model is not degenerate
    for head in ("3way", "bin", "reg"):
        s = S.get("alignscore", checkpoint=str(out), head=head, split="document", sentence_splitter="rule")
        got = s.score(GROUND, GEN, progress=False)
        np.testing.assert_allclose(got, want[head], atol=1e-5, err_msg=head)
        aux = s.last_aux()
        for other in {"3way", "bin", "reg"} - {head}:
            np.testing.assert_allclose(aux[f"aux_{other}"], want[other], atol=1e-5)


def test_alignscore_converted_chunk_mode_is_max_mean_of_pairs(converted, alignscore_ckpt):
    out, _ = converted
    _, base, heads = alignscore_ckpt
    tok = _roberta_tokenizer()
    ctx = "The cat sat on the mat. The team won the game."
    claim = "A cat sat. The team lost."
    s = S.get("alignscore", checkpoint=str(out), split="smart-n", sentence_splitter="rule")
    got = s.score([ctx], [claim], progress=False)[0]
    cs, hs = ["The cat sat on the mat.", "The team won the game."], ["A cat sat.", "The team lost."]
    m = np.array([[_by_hand(base, heads, tok, [c], [h])["3way"][0] for h in hs] for c in cs])
    assert got == pytest.approx(m.max(axis=0).mean(), abs=1e-5)


def test_alignscore_converted_dir_is_a_plain_nli_classifier(converted, alignscore_ckpt):
    """The 3-way head loads as an ordinary HF sequence classifier (nli / SummaC scorers)."""
    out, _ = converted
    _, base, heads = alignscore_ckpt
    want = _by_hand(base, heads, _roberta_tokenizer(), GROUND, GEN)["3way"]
    got = S.get("nli", checkpoint=str(out), sentence_splitter="rule").score(GROUND, GEN, progress=False)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_in_house_loader_refuses_the_pooled_format(converted):
    """tfc's own loader would put the heads on the wrong features; it must refuse, not misread."""
    from tfc.models.multihead import load_multihead

    with pytest.raises(ValueError, match="unknown format"):
        load_multihead(converted[0])


def test_convert_cli(alignscore_ckpt, roberta_base, tmp_path):
    from click.testing import CliRunner

    from tfc.cli.models import models as group

    out = tmp_path / "cli_out"
    r = CliRunner().invoke(group, ["convert", "alignscore", str(alignscore_ckpt[0]), str(out), "--base", str(roberta_base)])
    assert r.exit_code == 0, r.output
    assert convert.is_pooled_alignscore(out)
    r2 = CliRunner().invoke(group, ["convert", "alignscore", str(alignscore_ckpt[0]), str(out), "--base", str(roberta_base)])
    assert r2.exit_code != 0 and "not empty" in r2.output


MARKER = []


def _side_effect(path):  # what a malicious pickle would run on load
    Path(path).write_text("ran")
    return {}


class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (_side_effect, (self.path,))


def test_unsafe_pickle_is_refused_and_not_run(tmp_path):
    flag = tmp_path / "flag"
    bad = tmp_path / "bad.ckpt"
    torch.save({"state_dict": {"x": torch.zeros(1)}, "hyper_parameters": _Evil(str(flag))}, bad)
    with pytest.raises(convert.UnsafeCheckpointError, match="_side_effect"):
        convert.load_checkpoint_safely(bad)
    assert not flag.exists()


def test_namespace_hparams_named_in_refusal(tmp_path):
    import argparse

    bad = tmp_path / "ns.ckpt"
    torch.save({"state_dict": {}, "hyper_parameters": argparse.Namespace(model="roberta-large")}, bad)
    with pytest.raises(convert.UnsafeCheckpointError, match=r"argparse\.Namespace"):
        convert.convert_alignscore(bad, tmp_path / "o", base="x")


def test_layout_errors(alignscore_ckpt, roberta_base, tmp_path):
    sd = torch.load(alignscore_ckpt[0], weights_only=True)["state_dict"]
    no_tri = {k: v for k, v in sd.items() if not k.startswith("tri_layer")}
    with pytest.raises(convert.CheckpointLayoutError, match="tri_layer"):
        convert.split_alignscore_state(no_tri)
    electra = dict(sd, **{"discriminator_predictor.dense.weight": torch.zeros(2, 2)})
    with pytest.raises(convert.CheckpointLayoutError, match="discriminator_predictor"):
        convert.split_alignscore_state(electra)
    # a backbone config that does not fit the weights (hidden 16 instead of 32)
    from transformers import RobertaConfig

    wrong = tmp_path / "wrong_base"
    RobertaConfig(vocab_size=261, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, max_position_embeddings=130).save_pretrained(wrong)
    _roberta_tokenizer().save_pretrained(wrong)
    with pytest.raises(convert.CheckpointLayoutError, match="does not fit"):
        convert.convert_alignscore(alignscore_ckpt[0], tmp_path / "o2", base=str(wrong))


# --------------------------------------------------------------------------------------------------
# 2. TRUE's text-to-text NLI (google/t5_xxl_true_nli_mixture): a tiny T5 in the same layout

@pytest.fixture(scope="module")
def tiny_t5_nli(tmp_path_factory):
    from transformers import T5Config, T5ForConditionalGeneration

    d = tmp_path_factory.mktemp("t5_nli")
    tok = _t5_tokenizer()
    cfg = T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=1, num_decoder_layers=1,
                   num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
                   architectures=["T5ForConditionalGeneration"])
    torch.manual_seed(7)
    model = T5ForConditionalGeneration(cfg).eval()
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.5)
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d, model


def _vocab_ids(text):
    tok = _t5_tokenizer()
    vocab = tok.get_vocab()
    words = re.findall(r"\w+|[^\w\s]+", text.lower())
    return [vocab.get(w, vocab["<unk>"]) for w in words] + [vocab["</s>"]]


def test_true_prompt_and_token_ids(tiny_t5_nli):
    from tfc.scorers.seq2seq_nli import Seq2SeqNLIEngine, true_prompt

    assert true_prompt("The cat sat on the mat.", "A cat sat.") == "premise: The cat sat on the mat. hypothesis: A cat sat."
    eng = Seq2SeqNLIEngine(str(tiny_t5_nli[0]))
    ids = eng.tok(eng.prompt("The cat sat on the mat.", "A cat sat."))["input_ids"]
    assert ids == _vocab_ids("premise : the cat sat on the mat . hypothesis : a cat sat .")
    assert eng.positive_id == eng.tok.get_vocab()["1"] and eng.start_id == 0
    assert eng.n_special == len(_vocab_ids("premise : hypothesis :"))


def test_true_t5_probability_matches_hand_computation(tiny_t5_nli):
    d, model = tiny_t5_nli
    vocab = _t5_tokenizer().get_vocab()
    want = []
    with torch.no_grad():
        for g, h in zip(GROUND, GEN):
            ids = torch.tensor([_vocab_ids(f"premise: {g} hypothesis: {h}")])
            logits = model(input_ids=ids, decoder_input_ids=torch.tensor([[0]])).logits[0, 0]
            want.append(torch.softmax(logits, -1)[vocab["1"]].item())   # full-vocabulary softmax, step 1
    want = np.array(want)
    assert want.std() > 1e-4
    for head in ("auto", "seq2seq-1"):        # "auto" detects the encoder-decoder without a classifier
        s = S.get("nli", checkpoint=str(d), head=head, sentence_splitter="rule")
        np.testing.assert_allclose(s.score(GROUND, GEN, progress=False), want, atol=1e-6)
    s1 = S.get("nli", checkpoint=str(d), head="seq2seq-1", sentence_splitter="rule")
    np.testing.assert_allclose(s1.score(GROUND[::-1], GEN[::-1], batch_size=1, progress=False), want[::-1], atol=1e-6)
    with pytest.raises(ValueError, match="label_names"):
        S.get("nli", checkpoint=str(d), head="seq2seq-1", label_names=("entailment", "neutral")).load()


def test_true_t5_long_grounding_is_chunked_not_cut(tiny_t5_nli):
    """A grounding longer than max_length is cut into chunks; the score is the max over chunks."""
    from tfc.scorers.seq2seq_nli import Seq2SeqNLIEngine

    d, _ = tiny_t5_nli
    g = "The cat sat on the mat. The team won the game. A man walked to the city."
    s = S.get("nli", checkpoint=str(d), head="seq2seq-1", max_length=20, min_chunk_tokens=4, sentence_splitter="rule")
    got = s.score([g], ["The team won."], progress=False)[0]
    assert s.last_aux()["aux_n_chunks"][0] > 1
    from tfc.text.chunking import chunk_many

    eng = Seq2SeqNLIEngine(str(d), max_length=20)
    _, budgets, _ = eng.hyp_budget(["The team won."], 4)
    chunks = chunk_many([g], eng.tok, budgets[0], splitter="rule")[0].chunks
    assert len(chunks) > 1 and all(len(eng.tok(eng.prompt(c, "The team won."))["input_ids"]) <= 20 for c in chunks)
    per = eng.probs([(c, "The team won.") for c in chunks], 8)[:, 0]
    assert eng.last_truncated == 0
    assert got == pytest.approx(per.max(), abs=1e-6)


def test_head_changes_signature_only_when_it_changes():
    base = S.get("nli", preset="as-published", checkpoint="tfc/nli-minilm")
    assert base.config.head == "auto"
    assert S.get("nli", preset="as-published", checkpoint="tfc/nli-minilm", head="auto").signature == base.signature
    assert S.get("nli", preset="as-published", checkpoint="tfc/nli-minilm", head="softmax").signature != base.signature
    with pytest.raises(ValueError, match="head must be one of"):
        S.get("nli", head="argmax")


# --------------------------------------------------------------------------------------------------
# 3. WeCheck (nightdessert/WeCheck): DeBERTa-v2 sequence classifier read as sigmoid(logits[:, 0])

def _deberta_classifier(path, num_labels, seed=3):
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

    from tfc.models.tiny import make_tiny_classifier

    make_tiny_classifier(path)              # only for its WordPiece tokenizer files (no sentencepiece offline)
    for f in ("config.json", "model.safetensors"):
        (Path(path) / f).unlink()
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    cfg = DebertaV2Config(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=128, num_labels=num_labels,
                          relative_attention=True, position_buckets=16, pos_att_type=["p2c", "c2p"],
                          architectures=["DebertaV2ForSequenceClassification"])
    torch.manual_seed(seed)
    model = DebertaV2ForSequenceClassification(cfg).eval()
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    model.save_pretrained(path)
    return model, tok


def _logit0_sigmoid(model, tok, ground, gen):
    with torch.no_grad():
        return np.array([torch.sigmoid(model(**tok(g, h, return_tensors="pt")).logits[0, 0]).item()
                         for g, h in zip(ground, gen)])


def test_wecheck_one_logit_deberta(tmp_path):
    model, tok = _deberta_classifier(tmp_path / "wecheck", num_labels=1)
    want = _logit0_sigmoid(model, tok, GROUND, GEN)
    for head in ("auto", "logit0-sigmoid"):
        got = S.get("wecheck", checkpoint=str(tmp_path / "wecheck"), head=head,
                    sentence_splitter="rule").score(GROUND, GEN, progress=False)
        np.testing.assert_allclose(got, want, atol=1e-6)
    with pytest.raises(models.LabelOrderError, match="logit0-sigmoid"):
        S.get("wecheck", checkpoint=str(tmp_path / "wecheck"), head="softmax").load()


def test_wecheck_head_on_a_three_logit_layout(tmp_path):
    """If the released config carried 3 generic logits, 'auto' refuses (no label order to read) and the
    explicit head reads logit 0, as the model card does."""
    model, tok = _deberta_classifier(tmp_path / "w3", num_labels=3)
    with pytest.raises(models.LabelOrderError, match="generic"):
        S.get("wecheck", checkpoint=str(tmp_path / "w3")).load()
    got = S.get("wecheck", checkpoint=str(tmp_path / "w3"), head="logit0-sigmoid",
                sentence_splitter="rule").score(GROUND, GEN, progress=False)
    np.testing.assert_allclose(got, _logit0_sigmoid(model, tok, GROUND, GEN), atol=1e-6)


def test_wecheck_as_published_is_the_readme_call(tmp_path):
    """WeCheck's README: tokenizer(premise, hypothesis, truncation=True, max_length=...) per pair, sigmoid of logit 0.
    A grounding longer than the model's input is cut longest_first (and the row recorded), not chunked; the README's
    batched call leaves out the attention mask, which tfc passes: the padded row then keeps its one-pair score."""
    model, tok = _deberta_classifier(tmp_path / "wecheck", num_labels=1)
    long = " ".join(["The cat sat on the mat while the dog slept by the door."] * 20)
    ground, gen = [long, GROUND[1]], ["The dog slept.", GEN[1]]
    with torch.no_grad():
        want = np.array([torch.sigmoid(model(**tok(g, h, truncation=True, max_length=128,
                                                  return_tensors="pt")).logits[0, 0]).item()
                         for g, h in zip(ground, gen)])
        batch = tok(ground, gen, padding=True, truncation=True, max_length=128, return_tensors="pt")
        unmasked = torch.sigmoid(model(batch["input_ids"]).logits[:, 0]).numpy()
    scorer = S.get("wecheck", preset="as-published", checkpoint=str(tmp_path / "wecheck"))
    assert scorer.config.long_grounding == "truncate"
    np.testing.assert_allclose(scorer.score(ground, gen, progress=False), want, atol=1e-6)
    assert abs(unmasked[1] - want[1]) > 1e-4          # the README's batch without a mask scores the short row otherwise
    assert scorer.last_aux()["aux_truncated"].tolist() == [True, False]
    chunked = S.get("wecheck", preset="as-published", checkpoint=str(tmp_path / "wecheck"),
                    long_grounding="chunk").score(ground, gen, progress=False)
    assert abs(chunked[0] - want[0]) > 1e-6 and abs(chunked[1] - want[1]) < 1e-6
    with pytest.raises(ValueError, match="mode='document'"):
        S.get("wecheck", preset="as-published", mode="sentence")
    with pytest.raises(ValueError, match="long_grounding"):
        S.get("wecheck", long_grounding="cut")


# --------------------------------------------------------------------------------------------------
# 3b. SummaC's NLI checkpoints carry their own label order (read from id2label, never guessed)

VITC = {0: "SUPPORTS", 1: "REFUTES", 2: "NOT ENOUGH INFO"}        # tals/albert-*-vitaminc-mnli
MNLI = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}         # roberta-large-mnli


def _albert_classifier(path, id2label, seed=5):
    from transformers import AlbertConfig, AlbertForSequenceClassification, AutoTokenizer

    from tfc.models.tiny import make_tiny_classifier

    make_tiny_classifier(path)
    for f in ("config.json", "model.safetensors"):
        (Path(path) / f).unlink()
    tok = AutoTokenizer.from_pretrained(path)
    cfg = AlbertConfig(vocab_size=len(tok), embedding_size=16, hidden_size=32, num_hidden_layers=2,
                       num_attention_heads=2, intermediate_size=64, max_position_embeddings=128,
                       num_labels=3, id2label=id2label, label2id={v: k for k, v in id2label.items()})
    torch.manual_seed(seed)
    model = AlbertForSequenceClassification(cfg).eval()
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    model.save_pretrained(path)
    return model, tok


@pytest.mark.parametrize("id2label,i_ent,i_con", [(VITC, 0, 1), (MNLI, 2, 0)])
def test_summac_reads_label_order_from_id2label(tmp_path, id2label, i_ent, i_con):
    model, tok = _albert_classifier(tmp_path / "nli", id2label)
    with torch.no_grad():
        p = [torch.softmax(model(**tok(g, h, return_tensors="pt")).logits[0], -1).numpy()
             for g, h in zip(GROUND, GEN)]
    want = np.array([x[i_ent] - x[i_con] for x in p])
    s = S.get("summac-zs", preset="as-published", checkpoint=str(tmp_path / "nli"), sentence_splitter="rule")
    np.testing.assert_allclose(s.score(GROUND, GEN, progress=False), want, atol=1e-6)
    # a caller who expects another order gets an error, not a silent flip
    wrong = ("entailment", "neutral", "contradiction")     # neither checkpoint's order
    with pytest.raises(models.LabelOrderError, match="mismatch"):
        S.get("summac-zs", checkpoint=str(tmp_path / "nli"), label_names=wrong).load()


def test_generic_labels_need_an_explicit_order(tmp_path):
    _albert_classifier(tmp_path / "gen", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(models.LabelOrderError, match="generic"):
        S.get("summac-zs", checkpoint=str(tmp_path / "gen")).load()
    s = S.get("summac-zs", checkpoint=str(tmp_path / "gen"), label_names=("entailment", "contradiction", "neutral"))
    s.load()
    assert (s.engine.i_ent, s.engine.i_con) == (0, 1)


# --------------------------------------------------------------------------------------------------
# 4. Q²: T5 QG (mrm8488/t5-base-finetuned-question-generation-ap) + ALBERT SQuAD2 QA
#    (ktrapeznikov/albert-xlarge-v2-squad-v2); QAGS: BART QG (after transformers' fairseq conversion)

@pytest.fixture(scope="module")
def tiny_t5_qg(tmp_path_factory):
    from transformers import T5Config, T5ForConditionalGeneration

    d = tmp_path_factory.mktemp("t5_qg")
    tok = _t5_tokenizer()
    cfg = T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=1, num_decoder_layers=1,
                   num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    torch.manual_seed(8)
    model = T5ForConditionalGeneration(cfg).eval()
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d, model, tok


@pytest.fixture(scope="module")
def tiny_bart_qg(tmp_path_factory):
    from transformers import BartConfig, BartForConditionalGeneration

    d = tmp_path_factory.mktemp("bart_qg")
    tok = _roberta_tokenizer()        # BART's byte-level BPE vocabulary layout (<s> 0, <pad> 1, </s> 2)
    cfg = BartConfig(vocab_size=len(tok), d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=256,
                     pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                     forced_bos_token_id=0)
    torch.manual_seed(9)
    model = BartForConditionalGeneration(cfg).eval()
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d, model, tok


@pytest.fixture(scope="module")
def tiny_albert_qa(tmp_path_factory):
    from transformers import AlbertConfig, AlbertForQuestionAnswering, AutoTokenizer

    from tfc.models.tiny import make_tiny_classifier

    d = tmp_path_factory.mktemp("albert_qa")
    make_tiny_classifier(d)
    for f in ("config.json", "model.safetensors"):
        (d / f).unlink()
    tok = AutoTokenizer.from_pretrained(d)
    cfg = AlbertConfig(vocab_size=len(tok), embedding_size=16, hidden_size=32, num_hidden_layers=2,
                       num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    torch.manual_seed(10)
    model = AlbertForQuestionAnswering(cfg).eval()
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    model.save_pretrained(d)
    return d, model, tok


def _greedy(model, tok, text, num_beams=1, n=1):
    enc = tok([text], return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**enc, num_beams=num_beams, num_return_sequences=n, max_new_tokens=64, do_sample=False)
    return [q.strip() for q in tok.batch_decode(out, skip_special_tokens=True)]


def test_q2_t5_qg_prompt_and_output(tiny_t5_qg):
    from tfc.scorers.qgqa import Seq2SeqQG, T5_AP_TEMPLATE

    d, model, tok = tiny_t5_qg
    qg = Seq2SeqQG(str(d))
    assert qg.template == T5_AP_TEMPLATE == "answer: {answer}  context: {context}"
    got = qg.generate(["The team won the game."], ["the team"])[0]
    want = _greedy(model, tok, "answer: the team  context: The team won the game.")
    assert [q for q, _ in got] == [q[len("question:"):].strip() if q.lower().startswith("question:") else q for q in want]


def test_qags_bart_qg_template_and_beams(tiny_bart_qg):
    from tfc.scorers.qgqa import QAGS_TEMPLATE, Seq2SeqQG

    d, model, tok = tiny_bart_qg
    qg = Seq2SeqQG(str(d), template=QAGS_TEMPLATE, num_beams=3, num_return=2)
    got = qg.generate(["The cat sat on the mat."], ["the mat"])[0]
    want = _greedy(model, tok, "The cat sat on the mat. [ANS] the mat", num_beams=3, n=2)
    assert [q for q, _ in got] == want
    assert got[0][1] >= got[1][1]           # beams come back best first, with their scores


def test_qags_and_q2_configs_take_the_template(tiny_bart_qg):
    from tfc.scorers.qgqa import QAGS_TEMPLATE, T5_AP_TEMPLATE

    base = S.get("qags")
    assert base.config.qg_template == T5_AP_TEMPLATE       # the seq2seq QG input unless another is named
    s = S.get("qags", qg_backend="seq2seq", qg_checkpoint=str(tiny_bart_qg[0]), qg_template=QAGS_TEMPLATE)
    assert s._qg().template == QAGS_TEMPLATE
    assert S.get("q2", qg_template=QAGS_TEMPLATE).signature != S.get("q2").signature
    with pytest.raises(ValueError, match="qg_template"):
        S.get("qags", qg_template="{context} only")


def test_albert_squad2_qa_span_and_null(tiny_albert_qa):
    """ExtractiveQA on an ALBERT QA head: best span score minus the null ([CLS]) score, by hand."""
    from tfc.scorers.qgqa import ExtractiveQA

    d, model, tok = tiny_albert_qa
    q, c = "who won the game?", "The team won the game in 2001."
    res = ExtractiveQA(str(d), max_length=64, stride=16).answer([q], [c])[0]
    enc = tok(q, c, return_tensors="pt", return_offsets_mapping=True)
    offs = enc.pop("offset_mapping")[0]
    with torch.no_grad():
        out = model(**enc)
    st, en = out.start_logits[0].numpy(), out.end_logits[0].numpy()
    ctx = [i for i, s in enumerate(enc.sequence_ids(0)) if s == 1]
    best = max((st[a] + en[b], a, b) for a in ctx for b in ctx if a <= b < a + 30)
    null = st[0] + en[0]
    assert res.score == pytest.approx(best[0] - null, abs=1e-5)
    if best[0] - null > 0:
        assert res.text == c[int(offs[best[1]][0]):int(offs[best[2]][1])]
    else:
        assert res.text == "" and not res.has_answer


def test_q2_end_to_end_with_t5_qg_and_albert_qa(tiny_t5_qg, tiny_albert_qa):
    pytest.importorskip("spacy")
    s = S.get("q2", preset="as-published", qg_backend="seq2seq", qg_checkpoint=str(tiny_t5_qg[0]), checkpoint=str(tiny_albert_qa[0]),
              use_nli=False, no_questions="zero", qa_max_length=64, qa_stride=16)
    got = s.score(["The team won the game in 2001."], ["The team won the game."], progress=False)
    assert got.shape == (1,) and (np.isnan(got[0]) or 0.0 <= got[0] <= 1.0)
    comp = s.components()
    assert comp["qg"] == models.identity(str(tiny_t5_qg[0])) and comp["qa"] == models.identity(str(tiny_albert_qa[0]))


def test_overlong_question_is_cut_not_fatal(tiny_albert_qa):
    """A degenerate generated question longer than the QA window used to make the tokenizer refuse the batch."""
    from tfc.scorers.qgqa import ExtractiveQA

    qa = ExtractiveQA(str(tiny_albert_qa[0]), max_length=64, stride=16)
    res = qa.answer(["who won " * 80 + "?", "who won?"], ["The team won the game.", "The team won the game."])
    assert len(res) == 2 and all(np.isfinite(r.score) or r.score == float("-inf") for r in res)


# --------------------------------------------------------------------------------------------------
# 5. no trust_remote_code, no unrestricted unpickling anywhere in the project's code

def _project_python_files():
    """Every .py of the project except this file (which holds the patterns as test data), and the notebooks."""
    for sub in ("tfc", "scripts", "benchmarks", "tests"):
        yield from (f for f in sorted((ROOT / sub).rglob("*.py")) if f.resolve() != Path(__file__).resolve())
    yield from sorted((ROOT / "notebooks").glob("*.md"))


def test_no_trust_remote_code():
    pat = re.compile(r"trust_remote_code\s*=\s*True")
    hits = [f"{f.relative_to(ROOT)}:{i}" for f in _project_python_files()
            for i, line in enumerate(f.read_text(errors="replace").splitlines(), 1) if pat.search(line)]
    assert not hits, f"trust_remote_code=True found: {hits}"


def _torch_load_calls(text: str):
    """Each ``torch.load(`` call's full argument text (balanced parentheses)."""
    for m in re.finditer(r"\btorch\.load\(", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield text[m.start():i]




def _unrestricted_loads():
    bad = []
    for f in _project_python_files():
        text = f.read_text(errors="replace")
        for call in _torch_load_calls(text):
            if not re.search(r"weights_only\s*=\s*True", call):
                bad.append((str(f.relative_to(ROOT)), " ".join(call.split())[:120]))
    return bad


def test_every_torch_load_is_weights_only():
    bad = _unrestricted_loads()
    assert not bad, f"torch.load without weights_only=True: {bad}"
    pickles = [str(f.relative_to(ROOT)) for f in (ROOT / "tfc").rglob("*.py")
               if re.search(r"\bpickle\.loads?\(|\bdill\.load|\bjoblib\.load\(", f.read_text(errors="replace"))]
    assert not pickles, f"direct unpickling in {pickles}"


def test_the_grep_would_catch_an_offender():
    assert list(_torch_load_calls("x = torch.load(path,\n map_location='cpu')")) and not re.search(
        r"weights_only\s*=\s*True", next(_torch_load_calls("x = torch.load(path, map_location='cpu')")))
