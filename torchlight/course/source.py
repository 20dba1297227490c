"""Course tooling: the course source, a checkout's files, its stages, and every solution region in them.

:meth:`Course.load` lists the checkout's files (those git tracks or would add; every file when
the folder is not a git checkout), reads the stages from ``setup.cfg`` (the ``taskN_K`` markers,
as grading does), finds and validates the regions of every ``.py`` file and notebook, and
describes each as a :class:`~torchlight.course.tasks.Task`. :meth:`Course.render` then gives a
file's text for an edition in which the stages that ``solved`` accepts keep their solutions.

Rules checked on loading, each failure a :class:`~torchlight.course.markers.MarkerError` naming
the file and line: markers well formed and matched; the stage one that ``setup.cfg`` lists; in a
``.py`` file a region lies inside a function (a stub at module or class level would raise on
import) and its BEGIN line is indented like its first line of code; the file still compiles with
every region stubbed; in a notebook, markers only in code cells.
"""

import ast
import copy
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

from .. import grading
from .markers import MarkerError, Region, find_regions, looks_like_marker, raise_statement, render
from .tasks import (
    Task,
    enclosing_function,
    heading_for,
    module_notebooks,
    notebook_headings,
    section_of_cell,
    stage_notebook,
)

__all__ = ["Course", "list_files"]

# Never part of an edition, whatever git says: caches, builds, compiled kernels, environments.
_JUNK_DIRS = {
    ".git",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".ipynb_checkpoints",
    ".cache",  # the course site's notebook runs (docs/hooks/notebook_outputs.py)
    "build",
    "dist",
}
_JUNK_SUFFIXES = (".pyc", ".pyo", ".nbi", ".nbc", ".so")


def list_files(root: Path) -> List[str]:
    """The checkout's files, relative and sorted: what git tracks or would add (ignored files never)."""
    try:
        run = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        )
        names = [n for n in run.stdout.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an unpacked archive)
        names = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    keep = []
    for name in names:
        parts = name.split("/")
        if any(p in _JUNK_DIRS or p.endswith(".egg-info") for p in parts[:-1]) or name.endswith(_JUNK_SUFFIXES):
            continue
        if (root / name).is_file():  # tracked but deleted in the working tree
            keep.append(name)
    return sorted(set(keep))


@dataclass
class _Marked:
    """One file with regions: its text split into lines (a .py file) or its cells (a notebook)."""

    path: str
    text: str
    cells: Dict[int, List[str]] = field(default_factory=dict)  # cell index (or -1 for a .py file) -> lines
    regions: Dict[int, List[Region]] = field(default_factory=dict)
    tasks: Dict[int, List[Task]] = field(default_factory=dict)
    line_length: int = 88  # ruff's, for laying out the stubs


