"""Compile tiers (jitcoop.runtime.tiers): the fast tier writes the same bytes as the optimized one
for every test shader, and the "auto" policy starts on the fast code, compiles the optimized code
in the background once a kernel is dispatched again, swaps it in, and keeps both in the disk cache.

The shaders' inputs and canonical outputs are the metamorphic recipes' (tests/metamorphic); the
optimized tier's outputs are the reference each fast run must match byte for byte (the recipes'
outputs are checked against numpy and recorded GPU outputs by the shader tests themselves).
`-m slow` adds the benchmark shaders, and tests/test_metamorphic.py runs every variant at both tiers.
"""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import jitcoop
from jitcoop.errors import BindingError, SpirvError
from jitcoop.runtime import compile as compile_mod
from jitcoop.runtime import tiers
from metamorphic import harness
from metamorphic.recipes import RECIPES, ROOT

TEST_SHADERS = sorted(n for n in RECIPES if n.startswith("tests/shaders/"))
BENCH_SHADERS = sorted(n for n in RECIPES if n.startswith("benchmarks/shaders/"))
SAXPY = ROOT / "benchmarks" / "shaders" / "saxpy.spv"


def _same_bytes_on_both_tiers(name):
    bench = harness.Bench(RECIPES[name])
    data = bench.recipe.path.read_bytes()
    optimized = bench.kernel(data, "optimized")
    fast = bench.kernel(data, "fast")
    assert (optimized.tier, fast.tier) == ("optimized", "fast")
    want = bench.run(optimized)
    diff = harness.first_difference(want, bench.run(fast))
    assert diff is None, f"the fast tier's code: {diff}"


@pytest.mark.parametrize("name", TEST_SHADERS, ids=[n[len("tests/shaders/"):] for n in TEST_SHADERS])
def test_fast_tier_writes_the_optimized_tiers_bytes(name):
    _same_bytes_on_both_tiers(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCH_SHADERS, ids=[n[len("benchmarks/shaders/"):] for n in BENCH_SHADERS])
