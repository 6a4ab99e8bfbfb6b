"""``tfc score``: score a registered dataset (``-d``) or your own file (``--input``), through the cache.

With ``-d`` it prints the ROC AUC; with ``--input`` it writes the input rows plus one column per
scorer (see :mod:`tfc.results.own_files`), for ``tfc evaluate`` to read. ``--engine ray --workers N`` scores
the missing chunks on Ray workers instead of this process, with the same cache entry and scores
(:mod:`tfc.cache.scale`; ``pip install 'tfc[scale]'``).
"""
from __future__ import annotations

import json

import click


def _overrides(conv_checkpoint, label_names, device, sets) -> dict:
    overrides = {}
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
    return overrides


@click.command()
@click.option("--scorer", "-s", "scorer_names", required=True, multiple=True,
              help="registry name, e.g. f1, rougeL, nli, summac-zs; repeatable. With --input, COLUMN=NAME "
                   "names the output column")
@click.option("--dataset", "-d", default=None, help="dataset name (tfc data ls)")
@click.option("--input", "-i", "input_path", default=None,
              help="your own file: .csv .tsv .jsonl .json .parquet, a datasets directory (save_to_disk), "
                   "or hf:<owner>/<name> when online")
@click.option("--grounding-col", default="grounding", show_default=True, help="with --input: the source text column")
@click.option("--generated-col", default="generated", show_default=True, help="with --input: the generated text column")
@click.option("--output", "-o", default=None,
              help="with --input: .parquet, .csv or .jsonl (default <input>.scored.parquet)")
@click.option("--overwrite", is_flag=True, help="with --input: replace an existing output file")
@click.option("--chunk-size", type=int, default=512, show_default=True,
              help="rows per cache part: an interrupted run resumes after the last finished chunk")
@click.option("--split", default=None, help="a split of the dataset (or of a datasets directory)")
@click.option("--checkpoint", "-c", default=None, help="hub id, local directory or tfc/<name>")
@click.option("--conv-checkpoint", default=None, help="summac-conv: trained convolution (dir or tfc/<name>)")
@click.option("--label-names", default=None, help="comma-separated label order override, e.g. entailment,neutral,contradiction")
@click.option("--device", default=None)
@click.option("--sample", type=int, default=None, help="with -d: score a random sample of N examples")
@click.option("--seed", type=int, default=0)
@click.option("--batch-size", type=int, default=None)
@click.option("--set", "sets", multiple=True, help="config override KEY=VALUE (JSON value), repeatable")
@click.option("--preset", default="default", show_default=True,
              help="default (the recommended configuration, shipped weights) | as-published | improved | fast "
                   "(bf16 weights in the model scorers); see tfc.scorers.PRESETS")
@click.option("--no-cache", is_flag=True, help="compute everything and write nothing to the score cache")
@click.option("--progress/--no-progress", default=True)
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="ray: score the chunks on Ray Data workers (pip install 'tfc[scale]'); same cache, same scores")
@click.option("--workers", type=int, default=None, help="with --engine ray: number of workers (default 2)")
@click.option("--cpus-per-worker", type=float, default=None, help="with --engine ray: CPUs per worker (default 1)")
@click.option("--gpus-per-worker", type=float, default=None, help="with --engine ray: GPUs per worker (default 0)")
@click.option("--ray-address", default=None,
              help="with --engine ray: a running cluster ('auto', ray://host:10001); default: start a local one")
def score(scorer_names, dataset, input_path, grounding_col, generated_col, output, overwrite, chunk_size, split,
          checkpoint, conv_checkpoint, label_names, device, sample, seed, batch_size, sets, preset, no_cache, progress,
          engine, workers, cpus_per_worker, gpus_per_worker, ray_address):
    """Score DATASET (-d) and print the ROC AUC, or score your own file (--input) and write it back
    with one score column per scorer."""
    if (dataset is None) == (input_path is None):
        raise click.UsageError("give exactly one of --dataset/-d (a registered dataset) or --input (your own file)")
    overrides = _overrides(conv_checkpoint, label_names, device, sets)
    eng = _engine(engine, workers, cpus_per_worker, gpus_per_worker, ray_address, no_cache, progress)
    from tfc.cache import scale

    with scale.engine(eng):
        _score(scorer_names, dataset, input_path, grounding_col, generated_col, output, overwrite, chunk_size,
               split, checkpoint, sample, seed, batch_size, no_cache, progress, overrides, preset)
    if eng is not None and eng.last_report:
        r = eng.last_report
        click.echo(f"engine    ray {r['ray']}: {r['workers']} workers, last run {r['chunks']} chunk(s), "
                   f"{r['rows']} rows in {r['seconds']:.1f} s")


