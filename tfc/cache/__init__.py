"""The score cache: one parquet file per (scorer signature, dataset, split), plus a JSON sidecar.

Layout under ``config.cache_dir()``::

    <signature>/<dataset>/<split>.parquet        columns id, score, input_sha (+ aux_*)
    <signature>/<dataset>/<split>.json           sidecar (below)
    <signature>/<dataset>/<split>.parts/         part-NNNNN.parquet, written while a run is in progress

**Resumable.** :meth:`ScoreCache.compute` scores only the ids not yet in the parquet or its parts,
in chunks of ``chunk_size`` examples; after each chunk a part file is written atomically (temporary
name, then ``os.replace``). If the run dies, the next run reads the parts and recomputes nothing
already done. At the end the parts are compacted into the one parquet and the sidecar is rewritten.
A sampled run caches its rows; a later full run computes only the rest. One writer at a time:
``<split>.lock`` holds the writer's pid; a live holder makes a second run fail with
:class:`CacheBusyError`, a stale lock (its process is gone, e.g. killed) is taken over. Fully cached
reads take no lock.

**Input hash.** Every row stores ``input_sha``: the first 16 hex digits of sha256(grounding + NUL +
generated). The sidecar stores the sha256 over the sorted ``id:input_sha`` lines (``inputs_sha256``).
A cached row whose ``input_sha`` differs from the current input (the dataset changed under the
same id) is refused with :class:`CacheMismatchError`, as is a sidecar whose signature differs from
the directory's, or whose ``inputs_sha256``/row count does not match its parquet. A parquet or
sidecar that cannot be read raises :class:`CacheCorruptError` naming the file. Nothing is silently
recomputed or overwritten: delete the named file to start again.

**Sidecar.** ``signature, scorer, config, dataset, split, row_count, inputs_sha256, versions``
(tfc/torch/transformers/...), ``device, dtype, wall_seconds`` (summed over runs), ``updated``.

**Engines.** :meth:`ScoreCache.compute` scores its chunks in this process, or hands them to an engine
(the ``engine`` argument, else the one set by :func:`tfc.cache.scale.engine`): :class:`tfc.cache.scale.RayEngine`
scores the same chunks on Ray workers, each writing its chunk as a shard ``part-ray-<hash>.parquet``
in the parts directory; the compaction that follows is the same, and so are the scores.
"""
from __future__ import annotations

import contextvars
import hashlib
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config


# the engine ScoreCache.compute hands its chunks to (None: this process); set with tfc.cache.scale.engine(...)
ENGINE: contextvars.ContextVar = contextvars.ContextVar("tfc_score_engine", default=None)


class CacheMismatchError(RuntimeError):
    """The cache on disk was written for other inputs or another scorer."""


class CacheCorruptError(RuntimeError):
    """A cache file exists but cannot be read."""


class CacheBusyError(RuntimeError):
    """Another live process is writing the same cache entry."""


def input_sha(grounding: str, generated: str) -> str:
    return hashlib.sha256(f"{grounding}\x00{generated}".encode("utf-8")).hexdigest()[:16]


def inputs_sha256(ids, shas) -> str:
    lines = sorted(f"{i}:{s}" for i, s in zip(ids, shas))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _versions() -> dict:
    from importlib import metadata

    import tfc

    out = {"tfc": tfc.__version__}
    for d in ("torch", "transformers", "bert-score", "rouge-score", "sacrebleu", "spacy", "numpy"):
        try:
            out[d] = metadata.version(d)
        except metadata.PackageNotFoundError:
            out[d] = None
    return out


