"""Core arithmetic, bit, logical, comparison and conversion instructions, component by component.

Integers are LLVM integers of their SPIR-V width (signedness is in the instructions); every
result wraps like two's complement hardware. float16/bfloat16 values are held as float values the
format can represent: one float operation rounded once to the format is exact for + - * / sqrt.
Where SPIR-V leaves a result undefined (division by zero, out-of-range shifts and conversions),
the rules give the common hardware answer docs/guide/numerics.md tabulates, never LLVM poison.
"""
from __future__ import annotations

from ...errors import SpirvError
from ...spirv.types import Pointer, Scalar
from ..llvm import ty
from ..meta import Ptr
from . import rule
from .common import bits_of, check_leaves, from_bits, intrinsic, round_from64, round_to, scalars


def _map(em, ins, fn, nargs):
    """Apply fn(result scalar, operand leaves, operand scalars) -> operand to every component."""
    rt = em.rtype(ins)
    out_s = scalars(rt)
    args = [em.vals(x) for x in ins.operands[:nargs]]
    arg_s = [scalars(em.value_type(x)) for x in ins.operands[:nargs]]
    for a in args[1:]:
        check_leaves(ins, args[0], a)
    em.define(ins, [fn(s, [a[i] for a in args], [t[i] for t in arg_s]) for i, s in enumerate(out_s)])


def _binary(opcode):
    def lower(em, ins):
        _map(em, ins, lambda s, a, src: em.op(f"{opcode} {ty(src[0])} {a[0]}, {a[1]}"), 2)
    return lower


for _op, _ir in {"OpIAdd": "add", "OpISub": "sub", "OpIMul": "mul", "OpBitwiseAnd": "and",
                 "OpBitwiseOr": "or", "OpBitwiseXor": "xor"}.items():
    rule(_op)(_binary(_ir))


def _shift(opcode):
    # Shift counts are taken modulo the width (the common hardware answer; SPIR-V leaves counts
    # >= width undefined, and LLVM makes them poison).
    def f(em, s, a, src):
        t = ty(src[0])
        n = em.op(f"{'trunc' if src[1].width > src[0].width else 'zext'} {ty(src[1])} {a[1]} to {t}") \
            if src[1].width != src[0].width else a[1]
        n = em.op(f"and {t} {n}, {src[0].width - 1}")
        return em.op(f"{opcode} {t} {a[0]}, {n}")

    def lower(em, ins):
        _map(em, ins, lambda s, a, src: f(em, s, a, src), 2)
    return lower


rule("OpShiftLeftLogical")(_shift("shl"))
rule("OpShiftRightLogical")(_shift("lshr"))
rule("OpShiftRightArithmetic")(_shift("ashr"))


def _division(kind):
    """UDiv/SDiv/UMod/SRem/SMod: x/0 is all ones (unsigned) or -1 (signed), INT_MIN/-1 is INT_MIN,
    a remainder or modulus by 0 is x (none of these may reach LLVM, where they are undefined)."""
    def f(em, a, b, s):
        t = ty(s)
        z = em.op(f"icmp eq {t} {b}, 0")
        if kind in ("udiv", "urem"):
            safe = em.op(f"select i1 {z}, {t} 1, {t} {b}")
            r = em.op(f"{kind} {t} {a}, {safe}")
            return em.op(f"select i1 {z}, {t} {-1 if kind == 'udiv' else a}, {t} {r}")
        mn = -(1 << (s.width - 1))
        ovf = em.op(f"and i1 {em.op(f'icmp eq {t} {a}, {mn}')}, {em.op(f'icmp eq {t} {b}, -1')}")
        bad = em.op(f"or i1 {z}, {ovf}")
        safe = em.op(f"select i1 {bad}, {t} 1, {t} {b}")
        if kind == "sdiv":
            r = em.op(f"sdiv {t} {a}, {safe}")
            r = em.op(f"select i1 {ovf}, {t} {mn}, {t} {r}")
            return em.op(f"select i1 {z}, {t} -1, {t} {r}")
        r = em.op(f"srem {t} {a}, {safe}")                  # INT_MIN rem -1 = 0: srem by 1 gives 0
        if kind == "smod":                                  # the sign of the divisor
            nz = em.op(f"icmp ne {t} {r}, 0")
            x = em.op(f"xor {t} {r}, {b}")
            diff = em.op(f"icmp slt {t} {x}, 0")
            adj = em.op(f"and i1 {nz}, {diff}")
            r2 = em.op(f"add {t} {r}, {b}")
            r = em.op(f"select i1 {adj}, {t} {r2}, {t} {r}")
        return em.op(f"select i1 {z}, {t} {a}, {t} {r}")

    def lower(em, ins):
        _map(em, ins, lambda s, a, src: f(em, a[0], a[1], src[0]), 2)
    return lower


