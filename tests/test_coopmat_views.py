"""SPV_KHR_cooperative_matrix beyond MulAdd: loads and stores (layouts, odd strides, Stride 0,
pointee types other than the component type, StorageBuffer / PhysicalStorageBuffer / Workgroup
memory, several subgroups and workgroups), per-lane views through each profile's lane layout,
matrices as values (functions, arrays, structs, phis), elementwise arithmetic, conversions (with
relayouts between types of different layouts) and the errors of misuse.

References are numpy written from the seed's text; layout-dependent results are compared with
the profile's layout table (jitcoop.devices.layouts, itself checked against the hardware in
test_layouts.py). Shaders: tests/shaders/coopmat/*.comp (build.sh)."""
from pathlib import Path
import struct
from types import SimpleNamespace

import numpy as np
import pytest

import jitcoop
from jitcoop.devices import layouts as L
from jitcoop.devices import profile as make_profile
from test_coopmat_khr import (COOP, E4M3, E5M2, assert_bits_equal, device, kernel, muladd_asm,
                              round_fp8, f16_inputs)
from test_coopmat_qcom import stored_f16

PROFILES3 = ["generic", "nvidia", "shuffled"]


def layout_table(profile, elem_key, width, rows, cols, use, inv=32, scope=3):
    """The lane layout the profile gives a matrix type: table[lane, e] = row * cols + col."""
    t = SimpleNamespace(rows=rows, cols=cols, use=use, scope=scope,
                        elem=SimpleNamespace(width=width),
                        key=lambda: (elem_key, scope, rows, cols, use))
    return make_profile(profile).layout(t, inv).table


F32 = ("float", 32, True, "")     # the key jitcoop gives a float32 component type (Scalar.key())


# == loads and stores ==================================================================================
def test_load_store_layouts_strides_and_stride0():
    k = kernel("ldst", "generic", {10: 64})
    rng = np.random.default_rng(1)
    off, tin, srow, scol, sout, tout = 5, 300, 17, 33, 17, 270
    ntiles = 3 * 2                                   # 3 workgroups of 2 subgroups
    x = rng.standard_normal(ntiles * tin + off).astype(np.float16)
    y, z, w = (np.full(ntiles * tout, -999, np.float16) for _ in range(3))
    k.dispatch(3, {0: x, 1: y, 2: z, 3: w},
               push=np.array([off, tin, srow, scol, sout, tout], np.uint32))
    wy, wz, ww = (np.full(ntiles * tout, -999, np.float16) for _ in range(3))
    for t in range(ntiles):
        src, dst = t * tin + off, t * tout
        for r in range(16):
            for c in range(8):
                wy[dst + c * sout + r] = x[src + r * srow + c]    # row major in, column major out
                wz[dst + r * sout + c] = x[src + c * scol + r]    # column major in, row major out
                ww[dst + r * sout + c] = x[src + c]               # Stride 0: every row row 0
    np.testing.assert_array_equal(y, wy)
    np.testing.assert_array_equal(z, wz)
    np.testing.assert_array_equal(w, ww)


# Row-major loads into the striped layout copy whole runs of a row at once (16 elements per
# vector step, float16 through F16C): every bit pattern arrives unchanged (float stores then
# write NaNs as their format's quiet NaN, see stored_16), with odd strides, rows that pack into fragment rows (8x16), rows that span several
# (16x64 int8), runs with no vector step (8x8), and a width that neither packs nor spans (16x48).
LDRUN = [("f16_16x32", np.uint16, 16, 32), ("f16_16x48", np.uint16, 16, 48),
         ("f16_8x16", np.uint16, 8, 16), ("bf16_16x32", np.uint16, 16, 32),
         ("f32_16x16", np.uint32, 16, 16), ("s8_16x64", np.uint8, 16, 64),
         ("u16_16x16", np.uint16, 16, 16), ("s32_8x8", np.uint32, 8, 8),
         # the 8-bit floats load in generated code (codes converted exactly), store through the
         # library: every code comes back but E5M2's NaNs, stored as the quiet 0x7E with their sign
         ("e4m3_16x32", np.uint8, 16, 32), ("e5m2_16x64", np.uint8, 16, 64)]


def stored_16(h, bf16):
    """16-bit float bits after a store of the value: float16 NaNs become 0x7E00 (sign kept),
    bfloat16 NaNs get their quiet bit (0x40) set; everything else is exact."""
    if not bf16:
        return stored_f16(h)
    h = np.array(h, np.uint16)
    nan = ((h & 0x7F80) == 0x7F80) & ((h & 0x7F) != 0)
    h[nan] |= 0x40
    return h


@pytest.mark.parametrize("name,dt,rows,cols,profile", [x + ("generic",) for x in LDRUN] + [
    # the nvidia profile's layout: lines into a dense tile, then a gather (codegen/matrix_loads.py)
    ("f16_16x32", np.uint16, 16, 32, "nvidia"), ("s8_16x64", np.uint8, 16, 64, "nvidia")],
    ids=[x[0] for x in LDRUN] + ["f16_16x32-nvidia", "s8_16x64-nvidia"])
