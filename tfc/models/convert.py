"""Convert the papers' released checkpoints into layouts the tfc scorers read (``tfc models convert ...``).

**AlignScore** (Zha et al., 2023) released two PyTorch-Lightning checkpoints, ``AlignScore-base.ckpt``
(RoBERTa-base) and ``AlignScore-large.ckpt`` (RoBERTa-large). Their ``state_dict`` holds the
``BERTAlignModel`` of ``src/alignscore/model.py`` (yuh-zha/AlignScore):

* ``base_model.*`` -- a ``RobertaModel`` *with* its pooler (``base_model.pooler.dense``);
* ``mlm_head.*`` -- the masked-LM head used in training only (dropped here);
* ``tri_layer`` (3 logits), ``bin_layer`` (2 logits), ``reg_layer`` (1 value), each a ``nn.Linear``
  reading ``pooler_output = tanh(pooler.dense(h[:, 0]))``.

AlignScore's inference reads ``softmax(tri)[:, 0]`` (label 0 = aligned/entailment; its NLI data use
0 = entailment, 1 = neutral, 2 = contradiction), ``softmax(bin)[:, 1]`` and the raw ``reg[:, 0]``.

:func:`convert_alignscore` maps this onto transformers' own classes, with no custom code:

* ``RobertaForSequenceClassification``: ``roberta.*`` <- ``base_model.*`` (without the pooler);
  its ``classifier.dense`` <- ``base_model.pooler.dense`` and ``classifier.out_proj`` <- ``tri_layer``.
  The RoBERTa classification head computes ``out_proj(tanh(dense(h[:, 0])))`` (dropout is off in eval),
  which is exactly ``tri_layer(pooler_output)``. So the directory loads as an ordinary 3-way NLI
  classifier (``id2label`` entailment / neutral / contradiction) for the ``nli`` and SummaC scorers.
  For BERT/ALBERT backbones (not released, but the same code trains them) the pooler keeps its place
  and ``classifier`` <- ``tri_layer``.
* ``bin_layer`` and ``reg_layer`` go to the side files ``tfc_heads.safetensors`` + ``tfc_heads.json``
  (keys ``bin.weight``... as :func:`tfc.models.multihead.save_checkpoint` writes them) with the format
  :data:`POOLED_FORMAT`: they read the *pooled* features (the input of ``classifier.out_proj``), not the
  first-token features of tfc's own heads, and ``reg`` has no activation (AlignScore uses the raw
  value). The in-house loader refuses this format (unknown ``format``) rather than misreading it;
  :func:`tfc.scorers.alignscore_model.load_alignscore_dir` reads it and :mod:`tfc.scorers.alignscore` dispatches to it.

Safety: the ``.ckpt`` is read with ``torch.load(..., weights_only=True)`` only. A checkpoint whose
pickle needs anything beyond tensors and primitive containers is refused with
:class:`UnsafeCheckpointError`, naming the type that the pickle asked for.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

POOLED_FORMAT = "alignscore-pooled-v1"
from tfc.models.multihead import HEADS_FILE, HEADS_META, LABEL3  # noqa: E402  (the same side files as tfc's own)

CONVERSION_RECORD = "conversion.json"
ROBERTA_TYPES = ("roberta", "xlm-roberta")


class UnsafeCheckpointError(ValueError):
    """A checkpoint's pickle needs objects other than tensors and primitives: not loaded."""


class CheckpointLayoutError(ValueError):
    """A checkpoint's keys or shapes do not match the layout the converter expects."""


# --------------------------------------------------------------------------------------------------
# safe loading

