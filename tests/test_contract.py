"""Every public name the contract (shared/spec/CONTRACT.md) promises exists and is documented."""

import inspect

import pytest

import torchlight
from torchlight import autograd, backends, datasets, nn, scalar

SCALAR_OPS = "mul id add neg lt eq max is_close sigmoid relu log exp inv log_back inv_back relu_back".split()
LIST_HELPERS = "map zip_with reduce neg_list add_lists sum prod".split()
MODULE_API = "modules children named_parameters parameters train eval __call__ state_dict load_state_dict".split()
SCALAR_API = "backward is_leaf is_constant parents chain_rule log exp sigmoid relu tanh".split()
AUTOGRAD = "Function Context History backpropagate topological_sort central_difference grad gradcheck".split()
TENSOR_CREATION = "tensor zeros ones rand".split()
TENSOR_API = (
    "shape size dims backend requires_grad_ is_leaf grad_fn sum mean max exp log sigmoid relu tanh sqrt "
    "abs permute view contiguous expand gather is_close all detach zero_grad_ backward item to to_numpy "
    "from_numpy add_ sub_ mul_ zero_ fill_"
).split()
FUNCTIONS = (
    "Add Mul Sub Div Pow MatMul Sum Map Log Exp Sigmoid ReLU ReluBack LogBack Inv InvBack Sqrt Abs Tanh "
    "Permute BroadcastView Gather Max"
).split()
DATASETS = "simple diag split xor circle spiral".split()


def _documented(obj):
    doc = inspect.getdoc(obj)
    return bool(doc and doc.strip())


@pytest.mark.module0
@pytest.mark.task0_1
@pytest.mark.parametrize("name", SCALAR_OPS + LIST_HELPERS)
def test_scalar_operators(name):
    assert callable(getattr(scalar, name)) and _documented(getattr(scalar, name))


@pytest.mark.module0
@pytest.mark.task0_3
@pytest.mark.parametrize("name", MODULE_API)
def test_module_api(name):
    assert callable(getattr(nn.Module, name))
    assert _documented(nn.Module) and _documented(nn.Parameter)


@pytest.mark.module0
@pytest.mark.task0_4
@pytest.mark.parametrize("name", DATASETS)
def test_datasets(name):
    assert callable(getattr(datasets, name)) and _documented(getattr(datasets, name))


@pytest.mark.module1
@pytest.mark.task1_2
@pytest.mark.parametrize("name", SCALAR_API)
def test_scalar_api(name):
    member = getattr(torchlight.Scalar, name)
    assert _documented(member), f"Scalar.{name} has no docstring"


@pytest.mark.module1
@pytest.mark.task1_4
@pytest.mark.parametrize("name", AUTOGRAD)
def test_autograd_exports(name):
    assert _documented(getattr(autograd, name))


@pytest.mark.module2
@pytest.mark.task2_3
@pytest.mark.parametrize("name", TENSOR_CREATION + ["no_grad", "set_default_backend"])
def test_tensor_creation(name):
    assert _documented(getattr(torchlight, name))


@pytest.mark.module2
@pytest.mark.task2_3
@pytest.mark.parametrize("name", TENSOR_API)
def test_tensor_api(name):
    assert hasattr(torchlight.Tensor, name), f"Tensor.{name} is missing"


@pytest.mark.module2
@pytest.mark.task2_4
@pytest.mark.parametrize("name", FUNCTIONS)
def test_builtin_functions(name):
    fn = getattr(autograd.functions, name)
    assert issubclass(fn, autograd.Function) and fn.name == f"{name}Backward"


@pytest.mark.module2
@pytest.mark.task2_3
def test_backend_names_and_primitives():
    assert {"simple", "fast", "cuda"} <= set(backends.names())
    b = backends.get("simple")
    for primitive in ("map", "zip", "reduce", "matrix_multiply"):
        assert _documented(getattr(b, primitive))
