"""Integer and float arithmetic, comparisons and conversions of every width, bit-exact against
references written from the SPIR-V semantics (not from the engine), on inputs drawn by hypothesis.

Shaders: tests/shaders/arith/{int,uint}{8,16,32,64}.comp, float{16,32,64}.comp and fmod.comp
(GLSL beside the compiled .spv; each .comp names the glslang command), and one module written here
in SPIR-V assembly for what glslang never emits (OpSRem, OpFRem, unordered comparisons). Each
invocation i of a 64-wide workgroup reads a[i], b[i] and writes one slot per expression, so one
dispatch checks every operation on 64 inputs.

Where SPIR-V leaves a result undefined the reference follows jitcoop's documented choice: unsigned
x/0 = all ones, signed x/0 = -1, x%0 = x, INT_MIN/-1 = INT_MIN, shift counts modulo the width,
float->int saturating with NaN -> 0. Floats compare as bit patterns, except that any NaN matches any
NaN (and, for OpFMod and OpFRem only, the sign of a zero result is not checked).
"""
import math
import os
import re
from fractions import Fraction
from pathlib import Path

os.environ.setdefault("JITCOOP_CACHE_DIR",
                      str(Path(__file__).resolve().parents[1] / ".pytest_cache" / "jitcoop"))

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import Phase, given, settings, strategies as st  # noqa: E402

import jitcoop  # noqa: E402
from conftest import round_exact  # noqa: E402

ARITH = Path(__file__).resolve().parent / "shaders" / "arith"
# 30 examples per test; no shrinking: a failure already names each failing lane's inputs, and
# shrinking lists of 64 values takes minutes.
SETTINGS = settings(max_examples=30, deadline=None,
                    phases=[Phase.explicit, Phase.reuse, Phase.generate])
N = 64  # invocations per dispatch (the shaders' local_size_x)

# ---------------------------------------------------------------------------------------------
# Formats

INT_TYPES = {f"{'' if s else 'u'}int{w}": (w, s) for s in (True, False) for w in (8, 16, 32, 64)}


def int_dtype(bits, signed):
    return np.dtype(f"{'i' if signed else 'u'}{bits // 8}")


def int_range(bits, signed):
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def wrap(v, bits, signed):
    """v reduced modulo 2**bits into the range of the type."""
    v &= (1 << bits) - 1
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v


# (precision p with the hidden bit, minimum normal exponent, maximum exponent)
FLOAT_FORMATS = {"float16": (11, -14, 15, np.float16, np.uint16),
                 "float32": (24, -126, 127, np.float32, np.uint32),
                 "float64": (53, -1022, 1023, np.float64, np.uint64)}


def round_to_format(x, fmt):
    """The exact value x (int, Fraction or Python float; finite) rounded to nearest-even into the
    float format `fmt`, as a Python float (inf on overflow). Written from IEEE 754, with no float
    arithmetic on the way, so it checks double-rounding paths (int64 -> float32, float64 ->
    float16)."""
    q = Fraction(x)
    if q == 0:
        return math.copysign(0.0, x) if isinstance(x, float) else 0.0
    return round_exact(q, *FLOAT_FORMATS[fmt][:3])


def float_to_format(x, fmt):
    """A Python float converted to another float format (OpFConvert)."""
    if math.isnan(x) or math.isinf(x):
        return x
    return round_to_format(x, fmt)


def float_to_int(x, bits, signed):
    """OpConvertFToS/U as jitcoop defines it: truncate toward zero, saturate, NaN -> 0."""
    lo, hi = int_range(bits, signed)
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    return min(max(math.trunc(x), lo), hi)


def same_bits(got, want, *, zero_sign=True):
    """Mask of elements equal as bit patterns; any NaN equals any NaN."""
    got = np.asarray(got)
    want = np.asarray(want, dtype=got.dtype)
    if got.dtype.kind != "f":
        return got == want
    ui = np.dtype(f"u{got.dtype.itemsize}")
    ok = got.view(ui) == want.view(ui)
    ok |= np.isnan(got) & np.isnan(want)
    if not zero_sign:
        ok |= (got == 0) & (want == 0)
    return ok


