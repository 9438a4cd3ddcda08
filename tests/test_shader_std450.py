"""GLSL.std.450 functions (tests/shaders/std450.comp) against references written from their
definitions, with the tolerance stated per function:

- exact (correctly rounded, compared by value so the sign of a zero is free): sqrt, fma, floor,
  ceil, roundEven, trunc, fract, modf, clamp, min/max (no NaN), abs, sign, step, ldexp,
  matrixCompMult, unpackHalf2x16/packHalf2x16 (round to nearest even), unpack*norm, pack/
  unpackDouble2x32; round() may take either neighbour at a tie;
- 1 ulp of the correctly rounded result (jitcoop computes these in float64 and rounds once):
  exp, pow, log, atan2, tanh, asinh, inversesqrt (2 ulp for degrees/radians, a product with a
  rounded constant);
- formulas, bounded by a few float32 epsilons of the magnitudes involved (cancellation allowed):
  mix, cross, dot, length, normalize, distance, determinant, smoothstep, and x * y + z, which may be
  contracted to an fma; matrix inverses, by the condition number;
- pack*norm*: each field within 0.5 (+1e-4) of the scaled value, before rounding.
MatrixInverse and Frexp/FrexpStruct have their own shaders (std450_inverse.comp, frexp.comp,
frexp_ptr.spvasm)."""
import math
from fractions import Fraction

import numba
import numpy as np
import pytest


N = 64
F32, F64, F16 = np.float32, np.float64, np.float16
EPS32, EPS64 = float(np.finfo(F32).eps), float(np.finfo(F64).eps)


def ordered(v, dt):
    """Float bits mapped to integers whose order is the floats' order (for ulp distances)."""
    ut = {F16: np.int16, F32: np.int32, F64: np.int64}[dt]
    b = int(np.asarray(v, dt).view(ut))
    return -(b & ~(-1 << (8 * np.dtype(dt).itemsize - 1))) if b < 0 else b


def ulps(got, want, dt):
    got, want = dt(got), dt(want)
    if np.isnan(got) or np.isnan(want):
        return 0 if np.isnan(got) and np.isnan(want) else 10**9
    if got == want:
        return 0
    return abs(ordered(got, dt) - ordered(want, dt))


def round_exact(fr, dt):
    """A Fraction rounded to the nearest `dt` value, ties to even."""
    if dt is F64:
        return float(fr)                       # Python rounds Fractions correctly
    f = dt(float(fr))
    best = None
    for c in (np.nextafter(f, dt(-np.inf)), f, np.nextafter(f, dt(np.inf))):
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - fr)
        if best is None or d < best[0] or (d == best[0] and int(np.asarray(c).view(
                {F16: np.uint16, F32: np.uint32}[dt])) % 2 == 0):
            best = (d, c)
    return best[1]


def inputs(rng):
    x = rng.uniform(-100, 100, N).astype(F32)
    x[:8] = [2.5, -3.5, 0.5, -0.5, 1.5, 0.0, -0.0, 7.0]        # ties for round/roundEven
    x[8:12] = rng.integers(-20, 20, 4) + 0.5
    x[12:14] = [1e-3, -2e-5]
    y = rng.uniform(-100, 100, N).astype(F32)
    z = rng.uniform(-100, 100, N).astype(F32)
    z[20:24] = [-60.0, 39.9, -1.0, 0.0]
    ad = rng.uniform(-1e6, 1e6, N)
    ad[:4] = [2.5, -3.5, 123456789.75, -0.0]
    return x, y, z, ad


@pytest.fixture(scope="module")
def std450(kc):
    return kc("std450")


def run(k, x, y, z, ad):
    r = np.full(N * 48, np.nan, F32)
    rd = np.full(N * 16, np.nan, F64)
    rh = np.full(N * 4, np.nan, F16)
    ru = np.zeros(N * 8, np.uint32)
    k.dispatch(1, {0: x, 1: y, 2: z, 3: ad, 4: r, 5: rd, 6: rh, 7: ru})
    return r.reshape(N, 48), rd.reshape(N, 16), rh.reshape(N, 4), ru.reshape(N, 8)


