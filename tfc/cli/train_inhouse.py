"""``tfc train nli|alignscore|sentence|convert|mix|wecheck|score-inhouse|reproduce``: the in-house checkpoints (written to ``tfc.config.artifacts_dir()/<name>``).

The commands are attached to the ``tfc train`` group of :mod:`tfc.cli.train` by :func:`register`, so that
this module and the group's other sub-commands can change independently.
"""
from __future__ import annotations

import json

import click


def _common(f):
    opts = [
        click.option("--base", default="minilm", show_default=True,
                     help="base encoder: 'minilm', 'mpnet', a local HF directory or a hub id"),
        click.option("--max-minutes", type=float, default=None, help="stop cleanly (and save) after this time"),
        click.option("--max-steps", type=int, default=None, help="optimizer steps (default from the model's config)"),
        click.option("--batch-size", type=int, default=None),
        click.option("--grad-accum", type=int, default=None),
        click.option("--max-length", type=int, default=None),
        click.option("--lr", type=float, default=None),
        click.option("--device", default=None, help="cpu or cuda (default: TFC_DEVICE, else cuda if present)"),
        click.option("--seed", type=int, default=None),
        click.option("--threads", type=int, default=None, help="torch CPU threads"),
        click.option("--sample", type=int, default=None, help="rows per source (smoke runs)"),
        click.option("--synthetic", type=int, default=None, help="groundings to make synthetic pairs from"),
        click.option("--out", type=click.Path(file_okay=False), default=None,
                     help="output directory (default: <artifacts>/<name>)"),
        click.option("--name", default=None, help="checkpoint name under the artifacts dir"),
        click.option("--mix-file", type=click.Path(dir_okay=False, exists=True), default=None,
                     help="train on a mix saved by `tfc train mix` instead of building it"),
        click.option("--save-dtype", type=click.Choice(["fp32", "fp16"]), default=None,
                     help="weights dtype on disk (fp16 for the 64 MiB trip back from a GPU machine)"),
        click.option("--init", default=None,
                     help="continue from a trained tfc checkpoint (directory or tfc/<name>) instead of the base encoder"),
        click.option("--mix-version", type=int, default=None, help="sentence mix version (sentence model only)"),
        click.option("--tasks", default=None,
                     help="heads to train, comma-separated (3way,bin,reg); default from the model's config"),
        click.option("--dev-from", type=click.Path(dir_okay=False, exists=True), default=None,
                     help="a saved mix whose dev rows become this run's dev set (a continued run: the parent's mix)"),
        click.option("--dtype", type=click.Choice(["fp32", "bf16"]), default=None,
                     help="bf16 autocast forward (weights stay fp32): about 2x on a CPU with native bf16 "
                          "(avx512_bf16/AMX), far slower where it is emulated (benchmarks/bench_train.py --dtypes)"),
        click.option("--epochs", type=float, default=None,
                     help="passes over the training rows (sets the step count; overrides --max-steps)"),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _run(module, kind, base, max_minutes, max_steps, batch_size, grad_accum, max_length, lr, device, seed,
         threads, sample, synthetic, out, name, mix_file, save_dtype, init, mix_version, dev_from, dtype=None,
         epochs=None, tasks=None):
    from tfc import config
    from tfc.train.engine import train as run_train
    from tfc.train.mix import build_mix

    cfg = module.default_config(base=base, max_minutes=max_minutes, max_steps=max_steps, batch_size=batch_size,
                                grad_accum=grad_accum, max_length=max_length, lr=lr,
                                device=device or config.default_device(), seed=seed, num_threads=threads,
                                name=name, save_dtype=save_dtype, init=init, dev_from=dev_from, dtype=dtype,
                                epochs=epochs,
                                tasks=tuple(t.strip() for t in tasks.split(",") if t.strip()) if tasks else None)
    if mix_file:
        from tfc.train.mix import load_mix

        df, report = load_mix(mix_file)
        if report.get("kind") not in (None, kind):
            raise click.ClickException(f"{mix_file} is a {report.get('kind')!r} mix, not {kind!r}")
    else:
        kw = {"sample": sample}
        if kind == "alignscore" and synthetic is not None:
            kw["synthetic"] = synthetic
        click.echo(f"building the {kind} mix (leakage filter{' + synthetic pairs' if kind != 'nli' else ''}) ...")
        if kind == "sentence":
            from tfc.train.mix import build_sentence_mix

            df, report = build_sentence_mix(seed=cfg.seed, sample=sample, version=mix_version or 1)
        else:
            if mix_version is not None:
                raise click.ClickException("--mix-version applies to the sentence model only")
            df, report = build_mix(kind=kind, seed=cfg.seed, **kw)
    click.echo(json.dumps({"rows_by_task": report["rows_by_task"], "removed_as_leakage": report["removed_total"]}))
    res = run_train(df, cfg, out_dir=out, mix_report=report)
    s = res.summary
    click.echo(f"saved {res.out_dir}: {s['steps']} steps ({s['stopped_by']}), {s['train_seconds']} s, "
               f"{s['examples_per_second']} ex/s, dev {json.dumps(s['dev_eval'])}")


@click.command("nli")
@_common
def nli_cmd(**kw):
    """The NLI warm-up model tfc/nli-minilm (3-way head, 3-way sources)."""
    from tfc.train import nli

    _run(nli, "nli", **kw)


@click.command("alignscore")
@_common
def alignscore_cmd(**kw):
    """The AlignScore model tfc/alignscore-minilm (3-way + binary + regression heads, all sources)."""
    from tfc.train import alignscore

    _run(alignscore, "alignscore", **kw)


@click.command("sentence")
@_common
def sentence_cmd(**kw):
    """The sentence-level alignment model (sentence mix, 128 tokens; shipped as tfc/sent-minilm-v2)."""
    from tfc.train import sentence

    _run(sentence, "sentence", **kw)


@click.command("convert")
@click.argument("checkpoint")
@click.option("--dtype", type=click.Choice(["fp16", "fp32"]), required=True)
def convert_cmd(checkpoint, dtype):
    """Rewrite a checkpoint's weights in fp16 or fp32 in place (CHECKPOINT: a directory or tfc/<name>)."""
    from tfc.train.alignscore import resolve_checkpoint
    from tfc.train.checkpoints import convert_checkpoint_dtype

    path = resolve_checkpoint(checkpoint)
    files = convert_checkpoint_dtype(path, dtype)
    click.echo(f"{path}: {', '.join(files)} -> {dtype}")


@click.command("mix")
@click.option("--kind", type=click.Choice(["alignscore", "nli", "sentence"]), default="alignscore", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="parquet file (keep it git-ignored)")
@click.option("--seed", type=int, default=2022, show_default=True)
@click.option("--sample", type=int, default=None, help="rows per source (smoke runs)")
@click.option("--synthetic", type=int, default=10000, show_default=True, help="groundings for synthetic pairs")
@click.option("--version", "version", type=int, default=1, show_default=True, help="sentence mix version")
def mix_cmd(kind, out, seed, sample, synthetic, version):
    """Build the leakage-filtered mix and save it (parquet + JSON report) for training elsewhere."""
    from tfc.train.mix import build_mix, save_mix

    if kind == "sentence":
        from tfc.train.mix import build_sentence_mix

        df, report = build_sentence_mix(seed=seed, sample=sample, version=version)
    else:
        df, report = build_mix(kind=kind, seed=seed, sample=sample, synthetic=synthetic)
    path = save_mix(df, report, out)
    click.echo(json.dumps({"rows_by_task": report["rows_by_task"], "removed_as_leakage": report["removed_total"],
                           "sha256": report["sha256"], "file": str(path)}))



# rescoring (and retraining) the in-house checkpoints

@click.command("score-inhouse")
@click.argument("plans", nargs=-1)
@click.option("--threads", type=int, default=None, help="torch CPU threads")
@click.option("--batch-size", type=int, default=None)
@click.option("--dataset", "datasets", multiple=True, help="only these datasets (repeatable)")
@click.option("--split", default=None, help="only this split (datasets without it are skipped)")
def score_inhouse_cmd(plans, threads, batch_size, datasets, split):
    """Score the in-house checkpoints through the cache and record each run (tfc.runs.inhouse_models.plans).

    PLANS: any of nli-true, nli-summac, alignscore-true, alignscore-summac, alignscore-split-ablation
    (default: all). Resumable: cached rows are not recomputed; run records go to
    results/models/<name>/scoring_runs.json.
    """
    from tfc.runs import inhouse_models, scoring_runs

    known = list(inhouse_models.plans())
    bad = [p for p in plans if p not in known]
    if bad:
        raise click.BadParameter(f"unknown plan(s) {bad}; known: {', '.join(known)}")
    for plan in plans or known:
        click.echo(f"[score-inhouse] {plan}")
        scoring_runs.run_plan(plan, threads=threads, batch_size=batch_size, log=click.echo,
                              datasets=set(datasets) or None, split=split)


@click.command("score-qgqa")
@click.argument("scorer", type=click.Choice(["q2", "qags"]))
@click.option("--dataset", "datasets", multiple=True, required=True, help="dataset(s) to score (repeatable)")
@click.option("--sample", type=int, default=None, help="a label-stratified sample of this many rows (default: all)")
@click.option("--threads", type=int, default=1, show_default=True, help="torch CPU threads")
@click.option("--batch-size", type=int, default=None)
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="a scorer field over the run defaults, e.g. checkpoint=tfc/qa-minilm-s400 or qg_rules=v1")
@click.option("--dev-chosen", is_flag=True,
              help="Q²'s configuration chosen on training-side dev data (tfc.runs.qgqa.dev_chosen: the option, "
                   "answer-candidate and rule-QG sweeps, each over the previous choice); --set still applies over it")
