"""Provenance of the raw files: ``data/MANIFEST``, checksum checks and ``tfc data fetch``.

``data/MANIFEST`` is a tab-separated file with one line per raw file of the mirror::

    path  sha256  bytes  repo  commit  upstream_path  licence

``path`` is relative to the mirror (:func:`tfc.config.data_dir`). ``repo``/``commit``/``upstream_path``
name the git blob the file was copied from; derived files (built from other mirror files when the mirror was
staged) carry ``repo = derived`` and the inputs in ``upstream_path``. Every builder reads its raw files
through :func:`raw_path`, which refuses a file whose sha256 differs from the manifest
(:class:`ChecksumError`), so a changed mirror can never feed a table silently.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tfc import config
from tfc.data.errors import ChecksumError, MissingRawFileError

MANIFEST_PATH = config.REPO_ROOT / "data" / "MANIFEST"
COLUMNS = ["path", "sha256", "bytes", "repo", "commit", "upstream_path", "licence"]
DEFAULT_URL_TEMPLATE = "https://raw.githubusercontent.com/{repo}/{commit}/{upstream_path}"

# Licence per mirror folder (short form of each folder's SOURCE.txt "Licence:" paragraph).
FOLDER_LICENCE = {
    "true": "MIT (carrier asappresearch/scale-score setup.py); each dataset keeps its own terms",
    "peer_scores": "MIT (declared in asappresearch/scale-score setup.py)",
    "qags": "none stated",
    "q2": "MIT (third_party/data/LICENSE.txt)",
    "begin": "CC BY 4.0 (v2 topicalchat: CDLA-Sharing-1.0)",
    "frank": "MIT",
    "xsum_hallucination_annotations": "CC BY 4.0 (article text: BBC / XSum research terms)",
    "aggrefact": "none stated",
    "summac/cogensumm": "CC BY-SA 4.0 (annotations); SummaCoz Apache-2.0; CNN/DM text own terms",
    "summac/polytope": "not verified (upstream hddbang/PolyTope)",
    "dialfact": "BSD-3-Clause",
    "vitaminc": "Wikipedia terms / CC BY-SA 3.0",
    "vitaminc_baselines": "ANLI CC BY-NC 4.0; FEVER-derived CC BY-SA 3.0",
    "wecheck_train": "none stated",
    "sick2014": "CC BY-NC-SA 3.0",
    "msrp": "Microsoft Research Paraphrase Corpus licence",
    "bartscore_meta_eval": "Apache-2.0 (BARTScore repo) + each dataset's own terms",
    "unieval_meta_eval": "MIT (UniEval repo) + each dataset's own terms",
}


def _folder_of(path: str) -> str:
    parts = path.split("/")
    two = "/".join(parts[:2])
    return two if two in FOLDER_LICENCE else parts[0]


# --------------------------------------------------------------------------- reading the manifest
_MANIFEST_CACHE: dict[str, pd.DataFrame] = {}


def load_manifest(path: Path | None = None) -> pd.DataFrame:
    """The manifest as a DataFrame (columns :data:`COLUMNS`)."""
    p = Path(path) if path else MANIFEST_PATH
    key = str(p)
    if key not in _MANIFEST_CACHE:
        if not p.is_file():
            raise FileNotFoundError(f"data manifest not found: {p}")
        df = pd.read_csv(p, sep="\t", comment="#", dtype=str, keep_default_na=False)
        missing = set(COLUMNS) - set(df.columns)
        if missing:
            raise ValueError(f"{p}: manifest lacks columns {sorted(missing)}")
        df["bytes"] = df["bytes"].astype(int)
        _MANIFEST_CACHE[key] = df
    return _MANIFEST_CACHE[key].copy()


def _expected(rel: str) -> dict:
    m = load_manifest()
    hit = m[m["path"] == rel]
    if hit.empty:
        raise ChecksumError(f"{rel}: not listed in {MANIFEST_PATH}; every raw file a builder reads "
                            "must be in the manifest")
    return hit.iloc[0].to_dict()


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


# memo: (absolute path, size, mtime_ns) -> sha256, so each file is hashed once per process
_HASH_MEMO: dict[tuple, str] = {}


def _cached_sha(path: Path) -> str:
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASH_MEMO:
        _HASH_MEMO[key] = sha256_file(path)
    return _HASH_MEMO[key]


def clear_memo() -> None:
    _HASH_MEMO.clear()
    _MANIFEST_CACHE.clear()


def raw_path(rel: str, data_dir: Path | None = None) -> Path:
    """Absolute path of mirror file ``rel`` after checking its sha256 against the manifest.

    Raises :class:`MissingRawFileError` when the file is absent and :class:`ChecksumError` when it
    differs from the manifest. There is no fallback: a builder never reads an unverified file.
    """
    exp = _expected(rel)
    root = Path(data_dir) if data_dir else config.data_dir()
    p = root / rel
    if not p.is_file():
        err = MissingRawFileError(
            f"raw file missing from the data mirror: {p} (upstream {exp['repo']}@{exp['commit'][:10]}:"
            f"{exp['upstream_path']}). Run `tfc data fetch` or set TFC_DATA_DIR.")
        err.rel = rel
        raise err
    got = _cached_sha(p)
    if got != exp["sha256"]:
        raise ChecksumError(
            f"checksum mismatch for {rel}: sha256 {got} but data/MANIFEST says {exp['sha256']}. "
            f"The file at {p} is not the pinned upstream copy; restore it (tfc data fetch) "
            "rather than editing the manifest.")
    return p


def verify(data_dir: Path | None = None, only: str | None = None) -> pd.DataFrame:
    """Check every manifest entry in the mirror: columns ``path, status, expected, found``.

    ``status`` is ``ok``, ``missing`` or ``changed``. ``only`` is a regex on the path.
    """
    root = Path(data_dir) if data_dir else config.data_dir()
    rows = []
    for r in load_manifest().itertuples():
        if only and not re.search(only, r.path):
            continue
        p = root / r.path
        if not p.is_file():
            rows.append((r.path, "missing", r.sha256, ""))
            continue
        got = _cached_sha(p)
        rows.append((r.path, "ok" if got == r.sha256 else "changed", r.sha256, got))
    return pd.DataFrame(rows, columns=["path", "status", "expected", "found"])


# --------------------------------------------------------------------------- fetch
@dataclass
class FetchResult:
    path: str
    status: str  # fetched | present | skipped-derived | skipped-local | failed
    detail: str = ""


def upstream_url(entry: dict, template: str = DEFAULT_URL_TEMPLATE) -> str | None:
    if entry["repo"] in ("derived", "mirror", ""):
        return None
    return template.format(repo=entry["repo"], commit=entry["commit"], upstream_path=entry["upstream_path"],
                           path=entry["path"])


def fetch(dest: Path | None = None, url_template: str = DEFAULT_URL_TEMPLATE, only: str | None = None,
          force: bool = False, timeout: float = 60.0, log=print) -> list[FetchResult]:
    """Download the pinned upstream blobs into the mirror ``dest`` (default :func:`config.data_dir`).

    Each download is checked against the manifest's sha256 before it is moved into place; a file
    that does not match is deleted and reported as ``failed``. Derived files cannot be downloaded
    (they are built from other mirror files) and are reported as ``skipped-derived``.
    """
    root = Path(dest) if dest else config.data_dir()
    out = []
    for entry in load_manifest().to_dict("records"):
        rel = entry["path"]
        if only and not re.search(only, rel):
            continue
        target = root / rel
        if target.is_file() and not force and sha256_file(target) == entry["sha256"]:
            out.append(FetchResult(rel, "present"))
            continue
        url = upstream_url(entry, url_template)
        if url is None:  # derived files are rebuilt from other mirror files; SOURCE.txt notes are local
            status = "skipped-derived" if entry["repo"] == "derived" else "skipped-local"
            out.append(FetchResult(rel, status, entry["upstream_path"]))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".fetch-")
        try:
            with os.fdopen(fd, "wb") as f, urllib.request.urlopen(url, timeout=timeout) as resp:
                shutil.copyfileobj(resp, f)
            got = sha256_file(Path(tmp))
            if got != entry["sha256"]:
                raise ChecksumError(f"{url}: downloaded sha256 {got} != manifest {entry['sha256']}")
            os.replace(tmp, target)
            out.append(FetchResult(rel, "fetched", url))
            log(f"fetched {rel}")
        except Exception as exc:  # report every failure by name; never keep a bad file
            if os.path.exists(tmp):
                os.unlink(tmp)
            out.append(FetchResult(rel, "failed", f"{type(exc).__name__}: {exc}"))
            log(f"FAILED {rel}: {exc}")
    return out


# --------------------------------------------------------------------------- building the manifest
def _parse_source_txt(path: Path, folder: str) -> dict[str, dict]:
    """Per-file records of a mirror folder's SOURCE.txt (after its ``FILES`` heading)."""
    text = path.read_text()
    if "\nFILES\n" not in text:
        return {}
    body = text.split("\nFILES\n", 1)[1]
    recs: dict[str, dict] = {}
    cur = None
    for line in body.splitlines():
        if not line.strip() or set(line.strip()) == {"-"}:
            continue
        if not line.startswith(" "):
            name = line.split()[0]
            cur = recs.setdefault(f"{folder}/{name}", {"derived": "[DERIVED]" in line})
            continue
        m = re.match(r"\s+([a-z ]+):\s*(.*)$", line)
        if m and cur is not None:
            k = m.group(1).strip()
            cur.setdefault(k, m.group(2).strip())
    return recs


