"""Control flow in generated code: SPIR-V blocks as LLVM blocks, phis, promoted variables as
allocas, the edges between blocks (phi values, matrix phi copies, cancel checks on loop back
edges), and a lane's stop before a collective and its resume after it."""
from __future__ import annotations

from contextlib import contextmanager

from ..analysis.flatten import used_ids
from ..errors import SpirvError
from ..spirv.reader import Instruction
from ..spirv.types import CoopMat, Pointer, leaves
from . import element_loops
from . import rules as R
from .llvm import Phi, lit, ty
from .meta import Ptr


class ControlFlow:
    """Mixin of KernelGen: blocks, instructions, branches, suspends and resumes."""

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
                self.store_leaves(leaves(t), self.ptr(v, var_ins).addr, self.vals(init))

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
        if self.invariant and self._on_matrices(ins):
            with self.each_lane():
                rule(self, ins)
            return
        n = element_loops.length(self, ins)
        if n:
            element_loops.lower(self, ins, rule, n)
            return
        rule(self, ins)

    # -- lane-invariant kernels: lane code on matrices ------------------------------------------------
    def matrix_types(self, ins: Instruction) -> list:
        """The cooperative matrix types of an instruction's result and operands."""
        types = [self.rtype(ins)] if ins.result is not None and ins.result_type is not None else []
        for x in used_ids(ins):
            try:
                types.append(self.value_type(x))
            except SpirvError:
                continue            # a label, a type, an extended instruction set
        return [t for t in types if isinstance(t, CoopMat)]

    def _on_matrices(self, ins: Instruction) -> bool:
        """Whether an instruction reads or writes a cooperative matrix value."""
        return any(x in self.resident for x in used_ids(ins)) or bool(self.matrix_types(ins))

    @contextmanager
    def each_lane(self):
        """Emit the code inside for every lane of the workgroup in turn (`lane_reg` its index): in a
        lane-invariant kernel lane 0's code runs for all, but each lane holds its own fragment of
        a matrix, so an instruction on matrices runs over every lane's column of the slot rows."""
        with self.rolled_loop("each", self.W) as lane:
            saved = self.lane_reg
            self.lane_reg, self.in_each_lane = lane, True
            try:
                yield
            finally:
                self.lane_reg, self.in_each_lane = saved, False

    @contextmanager
    def rolled_loop(self, name: str, n):
        """A loop of n iterations (n a number or an i64 operand) around the code emitted inside,
        which gets the counter (an i64 register); LLVM keeps it rolled (rolled_loop_md)."""
        fn = self.fn
        pre = fn.cur
        head, done = fn.label(name), fn.label(f"{name}.done")
        fn.br(head)
        fn.block(head)
        i = fn.phi("i64", name)
        i.incoming.append(("0", pre))
        yield i.name
        nxt = self.op(f"add i64 {i.name}, 1")
        i.incoming.append((nxt, fn.cur))
        more = self.op(f"icmp ult i64 {nxt}, {n}")
        fn.emit(f"br i1 {more}, label %{head}, label %{done}, !llvm.loop {self.rolled_loop_md()}")
        fn.block(done)

    def rolled_loop_md(self) -> str:
        """A new loop's metadata for an each_lane or element loop: not unrolled (an each_lane
        body holds every element of a fragment, n strided streams; an element loop runs past 32
        components), left to LLVM's loop vectorizer, which runs an each_lane loop 8 lanes at a
        time. Measured side by side at 1024^3 on one core: wg_tensor 1.05x (exact and
        float32), wg_tensor_O 1.10x and flash attention 1.05x (their float16 conversions and
        per-element arithmetic of 64-element fragments), the others within noise; cold compiles
        of the workgroup GEMM, the Q4_0 GEMMs, the flash attentions and the production matmul
        within noise. (Kept scalar, these loops compiled faster on an earlier generator, 0.9 s
        against 1.3 s, at the same speed; vectorized, they run faster on this one.)"""
        self.decls.setdefault("!jc.each_lane", '!8998 = !{!"llvm.loop.unroll.disable"}')
        k = 9000 + sum(1 for n in self.decls if n.startswith("!jc.each_lane."))
        self.decls[f"!jc.each_lane.{k}"] = f"!{k} = distinct !{{!{k}, !8998}}"
        return f"!{k}"

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
            self._emitted_callbacks[fid] = None         # marked before building, as it always was
            self._emitted_callbacks[fid] = text = CallbackGen(self, fid).build_function()
            self.globals.append(text)
        return f"@cb{fid}"

    def vector_callback_fn(self, fid: int, G: int) -> str | None:
        """The name of callback `fid`'s G-wide form (jitcoop.codegen.callback_vector), its
        parameters and the invocation index taking one value per element; None where it has
        none. Made once per (fid, G)."""
        key = (fid, G)
        if key not in self._vector_callbacks:
            from .callback import vector_form
            self.callback_fn(fid)
            made = vector_form(self._emitted_callbacks[fid], G, self.declare)
            if made is not None:
                self.globals.append(made[1])
            self._vector_callbacks[key] = made and made[0]
        return self._vector_callbacks[key]

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
