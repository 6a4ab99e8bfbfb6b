"""tfc.book.runner: a MyST markdown chapter is converted to .ipynb with its `parameters` tag, and papermill
injects the mode's parameters into it (a tiny notebook on the python3 kernel)."""
import os
from pathlib import Path

import nbformat

from tfc.book import runner

ROOT = Path(__file__).resolve().parent.parent

TINY = """---
jupytext:
  cell_metadata_filter: tags,-all
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---

```{code-cell}
%matplotlib inline
```

```{code-cell}
:tags: [parameters]

mode = "default"
sample = None
```

# A tiny chapter

```{code-cell}
print(f"mode={mode} sample={sample}")
```
"""


def _tiny(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "99_tiny.md"
    path.write_text(TINY)
    return path


def test_to_ipynb_keeps_the_parameters_tag(tmp_path):
    out = runner.to_ipynb(_tiny(tmp_path / "notebooks"), tmp_path / "build" / "99_tiny.ipynb")
    nb = nbformat.read(out, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].source == "%matplotlib inline"
    assert code[1].metadata.get("tags") == ["parameters"]
    assert 'mode = "default"' in code[1].source
    assert not any(c.get("outputs") for c in code)


def test_run_notebooks_converts_then_injects_parameters(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "NOTEBOOK_DIR", tmp_path / "notebooks")
    _tiny(tmp_path / "notebooks")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    out_dir = tmp_path / "generated"
    records = runner.run_notebooks("smoke", output_dir=out_dir, log=lambda *_: None)
    assert [r["notebook"] for r in records] == ["99_tiny.ipynb"]
    assert (out_dir / runner.SOURCE_SUBDIR / "99_tiny.ipynb").is_file()    # the unexecuted conversion
    nb = nbformat.read(out_dir / "99_tiny.ipynb", as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "mode=smoke sample=40" in text
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "remove-cell" in injected[0].metadata["tags"]


def test_a_partial_build_is_not_strict_and_says_which_chapters_are_missing(tmp_path, monkeypatch):
    # `make chapter` on a fresh clone executes one chapter; a strict (-W) build would then fail on the
    # table of contents entries of the others
    stems = [nb.stem for nb in runner.notebooks()]
    monkeypatch.setattr(runner, "GENERATED_DIR", tmp_path)
    (tmp_path / f"{stems[0]}.ipynb").write_text("{}")
    calls, said = [], []
    monkeypatch.setattr(runner.subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    assert runner.missing_chapters() == stems[1:]
    runner.build_html(log=said.append)
    assert "-W" not in calls[-1] and stems[1] in said[0]
    for s in stems[1:]:
        (tmp_path / f"{s}.ipynb").write_text("{}")
    runner.build_html(log=said.append)
    assert "-W" in calls[-1] and len(said) == 1


def test_a_failing_cell_still_fails_the_run_with_the_kernel_log_at_error(tmp_path, monkeypatch):
    """The kernels log only errors (runner.kernel_arguments); a cell's exception is not a log line, and the
    run still stops on it with the cell's error."""
    import papermill as pm
    import pytest

    monkeypatch.setattr(runner, "NOTEBOOK_DIR", tmp_path / "notebooks")
    path = _tiny(tmp_path / "notebooks")
    path.write_text(TINY + '\n```{code-cell}\nraise ValueError("boom in a chapter")\n```\n')
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    with pytest.raises(pm.PapermillExecutionError, match="boom in a chapter"):
        runner.run_notebooks("smoke", output_dir=tmp_path / "generated", log=lambda *_: None)
