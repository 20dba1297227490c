"""autograd.grad checks grad_outputs against the outputs, with errors that name the argument."""

import pytest

import torchlight
from torchlight.autograd import grad

pytestmark = pytest.mark.task5_3


def _square_sum():
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    return x, (x * x).sum()


def test_a_number_for_a_tensor_output_is_a_type_error_naming_the_argument():
    x, y = _square_sum()
    with pytest.raises(TypeError, match=r"grad_outputs\[0\] must be a Tensor of shape \(\)"):
        grad(y, x, grad_outputs=1.0)


def test_a_tensor_of_another_shape_is_a_shape_mismatch():
    x, y = _square_sum()
    with pytest.raises(RuntimeError, match="Mismatch in shape: grad_outputs\\[0\\]"):
        grad(y, x, grad_outputs=torchlight.tensor([1.0, 1.0]))


def test_a_tensor_of_the_output_shape_scales_the_gradient():
    x, y = _square_sum()
    (g,) = grad(y, x, grad_outputs=torchlight.tensor(2.0))
    assert g.to_numpy().tolist() == [4.0, 8.0]


def test_a_scalar_output_takes_a_number():
    s = torchlight.Scalar(2.0)
    assert grad(s * s, s, grad_outputs=3.0) == (12.0,)
