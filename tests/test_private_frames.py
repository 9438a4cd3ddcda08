"""Per-invocation variables in memory (jitcoop/analysis/variables.py): whole frames, or the
lanes' frames interleaved leaf by leaf where every variable in memory is made of 32-bit leaves and
only loaded, stored and indexed.

- private_arrays.comp (arrays kept across a clustered subgroup reduction, one indexed by a value
  from a buffer) against its numpy transcription, at both tiers, with and without lane groups;
- an index past a private array fails with the variable's own byte offset and size, whichever
  layout its frame has;
- which shaders get interleaved frames."""
import numpy as np
import pytest

import jitcoop
from jitcoop import ExecutionError
from jitcoop.codegen.emitter import KernelGen
from jitcoop.options import KernelOptions
from jitcoop.spirv.specialize import Specialization
from conftest import SHADERS

SHADER = SHADERS / "private_arrays.spv"
K = np.array([0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0])     # k[i / 2][i % 2] = (i + 1) / 4


def reference(x: np.ndarray, idx: np.ndarray, steps: int) -> np.ndarray:
    """private_arrays.comp in numpy (float64): rows of state, clusters of 4 consecutive
    invocations summing their dot products."""
    state = x.reshape(-1, 8).astype(np.float64)
    for _ in range(steps):
        s = state @ K
        s = np.repeat(s.reshape(-1, 4).sum(axis=1), 4)
        state = state * 0.5 + s[:, None] * K[None, :] * 0.125
    state[np.arange(len(state)), idx] += 1.0
    return state.reshape(-1)


@pytest.mark.parametrize("tier", ["fast", "optimized"])
@pytest.mark.parametrize("lane_groups", [False, 16])
@pytest.mark.parametrize("steps", [0, 1, 6])
def test_private_arrays_across_a_subgroup_reduction(rng, tier, lane_groups, steps):
    groups = 3
    k = jitcoop.Device("nvidia").load(SHADER).kernel(tier=tier, lane_groups=lane_groups)
    x = rng.uniform(-1, 1, groups * 32 * 8).astype(np.float32)
    idx = rng.integers(0, 8, groups * 32).astype(np.int32)
    y = np.zeros_like(x)
    k.dispatch((groups, 1, 1), {0: x, 1: y, 2: idx}, push=np.uint32([steps]))
    # float32 arithmetic in the shader's order against float64; the steps amplify and cancel,
    # so the tolerance is relative to the largest value: 1e-5 (about 80 units of float32's last place)
    ref = reference(x, idx, steps)
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-5 * np.abs(ref).max())


@pytest.mark.parametrize("lane_groups", [False, 16])
@pytest.mark.parametrize("bad, offset", [(8, 32), (-1, -4), (1000, 4000)])
def test_an_index_past_a_private_array_names_its_byte_offset(lane_groups, bad, offset):
    k = jitcoop.Device("nvidia").load(SHADER).kernel(tier="optimized", lane_groups=lane_groups)
    x = np.ones(64 * 8, np.float32)
    idx = np.zeros(64, np.int32)
    idx[37] = bad
    with pytest.raises(ExecutionError) as e:
        k.dispatch((2, 1, 1), {0: x, 1: np.zeros_like(x), 2: idx}, push=np.uint32([2]))
    assert str(e.value).endswith(f"workgroup (1, 0, 0) lane 5: out-of-bounds access: 4 bytes at byte offset "
                                 f"{offset} of variable 'state', which has 32 bytes")


def _frames(path, profile="nvidia"):
    dev = jitcoop.Device(profile)
    m = dev.load(path).spirv
    gen = KernelGen(m, Specialization(m, {}), None, dev.subgroup_size, KernelOptions(), profile=dev.profile)
    return gen.vars


def test_frames_interleave_where_every_access_is_a_whole_32_bit_leaf():
    v = _frames(SHADER)                       # float[8] and vec2[4], indexed by counters and a buffer value
    assert (v.frame_scale, v.frame_stride, v.private_frame) == (32, 4, 64)
    # a pointer into the frame handed to an extended instruction (frexp's out operand)
    v = _frames(SHADERS / "frexp_ptr.spv")
    assert v.frame_off and (v.frame_scale, v.frame_stride) == (1, v.private_frame)
