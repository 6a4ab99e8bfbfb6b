"""``tfc train ...``: train the in-house checkpoints (written to ``tfc.config.artifacts_dir()/<name>``)."""
from __future__ import annotations

import json

import click


@click.group()
def train():
    """Train in-house checkpoints (NLI warm-up, AlignScore, ...)."""


def _common(f):
    opts = [
        click.option("--base", default="minilm", show_default=True,
                     help="base encoder: 'minilm', 'mpnet', a local HF directory or a hub id"),
        click.option("--max-minutes", type=float, default=None, help="stop cleanly (and save) after this time"),
        click.option("--max-steps", type=int, default=None, help="optimizer steps (default from the model's config)"),
        click.option("--batch-size", type=int, default=None),
        click.option("--grad-accum", type=int, default=None),
        click.option("--max-length", type=int, default=None),
        click.option("--lr", type=float, default=None),
        click.option("--device", default=None, help="cpu or cuda (default: TFC_DEVICE, else cuda if present)"),
        click.option("--seed", type=int, default=None),
        click.option("--threads", type=int, default=None, help="torch CPU threads"),
        click.option("--sample", type=int, default=None, help="rows per source (smoke runs)"),
        click.option("--synthetic", type=int, default=None, help="groundings to make synthetic pairs from"),
        click.option("--out", type=click.Path(file_okay=False), default=None,
                     help="output directory (default: <artifacts>/<name>)"),
        click.option("--name", default=None, help="checkpoint name under the artifacts dir"),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _run(module, kind, base, max_minutes, max_steps, batch_size, grad_accum, max_length, lr, device, seed,
         threads, sample, synthetic, out, name):
    from tfc import config
    from tfc.train.core import train as run_train
    from tfc.train.mix import build_mix

    cfg = module.default_config(base=base, max_minutes=max_minutes, max_steps=max_steps, batch_size=batch_size,
                                grad_accum=grad_accum, max_length=max_length, lr=lr,
                                device=device or config.default_device(), seed=seed, num_threads=threads,
                                name=name)
    kw = {"sample": sample}
    if kind == "alignscore" and synthetic is not None:
        kw["synthetic"] = synthetic
    click.echo(f"building the {kind} mix (leakage filter{' + synthetic pairs' if kind == 'alignscore' else ''}) ...")
    df, report = build_mix(kind=kind, seed=cfg.seed, **kw)
    click.echo(json.dumps({"rows_by_task": report["rows_by_task"], "removed_as_leakage": report["removed_total"]}))
    res = run_train(df, cfg, out_dir=out, mix_report=report)
    s = res.summary
    click.echo(f"saved {res.out_dir}: {s['steps']} steps ({s['stopped_by']}), {s['train_seconds']} s, "
               f"{s['examples_per_second']} ex/s, dev {json.dumps(s['dev_eval'])}")


@train.command("nli")
@_common
def nli_cmd(**kw):
    """The NLI warm-up model tfc/nli-minilm (3-way head, 3-way sources)."""
    from tfc.train import nli

    _run(nli, "nli", **kw)


@train.command("alignscore")
@_common
def alignscore_cmd(**kw):
    """The AlignScore model tfc/alignscore-minilm (3-way + binary + regression heads, all sources)."""
    from tfc.train import alignscore

    _run(alignscore, "alignscore", **kw)
