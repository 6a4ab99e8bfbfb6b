"""Execute the book's notebooks with papermill and build the HTML with Jupyter Book.

The chapters are committed as MyST markdown notebooks, ``notebooks/NN_name.md`` (jupytext), so a diff
reads as text. ``tfc book run --mode smoke|default|full`` (:mod:`tfc.cli.book`) converts each one to
``book/generated/_source/NN_name.ipynb`` (:func:`to_ipynb`, the ``parameters`` tag kept) and executes
that with papermill into ``book/generated/NN_name.ipynb``, the page Jupyter Book renders;
``tfc book build`` runs ``jupyter-book build`` with execution off and warnings as errors. The three
modes share one code path and differ only in the parameters injected into each notebook:

* ``smoke``: a few examples per dataset and tiny/cached models, so CI executes every chapter quickly;
* ``default``: the embedded offline default (committed score caches, CPU-feasible scorers);
* ``full``: recompute everything (``make reproduce``), on the GPU when one is present.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tfc.config import REPO_ROOT

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
GENERATED_DIR = REPO_ROOT / "book" / "generated"
# the chapters' text format (jupytext) and where their unexecuted .ipynb conversions go, inside the output folder
NOTEBOOK_SUFFIX = ".md"
SOURCE_SUBDIR = "_source"

MODES: dict[str, dict] = {
    "smoke": {"mode": "smoke", "sample": 40},
    "default": {"mode": "default", "sample": None},
    "full": {"mode": "full", "sample": None},
}
# parameters every notebook's `parameters` cell must define (see tests/test_notebooks_static.py)
# every chapter reads and writes the score cache (a `use_cache` switch that only one chapter read is gone)
REQUIRED_PARAMETERS = ("mode", "datasets", "scorers", "checkpoint", "sample", "seed", "device")


# notebooks that read the others' outputs (the reproduction ledger): always executed last, in this
# order (the front page's headline table and the ledger page both read what the chapters recorded)
RUN_LAST = ("00_overview", "08_ledger")
# IPython extensions every notebook kernel starts with: tfc.book.readable renders each DataFrame a chapter
# shows or glues (integers as integers, one number of decimals per table, headers in words)
KERNEL_EXTENSIONS = ("tfc.book.readable",)


def notebooks(only: list[str] | None = None) -> list[Path]:
    last = {stem: i for i, stem in enumerate(RUN_LAST)}
    nbs = sorted(NOTEBOOK_DIR.glob(f"[0-9][0-9]_*{NOTEBOOK_SUFFIX}"),
                 key=lambda p: (p.stem in last, last.get(p.stem, 0), p.name))
    if only:
        wanted = {Path(o).stem for o in only}
        unknown = wanted - {p.stem for p in nbs}
        if unknown:
            raise ValueError(f"unknown notebook(s): {', '.join(sorted(unknown))}")
        nbs = [p for p in nbs if p.stem in wanted]
    return nbs


def to_ipynb(source: Path, dest: Path) -> Path:
    """Convert a MyST markdown notebook (jupytext) to ``dest`` (.ipynb) for papermill; returns ``dest``.

    Cell tags travel in the ``{code-cell}`` options (``:tags: [parameters]``), so papermill finds the
    parameters cell; outputs and execution counts are empty, as in a stripped notebook."""
    import jupytext
    import nbformat

    nb = jupytext.read(source)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest)
    return dest


def _hide_injected(path: Path) -> None:
    """Remove the parameters cells and the leading ``%matplotlib inline``; fold the other code cells."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0] if nb.cells else None
    if first is not None and first.source.strip() == "%matplotlib inline":  # plumbing, not content
        first.setdefault("metadata", {})["tags"] = first["metadata"].get("tags", []) + ["remove-cell"]
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if ("injected-parameters" in tags or "parameters" in tags) and "remove-cell" not in tags:
            cell["metadata"]["tags"] = tags = tags + ["remove-cell"]
        # code is folded (one click shows it) so pages read as text + tables + figures;
        # a cell tagged "show-input" stays open
        if cell.cell_type == "code" and not {"remove-cell", "remove-input", "hide-input", "show-input"} & set(tags):
            cell.setdefault("metadata", {})["tags"] = tags + ["hide-input"]
    nbformat.write(nb, path)


def kernel_arguments() -> list[str]:
    """Command-line options for each notebook kernel: load :data:`KERNEL_EXTENSIONS`, and log only the kernel
    application's errors (its one warning here, that a local kernel talks over TCP without encryption, would
    otherwise print once per chapter on the console; what the cells print is captured in the notebooks)."""
    return [f"--InteractiveShellApp.extensions={ext}" for ext in KERNEL_EXTENSIONS] + ["--IPKernelApp.log_level=ERROR"]


