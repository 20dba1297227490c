"""MkDocs hooks that build the course site from the code (mkdocs.yml names this file).

At every build:

- the notebooks of ``notebooks/`` become pages, as the student edition has them (each exercise's
  answer replaced by its stub, outputs cleared), rendered by mkdocs-jupyter without running;
- ``<!-- course:map -->``, ``<!-- course:stage-table -->`` and ``<!-- course:stages N -->`` in a
  page are replaced by the course map, the table of stages and module N's stages
  (``stage_pages.py``); the build fails if a stage of setup.cfg is on no module page;
- the API reference pages are written (``reference.py``), and the pictures drawn
  (``pictures.py``);
- the nav gets the notebooks, the reference pages and any guide in docs/ not already in it.
"""

import json
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

import pictures  # noqa: E402
import reference  # noqa: E402
from stage_pages import StagePages  # noqa: E402

_PLACEHOLDER = re.compile(r"<!--\s*course:(?P<what>map|stage-table|stages)\s*(?P<arg>\d*)\s*-->")

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
    (tmp / "notebooks").mkdir()  # mkdocs-jupyter takes files whose path matches notebooks/*.ipynb
    for nb in _notebooks(root):
        path = f"notebooks/{nb.name}"
        text = course.render(path, lambda stage: False) if path in course.marked_files else nb.read_text("utf-8")
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
        if not arg:
            raise PluginError(f"{page.file.src_uri}: write <!-- course:stages N --> with the module number N")
        return pages.module_stages(arg, notebook_link=up + "notebooks/{name}")

    return _PLACEHOLDER.sub(replace, markdown)


def on_env(env, config: MkDocsConfig, files: Files):
    """Every stage must be on a module page (a new stage needs its page)."""
    missing = _state["pages"].missing()
    if missing:
        raise PluginError(
            f"stages {', '.join(missing)} are on no page: add <!-- course:stages N --> to docs/modules/moduleN.md"
        )
    return env


def on_post_build(config: MkDocsConfig) -> None:
    """Remove the notebooks' temporary copies."""
    tmp = _state.pop("tmp", None)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)


def on_build_error(error: Exception) -> None:
    """A failed build removes them too."""
    tmp = _state.pop("tmp", None)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
