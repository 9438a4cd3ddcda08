"""Portability diagnostics (jitcoop.diagnostics) and robust buffer access, through the Python API.

References: the tensor-addressing pseudo-code of SPV_NV_cooperative_matrix2 written in numpy
(tests/test_coopmat2_tensor.py's `element`), extended by the rule the H100 follows where the text
says "undefined" (the coordinate used as it is: `unclamped=True`); for robust buffer access,
the rules of Vulkan's robustBufferAccess2 worked out by hand per invocation. The H100's own
buffers for the same shaders are compared in tests/test_h100_recorded.py (portability_*), and
the driver's debug-utils messages in tests/test_icd.py.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop.diagnostics import RULES, PortabilityWarning
from test_coopmat2_tensor import (CONSTANT, LOAD, LOAD_V1, M, N, STORE, STORE_V1, UNDEFINED, _assert_names,
                                  check_load, check_store, element_map, max_index, plain_case, tensor_kernel)

SHADERS = Path(__file__).resolve().parent / "shaders" / "portability"
SITES = {LOAD: "load", LOAD_V1: "load-view", STORE: "store", STORE_V1: "store-view"}


def _name(site):
    return "OpCooperativeMatrixLoadTensorNV" if site in (LOAD, LOAD_V1) else "OpCooperativeMatrixStoreTensorNV"


def _run_recorded(fn):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn()
    return [w.message for w in got if isinstance(w.message, PortabilityWarning)]


def _kernel(name, clamp, **options):
    """A new Kernel (a new pipeline: diagnostics are reported once per kernel and instruction)
    of a tensor_nd.comp variant; its code comes from the compile cache."""
    return jitcoop.Device("generic").load(SHADERS.parent / "coopmat2" / f"{name}.spv").kernel(
        spec={0: clamp}, **options)


def _case(site, clamp, off, base=0):
    view = site in (LOAD_V1, STORE_V1)
    dims, span = ([40, 20], [N, M]) if view else ([20, 40], [M, N])
    return plain_case(2, clamp, site, dims, off[::-1] if view else off, span, base=base)


# ---------------------------------------------------------------------------------------------
# A tensor Pointer that is not 16-byte aligned
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("site", list(SITES), ids=list(SITES.values()))
@pytest.mark.parametrize("base", [1, 2, 3, 5])
def test_misaligned_pointer_runs_as_the_hardware(site, base):
    """The Pointer `base` elements (4 x base bytes) into the binding: every element addressed
    from the Pointer as given (the reference's base), one warning naming the instruction, the
    workgroup, the lane and the rule; a second dispatch of the kernel warns no more."""
    k = _kernel("tensor_2d", CONSTANT)
    rng = np.random.default_rng(100 + 10 * site + base)
    c = _case(site, CONSTANT, [3, 5], base=base)
    check = check_store if site >= STORE else check_load
    first = _run_recorded(lambda: check(k, c, rng, pad=64))
    again = _run_recorded(lambda: check(k, c, rng, pad=64))
    assert len(first) == 1 and again == []
    for w in first:
        assert w.rule == "tensor-pointer-alignment" and w.rule in RULES
        _assert_names(w, _name(site), result=site < STORE)
        assert f"at byte offset {4 * base} of binding (set 0, binding 0)" in str(w)
        assert "strict=True makes it an error" in str(w)


@pytest.mark.parametrize("site", [LOAD, STORE], ids=["load", "store"])
def test_misaligned_pointer_warns_once_per_kernel_and_instruction(site):
    k = _kernel("tensor_2d", CONSTANT)
    rng = np.random.default_rng(7)
    c = _case(site, CONSTANT, [3, 5], base=1)
    check = check_store if site >= STORE else check_load
    got = _run_recorded(lambda: check(k, c, rng, pad=64)) + _run_recorded(lambda: check(k, c, rng, pad=64))
    assert len(got) == 1 and got[0].rule == "tensor-pointer-alignment"
    # an aligned Pointer reports nothing
    assert _run_recorded(lambda: check(_kernel("tensor_2d", CONSTANT), _case(site, CONSTANT, [3, 5], base=4),
                                       rng, pad=64)) == []
    # a new kernel of the same code is a new pipeline: it reports again
    assert len(_run_recorded(lambda: check(_kernel("tensor_2d", CONSTANT), c, rng, pad=64))) == 1


@pytest.mark.parametrize("site", [LOAD, STORE], ids=["load", "store"])
def test_misaligned_pointer_is_an_error_when_strict(site):
    """strict=True on the device: the specification's rule, the buffers left as they were."""
    dev = jitcoop.Device("generic", strict=True)
    k = dev.load(SHADERS.parent / "coopmat2" / "tensor_2d.spv").kernel(spec={0: CONSTANT})
    assert k.options.strict
    c = _case(site, CONSTANT, [3, 5], base=1)
    rng = np.random.default_rng(8)
    need = 1 + max_index(element_map(c.layout(), c.view(), M, N, c.store)) + 64
    tensor = rng.integers(0, 1 << 32, need, dtype=np.uint32)
    o = rng.integers(0, 1 << 32, M * N, dtype=np.uint32)
    t0, o0 = tensor.copy(), o.copy()
    with pytest.raises(jitcoop.ExecutionError, match="must be 16-byte aligned; it is at byte offset 4") as ei:
        k.dispatch((1, 1, 1), {0: tensor, 1: o, 2: c.params()})
    _assert_names(ei.value, _name(site), result=site < STORE)
    np.testing.assert_array_equal(tensor, t0)
    np.testing.assert_array_equal(o, o0)


def test_warnings_filter_makes_diagnostics_errors():
    """PortabilityWarning is a JitcoopWarning, so Python's own filter can make it an exception."""
    assert issubclass(PortabilityWarning, jitcoop.errors.JitcoopWarning)
    k = _kernel("tensor_2d", CONSTANT)
    c = _case(LOAD, CONSTANT, [0, 0], base=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", jitcoop.errors.JitcoopWarning)
        with pytest.raises(PortabilityWarning):
            k.dispatch((1, 1, 1), {0: np.zeros(1024, np.uint32), 1: np.zeros(M * N, np.uint32), 2: c.params()})


# ---------------------------------------------------------------------------------------------
# Coordinates outside the tensor with clamp mode Undefined
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("site", [LOAD, STORE], ids=["load", "store"])
@pytest.mark.parametrize("off", [[0, 30], [10, 0], [12, 28]], ids=["columns", "rows", "both"])
def test_undefined_past_the_tensor_runs_as_the_hardware(site, off):
    """A 20 x 40 tensor read or written from (row, column) `off`: the elements past its edge are
    addressed at their coordinates as they are (past the last column: into the next row; past
    the last row: after the tensor, inside the binding here)."""
    k = _kernel("tensor_2d_lite", UNDEFINED)
    rng = np.random.default_rng(200 + site + off[0])
    c = _case(site, UNDEFINED, off)
    check = check_store if site >= STORE else check_load
    got = _run_recorded(lambda: check(k, c, rng, unclamped=True))
    assert len(got) == 1
    for w in got:
        assert w.rule == "tensor-clamp-undefined"
        _assert_names(w, _name(site), result=site < STORE)
        assert "outside the tensor, and the layout's clamp mode is Undefined" in str(w)


def test_undefined_past_the_buffer_is_still_an_error():
    """Addressed as it is, an element whose coordinate lies past the binding is an out-of-bounds
    access like any other: the device is lost (an ExecutionError), the buffers kept."""
    k = tensor_kernel(2, UNDEFINED, lite=True)
    c = _case(LOAD, UNDEFINED, [10, 0])
    tensor = np.arange(20 * 40, dtype=np.uint32)             # exactly the tensor: rows 20.. are past it
    o = np.zeros(M * N, np.uint32)
    with pytest.raises(jitcoop.ExecutionError, match="reaches outside binding"):
        _run_recorded(lambda: k.dispatch((1, 1, 1), {0: tensor, 1: o, 2: c.params()}))
    assert not o.any()


def test_undefined_past_the_tensor_is_an_error_when_strict():
    k = tensor_kernel(2, UNDEFINED, lite=True, strict=True)
    c = _case(LOAD, UNDEFINED, [0, 30])
    with pytest.raises(jitcoop.ExecutionError, match="outside the tensor, and the layout's clamp mode is Undefined"):
        k.dispatch((1, 1, 1), {0: np.zeros(2048, np.uint32), 1: np.zeros(M * N, np.uint32), 2: c.params()})


# ---------------------------------------------------------------------------------------------
# Robust buffer access
# ---------------------------------------------------------------------------------------------

def _robust_inputs():
    return ((np.arange(64) + 1).astype(np.uint32), np.full(64, 0x7FC0DEAD, np.uint32), np.zeros(64, np.uint32),
            np.zeros((64, 2), np.uint32))


@pytest.mark.parametrize("first", [0, 32, 60, 200])
def test_robust_buffer_access(first):
    """robust_access.comp: invocation i reads x[k], writes w[k] and adds 1 to a[k] for k =
    first + i, with 64-element bindings. Past the end a read gives 0 and a write or an atomic
    changes nothing (robustBufferAccess2); inside, the plain results."""
    k = jitcoop.Device("nvidia").load(SHADERS / "robust_access.spv").kernel(robust_buffer_access=True)
    x, w, a, o = _robust_inputs()
    k((2, 1, 1), {0: x, 1: w, 2: a, 3: o}, push=np.array([first], np.uint32))
    i = np.arange(64)
    kk = first + i
    inside = kk < 64
    np.testing.assert_array_equal(o[:, 0], np.where(inside, kk + 1, 0))
    np.testing.assert_array_equal(o[:, 1], 0)       # the old value of a[k]; past the end zero too
    want_w = np.full(64, 0x7FC0DEAD, np.uint32)
    want_w[kk[inside]] = 0xA0000000 + i[inside]
    np.testing.assert_array_equal(w, want_w)
    want_a = np.zeros(64, np.uint32)
    want_a[kk[inside]] = 1
    np.testing.assert_array_equal(a, want_a)


def test_out_of_bounds_without_robustness_is_an_error():
    k = jitcoop.Device("nvidia").load(SHADERS / "robust_access.spv").kernel()
    x, w, a, o = _robust_inputs()
    with pytest.raises(jitcoop.ExecutionError, match="out-of-bounds access: 4 bytes at byte offset 256 of binding"):
        k((2, 1, 1), {0: x, 1: w, 2: a, 3: o}, push=np.array([32], np.uint32))
    assert (w == 0x7FC0DEAD).all() and not a.any() and not o.any()
