"""SPV_QCOM_cooperative_matrix_conversion, with the rules of the SPIR-V extension text (rev 1).

- OpBitCastArrayQCOM and OpExtractSubArrayQCOM are per-lane: an array value is a list of leaves,
  so they are bit moves between leaves (and, for a start index only known at run time, loads from
  a small stack copy of the source).
- OpCompositeConstructCoopMatQCOM and OpCompositeExtractCoopMatQCOM move data between the
  invocations of a subgroup (line i of the matrix is invocation i's array), so they are
  collectives: the scheduler gathers the waiting subgroups' per-lane arrays (the array's slot
  rows, a block [length, W]) into dense matrices and scatters them into the fragments through the
  profile's lane layout (jitcoop.kernels.qcom, jitcoop.kernels.coopmat), or the reverse.

Where the Vulkan proposal and the SPIR-V text differ, the SPIR-V text rules
(docs/extensions/qcom.md). The Vulkan environment's extra rules for OpExtractSubArrayQCOM (lengths in
the property table, start a multiple of the result length) are reported by `jitcoop check`
(`check_rows`), not enforced.
"""
from __future__ import annotations

from ...errors import SpirvError
from ...spirv.types import Array, CoopMat, Scalar, describe, size_of
from ..collectives import dtype_of
from ..llvm import ty
from . import collective, rule
from .common import bits_of, from_bits
from .khr_coopmat import check_scope, gather, mat_type, scatter, scope_size

QC = "jitcoop.kernels.qcom"
CAPABILITY = "CooperativeMatrixConversionQCOM"
CONSTRUCT, EXTRACT = "OpCompositeConstructCoopMatQCOM", "OpCompositeExtractCoopMatQCOM"
BITCAST, SUBARRAY = "OpBitCastArrayQCOM", "OpExtractSubArrayQCOM"
USES = ("MatrixAKHR", "MatrixBKHR", "MatrixAccumulatorKHR")
# Profiles whose device stands for one exposing VK_QCOM_cooperative_matrix_conversion.
QCOM_PROFILES = ("qualcomm", "generic", "shuffled")
# K lengths the rules allow (one 256-bit row of A: float32, float16, 8-bit integers), used as the
# supported K of a profile whose table accepts everything.
QCOM_K = (8, 16, 32)


# -- type rules -----------------------------------------------------------------------------------
def _is_u32(s) -> bool:
    return isinstance(s, Scalar) and s.kind == "int" and s.width == 32 and not s.signed


def _ieee(s, *widths) -> bool:
    return isinstance(s, Scalar) and s.kind == "float" and s.width in widths and not s.encoding


def array_elem_ok(s) -> bool:
    """32-bit integers (either signedness), IEEE float32 and float16."""
    return (isinstance(s, Scalar) and s.kind == "int" and s.width == 32) or _ieee(s, 16, 32)


def shape_problem(t, what) -> str | None:
    """Why t is not a one-dimensional array of scalars of fixed length (None: it is)."""
    if not isinstance(t, Array) or t.length is None or not isinstance(t.elem, Scalar):
        return f"{what} must be a one-dimensional array of fixed length; it is {describe(t)}"
    return None


def array_problem(t, what) -> str | None:
    """Why t is not a one-dimensional array of an element type OpBitCastArrayQCOM and
    OpExtractSubArrayQCOM take (None: it is)."""
    why = shape_problem(t, what)
    if why:
        return why
    if not array_elem_ok(t.elem):
        return (f"{what} must be an array of 32-bit integers, float32 or float16; it is "
                f"{describe(t)}")
    return None


