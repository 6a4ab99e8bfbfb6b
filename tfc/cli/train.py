"""``tfc train``: training pipelines (one click group).

``summac-conv``, ``qa`` (the extractive QA model) and ``wecheck`` are defined here; the in-house checkpoints' commands (``nli``, ``alignscore``, ``sentence``,
``convert``, ``mix``, ``score-inhouse``, ``reproduce``) live in :mod:`tfc.cli.train_inhouse` and
are attached once with its ``register`` hook.
"""
from __future__ import annotations

import json

import click


@click.group()
def train():
    """Train in-house checkpoints (saved under the artifacts dir as tfc/<name>)."""


@train.command("summac-conv")
@click.option("--checkpoint", "-c", required=True, help="NLI checkpoint (hub id, dir or tfc/<name>)")
@click.option("--dataset", "-d", "datasets", multiple=True, required=True, help="validation set(s) to train on")
@click.option("--split", default=None)
@click.option("--sample", type=int, default=None)
@click.option("--seed", type=int, default=0)
@click.option("--head", type=click.Choice(["package", "tfc"]), default="package", show_default=True,
              help="the package's head (as published: percentile-bin counts, its training loop) or tfc's convolution")
@click.option("--epochs", type=int, default=None, help="default: 5 for the package's head (its loop), 200 for tfc's")
@click.option("--lr", type=float, default=1e-2)
@click.option("--out", default="tfc/summac-conv", show_default=True, help="output dir or tfc/<name>")
@click.option("--label-names", default=None, help="comma-separated label order override")
@click.option("--grounding-granularity", default=None,
              help="the reading of the grounding (default: 'sentence' for the package's head, as published; for "
                   "tfc's, the one `summac-conv`'s default configuration reads)")
@click.option("--device", default=None)
def summac_conv(checkpoint, datasets, split, sample, seed, head, epochs, lr, out, label_names, grounding_granularity,
                device):
    """Train a SummaC-Conv head on NLI-matrix histograms of labelled examples; score with it by passing
    ``--conv-checkpoint OUT`` (and, for tfc's head, the same reading)."""
    from tfc.scorers import DEFAULTS
    from tfc.scorers.summac_conv import train_conv, train_package_head

    if head == "package":
        kw = {"grounding_granularity": grounding_granularity or "sentence"}
    else:
        kw = {"grounding_granularity": grounding_granularity or DEFAULTS["summac-conv"]["grounding_granularity"],
              "sentence_splitter": DEFAULTS["summac-conv"]["sentence_splitter"]}
    kw["device"] = device
    if label_names:
        kw["label_names"] = tuple(x.strip() for x in label_names.split(","))
    trainer = train_package_head if head == "package" else train_conv
    meta = trainer(checkpoint, list(datasets), out, split=split, sample=sample, seed=seed,
                   epochs=epochs or (5 if head == "package" else 200), lr=lr, **kw)
    click.echo(json.dumps({k: meta[k] for k in ("n_examples", "final_loss", "train_auc")}, indent=1))
    click.echo(f"saved to {out}")


@click.command("qa")
@click.option("--base", default="minilm", show_default=True, help="base encoder ('minilm', a local HF dir or hub id)")
@click.option("--sample", type=int, default=3000, show_default=True, help="pairs per training source")
@click.option("--per-pair", type=int, default=2, show_default=True, help="answer candidates per pair")
@click.option("--heldout-pairs", type=int, default=300, show_default=True)
@click.option("--max-steps", type=int, default=3000, show_default=True)
@click.option("--max-minutes", type=float, default=None, help="stop cleanly (and save) after this time")
@click.option("--batch-size", type=int, default=32, show_default=True)
@click.option("--max-length", type=int, default=384, show_default=True)
@click.option("--doc-stride", type=int, default=None, help="window overlap in tokens (default max_length // 3; 0 = none)")
@click.option("--long-frac", type=float, default=0.25, show_default=True,
              help="share of cross/ground training rows also given a long, multi-passage context")
@click.option("--eval-every", type=int, default=0, show_default=True,
              help="steps between dev-curve points (held-out pairs and XQuAD); 0 = end only")
