"""SPV_NV_cooperative_matrix2, SPV_NV_tensor_addressing and SPV_NV_cooperative_matrix_decode_vector.

Tensor layouts and views are per-lane values of 32-bit leaves (jitcoop.spirv.types.TensorLayout
and TensorView); every OpCreateTensor*/OpTensorLayout*/OpTensorView* instruction is a pure rule
that returns a modified copy, so the usual uniform hoisting computes them once per workgroup.

The matrix instructions are collective, as in SPV_KHR_cooperative_matrix. Tensor loads and stores
go through jitcoop.kernels.tensor; those with a decode function, reductions and per-element
operations call a SPIR-V function per element, compiled by jitcoop.codegen.callback. For each
such instruction the rule generates a small numba function (a "site") into the kernel's module:
the element loop around the callback, so that the callback is a direct call that LLVM can inline.
"""
from __future__ import annotations

from ...errors import SpirvError
from ...kernels import coopmat as K
from ...kernels import tensor as TN
from ...spirv.types import (Array, CoopMat, Pointer, Scalar, TensorLayout, TensorView, Vector,
                            describe, leaves, size_of)
from . import CALLBACKS, RESIDENT_DEFS, collective, rule
from .khr_coopmat import check_scope, check_uniform, fmt_of, gather, mat_type, scope_size

U32 = "np.uint32"


# -- tensor layouts and views ---------------------------------------------------------------------

def _layout_of(em, vid, ins, want=TensorLayout) -> TensorLayout | TensorView:
    t = em.value_type(vid)
    if not isinstance(t, want):
        raise SpirvError(f"operand %{vid} must be a {'tensor layout' if want is TensorLayout else 'tensor view'}"
                         f"; it is {describe(t)}", **ins.where())
    return t


def _same_type(em, ins, vid):
    """The layout/view operand of a Set*/Slice instruction and its result: one type."""
    t = em.rtype(ins)
    src = em.value_type(vid)
    if src is not t:
        raise SpirvError(f"the operand's type ({describe(src)}) must be the Result Type ({describe(t)})",
                         **ins.where())
    return t


def _values(em, ins, ids, n, what):
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


def _rows(em, ins, operand=None):
    """(slot array, result's first row, operand's first row) for a layout/view instruction: the
    value lives in slot rows (see KernelGen._find_resident); an operand that does not (a select
    of two layouts) is first written into the result's rows."""
    arr, dst, n = em.resident_block(ins.result)
    if operand is None:
        return arr, dst, None
    if em.is_resident(operand):
        return arr, dst, em.resident_block(operand)[1]
    for i, v in enumerate(em.vals(operand)):
        em.line(f"{arr}[{dst + i}, lane] = {v}")
    return arr, dst, dst


def _tuple(vals) -> str:
    return "(" + "".join(f"np.int64({v}), " for v in vals) + ")"


@rule("OpCreateTensorLayoutNV")
def _create_layout(em, ins):
    t = em.rtype(ins)
    if not isinstance(t, TensorLayout):
        raise SpirvError("the Result Type of OpCreateTensorLayoutNV must be a tensor layout", **ins.where())
    arr, dst, _ = _rows(em, ins)
    # blockSize 1; layoutDimension, stride, offset, span and clampValue 0
    em.line(f"tn.layout_create({arr}, {dst}, lane, {t.dims})")


@rule("OpTensorLayoutSetDimensionNV")
def _layout_dimension(em, ins):
    t = _same_type(em, ins, ins.operands[0])
    dims = _values(em, ins, ins.operands[1:], t.dims, "dimensions")
    arr, dst, src = _rows(em, ins, ins.operands[0])
    em.line(f"tn.layout_set_dimension({arr}, {dst}, {src}, lane, {t.dims}, {_tuple(dims)})")


