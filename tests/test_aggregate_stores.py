"""Stores of whole per-invocation aggregates in the lane groups' vector copy (lanevec.py,
_interleaved_store): the leaves of a uvec4, a uvec2 and a three-float struct stored together are
written as one interleaved run where the addresses step by the aggregate's size (known from the
stride analysis, or found at run time), else invocation by invocation. aggregate_stores.comp
against numpy written from its GLSL, at group sizes 8 and 16 and in scalar code, as glslang
wrote it and after spirv-opt -O: a shared-memory staging read back in reverse, and an index
lid * num / den + shift that is one run (num = den, with and without an offset) or not (stride
2, uneven 3 / 2)."""
import struct

import numpy as np
import pytest

import jitcoop
from conftest import SHADERS

WG = 3


def _expected(a, num, den, shift):
    a = a.reshape(WG, 128, 4)
    e = np.arange(128, dtype=np.uint32)
    sa = a ^ np.stack([e, 2 * e, 3 * e, 4 * e], axis=1)[None]
    lid = np.arange(64)
    staged = np.concatenate([sa[:, 127 - lid], sa[:, 63 - lid]], axis=1)
    v = a[:, :64]
    spread = np.zeros((WG, 256, 4), np.uint32)
    spread[:, lid * num // den + shift] = v + np.array([1, 2, 3, 4], np.uint32)
    trio = (v[:, :, :3] & 0xFFFF).astype(np.float32)
    pair = v[:, :, [3, 2]]
    return staged, spread, trio, pair


@pytest.mark.parametrize("variant", ["aggregate_stores", "aggregate_stores.opt"])
@pytest.mark.parametrize("G", [8, 16, False])
@pytest.mark.parametrize("num, den, shift", [(1, 1, 0), (1, 1, 3), (2, 1, 0), (3, 2, 1)])
def test_aggregate_stores(rng, variant, G, num, den, shift):
    k = jitcoop.Device().load(SHADERS / f"{variant}.spv").kernel(lane_groups=G)
    if G:
        assert k.meta.lane_group == G, k.meta.lane_group_why
        # every aggregate went out as one store per group (or per invocation), none leaf by leaf
        assert "masked.scatter" not in k.source
    a = rng.integers(0, 1 << 32, WG * 128 * 4, dtype=np.uint64).astype(np.uint32)
    out = {1: np.zeros(WG * 128 * 4, np.uint32), 2: np.zeros(WG * 256 * 4, np.uint32),
           3: np.zeros(WG * 64 * 3, np.float32), 4: np.zeros(WG * 64 * 2, np.uint32)}
    k.dispatch((WG, 1, 1), {0: a, **out}, push=struct.pack("<3I", num, den, shift))
    for b, want in zip((1, 2, 3, 4), _expected(a, num, den, shift)):
        np.testing.assert_array_equal(out[b].reshape(want.shape), want, err_msg=f"binding {b}")