class Checker:
    def __init__(self):
        self.errors = []

    def exact(self, name, i, got, want):
        want = np.asarray(want, np.asarray(got).dtype)
        if not (got == want or (np.isnan(got) and np.isnan(want))):
            self.errors.append(f"{name}[{i}]: {got!r}, want {want!r}")

    def ulp(self, name, i, got, want64, n, dt=F32):
        if ulps(got, dt(want64), dt) > n:
            self.errors.append(f"{name}[{i}]: {got!r}, want {dt(want64)!r} (+-{n} ulp)")

    def abs_tol(self, name, i, got, want64, tol):
        if not abs(float(got) - want64) <= tol:
            self.errors.append(f"{name}[{i}]: {got!r}, want {want64!r} +- {tol:.3g}")

    def done(self):
        assert not self.errors, f"{len(self.errors)} mismatches:\n" + "\n".join(self.errors[:25])


def test_float32_functions(std450, rng):
    x, y, z, ad = inputs(rng)
    r, _, _, ru = run(std450, x, y, z, ad)
    c = Checker()
    for i in range(N):
        xi, yi, zi = x[i], y[i], z[i]
        X, Y, Z = float(xi), float(yi), float(zi)
        R = r[i]
        c.exact("sqrt", i, R[0], np.sqrt(abs(xi)))
        c.exact("fma", i, R[1], round_exact(Fraction(X) * Fraction(Y) + Fraction(Z), F32))
        c.exact("floor", i, R[2], np.floor(xi))
        c.exact("ceil", i, R[3], np.ceil(xi))
        lo, hi = np.floor(xi), np.ceil(xi)
        if xi - lo == 0.5:
            if R[4] not in (lo, hi):
                c.errors.append(f"round[{i}]: {R[4]!r} at a tie of {xi!r}")
        else:
            c.exact("round", i, R[4], np.floor(xi + F32(0.5)) if xi - lo != 0.5 else lo)
        c.exact("roundEven", i, R[5], np.rint(xi))
        c.exact("trunc", i, R[6], np.trunc(xi))
        c.exact("fract", i, R[7], xi - np.floor(xi))
        c.exact("clamp", i, R[8], min(max(xi, min(yi, zi)), max(yi, zi)))
        c.exact("min", i, R[9], min(xi, yi))
        c.exact("max", i, R[10], max(xi, yi))
        c.exact("modf fraction", i, R[11], xi - np.trunc(xi))
        c.exact("modf whole", i, R[12], np.trunc(xi))
        c.exact("-x by bits", i, R[13], -xi)
        c.exact("roundEven(x/2)", i, R[14], np.rint(xi * F32(0.5)))
        c.exact("ldexp", i, R[15], F32(math.ldexp(Y, int(Z) % 40)))     # int % 40: OpSMod
        c.exact("abs", i, R[16], abs(xi))
        c.exact("sign", i, R[17], np.sign(xi))
        c.exact("step", i, R[18], 0.0 if xi < yi else 1.0)
        c.ulp("exp", i, R[19], math.exp(float(yi * F32(0.01))), 1)
        c.ulp("pow", i, R[20], float(abs(xi) + F32(0.5)) ** float(yi * F32(0.01)), 1)
        c.ulp("log", i, R[21], math.log(float(abs(xi) + F32(1.0))), 1)
        c.ulp("atan2", i, R[22], math.atan2(Y, X), 1)
        c.ulp("tanh", i, R[23], math.tanh(float(yi * F32(0.1))), 1)
        c.ulp("asinh", i, R[24], math.asinh(Z), 1)
        c.ulp("inversesqrt", i, R[25], 1 / math.sqrt(float(abs(xi) + F32(1.0))), 1)
        t = float(zi * F32(0.01))
        c.abs_tol("mix", i, R[26], X * (1 - t) + Y * t, 4 * EPS32 * max(abs(X), abs(Y)))
        u, v = np.array([X, Y, Z]), np.array([Z, X, float(yi * F32(0.5))])
        cr = np.cross(u, v)
        for j in range(3):
            a, b = (j + 1) % 3, (j + 2) % 3
            mag = abs(u[a] * v[b]) + abs(u[b] * v[a])
            c.abs_tol(f"cross.{'xyz'[j]}", i, R[27 + j], cr[j], 2 * EPS32 * mag)
        ln = math.sqrt(u @ u)
        c.abs_tol("length", i, R[30], ln, 4 * EPS32 * ln)
        for j in range(3):
            c.abs_tol(f"normalize.{'xyz'[j]}", i, R[31 + j], u[j] / ln, 4 * EPS32)
        c.abs_tol("dot", i, R[34], u @ v, 4 * EPS32 * float(np.abs(u * v).sum()))
        d = math.sqrt(((u - v) ** 2).sum())
        c.abs_tol("distance", i, R[35], d, 4 * EPS32 * (d + np.abs(u).sum() + np.abs(v).sum()))
        M = np.array([u, v, [1.0, 2.0, 0.5]]).T                      # columns u, v, w
        terms = [M[0, p[0]] * M[1, p[1]] * M[2, p[2]] for p in
                 [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]]
        c.abs_tol("determinant", i, R[36], float(np.linalg.det(M)),
                  8 * EPS32 * sum(abs(t) for t in terms))
        c.exact("matrixCompMult", i, R[37], xi * yi)
        c.exact("matrixCompMult", i, R[38], yi * zi)
        c.exact("matrixCompMult", i, R[39], zi * xi)
        c.exact("matrixCompMult", i, R[40], F32(2.0))
        c.ulp("degrees", i, R[41], Z * 180 / math.pi, 2)
        c.ulp("radians", i, R[42], Y * math.pi / 180, 2)
        c.exact("half round trip", i, R[43], F32(F16(xi)))
        c.exact("half round trip", i, R[44], F32(F16(yi)))
        t = float(zi * F32(0.01))
        cands = {math.floor(max(-1, min(1, t)) * 32767), math.ceil(max(-1, min(1, t)) * 32767)}
        if not any(R[45] == F32(k / 32767) for k in cands):
            c.errors.append(f"snorm round trip[{i}]: {R[45]!r} from {t!r}")
        byte = (int(abs(xi) * F32(1000.0)) >> 16) & 0xFF
        c.exact("unpackUnorm4x8", i, R[46], F32(byte / 255))
        t = float(zi * F32(0.02))
        s = min(max((t + 1) / 2, 0.0), 1.0)
        c.abs_tol("smoothstep", i, R[47], s * s * (3 - 2 * s), 8 * EPS32)
        # packing
        U = ru[i]
        want = int(np.asarray(F16(xi)).view(np.uint16)) | int(np.asarray(F16(yi)).view(np.uint16)) << 16
        c.exact("packHalf2x16", i, U[0], want)

        def fields(word, n, bits, signed):
            out = []
            for k in range(n):
                f = (int(word) >> (bits * k)) & ((1 << bits) - 1)
                out.append(f - (1 << bits) if signed and f >> (bits - 1) else f)
            return out

        def pack_check(name, word, vals, bits, signed):
            scale = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
            for k, (f, v) in enumerate(zip(fields(word, len(vals), bits, signed), vals)):
                exact = max(-1.0 if signed else 0.0, min(1.0, float(v))) * scale
                if not abs(f - exact) <= 0.5 + 1e-4:
                    c.errors.append(f"{name}[{i}] field {k}: {f}, want round({exact})")
        h = F32(0.01)
        pack_check("packUnorm4x8", U[1], [xi * h, yi * h, zi * h, F32(0.5) * h], 8, False)
        pack_check("packSnorm4x8", U[2], [xi * h, yi * h, zi * h, F32(-0.5) * h], 8, True)
        pack_check("packUnorm2x16", U[3], [xi * h, zi * h], 16, False)
        pack_check("packSnorm2x16", U[4], [yi * h, zi * h], 16, True)
        words = np.array([ad[i]], F64).view(np.uint32)
        c.exact("unpackDouble2x32.x", i, U[5], words[0])
        c.exact("unpackDouble2x32.y", i, U[6], words[1])
        c.exact("bits ^ isnan ^ isinf", i, U[7], int(np.asarray(xi).view(np.uint32)))
    c.done()


