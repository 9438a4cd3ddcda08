"""How to dispatch each test and benchmark shader: grid, buffers, push constants, spec constants,
device profile and kernel options, with inputs whose results are deterministic.

One recipe per committed `.spv` under tests/shaders and benchmarks/shaders (several files may
share one), taken from the tests that use the shader, made smaller where the test is big.
Inputs are seeded; floats are finite and of moderate size (no NaN payloads whose propagation
SPIR-V leaves open); indices stay in range. Outputs that depend on the order in which
invocations run atomics are put in a canonical form (`canon`) before the comparison.

Shaders that cannot give a comparable run are listed in EXCLUDED with the reason.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Dispatch:
    grid: tuple | int
    bindings: dict
    push: object = None
    threads: int | None = None
    # outputs (binding -> array copy, and "buffers": list of device buffer arrays) -> comparable form
    canon: Callable | None = None


class Inputs:
    """Seeded input makers for one dispatch; `buffer` places an array in the device's address
    space (for physical pointers) and remembers it, so its contents are compared too."""

    def __init__(self, rng: np.random.Generator, device):
        self.rng = rng
        self.device = device
        self.buffers = []

    def f32(self, n, lo=-100.0, hi=100.0):
        return self.rng.uniform(lo, hi, n).astype(np.float32)

    def normal(self, shape, dtype=np.float32, scale=1.0):
        return (self.rng.standard_normal(shape) * scale).astype(dtype)

    def small(self, shape, dtype, lo=-8, hi=8):
        """Small integers (as `dtype`, float or int): every float sum of them is exact."""
        return self.rng.integers(lo, hi, shape).astype(dtype)

    def ints(self, shape, dtype, lo=None, hi=None):
        info = np.iinfo(dtype)
        lo = info.min if lo is None else lo
        hi = info.max if hi is None else hi
        return self.rng.integers(lo, hi, shape, dtype=np.int64 if hi < 2**63 else np.uint64,
                                 endpoint=True).astype(dtype)

    def bits(self, n, dtype):
        """Random bit patterns of an integer type."""
        return self.rng.integers(0, 2**63, n, dtype=np.uint64).astype(dtype)

    def buffer(self, arr):
        buf = self.device.buffer(arr)
        self.buffers.append(buf)
        return buf


@dataclass(frozen=True)
class Recipe:
    shader: str                         # path from the repository root
    make: Callable[[Inputs], Dispatch]
    spec: dict = field(default_factory=dict)
    profile: str = "generic"
    sg: int | None = None
    options: dict = field(default_factory=dict)
    entry: str = "main"

    @property
    def path(self) -> Path:
        return ROOT / self.shader

    @property
    def size(self) -> int:
        return self.path.stat().st_size


RECIPES: dict[str, Recipe] = {}
EXCLUDED: dict[str, str] = {}


def recipe(*shaders, **kw):
    def register(make):
        for s in shaders:
            assert s not in RECIPES, s
            RECIPES[s] = Recipe(s, make, **kw)
        return make
    return register


def exclude(reason, *shaders):
    for s in shaders:
        EXCLUDED[s] = reason


def u32(*values):
    return np.array(values, np.uint32)


T, B = "tests/shaders/", "benchmarks/shaders/"


# == core: control flow, memory, barriers, subgroups =================================================
@recipe(T + "core/exp.spv")
def _exp(r):
    n = 256
    return Dispatch(n // 64, {0: r.f32(n, -90, 80), 1: np.zeros(n, np.float32), 2: r.normal(n, np.float16, 4.0),
                              3: np.zeros(n, np.float16)})


@recipe(T + "core/log.spv")
def _log(r):
    n = 256
    return Dispatch(n // 64, {0: r.f32(n, 1e-3, 100), 1: np.zeros(n, np.float32), 2: np.zeros(n, np.float32),
                              3: np.abs(r.normal(n, np.float16, 4.0)), 4: np.zeros(n, np.float16),
                              5: np.zeros(n, np.float16)})


@recipe(T + "core/fail_late.spv")
def _fail_late(r):
    # no workgroup past fail_from: every store in bounds
    return Dispatch(40, {0: r.bits(64 * 40, np.uint32), 1: r.bits(64, np.uint32)}, push=u32(40), threads=2)


@recipe(T + "core/saxpy.spv", B + "saxpy.spv")
def _saxpy(r):
    n = 500                                         # two workgroups, the second partly idle
    return Dispatch(2, {0: r.f32(n), 1: r.f32(n)}, push=struct.pack("<fI", 1.5, n))


@recipe(T + "core/scan256.spv")
def _scan256(r):
    return Dispatch(3, {0: r.ints(768, np.uint32, 0, 1000), 1: np.zeros(768, np.uint32)})


@recipe(T + "core/control.spv", T + "core/control.opt.spv")
def _control(r):
    a = (np.arange(64, dtype=np.int32) * 7) % 11
    a[40], a[5] = -5, 3
    return Dispatch(1, {0: np.full(384, -9, np.int32), 1: a})


@recipe(T + "core/nesting.spv", T + "core/nesting.opt.spv")
def _nesting(r):
    x = np.concatenate([np.arange(26), r.ints(102, np.uint32, 0, 1 << 20)]).astype(np.uint32)
    return Dispatch(2, {0: x, 1: np.zeros(128, np.uint32)})


@recipe(T + "core/loops.spv", T + "core/loops.opt.spv")
def _loops(r):
    return Dispatch(2, {0: r.bits(512, np.uint32), 1: np.zeros(128, np.uint32)},
                    push=struct.pack("<IiI", 100, -5, 0xFFFFFF90))


@recipe(T + "core/memory.spv")
def _memory(r):
    nodes = np.zeros(5 * 16, np.uint8)
    buf = r.buffer(nodes)
    order = [3, 0, 4, 1, 2]
    for n, (cur, nxt) in enumerate(zip(order, order[1:] + [None])):
        struct.pack_into("<i", buf.array, 16 * cur, 10 * (n + 1))
        struct.pack_into("<Q", buf.array, 16 * cur + 8, 0 if nxt is None else buf.address + 16 * nxt)
    inb = np.zeros(104, np.uint8)
    struct.pack_into("<Q", inb, 0, buf.address + 16 * order[0])
    inb[8:40] = r.ints(32, np.int8).view(np.uint8)
    inb[40:104] = r.ints(32, np.uint16).view(np.uint8)
    u140 = r.small(176 // 4, np.float32).view(np.uint8)         # S, vec4 v[3], float f[3] (std140)
    b430 = r.small(112 // 4, np.float32).view(np.uint8)
    out = np.zeros(24 + 96 * 4, np.uint8)
    struct.pack_into("<qqQ", out, 0, 0, 2 ** 62, 0)
    rows = np.zeros(48, np.float32)
    rows[:12] = r.small(12, np.float32)
    return Dispatch(1, {0: u140, 1: b430, 2: out, 3: inb, 4: rows})


def _canon_core_atomics(out):
    c = out[0]
    struct.pack_into("<I", c, 48, 0)                # the CAS loop's count of retries: order
    c[56:] = np.sort(c[56:].view(np.uint32)).view(np.uint8)   # slots: handed out in run order
    return out


@recipe(T + "core/atomics.spv")
def _core_atomics(r):
    n = 64 * 3
    c = np.zeros(64 + 4 * n, np.uint8)
    struct.pack_into("<Qqq", c, 0, 0, 2 ** 62, -2 ** 62)
    struct.pack_into("<i", c, 36, 2 ** 31 - 1)
    return Dispatch(3, {0: c}, canon=_canon_core_atomics)


@recipe(T + "core/bitcopy.spv")
def _bitcopy(r):
    # finite values only: NaN payloads through arithmetic are left open by SPIR-V
    ih = r.normal(256, np.float16, 100).view(np.uint16)
    ib = (r.normal(256, np.float32, 100).view(np.uint32) >> 16).astype(np.uint16)
    i4 = np.arange(256, dtype=np.uint8)
    i4 = i4[(i4 & 0x7F) != 0x7F]                    # E4M3 NaN codes left out
    i4 = np.resize(i4, 256)
    i5 = np.arange(256, dtype=np.uint8)
    i5 = np.resize(i5[(i5 & 0x7C) != 0x7C], 256)    # E5M2 inf/NaN codes left out
    outs = [np.zeros(256, np.uint16), np.zeros(256, np.uint16), np.zeros(256, np.uint8),
            np.zeros(256, np.uint8), np.zeros(256, np.float32)]
    return Dispatch(4, {0: ih, 1: ib, 2: i4, 3: i5, **{4 + i: o for i, o in enumerate(outs)}})


@recipe(T + "core/half_runs.spv")
def _half_runs(r):
    # finite values only, as bitcopy's
    ih = r.normal(128 * 16, np.float16, 100).view(np.uint16)
    ib = (r.normal(128 * 16, np.float32, 100).view(np.uint32) >> 16).astype(np.uint16)
    return Dispatch(2, {0: ih, 1: ib, 2: np.zeros(32 * 128, np.float32), 3: np.zeros(128 * 16, np.uint16),
                        4: np.zeros(128 * 16, np.uint16)})


@recipe(T + "core/spec.spv", spec={0: 16, 1: 2, 2: 1, 3: 1})
def _spec(r):
    return Dispatch(3, {0: np.zeros(2 * 16 * 3, np.uint32)}, push=struct.pack("<I", 100))


@recipe(T + "core/subgroups.spv")
def _subgroups(r):
    x = r.ints(128, np.int32, -20, 20)
    x[64:96] = 5
    return Dispatch(1, {0: x, 1: np.zeros(35 * 128, np.int32), 2: np.zeros(256, np.float32)})


exclude("undefined on purpose: the two halves of the workgroup wait at different barriers "
        "(the test expects the ExecutionError)", T + "core/divergent_barrier.spv")


# == shaders at the top of tests/shaders ==============================================================
_C64 = np.dtype([(n, "<u8") for n in ("add64", "and64", "or64", "xor64", "umin64", "umax64", "cas64",
                                      "xchg64")] + [(n, "<i8") for n in ("smin64", "smax64", "sadd64")])
_C32 = np.dtype([(n, "<u4") for n in ("add32", "and32", "or32", "xor32", "umin32", "umax32", "cas32",
                                      "slot_count")]
                + [(n, "<i4") for n in ("smin32", "smax32", "sadd32", "shared_total")]
                + [("fadd32", "<f4"), ("fxchg32", "<f4"), ("hist", "<u4", (16,))])


def _canon_atomics(out):
    """Exchanges, slots and the old values atomics return depend on the order invocations ran:
    keep only their multisets."""
    c64, c32 = out[1].copy(), out[2].copy()
    xs64 = np.sort(np.append(out[4], c64["xchg64"]))
    fx32 = np.sort(np.append(out[5], c32["fxchg32"]))
    c64["xchg64"], c32["fxchg32"] = 0, 0
    return {1: c64, 2: c32, 3: np.sort(out[3]), "xchg64": xs64, "fxchg32": fx32}


@recipe(T + "atomics.spv")
def _atomics(r):
    nwg = 3
    n = 64 * nwg
    v = r.bits(n, np.uint64)
    v[::3] >>= np.uint64(40)
    c64, c32 = np.zeros(1, _C64), np.zeros(1, _C32)
    for name in _C64.names:
        c64[name] = r.rng.integers(0, 2**62)
    c64["and64"], c64["umin64"], c64["umax64"], c64["smin64"], c64["smax64"] = \
        2**64 - 1, 2**64 - 1, 5, 2**62, -2**62
    for name in _C32.names[:12]:
        c32[name] = r.rng.integers(0, 2**30)
    c32["and32"], c32["umin32"], c32["umax32"], c32["slot_count"] = 0xFFFFFFFF, 0xFFFFFFFF, 0, 0
    c32["smin32"], c32["smax32"], c32["fadd32"], c32["fxchg32"], c32["hist"] = \
        2**31 - 1, -2**31, 1.5, -1.0, 1000
    return Dispatch(nwg, {0: v, 1: c64, 2: c32, 3: np.full(n, 0xFFFFFFFF, np.uint32),
                          4: np.zeros(n, np.uint64), 5: np.zeros(n, np.float32)},
                    canon=_canon_atomics)


@recipe(T + "bad_index.spv")
def _bad_index(r):
    n = 192
    idx = np.stack([np.arange(n), r.rng.permutation(n)], 1).astype(np.uint32)
    return Dispatch((2, 3, 1), {0: r.bits(n, np.uint32), 1: idx, 2: r.bits(16, np.uint32),
                                (1, 3): np.full(n, 7, np.uint32)}, push=u32(3, 100))


@recipe(T + "wg_count.spv")
def _wg_count(r):
    return Dispatch((37, 5, 1), {0: r.small(37 * 5, np.uint32, 0, 4)}, threads=2)


@recipe(T + "barrier_spin.spv", spec={0: False})
def _barrier_spin(r):
    return Dispatch(2, {0: np.zeros(32, np.uint32)})       # uniform: every invocation at both barriers


def _divergent_inputs(r, n):
    a = r.ints(n, np.int32, 0, 1 << 16)
    neg = r.rng.random(n) < 0.2
    a[neg] = -r.rng.integers(1, 100, neg.sum())
    a[:16] = np.arange(16)
    a[16:24] = np.arange(8) << 10 | 0x8000
    a[64:128] = -5
    return a


@recipe(T + "divergent.spv", sg=8)
def _divergent(r):
    return Dispatch(5, {0: _divergent_inputs(r, 320), 1: np.full(320 * 9, -12345, np.int32)})


@recipe(T + "divergent.opt.spv")
def _divergent_opt(r):
    return _divergent(r)


@recipe(T + "lane_strides.spv", T + "lane_strides.opt.spv", spec={0: 40})
def _lane_strides(r):
    # a base whose groups wrap around 2^32 in the middle, and the counter's parting mode
    n, off = 3, 5
    return Dispatch(3, {0: np.zeros(3 * 64 * 2, np.uint64), 1: r.bits((n + 4) * (40 + off), np.uint32),
                        2: np.zeros(3 * 64 * n, np.uint32), 3: np.zeros(3 * 64, np.uint32),
                        4: np.zeros(3 * 64, np.uint32)},
                    push=u32(0xFFFFFFC3, 0x7FFFFFE1, n, 1, off, 0xFFFFFFD7))


@recipe(T + "masked_stores.spv", sg=32)
def _masked_stores(r):
    # three workgroups of two subgroups, five steps; the stores' destinations a permutation
    wgs, steps = 3, 5
    return Dispatch(wgs, {0: r.f32(wgs * steps * 64, -1, 1), 1: np.zeros(wgs * 2 * steps, np.float32),
                          2: np.zeros(wgs * 64, np.uint32), 3: r.rng.permutation(64).astype(np.uint32),
                          4: np.zeros(wgs * 64, np.uint32)}, push=u32(steps))


@recipe(T + "private_arrays.spv", sg=32)
def _private_arrays(r):
    # interleaved private frames: three workgroups, four steps, every lane's index its own
    n = 3 * 32
    return Dispatch(3, {0: r.f32(n * 8, -1, 1), 1: np.zeros(n * 8, np.float32),
                        2: r.rng.integers(0, 8, n).astype(np.int32)}, push=u32(4))


@recipe(T + "lcg_steps.spv")
def _lcg_steps(r):
    return Dispatch(4, {0: np.zeros(4 * 64, np.uint32)}, push=u32(37))


@recipe(T + "aggregate_stores.spv", T + "aggregate_stores.opt.spv")
def _aggregate_stores(r):
    # the spread stores one run per group (num = den) from an offset that is not a multiple of it
    return Dispatch(3, {0: r.bits(3 * 128 * 4, np.uint32), 1: np.zeros(3 * 128 * 4, np.uint32),
                        2: np.zeros(3 * 256 * 4, np.uint32), 3: np.zeros(3 * 64 * 3, np.float32),
                        4: np.zeros(3 * 64 * 2, np.uint32)},
                    push=u32(1, 1, 3))


@recipe(T + "long_fragments.spv", T + "long_fragments.opt.spv", spec={0: 1, 1: 32})
def _long_fragments(r):
    # one invocation: 1024 components per fragment, its element-wise instructions loops
    n = 32
    return Dispatch(1, {0: r.f32(n * n, -4, 4), 1: r.f32(n * n, 0, 1), 2: np.zeros(8 * n * n, np.float32),
                        3: np.zeros(2 * n * n, np.int32)}, push=struct.pack("<fi", 0.75, 5))


_PARTICLE = np.dtype({"names": ["pos", "mass", "cell"], "formats": ["3<f4", "<f4", "2<i4"],
                      "offsets": [0, 12, 16], "itemsize": 32})
_FEATURES_PUSH = np.dtype({"names": ["rot", "shift", "count", "bias"],
                           "formats": ["(2,2)<f4", "2<f4", "<u4", "<i4"], "offsets": [0, 16, 24, 28],
                           "itemsize": 32})


@recipe(T + "features.spv", spec={0: 6, 1: 3, 2: 5, 3: 1, 4: 0.5, 5: -3, 6: 0x1234})
def _features(r):
    count = 13
    parts = np.zeros(count, _PARTICLE)
    parts["pos"] = r.rng.integers(-8, 9, (count, 3))
    parts["mass"] = r.rng.integers(1, 9, count) * 0.5
    parts["cell"] = r.rng.integers(-100, 100, (count, 2))
    push = np.zeros(1, _FEATURES_PUSH)
    push["rot"] = r.rng.integers(-3, 4, (2, 2))
    push["shift"] = r.rng.integers(-4, 5, 2) * 0.5
    push["count"], push["bias"] = count, -17
    return Dispatch(3, {0: parts, 1: np.zeros(3 * 6 * 3 * 32, np.float32)}, push=push)


@recipe(T + "frexp.spv", T + "frexp_ptr.spv")
def _frexp(r):
    a = r.f32(64, -1e6, 1e6)
    a[:6] = [0.0, 1.0, -0.5, 3.0, 1e-40, 2.0 ** 100]
    return Dispatch(1, {0: a, 1: np.zeros(64, np.float32), 2: np.zeros(64, np.int32)})


@recipe(T + "layouts.spv")
def _layouts(r):
    ub = r.small(352 // 4, np.float32)
    ub[344 // 4] = np.array(7, np.uint32).view(np.float32)        # flag
    sa = r.small(4 * 48 // 4, np.float32)
    push = r.small(8, np.float32)
    return Dispatch(1, {0: ub, 1: np.zeros(256 // 4, np.float32), 2: np.zeros(64, np.float32), 3: sa},
                    push=push)


_NODE = np.dtype([("value", "<i4"), ("hits", "<i4"), ("next", "<u8")])
_RESULT = np.dtype([("count", "<i4"), ("sum", "<i4"), ("last", "<u8")])
_LL_PUSH = np.dtype([("scale", "<u8"), ("nodes_base", "<u8"), ("n_nodes", "<u4"), ("pad", "<u4")])


@recipe(T + "linked_list.spv")
def _linked_list(r):
    n_nodes, nwg = 100, 3
    n = 32 * nwg
    buf = r.buffer(np.zeros(n_nodes, _NODE))
    nodes = buf.array
    nodes["value"] = r.rng.integers(-1000, 1000, n_nodes)
    nxt = np.full(n_nodes, -1)
    for i in range(n_nodes - 1):
        if r.rng.random() < 0.85:
            nxt[i] = r.rng.integers(i + 1, min(n_nodes, i + 8))
    nodes["next"] = np.where(nxt >= 0, buf.address + _NODE.itemsize * nxt, 0)
    head = r.rng.integers(0, n_nodes, n)
    head[r.rng.random(n) < 0.1] = -1
    heads = np.where(head >= 0, buf.address + _NODE.itemsize * head, 0).astype(np.uint64)
    scale = r.buffer(r.normal(n))
    push = np.zeros(1, _LL_PUSH)
    push["scale"], push["nodes_base"], push["n_nodes"] = scale.address, buf.address, n_nodes
    return Dispatch(nwg, {0: heads, 1: np.zeros(n, _RESULT)}, push=push)


@recipe(T + "prefix_sum.spv", spec={0: True})
def _prefix_sum(r):
    return Dispatch((3, 2, 1), {0: r.bits(256 * 6, np.uint32), 1: np.zeros(6, np.uint32)})


@recipe(T + "spec_bool.spv", spec={0: 0})
def _spec_bool(r):
    return Dispatch(1, {0: np.full(2, -9, np.int32)})


@recipe(T + "std450.spv")
def _std450(r):
    n = 64
    x = r.f32(n)
    x[:8] = [2.5, -3.5, 0.5, -0.5, 1.5, 0.0, -0.0, 7.0]
    ad = r.rng.uniform(-1e6, 1e6, n)
    return Dispatch(1, {0: x, 1: r.f32(n), 2: r.f32(n), 3: ad, 4: np.zeros(n * 48, np.float32),
                        5: np.zeros(n * 16, np.float64), 6: np.zeros(n * 4, np.float16),
                        7: np.zeros(n * 8, np.uint32)})


@recipe(T + "integer_dot.spv")
def _integer_dot(r):
    n = 128
    return Dispatch(n // 64, {0: r.bits(n, np.uint32), 1: r.bits(n, np.uint32), 2: r.bits(n, np.uint32),
                              3: np.zeros(n * 16, np.uint32), 4: np.zeros(n, np.uint16),
                              5: np.zeros(n, np.uint64)})


@recipe(T + "std450_inverse.spv")
def _std450_inverse(r):
    m = r.f32(16 * 29, -4.0, 4.0)
    return Dispatch(1, {0: m, 1: np.zeros(16 * 32, np.float32), 2: r.rng.uniform(-4, 4, 16 * 25),
                        3: np.zeros(16 * 27, np.float64)})


@recipe(T + "subgroup_divergent.spv")
def _subgroup_divergent(r):
    nt, sg = 192, 32
    x = r.ints(nt, np.uint32, 0, 1 << 16)
    m = r.ints(nt, np.uint32, 0, 1 << 9)
    x[:sg] = r.rng.integers(1000, 4096, sg)
    m[:sg] |= 1
    m[sg:2 * sg] &= ~np.uint32(1)
    m[2 * sg:3 * sg] |= 1
    m[2 * sg] &= ~np.uint32(1)
    x[(3 * sg + 5) % nt] = 32
    return Dispatch(3, {0: x, 1: m, 2: np.full(26 * nt, 0xA5A5A5A5, np.uint32)})


@recipe(T + "subgroup_scan.spv")
def _subgroup_scan(r):
    nt = 192
    x = r.bits(nt, np.uint32)
    x[::5] |= 1
    x[::7] &= 0xFFFF
    f = r.rng.choice(np.array([-2, -1, -0.5, 0.5, 1, 2], np.float32), nt)
    d = r.rng.integers(-1000, 1000, nt) / 8.0
    return Dispatch(2, {0: x, 1: f, 2: d, 3: np.zeros(42 * nt, np.uint32), 4: np.zeros(3 * nt, np.uint64)})


@recipe(T + "subgroup_shuffle.spv")
def _subgroup_shuffle(r):
    nt = 192
    x = r.bits(nt, np.uint32) | 1
    d = r.rng.integers(-1000, 1000, nt) / 8.0
    return Dispatch(2, {0: x, 1: d, 2: np.zeros(42 * nt, np.uint32), 3: np.zeros(3 * nt, np.uint64)})


@recipe(T + "subgroup_bool_half.spv")
def _subgroup_bool_half(r):
    nt = 192
    h = (r.rng.uniform(-2, 2, nt) * 2.0 ** r.rng.integers(-12, 6, nt)).astype(np.float16)
    z = r.rng.uniform(-3, 3, nt).astype(np.float32)
    z[r.rng.random(nt) < 0.3] = np.nan
    return Dispatch(2, {0: r.bits(nt, np.uint32), 1: h, 2: z, 3: np.zeros(12 * nt, np.uint32),
                        4: np.zeros(7 * nt, np.float16)})


@recipe(T + "signature/sig.spv", spec={0: 64, 1: 1})
def _signature(r):
    n = 100
    src = (r.normal(128).view(np.uint32) >> 16).astype(np.uint16)
    stats = np.zeros(2 + 2 * 128, np.uint32)
    return Dispatch(2, {0: src, 1: np.zeros(128, np.float32), 2: np.zeros(128, np.uint8),
                        3: np.zeros(128, np.uint8), (1, 0): stats},
                    push=struct.pack("<2f4fiI3f", 0.25, -2.0, 1.0, 3.0, 2.0, 4.0, -3, n, 0.0, 0.0, 0.5))


@recipe(T + "signature/push_struct.spv")
def _push_struct(r):
    src = r.buffer(r.normal(64))
    return Dispatch(1, {0: np.zeros(8, np.float32)}, push=struct.pack("<IiIiQ", 3, 2, 40, -5, src.address))

# == SPV_KHR_cooperative_matrix (tests/shaders/coopmat, benchmarks) =================================
def _fp8_codes(r, n, fmt):
    """Random fp8 codes without NaNs and infinities."""
    c = r.ints(n, np.uint8)
    bad = (c & 0x7F) == 0x7F if fmt == "e4m3" else (c & 0x7C) == 0x7C
    c[bad] &= 0xBB
    return c


def _elements(r, kind, n):
    if kind == "f16":
        return r.normal(n, np.float16)
    if kind == "f32":
        return r.normal(n, np.float32, 4)
    if kind == "bf16":
        return (r.normal(n).view(np.uint32) >> 16).astype(np.uint16)
    if kind in ("e4m3", "e5m2"):
        return _fp8_codes(r, n, kind)
    return r.ints(n, {"s8": np.int8, "u8": np.uint8, "s16": np.int16, "s32": np.int32,
                      "u32": np.uint32}[kind])


_MULADD = {"f16_f32": "f16 f16 f32 f32", "f16_f16": "f16 f16 f16 f16", "f32_f32": "f32 f32 f32 f32",
           "bf16_f32": "bf16 bf16 f32 f32", "bf16_bf16": "bf16 bf16 bf16 bf16", "e4m3_f32": "e4m3 e4m3 f32 f32",
           "e5m2_e4m3_f16": "e5m2 e4m3 f16 f16", "s8_s32": "s8 s8 s32 s32", "u8_u32": "u8 u8 u32 u32",
           "s8u8_s32": "s8 u8 s32 s32", "u8s8_u32": "u8 s8 u32 u32", "s8_s32_sat": "s8 s8 s32 s32",
           "u8_u32_sat": "u8 u8 u32 u32", "s16_s32": "s16 s16 s32 s32"}


def _muladd(kinds):
    a, b, c, d = kinds.split()

    def make(r):
        out = _elements(r, d, 256)
        out[...] = 0
        return Dispatch(1, {0: _elements(r, a, 256), 1: _elements(r, b, 256), 2: _elements(r, c, 256),
                            3: out}, push=u32(16, 16, 16, 16))
    return make


for _name, _kinds in _MULADD.items():
    recipe(T + f"coopmat/muladd_{_name}.spv", spec={10: 32})(_muladd(_kinds))


@recipe(T + "coopmat/arith_f.spv", T + "coopmat/arith_i.spv")
def _arith(r):
    iv = r.ints(512, np.int32)
    iv[256:][iv[256:] == 0] = 3
    uv = r.ints(512, np.uint32)
    uv[256:][uv[256:] == 0] = 5
    return Dispatch(1, {0: r.normal(512), 1: iv, 2: np.zeros(7 * 256, np.float32),
                        3: np.zeros(7 * 256, np.int32), 4: np.zeros(3 * 256, np.uint32), 5: uv},
                    push=struct.pack("<fi", -1.25, -3))


@recipe(T + "coopmat/arith_f128.spv")
def _arith_128(r):
    # the float part at 128 x 128 (arith.comp built with -DN=128): 512 elements an invocation
    n = 128 * 128
    return Dispatch(1, {0: r.normal(2 * n), 1: r.ints(512, np.int32), 2: np.zeros(7 * n, np.float32),
                        3: np.zeros(7 * 256, np.int32), 4: np.zeros(3 * 256, np.uint32),
                        5: r.ints(512, np.uint32)},
                    push=struct.pack("<fi", -1.25, -3))


@recipe(T + "coopmat/arith_imts.spv")
def _arith_imts(r):
    return Dispatch(1, {0: np.arange(-128, 128, dtype=np.int32) * 1000, 1: np.zeros(256, np.int32)},
                    push=struct.pack("<i", -3))


@recipe(T + "coopmat/bad.spv")
def _coopmat_bad(r):
    # mode 0 is the valid path of the error test shader
    return Dispatch(1, {0: np.arange(256, dtype=np.float32), 1: np.full(256, -5, np.float32),
                        2: np.ones(256, np.float16)}, push=u32(0, 16))


@recipe(T + "coopmat/bad2.spv", profile="shuffled")
def _coopmat_bad2(r):
    return Dispatch(2, {0: np.arange(256, dtype=np.float32) - 100, 1: np.full(512, 9, np.float16),
                        2: np.full(256, 9, np.float32)}, push=u32(0))


@recipe(T + "coopmat/convert.spv")
def _convert(r):
    f = r.normal(256, np.float32, 60)
    f[:8] = [0.0, -0.0, 65504.0, 65520.0, 448.0, 464.0, 57344.0, 1e-8]
    iv = r.ints(256, np.int32)
    outs = [np.zeros(256, np.float16), np.zeros(256, np.uint16), np.zeros(512, np.uint8),
            np.zeros(512, np.uint8), np.zeros(512, np.int32), np.zeros(512, np.uint32),
            np.zeros(256, np.int8), np.zeros(256, np.uint16), np.zeros(256, np.float32)]
    return Dispatch(1, {0: f, 1: iv, 2: r.ints(256, np.int8), **{3 + i: o for i, o in enumerate(outs)}})


@recipe(T + "coopmat/convert_a.spv", profile="nvidia")
def _convert_a(r):
    return Dispatch(1, {0: r.ints((16, 32), np.int8), 1: np.zeros((16, 32), np.float16),
                        2: np.zeros((16, 32), np.int8), 3: r.ints((16, 32), np.uint8),
                        4: np.zeros((16, 32), np.float16)})


@recipe(T + "coopmat/flow.spv")
def _flow(r):
    return Dispatch(1, {0: r.small(512, np.float16, -20, 20), 1: np.zeros(256, np.float16),
                        2: np.zeros(256, np.float16)}, push=u32(1, 1, 1))


@recipe(T + "coopmat/flow_acc.spv", T + "coopmat/flow_acc_vars.spv")
def _flow_acc(r):
    n = 5
    return Dispatch(1, {0: r.small((n, 16, 16), np.float16, -3, 4), 1: r.small((n, 16, 16), np.float16, -3, 4),
                        2: np.full((n + 2, 16, 16), -1, np.float32)}, push=u32(n))


@recipe(T + "passes/loops.spv", T + "passes/loops_O.spv")
def _passes_loops(r):
    return Dispatch(1, {0: r.small(3 * 256, np.float16, -3, 4), 1: r.small(3 * 256, np.float16, -3, 4),
                        2: np.full(4 * 256, -1, np.float32)}, push=u32(2))


@recipe(T + "passes/copies.spv", T + "passes/copies_O.spv", T + "passes/private.spv", T + "passes/private_O.spv",
        T + "passes/private_init.spv", T + "passes/struct.spv", T + "passes/struct_O.spv",
        T + "passes/struct_mixed.spv", T + "passes/struct_mixed_O.spv")
def _passes_copies(r):
    return Dispatch(1, {0: r.small(4 * 256, np.float16, -3, 4), 1: r.small(4 * 256, np.float16, -3, 4),
                        2: np.full(8 * 256, -1, np.float32)})


@recipe(T + "passes/merge_phi.spv", T + "passes/merge_phi_O.spv")
def _passes_merge_phi(r):
    return Dispatch(1, {0: r.small(2 * 256, np.float16, -3, 4), 1: r.small(2 * 256, np.float16, -3, 4),
                        2: np.full(2 * 256, -1, np.float32)})


@recipe(T + "passes/carry.spv", T + "passes/carry_O.spv")
def _passes_carry(r):
    return Dispatch(1, {0: r.small(16 * 80, np.float16, -3, 4), 1: r.small(5 * 256, np.float16, -3, 4),
                        2: np.full(512, -1, np.float32), 3: np.zeros(256, np.float16)},
                    push=u32(5, 0b0110, 0b1001))


@recipe(T + "passes/carry_only.spv", T + "passes/carry_only_O.spv")
def _passes_carry_only(r):
    return Dispatch(1, {0: r.small(16 * 80, np.float16, -3, 4), 1: r.small(5 * 256, np.float16, -3, 4),
                        2: np.full(256, -1, np.float32)}, push=u32(5, 0b0110, 0b1001))


@recipe(T + "passes/copy_to_unnamed.spv")
def _passes_copy_to_unnamed(r):
    return Dispatch(1, {0: np.full(512, -1, np.float32)})


@recipe(T + "coopvec/uniform_sum.spv")
def _uniform_sum(r):
    return Dispatch(3, {0: r.small(12, np.float32, -8, 8), 1: np.zeros(4, np.float32)})


@recipe(T + "coopmat/invariant.spv", T + "coopmat/invariant_count.spv")
def _invariant(r):
    return Dispatch(3, {0: r.small((48, 16), np.float16, -3, 4), 1: r.small((16, 16), np.float16, -3, 4),
                        2: np.zeros((48, 16), np.float16), 3: np.zeros(3, np.uint32)},
                    push=struct.pack("<fI", 0.5, 3))


@recipe(T + "coopmat/pairs.spv", T + "coopmat/pairs.opt.spv", T + "coopmat/pairs_dep.spv",
        T + "coopmat/pairs_inv.spv", spec={0: 64}, options={"numerics": "float32"})
def _pairs(r):
    return Dispatch(1, {0: r.small((16, 32), np.float16, -3, 4), 1: r.small((32, 24), np.float16, -3, 4),
                        2: r.small((16, 24), np.float32, -8, 8)}, push=u32(32))


@recipe(T + "coopmat/pairs_mixed.spv")
def _pairs_mixed(r):
    return Dispatch(1, {0: r.small((8, 8), np.float16, -3, 4), 1: r.small((8, 8), np.float16, -3, 4),
                        2: r.small((8, 8), np.float32, -8, 8)})


@recipe(T + "coopmat/flow_struct.spv")
def _flow_struct(r):
    return Dispatch(1, {0: r.small(512, np.float16, -37, 37), 1: np.zeros(256, np.float16)})


@recipe(T + "coopmat/flow_undef.spv")
def _flow_undef(r):
    return Dispatch(1, {0: r.small(256, np.float16, -37, 37), 1: np.zeros(256, np.float16)}, push=u32(1))


_LDRUN = {"f16_16x32": (np.float16, 16, 32), "f16_16x48": (np.float16, 16, 48),
          "f16_8x16": (np.float16, 8, 16), "bf16_16x32": ("bf16", 16, 32),
          "f32_16x16": (np.float32, 16, 16), "s8_16x64": (np.int8, 16, 64),
          "u16_16x16": (np.uint16, 16, 16), "s32_8x8": (np.int32, 8, 8),
          "e4m3_16x32": (np.uint8, 16, 32), "e5m2_16x64": (np.uint8, 16, 64)}


def _ldrun(dt, rows, cols):
    def make(r):
        tiles = 4                                   # two workgroups of two subgroups
        off, srow, sout = 5, cols + 3, cols + 1
        tin, tout = rows * srow + 7, rows * sout
        n = tiles * tin + off
        if dt == "bf16":
            x = (r.normal(n).view(np.uint32) >> 16).astype(np.uint16)
        elif np.dtype(dt).kind == "f":
            x = r.normal(n, dt, 10)
        else:
            x = r.ints(n, dt)
        y = np.zeros(tiles * tout, x.dtype)
        return Dispatch(2, {0: x, 1: y}, push=u32(off, tin, srow, tout, sout))
    return make


for _name, (_dt, _rows, _cols) in _LDRUN.items():
    recipe(T + f"coopmat/ldrun_{_name}.spv")(_ldrun(_dt, _rows, _cols))


def _store_cm(dt):
    def make(r):
        tiles, rows, cols = 4, 16, 32               # two workgroups of two subgroups
        sout = rows + 3
        tout = cols * sout + 5
        n = tiles * rows * cols
        x = r.normal(n, dt, 10) if np.dtype(dt).kind == "f" else r.ints(n, dt)
        return Dispatch(2, {0: x, 1: np.zeros(tiles * tout, x.dtype)}, push=u32(sout, tout))
    return make


for _name, _dt in (("f32", np.float32), ("f16", np.float16), ("u8", np.uint8), ("s32", np.int32)):
    recipe(T + f"coopmat/store_cm_{_name}.spv", spec={10: 64})(_store_cm(_dt))


@recipe(T + "coopmat/ldst.spv", spec={10: 64})
def _ldst(r):
    off, tin, srow, scol, sout, tout = 5, 300, 17, 33, 17, 270
    return Dispatch(3, {0: r.normal(6 * tin + off, np.float16), 1: np.zeros(6 * tout, np.float16),
                        2: np.zeros(6 * tout, np.float16), 3: np.zeros(6 * tout, np.float16)},
                    push=u32(off, tin, srow, scol, sout, tout))


@recipe(T + "coopmat/ldst_mem.spv")
def _ldst_mem(r):
    s_in, nwg = 3, 2
    tiles = 2 * nwg
    q = r.normal((tiles, 16, 8 * s_in), np.float16).view(np.uint32).copy()
    pv = r.buffer(r.normal((tiles, 16, 8 * s_in), np.float16).view(np.uint32).copy())
    dst = r.buffer(np.zeros(tiles * 256, np.float16))
    return Dispatch(nwg, {0: q, 1: np.zeros(tiles * 256, np.float16)},
                    push=struct.pack("<QQI4x", pv.address, dst.address, s_in))


@recipe(T + "coopmat/perlane.spv", profile="nvidia")
def _perlane(r):
    return Dispatch(1, {0: r.normal(256), 1: np.zeros(32, np.uint32),
                        **{i: np.zeros(256, np.float32) for i in range(2, 6)}}, push=u32(3))


@recipe(T + "coopmat/wg.spv", spec={10: 128})
def _wg(r):
    return Dispatch(1, {0: np.zeros(4096, np.float32), 1: r.normal(4096, np.float16),
                        2: r.normal(4096, np.float16), 3: r.normal(4096, np.float32, 4),
                        4: np.zeros(4096, np.float32), 5: np.zeros(3 * 128, np.uint32)})


@recipe(T + "coopmat_wg/wg_muladd.spv", spec={0: 128}, profile="nvidia")
def _wg_muladd(r):
    t = 2
    return Dispatch(t, {0: r.normal((t, 64, 32), np.float16), 1: r.normal((t, 32, 64), np.float16),
                        2: r.normal((t, 64, 64), np.float32)})


@recipe(T + "coopmat_wg/clamp_acc.spv", spec={0: 128}, profile="nvidia")
def _clamp_acc(r):
    steps = 3
    a = r.ints((steps, 64, 16), np.int8, -2, 2).astype(np.float16)
    b = r.ints((steps, 16, 64), np.int8, -2, 2).astype(np.float16)
    return Dispatch(1, {0: a, 1: b, 2: np.zeros((64, 64), np.float16)}, push=struct.pack("<IfI", steps, 24.0, 0))


@recipe(T + "coopmat_cli/lane_ids.spv", profile="nvidia")
def _lane_ids(r):
    return Dispatch(1, {0: np.zeros(256, np.float32)})


# == SPV_NV_cooperative_matrix2 (tests/shaders/coopmat2, coopmat2_apps) ==============================
_TENSOR_DIMS = {1: [600], 2: [16, 40], 3: [4, 8, 12], 4: [3, 4, 5, 7], 5: [2, 3, 4, 5, 5]}


def _tensor_nd(dims, site):
    """tensor_nd.comp's p[] (see tests/test_coopmat2_tensor.py): unit blocks, the layout's own
    strides, one slice that shifts every dimension by -2..2 (Constant clamping fills the rest),
    the view `site` picks (0 none, 1 a permutation)."""
    def make(r):
        d = len(dims)
        p = np.zeros(67, np.uint32)
        p[0], p[2], p[4] = site, r.rng.integers(0, 2**32), 4
        p[8:8 + d] = 1                                  # block sizes
        p[13:13 + d] = dims
        p[28:28 + d] = 1                                # first slice: (0, 1) per dimension
        p[33:33 + d] = (r.rng.integers(-2, 3, d) & 0xFFFFFFFF).astype(np.uint32)
        p[38:38 + d] = dims
        p[43:43 + d] = 1
        p[48:48 + d] = 1
        p[63:67] = [0, 0xFFFFFFFF, 0, 0xFFFFFFFF]       # clip: everything
        size = 4 + int(np.prod(dims)) + 4
        return Dispatch(1, {0: r.bits(size, np.uint32), 1: r.bits(16 * 32, np.uint32), 2: p})
    return make


for _d, _dims in _TENSOR_DIMS.items():
    recipe(T + f"coopmat2/tensor_{_d}d.spv", spec={0: 1})(_tensor_nd(_dims, 1))
recipe(T + "coopmat2/tensor_2d_lite.spv", spec={0: 3})(_tensor_nd(_TENSOR_DIMS[2], 0))


def _decode_nd(d, dims, block):
    """decode_nd.comp's p[] (tests/test_coopmat2_decode.py): an in-range slice through the
    permuting view with dimensions, sel picking the decode function's formula."""
    def make(r):
        p = np.zeros(42, np.uint32)
        p[0], p[1], p[2], p[3] = 1, 4, r.rng.integers(0, 2**32), r.rng.integers(0, 2**32)
        p[8:8 + d], p[13:13 + d] = block, dims
        p[18:18 + d] = [1] * d
        p[23:23 + d] = [x - 2 for x in dims]
        vd = 3 if d == 2 else 2
        p[28:28 + vd] = [3, 4, 5][:vd]
        p[33:33 + vd] = [7, 1, 0][:vd]
        p[38:42] = [0, 0xFFFFFFFF, 2, 20]
        words = r.bits(4 + (int(np.prod(dims)) + 1) * 3 + 8, np.uint32)
        return Dispatch(1, {0: words, 1: r.bits(16 * 32, np.uint32), 2: p, 3: u32(2),
                            4: r.bits(32, np.uint32)})
    return make


