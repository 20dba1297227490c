"""Every hand-written table of stages or modules agrees with ``python -m torchlight.course stages``.

Pages generated at build time (the module pages' ``<!-- course:stages N -->``) cannot drift; the
tables written by hand can: the notebooks' opening tables (which stage, what it builds, where it
lives), docs/grading.md's stage list, docs/instructors.md's regions by stage, docs/course.md's and
the README's module tables. Each is checked here against the course as ``course stages`` reads it
(setup.cfg's stages and titles, the solution regions' files and functions), and a failure prints
the row as it should read.
"""

import json
import re
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from torchlight import grading
from torchlight.course import Course
from torchlight.course.notebook_stages import NotebookStage, notebook_plan
from torchlight.course.tasks import module_notebooks

ROOT = Path(__file__).resolve().parents[1]
_ROW = re.compile(r"^\|(.*)\|\s*$")
_TICKED = re.compile(r"`([^`]+)`")


@pytest.fixture(scope="module")
def course() -> Course:
    return Course.load(ROOT)


def _tables(text: str) -> List[Tuple[List[str], List[List[str]]]]:
    """Every markdown table in ``text``: (header cells, rows of cells), cells stripped."""
    found, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if _ROW.match(lines[i]) and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|\s*$", lines[i + 1]):
            header = [c.strip() for c in _ROW.match(lines[i])[1].split("|")]
            rows, i = [], i + 2
            while i < len(lines) and _ROW.match(lines[i]):
                rows.append([c.strip() for c in _ROW.match(lines[i])[1].split("|")])
                i += 1
            found.append((header, rows))
        else:
            i += 1
    return found


