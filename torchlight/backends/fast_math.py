"""Module 3: exp, log, sigmoid and tanh that numba compiles to vector instructions.

A map of ``scalar.exp`` calls the C library's ``exp`` once per element: a function call that
LLVM cannot vectorize, so fast's ``exp`` over a million elements took 2.6 times numpy's time
(numpy and PyTorch evaluate ``exp`` with vector polynomial code, several values per instruction).
The functions here are that kind of code, written with nothing but arithmetic, comparisons and
bit casts: inlined into the map's loop, LLVM computes 4 or 8 elements per instruction.

The fast backend compiles these instead of the ``torchlight.scalar`` functions they stand for
(``STAND_INS``), in its maps only; the scalar functions stay the definition, and the simple backend
(the executable spec) and the cuda backend keep them. Each result is within 1 unit in the last
place (ulp) of the C library's for exp and log, 2 for sigmoid and 3 for tanh, and exactly equal
at the edges (0, +-inf, nan, overflow, underflow): tests/module3/test_fast_math.py measures it,
and docs/backends.md says where fast and simple may therefore differ.

How each works, in short: write x = k ln 2 + r with |r| <= ln 2 / 2 (k an integer); then
e^x = 2^k e^r, where e^r is a polynomial in r and 2^k is built from its bits. For log, the other
way round: x = 2^e m with m in [sqrt(1/2), sqrt(2)), and log x = e ln 2 + log m, log m a series.
Every branch is a choice between two computed values (LLVM turns it into a blend), so the loop
has no jump in it and vectorizes.
"""

import math
import struct

from numba import types
from numba.extending import intrinsic, overload, register_jitable

from .. import scalar

__all__ = ["STAND_INS", "exp", "expm1", "log", "sigmoid", "tanh"]


def _bits(x: float) -> int:
    """The 64 bits of the float x, as a signed integer."""
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _float(bits: int) -> float:
    """The float whose 64 bits are the lowest 64 of ``bits`` (as in compiled code, where ints wrap)."""
    return struct.unpack("<d", struct.pack("<Q", bits & 0xFFFF_FFFF_FFFF_FFFF))[0]