def _engine(engine, workers, cpus_per_worker, gpus_per_worker, ray_address, no_cache, progress):
    """The scale-out engine the options ask for (None: this process), or a UsageError."""
    ray_opts = {"--workers": workers, "--cpus-per-worker": cpus_per_worker, "--gpus-per-worker": gpus_per_worker,
                "--ray-address": ray_address}
    if engine != "ray":
        given = [k for k, v in ray_opts.items() if v is not None]
        if given:
            raise click.UsageError(f"{', '.join(given)} need(s) --engine ray")
        return None
    if no_cache:
        raise click.UsageError("--engine ray writes through the score cache (its shards); leave out --no-cache")
    if workers is not None and workers < 1:
        raise click.BadParameter(f"--workers must be >= 1, got {workers}")
    from tfc.cache import scale

    try:
        return scale.make_engine("ray", workers=workers, cpus_per_worker=cpus_per_worker,
                                 gpus_per_worker=gpus_per_worker, address=ray_address, progress=progress)
    except (scale.EngineError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def _score(scorer_names, dataset, input_path, grounding_col, generated_col, output, overwrite, chunk_size, split,
           checkpoint, sample, seed, batch_size, no_cache, progress, overrides, preset="default"):
    from tfc.cache.scale import EngineError
    from tfc.models import CheckpointNotFoundError

    if input_path is not None:
        if sample is not None:
            raise click.UsageError("--sample works with --dataset only")
        try:
            _score_input(scorer_names, input_path, grounding_col, generated_col, output, overwrite, chunk_size,
                         split, checkpoint, batch_size, no_cache, progress, overrides, preset)
        except (EngineError, CheckpointNotFoundError) as exc:
            raise click.ClickException(str(exc)) from None
        return
    from tfc import scorers
    from tfc.results.dataset import score_dataset
    from tfc.meta import roc_auc

    if checkpoint:
        overrides["checkpoint"] = checkpoint
    for scorer_name in scorer_names:
        try:
            s = scorers.get(scorer_name, preset=preset, **overrides)
        except (KeyError, TypeError, ValueError, NotImplementedError, FileNotFoundError) as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"scorer    {s.signature}")
        try:
            res = score_dataset(s, dataset, split=split, sample=sample, seed=seed, use_cache=not no_cache,
                                        chunk_size=chunk_size, batch_size=batch_size, progress=progress)
        except (EngineError, CheckpointNotFoundError) as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"dataset   {dataset} ({len(res)} examples)")
        if res["label"].nunique() == 2:
            click.echo(f"ROC AUC   {roc_auc(res['label'], res['score']):.4f}")
        else:
            click.echo("ROC AUC   undefined (one class only)")


def _score_input(scorer_names, input_path, grounding_col, generated_col, output, overwrite, chunk_size, split,
                 checkpoint, batch_size, no_cache, progress, overrides, preset="default"):
    from tfc.results import own_files as O
    from tfc.cache import CacheBusyError, CacheCorruptError, CacheMismatchError

    if chunk_size < 1:
        raise click.BadParameter(f"--chunk-size must be >= 1, got {chunk_size}")
    try:
        out_path = O.check_output(output or O.default_output(input_path), overwrite)   # before any work
        specs = O.parse_scorers(scorer_names, checkpoint, preset, **overrides)
        df = O.read_table(input_path, text_cols=(grounding_col, generated_col), split=split)
        O.check_columns(df, [grounding_col, generated_col], where=str(input_path))
        report = {}
        try:
            scored = O.score_frame(df, specs, grounding_col, generated_col, use_cache=not no_cache,
                                   progress=progress, batch_size=batch_size, chunk_size=chunk_size, report=report)
        except KeyboardInterrupt:
            raise click.ClickException(
                "interrupted; the finished chunks are in the score cache, run the same command again to "
                f"resume ({out_path} was not written)") from None
        O.write_table(scored, out_path, overwrite=overwrite)
    except (O.OwnFileError, CacheMismatchError, CacheCorruptError, CacheBusyError) as exc:
        raise click.ClickException(str(exc)) from None
    except (TypeError, ValueError) as exc:   # e.g. a scorer's own refusal (ensemble normalisation)
        raise click.ClickException(" ".join(str(exc).split())) from None
    click.echo(f"input     {input_path} ({len(df)} rows; grounding {grounding_col!r}, generated {generated_col!r})")
    for col, r in report.items():
        click.echo(f"column    {col}: {r['signature']} ({r['from_cache']} rows from the cache, {r['computed']} computed)")
    click.echo(f"wrote     {out_path}")
    click.echo(f"next      tfc evaluate --input {out_path} --label-col <your label column>")

