"""SPV_NV_tensor_addressing kernels: the address of each matrix element under a tensor layout and
view (the seed's matrixCoordToTensorElement[WithView] pseudo-code), and tensor loads and stores.

A layout or view value reaches a kernel as one column of an int64 array of its leaves (see
jitcoop.spirv.types.TensorLayout / TensorView for the order), taken from the first lane of the
scope instance (the operands are uniform; the rule checks that first). Loads and stores walk the
matrix in row-major order once, into or out of a dense copy, and move it to or from the lane
fragments through the layout table, so replicated elements are read once.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .coopmat import _read, _span_ok, _write, load_row, store_row
from .memory import ld_u8, ld_u16, ld_u32, st_u32
from .scalar import range_of
from .formats import bf16_to_f32, bits_f32, bits_f64, e4m3_to_f32, e5m2_to_f32, f16_to_f32, f16_to_f32_fast, f32_bits
from .codes import (F32, F64, F16, BF16, E4M3, E5M2, UNDEFINED, CONSTANT,
    CLAMP_TO_EDGE, REPEAT, OK, SKIP, CLAMPED, UNDEF, ZERO_SPAN, ZERO_DIM, ZERO_BLOCK, BLOCK_STORE,
    OUT_OF_BOUNDS, MISALIGNED, BLOCK, DIM, STRIDE, OFFSET, SPAN, P_SKIP, P_ST, P_PART, P_BC, P_CIB,
    UNPLANNED, LINES_NONE, LINES_ROWS, LINES_COLUMNS, UNCLAMPED, CLAMP_MASK, RUN_MISALIGNED, PAST, NOTE,
    NOTE_F, NOTE_G, NOTE_LANE, NOTE_ELEMENT, NOTE_BASE)

_opts = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)

@njit(**_opts)
def _udivmod(a, n):
    """a // n and a % n for 0 <= a, n < 2**32 (the spec's uint32 arithmetic): 32-bit division is
    several times faster than 64-bit."""
    q = np.int64(np.uint32(a) // np.uint32(n))
    return q, a - q * n


@njit(**_opts)
def address(r, c, cols, lay, D, view, V, perm, has_dims, mode, store, bc, cib, info):
    """(status, index) of matrix element (r, c): the element index (in units of the component,
    or of the decode function's block) and, in bc/cib, blockCoord and coordInBlock. bc and cib
    have 10 entries: the last 5 of bc are scratch (no allocation per element)."""
    if V > 0:
        ro = view[2 * V]
        rs = view[2 * V + 1]
        co = view[2 * V + 2]
        cs = view[2 * V + 3]
        # 64-bit range tests: offset + 0xFFFFFFFF must not wrap
        if r < ro or r >= ro + rs or c < co or c >= co + cs:
            return SKIP, np.int64(0)
        r -= ro
        c -= co
        width = min(np.int64(cols), cs)
        lin = r * width + c
        vc = bc[5:]
        for d in range(V - 1, -1, -1):
            i = perm[d]
            n = view[i] if has_dims else lay[SPAN * D + i]
            if n == 0:
                info[0] = i
                info[1] = 0
                return ZERO_SPAN, np.int64(0)
            lin, vc[i] = _udivmod(lin, n)
        lin = np.int64(0)
        st = np.int64(1)
        for d in range(V - 1, -1, -1):
            if has_dims:
                lin += vc[d] * view[V + d]
            else:
                lin += vc[d] * st
                st *= lay[SPAN * D + d]
        lin &= 0xFFFFFFFF
    else:
        lin = (np.int64(r) * cols + c) & 0xFFFFFFFF
    sc = cib[5:]
    for d in range(D - 1, -1, -1):
        n = lay[SPAN * D + d]
        if n == 0:
            info[0] = d
            info[1] = 0
            return ZERO_SPAN, np.int64(0)
        lin, sc[d] = _udivmod(lin, n)
    index = np.int64(0)
    for d in range(D):
        st, bc[d], cib[d], part = _dim(sc[d], d, lay, D, mode, store, info)
        if st == PAST:
            note(info, UNDEF, info[0], info[1], r * cols + c)
        elif st != OK:
            return st, np.int64(0)
        index += part
    return OK, index & 0xFFFFFFFF


@njit(**_opts)
def note(info, rule, f, g, k):
    """Note the first rule a call ran as the hardware does (jitcoop.diagnostics): its status,
    the dimension, the coordinate or byte offset, the element, and the first lane of the
    instance at work (info[NOTE_BASE], set by the caller as each instance starts)."""
    if info[NOTE] == 0:
        info[NOTE] = rule
        info[NOTE_F] = f
        info[NOTE_G] = g
        info[NOTE_LANE] = info[NOTE_BASE]
        info[NOTE_ELEMENT] = k


@njit(**_opts)
def _dim(s, d, lay, D, mode, store, info):
    """Dimension d of the seed's loop for span coordinate s: (status, blockCoord, coordInBlock,
    blockCoord x stride); for an error, info[0] = d and info[1] = the coordinate or value at
    fault."""
    st, q, rem, part, bad = _dim_of(s, lay[OFFSET * D + d], lay[DIM * D + d], lay[BLOCK * D + d],
                                    lay[STRIDE * D + d], mode, store)
    if st > CLAMPED:
        info[0] = d
        info[1] = bad
    return st, q, rem, part


@njit(**_opts)
def _dim_of(s, offset, n, b, stride, mode, store):
    """_dim on the dimension's leaves, arrays kept out (numba counts references to every array
    a call takes, and this runs rows + cols times per plan): (status, blockCoord, coordInBlock,
    blockCoord x stride, the coordinate or value at fault)."""
    z = np.int64(0)
    # int32_t c = spanCoord + offset, in 32-bit arithmetic (it wraps like the seed's)
    x = ((s + offset + 0x80000000) & 0xFFFFFFFF) - 0x80000000
    past = False
    bad = z
    if x < 0 or x >= n:
        m = mode
        if store and m != UNDEFINED and m != UNCLAMPED:
            m = CONSTANT
        if m == UNDEFINED:
            return UNDEF, z, z, z, x
        if m == UNCLAMPED:
            # the coordinate as it is (as 32-bit unsigned arithmetic takes it), noted
            past = True
            bad = x
            x = x & 0xFFFFFFFF
        elif m == CONSTANT:
            return CLAMPED, z, z, z, z
        elif n == 0:
            return ZERO_DIM, z, z, z, x
        elif m == CLAMP_TO_EDGE:
            x = min(max(x, z), n - 1)
        elif m == REPEAT:
            x = x % n                     # OpSMod: the sign of the (positive) divisor
        else:
            # RepeatMirrored as SPV_NV_tensor_addressing's table gives it (the coopmat2
            # pseudo-code compares with the loop index `dim` by mistake)
            if n == 1:
                x = z
            else:
                x = x % (2 * n - 2)
                if x >= n:
                    x = 2 * n - 2 - x
    if b == 0:
        return ZERO_BLOCK, z, z, z, z
    if store and b != 1:
        return BLOCK_STORE, z, z, z, b
    if past:
        if b == 1:
            return PAST, x, z, x * stride, bad
        q, rem = _udivmod(x, b)
        return PAST, q, rem, q * stride, bad
    if b == 1:
        return OK, x, z, x * stride, z
    q, rem = _udivmod(x, b)
    return OK, q, rem, q * stride, z


@njit(**_opts)
def _frame(rows, cols, lay, D, view, V, perm, has_dims):
    """How a separable plan maps the matrix onto the layout: (the layout dimension the row
    selects, or -1 when not separable; the clip region's row offset and size, column offset and
    size)."""
    big = np.int64(1) << 40
    z = np.int64(0)
    if D != 2 or lay[SPAN * D] == 0 or lay[SPAN * D + 1] == 0:
        return -1, z, z, z, z
    if V == 0:
        if lay[SPAN * D + 1] != cols:
            return -1, z, z, z, z
        return 0, z, big, z, big
    if V == 2 and not has_dims:
        cs = view[2 * V + 3]
        if lay[SPAN * D + perm[1]] != min(np.int64(cols), cs):
            return -1, z, z, z, z
        if lay[SPAN * D] * lay[SPAN * D + 1] > 0x100000000:
            return -1, z, z, z, z          # the view's linear index would wrap at 32 bits
        return perm[0], view[2 * V], view[2 * V + 1], view[2 * V + 2], cs
    return -1, z, z, z, z


@njit(**_opts)
def plan(rows, cols, lay, D, view, V, perm, has_dims, mode, store, rt, ct):
    """Addressing tables for a whole rows x cols access when every tensor coordinate depends on
    the row alone or on the column alone: 2-D layouts whose span[1] is the matrix width, with no
    view, or a view without dimensions (any permutation, clip) whose fastest dimension spans the
    clipped width. Then `address` of (r, c) is a combination of rt[r] and ct[c] (clip test,
    status of each dimension, blockCoord x stride, blockCoord, coordInBlock: the columns P_*), the
    same dimension-by-dimension computation done rows + cols times instead of rows x cols times.
    Returns the layout dimension the row selects, or -1 (not separable: use `address`)."""
    rdim, ro, rs, co, cs = _frame(rows, cols, lay, D, view, V, perm, has_dims)
    if rdim < 0:
        return -1
    n = lay[SPAN * D + rdim]
    _plan_dim(rt, rows, ro, rs, n, lay, D, rdim, mode, store)
    _plan_dim(ct, cols, co, cs, np.int64(1) << 40, lay, D, 1 - rdim, mode, store)
    return rdim


@njit(**_opts)
def _affine(count, o, size, n, lay, D, d):
    """(ok, start, step) when entry i < count of a plan table on layout dimension d is simply
    element part start + i x step: nothing clipped (o = 0, size >= count), no span wrap (count <=
    n), block size 1, every coordinate offset + i inside the dimension (so no clamping)."""
    z = np.int64(0)
    if o != 0 or size < count or count > n or lay[BLOCK * D + d] != 1:
        return False, z, z
    off = lay[OFFSET * D + d]
    x0 = off - 0x100000000 if off >= 0x80000000 else off        # int32 bits
    if x0 < 0 or x0 + count > lay[DIM * D + d] or x0 + count > 0x80000000:    # int32 coordinates
        return False, z, z
    st = lay[STRIDE * D + d]
    return True, x0 * st, st


@njit(**_opts)
def _plan_dim(t, count, o, size, n, lay, D, d, mode, store):
    """Table t (rows or columns) of a plan: entry i is clip-tested against [o, o + size) and
    takes span coordinate (i - o) mod n of layout dimension d. (An entry at fault keeps its
    status; `address` reports it when an element needs it.)"""
    off = lay[OFFSET * D + d]
    dim = lay[DIM * D + d]
    b = lay[BLOCK * D + d]
    st = lay[STRIDE * D + d]
    for i in range(count):
        t[i, P_SKIP] = i < o or i >= o + size
        s = (i - o) % n if t[i, P_SKIP] == 0 else 0
        t[i, P_ST], t[i, P_BC], t[i, P_CIB], t[i, P_PART], bad = _dim_of(s, off, dim, b, st, mode, store)


@njit(**_opts)
def element(r, c, rdim, rt, ct, bc, cib):
    """`address` of element (r, c) through the plan's tables, or UNPLANNED when there is no plan
    (rdim < 0) or the element is an error (the caller then calls `address`, which fills info with
    the dimension and coordinate at fault). Kept apart from `address`: a call to it in here made
    every call of this function 40 times slower."""
    if rdim < 0:
        return UNPLANNED, np.int64(0)
    if rt[r, P_SKIP] or ct[c, P_SKIP]:
        return SKIP, np.int64(0)
    if rdim == 0:
        st = rt[r, P_ST] if rt[r, P_ST] != OK else ct[c, P_ST]
    else:
        st = ct[c, P_ST] if ct[c, P_ST] != OK else rt[r, P_ST]
    if st > CLAMPED:
        return UNPLANNED, np.int64(0)
    bc[rdim] = rt[r, P_BC]
    cib[rdim] = rt[r, P_CIB]
    bc[1 - rdim] = ct[c, P_BC]
    cib[1 - rdim] = ct[c, P_CIB]
    return st, (rt[r, P_PART] + ct[c, P_PART]) & 0xFFFFFFFF


@njit(**_opts)
def plan_clean(rdim, rows, cols, rt, ct):
    """True when the plan covers every element with status OK (nothing clipped, clamped or at
    fault): then element (r, c) is at index (rt[r, P_PART] + ct[c, P_PART]) & 0xFFFFFFFF and the
    per-element checks of `element` can be skipped."""
    if rdim < 0:
        return False
    for r in range(rows):
        if rt[r, P_SKIP] != 0 or rt[r, P_ST] != OK:
            return False
    for c in range(cols):
        if ct[c, P_SKIP] != 0 or ct[c, P_ST] != OK:
            return False
    return True


@njit(**_opts)
def _lines_contiguous(along, n, across, m):
    """Under a clean plan: whether the element index steps by one along the `along` table's n
    entries (along[i] = along[0] + i), with no 32-bit wrap inside any of the m lines the
    `across` table starts."""
    a0 = along[0, P_PART]
    for i in range(n):
        if along[i, P_PART] != a0 + i:
            return False
    for j in range(m):
        if ((across[j, P_PART] + a0) & 0xFFFFFFFF) + n > 0x100000000:
            return False
    return True


@njit(**_opts)
def rows_contiguous(rdim, rows, cols, rt, ct):
    """True when, under a clean plan, each matrix row is cols consecutive elements in memory
    (the row selects layout dimension 0 and the columns walk dimension 1 with stride 1, no
    32-bit wrap inside a row)."""
    return rdim == 0 and _lines_contiguous(ct, cols, rt, rows)


@njit(**_opts)
def clamp_value(bits, fmt):
    """The element a Constant-clamped load gives: the low bits of the 32-bit clamp value as the
    component type (float, or integer bits)."""
    if fmt == F32:
        return np.float64(bits_f32(bits & 0xFFFFFFFF)), np.int64(bits & 0xFFFFFFFF)
    if fmt == F64:
        return bits_f64(np.uint64(bits & 0xFFFFFFFF)), np.int64(0)
    if fmt == F16:
        return np.float64(f16_to_f32(np.uint16(bits & 0xFFFF))), np.int64(0)
    if fmt == BF16:
        return np.float64(bf16_to_f32(np.uint16(bits & 0xFFFF))), np.int64(0)
    if fmt == E4M3:
        return np.float64(e4m3_to_f32(np.uint8(bits & 0xFF))), np.int64(0)
    if fmt == E5M2:
        return np.float64(e5m2_to_f32(np.uint8(bits & 0xFF))), np.int64(0)
    return 0.0, np.int64(bits & 0xFFFFFFFF)


@njit(**_opts)
def check_layouts(state, wait, inv, vals):
    """-1, or the first lane whose layout/view leaves differ from its instance's first lane."""
    W = state.shape[0]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        # an OR of differences, row by row, vectorizes; the lane is looked for only on failure
        d = np.int64(0)
        for j in range(vals.shape[0]):
            v = vals[j, base]
            for l in range(base + 1, base + inv):
                d |= vals[j, l] ^ v
        if d == 0:
            continue
        for l in range(base + 1, base + inv):
            for j in range(vals.shape[0]):
                if vals[j, l] != vals[j, base]:
                    return l
    return -1


