"""Composites: construct, extract, insert, shuffle, dynamic vector access, copies, undef, and the
matrix/vector products of the core instruction set."""
from __future__ import annotations

from ...errors import SpirvError
from ...spirv.types import CoopMat, Pointer, child, n_leaves
from . import rule
from ..llvm import lit, ty
from .common import round_to, scalars


def _path(em, t, indices, ins):
    pos = 0
    for i in indices:
        try:
            t, p = child(t, i)
        except (TypeError, IndexError):
            raise SpirvError(f"index {i} does not select a component", **ins.where()) from None
        pos += p
    return t, pos


@rule("OpCompositeConstruct", "OpCompositeConstructReplicateEXT")
def _construct(em, ins):
    rt = em.rtype(ins)
    out = []
    for c in ins.operands:
        out.extend(em.vals(c))
    if ins.opname.endswith("ReplicateEXT") or (isinstance(rt, CoopMat) and len(ins.operands) == 1):
        out = out * (n_leaves(rt) // len(out))      # a cooperative matrix from one value: a splat
    if len(out) != n_leaves(rt):
        raise SpirvError(f"constituents give {len(out)} components; the result has {n_leaves(rt)}",
                         **ins.where())
    em.define(ins, out)


@rule("OpCompositeExtract")
def _extract(em, ins):
    src = em.vals(ins.operands[0])
    t, pos = _path(em, em.value_type(ins.operands[0]), ins.operands[1:], ins)
    em.define(ins, src[pos:pos + n_leaves(t)])


@rule("OpCompositeInsert")
def _insert(em, ins):
    obj = em.vals(ins.operands[1])
    comp = em.vals(ins.operands[0])
    t, pos = _path(em, em.value_type(ins.operands[1]), ins.operands[2:], ins)
    em.define(ins, obj[:pos] + comp + obj[pos + len(comp):])


@rule("OpCopyObject", "OpCopyLogical")
def _copy(em, ins):
    rt = em.rtype(ins)
    if isinstance(rt, Pointer):
        p = em.ptr(ins.operands[0], ins)
        em.ptrs[ins.result] = p
        if p.kind == "mem":
            em.define_id(ins.result, [p.addr])
        return
    if ins.result in em.resident:
        em.resident_copy(ins.result, ins.operands[0])
        return
    em.define(ins, em.vals(ins.operands[0]))


@rule("OpUndef")
def _undef(em, ins):
    rt = em.rtype(ins)
    if isinstance(rt, Pointer):
        raise SpirvError("OpUndef pointer", **ins.where())
    em.define(ins, [lit(0, s) for s in scalars(rt)])


@rule("OpVectorShuffle")
def _shuffle(em, ins):
    ab = em.vals(ins.operands[0]) + em.vals(ins.operands[1])
    s = scalars(em.rtype(ins))
    em.define(ins, [lit(0, s[k]) if i == 0xFFFFFFFF else ab[i] for k, i in enumerate(ins.operands[2:])])


def _index64(em, vid) -> str:
    t = em.value_type(vid)
    return em.cast_int(em.val(vid), t.width, 64, t.signed)


@rule("OpVectorExtractDynamic")
def _extract_dyn(em, ins):
    # An out-of-range index is undefined in SPIR-V; this answers the last component.
    v = em.vals(ins.operands[0])
    i = _index64(em, ins.operands[1])
    t = ty(scalars(em.rtype(ins))[0])
    r = v[-1]
    for k in range(len(v) - 2, -1, -1):
        r = em.op(f"select i1 {em.op(f'icmp eq i64 {i}, {k}')}, {t} {v[k]}, {t} {r}")
    em.define(ins, [r])


@rule("OpVectorInsertDynamic")
def _insert_dyn(em, ins):
    v = em.vals(ins.operands[0])
    c = em.val(ins.operands[1])
    i = _index64(em, ins.operands[2])
    t = ty(scalars(em.rtype(ins))[0])
    em.define(ins, [em.op(f"select i1 {em.op(f'icmp eq i64 {i}, {k}')}, {t} {c}, {t} {x}")
                    for k, x in enumerate(v)])


def _fma_sum(em, terms, s):
    """sum of a * b in the leaves' type, rounded to s after each operation's float math."""
    t = ty(s)
    acc = None
    for a, b in terms:
        p = em.op(f"fmul {t} {a}, {b}")
        acc = p if acc is None else em.op(f"fadd {t} {acc}, {p}")
    return round_to(em, acc, s, t)


@rule("OpVectorTimesScalar", "OpMatrixTimesScalar")
def _times_scalar(em, ins):
    v = em.vals(ins.operands[0])
    k = em.val(ins.operands[1])
    out = []
    for x, s in zip(v, scalars(em.rtype(ins))):
        if s.kind == "float":
            out.append(round_to(em, em.op(f"fmul {ty(s)} {x}, {k}"), s, ty(s)))
        else:       # integer components (cooperative matrices of integers) wrap at their width
            out.append(em.op(f"mul {ty(s)} {x}, {k}"))
    em.define(ins, out)


@rule("OpDot")
def _dot(em, ins):
    a, b = em.vals(ins.operands[0]), em.vals(ins.operands[1])
    em.define(ins, [_fma_sum(em, list(zip(a, b)), em.rtype(ins))])


@rule("OpMatrixTimesVector")
def _mat_vec(em, ins):
    mt = em.value_type(ins.operands[0])
    m, v = em.vals(ins.operands[0]), em.vals(ins.operands[1])
    rows, cols = mt.col.n, mt.ncols
    s = mt.col.elem
    em.define(ins, [_fma_sum(em, [(m[c * rows + r], v[c]) for c in range(cols)], s) for r in range(rows)])


@rule("OpVectorTimesMatrix")
def _vec_mat(em, ins):
    mt = em.value_type(ins.operands[1])
    v, m = em.vals(ins.operands[0]), em.vals(ins.operands[1])
    rows, cols = mt.col.n, mt.ncols
    s = mt.col.elem
    em.define(ins, [_fma_sum(em, [(v[r], m[c * rows + r]) for r in range(rows)], s) for c in range(cols)])


@rule("OpMatrixTimesMatrix")
def _mat_mat(em, ins):
    at, bt = em.value_type(ins.operands[0]), em.value_type(ins.operands[1])
    a, b = em.vals(ins.operands[0]), em.vals(ins.operands[1])
    rows, inner, cols = at.col.n, at.ncols, bt.ncols
    s = at.col.elem
    em.define(ins, [_fma_sum(em, [(a[k * rows + r], b[c * inner + k]) for k in range(inner)], s)
                    for c in range(cols) for r in range(rows)])


@rule("OpOuterProduct")
def _outer(em, ins):
    a, b = em.vals(ins.operands[0]), em.vals(ins.operands[1])
    s = scalars(em.rtype(ins))[0]
    em.define(ins, [round_to(em, em.op(f"fmul {ty(s)} {a[r]}, {b[c]}"), s, ty(s))
                    for c in range(len(b)) for r in range(len(a))])


@rule("OpTranspose")
def _transpose(em, ins):
    mt = em.value_type(ins.operands[0])
    m = em.vals(ins.operands[0])
    rows, cols = mt.col.n, mt.ncols
    em.define(ins, [m[c * rows + r] for r in range(rows) for c in range(cols)])
