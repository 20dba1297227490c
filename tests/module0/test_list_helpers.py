"""Task 0.2: map, zip_with and reduce, and the list helpers built from them."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from torchlight import scalar as S

pytestmark = [pytest.mark.task0_2]

small = st.floats(min_value=-100.0, max_value=100.0, allow_nan=False)
lists = st.lists(small, max_size=20)
pairs = st.integers(min_value=0, max_value=20).flatmap(
    lambda n: st.tuples(st.lists(small, min_size=n, max_size=n), st.lists(small, min_size=n, max_size=n))
)


@given(lists)
def test_map(xs):
    assert S.map(S.neg)(xs) == [-x for x in xs]
    assert S.map(S.id)(xs) == xs
    # Any iterable goes in; a list comes out.
    assert S.map(S.relu)(iter(xs)) == [S.relu(x) for x in xs]


@given(pairs)
def test_zip_with(ab):
    a, b = ab
    assert S.zip_with(S.mul)(a, b) == [x * y for x, y in zip(a, b, strict=True)]
    assert S.zip_with(S.max)(a, b) == S.zip_with(S.max)(b, a)
    # sub is not commutative: the first list gives the first argument
    assert S.zip_with(S.sub)(a, b) == [x - y for x, y in zip(a, b, strict=True)]


def test_zip_with_length_mismatch():
    with pytest.raises(ValueError, match=r"equal length.*3 and 2"):
        S.zip_with(S.add)([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        S.add_lists([1.0], [])


@given(lists)
def test_reduce_folds_from_the_left(xs):
    # sub is not associative, so this pins the order: ((start - x0) - x1) - ...
    expected = 10.0
    for x in xs:
        expected = expected - x
    assert S.reduce(S.sub, 10.0)(xs) == expected
    assert S.reduce(S.add, 3.0)([]) == 3.0


def test_reduce_small_example():
    assert S.reduce(S.sub, 0.0)([1.0, 2.0, 3.0]) == -6.0
    assert S.reduce(S.max, -math.inf)([2.0, 7.0, -1.0]) == 7.0


@given(lists)
def test_neg_list(xs):
    assert S.neg_list(xs) == [-x for x in xs]
    assert S.neg_list(S.neg_list(xs)) == xs


@given(pairs)
def test_add_lists(ab):
    a, b = ab
    out = S.add_lists(a, b)
    assert len(out) == len(a)
    assert out == [x + y for x, y in zip(a, b, strict=True)]
    assert out == S.add_lists(b, a)


@given(lists)
def test_sum(xs):
    assert S.sum(xs) == pytest.approx(math.fsum(xs), abs=1e-9)
    assert S.sum([]) == 0.0


@given(pairs)
def test_sum_distributes_over_add_lists(ab):
    a, b = ab
    assert S.sum(S.add_lists(a, b)) == pytest.approx(S.sum(a) + S.sum(b), abs=1e-9)


@given(st.lists(st.floats(min_value=-3.0, max_value=3.0), max_size=10))
def test_prod(xs):
    expected = 1.0
    for x in xs:
        expected *= x
    assert S.prod(xs) == pytest.approx(expected)
    assert S.prod([]) == 1.0
    assert S.prod([2.0, 3.0, 4.0]) == 24.0
