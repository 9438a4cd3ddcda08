"""Full unrolling of short counted loops around cooperative instructions.

The common way to write a tiled GEMM keeps its matrices in arrays and walks them with loops:
`for (i < 2) coopMatLoad(ma[i], ...)`, `for (i < 2) for (j < 2) acc[i][j] = coopMatMulAdd(...)`.
Each trip of such a loop is a separate stop of every lane at a cooperative instruction, with the
loop's bookkeeping and a copy of the matrix in and out of the array in between, lane by lane.
Unrolled, the array indices are constants, the arrays split into separate matrices
(jitcoop.analysis.sroa) that live in their scheduler rows as SSA values (jitcoop.analysis.ssa),
and consecutive cooperative instructions run back to back with no lane code between them.

A loop is unrolled when it is innermost, holds a cooperative instruction or makes or addresses a
cooperative matrix, has an
induction variable (a phi of its header stepped by a constant) compared against a constant, so
that its trip count is known here (1 to MAX_TRIPS), and leaves only through that comparison. Its
blocks are copied once per trip with the counter a constant in each copy; the header's test
runs once more, after the last trip, for what the code after the loop uses of it.
"""
from __future__ import annotations

from ..spirv.specialize import wrap_int
from ..spirv.types import CoopMat, Pointer, Scalar
from . import cfg
from .flatten import FBlock, FlatFunction, _clone, _rename_phi_preds, _synth
from .ssa import rename

MAX_TRIPS = 8
MAX_COPIED = 8000          # instructions a loop's copies may hold together

_CMP = {
    "OpULessThan": lambda a, b: a < b, "OpULessThanEqual": lambda a, b: a <= b,
    "OpUGreaterThan": lambda a, b: a > b, "OpUGreaterThanEqual": lambda a, b: a >= b,
    "OpSLessThan": lambda a, b: a < b, "OpSLessThanEqual": lambda a, b: a <= b,
    "OpSGreaterThan": lambda a, b: a > b, "OpSGreaterThanEqual": lambda a, b: a >= b,
    "OpIEqual": lambda a, b: a == b, "OpINotEqual": lambda a, b: a != b,
}


def unroll_loops(ff: FlatFunction, spec, ids, is_collective) -> int:
    """Unroll every eligible loop, innermost first; returns how many were."""
    done = 0
    while True:
        preds = cfg.predecessors(ff)
        idom = cfg.dominators(ff, preds)
        loops = cfg.natural_loops(ff, idom, preds)
        headers = {lp.header for lp in loops}
        for lp in loops:
            if any(h in lp.body for h in headers - {lp.header}):
                continue                                 # not innermost
            plan = _plan(ff, spec, lp, preds, is_collective)
            if plan is not None:
                _unroll(ff, spec, ids, lp, plan, preds)
                done += 1
                break
        else:
            return done


class _Plan:
    def __init__(self, chain, exit_block, stay, iv, values, trips):
        self.chain = chain              # header, then the blocks it falls through to the exit test
        self.exit_block = exit_block    # the block whose conditional branch leaves the loop
        self.stay = stay                # its target inside the loop
        self.iv = iv                    # the counter's phi
        self.values = values            # the counter's value on each trip
        self.trips = trips


def _touches_matrices(spec, ins, is_collective) -> bool:
    """A cooperative instruction, or one that makes or addresses a cooperative matrix (the
    loop that fills an array of accumulators has no cooperative instruction, but must be
    unrolled for the array to split)."""
    if is_collective(ins):
        return True
    if ins.result_type is None:
        return False
    t = spec.type(ins.result_type)
    return isinstance(t, CoopMat) or (isinstance(t, Pointer) and isinstance(t.pointee, CoopMat))


def _plan(ff, spec, lp: cfg.Loop, preds, is_collective):
    bmap = ff.block_map()
    h = bmap[lp.header]
    if lp.merge is None or len(lp.latches) != 1 or lp.merge in lp.body:
        return None
    blocks = [bmap[x] for x in lp.body]
    if not any(_touches_matrices(spec, i, is_collective) for b in blocks for i in b.instrs):
        return None
    if sum(len(b.instrs) + 1 for b in blocks) * MAX_TRIPS > MAX_COPIED:
        return None
    # the only way out: one conditional branch to the merge block, in the header's chain
    exits = [(b.label, s) for b in blocks for s in b.succs() if s not in lp.body]
    if any(not b.succs() for b in blocks) or len(exits) != 1 or exits[0][1] != lp.merge:
        return None
    chain = [h]
    while chain[-1].label != exits[0][0]:
        t = chain[-1].term
        if t.opname != "OpBranch" or t.operands[0] == lp.header or len(preds[t.operands[0]]) != 1:
            return None
        chain.append(bmap[t.operands[0]])
    xb = chain[-1]
    if xb.term.opname != "OpBranchConditional":
        return None
    cond_id, t_true, t_false = xb.term.operands[:3]
    stay_on = t_true in lp.body
    stay = t_true if stay_on else t_false
    cond = next((i for b in chain for i in b.instrs if i.result == cond_id), None)
    if cond is None or cond.opname not in _CMP:
        return None
    # the counter: a header phi, a constant on entry, itself plus a constant on the back edge
    latch = lp.latches[0]
    for k, other in ((0, 1), (1, 0)):
        iv = next((p for p in h.phis if p.result == cond.operands[k]), None)
        bound = spec.known_int(cond.operands[other])
        if iv is not None and bound is not None:
            break
    else:
        return None
    pairs = dict(zip(iv.operands[1::2], iv.operands[0::2]))     # label -> value
    entries = [lbl for lbl in pairs if lbl not in lp.body]
    if len(entries) != 1 or latch not in pairs:
        return None
    start = spec.known_int(pairs[entries[0]])
    step_ins = next((i for b in blocks for i in b.instrs if i.result == pairs[latch]), None)
    if start is None or step_ins is None or step_ins.opname != "OpIAdd" or iv.result not in step_ins.operands:
        return None
    step = spec.known_int(step_ins.operands[1] if step_ins.operands[0] == iv.result else step_ins.operands[0])
    t = spec.type(iv.result_type)
    if step is None or not isinstance(t, Scalar) or t.kind != "int":
        return None
    signed = cond.opname.startswith("OpS")
    mask = (1 << t.width) - 1

    def as_int(v):
        v &= mask
        return v - (1 << t.width) if signed and v >> (t.width - 1) else v
    values, v = [], start & mask
    while True:
        a, b = (as_int(v), as_int(bound)) if k == 0 else (as_int(bound), as_int(v))
        if _CMP[cond.opname](a, b) != stay_on:
            break
        values.append(v)
        if len(values) > MAX_TRIPS:
            return None
        v = (v + step) & mask
    if not values:
        return None
    values.append(v)                                    # the counter at the final test
    return _Plan(chain, xb.label, stay, iv, values, len(values) - 1)