@click.option("--up-to", type=click.Choice(["options", "candidates", "qg-rules"]), default=None,
              help="with --dev-chosen: the configuration after this sweep (tfc.runs.qgqa.sweep_steps; "
                   "default: after the last, qg-rules)")
def score_qgqa_cmd(scorer, datasets, sample, threads, batch_size, settings, dev_chosen, up_to):
    """Score QAGS or Q² with the in-house backends (tfc.runs.qgqa defaults) through the cache and record each
    run with its per-stage throughput in results/models/qa-minilm/scoring_runs.json. Resumable: cached rows
    are not recomputed; several processes may run at once (the record file is locked)."""
    import torch

    from tfc.runs import qgqa

    overrides = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"--set takes KEY=VALUE, got {item!r}")
        try:
            overrides[key] = json.loads(value)      # numbers, booleans, null
        except ValueError:
            overrides[key] = value                  # plain strings
    if up_to and not dev_chosen:
        raise click.UsageError("--up-to picks a step of --dev-chosen; give --dev-chosen too")
    if dev_chosen:
        if scorer != "q2":
            raise click.UsageError("--dev-chosen is a Q² configuration")
        overrides = {**qgqa.dev_chosen(up_to or "qg-rules"), **overrides}
    torch.set_num_threads(int(threads))
    for d in datasets:
        rec = qgqa.score_run(scorer, d, sample=sample, batch_size=batch_size, **overrides)
        qgqa.append_record(rec)
        click.echo(json.dumps({k: rec.get(k) for k in ("scorer", "dataset", "sample", "rows", "computed_rows",
                                                        "wall_seconds", "examples_per_second", "coverage",
                                                        "auc_covered", "auc_zero_fill", "stage_seconds")}))


