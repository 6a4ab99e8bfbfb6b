"""``tfc train wecheck``: the WeCheck runs of the chapter (light module: imports click only)."""
from __future__ import annotations

import json

import click


@click.command("wecheck")
@click.option("--run", "runs", multiple=True, help="run name(s) from tfc.train.wecheck.RUNS (default: wecheck-minilm)")
@click.option("--all", "all_runs", is_flag=True, help="every run in RUNS (main model, Table 2/3/5 ablations)")
@click.option("--signals-only", is_flag=True, help="only compute the weak pool's own signals (score cache)")
@click.option("--eval/--no-eval", "do_eval", default=True, show_default=True,
              help="score each trained checkpoint on the TRUE sets (stratified sample) and record it")
@click.option("--eval-sample", type=int, default=None, help="rows per TRUE set (default tfc.train.wecheck.EVAL_SAMPLE; 0 = all)")
@click.option("--eval-subset", type=int, default=None,
              help="score only this many rows of each set's evaluation sample (nested; the ablation tables)")
@click.option("--pool-sample", type=int, default=None, help="weak-pool rows per task (default from the config)")
@click.option("--max-train-rows", type=int, default=None)
@click.option("--epochs", type=float, default=None)
@click.option("--lr", type=float, default=None)
@click.option("--threads", type=int, default=None, help="torch CPU threads")
@click.option("--device", default=None)
@click.option("--max-minutes", type=float, default=None)
@click.option("--out", type=click.Path(file_okay=False), default=None, help="output dir (one run only)")
@click.option("--record/--no-record", default=True, show_default=True,
              help="copy card, summary and identity to results/models/<name>/")
def wecheck_cmd(runs, all_runs, signals_only, do_eval, eval_sample, eval_subset, pool_sample, max_train_rows, epochs, lr,
                threads, device, max_minutes, out, record):
    """WeCheck weak supervision: weak pool -> label model -> noise filter -> fine-tune tfc/nli-minilm."""
    from tfc import config
    from tfc.train import wecheck as W

    if threads:
        import torch

        torch.set_num_threads(int(threads))
    names = list(W.RUNS) if all_runs else (list(runs) or ["wecheck-minilm"])
    if out and len(names) > 1:
        raise click.UsageError("--out works with a single run")
    over = {k: v for k, v in dict(pool_sample=pool_sample, max_train_rows=max_train_rows, epochs=epochs, lr=lr,
                                  num_threads=threads, max_minutes=max_minutes,
                                  device=device or config.default_device()).items() if v is not None}
    try:
        cfgs = [W.run_config(n, **over) for n in names]
    except (KeyError, TypeError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    pools = {}

    def pool_for(cfg):   # built on first use (the runs' own signals come from the score cache)
        key = (cfg.tasks, cfg.leaked, cfg.pool_sample, cfg.seed)
        if key not in pools:
            own = tuple(c for c in cfg.signals if c in W.OURS)
            pools[key] = W.weak_frame(cfg.tasks, leaked=cfg.leaked, sample=cfg.pool_sample, seed=cfg.seed,
                                      with_own=own)
            click.echo(json.dumps({"pool": list(cfg.tasks), "leaked": cfg.leaked, "rows": len(pools[key][0]),
                                   "leakage": pools[key][1].to_dict("records")}, default=str))
        return pools[key]

    if signals_only:
        for cfg in cfgs:
            pool_for(cfg)
        return
    sample = W.EVAL_SAMPLE if eval_sample is None else (eval_sample or None)
    for cfg in cfgs:
        pool, rep = pool_for(cfg)
        res = W.train_wecheck(cfg, pool=pool, leak_report=rep, out_dir=out)
        s = res.summary
        click.echo(json.dumps({"run": cfg.name, "steps": s["steps"], "train_seconds": s["train_seconds"],
                               "train_rows": s["mix"]["train_rows"], "dev": s["dev_eval"]}))
        if record and not out:
            W.write_record(cfg.name)
        if do_eval and not out:
            W.evaluate(f"tfc/{cfg.name}", datasets=W.RUN_EVAL_SETS.get(cfg.name), sample=sample, subset=eval_subset,
                       log=click.echo)