for _op, _k in {"OpUDiv": "udiv", "OpSDiv": "sdiv", "OpUMod": "urem", "OpSRem": "srem", "OpSMod": "smod"}.items():
    rule(_op)(_division(_k))


def _float_binary(opcode):
    def lower(em, ins):
        def f(s, a, src):
            return round_to(em, em.op(f"{opcode} {ty(src[0])} {a[0]}, {a[1]}"), s, ty(src[0]))
        _map(em, ins, f, 2)
    return lower


for _op, _ir in {"OpFAdd": "fadd", "OpFSub": "fsub", "OpFMul": "fmul", "OpFDiv": "fdiv",
                 "OpFRem": "frem"}.items():
    rule(_op)(_float_binary(_ir))


@rule("OpFMod")
def _fmod(em, ins):
    """The result takes the sign of the divisor."""
    def f(s, a, src):
        t = ty(src[0])
        r = em.op(f"frem {t} {a[0]}, {a[1]}")
        nz = em.op(f"fcmp one {t} {r}, 0.0")
        rn = em.op(f"fcmp olt {t} {r}, 0.0")
        bn = em.op(f"fcmp olt {t} {a[1]}, 0.0")
        diff = em.op(f"xor i1 {rn}, {bn}")
        adj = em.op(f"and i1 {nz}, {diff}")
        r2 = em.op(f"fadd {t} {r}, {a[1]}")
        return round_to(em, em.op(f"select i1 {adj}, {t} {r2}, {t} {r}"), s, t)
    _map(em, ins, f, 2)


_COMPARE = {
    "OpIEqual": "icmp eq", "OpINotEqual": "icmp ne", "OpUGreaterThan": "icmp ugt",
    "OpUGreaterThanEqual": "icmp uge", "OpULessThan": "icmp ult", "OpULessThanEqual": "icmp ule",
    "OpSGreaterThan": "icmp sgt", "OpSGreaterThanEqual": "icmp sge", "OpSLessThan": "icmp slt",
    "OpSLessThanEqual": "icmp sle",
    "OpFOrdEqual": "fcmp oeq", "OpFOrdNotEqual": "fcmp one", "OpFOrdLessThan": "fcmp olt",
    "OpFOrdGreaterThan": "fcmp ogt", "OpFOrdLessThanEqual": "fcmp ole", "OpFOrdGreaterThanEqual": "fcmp oge",
    "OpFUnordEqual": "fcmp ueq", "OpFUnordNotEqual": "fcmp une", "OpFUnordLessThan": "fcmp ult",
    "OpFUnordGreaterThan": "fcmp ugt", "OpFUnordLessThanEqual": "fcmp ule",
    "OpFUnordGreaterThanEqual": "fcmp uge",
    "OpLogicalEqual": "icmp eq", "OpLogicalNotEqual": "icmp ne", "OpLogicalAnd": "and",
    "OpLogicalOr": "or",
}


def _compare(opcode):
    def lower(em, ins):
        _map(em, ins, lambda s, a, src: em.op(f"{opcode} {ty(src[0])} {a[0]}, {a[1]}"), 2)
    return lower


for _op, _ir in _COMPARE.items():
    rule(_op)(_compare(_ir))


@rule("OpLogicalNot")
def _logical_not(em, ins):
    _map(em, ins, lambda s, a, _: em.op(f"xor i1 {a[0]}, true"), 1)


@rule("OpNot")
def _not(em, ins):
    _map(em, ins, lambda s, a, _: em.op(f"xor {ty(s)} {a[0]}, -1"), 1)


@rule("OpSNegate")
def _snegate(em, ins):
    _map(em, ins, lambda s, a, _: em.op(f"sub {ty(s)} 0, {a[0]}"), 1)


@rule("OpFNegate")
def _fnegate(em, ins):
    _map(em, ins, lambda s, a, _: em.op(f"fneg {ty(s)} {a[0]}"), 1)


