"""The one place that resolves the project's paths and run-time settings.

Three directories, each overridable by an environment variable:

=================  =====================  ==========================================================
what               variable               default
=================  =====================  ==========================================================
data mirror        ``TFC_DATA_DIR``       ``<repo>/../shared/data`` if it exists, else ``<repo>/data/raw``
artifacts          ``TFC_ARTIFACTS_DIR``  ``<repo>/artifacts`` (trained checkpoints; git-ignored)
score cache        ``TFC_CACHE_DIR``      ``<repo>/results/scores`` (committed for slow scorers)
=================  =====================  ==========================================================

``<repo>`` is the directory holding the ``tfc`` package (the clone). The Hugging Face offline flags
are not forced here (users with internet may want the hub); the Makefile and ``.ci/run`` export them.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
REFERENCE_DIR_DEFAULT = REPO_ROOT.parent / "shared" / "reference"
OFFLINE_FLAGS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")


def _env_path(var: str) -> Path | None:
    value = os.environ.get(var)
    return Path(value).expanduser().resolve() if value else None


def data_dir() -> Path:
    """Directory of raw upstream files (the mirror). See ``data/README.md``."""
    p = _env_path("TFC_DATA_DIR")
    if p is not None:
        return p
    shared = REPO_ROOT.parent / "shared" / "data"
    return shared if shared.is_dir() else REPO_ROOT / "data" / "raw"


def reference_dir() -> Path:
    """Directory of the papers' published tables as CSV (``TFC_REFERENCE_DIR`` overrides)."""
    p = _env_path("TFC_REFERENCE_DIR")
    if p is not None:
        return p
    return REFERENCE_DIR_DEFAULT if REFERENCE_DIR_DEFAULT.is_dir() else REPO_ROOT / "data" / "reference"


def artifacts_dir() -> Path:
    """Directory of trained in-house checkpoints (``tfc/<name>`` resolves to ``<artifacts>/<name>``)."""
    return _env_path("TFC_ARTIFACTS_DIR") or REPO_ROOT / "artifacts"


def cache_dir() -> Path:
    """Directory of the score cache (parquet + JSON sidecar per scorer signature, dataset, split)."""
    return _env_path("TFC_CACHE_DIR") or REPO_ROOT / "results" / "scores"


def model_records_dir() -> Path:
    """Committed records of in-house checkpoints (model card, training summary, identity; never weights):
    ``TFC_MODEL_RECORDS_DIR`` or ``<repo>/results/models``."""
    return _env_path("TFC_MODEL_RECORDS_DIR") or REPO_ROOT / "results" / "models"


def offline_flags() -> dict[str, str | None]:
    return {k: os.environ.get(k) for k in OFFLINE_FLAGS}


def default_device() -> str:
    """``TFC_DEVICE`` if set, else ``cuda`` when torch sees a GPU, else ``cpu`` (imports torch lazily)."""
    dev = os.environ.get("TFC_DEVICE")
    if dev:
        return dev
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def enclosing_clone(path: Path) -> Path | None:
    """The tfc clone holding ``path``: the nearest folder at or above it with this project's
    ``pyproject.toml`` (``name = "tfc"``) and the ``tfc/`` package; None outside any clone."""
    path = Path(path).resolve()
    for p in (path, *path.parents):
        project = p / "pyproject.toml"
        if project.is_file() and (p / "tfc" / "__init__.py").is_file():
            try:
                text = project.read_text(errors="replace")
            except OSError:
                continue
            if re.search(r'(?m)^name\s*=\s*"tfc"\s*$', text):
                return p
    return None


def foreign_clone(cwd: Path | None = None) -> Path | None:
    """The clone the working directory lies in when this package was imported from another place, else None.

    The set-up shares one venv between clones of the same lock files and points its editable install at the
    clone set up last (``scripts/setup_env.sh``; any ``make`` target re-points it). Calling ``.venv/bin/tfc``
    in another clone before that would run the other clone's code and read and write its caches, artifacts
    and book: the command line checks this first."""
    try:
        here = enclosing_clone(Path.cwd() if cwd is None else cwd)
    except OSError:                     # a working directory that no longer exists: nothing to compare
        return None
    return here if here is not None and here != REPO_ROOT.resolve() else None