def test_float64_and_float16_functions(std450, rng):
    x, y, z, ad = inputs(rng)
    _, rd, rh, _ = run(std450, x, y, z, ad)
    c = Checker()
    for i in range(N):
        xd, yd, zd = float(ad[i]), float(y[i]), float(z[i])
        D = rd[i]
        c.exact("d sqrt", i, D[0], math.sqrt(abs(xd)))
        c.exact("d fma", i, D[1], float(Fraction(xd) * Fraction(yd) + Fraction(zd)))
        c.exact("d floor", i, D[2], math.floor(xd))
        c.exact("d fract", i, D[3], xd - math.floor(xd))
        c.exact("d roundEven", i, D[4], np.rint(xd))
        c.exact("d trunc", i, D[5], math.trunc(xd))
        c.exact("d ceil", i, D[6], math.ceil(xd))
        c.exact("d clamp", i, D[7], min(max(xd, min(yd, zd)), max(yd, zd)))
        t = zd * 0.01
        c.abs_tol("d mix", i, D[8], float(Fraction(xd) * (1 - Fraction(t)) + Fraction(yd) * Fraction(t)),
                  4 * EPS64 * max(abs(xd), abs(yd)))
        u = np.array([xd, yd, zd])
        ln = math.sqrt(float(sum(Fraction(a) ** 2 for a in u)))
        c.abs_tol("d length", i, D[9], ln, 4 * EPS64 * ln)
        v = np.array([zd, xd, yd])
        c.abs_tol("d dot", i, D[10], float(sum(Fraction(a) * Fraction(b) for a, b in zip(u, v))),
                  4 * EPS64 * float(np.abs(u * v).sum()))
        c.abs_tol("d determinant", i, D[11], float(Fraction(xd) - Fraction(zd) * Fraction(yd)),
                  2 * EPS64 * (abs(xd) + abs(zd * yd)))
        c.exact("packDouble2x32", i, D[12],
                np.array([x[i], y[i]], F32).view(np.uint32).view(F64)[0])
        c.ulp("d inversesqrt", i, D[13], 1 / math.sqrt(abs(xd) + 1.0), 2, F64)
        c.exact("d min", i, D[14], min(xd, yd))
        c.exact("d max", i, D[15], max(xd, zd))
        xh, yh, zh = F16(x[i]), F16(y[i]), F16(z[i])
        H = rh[i]
        c.exact("h sqrt", i, H[0], F16(np.sqrt(abs(xh))))
        exact_fma = Fraction(float(xh)) * Fraction(float(yh)) + Fraction(float(zh))
        c.exact("h fma", i, H[1], round_exact(exact_fma, F16))
        c.exact("h floor", i, H[2], np.floor(xh))
        separate = F16(F16(xh * yh) + zh)
        if not (H[3] == separate or H[3] == round_exact(exact_fma, F16)):
            c.errors.append(f"h x*y+z[{i}]: {H[3]!r}, want {separate!r} (or the fma)")
    c.done()


