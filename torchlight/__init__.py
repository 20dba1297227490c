"""torchlight: a deep-learning framework built in stages, for teaching.

Beside its own names, torchlight has PyTorch's for what beginners meet first (dtypes, devices,
factories such as ``arange``, and functional forms such as ``torchlight.sin(x)``), so that a
PyTorch program runs after ``import torchlight as torch``: see docs/pytorch.md.
"""

from . import (
    accelerator,
    autograd,
    backends,
    cuda,
    datasets,
    nn,
    ops,
    optim,
    scalar,
    utils,
)
from .autograd import enable_grad, no_grad, set_grad_enabled
from .autograd import functions as _functions  # noqa: F401  (the ops by the contract's name)
from .backends import set_default_backend
from .creation import (
    arange,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones_like,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    zeros_like,
)
from .devices import device, get_default_device, set_default_device
from .draw import draw_graph
from .dtypes import bool_ as bool
from .dtypes import dtype, float32, float64, int64
from .dtypes import float32 as float
from .dtypes import float64 as double
from .dtypes import int64 as long
from .operations import (
    abs,
    add,
    allclose,
    argmax,
    argmin,
    bmm,
    cat,
    clamp,
    clip,
    concat,
    concatenate,
    cos,
    div,
    exp,
    flatten,
    inference_mode,
    is_grad_enabled,
    is_tensor,
    isclose,
    log,
    log_softmax,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mm,
    mul,
    neg,
    norm,
    numel,
    permute,
    pow,
    relu,
    reshape,
    sigmoid,
    sin,
    softmax,
    sqrt,
    squeeze,
    stack,
    std,
    sub,
    sum,
    t,
    tanh,
    transpose,
    unsqueeze,
    var,
    where,
)
from .ops.scatter import scatter, scatter_add
from .random import manual_seed
from .scalar_variable import Scalar
from .serialization import load, save
from .tensor import Tensor, ones, rand, tensor, zeros
from .tensor_autograd import EngineMembers as _EngineMembers  # noqa: F401  (files that add Tensor's methods)
from .tensor_comparisons import Comparisons as _Comparisons  # noqa: F401
from .tensor_conversions import Conversions as _Conversions  # noqa: F401
from .tensor_fused import Fused as _Fused  # noqa: F401
from .tensor_inplace import InPlace as _InPlace  # noqa: F401
from .tensor_pytorch import PyTorchNames as _PyTorchNames  # noqa: F401
from .tensor_variable import VariableMembers as _VariableMembers  # noqa: F401

# isort: split
# Module 3's fused native apply, where built: imported last, as it reads the Tensor methods it
# does itself (module 5's Tensor._version among them) once every file has attached its own.
from .autograd import native as _native  # noqa: F401

# PyTorch dtypes that torchlight does not have: a clear error instead of AttributeError's bare name.
_MISSING_DTYPES = {
    "float16", "half", "bfloat16", "int32", "int", "int16", "short", "int8", "uint8", "complex64",
    "complex128", "cfloat", "cdouble",
}  # fmt: skip


def __getattr__(name: str):
    if name in _MISSING_DTYPES:
        raise AttributeError(
            f"torchlight has no dtype {name}: it computes in float64 and has the dtypes float64 (double), "
            "float32 (float, held as float64), int64 (long) and bool; see docs/pytorch.md"
        )
    raise AttributeError(f"module 'torchlight' has no attribute '{name}'")


__version__ = "0.1.0"

__all__ = [
    "Scalar",
    "Tensor",
    "abs",
    "accelerator",
    "add",
    "allclose",
    "arange",
    "argmax",
    "argmin",
    "bmm",
    "bool",
    "cat",
    "clamp",
    "clip",
    "concat",
    "concatenate",
    "cos",
    "cuda",
    "device",
    "div",
    "double",
    "dtype",
    "empty",
    "empty_like",
    "exp",
    "eye",
    "flatten",
    "float",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "full_like",
    "get_default_device",
    "inference_mode",
    "int64",
    "is_grad_enabled",
    "is_tensor",
    "isclose",
    "linspace",
    "load",
    "log",
    "log_softmax",
    "long",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mm",
    "mul",
    "neg",
    "norm",
    "numel",
    "ones_like",
    "permute",
    "pow",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "randperm",
    "relu",
    "reshape",
    "save",
    "scatter",
    "scatter_add",
    "sigmoid",
    "sin",
    "softmax",
    "sqrt",
    "squeeze",
    "stack",
    "std",
    "sub",
    "sum",
    "t",
    "tanh",
    "transpose",
    "unsqueeze",
    "utils",
    "var",
    "where",
    "zeros_like",
    "autograd",
    "backends",
    "datasets",
    "draw_graph",
    "enable_grad",
    "manual_seed",
    "nn",
    "no_grad",
    "ones",
    "ops",
    "optim",
    "rand",
    "scalar",
    "set_default_backend",
    "set_default_device",
    "set_grad_enabled",
    "tensor",
    "zeros",
]
