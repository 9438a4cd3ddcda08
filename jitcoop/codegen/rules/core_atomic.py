"""Atomic instructions: LLVM atomicrmw/cmpxchg on the address, so workgroups running on several
threads at once stay exact. Memory semantics and scopes need nothing more on the CPU (every
atomic is sequentially consistent)."""
from __future__ import annotations

from ...errors import SpirvError
from ..emitter import nb_type
from . import rule


def _target(em, ins):
    p = em.ptr(ins.operands[0], ins)
    if p.kind != "mem":
        raise SpirvError("atomic on a variable that is not in memory", **ins.where())
    s = p.pointee
    if getattr(s, "kind", None) not in ("int", "float"):
        raise SpirvError("atomic on a non-scalar", **ins.where())
    em.check_range(ins, p, p.addr, s.size)
    em.meta.has_atomics = True
    if p.root is None:
        em.meta.writes_physical = True
    return p, s


def _suffix(s, signed=None):
    if s.kind == "float":
        return f"f{s.width}"
    sg = s.signed if signed is None else signed
    return f"{'i' if sg else 'u'}{s.width}"


def _rmw(name, signed=None, value_pos=3):
    def lower(em, ins):
        p, s = _target(em, ins)
        if s.width < 32:
            raise SpirvError(f"{s.width}-bit atomics are not supported", **ins.where())
        suf = _suffix(s, signed)
        T = nb_type(s)
        if name in ("inc", "dec"):
            fn = "add" if name == "inc" else "sub"
            v = f"{T}(1)"
        else:
            fn = name
            v = em.val(ins.operands[value_pos])
        conv = "np." + ("float" if suf[0] == "f" else ("int" if suf[0] == "i" else "uint")) + suf[1:]
        em.define(ins, [f"{T}(atomic_{fn}_{suf}({p.addr}, {conv}({v})))"])
    return lower


for _op, _fn, _sg in (("OpAtomicIAdd", "add", None), ("OpAtomicISub", "sub", None),
                      ("OpAtomicSMin", "min", True), ("OpAtomicUMin", "min", False),
                      ("OpAtomicSMax", "max", True), ("OpAtomicUMax", "max", False),
                      ("OpAtomicAnd", "and", None), ("OpAtomicOr", "or", None),
                      ("OpAtomicXor", "xor", None), ("OpAtomicExchange", "xchg", None),
                      ("OpAtomicIIncrement", "inc", None), ("OpAtomicIDecrement", "dec", None),
                      ("OpAtomicFAddEXT", "fadd", None), ("OpAtomicFMinEXT", "fmin", None),
                      ("OpAtomicFMaxEXT", "fmax", None)):
    rule(_op)(_rmw(_fn, _sg))


@rule("OpAtomicLoad")
def _atomic_load(em, ins):
    p, s = _target(em, ins)
    em.define(ins, [em.load_leaf(s, p.addr)])


@rule("OpAtomicStore")
def _atomic_store(em, ins):
    p, s = _target(em, ins)
    suf = _suffix(s)
    conv = nb_type(s)
    em.line(f"atomic_xchg_{suf}({p.addr}, {conv}({em.val(ins.operands[3])}))")


@rule("OpAtomicCompareExchange")
def _cmpxchg(em, ins):
    p, s = _target(em, ins)
    suf = _suffix(s)
    T = nb_type(s)
    value, comparator = em.val(ins.operands[4]), em.val(ins.operands[5])
    em.define(ins, [f"{T}(atomic_cmpxchg_{suf}({p.addr}, {T}({comparator}), {T}({value})))"])
