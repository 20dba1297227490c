"""The course's generated markdown: the course map and each stage's task, from the code itself.

Everything here comes from :class:`torchlight.course.Course`, the same stage list that
``python -m torchlight.course stages`` prints (``setup.cfg``'s ``taskN_K`` markers, the solution
regions and what their stubs say), so the site cannot drift from the code. It shows what a
student's edition shows (stub messages and ``# HINT:`` lines), never a solution.

This module needs no MkDocs (tests/test_docs.py calls it without building the site).
"""

import ast
import json
import re
import unicodedata
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from torchlight import grading
from torchlight.course import Course, Task, find_regions
from torchlight.course.tasks import heading_for, module_notebooks, notebook_headings

__all__ = ["StagePages"]


class StagePages:
    """The markdown of the course map and of each module's stages, for the checkout at ``root``."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.course = Course.load(self.root)
        every = grading.stages(self.root)
        self.modules: Dict[str, str] = {s.name: s.title for s in every.values() if s.task is None}
        self.shown: List[str] = []  # the stages a module page has shown (every one must be)
        self._marks: Optional[Dict[str, Set[str]]] = None  # test file -> the marks its code applies

    # -- the pieces ----------------------------------------------------------------------------

    def stages_of(self, module: str) -> List[str]:
        """The module's stages in course order (``["0.1", "0.2", ...]``)."""
        return [s for s in self.course.stages if s.split(".")[0] == module]

    def teaching_notebook(self, stage: str) -> Optional[str]:
        """The notebook of the stage's module with a section for the stage (module 3 has two)."""
        for notebook in module_notebooks(self.root, stage):
            if self._taught_in(notebook, stage):
                return notebook
        return None

    def heading(self, stage: str) -> str:
        """The stage's name as its notebook's section has it (``0.1 Operators``), else from setup.cfg."""
        notebook = self.teaching_notebook(stage)
        if notebook is not None:
            cells = json.loads((self.root / notebook).read_text(encoding="utf-8"))["cells"]
            found = heading_for(stage, notebook_headings(cells))
            if found:
                return found
        title = self.course.stages[stage]
        return f"{stage} {title[0].upper()}{title[1:]}"

    def tests_of(self, stage: str) -> List[str]:
        """The test files holding checks marked for the stage (``pytest.mark.taskN_K`` in their code)."""
        if self._marks is None:
            self._marks = {
                f.relative_to(self.root).as_posix(): _marks_in(f)
                for f in sorted((self.root / "tests").rglob("test_*.py"))
            }
        mark = f"task{stage.replace('.', '_')}"
        return [path for path, marks in self._marks.items() if mark in marks]

    def hints(self, task: Task) -> List[str]:
        """The ``# HINT:`` comment lines of the task's region, unindented: what its stub keeps."""
        lines = _lines_of(self.root, task)
        for region in find_regions(lines, lambda i: f"{task.path}:{i + 1}"):
            if region.begin + 1 == task.line:
                return [line.strip() for line in region.hints(lines)]
        return []

    # -- the pages -----------------------------------------------------------------------------

    def course_map(self, module_link: str = "modules/module{n}.md") -> str:
        """The home page's map: one card per module with its stages, each a link to its task."""
        out = ['<div class="grid cards course-map" id="course-map" markdown>', ""]
        for module, title in self.modules.items():
            link = module_link.format(n=module)
            out.append(f"-   **[Module {module}]({link})**: {title}")
            out.append("")
            out.append("    ---")
            out.append("")
            for stage in self.stages_of(module):
                state = "" if self._has_regions(stage) else " *(no task yet)*"
                out.append(f"    - [{stage} {self.course.stages[stage]}]({link}#stage-{stage}){state}")
            out.append("")
        out.append("</div>")
        return "\n".join(out) + "\n"

    def stage_table(self) -> str:
        """Every stage in one table: module, stage, what it builds and the files it asks for."""
        out = ["| stage | what it builds | files to write in |", "|---|---|---|"]
        for module in self.modules:
            for stage in self.stages_of(module):
                files = sorted({t.path for t in self.course.tasks if t.stage == stage})
                where = ", ".join(f"`{f}`" for f in files) or "no task yet"
                link = f"modules/module{module}.md#stage-{stage}"
                out.append(f"| [{stage}]({link}) | {self.course.stages[stage]} | {where} |")
        return "\n".join(out) + "\n"

    def module_stages(self, module: str, notebook_link: str = "../notebooks/{name}") -> str:
        """One section per stage of ``module``: where it is taught, what to write, hints, grading."""
        if module not in self.modules:
            raise ValueError(f"no module {module!r}; the course has modules {', '.join(self.modules)}")
        out: List[str] = []
        for stage in self.stages_of(module):
            self.shown.append(stage)
            out += [f"## {self.heading(stage)} {{#stage-{stage}}}", ""]
            notebook = self.teaching_notebook(stage)
            if notebook is not None:
                name = notebook.split("/", 1)[1]
                anchor = f"{notebook_link.format(name=name)}#{slugify(self.heading(stage))}"
                out += [f"Taught in [{self.heading(stage)}]({anchor}) of the notebook.", ""]
            tasks = [t for t in self.course.tasks if t.stage == stage]
            if tasks:
                out += self._what_to_write(tasks, notebook_link)
            else:
                out += [
                    "*No task yet*: this stage has no code for the student to write (its checks, if",
                    "any, grade what the library already does).",
                    "",
                ]
            out += self._grading(stage)
        return "\n".join(out) + "\n"

    def missing(self) -> List[str]:
        """The stages that no module page has shown so far."""
        return [s for s in self.course.stages if s not in self.shown]

    # -- helpers -------------------------------------------------------------------------------

    def _has_regions(self, stage: str) -> bool:
        return any(t.stage == stage for t in self.course.tasks)

    def _taught_in(self, notebook: str, stage: str) -> bool:
        cells = json.loads((self.root / notebook).read_text(encoding="utf-8"))["cells"]
        return heading_for(stage, notebook_headings(cells)) is not None

    def _what_to_write(self, tasks: List[Task], notebook_link: str) -> List[str]:
        out = ["**What to write**", ""]
        by_file: Dict[str, List[Task]] = {}
        for task in tasks:
            by_file.setdefault(task.path, []).append(task)
        hints: List[Tuple[Task, List[str]]] = []
        for path, group in by_file.items():
            where = f"`{path}`"
            if path.endswith(".ipynb"):
                where = f"the notebook, [`{path}`]({notebook_link.format(name=path.split('/', 1)[1])})"
            out.append(f"- in {where}:")
            out += [f"    - {line}" for line in _describe(group)]
            hints += [(t, h) for t in group if (h := self.hints(t))]
        out.append("")
        if hints:
            out += ['??? tip "Hints (the stubs keep them too)"', ""]
            for task, lines in hints:
                # As the stub shows them: code-like text in prose would be read as markdown.
                out += [f"    `{task.label or task.path}`", "", "    ```python"]
                out += [f"    {line}" for line in lines]
                out += ["    ```", ""]
        return out

    def _grading(self, stage: str) -> List[str]:
        mark = f"task{stage.replace('.', '_')}"
        tests = self.tests_of(stage)
        out = [
            f"**Grade it**: `python -m torchlight.grading {stage}` (the same checks as `pytest -m {mark}`).",
        ]
        if tests:
            out.append(f"Its checks are in {', '.join(f'`{t}`' for t in tests)}.")
        out.append("")
        return out


