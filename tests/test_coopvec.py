"""SPV_NV_cooperative_vector against numpy written from the extension text.

The matrices are laid out in memory by this file (row/column major with byte strides, and the
optimal layouts from the bit table measured on the H100 in ../shared/oracle/README.md); inputs are
converted and products summed here with exact arithmetic (float64 on values whose products and
sums are exact, Python Fractions for the NVIDIA float16 model), never by jitcoop code.
"""
import math
import struct
from fractions import Fraction

import numpy as np
import pytest

import jitcoop
from jitcoop.devices.coopvec import coopvec_properties, coopvec_supported, coopvec_uses
from conftest import SHADERS, round_exact

CV = SHADERS / "coopvec"
W = 32                      # local size of the mm_* shaders
# Component Type enumerants of the extension
F16, F32, F64, S8, S16, S32, S64, U8, U16, U32, U64 = range(11)
S8P, U8P, E4M3, E5M2 = 1000491000, 1000491001, 1000491002, 1000491003
RM, CM, IO, TO = range(4)
SIZE = {F16: 2, F32: 4, F64: 8, S8: 1, S16: 2, S32: 4, S64: 8, U8: 1, U16: 2, U32: 4, U64: 8,
        E4M3: 1, E5M2: 1}
NPT = {F16: np.float16, F32: np.float32, F64: np.float64, S8: np.int8, S16: np.int16,
       S32: np.int32, S64: np.int64, U8: np.uint8, U16: np.uint16, U32: np.uint32, U64: np.uint64}
INT_RANGE = {S8: (-128, 127), S16: (-2 ** 15, 2 ** 15 - 1), S32: (-2 ** 31, 2 ** 31 - 1),
             S64: (-2 ** 63, 2 ** 63 - 1), U8: (0, 255), U16: (0, 65535), U32: (0, 2 ** 32 - 1),
             U64: (0, 2 ** 64 - 1), S8P: (-128, 127), U8P: (0, 255)}
# The H100's optimal layout of a 16x16 tile: offset bit b steps (row, col) by NV_BASIS[b]
NV_BASIS = [(0, 1), (0, 8), (8, 0), (0, 2), (0, 4), (1, 0), (2, 0), (4, 0)]


# -- formats, from their definitions ---------------------------------------------------------------

def fp8_value(byte, e4m3):
    s = -1.0 if byte & 0x80 else 1.0
    if e4m3:
        e, m = (byte >> 3) & 15, byte & 7
        if e == 15 and m == 7:
            return math.nan
        return s * (2.0 ** (e - 7) * (1 + m / 8) if e else 2.0 ** -6 * m / 8)
    e, m = (byte >> 2) & 31, byte & 3
    if e == 31:
        return s * math.inf if m == 0 else math.nan
    return s * (2.0 ** (e - 15) * (1 + m / 4) if e else 2.0 ** -14 * m / 4)


def fp8_table(e4m3):
    return np.array([fp8_value(b, e4m3) for b in range(256)])


def fp8_round(x, e4m3):
    """Nearest finite fp8 value (ties to even code), saturating: the input quantization."""
    t = fp8_table(e4m3)
    codes = [b for b in range(256) if np.isfinite(t[b])]
    best = min(codes, key=lambda b: (abs(t[b] - x), b & 1, b))
    return t[best]


def f16(x):
    return float(np.float16(x))


# -- layouts ------------------------------------------------------------------------------------------