def matrix_problem(t: CoopMat, sg: int) -> str | None:
    """The Scope, Component Type and size rules of a matrix a QCOM construct or extract takes, in a
    subgroup of sg invocations (None: it fits)."""
    if t.scope != 3:
        return f"the matrix must have Scope Subgroup; it is {describe(t)}"
    if sg & (sg - 1):
        return f"the subgroup size must be a power of two; it is {sg}"
    e, use = t.elem, t.use
    if use in (0, 1):
        if not ((e.kind == "int" and e.width == 8) or _ieee(e, 16, 32)):
            return (f"a {USES[use]} matrix must have 8-bit integer, float16 or float32 components; "
                    f"it is {describe(t)}")
        fixed = 256 // e.width                 # one row (A) or column (B) is 256 bits
        dim, other, dname, oname = ((t.cols, t.rows, "Columns", "Rows") if use == 0 else
                                    (t.rows, t.cols, "Rows", "Columns"))
        if dim != fixed:
            return (f"a {USES[use]} matrix of {e} components must have {dname} = {fixed} (256 bits); "
                    f"it is {describe(t)}")
        if other > sg:
            return (f"a {USES[use]} matrix may have at most SubgroupSize = {sg} {oname}; it is "
                    f"{describe(t)}")
        return None
    if use != 2:
        return f"Use {use} is not MatrixA, MatrixB or MatrixAccumulator"
    if not ((e.kind == "int" and e.width == 32) or _ieee(e, 16, 32)):
        return (f"a MatrixAccumulatorKHR matrix must have 32-bit integer, float16 or float32 "
                f"components; it is {describe(t)}")
    if t.rows > sg or t.cols > sg:
        return (f"a MatrixAccumulatorKHR matrix may have at most SubgroupSize = {sg} rows and columns; "
                f"it is {describe(t)}")
    return None


def line_length(t: CoopMat) -> int:
    """Elements of the matrix one invocation's array holds: a row (A, accumulator) or a column (B)."""
    return t.rows if t.use == 1 else t.cols


def packing(t: CoopMat, a: Array):
    """How an array holds one line of t: None (same element type), or (element width, signed)
    for the packed uint32 forms."""
    if a.elem.key() == t.elem.key():
        return None
    e = t.elem
    return e.width, e.kind == "int" and e.signed


def pair_problem(t: CoopMat, a: Array, what: str) -> str | None:
    """The element type and length rules between a matrix and the per-invocation array."""
    n = line_length(t)
    if a.elem.key() == t.elem.key():
        if a.length != n:
            return (f"{what} {describe(a)} must have {n} elements (the matrix's "
                    f"{'Rows' if t.use == 1 else 'Columns'}) for {describe(t)}")
        return None
    if not _is_u32(a.elem):
        return (f"{what} must have the matrix's Component Type {t.elem} or uint32 elements; it is "
                f"{describe(a)}")
    if t.use in (0, 1):
        want, why = 8, "8 packed words (256 bits)"
    elif _ieee(t.elem, 16):
        want, why = t.cols // 2, "Columns / 2 packed words"
    else:
        want, why = t.cols, "Columns words"
    if a.length != want or (t.use == 2 and _ieee(t.elem, 16) and t.cols % 2):
        return f"{what} {describe(a)} must have {why} = {want} for {describe(t)}"
    return None


def conversion_problem(t, a, sg, what) -> str | None:
    if not isinstance(t, CoopMat):
        return f"the matrix operand must be a cooperative matrix; it is {describe(t)}"
    return shape_problem(a, what) or matrix_problem(t, sg) or pair_problem(t, a, what)


# -- OpCompositeConstructCoopMatQCOM / OpCompositeExtractCoopMatQCOM -----------------------------------
def _lines(em, vid):
    """The per-lane arrays of a collective's operand or result as the kernels take them: its slot
    rows, one block [length, W] (an array's leaves share one type, so its rows are consecutive),
    and the rows to read, in element order."""
    block = em.coll_block(vid)
    return [block, em.const_array(range(block.shape[0]))]


def _b(x) -> str:
    return "true" if x else "false"