def slugify(heading: str) -> str:
    """The anchor of a heading, as Python-Markdown's toc (and so mkdocs-jupyter) makes it."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _describe(group: List[Task]) -> List[str]:
    """What a file's tasks ask, one line each: the functions to implement (or complete) together,
    then each task whose region says what to write in its own words."""
    implement, complete, own = [], [], []
    for task in group:
        what = task.message.split(": ", 1)[1].rsplit("; see ", 1)[0]
        what = re.sub(rf" in {re.escape(task.path)}$", "", what)
        label = f"`{task.function}`" if task.function else ""
        if task.cell is not None:
            label = f"cell {task.cell + 1}" + (f" ({label})" if label else "")
        if what == f"implement {task.function}" or (task.cell is not None and what.startswith("implement ")):
            implement.append(label)
        elif what == f"complete {task.function}":
            complete.append(label)
        else:
            own.append(f"{label}: {_escape(what)}" if label else _escape(what))
    lines = []
    if implement:
        lines.append("implement " + ", ".join(implement))
    if complete:
        lines.append("complete " + ", ".join(complete) + " (the rest of each is given)")
    return lines + own


def _escape(text: str) -> str:
    """Plain text in markdown: its *, _, [, ], ` and < taken literally."""
    text = re.sub(r"([\\`*_\[\]])", r"\\\1", text)
    return text.replace("<", "&lt;")


def _marks_in(path: Path) -> Set[str]:
    """The ``pytest.mark.<name>`` names a test file's code uses (not those inside its strings)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "mark"
    }


def _lines_of(root: Path, task: Task) -> List[str]:
    """The lines the task's region lies in: the file's, or its notebook cell's."""
    text = (root / task.path).read_text(encoding="utf-8")
    if task.cell is None:
        return text.split("\n")
    source = json.loads(text)["cells"][task.cell]["source"]
    return ("".join(source) if isinstance(source, list) else str(source)).split("\n")