@rule("OpTensorLayoutSetStrideNV", "OpTensorLayoutSetBlockSizeNV")
def _layout_part(em, ins):
    t = _same_type(em, ins, ins.operands[0])
    stride = ins.opname == "OpTensorLayoutSetStrideNV"
    vals = _values(em, ins, ins.operands[1:], t.dims, "strides" if stride else "block sizes")
    arr, dst, src = _rows(em, ins, ins.operands[0])
    part = TensorLayout.STRIDE if stride else TensorLayout.BLOCK
    em.line(f"tn.layout_set_part({arr}, {dst}, {src}, lane, {t.dims}, {part}, {_tuple(vals)})")


@rule("OpTensorLayoutSliceNV")
def _layout_slice(em, ins):
    t = _same_type(em, ins, ins.operands[0])
    vals = _values(em, ins, ins.operands[1:], 2 * t.dims, "offset/span values")
    arr, dst, src = _rows(em, ins, ins.operands[0])
    em.line(f"tn.layout_slice({arr}, {dst}, {src}, lane, {t.dims}, {_tuple(vals)})")


@rule("OpTensorLayoutSetClampValueNV")
def _layout_clamp_value(em, ins):
    t = _same_type(em, ins, ins.operands[0])
    v = _values(em, ins, ins.operands[1:], 1, "values")
    arr, dst, src = _rows(em, ins, ins.operands[0])
    em.line(f"tn.layout_set_clamp_value({arr}, {dst}, {src}, lane, {t.dims}, {v[0]})")


@rule("OpCreateTensorViewNV")
def _create_view(em, ins):
    t = em.rtype(ins)
    if not isinstance(t, TensorView):
        raise SpirvError("the Result Type of OpCreateTensorViewNV must be a tensor view", **ins.where())
    arr, dst, _ = _rows(em, ins)
    em.line(f"tn.view_create({arr}, {dst}, lane, {t.dims})")


@rule("OpTensorViewSetDimensionNV")
def _view_dimension(em, ins):
    t = _same_type(em, ins, ins.operands[0])
    dims = _values(em, ins, ins.operands[1:], t.dims, "dimensions")
    arr, dst, src = _rows(em, ins, ins.operands[0])
    em.line(f"tn.view_set_dimension({arr}, {dst}, {src}, lane, {t.dims}, {_tuple(dims)})")


@rule("OpTensorViewSetStrideNV", "OpTensorViewSetClipNV")
def _view_values(em, ins):
    t = _same_type(em, ins, ins.operands[0])
    clip = ins.opname == "OpTensorViewSetClipNV"
    vals = _values(em, ins, ins.operands[1:], 4 if clip else t.dims, "clip values" if clip else "strides")
    arr, dst, src = _rows(em, ins, ins.operands[0])
    em.line(f"tn.view_set_values({arr}, {dst}, {src}, lane, {2 * t.dims + 4}, "
            f"{2 * t.dims if clip else t.dims}, {_tuple(vals)})")


# Layout and view values always live in slot rows: every instruction above defines one.
LAYOUT_OPS = ("OpCreateTensorLayoutNV", "OpTensorLayoutSetDimensionNV", "OpTensorLayoutSetStrideNV",
              "OpTensorLayoutSetBlockSizeNV", "OpTensorLayoutSliceNV", "OpTensorLayoutSetClampValueNV",
              "OpCreateTensorViewNV", "OpTensorViewSetDimensionNV", "OpTensorViewSetStrideNV",
              "OpTensorViewSetClipNV")
RESIDENT_DEFS.update(LAYOUT_OPS)


# -- tensor loads and stores ----------------------------------------------------------------------

TENSOR_VIEW, DECODE_FUNC, DECODE_VECTOR_FUNC = 1, 2, 4


