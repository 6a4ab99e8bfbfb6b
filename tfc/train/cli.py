"""``tfc train``: training pipelines (a click group; each pipeline's module adds its sub-commands).

``summac-conv`` is defined here; the in-house checkpoints' commands (``nli``, ``alignscore``, ``sentence``,
``convert``, ``mix``, ``wecheck``, ``score-inhouse``, ``reproduce``) live in :mod:`tfc.train.cli_inhouse` and
are attached once with its ``register`` hook; ``qa`` lives in :mod:`tfc.train.qa_cli`.
"""
from __future__ import annotations

import json

import click


@click.group()
def train():
    """Train in-house checkpoints (saved under the artifacts dir as tfc/<name>)."""


@train.command("summac-conv")
@click.option("--checkpoint", "-c", required=True, help="NLI checkpoint (hub id, dir or tfc/<name>)")
@click.option("--dataset", "-d", "datasets", multiple=True, required=True, help="validation set(s) to train on")
@click.option("--split", default=None)
@click.option("--sample", type=int, default=None)
@click.option("--seed", type=int, default=0)
@click.option("--epochs", type=int, default=200)
@click.option("--lr", type=float, default=1e-2)
@click.option("--out", default="tfc/summac-conv", show_default=True, help="output dir or tfc/<name>")
@click.option("--label-names", default=None, help="comma-separated label order override")
@click.option("--device", default=None)
def summac_conv(checkpoint, datasets, split, sample, seed, epochs, lr, out, label_names, device):
    """Train SummaC-Conv's 1-D convolution on NLI-matrix histograms of labelled examples."""
    from tfc.scorers.summac import train_conv

    kw = {"device": device}
    if label_names:
        kw["label_names"] = tuple(x.strip() for x in label_names.split(","))
    meta = train_conv(checkpoint, list(datasets), out, split=split, sample=sample, seed=seed, epochs=epochs,
                      lr=lr, **kw)
    click.echo(json.dumps({k: meta[k] for k in ("n_examples", "final_loss", "train_auc")}, indent=1))
    click.echo(f"saved to {out}")


# the in-house checkpoints' commands (light: click only at import)
from tfc.train.cli_inhouse import register as _register_inhouse  # noqa: E402

_register_inhouse(train)

from tfc.train.qa_cli import qa_cmd as _qa_cmd  # noqa: E402  (tfc/qa-minilm, issue 9)

train.add_command(_qa_cmd)