recipe(T + "coopmat2/decode_2d.spv", spec={0: 1, 1: 3})(_decode_nd(2, [12, 30], [2, 3]))
recipe(T + "coopmat2/decode_3d.spv", spec={0: 3, 1: 2})(_decode_nd(3, [5, 6, 9], [1, 2, 2]))


def _decode_vec(v):
    def make(r):
        base, block, dims, off, span = 4, [2, 2 * v], [8, 48], [1, 8], [6, 32]
        p = u32(base, *block, *dims, off[0], span[0], off[1], span[1])
        return Dispatch(1, {0: r.ints(base + 8 * 48 + 3, np.uint32, 0, 1 << 20),
                            1: np.zeros(16 * 32, np.uint32), 2: p, 3: np.zeros(7, np.uint32)})
    return make


for _v in (2, 4, 8):
    recipe(T + f"coopmat2/decode_vec{_v}.spv", options={"decode_vector": "vector"})(_decode_vec(_v))


@recipe(T + "coopmat2/decode_vecview.spv", options={"decode_vector": "vector"})
def _decode_vecview(r):
    p = u32(4, 2, 4, 70, 72, 3, 64, 5, 64, 2, 5, 6, 7, 9, 1, 3, 2, 60, 0, 0xFFFFFFFF)
    return Dispatch(1, {0: r.ints(4 + 80 * 80 + 4, np.uint32, 0, 1 << 20), 1: r.bits(64 * 64, np.uint32),
                        2: p, 3: np.zeros(7, np.uint32)})


