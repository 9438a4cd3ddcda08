"""Core memory instructions: access chains, loads, stores, copies, array lengths, pointer casts.

A pointer into memory is an i64 host address. One whose root the generator can see (a binding,
the push constants, a workgroup variable, a per-lane frame) is checked against that object; any
other (physical storage buffer pointers, pointers through OpPhi/OpSelect) against the table of
every range the dispatch can reach. Function and Private variables that are only loaded and
stored through constant indices are "promoted": one LLVM alloca per leaf, which LLVM's mem2reg
turns into registers.
"""
from __future__ import annotations

from dataclasses import replace

from ...errors import SpirvError
from ...spirv.types import (Array, Matrix, Opaque, Pointer, Struct, Vector, array_stride, child, describe,
                            leaves, member_offsets, n_leaves, size_of)
from ..meta import Ptr
from . import rule


def _leaves(t, member=None, elem_stride=None, scale=1):
    """(scalar, byte offset) of each leaf; the offsets `scale` times larger in an interleaved
    frame (Ptr.scale)."""
    if isinstance(t, Vector) and elem_stride is not None:
        lv = [(t.elem, i * elem_stride) for i in range(t.n)]
    else:
        lv = leaves(t, 0, member)
    return lv if scale == 1 else [(s, off * scale) for s, off in lv]


def _span(t, member=None, elem_stride=None):
    lv = _leaves(t, member, elem_stride)
    return max((off + s.size for s, off in lv), default=0)


@rule("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain", "OpInBoundsPtrAccessChain")
def _access_chain(em, ins):
    base = em.ptr(ins.operands[0], ins)
    idx = list(ins.operands[1:])
    rt = em.rtype(ins)
    ptr_chain = ins.opname.startswith(("OpPtr", "OpInBoundsPtr"))
    if base.kind in ("var", "builtin", "res"):
        if ptr_chain:
            raise SpirvError("pointer arithmetic on a variable that is not in memory", **ins.where())
        if base.kind == "res":
            _matrix_component(em, ins, base)
            return
        t, leaf = base.pointee, base.leaf
        for i in idx:
            # Such a variable is held as one value per leaf, so its components are picked at
            # compile time (promotion takes only variables indexed by constants; an input
            # built-in may be indexed by any integer, which is not supported yet).
            if not em.spec.is_const(i):
                what = "input built-in" if base.kind == "builtin" else "variable"
                raise SpirvError(f"an index (%{i}) that is not a constant into {what} '{em.m.name_of(base.var)}' "
                                 "is not supported yet", **ins.where())
            c = int(em.spec.scalar_const(i))
            _check_component(ins, t, c)
            t, pos = child(t, c)
            leaf += pos
        em.ptrs[ins.result] = replace(base, pointee=t, leaf=leaf)
        return
    terms = []
    const_off = 0
    t = base.pointee
    member = base.member
    elem_stride = base.elem_stride
    k = base.scale          # (an interleaved frame: each offset k times the object's)
    if ptr_chain:
        e = idx.pop(0)
        bt = em.value_type(ins.operands[0])
        stride = bt.array_stride if isinstance(bt, Pointer) and bt.array_stride else size_of(t)
        if em.spec.is_const(e):
            const_off += int(em.spec.scalar_const(e)) * stride * k
        else:
            terms.append(_scaled_index(em, e, stride * k))
    for i in idx:
        c = int(em.spec.scalar_const(i)) if em.spec.is_const(i) else None
        if isinstance(t, Struct):
            if c is None:
                raise SpirvError("a struct index must be a constant", **ins.where())
            _check_component(ins, t, c)
            const_off += member_offsets(t)[c] * k
            member = t.members[c]
            t = member.type
            continue
        if isinstance(t, Array):
            stride = array_stride(t)
            t, member = t.elem, None
        elif isinstance(t, Matrix):
            s = t.col.elem.size
            ms = member.matrix_stride if member and member.matrix_stride else t.col.n * s
            if member is not None and member.row_major:
                stride, elem_stride = s, ms        # a column of a row-major matrix is strided
            else:
                stride = ms
            t = t.col
        elif isinstance(t, Vector):
            stride = elem_stride if elem_stride is not None else t.elem.size
            t, elem_stride = t.elem, None
        else:
            raise SpirvError(f"cannot index into {type(t).__name__}", **ins.where())
        if c is not None:
            const_off += c * stride * k
        else:
            terms.append(_scaled_index(em, i, stride * k))
    addr = base.addr
    for x in terms:
        addr = em.op(f"add i64 {addr}, {x}")
    addr = em.addr_plus(addr, const_off)
    static = base.static_off + const_off if base.static_off is not None and not terms else None
    em.define_ptr(ins.result, Ptr("mem", rt.pointee, rt.storage, addr=addr, root=base.root, member=member,
                                  static_off=static, root_min=base.root_min, elem_stride=elem_stride,
                                  root_name=base.root_name, descriptor=base.descriptor, scale=k))


