"""Subgroup operations at subgroup sizes 8, 32 and 64, including divergent use, against a numpy
model of the GLSL subgroup built-ins (a subgroup is gl_SubgroupSize consecutive invocations)."""
import numpy as np
import pytest

import jitcoop
from conftest import SHADERS

N = 128


def _groups(sg):
    return [np.arange(g, g + sg) for g in range(0, N, sg)]


def _reference(x, sg):
    rows = {}
    out = lambda r: rows.setdefault(r, np.zeros(N, np.int64))
    for lanes in _groups(sg):
        v = x[lanes]
        sub = np.arange(sg)
        out(0)[lanes] = v.sum()
        out(1)[lanes] = np.prod(v % 3 + 1)
        out(2)[lanes] = v.min()
        out(3)[lanes] = v.max()
        out(4)[lanes] = np.bitwise_and.reduce(v)
        out(5)[lanes] = np.bitwise_or.reduce(v)
        out(6)[lanes] = np.bitwise_xor.reduce(v)
        out(7)[lanes] = np.cumsum(v)
        out(8)[lanes] = np.cumsum(v) - v
        out(9)[lanes] = [v[:j].min() if j else 2**31 - 1 for j in range(sg)]
        out(10)[lanes] = v[(sub * 5 + 3) % sg]
        out(11)[lanes] = v[sub ^ 3]
        out(12)[lanes] = np.where(sub >= 2, v[np.maximum(sub - 2, 0)], v)     # outside: own value
        out(13)[lanes] = np.where(sub + 1 < sg, v[np.minimum(sub + 1, sg - 1)], v)
        out(14)[lanes] = v[2]
        out(15)[lanes] = v[0]
        pos = v > 0
        out(16)[lanes] = pos.sum()
        out(17)[lanes] = np.cumsum(pos)
        out(18)[lanes] = np.argmax(pos) if pos.any() else -1
        out(19)[lanes] = (sg - 1 - np.argmax(pos[::-1])) if pos.any() else -1
        out(20)[lanes] = (sub == 0).astype(int)
        out(21)[lanes] = int((v > -100).all())
        out(22)[lanes] = int((v == 7).any())
        out(23)[lanes] = int((v == v[0]).all())
        out(24)[lanes] = np.repeat(v.reshape(-1, 4).sum(1), 4)
        out(25)[lanes] = np.repeat(v.reshape(-1, 8).max(1), 8)
        out(26)[lanes] = v[(sub & ~3) | 1]
        out(27)[lanes] = v[sub ^ 1]
        out(28)[lanes] = v[sub ^ 2]
        out(29)[lanes] = v[sub ^ 3]
        out(30)[lanes] = sub + 1000 * (lanes[0] // sg) + 100000 * (N // sg)
        even = lanes[::2]
        ve = x[even]
        out(31)[lanes] = -1
        out(32)[lanes] = -1
        out(33)[lanes] = -1
        out(34)[lanes] = -1
        out(31)[even] = ve.sum()
        out(32)[even] = np.cumsum(ve)
        out(33)[even] = (np.arange(len(even)) == 0).astype(int)
        out(34)[even] = len(even)
    return np.concatenate([rows[r] for r in range(35)]).astype(np.int32)


@pytest.mark.parametrize("sg", [pytest.param(8, marks=pytest.mark.slow), 32, pytest.param(64, marks=pytest.mark.slow)])  # 8 and 64: slow set
def test_subgroup_operations(sg):
    k = jitcoop.Device(subgroup_size=sg).load(SHADERS / "core" / "subgroups.spv").kernel()
    rng = np.random.default_rng(sg)
    x = rng.integers(-20, 20, N).astype(np.int32)
    x[sg + 1] = 7
    if sg < N:
        x[2 * sg: 3 * sg] = 5          # one subgroup all equal
    o = np.zeros(35 * N, np.int32)
    f = np.zeros(2 * N, np.float32)
    k.dispatch(1, {0: x, 1: o, 2: f})
    ref = _reference(x.astype(np.int64), sg)
    for r in range(35):
        np.testing.assert_array_equal(o[r * N:(r + 1) * N], ref[r * N:(r + 1) * N], err_msg=f"row {r}")
    half = (x * np.float32(0.5)).astype(np.float32)
    for lanes in _groups(sg):
        # float sums: exact here (halves of small integers)
        np.testing.assert_array_equal(f[lanes], half[lanes].sum(dtype=np.float64))
        np.testing.assert_array_equal(f[N + lanes], half[lanes].max())
