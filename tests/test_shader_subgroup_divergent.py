"""Subgroup operations inside divergent code (tests/shaders/subgroup_divergent.comp): only the
invocations that execute an operation take part, in `if`/`else` branches, a nested `if`, loops
with per-invocation trip counts (each iteration has its own active set), a loop left by `break`,
after reconvergence and after an early return. Against a numpy model that tracks the active set."""
import numpy as np
import pytest

WG, NWG = 64, 3
NT = WG * NWG
ROWS = 26
SENT = 0xA5A5A5A5
M32 = 0xFFFFFFFF


def subgroups(sg):
    for start in range(0, NT, sg):             # 64 is a multiple of every size tested
        yield np.arange(start, start + sg)


def reference(x, m, sg):
    o = np.full((ROWS, NT), SENT, np.uint64)
    x = x.astype(np.uint64)
    for lanes in subgroups(sg):
        sub = lanes - lanes[0]
        xs, ms = x[lanes], m[lanes]
        on = (ms & 1) != 0
        act, ids = lanes[on], sub[on]
        if len(act):
            xa = xs[on]
            o[0, act] = xa.sum() % 2**32
            o[1, act] = np.cumsum(xa) % 2**32
            o[2, act] = np.concatenate([[0], np.maximum.accumulate(xa)[:-1]])
            o[3, act] = xa.min()
            o[4, act] = np.bitwise_xor.accumulate(xa)
            ball = sum(1 << int(i) for i in ids)
            o[5, act] = ball & M32
            o[6, act] = ball >> 32
            o[7, act] = len(act)
            o[8, act] = np.arange(len(act)) == 0
            o[9, act] = xa[0]
            o[10, act] = bool((xa >= 1000).all())
            o[11, act] = bool((xa & 15 == 0).any())
            o[12, act] = bool((xa >> 12 == xa[0] >> 12).all())
            o[13, act] = xa[-1]
            for c in range(0, len(sub), 4):
                sel = on & (sub // 4 == c // 4)
                o[14, lanes[sel]] = xs[sel].sum() % 2**32
            odd = (xa & 1).astype(np.int64)
            o[15, act] = np.cumsum(odd) - odd
            on2 = on & ((ms & 2) != 0)
            if on2.any():
                o[16, lanes[on2]] = xs[on2].max()
                o[17, lanes[on2]] = np.arange(on2.sum())
        off = lanes[~on]
        if len(off):
            o[18, off] = xs[~on].sum() % 2**32
            o[19, off] = np.arange(len(off)) == 0
        trips = (ms >> 4) & 7
        acc = np.zeros(len(lanes), np.uint64)
        seen = np.zeros(len(lanes), np.uint64)
        for i in range(8):
            a = trips > i
            if a.any():
                acc[a] = (acc[a] + (xs[a] + i).sum()) % 2**32
                seen[a] = (seen[a] * 3 + a.sum()) % 2**32
        o[20, lanes], o[21, lanes] = acc, seen
        stop = xs & 3
        for j in range(4):
            a = stop >= j
            rank = np.cumsum(a)
            done = a & (stop == j)
            o[22, lanes[done]] = (j + 1) * rank[done]
        o[23, lanes] = len(lanes)
        stay = (ms & 256) == 0
        o[24, lanes[stay]] = stay.sum()
        o[25, lanes[stay]] = (np.cumsum(xs[stay]) - xs[stay]) % 2**32
    return o


def inputs(rng, sg):
    x = rng.integers(0, 1 << 16, NT).astype(np.uint32)
    m = rng.integers(0, 1 << 9, NT).astype(np.uint32)
    x[:sg] = rng.integers(1000, 4096, sg)           # all >= 1000, equal x >> 12 in subgroup 0
    m[:sg] |= 1
    m[sg:2 * sg] &= ~np.uint32(1)                   # nobody in the `if` of subgroup 1
    m[2 * sg:3 * sg] |= 1                           # and everybody in that of subgroup 2 ...
    m[2 * sg] &= ~np.uint32(1)                      # ... but its first lane
    x[(3 * sg + 5) % NT] = 32                             # any((x & 15) == 0) somewhere
    return x, m


@pytest.mark.parametrize("sg", [pytest.param(8, marks=pytest.mark.slow), 32, pytest.param(64, marks=pytest.mark.slow)])  # 8 and 64: slow set
def test_subgroup_operations_in_divergent_code(kc, rng, sg):
    k = kc("subgroup_divergent", sg=sg)
    x, m = inputs(rng, sg)
    o = np.full(ROWS * NT, SENT, np.uint32)
    k.dispatch((NWG, 1, 1), {0: x, 1: m, 2: o})
    want = reference(x, m, sg)
    o = o.reshape(ROWS, NT)
    for r in range(ROWS):
        np.testing.assert_array_equal(o[r], want[r], err_msg=f"row {r}")
