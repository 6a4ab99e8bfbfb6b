"""The myst-nb glue keys of the book: each chapter owns its keys.

Notebooks call :func:`glue` with a registered key; the book's pages reference the same keys with ``{glue:}``
roles. Each chapter lists the keys it glues in ``glue_keys/<notebook stem>.csv`` beside this module (key, what
it holds); a key glued in one chapter and referenced in others belongs to the chapter that glues it, and a key
that chapter code computes for a notebook (``for k, v in deployment.glue_values(dep).items(): glue(k, v)``)
belongs to that notebook. :func:`load_keys` reads the files (a key registered twice is an error) and, given
the notebooks, checks that every file lists only keys its chapter glues; ``tests/test_notebooks_static.py``
checks the converse (a notebook glues only keys of its own file, every ``{glue:}`` reference is registered), so
a renamed key cannot leave a "Pending glue" hole in the book.
"""
from __future__ import annotations

import ast
import csv
import re
from functools import lru_cache
from pathlib import Path

KEYS_DIR = Path(__file__).with_name("glue_keys")
CHAPTERS_DIR = Path(__file__).with_name("chapters")

_LITERAL = re.compile(r"""\bglue\(\s*["']([\w\-]+)["']""")
_COMPUTED = re.compile(r"""\bglue\(\s*(?!["'\s])""")
_REFERENCE = re.compile(r"\{glue(?::\w+)?\}`([\w\-]+)`")
_QUOTED = re.compile(r"""(?<![\w{])["']([A-Za-z][\w\-]*)["']""")
_F_STRING = re.compile(r"""\bf(["'])(.*?)\1""")
_CHAPTER_IMPORT = re.compile(r"from tfc\.book\.chapters(?:\.(\w+) import| import (\w+))")


def load_keys(keys_dir: Path = KEYS_DIR, notebook_dir: Path | None = None) -> dict[str, dict[str, str]]:
    """The registered keys, ``{notebook stem: {key: description}}``, in the order of each chapter's file.

    Raises ``ValueError`` when a key is registered by two chapters and, with ``notebook_dir``, when a file
    names no notebook there or lists a key its chapter does not glue (see :func:`glued_by`)."""
    chapters: dict[str, dict[str, str]] = {}
    owner: dict[str, str] = {}
    problems = []
    for path in sorted(Path(keys_dir).glob("*.csv")):
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            if r["key"] in owner:
                problems.append(f"{r['key']!r} is registered by both {owner[r['key']]} and {path.stem}")
            owner.setdefault(r["key"], path.stem)
        chapters[path.stem] = {r["key"]: r["description"] for r in rows}
    if notebook_dir is not None:
        problems += _not_glued(chapters, Path(notebook_dir))
    if problems:
        raise ValueError("glue key registry (tfc/book/glue_keys/): " + "; ".join(problems))
    return chapters


def _not_glued(chapters: dict[str, dict[str, str]], notebook_dir: Path) -> list[str]:
    """A line per chapter file without a notebook and per registered key its chapter does not glue."""
    texts = {p.stem: p.read_text(encoding="utf-8") for p in sorted(notebook_dir.glob("*.md"))}
    literal = {stem: set(_LITERAL.findall(t)) for stem, t in texts.items()}
    out = []
    for stem, keys in chapters.items():
        if stem not in texts:
            out.append(f"{stem}.csv names no notebook {stem}.md")
            continue
        others = set().union(*(v for s, v in literal.items() if s != stem))
        missing = [k for k in keys if not glued_by(k, texts[stem], others)]
        if missing:
            out.append(f"{stem}.csv lists keys that {stem}.md does not glue: {missing}")
    return out


def glued_by(key: str, notebook: str, glued_elsewhere: set[str] = frozenset()) -> bool:
    """Whether the notebook text (MyST markdown) glues ``key``: a ``glue("key", ...)`` call, or, when the
    notebook glues computed keys (``glue(k, ...)``, ``glue(f"perf_{key}_verdict", ...)``), a key that no other
    notebook glues by name and that the notebook names: quoted or referenced (``{glue:}`key```) in its text,
    quoted in a chapter module it imports, or matching an f-string there (``f"deploy_{tag}_{key}"``)."""
    if key in _LITERAL.findall(notebook):
        return True
    if key in glued_elsewhere or not _COMPUTED.search(notebook):
        return False
    if key in _REFERENCE.findall(notebook) or key in _QUOTED.findall(notebook):
        return True
    names, templates = _names(notebook)
    return key in names or any(t.fullmatch(key) for t in templates)


def _names(notebook: str) -> tuple[set[str], list[re.Pattern]]:
    """The string constants and f-string templates of the chapter modules the notebook imports, and the
    f-string templates of the notebook itself."""
    names: set[str] = set()
    templates = [_template(re.split(r"\{[^{}]*\}", body)) for _, body in _F_STRING.findall(notebook)]
    for module in {a or b for a, b in _CHAPTER_IMPORT.findall(notebook)}:
        module_names, module_templates = _module_names(module)
        names |= module_names
        templates += module_templates
    return names, [t for t in templates if t is not None]


@lru_cache(maxsize=None)
def _module_names(module: str) -> tuple[frozenset[str], tuple[re.Pattern | None, ...]]:
    """The string constants and f-string templates of ``tfc/book/chapters/<module>.py``."""
    path = CHAPTERS_DIR / f"{module}.py"
    if not path.is_file():
        return frozenset(), ()
    names, templates = set(), []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
        elif isinstance(node, ast.JoinedStr):
            literals = [""]
            for v in node.values:
                if isinstance(v, ast.Constant):
                    literals[-1] += str(v.value)
                else:
                    literals.append("")
            templates.append(_template(literals))
    return frozenset(names), tuple(templates)


def _template(literals: list[str]) -> re.Pattern | None:
    """A regex for the keys an f-string makes, from its literal parts (one ``{...}`` between each two): a
    word for each ``{...}``. ``None`` without a placeholder, or unless it starts with a key prefix of three
    characters or more (``"perf_"``) and every literal part is made of key characters."""
    if len(literals) < 2 or not re.fullmatch(r"[A-Za-z][\w\-]{2,}", literals[0]):
        return None
    if not all(re.fullmatch(r"[\w\-]*", part) for part in literals):
        return None
    return re.compile(r"[\w\-]+".join(map(re.escape, literals)))


CHAPTER_KEYS: dict[str, dict[str, str]] = load_keys()
KEYS: dict[str, str] = {k: d for keys in CHAPTER_KEYS.values() for k, d in keys.items()}


def register(key: str, description: str) -> None:
    """Register a key at run time (for chapters added by users; the book's own keys live in KEYS)."""
    KEYS.setdefault(key, description)


def glue(key: str, value, display: bool = False):
    """``myst_nb.glue`` with a registered-key check (imports myst_nb lazily)."""
    if key not in KEYS:
        raise KeyError(f"glue key {key!r} is not registered in tfc.book.glue.KEYS")
    from myst_nb import glue as _glue

    return _glue(key, _plain(value), display=display)


def _plain(value):
    """A whole float is glued as an integer (``2495.0`` reads ``2495`` in the prose); numpy scalars
    become Python numbers so that the text shows the number, not its type."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    f = float(value)
    return int(f) if f.is_integer() else f
