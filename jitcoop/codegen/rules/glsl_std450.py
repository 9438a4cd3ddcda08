"""GLSL.std.450 extended instructions. Floating-point functions of float16/float32 are computed in
float64 (the C library's functions and LLVM's intrinsics; Exp: jitcoop's own, which vector code
can run G at a time) and rounded once to the result type; GPUs are allowed a few ulp here, so
this is as good as any."""
from __future__ import annotations

from ...spirv.types import Scalar
from ..llvm import float_lit, ty
from . import ext_rule
from .common import intrinsic, round_from64, round_to, scalars, widen

GLSL = "GLSL.std.450"
_F64 = Scalar("float", 64, True)


def _map(em, ins, args, fn):
    """fn(result scalar, operand leaves) per component; a scalar operand is used for every one."""
    vals = [em.vals(a) for a in args]
    em.define(ins, [fn(s, [v[i] if len(v) > 1 else v[0] for v in vals]) for i, s in enumerate(scalars(em.rtype(ins)))])


def _d(em, x: str, s) -> str:
    return widen(em, x, s)


def _libm(em, name: str, nargs: int = 1) -> str:
    return em.declare(f"@{name}", f"declare double @{name}({', '.join(['double'] * nargs)})")


def _call(em, fn: str, *xs) -> str:
    return em.op(f"call double {fn}({', '.join('double ' + x for x in xs)})")


def _ll(em, name: str, nargs: int = 1) -> str:
    return intrinsic(em, f"llvm.{name}.f64", "double", ["double"] * nargs)


def _c(x: float) -> str:
    return float_lit(x, 64)


def _float_fn(build):
    """A float function computed on doubles: build(em, [double operands]) -> double."""
    def lower(em, ins, args):
        src = [scalars(em.value_type(a)) for a in args]

        def f(s, a):
            ds = [_d(em, x, st[0]) for x, st in zip(a, src)]
            return round_from64(em, build(em, ds), s)
        _map(em, ins, args, f)
    return lower


def _f(em, op, a, b):
    return em.op(f"{op} double {a}, {b}")


def _fmin(em, a, b):
    """GLSL FMin/NMin: a NaN operand loses; -0 is below +0 (LLVM's minimumnum)."""
    return _call(em, _ll(em, "minimumnum", 2), a, b)


def _fmax(em, a, b):
    return _call(em, _ll(em, "maximumnum", 2), a, b)


def _fsign(em, x):
    pos = em.op(f"fcmp ogt double {x}, 0.0")
    neg = em.op(f"fcmp olt double {x}, 0.0")
    z = em.op(f"fmul double {x}, 0.0")                      # keeps the sign of zero, NaN stays NaN
    r = em.op(f"select i1 {neg}, double -1.0, double {z}")
    return em.op(f"select i1 {pos}, double 1.0, double {r}")


def _smoothstep(em, e0, e1, x):
    t = em.op(f"fdiv double {em.op(f'fsub double {x}, {e0}')}, {em.op(f'fsub double {e1}, {e0}')}")
    t = _fmin(em, _fmax(em, t, "0.0"), "1.0")
    k = em.op(f"fsub double 3.0, {em.op(f'fmul double 2.0, {t}')}")
    return em.op(f"fmul double {em.op(f'fmul double {t}, {t}')}, {k}")


