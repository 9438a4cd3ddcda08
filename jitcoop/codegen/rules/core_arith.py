"""Core arithmetic, bit, logical, comparison and conversion instructions, component by component.

Integers are numpy integers of their SPIR-V width; every result is cast back to its type, which
wraps like two's complement hardware. float16/bfloat16 values are held as float32 values that the
format can represent: one float32 operation rounded once to the format is exact for + - * / sqrt.
"""
from __future__ import annotations

from ...errors import SpirvError
from ...spirv.types import Scalar
from ..emitter import nb_type
from . import rule
from .common import bits_of, check_leaves, from_bits, round_from64, round_to, scalars, signed, unsigned


def _map(em, ins, fn, nargs):
    rt = em.rtype(ins)
    out_s = scalars(rt)
    args = [em.vals(x) for x in ins.operands[:nargs]]
    arg_s = [scalars(em.value_type(x)) for x in ins.operands[:nargs]]
    for a in args[1:]:
        check_leaves(ins, args[0], a)
    exprs = []
    for i, s in enumerate(out_s):
        exprs.append(fn(s, [a[i] for a in args], [t[i] for t in arg_s]))
    em.define(ins, exprs)


def _int_binary(template):
    def lower(em, ins):
        def f(s, a, ins_s):
            src = ins_s[0]
            expr = template.format(a=a[0], b=a[1], T=nb_type(s), U=unsigned(src), S=signed(src),
                                   W=src.width, M=src.width - 1)
            # Casts of an operand to the type it already has only cost numba typing time.
            for x, xs in ((a[0], ins_s[0]), (a[1], ins_s[1])):
                if x.isidentifier():
                    expr = expr.replace(f"{nb_type(xs)}({x})", x)
            return expr
        _map(em, ins, f, 2)
    return lower


_INT_BINARY = {
    "OpIAdd": "{T}({T}({a}) + {T}({b}))",
    "OpISub": "{T}({T}({a}) - {T}({b}))",
    "OpIMul": "{T}({T}({a}) * {T}({b}))",
    "OpUDiv": "{T}(udiv64(np.uint64({U}({a})), np.uint64({U}({b}))))",
    "OpSDiv": "{T}(sdiv64(np.int64({S}({a})), np.int64({S}({b}))))",
    "OpUMod": "{T}(umod64(np.uint64({U}({a})), np.uint64({U}({b}))))",
    "OpSRem": "{T}(srem64(np.int64({S}({a})), np.int64({S}({b}))))",
    "OpSMod": "{T}(smod64(np.int64({S}({a})), np.int64({S}({b}))))",
    "OpBitwiseAnd": "{T}({T}({a}) & {T}({b}))",
    "OpBitwiseOr": "{T}({T}({a}) | {T}({b}))",
    "OpBitwiseXor": "{T}({T}({a}) ^ {T}({b}))",
    # Shift counts are taken modulo the width (the common hardware answer; SPIR-V leaves counts
    # >= width undefined).
    "OpShiftLeftLogical": "{T}({U}({a}) << {U}(np.uint64({b}) & np.uint64({M})))",
    "OpShiftRightLogical": "{T}({U}({a}) >> {U}(np.uint64({b}) & np.uint64({M})))",
    "OpShiftRightArithmetic": "{T}({S}({a}) >> {S}(np.uint64({b}) & np.uint64({M})))",
    "OpIEqual": "({U}({a}) == {U}({b}))",
    "OpINotEqual": "({U}({a}) != {U}({b}))",
    "OpUGreaterThan": "({U}({a}) > {U}({b}))",
    "OpUGreaterThanEqual": "({U}({a}) >= {U}({b}))",
    "OpULessThan": "({U}({a}) < {U}({b}))",
    "OpULessThanEqual": "({U}({a}) <= {U}({b}))",
    "OpSGreaterThan": "({S}({a}) > {S}({b}))",
    "OpSGreaterThanEqual": "({S}({a}) >= {S}({b}))",
    "OpSLessThan": "({S}({a}) < {S}({b}))",
    "OpSLessThanEqual": "({S}({a}) <= {S}({b}))",
}
for _op, _tpl in _INT_BINARY.items():
    rule(_op)(_int_binary(_tpl))


def _pow2_divisor(em, vid):
    """log2 of a constant divisor that is the same power of two in every component, else None."""
    if not em.spec.is_const(vid):
        return None
    vals = {int(v) for v in em.spec.const(vid)}
    if len(vals) != 1:
        return None
    d = vals.pop()
    return d.bit_length() - 1 if d > 0 and d & (d - 1) == 0 else None


