"""Committed notebooks: MyST markdown (jupytext), no outputs, %matplotlib inline first, a complete
parameters cell that survives the runner's conversion, and every glue key registered by the chapter that glues it
(tfc/book/glue_keys/<notebook stem>.csv, read by tfc.book.glue.load_keys)."""
import ast
import re
from pathlib import Path

import nbformat
import pytest

from tfc.book.runner import NOTEBOOK_DIR, REQUIRED_PARAMETERS, notebooks, to_ipynb
from tfc.book.glue import CHAPTER_KEYS, KEYS, load_keys

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


GLUED_BY_NAME = re.compile(r"""glue\(\s*["']([\w\-]+)["']""")
REFERENCED = re.compile(r"\{glue(?::\w+)?\}`([\w\-]+)")


def _glue_keys_used(pages: list[Path]) -> set[str]:
    """Every key the pages glue by name or reference with a ``{glue:}`` role."""
    used = set()
    for p in pages:
        text = p.read_text()
        used |= set(GLUED_BY_NAME.findall(text)) | set(REFERENCED.findall(text))
    return used


def _not_owned(notebook_dir: Path, chapter_keys: dict[str, dict[str, str]]) -> list[str]:
    """``notebook: key`` for each key a notebook glues by name that its own file does not register."""
    return [f"{p.stem}: {k}" for p in sorted(notebook_dir.glob("*.md"))
            for k in sorted(set(GLUED_BY_NAME.findall(p.read_text()))) if k not in chapter_keys.get(p.stem, {})]


def test_glue_keys_are_registered():
    pages = list(NOTEBOOK_DIR.glob("*.md")) + list((ROOT / "book").glob("*.md"))
    unknown = _glue_keys_used(pages) - set(KEYS)
    assert not unknown, f"glue keys used but not registered in tfc/book/glue_keys/: {sorted(unknown)}"


def test_each_chapter_glues_the_keys_of_its_own_file():
    stray = _not_owned(NOTEBOOK_DIR, CHAPTER_KEYS)
    assert not stray, f"keys glued by a chapter but not in its tfc/book/glue_keys/<notebook>.csv: {stray}"


def test_each_chapter_file_lists_only_keys_its_chapter_glues():
    load_keys(notebook_dir=NOTEBOOK_DIR)    # raises on a key registered twice, a stray file or a key not glued


def _tiny_book(tmp_path, notebook: str, files: dict[str, str]):
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "01_a.md").write_text(notebook)
    (tmp_path / "keys").mkdir()
    for stem, keys in files.items():
        (tmp_path / "keys" / f"{stem}.csv").write_text("key,description\n" + "".join(f"{k},d\n" for k in keys))
    return tmp_path / "nb", tmp_path / "keys"


def test_the_registry_rules_catch_stray_and_unregistered_keys(tmp_path):
    nb = 'glue("a_one", 1)\nfor k, v in values.items():\n    glue(k, v)\n{glue:text}`a_two` and {glue:text}`a_zero`\n'
    nbs, keys = _tiny_book(tmp_path, nb, {"01_a": ["a_one", "a_two"]})
    chapters = load_keys(keys, nbs)                                    # a_two: computed, and named by the chapter
    assert _not_owned(nbs, chapters) == [] and _glue_keys_used([nbs / "01_a.md"]) - {"a_one", "a_two"} == {"a_zero"}
    (keys / "01_a.csv").write_text("key,description\na_two,d\n")     # the notebook glues an unregistered key
    assert _not_owned(nbs, load_keys(keys, nbs)) == ["01_a: a_one"]
    (keys / "01_a.csv").write_text("key,description\na_one,d\na_gone,d\n")
    with pytest.raises(ValueError, match="a_gone"):                     # a file lists a key its chapter does not glue
        load_keys(keys, nbs)
    (keys / "02_b.csv").write_text("key,description\na_one,d\n")
    with pytest.raises(ValueError, match="registered by both"):         # a key registered twice
        load_keys(keys)
    with pytest.raises(ValueError, match="names no notebook"):
        load_keys(keys, nbs)


def test_a_key_belongs_to_the_chapter_that_glues_it(tmp_path):
    nb = 'for k in ks:\n    glue(f"ab_{k}_n", 1)\nglue(key, 2)\n'
    nbs, keys = _tiny_book(tmp_path, nb, {"01_a": ["ab_x_n", "b_one"]})
    (nbs / "02_b.md").write_text('glue("b_one", 1)\n{glue:text}`ab_x_n`\n')
    with pytest.raises(ValueError, match=r"01_a.md does not glue: \['b_one'\]"):   # 02_b glues it by name
        load_keys(keys, nbs)
    (keys / "01_a.csv").write_text("key,description\nab_x_n,d\n")               # an f-string glue of 01_a
    (keys / "02_b.csv").write_text("key,description\nb_one,d\n")
    assert load_keys(keys, nbs) == {"01_a": {"ab_x_n": "d"}, "02_b": {"b_one": "d"}}
