"""Atomic instructions: LLVM atomicrmw/cmpxchg on the address, so workgroups running on several
threads at once stay exact. Memory semantics and scopes need nothing more on the CPU (every
atomic is sequentially consistent). Float min/max are a compare-exchange loop on the bits, where
a NaN operand loses to a number (IEEE 754-2008 minNum/maxNum)."""
from __future__ import annotations

from ...errors import SpirvError
from ..llvm import ty
from . import rule


def _target(em, ins):
    p = em.ptr(ins.operands[0], ins)
    if p.kind != "mem":
        raise SpirvError("atomic on a variable that is not in memory", **ins.where())
    s = p.pointee
    if getattr(s, "kind", None) not in ("int", "float"):
        raise SpirvError("atomic on a non-scalar", **ins.where())
    addr = em.check_range(ins, p, p.addr, s.size, write=True)
    em.meta.has_atomics = True
    if p.root is None:
        em.meta.writes_physical = True
    # under robust buffer access an atomic past the binding goes to the sink: it reads zero
    # (not what other lanes left there) as a load past the binding does
    missed = em.op(f"icmp ne i64 {addr}, {p.addr}") if addr != p.addr else None
    return em.op(f"inttoptr i64 {addr} to ptr"), s, missed


def _define(em, ins, value: str, s, missed):
    if missed is not None:
        value = em.op(f"select i1 {missed}, {ty(s)} {'0.0' if s.kind == 'float' else '0'}, {ty(s)} {value}")
    em.define(ins, [value])


_RMW = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "xchg": "xchg",
        "fadd": "fadd"}


def _rmw(name, signed=None, value_pos=3):
    def lower(em, ins):
        ptr, s, missed = _target(em, ins)
        if s.width < 32:
            raise SpirvError(f"{s.width}-bit atomics are not supported", **ins.where())
        t = ty(s)
        if name in ("inc", "dec"):
            op, v = ("add" if name == "inc" else "sub"), "1"
        else:
            v = em.val(ins.operands[value_pos])
            op = _RMW.get(name)
        if name in ("min", "max"):
            sg = s.signed if signed is None else signed
            op = ("" if sg else "u") + name
        if name in ("fmin", "fmax"):
            _define(em, ins, _float_minmax(em, ptr, t, v, name), s, missed)
            return
        _define(em, ins, em.op(f"atomicrmw {op} ptr {ptr}, {t} {v} seq_cst"), s, missed)
    return lower


def _float_minmax(em, ptr, t, v, name) -> str:
    it = "i64" if t == "double" else "i32"
    fn = em.fn
    first = em.op(f"load {it}, ptr {ptr}")
    entry = fn.cur
    loop, done = fn.label("frmw"), fn.label("frmw.done")
    fn.br(loop)
    fn.block(loop)
    old = fn.phi(it)
    old.incoming.append((first, entry))
    oldf = em.op(f"bitcast {it} {old.name} to {t}")
    pick = em.op(f"fcmp {'olt' if name == 'fmin' else 'ogt'} {t} {v}, {oldf}")
    nan = em.op(f"fcmp uno {t} {oldf}, {oldf}")
    pick = em.op(f"or i1 {pick}, {nan}")
    newf = em.op(f"select i1 {pick}, {t} {v}, {t} {oldf}")
    newi = em.op(f"bitcast {t} {newf} to {it}")
    pair = em.op(f"cmpxchg ptr {ptr}, {it} {old.name}, {it} {newi} seq_cst seq_cst")
    got = em.op(f"extractvalue {{ {it}, i1 }} {pair}, 0")
    ok = em.op(f"extractvalue {{ {it}, i1 }} {pair}, 1")
    old.incoming.append((got, fn.cur))
    fn.cbr(ok, done, loop)
    fn.block(done)
    return em.op(f"bitcast {it} {got} to {t}")


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
    ptr, s, missed = _target(em, ins)
    _define(em, ins, em.op(f"load atomic {ty(s)}, ptr {ptr} seq_cst, align {s.size}"), s, missed)


@rule("OpAtomicStore")
def _atomic_store(em, ins):
    ptr, s, _ = _target(em, ins)
    em.emit(f"store atomic {ty(s)} {em.val(ins.operands[3])}, ptr {ptr} seq_cst, align {s.size}")


@rule("OpAtomicCompareExchange")
def _cmpxchg(em, ins):
    ptr, s, missed = _target(em, ins)
    t = ty(s)
    value, comparator = em.val(ins.operands[4]), em.val(ins.operands[5])
    pair = em.op(f"cmpxchg ptr {ptr}, {t} {comparator}, {t} {value} seq_cst seq_cst")
    _define(em, ins, em.op(f"extractvalue {{ {t}, i1 }} {pair}, 0"), s, missed)
