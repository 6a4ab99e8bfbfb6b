"""The ``alignscore`` scorer on tiny random checkpoints (a 3-head one and a plain NLI classifier)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import tfc.scorers as S  # noqa: E402
from tfc.models.tiny import make_tiny_classifier  # noqa: E402
from tfc.results.dataset import head_scores  # noqa: E402
from tfc.scorers.alignscore import AlignScoreScorer  # noqa: E402

CTX = ["The cat sat on the mat. The dog ran in the park. A man is big.",
       "A woman is small. She was in the house.",
       "The team won the game in 2001."]
CLAIM = ["The cat sat. A man is not big.", "A woman is small.", "The team lost. It was 1990. No."]


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory):
    return str(make_tiny_classifier(tmp_path_factory.mktemp("as_nli"), seed=3))


@pytest.fixture(scope="module")
def tiny3(tmp_path_factory, tiny_nli):
    """The tiny classifier plus seeded random bin/reg heads, saved in the training code's format."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from tfc.models import multihead

    d = tmp_path_factory.mktemp("as_3head")
    torch.manual_seed(5)
    seqcls = AutoModelForSequenceClassification.from_pretrained(tiny_nli)
    model = multihead.multihead_class()(seqcls, multihead.TASKS)
    for p in model.heads.parameters():
        torch.nn.init.normal_(p, std=0.5)
    multihead.save_checkpoint(model, AutoTokenizer.from_pretrained(tiny_nli), d)
    return str(d)


def get(ckpt, **kw):
    return S.get("alignscore", preset="as-published", checkpoint=ckpt, sentence_splitter="rule", **kw)


# --- registry, config, signature ---------------------------------------------------------------------
def test_registry_and_defaults():
    s = S.get("alignscore", preset="as-published")
    assert isinstance(s, AlignScoreScorer)
    c = s.config
    assert (c.checkpoint, c.head, c.split, c.chunk_words, c.max_length) == (
        "tfc/sent-minilm-v2", "3way", "groups", 350, 512)
    assert s.output_range == (0.0, 1.0)
    d = S.get("alignscore").config                       # the default: the shipped model, the chosen reading
    assert d == c.replace(**S.DEFAULTS["alignscore"]) and d.checkpoint == S.SHIPPED_NLI


def test_signature_changes_with_head_split_checkpoint(tiny3, tiny_nli):
    base = get(tiny3)
    assert base.signature.startswith("alignscore.") and "-3way-groups." in base.signature
    assert base.signature == get(tiny3, batch_size=3, device="cpu").signature
    others = {get(tiny3, head="bin").signature, get(tiny3, head="reg").signature, get(tiny3, split="chunk").signature,
              get(tiny3, split="document").signature, get(tiny3, split="smart-n").signature,
              get(tiny3, split="smart-l").signature, get(tiny3, chunk_words=100).signature,
              get(tiny_nli).signature, get(tiny3, dtype="bfloat16").signature,
              get(tiny3, clean_claims=True).signature}
    assert base.signature not in others and len(others) == 10


@pytest.mark.parametrize("kw, err", [
    ({"head": "bogus"}, ValueError), ({"split": "paragraph"}, ValueError), ({"chunk_words": 0}, ValueError),
    ({"chunk_words": 2.5}, ValueError), ({"max_length": 4}, ValueError), ({"dtype": "int8"}, ValueError),
    ({"no_such_field": 1}, TypeError)])
def test_bad_config(kw, err, tiny3):
    with pytest.raises(err):
        get(tiny3, **kw)