def check(name, got, want, inputs, *, mask=None, zero_sign=True):
    """Assert got == want bit-exactly where mask (default everywhere), naming the failing inputs."""
    got = np.asarray(got)
    want = np.asarray(want, dtype=got.dtype)
    ok = same_bits(got, want, zero_sign=zero_sign)
    if mask is not None:
        ok |= ~np.asarray(mask)
    if not ok.all():
        bad = np.flatnonzero(~ok)[:6]
        rows = ", ".join(
            f"{'/'.join(repr(v[j].item()) for v in inputs)} -> got {got[j]!r} want {want[j]!r}"
            for j in bad)
        raise AssertionError(f"{name}: {int((~ok).sum())} of {ok.size} wrong: {rows}")


def _shader_lines(name, pattern):
    return re.findall(pattern, (ARITH / f"{name}.comp").read_text(), re.M)


def test_shaders_match_expression_lists():
    """The reference lists below follow the order of the expressions in the shaders."""
    conv = [f"c{'i' if s else 'u'}{b}" if b else f"cf{n[5:]}" for n, b, s in CONVERSIONS]
    for name in INT_TYPES:
        assert len(_shader_lines(name, r"^\s*r\[o \+ \d+u\] = ")) == len(INT_OPS)
        assert _shader_lines(name, r"^\s*(c\w+)\[i\] = ") == conv
    for name in FLOAT_FORMATS:
        assert len(_shader_lines(name, r"^\s*r\[o \+ \d+u\] = ")) == len(FLOAT_OPS)
        assert len(_shader_lines(name, r"^\s*cmp\[p \+ \d+u\] = ")) == len(FLOAT_CMPS)
        assert _shader_lines(name, r"^\s*(c\w+)\[i\] = ") == conv


# ---------------------------------------------------------------------------------------------
# Kernels: one per shader for the whole module

# `kernels(name)`: the compiled kernel of shaders/arith/<name>.spv (the `kernels` fixture in
# conftest.py), compiled once per session.


CONVERSIONS = [("int8", 8, True), ("uint8", 8, False), ("int16", 16, True), ("uint16", 16, False),
               ("int32", 32, True), ("uint32", 32, False), ("int64", 64, True),
               ("uint64", 64, False), ("float16", None, None), ("float32", None, None),
               ("float64", None, None)]


def conversion_outputs(first_binding):
    """Fresh zeroed output arrays for the c<type>[] buffers, keyed by binding."""
    out = {}
    for j, (name, bits, signed) in enumerate(CONVERSIONS):
        dt = int_dtype(bits, signed) if bits else FLOAT_FORMATS[name][3]
        out[first_binding + j] = (name, np.zeros(N, dt))
    return out


# ---------------------------------------------------------------------------------------------
# Integers

INT_OPS = ["add", "sub", "mul", "div", "mod", "and", "or", "xor", "shl_masked", "shr_masked",
           "shl_raw", "shr_raw", "lt", "le", "gt", "ge", "eq", "ne", "neg", "not",
           "div7", "mod7"]  # the order of the expressions in the shaders


