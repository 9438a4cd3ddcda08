"""Straight-line blocks merged: a block that only its predecessor branches to joins it.

Unrolled loops and inlined calls leave chains of blocks that branch to the next one. Within one
block, the collective split (jitcoop.analysis.flatten) moves address arithmetic between two
cooperative instructions above the first, so that they run back to back: one stop of the lanes
instead of one per instruction. Across blocks it cannot, hence this pass, run last before the
split. It keeps every label a structured merge instruction still names as a branch target of
its own (order.py reads those), and never merges into a loop header.
"""
from __future__ import annotations

from . import cfg
from .flatten import FlatFunction, _rename_phi_preds


def merge_straight_blocks(ff: FlatFunction) -> int:
    """Merge every block into its sole predecessor where that predecessor branches only to it;
    returns how many blocks went."""
    preds = cfg.predecessors(ff)
    bmap = ff.block_map()
    named = set()                     # labels that merge instructions name: kept as blocks
    for b in ff.blocks:
        if b.merge is not None:
            named.update(x for x in b.merge.operands if isinstance(x, int) and x in bmap)
    entry = ff.blocks[0].label
    gone = set()
    for b in ff.blocks:
        if b.label in gone:
            continue
        while True:
            t = b.term
            if t.opname != "OpBranch" or (b.merge is not None and b.merge.opname == "OpLoopMerge"):
                break
            s = t.operands[0]
            nb = bmap.get(s)
            if (nb is None or s == entry or s in named or s == b.label or preds.get(s) != [b.label]
                    or nb.phis):
                break
            # (a selection header whose branch became unconditional, analysis/prune.py, has
            # nothing left to merge: its merge instruction goes)
            b.instrs = b.instrs + nb.instrs
            b.term, b.merge = nb.term, nb.merge
            _rename_phi_preds(ff.blocks, nb.succs(), s, b.label)
            for x in dict.fromkeys(nb.succs()):
                preds[x] = [b.label if p == s else p for p in preds.get(x, [])]
            gone.add(s)
    ff.blocks = [b for b in ff.blocks if b.label not in gone]
    return len(gone)
