"""Small float formats (jitcoop.kernels.formats) against numpy and references written from the
format definitions."""
import math

import numpy as np
import pytest
from numba import njit

from jitcoop.kernels import formats as F
from jitcoop.kernels.coopmat import _vcopy

# numpy warns when its own reference casts overflow or meet signalling NaNs; that is expected here
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

RNG = np.random.default_rng(20240607)


# -- references from the definitions ------------------------------------------------------------

class Fmt:
    """A binary float format: magnitude codes 0..top-1 are the finite values in increasing order,
    `top` is the first code past them (the value it would have by the formula is the rounding
    neighbour above the largest finite value)."""

    def __init__(self, name, mbits, bias, top, ovf, sat, nan, signbit):
        self.name, self.mbits, self.bias, self.top = name, mbits, bias, top
        self.ovf, self.sat, self.nan, self.signbit = ovf, sat, nan, signbit
        self.vals = np.array([self.value(c) for c in range(top + 1)], np.float64)

    def value(self, code):
        """(-1)^s 2^(e-bias) (1 + m/2^mbits) for e > 0, 2^(1-bias) m/2^mbits for e == 0."""
        e, m = code >> self.mbits, code & ((1 << self.mbits) - 1)
        if e == 0:
            return math.ldexp(m / 2 ** self.mbits, 1 - self.bias)
        return math.ldexp(1 + m / 2 ** self.mbits, e - self.bias)


F16 = Fmt("f16", 10, 15, 0x7C00, 0x7C00, None, 0x7E00, 0x8000)
BF16 = Fmt("bf16", 7, 127, 0x7F80, 0x7F80, None, None, 0x8000)
E4M3 = Fmt("e4m3", 3, 7, 0x7F, 0x7F, 0x7E, 0x7F, 0x80)
E5M2 = Fmt("e5m2", 2, 15, 0x7C, 0x7C, 0x7B, 0x7E, 0x80)


def ref_encode(x, fmt, saturate=False):
    """Round-to-nearest-even by comparing distances to the two neighbouring values (float64 math is
    exact here: neighbours are within a factor 2 of x). NaN results are -1."""
    x = np.asarray(x, np.float64)
    finite = np.isfinite(x)
    ax = np.where(finite, np.abs(x), 0.0)
    i = np.minimum(np.searchsorted(fmt.vals, ax, side="right") - 1, fmt.top - 1)
    dlo, dhi = ax - fmt.vals[i], fmt.vals[i + 1] - ax
    code = np.where(dlo < dhi, i, np.where(dhi < dlo, i + 1, np.where(i % 2 == 0, i, i + 1)))
    over = (code >= fmt.top) | np.isinf(x)
    code = np.where(over, fmt.sat if saturate else fmt.ovf, code)
    code = code | np.where(np.signbit(x), fmt.signbit, 0)
    return np.where(np.isnan(x), -1, code).astype(np.int64)


def midpoints(fmt, dtype):
    """Every value halfway between neighbouring codes (and past the top), its neighbours one ulp of
    dtype away, both signs, plus the codes' own values."""
    v = fmt.vals
    mid = ((v[:-1] + v[1:]) / 2).astype(dtype)
    assert np.all(mid.astype(np.float64) == (v[:-1] + v[1:]) / 2)     # exact in dtype
    inf = dtype(np.inf)
    pts = np.concatenate([mid, np.nextafter(mid, inf), np.nextafter(mid, -inf), v.astype(dtype)])
    return np.concatenate([pts, -pts])


def specials(dtype):
    fi = np.finfo(dtype)
    s = [0.0, np.inf, np.nan, fi.max, fi.tiny, fi.smallest_subnormal, fi.tiny / 2, 1.0, 65504.0,
         65519.99, 65520.0, 65536.0, 2.0 ** -24, 2.0 ** -25, 2.0 ** -26, 3 * 2.0 ** -26, 2.0 ** -14,
         448.0, 464.0, 480.0, 57344.0, 61440.0, 2.0 ** -9, 2.0 ** -10, 2.0 ** -16, 2.0 ** -17, 1e30]
    a = np.array(s, dtype)
    return np.concatenate([a, -a])


def random_f32(n):
    bits = RNG.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    logu = np.ldexp(RNG.random(n), RNG.integers(-30, 20, n)).astype(np.float32)
    return np.concatenate([bits, logu * np.where(RNG.random(n) < 0.5, -1, 1).astype(np.float32)])