@njit(**_opts)
def _aligned(p, lo, hi):
    return (p - lo) % 16 == 0 if hi > lo else p % 16 == 0


# _begin's answers besides a plan's row dimension (-1 or more)
_MOVED, _MISALIGNED = -2, -3


@njit(**_opts)
def _begin(frag, base, inv, rows, cols, p, lv, D, vv, V, perm, has_dims, mode, store, fmt, esize,
           lo, hi, ranges, info, run, rt, ct):
    """The start of one instance of a tensor load or store: the alignment check (_MISALIGNED,
    with info[1] and info[2] set), the plan, and the whole-row move when the plan allows it
    (_MOVED: the instance is done). Otherwise the plan's row dimension, for the element path.
    `mode` is the clamp mode with the RUN_MISALIGNED flag: a misaligned Pointer is then noted
    and used as it is."""
    if not _aligned(p, lo, hi):
        if mode & RUN_MISALIGNED == 0:
            info[2] = MISALIGNED
            info[1] = p - lo
            return _MISALIGNED
        note(info, MISALIGNED, 0, p - lo, 0)
    mode &= CLAMP_MASK
    rdim = plan(rows, cols, lv, D, vv, V, perm, has_dims, mode, store, rt, ct)
    if run > 0 and _move_rows(frag, base, inv, rows, cols, p, esize, fmt, run, lo, hi, ranges,
                              rdim, rt, ct, store):
        return _MOVED
    return rdim