def int_reference(op, bits, signed):
    """The function (x, y) -> result of one expression of the integer shaders, on Python ints."""
    lo, hi = int_range(bits, signed)
    ones = (1 << bits) - 1

    def div(x, y):
        if y == 0:
            return -1 if signed else ones        # documented choice: -1 / all ones
        if signed and x == lo and y == -1:
            return lo                            # documented choice: INT_MIN / -1 = INT_MIN
        q = abs(x) // abs(y)                     # truncating division
        return q if (x < 0) == (y < 0) else -q

    def mod(x, y):                               # OpUMod / OpSMod: the sign of the divisor
        if y == 0:
            return x                             # documented choice: x % 0 = x
        return x - y * math.floor(Fraction(x, y))

    def shl(x, s):                               # the count modulo the width (documented)
        return x << (s & (bits - 1))

    def shr(x, s):                               # arithmetic for signed (Python >> floors), logical
        return x >> (s & (bits - 1))             # for unsigned (x >= 0)

    f = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
         "div": div, "mod": mod,
         "and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y,
         "shl_masked": lambda x, y: shl(x, y & (bits - 1)),
         "shr_masked": lambda x, y: shr(x, y & (bits - 1)),
         "shl_raw": shl, "shr_raw": shr,
         "lt": lambda x, y: int(x < y), "le": lambda x, y: int(x <= y),
         "gt": lambda x, y: int(x > y), "ge": lambda x, y: int(x >= y),
         "eq": lambda x, y: int(x == y), "ne": lambda x, y: int(x != y),
         "neg": lambda x, y: -x, "not": lambda x, y: ~x,
         "div7": lambda x, y: div(x, 7), "mod7": lambda x, y: mod(x, 7)}[op]
    return lambda x, y: wrap(f(x, y), bits, signed)