def _pages() -> Dict[str, str]:
    """The hand-written texts: docs pages, the README, and the notebooks' markdown cells."""
    pages = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in sorted(ROOT.glob("docs/*.md"))}
    pages["README.md"] = (ROOT / "README.md").read_text(encoding="utf-8")
    for nb in sorted(ROOT.glob("notebooks/*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        pages[nb.relative_to(ROOT).as_posix()] = "\n\n".join(
            "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells
            if c["cell_type"] == "markdown"
        )
    return pages


def _stage_tables(header_first: str) -> List[Tuple[str, List[str], List[List[str]]]]:
    return [
        (page, header, rows)
        for page, text in _pages().items()
        for header, rows in _tables(text)
        if header and header[0].lower() == header_first
    ]


def _files(course: Course, stage: str) -> Dict[str, Set[str]]:
    """The stage's .py files, each with the functions its regions lie in (qualified names)."""
    files: Dict[str, Set[str]] = {}
    for task in course.tasks:
        if task.stage == stage and task.cell is None:
            files.setdefault(task.path, set()).add(task.function)
    return files


def _names_in(text: str) -> Tuple[List[str], List[str]]:
    """The paths (`torchlight/scalar.py`, `ops/`, `scalar_functions.py`) and names (`mul`,
    `LeNet.forward`) that a table cell puts in backticks."""
    paths, names = [], []
    for ticked in _TICKED.findall(text):
        word = ticked.split()[0] if ticked.split() else ""
        if "/" in word or word.endswith(".py"):
            paths.append(word)
        elif re.fullmatch(r"[A-Za-z_][\w.]*", ticked):
            names.append(ticked)
    return paths, names


def _covers(path: str, file: str) -> bool:
    """Whether a table's ``path`` names the stage's ``file`` (in full, by its tail, or its folder)."""
    if path.endswith("/"):
        return file.startswith(path) or f"/{path}" in f"/{file}"
    return file == path or file.endswith("/" + path)


def _check_where(course: Course, stage: str, where: str, exact_functions: bool) -> List[str]:
    files = _files(course, stage)
    paths, names = _names_in(where)
    wrong = [f"names `{p}`, where stage {stage} has no region" for p in paths if not any(_covers(p, f) for f in files)]
    wrong += [f"does not name `{f}`" for f in files if not any(_covers(p, f) for p in paths)]
    functions = {name for names_ in files.values() for name in names_}
    parts = {part for name in functions for part in name.split(".")}
    wrong += [f"names `{n}`, which no region of stage {stage} lies in" for n in names if n not in functions | parts]
    if exact_functions:
        wrong += [f"does not name `{f}`" for f in sorted(functions) if f not in names]
    return wrong


def _listed(course: Course, stage: str) -> str:
    """The stage's files and functions as ``course stages`` lists them (for the failure message)."""
    return "; ".join(
        f"`{path}`: " + ", ".join(f"`{f}`" for f in sorted(names)) for path, names in _files(course, stage).items()
    )


def test_there_are_tables_to_check():
    assert _stage_tables("stage") and _stage_tables("module")


def test_notebook_tables_list_the_notebooks_stages_and_their_files(course):
    plan = notebook_plan(ROOT, list(course.stages))
    problems = []
    for page, header, rows in _stage_tables("stage"):
        if not page.startswith("notebooks/") or header[1:2] == ["`a`"]:
            continue
        taught = [s for s, item in plan.items() if isinstance(item, NotebookStage) and item.notebook == page]
        listed = [row[0] for row in rows]
        if listed != taught:
            problems.append(f"{page}: the table lists stages {listed}; the notebook teaches {taught}")
        if "where it lives" not in [h.lower() for h in header]:
            continue
        column = [h.lower() for h in header].index("where it lives")
        for row in rows:
            if row[0] in course.stages:
                for wrong in _check_where(course, row[0], row[column], exact_functions=False):
                    listed = _listed(course, row[0])
                    problems.append(f"{page}, stage {row[0]}: the table {wrong} (course stages: {listed})")
    assert not problems, "\n".join(problems)


def test_regions_tables_match_course_stages(course):
    problems = []
    for page, header, rows in _stage_tables("stage"):
        if [h.lower() for h in header[1:]] != ["regions"]:
            continue
        for row in rows:
            stage = row[0].split()[0]
            title = row[0][len(stage) :].strip()
            if stage not in course.stages:
                problems.append(f"{page}: no stage {stage}")
                continue
            if title != course.stages[stage]:
                problems.append(f"{page}: stage {stage} is titled {course.stages[stage]!r}, not {title!r}")
            for wrong in _check_where(course, stage, row[1], exact_functions=True):
                problems.append(f"{page}, stage {stage}: the table {wrong} (course stages: {_listed(course, stage)})")
    assert not problems, "\n".join(problems)


def test_stage_lists_match_setup_cfg(course):
    """A `| stage | checks |` table lists every module and stage, in order, with setup.cfg's titles."""
    every = grading.stages(ROOT)
    expected = [
        f"| **{s.name}** | **{s.title}** |" if s.task is None else f"| {s.name} | {s.title} |" for s in every.values()
    ]
    tables = [(page, rows) for page, header, rows in _stage_tables("stage") if header[1:] == ["checks"]]
    assert tables, "docs/grading.md lists the stages in a `| stage | checks |` table"
    for page, rows in tables:
        got = [f"| {' | '.join(row)} |" for row in rows]
        assert got == expected, f"{page}: the stage table should read\n" + "\n".join(expected)


def test_module_tables_name_every_module_and_its_notebooks(course):
    every = grading.stages(ROOT)
    modules = [s.name for s in every.values() if s.task is None]
    problems = []
    for page, header, rows in _stage_tables("module"):
        listed = [row[0] for row in rows]
        if listed != modules:
            problems.append(f"{page}: the module table lists {listed}, the course has modules {modules}")
        if "notebook" not in [h.lower() for h in header]:
            continue
        column = [h.lower() for h in header].index("notebook")
        for row in rows:
            named = sorted(t for t in _TICKED.findall(row[column]) if t.endswith(".ipynb"))
            actual = sorted(Path(p).name for p in module_notebooks(ROOT, f"{row[0]}.1"))
            if named != actual:
                problems.append(f"{page}, module {row[0]}: the table names notebooks {named}; they are {actual}")
    assert not problems, "\n".join(problems)
