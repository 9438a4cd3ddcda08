"""Values the same for every lane of a workgroup that cost nothing to compute early: pure
instructions on constants, workgroup built-ins, and loads from push constants and read-only uniform
buffers (with access chains into them). They are computed once per workgroup, before the lanes run,
and stay registers (never spilled at collective points)."""
from __future__ import annotations

from ..spirv.types import Opaque
from .context import Context
from .flatten import id_operand_positions

UNIFORM_BUILTINS = ("WorkgroupId", "NumWorkgroups", "WorkgroupSize", "SubgroupSize",
                    "SubgroupMaxSize", "NumSubgroups")
ACCESS_CHAINS = ("OpAccessChain", "OpInBoundsAccessChain")
# GLSL.std.450 instructions with pointer operands (results written through them): not pure.
_GLSL_OUT_PARAMS = (35, 52)       # Modf, Frexp


def find(ctx: Context, variables, pure: set) -> set:
    """The ids computed once per workgroup. `pure`: the opnames without side effects."""
    hoisted: set = set()
    v = variables
    readonly_roots = {v.push_var} | {x for x, b in v.bindings.items()
                                     if b.storage == "Uniform" and not b.writable}
    uniform_inputs = {x for x, n in v.inputs.items() if n in UNIFORM_BUILTINS}
    chain_root = {}

    def ok(x):
        return (ctx.spec.is_const(x) or x in hoisted or x in v.bindings or x == v.push_var
                or x in v.shared or x in uniform_inputs)

    for b in ctx.ff.blocks:
        for ins in b.instrs:
            op = ins.opname
            if ins.result is None:
                continue
            if op in ACCESS_CHAINS:
                base = ins.operands[0]
                root = chain_root.get(base, base)
                if (root in v.bindings or root == v.push_var or root in v.shared
                        or root in uniform_inputs) and all(ok(x) for x in ins.operands):
                    hoisted.add(ins.result)
                    chain_root[ins.result] = root
                continue
            if op == "OpLoad":
                ptr = ins.operands[0]
                root = chain_root.get(ptr, ptr)
                if (root in readonly_roots or root in uniform_inputs) and ok(ptr):
                    hoisted.add(ins.result)
                continue
            if op == "OpExtInst":
                set_name = ctx.m.ext_imports.get(ins.operands[0], "")
                is_pure = set_name == "GLSL.std.450" and ins.operands[1] not in _GLSL_OUT_PARAMS
                args = ins.operands[2:]
            elif op in pure:
                is_pure, args = True, [ins.operands[i] for i in id_operand_positions(ins)]
            else:
                continue
            if is_pure and all(ok(x) for x in args) and not isinstance(ctx.rtype(ins), Opaque):
                hoisted.add(ins.result)
    return hoisted
