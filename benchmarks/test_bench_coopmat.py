"""KHR cooperative matrix benchmarks (issue 3): a subgroup-scope GEMM (64x64 workgroup tiles,
16x16x16 fp16 x fp16 -> fp32 MulAdds, A staged through shared memory) and its int8 x int8 ->
int32 twin at 1024^3, each as a ratio to numpy's float32 matmul of the same size in the same
run; and the cost of one MulAdd in a dependent loop. Issue 4: a workgroup-scope GEMM (one
128x128 accumulator per workgroup of 256 invocations, K steps of 32, fp16 x fp16 -> fp32, plain
KHR loads) on the generic and nvidia profiles. The fp16 GEMMs run with numerics="exact" (the
default: float64 sums) and with numerics="float32" (float32 fused multiply-adds, as a BLAS)."""
import struct

import numpy as np
import pytest

import jitcoop
from conftest import SHADERS, best_of

N = 1024
ROUNDS = 10


@pytest.fixture(scope="module")
def dev():
    return jitcoop.Device()


def _gemm(benchmark, dev, report, name, a, b, c, want, label, tile=64, numerics="exact"):
    k = dev.load(SHADERS / f"gemm_coopmat_{name}.spv").kernel(numerics=numerics)
    push = struct.pack("<3I", N, N, N)
    run = lambda: k.dispatch((N // tile, N // tile), {0: a, 1: b, 2: c}, push=push)
    run()
    want(c)
    # Both sides get the same number of timed runs, best of ROUNDS (on this shared machine the
    # first few dispatches after loading a kernel run up to 15% slower).
    benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    t_jc = benchmark.stats.stats.min
    a32 = a.astype(np.float32)
    b32 = b.astype(np.float32)
    t_np = best_of(lambda: a32 @ b32, ROUNDS)
    flop = 2 * N ** 3
    benchmark.extra_info.update(gflops=flop / t_jc / 1e9, numpy_gflops=flop / t_np / 1e9,
                                ratio_to_numpy=t_np / t_jc)
    report(f"{label} {N}^3: {flop / t_jc / 1e9:.2f} GFLOP/s, numpy float32 {flop / t_np / 1e9:.1f} "
           f"GFLOP/s, ratio {t_np / t_jc:.2%}")


def _f16_operands(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((N, N)).astype(np.float16)
    b = rng.standard_normal((N, N)).astype(np.float16)
    exact = a.astype(np.float64) @ b.astype(np.float64)

    def want(c):
        # Each K chunk is summed exactly and added to the float32 accumulator with one
        # rounding: the result is within a few float32 ulps of the exact product.
        np.testing.assert_allclose(c, exact, rtol=0, atol=1e-4 * np.abs(exact).max())
    return a, b, np.zeros((N, N), np.float32), want


@pytest.mark.parametrize("numerics", ["exact", "float32"])
def test_gemm_f16_f32(benchmark, dev, report, numerics):
    a, b, c, want = _f16_operands(0)
    _gemm(benchmark, dev, report, "f16", a, b, c, want,
          f"KHR GEMM fp16 x fp16 -> fp32 (numerics={numerics})", numerics=numerics)


@pytest.mark.parametrize("profile,numerics", [("generic", "exact"), ("generic", "float32"),
                                              ("nvidia", "exact")])
def test_gemm_wg_f16_f32(benchmark, report, profile, numerics):
    a, b, c, want = _f16_operands(2)
    _gemm(benchmark, jitcoop.Device(profile), report, "wg", a, b, c, want,
          f"workgroup-scope GEMM 128x128x32 fp16 x fp16 -> fp32 ({profile}, numerics={numerics})",
          tile=128, numerics=numerics)


def test_gemm_s8_s32(benchmark, dev, report):
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (N, N)).astype(np.int8)
    b = rng.integers(-128, 128, (N, N)).astype(np.int8)
    c = np.zeros((N, N), np.int32)
    exact = a.astype(np.int64) @ b.astype(np.int64)
    _gemm(benchmark, dev, report, "s8", a, b, c, lambda c: np.testing.assert_array_equal(c, exact),
          "KHR GEMM int8 x int8 -> int32 (exact)")


def test_muladd_overhead(benchmark, dev, report):
    n = 100_000
    k = dev.load(SHADERS / "muladd_loop.spv").kernel()
    a = (np.arange(512) % 3 - 1).astype(np.float16) / np.float16(64)
    c = np.zeros(256, np.float32)
    run = lambda: k.dispatch(1, {0: a, 1: c}, push=struct.pack("<I", n))
    run()
    A = a[:256].astype(np.float64).reshape(16, 16)
    B = a[256:].astype(np.float64).reshape(16, 16)
    # Entries of A and B are 0 or +-1/64: every partial sum k * (A @ B) is a multiple of 2**-12
    # below 2**12, exact in float32, so the loop's result is exactly n * (A @ B).
    np.testing.assert_array_equal(c.reshape(16, 16), (n * (A @ B)).astype(np.float32))
    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=0)
    t = benchmark.stats.stats.min
    # numpy's own per-call cost on the same 16x16 float32 product, as the peer
    A32, B32, C32 = A.astype(np.float32), B.astype(np.float32), np.zeros((16, 16), np.float32)
    t_np = best_of(lambda: [np.add(C32, A32 @ B32, out=C32) for _ in range(10_000)], 3) / 10_000
    benchmark.extra_info.update(ns_per_muladd=t / n * 1e9, numpy_ns_per_product=t_np * 1e9)
    report(f"16x16x16 MulAdd in a dependent loop: {t / n * 1e9:.0f} ns each "
           f"(numpy's 16x16 float32 matmul + add: {t_np * 1e9:.0f} ns per call)")
