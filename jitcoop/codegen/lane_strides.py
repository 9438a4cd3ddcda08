"""Strides: which values of a lane group step by a constant from one invocation to the next.

The lane groups (lanevec.py) run G consecutive invocations of a workgroup, the first at a
G-aligned invocation index, in vector code. A value is *affine* in the group, ("A", s, m), when
invocation i of the group holds v0 + s x i modulo 2^width (v0: the first invocation's value), and
v0 is known to be a multiple of m, a power of two. The vector copy keeps an affine value as v0, a
scalar, and builds the vector only where one is used: a load or store through affine addresses
of the element's size is one vector access, a bounds check of them compares two invocations,
not G.

Alignment is what lets index arithmetic in 32 bits stay affine where it divides. The staging
loop `for (uint e = gl_LocalInvocationIndex; e < 4096; e += 256) s[e] = b[(k + e / 128) * N +
e % 128]` has e = v0 + i with v0 a multiple of 16 (the group's first index; 256 keeps it so): 16
consecutive values that never cross a multiple of 16, so `e / 128` is the same for the group,
`e % 128` is affine again, and `e < 4096` is taken alike by all of them. Without alignment a
group's values may wrap around 2^width between its first and last invocation, where the
operations that are not modular (division, comparison, widening) are no longer affine:

- `nowrap` proves they do not: a non-negative stride with s x (G - 1) < m keeps the group in one
  aligned block of m values, which no multiple of m (2^width, 2^(width-1) among them) splits.
- a widening (zext, sext) of an affine value that `nowrap` cannot prove is *guarded*: lanevec
  splits its block before it and leaves the vector copy there (a divergence exit, as for a
  branch) for a group whose first and last values show a wrap, so that after it the value is
  affine for every group that goes on.

Rules that do not hold return None, and the value is an ordinary vector (lanevec's V).
"""
from __future__ import annotations

from .llvm import SIZES

A = "A"
MAX_ALIGN = 1 << 30
WIDTHS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "ptr": 64}
# icmp predicates: those true below a bound, and their mirror images (operands swapped)
BELOW = {"ult", "ule", "slt", "sle"}
ABOVE = {"ugt", "uge", "sgt", "sge"}
SWAPPED = {"ult": "ugt", "ule": "uge", "slt": "sgt", "sle": "sge",
           "ugt": "ult", "uge": "ule", "sgt": "slt", "sge": "sle"}


def is_affine(x) -> bool:
    return isinstance(x, tuple)


def signed(v: int, width: int) -> int:
    """v modulo 2^width, as a signed number."""
    v &= (1 << width) - 1
    return v - (1 << width) if v >> (width - 1) else v


def affine(s: int, m: int, width: int):
    """The shape of a value stepping by s (modulo 2^width) whose first value is a multiple of m;
    None for a step of 0 (the caller's uniform value)."""
    s = signed(s, width)
    if s == 0:
        return None
    return (A, s, max(1, min(m, MAX_ALIGN, 1 << (width - 1))))


def align_of_const(c: int, width: int) -> int:
    """The largest power of two dividing c modulo 2^width (0: any)."""
    c &= (1 << width) - 1
    if c == 0:
        return MAX_ALIGN
    return min(c & -c, MAX_ALIGN)


def join(a, b):
    """Two affine shapes of one value (a phi's incoming values): the common one, or None."""
    if a[1] != b[1]:
        return None
    return (A, a[1], min(a[2], b[2]))


def nowrap(a, G: int) -> bool:
    """Whether the group's values of affine a provably do not wrap (signed or unsigned)."""
    return a[1] >= 0 and a[1] * (G - 1) < a[2]


def _stays(a, bound_align: int, G: int) -> bool:
    """Whether the group's values of affine a all lie on one side of any multiple of
    bound_align: they do not wrap and span less than the common alignment."""
    return nowrap(a, G) and a[1] * (G - 1) < min(a[2], bound_align)


def needs_guard(ins, shape, G: int) -> bool:
    """Whether a widening of an affine value is affine only where the group's values do not
    wrap (lanevec guards it); False where nowrap proves it or the rule does not apply."""
    if ins.kind != "cast" or ins.op not in ("zext", "sext"):
        return False
    a = shape(ins.args[0][1])
    return is_affine(a) and not nowrap(a, G) and _guardable(a, ins.args[0][0], G)


def _guardable(a, t: str, G: int) -> bool:
    """Whether a wrap of affine a shows in its first and last values: an increasing group
    spanning less than half the range of its type."""
    return t in WIDTHS and 0 < a[1] and a[1] * (G - 1) < 1 << (WIDTHS[t] - 1)


