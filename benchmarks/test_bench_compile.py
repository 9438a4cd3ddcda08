"""Compile latency (issues 17 and 40): seconds from `Module.kernel()` to a ready kernel, and peak
resident memory, for every benchmark shader and the coopmat2 application shaders, each in a fresh
process:

- cold, fast tier: no kernel in the jitcoop cache, the kernel library already built (what a
  user meets for every new shader, spec constant value or option after the first kernel of a
  fresh install, or in CI with `jitcoop build-library` run into the image): the time to a
  kernel's first dispatch under the default tier policy, "auto" (jitcoop.runtime.tiers);
- cold, optimized tier: the same with tier="optimized" (what the background thread compiles
  for a kernel dispatched again, and what tier="optimized" waits for), in its own empty cache;
  its ratio to the fast tier's is the peer figure;
- cached: a new process with the disk cache the optimized run left (auto starts on the
  optimized code it finds there);
- nothing cached at all (numba's caches and the kernel library empty too), for one shader.

Each is timed inside the child (benchmarks/compile_probe.py), so interpreter start-up and the
import of jitcoop are reported apart (`import_s`). As a peer in the same run, each row also gives
the kernel's compile time as a multiple of one dispatch of it where that is cheap to set up, and
docs/guide/compile.md quotes these figures.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "shaders"
APPS = ROOT / "tests" / "shaders" / "coopmat2_apps"
PROBE = Path(__file__).with_name("compile_probe.py")

# (name, shader, profile, spec, options)
CASES = [
    ("saxpy", BENCH / "saxpy.spv", "generic", {}, {}),
    ("sgemm_tiled", BENCH / "sgemm_tiled.spv", "generic", {}, {}),
    ("gemm_coopmat_f16", BENCH / "gemm_coopmat_f16.spv", "generic", {}, {}),
    ("gemm_coopmat_s8", BENCH / "gemm_coopmat_s8.spv", "generic", {}, {}),
    ("gemm_coopmat_wg", BENCH / "gemm_coopmat_wg.spv", "generic", {}, {}),
    ("gemm_coopmat_wg nvidia", BENCH / "gemm_coopmat_wg.spv", "nvidia", {}, {}),
    ("muladd_loop", BENCH / "muladd_loop.spv", "generic", {}, {}),
    ("mlp_coopvec", BENCH / "mlp_coopvec.spv", "nvidia", {}, {}),
    # a 128 x 128 fragment (512 elements an invocation): the largest lane body of the fuzz corpus
    ("arith 128x128", ROOT / "tests" / "shaders" / "coopmat" / "arith_f128.spv", "generic", {}, {}),
    ("flash_attn", APPS / "flash_attn.spv", "generic", {}, {}),
    # float32 and float64 matrix inverses in loops LLVM unrolls into a long lane loop (its loop
    # vectorizer took 18 s of 20 before the lane loop was marked: emitter.LANE_VECTORIZE_MAX)
    ("std450_inverse", ROOT / "tests" / "shaders" / "std450_inverse.spv", "generic", {}, {}),
    # the production flash attention with its default specialization constants: one invocation
    # per workgroup, so 2048-component fragments (element loops: codegen/element_loops.py)
    ("flash_attn_prod one invocation", ROOT / "tests" / "shaders" / "flash_attn_prod" / "flash_attn.spv",
     "generic", {}, {}),
    ("long_fragments 4096", ROOT / "tests" / "shaders" / "long_fragments.spv", "generic", {0: 1, 1: 64}, {}),
    # 32 invocations in lane groups over 128-component fragments (54 s before shared guards and
    # group-wide row copies): tests/test_flash_attn_prod.py q4_0_k_gqa4_br64_bc16_w32
    ("flash_attn_prod 32 invocations", ROOT / "tests" / "shaders" / "flash_attn_prod" / "flash_attn_O.spv",
     "generic", {0: 32, 1: 64, 2: 16, 3: 64, 4: 64, 5: 1, 6: 2, 7: 0, 8: 1, 9: 4}, {}),
    ("q4_gemm", APPS / "q4_gemm.spv", "generic", {}, {}),
    ("q4_gemm_shared", APPS / "q4_gemm_shared.spv", "generic", {}, {}),
    ("q4_gemm_O nvidia", APPS / "q4_gemm_O.spv", "nvidia", {}, {}),
    ("mul_mat_id", APPS / "mul_mat_id.spv", "generic", {}, {}),
    # the production-style quantized matmul (tests/shaders/coopmat2_prod), one pipeline per tile and
    # weight type (TYPE_A 0: q4_0, 1: q8_0) as ggml-vulkan builds them
    ("mul_mm_q_O l q4_0 nvidia", APPS.parent / "coopmat2_prod" / "mul_mm_q_O.spv", "nvidia",
     {"BLOCK_SIZE": 256, "BM": 128, "BN": 128, "BK": 64, "enable_smaller_matrices": True, "TYPE_A": 0}, {}),
    ("mul_mm_q_O l q8_0 nvidia", APPS.parent / "coopmat2_prod" / "mul_mm_q_O.spv", "nvidia",
     {"BLOCK_SIZE": 256, "BM": 128, "BN": 128, "BK": 64, "enable_smaller_matrices": True, "TYPE_A": 1}, {}),
    ("mul_mm_q_O m q4_0 nvidia", APPS.parent / "coopmat2_prod" / "mul_mm_q_O.spv", "nvidia",
     {"BLOCK_SIZE": 256, "BM": 64, "BN": 64, "BK": 32, "enable_smaller_matrices": False, "TYPE_A": 0}, {}),
    ("mul_mm_q_O m q8_0 nvidia", APPS.parent / "coopmat2_prod" / "mul_mm_q_O.spv", "nvidia",
     {"BLOCK_SIZE": 256, "BM": 64, "BN": 64, "BK": 32, "enable_smaller_matrices": False, "TYPE_A": 1}, {}),
    ("mul_mm_q_O s q4_0 nvidia", APPS.parent / "coopmat2_prod" / "mul_mm_q_O.spv", "nvidia",
     {"BLOCK_SIZE": 128, "BM": 32, "BN": 32, "BK": 32, "enable_smaller_matrices": False, "TYPE_A": 0}, {}),
    ("mul_mm_q_O s q8_0 nvidia", APPS.parent / "coopmat2_prod" / "mul_mm_q_O.spv", "nvidia",
     {"BLOCK_SIZE": 128, "BM": 32, "BN": 32, "BK": 32, "enable_smaller_matrices": False, "TYPE_A": 1}, {}),
]


def probe(shader, profile, spec, options, env_extra) -> dict:
    env = dict(os.environ, **env_extra)
    cmd = [sys.executable, str(PROBE), str(shader), "--profile", profile, "--spec", json.dumps(spec),
           "--options", json.dumps(options)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise AssertionError(f"compile of {shader.name} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def with_library(shader, profile, spec, options, d):
    """Build the kernel-library variants the kernel needs in a scratch cache (both tiers need the
    same), and copy only them into the empty cache folder d."""
    with tempfile.TemporaryDirectory() as lib:
        probe(shader, profile, spec, dict(options, tier="fast"), {"JITCOOP_CACHE_DIR": lib})
        for x in Path(lib).glob("lib-*"):
            shutil.copytree(x, Path(d) / x.name)


@pytest.mark.parametrize("name,shader,profile,spec,options", CASES, ids=[c[0] for c in CASES])
def test_compile_latency(benchmark, report, name, shader, profile, spec, options):
    results = {}
    with tempfile.TemporaryDirectory() as lib:
        with_library(shader, profile, spec, options, lib)
        for tier in ("fast", "optimized"):
            with tempfile.TemporaryDirectory() as d:
                for x in Path(lib).iterdir():
                    shutil.copytree(x, Path(d) / x.name)
                env = {"JITCOOP_CACHE_DIR": d}
                opts = dict(options, tier=tier)
                if tier == "fast":
                    def cold():
                        results["fast"] = probe(shader, profile, spec, opts, env)
                    benchmark.pedantic(cold, rounds=1, iterations=1)
                else:
                    results["optimized"] = probe(shader, profile, spec, opts, env)
                    results["cached"] = probe(shader, profile, spec, options | {"tier": "auto"}, env)
    f, c, w = results["fast"], results["optimized"], results["cached"]
    assert not f["cache_hit"] and not c["cache_hit"] and w["cache_hit"] and w["tier"] == "optimized"
    benchmark.extra_info.update(fast_cold_s=f["kernel_s"], fast_peak_mb=f["peak_mb"],
                                cold_s=c["kernel_s"], cold_peak_mb=c["peak_mb"],
                                optimized_over_fast=c["kernel_s"] / f["kernel_s"],
                                cached_s=w["kernel_s"], cached_peak_mb=w["peak_mb"], import_s=w["import_s"],
                                spirv_bytes=shader.stat().st_size)
    report(f"{name} ({shader.stat().st_size} B, {profile}): cold, fast tier {f['kernel_s']:.2f} s "
           f"(peak {f['peak_mb']:.0f} MB); cold, optimized tier {c['kernel_s']:.2f} s "
           f"({c['kernel_s'] / f['kernel_s']:.1f}x the fast tier's; peak {c['peak_mb']:.0f} MB); "
           f"from the disk cache {w['kernel_s']:.3f} s, peak {w['peak_mb']:.0f} MB (import jitcoop "
           f"{w['import_s']:.2f} s, load the module {w['load_s']:.2f} s)")


@pytest.mark.parametrize("shader", [BENCH / "gemm_coopmat_f16.spv", APPS / "q4_gemm.spv"],
                         ids=["gemm_coopmat_f16", "q4_gemm"])
def test_compile_nothing_cached(benchmark, report, shader):
    """A fresh install: the jitcoop cache and numba's caches empty (the kernel library compiles
    what the first kernel needs: nothing for the KHR GEMM, whose loads, stores and MulAdds are
    generated code; tensor addressing and the decode function's plan for the Q4_0 GEMM)."""
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as nd:
        env = {"JITCOOP_CACHE_DIR": d, "NUMBA_CACHE_DIR": nd}
        res = {}

        def cold():
            res["r"] = probe(shader, "generic", {}, {"tier": "fast"}, env)
        benchmark.pedantic(cold, rounds=1, iterations=1)
    r = res["r"]
    benchmark.extra_info.update(first_kernel_s=r["kernel_s"], peak_mb=r["peak_mb"], import_s=r["import_s"])
    report(f"first kernel of a fresh install ({shader.stem}): {r['kernel_s']:.1f} s, peak {r['peak_mb']:.0f} MB")


