"""Score and evaluate your own files: what ``tfc score --input`` and ``tfc evaluate`` run.

Python::

    import tfc
    out = tfc.score_frame(df, "rougeL", grounding_col="article", generated_col="summary")
    report = tfc.evaluate_frame(out, label_col="consistent")          # AUC, PR-AUC, BAcc, ECE, CIs (own_eval)

Command line::

    tfc score --input mine.csv --grounding-col article --generated-col summary -s f1 -s rougeL -o scored.parquet
    tfc evaluate --input scored.parquet --label-col consistent [--score-cols f1,rougeL] [--dev dev.csv]
                 [--threshold 0.5] [--group-col dataset] [--bins 10] [--plot reliability.png] [--json]

The evaluation itself is in :mod:`tfc.results.own_eval` (the report) and :mod:`tfc.results.own_report` (its
text); this module reads, checks, scores and writes files.

**Inputs.** :func:`read_table` reads CSV, TSV, JSON lines (``.jsonl``), JSON (an array of objects, or
JSON lines), parquet, a Hugging Face ``datasets`` directory written by ``save_to_disk``, or
``hf:<owner>/<name>`` (a Hub dataset, only when online). Text must be UTF-8. In CSV/TSV files the two
text columns are read as text (an empty cell is an empty string, which every scorer gives its
``empty_score``); every other column is typed as pandas reads it.

**Output.** The input rows, unchanged and in order, plus one column per scorer, named after the
scorer (``-s rougeL`` gives ``rougeL``; ``-s mine=nli`` names it ``mine``), plus ``<column>_aux_*``
columns where the scorer records per-row details (chunks, questions, truncation ...). Parquet outputs
remember which columns are scores (``DataFrame.attrs["tfc_score_columns"]``), so ``tfc evaluate``
finds them without ``--score-cols``.

**Scale-out.** ``tfc score --input FILE ... --engine ray --workers N`` (or ``engine="ray"``) scores the
rows on Ray workers, with the same cache entry and bitwise the same scores (:mod:`tfc.cache.scale`).

**Cache and resuming.** Scores go through the project's score cache (:class:`tfc.cache.ScoreCache`),
with the file as an ad-hoc dataset: ``dataset = file-<sha>``, where ``<sha>`` is the first 16 hex
digits of the sha256 over the rows' input hashes in order (so the same texts in a CSV or a parquet
file share one entry), ``split = rows``, ``id = row-<index>``. A run that is interrupted keeps the
chunks it finished (``chunk_size`` rows each); running the same command again computes only the rest.

**Bad input** raises :class:`OwnFileError` (a ``ValueError``) with one line that names the problem:
a missing column (the existing columns are listed), an empty file or a file without rows, bytes that
are not UTF-8 (line and byte offset), a malformed CSV/JSON line, a cell that is not text or is missing
(its row: ``row i`` counts data rows from 0, a header line not counted), a label column that is not binary, a
score column with missing or non-numeric values, and an output path that exists (unless
``overwrite``). Outputs are written to a temporary file and renamed, so a failed run leaves nothing.
"""
from __future__ import annotations

import difflib
import hashlib
import io
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from tfc.scorers.base import unicode_error

INPUT_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet")
OUTPUT_SUFFIXES = (".parquet", ".csv", ".jsonl")
CACHE_SPLIT = "rows"
SCORE_COLUMNS_ATTR = "tfc_score_columns"


class OwnFileError(ValueError):
    """A user file (or frame) that cannot be scored or evaluated; the message is one line."""


def _row(i: int) -> str:
    return f"row {i} (counting data rows from 0)"


# -- reading ------------------------------------------------------------------------------------
def _decode(path: Path) -> str:
    data = path.read_bytes()
    if not data.strip():
        raise OwnFileError(f"{path} is empty")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise OwnFileError(f"{path} is not UTF-8: byte 0x{data[exc.start]:02x} at line {line} (byte offset "
                           f"{exc.start}); save the file as UTF-8") from None


def _read_csv(path: Path, sep: str, text_cols) -> pd.DataFrame:
    text = _decode(path)
    try:
        df = pd.read_csv(io.StringIO(text), sep=sep)
        keep = [c for c in dict.fromkeys(text_cols) if c in df.columns]
        if keep:  # the text columns as text: "" stays "", "NA" or "123" are not turned into NaN or numbers
            raw = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, usecols=keep)
            for c in keep:
                df[c] = raw[c].astype(object)
    except pd.errors.EmptyDataError:
        raise OwnFileError(f"{path} is empty") from None
    except (pd.errors.ParserError, ValueError) as exc:
        msg = " ".join(str(exc).split())
        raise OwnFileError(f"{path} is not a well-formed {'TSV' if sep == chr(9) else 'CSV'} file: {msg}") from None
    return df


