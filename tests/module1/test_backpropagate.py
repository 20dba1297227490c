"""Task 1.4: ordering the graph and running the chain rule back to the leaves."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchlight
from torchlight import Scalar
from torchlight.autograd import backpropagate, central_difference, topological_sort

from .strategies import moderate_floats, small_floats

pytestmark = pytest.mark.task1_4


def diamond(x):
    """x feeds two branches that meet again: c = (2 x) * (x + 1)."""
    a = x * 2.0
    b = x + 1.0
    return a * b, a, b


def ids_of(nodes):
    return [n.unique_id for n in nodes]


# -- topological_sort --------------------------------------------------------------------


def test_sort_of_a_diamond():
    x = Scalar(1.0)
    c, a, b = diamond(x)
    order = topological_sort(c)
    assert len(order) == 4
    assert order[0] is x and order[-1] is c
    assert {id(n) for n in order} == {id(x), id(a), id(b), id(c)}


def test_sort_leaves_out_constants():
    x = Scalar(1.0)
    k = Scalar(5.0, history=None)
    y = x * k + 3.0
    order = topological_sort(y)
    assert all(not n.is_constant() for n in order)
    assert len(order) == 3  # x, x * k, and y


def test_sort_of_a_leaf_is_the_leaf():
    x = Scalar(1.0)
    assert ids_of(topological_sort(x)) == [x.unique_id]


def test_sort_of_a_constant_is_empty():
    assert topological_sort(Scalar(1.0, history=None)) == []


def random_graph(draw_ops, values):
    """Build a DAG: each step combines two earlier nodes, chosen by the drawn indices."""
    nodes = [Scalar(v) for v in values]
    for op, i, j in draw_ops:
        a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
        nodes.append([a + b, a * b, a - b, (a * b).sigmoid()][op])
    return nodes


graph_steps = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=30)


@given(graph_steps, st.lists(moderate_floats, min_size=1, max_size=4))
def test_sort_puts_every_node_after_its_parents(steps, values):
    nodes = random_graph(steps, values)
    root = nodes[-1]
    order = topological_sort(root)
    position = {n.unique_id: i for i, n in enumerate(order)}
    assert len(position) == len(order), "a node appears twice"
    assert order[-1] is root
    for node in order:
        for parent in node.parents:
            assert position[parent.unique_id] < position[node.unique_id]
        if node.is_leaf():
            assert node.parents == []
    # Every non-constant ancestor is there: walk the graph by hand and compare.
    reachable, todo = set(), [root]
    while todo:
        n = todo.pop()
        if n.unique_id not in reachable:
            reachable.add(n.unique_id)
            todo.extend(n.parents)
    assert set(position) == reachable


@given(graph_steps, st.lists(moderate_floats, min_size=1, max_size=4))
def test_sort_is_deterministic(steps, values):
    # The same graph built twice is ordered the same way (compared position by position).
    first = topological_sort(random_graph(steps, values)[-1])
    second = topological_sort(random_graph(steps, values)[-1])
    assert [n.data for n in first] == [n.data for n in second]
    assert [n.history.last_fn for n in first] == [n.history.last_fn for n in second]


def test_deep_chain_needs_no_recursion():
    x = Scalar(0.5)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    order = topological_sort(y)
    assert len(order) == 10_001 and order[0] is x and order[-1] is y
    y.backward()
    assert x.grad == pytest.approx(1.0001**10_000, rel=1e-9)


# -- backpropagate -----------------------------------------------------------------------


@given(small_floats)
def test_diamond_accumulates_both_paths(v):
    x = Scalar(v)
    c, _, _ = diamond(x)
    c.backward()
    assert x.grad == pytest.approx(4 * v + 2, rel=1e-12, abs=1e-12)


@given(small_floats)
def test_repeated_use_of_a_leaf(v):
    x = Scalar(v)
    (x + x + x).backward()
    assert x.grad == 3.0
    y = Scalar(v)
    (y * y).backward()
    assert y.grad == pytest.approx(2 * v)


@given(graph_steps, st.lists(moderate_floats, min_size=1, max_size=4))
def test_random_graphs_match_central_differences(steps, values):
    nodes = random_graph(steps, values)
    nodes[-1].backward()
    for i, v in enumerate(values):
        expected = central_difference(lambda *vs: random_graph(steps, vs)[-1], *values, arg=i)
        got = nodes[i].grad if nodes[i].grad is not None else 0.0  # an unused leaf gets nothing
        assert got == pytest.approx(expected, rel=1e-4, abs=1e-4), (
            f"leaf {i} (value {v!r}): .grad is {got!r}, the central difference {expected!r}"
        )


@given(graph_steps, st.lists(moderate_floats, min_size=1, max_size=4))
def test_random_graphs_match_torch(steps, values):
    torch = pytest.importorskip("torch")
    ours = random_graph(steps, values)
    ours[-1].backward()
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    nodes = list(leaves)
    for op, i, j in steps:
        a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
        nodes.append([a + b, a * b, a - b, (a * b).sigmoid()][op])
    assert ours[-1].data == pytest.approx(nodes[-1].item(), rel=1e-12)
    nodes[-1].backward()
    for i, (s, t) in enumerate(zip(ours[: len(values)], leaves, strict=True)):
        expected = 0.0 if t.grad is None else t.grad.item()
        got = 0.0 if s.grad is None else s.grad
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), (
            f"leaf {i}: .grad is {got!r}, PyTorch's {expected!r}"
        )


def test_backward_scales_by_d():
    x = Scalar(3.0)
    (x * x).backward(2.0)
    assert x.grad == 12.0


def test_backpropagate_accumulates_into_leaves():
    x, y = Scalar(2.0), Scalar(3.0)
    z = x * y + y
    backpropagate(z, 0.5)
    assert x.grad == 1.5 and y.grad == 1.5


def test_backward_twice_accumulates():
    # Documented behaviour: the graph is kept, so a second backward adds to .grad again (as
    # PyTorch does with retain_graph=True). Reset .grad = None to start afresh.
    x = Scalar(2.0)
    y = x * x
    y.backward()
    y.backward()
    assert x.grad == 8.0
    x.grad = None
    y.backward()
    assert x.grad == 4.0


def test_backward_on_a_constant_is_an_error():
    with pytest.raises(RuntimeError, match="constant"):
        Scalar(1.0, history=None).backward()
    with pytest.raises(RuntimeError, match="constant"):
        (Scalar(1.0, history=None) * 2.0).backward()


def test_constants_and_intermediates_get_no_grad():
    x = Scalar(2.0)
    k = Scalar(5.0, history=None)
    mid = x * k
    (mid + 1.0).backward()
    assert x.grad == 5.0
    assert k.grad is None
    assert mid.grad is None


def test_unused_leaves_get_no_grad():
    x, unused = Scalar(2.0), Scalar(3.0)
    (x * 2.0).backward()
    assert unused.grad is None


def test_step_functions_pass_a_zero_gradient():
    x, y = Scalar(1.0), Scalar(2.0)
    (x < y).backward()
    assert x.grad == 0.0 and y.grad == 0.0


def test_backward_on_a_leaf():
    x = Scalar(2.0)
    x.backward()
    assert x.grad == 1.0


def test_no_grad_makes_constants():
    x = Scalar(2.0)
    with torchlight.no_grad():
        y = x * 3.0
        assert not torchlight.autograd.is_grad_enabled()
    assert y.is_constant() and y.data == 6.0
    with pytest.raises(RuntimeError, match="constant"):
        y.backward()
    z = x * 3.0  # recording is back on outside the block
    assert not z.is_constant()


def test_no_grad_as_a_decorator_and_set_grad_enabled():
    @torchlight.no_grad()
    def double(a):
        return a * 2.0

    x = Scalar(1.0)
    assert double(x).is_constant()
    assert not (x * 2.0).is_constant()
    with torchlight.set_grad_enabled(False):
        assert (x * 2.0).is_constant()
        with torchlight.enable_grad():
            assert not (x * 2.0).is_constant()
    assert torchlight.autograd.is_grad_enabled()


def test_no_grad_restores_the_mode_after_an_error():
    with pytest.raises(KeyError):
        with torchlight.no_grad():
            {}["missing"]
    assert torchlight.autograd.is_grad_enabled()
