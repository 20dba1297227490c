"""Module 1's Function (autograd/function.py) on Scalars: the one every operation uses, written
as a student of module 1 would (forward with ctx, backward, save_for_backward)."""

import pytest

from torchlight import Scalar
from torchlight.autograd import backpropagate, central_difference
from torchlight.autograd import function as core

pytestmark = pytest.mark.task1_4


class Cube(core.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a * a

    @staticmethod
    def backward(ctx, d):
        (a,) = ctx.saved_tensors
        return 3.0 * a * a * d


class Returns(core.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a

    @staticmethod
    def backward(ctx, d):
        return d, 0.0


def test_core_function_records_and_differentiates():
    x = Scalar(1.5)
    y = Cube.apply(x)
    assert y.data == pytest.approx(3.375)
    assert isinstance(y.history, core.History) and y.history.last_fn is Cube
    backpropagate(y, 1.0)
    assert x.grad == pytest.approx(central_difference(lambda v: v**3, 1.5))


def test_core_function_on_constants_records_nothing():
    y = Cube.apply(Scalar(2.0, history=None))
    assert y.data == 8.0 and y.history is None
    assert Cube.apply(2.0) == 8.0  # no Variable at all: a plain number back


def test_an_input_returned_as_it_is_becomes_a_new_node():
    x, w = Scalar(2.0), Scalar(3.0)
    y = Returns.apply(x, w)
    assert y is not x and y.data == 2.0
    backpropagate(y, 1.0)
    assert x.grad == 1.0 and w.grad == 0.0


def test_wrong_number_of_gradients_names_the_function():
    class Bad(core.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, d):
            return d

    y = Bad.apply(Scalar(1.0), Scalar(2.0))
    with pytest.raises(RuntimeError, match="BadBackward returned an incorrect number of gradients"):
        backpropagate(y, 1.0)