@collective(CONSTRUCT)
def _construct(em, ins, wait, resume):
    t = em.rtype(ins)
    a = em.value_type(ins.operands[0])
    if not isinstance(t, CoopMat):
        raise SpirvError(f"the Result Type must be a cooperative matrix; it is {describe(t)}",
                         **ins.where())
    why = conversion_problem(t, a, em.sg, "the Source Array")
    if why:
        raise SpirvError(why, **ins.where())
    inv = scope_size(em, t)
    check_scope(em, ins, wait, t)
    # dense copies of the fragment's own dtype: the conversion only moves bits
    d = em.dense(em.W // inv, t.rows * t.cols, dtype_of(t.elem))
    args = ([em.state_arr(), ("i64", str(wait)), ("i64", str(inv))] + _lines(em, ins.operands[0])
            + [("i64", str(t.rows)), ("i64", str(t.cols)), ("b", _b(t.use == 1))])
    p = packing(t, a)
    if p is None:
        em.lib(f"{QC}:lines_to_dense", args + [d], ins)
    else:
        em.lib(f"{QC}:unpack", args + [("i64", str(p[0])), ("b", _b(p[1])), d], ins)
    scatter(em, wait, inv, t, d, em.coll_result_block(ins))
    em.resume_lanes(wait, resume)


@collective(EXTRACT)
def _extract(em, ins, wait, resume):
    t = mat_type(em, ins.operands[0], ins, "the Source Cooperative Matrix")
    a = em.rtype(ins)
    why = conversion_problem(t, a, em.sg, "the Result Type")
    if why:
        raise SpirvError(why, **ins.where())
    inv = scope_size(em, t)
    check_scope(em, ins, wait, t)
    # the fragment's own dtype (integers come back to their own width: bits kept)
    d = gather(em, wait, inv, t, em.coll_block(ins.operands[0]), dtype=dtype_of(t.elem))
    args = ([em.state_arr(), ("i64", str(wait)), ("i64", str(inv)), d, ("i64", str(t.rows)),
             ("i64", str(t.cols)), ("b", _b(t.use == 1))])
    p = packing(t, a)
    if p is None:
        em.lib(f"{QC}:dense_to_lines", args + _lines(em, ins.result), ins)
    else:
        em.lib(f"{QC}:pack", args + [("i64", str(p[0]))] + _lines(em, ins.result), ins)
    em.resume_lanes(wait, resume)


# -- OpBitCastArrayQCOM ---------------------------------------------------------------------------
def _f16_bits(em, v: str) -> str:
    """The float16 bits (i64) of a float holding a float16 value, NaN payloads kept (a float16
    store makes every NaN the quiet 0x7E00): the exact inverse of the f16_to_f32 helper, so a
    uint32 -> float16 -> uint32 trip is bit-exact."""
    b = em.op(f"bitcast float {v} to i32")
    mag = em.op(f"and i32 {b}, 2147483647")
    nan = em.op(f"icmp ugt i32 {mag}, 2139095040")
    m0 = em.op(f"lshr i32 {b}, 13")
    m1 = em.op(f"and i32 {m0}, 1023")
    # a payload only below float16's mantissa: a quiet NaN
    none = em.op(f"icmp eq i32 {m1}, 0")
    m = em.op(f"select i1 {none}, i32 512, i32 {m1}")
    s0 = em.op(f"lshr i32 {b}, 16")
    s = em.op(f"and i32 {s0}, 32768")
    n0 = em.op(f"or i32 {s}, 31744")
    n = em.op(f"or i32 {n0}, {m}")
    h16 = em.op(f"call i16 {em.helper('f32_to_f16')}(float {v})")
    h = em.op(f"zext i16 {h16} to i32")
    r = em.op(f"select i1 {nan}, i32 {n}, i32 {h}")
    return em.op(f"zext i32 {r} to i64")


def _bits(em, v: str, s: Scalar) -> str:
    """The bit pattern of a leaf as an i64 (float16 NaN payloads kept)."""
    return _f16_bits(em, v) if s.kind == "float" and s.width == 16 else bits_of(em, v, s)


@rule(BITCAST)
def _bitcast_array(em, ins):
    src, dst = em.value_type(ins.operands[0]), em.rtype(ins)
    why = array_problem(src, "the Source Array") or array_problem(dst, "the Result Type")
    if why:
        raise SpirvError(why, **ins.where())
    if size_of(src) != size_of(dst):
        raise SpirvError(f"the Result Type {describe(dst)} ({size_of(dst)} bytes) and the Source Array "
                         f"{describe(src)} ({size_of(src)} bytes) must have the same size",
                         **ins.where())
    bits = [_bits(em, v, src.elem) for v in em.vals(ins.operands[0])]
    sw, dw = src.elem.width, dst.elem.width
    if sw == dw:
        words = bits
    elif sw == 16:                   # two float16 per 32-bit word, the first in the low half
        words = []
        for lo, hi in zip(bits[0::2], bits[1::2]):
            words.append(em.op(f"or i64 {lo}, {em.op(f'shl i64 {hi}, 16')}"))
    else:
        words = []
        for b in bits:
            words += [em.op(f"and i64 {b}, 65535"), em.op(f"lshr i64 {b}, 16")]
    em.define(ins, [from_bits(em, w, dst.elem) for w in words])


# -- OpExtractSubArrayQCOM ------------------------------------------------------------------------
def supported_k(profile) -> list:
    """The K sizes (A columns, B rows) of the profile's property table."""
    if profile.coopmat is None:
        return list(QCOM_K)
    return sorted({p.K for p in profile.coopmat + (profile.flexible or [])})


def feeds_matrix(em, rid) -> bool:
    """Whether value rid may become the Source Array of an OpCompositeConstructCoopMatQCOM (traced
    through copies, phis, selects and whole-variable stores and loads)."""
    seen, todo = set(), [rid]
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        for u in em.users.get(x, ()):
            op = u.opname
            if op == CONSTRUCT:
                return True
            if op in ("OpCopyObject", "OpCopyLogical", "OpPhi", "OpSelect") and u.result is not None:
                todo.append(u.result)
            elif op == "OpStore" and len(u.operands) > 1 and u.operands[1] == x:
                var = u.operands[0]
                todo.extend(ld.result for ld in em.users.get(var, ())
                            if ld.opname == "OpLoad" and ld.operands[0] == var)
    return False


@rule(SUBARRAY)
def _sub_array(em, ins):
    src_id, start_id = ins.operands[0], ins.operands[1]
    src, dst = em.value_type(src_id), em.rtype(ins)
    why = array_problem(src, "the Source Array") or array_problem(dst, "the Result Type")
    if why:
        raise SpirvError(why, **ins.where())
    if dst.elem.key() != src.elem.key():
        raise SpirvError(f"the Result Type {describe(dst)} must have the element type of the Source "
                         f"Array {describe(src)}", **ins.where())
    st = em.value_type(start_id)
    if not (isinstance(st, Scalar) and st.kind == "int" and st.width == 32):
        raise SpirvError(f"the Start Index must be a 32-bit integer; it is {describe(st)}", **ins.where())
    n, L = src.length, dst.length
    if L > n:
        raise SpirvError(f"the Result Type {describe(dst)} is longer than the Source Array "
                         f"{describe(src)}", **ins.where())
    ks = supported_k(em.profile) if feeds_matrix(em, ins.result) else []
    kwords = " or ".join(map(str, ks))
    vals = em.vals(src_id)
    if em.spec.is_const(start_id):
        s = int(em.spec.scalar_const(start_id))
        s = s - (1 << 32) if s >= 1 << 31 else s        # Start Index is a signed 32-bit integer
        if s < 0 or s + L > n:
            raise SpirvError(f"Start Index {s} and the Result's {L} elements reach outside the "
                             f"Source Array {describe(src)}", **ins.where())
        if ks and not any(s % k == 0 for k in ks):
            raise SpirvError(f"the sub-array feeds a cooperative matrix, so its Start Index must be a "
                             f"multiple of a supported K ({kwords}); it is {s}", **ins.where())
        em.define(ins, vals[s:s + L])
        return
    s = em.cast_int(em.val(start_id), 32, 64, True)
    # unsigned: a negative start is out of range too
    em.fail_if(em.op(f"icmp ugt i64 {s}, {n - L}"), ins,
               f"Start Index {{d}} and the Result's {L} elements reach outside the Source Array "
               f"{describe(src)}", details=(s,))
    if ks:
        bad = None                   # a multiple of none of the supported K
        for k in ks:
            off = em.op(f"icmp ne i64 {em.op(f'urem i64 {s}, {k}')}, 0")
            bad = off if bad is None else em.op(f"and i1 {bad}, {off}")
        em.fail_if(bad, ins, f"the sub-array feeds a cooperative matrix, so its Start Index must be a "
                             f"multiple of a supported K ({kwords}); it is {{d}}", details=(s,))
    # the source in a stack array, the result's leaves loaded from it from the start on (in
    # range: checked above)
    et = ty(src.elem)
    arr = em.fn.alloca(f"[{n} x {et}]", "sub")

    def element(i):
        return em.op(f"getelementptr [{n} x {et}], ptr {arr}, i64 0, i64 {i}")

    for i, v in enumerate(vals):
        em.emit(f"store {et} {v}, ptr {element(i)}")
    at = [s] + [em.op(f"add i64 {s}, {j}") for j in range(1, L)]
    em.define(ins, [em.op(f"load {et}, ptr {element(i)}") for i in at])


# -- `jitcoop check` ------------------------------------------------------------------------------
def check_rows(m, spec, profile, W) -> list:
    """(kind, what, byte offset, problem or None) rows for `jitcoop check`: whether the profile's
    device exposes the extension, the construct/extract rules against its subgroup size and
    sizes, and the Vulkan environment's rules for OpExtractSubArrayQCOM (VUIDs 12352-12354:
    Source length an advertised NSize, Result length an advertised KSize, a constant Start
    Index a multiple of the Result length)."""
    if CAPABILITY not in m.capabilities:
        return []
    rows = [("ext", "VK_QCOM_cooperative_matrix_conversion", 0,
             None if profile.name in QCOM_PROFILES else
             f"the {profile.name} profile's device does not expose VK_QCOM_cooperative_matrix_conversion "
             f"(jitcoop still runs the instructions, with this profile's sizes)")]
    sg = profile.subgroup_size
    table = None if profile.coopmat is None else profile.coopmat + (profile.flexible or [])
    for f in m.functions.values():
        for b in f.blocks:
            for ins in b.instrs:
                op = ins.opname
                try:
                    if op in (CONSTRUCT, EXTRACT):
                        src = spec.type(_operand_type(m, ins))
                        res = spec.type(ins.result_type)
                        t, a = (res, src) if op == CONSTRUCT else (src, res)
                        what = (f"construct {describe(t)} from {describe(a)}" if op == CONSTRUCT else
                                f"extract {describe(a)} from {describe(t)}")
                        why = conversion_problem(t, a, sg, "the array")
                        if why is None:
                            why = profile.coopmat_problem(t, W)
                        rows.append(("qcom", what, ins.offset, why))
                    elif op == SUBARRAY:
                        src = spec.type(_operand_type(m, ins))
                        res = spec.type(ins.result_type)
                        rows.append(("qcom", f"extract sub-array {describe(res)} from {describe(src)}",
                                     ins.offset, _subarray_vuids(spec, ins, src, res, table)))
                except SpirvError as e:
                    rows.append(("qcom", op, ins.offset, str(e)))
    return rows


def _operand_type(m, ins) -> int:
    """The type id of an instruction's first operand, or a SpirvError naming it."""
    d = m.all_defs.get(ins.operands[0])
    if d is None or d.result_type is None:
        raise SpirvError(f"%{ins.operands[0]} is not a value", **ins.where())
    return d.result_type


def _subarray_vuids(spec, ins, src, res, table) -> str | None:
    why = array_problem(src, "the Source Array") or array_problem(res, "the Result Type")
    if why:
        return why
    if table is not None:
        ns = sorted({p.N for p in table})
        ks = sorted({p.K for p in table})
        if src.length not in ns:
            return (f"Vulkan: the Source Array length {src.length} must be an advertised NSize "
                    f"({', '.join(map(str, ns))})")
        if res.length not in ks:
            return (f"Vulkan: the Result length {res.length} must be an advertised KSize "
                    f"({', '.join(map(str, ks))})")
    start = ins.operands[1]
    if spec.is_const(start):
        s = int(spec.scalar_const(start))
        if s % res.length:
            return f"Vulkan: the Start Index {s} must be a multiple of the Result length {res.length}"
    return None