def _json_records(path: Path, text: str) -> list:
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            recs = json.loads(text)
        except ValueError as exc:
            raise OwnFileError(f"{path} is not valid JSON: {exc}") from None
        for i, r in enumerate(recs):
            if not isinstance(r, dict):
                raise OwnFileError(f"{path}: item {i} of the JSON array is {type(r).__name__}, not an object")
        return recs
    recs = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError as exc:
            raise OwnFileError(f"{path}: line {n} is not valid JSON ({exc})") from None
        if not isinstance(r, dict):
            raise OwnFileError(f"{path}: line {n} is a JSON {type(r).__name__}, not an object")
        recs.append(r)
    return recs


def _read_json(path: Path) -> pd.DataFrame:
    recs = _json_records(path, _decode(path))
    for i, r in enumerate(recs):   # "\ud800" escapes decode to lone surrogates, which no text column can hold
        for k, v in r.items():
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise OwnFileError(f"{path}: {_row(i)}: column {k!r} is not valid Unicode ({exc.reason} at "
                                       f"character {exc.start})") from None
    return pd.DataFrame.from_records(recs) if recs else pd.DataFrame()


def _is_hf_dir(path: Path) -> bool:
    return (path / "dataset_dict.json").is_file() or (path / "state.json").is_file()


def _pick_split(ds, split: str | None, where: str) -> pd.DataFrame:
    """The rows of a Dataset or DatasetDict (one split of it) as a DataFrame."""
    import datasets

    if isinstance(ds, datasets.DatasetDict):
        if split is not None:
            if split not in ds:
                raise OwnFileError(f"{where} has no split {split!r}; splits: {', '.join(ds)}")
            return ds[split].to_pandas()
        if len(ds) == 1:
            return next(iter(ds.values())).to_pandas()
        raise OwnFileError(f"{where} has splits {', '.join(ds)}; choose one with --split")
    df = ds.to_pandas()
    if split is not None:   # filtered in pandas: Dataset.filter would write cache files into the user's directory
        if "split" not in df.columns:
            raise OwnFileError(f"{where} is a single dataset without a 'split' column; leave out --split")
        df = df[df["split"] == split].reset_index(drop=True)
    return df


def _read_hf_dir(path: Path, split: str | None) -> pd.DataFrame:
    try:
        import datasets
    except ImportError:
        raise OwnFileError(f"{path} is a datasets directory, but the 'datasets' package is not installed "
                           "(pip install datasets)") from None
    try:
        ds = datasets.load_from_disk(str(path))
    except Exception as exc:  # noqa: BLE001 - datasets raises many kinds; name the directory
        raise OwnFileError(f"{path}: cannot read it with datasets.load_from_disk ({type(exc).__name__}: "
                           f"{' '.join(str(exc).split())})") from None
    return _pick_split(ds, split, str(path))


