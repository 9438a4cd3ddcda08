"""The kernel generator: one specialized entry point -> the Python source of one numba function.

Shape of the generated function (see README, "How a workgroup runs"):

    def kernel(wg_begin, wg_end, grid, bind, push, scratch, ranges, err, cancel):
        <prologue: binding addresses, constants, spill slots>
        for wg in range(wg_begin, wg_end):
            <workgroup ids>
            for lane in range(W):          # a lane loop: runs each lane until its next
                b = state[lane]            # collective point (barrier, subgroup op) or its end
                while True:
                    if b == 0: ...         # one case per block: ordinary scalar code
                    elif b == 1: ...
            <scheduler: run the earliest collective the waiting lanes reached, then loop>

Shaders without collective operations get a single lane loop and no scheduler. Values that live
across a collective point are spilled to per-lane arrays; everything else is a plain local, so
numba/LLVM keep it in registers. The block dispatch is a chain of constant-state tests that LLVM's
jump threading turns back into direct branches.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import SpirvError
from ..spirv.module import Module
from ..spirv.reader import Instruction
from ..spirv.specialize import Specialization
from ..spirv.types import (Array, CoopMat, Opaque, Pointer, Scalar, Struct, TensorLayout, TensorView, Vector,
                           Type, describe, leaves, member_offsets, n_leaves, size_of)
from . import rules as R
from .loops import SHORT_TRIPS, pin_invariants, trip_bound
from ..analysis.flatten import FlatFunction, flatten, id_operand_positions, used_ids
from ..analysis.liveness import liveness

BUILTIN_NAMES = ("GlobalInvocationId", "LocalInvocationId", "LocalInvocationIndex", "WorkgroupId",
                 "NumWorkgroups", "WorkgroupSize", "SubgroupSize", "SubgroupLocalInvocationId",
                 "SubgroupId", "NumSubgroups", "SubgroupEqMask", "SubgroupGeMask", "SubgroupGtMask",
                 "SubgroupLeMask", "SubgroupLtMask", "SubgroupMaxSize")

MEMORY_STORAGE = ("StorageBuffer", "Uniform", "PushConstant", "Workgroup", "PhysicalStorageBuffer")


def nb_type(s) -> str:
    """The numba/numpy type a leaf of scalar type `s` is held in."""
    if isinstance(s, Scalar):
        if s.kind == "bool":
            return "np.bool_"
        if s.kind == "int":
            return f"np.{'' if s.signed else 'u'}int{s.width}"
        if s.kind == "ptr":
            return "np.int64"
        if s.kind == "float":
            return "np.float64" if s.width == 64 else "np.float32"
    raise TypeError(f"no numba type for {s}")


def np_dtype(s) -> np.dtype:
    return np.dtype(nb_type(s)[3:])


@dataclass
class Ptr:
    """What the generator knows about a pointer value."""
    kind: str                 # "mem": an address; "var": part of a promoted variable; "builtin"
    pointee: Type
    storage: str
    addr: str = ""            # for "mem": the expression (a name) of the address
    root: tuple | None = None  # for "mem": (base expr, size expr) of the object it points into
    var: int = 0              # for "var"/"builtin": the variable id
    leaf: int = 0             # first leaf within the variable
    member: object = None     # the struct Member it points at (matrix layout), when known
    static_off: int | None = None   # offset from the root when every index is a constant
    root_min: int | None = None     # bytes the root is known to have (checked at dispatch)
    elem_stride: int | None = None  # a column of a row-major matrix: stride between its elements


@dataclass
class Site:
    """A place in the generated code that can fail, for the error message."""
    ins: Instruction
    message: str
    kind: str = "lane"        # "lane": names workgroup and lane; "group": workgroup only


@dataclass
class Binding:
    set: int
    binding: int
    index: int
    var: int
    type: Type
    min_size: int
    writable: bool
    storage: str
    name: str


@dataclass
class ProfileLayout:
    """Counters of a profiled kernel (option profile=True): groups of int64 words in the per-thread
    `err` array after the failure record, each described for the report (jitcoop.profile)."""
    groups: list = field(default_factory=list)
    size: int = 0

    def slots(self, kind: str, names, **info) -> int:
        base = 8 + self.size
        self.groups.append(dict(kind=kind, base=base, names=tuple(names), **info))
        self.size += len(names)
        return base


@dataclass
class KernelMeta:
    entry: str
    local_size: tuple
    subgroup_size: int
    bindings: list = field(default_factory=list)
    push_size: int = 0
    shared_size: int = 0
    private_frame: int = 0
    sites: list = field(default_factory=list)
    has_collectives: bool = False
    uses_physical: bool = False
    writes_physical: bool = False
    has_atomics: bool = False
    profile: ProfileLayout | None = None


class KernelGen:
    callback = None           # set on a CallbackGen: the SPIR-V function compiled as a callback
    fail_return = "return 1"  # how generated code leaves after recording a failure
    bit_moves = frozenset()   # loads whose value is stored as its memory bits (_find_bit_moves)
    # Blocks emitted inside the one block that enters them (_find_mergeable, _merge_branch_arms):
    # after an unconditional branch or as a branch arm; simple loops; loop exits after the loop.
    merged = inline_headers = loop_exits = inline_blocks = short_loops = frozenset()

    def __init__(self, module: Module, spec: Specialization, entry: str | None, subgroup_size: int,
                 options: dict | None = None, profile=None):
        R.load_all()
        from .. import devices
        self.profile = profile if profile is not None else devices.profile("generic", subgroup_size)
        self.m = module
        self.spec = spec
        self.ep = module.entry_point(entry)
        self.sg = subgroup_size
        self.options = options or {}
        self.profiling = bool(self.options.get("profile"))
        self.prof = ProfileLayout()
        self.lines: list[str] = []
        self.indent = 0
        self.names: dict[int, list[str]] = {}
        self.ptrs: dict[int, Ptr] = {}
        self.const_lines: dict[int, list[str]] = {}
        self.prologue: list[str] = []
        self._last_starts: set[str] = set()     # names _last_start has put in the prologue
        self.wg_prologue: list[str] = []
        self.lane_prologue_used: set[str] = set()
        self.sites: list[Site] = []
        self.tmp_counter = 0
        self.meta = KernelMeta(self.ep.name, (1, 1, 1), subgroup_size, profile=self.prof)
        self.collective_blocks: list = []
        self._check_capabilities()
        self.local_size = self._local_size()
        self.meta.local_size = self.local_size
        self.W = self.local_size[0] * self.local_size[1] * self.local_size[2]
        self.NSG = -(-self.W // self.sg)
        self.globals: list[str] = []          # module-level constants of the generated source
        self._dense: list[str] = []           # scratch arrays of the cooperative kernels
        self._operand_fills: list[str] = []   # operand rows of per-call constants, filled once
        self._operand_rows: list[str] = []    # int64 per-lane operand rows of collectives
        self._views: dict[str, str] = {}      # slot-array views made once per call (view())
        self._needs_info = False
        self._tables: dict = {}
        spec.coop_layout = self._coop_layout
        self.ff: FlatFunction = flatten(module, self.ep.function, self._is_collective,
                                        rewrite=lambda ff, ids: R.rewrite_flat(self, ff, ids),
                                        movable=self._movable)
        self._check_supported()
        self._classify_variables()

    # -- analysis ---------------------------------------------------------------------------------
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

    def table(self, layout) -> str:
        """The name of a module-level constant holding a lane layout's table (numba freezes it
        into the compiled code)."""
        key = (layout.name, layout.rows, layout.cols, layout.invocations, layout.table.tobytes())
        name = self._tables.get(key)
        if name is None:
            name = self._tables[key] = f"_T{len(self._tables)}"
            flat = ",".join(map(str, layout.table.ravel().tolist()))
            self.globals.append(f"{name} = np.array([{flat}], np.int32).reshape"
                                f"({layout.invocations}, {layout.length})")
        return name

    def const_array(self, values, dtype="int64") -> str:
        """The name of a module-level constant 1-D array (a static permutation, a key)."""
        key = ("array", dtype, tuple(values))
        name = self._tables.get(key)
        if name is None:
            name = self._tables[key] = f"_A{len(self._tables)}"
            self.globals.append(f"{name} = np.array([{', '.join(map(str, values))}], np.{dtype})")
        return name

    @staticmethod
    def _builtin_name(v):
        from ..spirv.grammar import grammar
        return grammar().enum_name("BuiltIn", v)

    def _is_collective(self, ins) -> bool:
        return ins.opname in R.COLLECTIVE

    ACCESS_CHAINS = ("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain",
                     "OpInBoundsPtrAccessChain")

    def _movable(self, ins, defs) -> bool:
        """An instruction that may run earlier in its block (ir._raise_segments): pure (push
        constant loads included), with a scalar, vector or pointer result (cheap to keep in spill
        slots). defs: result id -> defining instruction in the function."""
        if ins.result is None:
            return False
        if ins.opname == "OpLoad":
            d = defs.get(ins.operands[0]) or self.m.defs.get(ins.operands[0])
            pt = self.spec.type(d.result_type) if d is not None and d.result_type else None
            if not (isinstance(pt, Pointer) and pt.storage == "PushConstant"):
                return False
        elif ins.opname not in R.PURE and ins.opname not in self.ACCESS_CHAINS:
            return False
        t = self.spec.type(ins.result_type)
        if isinstance(t, Pointer):
            return not isinstance(t.pointee, (CoopMat, TensorLayout, TensorView, Opaque))
        return isinstance(t, Scalar) or (isinstance(t, Vector) and t.n <= 4)

    def _check_supported(self):
        for b in self.ff.blocks:
            for ins in b.instrs + [b.term]:
                R.check_supported(ins, self.m.ext_imports)

    def _classify_variables(self):
        m, spec = self.m, self.spec
        self.bindings: dict[int, Binding] = {}
        self.push_var = None
        self.shared: dict[int, int] = {}           # var id -> offset in workgroup memory
        self.inputs: dict[int, str] = {}           # var id -> builtin name ("" for a struct of builtins)
        self.private_vars: list[int] = []
        self.var_types: dict[int, Pointer] = {}
        shared_off = 0
        index = 0
        for ins in m.global_order:
            if ins.opname != "OpVariable":
                continue
            pt = spec.type(ins.result_type)
            self.var_types[ins.result] = pt
            sc = pt.storage
            if sc in ("StorageBuffer", "Uniform"):
                ds = m.decoration(ins.result, "DescriptorSet", [0])[0]
                bd = m.decoration(ins.result, "Binding", [0])[0]
                t = pt.pointee
                writable = sc == "StorageBuffer" or m.has_decoration(getattr(t, "id", -1), "BufferBlock")
                if writable and self._all_members_nonwritable(ins.result, t):
                    writable = False
                self.bindings[ins.result] = Binding(ds, bd, index, ins.result, t,
                                                    self._min_size(t), writable, sc,
                                                    m.names.get(ins.result) or m.names.get(getattr(t, "id", -1))
                                                    or m.name_of(ins.result))
                index += 1
            elif sc == "PushConstant":
                self.push_var = ins.result
                self.meta.push_size = size_of(pt.pointee)
            elif sc == "Workgroup":
                a = 16
                shared_off = -(-shared_off // a) * a
                self.shared[ins.result] = shared_off
                shared_off += size_of(pt.pointee)
            elif sc == "Input":
                bi = m.decoration(ins.result, "BuiltIn")
                self.inputs[ins.result] = self._builtin_name(bi[0]) if bi else ""
            elif sc == "Private":
                self.private_vars.append(ins.result)
            elif sc == "Output":
                pass
            else:
                raise SpirvError(f"variables in storage class {sc} are not supported",
                                 offset=ins.offset, opname="OpVariable", result_id=ins.result)
        for v in self.ff.variables:
            self.var_types[v.result] = spec.type(v.result_type)
        self.meta.shared_size = shared_off
        self.meta.bindings = sorted(self.bindings.values(), key=lambda b: b.index)
        # Which Function/Private variables become locals: every use a load, a store or a
        # constant-index access chain whose uses are loads and stores.
        users = self.users = self.ff.users()
        self.frame_off: dict[int, int] = {}
        self._find_callbacks()
        # A Private variable a callback reads stays in memory, where the callback finds it.
        in_memory = {v for cb in self.callbacks.values() for v in cb.private_reads}
        self.promoted: set[int] = set()
        candidates = [v.result for v in self.ff.variables] + self.private_vars
        for v in candidates:
            if v not in in_memory and self._promotable(v, users):
                self.promoted.add(v)
        self._find_resident()
        self._coalesce_phis()
        self._coalesce_vars()
        frame = 0
        placed = [(v, self.var_types[v].pointee) for v in candidates
                  if v not in self.promoted and v not in self.resident_vars]
        # Callbacks' own addressed variables (lookup tables) get frame space of the calling lane.
        placed += [(v, cb.var_types[v].pointee) for cb in self.callbacks.values() for v in cb.memory_vars]
        for v, t in placed:
            frame = -(-frame // 16) * 16
            self.frame_off[v] = frame
            frame += size_of(t)
        self.meta.private_frame = -(-frame // 16) * 16

    def _find_resident(self):
        """Cooperative matrices that live in their slot rows [length, W] from definition to last
        use, instead of as per-lane locals: every value a collective instruction produces, loads of
        matrix variables, phis and copies of them, and Function/Private matrix variables only
        loaded and stored whole. Lane code moves them with one row-copy call per instruction and
        reads single elements straight from the rows; nothing is spilled or reloaded at
        collectives. (As locals, a 128 x 128 workgroup accumulator is 64 variables in every lane
        loop, at every spill, reload and phi: numba's compile time grows with all of them.)"""
        self.resident_vars: set[int] = set()
        self.resident: set[int] = set()
        if self.options.get("no_resident"):
            return
        users = self.users
        def kind(t):
            return isinstance(t, (CoopMat, TensorLayout, TensorView))

        for v in list(self.promoted):
            if not kind(self.var_types[v].pointee):
                continue
            if all((u.opname == "OpLoad" and u.operands[0] == v)
                   or (u.opname == "OpStore" and u.operands[0] == v and u.operands[1] != v)
                   for u in users.get(v, ())):
                self.resident_vars.add(v)
        self.promoted -= self.resident_vars
        for b in self.ff.blocks:
            for ins in b.instrs:
                if ins.result is None or not kind(self.spec.type(ins.result_type)):
                    continue
                op = ins.opname
                if (op in R.COLLECTIVE or op in R.RESIDENT_DEFS or op in ("OpPhi", "OpCopyObject")
                        or (op == "OpLoad" and ins.operands[0] in self.resident_vars)):
                    self.resident.add(ins.result)

    # Collectives whose result may share the rows of their C operand: each reads an element of C
    # before it writes that element of the result, or reads all of C before writing any.
    # (a tensor load keeps the Object's element wherever it loads nothing: the same position)
    IN_PLACE = {"OpCooperativeMatrixMulAddKHR": 2, "OpCooperativeMatrixLoadTensorNV": 1}

    def _coalesce_phis(self):
        """Give a loop's resident matrix phi P and the value V it takes on the back edge one set
        of slot rows, so the back edge copies nothing. (A 128 x 128 accumulator copied per lane
        through rows 1 KiB apart cost more than the MulAdd itself.) Safe when V's only phi use
        is P, V's definition reads P at most as an in-place operand, and P's old value is dead
        once V is written: no use of P after V's definition in its block, nor in any block V's
        block reaches before it is back at P's block."""
        self.coalesced: dict[int, int] = {}
        bmap = self._bmap()
        where = {}                                   # value -> (block, index of its definition)
        for b in self.ff.blocks:
            for i, ins in enumerate(b.instrs):
                if ins.result is not None:
                    where[ins.result] = (b, i)
        for pb in self.ff.blocks:
            for phi in pb.phis:
                p = phi.result
                if p not in self.resident:
                    continue
                cands = [phi.operands[i] for i in range(0, len(phi.operands), 2)]
                for v in cands:
                    if (v not in self.resident or v in self.coalesced or v == p or v not in where
                            or self.value_type(v) != self.value_type(p)):
                        continue
                    if self._coalescible(p, pb, v, where, bmap):
                        self.coalesced[v] = p
                        break

    def _coalescible(self, p, pb, v, where, bmap) -> bool:
        vb, vi = where[v]
        vdef = vb.instrs[vi]
        if vdef.opname == "OpPhi":
            return False
        for u in self.users.get(v, ()):
            if u.opname == "OpPhi" and u.result != p:
                return False
        reads = used_ids(vdef)
        if p in reads:
            pos = self.IN_PLACE.get(vdef.opname)
            if pos is None or reads.count(p) != 1 or vdef.operands[pos] != p:
                return False
        # Blocks reached from V's block before P's block comes round again.
        seen, todo = set(), list(vb.succs())
        while todo:
            lab = todo.pop()
            if lab in seen or lab == pb.label or lab not in bmap:
                continue
            seen.add(lab)
            todo.extend(bmap[lab].succs())
        if vb.label in seen:
            return False
        after = set(id(x) for x in vb.instrs[vi + 1:]) | {id(vb.term)}
        for u in self.users.get(p, ()):
            if id(u) in after:
                return False
            if u.opname == "OpPhi":
                # a phi reading P on an edge from V's block or one it reaches
                for i in range(0, len(u.operands), 2):
                    if u.operands[i] == p and (u.operands[i + 1] in seen or u.operands[i + 1] == vb.label):
                        return False
        for lab in seen:
            b = bmap[lab]
            if any(p in used_ids(ins) for ins in b.instrs + [b.term] if ins.opname != "OpPhi"):
                return False
        return True

    def _coalesce_vars(self):
        """Matrix variables (unoptimized SPIR-V keeps accumulators in Function variables) without
        a row copy per load and store: a load whose uses all come before the next store to the
        variable reads the variable's rows; a value whose one use is a store to the variable is
        made in the variable's rows when nothing reads the variable between (its definition may
        read the old value only as an in-place operand). Positions are compared along straight
        runs of blocks (the pieces a collective splits a block into, and merged blocks), so a
        load's uses and a store's value must lie in the run of the instruction itself."""
        if not self.resident_vars:
            return
        blocks = self.ff.blocks
        preds = self._preds()
        entry = blocks[0].label
        nxt = {}
        for b in blocks:
            if b.term.opname == "OpBranch":
                t = b.term.operands[0]
                if preds.get(t) == [b.label] and t != entry and t != b.label:
                    nxt[b.label] = t
        bmap = self._bmap()
        where = {}                  # id(instruction) -> (run, position)
        followers = set(nxt.values())
        for b in blocks:
            if b.label in followers:
                continue
            lab, pos = b.label, 0
            while lab is not None and lab in bmap:
                for ins in bmap[lab].instrs + [bmap[lab].term]:
                    where[id(ins)] = (b.label, pos)
                    pos += 1
                lab = nxt.get(lab)
        defs = {}
        acc = {}                    # variable -> [(run, pos, instruction)] of its loads and stores
        for b in blocks:
            for ins in b.instrs:
                if ins.result is not None:
                    defs[ins.result] = ins
                if ins.opname in ("OpLoad", "OpStore") and ins.operands[0] in self.resident_vars:
                    acc.setdefault(ins.operands[0], []).append(where.get(id(ins), (None, 0)) + (ins,))

        def uses_in_run(v, run, after):
            """Positions of v's uses, all in `run` after `after`; None if any is not."""
            out = []
            for u in self.users.get(v, ()):
                w = where.get(id(u))
                if u.opname == "OpPhi" or w is None or w[0] != run or w[1] <= after:
                    return None
                out.append((w[1], u))
            return out

        aliased = {}                # load result -> (run, pos, last use position)
        for x, items in acc.items():
            for run, pos, ins in items:
                if ins.opname != "OpLoad" or run is None or ins.result not in self.resident:
                    continue
                if ins.result in self.coalesced:
                    continue
                us = uses_in_run(ins.result, run, pos)
                if not us:
                    continue
                last = max(p for p, _ in us)
                if any(r == run and op.opname == "OpStore" and pos < p2 <= last
                       and not (p2 == last and op.operands[1] == ins.result)
                       for r, p2, op in items):
                    continue
                aliased[ins.result] = (run, pos, last)
                self.coalesced[ins.result] = ("var", x)
        for x, items in acc.items():
            t = self.var_types[x].pointee
            for run, pos, st in items:
                if st.opname != "OpStore" or run is None:
                    continue
                v = st.operands[1]
                d = defs.get(v)
                if (d is None or v not in self.resident or v in self.coalesced or d.opname == "OpPhi"
                        or self.value_type(v) != t or len(self.users.get(v, ())) != 1):
                    continue
                dw = where.get(id(d))
                if dw is None or dw[0] != run or dw[1] >= pos:
                    continue
                if any(r == run and dw[1] < p2 < pos for r, p2, _ in items):
                    continue        # the variable is read or written between
                ok = True
                for lres, (lr, lp, last) in aliased.items():
                    if self.coalesced.get(lres) != ("var", x) or lr != run or lp >= dw[1]:
                        continue
                    if last > dw[1]:
                        ok = False
                    elif last == dw[1]:
                        at = self.IN_PLACE.get(d.opname)
                        ok = ok and at is not None and d.operands[at] == lres and used_ids(d).count(lres) == 1
                if ok:
                    self.coalesced[v] = ("var", x)

    def is_resident(self, vid) -> bool:
        return vid in self.resident

    def resident_names(self, x) -> list[str]:
        """Names of the slot rows of a resident value (an id) or variable (("var", id))."""
        if not isinstance(x, tuple):
            x = self.coalesced.get(x, x)     # a value sharing a phi's or variable's rows
        if isinstance(x, tuple):
            t, prefix = self.var_types[x[1]].pointee, f"rv{x[1]}" if x[1] >= 0 else f"rs{-x[1]}"
        else:
            t, prefix = self.value_type(x), f"r{x}"
        lt = self.leaf_types(t)          # one leaf type (matrix component, or uint32 for layouts)
        names = [f"{prefix}_{i}" for i in range(len(lt))]
        for n in names:
            self.name_types[n] = nb_type(lt[0])
            self.slot_groups[n] = names
        return names

    def resident_block(self, x) -> tuple[str, int, int]:
        """(slot array, first row, rows) of a resident value or variable."""
        names = self.resident_names(x)
        tag, r0 = self.slot(names[0])
        return f"S_{tag}", r0, len(names)

    def resident_leaves(self, x) -> list[str]:
        """Expressions reading the current lane's elements of a resident value or variable."""
        arr, r0, n = self.resident_block(x)
        return [f"{arr}[{r0 + i}, lane]" for i in range(n)]

    def resident_copy(self, dst, src):
        """Lane code: copy the current lane's fragment from src to dst (resident values or
        variables, or a non-resident source's leaves)."""
        arr, d0, n = self.resident_block(dst)
        if not isinstance(src, tuple) and not self.is_resident(src):
            vals = self.vals(src)
            if self.spec.is_const(src) and len(set(self.spec.const(src))) == 1:
                self.line(f"sg_lane_fill({arr}, {d0}, {n}, lane, {vals[0]})")     # a splat
                return
            for i, v in enumerate(vals):
                self.line(f"{arr}[{d0 + i}, lane] = {v}")
            return
        sarr, s0, _ = self.resident_block(src)
        if (sarr, s0) != (arr, d0):          # not a coalesced phi (_coalesce_phis)
            self.line(f"sg_lane_copy({arr}, {d0}, {s0}, {n}, lane)")

    def _find_callbacks(self):
        """The SPIR-V functions cooperative instructions call per element, by function id."""
        from .callback import CallbackGen
        self.callbacks: dict = {}
        for b in self.ff.blocks:
            for ins in b.instrs:
                for fid, role in R.callback_operands(self, ins):
                    if fid not in self.callbacks:
                        self.callbacks[fid] = CallbackGen(self, fid, role)

    def callback_fn(self, fid: int) -> str:
        """The name of callback `fid`'s generated function (its source is added once)."""
        cb = self.callbacks[fid]
        if not getattr(cb, "emitted", False):
            cb.emitted = True
            self.globals.append(cb.source())
        return cb.callback

    def _all_members_nonwritable(self, var, t):
        if self.m.has_decoration(var, "NonWritable"):
            return True
        if isinstance(t, Struct) and t.members:
            return all(self.m.member_decoration(t.id, i, "NonWritable") is not None
                       for i in range(len(t.members)))
        return False

    def _min_size(self, t):
        if isinstance(t, Struct) and t.members and isinstance(t.members[-1].type, Array) \
                and t.members[-1].type.length is None:
            return member_offsets(t)[-1]
        return size_of(t)

    def _promotable(self, v, users) -> bool:
        t = self.var_types[v].pointee
        if isinstance(t, Opaque) or n_leaves(t) > 256:
            return False
        stack = [v]
        while stack:
            p = stack.pop()
            for u in users.get(p, ()):
                if u.opname == "OpLoad" and u.operands[0] == p:
                    continue
                if u.opname == "OpStore" and u.operands[0] == p and u.operands[1] != p:
                    continue
                if u.opname in ("OpAccessChain", "OpInBoundsAccessChain") and u.operands[0] == p \
                        and all(self.spec.is_const(i) for i in u.operands[1:]):
                    stack.append(u.result)
                    continue
                return False
        return True

    # -- naming and values ------------------------------------------------------------------------
    def tmp(self, prefix="t") -> str:
        self.tmp_counter += 1
        return f"{prefix}{self.tmp_counter}"

    def line(self, text: str):
        self.lines.append("    " * self.indent + text)

    def value_type(self, vid: int) -> Type:
        if vid in self.ff.type_of:
            return self.spec.type(self.ff.type_of[vid])
        ins = self.m.defs.get(vid)
        if ins is None or ins.result_type is None:
            raise SpirvError(f"%{vid} is used as a value but is not one")
        return self.spec.type(ins.result_type)

    def rtype(self, ins) -> Type:
        return self.spec.type(ins.result_type)

    def vals(self, vid: int) -> list[str]:
        v = self.names.get(vid)
        if v is not None:
            return v
        if vid in self.resident:
            return self.resident_leaves(vid)
        if self.spec.is_const(vid):
            return self._const_names(vid)
        ins = self.ff.defs.get(vid) or self.m.defs.get(vid)
        where = ins.where() if ins else {}
        raise SpirvError(f"%{vid} is used before it is defined (or is not a value)", **where)

    def val(self, vid: int) -> str:
        v = self.vals(vid)
        if len(v) != 1:
            raise SpirvError(f"%{vid} is used as a scalar but has {len(v)} components")
        return v[0]

    def _const_names(self, cid):
        t = self.value_type(cid)
        vals = self.spec.const(cid)
        names = []
        lv = leaves(t) if not isinstance(t, Opaque) else [(t, 0)]
        for i, ((s, _), v) in enumerate(zip(lv, vals)):
            n = f"k{cid}_{i}" if len(vals) > 1 else f"k{cid}"
            self.prologue.append(f"{n} = {self.literal(v, s)}")
            names.append(n)
        self.names[cid] = names
        return names

    def literal(self, v, s) -> str:
        if isinstance(s, Scalar) and s.kind == "bool":
            return "True" if v else "False"
        if isinstance(s, Scalar) and s.kind == "float":
            f = float(v)
            if math.isnan(f):
                r = "np.nan"
            elif math.isinf(f):
                r = "np.inf" if f > 0 else "-np.inf"
            else:
                r = repr(f)
            return f"{nb_type(s)}({r})"
        if isinstance(s, Scalar):
            return f"{nb_type(s)}({int(v)})"
        return "0"

    def define(self, ins: Instruction, exprs: list[str]):
        """Assign the leaves of an instruction's result."""
        rid = ins.result
        names = [f"v{rid}"] if len(exprs) == 1 else [f"v{rid}_{i}" for i in range(len(exprs))]
        for n, e in zip(names, exprs):
            self.line(f"{n} = {e}")
        self.names[rid] = names
        self.spill_if_crossing(rid)

    def alias(self, rid: int, names: list[str]):
        """A result that is exactly other values' leaves (copies, extracts): no code."""
        self.names[rid] = list(names)

    def leaf_types(self, t: Type) -> list:
        return [s for s, _ in leaves(t)]

    # -- failure sites ----------------------------------------------------------------------------
    def fail(self, ins: Instruction, message: str, detail: str = "0", detail2: str = "0") -> str:
        """Code that records a failure at this site and leaves the kernel. The message may use
        {d} and {e}: the runtime values of `detail` and `detail2`."""
        self.sites.append(Site(ins, message))
        k = len(self.sites)
        lane = "-1" if getattr(self, "in_hoist", False) else "lane"
        return (f"err[0] = {k}; err[1] = wg; err[2] = {lane}; err[3] = np.int64({detail}); "
                f"err[4] = np.int64({detail2}); {self.fail_return}")

    def fail_group(self, ins: Instruction, message: str, detail: str = "0") -> str:
        self.sites.append(Site(ins, message, "group"))
        k = len(self.sites)
        return f"err[0] = {k}; err[1] = wg; err[2] = -1; err[3] = np.int64({detail}); {self.fail_return}"

    def fail_lane_cases(self, ins: Instruction, messages: dict, case: str, lane: str, *details: str) -> str:
        """One failure site with a message per case (the runtime value of `case`): one line of
        generated code for an instruction that can fail in several ways."""
        self.sites.append(Site(ins, messages))
        k = len(self.sites)
        ds = "".join(f"err[{3 + i}] = np.int64({x}); " for i, x in enumerate(details[:4]))
        return (f"err[0] = {k}; err[1] = wg; err[2] = np.int64({lane}); {ds}err[7] = np.int64({case}); "
                f"{self.fail_return}")

    def fail_lane(self, ins: Instruction, message: str, lane: str, *details: str) -> str:
        """A failure found by the scheduler that names a lane (an expression there); the message
        may use {d}, {e}, {f} and {g}: the runtime values of up to four detail expressions."""
        self.sites.append(Site(ins, message))
        k = len(self.sites)
        ds = "".join(f"err[{3 + i}] = np.int64({x}); " for i, x in enumerate(details[:4]))
        return f"err[0] = {k}; err[1] = wg; err[2] = np.int64({lane}); {ds}{self.fail_return}"

    # -- pointers ---------------------------------------------------------------------------------
    def ptr(self, pid: int, ins: Instruction) -> Ptr:
        p = self.ptrs.get(pid)
        if p is not None:
            return p
        if pid in self.var_types:
            p = self._var_ptr(pid, ins)
            self.ptrs[pid] = p
            return p
        raise SpirvError(f"%{pid} is used as a pointer but is not one the generator knows", **ins.where())

    def _var_ptr(self, v, ins) -> Ptr:
        pt = self.var_types[v]
        t, sc = pt.pointee, pt.storage
        if v in self.promoted:
            return Ptr("var", t, sc, var=v, leaf=0)
        if v in self.resident_vars:
            return Ptr("res", t, sc, var=v)
        if v in self.bindings:
            b = self.bindings[v]
            return Ptr("mem", t, sc, addr=f"bp{b.index}", root=(f"bp{b.index}", f"bn{b.index}"),
                       static_off=0, root_min=b.min_size)
        if v == self.push_var:
            return Ptr("mem", t, sc, addr="pushp", root=("pushp", "pushn"), static_off=0,
                       root_min=self.meta.push_size)
        if v in self.shared:
            off = self.shared[v]
            name = f"sh{v}"
            self.prologue.append(f"{name} = shp + {off}")
            return Ptr("mem", t, sc, addr=name, root=(name, str(size_of(t))), static_off=0,
                       root_min=size_of(t))
        if v in self.inputs:
            return Ptr("builtin", t, sc, var=v, leaf=0)
        if v in self.frame_off:
            name = f"fv{v}"
            # The address depends on the lane: computed where the lane loop starts.
            self.lane_prologue_used.add(v)
            return Ptr("mem", t, sc, addr=name, root=(name, str(size_of(t))), static_off=0,
                       root_min=size_of(t))
        raise SpirvError(f"variable %{v} cannot be addressed", **ins.where())

    def check_range(self, ins, p: Ptr, addr: str, nbytes: int):
        """Emit the bounds check of an access of nbytes at addr."""
        if self.options.get("unchecked"):
            return
        if p.static_off is not None and p.root_min is not None and p.static_off + nbytes <= p.root_min:
            return          # constant offset inside what the dispatch guarantees: always in bounds
        if p.root is not None:
            base, size = p.root
            self.line(f"if {addr} < {base} or {addr} > {self._last_start(base, size, nbytes)}:")
            self.indent += 1
            self.line(self.fail(ins, f"out-of-bounds access: {nbytes} bytes at byte offset {{d}} of "
                                     f"{self.root_desc(base)}, which has {{e}} bytes",
                                f"{addr} - {base}", size))
            self.indent -= 1
        else:
            self.line(f"if not in_ranges(ranges, {addr}, {nbytes}):")
            self.indent += 1
            self.line(self.fail(ins, "access through a pointer that is outside every buffer "
                                     "(address {d:#x})", addr))
            self.indent -= 1

    def _last_start(self, base: str, size: str, nbytes: int) -> str:
        """The last address where nbytes fit in the object at base. An object of constant size
        (a workgroup or function variable) gives `base + constant`, which keeps LLVM able to
        prove the check true for a bounded index; a buffer or the push constants, whose size
        comes with the dispatch, gives a name set once per call (an instruction less per
        checked access in a loop, and a value a loop can hold in a register)."""
        if size.isdigit():
            return f"{base} + {int(size) - nbytes}"
        name = f"{base}_last{nbytes}"
        if name not in self._last_starts:
            self._last_starts.add(name)
            self.prologue.append(f"{name} = {base} + {size} - {nbytes}")
        return name

    def root_desc(self, base: str) -> str:
        """Words for the object a root address expression names (for error messages)."""
        if base.startswith("bp"):
            b = self.meta.bindings[int(base[2:])]
            return f"binding (set {b.set}, binding {b.binding}) '{b.name}'"
        if base == "pushp":
            return "the push constants"
        if base.startswith("sh"):
            return f"workgroup variable '{self.m.name_of(int(base[2:]))}'"
        if base.startswith("fv"):
            return f"variable '{self.m.name_of(int(base[2:]))}'"
        if base.startswith("a") and base.endswith("_lo"):
            return "the buffer the tensor load's Pointer points into"
        return "its object"

    def load_leaf(self, s, addr: str, raw: bool = False) -> str:
        """A leaf's value from memory (raw: its memory bits, for a bit move)."""
        from .rules.common import leaf_format
        f = leaf_format(s)
        m = f"ld_{f.mem}({addr})"
        return m if raw else f.from_mem(m)

    def store_leaf(self, s, addr: str, v: str, raw: bool = False) -> str:
        from .rules.common import leaf_format
        f = leaf_format(s)
        return f"st_{f.mem}({addr}, {v if raw else f.to_mem(v)})"

    # -- builtins ---------------------------------------------------------------------------------
    def builtin_leaves(self, name: str, ins) -> list[str]:
        lx, ly, lz = self.local_size
        u = "np.uint32"
        if name == "LocalInvocationId":
            self.lane_prologue_used.add("lid")
            return [f"{u}(lx)", f"{u}(ly)", f"{u}(lz)"]
        if name == "LocalInvocationIndex":
            return [f"{u}(lane)"]
        if name == "WorkgroupId":
            return [f"{u}(wx)", f"{u}(wy)", f"{u}(wz)"]
        if name == "NumWorkgroups":
            return [f"{u}(ngx)", f"{u}(ngy)", f"{u}(ngz)"]
        if name == "GlobalInvocationId":
            self.lane_prologue_used.add("lid")
            return [f"{u}(wx * {lx} + lx)", f"{u}(wy * {ly} + ly)", f"{u}(wz * {lz} + lz)"]
        if name == "WorkgroupSize":
            return [f"{u}({lx})", f"{u}({ly})", f"{u}({lz})"]
        if name in ("SubgroupSize", "SubgroupMaxSize"):
            return [f"{u}({self.sg})"]
        if name == "SubgroupLocalInvocationId":
            return [f"{u}(lane % {self.sg})"]
        if name == "SubgroupId":
            return [f"{u}(lane // {self.sg})"]
        if name == "NumSubgroups":
            return [f"{u}({self.NSG})"]
        if name in ("SubgroupEqMask", "SubgroupGeMask", "SubgroupGtMask", "SubgroupLeMask", "SubgroupLtMask"):
            out = []
            for w in range(4):
                out.append(f"{u}(mask_{name[8:10].lower()}(lane % {self.sg}, {w}))")
            return out
        raise SpirvError(f"built-in {name} is not supported in compute shaders", **ins.where())

    # -- the kernel -------------------------------------------------------------------------------
    def build(self) -> tuple[str, KernelMeta]:
        ff = self.ff
        self.block_index = {b.label: i for i, b in enumerate(ff.blocks)}
        self.has_collectives = any(b.collective for b in ff.blocks)
        self.meta.has_collectives = self.has_collectives
        self._find_alias_loads()
        self._find_uniform()
        self._find_bit_moves()
        self.live_in = liveness(ff, _UsesDefs(self)) if self.has_collectives else {}
        self.slots: dict[str, tuple] = {}        # leaf name -> (dtype tag, row)
        self.slot_groups: dict[str, list] = {}   # leaf name -> the fragment it belongs to
        self.slot_rows: dict[str, list] = {}     # dtype tag -> leaf names, one per row
        if self.has_collectives:
            self._plan_spills()
        body_lines = self._emit_blocks()
        sched_lines = self._emit_scheduler() if self.has_collectives else []
        self.meta.sites = self.sites
        return self._assemble(body_lines, sched_lines), self.meta

    def _emit_blocks(self) -> list[str]:
        self.in_hoist = False
        self._emit_workgroup_init()
        self.stored_vars = set()
        for b in self.ff.blocks:
            for ins in b.instrs:
                if ins.opname == "OpStore":
                    self.stored_vars.add(self.var_of.get(ins.operands[0], ins.operands[0]))
        saved = self.lines
        self.lines = []
        self.indent = 0
        self._find_mergeable()
        self._find_simple_loops()
        self._merge_branch_arms()
        self.inline_blocks = self.merged | self.loop_bodies | self.inline_headers | self.loop_exits
        first = True
        for b in self.ff.blocks:
            if b.label in self.inline_blocks:
                continue            # emitted inside its only predecessor
            idx = self.block_index[b.label]
            self.line(f"{'if' if first else 'elif'} b == {idx}:")
            first = False
            self.indent += 1
            if idx == 0:
                self.current_block = b
                self._emit_lane_init()
            if b.label in self.simple_loops:
                self._emit_simple_loop(b)
            else:
                self._emit_block_body(b)
            self.indent -= 1
        self.line("else:")
        self.line("    break")
        out = self.lines
        self.lines = saved
        return out

    def _emit_block_body(self, b):
        self.current_block = b
        if b.collective:
            self._emit_suspend(b)
            return
        if self.has_collectives and self._is_resume(b):
            self._emit_reload(b)
        for ins in b.instrs:
            self._emit_instruction(ins)
        self._emit_instruction(b.term)

    # Branch arms merged into their block nest one level deeper each; Python's parser allows 100
    # levels of indentation, and the kernel's own structure takes about 8.
    MERGE_DEPTH = 12

    def _find_mergeable(self):
        """Blocks entered only by an unconditional branch from their single predecessor are
        emitted inline there: fewer dispatches per loop iteration, fewer cases for numba."""
        self.merged = set()
        self.inline_headers = set()
        self.loop_exits = set()
        for b in self.ff.blocks:
            if b.term.opname == "OpBranch" and self._enters_alone(b.term.operands[0], b):
                self.merged.add(b.term.operands[0])

    def _enters_alone(self, t, b) -> bool:
        """Whether block b is the only way into block t (and t may be emitted inside b's code)."""
        tb = self._bmap().get(t)
        return (tb is not None and t != self.ff.blocks[0].label and t != b.label
                and self._preds().get(t) == [b.label]
                and not (self.has_collectives and self._is_resume(tb)))

    def _merge_branch_arms(self):
        """The arms of conditional branches and switches entered from their block alone, and
        simple loops entered from one block, are emitted inside that block; a simple loop's
        exit entered from its header alone follows its `while`. A lane then runs its
        straight-line code from one dispatch to the next (the GEMM's K step: five dispatches
        per lane became two; measured on the GEMM without its MulAdds, loads and staging
        loop, the lane passes took 16 ms instead of 29). An arm nested deeper than MERGE_DEPTH
        stays a dispatch target."""
        bmap = self._bmap()
        preds = self._preds()
        entry = self.ff.blocks[0].label
        parent = {}                 # a block that may be emitted inside its only way in
        for b in self.ff.blocks:
            if b.label in self.loop_bodies:
                continue
            exit_only = b.label in self.simple_loops
            for x in self._arms(b):
                if x in self.simple_loops:
                    body = self.simple_loops[x][0]
                    if x != entry and [p for p in preds.get(x, ()) if p != body] == [b.label]:
                        parent[x] = b.label
                elif x in self.loop_bodies:
                    continue
                elif self._enters_alone(x, b) and (
                        exit_only or (b.term.opname != "OpBranch" and not bmap[x].collective)):
                    parent[x] = b.label
        work = [(b.label, 0) for b in self.ff.blocks if b.label not in self.merged
                and b.label not in self.loop_bodies and b.label not in parent]
        while work:
            lab, depth = work.pop()
            b = bmap[lab]
            inner = depth + (b.term.opname != "OpBranch")
            for x in self._arms(b):
                if x in self.merged:
                    work.append((x, depth))
                elif parent.get(x) != lab:
                    continue
                elif lab in self.simple_loops:
                    if x != self.simple_loops[lab][0]:
                        self.loop_exits.add(x)          # emitted after the loop's `while`
                        work.append((x, depth))
                elif inner + (x in self.simple_loops) > self.MERGE_DEPTH:
                    work.append((x, 0))                 # a dispatch target of its own
                else:
                    (self.inline_headers if x in self.simple_loops else self.merged).add(x)
                    work.append((x, inner + (x in self.simple_loops)))

    @staticmethod
    def _arms(b) -> list:
        """The blocks b's terminator goes to, each once, leaving out switch targets named twice
        (their code would be emitted twice)."""
        t = b.term
        if t.opname == "OpBranch":
            return [t.operands[0]]
        if t.opname == "OpBranchConditional":
            return list(dict.fromkeys(t.operands[1:3]))
        if t.opname == "OpSwitch":
            targets = [t.operands[1]] + t.operands[3::2]
            return [x for x in dict.fromkeys(targets) if targets.count(x) == 1]
        return []

    def _find_simple_loops(self):
        """Loops of lane code with one exit, at the header, and a straight body: header H ends
        in a conditional branch to its body B (entered from H alone) or out; B and the blocks
        merged after it end back at H. Such a loop is emitted as a Python `while` inside H's
        case, so an iteration costs no dispatch through the block switch (measured: a shared
        memory staging loop ran at about 6 ns per element through the switch)."""
        self.simple_loops: dict[int, tuple[int, int, bool]] = {}
        self.short_loops: set[int] = set()      # simple loops that end within SHORT_TRIPS
        self.loop_bodies: set[int] = set()
        self.inline_loop = None
        preds = self._preds()
        bmap = self._bmap()
        entry = self.ff.blocks[0].label
        for h in self.ff.blocks:
            t = h.term
            if (h.collective or h.label == entry or t.opname != "OpBranchConditional"
                    or t.operands[1] == t.operands[2] or h.label in self.merged
                    or (self.has_collectives and self._is_resume(h))):
                continue
            for on_true, (body, out) in ((True, t.operands[1:3]), (False, t.operands[2:0:-1])):
                chain = self._straight_back(h.label, body, preds, bmap)
                if chain:
                    self.simple_loops[h.label] = (body, out, on_true)
                    self.loop_bodies.add(body)
                    trips = trip_bound(h, on_true, chain, self.ff.defs, self._int_const, self.value_type)
                    if trips is not None and trips <= SHORT_TRIPS:
                        self.short_loops.add(h.label)
                    break

    _ADDRESS = re.compile(r"(bp\d+|sh\d+|fv\d+|pushp|\w+_last\d+)$")
    _VALUE = re.compile(r"v(\d+)(?:_(\d+))?$")

    def _pinnable(self, name: str) -> bool:
        """Whether a name of the generated code holds an integer register value (an address,
        a bound, or a SPIR-V integer of 32 or 64 bits): what pin_invariants may re-bind."""
        if name == "lane" or self._ADDRESS.match(name):
            return True
        m = self._VALUE.match(name)
        if m is None:
            return False
        vid = int(m.group(1))
        if name not in self.names.get(vid, ()) or vid in self.resident:
            return False
        t = self.value_type(vid)
        if m.group(2) is not None:          # a leaf of a vector or composite value
            t = leaves(t)[int(m.group(2))][0] if not isinstance(t, Opaque) else None
        return isinstance(t, Scalar) and t.kind == "int" and t.width in (32, 64)

    def _int_const(self, vid: int):
        """An integer constant's value (spec constants as specialized), or None."""
        if not self.spec.is_const(vid) or self.m.defs[vid].opname == "OpUndef":
            return None
        t = self.value_type(vid)
        if not isinstance(t, Scalar) or t.kind != "int":
            return None
        return int(self.spec.scalar_const(vid))

    def _straight_back(self, h, body, preds, bmap) -> set:
        """The blocks of body (entered from h alone) when it runs straight, through merged
        blocks only, back to h; else an empty set."""
        if preds.get(body) != [h] or body not in bmap or body in self.merged:
            return set()
        cur = bmap[body]
        chain = set()
        for _ in range(64):
            if cur.collective or (self.has_collectives and self._is_resume(cur)):
                return set()
            if cur.term.opname != "OpBranch":
                return set()
            chain.add(cur.label)
            nxt = cur.term.operands[0]
            if nxt == h:
                return chain
            if nxt not in self.merged or nxt not in bmap:
                return set()
            cur = bmap[nxt]
        return set()

    def _emit_simple_loop(self, h):
        body, out, on_true = self.simple_loops[h.label]
        outer, self.lines = self.lines, []
        self.line("while True:")
        self.indent += 1
        self.current_block = h
        for ins in h.instrs:
            self._emit_instruction(ins)
        cond = self.val(h.term.operands[0])
        self.line(f"if {'not ' if on_true else ''}{cond}:")
        self.indent += 1
        after = out in self.loop_exits
        self.goto(out, stay=after)
        self.line("break")
        self.indent -= 1
        self.inline_loop = h.label
        self._emit_block_body(self._bmap()[body])
        self.inline_loop = None
        self.indent -= 1
        loop, self.lines = self.lines, outer
        self.lines.extend(pin_invariants(loop, "    " * self.indent, self._pinnable))
        if after:
            # The exit, entered from the header alone, runs after the `while`.
            tb = self._bmap()[out]
            if out in self.simple_loops:
                self._emit_simple_loop(tb)
            else:
                self._emit_block_body(tb)

    def _is_resume(self, b) -> bool:
        return b.label in self.resume_labels

    @property
    def resume_labels(self):
        if not hasattr(self, "_resume_labels"):
            self._resume_labels = {cb.term.operands[0] for cb in self.ff.blocks if cb.collective}
        return self._resume_labels

    def _emit_workgroup_init(self):
        """Workgroup variables with an initializer (VK_KHR_zero_initialize_workgroup_memory) are
        set at the start of every workgroup."""
        for v in self.shared:
            var_ins = self.m.defs[v]
            if len(var_ins.operands) < 2:
                continue
            p = self.ptr(v, var_ins)
            t = self.var_types[v].pointee
            for (s, off), e in zip(leaves(t), self.vals(var_ins.operands[1])):
                self.wg_prologue.append(self.store_leaf(s, f"{p.addr} + {off}", e))

    def _emit_lane_init(self):
        # Private variables start at their initializer (or zero) in every invocation; Function
        # variables of the entry point with initializers likewise.
        for v in self.private_vars + [x.result for x in self.ff.variables]:
            var_ins = self.ff.defs.get(v) or self.m.defs.get(v)
            init = var_ins.operands[1] if len(var_ins.operands) > 1 else None
            t = self.var_types[v].pointee
            if v in self.resident_vars:
                if init is not None:
                    arr, r0, _ = self.resident_block(("var", v))
                    for i, e in enumerate(self.vals(init)):
                        self.line(f"{arr}[{r0 + i}, lane] = {e}")
                continue
            if v in self.promoted:
                names = [f"x{v}_{i}" for i in range(n_leaves(t))]
                if init is not None:
                    src = self.vals(init)
                else:
                    # Zero, not left unassigned: a variable read (or spilled) on a path that has
                    # not written it all must still be a defined local for numba.
                    src = [self.literal(0, s) for s in self.leaf_types(t)]
                for n, s in zip(names, src):
                    self.line(f"{n} = {s}")
            elif init is not None:
                p = self.ptr(v, var_ins)
                for (s, off), e in zip(leaves(t), self.vals(init)):
                    self.line(self.store_leaf(s, f"{p.addr} + {off}", e))

    UNIFORM_BUILTINS = ("WorkgroupId", "NumWorkgroups", "WorkgroupSize", "SubgroupSize",
                        "SubgroupMaxSize", "NumSubgroups")

    def _find_uniform(self):
        """Values that are the same for every lane of a workgroup and cost nothing to compute
        early: pure instructions on constants, workgroup built-ins and push constant / read-only
        uniform buffer loads. They are computed once per workgroup, before the lane loop."""
        from .rules import PURE
        hoisted = set()
        if self.options.get("no_hoist"):
            self.hoisted = hoisted
            return
        readonly_roots = {self.push_var} | {v for v, b in self.bindings.items()
                                            if b.storage == "Uniform" and not b.writable}
        uniform_inputs = {v for v, n in self.inputs.items() if n in self.UNIFORM_BUILTINS}
        chain_root = {}

        def ok(x):
            return (self.spec.is_const(x) or x in hoisted or x in self.bindings or x == self.push_var
                    or x in self.shared or x in uniform_inputs)

        for b in self.ff.blocks:
            for ins in b.instrs:
                op = ins.opname
                if ins.result is None:
                    continue
                if op in ("OpAccessChain", "OpInBoundsAccessChain"):
                    base = ins.operands[0]
                    root = chain_root.get(base, base)
                    if (root in self.bindings or root == self.push_var or root in self.shared
                            or root in uniform_inputs) and all(ok(x) for x in ins.operands):
                        hoisted.add(ins.result)
                        chain_root[ins.result] = root
                    continue
                if op == "OpLoad":
                    ptr = ins.operands[0]
                    root = chain_root.get(ptr, ptr)
                    if (root in readonly_roots or root in uniform_inputs) and ok(ptr):
                        hoisted.add(ins.result)
                    continue
                if op == "OpExtInst":
                    set_name = self.m.ext_imports.get(ins.operands[0], "")
                    pure = set_name == "GLSL.std.450" and ins.operands[1] not in (35, 52)  # Modf, Frexp
                    args = ins.operands[2:]
                elif op in PURE:
                    pure, args = True, [ins.operands[i] for i in id_operand_positions(ins)]
                else:
                    continue
                if pure and all(ok(x) for x in args) and not isinstance(self.rtype(ins), Opaque):
                    hoisted.add(ins.result)
        self.hoisted = hoisted

    def _find_bit_moves(self):
        """Loads of float16, bfloat16 and fp8 values whose only uses are stores to memory in the
        same block (a copy into shared memory, say): the bits move as they are. A move changes no
        bit of the value, NaN payloads included, and costs no conversion either way."""
        from .rules.common import leaf_format
        self.bit_moves = set()
        for b in self.ff.blocks:
            here = {id(ins) for ins in b.instrs}
            for ins in b.instrs:
                if ins.opname != "OpLoad" or not self._in_memory(ins.operands[0]):
                    continue
                t = self.rtype(ins)
                if isinstance(t, (Opaque, Pointer)):
                    continue
                lt = self.leaf_types(t)
                if not lt or not all(isinstance(s, Scalar) and s.kind == "float"
                                     and leaf_format(s).decode for s in lt):
                    continue
                us = self.users.get(ins.result, ())
                if us and all(u.opname == "OpStore" and u.operands[1] == ins.result
                              and id(u) in here and self._in_memory(u.operands[0]) for u in us):
                    self.bit_moves.add(ins.result)

    def _in_memory(self, pid) -> bool:
        """Whether a pointer reaches memory (a binding, workgroup or frame memory, a physical
        address) rather than a promoted or resident variable or a built-in input."""
        seen = 0
        while seen < 64:
            d = self.ff.defs.get(pid)
            if d is None or d.opname not in self.ACCESS_CHAINS:
                break
            pid = d.operands[0]
            seen += 1
        if pid in self.promoted or pid in self.resident_vars or pid in self.inputs:
            return False
        d = self.ff.defs.get(pid) or self.m.defs.get(pid)
        if d is not None and d.opname in ("OpPhi", "OpSelect", "OpCopyObject"):
            return False             # may name a promoted variable on some path
        return True

    def _find_alias_loads(self):
        """Loads of promoted variables whose value can be the variable's own locals: every use is
        later in the same block and no store to the variable comes between (saves a copy, and
        numba typing time, per load)."""
        var_of = {}
        for b in self.ff.blocks:
            for ins in b.instrs:
                if ins.opname in ("OpAccessChain", "OpInBoundsAccessChain"):
                    base = var_of.get(ins.operands[0], ins.operands[0])
                    if base in self.promoted:
                        var_of[ins.result] = base
        self.var_of = var_of
        ok = set()
        for b in self.ff.blocks:
            pos = {}
            seq = b.instrs + [b.term]
            for i, ins in enumerate(seq):
                for x in used_ids(ins):
                    pos.setdefault(x, []).append(i)
            # successors' phis read values at the end of this block
            for s in b.succs():
                for phi in self._bmap()[s].phis if s in self._bmap() else ():
                    for k in range(0, len(phi.operands), 2):
                        if phi.operands[k + 1] == b.label:
                            pos.setdefault(phi.operands[k], []).append(len(seq))
            stores = {}
            for i, ins in enumerate(seq):
                if ins.opname == "OpStore":
                    v = var_of.get(ins.operands[0], ins.operands[0])
                    stores.setdefault(v, []).append(i)
            for i, ins in enumerate(seq):
                if ins.opname != "OpLoad":
                    continue
                v = var_of.get(ins.operands[0], ins.operands[0])
                if v not in self.promoted:
                    continue
                uses = pos.get(ins.result, [])
                total = sum(1 for u in self.users.get(ins.result, ()))
                if len([u for u in uses if u < len(seq)]) < total:
                    continue          # used in another block
                last = max(uses, default=i)
                if any(i < st <= last for st in stores.get(v, ())):
                    continue
                ok.add(ins.result)
        self.alias_loads = ok

    def var_leaf_names(self, v: int) -> list[str]:
        t = self.var_types[v].pointee
        return [f"x{v}_{i}" for i in range(n_leaves(t))]

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
            # Once per workgroup, before the lane loop.
            saved, saved_indent = self.lines, self.indent
            self.lines, self.indent, self.in_hoist = self.wg_prologue, 0, True
            try:
                rule(self, ins)
            finally:
                self.lines, self.indent, self.in_hoist = saved, saved_indent, False
            return
        rule(self, ins)

    # -- branching (used by the control-flow rules) -------------------------------------------------
    def goto(self, target: int, from_label: int | None = None, stay: bool = False):
        """Emit the phi copies for the edge to `target`, then the block change (or the target
        itself, when it is merged into its only predecessor). stay: the copies only (the
        caller places the target's code next)."""
        from_label = self.current_block.label if from_label is None else from_label
        tb = self._bmap().get(target)
        if tb is None:
            raise SpirvError(f"branch to %{target}, which is not a block of this function",
                             **self.current_block.term.where())
        seen = {target}
        while not stay and self._forwardable(tb) and tb.term.operands[0] not in seen:
            # An empty block that only branches on: go straight to where it goes.
            target = tb.term.operands[0]
            seen.add(target)
            tb = self._bmap()[target]
        copies = []
        res_copies = []
        for phi in tb.phis:
            src = next((phi.operands[i] for i in range(0, len(phi.operands), 2)
                        if phi.operands[i + 1] == from_label), None)
            if src is None:
                raise SpirvError(f"OpPhi has no value for the edge from %{from_label}", **phi.where())
            if phi.result in self.resident:
                res_copies.append((phi.result, src))
                continue
            if isinstance(self.rtype(phi), Pointer):
                sp = self.ptrs.get(src)
                self._phi_ptr(phi, sp)
                srcs = [sp.addr if sp is not None and sp.kind == "mem" else self.vals(src)[0]]
            else:
                srcs = self.vals(src)
            for n, s in zip(self.phi_names(phi), srcs):
                copies.append((n, self.tmp("p"), s))
        # Parallel copy: phis of one block may read each other. A resident matrix phi whose source
        # is another phi of this block goes through the source's copy made first.
        phis_here = {phi.result for phi in tb.phis}
        staged = {}
        for dst, src in res_copies:
            if src in phis_here and src in self.resident and src not in staged:
                staged[src] = ("var", -src)     # a scratch block of the source's shape
                self.var_types[-src] = Pointer("Function", self.value_type(src))
                self.resident_copy(staged[src], src)
        for dst, src in res_copies:
            self.resident_copy(dst, staged.get(src, src))
        for n, t, s in copies:
            self.line(f"{t} = {s}")
        for n, t, s in copies:
            self.line(f"{n} = {t}")
        for phi in tb.phis:
            self.spill_if_crossing(phi.result)
        if stay:
            return
        if (self.block_index[target] <= self.block_index[self.current_block.label]
                and target not in self.short_loops):
            # A loop back edge: the way out of a shader that spins (timeout, Ctrl-C, or another
            # thread's failure) is this check. Short counted loops cannot spin (loops.py).
            self.line("if cancel[0] != 0:")
            self.line(f"    err[0] = -1; err[1] = wg; err[2] = lane; {self.fail_return}")
        if target == self.inline_loop:
            self.line("continue")           # the back edge of a loop emitted as `while`
            return
        if target in self.merged or target in self.inline_headers:
            here, loop = self.current_block, self.inline_loop
            if target in self.merged:
                self._emit_block_body(tb)
            else:
                self._emit_simple_loop(tb)
            self.current_block, self.inline_loop = here, loop
            return
        self.line(f"b = {self.block_index[target]}")

    def _forwardable(self, b) -> bool:
        if b.instrs or b.term.opname != "OpBranch" or b.collective or b.label == self.ff.blocks[0].label:
            return False
        if self.has_collectives and self._is_resume(b):
            return False
        t = self._bmap().get(b.term.operands[0])
        if t is None or t.label in self.inline_blocks:
            return False
        return not any(phi.operands[i + 1] == b.label for phi in t.phis
                       for i in range(0, len(phi.operands), 2))

    def _bmap(self):
        if not hasattr(self, "_bm"):
            self._bm = self.ff.block_map()
        return self._bm

    def _preds(self) -> dict:
        """label -> the labels of its predecessors (each once)."""
        if not hasattr(self, "_pr"):
            self._pr = {}
            for b in self.ff.blocks:
                for t in set(b.succs()):
                    self._pr.setdefault(t, []).append(b.label)
        return self._pr

    def phi_names(self, phi) -> list[str]:
        if phi.result in self.names:
            return self.names[phi.result]
        t = self.rtype(phi)
        if isinstance(t, Pointer):
            names = [f"v{phi.result}"]
        else:
            k = n_leaves(t)
            names = [f"v{phi.result}"] if k == 1 else [f"v{phi.result}_{i}" for i in range(k)]
        self.names[phi.result] = names
        return names

    def _phi_ptr(self, phi, src_ptr):
        t = self.rtype(phi)
        if phi.result not in self.ptrs:
            self.ptrs[phi.result] = Ptr("mem", t.pointee, t.storage, addr=f"v{phi.result}",
                                        root=None)
        if src_ptr is not None and src_ptr.kind != "mem":
            raise SpirvError("OpPhi of pointers to promoted variables or built-ins",
                             **phi.where())

    # -- collectives ------------------------------------------------------------------------------
    def _emit_suspend(self, b):
        """Stop the lane before a collective. SSA values were written to their slots where they
        were defined; promoted variables are written only if stored since the lane last resumed."""
        ins = b.instrs[0]
        idx = self.collective_index(b)
        if ins.result is not None and ins.result not in self.resident:
            # The scheduler writes the result to its slots; the resumed lane reloads it.
            self.names[ins.result] = self.item_names(ins.result)
        dirty = self.dirty_in.get(b.label, set())
        for x in sorted(self.live_in[b.label], key=str):
            if isinstance(x, tuple) and x in dirty:
                for name in self.item_names(x):
                    self.line(f"{self.slot_at(name, 'lane')} = {name}")
        self.line(f"state[lane] = {-2 - idx}")
        self.line("break")

    def spill_if_crossing(self, rid):
        """Write a just-defined SSA value to its slots when a collective lies on some path
        between it and a use."""
        if self.has_collectives and rid in self.crossing:
            for name in self.item_names(rid):
                self.line(f"{self.slot_at(name, 'lane')} = {name}")

    def collective_index(self, b) -> int:
        if b not in self.collective_blocks:
            self.collective_blocks.append(b)
        return self.collective_blocks.index(b)

    def _emit_reload(self, b):
        """A resumed lane gets back the values it uses before its next collective, and the
        variables a suspend it can reach next may spill (they are written from the locals, which
        the lane loop shares between lanes: they must be this lane's)."""
        need = self.live_in[b.label] & (self.used_soon.get(b.label, set())
                                        | self.spilled_next.get(b.label, set()))
        for name in sorted(self._names_of(need)):
            self.line(f"{name} = {self.slot_at(name, 'lane')}")

    def slot(self, name: str) -> tuple[str, int]:
        """The per-lane slot of a leaf: a row of the 2-D slot array of its dtype."""
        key = self.slots.get(name)
        if key is None:
            # A cooperative matrix fragment gets consecutive rows: its kernels take them as one
            # 2-D block [length, W].
            for n in self.slot_groups.get(name, (name,)):
                tag = self.name_types[n][3:]
                rows = self.slot_rows.setdefault(tag, [])
                rows.append(n)
                self.slots[n] = (tag, len(rows) - 1)
            key = self.slots[name]
        return key

    def slot_row(self, name: str) -> str:
        tag, k = self.slot(name)
        return f"S_{tag}[{k}]"

    def slot_at(self, name: str, lane: str) -> str:
        tag, k = self.slot(name)
        return f"S_{tag}[{k}, {lane}]"

    def name_dtype(self, name: str) -> str:
        return self.name_types[name]

    def _names_of(self, items) -> list[str]:
        out = []
        for x in items:
            out.extend(self.item_names(x))
        return out

    def item_names(self, x) -> list[str]:
        """Leaf names of a liveness item: an SSA id, or ("var", id) for a promoted variable."""
        if isinstance(x, tuple):
            v = x[1]
            names = self.var_leaf_names(v)
            for n, s in zip(names, self.leaf_types(self.var_types[v].pointee)):
                self.name_types[n] = nb_type(s)
            return names
        t = self.value_type(x)
        if isinstance(t, Pointer):
            p = self.ptrs.get(x)
            if p is not None and p.kind != "mem":
                return []
            self.name_types[f"v{x}"] = "np.int64"
            return [f"v{x}"]
        if isinstance(t, Opaque):
            return []
        lt = self.leaf_types(t)
        names = [f"v{x}"] if len(lt) == 1 else [f"v{x}_{i}" for i in range(len(lt))]
        for n, s in zip(names, lt):
            self.name_types[n] = nb_type(s)
        if isinstance(t, CoopMat):
            for n in names:
                self.slot_groups[n] = names
        return names

    def _plan_spills(self):
        """Which SSA values cross a collective (spilled where defined), which values a resumed
        lane uses before its next collective (reloaded), and which promoted variables may have
        been stored since the lane last resumed (spilled at the next collective)."""
        ud = _UsesDefs(self)
        self.crossing = {x for b in self.ff.blocks if b.collective
                         for x in self.live_in[b.label] if not isinstance(x, tuple)}
        self.used_soon = liveness(self.ff, ud, stop=lambda b: b.collective)
        preds = self._preds()
        stores = {}
        for b in self.ff.blocks:
            st = set()
            for ins in b.instrs:
                st.update(d for d in ud(ins)[1] if isinstance(d, tuple))
            stores[b.label] = st
        all_vars = {("var", v) for v in self.promoted}
        entry = self.ff.blocks[0].label
        dirty_in = {b.label: set() for b in self.ff.blocks}
        dirty_out = {b.label: set() for b in self.ff.blocks}
        changed = True
        while changed:
            changed = False
            for b in self.ff.blocks:
                inn = set(all_vars) if b.label == entry else set()
                for p in preds.get(b.label, ()):
                    inn |= dirty_out[p]
                out = set() if b.collective else inn | stores[b.label]
                if inn != dirty_in[b.label] or out != dirty_out[b.label]:
                    dirty_in[b.label], dirty_out[b.label] = inn, out
                    changed = True
        self.dirty_in = dirty_in
        # Variables the next suspend may spill, from each block up to the collectives it reaches
        # first. (Maybe-dirty is a union over paths: on a path through a resume that did not
        # reload the variable, the spill must still write this lane's value.)
        spill_at = {b.label: {x for x in self.live_in[b.label] if isinstance(x, tuple)} & dirty_in[b.label]
                    for b in self.ff.blocks if b.collective}
        nxt = {b.label: set() for b in self.ff.blocks}
        changed = True
        while changed:
            changed = False
            for b in reversed(self.ff.blocks):
                if b.collective:
                    new = spill_at[b.label]
                else:
                    new = set()
                    for t in b.succs():
                        new |= nxt.get(t, set())
                if new != nxt[b.label]:
                    nxt[b.label] = new
                    changed = True
        self.spilled_next = nxt

    def _emit_scheduler(self) -> list[str]:
        saved = self.lines
        self.lines = []
        self.indent = 0
        chains = [self._chained(b) for b in self.collective_blocks]
        if any(x is not None for x in chains):
            self.line("c, conv = sg_next_conv(state)")
        else:
            # Without chains the convergence test buys nothing, and it cost the tiled SGEMM
            # shader (two barriers per K step) 25%: far more than its scan (about 70 ns a call),
            # so the cost is in how LLVM compiles the kernel around it.
            self.line("c = sg_next(state); conv = False")
        self.line("if c < 0:")
        self.line("    break")
        self.line("while True:")
        self.indent += 1
        for i, b in enumerate(self.collective_blocks):
            ins = b.instrs[0]
            self.line(f"{'if' if i == 0 else 'elif'} c == {i}:")
            self.indent += 1
            nxt = chains[i]
            resume = self.block_index[b.term.operands[0]] if nxt is None else -2 - nxt
            if self.profiling:
                # runs, lanes taking part, cycles: per instruction of the shader
                s = self.prof.slots("instruction", ("runs", "lanes", "ticks"),
                                    ins=getattr(ins, "origin", ins), type=self._prof_type(ins))
                self.line(f"pl = pf.waiting(state, {-2 - i}); pt = pf.ticks()")
            R.COLLECTIVE[ins.opname](self, ins, -2 - i, resume)
            if self.profiling:
                self.line(f"err[{s}] += 1; err[{s + 1}] += pl; err[{s + 2}] += pf.ticks() - pt")
            if nxt is not None:
                # Every lane waited here and goes straight on to the next collective.
                self.line("if conv:")
                self.line(f"    c = {nxt}")
                self.line("    continue")
            self.indent -= 1
        self.line("break")
        self.indent -= 1
        out = self.lines
        self.lines = saved
        return out

    def _chained(self, b):
        """The index of the collective a lane resuming after collective block b reaches with no
        code on the way (an empty resume block, nothing to spill at the suspend), or None."""
        rb = self._bmap().get(b.term.operands[0])
        if rb is None or rb.instrs or rb.term.opname != "OpBranch":
            return None
        tb = self._bmap().get(rb.term.operands[0])
        if tb is None or not tb.collective or tb not in self.collective_blocks:
            return None
        dirty = self.dirty_in.get(tb.label, set())
        if any(isinstance(x, tuple) and x in dirty for x in self.live_in[tb.label]):
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

    def coll_result(self, ins) -> list[str]:
        """Slot rows for a collective's result (the resumed lane reloads them)."""
        names = self.item_names(ins.result)
        self.names[ins.result] = names
        return [self.slot_row(n) for n in names]

    def coll_arrays(self, vid) -> list[str]:
        """Per-lane arrays (slot rows) holding an operand of a collective, one per leaf; a
        uniform operand is broadcast into slots of its own first."""
        if self._uniform_operand(vid):
            rows = [self.slot_row(n) for n in self._uniform_names(vid)]
            for row, v in zip(rows, self.vals(vid)):
                self.line(f"{row}[:] = {v}")
            return rows
        return [self.slot_row(n) for n in self.item_names(vid)]

    def _uniform_operand(self, vid) -> bool:
        """A value computed outside the lanes (constant, global, hoisted), not in spill slots."""
        return self.spec.is_const(vid) or vid in self.m.defs or vid in self.hoisted

    def _uniform_names(self, vid) -> list[str]:
        t = self.value_type(vid)
        names = [f"u{vid}_{i}" for i in range(n_leaves(t))]
        for n, s in zip(names, self.leaf_types(t)):
            self.name_types[n] = nb_type(s)
        if isinstance(t, CoopMat):
            for n in names:
                self.slot_groups[n] = names
        return names

    # -- cooperative operands ---------------------------------------------------------------------
    def coll_block(self, vid) -> str:
        """The slot rows [length, W] holding a cooperative matrix operand's fragments (a uniform
        operand, such as a splat constant, is broadcast into rows of its own first)."""
        if self._uniform_operand(vid):
            self.coll_arrays(vid)
            return self._slot_block(self._uniform_names(vid))
        if vid in self.resident:
            return self._slot_block(self.resident_names(vid))
        return self._slot_block(self.item_names(vid))

    def coll_result_block(self, ins) -> str:
        if ins.result in self.resident:
            return self._slot_block(self.resident_names(ins.result))
        names = self.item_names(ins.result)
        self.names[ins.result] = names
        return self._slot_block(names)

    def _slot_block(self, names) -> str:
        """Slot rows for a fragment, allocated together so that they form one 2-D block."""
        tag, r0 = self.slot(names[0])         # allocates the whole fragment group
        for i, n in enumerate(names):
            if self.slots.get(n) != (tag, r0 + i):
                raise AssertionError(f"fragment slots of {names[0]} are not contiguous")
        return self.view(f"S_{tag}", r0, r0 + len(names))

    def view(self, arr: str, r0: int, r1: int | None = None) -> str:
        """A view of rows r0:r1 (or row r0) of a slot array, made once per kernel call: a slice
        made at each use costs a reference count increment and decrement (atomic operations)
        every time."""
        name = f"{arr.replace('S_', 'V_', 1)}_{r0}" + ("" if r1 is None else f"_{r1}")
        self._views.setdefault(name, f"{arr}[{r0}]" if r1 is None else f"{arr}[{r0}:{r1}]")
        return name

    def coll_i64(self, vid) -> str:
        """A per-lane int64 row (allocated once per kernel call) holding a scalar operand of a
        collective (pointer address, offset, stride): its int64 slot row itself, a copy of its
        slots of another type, or a uniform expression broadcast (once per call or per workgroup
        when it is the same throughout); vid None gives zeros."""
        emit = self.line
        if vid in getattr(self, "crossing", ()):
            tag, k = self.slot(self.item_names(vid)[0])
            src = self.view(f"S_{tag}", k)
            if tag == "int64":
                return src                          # the slot row itself: nothing to copy
        else:
            p = self.ptrs.get(vid) if vid is not None else None
            src = "np.int64(0)" if vid is None else f"np.int64({p.addr if p is not None else self.val(vid)})"
            if vid is None or self.spec.is_const(vid) or (
                    vid in self.m.defs and p is not None and p.storage in ("Workgroup", "StorageBuffer", "Uniform")):
                emit = self._operand_fills.append   # the same in every workgroup of the call
            elif vid in self.hoisted:
                emit = self.wg_prologue.append      # the same in every lane of the workgroup
        name = f"O{len(self._operand_rows)}"
        self._operand_rows.append(name)
        emit(f"{name}[:] = {src}")
        return name

    def coll_leaves_i64(self, vid) -> str:
        """Like coll_i64 for every leaf of a composite operand (a tensor layout or view): an int64
        array [leaves, W]; vid None gives an empty one."""
        name = f"O{len(self._operand_rows)}"
        if vid is None:
            self._operand_rows.append((name, 0))
            return name
        t = self.value_type(vid)
        n = n_leaves(t)
        self._operand_rows.append((name, n))
        # helper calls, not slice assignments: each of those is a loop nest numba compiles inline
        if vid in self.resident:
            arr, r0, _ = self.resident_block(vid)
            self.line(f"tn.rows_i64({name}, 0, {arr}, {r0}, {n})")
        elif vid in getattr(self, "crossing", ()):
            for j, leaf in enumerate(self.item_names(vid)):
                tag, k = self.slot(leaf)
                self.line(f"tn.rows_i64({name}, {j}, S_{tag}, {k}, 1)")
        else:
            for j, e in enumerate(self.vals(vid)):
                self.line(f"tn.fill_i64({name}, {j}, np.int64({e}))")
        return name

    def info_array(self) -> str:
        """A small int64 array collective kernels write failure details into (offsets, sizes)."""
        self._needs_info = True
        return "info"

    def dense(self, ninst: int, n: int, dtype: str) -> str:
        """A scratch array [instances, n] of dense matrices, allocated once per kernel call."""
        name = f"D{len(self._dense)}"
        self._dense.append(f"{name} = np.empty(({ninst}, {n}), np.{dtype})")
        return name

    # -- assembly ---------------------------------------------------------------------------------
    def _assemble(self, body: list[str], sched: list[str]) -> str:
        lx, ly, lz = self.local_size
        W = self.W
        out = list(self.globals)
        a = out.append
        a("def kernel(wg_begin, wg_end, grid, bind, push, scratch, ranges, err, cancel):")
        I = "    "
        a(I + "ngx = grid[0]; ngy = grid[1]; ngz = grid[2]")
        for bd in self.meta.bindings:
            a(I + f"bp{bd.index} = bind[{2 * bd.index}]; bn{bd.index} = bind[{2 * bd.index + 1}]")
        a(I + "pushp = push[0]; pushn = push[1]")
        a(I + "shp = scratch[0]; pvp = scratch[1]")
        for ln in self.prologue:
            a(I + ln)
        for ln in self._dense:
            a(I + ln)
        for name in self._operand_rows:
            if isinstance(name, tuple):
                a(I + f"{name[0]} = np.zeros(({name[1]}, {W}), np.int64)")
            else:
                a(I + f"{name} = np.empty({W}, np.int64)")
        for ln in self._operand_fills:
            a(I + ln)
        if self._needs_info:
            a(I + "info = np.zeros(8, np.int64)")
        if self.has_collectives:
            a(I + f"state = np.zeros({W}, np.int32)")
            for tag, rows in sorted(self.slot_rows.items()):
                a(I + f"S_{tag} = np.zeros(({len(rows)}, {W}), np.{tag})")
            for name, expr in self._views.items():
                a(I + f"{name} = {expr}")
        a(I + "for wg in range(wg_begin, wg_end):")
        I2 = I * 2
        a(I2 + "wx = wg % ngx; wq = wg // ngx; wy = wq % ngy; wz = wq // ngy")
        a(I2 + "if cancel[0] != 0:")
        a(I2 + "    err[0] = -1; err[1] = wg; return 1")
        for ln in self.wg_prologue:
            a(I2 + ln)
        lane_pro = []
        if "lid" in self.lane_prologue_used:
            lane_pro.append(f"lx = lane % {lx}; ly = (lane // {lx}) % {ly}; lz = lane // {lx * ly}")
        for v in sorted(x for x in self.lane_prologue_used if isinstance(x, int)):
            lane_pro.append(f"fv{v} = pvp + lane * {self.meta.private_frame} + {self.frame_off[v]}")
        if not self.has_collectives:
            a(I2 + f"for lane in range({W}):")
            I3 = I * 3
            for ln in lane_pro:
                a(I3 + ln)
            a(I3 + "b = 0")
            a(I3 + "while True:")
            for ln in body:
                a(I * 4 + ln)
        else:
            a(I2 + f"for l in range({W}):")
            a(I2 + "    state[l] = 0")
            a(I2 + "while True:")
            I3 = I * 3
            a(I3 + f"for lane in range({W}):")
            a(I3 + "    b = state[lane]")
            a(I3 + "    if b < 0:")
            a(I3 + "        continue")
            for ln in lane_pro:
                a(I3 + I + ln)
            a(I3 + "    while True:")
            for ln in body:
                a(I3 + I * 2 + ln)
            for ln in sched:
                a(I3 + ln)
        a(I + "return 0")
        return "\n".join(out) + "\n"


class _UsesDefs:
    """Uses and definitions of an instruction as liveness items: SSA ids of runtime values and
    ("var", id) for promoted variables."""

    def __init__(self, gen: KernelGen):
        self.g = gen
        gen.name_types = {}
        self.var_of = {}      # access chain result -> promoted variable
        for b in gen.ff.blocks:
            for ins in b.instrs:
                if ins.opname in ("OpAccessChain", "OpInBoundsAccessChain"):
                    base = ins.operands[0]
                    base = self.var_of.get(base, base)
                    if base in gen.promoted:
                        self.var_of[ins.result] = base

    def _item(self, x):
        g = self.g
        if x in g.promoted or x in g.resident:
            return None           # resident matrices are never spilled: they live in slots
        if x in self.var_of:
            return None
        if g.spec.is_const(x) or x in g.m.defs or x in g.var_types or x in getattr(g, "hoisted", ()):
            return None
        if x not in g.ff.type_of:
            return None       # labels, functions
        return x

    def phi_value(self, x):
        i = self._item(x)
        return [i] if i is not None else []

    def __call__(self, ins):
        uses, defs = [], []
        g = self.g
        op = ins.opname
        ids = used_ids(ins) if op != "OpPhi" else []
        for x in ids:
            i = self._item(x)
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
