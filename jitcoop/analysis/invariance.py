"""Whether the invocations of a workgroup cannot differ: lane invariance.

A module is *lane-invariant* when every invocation of a workgroup computes the same values in the
same order: it reads no built-in that differs between invocations (LocalInvocationId,
SubgroupLocalInvocationId, GlobalInvocationId, SubgroupId, ...), performs no atomic (n invocations
adding one is not one invocation adding one), calls no subgroup or group operation (an election
or a lane index would tell them apart), and never looks into a lane's fragment of a cooperative
matrix (analysis/lanes.py: fragments are the one thing invocations hold differently). Loads from
memory are the same in every invocation then, by induction over the program: every store before
them wrote the same value at the same address in every invocation.

The plainest cooperative GEMM is like that: the subgroup's tile comes from gl_WorkGroupID, its
loop counter and addresses are the same in every lane, and only the cooperative instructions
touch the matrices. The code generator then runs one invocation's code per workgroup instead of
W copies of it (codegen/emitter.py): the scheduler hands that invocation's operands to every lane
of a collective, and lane code on matrices (conversions, element-wise arithmetic, copies) runs
over every lane's fragment, which needs each matrix value in slot rows and each matrix variable
loaded and stored whole.
"""
from __future__ import annotations

from ..spirv.types import CoopMat, holds_matrix
from .context import Context
from .uniform import UNIFORM_BUILTINS

# Opcode prefixes whose effect depends on how many invocations run them, or which tell them apart.
VARYING_PREFIXES = ("OpAtomic", "OpGroup", "OpSubgroup")


def varying(ctx: Context, variables, observed: str | None, whole_matrix_vars: set,
            callback_private_reads: set) -> str | None:
    """Why the workgroup's invocations may differ (a phrase naming the first reason, after "the
    shader": "reads the SubgroupId built-in", "has OpAtomicIAdd at byte 812"), or None when
    the flat function is lane-invariant. `observed`: analysis/lanes.py's finding for the module;
    `whole_matrix_vars`: the matrix variables only loaded and stored whole (analysis/matrices.py);
    `callback_private_reads`: the Private variables callbacks read (analysis/callbacks.py), which
    the collective calling them reads in every lane's frame."""
    users = ctx.users
    if callback_private_reads:
        return f"has a callback reading Private variable %{min(callback_private_reads)}"
    for var, name in variables.inputs.items():
        if name not in UNIFORM_BUILTINS and users.get(var):
            return f"reads the {name or 'Input'} built-in"
    if observed is not None:
        return f"looks into a lane's fragment ({observed})"
    for b in ctx.ff.blocks:
        for ins in b.instrs:
            if ins.opname.startswith(VARYING_PREFIXES):
                return f"has {ins.opname} at byte {ins.offset}"
            if ins.result_type is not None and holds_matrix(ctx.rtype(ins)):
                return f"makes a composite holding matrices ({ins.opname} at byte {ins.offset})"
    local = set(variables.private_vars) | {x.result for x in ctx.ff.variables}
    for v in local:
        t = variables.var_types[v].pointee
        if (isinstance(t, CoopMat) and v not in whole_matrix_vars) or holds_matrix(t):
            return f"has matrix variable %{v}, not only loaded and stored whole"
    return None