def test_bad_input(tiny3):
    s = get(tiny3)
    with pytest.raises(TypeError, match="None"):
        s.score(["a cat ."], [None])
    with pytest.raises(ValueError, match="differ in length"):
        s.score(["a cat .", "b"], ["a cat ."])
    with pytest.raises(TypeError, match="single string"):
        s.score("a cat .", "a cat .")
    # empty or blank text: the documented empty_score (0.0), without calling the model
    out = s.score(["", "The cat sat.", "The cat sat."], ["The cat sat.", "   ", "The cat sat."], progress=False)
    assert out[0] == 0.0 and out[1] == 0.0 and 0.0 < out[2] < 1.0
    assert s.last_aux()["aux_n_pairs"].tolist() == [0, 0, 1]


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        S.get("alignscore", checkpoint=str(tmp_path / "nope")).score(["a"], ["a"], progress=False)


# --- scores ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("split", ["groups", "chunk", "document", "smart-n", "smart-l"])
def test_wraps_the_training_inference_code(tiny3, split):
    """Scores and aux columns equal :meth:`AlignScoreModel.score` of each head (one pass for all heads)."""
    from tfc.scorers.alignscore_model import load_alignscore_model

    m = load_alignscore_model(tiny3)
    for head in ("3way", "bin", "reg"):
        s = get(tiny3, head=head, split=split, chunk_words=8)
        got = s.score(CTX, CLAIM, progress=False)
        want = m.score(CTX, CLAIM, head=head, split=split, chunk_words=8, splitter="rule")
        np.testing.assert_allclose(got, want, atol=1e-6)
        aux = s.last_aux()
        assert set(aux) == {"aux_n_pairs", "aux_n_truncated_pairs"} | {f"aux_{h}" for h in ("3way", "bin", "reg") if h != head}
        assert (aux["aux_n_truncated_pairs"] == 0).all()   # 8-word chunks fit the tiny model's length
        for other in {"3way", "bin", "reg"} - {head}:
            np.testing.assert_allclose(aux[f"aux_{other}"], m.score(CTX, CLAIM, head=other, split=split,
                                                                     chunk_words=8, splitter="rule"), atol=1e-6)
        assert ((got >= 0) & (got <= 1)).all()


def test_pair_counts_hand_computed(tiny3):
    # CTX[0]: sentences of 6, 6 and 4 words; budget 8 words -> 3 chunks; CLAIM[0] has 2 sentences -> 6 pairs
    # CTX[1]: 4 + 5 words -> 2 chunks x 1 claim sentence; CTX[2]: 1 chunk x 3 claim sentences
    s = get(tiny3, split="chunk", chunk_words=8)
    s.score(CTX, CLAIM, progress=False)
    assert s.last_aux()["aux_n_pairs"].tolist() == [6, 2, 3]
    # as published: CTX[0] has 16 words -> 16 // 8 + 1 = 3 groups of 3 // 3 = 1 sentence; CTX[1]: 9 words -> 2
    # groups of 1 sentence; CTX[2]: 7 words -> 1 group
    s = get(tiny3, chunk_words=8)
    s.score(CTX, CLAIM, progress=False)
    assert s.last_aux()["aux_n_pairs"].tolist() == [6, 2, 3]
    s = get(tiny3, chunk_words=350)
    s.score(CTX, CLAIM, progress=False)
    assert s.last_aux()["aux_n_pairs"].tolist() == [2, 1, 3]
    s = get(tiny3, split="document")
    s.score(CTX, CLAIM, progress=False)
    assert s.last_aux()["aux_n_pairs"].tolist() == [1, 1, 1]
    s = get(tiny3, split="smart-n")
    s.score(CTX, CLAIM, progress=False)
    assert s.last_aux()["aux_n_pairs"].tolist() == [3 * 2, 2 * 1, 1 * 3]


def test_batch_and_order_invariance(tiny3):
    s = get(tiny3, chunk_words=8)
    a = s.score(CTX, CLAIM, batch_size=1, progress=False)
    b = s.score(CTX, CLAIM, batch_size=7, progress=False)
    np.testing.assert_allclose(a, b, atol=1e-5)
    rev = s.score(CTX[::-1], CLAIM[::-1], batch_size=2, progress=False)
    np.testing.assert_allclose(rev[::-1], a, atol=1e-5)
    # one example alone scores the same as inside a batch of three
    np.testing.assert_allclose(s.score(CTX[:1], CLAIM[:1], progress=False), a[:1], atol=1e-5)