def rule(ins, shape, align, const, G: int, guardable: bool):
    """The shape of an instruction's result from affine operands: affine, "U" (every invocation
    of the group computes the same value, as lane 0 does), or None (no rule: a vector).
    shape(v): an operand's shape; align(v): the alignment of a uniform operand (1 if unknown);
    const(v): a uniform operand's value where it is a constant (else None); guardable: a
    widening may be guarded (its block can be split)."""
    t = ins.rtype
    k, op = ins.kind, ins.op
    if k == "bin" and t in WIDTHS and t != "ptr":
        w = WIDTHS[t]
        (_, x), (_, y) = ins.args
        a, b = shape(x), shape(y)
        if op in ("add", "sub"):
            if is_affine(a) and is_affine(b):
                s = a[1] + b[1] if op == "add" else a[1] - b[1]
                return affine(s, min(a[2], b[2]), w) or "U"
            if is_affine(a) and b == "U":
                return affine(a[1], min(a[2], align(y)), w)
            if is_affine(b) and a == "U":
                return affine(b[1] if op == "add" else -b[1], min(b[2], align(x)), w)
            return None
        if not is_affine(a):
            if op == "mul" and is_affine(b) and const(x) is not None:
                a, x, b, y = b, y, a, x
            else:
                return None
        c = const(y)
        if c is None:
            return None
        if op == "mul":
            return affine(a[1] * c, a[2] * align_of_const(c, w), w) or "U"
        if op == "shl" and 0 <= c < w:
            return affine(a[1] << c, a[2] << c, w) or "U"
        # udiv and urem by a constant (lshr and a low-bit mask are the power-of-two forms): the
        # group's values stay between two multiples of the divisor
        if op == "lshr" and 0 <= c < w:
            op, c = "udiv", 1 << c
        elif op == "and" and c > 0 and (c & (c + 1)) == 0:
            op, c = "urem", c + 1
        if op in ("udiv", "urem") and c > 0:
            g = min(a[2], align_of_const(c, w))
            if not _stays(a, g, G):
                return None
            return "U" if op == "udiv" else affine(a[1], g, w)
        return None
    if k == "cast":
        (ft, x), = ins.args
        a = shape(x)
        if not is_affine(a) or ft not in WIDTHS or t not in WIDTHS:
            return None
        if op in ("inttoptr", "ptrtoint", "bitcast") and WIDTHS[ft] == WIDTHS[t]:
            return a
        if op == "trunc" and WIDTHS[t] >= 8:
            return affine(a[1], a[2], WIDTHS[t])
        if op in ("zext", "sext"):
            if nowrap(a, G) or (guardable and _guardable(a, ft, G)):
                return (A, a[1], a[2])
        return None
    if k == "gep":
        base = shape(ins.args[0][1])
        idx = [shape(v) for _, v in ins.args[1:]]
        size = SIZES.get(ins.extra["et"])
        if base == "U" and len(idx) == 1 and is_affine(idx[0]) and ins.args[1][0] == "i64" and size:
            return affine(idx[0][1] * size, 1, 64) or "U"
        if is_affine(base) and all(s == "U" and const(v) is not None for s, (_, v) in zip(idx, ins.args[1:])):
            return (A, base[1], 1)
        return None
    if k == "select" and shape(ins.args[0][1]) == "U":
        (_, c), (_, x), (_, y) = ins.args
        a, b = shape(x), shape(y)
        known = const(c)
        if known is not None:
            pick = a if known & 1 else b
            return pick if is_affine(pick) or pick == "U" else None
        return join(a, b) if is_affine(a) and is_affine(b) else None
    if k == "cmp" and ins.op == "icmp":
        return _compare(ins, shape, align, const, G)
    return None


def _compare(ins, shape, align, const, G):
    """An ordered comparison of an affine value with a uniform bound is the group's alike when
    no invocation's value lies across the bound from another's: the bound (or bound + 1, for
    the predicates that include it) is a multiple of an alignment the group does not span."""
    t = ins.args[0][0]
    o = ordered(ins, shape)
    if o is None:
        return None
    x, y, pred = o
    a, w = shape(x), WIDTHS[t]
    if pred in ("ult", "uge", "slt", "sge"):
        bound = align(y)
    else:
        c = const(y)
        if c is None:
            return None
        bound = align_of_const(c + 1, w)
    return "U" if _stays(a, bound, G) else None


def ordered(ins, shape):
    """(x, bound, predicate) of an icmp ordering an affine value against a uniform bound (the
    operands swapped where the affine one was second), or None: lanevec decides such a branch
    for the group from its first and last invocations."""
    if ins.kind != "cmp" or ins.op != "icmp":
        return None
    (t, x), (_, y) = ins.args
    pred = ins.extra["pred"]
    if t not in WIDTHS or t == "ptr" or pred not in SWAPPED:
        return None
    a, b = shape(x), shape(y)
    if a == "U" and is_affine(b):
        return y, x, SWAPPED[pred]
    if is_affine(a) and b == "U":
        return x, y, pred
    return None


def fold(ins, vals: list, w: int):
    """An integer instruction on constants (unsigned values modulo 2^w), or None."""
    mask = (1 << w) - 1
    u = [x & mask for x in vals]
    sv = [signed(x, w) if w > 1 else x & 1 for x in vals]
    if ins.kind == "select":
        return vals[1] if u[0] & 1 else vals[2]
    a, b = u
    if ins.kind == "cmp":
        p = ins.extra["pred"]
        x, y = (sv if p[0] == "s" else u)
        return int({"eq": x == y, "ne": x != y, "ult": x < y, "ule": x <= y, "ugt": x > y, "uge": x >= y,
                    "slt": x < y, "sle": x <= y, "sgt": x > y, "sge": x >= y}[p])
    r = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "and": lambda: a & b,
         "or": lambda: a | b, "xor": lambda: a ^ b,
         "shl": lambda: a << b if b < w else None, "lshr": lambda: a >> b if b < w else None,
         "udiv": lambda: a // b if b else None, "urem": lambda: a % b if b else None}.get(ins.op)
    v = r() if r else None
    return None if v is None else signed(v, w)
