"""Distillation of a teacher into a student (tfc.train.distil, the engine's ``dist`` rows), on tiny random BERTs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from test_train import cfg_for, tiny_base, toy_frame  # noqa: E402,F401  (the tiny base encoder and its rows)

from tfc.train import distil, engine, frames, pair_objective  # noqa: E402

DIST = list(frames.DIST_COLS)


def _kl(q, z, t):
    """KL(softmax(log q / t) || softmax(z / t)) * t**2, by hand."""
    qt = np.exp(np.log(q) / t) / np.exp(np.log(q) / t).sum()
    pt = np.exp(np.asarray(z) / t) / np.exp(np.asarray(z) / t).sum()
    return t * t * float(np.sum(qt * np.log(qt / pt)))


@pytest.mark.parametrize("t", [1.0, 2.0, 0.5])
def test_the_dist_term_is_the_tempered_kl_times_t_squared(t):
    z, q = [2.0, 0.0, -1.0], [0.7, 0.2, 0.1]
    got = pair_objective._task_term("dist", torch.tensor([z]), torch.tensor([0.7]), torch.tensor([q]), t)
    assert float(got) == pytest.approx(_kl(np.array(q), z, t), rel=1e-5)
    # a student that equals its teacher pays nothing, at any temperature
    same = pair_objective._task_term("dist", torch.log(torch.tensor([q])), torch.tensor([0.7]), torch.tensor([q]), t)
    assert float(same) == pytest.approx(0.0, abs=1e-6)


def test_dist_rows_share_the_batch_like_every_task():
    out = {"3way": torch.tensor([[2.0, 0.0, -1.0], [0.0, 1.0, 0.0]])}
    codes = torch.tensor([pair_objective.TASK_CODE["dist"], pair_objective.TASK_CODE["3way"]])
    q = torch.tensor([[0.7, 0.2, 0.1], [0.0, 0.0, 0.0]])
    total, parts = pair_objective._loss(out, codes, torch.tensor([0.7, 1.0]), {"dist": 2.0, "3way": 1.0}, q, 1.0)
    ce = -np.log(np.exp(1.0) / (2 + np.exp(1.0)))
    want = (2.0 * _kl(np.array([0.7, 0.2, 0.1]), [2.0, 0.0, -1.0], 1.0) + ce) / 2
    assert float(total) == pytest.approx(want, rel=1e-5)
    assert set(parts) == {"dist", "3way"}


def _dist_frame(p):
    return pd.DataFrame({"text_a": ["the cat sat ."], "text_b": ["the cat ."], "task": ["dist"], "label": [0.5],
                         "source": ["pool"], **{c: [v] for c, v in zip(DIST, p)}})


@pytest.mark.parametrize("p, match", [((0.5, 0.3, 0.3), "summing to 1"), ((np.nan, 0.5, 0.5), "distribution"),
                                      ((1.2, -0.1, -0.1), "distribution")])
def test_a_dist_row_without_a_distribution_is_refused(p, match):
    with pytest.raises(ValueError, match=match):
        pair_objective.validate_frame(_dist_frame(p), pair_objective.ROW_TASKS)


def test_dist_rows_need_their_columns_and_other_rows_read_zeros():
    with pytest.raises(ValueError, match="p_entailment"):
        pair_objective.validate_frame(_dist_frame((0.6, 0.3, 0.1)).drop(columns=DIST),
                                      pair_objective.ROW_TASKS)
    mixed = pd.concat([_dist_frame((0.6, 0.3, 0.1)), toy_frame(2, ("3way",)).assign(**{c: np.nan for c in DIST})])
    out = pair_objective.validate_frame(mixed, pair_objective.ROW_TASKS)
    assert out[DIST].to_numpy().tolist() == [[0.6, 0.3, 0.1], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


def test_a_frame_without_distributions_keeps_its_hash():
    """Committed mixes are identified by this hash: the distribution columns enter it only where they exist."""
    import hashlib
    import json

    df = toy_frame(3)
    h = hashlib.sha256()
    for r in df.itertuples(index=False):
        h.update(json.dumps([r.text_a, r.text_b, r.task, float(r.label), r.source], ensure_ascii=False).encode())
        h.update(b"\n")
    assert frames.frame_sha256(df) == h.hexdigest()
    assert frames.frame_sha256(df.assign(p_entailment=1.0, p_neutral=0.0, p_contradiction=0.0)) != h.hexdigest()


def test_temperature_must_be_positive(tiny_base):
    with pytest.raises(ValueError, match="temperature"):
        engine.train(toy_frame(4), cfg_for(tiny_base, temperature=0.0), out_dir=False, progress=False)


def test_document_pairs_cut_a_sentence_against_its_document_with_and_without_it():
    doc = "The cat sat on the mat. The dog ran in the park. A man is tall."
    assert len(distil.document_pairs([doc], seed=0, per_doc=3)) == 6     # each sentence, with and without it
    got = distil.document_pairs([doc, "Too short. Two.", doc], seed=0, per_doc=1)
    assert len(got) == 2                       # the short document is skipped, the repeated one counted once
    whole, without = got.iloc[0], got.iloc[1]
    assert whole["text_a"] == doc and whole["text_b"] == without["text_b"]
    assert whole["text_b"] in doc and whole["text_b"] not in without["text_a"]
    assert len(without["text_a"].split()) == len(doc.split()) - len(whole["text_b"].split())


def test_the_forbidden_paws_split_never_enters_a_pool(monkeypatch):
    monkeypatch.setattr(distil, "DOCUMENT_SOURCES", ("anli_dev", "wecheck_paws"))
    with pytest.raises(ValueError, match="PAWS"):
        distil.build_pool(toy_frame(2))


# --- the teacher's labels and the student -------------------------------------------------------------

@pytest.fixture(scope="module")
def teacher(tiny_base, tmp_path_factory):
    out = tmp_path_factory.mktemp("teacher") / "teacher"
    engine.train(toy_frame(16, ("3way",)), cfg_for(tiny_base, tasks=("3way",), max_steps=40), out_dir=out, progress=False)
    return str(out)


def _pool(n=40):
    df = toy_frame(n // 2, ("3way", "bin"))
    return df.loc[:, ["text_a", "text_b", "source"]].reset_index(drop=True)


def test_labels_are_distributions_in_the_heads_order_and_resume_from_shards(teacher, tmp_path, monkeypatch):
    pool = _pool()
    whole = distil.label_pool(pool, teacher, tmp_path / "a", batch_size=7, shard_rows=1000)
    p = whole[DIST].to_numpy()
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-6) and (p >= 0).all()
    assert whole[["text_a", "text_b", "source"]].equals(pool)
    # the same labels in shards of 16 rows and batches of 3 (batch and shard invariance)
    sharded = distil.label_pool(pool, teacher, tmp_path / "b", batch_size=3, shard_rows=16)
    assert np.allclose(sharded[DIST].to_numpy(), p, atol=1e-5)
    assert len(list((tmp_path / "b").glob("shard-*.parquet"))) == 3
    # a second run reads every shard and computes nothing
    monkeypatch.setattr(distil, "_teacher_probs", lambda *a, **k: pytest.fail("recomputed a written shard"))
    again = distil.label_pool(pool, teacher, tmp_path / "b", batch_size=3, shard_rows=16)
    assert again.equals(sharded)


def test_the_teachers_labels_follow_its_label_names(teacher, tmp_path):
    """P(entailment) is the teacher's probability of its 'entailment' class wherever that class sits."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(teacher)
    enc_pool = _pool(6)
    want = distil.label_pool(enc_pool, teacher, tmp_path / "a")[DIST].to_numpy()
    perm = [2, 0, 1]                            # move the classes: contradiction first
    with torch.no_grad():
        model.classifier.weight.copy_(model.classifier.weight[perm])
        model.classifier.bias.copy_(model.classifier.bias[perm])
    model.config.id2label = {i: model.config.id2label[j] for i, j in enumerate(perm)}
    model.config.label2id = {v: k for k, v in model.config.id2label.items()}
    moved = tmp_path / "moved"
    model.save_pretrained(moved)
    AutoTokenizer.from_pretrained(teacher).save_pretrained(moved)
    got = distil.label_pool(enc_pool, str(moved), tmp_path / "b")[DIST].to_numpy()
    assert np.allclose(got, want, atol=1e-6)


