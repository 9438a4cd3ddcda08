"""Pointers and memory in generated code: what each pointer is (an address with the object it
points into, a promoted variable, a matrix variable in slot rows, a built-in), bounds checks, and
loads and stores of leaves in their memory forms (small floats as their bits, bool as a 32-bit
word).

A pointer into memory is an i64 host address. One whose root the generator can see (a binding,
the push constants, a workgroup variable, a per-lane frame) is checked against that object; any
other (physical storage buffer pointers, pointers through OpPhi/OpSelect) against the table of
every range the dispatch can reach (`@jc.in_ranges`).
"""
from __future__ import annotations

from dataclasses import replace

from ..errors import SpirvError
from ..spirv.types import size_of
from .helpers import CONVERT_WIDTH
from .llvm import mem_ty
from .meta import Ptr


class Memory:
    """Mixin of KernelGen: pointers, bounds checks, loads and stores."""

    def ptr(self, pid: int, ins) -> Ptr:
        p = self.ptrs.get(pid)
        if p is None and pid in self.var_types:
            p = self.ptrs[pid] = self._var_ptr(pid, ins)
        if p is None:
            raise SpirvError(f"%{pid} is used as a pointer but is not one the generator knows",
                             **(ins.where() if ins is not None else {}))
        if p.kind in ("mem", "res_elem") and pid in self.homes:
            return replace(p, addr=self.vals(pid)[0])
        return p

    def define_ptr(self, rid: int, p: Ptr):
        self.ptrs[rid] = p
        if p.kind in ("mem", "res_elem"):
            self.define_id(rid, [p.addr])

    def _var_ptr(self, v, ins) -> Ptr:
        pt = self.var_types[v]
        t, sc = pt.pointee, pt.storage
        if v in self.promoted:
            return Ptr("var", t, sc, var=v)
        if v in self.resident_vars:
            return Ptr("res", t, sc, var=v)
        if v in self.bindings:
            b = self.bindings[v]
            return Ptr("mem", t, sc, addr=f"%bp{b.index}", root=(f"%bp{b.index}", f"%bn{b.index}"),
                       static_off=0, root_min=b.min_size,
                       root_name=f"binding (set {b.set}, binding {b.binding}) '{b.name}'", descriptor=True)
        if v == self.push_var:
            return Ptr("mem", t, sc, addr="%pushp", root=("%pushp", "%pushn"), static_off=0,
                       root_min=self.meta.push_size, root_name="the push constants")
        if v in self.shared:
            name = f"%sh{v}"
            self.entry_defs.append(f"{name} = add i64 %shp, {self.shared[v]}")
            return Ptr("mem", t, sc, addr=name, root=(name, size_of(t)), static_off=0, root_min=size_of(t),
                       root_name=f"workgroup variable '{self.m.name_of(v)}'")
        if v in self.inputs:
            return Ptr("builtin", t, sc, var=v)
        if v in self.frame_off:
            k = self.vars.frame_scale
            return Ptr("mem", t, sc, addr=self.frame_addr(v), root=(self.frame_addr(v), size_of(t) * k),
                       static_off=0, root_min=size_of(t) * k, root_name=f"variable '{self.m.name_of(v)}'", scale=k)
        raise SpirvError(f"variable %{v} cannot be addressed", **(ins.where() if ins is not None else {}))

    def frame_addr(self, v) -> str:
        """The address of a variable in the current lane's private frame (made per lane)."""
        name = f"%fv{v}"
        if name not in self._frame_names:
            self._frame_names.add(name)
            self.lane_defs.append(f"{name} = add i64 %lanefr, {self.frame_off[v] * self.vars.frame_scale}")
        return name

    def check_range(self, ins, p: Ptr, addr: str, nbytes: int, write: bool = False) -> str:
        """The bounds check of an access of nbytes at addr (a read, or a write: a store or an
        atomic). Returns the address the access uses: addr, or under robust buffer access
        (KernelOptions.robust_buffer_access) for an access through a binding that is out of
        bounds, an address in a page of zeros (a read gives zeros) or a sink (a write is lost),
        as Vulkan's robustBufferAccess2 defines it."""
        if self.options.unchecked:
            return addr
        k = p.scale         # an interleaved frame's offsets and sizes are k times the object's
        if p.static_off is not None and p.root_min is not None and 0 <= p.static_off <= p.root_min - nbytes * k:
            return addr     # constant offset inside what the dispatch guarantees: always in bounds
        if p.root is not None:
            base, size = p.root
            # one unsigned compare: an address below the object gives a huge offset
            off = self.op(f"sub i64 {addr}, {base}")
            bad = self.op(f"icmp uge i64 {off}, {self._start_count(base, size, nbytes * k)}")
            if p.descriptor and self.options.robust_buffer_access:
                return self.op(f"select i1 {bad}, i64 {self._robust_page(nbytes, write)}, i64 {addr}")
            self.fail_if(bad, ins, f"out-of-bounds access: {nbytes} bytes at byte offset {{d}} of "
                                   f"{p.root_name or 'its object'}, which has {{e}} bytes",
                         details=(off if k == 1 else self.op(f"sdiv i64 {off}, {k}"),
                                  str(size if k == 1 else size // k)))
        else:
            ok = self.op(f"call i1 {self.helper('in_ranges')}(ptr %ranges, i64 %nranges, i64 {addr}, i64 {nbytes})")
            bad = self.op(f"xor i1 {ok}, true")
            self.fail_if(bad, ins, "access through a pointer that is outside every buffer (address {d:#x})",
                         details=(addr,))
        return addr

    def _robust_page(self, nbytes: int, write: bool) -> str:
        """The address an out-of-bounds access goes to under robust buffer access: a constant
        page of zeros for reads, a sink for writes (module globals as large as the largest
        access), taken once at the kernel's entry."""
        name = "@jc.robust.sink" if write else "@jc.robust.zero"
        self._robust_bytes = max(getattr(self, "_robust_bytes", 16), nbytes)
        for g, kind in (("@jc.robust.zero", "constant"), ("@jc.robust.sink", "global")):
            if g in self.decls or g == name:
                self.decls[g] = f"{g} = internal {kind} [{self._robust_bytes} x i8] zeroinitializer, align 16"
        reg = f"%robust.{'sink' if write else 'zero'}"
        if reg not in self._frame_names:
            self._frame_names.add(reg)
            self.entry_defs.append(f"{reg} = ptrtoint ptr {name} to i64")
        return reg

    def _start_count(self, base: str, size, nbytes: int) -> str:
        """How many byte offsets an access of nbytes may start at in the object at base (size -
        nbytes + 1, or 0 when it does not fit at all): a constant for a constant-size object,
        which lets LLVM prove a bounded index in range; else computed once per dispatch."""
        if isinstance(size, int):
            return str(max(size - nbytes + 1, 0))
        key = (base, nbytes)
        name = self._start_counts.get(key)
        if name is None:
            name = self._start_counts[key] = f"{base}.starts{nbytes}"
            self.entry_defs.append(f"{name}.fits = icmp sge i64 {size}, {nbytes}")
            self.entry_defs.append(f"{name}.n = sub i64 {size}, {nbytes - 1}")
            self.entry_defs.append(f"{name} = select i1 {name}.fits, i64 {name}.n, i64 0")
        return name

    def addr_plus(self, addr: str, off: int) -> str:
        return addr if not off else self.op(f"add i64 {addr}, {off}")

    def load_leaf(self, s, addr: str, raw: bool = False) -> str:
        """A leaf's value from memory at addr (raw: its memory bits, for a bit move)."""
        mt = mem_ty(s)
        p = self.op(f"inttoptr i64 {addr} to ptr")
        m = self.op(f"load {mt}, ptr {p}, align 1")
        return m if raw else self.from_mem(m, s)

    def store_leaf(self, s, addr: str, v: str, raw: bool = False):
        mt = mem_ty(s)
        p = self.op(f"inttoptr i64 {addr} to ptr")
        self.emit(f"store {mt} {v if raw else self.to_mem(v, s)}, ptr {p}, align 1")

    def load_leaves(self, lv, addr: str, raw: bool = False) -> list[str]:
        """The leaves (scalar, byte offset) of a value in memory at addr, in order. A run of
        CONVERT_WIDTH adjacent 16-bit floats is loaded as one vector and converted at once (with
        its one-at-a-time spelling beside it for the lane-group pass: llvm.Either)."""
        vals = [None] * len(lv)
        n = CONVERT_WIDTH
        vt = f"<{n} x float>"
        for i in self._converted_runs(lv, raw):
            s, off = lv[i]
            with self.fn.capture() as scalar:
                vals[i:i + n] = [self.load_leaf(s, self.addr_plus(addr, o)) for _, o in lv[i:i + n]]
            with self.fn.capture() as vector:
                p = self.op(f"inttoptr i64 {self.addr_plus(addr, off)} to ptr")
                m = self.op(f"load <{n} x i16>, ptr {p}, align 1")
                f = self.op(f"call {vt} {self.helper(_to_f32(s) + f'.v{n}')}(<{n} x i16> {m})")
                for k in range(n):
                    self.emit(f"{vals[i + k]} = extractelement {vt} {f}, i64 {k}")
            self.fn.either(vector, scalar)
        return [v if v is not None else self.load_leaf(s, self.addr_plus(addr, off), raw)
                for v, (s, off) in zip(vals, lv)]

    def store_leaves(self, lv, addr: str, vals: list[str], raw: bool = False):
        """Store a value's leaves (scalar, byte offset) at addr, runs of 16-bit floats as vectors
        (load_leaves)."""
        n = CONVERT_WIDTH
        vt = f"<{n} x float>"
        runs = set()
        for i in self._converted_runs(lv, raw):
            s, off = lv[i]
            with self.fn.capture() as scalar:
                for (_, o), v in zip(lv[i:i + n], vals[i:i + n]):
                    self.store_leaf(s, self.addr_plus(addr, o), v)
            with self.fn.capture() as vector:
                acc = "poison"
                for k in range(n):
                    acc = self.op(f"insertelement {vt} {acc}, float {vals[i + k]}, i64 {k}")
                m = self.op(f"call <{n} x i16> {self.helper(_from_f32(s) + f'.v{n}')}({vt} {acc})")
                p = self.op(f"inttoptr i64 {self.addr_plus(addr, off)} to ptr")
                self.emit(f"store <{n} x i16> {m}, ptr {p}, align 1")
            self.fn.either(vector, scalar)
            runs.update(range(i, i + n))
        for i, ((s, off), v) in enumerate(zip(lv, vals)):
            if i not in runs:
                self.store_leaf(s, self.addr_plus(addr, off), v, raw)

    @staticmethod
    def _converted_runs(lv, raw: bool):
        """Where runs of CONVERT_WIDTH leaves start that are the same 16-bit float, each right
        after the one before in memory (a matrix's or an array's elements). A raw move keeps
        the bits and converts nothing."""
        if raw:
            return
        i = 0
        while i + CONVERT_WIDTH <= len(lv):
            s, off = lv[i]
            if s.kind == "float" and s.width == 16 and all(
                    lv[i + k] == (s, off + k * s.size) for k in range(1, CONVERT_WIDTH)):
                yield i
                i += CONVERT_WIDTH
            else:
                i += 1

    def from_mem(self, m: str, s) -> str:
        """A register value of scalar s from its memory form."""
        if s.kind == "bool":
            return self.op(f"icmp ne i32 {m}, 0")
        if s.kind == "float" and s.width < 32:
            if s.encoding == "bf16":
                return self.op(f"call float {self.helper('bf16_to_f32')}(i16 {m})")
            if s.width == 16:
                return self.op(f"call float {self.helper('f16_to_f32')}(i16 {m})")
            return self.lib_scalar(f"jitcoop.kernels.formats:{s.encoding}_to_f32", [("u8", m)], "float")
        return m

    def to_mem(self, v: str, s) -> str:
        if s.kind == "bool":
            return self.op(f"zext i1 {v} to i32")
        if s.kind == "float" and s.width < 32:
            if s.encoding == "bf16":
                return self.op(f"call i16 {self.helper('f32_to_bf16')}(float {v})")
            if s.width == 16:
                return self.op(f"call i16 {self.helper('f32_to_f16')}(float {v})")
            return self.lib_scalar(f"jitcoop.kernels.formats:f32_to_{s.encoding}", [("f32", v), ("b", "false")],
                                   "i8")
        return v


def _to_f32(s) -> str:
    """The helper that widens a 16-bit float's memory bits to the float32 it is held in."""
    return "bf16_to_f32" if s.encoding == "bf16" else "f16_to_f32"


def _from_f32(s) -> str:
    return "f32_to_bf16" if s.encoding == "bf16" else "f32_to_f16"