@njit(**_opts)
def plan_lines(p, lay, view, base, rows, cols, D, V, perm, has_dims, mode, store, esize, lo, hi, ranges,
               columns, lines, rt, ct):
    """For one instance of a tensor load or store (its first lane `base`): whether generated code
    can move it a line at a time. LINES_ROWS: the plan is clean, each row cols consecutive
    elements, every row in bounds; lines[r] = the element index of row r's first element.
    LINES_COLUMNS (when `columns`): the plan is clean, each column rows consecutive elements (a
    transposing view), every column in bounds; lines[c] = that of column c's. For a store the
    columns must not overlap (the movers write them in another order than the element path).
    LINES_NONE: anything else (misaligned, clipped, clamped, out of bounds, other strides): the
    element path checks, reports and moves it. The tile of a GEMM (nothing clipped, blocked or
    clamped) is affine in row and column and is planned from its first and last elements."""
    if not _aligned(p, lo, hi):
        return LINES_NONE
    mode &= CLAMP_MASK
    lv = lay[:, base]
    vv = view[:, base]
    rdim, ro, rs, co, cs = _frame(rows, cols, lv, D, vv, V, perm, has_dims)
    if rdim < 0:
        return LINES_NONE
    okr, r0, rstep = _affine(rows, ro, rs, lv[SPAN * D + rdim], lv, D, rdim)
    okc, c0, cstep = _affine(cols, co, cs, np.int64(1) << 40, lv, D, 1 - rdim)
    if okr and okc:
        last = r0 + c0 + (rows - 1) * rstep + (cols - 1) * cstep
        if last > 0xFFFFFFFF or not _span_ok(p + (r0 + c0) * esize, (last - r0 - c0 + 1) * esize, lo, hi, ranges):
            return LINES_NONE
        if cstep == 1:
            for r in range(rows):
                lines[r] = r0 + c0 + r * rstep
            return LINES_ROWS
        if rstep == 1 and columns and (not store or cstep >= rows):
            for c in range(cols):
                lines[c] = r0 + c0 + c * cstep
            return LINES_COLUMNS
        return LINES_NONE
    rdim = plan(rows, cols, lv, D, vv, V, perm, has_dims, mode, store, rt, ct)
    if not plan_clean(rdim, rows, cols, rt, ct):
        return LINES_NONE
    if rows_contiguous(rdim, rows, cols, rt, ct):
        for r in range(rows):
            if not _span_ok(_row_at(p, r, esize, rt, ct), cols * esize, lo, hi, ranges):
                return LINES_NONE
            lines[r] = (rt[r, P_PART] + ct[0, P_PART]) & 0xFFFFFFFF
        return LINES_ROWS
    if not columns or store or not _lines_contiguous(rt, rows, ct, cols):
        return LINES_NONE
    for c in range(cols):
        start = (rt[0, P_PART] + ct[c, P_PART]) & 0xFFFFFFFF
        if not _span_ok(p + start * esize, rows * esize, lo, hi, ranges):
            return LINES_NONE
        lines[c] = start
    return LINES_COLUMNS


