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
