"""Course tooling: tasks, what a solution region asks of the student, and what its stub says.

A :class:`Task` is one region placed in the course: its stage, file (and notebook cell), the
function it lies in, and the message of its stub, ``Task N.K: <what to write>; see <where the
course teaches it>``. The "what" is the BEGIN line's own text when it has one, else derived
from the enclosing function ("implement mul in torchlight/scalar.py" for a whole body,
"complete ..." for part of one); the "where" is the section of the stage's notebook whose
heading starts with the stage number (``## 0.1 Operators``).
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple, Union

from .markers import Region

__all__ = ["Task", "enclosing_function", "heading_for", "stub_statement"]


@dataclass(frozen=True)
class Task:
    """One region of the course, located and described."""

    stage: str  # "0.1"
    path: str  # "torchlight/scalar.py", relative to the checkout, with forward slashes
    line: int  # 1-based line of the BEGIN marker (within the cell, for a notebook)
    cell: Optional[int]  # 0-based notebook cell index; None in a .py file
    function: str  # "mul", "Module.train"; "" outside any function
    whole: bool  # the region is the function's whole body (after the docstring)
    message: str  # the stub's NotImplementedError message

    @property
    def label(self) -> str:
        """What ``stages`` shows: the function, or the notebook cell."""
        if self.cell is None:
            return self.function
        return f"cell {self.cell + 1}" + (f" ({self.function})" if self.function else "")

    @property
    def where(self) -> str:
        """``path:line``, or ``path, cell C, line L`` in a notebook."""
        return (
            f"{self.path}:{self.line}" if self.cell is None else f"{self.path}, cell {self.cell + 1}, line {self.line}"
        )


def stub_statement(message: str) -> str:
    """The one statement a stub runs: raise NotImplementedError with a constant string.

    A constant message keeps the stub compilable by numba (nopython mode allows raising an
    exception class with constant arguments), so scalar operators stay valid kernels' bodies.
    """
    return f"raise NotImplementedError({message!r})"


def enclosing_function(tree: ast.AST, region: Region) -> Tuple[str, bool]:
    """The qualified name of the innermost function around ``region``, and whether the region is its
    whole body (every statement after the docstring); ``("", False)`` outside any function."""
    begin, end = region.begin + 1, region.end + 1  # ast counts lines from 1
    best: Optional[Tuple[str, Union[ast.FunctionDef, ast.AsyncFunctionDef]]] = None

    def walk(node: ast.AST, prefix: str) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                # The END comment may follow the function's last statement (end_lineno); BEGIN may not.
                inside = child.lineno < begin <= (child.end_lineno or 0)
                if inside and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    best = (name, child)
                if inside:
                    walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    if best is None:
        return "", False
    name, node = best
    body = list(node.body)
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        body = body[1:]  # the docstring stays outside the region
    whole = bool(body) and all(begin < stmt.lineno and (stmt.end_lineno or stmt.lineno) < end for stmt in body)
    return name, whole


_HEADING = re.compile(r"^#{1,6}\s+(.*\S)\s*$")


def notebook_headings(cells: List[dict]) -> List[Tuple[int, str]]:
    """Every markdown heading of a notebook as (cell index, heading text)."""
    found = []
    for i, cell in enumerate(cells):
        if cell.get("cell_type") == "markdown":
            source = cell.get("source", "")
            for line in ("".join(source) if isinstance(source, list) else str(source)).splitlines():
                m = _HEADING.match(line)
                if m:
                    found.append((i, m.group(1)))
    return found


def heading_for(stage: str, headings: List[Tuple[int, str]]) -> Optional[str]:
    """The heading that starts with the stage number (``0.1 Operators`` for ``0.1``), if any."""
    number = re.compile(rf"^{re.escape(stage)}\b(?!\.\d)")
    for _, text in headings:
        if number.match(text):
            return text
    return None


def section_of_cell(cell: int, headings: List[Tuple[int, str]]) -> Optional[str]:
    """The stage section a notebook cell lies in: the last stage heading (``## 0.1 ...``) above it."""
    above = [text for i, text in headings if i < cell and re.match(r"^\d+\.\d+\b", text)]
    return above[-1] if above else None


def module_notebooks(root: Path, stage: str) -> List[str]:
    """The notebooks of the stage's module (``notebooks/module3_*.ipynb``, in order), relative to root.

    A module's course may take more than one notebook (module 3: the fast backend, then cuda).
    """
    module = stage.split(".")[0]
    return [p.relative_to(root).as_posix() for p in sorted((root / "notebooks").glob(f"module{module}_*.ipynb"))]


def stage_notebook(root: Path, stage: str) -> Optional[str]:
    """The first notebook of the stage's module, relative to root (None if the module has none)."""
    found = module_notebooks(root, stage)
    return found[0] if found else None
