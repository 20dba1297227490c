import torchlight as torch

# The cubic fit as a custom nn.Module whose coefficients are nn.Parameters, trained with a loss
# module and SGD, as in PyTorch's tutorial (PyTorch: Custom nn Modules). The same file runs on
# PyTorch with the first line changed to ``import torch``.
#
#     python project/examples/polynomial_module.py
# isort: split
import argparse
import math

# --help prints what the program does and exits; it takes no options (usage=SUPPRESS keeps a
# mistake to one line on stderr, with exit status 2).
argparse.ArgumentParser(
    description="Fit a cubic to sin(x) with a custom nn.Module and SGD (PyTorch's tutorial).",
    usage=argparse.SUPPRESS,
).parse_args()


class Polynomial3(torch.nn.Module):
    def __init__(self):
        """Four parameters: the model's coefficients, which model.parameters() hands the optimizer."""
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        """The prediction for every element of x."""
        return self.a + self.b * x + self.c * x**2 + self.d * x**3

    def string(self):
        """The polynomial, written out."""
        return f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3"


torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 500)
y = torch.sin(x)

model = Polynomial3()
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-5)

for t in range(1000):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

with torch.no_grad():
    final_loss = criterion(model(x), y).item()
print(f"Result: {model.string()}")
print(f"final loss {final_loss}")