def _fclass(test):
    """IsNan / IsInf / IsFinite / IsNormal on the magnitude (fabs), ordered compares."""
    def lower(em, ins):
        def f(s, a, src):
            t = ty(src[0])
            if test == "nan":
                return em.op(f"fcmp uno {t} {a[0]}, {a[0]}")
            m = em.op(f"call {t} {intrinsic(em, f'llvm.fabs.{_fname(t)}', t, [t])}({t} {a[0]})")
            inf = "0x7FF0000000000000"
            if test == "inf":
                return em.op(f"fcmp oeq {t} {m}, {inf}")
            if test == "finite":
                return em.op(f"fcmp olt {t} {m}, {inf}")
            tiny = {16: 6.103515625e-05, 32: 1.1754943508222875e-38, 64: 2.2250738585072014e-308}[src[0].width]
            from ..llvm import float_lit
            lo = em.op(f"fcmp oge {t} {m}, {float_lit(tiny, 64 if t == 'double' else 32)}")
            hi = em.op(f"fcmp olt {t} {m}, {inf}")
            return em.op(f"and i1 {lo}, {hi}")
        _map(em, ins, f, 1)
    return lower


def _fname(t: str) -> str:
    return "f64" if t == "double" else "f32"


rule("OpIsNan")(_fclass("nan"))
rule("OpIsInf")(_fclass("inf"))
rule("OpIsFinite")(_fclass("finite"))
rule("OpIsNormal")(_fclass("normal"))


@rule("OpSelect")
def _select(em, ins):
    rt = em.rtype(ins)
    if isinstance(rt, Pointer):
        pa, pb = em.ptr(ins.operands[1], ins), em.ptr(ins.operands[2], ins)
        if pa.kind != "mem" or pb.kind != "mem":
            raise SpirvError("OpSelect of pointers to variables that are not in memory", **ins.where())
        c = em.val(ins.operands[0])
        addr = em.op(f"select i1 {c}, i64 {pa.addr}, i64 {pb.addr}")
        root = pa.root if pa.root == pb.root else None
        em.define_ptr(ins.result, Ptr("mem", rt.pointee, rt.storage, addr=addr, root=root,
                                      root_name=pa.root_name if root else "",
                                      descriptor=root is not None and pa.descriptor))
        return
    c = em.vals(ins.operands[0])
    a = em.vals(ins.operands[1])
    b = em.vals(ins.operands[2])
    if len(c) == 1:
        c = c * len(a)
    em.define(ins, [em.op(f"select i1 {cc}, {ty(s)} {x}, {ty(s)} {y}")
                    for cc, x, y, s in zip(c, a, b, scalars(rt))])


@rule("OpAny", "OpAll")
def _any_all(em, ins):
    v = em.vals(ins.operands[0])
    acc = v[0]
    for x in v[1:]:
        acc = em.op(f"{'or' if ins.opname == 'OpAny' else 'and'} i1 {acc}, {x}")
    em.define(ins, [acc])


# -- conversions ----------------------------------------------------------------------------------
def _int_convert(signed):
    def lower(em, ins):
        def f(s, a, src):
            return em.cast_int(a[0], src[0].width, s.width, signed)
        _map(em, ins, f, 1)
    return lower


rule("OpUConvert")(_int_convert(False))
rule("OpSConvert")(_int_convert(True))


@rule("OpFConvert")
def _fconvert(em, ins):
    # SPV_EXT_float8: with SaturatedToLargestFloat8NormalConversionEXT an out-of-range value
    # becomes the largest finite fp8 value of its sign instead of NaN (E4M3) or inf (E5M2).
    sat = em.m.has_decoration(ins.result, "SaturatedToLargestFloat8NormalConversionEXT")

    def f(s, a, src):
        t = ty(src[0])
        if s.encoding in ("e4m3", "e5m2"):
            tag = "f64" if t == "double" else "f32"
            b = em.lib_scalar(f"jitcoop.kernels.formats:{tag}_to_{s.encoding}",
                              [(tag, a[0]), ("b", "true" if sat else "false")], "i8")
            return em.lib_scalar(f"jitcoop.kernels.formats:{s.encoding}_to_f32", [("u8", b)], "float")
        return round_to(em, a[0], s, t)
    _map(em, ins, f, 1)


def _f_to_int(signed):
    """Saturating, NaN -> 0, truncating toward zero (LLVM's fpto[su]i.sat)."""
    def lower(em, ins):
        def f(s, a, src):
            t = ty(src[0])
            name = f"llvm.fpto{'s' if signed else 'u'}i.sat.i{s.width}.{_fname(t)}"
            return em.op(f"call i{s.width} {intrinsic(em, name, f'i{s.width}', [t])}({t} {a[0]})")
        _map(em, ins, f, 1)
    return lower


