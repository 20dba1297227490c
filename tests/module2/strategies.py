"""hypothesis strategies for module 2: small shapes, values, strided layouts and broadcast pairs.

Sizes stay small: the simple backend is pure Python, and gradcheck evaluates every op once per
input element.
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from torchlight import Tensor
from torchlight.tensor_data import TensorData

LAYOUTS = ["contiguous", "permuted", "strided"]


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=3):
    """Tensor shapes with up to ``max_dims`` dimensions of sizes ``min_side..max_side``."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def floats(low=-3.0, high=3.0, away_from=None, gap=0.1):
    """Finite floats in [low, high], optionally at least ``gap`` away from ``away_from`` (a kink)."""
    s = st.floats(low, high, allow_nan=False, allow_infinity=False)
    if away_from is not None:
        s = s.filter(lambda x: abs(x - away_from) > gap)
    return s


def arrays(shape, elements=None, unique=False):
    """float64 numpy arrays of ``shape``; with ``unique``, values at least 0.1 apart (in a drawn order),
    so that a maximum stays the maximum under the small nudges of central differences."""
    if unique:
        n = int(np.prod(shape))
        return st.tuples(st.permutations(range(n)), floats(-1.0, 1.0)).map(
            lambda p: (np.array(p[0], dtype=np.float64) * 0.3 + p[1] - 0.15 * n).reshape(shape)
        )
    return hnp.arrays(np.float64, shape, elements=floats() if elements is None else elements)


def broadcast_shapes(min_dims=1, max_dims=3, max_side=3):
    """A pair of shapes that broadcast together (one may have fewer dims, or 1s where the other has n)."""

    @st.composite
    def pair(draw):
        out = draw(shapes(min_dims=min_dims, max_dims=max_dims, max_side=max_side))
        result = []
        for _ in range(2):
            keep = draw(st.integers(0, len(out)))
            tail = out[len(out) - keep :]
            result.append(tuple(1 if draw(st.booleans()) else n for n in tail))
        return tuple(result)

    return pair()


def layout_of(values: np.ndarray, layout: str, rng_order=None) -> TensorData:
    """A TensorData holding ``values`` laid out in storage as ``layout`` says.

    "contiguous": row-major. "permuted": stored in another dimension order (``rng_order``) and
    viewed back through permuted strides. "strided": every other element of a larger storage,
    starting at an offset.
    """
    shape = values.shape
    if layout == "contiguous" or not shape:
        return TensorData(values.reshape(-1).copy(), shape)
    if layout == "permuted":
        order = list(rng_order) if rng_order is not None else list(reversed(range(len(shape))))
        stored = np.ascontiguousarray(values.transpose(order))
        inverse = np.argsort(order).tolist()
        return TensorData(stored.reshape(-1), stored.shape).permute(*inverse)
    if layout == "strided":
        big = np.full([2 * n + 1 for n in shape], np.nan)  # nan: reading a gap would show
        big[tuple(slice(1, None, 2) for _ in shape)] = values
        return TensorData(big.reshape(-1), big.shape).getitem(tuple(slice(1, None, 2) for _ in shape))
    raise ValueError(layout)


@st.composite
def tensors(draw, backend, shape=None, elements=None, unique=False, requires_grad=False, layouts=LAYOUTS):
    """(tensor, values): a leaf Tensor in a drawn layout, and the numpy array of its values."""
    shape = draw(shapes()) if shape is None else shape
    values = draw(arrays(shape, elements, unique))
    layout = draw(st.sampled_from(layouts))
    order = draw(st.permutations(range(len(shape)))) if shape else None
    t = Tensor(layout_of(values, layout, order), backend).requires_grad_(requires_grad)
    return t, values
