"""The kernel generator: one specialized entry point -> one LLVM IR module.

The generated function, called by a worker thread for a range of workgroups (C ABI):

    i64 @kernel(i64 wg_begin, i64 wg_end, ptr grid, ptr bind, ptr push, ptr scratch,
                ptr ranges, i64 nranges, ptr err, ptr cancel)

    entry        binding addresses and sizes, push constants, scratch memory; per-call constants
    wg.*         for each workgroup: its ids, the cancel check, values computed once per workgroup
    lane.*       for each lane (invocation): the entry point's own control-flow graph, block for
                 block (SPIR-V is SSA already: phis are LLVM phis, variables LLVM allocas); for
                 lane 0 alone in a lane-invariant kernel (analysis/invariance.py), whose
                 instructions on matrices then loop over every lane's fragment (each_lane)
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

import math
from contextlib import contextmanager

from ..analysis import (bitmoves, callbacks, cfg, invariance, lanes, liveness, loops, matrices, order, private,
                        prune, simplify, sroa, ssa, uniform, unroll, variables)
from ..analysis.context import Context
from ..analysis.flatten import flatten
from ..devices import layouts as L
from ..errors import SpirvError
from ..options import KernelOptions
from ..spirv.module import Module
from ..spirv.reader import Instruction
from ..spirv.specialize import Specialization
from ..spirv.types import (CoopMat, Opaque, Pointer, Scalar, TensorLayout, TensorView, Type, Vector,
                           describe, leaves)
from . import element_loops
from . import rules as R
from .builtins import Builtins, emit_lane_coordinates
from .collectives import Collectives
from .control import ControlFlow
from .memory import Memory
from .structured import Structured
from .helpers import DEPENDS, HELPERS, INTRINSICS
from .llvm import Function, lit, ty
from .meta import KernelMeta, ProfileLayout, Ptr, Site

ACCESS_CHAINS = ("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain", "OpInBoundsPtrAccessChain")
EACH_LANE_ELEMENTS = 128    # the most elements per invocation lane code on matrices runs for all (each_lane)

KERNEL_HEADER = ("define i64 @\"{name}\"(i64 %wg_begin, i64 %wg_end, ptr %grid, ptr %bind, ptr %push, "
                 "ptr %scratch, ptr %ranges, i64 %nranges, ptr %err, ptr %cancel)")


class KernelGen(Memory, Builtins, ControlFlow, Collectives, Structured):
    callback = None           # set on a CallbackGen: the function compiled as a callback
    annotate = False          # a comment with the SPIR-V instruction before its code (dumps)
    elem_loop = None          # element_loops.ElementLoop while a rule runs inside an element loop
    invariant = False         # lane-invariant: one invocation's code runs per workgroup (analysis/invariance.py)
    in_each_lane = False      # emitting inside each_lane's loop over the lanes' matrix columns

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
        # the profile's lane layouts, unless no instruction can tell (then the striped one);
        # the shuffled profile exists to make layouts matter (a conversion between its types is
        # a relayout, so a divergent one is caught): it keeps its own
        self.lanes_observed = lanes.observed(module)
        self.layouts_unobserved = self.profile.layout_kind != "shuffled" and self.lanes_observed is None
        spec.coop_layout = self._coop_layout
        self.ff = flatten(module, self.ep.function, lambda ins: ins.opname in R.COLLECTIVE,
                          rewrite=self._rewrite_flat, movable=self._movable)
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
        # named by the OpEntryPoint: a size from spec constants (LocalSizeId, the WorkgroupSize
        # built-in) is only known here
        where = self.ep.ins.where() if self.ep.ins is not None else {}
        if size is None:
            raise SpirvError(f"entry point {self.ep.name!r} has no LocalSize", **where)
        if any(s < 1 for s in size) or size[0] * size[1] * size[2] > 4096:
            raise SpirvError(f"workgroup size {size} of entry point {self.ep.name!r} is not supported "
                             "(1 to 4096 invocations)", **where)
        return size

    def _coop_layout(self, t, ins):
        """Place cooperative matrix type t on the device: its lane layout, or a SpirvError saying
        why the device profile cannot hold it."""
        why = self.profile.coopmat_problem(t, self.W)
        if why is None:
            try:
                layout = self.profile.layout(t, self.W)
                if self.layouts_unobserved and layout.name != "striped":
                    # nothing in the module looks into a lane's fragment (analysis/lanes.py)
                    return L.striped(t.rows, t.cols, layout.invocations)
                return layout
            except ValueError as e:
                why = f"the {self.profile.name} profile has no lane layout for {describe(t)}: {e}"
        raise SpirvError(why, **ins.where())

    def _check_supported(self):
        for b in self.ff.blocks:
            for ins in b.instrs + [b.term]:
                R.check_supported(ins, self.m.ext_imports)
        variables.check_value_sizes(self.ff, self.spec)

    def _rewrite_flat(self, ff, ids):
        """The flat function's rewrites before collectives are split out: dead arms of branches on
        specialization constants go first, so the rules never see them; Private variables no
        callback reaches become locals; locals become SSA values; short counted loops around
        cooperative instructions are unrolled; whole-array copies of matrices are taken apart and
        the arrays of matrices indexed by constants split into matrices that become SSA values in
        turn (whether or not a loop was unrolled: a helper function's inout array parameter is
        copied in and out without one)."""
        collective = lambda ins: ins.opname in R.COLLECTIVE
        prune.dead_arms(ff, self.spec)
        private.to_local(ff, self.m, self.spec)
        ssa.promote(ff, self.spec, ids, collective)
        unroll.unroll_loops(ff, self.spec, ids, collective)
        if sroa.split_matrix_arrays(ff, self.spec, ids):
            ssa.promote(ff, self.spec, ids, collective)
        simplify.merge_straight_blocks(ff)
        cfg.dominance_order(ff)
        R.rewrite_flat(self, ff, ids)

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
        whole = matrices.whole_vars(ctx, v.promoted, v.var_types)
        self.varying = (invariance.varying(ctx, v, self.lanes_observed, whole, keep) if self.options.invariant_lanes
                        else "runs with invariant_lanes=False") or self._each_lane_too_long()
        self.invariant = self.varying is None
        self.meta.lanes_run = 1 if self.invariant else self.W
        self.meta.varying = self.varying
        self.res = matrices.find(ctx, v.promoted, v.var_types, set(R.COLLECTIVE), R.RESIDENT_DEFS,
                                 every=self.invariant, long=self._long_fragment(),
                                 in_memory={f.result for f in self.ff.variables} - v.promoted)
        placed = [(x, v.var_types[x].pointee) for x in [f.result for f in self.ff.variables] + v.private_vars
                  if x not in v.promoted and x not in self.res.resident_vars]
        in_callbacks = [(x, cb.var_types[x].pointee) for cb in self.callbacks.values() for x in cb.memory_vars]
        # interleaved frames (variables.py) where the lanes run apart and only this function's
        # loads, stores and access chains reach the frame (a callback reads one lane's frame whole)
        interleave = (not self.invariant and not in_callbacks and not keep and placed
                      and all(variables.interleavable(ctx, v.var_types, x) for x, _ in placed))
        variables.place_frames(v, placed + in_callbacks, math.prod(self.local_size) if interleave else 1)
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
        # matrices living in slot rows are written where they are computed (by each_lane loops in
        # a lane-invariant kernel, by element loops where they are long)
        long = self._long_fragment()
        self.hoisted = {x for x in self.hoisted if not isinstance(t := ctx.value_type(x), CoopMat)
                        or not (self.invariant or (long is not None and t.n > long))}
        self.unchecked_loops = loops.unchecked_headers(ctx)
        self.bit_moves = bitmoves.find(ctx, v.promoted | self.resident_vars | set(v.inputs))
        self.has_collectives = any(b.collective for b in self.ff.blocks)
        meta.has_collectives = self.has_collectives
        self.live_in = {}
        self.spills = liveness.SpillPlan()
        if self.has_collectives:
            ud = liveness.Items(self)
            self.live_in = liveness.liveness(self.ff, ud)
            self.spills = liveness.plan_spills(self.ff, ud, self.live_in, self.promoted, ctx.preds)
            for b in self.ff.blocks:
                r = b.instrs[0].result if b.collective else None
                if r is not None and ud.item(r) is not None:
                    self.spills.crossing.add(r)
        self.crossing = self.spills.crossing
        # collective k waits in state -2 - k; the scheduler runs the lowest k first
        pos = order.structured_order(self.ff)
        self.collective_blocks = sorted((b for b in self.ff.blocks if b.collective), key=lambda b: pos[b.label])

    def _long_fragment(self) -> int | None:
        """The most components of a fragment written out (element_loops.py), or None (always)."""
        return element_loops.LONG_FRAGMENT if self.options.element_loops else None

    def _each_lane_too_long(self) -> str | None:
        """A lane-invariant kernel's lane code on matrices runs in each_lane loops whose bodies hold
        every element of a fragment; past EACH_LANE_ELEMENTS elements per invocation LLVM's loop
        passes take seconds (quadratic in a loop's memory accesses: a 127 x 127 subgroup matrix,
        505 elements per invocation, compiled in 8-16 s against 1.9 s run per invocation), so such
        kernels run every invocation. The reason, or None."""
        for b in self.ff.blocks:
            if b.collective:
                continue
            for ins in b.instrs:
                if ins.opname == "OpPhi":
                    continue            # phis of matrices are block copies (resident_copy)
                n = max((t.n for t in self.matrix_types(ins)), default=0)
                if n > EACH_LANE_ELEMENTS:
                    return (f"has {ins.opname} at byte {ins.offset} on a matrix of {n} elements per "
                            f"invocation (run once for all, it would compile slowly)")
        return None

    # -- small services -------------------------------------------------------------------------------
    def value_type(self, vid: int) -> Type:
        t = self.ctx.value_type(vid)
        return t if self.elem_loop is None else self.elem_loop.component_type(t)

    def rtype(self, ins) -> Type:
        t = self.spec.type(ins.result_type)
        return t if self.elem_loop is None else self.elem_loop.component_type(t)

    @staticmethod
    def leaf_types(t: Type) -> list:
        return [s for s, _ in leaves(t)]

    def helper(self, name: str) -> str:
        """The name of a helper function (jitcoop.codegen.helpers), defined in the module once."""
        for dep in DEPENDS.get(name, ()):
            self.helper(dep)
        for d, text in INTRINSICS.get(name, {}).items():
            self.declare(d, text)
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
    def _site(self, ins, message, kind="lane", rule=None) -> int:
        self.sites.append(Site(getattr(ins, "origin", ins), message, kind, rule))
        return len(self.sites)

    def warn_if(self, cond: str, ins, message, rule, lane: str, details=(), case: str = "0"):
        """Where the shader breaks a rule the hardware runs anyway (jitcoop.diagnostics): when
        `cond` (i1) holds the first time in a thread's share of the dispatch, the site, workgroup,
        lane, up to four details and the case go into that thread's record (the failure
        record's layout, in words of its own: KernelMeta.diagnostics), and the code goes on."""
        site = self._site(ins, message, "diagnostic", rule)
        base = self.prof.words(8)
        self.meta.diagnostics.append((site, base))
        fn = self.fn
        first, done = fn.label("warn"), fn.label("warn.done")
        rec = self.op(f"getelementptr i64, ptr %err, i64 {base}")
        fresh = self.op(f"icmp eq i64 {self.op(f'load i64, ptr {rec}')}, 0")
        fn.cbr(self.op(f"and i1 {cond}, {fresh}"), first, done)
        fn.block(first)
        d = list(details) + ["0"] * (4 - len(details))
        args = ", ".join(f"i64 {v}" for v in [str(site), self.wg_reg, lane] + d[:4] + [case])
        self.emit(f"call void {self.helper('warn_record')}(ptr {rec}, {args})")
        fn.br(done)
        fn.block(done)

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
        self._start_counts: dict = {}
        self.in_hoist = False
        self.lane_reg: str | None = None
        self.wg_reg = "%wg"
        self._phis: dict[int, list] = {}
        self._emitted_callbacks: dict = {}          # fid -> the callback's LLVM text
        self._vector_callbacks: dict = {}           # (fid, G) -> its vector form's name, or None
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
                t = self.var_types[v].pointee
                self.store_leaves(leaves(t), self.ptr(v, var_ins).addr, self.vals(var_ins.operands[1]))

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
        emit_lane_coordinates(fn, self.local_size, self.vars.frame_stride)
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
        # a lane-invariant kernel runs lane 0's code for every lane
        insns, memory_ops = fn.size()
        more = fn.op(f"icmp ult i64 {nxt}, {self._lane_count(memory_ops)}")
        md = self._lane_loop_md(insns)
        if self.has_collectives:
            fn.emit(f"br i1 {more}, label %lane.head, label %sched.pick{md}")
            self._emit_scheduler(st)
        else:
            fn.emit(f"br i1 {more}, label %lane.head, label %wg.latch{md}")
            # the workgroup prologue runs the lanes
            fn.resume(self.wg_tail)
            fn.br("lane.head")
            lane.incoming.append(("0", self.wg_tail))
            self._lane_go_switch.append(f"br label %b{blocks[0].label}")
        fn.block("wg.latch")
        wn = fn.op("add i64 %wg, 1")
        self._wg_phi.incoming.append((wn, "wg.latch"))
        fn.br("wg.head")
        self._emit_lane_groups()

    # LLVM's loop-access analysis (run for the loop vectorizer and loop-load elimination) compares
    # every pair of a loop's memory accesses: on a lane loop whose body holds thousands (a 128x128
    # fragment's elements, each lane's copy in the frame) it took 120 s of a 3 s compile. Past this
    # many loads and stores the lane count is read through a volatile load, a trip count LLVM
    # cannot compute, and the analysis gives up at once; below it the loop passes keep their go.
    LOOP_ACCESS_BUDGET = 2000

    def _lane_count(self, memory_ops: int) -> str:
        """The lane loop's bound: the number of invocations whose code runs, opaque to LLVM
        where the lane body (`memory_ops` loads and stores) is too large for its loop-access
        analysis."""
        n = self.meta.lanes_run
        if memory_ops <= self.LOOP_ACCESS_BUDGET:
            return str(n)
        home = self.fn.alloca("i64", "lanes")
        self.entry_defs.append(f"store volatile i64 {n}, ptr {home}")
        return self.fn.op(f"load volatile i64, ptr {home}")

    # LLVM's loop vectorizer, given a lane loop with a known trip count, took 18 s of a 20 s
    # compile on one whose inner loops LLVM had unrolled into a long body (a shader of float32
    # and float64 matrix inverses), and vectorized nothing: bodies past this many instructions
    # (here, before LLVM's unrolling) are marked not to be vectorized. Over 101 of the test
    # corpus's kernels it vectorized element and each_lane loops and no lane loop at all (their
    # bounds checks leave the loop early); short lane loops stay its to try. See
    # LOOP_ACCESS_BUDGET for the long ones' other cost.
    LANE_VECTORIZE_MAX = 1000

    def _lane_loop_md(self, insns: int) -> str:
        """The lane loop's back edge metadata: none, or, past LANE_VECTORIZE_MAX instructions
        (`insns`), not to be vectorized."""
        if self.meta.lanes_run <= 1 or insns <= self.LANE_VECTORIZE_MAX:
            return ""
        self.decls.setdefault("!jc.lane_loop", '!8996 = distinct !{!8996, !8997}\n'
                                               '!8997 = !{!"llvm.loop.vectorize.enable", i1 false}')
        return ", !llvm.loop !8996"

    def _emit_lane_groups(self):
        """The vector copy of the lane code (codegen/lanevec.py), where invocations may differ."""
        from . import lanevec
        lg = self.options.lane_groups
        G = lanevec.group_size(self.W) if lg is True else lg
        if not lg:
            why = "runs with lane_groups=False"
        elif self.invariant:
            why = "lane-invariant: one invocation's code runs"
        elif self.W < G:
            why = f"{self.W} invocations, fewer than a group of {G}"
        else:
            why = lanevec.vectorize(self.fn, lanevec.Plan(
                G=G, lanes=self.W, latch_false="sched.pick" if self.has_collectives else "wg.latch",
                state=self.state if self.has_collectives else None, work_array=self.work_array,
                entry_defs=self.entry_defs, declare=self.declare, loop_md=self.rolled_loop_md,
                force=lg is not True))
        self.meta.lane_group = 0 if why else G
        self.meta.lane_group_why = why

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
        chained = [self.chained(b) for b in self.collective_blocks]
        if self.invariant:
            # only lane 0 ran: every lane is where it is (and so converged)
            s0 = fn.op(f"load i32, ptr {self.state}")
            self.broadcast_row(self.state, "i32")
            waiting = fn.op(f"icmp sle i32 {s0}, -2")
            c = fn.op(f"select i1 {waiting}, i32 {fn.op(f'sub i32 -2, {s0}')}, i32 -1")
            self.conv = "true"
        else:
            c = fn.op(f"call i32 {self.helper('next')}(ptr {self.state}, i64 {W})")
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

    def chained(self, b):
        """The index of the collective a lane resuming after collective block b reaches with no
        code on the way (an empty resume block, nothing to save at that suspend), or None. Such
        a pair was split from one block (analysis.flatten), so every lane reaching the second
        has just left the first."""
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
