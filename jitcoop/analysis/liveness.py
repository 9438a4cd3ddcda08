"""Liveness over the flat function: which values (and promoted variables) are live into each
block. A resumed lane gets back exactly the items live into the block after its collective, and a
suspending lane saves those live into the collective's block."""
from __future__ import annotations

from .flatten import FlatFunction


def liveness(ff: FlatFunction, uses_defs, stop=None) -> dict:
    """live-in sets per block label. `uses_defs(ins)` gives (used names, defined names) of an
    instruction, in the emitter's terms (SSA ids and promoted variables)."""
    info = {}
    phi_uses = {b.label: set() for b in ff.blocks}     # values a block's successors' phis read from it
    for b in ff.blocks:
        for ins in b.instrs:
            if ins.opname == "OpPhi":
                for i in range(0, len(ins.operands), 2):
                    pred = ins.operands[i + 1]
                    if pred in phi_uses:
                        phi_uses[pred].update(uses_defs.phi_value(ins.operands[i]))
    for b in ff.blocks:
        gen, kill = set(), set()
        if stop is not None and stop(b):
            info[b.label] = (gen, kill)
            continue
        for ins in b.instrs:
            if ins.opname == "OpPhi":
                kill.add(ins.result)
                continue
            u, d = uses_defs(ins)
            gen.update(x for x in u if x not in kill)
            kill.update(d)
        u, _ = uses_defs(b.term)
        gen.update(x for x in u if x not in kill)
        gen.update(x for x in phi_uses[b.label] if x not in kill)
        info[b.label] = (gen, kill)
    live_in = {b.label: set() for b in ff.blocks}
    changed = True
    order = list(reversed(ff.blocks))
    while changed:
        changed = False
        for b in order:
            out = set()
            if stop is not None and stop(b):
                live_in[b.label] = set()
                continue
            for s in b.succs():
                out |= live_in.get(s, set())
            gen, kill = info[b.label]
            new = gen | (out - kill)
            if new != live_in[b.label]:
                live_in[b.label] = new
                changed = True
    return live_in
