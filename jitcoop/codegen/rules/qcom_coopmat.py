"""SPV_QCOM_cooperative_matrix_conversion, with the rules of the SPIR-V extension text (rev 1).

- OpBitCastArrayQCOM and OpExtractSubArrayQCOM are per-lane: an array value is a list of leaves,
  so they are bit moves between leaves (and, for a start index only known at run time, a copy
  through a small scratch array).
- OpCompositeConstructCoopMatQCOM and OpCompositeExtractCoopMatQCOM move data between the
  invocations of a subgroup (line i of the matrix is invocation i's array), so they are
  collectives: the scheduler gathers the waiting subgroup's per-lane arrays into a dense matrix and
  scatters it into the fragments through the profile's lane layout (jitcoop.kernels.qcom), or the
  reverse.

Where the Vulkan proposal and the SPIR-V text differ, the SPIR-V text rules (README, "Cooperative
matrix conversions"). The Vulkan environment's extra rules for OpExtractSubArrayQCOM (lengths in
the property table, start a multiple of the result length) are reported by `jitcoop check`
(`check_rows`), not enforced.
"""
from __future__ import annotations

from ...errors import SpirvError
from ...spirv.types import Array, CoopMat, Scalar, describe, size_of
from ..emitter import nb_type
from . import collective, rule
from .common import from_bits
from .khr_coopmat import check_scope, mat_type, scope_size, source_table_of

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


# -- generated-code helpers -----------------------------------------------------------------------
_IMPORT = "from jitcoop.kernels import qcom as qc"


def _kernels(em):
    """Make jitcoop.kernels.qcom reachable as `qc` from the generated module."""
    if _IMPORT not in em.globals:
        em.globals.insert(0, _IMPORT)


def _slot_rows(em, rows) -> tuple[str, str]:
    """Per-lane slot rows `S_<tag>[k]` of an array's leaves -> (slot array name, name of a constant
    int64 array of the rows)."""
    tags, ks = set(), []
    for r in rows:
        name, _, k = r.partition("[")
        if not name.startswith("S_") or not k.endswith("]") or not k[:-1].isdigit():
            raise AssertionError(f"unexpected slot row {r!r}")
        tags.add(name)
        ks.append(int(k[:-1]))
    if len(tags) != 1:
        raise AssertionError(f"array leaves in slots of different dtypes: {sorted(tags)}")
    return tags.pop(), em.const_array(ks)


def _dtype(s: Scalar) -> str:
    return nb_type(s)[3:]


# -- OpCompositeConstructCoopMatQCOM / OpCompositeExtractCoopMatQCOM -----------------------------------
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
    _kernels(em)
    inv = scope_size(em, t)
    check_scope(em, ins, wait, t)
    S, idx = _slot_rows(em, em.coll_arrays(ins.operands[0]))
    d = em.dense(em.W // inv, t.rows * t.cols, _dtype(t.elem))
    by_col = t.use == 1
    args = f"state, {wait}, {inv}, {S}, {idx}, {t.rows}, {t.cols}, {by_col}"
    p = packing(t, a)
    if p is None:
        em.line(f"qc.lines_to_dense({args}, {d})")
    else:
        em.line(f"qc.unpack({args}, {p[0]}, {p[1]}, {d})")
    em.line(f"cm.scatter(state, {wait}, {inv}, {d}, {em.table(t.layout)}, {em.coll_result_block(ins)})")
    em.line(f"sg_resume(state, {wait}, {resume})")


@collective(EXTRACT)
def _extract(em, ins, wait, resume):
    t = mat_type(em, ins.operands[0], ins, "the Source Cooperative Matrix")
    a = em.rtype(ins)
    why = conversion_problem(t, a, em.sg, "the Result Type")
    if why:
        raise SpirvError(why, **ins.where())
    _kernels(em)
    inv = scope_size(em, t)
    check_scope(em, ins, wait, t)
    d = em.dense(em.W // inv, t.rows * t.cols, _dtype(t.elem))
    # isint False: the fragment's own dtype, bits kept (no sign extension or float64)
    em.line(f"cm.gather_src(state, {wait}, {inv}, {em.coll_block(ins.operands[0])}, "
            f"{source_table_of(em, t.layout)}, {d}, False, 0, False)")
    S, idx = _slot_rows(em, em.coll_result(ins))
    by_col = t.use == 1
    args = f"state, {wait}, {inv}, {d}, {t.rows}, {t.cols}, {by_col}"
    p = packing(t, a)
    if p is None:
        em.line(f"qc.dense_to_lines({args}, {S}, {idx})")
    else:
        em.line(f"qc.pack({args}, {p[0]}, {S}, {idx})")
    em.line(f"sg_resume(state, {wait}, {resume})")


# -- OpBitCastArrayQCOM ---------------------------------------------------------------------------
def _bits(v: str, s: Scalar) -> str:
    """The bit pattern of a leaf as an np.uint64 (float16 NaN payloads kept)."""
    if s.kind == "int":
        return f"np.uint64(np.uint32({v}))"
    if s.width == 32:
        return f"np.uint64(f32_bits({v}))"
    return f"np.uint64(qc.f16_bits({v}))"


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
    _kernels(em)
    vals = em.vals(ins.operands[0])
    bits = [_bits(v, src.elem) for v in vals]
    sw, dw = src.elem.width, dst.elem.width
    if sw == dw:
        words = bits
    elif sw == 16:                   # two float16 per 32-bit word, the first in the low half
        words = [f"({bits[2 * i]} | ({bits[2 * i + 1]} << np.uint64(16)))" for i in range(len(bits) // 2)]
    else:
        words = [w for b in bits for w in (f"({b} & np.uint64(0xFFFF))", f"({b} >> np.uint64(16))")]
    em.define(ins, [from_bits(w, dst.elem) for w in words])


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
    t = em.tmp("s")
    em.line(f"{t} = np.int64(np.int32({em.val(start_id)}))")
    em.line(f"if {t} < 0 or {t} > {n - L}:")
    em.line("    " + em.fail(ins, f"Start Index {{d}} and the Result's {L} elements reach outside the "
                                  f"Source Array {describe(src)}", t))
    if ks:
        em.line(f"if {' and '.join(f'{t} % {k} != 0' for k in ks)}:")
        em.line("    " + em.fail(ins, f"the sub-array feeds a cooperative matrix, so its Start Index must "
                                      f"be a multiple of a supported K ({kwords}); it is {{d}}", t))
    d = em.dense(1, n, _dtype(src.elem))
    for i, v in enumerate(vals):
        em.line(f"{d}[0, {i}] = {v}")
    em.define(ins, [f"{d}[0, {t} + {j}]" for j in range(L)])


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
                        src = spec.type(m.all_defs[ins.operands[0]].result_type)
                        res = spec.type(ins.result_type)
                        t, a = (res, src) if op == CONSTRUCT else (src, res)
                        what = (f"construct {describe(t)} from {describe(a)}" if op == CONSTRUCT else
                                f"extract {describe(a)} from {describe(t)}")
                        why = conversion_problem(t, a, sg, "the array")
                        if why is None:
                            why = profile.coopmat_problem(t, W)
                        rows.append(("qcom", what, ins.offset, why))
                    elif op == SUBARRAY:
                        src = spec.type(m.all_defs[ins.operands[0]].result_type)
                        res = spec.type(ins.result_type)
                        rows.append(("qcom", f"extract sub-array {describe(res)} from {describe(src)}",
                                     ins.offset, _subarray_vuids(spec, ins, src, res, table)))
                except SpirvError as e:
                    rows.append(("qcom", op, ins.offset, str(e)))
    return rows


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
