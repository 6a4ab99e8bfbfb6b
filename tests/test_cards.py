"""The scorer cards (tfc.book.cards): rendered from templates, every placeholder filled, every section present,
every number computed (the model output stubbed here: no model is loaded)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import yaml

from tfc import scorers as S
from tfc.book import card_citation, cards, ledger, reference

STUB = np.array([0.125, 0.875])
# a number typed into prose: digits not glued to a word (``bleu4``, ``TRUE-T9``, ``v8`` and ``T5-11B`` are names)
_TYPED_NUMBER = re.compile(r"(?<![\w.\-])\d+(?:\.\d+)?(?![\w])")


@pytest.fixture
def stubbed(monkeypatch):
    """Every default "runs" (no model loads: the example output is STUB) and no readings are recorded."""
    monkeypatch.setattr(cards, "unshipped", lambda name: [])
    monkeypatch.setattr(cards, "run_example", lambda name, g, h, **kw: STUB[: len(g)])
    from tfc.runs import readings

    monkeypatch.setattr(readings, "recorded", lambda checkpoint: None)
    return monkeypatch


def readable_num(v: float) -> str:
    """A whole number as the cards' tables print it (the minus sign included)."""
    from tfc.book import readable

    return readable.cell_text(v, 0, whole=True)


def _f1_record(ledger_dir):
    """One reproduction cell of TRUE-T3 (FRANK, token F1) recorded in a private ledger: paper + 1.234."""
    paper = reference.value("TRUE-T3", "frank", "f1")
    frame = pd.DataFrame({"table": ["TRUE-T3"], "row": ["frank"], "column": ["f1"], "paper": [paper],
                          "ours": [paper + 1.234], "signature": [S.get("f1", preset="as-published").signature]})
    ledger.record(frame, chapter="02_true_auc", mode="default")
    return paper


def test_every_card_fills_every_placeholder_and_has_every_section(stubbed, ledger_dir, tmp_path):
    paper = _f1_record(ledger_dir)
    written = cards.render_all(ledger_dir=ledger_dir, out_dir=tmp_path, log=lambda *_: None)
    assert [p.stem for p in written] == list(cards.FAMILIES)
    for path in written:
        text = path.read_text()
        assert cards.placeholders(text) == [] and "{{" not in text, path.name
        heads = [line[3:].strip() for line in text.splitlines() if line.startswith("## ")]
        assert [h for h in heads if h in cards.SECTIONS] == list(cards.SECTIONS), (path.name, heads)
        assert repr(np.round(STUB, cards.DIGITS)) in text, path.name          # the example output, as printed
        assert str(cards.THRESHOLD) in text, path.name                        # the Output section's threshold
    lexical = (tmp_path / "lexical.md").read_text()
    row = next(line for line in lexical.splitlines() if line.startswith("| `TRUE-T3` | `frank` | `f1`"))
    assert f"{paper:.3f}" in row and f"{paper + 1.234:.3f}" in row and "1.234" in row and "within" not in row


def test_the_output_and_inputs_sections_are_computed(stubbed, ledger_dir):
    text = cards.render("summac", ledger_dir)
    zs = S.get("summac-zs")
    lo, hi, empty = (readable_num(v) for v in (*zs.output_range, zs.empty_score))
    assert f"| `summac-zs` | {lo} | {hi} | {empty} |" in text
    assert f"`{S.get('summac-zs').config.batch_size}` for this default" in text
    for error in ("TypeError: groundings[0] is None", "TypeError: groundings[0] is int", "ValueError: groundings and"):
        assert error in text



def test_defaults_and_config_tables_come_from_the_registry(stubbed, ledger_dir):
    text = cards.render("nli", ledger_dir)
    default, published = S.get("nli").config.checkpoint, S.get("nli", preset="as-published").config.checkpoint
    assert f"| `nli` | `checkpoint` | `{published}` | `{default}` |" in text
    assert f"`{S.get('nli').signature}`" in text
    assert f"| `min_chunk_tokens` | `{S.get('nli').config.min_chunk_tokens}` |" in text


