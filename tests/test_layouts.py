"""Lane layouts of jitcoop.devices.layouts against the hardware measurements in tests/oracle:
every lane map measured on the H100 and on lavapipe (lanemaps/*.npy, entry [i, e] = (row, col)
held by invocation i as element e) is reproduced exactly; the GF(2) linear fits of layouts.txt
(written independently of the .npy files) give the same tables; the README's formulas hold; and
every layout of every profile covers every element of its matrix at least once."""
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from jitcoop.devices import layouts as L
from jitcoop.devices import profile

ORACLE = Path(__file__).resolve().parent / "oracle"
LANEMAPS = ORACLE / "lanemaps"
USE = {"A": L.USE_A, "B": L.USE_B, "C": L.USE_ACC}
WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "s32": 32, "e4m3": 8, "s8": 8, "u8": 8}
NAME = re.compile(r"(nv|lvp)_(\w+?)_([ABC])_(\d+)x(\d+)_(sg|wg)(\d+)$")
UNSUPPORTED = {"nv_s8_A_8x8_sg32": "a size the H100 does not support: the driver returned zeros "
                                   "(every entry (0,0)), so there is no layout to reproduce"}


def parse(name):
    drv, t, use, r, c, _, inv = NAME.match(name).groups()
    return drv, t, USE[use], int(r), int(c), int(inv)


def jitcoop_layout(name):
    drv, t, use, r, c, inv = parse(name)
    if drv == "nv":
        return L.nvidia(use, r, c, WIDTH[t], inv)
    return L.lavapipe(use, r, c, inv)


MAPS = sorted(p.stem for p in LANEMAPS.glob("*.npy"))


def test_every_lanemap_is_named_as_the_readme_says():
    assert len(MAPS) == 55
    for name in MAPS:
        assert NAME.match(name), name


@pytest.mark.parametrize("name", MAPS)
def test_lanemap_reproduced_exactly(name):
    if name in UNSUPPORTED:
        pytest.skip(UNSUPPORTED[name])
    want = np.load(LANEMAPS / f"{name}.npy")
    lay = jitcoop_layout(name)
    got = lay.coords()
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    assert lay.length == want.shape[1]
    assert lay.invocations == want.shape[0]


def test_unsupported_lanemap_is_really_all_zeros():
    want = np.load(LANEMAPS / "nv_s8_A_8x8_sg32.npy")
    assert not want.any()


# -- layouts.txt: (row, col) = XOR of the basis vectors of the set bits of lane and e ----------------
def _fits():
    out, drv = {}, None
    for line in (LANEMAPS / "layouts.txt").read_text().splitlines():
        if line.startswith("## "):
            drv = line[3:].strip()
            continue
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        name = f"{drv}_{f[0]}"
        length = int(f[2])
        lin = f[3]
        lanes, elems = {}, {}
        for tok in f[4:]:
            m = re.match(r"(lane|e)(\d+)->\((\d+),(\d+)\)", tok)
            (lanes if m[1] == "lane" else elems)[int(m[2])] = (int(m[3]), int(m[4]))
        out[name] = (length, lin, lanes, elems)
    return out


FITS = _fits()


def test_layouts_txt_lists_every_lanemap():
    assert sorted(FITS) == MAPS
    assert all(lin == "linear=yes" for _, lin, _, _ in FITS.values())


def gf2_table(lanes, elems, inv, length):
    out = np.zeros((inv, length, 2), np.int64)
    for i in range(inv):
        for e in range(length):
            r = c = 0
            for bit, (dr, dc) in lanes.items():
                if i >> bit & 1:
                    r ^= dr
                    c ^= dc
            for bit, (dr, dc) in elems.items():
                if e >> bit & 1:
                    r ^= dr
                    c ^= dc
            out[i, e] = r, c
    return out


@pytest.mark.parametrize("name", sorted(FITS))
def test_gf2_basis_gives_the_jitcoop_table(name):
    if name in UNSUPPORTED:
        pytest.skip(UNSUPPORTED[name])
    length, _, lanes, elems = FITS[name]
    *_, inv = parse(name)
    assert len(lanes) == inv.bit_length() - 1 and len(elems) == length.bit_length() - 1
    lay = jitcoop_layout(name)
    assert lay.length == length
    np.testing.assert_array_equal(lay.coords(), gf2_table(lanes, elems, inv, length))


# -- the README's words -----------------------------------------------------------------------------
def test_readme_nvidia_16x16_lane0():
    lay = L.nvidia(L.USE_A, 16, 16, 16, 32)
    assert lay.length == 8
    assert [tuple(x) for x in lay.coords()[0]] == [(0, 0), (0, 1), (0, 8), (0, 9), (8, 0), (8, 1),
                                                    (8, 8), (8, 9)]


