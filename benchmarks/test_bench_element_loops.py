"""Element loops (codegen/element_loops.py): an element-wise instruction on a fragment of more
than 32 components per invocation runs as a loop over the components; `element_loops=False`
writes it out component by component, as the generator did before. Side by side in one run:

- tests/shaders/long_fragments.comp (a dozen element-wise instructions, conversions and matrix
  copies on N x N workgroup matrices held by WG invocations) at 64, 256 and 1024 components per
  invocation: each form's cold compile (in a fresh process: benchmarks/compile_probe.py) and its
  dispatch on one thread (best of several, 256 workgroups), with numpy computing the same ten
  results as the peer in the same test;
- the production flash attention at its default specialization (one invocation per workgroup,
  2048-component fragments), loops only (written out it compiles in about 100 s), against numpy's
  attention on the same inputs.

    python3 -m pytest benchmarks/test_bench_element_loops.py -q -s
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from conftest import best_of

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_element_loops import SCALE, STEPS, expected  # noqa: E402  (numpy from the shader's GLSL)

SHADER = ROOT / "tests" / "shaders" / "long_fragments.spv"
PROBE = Path(__file__).with_name("compile_probe.py")
WORKGROUPS = 256


def cold_compile(spec, options) -> float:
    """Seconds to compile in a fresh process with an empty jitcoop cache."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, str(PROBE), str(SHADER), "--spec", json.dumps(spec), "--options", json.dumps(options)]
        out = subprocess.run(cmd, env={**os.environ, "JITCOOP_CACHE_DIR": d}, capture_output=True,
                             text=True, timeout=1800)
        if out.returncode:
            raise AssertionError(out.stderr[-3000:])
        return json.loads(out.stdout.strip().splitlines()[-1])["kernel_s"]


@pytest.mark.parametrize("wg,n", [(16, 32), (4, 32), (1, 32)], ids=["64", "256", "1024"])
def test_long_fragments(benchmark, report, wg, n):
    spec = {0: wg, 1: n}
    rng = np.random.default_rng(0)
    a = rng.uniform(-4, 4, (WORKGROUPS, n, n)).astype(np.float32)
    b = rng.uniform(0, 1, (WORKGROUPS, n, n)).astype(np.float32)
    # every workgroup reads the same matrices (the shader has no workgroup offset): the peer
    # computes the results once per workgroup as well
    a0, b0 = a[0], b[0]
    o = np.zeros(8 * n * n, np.float32)
    oi = np.zeros(2 * n * n, np.int32)
    push = struct.pack("<fi", SCALE, STEPS)
    res = {}
    for loops in (True, False):
        k = jitcoop.Device().load(SHADER).kernel(spec=spec, element_loops=loops)
        run = lambda k=k: k.dispatch((WORKGROUPS, 1, 1), {0: a0, 1: b0, 2: o, 3: oi}, push=push, threads=1)
        run()
        floats, ints = expected(a0, b0)
        for i, want in enumerate(floats):
            np.testing.assert_array_equal(o.reshape(8, n, n)[i], want)
        for i, want in enumerate(ints):
            np.testing.assert_array_equal(oi.reshape(2, n, n)[i], want)
        if loops:
            benchmark.pedantic(run, rounds=10, iterations=1, warmup_rounds=1)
            t = benchmark.stats.stats.min
        else:
            t = best_of(run, 10)
        res[loops] = (t, cold_compile(spec, {"element_loops": loops}))
    t_np = best_of(lambda: [expected(a0, b0) for _ in range(WORKGROUPS)], 3)
    (t_loop, c_loop), (t_out, c_out) = res[True], res[False]
    benchmark.extra_info.update(components=n * n // wg, seconds=t_loop, written_out_seconds=t_out,
                                numpy_seconds=t_np, compile_s=c_loop, written_out_compile_s=c_out)
    report(f"long_fragments, {n * n // wg} components per invocation ({wg} invocations, {n} x {n}), "
           f"{WORKGROUPS} workgroups on one thread: element loops {t_loop * 1e3:.2f} ms, written out "
           f"{t_out * 1e3:.2f} ms ({t_out / t_loop:.2f}x the loops' time), numpy {t_np * 1e3:.2f} ms "
           f"({t_loop / t_np:.2f}x numpy's time); cold compile {c_loop:.2f} s against {c_out:.2f} s "
           f"({c_out / c_loop:.1f}x)")


def test_flash_attention_one_invocation(benchmark, report):
    import test_flash_attn_prod as fa
    c = next(x for x in fa.CASES if x.wg == 1)
    x = fa.inputs(c)
    k = jitcoop.Device().load(fa.SH / "flash_attn.spv").kernel(spec=c.spec)
    out = np.zeros((c.n, c.hkv * c.gqa, c.hsv), np.float32)
    run = lambda: k.dispatch(c.grid, {0: x["q"], 1: x["kb"], 2: x["vb"], 3: x["mask"], 4: out}, push=x["push"])
    run()
    fa.check(c, out, x)
    benchmark.pedantic(run, rounds=10, iterations=1, warmup_rounds=1)
    t = benchmark.stats.stats.min
    t_np = best_of(lambda: fa.attention(c, x), 10)
    compile_s = k.compile_seconds
    benchmark.extra_info.update(seconds=t, numpy_seconds=t_np, compile_s=compile_s)
    report(f"production flash attention, one invocation per workgroup ({c.name}): {t * 1e3:.2f} ms, numpy's "
           f"attention {t_np * 1e3:.2f} ms ({t / t_np:.2f}x numpy's time); compiled in {compile_s:.2f} s"
           f"{' (from the cache)' if k.cache_hit else ''}")