def test_a_teacher_without_nli_labels_and_an_empty_pool_are_refused(teacher, tiny_base, tmp_path):
    with pytest.raises(ValueError, match="empty"):
        distil.label_pool(_pool().iloc[:0], teacher, tmp_path)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    two = tmp_path / "two"
    AutoModelForSequenceClassification.from_pretrained(tiny_base, num_labels=2).save_pretrained(two)
    AutoTokenizer.from_pretrained(tiny_base).save_pretrained(two)
    with pytest.raises(ValueError, match="3-way NLI teacher"):
        distil.label_pool(_pool(), str(two), tmp_path / "x")


def test_a_student_learns_the_teachers_distribution(teacher, tiny_base, tmp_path):
    labelled = distil.label_pool(_pool(), teacher, tmp_path / "labels")
    frame = distil.student_frame(labelled, mix=toy_frame(8))
    assert frame["task"].value_counts().to_dict() == {"dist": 40, "3way": 8, "bin": 8, "reg": 8}
    dist_only = frame[frame["task"] == "dist"]
    cfg = cfg_for(tiny_base, tasks=("3way", "bin", "reg"), temperature=2.0, max_steps=50,
                  loss_weights={"3way": 1.0, "bin": 1.0, "reg": 1.0, "dist": 1.0})
    fresh, tok = pair_objective.build_model(tiny_base)
    before = pair_objective.frame_loss(fresh, tok, dist_only, 32, temperature=2.0)
    res = engine.train(frame, cfg, out_dir=False, progress=False, keep_model=True)
    after = pair_objective.frame_loss(res.model, res.tokenizer, dist_only, 32, temperature=2.0)
    assert after < 0.5 * before
    ev = pair_objective.evaluate_frame(res.model, res.tokenizer, dist_only, 32)
    assert ev["dist"]["rows"] == 40 and ev["dist"]["agreement"] >= 0.8 and ev["dist"]["kl"] >= 0


