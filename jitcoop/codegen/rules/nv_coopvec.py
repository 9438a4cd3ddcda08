"""SPV_NV_cooperative_vector: loads and stores (per lane), matrix-vector products and the
training accumulations (collective).

A cooperative vector is a `CoopVec` (a Vector): arithmetic, conversions, composites, phis and
spills are the ordinary per-lane vector rules. OpCooperativeVectorMatrixMul[Add]NV,
OuterProductAccumulateNV and ReduceSumAccumulateNV are collective: the scheduler runs them once
for all the lanes of a workgroup waiting at the same instruction, so the matrix-vector products
of those lanes become one batched matrix product (jitcoop.kernels.coopvec). Their operands and
results travel in the spill slots, one row per component; a vector's rows are passed to the
kernel as one 2-D block (copied into a fresh block when the rows are not consecutive).
"""
from __future__ import annotations

import re
from dataclasses import replace

from ...errors import SpirvError
from ...kernels import coopvec as CV
from ...spirv.types import CoopVec, Scalar
from ..emitter import nb_type
from . import collective, rule

# CooperativeMatrixOperands bits
MATRIX_B_SIGNED = 0x2
RESULT_SIGNED = 0x8
LAYOUT_NAMES = ("RowMajor", "ColumnMajor", "InferencingOptimal", "TrainingOptimal")
MEM_STORAGE = ("StorageBuffer", "PhysicalStorageBuffer", "Workgroup", "CrossWorkgroup")


def _const(em, ins, vid, what):
    if not em.spec.is_const(vid):
        raise SpirvError(f"{what} must be a constant instruction", **ins.where())
    return em.spec.scalar_const(vid)


def _interp(em, ins, vid, what):
    v = int(_const(em, ins, vid, what))
    code = CV.SPIRV_COMPONENT_TYPES.get(v)
    if code is None:
        raise SpirvError(f"{what} {v} is not a cooperative vector Component Type", **ins.where())
    return code


def _layout(em, ins, vid):
    v = int(_const(em, ins, vid, "MemoryLayout"))
    if v not in (0, 1, 2, 3):
        raise SpirvError(f"MemoryLayout {v} is not a Cooperative Vector Matrix Layout", **ins.where())
    return v


def _prof(em):
    from ...devices.coopvec import optimal_kind
    return optimal_kind(em.profile.name)


def _mem_ptr(em, ins, vid, what):
    p = em.ptr(vid, ins)
    if p.kind != "mem" or p.storage not in MEM_STORAGE:
        raise SpirvError(f"{what} must point into StorageBuffer, PhysicalStorageBuffer or Workgroup "
                         f"memory (got {p.storage})", **ins.where())
    return p


def _kind(s: Scalar, signed_flag=None) -> int:
    if s.kind == "float":
        return CV.K_FLOAT
    if signed_flag is None:
        return CV.K_SINT if s.signed else CV.K_UINT
    return CV.K_SINT if signed_flag else CV.K_UINT


def _elem_code(s: Scalar) -> int:
    if s.kind == "float":
        if s.encoding == "e4m3":
            return CV.I_E4M3
        if s.encoding == "e5m2":
            return CV.I_E5M2
        if s.encoding:
            raise KeyError(s.encoding)
        return {16: CV.I_F16, 32: CV.I_F32, 64: CV.I_F64}[s.width]
    base = {8: 0, 16: 1, 32: 2, 64: 3}[s.width]
    return (CV.I_S8 if s.signed else CV.I_U8) + base


def _coopvec(em, ins, vid, what):
    t = em.value_type(vid)
    if not isinstance(t, CoopVec):
        raise SpirvError(f"{what} must be a cooperative vector", **ins.where())
    return t


# -- load / store (per lane) ---------------------------------------------------------------------

def _address(em, ins, pid, off_id, nbytes):
    p = _mem_ptr(em, ins, pid, "Pointer")
    a = em.tmp("cva")
    if em.spec.is_const(off_id):
        c = int(em.spec.scalar_const(off_id))
        em.line(f"{a} = {p.addr} + {c}")
        static = p.static_off + c if p.static_off is not None else None
    else:
        em.line(f"{a} = {p.addr} + np.int64({em.val(off_id)})")
        static = None
    q = replace(p, addr=a, static_off=static)
    em.check_range(ins, q, a, nbytes)
    return q