def test_plain_nli_checkpoint(tiny_nli):
    s = get(tiny_nli)
    out = s.score(CTX, CLAIM, progress=False)
    assert out.shape == (3,) and set(s.last_aux()) == {"aux_n_pairs", "aux_n_truncated_pairs"}
    with pytest.raises(ValueError, match="no 'bin' head"):
        get(tiny_nli, head="bin").score(CTX, CLAIM, progress=False)
    with pytest.raises(ValueError, match="no 'reg' head"):
        get(tiny_nli, head="reg").load()


def test_bfloat16_close_to_float32(tiny3):
    a = get(tiny3).score(CTX, CLAIM, progress=False)
    b = get(tiny3, dtype="bfloat16").score(CTX, CLAIM, progress=False)
    np.testing.assert_allclose(a, b, atol=0.05)


# --- cache -------------------------------------------------------------------------------------------
def test_cache_round_trip_with_aux_heads(tiny3, tmp_cache, monkeypatch):
    from tfc import data
    from tfc.cache import ScoreCache, load_scores

    s = get(tiny3, chunk_words=8)
    ids = ["toy/dev/0", "toy/dev/1", "toy/dev/2"]
    got = ScoreCache(s.signature, "toy", "dev").compute(s, ids, CTX, CLAIM, chunk_size=2, progress=False)
    want = s.score(CTX, CLAIM, progress=False)
    np.testing.assert_allclose(got["score"], want, atol=1e-6)
    cached = load_scores(s.signature, "toy")
    assert {"aux_bin", "aux_reg", "aux_n_pairs"} <= set(cached.columns)
    side = json.loads((tmp_cache / s.signature / "toy" / "dev.json").read_text())
    assert side["config"]["head"] == "3way" and side["config"]["split"] == "groups" and side["row_count"] == 3

    # the head ablation reads every head from this one cache entry
    frame = pd.DataFrame({"id": ids, "dataset": "toy", "split": "dev", "grounding": CTX, "generated": CLAIM,
                          "label": [1, 0, 0], "meta": [{}] * 3})
    monkeypatch.setattr(data, "load", lambda name, split=None, sample=None, seed=0: frame.copy())
    hs = head_scores(s, "toy")
    assert list(hs.columns) == ["id", "label", "3way", "bin", "reg"]
    np.testing.assert_allclose(hs["3way"], want, atol=1e-6)
    np.testing.assert_allclose(hs["bin"], get(tiny3, chunk_words=8, head="bin").score(CTX, CLAIM, progress=False),
                               atol=1e-6)

    # a second run computes nothing (the scorer is not called)
    class Boom(AlignScoreScorer):
        def _score(self, *a, **k):
            raise AssertionError("recomputed a cached row")

    boom = Boom(s.config)
    again = ScoreCache(boom.signature, "toy", "dev").compute(boom, ids, CTX, CLAIM, progress=False)
    np.testing.assert_allclose(again["score"], got["score"])


def test_diagram_draws():
    import matplotlib

    matplotlib.use("Agg")
    from tfc.scorers.alignscore import diagram

    ax = diagram(n_chunks=3, n_sentences=4)
    assert ax.get_title().startswith("AlignScore = mean of the column maxima")
    assert len(ax.get_yticklabels()) == 4


