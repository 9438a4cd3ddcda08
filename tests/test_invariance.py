"""analysis/invariance.py: a module whose invocations cannot differ runs one invocation's code per
workgroup (KernelMeta.lanes_run == 1). Hand-checked decisions (each shader's GLSL says what it
reads), and results against numpy with the analysis on and off: the collectives see every lane,
lane code on matrices covers every lane's fragment, and an atomic still counts every invocation."""
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop.codegen.emitter import KernelGen
from jitcoop.options import KernelOptions
from jitcoop.spirv.module import Module
from jitcoop.spirv.specialize import Specialization

ROOT = Path(__file__).resolve().parents[1]


def varying(path, spec=None):
    m = Module((ROOT / path).read_bytes())
    gen = KernelGen(m, Specialization(m, spec or {}), None, 32, KernelOptions())
    return gen.varying


@pytest.mark.parametrize("path,spec,why", [
    ("benchmarks/shaders/corpus/plain_8.spv", {0: 32}, None),         # only gl_WorkGroupID
    ("benchmarks/shaders/corpus/wg_tensor.spv", {}, None),            # workgroup scope, tensor loads
    ("tests/shaders/coopmat/invariant.spv", {}, None),
    ("tests/shaders/coopmat/invariant_count.spv", {}, "has OpAtomicIAdd at byte"),
    ("benchmarks/shaders/corpus/arrays_uvec4.spv", {0: 32}, "reads the SubgroupId built-in"),
    ("tests/shaders/coopmat/perlane.spv", {}, "reads the"),
    ("tests/shaders/coopmat/flow.spv", {}, "has matrix variable"),          # MT arr[2] indexed by p.k
    ("tests/shaders/coopmat2_apps/decode_private.spv", {}, "has a callback reading Private variable"),
])
def test_what_makes_invocations_differ(path, spec, why):
    got = varying(path, spec)
    assert (got is None) if why is None else got.startswith(why), got


def _run(path, invariant):
    rng = np.random.default_rng(11)
    G = 3
    a = rng.integers(-3, 4, (G * 16, 16)).astype(np.float16)
    b = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    o = np.full((G * 16, 16), -7, np.float16)
    cnt = np.zeros(G, np.uint32)
    k = jitcoop.Device().load(ROOT / path).kernel(invariant_lanes=invariant)
    k.dispatch(G, {0: a, 1: b, 2: o, 3: cnt}, push=_push(0.5, 3))
    ref = np.concatenate([0.5 * (3 * (a[16 * g:16 * g + 16].astype(np.float64) @ b.astype(np.float64))) + 1
                          for g in range(G)]).astype(np.float16)
    return k, o, ref, cnt


def _push(alpha, steps):
    return np.frombuffer(np.float32(alpha).tobytes() + np.uint32(steps).tobytes(), np.uint8)


@pytest.mark.parametrize("invariant", [True, False])
def test_one_invocation_per_workgroup_gives_numpy_results(invariant):
    """Two subgroups per workgroup, a matrix phi through a K loop, alpha * acc + 1 and the f16
    conversion as lane code on matrices: small integers keep every value exact."""
    k, o, ref, _ = _run("tests/shaders/coopmat/invariant.spv", invariant)
    assert k.meta.lanes_run == (1 if invariant else 64)
    np.testing.assert_array_equal(o, ref)


def test_an_atomic_counts_every_invocation():
    k, o, ref, cnt = _run("tests/shaders/coopmat/invariant_count.spv", True)
    assert k.meta.lanes_run == 64
    np.testing.assert_array_equal(cnt, [64, 64, 64])
    np.testing.assert_array_equal(o, ref)


