"""The papers' released checkpoints, in their released layouts, on tiny random models (issue #19).

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
    from tokenizers import Tokenizer, models as tm, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["<pad>", "</s>", "<unk>", "0", "1"] + list(dict.fromkeys(WORDS)))}
    tk = Tokenizer(tm.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace()])
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
    from tfc.train.core import load_multihead

    with pytest.raises(ValueError, match="unknown format"):
        load_multihead(converted[0])


def test_convert_cli(alignscore_ckpt, roberta_base, tmp_path):
    from click.testing import CliRunner

    from tfc.models.cli import models as group

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
