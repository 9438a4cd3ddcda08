"""SPV_NV_cooperative_matrix2, SPV_NV_tensor_addressing and SPV_NV_cooperative_matrix_decode_vector.

Tensor layouts and views are values of 32-bit leaves (jitcoop.spirv.types.TensorLayout and
TensorView); every OpCreateTensor*/OpTensorLayout*/OpTensorView* instruction is a pure rule that
returns a modified copy, so uniform hoisting computes them once per workgroup and LLVM folds the
constant parts.

The matrix instructions are collective, as in SPV_KHR_cooperative_matrix. Tensor loads and stores
without a decode function are kernel-library calls (jitcoop.kernels.tensor); a load with a
DecodeFunc, a reduction and a per-element operation call a SPIR-V function per element, compiled
as an LLVM function of the kernel's module (jitcoop.codegen.callback) and called directly from a
loop generated here, so LLVM can inline it.
"""
from __future__ import annotations

import numpy as np

from ...errors import SpirvError
from ...kernels import codes as TN
from ...spirv.types import (Array, CoopMat, Pointer, Scalar, TensorLayout, TensorView, Vector, describe,
                            leaves, size_of)
from ..callback import CONTEXT_ARGS
from ..collectives import Arr
from ..lanevec import SIZES, _const_vec, _mangle, group_size
from ..llvm import ty
from . import CALLBACKS, collective, pure, rule
from .khr_coopmat import check_scope, check_uniform, fmt_of, gather, mat_type, root_bounds, scatter, scope_size, \
    shadow_after_load

TNK = "jitcoop.kernels.tensor"
CMK = "jitcoop.kernels.coopmat"
B, DIM, STRIDE, OFFSET, SPAN = (TensorLayout.BLOCK, TensorLayout.DIM, TensorLayout.STRIDE,
                                TensorLayout.OFFSET, TensorLayout.SPAN)


# -- tensor layouts and views ---------------------------------------------------------------------

def _layout_of(em, vid, ins, want=TensorLayout) -> TensorLayout | TensorView:
    t = em.value_type(vid)
    if not isinstance(t, want):
        raise SpirvError(f"operand %{vid} must be a {'tensor layout' if want is TensorLayout else 'tensor view'}"
                         f"; it is {describe(t)}", **ins.where())
    return t


def _same_type(em, ins, vid):
    """The layout/view operand of a Set*/Slice instruction and its result: one type, a tensor
    layout for OpTensorLayout*, a tensor view for OpTensorView* (SPV_NV_tensor_addressing; an
    OpFAdd turned into OpTensorViewSetDimensionNV reached the rule with a float)."""
    t = em.rtype(ins)
    want = TensorView if ins.opname.startswith("OpTensorView") else TensorLayout
    if not isinstance(t, want):
        raise SpirvError(f"the Result Type of {ins.opname} must be a "
                         f"{'tensor view' if want is TensorView else 'tensor layout'}; it is {describe(t)}",
                         **ins.where())
    src = em.value_type(vid)
    if src is not t:
        raise SpirvError(f"the operand's type ({describe(src)}) must be the Result Type ({describe(t)})",
                         **ins.where())
    return t


def _values(em, ins, ids, n, what) -> list[str]:
    if len(ids) != n:
        raise SpirvError(f"{ins.opname} takes {n} {what} for a {n if what != 'values' else ''} "
                         f"tensor of this type; it has {len(ids)}".replace("  ", " "), **ins.where())
    out = []
    for x in ids:
        t = em.value_type(x)
        if not (isinstance(t, Scalar) and t.kind == "int" and t.width == 32):
            raise SpirvError(f"{ins.opname} operands must be 32-bit integers; %{x} is {describe(t)}",
                             **ins.where())
        out.append(em.val(x))
    return out


@rule("OpCreateTensorLayoutNV")
def _create_layout(em, ins):
    t = em.rtype(ins)
    if not isinstance(t, TensorLayout):
        raise SpirvError("the Result Type of OpCreateTensorLayoutNV must be a tensor layout", **ins.where())
    # blockSize 1; layoutDimension, stride, offset, span and clampValue 0
    em.define(ins, ["1"] * t.dims + ["0"] * (4 * t.dims + 1))


@rule("OpTensorLayoutSetDimensionNV")
def _layout_dimension(em, ins):
    """layoutDimension = span = dims, offset 0, strides packed by the block sizes set so far
    (counting blocks, rounded up as the spec says), blockSize and clampValue kept."""
    t = _same_type(em, ins, ins.operands[0])
    D = t.dims
    dims = _values(em, ins, ins.operands[1:], D, "dimensions")
    v = list(em.vals(ins.operands[0]))
    st = "1"
    for i in range(D - 1, -1, -1):
        d = dims[i]
        v[DIM * D + i] = v[SPAN * D + i] = d
        v[OFFSET * D + i] = "0"
        v[STRIDE * D + i] = st
        st = em.op(f"mul i32 {st}, {_cdiv(em, d, v[B * D + i])}")
    em.define(ins, v)


def _cdiv(em, a: str, b: str) -> str:
    """ceil(a / b) of uint32 values, 0 for b = 0 (which a load then reports)."""
    a64, b64 = em.op(f"zext i32 {a} to i64"), em.op(f"zext i32 {b} to i64")
    z = em.op(f"icmp eq i64 {b64}, 0")
    safe = em.op(f"select i1 {z}, i64 1, i64 {b64}")
    up = em.op(f"add i64 {a64}, {em.op(f'sub i64 {safe}, 1')}")
    q = em.op(f"udiv i64 {up}, {safe}")
    return em.op(f"trunc i64 {em.op(f'select i1 {z}, i64 0, i64 {q}')} to i32")


@rule("OpTensorLayoutSetStrideNV", "OpTensorLayoutSetBlockSizeNV")
def _layout_part(em, ins):
    t = _same_type(em, ins, ins.operands[0])
    stride = ins.opname == "OpTensorLayoutSetStrideNV"
    vals = _values(em, ins, ins.operands[1:], t.dims, "strides" if stride else "block sizes")
    v = list(em.vals(ins.operands[0]))
    part = STRIDE if stride else B
    v[part * t.dims:(part + 1) * t.dims] = vals
    em.define(ins, v)


@rule("OpTensorLayoutSliceNV")
def _layout_slice(em, ins):
    """offset[i] += vals[2i] (signed, 32-bit wrap), span[i] = vals[2i + 1]."""
    t = _same_type(em, ins, ins.operands[0])
    D = t.dims
    vals = _values(em, ins, ins.operands[1:], 2 * D, "offset/span values")
    v = list(em.vals(ins.operands[0]))
    for i in range(D):
        v[OFFSET * D + i] = em.op(f"add i32 {v[OFFSET * D + i]}, {vals[2 * i]}")
        v[SPAN * D + i] = vals[2 * i + 1]
    em.define(ins, v)


@rule("OpTensorLayoutSetClampValueNV")
def _layout_clamp_value(em, ins):
    t = _same_type(em, ins, ins.operands[0])
    c = _values(em, ins, ins.operands[1:], 1, "values")
    em.define(ins, list(em.vals(ins.operands[0]))[:5 * t.dims] + c)


@rule("OpCreateTensorViewNV")
def _create_view(em, ins):
    t = em.rtype(ins)
    if not isinstance(t, TensorView):
        raise SpirvError("the Result Type of OpCreateTensorViewNV must be a tensor view", **ins.where())
    # dimensions and strides 0; clip: offsets 0, spans 0xFFFFFFFF
    em.define(ins, ["0"] * (2 * t.dims) + ["0", "-1", "0", "-1"])


@rule("OpTensorViewSetDimensionNV")
def _view_dimension(em, ins):
    """viewDimension = dims, strides packed from them."""
    t = _same_type(em, ins, ins.operands[0])
    D = t.dims
    dims = _values(em, ins, ins.operands[1:], D, "dimensions")
    v = list(em.vals(ins.operands[0]))
    st = "1"
    for i in range(D - 1, -1, -1):
        v[i] = dims[i]
        v[D + i] = st
        st = em.op(f"mul i32 {st}, {dims[i]}")
    em.define(ins, v)


@rule("OpTensorViewSetStrideNV", "OpTensorViewSetClipNV")
def _view_values(em, ins):
    t = _same_type(em, ins, ins.operands[0])
    clip = ins.opname == "OpTensorViewSetClipNV"
    vals = _values(em, ins, ins.operands[1:], 4 if clip else t.dims, "clip values" if clip else "strides")
    v = list(em.vals(ins.operands[0]))
    first = 2 * t.dims if clip else t.dims
    v[first:first + len(vals)] = vals
    em.define(ins, v)