@recipe(T + "coopmat2/decode_q4.spv")
def _decode_q4(r):
    R, C, groups = 64, 32, 4
    return Dispatch(groups, {0: r.ints(R * C // 2, np.uint8), 1: r.f32(64 * groups, -2, 2),
                             2: np.zeros(512 * groups, np.float32), 3: u32(R, C, 0, 0)})


@recipe(T + "coopmat2/decode_lanes.spv")
def _decode_lanes(r):
    # a split that parts the 16-column groups, rows from 3 on
    return Dispatch(1, {0: r.ints(24 * 64, np.uint8), 1: np.zeros(16 * 64, np.float32)}, push=u32(24, 64, 21, 3))


@recipe(T + "coopmat2/tensor_bytes.spv")
def _tensor_bytes(r):
    at, dims, off, span = 16, [20, 40], [-2, 3], [16, 32]
    data = np.concatenate([np.zeros(at, np.uint8), r.normal(dims[0] * dims[1]).view(np.uint8),
                           np.zeros(16, np.uint8)])
    p = np.array([x & 0xFFFFFFFF for x in (1, at, *dims, off[0], span[0], off[1], span[1], 0x3F80)],
                 np.uint32)
    return Dispatch(1, {0: data, 1: np.zeros(512, np.float16), 2: np.zeros(512, np.float32),
                        3: np.zeros(512, np.uint16), 4: np.zeros(512, np.uint8), 5: p})


_TENSOR_ROWS = {"f16_16x32": (np.float16, 16, 32), "f16_16x48": (np.float16, 16, 48),
                "f16_8x16": (np.float16, 8, 16), "bf16_16x32": ("bf16", 16, 32),
                "f32_16x16": (np.float32, 16, 16), "u8_16x64": (np.uint8, 16, 64),
                "s32_8x8": (np.int32, 8, 8)}


def _tensor_rows(dt, rows, cols):
    def make(r):
        ntr, tcols = 2, 2                               # 4 tiles: 2 workgroups of 2 subgroups
        R, C = ntr * rows - 2, tcols * cols - 2         # the last tile row and column go past
        if dt == "bf16":
            x = (r.normal(R * C).view(np.uint32) >> 16).astype(np.uint16)
        elif np.dtype(dt).kind == "f":
            x = r.normal(R * C, dt, 10)
        else:
            x = r.ints(R * C, dt)
        return Dispatch(2, {0: x, 1: np.zeros(ntr * rows * tcols * cols, x.dtype), 2: np.zeros(R * C, x.dtype)},
                        push=u32(R, C, 3, 5, tcols))
    return make


for _name, (_dt, _rows, _cols) in _TENSOR_ROWS.items():
    recipe(T + f"coopmat2/tensor_rows_{_name}.spv")(_tensor_rows(_dt, _rows, _cols))
for _name, _args in (("f16_16x32", _TENSOR_ROWS["f16_16x32"]), ("f16_16x64", (np.float16, 16, 64)),
                     ("f32_16x16", _TENSOR_ROWS["f32_16x16"]), ("u8_16x64", _TENSOR_ROWS["u8_16x64"]),
                     ("bf16_16x32", _TENSOR_ROWS["bf16_16x32"])):
    recipe(T + f"coopmat2/tensor_rows_t_{_name}.spv")(_tensor_rows(*_args))        # the -DTRANSPOSED builds

exclude("invalid on purpose (a DecodeFunc on a store, a SpirvError at kernel(); spirv-val rejects it)",
        T + "coopmat2/store_decode.spv")


def _q4_blocks(r, n, nb):
    blk = np.zeros((n, nb), dtype=[("d", "<f2"), ("qs", "u1", 16)])
    blk["d"] = (r.rng.random((n, nb)) * 0.1 + 0.01).astype(np.float16)
    blk["qs"] = r.rng.integers(0, 256, (n, nb, 16), dtype=np.uint8)
    return blk


def _q4_gemm(M, N, K, grid):
    def make(r):
        blk = _q4_blocks(r, N, K // 32)
        return Dispatch(grid, {0: r.normal((M, K), np.float16, 0.5), 1: blk, 2: np.full((M, N), 7, np.float32),
                               3: blk["d"].copy()}, push=u32(M, N, K))
    return make


recipe(T + "coopmat2_apps/q4_gemm.spv", T + "coopmat2_apps/q4_gemm_shared.spv",
       T + "coopmat2_apps/q4_gemm_O.spv")(_q4_gemm(200, 160, 64, (2, 2, 1)))
recipe(T + "coopmat2_apps/q4_gemm_vec.spv", options={"decode_vector": "vector"})(
    _q4_gemm(128, 128, 64, (1, 1, 1)))


@recipe(T + "coopmat2_apps/flash_attn.spv")
def _flash_attn_app(r):
    nq, n, d = 40, 70, 64
    mask = np.where(r.rng.random((nq, n)) < 0.2, -np.inf, r.normal((nq, n), np.float64, 0.5)).astype(np.float16)
    return Dispatch(2, {0: r.normal((nq, d), np.float16), 1: r.normal((n, d), np.float16),
                        2: r.normal((n, d), np.float16), 3: mask, 4: np.zeros((nq, d), np.float32)},
                    push=np.array([nq, n, np.float32(0.125).view(np.uint32), 1], np.uint32))


@recipe(T + "coopmat2_apps/mul_mat_id.spv")
def _mul_mat_id(r):
    t, n, k, e = 40, 40, 32, 3
    route = r.rng.integers(0, e, t)
    ids, counts = np.zeros((e, t), np.uint32), np.zeros(e, np.uint32)
    for tok in range(t):
        ids[route[tok], counts[route[tok]]] = tok
        counts[route[tok]] += 1
    return Dispatch((2, 2, e), {0: r.normal((t, k), np.float16), 1: r.normal((e, n, k), np.float16),
                                2: ids, 3: counts, 4: np.full((t, n), -1, np.float32)}, push=u32(t, n, k))


@recipe(T + "coopmat2_apps/ops.spv")
def _ops(r):
    return Dispatch(1, {0: r.normal(256), 1: np.zeros(1600, np.float32), 2: np.zeros(16, np.uint32)})


@recipe(T + "coopmat2_apps/decode_private.spv")
def _decode_private(r):
    return Dispatch(1, {0: r.ints(128, np.uint8), 1: np.zeros(256, np.float32), 2: r.f32(32, 0, 1)})


@recipe(T + "coopmat2_apps/pe_vector.spv")
def _pe_vector(r):
    x = r.normal(1536, np.float32, 2.0)
    return Dispatch(1, {0: x, 1: r.normal(512, np.float32, 0.25), 2: np.zeros(512, np.float32),
                        3: np.zeros(512, np.float32)}, push=np.array([2.0], np.float32))


exclude("made to fail: invocations disagree on a Private variable the decode function reads "
        "(the test expects the ExecutionError)", T + "coopmat2_apps/decode_private_bad.spv")



@recipe(T + "coopmat2_prod/mul_mm_q.spv", T + "coopmat2_prod/mul_mm_q_O.spv",
        spec={0: 128, 1: 64, 2: 64, 3: 32, 4: False, 5: 0})
def _mul_mm_q(r):
    """q4_0 weights: M = 72 rows (ragged) of K = 64, N = 40 activation rows, one batch."""
    m, n, k = 72, 40, 64
    a = _q4_blocks(r, m, k // 32)
    push = u32(m, n, k, k, k, m, m * k, n * k, n * m, k, 1, 1, 1, 1, n)
    return Dispatch((2, 1, 1), {0: a, 1: r.normal((n, k), np.float16), 2: np.zeros((n, m), np.float32)},
                    push=push)

# == SPV_QCOM_cooperative_matrix_conversion (tests/shaders/coopmat_qcom) ============================
def _finite_words(r, shape):
    """uint32 words whose float16 halves and float32 view are all finite."""
    return r.normal((*shape[:-1], 2 * shape[-1]), np.float16, 100).view(np.uint32).copy()


@recipe(T + "coopmat_qcom/arrays.spv")
def _qcom_arrays(r):
    n = 64
    outs = [np.zeros((n, 8), np.uint32), np.zeros((n, 16), np.float16), np.zeros((n, 8), np.float32),
            np.zeros((n, 8), np.int32), np.zeros((n, 16), np.uint32), np.zeros((n, 16), np.uint32)]
    return Dispatch(n // 32, {0: _finite_words(r, (n, 16)), **{i + 1: o for i, o in enumerate(outs)}},
                    push=np.array([12, 24], np.int32))


@recipe(T + "coopmat_qcom/ldbits.spv", T + "coopmat_qcom/ldbits_col.spv", sg=64)
def _qc_ldbits(r):
    return Dispatch(2, {0: r.normal(2048, np.float16, 10), 1: np.zeros(1024, np.uint32)})


@recipe(T + "coopmat_qcom/bad.spv", profile="qualcomm")
def _qcom_bad(r):
    # mode 0 is the uniform round trip of the error test shader
    return Dispatch(2, {0: r.normal((128, 8))}, push=u32(0, 0))


@recipe(T + "coopmat_qcom/conv.spv", T + "coopmat_qcom/conv_outer.spv", profile="qualcomm")
def _qcom_conv(r):
    n = 2
    return Dispatch(n, {0: r.small((n, 8, 8, 32), np.float16, -3, 4), 1: r.small((3, 3, 32, 32), np.float16, -3, 4),
                        2: np.zeros((n, 64, 32), np.float32)})


_QCOM_CONVERT = {"f16": (np.float16, np.float16, 16, 32, "qualcomm", 64, 64),
                 "f32": (np.float32, np.float32, 8, 64, "generic", 64, 16),
                 "s8": (np.int8, np.int32, 32, 16, "shuffled", 64, 32),
                 "u8": (np.uint8, np.uint32, 32, 32, "qualcomm", 64, 64)}


def _qcom_convert(et, ct, k, n, m, sg):
    def make(r):
        pacc = n // 2 if ct == np.float16 else n
        w, groups = 2 * sg, 2
        nsg, inv = groups * w // sg, groups * w

        def vals(shape, dt):
            return r.normal(shape, dt, 10) if np.dtype(dt).kind == "f" else r.ints(shape, dt)
        ip = np.zeros((inv, 16 + pacc), np.uint32)
        ip[:, :16] = vals((inv, 8 * 4 // np.dtype(et).itemsize * 2), et).view(np.uint32)[:, :16] \
            if np.dtype(et).itemsize < 4 else vals((inv, 16), et).view(np.uint32)
        ip[:, 16:] = vals((inv, pacc * 4 // np.dtype(ct).itemsize), ct).view(np.uint32)
        return Dispatch(groups, {0: vals((inv, 2, k), et), 1: vals((inv, n), ct), 2: ip,
                                 3: np.zeros((nsg, 2 * (m * k + k * n)), et), 4: np.zeros((nsg, 2, m, n), ct),
                                 5: np.zeros((inv, 2, k), et), 6: np.zeros((inv, n), ct), 7: np.zeros_like(ip)})
    return make


for _fam, (_et, _ct, _k, _n, _prof, _sg, _m) in _QCOM_CONVERT.items():
    recipe(T + f"coopmat_qcom/convert_{_fam}.spv", profile=_prof, sg=_sg, spec={10: 2 * _sg, 0: _m})(
        _qcom_convert(_et, _ct, _k, _n, _m, _sg))


@recipe(T + "coopmat_qcom/dequant.spv", profile="qualcomm")
def _qcom_dequant(r):
    rows, nb = 64, 2
    blocks = np.zeros((rows, nb), dtype=[("d", "<f2"), ("qs", "u1", (16,))])
    blocks["d"] = (r.rng.choice([-1, 1], (rows, nb)) * 2.0 ** r.rng.integers(-3, 2, (rows, nb))).astype(np.float16)
    blocks["qs"] = r.rng.integers(0, 256, (rows, nb, 16))
    return Dispatch(1, {0: blocks, 1: r.small((64, 64), np.float16, -3, 4), 2: np.zeros((64, 64), np.float32)},
                    push=np.array([0], np.int32))


@recipe(T + "coopmat_qcom/mlp.spv", profile="qualcomm", sg=64)
def _qcom_mlp(r):
    g = 2
    return Dispatch(g, {0: r.normal((g * 64, 16), np.float16), 1: r.normal((2, 16, 16), np.float16, 0.25),
                        2: r.normal((2, 16), np.float16), 3: np.zeros((g * 64, 16), np.float16)})


# == SPV_NV_cooperative_vector (tests/shaders/coopvec, benchmarks) ==================================
_COOPVEC_MM = {"mm_f16": (np.float16, np.float16), "mm_f32": (np.float32, np.float32),
               "mm_f32i": (np.float32, np.int32), "mm_s8": (np.int8, np.int32),
               "mm_u32": (np.uint32, np.int32)}


def _coopvec_mm(in_t, out_t):
    """mm_*.comp with every lane on variant lane % NVAR: matrices of small values (bytes below
    0x3C are finite as float16, float32, fp8 and int8) 4096 bytes apart, bias 256 apart."""
    def make(r):
        m, k, lanes = 6, 10, 64
        mat = r.ints(1 << 17, np.uint8, 0, 0x3B)
        bias = r.ints(1 << 13, np.uint8, 0, 0x3B)
        params = np.zeros(49, np.int32)
        params[:16] = 64 + 4096 * np.arange(16)
        params[16:32] = 16 + 256 * np.arange(16)
        params[32:48] = 256
        params[48] = -1
        x = r.normal((lanes, k), in_t, 2) if np.dtype(in_t).kind == "f" else r.ints((lanes, k), in_t, 0, 100)
        return Dispatch(2, {0: x, 1: mat, 2: bias, 3: np.zeros((lanes, m), out_t), 4: params})
    return make


for _name, (_in, _out) in _COOPVEC_MM.items():
    recipe(T + f"coopvec/{_name}.spv")(_coopvec_mm(_in, _out))


@recipe(T + "coopvec/ops.spv")
def _coopvec_ops(r):
    n = 32
    pb = r.buffer(r.normal((n, 8)))
    return Dispatch(2, {0: r.normal((n, 8), np.float32, 2), 1: np.zeros((n, 10, 8), np.float32),
                        2: np.zeros((n, 3, 8), np.uint32)}, push=struct.pack("<Q", pb.address))


@recipe(T + "coopvec/train.spv")
def _coopvec_train(r):
    n = 4 * 32            # small multiples of powers of two: every float sum exact, any order
    return Dispatch(4, {0: (r.rng.integers(-4, 5, (n, 8)) / 4).astype(np.float16),
                        1: (r.rng.integers(-4, 5, (n, 4)) / 8).astype(np.float16),
                        2: np.zeros(256, np.float16), 3: np.zeros(64, np.float32),
                        4: np.zeros(8, np.float16), 5: np.zeros(4, np.float32)})


@recipe(B + "mlp_coopvec.spv", spec={0: 64})
def _mlp_coopvec(r):
    n = 128
    net = np.concatenate([r.normal(64 * 64, np.float16, 1 / 8), r.normal(64 * 64, np.float16, 1 / 8),
                          r.normal(16 * 64, np.float16, 1 / 8), r.normal(144, np.float16, 1 / 4)]).view(np.uint8)
    return Dispatch(n // 64, {0: r.normal((n, 64), np.float16), 1: net, 2: np.zeros((n, 16), np.float16)})


# == SPIR-V assembler test modules (tests/shaders/asm): never dispatched by their tests ===========
@recipe(T + "asm/basic.spv", spec={0: 64, 1: 2})
def _asm_basic(r):
    n = 100
    out = np.zeros(1 + 128, np.float32)
    return Dispatch(2, {0: r.f32(128, -3, 3), 1: out, 2: np.zeros(8, np.float32)},
                    push=struct.pack("<If", n, 0.5))


@recipe(T + "asm/coopmat_khr.spv")
def _asm_coopmat_khr(r):
    i8 = np.zeros(4096, np.uint8)
    i8[:1024] = r.ints(1024, np.int8).view(np.uint8)
    return Dispatch(1, {0: r.normal(256, np.float16), 1: r.normal(256, np.float16), 2: r.normal(256),
                        3: i8})


@recipe(T + "asm/coopmat2_nv.spv")
def _asm_coopmat2_nv(r):
    return Dispatch(1, {0: r.ints(2 * 64 * 64, np.uint8), 1: np.zeros(64 * 64, np.float16)})


@recipe(T + "asm/coopvec_nv.spv")
def _asm_coopvec_nv(r):
    w = r.small(2048 + 64, np.float16, -1, 2) / np.float16(4)
    return Dispatch(1, {0: w, 1: r.small(32 * 32, np.float16, -1, 2), 2: np.zeros(32 * 16, np.float16)},
                    threads=1)


@recipe(T + "asm/debuginfo.spv")
def _asm_debuginfo(r):
    data = np.zeros(8 + 64 * 4, np.float32)
    data[8:] = r.f32(64 * 4, 0.5, 9)
    return Dispatch(1, {0: data})


# == arithmetic (tests/shaders/arith): one result row per invocation =================================
_INT = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
        "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}
_FLOAT = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
_CONVERSIONS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                np.float16, np.float32, np.float64)


def _arith_int(dt):
    """b in 1 .. width-1: divisors nonzero and shift counts in range (both undefined in SPIR-V
    otherwise, so a transformed module may differ there)."""
    def make(r):
        bits = 8 * np.dtype(dt).itemsize
        convs = {3 + i: np.zeros(64, c) for i, c in enumerate(_CONVERSIONS)}
        return Dispatch(1, {0: r.ints(64, dt), 1: r.ints(64, dt, 1, bits - 1), 2: np.zeros(64 * 64, dt), **convs})
    return make


def _arith_float(dt):
    def make(r):
        a, b = r.normal(64, dt, 20), r.normal(64, dt, 20)
        a[:4] = [0.0, -0.0, 1.5, -2.5]
        b[b == 0] = 1
        convs = {4 + i: np.zeros(64, c) for i, c in enumerate(_CONVERSIONS)}
        return Dispatch(1, {0: a, 1: b, 2: np.zeros(64 * 64, dt), 3: np.zeros(64 * 64, np.uint32), **convs})
    return make


for _name, _dt in _INT.items():
    recipe(T + f"arith/{_name}.spv")(_arith_int(_dt))
for _name, _dt in _FLOAT.items():
    recipe(T + f"arith/{_name}.spv")(_arith_float(_dt))


@recipe(T + "arith/fmod.spv")
def _fmod(r):
    binds = {}
    for j, dt in enumerate((np.float16, np.float32, np.float64)):
        b = r.normal(64, dt, 10)
        b[b == 0] = 3
        binds.update({3 * j: r.normal(64, dt, 100), 3 * j + 1: b, 3 * j + 2: np.zeros(64, dt)})
    return Dispatch(1, binds)


@recipe(T + "arith/std450_float.spv")
def _std450_float(r):
    return Dispatch(1, {0: r.f32(64, 0.1, 10), 1: r.f32(64, -10, 10), 2: r.f32(64, -10, 10),
                        3: r.ints(64, np.int32, -20, 20), 4: r.f32(64 * 3, -5, 5), 5: r.f32(64 * 3, -5, 5),
                        6: np.zeros(64 * 128, np.float32)})


@recipe(T + "arith/std450_frexp.spv")
def _std450_frexp(r):
    x = r.f32(64, -1e6, 1e6)
    return Dispatch(1, {0: x, 1: np.zeros(64, np.float32), 2: np.zeros(64, np.int32), 3: x.astype(np.float64),
                        4: np.zeros(64, np.float64), 5: np.zeros(64, np.int32)})


@recipe(T + "arith/std450_int.spv")
def _std450_int(r):
    return Dispatch(1, {0: r.ints(64, np.int32), 1: r.ints(64, np.int32, 0, 31), 2: r.ints(64, np.int32, 0, 31),
                        3: r.f32(64 * 4, -1, 1), 4: r.ints(64, np.int64), 5: r.ints(64, np.int64),
                        6: np.zeros(64 * 64, np.int32), 7: np.zeros(64 * 64, np.int64),
                        8: np.zeros(64 * 64, np.float32)})


@recipe(T + "arith/std450_wide.spv")
def _std450_wide(r):
    return Dispatch(1, {0: r.rng.uniform(0.1, 10, 64), 1: r.rng.uniform(-10, 10, 64),
                        2: r.rng.uniform(-10, 10, 64), 3: r.ints(64, np.int32, -20, 20),
                        4: np.zeros(64 * 64, np.float64), 5: r.f32(64, 0.1, 10).astype(np.float16),
                        6: r.f32(64, -10, 10).astype(np.float16), 7: r.f32(64, -10, 10).astype(np.float16),
                        8: np.zeros(64 * 64, np.float16)})


# == benchmarks: the GEMMs and kernels of benchmarks/*.py, at small sizes ===========================
@recipe(B + "gemm_coopmat_f16.spv")
def _gemm_f16(r):
    n = 128
    return Dispatch((2, 2), {0: r.normal((n, n), np.float16), 1: r.normal((n, n), np.float16),
                             2: np.zeros((n, n), np.float32)}, push=struct.pack("<3I", n, n, n))


@recipe(B + "gemm_coopmat_s8.spv")
def _gemm_s8(r):
    n = 128
    return Dispatch((2, 2), {0: r.ints((n, n), np.int8), 1: r.ints((n, n), np.int8),
                             2: np.zeros((n, n), np.int32)}, push=struct.pack("<3I", n, n, n))


@recipe(B + "gemm_coopmat_wg.spv")
def _gemm_wg(r):
    n = 128
    return Dispatch((1, 1), {0: r.normal((n, n), np.float16), 1: r.normal((n, n), np.float16),
                             2: np.zeros((n, n), np.float32)}, push=struct.pack("<3I", n, n, n))


@recipe(B + "sgemm_tiled.spv")
def _sgemm(r):
    n = 128
    return Dispatch((2, 2, 1), {0: r.normal((n, n)), 1: r.normal((n, n)), 2: np.zeros((n, n), np.float32)},
                    push=struct.pack("<3I", n, n, n))


@recipe(B + "muladd_loop.spv")
def _muladd_loop(r):
    a = (np.arange(512) % 3 - 1).astype(np.float16) / np.float16(64)
    return Dispatch(1, {0: a, 1: np.zeros(256, np.float32)}, push=struct.pack("<I", 20))


def _corpus():
    """benchmarks/corpus.py (the corpus shaders' own dispatch registry; benchmarks/ is no package)."""
    import importlib.util
    import sys
    name = "_jitcoop_bench_corpus"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "corpus.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod             # dataclasses look their module up while it loads
        spec.loader.exec_module(mod)
    return sys.modules[name]


def _corpus_recipe(style, granule):
    """A benchmarks/corpus.py style at its smallest size (its own inputs, seeded by the size)."""
    def make(r):
        p = style.problem(granule)
        return Dispatch(p.grid, p.bindings, push=p.push)
    return make


_CORPUS = _corpus()
for _style in _CORPUS.STYLES:
    recipe(B + f"corpus/{_style.name}.spv", spec=_style.spec(32))(_corpus_recipe(_style, _CORPUS.GRANULE))


# == reproducers of tests/test_metamorphic.py (tests/shaders/metamorphic) ===========================
@recipe(T + "metamorphic/debug_scope.spv")
def _debug_scope(r):
    return Dispatch(2, {0: r.normal(64), 1: np.zeros(64, np.float32)})


@recipe(T + "metamorphic/spec_dead_phi.spv", T + "metamorphic/spec_dead_phi_reordered.spv", spec={0: 1, 1: 1})
def _spec_dead_phi(r):
    return Dispatch(2, {0: np.zeros(64, np.uint32)}, push=struct.pack("<I", 10))


@recipe(T + "metamorphic/const_object.spv")
def _const_object(r):
    return Dispatch(1, {0: r.normal(512, np.float16), 1: np.zeros(256, np.float16)}, push=u32(12, 1))


exclude("reproducer of an open engine bug (two tensor loads with one constant Object: LLVM IR "
        "'multiple definition of local value'): tests/test_metamorphic.py runs it against "
        "const_object.spv", T + "metamorphic/const_object_O.spv")


@recipe(T + "metamorphic/reconverge.spv")
def _reconverge(r):
    return Dispatch(2, {0: r.ints(64, np.uint32, 0, 6), 1: np.zeros(64, np.uint32)})


exclude("reproducer of an open engine bug (subgroup reconvergence follows block order): "
        "tests/test_metamorphic.py runs it against reconverge.spv", T + "metamorphic/reconverge_order.spv")
exclude("reproducer of an open engine bug (DebugNoScope after OpReturn is refused at load): "
        "tests/test_metamorphic.py runs it against debug_scope.spv", T + "metamorphic/debug_scope.opt.spv")


# == production-style flash attention (tests/shaders/flash_attn_prod) ===============================
@recipe(T + "flash_attn_prod/flash_attn.spv", T + "flash_attn_prod/flash_attn_O.spv",
        spec={0: 128, 1: 32, 2: 32, 3: 64, 4: 64, 5: 1, 6: 0, 7: 0, 8: 1, 9: 1})
def _flash_attn_prod(r):
    """Float16 K/V, one head, 20 queries over 40 keys (both ragged), mask on."""
    n, kv, hs = 20, 40, 64
    mask = np.where(r.rng.random((n, kv)) < 0.2, -np.inf, r.normal((n, kv), np.float64, 0.5)).astype(np.float16)
    push = struct.pack("<7If2I", n, kv, 1, kv * hs * 2, kv * hs * 2, hs, hs, hs ** -0.5, 1, kv + 24)
    return Dispatch((1, 1, 1), {0: r.normal((n, 1, hs)), 1: r.normal((kv, hs), np.float16).view(np.uint8),
                                2: r.normal((kv, hs), np.float16).view(np.uint8), 3: mask,
                                4: np.zeros((n, 1, hs), np.float32)}, push=push)


# == portability diagnostics and robust buffer access (tests/test_portability.py) ===================
@recipe(T + "portability/tensor_rules.spv", profile="nvidia")
def _tensor_rules(r):
    # Pointers 4 bytes past 16-byte alignment, an Undefined-clamped slice past the tensor's edge
    # (inside the binding): both run as the hardware runs them
    R, C = 32, 32
    n = R * C + 512
    return Dispatch(1, {0: r.f32(n), 1: np.zeros(256, np.float32), 2: r.f32(272), 3: np.zeros(256, np.float32),
                        4: r.f32(n)}, push=u32(R, C, 1, 1, 24, 24))


@recipe(T + "portability/robust_access.spv", options={"robust_buffer_access": True})
def _robust_access(r):
    # invocations 32..63 read, write and add past the 64-element bindings
    return Dispatch(2, {0: r.bits(64, np.uint32), 1: r.bits(64, np.uint32), 2: r.bits(64, np.uint32),
                        3: np.zeros(128, np.uint32)}, push=u32(32))


@recipe(T + "cache/pack_unorm.spv")
def _pack_unorm(r):
    return Dispatch(2, {0: r.bits(128, np.uint32), 1: r.bits(128, np.uint32)})


exclude("an application's pipelines as the driver dumped them (JITCOOP_ICD_DUMP), for the compile "
        "benchmark: a dispatch needs ggml's buffers and push constants (tensor shapes, strides and "
        "offsets), which only ggml's own test program makes",
        *sorted(str(p.relative_to(ROOT)) for p in (ROOT / B / "ggml_mul_mat").glob("*.spv")))
