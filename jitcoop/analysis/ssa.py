"""Function variables into SSA values (mem2reg on the flat function).

glslang writes every local as a Function variable, loop counters and cooperative matrices
included. A variable only ever loaded and stored whole becomes SSA values here: each load takes
the value that reaches it, phis join them where control flow does (placed on the iterated
dominance frontier of the stores, only where the variable is live: pruned SSA). After this pass a
loop counter is a phi the loop analyses can read (jitcoop.analysis.unroll), and a matrix is an
SSA value that lives in its scheduler rows (jitcoop.analysis.matrices) instead of being copied
lane by lane in and out of a variable around every cooperative instruction.
"""
from __future__ import annotations

from ..spirv.types import CoopMat, Scalar, Vector
from . import cfg
from .flatten import FlatFunction, _clone, _synth, used_ids


def _pointee_type_id(spec, var) -> int:
    return spec.def_of(var.result_type).operands[1]


def _stored_in_quiet_loops(ff: FlatFunction, is_collective, idom, preds) -> set:
    """Variables stored inside a loop with no collective instruction in it and read after it.

    An SSA value live across a collective is written to its lane's slot where it is defined
    (jitcoop.analysis.liveness); a variable held in registers is saved only when the lane
    suspends. Inside a loop that never suspends (a tiled GEMM's inner product loop accumulating
    before the next barrier) the first costs a store per iteration, the second one per suspend:
    such variables are left to the variables analysis, unless they hold matrices. (A loop's own
    counter, read only inside it, dies with the loop: it stays a candidate, for the unroller.)"""
    bmap = ff.block_map()
    loads_at: dict = {}
    for b in ff.blocks:
        for i in b.instrs:
            if i.opname == "OpLoad":
                loads_at.setdefault(i.operands[0], set()).add(b.label)
    out = set()
    for lp in cfg.natural_loops(ff, idom, preds):
        blocks = [bmap[label] for label in lp.body]
        if any(is_collective(i) for b in blocks for i in b.instrs):
            continue
        stored = {i.operands[0] for b in blocks for i in b.instrs if i.opname == "OpStore"}
        out.update(v for v in stored if loads_at.get(v, set()) - lp.body)
    return out


def candidates(ff: FlatFunction, spec, users: dict, is_collective=None, idom=None, preds=None) -> list:
    """The Function variables whose every use is a whole load or a whole store of another value,
    of a scalar, vector or cooperative matrix type; scalars and vectors not stored in a loop
    without collectives (see _stored_in_quiet_loops, which takes the graph's idom and preds)."""
    out = []
    quiet = _stored_in_quiet_loops(ff, is_collective, idom, preds) if is_collective is not None else set()
    for v in ff.variables:
        pointee = spec.type(v.result_type).pointee
        if not isinstance(pointee, (Scalar, Vector, CoopMat)):
            continue
        if not isinstance(pointee, CoopMat) and v.result in quiet:
            continue
        if all((u.opname == "OpLoad" and u.operands[0] == v.result)
               or (u.opname == "OpStore" and u.operands[0] == v.result and u.operands[1] != v.result
                   and len(u.operands) == 2)
               for u in users.get(v.result, ())):
            out.append(v)
    return out


