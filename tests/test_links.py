"""Static hygiene of the built book: every internal link and resource resolves, anchors included.

Runs over ``book/_build/html`` after ``make book`` (skipped when the book is not built, an error under
CI where .ci/run builds it first). A small checker instead of ``sphinx -b linkcheck``: linkcheck is
about external URLs, needs the network for them and re-reads the sources; this reads the HTML that is
actually shipped. The HTML parsing uses the standard library's ``html.parser``.
"""
from __future__ import annotations

import os
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "book" / "_build" / "html"
SKIP_SCHEMES = {"http", "https", "mailto", "javascript", "data", "tel", "ftp"}


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str, str]] = []   # (tag, attribute, value)
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if v is None:
                continue
            if k in ("id", "name") and (k == "id" or tag == "a"):
                self.ids.add(v)
            if (k == "href" and tag in ("a", "link", "area")) or (k == "src" and tag in ("img", "script", "iframe",
                                                                                         "source", "video", "audio")):
                self.refs.append((tag, k, v))


def parse(path: Path) -> _Collect:
    p = _Collect()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return p


def broken_links(html_root: Path) -> list[str]:
    """``file: tag attr=value (why)`` for every relative href/src whose file or anchor is missing."""
    # _static/ holds the theme's Jinja macro templates (*.html that are not pages); _sources/ holds copies
    pages = {p.resolve(): None for p in html_root.rglob("*.html")
             if not {"_static", "_sources"} & set(p.relative_to(html_root).parts)}
    cache: dict[Path, _Collect] = {}

    def get(p: Path) -> _Collect:
        if p not in cache:
            cache[p] = parse(p)
        return cache[p]

    bad = []
    for page in sorted(pages):
        for tag, attr, value in get(page).refs:
            u = urlsplit(value)
            if u.scheme in SKIP_SCHEMES or u.netloc or value.startswith("//"):
                continue
            target = page if not u.path else (page.parent / unquote(u.path)).resolve()
            where = f"{page.relative_to(html_root)}: <{tag} {attr}={value!r}>"
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                bad.append(f"{where} (missing file)")
                continue
            frag = unquote(u.fragment)
            if frag and target.suffix == ".html" and frag not in get(target).ids:
                bad.append(f"{where} (missing anchor #{frag})")
    return bad


def _need_book():
    if not (HTML / "index.html").is_file():
        if os.environ.get("CI"):
            pytest.fail("book/_build/html/index.html missing: .ci/run builds the book before the tests")
        pytest.skip("book not built (make book)")


def test_checker_finds_missing_files_and_anchors(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.html").write_text('<h1 id="top">A</h1><a href="b.html#sec">ok</a><a href="#top">self</a>'
                                     '<a href="b.html#nope">bad anchor</a><img src="img/x.png">'
                                     '<a href="https://example.org/x">ext</a><a href="sub/">dir</a>')
    (tmp_path / "b.html").write_text('<section id="sec"></section><script src="_static/s.js"></script>'
                                     '<a href="a.html?x=1#top">q</a><a href="#missing">m</a>')
    (tmp_path / "sub" / "index.html").write_text("<p>sub</p>")
    got = broken_links(tmp_path)
    assert got == ["a.html: <a href='b.html#nope'> (missing anchor #nope)",
                   "a.html: <img src='img/x.png'> (missing file)",
                   "b.html: <script src='_static/s.js'> (missing file)",
                   "b.html: <a href='#missing'> (missing anchor #missing)"]


def test_built_book_has_no_broken_internal_links():
    _need_book()
    bad = broken_links(HTML)
    assert not bad, f"{len(bad)} broken internal link(s):\n" + "\n".join(bad[:40])


def test_every_toc_chapter_was_built():
    _need_book()
    import re

    toc = (ROOT / "book" / "_toc.yml").read_text()
    files = re.findall(r"file:\s*(\S+)", toc) + re.findall(r"root:\s*(\S+)", toc)
    missing = [f for f in files if not (HTML / f"{f}.html").is_file()]
    assert not missing, f"chapters in book/_toc.yml without a built page: {missing}"