class TensorAccess:
    """The operands of OpCooperativeMatrixLoadTensorNV / StoreTensorNV, validated."""

    def __init__(self, em, ins, store: bool):
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
        """Scope and uniformity checks; the names of the address, layout and view arrays."""
        t = self.t
        check_scope(em, ins, wait, t)
        addr = em.coll_i64(self.ptr_id)
        check_uniform(em, ins, wait, t, addr, "Pointer", self.ptr_id)
        lay = em.coll_leaves_i64(self.layout_id)
        view = em.coll_leaves_i64(self.view)
        for arr, what in ((lay, "tensor layout"), (view, "tensor view")):
            if arr == view and self.view is None:
                continue
            em.line(f"bad = tn.check_layouts(state, {wait}, {inv}, {arr})")
            em.line("if bad >= 0:")
            em.line("    " + em.fail_lane(ins, f"the {what} operand must be dynamically uniform in the "
                                              f"scope; lane {{d}} has a different one", "bad", "bad"))
        return addr, lay, view

    def static_args(self, em) -> str:
        """D, V, permutation, hasDimensions, clamp mode."""
        vt = self.vt
        V = vt.dims if vt is not None else 0
        perm = em.const_array(vt.perm if vt is not None else ())
        return (f"{self.layout.dims}, {{view}}, {V}, {perm}, {bool(vt.has_dims) if vt else False}, "
                f"{self.layout.clamp}")

    def bounds(self):
        p = self.p
        return ("np.int64(0)", "np.int64(0)") if p.root is None else \
            (f"np.int64({p.root[0]})", f"np.int64({p.root[0]} + {p.root[1]})")

    def where(self, em):
        return em.root_desc(self.p.root[0]) if self.p.root is not None else "any buffer"


def _failures(em, ins, acc: TensorAccess, what: str):
    """The failure branch after a tensor kernel returned a failing lane in `bad`: one site whose
    message depends on info[2] (the status); {d}, {e} are the element's row and column, {f} the
    dimension (info[0]), {g} the coordinate, size or byte offset (info[1])."""
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
        TN.OUT_OF_BOUNDS: f"{what} of {at} reaches outside {acc.where(em)}: byte offset {{g}}",
        TN.VECTOR_BLOCK: "the vector decode path needs blockSize[LDim-1] to be a multiple of the "
                         "DecodeVectorFunc's width; it is {g}",
        TN.DECODE_MISMATCH: f"DecodeFunc and DecodeVectorFunc disagree at {at} (decode_vector='check')",
        TN.MISALIGNED: f"the Pointer of a tensor {what} must be 16-byte aligned; it is at byte offset "
                       f"{{g}} of {acc.where(em)}",
    }
    cols = acc.t.cols
    em.line("if bad >= 0:")
    em.line("    " + em.fail_lane_cases(ins, cases, "info[2]", "bad", f"info[3] // {cols}",
                                       f"info[3] % {cols}", "info[0]", "info[1]"))


@collective("OpCooperativeMatrixLoadTensorNV")
def _load_tensor(em, ins, wait, resume):
    acc = TensorAccess(em, ins, store=False)
    t = acc.t
    inv = scope_size(em, t)
    addr, lay, view = acc.emit_operands(em, ins, wait, inv)
    n = t.rows * t.cols
    df, di, stat = em.dense(1, n, "float64"), em.dense(1, n, "int64"), em.dense(1, n, "int8")
    objb = em.coll_block(acc.object)
    out = em.coll_result_block(ins)
    lo, hi = acc.bounds()
    static = acc.static_args(em).format(view=view)
    if acc.decode is None:
        em.line(f"bad = tn.load(state, {wait}, {inv}, {out}, {objb}, {em.table(t.layout)}, {t.rows}, "
                f"{t.cols}, {addr}, {lay}, {static}, {fmt_of(t.elem)}, {t.elem.size}, {lo}, {hi}, "
                f"ranges, {em.info_array()}, {df}[0], {di}[0], {stat}[0], "
                f"{K.run_length(t.layout.table, t.rows, t.cols, False)})")
    else:
        site = _decode_site(em, ins, acc)
        check_private_reads(em, ins, wait, inv, [f for f in (acc.decode, acc.decode_vector) if f is not None])
        em.line(f"bad = {site}(state, {wait}, {inv}, {out}, {objb}, {em.table(t.layout)}, {addr}, "
                f"{lay}, {view}, {lo}, {hi}, {em.info_array()}, {df}[0], {di}[0], {stat}[0], {_ctx()})")
        em.line("if bad == -2:")
        em.line(f"    {em.fail_return}")
    _failures(em, ins, acc, "load")
    em.line(f"sg_resume(state, {wait}, {resume})")


