"""Task 5.2: in-place operations. Values and gradients as PyTorch's, the version counter, and the
errors that replace silently wrong gradients."""

import numpy as np
import pytest

import torchlight
from torchlight.autograd import Context, Function, InplaceFunction, gradcheck, inplace_tracking, no_grad

from .cases import CASES
from .helpers import assert_close, torch_leaves

pytestmark = pytest.mark.task5_2
BACKENDS = ["simple", "fast"]  # for the tests that take backend_name (tests/conftest.py)

RNG = np.random.default_rng(52)
A = RNG.uniform(0.5, 1.5, (2, 3))
B = RNG.uniform(0.5, 1.5, (3,))

# (name, op) with op(y, b) changing y in place; the same code runs on torch tensors.
OPS = [
    ("add_", lambda y, b: y.add_(b)),
    ("add_alpha", lambda y, b: y.add_(b, alpha=-0.5)),
    ("sub_", lambda y, b: y.sub_(b)),
    ("mul_", lambda y, b: y.mul_(b)),
    ("div_", lambda y, b: y.div_(b)),
    ("mul_number", lambda y, b: y.mul_(3.0)),
    ("fill_", lambda y, b: y.fill_(2.5)),
    ("zero_", lambda y, b: y.zero_()),
    ("setitem_slice", lambda y, b: y.__setitem__((slice(None), slice(0, 2)), b[1:])),
    ("setitem_number", lambda y, b: y.__setitem__(1, 4.0)),
    ("setitem_row", lambda y, b: y.__setitem__(0, b)),
]


@pytest.mark.parametrize("name, op", OPS, ids=[n for n, _ in OPS])
def test_values_and_gradients_match_torch(torch, name, op):
    a, b = torchlight.tensor(A, requires_grad=True), torchlight.tensor(B, requires_grad=True)
    ta, tb = torch_leaves(torch, [A, B])
    y, ty = a * a, ta * ta  # a non-leaf, so that it may change in place while recording
    out, tout = op(y, b), op(ty, tb)
    if out is not None:  # the method returns the tensor itself
        assert out is y and tout is ty
    assert_close(y, ty)
    (y * y.exp()).sum().backward()
    (ty * ty.exp()).sum().backward()
    assert_close(a.grad, ta.grad)
    assert_close(b.grad, tb.grad)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.name in ("add_", "sub_", "mul_", "div_", "fill_", "setitem")], ids=repr
)
def test_inplace_ops_pass_gradcheck(case):
    assert gradcheck(case.fn, case.tensors())


def test_every_tensor_has_a_version_shared_by_its_views():
    x = torchlight.tensor([[1.0, 2.0], [3.0, 4.0]])
    view, alias, copy = x[0], x.detach(), x.clone()
    assert x._version == 0, f"a new tensor's _version should be 0, got {x._version}"
    x.add_(1.0)
    versions = (x._version, view._version, alias._version)
    assert versions == (1, 1, 1), (
        f"after x.add_: the versions of x, x[0] and x.detach() should all be 1, got {versions}"
    )
    view.mul_(2.0)  # writes through to x
    assert x._version == 2, f"x[0].mul_ changes x's storage: x._version should be 2, got {x._version}"
    assert x.tolist() == [[4.0, 6.0], [4.0, 5.0]], f"x[0].mul_(2.0) should write through to x, got {x.tolist()}"
    assert copy._version == 0, f"x.clone() has its own storage: its _version should stay 0, got {copy._version}"
    x[1] = 0.0
    x.zero_()
    x.fill_(1.0)
    assert x._version == 5, (
        f"x[1] = ..., zero_ and fill_ are three more changes: x._version should be 5, got {x._version}"
    )
    assert alias.tolist() == [[1.0, 1.0], [1.0, 1.0]], f"x.detach() shares x's storage, got {alias.tolist()}"


def test_out_of_place_ops_do_not_bump_the_version():
    x = torchlight.tensor([1.0, 2.0])
    _ = x + 1.0, x * 2.0, x.exp(), x.view(2, 1), x[0]
    assert x._version == 0, f"+, *, exp, view and indexing change nothing: x._version should stay 0, got {x._version}"


def test_a_saved_tensor_changed_in_place_is_an_error(torch):
    x = torchlight.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2.0
    z = y * y  # saves y (version 0)
    y.add_(1.0)
    with pytest.raises(
        RuntimeError,
        match=r"one of the variables needed for gradient computation has been modified by an inplace "
        r"operation: \[Tensor of shape \(3,\)\], which was saved by MulBackward, is at version 1; "
        r"expected version 0 instead",
    ):
        z.sum().backward()
    # PyTorch refuses the same code
    (tx,) = torch_leaves(torch, [[1.0, 2.0, 3.0]])
    ty = tx * 2.0
    tz = ty * ty
    ty.add_(1.0)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        tz.sum().backward()