def test_fast_tier_writes_the_optimized_tiers_bytes_benchmark_shaders(name):
    _same_bytes_on_both_tiers(name)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty disk cache and no kernel compiled in this process yet."""
    monkeypatch.setenv("JITCOOP_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compile_mod, "_memo", {})
    monkeypatch.delenv("JITCOOP_TIER", raising=False)
    return tmp_path


def _saxpy(k, x, y0, a=1.5):
    y = y0.copy()
    rep = k(len(x) // 256, x=x, y=y, push={"a": a, "n": len(x)})
    # y = a * x + y in float32, each operation rounded (SPIR-V's OpFMul, OpFAdd: no contraction)
    want = np.float32(a) * x + y0
    assert y.tobytes() == want.tobytes()
    return rep


def test_auto_starts_fast_and_swaps_in_the_optimized_code(fresh_cache, monkeypatch):
    monkeypatch.setattr(tiers, "LONG_RUN", 3600.0)      # only a second dispatch queues the compile
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(4096, np.float32), rng.standard_normal(4096, np.float32)
    k = jitcoop.Device().load(SAXPY).kernel()
    assert k.options.tier == "auto" and k.tier == "fast" and not k.cache_hit
    assert _saxpy(k, x, y).tier == "fast"
    assert tiers.wait(60) and k.tier == "fast"          # dispatched once, briefly: nothing queued
    assert _saxpy(k, x, y).tier == "fast"               # the second dispatch queues the optimized compile
    assert tiers.wait(120)
    assert k.tier == "optimized"
    rep = _saxpy(k, x, y)
    assert rep.tier == "optimized" and "optimized tier" in str(rep)
    # the disk cache kept both tiers: a later process starts on the optimized code
    compile_mod._memo.clear()
    k2 = jitcoop.Device().load(SAXPY).kernel()
    assert (k2.tier, k2.cache_hit) == ("optimized", True)
    assert _saxpy(k2, x, y).tier == "optimized"
    compile_mod._memo.clear()
    k3 = jitcoop.Device().load(SAXPY).kernel(tier="fast")
    assert (k3.tier, k3.cache_hit) == ("fast", True)


def test_tiers_have_their_own_code_and_metadata(fresh_cache):
    """The fast tier leaves lane groups out; the optimized tier of the same kernel has them."""
    m = jitcoop.Device().load(ROOT / "benchmarks" / "shaders" / "sgemm_tiled.spv")
    fast, opt = m.kernel(tier="fast"), m.kernel(tier="optimized")
    assert fast.meta.lane_group == 0 and "lane_groups=False" in fast.meta.lane_group_why
    assert opt.meta.lane_group > 0
    assert fast.source != opt.source


def test_a_failed_background_compile_keeps_the_fast_code(fresh_cache, monkeypatch, caplog):
    real = jitcoop.Kernel._compile_tier

    def failing(self, tier, cached_only=False, background=False):
        if background:
            raise SpirvError("compile refused (test)")
        return real(self, tier, cached_only, background)
    monkeypatch.setattr(jitcoop.Kernel, "_compile_tier", failing)
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal(1024, np.float32), rng.standard_normal(1024, np.float32)
    k = jitcoop.Device().load(SAXPY).kernel()
    with caplog.at_level(logging.WARNING, logger="jitcoop"):
        for _ in range(4):
            assert _saxpy(k, x, y).tier == "fast"
            assert tiers.wait(60)
    assert k.tier == "fast"
    msgs = [r.getMessage() for r in caplog.records if "optimized compile" in r.getMessage()]
    assert len(msgs) == 1 and "compile refused (test)" in msgs[0] and "fast-tier code" in msgs[0]


def test_wait_optimized_compiles_now(fresh_cache):
    k = jitcoop.Device().load(SAXPY).kernel()
    assert k.tier == "fast"
    assert k.wait_optimized(120) and k.tier == "optimized"


def test_fixed_tiers_compile_only_their_own(fresh_cache):
    k = jitcoop.Device().load(SAXPY).kernel(tier="fast")
    x = np.ones(512, np.float32)
    for _ in range(3):
        assert _saxpy(k, x, x).tier == "fast"
    assert tiers.wait(60) and k.tier == "fast"
    assert not k.wait_optimized(60) and k.tier == "fast"
    assert len(list(fresh_cache.glob("k_*.entry"))) == 1, "only the fast tier's entry"


@pytest.mark.parametrize("value", ["quick", "", 3, None])
def test_unknown_tier_is_a_binding_error(value):
    with pytest.raises(BindingError, match="tier=.*choose one of auto, fast, optimized"):
        jitcoop.Device().load(SAXPY).kernel(tier=value)


def test_unknown_tier_in_the_environment_names_it(monkeypatch):
    monkeypatch.setenv("JITCOOP_TIER", "fastest")
    with pytest.raises(BindingError, match="JITCOOP_TIER='fastest'"):
        jitcoop.Device().load(SAXPY).kernel()


def test_driver_setting(monkeypatch):
    from jitcoop.icd import config
    monkeypatch.setenv("JITCOOP_ICD_TIER", "fast")
    assert config.load().tier == "fast"
    monkeypatch.setenv("JITCOOP_ICD_TIER", "slow")
    with pytest.raises(config.ConfigError, match="JITCOOP_ICD_TIER='slow'"):
        config.load()
    monkeypatch.delenv("JITCOOP_ICD_TIER")
    assert config.load().tier is None


@pytest.mark.parametrize("tier", ["fast", "optimized"])
def test_cli_run_tier(tier, tmp_path, capsys):
    from jitcoop.cli import main
    from jitcoop.examples import path
    x, y = np.arange(256, dtype=np.float32), np.ones(256, np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    assert main(["run", str(path("saxpy")), "--grid", "4", "--buffer", f"0={tmp_path / 'x.npy'}",
                 "--buffer", f"1={tmp_path / 'y.npy'}", "--push-values", "f32:2,u32:256", "--tier", tier]) == 0
    assert f"{tier} tier" in capsys.readouterr().out
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), 2 * x + 1)


def test_cli_profile_says_which_tier_ran(tmp_path, capsys):
    from jitcoop.cli import main
    from jitcoop.examples import path
    np.save(tmp_path / "x.npy", np.arange(256, dtype=np.float32))
    np.save(tmp_path / "y.npy", np.ones(256, np.float32))
    args = ["profile", str(path("saxpy")), "--grid", "1", "--buffer", f"0={tmp_path / 'x.npy'}",
            "--buffer", f"1={tmp_path / 'y.npy'}", "--push-values", "f32:2,u32:256"]
    assert main(args + ["--json"]) == 0
    assert [r["tier"] for r in json.loads(capsys.readouterr().out).values()] == ["optimized"]
    assert main(args + ["--tier", "fast"]) == 0
    assert "fast tier" in capsys.readouterr().out


def test_a_long_dispatch_queues_the_optimized_compile(fresh_cache, monkeypatch):
    monkeypatch.setattr(tiers, "LONG_RUN", 0.0)         # every dispatch counts as long
    x = np.ones(1024, np.float32)
    k = jitcoop.Device().load(SAXPY).kernel()
    assert _saxpy(k, x, x).tier == "fast"
    assert tiers.wait(120) and k.tier == "optimized"


LCG = ROOT / "tests" / "shaders" / "lcg_steps.spv"


def _lcg_reference(n_inv: int, steps: int) -> np.ndarray:
    """x -> 1664525 x + 1013904223 (mod 2^32) `steps` times from each invocation's index: the
    composed map a x + c, its coefficients by repeated squaring."""
    a, c, ma, mc = 1, 0, 1664525, 1013904223
    k = steps
    while k:
        if k & 1:
            a, c = (a * ma) % 2**32, (c * ma + mc) % 2**32
        ma, mc = (ma * ma) % 2**32, (mc * ma + mc) % 2**32
        k >>= 1
    x = np.arange(n_inv, dtype=np.uint64)
    return ((x * a + c) % 2**32).astype(np.uint32)


def test_a_long_first_dispatch_runs_again_on_the_optimized_code(fresh_cache, monkeypatch):
    """A kernel's first dispatch starts on the fast tier's code; when the optimized code is ready
    while it has taken at most half of its workgroups, it stops and runs again on that code from
    the buffers as they were. Here the optimized code is compiled in this process once the
    kernel has started on the fast code, so the background compile, queued as the dispatch
    starts, takes no time."""
    import struct
    monkeypatch.setattr(tiers, "LONG_RUN", 0.0)
    m = jitcoop.Device().load(LCG)
    k = m.kernel()
    assert k.tier == "fast"
    m.kernel(tier="optimized")
    steps, wgs = 24000, 1024      # about 2 s at the fast tier: the promotion comes well before half
    out = np.full(wgs * 64, 7, np.uint32)
    r = k.dispatch((wgs, 1, 1), {0: out}, push=struct.pack("<I", steps))
    assert r.tier == "optimized" and k.tier == "optimized"
    np.testing.assert_array_equal(out, _lcg_reference(wgs * 64, steps))


def test_a_dispatch_past_half_its_workgroups_is_not_stopped():
    """Running.supersede stops a dispatch only while its threads have taken at most half of its
    workgroups, and only one nothing else stopped; one that has not started yet, as it starts."""
    from jitcoop.runtime import dispatch, driver
    frame = np.zeros(64, np.int64)
    early = dispatch.Running()
    assert early.supersede()                         # before it starts: stopped as it starts
    early._start(frame, 40, 0, 100)
    assert frame[40] == dispatch.SUPERSEDED
    frame[40] = 0
    h = dispatch.Running()
    h._start(frame, 40, 0, 100)
    frame[driver.PLAN_NEXT] = 60
    assert not h.supersede() and frame[40] == 0
    frame[driver.PLAN_NEXT] = 50
    assert h.supersede() and frame[40] == dispatch.SUPERSEDED
    frame[40] = dispatch.TIMEOUT
    assert not h.supersede() and frame[40] == dispatch.TIMEOUT
    h._end()
    assert not h.supersede()


def test_exit_does_not_wait_for_a_background_compile(tmp_path):
    """A process that exits while its background compile runs exits at once; the compiling child
    holds none of its files (the caller reading its output sees them close), finishes on its own
    and writes the optimized entry, so that the next process starts on optimized code."""
    import os
    import subprocess
    import sys
    import time
    shader = str(ROOT / "tests" / "shaders" / "coopmat2_prod" / "mul_mm_q_O.spv")
    spec = '{"BLOCK_SIZE": 256, "BM": 128, "BN": 128, "BK": 64, "enable_smaller_matrices": True, "TYPE_A": 0}'
    script = f"""
