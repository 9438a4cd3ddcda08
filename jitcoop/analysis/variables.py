"""Variables: what each OpVariable of the module and of the flat function is, and where it lives.

- StorageBuffer / Uniform variables are bindings (descriptor set, binding, minimum size, writable);
  the PushConstant variable is the push block; Workgroup variables get offsets in the workgroup's
  shared memory; Input variables are built-ins.
- Function and Private variables used only through loads, stores and constant-index access chains
  are *promoted*: one register per leaf. The rest live in a per-lane frame of private memory.
  A Private variable a callback reads stays in memory, where the callback finds it.
- Where every variable in memory is made of 32-bit leaves and only loaded, stored and indexed
  (`interleavable`), the lanes' frames are *interleaved*: a frame byte offset o of lane l is at
  o * lanes + 4 * l, so one leaf of consecutive lanes is one contiguous run. A lane group
  (codegen/lanevec.py) then reads a private array indexed by a loop counter (`float state[32]`
  walked by every lane alike) with plain vector loads; in whole per-lane frames each such access
  was a gather of one leaf per frame (a 512-byte stride in ggml's gated delta net, where the
  gathers took most of the dispatch).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SpirvError
from ..spirv.types import (Array, Opaque, Scalar, Struct, Vector, describe, leaves, member_offsets, n_leaves,
                           size_of)
from .context import Context


# Bounds on the memory a kernel's variables take, far above what real shaders use (a GPU has some
# tens of KiB of workgroup memory), so that a module declaring gigabytes fails at kernel() instead
# of exhausting the host at dispatch.
MAX_WORKGROUP_BYTES = 64 << 20
MAX_INVOCATION_BYTES = 256 << 10        # Function and Private variables of one invocation
INTERLEAVED_LEAF = 4                    # bytes of every leaf of an interleaved frame


@dataclass
class Binding:
    set: int
    binding: int
    index: int
    var: int
    type: object
    min_size: int
    writable: bool
    storage: str
    name: str


@dataclass
class Variables:
    bindings: dict = field(default_factory=dict)      # var id -> Binding
    push_var: int | None = None
    push_size: int = 0
    shared: dict = field(default_factory=dict)        # var id -> offset in workgroup memory
    shared_size: int = 0
    inputs: dict = field(default_factory=dict)        # var id -> built-in name ("" for a struct of them)
    private_vars: list = field(default_factory=list)
    var_types: dict = field(default_factory=dict)     # var id -> Pointer type
    promoted: set = field(default_factory=set)        # Function/Private variables held in registers
    frame_off: dict = field(default_factory=dict)     # var id -> offset in the lane's private frame
    private_frame: int = 0                            # bytes of one lane's frame
    frame_scale: int = 1                              # interleaved frames: the lanes (else 1)

    @property
    def frame_stride(self) -> int:
        """Bytes from a frame byte of one lane to the same byte of the next lane."""
        return INTERLEAVED_LEAF if self.frame_scale > 1 else self.private_frame


def classify(ctx: Context, keep_in_memory: set, builtin_name) -> Variables:
    """Every variable's kind; promotion of Function/Private variables (except keep_in_memory)."""
    m, spec = ctx.m, ctx.spec
    out = Variables()
    shared_off = 0
    index = 0
    local = {v.result for v in ctx.ff.variables}
    for ins in m.global_order:
        if ins.opname != "OpVariable":
            continue
        pt = spec.type(ins.result_type)
        out.var_types[ins.result] = pt
        sc = pt.storage
        if sc in ("StorageBuffer", "Uniform"):
            ds = m.decoration(ins.result, "DescriptorSet", [0])[0]
            bd = m.decoration(ins.result, "Binding", [0])[0]
            t = pt.pointee
            writable = sc == "StorageBuffer" or m.has_decoration(getattr(t, "id", -1), "BufferBlock")
            if writable and _all_members_nonwritable(m, ins.result, t):
                writable = False
            out.bindings[ins.result] = Binding(ds, bd, index, ins.result, t, _min_size(t), writable, sc,
                                               m.names.get(ins.result) or m.names.get(getattr(t, "id", -1))
                                               or m.name_of(ins.result))
            index += 1
        elif sc == "PushConstant":
            out.push_var = ins.result
            out.push_size = size_of(pt.pointee)
        elif sc == "Workgroup":
            shared_off = -(-shared_off // 16) * 16
            out.shared[ins.result] = shared_off
            shared_off += size_of(pt.pointee)
            if shared_off > MAX_WORKGROUP_BYTES:
                raise ins.error(f"the Workgroup variables need {shared_off} bytes so far; jitcoop runs at most "
                                f"{MAX_WORKGROUP_BYTES >> 20} MiB of workgroup memory")
        elif sc == "Input":
            bi = m.decoration(ins.result, "BuiltIn")
            out.inputs[ins.result] = builtin_name(bi[0]) if bi else ""
        elif sc == "Private":
            # (one that analysis/private.py moved among the flat function's variables is one of
            # them, counted below, or was split into others by analysis/sroa.py: unused here)
            if ins.result not in local and (ctx.users.get(ins.result) or ins.result in keep_in_memory):
                out.private_vars.append(ins.result)
        elif sc == "Output":
            pass
        else:
            raise SpirvError(f"variables in storage class {sc} are not supported",
                             offset=ins.offset, opname="OpVariable", result_id=ins.result)
    per_invocation = sum(size_of(out.var_types[v].pointee) for v in out.private_vars)
    for v in ctx.ff.variables:
        out.var_types[v.result] = spec.type(v.result_type)
        per_invocation += size_of(out.var_types[v.result].pointee)
        if per_invocation > MAX_INVOCATION_BYTES:
            raise v.error(f"the Function and Private variables need {per_invocation} bytes per invocation "
                          f"so far; jitcoop runs at most {MAX_INVOCATION_BYTES >> 10} KiB")
    if per_invocation > MAX_INVOCATION_BYTES:
        v = m.all_defs[max(out.private_vars, key=lambda x: size_of(out.var_types[x].pointee))]
        raise v.error(f"the Private variables need {per_invocation} bytes per invocation; jitcoop runs at "
                      f"most {MAX_INVOCATION_BYTES >> 10} KiB")
    for b in out.bindings.values():
        w = None if b.writable else _write_through(ctx, b.var)
        if w is not None:
            raise w.error(f"writes binding (set {b.set}, binding {b.binding}) '{b.name}', which is read-only "
                          "(NonWritable, or a uniform buffer)")
    out.shared_size = shared_off
    for v in [x.result for x in ctx.ff.variables] + out.private_vars:
        if v not in keep_in_memory and promotable(ctx, out.var_types, v):
            out.promoted.add(v)
    return out


def place_frames(out: Variables, in_memory: list, interleave_lanes: int = 1):
    """Frame offsets (16-byte aligned) for the variables that live in memory, in order; the
    frames of `interleave_lanes` lanes interleaved (1: each lane's frame whole)."""
    frame = 0
    for v, t in in_memory:
        frame = -(-frame // 16) * 16
        out.frame_off[v] = frame
        frame += size_of(t)
    out.private_frame = -(-frame // 16) * 16
    out.frame_scale = interleave_lanes if in_memory else 1


def interleavable(ctx: Context, var_types: dict, v: int) -> bool:
    """Whether variable v can live in an interleaved frame: no initializer, every leaf a 32-bit
    integer or float, and every use a load, a store to it or an access chain (not a pointer
    chain) whose uses are the same; so every access is a whole leaf at a multiple of 4."""
    t = var_types[v].pointee
    if isinstance(t, Opaque) or any(not (isinstance(s, Scalar) and s.kind in ("int", "float") and s.width == 32)
                                    for s, _ in leaves(t)):
        return False
    var_ins = ctx.ff.defs.get(v) or ctx.m.defs.get(v)
    if var_ins is None or len(var_ins.operands) > 1:
        return False
    stack = [v]
    while stack:
        p = stack.pop()
        for u in ctx.users.get(p, ()):
            if u.opname == "OpLoad" and u.operands[0] == p:
                continue
            if u.opname == "OpStore" and u.operands[0] == p and u.operands[1] != p:
                continue
            if u.opname in ("OpAccessChain", "OpInBoundsAccessChain") and u.operands[0] == p \
                    and p not in u.operands[1:]:
                stack.append(u.result)
                continue
            return False
    return True


def promotable(ctx: Context, var_types: dict, v: int) -> bool:
    """Whether every use of variable v is a load, a store or a constant-index access chain whose
    uses are the same (and the variable is small enough to keep in registers)."""
    t = var_types[v].pointee
    if isinstance(t, Opaque) or n_leaves(t) > 256:
        return False
    stack = [v]
    users = ctx.users
    while stack:
        p = stack.pop()
        for u in users.get(p, ()):
            if u.opname == "OpLoad" and u.operands[0] == p:
                continue
            if u.opname == "OpStore" and u.operands[0] == p and u.operands[1] != p:
                continue
            if u.opname in ("OpAccessChain", "OpInBoundsAccessChain") and u.operands[0] == p \
                    and all(ctx.spec.is_const(i) for i in u.operands[1:]):
                stack.append(u.result)
                continue
            return False
    return True


# Instructions that write memory through their first operand (atomics besides OpAtomicLoad too),
# and those whose result is a pointer into what their pointer operand points into.
_WRITES = ("OpStore", "OpCopyMemory", "OpCopyMemorySized", "OpCooperativeMatrixStoreKHR",
           "OpCooperativeMatrixStoreTensorNV", "OpCooperativeVectorStoreNV",
           "OpCooperativeVectorOuterProductAccumulateNV", "OpCooperativeVectorReduceSumAccumulateNV")
_DERIVED = ("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain", "OpInBoundsPtrAccessChain",
            "OpCopyObject", "OpPhi", "OpSelect")


def _write_through(ctx: Context, var: int):
    """The first instruction of the flat function that writes memory through a pointer derived
    from variable var (a read-only binding is neither snapshotted nor restored: no write may
    reach it), or None."""
    seen, stack = {var}, [var]
    while stack:
        p = stack.pop()
        for u in ctx.users.get(p, ()):
            op = u.opname
            if (op in _WRITES or (op.startswith("OpAtomic") and op != "OpAtomicLoad")) and u.operands[0] == p:
                return u
            if op in _DERIVED and u.result not in seen and (op in ("OpPhi", "OpSelect", "OpCopyObject")
                                                             or u.operands[0] == p):
                seen.add(u.result)
                stack.append(u.result)
    return None


def _all_members_nonwritable(m, var, t):
    if m.has_decoration(var, "NonWritable"):
        return True
    if isinstance(t, Struct) and t.members:
        return all(m.member_decoration(t.id, i, "NonWritable") is not None for i in range(len(t.members)))
    return False


def _min_size(t):
    if isinstance(t, Struct) and t.members and isinstance(t.members[-1].type, Array) \
            and t.members[-1].type.length is None:
        return member_offsets(t)[-1]
    return size_of(t)


def check_value_sizes(ff, spec):
    """Every value of the flat function fits an invocation's state: a struct or array loaded
    whole is held by each lane, and one of gigabytes (an array type's length mutated to 2^31)
    took the host's memory in the code generator instead of an error."""
    for b in ff.blocks:
        for ins in b.instrs:
            if ins.result_type is None or ins.opname == "OpVariable":
                continue
            t = spec.type(ins.result_type)
            n = _value_bytes(t)
            if n > MAX_INVOCATION_BYTES:
                raise ins.error(f"its result ({describe(t)}) is {n} bytes; jitcoop holds at most "
                                f"{MAX_INVOCATION_BYTES >> 10} KiB of one invocation's values")


def _value_bytes(t) -> int:
    """The bytes of a value of type t an invocation holds (a matrix its fragment; opaque types
    and pointers count 0)."""
    if isinstance(t, (Scalar, Vector)):
        return size_of(t)
    if isinstance(t, Array):
        return (t.length or 0) * _value_bytes(t.elem)
    if isinstance(t, Struct):
        return sum(_value_bytes(m.type) for m in t.members)
    return 0
