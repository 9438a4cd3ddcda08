"""std140 vs std430 (tests/shaders/layouts.comp): the byte layouts of a uniform block (std140), a
storage block (std430), an std430 array of structs and push constants with a row_major matrix are
written here by hand from the GLSL layout rules, as numpy structured dtypes with explicit offsets,
and checked against what the shader reads and writes."""
import numpy as np
import pytest


def padded(fmt, stride):
    """An element of an array (or matrix column/row) occupying `stride` bytes."""
    return np.dtype({"names": ["x"], "formats": [fmt], "offsets": [0], "itemsize": stride})


def struct(itemsize, **fields):
    return np.dtype({"names": list(fields), "formats": [f for f, _ in fields.values()],
                     "offsets": [o for _, o in fields.values()], "itemsize": itemsize})


# std140: arrays and matrix columns/rows are padded to 16 bytes; structs align to 16.
S140 = struct(80, p=("3<f4", 0), w=("<f4", 12), m=((padded("2<f4", 16), (2,)), 16),
              arr=((padded("<f4", 16), (2,)), 48))
UB140 = struct(352, a=("<f4", 0), v3=("3<f4", 16), b=("<f4", 28), v2=("2<f4", 32),
               farr=((padded("<f4", 16), (3,)), 48),
               m3=((padded("3<f4", 16), (3,)), 96),          # 3 columns, stride 16
               rm=((padded("3<f4", 16), (2,)), 144),         # row_major mat3x2: 2 rows of vec3
               s=(S140, 176), iv=((padded("2<i4", 16), (2,)), 256),
               d=("<f8", 288), dv=("3<f8", 320), flag=("<u4", 344))
# std430: arrays of scalars and vec2 are tight; vec3 (and so mat3 columns) still align to 16.
S430 = struct(48, p=("3<f4", 0), w=("<f4", 12), m=("(2,2)<f4", 16), arr=("2<f4", 32))
SB430 = struct(256, a=("<f4", 0), v3=("3<f4", 16), b=("<f4", 28), v2=("2<f4", 32),
               farr=("3<f4", 40), m3=((padded("3<f4", 16), (3,)), 64),
               rm=((padded("3<f4", 16), (2,)), 112), s=(S430, 144), iv=("(2,2)<i4", 192),
               d=("<f8", 208), dv=("3<f8", 224), flag=("<u4", 248))
PUSH = struct(32, pv=("3<f4", 0), pf=("<f4", 12), pm=("(2,2)<f4", 16))   # row_major: rows


def values(rng):
    ints = lambda *shape: rng.integers(-50, 50, shape).astype(np.float64)
    v = dict(a=ints(), v3=ints(3), b=ints(), v2=ints(2), farr=ints(3), m3=ints(3, 3),
             rm=ints(2, 3), s_p=ints(3), s_w=ints(), s_m=ints(2, 2), s_arr=ints(2),
             iv=rng.integers(-1000, 1000, (2, 2)), d=rng.standard_normal() * 1e3,
             dv=rng.standard_normal(3) * 1e3, flag=7)
    return v


def fill_ub(v):
    ub = np.zeros(1, UB140)
    for name in ("a", "v3", "b", "v2", "d", "dv", "flag"):
        ub[name] = v[name]
    ub["farr"]["x"] = v["farr"]
    ub["m3"]["x"] = v["m3"]          # m3[c] = column c
    ub["rm"]["x"] = v["rm"]          # rm[r] = row r (row_major)
    ub["s"]["p"], ub["s"]["w"] = v["s_p"], v["s_w"]
    ub["s"]["m"]["x"] = v["s_m"]     # s.m[c] = column c
    ub["s"]["arr"]["x"] = v["s_arr"]
    ub["iv"]["x"] = v["iv"]
    return ub


def test_dtypes_are_the_sizes_glsl_gives():
    assert (S140.itemsize, UB140.itemsize, S430.itemsize, SB430.itemsize) == (80, 352, 48, 256)
    assert UB140.fields["flag"][1] == 344 and SB430.fields["flag"][1] == 248


@pytest.fixture(scope="module")
def layouts(kc):
    return kc("layouts")