def _matrix_component(em, ins, base):
    """A pointer to one component of a matrix variable in slot rows (analysis/matrices.py's
    component_vars): the component's index, checked where it is loaded or stored."""
    if len(ins.operands) != 2:
        raise SpirvError("an access chain into a cooperative matrix variable takes one index", **ins.where())
    i = ins.operands[1]
    if em.spec.is_const(i):
        c = int(em.spec.scalar_const(i))
        _check_component(ins, base.pointee, c)
        e = str(c)
    else:
        e = _scaled_index(em, i, 1)
    em.define_ptr(ins.result, replace(base, kind="res_elem", pointee=base.pointee.elem, addr=e))


def _check_component(ins, t, c: int):
    """A constant index into a struct (or into a variable held in registers, whose components
    are its leaves) must name a component: a spec constant can pick one past the end."""
    n = len(t.members) if isinstance(t, Struct) else t.n if isinstance(t, Vector) else \
        t.ncols if isinstance(t, Matrix) else t.length if isinstance(t, Array) else None
    if n is not None and not 0 <= c < n:
        raise SpirvError(f"index {c} of a {describe(t)}, which has {n} component{'s' * (n != 1)}", **ins.where())


def _scaled_index(em, vid, stride) -> str:
    """An index operand widened by its own signedness, times a stride, as i64."""
    t = em.value_type(vid)
    v = em.cast_int(em.val(vid), t.width, 64, t.signed)
    return em.op(f"mul i64 {v}, {stride}") if stride != 1 else v


@rule("OpLoad")
def _load(em, ins):
    p = em.ptr(ins.operands[0], ins)
    rt = em.rtype(ins)
    if p.kind == "res":
        # a matrix variable living in slot rows
        if ins.result in em.resident:
            em.resident_copy(ins.result, ("var", p.var))
        else:
            em.define(ins, em.resident_leaves(("var", p.var)))
        return
    if p.kind == "res_elem":
        em.define(ins, [em.resident_component(("var", p.var), em.checked_component(ins, p))])
        return
    if p.kind == "var":
        em.define(ins, em.var_leaves(p.var, p.leaf, n_leaves(p.pointee)))
        if isinstance(rt, Pointer):       # a physical pointer kept in a Function variable
            em.ptrs[ins.result] = Ptr("mem", rt.pointee, rt.storage, addr=em.vals(ins.result)[0], root=None)
        return
    if p.kind == "builtin":
        allv = em.builtin_leaves(em.inputs[p.var], ins)
        em.define(ins, allv[p.leaf:p.leaf + n_leaves(p.pointee)])
        return
    if isinstance(rt, Opaque):
        raise SpirvError(f"loading a {rt.opname} is not supported yet", **ins.where())
    es = p.elem_stride
    lv = _leaves(rt, p.member, es, p.scale)
    addr = em.check_range(ins, p, p.addr, _span(rt, p.member, es))
    raw = ins.result in em.bit_moves
    vals = em.load_leaves(lv, addr, raw)
    if isinstance(rt, Pointer):
        em.define_ptr(ins.result, Ptr("mem", rt.pointee, rt.storage, addr=vals[0], root=None))
        return
    em.define(ins, vals)


@rule("OpStore")
def _store(em, ins):
    p = em.ptr(ins.operands[0], ins)
    if p.kind == "res":
        em.resident_copy(("var", p.var), ins.operands[1])
        return
    if p.kind == "builtin":
        raise SpirvError("store to an input built-in", **ins.where())
    src = _value_leaves(em, ins.operands[1], ins)
    if p.kind == "res_elem":
        em.resident_store_component(("var", p.var), em.checked_component(ins, p), src[0])
        return
    if p.kind == "var":
        em.var_store(p.var, p.leaf, src)
        return
    if p.storage in ("Uniform", "PushConstant") and not _writable(em, p):
        raise SpirvError(f"store to read-only {p.storage} memory", **ins.where())
    t = p.pointee
    es = p.elem_stride
    lv = _leaves(t, p.member, es, p.scale)
    addr = em.check_range(ins, p, p.addr, _span(t, p.member, es), write=True)
    raw = ins.operands[1] in em.bit_moves
    em.store_leaves(lv, addr, src, raw)
    if p.storage == "PhysicalStorageBuffer" or p.root is None:
        em.meta.writes_physical = True