@click.command("q2-sweep")
@click.argument("what", type=click.Choice(["nli-step", "options", "candidates", "qg-rules"]))
@click.option("--threads", type=int, default=2, show_default=True, help="torch CPU threads")
def q2_sweep_cmd(what, threads):
    """Run one of Q²'s dev sweeps on training-side data (never TRUE) and write its committed record: the NLI step
    (tfc.runs.qgqa.nli_step_sweep), or one of the three that make the dev-chosen configuration, each over the
    previous one's choice (tfc.runs.qgqa.sweep_steps): the paper's options (option_sweep), the answer-candidate
    rule (candidate_sweep), the rule-QG version (qg_rule_sweep). Each keeps its current choice unless another gains
    more than the margin in mean dev AUC."""
    import torch

    from tfc.runs import qgqa

    torch.set_num_threads(int(threads))
    fn = {"nli-step": qgqa.nli_step_sweep, "options": qgqa.option_sweep, "candidates": qgqa.candidate_sweep,
          "qg-rules": qgqa.qg_rule_sweep}[what]
    rec = fn(log=click.echo)
    click.echo(json.dumps({"auc": rec["auc"], "current": rec["current"], "chosen": rec["chosen"]}, indent=1))


# the in-house checkpoints `tfc train reproduce` retrains from their committed records, in this order
from tfc.train import REPRODUCED  # noqa: E402