@rule("OpCooperativeVectorLoadNV")
def _load(em, ins):
    t = em.rtype(ins)
    if not isinstance(t, CoopVec):
        raise SpirvError("the result of OpCooperativeVectorLoadNV must be a cooperative vector",
                         **ins.where())
    s = t.elem
    q = _address(em, ins, ins.operands[0], ins.operands[1], t.n * s.size)
    em.define(ins, [em.load_leaf(s, f"{q.addr} + {i * s.size}" if i else q.addr) for i in range(t.n)])


@rule("OpCooperativeVectorStoreNV")
def _store(em, ins):
    t = _coopvec(em, ins, ins.operands[2], "Object")
    s = t.elem
    p = _mem_ptr(em, ins, ins.operands[0], "Pointer")
    if p.storage not in ("StorageBuffer", "PhysicalStorageBuffer", "Workgroup", "CrossWorkgroup"):
        raise SpirvError(f"store to {p.storage} memory", **ins.where())
    q = _address(em, ins, ins.operands[0], ins.operands[1], t.n * s.size)
    for i, v in enumerate(em.vals(ins.operands[2])):
        em.line(em.store_leaf(s, f"{q.addr} + {i * s.size}" if i else q.addr, v))
    if p.storage == "PhysicalStorageBuffer" or p.root is None:
        em.meta.writes_physical = True


# -- collective helpers ---------------------------------------------------------------------------

_ROW = re.compile(r"^S_(\w+)\[(\d+)\]$")


def _block_of(rows):
    """`S_tag[a:b]` when the rows are consecutive rows of one slot array, else None."""
    ms = [_ROW.match(r) for r in rows]
    if not all(ms) or len({m.group(1) for m in ms}) != 1:
        return None
    ks = [int(m.group(2)) for m in ms]
    if ks != list(range(ks[0], ks[0] + len(ks))):
        return None
    return f"S_{ms[0].group(1)}[{ks[0]}:{ks[0] + len(ks)}]"


def _fresh_block(em, dtype, n):
    """n fresh consecutive slot rows of dtype: (block expression, row expressions)."""
    base = em.tmp("cvb")
    names = [f"{base}_{i}" for i in range(n)]
    for nm in names:
        em.name_types[nm] = dtype
    rows = [em.slot_row(nm) for nm in names]
    return _block_of(rows), rows


def _in_block(em, vid):
    """(float64 block, int64 block) of a vector operand's rows: the one of its kind is a copy of
    its slot rows, the other a dummy."""
    rows = em.coll_arrays(vid)
    b = _block_of(rows)
    if b is None:
        dtype = nb_type(em.value_type(vid).elem)
        b, new = _fresh_block(em, dtype, len(rows))
        for r, s in zip(new, rows):
            em.line(f"{r}[:] = {s}")
    # a per-site buffer filled by a casting copy (no allocation per call)
    t = em.tmp("cvx")
    isf = em.value_type(vid).elem.kind == "float"
    em.prologue.append(f"{t} = np.zeros(({len(rows)}, {em.W}), np.{'float64' if isf else 'int64'})")
    em.line(f"{t}[:] = {b}")
    return (t, "cvdi") if isf else ("cvdf", t)


def _out(em, ins, src):
    """Lines that copy the kernel's M x W result array to the result's slot rows (waiting lanes
    only: other lanes may still need their slots)."""
    rows = em.coll_result(ins)
    b = _block_of(rows)
    if b is not None:
        return [f"cv_put({b}, {src}, state, wait_cv)"]
    return [f"cv_put1({r}, {src}[{i}], state, wait_cv)" for i, r in enumerate(rows)]