def int_edges(bits, signed):
    lo, hi = int_range(bits, signed)
    e = {0, 1, 2, 3, 7, lo, hi, lo + 1, hi - 1, bits - 1, bits, bits + 1, 2 * bits, 2 * bits + 3,
         hi // 2, (hi // 2) + 1, 0x55 & hi, 0xAA & hi}
    if signed:
        e |= {-1, -2, -7, -bits, -(bits + 1), lo // 2}
    if bits == 64:
        # integers whose conversion to float32 is wrong if done through float64 (double rounding)
        e |= {(1 << 53) + (1 << 29) + 1, (1 << 62) + (1 << 38) + 1, (1 << 60) - (1 << 35) - 1}
        if signed:
            e |= {-((1 << 53) + (1 << 29) + 1)}
        else:
            e |= {(1 << 63) + (1 << 39) + 1}
    if bits >= 32:
        e |= {(1 << 24) + 1, (1 << 24) + 3, (1 << 31) - 64 if bits > 32 or not signed else 2 ** 30}
    return sorted(v for v in e if lo <= v <= hi)


def int_values(bits, signed, n):
    """n values of the type: edge values, anything in range, and small numbers."""
    lo, hi = int_range(bits, signed)
    elem = st.one_of(st.sampled_from(int_edges(bits, signed)), st.integers(lo, hi),
                     st.integers(max(lo, -40), min(hi, 40)))
    return st.lists(elem, min_size=n, max_size=n)


def pairs(xs, ys):
    """a, b covering every pair of xs x ys (8 x 8 = the 64 invocations)."""
    return [x for x in xs for _ in ys], [y for _ in xs for y in ys]


def run_int(kernel, bits, signed, a, b):
    dt = int_dtype(bits, signed)
    a, b = np.array(a, dt), np.array(b, dt)
    r = np.zeros(N * len(INT_OPS), dt)
    conv = conversion_outputs(3)
    kernel.dispatch((1, 1, 1), {0: a, 1: b, 2: r, **{k: v[1] for k, v in conv.items()}})
    return a, b, r.reshape(N, len(INT_OPS)), {name: arr for name, arr in conv.values()}


def check_int_ops(tname, kernel, xs, ys, ops=INT_OPS):
    bits, signed = INT_TYPES[tname]
    a, b, r, _ = run_int(kernel, bits, signed, xs, ys)
    for op in ops:
        f = int_reference(op, bits, signed)
        want = [f(x, y) for x, y in zip(xs, ys)]
        check(f"{tname} {op}", r[:, INT_OPS.index(op)], want, (a, b))


def _conv_want(name, bits, signed, x):
    if bits:
        return wrap(x, bits, signed)          # OpSConvert/OpUConvert: sign/zero extend, truncate
    return round_to_format(x, name)           # OpConvertSToF/UToF: round to nearest even once


def check_int_conversions(tname, kernel, xs):
    bits, signed = INT_TYPES[tname]
    a, _, _, conv = run_int(kernel, bits, signed, xs, xs)
    for name, tb, ts in CONVERSIONS:
        want = [_conv_want(name, tb, ts, x) for x in xs]
        check(f"{tname} -> {name}", conv[name], want, (a,))


@pytest.mark.parametrize("tname", list(INT_TYPES))
def test_int_ops(kernels, tname):
    """Every integer expression of the type's shader (+ - * / % & | ^, << >> by masked and by raw
    counts, comparisons, -x, ~x, x/7, x%7) on all pairs of 8 x 8 drawn values."""
    bits, signed = INT_TYPES[tname]

    @SETTINGS
    @given(xs=int_values(bits, signed, 8), ys=int_values(bits, signed, 8))
    def inner(xs, ys):
        check_int_ops(tname, kernels(tname), *pairs(xs, ys))
    inner()


@pytest.mark.parametrize("tname", list(INT_TYPES))
def test_int_conversions(kernels, tname):
    """Conversions of each integer type to every integer width (sign or zero extension according
    to the source, truncation) and to float16/32/64 (rounded to nearest even, once)."""
    bits, signed = INT_TYPES[tname]

    @SETTINGS
    @given(xs=int_values(bits, signed, N))
    def inner(xs):
        check_int_conversions(tname, kernels(tname), xs)
    inner()


@pytest.mark.parametrize("tname", list(INT_TYPES))
def test_int_edge_values(kernels, tname):
    """Every edge value against every edge value (a deterministic complement of the hypothesis
    draws): INT_MIN/-1, x/0, x%0, shifts by >= the width and by negative counts, the integers
    whose float32 conversion goes wrong through float64."""
    bits, signed = INT_TYPES[tname]
    e = int_edges(bits, signed)
    allpairs = [(x, y) for x in e for y in e]
    for s in range(0, len(allpairs), N):
        chunk = allpairs[s:s + N]
        chunk += [(0, 1)] * (N - len(chunk))
        check_int_ops(tname, kernels(tname), [p[0] for p in chunk], [p[1] for p in chunk])
    for s in range(0, len(e), N):
        chunk = e[s:s + N]
        check_int_conversions(tname, kernels(tname), chunk + [0] * (N - len(chunk)))


# ---------------------------------------------------------------------------------------------
# Floats

FLOAT_OPS = ["add", "sub", "mul", "div", "mul_add", "mul_sub", "sum_times_diff", "neg",
             "div3", "sub1"]  # the order of the expressions in the shaders
FLOAT_CMPS = ["lt", "le", "gt", "ge", "eq", "ne", "not_lt", "isnan", "isinf"]


def float_reference(op, a, b):
    """One expression of the float shaders on numpy arrays of the format: each operation rounded
    to the format (numpy rounds float16 + - * / correctly: computed in float32, rounded once)."""
    one, three = a.dtype.type(1), a.dtype.type(3)
    with np.errstate(all="ignore"):
        return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
                "div": lambda: a / b, "mul_add": lambda: (a * b) + a,
                "mul_sub": lambda: (a * b) - b, "sum_times_diff": lambda: (a + b) * (a - b),
                "neg": lambda: -a, "div3": lambda: a / three, "sub1": lambda: a - one}[op]()


def float_compare(op, a, b):
    with np.errstate(all="ignore"):
        return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b, "ne": a != b,
                "not_lt": ~(a < b), "isnan": np.isnan(a),
                "isinf": np.isinf(a)}[op].astype(np.uint32)


