"""Robustness of every registered scorer against bad and odd inputs.

Parametrised over the registry (``tfc.scorers.names()`` plus the reserved names), so a scorer that is
registered later is covered without editing this file. Model scorers run on tiny random-weight
checkpoints (:mod:`tfc.models.tiny`); their scores are meaningless, their *behaviour* is what is tested.

For each scorer:

* bad types (``None``, numbers, bytes, nested lists, a bare string), mismatched lengths and invalid
  Unicode raise ``TypeError``/``ValueError`` with a message naming the problem, before any model loads;
* blank text (empty, white space, control or zero-width characters) gets exactly ``empty_score``;
* hypothesis-generated odd text (any Unicode, emoji, right-to-left scripts, HTML, numbers, control
  characters, one-token claims) gets a finite score inside ``output_range`` -- never NaN, never an
  exception from deep inside a library -- and the same score alone as inside a batch;
* a 50,000-word grounding with a one-token claim, and a 2,000-word generated text, are scored, and
  the chunking or truncation is recorded in ``last_aux()`` (never silent).

How a scorer is built for these tests: a recipe in :data:`RECIPES`; else the scorer class's optional
``tiny_overrides(workdir) -> dict`` classmethod (for scorers that need more than one tiny checkpoint);
else ``checkpoint=<tiny classifier>`` or no overrides, kept only if a sane call works. A scorer none of
these can build is skipped with the reason shown (``pytest -rs``), as are reserved, unimplemented names.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfc.scorers as S
from tfc.models.tiny import WORDS, make_tiny_classifier

settings.register_profile("tfc-robust", max_examples=8, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                 HealthCheck.function_scoped_fixture])
ROBUST = settings.get_profile("tfc-robust")

ALL_NAMES = list(S.names())
LEXICAL = {"f1", "f1-q2", "rouge1", "rouge2", "rougeL", "rougeL-coco", "rougeL-squad", "bleu4", "bleu4-squad",
           "bleu-q2"}
TOL = 1e-5


# ------------------------------------------------------------------------------- building scorers
@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """torch on one thread: on a loaded 2-core machine its default thread pool makes every small op wait
    ~45 ms for a descheduled worker (measured: 278 s -> 6.7 s for one 50,000-word SummaC call)."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("robust")


@pytest.fixture(scope="module")
def tiny(workdir):
    # 512 positions, like the real encoders, so long groundings chunk at realistic sizes
    return str(make_tiny_classifier(workdir / "tiny", seed=3, max_position=512))


@pytest.fixture(scope="module")
def conv(workdir):
    """A SummaC-Conv head with fixed weights, saved the way ``tfc train summac-conv`` saves one."""
    import torch

    from safetensors.torch import save_file

    from tfc.scorers.summac_conv import CONV_WEIGHTS, _conv_module

    path = workdir / "conv"
    path.mkdir()
    cfg = S.get("summac-conv").config            # the default's reading
    torch.manual_seed(0)
    save_file(_conv_module(cfg.n_bins * len(cfg.nli_labels)).state_dict(), str(path / CONV_WEIGHTS))
    (path / "summac_conv.json").write_text(json.dumps({"config": cfg.to_dict()}))
    return str(path)


def _tiny_qa(workdir):
    """A tiny random-weight extractive QA checkpoint (QAGS and Q²'s `checkpoint`), made once per module."""
    from tfc.train.qa import make_tiny_qa

    path = workdir / "tiny-qa"
    if not (path / "config.json").exists():
        make_tiny_qa(path, seed=3)
    return str(path)


def _recipes(tiny, conv, workdir=None):
    qa = _tiny_qa(workdir) if workdir is not None else None
    return {
        **{n: {} for n in LEXICAL},
        "bertscore": {"checkpoint": tiny, "num_layers": 2},
        "nli": {"checkpoint": tiny},
        "summac-zs": {"checkpoint": tiny},
        "summac-conv": {"checkpoint": tiny, "conv_checkpoint": conv},
        # live scoring supports the fixed "range" normalisation only (the others are dataset-level)
        "ensemble": {"members": ("f1", "rougeL"), "normalisation": "range"},
        "alignscore": {"checkpoint": tiny},
        "wecheck": {"checkpoint": tiny},
        # the QG-QA scorers: `checkpoint` is their QA model; Q² also reads the tiny classifier as its NLI model
        "q2": {"checkpoint": qa, "nli_checkpoint": tiny},
        "qags": {"checkpoint": qa},
    }


_BUILT: dict = {}


