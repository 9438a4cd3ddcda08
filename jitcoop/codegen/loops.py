"""Simple loops (the `while` loops of lane code): bounds on their trip counts, and their
invariants kept in registers (pin_invariants, below).

Every loop back edge of lane code checks the cancel flag, so that a shader that spins can be
stopped (timeout, Ctrl-C, another thread's failure). In a short counted loop, such as a shared
memory staging loop `for (uint e = lid; e < 1024; e += 128)`, that check is a load, a compare and
a branch per iteration out of some twenty instructions; measured on the KHR GEMM, dropping it
from the staging loop took 62 ms to 57 ms. A loop whose trip count is bounded by a small
constant cannot spin, so it needs no check: the check on the enclosing loop's back edge, or the
one at the start of every workgroup, comes soon enough.
"""
from __future__ import annotations

import re

from ..spirv.types import Scalar

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


def trip_bound(header, on_true: bool, latches: set, defs: dict, const_of, type_of) -> int | None:
    """An upper bound on the iterations of the simple loop headed by `header`, whose branch
    stays in the loop when its condition is `on_true`, entered again from the blocks
    `latches`; None when no small bound follows from the code.

    Recognised: an induction variable `iv` (an OpPhi of the header) stepped by a positive
    constant on the back edge, `iv = iv + s`, and a condition comparing it against a constant
    bound, unsigned, or signed with constant start values. The bound also requires that the
    step cannot wrap past the largest value that passes the test.
    const_of(id) gives an integer constant's value or None; type_of(id) its type."""
    cond = defs.get(header.term.operands[0])
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


# -- invariants in registers ----------------------------------------------------------------------
# A simple loop sits deep inside the lane loop of a large kernel function, and LLVM's register
# allocator gives the values it reads from outside (a buffer's address and bounds, a push
# constant, a value computed before the loop) one location for their whole, long, live range:
# a stack slot, reloaded in every iteration (the GEMM's staging loop read six of its seven
# invariants from the stack). Re-binding each through `fresh` just before the `while` gives LLVM
# new values whose live range is the loop alone, and it keeps them in registers: the staging
# loop went from 17 to 11 instructions and the whole GEMM from 50.3 to 46.7 ms.

PINNED = 8          # at most this many per loop (more would only move the spills into it)
_NAME = re.compile(r"[A-Za-z_]\w*")
_ASSIGNED = re.compile(r"(?:^|; )(\w+) = ")


def pin_invariants(loop: list[str], indent: str, pinnable) -> list[str]:
    """The lines of a loop (its `while` first), preceded by `r_x = fresh(x)` for the values x
    it reads but does not assign, most used first, and reading r_x instead. pinnable(name):
    whether the name holds a 32- or 64-bit integer. Uses on a failure path are not counted."""
    assigned, uses = set(), {}
    for ln in loop:
        s = ln.strip()
        assigned.update(_ASSIGNED.findall(s))
        if not s.startswith("err["):
            for n in _NAME.findall(s):
                uses[n] = uses.get(n, 0) + 1
    names = sorted((n for n in uses if n not in assigned and pinnable(n)), key=lambda n: -uses[n])
    names = names[:PINNED]
    if not names:
        return loop
    pat = re.compile(r"\b(" + "|".join(names) + r")\b")
    return ([f"{indent}r_{n} = fresh({n})" for n in names]
            + [pat.sub(r"r_\1", ln) for ln in loop])