rule("OpConvertFToS")(_f_to_int(True))
rule("OpConvertFToU")(_f_to_int(False))


def _int_to_f(signed):
    def lower(em, ins):
        def f(s, a, src):
            conv = "sitofp" if signed else "uitofp"
            if s.width == 32 and not s.encoding:
                return em.op(f"{conv} {ty(src[0])} {a[0]} to float")
            if s.width == 64:
                return em.op(f"{conv} {ty(src[0])} {a[0]} to double")
            # small formats: exactly through a double when the integer fits its 53 bits, one
            # rounding to the format
            d = em.op(f"{conv} {ty(src[0])} {a[0]} to double")
            return round_from64(em, d, s)
        _map(em, ins, f, 1)
    return lower


rule("OpConvertSToF")(_int_to_f(True))
rule("OpConvertUToF")(_int_to_f(False))


@rule("OpQuantizeToF16")
def _quantize(em, ins):
    """Round to float16; results too small to be normal become zero of the same sign."""
    def f(s, a, _):
        r = em.op(f"call float {em.helper('round_f16')}(float {a[0]})")
        m = em.op(f"call float {intrinsic(em, 'llvm.fabs.f32', 'float', ['float'])}(float {r})")
        small = em.op(f"fcmp olt float {m}, 0x3F10000000000000")
        z = em.op(f"call float {intrinsic(em, 'llvm.copysign.f32', 'float', ['float', 'float'])}(float 0.0, float {a[0]})")
        return em.op(f"select i1 {small}, float {z}, float {r}")
    _map(em, ins, f, 1)


@rule("OpBitcast")
def _bitcast(em, ins):
    rt = em.rtype(ins)
    src_t = em.value_type(ins.operands[0])
    if isinstance(src_t, Pointer):
        src_vals, src_s = [em.ptr(ins.operands[0], ins).addr], [Scalar("ptr", 64)]
    else:
        src_vals, src_s = em.vals(ins.operands[0]), scalars(src_t)
    dst_s = [Scalar("ptr", 64)] if isinstance(rt, Pointer) else scalars(rt)
    # Lay the source bits out little-endian and cut them into the result's leaves.
    pieces = []          # (bit position, width, i64 bits)
    pos = 0
    for v, s in zip(src_vals, src_s):
        w = 64 if s.kind == "ptr" else s.width
        pieces.append((pos, w, bits_of(em, v, s)))
        pos += w
    out = []
    dpos = 0
    for s in dst_s:
        w = 64 if s.kind == "ptr" else s.width
        acc = None
        for (p0, pw, e) in pieces:
            if p0 <= dpos and dpos + w <= p0 + pw:          # inside one source leaf
                acc = em.op(f"lshr i64 {e}, {dpos - p0}") if dpos > p0 else e
                break
            if dpos <= p0 and p0 + pw <= dpos + w:          # a whole source leaf inside it
                part = em.op(f"shl i64 {e}, {p0 - dpos}") if p0 > dpos else e
                acc = part if acc is None else em.op(f"or i64 {acc}, {part}")
        if acc is None:
            raise SpirvError("OpBitcast between types of different bit layouts", **ins.where())
        out.append(from_bits(em, acc, s))
        dpos += w
    if dpos != pos:
        raise SpirvError(f"OpBitcast from {pos} bits to {dpos} bits", **ins.where())
    if isinstance(rt, Pointer):
        em.define_ptr(ins.result, Ptr("mem", rt.pointee, rt.storage, addr=out[0], root=None))
        em.meta.uses_physical = True
        return
    em.define(ins, out)


# -- bit instructions -----------------------------------------------------------------------------
def _unary_intrinsic(name):
    def lower(em, ins):
        def f(s, a, src):
            t = ty(src[0])
            r = em.op(f"call {t} {intrinsic(em, f'llvm.{name}.{t}', t, [t])}({t} {a[0]})")
            return em.cast_int(r, src[0].width, s.width, False)
        _map(em, ins, f, 1)
    return lower


rule("OpBitCount")(_unary_intrinsic("ctpop"))
rule("OpBitReverse")(_unary_intrinsic("bitreverse"))


def _count_mask(em, t: str, width: int, cnt: str) -> str:
    """(1 << cnt) - 1 in type t for 0 <= cnt, all ones from cnt >= width on (no poison shifts)."""
    big = em.op(f"icmp uge {t} {cnt}, {width}")
    c = em.op(f"select i1 {big}, {t} 0, {t} {cnt}")
    one = em.op(f"shl {t} 1, {c}")
    m = em.op(f"sub {t} {one}, 1")
    return em.op(f"select i1 {big}, {t} -1, {t} {m}")


