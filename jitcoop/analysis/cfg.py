"""The flat function's control-flow graph: predecessors, dominators, dominance frontiers, natural
loops. Shared by the passes that rewrite the flat function (ssa, unroll)."""
from __future__ import annotations

from dataclasses import dataclass

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
    entry = ff.blocks[0].label
    post, seen = [], {entry}
    stack = [(entry, iter(bmap[entry].succs()))]
    while stack:
        label, it = stack[-1]
        s = next((x for x in it if x not in seen and x in bmap), None)
        if s is None:
            post.append(label)
            stack.pop()
        else:
            seen.add(s)
            stack.append((s, iter(bmap[s].succs())))
    return post[::-1]


def dominators(ff: FlatFunction, preds=None) -> dict[int, int]:
    """label -> its immediate dominator (the entry maps to itself); reachable blocks only.
    Cooper, Harvey and Kennedy's iterative algorithm over the reverse post-order."""
    preds = preds or predecessors(ff)
    rpo = reverse_postorder(ff)
    index = {label: i for i, label in enumerate(rpo)}
    entry = rpo[0]
    idom = {entry: entry}

    def meet(a, b):
        while a != b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for label in rpo[1:]:
            done = [p for p in preds[label] if p in idom]
            if not done:
                continue
            new = done[0]
            for p in done[1:]:
                new = meet(p, new)
            if idom.get(label) != new:
                idom[label] = new
                changed = True
    return idom


def dominates(idom: dict, a: int, b: int) -> bool:
    """Whether block a dominates block b (both reachable)."""
    while True:
        if a == b:
            return True
        up = idom.get(b)
        if up is None or up == b:
            return False
        b = up


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
