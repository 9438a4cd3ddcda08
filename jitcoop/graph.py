"""Graph algorithms over control-flow graphs given as a successor mapping, shared by the loader's
validation (jitcoop.spirv.validate), the flat function's passes (jitcoop.analysis.cfg) and the
test suite's module editor. Nodes are any hashable labels; successors outside the mapping are
ignored."""
from __future__ import annotations

from typing import Callable, Hashable, Iterable

Succ = Callable[[Hashable], Iterable[Hashable]]


def reverse_postorder(entry, succ: Succ, known=None) -> list:
    """The nodes reachable from entry, each before its successors (back edges aside). known, when
    given, is the set of nodes that exist; other successors are skipped."""
    post, seen = [], {entry}
    stack = [(entry, iter(succ(entry)))]
    while stack:
        node, it = stack[-1]
        nxt = next((x for x in it if x not in seen and (known is None or x in known)), None)
        if nxt is None:
            post.append(node)
            stack.pop()
        else:
            seen.add(nxt)
            stack.append((nxt, iter(succ(nxt))))
    return post[::-1]


def immediate_dominators(rpo: list, preds: dict) -> dict:
    """node -> its immediate dominator (rpo[0], the entry, maps to itself), for the nodes of rpo:
    Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast Dominance Algorithm")."""
    index = {node: i for i, node in enumerate(rpo)}
    idom = {rpo[0]: rpo[0]}

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
        for node in rpo[1:]:
            done = [p for p in preds[node] if p in idom]
            if not done:
                continue
            new = done[0]
            for p in done[1:]:
                new = meet(p, new)
            if idom.get(node) != new:
                idom[node] = new
                changed = True
    return idom


def dominates(idom: dict, a, b) -> bool:
    """Whether node a dominates node b (b reachable)."""
    while True:
        if a == b:
            return True
        up = idom.get(b)
        if up is None or up == b:
            return False
        b = up
