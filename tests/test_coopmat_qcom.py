"""SPV_QCOM_cooperative_matrix_conversion against numpy references written from the SPIR-V
extension text (rev 1; ../shared/spec/qcom-conversion.md, docs/extensions/qcom.md).

- convert_<family>.spv: for one type family (A/B component type and accumulator type) every
  subgroup builds an A, a B and an accumulator from its invocations' arrays, of the component
  type and packed into uint32, stores them, and extracts the arrays again. References: line i of
  the matrix (row of A and accumulators, column of B) is invocation i's array, invocations past the
  extent are ignored, packed words hold their narrower elements from the low-order bits up.
- arrays.spv: OpBitCastArrayQCOM and OpExtractSubArrayQCOM per invocation, against numpy views.
- conv, mlp, dequant: the proposal's worked uses rebuilt as shaders (implicit-im2col convolution,
  a two-layer network whose layer-1 accumulator becomes layer 2's A, 4-bit weight dequantization
  feeding MulAdd), against numpy.
- Misuse: SPIR-V assembly built here for every type and length rule (SpirvError at kernel(),
  naming the instruction), and run-time errors (ExecutionError naming workgroup and lane).

Kernels are compiled once per session (KERNELS) and each convert dispatch is shared by the tests
that look at its parts (RUNS).
"""
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop.devices import layouts as L
from jitcoop.devices import profile as make_profile

QC = Path(__file__).resolve().parent / "shaders" / "coopmat_qcom"
_DEVICES, KERNELS, RUNS = {}, {}, {}


def device(profile="qualcomm", sg=None):
    if (profile, sg) not in _DEVICES:
        _DEVICES[profile, sg] = jitcoop.Device(profile, subgroup_size=sg)
    return _DEVICES[profile, sg]


def kernel(shader, profile="qualcomm", sg=None, spec=None):
    """The kernel of shaders/coopmat_qcom/<shader>.spv (or of SPIR-V assembly text), compiled once
    per session; a failure is remembered and raised again."""
    key = (shader, profile, sg, tuple(sorted((spec or {}).items())))
    if key not in KERNELS:
        src = shader if "\n" in shader else QC / f"{shader}.spv"
        try:
            KERNELS[key] = device(profile, sg).load(src).kernel(spec=spec or {})
        except Exception as e:      # noqa: BLE001
            KERNELS[key] = e
    k = KERNELS[key]
    if isinstance(k, Exception):
        raise k
    return k


# == bits, written from the extension text ===========================================================
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(UINT[a.dtype.itemsize])


def unpack(words, dtype):
    """uint32 words -> elements of dtype: element j is bits [w (j % p), w (j % p) + w) of word
    j // p (w the element width, p = 32 / w), lower-numbered elements in lower-order bits."""
    dtype = np.dtype(dtype)
    w = 8 * dtype.itemsize
    p = 32 // w
    words = np.asarray(words, np.uint64)
    parts = [(words >> np.uint64(w * s)) & np.uint64((1 << w) - 1) for s in range(p)]
    return np.stack(parts, -1).reshape(words.shape[:-1] + (-1,)).astype(UINT[dtype.itemsize]).view(dtype)


def stored_f16(h):
    """float16 bits after jitcoop stores them as float16 values: NaNs become the quiet 0x7E00
    (sign kept); every other value exactly."""
    h = np.array(h, np.uint16)
    nan = ((h & 0x7C00) == 0x7C00) & ((h & 0x3FF) != 0)
    h[nan] = (h[nan] & 0x8000) | 0x7E00
    return h


def random_bits(rng, shape, dtype):
    """Every bit pattern of dtype can appear (NaNs with payloads, infinities, subnormals)."""
    size = np.dtype(dtype).itemsize
    return rng.integers(0, 1 << (8 * size), shape, dtype=np.uint64).astype(UINT[size]).view(dtype)


def to_matrix(lines, rows, cols, use):
    """Line i (invocation i's array): row i of an A or accumulator, column i of a B; invocations
    past the rows (A, accumulator) or columns (B) are ignored."""
    return lines[:cols, :rows].T if use == "B" else lines[:rows, :cols]


# == construct / extract: every Use and type ==========================================================
# family: A/B component type, accumulator type, K (one 256-bit row), N (built into the .spv)
FAMILIES = {"f16": (np.float16, np.float16, 16, 32), "f32": (np.float32, np.float32, 8, 64),
            "s8": (np.int8, np.int32, 32, 16), "u8": (np.uint8, np.uint32, 32, 32)}
