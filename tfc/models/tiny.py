"""Tiny random-weight checkpoints for tests, smoke runs and benchmarks (no download needed).

:func:`make_tiny_classifier` writes a 2-layer, hidden-32 BERT sequence classifier and a WordPiece
tokenizer built from a small word list to a directory, with ``save_pretrained``, so that tests load it
through the real path (:func:`tfc.models.load_sequence_classifier`). Its scores are meaningless.

:func:`make_minilm_classifier` puts a seeded, randomly initialised 3-way classification head on the
offline MiniLM-L6 encoder (for throughput benchmarks while no trained NLI checkpoint exists).
"""
from __future__ import annotations

from pathlib import Path

WORDS = ("the a an of to in and is was for on that with as by at from it he she they his her "
         "cat dog sat mat man woman city year said police new first two three people court report "
         "company president government game team won lost play house car ran walked went saw "
         "yes no not never always big small good bad red blue green . , ! ? ' \" ( ) - : ; 0 1 2 3 4 5 6 7 8 9"
         ).split()
NLI3 = {0: "entailment", 1: "neutral", 2: "contradiction"}


def _vocab(extra=()) -> list[str]:
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    pieces = [f"##{c}" for c in letters] + [f"##{d}" for d in "0123456789"]
    return list(dict.fromkeys(special + list(WORDS) + list(extra) + letters + pieces))


def make_tiny_classifier(path, id2label: dict | None = None, seed: int = 0, hidden: int = 32,
                         layers: int = 2, max_position: int = 128) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab = _vocab()
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    # `vocab=` (transformers 5; its `vocab_file=` is silently ignored and leaves a 5-token vocabulary)
    tok = BertTokenizerFast(vocab=str(path / "vocab.txt"), do_lower_case=True,
                            model_max_length=max_position)
    id2label = dict(id2label or NLI3)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers,
                     num_attention_heads=2, intermediate_size=2 * hidden, max_position_embeddings=max_position,
                     num_labels=len(id2label), id2label=id2label, initializer_range=0.5,
                     label2id={v: k for k, v in id2label.items()})
    torch.manual_seed(seed)
    model = BertForSequenceClassification(cfg).eval()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def make_minilm_classifier(path, seed: int = 0) -> Path:
    """MiniLM-L6 encoder + seeded random 3-way head, saved to ``path`` (benchmarks only)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from tfc.models import minilm_dir

    path = Path(path)
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(minilm_dir()), num_labels=3, id2label=NLI3, label2id={v: k for k, v in NLI3.items()})
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(str(minilm_dir())).save_pretrained(path)
    return path