def random_f64(n):
    bits = RNG.integers(0, 2 ** 63, n, dtype=np.int64).view(np.float64)
    logu = np.ldexp(RNG.random(n), RNG.integers(-30, 20, n))
    return np.concatenate([bits, -bits, logu, -logu])


def check_encoded(got, x, fmt, saturate=False, nan_code=None):
    ref = ref_encode(x, fmt, saturate)
    ok = ref >= 0
    bad = np.nonzero(got[ok].astype(np.int64) != ref[ok])[0]
    assert bad.size == 0, (fmt.name, x[ok][bad[:5]], got[ok][bad[:5]], ref[ok][bad[:5]])
    if nan_code is not None:
        sign = np.where(np.signbit(x[~ok]), fmt.signbit, 0)
        assert np.all(got[~ok].astype(np.int64) == (nan_code | sign))


def same_floats(a, b):
    """Bitwise equal where not NaN, NaN (with the same sign) where the other is NaN."""
    an, bn = np.isnan(a), np.isnan(b)
    assert np.array_equal(an, bn)
    assert np.array_equal(a[~an].view(np.uint32), b[~bn].view(np.uint32))
    assert np.array_equal(np.signbit(a[an]), np.signbit(b[bn]))


ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
ALL8 = np.arange(256, dtype=np.uint16).astype(np.uint8)


# -- float16 ------------------------------------------------------------------------------------

def test_f16_decode_exhaustive():
    got = F.from_f16_bits(ALL16)
    same_floats(got, ALL16.view(np.float16).astype(np.float32))
    # NaN payloads are kept exactly
    h = ALL16.astype(np.uint32)
    nan = ((h & 0x7C00) == 0x7C00) & ((h & 0x3FF) != 0)
    want = ((h & 0x8000) << 16) | 0x7F800000 | ((h & 0x3FF) << 13)
    assert np.array_equal(got.view(np.uint32)[nan], want[nan])
    assert F.from_f16_bits(ALL16.view(np.float16)).shape == (65536,)


def test_f16_encode_exhaustive_roundtrip():
    vals = ALL16.view(np.float16)
    nan = np.isnan(vals)
    for src in (vals.astype(np.float32), vals.astype(np.float64)):
        got = F.to_f16_bits(src)
        assert np.array_equal(got[~nan], ALL16[~nan])
        assert np.array_equal(got[nan], 0x7E00 | (ALL16[nan] & 0x8000))


@njit            # not cached: numba would not see a change in jitcoop.kernels
def _f16_fast_all(x, out):
    for i in range(x.size):
        out[i] = F.f32_to_f16_fast(x[i])


def test_f32_to_f16_fast_vs_numpy():
    """The F16C conversion used by generated code against numpy's rounding (and f32_to_f16's
    NaN code); the same bits as f32_to_f16 were also checked on all 2**32 inputs."""
    x = np.concatenate([midpoints(F16, np.float32), specials(np.float32), random_f32(1 << 22)])
    got = np.empty(x.size, np.uint16)
    _f16_fast_all(x, got)
    nan = np.isnan(x)
    want = x.astype(np.float16).view(np.uint16)
    bad = np.nonzero(got[~nan] != want[~nan])[0]
    assert bad.size == 0, (x[~nan][bad[:5]], got[~nan][bad[:5]], want[~nan][bad[:5]])
    check_encoded(got, x, F16, nan_code=0x7E00)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_f16_encode_vs_numpy(dtype):
    x = np.concatenate([midpoints(F16, dtype), specials(dtype),
                        (random_f32 if dtype == np.float32 else random_f64)(300_000).astype(dtype)])
    got = F.to_f16_bits(x)
    want = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    bad = np.nonzero(got[~nan] != want[~nan])[0]
    assert bad.size == 0, (x[~nan][bad[:5]], got[~nan][bad[:5]], want[~nan][bad[:5]])
    check_encoded(got, x, F16, nan_code=0x7E00)