LAYOUT_OPS = ("OpCreateTensorLayoutNV", "OpTensorLayoutSetDimensionNV", "OpTensorLayoutSetStrideNV",
              "OpTensorLayoutSetBlockSizeNV", "OpTensorLayoutSliceNV", "OpTensorLayoutSetClampValueNV",
              "OpCreateTensorViewNV", "OpTensorViewSetDimensionNV", "OpTensorViewSetStrideNV",
              "OpTensorViewSetClipNV")
pure(*LAYOUT_OPS)


# -- tensor loads and stores ----------------------------------------------------------------------

TENSOR_VIEW, DECODE_FUNC, DECODE_VECTOR_FUNC = 1, 2, 4


class TensorAccess:
    """The operands of OpCooperativeMatrixLoadTensorNV / StoreTensorNV, validated."""

    def __init__(self, em, ins, store: bool):
        self.ins = ins
        o, k = ins.operands, ins.kinds
        if "TensorAddressingOperands" not in k:
            raise SpirvError("the Tensor Addressing Operands mask is missing", **ins.where())
        i = k.index("TensorAddressingOperands")
        mask = o[i]
        ids = list(o[i + 1:])
        if mask & ~7:
            raise SpirvError(f"unknown Tensor Addressing Operands bits {mask & ~7:#x}", **ins.where())
        if len(ids) != bin(mask).count("1"):
            raise SpirvError(f"the Tensor Addressing Operands mask {mask:#x} needs "
                             f"{bin(mask).count('1')} operands; there are {len(ids)}", **ins.where())
        self.view = ids.pop(0) if mask & TENSOR_VIEW else None
        self.decode = ids.pop(0) if mask & DECODE_FUNC else None
        self.decode_vector = ids.pop(0) if mask & DECODE_VECTOR_FUNC else None
        if self.decode_vector is not None and self.decode is None:
            raise SpirvError("DecodeVectorFunc needs DecodeFunc in the same mask", **ins.where())
        if store and self.decode is not None:
            raise SpirvError("DecodeFunc is not allowed on OpCooperativeMatrixStoreTensorNV", **ins.where())
        self.ptr_id = o[0]
        if store:
            self.t = mat_type(em, o[1], ins, "Object")
            self.object = o[1]
        else:
            self.t = em.rtype(ins)
            if not isinstance(self.t, CoopMat):
                raise SpirvError("the Result Type of OpCooperativeMatrixLoadTensorNV must be a "
                                 "cooperative matrix", **ins.where())
            self.object = o[1]
            if em.value_type(o[1]) is not self.t:
                raise SpirvError(f"the Object of a tensor load must have the Result Type "
                                 f"({describe(self.t)}); it is {describe(em.value_type(o[1]))}",
                                 **ins.where())
        self.layout_id = o[2]
        self.layout = _layout_of(em, o[2], ins)
        self.vt = _layout_of(em, self.view, ins, TensorView) if self.view is not None else None
        p = em.ptr(self.ptr_id, ins)
        if p.kind != "mem" or p.storage not in ("StorageBuffer", "PhysicalStorageBuffer", "Workgroup"):
            raise SpirvError("the Pointer of a tensor load or store must point into StorageBuffer, "
                             f"PhysicalStorageBuffer or Workgroup memory (it is {p.storage})", **ins.where())
        if self.decode is not None and p.storage == "Workgroup":
            raise SpirvError("a tensor load with DecodeFunc must read StorageBuffer or "
                             "PhysicalStorageBuffer memory, not Workgroup memory", **ins.where())
        self.p = p

    def emit_operands(self, em, ins, wait, inv):
        """Scope and uniformity checks; the address, layout and view arrays."""
        check_scope(em, ins, wait, self.t)
        addr = em.coll_i64(self.ptr_id)
        check_uniform(em, ins, wait, self.t, addr, "Pointer", self.ptr_id)
        out = []
        for what, vid in (("tensor layout", self.layout_id), ("tensor view", self.view)):
            if vid is None or em._uniform_operand(vid) or em.invariant:
                # uniform by construction (a lane-invariant kernel: lane 0's): the kernels read
                # each instance's first lane
                out.append(em.coll_leaves_i64(vid, inv))
                continue
            arr = em.coll_leaves_i64(vid)
            out.append(arr)
            bad = em.lib(f"{TNK}:check_layouts", [em.state_arr(), ("i64", str(wait)), ("i64", str(inv)), arr], ins)
            em.fail_lane(ins, em.op(f"icmp sge i64 {bad}, 0"),
                         f"the {what} operand must be dynamically uniform in the scope; lane {{d}} has "
                         f"a different one", bad, bad)
        lay, view = out
        return addr, lay, view

    def static_args(self, em, view) -> list:
        """D, view, V, permutation, hasDimensions, clamp mode (with what runs as the hardware
        runs it unless the kernel is strict: jitcoop.diagnostics, kernels/codes.py)."""
        from ...kernels import codes as K
        vt = self.vt
        mode = self.layout.clamp
        if not em.options.strict:
            mode = (K.UNCLAMPED if mode == K.UNDEFINED else mode) | K.RUN_MISALIGNED
        return [("i64", str(self.layout.dims)), view, ("i64", str(vt.dims if vt is not None else 0)),
                em.const_array(vt.perm if vt is not None else (), "i64"),
                ("b", "true" if vt is not None and vt.has_dims else "false"), ("i64", str(mode))]

    def where(self):
        return self.p.root_name or "its object" if self.p.root is not None else "any buffer"


def _clear_notes(em):
    """Before a tensor kernel call: no rule noted yet (kernels/codes.py NOTE)."""
    from ...kernels import codes as K
    if not em.options.strict:
        em.store_at(em.info_array().ptr, "i64", K.NOTE, "0")


def _notes(em, ins, acc: TensorAccess, what: str):
    """After a tensor kernel call: the rule it ran as the hardware does, if any, reported as a
    diagnostic (jitcoop.diagnostics) naming the instance's first lane and the element."""
    from ...kernels import codes as K
    from ... import diagnostics as D
    if em.options.strict:
        return
    at = "element (row {d}, column {e})"
    rule = em.info_at(K.NOTE)
    k = em.info_at(K.NOTE_ELEMENT)
    cols = acc.t.cols
    em.warn_if(em.op(f"icmp ne i64 {rule}, 0"), ins, {
        TN.MISALIGNED: f"the Pointer of a tensor {what} must be 16-byte aligned; it is at byte offset {{g}} of "
                       f"{acc.where()}, used as it is",
        TN.UNDEF: f"{at} maps to coordinate {{g}} of dimension {{f}}, outside the tensor, and the layout's "
                  f"clamp mode is Undefined: addressed at that coordinate, as the hardware does",
    }, {TN.MISALIGNED: D.TENSOR_POINTER_ALIGNMENT.name, TN.UNDEF: D.TENSOR_CLAMP_UNDEFINED.name},
        lane=em.info_at(K.NOTE_LANE),
        details=(em.op(f"sdiv i64 {k}, {cols}"), em.op(f"srem i64 {k}, {cols}"), em.info_at(K.NOTE_F),
                 em.info_at(K.NOTE_G)), case=rule)


def _failures(em, ins, acc: TensorAccess, what: str, bad: str):
    """The failure branch after a tensor kernel returned a failing lane in `bad` (>= 0): one site
    whose message depends on info[2] (the status); {d}, {e} are the element's row and column,
    {f} the dimension (info[0]), {g} the coordinate, size or byte offset (info[1])."""
    at = "element (row {d}, column {e})"
    cases = {
        TN.UNDEF: f"{at} maps to coordinate {{g}} of dimension {{f}}, outside the tensor, and the "
                  "layout's clamp mode is Undefined",
        TN.ZERO_SPAN: f"the tensor layout's span (or the view's dimension) {{f}} is 0, so {at} has no "
                      "address: set the dimensions first (OpTensorLayoutSetDimensionNV)",
        TN.ZERO_DIM: f"layoutDimension {{f}} is 0, so {at} cannot be clamped into the tensor",
        TN.ZERO_BLOCK: f"the block size of dimension {{f}} is 0 ({at})",
        TN.BLOCK_STORE: f"block size {{g}} in dimension {{f}} on a tensor store ({at}): block sizes above "
                        "1 must not be used with OpCooperativeMatrixStoreTensorNV (writes would race)",
        TN.OUT_OF_BOUNDS: f"{what} of {at} reaches outside {acc.where()}: byte offset {{g}}",
        TN.VECTOR_BLOCK: "the vector decode path needs blockSize[LDim-1] to be a multiple of the "
                         "DecodeVectorFunc's width; it is {g}",
        TN.DECODE_MISMATCH: f"DecodeFunc and DecodeVectorFunc disagree at {at} (decode_vector='check')",
        TN.MISALIGNED: f"the Pointer of a tensor {what} must be 16-byte aligned; it is at byte offset "
                       f"{{g}} of {acc.where()}",
    }
    cols = acc.t.cols
    k = em.info_at(3)
    em.fail_if(em.op(f"icmp sge i64 {bad}, 0"), ins, cases, lane=bad,
               details=(em.op(f"sdiv i64 {k}, {cols}"), em.op(f"srem i64 {k}, {cols}"), em.info_at(0), em.info_at(1)),
               case=em.info_at(2))


