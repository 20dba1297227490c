"""A small tree of modules shared by module 0's tests (the tree itself) and module 1's (gradients
through it). ``forward`` works on plain floats with module 0's code alone, and on Scalars (the
parameters' values themselves, so that gradients reach them) once module 1 has built them."""

from torchlight import Scalar
from torchlight.nn import Module, Parameter


def use(param, x):
    """The parameter's value to compute with: the Scalar for a Scalar input, else its float."""
    return param.value if isinstance(x, Scalar) else param.value.data


class Inner(Module):
    def __init__(self, value):
        super().__init__()
        self.p = Parameter(Scalar(value))

    def forward(self, x):
        return use(self.p, x) * x


class Layer(Module):
    def __init__(self, w, b):
        super().__init__()
        self.weight = Parameter(Scalar(w))
        self.bias = Parameter(Scalar(b))
        self.inner = Inner(w + b)
        self.size = 2  # a plain attribute: neither a parameter nor a child

    def forward(self, x):
        return self.inner(use(self.weight, x) * x + use(self.bias, x))

    def extra_repr(self):
        return f"size={self.size}"


class Net(Module):
    def __init__(self, seed=1.0):
        super().__init__()
        self.a = Parameter(Scalar(seed))
        self.layer1 = Layer(seed + 1.0, seed + 2.0)
        self.layer2 = Layer(seed + 3.0, seed + 4.0)

    def forward(self, x):
        return self.layer2(self.layer1(x)) + use(self.a, x)


NAMES = [
    "a",
    "layer1.weight",
    "layer1.bias",
    "layer1.inner.p",
    "layer2.weight",
    "layer2.bias",
    "layer2.inner.p",
]


def values(module):
    return {name: p.value.data for name, p in module.named_parameters()}
