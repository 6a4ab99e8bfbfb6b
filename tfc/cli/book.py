"""``tfc book run|build|values|cards``: execute the notebooks, build the HTML, dump the glue values, render the scorer
cards."""
from __future__ import annotations

import json
from pathlib import Path

import click

from tfc.book.runner import GENERATED_DIR, MODES, build_html, compare_values, glue_values, run_notebooks


@click.group()
def book():
    """Execute the notebooks (papermill) and build the book (Jupyter Book)."""


@book.command("run")
@click.option("--mode", type=click.Choice(sorted(MODES)), default="default", show_default=True)
@click.option("--only", multiple=True, help="notebook stem(s) to run, e.g. 02_true_auc")
@click.option("--checkpoint", default=None, help="checkpoint (hub id or directory) passed to the notebooks")
@click.option("--device", default=None, help="cpu, cuda, ...")
@click.option("--output-dir", type=click.Path(path_type=Path), default=GENERATED_DIR, show_default=True)
@click.option("--no-cards", is_flag=True, help="do not render the scorer cards (book/scorers/*.md) afterwards")
def run_cmd(mode, only, checkpoint, device, output_dir, no_cards):
    """Execute notebooks into book/generated/ with the mode's parameters, then render the scorer cards from the
    ledger the chapters wrote (so the book's cards show this run's values; only for the book's own output folder,
    since the cards are the book's pages)."""
    try:
        run_notebooks(mode, list(only) or None, {"checkpoint": checkpoint, "device": device}, output_dir,
                      log=click.echo)
    except ValueError as exc:   # an unknown --only stem
        raise click.BadParameter(str(exc), param_hint="--only") from exc
    if no_cards:
        return
    ledger_dir = Path(output_dir) / "_ledger"
    if Path(output_dir).resolve() != GENERATED_DIR.resolve():
        click.echo(f"[tfc book] scorer cards left as they are (--output-dir is not the book's); "
                   f"`tfc book cards --ledger-dir {ledger_dir}` renders them from this run")
        return
    from tfc.book.cards import render_all

    render_all(ledger_dir=ledger_dir, log=click.echo)


@book.command("cards")
@click.option("--family", "families", multiple=True, help="card(s) to render, e.g. nli (default: all)")
@click.option("--ledger-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="the ledger to read (default: $TFC_LEDGER_DIR or book/generated/_ledger)")
@click.option("--out-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="where the cards go (default: book/scorers)")
def cards_cmd(families, ledger_dir, out_dir):
    """Render the scorer cards (book/scorers/<family>.md) from their templates: run each default on the example
    pairs, read the dev-sweep records and the reproduction ledger."""
    from tfc.book import cards

    unknown = set(families) - set(cards.FAMILIES)
    if unknown:
        raise click.BadParameter(f"unknown card(s) {sorted(unknown)}; known: {', '.join(cards.FAMILIES)}",
                                 param_hint="--family")
    cards.render_all(list(families) or None, ledger_dir, out_dir or cards.CARDS_DIR, log=click.echo)


@book.command("values")
@click.option("--generated", type=click.Path(path_type=Path, file_okay=False), default=GENERATED_DIR,
              show_default=True, help="folder of executed notebooks")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="write the JSON here instead of standard output")
@click.option("--against", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
              help="an earlier dump: print the differences and exit 1 when there are any")
def values_cmd(generated, out, against):
    """Dump every glue value of the executed notebooks (to compare two builds)."""
    values = glue_values(generated)
    text = json.dumps(values, indent=1, sort_keys=True)
    if out is not None:
        Path(out).write_text(text + "\n")
    elif against is None:
        click.echo(text)
    if against is not None:
        diff = compare_values(json.loads(Path(against).read_text()), values)
        click.echo("\n".join(diff) if diff else f"identical: {len(values)} glue values")
        raise SystemExit(1 if diff else 0)


@book.command("build")
@click.option("--no-strict", is_flag=True, help="do not treat warnings as errors")
def build_cmd(no_strict):
    """Build the HTML from book/ (execution off)."""
    click.echo(build_html(strict=not no_strict) / "index.html")


@book.command("recipes")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="where the page goes (default: book/retraining.md)")
def recipes_cmd(out):
    """Regenerate the retraining page (book/retraining.md) from the model records under results/models."""
    from tfc.book import recipes

    click.echo(recipes.write(out))


@book.command("log")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="where the page goes (default: book/experiment_log.md)")
def log_cmd(out):
    """Regenerate the experiment log (book/experiment_log.md) from the records under results/models."""
    from tfc.book import experiment_log

    click.echo(experiment_log.write(out))