def test_f16_boundaries():
    enc32 = lambda v: int(F.to_f16_bits(np.float32(v)))
    assert enc32(65504.0) == 0x7BFF
    assert enc32(np.nextafter(np.float32(65520), np.float32(0))) == 0x7BFF
    assert enc32(65520.0) == 0x7C00 and enc32(-65520.0) == 0xFC00
    assert enc32(2.0 ** -25) == 0x0000                     # tie to even (0)
    assert enc32(np.nextafter(np.float32(2 ** -25), np.float32(1))) == 0x0001
    assert enc32(3 * 2.0 ** -25) == 0x0002                 # tie to even (2)
    assert enc32(-2.0 ** -26) == 0x8000
    assert enc32(2.0 ** -14 - 2.0 ** -25) == 0x0400        # rounds up into the normals
    assert enc32(np.float32(np.inf)) == 0x7C00
    # a float64 just above a float16 tie must not round to the float32 tie first
    x = np.nextafter(1.0 + 2.0 ** -11, 2.0)
    assert float(np.float32(x)) == 1.0 + 2.0 ** -11
    assert int(F.to_f16_bits(np.float64(x))) == 0x3C01
    assert int(F.to_f16_bits(np.float32(x))) == 0x3C00
    assert F.f64_to_f16(x) == 0x3C01


def test_scalars_from_python():
    assert F.f32_to_f16(np.float32(1.5)) == 0x3E00
    assert F.f16_to_f32(0xC000) == -2.0
    assert F.f64_to_f16(65520.0) == 0x7C00
    assert F.f32_to_bf16(np.float32(-1.0)) == 0xBF80
    assert F.bf16_to_f32(0x4049) == np.float32(3.140625)
    assert F.f32_to_e4m3(np.float32(500.0), True) == 0x7E
    assert F.f32_to_e4m3(np.float32(500.0), False) == 0x7F
    assert F.f32_to_e5m2(np.float32(-1e6), False) == 0xFC
    assert F.e4m3_to_f32(0x38) == 1.0 and F.e5m2_to_f32(0x3C) == 1.0
    assert F.round_f16(np.float32(0.1)) == np.float32(np.float16(0.1))
    assert math.isnan(F.round_f16(np.float32(np.nan)))


# -- in-kernel use (inlined into fast-math code) -------------------------------------------------

@njit(fastmath=True)
def _kernel_rounds(x32, x64):
    n = x32.size
    f16 = np.empty(n, np.float32)
    f16b = np.empty(n, np.float32)
    f16_64 = np.empty(x64.size, np.float32)
    bf = np.empty(n, np.float32)
    e4 = np.empty(n, np.float32)
    e5 = np.empty(n, np.float32)
    e4s = np.empty(n, np.float32)
    e5s = np.empty(n, np.float32)
    for i in range(n):
        x = x32[i]
        f16[i] = F.round_f16(x)
        f16b[i] = F.f16_to_f32(F.f32_to_f16(x))
        bf[i] = F.round_bf16(x)
        e4[i] = F.round_e4m3(x, False)
        e5[i] = F.round_e5m2(x, False)
        e4s[i] = F.round_e4m3(x, True)
        e5s[i] = F.round_e5m2(x, True)
    for i in range(x64.size):
        f16_64[i] = F.round_f16_64(x64[i])
    return f16, f16b, f16_64, bf, e4, e5, e4s, e5s


@njit
def _kernel_bits(u32, u64):
    a = np.empty(u32.size, np.uint32)
    b = np.empty(u64.size, np.uint64)
    for i in range(u32.size):
        a[i] = F.f32_bits(F.bits_f32(u32[i]))
    for i in range(u64.size):
        b[i] = F.f64_bits(F.bits_f64(u64[i]))
    return a, b, F.bits_f32(np.uint32(0x3F800000)), F.f32_bits(np.float32(-2.0)), \
        F.f64_bits(1.0), F.bits_f64(np.uint64(0xC000000000000000))


def test_bitcasts():
    u32 = np.concatenate([RNG.integers(0, 2 ** 32, 10000, dtype=np.uint64).astype(np.uint32),
                          np.array([0x7F800001, 0xFFBFFFFF, 0x00000001], np.uint32)])
    u64 = np.concatenate([RNG.integers(0, 2 ** 63, 10000, dtype=np.int64).view(np.uint64),
                          np.array([0x7FF0000000000001, 0xFFF8000000000000], np.uint64)])
    a, b, one, m2, d1, dm2 = _kernel_bits(u32, u64)
    assert np.array_equal(a, u32) and np.array_equal(b, u64)      # signalling NaNs untouched
    assert one == 1.0 and m2 == 0xC0000000 and d1 == 0x3FF0000000000000 and dm2 == -2.0