@collective("OpCooperativeMatrixStoreTensorNV")
def _store_tensor(em, ins, wait, resume):
    acc = TensorAccess(em, ins, store=True)
    t = acc.t
    inv = scope_size(em, t)
    addr, lay, view = acc.emit_operands(em, ins, wait, inv)
    n = t.rows * t.cols
    df, di = em.dense(1, n, "float64"), em.dense(1, n, "int64")
    lo, hi = acc.bounds()
    static = acc.static_args(em).format(view=view)
    em.line(f"bad = tn.store(state, {wait}, {inv}, {em.coll_block(acc.object)}, {em.table(t.layout)}, "
            f"{t.rows}, {t.cols}, {addr}, {lay}, {static}, {fmt_of(t.elem)}, {t.elem.size}, {lo}, "
            f"{hi}, ranges, {em.info_array()}, {df}[0], {di}[0], "
            f"{K.run_length(t.layout.table, t.rows, t.cols, False)})")
    em.meta.writes_physical = em.meta.writes_physical or acc.p.root is None
    _failures(em, ins, acc, "store")
    em.line(f"sg_resume(state, {wait}, {resume})")


# -- decode functions -----------------------------------------------------------------------------

DECODE_VECTOR_MODES = ("auto", "scalar", "vector", "check")
VCACHE = 1024          # V-groups a vector-decoded load remembers (a power of two)


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


def _ctx():
    return "bind, push, scratch, ranges, err, cancel, grid, wg"


def _cb_ctx():
    """The context a callback call passes: err and cancel by address (memory.i64_view)."""
    return "bind, push, scratch, ranges, errp, cancelp, grid, wg"


CB_PTRS = "errp = np.int64(err.ctypes.data); cancelp = np.int64(cancel.ctypes.data)"


def check_private_reads(em, ins, wait, inv, fids):
    """A callback called once for a whole scope instance runs with the first lane's Private
    variables: check that the other lanes' agree (they do in real shaders: set uniformly)."""
    if em.options.get("unchecked"):
        return
    for fid in fids:
        cb = em.callbacks[fid]
        for v in cb.private_reads:
            size = size_of(em.var_types[v].pointee)
            em.line(f"bad = tn.check_frame(state, {wait}, {inv}, pvp, {em.meta.private_frame}, "
                    f"{em.frame_off[v]}, {size})")
            em.line("if bad >= 0:")
            em.line("    " + em.fail_lane(
                ins, f"the {cb.role} '{em.m.name_of(fid).split('(')[0]}' (%{fid}) reads Private variable '{em.m.name_of(v)}', which differs "
                     f"between the invocations of the scope (lane {{d}} has another value); it is "
                     f"called once for the whole matrix, so it must be uniform", "bad", "bad"))