def test_pair_memo_smart_l_reuses_smart_n_pairs(tiny3, monkeypatch):
    from tfc.scorers.alignscore_model import AlignScoreModel

    AlignScoreScorer._MEMOS.clear()
    calls = []
    orig = AlignScoreModel.predict

    def counting(self, a, b, *args, **kw):
        calls.append(len(list(a)))
        return orig(self, a, b, *args, **kw)

    monkeypatch.setattr(AlignScoreModel, "predict", counting)
    n = get(tiny3, split="smart-n")
    n.score(CTX, CLAIM, progress=False)
    assert calls == [3 * 2 + 2 * 1 + 1 * 3]          # every distinct sentence pair once
    out_l = get(tiny3, split="smart-l").score(CTX, CLAIM, progress=False)
    assert calls == [11]                             # SMART-L: the same pairs, no forward pass
    monkeypatch.setattr(AlignScoreModel, "predict", orig)
    AlignScoreScorer._MEMOS.clear()
    np.testing.assert_allclose(get(tiny3, split="smart-l").score(CTX, CLAIM, progress=False), out_l, atol=1e-6)


def test_predict_unique_equals_predict(tiny3):
    from tfc.scorers.alignscore_model import load_alignscore_model

    m = load_alignscore_model(tiny3)
    a = ["the cat sat .", "a dog ran .", "the cat sat ."]
    b = ["the cat .", "a cat ran .", "the cat ."]
    u, p = m.predict_unique(a, b), m.predict(a, b)
    for h in ("3way", "bin", "reg"):
        np.testing.assert_allclose(u[h], p[h], atol=1e-6)
    assert u["truncated"].tolist() == p["truncated"].tolist() == [False] * 3
    assert {k: v.shape for k, v in m.predict_unique([], []).items()} == {"3way": (0, 3), "bin": (0, 2), "reg": (0,),
                                                                         "truncated": (0,)}
    with pytest.raises(ValueError):
        m.predict_unique(["a"], [])


@pytest.mark.parametrize("dtype", ["int8-dynamic", "int8-dynamic-pc"])
def test_int8_quantises_the_alignment_model_and_keeps_every_head(tiny3, dtype):
    """int8 used to be accepted, put in the signature, and silently run at fp32 (a cast to float32)."""
    s = get(tiny3, dtype=dtype)
    s.load()
    kinds = {n: type(m) for n, m in s.model.model.named_modules() if "Linear" in type(m).__name__}
    body = [t for n, t in kinds.items() if "classifier" not in n.split(".") and n.split(".")[0] != "heads"]
    assert body and all("quantized" in t.__module__ for t in body), kinds
    heads = [t for n, t in kinds.items() if n.split(".")[0] == "heads"]
    if dtype == "int8-dynamic-pc":   # the side heads stay fp32, as the classifier does
        assert heads and all(t is torch.nn.Linear for t in heads), kinds
    ref = get(tiny3)
    for head in ("3way", "bin", "reg"):   # the side heads still read the captured features
        got = get(tiny3, dtype=dtype, head=head).score(CTX, CLAIM, progress=False)
        want = get(tiny3, head=head).score(CTX, CLAIM, progress=False)
        np.testing.assert_allclose(got, want, atol=0.1)   # hidden-32 random weights: coarse
    assert s.signature != ref.signature


def test_model_batches_use_the_shared_token_budget(tiny3, monkeypatch):
    from tfc.scorers.base import length_batches

    m = get(tiny3).load().model
    lengths = [10, 500, 60, 300, 60, 120]
    assert [b.tolist() for b in m.batches(lengths, 4)] == [b.tolist() for b in length_batches(lengths, 4)]
    monkeypatch.setattr(type(m), "BATCH_TOKEN_UNIT", 1000)     # budget 4,000 tokens: the count cap decides
    assert [b.tolist() for b in m.batches(lengths, 4)] == [[1, 3, 5, 2], [4, 0]]


