"""SPV_NV_cooperative_vector: loads and stores (per lane), matrix-vector products and the
training accumulations (collective).

A cooperative vector is a `CoopVec` (a Vector): arithmetic, conversions, composites, phis and
spills are the ordinary per-lane vector rules. OpCooperativeVectorMatrixMul[Add]NV,
OuterProductAccumulateNV and ReduceSumAccumulateNV are collective: the scheduler runs them once
for all the lanes of a workgroup waiting at the same instruction, so the matrix-vector products
of those lanes become one batched matrix product (jitcoop.kernels.coopvec). A vector operand
travels as the block [components, W] of its slot rows, widened to float64 or int64 (the types
the kernels are written for, so that one compiled variant of each serves every site); results
come back the same way and are copied to the result's rows for the waiting lanes only.
"""
from __future__ import annotations

from dataclasses import replace

from ...errors import SpirvError
from ...kernels import codes as CV
from ...spirv.types import CoopVec, Scalar
from ..collectives import Arr
from . import collective, rule
from .common import int_operand

KCV = "jitcoop.kernels.coopvec"

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


def _elem_code(s: Scalar) -> int | None:
    """The interpretation code of a component type; None for one the extension has none of
    (bfloat16)."""
    if s.kind == "float":
        if s.encoding == "e4m3":
            return CV.I_E4M3
        if s.encoding == "e5m2":
            return CV.I_E5M2
        if s.encoding:
            return None
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
    """The pointer plus the byte Offset operand, bounds-checked for nbytes."""
    p = _mem_ptr(em, ins, pid, "Pointer")
    int_operand(em, ins, off_id, "Offset")
    if em.spec.is_const(off_id):
        c = int(em.spec.scalar_const(off_id))
        addr = em.addr_plus(p.addr, c)
        static = p.static_off + c if p.static_off is not None else None
    else:
        addr = em.op(f"add i64 {p.addr}, {em.to_i64(off_id)}")
        static = None
    q = replace(p, addr=addr, static_off=static)
    em.check_range(ins, q, addr, nbytes)
    return q


@rule("OpCooperativeVectorLoadNV")
def _load(em, ins):
    t = em.rtype(ins)
    if not isinstance(t, CoopVec):
        raise SpirvError("the result of OpCooperativeVectorLoadNV must be a cooperative vector",
                         **ins.where())
    s = t.elem
    q = _address(em, ins, ins.operands[0], ins.operands[1], t.n * s.size)
    em.define(ins, em.load_leaves([(s, i * s.size) for i in range(t.n)], q.addr))


@rule("OpCooperativeVectorStoreNV")
def _store(em, ins):
    t = _coopvec(em, ins, ins.operands[2], "Object")
    s = t.elem
    q = _address(em, ins, ins.operands[0], ins.operands[1], t.n * s.size)
    em.store_leaves([(s, i * s.size) for i in range(t.n)], q.addr, em.vals(ins.operands[2]))
    if q.storage == "PhysicalStorageBuffer" or q.root is None:
        em.meta.writes_physical = True


# -- collective helpers ---------------------------------------------------------------------------

def _scratch(em, n, dtype):
    """A 1-D array of n values in the work area, for this call site (zeroed when a dispatch
    starts)."""
    return Arr(em.dense(1, n, dtype).ptr, dtype, (n,))


def _dummy(em, dtype):
    """A [1, 1] array for the kernels' operand of the other kind (float or integer) than the one
    a site uses: typed, never read or written."""
    return em.dense(1, 1, dtype)


def _in_blocks(em, vid):
    """(float64 block, int64 block) of a vector operand: the one of its kind holds its components,
    the other is a dummy."""
    b = em.coll_block_64(vid)
    return (b, _dummy(em, "i64")) if b.dtype == "f64" else (_dummy(em, "f64"), b)


def _bounds(em, p):
    """(base, size) i64 operands of the object a pointer points into, for the kernels' bounds
    checks; base -1: check against the dispatch's range table; unchecked kernels check nothing."""
    if em.options.unchecked:
        return "0", str(1 << 62)
    if p.root is None:
        return "-1", "0"
    return p.root[0], str(p.root[1])


def _oob(p, what):
    if p.root is None:
        return f"out-of-bounds {what}: {{e}} bytes at address {{d:#x}} are outside every buffer"
    return f"out-of-bounds {what}: {{e}} bytes at byte offset {{d}} of {p.root_name or 'its object'}"


