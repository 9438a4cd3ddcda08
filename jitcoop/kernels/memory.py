"""Raw memory access for generated kernels.

Every address a shader can form (storage and uniform buffers, push constants, physical storage
buffer pointers, workgroup memory, Private and Function variables kept in memory) is a host byte
address held in an int64. Loads and stores are single LLVM instructions (align 1: x86 allows it and
the SPIR-V alignment rules never need more), atomics are LLVM `atomicrmw`/`cmpxchg`, so parallel
workgroups stay exact. Bounds are checked by the generated code before it calls these.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_TYPES = {
    "i8": types.int8, "u8": types.uint8, "i16": types.int16, "u16": types.uint16,
    "i32": types.int32, "u32": types.uint32, "i64": types.int64, "u64": types.uint64,
    "f32": types.float32, "f64": types.float64,
}


def _ptr(context, builder, addr, nbty):
    return builder.inttoptr(addr, context.get_value_type(nbty).as_pointer())


def _make_load(nbty):
    @intrinsic
    def load(typingctx, addr):
        def codegen(context, builder, sig, args):
            v = builder.load(_ptr(context, builder, args[0], nbty))
            v.align = 1
            return v
        return nbty(types.int64), codegen
    return load


def _make_store(nbty):
    @intrinsic
    def store(typingctx, addr, val):
        def codegen(context, builder, sig, args):
            val = context.cast(builder, args[1], sig.args[1], nbty)
            s = builder.store(val, _ptr(context, builder, args[0], nbty))
            s.align = 1
            return context.get_dummy_value()
        return types.void(types.int64, val), codegen
    return store


def _make_rmw(nbty, op):
    @intrinsic
    def rmw(typingctx, addr, val):
        def codegen(context, builder, sig, args):
            val = context.cast(builder, args[1], sig.args[1], nbty)
            return builder.atomic_rmw(op, _ptr(context, builder, args[0], nbty), val, "seq_cst")
        return nbty(types.int64, val), codegen
    return rmw


def _make_cmpxchg(nbty):
    @intrinsic
    def cmpxchg(typingctx, addr, cmp, new):
        def codegen(context, builder, sig, args):
            cmp = context.cast(builder, args[1], sig.args[1], nbty)
            new = context.cast(builder, args[2], sig.args[2], nbty)
            pair = builder.cmpxchg(_ptr(context, builder, args[0], nbty), cmp, new, "seq_cst", "seq_cst")
            return builder.extract_value(pair, 0)
        return nbty(types.int64, cmp, new), codegen
    return cmpxchg


def _make_float_rmw(nbty, op):
    # LLVM's atomicrmw fadd works on every LLVM numba ships with; fmin/fmax use a cmpxchg loop on
    # the bits so that NaN handling is what the generated code asks for.
    ity = {types.float32: ir.IntType(32), types.float64: ir.IntType(64)}[nbty]

    @intrinsic
    def frmw(typingctx, addr, val):
        def codegen(context, builder, sig, args):
            val = context.cast(builder, args[1], sig.args[1], nbty)
            ptr = _ptr(context, builder, args[0], nbty)
            if op == "fadd":
                return builder.atomic_rmw("fadd", ptr, val, "seq_cst")
            iptr = builder.bitcast(ptr, ity.as_pointer())
            entry = builder.block
            loop = builder.append_basic_block("frmw.loop")
            done = builder.append_basic_block("frmw.done")
            first = builder.load(iptr)
            builder.branch(loop)
            builder.position_at_end(loop)
            old = builder.phi(ity)
            old.add_incoming(first, entry)
            oldf = builder.bitcast(old, val.type)
            if op == "fmin":
                pick = builder.fcmp_ordered("<", val, oldf)
            else:
                pick = builder.fcmp_ordered(">", val, oldf)
            # Operands that are NaN lose to numbers (fmin/fmax of IEEE 754-2008).
            old_nan = builder.fcmp_unordered("uno", oldf, oldf)
            pick = builder.or_(pick, old_nan)
            newf = builder.select(pick, val, oldf)
            newi = builder.bitcast(newf, ity)
            pair = builder.cmpxchg(iptr, old, newi, "seq_cst", "seq_cst")
            got = builder.extract_value(pair, 0)
            ok = builder.extract_value(pair, 1)
            old.add_incoming(got, builder.block)
            builder.cbranch(ok, done, loop)
            builder.position_at_end(done)
            return builder.bitcast(got, val.type)
        return nbty(types.int64, val), codegen
    return frmw


_g = globals()
for _n, _t in _TYPES.items():
    _g[f"ld_{_n}"] = _make_load(_t)
    _g[f"st_{_n}"] = _make_store(_t)
    if _n[0] in "iu" and _n not in ("i8", "u8", "i16", "u16"):
        for _op in ("add", "sub", "and", "or", "xor", "xchg"):
            _g[f"atomic_{_op}_{_n}"] = _make_rmw(_t, _op)
        _g[f"atomic_min_{_n}"] = _make_rmw(_t, "min" if _n[0] == "i" else "umin")
        _g[f"atomic_max_{_n}"] = _make_rmw(_t, "max" if _n[0] == "i" else "umax")
        _g[f"atomic_cmpxchg_{_n}"] = _make_cmpxchg(_t)
for _n in ("f32", "f64"):
    for _op in ("fadd", "fmin", "fmax"):
        _g[f"atomic_{_op}_{_n}"] = _make_float_rmw(_TYPES[_n], _op)
    _g[f"atomic_xchg_{_n}"] = _make_rmw(_TYPES[_n], "xchg")


__all__ = [n for n in _g if n.startswith(("ld_", "st_", "atomic_"))]
