"""``tfc models``: list offline checkpoints, manage shipped releases, convert released checkpoints."""
from __future__ import annotations

import click


@click.group()
def models():
    """Offline checkpoints (MiniLM encoder, in-house models under the artifacts dir)."""


@models.command("ls")
def ls():
    """List the checkpoints usable offline."""
    from tfc.models import list_local

    rows = list_local()
    if not rows:
        click.echo("no offline checkpoints found")
    for r in rows:
        click.echo(f"{r['name']:28s} {r['kind']:16s} {r['path']}")


@models.group("release")
def release_group():
    """Shipped release weights (results/release/<name>: int8 weight-only, sha256 manifest)."""


@release_group.command("pack")
@click.argument("checkpoint")
@click.option("--name", default=None, help="release name (default: the checkpoint's name)")
@click.option("--share-with", default=None,
              help="leave out the tensors equal to this base's ('minilm', or a shipped tfc/<name>), e.g. word "
                   "embeddings kept frozen in training; they are read from the base when the release is installed")
@click.option("--delta", is_flag=True,
              help="with --share-with: store the other matrices the base holds as int8 differences from the base's "
                   "(near-lossless for a model fine-tuned from that base; see tfc.models.release)")
@click.option("--group-size", type=click.IntRange(min=1), default=None,
              help="with --delta: one int8 scale per this many columns of a row (scheme int8-delta-group<N>-absmax; "
                   "small matrices kept in fp32) rather than one per row (int8-delta-per-row-absmax)")
def release_pack(checkpoint, name, share_with, delta, group_size):
    """Quantise CHECKPOINT (a directory or tfc/<name>) into results/release/<name>."""
    from pathlib import Path

    from tfc import models
    from tfc.models import release

    path = Path(models.resolve(checkpoint))
    name = name or (checkpoint[4:] if checkpoint.startswith("tfc/") else path.name)
    if group_size and not delta:
        raise click.UsageError("--group-size applies to a delta release: add --delta (and --share-with)")
    out = release.pack(path, name, share_with=share_with, resolver=models.resolve, delta=delta, group_size=group_size)
    size = sum(f.stat().st_size for f in out.iterdir())
    click.echo(f"{out}: {size / 1e6:.1f} MB")


@release_group.command("verify")
@click.argument("name")
def release_verify(name):
    """Check release NAME against its sha256 manifest."""
    from tfc.models import release

    try:
        files = release.verify(release.release_dir(name))
    except release.ReleaseError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{release.release_dir(name)}: {len(files)} files match {release.MANIFEST}")


@release_group.command("install")
@click.argument("name")
def release_install(name):
    """Verify and dequantise release NAME into the artifacts directory (done on first use anyway)."""
    from tfc import models
    from tfc.models import release

    try:
        click.echo(str(release.materialize(name, resolver=models.resolve)))
    except release.ReleaseError as exc:
        raise click.ClickException(str(exc)) from exc


@release_group.command("drift")
@click.argument("name")
@click.option("--source", type=click.Path(exists=True, file_okay=False), default=None,
              help="the training output the release was packed from (a checkpoint directory)")
@click.option("--scorer", default=None, help="the registered scorer that reads the model (its defaults, uncalibrated)")
@click.option("--set", "settings", multiple=True, help="a scorer override KEY=VALUE (JSON values), repeatable")
@click.option("--from-training-record", is_flag=True,
              help="no source at hand: take the drift the release's training record measured when it was packed")
@click.option("--note", default="", help="what --source is, when it is not the output the release was packed from")
@click.option("--record/--no-record", default=True, show_default=True,
              help="write results/models/<name>/release_drift.json")
def release_drift_cmd(name, source, scorer, settings, from_training_record, note, record):
    """Check release NAME against its training output by the drift rule (tfc.runs.release_drift)."""
    import json

    from tfc.runs import release_drift as R

    release = name if name.startswith("tfc/") else f"tfc/{name}"
    if from_training_record:
        res = R.from_training_record(release)
    elif source and scorer:
        over = {}
        for kv in settings:
            key, _, val = kv.partition("=")
            try:
                over[key] = json.loads(val)
            except json.JSONDecodeError:
                over[key] = val
        res = R.measure(source, release, scorer, overrides=over, note=note, log=click.echo)
    else:
        raise click.UsageError("give --source and --scorer, or --from-training-record")
    if record:
        R.record(res)
    click.echo(f"{release}: largest |score diff| {res['max_abs_diff']:.4f} (rule {R.MAX_ABS_DIFF}), largest |AUC diff| "
               f"{res['max_abs_auc_diff']:.3f} (rule {R.MAX_AUC_DIFF}): " + ("meets" if res["meets_rule"] else "misses")
               + " the rule")


@models.group("convert")
def convert_group():
    """Convert a paper's released checkpoint into a directory the tfc scorers read."""


@convert_group.command("alignscore")
@click.argument("ckpt", type=click.Path(exists=True, dir_okay=False))
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--base", default=None,
              help="backbone config + tokenizer (directory or hub id in the HF cache); default: the "
                   "checkpoint's hyper_parameters['model'], e.g. roberta-large")
@click.option("--overwrite", is_flag=True, help="write into a non-empty OUT_DIR")
def convert_alignscore_cmd(ckpt, out_dir, base, overwrite):
    """Convert an official AlignScore Lightning CKPT (AlignScore-base/large.ckpt) into OUT_DIR.

    OUT_DIR is a Hugging Face RoBERTa sequence classifier (the 3-way head) plus the bin/reg heads in
    tfc_heads.safetensors; use it as `tfc score -s alignscore -c OUT_DIR` or
    `make chapter NB=05_alignscore CHECKPOINT=OUT_DIR`. The .ckpt is read with weights_only=True.
    """
    from tfc.models import convert

    try:
        rec = convert.convert_alignscore(ckpt, out_dir, base=base, overwrite=overwrite)
    except (convert.UnsafeCheckpointError, convert.CheckpointLayoutError, FileExistsError, ValueError,
            OSError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{out_dir}: {rec['model_type']} sequence classifier (3-way = tri_layer) + bin/reg heads "
               f"({rec['dropped_keys']} mlm_head tensors dropped); sha256 of {rec['file']}: {rec['sha256'][:16]}")