def run_notebooks(mode: str = "default", only: list[str] | None = None, extra: dict | None = None,
                  output_dir: Path = GENERATED_DIR, log=print) -> list[dict]:
    """Execute notebooks with papermill; returns one timing record per notebook."""
    import papermill as pm

    params = dict(MODES[mode])
    params.update({k: v for k, v in (extra or {}).items() if v is not None})
    output_dir.mkdir(parents=True, exist_ok=True)
    # chapters record their paper-vs-ours frames next to the notebooks (tfc.book.ledger); the kernels
    # inherit this environment variable
    previous = os.environ.get("TFC_LEDGER_DIR")
    os.environ["TFC_LEDGER_DIR"] = str(Path(output_dir).resolve() / "_ledger")
    from tfc.book import ledger

    records = []
    try:
        for nb in notebooks(only):
            name = nb.stem + ".ipynb"
            out = output_dir / name
            ledger.clear(nb.stem)      # a chapter's old records go before it runs again
            t0 = time.perf_counter()
            log(f"[tfc book] {name} ({mode}) ...")
            source = to_ipynb(nb, output_dir / SOURCE_SUBDIR / name)
            pm.execute_notebook(str(source), str(out), parameters=params, cwd=str(REPO_ROOT),
                                kernel_name="python3", language="python", progress_bar=False, log_output=False,
                                extra_arguments=kernel_arguments())
            _hide_injected(out)
            dt = time.perf_counter() - t0
            log(f"[tfc book] {name} done in {dt:.1f}s")
            records.append({"notebook": name, "mode": mode, "seconds": round(dt, 2)})
    finally:
        if previous is None:
            os.environ.pop("TFC_LEDGER_DIR", None)
        else:
            os.environ["TFC_LEDGER_DIR"] = previous
    # keep the timings of notebooks not run this time (a --only run updates its own entries)
    tpath = output_dir / "timings.json"
    try:
        old = json.loads(tpath.read_text()) if tpath.is_file() else []
    except ValueError:
        old = []
    ran = {r["notebook"] for r in records}
    merged = [r for r in old if isinstance(r, dict) and r.get("notebook") not in ran] + records
    tpath.write_text(json.dumps(sorted(merged, key=lambda r: r["notebook"]), indent=2))
    return records


def glue_values(generated_dir: Path = GENERATED_DIR) -> dict[str, dict]:
    """Every glue value of the executed notebooks: ``{"<notebook stem>/<key>": {mime: value}}``.

    Text outputs (``text/plain``, ``text/html``, ``text/markdown``, ...) are kept verbatim; images and
    other binary outputs as the sha256 of their base64 text, so two builds compare cell by cell
    (``tfc book values --against before.json``)."""
    import hashlib

    out: dict[str, dict] = {}
    for path in sorted(Path(generated_dir).glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(path.read_text())
        for cell in nb.get("cells", []):
            for output in cell.get("outputs", []):
                meta = output.get("metadata", {}).get("scrapbook")
                if not meta:
                    continue
                prefix = meta.get("mime_prefix", "")
                value = {}
                for mime, data in output.get("data", {}).items():
                    mime = mime[len(prefix):] if prefix and mime.startswith(prefix) else mime
                    text = "".join(data) if isinstance(data, list) else data
                    if not isinstance(text, str):
                        text = json.dumps(text, sort_keys=True)
                    if mime.startswith("text/") or mime.endswith("json"):
                        value[mime] = text
                    else:
                        value[mime] = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
                out[f"{path.stem}/{meta['name']}"] = value
    return out


def compare_values(before: dict, after: dict) -> list[str]:
    """Lines describing every key added, removed or changed between two :func:`glue_values` dumps."""
    lines = [f"- {k}" for k in sorted(set(before) - set(after))]
    lines += [f"+ {k}" for k in sorted(set(after) - set(before))]
    for key in sorted(set(before) & set(after)):
        for mime in sorted(set(before[key]) | set(after[key])):
            old, new = before[key].get(mime), after[key].get(mime)
            if old != new:
                lines.append(f"~ {key} [{mime}]: {str(old)[:120]!r} -> {str(new)[:120]!r}")
    return lines


def missing_chapters(generated_dir: Path | None = None) -> list[str]:
    """Stems of the chapters that have no executed notebook in ``generated_dir`` yet."""
    gen = Path(generated_dir or GENERATED_DIR)
    return [nb.stem for nb in notebooks() if not (gen / f"{nb.stem}.ipynb").is_file()]


def build_html(strict: bool = True, log=print) -> Path:
    """``jupyter-book build`` with execution off (set in _config.yml); output under book/_build/html.

    Strict (warnings are errors) only when every chapter has been executed: after ``make chapter`` on a
    fresh clone the other chapters do not exist yet, and the table of contents and the cross-references to
    them would fail a strict build. That build goes on without ``-W`` and says which chapters are missing."""
    missing = missing_chapters()
    if strict and missing:
        log(f"[tfc book] {len(missing)} chapter(s) not executed yet ({', '.join(missing)}): building without -W; "
            "`make book` executes them all")
        strict = False
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(REPO_ROOT / "book"),
           "--config", str(REPO_ROOT / "_config.yml"), "--toc", str(REPO_ROOT / "book" / "_toc.yml"),
           "--path-output", str(REPO_ROOT / "book")]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    env = dict(os.environ)
    subprocess.run(cmd, check=True, cwd=REPO_ROOT, env=env)
    return REPO_ROOT / "book" / "_build" / "html"
