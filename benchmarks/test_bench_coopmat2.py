"""coopmat2 benchmarks (issue 4): a 4-bit block-quantized GEMM (Q4_0: 32 values per block, a
float16 scale and 16 bytes of nibbles, decoded by a DecodeFunc; workgroup-scope 128 x 128 tiles,
K steps of 32) at M = N = 1024, K = 4096, against numpy doing the same dequantization and a
float32 matmul in the same run; and the time per decoded element of the scalar (DecodeFunc) and
vector (DecodeVectorFunc, 8 elements per call) paths, from the profiling counters. The scalar
path also runs with numerics="float32" (float32 sums in the MulAdds)."""
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from conftest import best_of

APPS = Path(__file__).resolve().parents[1] / "tests" / "shaders" / "coopmat2_apps"
M = N = 1024
K = 4096


@pytest.fixture(scope="module")
def q4():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
    nb = K // 32
    blk = np.zeros((N, nb), dtype=[("d", "<f2"), ("qs", "u1", 16)])
    blk["d"] = (rng.random((N, nb)) * 0.1 + 0.01).astype(np.float16)
    blk["qs"] = rng.integers(0, 256, (N, nb, 16), dtype=np.uint8)
    return a, blk


def numpy_q4_gemm(a32, blk):
    """The same dequantization as the shader ((q - 8) * d in float16), then a float32 matmul."""
    q, d = blk["qs"], blk["d"]
    vals = np.concatenate([(q & 15), (q >> 4)], axis=2).astype(np.float16) - np.float16(8)
    w = (vals * d[:, :, None]).astype(np.float32).reshape(N, K)
    return a32 @ w.T


@pytest.mark.parametrize("path,numerics", [("scalar", "exact"), ("vector", "exact"), ("scalar", "float32")])
def test_q4_gemm(benchmark, report, q4, path, numerics):
    a, blk = q4
    shader = "q4_gemm_vec" if path == "vector" else "q4_gemm"
    k = jitcoop.Device("generic").load(APPS / f"{shader}.spv").kernel(decode_vector=path,
                                                                      numerics=numerics)
    out = np.zeros((M, N), np.float32)
    push = np.array([M, N, K], np.uint32)
    run = lambda: k.dispatch((M // 128, N // 128, 1), {0: a, 1: blk, 2: out, 3: blk["d"]}, push=push)
    run()
    a32 = a.astype(np.float32)
    ref = numpy_q4_gemm(a32, blk)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-4 * np.abs(ref).max())
    benchmark.pedantic(run, rounds=2, iterations=1, warmup_rounds=0)
    t_jc = benchmark.stats.stats.min
    t_np = best_of(lambda: numpy_q4_gemm(a32, blk), 3)
    prof = k.dispatch((M // 128, N // 128, 1), {0: a, 1: blk, 2: out, 3: blk["d"]}, push=push,
                      profile=True).profile
    rows = [r for r in prof.callbacks if r["elements"]]
    decoded = sum(r["elements"] for r in rows)
    ns = sum(r["seconds"] for r in rows) * 1e9 / decoded
    flop = 2 * M * N * K
    benchmark.extra_info.update(seconds=t_jc, numpy_seconds=t_np, times_numpy=t_jc / t_np,
                                gflops=flop / t_jc / 1e9, decoded_elements=decoded,
                                ns_per_decoded_element=ns)
    report(f"Q4_0 GEMM {M}x{N}x{K} ({path} decode, numerics={numerics}): {t_jc:.2f} s "
           f"({flop / t_jc / 1e9:.1f} GFLOP/s), numpy dequantize + float32 matmul {t_np:.3f} s: "
           f"{t_jc / t_np:.1f}x numpy's time; {decoded:,} decoded elements at {ns:.1f} ns each "
           f"(the decoding loads' element loops, profiled: its counters add time)")