def float_edges(fname):
    p, emin, emax, dt, _ = FLOAT_FORMATS[fname]
    fi = np.finfo(dt)
    e = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 7.0, -7.0, 0.1, 1 / 3,
         math.inf, -math.inf, math.nan, float(fi.max), -float(fi.max), float(fi.tiny),
         float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
         127.5, 127.99, 128.0, -128.0, -128.5, -129.0, 255.5, 256.0, -0.99, 32767.5, 32768.0,
         -32768.5, -32769.0, 65504.0, 65519.99, 65520.0, 65535.5, 65536.0, 2147483520.0, 2.0 ** 31,
         -2.0 ** 31, -2147483904.0, 4294967040.0, 2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64,
         -9223373136366403584.0, 1e30, -1e30,
         # conversions that go wrong when rounded twice (through float32 or float64)
         1 + 2 ** -11 + 2 ** -23, 1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -24 + 2 ** -60,
         2.0 ** -25, 2.0 ** -25 + 2.0 ** -40, 3.4028235677973366e38, 3.4028235677973362e38]
    # keep what the format holds exactly (and NaN)
    with np.errstate(all="ignore"):
        return [v for v in e if math.isnan(v) or float(dt(v)) == v]


def float_values(fname, n):
    dt, ut = FLOAT_FORMATS[fname][3:]
    width = 8 * np.dtype(dt).itemsize
    any_bits = st.integers(0, (1 << width) - 1).map(lambda u: float(ut(u).view(dt)))
    parts = [st.sampled_from(float_edges(fname)), any_bits,
             st.integers(-400, 400).map(lambda v: v / 4)]
    if width > 16:   # (hypothesis draws float16 by rejection: too slow for 64 values)
        parts.append(st.floats(width=width))
    elem = st.one_of(*parts)
    return st.lists(elem, min_size=n, max_size=n)


def run_float(kernel, fname, xs, ys):
    dt = FLOAT_FORMATS[fname][3]
    a, b = np.array(xs, dt), np.array(ys, dt)
    r = np.zeros(N * len(FLOAT_OPS), dt)
    cmp = np.zeros(N * len(FLOAT_CMPS), np.uint32)
    conv = conversion_outputs(4)
    kernel.dispatch((1, 1, 1), {0: a, 1: b, 2: r, 3: cmp, **{k: v[1] for k, v in conv.items()}})
    return (a, b, r.reshape(N, len(FLOAT_OPS)), cmp.reshape(N, len(FLOAT_CMPS)),
            {name: arr for name, arr in conv.values()})


def check_float_ops(fname, kernel, xs, ys, ops=FLOAT_OPS, cmps=FLOAT_CMPS):
    a, b, r, cmp, _ = run_float(kernel, fname, xs, ys)
    for op in ops:
        want = float_reference(op, a, b)
        check(f"{fname} {op}", r[:, FLOAT_OPS.index(op)], want, (a, b))
    for op in cmps:
        check(f"{fname} {op}", cmp[:, FLOAT_CMPS.index(op)], float_compare(op, a, b), (a, b))


def check_float_conversions(fname, kernel, xs):
    a, _, _, _, conv = run_float(kernel, fname, xs, xs)
    for name, tb, ts in CONVERSIONS:
        if tb:   # OpConvertFToS/U: truncate, saturate, NaN -> 0 (documented)
            want = [float_to_int(float(x), tb, ts) for x in a]
        else:    # OpFConvert: exact when widening, rounded to nearest even once when narrowing
            want = [float_to_format(float(x), name) for x in a]
        check(f"{fname} -> {name}", conv[name], want, (a,))


FLOAT_TYPES = list(FLOAT_FORMATS)


@pytest.mark.parametrize("fname", FLOAT_TYPES)
def test_float_ops(kernels, fname):
    """+ - * /, precise (never fused) x*y+x, x*y-y, (x+y)*(x-y), -x, x/3, x-1, and the
    comparisons < <= > >= == != !(x<y) isnan isinf with NaN operands, on all pairs of 8 x 8
    values."""
    @SETTINGS
    @given(xs=float_values(fname, 8), ys=float_values(fname, 8))
    def inner(xs, ys):
        check_float_ops(fname, kernels(fname), *pairs(xs, ys))
    inner()


