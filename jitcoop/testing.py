"""Comparing shader results with references, for tests: ULP and relative tolerances that print the
worst elements when they fail.

    from jitcoop.testing import assert_ulp_close, assert_close
    assert_ulp_close(c, a.astype(np.float64) @ b, max_ulp=2)   # in ULPs of c's format (float16...)
    assert_close(c, want, rtol=1e-3, atol=1e-6)

Both take numpy arrays of any float type, ml_dtypes' bfloat16 and fp8 included, and compare in
float64 (which holds every value of those formats exactly).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np


def _float64(x, what) -> np.ndarray:
    a = np.asarray(x)
    try:
        return a.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must hold numbers, not {a.dtype}") from None


def _pair(actual, expected):
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape:
        raise AssertionError(f"shapes differ: actual {a.shape}, expected {e.shape}")
    return a, _float64(a, "actual"), _float64(e, "expected")


def ulp(x, dtype) -> np.ndarray:
    """The spacing of the float format `dtype` at each |x| (float64): 2^(exponent - mantissa
    bits), the subnormal spacing below the smallest normal number."""
    fi = ml_dtypes.finfo(np.dtype(dtype))
    x = np.abs(np.asarray(x, np.float64))
    _, e = np.frexp(x)                                     # |x| = m * 2^e, 0.5 <= m < 1
    e = np.where(x == 0, fi.minexp, np.maximum(e - 1, fi.minexp))
    return np.ldexp(1.0, e - fi.nmant)


def ulp_error(actual, expected, dtype=None) -> np.ndarray:
    """|actual - expected| in ULPs of `dtype` (default: actual's format) at `expected`. A correctly
    rounded result is within 0.5; equal infinities and two NaNs are 0; a NaN or an infinity
    against anything else is inf."""
    a_raw, a, e = _pair(actual, expected)
    dt = np.dtype(dtype) if dtype is not None else a_raw.dtype
    if dt.kind != "f" and not _is_ml_float(dt):
        raise TypeError(f"ULPs are defined for floating-point formats, not {dt}")
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(a - e) / ulp(e, dt)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    err = np.where(same, 0.0, err)
    return np.where(np.isnan(err), np.inf, err)


def _is_ml_float(dt) -> bool:
    try:
        ml_dtypes.finfo(dt)
        return True
    except (TypeError, ValueError):
        return False


def _worst(bad_idx, score, a, e, extra, count, shape) -> str:
    order = np.argsort(-score[bad_idx], kind="stable")[:count]
    lines = []
    for j in order:
        flat = bad_idx[j]
        where = np.unravel_index(flat, shape) if shape else ()
        idx = "[" + ", ".join(map(str, where)) + "]"
        lines.append(f"  {idx}: actual {float(a[flat])!r}, expected {float(e[flat])!r}, {extra(flat)}")
    return "\n".join(lines)


def assert_ulp_close(actual, expected, max_ulp: float = 1, dtype=None, worst: int = 5):
    """Every element of `actual` within `max_ulp` ULPs of `expected` (see ulp_error); otherwise
    an AssertionError naming how many differ and the `worst` largest errors."""
    a_raw = np.asarray(actual)
    err = ulp_error(actual, expected, dtype).reshape(-1)
    bad = np.flatnonzero(err > max_ulp)
    if bad.size == 0:
        return
    dt = np.dtype(dtype) if dtype is not None else a_raw.dtype
    a, e = _float64(a_raw, "actual").reshape(-1), _float64(expected, "expected").reshape(-1)
    raise AssertionError(
        f"{bad.size} of {err.size} elements differ by more than {max_ulp} ulp ({dt}); worst:\n"
        + _worst(bad, err, a, e, lambda i: f"{err[i]:.3g} ulp", worst, a_raw.shape))


def assert_close(actual, expected, rtol: float = 1e-6, atol: float = 0.0, worst: int = 5):
    """|actual - expected| <= atol + rtol * |expected| everywhere (NaN matches NaN only);
    otherwise an AssertionError naming how many differ and the `worst` elements (by how far
    they exceed the tolerance), with their absolute and relative errors."""
    a_raw, a, e = _pair(actual, expected)
    a, e = a.reshape(-1), e.reshape(-1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.abs(a - e)
        bound = atol + rtol * np.abs(e)
        ok = (diff <= bound) | (a == e) | (np.isnan(a) & np.isnan(e))
        score = np.where(np.isnan(diff), np.inf, diff / np.where(bound > 0, bound, np.finfo(float).tiny))
        rel = diff / np.abs(e)
    bad = np.flatnonzero(~ok)
    if bad.size == 0:
        return
    raise AssertionError(
        f"{bad.size} of {a.size} elements differ by more than atol={atol} + rtol={rtol} * |expected|; "
        "worst:\n" + _worst(bad, score, a, e, lambda i: f"abs error {diff[i]:.3g}, rel error {rel[i]:.3g}",
                             worst, a_raw.shape))