def nv_offset(r, c, C, training=False):
    """Element offset of (r, c) in the H100 optimal layout (tiles row-major; within a tile the
    inverse of the measured bit map)."""
    inv = {}
    for o in range(256):
        rr = cc = 0
        for b, (dr, dc) in enumerate(NV_BASIS):
            if o >> b & 1:
                rr ^= dr
                cc ^= dc
        inv[rr, cc] = o
    t = (r // 16) * ((C + 15) // 16) + c // 16
    return (2 * t if training else t) * 256 + inv[r % 16, c % 16]


def place(buf, off, stored, etype, layout, stride, profile="generic"):
    """Write the stored R x C matrix (values, or fp8 codes) at byte offset `off`."""
    R, C = stored.shape
    fp8_as_f16 = profile == "nvidia" and layout >= IO and etype in (E4M3, E5M2)
    esz = 2 if fp8_as_f16 else SIZE[etype]
    for r in range(R):
        for c in range(C):
            if layout == RM:
                o = r * stride + c * esz
            elif layout == CM:
                o = c * stride + r * esz
            elif profile == "nvidia":
                o = nv_offset(r, c, C, layout == TO) * esz
            else:
                o = (r * C + c) * esz
            v = stored[r, c]
            if fp8_as_f16:
                b = np.float16(fp8_value(int(v), etype == E4M3)).tobytes()
            elif etype in (E4M3, E5M2):
                b = bytes([int(v)])
            else:
                b = np.array([v]).astype(NPT[etype]).tobytes()
            buf[off + o:off + o + esz] = np.frombuffer(b, np.uint8)


def values(stored, etype):
    if etype in (E4M3, E5M2):
        t = fp8_table(etype == E4M3)
        return np.vectorize(lambda b: t[int(b)])(stored).astype(np.float64)
    if etype in (F16, F32, F64):
        return stored.astype(NPT[etype]).astype(np.float64)
    return stored.astype(object)


# -- a variant: one MatMul of a shader ------------------------------------------------------------------

class Variant:
    def __init__(self, ii, mi, bi, layout, transpose, stride_pad=0):
        self.ii, self.mi, self.bi, self.layout, self.tr, self.pad = ii, mi, bi, layout, transpose, stride_pad


def random_matrix(rng, etype, R, C):
    if etype in (E4M3, E5M2):
        t = fp8_table(etype == E4M3)
        ok = [b for b in range(256) if np.isfinite(t[b]) and abs(t[b]) < 64]
        return rng.choice(ok, (R, C))
    if etype in (F16, F32, F64):
        v = rng.standard_normal((R, C)).astype(np.float16).astype(np.float64)
        v[np.abs(v) < 2 ** -8] = 0.0
        return v
    lo, hi = INT_RANGE[etype]
    return rng.integers(max(lo, -2 ** 62), min(hi, 2 ** 62), (R, C), dtype=np.int64, endpoint=True)


def build(rng, variants, M, K, profile="generic"):
    """Matrix and bias buffers, params, and per-variant (logical M x K matrix values, bias values)."""
    mat = np.zeros(1 << 16, np.uint8)
    bias = np.zeros(1 << 12, np.uint8)
    params = np.zeros(49, np.int32)
    logical = []
    mo, bo = 64, 16
    for n, v in enumerate(variants):
        R, C = (K, M) if v.tr else (M, K)
        stored = random_matrix(rng, v.mi, R, C)
        esz = 2 if (profile == "nvidia" and v.layout >= IO and v.mi in (E4M3, E5M2)) else SIZE[v.mi]
        line = (C if v.layout == RM else R) * esz
        stride = line + v.pad if v.layout <= CM else 0
        place(mat, mo, stored, v.mi, v.layout, stride, profile)
        vals = values(stored, v.mi)
        A = vals.T if v.tr else vals
        b = None
        if v.bi is not None:
            b = random_matrix(rng, v.bi, 1, M)[0]
            bb = np.array(b).astype(NPT[v.bi]) if v.bi in NPT else b
            bias[bo:bo + M * SIZE[v.bi]] = np.frombuffer(bb.tobytes(), np.uint8)
            b = values(np.array(b), v.bi)
        params[n], params[16 + n], params[32 + n] = mo, bo, stride
        logical.append((A, b))
        mo += -(-(R * C * 8 + 8 * 64) // 64) * 64 + 64
        bo += -(-M * 8 // 16) * 16
    return mat, bias, params, logical


def convert_input(x, ii, in_signed=True, nvidia=False):
    """The spec's input conversion of one component (x: a Python number)."""
    if ii in (F16, F32, F64):
        return float(np.array(x).astype(NPT[ii])) if not isinstance(x, int) else float(NPT[ii](x))
    if ii in (E4M3, E5M2):
        return float(x) if nvidia else fp8_round(float(x), ii == E4M3)
    lo, hi = INT_RANGE[ii]
    if isinstance(x, float):
        if math.isnan(x):
            return 0
        r = round(x)                     # Python rounds half to even
        return int(min(max(r, lo), hi))
    return int(min(max(x, lo), hi))


def unpack(words, K, signed):
    out = []
    for k in range(K):
        b = (int(words[k // 4]) >> (8 * (k % 4))) & 255
        out.append(b - 256 if signed and b >= 128 else b)
    return out


def expect_float(A, xs, b, res_dtype):
    s = (A.astype(np.float64) @ np.array(xs, np.float64))
    if b is not None:
        s = s + b
    return s.astype(res_dtype)


def expect_int(A, xs, b):
    s = [sum(int(A[i, k]) * int(xs[k]) for k in range(len(xs))) + (int(b[i]) if b is not None else 0)
         for i in range(A.shape[0])]
    return np.array([v % 2 ** 32 for v in s], np.uint64).astype(np.uint32).view(np.int32)


def run_mm(kernel, x, mat, bias, params, variant, M, out_dtype, groups=2):
    params = params.copy()
    params[48] = variant
    out = np.zeros((groups * W, M), out_dtype)
    kernel.dispatch((groups, 1, 1), {0: x, 1: mat, 2: bias, 3: out, 4: params})
    return out


F16_VARIANTS = [Variant(F16, F16, F16, RM, False, 6), Variant(F16, F16, F16, CM, False, 2),
                Variant(F16, F16, None, RM, False, 0), Variant(F16, F16, F16, IO, True),
                Variant(F16, F16, F16, TO, False), Variant(E4M3, E4M3, F16, IO, False),
                Variant(E5M2, E5M2, F16, IO, False), Variant(F32, F32, F32, RM, False, 4),
                Variant(F64, F64, F64, CM, False, 8)]


@pytest.fixture(scope="module")
def nv_device():
    return jitcoop.Device("nvidia")


def test_f16_every_float_interpretation_divergent(kc, rng):
    """Lanes of a workgroup reach nine different MatMuls (lane % 9): each batch is computed
    separately and every lane's result is its own product."""
    M, K = 6, 10
    k = kc("coopvec/mm_f16")
    x = rng.standard_normal((2 * W, K)).astype(np.float16)
    x[np.abs(x) < 2 ** -8] = 0
    mat, bias, params, logical = build(rng, F16_VARIANTS, M, K)
    out = run_mm(k, x, mat, bias, params, -1, M, np.float16)
    for lane in range(2 * W):
        v = F16_VARIANTS[lane % 9]
        A, b = logical[lane % 9]
        xs = [convert_input(float(t), v.ii) for t in x[lane]]
        np.testing.assert_array_equal(out[lane], expect_float(A, xs, b, np.float16),
                                      err_msg=f"lane {lane} variant {lane % 9}")
    # every lane at one MatMul: one batch, the same answers
    for n in (0, 3, 5):
        out = run_mm(k, x, mat, bias, params, n, M, np.float16)
        A, b = logical[n]
        for lane in range(2 * W):
            xs = [convert_input(float(t), F16_VARIANTS[n].ii) for t in x[lane]]
            np.testing.assert_array_equal(out[lane], expect_float(A, xs, b, np.float16))


def test_f32_input_quantization(kc, rng):
    """float32 vectors: float16/E4M3/E5M2/int8 interpretations quantize the input (round to
    nearest even, saturating), column-major without bias."""
    M, K = 6, 10
    variants = [Variant(F32, F32, F32, RM, False, 4), Variant(F16, F16, F32, RM, False),
                Variant(E4M3, E4M3, F16, RM, False), Variant(S8, S8, F32, RM, False, 3),
                Variant(E5M2, F16, None, CM, False, 2)]
    k = kc("coopvec/mm_f32")
    x = (rng.standard_normal((2 * W, K)) * 4).astype(np.float16).astype(np.float32)
    x[0, :4] = [2.5, -3.5, 300.0, -1000.0]          # ties to even and saturation
    mat, bias, params, logical = build(rng, variants, M, K)
    out = run_mm(k, x, mat, bias, params, -1, M, np.float32)
    for lane in range(2 * W):
        v = variants[lane % 5]
        A, b = logical[lane % 5]
        xs = [convert_input(float(t), v.ii) for t in x[lane]]
        np.testing.assert_array_equal(out[lane], expect_float(A, xs, b, np.float32),
                                      err_msg=f"lane {lane} variant {lane % 5}")


def test_uint32_packed_and_wrapping(kc, rng):
    """uint32 vectors: SignedInt8Packed/UnsignedInt8Packed unpack 4 values per component (lowest
    byte first); arithmetic conversions saturate; int32 results wrap."""
    M, K = 6, 10
    variants = [Variant(S8P, S8, S32, RM, False, 5), Variant(U8P, U8, S32, CM, False, 3),
                Variant(U8, S8, S32, RM, False), Variant(S8, U8, S32, RM, False),
                Variant(U32, U32, U32, RM, False), Variant(S16, S64, S32, CM, False, 8)]
    k = kc("coopvec/mm_u32", spec={0: M, 1: K})
    x = rng.integers(0, 2 ** 32, (2 * W, K), dtype=np.uint64).astype(np.uint32)
    x[:, 5:] = rng.integers(0, 300, (2 * W, K - 5))
    mat, bias, params, logical = build(rng, variants, M, K)
    out = run_mm(k, x, mat, bias, params, -1, M, np.int32)
    for lane in range(2 * W):
        v = variants[lane % 6]
        A, b = logical[lane % 6]
        if v.ii in (S8P, U8P):
            xs = unpack(x[lane], K, v.ii == S8P)
        else:
            xs = [convert_input(int(t), v.ii) for t in x[lane]]      # unsigned input
        np.testing.assert_array_equal(out[lane], expect_int(A, xs, b), err_msg=f"lane {lane}")


def test_int8_signed_unsigned(kc, rng):
    M, K = 6, 10
    variants = [Variant(S8, S8, S32, RM, False, 1), Variant(S8, U8, S32, RM, False),
                Variant(U8, S8, S32, RM, False)]
    k = kc("coopvec/mm_s8")
    x = rng.integers(-128, 128, (2 * W, K)).astype(np.int8)
    mat, bias, params, logical = build(rng, variants, M, K)
    out = run_mm(k, x, mat, bias, params, -1, M, np.int32)
    for lane in range(2 * W):
        v = variants[lane % 3]
        A, b = logical[lane % 3]
        xs = [convert_input(int(t), v.ii) for t in x[lane]]          # signed input
        np.testing.assert_array_equal(out[lane], expect_int(A, xs, b), err_msg=f"lane {lane}")


def test_float32_to_int8_rounding(kc, rng):
    M, K = 6, 10
    variants = [Variant(S8, S8, S32, RM, False), Variant(U8, U8, S32, RM, False)]
    k = kc("coopvec/mm_f32i")
    x = (rng.standard_normal((2 * W, K)) * 100).astype(np.float32)
    x[0] = [0.5, 1.5, 2.5, -0.5, -1.5, 127.5, 128.0, -128.5, -300.0, np.nan]
    x[1] = x[0]
    mat, bias, params, logical = build(rng, variants, M, K)
    out = run_mm(k, x, mat, bias, params, -1, M, np.int32)
    for lane in range(2 * W):
        v = variants[lane % 2]
        A, b = logical[lane % 2]
        xs = [convert_input(float(t), v.ii) for t in x[lane]]
        np.testing.assert_array_equal(out[lane], expect_int(A, xs, b), err_msg=f"lane {lane}")
    assert [convert_input(float(t), S8) for t in x[0]] == [0, 2, 2, 0, -2, 127, 127, -128, -128, 0]


def nv_f16_model(A, xs, b):
    """The H100 float16 MatrixMulAdd: start at the bias; per 16-wide chunk of K add the exact sum
    of the chunk's products and round to float16 (round_exact: nearest even)."""
    out = []
    for i in range(A.shape[0]):
        acc = Fraction(f16(b[i])) if b is not None else Fraction(0)
        for k0 in range(0, len(xs), 16):
            q = acc + sum(Fraction(float(A[i, k])) * Fraction(float(xs[k]))
                          for k in range(k0, min(len(xs), k0 + 16)))
            acc = Fraction(round_exact(q, 11, -14, 15)) if q != 0 else Fraction(0)
        out.append(float(acc))
    return np.array(out, np.float16)


@pytest.mark.slow
def test_nvidia_f16_model_and_layouts(nv_device, rng):
    """numerics="nvidia" on the nvidia profile: the chunked float16 model, bit-exact; the optimal
    layouts are the measured H100 permutation (fp8 stored as float16); fp8 interpretations do
    not quantize the input vector."""
    M, K = 6, 40
    k = nv_device.load(CV / "mm_f16.spv").kernel(spec={0: M, 1: K}, numerics="nvidia")
    x = (rng.standard_normal((2 * W, K)) * 8).astype(np.float16)
    mat, bias, params, logical = build(rng, F16_VARIANTS, M, K, profile="nvidia")
    out = run_mm(k, x, mat, bias, params, -1, M, np.float16)
    differs = 0
    for lane in range(2 * W):
        n = lane % 9
        v = F16_VARIANTS[n]
        A, b = logical[n]
        if v.ii in (F32, F64):
            continue                   # float32/float64 results are not in the H100 model
        xs = [float(t) for t in x[lane]]
        want = nv_f16_model(A, xs, b)
        np.testing.assert_array_equal(out[lane], want, err_msg=f"lane {lane} variant {n}")
        differs += int(np.any(want != expect_float(A, xs, b, np.float16)))
    assert differs > 0                 # the model is not the exact sum here


def test_out_of_bounds_matrix(kc, rng):
    M, K = 6, 10
    k = kc("coopvec/mm_f16")
    x = np.ones((2 * W, K), np.float16)
    mat, bias, params, logical = build(rng, F16_VARIANTS, M, K)
    out = np.full((2 * W, M), 7, np.float16)
    p = params.copy()
    p[0] = mat.size - 64
    p[48] = 0
    with pytest.raises(jitcoop.ExecutionError, match="OpCooperativeVectorMatrixMulAddNV.*out-of-bounds matrix read"):
        k.dispatch((2, 1, 1), {0: x, 1: mat, 2: bias, 3: out, 4: p})
    assert np.all(out == 7)
    p[0] = 64
    p[16] = bias.size - 4
    with pytest.raises(jitcoop.ExecutionError, match="bias read"):
        k.dispatch((2, 1, 1), {0: x, 1: mat, 2: bias, 3: out, 4: p})
    with pytest.raises(jitcoop.ExecutionError, match="OpCooperativeVectorLoadNV.*out-of-bounds"):
        k.dispatch((2, 1, 1), {0: x[:40], 1: mat, 2: bias, 3: out, 4: params})
    assert np.all(out == 7)


# -- host conversion and property tables ---------------------------------------------------------

def test_convert_measured_permutation_and_round_trip(rng):
    a = np.arange(256, dtype=np.float16).reshape(16, 16)
    opt = jitcoop.convert_coopvec_matrix(a, 16, 16, "f16", "f16", "row_major", "inferencing_optimal",
                                         src_stride=32, profile="nvidia").view(np.float16)
    for o in range(256):
        r = c = 0
        for b, (dr, dc) in enumerate(NV_BASIS):
            if o >> b & 1:
                r ^= dr
                c ^= dc
        assert opt[o] == a[r, c]
    tr = jitcoop.convert_coopvec_matrix(a, 16, 16, "f16", "f16", 0, 3, 32, profile="nvidia")
    assert np.array_equal(tr.view(np.float16), opt)           # TrainingOptimal = Inferencing at 16x16
    # 32x64: the inferencing sequence in 256-element blocks, each followed by 256 zeros but the last
    big = rng.standard_normal((32, 64)).astype(np.float16)
    inf = jitcoop.convert_coopvec_matrix(big, 32, 64, "f16", "f16", 0, 2, 128, profile="nvidia").view(np.float16)
    trn = jitcoop.convert_coopvec_matrix(big, 32, 64, "f16", "f16", 0, 3, 128, profile="nvidia").view(np.float16)
    assert trn.size == 2 * inf.size - 256
    for t in range(inf.size // 256):
        assert np.array_equal(trn[512 * t:512 * t + 256], inf[256 * t:256 * t + 256])
        if t < inf.size // 256 - 1:
            assert not trn[512 * t + 256:512 * t + 512].any()
    # round trips with odd strides, both profiles, through column-major too
    for prof in ("generic", "nvidia"):
        m = rng.standard_normal((7, 13)).astype(np.float32)
        src = np.zeros((7, 15), np.float32)
        src[:, :13] = m
        o = jitcoop.convert_coopvec_matrix(src, 7, 13, "f32", "f16", "row_major", 2, 60, profile=prof)
        cm = jitcoop.convert_coopvec_matrix(o, 7, 13, "f16", "f32", 2, "column_major", 0, 36, profile=prof)
        back = np.frombuffer(cm.tobytes(), np.float32)
        got = np.array([[back[c * 9 + r] for c in range(13)] for r in range(7)])
        assert np.array_equal(got, m.astype(np.float16).astype(np.float32))


def test_convert_fp8_rounding():
    src = np.array([[1.0, 500.0, -70000.0, 0.3]], np.float32)
    e4 = jitcoop.convert_coopvec_matrix(src, 1, 4, "f32", "e4m3", 0, 2, 16, profile="generic")
    t4 = fp8_table(True)
    v = [t4[b] for b in e4]
    assert v[0] == 1.0 and math.isnan(v[1]) and math.isnan(v[2]) and v[3] == 0.3125  # no saturation
    e5 = jitcoop.convert_coopvec_matrix(src, 1, 4, "f32", "e5m2", 0, 2, 16, profile="generic")
    t5 = fp8_table(False)
    assert [t5[b] for b in e5][1:3] == [512.0, -math.inf]
    # nvidia: fp8 optimal layouts are float16 values rounded to fp8
    nv = jitcoop.convert_coopvec_matrix(src, 1, 4, "f32", "e5m2", 0, 2, 16, profile="nvidia").view(np.float16)
    assert nv.size == 256 and nv[0] == 1.0 and nv[1] == 512.0 and nv[8] == -np.inf
    with pytest.raises(ValueError):
        jitcoop.convert_coopvec_matrix(src, 1, 4, "f32", "s8", 0, 0, 16, 4)


def test_property_tables(shaders):
    nv = coopvec_properties("nvidia")
    assert len(nv) == 16 and nv[0] == ("f16", "f16", "f16", "f16", "f16", True)
    assert coopvec_supported("nvidia", ("u32", "s8packed", "s8", "s32", "s32", False))
    assert not coopvec_supported("nvidia", ("f16", "f16", "f16", "f16", "f32", False))
    assert not coopvec_supported("nvidia", ("s8", "s8", "s8", "s32", "s32", True))
    assert coopvec_supported("generic", ("f16", "f16", "f16", "f16", "f32", True))
    assert not coopvec_supported("generic", ("f16", "f16", "s8packed", "f16", "f16", False))
    m = jitcoop.Device().load(CV / "mm_u32.spv")
    uses = coopvec_uses(m.spirv)
    assert ("u32", "s8packed", "s8", "s32", "s32", False) in uses
    assert [u for u in uses if not coopvec_supported("nvidia", u)] == [
        ("u32", "u8", "s8", "s32", "s32", False), ("u32", "s8", "u8", "s32", "s32", False),
        ("u32", "u32", "u32", "u32", "s32", False), ("u32", "s16", "s64", "s32", "s32", False)]


# -- training: atomic accumulation across workgroups -----------------------------------------------

def test_outer_product_and_reduce_sum_many_workgroups(kc, rng):
    """64 workgroups x 32 invocations accumulate atomically; the values are small multiples of
    powers of two, so every float sum is exact and the result does not depend on order."""
    k = kc("coopvec/train")
    n = 64 * 32
    a = (rng.integers(-4, 5, (n, 8)) / 4).astype(np.float16)
    b = (rng.integers(-4, 5, (n, 4)) / 8).astype(np.float16)
    g16 = np.zeros(256, np.float16)            # 8x4 in the generic TrainingOptimal (row-major)
    g32 = np.zeros(8 * 8, np.float32)          # row-major, stride 32 bytes
    s16 = np.zeros(8, np.float16)
    s32 = np.zeros(4, np.float32)
    k.dispatch((64, 1, 1), {0: a, 1: b, 2: g16, 3: g32, 4: s16, 5: s32}, threads=2)
    outer = a.astype(np.float64).T @ b.astype(np.float64)
    np.testing.assert_array_equal(g16[:32].reshape(8, 4), outer.astype(np.float16))
    assert not g16[32:].any()
    np.testing.assert_array_equal(g32.reshape(8, 8)[:, :4], outer.astype(np.float32))
    np.testing.assert_array_equal(s16, a.astype(np.float64).sum(0).astype(np.float16))
    np.testing.assert_array_equal(s32, b.astype(np.float64).sum(0).astype(np.float32))


@pytest.mark.slow
def test_training_nvidia_layout(nv_device, rng):
    k = nv_device.load(CV / "train.spv").kernel()
    n = 2 * 32
    a = (rng.integers(-4, 5, (n, 8)) / 4).astype(np.float16)
    b = (rng.integers(-4, 5, (n, 4)) / 8).astype(np.float16)
    g16 = np.zeros(256, np.float16)
    k.dispatch((2, 1, 1), {0: a, 1: b, 2: g16, 3: np.zeros(64, np.float32), 4: np.zeros(8, np.float16),
                           5: np.zeros(4, np.float32)})
    outer = (a.astype(np.float64).T @ b.astype(np.float64)).astype(np.float16)
    want = np.zeros(256, np.float16)
    for r in range(8):
        for c in range(4):
            want[nv_offset(r, c, 4, True)] = outer[r, c]
    np.testing.assert_array_equal(g16, want)


# -- per-lane operations -----------------------------------------------------------------------------

def test_per_lane_operations(kc, rng):
    k = kc("coopvec/ops")
    G = 2
    n = 16 * G
    x = (rng.standard_normal((n, 8)) * 2).astype(np.float32)
    out = np.zeros((n, 10, 8), np.float32)
    iout = np.zeros((n, 3, 8), np.uint32)
    dev = kc.device()
    phys_data = rng.standard_normal((n, 8)).astype(np.float32)
    pb = dev.buffer(phys_data.copy())
    k.dispatch((G, 1, 1), {0: x, 1: out, 2: iout}, push=struct.pack("<Q", pb.address))
    v = x.astype(np.float64)
    f32 = lambda e: np.asarray(e).astype(np.float32)
    np.testing.assert_array_equal(out[:, 0], f32(f32(v * 0.5) - f32(v / 1.5)))
    np.testing.assert_array_equal(out[:, 1], f32(v * 3))
    np.testing.assert_array_equal(out[:, 2], np.maximum(x, 0))
    np.testing.assert_allclose(out[:, 3], np.tanh(v) + np.exp(-v * v) + np.arctan(v), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[:, 4], f32(np.clip(x, -0.5, 0.75) + (x >= 0.1)))
    np.testing.assert_allclose(out[:, 5], v * v + 0.5 + np.log(np.abs(v) + 1), rtol=1e-5)
    for g in range(n):
        i = g % 16
        if g % 2 == 0:
            u = x[g].copy()
            u[i & 7] = np.float32(100.0) + x[g][(i + 1) & 7]
            np.testing.assert_array_equal(out[g, 6], u)
        else:
            np.testing.assert_array_equal(out[g, 6], x[g] * 2)
        wg = g // 16
        np.testing.assert_array_equal(out[g, 7], x[wg * 16 + (i + 1) % 16])
        np.testing.assert_array_equal(out[g, 8], x[g] * (i % 3 + 1))
    np.testing.assert_array_equal(out[:, 9], (x.astype(np.float16).astype(np.float32) ** 2).astype(np.float16))
    np.testing.assert_array_equal(dev.read(pb) if hasattr(dev, "read") else pb.array.view(np.float32).reshape(n, 8), -phys_data)
    iv = np.trunc(f32(v * 10)).astype(np.int32)
    bits = iv.view(np.uint32)
    np.testing.assert_array_equal(iout[:, 0], ((bits << 3) ^ (bits >> 1)) | 1)
    np.testing.assert_array_equal(iout[:, 1], (np.minimum(iv, 7) - iv * 2).view(np.uint32))
    np.testing.assert_array_equal(iout[:, 2], (-iv).view(np.uint32))
