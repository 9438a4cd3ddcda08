"""Atomics from many workgroups running on several threads (tests/shaders/atomics.comp): 64-bit
add/and/or/xor/min/max (unsigned and signed, GL_EXT_shader_atomic_int64), compare-and-swap loops,
exchange, their 32-bit forms, slot allocation from atomicAdd's return value, a histogram, float
atomicAdd/atomicExchange (GL_EXT_shader_atomic_float) and shared-memory atomics. Every expected
value is order-independent and computed with numpy / Python integers."""
import numpy as np
import pytest

WG = 64
C64 = np.dtype([(n, "<u8") for n in ("add64", "and64", "or64", "xor64", "umin64", "umax64",
                                     "cas64", "xchg64")] + [(n, "<i8") for n in ("smin64", "smax64",
                                                                               "sadd64")])
C32 = np.dtype([(n, "<u4") for n in ("add32", "and32", "or32", "xor32", "umin32", "umax32", "cas32",
                                     "slot_count")]
               + [(n, "<i4") for n in ("smin32", "smax32", "sadd32", "shared_total")]
               + [("fadd32", "<f4"), ("fxchg32", "<f4"), ("hist", "<u4", (16,))])


def test_layouts_match_the_glsl_blocks():
    assert C64.itemsize == 88 and C64.fields["sadd64"][1] == 80
    assert C32.itemsize == 120 and C32.fields["hist"][1] == 56


def initial(rng):
    c64 = np.zeros(1, C64)
    c32 = np.zeros(1, C32)
    for name in C64.names:
        c64[name] = rng.integers(0, 2**63)
    c64["and64"] = 2**64 - 1
    c64["umin64"] = 2**64 - 1
    c64["umax64"] = 5
    c64["smin64"] = 2**62
    c64["smax64"] = -2**62
    c64["sadd64"] = 12345
    for name in C32.names[:12]:
        c32[name] = rng.integers(0, 2**31)
    c32["and32"] = 0xFFFFFFFF
    c32["umin32"] = 0xFFFFFFFF
    c32["umax32"] = 0
    c32["slot_count"] = 0
    c32["smin32"] = 2**31 - 1
    c32["smax32"] = -2**31
    c32["fadd32"] = 1.5
    c32["fxchg32"] = -1.0
    c32["hist"] = 1000
    return c64, c32


def inputs(rng, n):
    v = rng.integers(0, 2**64, n, dtype=np.uint64)
    v[::3] >>= np.uint64(rng.integers(0, 64))        # some small values
    v[5] = 0
    v[7] = 2**64 - 1
    v[11] = 2**63                                    # INT64_MIN
    v[13] = 2**63 - 1
    return v


def reference(v, c64, c32, nwg):
    vi = [int(x) for x in v]
    M64, M32 = 2**64 - 1, 2**32 - 1
    s64 = lambda x: x - 2**64 if x >> 63 else x
    s32 = lambda x: x - 2**32 if x >> 31 else x
    r64 = {n: int(c64[n][0]) for n in C64.names}
    r32 = {n: (c32[n][0].copy() if n == "hist" else c32[n][0].item()) for n in C32.names}
    ws = [x & M32 for x in vi]
    r64["add64"] = (r64["add64"] + sum(vi)) & M64
    for x in vi:
        r64["and64"] &= x | 0xFFFF0000FFFF0000
        r64["or64"] |= x & 0x8000100020004001
        r64["xor64"] ^= x
    r64["umin64"] = min([r64["umin64"]] + vi)
    r64["umax64"] = max([r64["umax64"]] + vi)
    r64["smin64"] = min([r64["smin64"]] + [s64(x) for x in vi])
    r64["smax64"] = max([r64["smax64"]] + [s64(x) for x in vi])
    r64["sadd64"] -= sum(w & 0xFFFF for w in ws)
    r64["cas64"] = (r64["cas64"] + sum(x >> 32 for x in vi)) & M64
    r32["add32"] = (r32["add32"] + sum(ws)) & M32
    for w in ws:
        r32["and32"] &= w | 0x0F0F0F0F
        r32["or32"] |= w & 0x10204081
        r32["xor32"] ^= w
    r32["umin32"] = min([r32["umin32"]] + ws)
    r32["umax32"] = max([r32["umax32"]] + ws)
    r32["smin32"] = min([r32["smin32"]] + [s32(w) for w in ws])
    r32["smax32"] = max([r32["smax32"]] + [s32(w) for w in ws])
    r32["sadd32"] += sum(w % 1000 - 500 for w in ws)
    c = r32["cas32"]
    for _ in ws:
        c = (3 * c + 1) & M32
    r32["cas32"] = c
    r32["slot_count"] = len(ws)
    r32["hist"] = r32["hist"] + np.bincount([w & 15 for w in ws], minlength=16)
    r32["fadd32"] = r32["fadd32"] + sum((w % 64 - 32) * 0.25 for w in ws)
    r32["shared_total"] += sum(w & 0xFF for w in ws)
    for k in range(nwg):                              # each workgroup XORs the OR of its bits
        bits = 0
        for w in ws[k * WG:(k + 1) * WG]:
            bits |= 1 << ((w >> 6) % 64)
        r64["xor64"] ^= bits
    return r64, r32


@pytest.mark.parametrize("nwg, threads", [(40, 2), (7, 1), (97, None)])
def test_atomics_from_many_workgroups(kc, rng, nwg, threads):
    k = kc("atomics")
    n = nwg * WG
    v = inputs(rng, n)
    c64, c32 = initial(rng)
    start64, start32 = c64.copy(), c32.copy()
    slots = np.full(n, 0xFFFFFFFF, np.uint32)
    olds = np.zeros(n, np.uint64)
    folds = np.zeros(n, np.float32)
    k.dispatch((nwg, 1, 1), {0: v, 1: c64, 2: c32, 3: slots, 4: olds, 5: folds}, threads=threads)
    r64, r32 = reference(v, start64, start32, nwg)
    for name in C64.names:
        if name != "xchg64":
            assert int(c64[name][0]) == r64[name], name
    for name in C32.names:
        if name == "hist":
            np.testing.assert_array_equal(c32["hist"][0], r32["hist"])
        elif name != "fxchg32":
            assert c32[name][0].item() == r32[name], name
    # slots: every invocation got its own slot
    np.testing.assert_array_equal(np.sort(slots), np.arange(n))
    # exchange: the values read plus the one left are the start value plus every value written
    np.testing.assert_array_equal(np.sort(np.append(olds, c64["xchg64"])),
                                  np.sort(np.append(v, start64["xchg64"])))
    np.testing.assert_array_equal(np.sort(np.append(folds, c32["fxchg32"])),
                                  np.sort(np.append(np.arange(n, dtype=np.float32),
                                                    start32["fxchg32"])))