def test_a_missing_record_reads_not_recorded_and_a_recorded_sweep_shows_its_aucs(stubbed, ledger_dir):
    from tfc.runs import readings

    assert f"*{cards.NOT_RECORDED}*" in cards.render("alignscore", ledger_dir)
    table = [{"scorer": "alignscore", "reading": r, "dev set": d, "rows": 10, "positives": 5,
              "auc": 60 + i + 0.25 * (j + 1), "seconds": 1.0}
             for i, r in enumerate(readings.READINGS["alignscore"]) for j, d in enumerate(readings.DEV_SETS)]
    rec = {"checkpoint": S.get("alignscore").config.checkpoint, "rows_per_set": 10, "seed": 1, "margin": 0.5,
           "dev_sets": {d: {"rows": 10, "positives": 5, "median_grounding_words": 41.0} for d in readings.DEV_SETS},
           "chosen": {"alignscore": "chunks of 100 words"}, "table": table}
    stubbed.setattr(readings, "recorded", lambda checkpoint: rec)
    text = cards.render("alignscore", ledger_dir)
    assert f"*{cards.NOT_RECORDED}*" not in text
    chosen = next(line for line in text.splitlines() if line.startswith("| chunks of 100 words |"))
    assert "61.250" in chosen and "61.625" in chosen and "✓" in chosen        # an AUC, the mean, and the choice
    assert "| 41 |" in text                                                    # the dev set's median words


def test_a_default_whose_weights_are_not_shipped_renders_a_note(monkeypatch, ledger_dir):
    monkeypatch.setattr(cards, "unshipped", lambda name: ["tfc/not-shipped"])
    monkeypatch.setattr(cards, "run_example", lambda *a: pytest.fail("must not run"))
    out = cards.how_to_use(cards.Context("nli", ("nli",), ledger.collected(ledger_dir), ledger_dir), "")
    assert cards.NOT_SHIPPED.format(missing="tfc/not-shipped") in out


def test_unshipped_names_the_in_house_checkpoints_without_a_release():
    from tfc.models import release

    for name in S.names():
        want = [c for c in cards.tfc_checkpoints(S.get(name)) if not release.available(c[4:])]
        assert cards.unshipped(name) == want
    assert all(c.startswith("tfc/") for c in cards.tfc_checkpoints(S.get("ensemble")))


def test_citations_are_built_from_citation_cff():
    cff = {r["title"]: r for r in yaml.safe_load(card_citation.CITATION_CFF.read_text())["references"]}
    refs = card_citation.references()
    for rid in ("true", "qags", "q2", "alignscore", "wecheck"):
        ref = refs[rid]
        assert cff[ref["title"]] is ref or cff[ref["title"]] == ref
        entry = card_citation.bibtex(rid, ref)
        assert f"year = {{{ref['year']}}}" in entry and f"doi = {{{ref['doi']}}}" in entry
    assert "pages = {" + f"{refs['true']['start']}--{refs['true']['end']}" + "}" in card_citation.bibtex("true", refs["true"])
    assert card_citation.bibtex("summac", refs["summac"]).startswith("@article{")


def test_templates_hold_no_typed_numbers_and_name_every_section():
    for family in cards.FAMILIES:
        text = cards.template(family)
        prose = cards._PLACEHOLDER.sub("", text)
        prose = re.sub(r"(?m)^\s*\d+\.\s", "", prose)              # ordered-list markers are not numbers
        assert _TYPED_NUMBER.findall(prose) == [], (family, _TYPED_NUMBER.findall(prose))
        for section in cards.SECTIONS:
            assert f"\n## {section}\n" in text, (family, section)
        for key, _ in cards.placeholders(text):
            assert key in cards.HANDLERS, (family, key)


def test_the_toc_and_the_index_point_at_every_card():
    toc = yaml.safe_load(cards.TOC.read_text())
    files = [s["file"] for part in toc["parts"] for ch in part["chapters"] for s in ch.get("sections", [])]
    assert [f for f in files if f.startswith("scorers/")] == [f"scorers/{f}" for f in cards.FAMILIES]
    index = (cards.CARDS_DIR / "index.md").read_text()
    assert "```{tableofcontents}" in index
    for family in cards.FAMILIES:
        assert (cards.TEMPLATE_DIR / f"{family}.md").is_file()


