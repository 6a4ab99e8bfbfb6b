"""Every registered scorer works with its defaults on a fresh clone, with the shipped weights, and gives the golden
scores (tests/golden/defaults.json, written by ``python benchmarks/golden_defaults.py --write``)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tfc import config
from tfc import scorers as S

pytest.importorskip("torch")

GOLDEN = config.REPO_ROOT / "tests" / "golden" / "defaults.json"
MODEL_SCORERS = ("bertscore", "nli", "summac-zs", "summac-conv", "alignscore", "wecheck", "qags", "q2", "ensemble")
# (grounding, a claim it supports, a claim it contradicts): written for these tests, not from a benchmark
TRIPLES = [
    ("The bakery on Elm Street opened in 1987. It is run by two sisters, Ana and Marta, who bake bread every "
     "morning at five.", "Two sisters run the bakery on Elm Street.", "The bakery on Elm Street is run by three brothers."),
    ("Lake Orla freezes every winter. In January the ice is thick enough for skating, and the village holds a race "
     "on it.", "The village holds a skating race on Lake Orla in January.", "Lake Orla never freezes."),
    ("The museum's new wing, designed by Ilse Brandt, holds ancient coins. Entry to the wing is free on Sundays.",
     "Ilse Brandt designed the museum's new wing.", "The museum's new wing was designed by Paolo Rossi."),
]


def _golden() -> dict:
    return json.loads(GOLDEN.read_text())


@pytest.fixture(scope="module")
def fresh_artifacts(tmp_path_factory):
    """An empty artifacts directory, as on a fresh clone: the shipped releases are installed from results/release."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TFC_ARTIFACTS_DIR", str(tmp_path_factory.mktemp("fresh_artifacts")))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def default_scores(fresh_artifacts):
    """Each registered scorer with its defaults on the triples: (entailed scores, contradicted scores)."""
    g = [t[0] for t in TRIPLES]
    out = {}
    for name in S.names():
        s = S.get(name)
        both = s.score(g + g, [t[1] for t in TRIPLES] + [t[2] for t in TRIPLES], progress=False)
        out[name] = (both[:3], both[3:])
    return out


def test_every_registered_scorer_scores_with_its_defaults(default_scores):
    for name, (ent, con) in default_scores.items():
        lo, hi = S.get(name).output_range
        for v in np.concatenate([ent, con]):
            assert np.isfinite(v) and lo - 1e-9 <= v <= hi + 1e-9, (name, v)


# a known gap, kept visible: AlignScore's default reads the grounding sentence by sentence (the reading chosen on
# the dev sets, whose claims mostly rest on one sentence), so a claim resting on two sentences joined by a
# pronoun (triples 1 and 2) finds no unit that entails it; SummaC-ZS's window12 reading does
CROSS_SENTENCE_GAP = pytest.mark.xfail(strict=True, reason="the sentence reading cannot join facts across sentences")


# another, of the method itself: QG-QA asks about answer spans, and "Lake Orla never freezes." yields a question
# ("What never freezes?") whose answer in the grounding is the same span, so the negation goes unseen
NEGATION_GAP = pytest.mark.xfail(strict=True, reason="QG-QA does not see a negation (triple 2)")
GAPS = {"alignscore": CROSS_SENTENCE_GAP, "qags": NEGATION_GAP, "q2": NEGATION_GAP}


@pytest.mark.parametrize("name", [pytest.param(n, marks=GAPS[n]) if n in GAPS else n for n in MODEL_SCORERS])
def test_the_model_scorers_rank_entailed_above_contradicted(default_scores, name):
    ent, con = default_scores[name]
    assert (ent > con).all(), (name, ent.round(3).tolist(), con.round(3).tolist())


def test_golden_scores_of_the_defaults(fresh_artifacts):
    """Three fixed pairs per scorer, the scores the shipped weights give (atol 1e-5), under the golden signature."""
    gold = _golden()
    assert set(gold["scorers"]) == set(S.names())
    pairs = gold["pairs"]
    for name, want in gold["scorers"].items():
        s = S.get(name)
        assert s.signature == want["signature"], name
        got = s.score([p[0] for p in pairs], [p[1] for p in pairs], progress=False)
        np.testing.assert_allclose(got, want["scores"], atol=1e-5, rtol=0, err_msg=name)


def test_defaults_use_shipped_weights_only():
    from tfc.models import release

    for name in S.names():
        cfg = S.get(name).config.to_dict()
        for k, v in cfg.items():
            if k.endswith("checkpoint") and isinstance(v, str) and v.startswith("tfc/"):
                assert release.available(v[4:]), f"{name}.{k} = {v} is not shipped"
            if k == "reference" and isinstance(v, str) and v.startswith("tfc/"):     # the ensemble's ECDF sample
                assert release.available(v.removeprefix("tfc/")), f"{name}.{k} = {v} is not shipped"


def test_the_defaults_readings_are_the_recorded_choice():
    from tfc.runs import readings as R

    rec = R.recorded(S.SHIPPED_NLI)
    assert rec is not None, "no readings_dev.json for the shipped model"
    for name, overrides in rec["chosen_overrides"].items():
        cfg = S.get(name).config
        assert all(getattr(cfg, k) == v for k, v in overrides.items()), (name, overrides)


def test_wechecks_reading_is_the_recorded_choice():
    from tfc.runs import readings as R

    ckpt = S.DEFAULTS["wecheck"]["checkpoint"]
    rec = R.recorded(ckpt)
    assert rec is not None and set(rec["chosen"]) == {"wecheck"}, f"no wecheck readings recorded for {ckpt}"
    cfg = S.get("wecheck").config
    assert all(getattr(cfg, k) == v for k, v in rec["chosen_overrides"]["wecheck"].items())


