"""MkDocs hooks that build the course site from the code (mkdocs.yml names this file).

At every build:

- the notebooks of ``notebooks/`` become pages, as the student edition has them (each exercise's
  answer replaced by its stub), with the outputs of a run of the reference's notebook on every
  cell that is not an exercise (``notebook_outputs.py``, cached), rendered by mkdocs-jupyter; each
  page links to its notebook (the edition's, without outputs) for download, and its formulas are
  typeset by the MathJax that the site carries (``assets/mathjax/``, from the ``docs`` extra);
- ``<!-- course:map -->``, ``<!-- course:stage-table -->`` and ``<!-- course:stages N -->`` in a
  page are replaced by the course map, the table of stages and module N's stages
  (``stage_pages.py``); the build fails if a stage of setup.cfg is on no module page;
- ``<!-- course:edition-commands -->`` by the student edition's ``make`` commands,
  ``<!-- course:repository -->`` by a link to the course's repository and
  ``<!-- course:repository-url -->`` by its address (``repo_url``, from
  ``TORCHLIGHT_REPOSITORY_URL``), or by words that say it was not given;
- the API reference pages are written (``reference.py``), and the pictures drawn
  (``pictures.py``);
- the nav gets the notebooks, the reference pages and any guide in docs/ not already in it.
"""

import html
import json
import logging
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

sys.path.insert(0, str(Path(__file__).parent))  # the helpers beside this file

import notebook_outputs
import pictures
import reference
from stage_pages import StagePages

_PLACEHOLDER = re.compile(
    r"<!--\s*course:(?P<what>map|stage-table|stages|edition-commands|repository-url|repository)\s*(?P<arg>\d*)\s*-->"
)
log = logging.getLogger("mkdocs.hooks.course_site")

_state: Dict[str, Any] = {}


def _root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path).resolve().parent


def _notebooks(root: Path) -> List[Path]:
    return sorted((root / "notebooks").glob("*.ipynb"))


def _title(notebook: Path) -> str:
    """The notebook's first heading (``Module 0: operators and modules``), else its file name."""
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell.get("cell_type") == "markdown":
            source = cell.get("source", "")
            for line in ("".join(source) if isinstance(source, list) else source).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return notebook.stem


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Fill the nav's Notebooks and API reference sections, and add guides it does not list."""
    root = _root(config)
    nav = config.nav or []
    listed = {v for item in _walk(nav) for v in [item] if isinstance(v, str)}
    docs = Path(config.docs_dir)
    guides = sorted(p.name for p in docs.glob("*.md") if p.name != "index.md" and p.name not in listed)
    for section in nav:
        if not isinstance(section, dict):
            continue
        ((name, items),) = section.items()
        if name == "Notebooks":
            items[:] = [{_title(nb): f"notebooks/{nb.name}"} for nb in _notebooks(root)]
        elif name == "API reference":
            items[:] = ["reference/index.md"] + [f"reference/{m}.md" for m, _ in reference.REFERENCE]
        elif name == "Guides":
            items += [{_guide_title(docs / g): g} for g in guides]
    return config


