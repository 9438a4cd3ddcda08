"""Structured order of the flat function's blocks: the order the scheduler runs collectives in.

When lanes wait at different collectives, the scheduler runs the earliest first, so that lanes
still inside a loop or an if reach the collectives there before the lanes that left wait at the
collective after the construct; the two groups meet again there (the SPIR-V reconvergence rule
at a merge block). The module's block order cannot say "earliest": SPIR-V only asks a block to
follow its dominators, so a loop's merge block may come before the loop's body.

This is a reverse post-order in which a header's merge block (and a loop's continue target) is
visited before its branch targets: a construct's blocks all come before its merge block, the body
of a loop before its continue construct (SPIRV-Tools calls it the structured order).
"""
from __future__ import annotations

from .. import graph
from .flatten import FlatFunction

MERGES = {"OpLoopMerge": 2, "OpSelectionMerge": 1}   # how many leading operands are block labels


def structured_order(ff: FlatFunction) -> dict[int, int]:
    """block label -> position; blocks unreachable from the entry come last in module order."""
    bmap = ff.block_map()

    def succs(b):
        m = b.merge
        out = m.operands[:MERGES[m.opname]] if m is not None else []
        return [s for s in dict.fromkeys(out + b.succs()) if s in bmap]

    rpo = graph.reverse_postorder(ff.blocks[0].label, lambda label: succs(bmap[label]))
    seen = set(rpo)
    order = rpo + [b.label for b in ff.blocks if b.label not in seen]
    return {label: i for i, label in enumerate(order)}
