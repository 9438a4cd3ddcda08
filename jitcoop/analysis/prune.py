"""Dead arms of branches on constants, removed from the flat function before code generation.

Specialization constants choose code paths: llama.cpp's matmul shaders branch on the weight type
and on tile-size switches, so every decode function and every path of every variant is in the
module. A branch whose condition is a constant once specialized keeps only its live arm here, and
the blocks no longer reachable from the entry are dropped, so that the dead arms' cooperative
instructions, callbacks and tables never reach LLVM (where they only cost compile time: on a
production quantized matmul, a third of it).
"""
from __future__ import annotations

from ..spirv.reader import Instruction
from . import cfg
from .flatten import FlatFunction, _synth


def _constant(spec, vid):
    """A branch condition's or switch selector's value when it is a constant, else None."""
    v = spec.known(vid)
    return v[0] if v is not None and len(v) == 1 else None


def _live_target(term: Instruction, spec):
    """The one label a terminator on a constant goes to, or None."""
    o = term.operands
    if term.opname == "OpBranchConditional" and o[1] != o[2]:
        c = _constant(spec, o[0])
        return None if c is None else (o[1] if c else o[2])
    if term.opname == "OpSwitch":
        c = _constant(spec, o[0])
        if c is None:
            return None
        for i in range(2, len(o) - 1, 2):
            if o[i] == c:
                return o[i + 1]
        return o[1]
    return None


def dead_arms(ff: FlatFunction, spec) -> int:
    """Branches on constants become unconditional; unreachable blocks go, with the phi
    entries of the edges that went. Returns how many blocks were dropped."""
    for b in ff.blocks:
        live = _live_target(b.term, spec)
        if live is not None:
            b.term = _synth("OpBranch", [live], ["IdRef"], b.term.offset)
    seen = set(cfg.reverse_postorder(ff))
    dropped = len(ff.blocks) - len(seen)
    ff.blocks = [b for b in ff.blocks if b.label in seen]
    edges = {(b.label, s) for b in ff.blocks for s in b.succs()}
    for b in ff.blocks:
        for phi in b.phis:
            pairs = [(phi.operands[i], phi.operands[i + 1]) for i in range(0, len(phi.operands), 2)]
            kept = [(v, p) for v, p in pairs if (p, b.label) in edges]
            if len(kept) != len(pairs):
                phi.operands = [x for pair in kept for x in pair]
                phi.kinds = phi.kinds[:len(phi.operands)]
    return dropped
