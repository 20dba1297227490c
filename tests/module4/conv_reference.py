"""Plain numpy references for module 4's convolutions and pools: direct loops over output
positions, written from the definitions (no unfold, no matrix product), so that they share no
idea with the code they check."""

import itertools

import numpy as np


def pad(x: np.ndarray, padding: tuple, value: float = 0.0) -> np.ndarray:
    """x (N, C, *sizes) with ``padding[d]`` values on both sides of spatial dimension d."""
    return np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding], constant_values=value)


def out_sizes(sizes, kernel, stride, padding) -> tuple:
    return tuple((n + 2 * p - k) // s + 1 for n, k, s, p in zip(sizes, kernel, stride, padding, strict=True))


def window(xp: np.ndarray, position: tuple, kernel: tuple, stride: tuple) -> np.ndarray:
    """The window of padded xp (N, C, *sizes) at output ``position``: (N, C, *kernel)."""
    index = tuple(slice(q * s, q * s + k) for q, k, s in zip(position, kernel, stride, strict=True))
    return xp[(slice(None), slice(None)) + index]


def conv(x, w, b=None, stride=1, padding=0) -> np.ndarray:
    """Convolution (cross-correlation) of x (N, C, *sizes) with w (O, C, *kernel), plus b (O,)."""
    spatial = x.ndim - 2
    stride = (stride,) * spatial if np.isscalar(stride) else tuple(stride)
    padding = (padding,) * spatial if np.isscalar(padding) else tuple(padding)
    kernel = w.shape[2:]
    xp = pad(x, padding)
    sizes = out_sizes(x.shape[2:], kernel, stride, padding)
    out = np.zeros((x.shape[0], w.shape[0]) + sizes)
    for position in itertools.product(*map(range, sizes)):
        patch = window(xp, position, kernel, stride)  # (N, C, *kernel)
        for o in range(w.shape[0]):
            out[(slice(None), o) + position] = (patch * w[o]).reshape(x.shape[0], -1).sum(1)
    if b is not None:
        out += b.reshape((1, -1) + (1,) * spatial)
    return out


def pool(x, kernel, stride=None, padding=0, kind="max") -> np.ndarray:
    """max or avg pooling of x (N, C, H, W); padding is -inf for max, 0 (counted) for avg."""
    kernel = (kernel, kernel) if np.isscalar(kernel) else tuple(kernel)
    stride = kernel if stride is None else ((stride, stride) if np.isscalar(stride) else tuple(stride))
    padding = (padding, padding) if np.isscalar(padding) else tuple(padding)
    xp = pad(x, padding, -np.inf if kind == "max" else 0.0)
    sizes = out_sizes(x.shape[2:], kernel, stride, padding)
    out = np.zeros(x.shape[:2] + sizes)
    for position in itertools.product(*map(range, sizes)):
        patch = window(xp, position, kernel, stride).reshape(x.shape[0], x.shape[1], -1)
        out[(slice(None), slice(None)) + position] = patch.max(-1) if kind == "max" else patch.mean(-1)
    return out


def unfold(x, kernel, stride, padding) -> np.ndarray:
    """The windows of x (N, C, *sizes) as columns (N, C * K, L), as torch.nn.functional.unfold."""
    xp = pad(x, padding)
    sizes = out_sizes(x.shape[2:], kernel, stride, padding)
    columns = [window(xp, q, kernel, stride).reshape(x.shape[0], -1) for q in itertools.product(*map(range, sizes))]
    return np.stack(columns, axis=-1)


def fold(cols, output_size, kernel, stride, padding) -> np.ndarray:
    """Columns (N, C * K, L) added onto their windows of an (N, C, *output_size) array (fold)."""
    n, rows, _ = cols.shape
    c = rows // int(np.prod(kernel))
    xp = np.zeros((n, c) + tuple(s + 2 * p for s, p in zip(output_size, padding, strict=True)))
    sizes = out_sizes(output_size, kernel, stride, padding)
    for column, q in enumerate(itertools.product(*map(range, sizes))):
        window(xp, q, kernel, stride)[...] += cols[:, :, column].reshape((n, c) + tuple(kernel))
    inner = tuple(slice(p, p + s) for p, s in zip(padding, output_size, strict=True))
    return xp[(slice(None), slice(None)) + inner]


def permuted(a: np.ndarray, backend, requires_grad=False):
    """A torchlight tensor with a's values whose strides are not row-major (a permuted view)."""
    import torchlight

    order = tuple(range(a.ndim))[::-1]
    t = torchlight.tensor(np.ascontiguousarray(a.transpose(order)), backend=backend)
    t = t.permute(*order)
    assert not t.is_contiguous() or a.ndim < 2
    return t.requires_grad_(requires_grad) if requires_grad else t