@pytest.mark.parametrize("fname", FLOAT_TYPES)
def test_float_conversions(kernels, fname):
    """Float -> every integer width (truncated, saturated, NaN -> 0) and -> float16/32/64."""
    @SETTINGS
    @given(xs=float_values(fname, N))
    def inner(xs):
        check_float_conversions(fname, kernels(fname), xs)
    inner()


@pytest.mark.parametrize("fname", FLOAT_TYPES)
def test_float_edge_values(kernels, fname):
    """Every edge value against every edge value: signed zeros, infinities, NaN, subnormals, the
    limits of every integer type, and the values that expose double rounding in conversions."""
    e = float_edges(fname)
    allpairs = [(x, y) for x in e for y in e]
    for s in range(0, len(allpairs), N):
        chunk = allpairs[s:s + N]
        chunk += [(0.0, 1.0)] * (N - len(chunk))
        check_float_ops(fname, kernels(fname), [p[0] for p in chunk], [p[1] for p in chunk])
    for s in range(0, len(e), N):
        chunk = e[s:s + N]
        check_float_conversions(fname, kernels(fname), chunk + [0.0] * (N - len(chunk)))


def fmod_reference(a, b):
    """OpFMod: the remainder of x / y with the sign of y: the exact remainder (np.fmod, sign of x),
    moved to y's side by adding y, rounded once. Compared only for finite x and finite nonzero y
    (undefined for y = 0; the precision of x - y*floor(x/y) for infinities), and without the sign
    of a zero result."""
    with np.errstate(all="ignore"):
        r = np.fmod(a, b)
        fix = (r != 0) & (np.signbit(r) != np.signbit(b))
        return np.where(fix, r + b, r).astype(a.dtype)


def check_fmod(kernel, vals):
    """vals: fname -> (xs, ys), N each."""
    binds, arrays = {}, {}
    for j, fname in enumerate(FLOAT_TYPES):
        dt = FLOAT_FORMATS[fname][3]
        a, b = np.array(vals[fname][0], dt), np.array(vals[fname][1], dt)
        r = np.zeros(N, dt)
        binds.update({3 * j: a, 3 * j + 1: b, 3 * j + 2: r})
        arrays[fname] = (a, b, r)
    kernel.dispatch((1, 1, 1), binds)
    for fname, (a, b, r) in arrays.items():
        mask = np.isfinite(a) & np.isfinite(b) & (b != 0)
        check(f"{fname} mod", r, fmod_reference(a, b), (a, b), mask=mask, zero_sign=False)


def test_float_mod(kernels):
    """mod(x, y) on float16/32/64 (OpFMod), on all pairs of 8 x 8 drawn values per width."""
    @SETTINGS
    @given(v=st.fixed_dictionaries({f: st.tuples(float_values(f, 8), float_values(f, 8))
                                    for f in FLOAT_TYPES}))
    def inner(v):
        check_fmod(kernels("fmod"), {f: pairs(*xy) for f, xy in v.items()})
    inner()


def test_float_mod_edge_values(kernels):
    """mod(x, y) on every pair of edge values and of small multiples of 1/4 (exact results)."""
    lists = {}
    for fname in FLOAT_TYPES:
        e = float_edges(fname) + [v / 4 for v in range(-13, 14, 3)]
        lists[fname] = [(x, y) for x in e for y in e]
    for s in range(0, max(len(v) for v in lists.values()), N):
        vals = {}
        for fname, allpairs in lists.items():
            chunk = allpairs[s:s + N]
            chunk += [(0.0, 1.0)] * (N - len(chunk))
            vals[fname] = ([p[0] for p in chunk], [p[1] for p in chunk])
        check_fmod(kernels("fmod"), vals)


