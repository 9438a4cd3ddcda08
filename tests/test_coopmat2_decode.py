"""SPV_NV_cooperative_matrix2 DecodeFunc and SPV_NV_cooperative_matrix_decode_vector
DecodeVectorFunc on OpCooperativeMatrixLoadTensorNV, against the reference of
test_coopmat2_tensor.py (the seed's addressing pseudo-code): the decode function receives
Pointer + index x sizeof(its pointee type), blockCoord and coordInBlock of each element.

Shaders: tests/shaders/coopmat2/decode_nd.comp (DecodeFunc reading its block through the pointer,
another storage buffer, a workgroup array written before a barrier and a Private variable) and
decode_vec.comp (scalar + vector decode functions, V = 2, 4, 8; the vector one can add a marker to
tell which function decoded an element, or a planted disagreement for decode_vector="check").
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitcoop
from conftest import SHADERS
from test_coopmat2_tensor import (CLAMPED, CONSTANT, HYP, M, N, REPEAT, SKIP, U32, Layout, View,
                                  element_map, max_index)

_KERNELS = {}


def kernel(name, spec=None, **options):
    key = (name, tuple(sorted((spec or {}).items())), tuple(sorted(options.items())))
    if key not in _KERNELS:
        dev = jitcoop.Device("generic")
        _KERNELS[key] = dev.load(SHADERS / "coopmat2" / f"{name}.spv").kernel(spec=spec or {},
                                                                             **options)
    return _KERNELS[key]


# ---------------------------------------------------------------------------------------------
# decode_nd.comp
# ---------------------------------------------------------------------------------------------

BS, DIMS, OFF, SPAN, VDIM, VSTR, CLIP = 8, 13, 18, 23, 28, 33, 38
VIEW = {2: (3, [1, 2, 0]), 3: (2, [1, 0])}            # the view type per DIM: (VDim, permutation)
DECODE_KERNELS = {2: dict(clamp=CONSTANT, blk=3), 3: dict(clamp=REPEAT, blk=2)}


def decode_params(c):
    p = np.zeros(42, np.uint32)
    p[0], p[1], p[2], p[3] = c["site"], c["base"], c["clamp_value"], c["priv"]
    for at, vals in ((BS, c["block"]), (DIMS, c["dims"]), (OFF, c["off"]), (SPAN, c["span"]),
                     (VDIM, c["vdim"]), (VSTR, c["vstride"]), (CLIP, c["clip"])):
        for i, x in enumerate(vals):
            p[at + i] = x & U32
    return p


def decode_layout_view(c, D, clamp):
    t = Layout(D, clamp).set_block_size(*c["block"]).set_dimension(*c["dims"])
    t.slice(*[x for pair in zip(c["off"], c["span"]) for x in pair]).set_clamp_value(c["clamp_value"])
    v = None
    if c["site"] == 1:
        VD, perm = VIEW[D]
        v = View(VD, True, perm).set_dimension(*c["vdim"]).set_stride(*c["vstride"])
        v.set_clip(*c["clip"])
    return t, v


def ref_decode(emap, D, blk, base, words, sel, priv, wsrc, obj, clamp_value):
    out = obj.copy()
    for (r, col), e in emap.items():
        if e is SKIP:
            continue
        if e is CLAMPED:
            out[r, col] = clamp_value
            continue
        index, bc, cib = e
        ptr = base + index * blk                      # Pointer + index * sizeof(Blk), in words
        if sel == 0:
            val = int(words[ptr]) ^ ((int(words[ptr + blk - 1]) << 5) & U32)
        else:
            val = 0
            for d in range(D):
                val |= (bc[d] if sel == 1 else cib[d]) << (10 * d)
            if sel == 2:
                val ^= priv ^ int(wsrc[(bc[0] * 7 + bc[D - 1]) & 31])
        out[r, col] = val & U32
    return out


@st.composite
def decode_cases(draw, D):
    maxd = 40 if D == 2 else 12
    dims = [draw(st.integers(1, maxd)) for _ in range(D)]
    VD = VIEW[D][0]
    side = lambda n: st.one_of(st.integers(0, n + 1), st.just(U32))
    return dict(
        site=draw(st.integers(0, 1)), base=4 * draw(st.integers(0, 2)),
        clamp_value=draw(st.integers(0, U32)), priv=draw(st.integers(0, U32)),
        block=[draw(st.integers(1, 4)) for _ in range(D)], dims=dims,
        off=[draw(st.integers(-d - 2, d + 2)) for d in dims],
        span=[draw(st.integers(1, d + 3)) for d in dims],
        vdim=[draw(st.integers(1, 6)) for _ in range(VD)],
        vstride=[draw(st.integers(0, 12)) for _ in range(VD)],
        clip=(draw(st.integers(0, M)), draw(side(M)), draw(st.integers(0, N)), draw(side(N))))


@pytest.mark.parametrize("D", [2, 3])
def test_decode_func(D):
    """Pointer (element index x sizeof(Blk), Blk holding a spec-constant number of words),
    blockCoord, coordInBlock; the decode function also reads another storage buffer, a workgroup
    array staged before a barrier and a Private variable; with and without a view; Constant-clamped
    elements are the clamp value, clipped ones keep Object."""
    cfg = DECODE_KERNELS[D]
    blk = cfg["blk"]
    k = kernel(f"decode_{D}d", {0: cfg["clamp"], 1: blk})
    rng = np.random.default_rng(D)

    @settings(max_examples=30, **HYP)
    @given(decode_cases(D))
    def inner(c):
        t, v = decode_layout_view(c, D, cfg["clamp"])
        emap = element_map(t, v, M, N)
        words = rng.integers(0, 1 << 32, c["base"] + (max_index(emap) + 1) * blk + 2,
                             dtype=np.uint32)
        wsrc = rng.integers(0, 1 << 32, 32, dtype=np.uint32)
        obj = rng.integers(0, 1 << 32, (M, N), dtype=np.uint32)
        for sel in range(3):
            o = obj.copy()
            k.dispatch((1, 1, 1), {0: words, 1: o.reshape(-1), 2: decode_params(c),
                                   3: np.array([sel], np.uint32), 4: wsrc})
            want = ref_decode(emap, D, blk, c["base"], words, sel, c["priv"], wsrc, obj,
                              c["clamp_value"])
            np.testing.assert_array_equal(o, want, err_msg=f"sel={sel} {c}")
    inner()


def test_decode_pointer_stride_follows_spec_constant():
    """The same module specialized with Blk of 1 and of 3 words: the pointer advances by the
    pointee size, not by the component size."""
    c = dict(site=0, base=0, clamp_value=0, priv=0, block=[1, 2], dims=[M, N], off=[0, 0],
             span=[M, N], vdim=[1, 1, 1], vstride=[0, 0, 0], clip=(0, U32, 0, U32))
    words = np.arange(4 * M * N, dtype=np.uint32)
    for blk in (1, 3):
        k = kernel("decode_2d", {0: CONSTANT, 1: blk})
        o = np.zeros((M, N), np.uint32)
        k.dispatch((1, 1, 1), {0: words, 1: o.reshape(-1), 2: decode_params(c),
                               3: np.zeros(1, np.uint32), 4: np.zeros(32, np.uint32)})
        r, col = np.mgrid[0:M, 0:N]
        ptr = (r * (N // 2) + col // 2) * blk
        np.testing.assert_array_equal(o, ptr ^ ((ptr + blk - 1) << 5))


def test_decode_3d_set_dimension_strides_round_blocks_up():
    """The decode_3d case the H100 answers differently: dims (12, 2, 11), blocks (1, 2, 2) at
    SetDimension give strides (6, 6, 1): stride[1] = ceiling(11 / 2), stride[0] = 6 x ceiling(2 / 2)
    (SPV_NV_tensor_addressing); the H100 uses 11 / 2 = 5 (tests/oracle/h100/README.md). Span
    (16, 1, 32) under Repeat: element (r, c) has blockCoord (r mod 12, 0, (c mod 11) / 2),
    coordInBlock (0, 0, (c mod 11) mod 2) and Pointer + (6 (r mod 12) + (c mod 11) / 2) x
    sizeof(Blk) (2 words)."""
    k = kernel("decode_3d", {0: REPEAT, 1: 2})
    c = dict(site=0, base=4, clamp_value=0, priv=0, block=[1, 2, 2], dims=[12, 2, 11],
             off=[0, 0, 0], span=[M, 1, N], vdim=[1, 1], vstride=[0, 0], clip=(0, U32, 0, U32))
    words = np.arange(4 + 2 * 72 + 2, dtype=np.uint32)
    r, col = np.mgrid[0:M, 0:N]
    bc0, bc2, cib2 = r % 12, (col % 11) // 2, (col % 11) % 2
    ptr = 4 + 2 * (6 * bc0 + bc2)
    want = {0: ptr ^ ((ptr + 1) << 5), 1: bc0 | (bc2 << 20), 2: cib2 << 20}
    for sel in (0, 1, 2):
        o = np.zeros((M, N), np.uint32)
        k.dispatch((1, 1, 1), {0: words, 1: o.reshape(-1), 2: decode_params(c),
                               3: np.array([sel], np.uint32), 4: np.zeros(32, np.uint32)})
        np.testing.assert_array_equal(o, want[sel], err_msg=f"sel={sel}")


# ---------------------------------------------------------------------------------------------
# decode_vec.comp: DecodeVectorFunc and the decode_vector kernel option
# ---------------------------------------------------------------------------------------------

def vec_shader(V):
    return f"decode_vec{V}"       # V = 8: glslang declares LongVectorEXT for vector<uint, 8>


def f(w, b0, b1, c0, c1):
    return (w * 3 + b0 * 1000003 + b1 * 7919 + c0 * 131 + c1) & U32


def vec_layout(c):
    t = Layout(2, 0).set_block_size(*c["block"]).set_dimension(*c["dims"])
    return t.slice(c["off"][0], c["span"][0], c["off"][1], c["span"][1])


def vec_run(k, c, words, marker=0, plant=None):
    """plant: (delta, component, bc0, bc1, cib0, cib1 of the group's first element)."""
    pl = np.zeros(7, np.uint32)
    if plant is not None:
        pl[:6] = plant
    pl[6] = marker
    p = np.array([c["base"], *c["block"], *c["dims"], c["off"][0], c["span"][0], c["off"][1],
                  c["span"][1]], np.uint32)
    o = np.zeros((M, N), np.uint32)
    k.dispatch((1, 1, 1), {0: words, 1: o.reshape(-1), 2: p, 3: pl})
    return o


def vec_ref(c, words):
    emap = element_map(vec_layout(c), None, M, N)
    out = np.zeros((M, N), np.uint32)
    for (r, col), (index, bc, cib) in emap.items():
        out[r, col] = f(int(words[c["base"] + index]), bc[0], bc[1], cib[0], cib[1])
    return out, emap


@st.composite
def vec_cases(draw, V, aligned):
    """In-range layouts (clamp mode Undefined) with blockSize[1] a multiple of V. aligned: every
    V-group of the span lies inside the matrix (span[1] = N, offset[1] a multiple of V)."""
    b1 = V * draw(st.integers(1, 3))
    b0 = draw(st.integers(1, 3))
    if aligned:
        d1 = draw(st.integers(N, 64))
        o1 = V * draw(st.integers(0, (d1 - N) // V))
        s1 = N
    else:
        d1 = draw(st.integers(1, 64))
        o1 = draw(st.integers(0, d1 - 1))
        s1 = draw(st.integers(1, d1 - o1))
    d0 = draw(st.integers(1, 24))
    o0 = draw(st.integers(0, d0 - 1))
    s0 = draw(st.integers(1, d0 - o0))
    return dict(base=4 * draw(st.integers(0, 2)), block=[b0, b1], dims=[d0, d1], off=[o0, o1],
                span=[s0, s1])


def _words(rng, c, emap):
    size = c["base"] + max(e[0] for e in emap.values()) + 1
    return rng.integers(0, 1 << 20, size + 3, dtype=np.uint32)


VEC_OPTIONS = [(2, "scalar"), (2, "vector"), (2, "check"), (2, "auto"), (4, "vector"),
               (4, "check"), (8, "vector"), (8, "check"), (8, "auto")]


@pytest.mark.parametrize("V,mode", VEC_OPTIONS, ids=[f"V{v}-{m}" for v, m in VEC_OPTIONS])
def test_decode_vector_paths(V, mode):
    """Each element is decoded by DecodeFunc or by DecodeVectorFunc called with the group's first
    element (component i -> coordInBlock[LDim-1] + i): the value is f(...) or f(...) + marker.
    "scalar" never uses the vector function; "vector" uses it for every complete group."""
    k = kernel(vec_shader(V), decode_vector=mode)
    rng = np.random.default_rng(V)
    marker = 0 if mode == "check" else 1000

    @settings(max_examples=25, **HYP)
    @given(st.booleans().flatmap(lambda a: st.tuples(st.just(a), vec_cases(V, a))))
    def inner(ac):
        aligned, c = ac
        words = _words(rng, c, element_map(vec_layout(c), None, M, N))
        ref, _ = vec_ref(c, words)
        got = vec_run(k, c, words, marker)
        marked = got == ref + np.uint32(marker)
        assert np.all(marked | (got == ref)), (c, np.argwhere(~(marked | (got == ref)))[:4])
        if mode == "scalar":
            assert not marked.any()
        elif mode == "vector" and aligned:
            assert marked.all(), (c, np.argwhere(~marked)[:4])
    inner()


@pytest.mark.parametrize("V", [2, 4, 8])
def test_decode_vector_check_names_disagreement(V):
    """decode_vector="check" runs both functions; a component that disagrees is an ExecutionError
    naming the instruction and the element."""
    k = kernel(vec_shader(V), decode_vector="check")
    rng = np.random.default_rng(10 + V)
    c = dict(base=4, block=[2, 2 * V], dims=[20, 48], off=[3, V], span=[M, N])
    words = _words(rng, c, element_map(vec_layout(c), None, M, N))
    ref, emap = vec_ref(c, words)
    np.testing.assert_array_equal(vec_run(k, c, words), ref)     # agreeing functions: fine
    for r, col in [(5, 7), (15, 31)]:
        index, bc, cib = emap[r, col]
        v0 = cib[1] - cib[1] % V
        plant = (1, cib[1] - v0, bc[0], bc[1], cib[0], v0)
        words0 = words.copy()
        with pytest.raises(jitcoop.ExecutionError) as ei:
            vec_run(k, c, words, plant=plant)
        e = ei.value
        assert e.opname == "OpCooperativeMatrixLoadTensorNV" and isinstance(e.result_id, int)
        assert isinstance(e.offset, int) and e.lane is not None
        assert tuple(e.workgroup) == (0, 0, 0)
        nums = [int(x) for x in re.findall(r"\d+", e.detail)]
        assert r in nums and col in nums, (r, col, str(e))
        np.testing.assert_array_equal(words, words0)


@pytest.mark.parametrize("V,mode", [(2, "vector"), (4, "check"), (8, "vector"), (8, "check")])
def test_decode_vector_block_not_multiple_of_v(V, mode):
    """blockSize[LDim-1] not a multiple of V: an ExecutionError when the vector path is forced."""
    k = kernel(vec_shader(V), decode_vector=mode)
    c = dict(base=0, block=[1, V + 1 if V > 2 else 3], dims=[16, 64], off=[0, 0], span=[M, N])
    words = np.arange(1000, dtype=np.uint32)
    with pytest.raises(jitcoop.ExecutionError) as ei:
        vec_run(k, c, words)
    assert ei.value.opname == "OpCooperativeMatrixLoadTensorNV"


@pytest.mark.parametrize("V", [2, 8])
def test_decode_vector_auto_falls_back_to_scalar(V):
    k = kernel(vec_shader(V), decode_vector="auto")
    c = dict(base=0, block=[1, V + 1 if V > 2 else 3], dims=[16, 64], off=[0, 0], span=[M, N])
    words = np.arange(1000, dtype=np.uint32) * 5
    ref, _ = vec_ref(c, words)
    np.testing.assert_array_equal(vec_run(k, c, words, marker=1000), ref)


def test_decode_vector_instruction_encoding():
    """Fact sheet 4.1: the load with DecodeFunc|DecodeVectorFunc is 10 words, 0x000A14F7, ...,
    None (0x0), 0x6, %dec, %decv."""
    words = np.fromfile(SHADERS / "coopmat2" / "decode_vec4.spv", dtype=np.uint32)
    i = 5
    found = []
    while i < len(words):
        n = int(words[i]) >> 16
        if int(words[i]) == 0x000A14F7:
            found.append(words[i:i + n])
        i += n
    assert len(found) == 1 and found[0][6] == 0 and found[0][7] == 6


def test_decode_vector_option_is_validated():
    with pytest.raises((ValueError, jitcoop.JitcoopError)):
        jitcoop.Device("generic").load(SHADERS / "coopmat2" / "decode_vec2.spv").kernel(
            decode_vector="sometimes")


def test_decode_vector_long_vector_capability():
    """V = 8 needs an 8-component vector, which Vulkan GLSL/SPIR-V spell with GL_EXT_long_vector /
    the LongVectorEXT capability (glslang's own coopmat2_decode_vector test does the same)."""
    k = kernel("decode_vec8", decode_vector="vector")
    c = dict(base=0, block=[1, 8], dims=[16, 32], off=[0, 0], span=[M, N])
    words = np.arange(600, dtype=np.uint32)
    ref, _ = vec_ref(c, words)
    np.testing.assert_array_equal(vec_run(k, c, words, marker=7), ref + np.uint32(7))


# ---------------------------------------------------------------------------------------------
# decode_q4.comp: 4-bit weights, per-block scales staged in shared memory, several workgroups
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("R,C,row0,col0", [(64, 32, 0, 0), (32, 64, 3, 32), (40, 32, 7, 0)])
def test_decode_q4_shared_scales(R, C, row0, col0):
    """Each workgroup stages its own 64 scales in shared memory before a barrier; the decode
    function reads its block's 16 bytes through the pointer and the scale from shared memory."""
    k = kernel("decode_q4")
    rng = np.random.default_rng(R + C + row0)
    groups = (R - row0) // 16
    q = rng.integers(0, 256, R * C // 2, dtype=np.uint8)
    scales = rng.uniform(-2, 2, 64 * groups).astype(np.float32)
    o = np.zeros(512 * groups, np.float32)
    k.dispatch((groups, 1, 1), {0: q, 1: scales, 2: o,
                                3: np.array([R, C, row0, col0], np.uint32)})
    nib = np.stack([q & 15, q >> 4], axis=-1).reshape(R, C).astype(np.float32) - 8
    for wg in range(groups):
        sc = scales[wg * 64:(wg + 1) * 64]
        want = np.zeros((16, 32), np.float32)
        for r in range(16):
            for c in range(32):
                tr, tc = row0 + 16 * wg + r, col0 + c
                want[r, c] = np.float32(nib[tr, tc] * sc[tr * (C // 32) + tc // 32])
        np.testing.assert_array_equal(o[wg * 512:(wg + 1) * 512].reshape(16, 32), want)


def test_disassembly_shows_tensor_addressing_operands():
    """jitcoop's disassembler reads the two masks and the three extra ids of the load."""
    text = jitcoop.Device("generic").load(SHADERS / "coopmat2" / "decode_vec4.spv").disassemble()
    line = next(ln for ln in text.splitlines() if "OpCooperativeMatrixLoadTensorNV" in ln)
    assert re.search(r"None DecodeFunc\|DecodeVectorFunc %\w+ %\w+\s*$", line), line
    text = jitcoop.Device("generic").load(SHADERS / "coopmat2" / "decode_2d.spv").disassemble()
    lines = [ln for ln in text.splitlines() if "OpCooperativeMatrixLoadTensorNV" in ln]
    assert any(re.search(r"None TensorView\|DecodeFunc %\w+ %\w+\s*$", ln) for ln in lines), lines


# ---------------------------------------------------------------------------------------------
# decode_vecview.comp: vector decode of a 64 x 64 matrix (2048 V-groups) through views
# ---------------------------------------------------------------------------------------------

@st.composite
def vecview_cases(draw):
    b1 = 2 * draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 80)), draw(st.integers(1, 80))]
    off = [draw(st.integers(0, d - 1)) for d in dims]
    span = [draw(st.integers(1, d - o)) for d, o in zip(dims, off)]
    side = lambda n: st.one_of(st.integers(0, n + 1), st.just(U32))
    return dict(site=draw(st.integers(0, 2)), base=4 * draw(st.integers(0, 2)),
                block=[draw(st.integers(1, 3)), b1], dims=dims, off=off, span=span,
                vdim=[draw(st.integers(1, 9)) for _ in range(3)],
                vstride=[draw(st.integers(0, 20)) for _ in range(3)],
                clip=(draw(st.integers(0, 64)), draw(side(64)), draw(st.integers(0, 64)),
                      draw(side(64))))


def vecview_ref(c, words, obj):
    t = vec_layout(c)
    v = None
    if c["site"] == 1:
        v = View(2, False, [1, 0])
    elif c["site"] == 2:
        v = View(3, True, [2, 0, 1]).set_dimension(*c["vdim"]).set_stride(*c["vstride"])
        v.set_clip(*c["clip"])
    emap = element_map(t, v, 64, 64)
    out = obj.copy()
    for (r, col), e in emap.items():
        if e is not SKIP:
            index, bc, cib = e
            out[r, col] = f(int(words[c["base"] + index]), bc[0], bc[1], cib[0], cib[1])
    return out, emap


@pytest.mark.parametrize("mode", ["vector", "check"])
def test_decode_vector_through_views(mode):
    """A transposing view and a permuting view with clipping: V-groups are made of tensor
    coordinates, whatever matrix elements they land on; more groups than fit a small cache."""
    k = kernel("decode_vecview", decode_vector=mode)
    rng = np.random.default_rng(77)
    marker = 0 if mode == "check" else 1000

    @settings(max_examples=20, **HYP)
    @given(vecview_cases())
    def inner(c):
        obj = rng.integers(0, 1 << 32, (64, 64), dtype=np.uint32)
        words = rng.integers(0, 1 << 20, c["base"] + 80 * 80 + 4, dtype=np.uint32)
        ref, emap = vecview_ref(c, words, obj)
        p = np.array([c["base"], *c["block"], *c["dims"], c["off"][0], c["span"][0], c["off"][1],
                      c["span"][1], c["site"], *c["vdim"], *c["vstride"], *c["clip"]], np.uint32)
        pl = np.zeros(7, np.uint32)
        pl[6] = marker
        o = obj.copy()
        k.dispatch((1, 1, 1), {0: words, 1: o.reshape(-1), 2: p, 3: pl})
        skip = np.zeros((64, 64), bool)
        for (r, col), e in emap.items():
            skip[r, col] = e is SKIP
        marked = (o == ref + np.uint32(marker)) & ~skip
        ok = marked | (o == ref)
        assert ok.all(), (c, np.argwhere(~ok)[:4])
    inner()


# ---------------------------------------------------------------------------------------------
# decode_lanes.comp: the DecodeFunc's vector form, 16 columns at a time
# ---------------------------------------------------------------------------------------------

def _decode_lanes(q, R, split, row0, **dispatch):
    o = np.full(16 * 64, -7.0, np.float32)
    kernel("decode_lanes").dispatch((1, 1, 1), {0: q, 1: o}, push=np.array([R, 64, split, row0], np.uint32),
                                    **dispatch)
    return o.reshape(16, 64)


@pytest.mark.parametrize("split", [0, 16, 32, 5, 21])
@pytest.mark.parametrize("row0", [0, 3])
def test_decode_vector_form_takes_the_scalar_values(split, row0):
    """Columns whose branch is the same for 16 of them (split 0, 16, 32) and ones it parts (5, 21),
    against numpy written from the GLSL, unprofiled (the vector form) and profiled (the scalar
    DecodeFunc on every element, the reference the vector form must equal)."""
    R = 24
    q = np.random.default_rng(split + row0).integers(0, 256, R * 64, dtype=np.uint8)
    r = np.arange(16)[:, None] + row0
    c = np.arange(64)[None, :]
    x = q.reshape(R, 64)[row0:row0 + 16].astype(np.float32)
    want = np.where(c % 32 >= split, x * 2 + r, x - c // 32).astype(np.float32)
    np.testing.assert_array_equal(_decode_lanes(q, R, split, row0), want)
    np.testing.assert_array_equal(_decode_lanes(q, R, split, row0, profile=True), want)


def test_decode_vector_form_failure_is_the_scalar_decodes():
    """A buffer that ends inside the slice's last block: the vector form's 16 columns that reach
    past it fall back to the scalar DecodeFunc, which fails at the first element that reads out
    of bounds; the report is the scalar code's (the same as profiled, which never takes the
    vector form) and the output is untouched."""
    R, row0 = 16, 0
    q = np.zeros(R * 64 - 12, np.uint8)         # the last block's bytes 20 .. 31 are missing
    errors = []
    for profile in (False, True):
        o = np.full(16 * 64, -7.0, np.float32)
        with pytest.raises(jitcoop.ExecutionError) as e:
            kernel("decode_lanes").dispatch((1, 1, 1), {0: q, 1: o}, push=np.array([R, 64, 0, row0], np.uint32),
                                            profile=profile)
        assert (o == -7.0).all()
        errors.append(e.value)
    fast, slow = errors
    # the first element past the end in the scalar order: row 15, block 1, byte 20 (15 x 64 + 32 + 20)
    assert "OpLoad" in str(fast) and "byte offset 1012 " in str(fast), str(fast)
    assert (fast.lane, fast.workgroup, str(fast).splitlines()[0]) == (slow.lane, slow.workgroup, str(slow).splitlines()[0])
