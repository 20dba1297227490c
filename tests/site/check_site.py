"""Browser check of the built course site (run by .ci/run after `make docs`; not part of pytest).

    .venv/bin/python tests/site/check_site.py [--site site] [--out out]

Serves site/ on a free port of 127.0.0.1 with Python's http.server, opens pages in headless
Chromium (Debian's `chromium` package) and reads the DOM as the browser built it (--dump-dom):

- the home page: the navigation (the top tabs and the side nav) leads to the course, the
  notebooks, the guides and the API reference; the course map has a card per module and a link
  to every stage of setup.cfg;
- a module page: each of its stages has its section, with what to write and a picture that is
  served;
- a notebook page: its first heading is the notebook's own first heading, and every "Taught in"
  link of the module page points at a heading that the notebook page has;
- a notebook's formulas are typeset by the MathJax the site carries (the DOM after its scripts ran);
- a screenshot of the home page is saved to out/site-home.png for a person to look at.

Then every page, found by following links from the home page (each fetched over HTTP as the
browser gets it and parsed here, which is much faster than a browser per page):

- every internal link leads to a file the site serves, and its #anchor to an id on that page;
- no page links to this machine (127.0.0.1, localhost);
- no page shows a Sphinx role as written (``:class:`X```, ``:func:`` before code);
- every notebook page links to its .ipynb for download and shows as many figures as its outputs
  hold (the count the build wrote beside the link), and the notebooks show figures at all;
- every reference page has an anchor for each public name of its module (docs/hooks/reference.py);
- the sitemap lists every page under the site's address (``site_url``).

Prints one line per check and ends with "N passed, M failed"; the exit code is 0 only when all pass.
"""

import argparse
import functools
import http.server
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import deque
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable, Dict, List, Optional, Set, Tuple
from urllib.error import HTTPError
from urllib.parse import unquote, urldefrag, urljoin
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
MODULE = "1"  # the module page and notebook the check opens


class Dom(HTMLParser):
    """What the checks read from a page: ids, links, image sources, headings and nav sections."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.ids: Dict[str, str] = {}  # id -> tag
        self.links: List[Tuple[str, str]] = []  # (href, the classes of the innermost element with a class)
        self.images: List[str] = []
        self.headings: List[Tuple[str, str, str]] = []  # (tag, id, text)
        self.tab_links: List[str] = []  # the link texts of the top tabs (nav.md-tabs)
        self.figures: Optional[int] = None  # a notebook page's count of figures (the download link's)
        self.downloads: List[str] = []  # the links marked for download
        self._stack: List[Tuple[str, str]] = []  # (tag, class) of open elements
        self._heading: Optional[List[str]] = None
        self._heading_tag = ("", "")
        self._link_text: Optional[List[str]] = None
        self.feed(html)

    def _inside(self, cls: str) -> bool:
        return any(cls in c.split() for _, c in self._stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids[a["id"]] = tag
        if tag == "a" and a.get("href"):
            self.links.append((a["href"], " ".join(c for _, c in self._stack if c)))
            if "download" in a:
                self.downloads.append(a["href"])
            if self._inside("md-tabs"):
                self._link_text = []
        if "tl-notebook-download" in (a.get("class") or "").split() and a.get("data-figures"):
            self.figures = int(a["data-figures"])
        if tag == "img" and a.get("src"):
            self.images.append(a["src"])
        if tag in ("h1", "h2", "h3"):
            self._heading, self._heading_tag = [], (tag, a.get("id", ""))
        if tag not in ("img", "br", "hr", "meta", "link", "input"):  # void elements never close
            self._stack.append((tag, a.get("class", "") or ""))

    def handle_endtag(self, tag):
        while self._stack:
            open_tag, _ = self._stack.pop()
            if open_tag == tag:
                break
        if tag == "a" and self._link_text is not None:
            self.tab_links.append(" ".join("".join(self._link_text).split()))
            self._link_text = None
        if tag in ("h1", "h2", "h3") and self._heading is not None:
            text = " ".join("".join(self._heading).replace("¶", "").split())
            self.headings.append((self._heading_tag[0], self._heading_tag[1], text))
            self._heading = None

    def handle_data(self, data):
        if self._heading is not None:
            self._heading.append(data)
        if self._link_text is not None:
            self._link_text.append(data)


def browser() -> str:
    """The Chromium binary, or exit with what to install."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    sys.exit(
        "check_site: no Chromium found (looked for chromium, chromium-browser, google-chrome); "
        "install Debian's: apt-get install -y chromium"
    )


