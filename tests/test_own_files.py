"""Scoring and evaluating your own files: ``tfc score --input``, ``tfc evaluate``, ``tfc.score_frame``.

Only lexical scorers (f1, rougeL) and a counting word-overlap scorer: no model is loaded.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tfc
from tfc.results import own_files as O
from tfc.book.chapters.byoc import WordOverlap
from tfc.cli import main

G_COL, H_COL, Y_COL = "Source Text (ü)", "résumé 🚀", "human label?"

ROWS = [
    ("The river flooded the old mill in April; nobody was hurt.", "Nobody was hurt when the river flooded the mill.", 1),
    ("The river flooded the old mill in April; nobody was hurt.", "Three people died when the mill burned down.", 0),
    ("Die Bäckerei in Köln öffnet um 7 Uhr.", "Die Bäckerei öffnet um 7 Uhr.", 1),
    ("Die Bäckerei in Köln öffnet um 7 Uhr.", "Die Metzgerei schließt um 9 Uhr.", 0),
    ("東京の会議は月曜日に始まる。", "会議は月曜日に始まる。", 1),
    ("東京の会議は月曜日に始まる。", "パリの祭りは金曜日に終わる。", 0),
    ("مرحبا بالعالم، الطقس جميل اليوم", "الطقس جميل اليوم", 1),
    ("The cat 🐈 sat on the mat.", "A dog 🐕 ran in the park.", 0),
    ("Prices rose by 3% in May.", "", 0),  # an empty generated text: the scorer's empty_score
    ("Prices rose by 3% in May.", "In May prices rose by 3%.", 1),
]


def frame() -> pd.DataFrame:
    return pd.DataFrame(ROWS, columns=[G_COL, H_COL, Y_COL])


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def score_args(inp, out, *more):
    return ["score", "--input", inp, "--grounding-col", G_COL, "--generated-col", H_COL, "-o", out,
            "--no-progress", *more]


def one_line_error(r, *needles):
    assert r.exit_code != 0, r.output
    msg = r.output.strip()
    assert msg.startswith("Error: ") or msg.startswith("Usage:"), msg
    err = [ln for ln in msg.splitlines() if ln.startswith("Error: ")]
    assert len(err) == 1, msg
    for n in needles:
        assert n in err[0], (n, err[0])
    return err[0]


def leftovers(d):
    """Files in ``d`` besides the inputs a test wrote and the score cache (temporary files included)."""
    return sorted(p.name for p in d.iterdir() if not p.name.startswith("in.") and p.name != "cache")


# -- the happy path ---------------------------------------------------------------------------------
def test_score_then_evaluate_csv_odd_columns_unicode(tmp_path, tmp_cache):
    inp, out = tmp_path / "in.csv", tmp_path / "scored.parquet"
    frame().to_csv(inp, index=False)
    r = run(*score_args(inp, out, "-s", "f1", "-s", "rougeL"))
    assert r.exit_code == 0, r.output
    got = pd.read_parquet(out)
    assert list(got.columns) == [G_COL, H_COL, Y_COL, "f1", "rougeL"]
    assert got[G_COL].tolist() == [g for g, _, _ in ROWS] and got[H_COL].tolist() == [h for _, h, _ in ROWS]
    assert got.attrs[O.SCORE_COLUMNS_ATTR] == ["f1", "rougeL"]
    want = tfc.scorers.get("f1").score([g for g, _, _ in ROWS], [h for _, h, _ in ROWS], progress=False)
    np.testing.assert_allclose(got["f1"].to_numpy(), want)
    assert got.loc[8, "f1"] == tfc.scorers.get("f1").empty_score

    r = run("evaluate", "--input", out, "--label-col", Y_COL, "--json", "--n-boot", 300)
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    from sklearn.metrics import roc_auc_score

    assert [s["column"] for s in rep["scores"]] == ["f1", "rougeL"]
    for s in rep["scores"]:
        assert s["roc_auc"] == pytest.approx(roc_auc_score(got[Y_COL], got[s["column"]]), abs=1e-12)
        lo, hi = s["auc_ci"]
        assert lo <= s["roc_auc"] <= hi
        assert 0 <= s["bacc_in_sample"] <= 1 and 0 <= s["bacc_fixed"] <= 1
    (c,) = rep["comparisons"]
    assert (c["a"], c["b"]) == ("f1", "rougeL")
    assert c["diff"] == pytest.approx(rep["scores"][0]["roc_auc"] - rep["scores"][1]["roc_auc"])
    assert c["ci"][0] <= c["diff"] <= c["ci"][1] and 0 < c["p_value"] <= 1

    r = run("evaluate", "--input", out, "--label-col", Y_COL, "--n-boot", 300)
    assert r.exit_code == 0, r.output
    assert "ROC AUC" in r.output and "paired bootstrap" in r.output and "rougeL" in r.output


@pytest.mark.parametrize("fmt", ["jsonl", "json", "tsv", "parquet"])
def test_input_formats(tmp_path, tmp_cache, fmt):
    df = frame()
    inp = tmp_path / f"in.{fmt}"
    if fmt == "jsonl":
        df.to_json(inp, orient="records", lines=True, force_ascii=False)
    elif fmt == "json":
        df.to_json(inp, orient="records", force_ascii=False)
    elif fmt == "tsv":
        df.to_csv(inp, sep="\t", index=False)
    else:
        df.to_parquet(inp)
    out = tmp_path / "out.csv"
    r = run(*score_args(inp, out, "-s", "f1"))
    assert r.exit_code == 0, r.output
    got = pd.read_csv(out, keep_default_na=False)
    assert got[H_COL].tolist() == df[H_COL].tolist()
    np.testing.assert_allclose(got["f1"].astype(float), O.score_frame(df, "f1", G_COL, H_COL)["f1"])


def test_csv_text_columns_stay_text(tmp_path, tmp_cache):
    """'NA', '123' and an empty cell in a text column are text, not NaN or numbers."""
    inp = tmp_path / "in.csv"
    inp.write_text("doc,gen,y\nNA,123,1\nnull,,0\n", encoding="utf-8")
    df = O.read_table(inp, text_cols=("doc", "gen"))
    assert df["doc"].tolist() == ["NA", "null"] and df["gen"].tolist() == ["123", ""]
    assert pd.api.types.is_integer_dtype(df["y"])


def test_output_formats_and_overwrite(tmp_path, tmp_cache):
    inp = tmp_path / "in.csv"
    frame().to_csv(inp, index=False)
    for name in ("o.jsonl", "o.csv", "o.parquet"):
        assert run(*score_args(inp, tmp_path / name, "-s", "f1")).exit_code == 0
    back = pd.read_json(tmp_path / "o.jsonl", lines=True)
    assert back[H_COL].tolist() == frame()[H_COL].tolist()
    before = (tmp_path / "o.csv").read_bytes()
    one_line_error(run(*score_args(inp, tmp_path / "o.csv", "-s", "rougeL")), "exists", "--overwrite")
    assert (tmp_path / "o.csv").read_bytes() == before
    r = run(*score_args(inp, tmp_path / "o.csv", "-s", "rougeL", "--overwrite"))
    assert r.exit_code == 0, r.output
    assert "rougeL" in pd.read_csv(tmp_path / "o.csv").columns
    assert leftovers(tmp_path) == ["o.csv", "o.jsonl", "o.parquet"]


def test_named_columns_default_output_and_evaluate_picks_score_columns(tmp_path, tmp_cache):
    inp = tmp_path / "in.csv"
    df = frame().assign(rating=np.arange(len(ROWS)) % 3)   # a numeric column that is not a score
    df.to_csv(inp, index=False)
    r = CliRunner().invoke(main, ["score", "--input", str(inp), "--grounding-col", G_COL, "--generated-col", H_COL,
                                  "-s", "lex=f1", "-s", "rougeL", "--no-progress"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "in.scored.parquet"
    assert out.is_file()
    rep = json.loads(run("evaluate", "--input", out, "--label-col", Y_COL, "--json", "--n-boot", 100).output)
    assert [s["column"] for s in rep["scores"]] == ["lex", "rougeL"]   # not 'rating'
    rep = json.loads(run("evaluate", "--input", out, "--label-col", Y_COL, "--json", "--n-boot", 100,
                         "--score-cols", "rating,lex").stdout)   # stderr: 0.5 is no threshold for 'rating'
    assert len(rep["warnings"]) == 1 and "'rating'" in rep["warnings"][0]
    assert [s["column"] for s in rep["scores"]] == ["rating", "lex"]


def test_evaluate_auc_matches_sklearn_with_ties(tmp_path):
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 80)
    df = pd.DataFrame({"y": y, "a": np.round(y + rng.normal(0, 1, 80), 1), "b": rng.integers(0, 4, 80).astype(float),
                       "c": rng.normal(0, 1, 80)})
    path = tmp_path / "s.parquet"
    df.to_parquet(path)
    r = run("evaluate", "--input", path, "--label-col", "y", "--score-cols", "a,b,c", "--json", "--n-boot", 500)
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)   # the warnings (scores outside [0, 1] with the default threshold 0.5) go to stderr
    for s in rep["scores"]:
        assert s["roc_auc"] == pytest.approx(roc_auc_score(df["y"], df[s["column"]]), abs=1e-12)
        assert s["auc_ci"][0] <= s["roc_auc"] <= s["auc_ci"][1]
    assert [(c["a"], c["b"]) for c in rep["comparisons"]] == [("a", "b"), ("a", "c"), ("b", "c")]
    same = tfc.evaluate_frame(df, "y", ["a", "b", "c"], n_boot=500)
    assert same["scores"] == rep["scores"]


def test_evaluate_labels_as_bool_and_strings(tmp_path):
    df = pd.DataFrame({"s": [0.1, 0.9, 0.4, 0.8], "yb": [False, True, False, True], "ys": ["0", "1", "false", "TRUE"]})
    a = O.evaluate_frame(df, "yb", ["s"], n_boot=50)["scores"][0]["roc_auc"]
    b = O.evaluate_frame(df, "ys", ["s"], n_boot=50)["scores"][0]["roc_auc"]
    assert a == b == 1.0


# -- the Python API ---------------------------------------------------------------------------------
def test_score_frame_python(tmp_cache):
    df = frame()
    out = tfc.score_frame(df, ["f1", "r=rougeL"], grounding_col=G_COL, generated_col=H_COL)
    assert list(out.columns) == list(df.columns) + ["f1", "r"]
    assert out[H_COL].tolist() == df[H_COL].tolist() and "f1" not in df.columns   # input untouched
    assert out.attrs[O.SCORE_COLUMNS_ATTR] == ["f1", "r"]
    nocache = tfc.score_frame(df, "f1", G_COL, H_COL, use_cache=False)
    np.testing.assert_allclose(nocache["f1"], out["f1"])
    with pytest.raises(O.OwnFileError, match="takes a checkpoint"):
        tfc.score_frame(df, "f1", G_COL, H_COL, checkpoint="some/model")
    with pytest.raises(O.OwnFileError, match="not found"):
        tfc.score_frame(df, "f1")   # default column names 'grounding'/'generated' are absent
    with pytest.raises(TypeError):
        tfc.score_frame(df.to_dict(), "f1", G_COL, H_COL)


def test_score_frame_on_a_datasets_dataset(tmp_cache):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_pandas(frame(), preserve_index=False)
    out = tfc.score_frame(ds, "f1", G_COL, H_COL)
    assert isinstance(out, datasets.Dataset)
    assert out.column_names == [G_COL, H_COL, Y_COL, "f1"]
    np.testing.assert_allclose(out["f1"], tfc.score_frame(frame(), "f1", G_COL, H_COL)["f1"])


def test_import_tfc_stays_light():
    code = ("import sys, tfc; f = tfc.score_frame; g = tfc.evaluate_frame; "
            "heavy = [m for m in ('torch', 'transformers', 'spacy', 'datasets') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_example_file(tmp_path, tmp_cache):
    p = O.write_example(tmp_path / "example.csv")
    df = pd.read_csv(p)
    assert list(df.columns) == list(O.EXAMPLE_COLUMNS) and set(df["consistent"]) == {0, 1}
    r = run("score", "--input", p, "--grounding-col", "article", "--generated-col", "summary", "-s", "f1",
            "-s", "rougeL", "-o", tmp_path / "example.scored.parquet", "--no-progress")
    assert r.exit_code == 0, r.output
    r = run("evaluate", "--input", tmp_path / "example.scored.parquet", "--label-col", "consistent")
    assert r.exit_code == 0 and "f1" in r.output, r.output
    with pytest.raises(O.OwnFileError, match="exists"):
        O.write_example(p)


# -- resuming through the score cache ---------------------------------------------------------------
class CountingOverlap(WordOverlap):
    """WordOverlap that counts its rows and can fail on a given call (an interruption)."""

    name = "counting-overlap"
    rows: list = []
    fail_on_call: int | None = None

    def _score(self, groundings, generations, batch_size, progress):
        calls = CountingOverlap.rows
        if CountingOverlap.fail_on_call is not None and len(calls) == CountingOverlap.fail_on_call:
            raise KeyboardInterrupt
        calls.append(len(groundings))
        return super()._score(groundings, generations, batch_size, progress)


@pytest.fixture
def counting():
    from tfc import scorers

    scorers.register("counting-overlap", f"{__name__}:CountingOverlap")
    CountingOverlap.rows, CountingOverlap.fail_on_call = [], None
    yield CountingOverlap
    scorers._REGISTRY.pop("counting-overlap", None)
    CountingOverlap.fail_on_call = None


def test_interrupted_run_resumes_from_the_cache(tmp_path, tmp_cache, counting):
    from tfc.cache import entries

    df = pd.DataFrame({"doc": [f"the cat number {i} sat on mat {i}" for i in range(9)],
                       "gen": [f"cat {i} sat" if i % 2 else f"dog {i} ran" for i in range(9)]})
    inp, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(inp)
    args = ["score", "--input", inp, "--grounding-col", "doc", "--generated-col", "gen", "-s", "counting-overlap",
            "--chunk-size", 2, "-o", out, "--no-progress"]
    counting.fail_on_call = 2          # two chunks (4 rows) finish, the third call is interrupted
    one_line_error(run(*args), "interrupted", "resume")
    assert not out.exists() and leftovers(tmp_path) == []
    assert counting.rows == [2, 2]
    ent = entries()
    assert len(ent) == 1 and ent.iloc[0]["dataset"].startswith("file-") and "partial" in ent.iloc[0]["state"]

    counting.fail_on_call = None
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert counting.rows == [2, 2, 2, 2, 1]          # only the 5 missing rows were computed
    assert "4 rows from the cache, 5 computed" in r.output
    full = O.score_frame(df, WordOverlap(), "doc", "gen", use_cache=False)["word-overlap"]
    np.testing.assert_allclose(pd.read_parquet(out)["counting-overlap"], full)

    r = run(*args[:-3], "-o", tmp_path / "again.csv", "--no-progress")   # everything cached now
    assert r.exit_code == 0 and "9 rows from the cache, 0 computed" in r.output, r.output
    assert counting.rows == [2, 2, 2, 2, 1]
    # the same texts in another file format share the cache entry
    df.to_csv(tmp_path / "in.csv", index=False)
    rep = {}
    O.score_frame(O.read_table(tmp_path / "in.csv", text_cols=("doc", "gen")), "counting-overlap", "doc", "gen",
                  report=rep)
    assert rep["counting-overlap"]["from_cache"] == 9 and counting.rows == [2, 2, 2, 2, 1]
    r = run("cache", "verify")
    assert "skip" in r.output and "your own file" in r.output


# -- bad inputs: one clear line, nothing written ----------------------------------------------------
def _write(path, content):
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, pd.DataFrame):
        content.to_parquet(path)
    else:
        path.write_text(content, encoding="utf-8")
    return path


BAD_SCORE_INPUTS = {
    # name: (file name, content, extra args, expected phrases)
    "misnamed column": ("in.csv", "document,summary\na,b\n", ["--grounding-col", "doc", "--generated-col", "summary"],
                        ["column 'doc' not found", "'document', 'summary'", "did you mean 'document'"]),
    "missing generated column": ("in.jsonl", '{"grounding": "a", "y": 1}\n', [],
                                 ["column 'generated' not found", "'grounding', 'y'"]),
    "empty file": ("in.csv", b"", [], ["is empty"]),
    "blank file": ("in.csv", "\n\n  \n", [], ["is empty"]),
    "header only": ("in.csv", "grounding,generated\n", [], ["has no rows", "grounding, generated"]),
    "empty jsonl": ("in.jsonl", "\n\n", [], ["is empty"]),
    "empty json array": ("in.json", "[]", [], ["has no rows"]),
    "empty parquet": ("in.parquet", pd.DataFrame({"grounding": pd.Series([], dtype=str),
                                                   "generated": pd.Series([], dtype=str)}), [], ["has no rows"]),
    "non-utf8 csv": ("in.csv", "grounding,generated\nok,fine\n".encode() + "café,crème\n".encode("latin-1"), [],
                     ["not UTF-8", "byte 0xe9", "line 3"]),
    "non-utf8 jsonl": ("in.jsonl", '{"grounding": "a", "generated": "b"}\n'.encode() + b'{"grounding": "\xff"}\n', [],
                       ["not UTF-8", "byte 0xff", "line 2"]),
    "number cell jsonl": ("in.jsonl", '{"grounding": "a", "generated": "b"}\n{"grounding": "a", "generated": 42}\n', [],
                          ["row 1", "'generated'", "holds int 42", "not text"]),
    "null cell jsonl": ("in.jsonl", '{"grounding": "a", "generated": "b"}\n{"grounding": null, "generated": "b"}\n', [],
                        ["row 1", "'grounding'", "no value"]),
    "key missing on one jsonl row": ("in.jsonl", '{"grounding": "a", "generated": "b"}\n{"grounding": "a"}\n', [],
                                     ["row 1", "'generated'", "no value"]),
    "list cell jsonl": ("in.jsonl", '{"grounding": ["a", "b"], "generated": "b"}\n', [],
                        ["row 0", "'grounding'", "holds list"]),
    "lone surrogate": ("in.jsonl", '{"grounding": "a", "generated": "bad \\ud800 text"}\n', [],
                       ["row 0", "'generated'", "not valid Unicode"]),
    "None in parquet": ("in.parquet", pd.DataFrame({"grounding": ["a", None], "generated": ["b", "c"]}), [],
                        ["row 1", "'grounding'", "no value"]),
    "float column in parquet": ("in.parquet", pd.DataFrame({"grounding": ["a", "b"], "generated": [0.5, 1.5]}), [],
                                ["row 0", "'generated'", "holds float"]),
    "ragged csv": ("in.csv", "grounding,generated\na,b\nc,d,e,f\n", [], ["not a well-formed CSV", "line 3"]),
    "bad json line": ("in.jsonl", '{"grounding": "a", "generated": "b"}\n{"grounding": "a", \n', [],
                      ["line 2 is not valid JSON"]),
    "json line not an object": ("in.jsonl", '{"grounding": "a", "generated": "b"}\n["a", "b"]\n', [],
                                ["line 2 is a JSON list, not an object"]),
    "bad json array item": ("in.json", '[{"grounding": "a", "generated": "b"}, 3]', [], ["item 1", "not an object"]),
    "unsupported input type": ("in.txt", "grounding\tgenerated\n", [], ["unsupported file type '.txt'"]),
    "not parquet": ("in.parquet", "grounding,generated\na,b\n", [], ["not a readable parquet file"]),
    "score column already there": ("in.csv", "grounding,generated,f1\na,b,0.3\n", [],
                                   ["already has a column 'f1'"]),
}


@pytest.mark.parametrize("case", sorted(BAD_SCORE_INPUTS))
def test_bad_score_inputs(case, tmp_path, tmp_cache):
    name, content, extra, phrases = BAD_SCORE_INPUTS[case]
    inp = _write(tmp_path / name, content)
    out = tmp_path / "out.parquet"
    r = run("score", "--input", inp, "-s", "f1", "-o", out, "--no-progress", *extra)
    one_line_error(r, *phrases)
    assert not out.exists() and leftovers(tmp_path) == []
    assert not tmp_cache.exists() or not any(tmp_cache.rglob("*.parquet"))


BAD_SCORE_ARGS = {
    "no such input": (["--input", "{d}/nope.csv"], ["no such file"]),
    "unknown scorer": (["--input", "{d}/in.csv", "-s", "nope"], ["unknown scorer 'nope'"]),
    "checkpoint for a lexical scorer": (["--input", "{d}/in.csv", "-c", "x/y"], ["none of the scorers", "checkpoint"]),
    "two scorers, one column": (["--input", "{d}/in.csv", "-s", "rougeL", "-s", "f1=rougeL"], []),
    "same column twice": (["--input", "{d}/in.csv", "-s", "x=f1", "-s", "x=rougeL"], ["same column 'x'"]),
    "bad scorer spec": (["--input", "{d}/in.csv", "-s", "=f1"], ["bad scorer"]),
    "imported scorer": (["--input", "{d}/in.csv", "-s", "imported:scale_score_true/summac_zs"],
                        ["cannot score your own texts"]),
    "output type": (["--input", "{d}/in.csv", "-o", "{d}/out.xlsx"], ["unsupported output type '.xlsx'"]),
    "output directory missing": (["--input", "{d}/in.csv", "-o", "{d}/no/out.parquet"], ["does not exist"]),
    "output is a directory": (["--input", "{d}/in.csv", "-o", "{d}/sub.parquet"], ["is a directory"]),
    "output exists": (["--input", "{d}/in.csv", "-o", "{d}/in.csv"], ["exists", "--overwrite"]),
    "both -d and --input": (["--input", "{d}/in.csv", "-d", "q2"], ["exactly one of"]),
    "neither -d nor --input": ([], ["exactly one of"]),
    "--sample with --input": (["--input", "{d}/in.csv", "--sample", "3"], ["--sample works with --dataset only"]),
    "--split with a file": (["--input", "{d}/in.csv", "--split", "dev"], ["--split applies to"]),
    "plain directory": (["--input", "{d}/sub.parquet"], ["not a datasets directory"]),
    "hub id offline": (["--input", "hf:someone/some-set"], ["offline"]),
    "chunk size": (["--input", "{d}/in.csv", "--chunk-size", "0"], ["--chunk-size"]),
}


@pytest.mark.parametrize("case", sorted(BAD_SCORE_ARGS))
def test_bad_score_arguments(case, tmp_path, tmp_cache, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    (tmp_path / "in.csv").write_text("grounding,generated\na b,b c\n", encoding="utf-8")
    (tmp_path / "sub.parquet").mkdir()
    args, phrases = BAD_SCORE_ARGS[case]
    args = [a.format(d=tmp_path) for a in args]
    if "-s" not in args:
        args += ["-s", "f1"]
    if "-o" not in args:
        args += ["-o", str(tmp_path / "out.parquet")]
    r = run("score", "--no-progress", *args)
    if case == "two scorers, one column":   # rougeL + f1=rougeL are different columns: fine
        assert r.exit_code == 0, r.output
        assert {"rougeL", "f1"} <= set(pd.read_parquet(tmp_path / "out.parquet").columns)
        return
    assert r.exit_code != 0, r.output
    text = " ".join(r.output.split())
    for p in phrases:
        assert p in text, (p, r.output)
    assert not (tmp_path / "out.parquet").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["in.csv", "sub.parquet"]
    assert (tmp_path / "in.csv").read_text(encoding="utf-8") == "grounding,generated\na b,b c\n"


def test_datasets_dict_with_several_splits_needs_split(tmp_path, tmp_cache):
    datasets = pytest.importorskip("datasets")
    d = tmp_path / "dd"
    datasets.DatasetDict({s: datasets.Dataset.from_pandas(frame(), preserve_index=False)
                          for s in ("dev", "test")}).save_to_disk(str(d))
    before = sorted(p.relative_to(d) for p in d.rglob("*"))
    base = ["score", "--input", d, "--grounding-col", G_COL, "--generated-col", H_COL, "-s", "f1", "--no-progress"]
    one_line_error(run(*base, "-o", tmp_path / "o.parquet"), "has splits dev, test", "--split")
    one_line_error(run(*base, "-o", tmp_path / "o.parquet", "--split", "val"), "no split 'val'")
    assert not (tmp_path / "o.parquet").exists()
    r = run(*base, "-o", tmp_path / "o.parquet", "--split", "test")
    assert r.exit_code == 0, r.output
    assert pd.read_parquet(tmp_path / "o.parquet")[H_COL].tolist() == frame()[H_COL].tolist()
    assert sorted(p.relative_to(d) for p in d.rglob("*")) == before   # nothing written into the user's directory


BAD_EVALUATE = {
    "label not binary": ({"y": [0, 1, 2, 1], "s": [0.1, 0.2, 0.3, 0.4]}, ["--label-col", "y"],
                         ["label column 'y' is not binary", "0, 1, 2"]),
    "label words": ({"y": ["yes", "no", "yes", "no"], "s": [0.1, 0.2, 0.3, 0.4]}, ["--label-col", "y"],
                    ["not binary", "'no', 'yes'"]),
    "label one class": ({"y": [1, 1, 1], "s": [0.1, 0.2, 0.3]}, ["--label-col", "y"], ["one class only"]),
    "label missing value": ({"y": [1.0, None, 0.0], "s": [0.1, 0.2, 0.3]}, ["--label-col", "y"],
                            ["row 1", "no value"]),
    "label column misnamed": ({"label": [0, 1], "s": [0.1, 0.2]}, ["--label-col", "Label"],
                              ["column 'Label' not found", "'label', 's'", "did you mean 'label'"]),
    "score column missing": ({"y": [0, 1], "s": [0.1, 0.2]}, ["--label-col", "y", "--score-cols", "s,t"],
                             ["column 't' not found"]),
    "score not numeric": ({"y": [0, 1, 0], "s": ["0.1", "high", "0.3"]}, ["--label-col", "y", "--score-cols", "s"],
                          ["row 1", "'high'", "not a number"]),
    "score missing value": ({"y": [0, 1, 0], "s": [0.1, None, 0.3]}, ["--label-col", "y", "--score-cols", "s"],
                            ["row 1", "score column 's'", "no finite value"]),
    "score infinite": ({"y": [0, 1, 0], "s": [0.1, float("inf"), 0.3]}, ["--label-col", "y", "--score-cols", "s"],
                       ["row 1", "no finite value"]),
    "no score columns": ({"y": [0, 1], "t": ["a", "b"]}, ["--label-col", "y"], ["no numeric score columns"]),
    "label as score": ({"y": [0, 1], "s": [0.1, 0.2]}, ["--label-col", "y", "--score-cols", "y,s"],
                       ["is the label column"]),
}


@pytest.mark.parametrize("case", sorted(BAD_EVALUATE))
def test_bad_evaluate_inputs(case, tmp_path):
    data, args, phrases = BAD_EVALUATE[case]
    inp = tmp_path / "in.parquet"
    pd.DataFrame(data).to_parquet(inp)
    one_line_error(run("evaluate", "--input", inp, *args), *phrases)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_evaluate_bad_files(tmp_path):
    (tmp_path / "in.csv").write_bytes(b"")
    one_line_error(run("evaluate", "--input", tmp_path / "in.csv", "--label-col", "y"), "is empty")
    (tmp_path / "in.csv").write_bytes(b"y,s\n1,0.5\n0,\xff\n")
    one_line_error(run("evaluate", "--input", tmp_path / "in.csv", "--label-col", "y"), "not UTF-8", "line 3")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_preset_reaches_every_named_scorer_and_an_unknown_one_is_one_error(tmp_path, tmp_cache):
    specs = O.parse_scorers(["f1", "bertscore"], preset="fast")
    assert [s.config.dtype for _, s in specs if hasattr(s.config, "dtype")] == ["bfloat16"]
    assert specs[0][1].signature == tfc.scorers.get("f1").signature        # lexical: the preset changes nothing
    inp, out = tmp_path / "in.csv", tmp_path / "scored.parquet"
    frame().to_csv(inp, index=False)
    one_line_error(run(*score_args(inp, out, "-s", "f1", "--preset", "quick")), "unknown preset 'quick'")
    r = run(*score_args(inp, out, "-s", "f1", "--preset", "fast"))
    assert r.exit_code == 0, r.output
