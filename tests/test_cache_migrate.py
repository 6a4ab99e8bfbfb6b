"""tfc cache migrate: caches written under an earlier configuration schema move to today's signatures."""
import json
import shutil

import pandas as pd
import pytest

from tfc import cache, config
from tfc import scorers as S
from tfc.cache import migrate as M


def _write(root, signature, scorer, cfg, scores=(0.25, 0.75), dataset="frank", split="dev", **extra):
    c = cache.ScoreCache(signature, dataset, split, root=root)
    df = pd.DataFrame({"id": ["a", "b"][:len(scores)], "score": list(scores)})
    df["input_sha"] = [cache.input_sha(f"g{i}", f"h{i}") for i in df["id"]]
    c.write_part(df)
    c.compact({"name": scorer, "output_range": [0, 1], "config": cfg}, wall_seconds=1.0, device="cpu", dtype="float32")
    side = json.loads(c.sidecar.read_text())
    side.update(extra)
    c.sidecar.write_text(json.dumps(side))
    return c


def test_a_sidecar_from_before_a_field_existed_moves_to_its_signature(tmp_path):
    """A rougeL sidecar without the fields added later (tokenizer, beta, normalize) and a Q² sidecar with the old
    field names (qa_checkpoint, no_valid_score) land under the signatures their configurations have today."""
    old_rouge = {k: v for k, v in S.get("rougeL", preset="as-published").config.to_dict().items()
                 if k not in ("tokenizer", "beta", "normalize")}
    then = {"candidate_rule": "tfc", "steps": "tfc", "q_per_candidate": "multi", "no_questions": "zero"}
    q2 = S.get("q2", preset="as-published", checkpoint="some/qa", nli_checkpoint="some/nli").config.to_dict()
    old_q2 = {**{k: v for k, v in q2.items() if k not in ("checkpoint", *then)},
              "qa_checkpoint": "some/qa", "checkpoint": "some/qa", "no_valid_score": 0.0}
    _write(tmp_path, "rougeL.0000000000", "rougeL", old_rouge)
    _write(tmp_path, "q2.rule-em-nli.1111111111", "q2", old_q2, dataset="begin")
    _write(tmp_path, "q2.zz-derived.2222222222", "q2", old_q2, dataset="begin",
           derived_from={"signature": "q2.rule-em-nli.1111111111", "note": "test"})
    rep = M.migrate(tmp_path)
    want_rouge = S.get("rougeL", preset="as-published").signature
    want_q2 = S.get("q2", preset="as-published", checkpoint="some/qa", nli_checkpoint="some/nli", **then).signature
    assert {(e["from"], e["to"]) for e in rep.moved} >= {("rougeL.0000000000", want_rouge),
                                                           ("q2.rule-em-nli.1111111111", want_q2)}
    got = cache.ScoreCache(want_rouge, "frank", "dev", root=tmp_path).read()
    assert got.sort_values("id")["score"].tolist() == [0.25, 0.75]          # the scores are not touched
    side = json.loads((tmp_path / want_q2 / "begin" / "dev.json").read_text())
    assert side["signature"] == want_q2 and side["migrated_from"] == "q2.rule-em-nli.1111111111"
    assert "qa_checkpoint" not in side["config"] and side["config"]["checkpoint"] == "some/qa"
    assert side["config"]["candidate_rule"] == "tfc"                      # absent -> the value it had
    assert not (tmp_path / "rougeL.0000000000").exists()
    # the derived cache is the same configuration: a duplicate of the moved one, removed
    assert [(e["from"], e["to"]) for e in rep.duplicates] == [("q2.zz-derived.2222222222", want_q2)]
    again = M.migrate(tmp_path)                                             # idempotent
    assert again.moved == [] and again.duplicates == [] and again.unchanged == 2


def test_a_conflict_keeps_both_and_a_meaningless_old_value_is_refused(tmp_path):
    cfg = S.get("rougeL", preset="as-published").config.to_dict()
    sig = S.get("rougeL", preset="as-published").signature
    _write(tmp_path, sig, "rougeL", cfg, scores=(0.1, 0.2))
    _write(tmp_path, "rougeL.3333333333", "rougeL", cfg, scores=(0.9, 0.8))
    rep = M.migrate(tmp_path)
    assert [(e["from"], e["to"]) for e in rep.conflicts] == [("rougeL.3333333333", sig)]
    assert (tmp_path / "rougeL.3333333333").is_dir()
    with pytest.raises(M.MigrationError, match="no_valid_score"):
        M.current_config("q2", {"no_valid_score": None})
    with pytest.raises(M.MigrationError, match="disagree"):
        M.current_config("qags", {"qa_checkpoint": "a", "checkpoint": "b"})