def build_manifest(data_dir: Path | None = None) -> pd.DataFrame:
    """Assemble the manifest from the mirror's ``MANIFEST.sha256`` and each folder's SOURCE.txt."""
    root = Path(data_dir) if data_dir else config.data_dir()
    info: dict[str, dict] = {}
    for src in sorted(root.rglob("SOURCE.txt")):
        folder = src.parent.relative_to(root).as_posix()
        info.update(_parse_source_txt(src, folder))
    rows = []
    for line in (root / "MANIFEST.sha256").read_text().splitlines():
        if not line.strip():
            continue
        sha, rel = line.split(None, 1)
        rel = rel.strip().lstrip("*")
        if rel == "README.md":
            # the mirror's top-level README is prose about the mirror, read by no builder; its line in
            # MANIFEST.sha256 is stale (the README was edited after the hashes were taken), see data/README.md
            continue
        rec = info.get(rel, {})
        size = (root / rel).stat().st_size
        if rec.get("derived"):
            repo, commit = "derived", ""
            upstream = "built from: " + (rec.get("inputs") or rec.get("input") or rec.get("converted from")
                                      or "other mirror files")
        elif "repo" in rec:
            repo, commit, upstream = rec["repo"], rec.get("commit", ""), rec.get("original path", "")
        else:  # the mirror's own notes (SOURCE.txt, README.md)
            repo, commit, upstream = "mirror", "", "staging notes of the offline mirror"
        if rec.get("sha256") and rec["sha256"] != sha:
            raise ValueError(f"{rel}: SOURCE.txt sha256 {rec['sha256']} != MANIFEST.sha256 {sha}")
        lic = FOLDER_LICENCE.get(_folder_of(rel), "see SOURCE.txt") if repo != "mirror" else "n/a"
        rows.append({"path": rel, "sha256": sha, "bytes": size, "repo": repo, "commit": commit,
                     "upstream_path": upstream.replace("\t", " "), "licence": lic})
    return pd.DataFrame(rows, columns=COLUMNS).sort_values("path").reset_index(drop=True)


def write_manifest(df: pd.DataFrame, path: Path | None = None) -> Path:
    p = Path(path) if path else MANIFEST_PATH
    p.parent.mkdir(parents=True, exist_ok=True)
    header = ("# tfc data/MANIFEST: every raw file the project reads, relative to the mirror "
              "(tfc.config.data_dir()).\n# Generated by `tfc data manifest --write` from the mirror's "
              "MANIFEST.sha256 and SOURCE.txt files; checked by `tfc data verify`.\n")
    p.write_text(header + df.to_csv(sep="\t", index=False))
    _MANIFEST_CACHE.pop(str(p), None)
    return p
