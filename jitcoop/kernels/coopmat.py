"""Cooperative matrix kernels, run by the workgroup scheduler for the lanes waiting at one
cooperative instruction.

Every invocation holds its fragment of a matrix in spill slots, an array `frag[length, W]` (element
e of lane l is frag[e, l]). A scope instance is `inv` consecutive lanes (a subgroup, or the whole
workgroup); the device profile's lane layout `tab[inv, length]` gives the linear index
row * cols + col each (lane, e) holds. Whole-matrix work:

    muladd   R = C + A x B ("exact" numerics) in one kernel specialized on the sizes and on where
             each operand lies: explicit 512-bit vectors, fragments of striped layouts read and
             written in place, other layouts through offset tables
    gather   fragments -> dense[instance, rows * cols] (float64, or int64 sign/zero-extended)
    mma_f    dense A, B, C -> dense result with the "nvidia" numerics
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
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .formats import (HAS_F16C, bf16_to_f32, bits_f32, e4m3_to_f32, e5m2_to_f32, f16_bits_to_f32_ir,
                      f16_to_f32_fast, f32_bits, f32_to_bf16, f32_to_e4m3, f32_to_e5m2,
                      f32_to_f16_fast, f64_to_bf16, f64_to_e4m3, f64_to_e5m2, round_f16_64)
from .memory import (ld_f32, ld_f64, ld_i8, ld_i16, ld_i32, ld_i64, ld_u8, ld_u16, ld_u32, st_f32,
                     st_f64, st_i64, st_u8, st_u16, st_u32)
from .scalar import in_ranges
from .codes import (F32, F64, F16, BF16, E4M3, E5M2, S8, U8, S16, U16, S32, U32, S64, U64, NVIDIA)

# No reference counting (_nrt=False): these kernels allocate nothing, and numba otherwise
# increments and decrements the count of every array argument at each call of a function that
# calls another (atomic operations: measured at about 50 ns per load call). _alloc: the few that
# allocate scratch.
_opts = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False, _nrt=False)
_alloc = dict(_opts, _nrt=True)




# -- gather / scatter -----------------------------------------------------------------------------
# A fragment operand reaches the dense form through the layout's *source table* `src[2, n]`: for
# each linear index k = row * cols + col, the (e, lane) whose copy is read (the highest invocation
# holding the element, when the layout replicates it). Each dense element is written once, in
# order. Striped layouts without replicas (linear index e * inv + lane, the generic profile) are
# plain block copies: `gather_striped`, `scatter_striped`.

@njit(**_opts)
def _int_value(x, width, signed):
    """A fragment integer as int64, sign- or zero-extended from `width` bits."""
    v = np.int64(x)
    if width >= 64:
        return v
    v &= (np.int64(1) << width) - 1
    if signed and (v >> (width - 1)) != 0:
        v -= np.int64(1) << width
    return v


@njit(**_opts)
def gather_src(state, wait, inv, frag, src, dense, isint, width, signed):
    """Fragments -> dense matrices (any dtype: float64, float32, int64) through a source table;
    integers (isint) sign- or zero-extended from `width` bits first."""
    W = state.shape[0]
    n = src.shape[1]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for k in range(n):
            x = frag[src[0, k], base + src[1, k]]
            if isint:
                d[k] = _int_value(x, width, signed)
            else:
                d[k] = x


@njit(**_opts)
def gather_striped(state, wait, inv, frag, dense, isint, width, signed):
    """gather_src for a striped layout: row e of the fragments holds elements e*inv .. e*inv+inv-1."""
    W = state.shape[0]
    L = frag.shape[0]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for e in range(L):
            f = frag[e]
            o = e * inv
            if isint:
                for l in range(inv):
                    d[o + l] = _int_value(f[base + l], width, signed)
            else:
                for l in range(inv):
                    d[o + l] = f[base + l]


@njit(**_opts)
def scatter(state, wait, inv, dense, tab, frag):
    """Dense matrices -> fragments (every replica gets its element)."""
    W = state.shape[0]
    L = tab.shape[1]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for e in range(L):
            f = frag[e]
            for l in range(inv):
                f[base + l] = d[tab[l, e]]


@njit(**_opts)
def scatter_striped(state, wait, inv, dense, frag):
    """scatter for a striped layout without replicas."""
    W = state.shape[0]
    L = frag.shape[0]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for e in range(L):
            f = frag[e]
            o = e * inv
            for l in range(inv):
                f[base + l] = d[o + l]


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


# -- multiply-add, "nvidia" numerics ----------------------------------------------------------------

@njit(**_alloc)
def mma_f(state, wait, inv, da, db, dc, M, N, K, mode, numerics):
    """dc = A x B + C for each waiting instance, in place. EXACT: exact products, float64 sums
    (exact for every input narrower than float64), one rounding to the result type. NVIDIA: the
    H100 models (float32 results by the truncating tensor-core model, once per 16-wide chunk of K;
    float16 results by the same model, rounded to float16 after each chunk)."""
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
                        s = _tc_chunk(s, a, b, i, k0, min(K, k0 + 16), j, K, N)
                        if mode == F16:
                            # the float32 adder's result, rounded to float16: matches every
                            # float16 accumulator the H100 gave (tests/oracle/h100), where the
                            # exact sum rounded once missed results near a float16 midpoint
                            s = round_to(s, F16)
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
def round_dense(state, wait, inv, dense, mode):
    """Round each waiting instance's dense float64 result once to the result type."""
    W = state.shape[0]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        d = dense[base // inv]
        for j in range(d.shape[0]):
            d[j] = round_to(d[j], mode)


@njit(**_opts)
def _combine(cv, s, width, rsigned, saturate):
    """C + (A x B) for integers: wrapped (the caller's store truncates), or saturated."""
    d = cv + s
    if saturate:
        if width < 64:
            if rsigned:
                hi = (np.int64(1) << (width - 1)) - 1
                lo = -hi - 1
            else:
                hi = (np.int64(1) << width) - 1
                lo = np.int64(0)
            d = min(max(d, lo), hi)
        elif rsigned:
            if cv > 0 and s > 0 and d < 0:
                d = np.int64(0x7FFFFFFFFFFFFFFF)
            elif cv < 0 and s < 0 and d >= 0:
                d = np.int64(-0x7FFFFFFFFFFFFFFF - 1)
        elif np.uint64(d) < np.uint64(cv):       # unsigned 64-bit carry out
            d = np.int64(-1)
    return d


@njit(**_opts)
def combine_i(state, wait, inv, c, dp, r, width, rsigned, saturate):
    """Integer MulAdd, second half: R = C + P (P = A x B, exact, in dp [instances, n]) for dense
    int64 C (already sign- or zero-extended) and R [instances, n]."""
    W = state.shape[0]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        q = base // inv
        cq = c[q]
        pq = dp[q]
        rq = r[q]
        for j in range(pq.shape[0]):
            rq[j] = _combine(cq[j], np.int64(pq[j]), width, rsigned, saturate)


@njit(**_opts)
def combine_i_tab(state, wait, inv, c, dp, r, tab, width, csigned, cwidth, rsigned, saturate):
    """combine_i with C and R fragment blocks [length, W] of one layout `tab`: each position
    (e, lane) combines its own copy of C with the element it holds."""
    W = state.shape[0]
    L = tab.shape[1]
    for base in range(0, W, inv):
        if state[base] != wait:
            continue
        pq = dp[base // inv]
        for e in range(L):
            ce = c[e]
            re = r[e]
            for l in range(inv):
                cv = _int_value(ce[base + l], cwidth, csigned)
                re[base + l] = _combine(cv, np.int64(pq[tab[l, e]]), width, rsigned, saturate)


# -- memory ---------------------------------------------------------------------------------------

@njit(**_opts)
def _read(a, fmt):
    """One element of format `fmt` at address a, as float64 (floats) or int64 bits (ints);
    float32 gives its bits too (a float64 round trip quiets signalling NaNs)."""
    if fmt == F32:
        return np.float64(ld_f32(a)), np.int64(ld_u32(a))
    if fmt == F64:
        return ld_f64(a), np.int64(0)
    if fmt == F16:
        return np.float64(f16_to_f32_fast(ld_u16(a))), np.int64(0)
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
        st_u16(a, f32_to_f16_fast(np.float32(f)))
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
def _write_frag(a, fmt, v):
    """One fragment element to memory: float32 and float64 stored as they are held (a float64
    round trip would quiet a signalling NaN; compiled on its own, LLVM keeps the round trip)."""
    if fmt == F32:
        st_f32(a, v)
    elif fmt == F64:
        st_f64(a, v)
    else:
        _write(a, fmt, np.float64(v), np.int64(v))


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
         lo, hi, ranges, info, run):
    """OpCooperativeMatrixLoadKHR for each waiting instance: element (r, c) comes from
    addr + r * stride * psize + c * esize (row major; rows and columns swap for column major).
    `run` > 0 says the layout is the striped one and `run` consecutive elements of a row land in
    consecutive lanes of one fragment row (run_length). Returns -1, or the first lane of an
    instance whose access is out of bounds (info: offset, span)."""
    W = state.shape[0]
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
        if run > 0:
            _load_runs(frag, base, inv, rows, cols, p, s * psize, esize, fmt, run)
        else:
            _load_instance(frag, base, inv, tab, cols, p, s * psize, esize, col_major, fmt)
    return -1


@njit(**_opts)
def _load_runs(frag, base, inv, rows, cols, p, major, esize, fmt, run):
    """The striped layout's fragments, a run of memory at a time: element k = r * cols + c
    (row major) is frag[k // inv, base + k % inv]."""
    for r in range(rows):
        load_row(frag, base, inv, r, cols, p + r * major, esize, fmt, run)


@njit(**_opts)
def load_row(frag, base, inv, r, cols, src, esize, fmt, run):
    """Row r of a striped layout's fragments from the cols elements at address src, a run at a
    time (run_length)."""
    for c0 in range(0, cols, run):
        k = r * cols + c0
        e = k // inv
        _copy_run(frag, e, base + k - e * inv, src + c0 * esize, run, fmt)


@njit(**_opts)
def store_row(frag, base, inv, r, cols, dst, esize, fmt, run):
    """The inverse of load_row: row r of a striped layout's fragments to the cols elements at
    address dst, a run at a time: 16 at a time in vector code for the formats the fragments
    hold bit for bit (as _copy_run), the rest and any tail element by element."""
    for c0 in range(0, cols, run):
        k = r * cols + c0
        e = k // inv
        j = base + k - e * inv
        a = dst + c0 * esize
        done = 0
        if fmt == F32 or fmt == F64 or fmt >= S8:
            while done + 16 <= run:
                _vstore(frag, e, j + done, a + esize * done)
                done += 16
        for i in range(done, run):
            _write_frag(a + i * esize, fmt, frag[e, j + i])


@njit(**_opts)
def _copy_run(frag, e, j, a, n, fmt):
    """frag[e, j : j + n] = the n elements of format fmt at address a: 16 at a time in vector
    code for the formats the fragments hold bit for bit (or float16 through F16C), the rest
    and any tail element by element."""
    done = 0
    if fmt == F16 and HAS_F16C:
        while done + 16 <= n:
            _vcopy(frag, e, j + done, a + 2 * done, 1)
            done += 16
    elif fmt == F32 or fmt == F64 or fmt >= S8:
        while done + 16 <= n:
            _vcopy(frag, e, j + done, a + esize_of(fmt) * done, 0)
            done += 16
    for i in range(done, n):
        f, v = _read(a + esize_of(fmt) * i, fmt)
        if fmt <= E5M2:
            frag[e, j + i] = f
        else:
            frag[e, j + i] = v


@njit(inline="always", **_opts)
def esize_of(fmt):
    if fmt == F64 or fmt == S64 or fmt == U64:
        return 8
    if fmt == F32 or fmt == S32 or fmt == U32:
        return 4
    if fmt == F16 or fmt == BF16 or fmt == S16 or fmt == U16:
        return 2
    return 1


def _frag_run(context, builder, sig, args):
    """LLVM IR: a pointer to frag[e, j] (args frag, e, j) for _vcopy and _vstore, and the
    fragment's numba dtype."""
    arr = context.make_array(sig.args[0])(context, builder, args[0])
    ft = sig.args[0].dtype
    row = builder.mul(args[1], builder.extract_value(arr.strides, 0))
    p = builder.gep(builder.bitcast(arr.data, ir.IntType(8).as_pointer()), [row])
    return builder.gep(builder.bitcast(p, context.get_value_type(ft).as_pointer()), [args[2]]), ft


@intrinsic(prefer_literal=True)
def _vcopy(typingctx, frag, e, j, a, kind):
    """16 elements from address a to frag[e, j:j+16]: kind 0 copies the fragment type's own
    bits; kind 1 converts float16 to float32 (formats.f16_bits_to_f32_ir)."""
    if not isinstance(kind, types.IntegerLiteral):
        return None
    k = kind.literal_value

    def codegen(context, builder, sig, args):
        dst, ft = _frag_run(context, builder, sig, args)
        av = args[3]

        def put(v):
            builder.store(v, builder.bitcast(dst, v.type.as_pointer()), align=1)

        if k == 0:
            put(builder.load(builder.inttoptr(av, ir.VectorType(ir.IntType(ft.bitwidth), 16).as_pointer()),
                             align=1))
            return context.get_dummy_value()
        # The processor's conversion is exact for every float16 but a signalling NaN, which it
        # quiets; the bit-exact rebuild of NaNs (a third of the work) runs only for a run that
        # holds a NaN.
        i16 = ir.IntType(16)
        h = builder.load(builder.inttoptr(av, ir.VectorType(i16, 16).as_pointer()), align=1)
        put(builder.fpext(builder.bitcast(h, ir.VectorType(ir.HalfType(), 16)),
                          ir.VectorType(ir.FloatType(), 16)))
        nan = builder.icmp_unsigned(">", builder.and_(h, ir.Constant(h.type, [0x7FFF] * 16)),
                                    ir.Constant(h.type, [0x7C00] * 16))
        with builder.if_then(builder.icmp_unsigned("!=", builder.bitcast(nan, i16), ir.Constant(i16, 0)),
                             likely=False):
            put(f16_bits_to_f32_ir(builder, h, 16))
        return context.get_dummy_value()
    return types.none(frag, types.int64, types.int64, types.int64, kind), codegen


@intrinsic
def _vstore(typingctx, frag, e, j, a):
    """frag[e, j:j+16] to address a, the fragment type's own bits (the inverse of _vcopy's
    kind 0)."""
    def codegen(context, builder, sig, args):
        src, ft = _frag_run(context, builder, sig, args)
        vt = ir.VectorType(ir.IntType(ft.bitwidth), 16)
        v = builder.load(builder.bitcast(src, vt.as_pointer()), align=1)
        builder.store(v, builder.inttoptr(args[3], vt.as_pointer()), align=1)
        return context.get_dummy_value()
    return types.none(frag, types.int64, types.int64, types.int64), codegen


@njit(**_opts)
def _load_instance(frag, base, inv, tab, cols, p, major, esize, col_major, fmt):
    """The fragments of one instance: lane l's element e is matrix element tab[l, e] at
    p + row * major + col * esize (row major; row and column swap for column major). The common
    formats get loops of their own, free of per-element dispatch, so that they vectorize."""
    L = tab.shape[1]
    sh = 0
    while (1 << sh) < cols:
        sh += 1
    if (1 << sh) != cols:
        sh = -1
    if col_major:
        rstep, cstep = esize, major
    else:
        rstep, cstep = major, esize
    if fmt == F16:
        for e in range(L):
            for l in range(inv):
                frag[e, base + l] = f16_to_f32_fast(ld_u16(_at(p, tab[l, e], sh, cols, rstep, cstep)))
    elif fmt == F32:
        for e in range(L):
            for l in range(inv):
                frag[e, base + l] = ld_f32(_at(p, tab[l, e], sh, cols, rstep, cstep))
    elif fmt == S8:
        for e in range(L):
            for l in range(inv):
                frag[e, base + l] = ld_i8(_at(p, tab[l, e], sh, cols, rstep, cstep))
    else:
        for e in range(L):
            for l in range(inv):
                f, i = _read(_at(p, tab[l, e], sh, cols, rstep, cstep), fmt)
                if fmt <= E5M2:
                    frag[e, base + l] = f
                else:
                    frag[e, base + l] = i


@njit(inline="always", **_opts)
def _at(p, k, sh, cols, rstep, cstep):
    """Address of linear element k = row * cols + col (a shift and a mask for power-of-two widths)."""
    if sh >= 0:
        r = k >> sh
        c = k & (cols - 1)
    else:
        r = k // cols
        c = k - r * cols
    return p + r * rstep + c * cstep


@njit(**_opts)
def store(state, wait, inv, frag, tab, rows, cols, addr, stride, psize, esize, col_major, fmt,
          lo, hi, ranges, info, run):
    """OpCooperativeMatrixStoreKHR: the inverse of `load` (Stride must be positive; `run` as
    for `load`)."""
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
        if run > 0:
            for r in range(rows):
                store_row(frag, base, inv, r, cols, p + r * s * psize, esize, fmt, run)
            continue
        for l in range(inv):
            for e in range(L):
                _write_frag(_elem_addr(p, tab[l, e], cols, s, psize, esize, col_major), fmt,
                            frag[e, base + l])
    return -1