def _unroll(ff: FlatFunction, spec, ids, lp: cfg.Loop, plan: _Plan, preds):
    bmap = ff.block_map()
    h = bmap[lp.header]
    order = [b for b in ff.blocks if b.label in lp.body]           # the loop's blocks, in order
    chain_labels = {b.label for b in plan.chain}
    latch = lp.latches[0]
    entry_preds = [p for p in preds[lp.header] if p not in lp.body]
    copies = []                                                    # (map, blocks) per copy
    prev = None
    for t in range(plan.trips + 1):
        final = t == plan.trips
        part = [b for b in order if b.label in chain_labels] if final else order
        mapping = {}
        for b in part:
            mapping[b.label] = ids.fresh()
            for ins in b.instrs:
                # every result gets a fresh id, but the header's phis (given values below)
                if ins.result is not None and not (ins.opname == "OpPhi" and b.label == lp.header):
                    mapping[ins.result] = ids.fresh()
        # the header's phis: the counter a constant; the others what the last trip left
        head_phis = []
        for phi in h.phis:
            pairs = list(zip(phi.operands[0::2], phi.operands[1::2]))
            if phi is plan.iv:
                c = ids.fresh()
                spec.add_constant(c, phi.result_type, wrap_int(plan.values[t], spec.type(phi.result_type)))
                mapping[phi.result] = c
            elif prev is not None:
                v = dict((lbl, val) for val, lbl in pairs)[latch]
                mapping[phi.result] = prev.get(v, v)
            else:
                ins = [(val, lbl) for val, lbl in pairs if lbl not in lp.body]
                if len(ins) == 1:
                    mapping[phi.result] = ins[0][0]
                else:
                    mapping[phi.result] = ids.fresh()
                    head_phis.append(_synth("OpPhi", [x for pair in ins for x in pair], ["IdRef"] * 2 * len(ins),
                                            phi.offset, mapping[phi.result], phi.result_type))
        new = []
        for b in part:
            instrs = [_clone(i, mapping) for i in b.instrs if not (b.label == lp.header and i.opname == "OpPhi")]
            if b.label == lp.header:
                instrs = head_phis + instrs
            term = _clone(b.term, mapping)
            if b.label == plan.exit_block:
                target = lp.merge if final else mapping[plan.stay]
                term = _synth("OpBranch", [target], ["IdRef"], b.term.offset)
            merge = None
            if b.merge is not None and b.label != lp.header:
                merge = _clone(b.merge, mapping)
            new.append(FBlock(mapping[b.label], instrs, term, b.origin, b.collective, merge))
        copies.append((mapping, new))
        prev = mapping
    # the back edge of trip t goes to the header of trip t + 1
    for t in range(plan.trips):
        mapping, blocks = copies[t]
        nxt = copies[t + 1][0][lp.header]
        for b in blocks:
            if b.label == mapping[latch]:
                b.term = _retarget(b.term, mapping[lp.header], nxt)
    # the way in goes to the first copy; the merge block's phis come from the final test
    first = copies[0][0][lp.header]
    last_map = copies[-1][0]
    for b in ff.blocks:
        if b.label in entry_preds:
            b.term = _retarget(b.term, lp.header, first)
            if b.merge is not None:
                b.merge = _retarget(b.merge, lp.header, first)
    _rename_phi_preds(ff.blocks, [lp.merge], plan.exit_block, last_map[plan.exit_block])
    # after the loop, what the header's chain defined is the final test's
    outside = {k: v for k, v in last_map.items()
               if k not in chain_labels and any(i.result == k for b in plan.chain for i in b.instrs)}
    at = ff.blocks.index(order[0])
    rest = [b for b in ff.blocks if b.label not in lp.body]
    ff.blocks = rest[:at] + [b for _, blocks in copies for b in blocks] + rest[at:]
    rename(ff, outside)


def _retarget(ins, old, new):
    """A terminator or merge instruction with label `old` replaced by `new`."""
    return _clone(ins, {old: new})


