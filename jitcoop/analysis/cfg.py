"""The flat function's control-flow graph: predecessors, dominators, dominance frontiers, natural
loops. Shared by the passes that rewrite the flat function (ssa, unroll)."""
from __future__ import annotations

from dataclasses import dataclass

from .. import graph
from .flatten import FlatFunction


def predecessors(ff: FlatFunction) -> dict[int, list[int]]:
    """label -> its predecessors' labels (each once), for every block."""
    out: dict[int, list[int]] = {b.label: [] for b in ff.blocks}
    for b in ff.blocks:
        for s in dict.fromkeys(b.succs()):
            if s in out:
                out[s].append(b.label)
    return out


def reverse_postorder(ff: FlatFunction) -> list[int]:
    """The blocks reachable from the entry, each before its successors (back edges aside)."""
    bmap = ff.block_map()
    return graph.reverse_postorder(ff.blocks[0].label, lambda label: bmap[label].succs(), bmap)


def dominators(ff: FlatFunction, preds=None) -> dict[int, int]:
    """label -> its immediate dominator (the entry maps to itself); reachable blocks only."""
    return graph.immediate_dominators(reverse_postorder(ff), preds or predecessors(ff))


dominates = graph.dominates


def dominance_order(ff: FlatFunction) -> bool:
    """Reorder the blocks so that each follows its dominators, as SPIR-V lays them out and the
    code generator defines values (a pre-order walk of the dominator tree, siblings in their
    old order; unreachable blocks last). Pruning an edge can make a block that came first
    dominated by a later one, and the SSA values the passes make are then used above their
    definition. Returns whether the order changed."""
    idom = dominators(ff)
    pos = {b.label: i for i, b in enumerate(ff.blocks)}
    if all(pos[up] <= pos[label] for label, up in idom.items()):
        return False                # already so: the order the shader gave is kept
    kids = dominator_tree(idom)
    order, stack = [], [ff.blocks[0].label]
    while stack:
        label = stack.pop()
        order.append(label)
        stack.extend(sorted(kids[label], key=pos.__getitem__, reverse=True))
    order += [b.label for b in ff.blocks if b.label not in idom]
    bmap = ff.block_map()
    ff.blocks = [bmap[label] for label in order]
    return True


def frontiers(ff: FlatFunction, idom: dict, preds=None) -> dict[int, set]:
    """label -> its dominance frontier."""
    preds = preds or predecessors(ff)
    out: dict[int, set] = {label: set() for label in idom}
    for label in idom:
        ps = [p for p in preds[label] if p in idom]
        if len(ps) < 2:
            continue
        for p in ps:
            runner = p
            while runner != idom[label]:
                out[runner].add(label)
                runner = idom[runner]
    return out


def dominator_tree(idom: dict) -> dict[int, list]:
    kids: dict[int, list] = {label: [] for label in idom}
    for label, up in idom.items():
        if up != label:
            kids[up].append(label)
    return kids


@dataclass
class Loop:
    header: int
    body: set             # the header and every block that reaches a back edge without it
    latches: list         # sources of the back edges
    merge: int | None     # the OpLoopMerge's merge block, when the header has one


def natural_loops(ff: FlatFunction, idom: dict, preds=None) -> list[Loop]:
    """Each header's natural loop (back edges: an edge to a block that dominates its source),
    innermost first."""
    preds = preds or predecessors(ff)
    bmap = ff.block_map()
    loops = []
    for h in idom:
        latches = [p for p in preds[h] if p in idom and dominates(idom, h, p)]
        if not latches:
            continue
        body, todo = {h}, list(latches)
        while todo:
            x = todo.pop()
            if x in body:
                continue
            body.add(x)
            todo.extend(p for p in preds[x] if p in idom)
        m = bmap[h].merge
        loops.append(Loop(h, body, latches, m.operands[0] if m is not None and m.opname == "OpLoopMerge" else None))
    loops.sort(key=lambda lp: len(lp.body))
    return loops