def _unsigned_by_pow2(template, general):
    """OpUDiv/OpUMod by a constant power of two: a shift or a mask (index arithmetic in every
    tiled shader; the general helper has a zero test LLVM cannot always see through)."""
    def lower(em, ins):
        sh = _pow2_divisor(em, ins.operands[1])
        if sh is None:
            return general(em, ins)
        _map(em, ins, lambda s, a, ins_s: template.format(a=a[0], T=nb_type(s), U=unsigned(ins_s[0]),
                                                           sh=sh, mask=(1 << sh) - 1), 2)
    return lower


rule("OpUDiv")(_unsigned_by_pow2("{T}({U}({a}) >> {U}({sh}))", _int_binary(_INT_BINARY["OpUDiv"])))
rule("OpUMod")(_unsigned_by_pow2("{T}({U}({a}) & {U}({mask}))", _int_binary(_INT_BINARY["OpUMod"])))


def _float_binary(template):
    def lower(em, ins):
        def f(s, a, ins_s):
            return round_to(template.format(a=a[0], b=a[1], F=nb_type(ins_s[0])), s)
        _map(em, ins, f, 2)
    return lower


for _op, _tpl in {"OpFAdd": "{a} + {b}", "OpFSub": "{a} - {b}", "OpFMul": "{a} * {b}",
                  "OpFDiv": "{a} / {b}", "OpFRem": "np.fmod({a}, {b})",
                  "OpFMod": "fmod_spirv({a}, {b})"}.items():
    rule(_op)(_float_binary(_tpl))


_FLOAT_COMPARE = {
    "OpFOrdEqual": "({a} == {b})",
    "OpFOrdNotEqual": "({a} < {b} or {a} > {b})",
    "OpFOrdLessThan": "({a} < {b})",
    "OpFOrdGreaterThan": "({a} > {b})",
    "OpFOrdLessThanEqual": "({a} <= {b})",
    "OpFOrdGreaterThanEqual": "({a} >= {b})",
    "OpFUnordEqual": "(not ({a} < {b} or {a} > {b}))",
    "OpFUnordNotEqual": "({a} != {b})",
    "OpFUnordLessThan": "(not ({a} >= {b}))",
    "OpFUnordGreaterThan": "(not ({a} <= {b}))",
    "OpFUnordLessThanEqual": "(not ({a} > {b}))",
    "OpFUnordGreaterThanEqual": "(not ({a} < {b}))",
    "OpLogicalEqual": "({a} == {b})",
    "OpLogicalNotEqual": "({a} != {b})",
    "OpLogicalAnd": "({a} and {b})",
    "OpLogicalOr": "({a} or {b})",
}


def _compare(template):
    def lower(em, ins):
        _map(em, ins, lambda s, a, ins_s: template.format(a=a[0], b=a[1]), 2)
    return lower


for _op, _tpl in _FLOAT_COMPARE.items():
    rule(_op)(_compare(_tpl))


@rule("OpLogicalNot")
def _logical_not(em, ins):
    _map(em, ins, lambda s, a, _: f"(not {a[0]})", 1)


@rule("OpNot")
def _not(em, ins):
    _map(em, ins, lambda s, a, _: f"{nb_type(s)}(~{nb_type(s)}({a[0]}))", 1)


@rule("OpSNegate")
def _snegate(em, ins):
    _map(em, ins, lambda s, a, src: f"{nb_type(s)}(np.uint64(0) - np.uint64({unsigned(src[0])}({a[0]})))", 1)


@rule("OpFNegate")
def _fnegate(em, ins):
    _map(em, ins, lambda s, a, _: f"(-{a[0]})", 1)


@rule("OpIsNan")
def _isnan(em, ins):
    _map(em, ins, lambda s, a, _: f"({a[0]} != {a[0]})", 1)


@rule("OpIsInf")
def _isinf(em, ins):
    _map(em, ins, lambda s, a, _: f"(abs({a[0]}) == np.inf)", 1)


@rule("OpIsFinite")
def _isfinite(em, ins):
    _map(em, ins, lambda s, a, _: f"(abs({a[0]}) < np.inf)", 1)


@rule("OpIsNormal")
def _isnormal(em, ins):
    def f(s, a, src):
        tiny = {16: 6.103515625e-05, 32: 1.1754943508222875e-38, 64: 2.2250738585072014e-308}[src[0].width]
        return f"(abs({a[0]}) >= {tiny} and abs({a[0]}) < np.inf)"
    _map(em, ins, f, 1)