# (family, profile, subgroup size, M): A/accumulator rows M and B columns N at most the subgroup;
# smaller ones leave invocations out
CASES = [("f16", "qualcomm", 64, 64), ("f32", "generic", 64, 16), ("s8", "shuffled", 64, 32),
         ("u8", "qualcomm", 128, 64)]
SLOW_CASES = [("f16", "shuffled", 128, 16), ("f32", "qualcomm", 128, 64),
              ("s8", "qualcomm", 64, 64), ("u8", "generic", 64, 16)]
ALL_CASES = CASES + [pytest.param(*c, marks=pytest.mark.slow) for c in SLOW_CASES]


def run_convert(family, profile, sg, M):
    key = (family, profile, sg, M)
    if key in RUNS:
        return RUNS[key]
    et, ct, K, N = FAMILIES[family]
    pacc = N // 2 if ct == np.float16 else N
    W, groups = 2 * sg, 2
    nsg = groups * W // sg
    inv = nsg * sg
    rng = np.random.default_rng(zlib.crc32(repr(key).encode()))
    ia = random_bits(rng, (inv, 2, K), et)                  # A line, B line
    ic = random_bits(rng, (inv, N), ct)
    ip = random_bits(rng, (inv, 16 + pacc), np.uint32)       # packed A, packed B, packed C
    oab = np.zeros((nsg, 2 * (M * K + K * N)), et)
    oc = np.zeros((nsg, 2, M, N), ct)
    rab, rc, rp = np.zeros_like(ia), np.zeros_like(ic), np.zeros_like(ip)
    k = kernel(f"convert_{family}", profile, sg, {10: W, 0: M})
    k.dispatch(groups, {0: ia, 1: ic, 2: ip, 3: oab, 4: oc, 5: rab, 6: rc, 7: rp})
    ia, ic, ip = (x.reshape(nsg, sg, *x.shape[1:]) for x in (ia, ic, ip))
    rab, rc, rp = (x.reshape(nsg, sg, *x.shape[1:]) for x in (rab, rc, rp))
    a_end, b_end = M * K, M * K + K * N
    out = {}
    for q in range(nsg):
        o = oab[q]
        got = {("A", "same"): o[:a_end].reshape(M, K), ("B", "same"): o[a_end:b_end].reshape(K, N),
               ("A", "packed"): o[b_end:b_end + M * K].reshape(M, K),
               ("B", "packed"): o[b_end + M * K:].reshape(K, N),
               ("C", "same"): oc[q, 0], ("C", "packed"): oc[q, 1]}
        lines = {("A", "same"): ia[q, :, 0], ("B", "same"): ia[q, :, 1], ("C", "same"): ic[q],
                 ("A", "packed"): ip[q, :, :8], ("B", "packed"): ip[q, :, 8:16],
                 ("C", "packed"): ip[q, :, 16:]}
        back = {("A", "same"): rab[q, :, 0], ("B", "same"): rab[q, :, 1], ("C", "same"): rc[q],
                ("A", "packed"): rp[q, :, :8], ("B", "packed"): rp[q, :, 8:16],
                ("C", "packed"): rp[q, :, 16:]}
        for part in got:
            out.setdefault(part, []).append((got[part], lines[part], back[part]))
    RUNS[key] = dict(parts=out, M=M, K=K, N=N, et=et, ct=ct, sg=sg)
    return RUNS[key]


def _dims(r, use):
    return {"A": (r["M"], r["K"]), "B": (r["K"], r["N"]), "C": (r["M"], r["N"])}[use]


@pytest.mark.parametrize("form", ["same", "packed"])
@pytest.mark.parametrize("use", ["A", "B", "C"])
@pytest.mark.parametrize("family,profile,sg,M", ALL_CASES)
def test_construct(family, profile, sg, M, use, form):
    """OpCompositeConstructCoopMatQCOM: the matrix (stored row major) against the invocations'
    arrays, bit for bit (float16 NaNs as a float16 store leaves them)."""
    r = run_convert(family, profile, sg, M)
    rows, cols = _dims(r, use)
    dt = r["ct"] if use == "C" else r["et"]
    for got, lines, _ in r["parts"][use, form]:
        if form == "packed":
            lines = unpack(lines, dt)
        want = bits(to_matrix(lines, rows, cols, use))
        if np.dtype(dt) == np.float16:
            want = stored_f16(want)
        np.testing.assert_array_equal(bits(got), want)