def _root(p):
    """(base, size) expressions for the kernel's bounds check; base -1: check against the
    dispatch's range table."""
    if p.root is None or p.root[0].startswith("fv"):
        return "np.int64(-1)", "np.int64(0)"
    return f"np.int64({p.root[0]})", f"np.int64({p.root[1]})"


def _site_arrays(em):
    em.info_array()
    if "cvdf" not in getattr(em, "_cv_prologue", set()):
        em._cv_prologue = {"cvdf"}
        em.prologue.append("cvdf = np.zeros((1, 1), np.float64)")
        em.prologue.append("cvdi = np.zeros((1, 1), np.int64)")


def _fail_lines(em, ins, bad, what):
    em.line(f"if {bad} >= 0:")
    em.indent += 1
    if len(what) == 1:
        em.line(em.fail_lane(ins, what[0], bad, "info[1]", "info[2]"))
    else:
        em.line("if info[0] == 1:")
        em.line("    " + em.fail_lane(ins, what[0], bad, "info[1]", "info[2]"))
        em.line("else:")
        em.line("    " + em.fail_lane(ins, what[1], bad, "info[1]", "info[2]"))
    em.indent -= 1


def _where(p, em):
    if p.root is None or p.root[0].startswith("fv"):
        return "the pointer's buffer"
    return em.root_desc(p.root[0])


def _oob(p, em, what):
    if p.root is None or p.root[0].startswith("fv"):
        return (f"out-of-bounds {what}: {{e}} bytes at address {{d:#x}} are outside every buffer")
    return f"out-of-bounds {what}: {{e}} bytes at byte offset {{d}} of {_where(p, em)}"


# -- matrix-vector products ------------------------------------------------------------------------

def matmul_params(em, ins):
    """The constant parameters of a MatrixMul[Add]: dict (also used by devices.coopvec_uses)."""
    o = ins.operands
    add = ins.opname == "OpCooperativeVectorMatrixMulAddNV"
    rest = o[8:] if add else o[5:]
    M = int(_const(em, ins, rest[0], "M"))
    K = int(_const(em, ins, rest[1], "K"))
    layout = _layout(em, ins, rest[2])
    trans = bool(_const(em, ins, rest[3], "Transpose"))
    stride = rest[4] if len(rest) > 4 else None
    flags = rest[5] if len(rest) > 5 else 0
    return dict(add=add, input=o[0], in_i=_interp(em, ins, o[1], "InputInterpretation"),
                matrix=o[2], moff=o[3], mat_i=_interp(em, ins, o[4], "MatrixInterpretation"),
                bias=o[5] if add else None, boff=o[6] if add else None,
                bias_i=_interp(em, ins, o[7], "BiasInterpretation") if add else None,
                M=M, K=K, layout=layout, transpose=trans, stride=stride, flags=flags)


