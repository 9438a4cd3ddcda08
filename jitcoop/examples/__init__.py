"""Bundled example shaders, GLSL beside the SPIR-V glslang compiled from it:

- ``sgemm``: C = alpha * A @ B + beta * C in float32, row-major; 16 x 16 workgroups stage 16 x 16
  tiles of A and B through ``shared`` arrays between ``barrier()`` calls. Push constants
  ``{uint M, N, K; float alpha, beta}``; bindings 0: A (M x K), 1: B (K x N), 2: C (M x N);
  grid ``(ceil(N / 16), ceil(M / 16), 1)``. Edges are bounds-checked: any M, N, K work.
- ``saxpy``: y = a * x + y. Push constants ``{float a; uint n}``; bindings 0: x, 1: y; the
  workgroup size is spec constant 0 (default 64).

    ok, report, max_err = jitcoop.examples.run_sgemm(256)

Rebuild the .spv files with glslang 16 (``G=$(shared/tools/get-glslang)/bin``):
``$G/glslang -V --target-env vulkan1.3 sgemm.comp -o sgemm.spv`` (and the same for saxpy).
"""
from __future__ import annotations

import struct
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TILE = 16


def names() -> list[str]:
    """The bundled examples."""
    return sorted(p.stem for p in HERE.glob("*.spv"))


def path(name: str) -> Path:
    """The .spv of a bundled example ("sgemm" or "saxpy")."""
    p = HERE / f"{name}.spv"
    if not p.exists():
        raise FileNotFoundError(f"no bundled example {name!r}; have {', '.join(names())}")
    return p


def source(name: str) -> str:
    """The GLSL source of a bundled example."""
    return (HERE / f"{name}.comp").read_text()


def sgemm_push(m: int, n: int, k: int, alpha: float = 1.0, beta: float = 0.0) -> bytes:
    """The sgemm shader's push constants."""
    return struct.pack("<3I2f", m, n, k, alpha, beta)


def sgemm_grid(m: int, n: int) -> tuple:
    return (-(-n // TILE), -(-m // TILE), 1)


def run_sgemm(n: int = 128, seed: int = 0, *, m: int | None = None, k: int | None = None,
              alpha: float = 1.0, beta: float = 0.0, device=None, threads: int | None = None):
    """Run the tiled SGEMM on random M x K and K x N matrices (M = K = N = n unless given) and check
    it against a float64 numpy product.

    Returns ``(ok, report, max_err)``: whether every element is within the float32 error bound of a
    K-term dot product (K * 2**-24 * (|alpha| |A| @ |B| + |beta| |C|), elementwise), the dispatch
    report (``report.extra`` holds ``numpy_seconds``, ``gflops`` and the shape), and the largest
    absolute error.
    """
    import jitcoop
    m = n if m is None else m
    k = n if k is None else k
    if min(m, n, k) < 1:
        raise ValueError(f"sgemm sizes must be positive, got M={m}, N={n}, K={k}")
    dev = device or jitcoop.Device()
    kern = dev.load(path("sgemm")).kernel()
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = rng.standard_normal((m, n), dtype=np.float32) if beta else np.zeros((m, n), np.float32)
    c0 = c.copy()
    report = kern.dispatch(sgemm_grid(m, n), {0: a, 1: b, 2: c}, push=sgemm_push(m, n, k, alpha, beta),
                           threads=threads)
    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c0.astype(np.float64)
    ref = alpha * (a64 @ b64) + beta * c64
    bound = (k + 2) * 2.0 ** -24 * (abs(alpha) * (np.abs(a64) @ np.abs(b64)) + abs(beta) * np.abs(c64))
    err = np.abs(c.astype(np.float64) - ref)
    ok = bool(np.isfinite(c).all() and (err <= bound + 1e-30).all())
    _ = a @ b                                    # numpy's timing without its first-call setup
    t0 = time.perf_counter()
    _ = alpha * (a @ b) + beta * c0
    report.extra.update(shape=(m, n, k), numpy_seconds=time.perf_counter() - t0,
                        gflops=2.0 * m * n * k / max(report.run_seconds, 1e-12) / 1e9)
    return ok, report, float(err.max())
