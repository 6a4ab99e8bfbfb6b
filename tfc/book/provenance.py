"""Provenance footer of a chapter: the environment it ran in and the score caches it read.

Every chapter notebook ends with::

    from tfc.book.provenance import footer
    footer(device=device)

which displays (HTML in the book, plain text in a terminal):

* package versions (tfc, python, torch, transformers, spacy, pandas, numpy, ...), from package metadata;
* the device: the notebook's ``device`` parameter, else ``TFC_DEVICE``, else what torch sees (torch is
  only asked when the chapter already imported it, so a lexical chapter does not pay torch's import);
* the data manifest hash: sha256 of ``data/MANIFEST`` (the list of raw files and their sha256), so two
  books built from the same raw files show the same hash;
* the git commit of the clone (and whether the working tree had uncommitted changes);
* every score-cache entry and imported score file the process read, recorded automatically:
  :class:`tfc.cache.ScoreCache` calls :func:`record_read` on each read and :func:`tfc.data.imported.load`
  on each imported file. ``signatures=`` adds entries by hand (e.g. scores read some other way).

Nothing here imports torch, transformers or spaCy at module level.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pandas as pd

from tfc import config
from tfc.data.reads import add_read_hook

PACKAGES = ("tfc", "torch", "transformers", "spacy", "pandas", "numpy", "scikit-learn", "bert-score",
            "rouge-score", "sacrebleu")
READ_COLUMNS = ["kind", "signature", "dataset", "split", "rows"]

# (kind, signature, dataset, split) -> rows; a process-level record, in first-read order
_READS: dict[tuple[str, str, str, str], int | None] = {}


def record_read(kind: str, signature: str, dataset: str, split: str | None = None, rows: int | None = None) -> None:
    """Note that this process read scores (``kind`` = ``cache`` or ``imported``); repeated reads keep one row."""
    key = (str(kind), str(signature), str(dataset), "" if split is None else str(split))
    if rows is not None or key not in _READS:
        _READS[key] = None if rows is None else int(rows)


add_read_hook(record_read)   # the cache and the imported files report their reads through tfc.data.reads


def reads() -> pd.DataFrame:
    """Every score read recorded in this process: ``kind, signature, dataset, split, rows``."""
    rows = [dict(zip(READ_COLUMNS[:4], k), rows=v) for k, v in _READS.items()]
    return pd.DataFrame(rows, columns=READ_COLUMNS)


def clear_reads() -> None:
    _READS.clear()


def manifest_sha256(path: Path | None = None) -> str | None:
    """sha256 of ``data/MANIFEST`` (None when the file is missing)."""
    p = Path(path) if path is not None else config.REPO_ROOT / "data" / "MANIFEST"
    if not p.is_file():
        return None
    return hashlib.sha256(p.read_bytes()).hexdigest()


def git_commit(repo: Path | None = None) -> str | None:
    """``<sha>`` of HEAD, with ``+dirty`` when tracked files differ from it; None outside a git clone."""
    repo = Path(repo or config.REPO_ROOT)
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                             timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return sha + ("+dirty" if dirty else "") if sha else None


def _version(dist: str) -> str | None:
    if dist == "tfc":
        import tfc

        return tfc.__version__
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def device_info(device: str | None = None) -> str:
    """The device a chapter ran on, without importing torch when the chapter did not."""
    if device:
        return str(device)
    if os.environ.get("TFC_DEVICE"):
        return os.environ["TFC_DEVICE"]
    torch = sys.modules.get("torch")
    if torch is None:
        return "cpu (torch not used by this chapter)"
    if torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return f"cpu ({torch.get_num_threads()} torch threads)"


def environment(device: str | None = None) -> dict:
    """Versions, python, device, data manifest hash, git commit and the paths in use."""
    return {
        "packages": {d: _version(d) for d in PACKAGES},
        "python": sys.version.split()[0],
        "device": device_info(device),
        "data_manifest_sha256": manifest_sha256(),
        "git_commit": git_commit(),
        "data_dir": str(config.data_dir()),
        "cache_dir": str(config.cache_dir()),
    }


@dataclass
class Footer:
    """What :func:`footer` returns: displays as HTML in notebooks, as text elsewhere."""

    env: dict
    reads: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=READ_COLUMNS))

    def env_frame(self) -> pd.DataFrame:
        rows = [{"item": k, "value": v or "-"} for k, v in self.env["packages"].items()]
        rows += [{"item": k, "value": self.env[k] if self.env[k] is not None else "-"}
                 for k in ("python", "device", "data_manifest_sha256", "git_commit")]
        return pd.DataFrame(rows)

    def signatures(self) -> list[str]:
        return sorted(set(self.reads["signature"]))

    def _repr_html_(self) -> str:
        env = self.env_frame().to_html(index=False, classes="tfc-provenance", border=0)
        if len(self.reads):
            summary = (self.reads.groupby(["kind", "signature"], sort=False)
                       .agg(datasets=("dataset", lambda s: ", ".join(dict.fromkeys(s))),
                            rows=("rows", lambda s: int(s.fillna(0).sum())))
                       .reset_index())
            reads = summary.to_html(index=False, classes="tfc-provenance", border=0)
        else:
            reads = "<p>No score cache or imported score file was read by this chapter.</p>"
        # the list of reads can be long: folded (one click opens it)
        return ('<div class="tfc-provenance"><p><b>Environment</b> (package versions, device, '
                'sha256 of <code>data/MANIFEST</code>, git commit)</p>' + env +
                f"<details><summary><b>Scores read</b> ({len(self.reads)} cache entries / imported files, "
                f"{len(self.signatures())} signatures)</summary>" + reads + "</details></div>")

    def __repr__(self) -> str:
        lines = ["provenance:"] + [f"  {r.item:22s} {r.value}" for r in self.env_frame().itertuples()]
        lines.append(f"  scores read: {len(self.reads)} entries")
        lines += [f"    {r.kind:8s} {r.signature} {r.dataset}/{r.split} ({r.rows} rows)"
                  for r in self.reads.itertuples()]
        return "\n".join(lines)

    def to_html(self) -> str:
        return self._repr_html_()


def footer(signatures=None, device: str | None = None) -> Footer:
    """The provenance footer of a chapter (see the module docstring).

    ``signatures``: extra signatures to list (a string or an iterable of strings) beside those the
    process read through the score cache or :mod:`tfc.data.imported`.
    """
    if isinstance(signatures, str):
        signatures = [signatures]
    signatures = list(signatures or [])
    if not all(isinstance(s, str) and s for s in signatures):
        raise TypeError(f"signatures must be non-empty strings, got {signatures!r}")
    extra = [{"kind": "given", "signature": s, "dataset": "", "split": "", "rows": None} for s in signatures]
    r = reads()
    if extra:
        r = pd.concat([r, pd.DataFrame(extra, columns=READ_COLUMNS)], ignore_index=True)
    return Footer(env=environment(device), reads=r)