_FLOAT = {
    "Round": lambda em, a: _call(em, _ll(em, "round"), a[0]),
    "RoundEven": lambda em, a: _call(em, _ll(em, "roundeven"), a[0]),
    "Trunc": lambda em, a: _call(em, _ll(em, "trunc"), a[0]),
    "FAbs": lambda em, a: _call(em, _ll(em, "fabs"), a[0]),
    "FSign": lambda em, a: _fsign(em, a[0]),
    "Floor": lambda em, a: _call(em, _ll(em, "floor"), a[0]),
    "Ceil": lambda em, a: _call(em, _ll(em, "ceil"), a[0]),
    "Fract": lambda em, a: em.op(f"fsub double {a[0]}, {_call(em, _ll(em, 'floor'), a[0])}"),
    "Radians": lambda em, a: em.op(f"fmul double {a[0]}, {_c(0.017453292519943295)}"),
    "Degrees": lambda em, a: em.op(f"fmul double {a[0]}, {_c(57.29577951308232)}"),
    "Sqrt": lambda em, a: _call(em, _ll(em, "sqrt"), a[0]),
    "InverseSqrt": lambda em, a: em.op(f"fdiv double 1.0, {_call(em, _ll(em, 'sqrt'), a[0])}"),
    "FMin": lambda em, a: _fmin(em, a[0], a[1]),
    "FMax": lambda em, a: _fmax(em, a[0], a[1]),
    "NMin": lambda em, a: _fmin(em, a[0], a[1]),
    "NMax": lambda em, a: _fmax(em, a[0], a[1]),
    "FClamp": lambda em, a: _fmin(em, _fmax(em, a[0], a[1]), a[2]),
    "NClamp": lambda em, a: _fmin(em, _fmax(em, a[0], a[1]), a[2]),
    "FMix": lambda em, a: _f(em, "fadd", _f(em, "fmul", a[0], _f(em, "fsub", "1.0", a[2])), _f(em, "fmul", a[1], a[2])),
    "Step": lambda em, a: em.op(f"select i1 {em.op(f'fcmp olt double {a[1]}, {a[0]}')}, double 0.0, double 1.0"),
    "SmoothStep": lambda em, a: _smoothstep(em, a[0], a[1], a[2]),
    "Fma": lambda em, a: em.op(f"fadd double {em.op(f'fmul double {a[0]}, {a[1]}')}, {a[2]}"),
}
for _n, _b in _FLOAT.items():
    ext_rule(GLSL, _n)(_float_fn(_b))

# The C library's functions (LLVM would call them anyway).
for _n, _c_name, _k in (("Sin", "sin", 1), ("Cos", "cos", 1), ("Tan", "tan", 1), ("Asin", "asin", 1),
                        ("Acos", "acos", 1), ("Atan", "atan", 1), ("Sinh", "sinh", 1), ("Cosh", "cosh", 1),
                        ("Tanh", "tanh", 1), ("Asinh", "asinh", 1), ("Acosh", "acosh", 1),
                        ("Atanh", "atanh", 1), ("Atan2", "atan2", 2), ("Pow", "pow", 2),
                        ("Log", "log", 1), ("Exp2", "exp2", 1), ("Log2", "log2", 1)):
    ext_rule(GLSL, _n)(_float_fn(lambda em, a, _c_name=_c_name, _k=_k: _call(em, _libm(em, _c_name, _k), *a[:_k])))


@ext_rule(GLSL, "Exp")
def _exp(em, ins, args):
    """float16 and float32 results: jitcoop's own e^x (helpers.exp_f64: the same bits in every
    invocation and on every host, in vector code too: per-element operations, lane groups);
    float64 results: the C library's exp (within about half an ulp, where jitcoop's is within
    about one)."""
    src = scalars(em.value_type(args[0]))

    def f(s, a):
        x = _d(em, a[0], src[0])
        if s.width == 64:
            return _call(em, _libm(em, "exp"), x)
        return round_from64(em, em.op(f"call double {em.helper('exp_f64')}(double {x})"), s)
    _map(em, ins, args, f)


@ext_rule(GLSL, "Ldexp")
def _ldexp(em, ins, args):
    x, e = em.vals(args[0]), em.vals(args[1])
    xs, es = scalars(em.value_type(args[0])), scalars(em.value_type(args[1]))
    fn = em.declare("@ldexp", "declare double @ldexp(double, i32)")
    out = []
    for a, b, t, st, se in zip(x, e if len(e) > 1 else e * len(x), scalars(em.rtype(ins)), xs,
                               es if len(es) > 1 else es * len(x)):
        k = em.cast_int(b, se.width, 64, True)
        k = em.op(f"call i64 {intrinsic(em, 'llvm.smax.i64', 'i64', ['i64', 'i64'])}(i64 {k}, i64 -2000)")
        k = em.op(f"call i64 {intrinsic(em, 'llvm.smin.i64', 'i64', ['i64', 'i64'])}(i64 {k}, i64 2000)")
        r = em.op(f"call double {fn}(double {_d(em, a, st)}, i32 {em.op(f'trunc i64 {k} to i32')})")
        out.append(round_from64(em, r, t))
    em.define(ins, out)


def _int(build, signed):
    def lower(em, ins, args):
        _map(em, ins, args, lambda s, a: build(em, ty(s), a))
    return lower


