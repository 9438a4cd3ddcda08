"""Specialization constants, push constants, shared memory, Private globals, functions with
in/out/inout parameters, structs and matrices (tests/shaders/features.comp), against a numpy
transcription of the shader. Inputs are small integers and halves, so every float32 operation is
exact and the order of operations cannot matter."""
import struct as pystruct

import numpy as np
import pytest

import jitcoop

PARTICLE = np.dtype({"names": ["pos", "mass", "cell"], "formats": ["3<f4", "<f4", "2<i4"],
                     "offsets": [0, 12, 16], "itemsize": 32})
PUSH = np.dtype({"names": ["rot", "shift", "count", "bias"],
                 "formats": ["(2,2)<f4", "2<f4", "<u4", "<i4"], "offsets": [0, 16, 24, 28],
                 "itemsize": 32})                 # rot[c] = column c
DEFAULTS = {2: 3, 3: False, 4: 1.5, 5: 10**12, 6: 0xF}

CONFIGS = {
    "defaults": {0: 4, 1: 2},
    "all_set": {0: 6, 1: 3, 2: 5, 3: np.uint32(1), 4: 0.5, 5: -3, 6: 0x1234},
}


def f32(x):
    return np.float32(x)


def reference(spec, parts, push, nwg):
    s = {**DEFAULTS, **spec}
    wx, wy, n = s[0], s[1], s[2]
    negate, scale, big, mask = bool(s[3]), f32(s[4]), s[5], s[6]
    n2 = 2 * n + 1
    W = wx * wy
    rot = push["rot"][0]
    shift = push["shift"][0]
    out = np.zeros((nwg * W, 32), np.float32)
    for w in range(nwg):
        sp = [parts[(w * n2 + k) % push["count"][0]] for k in range(n2)]
        for li in range(W):
            lx, ly = li % wx, li // wx
            g = w * W + li
            acc = np.zeros(3, np.float32)
            weights = []
            for p in sp:
                wk = f32(p["mass"] * scale)
                acc = (acc + p["pos"] * wk).astype(np.float32)
                weights.append(wk)
            a = f32(w * W + ly * wx + (lx + 1) % wx)        # tile[ly][lx+1], after the swap
            b = f32(w * W + ((ly + 1) % wy) * wx + lx)      # tile[ly+1][lx]
            m = sp[li % n2]
            mpos = m["pos"] + np.array([1, 2, 3], np.float32)
            mcell = m["cell"] + np.array([1, -1])
            v = acc[:2] + shift
            r = rot[0] * v[0] + rot[1] * v[1]
            Mm = np.array([[acc[0], acc[2], b], [acc[1], a, n2]], np.float32)   # 2 rows, 3 cols
            tv = Mm.T @ r
            vm = r @ Mm
            C = np.array([[1, 4], [2, 5], [3, 6]], np.float32)                   # mat2x3 columns
            MM = Mm @ C
            row = np.zeros(32, np.float64)
            row[0:3] = acc
            row[3], row[4] = a, b
            row[5:8] = mpos
            row[8:10] = mcell
            row[10] = m["mass"]
            row[11:13] = r
            row[13:16] = tv
            row[16:19] = vm
            row[19:23] = [MM[0, 0], MM[1, 0], MM[0, 1], MM[1, 1]]   # MM[col][row]
            row[23] = 3 * mpos[1]
            row[24] = sum(weights)
            row[25] = n2 + push["bias"][0]
            row[26] = n2 + 100 * wx + 1000 * wy
            row[27] = 7 if n > 4 else 11
            row[28] = ((mask << 4) | (~mask & 0xFF00)) & 0xFFFFFFFF
            row[29] = -n
            row[30] = -1.0 if negate else 1.0
            row[31] = big % 1000003                     # OpSMod: the sign of the divisor
            out[g] = row
    return out


def inputs(rng, count):
    parts = np.zeros(count, PARTICLE)
    parts["pos"] = rng.integers(-8, 9, (count, 3))
    parts["mass"] = rng.integers(1, 9, count) * 0.5
    parts["cell"] = rng.integers(-100, 100, (count, 2))
    push = np.zeros(1, PUSH)
    push["rot"] = rng.integers(-3, 4, (2, 2))
    push["shift"] = rng.integers(-4, 5, 2) * 0.5
    push["count"] = count
    push["bias"] = -17
    return parts, push


@pytest.mark.parametrize("config", list(CONFIGS))
def test_features(kc, rng, config):
    spec = CONFIGS[config]
    k = kc("features", spec=spec)
    assert tuple(k.local_size) == (spec[0], spec[1], 1)
    nwg = 3
    parts, push = inputs(rng, 13)
    o = np.full(nwg * spec[0] * spec[1] * 32, np.nan, np.float32)
    k.dispatch((nwg, 1, 1), {0: parts, 1: o}, push=push)
    want = reference(spec, parts, push, nwg)
    got = o.reshape(-1, 32)
    for j in range(32):
        np.testing.assert_array_equal(got[:, j], want[:, j], err_msg=f"output {j}")


def test_push_constants_as_bytes(kc, rng):
    """Push constants as raw bytes (packed here with struct, independent of the dtype)."""
    spec = CONFIGS["defaults"]
    k = kc("features", spec=spec)
    parts, push = inputs(rng, 5)
    raw = pystruct.pack("<4f2fIi", *push["rot"][0].reshape(-1), *push["shift"][0], 5, -17)
    assert raw == push.tobytes()
    o1 = np.zeros(3 * 8 * 32, np.float32)
    k.dispatch((3, 1, 1), {0: parts, 1: o1}, push=raw)
    np.testing.assert_array_equal(o1.reshape(-1, 32), reference(spec, parts, push, 3))


@pytest.mark.parametrize("value, flag", [
    (0, 0), (False, 0), (np.uint32(0), 0), (np.uint32(1), 1),
    (b"\0\0\0\0", 0), (b"\1\0\0\0", 1),
])
def test_spec_bool_from_a_four_byte_value(kc, value, flag):
    """A bool spec constant from a VkBool32-like value (default true in the shader): zero is
    false whatever its type. Raw bytes must be read as a little-endian VkBool32, or refused."""
    try:
        k = kc.module("spec_bool").kernel("main", spec={0: value})
    except jitcoop.BindingError:
        assert isinstance(value, bytes)
        return
    o = np.full(2, -9, np.int32)
    k.dispatch(1, {0: o})
    np.testing.assert_array_equal(o, [flag, 5])


def test_spec_errors(kc):
    m = kc.module("features")
    with pytest.raises(jitcoop.BindingError):
        m.kernel("main", spec={0: 4, 1: 2, 9: 1})          # no SpecId 9
    with pytest.raises(jitcoop.BindingError):
        m.kernel("main", spec={0: 4, 1: 2, 2: 2.5})        # an int spec constant from 2.5
