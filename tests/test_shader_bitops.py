"""Integer bit operations, division and remainders (OpBitCount, OpBitReverse, OpBitFieldInsert,
OpBitField[SU]Extract, GLSL.std.450 FindILsb/FindSMsb/FindUMsb, OpSRem/OpSMod/OpUMod/OpSDiv/OpUDiv)
on 8/16/32/64-bit integers, and float remainders, NaN-aware min/max and ordered/unordered
comparisons (OpFRem/OpFMod, NMin/NMax/FMin/FMax, OpIsNan/OpIsInf, OpFOrd*/OpFUnord*) on
float16/32/64, bit-exact against Python/numpy references written from the SPIR-V definitions.

The modules are SPIR-V assembly generated below (GLSL cannot express OpSRem, OpFRem or the
unordered comparisons, and glslang widens 8/16-bit bit operations to 32 bits), so every opcode
runs at the width under test. One kernel per width; hypothesis feeds random inputs through it.

Where SPIR-V leaves a result undefined the reference uses jitcoop's documented choice (x/0 = all
ones, -1 signed; x%0 = x; INT_MIN/-1 = INT_MIN) or skips the case (bit-field offset + count past
the width, float remainders by 0 or of inf/NaN, FMin/FMax of a NaN, the sign of a zero min/max/mod).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitcoop

N = 64

# -- the modules ----------------------------------------------------------------------------------

INT_OPS = [
    # (name, kind, operands)  kind: "op" core opcode, "ext" GLSL.std.450
    ("bitcount", "op", "OpBitCount", "a"),
    ("reverse", "op", "OpBitReverse", "a"),
    ("insert", "op", "OpBitFieldInsert", "a b off cnt"),
    ("sextract", "op", "OpBitFieldSExtract", "a off cnt"),
    ("uextract", "op", "OpBitFieldUExtract", "a off cnt"),
    ("findilsb", "ext", "FindILsb", "a"),
    ("findsmsb", "ext", "FindSMsb", "a"),
    ("findumsb", "ext", "FindUMsb", "a"),
    ("srem", "op", "OpSRem", "a b"),
    ("smod", "op", "OpSMod", "a b"),
    ("umod", "op", "OpUMod", "a b"),
    ("sdiv", "op", "OpSDiv", "a b"),
    ("udiv", "op", "OpUDiv", "a b"),
]


def int_ops(width):
    """GLSL.std.450 defines FindSMsb/FindUMsb for 32-bit components; glslang also emits them on
    64-bit values for findMSB(int64_t/uint64_t), so they are tested at 32 and 64 bits."""
    return [o for o in INT_OPS if width >= 32 or o[0] not in ("findsmsb", "findumsb")]


def int_module(width):
    caps = {8: ["Int8", "StorageBuffer8BitAccess"], 16: ["Int16", "StorageBuffer16BitAccess"],
            32: [], 64: ["Int64"]}[width]
    t = "%u32" if width == 32 else "%tW"
    lines = ["OpCapability Shader"] + [f"OpCapability {c}" for c in caps] + [
        '%std = OpExtInstImport "GLSL.std.450"',
        "OpMemoryModel Logical GLSL450",
        'OpEntryPoint GLCompute %main "main" %gid %bA %bB %bO %bR',
        "OpExecutionMode %main LocalSize 64 1 1",
        "OpDecorate %gid BuiltIn GlobalInvocationId",
        f"OpDecorate %rtW ArrayStride {width // 8}",
        "OpMemberDecorate %SW 0 Offset 0", "OpDecorate %SW Block",
    ]
    if width != 32:
        lines += ["OpDecorate %rt32 ArrayStride 4", "OpMemberDecorate %S32 0 Offset 0",
                  "OpDecorate %S32 Block"]
    for k, v in enumerate(["bA", "bB", "bO", "bR"]):
        lines += [f"OpDecorate %{v} DescriptorSet 0", f"OpDecorate %{v} Binding {k}"]
    lines += ["%void = OpTypeVoid", "%fn = OpTypeFunction %void", "%u32 = OpTypeInt 32 0",
              "%v3u32 = OpTypeVector %u32 3", "%pin = OpTypePointer Input %v3u32",
              "%gid = OpVariable %pin Input"]
    if width != 32:
        lines += [f"%tW = OpTypeInt {width} 0"]
    lines += [f"%rtW = OpTypeRuntimeArray {t}", "%SW = OpTypeStruct %rtW",
              "%pSW = OpTypePointer StorageBuffer %SW", f"%pW = OpTypePointer StorageBuffer {t}"]
    if width != 32:
        lines += ["%rt32 = OpTypeRuntimeArray %u32", "%S32 = OpTypeStruct %rt32",
                  "%pS32 = OpTypePointer StorageBuffer %S32"]
        s32 = "%pS32"
    else:
        s32 = "%pSW"
    lines += ["%p32 = OpTypePointer StorageBuffer %u32",
              "%bA = OpVariable %pSW StorageBuffer", "%bB = OpVariable %pSW StorageBuffer",
              f"%bO = OpVariable {s32} StorageBuffer", "%bR = OpVariable %pSW StorageBuffer"]
    ops = int_ops(width)
    K = len(ops)
    consts = sorted({0, 1, 2, K} | set(range(K)))
    lines += [f"%c{c} = OpConstant %u32 {c}" for c in consts]
    lines += ["%main = OpFunction %void None %fn", "%entry = OpLabel",
              "%gidv = OpLoad %v3u32 %gid", "%i = OpCompositeExtract %u32 %gidv 0",
              f"%pa = OpAccessChain %pW %bA %c0 %i", f"%a = OpLoad {t} %pa",
              f"%pb = OpAccessChain %pW %bB %c0 %i", f"%b = OpLoad {t} %pb",
              "%i2 = OpIMul %u32 %i %c2", "%i21 = OpIAdd %u32 %i2 %c1",
              "%po = OpAccessChain %p32 %bO %c0 %i2", "%off = OpLoad %u32 %po",
              "%pc = OpAccessChain %p32 %bO %c0 %i21", "%cnt = OpLoad %u32 %pc",
              f"%base = OpIMul %u32 %i %c{K}"]
    for k, (name, kind, op, args) in enumerate(ops):
        argv = " ".join("%" + x for x in args.split())
        if kind == "op":
            lines.append(f"%r{k} = {op} {t} {argv}")
        else:
            lines.append(f"%r{k} = OpExtInst {t} %std {op} {argv}")
        lines += [f"%ix{k} = OpIAdd %u32 %base %c{k}", f"%pr{k} = OpAccessChain %pW %bR %c0 %ix{k}",
                  f"OpStore %pr{k} %r{k}"]
    lines += ["OpReturn", "OpFunctionEnd"]
    return "\n".join(lines) + "\n"


# float ops: (name, kind, op, operands, result) result: "f" float type, "b" bool stored as u32
FLOAT_OPS = [
    ("frem", "op", "OpFRem", "x y", "f"),
    ("fmod", "op", "OpFMod", "x y", "f"),
    ("nmin", "ext", "NMin", "x y", "f"),
    ("nmax", "ext", "NMax", "x y", "f"),
    ("fmin", "ext", "FMin", "x y", "f"),
    ("fmax", "ext", "FMax", "x y", "f"),
    ("isnan", "op", "OpIsNan", "x", "b"),
    ("isinf", "op", "OpIsInf", "x", "b"),
    ("ord_eq", "op", "OpFOrdEqual", "x y", "b"),
    ("unord_eq", "op", "OpFUnordEqual", "x y", "b"),
    ("ord_ne", "op", "OpFOrdNotEqual", "x y", "b"),
    ("unord_ne", "op", "OpFUnordNotEqual", "x y", "b"),
    ("ord_lt", "op", "OpFOrdLessThan", "x y", "b"),
    ("unord_lt", "op", "OpFUnordLessThan", "x y", "b"),
    ("ord_ge", "op", "OpFOrdGreaterThanEqual", "x y", "b"),
    ("unord_ge", "op", "OpFUnordGreaterThanEqual", "x y", "b"),
]


def float_module(width):
    caps = {16: ["Float16", "StorageBuffer16BitAccess"], 32: [], 64: ["Float64"]}[width]
    lines = ["OpCapability Shader"] + [f"OpCapability {c}" for c in caps] + [
        '%std = OpExtInstImport "GLSL.std.450"',
        "OpMemoryModel Logical GLSL450",
        'OpEntryPoint GLCompute %main "main" %gid %bX %bY %bR %bB',
        "OpExecutionMode %main LocalSize 64 1 1",
        "OpDecorate %gid BuiltIn GlobalInvocationId",
        f"OpDecorate %rtF ArrayStride {width // 8}",
        "OpMemberDecorate %SF 0 Offset 0", "OpDecorate %SF Block",
        "OpDecorate %rt32 ArrayStride 4", "OpMemberDecorate %S32 0 Offset 0",
        "OpDecorate %S32 Block"]
    for k, v in enumerate(["bX", "bY", "bR", "bB"]):
        lines += [f"OpDecorate %{v} DescriptorSet 0", f"OpDecorate %{v} Binding {k}"]
    lines += ["%void = OpTypeVoid", "%fn = OpTypeFunction %void", "%u32 = OpTypeInt 32 0",
              "%bool = OpTypeBool", "%v3u32 = OpTypeVector %u32 3",
              "%pin = OpTypePointer Input %v3u32", "%gid = OpVariable %pin Input",
              f"%tF = OpTypeFloat {width}",
              "%rtF = OpTypeRuntimeArray %tF", "%SF = OpTypeStruct %rtF",
              "%pSF = OpTypePointer StorageBuffer %SF", "%pF = OpTypePointer StorageBuffer %tF",
              "%rt32 = OpTypeRuntimeArray %u32", "%S32 = OpTypeStruct %rt32",
              "%pS32 = OpTypePointer StorageBuffer %S32", "%p32 = OpTypePointer StorageBuffer %u32",
              "%bX = OpVariable %pSF StorageBuffer", "%bY = OpVariable %pSF StorageBuffer",
              "%bR = OpVariable %pSF StorageBuffer", "%bB = OpVariable %pS32 StorageBuffer"]
    nf = sum(1 for o in FLOAT_OPS if o[4] == "f")
    nb = len(FLOAT_OPS) - nf
    consts = sorted({0, 1, nf, nb} | set(range(len(FLOAT_OPS))))
    lines += [f"%c{c} = OpConstant %u32 {c}" for c in consts]
    lines += ["%main = OpFunction %void None %fn", "%entry = OpLabel",
              "%gidv = OpLoad %v3u32 %gid", "%i = OpCompositeExtract %u32 %gidv 0",
              "%px = OpAccessChain %pF %bX %c0 %i", "%x = OpLoad %tF %px",
              "%py = OpAccessChain %pF %bY %c0 %i", "%y = OpLoad %tF %py",
              f"%basef = OpIMul %u32 %i %c{nf}", f"%baseb = OpIMul %u32 %i %c{nb}"]
    kf = kb = 0
    for k, (name, kind, op, args, res) in enumerate(FLOAT_OPS):
        argv = " ".join("%" + x for x in args.split())
        rt = "%tF" if res == "f" else "%bool"
        if kind == "op":
            lines.append(f"%r{k} = {op} {rt} {argv}")
        else:
            lines.append(f"%r{k} = OpExtInst {rt} %std {op} {argv}")
        if res == "f":
            lines += [f"%ix{k} = OpIAdd %u32 %basef %c{kf}",
                      f"%pr{k} = OpAccessChain %pF %bR %c0 %ix{k}", f"OpStore %pr{k} %r{k}"]
            kf += 1
        else:
            lines += [f"%s{k} = OpSelect %u32 %r{k} %c1 %c0",
                      f"%ix{k} = OpIAdd %u32 %baseb %c{kb}",
                      f"%pr{k} = OpAccessChain %p32 %bB %c0 %ix{k}", f"OpStore %pr{k} %s{k}"]
            kb += 1
    lines += ["OpReturn", "OpFunctionEnd"]
    return "\n".join(lines) + "\n"


# -- integer references ------------------------------------------------------------------------------

def _s(v, w):
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def _msb(v):
    return v.bit_length() - 1          # -1 for 0


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def int_reference(name, a, b, off, cnt, w):
    """The result of op `name` as an unsigned w-bit integer; a, b unsigned w-bit."""
    m = (1 << w) - 1
    sa, sb = _s(a, w), _s(b, w)
    if name == "bitcount":
        r = bin(a).count("1")
    elif name == "reverse":
        r = int(format(a, f"0{w}b")[::-1], 2)
    elif name == "insert":
        mask = ((1 << cnt) - 1) << off
        r = (a & ~mask) | ((b << off) & mask)
    elif name in ("sextract", "uextract"):
        r = (a >> off) & ((1 << cnt) - 1)
        if name == "sextract" and cnt and r >> (cnt - 1):
            r -= 1 << cnt
    elif name == "findilsb":
        r = (a & -a).bit_length() - 1
    elif name == "findsmsb":
        r = _msb(sa if sa >= 0 else ~sa)
    elif name == "findumsb":
        r = _msb(a)
    elif name == "srem":
        r = a if b == 0 else sa - sb * _tdiv(sa, sb)
    elif name == "smod":
        r = a if b == 0 else sa % sb           # Python's % takes the divisor's sign, as OpSMod
    elif name == "umod":
        r = a if b == 0 else a % b
    elif name == "sdiv":
        r = -1 if b == 0 else _tdiv(sa, sb)    # INT_MIN / -1 wraps to INT_MIN
    elif name == "udiv":
        r = m if b == 0 else a // b
    else:
        raise KeyError(name)
    return r & m


UDT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@pytest.fixture(scope="module")
def device():
    return jitcoop.Device()


_KERNELS = {}


def kernel(device, kind, w):
    if (kind, w) not in _KERNELS:
        text = int_module(w) if kind == "int" else float_module(w)
        _KERNELS[kind, w] = device.load(text).kernel()
    return _KERNELS[kind, w]


def run_int(k, w, a, b, offcnt):
    ops = int_ops(w)
    A = np.array(a, np.uint64).astype(UDT[w])
    B = np.array(b, np.uint64).astype(UDT[w])
    O = np.array(offcnt, np.uint32).reshape(-1)
    R = np.zeros(N * len(ops), UDT[w])
    k.dispatch(1, {0: A, 1: B, 2: O, 3: R})
    return R.reshape(N, len(ops))


FIND = ("findilsb", "findsmsb", "findumsb")


def check_int(k, w, a, b, offcnt, only=None, skip=()):
    got = run_int(k, w, a, b, offcnt)
    for j, (name, *_rest) in enumerate(int_ops(w)):
        if name in skip or (only and name not in only):
            continue
        want = [int_reference(name, x, y, o, c, w) for x, y, (o, c) in zip(a, b, offcnt)]
        bad = [i for i in range(N) if int(got[i, j]) != want[i]]
        assert not bad, (f"int{w} {name}: a={a[bad[0]]:#x} b={b[bad[0]]:#x} off,cnt={offcnt[bad[0]]}"
                         f" -> {int(got[bad[0], j]):#x}, want {want[bad[0]]:#x}")


def int_edges(w):
    m = (1 << w) - 1
    return sorted({0, 1, 2, 3, 7, m, m - 1, 1 << (w - 1), (1 << (w - 1)) - 1, (1 << (w - 1)) + 1,
                   0x5A & m, (m // 3), 1 << (w // 2)})


def pad(xs, fill):
    return list(xs) + [fill] * (N - len(xs))


WIDTHS = [8, 16, 32, 64]


@pytest.mark.parametrize("w", WIDTHS)
def test_int_edge_values(device, w, only=None, skip=None):
    """Every edge value against every edge value (x/0, x%0, INT_MIN/-1, INT_MIN%-1, -1, ...),
    with bit fields at the ends of the word."""
    skip = (FIND if w == 64 else ()) if skip is None else skip     # 64-bit Find*: see below
    k = kernel(device, "int", w)
    e = int_edges(w)
    pairs = [(x, y) for x in e for y in e]
    fields = [(0, 0), (0, w), (w, 0), (w - 1, 1), (1, w - 1), (w // 2, w // 2), (3, 5 % (w - 2))]
    for start in range(0, len(pairs), N):
        chunk = pairs[start:start + N]
        oc = [fields[i % len(fields)] for i in range(start, start + len(chunk))]
        check_int(k, w, pad([p[0] for p in chunk], 0), pad([p[1] for p in chunk], 1),
                  pad(oc, (0, 0)), only, skip)


def int_values(w):
    m = (1 << w) - 1
    edge = st.sampled_from(int_edges(w))
    return st.lists(st.one_of(st.integers(0, m), edge), min_size=N, max_size=N)


def fields(w):
    return st.lists(st.tuples(st.integers(0, w), st.integers(0, w)).map(
        lambda oc: (oc[0], oc[1] % (w - oc[0] + 1))), min_size=N, max_size=N)


@pytest.mark.parametrize("w", WIDTHS)
def test_int_ops_property(device, w):
    k = kernel(device, "int", w)

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(a=int_values(w), b=int_values(w), oc=fields(w))
    def inner(a, b, oc):
        check_int(k, w, a, b, oc, skip=FIND if w == 64 else ())
    inner()


def test_find_bits_64(device):
    test_int_edge_values(device, 64, only=FIND, skip=())


# -- float references --------------------------------------------------------------------------------

FDT = {16: np.float16, 32: np.float32, 64: np.float64}
F_NAMES = [o[0] for o in FLOAT_OPS if o[4] == "f"]
B_NAMES = [o[0] for o in FLOAT_OPS if o[4] == "b"]


def float_reference(x, y, dt):
    """Expected float results (NaN where a NaN is required, None where undefined) and bools."""
    x, y = dt(x), dt(y)
    nan = np.isnan(x) or np.isnan(y)
    finite = np.isfinite(x) and np.isfinite(y) and y != 0
    with np.errstate(all="ignore"):
        frem = np.fmod(x, y)
        fmod = frem
        if frem != 0 and np.signbit(frem) != np.signbit(y):
            fmod = dt(frem + y)
    f = {}
    f["frem"] = frem if finite else (dt(np.nan) if nan else None)
    f["fmod"] = fmod if finite else (dt(np.nan) if nan else None)
    if np.isnan(x) and np.isnan(y):
        f["nmin"] = f["nmax"] = dt(np.nan)
    elif np.isnan(x) or np.isnan(y):
        f["nmin"] = f["nmax"] = y if np.isnan(x) else x
    else:
        f["nmin"], f["nmax"] = min(x, y), max(x, y)
    f["fmin"] = None if nan else min(x, y)
    f["fmax"] = None if nan else max(x, y)
    b = {"isnan": np.isnan(x), "isinf": np.isinf(x),
         "ord_eq": not nan and x == y, "unord_eq": nan or x == y,
         "ord_ne": not nan and x != y, "unord_ne": nan or x != y,
         "ord_lt": not nan and x < y, "unord_lt": nan or x < y,
         "ord_ge": not nan and x >= y, "unord_ge": nan or x >= y}
    return f, b


def check_float(k, w, xs, ys):
    dt = FDT[w]
    X, Y = np.array(xs, dt), np.array(ys, dt)
    R = np.zeros(N * len(F_NAMES), dt)
    B = np.full(N * len(B_NAMES), 7, np.uint32)
    k.dispatch(1, {0: X, 1: Y, 2: R, 3: B})
    R, B = R.reshape(N, -1), B.reshape(N, -1)
    for i in range(N):
        f, b = float_reference(X[i], Y[i], dt)
        for j, name in enumerate(F_NAMES):
            want, got = f[name], R[i, j]
            if want is None:
                continue
            where = f"float{w} {name}({X[i]!r}, {Y[i]!r}) = {got!r}, want {want!r}"
            if np.isnan(want):
                assert np.isnan(got), where
            elif want == 0 and name in ("fmod", "nmin", "nmax", "fmin", "fmax"):
                assert got == 0, where                   # the sign of zero is not specified
            else:
                assert got.tobytes() == dt(want).tobytes(), where
        for j, name in enumerate(B_NAMES):
            assert B[i, j] == int(bool(b[name])), f"float{w} {name}({X[i]!r}, {Y[i]!r}) = {B[i, j]}"


def float_edges(dt):
    fi = np.finfo(dt)
    return [dt(v) for v in (0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -7.25, np.inf, -np.inf, np.nan, -np.nan,
                            fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal, 1 + fi.eps,
                            -fi.smallest_subnormal)]


@pytest.mark.parametrize("w", [16, 32, 64])
def test_float_edge_values(device, w):
    k = kernel(device, "float", w)
    e = float_edges(FDT[w])
    pairs = [(x, y) for x in e for y in e]
    for start in range(0, len(pairs), N):
        chunk = pairs[start:start + N]
        check_float(k, w, pad([p[0] for p in chunk], 1.0), pad([p[1] for p in chunk], 1.0))


@pytest.mark.parametrize("w", [16, 32, 64])
def test_float_ops_property(device, w):
    k = kernel(device, "float", w)
    dt = FDT[w]
    udt = {16: np.uint16, 32: np.uint32, 64: np.uint64}[w]
    vals = st.one_of(st.integers(0, (1 << w) - 1).map(lambda b: udt(b).view(dt)),   # any bits
                     st.sampled_from(float_edges(dt)),
                     st.integers(-50, 50).map(dt),
                     st.floats(-1e4, 1e4, width=32).map(dt))

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(xs=st.lists(vals, min_size=N, max_size=N), ys=st.lists(vals, min_size=N, max_size=N))
    def inner(xs, ys):
        check_float(k, w, xs, ys)
    inner()