# ---------------------------------------------------------------------------------------------
# Instructions glslang never emits for GLSL: OpSRem, OpFRem, the unordered and the ordered
# not-equal comparisons. The module is SPIR-V assembly built here (jitcoop assembles it at load):
# r[i] = a[i] srem b[i], rf[i] = fa[i] frem fb[i], rc[i*12 + k] = the k-th comparison of fa, fb.

ASM_COMPARES = ["FOrdEqual", "FUnordEqual", "FOrdNotEqual", "FUnordNotEqual", "FOrdLessThan",
                "FUnordLessThan", "FOrdLessThanEqual", "FUnordLessThanEqual", "FOrdGreaterThan",
                "FUnordGreaterThan", "FOrdGreaterThanEqual", "FUnordGreaterThanEqual"]


def rem_compare_asm():
    names = ["A", "B", "FA", "FB", "R", "RF", "RC"]
    t = ["OpCapability Shader", "OpMemoryModel Logical GLSL450",
         "OpEntryPoint GLCompute %main \"main\" %gid " + " ".join(f"%{v}" for v in names),
         "OpExecutionMode %main LocalSize 64 1 1", "OpDecorate %gid BuiltIn GlobalInvocationId"]
    for ty in ("int", "float", "uint"):
        t += [f"OpDecorate %arr_{ty} ArrayStride 4", f"OpDecorate %S_{ty} Block",
              f"OpMemberDecorate %S_{ty} 0 Offset 0"]
    for j, v in enumerate(names):
        t += [f"OpDecorate %{v} DescriptorSet 0", f"OpDecorate %{v} Binding {j}"]
    t += ["%void = OpTypeVoid", "%fn_void = OpTypeFunction %void", "%bool = OpTypeBool",
          "%uint = OpTypeInt 32 0", "%int = OpTypeInt 32 1", "%float = OpTypeFloat 32",
          "%v3uint = OpTypeVector %uint 3", "%ptr_in_v3 = OpTypePointer Input %v3uint",
          "%gid = OpVariable %ptr_in_v3 Input"]
    for ty in ("int", "float", "uint"):
        t += [f"%arr_{ty} = OpTypeRuntimeArray %{ty}", f"%S_{ty} = OpTypeStruct %arr_{ty}",
              f"%p_S_{ty} = OpTypePointer StorageBuffer %S_{ty}",
              f"%p_{ty} = OpTypePointer StorageBuffer %{ty}"]
    for v, ty in zip(names, ["int", "int", "float", "float", "int", "float", "uint"]):
        t.append(f"%{v} = OpVariable %p_S_{ty} StorageBuffer")
    t += ["%int_0 = OpConstant %int 0", "%uint_0 = OpConstant %uint 0",
          "%uint_1 = OpConstant %uint 1", f"%uint_n = OpConstant %uint {len(ASM_COMPARES)}"]
    t += [f"%uint_k{k} = OpConstant %uint {k}" for k in range(len(ASM_COMPARES))]
    t += ["%main = OpFunction %void None %fn_void", "%entry = OpLabel",
          "%gidv = OpLoad %v3uint %gid", "%i = OpCompositeExtract %uint %gidv 0"]
    for v, ty, name in (("A", "int", "x"), ("B", "int", "y"), ("FA", "float", "fx"),
                        ("FB", "float", "fy")):
        t += [f"%p{name} = OpAccessChain %p_{ty} %{v} %int_0 %i",
              f"%{name} = OpLoad %{ty} %p{name}"]
    t += ["%srem = OpSRem %int %x %y", "%pr = OpAccessChain %p_int %R %int_0 %i",
          "OpStore %pr %srem",
          "%frem = OpFRem %float %fx %fy", "%prf = OpAccessChain %p_float %RF %int_0 %i",
          "OpStore %prf %frem", "%base = OpIMul %uint %i %uint_n"]
    for k, c in enumerate(ASM_COMPARES):
        t += [f"%c{k} = Op{c} %bool %fx %fy", f"%s{k} = OpSelect %uint %c{k} %uint_1 %uint_0",
              f"%o{k} = OpIAdd %uint %base %uint_k{k}",
              f"%p{k} = OpAccessChain %p_uint %RC %int_0 %o{k}", f"OpStore %p{k} %s{k}"]
    t += ["OpReturn", "OpFunctionEnd"]
    return "\n".join(t) + "\n"