@collective("OpCooperativeVectorMatrixMulNV", "OpCooperativeVectorMatrixMulAddNV")
def _matmul(em, ins, wait, resume):
    P = matmul_params(em, ins)
    M, K = P["M"], P["K"]
    rt = em.rtype(ins)
    if not isinstance(rt, CoopVec):
        raise SpirvError("Result Type must be a cooperative vector", **ins.where())
    it = _coopvec(em, ins, P["input"], "Input")
    if rt.n != M:
        raise SpirvError(f"the result has {rt.n} components but M is {M}", **ins.where())
    if M < 1 or K < 1:
        raise SpirvError(f"M = {M} and K = {K} must be positive", **ins.where())
    in_i, mat_i, bias_i = P["in_i"], P["mat_i"], P["bias_i"]
    if mat_i in (CV.I_S8P, CV.I_U8P) or bias_i in (CV.I_S8P, CV.I_U8P):
        raise SpirvError("Packed interpretations are only valid for the input", **ins.where())
    if in_i in (CV.I_S8P, CV.I_U8P):
        if not (it.elem.kind == "int" and it.elem.width == 32):
            raise SpirvError("a Packed InputInterpretation needs a 32-bit integer Input", **ins.where())
        if 4 * it.n < K:
            raise SpirvError(f"the Input holds {4 * it.n} packed values; K is {K}", **ins.where())
    elif it.n != K:
        raise SpirvError(f"the Input has {it.n} components but K is {K}", **ins.where())
    rs = rt.elem
    if rs.kind == "float" and (rs.encoding or rs.width not in (16, 32, 64)):
        raise SpirvError(f"result component type {rs} is not supported", **ins.where())
    flags = P["flags"]
    in_kind = _kind(it.elem, bool(flags & MATRIX_B_SIGNED)) if it.elem.kind == "int" else CV.K_FLOAT
    res_kind = CV.K_FLOAT if rs.kind == "float" else (CV.K_SINT if flags & RESULT_SIGNED else CV.K_UINT)
    res_i = _elem_code(rs)
    int_path = (res_kind != CV.K_FLOAT and CV.is_int(in_i) and CV.is_int(mat_i)
                and (bias_i is None or CV.is_int(bias_i)))
    nvidia = em.options.get("numerics", "exact") == "nvidia"
    if em.options.get("numerics", "exact") not in ("exact", "nvidia"):
        raise SpirvError(f"unknown numerics option {em.options.get('numerics')!r} "
                         "(exact or nvidia)", **ins.where())
    prof = _prof(em)
    cfg = [0] * CV.C_LEN
    cfg[CV.C_IN_KIND], cfg[CV.C_IN_I], cfg[CV.C_MAT_I] = in_kind, in_i, mat_i
    cfg[CV.C_BIAS_I] = bias_i if bias_i is not None else 0
    cfg[CV.C_M], cfg[CV.C_K], cfg[CV.C_LAYOUT] = M, K, P["layout"]
    cfg[CV.C_TRANS], cfg[CV.C_HAS_BIAS] = int(P["transpose"]), int(P["add"])
    cfg[CV.C_RES_KIND], cfg[CV.C_RES_I], cfg[CV.C_NVIDIA] = res_kind, res_i, int(nvidia)
    cfg[CV.C_PROF], cfg[CV.C_INT_PATH] = prof, int(int_path)
    cfg[CV.C_IN_BITS] = it.elem.width
    _site_arrays(em)
    n = em.tmp("cv")
    em.prologue.append(f"{n}c = np.array([{', '.join(map(str, cfg))}], np.int64)")
    em.prologue.append(f"{n}Af = np.empty(({M if not int_path else 1}, {K if not int_path else 1}), np.float64)")
    em.prologue.append(f"{n}Ai = np.empty(({M if int_path else 1}, {K if int_path else 1}), np.int64)")
    rint = rs.kind != "float"
    em.prologue.append(f"{n}R = np.zeros(({M}, {em.W}), np.{'int64' if rint else 'float64'})")
    em.prologue.append(f"{n}k = np.full(3, -1, np.int64)")
    em.prologue.append(f"{n}w = np.empty({(M + K) * em.W}, np.float64)")
    mp = _mem_ptr(em, ins, P["matrix"], "Matrix")
    Xf, Xi = _in_block(em, P["input"])
    maddr = em.coll_i64(P["matrix"])
    moff = em.coll_i64(P["moff"])
    mstride = em.coll_i64(P["stride"])
    mbase, msize = _root(mp)
    if P["add"]:
        bp = _mem_ptr(em, ins, P["bias"], "Bias")
        baddr = em.coll_i64(P["bias"])
        boff = em.coll_i64(P["boff"])
        bbase, bsize = _root(bp)
    else:
        bp = mp
        baddr = boff = maddr
        bbase, bsize = "np.int64(-1)", "np.int64(0)"
    if em.options.get("unchecked"):
        mbase, msize, bbase, bsize = "np.int64(0)", "np.int64(1 << 62)", "np.int64(0)", "np.int64(1 << 62)"
    bad = em.tmp("cvbad")
    Rf, Ri = (f"{n}R", "cvdi") if not rint else ("cvdf", f"{n}R")
    em.line(f"{bad} = cv_matmul(state, {wait}, {Xf}, {Xi}, {Rf}, {Ri}, {maddr}, {moff}, {mstride}, "
            f"{baddr}, {boff}, {n}c, {n}Af, {n}Ai, {n}k, {mbase}, {msize}, {bbase}, {bsize}, ranges, "
            f"info, {n}w)")
    _fail_lines(em, ins, bad, [_oob(mp, em, "matrix read"), _oob(bp, em, "bias read")])
    for c in _out(em, ins, f"{n}R"):
        em.line(c.replace("wait_cv", str(wait)))
    em.line(f"sg_resume(state, {wait}, {resume})")


