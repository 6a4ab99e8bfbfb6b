"""``tfc book run|build|values``: execute the notebooks, build the HTML, dump the glue values."""
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
def run_cmd(mode, only, checkpoint, device, output_dir):
    """Execute notebooks into book/generated/ with the mode's parameters."""
    try:
        run_notebooks(mode, list(only) or None, {"checkpoint": checkpoint, "device": device}, output_dir,
                      log=click.echo)
    except ValueError as exc:   # an unknown --only stem
        raise click.BadParameter(str(exc), param_hint="--only") from exc


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