def test_rounding_of_values_past_int64(std450, rng):
    """floor, ceil, trunc, round, roundEven, fract and modf of values whose magnitude is past
    2**63 (all already integers): the value itself (fract 0)."""
    x, y, z, ad = inputs(rng)
    big32 = np.array([3e20, -1e30, 2.0 ** 63, -2.0 ** 64, 1.7e38, -9.5e18], F32)
    big64 = np.array([1e150, -2.0 ** 63 * 3, 2.0 ** 70 + 2.0 ** 18, -1e300, 9.3e18, -1.8e19])
    x[:6], ad[:6] = big32, big64
    r, rd, _, _ = run(std450, x, y, z, ad)
    c = Checker()
    for i in range(6):
        for k, name in ((2, "floor"), (3, "ceil"), (4, "round"), (5, "roundEven"), (6, "trunc"),
                        (12, "modf whole"), (14, "roundEven(x/2)")):
            c.exact(name, i, r[i, k], big32[i] * (F32(0.5) if k == 14 else F32(1)))
        c.exact("fract", i, r[i, 7], 0.0)
        c.exact("modf fraction", i, r[i, 11], 0.0)
        for k, name in ((2, "d floor"), (4, "d roundEven"), (5, "d trunc"), (6, "d ceil")):
            c.exact(name, i, rd[i, k], big64[i])
        c.exact("d fract", i, rd[i, 3], 0.0)
    c.done()


