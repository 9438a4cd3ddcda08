"""Subgroup operations with every invocation active, at subgroup sizes 8, 32 and 64, against a numpy
model of the GLSL built-ins: a subgroup is gl_SubgroupSize consecutive invocations of a workgroup;
with 96 invocations per workgroup the second subgroup at size 64 has only 32 invocations (and
operations on it see only those).

Shaders: tests/shaders/subgroup_scan.comp (reductions, inclusive/exclusive scans, clustered, 64-bit)
and subgroup_shuffle.comp (shuffles, broadcasts, quads, ballots, votes, built-ins, masks)."""
from functools import reduce

import numpy as np
import pytest

WG = 96
NWG = 2
NT = WG * NWG
M32 = 0xFFFFFFFF
# Subgroup sizes 8 and 64 compile their own kernels: in the slow set.
SIZES = [pytest.param(8, marks=pytest.mark.slow), 32, pytest.param(64, marks=pytest.mark.slow)]


def subgroups(sg):
    """Global invocation indices of each subgroup."""
    for w in range(NWG):
        for s in range(0, WG, sg):
            yield np.arange(w * WG + s, w * WG + min(s + sg, WG))


def scan(vals, op, ident, kind):
    """reduce / inclusive / exclusive over a list of Python numbers."""
    inc, acc = [], ident
    for v in vals:
        acc = op(acc, v)
        inc.append(acc)
    if kind == "reduce":
        return [acc] * len(vals)
    if kind == "inclusive":
        return inc
    return [ident] + inc[:-1]


def s32(v):
    v &= M32
    return v - (1 << 32) if v >> 31 else v


U_OPS = [("add", lambda a, b: (a + b) & M32, 0), ("mul", lambda a, b: (a * b) & M32, 1),
         ("min", min, M32), ("max", max, 0), ("and", lambda a, b: a & b, M32),
         ("or", lambda a, b: a | b, 0), ("xor", lambda a, b: a ^ b, 0)]
KINDS = ["reduce", "inclusive", "exclusive"]


# -- reductions and scans -----------------------------------------------------------------------------

def scan_inputs(rng):
    x = rng.integers(0, 2**32, NT, dtype=np.uint64).astype(np.uint32)
    x[::5] |= 1                                   # odd factors keep products from collapsing to 0
    x[::7] &= 0x0000FFFF                          # small values: min/max/signed mixes
    x[1::11] |= 0x80000000
    f = rng.choice(np.array([-2, -1, -0.5, 0.5, 1, 2], np.float32), NT)   # exact sums and products
    d = rng.integers(-1000, 1000, NT) / 8.0
    return x, f.astype(np.float32), d


