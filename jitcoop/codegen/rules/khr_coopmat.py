"""SPV_KHR_cooperative_matrix.

An invocation holds its fragment of a cooperative matrix as an ordinary per-lane composite (a
CoopMat is a Vector of OpCooperativeMatrixLengthKHR components), so element access, arithmetic,
conversions between types of the same lane layout, OpPhi/OpSelect, function parameters and
Function/Private variables are the core rules. The instructions that see the whole matrix
(load, store, MulAdd, and conversions between types whose layouts differ) are collective: lanes
stop before them and the scheduler runs one kernel of jitcoop.kernels.coopmat per instruction
over every scope instance waiting there, after checking the whole instance is.
"""
from __future__ import annotations

import numpy as np

from ...devices import type_name
from ...errors import SpirvError
from ...kernels import codes as K
from ...spirv.types import CoopMat, Scalar, describe, size_of
from .. import matrix_loads
from ..lanevec import _const_vec
from . import REWRITES, collective, pure, rule
from .common import int_operand

CM = "jitcoop.kernels.coopmat"

_FMT = {("float", 32, ""): K.F32, ("float", 64, ""): K.F64, ("float", 16, ""): K.F16,
        ("float", 16, "bf16"): K.BF16, ("float", 8, "e4m3"): K.E4M3, ("float", 8, "e5m2"): K.E5M2}
_INT = {(8, True): K.S8, (8, False): K.U8, (16, True): K.S16, (16, False): K.U16,
        (32, True): K.S32, (32, False): K.U32, (64, True): K.S64, (64, False): K.U64}

# Cooperative Matrix Operands
A_SIGNED, B_SIGNED, C_SIGNED, R_SIGNED, SATURATE = 1, 2, 4, 8, 16


def fmt_of(s: Scalar) -> int:
    if s.kind == "float":
        return _FMT[("float", s.width, s.encoding)]
    return _INT[(s.width, s.signed)]


def mat_type(em, vid, ins, what) -> CoopMat:
    t = em.value_type(vid)
    if not isinstance(t, CoopMat):
        raise SpirvError(f"{what} must be a cooperative matrix", **ins.where())
    return t


def scope_size(em, t: CoopMat) -> int:
    return em.sg if t.scope == 3 else em.W


def _scope_words(t):
    return "subgroup" if t.scope == 3 else "workgroup"


def check_scope(em, ins, wait, t):
    """Every invocation of a scope instance must reach a cooperative instruction together."""
    inv = scope_size(em, t)
    # when every lane of the workgroup waits here (`conv`), no instance lacks a lane
    found = em.local("i64", "-1", "scope")
    with em.when(em.op(f"xor i1 {em.conv}, true")):
        found.set(em.op(f"call i64 {em.helper('check_scope')}(ptr {em.state}, i64 {em.W}, i32 {wait}, i64 {inv})"))
    bad = found.get()
    em.fail_lane(ins, em.op(f"icmp sge i64 {bad}, 0"),
                 f"cooperative matrix instruction reached by only part of its {_scope_words(t)} "
                 f"(scope instance of {inv} invocations): lane {{d}} is not there (it has finished or "
                 f"waits elsewhere); real hardware gives undefined results", bad, bad)


def check_uniform(em, ins, wait, t, row, what, vid=None):
    """An operand (in per-lane row `row`) must be the same in every lane of a scope instance;
    one computed once per workgroup (vid a constant or hoisted value) is by construction."""
    if (vid is not None and em._uniform_operand(vid)) or em.invariant:
        return                  # a lane-invariant kernel's operands are lane 0's, broadcast
    inv = scope_size(em, t)
    bad = em.op(f"call i64 {em.helper('check_uniform')}(ptr {em.state}, i64 {em.W}, i32 {wait}, i64 {inv}, "
                f"ptr {row.ptr})")
    em.fail_lane(ins, em.op(f"icmp sge i64 {bad}, 0"),
                 f"the {what} operand of a cooperative matrix instruction must be dynamically uniform "
                 f"in its {_scope_words(t)}; lane {{d}} has a different value", bad, bad)


@rule("OpCooperativeMatrixLengthKHR")
def _length(em, ins):
    t = em.spec.type(ins.operands[0])
    if not isinstance(t, CoopMat):
        raise SpirvError("OpCooperativeMatrixLengthKHR takes a cooperative matrix type", **ins.where())
    em.define(ins, [str(t.n)])


pure("OpCooperativeMatrixLengthKHR")


# -- load and store -------------------------------------------------------------------------------

def _layout_operand(em, ins, lid):
    if not em.spec.is_const(lid):
        raise SpirvError("MemoryLayout must be a constant instruction", **ins.where())
    v = int(em.spec.scalar_const(lid))
    if v not in (0, 1):
        raise SpirvError(f"MemoryLayout {v} is not RowMajorKHR (0) or ColumnMajorKHR (1)", **ins.where())
    return v


