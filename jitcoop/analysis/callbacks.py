"""Callbacks: the SPIR-V functions cooperative instructions call per element (DecodeFunc,
DecodeVectorFunc, a per-element Func, a reduction's CombineFunc).

A callback runs for one element, outside any lane loop, so it must not contain tangled or
invocation-level instructions. What the kernel must know of it: the Private variables it reads
(they stay in memory, where the callback finds the calling lane's values) and its own Function
variables that cannot be registers (lookup tables indexed dynamically: the kernel reserves frame
space for them).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import SpirvError
from .context import Context
from .flatten import FlatFunction, flatten
from .variables import check_value_sizes, promotable

# Instructions a callback cannot run on its own, besides every collective one.
FORBIDDEN = ("OpControlBarrier", "OpKill", "OpTerminateInvocation", "OpEmitVertex")


@dataclass
class CallbackInfo:
    fid: int
    role: str                     # "DecodeFunc", "DecodeVectorFunc", "PerElementOp", "CombineFunc"
    ff: FlatFunction
    ret: object                   # return type
    params: list                  # parameter ids
    param_types: list
    private_reads: list           # Private variables it uses
    promoted: set                 # its Function variables held in registers
    memory_vars: list             # its Function variables in the calling lane's frame
    var_types: dict               # its Function variables' pointer types


def find(ctx: Context, callback_operands, collective: set, private_vars: list) -> dict:
    """{fid: CallbackInfo} of every function a cooperative instruction of the flat function calls.
    callback_operands(ins) -> [(fid, role)]."""
    out: dict = {}
    bound = ctx.ff.id_bound       # the ids each callback makes (inlined calls) stay distinct
    for b in ctx.ff.blocks:
        for ins in b.instrs:
            for fid, role in callback_operands(ins):
                if fid not in out:
                    out[fid] = _analyse(ctx, fid, role, collective, private_vars, bound)
                    bound = out[fid].ff.id_bound
    return out


def _analyse(ctx: Context, fid: int, role: str, collective: set, private_vars: list, first_id) -> CallbackInfo:
    m, spec = ctx.m, ctx.spec
    fn = m.functions.get(fid)
    if fn is None:
        raise SpirvError(f"the {role} %{fid} is not a function")
    ff = flatten(m, fid, lambda ins: False, first_id=first_id)
    check_value_sizes(ff, spec)
    for p in fn.params:
        ff.type_of[p.result] = p.result_type
        ff.defs[p.result] = p
    for b in ff.blocks:
        for ins in b.instrs + [b.term]:
            if ins.opname in collective or ins.opname in FORBIDDEN:
                raise SpirvError(f"a {role} must not contain {ins.opname} (a tangled or "
                                 "invocation-level instruction): it runs per element", **ins.where())
    sub = Context(m, spec, ff, ctx.options)
    var_types = {v.result: spec.type(v.result_type) for v in ff.variables}
    promoted = {v.result for v in ff.variables if promotable(sub, var_types, v.result)}
    return CallbackInfo(fid, role, ff, spec.type(fn.result_type), [p.result for p in fn.params],
                        [spec.type(p.result_type) for p in fn.params],
                        sorted(v for v in private_vars if v in sub.users), promoted,
                        [v.result for v in ff.variables if v.result not in promoted], var_types)