def test_min_max_with_nan(std450, rng):
    """GLSL min/max are FMin/FMax: with a NaN operand, which operand is the result is undefined -
    so the result is x or NaN, never anything else."""
    x, y, z, ad = inputs(rng)
    y[::2] = np.nan
    x[1::4] = np.nan
    r, _, _, ru = run(std450, x, y, z, ad)
    for i in range(N):
        for k, name in ((9, "min"), (10, "max")):
            got = r[i, k]
            ok = [v for v in (x[i], y[i])]
            assert any(got == v or (np.isnan(got) and np.isnan(v)) for v in ok), (name, i, got)
    isnan = np.isnan(x).astype(np.uint32)
    isinf = np.isinf(y).astype(np.uint32)
    np.testing.assert_array_equal(ru[:, 7], x.view(np.uint32) ^ isnan ^ (isinf << 1))


# A 4 x 4 integer matrix of determinant 1 (lower x upper unitriangular): its inverse is an integer
# matrix, and float64 cofactors of such small integers are exact, so the inverse is exact too.
_L = np.array([[1, 0, 0, 0], [2, 1, 0, 0], [-1, 3, 1, 0], [0, 1, -2, 1]], F64)
_U = np.array([[1, 2, 0, -1], [0, 1, 1, 0], [0, 0, 1, 3], [0, 0, 0, 1]], F64)
UNIMODULAR = _L @ _U
UNIMODULAR_INV = np.rint(np.linalg.inv(_U) @ np.linalg.inv(_L))


def _columns(mat):
    """A matrix's components in SPIR-V's order: column by column."""
    return mat.T.reshape(-1)


