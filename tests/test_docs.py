"""The API reference has no empty entry: every public module, function and class of the contract
(shared/spec/CONTRACT.md), and every method it names, has a docstring of its own.

The site (mkdocs.yml, `make docs`) renders these docstrings and leaves out any object without
one, so a missing docstring is a missing entry. This test needs no MkDocs: it reads the objects.
"""

import importlib
import inspect
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The public modules, as the reference pages have them (docs/hooks/reference.py; every package and
# every module a public module's __all__ lists: tests/test_api_reference.py).
# torchlight.course is an instructor's tool that the student edition leaves out.
MODULES = [
    "torchlight",
    "torchlight.scalar",
    "torchlight.autograd",
    "torchlight.autograd.forward_ad",
    "torchlight.autograd.functional",
    "torchlight.draw",
    "torchlight.tensor",
    "torchlight.tensor_data",
    "torchlight.ops",
    "torchlight.backends",
    "torchlight.backends.mps",
    "torchlight.cuda",
    "torchlight.accelerator",
    "torchlight.nn",
    "torchlight.nn.functional",
    "torchlight.optim",
    "torchlight.datasets",
    "torchlight.utils",
    "torchlight.utils.data",
    "torchlight.utils.cli",
    "torchlight.examples",
    "torchlight.compat",
    "torchlight.serialization",
    "torchlight.grading",
    "torchlight.course",
]

# Methods and properties the contract names on its classes.
MEMBERS = {
    "torchlight.Scalar": "backward is_leaf is_constant parents chain_rule log exp sigmoid relu tanh",
    "torchlight.nn.Module": (
        "modules children named_parameters parameters train eval state_dict load_state_dict forward __call__"
    ),
    "torchlight.Tensor": (
        "shape size dims grad_fn requires_grad_ is_leaf sum mean max exp log sigmoid relu tanh sqrt abs "
        "permute view contiguous expand gather is_close all detach zero_grad_ backward item to to_numpy "
        "from_numpy add_ sub_ mul_ zero_ fill_"
    ),
    # index_to_position, to_index, broadcast_index, shape_broadcast: functions of the module
    "torchlight.tensor_data.TensorData": "index permute is_contiguous dims",
    "torchlight.backends.TensorBackend": "map zip reduce matrix_multiply",
    "torchlight.autograd.Function": "apply forward backward setup_context jvp vmap",
    "torchlight.autograd.Context": (
        "save_for_backward saved_tensors save_for_forward needs_input_grad mark_dirty "
        "mark_non_differentiable set_materialize_grads"
    ),
    "torchlight.optim.SGD": "zero_grad step",
    "torchlight.optim.Adam": "zero_grad step",
}


def _module(name):
    if name == "torchlight.course" and not (ROOT / "torchlight" / "course").is_dir():
        pytest.skip("the student edition has no torchlight.course")
    return importlib.import_module(name)


def public_objects(module):
    """(name, object) for each function and class the module offers: ``__all__``, or the public
    names defined in it; submodules and constants have pages or no docstrings of their own."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, obj in vars(module).items() if getattr(obj, "__module__", None) == module.__name__]
    found = []
    for name in names:
        obj = getattr(module, name)
        if not name.startswith("_") and (inspect.isclass(obj) or inspect.isroutine(obj)):
            found.append((name, obj))
    return found


def own_doc(cls, name):
    """The docstring of ``cls.name`` where it is defined (a property's is its getter's), not one
    that ``inspect.getdoc`` would borrow from a base class."""
    for klass in cls.__mro__:
        if name in vars(klass):
            attr = vars(klass)[name]
            attr = getattr(attr, "__func__", attr)  # staticmethod, classmethod
            return (attr.__doc__ or "").strip()
    raise AttributeError(f"{cls.__qualname__} has no {name}")


def resolve(dotted):
    module, _, attr = dotted.rpartition(".")
    return getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring(name):
    module = _module(name)
    assert (module.__doc__ or "").strip(), f"{name} has no module docstring"


@pytest.mark.parametrize("name", MODULES)
def test_public_objects_documented(name):
    module = _module(name)
    objects = public_objects(module)
    # a package of submodules only (torchlight.utils) documents them on their own pages
    submodules_only = bool(getattr(module, "__all__", None)) and all(
        inspect.ismodule(getattr(module, n)) for n in module.__all__
    )
    assert objects or submodules_only, f"{name} offers no function or class"
    missing = [n for n, obj in objects if not (obj.__doc__ or "").strip()]
    assert not missing, f"{name}: no docstring on {', '.join(missing)}"


@pytest.mark.parametrize("cls", sorted(MEMBERS))
def test_named_members_documented(cls):
    klass = resolve(cls)
    missing = [m for m in MEMBERS[cls].split() if not own_doc(klass, m)]
    assert not missing, f"{cls}: no docstring on {', '.join(missing)}"


def test_reference_pages_cover_the_contract():
    """The site documents every module listed here, and no module is listed twice."""
    hooks = ROOT / "docs" / "hooks"
    if not (hooks / "reference.py").is_file():
        pytest.skip("no docs/hooks/reference.py in this checkout")
    sys.path.insert(0, str(hooks))
    try:
        reference = importlib.import_module("reference")
    finally:
        sys.path.remove(str(hooks))
    pages = [name for name, _ in reference.REFERENCE]
    assert sorted(pages) == sorted(MODULES) and len(set(pages)) == len(pages)


def test_own_doc_does_not_borrow():
    """The check can fail: a method without a docstring of its own is caught even when its base's has one."""

    class Base:
        def step(self):
            """Take a step."""

    class Child(Base):
        def step(self):
            pass

    assert own_doc(Base, "step") == "Take a step."
    assert own_doc(Child, "step") == ""


def _hooks_module(name):
    hooks = ROOT / "docs" / "hooks"
    if not (hooks / f"{name}.py").is_file() or not (ROOT / "torchlight" / "course").is_dir():
        pytest.skip("the site's hooks and torchlight.course are not in this checkout")
    sys.path.insert(0, str(hooks))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(hooks))


def test_stage_pages_show_every_stage_and_no_solution():
    """The module pages list each stage of setup.cfg with its files, and never a solution's code."""
    from torchlight.course import find_regions

    stage_pages = _hooks_module("stage_pages")
    pages = stage_pages.StagePages(ROOT)
    text = "\n".join(pages.module_stages(m) for m in pages.modules)
    assert pages.missing() == []
    for stage in pages.course.stages:
        assert f"{{#stage-{stage}}}" in text
    for task in pages.course.tasks:
        if task.cell is None:
            assert f"`{task.path}`" in text, f"stage {task.stage}: {task.path} is not on its page"
    # No line of any solution region reaches the pages, except in the hints (comment lines that the
    # stubs keep too), which are taken out here: a hint may quote code.
    prose = "\n".join(line for line in text.splitlines() if not line.strip().startswith("# "))
    for path in pages.course.marked_files:
        if path.endswith(".py"):
            lines = (ROOT / path).read_text(encoding="utf-8").split("\n")
            for region in find_regions(lines, str):
                hints = set(region.hints(lines))
                for line in region.body(lines):
                    code = line.strip()
                    if len(code) > 12 and line not in hints and not code.startswith("#"):
                        assert code not in prose, f"{path}: solution line {code!r} is on a module page"