def load_checkpoint_safely(path) -> dict:
    """``torch.load(path, map_location="cpu", weights_only=True)``; a pickle that needs other globals is
    refused with :class:`UnsafeCheckpointError` naming them."""
    import pickle

    import torch

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint file at {path}")
    try:
        obj = torch.load(str(path), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        names = sorted(set(re.findall(r"GLOBAL ([A-Za-z_][\w.]*)", str(exc)))) or ["an object torch does not allow"]
        raise UnsafeCheckpointError(
            f"{path}: refusing to unpickle {', '.join(names)}. tfc loads checkpoints with weights_only=True "
            "(tensors and primitive containers only) and never runs arbitrary pickles. If you trust this "
            "file, re-save just its tensors (e.g. {'state_dict': ckpt['state_dict']}) from a separate "
            "environment and convert that file.") from None
    if not isinstance(obj, dict):
        raise CheckpointLayoutError(f"{path}: expected a dict (a Lightning checkpoint), got {type(obj).__name__}")
    return obj


# --------------------------------------------------------------------------------------------------
# AlignScore

def split_alignscore_state(state: dict) -> dict:
    """Group an AlignScore ``state_dict`` into ``base`` (``base_model.*`` minus the prefix), ``tri``,
    ``bin``, ``reg`` (``weight``/``bias``) and ``dropped`` (names of ``mlm_head.*`` keys).

    Any other key is an error (e.g. the ELECTRA variant's ``generator.*``/``discriminator_predictor.*``).
    """
    out = {"base": {}, "tri": {}, "bin": {}, "reg": {}, "dropped": []}
    unknown = []
    for k, v in state.items():
        k2 = k
        if k2.startswith("base_model."):
            out["base"][k2[len("base_model."):]] = v
        elif k2.startswith("mlm_head."):
            out["dropped"].append(k)
        else:
            m = re.fullmatch(r"(tri|bin|reg)_layer\.(weight|bias)", k2)
            if m:
                out[m.group(1)][m.group(2)] = v
            else:
                unknown.append(k)
    if unknown:
        raise CheckpointLayoutError(f"unexpected keys in the AlignScore state_dict (not base_model.*, mlm_head.*, "
                                    f"tri/bin/reg_layer.*): {unknown[:8]}{' ...' if len(unknown) > 8 else ''}")
    if not out["base"]:
        raise CheckpointLayoutError("no base_model.* keys: this is not an AlignScore BERTAlignModel checkpoint")
    for h, n in (("tri", 3), ("bin", 2), ("reg", 1)):
        if set(out[h]) != {"weight", "bias"}:
            raise CheckpointLayoutError(f"{h}_layer.weight/bias missing from the state_dict (found {sorted(out[h])})")
        if tuple(out[h]["weight"].shape[:1]) != (n,):
            raise CheckpointLayoutError(f"{h}_layer.weight has shape {tuple(out[h]['weight'].shape)}, expected ({n}, hidden)")
    return out


def _hf_state(seqcls, parts: dict) -> dict:
    """The ``*ForSequenceClassification`` state dict built from the AlignScore parts."""
    prefix = seqcls.base_model_prefix
    model_type = seqcls.config.model_type
    sd = {}
    for k, v in parts["base"].items():
        if model_type in ROBERTA_TYPES and k.startswith("pooler."):
            continue
        sd[f"{prefix}.{k}"] = v
    if model_type in ROBERTA_TYPES:
        if "pooler.dense.weight" not in parts["base"]:
            raise CheckpointLayoutError("base_model.pooler.dense.* missing: AlignScore heads read the pooler output")
        sd["classifier.dense.weight"] = parts["base"]["pooler.dense.weight"]
        sd["classifier.dense.bias"] = parts["base"]["pooler.dense.bias"]
        sd["classifier.out_proj.weight"] = parts["tri"]["weight"]
        sd["classifier.out_proj.bias"] = parts["tri"]["bias"]
    else:
        sd["classifier.weight"] = parts["tri"]["weight"]
        sd["classifier.bias"] = parts["tri"]["bias"]
    return sd


def convert_alignscore(ckpt, out_dir, base: str | None = None, overwrite: bool = False) -> dict:
    """Convert an AlignScore Lightning ``.ckpt`` into ``out_dir`` (HF directory + pooled side heads).

    ``base``: the backbone's config + tokenizer (a local directory or a hub id in the HF cache,
    e.g. ``roberta-large``); default: ``hyper_parameters["model"]`` of the checkpoint. The number of
    attention heads cannot be read from weight shapes, so the config comes from there; every weight
    shape is then checked against it. Returns the conversion record (also written to
    ``conversion.json``).
    """
    import hashlib

    import torch
    from safetensors.torch import save_file
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    ckpt, out_dir = Path(ckpt), Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()) and not overwrite:
        raise FileExistsError(f"{out_dir} exists and is not empty (pass overwrite=True / --overwrite)")
    obj = load_checkpoint_safely(ckpt)
    state = obj.get("state_dict", obj)
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointLayoutError(f"{ckpt}: no state_dict of tensors (keys: {sorted(obj)[:10]})")
    hparams = obj.get("hyper_parameters") or {}
    base = base or hparams.get("model")
    if not base:
        raise ValueError(f"{ckpt} names no backbone (hyper_parameters['model']); pass base= (e.g. roberta-large)")
    hp_model = str(hparams.get("model", ""))
    if "electra" in hp_model:
        raise CheckpointLayoutError("the ELECTRA variant of AlignScore (generator + discriminator) is not supported")
    parts = split_alignscore_state(state)
    from tfc import models

    base_path = models.resolve(base)
    cfg = AutoConfig.from_pretrained(base_path)
    if hp_model and cfg.model_type not in hp_model and not (cfg.model_type == "roberta" and "muppet" in hp_model):
        raise CheckpointLayoutError(f"the checkpoint was trained on {hp_model!r} but base {base!r} is a "
                                    f"{cfg.model_type!r} config")
    cfg.num_labels = 3
    cfg.id2label = dict(enumerate(LABEL3))
    cfg.label2id = {v: k for k, v in cfg.id2label.items()}
    cfg.architectures = None
    seqcls = AutoModelForSequenceClassification.from_config(cfg)
    sd = _hf_state(seqcls, parts)
    want = seqcls.state_dict()
    # older transformers saved the position_ids buffer; newer ones rebuild it (never a learned weight)
    sd = {k: v for k, v in sd.items() if not (k.endswith("embeddings.position_ids") and k not in want)}
    missing = [k for k in want if k not in sd and not k.endswith("position_ids")]
    unexpected = [k for k in sd if k not in want]
    shapes = [f"{k}: {tuple(sd[k].shape)} vs {tuple(want[k].shape)}" for k in sd
              if k in want and tuple(sd[k].shape) != tuple(want[k].shape)]
    if missing or unexpected or shapes:
        raise CheckpointLayoutError(f"{ckpt} does not fit the {base!r} config: missing {missing[:6]}, "
                                    f"unexpected {unexpected[:6]}, shape mismatches {shapes[:6]}")
    seqcls.load_state_dict({k: v.float() for k, v in sd.items()}, strict=False)
    seqcls.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    seqcls.save_pretrained(out_dir, safe_serialization=True)
    AutoTokenizer.from_pretrained(base_path).save_pretrained(out_dir)
    heads = {f"{h}.{k}": parts[h][k].detach().float().cpu().contiguous() for h in ("bin", "reg") for k in ("weight", "bias")}
    save_file(heads, str(out_dir / HEADS_FILE))
    meta = {"format": POOLED_FORMAT,
            "features": "pooled: input of model.classifier.out_proj (RoBERTa) or of model.classifier (BERT/ALBERT), "
                        "i.e. AlignScore's pooler_output",
            "heads": {"bin": {"labels": ["not_aligned", "aligned"], "aligned_index": 1, "activation": "softmax"},
                      "reg": {"activation": "identity", "note": "AlignScore reads the raw regression output"}}}
    (out_dir / HEADS_META).write_text(json.dumps(meta, indent=2) + "\n")
    h = hashlib.sha256()
    with open(ckpt, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    record = {"source": "AlignScore Lightning checkpoint", "file": ckpt.name, "sha256": h.hexdigest(),
              "base": str(base), "hyper_parameters_model": hp_model or None,
              "dropped_keys": len(parts["dropped"]), "model_type": cfg.model_type,
              "tri_label_order": list(LABEL3)}
    (out_dir / CONVERSION_RECORD).write_text(json.dumps(record, indent=2) + "\n")
    return record


def is_pooled_alignscore(path) -> bool:
    """True for a directory written by :func:`convert_alignscore`."""
    meta = Path(path) / HEADS_META
    if not meta.is_file():
        return False
    try:
        return json.loads(meta.read_text()).get("format") == POOLED_FORMAT
    except ValueError:
        return False


def _pooled_model(seqcls):
    """The multi-head model (:mod:`tfc.models.multihead`) in AlignScore's layout: bin/reg heads on the pooled
    features, the regression output raw. ``forward`` returns ``{"3way": [B, 3], "bin": [B, 2], "reg": [B]}``."""
    from tfc.models.multihead import TASKS, multihead_class

    try:
        return multihead_class()(seqcls, TASKS, features="pooled", reg="raw")
    except ValueError as exc:
        raise CheckpointLayoutError(str(exc)) from exc


def load_pooled_multihead(path, device: str = "cpu"):
    """(model, tokenizer) of a converted AlignScore directory, in eval mode."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from tfc import models

    path = Path(path)
    if not is_pooled_alignscore(path):
        raise ValueError(f"{path} is not a converted AlignScore directory ({HEADS_META} format {POOLED_FORMAT!r})")
    seqcls = AutoModelForSequenceClassification.from_pretrained(path, dtype=torch.float32)
    labels = models.label_names(seqcls.config.id2label, LABEL3)
    model = _pooled_model(seqcls)
    tensors = load_file(str(path / HEADS_FILE))
    for name, head in model.heads.items():
        head.load_state_dict({k.split(".", 1)[1]: v.float() for k, v in tensors.items() if k.startswith(name + ".")})
    model.label_index = {lab: i for i, lab in enumerate(labels)}
    tok = AutoTokenizer.from_pretrained(path)
    return model.to(torch.device(device)).eval(), tok
