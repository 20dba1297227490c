"""The notebook pages' outputs: each notebook run once from the reference, its outputs shown beside
the student edition's code, never an exercise's.

The site shows a notebook as the student edition has it (each exercise's answer replaced by its
stub). Its outputs come from running the reference's notebook (every answer in place), and are
copied onto the edition's cells with these rules:

- a cell whose code differs between the two (an exercise: a region was stubbed) gets no output;
- a grading cell (``grading.grade(...)``) is not run at all: it would run the stage's whole test
  suite, and its table says only that the reference passes;
- an output that holds a line of any stage's solution (``torchlight.course.leaks.solution_lines``:
  a cell that prints a library function's source, say) is left out.

Running all seven notebooks takes about five minutes of one core, so ``run_all`` runs those not
yet cached side by side, one process per core (``python notebook_outputs.py NOTEBOOK``), and the
outputs are kept in ``.cache/notebook-outputs/`` under the checkout, keyed by the notebook's text
(and this file's ``VERSION``): a build re-runs only a notebook that changed. The test suite's run
of each notebook (tests/test_notebooks.py) is kept there too (``keep``), so that CI, which runs
the tests before it builds the site, runs no notebook twice.
``TORCHLIGHT_SITE_OUTPUTS=0`` builds without outputs (a quick look at the prose).
"""

import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable, List

import nbformat

try:
    from mkdocs.exceptions import PluginError
except ImportError:  # imported by tests/test_notebooks.py, which needs no MkDocs

    class PluginError(RuntimeError):  # type: ignore[no-redef]
        """MkDocs's error, where MkDocs is not installed."""


log = logging.getLogger("mkdocs.hooks.notebook_outputs")

VERSION = "1"  # part of the cache key: raise it when the rules above change
CELL_TIMEOUT = 600  # seconds, for any one cell
KERNEL = "torchlight-site-python"


def enabled() -> bool:
    """False when ``TORCHLIGHT_SITE_OUTPUTS=0`` asks for pages without outputs."""
    return os.environ.get("TORCHLIGHT_SITE_OUTPUTS", "1").strip().lower() not in ("0", "no", "false", "off")


def is_grading_cell(cell: Any) -> bool:
    """A cell that grades a stage (it runs the stage's tests): never run for the site."""
    return cell.get("cell_type") == "code" and "grading.grade(" in _source(cell)


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _cache_dir(root: Path) -> Path:
    return root / ".cache" / "notebook-outputs"


def _key(text: str) -> str:
    return hashlib.sha256(f"{VERSION}\n{text}".encode("utf-8")).hexdigest()


def _cache_file(root: Path, notebook: Path, text: "str | None" = None) -> Path:
    text = notebook.read_text(encoding="utf-8") if text is None else text
    return _cache_dir(root) / f"{notebook.stem}-{_key(text)[:20]}.ipynb"


def keep(root: Path, notebook: Path, text: str, nb: "nbformat.NotebookNode") -> None:
    """Keep a run made elsewhere (the tests') of the notebook whose text was ``text``, as the site's."""
    _store(_cache_file(root, notebook, text), notebook, nb)


def _store(cache: Path, notebook: Path, nb: "nbformat.NotebookNode") -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    for old in cache.parent.glob(f"{notebook.stem}-*.ipynb"):  # an older run of this notebook
        old.unlink()
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(nbformat.writes(nb), encoding="utf-8")
    tmp.replace(cache)


def run_all(root: Path, notebooks: List[Path]) -> None:
    """Run every notebook not yet in the cache, as many at once as there are cores."""
    todo = [nb for nb in notebooks if not _cache_file(root, nb).is_file()]
    if not todo:
        return
    workers = max(1, min(len(todo), os.cpu_count() or 1))
    log.info("notebook outputs: running %d notebooks, %d at a time", len(todo), workers)

    def run(notebook: Path) -> "subprocess.CompletedProcess[str]":
        command = [sys.executable, __file__, str(root), str(notebook)]
        return subprocess.run(command, capture_output=True, text=True, check=False)

    with ThreadPoolExecutor(workers) as pool:
        for notebook, done in zip(todo, pool.map(run, todo), strict=True):
            if done.returncode != 0:
                raise PluginError(f"running {notebook.name} for the site failed:\n{done.stderr[-4000:]}")
            log.info("notebook outputs: %s", done.stdout.strip())


