"""tfc.data on the real mirror: TRUE Table 2, ids, label-only / unavailable sets, checksums, fetch, leakage."""
import functools
import http.server
import shutil
import threading

import pandas as pd
import pytest
from click.testing import CliRunner

import tfc.data as D
from tfc.book import reference
from tfc.data import manifest
from tfc.data.builders import crosscheck_true, mnbm_missing


@pytest.fixture(autouse=True)
def _mirror(data_dir):
    return data_dir


def test_names_default_is_true_text_in_order():
    assert D.names() == ["frank", "summeval", "mnbm", "qags_cnndm", "qags_xsum", "begin", "q2", "dialfact", "paws"]
    assert "fever" in D.names(all=True) and "summac_factcc" not in D.names(all=True)
    assert "summac_factcc" in D.names(include_unavailable=True)
    assert all(D.info(n).role == "train" for n in D.names(role="train"))
    assert "begin_test" in D.names(role="train") and "wecheck_dialogue" in D.names(role="train")


@pytest.mark.parametrize("name", D.TRUE_TEXT)
def test_true_table2_counts_and_pct(name):
    df = D.load(name)
    assert list(df.columns[:7]) == D.SCHEMA
    n_paper = reference.value("TRUE-T2", name, "n_examples")
    pct_paper = reference.value("TRUE-T2", name, "pct_consistent")
    if name == "mnbm":   # documented gap: bbcid 12620805 (5 rows, all consistent) has no article offline
        assert (len(df), int(df["label"].sum())) == (2495, 250)
        assert n_paper == 2500 and round(100 * 255 / 2500, 1) == pct_paper
    else:
        assert len(df) == n_paper
        assert round(100 * df["label"].mean(), 1) == pct_paper
    assert df["id"].is_unique and df["label"].isin([0, 1]).all()


@pytest.mark.parametrize("name", ["qags_cnndm", "qags_xsum", "begin", "q2", "mnbm"])
def test_rebuilt_sets_match_true(name):
    cc = crosscheck_true(D.load(name), name)
    assert all(v == 0 for k, v in cc.items() if k.endswith("mismatch")), cc


def test_mnbm_ids_keep_true_positions():
    df = D.load("mnbm")
    miss = mnbm_missing()
    assert miss["true_row"].tolist() == [146, 587, 1134, 1953, 2127]
    assert set(miss["bbcid"]) == {"12620805"} and miss["label"].tolist() == [1] * 5
    assert "mnbm/dev/000146" not in set(df["id"]) and "mnbm/dev/000147" in set(df["id"])
    lab = D.labels("mnbm")
    assert len(lab) == 2500 and lab["label"].sum() == 255
    joined = df.merge(lab, on="id", suffixes=("", "_vec"))
    assert len(joined) == 2495 and (joined["label"] == joined["label_vec"]).all()


def test_label_only_sets():
    with pytest.raises(D.LabelOnlyError, match="labels"):
        D.load("fever")
    assert issubclass(D.LabelOnlyError, ValueError)
    lab = D.labels("fever")
    assert len(lab) == 18209 and lab["id"].iloc[0] == "fever/dev/000000"
    assert round(100 * lab["label"].mean(), 1) == 35.1
    assert len(D.labels("vitaminc")) == 63054
    assert D.status("fever") == "label-only"


def test_unavailable_and_unknown():
    with pytest.raises(D.UnavailableError, match="FactCC"):
        D.load("summac_factcc")
    with pytest.raises(D.UnknownDatasetError):
        D.load("nope")
    with pytest.raises(ValueError, match="no split"):
        D.load("q2", split="test")
    with pytest.raises(TypeError):
        D.load("q2", sample=0.5)


def test_sample_is_stratified_deterministic():
    a, b = D.load("mnbm", sample=40, seed=1), D.load("mnbm", sample=40, seed=1)
    assert a.equals(b) and len(a) == 40 and a["label"].sum() == 4
    assert a["id"].tolist() == sorted(a["id"])


