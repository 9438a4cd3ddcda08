"""The numbers the code generator and the kernel library agree on, and the pure-Python helpers
that derive a kernel's static description from a lane layout. Nothing here imports numba: the code
generator reads it, and a kernel loaded from the disk cache never needs numba."""
from __future__ import annotations

import numpy as np

# -- cooperative matrices (jitcoop.kernels.coopmat) ------------------------------------------------

# Element formats in memory and result rounding modes.
F32, F64, F16, BF16, E4M3, E5M2, S8, U8, S16, U16, S32, U32, S64, U64 = range(14)
# Numerics of MulAdd
EXACT, NVIDIA, FLOAT32 = 0, 1, 2


def source_table(tab) -> np.ndarray:
    """int32 [2, rows * cols]: (e, lane) each dense element is read from (the highest lane, then
    the highest e, holding it: the last write of a walk over lanes and elements)."""
    inv, L = tab.shape
    n = int(tab.max()) + 1
    src = np.full((2, n), -1, np.int32)
    # the walk's last write of each element is its last occurrence in the table's row-major
    # order (lane-major, then e): the first in the reversed order
    flat = np.asarray(tab, np.int64).ravel()[::-1]
    elems, first = np.unique(flat, return_index=True)
    pos = flat.size - 1 - first
    src[0, elems] = pos % L
    src[1, elems] = pos // L
    return src


def is_striped(tab, n) -> bool:
    """Whether a layout table is the plain striped one (e * inv + lane) covering n elements once."""
    inv, L = tab.shape
    return inv * L == n and bool((tab == np.arange(L)[None, :] * inv + np.arange(inv)[:, None]).all())


# -- MulAdd operand placements (jitcoop.codegen.matmul generates the MulAdd from them) -----------
# Where an operand lies (its Operand: kind, p, s1, s0, signed, table offset, work offset):
#   DENSE    a row-major matrix [instances, rows * cols]: element (i, j) at q * rows * cols +
#            i * cols + j (p = 1, s1 = cols).
#   STRIPED  a fragment block [length, W] of a striped layout (linear index e * inv + lane) whose
#            rows each lie in one fragment row: element (i, j) at base + (i // p) * s1 +
#            (i % p) * s0 + j with p = inv // cols, s1 = W, s0 = cols.
#   TABLE    a fragment block of any layout, through int32 tables in `tabs` from the table
#            offset: read operands have one flat offset (e * W + lane, from base) per element,
#            the copy read_table chooses; the result has `p` (fragment offset, element) pairs,
#            every (e, lane) of the layout (write_table), stored after the product is done.
#   NONE     C only: no C (R = A x B).
# Operands that are not DENSE/STRIPED in the compute type are first copied, converted, into
# `work` (from the work offset) as dense matrices: conversions happen once per element. Loads
# convert to the compute type (integers sign- or zero-extended as the operand's Signed flag says),
# the result is converted to R's type on the store (float64 -> float32: the one rounding, to
# nearest even).

C_F64, C_F32, C_I64 = 0, 1, 2
DENSE, STRIPED, TABLE, NONE = 0, 1, 2, 3


def read_table(tab, W) -> np.ndarray:
    """int32 [rows * cols]: the flat fragment offset e * W + lane each element is read from (the
    copy of the highest invocation holding it, as `source_table`)."""
    src = source_table(tab)
    return (src[0].astype(np.int64) * W + src[1]).astype(np.int32)


def write_table(tab, W) -> np.ndarray:
    """int32 [2, length * inv]: (flat fragment offset e * W + lane, element) for every position
    of the layout, e-major (consecutive lanes are consecutive addresses)."""
    inv, L = tab.shape
    e, l = np.meshgrid(np.arange(L), np.arange(inv), indexing="ij")
    return np.stack([(e * W + l).ravel(), tab.T.ravel()]).astype(np.int32)