@pytest.mark.parametrize("form", ["same", "packed"])
@pytest.mark.parametrize("use", ["A", "B", "C"])
@pytest.mark.parametrize("family,profile,sg,M", ALL_CASES)
def test_extract_round_trip(family, profile, sg, M, use, form):
    """OpCompositeExtractCoopMatQCOM of a constructed matrix gives every invocation inside the
    extent its array back bit for bit (float16 NaN payloads included: packed words keep them, a
    float16 store makes them the quiet NaN); the others get zeros (the text's OpUndef, which
    jitcoop makes zero)."""
    r = run_convert(family, profile, sg, M)
    rows, cols = _dims(r, use)
    extent = cols if use == "B" else rows
    dt = np.uint32 if form == "packed" else r["ct"] if use == "C" else r["et"]
    for _, lines, back in r["parts"][use, form]:
        want = bits(lines).copy()
        if np.dtype(dt) == np.float16:       # the shader stores the array as float16 values
            want = stored_f16(want)
        want[extent:] = 0
        np.testing.assert_array_equal(bits(back), want)


@pytest.mark.parametrize("shader", ["ldbits", "ldbits_col"])
def test_float16_load_keeps_nan_payloads(shader):
    """Every float16 pattern through a KHR load, read back packed: the row-major load converts
    whole runs at once, the column-major one 8 x 8 blocks through a register transpose, and
    both mend what held a NaN afterwards (codegen/matrix_loads.py), so signalling NaNs keep
    their payload and quiet bit in the fragments. Column-major: row i of a tile is its memory
    column i (element (r, c) at c * 64 + r), so y is each 64 x 16 tile of x transposed."""
    k = kernel(shader, "generic", 64)
    x = np.arange(65536, dtype=np.uint16)
    y = np.zeros(32768, np.uint32)
    k.dispatch(64, {0: x, 1: y})
    back = y.view(np.uint16)
    want = x if shader == "ldbits" else x.reshape(64, 16, 64).transpose(0, 2, 1).ravel()
    bad = np.flatnonzero(back != want)
    assert bad.size == 0, f"{bad.size} differ; first {want[bad[0]]:#06x} came back {back[bad[0]]:#06x}"


