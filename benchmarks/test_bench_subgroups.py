"""Subgroup operations where invocations may differ: tests/shaders/subgroup_scan.comp (42
reductions and scans: every operation, clustered ones, 64-bit) and subgroup_shuffle.comp
(shuffles, quads, ballots, votes, built-ins), 512 workgroups of 96 invocations, at the optimized
tier on one thread. Peer in the same test: Mesa lavapipe dispatching the same SPIR-V (tools/vkrun,
one llvmpipe thread; its subgroups are 8 wide), where it is installed (benchmarks/lavapipe.py).
Beside the speed, each kernel's cold compile at both tiers (a fresh process, an empty cache:
benchmarks/compile_probe.py), the fast tier being what a first dispatch waits for.

    python3 -m pytest benchmarks/test_bench_subgroups.py -q -s
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import jitcoop
import lavapipe
from conftest import best_of

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import test_shader_subgroup_ops as T  # noqa: E402  (numpy models of the GLSL built-ins)

PROBE = Path(__file__).with_name("compile_probe.py")
WORKGROUPS = 512
NT = 96 * WORKGROUPS


def cold_compile(shader: Path, tier: str) -> float:
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([sys.executable, str(PROBE), str(shader), "--options", json.dumps({"tier": tier})],
                             env={**os.environ, "JITCOOP_CACHE_DIR": d}, capture_output=True, text=True, timeout=600)
        if out.returncode:
            raise AssertionError(out.stderr[-3000:])
        return json.loads(out.stdout.strip().splitlines()[-1])["kernel_s"]


def scan_case(rng):
    x, f, d = T.scan_inputs(rng)                  # the test's two workgroups...
    reps = -(-NT // x.size)
    x, f, d = (np.tile(a, reps)[:NT] for a in (x, f, d))     # ...repeated over the grid
    bufs = {0: x, 1: f, 2: d, 3: np.zeros(42 * NT, np.uint32), 4: np.zeros(3 * NT, np.uint64)}

    def check():
        ref = T.scan_reference(x[:T.NT], f[:T.NT], d[:T.NT], 32)
        o = bufs[3].reshape(42, NT)
        for r in range(27):
            np.testing.assert_array_equal(o[r, :T.NT], ref[r].astype(np.uint64), err_msg=f"row {r}")
    return bufs, 3, check


def shuffle_case(rng):
    x, d = T.shuffle_inputs(rng, 32)
    reps = -(-NT // x.size)
    x, d = (np.tile(a, reps)[:NT] for a in (x, d))
    bufs = {0: x, 1: d, 2: np.zeros(42 * NT, np.uint32), 3: np.zeros(3 * NT, np.uint64)}

    def check():
        want, _ = T.shuffle_reference(x[:T.NT], d[:T.NT], 32)
        o = bufs[2].reshape(42, NT)
        for r in range(42):
            np.testing.assert_array_equal(o[r, :T.NT], want[r], err_msg=f"row {r}")
    return bufs, 2, check


@pytest.fixture(scope="module")
def peer():
    return lavapipe.find()


@pytest.mark.parametrize("name,case", [("subgroup_scan", scan_case), ("subgroup_shuffle", shuffle_case)])
def test_subgroup_operations(benchmark, report, peer, monkeypatch, name, case):
    shader = ROOT / "tests" / "shaders" / f"{name}.spv"
    bufs, out, check = case(np.random.default_rng(0))
    k = jitcoop.Device().load(shader).kernel(tier="optimized")
    run = lambda: k.dispatch((WORKGROUPS, 1, 1), bufs, threads=1)   # noqa: E731
    run()
    check()
    benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1)
    t_jc = benchmark.stats.stats.min
    fast, optimized = cold_compile(shader, "fast"), cold_compile(shader, "optimized")
    info = dict(jitcoop_ms=t_jc * 1e3, compile_fast_s=fast, compile_optimized_s=optimized)
    line = (f"{name}, {WORKGROUPS} workgroups, one thread: jitcoop {t_jc * 1e3:.1f} ms; cold compile "
            f"{fast:.2f} s fast, {optimized:.2f} s optimized")
    if not isinstance(peer, str):
        monkeypatch.setenv("LP_NUM_THREADS", "1")
        t_lvp, _ = peer.time(shader, {}, (WORKGROUPS, 1, 1), bufs, out, b"", repeat=5)
        info.update(lavapipe_ms=t_lvp * 1e3, ratio_to_lavapipe=t_lvp / t_jc)
        line += f"; lavapipe {t_lvp * 1e3:.1f} ms: jitcoop at {t_lvp / t_jc:.2f}x lavapipe's speed"
    benchmark.extra_info.update(info)
    report(line)