def test_a_saved_output_changed_in_place_is_an_error():
    x = torchlight.tensor([0.5, 1.0], requires_grad=True)
    y = x.exp()  # saves its output
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"saved by ExpBackward, is at version 1; expected version 0"):
        y.sum().backward()


def test_changes_through_a_view_are_caught_too():
    x = torchlight.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x.sigmoid()
    with no_grad():
        y[0].zero_()  # changes y's storage through a view
    with pytest.raises(RuntimeError, match="SigmoidBackward, is at version 1; expected version 0"):
        y.sum().backward()


def test_inplace_on_a_leaf_that_requires_grad_is_an_error(torch):
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    for op in (lambda t: t.add_(1.0), lambda t: t.mul_(2.0), lambda t: t.zero_(), lambda t: t.__setitem__(0, 5.0)):
        with pytest.raises(
            RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"
        ):
            op(x)
    assert x.tolist() == [1.0, 2.0] and x._version == 0  # refused before anything was written
    (tx,) = torch_leaves(torch, [[1.0, 2.0]])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        tx.add_(1.0)


def test_inplace_on_a_leaf_is_fine_under_no_grad():
    # what an optimizer step does
    w = torchlight.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with no_grad():
        w.sub_(w.grad, alpha=0.25)
    assert w.tolist() == [0.5, 1.0] and w.is_leaf and w.requires_grad and w._version == 1
    w.grad = None
    (w * w).sum().backward()
    assert w.grad.tolist() == [1.0, 2.0]


def test_earlier_users_keep_the_value_they_saw(torch):
    # z used y before y changed; z's gradient must not go through the change
    x = torchlight.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (tx,) = torch_leaves(torch, [[1.0, 2.0, 3.0]])
    for t in (x, tx):
        y = t * 2.0
        z = y + 3.0
        y.mul_(5.0)
        (z.sum() + (y * y).sum()).backward()
    assert_close(x.grad, tx.grad)


def test_an_earlier_user_sees_through_several_changes(torch):
    # two changes after z used y: the walk back to what z saw must pass both
    x = torchlight.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (tx,) = torch_leaves(torch, [[1.0, 2.0, 3.0]])
    for t in (x, tx):
        y = t * 2.0
        z = -y  # saves nothing: its gradient reaches t as -2, whatever y becomes
        y.mul_(3.0)
        y.mul_(5.0)
        (z.sum() + y.sum()).backward()
    assert_close(x.grad, tx.grad)
    assert x.grad.tolist() == [28.0, 28.0, 28.0]  # -2 from z, 30 from y


def test_a_constant_used_before_it_joined_the_graph_gets_no_gradient(torch):
    # z used c while c was a constant; c's change with w's values makes c part of the graph, but
    # z's gradient for c must go nowhere (c then had no node).
    w = torchlight.tensor([1.0, 2.0], requires_grad=True)
    (tw,) = torch_leaves(torch, [[1.0, 2.0]])
    for t, lib in ((w, torchlight), (tw, torch)):
        c = lib.tensor([3.0, 4.0], dtype=torch.float64) if lib is torch else lib.tensor([3.0, 4.0])
        z = c + t
        c.add_(t)
        (z.sum() + c.sum()).backward()
    assert_close(w.grad, tw.grad)
    assert w.grad.tolist() == [2.0, 2.0]


def test_a_constant_changed_with_a_tensor_that_requires_grad_joins_the_graph(torch):
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    (tx,) = torch_leaves(torch, [[1.0, 2.0]])
    for t, lib in ((x, torchlight), (tx, torch)):
        c = lib.zeros(3, 2, dtype=torch.float64) if lib is torch else lib.zeros(3, 2)
        before = c * 1.0  # used while c was a constant
        c[1] = t * t
        c.add_(t.exp())
        assert c.requires_grad and not c.is_leaf
        (c.sum() + before.sum()).backward()
    assert_close(x.grad, tx.grad)


def test_custom_inplace_function_with_mark_dirty(torch):
    def make(base):
        class ScaleInPlace(base):
            @staticmethod
            def forward(ctx, x, k):
                x.mul_(k)
                ctx.mark_dirty(x)
                ctx.k = k
                return x

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        return ScaleInPlace

    x = torchlight.tensor(A, requires_grad=True)
    (tx,) = torch_leaves(torch, [A])
    y, ty = x.exp(), tx.exp()
    out, tout = make(Function).apply(y * 1.0, 3.0), make(torch.autograd.Function).apply(ty * 1.0, 3.0)
    assert out.grad_fn.__name__ == "ScaleInPlace"
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    assert_close(x.grad, tx.grad)


