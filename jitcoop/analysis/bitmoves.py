"""Bit moves: loads of float16, bfloat16 and fp8 values whose only uses are stores to memory in
the same block (a copy into shared memory, say). The bits move as they are: no conversion either
way, NaN payloads and signalling NaNs kept, as on a GPU."""
from __future__ import annotations

from ..spirv.types import Opaque, Pointer, Scalar, leaves
from .context import Context

ACCESS_CHAINS = ("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain", "OpInBoundsPtrAccessChain")


def find(ctx: Context, in_registers: set) -> set:
    """Load ids whose values move as bits. in_registers: variables not in memory (promoted,
    resident or built-in inputs)."""
    moves = set()
    users = ctx.users
    for b in ctx.ff.blocks:
        here = {id(ins) for ins in b.instrs}
        for ins in b.instrs:
            if ins.opname != "OpLoad" or not in_memory(ctx, ins.operands[0], in_registers):
                continue
            t = ctx.rtype(ins)
            if isinstance(t, (Opaque, Pointer)):
                continue
            lt = [s for s, _ in leaves(t)]
            if not lt or not all(isinstance(s, Scalar) and s.kind == "float" and s.width < 32 for s in lt):
                continue
            us = users.get(ins.result, ())
            if us and all(u.opname == "OpStore" and u.operands[1] == ins.result and id(u) in here
                          and in_memory(ctx, u.operands[0], in_registers) for u in us):
                moves.add(ins.result)
    return moves


def in_memory(ctx: Context, pid, in_registers: set) -> bool:
    """Whether a pointer reaches memory (a binding, workgroup or frame memory, a physical
    address) rather than a variable held in registers or slot rows."""
    for _ in range(64):
        d = ctx.ff.defs.get(pid)
        if d is None or d.opname not in ACCESS_CHAINS:
            break
        pid = d.operands[0]
    if pid in in_registers:
        return False
    d = ctx.ff.defs.get(pid) or ctx.m.defs.get(pid)
    if d is not None and d.opname in ("OpPhi", "OpSelect", "OpCopyObject"):
        return False             # may name a promoted variable on some path
    return True
