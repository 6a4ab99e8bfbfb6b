"""``tfc cache``: list and verify the score cache."""
from __future__ import annotations

import click


@click.group()
def cache():
    """The score cache (parquet + JSON sidecar per scorer signature, dataset, split)."""


@cache.command("ls")
def ls():
    """List cached (signature, dataset, split) entries."""
    from tfc import config
    from tfc.cache import entries

    df = entries()
    click.echo(f"cache dir: {config.cache_dir()}")
    if df.empty:
        click.echo("(empty)")
        return
    click.echo(df.to_string(index=False))


@cache.command("verify")
@click.option("--signature", default=None, help="only this signature (default: all)")
@click.option("--dataset", default=None, help="only this dataset")
@click.option("--sample", type=int, default=20, help="rows to recompute per entry")
@click.option("--seed", type=int, default=0)
@click.option("--atol", type=float, default=1e-4)
def verify(signature, dataset, sample, seed, atol):
    """Recompute a random sample of each cached entry and compare with the cache."""
    from tfc.cache import entries
    from tfc.cache import verify as _verify

    df = entries()
    if signature:
        df = df[df["signature"] == signature]
    if dataset:
        df = df[df["dataset"] == dataset]
    if df.empty:
        raise click.ClickException("no matching cache entries")
    bad = 0
    for r in df.itertuples():
        if r.signature.startswith("imported-"):
            continue
        if r.dataset.startswith("file-"):   # scores of a user's own file (tfc score --input): no dataset to reload
            click.echo(f"skip     {r.signature} {r.dataset}/{r.split}: your own file; rerun tfc score --input to check")
            continue
        try:
            res = _verify(r.signature, r.dataset, r.split, sample=sample, seed=seed, atol=atol)
            mark = "ok" if res["ok"] else "MISMATCH"
            click.echo(f"{mark:8s} {r.signature} {r.dataset}/{r.split}: n={res['n']} max|diff|={res['max_abs_diff']:.2e}")
            bad += not res["ok"]
        except Exception as exc:  # report every entry, fail at the end
            click.echo(f"ERROR    {r.signature} {r.dataset}/{r.split}: {exc}")
            bad += 1
    if bad:
        raise click.ClickException(f"{bad} cache entr{'y' if bad == 1 else 'ies'} failed verification")