def promote(ff: FlatFunction, spec, ids, is_collective=None) -> int:
    """Promote every candidate variable; returns how many were. is_collective(ins), when given,
    keeps scalars and vectors stored in loops without collectives out."""
    users = ff.users()
    preds = cfg.predecessors(ff)
    idom = cfg.dominators(ff, preds)
    vars_ = candidates(ff, spec, users, is_collective, idom, preds)
    if not vars_:
        return 0
    promoted = {v.result: v for v in vars_}
    bmap = ff.block_map()
    df = cfg.frontiers(ff, idom, preds)
    live_in = _live_in(ff, promoted, preds)

    # phis: iterated dominance frontier of the blocks that store, where the variable is live
    phis: dict[int, dict[int, object]] = {}            # label -> var -> OpPhi
    for var in promoted:
        stores = {b.label for b in ff.blocks if b.label in idom and any(
            i.opname == "OpStore" and i.operands[0] == var for i in b.instrs)}
        work, placed = list(stores), set()
        while work:
            for f in df.get(work.pop(), ()):
                if f in placed or var not in live_in.get(f, ()):
                    continue
                placed.add(f)
                phis.setdefault(f, {})[var] = _synth("OpPhi", [], [], bmap[f].term.offset, ids.fresh(),
                                                     _pointee_type_id(spec, promoted[var]))
                work.append(f)

    subst: dict[int, int] = {}
    undef: dict[int, int] = {}

    def resolve(x):
        while x in subst:
            x = subst[x]
        return x

    def initial(var):
        v = promoted[var]
        if len(v.operands) > 1:
            return v.operands[1]                        # the initializer
        if var not in undef:
            undef[var] = ids.fresh()
            spec.add_undef(undef[var], _pointee_type_id(spec, v))
        return undef[var]

    kids = cfg.dominator_tree(idom)
    entry = ff.blocks[0].label
    stacks: dict[int, list] = {var: [] for var in promoted}
    # an explicit stack over the dominator tree: (label, pushed counts) entries, visited twice
    todo = [(entry, None)]
    while todo:
        label, pushed = todo.pop()
        if pushed is not None:                          # leaving the subtree
            for var, n in pushed.items():
                del stacks[var][len(stacks[var]) - n:]
            continue
        b = bmap[label]
        count: dict[int, int] = {}
        for var, phi in phis.get(label, {}).items():
            stacks[var].append(phi.result)
            count[var] = count.get(var, 0) + 1
        kept = []
        for ins in b.instrs:
            if ins.opname == "OpLoad" and ins.operands[0] in promoted:
                var = ins.operands[0]
                subst[ins.result] = stacks[var][-1] if stacks[var] else initial(var)
                continue
            if ins.opname == "OpStore" and ins.operands[0] in promoted:
                var = ins.operands[0]
                stacks[var].append(resolve(ins.operands[1]))
                count[var] = count.get(var, 0) + 1
                continue
            kept.append(ins)
        b.instrs = kept
        for s in dict.fromkeys(b.succs()):
            for var, phi in phis.get(s, {}).items():
                phi.operands += [stacks[var][-1] if stacks[var] else initial(var), label]
                phi.kinds += ["IdRef", "IdRef"]
        todo.append((label, count))
        todo.extend((k, None) for k in kids.get(label, ()))

    for label, by_var in phis.items():
        b = bmap[label]
        b.instrs = list(by_var.values()) + b.instrs
    ff.variables = [v for v in ff.variables if v.result not in promoted]
    rename(ff, subst)
    return len(promoted)


def rename(ff: FlatFunction, subst: dict):
    """Every use of an id in `subst` becomes a use of what it maps to (followed to the end);
    instructions that change are copies (the module's own instructions are shared)."""
    if not subst:
        return

    def resolve(x):
        while x in subst:
            x = subst[x]
        return x
    final = {k: resolve(k) for k in subst}
    for b in ff.blocks:
        b.instrs = [_clone(i, final) if any(x in final for x in used_ids(i)) else i for i in b.instrs]
        if any(x in final for x in used_ids(b.term)):
            b.term = _clone(b.term, final)


def _live_in(ff: FlatFunction, promoted: dict, preds) -> dict[int, set]:
    """label -> the promoted variables live on entry (loaded before any store on some path)."""
    use, defs = {}, {}
    for b in ff.blocks:
        u, d = set(), set()
        for ins in b.instrs:
            if ins.opname == "OpLoad" and ins.operands[0] in promoted and ins.operands[0] not in d:
                u.add(ins.operands[0])
            elif ins.opname == "OpStore" and ins.operands[0] in promoted:
                d.add(ins.operands[0])
        use[b.label], defs[b.label] = u, d
    live = {b.label: set(use[b.label]) for b in ff.blocks}
    work = [b.label for b in ff.blocks]
    while work:
        label = work.pop()
        for p in preds.get(label, ()):
            add = live[label] - defs[p] - live[p]
            if add:
                live[p] |= add
                work.append(p)
    return live
