"""Loops that cannot spin: bounds on trip counts, for leaving out cancel checks.

Every loop back edge of lane code checks the cancel flag, so that a shader that spins can be
stopped (timeout, Ctrl-C, another thread's failure). In a short counted loop, such as a shared
memory staging loop `for (uint e = lid; e < 1024; e += 128)`, that check is a volatile load, a
compare and a branch per iteration, and it keeps LLVM from unrolling or vectorizing the loop. A
loop whose trip count is bounded by a small constant cannot spin, so it needs no check: the check
on the enclosing loop's back edge, or the one at the start of every workgroup, comes soon enough.
`unchecked_headers` finds the loop headers whose back edges need none.
"""
from __future__ import annotations

from ..spirv.types import Scalar, Vector

# Loops that provably end within this many iterations skip the cancel check.
SHORT_TRIPS = 1 << 16

# The loop goes on while `iv <op> bound`: (comparison, is the iv its first operand) -> the
# relation kept, as "<" or "<=", when the iv is on the left.
_LEFT = {"OpULessThan": "<", "OpULessThanEqual": "<=", "OpSLessThan": "<", "OpSLessThanEqual": "<="}
_RIGHT = {"OpUGreaterThan": "<", "OpUGreaterThanEqual": "<=", "OpSGreaterThan": "<",
          "OpSGreaterThanEqual": "<="}
# The negation of a comparison that ends the loop when true: `not (iv >= b)` is `iv < b`.
_LEFT_EXIT = {"OpUGreaterThanEqual": "<", "OpUGreaterThan": "<=", "OpSGreaterThanEqual": "<",
              "OpSGreaterThan": "<="}
_RIGHT_EXIT = {"OpULessThanEqual": "<", "OpULessThan": "<=", "OpSLessThanEqual": "<",
               "OpSLessThan": "<="}


def trip_bound(header, on_true: bool, latches: set, defs: dict, const_of, type_of, term=None) -> int | None:
    """An upper bound on the iterations of the simple loop headed by `header`, whose branch
    stays in the loop when its condition is `on_true`, entered again from the blocks
    `latches`; None when no small bound follows from the code.

    Recognised: an induction variable `iv` (an OpPhi of the header) stepped by a positive
    constant on the back edge, `iv = iv + s`, and a condition comparing it against a constant
    bound, unsigned, or signed with constant start values. The bound also requires that the
    step cannot wrap past the largest value that passes the test.
    const_of(id) gives an integer constant's value or None; type_of(id) its type. `term`: the
    conditional branch when it ends a block the header runs straight into, not the header."""
    cond = defs.get((term or header.term).operands[0])
    if cond is None or len(cond.operands) != 2:
        return None
    op = cond.opname
    tables = (_LEFT, _RIGHT) if on_true else (_LEFT_EXIT, _RIGHT_EXIT)
    if op in tables[0]:
        iv, bound, rel = cond.operands[0], cond.operands[1], tables[0][op]
    elif op in tables[1]:
        iv, bound, rel = cond.operands[1], cond.operands[0], tables[1][op]
    else:
        return None
    phi = next((p for p in header.phis if p.result == iv), None)
    t = type_of(iv)
    c = const_of(bound)
    if phi is None or c is None or not isinstance(t, Scalar) or t.kind != "int":
        return None
    signed = op[2] == "S"
    w = t.width
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    c = _as(c, w, signed)
    last = c - 1 if rel == "<" else c          # the largest iv value that stays in the loop
    starts = []
    step = None
    for value, label in zip(phi.operands[0::2], phi.operands[1::2]):
        if label in latches:
            s = _step(defs.get(value), iv, const_of)
            if s is None or (step is not None and _as(s, w, signed) != step):
                return None
            step = _as(s, w, signed)
        else:
            starts.append(value)
    if step is None or step <= 0 or last + step > hi:
        return None
    if signed:
        first = [const_of(v) for v in starts]
        if not first or any(f is None for f in first):
            return None
        lo = min(_as(f, w, True) for f in first)
    return max(0, (last - lo) // step + 1)


def _step(ins, iv: int, const_of):
    """s when ins is `iv + s` with s an integer constant."""
    if ins is None or ins.opname != "OpIAdd":
        return None
    a, b = ins.operands
    if a == iv:
        return const_of(b)
    if b == iv:
        return const_of(a)
    return None


def _as(v: int, w: int, signed: bool) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if signed and v >> (w - 1) else v


def unchecked_headers(ctx) -> set:
    """Labels of loop headers whose every back edge may go without a cancel check: natural loops
    (a header H and a back edge from a block H dominates: here, a block after H in the flat
    function's order, which puts a block after those that dominate it) whose header ends in a
    conditional branch with one arm in the loop and one out, bounded by trip_bound. The branch
    may end a chain of blocks the header runs straight into (glslang's header with OpLoopMerge
    branching to the block that tests the condition)."""
    ff = ctx.ff

    def const_of(x):
        """An integer constant, or a component of a constant vector (gl_WorkGroupSize.x)."""
        c = ctx.int_const(x)
        ins = ff.defs.get(x)
        if c is None and ins is not None and ins.opname == "OpCompositeExtract" and len(ins.operands) == 2 \
                and ctx.spec.is_const(ins.operands[0]):
            t = ctx.value_type(ins.operands[0])
            if isinstance(t, Vector) and isinstance(t.elem, Scalar) and t.elem.kind == "int":
                c = int(ctx.spec.const(ins.operands[0])[ins.operands[1]])
        return c

    order = {b.label: i for i, b in enumerate(ff.blocks)}
    bmap, preds = ctx.bmap, ctx.preds
    out = set()
    for h in ff.blocks:
        latches = [p for p in preds.get(h.label, ()) if order.get(p, -1) >= order[h.label]]
        if not latches:
            continue
        tb = h
        while tb.term.opname == "OpBranch":
            nxt = bmap.get(tb.term.operands[0])
            if nxt is None or nxt is h or preds.get(nxt.label) != [tb.label]:
                break
            tb = nxt
        if tb.term.opname != "OpBranchConditional":
            continue
        body = {h.label}
        todo = list(latches)
        while todo:
            x = todo.pop()
            if x in body or x not in bmap:
                continue
            body.add(x)
            todo.extend(preds.get(x, ()))
        t, f = tb.term.operands[1:3]
        if (t in body) == (f in body):
            continue
        bound = trip_bound(h, t in body, set(latches), ff.defs, const_of, ctx.value_type, tb.term)
        if bound is not None and bound <= SHORT_TRIPS:
            out.add(h.label)
    return out
