"""Open the built book in headless Chromium (Debian's package), offline, and check what a reader sees.

Pages: the index (which redirects to the overview), a TRUE page (02_true_auc) and a figure-heavy page
(02_true_length). For each: a screenshot (kept in ``$TFC_SCREENSHOT_DIR`` when set), tables present,
every image loaded (checked in the browser: ``complete`` and ``naturalWidth > 0``), no raw glue role
and no "Pending glue" text. A static check over every built page asserts that no script, stylesheet
or image is fetched from a non-local host (no CDN).

Table widths, on every built page at 1280 px: no table's ``scrollWidth`` exceeds its container's
``clientWidth`` unless the container scrolls sideways (``overflow-x: auto``, as ``tfc.book.readable`` and
``book/_static/tfc.css`` arrange) and itself stays inside the content column; on the front page every
table fits without scrolling.

Skipped when chromium is missing (outside CI) or the book has not been built; under CI=true a missing
build is an error, since .ci/run builds the book before running the tests.
"""
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "book" / "_build" / "html"
# Debian's /usr/bin/chromium is a shell wrapper; call the binary behind it when it is there
_REAL = Path("/usr/lib/chromium/chromium")
CHROMIUM = str(_REAL) if _REAL.is_file() else (shutil.which("chromium") or shutil.which("chromium-browser"))
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars",
         # offline: any host name resolves to nothing, so a CDN request could not succeed unnoticed
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
         # let the page settle (and follow index.html's redirect to the root chapter) before capturing
         "--virtual-time-budget=5000"]
PAGES = {"index": "index.html", "true_auc": "generated/02_true_auc.html",
         "true_length": "generated/02_true_length.html"}
MIN_IMAGES = {"true_auc": 1, "true_length": 2}   # ROC curves; the length and abstractiveness figures
LOCAL_HOSTS = {"", "localhost", "127.0.0.1"}

# appended to a copy of the page: after load, list the images that did not render
CHECK_SCRIPT = """<script>window.addEventListener('load', function () {
  var bad = [], n = 0;
  document.querySelectorAll('img').forEach(function (i) {
    n += 1; if (!(i.complete && i.naturalWidth > 0)) { bad.push(i.getAttribute('src')); } });
  var d = document.createElement('div'); d.id = 'tfc-img-check';
  d.textContent = 'IMAGES:' + n + ' BROKEN:' + bad.join('|'); document.body.appendChild(d);
});</script>"""

# appended to a copy of the page: after load, measure every table against its container and the column
TABLE_SCRIPT = """<script>window.addEventListener('load', function () {
  var col = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  var colRight = col.getBoundingClientRect().right;
  var out = [];
  document.querySelectorAll('table').forEach(function (t, i) {
    var c = t.parentElement, sc = null;
    for (var e = c; e && e !== document.body; e = e.parentElement) {
      var ox = getComputedStyle(e).overflowX;
      if (ox === 'auto' || ox === 'scroll') { sc = e; break; }
    }
    var right = (sc || t).getBoundingClientRect().right;
    // a full-width block (the theme's class for content that may use the right margin) is its table's column,
    // as long as it stays inside the window
    var fw = t.closest('.full-width, .full_width, .tag_full-width, .tag_full_width');
    var limit = fw ? Math.min(fw.getBoundingClientRect().right, window.innerWidth) : colRight;
    var head = (t.querySelector('th, td') || {textContent: ''}).textContent.trim().slice(0, 30);
    out.push([i, t.scrollWidth, c.clientWidth, sc ? 1 : 0, right > limit + 1 ? 1 : 0, Math.round(limit),
              head.replace(/[|;]/g, ' ')].join('|'));
  });
  var d = document.createElement('div'); d.id = 'tfc-table-check';
  d.textContent = 'TABLES:' + out.length + ';' + out.join(';') + ';TFC_TABLES_END';
  document.body.appendChild(d);
});</script>"""

pytestmark = pytest.mark.browser


def _need_book():
    if not (HTML / "index.html").is_file():
        if os.environ.get("CI"):
            pytest.fail("book/_build/html/index.html missing: .ci/run builds the book before the tests")
        pytest.skip("book not built (make book)")


def _need_chromium():
    _need_book()
    if not CHROMIUM:
        pytest.skip("chromium not installed (apt-get install chromium)")


