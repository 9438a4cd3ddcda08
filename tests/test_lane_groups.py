"""Lane groups (jitcoop/codegen/lanevec.py): the lane code of a kernel whose invocations differ
runs G invocations at a time in vector code, leaving it where the group's branch conditions differ.

- divergent.comp (per-invocation trip counts, break/continue, switch with fallthrough, early
  returns) against its Python transcription, at every group size, with inputs that keep whole
  groups in step for a while and then split them at one invocation, and random ones;
- a failure is the scalar code's: the same instruction, workgroup and lane, whatever the group
  size and wherever in the group the failing invocations are;
- every test and benchmark shader whose invocations differ writes the same bytes with lane groups
  and without (the metamorphic recipes' inputs);
- the option's values."""
import json
import struct

import numpy as np
import pytest

import jitcoop
from jitcoop import BindingError, ExecutionError
from conftest import SHADERS
from test_shader_divergent import run_and_check


def _groups_in_step(rng, n):
    """Inputs whose groups of up to 16 consecutive invocations agree except where said: the
    vector copy runs each group's loops together to their end (equal inputs), or until one
    invocation leaves (one input different), or splits at once (random)."""
    a = np.empty(n, np.int32)
    for start in range(0, n, 16):
        kind = (start // 16) % 4
        v = int(rng.integers(0, 1 << 16))
        blk = np.full(16, v, np.int32)
        if kind == 1:
            blk[int(rng.integers(0, 16))] = v ^ 0x15      # another trip count in one invocation
        elif kind == 2:
            blk = rng.integers(0, 1 << 16, 16).astype(np.int32)
        elif kind == 3:
            blk[::5] = -3                                   # some return at once
        a[start:start + 16] = blk
    return a


@pytest.mark.parametrize("variant", ["divergent", "divergent.opt"])
@pytest.mark.parametrize("G", [4, 8, 16, 32])
def test_divergent_control_flow_at_every_group_size(rng, variant, G):
    sg = 32
    k = jitcoop.Device("generic", subgroup_size=sg).load(SHADERS / f"{variant}.spv").kernel(lane_groups=G)
    assert k.meta.lane_group == G, k.meta.lane_group_why
    run_and_check(k, _groups_in_step(rng, 64 * 4), sg)


BAD = (SHADERS / "bad_index.spv").read_bytes()


def _bad_index_failure(lane_groups, idx):
    """The ExecutionError of one workgroup of bad_index.comp (g = lane) with these (read, write)
    indices, and the data buffer after it (restored)."""
    k = jitcoop.Device().load(BAD).kernel(lane_groups=lane_groups)
    data = np.arange(64, dtype=np.uint32)
    before = data.copy()
    o = np.zeros(32, np.uint32)
    u = np.zeros(16, np.uint32)
    with pytest.raises(ExecutionError) as e:
        k.dispatch((1, 1, 1), {0: data, 1: idx, 2: u, (1, 3): o}, push=struct.pack("<2I", 1, 0))
    np.testing.assert_array_equal(data, before)
    return str(e.value)


@pytest.mark.parametrize("G", [4, 8, 16])
@pytest.mark.parametrize("cases", [
    {5: ("write", 1)},                                # one invocation writes past `o`
    {5: ("read", 1), 6: ("write", 1)},                # two fail, at different instructions
    {7: ("write", 1), 4: ("read", 1)},                # the later invocation fails first in program order
    {1: ("read", 1), 2: ("read", 1), 3: ("read", 1)},
])
def test_a_failure_is_the_scalar_codes(G, cases):
    idx = np.zeros((32, 2), np.uint32)
    idx[:, 0] = np.arange(32)
    idx[:, 1] = np.arange(32)
    for lane, (what, _) in cases.items():
        if what == "read":
            idx[lane, 0] = 1 << 20
        else:
            idx[lane, 1] = 1 << 20
    scalar = _bad_index_failure(False, idx)
    grouped = _bad_index_failure(G, idx)
    assert grouped == scalar
    first = min(cases)
    assert f"lane {first}" in scalar and ("OpLoad" if cases[first][0] == "read" else "OpStore") in scalar


def _comparable_recipes():
    from metamorphic.recipes import RECIPES
    return sorted(RECIPES)


# A sample for the default run: staging loops, atomics, subgroups around divergent code,
# per-invocation arrays, float formats, library calls through result slots, barriers in loops.
DEFAULT = {"benchmarks/shaders/corpus/bias_act.spv", "benchmarks/shaders/corpus/arrays_uvec4.spv",
           "benchmarks/shaders/corpus/unrolled_u32.spv", "benchmarks/shaders/corpus/wg_arrays.spv",
           "tests/shaders/atomics.spv", "tests/shaders/core/memory.spv", "tests/shaders/core/loops.spv",
           "tests/shaders/subgroup_divergent.spv", "tests/shaders/arith/float16.spv",
           "tests/shaders/arith/int32.spv", "tests/shaders/coopmat_qcom/dequant.spv",
           "tests/shaders/linked_list.spv", "tests/shaders/prefix_sum.spv", "tests/shaders/std450.spv",
           "tests/shaders/core/divergent_barrier.spv", "benchmarks/shaders/gemm_coopmat_f16.spv"}


def _recipe_params():
    out = []
    for name in _comparable_recipes():
        marks = () if name in DEFAULT else (pytest.mark.slow,)
        out.append(pytest.param(name, id=name.split("shaders/")[-1], marks=marks))
    return out


@pytest.mark.parametrize("name", _recipe_params())
def test_same_bytes_with_and_without_lane_groups(name):
    """With lane groups forced on (lane_groups=8: past the cost model, which leaves out about
    half of these kernels) and off, from the recipe's inputs."""
    from metamorphic.harness import Bench, first_difference
    from metamorphic.recipes import RECIPES
    bench = Bench(RECIPES[name])            # its reference ran the default kernel
    r = bench.recipe
    meta = bench.kernel(r.path.read_bytes()).meta
    assert not (meta.lane_group_why or "").startswith("internal error"), meta.lane_group_why
    if meta.lanes_run == 1:
        pytest.skip("lane-invariant: one invocation's code runs")
    kernel = lambda lg: bench.device.load(r.path.read_bytes()).kernel(r.entry, spec=dict(r.spec),
                                                                       **{**r.options, "lane_groups": lg})
    forced = kernel(8)
    assert not (forced.meta.lane_group_why or "").startswith("internal error"), forced.meta.lane_group_why
    grouped = bench.run(forced)
    scalar = bench.run(kernel(False))
    assert first_difference(grouped, scalar) is None
    assert first_difference(bench.reference, scalar) is None


def test_the_option():
    m = jitcoop.Device().load(SHADERS / "divergent.spv")
    assert m.kernel(lane_groups=False).meta.lane_group == 0
    assert m.kernel(lane_groups=False).meta.lane_group_why == "runs with lane_groups=False"
    assert m.kernel(lane_groups=8).meta.lane_group == 8
    # the default asks the cost model: the staging GEMMs take lane groups, saxpy (a load, a
    # store and a multiply-add an invocation, addresses sorted out at run time) does not
    import sys
    sys.path.insert(0, str(SHADERS.parents[1] / "benchmarks"))
    from corpus import BY_NAME
    st = BY_NAME["bias_act"]
    assert jitcoop.Device().load(st.spv).kernel(spec=st.spec(32)).meta.lane_group in (4, 8, 16)
    # G: 16 where the workgroup is whole groups of 16, else one vector register's 32-bit lanes
    # (a workgroup of 40 would leave a partial group of 8 to run one invocation at a time)
    from jitcoop.runtime import jit
    reg = max(4, jit.vector_registers()[0] // 32)
    small = jitcoop.Device("generic", subgroup_size=8).load(st.spv)
    # (32, 40 invocations) -> G, by the host's 32-bit lanes per register: SSE 4, AVX2 8, AVX-512 16
    want32, want40 = {4: (16, 4), 8: (16, 8), 16: (16, 16)}[reg]
    assert small.kernel(spec={0: 32}).meta.lane_group == want32
    assert small.kernel(spec={0: 40}).meta.lane_group == want40
    saxpy = jitcoop.Device().load(SHADERS / "core" / "saxpy.spv").kernel().meta
    assert saxpy.lane_group == 0 and saxpy.lane_group_why.startswith("not worth it")
    # a copy of the same relative size (3.0-3.3 times the lane code) in a kernel with barriers,
    # whose lane loop LLVM cannot vectorize: taken (the scans and the tiled SGEMM ran 1.4-1.9x
    # as fast with it)
    for path in (SHADERS / "prefix_sum.spv", SHADERS.parent.parent / "benchmarks" / "shaders" / "sgemm_tiled.spv"):
        meta = jitcoop.Device().load(path).kernel().meta
        assert meta.lane_group == 16, (path.name, meta.lane_group_why)
    for bad in (3, 64, "yes", 1.5):
        with pytest.raises(BindingError, match="lane_groups"):
            m.kernel(lane_groups=bad)
    # fewer invocations than a group: one after another
    k = jitcoop.Device().load(SHADERS / "layouts.spv").kernel(lane_groups=8)
    assert k.meta.lane_group == 0 and "fewer than a group" in k.meta.lane_group_why


def test_a_vectorizer_failure_leaves_the_scalar_code(monkeypatch, rng):
    """An exception inside the vectorizer after it began to change the function (a bug of
    lanevec) puts the function back: the kernel runs one invocation at a time, correctly, and
    says why it has no lane groups."""
    from jitcoop.codegen import lanevec

    def broken(self):
        raise ValueError("a bug")
    monkeypatch.setattr(lanevec._LaneGroups, "_vector_copy", broken)
    k = jitcoop.Device().load(SHADERS / "divergent.spv").kernel(compile_timeout=0, opt_level=2)
    assert k.meta.lane_group == 0
    assert k.meta.lane_group_why.startswith("internal error in the lane-group vectorizer (ValueError")
    run_and_check(k, _groups_in_step(rng, 64 * 2), 32)


def test_a_function_past_the_compile_budget_keeps_the_scalar_code(monkeypatch, rng):
    """ggml's 64 x 64 float16 tile (a dumped pipeline): its function with a vector copy would pass
    lanevec.LANE_GROUP_BUDGET, so the pass turns it down and says why; lane_groups=16 asks for
    them past the budget. A kernel under a budget made small runs its scalar code, correctly."""
    from jitcoop.codegen import lanevec
    from jitcoop.options import KernelOptions
    from jitcoop.runtime import compile as compile_mod
    pipeline = SHADERS.parents[1] / "benchmarks" / "shaders" / "ggml_mul_mat" / "8cacfd1ca09b0cd0c8f33f87.json"
    desc = json.loads(pipeline.read_text())
    dev = jitcoop.Device(desc["profile"], desc["subgroup_size"])
    module = dev.load(pipeline.with_name(desc["module"])).spirv
    spec = {int(k): bytes.fromhex(v) for k, v in desc["spec"].items()}

    def meta(lg):
        return compile_mod.generate_ir(module, desc["entry"], spec, dev.profile, desc["subgroup_size"],
                                       KernelOptions(lane_groups=lg), annotate=False)[1]
    m = meta(True)
    assert m.lane_group == 0 and m.lane_group_why.startswith("too large"), m.lane_group_why
    assert f"{lanevec.LANE_GROUP_BUDGET:,}" in m.lane_group_why
    assert meta(16).lane_group == 16

    monkeypatch.setattr(lanevec, "LANE_GROUP_BUDGET", 100)     # (opt_level=1: a cache key of its own)
    k = jitcoop.Device().load(SHADERS / "divergent.spv").kernel(compile_timeout=0, opt_level=1)
    assert k.meta.lane_group == 0 and k.meta.lane_group_why.startswith("too large")
    run_and_check(k, _groups_in_step(rng, 64 * 2), 32)


def test_lane_groups_past_the_loop_access_budget():
    """The production flash attention's lane code holds more loads and stores than the lane
    loop's loop-access budget (KernelGen.LOOP_ACCESS_BUDGET): its lane count is read through a
    volatile load, and the kernel still takes lane groups (the first version of the budget put
    that load's store where the vectorizer refused the kernel: "an alloca 'store volatile ...'")."""
    from metamorphic.recipes import RECIPES
    r = RECIPES["tests/shaders/flash_attn_prod/flash_attn.spv"]
    k = jitcoop.Device(r.profile).load(r.path.read_bytes()).kernel(r.entry, spec=dict(r.spec), **r.options)
    assert "load volatile i64, ptr %lanes" in k.source
    assert k.meta.lane_group > 0, k.meta.lane_group_why


# -- branches around stores, run under a mask (masked_stores.comp) --------------------------------

MASKED = SHADERS / "masked_stores.spv"
SENTINEL = 0xDEADBEEF


def _masked_inputs(rng, wgs, steps):
    x = rng.uniform(-1, 1, (wgs, steps, 64)).astype(np.float32)
    perm = rng.permutation(64).astype(np.uint32)
    return x, perm


def _masked_run(k, x, perm, sums_len):
    wgs, steps, _ = x.shape
    bufs = {0: x.ravel().copy(), 1: np.full(sums_len, np.nan, np.float32),
            2: np.full(wgs * 64, SENTINEL, np.uint32), 3: perm.copy(), 4: np.full(wgs * 64, SENTINEL, np.uint32)}
    k.dispatch((wgs, 1, 1), bufs, push=struct.pack("<I", steps))
    return bufs


def _masked_reference(x, perm):
    """The shader's stores, written out from its text in numpy (acc * 0.5 is exact, so float32
    steps give the shader's bits; the subgroup sums are compared within a tolerance)."""
    wgs, steps, _ = x.shape
    acc = np.zeros((wgs, 64), np.float32)
    sums = np.empty((wgs, 2, steps), np.float64)
    for t in range(steps):
        acc = (acc * np.float32(0.5) + x[:, t, :]).astype(np.float32)
        sums[:, :, t] = acc.reshape(wgs, 2, 32).astype(np.float64).sum(axis=2)
    lid = np.arange(64)
    every3 = np.full((wgs, 64), SENTINEL, np.uint32)
    every3[:, lid % 3 == 0] = acc.view(np.uint32)[:, lid % 3 == 0]
    picked = np.full((wgs, 64), SENTINEL, np.uint32)
    for i in lid[(lid & 5) == 1]:
        picked[:, perm[i]] = i
    return sums.ravel(), every3.ravel(), picked.ravel()


def _masked_ir(G):
    from jitcoop.runtime.compile import generate_ir
    k = jitcoop.Device("generic", subgroup_size=32).load(MASKED).kernel(lane_groups=G, tier="optimized")
    ir, _ = generate_ir(k.module.spirv, k.entry, k.spec, k.device.profile, k.device.subgroup_size,
                        k.options, annotate=False)
    return ir


@pytest.mark.parametrize("G", [4, 8, 16, 32, False])
def test_stores_under_a_branch_on_the_invocation_index(rng, G):
    """One invocation of each subgroup storing its reduction at every step, every third
    invocation its own element, a few invocations elements a table picks: the shader's values,
    at every group size and one invocation at a time."""
    x, perm = _masked_inputs(rng, 3, 5)
    k = jitcoop.Device("generic", subgroup_size=32).load(MASKED).kernel(lane_groups=G)
    assert k.meta.lane_group == (G or 0), k.meta.lane_group_why
    got = _masked_run(k, x, perm, 3 * 2 * 5)
    sums, every3, picked = _masked_reference(x, perm)
    # a sum of 32 float32 values in another order: within 32 roundings of the largest partial sum
    np.testing.assert_allclose(got[1], sums, rtol=0, atol=32 * 2.0 ** -24 * 64)
    np.testing.assert_array_equal(got[2], every3)
    np.testing.assert_array_equal(got[4], picked)


@pytest.mark.parametrize("G", [8, 16])
def test_stores_under_a_branch_run_in_vector_code(G):
    """The vector copy keeps the group together through those branches: masked stores and a
    scatter under the mask, rather than leaving to run one invocation at a time."""
    ir = _masked_ir(G)
    assert "@llvm.masked.store" in ir and "@llvm.ctlz" in ir
    assert "@llvm.masked.scatter" in ir


@pytest.mark.parametrize("G", [8, 16, 32])
def test_a_bounds_failure_under_a_masked_branch_is_the_scalar_codes(rng, G):
    """The last workgroup's second subgroup has no room for its sums: its first invocation (32)
    fails at the store, reported as one invocation at a time reports it, and the buffers come
    back as they were."""
    x, perm = _masked_inputs(rng, 3, 5)
    dev = jitcoop.Device("generic", subgroup_size=32)
    messages = []
    for lg in (G, False):
        k = dev.load(MASKED).kernel(lane_groups=lg)
        bufs = {0: x.ravel().copy(), 1: np.zeros(5 * 5, np.float32), 2: np.zeros(3 * 64, np.uint32),
                3: perm.copy(), 4: np.zeros(3 * 64, np.uint32)}
        before = {b: a.copy() for b, a in bufs.items()}
        with pytest.raises(ExecutionError) as e:
            k.dispatch((3, 1, 1), bufs, push=struct.pack("<I", 5))
        for b in bufs:
            np.testing.assert_array_equal(bufs[b], before[b])
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert "OpStore" in messages[0] and "workgroup (2, 0, 0) lane 32" in messages[0], messages[0]
