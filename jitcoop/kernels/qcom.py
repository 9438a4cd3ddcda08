"""SPV_QCOM_cooperative_matrix_conversion kernels, run by the workgroup scheduler for the lanes of
the subgroups waiting at an OpCompositeConstructCoopMatQCOM or OpCompositeExtractCoopMatQCOM.

A matrix is a set of *lines*: its rows (MatrixA, accumulator) or its columns (MatrixB). Line i of
a subgroup's matrix is the array of the invocation with SubgroupLocalInvocationId i. Per-lane
arrays live in spill slots: element j of lane l's array is `S[idx[j], l]` (`idx` lists the slot
rows of the array's leaves, which need not be consecutive). Matrices pass through dense row-major
copies `dense[instance, rows * cols]` of the fragment's own dtype (never float64: the
conversions only move bits), and `jitcoop.kernels.coopmat.scatter` / `gather_src` move them
between the dense copy and the fragments through the lane layout.

The packed forms put element j of a line in bits [w * (j % p), w * (j % p) + w) of uint32 word
j // p (w the element width, p = 32 // w): lower-numbered elements in lower-order bits, as
OpBitcast orders the components of differing vector sizes.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

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


def _element_of_bits(bits, width, signed, dense):
    """A packed element's `width` bits as an element of `dense`: integers sign-extended when
    signed, float16 through f16_to_f32 (NaN payloads kept), float32 bit for bit."""


@overload(_element_of_bits)
def _element_of_bits_impl(bits, width, signed, dense):
    if isinstance(dense.dtype, types.Float):
        def impl(bits, width, signed, dense):
            return f16_to_f32(bits) if width == 16 else bits_f32(bits)
    else:
        def impl(bits, width, signed, dense):
            if signed and (bits >> (width - 1)) & 1:
                return bits - (np.int64(1) << width)
            return bits
    return impl


def _bits_of_element(x, width):
    """The `width` low bits an element packs into (float16 NaN payloads kept)."""


@overload(_bits_of_element)
def _bits_of_element_impl(x, width):
    if isinstance(x, types.Float):
        def impl(x, width):
            return np.int64(f16_bits(x)) if width == 16 else np.int64(f32_bits(x))
    else:
        def impl(x, width):
            return np.int64(x) & ((np.int64(1) << width) - 1)
    return impl


@njit(**_opts)
def unpack(state, wait, inv, S, idx, rows, cols, by_col, width, signed, dense):
    """Lines from packed uint32 arrays, into elements of `width` bits (integer or float, as
    `dense` is)."""
    W = state.shape[0]
    per = 32 // width
    mask = (np.int64(1) << width) - 1
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for r in range(rows):
            for c in range(cols):
                line, j = (c, r) if by_col else (r, c)
                w = np.int64(S[idx[j // per], base + line])
                d[r * cols + c] = _element_of_bits((w >> (width * (j % per))) & mask, width, signed, dense)


# -- extract: fragments -> dense -> per-lane arrays ------------------------------------------------
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
def pack(state, wait, inv, dense, rows, cols, by_col, width, S, idx):
    """Lane base + i gets line i packed into uint32 words (S is a uint32 slot array); lanes past
    the last line get zeros."""
    W = state.shape[0]
    per = 32 // width
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
                        acc |= _bits_of_element(x, width) << (width * s)
                S[idx[k], base + i] = np.uint32(acc)
