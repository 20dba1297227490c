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
- a screenshot of the home page is saved to out/site-home.png for a person to look at.

Prints one line per check and ends with "N passed, M failed"; the exit code is 0 only when all pass.
"""

import argparse
import functools
import http.server
import json
import shutil
import subprocess
import sys
import tempfile
import threading
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

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
            if self._inside("md-tabs"):
                self._link_text = []
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
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
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
        check("home page screenshot in out/site-home.png", screenshot)
    finally:
        server.shutdown()
    failed = sum(1 for _, ok, _ in results if not ok)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