SUITE = Path(__file__).with_name("compile_suite.py")
GGML_PIPELINES = Path(__file__).with_name("shaders") / "ggml_mul_mat"


def _suite(tier, cache, *args) -> dict:
    out = subprocess.run([sys.executable, str(SUITE), "--tier", tier, *map(str, args)],
                         env=dict(os.environ, JITCOOP_CACHE_DIR=str(cache)),
                         capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise AssertionError(f"compile_suite.py --tier {tier} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _both_tiers_cold(benchmark, report, what, *args):
    """compile_suite.py's kernels (its args), compiled one after another in one process from an
    empty kernel cache holding only the kernel library, at the fast tier (what each first
    dispatch waits for under the default "auto") and at the optimized tier: each tier's total,
    median and slowest kernel, peak memory, and the optimized tier's total as a multiple of the
    fast tier's (the peer figure)."""
    import statistics
    with tempfile.TemporaryDirectory() as lib:
        _suite("fast", lib, *args)              # builds the kernel library's variants
        res = {}
        for tier in ("fast", "optimized"):
            with tempfile.TemporaryDirectory() as d:
                for x in Path(lib).glob("lib-*"):
                    shutil.copytree(x, Path(d) / x.name)
                if tier == "fast":
                    def cold():
                        res["fast"] = _suite("fast", d, *args)
                    benchmark.pedantic(cold, rounds=1, iterations=1)
                else:
                    res[tier] = _suite(tier, d, *args)
    both = [n for n in res["fast"]["seconds"] if res["fast"]["seconds"][n] is not None
            and res["optimized"]["seconds"].get(n) is not None]
    figures = {}
    for tier in ("fast", "optimized"):
        s = [res[tier]["seconds"][n] for n in both]
        slowest = max(both, key=lambda n: res[tier]["seconds"][n])
        figures[tier] = dict(total=sum(s), median=statistics.median(s), max=max(s), slowest=slowest,
                             peak_mb=res[tier]["peak_mb"])
        report(f"{len(both)} {what}, cold, {tier} tier: {sum(s):.1f} s in all, median {statistics.median(s):.3f} s, "
               f"slowest {max(s):.2f} s ({slowest}), peak {res[tier]['peak_mb']:.0f} MB")
    ratio = figures["optimized"]["total"] / figures["fast"]["total"]
    report(f"optimized tier / fast tier, in all: {ratio:.1f}x")
    benchmark.extra_info.update(kernels=len(both), optimized_over_fast=ratio,
                                **{f"{t}_{k}": v for t, f in figures.items() for k, v in f.items()})


def test_suite_cold(benchmark, report):
    """Every kernel of the test suite's shaders (about 200, 0.3-23 KB of SPIR-V)."""
    _both_tiers_cold(benchmark, report, "test-suite kernels")


def test_ggml_pipelines_cold(benchmark, report):
    """The 43 pipelines ggml's Vulkan backend creates for its matrix products' 224-case subset
    (`test-backend-ops -o MUL_MAT -p 'type_a=(f16|q4_0),type_b=f32'` on the nvidia profile:
    coopmat2 tiles up to 128 x 256 at workgroup scope, 17-55 KB of SPIR-V), as the driver wrote
    them (JITCOOP_ICD_DUMP): what a real application's first dispatches wait for."""
    _both_tiers_cold(benchmark, report, "ggml pipelines", "--dumped", GGML_PIPELINES)
