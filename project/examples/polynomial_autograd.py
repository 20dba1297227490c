import torchlight as torch

# Fit y = a + b x + c x^2 + d x^3 to sin(x) with tensors and autograd alone, as in PyTorch's
# tutorial "Learning PyTorch with Examples" (PyTorch: Tensors and autograd). The same file runs on
# PyTorch with the first line changed to ``import torch``.
#
#     python project/examples/polynomial_autograd.py
#
# torchlight computes in float64, so ``dtype = torch.float`` gives float64 here and float32 there.
# The tutorial takes 2000 steps at lr 1e-6 over 2000 points; fewer points and a larger step size
# reach the same fit sooner.
# isort: split
import argparse
import math

# --help prints what the program does and exits; it takes no options (usage=SUPPRESS keeps a
# mistake to one line on stderr, with exit status 2).
argparse.ArgumentParser(
    description="Fit a cubic to sin(x) with tensors and autograd alone (PyTorch's tutorial).",
    usage=argparse.SUPPRESS,
).parse_args()

torch.manual_seed(0)
dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 500, device=device, dtype=dtype)
y = torch.sin(x)

# One random weight per coefficient; requires_grad=True: backward() gives each its .grad
a = torch.randn((), device=device, dtype=dtype, requires_grad=True)
b = torch.randn((), device=device, dtype=dtype, requires_grad=True)
c = torch.randn((), device=device, dtype=dtype, requires_grad=True)
d = torch.randn((), device=device, dtype=dtype, requires_grad=True)

learning_rate = 1e-5
for t in range(1000):
    y_pred = a + b * x + c * x**2 + d * x**3

    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    loss.backward()

    # Change the weights themselves, outside the graph
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

final_loss = ((a + b * x + c * x**2 + d * x**3 - y) ** 2).sum().item()
print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
print(f"final loss {final_loss}")
