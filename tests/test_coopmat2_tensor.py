"""SPV_NV_cooperative_matrix2 / SPV_NV_tensor_addressing: OpCooperativeMatrixLoadTensorNV and
OpCooperativeMatrixStoreTensorNV addressing, checked against a reference written from the seed's
pseudo-code (shared/seeds/SPV_NV_cooperative_matrix2.txt) and the instruction fact sheet
(shared/spec/coopmat2-instructions.md: state defaults, the order rules of the OpTensorLayout* and
OpTensorView* instructions, and the corrected RepeatMirrored formula).

The shaders (tests/shaders/coopmat2/tensor_nd.comp) read every layout and view parameter at run
time from a uint buffer, so one compiled kernel per dimension count and clamp mode serves every
hypothesis example. The clamp mode is a specialization constant.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import jitcoop
from conftest import SHADERS

U32 = 0xFFFFFFFF
M, N = 16, 32                       # the matrix of tensor_nd.comp
UNDEFINED, CONSTANT, CLAMP_TO_EDGE, REPEAT, REPEAT_MIRRORED = range(5)
CLAMP_NAMES = ["Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored"]

HYP = dict(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck),
           print_blob=True)


# ---------------------------------------------------------------------------------------------
# Reference: the logical state of tensor layouts and views, and the seed's addressing functions.
# ---------------------------------------------------------------------------------------------

def i32(x):
    x &= U32
    return x - (1 << 32) if x & 0x80000000 else x


class Layout:
    """tensorLayoutNV<D, clampMode>: OpCreateTensorLayoutNV and the OpTensorLayout* updates."""

    # OpTensorLayoutSetDimensionNV packs stride[i] = stride[i+1] * ceiling(Dim<i+1> / blockSize[i+1])
    # (SPV_NV_tensor_addressing). The H100 truncates instead (tests/oracle/h100/README.md); only
    # test_h100_recorded sets this False, to check that claim against the recorded bytes.
    round_up = True

    def __init__(self, D, clamp):
        self.D, self.clamp = D, clamp
        self.block = [1] * D
        self.dim = [0] * D
        self.stride = [0] * D
        self.offset = [0] * D
        self.span = [0] * D
        self.clamp_value = 0

    def set_block_size(self, *b):
        assert len(b) == self.D
        self.block = [x & U32 for x in b]
        return self

    def set_dimension(self, *d):
        assert len(d) == self.D
        self.dim = [x & U32 for x in d]
        self.span = list(self.dim)
        self.offset = [0] * self.D
        self.stride[self.D - 1] = 1
        for i in range(self.D - 2, -1, -1):
            d, b = self.dim[i + 1], self.block[i + 1]
            self.stride[i] = (self.stride[i + 1] * (-(-d // b) if self.round_up else d // b)) & U32
        return self

    def set_stride(self, *s):
        assert len(s) == self.D
        self.stride = [x & U32 for x in s]
        return self

    def slice(self, *pairs):
        assert len(pairs) == 2 * self.D
        for i in range(self.D):
            self.offset[i] = i32(self.offset[i] + pairs[2 * i])
            self.span[i] = pairs[2 * i + 1] & U32
        return self

    def set_clamp_value(self, v):
        self.clamp_value = v & U32
        return self


class View:
    """tensorViewNV<D, hasDimensions, p0..>: OpCreateTensorViewNV and the OpTensorView* updates."""

    def __init__(self, D, has_dims, perm):
        assert sorted(perm) == list(range(D))
        self.D, self.has_dims, self.perm = D, has_dims, list(perm)
        self.dim = [0] * D
        self.stride = [0] * D
        self.clip = (0, U32, 0, U32)

    def set_dimension(self, *d):
        self.dim = [x & U32 for x in d]
        self.stride = [math.prod(self.dim[i + 1:]) & U32 for i in range(self.D)]
        return self

    def set_stride(self, *s):
        self.stride = [x & U32 for x in s]
        return self

    def set_clip(self, ro, rs, co, cs):
        self.clip = (ro & U32, rs & U32, co & U32, cs & U32)
        return self


SKIP = "skip"          # clipped by the view: a load keeps Object's element, a store writes nothing
CLAMPED = "clamped"    # Constant clamping: a load yields the clamp value, a store writes nothing


class Undefined(Exception):
    """An element outside the layout with clamp mode Undefined."""


def repeat_mirrored(c, D):
    """The fact sheet's corrected formula (not the seed's, which compares with the loop index)."""
    if D == 1:
        return 0
    c %= 2 * D - 2                       # OpSMod: the result has the sign of the divisor
    return 2 * D - 2 - c if c >= D else c


def element(t: Layout, v: View | None, row, col, cols, store=False, wrap=True, unclamped=False):
    """matrixCoordToTensorElement(WithView) for one matrix element: SKIP, CLAMPED or
    (index, blockCoord, coordInBlock). Raises Undefined for Undefined-mode out-of-range, unless
    `unclamped`: then the coordinate is used as it is (as 32-bit unsigned arithmetic takes it),
    which is what the H100 does (jitcoop.diagnostics, tests/test_portability.py).
    wrap=False: c = spanCoord + offset without the int32 wrap of the pseudo-code (only used to
    find the examples whose answer depends on that wrap)."""
    if v is not None:
        ro, rs, co, cs = v.clip
        # evaluated without 32-bit wrap: the default span 0xFFFFFFFF plus an offset must not wrap
        if row < ro or row >= ro + rs or col < co or col >= co + cs:
            return SKIP
        row -= ro
        col -= co
        width = min(cols, cs)
        lin = (row * width + col) & U32
        dims = v.dim if v.has_dims else t.span
        vc = [0] * v.D
        for d in range(v.D - 1, -1, -1):
            i = v.perm[d]
            vc[i] = lin % dims[i]
            lin //= dims[i]
        if v.has_dims:
            stride = v.stride
        else:
            stride = [0] * v.D
            stride[v.D - 1] = 1
            for d in range(v.D - 2, -1, -1):
                stride[d] = stride[d + 1] * t.span[d + 1]
        lin = sum(vc[d] * stride[d] for d in range(v.D)) & U32
    else:
        lin = (row * cols + col) & U32
    span_coord = [0] * t.D
    for d in range(t.D - 1, -1, -1):
        span_coord[d] = lin % t.span[d]
        lin //= t.span[d]
    bc, cib = [0] * t.D, [0] * t.D
    for d in range(t.D):
        c = i32(span_coord[d] + t.offset[d]) if wrap else span_coord[d] + t.offset[d]
        D = t.dim[d]
        if c < 0 or c >= D:
            mode = t.clamp
            if store and mode != UNDEFINED:
                mode = CONSTANT
            if mode == UNDEFINED:
                if not unclamped:
                    raise Undefined((row, col, d, c))
                c &= U32
            elif mode == CONSTANT:
                return CLAMPED
            elif mode == CLAMP_TO_EDGE:
                c = min(max(c, 0), D - 1)
            elif mode == REPEAT:
                c %= D
            else:
                c = repeat_mirrored(c, D)
        cib[d] = c % t.block[d]
        bc[d] = c // t.block[d]
    index = sum(bc[d] * t.stride[d] for d in range(t.D)) & U32
    return index, bc, cib


def element_map(t, v, rows, cols, store=False, wrap=True, unclamped=False):
    """{(row, col): element(...)} for the whole matrix; raises Undefined unless `unclamped`."""
    return {(r, c): element(t, v, r, c, cols, store, wrap, unclamped) for r in range(rows)
            for c in range(cols)}


def ref_load(emap, tensor, obj, base, clamp_bits):
    """The loaded matrix: Object where clipped, the clamp value where Constant-clamped."""
    out = obj.copy()
    for (r, c), e in emap.items():
        if e is CLAMPED:
            out[r, c] = clamp_bits
        elif e is not SKIP:
            out[r, c] = tensor[base + e[0]]
    return out


def ref_store_writes(emap, mat, base):
    """{tensor index: [values written there]} of a store."""
    writes = {}
    for (r, c), e in emap.items():
        if e is not SKIP and e is not CLAMPED:
            writes.setdefault(base + e[0], []).append(mat[r, c])
    return writes


def max_index(emap):
    return max([e[0] for e in emap.values() if e is not SKIP and e is not CLAMPED], default=0)


# ---------------------------------------------------------------------------------------------
# Self-checks of the reference against the texts' worked examples
# ---------------------------------------------------------------------------------------------

def test_reference_column_major_worked_example():
    """Fact sheet section 5: layout (NumCols, NumRows), slice (col0, N, row0, M), view
    (2, false, 1, 0) addresses element (r, c) at (col0 + c) * NumRows + (row0 + r)."""
    num_rows, num_cols, row0, col0, rows, cols = 40, 50, 7, 11, 8, 6
    t = Layout(2, UNDEFINED).set_dimension(num_cols, num_rows).slice(col0, cols, row0, rows)
    v = View(2, False, [1, 0])
    for r in range(rows):
        for c in range(cols):
            assert element(t, v, r, c, cols)[0] == (col0 + c) * num_rows + (row0 + r)


def test_reference_clamp_formulas():
    assert [repeat_mirrored(c, 4) for c in range(-6, 10)] == \
        [0, 1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2, 3]
    assert [repeat_mirrored(c, 1) for c in (-3, 0, 5)] == [0, 0, 0]
    assert [repeat_mirrored(c, 2) for c in range(-2, 4)] == [0, 1, 0, 1, 0, 1]
    t = Layout(1, REPEAT).set_dimension(5).slice(-7, 3)
    assert [element(t, None, 0, c, 3)[0] for c in range(3)] == [3, 4, 0]
    t = Layout(1, CLAMP_TO_EDGE).set_dimension(5).slice(-2, 9)
    assert [element(t, None, 0, c, 9)[0] for c in range(9)] == [0, 0, 0, 1, 2, 3, 4, 4, 4]


# ---------------------------------------------------------------------------------------------
# tensor_nd.comp: parameters, kernels
# ---------------------------------------------------------------------------------------------

P_LEN = 67
BS, DIMS, STR, OFF1, SPAN1, OFF2, SPAN2, BS2, JUNK, VDIM, VSTR, CLIP = \
    8, 13, 18, 23, 28, 33, 38, 43, 48, 53, 58, 63
F_STRIDE, F_BS_AFTER, F_JUNK_SLICE, F_CLIP = 1, 2, 4, 8
LOAD, LOAD_V1, LOAD_V3, STORE, STORE_V1, STORE_V3 = range(6)
# the views of tensor_nd.comp per DIM: v1 = (DIM, false, V1P), v3 = (VD, true, V3P)
V1P = {1: [0], 2: [1, 0], 3: [1, 2, 0], 4: [2, 0, 3, 1], 5: [4, 2, 0, 1, 3]}
V3P = {1: [1, 0], 2: [2, 0, 1], 3: [1, 3, 0, 4, 2], 4: [0], 5: [3, 1, 2, 0]}
MAXDIM = {1: 700, 2: 40, 3: 12, 4: 7, 5: 5}


@dataclass
class Case:
    D: int
    clamp: int
    site: int
    flags: int = 0
    block: list = field(default_factory=list)
    dims: list = field(default_factory=list)
    strides: list = field(default_factory=list)
    off1: list = field(default_factory=list)
    span1: list = field(default_factory=list)
    off2: list = field(default_factory=list)
    span2: list = field(default_factory=list)
    block2: list = field(default_factory=list)
    junk: list = field(default_factory=list)
    vdim: list = field(default_factory=list)
    vstride: list = field(default_factory=list)
    clip: tuple = (0, U32, 0, U32)
    clamp_value: int = 0
    base: int = 0
    base_step: int = 0

    def params(self):
        p = np.zeros(P_LEN, np.uint32)
        p[0], p[1], p[2], p[4], p[5] = self.site, self.flags, self.clamp_value, self.base, \
            self.base_step
        for at, vals in ((BS, self.block), (DIMS, self.dims), (STR, self.strides),
                         (OFF1, self.off1), (SPAN1, self.span1), (OFF2, self.off2),
                         (SPAN2, self.span2), (BS2, self.block2), (JUNK, self.junk),
                         (VDIM, self.vdim), (VSTR, self.vstride), (CLIP, self.clip)):
            for i, x in enumerate(vals):
                p[at + i] = x & U32
        return p

    def layout(self):
        """The layout as tensor_nd.comp builds it, through the reference's state updates."""
        t = Layout(self.D, self.clamp).set_block_size(*self.block)
        if self.flags & F_JUNK_SLICE:
            t.slice(*[x for o in self.junk for x in (o, o)])
        t.set_dimension(*self.dims)
        if self.flags & F_BS_AFTER:
            t.set_block_size(*self.block2)
        if self.flags & F_STRIDE:
            t.set_stride(*self.strides)
        t.slice(*[x for pair in zip(self.off1, self.span1) for x in pair])
        t.slice(*[x for pair in zip(self.off2, self.span2) for x in pair])
        return t.set_clamp_value(self.clamp_value)

    def view(self):
        kind = self.site % 3
        if kind == 0:
            return None
        if kind == 1:
            v = View(self.D, False, V1P[self.D])
        else:
            v = View(len(V3P[self.D]), True, V3P[self.D])
            v.set_dimension(*self.vdim).set_stride(*self.vstride)
        if self.flags & F_CLIP:
            v.set_clip(*self.clip)
        return v

    @property
    def store(self):
        return self.site >= STORE

    @classmethod
    def from_params(cls, D, clamp, p):
        """The Case whose params() are p (tensor_nd.comp's p[] buffer)."""
        p = [int(x) for x in p]
        g = lambda at, n=D: p[at:at + n]
        VD = len(V3P[D])
        return cls(D, clamp, p[0], flags=p[1], clamp_value=p[2], base=p[4], base_step=p[5],
                   block=g(BS), dims=g(DIMS), strides=g(STR), off1=g(OFF1), span1=g(SPAN1),
                   off2=g(OFF2), span2=g(SPAN2), block2=g(BS2), junk=g(JUNK), vdim=g(VDIM, VD),
                   vstride=g(VSTR, VD), clip=tuple(g(CLIP, 4)))


