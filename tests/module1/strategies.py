"""hypothesis strategies, the table of Scalar operations and a chain-rule walk shared by the
module 1 tests."""

import math

from hypothesis import strategies as st

# Finite values of a moderate size: large enough to exercise the ops, small enough that
# central differences with epsilon 1e-6 stay accurate.
small_floats = st.floats(min_value=-100.0, max_value=100.0, allow_nan=False, allow_infinity=False)
positive_floats = st.floats(min_value=0.1, max_value=100.0)
moderate_floats = st.floats(min_value=-5.0, max_value=5.0)
# Away from zero, where 1/x and relu's kink make numerical derivatives meaningless.
nonzero_floats = small_floats.filter(lambda x: abs(x) > 0.1)


def pairs_apart(strategy=small_floats, gap=0.1):
    """Pairs (x, y) with |x - y| > gap: step functions like < have a derivative there."""
    return st.tuples(strategy, strategy).filter(lambda p: abs(p[0] - p[1]) > gap)


# Every differentiable Scalar operation, as (name, function of Scalars, strategy for its inputs).
# The functions take Scalars (or numbers) and use only the Scalar API, so the same table serves
# the forward tests, the central-difference checks and the comparison with PyTorch.
UNARY = [
    ("neg", lambda a: -a, small_floats),
    ("log", lambda a: a.log(), positive_floats),
    ("exp", lambda a: a.exp(), moderate_floats),
    ("sigmoid", lambda a: a.sigmoid(), small_floats),
    ("relu", lambda a: a.relu(), nonzero_floats),
    ("tanh", lambda a: a.tanh(), moderate_floats),
    ("inv", lambda a: 1.0 / a, nonzero_floats),
    ("square", lambda a: a**2, small_floats),
    ("sqrt_pow", lambda a: a**0.5, positive_floats),
    ("exp2", lambda a: 2.0**a, moderate_floats),
]

BINARY = [
    ("add", lambda a, b: a + b, st.tuples(small_floats, small_floats)),
    ("sub", lambda a, b: a - b, st.tuples(small_floats, small_floats)),
    ("mul", lambda a, b: a * b, st.tuples(small_floats, small_floats)),
    ("div", lambda a, b: a / b, st.tuples(small_floats, nonzero_floats)),
    ("pow", lambda a, b: a**b, st.tuples(st.floats(0.5, 5.0), st.floats(-3.0, 3.0))),
    ("lt", lambda a, b: a < b, pairs_apart()),
    ("gt", lambda a, b: a > b, pairs_apart()),
    ("eq", lambda a, b: a == b, pairs_apart()),
]

# The same operations on plain floats: what the Scalar results must equal.
FLOAT_UNARY = {
    "neg": lambda a: -a,
    "log": lambda a: math.log(a),
    "exp": math.exp,
    "sigmoid": lambda a: 1.0 / (1.0 + math.exp(-a)),
    "relu": lambda a: max(a, 0.0),
    "tanh": math.tanh,
    "inv": lambda a: 1.0 / a,
    "square": lambda a: a * a,
    "sqrt_pow": math.sqrt,
    "exp2": lambda a: 2.0**a,
}

FLOAT_BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a**b,
    "lt": lambda a, b: 1.0 if a < b else 0.0,
    "gt": lambda a, b: 1.0 if a > b else 0.0,
    "eq": lambda a, b: 1.0 if a == b else 0.0,
}


def gradients_by_chain_rule(out, d=1.0):
    """{leaf.unique_id: derivative of out with respect to that leaf, times d}, from ``chain_rule``
    alone: each path from ``out`` back to a leaf adds the product of the derivatives along it.

    No topological sort (that is task 1.4's): the walk visits a node once per path through it,
    which is fine for the few nodes of one expression, and it lets task 1.3's tests check every
    Function's backward and ``chain_rule`` without calling ``backward()``. A leaf that no path
    reaches is absent.
    """
    grads = {}
    todo = [(out, d)]
    while todo:
        node, g = todo.pop()
        if node.is_leaf():
            grads[node.unique_id] = grads.get(node.unique_id, 0.0) + g
        else:
            todo.extend(node.chain_rule(g))
    return grads