def test_scores_do_not_depend_on_the_token_budget(tiny3, monkeypatch):
    ctx = CTX + ["word " * 300 + ". The end."]
    claim = CLAIM + ["The end."]
    s = get(tiny3, chunk_words=50)
    want = s.score(ctx, claim, progress=False)
    for bs in (1, 2, 64):
        AlignScoreScorer._MEMOS.clear()
        np.testing.assert_allclose(get(tiny3, chunk_words=50).score(ctx, claim, batch_size=bs, progress=False),
                                   want, atol=1e-5)
    from tfc.scorers.alignscore_model import AlignScoreModel

    monkeypatch.setattr(AlignScoreModel, "BATCH_TOKEN_UNIT", 8)   # every long pair alone in its batch
    AlignScoreScorer._MEMOS.clear()
    np.testing.assert_allclose(get(tiny3, chunk_words=50).score(ctx, claim, progress=False), want, atol=1e-5)


def test_pairs_cut_to_max_length_are_counted_per_row(tiny3):
    long_ctx = " ".join(["Xylophones quantified marvellously."] * 40)   # ~8 tokens a word in the tiny vocabulary
    s = get(tiny3, max_length=64)
    s.score([long_ctx, "A cat."], ["Xylophones.", "A cat."], progress=False)
    aux = s.last_aux()
    assert aux["aux_n_truncated_pairs"].tolist()[1] == 0
    assert 0 < aux["aux_n_truncated_pairs"][0] <= aux["aux_n_pairs"][0]


# --- the published grouping and truncation (AlignScore's inference_per_example) -----------------------
def test_equal_groups_by_hand():
    from tfc.scorers.alignscore_model import equal_groups

    sents = ["a b c.", "d e.", "f g h i.", "j.", "k l."]          # 12 words
    # 12 // 5 + 1 = 3 groups wanted -> 5 // 3 = 1 sentence each: five groups (the reference's arithmetic)
    assert equal_groups(sents, " ".join(sents), 5) == sents
    # 12 // 10 + 1 = 2 -> 5 // 2 = 2 sentences per group, the remainder alone
    assert equal_groups(sents, " ".join(sents), 10) == ["a b c. d e.", "f g h i. j.", "k l."]
    # under the budget: one group of everything
    assert equal_groups(sents, " ".join(sents), 350) == [" ".join(sents)]
    # groups are not bounded in words: one long sentence and two short ones, 2 groups of 1 (+ remainder)
    long = ["w " * 30 + "end.", "x.", "y."]
    assert [len(g.split()) for g in equal_groups(long, " ".join(long), 20)] == [31, 1, 1]
    with pytest.raises(ValueError):
        equal_groups(sents, "x", 0)


def test_truncation_rule_cuts_the_context_only(tiny3):
    from tfc.scorers.alignscore_model import load_alignscore_model, truncation_rule

    assert truncation_rule("groups") == "only_first" and truncation_rule("chunk") == "longest_first"
    m = load_alignscore_model(tiny3, max_length=32)
    ctx = " ".join(["Xylophones quantified marvellously."] * 10)
    claim = "A cat sat."
    first = m._truncated(ctx, claim, "only_first")["input_ids"]
    longest = m._truncated(ctx, claim, "longest_first")["input_ids"]
    whole_claim = m.tokenizer(claim)["input_ids"][1:]              # without [CLS]
    assert len(first) == len(longest) == 32 and len(whole_claim) < 12
    assert first[-len(whole_claim):] == whole_claim                   # the claim is kept whole
    # a claim longer than the budget on its own: only_first cannot cut enough, the pair is cut from both sides
    both = m._truncated("A cat.", " ".join([claim] * 20), "only_first")["input_ids"]
    assert len(both) == 32
    with pytest.raises(ValueError, match="truncation"):
        m._truncated(ctx, claim, "only_second")
    # many pairs in one call: each as if cut alone, the refused one falling back on its own
    pairs = [(ctx, claim), ("A cat.", " ".join([claim] * 20)), (ctx, "Dog.")]
    many = m._truncated_many([p for p, _ in pairs], [h for _, h in pairs], "only_first")["input_ids"]
    assert many == [m._truncated(p, h, "only_first")["input_ids"] for p, h in pairs]