def build(name, tiny, conv, workdir):
    """(scorer, None) or (None, reason to skip)."""
    if name in _BUILT:
        return _BUILT[name]
    if name not in S.names():
        res = (None, f"{name!r} is a reserved name and not registered yet")
        _BUILT[name] = res
        return res
    recipes = _recipes(tiny, conv, workdir)
    tries = []
    if name in recipes:
        tries.append(recipes[name])
    else:
        cls = S._cls(S._REGISTRY[name][0])
        hook = getattr(cls, "tiny_overrides", None)
        if hook is not None:
            tries.append(hook(workdir / f"tiny-{name}"))
        tries += [{"checkpoint": tiny}, {}]
    errors = []
    for kw in tries:
        try:
            s = S.get(name, **kw)
            s.score(["The cat sat on the mat."], ["The cat sat."], progress=False)
        except Exception as exc:  # noqa: BLE001 - collected into the skip reason
            errors.append(f"{kw}: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        _BUILT[name] = (s, None)
        return s, None
    if name in recipes:   # a known recipe must work: that is a failure, not a skip
        pytest.fail(f"{name} with its recipe failed on a sane input: {errors}")
    res = (None, f"no tiny-model recipe builds {name!r} (add one in tests/test_robustness.py or a "
                 f"tiny_overrides classmethod): {errors}")
    _BUILT[name] = res
    return res


# Known gaps found by this suite, skipped with the reason shown (pytest -rs) until the owning module
# is fixed. None is open: QAGS and Q² handle text without answer candidates through their `no_questions`
# policy and take a `checkpoint` field.
KNOWN_GAPS: dict[str, str] = {}


@pytest.fixture(params=ALL_NAMES)
def scorer(request, tiny, conv, workdir):
    s, why = build(request.param, tiny, conv, workdir)
    if s is None:
        pytest.skip(why)
    if request.param in KNOWN_GAPS:   # (their real checkpoints are also too slow for this suite's budget)
        pytest.skip(f"known gap: {KNOWN_GAPS[request.param]}")
    return s


def _lo_hi(s):
    lo, hi = s.output_range
    return lo - TOL, hi + TOL


def _check_scores(s, out, n):
    assert isinstance(out, np.ndarray) and out.shape == (n,) and out.dtype == np.float64
    assert np.isfinite(out).all(), f"{s.name}: non-finite scores {out}"
    lo, hi = _lo_hi(s)
    assert ((out >= lo) & (out <= hi)).all(), f"{s.name}: scores {out} outside {s.output_range}"


# ------------------------------------------------------------------------------- bad input types
BAD = [
    ((["a", None], ["a", "b"]), TypeError, r"groundings\[1\] is None"),
    ((["a", "b"], ["a", None]), TypeError, r"generations\[1\] is None"),
    ((["a", 3], ["a", "b"]), TypeError, r"groundings\[1\] is int"),
    ((["a"], [2.5]), TypeError, r"generations\[0\] is float"),
    (([b"bytes"], ["a"]), TypeError, r"groundings\[0\] is bytes"),
    (([["nested"]], ["a"]), TypeError, r"groundings\[0\] is list"),
    ((["a"], [float("nan")]), TypeError, r"generations\[0\] is float"),
    (("a string", "a string"), TypeError, "not a single string"),
    ((5, 5), TypeError, "sequences of strings"),
    ((["a", "b"], ["a"]), ValueError, "differ in length: 2 != 1"),
    ((["a"], []), ValueError, "differ in length: 1 != 0"),
    ((["ok", "a\ud800b"], ["x", "y"]), ValueError, r"groundings\[1\] is not valid Unicode"),
    ((["a"], ["\udfff"]), ValueError, r"generations\[0\] is not valid Unicode"),
]


@pytest.mark.parametrize("args,exc,msg", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_inputs_raise_clear_errors(scorer, args, exc, msg):
    fresh = type(scorer)(scorer.config)     # unloaded: the check comes before any model is loaded
    with pytest.raises(exc, match=msg):
        fresh.score(*args, progress=False)
    assert not fresh._loaded


def test_empty_call_and_batch_size(scorer):
    out = scorer.score([], [], progress=False)
    assert out.shape == (0,) and out.dtype == np.float64
    with pytest.raises(ValueError, match="batch_size"):
        scorer.score(["the cat sat."], ["the cat."], batch_size=0, progress=False)


BLANK = ["", " ", "\n\t  \r\n", "\u00a0\u2003", "\x00", "\x00\x01\x1b", "\u200b\u200d", "\ufeff \u2060"]


def test_blank_text_gets_empty_score(scorer):
    g = BLANK + ["the cat sat on the mat."] * len(BLANK)
    h = ["the cat sat."] * len(BLANK) + BLANK
    out = scorer.score(g, h, progress=False)
    assert out.shape == (len(g),)
    assert (out == scorer.empty_score).all(), out
    lo, hi = scorer.output_range
    assert lo <= scorer.empty_score <= hi


# ------------------------------------------------------------------------------- odd text (hypothesis)
EMOJI = ["😀", "👍🏽", "🇫🇷", "👨‍👩‍👧", "🐈 on the 🧶"]
RTL = ["שלום עולם.", "مرحبا بالعالم.", "\u202eevil\u202c text", "the cat قطة sat"]
HTML = ["<p>the cat <b>sat</b></p>", "<script>alert('x')</script>", "&amp; &lt;b&gt; &#x1F600;", "<br/>"]
NUMBERS = ["42", "3.14159", "-1e308", "NaN", "inf", "1,000,000", "0"]
CONTROL = ["\x00", "\x1b[31m", "\x07", "\r\n", "\t", "\x7f", "\u0301"]
SPICE = EMOJI + RTL + HTML + NUMBERS + CONTROL
VOCAB = [w for w in WORDS if w.isalpha()]

odd_text = st.one_of(
    st.text(max_size=30),                                               # any Unicode but lone surrogates
    st.sampled_from(SPICE),
    st.sampled_from(VOCAB),                                             # one-token texts
    st.lists(st.one_of(st.sampled_from(VOCAB), st.sampled_from(SPICE)), min_size=1, max_size=25)
      .map(" ".join),
)
odd_pairs = st.lists(st.tuples(odd_text, odd_text), min_size=1, max_size=4)


@ROBUST
@given(pairs=odd_pairs)
def test_odd_text_gets_finite_in_range_scores(scorer, pairs):
    g, h = [p[0] for p in pairs], [p[1] for p in pairs]
    out = scorer.score(g, h, batch_size=3, progress=False)
    _check_scores(scorer, out, len(pairs))
    # each row's score does not depend on the rest of the batch
    alone = np.array([scorer.score([a], [b], progress=False)[0] for a, b in pairs])
    check = alone >= 0 if scorer.name == "bertscore" else np.ones(len(pairs), bool)
    assert np.abs(out - alone)[check].max(initial=0) <= TOL, (out, alone)


def test_bertscore_negative_similarity_depends_on_padding(tiny):
    """A bert-score (0.3.13) behaviour, pinned here so it stays visible: ``greedy_cos_idf`` multiplies the
    similarity matrix by the padding mask *before* the max over reference tokens, so a candidate token
    whose cosine with every reference token is negative gets 0 in a padded batch but its negative value
    alone. Real encoders' token cosines are positive in practice (anisotropic embeddings); the tiny
    random model shows it. Rows with a score >= 0 are unaffected (checked in the property test)."""
    s = S.get("bertscore", checkpoint=tiny, num_layers=2)
    alone = s.score([":"], [","], progress=False)[0]
    batched = s.score([":", "00"], [",", "0"], progress=False)[0]
    if alone >= 0:
        pytest.skip("this seed gives a positive similarity; nothing to show")
    assert batched == 0.0 and alone < 0


def test_bertscore_as_published_is_the_librarys_own_computation(tiny):
    """The as-published preset hands the texts to bert-score as they are (it truncates at the model's length);
    the default chunks the grounding instead, so only a grounding longer than the model reads differs."""
    from bert_score import BERTScorer

    grounding, short = _words(2_000), "The cat sat on the mat."
    pub = S.get("bertscore", preset="as-published", checkpoint=tiny, num_layers=2)
    got = pub.score([grounding, short], ["cat sat", "cat"], progress=False)
    lib = BERTScorer(model_type=tiny, num_layers=2, lang="en").score(["cat sat", "cat"], [grounding, short])[0]
    assert np.allclose(got, lib.double().numpy(), atol=1e-7)
    assert pub.last_aux()["aux_grounding_truncated"].tolist() == [True, False]
    chunked = S.get("bertscore", checkpoint=tiny, num_layers=2)
    assert chunked.config.long_grounding == "chunk" and pub.signature != chunked.signature
    assert chunked.score([short], ["cat"], progress=False)[0] == pytest.approx(got[1], abs=1e-6)   # fp32 padding noise


@pytest.mark.parametrize("claim", ["cat", "😀", "42", "<b>", "שלום"])
def test_one_token_claim(scorer, claim):
    out = scorer.score(["The cat sat on the mat. The dog ran to the house."], [claim], progress=False)
    _check_scores(scorer, out, 1)


# ------------------------------------------------------------------------------- very long texts
def _words(n, seed=0):
    rng = np.random.default_rng(seed)
    sents, total = [], 0
    while total < n:
        k = int(min(rng.integers(6, 20), n - total))
        sents.append(" ".join(rng.choice(VOCAB, k)).capitalize() + ".")
        total += k
    return " ".join(sents)


LONG_G = _words(50_000)
SPLIT_KEYS = ("aux_n_chunks", "aux_n_grounding_units", "aux_n_pairs")


def _has_model(s):
    """Model scorers: checkpoint-based (ModelScorer) or the QG-QA scorers (QAGS, Q²), whose QA model reads
    long texts in windows and records them (``aux_n_chunks``, ``aux_n_generated_chunks``)."""
    from tfc.scorers.qgqa import QGQAScorerBase

    return isinstance(s, (S.base.ModelScorer, QGQAScorerBase))


def _fast_split(s):
    """The same scorer with the rule sentence splitter (spaCy needs ~15 s for 50,000 words on this CPU)."""
    if hasattr(s.config, "sentence_splitter"):
        return type(s)(s.config.replace(sentence_splitter="rule"))
    return s


def test_long_grounding_is_chunked_not_truncated(scorer):
    assert len(LONG_G.split()) == 50_000
    s = _fast_split(scorer)
    out = s.score([LONG_G, "The cat sat."], ["cat", "cat"], progress=False)
    _check_scores(s, out, 2)
    if _has_model(s):
        aux = s.last_aux()
        split = {k: int(aux[k][0]) for k in SPLIT_KEYS if k in aux}
        assert split and max(split.values()) > 1, (
            f"{s.name}: a 50,000-word grounding must be chunked and the chunking recorded in last_aux() "
            f"(one of {SPLIT_KEYS}); got {sorted(aux)}")
        assert all(int(aux[k][1]) == 1 for k in split), "a short grounding is one unit"


def test_long_generated_text_is_split_or_flagged(scorer):
    long_h = _words(2_000, seed=1)
    s = _fast_split(scorer)
    out = s.score(["The cat sat on the mat."], [long_h], progress=False)
    _check_scores(s, out, 1)
    if _has_model(s):
        aux = s.last_aux()
        flagged = any(bool(aux[k][0]) for k in aux if "trunc" in k)
        split = any(int(aux[k][0]) > 1 for k in aux if k.startswith(("aux_n_generated", "aux_n_pairs")))
        assert flagged or split, f"{s.name}: a 2,000-word generated text is neither split nor flagged: {sorted(aux)}"


def test_long_inputs_do_not_change_other_rows(scorer):
    s = _fast_split(scorer)
    short = s.score(["The cat sat on the mat."], ["The cat sat."], progress=False)[0]
    mixed = s.score([_words(5_000, seed=2), "The cat sat on the mat."], ["dog", "The cat sat."], progress=False)
    assert math.isclose(mixed[1], short, abs_tol=TOL)


# words the tiny WordPiece vocabulary spells letter by letter: ~8 tokens per word, so 350 words are
# far more than 512 tokens (real text with many rare names or numbers does the same to real models)
DENSE_G = " ".join(["Xylophones quantified marvellously."] * 300)
# known gaps (each stays visible as an xfail until its module is fixed)
TRUNCATES_SILENTLY: dict[str, str] = {}   # none left: alignscore counts its cut pairs (aux_n_truncated_pairs)


def test_token_dense_grounding_is_covered_or_flagged(scorer, tiny, request):
    """Units x model length must cover the grounding's tokens, or the row is flagged as truncated."""
    if not _has_model(scorer):
        pytest.skip("no model input limit")
    if scorer.name in TRUNCATES_SILENTLY:
        request.applymarker(pytest.mark.xfail(reason=TRUNCATES_SILENTLY[scorer.name], strict=True))
    from tfc.models import load_tokenizer

    s = _fast_split(scorer)
    out = s.score([DENSE_G], ["Xylophones."], progress=False)
    _check_scores(s, out, 1)
    aux = s.last_aux()
    n_tok = len(load_tokenizer(getattr(s.config, "checkpoint", tiny))(DENSE_G, add_special_tokens=False, verbose=False)["input_ids"])
    units = max([int(aux[k][0]) for k in SPLIT_KEYS if k in aux] or [1])
    flagged = any(bool(aux[k][0]) for k in aux if "trunc" in k)
    assert units * 512 >= n_tok or flagged, (
        f"{s.name}: {n_tok} grounding tokens in {units} model input(s) of <= 512 tokens, and nothing flagged")


def test_tiny_tokenizer_has_its_vocabulary(tiny):
    """The tiny checkpoints must tokenise real words (a 5-token vocabulary made every word [UNK])."""
    from tfc.models import load_tokenizer

    tok = load_tokenizer(tiny)
    assert tok.tokenize("The cat sat. Xylo 12") == ["the", "cat", "sat", ".", "x", "##y", "##l", "##o", "1", "##2"]


def test_bad_input_catalogue_for_the_book(tmp_path, monkeypatch):
    """tfc.book.chapters.performance.bad_input_outcomes (the performance page's table) on the token-F1 scorer."""
    from tfc.book.chapters import performance as bench

    df = bench.bad_input_outcomes(S.get("f1"), long_words=2_000)
    assert list(df["outcome"][:6]) == ["error"] * 6
    assert df["detail"][0] == "TypeError: generations[0] is None; every item must be a string"
    assert list(df["outcome"][6:10]) == ["empty score"] * 4
    assert set(df["outcome"][10:]) == {"scored"}
    assert df["detail"][10] == "0.4000 in [0, 1]"        # "cat" vs "the cat sat on the mat.": P=1, R=1/4
    monkeypatch.delenv("TFC_BENCH_DIR", raising=False)      # the default is the repository's benchmarks/results
    from tfc.config import REPO_ROOT

    assert bench.results_dir() == REPO_ROOT / "benchmarks" / "results" and bench.load("bench_peers") is not None
    monkeypatch.setenv("TFC_BENCH_DIR", str(tmp_path))
    assert bench.load("bench_peers") is None and len(bench.peer_table()) == 0
    (tmp_path / "bench_peers.json").write_text(json.dumps({"results": [
        {"comparison": "summac", "pairs": 2, "tfc_seconds": 1.0, "peer_seconds": 3.5, "ratio": 3.5, "target": 3.0,
         "met": True, "pearson": 0.99, "max_abs_diff": 0.1}]}))
    assert bench.peer_table()["ratio"].tolist() == [3.5]
    # a run with the agreement bound: the exact largest difference, and tfc's own reading beside it
    res = {"results": [{"comparison": "summac", "pairs": 2, "tfc_seconds": 1.0, "peer_seconds": 3.5, "ratio": 3.5,
                        "target": 3.0, "met": True, "pearson": 1.0, "max_abs_diff": 0.0, "max_abs_diff_exact": 2.5e-6,
                        "agreement_bound": "max_abs_diff <= 0.0001", "agrees": True,
                        "agreement_tfc_reading": {"pearson": 0.9, "max_abs_diff": 0.75}}]}
    t = bench.peer_table(res)
    assert t["max_abs_diff"].tolist() == [2.5e-6] and t["agrees"].tolist() == [True]
    cells = bench.peer_agreement_cells(res, t.set_index("comparison"))
    assert cells == {"perf_summac_max_diff": "2.5e-06", "perf_summac_tfc_reading_pearson": "0.9000",
                     "perf_summac_tfc_reading_max_abs_diff": "0.75", "perf_summac_conv_max_diff": "not measured",
                     "perf_alignscore_max_diff": "not measured",
                     "perf_alignscore_tfc_reading_pearson": "not measured",
                     "perf_alignscore_tfc_reading_max_abs_diff": "not measured"}


def test_gpu_peer_summary_reads_the_cuda_comparison(tmp_path, monkeypatch):
    import pandas as pd

    from tfc.book.chapters import performance as bench

    monkeypatch.setenv("TFC_BENCH_DIR", str(tmp_path))
    empty = bench.gpu_peer_summary()                                          # nothing recorded: no figure
    assert list(empty) == list(bench.GPU_SUMMARY_KEYS) and {k for k, v in empty.items() if v is not None} == {"path"}
    row = {"comparison": "alignscore", "pairs": 90, "tfc_seconds": 0.16, "peer_seconds": 0.66, "ratio": 4.14,
           "target": 10.0, "met": False, "pearson": 0.98, "max_abs_diff": 0.3,
           "agreement_same_units": {"pearson": 1.0, "max_abs_diff": 0.0}}
    fast = {**row, "comparison": "alignscore/fast", "tfc_seconds": 0.21, "ratio": 3.17}
    (tmp_path / "bench_peers_gpu.json").write_text(json.dumps({
        "results": [row, fast], "rounds": 3, "torch_threads": 1, "device": "cuda",
        "machine": {"cuda": "NVIDIA H100 80GB HBM3"}}))
    got = bench.gpu_peer_summary()
    assert (got["gpu"], got["pairs"], got["rounds"], got["threads"], got["ratio"]) == ("NVIDIA H100 80GB HBM3", 90, 3, 1, 4.14)
    assert (got["fast_tfc_s"], got["fast_ratio"], got["target"], got["met"]) == (0.21, 3.17, 10.0, False)
    assert got["same_units_max_diff"] == 0.0 and got["path_runs"] == 0 and got["path_min"] is None
    assert bench.text_cells(got, {"ratio": "{:.2f}×"}, "p_")["p_ratio"] == "4.14×"
    assert bench.text_cells(got, {})["path_min"] == "not recorded" and bench.text_cells(got, {})["path_gpus"] == "none"
    row["met"] = True
    (tmp_path / "bench_peers_gpu.json").write_text(json.dumps({"results": [row], "rounds": 1, "torch_threads": 1}))
    assert bench.gpu_peer_summary()["met"] is True
    (tmp_path / "bench_peers_gpu_n9.json").write_text(json.dumps({
        "results": [{**row, "pairs": 9, "ratio": 2.0}], "torch_threads": 4, "machine": {"cuda": "G"}}))
    (tmp_path / "bench_peers.json").write_text(json.dumps({"results": [row]}))      # the CPU file is not a GPU run
    runs = bench.gpu_peer_runs()
    assert runs["run"].tolist() == ["bench_peers_gpu_n9", "bench_peers_gpu"] and runs["× fp32"].tolist() == [2.0, 4.14]
    assert runs["gpu"].tolist()[0] == "G" and pd.isna(runs["gpu"].iloc[1]) and runs["threads"].tolist() == [4, 1] and runs["× fast"].isna().all()
    assert runs["input path"].tolist() == [bench.INPUT_PATHS[0][1]] * 2          # no run time: the first path


def test_gpu_peer_summary_reports_the_current_input_paths_range(tmp_path, monkeypatch):
    """Runs of the current input path give a range and a count at the target; earlier paths give their best;
    a run that records its own input path is read as recorded."""
    from tfc.book.chapters import performance as bench

    monkeypatch.setenv("TFC_BENCH_DIR", str(tmp_path))

    def run(name, ratio, fast, at, gpu="H200", **extra):
        rows = [{"comparison": "alignscore", "pairs": 900, "tfc_seconds": 1.0, "peer_seconds": ratio, "ratio": ratio,
                 "target": 10.0, "met": ratio >= 10, "run_at": at, "agreement_same_units": {"max_abs_diff": 0.0}},
                {"comparison": "alignscore/fast", "pairs": 900, "tfc_seconds": 1.0, "peer_seconds": ratio,
                 "ratio": fast, "target": 10.0, "met": fast >= 10, "run_at": at}]
        (tmp_path / f"{name}.json").write_text(json.dumps({"results": rows, "rounds": 5, "torch_threads": 1,
                                                           "machine": {"cuda": gpu}, **extra}))

    run("bench_peers_gpu", 6.7, 4.2, "2026-11-26T19:26:17Z", gpu="H100")
    run("bench_peers_gpu_pad", 9.0, 9.6, "2026-11-26T23:56:07Z")
    run("bench_peers_gpu_async", 13.0, 18.8, "2026-11-27T00:01:01Z")
    run("bench_peers_gpu_async2", 9.5, 21.6, "2026-11-27T00:05:14Z")
    runs = bench.gpu_peer_runs().set_index("run")["input path"]
    assert runs.to_dict() == {"bench_peers_gpu": "tokenizer.pad, blocking copies",
                              "bench_peers_gpu_pad": "pad_batch, blocking copies",
                              "bench_peers_gpu_async": "pad_batch, pinned non-blocking copies",
                              "bench_peers_gpu_async2": "pad_batch, pinned non-blocking copies"}
    got = bench.gpu_peer_summary()
    assert (got["path_runs"], got["runs_pairs"], got["path_gpus"], got["path_min"], got["path_max"]) == (2, 900, ["H200"], 9.5, 13.0)
    assert (got["path_at_target"], got["path_below_batches"]) == (1, [32])
    assert (got["path_fast_min"], got["path_fast_max"], got["path_not_timed_on"]) == (18.8, 21.6, ["H100"])
    assert (got["old_best"], got["old_best_gpu"], got["old_best_path"]) == (9.0, "H200", "pad_batch, blocking copies")
    assert (got["loop_min"], got["loop_max"], got["met"]) == (6.7, 13.0, True)
    run("bench_peers_gpu_async", 9.1, 18.8, "2026-11-27T00:01:01Z", tfc_input_path="something newer")
    assert bench.gpu_peer_runs().set_index("run").loc["bench_peers_gpu_async", "input path"] == "something newer"
    assert bench.gpu_peer_summary()["met"] is False                           # no current-path run reaches 10x at fp32


def test_bench_peers_refuses_cuda_without_a_gpu(monkeypatch):
    import importlib.util

    import torch

    from tfc.config import REPO_ROOT

    spec = importlib.util.spec_from_file_location("bench_peers", REPO_ROOT / "benchmarks" / "bench_peers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="no CUDA GPU"):
        mod.main(["--device", "cuda", "--peers", "alignscore", "--pairs", "unused.json"])


def test_dtype_speedup_reads_old_and_new_bench_scorers_results(tmp_path, monkeypatch):
    from tfc.book.chapters import performance as bench

    monkeypatch.setenv("TFC_BENCH_DIR", str(tmp_path))
    assert len(bench.dtype_speedup()) == 0 and set(bench.scorers_machine().values()) == {None}
    row = {"scorer": "nli", "batch_size": 8, "pairs": 4, "seconds": 2.0, "pairs_per_second": 2.0}
    (tmp_path / "bench_scorers.json").write_text(json.dumps({"results": [row]}))   # before dtypes were measured
    assert bench.throughput_table()["dtype"].tolist() == ["float32"] and len(bench.dtype_speedup()) == 0
    rows = [{**row, "dtype": "float32"}, {**row, "dtype": "bfloat16", "pairs_per_second": 5.0},
            {**row, "dtype": "int8-dynamic", "pairs_per_second": 3.0}]
    (tmp_path / "bench_scorers.json").write_text(json.dumps({"results": rows, "cpu": "X", "torch_threads": 1,
                                                             "bf16_native": True}))
    got = bench.dtype_speedup().iloc[0]
    assert got["× bfloat16"] == 2.5 and got["× int8-dynamic"] == 1.5 and got["float32 pairs/s"] == 2.0
    assert bench.scorers_machine() == {"cpu": "X", "torch_threads": 1, "bf16_native": True, "load_start": None,
                                       "load_end": None}


def test_book_build_reads_cold_and_warm_runs_and_old_results(tmp_path, monkeypatch):
    from tfc.book.chapters import performance as bench

    monkeypatch.setenv("TFC_BENCH_DIR", str(tmp_path))
    df, texts = bench.book_build()
    assert len(df) == 0 and texts["perf_book_cold"] == "not measured"
    run = {"stages": [{"stage": "make notebooks", "seconds": 300.0}, {"stage": "make html", "seconds": 60.0}],
           "total_seconds": 360.0, "loadavg_start": [1.0, 1.0, 1.0]}
    (tmp_path / "bench_book_default.json").write_text(json.dumps(
        {"cpu": "X", "cpu_count": 2, "runs": [{"kind": "cold", **run}, {"kind": "warm", **run, "total_seconds": 240.0}]}))
    df, texts = bench.book_build()
    assert texts["perf_book_cold"] == "6.0" and texts["perf_book_warm"] == "4.0"
    assert (texts["perf_book_cpu"], texts["perf_book_cores"], texts["perf_book_load"]) == ("X", "2", "1.0")
    assert df[df["stage"] == "total"]["seconds"].tolist() == [360.0, 240.0]
    (tmp_path / "bench_book_default.json").write_text(json.dumps({"platform": "P", **run}))   # before cold/warm
    df, texts = bench.book_build()
    assert texts["perf_book_cold"] == "not measured" and set(df["run"]) == {"one run"}


def test_performance_page_values_not_words(tmp_path, monkeypatch):
    import pandas as pd

    from tfc.book.chapters import performance as bench

    monkeypatch.setenv("TFC_BENCH_DIR", str(tmp_path))
    by = pd.DataFrame({"met": [True, False], "target": [3.0, 2.0]}, index=["a", "b"])
    assert [bench.peer_met(by, c) for c in ("a", "b", "c")] == [True, False, None]
    assert set(bench.scale_facts().values()) == set(bench.gpu_facts().values()) == {None} and not len(bench.gpu_smoke())
    smoke = [{"scorer": "nli", "dtype": "float32", "ok": True}, {"scorer": "bertscore", "dtype": "float32", "ok": None}]
    (tmp_path / "bench_gpu.json").write_text(json.dumps({"device": "G", "torch": "2", "cuda": "13", "matmul": "m",
                                                         "measured_matmul_tflops": 7.5, "scorer_smoke": smoke}))
    assert bench.gpu_facts()["matmul_tflops"] == 7.5 and bench.gpu_smoke()["ok"].tolist() == [True, None]
    drift = pd.DataFrame({"scorer": ["x", "x", "y", "z"], "dataset": ["d1", "d2", "d1", "d1"],
                          "drift": [0.1, -0.4, 0.2, 3.0]})
    from tfc.runs.auc_drift import drift_verdicts

    got = drift_verdicts(drift, by="scorer", n_sets=2, limit=1.0)
    assert got["status"].tolist() == ["within", "partial", "beyond"] and got["largest"].tolist() == [0.4, 0.2, 3.0]
    assert got["sets"].tolist() == [2, 1, 1] and len(drift_verdicts(drift.iloc[:0], by="scorer", n_sets=2)) == 0


def _bench_book():
    import importlib.util

    from tfc.config import REPO_ROOT

    spec = importlib.util.spec_from_file_location("bench_book", REPO_ROOT / "benchmarks" / "bench_book.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_staged_reproduce_timing_adds_up_only_when_every_stage_is_measured(tmp_path):
    """make reproduce measured in pieces (each stage fits under a per-command time limit): stages merge into one
    record, a re-measured stage replaces the old one, and the total is complete only with every stage and notebook."""
    bb = _bench_book()
    path = tmp_path / "bench_reproduce_cuda.json"
    rec = bb.merge_stage(path, "train", 120.04, "H100", all_notebooks=["01_data", "04_q2"])
    assert not rec["complete"] and rec["total_seconds"] == 120.0
    assert rec["missing"] == ["score", "html", "notebook 01_data", "notebook 04_q2"]
    bb.merge_stage(path, "notebooks", 0, "H100", [{"notebook": "01_data", "seconds": 30.0}])
    bb.merge_stage(path, "score", 200.0, "H200")
    bb.merge_stage(path, "train", 100.0, "H100")                        # measured again: replaces
    bb.merge_stage(path, "html", 50.0, "H100")
    rec = bb.merge_stage(path, "notebooks", 0, "H100", [{"notebook": "04_q2", "seconds": 20.0}])
    assert rec["complete"] and rec["missing"] == [] and rec["total_seconds"] == 400.0
    assert rec["devices"] == ["H100", "H200"] and "more than one device" in rec["note"]
    assert json.loads(path.read_text())["total_seconds"] == 400.0 and not path.with_suffix(".tmp").exists()
    with pytest.raises(ValueError, match="stage"):
        bb.merge_stage(path, "book", 1.0, "H100")
    assert bb.stage_command("notebooks", "cuda", ["01_data"]) == ["book", "run", "--mode", "full", "--device", "cuda",
                                                                  "--only", "01_data"]
    assert bb.stage_command("train", None, None) == ["train", "reproduce", "--skip-scoring"]
    assert bb.stage_command("score", "cuda", None)[-3:] == ["--skip-training", "--device", "cuda"]


def test_reproduce_refuses_skipping_both_halves():
    from click.testing import CliRunner

    from tfc.cli.train_inhouse import reproduce_cmd

    res = CliRunner().invoke(reproduce_cmd, ["--skip-training", "--skip-scoring"])
    assert res.exit_code != 0 and "nothing to do" in res.output


def test_reproduce_summary_reads_staged_records(tmp_path, monkeypatch):
    from tfc.book.chapters import performance as bench

    monkeypatch.setenv("TFC_BENCH_DIR", str(tmp_path))
    assert bench.reproduce_summary().empty
    bb = _bench_book()
    bb.merge_stage(tmp_path / "bench_reproduce_cuda.json", "train", 300.0, "H100", all_notebooks=["a"])
    row = bench.reproduce_summary().iloc[0]
    assert (row["device"], row["minutes"], row["complete"], row["within target"]) == ("H100", 5.0, False, None)
    assert row["stages missing"] == 3 and row["missing"] == ["score", "html", "notebook a"]
    for st in ("score", "html"):
        bb.merge_stage(tmp_path / "bench_reproduce_cuda.json", st, 300.0, "H100")
    bb.merge_stage(tmp_path / "bench_reproduce_cuda.json", "notebooks", 0, "H100", [{"notebook": "a", "seconds": 600}])
    got = bench.reproduce_summary()
    assert got[["device", "minutes", "complete", "within target", "stages missing"]].values.tolist() == [["H100", 25.0, True, False, 0]]
    assert bench.reproduce_summary(target_minutes=30)["within target"].tolist() == [True]
    (tmp_path / "bench_reproduce_x.json").write_text("{broken")
    with pytest.raises(ValueError, match="not a readable"):
        bench.reproduce_summary()


def test_bertscore_reads_a_checkpoint_under_a_path_that_contains_t5(tiny, tmp_path):
    """bert-score loads a T5 encoder whenever "t5" occurs anywhere in its model name; a BERT checkpoint under a
    folder such as /tmp/x6t5y/ scores as it does elsewhere, and a folder named like T5 is refused with the fix."""
    import os
    import shutil

    shutil.copytree(tiny, tmp_path / "x6t5y" / "model")          # copies: a resolved symlink would lose the name
    pairs = (["The cat sat on the mat.", "A dog ran."], ["cat sat", "the dog"])
    want = S.get("bertscore", checkpoint=tiny, num_layers=2).score(*pairs, progress=False)
    cwd = os.getcwd()
    got = S.get("bertscore", checkpoint=str(tmp_path / "x6t5y" / "model"), num_layers=2).score(*pairs, progress=False)
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert os.getcwd() == cwd
    shutil.copytree(tiny, tmp_path / "my-t5-copy")
    with pytest.raises(ValueError, match="rename the folder"):
        S.get("bertscore", checkpoint=str(tmp_path / "my-t5-copy"), num_layers=2).score(*pairs, progress=False)