class Course:
    """A checkout's course: ``root``, ``stages`` (task ids in course order), ``files``, ``tasks``."""

    def __init__(self, root: Path, stages: Dict[str, str], files: List[str], marked: Dict[str, _Marked]):
        self.root = root
        self.stages = stages  # "0.1" -> "operators", in course order
        self.files = files
        self._marked = marked

    @classmethod
    def load(cls, root) -> "Course":
        """Read and validate every region of the checkout at ``root``."""
        root = Path(root).resolve()
        stages = {s.name: s.title for s in grading.stages(root).values() if s.task is not None}
        files = list_files(root)
        marked: Dict[str, _Marked] = {}
        width = line_length(root)
        for path in files:
            if path.endswith(".py"):
                found = _load_py(root, path, stages, width)
            elif path.endswith(".ipynb"):
                found = _load_notebook(root, path, stages, width)
            else:
                continue
            if found is not None:
                marked[path] = found
        return cls(root, stages, files, marked)

    @property
    def tasks(self) -> List[Task]:
        """Every region, in course order, then by file and line."""
        order = {name: i for i, name in enumerate(self.stages)}
        every = [t for m in self._marked.values() for ts in m.tasks.values() for t in ts]
        return sorted(every, key=lambda t: (order[t.stage], t.path, -1 if t.cell is None else t.cell, t.line))

    @property
    def marked_files(self) -> List[str]:
        """The files that hold at least one region."""
        return sorted(self._marked)

    def staged(self) -> List[str]:
        """The stages that have at least one region, in course order."""
        have = {t.stage for t in self.tasks}
        return [s for s in self.stages if s in have]

    def through(self, stage: Optional[str]) -> Callable[[str], bool]:
        """Which stages an edition solved through ``stage`` keeps solved (None: none of them)."""
        if stage is None:
            return lambda s: False
        if stage not in self.stages:
            raise ValueError(f"unknown stage {stage!r}; the stages are {', '.join(self.stages)}")
        solved = set(list(self.stages)[: list(self.stages).index(stage) + 1])
        return lambda s: s in solved

    def render(self, path: str, solved: Callable[[str], bool]) -> str:
        """The text of marked file ``path`` in an edition: regions of ``solved`` stages kept, others stubbed."""
        m = self._marked[path]
        if -1 in m.cells:
            return "\n".join(_render(m, -1, solved))
        nb = json.loads(m.text)
        for i, cell in enumerate(nb["cells"]):
            if i in m.cells:
                cell["source"] = _as_source("\n".join(_render(m, i, solved)), cell["source"])
        return notebook_without_outputs(nb)


def notebook_without_outputs(nb: dict) -> str:
    """A notebook's JSON with every output and execution count cleared (outputs may show answers)."""
    nb = copy.deepcopy(nb)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"  # nbformat's own layout


def _render(m: _Marked, key: int, solved: Callable[[str], bool]) -> List[str]:
    messages = {t.line: t.message for t in m.tasks[key]}

    def stub(r: Region) -> str:
        # laid out as ruff formats it, so that the edition's `make lint` passes on the stubs
        return raise_statement("NotImplementedError", messages[r.begin + 1], r.indent, m.line_length)

    return render(m.cells[key], m.regions[key], lambda r: solved(r.stage), stub)


def line_length(root: Path) -> int:
    """The line length ruff checks in the checkout at ``root`` (``[tool.ruff]`` of pyproject.toml; 88,
    ruff's own default, when none is set)."""
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return 88
    found = re.search(r"(?m)^\[tool\.ruff\]\s*$((?:\n(?!\[).*)*)", text)
    setting = re.search(r"(?m)^line-length\s*=\s*(\d+)", found.group(1)) if found else None
    return int(setting.group(1)) if setting else 88


def _as_source(text: str, original) -> object:
    # nbformat stores a cell's source as one string or as a list of lines; keep the file's style.
    return text.splitlines(keepends=True) if isinstance(original, list) else text


def _check_stages(regions: List[Region], stages: Dict[str, str], at: Callable[[int], str]) -> None:
    for r in regions:
        if r.stage not in stages:
            raise MarkerError(
                f"{at(r.begin)}: stage {r.stage} is not a course stage (setup.cfg lists {', '.join(stages)})"
            )


def _check_indent(lines: List[str], region: Region, at: Callable[[int], str]) -> None:
    for line in region.body(lines):
        if line.strip() and not line.lstrip().startswith("#"):
            if line[: len(line) - len(line.lstrip())] != region.indent:
                raise MarkerError(f"{at(region.begin)}: indent BEGIN SOLUTION {region.stage} like the code it encloses")
            return


def _see(root: Path, stage: str, headings_of: Callable[[str], list]) -> str:
    # the module's notebook whose section teaches the stage, else the module's first notebook
    for notebook in module_notebooks(root, stage):
        heading = heading_for(stage, headings_of(notebook))
        if heading:
            return f'{notebook}, section "{heading}"'
    first = stage_notebook(root, stage)
    return first if first is not None else "docs/course.md"


