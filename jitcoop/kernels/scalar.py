"""Scalar helpers for generated code: the integer and float operations whose SPIR-V meaning differs
from Python's or numba's (truncating division, shifts, saturating conversions, bit tricks).

Where SPIR-V leaves a result undefined, these pick one answer and document it
(docs/guide/numerics.md): x / 0 is all ones (-1 when signed), x % 0 and x mod 0 are x, INT_MIN / -1 is INT_MIN,
shift counts are taken modulo the bit width, float -> int conversions saturate and NaN gives 0.
"""
from __future__ import annotations


import numpy as np
from numba import njit, types
from numba.extending import intrinsic

_opts = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_opts)
def bitreverse(x, width):
    x = np.uint64(x)
    r = np.uint64(0)
    for i in range(width):
        r = (r << np.uint64(1)) | ((x >> np.uint64(i)) & np.uint64(1))
    return r


@njit(**_opts)
def in_ranges(tab, p, n):
    """Is [p, p+n) inside one of the sorted, disjoint [start, end) rows of tab?"""
    start, size = range_of(tab, p)
    return size > 0 and p + n <= start + size


@njit(**_opts)
def range_of(tab, p):
    """(start, size) of the row of the sorted, disjoint range table holding address p, or (0, 0)."""
    lo = 0
    hi = tab.shape[0] - 1
    while lo <= hi:
        mid = (lo + hi) >> 1
        if tab[mid, 0] <= p:
            lo = mid + 1
        else:
            hi = mid - 1
    if hi < 0 or p >= tab[hi, 1]:
        return np.int64(0), np.int64(0)
    return np.int64(tab[hi, 0]), np.int64(tab[hi, 1] - tab[hi, 0])


@njit(**_opts)
def smoothstep(e0, e1, x):
    t = min(max((x - e0) / (e1 - e0), 0.0), 1.0)
    return t * t * (3.0 - 2.0 * t)


@njit(**_opts)
def pack_unorm4x8(a, b, c, d):
    r = np.uint32(0)
    i = 0
    for v in (a, b, c, d):
        q = np.uint32(np.rint(min(max(np.float64(v), 0.0), 1.0) * 255.0)) & np.uint32(0xFF)   # a NaN must not spill into other bytes
        r |= q << np.uint32(8 * i)
        i += 1
    return r


@njit(**_opts)
def pack_snorm4x8(a, b, c, d):
    r = np.uint32(0)
    i = 0
    for v in (a, b, c, d):
        q = np.uint32(np.uint8(np.int8(np.rint(min(max(np.float64(v), -1.0), 1.0) * 127.0))))
        r |= q << np.uint32(8 * i)
        i += 1
    return r


@njit(**_opts)
def pack_unorm2x16(a, b):
    qa = np.uint32(np.rint(min(max(np.float64(a), 0.0), 1.0) * 65535.0)) & np.uint32(0xFFFF)
    qb = np.uint32(np.rint(min(max(np.float64(b), 0.0), 1.0) * 65535.0)) & np.uint32(0xFFFF)
    return qa | (qb << np.uint32(16))


@njit(**_opts)
def pack_snorm2x16(a, b):
    qa = np.uint32(np.uint16(np.int16(np.rint(min(max(np.float64(a), -1.0), 1.0) * 32767.0))))
    qb = np.uint32(np.uint16(np.int16(np.rint(min(max(np.float64(b), -1.0), 1.0) * 32767.0))))
    return qa | (qb << np.uint32(16))


@intrinsic
def out_of_line(typingctx):
    """Keep the function that calls this out of its callers (LLVM `noinline`). For the heavy
    collective kernels: inlined into a generated kernel they compete for registers with the
    lane code around them (measured: the GEMM's MulAdd, inlined once the kernel's lane code
    shrank, made the whole kernel 5% slower)."""
    def codegen(context, builder, sig, args):
        builder.function.attributes.add("noinline")
        return context.get_dummy_value()
    return types.none(), codegen