def _offline() -> bool:
    return any(os.environ.get(k, "").strip().lower() in ("1", "true", "yes", "on")
               for k in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"))


def _read_hub(name: str, split: str | None) -> pd.DataFrame:
    if not name or name.count("/") > 1:
        raise OwnFileError(f"hf:{name} is not a Hub dataset id (expected hf:<owner>/<name>)")
    if _offline():
        raise OwnFileError(f"cannot fetch Hub dataset {name!r}: offline mode is on (HF_DATASETS_OFFLINE or "
                           "HF_HUB_OFFLINE is set); save it with save_to_disk where you are online and pass "
                           "the directory")
    import datasets

    try:
        ds = datasets.load_dataset(name, split=split)
    except Exception as exc:  # noqa: BLE001
        raise OwnFileError(f"cannot load Hub dataset {name!r}: {type(exc).__name__}: {' '.join(str(exc).split())}") from None
    return _pick_split(ds, None, f"hf:{name}")


def read_table(source, text_cols=(), split: str | None = None) -> pd.DataFrame:
    """The rows of ``source`` (see the module docstring for the formats) as a DataFrame.

    ``text_cols`` are read as text from CSV/TSV; ``split`` picks one split of a ``datasets``
    directory or Hub dataset with several. Raises :class:`OwnFileError` for an unreadable, empty or
    row-less source.
    """
    src = str(source)
    if src.startswith("hf:"):
        df = _read_hub(src[3:], split)
    else:
        path = Path(source)
        if not path.exists():
            raise OwnFileError(f"{path}: no such file or directory")
        if path.is_dir():
            if not _is_hf_dir(path):
                raise OwnFileError(f"{path} is a directory, but not a datasets directory written by "
                                   "save_to_disk (no dataset_dict.json or state.json)")
            df = _read_hf_dir(path, split)
        else:
            suffix = path.suffix.lower()
            if suffix not in INPUT_SUFFIXES:
                raise OwnFileError(f"{path}: unsupported file type {suffix or '(none)'!r}; use one of "
                                   f"{', '.join(INPUT_SUFFIXES)} or a datasets directory")
            if split is not None:
                raise OwnFileError("--split applies to a datasets directory or Hub dataset, not to a file")
            if path.stat().st_size == 0:
                raise OwnFileError(f"{path} is empty")
            if suffix in (".csv", ".tsv"):
                df = _read_csv(path, "\t" if suffix == ".tsv" else ",", text_cols)
            elif suffix in (".jsonl", ".json"):
                df = _read_json(path)
            else:
                try:
                    df = pd.read_parquet(path)
                except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError ...
                    raise OwnFileError(f"{path} is not a readable parquet file: {' '.join(str(exc).split())}") from None
    if len(df) == 0:
        raise OwnFileError(f"{src} has no rows" + (f" (columns: {', '.join(map(str, df.columns))})"
                                                     if len(df.columns) else ""))
    return df


def check_columns(df: pd.DataFrame, cols, where: str = "the input") -> None:
    """Raise :class:`OwnFileError` naming the first missing column, the existing ones and a close match."""
    have = [str(c) for c in df.columns]
    lower = {h.lower(): h for h in have}
    for c in cols:
        if c not in df.columns:
            close = ([lower[str(c).lower()]] if str(c).lower() in lower
                     else [lower[m] for m in difflib.get_close_matches(str(c).lower(), list(lower), n=1, cutoff=0.5)])
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise OwnFileError(f"column {c!r} not found in {where}; columns: {', '.join(repr(h) for h in have)}{hint}")


def check_text(values, col: str) -> list[str]:
    """The cells of text column ``col`` as a list of str; a missing or non-text cell raises, naming its row."""
    out = []
    for i, v in enumerate(values):
        problem = _text_problem(v)
        if problem:
            raise OwnFileError(f"{_row(i)}: column {col!r} {problem}")
        out.append(v)
    return out


def _text_problem(v) -> str | None:
    """What keeps one cell from being scored as text (the end of :func:`check_text`'s message), or None."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or v is pd.NaT:
        return "has no value (null/NaN); every cell must be text (an empty string is allowed)"
    if not isinstance(v, str):
        return f"holds {type(v).__name__} {v!r}, not text"
    exc = unicode_error(v)
    if exc is not None:
        return f"is not valid Unicode ({exc.reason} at character {exc.start})"
    return None


# -- writing ------------------------------------------------------------------------------------
def check_output(path, overwrite: bool = False) -> Path:
    """Validate an output path before any work is done: known suffix, existing parent, no clobbering."""
    p = Path(path)
    if p.suffix.lower() not in OUTPUT_SUFFIXES:
        raise OwnFileError(f"{p}: unsupported output type {p.suffix or '(none)'!r}; use one of "
                           f"{', '.join(OUTPUT_SUFFIXES)}")
    if p.is_dir():
        raise OwnFileError(f"{p} is a directory; give a file name")
    if p.exists() and not overwrite:
        raise OwnFileError(f"{p} exists; pass --overwrite (overwrite=True) to replace it")
    if not p.parent.is_dir():
        raise OwnFileError(f"{p}: directory {p.parent} does not exist")
    return p


def write_table(df: pd.DataFrame, path, overwrite: bool = False) -> Path:
    """Write ``df`` to ``path`` (.parquet, .csv, .jsonl) through a temporary file and a rename."""
    p = check_output(path, overwrite)
    tmp = p.with_name(f".{p.name}.tmp{os.getpid()}")
    try:
        suffix = p.suffix.lower()
        if suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        elif suffix == ".csv":
            df.to_csv(tmp, index=False)
        else:
            df.to_json(tmp, orient="records", lines=True, force_ascii=False)
        if p.exists() and not overwrite:  # appeared while we were writing
            raise OwnFileError(f"{p} exists; pass --overwrite (overwrite=True) to replace it")
        os.replace(tmp, p)
    except OwnFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - e.g. pyarrow cannot store a column's type
        raise OwnFileError(f"cannot write {p}: {type(exc).__name__}: {' '.join(str(exc).split())}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return p


def default_output(source) -> Path:
    """``<input stem>.scored.parquet`` beside a file or directory; in the working directory for ``hf:``."""
    src = str(source)
    if src.startswith("hf:"):
        return Path(src[3:].replace("/", "_") + ".scored.parquet")
    p = Path(src.rstrip("/"))
    return p.with_name((p.stem if p.is_file() else p.name) + ".scored.parquet")


# -- scoring ------------------------------------------------------------------------------------
def parse_scorers(specs, checkpoint: str | None = None, preset: str = "default",
                  **overrides) -> list[tuple[str, object]]:
    """``[(column, Scorer)]`` from names, ``COLUMN=NAME`` strings, Scorer objects or (column, Scorer) pairs.

    ``checkpoint`` goes to every scorer whose config has a ``checkpoint`` field (an error if none
    has); ``preset`` (``tfc.scorers.PRESETS``) and then ``overrides`` go to every scorer given by name.
    """
    from dataclasses import fields

    from tfc import scorers
    from tfc.scorers.base import Scorer

    if isinstance(specs, (str, Scorer)):
        specs = [specs]
    specs = list(specs)
    if not specs:
        raise OwnFileError("give at least one scorer")
    out, took_ckpt = [], False
    for spec in specs:
        if isinstance(spec, Scorer):
            col, s = spec.name, spec
        elif isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], Scorer):
            col, s = str(spec[0]), spec[1]
        elif isinstance(spec, str):
            col, _, name = spec.partition("=") if "=" in spec else (spec, "", spec)
            col, name = col.strip(), name.strip()
            if not col or not name:
                raise OwnFileError(f"bad scorer {spec!r}; use NAME or COLUMN=NAME")
            kw = dict(overrides)
            try:
                cls_fields = {f.name for f in fields(scorers.get(name).config)}
                if checkpoint is not None and "checkpoint" in cls_fields:
                    kw["checkpoint"] = checkpoint
                    took_ckpt = True
                s = scorers.get(name, preset=preset, **kw)
            except KeyError as exc:
                raise OwnFileError(str(exc.args[0]) if exc.args else str(exc)) from None
            except (TypeError, NotImplementedError, FileNotFoundError) as exc:
                raise OwnFileError(f"scorer {name!r}: {exc}") from None
        else:
            raise TypeError(f"a scorer is a name, COLUMN=NAME, a Scorer or a (column, Scorer) pair, "
                            f"not {type(spec).__name__}")
        if not getattr(s, "needs_text", True):
            raise OwnFileError(f"scorer {getattr(s, 'signature', col)!r} reads stored scores of registered "
                               "datasets by id; it cannot score your own texts")
        out.append((col, s))
    if checkpoint is not None and not took_ckpt:
        raise OwnFileError(f"--checkpoint/checkpoint given, but none of the scorers "
                           f"({', '.join(c for c, _ in out)}) takes a checkpoint")
    cols = [c for c, _ in out]
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        raise OwnFileError(f"two scorers would write the same column {dup[0]!r}; give each its own with COLUMN=NAME")
    return out


def dataset_key(groundings, generations) -> str:
    """The ad-hoc cache dataset name of a list of (grounding, generated) pairs: ``file-<16 hex>``."""
    from tfc.cache import input_sha

    h = hashlib.sha256()
    for g, t in zip(groundings, generations):
        h.update(input_sha(g, t).encode())
        h.update(b"\n")
    return "file-" + h.hexdigest()[:16]


def row_ids(n: int) -> list[str]:
    return [f"row-{i:07d}" for i in range(n)]


class _Counted:
    """A scorer that advances a progress bar by the rows of each ``score`` call (everything else is
    the wrapped scorer's, so the cache sees the same signature, config and aux columns)."""

    def __init__(self, scorer, bar):
        self._scorer, self._bar = scorer, bar

    def __getattr__(self, name):
        return getattr(self._scorer, name)

    def unwrap(self):
        """The wrapped scorer (what a scale-out worker rebuilds)."""
        return self._scorer

    def advance(self, n: int) -> None:
        """``n`` rows were scored elsewhere (by a scale-out engine's workers)."""
        self._bar.update(n)

    def score(self, groundings, generations, batch_size=None, progress=False):
        out = self._scorer.score(groundings, generations, batch_size=batch_size, progress=False)
        self._bar.update(len(out))
        return out


def _score_one(scorer, col, groundings, generations, use_cache, progress, batch_size, chunk_size):
    """Scores, ``aux_*`` columns and the number of rows that came from the cache, for one scorer."""
    from tfc.scorers.base import progress_bar

    n = len(groundings)
    if not use_cache:
        with progress_bar(range(n), total=n, desc=col, enabled=progress) as bar:
            vals = _Counted(scorer, bar).score(groundings, generations, batch_size=batch_size)
        return np.asarray(vals, dtype=float), scorer.last_aux(), 0
    from tfc.cache import ScoreCache

    ids = row_ids(n)
    cache = ScoreCache(scorer.signature, dataset_key(groundings, generations), CACHE_SPLIT)
    n_cached = int(cache.read(check=True)["id"].isin(set(ids)).sum()) if cache.exists() else 0
    with progress_bar(range(n), total=n, desc=col, enabled=progress) as bar:
        bar.update(n_cached)
        got = cache.compute(_Counted(scorer, bar), ids, groundings, generations, chunk_size=chunk_size,
                            batch_size=batch_size, progress=False)
    aux = {c: got[c].to_numpy() for c in got.columns if c.startswith("aux_")}
    return got["score"].to_numpy(dtype=float), aux, n_cached


def score_frame(df, scorer, grounding_col: str = "grounding", generated_col: str = "generated",
                checkpoint: str | None = None, *, use_cache: bool = True, progress: bool = False,
                batch_size: int | None = None, chunk_size: int = 512, report: dict | None = None,
                engine=None, **overrides):
    """``df`` plus one score column per scorer (and ``<column>_aux_*`` columns where the scorer has them).

    ``scorer``: a registry name (``"rougeL"``), ``"COLUMN=NAME"``, a :class:`~tfc.scorers.Scorer`, or a
    list of these. ``checkpoint`` goes to the scorers that take one; further keyword arguments are
    config overrides (``mode="sentence"``). ``df`` may be a pandas DataFrame (a new frame is returned;
    its ``attrs["tfc_score_columns"]`` lists the score columns) or a ``datasets.Dataset`` (a new
    Dataset with the columns added is returned). Scores go through the score cache (see the module
    docstring) unless ``use_cache=False``. ``report``, if a dict, receives per column the signature and
    how many rows came from the cache. ``engine``: ``"ray"`` or a :class:`tfc.cache.scale.RayEngine` scores
    the rows on Ray workers (``pip install 'tfc[scale]'``), with the same scores (:mod:`tfc.cache.scale`).
    """
    if engine is not None and engine != "local":
        from tfc.cache import scale

        if not use_cache:
            raise ValueError("a scale-out engine writes through the score cache; it cannot run with use_cache=False")
        with scale.engine(engine):
            return score_frame(df, scorer, grounding_col, generated_col, checkpoint, use_cache=use_cache,
                               progress=progress, batch_size=batch_size, chunk_size=chunk_size, report=report,
                               **overrides)
    hf = None
    if not isinstance(df, pd.DataFrame):
        try:
            import datasets
        except ImportError:
            datasets = None
        if datasets is not None and isinstance(df, datasets.Dataset):
            hf, df = df, df.to_pandas()
        else:
            raise TypeError(f"score_frame takes a pandas DataFrame or a datasets.Dataset, not {type(df).__name__}")
    if not isinstance(chunk_size, (int, np.integer)) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    specs = parse_scorers(scorer, checkpoint, **overrides)
    if len(df) == 0:
        raise OwnFileError("the input has no rows")
    check_columns(df, [grounding_col, generated_col])
    g = check_text(df[grounding_col].tolist(), grounding_col)
    h = check_text(df[generated_col].tolist(), generated_col)
    new_cols = []
    for col, s in specs:
        if col in df.columns:
            raise OwnFileError(f"the input already has a column {col!r}; name the new one with COLUMN=NAME, "
                               f"e.g. -s {col}_new={s.name}")
    out = df.copy()
    for col, s in specs:
        vals, aux, n_cached = _score_one(s, col, g, h, use_cache, progress, batch_size, chunk_size)
        out[col] = vals
        new_cols.append(col)
        for a, arr in aux.items():
            name = f"{col}_{a}"
            if name in df.columns:
                raise OwnFileError(f"the input already has a column {name!r}")
            out[name] = arr
            new_cols.append(name)
        if report is not None:
            report[col] = {"signature": s.signature, "rows": len(g), "from_cache": n_cached,
                           "computed": len(g) - n_cached if use_cache else len(g)}
    before = list(df.attrs.get(SCORE_COLUMNS_ATTR, [])) if isinstance(df.attrs.get(SCORE_COLUMNS_ATTR), list) else []
    out.attrs[SCORE_COLUMNS_ATTR] = before + [c for c, _ in specs]
    if hf is not None:
        for c in new_cols:
            hf = hf.add_column(c, out[c].tolist())
        return hf
    return out


# -- evaluation: moved to tfc.results.own_eval (the report) and tfc.results.own_report (its text) -------
_MOVED = {"binary_labels": "own_eval", "numeric_scores": "own_eval", "default_score_columns": "own_eval",
          "evaluate_frame": "own_eval", "format_report": "own_report"}


def __getattr__(name: str):
    """The evaluation helpers that lived here, still reachable as ``own_files.evaluate_frame`` etc.; imported on
    first use (those modules import this one)."""
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(f"tfc.results.{_MOVED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- the example file ---------------------------------------------------------------------------
# Hand-written for this project (not taken from any benchmark): short made-up news items and one
# knowledge snippet, each with a faithful summary (1) and one that contradicts or invents (0).
EXAMPLE_ROWS = [
    ("The Millbrook public library will open on Sundays from March, between 10:00 and 16:00. The change "
     "follows a survey in which 640 residents asked for weekend hours.",
     "From March the Millbrook library opens on Sundays, from 10:00 to 16:00.", 1),
    ("The Millbrook public library will open on Sundays from March, between 10:00 and 16:00. The change "
     "follows a survey in which 640 residents asked for weekend hours.",
     "The Millbrook library will close on Sundays from March after a survey of 640 residents.", 0),
    ("A bakery in Zürich won the city's bread prize for a rye loaf made with roasted walnuts. Its owner, "
     "Lea Brunner, started the business in 2019.",
     "Lea Brunner's Zürich bakery won the city bread prize with a walnut rye loaf.", 1),
    ("A bakery in Zürich won the city's bread prize for a rye loaf made with roasted walnuts. Its owner, "
     "Lea Brunner, started the business in 2019.",
     "Lea Brunner opened her Zürich bakery in 2012 and won a prize for her croissants.", 0),
    ("The regional cycling race was shortened from 180 km to 140 km because of strong winds. Marta Ortiz "
     "won in a sprint finish ahead of two teammates.",
     "Strong winds cut the race to 140 km, and Marta Ortiz won the sprint finish.", 1),
    ("The regional cycling race was shortened from 180 km to 140 km because of strong winds. Marta Ortiz "
     "won in a sprint finish ahead of two teammates.",
     "Marta Ortiz won the full 180 km race alone, minutes ahead of the field.", 0),
    ("The council approved a budget of 2.4 million euros to repair the old harbour wall. Work starts in "
     "May and should take eight months.",
     "Repairs to the old harbour wall, budgeted at 2.4 million euros, start in May.", 1),
    ("The council approved a budget of 2.4 million euros to repair the old harbour wall. Work starts in "
     "May and should take eight months.",
     "The council rejected the harbour repairs, which would have cost 4.2 million euros.", 0),
    ("Le café « Les Tilleuls » rouvre après deux ans de travaux ; la terrasse compte désormais quarante places.",
     "Après deux ans de travaux, le café Les Tilleuls rouvre avec une terrasse de quarante places.", 1),
    ("Le café « Les Tilleuls » rouvre après deux ans de travaux ; la terrasse compte désormais quarante places.",
     "Le café Les Tilleuls ferme définitivement, sa terrasse de quarante places aussi.", 0),
    ("The Moon has almost no atmosphere, so its sky looks black even during the day.",
     "Even during the day the sky on the Moon looks black, because it has almost no atmosphere.", 1),
    ("The Moon has almost no atmosphere, so its sky looks black even during the day.",
     "Thanks to its thick atmosphere, the Moon has a blue sky during the day.", 0),
]
EXAMPLE_COLUMNS = ("article", "summary", "consistent")


def example_frame() -> pd.DataFrame:
    """The example rows (columns ``article, summary, consistent``; 1 = consistent)."""
    return pd.DataFrame(EXAMPLE_ROWS, columns=list(EXAMPLE_COLUMNS))


def write_example(path, overwrite: bool = False) -> Path:
    """Write the small hand-written example file (CSV, JSONL or parquet by suffix) used by the
    "Score your own outputs" page; returns the path."""
    return write_table(example_frame(), path, overwrite=overwrite)
