"""The course's layers: no file imports, at import time, a file of a later module (DESIGN.md).

Each file says its module in the first line of its docstring ("Module 2: ...", "Modules 1 and 5:
...": the first number is the module that needs it). Course and grading tooling says "Course
tooling:" and sits above every module, as do the examples ("Example: ...", programs such as
module 4's project, which use the library as a user does, through ``import torchlight``). A
package's ``__init__.py`` assembles its package: it may import anything, and a file that imports
from it imports everything it assembles, so it counts as the latest module among its own imports.
"""

import ast
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "torchlight"
TOOLING = 9  # "Course tooling": above every module


def _docstring_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return doc.splitlines()[0] if doc else ""


def declared_module(path: Path) -> Optional[int]:
    """The module a file's header names (None if it names none)."""
    first = _docstring_line(path)
    if first.startswith(("Course tooling", "Example")):
        return TOOLING  # tooling, and the examples: programs that use the whole library
    m = re.match(r"Modules? (\d)", first)
    return int(m.group(1)) if m else None


def import_time_imports(path: Path) -> Iterator[Tuple[int, Path]]:
    """(line, file) for each torchlight file that ``path`` imports when it is imported: statements
    at the top level or in a class body (not inside functions, which import when called)."""
    tree = ast.parse(path.read_text())
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    stack: List[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                base += node.module.split(".") if node.module else []
            else:
                base = (node.module or "").split(".")
            if base[0] != "torchlight":
                continue
            for alias in node.names:
                target = _resolve(base, alias.name)
                if target is not None:
                    yield node.lineno, target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "torchlight":
                    target = _resolve(parts, None)
                    if target is not None:
                        yield node.lineno, target
        else:
            stack.extend(ast.iter_child_nodes(node))


def _resolve(parts: List[str], name: Optional[str]) -> Optional[Path]:
    """The file an import names: a submodule ``name`` of package ``parts``, or ``parts`` itself."""
    where = ROOT.joinpath(*parts)
    if name is not None:
        for candidate in (where / f"{name}.py", where / name / "__init__.py"):
            if candidate.exists():
                return candidate
    for candidate in (where.with_suffix(".py"), where / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


@lru_cache(maxsize=None)
def module_of(path: Path) -> int:
    """A file's module; for a package's ``__init__.py``, the latest module among what it imports."""
    if path.name == "__init__.py":
        own = declared_module(path) or 0
        return max([own] + [module_of(t) for _, t in import_time_imports(path) if t != path])
    return declared_module(path) or 0  # (a file naming none fails the test above)


def _files() -> List[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")


def test_every_file_names_its_module():
    missing = [str(p.relative_to(ROOT)) for p in _files() if declared_module(p) is None]
    assert not missing, (
        "these files name no module in their docstring's first line ('Module N: ...', or 'Course tooling: ...'):\n"
        + "\n".join(missing)
    )


def test_no_file_imports_a_later_module():
    arrows: List[str] = []
    for path in _files():
        mine = module_of(path)
        for line, target in import_time_imports(path):
            theirs = module_of(target)
            if theirs > mine:
                arrows.append(
                    f"{path.relative_to(ROOT)}:{line} (module {mine}) imports "
                    f"{target.relative_to(ROOT)} (module {theirs})"
                )
    arrows = list(dict.fromkeys(arrows))  # one line per import statement and file
    assert not arrows, "files that import a later module's file at import time:\n" + "\n".join(arrows)


TENSOR_CLASS_LINES = 400  # issue 18: a class a student can read


def test_the_tensor_class_stays_a_facade_that_modules_1_and_2_read():
    tree = ast.parse((PACKAGE / "tensor.py").read_text())
    (cls,) = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Tensor"]
    lines = cls.end_lineno - cls.lineno + 1
    assert lines <= TENSOR_CLASS_LINES, (
        f"class Tensor in torchlight/tensor.py is {lines} lines, more than {TENSOR_CLASS_LINES}: it holds what "
        "modules 1 and 2 read (construction, attributes, backward, the arithmetic, the stages' operations, views). "
        "Attach other methods from a file of their own with @extends(Tensor) (extension.py): tensor_comparisons.py, "
        "tensor_conversions.py, tensor_variable.py (the Variable protocol) for module 2, tensor_fused.py (module 3), "
        "tensor_pytorch.py (module 4: PyTorch's names), tensor_inplace.py or tensor_autograd.py (module 5), or a "
        "new file for a new concept, whose docstring names its module and which torchlight/__init__.py imports"
    )


def test_every_file_that_extends_tensor_is_imported_with_torchlight():
    import torchlight  # noqa: F401  (what a user imports: every attachment must come with it)

    files = [p for p in _files() if "@extends(Tensor)" in p.read_text()]
    names = [".".join(p.relative_to(ROOT).with_suffix("").parts) for p in files]
    assert "torchlight.tensor_variable" in names  # (the search finds them)
    missing = [name for name in names if name not in sys.modules]
    assert not missing, f"torchlight/__init__.py does not import these files, so Tensor lacks their methods: {missing}"