@pytest.mark.parametrize("size", [32, 64])
def test_corpus_gemm_runs_one_invocation_and_matches_numpy(size):
    """The plainest GEMM (benchmarks/shaders/corpus/plain.comp, 8 x 8 tiles) at 64^3, with one
    subgroup a workgroup and with two that compute the same tile: the second subgroup's loads
    take their pointers (computed in the K loop by the one invocation that runs) from its own
    first lane, which must get lane 0's value."""
    n = 64
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (n, n)).astype(np.float16)
    b = rng.integers(-4, 5, (n, n)).astype(np.float16)
    c = np.zeros((n, n), np.float32)
    k = jitcoop.Device().load(ROOT / "benchmarks/shaders/corpus/plain_8.spv").kernel(spec={0: size})
    assert k.meta.lanes_run == 1
    k.dispatch((n // 16, n // 16), {0: a, 1: b, 2: c}, push=np.array([n, n, n], np.uint32))
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


def test_profile_says_how_many_invocations_run():
    rng = np.random.default_rng(2)
    a = rng.integers(-3, 4, (48, 16)).astype(np.float16)
    b = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    bufs = {0: a, 1: b, 2: np.zeros((48, 16), np.float16), 3: np.zeros(3, np.uint32)}
    dev = jitcoop.Device()
    for name, want in (("invariant", "the code of 1 of 64 runs per workgroup (lane-invariant"),
                       ("invariant_count", "the code of 64 of 64 runs per workgroup (they may differ: the shader "
                                           "has OpAtomicIAdd at byte")):
        k = dev.load(ROOT / f"tests/shaders/coopmat/{name}.spv").kernel(profile=True)
        rep = k.dispatch(3, bufs, push=_push(1.0, 1))
        assert f"invocations: {want}" in str(rep.profile)
        inv = rep.profile.to_dict()["invocations"]
        assert (inv["run_per_workgroup"], inv["workgroup_size"]) == ((1, 64) if name == "invariant" else (64, 64))


@pytest.mark.parametrize("invariant", [True, False])
def test_cooperative_vector_accumulation_counts_every_invocation(invariant):
    """coopvec/uniform_sum.comp: 64 invocations per workgroup add the same vector (read at a
    byte offset of 16 per workgroup) with coopVecReduceSumAccumulateNV; lane-invariant, yet the
    accumulation, a collective, adds every invocation's vector."""
    k = jitcoop.Device().load(ROOT / "tests/shaders/coopvec/uniform_sum.spv").kernel(invariant_lanes=invariant)
    assert k.meta.lanes_run == (1 if invariant else 64)
    x = np.arange(12, dtype=np.float32) + 1
    s = np.zeros(4, np.float32)
    k.dispatch(3, {0: x, 1: s})
    np.testing.assert_array_equal(s, 64 * x.reshape(3, 4).sum(0))


def test_large_fragments_run_every_invocation():
    """invariant.spv with its 16 (matrix size and stride) made 127: lane code on a matrix of
    505 elements per invocation (a subgroup of 32) would compile slowly in one each_lane loop, so the kernel runs
    every invocation, with numpy's results (one workgroup, alpha 1, one step)."""
    import struct
    from jitcoop.spirv.module import Module
    data = (ROOT / "tests/shaders/coopmat/invariant.spv").read_bytes()
    w = np.frombuffer(data, np.uint32).copy()
    ins = Module(data).all_defs[18]                   # %18 = OpConstant %uint 16
    assert ins.opname == "OpConstant" and ins.operands == [16]
    w[ins.offset // 4 + 3] = 127
    k = jitcoop.Device().load(w.tobytes()).kernel()
    assert k.meta.lanes_run == 64
    assert "on a matrix of 505 elements per invocation" in k.meta.varying
    rng = np.random.default_rng(4)
    a = rng.integers(-3, 4, (127, 127)).astype(np.float16)
    b = rng.integers(-3, 4, (127, 127)).astype(np.float16)
    o = np.zeros((127, 127), np.float16)
    k.dispatch(1, {0: a, 1: b, 2: o, 3: np.zeros(1, np.uint32)}, push=struct.pack("<fI", 1.0, 1))
    np.testing.assert_array_equal(o, (a.astype(np.float64) @ b.astype(np.float64) + 1).astype(np.float16))
