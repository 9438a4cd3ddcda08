"""Core memory instructions: access chains, loads, stores, copies, array lengths, pointer casts.

A pointer the generator can see the root of (a binding, push constants, a workgroup variable, a
per-lane frame) is checked against that object; any other (physical storage buffer pointers,
pointers through OpPhi/OpSelect) against the table of every range the dispatch can reach.
Function and Private variables that are only loaded and stored through constant indices are
"promoted": they are Python locals, one per leaf, and never touch memory.
"""
from __future__ import annotations

from dataclasses import replace

from ...errors import SpirvError
from ...spirv.types import (Array, Matrix, Opaque, Pointer, Struct, Vector, child, leaves,
                            member_offsets, n_leaves, size_of, array_stride)
from ..emitter import Ptr
from . import rule


def _span(t, member=None, elem_stride=None):
    lv = _leaves(t, member, elem_stride)
    if not lv:
        return 0
    return max(off + s.size for s, off in lv)


def _leaves(t, member=None, elem_stride=None):
    if isinstance(t, Vector) and elem_stride is not None:
        return [(t.elem, i * elem_stride) for i in range(t.n)]
    return leaves(t, 0, member)


def define_ptr(em, rid, p: Ptr):
    em.ptrs[rid] = p
    if p.kind == "mem":
        em.names[rid] = [p.addr]
        em.spill_if_crossing(rid)


@rule("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain", "OpInBoundsPtrAccessChain")
def _access_chain(em, ins):
    base = em.ptr(ins.operands[0], ins)
    idx = list(ins.operands[1:])
    rt = em.rtype(ins)
    if base.kind in ("var", "builtin"):
        if ins.opname.startswith(("OpPtr", "OpInBoundsPtr")):
            raise SpirvError("pointer arithmetic on a variable that is not in memory", **ins.where())
        t, leaf = base.pointee, base.leaf
        for i in idx:
            c = int(em.spec.scalar_const(i))
            t, pos = child(t, c)
            leaf += pos
        define_ptr(em, ins.result, replace(base, pointee=t, leaf=leaf))
        return
    terms = []
    const_off = 0
    t = base.pointee
    member = base.member
    elem_stride = base.elem_stride
    if ins.opname.startswith(("OpPtr", "OpInBoundsPtr")):
        e = idx.pop(0)
        bt = em.value_type(ins.operands[0])
        stride = bt.array_stride if isinstance(bt, Pointer) and bt.array_stride else size_of(t)
        _add_index(em, e, stride, terms)
        if em.spec.is_const(e):
            const_off += int(em.spec.scalar_const(e)) * stride
            terms.pop()
    for i in idx:
        is_c = em.spec.is_const(i)
        c = int(em.spec.scalar_const(i)) if is_c else None
        if isinstance(t, Struct):
            if c is None:
                raise SpirvError("a struct index must be a constant", **ins.where())
            const_off += member_offsets(t)[c]
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
        if is_c:
            const_off += c * stride
        else:
            _add_index(em, i, stride, terms)
    expr = " + ".join([base.addr] + terms + ([str(const_off)] if const_off else []))
    name = f"v{ins.result}"
    em.line(f"{name} = {expr}")
    static = base.static_off + const_off if base.static_off is not None and not terms else None
    p = Ptr("mem", rt.pointee, rt.storage, addr=name, root=base.root, member=member,
            static_off=static, root_min=base.root_min, elem_stride=elem_stride)
    define_ptr(em, ins.result, p)


def _add_index(em, i, stride, terms):
    v = em.val(i)
    terms.append(f"np.int64({v}) * {stride}")


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
    if p.kind == "var":
        names = em.var_leaf_names(p.var)[p.leaf:p.leaf + n_leaves(p.pointee)]
        if ins.result in em.alias_loads:
            em.alias(ins.result, names)
        else:
            em.define(ins, names)
        if isinstance(rt, Pointer):       # a physical pointer kept in a Function variable
            em.ptrs[ins.result] = Ptr("mem", rt.pointee, rt.storage, addr=em.names[ins.result][0], root=None)
        return
    if p.kind == "builtin":
        name = em.inputs[p.var]
        allv = em.builtin_leaves(name, ins)
        em.define(ins, allv[p.leaf:p.leaf + n_leaves(p.pointee)])
        return
    if isinstance(rt, Opaque):
        raise SpirvError(f"loading a {rt.opname} is not supported yet", **ins.where())
    es = p.elem_stride
    lv = _leaves(rt, p.member, es)
    em.check_range(ins, p, p.addr, _span(rt, p.member, es))
    raw = ins.result in em.bit_moves
    exprs = [em.load_leaf(s, f"{p.addr} + {off}" if off else p.addr, raw) for s, off in lv]
    em.define(ins, exprs)
    if isinstance(rt, Pointer):
        em.ptrs[ins.result] = Ptr("mem", rt.pointee, rt.storage, addr=em.names[ins.result][0], root=None)