def _iminmax(name):
    return lambda em, t, a: em.op(f"call {t} {intrinsic(em, f'llvm.{name}.{t}', t, [t, t])}({t} {a[0]}, {t} {a[1]})")


def _iclamp(lo, hi):
    def build(em, t, a):
        x = _iminmax(lo)(em, t, [a[0], a[1]])
        return _iminmax(hi)(em, t, [x, a[2]])
    return build


def _ssign(em, t, a):
    pos = em.op(f"icmp sgt {t} {a[0]}, 0")
    neg = em.op(f"icmp slt {t} {a[0]}, 0")
    r = em.op(f"select i1 {neg}, {t} -1, {t} 0")
    return em.op(f"select i1 {pos}, {t} 1, {t} {r}")


for _n, _b, _s in (("SAbs", lambda em, t, a: em.op(f"call {t} {intrinsic(em, f'llvm.abs.{t}', t, [t, 'i1'])}({t} {a[0]}, i1 false)"), True),
                   ("SSign", _ssign, True),
                   ("UMin", _iminmax("umin"), False), ("SMin", _iminmax("smin"), True),
                   ("UMax", _iminmax("umax"), False), ("SMax", _iminmax("smax"), True),
                   ("UClamp", _iclamp("umax", "umin"), False), ("SClamp", _iclamp("smax", "smin"), True)):
    ext_rule(GLSL, _n)(_int(_b, _s))


def _find(kind):
    """FindILsb / FindUMsb / FindSMsb: -1 where there is no such bit."""
    def lower(em, ins, args):
        src = scalars(em.value_type(args[0]))
        out = []
        for s, a, st in zip(scalars(em.rtype(ins)), em.vals(args[0]), src):
            t, w = ty(st), st.width
            if kind == "lsb":
                n = em.op(f"call {t} {intrinsic(em, f'llvm.cttz.{t}', t, [t, 'i1'])}({t} {a}, i1 false)")
                r = em.op(f"select i1 {em.op(f'icmp eq {t} {a}, 0')}, {t} -1, {t} {n}")
            else:
                x = a
                if kind == "smsb":       # the most significant bit that differs from the sign bit
                    inv = em.op(f"xor {t} {a}, -1")
                    x = em.op(f"select i1 {em.op(f'icmp slt {t} {a}, 0')}, {t} {inv}, {t} {a}")
                n = em.op(f"call {t} {intrinsic(em, f'llvm.ctlz.{t}', t, [t, 'i1'])}({t} {x}, i1 false)")
                r = em.op(f"sub {t} {w - 1}, {n}")           # -1 for zero
            out.append(em.cast_int(r, w, s.width, True))
        em.define(ins, out)
    return lower


ext_rule(GLSL, "FindILsb")(_find("lsb"))
ext_rule(GLSL, "FindUMsb")(_find("umsb"))
ext_rule(GLSL, "FindSMsb")(_find("smsb"))


@ext_rule(GLSL, "IMix")
def _imix(em, ins, args):
    _map(em, ins, args, lambda s, a: em.op(f"select i1 {a[2]}, {ty(s)} {a[1]}, {ty(s)} {a[0]}"))


def _dot64(em, a, b, sa, sb) -> str:
    acc = None
    for x, y in zip(a, b):
        p = em.op(f"fmul double {_d(em, x, sa)}, {_d(em, y, sb)}")
        acc = p if acc is None else em.op(f"fadd double {acc}, {p}")
    return acc


@ext_rule(GLSL, "Length")
def _length(em, ins, args):
    v = em.vals(args[0])
    st = scalars(em.value_type(args[0]))[0]
    em.define(ins, [round_from64(em, _call(em, _ll(em, "sqrt"), _dot64(em, v, v, st, st)), scalars(em.rtype(ins))[0])])


@ext_rule(GLSL, "Distance")
def _distance(em, ins, args):
    a, b = em.vals(args[0]), em.vals(args[1])
    st = scalars(em.value_type(args[0]))[0]
    d = [em.op(f"fsub double {_d(em, x, st)}, {_d(em, y, st)}") for x, y in zip(a, b)]
    dd = _dot64(em, d, d, _F64, _F64)
    em.define(ins, [round_from64(em, _call(em, _ll(em, "sqrt"), dd), scalars(em.rtype(ins))[0])])