# == the qualcomm profile ==============================================================================
@pytest.mark.parametrize("sg", [64, 128])
def test_qualcomm_profile_table_and_layouts(sg):
    p = make_profile("qualcomm", sg)
    assert p.subgroup_size == sg and p.subgroup_sizes == (64, 128)
    dims = [d for d in (16, 32, 64, 128) if d <= sg]
    assert {e.M for e in p.coopmat} == set(dims) == {e.N for e in p.coopmat}
    assert {(e.A, e.K) for e in p.coopmat} == {("f32", 8), ("f16", 16), ("s8", 32), ("u8", 32)}
    # the proposal's shapes: neural texture decompression, flash attention, dequantization
    assert p.muladd_problem(64, 16, 16, "f16", "f16", "f16", "f16", False, 3, sg) is None
    assert p.muladd_problem(64, 64, 8, "f32", "f32", "f32", "f32", False, 3, sg) is None
    assert p.muladd_problem(64, 64, 16, "f16", "f16", "f32", "f32", False, 3, sg) is None
    assert p.muladd_problem(64, 64, 16, "f16", "f16", "f16", "f16", False, 3, sg) is None
    assert p.muladd_problem(16, 16, 16, "f32", "f32", "f32", "f32", False, 3, sg) is not None
    for use, (r, c) in ((0, (dims[-1], 16)), (1, (16, dims[0])), (2, (dims[0], dims[-1])),
                        (2, (dims[-1], dims[-1]))):
        lay = L.qualcomm(use, r, c, sg)
        covered = np.zeros(r * c, int)
        np.add.at(covered, lay.table.ravel(), 1)
        assert covered.min() >= 1 and lay.length == -(-r * c // sg)
        lines = c if use == 1 else r
        co = lay.coords()
        # invocation l holds elements of line l % lines only
        assert (co[..., 1 if use == 1 else 0] == (np.arange(sg) % lines)[:, None]).all()
    full = L.qualcomm(0, sg, 16, sg)         # one row per invocation: the arrays themselves
    assert (full.table == np.arange(sg * 16).reshape(sg, 16)).all()


def test_qualcomm_profile_refuses_other_subgroup_sizes():
    with pytest.raises(jitcoop.BindingError, match="64, 128"):
        jitcoop.Device("qualcomm", subgroup_size=32)


def test_qualcomm_profile_refuses_types_outside_its_table():
    e = _spirv_error(asm(["%r = OpCompositeConstructCoopMatQCOM %m_f16_64x8_A %u_a_f16_8"]))
    assert "qualcomm" in str(e) and "64 x 8 f16 A" in str(e)


# == OpBitCastArrayQCOM, OpExtractSubArrayQCOM =========================================================
def run_arrays(a, b, n=64, words=None):
    k = kernel("arrays", "generic")
    rng = np.random.default_rng(3)
    w = random_bits(rng, (n, 16), np.uint32) if words is None else words
    outs = [np.zeros((n, 8), np.uint32), np.zeros((n, 16), np.float16), np.zeros((n, 8), np.float32),
            np.zeros((n, 8), np.int32), np.zeros((n, 16), np.uint32), np.zeros((n, 16), np.uint32)]
    k.dispatch(n // 32, {0: w, **{i + 1: o for i, o in enumerate(outs)}},
               push=np.array([a, b], np.int32))
    return w, outs


@pytest.fixture(scope="module")
def arrays_run():
    w = np.random.default_rng(4).integers(0, 2 ** 32, (64, 16), dtype=np.uint64).astype(np.uint32)
    # float16 and float32 NaNs with payloads, infinities, signed zeros, subnormals
    w[0, :8] = [0x7C01FC01, 0x7E00FFFF, 0x7F800001, 0xFF800000, 0x00010000, 0x80000001,
                0x3C00BC00, 0x7FBFFFFF]
    return run_arrays(12, 24, words=w)


def test_bitcast_round_trip_is_bit_exact(arrays_run):
    """uint32[8] -> float16_t[16] -> uint32[8] keeps every bit (float16 NaN payloads too)."""
    w, (rt, *_) = arrays_run
    np.testing.assert_array_equal(rt, w[:, :8])


def test_bitcast_to_float16_packs_low_half_first(arrays_run):
    w, (_, h, *_) = arrays_run
    want = np.stack([w[:, :8] & 0xFFFF, w[:, :8] >> 16], -1).reshape(64, 16).astype(np.uint16)
    np.testing.assert_array_equal(bits(h), stored_f16(want))


def test_bitcast_to_float32_and_int32(arrays_run):
    w, (_, _, f, i, wide, _) = arrays_run
    np.testing.assert_array_equal(bits(f), w[:, :8])
    # int[8] -> float16_t[16] -> float[8] -> int[8]: the same bits, through every pairing
    np.testing.assert_array_equal(i.view(np.uint32), w[:, :8])
    # 64-byte arrays: uint[16] -> float16_t[32] -> float[16] -> uint[16]
    np.testing.assert_array_equal(wide, w)


@pytest.mark.parametrize("a,b", [(0, 0), (12, 24), (5, 13)])
def test_extract_sub_array(a, b):
    w, (*_, s) = run_arrays(a, b)
    np.testing.assert_array_equal(s[:, :8], w[:, 8:16])                           # start 8
    np.testing.assert_array_equal(s[:, 8:12], w[:, a:a + 4])                      # int[4], start a
    halves = unpack(w, np.uint16)                                                # float16_t[32]
    np.testing.assert_array_equal(s[:, 12:16], bits(halves[:, b:b + 8].copy().view(np.uint32)))


@pytest.mark.parametrize("a,b,start,length,src", [(13, 0, 13, 4, "i32[16]"), (-1, 0, -1, 4, "i32[16]"),
                                                  (0, 25, 25, 8, "f16[32]")])
def test_extract_sub_array_out_of_range_at_run_time(a, b, start, length, src):
    with pytest.raises(jitcoop.ExecutionError) as ei:
        run_arrays(a, b)
    e = ei.value
    assert e.opname == "OpExtractSubArrayQCOM" and e.result_id is not None and e.offset is not None
    assert e.workgroup == (0, 0, 0) and e.lane == 0
    assert f"Start Index {start}" in str(e) and f"{length} elements" in str(e) and src in str(e)


# == the proposal's worked uses =========================================================================
@pytest.mark.parametrize("shader", ["conv", pytest.param("conv_outer", marks=pytest.mark.slow)])
def test_conv_implicit_im2col(shader):
    """3x3 convolution, 32 -> 32 channels, NHWC 8x8 images: per tap and 16-channel step the
    invocations' input vectors (zero outside the image) become A. Small integers: exact."""
    rng = np.random.default_rng(21)
    n, H, W, CIN, COUT = 3, 8, 8, 32, 32
    x = rng.integers(-3, 4, (n, H, W, CIN)).astype(np.float16)
    f = rng.integers(-3, 4, (3, 3, CIN, COUT)).astype(np.float16)
    o = np.zeros((n, H * W, COUT), np.float32)
    kernel(shader).dispatch(n, {0: x, 1: f, 2: o})
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    want = sum(xp[:, fr:fr + H, fc:fc + W, :] @ f[fr, fc].astype(np.float64)
               for fr in range(3) for fc in range(3))
    np.testing.assert_array_equal(o, want.reshape(n, H * W, COUT))


@pytest.mark.parametrize("profile", ["qualcomm", pytest.param("shuffled", marks=pytest.mark.slow)])
def test_two_layer_network(profile):
    """y = f16(relu(f16(x W0 + b0)) W1 + b1): layer 1's accumulator goes to the invocations and
    comes back as layer 2's A; the biases are accumulators built from every invocation's copy.
    MulAdd numerics "exact": the exact sum rounded once to float16."""
    from test_coopmat_khr import ROUND, exact_muladd
    rng = np.random.default_rng(22)
    G = 2
    x = rng.standard_normal((G * 64, 16)).astype(np.float16)
    w = (rng.standard_normal((2, 16, 16)) / 4).astype(np.float16)
    b = rng.standard_normal((2, 16)).astype(np.float16)
    y = np.zeros((G * 64, 16), np.float16)
    kernel("mlp", profile, 64).dispatch(G, {0: x, 1: w, 2: b, 3: y})
    h = np.maximum(exact_muladd(x, w[0], np.tile(b[0], (G * 64, 1)), ROUND["f16"]), 0)
    want = exact_muladd(h, w[1], np.tile(b[1], (G * 64, 1)), ROUND["f16"])
    np.testing.assert_array_equal(y.astype(np.float64), want)


def q4_0(rng, rows=64, nb=2):
    """llama.cpp q4_0 blocks (float16 scale d, 16 bytes of nibbles: byte j holds weight j low and
    weight j + 16 high; weight = (q - 8) d) and the float64 weights they stand for."""
    d = (rng.choice([-1, 1], (rows, nb)) * 2.0 ** rng.integers(-3, 2, (rows, nb))).astype(np.float16)
    q = rng.integers(0, 16, (rows, nb, 32))
    blocks = np.zeros((rows, nb), dtype=[("d", "<f2"), ("qs", "u1", (16,))])
    blocks["d"] = d
    blocks["qs"] = q[:, :, :16] | (q[:, :, 16:] << 4)
    return blocks, ((q - 8) * d[:, :, None].astype(np.float64)).reshape(rows, nb * 32)


def run_dequant(shift=0):
    rng = np.random.default_rng(23)
    blocks, a = q4_0(rng)
    xb = rng.integers(-3, 4, (64, 64)).astype(np.float16)
    o = np.zeros((64, 64), np.float32)
    kernel("dequant").dispatch(1, {0: blocks, 1: xb, 2: o}, push=np.array([shift], np.int32))
    return o, a @ xb.astype(np.float64).T


def test_dequantized_weights_feed_muladd():
    """Each invocation dequantizes its row's q4_0 block into float16_t[32]; OpExtractSubArrayQCOM
    picks the step's 16 (start 0 or 16, known at run time); B columns come packed through
    OpBitCastArrayQCOM. Power-of-two scales, small integers: exact."""
    o, want = run_dequant()
    np.testing.assert_array_equal(o, want)


@pytest.mark.parametrize("shift,words", [
    (4, "the sub-array feeds a cooperative matrix, so its Start Index must be a multiple of a "
        "supported K (8 or 16 or 32); it is 4"),
    (8, "Start Index 24 and the Result's 16 elements reach outside the Source Array f16[32]")])
def test_dequant_bad_start_at_run_time(shift, words):
    with pytest.raises(jitcoop.ExecutionError) as ei:
        run_dequant(shift)
    e = ei.value
    assert e.opname == "OpExtractSubArrayQCOM" and e.lane == 0 and e.workgroup == (0, 0, 0)
    assert words in str(e)


# == run-time misuse of the collectives ===================================================================
@pytest.mark.parametrize("mode,op", [(1, "OpCompositeConstructCoopMatQCOM"),
                                     (2, "OpCompositeExtractCoopMatQCOM")])
def test_divergent_conversion_names_the_lane(mode, op):
    k = kernel("bad")
    x = np.random.default_rng(24).standard_normal((128, 8)).astype(np.float32)
    keep = x.copy()
    k.dispatch(2, {0: x}, push=np.array([0, 0], np.uint32))      # uniform: a round trip
    np.testing.assert_array_equal(x, keep)
    with pytest.raises(jitcoop.ExecutionError) as ei:
        k.dispatch(2, {0: x}, push=np.array([mode, 40], np.uint32), threads=1)
    e = ei.value
    assert e.opname == op and e.lane == 40 and e.workgroup == (0, 0, 0)
    assert "reached by only part of its subgroup" in str(e)
    np.testing.assert_array_equal(x, keep)                      # a failed dispatch leaves it


# == load/kernel-time errors, from SPIR-V assembly ==========================================================
SCALARS = {"f16": "OpTypeFloat 16", "f32": "OpTypeFloat 32", "f64": "OpTypeFloat 64",
           "u32": "OpTypeInt 32 0", "s32": "OpTypeInt 32 1", "u8": "OpTypeInt 8 0",
           "s8": "OpTypeInt 8 1", "u16": "OpTypeInt 16 0"}
USE = {"A": 0, "B": 1, "C": 2}


def asm(body, local_size=64, variables=()):
    """A compute module running `body` (lines of SPIR-V assembly). Names declare themselves:
    %a_<t>_<n> an array type, %m_<t>_<r>x<c>_<A|B|C>[_wg] a (subgroup, or workgroup) matrix type,
    %u_<type> an OpUndef of a type, %c<n> / %i<n> a uint / int constant (%im<n>: -n)."""
    text = "\n".join(body)
    names = set(re.findall(r"%([A-Za-z0-9_]+)", text))
    consts, arrays, mats, undefs = set(), set(), set(), set()

    def need(n):
        if n.startswith("u_"):
            undefs.add(n)
            need(n[2:])
        elif n.startswith("a_"):
            _, t, k = n.split("_")
            arrays.add(n)
            consts.add(f"c{k}")
        elif n.startswith("m_"):
            parts = n.split("_")
            r, c = parts[2].split("x")
            mats.add(n)
            consts.update({f"c{r}", f"c{c}", f"c{USE[parts[3]]}", "c3", "c2"})
        elif re.fullmatch(r"(c|i|im)\d+", n):
            consts.add(n)
    for n in names:
        need(n)
    L = ["OpCapability Shader", "OpCapability Float16", "OpCapability Float64", "OpCapability Int8",
         "OpCapability Int16", "OpCapability VulkanMemoryModel", "OpCapability CooperativeMatrixKHR",
         "OpCapability CooperativeMatrixConversionQCOM", 'OpExtension "SPV_KHR_cooperative_matrix"',
         'OpExtension "SPV_QCOM_cooperative_matrix_conversion"', "OpMemoryModel Logical Vulkan",
         'OpEntryPoint GLCompute %main "main"', f"OpExecutionMode %main LocalSize {local_size} 1 1",
         "%void = OpTypeVoid", "%fn = OpTypeFunction %void"]
    L += [f"%{t} = {d}" for t, d in SCALARS.items()]
    for c in sorted(consts):
        m = re.fullmatch(r"(c|i|im)(\d+)", c)
        v = int(m.group(2)) * (-1 if m.group(1) == "im" else 1)
        L.append(f"%{c} = OpConstant %{'u32' if m.group(1) == 'c' else 's32'} {v}")
    for a in sorted(arrays):
        _, t, k = a.split("_")
        L.append(f"%{a} = OpTypeArray %{t} %c{k}")
    for m in sorted(mats):
        parts = m.split("_")
        r, c = parts[2].split("x")
        scope = "%c2" if m.endswith("_wg") else "%c3"
        L.append(f"%{m} = OpTypeCooperativeMatrixKHR %{parts[1]} {scope} %c{r} %c{c} %c{USE[parts[3]]}")
    L += [f"%p_{t} = OpTypePointer Function %{t}" for t in variables]
    for u in sorted(undefs):
        L.append(f"%{u} = OpUndef %{u[2:]}")
    L += ["%main = OpFunction %void None %fn", "%entry = OpLabel"]
    L += [f"%v_{t} = OpVariable %p_{t} Function" for t in variables]
    L += body + ["OpReturn", "OpFunctionEnd"]
    return "\n".join(L) + "\n"


def _spirv_error(src, profile="qualcomm", sg=None):
    with pytest.raises(jitcoop.SpirvError) as ei:
        kernel(src, profile, sg)
    return ei.value


CONSTRUCT = "%r = OpCompositeConstructCoopMatQCOM %{} %{}"
EXTRACT = "%r = OpCompositeExtractCoopMatQCOM %{} %{}"
BAD = [
    # construct: the fixed 256-bit dimension, lengths, element types, sizes, scope
    (CONSTRUCT.format("m_f16_64x8_A", "u_a_f16_8"), "generic", "must have Columns = 16 (256 bits)"),
    (CONSTRUCT.format("m_s8_16x64_B", "u_a_s8_16"), "generic", "must have Rows = 32 (256 bits)"),
    (CONSTRUCT.format("m_f16_64x16_A", "u_a_f16_8"), "qualcomm", "must have 16 elements (the matrix's Columns)"),
    (CONSTRUCT.format("m_f16_16x64_B", "u_a_f16_64"), "qualcomm", "must have 16 elements (the matrix's Rows)"),
    (CONSTRUCT.format("m_f16_64x16_A", "u_a_u32_16"), "qualcomm", "must have 8 packed words (256 bits) = 8"),
    (CONSTRUCT.format("m_f16_64x16_A", "u_a_s32_8"), "qualcomm", "Component Type f16 or uint32 elements"),
    (CONSTRUCT.format("m_f16_128x16_A", "u_a_f16_16"), "generic", "at most SubgroupSize = 64 Rows"),
    (CONSTRUCT.format("m_f32_8x128_B", "u_a_f32_8"), "generic", "at most SubgroupSize = 64 Columns"),
    (CONSTRUCT.format("m_f32_64x128_C", "u_a_f32_128"), "generic", "at most SubgroupSize = 64 rows and columns"),
    (CONSTRUCT.format("m_f16_64x32_C", "u_a_u32_32"), "qualcomm", "must have Columns / 2 packed words = 16"),
    (CONSTRUCT.format("m_f32_64x32_C", "u_a_u32_16"), "qualcomm", "must have Columns words = 32"),
    (CONSTRUCT.format("m_s32_64x32_C", "u_a_f32_32"), "qualcomm", "Component Type i32 or uint32"),
    (CONSTRUCT.format("m_f64_16x16_C", "u_a_f64_16"), "generic", "32-bit integer, float16 or float32"),
    (CONSTRUCT.format("m_u32_16x16_A", "u_a_u32_16"), "generic", "8-bit integer, float16 or float32"),
    (CONSTRUCT.format("m_f32_64x8_A_wg", "u_a_f32_8"), "generic", "must have Scope Subgroup"),
    (CONSTRUCT.format("m_f32_64x8_A", "u_a_u8_32"), "generic", "Component Type f32 or uint32"),
    (CONSTRUCT.format("m_f32_64x8_A", "u_f32"), "generic", "one-dimensional array"),
    # extract: the same rules on the Result Type
    (EXTRACT.format("a_f16_16", "u_m_f32_64x8_A"), "qualcomm", "Component Type f32 or uint32"),
    (EXTRACT.format("a_u32_4", "u_m_f16_16x64_B"), "qualcomm", "must have 8 packed words"),
    (EXTRACT.format("a_u32_32", "u_m_f16_64x32_C"), "qualcomm", "Columns / 2 packed words = 16"),
    (EXTRACT.format("a_f16_16", "u_f16"), "generic", "must be a cooperative matrix"),
    # bit casts
    ("%r = OpBitCastArrayQCOM %a_u32_4 %u_a_f16_16", "generic", "must have the same size"),
    ("%r = OpBitCastArrayQCOM %a_u32_8 %u_a_u8_32", "generic", "32-bit integers, float32 or float16"),
    ("%r = OpBitCastArrayQCOM %a_f64_4 %u_a_u32_8", "generic", "32-bit integers, float32 or float16"),
    # sub-arrays: constant starts are checked at kernel()
    ("%r = OpExtractSubArrayQCOM %a_u32_8 %u_a_u32_16 %c12", "generic",
     "Start Index 12 and the Result's 8 elements reach outside the Source Array u32[16]"),
    ("%r = OpExtractSubArrayQCOM %a_u32_8 %u_a_u32_16 %im1", "generic", "Start Index -1 and"),
    ("%r = OpExtractSubArrayQCOM %a_u32_32 %u_a_u32_16 %c0", "generic", "is longer than the Source Array"),
    ("%r = OpExtractSubArrayQCOM %a_f32_8 %u_a_u32_16 %c0", "generic", "must have the element type"),
    ("%r = OpExtractSubArrayQCOM %a_u32_8 %u_a_u32_16 %u_u16", "generic", "must be a 32-bit integer"),
    ("%r = OpExtractSubArrayQCOM %a_f32_8 %u_a_f32_16 %c4\n"
     "%m = OpCompositeConstructCoopMatQCOM %m_f32_64x8_A %r", "qualcomm",
     "feeds a cooperative matrix, so its Start Index must be a multiple of a supported K (8 or 16 or 32); it is 4"),
]


@pytest.mark.parametrize("body,profile,words", BAD, ids=[w[:40] for _, _, w in BAD])
def test_bad_module_names_the_instruction(body, profile, words):
    src = asm(body.split("\n"))
    e = _spirv_error(src, profile, 64 if profile == "generic" else None)
    op = re.search(r"= (Op\w+QCOM)", body.split("\n")[0]).group(1)
    assert e.opname == op and e.result_id is not None and e.offset is not None, str(e)
    assert words in str(e), str(e)


def test_start_rule_follows_the_sub_array_through_a_variable():
    """The multiple-of-K rule applies when the sub-array reaches a construct through a Function
    variable (what glslang emits for extractSubArrayQCOM then vectorToCoopmatQCOM) ..."""
    body = ["%r = OpExtractSubArrayQCOM %a_f32_8 %u_a_f32_16 %c4", "OpStore %v_a_f32_8 %r",
            "%l = OpLoad %a_f32_8 %v_a_f32_8", "%m = OpCompositeConstructCoopMatQCOM %m_f32_64x8_A %l"]
    e = _spirv_error(asm(body, variables=["a_f32_8"]))
    assert e.opname == "OpExtractSubArrayQCOM" and "multiple of a supported K" in str(e)


def test_start_rule_only_for_matrix_inputs():
    """... and not otherwise: a sub-array at start 4 that feeds no matrix is fine."""
    body = ["%r = OpExtractSubArrayQCOM %a_f32_8 %u_a_f32_16 %c4", "OpStore %v_a_f32_8 %r"]
    kernel(asm(body, variables=["a_f32_8"]), "generic", 64)


def test_matrix_rules_need_a_power_of_two_subgroup():
    from jitcoop.codegen.rules.qcom_coopmat import matrix_problem
    from jitcoop.spirv.types import CoopMat, Scalar
    t = CoopMat(Scalar("float", 16), 0, 3, 16, 16, 0)
    assert "power of two" in matrix_problem(t, 48)
    assert matrix_problem(t, 64) is None


# == jitcoop check / devices ===============================================================================
def test_devices_lists_qualcomm(capsys):
    from jitcoop.cli import main
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "qualcomm" in out and "sizes 64, 128" in out


def test_check_on_qualcomm_and_nvidia(capsys):
    from jitcoop.cli import main
    assert main(["check", str(QC / "mlp.spv"), "--device", "qualcomm"]) == 0
    out = capsys.readouterr().out
    assert "ok  ext     VK_QCOM_cooperative_matrix_conversion" in out
    assert "ok  qcom    construct coopmat<f16, Subgroup, 64x16, A> from f16[16]" in out
    assert "ok  qcom    extract f16[16] from coopmat<f16, Subgroup, 64x16, Accumulator>" in out
    assert main(["check", str(QC / "mlp.spv"), "--device", "nvidia"]) == 1
    out = capsys.readouterr().out
    assert "does not expose VK_QCOM_cooperative_matrix_conversion" in out
    assert "at most SubgroupSize = 32 Rows" in out


def test_check_reports_the_vulkan_sub_array_rules(capsys):
    """Vulkan's rules for OpExtractSubArrayQCOM (lengths an advertised NSize / KSize, a constant
    start a multiple of the result length) are reported by `check`, not enforced by kernel()."""
    from jitcoop.cli import main
    assert main(["check", str(QC / "arrays.spv"), "--device", "qualcomm"]) == 1
    out = capsys.readouterr().out
    assert "ok  qcom    extract sub-array u32[8] from u32[16]" in out
    assert "NO  qcom    extract sub-array i32[4] from i32[16]" in out
    assert "the Result length 4 must be an advertised KSize (8, 16, 32)" in out
    assert main(["check", str(QC / "dequant.spv"), "--device", "qualcomm"]) == 0