@rule("OpSelect")
def _select(em, ins):
    c = em.vals(ins.operands[0])
    a = em.vals(ins.operands[1])
    b = em.vals(ins.operands[2])
    from ...spirv.types import Pointer
    rt = em.rtype(ins)
    if len(c) == 1:
        c = c * len(a)
    em.define(ins, [f"({x} if {cc} else {y})" for cc, x, y in zip(c, a, b)])
    if isinstance(rt, Pointer):
        from ..emitter import Ptr
        pa, pb = em.ptr(ins.operands[1], ins), em.ptr(ins.operands[2], ins)
        if pa.kind != "mem" or pb.kind != "mem":
            raise SpirvError("OpSelect of pointers to variables that are not in memory", **ins.where())
        root = pa.root if pa.root == pb.root else None
        em.ptrs[ins.result] = Ptr("mem", rt.pointee, rt.storage, addr=em.names[ins.result][0], root=root)


@rule("OpAny")
def _any(em, ins):
    em.define(ins, ["(" + " or ".join(em.vals(ins.operands[0])) + ")"])


@rule("OpAll")
def _all(em, ins):
    em.define(ins, ["(" + " and ".join(em.vals(ins.operands[0])) + ")"])


# -- conversions ----------------------------------------------------------------------------------
@rule("OpUConvert")
def _uconvert(em, ins):
    _map(em, ins, lambda s, a, src: f"{nb_type(s)}({unsigned(src[0])}({a[0]}))", 1)


@rule("OpSConvert")
def _sconvert(em, ins):
    _map(em, ins, lambda s, a, src: f"{nb_type(s)}({signed(src[0])}({a[0]}))", 1)


@rule("OpFConvert")
def _fconvert(em, ins):
    # SPV_EXT_float8: with SaturatedToLargestFloat8NormalConversionEXT an out-of-range value
    # becomes the largest finite fp8 value of its sign instead of NaN (E4M3) or inf (E5M2).
    sat = em.m.has_decoration(ins.result, "SaturatedToLargestFloat8NormalConversionEXT")

    def f(s, a, src):
        if s.encoding in ("e4m3", "e5m2"):
            w = 64 if src[0].width == 64 else 32
            return f"{s.encoding}_to_f32(f{w}_to_{s.encoding}(np.float{w}({a[0]}), {sat}))"
        if src[0].width == 64:
            return round_from64(a[0], s)
        return round_to(a[0], s)
    _map(em, ins, f, 1)


@rule("OpConvertFToS")
def _f_to_s(em, ins):
    def f(s, a, _):
        lo, hi = -(1 << (s.width - 1)), (1 << (s.width - 1)) - 1
        return f"{nb_type(s)}(f2s({a[0]}, {lo}, {hi}))"
    _map(em, ins, f, 1)


@rule("OpConvertFToU")
def _f_to_u(em, ins):
    _map(em, ins, lambda s, a, _: f"{nb_type(s)}(f2u({a[0]}, {(1 << s.width) - 1}))", 1)


@rule("OpConvertSToF")
def _s_to_f(em, ins):
    def f(s, a, src):
        if s.width == 32:
            return f"np.float32(np.int64({signed(src[0])}({a[0]})))"
        return round_from64(f"np.float64(np.int64({signed(src[0])}({a[0]})))", s)
    _map(em, ins, f, 1)


@rule("OpConvertUToF")
def _u_to_f(em, ins):
    def f(s, a, src):
        if s.width == 32:
            return f"np.float32(np.uint64({unsigned(src[0])}({a[0]})))"
        return round_from64(f"np.float64(np.uint64({unsigned(src[0])}({a[0]})))", s)
    _map(em, ins, f, 1)


@rule("OpQuantizeToF16")
def _quantize(em, ins):
    # Values too small for a normal float16 become zero of the same sign.
    _map(em, ins, lambda s, a, _: f"quantize_f16({a[0]})", 1)


