"""Private variables only the kernel's own code uses, made Function variables (private to local).

A Private variable lives as long as its invocation. Once every call is inlined (analysis/flatten)
the flat function is all the code an invocation runs, except the callbacks that cooperative
instructions call per element (DecodeFunc, a per-element Func, a reduction's CombineFunc: they
run outside the lane loop and find the calling lane's Private variables in its frame). A Private
variable that no callback, nor any function a callback calls, names is a Function variable of the
flat function in all but its storage class: moved among the flat function's variables (its
initializer stored at the entry), the passes after this one (ssa, unroll, sroa) treat it as a
local. `coopmat<...> acc[2][2]` declared at global scope and used by helper functions is then split
and promoted like a local one; left Private, it stayed an array of matrices in every lane's frame,
copied by every lane (a subgroup GEMM 3.6x slower than its `spirv-opt -O` output, whose
private-to-local pass did the same).
"""
from __future__ import annotations

from ..spirv.module import Module
from .flatten import FlatFunction, _synth

FUNCTION = 7                    # StorageClass Function


def _callback_functions(m: Module) -> set:
    """The functions named anywhere but as a call's callee or an entry point (cooperative
    instructions' callbacks), and every function they call."""
    fids = set(m.functions)
    named = set()
    for fn in m.functions.values():
        for b in fn.blocks:
            for ins in b.instrs:
                skip = 1 if ins.opname == "OpFunctionCall" else 0
                named.update(x for x, k in list(zip(ins.operands, ins.kinds))[skip:] if k == "IdRef" and x in fids)
    work, seen = list(named), set(named)
    while work:
        for b in m.functions[work.pop()].blocks:
            for ins in b.instrs:
                if ins.opname == "OpFunctionCall" and ins.operands[0] in fids and ins.operands[0] not in seen:
                    seen.add(ins.operands[0])
                    work.append(ins.operands[0])
    return seen


def to_local(ff: FlatFunction, m: Module, spec) -> set:
    """Move every Private variable the flat function uses and no callback can reach into its
    variables (the same id: errors name the module's own variable); returns their ids.
    analysis/variables.py then counts them as the flat function's."""
    users = ff.users()
    private = [ins for ins in m.global_order if ins.opname == "OpVariable"
               and spec.type(ins.result_type).storage == "Private" and users.get(ins.result)]
    if not private:
        return set()
    reached = set()
    for fid in _callback_functions(m):
        for b in m.functions[fid].blocks:
            for ins in b.instrs:
                reached.update(ins.operands)
    moved, inits = set(), []
    for v in private:
        if v.result in reached:
            continue
        ff.variables.append(_synth("OpVariable", [FUNCTION], ["StorageClass"], v.offset, v.result, v.result_type))
        if len(v.operands) > 1:
            inits.append(_synth("OpStore", [v.result, v.operands[1]], ["IdRef", "IdRef"], v.offset))
        moved.add(v.result)
    ff.blocks[0].instrs[:0] = inits
    return moved
