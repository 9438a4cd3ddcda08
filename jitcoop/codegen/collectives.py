"""The scheduler's side of the generator: memory that outlives a lane's run, and the operands of
collective instructions.

Per worker thread, one *work* area (zeroed once per dispatch) holds the lane states, the spill
slots and the operands of collectives, at offsets fixed here:

- a *slot row* is W values of one type, one per lane: a value that lives across a collective keeps
  each leaf in one (the lane saves it before it stops, and reloads it when it resumes); the
  collective reads its operands and writes its results there;
- a *block* [n, W] is n rows together: a cooperative matrix's fragments (element e of lane l at
  row e, column l), which is what the kernel library's matrix functions take;
- operand rows (int64 per lane), dense scratch matrices and an `info` array for failure details.

Lane-layout tables and other constant arrays go into one read-only blob of constants beside the
code (`KernelMeta.consts`), passed to the kernel at run time: no table is ever LLVM text.

Kernel-library calls (jitcoop.runtime.library) take arrays as numba does: seven fields each.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SpirvError
from ..spirv.types import Pointer, Scalar, n_leaves
from . import element_loops
from .llvm import ty

# Scalar types of slot rows by LLVM register type, and their kernel-library dtype tags.
_SLOT = {"i1": ("i8", "b"), "i8": ("i8", "i8"), "i16": ("i16", "i16"), "i32": ("i32", "i32"),
         "i64": ("i64", "i64"), "float": ("float", "f32"), "double": ("double", "f64")}
SIZE_OF = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "float": 4, "double": 8}   # LLVM type -> bytes
_DTYPE_LLVM = {"b": "i8", "i8": "i8", "u8": "i8", "i16": "i16", "u16": "i16", "i32": "i32", "u32": "i32",
               "i64": "i64", "u64": "i64", "f32": "float", "f64": "double"}
_NP = {"b": np.bool_, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
       "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f32": np.float32, "f64": np.float64}


def dtype_of(s: Scalar) -> str:
    """The kernel-library dtype tag of slot rows holding leaves of scalar type s."""
    if s.kind == "bool":
        return "b"
    if s.kind == "ptr":
        return "i64"
    if s.kind == "float":
        return "f64" if s.width == 64 else "f32"
    return f"{'i' if s.signed else 'u'}{s.width}"


@dataclass
class Arr:
    """An array argument of a kernel-library call: a pointer operand, a dtype tag and a shape
    (ints or i64 operands), C-contiguous."""
    ptr: str
    dtype: str
    shape: tuple

    @property
    def llvm(self) -> str:
        return _DTYPE_LLVM[self.dtype]

    def row(self, i: int, gen) -> "Arr":
        """Row i of a 2-D array (a 1-D array of shape[1])."""
        n = self.shape[1]
        off = gen.op(f"getelementptr {self.llvm}, ptr {self.ptr}, i64 {i * n}")
        return Arr(off, self.dtype, (n,))


class Collectives:
    """Mixin of KernelGen: work memory, slots of values crossing collectives, matrices in slot
    rows, operands of collectives and kernel-library calls."""

    def _init_collectives(self):
        self.work_size = 0
        self._work_names: dict = {}
        self.item_slots: dict = {}        # item -> [(register type, slot type, row pointer)]
        self.item_blocks: set = set()     # items whose rows are one block, consecutive rows of one type
        self.res_blocks: dict = {}        # resident key -> (pointer, llvm type, rows)
        self.entry_fills: list[str] = []
        self._pending_edges: list = []
        self._consts = bytearray()
        self._const_names: dict = {}
        self._ret_slots: dict = {}
        self._excinfo = None
        self.meta.library = []
        # float64 shadows of MulAdd operands (rules.khr_coopmat): the ids that want one (computed
        # at the first load), and value id -> shadow block for the loads generated so far
        self.f64_shadow_ids: set | None = None
        self.muladd_pairs: dict | None = None          # rules.khr_coopmat.muladd_pairs
        self.f64_shadows: dict = {}

    # -- memory of the work area ----------------------------------------------------------------------
    def work_alloc(self, nbytes: int, align: int = 64) -> int:
        off = -(-self.work_size // align) * align
        self.work_size = off + max(nbytes, 1)
        return off

    def work_array(self, name: str, t: str, n: int) -> str:
        """A pointer operand to n values of LLVM type t in the work area (made once, in the entry)."""
        p = self._work_names.get(name)
        if p is None:
            off = self.work_alloc(n * SIZE_OF[t])
            p = self._work_names[name] = f"%w.{name}"
            self.entry_defs.append(f"{p} = getelementptr i8, ptr %work, i64 {off}")
        return p

    def const_blob(self, arr: np.ndarray) -> str:
        """A pointer operand to a copy of `arr` in the kernel's read-only constants."""
        data = np.ascontiguousarray(arr).tobytes()
        key = (arr.dtype.str, arr.shape, data)
        p = self._const_names.get(key)
        if p is None:
            off = -(-len(self._consts) // 64) * 64
            self._consts.extend(b"\0" * (off - len(self._consts)))
            self._consts.extend(data)
            p = self._const_names[key] = f"%c.{len(self._const_names)}"
            self.entry_defs.append(f"{p} = getelementptr i8, ptr %consts, i64 {off}")
        return p

    def table(self, layout) -> Arr:
        """A lane layout's table [invocations, length] (int32) among the constants."""
        return Arr(self.const_blob(layout.table.astype(np.int32)), "i32", (layout.invocations, layout.length))

    def const_array(self, values, dtype="i64") -> Arr:
        a = np.asarray(list(values) or [0], _NP[dtype])
        return Arr(self.const_blob(a), dtype, (len(values),))

    def dense(self, ninst: int, n: int, dtype: str) -> Arr:
        """A scratch array [instances, n] in the work area (one per call site)."""
        name = f"d{len(self._work_names)}"
        return Arr(self.work_array(name, _DTYPE_LLVM[dtype], ninst * n), dtype, (ninst, n))

    def info_array(self) -> Arr:
        """A small int64 array collective kernels write failure details into."""
        from ..kernels.codes import INFO_WORDS
        return Arr(self.work_array("info", "i64", INFO_WORDS), "i64", (INFO_WORDS,))

    def state_arr(self) -> Arr:
        return Arr(self.state, "i32", (self.W,))

    def ranges_arr(self) -> Arr:
        return Arr("%ranges", "i64", ("%nranges", 2))

    def info_at(self, k: int) -> str:
        p = self.op(f"getelementptr i64, ptr {self.info_array().ptr}, i64 {k}")
        return self.op(f"load i64, ptr {p}")

    # -- values that live across collectives (items) ----------------------------------------------------
    def item_types(self, x) -> list[str]:
        """LLVM register types of an item's leaves: an SSA id, or ("var", id)."""
        if isinstance(x, tuple):
            return [t for t, _ in self.var_homes[x[1]]]
        t = self.value_type(x)
        if isinstance(t, Pointer):
            return ["i64"]
        return [ty(s) for s in self.leaf_types(t)]

    def slots_of(self, x) -> list:
        """[(register type, slot type, row pointer)] of an item (a matrix's rows together)."""
        s = self.item_slots.get(x)
        if s is None:
            types = self.item_types(x)
            s = []
            rows = self._rows_together(types, f"s{len(self.item_slots)}")
            for t, row in zip(types, rows):
                s.append((t, _SLOT[t][0], row))
            self.item_slots[x] = s
            if len(set(types)) == 1:
                self.item_blocks.add(x)
        return s

    def _rows_together(self, types, name) -> list[str]:
        """Row pointers for leaves of these types, consecutive rows where they share a type."""
        out = []
        W = self.W
        if len(set(types)) == 1:
            st = _SLOT[types[0]][0]
            base = self.work_array(name, st, W * len(types))
            for i in range(len(types)):
                p = f"{base}.{i}"
                self.entry_defs.append(f"{p} = getelementptr {st}, ptr {base}, i64 {i * W}")
                out.append(p)
            return out
        for i, t in enumerate(types):
            out.append(self.work_array(f"{name}.{i}", _SLOT[t][0], W))
        return out

    def _slot_at(self, st: str, row: str) -> str:
        return self.op(f"getelementptr {st}, ptr {row}, i64 {self.lane_reg}")

    def save_item(self, x, vals=None):
        """The lane's current value of an item (or `vals`) to its slots."""
        if vals is None:
            vals = self.var_leaves(x[1]) if isinstance(x, tuple) else self.vals(x)
        for (t, st, row), v in zip(self.slots_of(x), vals):
            if t == "i1":
                v = self.op(f"zext i1 {v} to i8")
            self.emit(f"store {st} {v}, ptr {self._slot_at(st, row)}")

    def load_item(self, x):
        """A resuming lane gets an item back from its slots."""
        vals = []
        for t, st, row in self.slots_of(x):
            v = self.op(f"load {st}, ptr {self._slot_at(st, row)}")
            if t == "i1":
                v = self.op(f"trunc i8 {v} to i1")
            vals.append(v)
        if isinstance(x, tuple):
            self.var_store(x[1], 0, vals)
        else:
            home = self._home(x, self.item_types(x))
            for (t, a), v in zip(home, vals):
                self.emit(f"store {t} {v}, ptr {a}")

    # -- values living in slot rows (resident) ------------------------------------------------------------
    def _res_key(self, x):
        if isinstance(x, tuple):
            return x
        c = self.coalesced.get(x, x)       # a value sharing a phi's or variable's rows
        return c

    def resident_block(self, x) -> tuple[str, str, int]:
        """(block pointer, LLVM type, rows) of a resident value, variable or scratch copy."""
        key = self._res_key(x)
        b = self.res_blocks.get(key)
        if b is None:
            if isinstance(key, tuple) and key[0] == "var":
                t = self.var_types[key[1]].pointee
            elif isinstance(key, tuple):
                t = self.value_type(key[1])
            else:
                t = self.value_type(key)
            lt = self.leaf_types(t)
            et = _SLOT[ty(lt[0])][0]
            ptr = self.work_array(f"r{len(self.res_blocks)}", et, self.W * len(lt))
            b = self.res_blocks[key] = (ptr, et, len(lt))
        return b

    def resident_arr(self, x) -> Arr:
        p, et, n = self.resident_block(x)
        t = self.leaf_types(self.value_type(x) if not isinstance(x, tuple) else (
            self.var_types[x[1]].pointee if x[0] == "var" else self.value_type(x[1])))[0]
        return Arr(p, dtype_of(t), (n, self.W))

    def _res_elem(self, p, et, e) -> str:
        """The address of the current lane's component e (a number, or an i64 register) of rows."""
        if isinstance(e, str):
            row = self.op(f"mul i64 {e}, {self.W}") if self.W != 1 else e
            idx = self.op(f"add i64 {row}, {self.lane_reg}")
        else:
            idx = self.op(f"add i64 {self.lane_reg}, {e * self.W}") if e else self.lane_reg
        return self.op(f"getelementptr {et}, ptr {p}, i64 {idx}")

    def resident_component(self, x, e) -> str:
        """The current lane's component e (a number, or an i64 register) of a resident value."""
        p, et, _ = self.resident_block(x)
        return self.op(f"load {et}, ptr {self._res_elem(p, et, e)}")

    def resident_store_component(self, x, e, v: str):
        """Store the current lane's component e (a number, or an i64 register) of a resident
        variable."""
        p, et, _ = self.resident_block(x)
        self.emit(f"store {et} {v}, ptr {self._res_elem(p, et, e)}")

    def checked_component(self, ins, p):
        """The index of a "res_elem" pointer's component (a number, or an i64 register), failing
        the lane where it is past the end of the fragment (a constant index was checked when the
        access chain was made)."""
        e = p.addr
        if not e.startswith("%"):
            return int(e)
        if self.options.unchecked:
            return e
        n = self.resident_block(("var", p.var))[2]
        bad = self.op(f"icmp uge i64 {e}, {n}")
        self.fail_if(bad, ins, f"index {{d}} of a cooperative matrix component, past the {n} components "
                               f"each invocation holds", details=(e,))
        return e

    def resident_leaves(self, x) -> list[str]:
        """The current lane's elements of a resident value or variable."""
        p, et, n = self.resident_block(x)
        return [self.op(f"load {et}, ptr {self._res_elem(p, et, e)}") for e in range(n)]

    def resident_store(self, x, vals):
        p, et, n = self.resident_block(x)
        loop = self.elem_loop
        if loop is not None and x == loop.result:
            # the component an element loop's rule computed (element_loops.py)
            self.emit(f"store {et} {vals[0]}, ptr {self._res_elem(p, et, loop.e)}")
            return
        if len(vals) != n:
            raise SpirvError(f"a value of {len(vals)} components stored into a matrix of {n}")
        if self.invariant and not self.in_each_lane:
            # a lane-invariant kernel outside each_lane stores only splats (initializers and
            # constants reaching a phi): the same in every lane's column; one value in every
            # component is one fill of the whole block (a 128 x 128 accumulator of a one-invocation
            # workgroup wrote 16,384 row stores at each branch its zero reached)
            if len(set(vals)) == 1:
                self.fill_row(p, et, n * self.W, vals[0])
                return
            for e, v in enumerate(vals):
                row = self.op(f"getelementptr {et}, ptr {p}, i64 {e * self.W}")
                self.fill_row(row, et, self.W, v)
            return
        if n > element_loops.LONG_FRAGMENT and len(set(vals)) == 1:
            # a splat (a constant reaching a phi, say) into a long fragment: a loop
            self.emit(f"call void {self._lane_fill_helper(et)}(ptr {p}, {et} {vals[0]}, i64 {n}, "
                      f"i64 {self.W}, i64 {self.lane_reg}, i64 1)")
            return
        for e, v in enumerate(vals):
            self.emit(f"store {et} {v}, ptr {self._res_elem(p, et, e)}")

    def resident_copy(self, dst, src):
        """The current lane's fragment from src (resident, or any value) to resident dst."""
        if not isinstance(src, tuple) and src not in self.resident:
            self.resident_store(dst, self.vals(src))
            return
        dp, et, n = self.resident_block(dst)
        sp, _, _ = self.resident_block(src)
        if dp == sp:
            return                            # coalesced: the same rows
        if self.invariant and not self.in_each_lane:
            # every lane's column at once
            self.declare("@llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")
            self.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {dp}, ptr {sp}, i64 {n * self.W * SIZE_OF[et]}, "
                      f"i1 false)")
            return
        if n <= 16:
            for e in range(n):
                v = self.op(f"load {et}, ptr {self._res_elem(sp, et, e)}")
                self.emit(f"store {et} {v}, ptr {self._res_elem(dp, et, e)}")
            return
        self.emit(f"call void {self._lane_copy_helper(et)}(ptr {dp}, ptr {sp}, i64 {n}, i64 {self.W}, "
                  f"i64 {self.lane_reg}, i64 1)")

    # Copies and fills of the current lane's column of rows, n components W apart. Their last two
    # arguments are a lane and a count of lanes from it: the scalar code passes its lane and 1,
    # the lane groups' vector copy its group's first lane and G, one call where it made G
    # (lanevec.LANE_RUN_HELPERS). Not inlined: written out at a constant n, and again per
    # invocation in the vector copy, LLVM unrolled 400 of them in one kernel.
    def _lane_copy_helper(self, et: str) -> str:
        return self._lane_run_helper(f"@jc.lane_copy.{et}", "ptr %s", et, f"""  %ps = getelementptr {et}, ptr %s, i64 %i
  %v = load {et}, ptr %ps""")

    def _lane_fill_helper(self, et: str) -> str:
        return self._lane_run_helper(f"@jc.lane_fill.{et}", f"{et} %v", et, "")

    def _lane_run_helper(self, name: str, src: str, et: str, read: str) -> str:
        self.declare(name, f"""define internal void {name}(ptr %d, {src}, i64 %n, i64 %w, i64 %l, i64 %g) noinline {{
entry:
  br label %row
row:
  %e = phi i64 [ 0, %entry ], [ %e1, %row.end ]
  %r = mul i64 %e, %w
  %r0 = add i64 %r, %l
  br label %col
col:
  %j = phi i64 [ 0, %row ], [ %j1, %col ]
  %i = add i64 %r0, %j
{read}
  %pd = getelementptr {et}, ptr %d, i64 %i
  store {et} %v, ptr %pd
  %j1 = add i64 %j, 1
  %cmore = icmp ult i64 %j1, %g
  br i1 %cmore, label %col, label %row.end
row.end:
  %e1 = add i64 %e, 1
  %more = icmp ult i64 %e1, %n
  br i1 %more, label %row, label %done
done:
  ret void
}}""")
        return name

    def is_resident(self, vid) -> bool:
        return vid in self.resident

    # -- operands of collectives ----------------------------------------------------------------------------
    def _uniform_operand(self, vid) -> bool:
        """A value computed outside the lanes (constant, global, per workgroup): not in slots."""
        return self.spec.is_const(vid) or vid in self.m.defs or vid in self.hoisted

    def fill_row(self, ptr: str, t: str, n: int, v: str, where=None):
        """n values v of LLVM type t from ptr on: one vector store when that is short (the lane
        states and operand rows of lane-invariant kernels, written at every collective), else a
        loop (here, or in the entry's fills)."""
        if where is None and n * SIZE_OF[t] <= 512:
            vec = f"<{n} x {t}>"
            one = self.op(f"insertelement {vec} poison, {t} {v}, i64 0")
            all_ = self.op(f"shufflevector {vec} {one}, {vec} poison, <{n} x i32> zeroinitializer")
            self.emit(f"store {vec} {all_}, ptr {ptr}, align {SIZE_OF[t]}")
            return
        name = f"@jc.fill.{t}"
        self.declare(name, f"""define internal void {name}(ptr %p, i64 %n, {t} %v) noinline {{
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %q = getelementptr {t}, ptr %p, i64 %i
  store {t} %v, ptr %q
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}""")
        line = f"call void {name}(ptr {ptr}, i64 {n}, {t} {v})"
        if where is None:
            self.emit(line)
        else:
            where.append(line)

    def broadcast_row(self, row: str, st: str, step: int = 1):
        """Lane 0's value of a slot row to every lane (lane-invariant kernels: only lane 0 ran),
        or to every `step`-th lane: the first lanes of the scope instances, all that a collective
        reading one value per instance looks at (a KHR load's pointer and stride: with one
        subgroup a workgroup, nothing to copy; side by side at 512^3 on one core, the 8 x 8
        GEMM of benchmarks/shaders/corpus/plain.comp ran 1.12x (float32) and 1.14x (exact) as
        fast without its four 256-byte copies of the pointers each K step, plain_16 1.05x)."""
        if self.W <= step:
            return
        if step == 1:
            self.fill_row(row, st, self.W, self.op(f"load {st}, ptr {row}"))
            return
        v = self.op(f"load {st}, ptr {row}")
        for lane in range(step, self.W, step):
            self.emit(f"store {st} {v}, ptr {self.op(f'getelementptr {st}, ptr {row}, i64 {lane}')}")

    def _lane_rows(self, vid, step: int = 1) -> list:
        """The slot rows of an operand that lives in them, broadcast from lane 0 first (to every
        `step`-th lane) when only lane 0 ran."""
        slots = self.slots_of(vid)
        if self.invariant:
            for _, st, row in slots:
                self.broadcast_row(row, st, step)
        return slots

    def coll_arrays(self, vid) -> list[Arr]:
        """Per-lane rows holding an operand of a collective, one per leaf (a uniform operand is
        broadcast into rows of its own first)."""
        t = self.value_type(vid)
        lt = self.leaf_types(t) if not isinstance(t, Pointer) else [Scalar("ptr", 64)]
        if self._uniform_operand(vid):
            out = []
            for i, (s, v) in enumerate(zip(lt, self.vals(vid))):
                lt_ = _SLOT[ty(s)][0]
                p = self.work_array(f"u{vid}.{i}", lt_, self.W)
                if ty(s) == "i1":
                    v = self.op(f"zext i1 {v} to i8")
                self.fill_row(p, lt_, self.W, v)
                out.append(Arr(p, dtype_of(s), (self.W,)))
            return out
        if vid in self.resident:
            a = self.resident_arr(vid)
            return [a.row(i, self) for i in range(a.shape[0])]
        return [Arr(row, dtype_of(s), (self.W,)) for s, (_, _, row) in zip(lt, self._lane_rows(vid))]

    def coll_result(self, ins) -> list[Arr]:
        """Rows for a collective's result (the resumed lane reloads them)."""
        return self.coll_arrays(ins.result)

    def coll_i64(self, vid, step: int = 1) -> Arr:
        """An int64 row per lane holding a scalar operand (pointer address, offset, stride): its
        own slot row when it is an int64, else a widened copy; a uniform value is filled in once
        per call (constants, binding addresses) or once per workgroup; vid None gives zeros (the
        work area starts zeroed and nothing writes that row). `step`: the collective reads only
        every step-th lane (one value per scope instance of that many lanes)."""
        dst = self.work_array(f"o{len(self._work_names)}", "i64", self.W)
        if vid is None:
            return Arr(dst, "i64", (self.W,))
        if not self._uniform_operand(vid):
            t = self.value_type(vid)
            (rt, st, row), = self._lane_rows(vid, step)
            if st == "i64":
                return Arr(row, "i64", (self.W,))
            signed = isinstance(t, Scalar) and t.kind == "int" and t.signed
            self.emit(f"call void {self._widen_helper(st, signed)}(ptr {dst}, ptr {row}, i64 {self.W})")
            return Arr(dst, "i64", (self.W,))
        if vid in self.hoisted:
            with self.at("wg_tail"):
                self.fill_row(dst, "i64", self.W, self.to_i64(vid))
        else:
            self.fill_row(dst, "i64", self.W, self.const_i64(vid), where=self.entry_fills)
        return Arr(dst, "i64", (self.W,))

    def const_i64(self, vid) -> str:
        """A constant integer (or a module-level pointer's address, defined in the entry) as an
        i64 operand that needs no instruction."""
        if not self.spec.is_const(vid):
            return self.ptr(vid, None).addr
        t = self.value_type(vid)
        v = int(self.spec.scalar_const(vid))
        if isinstance(t, Scalar) and t.kind == "int" and t.signed and v >> (t.width - 1) & 1 and v > 0:
            v -= 1 << t.width
        return str(v)

    def _widen_helper(self, st: str, signed: bool) -> str:
        """A loop copying n values of slot type st to their 64-bit form: integers to int64
        (extended as `signed` says), float to double."""
        name = f"@jc.widen.{st}.{'s' if signed else 'u'}"
        wt = "double" if st in ("float", "double") else "i64"
        if st == wt:
            conv = f"bitcast {wt} %v to {wt}"
        elif wt == "double":
            conv = "fpext float %v to double"
        else:
            conv = f"{'sext' if signed else 'zext'} {st} %v to i64"
        self.declare(name, f"""define internal void {name}(ptr %d, ptr %s, i64 %n) noinline {{
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %ps = getelementptr {st}, ptr %s, i64 %i
  %v = load {st}, ptr %ps
  %x = {conv}
  %pd = getelementptr {wt}, ptr %d, i64 %i
  store {wt} %x, ptr %pd
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}""")
        return name

    def coll_leaves_i64(self, vid, inv: int | None = None) -> Arr:
        """Like coll_i64 for every leaf of a composite operand (a tensor layout or view): int64
        [leaves, W]; vid None gives an empty one. With `inv` (an operand known to be uniform in
        each scope instance of inv lanes), only each instance's first lane's column is filled:
        what the tensor kernels read (a lane-invariant kernel's values are lane 0's)."""
        if vid is None:
            return Arr(self.work_array(f"o{len(self._work_names)}", "i64", 1), "i64", (0, self.W))
        n = n_leaves(self.value_type(vid))
        dst = self.work_array(f"o{len(self._work_names)}", "i64", n * self.W)
        if inv is not None:
            self._first_lanes_i64(vid, n, inv, dst)
            return Arr(dst, "i64", (n, self.W))
        if vid in self.resident:
            p, et, _ = self.resident_block(vid)
            self.emit(f"call void {self._widen_helper(et, False)}(ptr {dst}, ptr {p}, i64 {n * self.W})")
        elif vid in self.crossing and vid in self.item_blocks:
            # its rows are one block [n, W] (slots_of): one widening copy, not one per leaf (a
            # tensor layout's 11 leaves at every collective that reads it)
            (_, st, row), *_ = self._lane_rows(vid)
            self.emit(f"call void {self._widen_helper(st, False)}(ptr {dst}, ptr {row}, i64 {n * self.W})")
        elif vid in self.crossing:
            for j, (t, st, row) in enumerate(self._lane_rows(vid)):
                d = self.op(f"getelementptr i64, ptr {dst}, i64 {j * self.W}")
                self.emit(f"call void {self._widen_helper(st, False)}(ptr {d}, ptr {row}, i64 {self.W})")
        else:
            for j, v in enumerate(self.vals(vid)):
                d = self.op(f"getelementptr i64, ptr {dst}, i64 {j * self.W}")
                x = self.op(f"zext i32 {v} to i64")
                self.fill_row(d, "i64", self.W, x)
        return Arr(dst, "i64", (n, self.W))

    def _first_lanes_i64(self, vid, n: int, inv: int, dst: str):
        """dst[j, q x inv] = leaf j of the operand in instance q's first lane (lane 0's in a
        lane-invariant kernel), zero-extended."""
        if vid in self.resident:
            p, et, _ = self.resident_block(vid)
            rows = [self.op(f"getelementptr {et}, ptr {p}, i64 {j * self.W}") for j in range(n)]
            vals = None
        elif vid in self.crossing:
            slots = self.slots_of(vid)
            rows, et, vals = [row for _, _, row in slots], slots[0][1], None
        else:
            vals, et = self.vals(vid), "i32"
        for q in range(self.W // inv):
            lane = 0 if self.invariant else q * inv
            for j in range(n):
                if vals is None:
                    v = self.op(f"load {et}, ptr {self.op(f'getelementptr {et}, ptr {rows[j]}, i64 {lane}')}")
                else:
                    v = vals[j]
                x = self.op(f"zext {et} {v} to i64") if et != "i64" else v
                self.emit(f"store i64 {x}, ptr {self.op(f'getelementptr i64, ptr {dst}, i64 {j * self.W + q * inv}')}")

    def coll_block(self, vid) -> Arr:
        """The block [length, W] holding a matrix operand's fragments (a uniform operand, such as
        a splat constant, is broadcast into a block of its own first)."""
        if vid in self.resident:
            return self.resident_arr(vid)
        lt = self.leaf_types(self.value_type(vid))
        if self._uniform_operand(vid):
            et = _SLOT[ty(lt[0])][0]
            if f"u{vid}" in self._work_names:
                # filled once per workgroup: operand blocks are only read (two tensor loads
                # into one constant Object, say)
                return Arr(self._work_names[f"u{vid}"], dtype_of(lt[0]), (len(lt), self.W))
            blk = self.work_array(f"u{vid}", et, len(lt) * self.W)
            vals = self.vals(vid)
            fills = self.entry_fills if vid not in self.hoisted else None
            if len(set(vals)) == 1:
                # a splat (a constant zero accumulator, mostly): one fill of the block, where a
                # fill per row made a call per component
                if fills is None:
                    with self.at("wg_tail"):
                        self.fill_row(blk, et, len(lt) * self.W, vals[0])
                else:
                    self.fill_row(blk, et, len(lt) * self.W, vals[0], where=fills)
                return Arr(blk, dtype_of(lt[0]), (len(lt), self.W))
            for i, v in enumerate(vals):
                row = f"{blk}.r{i}"
                self.entry_defs.append(f"{row} = getelementptr {et}, ptr {blk}, i64 {i * self.W}")
                if fills is None:
                    with self.at("wg_tail"):
                        self.fill_row(row, et, self.W, self.vals(vid)[i])
                else:
                    self.fill_row(row, et, self.W, v, where=fills)
            return Arr(blk, dtype_of(lt[0]), (len(lt), self.W))
        slots = self._lane_rows(vid)
        return Arr(slots[0][2], dtype_of(lt[0]), (len(lt), self.W))

    def coll_result_block(self, ins) -> Arr:
        if ins.result in self.resident:
            return self.resident_arr(ins.result)
        return self.coll_block(ins.result)

    def coll_block_64(self, vid) -> Arr:
        """A vector or matrix operand's block [leaves, W] in 64-bit form, for library functions
        written for float64 (float leaves) or int64 (integer leaves, extended as their
        signedness says): the operand's own block when its leaves are 64-bit, else a widened
        copy (one per call site)."""
        blk = self.coll_block(vid)
        s = self.leaf_types(self.value_type(vid))[0]
        wide = "f64" if s.kind == "float" else "i64"
        n = blk.shape[0] * self.W
        if _DTYPE_LLVM[blk.dtype] == _DTYPE_LLVM[wide]:
            return Arr(blk.ptr, wide, blk.shape)         # uint64 rows are int64 bits already
        dst = self.work_array(f"o{len(self._work_names)}", _DTYPE_LLVM[wide], n)
        signed = s.kind == "int" and s.signed
        self.emit(f"call void {self._widen_helper(_DTYPE_LLVM[blk.dtype], signed)}(ptr {dst}, ptr {blk.ptr}, "
                  f"i64 {n})")
        return Arr(dst, wide, blk.shape)

    def out_of_line(self, name: str, params: list, build):
        """Define `name` (void, noinline, taking `params`) in the module once, its body written by
        build() with the emitter's methods: the function under construction takes the kernel
        function's place meanwhile, and `%state` names the lane states (a parameter)."""
        if name in self.decls:
            return
        from .llvm import Function
        saved = self.fn, self.state
        self.fn = Function(f"define internal void {name}({', '.join(params)}) noinline")
        self.state = "%state"
        try:
            self.fn.block("entry")
            build()
            self.fn.emit("ret void")
            self.decls[name] = self.fn.render()
        finally:
            self.fn, self.state = saved

    def for_instances(self, inv: int, wait: int, body):
        """Emit `body(base, q)` for every scope instance (inv lanes from base, index q) whose first
        lane waits at `wait`: a loop over the workgroup's instances."""
        fn = self.fn
        pre = fn.cur
        head, run, nxt, done = (fn.label(x) for x in ("inst", "inst.run", "inst.next", "inst.done"))
        fn.br(head)
        fn.block(head)
        q = fn.phi("i64", "q")
        q.incoming.append(("0", pre))
        base = self.op(f"mul i64 {q.name}, {inv}")
        p = self.op(f"getelementptr i32, ptr {self.state}, i64 {base}")
        st = self.op(f"load i32, ptr {p}")
        fn.cbr(self.op(f"icmp eq i32 {st}, {wait}"), run, nxt)
        fn.block(run)
        body(base, q.name)
        fn.br(nxt)
        fn.block(nxt)
        q1 = self.op(f"add i64 {q.name}, 1")
        q.incoming.append((q1, nxt))
        fn.cbr(self.op(f"icmp ult i64 {q1}, {self.W // inv}"), head, done)
        fn.block(done)

    def declared_muladd(self, spec: str, dtypes: tuple, make, in_place: bool = False, pair: bool = False) -> str:
        """The name of the MulAdd function for (spec, dtypes, in_place, pair), defined in the
        module once."""
        key = ("mm", spec, dtypes, in_place, pair)
        name = self._const_names.get(key)
        if name is None:
            name = self._const_names[key] = f"@mm.{sum(1 for k in self._const_names if k[0] == 'mm')}"
            text, decls = make(name[1:], spec, dtypes, in_place, pair)
            for n, d in decls.items():
                self.declare(f"@{n}", d)
            self.globals.append(text)
        return name

    def resume_lanes(self, wait: int, resume: int):
        if self.invariant:
            self.fill_row(self.state, "i32", self.W, str(resume))       # every lane waited here
            return
        self.emit(f"call void {self.helper('resume')}(ptr {self.state}, i64 {self.W}, i32 {wait}, i32 {resume})")

    # -- kernel-library calls ------------------------------------------------------------------------------
    def lib(self, func: str, args: list, ins=None, ret: str | None = None) -> str | None:
        """Call a kernel-library function (`"jitcoop.kernels.module:name"`) with arguments that are
        Arr or (dtype tag, operand) scalars; returns its result (None for functions returning
        nothing). A function that raised is an internal error naming the instruction."""
        from ..runtime import library
        kinds = []
        for a in args:
            if isinstance(a, Arr):
                kinds.append(library.ArgKind(a.dtype, len(a.shape)))
            else:
                kinds.append(library.ArgKind(a[0]))
        v = library.variant(func, tuple(kinds))
        if all(x["symbol"] != v.symbol for x in self.meta.library):
            self.meta.library.append(dict(symbol=v.symbol, params=v.params, ret=v.ret,
                                          args=[str(a) for a in v.args], func=v.func))
        self.declare(f"@{v.symbol}", v.declaration().replace(f"@{v.symbol}", f'@"{v.symbol}"'))
        ops = []
        params = iter(v.params)
        for a in args:
            if isinstance(a, Arr):
                shape = list(a.shape)
                nitems = shape[0]
                for s in shape[1:]:
                    nitems = self._mul(nitems, s)
                isz = SIZE_OF[a.llvm]
                strides, st = [], isz
                for s in reversed(shape):
                    strides.insert(0, st)
                    st = self._mul(st, s)
                fields = ["null", "null", nitems, isz, a.ptr] + shape + strides
                for f in fields:
                    ops.append(f"{next(params)} {f}")
            else:
                dt, x = a
                pt = next(params)
                if dt == "b" and pt == "i8":
                    x = self.op(f"zext i1 {x} to i8") if x not in ("true", "false") else ("1" if x == "true" else "0")
                ops.append(f"{pt} {x}")
        retp = self._ret_slot(v.ret or "i64")
        exc = self._exc_slot()
        status = self.op(f'call i32 @"{v.symbol}"(ptr {retp}, ptr {exc}{"".join(", " + o for o in ops)})')
        bad = self.op(f"icmp ne i32 {status}, 0")
        self.fail_if(bad, ins if ins is not None else self._any_ins(),
                     f"internal error: jitcoop's kernel library function {func.split(':')[1]} raised "
                     f"(please report this with the shader)")
        if not v.ret:
            return None
        return self._convert(self.op(f"load {v.ret}, ptr {retp}"), v.ret, ret)

    def _convert(self, x: str, frm: str, to: str) -> str:
        """A library result of LLVM type frm as type `to` (numba widens some integer results)."""
        if frm == to or to is None:
            return x
        if frm.startswith("i") and to.startswith("i"):
            return self.cast_int(x, int(frm[1:]), int(to[1:]), False)
        if frm in ("float", "double") and to in ("float", "double"):
            return self.op(f"{'fpext' if to == 'double' else 'fptrunc'} {frm} {x} to {to}")
        raise TypeError(f"library result {frm} cannot be {to}")

    def lib_scalar(self, func: str, args: list, ret: str) -> str:
        """A kernel-library function of scalars returning a scalar of LLVM type `ret` (format
        conversions of the 8-bit float formats, GLSL packing)."""
        return self.lib(func, args, ret=ret)

    def _mul(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        return self.op(f"mul i64 {a}, {b}")

    def _ret_slot(self, t: str) -> str:
        p = self._ret_slots.get(t)
        if p is None:
            p = self._ret_slots[t] = self.fn.alloca(t, "ret")
        return p

    def _exc_slot(self) -> str:
        if self._excinfo is None:
            self._excinfo = self.fn.alloca("ptr", "exc")
        return self._excinfo

    def _any_ins(self):
        b = self.current_block
        return b.instrs[0] if b is not None and b.instrs else self.ff.blocks[0].term
