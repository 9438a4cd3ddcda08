"""SPV_KHR_integer_dot_product (core in SPIR-V 1.6): OpSDot, OpUDot, OpSUDot and their
saturating-accumulate forms.

The operands are two integer vectors of one component width, or two 32-bit integers with
PackedVectorFormat4x8Bit (four 8-bit components, component 0 in the low byte). The products and
their sum are exact ("computed with enough precision to avoid overflow and underflow"): the plain
forms give the low N bits of the exact sum (N the result's width), the AccSat forms the exact
sum plus the accumulator, clamped to the result type's range (signed for S and SU, unsigned for
U). The plain forms sum modulo 2^64, which keeps the low bits; the AccSat forms at a width that
holds the exact sum and the accumulator (64, 128 or 256 bits, by the components' and result's
widths).
"""
from __future__ import annotations

from ..llvm import ty
from . import pure, rule

PACKED_4X8 = 0          # PackedVectorFormat4x8Bit
# the opcodes, under the extension's names (...KHR) and SPIR-V 1.6's
OPS = tuple(op + suffix for op in ("OpSDot", "OpUDot", "OpSUDot", "OpSDotAccSat", "OpUDotAccSat", "OpSUDotAccSat")
            for suffix in ("", "KHR"))


def _signedness(opname: str) -> tuple[bool, bool]:
    """Whether vector 1 and vector 2 are signed."""
    if opname.startswith("OpSUDot"):
        return True, False
    s = opname.startswith("OpSDot")
    return s, s


def _components(em, x: int, signed: bool, packed: bool, wide: str) -> list[str]:
    """Operand x's components, extended (by its signedness) to the sum's type `wide`."""
    v = em.vals(x)
    if packed:
        w = v[0]
        parts = [em.op(f"trunc i32 {em.op(f'lshr i32 {w}, {8 * i}')} to i8") for i in range(4)]
        src = "i8"
    else:
        parts, src = v, ty(em.value_type(x).elem)
    if src == wide:
        return parts
    ext = "sext" if signed else "zext"
    return [em.op(f"{ext} {src} {p} to {wide}") for p in parts]


@rule(*OPS)
def _integer_dot(em, ins):
    sat = "AccSat" in ins.opname
    ops = ins.operands
    nvec = 3 if sat else 2
    packed = len(ops) > nvec and ops[nvec] == PACKED_4X8
    s1, s2 = _signedness(ins.opname)
    n = em.rtype(ins).width
    if not sat:
        # the low n <= 64 bits of the exact sum: the sum modulo 2^64 has them
        wide = "i64"
    else:
        cw, count = (8, 4) if packed else (em.value_type(ops[0]).elem.width, em.value_type(ops[0]).n)
        need = max(2 * cw + count.bit_length() + 1, n) + 2      # the exact sum plus the accumulator
        wide = next(f"i{w}" for w in (64, 128, 256) if need <= w)    # (need <= 135)
    a = _components(em, ops[0], s1, packed, wide)
    b = _components(em, ops[1], s2, packed, wide)
    total = None
    for x, y in zip(a, b):
        p = em.op(f"mul {wide} {x}, {y}")
        total = p if total is None else em.op(f"add {wide} {total}, {p}")
    if sat:
        signed = s1             # S and SU: a signed result; U: unsigned
        ext = "sext" if signed else "zext"
        acc = em.op(f"{ext} i{n} {em.vals(ops[2])[0]} to {wide}") if wide != f"i{n}" else em.vals(ops[2])[0]
        total = em.op(f"add {wide} {total}, {acc}")
        lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed else (0, (1 << n) - 1)
        total = em.op(f"select i1 {em.op(f'icmp slt {wide} {total}, {lo}')}, {wide} {lo}, {wide} {total}")
        total = em.op(f"select i1 {em.op(f'icmp sgt {wide} {total}, {hi}')}, {wide} {hi}, {wide} {total}")
    r = total if wide == f"i{n}" else em.op(f"trunc {wide} {total} to i{n}")
    em.define(ins, [r])


pure(*OPS)
