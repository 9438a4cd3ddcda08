"""The kernel generator: one specialized entry point -> one LLVM IR module.

The generated function, called by a worker thread for a range of workgroups (C ABI):

    i64 @kernel(i64 wg_begin, i64 wg_end, ptr grid, ptr bind, ptr push, ptr scratch,
                ptr ranges, i64 nranges, ptr err, ptr cancel)

    entry        binding addresses and sizes, push constants, scratch memory; per-call constants
    wg.*         for each workgroup: its ids, the cancel check, values computed once per workgroup
    lane.*       for each lane (invocation): the entry point's own control-flow graph, block for
                 block (SPIR-V is SSA already: phis are LLVM phis, variables LLVM allocas)
    sched.*      shaders with collective instructions (barriers, subgroup and cooperative
                 instructions): a lane runs from its resume point until it reaches a collective,
                 saving the values live there in its spill slots; when every lane has stopped, the
                 scheduler runs the earliest collective for the lanes waiting at it (kernel-library
                 calls on slot rows), sets them to resume after it, and runs the lanes again
    fail         records the failure site, workgroup, lane and details in `err`; returns 1

Lowering rules (jitcoop.codegen.rules, one per opcode, grouped by extension) emit the
instructions; the analyses they rely on are in jitcoop.analysis.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..analysis import bitmoves, callbacks, liveness, loops, matrices, uniform, variables
from ..analysis.context import Context
from ..analysis.flatten import flatten, used_ids
from ..errors import SpirvError
from ..options import KernelOptions
from ..spirv.module import Module
from ..spirv.reader import Instruction
from ..spirv.specialize import Specialization
from ..spirv.types import (CoopMat, Opaque, Pointer, Scalar, TensorLayout, TensorView, Type, Vector,
                           describe, leaves, n_leaves, size_of)
from . import rules as R
from .collectives import Collectives
from .structured import Structured
from .helpers import DEPENDS, HELPERS
from .llvm import Function, Phi, lit, mem_ty, ty
from .meta import KernelMeta, ProfileLayout, Ptr, Site

BUILTIN_NAMES = ("GlobalInvocationId", "LocalInvocationId", "LocalInvocationIndex", "WorkgroupId",
                 "NumWorkgroups", "WorkgroupSize", "SubgroupSize", "SubgroupLocalInvocationId",
                 "SubgroupId", "NumSubgroups", "SubgroupEqMask", "SubgroupGeMask", "SubgroupGtMask",
                 "SubgroupLeMask", "SubgroupLtMask", "SubgroupMaxSize")

ACCESS_CHAINS = ("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain", "OpInBoundsPtrAccessChain")

KERNEL_HEADER = ("define i64 @\"{name}\"(i64 %wg_begin, i64 %wg_end, ptr %grid, ptr %bind, ptr %push, "
                 "ptr %scratch, ptr %ranges, i64 %nranges, ptr %err, ptr %cancel)")


class KernelGen(Collectives, Structured):
    callback = None           # set on a CallbackGen: the function compiled as a callback
    annotate = False          # a comment with the SPIR-V instruction before its code (dumps)

    def __init__(self, module: Module, spec: Specialization, entry: str | None, subgroup_size: int,
                 options=None, profile=None):
        R.load_all()
        from .. import devices
        self.profile = profile if profile is not None else devices.profile("generic", subgroup_size)
        self.m = module
        self.spec = spec
        self.ep = module.entry_point(entry)
        self.sg = subgroup_size
        self.options = KernelOptions.of(options)
        self.profiling = self.options.profile
        self.prof = ProfileLayout()
        self.meta = KernelMeta(self.ep.name, (1, 1, 1), subgroup_size, profile=self.prof)
        self.sites: list[Site] = []
        self.globals: list[str] = []        # module-level IR: constants, tables, callbacks
        self.decls: dict[str, str] = {}     # declarations and helper definitions by name
        self._tables: dict = {}
        self._check_capabilities()
        self.local_size = self._local_size()
        self.meta.local_size = self.local_size
        self.W = self.local_size[0] * self.local_size[1] * self.local_size[2]
        self.NSG = -(-self.W // self.sg)
        spec.coop_layout = self._coop_layout
        self.ff = flatten(module, self.ep.function, lambda ins: ins.opname in R.COLLECTIVE,
                          rewrite=lambda ff, ids: R.rewrite_flat(self, ff, ids), movable=self._movable)
        self.ctx = Context(module, spec, self.ff, self.options)
        self._check_supported()
        self._analyse()

    # -- setup and analyses -------------------------------------------------------------------------
    def _check_capabilities(self):
        from ..runtime.capabilities import SUPPORTED_CAPABILITIES
        for c in self.m.capabilities:
            if c not in SUPPORTED_CAPABILITIES:
                raise SpirvError(f"capability {c} is not supported by jitcoop")
        if self.ep.model != 5:
            raise SpirvError("only GLCompute entry points run")

    def _local_size(self):
        size = self.spec.local_size(self.ep)
        if size is None:
            raise SpirvError(f"entry point {self.ep.name!r} has no LocalSize")
        if any(s < 1 for s in size) or size[0] * size[1] * size[2] > 4096:
            raise SpirvError(f"workgroup size {size} is not supported (1 to 4096 invocations)")
        return size

    def _coop_layout(self, t, ins):
        """Place cooperative matrix type t on the device: its lane layout, or a SpirvError saying
        why the device profile cannot hold it."""
        why = self.profile.coopmat_problem(t, self.W)
        if why is None:
            try:
                return self.profile.layout(t, self.W)
            except ValueError as e:
                why = f"the {self.profile.name} profile has no lane layout for {describe(t)}: {e}"
        raise SpirvError(why, **ins.where())

    def _check_supported(self):
        for b in self.ff.blocks:
            for ins in b.instrs + [b.term]:
                R.check_supported(ins, self.m.ext_imports)

    def _movable(self, ins, defs) -> bool:
        """An instruction that may run earlier in its block (flatten._raise_segments): pure (push
        constant loads included), with a scalar, small vector or pointer result."""
        if ins.result is None:
            return False
        if ins.opname == "OpLoad":
            d = defs.get(ins.operands[0]) or self.m.defs.get(ins.operands[0])
            pt = self.spec.type(d.result_type) if d is not None and d.result_type else None
            if not (isinstance(pt, Pointer) and pt.storage == "PushConstant"):
                return False
        elif ins.opname not in R.PURE and ins.opname not in ACCESS_CHAINS:
            return False
        t = self.spec.type(ins.result_type)
        if isinstance(t, Pointer):
            return not isinstance(t.pointee, (CoopMat, TensorLayout, TensorView, Opaque))
        return isinstance(t, Scalar) or (isinstance(t, Vector) and t.n <= 4)

    @staticmethod
    def _builtin_name(v):
        from ..spirv.grammar import grammar
        return grammar().enum_name("BuiltIn", v)

    def _analyse(self):
        m, spec, ctx = self.m, self.spec, self.ctx
        private = [ins.result for ins in m.global_order if ins.opname == "OpVariable"
                   and spec.type(ins.result_type).storage == "Private"]
        self.callbacks = callbacks.find(ctx, lambda ins: R.callback_operands(self, ins), set(R.COLLECTIVE),
                                        private)
        keep = {v for cb in self.callbacks.values() for v in cb.private_reads}
        v = self.vars = variables.classify(ctx, keep, self._builtin_name)
        self.res = matrices.find(ctx, v.promoted, v.var_types, set(R.COLLECTIVE), R.RESIDENT_DEFS)
        placed = [(x, v.var_types[x].pointee) for x in [f.result for f in self.ff.variables] + v.private_vars
                  if x not in v.promoted and x not in self.res.resident_vars]
        placed += [(x, cb.var_types[x].pointee) for cb in self.callbacks.values() for x in cb.memory_vars]
        variables.place_frames(v, placed)
        for cb in self.callbacks.values():
            v.var_types.update(cb.var_types)
        # the names the rules use
        self.bindings, self.push_var, self.shared, self.inputs = v.bindings, v.push_var, v.shared, v.inputs
        self.private_vars, self.var_types, self.promoted = v.private_vars, v.var_types, v.promoted
        self.frame_off = v.frame_off
        self.resident, self.resident_vars, self.coalesced = (self.res.resident, self.res.resident_vars,
                                                             self.res.coalesced)
        self.users = ctx.users
        meta = self.meta
        meta.bindings = sorted(v.bindings.values(), key=lambda b: b.index)
        meta.push_size, meta.shared_size, meta.private_frame = v.push_size, v.shared_size, v.private_frame
        self.hoisted = uniform.find(ctx, v, R.PURE)
        self.unchecked_loops = loops.unchecked_headers(ctx)
        self.bit_moves = bitmoves.find(ctx, v.promoted | self.resident_vars | set(v.inputs))
        self.has_collectives = any(b.collective for b in self.ff.blocks)
        meta.has_collectives = self.has_collectives
        self.live_in = {}
        self.spills = liveness.SpillPlan()
        if self.has_collectives:
            ud = _UsesDefs(self)
            self.live_in = liveness.liveness(self.ff, ud)
            self.spills = liveness.plan_spills(self.ff, ud, self.live_in, self.promoted, ctx.preds)
            for b in self.ff.blocks:
                r = b.instrs[0].result if b.collective else None
                if r is not None and ud.item(r) is not None:
                    self.spills.crossing.add(r)
        self.crossing = self.spills.crossing

    # -- small services -------------------------------------------------------------------------------
    def value_type(self, vid: int) -> Type:
        return self.ctx.value_type(vid)

    def rtype(self, ins) -> Type:
        return self.spec.type(ins.result_type)

    @staticmethod
    def leaf_types(t: Type) -> list:
        return [s for s, _ in leaves(t)]

    def helper(self, name: str) -> str:
        """The name of a helper function (jitcoop.codegen.helpers), defined in the module once."""
        for dep in DEPENDS.get(name, ()):
            self.helper(dep)
        self.decls.setdefault(f"@jc.{name}", HELPERS[name])
        return f"@jc.{name}"

    def declare(self, name: str, text: str) -> str:
        self.decls.setdefault(name, text)
        return name

    def op(self, text: str, hint: str = "t") -> str:
        return self.fn.op(text, hint)

    def emit(self, text: str):
        self.fn.emit(text)

    @contextmanager
    def at(self, label_attr: str):
        """Emit into the chain of blocks whose current end is self.<label_attr> (the workgroup
        prologue, for values computed once per workgroup), then come back."""
        here = self.fn.cur
        self.fn.resume(getattr(self, label_attr))
        saved = self.in_hoist
        self.in_hoist = True
        try:
            yield
        finally:
            setattr(self, label_attr, self.fn.cur)
            self.in_hoist = saved
            self.fn.resume(here)

    # -- values -----------------------------------------------------------------------------------------
    def vals(self, vid: int) -> list[str]:
        """The leaves of a value as LLVM operands (loads of its home where it crosses collectives)."""
        home = self.homes.get(vid)
        if home is not None:
            return [self.op(f"load {t}, ptr {a}") for t, a in home]
        v = self.names.get(vid)
        if v is not None:
            return v
        if vid in self.resident:
            return self.resident_leaves(vid)
        if self.spec.is_const(vid):
            return self.const_leaves(vid)
        ins = self.ff.defs.get(vid) or self.m.defs.get(vid)
        where = ins.where() if ins else {}
        raise SpirvError(f"%{vid} is used before it is defined (or is not a value)", **where)

    def val(self, vid: int) -> str:
        v = self.vals(vid)
        if len(v) != 1:
            raise SpirvError(f"%{vid} is used as a scalar but has {len(v)} components")
        return v[0]

    def const_leaves(self, cid) -> list[str]:
        t = self.value_type(cid)
        if isinstance(t, Opaque):
            return ["0"]
        vals = self.spec.const(cid)
        return [lit(x, s) for (s, _), x in zip(leaves(t), vals)]

    def literal(self, v, s) -> str:
        return lit(v, s)

    def define(self, ins: Instruction, exprs: list[str]):
        """The leaves of an instruction's result (operands already computed by the rule)."""
        self.define_id(ins.result, exprs)

    def define_id(self, rid: int, exprs: list[str]):
        if rid in self.resident:
            self.resident_store(rid, exprs)
            return
        if rid in self.crossing:
            # kept in a home (registers after mem2reg) and, for the scheduler and the lane's next
            # resume, in its slots, written here where it is defined
            t = self.value_type(rid)
            types = [ty(s) for s in self.leaf_types(t)] if not isinstance(t, Pointer) else ["i64"]
            home = self._home(rid, types)
            for (lt, a), e in zip(home, exprs):
                self.emit(f"store {lt} {e}, ptr {a}")
            self.save_item(rid, exprs)
            return
        self.names[rid] = list(exprs)

    def alias(self, rid: int, names: list[str]):
        self.define_id(rid, names)

    def _home(self, rid, types) -> list:
        h = self.homes.get(rid)
        if h is None:
            h = self.homes[rid] = [(t, self.fn.alloca(t, f"h{rid}")) for t in types]
        return h

    def cast_int(self, v: str, frm: int, to: int, signed: bool) -> str:
        if frm == to:
            return v
        if frm > to:
            return self.op(f"trunc i{frm} {v} to i{to}")
        return self.op(f"{'sext' if signed else 'zext'} i{frm} {v} to i{to}")

    def to_i64(self, vid: int) -> str:
        """An integer (or pointer) value widened to i64 as its signedness says."""
        t = self.value_type(vid)
        if isinstance(t, Pointer):
            return self.ptr(vid, None).addr
        v = self.val(vid)
        if t.kind == "bool":
            return self.op(f"zext i1 {v} to i64")
        return self.cast_int(v, t.width, 64, t.signed)

    # -- failure sites -----------------------------------------------------------------------------------
    def _site(self, ins, message, kind="lane") -> int:
        self.sites.append(Site(getattr(ins, "origin", ins), message, kind))
        return len(self.sites)

    def fail_if(self, cond: str, ins, message, lane: str | None = None, details=(), case: str = "0",
                kind: str = "lane"):
        """Branch to the failure block when `cond` (i1) holds: the site records `message` (which may
        use {d} {e} {f} {g}, the runtime values of up to four i64 `details`, and be a dict by case)."""
        site = self._site(ins, message, kind)
        self.fail_edge(cond, str(site), lane, details, case)

    def fail_edge(self, cond: str, site: str, lane=None, details=(), case: str = "0"):
        ok = self.fn.label("ok")
        if lane is None:
            lane = "-1" if self.in_hoist or self.lane_reg is None else self.lane_reg
        d = list(details) + ["0"] * (4 - len(details))
        vals = [site, self.wg_reg, lane] + d[:4] + [case]
        for phi, v in zip(self.fail_phis, vals):
            phi.incoming.append((v, self.fn.cur))
        self.fn.cbr(cond, "fail", ok)
        self.fn.block(ok)

    def fail(self, ins, message, *details):
        """Fail unconditionally here (OpUnreachable); the block after is dead."""
        self.fail_if("true", ins, message, details=details)

    def fail_lane(self, ins, cond: str, message, lane: str, *details):
        """A failure found by the scheduler for a lane of the workgroup (an i64 operand)."""
        self.fail_if(cond, ins, message, lane=lane, details=details)

    # -- pointers -------------------------------------------------------------------------------------------
    def ptr(self, pid: int, ins) -> Ptr:
        p = self.ptrs.get(pid)
        if p is None and pid in self.var_types:
            p = self.ptrs[pid] = self._var_ptr(pid, ins)
        if p is None:
            raise SpirvError(f"%{pid} is used as a pointer but is not one the generator knows",
                             **(ins.where() if ins is not None else {}))
        if p.kind == "mem" and pid in self.homes:
            from dataclasses import replace
            return replace(p, addr=self.vals(pid)[0])
        return p

    def define_ptr(self, rid: int, p: Ptr):
        self.ptrs[rid] = p
        if p.kind == "mem":
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
                       root_name=f"binding (set {b.set}, binding {b.binding}) '{b.name}'")
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
            return Ptr("mem", t, sc, addr=self.frame_addr(v), root=(self.frame_addr(v), size_of(t)),
                       static_off=0, root_min=size_of(t), root_name=f"variable '{self.m.name_of(v)}'")
        raise SpirvError(f"variable %{v} cannot be addressed", **(ins.where() if ins is not None else {}))

    def frame_addr(self, v) -> str:
        """The address of a variable in the current lane's private frame (made per lane)."""
        name = f"%fv{v}"
        if name not in self._frame_names:
            self._frame_names.add(name)
            self.lane_defs.append(f"{name} = add i64 %lanefr, {self.frame_off[v]}")
        return name

    def check_range(self, ins, p: Ptr, addr: str, nbytes: int):
        """The bounds check of an access of nbytes at addr."""
        if self.options.unchecked:
            return
        if p.static_off is not None and p.root_min is not None and p.static_off + nbytes <= p.root_min:
            return          # constant offset inside what the dispatch guarantees: always in bounds
        if p.root is not None:
            base, size = p.root
            lo = self.op(f"icmp ult i64 {addr}, {base}")
            hi = self.op(f"icmp ugt i64 {addr}, {self._last_start(base, size, nbytes)}")
            bad = self.op(f"or i1 {lo}, {hi}")
            off = self.op(f"sub i64 {addr}, {base}")
            self.fail_if(bad, ins, f"out-of-bounds access: {nbytes} bytes at byte offset {{d}} of "
                                   f"{p.root_name or 'its object'}, which has {{e}} bytes",
                         details=(off, str(size)))
        else:
            ok = self.op(f"call i1 {self.helper('in_ranges')}(ptr %ranges, i64 %nranges, i64 {addr}, i64 {nbytes})")
            bad = self.op(f"xor i1 {ok}, true")
            self.fail_if(bad, ins, "access through a pointer that is outside every buffer (address {d:#x})",
                         details=(addr,))

    def _last_start(self, base: str, size, nbytes: int) -> str:
        """The last address where nbytes fit in the object at base (a constant-size object gives
        base + constant, which lets LLVM prove a bounded index in range)."""
        if isinstance(size, int):
            return self.op(f"add i64 {base}, {size - nbytes}")
        key = (base, nbytes)
        name = self._last_starts.get(key)
        if name is None:
            name = self._last_starts[key] = f"{base}.last{nbytes}"
            self.entry_defs.append(f"{name}.0 = add i64 {base}, {size}")
            self.entry_defs.append(f"{name} = sub i64 {name}.0, {nbytes}")
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

    # -- builtins ------------------------------------------------------------------------------------------
    def builtin_leaves(self, name: str, ins) -> list[str]:
        lx, ly, lz = self.local_size
        u = lambda v: self.op(f"trunc i64 {v} to i32")
        if name == "LocalInvocationId":
            return [u("%lx"), u("%ly"), u("%lz")]
        if name == "LocalInvocationIndex":
            return [u(self.lane_reg)]
        if name == "WorkgroupId":
            return [u("%wx"), u("%wy"), u("%wz")]
        if name == "NumWorkgroups":
            return [u("%ngx"), u("%ngy"), u("%ngz")]
        if name == "GlobalInvocationId":
            out = []
            for w, l, n in (("%wx", "%lx", lx), ("%wy", "%ly", ly), ("%wz", "%lz", lz)):
                a = self.op(f"mul i64 {w}, {n}")
                out.append(u(self.op(f"add i64 {a}, {l}")))
            return out
        if name == "WorkgroupSize":
            return [str(lx), str(ly), str(lz)]
        if name in ("SubgroupSize", "SubgroupMaxSize"):
            return [str(self.sg)]
        if name == "SubgroupLocalInvocationId":
            return [u(self.op(f"urem i64 {self.lane_reg}, {self.sg}"))]
        if name == "SubgroupId":
            return [u(self.op(f"udiv i64 {self.lane_reg}, {self.sg}"))]
        if name == "NumSubgroups":
            return [str(self.NSG)]
        if name in ("SubgroupEqMask", "SubgroupGeMask", "SubgroupGtMask", "SubgroupLeMask", "SubgroupLtMask"):
            i = self.op(f"urem i64 {self.lane_reg}, {self.sg}")
            return [self._mask_word(name[8:10], i, w) for w in range(4)]
        raise SpirvError(f"built-in {name} is not supported in compute shaders", **ins.where())

    def _mask_word(self, kind: str, i: str, w: int) -> str:
        """Word w of a subgroup mask of lane index i (within the subgroup)."""
        lo = 32 * w
        # bits of the word set for positions p with lo <= p < lo + 32 and (p ? i)
        rel = self.op(f"sub i64 {i}, {lo}")
        if kind == "Eq":
            inw = self.op(f"icmp ult i64 {rel}, 32")
            sh = self.op(f"and i64 {rel}, 31")
            bit = self.op(f"shl i64 1, {sh}")
            return self.op(f"trunc i64 {self.op(f'select i1 {inw}, i64 {bit}, i64 0')} to i32")
        # count of positions below i (Lt), up to i (Le): ones below bit n of the word
        if kind in ("Lt", "Le"):
            n = rel if kind == "Lt" else self.op(f"add i64 {rel}, 1")
            c = self._clamp32(n)
            ones = self.op(f"shl i64 1, {c}")
            m = self.op(f"sub i64 {ones}, 1")
            return self.op(f"trunc i64 {m} to i32")
        n = self.op(f"add i64 {rel}, 1") if kind == "Gt" else rel
        c = self._clamp32(n)
        ones = self.op(f"shl i64 1, {c}")
        m = self.op(f"sub i64 {ones}, 1")
        inv = self.op(f"xor i64 {m}, 4294967295")
        full = self.op(f"and i64 {inv}, {self._sg_word_mask(w)}")
        return self.op(f"trunc i64 {full} to i32")

    def _clamp32(self, n: str) -> str:
        lo = self.op(f"icmp slt i64 {n}, 0")
        a = self.op(f"select i1 {lo}, i64 0, i64 {n}")
        hi = self.op(f"icmp sgt i64 {a}, 32")
        return self.op(f"select i1 {hi}, i64 32, i64 {a}")

    def _sg_word_mask(self, w: int) -> int:
        """Bits of word w that name lanes of the subgroup."""
        n = max(0, min(32, self.sg - 32 * w))
        return (1 << n) - 1

    # -- the kernel ----------------------------------------------------------------------------------------
    def build(self, name: str = "kernel") -> tuple[str, KernelMeta]:
        """The module's LLVM IR, with the kernel function named `name`, and its metadata."""
        self.fn = Function(KERNEL_HEADER.format(name=name))
        self._start()
        self._emit_body()
        self._finish()
        self.meta.sites = self.sites
        return self._module_text(), self.meta

    def _reset_state(self):
        self.names: dict[int, list[str]] = {}
        self.homes: dict[int, list] = {}
        self.ptrs: dict[int, Ptr] = {}
        self.var_homes: dict[int, list] = {}
        self._frame_names: set[str] = set()
        self._last_starts: dict = {}
        self.in_hoist = False
        self.lane_reg: str | None = None
        self.wg_reg = "%wg"
        self.collective_blocks: list = []
        self._phis: dict[int, list] = {}
        self._emitted_callbacks: set = set()
        self._init_collectives()

    def _start(self):
        """entry, the workgroup loop's head and prologue, the failure block."""
        self._reset_state()
        fn = self.fn
        fn.block("entry")
        for i, n in enumerate(("%ngx", "%ngy", "%ngz")):
            p = fn.op(f"getelementptr i64, ptr %grid, i64 {i}")
            fn.emit(f"{n} = load i64, ptr {p}")
        for bd in self.meta.bindings:
            for k, n in ((0, f"%bp{bd.index}"), (1, f"%bn{bd.index}")):
                p = fn.op(f"getelementptr i64, ptr %bind, i64 {2 * bd.index + k}")
                fn.emit(f"{n} = load i64, ptr {p}")
        for k, n in enumerate(("%pushp", "%pushn")):
            p = fn.op(f"getelementptr i64, ptr %push, i64 {k}")
            fn.emit(f"{n} = load i64, ptr {p}")
        for k, n in enumerate(("%shp", "%pvp", "%workp", "%constp")):
            p = fn.op(f"getelementptr i64, ptr %scratch, i64 {k}")
            fn.emit(f"{n} = load i64, ptr {p}")
        fn.emit("%work = inttoptr i64 %workp to ptr")
        fn.emit("%consts = inttoptr i64 %constp to ptr")
        self.entry_defs = fn.splice()
        fn.br("wg.head")
        # the failure block: every failing site branches here with its record
        fn.block("fail")
        self.fail_phis = [fn.phi("i64", n) for n in ("f.site", "f.wg", "f.lane", "f.d", "f.e", "f.f", "f.g",
                                                    "f.case")]
        for k, phi in enumerate(self.fail_phis):
            p = fn.op(f"getelementptr i64, ptr %err, i64 {k}")
            fn.emit(f"store i64 {phi.name}, ptr {p}")
        fn.emit("ret i64 1")
        fn.block("failed")          # a callback recorded its failure in err already
        fn.emit("ret i64 1")
        fn.block("wg.head")
        wg = fn.phi("i64", "wg")
        wg.name = "%wg"
        self._wg_phi = wg
        wg.incoming.append(("%wg_begin", "entry"))
        more = fn.op("icmp slt i64 %wg, %wg_end")
        fn.cbr(more, "wg.body", "exit")
        fn.block("exit")
        fn.emit("ret i64 0")
        fn.block("wg.body")
        fn.emit("%wx = urem i64 %wg, %ngx")
        fn.emit("%wq = udiv i64 %wg, %ngx")
        fn.emit("%wy = urem i64 %wq, %ngy")
        fn.emit("%wz = udiv i64 %wq, %ngy")
        c = fn.op("load volatile i64, ptr %cancel")
        cn = fn.op(f"icmp ne i64 {c}, 0")
        self.fail_edge(cn, "-1", "-1")
        self.wg_tail = fn.cur            # the workgroup prologue: values computed once per workgroup
        self._emit_workgroup_init()

    def _emit_workgroup_init(self):
        """Workgroup variables with an initializer (VK_KHR_zero_initialize_workgroup_memory) are
        set at the start of every workgroup."""
        for v in self.shared:
            var_ins = self.m.defs[v]
            if len(var_ins.operands) < 2:
                continue
            with self.at("wg_tail"):
                p = self.ptr(v, var_ins)
                t = self.var_types[v].pointee
                for (s, off), e in zip(leaves(t), self.vals(var_ins.operands[1])):
                    self.store_leaf(s, self.addr_plus(p.addr, off), e)

    def _emit_body(self):
        """The lane loop (and, with collectives, the scheduler around it)."""
        fn = self.fn
        lx, ly, _ = self.local_size
        W = self.W
        self.lane_defs_label = None
        fn.block("lane.head")
        lane = fn.phi("i64", "lane")
        lane.name = "%lane"
        self.lane_reg = "%lane"
        self._lane_phi = lane
        if self.has_collectives:
            self.state = self.work_array("state", "i32", W)
            p = fn.op(f"getelementptr i32, ptr {self.state}, i64 %lane")
            st = fn.op(f"load i32, ptr {p}")
            self.st_ptr = p
            neg = fn.op(f"icmp slt i32 {st}, 0")
            fn.cbr(neg, "lane.latch", "lane.go")
        else:
            fn.br("lane.go")
            st = None
        fn.block("lane.go")
        fn.emit(f"%lx = urem i64 %lane, {lx}")
        fn.emit(f"%lq = udiv i64 %lane, {lx}")
        fn.emit(f"%ly = urem i64 %lq, {ly}")
        fn.emit(f"%lz = udiv i64 %lane, {lx * ly}")
        fn.emit(f"%lanefr0 = mul i64 %lane, {self.meta.private_frame}")
        fn.emit("%lanefr = add i64 %pvp, %lanefr0")
        self.lane_defs = fn.splice()
        self._lane_go_switch = fn.splice()       # the dispatch on the lane's resume point
        self._prepare_phis()
        self._prepare_var_homes()
        blocks = self.ff.blocks
        self.block_index = {b.label: i for i, b in enumerate(blocks)}
        self.current_block = None
        for b in blocks:
            self._emit_block(b)
        # lane latch: the next lane
        fn.block("lane.latch")
        nxt = fn.op("add i64 %lane, 1")
        lane.incoming.append((nxt, "lane.latch"))
        more = fn.op(f"icmp ult i64 {nxt}, {W}")
        if self.has_collectives:
            fn.cbr(more, "lane.head", "sched.pick")
            self._emit_scheduler(st)
        else:
            fn.cbr(more, "lane.head", "wg.latch")
            # the workgroup prologue runs the lanes
            fn.resume(self.wg_tail)
            fn.br("lane.head")
            lane.incoming.append(("0", self.wg_tail))
            self._lane_go_switch.append(f"br label %b{blocks[0].label}")
        fn.block("wg.latch")
        wn = fn.op("add i64 %wg, 1")
        self._wg_phi.incoming.append((wn, "wg.latch"))
        fn.br("wg.head")

    def _emit_scheduler(self, st: str):
        """With collectives: the lane dispatch on resume points, and the scheduler blocks."""
        fn = self.fn
        W = self.W
        first = self.ff.blocks[0].label
        cases = " ".join(f"i32 {k + 1}, label %resume{k}" for k in range(len(self.collective_blocks)))
        self._lane_go_switch.append(f"switch i32 {st}, label %b{first} [ {cases} ]")
        fn.block("sched.top")
        fn.br("lane.head")
        self._lane_phi.incoming.append(("0", "sched.top"))
        fn.block("sched.pick")
        c = fn.op(f"call i32 {self.helper('next')}(ptr {self.state}, i64 {W})")
        chained = [self._chained(b) for b in self.collective_blocks]
        if any(x is not None for x in chained):
            self.conv = fn.op(f"call i1 {self.helper('converged')}(ptr {self.state}, i64 {W})")
        else:
            self.conv = "false"
        cases = " ".join(f"i32 {k}, label %coll{k}" for k in range(len(self.collective_blocks)))
        fn.emit(f"switch i32 {c}, label %wg.latch [ {cases} ]")
        for k, b in enumerate(self.collective_blocks):
            ins = b.instrs[0]
            fn.block(f"coll{k}")
            self.current_block = b
            nxt = chained[k]
            # lanes go on at resume point k + 1, or straight to waiting at the next collective
            # when nothing runs between the two
            resume = k + 1 if nxt is None else -2 - nxt
            if self.profiling:
                s = self.prof.slots("instruction", ("runs", "lanes", "ticks"),
                                    ins=getattr(ins, "origin", ins), type=self._prof_type(ins))
                lanes = self.op(f"call i64 {self.helper('waiting')}(ptr {self.state}, i64 {W}, i32 {-2 - k})")
                t0 = self.op("call i64 @llvm.readcyclecounter()")
                self.declare("@llvm.readcyclecounter", "declare i64 @llvm.readcyclecounter()")
            R.COLLECTIVE[ins.opname](self, ins, -2 - k, resume)
            if self.profiling:
                t1 = self.op("call i64 @llvm.readcyclecounter()")
                dt = self.op(f"sub i64 {t1}, {t0}")
                for j, v in enumerate(("1", lanes, dt)):
                    self.counter_add(s + j, v)
            if nxt is not None:
                # every lane waited here and goes straight on to the next collective
                fn.cbr(self.conv, f"coll{nxt}", "sched.top")
            else:
                fn.br("sched.top")
        # the workgroup prologue ends here (collectives may have added fills to it): every
        # lane starts at its beginning
        fn.resume(self.wg_tail)
        fn.emit(f"call void @llvm.memset.p0.i64(ptr {self.state}, i8 0, i64 {4 * W}, i1 false)")
        self.declare("@llvm.memset.p0.i64", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
        fn.br("sched.top")

    def counter_add(self, slot: int, v: str):
        p = self.op(f"getelementptr i64, ptr %err, i64 {slot}")
        x = self.op(f"load i64, ptr {p}")
        y = self.op(f"add i64 {x}, {v}")
        self.emit(f"store i64 {y}, ptr {p}")

    def _chained(self, b):
        """The index of the collective a lane resuming after collective block b reaches with no
        code on the way (an empty resume block, nothing to save at that suspend), or None."""
        bmap = self.ctx.bmap
        rb = bmap.get(b.term.operands[0])
        if rb is None or rb.instrs or rb.term.opname != "OpBranch":
            return None
        tb = bmap.get(rb.term.operands[0])
        if tb is None or not tb.collective or tb not in self.collective_blocks:
            return None
        if any(x not in self.live_in.get(rb.label, ()) for x in self.live_in[tb.label]):
            return None
        return self.collective_blocks.index(tb)

    def _prof_type(self, ins):
        """The cooperative matrix an instruction moves (for elements in the profile), if any."""
        for vid in ([ins.result] if ins.result is not None else []) + [
                x for x in ins.operands[:2] if isinstance(x, int)]:
            try:
                t = self.value_type(vid)
            except SpirvError:
                continue
            if isinstance(t, CoopMat):
                return t
        return None

    def _finish(self):
        # the entry's fills of per-call operands
        self.entry_defs.extend(self.entry_fills)
        self.meta.work_size = self.work_size
        self.meta.consts = bytes(self._consts)

    def _module_text(self) -> str:
        from ..runtime import jit
        out = [f'target datalayout = "{jit.data_layout()}"', f'target triple = "{jit.target_triple()}"', ""]
        out += self.globals
        out += list(self.decls.values())
        out.append(self.fn.render())
        return "\n".join(out) + "\n"

    # -- blocks ------------------------------------------------------------------------------------------
    def _prepare_phis(self):
        """LLVM phis of every SPIR-V phi held in registers, made before any edge into them."""
        for b in self.ff.blocks:
            nodes = []
            for phi in b.phis:
                if phi.result in self.resident:
                    continue
                t = self.rtype(phi)
                types = ["i64"] if isinstance(t, Pointer) else [ty(s) for s in self.leaf_types(t)]
                nodes.append((phi, [Phi(self.fn.fresh(f"v{phi.result}"), x) for x in types]))
                if isinstance(t, Pointer):
                    self._phi_ptr(phi)
            self._phis[b.label] = nodes

    def _phi_ptr(self, phi):
        t = self.rtype(phi)
        if phi.result not in self.ptrs:
            self.ptrs[phi.result] = Ptr("mem", t.pointee, t.storage, addr="", root=None)

    def _prepare_var_homes(self):
        """Promoted variables: an alloca per leaf (LLVM's mem2reg makes them registers)."""
        for v in self.promoted:
            t = self.var_types[v].pointee
            self.var_homes[v] = [(ty(s), self.fn.alloca(ty(s), f"x{v}")) for s in self.leaf_types(t)]

    def var_leaves(self, v, first=0, n=None) -> list[str]:
        home = self.var_homes[v]
        sel = home[first:first + n if n is not None else len(home)]
        return [self.op(f"load {t}, ptr {a}") for t, a in sel]

    def var_store(self, v, first, vals):
        for (t, a), x in zip(self.var_homes[v][first:first + len(vals)], vals):
            self.emit(f"store {t} {x}, ptr {a}")

    def _emit_block(self, b):
        fn = self.fn
        self.current_block = b
        fn.block(f"b{b.label}")
        if b.label == self.ff.blocks[0].label:
            self._emit_lane_init()
        for phi, nodes in self._phis.get(b.label, ()):
            for node in nodes:
                fn._lines.insert(sum(isinstance(x, Phi) for x in fn._lines), node)
            names = [n.name for n in nodes]
            if isinstance(self.rtype(phi), Pointer):
                self.ptrs[phi.result].addr = names[0]
            self.define_id(phi.result, names)
        if b.collective:
            self._emit_suspend(b)
            return
        for ins in b.instrs:
            if ins.opname != "OpPhi":
                self._emit_instruction(ins)
        self._emit_instruction(b.term)

    def _emit_lane_init(self):
        """Private variables start at their initializer (or zero) in every invocation; Function
        variables of the entry point with initializers likewise."""
        for v in self.private_vars + [x.result for x in self.ff.variables]:
            var_ins = self.ff.defs.get(v) or self.m.defs.get(v)
            init = var_ins.operands[1] if len(var_ins.operands) > 1 else None
            t = self.var_types[v].pointee
            if v in self.resident_vars:
                if init is not None:
                    self.resident_store(("var", v), self.vals(init))
                continue
            if v in self.promoted:
                src = self.vals(init) if init is not None else [lit(0, s) for s in self.leaf_types(t)]
                self.var_store(v, 0, src)
            elif init is not None:
                p = self.ptr(v, var_ins)
                for (s, off), e in zip(leaves(t), self.vals(init)):
                    self.store_leaf(s, self.addr_plus(p.addr, off), e)

    def _note(self, ins: Instruction):
        """A comment naming the SPIR-V instruction whose code follows (annotated dumps)."""
        if self.annotate:
            self.emit(f"; {'%' + str(ins.result) + ' = ' if ins.result is not None else ''}{ins.opname} "
                      + " ".join(f"%{x}" if k == "IdRef" else str(x) for x, k in zip(ins.operands, ins.kinds)))

    def _emit_instruction(self, ins: Instruction):
        op = ins.opname
        if op == "OpExtInst":
            set_name = self.m.ext_imports.get(ins.operands[0], "?")
            if set_name.startswith("NonSemantic."):
                return
            from ..spirv.grammar import grammar
            spec = grammar().extinst[set_name][ins.operands[1]]
            rule = lambda em, i: R.EXT_RULES[(set_name, spec.opname)](em, i, i.operands[2:])
        else:
            rule = R.RULES[op]
        if ins.result in self.hoisted:
            with self.at("wg_tail"):
                self._note(ins)
                rule(self, ins)
            return
        self._note(ins)
        rule(self, ins)

    # -- branching (used by the control-flow rules) --------------------------------------------------
    def goto(self, target: int):
        """The edge from the current block to SPIR-V block `target`: the cancel check on a loop's
        back edge, the phi values (and copies of matrices living in slot rows), the branch."""
        b = self.current_block
        tb = self.ctx.bmap.get(target)
        if tb is None:
            raise SpirvError(f"branch to %{target}, which is not a block of this function", **b.term.where())
        if self.block_index[target] <= self.block_index[b.label] and target not in self.unchecked_loops:
            # A loop back edge: the way out of a shader that spins (timeout, Ctrl-C, another
            # thread's failure) is this check (analysis.loops: short counted loops need none).
            c = self.op("load volatile i64, ptr %cancel")
            cn = self.op(f"icmp ne i64 {c}, 0")
            self.fail_edge(cn, "-1")
        for phi, nodes in self._phis.get(target, ()):
            src = self._phi_source(phi, b.label)
            srcs = [self.ptr(src, phi).addr] if isinstance(self.rtype(phi), Pointer) else self.vals(src)
            for node, v in zip(nodes, srcs):
                node.incoming.append((v, None))
        self._resident_phi_copies(tb, b.label)
        for phi, nodes in self._phis.get(target, ()):
            for node in nodes:
                v, lab = node.incoming[-1]
                if lab is None:
                    node.incoming[-1] = (v, self.fn.cur)
        self.fn.br(f"b{target}")

    def _phi_source(self, phi, from_label):
        src = next((phi.operands[i] for i in range(0, len(phi.operands), 2)
                    if phi.operands[i + 1] == from_label), None)
        if src is None:
            raise SpirvError(f"OpPhi has no value for the edge from %{from_label}", **phi.where())
        return src

    def _resident_phi_copies(self, tb, from_label):
        """Matrix phis living in slot rows get the edge's value copied in (a parallel copy: a phi
        whose source is another phi of the block goes through a scratch copy made first)."""
        res = [(phi.result, self._phi_source(phi, from_label)) for phi in tb.phis if phi.result in self.resident]
        if not res:
            return
        here = {phi.result for phi in tb.phis}
        staged = {}
        for dst, src in res:
            if src in here and src in self.resident and src not in staged:
                staged[src] = ("tmp", src)
                self.resident_copy(staged[src], src)
        for dst, src in res:
            self.resident_copy(dst, staged.get(src, src))

    def edge(self, target: int) -> str:
        """A label to branch to for the edge to `target` from a conditional branch or switch: the
        target itself when the edge needs no code, else a block of its own that does the edge."""
        b = self.current_block
        tb = self.ctx.bmap.get(target)
        needs = (tb is None or tb.phis or (self.block_index.get(target, 0) <= self.block_index[b.label]
                                             and target not in self.unchecked_loops))
        if not needs:
            return f"b{target}"
        here = self.fn.cur
        lab = self.fn.label(f"e{b.label}.{target}")
        self._pending_edges.append((lab, target))
        self.fn.resume(here)
        return lab

    def flush_edges(self):
        """Emit the edge blocks `edge` promised, after the branch that uses them."""
        edges, self._pending_edges = self._pending_edges, []
        for lab, target in edges:
            self.fn.block(lab)
            self.goto(target)

    # -- collectives: the lane side -------------------------------------------------------------------
    def _emit_suspend(self, b):
        """Stop the lane before a collective: save the variables stored since it last resumed
        (SSA values are in their slots already), wait at the collective."""
        k = self.collective_index(b)
        sp = self.spills
        for x in sorted(self.live_in[b.label] & sp.dirty_in[b.label], key=str):
            self.save_item(x)
        self.emit(f"store i32 {-2 - k}, ptr {self.st_ptr}")
        self.fn.br("lane.latch")
        # where a lane resumes after it: what it uses before its next collective, and the
        # variables the next suspend may save, come back from the slots
        here = self.fn.cur
        self.fn.block(f"resume{k}")
        r = b.term.operands[0]
        need = self.live_in.get(r, set()) & (sp.used_soon.get(r, set()) | sp.spilled_next.get(r, set()))
        for x in sorted(need, key=str):
            self.load_item(x)
        self.fn.br(f"b{r}")
        self.fn.resume(here)

    def callback_fn(self, fid: int) -> str:
        """The name of callback `fid`'s LLVM function (jitcoop.codegen.callback), made once."""
        if fid not in self._emitted_callbacks:
            from .callback import CallbackGen
            self._emitted_callbacks.add(fid)
            self.globals.append(CallbackGen(self, fid).build_function())
        return f"@cb{fid}"

    def check_callback_failed(self):
        """After a callback call: leave the kernel if the callback recorded a failure."""
        e = self.op("load i64, ptr %err")
        ok = self.fn.label("cb.ok")
        self.fn.cbr(self.op(f"icmp ne i64 {e}, 0"), "failed", ok)
        self.fn.block(ok)

    def collective_index(self, b) -> int:
        if b not in self.collective_blocks:
            self.collective_blocks.append(b)
        return self.collective_blocks.index(b)


class _UsesDefs:
    """Uses and definitions of an instruction as liveness items: SSA ids of runtime values held in
    registers, and ("var", id) for promoted variables."""

    def __init__(self, gen: KernelGen):
        self.g = gen
        self.var_of = {}      # access chain result -> promoted variable
        for b in gen.ff.blocks:
            for ins in b.instrs:
                if ins.opname in ("OpAccessChain", "OpInBoundsAccessChain"):
                    base = self.var_of.get(ins.operands[0], ins.operands[0])
                    if base in gen.promoted:
                        self.var_of[ins.result] = base

    def item(self, x):
        g = self.g
        if x in g.promoted or x in g.resident or x in self.var_of:
            return None           # resident matrices are never spilled: they live in slots
        if g.spec.is_const(x) or x in g.m.defs or x in g.var_types or x in g.hoisted:
            return None
        if x not in g.ff.type_of:
            return None           # labels, functions
        t = g.spec.type(g.ff.type_of[x])
        if isinstance(t, Opaque):
            return None
        if isinstance(t, Pointer) and not self._mem_pointer(x):
            return None
        return x

    def _mem_pointer(self, x) -> bool:
        """Whether a pointer value is an address (not a promoted variable, built-in or matrix
        variable, whose pointers are compile-time facts)."""
        g = self.g
        d = g.ff.defs.get(x)
        seen = 0
        while d is not None and d.opname in ACCESS_CHAINS and seen < 64:
            x = d.operands[0]
            d = g.ff.defs.get(x)
            seen += 1
        return not (x in g.promoted or x in g.resident_vars or x in g.inputs)

    def phi_value(self, x):
        i = self.item(x)
        return [i] if i is not None else []

    def __call__(self, ins):
        uses, defs = [], []
        g = self.g
        op = ins.opname
        for x in (used_ids(ins) if op != "OpPhi" else []):
            i = self.item(x)
            if i is not None:
                uses.append(i)
        if op == "OpLoad":
            v = self.var_of.get(ins.operands[0], ins.operands[0])
            if v in g.promoted:
                uses.append(("var", v))
        if op == "OpStore":
            v = self.var_of.get(ins.operands[0], ins.operands[0])
            if v in g.promoted:
                if ins.operands[0] != v:
                    uses.append(("var", v))  # a partial store keeps the rest of the variable
                defs.append(("var", v))
        if ins.result is not None:
            defs.append(ins.result)
        return uses, defs


__all__ = ["KernelGen", "BUILTIN_NAMES", "n_leaves"]
