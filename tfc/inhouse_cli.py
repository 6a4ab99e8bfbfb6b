"""``tfc train score-inhouse`` and ``tfc train reproduce``: rescoring (and retraining) the in-house checkpoints.

Attached to the ``tfc train`` group through :mod:`tfc.train.cli_inhouse`; light at import (click only).
"""
from __future__ import annotations

import click


@click.command("score-inhouse")
@click.argument("plans", nargs=-1)
@click.option("--threads", type=int, default=None, help="torch CPU threads")
@click.option("--batch-size", type=int, default=None)
@click.option("--dataset", "datasets", multiple=True, help="only these datasets (repeatable)")
@click.option("--split", default=None, help="only this split (datasets without it are skipped)")
def score_inhouse_cmd(plans, threads, batch_size, datasets, split):
    """Score the in-house checkpoints through the cache and record each run (tfc.inhouse.plans).

    PLANS: any of nli-true, nli-summac, alignscore-true, alignscore-summac, alignscore-split-ablation
    (default: all). Resumable: cached rows are not recomputed; run records go to
    results/models/<name>/scoring_runs.json.
    """
    from tfc import inhouse

    known = list(inhouse.plans())
    bad = [p for p in plans if p not in known]
    if bad:
        raise click.BadParameter(f"unknown plan(s) {bad}; known: {', '.join(known)}")
    for plan in plans or known:
        click.echo(f"[score-inhouse] {plan}")
        inhouse.run_plan(plan, threads=threads, batch_size=batch_size, log=click.echo,
                         datasets=set(datasets) or None, split=split)


@click.command("reproduce")
@click.option("--device", default=None, help="cpu or cuda (default: TFC_DEVICE, else cuda if present)")
@click.option("--threads", type=int, default=None, help="torch CPU threads")
@click.option("--skip-training", is_flag=True, help="only rescore (the checkpoints must be installed)")
@click.pass_context
def reproduce_cmd(ctx, device, threads, skip_training):
    """Retrain tfc/nli-minilm and tfc/alignscore-minilm, write their records (results/models/), and rescore
    every plan of `tfc train score-inhouse` into the cache. A retrained checkpoint has a new identity, so
    its scores land under new signatures beside the committed ones."""
    from tfc import inhouse, models
    from tfc.train.cli_inhouse import alignscore_cmd, nli_cmd

    if not skip_training:
        for name, cmd in (("nli-minilm", nli_cmd), ("alignscore-minilm", alignscore_cmd)):
            # the committed record's settings; a run that stopped on its time budget is repeated with its
            # step count (deterministic) instead of the budget (machine-dependent)
            try:
                cfg = models.training_record(f"tfc/{name}")
                steps, c = cfg.get("steps"), cfg.get("config", {})
            except FileNotFoundError:
                steps, c = None, {}
            click.echo(f"[reproduce] training tfc/{name} ({steps or 'default'} steps)")
            ctx.invoke(cmd, base=c.get("base", "minilm"), max_minutes=None, max_steps=steps or c.get("max_steps"),
                       batch_size=c.get("batch_size"), grad_accum=c.get("grad_accum"), max_length=c.get("max_length"),
                       lr=c.get("lr"), device=device, seed=c.get("seed"), threads=threads or c.get("num_threads"),
                       sample=None, synthetic=None, out=None, name=None, mix_file=None, save_dtype=None)
    for name in ("nli-minilm", "alignscore-minilm"):
        click.echo(f"record: {inhouse.write_record(name, retrain=name.split('-')[0])}")
    ctx.invoke(score_inhouse_cmd, plans=(), threads=threads, batch_size=None, datasets=(), split=None)


COMMANDS = (score_inhouse_cmd, reproduce_cmd)