def _decode_site(em, ins, acc: TensorAccess) -> str:
    """A numba function running the decode function(s) over every element of each instance."""
    from ..emitter import nb_type
    t = acc.t
    D = acc.layout.dims
    mode = em.options.get("decode_vector", "auto")
    if mode not in DECODE_VECTOR_MODES:
        raise SpirvError(f"decode_vector={mode!r}: choose one of {', '.join(DECODE_VECTOR_MODES)}")
    cb = _check_decode_signature(em, ins, acc.decode, acc, False)
    fn = em.callback_fn(acc.decode)
    tsize = size_of(cb.param_types[0].pointee)
    vec = None
    if acc.decode_vector is not None and mode != "scalar":
        vcb = _check_decode_signature(em, ins, acc.decode_vector, acc, True)
        vec = (em.callback_fn(acc.decode_vector), vcb.ret.n, size_of(vcb.param_types[0].pointee))
    ints = [nb_type(a.elem) for a in cb.param_types[1:]]
    is_float = t.elem.kind == "float"
    name = f"_ld{ins.result}"
    perm = em.const_array(acc.vt.perm if acc.vt is not None else ())
    V = acc.vt.dims if acc.vt is not None else 0
    hasd = bool(acc.vt.has_dims) if acc.vt is not None else False
    dst = "df" if is_float else "di"
    cast = "np.float64" if is_float else "np.int64"

    def args(ptr, bc, cib, last):
        """The callback's arguments: pointer, its bounds, blockCoord, coordInBlock (the last
        coordinate `last`), the context and the lane."""
        b = ", ".join(f"{ints[0]}({bc(d)})" for d in range(D))
        ci = ", ".join(f"{ints[1]}({cib(d) if d < D - 1 else last})" for d in range(D))
        return f"{ptr}, plo, pn, {b}, {ci}, {_cb_ctx()}, base"

    from ...runtime.cache import JIT_OPTIONS
    L = []
    a = L.append
    a(f"@njit({JIT_OPTIONS})")
    a(f"def {name}(state, wait, inv, frag, obj, tab, addr, lay, view, lo, hi, info, df, di, stat, "
      f"{_ctx()}):")
    a("    W = state.shape[0]")
    a(f"    {CB_PTRS}")
    a("    NL = tab.shape[1]")
    a("    bc = np.zeros(10, np.int64)")
    a("    cib = np.zeros(10, np.int64)")
    a(f"    rt = np.empty(({t.rows}, 5), np.int64)")
    a(f"    ct = np.empty(({t.cols}, 5), np.int64)")
    if vec is not None:
        # V-groups decoded so far, direct mapped by a hash of their key: elements of one group
        # are not adjacent in row-major order when a view transposes the load
        a(f"    key = np.full(({VCACHE}, {2 * D + 1}), -1, np.int64)")
        a(f"    got = np.zeros(({VCACHE}, {vec[1]}), np.{'float64' if is_float else 'int64'})")
    a("    for base in range(0, W, inv):")
    a("        if state[base] != wait:")
    a("            continue")
    a("        p = addr[base]")
    a("        lv = lay[:, base]")
    a("        vv = view[:, base]")
    a("        if hi > lo:")
    a("            plo = lo")
    a("            pn = hi - lo")
    a("        else:")
    a("            plo, pn = tn.range_of(ranges, p)")
    a("        if (p - lo) % 16 != 0 if hi > lo else p % 16 != 0:")
    a(f"            info[2] = {TN.MISALIGNED}")
    a("            info[1] = p - lo")
    a("            return base")
    if vec is not None:
        VW = vec[1]
        a(f"        use_vec = lv[{D - 1}] % {VW} == 0")
        if mode in ("vector", "check"):
            a("        if not use_vec:")
            a(f"            info[2] = {TN.VECTOR_BLOCK}")
            a(f"            info[1] = lv[{D - 1}]")
            a("            return base")
        a("        key[:, 0] = -1")
    a(f"        rdim = tn.plan({t.rows}, {t.cols}, lv, {D}, vv, {V}, {perm}, {hasd}, {acc.layout.clamp}, "
      "False, rt, ct)")
    S = None
    if em.profiling:
        S = em.prof.slots("decode", ("scalar_calls", "vector_calls", "scalar_elements",
                                     "vector_elements", "scalar_ticks", "vector_ticks"),
                          ins=ins, decode=acc.decode, vector=acc.decode_vector)

    def call(pad, target, expr, which):
        """target = expr (a callback call), counted when profiling (which: 0 scalar, 1 vector).
        The time is taken around each instance's element loop, not each call: two clock reads
        around every call of a small decode function cost more than the function does."""
        a(f"{pad}{target} = {expr}")
        if S is not None:
            a(f"{pad}err[{S + which}] += 1")
        a(f"{pad}if err[0] != 0:")
        a(f"{pad}    return -2")

    def produced(pad, which):
        if S is not None:
            a(f"{pad}err[{S + 2 + which}] += 1")

    def decode(pad, bc, cib):
        """dst[k] = the decoded element k at index idx, whose blockCoord and coordInBlock are
        bc(d) and cib(d)."""
        scalar_call = f"{cast}({fn}({args(f'p + idx * {tsize}', bc, cib, cib(D - 1))}))"
        if vec is None:
            call(pad, f"{dst}[k]", scalar_call, 0)
            produced(pad, 0)
            return
        fnv, VW, vsize = vec
        a(f"{pad}if use_vec:")
        a(f"{pad}    v0 = {cib(D - 1)} - {cib(D - 1)} % {VW}")
        a(f"{pad}    h = (idx * 40503 + v0 * 131" + "".join(f" + {bc(d)} * {7919 + 2 * d}" for d in range(D))
          + "".join(f" + {cib(d)} * {104729 + 2 * d}" for d in range(D - 1)) + f") & {VCACHE - 1}")
        a(f"{pad}    if key[h, 0] != idx or key[h, 1] != v0" + "".join(
            f" or key[h, {2 + d}] != {bc(d)}" for d in range(D)) + "".join(
            f" or key[h, {2 + D + d}] != {cib(d)}" for d in range(D - 1)) + ":")
        call(pad + " " * 8, "vr", f"{fnv}({args(f'p + idx * {vsize}', bc, cib, 'v0')})", 1)
        for j in range(VW):
            a(f"{pad}        got[h, {j}] = {cast}(vr[{j}])")
        a(f"{pad}        key[h, 0] = idx")
        a(f"{pad}        key[h, 1] = v0")
        for d in range(D):
            a(f"{pad}        key[h, {2 + d}] = {bc(d)}")
        for d in range(D - 1):
            a(f"{pad}        key[h, {2 + D + d}] = {cib(d)}")
        a(f"{pad}    {dst}[k] = got[h, {cib(D - 1)} - v0]")
        produced(pad + " " * 4, 1)
        if mode == "check":
            call(pad + " " * 4, "s", scalar_call, 0)
            a(f"{pad}    if s != {dst}[k] and not (s != s and {dst}[k] != {dst}[k]):")
            a(f"{pad}        info[2] = {TN.DECODE_MISMATCH}")
            a(f"{pad}        info[3] = k")
            a(f"{pad}        return base")
        a(f"{pad}else:")
        call(pad + " " * 4, f"{dst}[k]", scalar_call, 0)
        produced(pad + " " * 4, 0)

    if S is not None:
        a("        pt = pf.ticks()")
    # A clean plan (2-D, every element in the tensor: the interior tiles of a GEMM) walks the
    # row and column tables directly: no per-element status, clamp or fallback tests
    if D != 2:
        a("        clean = False")
    else:
        a(f"        clean = tn.plan_clean(rdim, {t.rows}, {t.cols}, rt, ct)")
        a("        if clean:")
        a(f"            for r in range({t.rows}):")
        a(f"                rp = rt[r, {TN.P_PART}]")
        a(f"                rb = rt[r, {TN.P_BC}]")
        a(f"                ri = rt[r, {TN.P_CIB}]")
        a(f"                for c in range({t.cols}):")
        a(f"                    k = r * {t.cols} + c")
        a(f"                    idx = (rp + ct[c, {TN.P_PART}]) & 0xFFFFFFFF")
        a("                    if rdim == 0:")
        a(f"                        b0, i0, b1, i1 = rb, ri, ct[c, {TN.P_BC}], ct[c, {TN.P_CIB}]")
        a("                    else:")
        a(f"                        b0, i0, b1, i1 = ct[c, {TN.P_BC}], ct[c, {TN.P_CIB}], rb, ri")
        decode(" " * 20, lambda d: f"b{d}", lambda d: f"i{d}")
    a("        if not clean:")
    a(f"            for k in range({t.rows * t.cols}):")
    a(f"                r = k // {t.cols}")
    a(f"                c = k - r * {t.cols}")
    a("                st, idx = tn.element(r, c, rdim, rt, ct, bc, cib)")
    a("                if st < 0:")
    a(f"                    st, idx = tn.address(r, c, {t.cols}, lv, {D}, vv, {V}, {perm}, {hasd}, "
      f"{acc.layout.clamp}, False, bc, cib, info)")
    a("                stat[k] = st")
    a("                if st == 0:")
    decode(" " * 20, lambda d: f"bc[{d}]", lambda d: f"cib[{d}]")
    a("                elif st == 2:")
    a(f"                    f, i = tn.clamp_value(lv[{5 * D}], {fmt_of(t.elem)})")
    a(f"                    {dst}[k] = {'f' if is_float else 'i'}")
    a("                elif st > 2:")
    a("                    info[2] = st")
    a("                    info[3] = k")
    a("                    return base")
    if S is not None:       # an instance decodes by one path (check mode: both, counted as vector)
        which = "(1 if use_vec else 0)" if vec is not None else "0"
        a(f"        err[{S + 4} + {which}] += pf.ticks() - pt")
    a("        for l in range(inv):")
    a("            for e in range(NL):")
    a("                k = tab[l, e]")
    a("                if not clean and stat[k] == 1:")
    a("                    frag[e, base + l] = obj[e, base + l]")
    a("                else:")
    a(f"                    frag[e, base + l] = {dst}[k]")
    a("    return -1")
    em.globals.append("\n".join(L) + "\n")
    return name


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