def _headings_reader(root: Path) -> Callable[[str], list]:
    cache: Dict[str, list] = {}

    def headings(notebook: str) -> list:
        if notebook not in cache:
            cache[notebook] = notebook_headings(json.loads((root / notebook).read_text(encoding="utf-8"))["cells"])
        return cache[notebook]

    return headings


def _load_py(root: Path, path: str, stages: Dict[str, str], width: int) -> Optional[_Marked]:
    text = (root / path).read_text(encoding="utf-8")
    lines = text.split("\n")
    at = lambda i: f"{path}:{i + 1}"  # noqa: E731
    regions = find_regions(lines, at)
    if not regions:
        return None
    _check_stages(regions, stages, at)
    try:
        tree = ast.parse(text, path)
    except SyntaxError as exc:
        raise MarkerError(
            f"{path}:{exc.lineno}: the file does not parse, so its regions cannot be placed: {exc.msg}"
        ) from None
    headings = _headings_reader(root)
    tasks = []
    for r in regions:
        _check_indent(lines, r, at)
        function, whole = enclosing_function(tree, r)
        if not function:
            raise MarkerError(
                f"{at(r.begin)}: the region of stage {r.stage} is not inside a function; its stub would raise "
                "as soon as the module is imported. Mark a function's body (or part of it) instead"
            )
        what = r.text or f"{'implement' if whole else 'complete'} {function}"
        message = f"Task {r.stage}: {what} in {path}; see {_see(root, r.stage, headings)}"
        tasks.append(Task(r.stage, path, r.begin + 1, None, function, whole, message))
    m = _Marked(path, text, {-1: lines}, {-1: regions}, {-1: tasks}, width)
    stubbed = "\n".join(_render(m, -1, lambda s: False))
    try:
        compile(stubbed, path, "exec")
    except SyntaxError as exc:
        raise MarkerError(
            f"{path}:{exc.lineno}: with its regions stubbed the file no longer compiles: {exc.msg}"
        ) from None
    return m


_MAGIC = re.compile(r"^\s*[%!]")


def _load_notebook(root: Path, path: str, stages: Dict[str, str], width: int) -> Optional[_Marked]:
    text = (root / path).read_text(encoding="utf-8")
    try:
        cells = json.loads(text)["cells"]
    except (ValueError, KeyError) as exc:
        raise MarkerError(f"{path}: not a readable notebook ({exc})") from None
    headings = notebook_headings(cells)
    m = _Marked(path, text, line_length=width)
    for i, cell in enumerate(cells):
        source = cell.get("source", "")
        lines = ("".join(source) if isinstance(source, list) else str(source)).split("\n")
        at = lambda n, i=i: f"{path}, cell {i + 1}, line {n + 1}"  # noqa: E731
        if cell.get("cell_type") != "code":
            for n, line in enumerate(lines):
                if looks_like_marker(line):
                    raise MarkerError(
                        f"{at(n)}: solution markers belong in code cells, not {cell.get('cell_type')} cells"
                    )
            continue
        regions = find_regions(lines, at)
        if not regions:
            continue
        _check_stages(regions, stages, at)
        # IPython magics are not Python: blank them out to find the enclosing function.
        plain = "\n".join("" if _MAGIC.match(line) else line for line in lines)
        try:
            tree: Optional[ast.AST] = ast.parse(plain)
        except SyntaxError:
            tree = None
        section = section_of_cell(i, headings)
        see = f'{path}, section "{section}"' if section else path
        tasks = []
        for r in regions:
            _check_indent(lines, r, at)
            function, whole = enclosing_function(tree, r) if tree is not None else ("", False)
            what = r.text or (
                f"{'implement' if whole else 'complete'} {function}"
                if function
                else "write the answer to this exercise"
            )
            tasks.append(Task(r.stage, path, r.begin + 1, i, function, whole, f"Task {r.stage}: {what}; see {see}"))
        m.cells[i], m.regions[i], m.tasks[i] = lines, regions, tasks
    return m if m.cells else None
