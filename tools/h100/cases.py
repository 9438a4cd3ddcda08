"""Cases to run on a real H100 through tools/vkrun, and the recorded oracles made from its results.

    python tools/h100/cases.py write [DIR]        # build/h100: one folder per group (manifest,
                                                  # SPIR-V, inputs) and all.json (what was written)
    (run tools/h100/device.sh on the GPU machine; it leaves results.tgz)
    python tools/h100/cases.py collect RESULTS [DIR]   # RESULTS: the unpacked results folder;
                                                  # writes tests/oracle/h100/<group>.npz

A *group* is one kernel (SPIR-V module, specialization constants, jitcoop options) and one or more
dispatches of it. Inputs are made with the same logic as the tests that use these shaders
(tests/test_coopmat2_apps.py, test_coopmat2_tensor.py, test_coopmat2_decode.py,
test_coopmat_khr.py, test_coopmat_views.py, test_coopmat_wg.py, benchmarks/test_bench_coopmat.py);
random layouts come from those tests' hypothesis strategies (derandomized), and every input is
stored in the oracle file, so the recorded cases never depend on how hypothesis or numpy draw.

Oracle file (numpy .npz, compressed), per group:
    meta      JSON: spv, spec, options (jitcoop kernel options), profile, and per dispatch: groups,
              bindings [[binding, dtype, nbytes, cmp]], notes
    d{i}_push                push-constant bytes (uint8), absent when none
    d{i}_in{b}               the input of binding b, as the test built it (flat, its dtype), or
    d{i}_ref{b}              [j, c]: the same input as d{j}_in{c}
    d{i}_gx{b}               the GPU's buffer after the dispatch XOR the input, as uint8 (zeros
                             where the GPU left a byte as it was: compresses well)
    d{i}_multi{b}            (stores) element indices of binding b written by more than one
                             matrix element: which one wins is not specified
cmp per binding: "exact" (raw bits), "ulp1" (float32 within 1 ulp), "close" (float32, approximate:
exp() and reduction order), "store" (exact except at the d{i}_multi indices), "-" (not compared).
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
sys.path.insert(0, str(TESTS))

ORACLE = TESTS / "oracle" / "h100"
U32 = 0xFFFFFFFF


# ------------------------------------------------------------------------------------------------
# Groups and dispatches
# ------------------------------------------------------------------------------------------------

class Group:
    def __init__(self, name, spv, spec=None, options=None, profile="nvidia"):
        self.name, self.spv, self.spec = name, spv, dict(spec or {})
        self.options = dict(options or {})
        self.profile = profile
        self.dispatches = []

    def add(self, groups, bindings, push=None, cmp=None, multi=None, note=""):
        """bindings: {binding: array}; cmp: {binding: mode} (default exact for every binding)."""
        if isinstance(groups, int):
            groups = (groups, 1, 1)
        groups = tuple(groups) + (1,) * (3 - len(groups))
        arrs = {}
        for b, a in bindings.items():
            a = np.ascontiguousarray(a)
            if a.dtype.fields is not None:          # structured (Q4_0 blocks): raw bytes
                a = a.view(np.uint8)
            arrs[b] = a.reshape(-1).copy()
        cmp = {b: (cmp or {}).get(b, "exact") for b in arrs}
        self.dispatches.append(dict(groups=groups, bindings=arrs, cmp=cmp,
                                    push=None if push is None else np.frombuffer(
                                        np.ascontiguousarray(push).tobytes(), np.uint8).copy(),
                                    multi={b: np.asarray(v, np.int64) for b, v in (multi or {}).items()},
                                    note=note))
        return self


GROUPS: list[Group] = []


def group(*a, **k):
    g = Group(*a, **k)
    GROUPS.append(g)
    return g


def draw(strategy, n, pick):
    """n derandomized hypothesis examples of strategy; keep `pick` spread evenly over them (the
    first ones are hypothesis's simplest)."""
    from hypothesis import HealthCheck, Phase, given, settings
    out = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(strategy)
    def collect(x):
        out.append(x)
    collect()
    if len(out) <= pick:
        return out
    idx = np.linspace(0, len(out) - 1, pick).round().astype(int)
    return [out[i] for i in idx]


# ------------------------------------------------------------------------------------------------
# coopmat2 applications (tests/test_coopmat2_apps.py)
# ------------------------------------------------------------------------------------------------

def apps():
    import test_coopmat2_apps as A
    nv = dict(numerics="nvidia")
    sh = "tests/shaders/coopmat2_apps/"
    for variant in ("q4_gemm", "q4_gemm_shared"):
        M, N, K = 72, 80, 64                  # as test_q4_gemm_exact (ragged: Constant clamp), smaller
        a, blk, d = A.q4_inputs(M, N, K)
        out = np.full((M, N), 7.0, np.float32)
        group(variant, sh + f"{variant}.spv", options=nv).add(
            (1, 1, 1), {0: a, 1: blk, 2: out, 3: d}, push=np.array([M, N, K], np.uint32),
            cmp={2: "ulp1"}, note=f"M,N,K={M},{N},{K} q4_inputs(seed=0)")
    M, N, K = 64, 64, 64                      # test_q4_gemm_vector_decode (128^2 x 64), smaller
    a, blk, d = A.q4_inputs(M, N, K, seed=2)
    group("q4_gemm_vec", sh + "q4_gemm_vec.spv", options=nv).add(
        (1, 1, 1), {0: a, 1: blk, 2: np.zeros((M, N), np.float32), 3: d},
        push=np.array([M, N, K], np.uint32), cmp={2: "ulp1"}, note="q4_inputs(64,64,64,seed=2)")

    g = group("flash_attn", sh + "flash_attn.spv", options=nv)
    for use_mask in (1, 0):                   # test_flash_attention
        Nq, D = 70, 64
        q, k, v, mask, push = A.flash_attn_inputs(use_mask)
        g.add(((Nq + 31) // 32, 1, 1), {0: q, 1: k, 2: v, 3: mask, 4: np.zeros((Nq, D), np.float32)},
              push=push, cmp={4: "close"}, note=f"use_mask={use_mask}")

    rng = np.random.default_rng(7)            # test_non_memory_instructions
    Am = rng.standard_normal((16, 16)).astype(np.float32)
    group("ops", sh + "ops.spv").add(1, {0: Am, 1: np.zeros(1600, np.float32),
                                         2: np.zeros(16, np.uint32)})

    T, N, K, E = 70, 50, 48, 3                # test_mul_mat_id_gather_and_scatter
    a, b, _, ids, counts = A.mul_mat_id_inputs(T, N, K, E)
    group("mul_mat_id", sh + "mul_mat_id.spv", options=nv).add(
        ((T + 31) // 32, (N + 31) // 32, E),
        {0: a, 1: b, 2: ids, 3: counts, 4: np.full((T, N), -1.0, np.float32)},
        push=np.array([T, N, K], np.uint32), cmp={4: "ulp1"})

    rng = np.random.default_rng(1)            # test_decode_reads_private_variable_and_buffer
    q = rng.integers(0, 256, 128, dtype=np.uint8)
    sc = rng.random(32).astype(np.float32)
    group("decode_private", sh + "decode_private.spv").add(
        1, {0: q, 1: np.zeros(256, np.float32), 2: sc})


# ------------------------------------------------------------------------------------------------
# Tensor addressing (tests/test_coopmat2_tensor.py)
# ------------------------------------------------------------------------------------------------

PROBES: list[Group] = []


def _tensor_dispatch(g, c, rng, T):
    """One tensor_nd.comp dispatch of Case c as check_load / check_store build it. RepeatMirrored
    with a dimension of size 1 hung the H100 (fence timeout, first run 2026-11-22): such cases go
    to a probe group of their own, run last, one process each."""
    if c.clamp == T.REPEAT_MIRRORED and 1 in c.dims:
        if not any(p.name == f"probe_{g.name}" for p in PROBES):     # one per group
            p = Group(f"probe_{g.name}", g.spv, g.spec)
            PROBES.append(p)
            _tensor_dispatch_in(p, c, rng, T)
        return
    _tensor_dispatch_in(g, c, rng, T)


def _tensor_dispatch_in(g, c, rng, T):
    emap = T.element_map(c.layout(), c.view(), T.M, T.N, c.store)
    size = c.base + T.max_index(emap) + 1 + int(rng.integers(0, 4))
    tensor = rng.integers(0, 1 << 32, size, dtype=np.uint32)
    obj = rng.integers(0, 1 << 32, (T.M, T.N), dtype=np.uint32)
    multi = None
    if c.store:
        count = {}
        for e in emap.values():
            if e is not T.SKIP and e is not T.CLAMPED:
                count[c.base + e[0]] = count.get(c.base + e[0], 0) + 1
        multi = {0: sorted(i for i, n in count.items() if n > 1)}
    g.add(1, {0: tensor, 1: obj, 2: c.params()}, cmp={0: "store" if c.store else "exact"},
          multi=multi, note=repr(c))


def tensor():
    import test_coopmat2_tensor as T
    from hypothesis import strategies as st
    sh = "tests/shaders/coopmat2/"
    loads, stores = [T.LOAD, T.LOAD_V1, T.LOAD_V3], [T.STORE, T.STORE_V1, T.STORE_V3]
    gs = {}
    for D in range(1, 6):
        for clamp in range(5):
            g = gs[D, clamp] = group(f"tensor_{D}d_{T.CLAMP_NAMES[clamp]}", sh + f"tensor_{D}d.spv",
                                     spec={0: clamp})
            rng = np.random.default_rng(1000 * D + clamp)
            for c in draw(T.cases(D, clamp, loads), 40, 6 if D <= 2 else 5):
                _tensor_dispatch(g, c, rng, T)
            for c in draw(T.cases(D, clamp, stores), 30, 4 if D <= 2 else 3):
                _tensor_dispatch(g, c, rng, T)

    # deterministic cases of the test file, on the 2-D Constant kernel
    g = gs[2, T.CONSTANT]
    rng = np.random.default_rng(99)
    num_rows, num_cols, row0, col0 = 37, 45, 5, 9          # column-major worked example
    c = T.plain_case(2, T.CONSTANT, T.LOAD_V1, [num_cols, num_rows], [col0, row0], [T.N, T.M])
    g.add(1, {0: np.arange(num_rows * num_cols, dtype=np.uint32) * 7 + 1,
              1: np.zeros((T.M, T.N), np.uint32), 2: c.params()}, note="column-major view: " + repr(c))
    c.site = T.STORE_V1
    g.add(1, {0: np.zeros(num_rows * num_cols, np.uint32),
              1: np.arange(T.M * T.N, dtype=np.uint32) + 1, 2: c.params()}, cmp={0: "store"},
          multi={0: []}, note="column-major store: " + repr(c))
    c = T.plain_case(2, T.CONSTANT, T.LOAD, [16, 20], block2=[1, 2], flags=T.F_BS_AFTER)
    g.add(1, {0: np.arange(400, dtype=np.uint32), 1: np.zeros((T.M, T.N), np.uint32),
              2: c.params()}, note="SetBlockSize after SetDimension: " + repr(c))
    c = T.plain_case(2, T.CONSTANT, T.LOAD, [40, 40], flags=T.F_JUNK_SLICE, junk=[3, 4],
                     off1=[2, 3], span1=[1, 1], off2=[1, -1], span2=[T.M, T.N])
    g.add(1, {0: np.arange(1600, dtype=np.uint32), 1: np.zeros((T.M, T.N), np.uint32),
              2: c.params()}, note="slice before SetDimension, two slices: " + repr(c))
    c = T.plain_case(2, T.CONSTANT, T.LOAD, [16, 32], block=[2, 4])
    g.add(1, {0: np.arange(200, dtype=np.uint32) + 100, 1: np.zeros((T.M, T.N), np.uint32),
              2: c.params()}, note="plain load with blocks: " + repr(c))
    c = T.plain_case(2, T.CONSTANT, T.LOAD_V1, [20, 10], [-3, 2], [T.N, T.M], clamp_value=0xDEADBEEF,
                     flags=T.F_CLIP, clip=(2, 10, 4, 20))
    g.add(1, {0: np.arange(200, dtype=np.uint32), 1: np.full((T.M, T.N), 0x5555, np.uint32),
              2: c.params()}, note="clamp value and clip: " + repr(c))

    # the other clamp modes in 2-D (tensor_2d_lite.spv, clamp mode a spec constant), 32-bit
    # extremes (int32 wrap of spanCoord + offset, spans 2^32-1, huge blocks) and the wrap case
    for clamp in T.LITE_MODES:
        g = group(f"tensor_2d_lite_{T.CLAMP_NAMES[clamp]}", sh + "tensor_2d_lite.spv", spec={0: clamp})
        rng = np.random.default_rng(3000 + clamp)
        for c in draw(T.cases(2, clamp, [T.LOAD, T.STORE]), 40, 6):
            _tensor_dispatch(g, c, rng, T)
        if clamp != T.UNDEFINED:
            rng = np.random.default_rng(6000 + clamp)
            for c in draw(T.extreme_cases(clamp, [T.LOAD, T.STORE]), 40, 5):
                _tensor_dispatch(g, c, rng, T)
        if clamp in (T.CLAMP_TO_EDGE, T.REPEAT_MIRRORED):
            c = T.plain_case(2, clamp, T.LOAD, [1, 4], [0, (1 << 31) - 1], [U32, U32])
            if clamp == T.REPEAT_MIRRORED:      # dimension 1: hangs the H100 (see _tensor_dispatch)
                c.dims = [2, 4]
                c.span2 = [U32, U32]
            g.add(1, {0: np.arange(8, dtype=np.uint32), 1: np.zeros((T.M, T.N), np.uint32),
                      2: c.params()}, note="spanCoord + offset wraps as int32: " + repr(c))
    rng = np.random.default_rng(6000 + T.CONSTANT)
    for c in draw(T.extreme_cases(T.CONSTANT, [T.LOAD, T.LOAD_V1, T.LOAD_V3, T.STORE, T.STORE_V1,
                                               T.STORE_V3]), 40, 6):
        _tensor_dispatch(gs[2, T.CONSTANT], c, rng, T)

    # byte-array Pointer (tensor_bytes.comp)
    g = group("tensor_bytes", sh + "tensor_bytes.spv")

    def bytes_case(site, at, dims, off, span, clamp_value, data, note=""):
        p = np.array([x & U32 for x in (site, at, *dims, off[0], span[0], off[1], span[1],
                                        clamp_value)], np.uint32)
        g.add(1, {0: data, 1: np.zeros(512, np.float16), 2: np.zeros(512, np.float32),
                  3: np.zeros(512, np.uint16), 4: np.zeros(512, np.uint8), 5: p}, note=note)

    strat = st.tuples(st.sampled_from([0, 1, 2, 3]), st.integers(0, 6).map(lambda x: 16 * x),
                      st.tuples(st.integers(1, 24), st.integers(1, 40)),
                      st.tuples(st.integers(-5, 20), st.integers(-5, 36)),
                      st.tuples(st.integers(1, 20), st.integers(1, 40)),
                      st.one_of(st.integers(0, U32), st.sampled_from([0xFC00, 0x12345678])))
    for site, at, dims, off, span, cv in draw(strat, 40, 10):
        rng = np.random.default_rng(site * 1000 + at)
        data = rng.integers(0, 256, at + dims[0] * dims[1] * 4 + 3, dtype=np.uint8)
        bytes_case(site, at, dims, off, span, cv, data, note=repr((site, at, dims, off, span, cv)))
    vals = np.arange(200, dtype=np.float16)                  # test_float16_minus_infinity_mask
    bytes_case(0, 32, (10, 20), (0, 0), (T.M, T.N), 0xFC00,
               np.concatenate([np.zeros(32, np.uint8), vals.view(np.uint8)]), note="-inf mask f16")
    bytes_case(1, 0, (10, 20), (0, 0), (T.M, T.N), 0xFC00, np.zeros(800, np.uint8),
               note="-inf mask bits as f32")
    for site in range(4):                                    # every site at least once
        rng = np.random.default_rng(4242 + site)
        bytes_case(site, 48, (13, 29), (-2, 3), (T.M, T.N), 0xA5A5A5A5,
                   rng.integers(0, 256, 48 + 13 * 29 * 4 + 3, dtype=np.uint8), note=f"site {site}")


# ------------------------------------------------------------------------------------------------
# Decode functions (tests/test_coopmat2_decode.py)
# ------------------------------------------------------------------------------------------------

def decode():
    import test_coopmat2_decode as Dm
    import test_coopmat2_tensor as T
    sh = "tests/shaders/coopmat2/"
    for D in (2, 3):
        cfg = Dm.DECODE_KERNELS[D]
        blk = cfg["blk"]
        g = group(f"decode_{D}d", sh + f"decode_{D}d.spv", spec={0: cfg["clamp"], 1: blk})
        rng = np.random.default_rng(D)
        for c in draw(Dm.decode_cases(D), 30, 5):
            t, v = Dm.decode_layout_view(c, D, cfg["clamp"])
            emap = T.element_map(t, v, T.M, T.N)
            words = rng.integers(0, 1 << 32, c["base"] + (T.max_index(emap) + 1) * blk + 2,
                                 dtype=np.uint32)
            wsrc = rng.integers(0, 1 << 32, 32, dtype=np.uint32)
            obj = rng.integers(0, 1 << 32, (T.M, T.N), dtype=np.uint32)
            for sel in range(3):
                g.add(1, {0: words, 1: obj, 2: Dm.decode_params(c), 3: np.array([sel], np.uint32),
                          4: wsrc}, note=f"sel={sel} {c}")

    g = group("decode_q4", sh + "decode_q4.spv")
    for R, C, row0, col0 in [(64, 32, 0, 0), (32, 64, 3, 32), (40, 32, 7, 0)]:
        rng = np.random.default_rng(R + C + row0)
        groups = (R - row0) // 16
        q = rng.integers(0, 256, R * C // 2, dtype=np.uint8)
        scales = rng.uniform(-2, 2, 64 * groups).astype(np.float32)
        g.add((groups, 1, 1), {0: q, 1: scales, 2: np.zeros(512 * groups, np.float32),
                               3: np.array([R, C, row0, col0], np.uint32)}, note=f"{R},{C},{row0},{col0}")

    # DecodeVectorFunc: marker 0, so either function gives the same value
    for V in (2, 4, 8):
        g = group(f"decode_vec{V}", sh + f"decode_vec{V}.spv")
        rng = np.random.default_rng(V)
        from hypothesis import strategies as st
        for aligned, c in draw(st.booleans().flatmap(lambda a: st.tuples(st.just(a), Dm.vec_cases(V, a))),
                               25, 4):
            words = Dm._words(rng, c, T.element_map(Dm.vec_layout(c), None, T.M, T.N))
            p = np.array([c["base"], *c["block"], *c["dims"], c["off"][0], c["span"][0], c["off"][1],
                          c["span"][1]], np.uint32)
            g.add(1, {0: words, 1: np.zeros((T.M, T.N), np.uint32), 2: p, 3: np.zeros(7, np.uint32)},
                  note=repr(c))
    g = group("decode_vecview", sh + "decode_vecview.spv")
    rng = np.random.default_rng(77)
    for c in draw(Dm.vecview_cases(), 20, 4):
        obj = rng.integers(0, 1 << 32, (64, 64), dtype=np.uint32)
        words = rng.integers(0, 1 << 20, c["base"] + 80 * 80 + 4, dtype=np.uint32)
        p = np.array([c["base"], *c["block"], *c["dims"], c["off"][0], c["span"][0], c["off"][1],
                      c["span"][1], c["site"], *c["vdim"], *c["vstride"], *c["clip"]], np.uint32)
        g.add(1, {0: words, 1: obj, 2: p, 3: np.zeros(7, np.uint32)}, note=repr(c))


# ------------------------------------------------------------------------------------------------
# KHR cooperative matrices: MulAdd numerics, lane layouts, benchmark GEMMs
# ------------------------------------------------------------------------------------------------

def khr():
    import test_coopmat_khr as K
    co = "tests/shaders/coopmat/"
    nv = dict(numerics="nvidia")

    def muladd(name, M, N, Kd, cases, cmp):
        spec = {10: 32, **({} if (M, N, Kd) == (16, 16, 16) else {0: M, 1: N, 2: Kd})}
        tag = "" if (M, N, Kd) == (16, 16, 16) else f"_{M}x{N}x{Kd}"
        g = group(f"muladd_{name}{tag}", co + f"muladd_{name}.spv", spec=spec, options=nv)
        for note, (a, b, c, rdt) in cases:
            g.add(1, {0: a, 1: b, 2: c, 3: np.zeros((M, N), rdt)},
                  push=np.array([Kd, N, N, N], np.uint32), cmp={3: cmp}, note=note)

    # float16 accumulators: bit-exact on the H100 (oracle README)
    cases = []
    for seed in range(3):
        a, b, c = K.f16_inputs(np.random.default_rng(seed), cdtype=np.float16)
        cases.append((f"f16_inputs(seed={seed})", (a, b, c, np.float16)))
    a = np.zeros((16, 16), np.float16)                      # test_f16_f16_overflow_to_inf_and_subnormals
    b = np.zeros((16, 16), np.float16)
    c = np.zeros((16, 16), np.float16)
    a[0, :] = 256
    b[:, 0] = 256
    a[1, 0] = 2.0 ** -12
    b[0, 1] = 2.0 ** -12
    a[2, 0], b[0, 2] = 2.0 ** -13, 2.0 ** -12
    a[3, 0], b[0, 3] = 3 * 2.0 ** -13, 2.0 ** -12
    c[4, 4] = -65504
    a[4, 0], b[0, 4] = -16, 1
    cases.append(("overflow to inf and subnormals", (a, b, c, np.float16)))
    muladd("f16_f16", 16, 16, 16, cases, "exact")
    cases = []
    for seed in range(2):                                    # test_nvidia_numerics_f16_chunked_k48
        a, b, c = K.f16_inputs(np.random.default_rng(100 + seed), K=48, cdtype=np.float16)
        cases.append((f"f16_inputs(seed={100 + seed}, K=48)", (a, b, c, np.float16)))
    muladd("f16_f16", 16, 16, 48, cases, "exact")

    # float32 accumulators: within 1 ulp
    cases = []
    for seed in (0, 1, 2, 200, 201):
        a, b, c = K.f16_inputs(np.random.default_rng(seed))
        cases.append((f"f16_inputs(seed={seed})", (a, b, c, np.float32)))
    a, b, c = (np.abs(x) for x in K.f16_inputs(np.random.default_rng(202)))
    cases.append(("abs(f16_inputs(seed=202))", (a, b, c, np.float32)))
    a = np.zeros((16, 16), np.float16)                       # the hand case
    b = np.zeros((16, 16), np.float16)
    c = np.zeros((16, 16), np.float32)
    c[0, 0] = 1.0
    a[0, :], b[:, 0] = 2.0 ** -15, 2.0 ** -15
    c[1, 1] = np.float32(1 - 2.0 ** -24)
    a[1, 0], b[0, 1] = 2.0 ** -12, 3 * 2.0 ** -14
    cases.append(("hand case: truncation", (a, b, c, np.float32)))
    a, b, c = K.f16_inputs(np.random.default_rng(300), scale=8.0)
    cases.append(("f16_inputs(seed=300, scale=8)", (a, b, c, np.float32)))
    muladd("f16_f32", 16, 16, 16, cases, "ulp1")
    cases = []
    for seed in (400, 401):
        a, b, c = K.f16_inputs(np.random.default_rng(seed), K=64)
        cases.append((f"f16_inputs(seed={seed}, K=64)", (a, b, c, np.float32)))
    muladd("f16_f32", 16, 16, 64, cases, "ulp1")

    # bfloat16 x bfloat16 -> float32 (test_bf16_f32_exact's inputs)
    rng = np.random.default_rng(5)
    a = K.f64_to_bf16_bits(rng.standard_normal((16, 16)))
    b = K.f64_to_bf16_bits(rng.standard_normal((16, 16)) * 8)
    c = rng.standard_normal((16, 16)).astype(np.float32)
    rng = np.random.default_rng(6)
    a2 = K.f64_to_bf16_bits(rng.standard_normal((16, 16)))
    b2 = K.f64_to_bf16_bits(rng.standard_normal((16, 16)))
    c2 = (rng.standard_normal((16, 16)) * 4).astype(np.float32)
    muladd("bf16_f32", 16, 16, 16, [("test_bf16_f32_exact inputs", (a, b, c, np.float32)),
                                    ("seed 6", (a2, b2, c2, np.float32))], "ulp1")

    # integers (H100: K = 32 for 8-bit)
    cases = []
    for seed in range(2):
        rng = np.random.default_rng(seed)
        cases.append((f"ints seed={seed}", (K.ints(rng, np.int8, (16, 32)), K.ints(rng, np.int8, (32, 16)),
                                            K.ints(rng, np.int32, (16, 16)), np.int32)))
    a = np.full((16, 32), 127, np.int8)                      # wraps at the int32 edges
    b = np.full((32, 16), 127, np.int8)
    c = np.full((16, 16), 2 ** 31 - 1000, np.int32)
    a[8:] = -128
    c[8:] = -2 ** 31 + 1000
    cases.append(("int32 wrap", (a, b, c, np.int32)))
    muladd("s8_s32", 16, 16, 32, cases, "exact")
    rng = np.random.default_rng(3)
    muladd("u8_u32", 16, 16, 32, [("ints seed=3", (K.ints(rng, np.uint8, (16, 32)), K.ints(rng, np.uint8, (32, 16)),
                                                   K.ints(rng, np.uint32, (16, 16)), np.uint32))], "exact")

    # per-lane element access (test_coopmat_views.py run_perlane): the real lane layout
    x = np.random.default_rng(4).standard_normal(256).astype(np.float32)
    g = group("perlane", co + "perlane.spv")
    for j in (3, 6):
        g.add(1, {0: x, 1: np.zeros(32, np.uint32), 2: np.zeros(256, np.float32),
                  3: np.zeros(256, np.float32), 4: np.zeros(256, np.float32),
                  5: np.zeros(256, np.float32)}, push=np.array([j], np.uint32), note=f"j={j}")

    # workgroup scope: lane map of a 64x64 f32 accumulator and a 64x64x64 f16 MulAdd
    for inv in (128, 256):
        rng = np.random.default_rng(13)
        a, b, c = K.f16_inputs(rng, 64, 64, 64)
        group(f"wg_lanes_{inv}", co + "wg.spv", spec={10: inv}, options=nv).add(
            1, {0: np.full(4096, -1, np.float32), 1: a, 2: b, 3: c, 4: np.zeros(4096, np.float32),
                5: np.zeros(3 * inv, np.uint32)}, cmp={4: "ulp1"})
    for W in (128, 256):                                      # tests/test_coopmat_wg.py
        rng = np.random.default_rng(W)
        T = 1
        a = rng.standard_normal((T, 64, 32)).astype(np.float16)
        b = rng.standard_normal((T, 32, 64)).astype(np.float16)
        c = rng.standard_normal((T, 64, 64)).astype(np.float32)
        group(f"wg_muladd_{W}", "tests/shaders/coopmat_wg/wg_muladd.spv", spec={0: W}, options=nv).add(
            T, {0: a, 1: b, 2: c}, cmp={2: "ulp1"})

    # benchmark GEMMs, small (benchmarks/test_bench_coopmat.py's operands at 1024^3): M x N x K
    # 64 x 128 x 128 (two 64x64 workgroup tiles, 8 K steps of 16 / 4 of 32) and, for the
    # workgroup-scope one, 128 x 128 x 64 (one 128x128 tile, 2 K steps)
    bs = "benchmarks/shaders/"
    M, N, K = 64, 128, 128
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    push = np.array([M, N, K], np.uint32)
    group("gemm_coopmat_f16", bs + "gemm_coopmat_f16.spv", options=nv).add(
        (N // 64, M // 64), {0: a, 1: b, 2: np.zeros((M, N), np.float32)}, push=push, cmp={2: "ulp1"})
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    group("gemm_coopmat_s8", bs + "gemm_coopmat_s8.spv", options=nv).add(
        (N // 64, M // 64), {0: a, 1: b, 2: np.zeros((M, N), np.int32)}, push=push)
    M, N, K = 128, 128, 64
    rng = np.random.default_rng(2)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    group("gemm_coopmat_wg", bs + "gemm_coopmat_wg.spv", options=nv).add(
        (N // 128, M // 128), {0: a, 1: b, 2: np.zeros((M, N), np.float32)},
        push=np.array([M, N, K], np.uint32), cmp={2: "ulp1"})


# ------------------------------------------------------------------------------------------------
# Portability: what the H100 does where the extensions say "must" or "undefined"
# (tests/shaders/portability/, tests/test_portability.py)
# ------------------------------------------------------------------------------------------------

SENTINEL = 0x7FC0DEAD           # a NaN pattern no shader writes: "left as it was"


def tensor_rules_inputs(R, C, extra=512):
    """x: R x C float32 tensor and `extra` elements after it, every element distinct (i + 1)."""
    x = (np.arange(R * C + extra) + 1).astype(np.float32)
    z = np.full(16 * 16 + 16, SENTINEL, np.uint32).view(np.float32)
    v = np.full(R * C + extra, SENTINEL, np.uint32).view(np.float32)
    return x, z, v


# (R, C, poff, soff, roff, coff): the Pointer's element offsets of the 16x16 load (binding 0) and
# store (binding 2); the Undefined-clamped slice's origin
TENSOR_RULES = [(32, 32, 0, 0, 0, 0), (32, 32, 1, 1, 24, 24), (32, 32, 2, 3, 28, 0), (32, 32, 5, 6, 0, 20),
                (32, 32, 0, 0, 40, 0), (20, 24, 3, 1, 10, 12)]


def portability():
    sh = "tests/shaders/portability/"
    g = group("portability_tensor", sh + "tensor_rules.spv")
    for R, C, poff, soff, roff, coff in TENSOR_RULES:
        x, z, v = tensor_rules_inputs(R, C)
        # the H100 stores through the constant 16 x 16 layout in 8-byte pairs and drops the low bits
        # of a Pointer 4 bytes past that (the store lands 4 bytes early); jitcoop stores at the
        # Pointer as given, which is what the H100 does where its compiler cannot pair elements
        # (a stride known only at run time, as ggml's): recorded, not compared
        cmp = {2: "-"} if soff % 2 else None
        g.add((1, 1, 1), {0: x, 1: np.zeros(256, np.float32), 2: z, 3: np.zeros(256, np.float32), 4: v},
              push=np.array([R, C, poff, soff, roff, coff], np.uint32), cmp=cmp,
              note=f"R,C={R},{C} poff={poff} soff={soff} slice=({roff},{coff})")
    # run with VKRUN_ROBUST=2 (robustBufferAccess and robustBufferAccess2 enabled)
    g = group("portability_robust", sh + "robust_access.spv", options={"robust_buffer_access": True})
    for first in (0, 32, 60):
        g.add((2, 1, 1), {0: (np.arange(64) + 1).astype(np.uint32), 1: np.full(64, SENTINEL, np.uint32),
                          2: np.zeros(64, np.uint32), 3: np.zeros(128, np.uint32)},
              push=np.array([first], np.uint32), note=f"first={first} (64-element bindings)")


def build_all():
    GROUPS.clear()
    PROBES.clear()
    apps()
    tensor()
    decode()
    khr()
    portability()
    GROUPS.extend(PROBES)
    names = [g.name for g in GROUPS]
    assert len(names) == len(set(names)), "group names must be unique"
    return GROUPS


# ------------------------------------------------------------------------------------------------
# write: manifests and inputs for tools/vkrun
# ------------------------------------------------------------------------------------------------

def write(out=ROOT / "build" / "h100", only=""):
    """The cases of every group (of the groups whose names start with `only`)."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    cases = out / "cases"
    cases.mkdir(parents=True)
    index = []
    for g in build_all():
        if not g.name.startswith(only):
            continue
        gd = cases / g.name
        gd.mkdir()
        shutil.copy(ROOT / g.spv, gd / "shader.spv")
        lines = []
        for i, d in enumerate(g.dispatches):
            lines += [f"case {g.name}.{i}", "spv shader.spv"]
            lines += [f"spec {k} {v & U32}" for k, v in sorted(g.spec.items())]
            lines.append("groups %d %d %d" % d["groups"])
            if d["push"] is not None:
                (gd / f"d{i}_push.bin").write_bytes(d["push"].tobytes())
                lines.append(f"push d{i}_push.bin")
            for b, a in d["bindings"].items():
                (gd / f"d{i}_in{b}.bin").write_bytes(a.tobytes())
                lines.append(f"bind {b} 0 d{i}_in{b}.bin d{i}_out{b}.bin")
        (gd / "manifest.txt").write_text("\n".join(lines) + "\n")
        index.append(dict(name=g.name, dispatches=len(g.dispatches)))
    (out / "all.json").write_text(json.dumps(index, indent=1))
    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"{len(index)} groups, {sum(x['dispatches'] for x in index)} dispatches, "
          f"{total / 1e6:.2f} MB in {out}")


# ------------------------------------------------------------------------------------------------
# collect: results -> tests/oracle/h100/<group>.npz
# ------------------------------------------------------------------------------------------------

def _keep(g):
    """Dispatches recorded (all of them ran on the GPU): fewer where the oracle would be large."""
    n = len(g.dispatches)
    if g.name == "decode_vecview":
        return [0]
    if g.name in ("decode_2d", "decode_3d"):
        return list(range(min(n, 9)))                  # 3 layouts x 3 selectors
    if g.name.startswith("tensor_2d_lite"):               # 6 random, then extremes and wrap
        return [0, 1, 2, 3] + list(range(6, n))
    if g.name.startswith("tensor_") and g.name[7] in "12345":
        first = min(n, 10 if g.name[7] in "12" else 8)    # the random cases, then the rest
        loads = [i for i in range(first) if g.dispatches[i]["cmp"][0] == "exact"]
        stores = [i for i in range(first) if g.dispatches[i]["cmp"][0] == "store"]
        return loads[:4] + stores[:2] + list(range(first, n))
    if g.name == "portability_tensor":
        # the slice from row 40 reaches past the binding: on the GPU those reads are of whatever
        # memory follows it (no robustness), in jitcoop an out-of-bounds access; not an oracle
        return [i for i, (_, _, _, _, roff, _) in enumerate(TENSOR_RULES) if roff + 16 <= 32 + 512 // 32]
    return list(range(n))


def collect(results, out=ORACLE):
    results, out = Path(results), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for f in out.glob("*.npz"):
        f.unlink()
    missing = []
    for g in build_all():
        keep = _keep(g)
        g.dispatches = [dict(d, src=i) for i, d in enumerate(g.dispatches) if i in keep]
        arrays = {}
        meta = dict(name=g.name, spv=g.spv, spec={str(k): v for k, v in g.spec.items()},
                    options=g.options, profile=g.profile, dispatches=[])
        ok = True
        seen = {}
        for i, d in enumerate(g.dispatches):
            dm = dict(groups=list(d["groups"]), note=d["note"], bindings=[])
            if d["push"] is not None:
                arrays[f"d{i}_push"] = d["push"]
            for b, a in d["bindings"].items():
                f = results / g.name / f"d{d['src']}_out{b}.bin"
                if not f.exists():
                    ok = False
                    break
                gpu = np.frombuffer(f.read_bytes(), np.uint8)
                src = a.view(np.uint8)
                assert gpu.size == src.size, (g.name, i, b, gpu.size, src.size)
                for (j, bb), prev in seen.items():      # the same input as an earlier one
                    if prev.dtype == a.dtype and prev.shape == a.shape and np.array_equal(
                            prev.view(np.uint8), a.view(np.uint8)):
                        arrays[f"d{i}_ref{b}"] = np.array([j, bb])
                        break
                else:
                    arrays[f"d{i}_in{b}"] = a
                    seen[i, b] = a
                arrays[f"d{i}_gx{b}"] = gpu ^ src
                if b in d["multi"]:
                    arrays[f"d{i}_multi{b}"] = d["multi"][b]
                dm["bindings"].append([b, a.dtype.str, int(a.nbytes), d["cmp"][b]])
            if not ok:
                break
            meta["dispatches"].append(dm)
        if not ok:
            missing.append(g.name)
            continue
        arrays["meta"] = np.array(json.dumps(meta))
        np.savez_compressed(out / f"{g.name}.npz", **arrays)
    total = sum(f.stat().st_size for f in out.glob("*.npz"))
    print(f"wrote {len(GROUPS) - len(missing)} groups ({total / 1e6:.2f} MB) to {out}")
    if missing:
        print("no GPU result (the driver refused or the run failed):", " ".join(missing))
    return missing


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "write"
    if cmd == "write":
        write(*sys.argv[2:4])
    elif cmd == "collect":
        collect(*sys.argv[2:4])
    else:
        sys.exit(__doc__)
