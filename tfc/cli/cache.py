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


@cache.command("migrate")
@click.option("--root", type=click.Path(file_okay=False), default=None, help="a score cache (default: TFC_CACHE_DIR)")
@click.option("--releases", type=click.Path(file_okay=False), default=None,
              help="the shipped releases whose calibration maps follow (default: results/release)")
@click.option("--dry-run", is_flag=True, help="say what would move; change nothing")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
def migrate_cmd(root, releases, dry_run, as_json):
    """Move every cache to the signature its configuration has today, and point every shipped calibration map at
    its raw configuration's signature (no score is recomputed; see tfc.cache.migrate). Exits 1 when two caches
    claim one configuration with different scores."""
    import json

    from tfc.cache.migrate import migrate, migrate_calibrations, migrate_references, renames_of, rewrite_records

    report = migrate(root, dry_run=dry_run)
    rep = report.as_dict()
    rep["records"] = rewrite_records(renames_of(report), dry_run=dry_run)
    rep["calibrations"] = migrate_calibrations(releases, dry_run=dry_run)
    rep["references"] = migrate_references(releases, dry_run=dry_run)
    if as_json:
        click.echo(json.dumps(rep, indent=1))
    else:
        for e in rep["moved"]:
            click.echo(f"{'would move' if dry_run else 'moved'} {e['from']} -> {e['to']} ({e['dataset']}/{e['split']})")
        for e in rep["duplicates"]:
            click.echo(f"duplicate {e['from']} of {e['to']} ({e['dataset']}/{e['split']}): "
                       f"{'would be ' if dry_run else ''}removed")
        for e in rep["conflicts"]:
            click.echo(f"conflict: {e['from']} and {e['to']} ({e['dataset']}/{e['split']}) hold other scores "
                       "for one configuration; both kept", err=True)
        for f in rep["records"]:
            click.echo(f"{'would rewrite' if dry_run else 'rewrote'} the signatures in results/models/{f}")
        for e in rep["references"]:
            click.echo(f"{'would re-key' if dry_run else 're-keyed'} {e['reference']}'s member {e['from']} as {e['to']}")
        for e in rep["calibrations"]:
            click.echo(f"{'would point' if dry_run else 'pointed'} calibration map {e['map']} at {e['to']} "
                       f"(was {e['from']})")
        click.echo(f"moved {len(rep['moved'])}, duplicates {len(rep['duplicates'])}, conflicts "
                   f"{len(rep['conflicts'])}, unchanged {rep['unchanged']}")
    if rep["conflicts"]:
        raise SystemExit(1)


@cache.command("rescore")
@click.argument("checkpoint")
@click.option("--root", type=click.Path(file_okay=False), default=None, help="a score cache (default: TFC_CACHE_DIR)")
@click.option("--dry-run", is_flag=True, help="list the caches that would be scored again; change nothing")
def rescore_cmd(checkpoint, root, dry_run):
    """Score again, on the same rows, every cache whose configuration reads CHECKPOINT and whose signature moved
    because the checkpoint's weights changed (a replaced release); the old caches go once the new ones are whole
    (see tfc.cache.rescore). Resumable."""
    from tfc.cache import rescore

    if dry_run:
        for e in rescore.plan(checkpoint, root):
            click.echo(f"would score {e['old']} again as {e['new']} ({e['dataset']}/{e['split']})")
        return
    done = rescore.rescore(checkpoint, root, log=click.echo)
    click.echo(f"scored {len(done)} cache(s) again, {sum(e['rows'] for e in done)} rows")