def test_the_student_frame_needs_a_labelled_pool():
    with pytest.raises(ValueError, match="label_pool"):
        distil.student_frame(_pool())


def test_a_pool_from_the_mirror_passes_the_leakage_filter_again_and_holds_no_pair_twice(data_dir):
    from tfc.data import training_mix
    from tfc.train.mix import _norm_pair

    leaky = toy_frame(2).assign(text_b="a woman is small .")
    pool, rep = distil.build_pool(leaky, sample=60, seed=1)
    assert set(pool["source"]) == {"pool/mix", "pool/wecheck_outputs", "pool/doc_sentence", "pool/doc_without_sentence"}
    assert rep["rows"] == len(pool) and rep["sha256"] == distil.pool_sha256(pool)
    assert not pd.Series([_norm_pair(a, b) for a, b in zip(pool["text_a"], pool["text_b"])]).duplicated().any()
    again = pd.DataFrame({"grounding": pool["text_a"], "generated": pool["text_b"], "dataset": "pool"})
    _, rep2 = training_mix([again[~pool["source"].eq("pool/mix")]])
    assert int(rep2[["removed_exact", "removed_near"]].to_numpy().sum()) == 0
    # the filter did remove WeCheck outputs that overlap an evaluation set
    wecheck = next(r for r in rep["leakage"] if r["source"] == "wecheck_dialogue")
    assert wecheck["n_out"] < wecheck["n_in"]