def test_matrix_inverse(kc, rng):
    """GLSL.std.450 MatrixInverse and Determinant of mat2, mat3, mat4 (float32) and dmat3, dmat4:
    against numpy's float64 inverse within a tolerance scaled by the condition number; the
    unimodular integer matrix of invocation 0 and a diagonal mat2 bit for bit (hand-checkable:
    their inverses are exact)."""
    k = kc("std450_inverse")
    m = rng.uniform(-4, 4, (16, 29)).astype(F32)
    m[:, :4] += _columns(np.diag([5.0, 5.0])).astype(F32)       # keep them well conditioned
    m[:, 4:13] += _columns(5 * np.eye(3)).astype(F32)
    m[:, 13:] += _columns(5 * np.eye(4)).astype(F32)
    m[0, :4] = _columns(np.diag([2.0, -4.0]))
    m[0, 13:] = _columns(UNIMODULAR)
    d = rng.uniform(-4, 4, (16, 25))
    d[:, :9] += _columns(5 * np.eye(3))
    d[:, 9:] += _columns(5 * np.eye(4))
    d[0, 9:] = _columns(UNIMODULAR)
    r, e = np.zeros(16 * 32, F32), np.zeros(16 * 27, F64)
    k.dispatch(1, {0: m.reshape(-1), 1: r, 2: d.reshape(-1), 3: e})
    r, e = r.reshape(16, 32), e.reshape(16, 27)
    np.testing.assert_array_equal(r[0, :4], _columns(np.diag([0.5, -0.25])).astype(F32))
    np.testing.assert_array_equal(r[0, 13:29], _columns(UNIMODULAR_INV).astype(F32))
    assert r[0, 29] == -8.0 and r[0, 31] == 1.0
    np.testing.assert_array_equal(e[0, 9:25], _columns(UNIMODULAR_INV))
    assert e[0, 26] == 1.0
    for i in range(16):
        mats = [(m[i, a:a + n * n].astype(F64).reshape(n, n).T, r[i, o:o + n * n], r[i, det], EPS32)
                for a, o, n, det in ((0, 0, 2, 29), (4, 4, 3, 30), (13, 13, 4, 31))]
        mats += [(d[i, a:a + n * n].reshape(n, n).T, e[i, o:o + n * n], e[i, det], EPS64)
                 for a, o, n, det in ((0, 0, 3, 25), (9, 9, 4, 26))]
        for mat, got, got_det, eps in mats:
            n = mat.shape[0]
            inv = np.linalg.inv(mat)
            tol = 64 * eps * np.linalg.cond(mat) * np.abs(inv).max()
            np.testing.assert_allclose(got.reshape(n, n).T, inv, rtol=0, atol=tol)
            # the determinant: float64 products of the entries, rounded once
            scale = np.prod(np.abs(mat).max(axis=1))
            assert abs(got_det - np.linalg.det(mat)) <= 4 * eps * scale * math.factorial(n), (i, n)


def test_long_lane_loops_are_kept_from_llvms_loop_vectorizer(kc):
    """LLVM unrolls the inverse shader's loops into a lane loop of thousands of instructions,
    on which its loop vectorizer spent 18 of a 20 s compile and vectorized nothing: the lane loop
    of a body past KernelGen.LANE_VECTORIZE_MAX instructions is marked not to be vectorized; a
    short one (saxpy's) is left to LLVM."""
    from jitcoop.codegen.emitter import KernelGen
    marked = '!{!"llvm.loop.vectorize.enable", i1 false}'
    k = kc("std450_inverse")
    latch = k.source.split("\nlane.latch:\n", 1)[1].split(":\n", 1)[0]
    assert "label %lane.head" in latch and "!llvm.loop !8996" in latch and marked in k.source
    assert k.source.split("\nlane.head:", 1)[1].count("\n  ") > KernelGen.LANE_VECTORIZE_MAX
    saxpy = kc("core/saxpy")
    assert marked not in saxpy.source


@pytest.mark.parametrize("shader", ["frexp", "frexp_ptr"])
def test_frexp(kc, rng, shader):
    """frexp: x = m * 2^e with m in [0.5, 1) (subnormals included); as FrexpStruct (glslang's
    form) and as Frexp, the exponent stored through a pointer (frexp_ptr.spvasm, the same shader
    rewritten by hand)."""
    k = kc(shader)
    a = rng.uniform(-1e6, 1e6, N).astype(F32)
    a[:6] = [0.0, 1.0, -0.5, 3.0, 1e-40, 2.0 ** 100]
    m = np.zeros(N, F32)
    e = np.zeros(N, np.int32)
    k.dispatch(1, {0: a, 1: m, 2: e})
    for i in range(N):
        wm, we = math.frexp(float(a[i]))
        assert m[i] == wm and e[i] == we, (a[i], m[i], e[i], wm, we)
