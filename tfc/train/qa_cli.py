"""``tfc train qa``: the in-house extractive QA model ``tfc/qa-minilm`` (see :mod:`tfc.train.qa`)."""
from __future__ import annotations

import json

import click


@click.command("qa")
@click.option("--base", default="minilm", show_default=True, help="base encoder ('minilm', a local HF dir or hub id)")
@click.option("--sample", type=int, default=3000, show_default=True, help="pairs per training source")
@click.option("--per-pair", type=int, default=2, show_default=True, help="answer candidates per pair")
@click.option("--heldout-pairs", type=int, default=300, show_default=True)
@click.option("--max-steps", type=int, default=3000, show_default=True)
@click.option("--max-minutes", type=float, default=None, help="stop cleanly (and save) after this time")
@click.option("--batch-size", type=int, default=32, show_default=True)
@click.option("--max-length", type=int, default=256, show_default=True)
@click.option("--lr", type=float, default=1e-4, show_default=True)
@click.option("--seed", type=int, default=2022, show_default=True)
@click.option("--threads", type=int, default=None, help="torch CPU threads")
@click.option("--device", default="cpu", show_default=True)
@click.option("--name", default="qa-minilm", show_default=True, help="checkpoint name under the artifacts dir")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="output dir (default <artifacts>/<name>)")
def qa_cmd(base, sample, per_pair, heldout_pairs, max_steps, max_minutes, batch_size, max_length, lr, seed,
           threads, device, name, out):
    """Build the self-supervised QA set from training-side text and train an extractive QA model."""
    from tfc.train.qa import QATrainConfig, build_qa_set, train_qa

    click.echo(f"building the QA set ({sample} pairs per source, leakage filter, rule-based questions) ...")
    train_df, heldout, report = build_qa_set(sample=sample, seed=seed, per_pair=per_pair, heldout_pairs=heldout_pairs)
    click.echo(json.dumps({k: report[k] for k in ("rows_by_kind", "train_rows", "heldout_rows", "no_answer_frac",
                                                  "spacy_parse_seconds")}))
    cfg = QATrainConfig(name=name, base=base, max_length=max_length, batch_size=batch_size, lr=lr,
                        max_steps=max_steps, max_minutes=max_minutes, seed=seed, device=device, num_threads=threads)
    s = train_qa(train_df, cfg, out_dir=out, heldout=heldout, data_report=report, progress=False)
    click.echo(f"saved {out or name}: {s['steps']} steps ({s['stopped_by']}), {s['train_seconds']} s, "
               f"{s['examples_per_second']} ex/s; held-out {json.dumps({k: v for k, v in s['heldout_eval'].items() if k != 'by_kind'})}")