def _as(em, v, src_s, t_width):
    return em.cast_int(v, src_s.width, t_width, False)


@rule("OpBitFieldInsert")
def _bfi(em, ins):
    base, insert = em.vals(ins.operands[0]), em.vals(ins.operands[1])
    off_s, cnt_s = em.value_type(ins.operands[2]), em.value_type(ins.operands[3])
    off0, cnt0 = em.val(ins.operands[2]), em.val(ins.operands[3])
    out = []
    for s, b, i in zip(scalars(em.rtype(ins)), base, insert):
        t, w = ty(s), s.width
        off = em.op(f"and {t} {_as(em, off0, off_s, w)}, {w - 1}")
        cnt = _as(em, cnt0, cnt_s, w)
        mask = em.op(f"shl {t} {_count_mask(em, t, w, cnt)}, {off}")
        keep = em.op(f"and {t} {b}, {em.op(f'xor {t} {mask}, -1')}")
        ins_ = em.op(f"and {t} {em.op(f'shl {t} {i}, {off}')}, {mask}")
        out.append(em.op(f"or {t} {keep}, {ins_}"))
    em.define(ins, out)


@rule("OpBitFieldSExtract", "OpBitFieldUExtract")
def _bfe(em, ins):
    base = em.vals(ins.operands[0])
    off_s, cnt_s = em.value_type(ins.operands[1]), em.value_type(ins.operands[2])
    off0, cnt0 = em.val(ins.operands[1]), em.val(ins.operands[2])
    signed = ins.opname == "OpBitFieldSExtract"
    out = []
    for s, b in zip(scalars(em.rtype(ins)), base):
        t, w = ty(s), s.width
        off = em.op(f"and {t} {_as(em, off0, off_s, w)}, {w - 1}")
        cnt = _as(em, cnt0, cnt_s, w)
        zero = em.op(f"icmp eq {t} {cnt}, 0")
        if signed:
            # (b >> off) << (w - cnt) >> (w - cnt), arithmetic: the field's top bit extended;
            # the shift stays in range whatever cnt is (undefined beyond the width)
            big = em.op(f"icmp uge {t} {cnt}, {w}")
            top = em.op(f"sub {t} {w}, {cnt}")
            topc = em.op(f"select i1 {big}, {t} 0, {t} {top}")
            sh = em.op(f"lshr {t} {b}, {off}")
            up = em.op(f"shl {t} {sh}, {topc}")
            r = em.op(f"ashr {t} {up}, {topc}")
        else:
            sh = em.op(f"lshr {t} {b}, {off}")
            r = em.op(f"and {t} {sh}, {_count_mask(em, t, w, cnt)}")
        out.append(em.op(f"select i1 {zero}, {t} 0, {t} {r}"))
    em.define(ins, out)


def _extended(em, ins, fn):
    a, b = em.vals(ins.operands[0]), em.vals(ins.operands[1])
    lo, hi = [], []
    for t, x, y in zip(scalars(em.rtype(ins)), a, b):
        l, h = fn(t, x, y)
        lo.append(l)
        hi.append(h)
    em.define(ins, lo + hi)


@rule("OpIAddCarry")
def _iaddcarry(em, ins):
    def f(s, a, b):
        t = ty(s)
        r = em.op(f"add {t} {a}, {b}")
        c = em.op(f"icmp ult {t} {r}, {a}")
        return r, em.op(f"zext i1 {c} to {t}")
    _extended(em, ins, f)


@rule("OpISubBorrow")
def _isubborrow(em, ins):
    def f(s, a, b):
        t = ty(s)
        c = em.op(f"icmp ult {t} {a}, {b}")
        return em.op(f"sub {t} {a}, {b}"), em.op(f"zext i1 {c} to {t}")
    _extended(em, ins, f)


@rule("OpUMulExtended", "OpSMulExtended")
def _mulext(em, ins):
    ext = "sext" if ins.opname == "OpSMulExtended" else "zext"

    def f(s, a, b):
        t, w = ty(s), s.width
        wt = f"i{2 * w}"
        p = em.op(f"mul {wt} {em.op(f'{ext} {t} {a} to {wt}')}, {em.op(f'{ext} {t} {b} to {wt}')}")
        return em.op(f"trunc {wt} {p} to {t}"), em.op(f"trunc {wt} {em.op(f'lshr {wt} {p}, {w}')} to {t}")
    _extended(em, ins, f)
