"""Committed notebooks: MyST markdown (jupytext), no outputs, %matplotlib inline first, a complete
parameters cell that survives the runner's conversion, and every glue key registered in tfc.book.glue."""
import ast
import re
from pathlib import Path

import nbformat
import pytest

from tfc.book.runner import NOTEBOOK_DIR, REQUIRED_PARAMETERS, notebooks, to_ipynb
from tfc.book.glue import KEYS

ROOT = Path(__file__).resolve().parent.parent
NBS = notebooks()


def test_there_are_notebooks():
    assert NBS, "no notebooks found in notebooks/"
    assert all(p.suffix == ".md" for p in NBS)


def test_chapters_are_committed_as_text_only():
    """The chapters are MyST markdown; an .ipynb next to them would be a second, JSON copy."""
    assert not list(NOTEBOOK_DIR.glob("*.ipynb")), "notebooks/ holds .ipynb files: commit the MyST .md only"
    for p in NBS:
        head = p.read_text().split("---", 2)[1]
        assert "format_name: myst" in head, f"{p.name}: not a jupytext MyST notebook"


@pytest.mark.parametrize("path", NBS, ids=lambda p: p.stem)
def test_notebook_is_clean(path, tmp_path):
    nb = nbformat.read(to_ipynb(path, tmp_path / (path.stem + ".ipynb")), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    for c in code:
        assert not c.get("outputs"), f"{path.name}: a chapter source holds outputs"
        assert c.get("execution_count") is None, f"{path.name}: execution counts not stripped"
    assert code[0].source.strip().splitlines()[0] == "%matplotlib inline", f"{path.name}: first line must be %matplotlib inline"
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
    assigned = set(re.findall(r"^(\w+)\s*=", params[0].source, flags=re.M))
    missing = set(REQUIRED_PARAMETERS) - assigned
    assert not missing, f"{path.name}: parameters cell lacks {sorted(missing)}"


MAX_LOOP_LINES = 3


def _code_offences(source: str) -> list[str]:
    """What a code cell must not hold: a ``def``, a ``class`` or a loop longer than MAX_LOOP_LINES lines
    (IPython magics and shell lines, ``%``/``!``, are blanked before parsing)."""
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    out = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(f"line {node.lineno}: {type(node).__name__} {node.name}")
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and node.end_lineno - node.lineno + 1 > MAX_LOOP_LINES:
            out.append(f"line {node.lineno}: a loop of {node.end_lineno - node.lineno + 1} lines")
    return out


@pytest.mark.parametrize("path", NBS, ids=lambda p: p.stem)
def test_notebook_cells_call_glue_show(path, tmp_path):
    """Notebooks hold no def, no class and no loop longer than three lines: the code lives in
    tfc/book/chapters/<chapter>.py, so a cell calls, glues and shows."""
    nb = nbformat.read(to_ipynb(path, tmp_path / (path.stem + ".ipynb")), as_version=4)
    bad = [f"cell {i}, {o}" for i, c in enumerate(nb.cells) if c.cell_type == "code" for o in _code_offences(c.source)]
    assert not bad, f"{path.name}: move this code into tfc/book/chapters/: {bad}"


def test_the_cell_rule_catches_defs_classes_and_long_loops():
    assert _code_offences("%matplotlib inline\nx = 1\nfor i in range(3):\n    glue(i)\n") == []
    assert len(_code_offences("def f():\n    return 1\nclass C:\n    pass\n")) == 2
    assert _code_offences("for i in x:\n    a = i\n    b = a\n    c = b\n") == ["line 1: a loop of 4 lines"]


def _glue_keys_used():
    used = set()
    for p in list(NOTEBOOK_DIR.glob("*.md")) + list((ROOT / "book").glob("*.md")):
        text = p.read_text()
        used |= set(re.findall(r"""glue\(\s*["']([\w\-]+)["']""", text))
        used |= set(re.findall(r"\{glue(?::\w+)?\}`([\w\-]+)", text))
    return used


def test_glue_keys_are_registered():
    unknown = _glue_keys_used() - set(KEYS)
    assert not unknown, f"glue keys used but not registered in tfc.book.glue.KEYS: {sorted(unknown)}"