# --- the GPU job, end to end on the CPU with tiny models ------------------------------------------------

def test_volumes_cut_large_files_into_parts_and_join_them_back_or_name_what_is_missing(tmp_path):
    from tfc.runs import distil as R
    from tfc.runs import gpu as G

    src = tmp_path / "bundle"
    (src / "sub").mkdir(parents=True)
    rng = np.random.default_rng(0)
    (src / "big.bin").write_bytes(rng.bytes(int(2.5 * 2 ** 20)))
    (src / "sub" / "small.txt").write_text("hello")
    (src / "empty").write_bytes(b"")
    G._manifest(src, {"format": R.BUNDLE_FORMAT})
    vols = R.split_volumes(src, tmp_path / "vols", volume_bytes=2 ** 20)
    assert len(vols) == 3 and all(G.bundle_bytes(v) <= 2 ** 20 + 4096 for v in vols)   # 2.5 MiB in 3 parts
    man = R.gather(tmp_path / "vols", tmp_path / "joined")
    assert man["files"]["big.bin"]["sha256"] == G.sha256_file(src / "big.bin")
    assert (tmp_path / "joined" / "empty").read_bytes() == b""
    part = next((tmp_path / "vols" / "2").glob("big.bin.part*"))
    part.write_bytes(part.read_bytes()[:-1] + b"x")
    with pytest.raises(ValueError, match="sha256"):
        R.gather(tmp_path / "vols", tmp_path / "joined")
    __import__("shutil").rmtree(tmp_path / "vols" / "3")
    with pytest.raises(FileNotFoundError, match=r"volumes \[3\] of 3"):
        R.gather(tmp_path / "vols", tmp_path / "joined")


def test_the_distillation_job_runs_every_stage_and_its_student_unpacks(tiny_base, data_dir, tmp_path, monkeypatch):
    from tfc.runs import distil as R
    from tfc.runs import gpu as G
    from tfc.train.mix import save_mix

    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "artifacts"))
    save_mix(toy_frame(8), {"sha256": frames.frame_sha256(toy_frame(8))}, tmp_path / "artifacts" / "mixes" / "toy.parquet")
    plan = R.DistilPlan(teacher="tiny-teacher", student="tiny-student", teacher_base=tiny_base,
                        student_base=tiny_base, mix="toy.parquet", wecheck_cap=12, doc_cap=12, max_length=64)
    man = R.pack(plan, out=tmp_path / "bundle", volume_bytes=2 ** 20, sample=20)
    assert man["format"] == R.BUNDLE_FORMAT and man["pool_rows"] > 20 and len(man["volumes"]) >= 1
    log = []
    outs = R.job(tmp_path / "bundle-volumes", tmp_path / "work", device="cpu", smoke=True, log=log.append)
    stages = [__import__("json").loads(m)["stage"] for m in log]
    assert stages == ["teacher", "labels", "student", "exported"]
    teacher_exp, student_exp = (G.verify(o) for o in outs)
    assert not teacher_exp["weights"]["exported"] and student_exp["weights"]["exported"]
    # a second job finds every stage done
    log.clear()
    R.job(tmp_path / "bundle-volumes", tmp_path / "work", device="cpu", smoke=True, log=log.append)
    assert [__import__("json").loads(m)["stage"] for m in log] == ["labels", "exported"]
    repo = tmp_path / "repo"
    got = G.unpack(outs[1], repo=repo)
    assert got["variant"] == "tiny-student" and (repo / "artifacts" / "tiny-student" / "model.safetensors").is_file()
    rec = __import__("json").loads((repo / "results" / "models" / "tiny-student" / "recipe.json").read_text())
    assert rec["teacher"] == "tfc/tiny-teacher" and rec["temperature"] == 2.0 and rec["status"] == "record only"
    summary = __import__("json").loads((repo / "results" / "models" / "tiny-student" / "training_summary.json").read_text())
    assert summary["config"]["temperature"] == 2.0 and "dist" in summary["dev_eval"]
