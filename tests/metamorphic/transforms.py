"""Semantics-preserving transformations of SPIR-V modules, for metamorphic testing of the code
generator: a module and its transformed variant must compute the same outputs, bit for bit.

Two families:

- `spirv-opt` pass sequences drawn from its control-flow and SSA passes (`OPT_PASSES`), run by
  `tools.SpirvTools.optimize`;
- transformations of our own (`OWN`), written on `ir.Module`, for shapes optimizers emit but
  glslang's output rarely has: split blocks, dead branches (on a false constant, on a
  specialization constant no dispatch sets, or on a condition false at run time) whose dead arms
  branch on, return or are unreachable, some holding a short-circuit boolean phi; blocks no
  branch reaches, values routed through OpCopyObject and extra OpPhi, forwarding
  blocks on edges, swapped branch arms, reordered blocks, and conditions turned into
  short-circuit chains of boolean phis (`%a = OpPhi %bool ...` feeding `%b = OpPhi %bool ... %a`,
  the shape of the production flash-attention shader that failed to compile).

Each own transformation takes a module and a `random.Random` and returns a one-line description
of what it did, or None when the module offers it no place. Every result keeps the module valid
SPIR-V (structured control flow, dominance, block order); the tests run `spirv-val` on each, and a
transformation that breaks validity is a bug here.
"""
from __future__ import annotations

import random

from .ir import Block, Function, Inst, Module

# spirv-opt passes that restructure control flow or SSA values without changing what a shader
# computes. Left out on purpose: --relax-float-ops and --convert-relaxed-to-half (change
# precision), --freeze-spec-const and --set-spec-const-default-value (ignore the dispatch's spec
# constants), and passes that only touch interfaces, descriptors or images.
OPT_PASSES = (
    "--merge-blocks", "--eliminate-dead-branches", "--if-conversion", "--loop-unroll",
    "--loop-unroll-partial=2", "--loop-peeling", "--ssa-rewrite", "--simplify-instructions",
    "--redundancy-elimination", "--local-redundancy-elimination", "--inline-entry-points-exhaustive",
    "--convert-local-access-chains", "--copy-propagate-arrays", "--scalar-replacement",
    "--eliminate-dead-code-aggressive", "--eliminate-local-single-block",
    "--eliminate-local-single-store", "--eliminate-local-multi-store", "--merge-return",
    "--loop-unswitch", "--loop-invariant-code-motion", "--ccp", "--combine-access-chains",
    "--eliminate-insert-extract", "--eliminate-dead-inserts", "--private-to-local",
    "--reduce-load-size", "--vector-dce", "--code-sink", "--cfg-cleanup", "--strength-reduction",
    "--loop-fission=20", "--loop-fusion=4", "--wrap-opkill", "--eliminate-dead-functions",
)
OPT_PRESETS = ("-O", "-Os")


def random_opt_passes(rng: random.Random) -> list[str]:
    """One spirv-opt invocation: a preset alone (one time in four), else 1 to 6 passes."""
    if rng.random() < 0.25:
        return [rng.choice(OPT_PRESETS)]
    return [rng.choice(OPT_PASSES) for _ in range(rng.randint(1, 6))]


# -- places in a module -------------------------------------------------------------------------

_DEBUG_FUNCTION_DEFINITION = 101     # NonSemantic.Shader.DebugInfo.100: must stay in the entry block


def _start(fn: Function, b: Block) -> int:
    """The first index where code may be inserted: after the phis, and in the entry block after
    the variables (which must come first) and any DebugFunctionDefinition (which must stay)."""
    i = b.phi_end()
    if b is fn.blocks[0]:
        for j, ins in enumerate(b.body):
            if ins.opname == "OpVariable" or (ins.opname == "OpExtInst"
                                              and ins.words[4] == _DEBUG_FUNCTION_DEFINITION):
                i = j + 1
    return i


