"""Lane layouts: which (row, col) of a cooperative matrix each invocation holds as its element e.

A layout is a table `[invocations, length]` of linear element indices `row * cols + col`. Every
invocation of the scope instance holds `length` elements (OpCooperativeMatrixLengthKHR); when
`invocations * length` exceeds `rows * cols` some elements are held by several invocations
(replicas), as the H100 does for workgroup-scope A and B matrices and RDNA3 for A and B.

The functions here build the tables of each device family from the rules measured on the real
hardware (../shared/oracle/README.md); tests/test_layouts.py checks them against every measured
table.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

USE_A, USE_B, USE_ACC = 0, 1, 2


@dataclass(eq=False)
class Layout:
    name: str
    rows: int
    cols: int
    invocations: int
    table: np.ndarray              # int32 [invocations, length]: row * cols + col

    @property
    def length(self) -> int:
        return self.table.shape[1]

    def coords(self) -> np.ndarray:
        """int32 [invocations, length, 2]: the (row, col) each invocation holds, as in the
        oracle's lane maps."""
        return np.stack([self.table // self.cols, self.table % self.cols], axis=-1)


def _make(name, rows, cols, inv, fn, length=None) -> Layout:
    """A layout from fn(lane array [inv, 1], e array [1, length]) -> (row, col) arrays (either may
    broadcast); `length` defaults to the fewest elements that cover the matrix."""
    if length is None:
        length = -(-rows * cols // inv)
    l = np.arange(inv)[:, None]
    e = np.arange(length)[None, :]
    r, c = fn(l, e)
    r = np.broadcast_to(r, (inv, length))
    c = np.broadcast_to(c, (inv, length))
    if r.min() < 0 or c.min() < 0 or r.max() >= rows or c.max() >= cols:
        raise ValueError(f"layout {name} maps outside a {rows} x {cols} matrix")
    return Layout(name, rows, cols, inv, (r * cols + c).astype(np.int32))


def striped(rows, cols, inv) -> Layout:
    """The generic profile's layout: consecutive invocations hold consecutive elements in
    row-major order; element e of invocation l is linear index e * inv + l (wrapping onto
    replicas when inv does not divide rows * cols)."""
    n = rows * cols
    return _make("striped", rows, cols, inv, lambda l, e: (((e * inv + l) % n) // cols, ((e * inv + l) % n) % cols))


def shuffled(rows, cols, inv, key, seed=0) -> Layout:
    """A seeded random permutation of the striped layout, one per matrix type: a shader that
    depends on a particular layout gives a different answer here."""
    base = striped(rows, cols, inv)
    h = hashlib.sha256(repr((key, seed)).encode()).digest()
    perm = np.random.default_rng(int.from_bytes(h[:8], "little")).permutation(rows * cols)
    return Layout("shuffled", rows, cols, inv, perm[base.table].astype(np.int32))


# -- NVIDIA (H100) ----------------------------------------------------------------------------------
# Subgroup scope, lane l = 4g + t. A 16-bit A (or any accumulator) R x C splits e into
# (e0: 1 bit, ec: C/8 column blocks, er: R/8 row blocks):
#     row = g + 8 er,  col = 2t + e0 + 8 ec
# 8-bit A: 4 consecutive columns per lane: col = 4t + (e & 3) + 16 ec, row = g + 8 er.
# B is the A rule applied to the transpose. These are the measured tables' linear (GF(2)) fits,
# written with division so that the flexible (non power of two) sizes follow the same pattern.

def _nv_a_rule(rows, cols, width):
    """(lane, e) -> (row, col) of a subgroup-scope A-like fragment (A or accumulator)."""
    if width == 8:
        per, cb = 4, 16
    else:
        per, cb = 2, 8
    ncb = max(1, cols // cb)

    def fn(l, e):
        g, t = l >> 2, l & 3
        inner = e % per
        ec = (e // per) % ncb
        er = e // (per * ncb)
        return g + 8 * er, per * t + inner + cb * ec
    return fn


def _nv_sub(use, rows, cols, width):
    """The subgroup-scope rule of a (use, rows, cols) sub-tile: (lane, e) -> (row, col)."""
    if use == USE_B:
        f = _nv_a_rule(cols, rows, width)
        return lambda l, e: tuple(reversed(f(l, e)))
    return _nv_a_rule(rows, cols, 16 if use == USE_ACC else width)


def nvidia(use, rows, cols, width, inv) -> Layout:
    """The H100's layout. At workgroup scope the W = inv/32 warps form a 2 x W/2 grid (wr = the
    top warp bit, wc = the others): an accumulator splits both ways, A splits its rows by wr and
    is replicated across wc, B splits its columns by wc and is replicated across wr."""
    name = "nvidia"
    if inv == 32:
        return _make(name, rows, cols, 32, _nv_sub(use, rows, cols, width))
    W = inv // 32
    half = max(1, W // 2)
    sub_r = rows // 2 if use in (USE_A, USE_ACC) else rows
    sub_c = cols // half if use in (USE_B, USE_ACC) else cols
    if W < 2 or sub_r < 1 or sub_c < 1:
        raise ValueError("workgroup too small for a 2 x W/2 warp grid")
    f = _nv_sub(use, sub_r, sub_c, width)

    def fn(l, e):
        lane, w = l & 31, l >> 5
        wr, wc = w // half, w % half
        r, c = f(lane, e)
        if use in (USE_A, USE_ACC):
            r = r + wr * sub_r
        if use in (USE_B, USE_ACC):
            c = c + wc * sub_c
        return r, c
    return _make(name, rows, cols, inv, fn, sub_r * sub_c // 32)


# -- lavapipe -------------------------------------------------------------------------------------
def lavapipe(use, rows, cols, inv) -> Layout:
    """Mesa lavapipe (8 lanes) builds a matrix from 8x8 tiles, e = 8 * tile + i with column tiles
    fastest. A and accumulators: row = 8 rowTile + i, col = 8 colTile + lane; B the transpose."""
    ct = cols // 8

    def fn(l, e):
        tile, i = e // 8, e % 8
        rt, cti = tile // ct, tile % ct
        if use == USE_B:
            return 8 * rt + l, 8 * cti + i
        return 8 * rt + i, 8 * cti + l
    return _make("lavapipe", rows, cols, inv, fn)


# -- AMD RDNA3 ------------------------------------------------------------------------------------
def rdna3(use, rows, cols, inv) -> Layout:
    """RDNA3 WMMA (16x16x16): lane l holds row l % 16 of A (all 16 K values) and column l % 16 of
    B, so A and B are replicated across each 16-lane group (Length 16). The accumulator is
    interleaved by row: lane l holds rows e * (inv / 16) + l // 16 of column l % 16."""
    groups = inv // 16
    if use == USE_A:
        return _make("rdna3", rows, cols, inv, lambda l, e: (l % 16, e), cols)
    if use == USE_B:
        return _make("rdna3", rows, cols, inv, lambda l, e: (e, l % 16), rows)
    return _make("rdna3", rows, cols, inv, lambda l, e: (e * groups + l // 16, l % 16))


# -- Qualcomm (not measured) ----------------------------------------------------------------------
def qualcomm(use, rows, cols, inv) -> Layout:
    """Not measured on hardware: the layout SPV_QCOM_cooperative_matrix_conversion suggests. A
    matrix is `lines` rows (A, accumulator) or columns (B); lane l holds line l % lines, and, when
    there are fewer lines than lanes, the (l // lines)-th run of `length` consecutive elements of
    it. A matrix with one line per invocation is then exactly the per-invocation arrays of
    OpCompositeConstructCoopMatQCOM."""
    lines, along = (cols, rows) if use == USE_B else (rows, cols)
    if lines > inv or inv % lines:
        raise ValueError(f"{lines} {'columns' if use == USE_B else 'rows'} do not divide "
                         f"{inv} invocations")
    groups = inv // lines
    length = -(-along // groups)

    def fn(l, e):
        line = l % lines
        pos = ((l // lines) * length + e) % along
        return (pos, line) if use == USE_B else (line, pos)
    return _make("qualcomm", rows, cols, inv, fn, length)