@ext_rule(GLSL, "Normalize")
def _normalize(em, ins, args):
    v = em.vals(args[0])
    st = scalars(em.value_type(args[0]))[0]
    n = _call(em, _ll(em, "sqrt"), _dot64(em, v, v, st, st))
    em.define(ins, [round_from64(em, em.op(f"fdiv double {_d(em, x, st)}, {n}"), t)
                    for x, t in zip(v, scalars(em.rtype(ins)))])


@ext_rule(GLSL, "Cross")
def _cross(em, ins, args):
    a, b = em.vals(args[0]), em.vals(args[1])
    s = scalars(em.rtype(ins))
    t = ty(s[0])

    def term(i, j):
        return em.op(f"fsub {t} {em.op(f'fmul {t} {a[i]}, {b[j]}')}, {em.op(f'fmul {t} {b[i]}, {a[j]}')}")
    em.define(ins, [round_to(em, x, st, t) for x, st in zip((term(1, 2), term(2, 0), term(0, 1)), s)])


@ext_rule(GLSL, "Reflect")
def _reflect(em, ins, args):
    i, n = em.vals(args[0]), em.vals(args[1])
    st = scalars(em.value_type(args[0]))[0]
    d = _dot64(em, n, i, st, st)
    d2 = em.op(f"fmul double 2.0, {d}")
    em.define(ins, [round_from64(em, em.op(f"fsub double {_d(em, x, st)}, {em.op(f'fmul double {d2}, {_d(em, y, st)}')}"), t)
                    for x, y, t in zip(i, n, scalars(em.rtype(ins)))])


@ext_rule(GLSL, "Refract")
def _refract(em, ins, args):
    i, n = em.vals(args[0]), em.vals(args[1])
    st = scalars(em.value_type(args[0]))[0]
    eta = _d(em, em.val(args[2]), scalars(em.value_type(args[2]))[0])
    d = _dot64(em, n, i, st, st)
    e2 = em.op(f"fmul double {eta}, {eta}")
    k = _f(em, "fsub", "1.0", _f(em, "fmul", e2, _f(em, "fsub", "1.0", _f(em, "fmul", d, d))))
    neg = em.op(f"fcmp olt double {k}, 0.0")
    c = em.op(f"fadd double {em.op(f'fmul double {eta}, {d}')}, {_call(em, _ll(em, 'sqrt'), k)}")
    out = []
    for x, y, t in zip(i, n, scalars(em.rtype(ins))):
        r = em.op(f"fsub double {em.op(f'fmul double {eta}, {_d(em, x, st)}')}, {em.op(f'fmul double {c}, {_d(em, y, st)}')}")
        out.append(round_from64(em, em.op(f"select i1 {neg}, double 0.0, double {r}"), t))
    em.define(ins, out)


@ext_rule(GLSL, "FaceForward")
def _faceforward(em, ins, args):
    n, i, nref = em.vals(args[0]), em.vals(args[1]), em.vals(args[2])
    st = scalars(em.value_type(args[0]))[0]
    d = _dot64(em, nref, i, st, st)
    neg = em.op(f"fcmp olt double {d}, 0.0")
    t = ty(st)
    em.define(ins, [em.op(f"select i1 {neg}, {t} {x}, {t} {em.op(f'fneg {t} {x}')}") for x in n])


def _trunc_parts(em, x, s):
    """(fraction, whole part) of a float leaf, in its own type."""
    t = ty(s)
    w = em.op(f"call {t} {intrinsic(em, f'llvm.trunc.{_fn(t)}', t, [t])}({t} {x})")
    return em.op(f"fsub {t} {x}, {w}"), w


def _fn(t):
    return "f64" if t == "double" else "f32"


@ext_rule(GLSL, "Modf")
def _modf(em, ins, args):
    # Returns the fraction; the whole part goes through the pointer operand.
    from .core_memory import _write
    s = scalars(em.rtype(ins))
    parts = [_trunc_parts(em, v, t) for v, t in zip(em.vals(args[0]), s)]
    _write(em, ins, em.ptr(args[1], ins), [round_to(em, w, t, ty(t)) for (_, w), t in zip(parts, s)])
    em.define(ins, [round_to(em, f, t, ty(t)) for (f, _), t in zip(parts, s)])