@pytest.mark.parametrize("R,C", [(16, 16), (16, 8), (32, 32), (8, 8), (16, 32), (32, 16), (48, 48),
                                 (16, 64)])
def test_readme_nvidia_accumulator_formula(R, C):
    lay = L.nvidia(L.USE_ACC, R, C, 32, 32).coords()
    lb = (C // 8).bit_length() - 1
    for l in range(32):
        g, t = l >> 2, l & 3
        for e in range(R * C // 32):
            row = g + 8 * (e >> (1 + lb)) if C & (C - 1) == 0 else None
            col = 2 * t + (e & 1) + 8 * ((e >> 1) & (C // 8 - 1)) if C & (C - 1) == 0 else None
            if row is None:          # non power of two: the same pattern with division
                row = g + 8 * (e // (2 * (C // 8)))
                col = 2 * t + e % 2 + 8 * ((e // 2) % (C // 8))
            assert tuple(lay[l, e]) == (row, col), (l, e)


def test_readme_nvidia_8bit_a_and_b_transpose():
    a = L.nvidia(L.USE_A, 16, 32, 8, 32).coords()
    b = L.nvidia(L.USE_B, 32, 16, 8, 32).coords()
    assert a.shape == (32, 16, 2)
    for l in range(32):
        g, t = l >> 2, l & 3
        for e in range(16):
            assert tuple(a[l, e]) == (g + 8 * (e >> 3), 4 * t + (e & 3) + 16 * ((e >> 2) & 1))
    np.testing.assert_array_equal(b, a[..., ::-1])


@pytest.mark.parametrize("use,R,C,lens", [
    (L.USE_A, 64, 64, (64, 64)), (L.USE_B, 64, 64, (64, 32)), (L.USE_ACC, 64, 64, (32, 16)),
    (L.USE_ACC, 128, 128, (128, 64)), (L.USE_A, 128, 32, (64, 64)), (L.USE_A, 32, 32, (16, 16))])
def test_readme_nvidia_workgroup_lengths(use, R, C, lens):
    for inv, n in zip((128, 256), lens):
        lay = L.nvidia(use, R, C, 16, inv)
        assert lay.length == n
        counts = np.bincount(lay.table.ravel(), minlength=R * C)
        W = inv // 32
        if use == L.USE_ACC:
            assert (counts == 1).all()          # each element exactly once
        elif use == L.USE_A:
            assert (counts == W // 2).all()     # replicated across the W/2 warp columns
        else:
            assert (counts == 2).all()          # replicated across the 2 warp rows


@pytest.mark.parametrize("use", [L.USE_A, L.USE_B, L.USE_ACC])
@pytest.mark.parametrize("R,C", [(8, 8), (16, 16), (16, 32), (32, 16), (24, 40)])
def test_readme_lavapipe_formula(use, R, C):
    lay = L.lavapipe(use, R, C, 8)
    assert lay.length == R * C // 8
    got = lay.coords()
    for lane in range(8):
        for e in range(R * C // 8):
            tile, i = divmod(e, 8)
            rt, ct = divmod(tile, C // 8)
            want = (8 * rt + lane, 8 * ct + i) if use == L.USE_B else (8 * rt + i, 8 * ct + lane)
            assert tuple(got[lane, e]) == want


def test_lavapipe_profile_uses_the_measured_layouts():
    p = profile("lavapipe")
    assert p.subgroup_size == 8
    t = SimpleNamespace(rows=8, cols=8, use=L.USE_A, scope=3, elem=SimpleNamespace(width=16))
    np.testing.assert_array_equal(p.layout(t, 8).coords(), np.load(LANEMAPS / "lvp_f16_A_8x8_sg8.npy"))
    t = SimpleNamespace(rows=16, cols=16, use=L.USE_ACC, scope=3, elem=SimpleNamespace(width=32))
    np.testing.assert_array_equal(p.layout(t, 8).coords(), np.load(LANEMAPS / "lvp_f32_C_16x16_sg8.npy"))


def test_nvidia_profile_uses_the_measured_layouts():
    p = profile("nvidia")
    t = SimpleNamespace(rows=32, cols=16, use=L.USE_B, scope=3, elem=SimpleNamespace(width=8))
    np.testing.assert_array_equal(p.layout(t, 32).coords(), np.load(LANEMAPS / "nv_s8_B_32x16_sg32.npy"))
    t = SimpleNamespace(rows=64, cols=64, use=L.USE_B, scope=2, elem=SimpleNamespace(width=16))
    np.testing.assert_array_equal(p.layout(t, 256).coords(),
                                  np.load(LANEMAPS / "nv_f16_B_64x64_wg256.npy"))


def test_generic_layout_is_striped_row_major():
    lay = L.striped(16, 16, 32)
    assert lay.length == 8
    for l in range(32):
        for e in range(8):
            assert lay.table[l, e] == e * 32 + l


def test_rdna3_a_replicated_length_16():
    for inv in (32, 64):
        a = L.rdna3(L.USE_A, 16, 16, inv)
        assert a.length == 16
        assert (np.bincount(a.table.ravel(), minlength=256) == inv // 16).all()


# -- coverage: every layout of every profile holds every element at least once ----------------------
def _types_of(rowset):
    """(use, type name, rows, cols, scope, invocations) of each matrix a property table allows;
    flexible rows at one, two and three multiples of the granularity."""
    out = set()
    for p in rowset:
        mults = (1, 2, 3) if p.flexible else (1,)
        for m in mults:
            for n in ((1, 2) if p.flexible else (1,)):
                M, N, K = p.M * m, p.N * n, p.K * (n if p.flexible else 1)
                inv = p.wg_invocations if p.scope == 2 else 0
                out |= {(L.USE_A, p.A, M, K, p.scope, inv), (L.USE_B, p.B, K, N, p.scope, inv),
                        (L.USE_ACC, p.C, M, N, p.scope, inv), (L.USE_ACC, p.R, M, N, p.scope, inv)}
    return sorted(out)


def _elem(tn):
    width = int(re.sub(r"\D", "", tn) or 8) if tn not in ("e4m3", "e5m2") else 8
    return SimpleNamespace(width=width, key=lambda: tn)


def _check_cover(p, use, tn, R, C, scope, W):
    t = SimpleNamespace(rows=R, cols=C, use=use, scope=scope, elem=_elem(tn),
                        key=lambda: (tn, scope, R, C, use))
    lay = p.layout(t, W)
    inv = p.subgroup_size if scope == 3 else W
    assert lay.table.shape[0] == inv
    assert lay.table.min() >= 0 and lay.table.max() < R * C
    missing = np.setdiff1d(np.arange(R * C), lay.table.ravel())
    assert missing.size == 0, f"{p.name} {tn} use {use} {R}x{C} scope {scope} W {W}: misses {missing[:8]}"


@pytest.mark.parametrize("name", ["nvidia", "lavapipe"])
def test_every_profile_layout_covers_every_element(name):
    p = profile(name)
    types = _types_of(p.coopmat + (p.flexible or []))
    assert types
    for use, tn, R, C, scope, inv in types:
        if scope == 2 and inv == 32:
            continue    # a 32-invocation workgroup: one warp, the subgroup layout
        W = inv if scope == 2 else p.subgroup_size
        _check_cover(p, use, tn, R, C, scope, W)


@pytest.mark.parametrize("sg", [32, 64])
def test_rdna3_layouts_cover(sg):
    p = profile("amd-rdna3", subgroup_size=sg)
    for use, tn, R, C, scope, inv in _types_of(p.coopmat):
        _check_cover(p, use, tn, R, C, scope, sg)


@pytest.mark.parametrize("name", ["generic", "shuffled"])
@pytest.mark.parametrize("sg", [4, 8, 16, 32, 64, 128])
def test_generic_and_shuffled_layouts_cover(name, sg):
    p = profile(name, subgroup_size=sg)
    for use in (L.USE_A, L.USE_B, L.USE_ACC):
        for R, C in ((16, 16), (8, 8), (16, 8), (32, 16), (3, 5), (1, 1), (12, 20)):
            for tn in ("f16", "s8", "f32"):
                _check_cover(p, use, tn, R, C, 3, sg)
        _check_cover(p, use, "f32", 64, 64, 2, 256)
        _check_cover(p, use, "f16", 16, 16, 2, 96)


def test_shuffled_differs_from_generic_and_between_types():
    p = profile("shuffled")
    mk = lambda tn, use: SimpleNamespace(rows=16, cols=16, use=use, scope=3, elem=_elem(tn),
                                         key=lambda: (tn, 3, 16, 16, use))
    a = p.layout(mk("f16", 0), 32).table
    c = p.layout(mk("f32", 2), 32).table
    assert not np.array_equal(a, L.striped(16, 16, 32).table)
    assert not np.array_equal(a, c)
    assert sorted(a.ravel()) == list(range(256))