@njit(fastmath=True)
def _kernel_round_f16_bits(u32):
    got = np.empty(u32.size, np.uint32)
    for i in range(u32.size):
        got[i] = F.f32_bits(F.round_f16(F.bits_f32(u32[i])))
    return got


def test_round_f16_gives_the_documented_bits_nans_included():
    """round_f16 (two F16C conversions and a select on the bits) bit for bit against numpy's
    float16 round trip, NaNs as f32_to_f16 writes them: quiet, no payload, the sign kept
    (0x7FC00000 | sign). NaN payloads, signalling NaNs and both signs included: a floating-point
    select may let LLVM pass the hardware's payload-keeping NaN through, a fast-math caller too."""
    nans = RNG.integers(0, 1 << 23, 20000, dtype=np.uint64).astype(np.uint32) | 0x7F800001
    nans[1::2] |= 0x80000000
    u32 = np.concatenate([RNG.integers(0, 2 ** 32, 100_000, dtype=np.uint64).astype(np.uint32), nans,
                          np.array([0x7F800001, 0xFFBFFFFF, 0x7FC00000, 0x7F800000, 0x477FF000,
                                    0x33000000, 0x80000001], np.uint32)])
    got = _kernel_round_f16_bits(u32)
    x = u32.view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16).astype(np.float32).view(np.uint32)
    want = np.where(np.isnan(x), (u32 & 0x80000000) | 0x7FC00000, want).astype(np.uint32)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{bad.size} differ, first {u32[bad[0]]:#x}: {got[bad[0]]:#x}, want {want[bad[0]]:#x}"


def test_rounding_in_kernel():
    x32 = np.concatenate([random_f32(100_000), midpoints(F16, np.float32), midpoints(E4M3, np.float32),
                          midpoints(E5M2, np.float32), specials(np.float32)])
    x64 = np.concatenate([random_f64(50_000), midpoints(F16, np.float64), specials(np.float64)])
    f16, f16b, f16_64, bf, e4, e5, e4s, e5s = _kernel_rounds(x32, x64)
    same_floats(f16, x32.astype(np.float16).astype(np.float32))
    same_floats(f16b, f16)
    same_floats(f16_64, x64.astype(np.float16).astype(np.float32))
    same_floats(bf, F.from_bf16_bits(F.to_bf16_bits(x32)))
    same_floats(e4, F.from_e4m3_bits(F.to_e4m3_bits(x32)))
    same_floats(e5, F.from_e5m2_bits(F.to_e5m2_bits(x32)))
    same_floats(e4s, F.from_e4m3_bits(F.to_e4m3_bits(x32, True)))
    same_floats(e5s, F.from_e5m2_bits(F.to_e5m2_bits(x32, True)))


# -- bfloat16 -----------------------------------------------------------------------------------

def ref_bf16_bits(x32):
    """RNE on the top 16 bits: add 0x7FFF plus the kept lsb, truncate; NaN: top half, quieted."""
    b = x32.view(np.uint32).astype(np.uint64)
    r = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    r = np.where(np.isnan(x32), (b >> 16) | 0x40, r)
    return r.astype(np.uint16)


def test_bf16_decode_exhaustive():
    got = F.from_bf16_bits(ALL16)
    assert np.array_equal(got.view(np.uint32), ALL16.astype(np.uint32) << 16)


def test_bf16_encode_f32():
    x = np.concatenate([midpoints(BF16, np.float32), specials(np.float32), random_f32(300_000),
                        (ALL16.astype(np.uint32) << 16).view(np.float32)])
    got = F.to_bf16_bits(x)
    assert np.array_equal(got, ref_bf16_bits(x))
    check_encoded(got, x, BF16)
    assert np.all(np.isnan(F.from_bf16_bits(got[np.isnan(x)])))


def test_bf16_encode_f64():
    x = np.concatenate([midpoints(BF16, np.float64), specials(np.float64), random_f64(100_000)])
    got = F.to_bf16_bits(x)
    check_encoded(got, x, BF16)
    assert np.all(np.isnan(F.from_bf16_bits(got[np.isnan(x)])))
    # just above a bfloat16 tie in float64, but the tie itself in float32
    t = np.nextafter(1.0 + 2.0 ** -8, 2.0)
    assert int(F.to_bf16_bits(np.float64(t))) == 0x3F81
    assert int(F.to_bf16_bits(np.float32(t))) == 0x3F80


# -- FP8 ----------------------------------------------------------------------------------------

def _fp8_table(ebits, mbits, bias, kind):
    """Decode table for all 256 codes straight from the OCP definitions."""
    out = []
    for c in range(256):
        s, e, m = c >> 7, (c >> mbits) & ((1 << ebits) - 1), c & ((1 << mbits) - 1)
        if kind == "e4m3" and e == 15 and m == 7:
            v = math.nan
        elif kind == "e5m2" and e == 31:
            v = math.inf if m == 0 else math.nan
        elif e == 0:
            v = 2.0 ** (1 - bias) * (m / 2 ** mbits)
        else:
            v = 2.0 ** (e - bias) * (1 + m / 2 ** mbits)
        out.append(-v if s else v)
    return np.array(out, np.float32)


E4M3_TABLE = _fp8_table(4, 3, 7, "e4m3")
E5M2_TABLE = _fp8_table(5, 2, 15, "e5m2")


def test_fp8_tables_spot_values():
    t4, t5 = E4M3_TABLE, E5M2_TABLE
    assert t4[0x01] == 2.0 ** -9 and t4[0x07] == 0.875 * 2.0 ** -6 and t4[0x08] == 2.0 ** -6
    assert t4[0x38] == 1.0 and t4[0x7E] == 448.0 and t4[0xFE] == -448.0
    assert np.isnan(t4[0x7F]) and np.isnan(t4[0xFF]) and np.sum(np.isnan(t4)) == 2
    assert t4[0x80] == 0 and np.signbit(t4[0x80])
    assert t5[0x01] == 2.0 ** -16 and t5[0x04] == 2.0 ** -14 and t5[0x3C] == 1.0
    assert t5[0x7B] == 57344.0 and t5[0x7C] == np.inf and t5[0xFC] == -np.inf
    assert np.sum(np.isnan(t5)) == 6


@pytest.mark.parametrize("fmt,table,dec", [("e4m3", E4M3_TABLE, F.from_e4m3_bits),
                                           ("e5m2", E5M2_TABLE, F.from_e5m2_bits)])
def test_fp8_decode_exhaustive(fmt, table, dec):
    same_floats(dec(ALL8), table)
    scal = F.e4m3_to_f32 if fmt == "e4m3" else F.e5m2_to_f32
    for c in (0x00, 0x01, 0x7B, 0x7C, 0x7F, 0x80, 0xFF):
        v = scal(c)
        assert (math.isnan(v) and math.isnan(table[c])) or v == table[c]


@pytest.mark.parametrize("fmt,enc,dec", [(E4M3, F.to_e4m3_bits, F.from_e4m3_bits),
                                         (E5M2, F.to_e5m2_bits, F.from_e5m2_bits)])
def test_fp8_encode(fmt, enc, dec):
    vals = dec(ALL8)
    nan = np.isnan(vals)
    for sat in (False, True):
        for src in (vals, vals.astype(np.float64)):          # exhaustive round trip
            got = enc(src, sat)
            want = ALL8.copy()
            if sat:
                want[np.isinf(vals)] -= 1                  # +-inf saturates to +-max
            assert np.array_equal(got[~nan], want[~nan])
            assert np.array_equal(got[nan], fmt.nan | (ALL8[nan] & 0x80))
        for dtype, rnd in ((np.float32, random_f32), (np.float64, random_f64)):
            x = np.concatenate([midpoints(fmt, dtype), specials(dtype), rnd(50_000).astype(dtype)])
            check_encoded(enc(x, sat), x, fmt, sat, nan_code=fmt.nan)


def test_fp8_overflow_and_saturation():
    e4 = lambda v, s=False: int(F.to_e4m3_bits(np.float32(v), s))
    e5 = lambda v, s=False: int(F.to_e5m2_bits(np.float32(v), s))
    assert e4(448.0) == 0x7E and e4(464.0) == 0x7E           # tie to even (448 has an even mantissa)
    assert e4(np.nextafter(np.float32(464), np.float32(1e9))) == 0x7F      # NaN: no infinities
    assert e4(-1e6) == 0xFF and e4(np.inf) == 0x7F and e4(-np.inf) == 0xFF
    assert e4(-1e6, True) == 0xFE and e4(np.inf, True) == 0x7E and e4(-np.inf, True) == 0xFE
    assert e4(np.nan, True) == 0x7F and e4(-np.nan, True) == 0xFF
    assert e4(2.0 ** -10) == 0x00 and e4(3 * 2.0 ** -10) == 0x02 and e4(-2.0 ** -10) == 0x80
    assert e5(57344.0) == 0x7B and e5(61440.0) == 0x7C      # tie to even (57344 is odd): inf
    assert e5(np.nextafter(np.float32(61440), np.float32(0))) == 0x7B
    assert e5(1e6) == 0x7C and e5(-np.inf) == 0xFC
    assert e5(1e6, True) == 0x7B and e5(-np.inf, True) == 0xFB and e5(61440.0, True) == 0x7B
    assert e5(np.nan) == 0x7E and e5(np.nan, True) == 0x7E
    assert e5(2.0 ** -17) == 0x00 and e5(np.nextafter(np.float32(2.0 ** -17), np.float32(1))) == 0x01
    assert int(F.to_e4m3_bits(np.float64(np.nextafter(1.0625, 2.0)))) == 0x39   # no double rounding
    assert int(F.to_e5m2_bits(np.float64(np.nextafter(1.125, 2.0)))) == 0x3D


@njit
def _f16_to_fp8(h, sat):
    a = np.empty(h.size, np.uint8)
    b = np.empty(h.size, np.uint8)
    for i in range(h.size):
        a[i] = F.f16_to_e4m3(h[i], sat)
        b[i] = F.f16_to_e5m2(h[i], sat)
    return a, b


def test_f16_to_fp8_exhaustive():
    x = ALL16.view(np.float16).astype(np.float32)
    for sat in (False, True):
        a, b = _f16_to_fp8(ALL16, sat)
        assert np.array_equal(a, F.to_e4m3_bits(x, sat))
        assert np.array_equal(b, F.to_e5m2_bits(x, sat))
        check_encoded(a, x, E4M3, sat, nan_code=0x7F)
        check_encoded(b, x, E5M2, sat, nan_code=0x7E)
    # E5M2 is the float16 top byte: float16 values it holds convert back unchanged
    top = ALL16 & 0xFF00
    ok = ~np.isnan(top.view(np.float16))
    a, b = _f16_to_fp8(top[ok], False)
    assert np.array_equal(b, (top[ok] >> 8).astype(np.uint8))


# -- optional cross-check with ml_dtypes ----------------------------------------------------------

def test_against_ml_dtypes():
    ml = pytest.importorskip("ml_dtypes")
    x32 = np.concatenate([random_f32(100_000), midpoints(E4M3, np.float32), midpoints(E5M2, np.float32),
                          midpoints(BF16, np.float32), specials(np.float32)])
    # float32 sources only: ml_dtypes rounds float64 to float32 first (e.g. 1.0625 + 2**-52 gives
    # E4M3 1.0, not 1.125), which the single-rounding float64 conversions here do not do.
    cases = [(ml.bfloat16, F.to_bf16_bits, F.from_bf16_bits, np.uint16),
             (ml.float8_e4m3fn, F.to_e4m3_bits, F.from_e4m3_bits, np.uint8),
             (ml.float8_e5m2, F.to_e5m2_bits, F.from_e5m2_bits, np.uint8)]
    for dt, enc, dec, u in cases:
        got = enc(x32)
        want = x32.astype(dt).view(u)
        nan = np.isnan(x32.astype(dt).astype(np.float32))
        assert np.array_equal(np.isnan(dec(got)), nan), dt
        bad = np.nonzero(got[~nan] != want[~nan])[0]
        assert bad.size == 0, (dt, x32[~nan][bad[:5]], got[~nan][bad[:5]], want[~nan][bad[:5]])
        allc = np.arange(256 if u == np.uint8 else 65536).astype(u)
        same_floats(dec(allc), allc.view(dt).astype(np.float32))


@njit            # not cached (see _f16_fast_all)
def _vcopy_all(src, out):
    for i in range(0, src.size, 16):
        _vcopy(out, 0, i, src.ctypes.data + 2 * i, 1)


def test_vector_f16_load_keeps_every_bit():
    """The 16-wide F16C conversion of striped KHR loads (coopmat._vcopy) on every float16 bit
    pattern: the exact float32, signalling NaNs kept signalling with their payload. (Stores write
    NaNs as 0x7E00, so a load-store shader cannot show this.)"""
    if not F.HAS_F16C:
        pytest.skip("no F16C on this processor")
    # In order (runs of 16 NaNs) and shuffled (a NaN or two among ordinary numbers: the
    # conversion rebuilds NaNs only in the runs that hold one).
    for src in (ALL16, np.random.default_rng(1).permutation(ALL16)):
        out = np.zeros((1, 65536), np.float32)
        _vcopy_all(src, out)
        h = src.astype(np.uint32)
        nan = ((h & 0x7C00) == 0x7C00) & ((h & 0x3FF) != 0)
        want = src.view(np.float16).astype(np.float32).view(np.uint32).copy()
        want[nan] = ((h[nan] & 0x8000) << 16) | 0x7F800000 | ((h[nan] & 0x3FF) << 13)
        np.testing.assert_array_equal(out[0].view(np.uint32), want)


# -- the code generator's double -> float16 / bfloat16 rounding (codegen/helpers.py) -------------

def _rounding_helpers():
    """ctypes callables of the generated IR helpers jc.round_f16_64 and jc.round_bf16_64."""
    import ctypes
    from jitcoop.codegen.helpers import DEPENDS, HELPERS, INTRINSICS
    from jitcoop.runtime import jit
    names, decls = [], {}

    def need(n):
        for d in DEPENDS.get(n, ()):
            need(d)
        decls.update(INTRINSICS.get(n, {}))
        if n not in names:
            names.append(n)
    need("round_f16_64")
    need("round_bf16_64")
    text = [f'target triple = "{jit.target_triple()}"', f'target datalayout = "{jit.data_layout()}"']
    text += list(decls.values()) + [HELPERS[n] for n in names]
    text += ["define float @t_f16(double %x) {\n  %r = call float @jc.round_f16_64(double %x)\n  ret float %r\n}",
             "define float @t_bf16(double %x) {\n  %r = call float @jc.round_bf16_64(double %x)\n  ret float %r\n}"]
    obj = jit.compile_ir("\n".join(text))
    addr = jit.load_object("test_rounding_helpers", obj, ["t_f16", "t_bf16"])
    f = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_double)
    return f(addr["t_f16"]), f(addr["t_bf16"])


