"""The flat function's rewriting passes (jitcoop/analysis: prune, ssa, unroll, sroa), on a shader
written with matrices in arrays walked by loops (tests/shaders/passes/loops.comp), as glslang
writes it and through spirv-opt -O: what is unrolled and split, what is left alone (a trip count
the compiler cannot know, a `break`, an index only known at run time), and that the results are
the shader's, element for element (small integers: every product and sum exact in float32)."""
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop.codegen.emitter import KernelGen
from jitcoop.options import KernelOptions
from jitcoop.spirv.specialize import Specialization

PASSES = Path(__file__).parent / "shaders" / "passes"


def reference(a_tiles, b_tiles, n):
    """loops.comp's four accumulators, from its header comment."""
    A = [t.astype(np.float64) for t in a_tiles]
    B = [t.astype(np.float64) for t in b_tiles]
    acc0 = sum(A[k] @ B[k] for k in range(3))
    acc1 = sum((A[k % 3] @ B[(k + 2) % 3] for k in range(n)), np.zeros((16, 16)))
    acc2 = 2 + sum((A[k] @ B[k] for k in range(3) if k != n), np.zeros((16, 16)))
    acc3 = sum((A[k] @ B[k] for k in range(min(n, 3))), np.zeros((16, 16)))
    return np.stack([acc0, acc1, acc2, acc3])


@pytest.mark.parametrize("module", ["loops.spv", "loops_O.spv"])
@pytest.mark.parametrize("profile", ["generic", "nvidia"])
def test_loops_over_matrix_arrays_compute_what_the_shader_says(module, profile):
    rng = np.random.default_rng(3)
    a_tiles = rng.integers(-3, 4, (3, 16, 16)).astype(np.float16)
    b_tiles = rng.integers(-3, 4, (3, 16, 16)).astype(np.float16)
    a = a_tiles.reshape(-1)
    b = np.ascontiguousarray(b_tiles.transpose(0, 2, 1)).reshape(-1)     # column-major tiles
    k = jitcoop.Device(profile).load(PASSES / module).kernel()
    for n in (0, 1, 2, 3, 5):
        c = np.full(4 * 256, np.nan, np.float32)
        k.dispatch(1, {0: a, 1: b, 2: c}, push=np.uint32(n).tobytes())
        np.testing.assert_array_equal(c.reshape(4, 16, 16), reference(a_tiles, b_tiles, n), err_msg=f"n = {n}")


def flat(module):
    m = jitcoop.Device().load(PASSES / module).spirv
    gen = KernelGen(m, Specialization(m, {}), None, 32, KernelOptions())
    return m, gen.ff


def test_what_is_unrolled_and_split():
    """Counted loops around matrix instructions are gone and their arrays split into SSA matrices;
    the loop over a push constant's count and the loop with a `break` stay loops, and the arrays
    indexed by a run-time value (a2, b2) stay variables."""
    m, ff = flat("loops.spv")
    loops = [b for b in ff.blocks if b.merge is not None and b.merge.opname == "OpLoopMerge"]
    assert len(loops) == 2
    assert sorted(m.names.get(v.result, "?") for v in ff.variables) == ["a2", "b2"]
    calls = [i for b in ff.blocks for i in b.instrs if i.opname == "OpCooperativeMatrixMulAddKHR"]
    # acc0's 3, acc2's 3 (each behind its `continue` test), and one each in the two loops
    assert len(calls) == 8


def test_the_same_after_spirv_opt():
    """spirv-opt -O unrolls nothing itself and leaves phis for counters: the same two loops remain."""
    _, ff = flat("loops_O.spv")
    loops = [b for b in ff.blocks if b.merge is not None and b.merge.opname == "OpLoopMerge"]
    assert len(loops) == 2


def copies_reference(a_tiles, b_tiles):
    """copies.comp's eight results, from its header comment: A[i][k] = a_tiles[2i + k],
    B[k][j] = b_tiles[2k + j]."""
    A = [[a_tiles[2 * i + k].astype(np.float64) for k in range(2)] for i in range(2)]
    B = [[b_tiles[2 * k + j].astype(np.float64) for j in range(2)] for k in range(2)]
    after = [[(i + 2 * j) + sum(A[i][k] @ B[k][j] for k in range(steps)) for j in range(2)]
             for i in range(2) for steps in (1, 2)]
    once = {(i, j): after[2 * i][j] for i in range(2) for j in range(2)}
    twice = {(i, j): after[2 * i + 1][j] for i in range(2) for j in range(2)}
    return np.stack([twice[0, 0], twice[0, 1], twice[1, 0], twice[1, 1], once[0, 0], once[1, 1],
                     np.ones((16, 16)), 2 + A[0][0] @ B[0][0]])


