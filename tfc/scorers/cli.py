"""``tfc score``: score a dataset with a scorer, through the cache, and print the ROC AUC."""
from __future__ import annotations

import json

import click


@click.command()
@click.option("--scorer", "-s", "scorer_name", required=True, help="registry name, e.g. f1, rougeL, nli, summac-zs")
@click.option("--dataset", "-d", required=True, help="dataset name (tfc data ls)")
@click.option("--split", default=None)
@click.option("--checkpoint", "-c", default=None, help="hub id, local directory or tfc/<name>")
@click.option("--conv-checkpoint", default=None, help="summac-conv: trained convolution (dir or tfc/<name>)")
@click.option("--label-names", default=None, help="comma-separated label order override, e.g. entailment,neutral,contradiction")
@click.option("--device", default=None)
@click.option("--sample", type=int, default=None, help="score a random sample of N examples")
@click.option("--seed", type=int, default=0)
@click.option("--batch-size", type=int, default=None)
@click.option("--set", "sets", multiple=True, help="config override KEY=VALUE (JSON value), repeatable")
@click.option("--no-cache", is_flag=True, help="compute everything and write nothing")
@click.option("--progress/--no-progress", default=True)
def score(scorer_name, dataset, split, checkpoint, conv_checkpoint, label_names, device, sample, seed,
          batch_size, sets, no_cache, progress):
    """Score DATASET with SCORER (writes the score cache) and print the ROC AUC."""
    from tfc import scorers
    from tfc.meta import roc_auc

    overrides = {}
    if checkpoint:
        overrides["checkpoint"] = checkpoint
    if conv_checkpoint:
        overrides["conv_checkpoint"] = conv_checkpoint
    if label_names:
        overrides["label_names"] = tuple(x.strip() for x in label_names.split(","))
    if device:
        overrides["device"] = device
    for kv in sets:
        if "=" not in kv:
            raise click.BadParameter(f"--set expects KEY=VALUE, got {kv!r}")
        k, v = kv.split("=", 1)
        try:
            overrides[k] = json.loads(v)
        except ValueError:
            overrides[k] = v
        if isinstance(overrides[k], list):
            overrides[k] = tuple(overrides[k])
    try:
        s = scorers.get(scorer_name, **overrides)
    except (KeyError, TypeError, ValueError, NotImplementedError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"scorer    {s.signature}")
    res = scorers.score_dataset(s, dataset, split=split, sample=sample, seed=seed, use_cache=not no_cache,
                                batch_size=batch_size, progress=progress)
    click.echo(f"dataset   {dataset} ({len(res)} examples)")
    if res["label"].nunique() == 2:
        click.echo(f"ROC AUC   {roc_auc(res['label'], res['score']):.4f}")
    else:
        click.echo("ROC AUC   undefined (one class only)")
