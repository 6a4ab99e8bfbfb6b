"""book/experiment_log.md: generated from the model records (tfc.book.experiment_log, `tfc book log`)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tfc import config
from tfc.book import experiment_log as log
from tfc.book import recipes

ROOT = Path(__file__).resolve().parent.parent
HISTORY_WORDS = re.compile(r"\b(sessions?|leases?|device calls?|issues?|bars?)\b", flags=re.I)


def _row(page: str, folder: str) -> str:
    """The first table row of one model (its row in its family's run table)."""
    return next(line for line in page.splitlines() if line.startswith(f"| {{ref}}`tfc/{folder} ")
                or line.startswith(f"| `tfc/{folder}`"))


def test_committed_page_is_current():
    """book/experiment_log.md is what `tfc book log` writes from the records (run it after changing a record)."""
    assert (ROOT / "book" / "experiment_log.md").read_text() == log.render(), \
        "book/experiment_log.md is stale: run `tfc book log`"


def test_every_record_folder_appears_once_in_the_run_tables():
    page = log.render()
    folders = [p.name for p in config.model_records_dir().iterdir() if p.is_dir()]
    assert folders
    for folder in folders:
        name = re.escape(folder)
        rows = [line for line in page.splitlines()
                if re.match(rf"^\| (\{{ref\}}`tfc/{name} <|`tfc/{name}` ).*\| (shipped|record only) \|$", line)]
        assert len(rows) == 1, folder
        shipped = (config.REPO_ROOT / "results" / "release" / folder).is_dir()
        assert rows[0].endswith("| shipped |" if shipped else "| record only |"), folder


def test_links_point_at_recipe_anchors_that_exist():
    page, retraining = log.render(), recipes.render()
    targets = set(re.findall(r"\{ref\}`[^`<]*<([^>]+)>`", page))
    assert targets
    for t in targets:
        assert retraining.count(f"({t})=") == 1, t


def test_numbers_equal_the_records():
    page = log.render()
    nli = json.loads((config.model_records_dir() / "nli-minilm" / "training_summary.json").read_text())
    assert f"3way accuracy {nli['dev_eval']['3way']['accuracy']:.3f}" in _row(page, "nli-minilm")
    qa = json.loads((config.model_records_dir() / "qa-minilm" / "training_summary.json").read_text())
    assert f"heldout f1 {qa['dev_eval']['heldout']['f1']:.3f}" in _row(page, "qa-minilm")
    # the mean TRUE AUC of the shipped sentence model's full-set reading, from its training summary
    v8 = json.loads((config.model_records_dir() / "sent-minilm-v8-int8" / "training_summary.json").read_text())
    full = v8["eval_results"]["true_full_sets"]
    mean = sum(r["auc"] for r in full) / len(full)
    sig = full[0]["signature"]
    rows = [line for line in page.splitlines() if f"`{sig}`" in line]
    assert rows and all(f"| {mean:.2f} |" in r for r in rows)


def test_drift_is_read_from_the_release_drift_record():
    path = config.model_records_dir() / "sent-minilm-v8-int8" / "release_drift.json"
    if not path.is_file():
        pytest.skip("no release_drift.json for tfc/sent-minilm-v8-int8")
    d = json.loads(path.read_text())
    row = next(line for line in log.render().splitlines()
               if line.startswith("| {ref}`tfc/sent-minilm-v8-int8 ") and "| `tfc/sent-minilm-v8` |" in line)
    assert f"| {d['max_abs_diff']:.4f} | {d['max_abs_auc_diff']:.3f} |" in row


def test_the_page_has_no_history_words():
    page = log.render()
    assert not HISTORY_WORDS.findall(page), sorted(set(HISTORY_WORDS.findall(page)))
    gpu = recipes.render().split("## On a GPU machine", 1)[1].split("\n## ", 1)[0]
    assert not HISTORY_WORDS.findall(gpu)


def test_labels_are_unique():
    page = log.render()
    labels = re.findall(r"^\(([^)]+)\)=$", page, flags=re.M)
    assert labels and len(labels) == len(set(labels))


def test_order_and_families_follow_the_records(tmp_path):
    records, releases = tmp_path / "models", tmp_path / "release"
    for name, date, base in (("sent-b", "2026-01-03T00:00:00Z", "minilm"), ("sent-a", "2026-01-02T00:00:00Z", "x")):
        d = records / name
        d.mkdir(parents=True)
        (d / "training_summary.json").write_text(json.dumps(
            {"created_utc": date, "config": {"base": base, "lr": 1e-4}, "mix_report": {"kind": "sentence"},
             "dev_eval": {"3way": {"rows": 10, "accuracy": 0.5}}}))
    (records / "calibration-x").mkdir()
    (records / "calibration-x" / "calibration_record.json").write_text(json.dumps(
        {"map": {"method": "platt", "feature": "logit", "raw_signature": "s.x"}, "recorded": "2026-01-01T00:00:00Z",
         "dev": {"rows": 5, "auc": 60.0, "ece_before": 0.2, "ece_after": 0.1}}))
    (releases / "sent-b").mkdir(parents=True)
    page = log.render(records, releases)
    assert page.index("`tfc/sent-a") < page.index("`tfc/sent-b") < page.index("`tfc/calibration-x`")
    assert "against `tfc/sent-a`: base: x → minilm" in _row(page, "sent-b")
    assert _row(page, "sent-b").endswith("| shipped |") and _row(page, "sent-a").endswith("| record only |")


def test_tfc_book_log_writes_the_page(tmp_path):
    from click.testing import CliRunner

    from tfc.cli import main

    out = tmp_path / "page.md"
    r = CliRunner().invoke(main, ["book", "log", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text() == log.render()


def test_the_page_is_in_the_book_next_to_the_retraining_page():
    toc = (ROOT / "book" / "_toc.yml").read_text()
    assert re.search(r"^\s*- file: retraining\n\s*- file: experiment_log\s*$", toc, flags=re.M)