# In compiled code the two are one instruction (or none): the same register, read as the other type.
@intrinsic
def _bitcast_to_int(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return types.int64(types.float64), codegen


@intrinsic
def _bitcast_to_float(typingctx, bits):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return types.float64(types.int64), codegen


@overload(_bits)
def _bits_compiled(x):
    return lambda x: _bitcast_to_int(x)


@overload(_float)
def _float_compiled(bits):
    return lambda bits: _bitcast_to_float(bits)


LOG2_E = 1.4426950408889634
# ln 2 in two parts: LN2_HI has its last 32 bits zero, so k * LN2_HI is exact for the k used here,
# and x - k * LN2_HI loses nothing; LN2_LO is the rest of ln 2.
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
# 1.5 * 2**52: y + SHIFT rounds y to an integer, which then sits in the sum's lowest bits.
SHIFT = 6755399441055744.0
_SHIFT_BITS = 0x4338000000000000  # _bits(SHIFT)

# 1/n! for n = 2..13: the Taylor series of e^r - 1 - r, enough terms for |r| <= ln 2 / 2 that the
# first one left out is below 2**-60.
_E2, _E3, _E4, _E5, _E6, _E7, _E8, _E9, _E10, _E11, _E12, _E13 = (1.0 / math.factorial(n) for n in range(2, 14))


@register_jitable
def _reduce(x):
    """(k, r, k as bits of k + SHIFT): x = k ln 2 + r, k the integer nearest x / ln 2."""
    t = x * LOG2_E + SHIFT
    k = t - SHIFT
    return k, (x - k * LN2_HI) - k * LN2_LO, _bits(t) - _SHIFT_BITS


@register_jitable
def _expm1_r(r):
    """e^r - 1 for |r| <= ln 2 / 2, as r + r^2 q(r): the small correction is added last."""
    q = _E13
    q = q * r + _E12
    q = q * r + _E11
    q = q * r + _E10
    q = q * r + _E9
    q = q * r + _E8
    q = q * r + _E7
    q = q * r + _E6
    q = q * r + _E5
    q = q * r + _E4
    q = q * r + _E3
    q = q * r + _E2
    return r + r * r * q


@register_jitable
def exp(x: float) -> float:
    """e^x, as ``scalar.exp``: inf past the float range, 0.0 below it, nan for nan."""
    xc = min(max(x, -746.0), 710.0)  # beyond these e^x is 0 or inf anyway; k stays small
    _, r, k = _reduce(xc)
    # 2^k as two factors: 2^k alone is no float for k = 1024 or k < -1022 (the result still is).
    k1 = k >> 1
    y = (1.0 + _expm1_r(r)) * _float((k1 + 1023) << 52) * _float((k - k1 + 1023) << 52)
    return y if x == x else x


@register_jitable
def expm1(x: float) -> float:
    """e^x - 1, accurate for small x too (where e^x - 1 would cancel)."""
    xc = min(max(x, -746.0), 710.0)
    _, r, k = _reduce(xc)
    k1 = k >> 1
    two_k1, two_k2 = _float((k1 + 1023) << 52), _float((k - k1 + 1023) << 52)
    # 2^k (e^r - 1) + (2^k - 1): for k = 0 that is e^r - 1 itself, computed without cancellation.
    y = _expm1_r(r) * two_k1 * two_k2 + (two_k1 * two_k2 - 1.0)
    return y if x == x else x


# 2 / (2n + 1) for n = 1..11: log m = 2 atanh(s) = 2s + 2s^3/3 + 2s^5/5 + ..., with |s| <= 0.172,
# so that the first term left out is below 2**-60 of the sum.
_L = tuple(2.0 / (2 * n + 1) for n in range(1, 12))
_L1, _L2, _L3, _L4, _L5, _L6, _L7, _L8, _L9, _L10, _L11 = _L
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD  # _bits(sqrt(1/2))
_TINY = 2.2250738585072014e-308  # the smallest normal float
_TWO_54 = 18014398509481984.0


def log(x: float) -> float:
    """Natural log, as ``scalar.log``: -inf at 0, nan below 0 and for nan, inf at inf."""
    subnormal = x < _TINY
    xs = x * _TWO_54 if subnormal else x  # a subnormal x scaled into the normal range
    bits = _bits(xs)
    # m = xs / 2^e in [sqrt(1/2), sqrt(2)): the exponent bits of xs, counted from sqrt(1/2)'s.
    e = (bits - _SQRT_HALF_BITS) >> 52  # (an arithmetic shift: negative for xs below sqrt(1/2))
    m = _float(bits - (e << 52))
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    p = _L11
    p = p * z + _L10
    p = p * z + _L9
    p = p * z + _L8
    p = p * z + _L7
    p = p * z + _L6
    p = p * z + _L5
    p = p * z + _L4
    p = p * z + _L3
    p = p * z + _L2
    p = p * z + _L1
    # log(1 + f) = f - (f^2/2 - s (f^2/2 + R)), R = z p: f is exact and the rest a small correction.
    half_f2 = 0.5 * f * f
    k = e - 54.0 if subnormal else e * 1.0
    y = k * LN2_HI + (f - (half_f2 - (s * (half_f2 + z * p) + k * LN2_LO)))
    y = x if x == math.inf else y
    y = -math.inf if x == 0.0 else y
    return math.nan if (x < 0.0 or x != x) else y


def sigmoid(x: float) -> float:
    """1 / (1 + e^-x), as ``scalar.sigmoid``: the same two forms, by the sign of x."""
    z = exp(-abs(x))
    return 1.0 / (1.0 + z) if x >= 0.0 else z / (1.0 + z)


def tanh(x: float) -> float:
    """Hyperbolic tangent: -expm1(-2|x|) / (2 + expm1(-2|x|)), with x's sign."""
    em = expm1(-2.0 * min(abs(x), 20.0))  # from |x| = 19.07 on tanh(x) rounds to +-1
    t = -em / (2.0 + em)
    return math.copysign(t, x) if x == x else x


# What the fast backend's maps compile in place of which scalar function.
STAND_INS = {scalar.exp: exp, scalar.log: log, scalar.sigmoid: sigmoid, scalar.tanh: tanh}