@click.option("--checkpoint-every", type=int, default=0, show_default=True, help="steps between resumable states")
@click.option("--init", default=None, help="start from this checkpoint's encoder (dir or tfc/<name>) instead of --base")
@click.option("--lr", type=float, default=1e-4, show_default=True)
@click.option("--seed", type=int, default=2022, show_default=True)
@click.option("--threads", type=int, default=None, help="torch CPU threads")
@click.option("--device", default="cpu", show_default=True)
@click.option("--name", default="qa-minilm", show_default=True, help="checkpoint name under the artifacts dir")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="output dir (default <artifacts>/<name>)")
@click.option("--xquad-dev/--no-xquad-dev", default=True, show_default=True,
              help="evaluate on XQuAD-English (1,190 human-written questions; a dev set, never trained on)")
@click.option("--dtype", type=click.Choice(["fp32", "bf16"]), default="fp32", show_default=True,
              help="bf16: autocast, fast where the CPU has native bf16 (avx512_bf16/AMX) or on a GPU")
@click.option("--freeze", multiple=True, default=(),
              help="keep parameters whose name contains this at the base's values (repeatable), e.g. "
                   "embeddings.word_embeddings: the release then shares that matrix with the installed base")
@click.option("--quant-aware-steps", type=int, default=0, show_default=True,
              help="train the last N steps through the int8 delta packing against --base that the release ships "
                   "(pack with --share-with BASE --delta): the checkpoint is then the packed model")
def qa_cmd(base, sample, per_pair, heldout_pairs, max_steps, max_minutes, batch_size, max_length, doc_stride,
           long_frac, eval_every, checkpoint_every, init, lr, seed, threads, device, name, out, xquad_dev, dtype,
           freeze=(), quant_aware_steps=0):
    """Build the self-supervised QA set from training-side text and train an extractive QA model."""
    from tfc.train.qa import QATrainConfig, train_qa
    from tfc.train.qa_set import build_qa_set, xquad_frame

    click.echo(f"building the QA set ({sample} pairs per source, leakage filter, rule-based questions) ...")
    train_df, heldout, report = build_qa_set(sample=sample, seed=seed, per_pair=per_pair, heldout_pairs=heldout_pairs,
                                             long_frac=long_frac)
    click.echo(json.dumps({k: report[k] for k in ("rows_by_kind", "train_rows", "heldout_rows", "no_answer_frac",
                                                  "spacy_parse_seconds")}))
    cfg = QATrainConfig(name=name, base=base, max_length=max_length, batch_size=batch_size, lr=lr,
                        max_steps=max_steps, max_minutes=max_minutes, seed=seed, device=device, num_threads=threads,
                        doc_stride=doc_stride, eval_every=eval_every, checkpoint_every=checkpoint_every, init=init,
                        dtype=dtype, freeze=tuple(freeze), quant_aware_steps=quant_aware_steps)
    dev = xquad_frame() if xquad_dev else None
    s = train_qa(train_df, cfg, out_dir=out, heldout=heldout, data_report=report, progress=False, dev=dev)
    click.echo(f"saved {out or name}: {s['steps']} steps ({s['stopped_by']}), {s['train_seconds']} s, "
               f"{s['examples_per_second']} ex/s; held-out {json.dumps({k: v for k, v in s['heldout_eval'].items() if k != 'by_kind'})}")
    if s.get("dev_eval_human"):
        click.echo(f"XQuAD-English dev: {json.dumps({k: v for k, v in s['dev_eval_human'].items() if k != 'by_kind'})}")


@click.command("wecheck")
@click.option("--run", "runs", multiple=True, help="run name(s) from tfc.train.wecheck.RUNS (default: wecheck-minilm)")
@click.option("--all", "all_runs", is_flag=True, help="every run in RUNS (main model, Table 2/3/5 ablations)")
@click.option("--signals-only", is_flag=True, help="only compute the weak pool's own signals (score cache)")
@click.option("--eval/--no-eval", "do_eval", default=True, show_default=True,
              help="score each trained checkpoint on the TRUE sets (stratified sample) and record it")