def operand(kind, rows, cols, inv=0, W=0, signed=False, toff=0, woff=0, count=0):
    """The placement tuple of one operand (see above)."""
    if kind == DENSE:
        return (DENSE, 1, cols, 0, int(signed), 0, woff)
    if kind == STRIPED:
        assert inv % cols == 0
        return (STRIPED, inv // cols, W, cols, int(signed), 0, woff)
    if kind == TABLE:
        return (TABLE, count, 0, 0, int(signed), toff, woff)
    return (NONE, 0, 0, 0, 0, 0, 0)


def mm_spec(M, N, K, ctype, fused, a, b, c, r, combine=None) -> str:
    """The compile-time description `_mm` is specialized on (a string literal). combine:
    (result width, result signed, saturate) for an integer MulAdd finished in the kernel: the
    products (no C) are summed exactly, then R = C + sum (C read as integers, sign- or
    zero-extended), wrapped to R's width, or clamped to its range (widths below 64)."""
    v = [M, N, K, ctype, int(fused), *a, *b, *c, *r]
    if combine is not None:
        v += [combine[0], int(combine[1]), int(combine[2])]
    return " ".join(map(str, v))


def run_length(tab, rows, cols, col_major) -> int:
    """For a row-major load into the striped layout (linear element k = e * inv + lane): the
    length of the stretches that are contiguous both in memory and in one fragment row (a whole
    row when rows pack into fragment rows, a fragment row when rows span several); 0 when the
    layout is another or the memory is column major."""
    inv = tab.shape[0]
    if col_major or not is_striped(tab, rows * cols):
        return 0
    if inv % cols == 0:
        return cols
    if cols % inv == 0:
        return inv
    return 0


# -- subgroup operations (jitcoop.codegen.subgroup_ops) --------------------------------------------

# Combining operations (OpGroupNonUniform<op>)
IADD, IMUL, SMIN, UMIN, FMIN, SMAX, UMAX, FMAX, AND, OR, XOR, FADD, FMUL, LAND, LOR, LXOR = range(16)
# Group operations
REDUCE, INCLUSIVE, EXCLUSIVE, CLUSTERED = 0, 1, 2, 3
# Float rounding of results: 0 none (float32/64 arithmetic), 1 float16, 2 bfloat16
ROUND_NONE, ROUND_F16, ROUND_BF16 = 0, 1, 2

# Where a gathering operation reads from, relative to the lane's index i in its subgroup.
BROADCAST, SHUFFLE, SHUFFLE_XOR, SHUFFLE_UP, SHUFFLE_DOWN, QUAD_BROADCAST, QUAD_SWAP, FIRST = range(8)

VOTE_ALL, VOTE_ANY, VOTE_EQUAL = 0, 1, 2


# -- tensor addressing (jitcoop.kernels.tensor) ---------------------------------------------------

# Clamp modes
UNDEFINED, CONSTANT, CLAMP_TO_EDGE, REPEAT, REPEAT_MIRRORED = range(5)
# tensor.plan_lines's answers: how generated code moves an instance (codegen/matrix_loads.py)
LINES_NONE, LINES_ROWS, LINES_COLUMNS = 0, 1, 2
# What `address` found for an element. OK: an index; SKIP: outside the view's clip region (a load
# keeps the Object's element, a store writes nothing); CLAMPED: rejected by Constant clamping (a
# load gets the clamp value, a store writes nothing); the rest are errors of the shader, with
# info[0] = the dimension and info[1] = the coordinate or value at fault.
(OK, SKIP, CLAMPED, UNDEF, ZERO_SPAN, ZERO_DIM, ZERO_BLOCK, BLOCK_STORE, OUT_OF_BOUNDS, MISALIGNED,
 VECTOR_BLOCK, DECODE_MISMATCH) = range(12)
# Rules the extension states and hardware does not enforce run as the hardware runs them unless
# the kernel is strict (jitcoop.diagnostics). The clamp-mode operand of a tensor kernel then says
# so: UNCLAMPED stands for Undefined (a coordinate outside the tensor is addressed as it is: the
# status PAST, then OK once noted), and the flag RUN_MISALIGNED lets a Pointer that is not 16-byte
# aligned be used as it is. What ran is noted in info[NOTE..] (the rule's status, dimension,
# coordinate or byte offset, the instance's first lane, the element) for the generated code to
# report; the generated code clears info[NOTE] before each call.
UNCLAMPED = 5
CLAMP_MASK = 7
RUN_MISALIGNED = 8
PAST = 12
NOTE, NOTE_F, NOTE_G, NOTE_LANE, NOTE_ELEMENT, NOTE_BASE = 8, 9, 10, 11, 12, 13     # NOTE_BASE: the instance at work
INFO_WORDS = 16

BLOCK, DIM, STRIDE, OFFSET, SPAN = range(5)

# Columns of the per-row and per-column tables of a separable plan; what `element` says when
# `address` must decide
P_SKIP, P_ST, P_PART, P_BC, P_CIB = range(5)
UNPLANNED = -1


# -- cooperative vectors (jitcoop.kernels.coopvec) ------------------------------------------------

# Interpretations (SPIR-V Component Type, renumbered)
I_F16, I_F32, I_F64, I_S8, I_S16, I_S32, I_S64, I_U8, I_U16, I_U32, I_U64, I_S8P, I_U8P, \
    I_E4M3, I_E5M2 = range(15)
SPIRV_COMPONENT_TYPES = {0: I_F16, 1: I_F32, 2: I_F64, 3: I_S8, 4: I_S16, 5: I_S32, 6: I_S64,
                         7: I_U8, 8: I_U16, 9: I_U32, 10: I_U64, 1000491000: I_S8P,
                         1000491001: I_U8P, 1000491002: I_E4M3, 1000491003: I_E5M2}
INTERP_NAMES = ("f16", "f32", "f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
                "s8packed", "u8packed", "e4m3", "e5m2")
SIZES = (2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 1, 1, 1)
# Kinds of a vector's components: 0 float, 1 signed integer, 2 unsigned integer
K_FLOAT, K_SINT, K_UINT = 0, 1, 2
# Config array of a MatrixMul site (one int64 array per site, built by the generator)
C_IN_KIND, C_IN_I, C_MAT_I, C_BIAS_I, C_M, C_K, C_LAYOUT, C_TRANS, C_HAS_BIAS, C_RES_KIND, \
    C_RES_I, C_NVIDIA, C_PROF, C_INT_PATH, C_IN_BITS = range(15)
C_LEN = 15


def is_int(i):
    return I_S8 <= i <= I_U8P


def is_float(i):
    return not is_int(i)
