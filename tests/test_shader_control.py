"""Barriers and divergent control flow, against numpy references written from the GLSL."""
import numpy as np
import pytest

import jitcoop
from conftest import SHADERS


def test_workgroup_prefix_sum_with_barriers():
    k = jitcoop.Device().load(SHADERS / "core" / "scan256.spv").kernel()
    rng = np.random.default_rng(3)
    a = rng.integers(0, 1000, 256 * 6, dtype=np.uint32)
    b = np.zeros_like(a)
    k.dispatch((6, 1, 1), {0: a, 1: b})
    ref = np.cumsum(a.reshape(6, 256), axis=1, dtype=np.uint64).astype(np.uint32).reshape(-1)
    np.testing.assert_array_equal(b, ref)


def _reference(a, sg):
    i = np.arange(64)
    acc = sum(2 * a[(i + k) % 64] for k in range(3))
    first = []
    for st in range(64):
        r = -1
        for j in range(st, 64):
            if a[j] == 7:
                r = j
                break
            if a[j] < 0:
                break
        first.append(r)
    t = []
    for v in range(64):
        n = v % 5 + int(np.fmod(a[v], 3))          # GLSL % on ints compiles to OpSMod ...
        n = v % 5 + (a[v] % 3)                      # ... whose sign follows the divisor, as Python's
        s = 0
        for k in range(n):
            if k == 2:
                continue
            if k > 4:
                break
            s += k
        t.append(s)

    def sw(v):
        c = v & 7
        if c == 0:
            return 11
        if c == 1:
            return 10
        if c in (2, 3):
            return 100
        if c == 4:
            return -5
        return 1000
    switch = [sw(int(a[v]) + v) for v in range(64)]
    s = np.zeros(64, np.int64)
    for g in range(0, 64, sg):
        lanes = [l for l in range(g, min(64, g + sg)) if l % 3 == 0]
        for l in lanes:
            s[l] = sum(lanes)
    tail = np.where(a == 3, -9, 1)
    return np.concatenate([acc, first, t, switch, s, tail]).astype(np.int32)


@pytest.mark.parametrize("variant", ["control.spv", "control.opt.spv"])
@pytest.mark.parametrize("sg", [8, 32, 64])
def test_divergent_control_flow(variant, sg):
    k = jitcoop.Device(subgroup_size=sg).load(SHADERS / "core" / variant).kernel()
    a = (np.arange(64, dtype=np.int32) * 7) % 11
    a[40] = -5
    a[5] = 3
    o = np.full(384, -9, np.int32)
    k.dispatch(1, {0: o, 1: a})
    np.testing.assert_array_equal(o, _reference(a, sg))


@pytest.mark.parametrize("name", ["nesting.spv", "nesting.opt.spv"])
def test_deep_nesting_keeps_its_meaning(name):
    """Deeply nested control flow (nesting.comp: 20 nested ifs, two loops back to back, a
    switch, a barrier between; as glslang writes it and after spirv-opt -O) gives what the GLSL
    says, written out here in numpy."""
    rng = np.random.default_rng(11)
    x = np.concatenate([np.arange(26), rng.integers(0, 1 << 20, 102)]).astype(np.uint32)
    o = np.zeros_like(x)
    k = jitcoop.Device().load(SHADERS / "core" / name).kernel()
    k.dispatch(2, {0: x, 1: o})
    v = x.astype(np.int64)
    m = np.minimum(v, 20)
    acc = m * (m + 1) // 2 + np.where(v > 19, 1000, 0)
    a, b = v & 7, v & 3
    s = a * (a - 1) // 2 + 3 * (b * (b - 1) // 2)
    s = np.where(v % 4 == 0, s + 100, np.where(v % 4 == 1, s ^ 0x55, s + v))
    r = ((acc * 1000 + s) & 0xFFFFFFFF).reshape(2, 64)
    np.testing.assert_array_equal(o, np.roll(r, -1, axis=1).reshape(-1))


def _loops_reference(x, n, start, wrapfrom):
    """loops.comp, written out in Python integers (uint arithmetic modulo 2^32)."""
    M = 0xFFFFFFFF
    out = []
    for wg in range(len(x) // 256):
        sh = [(int(v) * 3 + wg * 256) & M for v in x[wg * 256:(wg + 1) * 256]]
        for lid in range(64):
            acc = sum(sh[(lid + i * 37) & 255] for i in range(8)) & M
            for i in range(lid, 201, 64):
                acc = (acc * 5 + sh[255 - i]) & M
            h = 1
            for i in range(lid, n, 3):
                h = (h * 31 + i) & M
            for i in range(start, 4):
                h = (h * 17 + i) & M
            i = (wrapfrom + (lid & 15)) & M
            while i < 0xFFFFFFF0:
                h = (h * 13 + i) & M
                i = (i + 48) & M
            out.append(acc ^ h)
    return np.array(out, np.uint32)


LOOPS_PUSH = "<IiI"                 # n, start, wrapfrom


@pytest.mark.parametrize("spv", ["loops.opt.spv", "loops.spv"])
def test_counted_loops_end_without_cancel_checks_only_when_they_must(spv):
    """The cancel check (the way out of a spinning shader) is left out of counted loops that
    end within a few iterations, and kept where the dispatch decides the count; every loop
    still computes what the GLSL says, and the kept checks still stop the loops that spin.
    Optimized, and as glslang writes them (the header branches to a block with the test)."""
    import struct
    from jitcoop.errors import ExecutionError
    k = jitcoop.Device().load(SHADERS / "core" / spv).kernel(lane_groups=8)
    # Three lane-code checks are left, one per loop whose count the push constants decide, and
    # the one at the start of every workgroup; the lane code's vector copy (lane groups, forced
    # on) has the three loops' checks again.
    assert k.meta.lane_group == 8
    assert k.source.count("load volatile i64, ptr %cancel") == 4 + 3
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1 << 32, 512, dtype=np.uint32)
    o = np.zeros(128, np.uint32)
    for n, start, wrapfrom in [(100, -5, 0xFFFFFF90), (7, 3, 0xFFFFFFC0), (0, 4, 0xFFFFFFF0)]:
        k.dispatch(2, {0: x, 1: o}, push=struct.pack(LOOPS_PUSH, n, start, wrapfrom))
        np.testing.assert_array_equal(o, _loops_reference(x, n, start, wrapfrom))
    # Each of those loops spins for billions of iterations with these; the timeout stops it.
    for n, start, wrapfrom in [(0xFFFFFFFF, 4, 0xFFFFFFF0), (0, -(1 << 31), 0xFFFFFFF0), (0, 4, 0)]:
        o = np.full(128, 7, np.uint32)
        with pytest.raises(ExecutionError, match="timeout"):
            k.dispatch(2, {0: x, 1: o}, push=struct.pack(LOOPS_PUSH, n, start, wrapfrom),
                       timeout=0.3)
        np.testing.assert_array_equal(o, 7)