@rule("OpBitcast")
def _bitcast(em, ins):
    from ...spirv.types import Pointer
    rt = em.rtype(ins)
    src_t = em.value_type(ins.operands[0])
    if isinstance(src_t, Pointer):
        p = em.ptr(ins.operands[0], ins)
        src_vals, src_s = [p.addr], [Scalar("ptr", 64)]
    else:
        src_vals, src_s = em.vals(ins.operands[0]), scalars(src_t)
    dst_s = [Scalar("ptr", 64)] if isinstance(rt, Pointer) else scalars(rt)
    # Lay the source bits out little-endian and cut them into the result's leaves.
    pieces = []          # (bit position, width, expr)
    pos = 0
    for v, s in zip(src_vals, src_s):
        w = 64 if s.kind == "ptr" else s.width
        pieces.append((pos, w, bits_of(v, s)))
        pos += w
    out = []
    dpos = 0
    for s in dst_s:
        w = 64 if s.kind == "ptr" else s.width
        parts = []
        for (p0, pw, e) in pieces:
            if p0 <= dpos and dpos + w <= p0 + pw:          # inside one source leaf
                sh = dpos - p0
                parts = [f"(({e}) >> np.uint64({sh}))" if sh else e]
                break
            if dpos <= p0 and p0 + pw <= dpos + w:          # a whole source leaf inside it
                sh = p0 - dpos
                parts.append(f"(({e}) << np.uint64({sh}))" if sh else e)
        if not parts:
            raise SpirvError("OpBitcast between types of different bit layouts", **ins.where())
        expr = " | ".join(parts)
        mask = (1 << w) - 1
        out.append(from_bits(f"(({expr}) & np.uint64({mask}))", s))
        dpos += w
    if dpos != pos:
        raise SpirvError(f"OpBitcast from {pos} bits to {dpos} bits", **ins.where())
    em.define(ins, out)
    if isinstance(rt, Pointer):
        from ..emitter import Ptr
        em.ptrs[ins.result] = Ptr("mem", rt.pointee, rt.storage, addr=em.names[ins.result][0], root=None)
        em.meta.uses_physical = True


# -- bit instructions -----------------------------------------------------------------------------
@rule("OpBitCount")
def _bitcount(em, ins):
    _map(em, ins, lambda s, a, src: f"{nb_type(s)}(popcount64(np.uint64({unsigned(src[0])}({a[0]}))))", 1)


@rule("OpBitReverse")
def _bitreverse(em, ins):
    _map(em, ins, lambda s, a, src: f"{nb_type(s)}(bitreverse({unsigned(src[0])}({a[0]}), {src[0].width}))", 1)


@rule("OpBitFieldInsert")
def _bfi(em, ins):
    base, insert = em.vals(ins.operands[0]), em.vals(ins.operands[1])
    off, cnt = em.val(ins.operands[2]), em.val(ins.operands[3])
    s = scalars(em.rtype(ins))
    em.define(ins, [f"{nb_type(t)}({unsigned(t)}(bfi({unsigned(t)}({b}), {unsigned(t)}({i}), np.int64({off}), np.int64({cnt}))))"
                    for t, b, i in zip(s, base, insert)])


@rule("OpBitFieldSExtract", "OpBitFieldUExtract")
def _bfe(em, ins):
    base = em.vals(ins.operands[0])
    off, cnt = em.val(ins.operands[1]), em.val(ins.operands[2])
    s = scalars(em.rtype(ins))
    fn = "bfe_s" if ins.opname == "OpBitFieldSExtract" else "bfe_u"
    em.define(ins, [f"{nb_type(t)}({unsigned(t)}({fn}({unsigned(t)}({b}), np.int64({off}), np.int64({cnt}), {t.width})))"
                    for t, b in zip(s, base)])


def _extended(em, ins, fn):
    a, b = em.vals(ins.operands[0]), em.vals(ins.operands[1])
    rt = em.rtype(ins)
    s = scalars(rt)
    n = len(a)
    lo, hi = [], []
    for i in range(n):
        t = s[i]
        l, h = fn(t, a[i], b[i])
        lo.append(l)
        hi.append(h)
    em.define(ins, lo + hi)


@rule("OpIAddCarry")
def _iaddcarry(em, ins):
    def f(t, a, b):
        U = unsigned(t)
        r = f"{U}({U}({a}) + {U}({b}))"
        return r, f"{U}(1 if {r} < {U}({a}) else 0)"
    _extended(em, ins, f)


@rule("OpISubBorrow")
def _isubborrow(em, ins):
    def f(t, a, b):
        U = unsigned(t)
        return f"{U}({U}({a}) - {U}({b}))", f"{U}(1 if {U}({a}) < {U}({b}) else 0)"
    _extended(em, ins, f)


@rule("OpUMulExtended", "OpSMulExtended")
def _mulext(em, ins):
    signed_ = ins.opname == "OpSMulExtended"

    def f(t, a, b):
        T = nb_type(t)
        if t.width <= 32:
            wide = f"(np.int64({signed(t)}({a})) * np.int64({signed(t)}({b})))" if signed_ else \
                   f"(np.uint64({unsigned(t)}({a})) * np.uint64({unsigned(t)}({b})))"
            return f"{T}({wide})", f"{T}({wide} >> {t.width})"
        fn = "smulhi64" if signed_ else "umulhi64"
        return f"{T}({T}({a}) * {T}({b}))", f"{T}({fn}({a}, {b}))"
    _extended(em, ins, f)
