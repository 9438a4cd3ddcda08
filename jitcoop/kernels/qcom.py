"""SPV_QCOM_cooperative_matrix_conversion kernels, run by the workgroup scheduler for the lanes of
the subgroups waiting at an OpCompositeConstructCoopMatQCOM or OpCompositeExtractCoopMatQCOM.

A matrix is a set of *lines*: its rows (MatrixA, accumulator) or its columns (MatrixB). Line i of
a subgroup's matrix is the array of the invocation with SubgroupLocalInvocationId i. Per-lane
arrays live in spill slots: element j of lane l's array is `S[idx[j], l]` (`idx` lists the slot
rows of the array's leaves, which need not be consecutive). Matrices pass through dense row-major
copies `dense[instance, rows * cols]` of the fragment's own dtype (never float64: the
conversions only move bits), and `jitcoop.kernels.coopmat.scatter` / `gather_raw` here move them
between the dense copy and the fragments through the lane layout.

The packed forms put element j of a line in bits [w * (j % p), w * (j % p) + w) of uint32 word
j // p (w the element width, p = 32 // w): lower-numbered elements in lower-order bits, as
OpBitcast orders the components of differing vector sizes.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .formats import bits_f32, f16_to_f32, f32_bits, f32_to_f16

_opts = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)


@njit(**_opts)
def f16_bits(x):
    """The float16 bits of a float32 holding a float16 value, NaN payloads kept (f32_to_f16
    would make every NaN the quiet 0x7E00): the exact inverse of f16_to_f32, so a uint32 ->
    float16 -> uint32 trip is bit-exact."""
    b = np.int64(f32_bits(x))
    if (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF) != 0:
        m = (b >> 13) & 0x3FF
        if m == 0:
            m = 0x200            # payload only below float16's mantissa: a quiet NaN
        return np.uint16(((b >> 16) & 0x8000) | 0x7C00 | m)
    return f32_to_f16(x)


# -- construct: per-lane arrays -> dense ------------------------------------------------------------
@njit(**_opts)
def lines_to_dense(state, wait, inv, S, idx, rows, cols, by_col, dense):
    """Line i of each waiting instance's matrix is lane base + i's array (same element type)."""
    W = state.shape[0]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for r in range(rows):
            for c in range(cols):
                if by_col:
                    d[r * cols + c] = S[idx[r], base + c]
                else:
                    d[r * cols + c] = S[idx[c], base + r]


@njit(**_opts)
def unpack_int(state, wait, inv, S, idx, rows, cols, by_col, width, signed, dense):
    """Lines from packed uint32 arrays, into integer elements of `width` bits."""
    W = state.shape[0]
    per = 32 // width
    mask = (np.int64(1) << width) - 1
    top = np.int64(1) << (width - 1)
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for r in range(rows):
            for c in range(cols):
                line, j = (c, r) if by_col else (r, c)
                w = np.int64(S[idx[j // per], base + line])
                v = (w >> (width * (j % per))) & mask
                if signed and (v & top) != 0:
                    v -= mask + 1
                d[r * cols + c] = v


@njit(**_opts)
def unpack_float(state, wait, inv, S, idx, rows, cols, by_col, width, dense):
    """Lines from packed uint32 arrays, into float16 (held as float32) or float32 elements."""
    W = state.shape[0]
    per = 32 // width
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for r in range(rows):
            for c in range(cols):
                line, j = (c, r) if by_col else (r, c)
                w = np.int64(S[idx[j // per], base + line])
                if width == 16:
                    d[r * cols + c] = f16_to_f32((w >> (16 * (j % per))) & 0xFFFF)
                else:
                    d[r * cols + c] = bits_f32(w)


# -- extract: fragments -> dense -> per-lane arrays ------------------------------------------------
@njit(**_opts)
def gather_raw(state, wait, inv, frag, tab, dense):
    """Fragments -> dense matrices of the fragment's own dtype (bits kept). A replicated element
    comes from the highest invocation holding it, like coopmat.gather_f."""
    W = state.shape[0]
    L = tab.shape[1]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for l in range(inv):
            for e in range(L):
                d[tab[l, e]] = frag[e, base + l]


@njit(**_opts)
def dense_to_lines(state, wait, inv, dense, rows, cols, by_col, S, idx):
    """Lane base + i gets line i (same element type); lanes past the last line get zeros (the
    SPIR-V text gives them an OpUndef value; jitcoop's OpUndef is zero)."""
    W = state.shape[0]
    n = len(idx)
    lines = cols if by_col else rows
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for i in range(inv):
            for j in range(n):
                if i >= lines:
                    S[idx[j], base + i] = 0
                elif by_col:
                    S[idx[j], base + i] = d[j * cols + i]
                else:
                    S[idx[j], base + i] = d[i * cols + j]


@njit(**_opts)
def _bits_f(x, width):
    if width == 16:
        return np.int64(f16_bits(x))
    return np.int64(f32_bits(x))


@njit(**_opts)
def pack_int(state, wait, inv, dense, rows, cols, by_col, width, S, idx):
    """Lane base + i gets line i packed into uint32 words (S is a uint32 slot array); lanes past
    the last line get zeros."""
    W = state.shape[0]
    per = 32 // width
    mask = (np.int64(1) << width) - 1
    lines = cols if by_col else rows
    n = len(idx)
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for i in range(inv):
            for k in range(n):
                acc = np.int64(0)
                if i < lines:
                    for s in range(per):
                        j = k * per + s
                        x = d[j * cols + i] if by_col else d[i * cols + j]
                        acc |= (np.int64(x) & mask) << (width * s)
                S[idx[k], base + i] = np.uint32(acc)


@njit(**_opts)
def pack_float(state, wait, inv, dense, rows, cols, by_col, width, S, idx):
    """pack_int for float16 (held as float32, NaN payloads kept) and float32 elements."""
    W = state.shape[0]
    per = 32 // width
    mask = (np.int64(1) << width) - 1
    lines = cols if by_col else rows
    n = len(idx)
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for i in range(inv):
            for k in range(n):
                acc = np.int64(0)
                if i < lines:
                    for s in range(per):
                        j = k * per + s
                        x = d[j * cols + i] if by_col else d[i * cols + j]
                        acc |= (_bits_f(x, width) & mask) << (width * s)
                S[idx[k], base + i] = np.uint32(acc)