def _memory_access(em, ins, ptr_id, t, layout_id, stride_id, wait, block, store):
    p = em.ptr(ptr_id, ins)
    if p.kind != "mem":
        raise SpirvError("a cooperative matrix load or store needs a pointer into memory "
                         "(StorageBuffer, PhysicalStorageBuffer or Workgroup)", **ins.where())
    if p.storage not in ("StorageBuffer", "PhysicalStorageBuffer", "Workgroup", "Uniform"):
        raise SpirvError(f"cooperative matrix {'store to' if store else 'load from'} {p.storage} "
                         "memory is not allowed", **ins.where())
    col_major = _layout_operand(em, ins, layout_id)
    if stride_id is None:
        raise SpirvError("RowMajorKHR and ColumnMajorKHR need the Stride operand", **ins.where())
    int_operand(em, ins, stride_id, "Stride")
    psize = size_of(p.pointee)
    if psize <= 0:
        raise SpirvError("the Pointer must point to a scalar or vector element of an array", **ins.where())
    inv = scope_size(em, t)
    check_scope(em, ins, wait, t)
    # the load and store read the pointer and stride of each instance's first lane (the rest
    # must be the same: check_uniform)
    addr = em.coll_i64(ptr_id, inv)
    stride = em.coll_i64(stride_id, inv)
    check_uniform(em, ins, wait, t, addr, "Pointer", ptr_id)
    check_uniform(em, ins, wait, t, stride, "Stride", stride_id)
    lo, hi = root_bounds(em, p)
    fn = "store" if store else "load"
    run = K.run_length(t.layout.table, t.rows, t.cols, col_major)
    fmt = fmt_of(t.elem)
    want = not store and ins.result in f64_shadow_wanted(em)
    helper, shadowed = matrix_loads.function_for(em, t, inv, run, psize, fmt, block.llvm, bool(col_major),
                                                 store, want)
    if helper is not None:
        extra = ""
        if shadowed:
            extra = f", ptr {_shadow_block(em, ins.result, block).ptr}"
        bad = em.op(f"call i64 {helper}(ptr {em.state}, i32 {wait}, ptr {block.ptr}, ptr {addr.ptr}, "
                    f"ptr {stride.ptr}, i64 {lo}, i64 {hi}, ptr %ranges, i64 %nranges, ptr {em.info_array().ptr}"
                    f"{extra})")
    else:
        bad = em.lib(f"{CM}:{fn}", [em.state_arr(), ("i64", str(wait)), ("i64", str(inv)), block, em.table(t.layout),
                                    ("i64", str(t.rows)), ("i64", str(t.cols)), addr, stride, ("i64", str(psize)),
                                    ("i64", str(t.elem.size)), ("i64", str(col_major)), ("i64", str(fmt)),
                                    ("i64", lo), ("i64", hi), em.ranges_arr(), em.info_array(), ("i64", str(run))], ins)
    where = p.root_name or "its object" if p.root is not None else "any buffer"
    rule_words = "Stride must be positive" if store else "Stride must not be negative"
    em.fail_lane(ins, em.op(f"icmp sge i64 {bad}, 0"),
                 f"cooperative matrix {fn} of a {describe(t)} reaches outside {where}: {{e}} bytes "
                 f"from byte offset {{d}} (rows x Stride x {psize}-byte pointee; {rule_words})",
                 bad, em.info_at(0), em.info_at(1))


# -- float64 shadows of MulAdd operands ----------------------------------------------------------------
# A MulAdd with exact numerics sums in float64, so each call converted its A and B fragments
# (float32 slots) into float64 copies first: in a register-tiled GEMM every loaded tile is an
# operand of several MulAdds and was converted once for each, and the copy was read back by
# broadcasts right after its stores (an 8 x 8 x 8 MulAdd: 120-130 cycles with the copies, about
# 82 without). A load whose result some such MulAdd takes as A or B writes a float64 copy of its
# fragments beside them, slot for slot, as it loads (the shadow); the MulAdds read the shadow as
# their operand. SSA makes that safe: the shadow of value v is written where v is defined, every
# use of v is dominated by that definition, and a value that shares v's fragment rows (so its
# shadow too) is never live at the same time. Subgroup scope only: a workgroup matrix is one
# MulAdd's operand, whose conversion is under 1% of that MulAdd's work, and its copy (32 KB for
# a 128 x 32 tile) cost more than it saved (the wg_arrays GEMM 3.5-6% slower with it).

def f64_shadow_wanted(em) -> set:
    """The ids of the matrices that are A or B of a subgroup MulAdd summing in float64 from
    32-bit or narrower float slots (computed once per kernel)."""
    got = em.f64_shadow_ids
    if got is None:
        got = set()
        if numerics(em) == K.EXACT:
            for b in em.ff.blocks:
                for ins in b.instrs:
                    if ins.opname != "OpCooperativeMatrixMulAddKHR":
                        continue
                    try:
                        a, bt, c, r, _ = muladd_types(em, ins)
                    except SpirvError:
                        continue            # reported where the MulAdd is generated
                    if (r.elem.kind == "float" and a.elem.width <= 32 and bt.elem.width <= 32
                            and r.scope == 3):
                        got.update(ins.operands[:2])
        em.f64_shadow_ids = got
    return got


def _shadow_block(em, vid, block):
    """The float64 block [length, W] beside fragment block `block`, recorded as value vid's shadow
    (one per fragment block: values that share fragment rows are never live together)."""
    from ..collectives import Arr
    name = "sh" + block.ptr.lstrip("%").replace(".", "_").replace('"', "")
    arr = Arr(em.work_array(name, "double", block.shape[0] * em.W), "f64", block.shape)
    em.f64_shadows[vid] = arr
    return arr


def shadow_after_load(em, vid, block):
    """For a load whose movers do not write float64 shadows (a tensor load: generated movers or
    the library's element path): where a MulAdd summing in float64 takes vid as A or B, its
    shadow converted from the loaded fragments, once, after the load (each lane's fragments:
    a lane not at this load holds a value of these rows whose shadow is its conversion too).
    A 2 x 2 register tile reads each operand twice: the coopmat2 GEMM sg_tensor at 1024^3 with
    exact numerics 50-53 -> 62 GFLOP/s on 2 threads."""
    if vid not in f64_shadow_wanted(em) or block.llvm != "float":
        return
    sh = _shadow_block(em, vid, block)
    em.emit(f"call void {em._widen_helper('float', False)}(ptr {sh.ptr}, ptr {block.ptr}, "
            f"i64 {block.shape[0] * em.W})")


def root_bounds(em, p) -> tuple[str, str]:
    """(start, end) i64 operands of the object a pointer points into; (0, 0) when unknown."""
    if p.root is None:
        return "0", "0"
    base, size = p.root
    return base, em.op(f"add i64 {base}, {size}")