def _bodies(m: Module, rng: random.Random, *, loop_headers=False):
    """(function, block) pairs of reachable blocks, shuffled; loop headers left out unless asked:
    their OpLoopMerge must stay in the block that the back edge enters."""
    out = []
    for fn in m.functions:
        heads = fn.loop_headers()
        bm = fn.block_map()
        out += [(fn, bm[lab]) for lab in fn.reachable() if loop_headers or lab not in heads]
    rng.shuffle(out)
    return out


def _split(m: Module, fn: Function, b: Block, k: int) -> Block:
    """Move b.body[k:] into a new block placed after b and return it; b is left without a
    terminator. Phis of the moved terminator's targets now name the new block."""
    tail = Block(m.inst("OpLabel"), b.body[k:])
    del b.body[k:]
    fn.blocks.insert(fn.blocks.index(b) + 1, tail)
    _rename_parent(fn, tail.successors(), b.label, tail.label)
    return tail


def _rename_parent(fn: Function, targets, old: int, new: int):
    bm = fn.block_map()
    for s in dict.fromkeys(targets):
        for phi in bm[s].phis():
            phi.set_phi_parent(old, new)


def _in_continue_constructs(fn: Function) -> set[int]:
    """Blocks dominated by a loop's continue target (a superset of the continue constructs,
    which must be structurally post-dominated by their back-edge block)."""
    targets = {b.merge.words[2] for b in fn.blocks if b.merge is not None and b.merge.opname == "OpLoopMerge"}
    return {lab for lab, ds in fn.dominators().items() if ds & targets}


def _exits(fn: Function) -> set[int]:
    """Merge blocks and continue targets: where a branch may leave a construct."""
    out = set()
    for b in fn.blocks:
        if b.merge is not None:
            out.update(b.merge.words[1:3] if b.merge.opname == "OpLoopMerge" else b.merge.words[1:2])
    return out


def _value_defs(fn: Function) -> dict[int, tuple[Block | None, int]]:
    """Values defined in the function: result id -> (block, index), (None, -1) for parameters."""
    out = {p.result: (None, -1) for p in fn.head[1:]}
    for b in fn.blocks:
        for i, ins in enumerate(b.body):
            if ins.result is not None and ins.type_id is not None:
                out[ins.result] = (b, i)
    return out


def _scalar_kind(m: Module, type_id) -> str | None:
    """"int" or "float" for 32-bit scalars (narrower ones may be storage-only, and bfloat16 has no
    comparisons), "bool", else None."""
    t = m.type_inst(type_id)
    if t is None:
        return None
    if t.opname == "OpTypeBool":
        return "bool"
    if t.opname in ("OpTypeInt", "OpTypeFloat") and t.words[2] == 32 and len(t.words) <= 4:
        return "int" if t.opname == "OpTypeInt" else "float"
    return None


def _visible_scalar(m: Module, fn: Function, b: Block, k: int, kind: str, rng: random.Random):
    """A value of scalar kind `kind` defined before index k of b, or None."""
    ids = [ins.result for ins in b.body[:k]
           if ins.result is not None and ins.type_id is not None and ins.opname != "OpVariable"
           and _scalar_kind(m, ins.type_id) == kind]
    return rng.choice(ids) if ids else None


def _always_false(m: Module, fn: Function, b: Block, k: int, rng: random.Random) -> tuple[int, list[Inst], str]:
    """A condition that is false whenever it runs, computed at the end of b.body[:k]: the constant;
    a specialization constant false by default whose SpecId no dispatch sets; `x != x` on an
    integer of the block; or `x < x` (ordered: false for NaN too) on a float."""
    bool_t = m.bool_type()
    choice = rng.choice(("const", "spec", "int", "float"))
    if choice in ("int", "float"):
        x = _visible_scalar(m, fn, b, k, choice, rng)
        if x is not None:
            op = "OpINotEqual" if choice == "int" else "OpFOrdLessThan"
            ins = m.inst(op, x, x, type_id=bool_t)
            return ins.result, [ins], f"{op} %{x} %{x}"
    if choice == "spec":
        spec_id = m.unused_spec_id()
        c = m.add_global(m.inst("OpSpecConstantFalse", type_id=bool_t))
        m.add_decoration(m.inst("OpDecorate", c, m.walker.g.enum_value("Decoration", "SpecId"), spec_id))
        return c, [], f"spec constant %{c} (SpecId {spec_id}, false)"
    return m.bool_const(False), [], "false"