def _chromium(tmp_path, *args):
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)


def _keep(shot: Path, name: str) -> None:
    keep = os.environ.get("TFC_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / f"{name}.png")


def _dom_with_image_check(tmp_path, page: Path) -> str:
    """The rendered DOM of ``page`` with the image check appended (a sibling copy, removed after)."""
    probe = page.with_name(f".tfc_probe_{os.getpid()}_{page.name}")
    html = page.read_text(encoding="utf-8")
    probe.write_text(html.replace("</body>", CHECK_SCRIPT + "</body>") if "</body>" in html else html + CHECK_SCRIPT,
                     encoding="utf-8")
    try:
        return _chromium(tmp_path, "--dump-dom", probe.as_uri()).stdout
    finally:
        probe.unlink(missing_ok=True)


def table_widths(tmp_path, page: Path) -> list[dict]:
    """Every table of ``page`` at 1280 px: ``scroll_width``, ``container_width``, ``in_scroll`` (inside a
    sideways-scrolling container), ``escapes`` (the table, or its scroll container, reaches past the
    content column, or past its full-width block where it sits in one) and the text of its first cell."""
    probe = page.with_name(f".tfc_tables_{os.getpid()}_{page.name}")
    html = page.read_text(encoding="utf-8")
    probe.write_text(html.replace("</body>", TABLE_SCRIPT + "</body>") if "</body>" in html else html + TABLE_SCRIPT,
                     encoding="utf-8")
    try:
        dom = _chromium(tmp_path, "--window-size=1280,2000", "--dump-dom", probe.as_uri()).stdout
    finally:
        probe.unlink(missing_ok=True)
    m = re.search(r"TABLES:(\d+);(.*?)TFC_TABLES_END", dom, flags=re.S)
    assert m, f"{page.name}: the table check did not run (page did not load?)"
    rows = []
    for item in filter(None, m.group(2).split(";")):
        i, sw, cw, sc, esc, col, head = item.split("|", 6)
        rows.append({"table": int(i), "scroll_width": int(sw), "container_width": int(cw), "in_scroll": sc == "1",
                     "escapes": esc == "1", "column_right": int(col), "first_cell": head})
    assert len(rows) == int(m.group(1))
    return rows


def table_width_problems(rows: list[dict], strict: bool = False) -> list[str]:
    """Tables wider than their container that do not sit in a scroll container (or, ``strict``, any table
    wider than its container), and tables or scroll containers reaching past the content column."""
    bad = []
    for r in rows:
        over = r["scroll_width"] > r["container_width"] + 1
        if over and (strict or not r["in_scroll"]):
            bad.append(f"table {r['table']} ({r['first_cell']!r}): scrollWidth {r['scroll_width']} > container "
                       f"clientWidth {r['container_width']}" + ("" if r["in_scroll"] else " and no scroll container"))
        if r["escapes"]:
            bad.append(f"table {r['table']} ({r['first_cell']!r}) reaches past the content column")
    return bad


def _built_pages() -> list[Path]:
    if not HTML.is_dir():
        return []
    skip = {"genindex.html", "search.html", "index.html"}
    return sorted(p for p in HTML.rglob("*.html")
                  if "_static" not in p.relative_to(HTML).parts and "_sources" not in p.relative_to(HTML).parts
                  and p.name not in skip and not p.name.startswith(".tfc_"))


def _assert_clean(dom: str, where: str):
    assert "Pending glue" not in dom, f"{where}: 'Pending glue' in the rendered page"
    assert not re.search(r"\{glue(:\w+)?\}", dom), f"{where}: a raw glue role was not rendered"
    assert "Traceback (most recent call last)" not in dom, f"{where}: a traceback in the page"


def test_index_renders_overview_table(tmp_path):
    """The front page: the headline table (one row per paper's main result) and the first figure, with
    every table fitting the content column at 1280 px without scrolling."""
    _need_chromium()
    shot = tmp_path / "index.png"
    r = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", (HTML / "index.html").as_uri())
    assert shot.is_file() and shot.stat().st_size > 10_000, r.stderr[-2000:]
    dom = _chromium(tmp_path, "--dump-dom", (HTML / "index.html").as_uri()).stdout
    assert "<table" in dom, "no table in the rendered overview"
    assert "tfc-headline" in dom, "the headline table is missing from the front page"
    for paper in ("TRUE", "QAGS", "Q²", "AlignScore", "WeCheck"):
        assert f"<td>{paper}</td>" in dom, f"no headline row for {paper}"
    assert "Published" in dom and "Ours" in dom and "Status" in dom
    _assert_clean(dom, "index")
    _keep(shot, "index")
    front = HTML / "generated" / "00_overview.html"
    if front.is_file():
        rows = table_widths(tmp_path, front)
        assert rows, "no table measured on the front page"
        bad = table_width_problems(rows, strict=True)
        assert not bad, "front page:\n" + "\n".join(bad)


def test_table_width_problems_flags_overflow():
    ok = {"table": 0, "scroll_width": 600, "container_width": 700, "in_scroll": False, "escapes": False,
          "column_right": 900, "first_cell": "a"}
    scrolled = {**ok, "table": 1, "scroll_width": 1400, "in_scroll": True}
    loose = {**ok, "table": 2, "scroll_width": 1400}
    escaping = {**scrolled, "table": 3, "escapes": True}
    assert table_width_problems([ok, scrolled]) == []
    assert len(table_width_problems([ok, scrolled], strict=True)) == 1
    assert "no scroll container" in table_width_problems([loose])[0]
    assert "past the content column" in table_width_problems([escaping])[0]


def test_no_table_wider_than_the_content_column(tmp_path):
    """Every built page at 1280 px: no table overflows its container unless it scrolls inside it."""
    _need_chromium()
    pages = _built_pages()
    assert pages, "no built pages"
    problems, n_tables = [], 0
    for page in pages:
        rows = table_widths(tmp_path, page)
        n_tables += len(rows)
        problems += [f"{page.relative_to(HTML)}: {b}" for b in table_width_problems(rows)]
    assert n_tables, "no tables measured in the book"
    assert not problems, "tables wider than the content column:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("name", ["true_auc", "true_length"])
def test_pages_render_tables_and_images(tmp_path, name):
    _need_chromium()
    page = HTML / PAGES[name]
    if not page.is_file():
        pytest.fail(f"{PAGES[name]} was not built")
    shot = tmp_path / f"{name}.png"
    r = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,3000", page.as_uri())
    assert shot.is_file() and shot.stat().st_size > 10_000, r.stderr[-2000:]
    _keep(shot, name)
    dom = _dom_with_image_check(tmp_path, page)
    m = re.search(r"IMAGES:(\d+) BROKEN:([^<]*)", dom)
    assert m, f"{name}: the image check did not run (page did not load?)"
    n_img, broken = int(m.group(1)), m.group(2).strip()
    assert n_img >= MIN_IMAGES[name], f"{name}: expected figures, found {n_img} image(s)"
    assert not broken, f"{name}: images that did not load: {broken}"
    assert dom.count("<table") >= 2, f"{name}: expected tables in the page"
    _assert_clean(dom, name)


class _External(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hits = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        url = a.get("src") if tag in ("script", "img", "iframe", "source") else (
            a.get("href") if tag == "link" else None)
        if url and urlsplit(url).scheme in ("http", "https", "") and url.startswith(("http:", "https:", "//")):
            if (urlsplit(url).hostname or "") not in LOCAL_HOSTS:
                self.hits.append(f"<{tag}> {url}")


def external_resources(html: str) -> list[str]:
    p = _External()
    p.feed(html)
    return p.hits


def test_external_resource_detection():
    html = ('<script src="https://cdn.jsdelivr.net/x.js"></script><link rel="stylesheet" href="//fonts.example/x.css">'
            '<img src="_images/a.png"><a href="https://github.com/x">a link is not a request</a>'
            '<script src="http://localhost:8000/y.js"></script>')
    assert external_resources(html) == ["<script> https://cdn.jsdelivr.net/x.js", "<link> //fonts.example/x.css"]


def test_no_cdn_requests_in_any_page():
    _need_book()
    hits = []
    for page in sorted(HTML.rglob("*.html")):
        if "_static" in page.relative_to(HTML).parts:
            continue
        hits += [f"{page.relative_to(HTML)}: {h}" for h in external_resources(page.read_text(errors="replace"))]
    assert not hits, "pages load resources from the network:\n" + "\n".join(hits[:30])