@collective("OpCooperativeMatrixLoadKHR")
def _load(em, ins, wait, resume):
    t = em.rtype(ins)
    if not isinstance(t, CoopMat):
        raise SpirvError("the Result Type of OpCooperativeMatrixLoadKHR must be a cooperative matrix",
                         **ins.where())
    o = ins.operands
    stride = o[2] if len(o) > 2 and ins.kinds[2] == "IdRef" else None
    block = em.coll_result_block(ins)
    _memory_access(em, ins, o[0], t, o[1], stride, wait, block, store=False)
    em.resume_lanes(wait, resume)


@collective("OpCooperativeMatrixStoreKHR")
def _store(em, ins, wait, resume):
    o = ins.operands
    t = mat_type(em, o[1], ins, "Object")
    stride = o[3] if len(o) > 3 and ins.kinds[3] == "IdRef" else None
    if em.ptr(o[0], ins).storage == "Uniform":
        raise SpirvError("cooperative matrix store to read-only Uniform memory", **ins.where())
    block = em.coll_block(o[1])
    _memory_access(em, ins, o[0], t, o[2], stride, wait, block, store=True)
    em.meta.writes_physical = em.meta.writes_physical or em.ptr(o[0], ins).root is None
    em.resume_lanes(wait, resume)


# -- MulAdd ---------------------------------------------------------------------------------------

def muladd_types(em, ins):
    """Validate an OpCooperativeMatrixMulAddKHR: (A, B, C, Result types, operand flags)."""
    o = ins.operands
    a = mat_type(em, o[0], ins, "A")
    b = mat_type(em, o[1], ins, "B")
    c = mat_type(em, o[2], ins, "C")
    r = em.rtype(ins)
    if not isinstance(r, CoopMat):
        raise SpirvError("the Result Type of a MulAdd must be a cooperative matrix", **ins.where())
    flags = o[3] if len(o) > 3 else 0
    if not isinstance(flags, int):
        flags = 0
    for m, use, what in ((a, 0, "A"), (b, 1, "B"), (c, 2, "C"), (r, 2, "Result Type")):
        if m.use != use:
            raise SpirvError(f"{what} of a MulAdd must have Use "
                             f"{('MatrixAKHR', 'MatrixBKHR', 'MatrixAccumulatorKHR')[use]}; it is "
                             f"{describe(m)}", **ins.where())
    M, N, K_ = r.rows, r.cols, a.cols
    if (a.rows, b.rows, b.cols, c.rows, c.cols) != (M, K_, N, M, N):
        raise SpirvError(f"MulAdd shapes do not agree: A {a.rows}x{a.cols}, B {b.rows}x{b.cols}, "
                         f"C {c.rows}x{c.cols}, Result {M}x{N} (need MxK, KxN, MxN, MxN)", **ins.where())
    if len({a.scope, b.scope, c.scope, r.scope}) != 1:
        raise SpirvError("A, B, C and the Result Type of a MulAdd must have the same scope", **ins.where())
    for bit, m, what in ((A_SIGNED, a, "A"), (B_SIGNED, b, "B"), (C_SIGNED, c, "C"), (R_SIGNED, r, "Result")):
        if flags & bit and m.elem.kind != "int":
            raise SpirvError(f"Matrix{what}SignedComponentsKHR on a matrix of {m.elem} components "
                             "(only integer matrices take it)", **ins.where())
    kinds = {m.elem.kind for m in (a, b, c, r)}
    if len(kinds) != 1:
        raise SpirvError("MulAdd of integer and floating-point matrices together is not supported "
                         f"({describe(a)}, {describe(b)}, {describe(c)} -> {describe(r)})", **ins.where())
    if flags & SATURATE and r.elem.kind != "int":
        raise SpirvError("SaturatingAccumulationKHR on a floating-point MulAdd", **ins.where())
    why = em.profile.muladd_problem(M, N, K_, *(type_name(m.elem) for m in (a, b, c, r)),
                                    bool(flags & SATURATE), r.scope, em.W)
    if why:
        raise SpirvError(why, **ins.where())
    return a, b, c, r, flags


NUMERICS = {"exact": K.EXACT, "nvidia": K.NVIDIA, "float32": K.FLOAT32}


def numerics(em):
    return NUMERICS[em.options.numerics]


def source_table_of(em, layout):
    """The constant [2, rows * cols] saying which (e, lane) each element of a fragment's dense
    form is read from (kernels.coopmat.source_table)."""
    src = K.source_table(layout.table).astype(np.int32)
    from ..collectives import Arr
    return Arr(em.const_blob(src), "i32", src.shape)


def gather(em, wait, inv, t: CoopMat, block, signed=None, dtype=None) -> str:
    """Dense copies [instances, rows * cols] of a fragment operand (float64 for floats, int64
    sign- or zero-extended for integers, unless `dtype` says otherwise); returns the array's name."""
    ninst = em.W // inv
    isint = t.elem.kind != "float"
    if dtype is None:
        dtype = "i64" if isint else "f64"
    d = em.dense(ninst, t.rows * t.cols, dtype)
    sg = bool(t.elem.signed if signed is None else signed) if isint else False
    flags = [("b", _b(isint)), ("i64", str(t.elem.width)), ("b", _b(sg))]
    head = [em.state_arr(), ("i64", str(wait)), ("i64", str(inv)), block]
    n = t.rows * t.cols
    striped = K.is_striped(t.layout.table, n)
    conv = None if isint else _convert(block.llvm, d.llvm)
    if conv is not None:
        _gather_here(em, wait, inv, n, None if striped else source_table_of(em, t.layout), block, d, conv)
    elif striped:
        em.lib(f"{CM}:gather_striped", head + [d] + flags)
    else:
        em.lib(f"{CM}:gather_src", head + [source_table_of(em, t.layout), d] + flags)
    return d