@rule("OpStore")
def _store(em, ins):
    p = em.ptr(ins.operands[0], ins)
    if p.kind == "res":
        em.resident_copy(("var", p.var), ins.operands[1])
        return
    src = em.vals(ins.operands[1])
    if p.kind == "var":
        names = em.var_leaf_names(p.var)[p.leaf:p.leaf + n_leaves(p.pointee)]
        if set(names) & set(src):         # the source reads the variable: go through temporaries
            tmps = []
            for s in src:
                t = em.tmp()
                em.line(f"{t} = {s}")
                tmps.append(t)
            src = tmps
        for n, s in zip(names, src):
            em.line(f"{n} = {s}")
        return
    if p.kind == "builtin":
        raise SpirvError("store to an input built-in", **ins.where())
    if p.storage in ("Uniform", "PushConstant") and not _writable(em, p):
        raise SpirvError(f"store to read-only {p.storage} memory", **ins.where())
    t = p.pointee
    es = p.elem_stride
    lv = _leaves(t, p.member, es)
    em.check_range(ins, p, p.addr, _span(t, p.member, es))
    raw = ins.operands[1] in em.bit_moves
    for (s, off), v in zip(lv, src):
        em.line(em.store_leaf(s, f"{p.addr} + {off}" if off else p.addr, v, raw))
    if p.storage == "PhysicalStorageBuffer" or p.root is None:
        em.meta.writes_physical = True


def _writable(em, p):
    return p.storage == "Uniform" and any(b.writable for b in em.meta.bindings)


@rule("OpCopyMemory", "OpCopyMemorySized")
def _copy_memory(em, ins):
    dst = em.ptr(ins.operands[0], ins)
    src = em.ptr(ins.operands[1], ins)
    # Load every leaf of the source, then store: the same as OpLoad + OpStore.
    vals = _read(em, ins, src)
    _write(em, ins, dst, vals)


def _read(em, ins, p):
    if p.kind == "var":
        return em.var_leaf_names(p.var)[p.leaf:p.leaf + n_leaves(p.pointee)]
    lv = _leaves(p.pointee, p.member, p.elem_stride)
    em.check_range(ins, p, p.addr, _span(p.pointee, p.member, p.elem_stride))
    out = []
    for s, off in lv:
        t = em.tmp()
        em.line(f"{t} = {em.load_leaf(s, f'{p.addr} + {off}')}")
        out.append(t)
    return out


def _write(em, ins, p, vals):
    if p.kind == "var":
        for n, v in zip(em.var_leaf_names(p.var)[p.leaf:p.leaf + n_leaves(p.pointee)], vals):
            em.line(f"{n} = {v}")
        return
    lv = _leaves(p.pointee, p.member, p.elem_stride)
    em.check_range(ins, p, p.addr, _span(p.pointee, p.member, p.elem_stride))
    for (s, off), v in zip(lv, vals):
        em.line(em.store_leaf(s, f"{p.addr} + {off}", v))


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
    em.define(ins, [f"np.uint32(max(0, ({size} - ({p.addr} - {base}) - {off}) // {stride}))"])


@rule("OpConvertUToPtr")
def _u_to_ptr(em, ins):
    rt = em.rtype(ins)
    name = f"v{ins.result}"
    em.line(f"{name} = np.int64({em.val(ins.operands[0])})")
    define_ptr(em, ins.result, Ptr("mem", rt.pointee, rt.storage, addr=name, root=None))
    em.meta.uses_physical = True


@rule("OpConvertPtrToU")
def _ptr_to_u(em, ins):
    p = em.ptr(ins.operands[0], ins)
    from ..emitter import nb_type
    em.define(ins, [f"{nb_type(em.rtype(ins))}({p.addr})"])


@rule("OpPtrEqual", "OpPtrNotEqual")
def _ptr_eq(em, ins):
    a = em.ptr(ins.operands[0], ins)
    b = em.ptr(ins.operands[1], ins)
    if a.kind != "mem" or b.kind != "mem":
        same = (a.kind, a.var, a.leaf) == (b.kind, b.var, b.leaf)
        r = same if ins.opname == "OpPtrEqual" else not same
        em.define(ins, ["True" if r else "False"])
        return
    opr = "==" if ins.opname == "OpPtrEqual" else "!="
    em.define(ins, [f"({a.addr} {opr} {b.addr})"])


@rule("OpPtrDiff")
def _ptr_diff(em, ins):
    a = em.ptr(ins.operands[0], ins)
    b = em.ptr(ins.operands[1], ins)
    from ..emitter import nb_type
    em.define(ins, [f"{nb_type(em.rtype(ins))}(({a.addr} - {b.addr}) // {size_of(a.pointee)})"])
