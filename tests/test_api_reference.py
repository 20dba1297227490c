"""The API reference misses nothing silently: every public module has a page, and every public
name of each has its place there (docs/hooks/reference.py).

A public module is a package of torchlight, or a module that a public module lists in its
``__all__`` (``torchlight.cuda``, ``torchlight.nn.functional``). A page accounts for every name its
module exports: a function or class documented on it or linked to the page that documents it, a
constant in its table, a submodule linked to its own page. And what the page asks mkdocstrings for
must be what the module holds: mkdocstrings reads the code without running it (griffe), where a
submodule can hide a function of the same name (``autograd.once_differentiable``).

tests/site/check_site.py checks the rendered side: each of these names has its anchor on the built
page. This test needs no site.
"""

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "docs" / "hooks"

if not (HOOKS / "reference.py").is_file() or not (ROOT / "torchlight" / "course").is_dir():
    pytest.skip("the site's hooks and torchlight.course are not in this checkout", allow_module_level=True)


@pytest.fixture(scope="module")
def reference():
    sys.path.insert(0, str(HOOKS))
    try:
        return importlib.import_module("reference")
    finally:
        sys.path.remove(str(HOOKS))


@pytest.fixture(scope="module")
def pages(reference):
    return {page.module: page for page in reference.pages()}


def public_modules():
    """Every package of torchlight and every module that a public module's ``__all__`` lists."""
    found, todo = set(), ["torchlight"]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        module = importlib.import_module(name)
        if hasattr(module, "__path__"):
            todo += [f"{name}.{m.name}" for m in pkgutil.iter_modules(module.__path__) if m.ispkg and m.name[0] != "_"]
        for exported in getattr(module, "__all__", []):
            value = getattr(module, exported, None)
            if inspect.ismodule(value) and value.__name__.startswith("torchlight."):
                todo.append(value.__name__)
    return sorted(found)


def test_every_public_module_has_a_page(pages):
    missing = [name for name in public_modules() if name not in pages]
    assert not missing, (
        f"public modules without a reference page (add them to REFERENCE in docs/hooks/reference.py): {missing}"
    )


def test_the_new_modules_are_public():
    # the modules the issue found on no page
    assert {"torchlight.cuda", "torchlight.examples", "torchlight.utils.cli", "torchlight.ops"} <= set(public_modules())


@pytest.mark.parametrize("module", [name for name in public_modules()])
def test_every_exported_name_has_its_place(module, pages, reference):
    page = pages[module]
    exported = reference.exported(importlib.import_module(module))
    placed = page.names()
    assert sorted(set(exported)) == sorted(placed), (
        f"{module}: exported but on no page: {sorted(set(exported) - set(placed))}; "
        f"on the page but not exported: {sorted(set(placed) - set(exported))}"
    )
    assert len(placed) == len(set(placed)), f"{module}: a name placed twice"
    for name in page.submodules:
        assert f"{module}.{name}" in pages, f"{module}.{name} is linked from {module}'s page but has no page"


def test_constants_and_submodules_have_places(pages):
    assert {"float32", "float64", "int64", "bool"} <= set(pages["torchlight"].constants)
    assert "TOY" in pages["torchlight.datasets"].constants
    assert {"forward_ad", "functional"} <= set(pages["torchlight.autograd"].submodules)
    assert {"is_available", "device_count"} <= set(pages["torchlight.cuda"].members)


def test_a_name_a_submodule_hides_is_documented_where_it_is_defined(pages):
    page = pages["torchlight.autograd"]
    assert "once_differentiable" not in page.members
    assert page.shadowed["once_differentiable"] == "torchlight.autograd.once_differentiable.once_differentiable"
    assert "[](){#torchlight.autograd.once_differentiable}" in page.markdown()


def test_a_function_made_at_run_time_is_written_from_the_object(pages):
    page = pages["torchlight"]  # cos = _unary("cos") in torchlight/operations.py: an attribute to griffe
    pytest.importorskip("griffe")
    assert "cos" in page.runtime and "cos" not in page.members
    assert "## `cos` {#torchlight.cos}" in page.markdown()


def test_mkdocstrings_finds_what_each_page_asks_for(pages):
    """Each member resolves, read statically as mkdocstrings reads it, to a class or a function
    as the module holds at run time (not to a submodule of the same name)."""
    griffe = pytest.importorskip("griffe")  # the docs extra's
    package = griffe.load("torchlight", search_paths=[str(ROOT)], resolve_aliases=False)
    wrong = []
    for page in pages.values():
        module = importlib.import_module(page.module)
        paths = {f"{page.module}.{n}": getattr(module, n) for n in page.members}
        paths.update({path: getattr(module, n) for n, path in page.shadowed.items()})
        for path, value in paths.items():
            found = package
            for part in path.split(".")[1:]:
                found = found.members[part]
                while found.is_alias:
                    found = found.final_target
            want = "class" if inspect.isclass(value) else "function"
            if found.kind.value != want:
                wrong.append(f"{path}: {found.kind.value}, not a {want}")
    assert not wrong, wrong