@click.option("--eval-sample", type=int, default=None, help="rows per TRUE set (default tfc.train.wecheck_eval.EVAL_SAMPLE; 0 = all)")
@click.option("--eval-subset", type=int, default=None,
              help="score only this many rows of each set's evaluation sample (nested; the ablation tables)")
@click.option("--pool-sample", type=int, default=None, help="weak-pool rows per task (default from the config)")
@click.option("--max-train-rows", type=int, default=None)
@click.option("--epochs", type=float, default=None)
@click.option("--lr", type=float, default=None)
@click.option("--threads", type=int, default=None, help="torch CPU threads")
@click.option("--device", default=None)
@click.option("--max-minutes", type=float, default=None)
@click.option("--out", type=click.Path(file_okay=False), default=None, help="output dir (one run only)")
@click.option("--record/--no-record", default=True, show_default=True,
              help="copy card, summary and identity to results/models/<name>/")
def wecheck_cmd(runs, all_runs, signals_only, do_eval, eval_sample, eval_subset, pool_sample, max_train_rows, epochs, lr,
                threads, device, max_minutes, out, record):
    """WeCheck weak supervision: weak pool -> label model -> noise filter -> fine-tune tfc/nli-minilm."""
    from tfc import config
    from tfc.train import wecheck as W
    from tfc.train import wecheck_eval as WE
    from tfc.train import wecheck_pool as WP

    if threads:
        import torch

        torch.set_num_threads(int(threads))
    names = list(W.RUNS) if all_runs else (list(runs) or ["wecheck-minilm"])
    if out and len(names) > 1:
        raise click.UsageError("--out works with a single run")
    over = {k: v for k, v in dict(pool_sample=pool_sample, max_train_rows=max_train_rows, epochs=epochs, lr=lr,
                                  num_threads=threads, max_minutes=max_minutes,
                                  device=device or config.default_device()).items() if v is not None}
    try:
        cfgs = [W.run_config(n, **over) for n in names]
    except (KeyError, TypeError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    pools = {}

    def pool_for(cfg):   # built on first use (the runs' own signals come from the score cache)
        key = (cfg.tasks, cfg.leaked, cfg.pool_sample, cfg.seed)
        if key not in pools:
            own = tuple(c for c in cfg.signals if c in WP.OURS)
            pools[key] = WP.weak_frame(cfg.tasks, leaked=cfg.leaked, sample=cfg.pool_sample, seed=cfg.seed,
                                      with_own=own)
            click.echo(json.dumps({"pool": list(cfg.tasks), "leaked": cfg.leaked, "rows": len(pools[key][0]),
                                   "leakage": pools[key][1].to_dict("records")}, default=str))
        return pools[key]

    if signals_only:
        for cfg in cfgs:
            pool_for(cfg)
        return
    sample = WE.EVAL_SAMPLE if eval_sample is None else (eval_sample or None)
    for cfg in cfgs:
        pool, rep = pool_for(cfg)
        res = W.train_wecheck(cfg, pool=pool, leak_report=rep, out_dir=out)
        s = res.summary
        click.echo(json.dumps({"run": cfg.name, "steps": s["steps"], "train_seconds": s["train_seconds"],
                               "train_rows": s["mix"]["train_rows"], "dev": s["dev_eval"]}))
        if record and not out:
            W.write_record(cfg.name)
        if do_eval and not out:
            WE.evaluate(f"tfc/{cfg.name}", datasets=W.RUN_EVAL_SETS.get(cfg.name), sample=sample, subset=eval_subset,
                       log=click.echo)


@click.command("readings")
@click.argument("checkpoint")
@click.option("--rows", type=int, default=None, help="rows per dev set (default tfc.runs.readings.ROWS)")
@click.option("--record/--no-record", default=True, show_default=True,
              help="write results/models/<name>/readings_dev.json (the defaults' evidence)")
@click.option("--scorers", default=None,
              help="comma-separated scorers of tfc.runs.readings.READINGS (default: nli, summac-zs, alignscore, "
                   "tfc.runs.readings.ALIGNMENT_SCORERS; a WeCheck checkpoint: wecheck)")
def readings_cmd(checkpoint, rows, record, scorers):
    """Score every reading of the scorers (nli, summac-zs and alignscore unless named) with CHECKPOINT on the
    training-side dev sets (dialogue, paragraph and long groundings) and choose each scorer's default reading."""
    from tfc.runs import readings as R

    names = tuple(x.strip() for x in scorers.split(",") if x.strip()) if scorers else R.ALIGNMENT_SCORERS
    unknown = sorted(set(names) - set(R.READINGS))
    if unknown:
        raise click.BadParameter(f"no readings for {unknown}; known: {sorted(R.READINGS)}", param_hint="--scorers")
    res = R.run(checkpoint, scorers=names, **({"n": rows} if rows else {}))
    click.echo(R.wide(res).round(1).to_string(index=False))
    click.echo(json.dumps(res["chosen"]))
    if record:
        R.record(res)


@click.command("ensemble-reference")
@click.option("--members", default="q2,nli,summac-zs", show_default=True, help="comma-separated registry names")
@click.option("--rows", type=int, default=150, show_default=True, help="rows per training-side dev set")
@click.option("--name", default="ensemble-reference", show_default=True, help="release folder under results/release")
@click.option("--reuse/--no-reuse", default=True, show_default=True,
              help="keep the shipped reference's scores of a member whose signature and rows are unchanged")
def ensemble_reference_cmd(members, rows, name, reuse):
    """Fit the ensemble's fixed normalisation: each member's (default configuration) scores on a sample of the
    training-side dev sets of tfc.runs.readings, shipped as results/release/<name>."""
    from tfc.models import release
    from tfc.runs import readings as R
    from tfc.scorers.ensemble import REFERENCE_FILE, fit_reference

    shipped = release.release_dir(name) / REFERENCE_FILE
    before = json.loads(shipped.read_text()) if reuse and shipped.is_file() else None
    out = fit_reference([m.strip() for m in members.split(",") if m.strip()], R.dev_frames(rows), name, reuse=before)
    click.echo(json.dumps({"rows": out["rows"], "members": {k: v["name"] for k, v in out["members"].items()}}))


@click.command("conv-release")
@click.option("--checkpoint", default=None, help="the sentence model (default: the shipped one)")
@click.option("--head", type=click.Choice(["tfc", "package"]), default="tfc", show_default=True,
              help="tfc's head (results/release/summac-conv-minilm) or the package's (summac-conv-package-minilm)")
def conv_release_cmd(checkpoint, head):
    """Fit a SummaC-Conv head on training-side dev pairs (tfc's at the reading chosen for SummaC-ZS; the package's
    on sentence matrices, as published), measure it on held-out dev pairs, and ship it under results/release with
    its record."""
    from tfc.runs import conv

    meta = conv.run(checkpoint, head)
    click.echo(json.dumps({k: meta[k] for k in ("n_examples", "train_auc", "dev_auc")}, indent=1))


@click.command("calibration")
@click.argument("scorer")
@click.option("--name", required=True, help="the map's release name (results/release/<name>)")
def calibration_cmd(scorer, name):
    """Fit SCORER's default (raw) calibration map on training-side dev pairs, ship it as results/release/<name>,
    and record its ECE before and after on the dev sets and on TRUE's sets (measured there, never fitted)."""
    from tfc.runs import calibrate

    rec = calibrate.run(scorer, name)
    calibrate.record(rec)
    click.echo(json.dumps({k: rec[k] for k in ("map", "fit", "dev", "isotonic_dev_ece")}, indent=1, default=float))


train.add_command(qa_cmd)       # the extractive QA reader of QAGS and Q²
train.add_command(wecheck_cmd)  # WeCheck
train.add_command(readings_cmd)
train.add_command(ensemble_reference_cmd)
train.add_command(calibration_cmd)
train.add_command(conv_release_cmd)

# the in-house checkpoints' commands (light: click only at import)
from tfc.cli.train_inhouse import register as _register_inhouse  # noqa: E402

_register_inhouse(train)
