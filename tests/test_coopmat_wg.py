"""Workgroup-scope cooperative matrices (SPV_NV_cooperative_matrix2's scope on KHR instructions):
one matrix per workgroup, spread over all its invocations through the profile's lane layout
(the H100's 2 x W/2 warp grid with A and B replicated, the generic striped layout, a shuffled
one). The reference is numpy's float64 product, rounded once to float32 (exact for these sizes:
32 products of float16 values and a float32 C fit a float64 sum exactly)."""
import struct
from pathlib import Path

import numpy as np
import pytest

import jitcoop

SPV = Path(__file__).resolve().parent / "shaders" / "coopmat_wg" / "wg_muladd.spv"
_kernels = {}


def kernel(profile, W):
    if (profile, W) not in _kernels:
        _kernels[profile, W] = jitcoop.Device(profile).load(SPV).kernel(spec={0: W})
    return _kernels[profile, W]


@pytest.mark.parametrize("profile,W", [("generic", 128), ("nvidia", 128), ("nvidia", 256),
                                       ("shuffled", 256)])
def test_workgroup_muladd_and_elementwise(profile, W):
    rng = np.random.default_rng(W)
    T = 3
    a = rng.standard_normal((T, 64, 32)).astype(np.float16)
    b = rng.standard_normal((T, 32, 64)).astype(np.float16)
    c = rng.standard_normal((T, 64, 64)).astype(np.float32)
    a0, b0 = a.copy(), b.copy()
    want = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32) * np.float32(2)
    kernel(profile, W).dispatch(T, {0: a, 1: b, 2: c})
    np.testing.assert_array_equal(c, want)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


def test_nvidia_limits_workgroup_scope_to_256():
    with pytest.raises(jitcoop.SpirvError, match="at most 256 invocations"):
        jitcoop.Device("nvidia").load(SPV).kernel(spec={0: 512})


def test_lavapipe_has_no_workgroup_scope():
    with pytest.raises(jitcoop.SpirvError, match="no workgroup-scope cooperative matrices"):
        jitcoop.Device("lavapipe").load(SPV).kernel(spec={0: 64})


CLAMP = SPV.with_name("clamp_acc.spv")


@pytest.mark.parametrize("profile,W", [("generic", 128), ("nvidia", 128), ("nvidia", 256)])
def test_accumulator_clamped_element_by_element_between_muladds(profile, W):
    """A float16 accumulator in a Function variable, MulAdd after MulAdd, each step followed by a
    clamp of every component through an index that is not a constant (ggml's pattern). Small
    integers keep every sum exact in float16 whatever the order, so the numpy reference (the
    clamp after each step) is exact."""
    rng = np.random.default_rng(W + len(profile))
    steps, lim = 5, 24.0
    a = rng.integers(-2, 3, (steps, 64, 16)).astype(np.float16)
    b = rng.integers(-2, 3, (steps, 16, 64)).astype(np.float16)
    want = np.zeros((64, 64), np.float64)
    for s in range(steps):
        want = np.clip(want + a[s].astype(np.float64) @ b[s].astype(np.float64), -lim, lim)
    assert 0 < (np.abs(want) == lim).mean() < 1          # the clamp bites somewhere, not everywhere
    c = np.zeros((64, 64), np.float16)
    k = jitcoop.Device(profile).load(CLAMP).kernel(spec={0: W})
    k.dispatch(1, {0: a, 1: b, 2: c}, push=struct.pack("<IfI", steps, lim, 0))
    np.testing.assert_array_equal(c, want.astype(np.float16))


def test_a_component_index_past_the_fragment_is_an_error():
    """The clamp shader's extra store at component `bad`: past the 32 components each of 128
    invocations holds of a 64 x 64 matrix, the dispatch fails naming the store, and the output
    buffer is left as it was."""
    k = jitcoop.Device("nvidia").load(CLAMP).kernel(spec={0: 128})
    a, b = np.ones((1, 64, 16), np.float16), np.ones((1, 16, 64), np.float16)
    c = np.full((64, 64), 3.0, np.float16)
    with pytest.raises(jitcoop.ExecutionError, match=r"OpStore.*index 1000 of a cooperative matrix component, "
                                                     r"past the 32 components each invocation holds"):
        k.dispatch(1, {0: a, 1: b, 2: c}, push=struct.pack("<IfI", 1, 24.0, 1000))
    assert (c == 3.0).all()