def scan_reference(x, f, d, sg):
    rows = {}

    def put(r, lanes, vals):
        rows.setdefault(r, np.zeros(NT, object))[lanes] = vals
    for lanes in subgroups(sg):
        xs = [int(v) for v in x[lanes]]
        ys = [s32(v) for v in xs]
        zs = [float(v) for v in f[lanes]]
        r = 0
        for _, op, ident in U_OPS:
            for kind in KINDS:
                put(r, lanes, scan(xs, op, ident, kind))
                r += 1
        for op, ident in ((min, 2**31 - 1), (max, -2**31)):
            for kind in KINDS:
                put(r, lanes, [v & M32 for v in scan(ys, op, ident, kind)])
                r += 1
        fl = lambda vals: [np.float32(v) for v in vals]
        put(27, lanes, fl(scan(zs, lambda a, b: a + b, 0.0, "reduce")))
        put(28, lanes, fl(scan(zs, lambda a, b: a + b, 0.0, "inclusive")))
        put(29, lanes, fl(scan(zs, lambda a, b: a + b, 0.0, "exclusive")))
        put(30, lanes, fl(scan(zs, min, np.inf, "reduce")))
        put(31, lanes, fl(scan(zs, max, -np.inf, "reduce")))
        put(32, lanes, fl(scan(zs, lambda a, b: a * b, 1.0, "reduce")))
        put(33, lanes, fl(scan(zs, min, np.inf, "exclusive")))
        put(34, lanes, fl(scan(zs, max, -np.inf, "inclusive")))

        def clustered(vals, size, op):
            return [reduce(op, vals[c - c % size:c - c % size + size]) for c in range(len(vals))]
        ca_x = clustered(xs, 2, lambda a, b: (a + b) & M32)
        ca_y = clustered([v >> 16 for v in xs], 2, lambda a, b: (a + b) & M32)
        put(35, lanes, [(a ^ (b << 7)) & M32 for a, b in zip(ca_x, ca_y)])
        put(36, lanes, clustered(xs, 4, lambda a, b: (a * b) & M32))
        put(37, lanes, [v & M32 for v in clustered(ys, 8, min)])
        put(38, lanes, xs)
        put(39, lanes, fl(clustered(zs, 4, max)))
        put(40, lanes, fl(clustered([-v for v in zs], 4, max)))
        put(41, lanes, fl([1.0] * len(zs)))
        put(100, lanes, [sum(v << 20 for v in xs) % 2**64] * len(xs))
        put(101, lanes, [v % 2**64 for v in scan([y * -3000000000 for y in ys], max, -2**63,
                                                  "inclusive")])
        put(102, lanes, scan([float(v) for v in d[lanes]], lambda a, b: a + b, 0.0, "inclusive"))
    return rows


@pytest.mark.parametrize("sg", SIZES)
def test_reductions_and_scans(kc, rng, sg):
    k = kc("subgroup_scan", sg=sg)
    x, f, d = scan_inputs(rng)
    o = np.zeros(42 * NT, np.uint32)
    w = np.zeros(3 * NT, np.uint64)
    k.dispatch((NWG, 1, 1), {0: x, 1: f, 2: d, 3: o, 4: w})
    ref = scan_reference(x, f, d, sg)
    o = o.reshape(42, NT)
    names = [f"u{op} {kind}" for op, _, _ in U_OPS for kind in KINDS] + \
            [f"i{op} {kind}" for op in ("min", "max") for kind in KINDS]
    for r in range(27):
        np.testing.assert_array_equal(o[r], ref[r].astype(np.uint64), err_msg=f"row {r} {names[r]}")
    for r in range(27, 42):
        if r in (35, 36, 37, 38):
            np.testing.assert_array_equal(o[r], ref[r].astype(np.uint64), err_msg=f"row {r}")
        else:   # floats: values compared (the exclusive add of lane 0 may be +0 or -0)
            np.testing.assert_array_equal(o[r].view(np.float32), ref[r].astype(np.float32),
                                          err_msg=f"row {r}")
    w = w.reshape(3, NT)
    np.testing.assert_array_equal(w[0], ref[100].astype(np.uint64))
    np.testing.assert_array_equal(w[1], ref[101].astype(np.uint64))
    np.testing.assert_array_equal(w[2].view(np.float64), ref[102].astype(np.float64))


# -- shuffles, quads, ballots, votes ----------------------------------------------------------------------

