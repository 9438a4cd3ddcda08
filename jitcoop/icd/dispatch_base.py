"""vkCmdDispatchBase: the shader rewritten so that its workgroup ids start at the base.

jitcoop's dispatch numbers workgroups from zero. For a dispatch with a base, the driver runs a
copy of the module in which the WorkgroupId and GlobalInvocationId built-ins are read from
Private variables that the entry point fills first: the built-in plus the base (for the global
id, the base times the workgroup size). Each distinct base compiles once.

Only the uses a compute shader makes of these built-ins are rewritten: OpLoad of the variable,
and access chains into it (then the chain's pointer type becomes a Private one). A module that
uses them otherwise is an error naming the instruction.
"""
from __future__ import annotations

import struct

OP_ENTRY_POINT, OP_DECORATE, OP_TYPE_INT, OP_TYPE_VECTOR, OP_TYPE_POINTER = 15, 71, 21, 23, 32
OP_CONSTANT, OP_CONSTANT_COMPOSITE, OP_FUNCTION, OP_FUNCTION_END, OP_LABEL = 43, 44, 54, 56, 248
OP_VARIABLE, OP_LOAD, OP_STORE, OP_IADD = 59, 61, 62, 128
OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN = 65, 66
OP_LINE, OP_NO_LINE = 8, 317
_BLOCK_START = (OP_LABEL, OP_VARIABLE, OP_LINE, OP_NO_LINE)    # what stays before the prologue
DECORATION_BUILTIN, BUILTIN_WORKGROUP_ID, BUILTIN_GLOBAL_INVOCATION_ID = 11, 26, 28
STORAGE_PRIVATE = 6


class RewriteError(ValueError):
    pass


def _instructions(words):
    i = 5
    while i < len(words):
        n, op = words[i] >> 16, words[i] & 0xFFFF
        if n == 0:
            raise RewriteError(f"malformed SPIR-V: an instruction of 0 words at word {i}")
        yield op, list(words[i + 1:i + n])
        i += n


def _ins(op, *operands) -> list:
    return [((len(operands) + 1) << 16) | op, *operands]


def _entry_name(operands) -> str:
    raw = struct.pack(f"<{len(operands) - 2}I", *operands[2:])
    return raw.split(b"\0", 1)[0].decode()


def with_base(code: bytes, entry: str, workgroup_base, global_base) -> bytes:
    """The module with WorkgroupId reading as itself + workgroup_base and GlobalInvocationId as
    itself + global_base (both 3-tuples), for entry point `entry`."""
    words = list(struct.unpack(f"<{len(code) // 4}I", code))
    version, bound = words[1], words[3]
    ins = list(_instructions(words))
    offsets = {}
    for op, o in ins:
        if op == OP_DECORATE and o[1] == DECORATION_BUILTIN and o[2] in (BUILTIN_WORKGROUP_ID,
                                                                         BUILTIN_GLOBAL_INVOCATION_ID):
            offsets[o[0]] = tuple(workgroup_base if o[2] == BUILTIN_WORKGROUP_ID else global_base)
    if not offsets:
        return code                   # the shader reads neither id
    ptr_types = {o[0]: (o[1], o[2]) for op, o in ins if op == OP_TYPE_POINTER}
    var_types = {o[1]: o[0] for op, o in ins if op == OP_VARIABLE}
    vec_types = {o[0]: (o[1], o[2]) for op, o in ins if op == OP_TYPE_VECTOR}
    int_types = {o[0]: (o[1], o[2]) for op, o in ins if op == OP_TYPE_INT}
    vec3 = ptr_types[var_types[next(iter(offsets))]][1]
    uint = vec_types[vec3][0]
    if int_types.get(uint) != (32, 0) or vec_types[vec3][1] != 3:
        raise RewriteError("the workgroup id built-ins are not uint3 variables")

    def new_id():
        nonlocal bound
        bound += 1
        return bound - 1
    ptr_vec, ptr_uint = new_id(), new_id()
    globals_ = _ins(OP_TYPE_POINTER, ptr_vec, STORAGE_PRIVATE, vec3) + _ins(OP_TYPE_POINTER, ptr_uint,
                                                                            STORAGE_PRIVATE, uint)
    consts, private, prologue = {}, {}, []
    for var, base in offsets.items():
        parts = []
        for v in base:
            if v not in consts:
                consts[v] = new_id()
                globals_ += _ins(OP_CONSTANT, uint, consts[v], v & 0xFFFFFFFF)
            parts.append(consts[v])
        vec_const, private[var], loaded, added = new_id(), new_id(), new_id(), new_id()
        globals_ += _ins(OP_CONSTANT_COMPOSITE, vec3, vec_const, *parts)
        globals_ += _ins(OP_VARIABLE, ptr_vec, private[var], STORAGE_PRIVATE)
        prologue += _ins(OP_LOAD, vec3, loaded, var) + _ins(OP_IADD, vec3, added, loaded, vec_const)
        prologue += _ins(OP_STORE, private[var], added)

    entry_fn = None
    for op, o in ins:
        if op == OP_ENTRY_POINT and _entry_name(o) == entry:
            entry_fn = o[1]
    if entry_fn is None:
        raise RewriteError(f"no entry point {entry!r}")
    out = words[:5]
    in_function = placed = False
    current = None
    for op, o in ins:
        if op == OP_FUNCTION:
            out += globals_               # the new types, constants and variables go before functions
            globals_ = []
            in_function, current = True, o[1]
        elif op == OP_FUNCTION_END:
            in_function = False
        elif op == OP_ENTRY_POINT and o[1] == entry_fn and version >= 0x00010400:
            o = o + list(private.values())
        elif in_function:
            if current == entry_fn and not placed and op not in _BLOCK_START:
                out += prologue
                placed = True
            if op == OP_LOAD and o[2] in private:
                o = [o[0], o[1], private[o[2]]] + o[3:]
            elif op in (OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN) and o[2] in private:
                o = [ptr_uint, o[1], private[o[2]]] + o[3:]
            elif any(x in private for x in o):
                raise RewriteError(f"vkCmdDispatchBase: opcode {op} uses a workgroup id built-in in a way "
                                   "the driver cannot offset (only loads and access chains)")
        out += _ins(op, *o)
    out[3] = bound
    return struct.pack(f"<{len(out)}I", *out)
