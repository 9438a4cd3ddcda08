"""Liveness over the flat function: which values (and promoted variables) are live into each
block. A resumed lane gets back exactly the items live into the block after its collective, and a
suspending lane saves those live into the collective's block."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..spirv.types import Opaque, Pointer
from .flatten import FlatFunction, used_ids

ACCESS_CHAINS = ("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain", "OpInBoundsPtrAccessChain")


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


@dataclass
class SpillPlan:
    """What crosses collective points, and when it moves between a lane's registers and its slots.

    - crossing: SSA values live across some collective: written to their slots where they are
      defined (a collective's result by the scheduler), reloaded by a resumed lane;
    - used_soon[label]: items a lane entering the block uses before it reaches a collective
      (what a resume must reload);
    - dirty_in[label]: promoted variables possibly stored since the lane last resumed (what a
      suspend there must save);
    - spilled_next[label]: variables the next suspend from there may save (a resume must reload
      them too: the save writes all of the variable from the lane's registers)."""
    crossing: set = field(default_factory=set)
    used_soon: dict = field(default_factory=dict)
    dirty_in: dict = field(default_factory=dict)
    spilled_next: dict = field(default_factory=dict)


def plan_spills(ff: FlatFunction, uses_defs, live_in: dict, promoted, preds: dict) -> SpillPlan:
    plan = SpillPlan()
    plan.crossing = {x for b in ff.blocks if b.collective for x in live_in[b.label] if not isinstance(x, tuple)}
    plan.used_soon = liveness(ff, uses_defs, stop=lambda b: b.collective)
    stores = {}
    for b in ff.blocks:
        st = set()
        for ins in b.instrs:
            st.update(d for d in uses_defs(ins)[1] if isinstance(d, tuple))
        stores[b.label] = st
    all_vars = {("var", v) for v in promoted}
    entry = ff.blocks[0].label
    dirty_in = {b.label: set() for b in ff.blocks}
    dirty_out = {b.label: set() for b in ff.blocks}
    changed = True
    while changed:
        changed = False
        for b in ff.blocks:
            inn = set(all_vars) if b.label == entry else set()
            for p in preds.get(b.label, ()):
                inn |= dirty_out[p]
            out = set() if b.collective else inn | stores[b.label]
            if inn != dirty_in[b.label] or out != dirty_out[b.label]:
                dirty_in[b.label], dirty_out[b.label] = inn, out
                changed = True
    plan.dirty_in = dirty_in
    # Variables the next suspend may save, from each block up to the collectives it reaches
    # first. (Maybe-dirty is a union over paths: on a path through a resume that did not reload
    # the variable, the save must still write this lane's value.)
    spill_at = {b.label: {x for x in live_in[b.label] if isinstance(x, tuple)} & dirty_in[b.label]
                for b in ff.blocks if b.collective}
    nxt = {b.label: set() for b in ff.blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(ff.blocks):
            if b.collective:
                new = spill_at[b.label]
            else:
                new = set()
                for t in b.succs():
                    new |= nxt.get(t, set())
            if new != nxt[b.label]:
                nxt[b.label] = new
                changed = True
    plan.spilled_next = nxt
    return plan


class Items:
    """Uses and definitions of an instruction as liveness items: SSA ids of runtime values held in
    registers, and ("var", id) for promoted variables. `gen` gives what the items depend on: the
    flat function, the promoted and resident variables and values, built-in inputs, hoisted
    values, the specialization and the module."""

    def __init__(self, gen):
        self.g = gen
        self.var_of = {}      # access chain result -> promoted variable
        for b in gen.ff.blocks:
            for ins in b.instrs:
                if ins.opname in ("OpAccessChain", "OpInBoundsAccessChain"):
                    base = self.var_of.get(ins.operands[0], ins.operands[0])
                    if base in gen.promoted:
                        self.var_of[ins.result] = base

    def item(self, x):
        g = self.g
        if x in g.promoted or x in g.resident or x in self.var_of:
            return None           # resident matrices are never spilled: they live in slots
        if g.spec.is_const(x) or x in g.m.defs or x in g.var_types or x in g.hoisted:
            return None
        if x not in g.ff.type_of:
            return None           # labels, functions
        t = g.spec.type(g.ff.type_of[x])
        if isinstance(t, Opaque):
            return None
        if isinstance(t, Pointer) and not self._mem_pointer(x):
            return None
        return x

    def _mem_pointer(self, x) -> bool:
        """Whether a pointer value is a runtime value: an address, or the index of a component of
        a matrix variable in slot rows (not a promoted variable, built-in or a whole matrix
        variable, whose pointers are compile-time facts)."""
        g = self.g
        d = g.ff.defs.get(x)
        if d is not None and d.opname in ACCESS_CHAINS and d.operands[0] in g.resident_vars:
            return not g.spec.is_const(d.operands[1])
        seen = 0
        while d is not None and d.opname in ACCESS_CHAINS and seen < 64:
            x = d.operands[0]
            d = g.ff.defs.get(x)
            seen += 1
        return not (x in g.promoted or x in g.resident_vars or x in g.inputs)

    def phi_value(self, x):
        i = self.item(x)
        return [i] if i is not None else []

    def __call__(self, ins):
        uses, defs = [], []
        g = self.g
        op = ins.opname
        for x in (used_ids(ins) if op != "OpPhi" else []):
            i = self.item(x)
            if i is not None:
                uses.append(i)
        if op == "OpLoad":
            v = self.var_of.get(ins.operands[0], ins.operands[0])
            if v in g.promoted:
                uses.append(("var", v))
        if op == "OpStore":
            v = self.var_of.get(ins.operands[0], ins.operands[0])
            if v in g.promoted:
                if ins.operands[0] != v:
                    uses.append(("var", v))  # a partial store keeps the rest of the variable
                defs.append(("var", v))
        if ins.result is not None:
            defs.append(ins.result)
        return uses, defs
