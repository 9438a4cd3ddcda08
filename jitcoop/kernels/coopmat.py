"""Cooperative matrix kernels, run by the workgroup scheduler for the lanes waiting at one
cooperative instruction.

Every invocation holds its fragment of a matrix in spill slots, an array `frag[length, W]` (element
e of lane l is frag[e, l]). A scope instance is `inv` consecutive lanes (a subgroup, or the whole
workgroup); the device profile's lane layout `tab[inv, length]` gives the linear index
row * cols + col each (lane, e) holds. Whole-matrix work goes through dense row-major copies:

    gather   fragments -> dense[instance, rows * cols] (float64, or int64 sign/zero-extended)
    mma      dense A, B, C -> dense result, rounded or wrapped/saturated to the result type
    scatter  dense -> fragments of the result layout (replicas included)
    load / store   memory <-> fragments directly, element by element through the layout

Kernels take the lane `state` array and the `wait` code of the lanes taking part, like the
subgroup kernels, and touch only instances whose lanes wait there. Keeping the dtype-generic work
in a few small kernels (compiled once per fragment dtype and cached) keeps the generated code to a
handful of calls per instruction.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .formats import (bf16_to_f32, bits_f32, e4m3_to_f32, e5m2_to_f32, f16_to_f32, f32_bits,
                      f32_to_bf16, f32_to_e4m3, f32_to_e5m2, f32_to_f16, f64_to_bf16, f64_to_e4m3,
                      f64_to_e5m2, round_f16_64)
from .memory import (ld_f32, ld_f64, ld_i8, ld_i16, ld_i32, ld_i64, ld_u8, ld_u16, ld_u32, st_f32,
                     st_f64, st_i64, st_u8, st_u16, st_u32)
from .scalar import in_ranges

_opts = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)

# Element formats in memory and result rounding modes.
F32, F64, F16, BF16, E4M3, E5M2, S8, U8, S16, U16, S32, U32, S64, U64 = range(14)
# Numerics of MulAdd
EXACT, NVIDIA = 0, 1


@njit(**_opts)
def check_scope(state, wait, inv):
    """-1 if every scope instance with a lane waiting here has all its lanes waiting here;
    otherwise the first lane of such an instance that is not (it finished or waits elsewhere)."""
    W = state.shape[0]
    for base in range(0, W, inv):
        some = False
        for l in range(base, base + inv):
            if state[l] == wait:
                some = True
                break
        if some:
            for l in range(base, base + inv):
                if state[l] != wait:
                    return l
    return -1


@njit(**_opts)
def check_uniform(state, wait, inv, vals):
    """-1, or the first lane whose operand differs from its instance's first lane (operands of
    cooperative instructions must be dynamically uniform in the scope)."""
    W = state.shape[0]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        for l in range(base + 1, base + inv):
            if vals[l] != vals[base]:
                return l
    return -1


# -- gather / scatter -----------------------------------------------------------------------------

@njit(**_opts)
def gather_f(state, wait, inv, frag, tab, dense):
    """Fragments -> dense float64 matrices, one row of `dense` per scope instance."""
    W = state.shape[0]
    L = tab.shape[1]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for l in range(inv):
            for e in range(L):
                d[tab[l, e]] = np.float64(frag[e, base + l])


@njit(**_opts)
def gather_i(state, wait, inv, frag, tab, dense, width, signed):
    """Fragments -> dense int64 matrices, each value sign- or zero-extended from `width` bits
    (the Matrix*SignedComponents operands decide, not the declared type)."""
    W = state.shape[0]
    L = tab.shape[1]
    mask = np.int64(-1) if width >= 64 else (np.int64(1) << width) - 1
    top = np.int64(0) if width >= 64 else np.int64(1) << (width - 1)
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for l in range(inv):
            for e in range(L):
                v = np.int64(frag[e, base + l]) & mask
                if width < 64 and signed and (v & top) != 0:
                    v -= np.int64(1) << width
                d[tab[l, e]] = v


@njit(**_opts)
def scatter(state, wait, inv, dense, tab, frag):
    """Dense matrices -> fragments (every replica gets its element)."""
    W = state.shape[0]
    L = tab.shape[1]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for l in range(inv):
            for e in range(L):
                frag[e, base + l] = d[tab[l, e]]


# -- rounding -------------------------------------------------------------------------------------

@njit(**_opts)
def round_to(x, mode):
    """A float64 rounded once to the result type (nearest even), as a float64."""
    if mode == F32:
        return np.float64(np.float32(x))
    if mode == F16:
        return np.float64(round_f16_64(x))
    if mode == BF16:
        return np.float64(bf16_to_f32(f64_to_bf16(x)))
    if mode == E4M3:
        return np.float64(e4m3_to_f32(f64_to_e4m3(x, False)))
    if mode == E5M2:
        return np.float64(e5m2_to_f32(f64_to_e5m2(x, False)))
    return x


@njit(**_opts)
def _f32_toward_zero(s):
    f = np.float32(s)
    if np.isfinite(f) and abs(np.float64(f)) > abs(s):
        f = bits_f32(np.int64(f32_bits(f)) - 1)     # one step toward zero (sign-magnitude)
    return np.float64(f)


@njit(**_opts)
def _tc_chunk(acc, a, b, i, k0, k1, j, K, N):
    """The H100 float32 accumulation model for one chunk of K: align the accumulator and the
    exact products to the largest exponent keeping 2 extra bits (truncated), add, and round
    toward zero to float32."""
    m = abs(acc)
    finite = np.isfinite(acc)
    for k in range(k0, k1):
        p = a[i * K + k] * b[k * N + j]
        finite = finite and np.isfinite(p)
        m = max(m, abs(p))
    if not finite:
        s = acc
        for k in range(k0, k1):
            s += a[i * K + k] * b[k * N + j]
        return np.float64(np.float32(s))
    if m == 0.0:
        return acc
    e = math.frexp(m)[1] - 1                  # 2**e <= m < 2**(e+1)
    q = math.ldexp(1.0, e - 25)               # 24 bits of float32 + 2 guard bits
    s = math.trunc(acc / q) * q
    for k in range(k0, k1):
        s += math.trunc(a[i * K + k] * b[k * N + j] / q) * q
    return _f32_toward_zero(s)


# -- multiply-add ---------------------------------------------------------------------------------

@njit(**_opts)
def mma_f(state, wait, inv, da, db, dc, M, N, K, mode, numerics):
    """dc = A x B + C for each waiting instance, in place. EXACT: exact products, float64 sums
    (exact for every input narrower than float64), one rounding to the result type. NVIDIA: the
    H100 models (float16 results rounded once per 16-wide chunk of K; float32 by the truncating
    tensor-core model)."""
    W = state.shape[0]
    acc = np.empty(N, np.float64)
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        q = base // inv
        a = da[q]
        b = db[q]
        c = dc[q]
        for i in range(M):
            if numerics == NVIDIA and (mode == F16 or mode == F32):
                for j in range(N):
                    s = c[i * N + j]
                    for k0 in range(0, K, 16):
                        k1 = min(K, k0 + 16)
                        if mode == F16:
                            t = 0.0
                            for k in range(k0, k1):
                                t += a[i * K + k] * b[k * N + j]
                            s = round_to(s + t, F16)
                        else:
                            s = _tc_chunk(s, a, b, i, k0, k1, j, K, N)
                    c[i * N + j] = s
                continue
            for j in range(N):
                acc[j] = c[i * N + j]
            for k in range(K):
                x = a[i * K + k]
                for j in range(N):
                    acc[j] += x * b[k * N + j]
            for j in range(N):
                c[i * N + j] = round_to(acc[j], mode)


@njit(**_opts)
def mma_i(state, wait, inv, da, db, dc, M, N, K, width, rsigned, saturate):
    """dc = A x B + C with integer arithmetic: products and sums exact modulo 2**64 (so the low
    `width` bits are the exact result's), or, saturating, the sum with C clamped to the result's
    range (signed if MatrixResultSignedComponents)."""
    W = state.shape[0]
    acc = np.empty(N, np.int64)
    if width >= 64:
        hi = np.int64(0x7FFFFFFFFFFFFFFF)
        lo = -hi - 1
    elif rsigned:
        hi = (np.int64(1) << (width - 1)) - 1
        lo = -hi - 1
    else:
        hi = (np.int64(1) << width) - 1
        lo = np.int64(0)
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        q = base // inv
        a = da[q]
        b = db[q]
        c = dc[q]
        for i in range(M):
            for j in range(N):
                acc[j] = 0
            for k in range(K):
                x = a[i * K + k]
                for j in range(N):
                    acc[j] += x * b[k * N + j]
            for j in range(N):
                cv = c[i * N + j]
                d = cv + acc[j]
                if saturate:
                    if width < 64:
                        d = min(max(d, lo), hi)
                    elif rsigned:
                        if cv > 0 and acc[j] > 0 and d < 0:
                            d = hi
                        elif cv < 0 and acc[j] < 0 and d >= 0:
                            d = lo
                    elif np.uint64(d) < np.uint64(cv):       # unsigned 64-bit carry out
                        d = np.int64(-1)
                c[i * N + j] = d


# -- memory ---------------------------------------------------------------------------------------

@njit(**_opts)
def _read(a, fmt):
    """One element of format `fmt` at address a, as float64 (floats) or int64 bits (ints)."""
    if fmt == F32:
        return np.float64(ld_f32(a)), np.int64(0)
    if fmt == F64:
        return ld_f64(a), np.int64(0)
    if fmt == F16:
        return np.float64(f16_to_f32(ld_u16(a))), np.int64(0)
    if fmt == BF16:
        return np.float64(bf16_to_f32(ld_u16(a))), np.int64(0)
    if fmt == E4M3:
        return np.float64(e4m3_to_f32(ld_u8(a))), np.int64(0)
    if fmt == E5M2:
        return np.float64(e5m2_to_f32(ld_u8(a))), np.int64(0)
    if fmt == S8:
        return 0.0, np.int64(ld_i8(a))
    if fmt == U8:
        return 0.0, np.int64(ld_u8(a))
    if fmt == S16:
        return 0.0, np.int64(ld_i16(a))
    if fmt == U16:
        return 0.0, np.int64(ld_u16(a))
    if fmt == S32:
        return 0.0, np.int64(ld_i32(a))
    if fmt == U32:
        return 0.0, np.int64(ld_u32(a))
    return 0.0, ld_i64(a)


@njit(**_opts)
def _write(a, fmt, f, i):
    if fmt == F32:
        st_f32(a, np.float32(f))
    elif fmt == F64:
        st_f64(a, f)
    elif fmt == F16:
        st_u16(a, f32_to_f16(np.float32(f)))
    elif fmt == BF16:
        st_u16(a, f32_to_bf16(np.float32(f)))
    elif fmt == E4M3:
        st_u8(a, f32_to_e4m3(np.float32(f), False))
    elif fmt == E5M2:
        st_u8(a, f32_to_e5m2(np.float32(f), False))
    elif fmt == S8 or fmt == U8:
        st_u8(a, np.uint8(i & 0xFF))
    elif fmt == S16 or fmt == U16:
        st_u16(a, np.uint16(i & 0xFFFF))
    elif fmt == S32 or fmt == U32:
        st_u32(a, np.uint32(i & 0xFFFFFFFF))
    else:
        st_i64(a, i)


@njit(**_opts)
def _elem_addr(p, k, cols, s, psize, esize, col_major):
    """Address of linear element k = row * cols + col: rows (or columns, column major) start
    Stride pointee elements apart; elements within one are contiguous components."""
    r = k // cols
    c = k - r * cols
    if col_major:
        return p + c * s * psize + r * esize
    return p + r * s * psize + c * esize


@njit(**_opts)
def _span(rows, cols, s, psize, esize, col_major):
    """Bytes from the first element to the end of the last (Stride 0: every row is the first)."""
    major, minor = (cols, rows) if col_major else (rows, cols)
    return (major - 1) * max(s, 0) * psize + minor * esize


@njit(**_opts)
def _span_ok(base, span, lo, hi, ranges):
    if hi > lo:
        return base >= lo and base + span <= hi
    return in_ranges(ranges, base, span)


@njit(**_opts)
def load(state, wait, inv, frag, tab, rows, cols, addr, stride, psize, esize, col_major, fmt,
         lo, hi, ranges, info):
    """OpCooperativeMatrixLoadKHR for each waiting instance: element (r, c) comes from
    addr + r * stride * psize + c * esize (row major; rows and columns swap for column major).
    Returns -1, or the first lane of an instance whose access is out of bounds (info: offset,
    span)."""
    W = state.shape[0]
    L = tab.shape[1]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        p = addr[base]
        s = stride[base]
        span = _span(rows, cols, s, psize, esize, col_major)
        if s < 0 or not _span_ok(p, span, lo, hi, ranges):
            info[0] = p - lo
            info[1] = span
            info[2] = s
            return base
        for l in range(inv):
            for e in range(L):
                f, i = _read(_elem_addr(p, tab[l, e], cols, s, psize, esize, col_major), fmt)
                if fmt <= E5M2:
                    frag[e, base + l] = f
                else:
                    frag[e, base + l] = i
    return -1


@njit(**_opts)
def store(state, wait, inv, frag, tab, rows, cols, addr, stride, psize, esize, col_major, fmt,
          lo, hi, ranges, info):
    """OpCooperativeMatrixStoreKHR: the inverse of `load` (Stride must be positive)."""
    W = state.shape[0]
    L = tab.shape[1]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        p = addr[base]
        s = stride[base]
        span = _span(rows, cols, s, psize, esize, col_major)
        if s <= 0 or not _span_ok(p, span, lo, hi, ranges):
            info[0] = p - lo
            info[1] = span
            info[2] = s
            return base
        for l in range(inv):
            for e in range(L):
                v = frag[e, base + l]
                _write(_elem_addr(p, tab[l, e], cols, s, psize, esize, col_major), fmt,
                       np.float64(v), np.int64(v))
    return -1
