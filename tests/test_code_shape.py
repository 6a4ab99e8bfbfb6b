"""The shape of the library's code: no function in tfc/ is longer than MAX_FUNCTION_LINES lines
(decorators and docstring included), so each one reads on one screen, and no module is longer than
MAX_MODULE_LINES lines, so each one keeps to one purpose."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 600


def _long_functions(root: Path = ROOT / "tfc", limit: int = MAX_FUNCTION_LINES) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                n = node.end_lineno - start + 1
                if n > limit:
                    out.append(f"{path.relative_to(root.parent)}:{start} {node.name} ({n} lines)")
    return out


def test_no_function_is_over_80_lines():
    long = _long_functions()
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them into helpers): {long}"


def test_the_length_rule_counts_decorators_and_bodies(tmp_path):
    (tmp_path / "m.py").write_text("@dec\ndef f():\n" + "    x = 1\n" * 5)
    assert _long_functions(tmp_path, limit=7) == [] and len(_long_functions(tmp_path, limit=6)) == 1


def _long_modules(root: Path = ROOT / "tfc", limit: int = MAX_MODULE_LINES) -> list[str]:
    return [f"{p.relative_to(root.parent)} ({n} lines)" for p in sorted(root.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > limit]


def test_no_module_is_over_600_lines():
    long = _long_modules()
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by purpose): {long}"


def test_the_module_rule_counts_lines(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n" * 5)
    assert _long_modules(tmp_path, limit=5) == [] and len(_long_modules(tmp_path, limit=4)) == 1