def _recorded_qa_args(device: str | None, threads: int | None) -> dict:
    """``tfc train qa``'s arguments that repeat ``tfc/qa-minilm``'s committed record: the QA set's sampling
    (pairs per source, seed, long-context share) and the engine's settings, with the recorded step count
    instead of its time budget (deterministic steps, machine-dependent minutes)."""
    from tfc import config, models

    rec = models.training_record("tfc/qa-minilm")
    c, d = rec.get("config", {}), rec.get("data", {})
    return dict(base=c.get("base", "minilm"), sample=d.get("sample_per_source", 3000), per_pair=d.get("per_pair", 2),
                heldout_pairs=d.get("heldout_pairs", 300), max_steps=rec.get("steps") or c["max_steps"],
                max_minutes=None, batch_size=c["batch_size"], max_length=c["max_length"],
                doc_stride=c.get("doc_stride"), long_frac=d.get("long_frac", 0.25), eval_every=c.get("eval_every", 0),
                checkpoint_every=c.get("checkpoint_every", 0), init=c.get("init"), lr=c["lr"], seed=c["seed"],
                threads=threads or c.get("num_threads"), device=device or config.default_device(),
                name="qa-minilm", out=None, xquad_dev=True, dtype=rec.get("engine_config", {}).get("dtype", "fp32"),
                freeze=tuple(c.get("freeze") or ()), quant_aware_steps=int(c.get("quant_aware_steps") or 0))


def _retrain(ctx, name: str, device: str | None, threads: int | None) -> None:
    """Retrain one of :data:`REPRODUCED` with its committed record's settings; a run that stopped on its time
    budget is repeated with its step count (deterministic) instead of the budget (machine-dependent)."""
    from tfc import models

    if name == "qa-minilm":
        # `tfc train qa` is a command of the same group (tfc.cli.train, which imports this module): looked up
        # through the group instead of imported, so that the two modules do not import each other
        qa_cmd = ctx.parent.command.get_command(ctx.parent, "qa") if ctx.parent is not None else None
        if qa_cmd is None:
            raise click.UsageError("retraining tfc/qa-minilm needs the `tfc train` group's `qa` command")
        args = _recorded_qa_args(device, threads)
        click.echo(f"[reproduce] training tfc/{name} ({args['max_steps']} steps)")
        ctx.invoke(qa_cmd, **args)
        return
    try:
        cfg = models.training_record(f"tfc/{name}")
        steps, c = cfg.get("steps"), cfg.get("config", {})
    except FileNotFoundError:
        cfg, steps, c = {}, None, {}
    cmd = {"nli-minilm": nli_cmd, "alignscore-minilm": alignscore_cmd}[name]
    click.echo(f"[reproduce] training tfc/{name} ({steps or 'default'} steps)")
    ctx.invoke(cmd, base=c.get("base", "minilm"), max_minutes=None, max_steps=steps or c.get("max_steps"),
               batch_size=c.get("batch_size"), grad_accum=c.get("grad_accum"), max_length=c.get("max_length"),
               lr=c.get("lr"), device=device, seed=c.get("seed"), threads=threads or c.get("num_threads"),
               sample=None, synthetic=None, out=None, name=None, mix_file=None, save_dtype=None)


