"""Cooperative vector kernels (SPV_NV_cooperative_vector), run by the workgroup scheduler.

OpCooperativeVectorMatrixMul[Add]NV is a collective: the lanes of a workgroup that wait at one
instruction together are multiplied as ONE batched matrix product (the matrix is decoded once into
a dense M x K array, cached per call site for the whole dispatch, then `A @ X` over the lanes).
Lanes whose matrix/bias pointers, offsets or stride differ are split into groups with equal
parameters; each lane's result is what the per-lane definition gives.

Interpretation codes (the `I_*` constants) are the SPIR-V Component Type values, renumbered
0..14. Matrix layouts are the SPIR-V values (RowMajor 0, ColumnMajor 1, InferencingOptimal 2,
TrainingOptimal 3); the optimal layouts are defined per device profile by `opt_index` (profile
kind 0 generic: row-major, tightly packed; 1 nvidia: the measured H100 16x16-tile permutation).

Numerics: "exact" (products exact in float64, float64 sums, one rounding to the result type) and
"nvidia" (H100: a float16 result starts at the bias and each 16-wide chunk of K is added exactly,
then rounded to float16; 8-bit float input interpretations do not quantize the input vector).
Integer products and sums wrap at the result width (computed mod 2^64, then truncated).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .formats import (bits_f32, bits_f64, f32_bits, e4m3_to_f32, e5m2_to_f32, f16_to_f32, f32_to_f16, f64_bits, f64_to_e4m3,
                      f64_to_e5m2, round_f16_64)
from .memory import (atomic_add_i32, atomic_add_i64, atomic_add_u32, atomic_add_u64,
                     atomic_cmpxchg_u32, ld_f32, ld_f64, ld_i8, ld_i16, ld_i32, ld_i64, ld_u8,
                     ld_u16, ld_u32, ld_u64)
from .scalar import in_ranges
from .codes import (I_F16, I_F32, I_F64, I_S8, I_S16, I_S32, I_S64, I_U8, I_U16, I_U32, I_U64,
    I_S8P, I_U8P, I_E4M3, SIZES, K_FLOAT, K_SINT, K_UINT, C_IN_KIND, C_IN_I, C_MAT_I, C_BIAS_I,
    C_M, C_K, C_LAYOUT, C_TRANS, C_HAS_BIAS, C_RES_KIND, C_RES_I, C_NVIDIA, C_PROF, C_INT_PATH,
    C_IN_BITS)

_opts = dict(cache=True, nogil=True, error_model="numpy")


# -- optimal layouts --------------------------------------------------------------------------------

@njit(inline="always", **_opts)
def opt_index(r, c, R, C, layout, prof):
    """Element index of (r, c) of an R x C matrix stored in an optimal layout."""
    if prof == 0:
        return r * C + c
    t = (r >> 4) * ((C + 15) >> 4) + (c >> 4)
    a = r & 15
    b = c & 15
    o = ((b & 1) | (((b >> 3) & 1) << 1) | (((a >> 3) & 1) << 2) | (((b >> 1) & 1) << 3)
         | (((b >> 2) & 1) << 4) | ((a & 1) << 5) | (((a >> 1) & 1) << 6) | (((a >> 2) & 1) << 7))
    if layout == 3:
        t *= 2
    return t * 256 + o


@njit(inline="always", **_opts)
def opt_elements(R, C, layout, prof):
    """Elements an R x C matrix occupies in an optimal layout (padding included)."""
    if prof == 0:
        return R * C
    n = ((R + 15) >> 4) * ((C + 15) >> 4)
    if layout == 3:
        return (2 * n - 1) * 256
    return n * 256


@njit(inline="always", **_opts)
def elem_offset(r, c, R, C, layout, stride, esz, prof):
    """Byte offset of stored element (r, c) of an R x C matrix."""
    if layout == 0:
        return r * stride + c * esz
    if layout == 1:
        return c * stride + r * esz
    return opt_index(r, c, R, C, layout, prof) * esz


@njit(inline="always", **_opts)
def extent(R, C, layout, stride, esz, prof):
    """Bytes from the start of a stored R x C matrix to the end of its last element."""
    if layout == 0:
        return (R - 1) * stride + C * esz
    if layout == 1:
        return (C - 1) * stride + R * esz
    return opt_elements(R, C, layout, prof) * esz


# -- element access ---------------------------------------------------------------------------------

@njit(inline="always", **_opts)
def rd_f(addr, code):
    """A matrix/bias element of interpretation `code` as float64 (exact)."""
    if code == I_F16:
        return np.float64(f16_to_f32(ld_u16(addr)))
    if code == I_F32:
        return np.float64(ld_f32(addr))
    if code == I_F64:
        return ld_f64(addr)
    if code == I_S8 or code == I_S8P:
        return np.float64(ld_i8(addr))
    if code == I_S16:
        return np.float64(ld_i16(addr))
    if code == I_S32:
        return np.float64(ld_i32(addr))
    if code == I_S64:
        return np.float64(ld_i64(addr))
    if code == I_U8 or code == I_U8P:
        return np.float64(ld_u8(addr))
    if code == I_U16:
        return np.float64(ld_u16(addr))
    if code == I_U32:
        return np.float64(ld_u32(addr))
    if code == I_U64:
        return np.float64(ld_u64(addr))
    if code == I_E4M3:
        return np.float64(e4m3_to_f32(ld_u8(addr)))
    return np.float64(e5m2_to_f32(ld_u8(addr)))


@njit(inline="always", **_opts)
def rd_i(addr, code):
    """An integer matrix/bias element as int64 (64-bit unsigned values keep their bits)."""
    if code == I_S8 or code == I_S8P:
        return np.int64(ld_i8(addr))
    if code == I_S16:
        return np.int64(ld_i16(addr))
    if code == I_S32:
        return np.int64(ld_i32(addr))
    if code == I_S64:
        return ld_i64(addr)
    if code == I_U8 or code == I_U8P:
        return np.int64(ld_u8(addr))
    if code == I_U16:
        return np.int64(ld_u16(addr))
    if code == I_U32:
        return np.int64(ld_u32(addr))
    return np.int64(ld_u64(addr))


@njit(inline="always", **_opts)
def int_bounds(code):
    """(lo, hi) of a signed interpretation, as int64; unsigned ones: (0, hi) with U64 hi = -1."""
    if code == I_S8 or code == I_S8P:
        return np.int64(-128), np.int64(127)
    if code == I_S16:
        return np.int64(-32768), np.int64(32767)
    if code == I_S32:
        return np.int64(-2147483648), np.int64(2147483647)
    if code == I_S64:
        return np.int64(-9223372036854775807 - 1), np.int64(9223372036854775807)
    if code == I_U8 or code == I_U8P:
        return np.int64(0), np.int64(255)
    if code == I_U16:
        return np.int64(0), np.int64(65535)
    if code == I_U32:
        return np.int64(0), np.int64(4294967295)
    return np.int64(0), np.int64(-1)


@njit(inline="always", **_opts)
def sat_int(v, kind, code):
    """An integer input component (signed or unsigned by `kind`) saturated to an integer
    interpretation, as int64 bits."""
    lo, hi = int_bounds(code)
    if kind == K_SINT:
        s = np.int64(v)
        if code == I_U64:
            return s if s > 0 else np.int64(0)
        if s < lo:
            return lo
        if s > hi:
            return hi
        return s
    u = np.uint64(v)
    if code == I_U64:
        return np.int64(u)
    if u > np.uint64(hi):
        return hi
    return np.int64(u)


@njit(inline="always", **_opts)
def f_to_int(x, code):
    """Float -> integer interpretation: round to nearest even, saturating (NaN -> 0)."""
    x = np.float64(x)
    if x != x:
        return np.int64(0)
    r = np.rint(x)
    lo, hi = int_bounds(code)
    if code == I_U64:
        if r <= 0.0:
            return np.int64(0)
        if r >= 18446744073709551616.0:
            return np.int64(-1)
        return np.int64(np.uint64(r))
    if r <= np.float64(lo):
        return lo
    if r >= np.float64(hi):
        return hi
    return np.int64(r)


@njit(inline="always", **_opts)
def i_as_f(v, code):
    """int64 bits of an integer interpretation as float64 (U64: unsigned)."""
    if code == I_U64:
        return np.float64(np.uint64(v))
    return np.float64(v)


@njit(inline="always", **_opts)
def f_to_interp(x, code, nvidia):
    """Float -> float interpretation (round to nearest even; 8-bit floats saturate to their
    largest finite value; `nvidia`: 8-bit float interpretations keep the input unquantized)."""
    if code == I_F16:
        return np.float64(round_f16_64(x))
    if code == I_F32:
        return np.float64(np.float32(x))
    if code == I_F64:
        return np.float64(x)
    if nvidia:
        return np.float64(x)
    if code == I_E4M3:
        return np.float64(e4m3_to_f32(f64_to_e4m3(np.float64(x), True)))
    return np.float64(e5m2_to_f32(f64_to_e5m2(np.float64(x), True)))


@njit(inline="always", **_opts)
def in_f(Xf, Xi, k, l, kind, bits, code, nvidia):
    """Input element k of lane l converted to its interpretation, as float64."""
    if code == I_S8P or code == I_U8P:
        w = np.uint32(Xi[k >> 2, l])
        b = (w >> np.uint32(8 * (k & 3))) & np.uint32(255)
        if code == I_S8P and b >= 128:
            return np.float64(np.int64(b) - 256)
        return np.float64(b)
    if kind == K_FLOAT:
        x = Xf[k, l]
        if is_int_code(code):
            return i_as_f(f_to_int(x, code), code)
        return f_to_interp(x, code, nvidia)
    x = in_int(Xi, k, l, kind, bits)
    if is_int_code(code):
        return i_as_f(sat_int(x, kind, code), code)
    if kind == K_SINT:
        return f_to_interp(np.float64(np.int64(x)), code, nvidia)
    return f_to_interp(np.float64(np.uint64(x)), code, nvidia)


@njit(inline="always", **_opts)
def in_i(Xf, Xi, k, l, kind, bits, code):
    """Input element k of lane l converted to an integer interpretation, as int64 bits."""
    if code == I_S8P or code == I_U8P:
        w = np.uint32(Xi[k >> 2, l])
        b = (w >> np.uint32(8 * (k & 3))) & np.uint32(255)
        if code == I_S8P and b >= 128:
            return np.int64(b) - 256
        return np.int64(b)
    if kind == K_FLOAT:
        return f_to_int(Xf[k, l], code)
    return sat_int(in_int(Xi, k, l, kind, bits), kind, code)


@njit(inline="always", **_opts)
def in_int(Xi, k, l, kind, bits):
    """An integer input component (held sign-extended in int64) as signed or unsigned per
    `kind` (MatrixBSignedComponents), as int64 bits."""
    v = Xi[k, l]
    if kind == K_UINT and bits < 64:
        v &= (np.int64(1) << bits) - 1
    elif kind == K_SINT and bits < 64:
        sh = 64 - bits
        v = (v << sh) >> sh
    return v


@njit(inline="always", **_opts)
def is_int_code(code):
    return code >= I_S8 and code <= I_U8P


# -- float16 rounding of an exactly known sum --------------------------------------------------------

@njit(inline="always", **_opts)
def two_sum(a, b):
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


@njit(**_opts)
def round_f16_pair(s, e):
    """float16 (as float32) nearest to the exact s + e, where |e| <= ulp(s)/2 (a two_sum pair):
    s rounds the same unless s is exactly halfway between two float16 values."""
    r = round_f16_64(s)
    if e == 0.0 or s != s:
        return r
    rd = np.float64(r)
    if np.isinf(rd):
        if abs(s) == 65520.0 and (e < 0.0) == (s > 0.0):
            return np.float32(65504.0) if s > 0.0 else np.float32(-65504.0)
        return r
    d = s - rd
    if d == 0.0:
        return r
    h = np.int64(f32_to_f16(r)) & 0x7FFF
    neg = rd < 0.0 or (rd == 0.0 and d < 0.0)
    away = (d > 0.0) != neg          # the other neighbour is further from zero
    if rd == 0.0:
        o = np.float64(f16_to_f32(1)) * (-1.0 if d < 0.0 else 1.0)
    else:
        hb = h + 1 if away else h - 1
        o = np.float64(f16_to_f32(hb))
        if neg:
            o = -o
    if 2.0 * s != rd + o:
        return r                      # not a midpoint
    # halfway: the sign of e decides
    if (e > 0.0) == (o > rd):
        return np.float32(o)
    return np.float32(rd)


# -- the batched product ---------------------------------------------------------------------------

@njit(**_opts)
def _decode_f(A, maddr, stride, cfg):
    M = cfg[C_M]
    K = cfg[C_K]
    code = cfg[C_MAT_I]
    esz = SIZES_ARR[code] if cfg[C_PROF] == 0 or cfg[C_LAYOUT] < 2 or code < I_E4M3 else 2
    rcode = code if esz != 2 or code < I_E4M3 else I_F16
    layout = cfg[C_LAYOUT]
    tr = cfg[C_TRANS] != 0
    R = K if tr else M
    C = M if tr else K
    for i in range(M):
        for j in range(K):
            r = j if tr else i
            c = i if tr else j
            A[i, j] = rd_f(maddr + elem_offset(r, c, R, C, layout, stride, esz, cfg[C_PROF]), rcode)


@njit(**_opts)
def _decode_i(A, maddr, stride, cfg):
    M = cfg[C_M]
    K = cfg[C_K]
    code = cfg[C_MAT_I]
    esz = SIZES_ARR[code]
    layout = cfg[C_LAYOUT]
    tr = cfg[C_TRANS] != 0
    R = K if tr else M
    C = M if tr else K
    for i in range(M):
        for j in range(K):
            r = j if tr else i
            c = i if tr else j
            A[i, j] = rd_i(maddr + elem_offset(r, c, R, C, layout, stride, esz, cfg[C_PROF]), code)


SIZES_ARR = np.array(SIZES, np.int64)


@njit(inline="always", **_opts)
def mat_bytes(cfg, stride):
    code = cfg[C_MAT_I]
    esz = SIZES_ARR[code]
    if cfg[C_PROF] == 1 and cfg[C_LAYOUT] >= 2 and code >= I_E4M3:
        esz = 2
    tr = cfg[C_TRANS] != 0
    R = cfg[C_K] if tr else cfg[C_M]
    C = cfg[C_M] if tr else cfg[C_K]
    return extent(R, C, cfg[C_LAYOUT], stride, esz, cfg[C_PROF])


@njit(inline="always", **_opts)
def _inside(addr, n, base, size, ranges):
    if n <= 0:
        return True
    if base >= 0:
        return addr >= base and addr + n <= base + size
    return in_ranges(ranges, addr, n)


@njit(**_opts)
def matmul(state, wait, Xf, Xi, Rf, Ri, maddr, moff, mstride, baddr, boff, cfg, Af, Ai, key, mbase, msize,
           bbase, bsize, ranges, info, work):
    """OpCooperativeVectorMatrixMul[Add]NV for the lanes with state == wait. Xf/Xi: K_in x W
    input components (float inputs in Xf, integers sign-extended in Xi; the other is a dummy),
    Rf/Ri: M x W results (float results, already rounded to the result type, in Rf; integer
    results in Ri, to be truncated to 32 bits); maddr/moff/mstride/baddr/boff: per-lane operands; A: the
    decoded-matrix cache of this site (M x K, float64 or int64 per cfg[C_INT_PATH]), key: what it
    holds; work: a float64 workspace of (M + K) x W (no large allocation per call: those are
    mmap/munmap pairs that serialize threads). Returns -1, or the lane of a failed bounds check (info[0]: 1 matrix, 2 bias;
    info[1]: byte offset, info[2]: bytes)."""
    W = state.shape[0]
    M = cfg[C_M]
    done = np.zeros(W, np.bool_)
    lanes = np.empty(W, np.int64)
    for l0 in range(W):
        if state[l0] != wait or done[l0]:
            continue
        ma = np.int64(maddr[l0]) + np.int64(moff[l0])
        st = np.int64(mstride[l0])
        ba = np.int64(baddr[l0]) + np.int64(boff[l0])
        n = 0
        for l in range(l0, W):
            if state[l] == wait and not done[l] and np.int64(maddr[l]) + np.int64(moff[l]) == ma \
                    and np.int64(mstride[l]) == st \
                    and (cfg[C_HAS_BIAS] == 0 or np.int64(baddr[l]) + np.int64(boff[l]) == ba):
                lanes[n] = l
                n += 1
                done[l] = True
        if key[0] != ma or key[1] != st or key[2] != 1:
            nb = mat_bytes(cfg, st)
            if not _inside(ma, nb, mbase, msize, ranges):
                info[0] = 1
                info[1] = ma - mbase if mbase >= 0 else ma
                info[2] = nb
                return l0
            if cfg[C_INT_PATH] != 0:
                _decode_i(Ai, ma, st, cfg)
            else:
                _decode_f(Af, ma, st, cfg)
            key[0] = ma
            key[1] = st
            key[2] = 1
        if cfg[C_HAS_BIAS] != 0:
            nb = M * SIZES_ARR[cfg[C_BIAS_I]]
            if not _inside(ba, nb, bbase, bsize, ranges):
                info[0] = 2
                info[1] = ba - bbase if bbase >= 0 else ba
                info[2] = nb
                return l0
        if cfg[C_INT_PATH] != 0:
            _group_int(Xf, Xi, Ri, Ai, ba, cfg, lanes, n)
        elif cfg[C_NVIDIA] != 0 and cfg[C_RES_KIND] == K_FLOAT and cfg[C_RES_I] == I_F16:
            _group_nv16(Xf, Xi, Rf, Af, ba, cfg, lanes, n)
        else:
            _group_float(Xf, Xi, Rf, Ri, Af, ba, cfg, lanes, n, work)
    return -1


@njit(**_opts)
def _group_int(Xf, Xi, R, A, ba, cfg, lanes, n):
    M = cfg[C_M]
    K = cfg[C_K]
    xs = np.empty(K, np.int64)
    for q in range(n):
        l = lanes[q]
        for k in range(K):
            xs[k] = in_i(Xf, Xi, k, l, cfg[C_IN_KIND], cfg[C_IN_BITS], cfg[C_IN_I])
        for i in range(M):
            acc = np.int64(0)
            if cfg[C_HAS_BIAS] != 0:
                acc = rd_i(ba + i * SIZES_ARR[cfg[C_BIAS_I]], cfg[C_BIAS_I])
            for k in range(K):
                acc += A[i, k] * xs[k]          # wraps mod 2^64
            R[i, l] = acc                       # truncated to the result width by cv_put


@njit(inline="always", **_opts)
def _product(A, X, P, n):
    """P = A @ X in float64 (X: K x n and P: M x n, row-major in flat arrays), each sum in K
    order. Loops rather than np.dot and reshape: BLAS and numba's reshape are symbols of numba's
    runtime that the kernel library (jitcoop.runtime.library) does not provide; the inner loop
    runs along rows of X and P, which LLVM vectorizes."""
    M, K = A.shape
    for i in range(M):
        for q in range(n):
            P[i * n + q] = 0.0
        for k in range(K):
            a = A[i, k]
            for q in range(n):
                P[i * n + q] += a * X[k * n + q]


@njit(**_opts)
def _group_float(Xf, Xi, Rf, Ri, A, ba, cfg, lanes, n, work):
    M = cfg[C_M]
    K = cfg[C_K]
    Xg = work[:K * n]                            # K x n, row-major
    P = work[K * n:K * n + M * n]                # M x n
    kind = cfg[C_IN_KIND]
    ii = cfg[C_IN_I]
    if kind == K_FLOAT and (ii == I_F32 or ii == I_F64 or (ii == I_F16 and cfg[C_IN_BITS] == 16)):
        for k in range(K):                       # already exact in the interpretation
            for q in range(n):
                Xg[k * n + q] = Xf[k, lanes[q]]
    else:
        for q in range(n):
            l = lanes[q]
            for k in range(K):
                Xg[k * n + q] = in_f(Xf, Xi, k, l, kind, cfg[C_IN_BITS], ii, cfg[C_NVIDIA] != 0)
    _product(A, Xg, P, n)
    rk = cfg[C_RES_KIND]
    ri = cfg[C_RES_I]
    for i in range(M):
        b = 0.0
        if cfg[C_HAS_BIAS] != 0:
            b = rd_f(ba + i * SIZES_ARR[cfg[C_BIAS_I]], cfg[C_BIAS_I])
        # one rounding of the float64 sum to the result type (loops per case: tight and fast)
        if rk == K_FLOAT and ri == I_F16:
            for q in range(n):
                Rf[i, lanes[q]] = round_f16_64(P[i * n + q] + b)
        elif rk == K_FLOAT and ri == I_F32:
            for q in range(n):
                Rf[i, lanes[q]] = np.float32(P[i * n + q] + b)
        elif rk == K_FLOAT:
            for q in range(n):
                Rf[i, lanes[q]] = P[i * n + q] + b
        else:
            code = I_S32 if rk == K_SINT else I_U32
            for q in range(n):
                Ri[i, lanes[q]] = f_to_int(P[i * n + q] + b, code)


@njit(**_opts)
def _group_nv16(Xf, Xi, R, A, ba, cfg, lanes, n):
    """The H100 float16 model: acc = bias (f16); per 16-wide chunk of K, acc = f16(acc + exact
    sum of the chunk's products). Products are exact in float64; the sum is kept as a two_sum
    pair, so the one rounding per chunk is correct."""
    M = cfg[C_M]
    K = cfg[C_K]
    xs = np.empty(K, np.float64)
    for q in range(n):
        l = lanes[q]
        for k in range(K):
            xs[k] = in_f(Xf, Xi, k, l, cfg[C_IN_KIND], cfg[C_IN_BITS], cfg[C_IN_I], True)
        for i in range(M):
            acc = np.float32(0.0)
            if cfg[C_HAS_BIAS] != 0:
                acc = round_f16_64(rd_f(ba + i * SIZES_ARR[cfg[C_BIAS_I]], cfg[C_BIAS_I]))
            for k0 in range(0, K, 16):
                s = np.float64(acc)
                c = 0.0
                for k in range(k0, min(K, k0 + 16)):
                    s, e = two_sum(s, A[i, k] * xs[k])
                    c += e
                s2, e2 = two_sum(s, c)
                acc = round_f16_pair(s2, e2)
            R[i, l] = np.float64(acc)


@njit(**_opts)
def put(dst, src, state, wait):
    """Results of the waiting lanes into their slot rows (other lanes' slots are left alone)."""
    for i in range(dst.shape[0]):
        for l in range(dst.shape[1]):
            if state[l] == wait:
                dst[i, l] = src[i, l]


# -- atomic accumulation -----------------------------------------------------------------------------

@intrinsic
def _cmpxchg_u16(typingctx, addr, cmp, new):
    def codegen(context, builder, sig, args):
        i16 = ir.IntType(16)
        ptr = builder.inttoptr(args[0], i16.as_pointer())
        c = context.cast(builder, args[1], sig.args[1], types.uint16)
        n = context.cast(builder, args[2], sig.args[2], types.uint16)
        pair = builder.cmpxchg(ptr, c, n, "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)
    return types.uint16(types.int64, cmp, new), codegen


@njit(inline="always", **_opts)
def atomic_add_f16(addr, x):
    """Atomically mem = f16(mem + x) (x float64, one rounding)."""
    old = ld_u16(addr)
    while True:
        new = f32_to_f16(round_f16_64(np.float64(f16_to_f32(old)) + x))
        got = _cmpxchg_u16(addr, old, new)
        if got == old:
            return
        old = got


@njit(inline="always", **_opts)
def atomic_add_f32x(addr, x):
    """Atomically mem = f32(mem + x) (x float64, one rounding)."""
    old = ld_u32(addr)
    while True:
        new = f32_bits(np.float32(np.float64(bits_f32(old)) + x))
        got = atomic_cmpxchg_u32(addr, old, new)
        if got == old:
            return
        old = got


@njit(inline="always", **_opts)
def atomic_add_code(addr, x, xi, code):
    """Atomic add of x (float64) / xi (int64) into an element of interpretation `code`."""
    if code == I_F16:
        atomic_add_f16(addr, x)
    elif code == I_F32:
        atomic_add_f32x(addr, x)
    elif code == I_S32:
        atomic_add_i32(addr, np.int32(xi))
    elif code == I_U32:
        atomic_add_u32(addr, np.uint32(xi))
    elif code == I_S64:
        atomic_add_i64(addr, xi)
    elif code == I_U64:
        atomic_add_u64(addr, np.uint64(xi))
    else:
        # float64: a compare-and-swap loop on the bits
        old = ld_u64(addr)
        while True:
            new = f64_bits(bits_f64(old) + x)
            got = _cas64(addr, old, new)
            if got == old:
                return
            old = got


@intrinsic
def _cas64(typingctx, addr, cmp, new):
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        ptr = builder.inttoptr(args[0], i64.as_pointer())
        c = context.cast(builder, args[1], sig.args[1], types.uint64)
        n = context.cast(builder, args[2], sig.args[2], types.uint64)
        pair = builder.cmpxchg(ptr, c, n, "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)
    return types.uint64(types.int64, cmp, new), codegen


@njit(**_opts)
def outer_product(state, wait, A, B, paddr, poff, pstride, layout, code, prof, base, size, ranges,
                  info):
    """OpCooperativeVectorOuterProductAccumulateNV for the waiting lanes: the M x N matrix at
    paddr + poff gets A[i] * B[j] (exact in float64) atomically added to element (i, j)."""
    W = state.shape[0]
    M = A.shape[0]
    N = B.shape[0]
    esz = SIZES_ARR[code]
    for l in range(W):
        if state[l] != wait:
            continue
        addr = np.int64(paddr[l]) + np.int64(poff[l])
        st = np.int64(pstride[l])
        nb = extent(M, N, layout, st, esz, prof)
        if not _inside(addr, nb, base, size, ranges):
            info[0] = 1
            info[1] = addr - base if base >= 0 else addr
            info[2] = nb
            return l
        for i in range(M):
            a = np.float64(A[i, l])
            for j in range(N):
                p = a * np.float64(B[j, l])
                atomic_add_code(addr + elem_offset(i, j, M, N, layout, st, esz, prof), p,
                                np.int64(0), code)
    return -1


@njit(**_opts)
def reduce_sum(state, wait, Vf, Vi, paddr, poff, code, base, size, ranges, info):
    """OpCooperativeVectorReduceSumAccumulateNV: element i of V atomically added to element i
    of the array (V's component type) at paddr + poff."""
    W = state.shape[0]
    n = Vf.shape[0] if code == I_F16 or code == I_F32 or code == I_F64 else Vi.shape[0]
    esz = SIZES_ARR[code]
    for l in range(W):
        if state[l] != wait:
            continue
        addr = np.int64(paddr[l]) + np.int64(poff[l])
        if not _inside(addr, n * esz, base, size, ranges):
            info[0] = 1
            info[1] = addr - base if base >= 0 else addr
            info[2] = n * esz
            return l
        for i in range(n):
            if code == I_F16 or code == I_F32 or code == I_F64:
                atomic_add_code(addr + i * esz, Vf[i, l], np.int64(0), code)
            else:
                atomic_add_code(addr + i * esz, 0.0, Vi[i, l], code)
    return -1