def test_other_sets_counts():
    pol = D.load("summac_polytope")
    assert pol.groupby("split")["label"].agg(["size", "sum"]).loc[["val", "test"]].values.tolist() == [[634, 42], [634, 41]]
    pa = D.load("summac_polytope_alignscore")
    assert pa.groupby("split")["label"].sum().loc[["val", "test"]].tolist() == [553, 546]
    assert (pa["label"] >= pol["label"]).all()          # AlignScore's rule only removes error types
    cgs = D.load("summac_cogensumm")
    assert (len(cgs), int(cgs["label"].sum())) == (400, 312)
    q = D.load("qags_cnndm_scores")
    assert q["human_score"].between(0, 1).all() and ((q["human_score"] == 1) == (q["label"] == 1)).all()
    nli = D.load("anli_test")
    assert set(nli["label3"]) == {"entailment", "neutral", "contradiction"}
    assert ((nli["label3"] == "entailment") == (nli["label"] == 1)).all()
    tc = D.load("topicalchat_usr")                    # USR Topical-Chat: 52 contexts with a fact x 6 responses
    assert len(tc) == 312 and not tc["grounding"].str.strip().eq("_nofact").any()
    assert tc["human_score"].between(0, 1).all() and ((tc["human_score"] > 0.5) == (tc["label"] == 1)).all()
    assert set(m["system"] for m in tc["meta"]) >= {"Original Ground Truth", "New Human Generated", "Argmax Decoding"}


# --------------------------------------------------------------------------- checksums
def _copy_mirror(src, dst, rels):
    for rel in rels:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / rel, dst / rel)


def test_checksum_refusal(tmp_path, monkeypatch, data_dir):
    rels = ["q2/cross_annotation.csv"]
    _copy_mirror(data_dir, tmp_path, rels)
    monkeypatch.setenv("TFC_DATA_DIR", str(tmp_path))
    assert len(D.load("q2")) == 1088                                   # the clean copy loads
    with open(tmp_path / rels[0], "a") as f:
        f.write("999,0,0,x,y,z,w,k,g,1,1\n")
    with pytest.raises(D.ChecksumError, match="q2/cross_annotation.csv"):
        D.load("q2")
    res = manifest.verify(only="^q2/")
    st = dict(zip(res["path"], res["status"]))
    assert st["q2/cross_annotation.csv"] == "changed" and st["q2/dodeca_consistent.csv"] == "missing"
    (tmp_path / rels[0]).unlink()
    with pytest.raises(D.MissingRawFileError, match="cross_annotation"):
        D.load("q2")


def test_verify_cli_names_changed_file(tmp_path, monkeypatch, data_dir):
    from tfc.cli.data import data as data_cli

    _copy_mirror(data_dir, tmp_path, ["qags/mturk_xsum.jsonl"])
    (tmp_path / "qags" / "mturk_cnndm.jsonl").write_text("{}\n")
    monkeypatch.setenv("TFC_DATA_DIR", str(tmp_path))
    res = CliRunner().invoke(data_cli, ["verify", "--only", "^qags/mturk"])
    assert res.exit_code == 1
    assert "CHANGED  qags/mturk_cnndm.jsonl" in res.output and "mturk_xsum" not in res.output
    assert "1/2 files OK" in res.output