def _run_tiles(module, profile, outputs):
    """(kernel, its `outputs` 16 x 16 results, copies_reference) for 4 A and 4 B tiles of small
    integers (every product and sum exact in float32)."""
    rng = np.random.default_rng(5)
    a_tiles = rng.integers(-3, 4, (4, 16, 16)).astype(np.float16)
    b_tiles = rng.integers(-3, 4, (4, 16, 16)).astype(np.float16)
    k = jitcoop.Device(profile).load(PASSES / module).kernel()
    c = np.full(outputs * 256, np.nan, np.float32)
    k.dispatch(1, {0: a_tiles.reshape(-1), 1: b_tiles.reshape(-1), 2: c})
    return k, c.reshape(outputs, 16, 16), copies_reference(a_tiles, b_tiles)


@pytest.mark.parametrize("module", ["copies.spv", "copies_O.spv"])
@pytest.mark.parametrize("profile", ["generic", "nvidia"])
def test_whole_array_copies_compute_what_the_shader_says(module, profile):
    """An inout array parameter (copied in and out at each call), a copy kept across a later
    change of the original, an `in` array parameter and an initializer list (a constant array)."""
    k, got, ref = _run_tiles(module, profile, 8)
    np.testing.assert_array_equal(got, ref)
    # every array split, so no lane holds an array of matrices: one invocation's code runs
    assert k.meta.lanes_run == 1, k.meta.varying


@pytest.mark.parametrize("module", ["copies.spv", "copies_O.spv"])
def test_whole_array_copies_are_split(module):
    """No array of matrices is left: not as a variable, not as a value loaded, built or stored."""
    m, ff = flat(module)
    from jitcoop.analysis.sroa import _matrix_array
    spec = Specialization(m, {})
    assert not [v for v in ff.variables if _matrix_array(spec.type(v.result_type).pointee)]
    whole = [i.opname for b in ff.blocks for i in b.instrs
             if i.result_type is not None and i.opname != "OpVariable" and _matrix_array(spec.type(i.result_type))]
    assert whole == []


@pytest.mark.parametrize("module", ["private.spv", "private_O.spv", "private_init.spv"])
@pytest.mark.parametrize("profile", ["generic", "nvidia"])
def test_private_matrices_compute_what_the_shader_says(module, profile):
    """Accumulators, operands and the K counter as global (Private) variables used by helper
    functions, a local copy of the global accumulators made in the loop's first trip, and a
    Private scalar set by a store in main (glslang) or by its OpVariable's initializer
    (private_init.spvasm): made locals (analysis/private.py), split and promoted, so one
    invocation's code runs."""
    k, got, ref = _run_tiles(module, profile, 5)
    np.testing.assert_array_equal(got[:4], 2 * ref[:4])
    np.testing.assert_array_equal(got[4], ref[5])            # keep[1][1]: acc[1][1] after one step
    assert k.meta.lanes_run == 1, k.meta.varying


def test_private_variables_a_callback_reads_stay_private():
    """A DecodeFunc reading a Private variable finds the calling lane's value in its frame: the
    variable stays Private (and the invocations may differ through it)."""
    from jitcoop.analysis import private
    m = jitcoop.Device().load(Path(__file__).parent / "shaders" / "coopmat2_apps" / "decode_private.spv").spirv
    gen = KernelGen(m, Specialization(m, {}), None, 32, KernelOptions())
    read = {v for cb in gen.callbacks.values() for v in cb.private_reads}
    assert read and read <= set(gen.private_vars)
    assert not read & {v.result for v in gen.ff.variables}
    assert private._callback_functions(m) == set(gen.callbacks)


@pytest.mark.parametrize("module", ["merge_phi.spv", "merge_phi_O.spv"])
@pytest.mark.parametrize("profile", ["generic", "nvidia"])
def test_a_copy_in_a_branch_of_an_unrolled_loop_keeps_both_values(module, profile):
    """`if (k == 0) keep = acc;` in a counted loop: unrolled, keep's merge phi takes acc or the
    old keep, and acc is used after it (the next trip's MulAdd). Sharing rows with the phi, acc
    would be overwritten with the old keep on the edge that keeps it: a phi shares rows with a value
    only where the value is dead at the phi's block."""
    rng = np.random.default_rng(5)
    A = rng.integers(-3, 4, (2, 16, 16)).astype(np.float16)
    B = rng.integers(-3, 4, (2, 16, 16)).astype(np.float16)
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    k = jitcoop.Device(profile).load(PASSES / module).kernel()
    c = np.full(512, np.nan, np.float32)
    k.dispatch(1, {0: A.reshape(-1), 1: B.reshape(-1), 2: c})
    np.testing.assert_array_equal(c[:256].reshape(16, 16), 1 + a64[0] @ b64[0] + a64[1] @ b64[1])
    np.testing.assert_array_equal(c[256:].reshape(16, 16), 1 + a64[0] @ b64[0])