@collective("OpCooperativeMatrixReduceNV")
def _reduce(em, ins, wait, resume):
    from ..emitter import nb_type
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
    is_float = src.elem.kind == "float"
    do = em.dense(em.W // inv, res.rows * res.cols, "float64" if is_float else "int64")
    nb = nb_type(src.elem)
    back = "np.float64" if is_float else "np.int64"
    R, C, RR, RC = src.rows, src.cols, res.rows, res.cols
    name = f"_rd{ins.result}"
    call = f"{fn}(acc, {nb}(s[{{k}}]), {_cb_ctx()}, base)"
    from ...runtime.cache import JIT_OPTIONS
    L = [f"@njit({JIT_OPTIONS})", f"def {name}(state, wait, inv, src, out, {_ctx()}):",
         "    W = state.shape[0]",
         f"    {CB_PTRS}",
         "    for base in range(0, W, inv):",
         "        if state[base] != wait:",
         "            continue",
         "        s = src[base // inv]",
         "        o = out[base // inv]"]
    a = L.append

    S = em.prof.slots("combine", ("calls", "elements", "ticks"), ins=ins, fid=fid) if em.profiling else None
    if S is not None:
        a(f"        err[{S + 1}] += {RR * RC}")

    def fold(indent, first, rest_loop, k_expr):
        # acc = combine(...combine(first, next)..., last), in the order the loop gives
        pad = "    " * indent
        a(f"{pad}acc = {nb}(s[{first}])")
        a(f"{pad}{rest_loop}")
        if S is not None:
            a(f"{pad}    pt = pf.ticks()")
        a(f"{pad}    acc = {call.format(k=k_expr)}")
        if S is not None:
            a(f"{pad}    err[{S + 2}] += pf.ticks() - pt; err[{S}] += 1")
        a(f"{pad}    if err[0] != 0:")
        a(f"{pad}        return -2")

    if mode == ROW:
        a(f"        for r in range({R}):")
        fold(3, f"r * {C}", f"for c in range(1, {C}):", f"r * {C} + c")
        a(f"            for j in range({RC}):")
        a(f"                o[r * {RC} + j] = {back}(acc)")
    elif mode == COLUMN:
        a(f"        for c in range({C}):")
        fold(3, "c", f"for r in range(1, {R}):", f"r * {C} + c")
        a(f"            for i in range({RR}):")
        a(f"                o[i * {RC} + c] = {back}(acc)")
    elif mode == ROW | COLUMN:
        fold(2, "0", f"for k in range(1, {R * C}):", "k")
        a(f"        for j in range({RR * RC}):")
        a(f"            o[j] = {back}(acc)")
    else:
        # (2r, 2c), (2r+1, 2c), (2r, 2c+1), (2r+1, 2c+1): the order the seed lists them in
        a(f"        for i in range({RR}):")
        a(f"            for j in range({RC}):")
        a(f"                b0 = 2 * i * {C} + 2 * j")
        fold(4, "b0", f"for q in ({C}, 1, {C} + 1):", "b0 + q")
        a(f"                o[i * {RC} + j] = {back}(acc)")
    a("    return -1")
    em.globals.append("\n".join(L) + "\n")
    em.line(f"if {name}(state, {wait}, {inv}, {ds}, {do}, {_ctx()}) == -2:")
    em.line(f"    {em.fail_return}")
    em.line(f"cm.scatter(state, {wait}, {inv}, {do}, {em.table(res.layout)}, {em.coll_result_block(ins)})")
    em.line(f"sg_resume(state, {wait}, {resume})")


CALLBACKS["OpCooperativeMatrixReduceNV"] = lambda em, ins: [(ins.operands[2], "CombineFunc")]


# -- per-element operations -----------------------------------------------------------------------

@collective("OpCooperativeMatrixPerElementOpNV")
def _per_element(em, ins, wait, resume):
    from ..emitter import nb_type
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
    params, args, call_args = [], [], []
    for i, x in enumerate(extra):
        xt = em.value_type(x)
        if isinstance(xt, CoopMat):
            params.append(f"x{i}")
            args.append(em.coll_block(x))
            call_args.append(f"x{i}[e, lane]")
        else:
            rows = em.coll_arrays(x)
            for j, row in enumerate(rows):
                params.append(f"x{i}_{j}")
                args.append(row)
                call_args.append(f"x{i}_{j}[lane]")
    out = em.coll_result_block(ins)
    rt, ct = nb_type(pt[0]), nb_type(pt[1])
    name = f"_pe{ins.result}"
    from ...runtime.cache import JIT_OPTIONS
    L = [f"@njit({JIT_OPTIONS})",
         f"def {name}(state, wait, inv, tab, src, out, {''.join(p + ', ' for p in params)}{_ctx()}):",
         "    W = state.shape[0]",
         f"    {CB_PTRS}",
         "    NL = tab.shape[1]",
         "    for base in range(0, W, inv):",
         "        if state[base] != wait:",
         "            continue",
         "        for l in range(inv):",
         "            lane = base + l",
         "            for e in range(NL):",
         "                k = tab[l, e]",
         f"                r = k // {t.cols}",
         f"                out[e, lane] = {fn}({rt}(r), {ct}(k - r * {t.cols}), src[e, lane], "
         f"{''.join(c + ', ' for c in call_args)}{_cb_ctx()}, lane)",
         "                if err[0] != 0:",
         "                    return -2",
         "    return -1"]
    if em.profiling:
        S = em.prof.slots("per-element", ("calls", "elements", "ticks"), ins=ins, fid=fid)
        i = L.index("                k = tab[l, e]")
        L[i:i] = ["                pt = pf.ticks()"]
        j = L.index("                if err[0] != 0:")
        L[j:j] = [f"                err[{S + 2}] += pf.ticks() - pt; err[{S}] += 1; err[{S + 1}] += 1"]
    em.globals.append("\n".join(L) + "\n")
    em.line(f"if {name}(state, {wait}, {inv}, {em.table(t.layout)}, {src}, {out}, "
            f"{''.join(a + ', ' for a in args)}{_ctx()}) == -2:")
    em.line(f"    {em.fail_return}")
    em.line(f"sg_resume(state, {wait}, {resume})")


CALLBACKS["OpCooperativeMatrixPerElementOpNV"] = lambda em, ins: [(ins.operands[1], "per-element Func")]


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
    em.line(f"cm.scatter(state, {wait}, {inv}, {d}, {em.table(dst.layout)}, {em.coll_result_block(ins)})")
    em.line(f"sg_resume(state, {wait}, {resume})")


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
    dt = em.dense(em.W // inv, src.rows * src.cols, "float64" if src.elem.kind == "float" else "int64")
    em.line(f"tn.transpose(state, {wait}, {inv}, {d}, {dt}, {src.rows}, {src.cols})")
    em.line(f"cm.scatter(state, {wait}, {inv}, {dt}, {em.table(dst.layout)}, {em.coll_result_block(ins)})")
    em.line(f"sg_resume(state, {wait}, {resume})")