@ext_rule(GLSL, "ModfStruct")
def _modf_struct(em, ins, args):
    x = em.vals(args[0])
    s = scalars(em.rtype(ins))[:len(x)]
    parts = [_trunc_parts(em, v, t) for v, t in zip(x, s)]
    em.define(ins, [round_to(em, f, t, ty(t)) for (f, _), t in zip(parts, s)] +
              [round_to(em, w, t, ty(t)) for (_, w), t in zip(parts, s)])


def _frexp_parts(em, x, st, mant_types, exp_types) -> tuple[list, list]:
    """x = m * 2^e, |m| in [0.5, 1): the mantissas (rounded to mant_types) and exponents."""
    fn = intrinsic(em, "llvm.frexp.f64.i32", "{ double, i32 }", ["double"])
    mant, exps = [], []
    for v, a, t, e in zip(x, st, mant_types, exp_types):
        r = em.op(f"call {{ double, i32 }} {fn}(double {_d(em, v, a)})")
        m = em.op(f"extractvalue {{ double, i32 }} {r}, 0")
        k = em.op(f"extractvalue {{ double, i32 }} {r}, 1")
        fin = em.op(f"fcmp olt double {_call(em, _ll(em, 'fabs'), m)}, 0x7FF0000000000000")
        k = em.op(f"select i1 {fin}, i32 {k}, i32 0")      # inf and NaN: exponent 0 (as C does)
        mant.append(round_from64(em, m, t))
        exps.append(em.cast_int(k, 32, e.width, True))
    return mant, exps


@ext_rule(GLSL, "FrexpStruct")
def _frexp_struct(em, ins, args):
    x = em.vals(args[0])
    s = scalars(em.rtype(ins))
    mant, exps = _frexp_parts(em, x, scalars(em.value_type(args[0])), s[:len(x)], s[len(x):])
    em.define(ins, mant + exps)


@ext_rule(GLSL, "Frexp")
def _frexp(em, ins, args):
    # Returns the mantissa; the exponent goes through the pointer operand (as Modf's whole part).
    from .core_memory import _write
    x = em.vals(args[0])
    p = em.ptr(args[1], ins)
    mant, exps = _frexp_parts(em, x, scalars(em.value_type(args[0])), scalars(em.rtype(ins)),
                              scalars(p.pointee))
    _write(em, ins, p, exps)
    em.define(ins, mant)


@ext_rule(GLSL, "PackHalf2x16")
def _pack_half(em, ins, args):
    v = em.vals(args[0])
    to16 = em.helper("f32_to_f16")
    h = [em.op(f"zext i16 {em.op(f'call i16 {to16}(float {x})')} to i32") for x in v]
    em.define(ins, [em.op(f"or i32 {h[0]}, {em.op(f'shl i32 {h[1]}, 16')}")])


def _pack_lib(name, n):
    def lower(em, ins, args):
        v = em.vals(args[0])
        em.define(ins, [em.lib_scalar(f"jitcoop.kernels.scalar:{name}", [("f32", x) for x in v[:n]], "i32")])
    return lower


ext_rule(GLSL, "PackUnorm4x8")(_pack_lib("pack_unorm4x8", 4))
ext_rule(GLSL, "PackSnorm4x8")(_pack_lib("pack_snorm4x8", 4))
ext_rule(GLSL, "PackUnorm2x16")(_pack_lib("pack_unorm2x16", 2))
ext_rule(GLSL, "PackSnorm2x16")(_pack_lib("pack_snorm2x16", 2))


@ext_rule(GLSL, "PackDouble2x32")
def _pack_double(em, ins, args):
    v = em.vals(args[0])
    lo = em.op(f"zext i32 {v[0]} to i64")
    hi = em.op(f"shl i64 {em.op(f'zext i32 {v[1]} to i64')}, 32")
    em.define(ins, [em.op(f"bitcast i64 {em.op(f'or i64 {lo}, {hi}')} to double")])


@ext_rule(GLSL, "UnpackHalf2x16")
def _unpack_half(em, ins, args):
    v = em.val(args[0])
    lo = em.op(f"trunc i32 {v} to i16")
    hi = em.op(f"trunc i32 {em.op(f'lshr i32 {v}, 16')} to i16")
    f = em.helper("f16_to_f32")
    em.define(ins, [em.op(f"call float {f}(i16 {lo})"), em.op(f"call float {f}(i16 {hi})")])


