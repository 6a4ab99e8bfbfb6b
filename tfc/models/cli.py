"""``tfc models``: list offline checkpoints."""
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
def release_pack(checkpoint, name):
    """Quantise CHECKPOINT (a directory or tfc/<name>) into results/release/<name>."""
    from pathlib import Path

    from tfc import models
    from tfc.models import release

    path = Path(models.resolve(checkpoint))
    name = name or (checkpoint[4:] if checkpoint.startswith("tfc/") else path.name)
    out = release.pack(path, name)
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
    from tfc.models import release

    try:
        click.echo(str(release.materialize(name)))
    except release.ReleaseError as exc:
        raise click.ClickException(str(exc)) from exc