@pytest.fixture(scope="module")
def rem_kernel():
    return jitcoop.Device().load(rem_compare_asm()).kernel()


def srem_reference(x, y):
    """OpSRem: the sign of the dividend; x rem 0 = x (documented); INT_MIN rem -1 = 0."""
    if y == 0:
        return x
    return x - y * int(Fraction(x, y))          # int() truncates toward zero


def unordered(op, a, b):
    with np.errstate(all="ignore"):
        nan = np.isnan(a) | np.isnan(b)
        base = {"Equal": a == b, "NotEqual": (a < b) | (a > b), "LessThan": a < b,
                "LessThanEqual": a <= b, "GreaterThan": a > b, "GreaterThanEqual": a >= b}
    kind, rel = ("Unord", op[6:]) if op.startswith("FUnord") else ("Ord", op[4:])
    return (base[rel] | nan if kind == "Unord" else base[rel] & ~nan).astype(np.uint32)


def check_rem_compare(kernel, xs, ys, fxs, fys):
    a, b = np.array(xs, np.int32), np.array(ys, np.int32)
    fa, fb = np.array(fxs, np.float32), np.array(fys, np.float32)
    r, rf = np.zeros(N, np.int32), np.zeros(N, np.float32)
    rc = np.zeros(N * len(ASM_COMPARES), np.uint32)
    kernel.dispatch((1, 1, 1), {0: a, 1: b, 2: fa, 3: fb, 4: r, 5: rf, 6: rc})
    check("int32 srem", r, [srem_reference(x, y) for x, y in zip(xs, ys)], (a, b))
    # OpFRem: the exact remainder with the sign of x (np.fmod is exact); finite x, finite
    # nonzero y only (undefined for y = 0; inherited from x - y*trunc(x/y) for infinities)
    with np.errstate(all="ignore"):
        want = np.fmod(fa, fb)
    check("float32 frem", rf, want, (fa, fb), mask=np.isfinite(fa) & np.isfinite(fb) & (fb != 0),
          zero_sign=False)
    rc = rc.reshape(N, len(ASM_COMPARES))
    for k, op in enumerate(ASM_COMPARES):
        check(f"float32 {op}", rc[:, k], unordered(op, fa, fb), (fa, fb))


def test_srem_frem_unordered_compares(rem_kernel):
    """OpSRem, OpFRem and all twelve ordered/unordered float comparisons (NaN operands included),
    on all pairs of 8 x 8 drawn values."""
    @SETTINGS
    @given(xs=int_values(32, True, 8), ys=int_values(32, True, 8),
           fxs=float_values("float32", 8), fys=float_values("float32", 8))
    def inner(xs, ys, fxs, fys):
        check_rem_compare(rem_kernel, *pairs(xs, ys), *pairs(fxs, fys))
    inner()


def test_srem_frem_unordered_compares_edges(rem_kernel):
    """The same on every pair of edge values."""
    ie, fe = int_edges(32, True), float_edges("float32")
    ip = [(x, y) for x in ie for y in ie]
    fp = [(x, y) for x in fe for y in fe]
    for s in range(0, max(len(ip), len(fp)), N):
        ic = (ip[s:s + N] + [(0, 1)] * N)[:N]
        fc = (fp[s:s + N] + [(0.0, 1.0)] * N)[:N]
        check_rem_compare(rem_kernel, [p[0] for p in ic], [p[1] for p in ic],
                          [p[0] for p in fc], [p[1] for p in fc])