def _dtype(t: CoopMat) -> str:
    return "f64" if t.elem.kind == "float" else "i64"


@collective("OpCooperativeMatrixLoadTensorNV")
def _load_tensor(em, ins, wait, resume):
    acc = TensorAccess(em, ins, store=False)
    t = acc.t
    inv = scope_size(em, t)
    addr, lay, view = acc.emit_operands(em, ins, wait, inv)
    n = t.rows * t.cols
    df, di = em.dense(1, n, "f64"), em.dense(1, n, "i64")
    objb = em.coll_block(acc.object)
    out = em.coll_result_block(ins)
    lo, hi = root_bounds(em, acc.p)
    if acc.decode is None:
        from ...kernels import codes as K
        stat = em.dense(1, n, "i8")
        done = _line_moves(em, acc, wait, inv, out, addr, lay, view, lo, hi, ("rows", "columns"))
        _clear_notes(em)
        bad = _unless_all_done(em, wait, inv, done, lambda: em.lib(
            f"{TNK}:load", [em.state_arr(), ("i64", str(wait)), ("i64", str(inv)), out, objb,
                            em.table(t.layout), ("i64", str(t.rows)), ("i64", str(t.cols)), addr, lay]
            + acc.static_args(em, view)
            + [("i64", str(fmt_of(t.elem))), ("i64", str(t.elem.size)), ("i64", lo), ("i64", hi),
               em.ranges_arr(), em.info_array(), df.row(0, em), di.row(0, em), stat.row(0, em),
               ("i64", str(K.run_length(t.layout.table, t.rows, t.cols, False))), done], ins))
    else:
        check_private_reads(em, ins, wait, inv, [f for f in (acc.decode, acc.decode_vector) if f is not None])
        _clear_notes(em)
        bad = _decode_site(em, ins, acc, wait, inv, out, objb, addr, lay, view, lo, hi, df, di)
    _notes(em, ins, acc, "load")
    _failures(em, ins, acc, "load", bad)
    shadow_after_load(em, ins.result, out)
    em.resume_lanes(wait, resume)


def _unless_all_done(em, wait, inv, done: Arr, call) -> str:
    """The library's element path (`call()`, returning a failing lane or -1), skipped when every
    instance waiting here moved in generated code."""
    fn = em.fn
    left = em.op(f"call i64 {em.helper('waiting_left')}(ptr {em.state}, i64 {em.W}, i32 {wait}, i64 {inv}, "
                 f"ptr {done.ptr})")
    go, skip, join = fn.label("elems"), fn.label("elems.skip"), fn.label("elems.done")
    fn.cbr(em.op(f"icmp ne i64 {left}, 0"), go, skip)
    fn.block(go)
    bad = call()
    go_end = fn.cur
    fn.br(join)
    fn.block(skip)
    fn.br(join)
    fn.block(join)
    return em.op(f"phi i64 [ {bad}, %{go_end} ], [ -1, %{skip} ]")


