"""Pictures (jitcoop.plot), rendered with matplotlib's Agg backend, checked by the data they show:

- lane layouts against the lane maps measured on an H100 and on lavapipe (tests/oracle/lanemaps);
- tensor load addressing against the reference of tests/test_coopmat2_tensor.py (written from the
  seed's pseudo-code, element by element) over random layouts and views, and a hand-worked tile;
- profile comparisons against ns per element worked out by hand, and `jitcoop profile --plot`.
"""
import re
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from jitcoop import plot  # noqa: E402
from jitcoop.cli import main  # noqa: E402
from jitcoop.plot import tensor as T  # noqa: E402

LANEMAPS = Path(__file__).resolve().parent / "oracle" / "lanemaps"
PNG = b"\x89PNG\r\n\x1a\n"


def _saved(fig, tmp_path, name="fig.png"):
    out = tmp_path / name
    fig.savefig(out, dpi=50)
    assert out.read_bytes()[:8] == PNG
    matplotlib.pyplot.close(fig)


def _oracle(name):
    """lowest invocation, its element and the copies of each (row, col), from a measured map."""
    m = np.load(LANEMAPS / f"{name}.npy")                  # [invocations, length, 2] = (row, col)
    rows, cols = m[..., 0].max() + 1, m[..., 1].max() + 1
    lane = np.full((rows, cols), -1)
    elem = np.full((rows, cols), -1)
    copies = np.zeros((rows, cols), int)
    for i in range(m.shape[0]):
        for e in range(m.shape[1]):
            r, c = m[i, e]
            copies[r, c] += 1
            if lane[r, c] < 0:
                lane[r, c], elem[r, c] = i, e
    return lane, elem, copies


@pytest.mark.parametrize("name, args", [
    ("nv_f16_A_16x16_sg32", ("nvidia", "f16", 16, 16, "A")),
    ("nv_e4m3_B_32x16_sg32", ("nvidia", "e4m3", 32, 16, "B")),
    ("nv_f32_C_16x8_sg32", ("nvidia", "f32", 16, 8, "C")),
    ("nv_f16_A_64x64_wg128", ("nvidia", "f16", 64, 64, "A", "workgroup", 128)),   # A replicated
    ("lvp_f16_B_16x16_sg8", ("lavapipe", "f16", 16, 16, "B")),
])
def test_lane_layout_shows_the_measured_lane_maps(tmp_path, name, args):
    lane, elem, copies = _oracle(name)
    fig = plot.lane_layout(*args)
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), lane)
    if lane.size <= 32 * 32:
        labels = [t.get_text() for t in ax.texts]
        assert labels == [f"{lane[r, c]}.{elem[r, c]}" for r in range(lane.shape[0]) for c in range(lane.shape[1])]
    lm = plot.lane_map(*args)
    np.testing.assert_array_equal(lm.copies, copies)
    if copies.max() > 1:
        assert f"each element held {copies.max()} times" in ax.get_title()
    _saved(fig, tmp_path)