def executed(root: Path, notebook: Path) -> "nbformat.NotebookNode":
    """The reference notebook with the outputs of a run (grading cells not run), from the cache or run now."""
    text = notebook.read_text(encoding="utf-8")
    cache = _cache_file(root, notebook, text)
    if cache.is_file():
        log.info("notebook outputs: %s from the cache", notebook.name)
        return nbformat.reads(cache.read_text(encoding="utf-8"), as_version=4)
    nb = nbformat.reads(text, as_version=4)
    started = time.perf_counter()
    _run(nb, notebook)
    print(f"ran {notebook.name} in {time.perf_counter() - started:.0f} s")
    _store(cache, notebook, nb)
    return nb


def _run(nb: "nbformat.NotebookNode", notebook: Path) -> None:
    """Run every cell but the grading cells, in a kernel of this very Python, in the notebook's folder."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    runnable = [cell for cell in nb.cells if not is_grading_cell(cell)]
    sub = nbformat.v4.new_notebook(cells=runnable, metadata=nb.metadata)
    with tempfile.TemporaryDirectory(prefix="torchlight-kernel-") as spec_root:
        # A kernel spec of our own, first on JUPYTER_PATH: the "python3" found first might be
        # another Python's (tests/test_notebooks.py does the same).
        spec = Path(spec_root) / "kernels" / KERNEL
        spec.mkdir(parents=True)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"}))
        saved = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = spec_root + (os.pathsep + saved if saved else "")
        try:
            NotebookClient(
                sub, timeout=CELL_TIMEOUT, kernel_name=KERNEL, resources={"metadata": {"path": str(notebook.parent)}}
            ).execute()
        except CellExecutionError as error:
            raise PluginError(f"{notebook.name}: a cell failed while running it for the site:\n{error}") from None
        finally:
            if saved is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = saved
    # The cells are the same objects: their outputs are now in nb.cells.


def with_outputs(edition_text: str, reference: "nbformat.NotebookNode", solutions: Iterable[str]) -> str:
    """The edition's notebook (its text) with the reference's outputs on every cell the rules allow."""
    edition = nbformat.reads(edition_text, as_version=4)
    if len(edition.cells) != len(reference.cells):
        raise PluginError("the student edition of a notebook has other cells than the reference's")
    lines = [line for line in solutions if line]
    for mine, ran in zip(edition.cells, reference.cells, strict=True):
        if mine.cell_type != "code" or is_grading_cell(mine) or _source(mine) != _source(ran):
            continue
        mine.outputs = [out for out in ran.get("outputs", []) if not _leaks(out, lines)]
        mine.execution_count = ran.get("execution_count")
    return nbformat.writes(edition)


def _leaks(output: Any, solutions: List[str]) -> bool:
    """Whether an output's text holds a solution line (compared as leaks.normalize does)."""
    texts: List[str] = []
    if "text" in output:
        texts.append(_joined(output["text"]))
    for mime, value in (output.get("data") or {}).items():
        if mime.startswith("text/"):
            texts.append(_joined(value))
    texts += [_joined(line) for line in output.get("traceback", [])]
    body = "\n".join(" ".join(line.split()) for text in texts for line in text.splitlines())
    return any(line in body for line in solutions)


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def figures(text: str) -> int:
    """How many images a notebook's outputs hold (the page must show as many)."""
    nb = nbformat.reads(text, as_version=4)
    return sum(
        1
        for cell in nb.cells
        for out in cell.get("outputs", [])
        for mime in (out.get("data") or {})
        if mime.startswith("image/")
    )


def solution_lines(course: Any) -> List[str]:
    """Every solution line of the course (``leaks.solution_lines``), longest first."""
    from torchlight.course.leaks import solution_lines as lines

    return sorted(lines(course), key=len, reverse=True)


if __name__ == "__main__":  # run_all's worker: python notebook_outputs.py ROOT NOTEBOOK
    executed(Path(sys.argv[1]), Path(sys.argv[2]))