def _unpack(bits, signed_):
    """Unpack{Unorm,Snorm}{4x8,2x16}: each field of the uint32 scaled to [0, 1] or [-1, 1]."""
    top = (1 << (bits - 1 if signed_ else bits)) - 1

    def lower(em, ins, args):
        v = em.val(args[0])
        out = []
        for i in range(32 // bits):
            field = em.op(f"trunc i32 {em.op(f'lshr i32 {v}, {bits * i}')} to i{bits}")
            d = em.op(f"{'sitofp' if signed_ else 'uitofp'} i{bits} {field} to double")
            q = em.op(f"fdiv double {d}, {_c(float(top))}")
            if signed_:
                q = em.op(f"call double {_ll(em, 'maxnum', 2)}(double {q}, double -1.0)")
            out.append(em.op(f"fptrunc double {q} to float"))
        em.define(ins, out)
    return lower


ext_rule(GLSL, "UnpackUnorm4x8")(_unpack(8, False))
ext_rule(GLSL, "UnpackSnorm4x8")(_unpack(8, True))
ext_rule(GLSL, "UnpackUnorm2x16")(_unpack(16, False))
ext_rule(GLSL, "UnpackSnorm2x16")(_unpack(16, True))


@ext_rule(GLSL, "UnpackDouble2x32")
def _unpack_double(em, ins, args):
    b = em.op(f"bitcast double {em.val(args[0])} to i64")
    em.define(ins, [em.op(f"trunc i64 {b} to i32"), em.op(f"trunc i64 {em.op(f'lshr i64 {b}, 32')} to i32")])


class _Minors:
    """Determinants of the square submatrices of an n x n matrix (n <= 4), in float64, by
    Laplace expansion along their first row; each submatrix's once (a 4 x 4 inverse needs the
    sixteen 3 x 3 minors, which share their 2 x 2 ones). a(row, column): a float64 value."""

    def __init__(self, em, a, n: int):
        self.em, self.a, self.n = em, a, n
        self.memo = {}

    def det(self, rows: tuple, cols: tuple) -> str:
        key = (rows, cols)
        if key not in self.memo:
            em = self.em
            if len(rows) == 1:
                d = self.a(rows[0], cols[0])
            else:
                d = None
                for j, c in enumerate(cols):
                    term = em.op(f"fmul double {self.a(rows[0], c)}, "
                                 f"{self.det(rows[1:], cols[:j] + cols[j + 1:])}")
                    d = term if d is None else em.op(f"{'fsub' if j % 2 else 'fadd'} double {d}, {term}")
            self.memo[key] = d
        return self.memo[key]

    def cofactor(self, r: int, c: int) -> str:
        """(-1)^(r + c) x the determinant without row r and column c."""
        rest = lambda i: tuple(x for x in range(self.n) if x != i)      # noqa: E731
        d = self.det(rest(r), rest(c))
        return self.em.op(f"fneg double {d}") if (r + c) % 2 else d


def _square(em, arg):
    """(n, component type, a(row, column) as float64) of a square matrix operand (its values
    are columns: component (c, r) is value c * n + r)."""
    mt = em.value_type(arg)
    m = em.vals(arg)
    n, s = mt.ncols, mt.col.elem
    return n, s, lambda r, c: _d(em, m[c * n + r], s)


@ext_rule(GLSL, "Determinant")
def _determinant(em, ins, args):
    n, s, a = _square(em, args[0])
    em.define(ins, [round_from64(em, _Minors(em, a, n).det(tuple(range(n)), tuple(range(n))), s)])


@ext_rule(GLSL, "MatrixInverse")
def _matrix_inverse(em, ins, args):
    """The adjugate over the determinant, in float64, each component rounded once: component
    (row r, column c) of the inverse is cofactor (c, r) / det. Undefined for singular matrices
    (the spec's words): here the division's infinities and NaNs."""
    n, s, a = _square(em, args[0])
    minors = _Minors(em, a, n)
    det = None
    for c in range(n):              # along row 0, with the cofactors the inverse needs anyway
        term = em.op(f"fmul double {a(0, c)}, {minors.cofactor(0, c)}")
        det = term if det is None else em.op(f"fadd double {det}, {term}")
    out = [round_from64(em, em.op(f"fdiv double {minors.cofactor(c, r)}, {det}"), s)
           for c in range(n) for r in range(n)]
    em.define(ins, out)
