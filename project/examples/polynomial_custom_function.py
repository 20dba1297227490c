import torchlight as torch

# The cubic fit through a custom autograd.Function: y = a + b * P3(c + d x), with P3 the Legendre
# polynomial of degree 3, whose forward and backward we write ourselves, as in PyTorch's tutorial
# (PyTorch: Defining new autograd functions). The same file runs on PyTorch with the first line
# changed to ``import torch``.
#
#     python project/examples/polynomial_custom_function.py
# isort: split
import argparse
import math

# --help prints what the program does and exits; it takes no options (usage=SUPPRESS keeps a
# mistake to one line on stderr, with exit status 2).
argparse.ArgumentParser(
    description="Fit a cubic to sin(x) through a custom autograd.Function (PyTorch's tutorial).",
    usage=argparse.SUPPRESS,
).parse_args()


class LegendrePolynomial3(torch.autograd.Function):
    """P3(x) = (5x^3 - 3x) / 2, with its derivative 3(5x^2 - 1) / 2."""

    @staticmethod
    def forward(ctx, input):
        """P3 of every element of input; keep input for backward."""
        ctx.save_for_backward(input)
        return 0.5 * (5 * input**3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        """The gradient for input: grad_output times P3'(input)."""
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input**2 - 1)


dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 500, device=device, dtype=dtype)
y = torch.sin(x)

# Weights started near the answer (as the tutorial does): the fit converges from there
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 2e-5
for t in range(1000):
    P3 = LegendrePolynomial3.apply

    y_pred = a + b * P3(c + d * x)

    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    loss.backward()

    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

with torch.no_grad():
    final_loss = ((a + b * LegendrePolynomial3.apply(c + d * x) - y) ** 2).sum().item()
print(f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")
print(f"final loss {final_loss}")
