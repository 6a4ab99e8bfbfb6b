"""Sphinx extension for the book: vendored MathJax, so the HTML needs no CDN at view time.

The PyPI package ``sphinx-mathjax-offline`` ships MathJax 3 but installs it under a hyphenated
directory (``site-packages/sphinx-mathjax-offline``) that cannot be imported as a Sphinx extension,
so this module does what its ``setup`` does, locating the files through the package's metadata.
"""
from __future__ import annotations

from importlib import metadata
from pathlib import Path


def _mathjax_dir() -> Path:
    dist = metadata.distribution("sphinx-mathjax-offline")
    for f in dist.files or []:
        if f.name == "tex-chtml.js" and "static/mathjax" in str(f):
            return Path(dist.locate_file(f)).parent
    raise FileNotFoundError("sphinx-mathjax-offline is installed but its static/mathjax folder was not found")


def _copy_mathjax(app, exc):
    if exc is None:
        from sphinx.util.fileutil import copy_asset

        copy_asset(str(_mathjax_dir()), str(Path(app.outdir) / "_static" / "mathjax"))


def setup(app):
    _mathjax_dir()  # fail early with a clear message
    app.config.mathjax_path = "mathjax/tex-chtml.js"
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
