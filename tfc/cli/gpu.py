"""``tfc gpu``: the long runs on a separate GPU machine (:mod:`tfc.runs.gpu`): ``pack`` here, ``job`` there,
``unpack`` here."""
from __future__ import annotations

import json

import click


@click.group()
def gpu():
    """Bundle the long runs for a GPU machine, run them there, and put the results in place here."""


@gpu.command("pack")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="bundle folder (default: .gpu, git-ignored)")
@click.option("--variant", "variants", multiple=True,
              help="only these variants (default: every one; variants on different bases need one bundle each)")
@click.option("--dataset", "datasets", multiple=True, help="only these evaluation sets (default: TRUE + SummaC)")
def pack(out, variants, datasets):
    """Write the bundle: base encoder (int8), mixes, dev frames, the evaluation sets' mirror files."""
    from tfc.runs import gpu as G

    man = G.pack(out, variants=variants or None, datasets=datasets or None)
    folder = out or str(G.config.REPO_ROOT / ".gpu")
    size = G.bundle_bytes(folder)
    click.echo(f"{folder}: {len(man['files'])} files, {size / 2**20:.1f} MiB; variants {', '.join(man['variants'])}")
    tree = G.tree_bytes() or 0
    click.echo(f"with the tracked tree ({tree / 2**20:.1f} MiB): {(size + tree) / 2**20:.1f} MiB to move")
    if size + tree > G.TRAVEL_LIMIT:
        click.echo(f"warning: over the {G.TRAVEL_LIMIT / 2**20:.0f} MiB one transfer to the GPU machine carries; the job "
                   "needs neither results/scores nor the release weights: leave them out of that transfer "
                   "(book/retraining.md, 'On a GPU machine')", err=True)


@gpu.command("job")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("--work", type=click.Path(file_okay=False), required=True, help="scratch folder (outside the repo)")
@click.option("--variant", "variants", multiple=True, help="only these variants")
@click.option("--device", default="cuda", show_default=True)
@click.option("--dataset", "datasets", multiple=True, help="score only these sets (smoke runs)")
@click.option("--batch-size", type=int, default=256, show_default=True, help="pairs per scoring batch")
@click.option("--smoke", is_flag=True, help="a few steps on a few rows per task (to test the job on a CPU)")
@click.option("--log-file", type=click.Path(dir_okay=False), default=None, help="the job's log, exported with it")
@click.option("--allow-rule-splitter", is_flag=True, help="run although spaCy is missing (scores under other signatures)")
def job(bundle, work, variants, device, datasets, batch_size, smoke, log_file, allow_rule_splitter):
    """Train, sweep, score, record and export every variant of BUNDLE (on the GPU machine)."""
    from tfc.runs import gpu as G

    outs = G.job(bundle, work, variants=variants or None, device=device, smoke=smoke, datasets=datasets or None,
                 batch_size=batch_size, log_file=log_file, log=lambda m: click.echo(m),
                 allow_rule_splitter=allow_rule_splitter)
    click.echo(json.dumps({"exports": [str(o) for o in outs]}))


@gpu.command("export")
@click.argument("name")
@click.option("--work", type=click.Path(file_okay=False, exists=True), required=True, help="the job's scratch folder")
@click.option("--log-file", type=click.Path(dir_okay=False), default=None, help="the job's log, exported with it")
@click.option("--weights/--no-weights", default=None, help="bring the weights back (default: where they fit)")
def export(name, work, log_file, weights):
    """Export what a job has of variant NAME so far (a job about to be cut short): card, record, caches, log."""
    import os
    from unittest import mock

    from tfc.runs import gpu as G

    with mock.patch.dict(os.environ, G.job_env(work)):
        click.echo(str(G.export_variant(name, work, log_file, weights=weights)))


@gpu.command("unpack")
@click.argument("folders", nargs=-1, type=click.Path(file_okay=False, exists=True))
def unpack(folders):
    """Check and put in place what came back (one folder per variant)."""
    from tfc.runs import gpu as G

    for f in folders:
        click.echo(json.dumps(G.unpack(f)))


@gpu.command("distil-pack")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="bundle folder (default: .gpu-distil, git-ignored); its volumes go to <out>-volumes/")
@click.option("--volume-mib", type=int, default=48, show_default=True, help="largest volume (one per transfer)")
def distil_pack(out, volume_mib):
    """Write the distillation bundle (pool, mix, both bases, plan) and cut it into volumes."""
    from tfc.runs import distil as D

    man = D.pack(out=out, volume_bytes=volume_mib * 2 ** 20)
    click.echo(f"pool: {man['pool_rows']:,} pairs; {len(man['files'])} files")
    for v, size in man["volumes"].items():
        click.echo(f"{v}: {size / 2**20:.1f} MiB")
    tree = D.G.tree_bytes() or 0
    click.echo(f"tracked tree: {tree / 2**20:.1f} MiB; a transfer carries the tree without results/scores and "
               "results/release (book/retraining.md, 'On a GPU machine') and one volume")


@gpu.command("distil")
@click.argument("volumes", type=click.Path(file_okay=False, exists=True))
@click.option("--work", type=click.Path(file_okay=False), required=True, help="scratch folder (kept between calls)")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="copy the exports here (e.g. $OUT)")
@click.option("--device", default="cuda", show_default=True)
@click.option("--smoke", is_flag=True, help="a few steps on a few rows (to test the job on a CPU)")
def distil(volumes, work, out, device, smoke):
    """Teacher, teacher labels, student, records and the student's export (on the GPU machine)."""
    import shutil
    from pathlib import Path

    from tfc.runs import distil as D

    outs = D.job(volumes, work, device=device, smoke=smoke, log=lambda m: click.echo(m))
    if out:
        for o in outs:
            shutil.copytree(o, Path(out) / o.name, dirs_exist_ok=True)
    click.echo(json.dumps({"exports": [str(o) for o in outs]}))
