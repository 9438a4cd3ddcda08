"""Scalar helpers for generated code: the integer and float operations whose SPIR-V meaning differs
from Python's or numba's (truncating division, shifts, saturating conversions, bit tricks).

Where SPIR-V leaves a result undefined, these pick one answer and document it (README, "Undefined
results"): x / 0 is all ones (-1 when signed), x % 0 and x mod 0 are x, INT_MIN / -1 is INT_MIN,
shift counts are taken modulo the bit width, float -> int conversions saturate and NaN gives 0.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_opts = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_opts)
def sdiv64(a, b):
    a = np.int64(a); b = np.int64(b)
    if b == 0:
        return np.int64(-1)
    # Divide magnitudes as unsigned numbers so that INT_MIN needs no special case; the negation
    # wraps, which makes INT_MIN / -1 = INT_MIN.
    ua = np.uint64(a) if a >= 0 else np.uint64(0) - np.uint64(a)
    ub = np.uint64(b) if b >= 0 else np.uint64(0) - np.uint64(b)
    q = ua // ub
    if (a < 0) != (b < 0):
        q = np.uint64(0) - q
    return np.int64(q)


@njit(**_opts)
def srem64(a, b):
    a = np.int64(a); b = np.int64(b)
    if b == 0:
        return a
    return np.int64(np.uint64(a) - np.uint64(b) * np.uint64(sdiv64(a, b)))


@njit(**_opts)
def smod64(a, b):
    a = np.int64(a); b = np.int64(b)
    if b == 0:
        return a
    if b == -1:
        return np.int64(0)
    r = srem64(a, b)
    if r != 0 and ((r < 0) != (b < 0)):
        r += b
    return r


@njit(**_opts)
def udiv64(a, b):
    a = np.uint64(a); b = np.uint64(b)
    if b == 0:
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    return a // b


@njit(**_opts)
def umod64(a, b):
    a = np.uint64(a); b = np.uint64(b)
    if b == 0:
        return a
    return a % b


@njit(**_opts)
def f2s(x, lo, hi):
    """float -> signed int in [lo, hi], saturating, NaN -> 0, truncating toward zero."""
    x = np.float64(x)
    if x != x:
        return np.int64(0)
    if x <= lo:
        return np.int64(lo)
    if x >= hi:
        return np.int64(hi)
    return np.int64(x)


@njit(**_opts)
def f2u(x, hi):
    """float -> unsigned int in [0, hi], saturating, NaN -> 0."""
    x = np.float64(x)
    if x != x or x <= 0.0:
        return np.uint64(0)
    if x >= np.float64(hi):
        return np.uint64(hi)
    return np.uint64(x)


@njit(**_opts)
def fmod_spirv(a, b):
    """OpFMod: the result takes the sign of b."""
    r = np.fmod(a, b)
    if r != 0 and ((r < 0) != (b < 0)):
        r += b
    return r


@njit(**_opts)
def popcount64(x):
    x = np.uint64(x)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(**_opts)
def bitreverse(x, width):
    x = np.uint64(x)
    r = np.uint64(0)
    for i in range(width):
        r = (r << np.uint64(1)) | ((x >> np.uint64(i)) & np.uint64(1))
    return r


@njit(**_opts)
def find_lsb(x):
    x = np.uint64(x)
    if x == 0:
        return np.int64(-1)
    n = 0
    while (x & np.uint64(1)) == 0:
        x >>= np.uint64(1)
        n += 1
    return np.int64(n)


@njit(**_opts)
def find_umsb(x):
    x = np.uint64(x)
    n = -1
    while x != 0:
        x >>= np.uint64(1)
        n += 1
    return np.int64(n)


@njit(**_opts)
def bfe_u(base, offset, count, width):
    if count <= 0:
        return np.uint64(0)
    if count >= 64:
        return np.uint64(base) >> np.uint64(offset)
    return (np.uint64(base) >> np.uint64(offset)) & ((np.uint64(1) << np.uint64(count)) - np.uint64(1))


@njit(**_opts)
def bfe_s(base, offset, count, width):
    if count <= 0:
        return np.int64(0)
    v = np.int64(np.uint64(base) << np.uint64(64 - width)) >> np.int64(64 - width)   # sign-extend
    v = v >> np.int64(offset)
    sh = np.int64(64 - count)
    return (v << sh) >> sh


@njit(**_opts)
def bfi(base, insert, offset, count):
    if count <= 0:
        return np.uint64(base)
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) if count >= 64 else ((np.uint64(1) << np.uint64(count)) - np.uint64(1))
    mask = mask << np.uint64(offset)
    return (np.uint64(base) & ~mask) | ((np.uint64(insert) << np.uint64(offset)) & mask)


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
def fmin_gl(a, b):
    # GLSL FMin/NMin: if one operand is NaN the other is returned.
    if a != a:
        return b
    if b != b:
        return a
    return a if a < b or (a == b and a == 0 and math.copysign(1.0, a) < 0) else b


@njit(**_opts)
def fmax_gl(a, b):
    if a != a:
        return b
    if b != b:
        return a
    return a if a > b or (a == b and a == 0 and math.copysign(1.0, a) > 0) else b


@njit(**_opts)
def round_half_even(x):
    return np.rint(x)


@njit(**_opts)
def round_half_away(x):
    if x != x:
        return x
    r = np.floor(abs(x) + 0.5)
    return np.copysign(r, x)


@njit(**_opts)
def fsign(x):
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return x * 0.0 if x == x else x


@njit(**_opts)
def umulhi64(a, b):
    a = np.uint64(a); b = np.uint64(b)
    m = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    al, ah, bl, bh = a & m, a >> s32, b & m, b >> s32
    ll = al * bl
    lh = al * bh
    hl = ah * bl
    hh = ah * bh
    mid = (ll >> s32) + (lh & m) + (hl & m)
    return hh + (lh >> s32) + (hl >> s32) + (mid >> s32)


@njit(**_opts)
def smulhi64(a, b):
    a = np.int64(a); b = np.int64(b)
    hi = umulhi64(np.uint64(a), np.uint64(b))
    if a < 0:
        hi -= np.uint64(b)
    if b < 0:
        hi -= np.uint64(a)
    return np.int64(hi)


@njit(**_opts)
def mask_eq(i, w):
    return np.uint32(1 << (i - 32 * w)) if 32 * w <= i < 32 * w + 32 else np.uint32(0)


@njit(**_opts)
def _mask_from(lo, w):
    # bits lo.. set in word w
    if lo <= 32 * w:
        return np.uint32(0xFFFFFFFF)
    if lo >= 32 * w + 32:
        return np.uint32(0)
    return np.uint32((0xFFFFFFFF << (lo - 32 * w)) & 0xFFFFFFFF)


@njit(**_opts)
def mask_ge(i, w):
    return _mask_from(i, w)


@njit(**_opts)
def mask_gt(i, w):
    return _mask_from(i + 1, w)


@njit(**_opts)
def mask_le(i, w):
    return np.uint32(~_mask_from(i + 1, w))


@njit(**_opts)
def mask_lt(i, w):
    return np.uint32(~_mask_from(i, w))


@njit(**_opts)
def quantize_f16(x):
    """OpQuantizeToF16: round to float16; results too small to be normal become signed zero."""
    from jitcoop.kernels.formats import round_f16
    r = round_f16(np.float32(x))
    if abs(r) < np.float32(6.103515625e-05):
        return np.float32(math.copysign(0.0, x))
    return r


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


@intrinsic
def fresh(typingctx, x):
    """x, as a new value LLVM cannot trace back to x's definition (an empty inline asm that
    returns its operand)."""
    def codegen(context, builder, sig, args):
        ty = args[0].type
        asm = ir.InlineAsm(ir.FunctionType(ty, [ty]), "", "=r,0", side_effect=False)
        return builder.call(asm, [args[0]])
    return x(x), codegen
