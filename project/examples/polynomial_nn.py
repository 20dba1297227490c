import torchlight as torch

# The cubic fit of polynomial_autograd.py with PyTorch's building blocks: nn.Sequential, a loss
# module and an optimizer, as in PyTorch's tutorial (PyTorch: nn, PyTorch: optim). The same file
# runs on PyTorch with the first line changed to ``import torch``.
#
#     python project/examples/polynomial_nn.py
# isort: split
import argparse
import math

# --help prints what the program does and exits; it takes no options (usage=SUPPRESS keeps a
# mistake to one line on stderr, with exit status 2).
argparse.ArgumentParser(
    description="Fit a cubic to sin(x) with nn.Sequential, a loss module and an optimizer (PyTorch's tutorial).",
    usage=argparse.SUPPRESS,
).parse_args()

torch.manual_seed(0)

x = torch.linspace(-math.pi, math.pi, 500)
y = torch.sin(x)

# Features (x, x^2, x^3): xx has shape (500, 3), and a linear layer fits the coefficients
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-5)

for t in range(1000):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

with torch.no_grad():
    final_loss = loss_fn(model(xx), y).item()
linear_layer = model[0]
print(
    f"Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + "
    f"{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3"
)
print(f"final loss {final_loss}")
