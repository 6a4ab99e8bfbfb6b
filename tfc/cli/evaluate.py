"""``tfc evaluate``: meta-evaluate score columns of your own file against a binary label column."""
from __future__ import annotations

import json

import click


@click.command()
@click.option("--input", "-i", "input_path", required=True,
              help="a scored file (.parquet .csv .tsv .jsonl .json) or a datasets directory")
@click.option("--label-col", required=True, help="binary label column: 1 (or true) = consistent, 0 = inconsistent")
@click.option("--score-cols", default=None,
              help="comma-separated score columns (default: those `tfc score` wrote, else every numeric column "
                   "except the label and *_aux_* columns)")
@click.option("--split", default=None, help="a split of a datasets directory")
@click.option("--n-boot", type=int, default=None, help="bootstrap resamples (default 1000, tfc.meta.DEFAULT_N)")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="1 - confidence level of the intervals")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")
def evaluate(input_path, label_col, score_cols, split, n_boot, seed, alpha, as_json):
    """ROC AUC with a bootstrap interval, balanced accuracy at a tuned threshold, and a paired bootstrap
    comparison of every two score columns."""
    from tfc.results import own_files as O

    try:
        df = O.read_table(input_path, split=split)
        rep = O.evaluate_frame(df, label_col, score_cols=score_cols, n_boot=n_boot, seed=seed, alpha=alpha,
                               where=str(input_path))
    except ValueError as exc:   # OwnFileError and tfc.meta's input checks
        raise click.ClickException(" ".join(str(exc).split())) from None
    if as_json:
        click.echo(json.dumps({"input": str(input_path), **rep}, indent=1))
    else:
        click.echo(O.format_report(rep, str(input_path)))