@click.command("reproduce")
@click.option("--device", default=None, help="cpu or cuda (default: TFC_DEVICE, else cuda if present)")
@click.option("--threads", type=int, default=None, help="torch CPU threads")
@click.option("--only", "only", multiple=True, type=click.Choice(REPRODUCED),
              help="retrain only this checkpoint (repeatable; default: all three)")
@click.option("--skip-training", is_flag=True, help="only rescore (the checkpoints must be installed)")
@click.option("--skip-scoring", is_flag=True,
              help="only retrain and write the records (with --skip-training: nothing to do, an error)")
@click.pass_context
def reproduce_cmd(ctx, device, threads, only, skip_training, skip_scoring):
    """Retrain tfc/nli-minilm, tfc/alignscore-minilm and the QA reader tfc/qa-minilm from their committed
    records, write their records (results/models/), and rescore every plan of `tfc train score-inhouse` into
    the cache. A retrained checkpoint has a new identity, so its scores land under new signatures beside the
    committed ones (the book's full mode computes the chapters' scores for it, Q² and QAGS included).
    `--only qa-minilm` retrains the QA reader alone."""
    from tfc.runs import inhouse_models

    if skip_training and skip_scoring:
        raise click.UsageError("--skip-training with --skip-scoring leaves nothing to do")
    names = [n for n in REPRODUCED if n in only] if only else list(REPRODUCED)
    if not skip_training:
        for name in names:
            _retrain(ctx, name, device, threads)
    for name in names:
        click.echo(f"record: {inhouse_models.write_record(name, retrain=f'reproduce --only {name}')}")
    if skip_scoring:
        return
    if not set(names) & {"nli-minilm", "alignscore-minilm"}:
        click.echo("[reproduce] no plan of `tfc train score-inhouse` reads tfc/qa-minilm: QAGS and Q² are scored by "
                   "the book's full mode or `tfc train score-qgqa`")
        return
    ctx.invoke(score_inhouse_cmd, plans=(), threads=threads, batch_size=None, datasets=(), split=None)


@click.command("aggregation")
@click.argument("checkpoint")
@click.option("--rows", type=int, default=None, help="rows per dev set, stratified (default: tfc.runs.aggregation.DEV_ROWS)")
@click.option("--seed", type=int, default=None)
@click.option("--threads", type=int, default=None, help="torch CPU threads")
@click.option("--record/--no-record", default=True, show_default=True,
              help="write the sweep to the model's card and committed record (tfc/<name> only)")
def aggregation_cmd(checkpoint, rows, seed, threads, record):
    """Choose a sentence model's SummaC-ZS reading on training-side dev data (BEGIN v1 test, leave-one-out
    ANLI passages; never TRUE): every reading of tfc.runs.aggregation.AGGREGATIONS, AUC per dev set; the
    choice keeps the preset's settings unless a change gains more than tfc.runs.aggregation.MARGIN."""
    from tfc.runs import aggregation as A

    if threads:
        import torch

        torch.set_num_threads(threads)
    res = A.run(checkpoint, n=rows or A.DEV_ROWS, seed=A.DEV_SEED if seed is None else seed)
    click.echo(A.wide(res["table"]).round(1).to_string())
    click.echo(f"chosen: {res['chosen']} ({json.dumps(res['chosen_overrides'])})")
    if record:
        if not checkpoint.startswith("tfc/"):
            raise click.ClickException("--record needs an in-house checkpoint (tfc/<name>); use --no-record")
        A.record(checkpoint, res)


COMMANDS = (nli_cmd, alignscore_cmd, sentence_cmd, convert_cmd, mix_cmd, score_inhouse_cmd, score_qgqa_cmd,
            q2_sweep_cmd, reproduce_cmd, aggregation_cmd)


def register(group: click.Group) -> click.Group:
    """Add the in-house checkpoints' commands (:data:`COMMANDS`) to a click group (``tfc train``)."""
    for cmd in COMMANDS:
        group.add_command(cmd)
    return group
