"""Workgroup-scope cooperative matrices (SPV_NV_cooperative_matrix2's scope on KHR instructions):
one matrix per workgroup, spread over all its invocations through the profile's lane layout
(the H100's 2 x W/2 warp grid with A and B replicated, the generic striped layout, a shuffled
one). The reference is numpy's float64 product, rounded once to float32 (exact for these sizes:
32 products of float16 values and a float32 C fit a float64 sum exactly)."""
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