def _fail(em, ins, bad, messages):
    """The kernels return -1, or the lane whose access failed with info[0] saying which operand
    (1: the matrix or array, 2: the bias), info[1] the byte offset (or address), info[2] the
    bytes."""
    cond = em.op(f"icmp sge i64 {bad}, 0")
    details = (em.info_at(1), em.info_at(2))
    if len(messages) == 1:
        em.fail_lane(ins, cond, messages[0], bad, *details)
    else:
        em.fail_if(cond, ins, {1: messages[0], 2: messages[1]}, lane=bad, details=details,
                   case=em.info_at(0))


def _mark_atomic_writes(em, p):
    em.meta.has_atomics = True
    em.meta.writes_physical = em.meta.writes_physical or p.root is None or p.storage == "PhysicalStorageBuffer"


def _i64(x) -> tuple:
    return ("i64", str(x))


# -- matrix-vector products ------------------------------------------------------------------------

def matmul_params(em, ins):
    """The constant parameters of a MatrixMul[Add]: a dict."""
    o = ins.operands
    add = ins.opname == "OpCooperativeVectorMatrixMulAddNV"
    rest = o[8:] if add else o[5:]
    M = int(_const(em, ins, rest[0], "M"))
    K = int(_const(em, ins, rest[1], "K"))
    layout = _layout(em, ins, rest[2])
    trans = bool(_const(em, ins, rest[3], "Transpose"))
    stride = rest[4] if len(rest) > 4 else None
    flags = rest[5] if len(rest) > 5 else 0
    for vid, what in ((o[3], "MatrixOffset"), (o[6] if add else None, "BiasOffset"), (stride, "MatrixStride")):
        if vid is not None:
            int_operand(em, ins, vid, what)
    return dict(add=add, input=o[0], in_i=_interp(em, ins, o[1], "InputInterpretation"),
                matrix=o[2], moff=o[3], mat_i=_interp(em, ins, o[4], "MatrixInterpretation"),
                bias=o[5] if add else None, boff=o[6] if add else None,
                bias_i=_interp(em, ins, o[7], "BiasInterpretation") if add else None,
                M=M, K=K, layout=layout, transpose=trans, stride=stride, flags=flags)


def _matmul_config(em, ins, P) -> list:
    """Validate a MatrixMul[Add] (parameters P) and make its kernel configuration (the C_*
    entries of jitcoop.kernels.coopvec)."""
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
    # integer results of integer operands: exact int64 sums (wrapping); otherwise float64
    int_path = (res_kind != CV.K_FLOAT and CV.is_int(in_i) and CV.is_int(mat_i)
                and (bias_i is None or CV.is_int(bias_i)))
    if em.options.numerics not in ("exact", "nvidia"):
        raise SpirvError(f"unknown numerics option {em.options.numerics!r} (exact or nvidia)",
                         **ins.where())
    cfg = [0] * CV.C_LEN
    cfg[CV.C_IN_KIND], cfg[CV.C_IN_I], cfg[CV.C_MAT_I] = in_kind, in_i, mat_i
    cfg[CV.C_BIAS_I] = bias_i if bias_i is not None else 0
    cfg[CV.C_M], cfg[CV.C_K], cfg[CV.C_LAYOUT] = M, K, P["layout"]
    cfg[CV.C_TRANS], cfg[CV.C_HAS_BIAS] = int(P["transpose"]), int(P["add"])
    cfg[CV.C_RES_KIND], cfg[CV.C_RES_I] = res_kind, _elem_code(rs)
    cfg[CV.C_NVIDIA] = int(em.options.numerics == "nvidia")
    cfg[CV.C_PROF], cfg[CV.C_INT_PATH] = _prof(em), int(int_path)
    cfg[CV.C_IN_BITS] = it.elem.width
    return cfg