def test_mark_dirty_checks():
    class NotAnInput(InplaceFunction):
        @staticmethod
        def forward(ctx, x):
            out = x * 2.0
            ctx.mark_dirty(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return g

    class NotReturned(InplaceFunction):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g

    class Dirty(InplaceFunction):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    y = torchlight.tensor([1.0], requires_grad=True) * 1.0
    with pytest.raises(RuntimeError, match="not an input"):
        NotAnInput.apply(y)
    with pytest.raises(RuntimeError, match="marked as dirty during the forward method were not returned as output"):
        NotReturned.apply(y)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        Dirty.apply(torchlight.tensor([1.0], requires_grad=True))


def test_views_and_inplace(torch):
    # a view used before its base changed is right, as in PyTorch
    x = torchlight.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (tx,) = torch_leaves(torch, [[1.0, 2.0, 3.0]])
    for t in (x, tx):
        y = t * 2.0
        s = y[0:2].sum()
        y.mul_(3.0)
        s.backward()
    assert_close(x.grad, tx.grad)
    # torchlight refuses what it cannot follow, instead of giving a wrong gradient
    y = x * 2.0
    v = y[0:2]
    y.mul_(3.0)
    with pytest.raises(
        RuntimeError, match="used a view made by IndexBackward after the tensor it views was modified in place"
    ):
        v.sum().backward()
    with pytest.raises(RuntimeError, match="in-place operation .* on a view made by IndexBackward"):
        (x * 2.0)[0:2].mul_(3.0)
    with pytest.raises(RuntimeError, match="on a view of part of another tensor"):
        torchlight.zeros(2, 3)[0].add_(x)


def test_setitem_errors():
    y = torchlight.zeros(2, 3)
    with pytest.raises(
        RuntimeError,
        match=r"shape mismatch: value tensor of shape \[4\] cannot be broadcast to indexing result of shape \[2\]",
    ):
        y[0, 1:] = torchlight.ones(4)
    with pytest.raises(TypeError, match="only integers, slices"):
        y["0"] = 1.0  # (a list, a tensor or a mask picks elements: test_tutorial_api.py)
    assert y._version == 0, f"a refused assignment changes nothing: y._version should stay 0, got {y._version}"


def test_shape_errors(torch):
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        torchlight.ones(3).add_(torchlight.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        torch.ones(3).add_(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        torchlight.ones(3).fill_(torchlight.ones(2))
    with pytest.raises(
        RuntimeError, match="more than one element of the written-to tensor refers to a single memory location"
    ):
        torchlight.ones(1, 3).expand(2, 3).add_(1.0)


def test_overlapping_input_is_read_before_it_is_written():
    x = torchlight.tensor([1.0, 2.0, 3.0, 4.0])
    x[1:].add_(x[:3])  # numpy semantics: the right side is read first
    assert x.tolist() == [1.0, 3.0, 5.0, 7.0]
    y = torchlight.tensor([1.0, 2.0])
    y.mul_(y)
    assert y.tolist() == [1.0, 4.0]


# -- moved from earlier modules: they rely on the version counter -----------------------------------


def test_saved_tensors_can_be_read_back_in_forward_order():
    # (from test_custom_functions.py: saving snapshots the versions, this task's bookkeeping)
    ctx = Context()
    a, b = torchlight.tensor([1.0]), torchlight.tensor([2.0])
    ctx.save_for_backward(a, None, b)
    inplace_tracking.snapshot_saved(ctx)
    saved = ctx.saved_tensors
    assert len(saved) == 3 and saved[0] is a and saved[1] is None and saved[2] is b, (
        f"save_for_backward(a, None, b) should read back as (a, None, b), got {saved}"
    )


def test_views_made_by_indexing_share_the_version(backend_name):
    # (from tests/module2/test_tensor_data.py)
    t = torchlight.tensor(np.arange(12.0).reshape(3, 4), backend=backend_name)
    row = t[1]
    before = row._version
    t._bump_version()  # an in-place change anywhere in the storage is seen by every view
    assert row._version == before + 1, f"t[1] shares t's version: it should be {before + 1}, got {row._version}"


def test_saved_tensors_changed_in_place_are_detected(backend_name):
    # (from tests/module2/test_autodiff.py)
    x = torchlight.tensor([1.0, 2.0], requires_grad=True, backend=backend_name)
    h = x * 1.0
    y = (h * h).sum()
    h[0]._bump_version()  # as an in-place op on a view would: the version is shared
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*Tensor of shape \(2,\).*MulBackward"):
        y.backward()
