"""``tfc evaluate``: meta-evaluate score columns of your own file against a binary label column.

For every score column, each with a percentile bootstrap interval over the rows and its rule stated in the
output (``rules`` in ``--json``, a "rules" block in the text):

* ROC AUC;
* PR-AUC of the inconsistent class (average precision, label 0 positive, ``-score`` the detector);
* balanced accuracy (BAcc) at a fixed threshold, ``--threshold`` (default 0.5, meant for probability scores:
  a column with scores outside [0, 1] then gets a warning on stderr and in ``warnings``; a threshold given
  explicitly outside a column's score range is an error);
* BAcc at a threshold tuned on ``--dev FILE`` (same label and score columns, both classes): max BAcc on the
  dev rows over the smallest distinct dev score, the midpoints between consecutive distinct dev scores and the
  largest; ties -> the smallest; frozen and applied to ``--input``, whose rows never enter the tuning;
* BAcc at the in-sample threshold (max sqrt(TPR * (1 - FPR)) on the input rows themselves: optimistic);
* expected calibration error with ``--bins`` equal-width bins over [0, 1] (probability scores only; skipped,
  with the reason, otherwise); ``--plot PATH.png`` writes a reliability diagram of those columns.

Every prediction is "consistent when score >= threshold". ``--group-col COL`` adds the metrics per value of
``COL`` (e.g. the dataset) and their macro-average (unweighted mean over groups), as LLM-AggreFact reports
them. Also a paired bootstrap comparison of the ROC AUCs of every two score columns. The computation is
:func:`tfc.results.own_eval.evaluate_frame` (``tfc.evaluate_frame``).
"""
from __future__ import annotations

import json

import click


@click.command()
@click.option("--input", "-i", "input_path", required=True,
              help="a scored file (.parquet .csv .tsv .jsonl .json) or a datasets directory")
@click.option("--label-col", required=True, help="binary label column: 1 (or true) = consistent, 0 = inconsistent")
@click.option("--score-cols", default=None,
              help="comma-separated score columns (default: those `tfc score` wrote, else every numeric column "
                   "except the label, the group column and *_aux_* columns)")
@click.option("--split", default=None, help="a split of a datasets directory")
@click.option("--threshold", type=float, default=None,
              help="fixed threshold for BAcc, consistent when score >= threshold (default 0.5, for probability "
                   "scores); an explicit one must lie within every score column's range")
@click.option("--dev", "dev_path", default=None,
              help="dev file (same label and score columns, both classes) to tune a BAcc threshold on, applied "
                   "frozen to --input")
@click.option("--group-col", default=None, help="column naming each row's group (e.g. dataset): per-group "
                                                "metrics and their macro-average")
@click.option("--bins", type=click.IntRange(min=1), default=10, show_default=True,
              help="equal-width bins over [0, 1] for the ECE and the reliability diagram")
@click.option("--plot", "plot_path", default=None, type=click.Path(dir_okay=False),
              help="write a reliability diagram (PNG) of the probability score columns here (replaced if present)")
@click.option("--n-boot", type=int, default=None, help="bootstrap resamples (default 1000, tfc.meta.DEFAULT_N)")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="1 - confidence level of the intervals")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")
def evaluate(input_path, label_col, score_cols, split, threshold, dev_path, group_col, bins, plot_path, n_boot,
             seed, alpha, as_json):
    """ROC AUC, PR-AUC of the inconsistent class, balanced accuracy at a fixed, a dev-tuned and an in-sample
    threshold, and ECE, each with a bootstrap interval (optionally per group with a macro-average); and a
    paired bootstrap comparison of every two score columns."""
    from tfc.results import own_eval, own_files, own_report

    try:
        df = own_files.read_table(input_path, split=split)
        dev = None if dev_path is None else own_files.read_table(dev_path)
        rep = own_eval.evaluate_frame(df, label_col, score_cols=score_cols, n_boot=n_boot, seed=seed, alpha=alpha,
                                      where=str(input_path), threshold=threshold, dev=dev,
                                      dev_where=f"dev file {dev_path}", group_col=group_col, bins=bins,
                                      plot=plot_path)
    except ValueError as exc:   # OwnFileError and tfc.meta's input checks
        raise click.ClickException(" ".join(str(exc).split())) from None
    for w in rep["warnings"]:
        click.echo(f"Warning: {w}", err=True)
    if as_json:
        click.echo(json.dumps({"input": str(input_path), **rep}, indent=1))
    else:
        click.echo(own_report.format_report(rep, str(input_path)))
