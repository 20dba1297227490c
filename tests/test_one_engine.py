"""One engine: one Function.apply, one History, one Context, one backward walk (DESIGN.md).

Module 5 extends module 1's classes through ``torchlight.extension.extends`` at the methods marked
``@extension_point``; a second copy of a step would let the code a student reads drift from the
code that runs.
"""

import ast
from pathlib import Path

import pytest

import torchlight
from torchlight.autograd import function as core
from torchlight.autograd.graph import BackwardPass
from torchlight.extension import extends, extension_point

PACKAGE = Path(torchlight.__file__).resolve().parent


def _subclasses(cls):
    seen, stack = [], [cls]
    while stack:
        c = stack.pop()
        for s in c.__subclasses__():
            if s not in seen:
                seen.append(s)
                stack.append(s)
    return seen


def test_only_module_1_defines_apply():
    own = [c for c in _subclasses(core.Function) if "apply" in vars(c) or "_record" in vars(c)]
    assert not own, f"Function subclasses with an apply (or _record) of their own: {own}"
    assert torchlight.autograd.Function is core.Function
    assert torchlight.autograd.Function.apply.__func__ is vars(core.Function)["apply"].__func__


def test_one_history_and_one_context():
    assert not _subclasses(core.History), "a subclass of History re-defines the graph node"
    assert not _subclasses(core.Context), "a subclass of Context re-defines the scratchpad"
    assert torchlight.autograd.History is core.History and torchlight.autograd.Context is core.Context
    names = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name in ("History", "Context", "Function"):
                names.setdefault(node.name, []).append(str(path.relative_to(PACKAGE)))
    assert names == {
        "History": ["autograd/function.py"],
        "Context": ["autograd/function.py"],
        "Function": ["autograd/function.py"],
    }


def test_one_backward_walk():
    walks = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if "reversed(topological_sort(" in text or "def backpropagate(" in text:
            walks.append(str(path.relative_to(PACKAGE)))
    assert walks == ["autograd/graph.py"]
    # the backward pass a Tensor runs is a BackwardPass, which the walk calls at each node
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    visit = BackwardPass.make(x, retain_graph=False)
    assert isinstance(visit, BackwardPass) and "leaf" in vars(type(visit)) and "chain_rule" in vars(type(visit))


def test_extends_adds_members_and_replaces_only_extension_points():
    class Base:
        def kept(self):
            return "base"

        @extension_point
        def hook(self):
            return "base"

    @extends(Base)
    class _More:
        def hook(self):
            return "extended"

        def added(self):
            return "added"

    b = Base()
    assert (b.kept(), b.hook(), b.added()) == ("base", "extended", "added")
    with pytest.raises(TypeError, match="not an extension point"):

        @extends(Base)
        class _Rewrite:
            def kept(self):
                return "rewritten"


def test_a_context_made_by_hand_reads_back_what_it_saved():
    # (the reference page's own usage; it broke when Context was defined twice)
    ctx = torchlight.autograd.Context()
    ctx.save_for_backward(1.0, 2.0)
    assert ctx.saved_tensors == (1.0, 2.0)
    assert torchlight.autograd.Context(no_grad=False, saved_values=(3.0, 4.0)).saved_tensors == (3.0, 4.0)
    assert torchlight.autograd.Context(no_grad=True).saved_values == ()