def test_lane_map_is_what_a_shader_sees_on_shuffled():
    """notebooks/shaders/lanes.comp stores 100 * invocation + e from element e of each fragment:
    the stored matrix is the layout the kernel used (shuffled: a random one per matrix type)."""
    import jitcoop
    shader = Path(__file__).resolve().parents[1] / "notebooks" / "shaders" / "lanes.spv"
    out = np.zeros((16, 16), np.float32)
    jitcoop.Device("shuffled").load(shader).kernel()(1, held=out)
    lm = plot.lane_map("shuffled", "f32", 16, 16, "C")
    np.testing.assert_array_equal(out.astype(int) // 100, lm.lane)
    np.testing.assert_array_equal(out.astype(int) % 100, lm.element)


def test_lane_layout_of_a_device_and_unsupported_types():
    import jitcoop
    lm = plot.lane_map(jitcoop.Device("generic", subgroup_size=8), "f32", 8, 8, "C")
    # generic: element e of invocation l is linear index e * 8 + l (striped)
    np.testing.assert_array_equal(lm.lane, np.tile(np.arange(8), (8, 1)))
    np.testing.assert_array_equal(lm.element, np.tile(np.arange(8)[:, None], (1, 8)))
    # a type outside the profile's tables: its layout (measured on the H100 all the same), and
    # why a kernel could not use it; where the profile has no layout either, an error
    lm = plot.lane_map("nvidia", "e4m3", 32, 16, "B")
    assert lm.problem == "the nvidia profile has no 32 x 16 e4m3 B matrix at subgroup scope"
    assert lm.problem in plot.lane_layout("nvidia", "e4m3", 32, 16, "B").axes[0].get_title()
    with pytest.raises(ValueError, match="the nvidia profile has no 8 x 8 s8 A matrix at subgroup scope"):
        plot.lane_map("nvidia", "s8", 8, 8, "A")
    with pytest.raises(ValueError, match="unknown component type 'f8'"):
        plot.lane_map("generic", "f8", 16, 16, "A")


# -- tensor addressing -------------------------------------------------------------------------------
def test_tensor_load_hand_worked(tmp_path):
    """A 10 x 12 tensor, an 8 x 8 tile sliced at (-3, 6), ClampToEdge: rows -3..4 read rows
    0,0,0,0,1,2,3,4 and columns 6..13 read 6..11,11,11; element (r, c) is r * 12 + c."""
    layout = plot.TensorLayout((10, 12), offset=(-3, 6), span=(8, 8), clamp="ClampToEdge")
    a = plot.tensor_addresses(8, 8, layout)
    rows = np.array([0, 0, 0, 0, 1, 2, 3, 4])
    cols = np.array([6, 7, 8, 9, 10, 11, 11, 11])
    np.testing.assert_array_equal(a.index, rows[:, None] * 12 + cols[None, :])
    moved = (np.arange(8)[:, None] < 3) | (np.arange(8)[None, :] >= 6)
    np.testing.assert_array_equal(a.status, np.where(moved, T.CLAMPED, T.READ))
    fig = plot.tensor_load(8, 8, layout)
    counts = fig.axes[0].images[0].get_array()
    assert counts.shape == (10, 12) and counts.sum() == 64
    assert counts[0, 11] == 12 and counts[0, 6] == 4 and counts[4, 6] == 1 and counts[5:].sum() == 0
    np.testing.assert_array_equal(fig.axes[1].images[0].get_array(), a.status)
    assert "0,11" in [t.get_text() for t in fig.axes[1].texts]
    _saved(fig, tmp_path)
    # Constant: the same tile reads the clamp value outside; a store drops those elements
    for store in (False, True):
        c = plot.tensor_addresses(8, 8, plot.TensorLayout((10, 12), offset=(-3, 6), span=(8, 8),
                                                          clamp="Constant" if not store else "Repeat"), store=store)
        np.testing.assert_array_equal(c.status, np.where(moved, T.CLAMP_VALUE, T.READ))
        assert (c.index[moved] == -1).all()


def _reference():
    import test_coopmat2_tensor as R
    return R


def _random_case(rng, R):
    D = int(rng.integers(1, 5))
    clamp = int(rng.integers(0, 5))
    dims = [int(x) for x in rng.integers(1, 9, D)]
    block = [int(x) for x in rng.integers(1, 3, D)]
    lay = R.Layout(D, clamp).set_block_size(*block).set_dimension(*dims)
    if rng.random() < 0.7:
        pairs = []
        for d in range(D):
            pairs += [int(rng.integers(-4, 5)), int(rng.integers(1, 12))]
        lay.slice(*pairs)
    if rng.random() < 0.3:
        lay.set_stride(*[int(x) for x in rng.integers(0, 40, D)])
    view = None
    if rng.random() < 0.5:
        has_dims = rng.random() < 0.5
        view = R.View(D, has_dims, list(rng.permutation(D)))
        if has_dims:
            view.set_dimension(*[int(x) for x in rng.integers(1, 9, D)])
        if rng.random() < 0.5:
            view.set_clip(int(rng.integers(0, 4)), int(rng.integers(1, 9)), int(rng.integers(0, 4)),
                          int(rng.integers(1, 9)))
    return lay, view


def test_tensor_addresses_match_the_seed_reference():
    """Random layouts (1 to 4 dimensions, block sizes, slices, strides) and views (with and
    without dimensions, permutations, clip regions), every clamp mode, loads and stores: the
    numpy addressing of the pictures gives what the element-by-element reference gives."""
    R = _reference()
    rng = np.random.default_rng(20)
    rows, cols = 6, 10
    seen = set()
    for _ in range(300):
        lay, view = _random_case(rng, R)
        store = bool(rng.random() < 0.3)
        mine = plot.tensor_addresses(rows, cols, plot.TensorLayout(
            lay.dim, lay.block, lay.stride, [R.i32(o) for o in lay.offset], lay.span,
            T.CLAMP_MODES[lay.clamp]),
            None if view is None else plot.TensorView(view.dim if view.has_dims else None, view.stride,
                                                      view.perm, view.clip), store=store)
        for r in range(rows):
            for c in range(cols):
                try:
                    want = R.element(lay, view, r, c, cols, store)
                except R.Undefined:
                    want = "undefined"
                got = mine.status[r, c]
                if want is R.SKIP:
                    assert got == T.CLIPPED
                elif want is R.CLAMPED:
                    assert got == T.CLAMP_VALUE
                elif want == "undefined":
                    assert got == T.UNDEFINED
                else:
                    assert got in (T.READ, T.CLAMPED) and mine.index[r, c] == want[0], (r, c, lay.__dict__)
                    assert tuple(mine.coord[r, c] // lay.block) == tuple(want[1])
                seen.add(int(got))
    assert seen == {T.READ, T.CLIPPED, T.CLAMP_VALUE, T.CLAMPED, T.UNDEFINED}


# -- profile comparison -------------------------------------------------------------------------------
def _report(callbacks, instr_seconds, wall):
    rows = [dict(function="decode", role=role, path=path, instruction="%1 = OpCooperativeMatrixLoadTensorNV @0",
                 calls=n, elements=n, seconds=s, ns_per_element=s * 1e9 / n, bytes_read=n // 2)
            for role, path, n, s in callbacks]
    return SimpleNamespace(callbacks=rows, instructions=[dict(seconds=x) for x in instr_seconds],
                           wall_seconds=wall)


def test_profile_comparison_bars_are_the_profiles_numbers(tmp_path):
    """A: two scalar decode sites, 1000 + 3000 elements in 2 + 10 us -> 3 ns per element; B: a
    vector decode, 4000 elements in 20 us -> 5 ns. Collective instructions 1 + 2 ms and 4 ms;
    dispatches 10 and 12 ms."""
    a = _report([("DecodeFunc", "scalar", 1000, 2e-6), ("DecodeFunc", "scalar", 3000, 10e-6)], [1e-3, 2e-3], 0.010)
    b = _report([("DecodeVectorFunc", "vector", 4000, 20e-6)], [4e-3], 0.012)
    fig = plot.profile_comparison(a, b, "q4_scalar.spv", "q4_vector.spv")
    left, right = fig.axes
    assert [t.get_text() for t in left.get_yticklabels()] == ["DecodeFunc / scalar", "DecodeVectorFunc / vector"]
    np.testing.assert_allclose([p.get_width() for p in left.containers[0]], [3.0, 0.0])
    np.testing.assert_allclose([p.get_width() for p in left.containers[1]], [0.0, 5.0])
    assert [t.get_text() for t in right.get_yticklabels()] == ["collective instructions", "dispatch wall time"]
    np.testing.assert_allclose([p.get_width() for p in right.containers[0]], [3.0, 10.0])
    np.testing.assert_allclose([p.get_width() for p in right.containers[1]], [4.0, 12.0])
    assert fig.get_suptitle() == "A = q4_scalar.spv   B = q4_vector.spv"
    _saved(fig, tmp_path)


def test_cli_profile_compare_plot(tmp_path, capsys):
    from jitcoop.examples import HERE
    x = tmp_path / "x.npy"
    y = tmp_path / "y.npy"
    np.save(x, np.arange(64, dtype=np.float32))
    np.save(y, np.ones(64, np.float32))
    out = tmp_path / "cmp.png"
    args = ["profile", str(HERE / "saxpy.spv"), "--grid", "1", "--buffer", f"0={x}", "--buffer", f"1={y}",
            "--push-values", "f32:2,u32:64"]
    assert main(args + ["--compare", str(HERE / "saxpy.spv"), "--plot", str(out)]) == 0
    cap = capsys.readouterr()
    assert "dispatch wall time (ms)" in cap.out and f"chart written to {out}" in cap.err
    assert out.read_bytes()[:8] == PNG
    assert main(args + ["--plot", str(out)]) == 2
    assert re.search(r"--plot draws a comparison: give --compare B.spv too", capsys.readouterr().err)
