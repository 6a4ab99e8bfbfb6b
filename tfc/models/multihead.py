"""The multi-head alignment model: a Hugging Face ``*ForSequenceClassification`` (the 3-way NLI head) plus
AlignScore's extra ``bin`` and ``reg`` heads on the same features, saved as an ordinary HF directory plus
``tfc_heads.safetensors`` + ``tfc_heads.json``.

It lives in the models layer because three layers use it: the training engine builds and saves it
(:mod:`tfc.train.engine`), the scorers load it (:mod:`tfc.scorers.alignscore`), and the converter of the
papers' AlignScore checkpoints builds its ``pooled`` variant (:mod:`tfc.models.convert`).
"""
from __future__ import annotations

import json
from pathlib import Path

TASKS = ("3way", "bin", "reg")          # the heads
LABEL3 = ("entailment", "neutral", "contradiction")  # id order of the 3-way head
ID2LABEL = {i: lab for i, lab in enumerate(LABEL3)}
LABEL2ID = {lab: i for i, lab in ID2LABEL.items()}
BIN_LABELS = ("not_aligned", "aligned")
HEADS_FILE = "tfc_heads.safetensors"
HEADS_META = "tfc_heads.json"
HEADS_FORMAT = "tfc-heads-v1"


def build_heads(hidden: int, tasks):
    import torch.nn as nn

    heads = nn.ModuleDict()
    if "bin" in tasks:
        heads["bin"] = nn.Linear(hidden, 2)
    if "reg" in tasks:
        heads["reg"] = nn.Linear(hidden, 1)
    return heads


def multihead_class():
    import torch
    import torch.nn as nn

    class MultiHeadModel(nn.Module):
        """A ``*ForSequenceClassification`` model (the 3-way head) plus extra bin/reg heads.

        ``forward`` returns a dict: ``3way`` logits [B, 3], ``bin`` logits [B, 2], ``reg`` values [B]
        (the extra keys only when those heads exist).

        ``features``: what the extra heads read. ``"classifier"`` (tfc's own checkpoints): the input of
        ``model.classifier``, its first token when 3-D. ``"pooled"`` (AlignScore's released layout, see
        :mod:`tfc.models.convert`): the input of ``classifier.out_proj`` when the classifier has one
        (RoBERTa's dense + tanh pooling already applied), else of the classifier.
        ``reg``: ``"sigmoid"`` (tfc's, values in [0, 1]) or ``"raw"`` (AlignScore's regression output).
        """

        def __init__(self, seqcls, tasks=TASKS, features: str = "classifier", reg: str = "sigmoid"):
            super().__init__()
            if features not in ("classifier", "pooled") or reg not in ("sigmoid", "raw"):
                raise ValueError(f"features must be 'classifier' or 'pooled', reg 'sigmoid' or 'raw'; got {features!r}, {reg!r}")
            self.model = seqcls
            clf = getattr(seqcls, "classifier", None)
            if clf is None:
                raise ValueError(f"{type(seqcls).__name__} has no .classifier; cannot attach extra heads")
            target = (getattr(clf, "out_proj", None) or clf) if features == "pooled" else clf
            if not isinstance(target, nn.Linear) and features == "pooled":
                raise ValueError(f"{type(seqcls).__name__}: no linear output layer to read the pooled features from")
            self.reg_activation = reg
            self.heads = build_heads(seqcls.config.hidden_size, tasks)
            self._features = None
            target.register_forward_pre_hook(self._capture)

        def _capture(self, module, args):
            self._features = args[0]

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            kw = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                kw["token_type_ids"] = token_type_ids
            out = {"3way": self.model(**kw).logits}
            feats = self._features
            self._features = None
            if feats.dim() == 3:  # sequence-level classifier heads (RoBERTa, MPNet): use the first token
                feats = feats[:, 0]
            if "bin" in self.heads:
                out["bin"] = self.heads["bin"](feats)
            if "reg" in self.heads:
                reg = self.heads["reg"](feats).squeeze(-1)
                out["reg"] = torch.sigmoid(reg) if self.reg_activation == "sigmoid" else reg
            return out

    return MultiHeadModel


def load_multihead(ckpt_dir, device: str = "cpu"):
    """Load a saved checkpoint as a :class:`MultiHeadModel` (eval mode) and its tokenizer."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    ckpt_dir = Path(ckpt_dir)
    if not (ckpt_dir / "config.json").is_file():
        raise FileNotFoundError(f"no checkpoint (config.json) in {ckpt_dir}")
    seqcls = AutoModelForSequenceClassification.from_pretrained(ckpt_dir, dtype=torch.float32)
    labels = {int(k): v.lower() for k, v in seqcls.config.id2label.items()}
    if sorted(labels.values()) != sorted(LABEL3):
        raise ValueError(f"{ckpt_dir}: id2label {labels} is not a 3-way NLI label set {LABEL3}")
    tasks = ["3way"]
    tensors = {}
    if (ckpt_dir / HEADS_FILE).is_file():
        meta = json.loads((ckpt_dir / HEADS_META).read_text())
        if meta.get("format") != HEADS_FORMAT:
            raise ValueError(f"{ckpt_dir / HEADS_META}: unknown format {meta.get('format')!r}")
        tasks += list(meta["heads"])
        tensors = load_file(str(ckpt_dir / HEADS_FILE))
    model = multihead_class()(seqcls, tasks)
    for name, head in model.heads.items():
        head.load_state_dict({k.split(".", 1)[1]: v.float() for k, v in tensors.items() if k.startswith(name + ".")})
    model.label_index = {v: k for k, v in labels.items()}  # label name -> logit index
    tok = AutoTokenizer.from_pretrained(ckpt_dir)
    return model.to(torch.device(device)).eval(), tok


def save_checkpoint(model, tokenizer, out_dir: Path) -> None:
    """HF files (safetensors, config with id2label, tokenizer) + the extra heads' side files."""
    from safetensors.torch import save_file

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    for stale in (HEADS_FILE, HEADS_META):
        (out_dir / stale).unlink(missing_ok=True)
    if len(model.heads):
        tensors = {f"{name}.{k}": v.detach().cpu().contiguous() for name, head in model.heads.items()
                   for k, v in head.state_dict().items()}
        save_file(tensors, str(out_dir / HEADS_FILE))
        meta = {"format": HEADS_FORMAT, "features": "input of model.classifier (first token if 3-D)",
                "heads": {}}
        if "bin" in model.heads:
            meta["heads"]["bin"] = {"labels": list(BIN_LABELS), "aligned_index": 1, "activation": "softmax"}
        if "reg" in model.heads:
            meta["heads"]["reg"] = {"activation": "sigmoid", "range": [0.0, 1.0]}
        (out_dir / HEADS_META).write_text(json.dumps(meta, indent=2) + "\n")
