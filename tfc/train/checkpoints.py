"""A trained checkpoint's files: their dtype on disk, the model card, and the benchmark results it records."""
from __future__ import annotations

import json
from pathlib import Path


def convert_checkpoint_dtype(ckpt_dir, dtype: str = "fp16") -> list[str]:
    """Rewrite a checkpoint's safetensors files (model and side heads) in ``fp16`` or ``fp32``, in place.

    For the trip back from a GPU machine (64 MiB per transfer): MiniLM-L6 is 90 MB in fp32 and 45 MB in fp16.
    Loaders (:func:`tfc.models.multihead.load_multihead`, ``tfc.models.load_sequence_classifier``) cast to float32 on load.
    Returns the rewritten file names.
    """
    import torch
    from safetensors.torch import load_file, save_file

    target = {"fp16": torch.float16, "fp32": torch.float32}.get(dtype)
    if target is None:
        raise ValueError(f"dtype must be 'fp16' or 'fp32'; got {dtype!r}")
    done = []
    for f in sorted(Path(ckpt_dir).glob("*.safetensors")):
        t = load_file(str(f))
        t = {k: (v.to(target) if v.is_floating_point() else v).contiguous() for k, v in t.items()}
        save_file(t, str(f), metadata={"format": "pt"})
        done.append(f.name)
    if not done:
        raise FileNotFoundError(f"no .safetensors files in {ckpt_dir}")
    return done


# --------------------------------------------------------------------------------------------------
# model card

def write_model_card(ckpt_dir, summary: dict | None = None) -> Path:
    """(Re)write ``README.md`` of a checkpoint from its ``training_summary.json``."""
    ckpt_dir = Path(ckpt_dir)
    if summary is None:
        summary = json.loads((ckpt_dir / "training_summary.json").read_text())
    cfg = summary["config"]
    lines = [
        "---", "library_name: transformers", "pipeline_tag: text-classification", "tags: [nli, factual-consistency, tfc]", "---",
        f"# {summary['name']}", "",
        "An in-house checkpoint of the tfc project, trained offline on the training-side sets of the data "
        "mirror (never on the evaluation sets; leakage-filtered). It loads with "
        "`AutoModelForSequenceClassification.from_pretrained` as a 3-way NLI model "
        f"(id2label {summary['id2label']}).",
        "",
        "## Training", "",
        f"- base model: `{summary['base_model']}` ({summary['base_model_path']})",
        f"- heads: {', '.join(cfg['tasks'])}; loss: {summary['loss']}; weights {cfg['loss_weights']}",
        f"- steps: {summary['steps']} (stopped by {summary['stopped_by']}), batch {cfg['batch_size']} x "
        f"accumulation {cfg['grad_accum']}, lr {cfg['lr']}, warm-up ratio {cfg['warmup_ratio']}, "
        f"max length {cfg['max_length']}",
        f"- seed: {cfg['seed']}; device: {summary['device']}; dtype: {summary['dtype']}",
        f"- wall time: {summary['wall_seconds']} s (training {summary['train_seconds']} s, "
        f"{summary['examples_per_second']} examples/s)",
        f"- versions: {summary['versions']}",
        "",
        "## Data mix", "",
        f"{summary['mix']['rows']} rows (train {summary['mix']['train_rows']}, dev {summary['mix']['dev_rows']}), "
        f"sha256 `{summary['mix']['sha256']}`.", "",
        "| source | label space | rows | sha256 (16) |", "|---|---|---:|---|",
    ]
    lines += [f"| {r['source']} | {r['task']} | {r['rows']} | `{r['sha256']}` |" for r in summary["mix"]["by_source"]]
    rep = summary.get("mix_report") or {}
    if rep:
        lines += ["", "Leakage filter and mix report:", "", "```json", json.dumps(rep, indent=1, default=str), "```"]
    lines += ["", "## Evaluation", ""]
    if summary.get("dev_eval"):
        lines += ["Held-out rows of the mix:", "", "```json", json.dumps(summary["dev_eval"], indent=1), "```", ""]
    if summary.get("eval_results"):
        lines += ["Benchmark results:", "", "```json", json.dumps(summary["eval_results"], indent=1), "```"]
    else:
        lines += ["No benchmark results recorded yet (`tfc.train.checkpoints.record_eval_results`)."]
    path = ckpt_dir / "README.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def record_eval_results(ckpt_dir, results: dict) -> None:
    """Merge benchmark results (e.g. TRUE AUCs) into ``training_summary.json`` and re-render the card."""
    ckpt_dir = Path(ckpt_dir)
    p = ckpt_dir / "training_summary.json"
    summary = json.loads(p.read_text())
    summary.setdefault("eval_results", {}).update(results)
    p.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    write_model_card(ckpt_dir, summary)