@collective("OpCooperativeVectorMatrixMulNV", "OpCooperativeVectorMatrixMulAddNV")
def _matmul(em, ins, wait, resume):
    P = matmul_params(em, ins)
    cfg = _matmul_config(em, ins, P)
    M, K, int_path = P["M"], P["K"], cfg[CV.C_INT_PATH]
    mp = _mem_ptr(em, ins, P["matrix"], "Matrix")
    Xf, Xi = _in_blocks(em, P["input"])
    # The kernel writes each waiting lane's result, rounded to the result type, as float64 or
    # int64 (one compiled variant of it serves every site); `put` copies them to the result's
    # rows (integers truncated to the result's width).
    rfloat = cfg[CV.C_RES_KIND] == CV.K_FLOAT
    rdense = em.dense(M, em.W, "f64" if rfloat else "i64")
    Rf, Ri = (rdense, _dummy(em, "i64")) if rfloat else (_dummy(em, "f64"), rdense)
    # The matrix decoded to dense M x K (float64, or int64 on the integer path), kept for the
    # dispatch with key (address, stride, 1) saying what it holds (key[2] = 0: nothing yet).
    cache = em.dense(M, K, "i64" if int_path else "f64")
    Af, Ai = (_dummy(em, "f64"), cache) if int_path else (cache, _dummy(em, "i64"))
    key = _scratch(em, 3, "i64")
    work = _scratch(em, (M + K) * em.W, "f64")
    maddr, moff, mstride = em.coll_i64(P["matrix"]), em.coll_i64(P["moff"]), em.coll_i64(P["stride"])
    mbase, msize = _bounds(em, mp)
    if P["add"]:
        bp = _mem_ptr(em, ins, P["bias"], "Bias")
        baddr, boff = em.coll_i64(P["bias"]), em.coll_i64(P["boff"])
        bbase, bsize = _bounds(em, bp)
    else:
        # no bias: the kernel ignores these
        bp, baddr, boff, bbase, bsize = mp, maddr, maddr, "-1", "0"
    bad = em.lib(f"{KCV}:matmul", [em.state_arr(), _i64(wait), Xf, Xi, Rf, Ri, maddr, moff, mstride, baddr,
                                   boff, em.const_array(cfg, "i64"), Af, Ai, key, _i64(mbase), _i64(msize),
                                   _i64(bbase), _i64(bsize), em.ranges_arr(), em.info_array(), work], ins)
    _fail(em, ins, bad, [_oob(mp, "matrix read"), _oob(bp, "bias read")])
    em.lib(f"{KCV}:put", [em.coll_result_block(ins), rdense, em.state_arr(), _i64(wait)], ins)
    em.resume_lanes(wait, resume)


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
    if a.elem.kind != "float":
        raise SpirvError("OuterProductAccumulate needs float vectors", **ins.where())
    int_operand(em, ins, o[1], "Offset")
    if len(o) > 6:
        int_operand(em, ins, o[6], "MatrixStride")
    A, B = em.coll_block_64(o[2]), em.coll_block_64(o[3])
    addr, off = em.coll_i64(o[0]), em.coll_i64(o[1])
    stride = em.coll_i64(o[6] if len(o) > 6 else None)
    base, size = _bounds(em, p)
    _mark_atomic_writes(em, p)
    bad = em.lib(f"{KCV}:outer_product", [em.state_arr(), _i64(wait), A, B, addr, off, stride, _i64(layout),
                                          _i64(code), _i64(_prof(em)), _i64(base), _i64(size), em.ranges_arr(),
                                          em.info_array()], ins)
    _fail(em, ins, bad, [_oob(p, "matrix accumulation")])
    em.resume_lanes(wait, resume)


@collective("OpCooperativeVectorReduceSumAccumulateNV")
def _reduce_sum(em, ins, wait, resume):
    o = ins.operands
    p = _mem_ptr(em, ins, o[0], "Pointer")
    v = _coopvec(em, ins, o[2], "V")
    code = _elem_code(v.elem)
    if code in (None, CV.I_S8, CV.I_S16, CV.I_U8, CV.I_U16, CV.I_E4M3, CV.I_E5M2):
        raise SpirvError(f"ReduceSumAccumulate of {v.elem} components is not supported "
                         "(float16/32/64 or 32/64-bit integers)", **ins.where())
    int_operand(em, ins, o[1], "Offset")
    Vf, Vi = _in_blocks(em, o[2])
    addr, off = em.coll_i64(o[0]), em.coll_i64(o[1])
    base, size = _bounds(em, p)
    _mark_atomic_writes(em, p)
    bad = em.lib(f"{KCV}:reduce_sum", [em.state_arr(), _i64(wait), Vf, Vi, addr, off, _i64(code), _i64(base),
                                       _i64(size), em.ranges_arr(), em.info_array()], ins)
    _fail(em, ins, bad, [_oob(p, "accumulation")])
    em.resume_lanes(wait, resume)
