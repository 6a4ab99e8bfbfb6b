"""The shape of the library's code: no function in tfc/ is longer than MAX_FUNCTION_LINES lines
(decorators and docstring included), so each one reads on one screen."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 80


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
