"""The entry point as one flat function: calls inlined, blocks split at collective points.

After `flatten()` the entry point is a list of blocks in program order with no OpFunctionCall.
Every collective instruction (barrier, subgroup operation, cooperative matrix instruction) sits
alone in its own block, so the emitter can stop a lane before it and resume the lane after it.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..errors import SpirvError
from ..spirv.module import Module
from ..spirv.reader import Instruction

ID_KINDS = ("IdRef", "IdScope", "IdMemorySemantics")


def id_operand_positions(ins: Instruction) -> list[int]:
    return [i for i, k in enumerate(ins.kinds) if k in ID_KINDS]


def used_ids(ins: Instruction) -> list[int]:
    out = [ins.operands[i] for i in id_operand_positions(ins)]
    if ins.opname == "OpExtInst":
        out = [ins.operands[0]] + [x for i, x in enumerate(ins.operands) if i >= 2 and ins.kinds[i] == "IdRef"]
    return out


def successors(term: Instruction) -> list[int]:
    op, o = term.opname, term.operands
    if op == "OpBranch":
        return [o[0]]
    if op == "OpBranchConditional":
        return [o[1], o[2]]
    if op == "OpSwitch":
        return [o[1]] + [o[i] for i in range(3, len(o), 2)]
    return []


@dataclass
class FBlock:
    label: int
    instrs: list
    term: Instruction
    origin: int = 0            # byte offset of the block's label in the module, for messages
    collective: bool = False   # holds exactly one collective instruction
    merge: Instruction | None = None   # the OpSelectionMerge / OpLoopMerge before the terminator

    def succs(self):
        return successors(self.term)

    @property
    def phis(self):
        return [i for i in self.instrs if i.opname == "OpPhi"]


@dataclass
class FlatFunction:
    blocks: list                                   # FBlock in program order, entry first
    variables: list = field(default_factory=list)  # Function-storage OpVariables, all inlined callees'
    type_of: dict = field(default_factory=dict)    # result id -> type id, for every value
    defs: dict = field(default_factory=dict)       # result id -> defining instruction
    id_bound: int = 0                              # ids from here up are free (above the module's
                                                   # bound and every fresh id this function took)

    def block_map(self):
        return {b.label: b for b in self.blocks}

    def users(self) -> dict:
        """id -> the instructions (terminators included) that use it."""
        out: dict[int, list] = {}
        for b in self.blocks:
            for ins in b.instrs + [b.term]:
                for x in used_ids(ins):
                    out.setdefault(x, []).append(ins)
        return out


def _clone(ins: Instruction, mapping: dict) -> Instruction:
    c = copy.copy(ins)
    c.operands = list(ins.operands)
    for i in id_operand_positions(ins):
        c.operands[i] = mapping.get(c.operands[i], c.operands[i])
    if c.result is not None:
        c.result = mapping.get(c.result, c.result)
    if c.result_type is not None:
        c.result_type = mapping.get(c.result_type, c.result_type)
    return c


def _synth(opname: str, operands: list, kinds: list, offset: int, result=None, result_type=None) -> Instruction:
    from ..spirv.grammar import grammar
    return Instruction(grammar().by_name[opname].opcode, opname, offset, result_type, result,
                       list(operands), list(kinds))


class _Ids:
    def __init__(self, bound):
        self.next = bound

    def fresh(self):
        self.next += 1
        return self.next - 1


def flatten(m: Module, entry_fid: int, is_collective, rewrite=None, movable=None,
            first_id: int | None = None) -> FlatFunction:
    """The entry function with its calls inlined and its blocks split at collective instructions.
    Fresh ids start at first_id (default the module's bound): the callbacks' flat functions, whose
    variables join the kernel's, take theirs above the kernel's own."""
    ids = _Ids(m.header.bound if first_id is None else first_id)
    fn = m.functions[entry_fid]
    variables = []
    blocks = []
    for b in fn.blocks:
        body = []
        for ins in b.instrs:
            if ins.opname == "OpVariable":
                variables.append(ins)
            elif ins.opname == "OpPhi":
                body.append(_clone(ins, {}))    # the passes below edit phis' predecessor labels
            else:
                body.append(ins)
        blocks.append(FBlock(b.label, body, b.term, b.offset, merge=b.merge))
    _inline_all(m, blocks, variables, ids, depth=0)
    ff = FlatFunction(blocks, variables)
    if rewrite is not None:
        rewrite(ff, ids)            # instruction-level rewrites that need fresh ids (before splitting)
    if movable is not None:
        _raise_segments(ff, is_collective, movable)
    _split_collectives(ff, ids, is_collective)
    for v in variables:
        ff.type_of[v.result] = v.result_type
        ff.defs[v.result] = v
    for b in ff.blocks:
        for ins in b.instrs:
            if ins.result is not None:
                ff.type_of[ins.result] = ins.result_type
                ff.defs[ins.result] = ins
    ff.id_bound = ids.next
    return ff


def _rename_phi_preds(blocks, succ_labels, old, new):
    bm = {b.label: b for b in blocks}
    for s in succ_labels:
        sb = bm.get(s)
        if sb is None:
            continue
        for ins in sb.instrs:
            if ins.opname != "OpPhi":
                continue
            for i in range(1, len(ins.operands), 2):
                if ins.operands[i] == old:
                    ins.operands[i] = new


def _inline_all(m: Module, blocks: list, variables: list, ids: _Ids, depth: int):
    i = 0
    while i < len(blocks):
        b = blocks[i]
        k = next((j for j, ins in enumerate(b.instrs) if ins.opname == "OpFunctionCall"), None)
        if k is None:
            i += 1
            continue
        call = b.instrs[k]
        new = _inline_call(m, b, k, call, variables, ids, blocks)
        blocks[i + 1:i + 1] = new
        # The call block now ends with a branch into the callee; continue with the next block,
        # which is the callee's entry (it may itself contain calls).
        i += 1
        if len(blocks) > 200000:
            raise SpirvError("inlining does not terminate: is a function recursive?", **call.where())


def _inline_call(m, b: FBlock, k: int, call: Instruction, variables, ids, blocks) -> list:
    callee = m.functions.get(call.operands[0])
    if callee is None:
        raise SpirvError(f"call of %{call.operands[0]}, which is not a function", **call.where())
    args = call.operands[1:]
    if len(args) != len(callee.params):
        raise SpirvError(f"call passes {len(args)} arguments; the function takes {len(callee.params)}",
                         **call.where())
    mapping = {p.result: a for p, a in zip(callee.params, args)}
    for cb in callee.blocks:
        mapping[cb.label] = ids.fresh()
        for ins in cb.instrs:
            if ins.result is not None:
                mapping[ins.result] = ids.fresh()
    cont_label = ids.fresh()
    # Split the calling block: what follows the call moves to the continuation block.
    cont = FBlock(cont_label, b.instrs[k + 1:], b.term, b.origin, merge=b.merge)
    b.merge = None
    _rename_phi_preds(blocks, b.succs(), b.label, cont_label)
    b.instrs = b.instrs[:k]
    entry_label = mapping[callee.blocks[0].label]
    b.term = _synth("OpBranch", [entry_label], ["IdRef"], call.offset)
    new_blocks = []
    returns = []
    for cb in callee.blocks:
        body = []
        for ins in cb.instrs:
            c = _clone(ins, mapping)
            if c.opname == "OpVariable":
                # Hoisted to the caller's entry; an initializer runs at each call, where it stood.
                init = c.operands[1] if len(c.operands) > 1 else None
                v = copy.copy(c)
                v.operands = c.operands[:1]
                v.kinds = c.kinds[:1]
                variables.append(v)
                if init is not None:
                    body.append(_synth("OpStore", [c.result, init], ["IdRef", "IdRef"], c.offset))
                continue
            body.append(c)
        t = cb.term
        if t.opname == "OpReturn":
            term = _synth("OpBranch", [cont_label], ["IdRef"], t.offset)
        elif t.opname == "OpReturnValue":
            returns.append((mapping.get(t.operands[0], t.operands[0]), mapping[cb.label]))
            term = _synth("OpBranch", [cont_label], ["IdRef"], t.offset)
        else:
            term = _clone(t, mapping)
        merge = _clone(cb.merge, mapping) if cb.merge is not None else None
        new_blocks.append(FBlock(mapping[cb.label], body, term, cb.offset, merge=merge))
    if call.result is not None and returns:
        ops, kinds = [], []
        for v, lbl in returns:
            ops += [v, lbl]
            kinds += ["IdRef", "IdRef"]
        phi = _synth("OpPhi", ops, kinds, call.offset, call.result, call.result_type)
        cont.instrs.insert(0, phi)
    return new_blocks + [cont]


def _raise_segments(ff: FlatFunction, is_collective, movable):
    """Within a block, a run of instructions between two collectives that are all movable (pure,
    scalar: address arithmetic, say) and use nothing the collectives before them produced moves
    up, before the block's first collective. The collectives then follow each other with no lane
    code between them, and the scheduler runs them back to back (a pass over the lanes per
    collective saved; the moved values cross the collectives in their spill slots)."""
    defs = {ins.result: ins for b in ff.blocks for ins in b.instrs if ins.result is not None}
    for b in ff.blocks:
        idx = [k for k, ins in enumerate(b.instrs) if is_collective(ins)]
        if len(idx) < 2:
            continue
        head = b.instrs[:idx[0]]
        tail = []
        pinned = set()           # results of the collectives and of what stays after them
        for k, k_next in zip(idx, idx[1:] + [len(b.instrs)]):
            coll = b.instrs[k]
            tail.append(coll)
            if coll.result is not None:
                pinned.add(coll.result)
            seg = b.instrs[k + 1:k_next]
            if k_next < len(b.instrs) and seg and all(
                    movable(ins, defs) and not (set(used_ids(ins)) & pinned) for ins in seg):
                head.extend(seg)
            else:
                tail.extend(seg)
                pinned.update(ins.result for ins in seg if ins.result is not None)
        b.instrs = head + tail


def _split_collectives(ff: FlatFunction, ids: _Ids, is_collective):
    out = []
    for b in ff.blocks:
        cur = b
        while True:
            k = next((j for j, ins in enumerate(cur.instrs)
                      if is_collective(ins) and not (cur.collective and j == 0)), None)
            if k is None:
                out.append(cur)
                break
            coll = cur.instrs[k]
            xl, rl = ids.fresh(), ids.fresh()
            rest = FBlock(rl, cur.instrs[k + 1:], cur.term, cur.origin, merge=cur.merge)
            xb = FBlock(xl, [coll], _synth("OpBranch", [rl], ["IdRef"], coll.offset), cur.origin,
                        collective=True)
            # Phis in the old successors now come from the last piece.
            _rename_phi_preds(ff.blocks + out, cur.succs(), cur.label, rl)
            cur.instrs = cur.instrs[:k]
            cur.merge = None
            cur.term = _synth("OpBranch", [xl], ["IdRef"], coll.offset)
            out.append(cur)
            out.append(xb)
            cur = rest
    ff.blocks = out