def _walk(nav: Any):
    """Every leaf of a nav (the page paths)."""
    if isinstance(nav, list):
        for item in nav:
            yield from _walk(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _walk(value)
    else:
        yield nav


def _guide_title(path: Path) -> str:
    first = path.read_text(encoding="utf-8").lstrip().splitlines()[0]
    return first.lstrip("#").strip() if first.startswith("#") else path.stem


@event_priority(50)  # before mkdocs-jupyter, which turns the .ipynb files into pages
def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the notebooks (student edition), the reference pages and the pictures."""
    root = _root(config)
    _state["pages"] = StagePages(root)
    course = _state["pages"].course
    # mkdocs-jupyter reads a notebook from disk, so the edition's text is written to a folder kept
    # for the build (on_post_build removes it).
    tmp = Path(tempfile.mkdtemp(prefix="torchlight-site-"))
    _state["tmp"] = tmp
    _state["downloads"] = {}  # page path -> the edition's notebook, for download
    _state["figures"] = {}  # page path -> how many images its outputs hold
    (tmp / "notebooks").mkdir()  # mkdocs-jupyter takes files whose path matches notebooks/*.ipynb
    solutions = notebook_outputs.solution_lines(course) if notebook_outputs.enabled() else []
    if notebook_outputs.enabled():
        notebook_outputs.run_all(root, _notebooks(root))
    for nb in _notebooks(root):
        path = f"notebooks/{nb.name}"
        text = course.render(path, lambda stage: False) if path in course.marked_files else nb.read_text("utf-8")
        _state["downloads"][path] = text
        if notebook_outputs.enabled():
            text = notebook_outputs.with_outputs(text, notebook_outputs.executed(root, nb), solutions)
        _state["figures"][path] = notebook_outputs.figures(text)
        target = tmp / path
        target.write_text(text, encoding="utf-8")
        # A File read from the folder (not File.generated): mkdocs-jupyter's wrapper finds the
        # notebook through src_dir.
        files.append(
            File(path, src_dir=str(tmp), dest_dir=config.site_dir, use_directory_urls=config.use_directory_urls)
        )
    every = reference.pages()
    files.append(File.generated(config, "reference/index.md", content=reference.index_markdown(every)))
    for page in every:
        files.append(File.generated(config, page.src_uri, content=page.markdown()))
    for name, png in pictures.draw_all(root).items():
        files.append(File.generated(config, f"pictures/{name}", content=png))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> Optional[str]:
    """Replace the course placeholders with the generated markdown."""
    pages: StagePages = _state["pages"]
    depth = page.file.src_uri.count("/")
    up = "../" * depth

    def replace(m: "re.Match[str]") -> str:
        what, arg = m["what"], m["arg"]
        if what == "map":
            return pages.course_map(module_link=up + "modules/module{n}.md")
        if what == "stage-table":
            return pages.stage_table().replace("](modules/", f"]({up}modules/")
        if what == "edition-commands":
            return _edition_commands(pages.course)
        if what == "repository":
            url = config.repo_url
            return f"[{url}]({url})" if url else "at the address your course gives you"
        if what == "repository-url":
            return config.repo_url or "<the course's repository>"
        if not arg:
            raise PluginError(f"{page.file.src_uri}: write <!-- course:stages N --> with the module number N")
        return pages.module_stages(arg, notebook_link=up + "notebooks/{name}")

    return _PLACEHOLDER.sub(replace, markdown)


def _edition_commands(course: Any) -> str:
    """The student edition's make commands, as its README lists them, in a code block."""
    from torchlight.course.edition import student_commands

    commands = student_commands(course)
    width = max(len(c) for c, _ in commands) + 2
    return "```\n" + "".join(f"{c.ljust(width)}# {what}\n" for c, what in commands) + "```"


# The script tag mkdocs-jupyter writes for custom_mathjax_url, and the MathJax 2 configuration
# after it (nbconvert's), which MathJax 3 ignores: MathJax 3 is configured before it loads.
_MATHJAX = re.compile(r'<script src="(?P<url>[^"]*assets/mathjax/tex-chtml\.js)">\s*</script>')
_MATHJAX_CONFIG = (
    "<script>window.MathJax = {tex: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']], "
    "displayMath: [['$$', '$$'], ['\\\\[', '\\\\]']], processEscapes: true, processEnvironments: true}, "
    "options: {enableMenu: false}};</script>"
)


def on_page_content(html_text: str, page: Page, config: MkDocsConfig, files: Files) -> Optional[str]:
    """A notebook page: a download link first, and MathJax 3 configured before it loads."""
    path = page.file.src_uri
    if path not in _state.get("downloads", {}):
        return html_text
    name = Path(path).name
    figures = _state["figures"][path]
    shown = "with the outputs of a run of the reference" if notebook_outputs.enabled() else "without outputs"
    link = (
        f'<p class="tl-notebook-download" data-figures="{figures}">'
        f'<a class="md-button" href="{html.escape(name)}" download>Download {html.escape(name)}</a> '
        f"The notebook as your edition has it. This page shows it {shown}; exercise cells show no output.</p>"
    )
    _match_toc(page, html_text)
    html_text, found = _MATHJAX.subn(lambda m: _MATHJAX_CONFIG + f'<script src="{m["url"]}"></script>', html_text)
    if not found:
        raise PluginError(f"{path}: no MathJax script tag found to configure (mkdocs-jupyter's template changed?)")
    return link + html_text


_HEADING = re.compile(r"<h([1-6])\b[^>]*?\sid=\"([^\"]+)\"[^>]*>(.*?)</h\1>", re.S)


def _match_toc(page: Page, html_text: str) -> None:
    """Point a notebook page's table of contents at the ids its headings have.

    mkdocs-jupyter makes the table of contents from the notebook as Markdown, whose slugs leave out
    inline code (``What `ctx` offers`` -> ``what-offers``), while nbconvert's headings keep it
    (``what-ctx-offers``): the entries are matched to the headings in order, which both keep.
    """
    headings = [(int(level), id_) for level, id_, _ in _HEADING.findall(html_text)]
    entries: List[Any] = []

    def walk(items: Any) -> None:
        for item in items:
            entries.append(item)
            walk(item.children)

    walk(page.toc)
    if len(entries) != len(headings) or any(e.level != level for e, (level, _) in zip(entries, headings, strict=False)):
        raise PluginError(f"{page.file.src_uri}: its table of contents does not match its headings")
    for entry, (_, id_) in zip(entries, headings, strict=True):
        entry.id = id_


def on_env(env, config: MkDocsConfig, files: Files):
    """Every stage must be on a module page (a new stage needs its page)."""
    missing = _state["pages"].missing()
    if missing:
        raise PluginError(
            f"stages {', '.join(missing)} are on no page: add <!-- course:stages N --> to docs/modules/moduleN.md"
        )
    return env


def on_post_build(config: MkDocsConfig) -> None:
    """Write the notebooks for download and MathJax into the site; remove the temporary copies."""
    site = Path(config.site_dir)
    for path, text in _state.get("downloads", {}).items():
        target = site / "notebooks" / Path(path).stem / Path(path).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    _copy_mathjax(site / "assets" / "mathjax")
    if not config.repo_url:
        log.info("no TORCHLIGHT_REPOSITORY_URL: the site has no repository link")
    tmp = _state.pop("tmp", None)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)


# What the notebook pages load of MathJax 3 (es5/ of the django-static-mathjax package): the TeX to
# CommonHTML component, its fonts, and what it loads on demand (TeX extensions, the menu, a11y).
_MATHJAX_PARTS = ["tex-chtml.js", "input/tex/extensions", "output/chtml", "ui", "a11y", "adaptors"]


def _copy_mathjax(target: Path) -> None:
    try:
        import mathjax  # django-static-mathjax: MathJax's own files, no Django needed to read them
    except ImportError:
        raise PluginError("MathJax is missing: install the docs extra (pip install -e '.[docs]')") from None
    es5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    for part in _MATHJAX_PARTS:
        source = es5 / part
        if source.is_dir():
            shutil.copytree(source, target / part, dirs_exist_ok=True)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / part)
    shutil.copy2(es5.parent / "LICENSE", target / "LICENSE")


def on_build_error(error: Exception) -> None:
    """A failed build removes them too."""
    tmp = _state.pop("tmp", None)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