def test_the_committed_caches_are_all_under_their_signatures():
    """Every committed sidecar rebuilds to its directory's signature: nothing is left to migrate."""
    root = config.REPO_ROOT / "results" / "scores"
    if not root.is_dir():
        pytest.skip("no committed caches")
    sides = sorted(root.glob("*/*/*.json"))
    assert sides
    for p in sides:
        meta = json.loads(p.read_text())
        if str(meta["scorer"]).startswith("imported"):
            continue
        assert S.from_config(meta["scorer"], meta["config"]).signature == meta["signature"] == p.parts[-3], p


def test_the_migration_of_a_copy_of_the_committed_caches_moves_nothing(tmp_path):
    root = config.REPO_ROOT / "results" / "scores"
    if not root.is_dir():
        pytest.skip("no committed caches")
    for side in sorted(root.glob("*/*/*.json"))[:40]:
        dst = tmp_path / side.relative_to(root)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(side, dst)
        shutil.copy2(side.with_suffix(".parquet"), dst.with_suffix(".parquet"))
    rep = M.migrate(tmp_path, dry_run=True)
    assert rep.moved == [] and rep.conflicts == [] and rep.unchanged == len(list(tmp_path.glob("*/*/*.json")))


def test_a_calibration_map_follows_its_raw_configuration(tmp_path):
    """A shipped map records its raw scorer's configuration; written before a field existed, it is pointed at the
    signature that configuration has today, its coefficients and manifest kept whole; a map without the record is
    refused."""
    from tfc.models import release
    from tfc.scorers import calibration as C

    raw = S.get("wecheck", preset="as-published", checkpoint="some/wecheck", long_grounding="chunk")
    old_cfg = {k: v for k, v in raw.config.to_dict().items() if k != "long_grounding"}
    m = {"method": "platt", "feature": "logit", "a": 0.5, "b": -0.25, "raw_signature": "wecheck.x-doc.0000000000",
         "raw_scorer": "wecheck", "raw_config": old_cfg}
    C.write(m, "cal-test", out_root=tmp_path)
    assert M.migrate_calibrations(tmp_path, dry_run=True) == [
        {"map": "cal-test", "from": "wecheck.x-doc.0000000000", "to": raw.signature}]
    M.migrate_calibrations(tmp_path)
    release.verify(tmp_path / "cal-test")
    got = json.loads((tmp_path / "cal-test" / C.FILE).read_text())
    assert got["raw_signature"] == raw.signature and got["raw_config"]["long_grounding"] == "chunk"
    assert (got["a"], got["b"]) == (0.5, -0.25) and M.migrate_calibrations(tmp_path) == []
    C.write({k: v for k, v in m.items() if k != "raw_config"}, "cal-test", out_root=tmp_path)
    with pytest.raises(M.MigrationError, match="raw configuration"):
        M.migrate_calibrations(tmp_path)


def test_the_shipped_maps_and_references_need_no_migration():
    assert M.migrate_calibrations(dry_run=True) == [] and M.migrate_references(dry_run=True) == []


def test_an_ensemble_reference_is_rekeyed_and_records_are_rewritten(tmp_path):
    import tempfile
    from pathlib import Path

    from tfc.models import release
    from tfc.scorers import ensemble as E

    q2 = S.get("q2")
    old = {k: v for k, v in q2.config.to_dict().items() if k not in ("steps", "q_per_candidate")}
    ref = {"members": {"q2.rule-em.0000000000": {"name": "q2", "config": old, "scores": [0.0, 0.5, 1.0]}}, "rows": 3}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / E.REFERENCE_FILE).write_text(json.dumps(ref))
        release.pack_files(tmp, "ref-test", out_root=tmp_path)
    assert M.migrate_references(tmp_path) == [{"reference": "ref-test", "from": "q2.rule-em.0000000000",
                                              "to": q2.signature}]
    got = json.loads((tmp_path / "ref-test" / E.REFERENCE_FILE).read_text())
    assert list(got["members"]) == [q2.signature] and got["members"][q2.signature]["scores"] == [0.0, 0.5, 1.0]
    records = tmp_path / "records"
    (records / "m").mkdir(parents=True)
    (records / "m" / "scoring_runs.json").write_text('{"signature": "q2.rule-em.0000000000", "other": "q2.rule-em.00"}')
    (records / "m" / "README.md").write_text("nothing here")
    assert M.rewrite_records({"q2.rule-em.0000000000": q2.signature}, records) == ["m/scoring_runs.json"]
    assert json.loads((records / "m" / "scoring_runs.json").read_text()) == {"signature": q2.signature,
                                                                             "other": "q2.rule-em.00"}