def _doubles_near_format(mbits, emin, emax, n):
    """Doubles around the format's rounding boundaries: its values, the midpoints between
    neighbours, one double ulp either side of them, subnormals, the overflow threshold."""
    from fractions import Fraction
    out = [0.0, -0.0, math.inf, -math.inf, 1e-310, -1e-310, 1e300, -1e300, 5e-324]
    for e in list(range(emin - mbits - 2, emax + 2)) + [emin, emax]:
        for m in RNG.integers(0, 1 << mbits, 6).tolist() + [0, (1 << mbits) - 1]:
            quantum = Fraction(2) ** (max(e, emin) - mbits)
            v = (Fraction(1 << mbits) + m) * Fraction(2) ** (e - mbits) if e >= emin else m * quantum
            for d in (v, v + quantum / 2):                       # a value and a midpoint
                x = float(d)
                out += [x, math.nextafter(x, math.inf), math.nextafter(x, -math.inf)]
    out += RNG.standard_normal(n).tolist() + (RNG.standard_normal(n) * 1e4).tolist()
    out += [-x for x in out]
    return out


@pytest.mark.parametrize("fmt", ["float16", "bfloat16"])
def test_double_rounds_once_to_the_small_format(fmt):
    """jc.round_f16_64 / jc.round_bf16_64 (round to odd into float32, then to nearest even) give
    the double rounded once to nearest even, as the definition does it in exact rationals
    (tests/conftest.round_exact): values, midpoints, one double ulp off midpoints (where rounding
    through float32 with ties to even goes wrong), subnormals, overflow; NaN stays NaN."""
    from fractions import Fraction
    from conftest import round_exact
    f16, bf16 = _rounding_helpers()
    fn, (p, emin, emax) = (f16, (11, -14, 15)) if fmt == "float16" else (bf16, (8, -126, 127))
    xs = _doubles_near_format(p - 1, emin, emax, 500)
    bad = []
    for x in xs:
        got = fn(x)
        if math.isinf(x):
            want = x
        elif x == 0:
            want = x
        else:
            want = round_exact(Fraction(x), p, emin, emax)
        if not (got == want and math.copysign(1, got) == math.copysign(1, want)):
            bad.append((x, got, want))
    assert not bad, f"{len(bad)} of {len(xs)} differ; first: {bad[:3]}"
    assert math.isnan(fn(math.nan))