@njit(**_opts)
def load(state, wait, inv, frag, obj, tab, rows, cols, addr, lay, D, view, V, perm, has_dims, mode,
         fmt, esize, lo, hi, ranges, info, dense_f, dense_i, stat, run, done):
    """OpCooperativeMatrixLoadTensorNV without a decode function. Returns -1, or the first lane
    of the instance that failed (info[2] = the status, info[3] = the element row * cols + col,
    info[0] and info[1] what `address` says, or the byte offset of an out-of-bounds read).
    `run` > 0 (the striped layout, coopmat.run_length): an instance whose rows are contiguous and
    in bounds is copied a row at a time straight into the fragments. Instances with done[q] set
    were moved by generated code (plan_lines)."""
    W = state.shape[0]
    bc = np.zeros(10, np.int64)
    cib = np.zeros(10, np.int64)
    rt = np.empty((rows, 5), np.int64)
    ct = np.empty((cols, 5), np.int64)
    for base in range(0, W, inv):
        if state[base] != wait or done[base // inv]:
            continue
        p = addr[base]
        lv = lay[:, base]
        vv = view[:, base]
        info[NOTE_BASE] = base
        rdim = _begin(frag, base, inv, rows, cols, p, lv, D, vv, V, perm, has_dims, mode, False, fmt,
                      esize, lo, hi, ranges, info, run, rt, ct)
        if rdim == _MISALIGNED:
            return base
        if rdim == _MOVED:
            continue
        if _gather_clean(frag, obj, base, inv, tab, rows, cols, p, esize, fmt, lo, hi, ranges, rdim, rt, ct,
                         dense_f, dense_i, stat, run > 0):
            continue
        for r in range(rows):
            for c in range(cols):
                k = r * cols + c
                st, idx = element(r, c, rdim, rt, ct, bc, cib)
                if st == UNPLANNED:
                    st, idx = address(r, c, cols, lv, D, vv, V, perm, has_dims, mode & CLAMP_MASK, False, bc,
                                      cib, info)
                stat[k] = st
                if st == OK:
                    a = p + idx * esize
                    if not _span_ok(a, esize, lo, hi, ranges):
                        st = OUT_OF_BOUNDS
                        info[1] = a - lo
                    else:
                        dense_f[k], dense_i[k] = _read(a, fmt)
                elif st == CLAMPED:
                    dense_f[k], dense_i[k] = clamp_value(lv[5 * D], fmt)
                if st > CLAMPED:
                    info[2] = st
                    info[3] = k
                    return base
        _to_fragments(frag, obj, base, inv, tab, fmt, stat, dense_f, dense_i)
    return -1


@njit(**_opts)
def _to_fragments(frag, obj, base, inv, tab, fmt, stat, dense_f, dense_i):
    """One instance's fragments from the dense copy of its elements (the Object's element where
    the status says SKIP: outside the clip region)."""
    for l in range(inv):
        for e in range(tab.shape[1]):
            k = tab[l, e]
            if stat[k] == SKIP:
                frag[e, base + l] = obj[e, base + l]
            elif fmt == F32:
                frag[e, base + l] = bits_f32(np.uint32(dense_i[k]))
            elif fmt <= E5M2:
                frag[e, base + l] = dense_f[k]
            else:
                frag[e, base + l] = dense_i[k]


@njit(**_opts)
def _gather_clean(frag, obj, base, inv, tab, rows, cols, p, esize, fmt, lo, hi, ranges, rdim, rt, ct,
                  dense_f, dense_i, stat, striped):
    """One instance of a load under a clean plan whose elements all lie in bounds, when its rows
    are not contiguous (a transposing view, a row stride): each element read at
    p + (rt[r] + ct[c]) x esize with no per-element status or bounds test, straight into the
    fragments when the layout is `striped` (matrix element k is lane k % inv's element k // inv),
    else into a dense copy the fragments are taken from. False (nothing done) when the plan is
    not clean, its indexes could wrap at 32 bits, or the span leaves the object: the element
    path then finds and reports any fault."""
    if not plan_clean(rdim, rows, cols, rt, ct):
        return False
    rmin = rmax = rt[0, P_PART]
    for r in range(rows):
        rmin = min(rmin, rt[r, P_PART])
        rmax = max(rmax, rt[r, P_PART])
    cmin = cmax = ct[0, P_PART]
    for c in range(cols):
        cmin = min(cmin, ct[c, P_PART])
        cmax = max(cmax, ct[c, P_PART])
    if rmin + cmin < 0 or rmax + cmax > 0xFFFFFFFF:
        return False
    if not _span_ok(p + (rmin + cmin) * esize, (rmax + cmax - rmin - cmin + 1) * esize, lo, hi, ranges):
        return False
    if striped:
        _gather_striped(frag, base, inv, rows, cols, p, esize, fmt, rt, ct)
        return True
    for r in range(rows):
        a = p + rt[r, P_PART] * esize
        for c in range(cols):
            dense_f[r * cols + c], dense_i[r * cols + c] = _read(a + ct[c, P_PART] * esize, fmt)
            stat[r * cols + c] = OK
    _to_fragments(frag, obj, base, inv, tab, fmt, stat, dense_f, dense_i)
    return True


@njit(**_opts)
def _gather_f16_runs(frag, base, inv, rows, cols, p, rt, ct):
    """float16 elements of a clean plan into striped fragments when a row's elements stay in one
    fragment row, or fill whole ones (inv a multiple of cols, or cols of inv): each run of a row
    one loop of loads and contiguous stores, which LLVM vectorizes (with gathers, for the
    transposing view of a B stored N x K: 1.65x the element-by-element loop)."""
    run = min(inv, cols)
    co = np.empty(cols, np.int64)
    for c in range(cols):
        co[c] = ct[c, P_PART] * 2
    for r in range(rows):
        a = p + rt[r, P_PART] * 2
        for j in range(0, cols, run):
            k = r * cols + j
            e = k // inv
            lane = base + k - e * inv
            for c in range(run):
                frag[e, lane + c] = f16_to_f32_fast(ld_u16(a + co[j + c]))


@njit(**_opts)
def _gather_striped(frag, base, inv, rows, cols, p, esize, fmt, rt, ct):
    """The elements of a clean plan into striped fragments, as _to_fragments converts them. The
    striped layout with runs (codes.run_length > 0, what the caller checked) has inv a multiple
    of cols or cols of inv, which float16's run loop needs."""
    if fmt == F16:
        _gather_f16_runs(frag, base, inv, rows, cols, p, rt, ct)
        return
    e = 0
    lane = base
    for r in range(rows):
        a = p + rt[r, P_PART] * esize
        for c in range(cols):
            x = a + ct[c, P_PART] * esize
            if fmt == F32:
                frag[e, lane] = bits_f32(np.uint32(ld_u32(x)))
            else:
                f, i = _read(x, fmt)
                if fmt <= E5M2:
                    frag[e, lane] = f
                else:
                    frag[e, lane] = i
            lane += 1
            if lane == base + inv:
                lane = base
                e += 1


@njit(**_opts)
def _rows_ok(p, rows, cols, esize, lo, hi, ranges, rdim, rt, ct):
    """A clean plan, contiguous rows, each row in bounds: the conditions for moving whole rows
    (otherwise the element-by-element path finds and reports any fault)."""
    if not (plan_clean(rdim, rows, cols, rt, ct) and rows_contiguous(rdim, rows, cols, rt, ct)):
        return False
    for r in range(rows):
        if not _span_ok(_row_at(p, r, esize, rt, ct), cols * esize, lo, hi, ranges):
            return False
    return True


@njit(**_opts)
def _row_at(p, r, esize, rt, ct):
    return p + ((rt[r, P_PART] + ct[0, P_PART]) & 0xFFFFFFFF) * esize


@njit(**_opts)
def _move_rows(frag, base, inv, rows, cols, p, esize, fmt, run, lo, hi, ranges, rdim, rt, ct, store):
    """One instance of a striped-layout load (or store), a contiguous row at a time, when the
    plan is clean, the rows contiguous and every row in bounds; False (nothing moved) otherwise,
    and the element-by-element path finds and reports any fault."""
    if not _rows_ok(p, rows, cols, esize, lo, hi, ranges, rdim, rt, ct):
        return False
    for r in range(rows):
        if store:
            store_row(frag, base, inv, r, cols, _row_at(p, r, esize, rt, ct), esize, fmt, run)
        else:
            load_row(frag, base, inv, r, cols, _row_at(p, r, esize, rt, ct), esize, fmt, run)
    return True


@njit(**_opts)
def store(state, wait, inv, frag, tab, rows, cols, addr, lay, D, view, V, perm, has_dims, mode,
          fmt, esize, lo, hi, ranges, info, dense_f, dense_i, run, done):
    """OpCooperativeMatrixStoreTensorNV: elements outside the clip region or the tensor (any
    clamp mode but Undefined) are not written. Failures as for `load`; `run` and `done` as for
    `load`."""
    W = state.shape[0]
    L = tab.shape[1]
    bc = np.zeros(10, np.int64)
    cib = np.zeros(10, np.int64)
    rt = np.empty((rows, 5), np.int64)
    ct = np.empty((cols, 5), np.int64)
    for base in range(0, W, inv):
        if state[base] != wait or done[base // inv]:
            continue
        p = addr[base]
        lv = lay[:, base]
        vv = view[:, base]
        info[NOTE_BASE] = base
        rdim = _begin(frag, base, inv, rows, cols, p, lv, D, vv, V, perm, has_dims, mode, True, fmt,
                      esize, lo, hi, ranges, info, run, rt, ct)
        if rdim == _MISALIGNED:
            return base
        if rdim == _MOVED:
            continue
        for l in range(inv):
            for e in range(L):
                v = frag[e, base + l]
                dense_f[tab[l, e]] = np.float64(v)
                # float32 goes by its bits (a float64 round trip quiets signalling NaNs)
                dense_i[tab[l, e]] = np.int64(f32_bits(np.float32(v))) if fmt == F32 else np.int64(v)
        for r in range(rows):
            for c in range(cols):
                k = r * cols + c
                st, idx = element(r, c, rdim, rt, ct, bc, cib)
                if st == UNPLANNED:
                    st, idx = address(r, c, cols, lv, D, vv, V, perm, has_dims, mode & CLAMP_MASK, True, bc,
                                      cib, info)
                if st == OK:
                    a = p + idx * esize
                    if not _span_ok(a, esize, lo, hi, ranges):
                        st = OUT_OF_BOUNDS
                        info[1] = a - lo
                    elif fmt == F32:
                        st_u32(a, np.uint32(dense_i[k]))
                    else:
                        _write(a, fmt, dense_f[k], dense_i[k])
                if st > CLAMPED:
                    info[2] = st
                    info[3] = k
                    return base
    return -1


@njit(**_opts)
def transpose(state, wait, inv, src, dst, rows, cols):
    """dst = the transpose of src (dense row-major rows x cols) for each waiting instance."""
    W = state.shape[0]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        s = src[base // inv]
        d = dst[base // inv]
        for r in range(rows):
            for c in range(cols):
                d[c * rows + r] = s[r * cols + c]


@njit(**_opts)
def check_frame(state, wait, inv, pvp, frame, off, size):
    """-1, or the first lane whose copy of a Private variable (bytes [off, off + size) of its
    private frame) differs from its instance's first lane: a callback called once for the whole
    scope reads the first lane's, which is only right when they agree."""
    W = state.shape[0]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        a = pvp + base * frame + off
        for l in range(base + 1, base + inv):
            b = pvp + l * frame + off
            for i in range(size):
                if ld_u8(a + i) != ld_u8(b + i):
                    return l
    return -1


# -- tensor layout and view instructions ----------------------------------------------------------
# A layout or view value lives in slot rows (uint32, one row per leaf, a column per lane); each
# instruction is one call that writes the result's rows for one lane from the operand's rows.


# -- decode sites of the LLVM generator -----------------------------------------------------------
# A tensor load with a decode function calls the function (generated code) per element; the
# addressing of every element of an instance is done here first, into a table the generated loop
# walks: out[k] = (status, index, blockCoord[D], coordInBlock[D]) for element k = row * cols + col.

@njit(**_opts)
def decode_plan(p, lo, hi, ranges, rows, cols, lay, base, D, view, V, perm, has_dims, mode, info,
                out, rt, ct):
    """The addressing of one instance of a decoding tensor load (lay and view: [leaves, W]
    operand arrays; the instance's first lane `base`). Returns -1, or a failing status with
    info[2] = the status, info[3] = the element, info[0]/info[1] what `address` says. info[4] and
    info[5] get the start and size of the buffer the pointer points into (for the decode
    function's bounds checks). A clean 2-D plan (every element in the tensor: the interior tiles
    of a GEMM) is left in rt/ct for the generated loop to walk (info[6] = 1, info[7] = the
    dimension the row selects); otherwise out gets every element (info[6] = 0)."""
    lv = lay[:, base]
    vv = view[:, base]
    info[NOTE_BASE] = base
    if hi > lo:
        plo = lo
        pn = hi - lo
    else:
        plo, pn = range_of(ranges, p)
    info[4] = plo
    info[5] = pn
    if not _aligned(p, lo, hi):
        if mode & RUN_MISALIGNED == 0:
            info[2] = MISALIGNED
            info[1] = p - lo
            info[3] = 0
            return MISALIGNED
        note(info, MISALIGNED, 0, p - lo, 0)
    mode &= CLAMP_MASK
    rdim = plan(rows, cols, lv, D, vv, V, perm, has_dims, mode, False, rt, ct)
    info[7] = rdim
    if D == 2 and plan_clean(rdim, rows, cols, rt, ct):
        info[6] = 1
        return -1
    info[6] = 0
    bc = np.zeros(10, np.int64)
    cib = np.zeros(10, np.int64)
    for k in range(rows * cols):
        r = k // cols
        c = k - r * cols
        st, idx = element(r, c, rdim, rt, ct, bc, cib)
        if st == UNPLANNED:
            st, idx = address(r, c, cols, lv, D, vv, V, perm, has_dims, mode, False, bc, cib, info)
        if st > CLAMPED:
            info[2] = st
            info[3] = k
            return st
        out[k, 0] = st
        out[k, 1] = idx
        for d in range(D):
            out[k, 2 + d] = bc[d]
            out[k, 2 + D + d] = cib[d]
    return -1


@njit(**_opts)
def decode_clamp(bits, fmt, outf, outi):
    """The Constant clamp value of a layout as the component type, into outf[0] / outi[0]."""
    outf[0], outi[0] = clamp_value(bits, fmt)


@njit(**_opts)
def decode_finish(base, inv, frag, obj, tab, out, dense_f, dense_i, floating, clean):
    """The instance's fragments from the decoded elements (the Object's element where the view's
    clip region left one out; a clean plan leaves none out)."""
    L = tab.shape[1]
    for l in range(inv):
        for e in range(L):
            k = tab[l, e]
            if not clean and out[k, 0] == SKIP:
                frag[e, base + l] = obj[e, base + l]
            elif floating:
                frag[e, base + l] = dense_f[k]
            else:
                frag[e, base + l] = dense_i[k]