def test_the_committed_cards_are_rendered():
    for family in cards.FAMILIES:
        text = (cards.CARDS_DIR / f"{family}.md").read_text()
        assert text.startswith(cards.GENERATED.format(family=family))
        assert "{{" not in text, family
        for section in cards.SECTIONS:
            assert f"\n## {section}\n" in text, (family, section)


def test_tfc_book_cards_renders_the_named_cards(stubbed, ledger_dir, tmp_path):
    from click.testing import CliRunner

    from tfc.cli.book import book

    res = CliRunner().invoke(book, ["cards", "--family", "lexical", "--ledger-dir", str(ledger_dir),
                                    "--out-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert [p.name for p in tmp_path.iterdir()] == ["lexical.md"]
    assert CliRunner().invoke(book, ["cards", "--family", "nope", "--out-dir", str(tmp_path)]).exit_code != 0


def test_tfc_book_run_renders_the_cards_only_for_the_books_own_output(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from tfc.book.runner import GENERATED_DIR
    from tfc.cli import book as cli_book

    calls = []
    monkeypatch.setattr(cli_book, "run_notebooks", lambda *a, **k: [])
    monkeypatch.setattr(cards, "render_all", lambda **k: calls.append(k["ledger_dir"]))
    run = CliRunner()
    assert run.invoke(cli_book.book, ["run", "--output-dir", str(tmp_path)]).exit_code == 0
    assert calls == []                                       # a test's or a side build's ledger never writes the cards
    assert run.invoke(cli_book.book, ["run", "--no-cards"]).exit_code == 0 and calls == []
    assert run.invoke(cli_book.book, ["run"]).exit_code == 0
    assert calls == [GENERATED_DIR / "_ledger"]


def test_the_as_published_call_names_the_shipped_checkpoint_of_each_unshipped_field():
    from tfc import scorers
    from tfc.book import card_presets

    assert card_presets.shipped_swaps("q2") == ({"checkpoint": scorers.SHIPPED_QA,
                                                 "nli_checkpoint": scorers.SHIPPED_NLI}, [])
    assert card_presets.shipped_swaps("nli") == ({"checkpoint": scorers.SHIPPED_NLI}, [])
    assert card_presets.shipped_swaps("bertscore") == ({}, [])          # nothing in-house to swap
    # summac-conv's as-published head is shipped: only its NLI model is swapped
    swaps, missing = card_presets.shipped_swaps("summac-conv")
    assert set(swaps) <= {"checkpoint"} and not missing
    # every swapped call builds: the preset with the shipped weights named has no unshipped checkpoint left
    for name in ("nli", "summac-zs", "alignscore", "wecheck", "qags", "q2"):
        swaps, missing = card_presets.shipped_swaps(name)
        assert not missing
        cfg = scorers.get(name, preset="as-published", **swaps).config.to_dict()
        assert all(card_presets._available(v) is not False for k, v in cfg.items() if k.endswith("checkpoint"))


def test_the_as_published_paragraph_prints_the_call_and_its_output(stubbed):
    from tfc.book import card_presets

    calls = []
    stubbed.setattr(cards, "run_example", lambda name, g, h, **kw: calls.append(kw) or STUB[: len(g)])
    ctx = cards.Context("q2", ("q2",), pd.DataFrame(), cards.CARDS_DIR)
    text = cards.as_published(ctx, "")
    assert calls == [{"preset": "as-published", **card_presets.shipped_swaps("q2")[0]}]
    assert 'scorers.get("q2", preset="as-published",' in text and repr(np.round(STUB, cards.DIGITS)) in text
    # a checkpoint without a shipped stand-in: the note, and nothing runs
    stubbed.setattr(card_presets, "shipped_swaps", lambda name: ({}, ["tfc/not-shipped"]))
    assert cards.NOT_SHIPPED.format(missing="tfc/not-shipped") in cards.as_published(ctx, "")
    assert len(calls) == 1