def test_row_major_loads_keep_every_bit(name, dt, rows, cols, profile):
    k = kernel(f"ldrun_{name}", profile)
    n = rows * cols
    if dt == np.uint16:
        pool = np.random.default_rng(3).permutation(65536).astype(np.uint16)   # every pattern
    elif name.startswith(("e4m3", "e5m2")):
        pool = np.random.default_rng(3).permutation(np.tile(np.arange(256), 16)).astype(np.uint8)
    else:
        pool = np.random.default_rng(3).integers(0, np.iinfo(dt).max, 70000, dtype=np.uint64).astype(dt)
    if dt == np.uint32:     # float32 signalling NaNs and both zeros among them
        pool[:4] = [0x7F800001, 0xFFBFFFFF, 0x80000000, 0x7FC00000]
    tiles = -(-len(pool) // n)
    tiles += tiles % 2                                  # 2 subgroups per workgroup
    off, srow, sout = 5, cols + 3, cols + 1
    tin, tout = rows * srow + 7, rows * sout
    x = np.zeros(tiles * tin + off, dt)
    want = np.full(tiles * tout, 0xA5, dt)
    vals = np.resize(pool, tiles * n).reshape(tiles, rows, cols)
    for t in range(tiles):
        for r in range(rows):
            x[t * tin + off + r * srow:][:cols] = vals[t, r]
            want[t * tout + r * sout:][:cols] = vals[t, r]
    y = np.full(tiles * tout, 0xA5, dt)
    k.dispatch(tiles // 2, {0: x, 1: y}, push=np.array([off, tin, srow, tout, sout], np.uint32))
    if name.startswith(("f16", "bf16")):
        want = stored_16(want, name.startswith("bf16"))
    if name.startswith("e5m2"):
        nan = ((want & 0x7C) == 0x7C) & ((want & 0x03) != 0)
        want[nan] = (want[nan] & 0x80) | 0x7E
    bad = np.flatnonzero(y != want)
    assert bad.size == 0, f"{bad.size} differ; first at {bad[0]}: {y[bad[0]]:#x}, want {want[bad[0]]:#x}"


# Column-major stores from the striped layout move B x B blocks through a register transpose in
# generated code (codegen/matrix_loads.transposed_store_helper): 16 x 32 tiles of four formats,
# every 16-bit pattern (random bits for the others), gaps between the columns left untouched.
STORE_CM = [("f32", np.uint32), ("f16", np.uint16), ("u8", np.uint8), ("s32", np.uint32)]


@pytest.mark.parametrize("name,dt", STORE_CM, ids=[x[0] for x in STORE_CM])
def test_column_major_stores_keep_every_bit(name, dt):
    k = kernel(f"store_cm_{name}", "generic", {10: 64})
    assert "@jc.cmstore.c16x32." in k.source
    rows, cols = 16, 32
    n = rows * cols
    if dt == np.uint16:
        pool = np.random.default_rng(4).permutation(65536).astype(np.uint16)
    else:
        pool = np.random.default_rng(4).integers(0, np.iinfo(dt).max, 70000, dtype=np.uint64).astype(dt)
    if dt == np.uint32:
        pool[:4] = [0x7F800001, 0xFFBFFFFF, 0x80000000, 0x7FC00000]
    tiles = -(-len(pool) // n)
    tiles += tiles % 2                                  # 2 subgroups per workgroup
    sout = rows + 3
    tout = cols * sout + 5
    vals = np.resize(pool, tiles * n).reshape(tiles, rows, cols)
    want = np.full(tiles * tout, 0xA5, dt)
    for t in range(tiles):
        for c in range(cols):
            want[t * tout + c * sout:][:rows] = vals[t, :, c]
    if name == "f16":
        want = stored_16(want, False)
    y = np.full(tiles * tout, 0xA5, dt)
    k.dispatch(tiles // 2, {0: vals.reshape(-1), 1: y}, push=np.array([sout, tout], np.uint32))
    bad = np.flatnonzero(y != want)
    assert bad.size == 0, f"{bad.size} differ; first at {bad[0]}: {y[bad[0]]:#x}, want {want[bad[0]]:#x}"
    # the last tile's last column one element past y: an error naming the store, y as it was
    y = np.full((tiles - 1) * tout + (cols - 1) * sout + rows - 1, 0xA5, dt)
    with pytest.raises(jitcoop.ExecutionError, match="OpCooperativeMatrixStoreKHR.*reaches outside"):
        k.dispatch(tiles // 2, {0: vals.reshape(-1), 1: y}, push=np.array([sout, tout], np.uint32))
    assert (y == 0xA5).all()


@pytest.mark.slow
def test_load_store_on_nvidia_layout():
    k = kernel("ldst", "nvidia", {10: 32})
    rng = np.random.default_rng(2)
    x = rng.standard_normal(400).astype(np.float16)
    y, z, w = (np.zeros(300, np.float16) for _ in range(3))
    k.dispatch(1, {0: x, 1: y, 2: z, 3: w}, push=np.array([3, 400, 9, 19, 16, 300], np.uint32))
    m = np.array([[x[3 + r * 9 + c] for c in range(8)] for r in range(16)])
    np.testing.assert_array_equal(y[:16 * 8].reshape(8, 16).T, m)


def test_pointee_uvec4_shared_and_physical_storage_buffer():
    dev = device("generic")
    k = kernel("ldst_mem", "generic")
    rng = np.random.default_rng(3)
    s_in, nwg = 3, 2
    ntiles = 2 * nwg
    src_q = rng.standard_normal((ntiles, 16, 8 * s_in)).astype(np.float16)   # 24 halves per row
    src_p = rng.standard_normal((ntiles, 16, 8 * s_in)).astype(np.float16)
    q = src_q.view(np.uint32).copy()
    pv = dev.buffer(src_p.view(np.uint32).copy())
    dst = dev.buffer(np.zeros(ntiles * 256, np.float16))
    o = np.zeros(ntiles * 256, np.float16)
    k.dispatch(nwg, {0: q, 1: o}, push=struct.pack("<QQI4x", pv.address, dst.address, s_in))
    for t in range(ntiles):
        np.testing.assert_array_equal(dst.array[t * 256:(t + 1) * 256].reshape(16, 16),
                                      src_q[t, :, :16].T)
        np.testing.assert_array_equal(o[t * 256:(t + 1) * 256].reshape(16, 16), src_p[t, :, :16])


# == per-lane views =====================================================================================
PERLANE = {}


def run_perlane(profile, j=3):
    if (profile, j) not in PERLANE:
        k = kernel("perlane", profile)
        x = np.random.default_rng(4).standard_normal(256).astype(np.float32)
        outs = [np.zeros(32, np.uint32)] + [np.zeros(256, np.float32) for _ in range(4)]
        k.dispatch(1, {0: x, **{i + 1: o for i, o in enumerate(outs)}}, push=np.array([j], np.uint32))
        PERLANE[profile, j] = (x, *outs)
    return PERLANE[profile, j]


@pytest.mark.parametrize("profile,shader", [("generic", "flow_acc"), ("nvidia", "flow_acc"),
                                            ("generic", "flow_acc_vars")])
def test_loop_carried_accumulator_old_value_used_after_muladd(profile, shader):
    """flow_acc: `prev = acc; acc = MulAdd(.., acc); store(prev)` in a loop must store the old
    accumulator (the phi, or in flow_acc_vars the variable, cannot share the MulAdd result's
    storage), while a second accumulator nobody reads after its MulAdd can. Small integers keep
    every sum exact."""
    k = kernel(shader, profile)
    n = 5
    rng = np.random.default_rng(8)
    a = rng.integers(-3, 4, (n, 16, 16)).astype(np.float16)
    b = rng.integers(-3, 4, (n, 16, 16)).astype(np.float16)
    o = np.full((n + 2, 16, 16), -1, np.float32)
    k.dispatch(1, {0: a, 1: b, 2: o}, push=np.array([n], np.uint32))
    acc = np.zeros((16, 16))
    for i in range(n):
        np.testing.assert_array_equal(o[i], acc, err_msg=f"step {i}")
        acc = acc + a[i].astype(np.float64) @ b[i].astype(np.float64)
    np.testing.assert_array_equal(o[n], acc)
    np.testing.assert_array_equal(o[n + 1], acc + 1)


@pytest.mark.parametrize("profile", PROFILES3)
def test_perlane_layout_independent_results(profile):
    x, ln, s, ids, rt, dyn = run_perlane(profile)
    assert (ln == 8).all()                            # 16 x 16 over 32 lanes
    assert_bits_equal(s, (2 * x.astype(np.float32) + np.float32(1)).astype(np.float32))
    np.testing.assert_array_equal(rt, x)              # extract/insert round trip


@pytest.mark.parametrize("profile", PROFILES3)
def test_perlane_lane_ids_match_the_profile_table(profile):
    x, ln, s, ids, rt, dyn = run_perlane(profile)
    tab = layout_table(profile, F32, 32, 16, 16, L.USE_ACC)
    want = np.zeros(256, np.float32)
    want_dyn = x.copy()
    for lane in range(32):
        for e in range(8):
            want[tab[lane, e]] = 1000 * lane + e
        want_dyn[tab[lane, 3]] = -1 - lane
    np.testing.assert_array_equal(ids, want)
    np.testing.assert_array_equal(dyn, want_dyn)


def test_perlane_layout_dependent_output_differs_between_profiles():
    outs = {p: run_perlane(p)[3] for p in PROFILES3}
    assert not np.array_equal(outs["generic"], outs["nvidia"])
    assert not np.array_equal(outs["generic"], outs["shuffled"])
    # generic is striped: element e of lane l is linear index 32 e + l
    np.testing.assert_array_equal(outs["generic"].reshape(8, 32),
                                  1000 * np.arange(32)[None, :] + np.arange(8)[:, None])
    # nvidia: the H100 measurement (tests/oracle/lanemaps), lane 0 holds (0,0) (0,1) (0,8) (0,9) (8,0) (8,1) (8,8) (8,9)
    ids = outs["nvidia"].reshape(16, 16)
    assert [ids[r, c] for r, c in ((0, 0), (0, 1), (0, 8), (0, 9), (8, 0), (8, 1), (8, 8), (8, 9))] \
        == list(range(8))


# == matrices as values ==================================================================================
@pytest.mark.parametrize("profile", ["generic", pytest.param("shuffled", marks=pytest.mark.slow),
                                     pytest.param("nvidia", marks=pytest.mark.slow)])
@pytest.mark.parametrize("sel,n,kk", [(0, 0, 0), (0, 2, 0), (1, 1, 1), (1, 0, 0)])
def test_flow_functions_arrays_phis_select(profile, sel, n, kk):
    k = kernel("flow", profile)
    rng = np.random.default_rng(5)
    x = rng.integers(-20, 20, 512).astype(np.float16)       # small integers: every sum exact
    o, o2 = np.zeros(256, np.float16), np.zeros(256, np.float16)
    k.dispatch(1, {0: x, 1: o, 2: o2}, push=np.array([sel, n, kk], np.uint32))
    X, Y = x[:256].astype(np.float64), x[256:].astype(np.float64)
    m = 2 * X if sel == 0 else Y + (X, Y)[kk]
    m = m - n * X
    np.testing.assert_array_equal(o, m.astype(np.float16))
    np.testing.assert_array_equal(o2, (X if sel == 0 else Y).astype(np.float16))


def test_struct_of_matrices():
    k = kernel("flow_struct", "generic")
    x = (np.arange(512) % 37).astype(np.float16)
    o = np.zeros(256, np.float16)
    k.dispatch(1, {0: x, 1: o})
    np.testing.assert_array_equal(o, x[:256])


def test_conditionally_assigned_matrix():
    k = kernel("flow_undef", "generic")
    x = (np.arange(256) % 37).astype(np.float16)
    o = np.zeros(256, np.float16)
    k.dispatch(1, {0: x, 1: o}, push=np.array([1], np.uint32))
    np.testing.assert_array_equal(o, x)


# == arithmetic ==========================================================================================
def arith_inputs(nn=256):
    rng = np.random.default_rng(6)
    f = rng.standard_normal(2 * nn).astype(np.float32)
    iv = rng.integers(-2 ** 31, 2 ** 31, 512).astype(np.int32)
    iv[256:][iv[256:] == 0] = 3
    iv[0], iv[256] = -2 ** 31, -1                    # INT_MIN / -1: wraps (not checked below)
    iv[1], iv[257] = -7, 2                           # SDiv rounds toward zero: -3
    uv = rng.integers(0, 2 ** 32, 512).astype(np.uint32)
    uv[256:][uv[256:] == 0] = 5
    return f, iv, uv


def run_arith(part, profile, n=16):
    k = kernel(f"arith_{part}", profile)
    nn = n * n
    f, iv, uv = arith_inputs(nn)
    o = np.zeros(7 * nn, np.float32)
    oi = np.zeros(7 * 256, np.int32)
    ou = np.zeros(3 * 256, np.uint32)
    s, si = np.float32(-1.25), np.int32(-3)
    k.dispatch(1, {0: f, 1: iv, 2: o, 3: oi, 4: ou, 5: uv}, push=struct.pack("<fi", s, si))
    return f, iv, uv, o, oi, ou, s, si


# 128 x 128: each of the 32 invocations holds 512 elements of each matrix, a lane body of ~9000
# loads and stores, past the emitter's loop-access budget (the lane loop's bound turns opaque).
@pytest.mark.parametrize("profile,n", [("generic", 16), pytest.param("shuffled", 16, marks=pytest.mark.slow),
                                       ("generic", 128)])
def test_elementwise_float_arithmetic(profile, n):
    f, iv, uv, o, oi, ou, s, si = run_arith("f" if n == 16 else f"f{n}", profile, n)
    nn = n * n
    a, b = f[:nn], f[nn:]
    with np.errstate(all="ignore"):
        wants = [a + b, a - b, a * b, a / b, -a, a * s, np.full(nn, 3.5, np.float32)]
    for i, want in enumerate(wants):
        assert_bits_equal(o[i * nn:(i + 1) * nn], want.astype(np.float32))


@pytest.mark.slow
def test_elementwise_int_arithmetic():
    f, iv, uv, o, oi, ou, s, si = run_arith("i", "generic")
    c, d = iv[:256].astype(np.int64), iv[256:].astype(np.int64)
    wrap = lambda v: (np.asarray(v, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    q = np.array([int(abs(int(p)) // abs(int(r))) * (1 if (p < 0) == (r < 0) else -1)
                  for p, r in zip(c, d)])
    for i, want in enumerate([c + d, c - d, (c * d), q, -c, c * int(si), np.full(256, -7)]):
        got = oi[i * 256:(i + 1) * 256]
        if i == 3:
            np.testing.assert_array_equal(got[1:], wrap(want)[1:])
            assert got[1] == -3
        else:
            np.testing.assert_array_equal(got, wrap(want), err_msg=f"int result {i}")
    u, v = uv[:256].astype(np.uint64), uv[256:].astype(np.uint64)
    for i, want in enumerate([u // v, (u * v) & 0xFFFFFFFF, (u - v) & 0xFFFFFFFF]):
        np.testing.assert_array_equal(ou[i * 256:(i + 1) * 256], want.astype(np.uint32))


def test_int_matrix_times_scalar():
    k = kernel("arith_imts", "generic")
    iv = np.arange(-128, 128, dtype=np.int32) * 1000
    o = np.zeros(256, np.int32)
    k.dispatch(1, {0: iv, 1: o}, push=struct.pack("<i", -3))
    np.testing.assert_array_equal(o, iv * -3)


# == conversions =========================================================================================
def f16_ref(x):
    return np.asarray(x, np.float32).astype(np.float16)       # numpy rounds to nearest even


def bf16_ref_bits(x):
    """float32 -> bfloat16 bits, round to nearest even (NaN kept NaN), from the bit pattern."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)


CONV = {}


def run_convert(profile):
    if profile not in CONV:
        k = kernel("convert", profile)
        rng = np.random.default_rng(9)
        f = (rng.standard_normal(256) * 60).astype(np.float32)
        # hand-picked: ties, fp8 edges, overflow, subnormals
        special = [0.0, -0.0, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 65504.0, 65520.0, 1e-8,
                   448.0, 464.0, 470.0, 500.0, -480.0, 57344.0, 61440.0, 61439.0, 1e6,
                   2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11, 2.0 ** -16, 2.0 ** -17, 1.0625, 1.1875,
                   1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, 3.999, -2.5, 2.5, -0.5, 7.9, 1e-3]
        f[:len(special)] = special
        iv = rng.integers(-2 ** 31, 2 ** 31, 256).astype(np.int32)
        iv[:6] = [127, 128, -129, 65535, 65536, -1]
        b8 = rng.integers(-128, 128, 256).astype(np.int8)
        b8[:3] = [-128, -1, 127]
        outs = dict(oh=np.zeros(256, np.float16), obf=np.zeros(256, np.uint16),
                    o43=np.zeros(512, np.uint8), o52=np.zeros(512, np.uint8),
                    oi=np.zeros(512, np.int32), ou=np.zeros(512, np.uint32),
                    o8=np.zeros(256, np.int8), o16=np.zeros(256, np.uint16), of=np.zeros(256, np.float32))
        binds = {0: f, 1: iv, 2: b8}
        binds.update({i + 3: v for i, v in enumerate(outs.values())})
        k.dispatch(1, binds)
        CONV[profile] = (f, iv, b8, outs)
    return CONV[profile]


CONV_PROFILES = ["generic", pytest.param("shuffled", marks=pytest.mark.slow)]


@pytest.mark.parametrize("profile", CONV_PROFILES)
def test_convert_f32_to_f16_bf16(profile):
    f, iv, b8, o = run_convert(profile)
    assert_bits_equal(o["oh"], f16_ref(f))
    np.testing.assert_array_equal(o["obf"], bf16_ref_bits(f))


@pytest.mark.parametrize("profile", CONV_PROFILES)
@pytest.mark.parametrize("fmt,sat", [("e4m3", False), ("e4m3", True),
                                     ("e5m2", False), ("e5m2", True)])
def test_convert_f32_to_fp8(profile, fmt, sat):
    f, iv, b8, o = run_convert(profile)
    vals = E4M3 if fmt == "e4m3" else E5M2
    got = vals[o["o43" if fmt == "e4m3" else "o52"][256 * sat:256 * (sat + 1)]]
    want = np.array([round_fp8(float(x), fmt, sat) for x in f])
    assert_bits_equal(got, want)


@pytest.mark.parametrize("profile", CONV_PROFILES)
def test_convert_int_and_float_int(profile):
    f, iv, b8, o = run_convert(profile)
    np.testing.assert_array_equal(o["oi"][:256], np.trunc(f).astype(np.int32))
    sq = f.astype(np.float32) * f
    ok = sq < 2.0 ** 32                     # float -> uint32 out of range is undefined
    np.testing.assert_array_equal(o["ou"][:256][ok], np.trunc(sq[ok]).astype(np.uint32))
    np.testing.assert_array_equal(o["o8"], iv.astype(np.int8))             # wrap (low 8 bits)
    np.testing.assert_array_equal(o["o16"], iv.astype(np.uint16))
    assert_bits_equal(o["of"], iv.astype(np.float32))                       # nearest even
    np.testing.assert_array_equal(o["oi"][256:], b8.astype(np.int32))      # sign extension
    np.testing.assert_array_equal(o["ou"][256:], b8.view(np.uint8).astype(np.uint32))   # zero ext.


@pytest.mark.parametrize("profile", [pytest.param("nvidia", marks=pytest.mark.slow),
                                     pytest.param("shuffled", marks=pytest.mark.slow),
                                     pytest.param("generic", marks=pytest.mark.slow)])
def test_convert_between_8bit_and_16bit_a_layouts(profile):
    k = kernel("convert_a", profile)
    rng = np.random.default_rng(10)
    q = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    u = rng.integers(0, 256, (16, 32)).astype(np.uint8)
    oh, o8, ou = np.zeros((16, 32), np.float16), np.zeros((16, 32), np.int8), np.zeros((16, 32), np.float16)
    k.dispatch(1, {0: q, 1: oh, 2: o8, 3: u, 4: ou})
    np.testing.assert_array_equal(oh, q.astype(np.float16))
    np.testing.assert_array_equal(o8, np.trunc(q.astype(np.float64) * 0.5).astype(np.int8))
    np.testing.assert_array_equal(ou, u.astype(np.float16))


# == errors ===============================================================================================
def _bad(mode, stride=16):
    k = kernel("bad", "generic")
    x = np.arange(256, dtype=np.float32)
    y = np.full(256, -5, np.float32)
    h = np.ones(256, np.float16)
    keep = y.copy(), x.copy()
    err = None
    try:
        k.dispatch(1, {0: x, 1: y, 2: h}, push=np.array([mode, stride], np.uint32))
    except jitcoop.ExecutionError as e:
        err = e
    return err, x, y, keep


def test_bad_mode0_is_fine():
    err, x, y, _ = _bad(0)
    assert err is None
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("mode,ops,words", [
    (1, ("OpCooperativeMatrixLoadKHR", "OpCooperativeMatrixStoreKHR"), "only part of its subgroup"),
    (2, ("OpCooperativeMatrixLoadKHR",), "Stride operand"),
    (3, ("OpCooperativeMatrixLoadKHR",), "Pointer operand"),
    (4, ("OpCooperativeMatrixStoreKHR",), "only part of its subgroup"),
    (5, ("OpCooperativeMatrixMulAddKHR", "OpCooperativeMatrixStoreKHR"), "only part of its subgroup"),
    (6, ("OpCooperativeMatrixLoadKHR",), "Pointer operand"),
])
def test_misuse_is_an_execution_error(mode, ops, words):
    err, x, y, (y0, x0) = _bad(mode)
    assert err is not None, "no error"
    assert err.opname in ops, str(err)
    assert words in str(err), str(err)
    assert err.lane is not None and err.offset is not None and err.result_id is not None or \
        err.opname == "OpCooperativeMatrixStoreKHR", str(err)
    assert f"lane {err.lane}" in str(err)
    np.testing.assert_array_equal(y, y0)          # the user's arrays are unchanged
    np.testing.assert_array_equal(x, x0)


def test_divergent_load_names_a_missing_lane():
    err, *_ = _bad(1)
    assert err.opname == "OpCooperativeMatrixLoadKHR" and 16 <= err.lane < 32, str(err)


def test_back_to_back_loads_check_the_second_one():
    """Mode 6: the scheduler runs the two loads one after the other (every lane waits at the
    first); the second still checks its Pointer, and the error names it and lane 8 (the first
    whose Pointer differs from lane 0's)."""
    err, *_ = _bad(6)
    assert err.opname == "OpCooperativeMatrixLoadKHR" and err.lane == 8, str(err)
    second = _load_instructions()[-1]
    assert err.offset == second.offset and err.result_id == second.result, str(err)


def _load_instructions():
    """bad.spv's last two OpCooperativeMatrixLoadKHR instructions in program order (mode 6's)."""
    m = jitcoop.Device().load(COOP / "bad.spv").spirv
    loads = [i for f in m.functions.values() for b in f.blocks for i in b.instrs
             if i.opname == "OpCooperativeMatrixLoadKHR"]
    return sorted(loads, key=lambda i: i.offset)[-2:]


def test_divergent_muladd_names_lane_31():
    err, *_ = _bad(5)
    assert err.opname == "OpCooperativeMatrixMulAddKHR" and err.lane == 31, str(err)


def test_out_of_bounds_store_and_load():
    rng = np.random.default_rng(12)
    a, b, c = f16_inputs(rng)
    k = kernel("muladd_f16_f32", "generic", {10: 32}, numerics="exact")    # run_muladd's kernel
    d = np.full((15, 16), 3, np.float32)                 # one row short
    with pytest.raises(jitcoop.ExecutionError) as ei:
        k.dispatch(1, {0: a, 1: b, 2: c, 3: d}, push=np.array([16, 16, 16, 16], np.uint32))
    assert ei.value.opname == "OpCooperativeMatrixStoreKHR" and "outside" in str(ei.value)
    assert (d == 3).all()
    d = np.full((16, 16), 3, np.float32)
    with pytest.raises(jitcoop.ExecutionError) as ei:   # Stride 17 on a tight A: the load overruns
        k.dispatch(1, {0: a, 1: b, 2: c, 3: d}, push=np.array([17, 16, 16, 16], np.uint32))
    assert ei.value.opname == "OpCooperativeMatrixLoadKHR" and "outside" in str(ei.value)
    assert (d == 3).all()


def _spirv_error(src, profile="generic", spec=None, sg=None):
    with pytest.raises(jitcoop.SpirvError) as ei:
        device(profile, sg).load(src).kernel(spec=spec or {})
    return ei.value


def test_unsupported_f32_muladd_on_lavapipe():
    e = _spirv_error(COOP / "muladd_f32_f32.spv", "lavapipe", {10: 8, 0: 8, 1: 8, 2: 8})
    assert "lavapipe" in str(e) and "f32" in str(e)
    assert e.opname is not None and e.offset is not None


def test_lavapipe_16x16x16_is_allowed_by_its_flexible_table():
    """lavapipe's measured property file has a flexible-dimension table (granularity 8), so a
    16x16x16 f16 MulAdd is accepted there (its 16x16 lane maps were measured too)."""
    p = make_profile("lavapipe")
    assert p.muladd_problem(16, 16, 16, "f16", "f16", "f32", "f32", False, 3, 8) is None
    assert p.muladd_problem(12, 16, 16, "f16", "f16", "f32", "f32", False, 3, 8) is not None
    assert p.muladd_problem(16, 16, 16, "bf16", "bf16", "f32", "f32", False, 3, 8) is not None


def test_no_workgroup_scope_on_lavapipe():
    p = make_profile("lavapipe")
    t = SimpleNamespace(scope=2, rows=8, cols=8, use=0, elem=None)
    assert "workgroup" in p.coopmat_problem(t, 8)


def test_unsupported_s8_8x8_on_nvidia():
    e = _spirv_error(COOP / "muladd_s8_s32.spv", "nvidia", {10: 32, 0: 8, 1: 8, 2: 8})
    assert "nvidia" in str(e) and "8 x 8" in str(e).replace("8x8", "8 x 8")


def test_unsupported_fp8_on_nvidia():
    e = _spirv_error(COOP / "muladd_e4m3_f32.spv", "nvidia", {10: 32})
    assert "nvidia" in str(e)


def test_mismatched_mnk():
    src = muladd_asm("f16", "f16", "f32", "f32", shapes=((16, 16), (8, 16), (16, 16), (16, 16)))
    e = _spirv_error(src)
    assert e.opname == "OpCooperativeMatrixMulAddKHR" and "shapes" in str(e)
    assert e.result_id is not None and e.offset is not None


def test_wrong_use():
    src = muladd_asm("f16", "f16", "f32", "f32", uses=(1, 1, 2, 2))
    e = _spirv_error(src)
    assert e.opname == "OpCooperativeMatrixMulAddKHR" and "MatrixAKHR" in str(e)


def test_signed_components_on_float_matrix():
    src = muladd_asm("f16", "f16", "f32", "f32", flags="MatrixASignedComponentsKHR")
    e = _spirv_error(src)
    assert e.opname == "OpCooperativeMatrixMulAddKHR" and "MatrixASignedComponentsKHR" in str(e)


def test_saturating_on_float_matrix():
    src = muladd_asm("f16", "f16", "f32", "f32", flags="SaturatingAccumulationKHR")
    e = _spirv_error(src)
    assert e.opname == "OpCooperativeMatrixMulAddKHR"


def test_subgroup_matrix_needs_whole_subgroups():
    e = _spirv_error(COOP / "muladd_f16_f32.spv", "generic", {10: 48})
    assert "subgroup" in str(e)


# == workgroup scope =======================================================================================
@pytest.mark.parametrize("profile,inv,oracle", [
    pytest.param("nvidia", 128, "nv_f32_C_64x64_wg128", marks=pytest.mark.slow),
    pytest.param("nvidia", 256, "nv_f32_C_64x64_wg256", marks=pytest.mark.slow),
    pytest.param("generic", 128, None, marks=pytest.mark.slow)])
def test_workgroup_scope_lane_map_and_muladd(profile, inv, oracle):
    """Each invocation writes 1024 * invocation + e into its elements of a workgroup-scope
    64 x 64 float32 accumulator: the stored matrix is the lane map the H100 gave the oracle.
    Then a workgroup-scope 64x64x64 float16 MulAdd (A and B replicated across warps on nvidia)."""
    k = kernel("wg", profile, {10: inv})
    rng = np.random.default_rng(13)
    a, b, c = f16_inputs(rng, 64, 64, 64)
    o, d = np.full(4096, -1, np.float32), np.zeros(4096, np.float32)
    ln = np.zeros(3 * inv, np.uint32)
    k.dispatch(1, {0: o, 1: a, 2: b, 3: c, 4: d, 5: ln})
    if oracle:
        lm = np.load(Path(__file__).resolve().parent / "oracle" / "lanemaps" / f"{oracle}.npy")
    else:
        lm = L.striped(64, 64, inv).coords()
    want = np.full((64, 64), -1, np.float32)
    for i in range(lm.shape[0]):
        for e in range(lm.shape[1]):
            want[lm[i, e, 0], lm[i, e, 1]] = 1024 * i + e
    np.testing.assert_array_equal(o.reshape(64, 64), want)
    assert (ln.reshape(inv, 3)[:, 2] == lm.shape[1]).all()
    from test_coopmat_khr import exact_muladd, ROUND
    assert_bits_equal(d.reshape(64, 64), exact_muladd(a, b, c, ROUND["f32"]))


def test_row_major_load_without_stride():
    src = muladd_asm("f16", "f16", "f32", "f32", load_tail="")
    e = _spirv_error(src)
    assert e.opname == "OpCooperativeMatrixLoadKHR" and "Stride" in str(e)


def _bad2(mode):
    k = kernel("bad2", "shuffled")
    x = np.arange(256, dtype=np.float32) - 100
    o = np.full(512, 9, np.float16)
    w = np.full(256, 9, np.float32)
    keep = o.copy(), w.copy()
    err = None
    try:
        k.dispatch(2, {0: x, 1: o, 2: w}, push=np.array([mode], np.uint32))
    except jitcoop.ExecutionError as e:
        err = e
    return err, x, o, w, keep


@pytest.mark.slow
def test_bad2_mode0_relayout_and_workgroup_scope_fine():
    err, x, o, w, _ = _bad2(0)
    assert err is None
    np.testing.assert_array_equal(o, np.concatenate([x, x]).astype(np.float16))
    np.testing.assert_array_equal(w, x)


@pytest.mark.slow
def test_divergent_relayout_conversion_names_the_users_instruction():
    """The relayout jitcoop inserts for a conversion is its own business: an error must name
    the shader's OpFConvert (and its result id), not an internal instruction."""
    err, x, o, w, (o0, w0) = _bad2(1)
    assert err is not None
    assert "only part" in str(err)
    np.testing.assert_array_equal(o, o0)
    assert err.opname == "OpFConvert", str(err)
    assert "Jitcoop" not in str(err), str(err)


@pytest.mark.slow
def test_workgroup_scope_load_reached_by_one_subgroup():
    err, x, o, w, (o0, w0) = _bad2(2)
    assert err is not None and err.opname == "OpCooperativeMatrixLoadKHR", str(err)
    assert "only part of its workgroup" in str(err)
    assert 32 <= err.lane < 64 and err.workgroup is not None, str(err)
    np.testing.assert_array_equal(w, w0)
    np.testing.assert_array_equal(o, o0)


def test_out_of_bounds_in_one_workgroup_names_it():
    """ldst with x one element short: only the last tile (workgroup 2, its second subgroup) of
    the row-major load overruns."""
    k = kernel("ldst", "generic", {10: 64})
    off, tin, srow, scol, sout, tout = 0, 300, 17, 33, 17, 270
    x = np.zeros(5 * tin + 15 * srow + 8 - 1, np.float16)
    y, z, w = (np.full(6 * tout, 4, np.float16) for _ in range(3))
    with pytest.raises(jitcoop.ExecutionError) as ei:
        k.dispatch(3, {0: x, 1: y, 2: z, 3: w},
                   push=np.array([off, tin, srow, scol, sout, tout], np.uint32))
    e = ei.value
    assert e.opname == "OpCooperativeMatrixLoadKHR" and tuple(e.workgroup) == (2, 0, 0), str(e)
    assert 32 <= e.lane < 64, str(e)
    assert (y == 4).all() and (z == 4).all() and (w == 4).all()


def test_out_of_bounds_physical_storage_buffer_store():
    dev = device("generic")
    k = kernel("ldst_mem", "generic")
    q = np.zeros((2, 16, 24), np.float16).view(np.uint32).copy()
    pv = dev.buffer(np.zeros((2, 16, 24), np.float16).view(np.uint32).copy())
    dst = dev.buffer(np.full(2 * 256 - 1, 6, np.float16))     # one element short
    o = np.full(512, 6, np.float16)
    with pytest.raises(jitcoop.ExecutionError) as ei:
        k.dispatch(1, {0: q, 1: o}, push=struct.pack("<QQI4x", pv.address, dst.address, 3))
    assert ei.value.opname == "OpCooperativeMatrixStoreKHR", str(ei.value)
    assert (dst.array == 6).all() and (o == 6).all()


def test_workgroup_scope_refused_on_lavapipe_and_rdna3():
    for prof, sg in (("lavapipe", 8), ("amd-rdna3", 64)):
        e = _spirv_error(COOP / "wg.spv", prof, {10: 64, 0: 16, 1: 16, 2: 16}, sg)
        assert "workgroup" in str(e) and prof in str(e), str(e)
        assert e.opname == "OpTypeCooperativeMatrixKHR"


def test_nvidia_workgroup_scope_needs_its_flexible_table():
    """The H100 takes workgroup-scope matrices up to 256 invocations, M granularity 32 at 128."""
    e = _spirv_error(COOP / "wg.spv", "nvidia", {10: 512})
    assert "256" in str(e)
    e = _spirv_error(COOP / "wg.spv", "nvidia", {10: 128, 0: 16, 1: 16, 2: 16})
    assert "nvidia" in str(e)


def test_profile_subgroup_sizes():
    with pytest.raises(jitcoop.JitcoopError, match="32"):
        jitcoop.Device("nvidia", subgroup_size=16)
    with pytest.raises(jitcoop.JitcoopError, match="8"):
        jitcoop.Device("lavapipe", subgroup_size=32)
    assert jitcoop.Device("amd-rdna3").subgroup_size == 64