# --------------------------------------------------------------------------- fetch over loopback
def test_fetch_from_loopback_server(tmp_path, data_dir):
    rels = ["q2/dodeca_consistent.csv", "qags/mturk_xsum.jsonl"]
    served = tmp_path / "served"
    man = manifest.load_manifest().set_index("path")
    for rel in rels:  # lay files out as <repo>/<commit>/<upstream path>, like raw.githubusercontent.com
        e = man.loc[rel]
        target = served / e["repo"] / e["commit"] / e["upstream_path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(data_dir / rel, target)
    # a corrupted copy must be refused
    e = man.loc["q2/memnet_consistent.csv"]
    bad = served / e["repo"] / e["commit"] / e["upstream_path"]
    bad.write_text("corrupted")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        tmpl = f"http://127.0.0.1:{srv.server_address[1]}/{{repo}}/{{commit}}/{{upstream_path}}"
        dest = tmp_path / "mirror"
        res = manifest.fetch(dest, tmpl, only=r"^(q2/dodeca_consistent|q2/memnet_consistent|qags/mturk_xsum|true/mnbm)",
                             log=lambda *_: None)
    finally:
        srv.shutdown()
    st = {r.path: r.status for r in res}
    assert st["q2/dodeca_consistent.csv"] == "fetched" and st["qags/mturk_xsum.jsonl"] == "fetched"
    assert st["q2/memnet_consistent.csv"] == "failed" and not (dest / "q2/memnet_consistent.csv").exists()
    assert st["true/mnbm_reconstructed.csv"] == "skipped-derived"
    for rel in rels:
        assert manifest.sha256_file(dest / rel) == man.loc[rel, "sha256"]
    again = manifest.fetch(dest, tmpl, only=r"^q2/dodeca_consistent", log=lambda *_: None)
    assert [r.status for r in again] == ["present"]


# --------------------------------------------------------------------------- leakage
def test_training_mix_removes_planted_duplicate():
    q2 = D.load("q2")
    clean = pd.DataFrame({"dataset": "mine", "grounding": ["Zebras graze on the savanna at dawn in small herds."],
                          "generated": ["zebras eat grass early."]})
    planted = pd.DataFrame({"dataset": "mine", "grounding": [q2["grounding"].iloc[5].upper()],   # exact after normalisation
                            "generated": ["a brand new response"]})
    near = pd.DataFrame({"dataset": "mine", "grounding": ["Some new context."],
                         "generated": ["well , " + D.load("paws")["grounding"].iloc[0]]})
    mix, rep = D.training_mix([pd.concat([clean, planted, near], ignore_index=True)])
    assert mix["grounding"].tolist() == clean["grounding"].tolist()
    assert rep.iloc[0][["n_in", "removed_exact", "removed_near", "n_out"]].tolist() == [3, 1, 1, 1]
    with pytest.raises(ValueError, match="evaluation set"):
        D.training_mix(["q2"])


def test_cli_list_shows_status():
    from tfc.cli.data import data as data_cli

    res = CliRunner().invoke(data_cli, ["list", "--group", "SummaC"])
    assert res.exit_code == 0, res.output
    assert "unavailable" in res.output and "approximate" in res.output and "summac_polytope" in res.output


def test_cli_show_and_build():
    from tfc.cli.data import data as data_cli

    res = CliRunner().invoke(data_cli, ["show", "fever"])
    assert res.exit_code == 0 and "label-only" in res.output and "18209 rows, 35.1% consistent" in res.output
    res = CliRunner().invoke(data_cli, ["build", "q2", "begin", "summac_factcc"])
    assert res.exit_code == 0, res.output
    assert "q2: 1088 rows; vs TRUE: OK" in res.output and "summac_factcc: unavailable" in res.output


def test_true_sets_are_checked_against_label_vector():
    from tfc.data.builders import check_true_labels

    df = D.load("qags_xsum")
    assert check_true_labels(df, "qags_xsum") is df
    bad = df.copy()
    bad.loc[3, "label"] = 1 - bad.loc[3, "label"]
    with pytest.raises(D.DataError, match="1 labels differ"):
        check_true_labels(bad, "qags_xsum")
    with pytest.raises(D.DataError, match="not TRUE rows"):
        check_true_labels(bad.assign(id="qags_xsum/dev/999999"), "qags_xsum")


def test_a_late_evaluation_set_is_not_a_leakage_target(monkeypatch):
    # topicalchat_usr came after the training mixes were filtered; as a target it would change them
    from tfc.data import leakage

    assert D.info("topicalchat_usr").leakage_target is False and D.info("q2").leakage_target is True
    loaded = []
    monkeypatch.setattr(D, "load", lambda n, **kw: loaded.append(n) or _empty())
    leakage.eval_texts()
    assert "q2" in loaded and "topicalchat_usr" not in loaded


def _empty():
    return pd.DataFrame({"grounding": [], "generated": []})


def test_dialfact_test_follows_trues_dialfact_rule():
    """DialFact's test sample, built as TRUE built DialFact: factual responses only, SUPPORTS = consistent, the
    evidence sentences joined; disjoint in responses from TRUE's DialFact, and the leakage filter drops the rows
    whose evidence is a TRUE grounding."""
    df = D.load("dialfact_test")
    assert D.info("dialfact_test").role == "train"
    assert len(df) == 261 and int(df["label"].sum()) == 99              # 300 rows, 39 personal ones left out
    assert (df["label"] == (df["label3"] == "entailment")).all()
    assert df["meta"].map(lambda m: m["response_label"]).value_counts().to_dict() == {
        "REFUTES": 103, "SUPPORTS": 99, "NOT ENOUGH INFO": 59}
    assert not set(df["generated"]) & set(D.load("dialfact")["generated"])
    kept, leak = D.training_mix(["dialfact_test"])
    assert len(kept) + int(leak["removed_exact"].sum() + leak["removed_near"].sum()) == 261
    assert not set(kept["grounding"]) & set(D.load("dialfact")["grounding"])
