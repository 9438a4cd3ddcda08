"""The fixed cost of a dispatch: a one-workgroup saxpy (benchmarks/shaders/saxpy.comp, 256
invocations, 256 floats), whose kernel runs in microseconds, so what is timed is the dispatch
itself (binding checks, the snapshot of the writable buffer, the range table, the threads and the
watcher). Peer in the same run: Mesa lavapipe dispatching the same SPIR-V through tools/vkrun
(its output binding zeroed, then 1 + 500 dispatches, each a submit and a wait on a fence: the
best of the 500), where it is
installed (benchmarks/lavapipe.py); numpy's a * x + y on the same 256 floats for scale. Both with
one worker thread and with two (a workgroup of one: the second has nothing to do).

    python3 -m pytest benchmarks/test_bench_dispatch.py -q -s
"""
import struct

import numpy as np
import pytest

import jitcoop
import lavapipe
from conftest import SHADERS, best_of

N = 256
ROUNDS = 2000


@pytest.fixture(scope="module")
def saxpy():
    k = jitcoop.Device().load(SHADERS / "saxpy.spv").kernel()
    x = np.arange(N, dtype=np.float32)
    y = np.ones(N, np.float32)
    return k, x, y, struct.pack("<fI", 2.0, N)


@pytest.fixture(scope="module")
def peer():
    return lavapipe.find()


@pytest.mark.parametrize("threads", [1, 2])
def test_dispatch_latency(benchmark, report, saxpy, peer, threads):
    k, x, y, push = saxpy
    yy = y.copy()
    run = lambda: k.dispatch(1, {0: x, 1: yy}, push=push, threads=threads)
    run()
    np.testing.assert_array_equal(yy, 2.0 * x + 1.0)
    benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=20)
    t_jc = benchmark.stats.stats.min
    t_np = best_of(lambda: 2.0 * x + y, 200)
    info = dict(jitcoop_us=t_jc * 1e6, numpy_us=t_np * 1e6)
    line = f"one-workgroup dispatch, threads={threads}: jitcoop {t_jc * 1e6:.0f} us (numpy's a*x+y {t_np * 1e6:.1f} us)"
    if not isinstance(peer, str):
        t_lvp, got = peer.time(SHADERS / "saxpy.spv", {}, (1, 1, 1), {0: x, 1: y.copy()}, 1, push, repeat=500)
        # vkrun's output binding starts zeroed, and all 501 dispatches add 2x to it
        np.testing.assert_array_equal(got, 501 * 2.0 * x)
        info.update(lavapipe_us=t_lvp * 1e6, ratio_to_lavapipe=t_lvp / t_jc)
        line += f"; lavapipe {t_lvp * 1e6:.0f} us: jitcoop at {t_lvp / t_jc:.2f}x lavapipe's speed"
    benchmark.extra_info.update(info)
    report(line)