def _value_leaves(em, vid, ins) -> list[str]:
    """A stored value's leaves (a pointer value is its address)."""
    t = em.value_type(vid)
    if isinstance(t, Pointer):
        return [em.ptr(vid, ins).addr]
    return em.vals(vid)


def _writable(em, p):
    return p.storage == "Uniform" and any(b.writable for b in em.meta.bindings)


@rule("OpCopyMemory", "OpCopyMemorySized")
def _copy_memory(em, ins):
    dst = em.ptr(ins.operands[0], ins)
    src = em.ptr(ins.operands[1], ins)
    # Load every leaf of the source, then store: the same as OpLoad + OpStore.
    _write(em, ins, dst, _read(em, ins, src))


def _read(em, ins, p):
    if p.kind == "var":
        return em.var_leaves(p.var, p.leaf, n_leaves(p.pointee))
    lv = _leaves(p.pointee, p.member, p.elem_stride, p.scale)
    addr = em.check_range(ins, p, p.addr, _span(p.pointee, p.member, p.elem_stride))
    return em.load_leaves(lv, addr)


def _write(em, ins, p, vals):
    if p.kind == "var":
        em.var_store(p.var, p.leaf, vals)
        return
    lv = _leaves(p.pointee, p.member, p.elem_stride, p.scale)
    addr = em.check_range(ins, p, p.addr, _span(p.pointee, p.member, p.elem_stride), write=True)
    em.store_leaves(lv, addr, vals)


@rule("OpArrayLength")
def _array_length(em, ins):
    p = em.ptr(ins.operands[0], ins)
    k = ins.operands[1]
    t = p.pointee
    if p.kind != "mem" or p.root is None or not isinstance(t, Struct):
        raise SpirvError("OpArrayLength of something that is not a bound buffer block", **ins.where())
    off = member_offsets(t)[k]
    stride = array_stride(t.members[k].type)
    base, size = p.root
    used = em.op(f"sub i64 {p.addr}, {base}")
    left = em.op(f"sub i64 {size}, {used}")
    left = em.op(f"sub i64 {left}, {off}")
    neg = em.op(f"icmp slt i64 {left}, 0")
    left = em.op(f"select i1 {neg}, i64 0, i64 {left}")
    n = em.op(f"udiv i64 {left}, {stride}")
    em.define(ins, [em.op(f"trunc i64 {n} to i32")])


@rule("OpConvertUToPtr")
def _u_to_ptr(em, ins):
    rt = em.rtype(ins)
    t = em.value_type(ins.operands[0])
    addr = em.cast_int(em.val(ins.operands[0]), t.width, 64, False)
    em.define_ptr(ins.result, Ptr("mem", rt.pointee, rt.storage, addr=addr, root=None))
    em.meta.uses_physical = True


@rule("OpConvertPtrToU")
def _ptr_to_u(em, ins):
    p = em.ptr(ins.operands[0], ins)
    s = em.rtype(ins)
    em.define(ins, [em.cast_int(p.addr, 64, s.width, False)])


@rule("OpPtrEqual", "OpPtrNotEqual")
def _ptr_eq(em, ins):
    a = em.ptr(ins.operands[0], ins)
    b = em.ptr(ins.operands[1], ins)
    if a.kind != "mem" or b.kind != "mem":
        same = (a.kind, a.var, a.leaf) == (b.kind, b.var, b.leaf)
        r = same if ins.opname == "OpPtrEqual" else not same
        em.define(ins, ["true" if r else "false"])
        return
    em.define(ins, [em.op(f"icmp {'eq' if ins.opname == 'OpPtrEqual' else 'ne'} i64 {a.addr}, {b.addr}")])


@rule("OpPtrDiff")
def _ptr_diff(em, ins):
    a = em.ptr(ins.operands[0], ins)
    b = em.ptr(ins.operands[1], ins)
    d = em.op(f"sub i64 {a.addr}, {b.addr}")
    q = em.op(f"sdiv i64 {d}, {max(1, size_of(a.pointee))}")
    s = em.rtype(ins)
    em.define(ins, [em.cast_int(q, 64, s.width, True)])

