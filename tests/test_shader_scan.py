"""Workgroup prefix sums in shared memory with barriers (tests/shaders/prefix_sum.comp), against
numpy cumulative sums."""
import numpy as np
import pytest


def _scan_reference(data, exclusive):
    """Per 256-element workgroup: inclusive (or exclusive) prefix sums wrapping at 32 bits, and the
    workgroup totals."""
    d = data.reshape(-1, 256).astype(np.uint64)
    inc = np.cumsum(d, axis=1) % 2**32
    scan = (inc - d) % 2**32 if exclusive else inc
    return scan.astype(np.uint32).reshape(-1), inc[:, -1].astype(np.uint32)


@pytest.mark.parametrize("blelloch", [False, True], ids=["hillis_steele", "blelloch"])
@pytest.mark.parametrize("threads", [1, None])
def test_workgroup_prefix_sum_with_barriers(kc, rng, blelloch, threads):
    """256 invocations scan their workgroup's values in shared memory: Hillis-Steele (inclusive,
    two barriers per step) or Blelloch (exclusive; divergent work between uniform barriers).
    Workgroups form a (3, 2) grid; uint32 sums wrap."""
    k = kc("prefix_sum", spec={0: blelloch})
    assert tuple(k.local_size) == (256, 1, 1)
    data = rng.integers(0, 2**32, 256 * 6, dtype=np.uint32)
    data[:256] = rng.integers(0, 1000, 256)            # one workgroup of small values
    orig = data.copy()
    sums = np.full(6, 0xDEADBEEF, np.uint32)
    k.dispatch((3, 2, 1), {0: data, 1: sums}, threads=threads)
    want, want_sums = _scan_reference(orig, exclusive=blelloch)
    np.testing.assert_array_equal(data, want)
    np.testing.assert_array_equal(sums, want_sums)


def test_prefix_sum_kernel_is_reusable(kc, rng):
    """The same compiled kernel, dispatched again on new data and a different grid, starts from
    fresh shared memory each workgroup."""
    k = kc("prefix_sum", spec={0: False})
    for n in (1, 5):
        data = rng.integers(0, 2**32, 256 * n, dtype=np.uint32)
        orig = data.copy()
        sums = np.zeros(n, np.uint32)
        k.dispatch((n, 1, 1), {0: data, 1: sums})
        want, want_sums = _scan_reference(orig, exclusive=False)
        np.testing.assert_array_equal(data, want)
        np.testing.assert_array_equal(sums, want_sums)
