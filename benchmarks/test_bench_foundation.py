"""Foundation benchmarks: a per-lane scalar SGEMM, a bandwidth-bound saxpy, compile and cache, and
what lane groups are worth in kernels with barriers."""
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from conftest import SHADERS, best_of


@pytest.fixture(scope="module")
def dev():
    return jitcoop.Device()


def test_sgemm_512(benchmark, dev, report):
    n = 512
    k = dev.load(SHADERS / "sgemm_tiled.spv").kernel()
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    push = struct.pack("<3I", n, n, n)
    run = lambda: k.dispatch((n // 64, n // 64, 1), {0: a, 1: b, 2: c}, push=push)
    run()
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4)
    benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1)
    t_jc = benchmark.stats.stats.min
    t_np = best_of(lambda: a @ b, 10)
    flop = 2 * n ** 3
    benchmark.extra_info.update(gflops=flop / t_jc / 1e9, numpy_gflops=flop / t_np / 1e9,
                                ratio_to_numpy=t_np / t_jc)
    report(f"SGEMM 512^3: {flop / t_jc / 1e9:.2f} GFLOP/s, numpy {flop / t_np / 1e9:.1f} GFLOP/s, "
           f"ratio {t_np / t_jc:.3%}")


def test_saxpy_2_24(benchmark, dev, report):
    n = 1 << 24
    k = dev.load(SHADERS / "saxpy.spv").kernel()
    rng = np.random.default_rng(1)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    y0 = y.copy()
    push = struct.pack("<fI", 2.0, n)
    k.dispatch((n // 256, 1, 1), {0: x, 1: y}, push=push)
    np.testing.assert_array_equal(y, np.float32(2.0) * x + y0)
    run = lambda: k.dispatch((n // 256, 1, 1), {0: x, 1: y}, push=push)
    benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1)
    t_jc = benchmark.stats.stats.min
    t_np = best_of(lambda: np.float32(2.0) * x + y, 5)
    gbytes = 3 * 4 * n / 1e9          # read x, read y, write y
    benchmark.extra_info.update(gbps=gbytes / t_jc, numpy_gbps=gbytes / t_np, ratio_to_numpy=t_np / t_jc)
    report(f"saxpy 2^24: {gbytes / t_jc:.1f} GB/s, numpy {gbytes / t_np:.1f} GB/s, ratio {t_np / t_jc:.1%}")


_COLD = """
import os, sys, time
t0 = time.perf_counter()
import jitcoop
dev = jitcoop.Device()
m = dev.load(sys.argv[1])
t1 = time.perf_counter()
k = m.kernel()
t2 = time.perf_counter()
print(t2 - t1, t2 - t0, k.cache_hit)
"""


def test_compile_cold_and_warm(benchmark, tmp_path, report):
    """Cold: an empty JITCOOP_CACHE_DIR in a new process. Warm: the same again (disk cache)."""
    env = dict(__import__("os").environ, JITCOOP_CACHE_DIR=str(tmp_path))
    shader = str(SHADERS / "sgemm_tiled.spv")

    def once():
        out = subprocess.run([sys.executable, "-c", _COLD, shader], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
        return float(out[0]), float(out[1]), out[2] == "True"
    cold = once()
    warm = benchmark.pedantic(once, rounds=3, iterations=1)
    # In-process warm start: kernel object from the disk cache with jitcoop already imported.
    dev = jitcoop.Device()
    mod = dev.load(shader)
    mod.kernel()
    t = time.perf_counter()
    mod.kernel()
    inproc = time.perf_counter() - t
    benchmark.extra_info.update(cold_s=cold[0], warm_s=warm[0], warm_cache_hit=warm[2],
                                in_process_s=inproc)
    report(f"SGEMM compile: cold {cold[0]:.2f} s, warm (new process) {warm[0]:.3f} s "
           f"(cache hit {warm[2]}), warm in process {inproc * 1e3:.1f} ms")


@pytest.mark.parametrize("case", ["sgemm_1024", "prefix_sum_blelloch"])
def test_lane_groups_with_collectives(benchmark, dev, report, case):
    """What lane groups are worth in kernels with barriers, whose lane loop LLVM cannot vectorize
    (codegen/lanevec.py, VECTOR_SIZE_SYNC): the default kernel (lane groups, timed) against the
    same shader with lane_groups=False (the peer), interleaved, one thread each; both results
    checked against numpy (the SGEMM's float64 matmul, the scan's cumsum)."""
    if case == "sgemm_1024":
        n = 1024
        rng = np.random.default_rng(0)
        a = rng.random((n, n), dtype=np.float32)
        b = rng.random((n, n), dtype=np.float32)
        c = np.zeros((n, n), np.float32)
        path, grid, spec, work = SHADERS / "sgemm_tiled.spv", (n // 64, n // 64, 1), {}, 2 * n ** 3
        bind, push = {0: a, 1: b, 2: c}, struct.pack("<3I", n, n, n)

        def check():
            np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4)
            c[:] = 0
    else:
        nwg = 4096
        data = np.random.default_rng(2).integers(0, 1000, nwg * 256).astype(np.uint32)
        want = data.reshape(nwg, 256).cumsum(axis=1, dtype=np.uint64).astype(np.uint32)
        sums = np.zeros(nwg, np.uint32)
        path = Path(__file__).parents[1] / "tests" / "shaders" / "prefix_sum.spv"
        grid, spec, work, push = (nwg, 1, 1), {0: True}, nwg * 256, None
        bind = {0: data.copy(), 1: sums}

        def check():
            # Blelloch: exclusive scan in place, totals in sums
            excl = np.concatenate([np.zeros((nwg, 1), np.uint32), want[:, :-1]], axis=1)
            np.testing.assert_array_equal(bind[0].reshape(nwg, 256), excl)
            np.testing.assert_array_equal(sums, want[:, -1])
            bind[0][:] = data
    m = dev.load(path)
    ks = {on: m.kernel(spec=spec, lane_groups=on) for on in (True, False)}
    assert ks[True].meta.lane_group > 0, ks[True].meta.lane_group_why
    runs = {on: (lambda k=k: k.dispatch(grid, bind, push=push, threads=1)) for on, k in ks.items()}
    for on in (False, True):
        runs[on]()
        check()
    t_off = []
    benchmark.pedantic(runs[True], setup=lambda: t_off.append(best_of(runs[False], 1)), rounds=10,
                       iterations=1, warmup_rounds=0)
    t_on, t_off = benchmark.stats.stats.min, min(t_off)
    unit, scale = ("GFLOP/s", 1e9) if case.startswith("sgemm") else ("M elements/s", 1e6)
    benchmark.extra_info.update(rate=work / t_on / scale, rate_without=work / t_off / scale, unit=unit,
                                speedup=t_off / t_on)
    report(f"{case} one thread: lane groups {work / t_on / scale:.2f} {unit}, without "
           f"{work / t_off / scale:.2f} {unit}: {t_off / t_on:.2f}x")
