"""``tfc data list|show|build|verify|fetch|manifest|export``."""
from __future__ import annotations

import sys

import click


@click.group()
def data():
    """Datasets: registry, builders, provenance checks and downloads."""


@data.command("list")
@click.option("--group", default=None, help="TRUE | SummaC | scores | Q2 paper | training")
def list_(group):
    """Every dataset with its row count, % consistent and status (text, label-only, approximate, unavailable)."""
    import pandas as pd

    import tfc.data as D

    names = D.names(include_unavailable=True, group=group)
    df = D.summary(names)
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_colwidth", 70):
        click.echo(df.to_string(index=False))


@data.command()
@click.argument("name")
@click.option("--sample", type=int, default=None, help="compute the card's statistics on a sample")
def show(name, sample):
    """The data card of NAME."""
    from tfc.data.cards import render_card

    click.echo(render_card(name, sample=sample))


@data.command()
@click.argument("names", nargs=-1)
def build(names):
    """Build NAMES (default: all loadable sets) from the raw files and cross-check TRUE sets."""
    import tfc.data as D
    from tfc.data.builders import crosscheck_true

    names = names or D.names(all=True)
    bad = 0
    for n in names:
        if D.status(n) not in ("text", "approximate"):
            click.echo(f"{n}: {D.status(n)} ({D.info(n).reason}) -- nothing to build")
            continue
        df = D.load(n)
        msg = f"{n}: {len(df)} rows"
        if n in ("qags_cnndm", "qags_xsum", "begin", "q2", "mnbm"):
            cc = crosscheck_true(df, n)
            mism = {k: v for k, v in cc.items() if k.endswith("mismatch") and v}
            bad += bool(mism)
            msg += f"; vs TRUE: {'OK' if not mism else mism}"
        click.echo(msg)
    sys.exit(1 if bad else 0)


@data.command()
@click.option("--only", default=None, help="regex on the mirror path")
def verify(only):
    """Check the mirror against data/MANIFEST; names every missing or changed file."""
    from tfc import config
    from tfc.data.manifest import verify as _verify

    res = _verify(only=only)
    bad = res[res["status"] != "ok"]
    for r in bad.itertuples():
        click.echo(f"{r.status.upper():8s} {r.path}" + (f" (sha256 {r.found})" if r.found else ""))
    click.echo(f"{len(res) - len(bad)}/{len(res)} files OK in {config.data_dir()}")
    sys.exit(1 if len(bad) else 0)


@data.command()
@click.option("--dest", type=click.Path(file_okay=False), default=None, help="mirror directory (default TFC_DATA_DIR)")
@click.option("--only", default=None, help="regex on the mirror path")
@click.option("--url-template", default=None,
              help="URL pattern with {repo} {commit} {upstream_path} {path}; default raw.githubusercontent.com")
@click.option("--force", is_flag=True, help="download even when a matching file is present")
def fetch(dest, only, url_template, force):
    """Download the pinned upstream files into the mirror (needs internet), checking each sha256."""
    from pathlib import Path

    from tfc.data.manifest import DEFAULT_URL_TEMPLATE, fetch as _fetch

    res = _fetch(Path(dest) if dest else None, url_template or DEFAULT_URL_TEMPLATE, only=only, force=force,
                 log=click.echo)
    counts = {}
    for r in res:
        counts[r.status] = counts.get(r.status, 0) + 1
        if r.status == "failed":
            click.echo(f"FAILED {r.path}: {r.detail}", err=True)
    click.echo(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    sys.exit(1 if counts.get("failed") else 0)


@data.command()
@click.option("--write", is_flag=True, help="rewrite data/MANIFEST from the mirror's MANIFEST.sha256 + SOURCE.txt")
def manifest(write):
    """Show (or regenerate) data/MANIFEST."""
    from tfc.data.manifest import MANIFEST_PATH, build_manifest, load_manifest, write_manifest

    df = build_manifest() if write else load_manifest()
    if write:
        write_manifest(df)
        click.echo(f"wrote {MANIFEST_PATH} ({len(df)} files)")
    else:
        click.echo(df[["path", "repo", "commit", "licence"]].to_string(index=False))


@data.command()
@click.argument("name")
@click.option("--format", "fmt", type=click.Choice(["hf", "parquet", "jsonl"]), default="hf", show_default=True,
              help="hf: datasets.load_from_disk(OUT); parquet/jsonl: datasets.load_dataset(OUT)")
@click.option("--out", "-o", required=True, type=click.Path(), help="directory to create")
@click.option("--split", default=None, help="export one split only")
@click.option("--sample", type=int, default=None, help="a label-stratified sample of N rows")
@click.option("--seed", type=int, default=0)
@click.option("--overwrite", is_flag=True, help="replace an existing OUT")
def export(name, fmt, out, split, sample, seed, overwrite):
    """Write dataset NAME (common schema, meta as a JSON string) for Hugging Face datasets."""
    from tfc.data.errors import DataError
    from tfc.data.hf import export as _export

    try:
        path = _export(name, fmt, out, split=split, sample=sample, seed=seed, overwrite=overwrite)
    except (DataError, ValueError, TypeError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    reader = "datasets.load_from_disk" if fmt == "hf" else "datasets.load_dataset"
    click.echo(f"wrote {path} ({fmt}); read it with {reader}({str(path)!r})")