def chromium(binary: str, *args: str) -> str:
    """Run headless Chromium with its own throwaway profile; return its standard output."""
    with tempfile.TemporaryDirectory(prefix="check-site-") as profile:
        cmd = [
            binary,
            "--headless",
            "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            *args,
        ]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            raise RuntimeError(f"chromium exited with {run.returncode}: {run.stderr[-2000:]}")
        return run.stdout


def serve(site: Path) -> Tuple[http.server.ThreadingHTTPServer, str]:
    """Serve site/ on a free local port; return the server and its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # the base class's names
        pass


def first_heading(notebook: Path) -> str:
    """The text of the notebook's first markdown heading."""
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    raise ValueError(f"{notebook} has no markdown heading")


def stages() -> List[str]:
    """Every stage of the course (setup.cfg's taskN_K markers)."""
    sys.path.insert(0, str(ROOT))
    from torchlight import grading

    return [s.name for s in grading.stages(ROOT).values() if s.task is not None]


# A Sphinx role as written: ":class:" right before code (rendered) or a backtick (not).
_ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj|const):(?:<code|`)")
_LOCAL = re.compile(r"""(?:href|src)=["']?(?:https?:)?//(?:127\.0\.0\.1|localhost)[:/"']""")


class Crawl:
    """Every page reachable from the home page by its links, as parsed Doms, and every link."""

    def __init__(self, base: str):
        self.base = base
        self.pages: Dict[str, Dom] = {}  # url (no fragment) -> its DOM
        self.raw: Dict[str, str] = {}  # url -> its HTML
        self.status: Dict[str, int] = {}  # url of any file linked -> HTTP status
        self.links: List[Tuple[str, str]] = []  # (page url, the absolute link target with its fragment)
        todo = deque([base])
        seen: Set[str] = {base}
        while todo:
            url = todo.popleft()
            html = self._fetch(url, text=True)
            if html is None:
                continue
            self.raw[url] = html
            dom = self.pages[url] = Dom(html)
            for href, _ in dom.links:
                target = urljoin(url, href)
                if not target.startswith(base):
                    continue  # outside the site (the repository, a package index page)
                self.links.append((url, target))
                page, _ = urldefrag(target)
                if page not in seen:
                    seen.add(page)
                    if page.endswith("/") or page.endswith(".html"):
                        todo.append(page)
                    else:
                        self._fetch(page, text=False)
            for src in dom.images:
                if not src.startswith("data:"):
                    self._fetch(urljoin(url, src), text=False)

    def _fetch(self, url: str, text: bool) -> Optional[str]:
        try:
            with urlopen(url, timeout=30) as response:
                self.status[url] = response.status
                body = response.read()
                kind = response.headers.get("Content-Type", "")
        except HTTPError as error:
            self.status[url] = error.code
            return None
        return body.decode("utf-8") if text and "html" in kind else None

    def ids(self, url: str) -> Set[str]:
        dom = self.pages.get(url)
        return set(dom.ids) if dom is not None else set()


def main(argv: Optional[List[str]] = None) -> int:
    """Run every check; 0 when all pass."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default=str(ROOT / "site"), help="the built site (default: site/)")
    parser.add_argument("--out", default=str(ROOT / "out"), help="where the screenshot goes (default: out/)")
    ns = parser.parse_args(argv)
    site, out = Path(ns.site), Path(ns.out)
    if not (site / "index.html").is_file():
        sys.exit(f"check_site: {site}/index.html does not exist; build the site first with `make docs`")
    out.mkdir(parents=True, exist_ok=True)
    binary = browser()
    server, base = serve(site)
    results: List[Tuple[str, bool, str]] = []

    def check(name: str, test: Callable[[], Tuple[bool, str]]) -> None:
        try:
            ok, detail = test()
        except Exception as exc:  # a check that crashes is a failed check, with its reason
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        results.append((name, ok, detail))
        print(f"{'ok  ' if ok else 'FAIL'}  {name}{'' if ok else ': ' + detail}", flush=True)

    try:
        home = Dom(chromium(binary, "--dump-dom", base))
        module_url = f"{base}modules/module{MODULE}/"
        module = Dom(chromium(binary, "--dump-dom", module_url))
        notebook_file = sorted((ROOT / "notebooks").glob(f"module{MODULE}_*.ipynb"))[0]
        notebook_url = f"{base}notebooks/{notebook_file.stem}/"
        notebook = Dom(chromium(binary, "--dump-dom", notebook_url))
        every = stages()

        def navigation():
            wanted = ["Home", "Course", "Notebooks", "Guides", "API reference"]
            missing = [w for w in wanted if w not in home.tab_links]
            side = [h for h, c in home.links if "md-nav--primary" in c]
            ok = not missing and len(side) >= 10
            return ok, f"tabs {home.tab_links} lack {missing}; {len(side)} links in the side nav"

        def course_map():
            cards = [h for h, c in home.links if "course-map" in c]
            modules = sorted({h.split("#")[0] for h in cards if "#" not in h})
            linked = {h.split("#stage-")[1] for h in cards if "#stage-" in h}
            missing = [s for s in every if s not in linked]
            ok = "course-map" in home.ids and len(modules) == 6 and not missing
            return ok, f"module cards {modules}; stages without a link: {missing}"

        def module_stages():
            mine = [s for s in every if s.split(".")[0] == MODULE]
            missing = [s for s in mine if f"stage-{s}" not in module.ids]
            tables = sum(1 for h, _ in module.links if h.startswith("../../notebooks/"))
            return not missing and tables > 0, f"sections missing for {missing}; {tables} links to the notebook"

        def module_picture():
            pictures = [src for src in module.images if "pictures/" in src]
            served = [src for src in pictures if (site / "pictures" / src.rsplit("/", 1)[1]).is_file()]
            return bool(pictures) and served == pictures, f"pictures {pictures}, served {served}"

        def notebook_heading():
            h1 = [text for tag, _, text in notebook.headings if tag == "h1"]
            want = first_heading(notebook_file)
            return bool(h1) and h1[0] == want, f"first h1 {h1[:1]}, the notebook's first heading {want!r}"

        def notebook_anchors():
            taught = [h for h, _ in module.links if h.startswith(f"../../notebooks/{notebook_file.stem}/#")]
            broken = [h for h in taught if h.split("#", 1)[1] not in notebook.ids]
            return bool(taught) and not broken, f"{len(taught)} section links, broken: {broken}"

        def notebook_math():
            # The DOM after the page's scripts ran (MathJax typesets asynchronously: a virtual time budget).
            page = f"{base}notebooks/{notebook_file.stem}/"
            dom = chromium(binary, "--virtual-time-budget=15000", "--dump-dom", page)
            typeset = dom.count("<mjx-container")
            formulas = sum(
                cell_source.count("$$") // 2
                for cell_source in (
                    "".join(c["source"])
                    for c in json.loads(notebook_file.read_text(encoding="utf-8"))["cells"]
                    if c["cell_type"] == "markdown"
                )
            )
            return typeset >= formulas > 0, f"{typeset} formulas typeset, the notebook has {formulas} displayed"

        def screenshot():
            shot = out / "site-home.png"
            shot.unlink(missing_ok=True)
            chromium(binary, "--window-size=1280,1800", f"--screenshot={shot}", base)
            size = shot.stat().st_size if shot.exists() else 0
            return size > 20_000, f"{shot}: {size} bytes"

        check("home page: navigation tabs and side nav", navigation)
        check("home page: the course map links every module and stage", course_map)
        check(f"module {MODULE} page: a section per stage, linked to the notebook", module_stages)
        check(f"module {MODULE} page: its picture is served", module_picture)
        check(f"notebook {notebook_file.name}: first heading rendered", notebook_heading)
        check(f"module {MODULE} page: every 'Taught in' link finds its notebook section", notebook_anchors)
        check(f"notebook {notebook_file.name}: its formulas typeset by the site's own MathJax", notebook_math)
        check("home page screenshot in out/site-home.png", screenshot)
        crawl_checks(base, check)
    finally:
        server.shutdown()
    failed = sum(1 for _, ok, _ in results if not ok)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def crawl_checks(base: str, check: Callable[[str, Callable[[], Tuple[bool, str]]], None]) -> None:
    """The checks of every page, from a crawl that starts at the home page."""
    crawl = Crawl(base)
    pages = crawl.pages
    notebooks = {url: dom for url, dom in pages.items() if "/notebooks/" in url}

    def every_page_reached():
        wanted = ["start/", "modules/module0/", "reference/torchlight/", "notebooks/module0_operators_and_modules/"]
        missing = [w for w in wanted if base + w not in pages]
        return len(pages) >= 30 and not missing, f"{len(pages)} pages reached; not reached: {missing}"

    def links_resolve():
        broken = []
        for page, target in crawl.links:
            url, fragment = urldefrag(target)
            if crawl.status.get(url, 200) != 200 or (url not in crawl.status and url not in pages):
                broken.append(f"{page[len(base) - 1 :]} -> {target[len(base) - 1 :]} ({crawl.status.get(url)})")
            elif fragment and url in pages and unquote(fragment) not in crawl.ids(url):
                broken.append(f"{page[len(base) - 1 :]} -> {target[len(base) - 1 :]} (no such anchor)")
        broken = sorted(set(broken))
        return not broken, f"{len(broken)} broken: {broken[:15]}"

    def nothing_local():
        local = [url[len(base) - 1 :] for url, html in crawl.raw.items() if _LOCAL.search(html)]
        return not local, f"pages that link to this machine: {local}"

    def no_roles():
        shown = {url[len(base) - 1 :]: _ROLE.findall(html)[:3] for url, html in crawl.raw.items() if _ROLE.search(html)}
        return not shown, f"Sphinx roles shown as written: {shown}"

    def notebook_figures():
        wrong, total = [], 0
        for url, dom in notebooks.items():
            shown = sum(1 for src in dom.images if src.startswith("data:image/"))
            total += shown
            if dom.figures is None or shown != dom.figures:
                wrong.append(f"{url[len(base) - 1 :]}: {shown} figures shown, its outputs hold {dom.figures}")
            if not [h for h in dom.downloads if h.endswith(".ipynb")]:
                wrong.append(f"{url[len(base) - 1 :]}: no download link for its notebook")
        ok = len(notebooks) >= 7 and not wrong and total >= 20
        return ok, f"{len(notebooks)} notebook pages, {total} figures in all; {wrong}"

    def reference_anchors():
        sys.path.insert(0, str(ROOT / "docs" / "hooks"))
        import reference

        missing = []
        for page in reference.pages():
            url = f"{base}reference/{page.module}/"
            ids = crawl.ids(url)
            if url not in pages:
                missing.append(f"{page.module}: no page")
                continue
            names = [*page.members, *page.shadowed, *page.runtime, *page.constants]
            missing += [f"{page.module}.{n}" for n in names if f"{page.module}.{n}" not in ids]
        return not missing, f"public names without their anchor on the rendered page: {missing[:20]}"

    def sitemap():
        with urlopen(base + "sitemap.xml", timeout=30) as response:
            text = response.read().decode("utf-8")
        locations = re.findall(r"<loc>([^<]+)</loc>", text)
        with urlopen(base + "index.html", timeout=30) as response:
            canonical = re.search(r'<link rel="canonical" href="([^"]+)"', response.read().decode("utf-8"))
        ok = len(locations) >= len(pages) - 1 and canonical is not None and locations[0].startswith("http")
        return ok, f"{len(locations)} sitemap entries for {len(pages)} pages; canonical {canonical and canonical[1]}"

    check("crawl: every page is reached from the home page", every_page_reached)
    check("crawl: every internal link and anchor resolves", links_resolve)
    check("crawl: no page links to 127.0.0.1 or localhost", nothing_local)
    check("crawl: no Sphinx role shown as written", no_roles)
    check("crawl: every notebook page has its figures and a download link", notebook_figures)
    check("crawl: every public name has its anchor on its reference page", reference_anchors)
    check("crawl: the sitemap lists the pages under site_url", sitemap)


if __name__ == "__main__":
    sys.exit(main())