def shuffle_inputs(rng, sg):
    x = rng.integers(0, 2**32, NT, dtype=np.uint64).astype(np.uint32)
    groups = list(subgroups(sg))
    for lanes in groups:
        x[lanes[len(lanes) // 2]] |= 1            # every ballot has a bit: FindLSB/MSB defined
    x[groups[1][3]] = 12345                       # subgroupAny(x == 12345) in one subgroup
    x[groups[-1]] |= 0xC0000000                   # allEqual(x >> 30) in the last subgroup
    x[groups[-1]] |= 0x20000001                   # ... and all(x > 0x20000000) there
    d = rng.standard_normal(NT)
    return x, d


def shuffle_reference(x, d, sg):
    o = np.zeros((42, NT), np.uint64)
    w = np.zeros((3, NT), np.uint64)
    f32 = lambda v: np.asarray(v, np.uint32).view(np.float32)
    bits = lambda v: np.asarray(v, np.float32).view(np.uint32)
    for lanes in subgroups(sg):
        n = len(lanes)
        v = x[lanes].astype(np.uint64)
        i = np.arange(n)
        local = lanes % WG
        o[0, lanes] = v[(v >> 8) % n]
        o[1, lanes] = v[n - 1 - i]
        o[2, lanes] = v[i ^ 1]
        o[3, lanes] = v[i ^ (n - 1)]
        o[4, lanes] = np.where(i >= 3, v[np.maximum(i - 3, 0)], 7)
        o[5, lanes] = np.where(i + 5 < n, v[np.minimum(i + 5, n - 1)], 7)
        o[6, lanes] = v[3]
        o[7, lanes] = v[0]
        o[8, lanes] = v[(i + 1) % n]
        o[9, lanes] = v[i ^ 2]
        o[10, lanes] = ((-v[i ^ 2].astype(np.int64)) + (i ^ 2)) % 2**32
        o[11, lanes] = v[i ^ 5] & 1
        quad = i & ~3
        o[12, lanes] = v[quad + 2]
        o[13, lanes] = quad + 2
        o[14, lanes] = v[i ^ 1]
        o[15, lanes] = v[i ^ 2]
        o[16, lanes] = bits(f32(v[i ^ 3] & 0x3FFFFFFF))
        o[17, lanes] = bits((i ^ 3).astype(np.float32))
        bal = [int(b) for b in v & 1]
        mask = sum(b << k for k, b in enumerate(bal))
        o[18, lanes] = mask & M32
        o[19, lanes] = mask >> 32
        o[20, lanes] = 0
        o[21, lanes] = sum(bal)
        o[22, lanes] = np.cumsum(bal)
        o[23, lanes] = np.cumsum(bal) - bal
        o[24, lanes] = bal.index(1)
        o[25, lanes] = n - 1 - bal[::-1].index(1)
        o[26, lanes] = [(mask >> ((k + 1) % sg)) & 1 for k in range(n)]
        o[27, lanes] = bal
        o[28, lanes] = i == 0
        o[29, lanes] = bool((v != 12345).all())
        o[30, lanes] = bool((v > 0x20000000).all())
        o[31, lanes] = bool((v == 12345).any())
        o[32, lanes] = bool((v >> 30 == v[0] >> 30).all())
        o[33, lanes] = 1
        o[34, lanes] = sg
        o[35, lanes] = local % sg
        o[36, lanes] = local // sg
        o[37, lanes] = -(-WG // sg)
        sid = local % sg
        eq_x = np.where(sid < 32, 1 << (sid % 32), 0)
        lt_y = np.where(sid >= 32, (1 << (sid % 32)) - 1, 0)
        o[38, lanes] = eq_x ^ lt_y
        o[39, lanes] = np.where(sid < 32, (1 << (sid % 32)) - 1, M32)
        ge = [sum(1 << b for b in range(s, sg)) for s in sid]
        o[40, lanes] = [(m >> 32) & M32 for m in ge]
        le_x = [sum(1 << b for b in range(0, min(s + 1, 32))) for s in sid]
        gt_x = [sum(1 << b for b in range(s + 1, min(sg, 32))) for s in sid]
        o[41, lanes] = [(a + b) & M32 for a, b in zip(le_x, gt_x)]
        dv = d[lanes].view(np.uint64)
        w[0, lanes] = dv[(i * 7 + 1) % n]
        w[1, lanes] = v[i ^ 4] | (lanes[i ^ 4].astype(np.uint64) << np.uint64(40))
        w[2, lanes] = (int(v[0]) * 0x100000001) % 2**64
    return o, w


@pytest.mark.parametrize("sg", SIZES)
def test_shuffles_quads_ballots_votes(kc, rng, sg):
    k = kc("subgroup_shuffle", sg=sg)
    x, d = shuffle_inputs(rng, sg)
    o = np.zeros(42 * NT, np.uint32)
    w = np.zeros(3 * NT, np.uint64)
    k.dispatch((NWG, 1, 1), {0: x, 1: d, 2: o, 3: w})
    want_o, want_w = shuffle_reference(x, d, sg)
    o = o.reshape(42, NT)
    for r in range(42):
        np.testing.assert_array_equal(o[r], want_o[r], err_msg=f"row {r}")
    w = w.reshape(3, NT)
    for r in range(3):
        np.testing.assert_array_equal(w[r], want_w[r], err_msg=f"64-bit row {r}")


# -- bools, float16, NaN operands -------------------------------------------------------------------------

def bool_half_inputs(rng):
    u = rng.integers(0, 8, NT).astype(np.uint32)
    u[:40] |= 1                                   # subgroups whose And is true at sizes 8 and 32
    u[48:56] &= ~np.uint32(4)                     # and where AllEqual of bit 2 holds
    # float16 values of every magnitude: sums and products that round at many steps
    h = (rng.uniform(-2, 2, NT) * 2.0 ** rng.integers(-12, 6, NT)).astype(np.float16)
    z = rng.uniform(-3, 3, NT).astype(np.float32)
    z[rng.random(NT) < 0.3] = np.nan
    z[::8] = rng.uniform(-3, 3, NT // 8)          # a number at each subgroup's first lane
    z[:32] = np.clip(z[:32], -1.9, 1.9)           # |z| < 2 on all of them: AllEqual's first subgroups
    z[:32][np.isnan(z[:32])] = 0.5
    return u, h, z


def bool_half_reference(u, h, z, sg):
    o = np.zeros((12, NT), np.uint32)
    oh = np.zeros((7, NT), np.float16)
    half = lambda op: (lambda a, b: np.float16(op(np.float16(a), np.float16(b))))   # noqa: E731
    fmin = lambda a, b: b if np.isnan(a) else a if np.isnan(b) else min(a, b)        # noqa: E731
    fmax = lambda a, b: b if np.isnan(a) else a if np.isnan(b) else max(a, b)        # noqa: E731
    for lanes in subgroups(sg):
        b = [bool(v & 1) for v in u[lanes]]
        c = [bool(v & 2) for v in u[lanes]]
        n = len(lanes)

        def clustered(vals, size, op):
            return [reduce(op, vals[i - i % size:i - i % size + size]) for i in range(n)]
        o[0, lanes] = scan(b, lambda p, q: p and q, True, "reduce")
        o[1, lanes] = scan(c, lambda p, q: p or q, False, "reduce")
        o[2, lanes] = scan(b, lambda p, q: p != q, False, "reduce")
        o[3, lanes] = scan(c, lambda p, q: p and q, True, "inclusive")
        o[4, lanes] = scan(b, lambda p, q: p or q, False, "exclusive")
        o[5, lanes] = scan(c, lambda p, q: p != q, False, "inclusive")
        o[6, lanes] = clustered(b, 4, lambda p, q: p and q)
        o[7, lanes] = clustered(c, 8, lambda p, q: p != q)
        zs = [np.float32(v) for v in z[lanes]]
        o[8, lanes] = np.array(scan(zs, fmin, np.float32(np.inf), "reduce"), np.float32).view(np.uint32)
        o[9, lanes] = np.array(scan(zs, fmax, np.float32(-np.inf), "inclusive"), np.float32).view(np.uint32)
        e = np.where(np.abs(z[lanes]) < 2, 1.5, z[lanes])
        o[10, lanes] = bool((e == e[0]).all())
        o[11, lanes] = bool((u[lanes] & 4 == u[lanes][0] & 4).all())
        hs = list(h[lanes])
        oh[0, lanes] = scan(hs, half(np.add), np.float16(0), "reduce")
        oh[1, lanes] = scan(hs, half(np.add), np.float16(0), "inclusive")
        oh[2, lanes] = scan(hs, half(np.add), np.float16(0), "exclusive")
        oh[3, lanes] = scan(hs, half(np.multiply), np.float16(1), "reduce")
        oh[4, lanes] = clustered(hs, 4, half(np.add))
        oh[5, lanes] = scan(hs, min, np.float16(np.inf), "reduce")
        oh[6, lanes] = scan(hs, max, np.float16(-np.inf), "exclusive")
    return o, oh


@pytest.mark.parametrize("sg", SIZES)
def test_bools_float16_and_nan_operands(kc, rng, sg):
    """Logical reductions and scans; float16 sums and products rounded to float16 after each
    step, lane by lane (numpy's float16 arithmetic does the same rounding); NaN operands of
    FMin/FMax lose to any number (the SPIR-V rule); AllEqual of floats and of a vector."""
    k = kc("subgroup_bool_half", sg=sg)
    u, h, z = bool_half_inputs(rng)
    o = np.zeros(12 * NT, np.uint32)
    oh = np.zeros(7 * NT, np.float16)
    k.dispatch((NWG, 1, 1), {0: u, 1: h, 2: z, 3: o, 4: oh})
    want_o, want_h = bool_half_reference(u, h, z, sg)
    o = o.reshape(12, NT)
    for r in range(12):
        np.testing.assert_array_equal(o[r], want_o[r], err_msg=f"row {r}")
    oh = oh.reshape(7, NT)
    for r in range(7):
        np.testing.assert_array_equal(oh[r].view(np.uint16), want_h[r].view(np.uint16), err_msg=f"float16 row {r}")


CLUSTERED_ADD = """
    OpCapability Shader
    OpCapability GroupNonUniformClustered
    OpCapability GroupNonUniformArithmetic
    OpMemoryModel Logical GLSL450
    OpEntryPoint GLCompute %main "main" %gid
    OpExecutionMode %main LocalSize 32 1 1
    OpDecorate %gid BuiltIn GlobalInvocationId
    OpDecorate %arr ArrayStride 4
    OpMemberDecorate %S 0 Offset 0
    OpDecorate %S Block
    OpDecorate %buf DescriptorSet 0
    OpDecorate %buf Binding 0
    %void = OpTypeVoid
    %fn = OpTypeFunction %void
    %uint = OpTypeInt 32 0
    %v3 = OpTypeVector %uint 3
    %pv3 = OpTypePointer Input %v3
    %gid = OpVariable %pv3 Input
    %arr = OpTypeRuntimeArray %uint
    %S = OpTypeStruct %arr
    %pS = OpTypePointer StorageBuffer %S
    %buf = OpVariable %pS StorageBuffer
    %pu = OpTypePointer StorageBuffer %uint
    %c0 = OpConstant %uint 0
    %sub = OpConstant %uint 3
    %c3 = OpConstant %uint 3
    %main = OpFunction %void None %fn
    %l = OpLabel
    %g = OpLoad %v3 %gid
    %x = OpCompositeExtract %uint %g 0
    %p = OpAccessChain %pu %buf %c0 %x
    %v = OpLoad %uint %p
    %r = OpGroupNonUniformIAdd %uint %sub ClusteredReduce %v %c3
    OpStore %p %r
    OpReturn
    OpFunctionEnd
"""


def test_cluster_size_not_a_power_of_2_is_an_error_naming_the_instruction():
    """Clusters of 3 would straddle subgroups: SPIR-V requires a power of 2 (spirv-val rejects
    it); jitcoop names the instruction. With 4 the same shader sums each 4 invocations."""
    import jitcoop
    dev = jitcoop.Device()
    with pytest.raises(jitcoop.SpirvError, match=r"OpGroupNonUniformIAdd at byte \d+: ClusterSize 3 is not a power of 2"):
        dev.load(CLUSTERED_ADD).kernel()
    k = dev.load(CLUSTERED_ADD.replace("%c3 = OpConstant %uint 3", "%c3 = OpConstant %uint 4")).kernel()
    x = np.arange(32, dtype=np.uint32) ** 2
    want = x.reshape(8, 4).sum(axis=1, dtype=np.uint32).repeat(4)
    k.dispatch((1, 1, 1), {0: x})
    np.testing.assert_array_equal(x, want)