def _short_circuit(m: Module, x: int, end: Inst) -> list[Block]:
    """Blocks computing `c || !c` through a boolean phi, as `a || b` compiles (c = x != x for an
    int x), then `end`: the shape dead code keeps when a specialization constant hides it."""
    bool_t = m.bool_type()
    head, arm, join = (Block(m.inst("OpLabel"), []) for _ in range(3))
    c = m.inst("OpINotEqual", x, x, type_id=bool_t)
    head.body = [c, m.inst("OpSelectionMerge", join.label, 0),
                 m.inst("OpBranchConditional", c.result, join.label, arm.label)]
    n = m.inst("OpLogicalNot", c.result, type_id=bool_t)
    arm.body = [n, m.inst("OpBranch", join.label)]
    phi = m.inst("OpPhi", c.result, head.label, n.result, arm.label, type_id=bool_t)
    pick = m.inst("OpSelect", phi.result, x, x, type_id=m.type_of(x))
    join.body = [phi, pick, end]
    return [head, arm, join]


# -- the transformations ------------------------------------------------------------------------

def split_block(m: Module, rng: random.Random):
    """Split a block in two, joined by an unconditional branch."""
    for fn, b in _bodies(m, rng):
        lo, hi = _start(fn, b), b.tail_start()
        k = rng.randint(lo, hi)
        tail = _split_branch(m, fn, b, k)
        return f"split %{b.label} at {k} (new %{tail.label})"
    return None


def dead_branch(m: Module, rng: random.Random):
    """Insert a selection whose condition is always false; the dead arm holds some arithmetic
    (sometimes a short-circuit diamond with a boolean phi) and branches to the merge, returns,
    or is OpUnreachable."""
    for fn, b in _bodies(m, rng):
        k = rng.randint(_start(fn, b), b.tail_start())
        cond, pre, what = _always_false(m, fn, b, k, rng)
        x = _visible_scalar(m, fn, b, k, "int", rng)
        in_continue = b.label in _in_continue_constructs(fn)
        tail = _split(m, fn, b, k)
        end = "merge" if in_continue else rng.choice(("merge", "return", "unreachable"))
        if end == "merge":
            last = m.inst("OpBranch", tail.label)
        elif end == "unreachable":
            last = m.inst("OpUnreachable")
        elif m.type_inst(fn.return_type).opname == "OpTypeVoid":
            last = m.inst("OpReturn")
        else:
            last = m.inst("OpReturnValue", m.undef(fn.return_type))
        if x is not None and rng.random() < 0.5:
            arm = _short_circuit(m, x, last)
            what += " (a boolean phi inside)"
        else:
            arm = [Block(m.inst("OpLabel"), [last])]
            if x is not None:
                arm[0].body.insert(0, m.inst("OpIMul", x, x, type_id=m.type_of(x)))
        dead = arm[0]
        b.body += pre + [m.inst("OpSelectionMerge", tail.label, 0)]
        if rng.random() < 0.5:
            b.body.append(m.inst("OpBranchConditional", cond, dead.label, tail.label))
        else:                           # the same, written with the negated condition
            neg = m.inst("OpLogicalNot", cond, type_id=m.bool_type())
            b.body[-1:-1] = [neg]
            b.body.append(m.inst("OpBranchConditional", neg.result, tail.label, dead.label))
        at = fn.blocks.index(tail)
        fn.blocks[at:at] = arm
        return f"dead branch on {what} in %{b.label} at {k}, dead arm %{dead.label} ends by {end}"
    return None