def _line_moves(em, acc: TensorAccess, wait, inv, frag, addr, lay, view, lo, hi, kinds) -> Arr:
    """Instances whose plan is clean and whose lines (rows, or columns through a transposing view)
    are contiguous and in bounds move in generated code (matrix_loads.tensor_mover): the kernel
    library plans each (tensor.plan_lines), the movers copy whole lines with vector loads,
    conversions and, for columns, register transposes. Returns the per-instance flags of those
    done, for the library's element path to skip."""
    from ..matrix_loads import tensor_mover
    from ..tensor_plans import affine_plan
    t = acc.t
    ninst = em.W // inv
    done = em.dense(1, ninst, "i8").row(0, em)
    movers = {}
    if t.layout.invocations == inv and TN.run_length(t.layout.table, t.rows, t.cols, False):
        for k in kinds:
            # A B matrix read through a transposing view reads each stored line (K along it) a
            # tile's K rows at a time, and a GEMM's K loop reads the next rows of the same lines:
            # those lines are a page or more apart, where the processor's prefetchers do not
            # follow them. Prefetched a tile ahead: wg_tensor 1.02-1.09x float32 and 1.04-1.17x
            # exact at 1024^3 on one core (three side-by-side runs); the same for A's rows did
            # not pay (0.91-0.99x).
            ahead = t.rows if k == "columns" and t.use == 1 else 0
            name = tensor_mover(em, k, t.rows, t.cols, inv, fmt_of(t.elem), frag.llvm, ahead)
            if name is not None:
                movers[k] = name
    em.emit(f"call void @llvm.memset.p0.i64(ptr {done.ptr}, i8 0, i64 {ninst}, i1 false)")
    em.declare("@llvm.memset.p0.i64", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
    if not movers:
        return done
    n = max(t.rows, t.cols)
    lines = em.dense(1, n, "i64")
    rt = Arr(em.dense(1, t.rows * 5, "i64").ptr, "i64", (t.rows, 5))
    ct = Arr(em.dense(1, t.cols * 5, "i64").ptr, "i64", (t.cols, 5))
    store = "store" in kinds

    columns = bool({"columns", "store_columns"} & set(movers))
    fast = affine_plan(em, acc.layout.dims, t.rows, t.cols, acc.vt, t.elem.size, store, columns)
    answer = em.fn.alloca("i64", "plan") if fast else None

    def library_plan(p, base):
        D, _, V, perm, has_dims, mode = acc.static_args(em, view)
        return em.lib(f"{TNK}:plan_lines", [("i64", p), lay, view, ("i64", base), ("i64", str(t.rows)),
                                            ("i64", str(t.cols)), D, V, perm, has_dims, mode,
                                            ("b", "true" if store else "false"), ("i64", str(t.elem.size)),
                                            ("i64", lo), ("i64", hi), em.ranges_arr(),
                                            ("b", "true" if columns else "false"),
                                            lines.row(0, em), rt, ct], acc.ins, ret="i64")

    def instance(base, q):
        p = em.load_at(addr.ptr, "i64", base)
        if fast is None:
            k = library_plan(p, base)
        else:
            # the affine plan in generated code; the library where it is not sure
            k0 = em.op(f"call i64 {fast}(ptr {lay.ptr}, ptr {view.ptr}, i64 {base}, i64 {p}, i64 {lo}, "
                       f"i64 {hi}, ptr %ranges, i64 %nranges, ptr {lines.ptr})")
            em.emit(f"store i64 {k0}, ptr {answer}")
            with em.when(em.op(f"icmp slt i64 {k0}, 0")):
                em.emit(f"store i64 {library_plan(p, base)}, ptr {answer}")
            k = em.op(f"load i64, ptr {answer}")
        moved = em.op(f"icmp ne i64 {k}, 0")
        em.store_at(done.ptr, "i8", q, em.op(f"zext i1 {moved} to i8"))
        for code, kind in ((TN.LINES_ROWS, "rows" if not store else "store"),
                           (TN.LINES_COLUMNS, "columns" if not store else "store_columns")):
            if kind in movers:
                with em.when(em.op(f"icmp eq i64 {k}, {code}")):
                    em.emit(f"call void {movers[kind]}(ptr {frag.ptr}, i64 {base}, i64 {p}, ptr {lines.ptr})")
    em.for_instances(inv, wait, instance)
    return done


@collective("OpCooperativeMatrixStoreTensorNV")
def _store_tensor(em, ins, wait, resume):
    from ...kernels import codes as K
    acc = TensorAccess(em, ins, store=True)
    t = acc.t
    inv = scope_size(em, t)
    addr, lay, view = acc.emit_operands(em, ins, wait, inv)
    n = t.rows * t.cols
    df, di = em.dense(1, n, "f64"), em.dense(1, n, "i64")
    lo, hi = root_bounds(em, acc.p)
    src = em.coll_block(acc.object)
    done = _line_moves(em, acc, wait, inv, src, addr, lay, view, lo, hi, ("store", "store_columns"))
    _clear_notes(em)
    bad = _unless_all_done(em, wait, inv, done, lambda: em.lib(
        f"{TNK}:store", [em.state_arr(), ("i64", str(wait)), ("i64", str(inv)), src,
                         em.table(t.layout), ("i64", str(t.rows)), ("i64", str(t.cols)), addr, lay]
        + acc.static_args(em, view)
        + [("i64", str(fmt_of(t.elem))), ("i64", str(t.elem.size)), ("i64", lo), ("i64", hi),
           em.ranges_arr(), em.info_array(), df.row(0, em), di.row(0, em),
           ("i64", str(K.run_length(t.layout.table, t.rows, t.cols, False))), done], ins))
    em.meta.writes_physical = em.meta.writes_physical or acc.p.root is None
    _notes(em, ins, acc, "store")
    _failures(em, ins, acc, "store", bad)
    em.resume_lanes(wait, resume)


# -- decode functions -----------------------------------------------------------------------------

VCACHE = 1024          # V-groups a vector-decoded load remembers (a power of two)


def _narrow_slot(em, v: str, dt: str, slot: str, V=None) -> str:
    """A decoded element (double or i64) in its fragment slot's type (exact: the value is the
    element type's); G of them with V (a _Vec)."""
    if dt == slot:
        return v
    t = V.t if V is not None else (lambda x: x)
    return em.op(f"{'fptrunc' if dt == 'double' else 'trunc'} {t(dt)} {v} to {t(slot)}")


def _check_decode_signature(em, ins, fid, acc: TensorAccess, vector: bool):
    cb = em.callbacks[fid]
    role = "DecodeVectorFunc" if vector else "DecodeFunc"
    D = acc.layout.dims
    elem = acc.t.elem
    r = cb.ret
    if vector:
        ok = isinstance(r, Vector) and r.n in (2, 4, 8) and r.elem.key() == elem.key()
        want = f"a vector of 2, 4 or 8 {elem}"
    else:
        ok = isinstance(r, Scalar) and r.key() == elem.key()
        want = str(elem)
    if not ok:
        raise SpirvError(f"the {role} %{fid} returns {describe(r)}; it must return {want} (the "
                         f"matrix's component type)", **ins.where())
    pt = cb.param_types
    if (len(pt) != 3 or not isinstance(pt[0], Pointer) or pt[0].storage != "PhysicalStorageBuffer"
            or any(not (isinstance(a, Array) and a.length == D and isinstance(a.elem, Scalar)
                        and a.elem.kind == "int" and a.elem.width == 32) for a in pt[1:])):
        raise SpirvError(f"the {role} %{fid} must take (a PhysicalStorageBuffer pointer, uint32[{D}] "
                         f"blockCoord, uint32[{D}] coordInBlock); it takes "
                         f"({', '.join(describe(a) for a in pt)})", **ins.where())
    return cb


def check_private_reads(em, ins, wait, inv, fids):
    """A callback called once for a whole scope instance runs with the first lane's Private
    variables: check that the other lanes' agree (they do in real shaders: set uniformly)."""
    if em.options.unchecked:
        return
    for fid in fids:
        cb = em.callbacks[fid]
        for v in cb.private_reads:
            size = size_of(em.var_types[v].pointee)
            bad = em.lib(f"{TNK}:check_frame", [em.state_arr(), ("i64", str(wait)), ("i64", str(inv)), ("i64", "%pvp"),
                                                ("i64", str(em.meta.private_frame)), ("i64", str(em.frame_off[v])),
                                                ("i64", str(size))], ins)
            em.fail_lane(ins, em.op(f"icmp sge i64 {bad}, 0"),
                         f"the {cb.role} '{em.m.name_of(fid).split('(')[0]}' (%{fid}) reads Private variable "
                         f"'{em.m.name_of(v)}', which differs between the invocations of the scope (lane {{d}} "
                         f"has another value); it is called once for the whole matrix, so it must be uniform",
                         bad, bad)


def _widen(em, v: str, s: Scalar, V=None) -> str:
    """A decoded element in the dense arrays' type (double, or i64 by its signedness); G of them
    with V (a _Vec)."""
    t = V.t if V is not None else (lambda x: x)
    if s.kind == "float":
        return v if ty(s) == "double" else em.op(f"fpext {t('float')} {v} to {t('double')}")
    if s.width == 64:
        return v
    return em.op(f"{'sext' if s.signed else 'zext'} {t(f'i{s.width}')} {v} to {t('i64')}")


def _decode_site(em, ins, acc: TensorAccess, wait, inv, out, objb, addr, lay, view, lo, hi, df, di) -> str:
    """The decode functions over every element of each waiting instance: the addressing of the
    instance's elements by the kernel library (tensor.decode_plan), then a loop here calling the
    DecodeFunc (or the DecodeVectorFunc once per group of V elements, remembered in a small
    direct-mapped table: with a view that transposes, a group's elements are not adjacent), then
    the fragments (tensor.decode_finish). On a clean 2-D plan the DecodeFunc's vector form runs
    G columns of a row at once, the scalar DecodeFunc on each where they part ways or one
    fails. Returns the failing lane or -1 (an i64)."""
    t = acc.t
    D = acc.layout.dims
    mode = em.options.decode_vector
    cb = _check_decode_signature(em, ins, acc.decode, acc, False)
    fn = em.callback_fn(acc.decode)
    tsize = size_of(cb.param_types[0].pointee)
    vec = None
    if acc.decode_vector is not None and mode != "scalar":
        vcb = _check_decode_signature(em, ins, acc.decode_vector, acc, True)
        vec = (em.callback_fn(acc.decode_vector), vcb.ret.n, size_of(vcb.param_types[0].pointee))
    elem = t.elem
    et = ty(elem)
    n = t.rows * t.cols
    width = 2 + 2 * D
    plan = Arr(em.work_array(f"dplan{ins.result}", "i64", n * width), "i64", (n, width))
    rt = em.dense(t.rows, 5, "i64")
    ct = em.dense(t.cols, 5, "i64")
    outf, outi = em.dense(1, 1, "f64"), em.dense(1, 1, "i64")
    dst, dt = (df, "double") if elem.kind == "float" else (di, "i64")
    info = em.info_array()
    S = None
    if em.profiling:
        S = em.prof.slots("decode", ("scalar_calls", "vector_calls", "scalar_elements",
                                     "vector_elements", "scalar_ticks", "vector_ticks"),
                          ins=ins, decode=acc.decode, vector=acc.decode_vector)
    result = em.local("i64", "-1", "bad")
    static = acc.static_args(em, view)
    # The DecodeFunc's vector form (callback_vector) on G columns of a row of a clean plan at
    # once: unprofiled, without a DecodeVectorFunc (whose table caches its groups).
    G = group_size(t.cols) if S is None and vec is None and D == 2 else 0
    vfn = em.vector_callback_fn(acc.decode, G) if G and t.cols % G == 0 and inv % G == 0 else None

    def instance(base, q):
        out_l, body_l, bad_l, go_l = (em.fn.label(x) for x in ("dec.out", "dec.body", "dec.bad", "dec.go"))
        # after a failure the other instances are left alone (the first failure is reported)
        em.fn.cbr(em.op(f"icmp slt i64 {result.get()}, 0"), body_l, out_l)
        em.fn.block(body_l)
        p = em.load_at(addr.ptr, "i64", base)
        st = em.lib(f"{TNK}:decode_plan", [("i64", p), ("i64", lo), ("i64", hi), em.ranges_arr(),
                                           ("i64", str(t.rows)), ("i64", str(t.cols)), lay, ("i64", base),
                                           static[0], view, static[2], static[3], static[4], static[5],
                                           info, plan, rt, ct], ins)
        em.fn.cbr(em.op(f"icmp sge i64 {st}, 0"), bad_l, go_l)
        em.fn.block(bad_l)
        result.set(base)
        em.fn.br(out_l)
        em.fn.block(go_l)

        def fail_here(status, detail_slot, detail):
            em.store_at(info.ptr, "i64", 2, str(status))
            em.store_at(info.ptr, "i64", detail_slot, detail)
            result.set(base)
            em.fn.br(out_l)

        plo, pn = em.info_at(4), em.info_at(5)
        blay = em.load_at(lay.ptr, "i64", em.op(f"add i64 {(5 * D) * em.W}, {base}"))
        em.lib(f"{TNK}:decode_clamp", [("i64", blay), ("i64", str(fmt_of(elem))), outf.row(0, em), outi.row(0, em)], ins)
        clamp = em.load_at(outf.ptr if dt == "double" else outi.ptr, dt, 0)
        use_vec = "false"
        keys = None
        if vec is not None:
            VW = vec[1]
            bs = em.load_at(lay.ptr, "i64", em.op(f"add i64 {(D - 1) * em.W}, {base}"))
            use_vec = em.op(f"icmp eq i64 {em.op(f'urem i64 {bs}, {VW}')}, 0")
            if mode in ("vector", "check"):
                with em.when(em.op(f"xor i1 {use_vec}, true")):
                    fail_here(TN.VECTOR_BLOCK, 1, bs)
            keys = em.work_array(f"vkey{ins.result}", "i64", VCACHE * (2 * D + 1))
            with em.loop(VCACHE, hint="vk") as h:
                em.store_at(keys, "i64", em.op(f"mul i64 {h}, {2 * D + 1}"), "-1")
        t0 = None
        if S is not None:
            em.declare("@llvm.readcyclecounter", "declare i64 @llvm.readcyclecounter()")
            t0 = em.op("call i64 @llvm.readcyclecounter()")
        def element(k, s, idx, bc, cib):
            """Decode element k (its status s, index, blockCoord and coordInBlock) into dst."""
            def scalar_call():
                a = em.op(f"add i64 {p}, {em.op(f'mul i64 {idx}, {tsize}')}")
                args = [f"i64 {a}", f"i64 {plo}", f"i64 {pn}"] + [f"i32 {x}" for x in bc + cib]
                v = em.op(f"call {et} {fn}({', '.join(args)}, {CONTEXT_ARGS}, i64 {base})")
                em.check_callback_failed()
                if S is not None:
                    em.counter_add(S, "1")
                return _widen(em, v, elem)

            def store_dst(v):
                if direct[0]:
                    # a clean plan into the striped layout: element k is lane k % inv's
                    # fragment element k // inv, written in place (no dense copy to finish)
                    e = em.op(f"udiv i64 {k}, {inv}")
                    lane = em.op(f"add i64 {base}, {em.op(f'urem i64 {k}, {inv}')}")
                    at = em.op(f"add i64 {em.op(f'mul i64 {e}, {em.W}')}, {lane}")
                    em.store_at(out.ptr, out.llvm, at, _narrow_slot(em, v, dt, out.llvm))
                else:
                    em.store_at(dst.ptr, dt, k, v)

            def plain():
                store_dst(scalar_call())
                if S is not None:
                    em.counter_add(S + 2, "1")

            def vector_path():
                fnv, VW, vsize = vec
                last = cib[D - 1]
                v0 = em.op(f"sub i32 {last}, {em.op(f'urem i32 {last}, {VW}')}")
                keyvals = [idx, em.op(f"zext i32 {v0} to i64")] + [em.op(f"zext i32 {x} to i64") for x in bc] \
                    + [em.op(f"zext i32 {x} to i64") for x in cib[:D - 1]]
                mult = [40503, 131] + [7919 + 2 * d for d in range(D)] + [104729 + 2 * d for d in range(D - 1)]
                hsum = "0"
                for x, c in zip(keyvals, mult):
                    hsum = em.op(f"add i64 {hsum}, {em.op(f'mul i64 {x}, {c}')}")
                h = em.op(f"and i64 {hsum}, {VCACHE - 1}")
                krow = em.op(f"mul i64 {h}, {2 * D + 1}")
                got = em.work_array(f"vgot{ins.result}", dt, VCACHE * VW)
                miss = "false"
                for j, x in enumerate(keyvals):
                    ne = em.op(f"icmp ne i64 {em.load_at(keys, 'i64', em.op(f'add i64 {krow}, {j}'))}, {x}")
                    miss = em.op(f"or i1 {miss}, {ne}")
                with em.when(miss):
                    a = em.op(f"add i64 {p}, {em.op(f'mul i64 {idx}, {vsize}')}")
                    args = [f"i64 {a}", f"i64 {plo}", f"i64 {pn}"] + [f"i32 {x}" for x in bc + cib[:D - 1] + [v0]]
                    rtv = f"[{VW} x {et}]"
                    vr = em.op(f"call {rtv} {fnv}({', '.join(args)}, {CONTEXT_ARGS}, i64 {base})")
                    em.check_callback_failed()
                    if S is not None:
                        em.counter_add(S + 1, "1")
                    grow = em.op(f"mul i64 {h}, {VW}")
                    for j in range(VW):
                        x = em.op(f"extractvalue {rtv} {vr}, {j}")
                        em.store_at(got, dt, em.op(f"add i64 {grow}, {j}"), _widen(em, x, elem))
                    for j, x in enumerate(keyvals):
                        em.store_at(keys, "i64", em.op(f"add i64 {krow}, {j}"), x)
                off = em.op(f"zext i32 {em.op(f'sub i32 {last}, {v0}')} to i64")
                v = em.load_at(got, dt, em.op(f"add i64 {em.op(f'mul i64 {h}, {VW}')}, {off}"))
                store_dst(v)
                if S is not None:
                    em.counter_add(S + 3, "1")
                if mode == "check":
                    sv = scalar_call()
                    if dt == "double":
                        # differ, a NaN matching any NaN
                        ne = em.op(f"fcmp une double {sv}, {v}")
                        both_nan = em.op(f"and i1 {em.op(f'fcmp uno double {sv}, {sv}')}, "
                                         f"{em.op(f'fcmp uno double {v}, {v}')}")
                        differ = em.op(f"and i1 {ne}, {em.op(f'xor i1 {both_nan}, true')}")
                    else:
                        differ = em.op(f"icmp ne i64 {sv}, {v}")
                    with em.when(differ):
                        fail_here(TN.DECODE_MISMATCH, 3, k)

            def decoded():
                if vec is None:
                    plain()
                else:
                    em.choose(use_vec, vector_path, plain)

            def clamped():
                with em.when(em.op(f"icmp eq i64 {s}, {TN.CLAMPED}")):
                    store_dst(clamp)

            em.choose(em.op(f"icmp eq i64 {s}, {TN.OK}"), decoded, clamped)


        clean = em.op(f"icmp ne i64 {em.info_at(6)}, 0")
        striped = TN.is_striped(np.asarray(t.layout.table), n)
        direct = [False]

        def walk_plan():
            """A clean 2-D plan: element (r, c) from the row and column tables (straight into the
            fragments when the layout is striped)."""
            direct[0] = striped
            rdim = em.info_at(7)
            by_row = em.op(f"icmp eq i64 {rdim}, 0")
            with em.loop(t.rows, hint="r") as r:
                rrow = em.op(f"mul i64 {r}, 5")
                row = [em.load_at(rt.ptr, "i64", em.op(f"add i64 {rrow}, {part}"))
                       for part in (TN.P_PART, TN.P_BC, TN.P_CIB)]

                def column(c):
                    crow = em.op(f"mul i64 {c}, 5")
                    cp, cb, ci = (em.load_at(ct.ptr, "i64", em.op(f"add i64 {crow}, {part}"))
                                  for part in (TN.P_PART, TN.P_BC, TN.P_CIB))
                    rp, rb, ri = row
                    k = em.op(f"add i64 {em.op(f'mul i64 {r}, {t.cols}')}, {c}")
                    idx = em.op(f"and i64 {em.op(f'add i64 {rp}, {cp}')}, 4294967295")
                    pick = lambda a, b: em.op(f"trunc i64 {em.op(f'select i1 {by_row}, i64 {a}, i64 {b}')} to i32")
                    element(k, str(TN.OK), idx, [pick(rb, cb), pick(cb, rb)], [pick(ri, ci), pick(ci, ri)])

                if vfn is None:
                    with em.loop(t.cols, hint="c") as c:
                        column(c)
                else:
                    with em.loop(t.cols, step=G, hint="c") as c:
                        columns(r, row, c, column, by_row)
            direct[0] = False

        def columns(r, row, c0, column, by_row):
            """Columns c0 .. c0 + G - 1 of row r by the DecodeFunc's vector form; where the G
            elements part ways or one fails, column() on each (the scalar DecodeFunc: its
            values, its failure report)."""
            V = _Vec(em, G)
            crow = V.op("mul", "i64", V.iota(c0), V.splat("i64", "5"))
            cp, cb, ci = (V.gather("i64", em.op(f"getelementptr i64, ptr {ct.ptr}, {V.t('i64')} "
                                                f"{V.op('add', 'i64', crow, V.splat('i64', str(part)))}"), 8)
                          for part in (TN.P_PART, TN.P_BC, TN.P_CIB))
            rp, rb, ri = (V.splat("i64", x) for x in row)
            vi64, vi32 = V.t("i64"), V.t("i32")

            def pick(a, b):
                return em.op(f"trunc {vi64} {em.op(f'select i1 {by_row}, {vi64} {a}, {vi64} {b}')} to {vi32}")
            idx = V.op("and", "i64", V.op("add", "i64", rp, cp), V.splat("i64", "4294967295"))
            a = V.op("add", "i64", V.splat("i64", p), V.op("mul", "i64", idx, V.splat("i64", str(tsize))))
            args = [f"{vi64} {a}", f"{vi64} {V.splat('i64', plo)}", f"{vi64} {V.splat('i64', pn)}"] + \
                [f"{vi32} {x}" for x in (pick(rb, cb), pick(cb, rb), pick(ri, ci), pick(ci, ri))]
            rtv = f"{{ {V.t(et)}, i1 }}"
            res = em.op(f"call {rtv} {vfn}({', '.join(args)}, {CONTEXT_ARGS}, {vi64} {V.splat('i64', base)})")
            done, scalar, nxt = (em.fn.label(x) for x in ("dv.v", "dv.s", "dv.n"))
            em.fn.cbr(em.op(f"extractvalue {rtv} {res}, 1"), done, scalar)
            em.fn.block(done)
            v = _widen(em, em.op(f"extractvalue {rtv} {res}, 0"), elem, V)
            k0 = em.op(f"add i64 {em.op(f'mul i64 {r}, {t.cols}')}, {c0}")
            if direct[0]:
                # G consecutive elements of the striped layout: one fragment element of G lanes
                e = em.op(f"udiv i64 {k0}, {inv}")
                lane = em.op(f"add i64 {base}, {em.op(f'urem i64 {k0}, {inv}')}")
                at = em.op(f"add i64 {em.op(f'mul i64 {e}, {em.W}')}, {lane}")
                V.store(out, at, _narrow_slot(em, v, dt, out.llvm, V))
            else:
                em.emit(f"store {V.t(dt)} {v}, ptr {em.op(f'getelementptr {dt}, ptr {dst.ptr}, i64 {k0}')}, "
                        f"align {SIZES[dt]}")
            em.fn.br(nxt)
            em.fn.block(scalar)
            with em.loop(G, hint="s") as i:
                column(em.op(f"add i64 {c0}, {i}"))
            em.fn.br(nxt)
            em.fn.block(nxt)

        def walk_elements():
            """Any other plan: every element from decode_plan's table."""
            with em.loop(n, hint="k") as k:
                row = em.op(f"mul i64 {k}, {width}")
                s = em.load_at(plan.ptr, "i64", row)
                idx = em.load_at(plan.ptr, "i64", em.op(f"add i64 {row}, 1"))
                bc = [em.op(f"trunc i64 {em.load_at(plan.ptr, 'i64', em.op(f'add i64 {row}, {2 + d}'))} to i32")
                      for d in range(D)]
                cib = [em.op(f"trunc i64 {em.load_at(plan.ptr, 'i64', em.op(f'add i64 {row}, {2 + D + d}'))} to i32")
                       for d in range(D)]
                element(k, s, idx, bc, cib)

        if D == 2:
            em.choose(clean, walk_plan, walk_elements)
        else:
            walk_elements()
        if S is not None:
            dt_ = em.op(f"sub i64 {em.op('call i64 @llvm.readcyclecounter()')}, {t0}")
            slot = em.op(f"select i1 {use_vec}, i64 {S + 5}, i64 {S + 4}") if vec is not None else str(S + 4)
            p_ = em.op(f"getelementptr i64, ptr %err, i64 {slot}")
            old = em.op(f"load i64, ptr {p_}")
            em.emit(f"store i64 {em.op(f'add i64 {old}, {dt_}')}, ptr {p_}")
        finish = lambda: em.lib(f"{TNK}:decode_finish", [
            ("i64", base), ("i64", str(inv)), out, objb, em.table(t.layout), plan, df.row(0, em), di.row(0, em),
            ("b", "true" if dt == "double" else "false"), ("b", clean)], ins)
        if striped and D == 2:
            em.choose(clean, lambda: None, finish)      # a clean plan wrote the fragments itself
        else:
            finish()
        em.fn.br(out_l)
        em.fn.block(out_l)

    em.for_instances(inv, wait, instance)
    return result.get()


def _callbacks_of_load(em, ins):
    k = ins.kinds
    if "TensorAddressingOperands" not in k:
        return []
    i = k.index("TensorAddressingOperands")
    mask, ids = ins.operands[i], list(ins.operands[i + 1:])
    out = []
    if mask & TENSOR_VIEW and ids:
        ids.pop(0)
    if mask & DECODE_FUNC and ids:
        out.append((ids.pop(0), "DecodeFunc"))
    if mask & DECODE_VECTOR_FUNC and ids:
        out.append((ids.pop(0), "DecodeVectorFunc"))
    return out


CALLBACKS["OpCooperativeMatrixLoadTensorNV"] = _callbacks_of_load


# -- reductions -----------------------------------------------------------------------------------

ROW, COLUMN, QUAD = 1, 2, 4


def _reduce_shapes(ins, src: CoopMat, res: CoopMat, mode: int):
    if mode not in (ROW, COLUMN, ROW | COLUMN, QUAD):
        raise SpirvError(f"Reduce mode {mode:#x} is not Row, Column, Row|Column or 2x2", **ins.where())
    if mode == ROW and res.rows != src.rows:
        raise SpirvError(f"a Row reduction keeps the rows: {src.rows} rows in, {res.rows} out", **ins.where())
    if mode == COLUMN and res.cols != src.cols:
        raise SpirvError(f"a Column reduction keeps the columns: {src.cols} in, {res.cols} out",
                         **ins.where())
    if mode == QUAD and (src.rows % 2 or src.cols % 2 or (res.rows, res.cols) != (src.rows // 2, src.cols // 2)):
        raise SpirvError(f"a 2x2 reduction of a {src.rows}x{src.cols} matrix gives "
                         f"{src.rows // 2}x{src.cols // 2} (and needs even sizes); the Result Type is "
                         f"{res.rows}x{res.cols}", **ins.where())


def _check_combine(em, ins, fid, elem):
    cb = em.callbacks[fid]
    pt = cb.param_types
    if (not isinstance(cb.ret, Scalar) or cb.ret.key() != elem.key() or len(pt) != 2
            or any(not isinstance(p, Scalar) or p.key() != elem.key() for p in pt)):
        raise SpirvError(f"the CombineFunc %{fid} must take two {elem} and return {elem}; it is "
                         f"({', '.join(describe(p) for p in pt)}) -> {describe(cb.ret)}", **ins.where())


def _narrow(em, v: str, s: Scalar) -> str:
    """A dense (double or i64) element as a leaf of scalar type s (exact: it came from one)."""
    if s.kind == "float":
        return v if ty(s) == "double" else em.op(f"fptrunc double {v} to float")
    return em.cast_int(v, 64, s.width, s.signed)


@collective("OpCooperativeMatrixReduceNV")
def _reduce(em, ins, wait, resume):
    src = mat_type(em, ins.operands[0], ins, "Matrix")
    res = em.rtype(ins)
    mode, fid = ins.operands[1], ins.operands[2]
    if not isinstance(res, CoopMat) or src.use != 2 or res.use != 2:
        raise SpirvError("OpCooperativeMatrixReduceNV takes and gives accumulator matrices "
                         f"({describe(src)} -> {describe(res)})", **ins.where())
    if src.elem.key() != res.elem.key() or src.scope != res.scope:
        raise SpirvError(f"a reduction keeps the component type and scope: {describe(src)} -> "
                         f"{describe(res)}", **ins.where())
    _reduce_shapes(ins, src, res, mode)
    _check_combine(em, ins, fid, src.elem)
    fn = em.callback_fn(fid)
    inv = scope_size(em, src)
    check_scope(em, ins, wait, src)
    check_private_reads(em, ins, wait, inv, [fid])
    ds = gather(em, wait, inv, src, em.coll_block(ins.operands[0]))
    dt = "double" if src.elem.kind == "float" else "i64"
    do = em.dense(em.W // inv, res.rows * res.cols, "f64" if dt == "double" else "i64")
    elem, et = src.elem, ty(src.elem)
    R, C, RR, RC = src.rows, src.cols, res.rows, res.cols
    S = em.prof.slots("combine", ("calls", "elements", "ticks"), ins=ins, fid=fid) if em.profiling else None

    def instance(base, q):
        s = em.op(f"getelementptr {dt}, ptr {ds.ptr}, i64 {em.op(f'mul i64 {q}, {R * C}')}")
        o = em.op(f"getelementptr {dt}, ptr {do.ptr}, i64 {em.op(f'mul i64 {q}, {RR * RC}')}")
        if S is not None:
            em.counter_add(S + 1, str(RR * RC))

        def combine(acc, k):
            """combine(acc, element k of the instance's dense copy)."""
            t0 = None
            if S is not None:
                em.declare("@llvm.readcyclecounter", "declare i64 @llvm.readcyclecounter()")
                t0 = em.op("call i64 @llvm.readcyclecounter()")
            x = _narrow(em, em.load_at(s, dt, k), elem)
            y = em.op(f"call {et} {fn}({et} {acc}, {et} {x}, {CONTEXT_ARGS}, i64 {base})")
            em.check_callback_failed()
            if S is not None:
                em.counter_add(S + 2, em.op(f"sub i64 {em.op('call i64 @llvm.readcyclecounter()')}, {t0}"))
                em.counter_add(S, "1")
            return y

        def fold(first, rest):
            """acc = combine(...combine(first, next)..., last) in the order `rest` gives (an
            (count, start, step, index(i)) loop)."""
            acc = em.local(et, _narrow(em, em.load_at(s, dt, first), elem), "acc")
            count, start, index = rest
            with em.loop(count, start) as i:
                acc.set(combine(acc.get(), index(i)))
            return _widen(em, acc.get(), elem)

        def lockstep(n, length, at):
            """n folds of `length` elements each, fold f's element i at index at(f, i), each
            combined in its own order but all n advanced together, element i of every fold
            before element i + 1 of any: n independent chains for the CPU to overlap, where one
            fold after the other waits on each combine's latency. The folds' results, widened."""
            accs = em.fn.alloca(f"[{n} x {et}]", "accs")
            with em.loop(n) as f:
                em.store_at(accs, et, f, _narrow(em, em.load_at(s, dt, at(f, "0")), elem))
            with em.loop(length, 1) as i:
                with em.loop(n) as f:
                    em.store_at(accs, et, f, combine(em.load_at(accs, et, f), at(f, i)))
            return lambda f: _widen(em, em.load_at(accs, et, f), elem)

        if mode == ROW:
            row = lockstep(R, C, lambda r, c: em.op(f"add i64 {em.op(f'mul i64 {r}, {C}')}, {c}"))
            with em.loop(R) as r:
                v = row(r)
                with em.loop(RC) as j:
                    em.store_at(o, dt, em.op(f"add i64 {em.op(f'mul i64 {r}, {RC}')}, {j}"), v)
        elif mode == COLUMN:
            col = lockstep(C, R, lambda c, r: em.op(f"add i64 {em.op(f'mul i64 {r}, {C}')}, {c}"))
            with em.loop(C) as c:
                v = col(c)
                with em.loop(RR) as i:
                    em.store_at(o, dt, em.op(f"add i64 {em.op(f'mul i64 {i}, {RC}')}, {c}"), v)
        elif mode == ROW | COLUMN:
            v = fold("0", (R * C, 1, lambda k: k))
            with em.loop(RR * RC) as j:
                em.store_at(o, dt, j, v)
        else:
            # (2r, 2c), (2r+1, 2c), (2r, 2c+1), (2r+1, 2c+1): the order the seed lists them in
            quad = em.const_blob(np.array([C, 1, C + 1], np.int64))
            with em.loop(RR) as i:
                with em.loop(RC) as j:
                    b0 = em.op(f"add i64 {em.op(f'mul i64 {i}, {2 * C}')}, {em.op(f'mul i64 {j}, 2')}")
                    v = fold(b0, (4, 1, lambda x: _quad_index(em, quad, b0, x)))
                    em.store_at(o, dt, em.op(f"add i64 {em.op(f'mul i64 {i}, {RC}')}, {j}"), v)

    em.for_instances(inv, wait, instance)
    scatter(em, wait, inv, res, do, em.coll_result_block(ins))
    em.resume_lanes(wait, resume)


def _quad_index(em, quad, b0, x):
    d = em.load_at(quad, "i64", em.op(f"sub i64 {x}, 1"))
    return em.op(f"add i64 {b0}, {d}")


CALLBACKS["OpCooperativeMatrixReduceNV"] = lambda em, ins: [(ins.operands[2], "CombineFunc")]


# -- per-element operations -----------------------------------------------------------------------

@collective("OpCooperativeMatrixPerElementOpNV")
def _per_element(em, ins, wait, resume):
    t = mat_type(em, ins.operands[0], ins, "Matrix")
    if em.rtype(ins) is not t:
        raise SpirvError(f"the Result Type of a per-element operation must be the Matrix's type "
                         f"({describe(t)})", **ins.where())
    fid, extra = ins.operands[1], ins.operands[2:]
    cb = em.callbacks[fid]
    pt = cb.param_types
    ok = (len(pt) == 3 + len(extra) and isinstance(cb.ret, Scalar) and cb.ret.key() == t.elem.key()
          and all(isinstance(p, Scalar) and p.kind == "int" and p.width == 32 for p in pt[:2])
          and isinstance(pt[2], Scalar) and pt[2].key() == t.elem.key())
    for p, x in zip(pt[3:], extra):
        xt = em.value_type(x)
        if isinstance(xt, CoopMat):
            ok = ok and xt is t and isinstance(p, Scalar) and p.key() == t.elem.key()
        else:
            ok = ok and [s.key() for s, _ in leaves(p)] == [s.key() for s, _ in leaves(xt)] \
                if not isinstance(p, Pointer) and not isinstance(xt, Pointer) else False
    if not ok:
        raise SpirvError(f"the per-element Func %{fid} must take (row, column as 32-bit integers, "
                         f"the {t.elem} element, then one parameter per extra operand: the element "
                         f"of a matrix operand, or the operand itself) and return {t.elem}; it is "
                         f"({', '.join(describe(p) for p in pt)}) -> {describe(cb.ret)}", **ins.where())
    fn = em.callback_fn(fid)
    inv = scope_size(em, t)
    check_scope(em, ins, wait, t)
    src = em.coll_block(ins.operands[0])
    extras = []                 # (kind, array, register type)
    for x in extra:
        xt = em.value_type(x)
        if isinstance(xt, CoopMat):
            extras.append(("m", em.coll_block(x), ty(xt.elem)))
        else:
            for row, (s, _) in zip(em.coll_arrays(x), leaves(xt)):
                extras.append(("l", row, ty(s)))
    out = em.coll_result_block(ins)
    tab = em.table(t.layout)
    et = ty(t.elem)
    W, NL = em.W, t.n
    S = em.prof.slots("per-element", ("calls", "elements", "ticks"), ins=ins, fid=fid) if em.profiling else None

    # Profiled, the scalar loop: the counters and clock reads are per element.
    G = group_size(inv) if S is None else 0
    vfn = em.vector_callback_fn(fid, G) if G and inv % G == 0 and _plain_rows(src, out, extras, et) else None

    def element(l, lane, e):
        """The Func on element e of lane l of the instance (lane: its index in the workgroup)."""
        ln = em.op(f"mul i64 {l}, {NL}")
        k = em.op(f"sext i32 {em.load_at(tab.ptr, 'i32', em.op(f'add i64 {ln}, {e}'))} to i64")
        r = em.op(f"udiv i64 {k}, {t.cols}")
        c = em.op(f"sub i64 {k}, {em.op(f'mul i64 {r}, {t.cols}')}")
        at = em.op(f"add i64 {em.op(f'mul i64 {e}, {W}')}, {lane}")
        args = [f"i32 {em.op(f'trunc i64 {r} to i32')}", f"i32 {em.op(f'trunc i64 {c} to i32')}",
                f"{et} {em.load_at(src.ptr, src.llvm, at)}"]
        for kind, arr, rt_ in extras:
            v = em.load_at(arr.ptr, arr.llvm, at if kind == "m" else lane)
            if rt_ == "i1":
                v = em.op(f"trunc i8 {v} to i1")
            args.append(f"{rt_} {v}")
        t0 = None
        if S is not None:
            em.declare("@llvm.readcyclecounter", "declare i64 @llvm.readcyclecounter()")
            t0 = em.op("call i64 @llvm.readcyclecounter()")
        v = em.op(f"call {et} {fn}({', '.join(args)}, {CONTEXT_ARGS}, i64 {lane})")
        em.check_callback_failed()
        em.store_at(out.ptr, out.llvm, at, v)
        if S is not None:
            em.counter_add(S + 2, em.op(f"sub i64 {em.op('call i64 @llvm.readcyclecounter()')}, {t0}"))
            em.counter_add(S, "1")
            em.counter_add(S + 1, "1")

    def elements(l, lane, e):
        """The Func's vector form on element e of lanes l .. l + G - 1, side by side in each
        block; where they part ways or one fails, the scalar Func on each (callback_vector)."""
        V = _Vec(em, G)
        lv = V.iota(lane)
        tab_i = V.op("add", "i64", V.op("mul", "i64", V.iota(l), V.splat("i64", str(NL))), V.splat("i64", e))
        k = V.gather("i32", em.op(f"getelementptr i32, ptr {tab.ptr}, {V.t('i64')} {tab_i}"), 4)
        cols = V.splat("i32", str(t.cols))
        r = V.op("udiv", "i32", k, cols)
        c = V.op("sub", "i32", k, V.op("mul", "i32", r, cols))
        at = em.op(f"add i64 {em.op(f'mul i64 {e}, {W}')}, {lane}")
        args = [f"{V.t('i32')} {r}", f"{V.t('i32')} {c}", f"{V.t(et)} {V.load(src, at)}"]
        for kind, arr, rt_ in extras:
            v = V.load(arr, at if kind == "m" else lane)
            if rt_ == "i1":
                v = em.op(f"trunc {V.t('i8')} {v} to {V.t('i1')}")
            args.append(f"{V.t(rt_)} {v}")
        rt = f"{{ {V.t(et)}, i1 }}"
        res = em.op(f"call {rt} {vfn}({', '.join(args)}, {CONTEXT_ARGS}, {V.t('i64')} {lv})")
        done, scalar, nxt = (em.fn.label(x) for x in ("pe.v", "pe.s", "pe.n"))
        em.fn.cbr(em.op(f"extractvalue {rt} {res}, 1"), done, scalar)
        em.fn.block(done)
        V.store(out, at, em.op(f"extractvalue {rt} {res}, 0"))
        em.fn.br(nxt)
        em.fn.block(scalar)
        with em.loop(G, hint="s") as i:
            element(em.op(f"add i64 {l}, {i}"), em.op(f"add i64 {lane}, {i}"), e)
        em.fn.br(nxt)
        em.fn.block(nxt)

    def instance(base, q):
        if vfn is None:
            with em.loop(inv, hint="l") as l:
                lane = em.op(f"add i64 {base}, {l}")
                with em.loop(NL, hint="e") as e:
                    element(l, lane, e)
            return
        with em.loop(NL, hint="e") as e:
            with em.loop(inv, step=G, hint="l") as l:
                elements(l, em.op(f"add i64 {base}, {l}"), e)

    em.for_instances(inv, wait, instance)
    em.resume_lanes(wait, resume)


CALLBACKS["OpCooperativeMatrixPerElementOpNV"] = lambda em, ins: [(ins.operands[1], "per-element Func")]


def _plain_rows(src, out, extras, et) -> bool:
    """Whether a per-element operation's blocks hold elements as the Func takes them (so G of
    them load and store as one vector)."""
    return src.llvm == et and out.llvm == et and all(
        arr.llvm == rt_ or (rt_ == "i1" and arr.llvm == "i8") for _, arr, rt_ in extras)


class _Vec:
    """G-wide operations for a collective's element loops."""

    def __init__(self, em, G: int):
        self.em, self.G = em, G

    def t(self, x: str) -> str:
        return f"<{self.G} x {x}>"

    def splat(self, t: str, x: str) -> str:
        a = self.em.op(f"insertelement {self.t(t)} poison, {t} {x}, i64 0")
        return self.em.op(f"shufflevector {self.t(t)} {a}, {self.t(t)} poison, {self.t('i32')} zeroinitializer")

    def iota(self, x: str) -> str:
        """<x, x + 1, ..., x + G - 1> (i64)."""
        steps = "<" + ", ".join(f"i64 {i}" for i in range(self.G)) + ">"
        return self.em.op(f"add {self.t('i64')} {self.splat('i64', x)}, {steps}")

    def op(self, name: str, t: str, a: str, b: str) -> str:
        return self.em.op(f"{name} {self.t(t)} {a}, {b}")

    def gather(self, t: str, ptrs: str, align: int) -> str:
        G, vt = self.G, self.t(t)
        name = f"@llvm.masked.gather.v{G}{_mangle(t)}.v{G}p0"
        g = self.em.declare(name, f"declare {vt} {name}({self.t('ptr')}, i32 immarg, {self.t('i1')}, {vt})")
        return self.em.op(f"call {vt} {g}({self.t('ptr')} {ptrs}, i32 {align}, {self.t('i1')} "
                          f"{_const_vec(G, 'i1', 'true')}, {vt} poison)")

    def _at(self, arr, i: str) -> str:
        return self.em.op(f"getelementptr {arr.llvm}, ptr {arr.ptr}, i64 {i}")

    def load(self, arr, i: str) -> str:
        """G consecutive elements of a block from index i."""
        return self.em.op(f"load {self.t(arr.llvm)}, ptr {self._at(arr, i)}, align {SIZES[arr.llvm]}")

    def store(self, arr, i: str, v: str):
        self.em.emit(f"store {self.t(arr.llvm)} {v}, ptr {self._at(arr, i)}, align {SIZES[arr.llvm]}")


# -- use conversion and transpose -----------------------------------------------------------------

@collective("OpCooperativeMatrixConvertNV")
def _convert_use(em, ins, wait, resume):
    src = mat_type(em, ins.operands[0], ins, "Matrix")
    dst = em.rtype(ins)
    if (not isinstance(dst, CoopMat) or src.elem.key() != dst.elem.key()
            or (src.scope, src.rows, src.cols) != (dst.scope, dst.rows, dst.cols)
            or src.use != 2 or dst.use not in (0, 1)):
        raise SpirvError("OpCooperativeMatrixConvertNV changes only the Use, from MatrixAccumulator "
                         f"to MatrixA or MatrixB: {describe(src)} -> {describe(dst)}", **ins.where())
    inv = scope_size(em, dst)
    check_scope(em, ins, wait, dst)
    d = gather(em, wait, inv, src, em.coll_block(ins.operands[0]))
    scatter(em, wait, inv, dst, d, em.coll_result_block(ins))
    em.resume_lanes(wait, resume)


@collective("OpCooperativeMatrixTransposeNV")
def _transpose(em, ins, wait, resume):
    src = mat_type(em, ins.operands[0], ins, "Matrix")
    dst = em.rtype(ins)
    if (not isinstance(dst, CoopMat) or src.use != 2 or dst.use != 1 or src.scope != dst.scope
            or (dst.rows, dst.cols) != (src.cols, src.rows)):
        raise SpirvError("OpCooperativeMatrixTransposeNV turns an R x C accumulator into a C x R "
                         f"MatrixB of the same scope: {describe(src)} -> {describe(dst)}", **ins.where())
    if src.elem.key() != dst.elem.key():
        raise SpirvError(f"a transpose keeps the component type ({src.elem} -> {dst.elem})", **ins.where())
    inv = scope_size(em, dst)
    check_scope(em, ins, wait, dst)
    d = gather(em, wait, inv, src, em.coll_block(ins.operands[0]))
    dt = em.dense(em.W // inv, src.rows * src.cols, "f64" if src.elem.kind == "float" else "i64")
    head = [em.state_arr(), ("i64", str(wait)), ("i64", str(inv))]
    em.lib(f"{TNK}:transpose", head + [d, dt, ("i64", str(src.rows)), ("i64", str(src.cols))], ins)
    scatter(em, wait, inv, dst, dt, em.coll_result_block(ins))
    em.resume_lanes(wait, resume)
