"""Open the built book in headless Chromium (Debian's package), offline, and check what a reader sees.

Pages: the index (which redirects to the overview), a TRUE page (02_true_auc) and a figure-heavy page
(02_true_length). For each: a screenshot (kept in ``$TFC_SCREENSHOT_DIR`` when set), tables present,
every image loaded (checked in the browser: ``complete`` and ``naturalWidth > 0``), no raw glue role
and no "Pending glue" text. A static check over every built page asserts that no script, stylesheet
or image is fetched from a non-local host (no CDN).

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


def _assert_clean(dom: str, where: str):
    assert "Pending glue" not in dom, f"{where}: 'Pending glue' in the rendered page"
    assert not re.search(r"\{glue(:\w+)?\}", dom), f"{where}: a raw glue role was not rendered"
    assert "Traceback (most recent call last)" not in dom, f"{where}: a traceback in the page"


def test_index_renders_overview_table(tmp_path):
    _need_chromium()
    shot = tmp_path / "index.png"
    r = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", (HTML / "index.html").as_uri())
    assert shot.is_file() and shot.stat().st_size > 10_000, r.stderr[-2000:]
    dom = _chromium(tmp_path, "--dump-dom", (HTML / "index.html").as_uri()).stdout
    assert "<table" in dom, "no table in the rendered overview"
    assert "frank" in dom and "pct_consistent" in dom
    _assert_clean(dom, "index")
    _keep(shot, "index")


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
