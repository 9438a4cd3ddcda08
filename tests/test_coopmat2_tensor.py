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
from hypothesis import HealthCheck, given, settings, strategies as st

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
            self.stride[i] = (self.stride[i + 1] * -(-self.dim[i + 1] // self.block[i + 1])) & U32
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


def element(t: Layout, v: View | None, row, col, cols, store=False):
    """matrixCoordToTensorElement(WithView) for one matrix element: SKIP, CLAMPED or
    (index, blockCoord, coordInBlock). Raises Undefined for Undefined-mode out-of-range."""
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
        c = i32(span_coord[d] + t.offset[d])
        D = t.dim[d]
        if c < 0 or c >= D:
            mode = t.clamp
            if store and mode != UNDEFINED:
                mode = CONSTANT
            if mode == UNDEFINED:
                raise Undefined((row, col, d, c))
            if mode == CONSTANT:
                return CLAMPED
            if mode == CLAMP_TO_EDGE:
                c = min(max(c, 0), D - 1)
            elif mode == REPEAT:
                c %= D
            else:
                c = repeat_mirrored(c, D)
        cib[d] = c % t.block[d]
        bc[d] = c // t.block[d]
    index = sum(bc[d] * t.stride[d] for d in range(t.D)) & U32
    return index, bc, cib


def element_map(t, v, rows, cols, store=False):
    """{(row, col): element(...)} for the whole matrix; raises Undefined."""
    return {(r, c): element(t, v, r, c, cols, store) for r in range(rows) for c in range(cols)}


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


def tensor_kernel(D, clamp, lite=False, profile="generic"):
    name = f"tensor_{D}d" + ("_lite" if lite else "")
    key = (name, clamp, profile)
    if key not in _KERNELS:
        dev = jitcoop.Device(profile)
        _KERNELS[key] = dev.load(SHADERS / "coopmat2" / f"{name}.spv").kernel(spec={0: clamp})
    return _KERNELS[key]


def run_case(k, c, rng, tensor=None, obj=None, grid=(1, 1, 1)):
    """Dispatch case c; returns (tensor, o, emap). For a load, o is the loaded matrix."""
    emap = element_map(c.layout(), c.view(), M, N, c.store)
    if tensor is None:
        size = c.base + max_index(emap) + 1 + int(rng.integers(0, 4))
        tensor = rng.integers(0, 1 << 32, size, dtype=np.uint32)
    if obj is None:
        obj = rng.integers(0, 1 << 32, (M, N), dtype=np.uint32)
    o = obj.copy()
    k.dispatch(grid, {0: tensor, 1: o.reshape(-1), 2: c.params()})
    return tensor, o, emap


def check_load(k, c, rng):
    emap = element_map(c.layout(), c.view(), M, N)
    size = c.base + max_index(emap) + 1 + int(rng.integers(0, 4))
    tensor0 = rng.integers(0, 1 << 32, size, dtype=np.uint32)
    obj = rng.integers(0, 1 << 32, (M, N), dtype=np.uint32)
    tensor = tensor0.copy()
    _, got, _ = run_case(k, c, rng, tensor, obj)
    want = ref_load(emap, tensor0, obj, c.base, c.clamp_value)
    np.testing.assert_array_equal(got, want, err_msg=f"{c}")
    np.testing.assert_array_equal(tensor, tensor0, err_msg="a load wrote to the tensor")


def check_store(k, c, rng):
    emap = element_map(c.layout(), c.view(), M, N, store=True)
    size = c.base + max_index(emap) + 1 + int(rng.integers(0, 4))
    tensor0 = rng.integers(0, 1 << 32, size, dtype=np.uint32)
    mat = rng.integers(0, 1 << 32, (M, N), dtype=np.uint32)
    tensor = tensor0.copy()
    run_case(k, c, rng, tensor, mat)
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