def test_std140_to_std430_copy(layouts, rng):
    """Invocation 0 copies every member; the std430 bytes must hold the same values at the std430
    offsets (and nothing else: the padding stays as it was)."""
    v = values(rng)
    ub = fill_ub(v)
    sb = np.frombuffer(np.full(SB430.itemsize, 0xEE, np.uint8).tobytes(), SB430).copy()
    o = np.zeros(64, np.float32)
    sa = np.zeros(4, S430)
    push = np.zeros(1, PUSH)
    layouts.dispatch(1, {0: ub, 1: sb, 2: o, 3: sa}, push=push)
    f32 = lambda x: np.asarray(x, np.float32)
    for name in ("a", "v3", "b", "v2", "farr"):
        np.testing.assert_array_equal(sb[name][0], f32(v[name]), err_msg=name)
    np.testing.assert_array_equal(sb["m3"]["x"][0], f32(v["m3"]))
    np.testing.assert_array_equal(sb["rm"]["x"][0], f32(v["rm"]))
    np.testing.assert_array_equal(sb["s"]["p"][0], f32(v["s_p"]))
    np.testing.assert_array_equal(sb["s"]["w"][0], f32(v["s_w"]))
    np.testing.assert_array_equal(sb["s"]["m"][0], f32(v["s_m"]))
    np.testing.assert_array_equal(sb["s"]["arr"][0], f32(v["s_arr"]))
    np.testing.assert_array_equal(sb["iv"][0], v["iv"])
    assert sb["d"][0] == v["d"]
    np.testing.assert_array_equal(sb["dv"][0], v["dv"])
    assert sb["flag"][0] == 1                  # a bool stored to memory is 1
    # padding bytes untouched
    raw = sb.view(np.uint8).reshape(-1)
    covered = np.zeros(SB430.itemsize, bool)
    for off, size in [(0, 4), (16, 12), (28, 4), (32, 8), (40, 12), (64, 12), (80, 12), (96, 12),
                      (112, 12), (128, 12), (144, 40), (192, 16), (208, 8), (224, 24), (248, 4)]:
        covered[off:off + size] = True
    assert (raw[~covered] == 0xEE).all()


def test_reads_with_dynamic_indices_and_matrix_arithmetic(layouts, rng):
    v = values(rng)
    ub = fill_ub(v)
    sb = np.zeros(1, SB430)
    o = np.zeros(64, np.float32)
    sa = np.zeros(4, S430)
    sa["p"] = rng.integers(-9, 9, (4, 3))
    sa["m"] = rng.integers(-9, 9, (4, 2, 2))        # sa[i].m[c] = column c
    sa["arr"] = rng.integers(-9, 9, (4, 2))
    push = np.zeros(1, PUSH)
    push["pv"] = [1.5, -2.0, 4.0]
    push["pf"] = 0.25
    push["pm"] = [[1.0, 2.0], [3.0, 4.0]]            # rows (row_major)
    layouts.dispatch(1, {0: ub, 1: sb, 2: o, 3: sa}, push=push)
    vec = np.array([1.0, 10.0, 100.0])
    mv = v["m3"].T @ vec                            # columns m3[c]: (M v)[r] = sum_c m3[c][r] v[c]
    rv = v["rm"] @ vec                              # rows rm[r]
    pm_rows = push["pm"][0].astype(np.float64)
    pmv = pm_rows @ np.array([1.0, 10.0])
    want = np.zeros((4, 16))
    for i in range(4):
        want[i, 0:3] = mv
        want[i, 3:5] = rv
        want[i, 5] = v["farr"][i % 3]
        want[i, 6] = v["s_arr"][i & 1]
        want[i, 7] = v["s_m"][i & 1][(i >> 1) & 1]
        want[i, 8] = v["rm"][i & 1][i % 3]          # rm[column][row] in GLSL
        want[i, 9] = v["iv"][i & 1][1]
        want[i, 10] = sa["m"][i][1][0] + sa["arr"][i][1] * 100.0 + sa["p"][i][2] * 10000.0
        want[i, 11] = push["pv"][0][1] + push["pf"][0]
        want[i, 12:14] = pmv
        want[i, 14] = np.float32(v["d"] * 2.0) + v["m3"][2][i % 3]
        f = np.float32
        want[i, 15] = f(f(f(v["dv"][2]) + f(1000.0)) + f(v["v3"][i % 3])) + f(v["v2"][i & 1])
    np.testing.assert_array_equal(o.reshape(4, 16), want.astype(np.float32))


def test_uniform_block_needs_its_std140_size(layouts):
    import jitcoop
    ub = np.zeros(UB140.itemsize - 8, np.uint8)       # the block is 348 bytes
    with pytest.raises(jitcoop.BindingError):
        layouts.dispatch(1, {0: ub, 1: np.zeros(1, SB430), 2: np.zeros(64, np.float32),
                             3: np.zeros(4, S430)}, push=np.zeros(1, PUSH))