# -- training: atomic accumulation ---------------------------------------------------------------

@collective("OpCooperativeVectorOuterProductAccumulateNV")
def _outer(em, ins, wait, resume):
    o = ins.operands
    p = _mem_ptr(em, ins, o[0], "Pointer")
    a = _coopvec(em, ins, o[2], "A")
    b = _coopvec(em, ins, o[3], "B")
    if a.elem.key() != b.elem.key():
        raise SpirvError("A and B must have the same component type", **ins.where())
    layout = _layout(em, ins, o[4])
    code = _interp(em, ins, o[5], "MatrixInterpretation")
    if code not in (CV.I_F16, CV.I_F32, CV.I_F64):
        raise SpirvError(f"MatrixInterpretation {CV.INTERP_NAMES[code]} is not supported for "
                         "OuterProductAccumulate (float16, float32 or float64)", **ins.where())
    if layout < 2 and len(o) < 7:
        raise SpirvError(f"a {LAYOUT_NAMES[layout]} layout needs a MatrixStride", **ins.where())
    _site_arrays(em)
    A = _in_block(em, o[2])
    B = _in_block(em, o[3])
    if a.elem.kind != "float":
        raise SpirvError("OuterProductAccumulate needs float vectors", **ins.where())
    A, B = A[0], B[0]
    addr = em.coll_i64(o[0])
    off = em.coll_i64(o[1])
    stride = em.coll_i64(o[6] if len(o) > 6 else None)
    base, size = _root(p)
    if em.options.get("unchecked"):
        base, size = "np.int64(0)", "np.int64(1 << 62)"
    em.meta.has_atomics = True
    em.meta.writes_physical = em.meta.writes_physical or p.root is None or p.storage == "PhysicalStorageBuffer"
    bad = em.tmp("cvbad")
    em.line(f"{bad} = cv_outer(state, {wait}, {A}, {B}, {addr}, {off}, {stride}, {layout}, {code}, "
            f"{_prof(em)}, {base}, {size}, ranges, info)")
    _fail_lines(em, ins, bad, [_oob(p, em, "matrix accumulation")])
    em.line(f"sg_resume(state, {wait}, {resume})")


@collective("OpCooperativeVectorReduceSumAccumulateNV")
def _reduce_sum(em, ins, wait, resume):
    o = ins.operands
    p = _mem_ptr(em, ins, o[0], "Pointer")
    v = _coopvec(em, ins, o[2], "V")
    code = _elem_code(v.elem)
    if code in (CV.I_S8, CV.I_S16, CV.I_U8, CV.I_U16, CV.I_E4M3, CV.I_E5M2):
        raise SpirvError(f"ReduceSumAccumulate of {v.elem} components is not supported "
                         "(float16/32/64 or 32/64-bit integers)", **ins.where())
    _site_arrays(em)
    Vf, Vi = _in_block(em, o[2])
    addr = em.coll_i64(o[0])
    off = em.coll_i64(o[1])
    base, size = _root(p)
    if em.options.get("unchecked"):
        base, size = "np.int64(0)", "np.int64(1 << 62)"
    em.meta.has_atomics = True
    em.meta.writes_physical = em.meta.writes_physical or p.root is None or p.storage == "PhysicalStorageBuffer"
    bad = em.tmp("cvbad")
    em.line(f"{bad} = cv_reduce_sum(state, {wait}, {Vf}, {Vi}, {addr}, {off}, {code}, {base}, {size}, "
            "ranges, info)")
    _fail_lines(em, ins, bad, [_oob(p, em, "accumulation")])
    em.line(f"sg_resume(state, {wait}, {resume})")
