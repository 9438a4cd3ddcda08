"""Divergent control flow (tests/shaders/divergent.comp: per-lane trip counts, break/continue,
nested loops, while/do-while, switch with fallthrough, return from a case, early return from main,
a subgroup reduction after reconvergence), as glslang wrote it and after `spirv-opt -O` (phis,
selects, merged blocks), against a Python transcription of the GLSL."""
import numpy as np
import pytest

SLOTS = 9
SENTINEL = -12345


def _classify(v):
    r = 0
    c = v & 15
    if c == 12:
        return 100 + v
    if c in (0, 1):
        r = (1 if c == 0 else 0) + 2
    elif c in (2, 3, 4):
        r = (4 if c in (2, 3) else 0) + 8 + 16
    elif c in (7, 8):
        r = (-1 if c == 7 else 0) * 3
    else:
        r = 16
    return r


def _invocation(n):
    """The values of slots 0..7 one invocation writes (None: not written)."""
    out = [None] * SLOTS
    if n < 0:
        return out
    s = iters = 0
    for i in range(n & 63):
        iters += 1
        if i % 3 == 1:
            continue
        if s > 200:
            break
        s += i * ((n >> 6) & 7) + 1
    out[0], out[1] = s, iters
    t = 0
    for i in range(n & 7):
        for j in range(10):
            if j > i:
                break
            if (i + j) & 1 == 0:
                continue
            t += i * 10 + j
        if t > 60:
            break
    out[2] = t
    c, steps = (n & 1023) + 1, 0
    while c != 1:
        c = (3 * c + 1) % 2**32 if c & 1 else c >> 1
        steps += 1
        if steps >= 100:
            break
    out[3] = steps
    d = 3
    while d < (n & 31):
        d += 3
    out[4] = d
    sw = 0
    for k in range(6):
        case = (n + k) & 3
        if case == 2:
            continue
        if case == 0:
            sw += 11
        elif case == 1:
            sw += 10
        else:
            sw += 100
        sw *= 2
    out[5] = sw
    out[6] = _classify(n)
    out[7] = None
    for i in range(8):
        if (n >> 10) & 7 == i:
            out[7] = i * 100
            break
        if i == 5 and n & 0x8000:
            break
    else:
        out[7] = -1
    return out


def _reference(a, sg):
    o = np.full((len(a), SLOTS), SENTINEL, np.int64)
    for g, n in enumerate(a):
        for slot, v in enumerate(_invocation(int(n))):
            if v is not None:
                o[g, slot] = v
    for start in range(0, len(a), sg):             # subgroups: sg consecutive invocations
        alive = a[start:start + sg] >= 0
        o[start:start + sg, 8] = np.where(alive, alive.sum(), SENTINEL)
    return o.astype(np.int32)


def _inputs(rng, n):
    a = rng.integers(0, 1 << 16, n).astype(np.int32)
    neg = rng.random(n) < 0.2
    a[neg] = -rng.integers(1, 100, neg.sum())
    a[: 16] = np.arange(16)                         # every switch case of classify()
    a[16:24] = np.arange(8) << 10 | 0x8000          # early returns with and without a value
    a[64:128] = -5                                  # a whole workgroup returns at once
    return a


def run_and_check(k, a, sg):
    """Dispatch divergent.comp over inputs `a` (64 invocations a workgroup) and compare every
    slot with the transcription."""
    o = np.full(len(a) * SLOTS, SENTINEL, np.int32)
    k.dispatch((len(a) // 64, 1, 1), {0: a, 1: o})
    want = _reference(a, sg)
    got = o.reshape(-1, SLOTS)
    for slot in range(SLOTS):
        np.testing.assert_array_equal(got[:, slot], want[:, slot], err_msg=f"slot {slot}")


@pytest.mark.parametrize("variant, sg", [("divergent", 8), ("divergent.opt", 32)])
def test_divergent_control_flow(kc, rng, variant, sg):
    run_and_check(kc(variant, sg=sg), _inputs(rng, 64 * 5), sg)
