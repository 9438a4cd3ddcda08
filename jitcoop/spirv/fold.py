"""Folding OpSpecConstantOp: the operations the spec allows there, on Python numbers.

Results wrap like the generated code does (two's complement at the result width; division by
zero gives the same answers as the runtime helpers in jitcoop.kernels.scalar).
"""
from __future__ import annotations

import math

from .types import Scalar, Vector, child, n_leaves


def _w(v, t: Scalar):
    from .specialize import wrap_int, round_float
    if t.kind == "bool":
        return bool(v)
    if t.kind == "int":
        return wrap_int(int(v), t)
    return round_float(v, t)


def _u(v, width):
    return v & ((1 << width) - 1)


def _s(v, width):
    v &= (1 << width) - 1
    return v - (1 << width) if v >> (width - 1) else v


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _binary(name, a, b, w):
    if name == "IAdd": return a + b
    if name == "ISub": return a - b
    if name == "IMul": return a * b
    if name == "UDiv": return _u(a, w) // _u(b, w) if _u(b, w) else -1
    if name == "SDiv": return _tdiv(_s(a, w), _s(b, w)) if _s(b, w) else -1
    if name == "UMod": return _u(a, w) % _u(b, w) if _u(b, w) else a
    if name == "SRem":
        sa, sb = _s(a, w), _s(b, w)
        return sa - sb * _tdiv(sa, sb) if sb else a
    if name == "SMod":
        sa, sb = _s(a, w), _s(b, w)
        return sa % sb if sb else a          # Python's % takes the sign of the divisor, as SMod
    if name == "ShiftLeftLogical": return _u(a, w) << (_u(b, 64) & (w - 1))
    if name == "ShiftRightLogical": return _u(a, w) >> (_u(b, 64) & (w - 1))
    if name == "ShiftRightArithmetic": return _s(a, w) >> (_u(b, 64) & (w - 1))
    if name == "BitwiseOr": return a | b
    if name == "BitwiseAnd": return a & b
    if name == "BitwiseXor": return a ^ b
    if name == "IEqual": return _u(a, w) == _u(b, w)
    if name == "INotEqual": return _u(a, w) != _u(b, w)
    if name == "ULessThan": return _u(a, w) < _u(b, w)
    if name == "UGreaterThan": return _u(a, w) > _u(b, w)
    if name == "ULessThanEqual": return _u(a, w) <= _u(b, w)
    if name == "UGreaterThanEqual": return _u(a, w) >= _u(b, w)
    if name == "SLessThan": return _s(a, w) < _s(b, w)
    if name == "SGreaterThan": return _s(a, w) > _s(b, w)
    if name == "SLessThanEqual": return _s(a, w) <= _s(b, w)
    if name == "SGreaterThanEqual": return _s(a, w) >= _s(b, w)
    if name == "LogicalOr": return bool(a) or bool(b)
    if name == "LogicalAnd": return bool(a) and bool(b)
    if name == "LogicalEqual": return bool(a) == bool(b)
    if name == "LogicalNotEqual": return bool(a) != bool(b)
    if name == "FAdd": return a + b
    if name == "FSub": return a - b
    if name == "FMul": return a * b
    if name == "FDiv": return a / b if b else (math.copysign(math.inf, a) * math.copysign(1, b) if a else math.nan)
    raise KeyError(name)


def fold(spec, name: str, t, args) -> list:
    ops = [spec.const(a) for a in args[:3] if isinstance(a, int) and spec.is_const(a)]
    if name == "Select":
        c, a, b = (spec.const(x) for x in args[:3])
        if len(c) == 1:
            return a if c[0] else b
        return [x if cc else y for cc, x, y in zip(c, a, b)]
    if name == "CompositeExtract":
        base_t = spec.type(spec.m.defs[args[0]].result_type)
        vals = spec.const(args[0])
        pos = 0
        for idx in args[1:]:
            base_t, p = child(base_t, idx)
            pos += p
        return vals[pos:pos + n_leaves(base_t)]
    if name == "CompositeInsert":
        obj, comp = spec.const(args[0]), spec.const(args[1])
        ct = t
        pos = 0
        for idx in args[2:]:
            ct, p = child(ct, idx)
            pos += p
        return obj[:pos] + comp + obj[pos + len(comp):]
    if name == "VectorShuffle":
        a, b = spec.const(args[0]), spec.const(args[1])
        ab = a + b
        return [ab[i] if i != 0xFFFFFFFF else 0 for i in args[2:]]
    leaf_t = t.elem if isinstance(t, Vector) else t
    src_t = spec.type(spec.m.defs[args[0]].result_type)
    src_leaf = src_t.elem if isinstance(src_t, Vector) else src_t
    if name in ("SConvert", "UConvert", "FConvert", "QuantizeToF16", "ConvertFToS", "ConvertSToF",
                "ConvertFToU", "ConvertUToF"):
        out = []
        for v in ops[0]:
            if name == "UConvert":
                v = _u(v, src_leaf.width)
            elif name == "SConvert":
                v = _s(v, src_leaf.width)
            elif name == "QuantizeToF16":
                from .specialize import round_float
                v = round_float(v, Scalar("float", 16))
            out.append(_w(v, leaf_t))
        return out
    if name in ("SNegate", "Not", "LogicalNot", "FNegate"):
        f = {"SNegate": lambda v: -v, "Not": lambda v: ~v, "LogicalNot": lambda v: not v,
             "FNegate": lambda v: -v}[name]
        return [_w(f(v), leaf_t) for v in ops[0]]
    if len(ops) < 2:
        raise KeyError(name)
    a, b = ops[0], ops[1]
    if len(a) != len(b):
        b = b * len(a) if len(b) == 1 else b
    w = src_leaf.width
    return [_w(_binary(name, x, y, w), leaf_t) for x, y in zip(a, b)]
