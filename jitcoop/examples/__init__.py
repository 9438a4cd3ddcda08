"""Bundled example shaders: a shared-memory tiled SGEMM and a saxpy, each checked against numpy."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def path(name: str) -> Path:
    """The .spv of a bundled example ("sgemm" or "saxpy")."""
    p = HERE / f"{name}.spv"
    if not p.exists():
        raise FileNotFoundError(f"no bundled example {name!r}; have {sorted(x.stem for x in HERE.glob('*.spv'))}")
    return p


def run_sgemm(n: int = 256, seed: int = 0, device=None):
    """C = A @ B with the tiled SGEMM shader (n a multiple of 64). Returns (ok, report, max_err)."""
    import jitcoop
    if n % 64:
        raise ValueError("n must be a multiple of 64")
    dev = device or jitcoop.Device()
    k = dev.load(path("sgemm")).kernel()
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    report = k.dispatch((n // 64, n // 64, 1), {0: a, 1: b, 2: c}, push=struct.pack("<3I", n, n, n))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # float32 sums of n products: a few ulps of the row norms.
    tol = 1e-5 * np.sqrt(n) * np.abs(a).max() * np.abs(b).max() * np.sqrt(n)
    err = float(np.abs(c - ref).max())
    return err <= tol, report, err