@st.composite
def cases(draw, D, clamp, sites, in_range=None, unit_blocks=None):
    """A random layout (and view) for tensor_nd.comp. in_range: every coordinate inside the
    layout (default: for Undefined). unit_blocks: final block sizes 1 (default: for stores)."""
    site = draw(st.sampled_from(sites))
    store = site >= STORE
    in_range = clamp == UNDEFINED if in_range is None else in_range
    unit_blocks = store if unit_blocks is None else unit_blocks
    c = Case(D, clamp, site)
    small = st.integers(1, 3)
    dims = [draw(st.integers(1, MAXDIM[D])) for _ in range(D)]
    block = [draw(st.sampled_from([1, 1, 1, 2, 3])) for _ in range(D)]
    flags = draw(st.integers(0, 15))
    if unit_blocks:
        if flags & F_BS_AFTER:
            block2 = [1] * D
        else:
            block = [1] * D
            block2 = [draw(small) for _ in range(D)]
    else:
        block2 = [draw(st.sampled_from([1, 1, 2, 3, 4])) for _ in range(D)]
    final_block = block2 if flags & F_BS_AFTER else block
    strides = [0] * D
    strides[D - 1] = draw(small)
    for i in range(D - 2, -1, -1):
        strides[i] = strides[i + 1] * -(-dims[i + 1] // final_block[i + 1]) + draw(st.integers(0, 2))
    off, span = [], []
    for d in dims:
        if in_range:
            o = draw(st.integers(0, d - 1))
            off.append(o)
            span.append(draw(st.integers(1, d - o)))
        else:
            off.append(draw(st.integers(-2 * d - 3, 2 * d + 3)))
            span.append(draw(st.integers(1, d + 3)))
    off1 = [draw(st.integers(-3, 3)) for _ in range(D)]
    c.flags, c.block, c.dims, c.strides, c.block2 = flags, block, dims, strides, block2
    c.off1, c.off2 = off1, [o - o1 for o, o1 in zip(off, off1)]
    c.span1, c.span2 = [draw(st.integers(1, 9)) for _ in range(D)], span
    c.junk = [draw(st.integers(1, 5)) for _ in range(D)]
    VD = len(V3P[D])
    c.vdim = [draw(st.integers(1, 6)) for _ in range(VD)]
    c.vstride = [draw(st.integers(0, 12)) for _ in range(VD)]
    side = lambda n: st.one_of(st.integers(0, n + 1), st.just(U32), st.integers(U32 - 2, U32))
    c.clip = (draw(st.integers(0, M)), draw(side(M)), draw(st.integers(0, N)), draw(side(N)))
    c.clamp_value = draw(st.integers(0, U32))
    c.base = 4 * draw(st.integers(0, 2))           # Pointer 16-byte aligned
    return c


_KERNELS = {}


def tensor_kernel(D, clamp, lite=False, profile="generic", strict=False):
    """strict: the rules the hardware does not enforce are errors (jitcoop.diagnostics)."""
    name = f"tensor_{D}d" + ("_lite" if lite else "")
    key = (name, clamp, profile, strict)
    if key not in _KERNELS:
        dev = jitcoop.Device(profile)
        _KERNELS[key] = dev.load(SHADERS / "coopmat2" / f"{name}.spv").kernel(spec={0: clamp}, strict=strict)
    return _KERNELS[key]


def run_case(k, c, rng, tensor=None, obj=None, grid=(1, 1, 1), unclamped=False):
    """Dispatch case c; returns (tensor, o, emap). For a load, o is the loaded matrix."""
    emap = element_map(c.layout(), c.view(), M, N, c.store, unclamped=unclamped)
    if tensor is None:
        size = c.base + max_index(emap) + 1 + int(rng.integers(0, 4))
        tensor = rng.integers(0, 1 << 32, size, dtype=np.uint32)
    if obj is None:
        obj = rng.integers(0, 1 << 32, (M, N), dtype=np.uint32)
    o = obj.copy()
    k.dispatch(grid, {0: tensor, 1: o.reshape(-1), 2: c.params()})
    return tensor, o, emap


def check_load(k, c, rng, pad=0, unclamped=False):
    """pad: elements more in the tensor past the last one the layout reaches (where addressing
    gone wrong would still be in bounds, and be caught by the values). unclamped: Undefined
    clamping addresses coordinates outside the tensor as they are (see element)."""
    emap = element_map(c.layout(), c.view(), M, N, unclamped=unclamped)
    size = c.base + max_index(emap) + 1 + int(rng.integers(0, 4)) + pad
    tensor0 = rng.integers(0, 1 << 32, size, dtype=np.uint32)
    obj = rng.integers(0, 1 << 32, (M, N), dtype=np.uint32)
    tensor = tensor0.copy()
    _, got, _ = run_case(k, c, rng, tensor, obj, unclamped=unclamped)
    want = ref_load(emap, tensor0, obj, c.base, c.clamp_value)
    np.testing.assert_array_equal(got, want, err_msg=f"{c}")
    np.testing.assert_array_equal(tensor, tensor0, err_msg="a load wrote to the tensor")


def check_store(k, c, rng, pad=0, unclamped=False):
    emap = element_map(c.layout(), c.view(), M, N, store=True, unclamped=unclamped)
    size = c.base + max_index(emap) + 1 + int(rng.integers(0, 4)) + pad
    tensor0 = rng.integers(0, 1 << 32, size, dtype=np.uint32)
    mat = rng.integers(0, 1 << 32, (M, N), dtype=np.uint32)
    tensor = tensor0.copy()
    run_case(k, c, rng, tensor, mat, unclamped=unclamped)
    writes = ref_store_writes(emap, mat, c.base)
    want = tensor0.copy()
    for i, vals in writes.items():
        want[i] = tensor[i] if tensor[i] in vals else vals[0]
    np.testing.assert_array_equal(tensor, want, err_msg=f"{c}")


def assume_defined(c):
    """For Undefined layouts the generator keeps coordinates in range; this re-checks it."""
    element_map(c.layout(), c.view(), M, N, c.store)


# ---------------------------------------------------------------------------------------------
# Random layouts and views in 1 to 5 dimensions
# ---------------------------------------------------------------------------------------------

# (DIM, clamp mode) of the full kernels in the default run: every DIM once, every mode once
FULL = [(1, REPEAT), (2, CONSTANT), (3, REPEAT_MIRRORED), (4, CLAMP_TO_EDGE), (5, UNDEFINED)]
FULL_SLOW = [(D, m) for D in range(1, 6) for m in range(5) if (D, m) not in FULL]


def _ids(dm):
    return f"{dm[0]}d-{CLAMP_NAMES[dm[1]]}"


def _load_test(D, clamp):
    k = tensor_kernel(D, clamp)
    rng = np.random.default_rng(1000 * D + clamp)

    @settings(max_examples=40, **HYP)
    @given(cases(D, clamp, [LOAD, LOAD_V1, LOAD_V3]))
    def inner(c):
        check_load(k, c, rng)
    inner()


def _store_test(D, clamp):
    k = tensor_kernel(D, clamp)
    rng = np.random.default_rng(2000 * D + clamp)

    @settings(max_examples=30, **HYP)
    @given(cases(D, clamp, [STORE, STORE_V1, STORE_V3]))
    def inner(c):
        check_store(k, c, rng)
    inner()


@pytest.mark.parametrize("dm", FULL, ids=_ids)
def test_load_random_layouts(dm):
    _load_test(*dm)


@pytest.mark.parametrize("dm", FULL, ids=_ids)
def test_store_random_layouts(dm):
    _store_test(*dm)


@pytest.mark.slow
@pytest.mark.parametrize("dm", FULL_SLOW, ids=_ids)
def test_load_random_layouts_all_modes(dm):
    _load_test(*dm)


@pytest.mark.slow
@pytest.mark.parametrize("dm", FULL_SLOW, ids=_ids)
def test_store_random_layouts_all_modes(dm):
    _store_test(*dm)


# The other clamp modes in 2-D through tensor_2d_lite.spv (plain load and store, no views: the
# clamp step does not depend on how the span index was made).
LITE_MODES = [UNDEFINED, CLAMP_TO_EDGE, REPEAT, REPEAT_MIRRORED]


@pytest.mark.parametrize("clamp", LITE_MODES, ids=lambda m: CLAMP_NAMES[m])
def test_clamp_modes_2d(clamp):
    k = tensor_kernel(2, clamp, lite=True)
    rng = np.random.default_rng(3000 + clamp)

    @settings(max_examples=40, **HYP)
    @given(cases(2, clamp, [LOAD, STORE]))
    def inner(c):
        (check_store if c.store else check_load)(k, c, rng)
    inner()


@pytest.mark.parametrize("dm", FULL, ids=_ids)
def test_store_load_round_trip(dm):
    """A store then a load through the same layout and view give back every element the store
    wrote to a location no other element wrote to."""
    D, clamp = dm
    k = tensor_kernel(D, clamp)
    rng = np.random.default_rng(4000 + D)

    @settings(max_examples=15, **HYP)
    @given(cases(D, clamp, [STORE, STORE_V1, STORE_V3]))
    def inner(c):
        emap = element_map(c.layout(), c.view(), M, N, store=True)
        load_map = element_map(c.layout(), c.view(), M, N)   # clamping may reach further
        tensor = np.zeros(c.base + max(max_index(emap), max_index(load_map)) + 1, np.uint32)
        mat = rng.integers(0, 1 << 32, (M, N), dtype=np.uint32)
        run_case(k, c, rng, tensor, mat)
        c.site -= STORE
        _, got, _ = run_case(k, c, rng, tensor, np.zeros((M, N), np.uint32))
        count = {}
        for e in emap.values():
            if e is not SKIP and e is not CLAMPED:
                count[e[0]] = count.get(e[0], 0) + 1
        for (r, col), e in emap.items():
            if e is not SKIP and e is not CLAMPED and count[e[0]] == 1:
                assert got[r, col] == mat[r, col], (r, col, c)
    inner()


# ---------------------------------------------------------------------------------------------
# Deterministic cases: the worked example, state-order rules, spec-constant clamp mode
# ---------------------------------------------------------------------------------------------

def plain_case(D, clamp, site, dims, off=None, span=None, **kw):
    c = Case(D, clamp, site, block=[1] * D, dims=list(dims), strides=[1] * D,
             off1=[0] * D, span1=[1] * D, off2=list(off or [0] * D),
             span2=list(span or dims), block2=[1] * D, junk=[1] * D,
             vdim=[1] * len(V3P[D]), vstride=[0] * len(V3P[D]))
    for key, val in kw.items():
        setattr(c, key, val)
    return c


def test_column_major_view_worked_example():
    """Fact sheet section 5: a (NumCols, NumRows) layout sliced (col0, N, row0, M) and read through
    the view (2, false, 1, 0) is a column-major load: element (r, c) = a[(col0 + c) * NumRows + row0 + r]."""
    num_rows, num_cols, row0, col0 = 37, 45, 5, 9
    k = tensor_kernel(2, CONSTANT)
    c = plain_case(2, CONSTANT, LOAD_V1, [num_cols, num_rows], [col0, row0], [N, M])
    tensor = np.arange(num_rows * num_cols, dtype=np.uint32) * 7 + 1
    o = np.zeros((M, N), np.uint32)
    k.dispatch((1, 1, 1), {0: tensor, 1: o.reshape(-1), 2: c.params()})
    r, col = np.mgrid[0:M, 0:N]
    np.testing.assert_array_equal(o, tensor[(col0 + col) * num_rows + row0 + r])
    # and the store through the same view writes column-major
    out = np.zeros_like(tensor)
    mat = (np.arange(M * N, dtype=np.uint32).reshape(M, N) + 1)
    c.site = STORE_V1
    k.dispatch((1, 1, 1), {0: out, 1: mat.reshape(-1).copy(), 2: c.params()})
    want = np.zeros_like(tensor)
    want[(col0 + col) * num_rows + row0 + r] = mat
    np.testing.assert_array_equal(out, want)


def test_state_order_rules():
    """SetBlockSize after SetDimension keeps the strides SetDimension computed; a Slice before
    SetDimension is wiped by it; two Slices add their offsets and the second span wins."""
    k = tensor_kernel(2, CONSTANT)
    rng = np.random.default_rng(7)
    # block (1, 1) at SetDimension: strides (20, 1); then block (1, 2): blockCoord[1] = c // 2
    c = plain_case(2, CONSTANT, LOAD, [16, 20], block2=[1, 2], flags=F_BS_AFTER)
    t = c.layout()
    assert t.stride == [20, 1] and t.block == [1, 2]
    check_load(k, c, rng)
    tensor = np.arange(400, dtype=np.uint32)
    o = np.zeros((M, N), np.uint32)
    k.dispatch((1, 1, 1), {0: tensor, 1: o.reshape(-1), 2: c.params()})
    assert o[0, 5] == 5 // 2                    # element (0, 5): span coordinate (0, 5)
    assert o[1, 5] == 1 * 20 + 17 // 2          # element (1, 5): linear 37, span coordinate (1, 17)
    # a Slice before SetDimension has no effect; offsets accumulate over the two Slices
    c = plain_case(2, CONSTANT, LOAD, [40, 40], flags=F_JUNK_SLICE, junk=[3, 4],
                   off1=[2, 3], span1=[1, 1], off2=[1, -1], span2=[M, N])
    t = c.layout()
    assert t.offset == [3, 2] and t.span == [M, N]
    tensor = np.arange(1600, dtype=np.uint32)
    o = np.zeros((M, N), np.uint32)
    k.dispatch((1, 1, 1), {0: tensor, 1: o.reshape(-1), 2: c.params()})
    r, col = np.mgrid[0:M, 0:N]
    np.testing.assert_array_equal(o, (3 + r) * 40 + 2 + col)


def test_set_dimension_strides_round_blocks_up():
    """OpTensorLayoutSetDimensionNV packs strides by ceiling(Dim / blockSize) of the next dimension
    (SPV_NV_tensor_addressing; the GLSL text's block-quantization example says the same): dims
    (16, 17), blocks (1, 3) give stride[0] = ceil(17 / 3) = 6, so row r starts at block 6r and its
    last block (columns 15, 16) is a block of its own. The H100 truncates (17 / 3 = 5: that last
    block is row r + 1's first); jitcoop follows the text (tests/oracle/h100/README.md)."""
    k = tensor_kernel(2, CONSTANT)
    c = plain_case(2, CONSTANT, LOAD, [M, 17], span=[M, N], block=[1, 3], clamp_value=0xC1A)
    tensor = np.arange(M * 6, dtype=np.uint32) + 1000
    o = np.zeros((M, N), np.uint32)
    k.dispatch((1, 1, 1), {0: tensor, 1: o.reshape(-1), 2: c.params()})
    r, col = np.mgrid[0:M, 0:N]
    want = np.where(col < 17, 1000 + 6 * r + col // 3, 0xC1A)   # columns 17.. out of range
    np.testing.assert_array_equal(o, want)
    assert o[0, 16] == 1005 and o[1, 0] == 1006                # not the same block
    assert c.layout().stride == [6, 1]


def test_plain_load_with_blocks_reads_one_value_per_block():
    """Without DecodeFunc the address only uses blockCoord (fact sheet erratum 8)."""
    k = tensor_kernel(2, CONSTANT)
    c = plain_case(2, CONSTANT, LOAD, [16, 32], block=[2, 4])
    tensor = np.arange(200, dtype=np.uint32) + 100
    o = np.zeros((M, N), np.uint32)
    k.dispatch((1, 1, 1), {0: tensor, 1: o.reshape(-1), 2: c.params()})
    r, col = np.mgrid[0:M, 0:N]
    np.testing.assert_array_equal(o, 100 + (r // 2) * 8 + col // 4)


def test_constant_clamp_value_and_clip_object():
    """Constant-clamped elements get the clamp value, clipped elements keep Object's value, on
    the same load."""
    k = tensor_kernel(2, CONSTANT)
    c = plain_case(2, CONSTANT, LOAD_V1, [20, 10], [-3, 2], [N, M], clamp_value=0xDEADBEEF,
                   flags=F_CLIP, clip=(2, 10, 4, 20))
    tensor = np.arange(200, dtype=np.uint32)
    obj = np.full((M, N), 0x5555, np.uint32)
    o = obj.copy()
    k.dispatch((1, 1, 1), {0: tensor, 1: o.reshape(-1), 2: c.params()})
    want = ref_load(element_map(c.layout(), c.view(), M, N), tensor, obj, 0, 0xDEADBEEF)
    np.testing.assert_array_equal(o, want)
    assert (o == 0x5555).sum() == M * N - 10 * 20 and (o == 0xDEADBEEF).sum() > 0


@pytest.mark.parametrize("clamp", [UNDEFINED, REPEAT], ids=lambda m: CLAMP_NAMES[m])
def test_clamp_mode_is_a_specialization_constant(clamp):
    """tensor_2d_lite.spv's clamp mode is OpSpecConstant 0: the same module gives a different
    result per specialization."""
    k = tensor_kernel(2, clamp, lite=True)
    shift = 38 if clamp == REPEAT else 0
    c = plain_case(2, clamp, LOAD, [4, 40], [0, shift], [4, N])
    tensor = np.arange(160, dtype=np.uint32)
    o = np.zeros((M, N), np.uint32)
    k.dispatch((1, 1, 1), {0: tensor, 1: o.reshape(-1), 2: c.params()})
    r, col = np.mgrid[0:M, 0:N]
    np.testing.assert_array_equal(o, (r % 4) * 40 + (col + shift) % 40)


# ---------------------------------------------------------------------------------------------
# Errors: Undefined out of range, block size on a store, bounds; instruction named, buffers kept
# ---------------------------------------------------------------------------------------------

def _buffers(rng, size):
    tensor = rng.integers(0, 1 << 32, size, dtype=np.uint32)
    o = rng.integers(0, 1 << 32, M * N, dtype=np.uint32)
    return tensor, o


def _assert_names(e, opname, result=True, workgroup=(0, 0, 0)):
    assert e.opname == opname, e
    assert opname in str(e)
    assert isinstance(e.offset, int) and f"byte {e.offset}" in str(e)
    if result:
        assert isinstance(e.result_id, int) and f"%{e.result_id}" in str(e)
    assert tuple(e.workgroup) == tuple(workgroup)
    assert e.lane is not None and 0 <= e.lane < 32


@pytest.mark.parametrize("site", [LOAD, STORE], ids=["load", "store"])
def test_undefined_out_of_range_is_an_error(site):
    """With strict=True (the hardware's behaviour, a warning, is tests/test_portability.py's)."""
    k = tensor_kernel(2, UNDEFINED, lite=True, strict=True)
    rng = np.random.default_rng(11)
    # dimension 1 runs from -1: the first column is outside
    c = plain_case(2, UNDEFINED, site, [20, 40], [0, -1], [M, N])
    tensor, o = _buffers(rng, 800)
    t0, o0 = tensor.copy(), o.copy()
    with pytest.raises(jitcoop.ExecutionError) as ei:
        k.dispatch((1, 1, 1), {0: tensor, 1: o, 2: c.params()})
    name = "OpCooperativeMatrixLoadTensorNV" if site == LOAD else "OpCooperativeMatrixStoreTensorNV"
    _assert_names(ei.value, name, result=site == LOAD)
    np.testing.assert_array_equal(tensor, t0)
    np.testing.assert_array_equal(o, o0)
    # the same layout inside the tensor is fine
    c.off2 = [0, 0]
    k.dispatch((1, 1, 1), {0: tensor, 1: o, 2: c.params()})


@pytest.mark.parametrize("site", [STORE, STORE_V3], ids=["store", "store-view"])
def test_store_with_block_size_is_an_error(site):
    k = tensor_kernel(2, CONSTANT)
    rng = np.random.default_rng(12)
    c = plain_case(2, CONSTANT, site, [16, 32], block=[1, 2])
    c.vdim, c.vstride = [1, M, N], [0, N, 1]
    tensor, o = _buffers(rng, 600)
    t0, o0 = tensor.copy(), o.copy()
    with pytest.raises(jitcoop.ExecutionError) as ei:
        k.dispatch((1, 1, 1), {0: tensor, 1: o, 2: c.params()})
    _assert_names(ei.value, "OpCooperativeMatrixStoreTensorNV", result=False)
    np.testing.assert_array_equal(tensor, t0)
    np.testing.assert_array_equal(o, o0)
    # block size 1 again after SetDimension (strides computed with blocks of 2): allowed
    c.flags, c.block2 = F_BS_AFTER, [1, 1]
    k.dispatch((1, 1, 1), {0: tensor, 1: o, 2: c.params()})
    emap = element_map(c.layout(), c.view(), M, N, store=True)
    for i, vals in ref_store_writes(emap, o0.reshape(M, N), 0).items():
        assert tensor[i] in vals


@pytest.mark.parametrize("site", [LOAD, STORE], ids=["load", "store"])
def test_out_of_bounds_names_workgroup(site):
    """Workgroup 2 of 3 addresses past the end of the buffer: an ExecutionError naming the
    instruction and workgroup 2, every buffer as it was."""
    k = tensor_kernel(2, REPEAT, lite=True)
    rng = np.random.default_rng(13)
    c = plain_case(2, REPEAT, site, [M, N], base_step=M * N // 2)
    tensor, o = _buffers(rng, 2 * M * N - 1)       # workgroup 1 fits, workgroup 2 does not
    t0, o0 = tensor.copy(), o.copy()
    with pytest.raises(jitcoop.ExecutionError) as ei:
        k.dispatch((3, 1, 1), {0: tensor, 1: o, 2: c.params()})
    name = "OpCooperativeMatrixLoadTensorNV" if site == LOAD else "OpCooperativeMatrixStoreTensorNV"
    _assert_names(ei.value, name, result=site == LOAD, workgroup=(2, 0, 0))
    np.testing.assert_array_equal(tensor, t0)
    np.testing.assert_array_equal(o, o0)


def test_decode_func_on_store_is_refused_at_load():
    dev = jitcoop.Device("generic")
    with pytest.raises(jitcoop.SpirvError) as ei:
        dev.load(SHADERS / "coopmat2" / "store_decode.spv").kernel()
    e = ei.value
    assert e.opname == "OpCooperativeMatrixStoreTensorNV" and "OpCooperativeMatrixStoreTensorNV" in str(e)
    assert isinstance(e.offset, int) and f"byte {e.offset}" in str(e)


# ---------------------------------------------------------------------------------------------
# A byte-array Pointer holding float16 / float32 / uint16 / uint8 data (tensor_bytes.comp)
# ---------------------------------------------------------------------------------------------

BYTE_SITES = {0: ("f16", np.float16, 1), 1: ("f32", np.float32, 2), 2: ("u16", np.uint16, 3),
              3: ("u8", np.uint8, 4)}


@pytest.fixture(scope="module")
def bytes_kernel():
    return jitcoop.Device("generic").load(SHADERS / "coopmat2" / "tensor_bytes.spv").kernel()


def run_bytes(k, site, at, dims, off, span, clamp_value, data):
    p = np.array([x & U32 for x in (site, at, *dims, off[0], span[0], off[1], span[1],
                                    clamp_value)], np.uint32)
    outs = {1: np.zeros(M * N, np.float16), 2: np.zeros(M * N, np.float32),
            3: np.zeros(M * N, np.uint16), 4: np.zeros(M * N, np.uint8)}
    k.dispatch((1, 1, 1), {0: data, **outs, 5: p})
    return outs[BYTE_SITES[site][2]].reshape(M, N)


def ref_bytes(site, at, dims, off, span, clamp_value, data):
    dtype = BYTE_SITES[site][1]
    size = np.dtype(dtype).itemsize
    t = Layout(2, CONSTANT).set_dimension(*dims).slice(off[0], span[0], off[1], span[1])
    t.set_clamp_value(clamp_value)
    bits = np.dtype(f"u{size}")
    want = np.zeros((M, N), bits)
    for (r, c), e in element_map(t, None, M, N).items():
        if e is CLAMPED:
            want[r, c] = clamp_value & ((1 << 8 * size) - 1)      # the clamp value's low bits
        else:
            b = at + e[0] * size                                  # element size, not uint8's
            want[r, c] = data[b:b + size].view(bits)[0]
    return want


@settings(max_examples=40, **HYP)
@given(site=st.sampled_from([0, 1, 2, 3]), at=st.integers(0, 6).map(lambda x: 16 * x),
       dims=st.tuples(st.integers(1, 24), st.integers(1, 40)),
       off=st.tuples(st.integers(-5, 20), st.integers(-5, 36)),
       span=st.tuples(st.integers(1, 20), st.integers(1, 40)),
       clamp_value=st.one_of(st.integers(0, U32), st.sampled_from([0xFC00, 0x12345678])))
def test_byte_array_pointer(bytes_kernel, site, at, dims, off, span, clamp_value):
    """Element index x the size of the matrix component type is a byte offset from Pointer, which
    points into a uint8_t[] at byte `at`; Constant clamping gives the clamp value's low bits."""
    rng = np.random.default_rng(site * 1000 + at)
    data = rng.integers(0, 256, at + dims[0] * dims[1] * 4 + 3, dtype=np.uint8)
    got = run_bytes(bytes_kernel, site, at, dims, off, span, clamp_value, data)
    want = ref_bytes(site, at, dims, off, span, clamp_value, data)
    if site == 0:
        # float16 NaNs may come back with another payload (the engine does not promise NaN
        # payloads through float16 arithmetic types); compare them as NaNs
        nan = np.isnan(want.view(np.float16))
        assert np.isnan(got[nan]).all()
        got, want = got[~nan], want[~nan]
    np.testing.assert_array_equal(got.view(want.dtype), want)


def test_float16_minus_infinity_mask(bytes_kernel):
    """Clamp value 0xFC00 masks the float16 elements outside a 10 x 20 tensor with -inf."""
    vals = np.arange(200, dtype=np.float16)
    data = np.concatenate([np.zeros(32, np.uint8), vals.view(np.uint8)])
    got = run_bytes(bytes_kernel, 0, 32, (10, 20), (0, 0), (M, N), 0xFC00, data)
    r, c = np.mgrid[0:M, 0:N]
    inside = (r < 10) & (c < 20)
    np.testing.assert_array_equal(got[inside], vals.reshape(10, 20)[:M, :N][inside[:10, :20]])
    assert np.all(np.isneginf(got[~inside]))
    # and as float32 with the same clamp value: the bit pattern 0x0000FC00, a tiny positive number
    got32 = run_bytes(bytes_kernel, 1, 0, (10, 20), (0, 0), (M, N), 0xFC00,
                      np.zeros(800, np.uint8))
    assert np.all(got32[~inside].view(np.uint32) == 0xFC00)


# ---------------------------------------------------------------------------------------------
# The addressing does not depend on the lane layout: the same answers under other profiles
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["nvidia", "shuffled"])
def test_other_profiles(profile):
    k = tensor_kernel(2, REPEAT_MIRRORED, lite=True, profile=profile)
    rng = np.random.default_rng(5000)

    @settings(max_examples=20, **HYP)
    @given(cases(2, REPEAT_MIRRORED, [LOAD, STORE]))
    def inner(c):
        (check_store if c.store else check_load)(k, c, rng)
    inner()


# ---------------------------------------------------------------------------------------------
# 32-bit extremes: offsets near +-2^31 (c = spanCoord + offset wraps as int32), spans of 2^32-1,
# view strides that wrap the view's linear index modulo 2^32, huge block sizes
# ---------------------------------------------------------------------------------------------

BIG_OFF = st.one_of(st.integers(-(1 << 31), -(1 << 31) + 600), st.integers((1 << 31) - 600, (1 << 31) - 1),
                    st.integers(-(1 << 31), (1 << 31) - 1), st.integers(-50, 50))
BIG_SPAN = st.one_of(st.just(U32), st.just(1 << 31), st.integers(1 << 20, U32), st.integers(1, 600))
BIG_VSTRIDE = st.one_of(st.integers(0, 12), st.sampled_from([1 << 31, U32, U32 - 2, 1 << 30]))


@st.composite
def extreme_cases(draw, clamp, sites):
    c = draw(cases(2, clamp, sites, in_range=False))
    c.off1 = [draw(BIG_OFF) for _ in range(2)]
    c.off2 = [draw(BIG_OFF) for _ in range(2)]
    c.span2 = [draw(BIG_SPAN) for _ in range(2)]
    if not c.store and draw(st.booleans()):
        c.block = [draw(st.sampled_from([1, 2, 1 << 31, U32])) for _ in range(2)]
        c.flags &= ~F_BS_AFTER
    c.vstride = [draw(BIG_VSTRIDE) for _ in range(3)]
    return c


@pytest.mark.parametrize("clamp", [CONSTANT, CLAMP_TO_EDGE, REPEAT, REPEAT_MIRRORED],
                         ids=lambda m: CLAMP_NAMES[m])
def test_extreme_values_2d(clamp):
    full = clamp == CONSTANT
    k = tensor_kernel(2, clamp, lite=not full)
    sites = [LOAD, LOAD_V1, LOAD_V3, STORE, STORE_V1, STORE_V3] if full else [LOAD, STORE]
    rng = np.random.default_rng(6000 + clamp)

    @settings(max_examples=40, **HYP)
    @given(extreme_cases(clamp, sites))
    def inner(c):
        # the int32 wrap of spanCoord + offset is tested on its own below
        t, v = c.layout(), c.view()
        assume(element_map(t, v, M, N, c.store) == element_map(t, v, M, N, c.store, wrap=False))
        (check_store if c.store else check_load)(k, c, rng)
    inner()


@pytest.mark.parametrize("clamp", [CLAMP_TO_EDGE, REPEAT_MIRRORED], ids=lambda m: CLAMP_NAMES[m])
def test_span_coordinate_plus_offset_wraps_as_int32(clamp):
    """The seed computes `int32_t c = spanCoord[dim] + t.offset[dim]` (uint32 + int32 in 32-bit
    arithmetic): offset 2^31 - 1 and span coordinate 1 give c = -2^31, clamped to 0 (ClampToEdge),
    not 2^31 clamped to D - 1."""
    k = tensor_kernel(2, clamp, lite=True)
    c = plain_case(2, clamp, LOAD, [1, 4], [0, (1 << 31) - 1], [U32, U32])
    tensor = np.arange(8, dtype=np.uint32)
    o = np.zeros((M, N), np.uint32)
    k.dispatch((1, 1, 1), {0: tensor, 1: o.reshape(-1), 2: c.params()})
    want = ref_load(element_map(c.layout(), None, M, N), tensor, o * 0, 0, 0)
    np.testing.assert_array_equal(o[0, :8], want[0, :8])


# ---------------------------------------------------------------------------------------------
# Whole-row loads and stores: tiles wholly inside the tensor move a row at a time (16 elements
# per vector step, float16 through F16C), tiles over the edge element by element
# ---------------------------------------------------------------------------------------------

# rows that fill a fragment row (16x32), span several (16x64), pack several to one (8x16), have
# no vector step (8x8) or no runs at all (16x48: element by element throughout)
ROWS_CASES = [pytest.param(*c, id=c[0], marks=[pytest.mark.slow] if slow else [])
              for *c, slow in [("f16_16x32", np.uint16, 16, 32, False), ("f16_16x48", np.uint16, 16, 48, False),
                               ("f32_16x16", np.uint32, 16, 16, False), ("u8_16x64", np.uint8, 16, 64, False),
                               ("s32_8x8", np.uint32, 8, 8, False), ("f16_8x16", np.uint16, 8, 16, True),
                               ("bf16_16x32", np.uint16, 16, 32, True)]]


@pytest.mark.parametrize("name,dt,rows,cols", ROWS_CASES)
def test_whole_row_tensor_loads_and_stores_keep_every_bit(name, dt, rows, cols):
    """tensor_rows.comp: every 16-bit pattern (random bits for the other widths) through a
    Constant-clamped tensor load and two tensor stores, against numpy's slicing. Float stores
    write NaNs as their format's quiet NaN (stored_16); float32 and integer bits are kept. Tiles
    wholly inside move a row at a time in generated code (matrix_loads.tensor_mover, where the
    rows have runs), the others element by element, in the same dispatches."""
    from test_coopmat_views import stored_16
    k = jitcoop.Device("generic").load(SHADERS / "coopmat2" / f"tensor_rows_{name}.spv").kernel()
    assert ("@jc.tmove.rows." in k.source) == (name != "f16_16x48")
    roff, coff, clamp = 3, 5, 0x3C17
    ntr, tcols = -(-272 // rows), -(-256 // cols)
    ntr += (ntr * tcols) % 2                            # 2 subgroups per workgroup
    R, C = ntr * rows - 2, tcols * cols - 2            # the last tile row and column go past
    rng = np.random.default_rng(5)
    if dt == np.uint16:
        pool = rng.permutation(65536).astype(np.uint16)
    else:
        pool = rng.integers(0, np.iinfo(dt).max, 70000, dtype=np.uint64).astype(dt)
    if dt == np.uint32:                                 # float32 signalling NaNs, both zeros
        pool[:4] = [0x7F800001, 0xFFBFFFFF, 0x80000000, 0x7FC00000]
    x = np.resize(pool, R * C).astype(dt).reshape(R, C)
    y = np.full((ntr * rows, tcols * cols), 0xA5, dt)
    z = np.full((R, C), 0xA5, dt)
    k.dispatch(ntr * tcols // 2, {0: x, 1: y, 2: z},
               push=np.array([R, C, roff, coff, tcols], np.uint32))
    padded = np.full((ntr * rows + roff, tcols * cols + coff), clamp & np.iinfo(dt).max, dt)
    padded[:R, :C] = x
    want_y = padded[roff:roff + ntr * rows, coff:coff + tcols * cols]
    want_z = x.copy()
    want_z[:roff, :] = 0xA5                             # no tile covers these
    want_z[:, :coff] = 0xA5
    if name.startswith(("f16", "bf16")):
        want_y = stored_16(want_y, name.startswith("bf16"))
        want_z = stored_16(want_z, name.startswith("bf16"))
    for got, want, what in ((y, want_y, "tiled store"), (z, want_z, "store through the load's layout")):
        bad = np.argwhere(got != want)
        assert bad.size == 0, f"{what}: {len(bad)} differ; first at {tuple(bad[0])}: " \
                              f"{got[tuple(bad[0])]:#x}, want {want[tuple(bad[0])]:#x}"


@pytest.mark.parametrize("name,dt,rows,cols", [("f16_16x32", np.uint16, 16, 32), ("f16_16x64", np.uint16, 16, 64),
                                               ("f32_16x16", np.uint32, 16, 16), ("u8_16x64", np.uint8, 16, 64),
                                               ("bf16_16x32", np.uint16, 16, 32)])
def test_transposed_tensor_loads_keep_every_bit(name, dt, rows, cols):
    """tensor_rows.comp with -DTRANSPOSED: each tile is the transpose of a block of x read through
    the view (2, false, 1, 0), Constant-clamped past the edge (clamp value 0x3C17), stored tiled
    to y, and stored back to z through the same view and slice. Tiles wholly inside move a column
    at a time through register transposes in generated code (matrix_loads.tensor_mover, both
    ways), the others element by element. Against numpy's slicing, bit for bit (float16 and
    bfloat16 NaNs as stored_16 says)."""
    from test_coopmat_views import stored_16
    k = jitcoop.Device("generic").load(SHADERS / "coopmat2" / f"tensor_rows_t_{name}.spv").kernel()
    assert "@jc.tmove.columns." in k.source and "@jc.tmove.store_columns." in k.source
    roff, coff, clamp = 3, 5, 0x3C17
    ntr, tcols = -(-144 // rows), -(-128 // cols)
    ntr += (ntr * tcols) % 2                            # 2 subgroups per workgroup
    R, C = tcols * cols + coff - 2, ntr * rows + roff - 2   # the last tiles go past the edge
    rng = np.random.default_rng(6)
    if dt == np.uint16:
        pool = rng.permutation(65536).astype(np.uint16)
    else:
        pool = rng.integers(0, np.iinfo(dt).max, 70000, dtype=np.uint64).astype(dt)
    if dt == np.uint32:
        pool[:4] = [0x7F800001, 0xFFBFFFFF, 0x80000000, 0x7FC00000]
    x = np.resize(pool, R * C).astype(dt).reshape(R, C)
    y = np.full((ntr * rows, tcols * cols), 0xA5, dt)
    z = np.full((R, C), 0xA5, dt)
    k.dispatch(ntr * tcols // 2, {0: x, 1: y, 2: z},
               push=np.array([R, C, roff, coff, tcols], np.uint32))
    padded = np.full((R + cols, C + rows), clamp & np.iinfo(dt).max, dt)
    padded[:R, :C] = x
    want = np.zeros_like(y)
    for tr in range(ntr):
        for tc in range(tcols):
            blk = padded[tc * cols + coff:tc * cols + coff + cols, tr * rows + roff:tr * rows + roff + rows]
            want[tr * rows:(tr + 1) * rows, tc * cols:(tc + 1) * cols] = blk.T
    want_z = np.full_like(z, 0xA5)
    want_z[coff:, roff:] = x[coff:, roff:]             # every tile's block, clipped to x
    if name.startswith(("f16", "bf16")):
        want = stored_16(want, name.startswith("bf16"))
        want_z = np.where(want_z == 0xA5, want_z, stored_16(want_z, name.startswith("bf16")))
        want_z[:coff, :] = 0xA5
        want_z[:, :roff] = 0xA5
    for got, w, what in ((y, want, "tiled store"), (z, want_z, "store through the view")):
        bad = np.argwhere(got != w)
        assert bad.size == 0, f"{what}: {len(bad)} differ; first at {tuple(bad[0])}: {got[tuple(bad[0])]:#x}, " \
                              f"want {w[tuple(bad[0])]:#x}"

# ---------------------------------------------------------------------------------------------
# The affine plan in generated code (codegen/tensor_plans.py): a tile wholly inside the tensor,
# with block size 1, no clip and lines in bounds, moves a line at a time on the generated plan's
# word; at each of its edges the plan must hand over to the library's element path. Each case
# against the reference, on tensor_2d.spv (16 x 32 uint; the view v1 is (2, false, 1, 0))
# ---------------------------------------------------------------------------------------------

def _edge(site, dims, off, span, **kw):
    return plain_case(2, CONSTANT, site, dims, off, span, clamp_value=0xC1A4, **kw)


# rows walk dimension 0 and columns dimension 1 without a view; through v1 the other way round
AFFINE_EDGES = {
    "inside": ([20, 40], [3, 5], [16, 32], {}),
    "rows_over_the_edge": ([18, 40], [3, 5], [16, 32], {}),
    "columns_over_the_edge": ([20, 36], [3, 5], [16, 32], {}),
    "negative_offset": ([20, 40], [-1, 5], [16, 32], {}),
    "span_narrower_than_a_row": ([20, 40], [3, 5], [16, 31], {}),
    "span_shorter_than_the_matrix": ([20, 40], [3, 5], [15, 32], {}),
    "set_stride": ([20, 40], [3, 5], [16, 32], dict(flags=F_STRIDE, strides=[45, 1])),
    "column_stride_2": ([20, 40], [3, 5], [16, 32], dict(flags=F_STRIDE, strides=[90, 2])),
    "row_stride_1": ([20, 40], [3, 5], [16, 32], dict(flags=F_STRIDE, strides=[1, 20])),
    "block_size_2": ([20, 40], [3, 5], [16, 32], dict(block=[2, 1])),
    # dimension 0 reaches past 2^31 and the offset is negative as an int32 (stride 0 keeps the
    # tensor small): Constant-clamped rows
    "offset_past_int32": ([0x90000000, 40], [0x80000001, 5], [16, 32], dict(flags=F_STRIDE, strides=[0, 1])),
}
AFFINE_VIEW_EDGES = {
    "inside": ([40, 20], [5, 3], [32, 16], {}),
    "clip_row_offset": ([40, 20], [5, 3], [32, 16], dict(flags=F_CLIP, clip=(1, U32, 0, U32))),
    "clip_fewer_rows": ([40, 20], [5, 3], [32, 16], dict(flags=F_CLIP, clip=(0, 15, 0, U32))),
    "clip_column_offset": ([40, 20], [5, 3], [32, 16], dict(flags=F_CLIP, clip=(0, U32, 2, U32))),
    "clip_narrower": ([40, 20], [5, 3], [31, 16], dict(flags=F_CLIP, clip=(0, U32, 0, 31))),
    "span_narrower_than_the_clip": ([40, 20], [5, 3], [31, 16], {}),
    "rows_over_the_edge": ([40, 18], [5, 3], [32, 16], {}),
    "row_stride_2": ([40, 20], [5, 3], [32, 16], dict(flags=F_STRIDE, strides=[45, 2])),
}


def _edge_cases():
    for view, table in ((False, AFFINE_EDGES), (True, AFFINE_VIEW_EDGES)):
        for name, (dims, off, span, kw) in table.items():
            for store in (False, True):
                if store and "block" in kw:
                    continue            # an error for stores: test_store_with_block_size_is_an_error
                site = (STORE if store else LOAD) + (1 if view else 0)
                yield pytest.param(site, dims, off, span, kw,
                                   id=f"{'store' if store else 'load'}-{'v1-' if view else ''}{name}")


@pytest.mark.parametrize("site,dims,off,span,kw", list(_edge_cases()))
def test_affine_plan_edges(site, dims, off, span, kw):
    k = tensor_kernel(2, CONSTANT)
    assert "@jc.tplan." in k.source
    c = _edge(site, dims, off, span, **kw)
    rng = np.random.default_rng(sum(dims) + 7 * sum(off) + site)
    (check_store if c.store else check_load)(k, c, rng, pad=4096)


@pytest.mark.parametrize("site", [LOAD, LOAD_V1, STORE, STORE_V1], ids=["load", "load-v1", "store", "store-v1"])
def test_affine_plan_refusals_are_reported(site):
    """A tile the generated plan would move but for its Pointer (4 bytes past 16-byte alignment)
    or its last line (one element past the buffer): the library's errors, every buffer kept
    (strict: a misaligned Pointer is otherwise run as the hardware runs it, test_portability.py)."""
    k = tensor_kernel(2, CONSTANT, strict=True)
    view = site in (LOAD_V1, STORE_V1)
    dims, off, span = ([40, 20], [5, 3], [32, 16]) if view else ([20, 40], [3, 5], [16, 32])
    rng = np.random.default_rng(17 + site)
    name = "OpCooperativeMatrixLoadTensorNV" if site < STORE else "OpCooperativeMatrixStoreTensorNV"
    for base, short, words in ((1, 0, "16-byte aligned"), (0, 1, "reaches outside")):
        c = _edge(site, dims, off, span, base=base)
        need = base + max_index(element_map(c.layout(), c.view(), M, N, c.store)) + 1
        tensor, o = _buffers(rng, need - short)
        t0, o0 = tensor.copy(), o.copy()
        with pytest.raises(jitcoop.ExecutionError) as ei:
            k.dispatch((1, 1, 1), {0: tensor, 1: o, 2: c.params()})
        _assert_names(ei.value, name, result=site < STORE)
        assert words in str(ei.value)
        np.testing.assert_array_equal(tensor, t0)
        np.testing.assert_array_equal(o, o0)