def unreachable_block(m: Module, rng: random.Random):
    """Append a block that no branch reaches (with arithmetic on a constant)."""
    fns = list(m.functions)
    rng.shuffle(fns)
    for fn in fns:
        blk = Block(m.inst("OpLabel"), [])
        ints = [g for g in m.globals if g.opname == "OpConstant" and _scalar_kind(m, g.type_id) == "int"]
        if ints:
            c = rng.choice(ints)
            blk.body.append(m.inst("OpIAdd", c.result, c.result, type_id=c.type_id))
        blk.body.append(m.inst("OpUnreachable"))
        fn.blocks.append(blk)
        return f"unreachable block %{blk.label} in function %{fn.id}"
    return None


def copy_object(m: Module, rng: random.Random):
    """Route a value through OpCopyObject: the copy follows the definition and takes every use."""
    for fn, b in _bodies(m, rng, loop_headers=True):
        cands = [i for i, ins in enumerate(b.body)
                 if ins.result is not None and ins.type_id is not None
                 and ins.opname not in ("OpVariable", "OpSampledImage")
                 and _copyable(m, ins.type_id)]
        if not cands:
            continue
        i = rng.choice(cands)
        v = b.body[i]
        copy = m.inst("OpCopyObject", v.result, type_id=v.type_id)
        _replace_uses(fn, v.result, copy.result)
        at = max(i + 1, b.phi_end())
        b.body.insert(at, copy)
        return f"%{v.result} ({v.opname}) routed through OpCopyObject %{copy.result}"
    return None


def _copyable(m: Module, type_id) -> bool:
    """Values a copy or phi may carry: not void, not pointers (a phi of pointers needs
    VariablePointers)."""
    t = m.type_inst(type_id)
    return t is not None and t.opname not in ("OpTypeVoid", "OpTypePointer", "OpTypeUntypedPointerKHR")


def _replace_uses(fn: Function, old: int, new: int, blocks=None):
    for blk in (blocks if blocks is not None else fn.blocks):
        for ins in blk.body:
            ins.replace_use(old, new)


def phi_route(m: Module, rng: random.Random):
    """Route a value into a block through a new OpPhi with that value on every incoming edge (an
    OpUndef on edges from unreachable blocks); the block's other instructions read the phi. Half
    the time, or where no value crosses blocks, the block is first split between a value's
    definition and its use (a phi with one incoming edge)."""
    crossing, local = [], []
    facts = {}
    for fn, b in _bodies(m, rng, loop_headers=True):
        if fn.id not in facts:
            facts[fn.id] = (fn.dominators(), _value_defs(fn), fn.loop_headers())
        doms, defs, heads = facts[fn.id]
        lo = b.phi_end()
        for j, ins in enumerate(b.body[lo:], lo):
            for v in ins.uses():
                if v not in defs or not _copyable(m, m.type_of(v)):
                    continue
                db, di = defs[v]
                if db is b and di < j and b.label not in heads:
                    first = max(di + 1, _start(fn, b))
                    last = min(j, b.tail_start())
                    if first <= last:
                        local.append((fn, b, v, first, last))
                elif b is not fn.blocks[0] and (db is None or (db is not b and db.label in doms[b.label])):
                    crossing.append((fn, b, v))
    if local and (not crossing or rng.random() < 0.5):
        fn, b, v, first, last = rng.choice(local)
        b = _split_branch(m, fn, b, rng.randint(first, last))
    elif crossing:
        fn, b, v = rng.choice(crossing)
    else:
        return None
    doms = fn.dominators()
    preds = fn.preds()[b.label]
    pairs = []
    for p in preds:
        pairs += [v if p in doms else m.undef(m.type_of(v)), p]
    phi = m.inst("OpPhi", *pairs, type_id=m.type_of(v))
    at = b.phi_end()
    for ins in b.body[at:]:
        ins.replace_use(v, phi.result)
    b.body.insert(at, phi)
    return f"%{v} routed into %{b.label} through OpPhi %{phi.result} ({len(preds)} edges)"


