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