def test_a_whole_load_also_stored_where_no_chain_reaches_stays_whole():
    """One load of a local array stored into another local (taken apart) and into a global array
    whose matrices no access chain type can name (kept whole): the load must stay for the
    second store (taken apart anyway, its id was left dangling: 'is used as a value')."""
    k = jitcoop.Device().load(PASSES / "copy_to_unnamed.spv").kernel()
    c = np.full(512, np.nan, np.float32)
    k.dispatch(1, {0: c})
    np.testing.assert_array_equal(c, np.repeat([1.0, 2.0], 256))


@pytest.mark.parametrize("module", ["struct.spv", "struct_O.spv"])
@pytest.mark.parametrize("profile", ["generic", "nvidia"])
def test_matrices_in_a_struct_compute_what_the_shader_says(module, profile):
    """`struct Tile { MC c[2][2]; }` walked by counted loops: each matrix of the struct becomes a
    variable of its own (analysis/sroa.py), so one invocation's code runs."""
    k, got, ref = _run_tiles(module, profile, 4)
    np.testing.assert_array_equal(got, ref[:4])
    assert k.meta.lanes_run == 1, k.meta.varying


@pytest.mark.parametrize("module", ["struct_mixed.spv", "struct_mixed_O.spv"])
@pytest.mark.parametrize("profile", ["generic", "nvidia"])
def test_a_struct_of_matrices_and_scalars_is_split(module, profile):
    """`struct Tile { uint base; MC c[2][2]; float scale; uvec2 step; }`: each whole member a
    variable of its own (analysis/sroa.py), the scalars and the vector too, so one invocation's
    code runs (left whole, the struct held matrices every lane had to keep)."""
    k, got, ref = _run_tiles(module, profile, 4)
    np.testing.assert_array_equal(got, ref[:4])
    assert k.meta.lanes_run == 1, k.meta.varying


def carry_reference(A, B, skip_a, skip_acc):
    """carry.comp's loop in numpy: ma keeps the last tile loaded (zero before any), acc adds
    ma x mb unless skipped, acc2 adds the ma of before each step's load."""
    ma = np.zeros((16, 16))
    acc, acc2 = np.zeros((16, 16)), np.zeros((16, 16))
    for s in range(B.shape[0]):
        old = ma
        if not skip_a >> s & 1:
            ma = A[:, 16 * s:16 * s + 16]
        if not skip_acc >> s & 1:
            acc = acc + ma @ B[s]
        acc2 = acc2 + old @ B[s]
    return acc, acc2, ma


MASKS = [(0, 0), (0b0101, 0), (0b0110, 0b1001), (0b11111, 0b00100), (0b10010, 0b11111)]


@pytest.mark.parametrize("module", ["carry.spv", "carry_O.spv", "carry_only.spv", "carry_only_O.spv"])
@pytest.mark.parametrize("profile", ["generic", "nvidia"])
def test_matrices_carried_over_skipped_steps(module, profile):
    """Guards that skip a K step's load or MulAdd leave the matrix as the step before made it:
    the loop's phi takes a merge phi of the new value and its own (analysis/matrices.py
    _coalesce_merges gives all three one block, in carry_only: no copy left). In carry, the old
    ma is still used after the guarded load, and ma after the loop: those stay apart."""
    rng = np.random.default_rng(9)
    steps = 5
    A = rng.integers(-3, 4, (16, 16 * steps)).astype(np.float16)
    B = rng.integers(-3, 4, (steps, 16, 16)).astype(np.float16)
    k = jitcoop.Device(profile).load(PASSES / module).kernel()
    if module.startswith("carry_only"):
        assert "@llvm.memcpy.p0.p0.i64(ptr" not in k.source
    for skip_a, skip_acc in MASKS:
        acc, acc2, ma = carry_reference(A.astype(np.float64), B.astype(np.float64), skip_a, skip_acc)
        c = np.full(512, np.nan, np.float32)
        d = np.full(256, np.nan, np.float16)
        binds = {0: A.reshape(-1), 1: B.reshape(-1), 2: c}
        if not module.startswith("carry_only"):
            binds[3] = d
        k.dispatch(1, binds, push=np.array([steps, skip_a, skip_acc], np.uint32))
        np.testing.assert_array_equal(c[:256].reshape(16, 16), acc, err_msg=f"acc, masks {skip_a:b} {skip_acc:b}")
        if not module.startswith("carry_only"):
            np.testing.assert_array_equal(c[256:].reshape(16, 16), acc2, err_msg="acc2")
            np.testing.assert_array_equal(d.reshape(16, 16), ma, err_msg="ma after the loop")