def _split_branch(m: Module, fn: Function, b: Block, k: int) -> Block:
    """Split b at k with an unconditional branch between the halves; the second half."""
    tail = _split(m, fn, b, k)
    b.body.append(m.inst("OpBranch", tail.label))
    return tail


def edge_block(m: Module, rng: random.Random):
    """Put a block that only branches on one edge of a branch (not a switch, not a back edge).
    A conditional branch without a selection merge (a break, a continue, a loop header's exit
    test) keeps the target of its exit edge."""
    for fn, b in _bodies(m, rng, loop_headers=True):
        t = b.term
        heads = fn.loop_headers()
        doms = fn.dominators()
        if t.opname == "OpBranch":
            slots = [1]
        elif t.opname == "OpBranchConditional" and t.words[2] != t.words[3]:
            slots = [2, 3]
            if b.merge is None or b.merge.opname == "OpLoopMerge":
                exits = _exits(fn)
                slots = [s for s in slots if t.words[5 - s] in exits]
        else:
            continue
        slots = [s for s in slots if not (t.words[s] in heads and t.words[s] in doms[b.label])]
        if not slots:
            continue
        slot = rng.choice(slots)
        target = t.words[slot]
        e = Block(m.inst("OpLabel"), [m.inst("OpBranch", target)])
        t.words[slot] = e.label
        _rename_parent(fn, [target], b.label, e.label)
        fn.blocks.insert(fn.blocks.index(b) + 1, e)
        return f"edge %{b.label} -> %{target} through %{e.label}"
    return None


def swap_branch(m: Module, rng: random.Random):
    """Negate a conditional branch's condition and swap its targets (and weights)."""
    for fn, b in _bodies(m, rng, loop_headers=True):
        t = b.term
        if t.opname != "OpBranchConditional" or t.words[2] == t.words[3]:
            continue
        neg = m.inst("OpLogicalNot", t.words[1], type_id=m.bool_type())
        w = t.words
        weights = [w[5], w[4]] if len(w) == 6 else []
        b.body[b.tail_start():b.tail_start()] = [neg]
        b.body[-1] = m.inst("OpBranchConditional", neg.result, w[3], w[2], *weights)
        return f"branch of %{b.label} on OpLogicalNot %{neg.result}, arms swapped"
    return None


def reorder_blocks(m: Module, rng: random.Random):
    """Shuffle the block order of a function, keeping every block after its dominators (a random
    walk of the dominator tree); blocks no branch reaches go last."""
    fns = [f for f in m.functions if len(f.blocks) > 2]
    if not fns:
        return None
    fn = rng.choice(fns)
    idom = fn.idoms()
    bm = fn.block_map()
    children = {lab: [] for lab in idom}
    for lab, d in idom.items():
        if lab != d:
            children[d].append(lab)
    entry = fn.blocks[0].label
    order, ready = [], [entry]
    while ready:
        lab = ready.pop(rng.randrange(len(ready)))
        order.append(lab)
        ready += children[lab]
    order += [b.label for b in fn.blocks if b.label not in idom]
    fn.blocks = [bm[lab] for lab in order]
    return f"blocks of function %{fn.id} reordered"