def _gather_here(em, wait, inv, n, src, block, d, conv):
    """gather's loops for float fragments, generated: a striped layout (src None) copies a
    fragment row at a time (consecutive loads and stores, converted in vector registers), any
    other reads dense element k from fragment row src[0, k], lane src[1, k]. The library's loops
    took about 1 ns an element (flash attention's reductions: 31% of its time with scatter).
    One function per shape and types, out of line (inlined at each site, flash attention's
    cold compile took 1.6 -> 2.8-4.2 s)."""
    name = f"@jc.gather.{'s' if src is None else 't'}.{block.llvm}.{d.llvm}.n{n}.i{inv}"

    def build():
        def instance(base, q):
            out = em.op(f"getelementptr {d.llvm}, ptr %dense, i64 {em.op(f'mul i64 {q}, {n}')}")
            if src is None:
                with em.loop(n // inv, hint="ge") as e:
                    row = em.op(f"getelementptr {block.llvm}, ptr %frag, i64 {_mad(em, e, em.W, base)}")
                    dst = em.op(f"getelementptr {d.llvm}, ptr {out}, i64 {em.op(f'mul i64 {e}, {inv}')}")
                    with em.loop(inv, hint="gl") as l:
                        em.store_at(dst, d.llvm, l, conv(em, em.load_at(row, block.llvm, l)))
                return
            with em.loop(n, hint="gk") as k:
                e = em.op(f"sext i32 {em.load_at('%tab', 'i32', k)} to i64")
                lane = em.op(f"sext i32 {em.load_at('%tab', 'i32', em.op(f'add i64 {k}, {n}'))} to i64")
                x = em.load_at("%frag", block.llvm, _mad(em, e, em.W, em.op(f"add i64 {base}, {lane}")))
                em.store_at(out, d.llvm, k, conv(em, x))
        em.for_instances(inv, "%wait", instance)
    em.out_of_line(name, ["ptr %state", "i32 %wait", "ptr %frag", "ptr %dense", "ptr %tab"], build)
    em.emit(f"call void {name}(ptr {em.state}, i32 {wait}, ptr {block.ptr}, ptr {d.ptr}, "
            f"ptr {'null' if src is None else src.ptr})")


def _mad(em, a, b, c) -> str:
    """a x b + c (i64)."""
    return em.op(f"add i64 {em.op(f'mul i64 {a}, {b}')}, {c}")


def _vt(t: str, n: int) -> str:
    """LLVM type t, or a vector of n of them."""
    return t if n == 1 else f"<{n} x {t}>"


def _splat_of(t: str, v, n: int) -> str:
    """The constant v of type t, or a vector of n of them."""
    return str(v) if n == 1 else _const_vec(n, t, v)


def _convert(src: str, dst: str, n: int = 1):
    """(em, value) -> value converting an element (or a vector of n) between LLVM types as the
    kernel library's array assignments do (floats rounded to nearest even, integers truncated);
    None for a pair it does not cover."""
    S, D = _vt(src, n), _vt(dst, n)
    if src == dst:
        return lambda em, x: x
    if (src, dst) == ("float", "double"):
        return lambda em, x: em.op(f"fpext {S} {x} to {D}")
    if (src, dst) == ("double", "float"):
        return lambda em, x: em.op(f"fptrunc {S} {x} to {D}")
    if src == "i64" and dst in ("i8", "i16", "i32"):
        return lambda em, x: em.op(f"trunc {S} {x} to {D}")
    return None


def _b(x) -> str:
    return "true" if x else "false"


def scatter(em, wait, inv, t: CoopMat, dense, block, rounding=None):
    """Dense matrices -> the fragments of a result of type t (every replica), in generated loops
    where the element types allow (a fragment row at a time: consecutive stores, the dense
    elements read through the layout's table turned [element, invocation]), else the library's.
    `rounding` (F16 or BF16): each element rounded to that format on the way (round_16; generated
    loops only)."""
    n = t.rows * t.cols
    striped = K.is_striped(t.layout.table, n)
    # striped: fragment row e is dense elements e x inv .. e x inv + inv - 1, moved as one vector
    width = inv if striped else 1
    conv = _convert(dense.llvm, block.llvm, width)
    if conv is not None and rounding is not None:
        plain = conv
        conv = lambda em, x: plain(em, round_16(em, x, dense.llvm, rounding, width))
    if conv is None:
        head = [em.state_arr(), ("i64", str(wait)), ("i64", str(inv)), dense]
        if striped:
            em.lib(f"{CM}:scatter_striped", head + [block])
        else:
            em.lib(f"{CM}:scatter", head + [em.table(t.layout), block])
        return
    L = t.layout.length
    name = f"@jc.scatter.{'s' if striped else 't'}.{dense.llvm}.{block.llvm}.n{n}.i{inv}.l{L}{f'.r{rounding}' if rounding is not None else ''}"

    def build():
        def instance(base, q):
            d = em.op(f"getelementptr {dense.llvm}, ptr %dense, i64 {em.op(f'mul i64 {q}, {n}')}")
            with em.loop(L, hint="se") as e:
                dst = em.op(f"getelementptr {block.llvm}, ptr %frag, i64 {_mad(em, e, em.W, base)}")
                row = em.op(f"mul i64 {e}, {inv}")
                if striped:
                    # one vector a row (left to LLVM, the unrolled copy with float16 rounding was
                    # vectorized across rows into gathers and scatters, or not at all)
                    src = em.op(f"getelementptr {dense.llvm}, ptr {d}, i64 {row}")
                    v = em.op(f"load {_vt(dense.llvm, inv)}, ptr {src}, align 4")
                    em.emit(f"store {_vt(block.llvm, inv)} {conv(em, v)}, ptr {dst}, align 4")
                    return
                with em.loop(inv, hint="sl") as l:
                    k = em.op(f"sext i32 {em.load_at('%tab', 'i32', em.op(f'add i64 {row}, {l}'))} to i64")
                    em.store_at(dst, block.llvm, l, conv(em, em.load_at(d, dense.llvm, k)))
        em.for_instances(inv, "%wait", instance)
    em.out_of_line(name, ["ptr %state", "i32 %wait", "ptr %dense", "ptr %frag", "ptr %tab"], build)
    tab = "null" if striped else em.const_blob(np.ascontiguousarray(t.layout.table.T).astype(np.int32))
    em.emit(f"call void {name}(ptr {em.state}, i32 {wait}, ptr {dense.ptr}, ptr {block.ptr}, ptr {tab})")


def _int_bound(t: CoopMat, signed: bool) -> int:
    w = t.elem.width
    return 1 << (w - 1) if signed else (1 << w) - 1


def _product_ctype(a: CoopMat, b: CoopMat, K_: int, flags: int) -> int:
    """What integer A x B products are summed in: float32 or float64 where every partial sum is
    an integer their significand holds exactly (int8: K up to 1024 in float32), int64 (wrapping)
    otherwise."""
    bound = K_ * _int_bound(a, bool(flags & A_SIGNED)) * _int_bound(b, bool(flags & B_SIGNED))
    if bound <= 1 << 24:
        return K.C_F32
    if bound <= 1 << 53:
        return K.C_F64
    return K.C_I64


def _float_ctype(em, mats) -> int:
    """What float A x B products are summed in: float32 with float32 numerics where no matrix is
    wider (one fused multiply-add per product, as a CPU BLAS: products of 16-bit and narrower
    formats are exact, so only the adds round), else float64."""
    if numerics(em) == K.FLOAT32 and max(m.elem.width for m in mats) <= 32:
        return K.C_F32
    return K.C_F64


_CTYPE_NAMES = {K.C_F64: "f64", K.C_F32: "f32", K.C_I64: "i64"}


def _direct(em, inv, t: CoopMat) -> bool:
    """Whether MulAdd reads (writes) this operand in its fragments directly: a striped layout
    without replicas whose rows each lie in one fragment row."""
    return inv % t.cols == 0 and K.is_striped(t.layout.table, t.rows * t.cols)


def _const_table(em, arr):
    """An int32 array among the kernel's constants."""
    from ..collectives import Arr
    arr = np.asarray(arr, np.int32).reshape(-1)
    return Arr(em.const_blob(arr), "i32", arr.shape)


class _Placement:
    """Where each MulAdd operand is read or written (kernels.coopmat.operand tuples), the int32
    tables the TABLE operands use, and the size of the work area (dense converted copies)."""

    def __init__(self, em, inv, cname):
        self.em, self.inv, self.cname = em, inv, cname
        self.tabs = []
        self.ntab = 0
        self.work = 0

    def _region(self, n):
        off = self.work
        self.work += n
        return off

    def _table(self, arr):
        off = self.ntab
        self.tabs.append(arr.ravel())
        self.ntab += arr.size
        return off

    def read(self, t: CoopMat, signed=False, dtype=None):
        """A, B or C: in place when striped (copied to work when its type, or `dtype` where the
        fragments are read from a shadow, is not the compute type), else through its read table
        into work."""
        from ..collectives import dtype_of
        em, n = self.em, t.rows * t.cols
        if _direct(em, self.inv, t):
            woff = self._region(n) if (dtype or dtype_of(t.elem)) != self.cname else 0
            return K.operand(K.STRIPED, t.rows, t.cols, self.inv, em.W, signed, woff=woff)
        toff = self._table(K.read_table(t.layout.table, em.W))
        return K.operand(K.TABLE, t.rows, t.cols, signed=signed, toff=toff, woff=self._region(n))

    def write(self, t: CoopMat, c_op):
        """The result: in place when striped, else through work (C's copy, when C has one) and
        its write table."""
        em = self.em
        if _direct(em, self.inv, t):
            return K.operand(K.STRIPED, t.rows, t.cols, self.inv, em.W)
        wt = K.write_table(t.layout.table, em.W)
        woff = c_op[6] if c_op[0] == K.TABLE else self._region(t.rows * t.cols)
        return K.operand(K.TABLE, t.rows, t.cols, toff=self._table(wt), woff=woff,
                         count=wt.shape[1])

    def arrays(self):
        """(tables constant, work array) names for the kernel call."""
        em = self.em
        tabs = np.concatenate(self.tabs) if self.tabs else np.zeros(1, np.int32)
        return (_const_table(em, tabs), em.dense(1, max(1, self.work), self.cname))


# -- MulAdds that share A, computed together ------------------------------------------------------
# A MulAdd whose result rows fill at most one vector register (8 x 8 x 8 float32 on AVX2) holds
# a vector per row over its K loop: every FMA takes its own broadcast of an A element (80 loads
# for 64 FMAs) and eight accumulators keep the FMA units waiting on each other. acc[i][j] =
# MulAdd(ma[i], mb[j], acc[i][j]) unrolled runs two MulAdds with one A back to back; computed
# by one function (codegen/matmul.py, pair), a block holds a row of both results: one broadcast
# feeds two FMAs, twelve accumulators. The first of the two computes both; the second checks its
# scope and resumes its lanes.

def muladd_pairs(em) -> dict:
    """{id(MulAdd): ("first", second) or ("second", first)} for the pairs computed at the first:
    two float MulAdds of the same types, operand flags and A, the second reached from the first
    with no code between (Emitter.chained: every instance there has just run the first, and the
    second's operands were ready then), neither reading the other's result, every operand in slot rows and
    the second's result in none the first reads or writes (nor the first's in the second's
    operands), whose result rows fill at most a vector register (matmul.pair_wanted). Computed
    once per kernel, so that both rules agree whichever is generated first."""
    from ..matmul import pair_wanted
    got = em.muladd_pairs
    if got is not None:
        return got
    got = em.muladd_pairs = {}
    if numerics(em) == K.NVIDIA:
        return got                  # float MulAdds run the library's H100 model
    for b1 in em.collective_blocks:
        first = b1.instrs[0]
        nxt = em.chained(b1)
        if first.opname != "OpCooperativeMatrixMulAddKHR" or id(first) in got or nxt is None:
            continue
        second = em.collective_blocks[nxt].instrs[0]
        if second.opname != "OpCooperativeMatrixMulAddKHR" or id(second) in got:
            continue
        o1, o2 = first.operands, second.operands
        try:
            t1, t2 = muladd_types(em, first), muladd_types(em, second)
        except SpirvError:
            continue                # reported where each is generated
        a, b, c, r, flags = t1
        if (o1[0] != o2[0] or any(x is not y for x, y in zip(t1[:4], t2[:4])) or flags != t2[4]
                or first.result in o2[:3] or r.elem.kind != "float" or r.elem.width < 32):
            continue
        inv = scope_size(em, r)
        if not pair_wanted(r.cols, _float_ctype(em, t1[:4])) or not all(_direct(em, inv, m) for m in (b, c, r)):
            continue
        vids = (o1[0], o1[1], o1[2], first.result, o2[1], o2[2], second.result)
        if not all(em.is_resident(v) for v in vids):
            continue
        A, B1, C1, R1, B2, C2, R2 = (em.resident_block(v)[0] for v in vids)
        if R2 in (A, B1, C1, R1) or R1 in (B2, C2):
            continue
        got[id(first)] = ("first", second)
        got[id(second)] = ("second", first)
    return got


@collective("OpCooperativeMatrixMulAddKHR")
def _muladd(em, ins, wait, resume):
    a, b, c, r, flags = muladd_types(em, ins)
    o = ins.operands
    inv = scope_size(em, r)
    check_scope(em, ins, wait, r)
    pair = muladd_pairs(em).get(id(ins))
    if pair is not None and pair[0] == "second":
        em.resume_lanes(wait, resume)       # computed with the first of its pair
        return
    blocks = [em.coll_block(x) for x in o[:3]]
    out = em.coll_result_block(ins)
    M, N, K_ = r.rows, r.cols, a.cols
    ninst = em.W // inv
    if r.elem.kind == "float" and numerics(em) == K.NVIDIA:
        da, db, dc = (gather(em, wait, inv, m, blk) for m, blk in zip((a, b, c), blocks))
        em.lib(f"{CM}:mma_f", [em.state_arr(), ("i64", str(wait)), ("i64", str(inv)), da, db, dc,
                               ("i64", str(M)), ("i64", str(N)), ("i64", str(K_)), ("i64", str(fmt_of(r.elem))),
                               ("i64", str(numerics(em)))], ins)
        scatter(em, wait, inv, r, dc, out)
        em.resume_lanes(wait, resume)
        return
    is_float = r.elem.kind == "float"
    ctype = _float_ctype(em, (a, b, c, r)) if is_float else _product_ctype(a, b, K_, flags)
    cname = _CTYPE_NAMES[ctype]
    pl = _Placement(em, inv, cname)
    if ctype == K.C_F64 and is_float:
        for x in (0, 1):
            sh = em.f64_shadows.get(o[x])
            if sh is not None:
                blocks[x] = sh
    pa = pl.read(a, bool(flags & A_SIGNED), blocks[0].dtype)
    pb = pl.read(b, bool(flags & B_SIGNED), blocks[1].dtype)
    if is_float:
        # Exact products (inputs narrower than float64) make a fused multiply-add round only
        # where the separate add would. A float32 or float64 result is rounded by its store; the
        # small formats round a dense float64 result once (round_dense), then scatter it.
        fused = a.elem.width < 64 and b.elem.width < 64
        pc = pl.read(c)
        if r.elem.width >= 32:
            pr = pl.write(r, pc)
            rarr = out
        else:
            rarr = em.dense(ninst, M * N, cname)
            pr = K.operand(K.DENSE, M, N)
        tabs, work = pl.arrays()
        spec = K.mm_spec(M, N, K_, ctype, fused, pa, pb, pc, pr)
        if pair is not None:
            second = pair[1]
            b2, c2 = (em.coll_block(x) for x in second.operands[1:3])
            if ctype == K.C_F64:
                b2 = em.f64_shadows.get(second.operands[1], b2)
            r2 = em.coll_result_block(second)
            if b2.dtype == blocks[1].dtype and (c2.ptr == r2.ptr) == (blocks[2].ptr == rarr.ptr):
                _call_muladd(em, ins, wait, inv, spec, blocks[0], blocks[1], blocks[2], rarr, tabs, work,
                             (b2, c2, r2))
            else:
                # placed unlike the first's (one B has a float64 shadow, say): both, one by one
                _call_muladd(em, ins, wait, inv, spec, blocks[0], blocks[1], blocks[2], rarr, tabs, work)
                pb2 = pl.read(b, bool(flags & B_SIGNED), b2.dtype)
                spec2 = K.mm_spec(M, N, K_, ctype, fused, pa, pb2, pc, pr)
                tabs, work = pl.arrays()
                _call_muladd(em, ins, wait, inv, spec2, blocks[0], b2, c2, r2, tabs, work)
        else:
            _call_muladd(em, ins, wait, inv, spec, blocks[0], blocks[1], blocks[2], rarr, tabs, work)
        if r.elem.width < 32:
            _round_and_scatter(em, ins, wait, inv, r, rarr, out)
    elif same_layout(c, r) and _direct(em, inv, r) and not (flags & SATURATE and r.elem.width == 64):
        # The exact sum of products, then R = C + sum wrapped or saturated, in one pass.
        tabs, work = pl.arrays()
        g = K.operand(K.STRIPED, M, N, inv, em.W, bool(flags & C_SIGNED))
        spec = K.mm_spec(M, N, K_, ctype, True, pa, pb, g, K.operand(K.STRIPED, M, N, inv, em.W),
                         (r.elem.width, bool(flags & R_SIGNED), bool(flags & SATURATE)))
        _call_muladd(em, ins, wait, inv, spec, blocks[0], blocks[1], blocks[2], out, tabs, work)
    else:
        # P = A x B exactly (no C), then R = C + P wrapped or saturated.
        dp = em.dense(ninst, M * N, cname)
        tabs, work = pl.arrays()
        spec = K.mm_spec(M, N, K_, ctype, True, pa, pb, K.operand(K.NONE, M, N),
                         K.operand(K.DENSE, M, N))
        _call_muladd(em, ins, wait, inv, spec, blocks[0], blocks[1], dp, dp, tabs, work)
        sat = [("b", _b(flags & R_SIGNED)), ("b", _b(flags & SATURATE))]
        head = [em.state_arr(), ("i64", str(wait)), ("i64", str(inv))]
        if same_layout(c, r):
            em.lib(f"{CM}:combine_i_tab", head + [blocks[2], dp, out, em.table(r.layout), ("i64", str(r.elem.width)),
                                                  ("b", _b(flags & C_SIGNED)), ("i64", str(c.elem.width))] + sat, ins)
        else:
            dc = gather(em, wait, inv, c, blocks[2], bool(flags & C_SIGNED))
            em.lib(f"{CM}:combine_i", head + [dc, dp, dc, ("i64", str(r.elem.width))] + sat, ins)
            scatter(em, wait, inv, r, dc, out)
    em.resume_lanes(wait, resume)


def _round_and_scatter(em, ins, wait, inv, r: CoopMat, dense, out):
    """A small-format float result, computed dense in float64 (exact numerics) or float32, rounded
    once to its format and scattered to its fragments: float16 and bfloat16 as they are scattered
    (round_16), the other formats by the library's round_dense first. float16 accumulators went
    element by element through a library call each, 80% of a GEMM's time (6.4-8.6x a
    float32-accumulator GEMM of the same tiles; bfloat16 ones 5.9-6.5x)."""
    fmt = fmt_of(r.elem)
    if fmt in (K.F16, K.BF16) and dense.llvm in ("double", "float") and _convert(dense.llvm, out.llvm) is not None:
        scatter(em, wait, inv, r, dense, out, rounding=fmt)
        return
    em.lib(f"{CM}:round_dense", [em.state_arr(), ("i64", str(wait)), ("i64", str(inv)), dense,
                                 ("i64", str(fmt))], ins)
    scatter(em, wait, inv, r, dense, out)


def round_16(em, x: str, t: str, fmt: int, n: int = 1) -> str:
    """IR rounding x (double or float, or a vector of n) to float16 or bfloat16 (fmt), to nearest
    even, once; the result as type t. A double is first narrowed to float rounding to odd
    (truncated toward zero, the last bit set where anything was cut off): float keeps 13 more
    bits than half and 16 more than bfloat16, so the odd bit stands for whatever lay below and
    the second rounding gives the double's own nearest-even result (Boldo and Melquiond, "When
    double rounding is odd"); past float's range the odd float is FLT_MAX, which rounds to
    infinity as the double does. float -> half is F16C's conversion; float -> bfloat16 adds
    0x7FFF and the lowest kept bit and cuts, a NaN quieted with its top payload bits (as the
    library's round_bf16; from a double, its f64_to_bf16: the same bits)."""
    D, F, H, I, B = (_vt(x_, n) for x_ in ("double", "float", "half", "i32", "i1"))
    f = x
    if t == "double":
        fn = "@llvm.fabs.f64" if n == 1 else f"@llvm.fabs.v{n}f64"
        fabs = em.declare(fn, f"declare {D} {fn}({D})")
        tf = em.op(f"fptrunc {D} {x} to {F}")
        back = em.op(f"fpext {F} {tf} to {D}")
        exact = em.op(f"fcmp oeq {D} {back}, {x}")
        nan = em.op(f"fcmp uno {D} {x}, {x}")
        keep = em.op(f"or {B} {exact}, {nan}")
        ab = em.op(f"call {D} {fabs}({D} {back})")
        ax = em.op(f"call {D} {fabs}({D} {x})")
        step = em.op(f"zext {B} {em.op(f'fcmp ogt {D} {ab}, {ax}')} to {I}")    # rounded away: back one
        tb = em.op(f"bitcast {F} {tf} to {I}")
        odd = em.op(f"or {I} {em.op(f'sub {I} {tb}, {step}')}, {_splat_of('i32', 1, n)}")
        f = em.op(f"bitcast {I} {em.op(f'select {B} {keep}, {I} {tb}, {I} {odd}')} to {F}")
    if fmt == K.F16:
        h = em.op(f"fptrunc {F} {f} to {H}")
        return em.op(f"fpext {H} {h} to {_vt(t, n)}")
    c = {v: _splat_of("i32", v, n) for v in (0x7FFFFFFF, 0x7F800000, 16, 1, 0x7FFF, 0x400000, 0xFFFF0000)}
    b = em.op(f"bitcast {F} {f} to {I}")
    mag = em.op(f"and {I} {b}, {c[0x7FFFFFFF]}")
    nan = em.op(f"icmp ugt {I} {mag}, {c[0x7F800000]}")
    low = em.op(f"and {I} {em.op(f'lshr {I} {b}, {c[16]}')}, {c[1]}")
    up = em.op(f"add {I} {em.op(f'add {I} {b}, {c[0x7FFF]}')}, {low}")
    quiet = em.op(f"or {I} {b}, {c[0x400000]}")
    kept = em.op(f"select {B} {nan}, {I} {quiet}, {I} {up}")
    f = em.op(f"bitcast {I} {em.op(f'and {I} {kept}, {c[0xFFFF0000]}')} to {F}")
    return f if t == "float" else em.op(f"fpext {F} {f} to {_vt(t, n)}")


def _call_muladd(em, ins, wait, inv, spec, a, b, c, r, tabs, work, second=None):
    """R = C + A x B for every scope instance waiting here: a MulAdd function specialized on
    `spec` (jitcoop.codegen.matmul), called per instance; with `second` (its B, C and R blocks),
    the function of the pair that computes R2 = C2 + A x B2 too."""
    from ..matmul import muladd_function
    dtypes = (a.dtype, b.dtype, c.dtype, r.dtype)
    name = em.declared_muladd(spec, dtypes, muladd_function, c.ptr == r.ptr and c.dtype == r.dtype,
                              second is not None)
    more = "".join(f", ptr {x.ptr}" for x in second) if second is not None else ""
    em.for_instances(inv, wait, lambda base, q: em.emit(
        f"call void {name}(ptr {a.ptr}, ptr {b.ptr}, ptr {c.ptr}, ptr {r.ptr}, ptr {tabs.ptr}, ptr {work.ptr}, "
        f"i64 {base}, i64 {q}{more})"))


# -- conversions between lane layouts ---------------------------------------------------------------
# A conversion is component-wise on the *matrix*: element (r, c) of the result comes from (r, c)
# of the operand. When both types have the same lane layout that is the per-lane conversion of
# the fragment (the core rule); otherwise the fragment is first moved to the result's layout by a
# collective relayout, and the core rule converts that.

CONVERSIONS = ("OpFConvert", "OpConvertFToU", "OpConvertFToS", "OpConvertSToF", "OpConvertUToF",
               "OpUConvert", "OpSConvert", "OpBitcast")
RELAYOUT = "OpJitcoopRelayout"


def same_layout(a: CoopMat, b: CoopMat) -> bool:
    return (a.layout is b.layout or (a.layout.table.shape == b.layout.table.shape
                                     and (a.layout.table == b.layout.table).all()))


def relayout_type(em, src: CoopMat, dst: CoopMat, ids) -> int:
    """A type id for `src`'s components laid out like `dst` (made up: not in the module)."""
    t = CoopMat(src.elem, dst.n, dst.scope, dst.rows, dst.cols, dst.use, dst.layout)
    tid = ids.fresh()
    t.id = tid
    em.spec._types[tid] = t
    return tid


def insert_relayout(em, ids, b, i, src_t: CoopMat, dst_t: CoopMat) -> int:
    """Insert a relayout of b.instrs[i]'s operand to dst_t's layout before it; its result id."""
    from ...spirv.reader import Instruction
    tid = relayout_type(em, src_t, dst_t, ids)
    rid = ids.fresh()
    ins = b.instrs[i]
    re = Instruction(0, RELAYOUT, ins.offset, tid, rid, [ins.operands[0]], ["IdRef"])
    re.origin = ins          # errors name the shader's conversion, not this made-up instruction
    b.instrs.insert(i, re)
    return rid


def _split_relayouts(em, ff, ids):
    # Result types of the flat function's values (inlined callees' values have fresh ids).
    type_of = {ins.result: ins.result_type for b in ff.blocks for ins in b.instrs
               if ins.result is not None}
    for b in ff.blocks:
        i = 0
        while i < len(b.instrs):
            ins = b.instrs[i]
            if ins.opname in CONVERSIONS:
                dst = em.spec.type(ins.result_type)
                if isinstance(dst, CoopMat):
                    # the operand: a flat-function value, a module-level one, or one a pass made
                    # (ssa: the undefined value of a variable read before any store)
                    d = em.m.all_defs.get(ins.operands[0]) or em.spec.def_of(ins.operands[0])
                    src_tid = type_of.get(ins.operands[0]) or (d.result_type if d is not None else None)
                    if src_tid is None:
                        raise SpirvError(f"%{ins.operands[0]} is used before it is defined (or is not a value)",
                                         **ins.where())
                    src = em.spec.type(src_tid)
                    if not isinstance(src, CoopMat):
                        raise SpirvError("conversion of a non-matrix to a cooperative matrix", **ins.where())
                    check_conversion(ins, src, dst)
                    if not same_layout(src, dst):
                        ins.operands[0] = insert_relayout(em, ids, b, i, src, dst)
                        i += 1
            i += 1


def check_conversion(ins, src: CoopMat, dst: CoopMat):
    if (src.scope, src.rows, src.cols) != (dst.scope, dst.rows, dst.cols) or (
            src.use != dst.use and not (src.use == 2 and dst.use in (0, 1))):
        # Accumulator -> A/B is SPV_NV_cooperative_matrix2's use conversion.
        raise SpirvError(f"a conversion must keep the scope, rows, columns and Use: "
                         f"{describe(src)} -> {describe(dst)}", **ins.where())
    if ins.opname == "OpBitcast" and (src.elem.kind != "int" or dst.elem.kind != "int"
                                      or src.elem.width != dst.elem.width):
        raise SpirvError("OpBitcast of cooperative matrices needs integer components of the same "
                         f"width: {describe(src)} -> {describe(dst)}", **ins.where())


REWRITES.append(_split_relayouts)


@collective(RELAYOUT)
def _relayout(em, ins, wait, resume):
    src = mat_type(em, ins.operands[0], ins, "operand")
    dst = em.rtype(ins)
    inv = scope_size(em, dst)
    check_scope(em, getattr(ins, "origin", ins), wait, dst)
    d = gather(em, wait, inv, src, em.coll_block(ins.operands[0]))
    scatter(em, wait, inv, dst, d, em.coll_result_block(ins))
    em.resume_lanes(wait, resume)