def _sweep(aucs: dict) -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame([{"scorer": n, "reading": r, "dev set": d, "auc": v}
                         for (n, r), per in aucs.items() for d, v in per.items()])


def test_a_reading_replaces_the_as_published_one_only_past_the_margin_or_when_it_reads_everything():
    from tfc.runs import readings as R

    first, second = list(R.READINGS["alignscore"])[:2]
    # +0.5 mean is not past the margin; +0.75 is
    assert R.choose(_sweep({("alignscore", first): {"a": 70, "b": 80}, ("alignscore", second): {"a": 71, "b": 80}}),
                    margin=0.5) == {"alignscore": first}
    assert R.choose(_sweep({("alignscore", first): {"a": 70, "b": 80}, ("alignscore", second): {"a": 71.5, "b": 80}}),
                    margin=0.5) == {"alignscore": second}
    cut, whole = R.READINGS["wecheck"]
    assert cut in R.CUTS_TEXT["wecheck"] and whole not in R.CUTS_TEXT["wecheck"]
    tie = {("wecheck", cut): {"a": 80, "b": 60}, ("wecheck", whole): {"a": 80, "b": 60}}
    assert R.choose(_sweep(tie)) == {"wecheck": whole}          # equal on dev: the reading that drops nothing
    lower = {("wecheck", cut): {"a": 80, "b": 60}, ("wecheck", whole): {"a": 80, "b": 59.9}}
    assert R.choose(_sweep(lower)) == {"wecheck": cut}


def test_the_release_stays_within_its_weight_budget():
    """At most 50 MB of weights tracked in git, every release verified by its manifest."""
    from tfc.models import release

    total = 0
    for folder in sorted(p for p in release.release_root().iterdir() if p.is_dir()):
        release.verify(folder)
        total += sum(f.stat().st_size for f in folder.iterdir() if f.suffix == ".safetensors")
    assert total <= 50 * 1000 * 1000, total


def test_ensemble_rows_do_not_depend_on_the_batch(tmp_path, monkeypatch):
    """Under the shipped-reference normalisation a row scores the same alone or among 1,000 rows."""
    from tfc.models import release
    from tfc.scorers import ensemble as E

    monkeypatch.setattr(release, "release_root", lambda: tmp_path)
    rng = np.random.default_rng(0)
    words = "the a cat dog sat ran on in mat park red blue big small".split()
    text = lambda n: " ".join(rng.choice(words, size=n))   # noqa: E731
    frames = {"dev": __import__("pandas").DataFrame({"grounding": [text(12) for _ in range(40)],
                                                     "generated": [text(6) for _ in range(40)], "label": [0, 1] * 20})}
    E.fit_reference(["f1", "rougeL"], frames, "ref")
    ens = S.get("ensemble", members=("f1", "rougeL"), normalisation="ecdf", reference="tfc/ref")
    g, h = [text(12) for _ in range(1000)], [text(6) for _ in range(1000)]
    batch = ens.score(g, h, progress=False)
    for i in (0, 17, 999):
        assert ens.score([g[i]], [h[i]], progress=False)[0] == batch[i]
    assert ((batch >= 0) & (batch <= 1)).all()
    assert E.ecdf([0.0, 0.5, 1.0, 2.0], [0.5, 1.0]).tolist() == [0.0, 0.25, 0.75, 1.0]   # mid-ranks, by hand
    with pytest.raises(ValueError, match="no distribution"):
        S.get("ensemble", members=("f1", "bleu4"), normalisation="ecdf", reference="tfc/ref").score(g[:2], h[:2])


def test_a_refitted_reference_keeps_an_unchanged_members_scores_on_the_same_rows(tmp_path, monkeypatch):
    """fit_reference(reuse=earlier): a member whose signature the earlier reference holds keeps its scores when
    the rows are the same (their sha256), and is scored afresh on other rows."""
    import pandas as pd

    from tfc.models import release
    from tfc.scorers import ensemble as E

    monkeypatch.setattr(release, "release_root", lambda: tmp_path)
    frames = {"dev": pd.DataFrame({"grounding": ["the cat sat on the mat", "a dog ran in the park"],
                                   "generated": ["the cat sat", "a red dog"], "label": [1, 0]})}
    first = E.fit_reference(["f1"], frames, "ref")
    sig = S.get("f1").signature
    planted = {**first, "members": {sig: {"name": "f1", "scores": [0.123, 0.456]}}}
    kept = E.fit_reference(["f1"], frames, "ref", reuse=planted)
    assert kept["members"][sig]["scores"] == [0.123, 0.456] and kept["rows_sha256"] == first["rows_sha256"]
    other = {"dev": frames["dev"].assign(generated=["the cat", "a dog ran"])}
    fresh = E.fit_reference(["f1"], other, "ref", reuse=planted)
    assert fresh["members"][sig]["scores"] != [0.123, 0.456] and fresh["rows_sha256"] != first["rows_sha256"]


def test_summac_conv_reads_the_matrices_its_convolution_was_fitted_on():
    from tfc.models import release

    cfg = S.get("summac-conv").config
    fitted = json.loads((release.release_dir(cfg.conv_checkpoint[4:]) / "summac_conv.json").read_text())["config"]
    for k in ("checkpoint", "grounding_granularity", "generated_granularity", "sentence_splitter", "n_bins",
              "nli_labels"):
        assert getattr(cfg, k) == fitted[k], k