def bool_chain(m: Module, rng: random.Random):
    """Recompute a boolean through short-circuit blocks, as compilers write `c && x || y`:

        head: SelectionMerge X1; BranchConditional %c Y1 X1
        Y1:   %c1 = (c, recomputed);            Branch X1
        X1:   %a = OpPhi %bool %c1 %Y1 %f %head      (%f: false or %c)
              SelectionMerge X2; BranchConditional %a X2 Y2
        Y2:   %d = (a, recomputed);             Branch X2
        X2:   %b = OpPhi %bool %a %X1 %d %Y2         (a phi of a phi)
              the rest of the block, reading %b where it read %c

    The boolean is a branch condition or any boolean read later in its block."""
    bool_t = m.bool_type()
    for fn, b in _bodies(m, rng):
        lo = _start(fn, b)
        defs = _value_defs(fn)
        doms = fn.dominators()
        # (boolean, first index it may be recomputed at, index of its first use at or after lo)
        cands = []
        for j in range(lo, len(b.body)):
            ins = b.body[j]
            if ins.opname in ("OpSelectionMerge", "OpLoopMerge"):
                continue
            for v in ins.uses():
                if v not in defs or m.type_of(v) != bool_t:
                    continue
                db, di = defs[v]
                if db is b and di >= j:
                    continue
                if db is not None and db is not b and db.label not in doms[b.label]:
                    continue
                first = max(lo, di + 1) if db is b else lo
                cands.append((v, first, b.tail_start() if ins is b.term else j))
        if not cands:
            continue
        v, first, last = rng.choice(cands)
        k = rng.randint(first, last)
        x2 = _split(m, fn, b, k)
        y1, x1, y2 = (Block(m.inst("OpLabel"), []) for _ in range(3))
        c1 = _recompute(m, v, bool_t, rng, True)
        a_else = rng.choice((m.bool_const(False), v))
        a = m.inst("OpPhi", c1[-1].result, y1.label, a_else, b.label, type_id=bool_t)
        d = _recompute(m, a.result, bool_t, rng, False)
        bb = m.inst("OpPhi", a.result, x1.label, d[-1].result, y2.label, type_id=bool_t)
        b.body += [m.inst("OpSelectionMerge", x1.label, 0),
                   m.inst("OpBranchConditional", v, y1.label, x1.label)]
        y1.body = c1 + [m.inst("OpBranch", x1.label)]
        x1.body = [a, m.inst("OpSelectionMerge", x2.label, 0),
                   m.inst("OpBranchConditional", a.result, x2.label, y2.label)]
        y2.body = d + [m.inst("OpBranch", x2.label)]
        for ins in x2.body:
            ins.replace_use(v, bb.result)
        x2.body.insert(0, bb)
        at = fn.blocks.index(x2)
        fn.blocks[at:at] = [y1, x1, y2]
        return f"%{v} in %{b.label} recomputed through phis %{a.result} -> %{bb.result}"
    return None


def _recompute(m: Module, v: int, bool_t: int, rng: random.Random, value: bool) -> list[Inst]:
    """Instructions whose last result equals v on a path where v is known to be `value`."""
    way = rng.choice(("copy", "equal", "notnot", "or", "and"))
    if way == "copy":
        return [m.inst("OpCopyObject", v, type_id=bool_t)]
    if way == "equal":
        return [m.inst("OpLogicalEqual", v, m.bool_const(True), type_id=bool_t)]
    if way == "notnot":
        n = m.inst("OpLogicalNot", v, type_id=bool_t)
        return [n, m.inst("OpLogicalNot", n.result, type_id=bool_t)]
    if way == "or":
        return [m.inst("OpLogicalOr", v, m.bool_const(False), type_id=bool_t)]
    return [m.inst("OpLogicalAnd", v, m.bool_const(value), type_id=bool_t)]


OWN = {
    "split_block": split_block,
    "dead_branch": dead_branch,
    "unreachable_block": unreachable_block,
    "copy_object": copy_object,
    "phi_route": phi_route,
    "edge_block": edge_block,
    "swap_branch": swap_branch,
    "reorder_blocks": reorder_blocks,
    "bool_chain": bool_chain,
}


def apply_own(data: bytes, names, rng: random.Random) -> tuple[bytes, list[str]]:
    """Apply the named own transformations in order; returns the module and what each did."""
    m = Module(data)
    done = []
    for name in names:
        what = OWN[name](m, rng)
        done.append(f"{name}: {what}" if what else f"{name}: no place")
    return m.emit(), done
