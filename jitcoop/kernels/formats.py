"""Exact conversions between float32/float64 and the small float formats, for generated kernels.

Small float values travel as their bit patterns in unsigned integers (float16 and bfloat16 in a
uint16, the OCP FP8 formats in a uint8); inside a kernel, arithmetic on them is done in float32 on
values the format can represent, rounding after each operation (`round_f16`, `round_bf16`, ...).

Every conversion is integer bit manipulation on the IEEE encodings (no float tricks), so the results
are exact whatever fast-math flags the calling kernel is compiled with, and all rounding is
round-to-nearest-even from the source value directly (float64 sources are not rounded to float32
first). Formats:

- float16 (IEEE binary16): bias 15, 10 mantissa bits. Overflow gives inf; a NaN gives the quiet NaN
  0x7E00 with the source's sign.
- bfloat16: the top half of a float32. A NaN keeps its sign and top payload bits and is quieted
  (0x0040 set), as x86 VCVTNEPS2BF16 does.
- E4M3 (OCP FP8 E4M3FN): bias 7, 3 mantissa bits, no infinities, S.1111.111 is NaN, max 448.
  Encoding a NaN gives 0x7F with the sign; overflow gives NaN, or +-448 when saturating.
- E5M2 (OCP FP8 E5M2): bias 15, 2 mantissa bits, IEEE-like: 0x7C is inf, 0x7D..0x7F NaN, max 57344.
  Encoding a NaN gives 0x7E with the sign; overflow gives inf, or +-57344 when saturating.
  Saturation (both FP8 formats) clamps infinite inputs too, as OCP's saturating mode and CUDA's
  __NV_SATFINITE do; a NaN stays NaN.

A value rounds to overflow when it is at least the largest finite value plus half its ulp; exactly
that halfway value overflows when the largest finite value has an odd mantissa (float16, bfloat16,
E5M2) and rounds down to it when even (E4M3: 464 -> 448).

The scalar functions are `@njit(inline='always')`: callable from njit code (where they inline) and
from Python. Host code converts whole arrays with the `to_*_bits` / `from_*_bits` helpers at the end.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = [
    "f32_bits", "bits_f32", "f64_bits", "bits_f64",
    "f32_to_f16", "f64_to_f16", "f16_to_f32", "f32_to_f16_fast", "f16_to_f32_fast", "round_f16",
    "round_f16_64",
    "f32_to_bf16", "f64_to_bf16", "bf16_to_f32", "round_bf16",
    "f32_to_e4m3", "f64_to_e4m3", "e4m3_to_f32", "round_e4m3", "f16_to_e4m3",
    "f32_to_e5m2", "f64_to_e5m2", "e5m2_to_f32", "round_e5m2", "f16_to_e5m2",
    "to_f16_bits", "from_f16_bits", "to_bf16_bits", "from_bf16_bits",
    "to_e4m3_bits", "from_e4m3_bits", "to_e5m2_bits", "from_e5m2_bits",
]

_JIT = dict(cache=True)


# -- bit casts ------------------------------------------------------------------------------------

def _make_float_to_bits(fty, uty, width):
    @intrinsic
    def float_to_bits(typingctx, x):
        if not isinstance(x, types.Float):
            return None

        def codegen(context, builder, sig, args):
            v = context.cast(builder, args[0], sig.args[0], fty)
            return builder.bitcast(v, ir.IntType(width))
        return uty(x), codegen
    return float_to_bits


def _make_bits_to_float(fty, uty, width):
    @intrinsic
    def bits_to_float(typingctx, u):
        if not isinstance(u, (types.Integer, types.Boolean)):
            return None

        def codegen(context, builder, sig, args):
            v = context.cast(builder, args[0], sig.args[0], uty)
            return builder.bitcast(v, context.get_value_type(fty))
        return fty(u), codegen
    return bits_to_float


f32_bits = _make_float_to_bits(types.float32, types.uint32, 32)
f32_bits.__doc__ = "The IEEE bits of a float as a uint32 (a float64 argument is converted to float32 first)."
bits_f32 = _make_bits_to_float(types.float32, types.uint32, 32)
bits_f32.__doc__ = "The float32 whose bits are the low 32 bits of an integer."
f64_bits = _make_float_to_bits(types.float64, types.uint64, 64)
f64_bits.__doc__ = "The IEEE bits of a float (converted to float64, exactly) as a uint64."
bits_f64 = _make_bits_to_float(types.float64, types.uint64, 64)
bits_f64.__doc__ = "The float64 whose bits are an integer's 64 bits."


# -- generic rounding cores -----------------------------------------------------------------------
# `a` is the magnitude (sign bit cleared) of a finite or infinite source, as an int64. The result is
# the magnitude code (exponent << mbits | mantissa) of the target format with round-to-nearest-even,
# possibly past the largest finite code (the caller decides what overflow gives). Targets whose
# smallest subnormal is far above the source's subnormals only: any source subnormal rounds to 0.

@njit(**_JIT)
def _rne_from32(a, mbits, bias):
    if a >= ((128 - bias) << 23):               # a normal of the target: rebias the exponent
        v = a - ((127 - bias) << 23)
        sh = 23 - mbits
    else:                                      # a subnormal of the target, in units of its lsb
        sh = 151 - bias - mbits - (a >> 23)
        if sh > 26:                            # below a quarter of the lsb: 0 (keeps shifts small)
            sh = 26
        v = (a & 0x7FFFFF) | 0x800000
    return (v + (1 << (sh - 1)) - 1 + ((v >> sh) & 1)) >> sh


@njit(**_JIT)
def _rne_from64(a, mbits, bias):
    if a >= ((1024 - bias) << 52):
        v = a - ((1023 - bias) << 52)
        sh = 52 - mbits
    else:
        sh = 1076 - bias - mbits - (a >> 52)
        if sh > 55:
            sh = 55
        v = (a & 0xFFFFFFFFFFFFF) | 0x10000000000000
    return (v + (1 << (sh - 1)) - 1 + ((v >> sh) & 1)) >> sh


@njit(**_JIT)
def _sub_f32_bits(m, scale):
    """float32 bits of the integer m (1 <= m < 2**24) times 2**-scale, exactly (no float math)."""
    return np.int64(f32_bits(np.float32(m))) - (scale << 23)


# -- float16 --------------------------------------------------------------------------------------

@njit(**_JIT)
def f32_to_f16(x):
    """float32 -> float16 bits (uint16), round to nearest even."""
    b = np.int64(f32_bits(x))
    sign = (b >> 16) & 0x8000
    a = b & 0x7FFFFFFF
    if a > 0x7F800000:
        return np.uint16(sign | 0x7E00)
    r = _rne_from32(a, 10, 15)
    if r > 0x7C00:
        r = 0x7C00
    return np.uint16(sign | r)


@njit(**_JIT)
def f64_to_f16(x):
    """float64 -> float16 bits (uint16), rounded once, directly from the double."""
    b = np.int64(f64_bits(x))
    sign = (b >> 48) & 0x8000
    a = b & 0x7FFFFFFFFFFFFFFF
    if a > 0x7FF0000000000000:
        return np.uint16(sign | 0x7E00)
    r = _rne_from64(a, 10, 15)
    if r > 0x7C00:
        r = 0x7C00
    return np.uint16(sign | r)


@njit(**_JIT)
def f16_to_f32(h):
    """float16 bits -> float32, exact (NaN payloads kept)."""
    h = np.int64(h) & 0xFFFF
    sign = (h & 0x8000) << 16
    a = h & 0x7FFF
    if a >= 0x7C00:
        return bits_f32(sign | 0x7F800000 | ((a & 0x3FF) << 13))
    if a >= 0x400:
        return bits_f32(sign | ((a << 13) + (112 << 23)))
    if a == 0:
        return bits_f32(sign)
    return bits_f32(sign | _sub_f32_bits(a, 24))


def _host_has_f16c() -> bool:
    from llvmlite import binding as llvm
    try:
        return "+f16c" in str(llvm.get_host_cpu_features().flatten())
    except RuntimeError:
        return False


HAS_F16C = _host_has_f16c()


def f16_bits_to_f32_ir(builder, h16, n=0):
    """LLVM IR: float16 bits (i16, or <n x i16>) -> their float32 bit patterns (i32 or <n x i32>)
    by the processor's conversion (F16C), NaNs rebuilt bit for bit: the instruction quiets
    signalling NaNs, and a matrix load must keep every bit."""
    i32 = ir.IntType(32)
    vt = ir.VectorType(i32, n) if n else i32
    c = lambda x: ir.Constant(vt, [x] * n if n else x)
    ht, ft = ((ir.VectorType(ir.HalfType(), n), ir.VectorType(ir.FloatType(), n)) if n
              else (ir.HalfType(), ir.FloatType()))
    f = builder.fpext(builder.bitcast(h16, ht), ft)
    hx = builder.zext(h16, vt)
    is_nan = builder.icmp_unsigned(">", builder.and_(hx, c(0x7FFF)), c(0x7C00))
    nan = builder.or_(builder.or_(builder.shl(builder.and_(hx, c(0x8000)), c(16)), c(0x7F800000)),
                      builder.shl(builder.and_(hx, c(0x3FF)), c(13)))
    return builder.select(is_nan, nan, builder.bitcast(f, vt))


def _f32_bits_nan_ir(builder, b):
    """LLVM IR: whether float32 bits b (i32) are a NaN, tested on the bits (a floating-point test
    and select may let LLVM swap one NaN for another)."""
    i32 = ir.IntType(32)
    return builder.icmp_unsigned(">", builder.and_(b, ir.Constant(i32, 0x7FFFFFFF)),
                                 ir.Constant(i32, 0x7F800000))


@intrinsic
def _f16_to_f32_hw(typingctx, h):
    """float16 bits -> float32 (f16_bits_to_f32_ir)."""
    def codegen(context, builder, sig, args):
        bits = f16_bits_to_f32_ir(builder, builder.trunc(args[0], ir.IntType(16)))
        return builder.bitcast(bits, ir.FloatType())
    return types.float32(types.int64), codegen


@intrinsic
def _f32_to_f16_hw(typingctx, x):
    """float32 -> float16 bits by the processor's conversion (F16C, round to nearest even), NaNs
    written as f32_to_f16 writes them (0x7E00 with the sign) rather than with their payload."""
    def codegen(context, builder, sig, args):
        i16, i32 = ir.IntType(16), ir.IntType(32)
        h = builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), i16)
        b = builder.bitcast(args[0], i32)
        is_nan = _f32_bits_nan_ir(builder, b)
        nan = builder.trunc(builder.or_(builder.and_(builder.lshr(b, ir.Constant(i32, 16)),
                                                     ir.Constant(i32, 0x8000)),
                                        ir.Constant(i32, 0x7E00)), i16)
        return builder.select(is_nan, nan, h)
    return types.uint16(types.float32), codegen


@intrinsic
def _round_f16_hw(typingctx, x):
    """float32 -> float16 -> float32 by the processor's two conversions; a NaN comes back as
    f16_to_f32(f32_to_f16(x)) gives it (quiet, no payload: 0x7FC00000 with the sign), one select
    instead of rebuilding both halves' NaNs. The select is on the bits: LLVM may replace one
    NaN by another in floating-point selects."""
    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        x = args[0]
        f = builder.bitcast(builder.fpext(builder.fptrunc(x, ir.HalfType()), ir.FloatType()), i32)
        b = builder.bitcast(x, i32)
        nan = builder.or_(builder.and_(b, ir.Constant(i32, 0x80000000)), ir.Constant(i32, 0x7FC00000))
        return builder.bitcast(builder.select(_f32_bits_nan_ir(builder, b), nan, f), ir.FloatType())
    return types.float32(types.float32), codegen


if HAS_F16C:
    @njit(**_JIT)
    def f16_to_f32_fast(h):
        """f16_to_f32, branch-free so that loops over it vectorize."""
        return _f16_to_f32_hw(np.int64(h))

    @njit(**_JIT)
    def f32_to_f16_fast(x):
        """f32_to_f16 in two instructions and a select (the same bits for every input)."""
        return _f32_to_f16_hw(np.float32(x))
else:
    f16_to_f32_fast = f16_to_f32
    f32_to_f16_fast = f32_to_f16


@njit(**_JIT)
def round_f16(x):
    """The float32 value of f16_to_f32(f32_to_f16(x)): through F16C where the processor has it
    (both halves give the software's bits), else with a fast path for normal float16 results."""
    if HAS_F16C:
        return _round_f16_hw(np.float32(x))
    b = np.int64(f32_bits(x))
    a = b & 0x7FFFFFFF
    if a >= 0x38800000 and a < 0x477FF000:     # [2**-14, 65520): stays a normal float16
        return bits_f32((b + 0xFFF + ((b >> 13) & 1)) & 0xFFFFE000)
    return f16_to_f32(f32_to_f16(x))


@njit(**_JIT)
def round_f16_64(x):
    """A float64 rounded (once) to float16, as a float32 (a float64 that is exactly a float32,
    such as a converted integer of up to 24 bits, rounds as that float32)."""
    y = np.float32(x)
    if np.float64(y) == x:
        return round_f16(y)
    return _round_f16_64_slow(x)


@njit(**_JIT)
def _round_f16_64_slow(x):
    """(Kept out of round_f16_64 so that the fast path stays small enough to inline.)"""
    return f16_to_f32(f64_to_f16(x))


# -- bfloat16 -------------------------------------------------------------------------------------

@njit(**_JIT)
def f32_to_bf16(x):
    """float32 -> bfloat16 bits (uint16), round to nearest even; NaN stays NaN (quieted)."""
    b = np.int64(f32_bits(x))
    if (b & 0x7FFFFFFF) > 0x7F800000:
        return np.uint16((b >> 16) | 0x40)
    return np.uint16((b + 0x7FFF + ((b >> 16) & 1)) >> 16)


@njit(**_JIT)
def f64_to_bf16(x):
    """float64 -> bfloat16 bits (uint16), rounded once, directly from the double."""
    b = np.int64(f64_bits(x))
    sign = (b >> 48) & 0x8000
    a = b & 0x7FFFFFFFFFFFFFFF
    if a > 0x7FF0000000000000:
        return np.uint16(sign | 0x7FC0 | ((a >> 45) & 0x7F))
    r = _rne_from64(a, 7, 127)
    if r > 0x7F80:
        r = 0x7F80
    return np.uint16(sign | r)


@njit(**_JIT)
def bf16_to_f32(h):
    """bfloat16 bits -> float32, exact."""
    return bits_f32((np.int64(h) & 0xFFFF) << 16)


@njit(**_JIT)
def round_bf16(x):
    """The float32 value of bf16_to_f32(f32_to_bf16(x))."""
    b = np.int64(f32_bits(x))
    if (b & 0x7FFFFFFF) > 0x7F800000:
        return bits_f32((b | 0x400000) & 0xFFFF0000)
    return bits_f32((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000)


# -- FP8 E4M3 (OCP E4M3FN) ------------------------------------------------------------------------

@njit(**_JIT)
def f32_to_e4m3(x, saturate):
    """float32 -> E4M3 bits (uint8), RNE; overflow -> NaN (0x7F), or +-448 when saturating."""
    b = np.int64(f32_bits(x))
    sign = (b >> 24) & 0x80
    a = b & 0x7FFFFFFF
    if a > 0x7F800000:
        return np.uint8(sign | 0x7F)
    r = _rne_from32(a, 3, 7)
    if r > 0x7E:
        r = 0x7E if saturate else 0x7F
    return np.uint8(sign | r)


@njit(**_JIT)
def f64_to_e4m3(x, saturate):
    """float64 -> E4M3 bits (uint8), rounded once."""
    b = np.int64(f64_bits(x))
    sign = (b >> 56) & 0x80
    a = b & 0x7FFFFFFFFFFFFFFF
    if a > 0x7FF0000000000000:
        return np.uint8(sign | 0x7F)
    r = _rne_from64(a, 3, 7)
    if r > 0x7E:
        r = 0x7E if saturate else 0x7F
    return np.uint8(sign | r)


@njit(**_JIT)
def e4m3_to_f32(q):
    """E4M3 bits -> float32, exact (both NaN codes give a quiet NaN with the sign)."""
    q = np.int64(q) & 0xFF
    sign = (q & 0x80) << 24
    a = q & 0x7F
    if a == 0x7F:
        return bits_f32(sign | 0x7FC00000)
    if a >= 0x08:
        return bits_f32(sign | ((a << 20) + (120 << 23)))
    if a == 0:
        return bits_f32(sign)
    return bits_f32(sign | _sub_f32_bits(a, 9))


@njit(**_JIT)
def round_e4m3(x, saturate):
    """The float32 value of e4m3_to_f32(f32_to_e4m3(x, saturate))."""
    return e4m3_to_f32(f32_to_e4m3(x, saturate))


@njit(**_JIT)
def f16_to_e4m3(h, saturate):
    """float16 bits -> E4M3 bits (through float32, which holds the float16 exactly)."""
    return f32_to_e4m3(f16_to_f32(h), saturate)


# -- FP8 E5M2 -------------------------------------------------------------------------------------

@njit(**_JIT)
def f32_to_e5m2(x, saturate):
    """float32 -> E5M2 bits (uint8), RNE; overflow -> inf (0x7C), or +-57344 when saturating."""
    b = np.int64(f32_bits(x))
    sign = (b >> 24) & 0x80
    a = b & 0x7FFFFFFF
    if a > 0x7F800000:
        return np.uint8(sign | 0x7E)
    r = _rne_from32(a, 2, 15)
    if r > 0x7B:
        r = 0x7B if saturate else 0x7C
    return np.uint8(sign | r)


@njit(**_JIT)
def f64_to_e5m2(x, saturate):
    """float64 -> E5M2 bits (uint8), rounded once."""
    b = np.int64(f64_bits(x))
    sign = (b >> 56) & 0x80
    a = b & 0x7FFFFFFFFFFFFFFF
    if a > 0x7FF0000000000000:
        return np.uint8(sign | 0x7E)
    r = _rne_from64(a, 2, 15)
    if r > 0x7B:
        r = 0x7B if saturate else 0x7C
    return np.uint8(sign | r)


@njit(**_JIT)
def e5m2_to_f32(q):
    """E5M2 bits -> float32, exact (E5M2 is the top byte of a float16)."""
    return f16_to_f32((np.int64(q) & 0xFF) << 8)


@njit(**_JIT)
def round_e5m2(x, saturate):
    """The float32 value of e5m2_to_f32(f32_to_e5m2(x, saturate))."""
    return e5m2_to_f32(f32_to_e5m2(x, saturate))


@njit(**_JIT)
def f16_to_e5m2(h, saturate):
    """float16 bits -> E5M2 bits (through float32, which holds the float16 exactly)."""
    return f32_to_e5m2(f16_to_f32(h), saturate)


# -- host array helpers ---------------------------------------------------------------------------
# One plain njit loop per (conversion, source type): the source arrays are flat and contiguous.

@njit(cache=True)
def _f32_f16(src, dst):
    for i in range(src.size):
        dst[i] = f32_to_f16(src[i])


@njit(cache=True)
def _f64_f16(src, dst):
    for i in range(src.size):
        dst[i] = f64_to_f16(src[i])


@njit(cache=True)
def _f16_f32(src, dst):
    for i in range(src.size):
        dst[i] = f16_to_f32(src[i])


@njit(cache=True)
def _f32_bf16(src, dst):
    for i in range(src.size):
        dst[i] = f32_to_bf16(src[i])


@njit(cache=True)
def _f64_bf16(src, dst):
    for i in range(src.size):
        dst[i] = f64_to_bf16(src[i])


@njit(cache=True)
def _f32_e4m3(src, dst, saturate):
    for i in range(src.size):
        dst[i] = f32_to_e4m3(src[i], saturate)


@njit(cache=True)
def _f64_e4m3(src, dst, saturate):
    for i in range(src.size):
        dst[i] = f64_to_e4m3(src[i], saturate)


@njit(cache=True)
def _e4m3_f32(src, dst):
    for i in range(src.size):
        dst[i] = e4m3_to_f32(src[i])


@njit(cache=True)
def _f32_e5m2(src, dst, saturate):
    for i in range(src.size):
        dst[i] = f32_to_e5m2(src[i], saturate)


@njit(cache=True)
def _f64_e5m2(src, dst, saturate):
    for i in range(src.size):
        dst[i] = f64_to_e5m2(src[i], saturate)


def _float_src(arr):
    """A flat contiguous float32 or float64 copy/view of arr: float32 stays float32, anything else
    (float64, float16, integers) goes through float64."""
    a = np.asarray(arr)
    if a.dtype == np.float32:
        return a.shape, np.ascontiguousarray(a).reshape(-1), True
    return a.shape, np.ascontiguousarray(a, dtype=np.float64).reshape(-1), False


def _bits_src(arr, udt):
    a = np.asarray(arr)
    if a.dtype.kind not in "iub" and a.dtype.itemsize == np.dtype(udt).itemsize:
        a = a.view(udt)                        # a float16 (or ml_dtypes) array: its bits
    return a.shape, np.ascontiguousarray(a, dtype=udt).reshape(-1)


def _encode(arr, udt, loop32, loop64, *extra):
    shape, src, is32 = _float_src(arr)
    out = np.empty(src.size, udt)
    (loop32 if is32 else loop64)(src, out, *extra)
    return out.reshape(shape)


def to_f16_bits(arr) -> np.ndarray:
    """float16 bit patterns (uint16) of an array, rounded once from its float32/float64 values."""
    return _encode(arr, np.uint16, _f32_f16, _f64_f16)


def from_f16_bits(arr) -> np.ndarray:
    """float32 values of float16 bit patterns (a uint16 array, or a numpy float16 array)."""
    shape, src = _bits_src(arr, np.uint16)
    out = np.empty(src.size, np.float32)
    _f16_f32(src, out)
    return out.reshape(shape)


def to_bf16_bits(arr) -> np.ndarray:
    """bfloat16 bit patterns (uint16) of an array, rounded once from its float32/float64 values."""
    return _encode(arr, np.uint16, _f32_bf16, _f64_bf16)


def from_bf16_bits(arr) -> np.ndarray:
    """float32 values of bfloat16 bit patterns."""
    shape, src = _bits_src(arr, np.uint16)
    return (src.astype(np.uint32) << np.uint32(16)).view(np.float32).reshape(shape)


def to_e4m3_bits(arr, saturate: bool = False) -> np.ndarray:
    """E4M3 bit patterns (uint8) of an array, rounded once from its float32/float64 values."""
    return _encode(arr, np.uint8, _f32_e4m3, _f64_e4m3, bool(saturate))


def from_e4m3_bits(arr) -> np.ndarray:
    """float32 values of E4M3 bit patterns."""
    shape, src = _bits_src(arr, np.uint8)
    out = np.empty(src.size, np.float32)
    _e4m3_f32(src, out)
    return out.reshape(shape)


def to_e5m2_bits(arr, saturate: bool = False) -> np.ndarray:
    """E5M2 bit patterns (uint8) of an array, rounded once from its float32/float64 values."""
    return _encode(arr, np.uint8, _f32_e5m2, _f64_e5m2, bool(saturate))


def from_e5m2_bits(arr) -> np.ndarray:
    """float32 values of E5M2 bit patterns."""
    shape, src = _bits_src(arr, np.uint8)
    return from_f16_bits(src.astype(np.uint16) << np.uint16(8)).reshape(shape)