import sys, time
import jitcoop
from jitcoop.runtime import limit
m = jitcoop.Device("nvidia").load({shader!r})
k = m.kernel(spec={spec})
assert k.tier == "fast"
from jitcoop.runtime import tiers
k._promotion = "queued"
tiers.promote(k)
for _ in range(500):                 # until the background thread has forked its compile
    if limit._running:
        break
    time.sleep(0.01)
print(*limit._running, flush=True)
"""
    env = dict(os.environ, JITCOOP_CACHE_DIR=str(tmp_path))
    env.pop("JITCOOP_TIER", None)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    ended = time.perf_counter() - t0
    assert p.returncode == 0, p.stderr[-3000:]
    pids = [int(x) for x in p.stdout.split()]
    assert len(pids) == 1
    assert len(list(tmp_path.glob("k_*.entry"))) == 1, "only the fast tier's entry when the process ended"
    deadline = time.perf_counter() + 300
    while len(list(tmp_path.glob("k_*.entry"))) < 2 and time.perf_counter() < deadline:
        time.sleep(0.2)
    assert len(list(tmp_path.glob("k_*.entry"))) == 2, "the optimized entry, written by the child"
    later = f"""
import jitcoop
k = jitcoop.Device("nvidia").load({shader!r}).kernel(spec={spec})
print(k.tier, k.cache_hit)
"""
    q = subprocess.run([sys.executable, "-c", later], env=env, capture_output=True, text=True, timeout=600)
    assert q.stdout.split() == ["optimized", "True"], q.stdout + q.stderr[-2000:]
    assert ended < 60, f"the first process took {ended:.1f} s to end"