class ScoreCache:
    def __init__(self, signature: str, dataset: str, split: str, root: Path | None = None):
        for what, v in (("signature", signature), ("dataset", dataset), ("split", split)):
            if not v or "/" in v or v.startswith("."):
                raise ValueError(f"bad cache {what} {v!r}")
        self.signature, self.dataset, self.split = signature, dataset, split
        self.root = Path(root or config.cache_dir())
        self.dir = self.root / signature / dataset
        self.parquet = self.dir / f"{split}.parquet"
        self.sidecar = self.dir / f"{split}.json"
        self.parts = self.dir / f"{split}.parts"
        self.lockfile = self.dir / f"{split}.lock"

    # -- one writer at a time -------------------------------------------------------------------
    def _lock(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.lockfile, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                return
            except FileExistsError:
                try:
                    pid = int(self.lockfile.read_text().strip() or 0)
                    os.kill(pid, 0)          # raises if that process is gone
                    alive = pid != os.getpid()
                except (ValueError, OSError):
                    alive = False
                if alive:
                    raise CacheBusyError(f"{self.lockfile} is held by running process {pid}; "
                                         "wait for it (or delete the lock if that process is not a tfc run)") from None
                self.lockfile.unlink(missing_ok=True)   # stale lock of a killed run
        raise CacheBusyError(f"could not take {self.lockfile}")

    def _unlock(self) -> None:
        self.lockfile.unlink(missing_ok=True)

    # -- reading --------------------------------------------------------------------------------
    def read_sidecar(self) -> dict | None:
        if not self.sidecar.exists():
            return None
        try:
            meta = json.loads(self.sidecar.read_text())
        except (OSError, ValueError) as exc:
            raise CacheCorruptError(f"corrupt score-cache sidecar {self.sidecar}: {exc}") from None
        if not isinstance(meta, dict):
            raise CacheCorruptError(f"corrupt score-cache sidecar {self.sidecar}: not a JSON object")
        if meta.get("signature") != self.signature:
            raise CacheMismatchError(
                f"sidecar {self.sidecar} was written for signature {meta.get('signature')!r}, "
                f"not {self.signature!r}; refusing to use it")
        return meta

    @staticmethod
    def _read_parquet(path: Path) -> pd.DataFrame:
        try:
            df = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise CacheCorruptError(f"corrupt score-cache file {path}: {exc}") from None
        missing = {"id", "score", "input_sha"} - set(df.columns)
        if missing:
            raise CacheCorruptError(f"score-cache file {path} lacks columns {sorted(missing)}")
        return df

    def read(self, check: bool = True) -> pd.DataFrame:
        """All cached rows (compacted parquet + parts); ``check`` verifies the sidecar against the parquet."""
        frames = []
        meta = self.read_sidecar()
        if self.parquet.exists():
            main = self._read_parquet(self.parquet)
            if check:
                if meta is None:
                    raise CacheCorruptError(f"score-cache file {self.parquet} has no sidecar {self.sidecar}")
                if meta.get("row_count") != len(main) or meta.get("inputs_sha256") != inputs_sha256(
                        main["id"], main["input_sha"]):
                    raise CacheMismatchError(
                        f"sidecar {self.sidecar} does not describe {self.parquet} (row count or input "
                        "hash differs); refusing to use it")
            frames.append(main)
        if self.parts.is_dir():
            frames += [self._read_parquet(p) for p in sorted(self.parts.glob("part-*.parquet"))]
        if not frames:
            return pd.DataFrame({"id": pd.Series([], dtype=str), "score": pd.Series([], dtype=float),
                                 "input_sha": pd.Series([], dtype=str)})
        df = pd.concat(frames, ignore_index=True).drop_duplicates("id", keep="last").reset_index(drop=True)
        from tfc.data.reads import report_read   # the read hook (chapter footers list the entries they read)

        report_read("cache", self.signature, self.dataset, self.split, len(df))
        return df

    def exists(self) -> bool:
        return self.parquet.exists() or self.parts.is_dir()

    # -- writing --------------------------------------------------------------------------------
    def _write_atomic(self, df: pd.DataFrame, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        df.to_parquet(tmp, index=False)
        os.replace(tmp, path)

    def write_part(self, df: pd.DataFrame) -> Path:
        self.parts.mkdir(parents=True, exist_ok=True)
        n = len(list(self.parts.glob("part-*.parquet")))
        path = self.parts / f"part-{n:05d}.parquet"
        self._write_atomic(df, path)
        return path

    def compact(self, scorer_meta: dict, wall_seconds: float = 0.0, device=None, dtype=None) -> dict:
        df = self.read(check=True).sort_values("id").reset_index(drop=True)
        old = self.read_sidecar() or {}
        self._write_atomic(df, self.parquet)
        meta = {
            "signature": self.signature, "dataset": self.dataset, "split": self.split,
            "scorer": scorer_meta.get("name"), "output_range": scorer_meta.get("output_range"),
            "config": scorer_meta.get("config"), "row_count": int(len(df)),
            "inputs_sha256": inputs_sha256(df["id"], df["input_sha"]),
            "columns": list(df.columns), "versions": _versions(), "device": device, "dtype": dtype,
            "wall_seconds": round(float(old.get("wall_seconds", 0.0)) + wall_seconds, 3),
            "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        tmp = self.sidecar.with_name(self.sidecar.name + f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(meta, indent=1, default=str))
        os.replace(tmp, self.sidecar)
        if self.parts.is_dir():
            for p in self.parts.glob("part-*.parquet"):
                p.unlink()
            for p in self.parts.glob("part-*.parquet.tmp*"):   # half-written by a killed writer
                p.unlink()
            self.parts.rmdir()
        return meta

    def compute(self, scorer, ids, groundings, generations, chunk_size: int = 512, batch_size=None,
                progress: bool = True, fail_at_chunk: int | None = None, engine=None) -> pd.DataFrame:
        """Scores for ``ids`` (in that order), computing only what the cache lacks.

        ``fail_at_chunk`` raises after that many chunks were written (used by the tests to simulate
        an interruption). ``engine`` (default: the one set by :func:`tfc.cache.scale.engine`, else none)
        scores the chunks elsewhere, e.g. on Ray workers; the chunks are the same either way.
        """
        engine = engine if engine is not None else ENGINE.get()
        ids = list(ids)
        shas = [input_sha(g, h) for g, h in zip(groundings, generations)]
        have = self.read(check=True)
        if len(have):
            cur = dict(zip(ids, shas))
            bad = [(i, s) for i, s in zip(have["id"], have["input_sha"]) if i in cur and cur[i] != s]
            if bad:
                raise CacheMismatchError(
                    f"{len(bad)} cached row(s) in {self.dir} were computed on different inputs "
                    f"(first: {bad[0][0]}); refusing to mix them. Delete {self.parquet} (and "
                    f"{self.parts}) to recompute.")
        done = set(have["id"])
        todo = [k for k, i in enumerate(ids) if i not in done]
        if not todo and not self.parts.is_dir():   # fully cached: read only, no lock needed
            return have.drop_duplicates("id").set_index("id").loc[ids].reset_index()
        self._lock()
        try:
            t0 = time.perf_counter()
            wrote = False
            device = None
            if engine is not None and todo:
                chunks = [todo[start:start + chunk_size] for start in range(0, len(todo), chunk_size)]
                device = engine.run(self, scorer, chunks, ids, groundings, generations, shas,
                                    batch_size=batch_size, on_rows=getattr(scorer, "advance", None))
                wrote, todo = True, []
            for c, start in enumerate(range(0, len(todo), chunk_size)):
                if fail_at_chunk is not None and c == fail_at_chunk:
                    raise RuntimeError(f"simulated interruption at chunk {c}")
                sel = todo[start:start + chunk_size]
                vals = scorer.score([groundings[k] for k in sel], [generations[k] for k in sel],
                                    batch_size=batch_size, progress=progress)
                part = pd.DataFrame({"id": [ids[k] for k in sel], "score": vals.astype(float),
                                     "input_sha": [shas[k] for k in sel]})
                for name, arr in scorer.last_aux().items():
                    part[name] = arr
                self.write_part(part)
                wrote = True
            if wrote or self.parts.is_dir():
                cfg = scorer.config
                if device is None:
                    device = (getattr(cfg, "device", None) or config.default_device()) if hasattr(cfg, "device") else "cpu"
                self.compact(scorer.describe(), time.perf_counter() - t0, device=device,
                             dtype=getattr(cfg, "dtype", None))
        finally:
            self._unlock()
        out = self.read(check=True).set_index("id")
        return out.loc[ids].reset_index()


def derive(src: ScoreCache, dst: ScoreCache, transform, scorer_meta: dict, note: str) -> dict:
    """Write the cache ``dst`` from the rows of ``src`` passed through ``transform`` (frame -> frame), with no
    model run over the rows it keeps (a transform may compute the few rows a policy changes, and says so in
    ``note``), and record the derivation in ``dst``'s sidecar (``derived_from``: source signature and note).

    For a configuration change that provably touches only some rows' scores (for example a policy for texts
    with no question to ask); the caller's ``transform`` checks that. The rows (ids and input hashes) must be
    unchanged, and ``dst`` must not exist yet: a derivation never overwrites or mixes with computed rows.
    ``dst`` keeps the source's wall time, device and dtype (what the scores cost to compute)."""
    if dst.exists():
        raise FileExistsError(f"{dst.parquet} already exists; a derived cache is written only once")
    df = src.read(check=True).sort_values("id").reset_index(drop=True)
    out = transform(df.copy())
    if list(out["id"]) != list(df["id"]) or list(out["input_sha"]) != list(df["input_sha"]):
        raise ValueError("transform changed the cached rows (ids or input hashes); only scores may change")
    old = src.read_sidecar() or {}
    dst._lock()
    try:
        dst.write_part(out)
        meta = dst.compact(scorer_meta, float(old.get("wall_seconds") or 0.0), device=old.get("device"),
                           dtype=old.get("dtype"))
        meta["derived_from"] = {"signature": src.signature, "note": note,
                                "source_updated": old.get("updated")}
        tmp = dst.sidecar.with_name(dst.sidecar.name + f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(meta, indent=1, default=str))
        os.replace(tmp, dst.sidecar)
    finally:
        dst._unlock()
    return meta


def _split_for(root: Path, signature: str, dataset: str, split: str | None) -> str:
    if split is not None:
        return split
    d = root / signature / dataset
    splits = sorted(p.stem for p in d.glob("*.parquet")) if d.is_dir() else []
    if len(splits) == 1:
        return splits[0]
    if not splits:
        raise FileNotFoundError(f"no cached scores for {signature!r} on {dataset!r} under {root}")
    raise ValueError(f"{signature} on {dataset} has splits {splits}; pass split=")


def load_scores(signature_or_name: str, dataset: str, split: str | None = None) -> pd.DataFrame:
    """Cached scores ``id, score`` (+ ``aux_*``) for a signature, or for a registry name's default config."""
    root = config.cache_dir()
    sig = signature_or_name
    if not (root / sig).is_dir():
        from tfc import scorers

        if signature_or_name in scorers.names() or signature_or_name.startswith("imported:"):
            sig = scorers.get(signature_or_name).signature
    split = _split_for(root, sig, dataset, split)
    df = ScoreCache(sig, dataset, split).read(check=True)
    return df.drop(columns=["input_sha"]).sort_values("id").reset_index(drop=True)


def entries(root: Path | None = None) -> pd.DataFrame:
    """One row per cached (signature, dataset, split): rows, scorer, updated, wall seconds, state."""
    root = Path(root or config.cache_dir())
    rows = []
    for side in sorted(root.glob("*/*/*.json")):
        sig, ds, split = side.parent.parent.name, side.parent.name, side.stem
        try:
            meta = json.loads(side.read_text())
            state = "ok"
        except ValueError:
            meta, state = {}, "corrupt sidecar"
        parts = side.with_name(f"{split}.parts")
        if parts.is_dir():
            state = "partial (parts pending)"
        rows.append({"signature": sig, "dataset": ds, "split": split, "rows": meta.get("row_count"),
                     "scorer": meta.get("scorer"), "wall_seconds": meta.get("wall_seconds"),
                     "updated": meta.get("updated"), "state": state})
    for parts in sorted(root.glob("*/*/*.parts")):
        if not parts.with_suffix(".json").exists():
            rows.append({"signature": parts.parent.parent.name, "dataset": parts.parent.name,
                         "split": parts.name[:-6], "rows": None, "scorer": None, "wall_seconds": None,
                         "updated": None, "state": "partial (never compacted)"})
    return pd.DataFrame(rows, columns=["signature", "dataset", "split", "rows", "scorer", "wall_seconds",
                                       "updated", "state"])


def verify(signature: str, dataset: str, split: str | None = None, sample: int = 20, seed: int = 0,
           atol: float = 1e-4) -> dict:
    """Recompute a random sample of cached rows with the sidecar's scorer config and compare."""
    from tfc import data, scorers

    root = config.cache_dir()
    split = _split_for(root, signature, dataset, split)
    cache = ScoreCache(signature, dataset, split)
    meta = cache.read_sidecar()
    if meta is None:
        raise FileNotFoundError(f"no sidecar {cache.sidecar}")
    cached = cache.read(check=True)
    scorer = scorers.from_config(meta["scorer"], meta["config"])
    if scorer.signature != signature:
        raise CacheMismatchError(f"the sidecar's config now gives signature {scorer.signature}, not {signature}")
    df = data.load(dataset, split=split)
    df = df[df["id"].isin(set(cached["id"]))]
    if len(df) == 0:
        raise ValueError(f"none of the cached ids of {cache.parquet} are in dataset {dataset!r}")
    df = df.sample(n=min(sample, len(df)), random_state=seed)
    new = scorer.score(df["grounding"].tolist(), df["generated"].tolist(), progress=False)
    old = cached.set_index("id").loc[df["id"], "score"].to_numpy()
    diff = np.abs(new - old)
    return {"signature": signature, "dataset": dataset, "split": split, "n": int(len(df)),
            "max_abs_diff": float(diff.max()), "ok": bool((diff <= atol).all()), "atol": atol}
