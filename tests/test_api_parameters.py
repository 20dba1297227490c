"""The API reference's parameter tables: each public function and class on the reference pages
(docs/hooks/reference.py) documents every parameter it takes with a ``:param name:`` field, the
docstring convention that mkdocs.yml's mkdocstrings (``docstring_style: sphinx``) renders as a
table; a class documents its constructor's. ``self``, ``cls``, ``*args`` and ``**kwargs`` need
none; ALLOWED names the few whose table would add nothing, and why. METHODS adds the methods that a
user of the Function API writes or calls.

mkdocs build --strict checks the other direction: a field naming no parameter fails the build.
"""

import importlib
import inspect
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "docs" / "hooks"

if not (HOOKS / "reference.py").is_file():
    pytest.skip("the site's hooks are not in this checkout", allow_module_level=True)

# name (or "module.*") -> why its parameters get no table
ALLOWED = {
    "torchlight.scalar.*": "module 0's float operators and list helpers: each docstring is the formula in x, y",
    "torchlight.autograd.Context": "made by Function.apply for each call, never by a user",
    "torchlight.autograd.History": "made by Function.apply for each call, never by a user",
    "torchlight.dtype": "the dtypes are the constants float32, float64, int64 and bool; a user makes none",
    "torchlight.utils.cli.ArgumentParser": "argparse.ArgumentParser's own parameters, which Python documents",
    **{
        name: "a record that torchlight makes and returns, never a user: its fields are its attributes"
        for name in (
            "torchlight.datasets.Graph",
            "torchlight.autograd.forward_ad.UnpackedDualTensor",
            "torchlight.grading.GradeResult",
            "torchlight.grading.Row",
            "torchlight.grading.Stage",
            "torchlight.course.Course",
            "torchlight.course.Edition",
            "torchlight.course.Region",
            "torchlight.course.Task",
        )
    },
}

# Files whose public names may lack their fields for now (none: a file leaves this list as soon as
# its names have them, and the test says so).
PENDING: set = set()

# (page, dotted name of a method there) for the Function API's methods a user writes or calls
METHODS = [
    ("torchlight.autograd", "Function.forward"),
    ("torchlight.autograd", "Function.backward"),
    ("torchlight.autograd", "Function.setup_context"),
    ("torchlight.autograd", "Function.jvp"),
    ("torchlight.autograd", "Context.set_materialize_grads"),
    ("torchlight.tensor", "Tensor.backward"),
]


def _reference():
    sys.path.insert(0, str(HOOKS))
    try:
        return importlib.import_module("reference")
    finally:
        sys.path.remove(str(HOOKS))


def _allowed(path: str) -> bool:
    return path in ALLOWED or path.rsplit(".", 1)[0] + ".*" in ALLOWED


def _parameters(obj: object) -> List[str]:
    """The parameters a docstring should name: all but self, cls, *args and **kwargs (a class's: its
    ``__init__``'s, as the renderer shows them)."""
    if inspect.isclass(obj):
        if obj.__init__ is object.__init__ or _a_function_class(obj):
            return []
        obj = obj.__init__
    try:
        signature = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return []
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [n for n, p in signature.parameters.items() if n not in ("self", "cls") and p.kind not in skip]


def _a_function_class(cls: type) -> bool:
    """An autograd Function (the ops): never made, only applied (``apply`` takes forward's
    arguments), unless the class makes its own ``__init__`` part of its API."""
    from torchlight.autograd import Function

    return issubclass(cls, Function) and "__init__" not in vars(cls)


def _docstring(obj: object) -> str:
    """What the reference renders: a class's own docstring with its own ``__init__``'s."""
    if inspect.isclass(obj):
        init = obj.__dict__.get("__init__")
        return (obj.__dict__.get("__doc__") or "") + "\n" + (getattr(init, "__doc__", None) or "")
    return inspect.getdoc(obj) or ""


def documented() -> Iterator[Tuple[str, object]]:
    """(public path, object) for each function and class that a reference page documents, and METHODS."""
    for page in _reference().pages():
        module = importlib.import_module(page.module)
        for name in [*page.members, *page.shadowed, *page.runtime]:
            yield f"{page.module}.{name}", getattr(module, name)
    for page, dotted in METHODS:
        owner, method = dotted.split(".")
        yield f"{page}.{dotted}", getattr(getattr(importlib.import_module(page), owner), method)


def _source(obj: object) -> str:
    try:
        return Path(inspect.getsourcefile(obj) or "").resolve().relative_to(ROOT).as_posix()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""


def _lacking() -> Dict[str, Tuple[str, List[str]]]:
    """path -> (its source file, the parameters its docstring has no field for)."""
    found = {}
    for path, obj in documented():
        if not _allowed(path):
            doc = _docstring(obj)
            lacking = [n for n in _parameters(obj) if f":param {n}:" not in doc]
            if lacking:
                found[path] = (_source(obj), lacking)
    return found


def test_every_parameter_has_its_field():
    missing = [f"{path}: {', '.join(names)}" for path, (file, names) in _lacking().items() if file not in PENDING]
    assert not missing, f"{len(missing)} public names without a ':param name:' field for:\n" + "\n".join(missing)


def test_the_allowlists_name_what_there_is():
    paths = {path for path, _ in documented()}
    stale = [name for name in ALLOWED if not name.endswith(".*") and name not in paths]
    assert not stale, f"ALLOWED names what no reference page documents: {stale}"
    waiting = {file for file, _ in _lacking().values()}
    done = sorted(PENDING - waiting)
    assert not done, f"every public name of {done} has its fields now: take the file off PENDING"


def test_the_check_reads_what_the_renderer_reads():
    def f(a, b=1, *args, **kwargs):
        """What f does.

        :param a: one thing.
        """

    class Layer:
        """A layer.

        :param size: its size.
        """

        def __init__(self, size, bias=True): ...

    assert _parameters(f) == ["a", "b"] and ":param b:" not in _docstring(f)
    assert _parameters(Layer) == ["size", "bias"] and ":param size:" in _docstring(Layer)
    assert _parameters(importlib.import_module("torchlight.ops").Add) == []  # a Function: applied, never made
