"""GLSL.std.450 extended instructions. Transcendentals of float16/float32 are computed in float64
and rounded once to the result type; GPUs are allowed a few ulp here, so this is as good as any."""
from __future__ import annotations

from ...errors import SpirvError
from ..emitter import nb_type
from . import ext_rule
from .common import round_from64, round_to, scalars, signed, unsigned

GLSL = "GLSL.std.450"


def _map(em, ins, args, fn):
    rt = em.rtype(ins)
    out_s = scalars(rt)
    vals = [em.vals(a) for a in args]
    exprs = []
    for i, s in enumerate(out_s):
        exprs.append(fn(s, [v[i] if len(v) > 1 else v[0] for v in vals]))
    em.define(ins, exprs)


def _float1(template):
    def lower(em, ins, args):
        _map(em, ins, args, lambda s, a: round_from64(template.format(*[f"np.float64({x})" for x in a]), s))
    return lower


_FLOAT = {
    "Round": "round_half_away({0})", "RoundEven": "np.rint({0})", "Trunc": "np.trunc({0})",
    "FAbs": "abs({0})", "FSign": "fsign({0})", "Floor": "np.floor({0})",
    "Ceil": "np.ceil({0})", "Fract": "({0} - np.floor({0}))",
    "Radians": "({0} * 0.017453292519943295)", "Degrees": "({0} * 57.29577951308232)",
    "Sin": "np.sin({0})", "Cos": "np.cos({0})", "Tan": "np.tan({0})", "Asin": "np.arcsin({0})",
    "Acos": "np.arccos({0})", "Atan": "np.arctan({0})", "Sinh": "np.sinh({0})", "Cosh": "np.cosh({0})",
    "Tanh": "np.tanh({0})", "Asinh": "np.arcsinh({0})", "Acosh": "np.arccosh({0})",
    "Atanh": "np.arctanh({0})", "Atan2": "np.arctan2({0}, {1})", "Pow": "np.power({0}, {1})",
    "Exp": "np.exp({0})", "Log": "np.log({0})", "Exp2": "np.exp2({0})", "Log2": "np.log2({0})",
    "Sqrt": "np.sqrt({0})", "InverseSqrt": "(1.0 / np.sqrt({0}))",
    "FMin": "fmin_gl({0}, {1})", "FMax": "fmax_gl({0}, {1})", "NMin": "fmin_gl({0}, {1})",
    "NMax": "fmax_gl({0}, {1})", "FClamp": "fmin_gl(fmax_gl({0}, {1}), {2})",
    "NClamp": "fmin_gl(fmax_gl({0}, {1}), {2})",
    "FMix": "({0} * (1.0 - {2}) + {1} * {2})", "Step": "(0.0 if {1} < {0} else 1.0)",
    "SmoothStep": "smoothstep({0}, {1}, {2})", "Fma": "({0} * {1} + {2})",
    "Ldexp": "np.ldexp({0}, np.int64({1}))",
}
for _n, _t in _FLOAT.items():
    if _n == "Ldexp":
        continue
    ext_rule(GLSL, _n)(_float1(_t))


@ext_rule(GLSL, "Ldexp")
def _ldexp(em, ins, args):
    x, e = em.vals(args[0]), em.vals(args[1])
    s = scalars(em.rtype(ins))
    em.define(ins, [round_from64(f"np.ldexp(np.float64({a}), np.int32(max(-2000, min(2000, np.int64({b})))))", t)
                    for a, b, t in zip(x, e if len(e) > 1 else e * len(x), s)])


def _int(template, kind):
    def lower(em, ins, args):
        def f(s, a):
            C = signed(s) if kind == "s" else unsigned(s)
            return f"{nb_type(s)}(" + template.format(*[f"{C}({x})" for x in a]) + ")"
        _map(em, ins, args, f)
    return lower


for _n, _t, _k in (("SAbs", "abs(np.int64({0}))", "s"), ("SSign", "(1 if {0} > 0 else (-1 if {0} < 0 else 0))", "s"),
                   ("UMin", "min({0}, {1})", "u"), ("SMin", "min({0}, {1})", "s"),
                   ("UMax", "max({0}, {1})", "u"), ("SMax", "max({0}, {1})", "s"),
                   ("UClamp", "min(max({0}, {1}), {2})", "u"), ("SClamp", "min(max({0}, {1}), {2})", "s")):
    ext_rule(GLSL, _n)(_int(_t, _k))


def _find(fn):
    def lower(em, ins, args):
        src = scalars(em.value_type(args[0]))
        vals = em.vals(args[0])
        out = []
        for s, a, t in zip(scalars(em.rtype(ins)), vals, src):
            if fn == "smsb":
                # The most significant bit that differs from the sign bit.
                S = signed(t)
                x = f"np.uint64({unsigned(t)}(~{S}({a}) if {S}({a}) < 0 else {S}({a})))"
                out.append(f"{nb_type(s)}(find_umsb({x}))")
            else:
                out.append(f"{nb_type(s)}(find_{fn}(np.uint64({unsigned(t)}({a}))))")
        em.define(ins, out)
    return lower


ext_rule(GLSL, "FindILsb")(_find("lsb"))
ext_rule(GLSL, "FindUMsb")(_find("umsb"))
ext_rule(GLSL, "FindSMsb")(_find("smsb"))


@ext_rule(GLSL, "IMix")
def _imix(em, ins, args):
    _map(em, ins, args, lambda s, a: f"({a[1]} if {a[2]} else {a[0]})")


@ext_rule(GLSL, "Length")
def _length(em, ins, args):
    v = em.vals(args[0])
    s = scalars(em.rtype(ins))[0]
    em.define(ins, [round_from64("np.sqrt(" + " + ".join(f"np.float64({x}) * np.float64({x})" for x in v) + ")", s)])


@ext_rule(GLSL, "Distance")
def _distance(em, ins, args):
    a, b = em.vals(args[0]), em.vals(args[1])
    s = scalars(em.rtype(ins))[0]
    terms = " + ".join(f"(np.float64({x}) - np.float64({y})) ** 2" for x, y in zip(a, b))
    em.define(ins, [round_from64(f"np.sqrt({terms})", s)])


@ext_rule(GLSL, "Normalize")
def _normalize(em, ins, args):
    v = em.vals(args[0])
    s = scalars(em.rtype(ins))
    n = em.tmp("n")
    em.line(f"{n} = np.sqrt(" + " + ".join(f"np.float64({x}) * np.float64({x})" for x in v) + ")")
    em.define(ins, [round_from64(f"np.float64({x}) / {n}", t) for x, t in zip(v, s)])


@ext_rule(GLSL, "Cross")
def _cross(em, ins, args):
    a, b = em.vals(args[0]), em.vals(args[1])
    s = scalars(em.rtype(ins))
    e = [f"{a[1]} * {b[2]} - {b[1]} * {a[2]}", f"{a[2]} * {b[0]} - {b[2]} * {a[0]}",
         f"{a[0]} * {b[1]} - {b[0]} * {a[1]}"]
    em.define(ins, [round_to(x, t) for x, t in zip(e, s)])


@ext_rule(GLSL, "Reflect")
def _reflect(em, ins, args):
    i, n = em.vals(args[0]), em.vals(args[1])
    s = scalars(em.rtype(ins))
    d = em.tmp("d")
    em.line(f"{d} = " + " + ".join(f"np.float64({x}) * np.float64({y})" for x, y in zip(n, i)))
    em.define(ins, [round_from64(f"np.float64({x}) - 2.0 * {d} * np.float64({y})", t) for x, y, t in zip(i, n, s)])


@ext_rule(GLSL, "Refract")
def _refract(em, ins, args):
    i, n = em.vals(args[0]), em.vals(args[1])
    eta = em.val(args[2])
    s = scalars(em.rtype(ins))
    d, k = em.tmp("d"), em.tmp("k")
    em.line(f"{d} = " + " + ".join(f"np.float64({x}) * np.float64({y})" for x, y in zip(n, i)))
    em.line(f"{k} = 1.0 - np.float64({eta}) * np.float64({eta}) * (1.0 - {d} * {d})")
    em.define(ins, [round_from64(f"0.0 if {k} < 0.0 else np.float64({eta}) * np.float64({x}) - "
                                 f"(np.float64({eta}) * {d} + np.sqrt({k})) * np.float64({y})", t)
                    for x, y, t in zip(i, n, s)])


@ext_rule(GLSL, "FaceForward")
def _faceforward(em, ins, args):
    n, i, nref = em.vals(args[0]), em.vals(args[1]), em.vals(args[2])
    d = em.tmp("d")
    em.line(f"{d} = " + " + ".join(f"np.float64({x}) * np.float64({y})" for x, y in zip(nref, i)))
    em.define(ins, [f"({x} if {d} < 0.0 else -{x})" for x in n])


@ext_rule(GLSL, "Modf")
def _modf(em, ins, args):
    # Returns the fraction; the whole part goes through the pointer operand.
    x = em.vals(args[0])
    s = scalars(em.rtype(ins))
    from .core_memory import _write
    p = em.ptr(args[1], ins)
    whole = [f"np.trunc({v})" for v in x]
    _write(em, ins, p, [round_to(w, t) for w, t in zip(whole, s)])
    em.define(ins, [round_to(f"{v} - np.trunc({v})", t) for v, t in zip(x, s)])


@ext_rule(GLSL, "ModfStruct")
def _modf_struct(em, ins, args):
    x = em.vals(args[0])
    s = scalars(em.rtype(ins))[:len(x)]
    em.define(ins, [round_to(f"{v} - np.trunc({v})", t) for v, t in zip(x, s)] +
              [round_to(f"np.trunc({v})", t) for v, t in zip(x, s)])


@ext_rule(GLSL, "FrexpStruct")
def _frexp_struct(em, ins, args):
    x = em.vals(args[0])
    s = scalars(em.rtype(ins))
    n = len(x)
    em.define(ins, [round_to(f"math.frexp(np.float64({v}))[0]", t) for v, t in zip(x, s[:n])] +
              [f"{nb_type(t)}(math.frexp(np.float64({v}))[1])" for v, t in zip(x, s[n:])])


def _pack(fn_template, n):
    def lower(em, ins, args):
        v = em.vals(args[0])
        em.define(ins, [fn_template.format(*v)])
    return lower


ext_rule(GLSL, "PackHalf2x16")(_pack("np.uint32(np.uint32(f32_to_f16(np.float32({0}))) | (np.uint32(f32_to_f16(np.float32({1}))) << np.uint32(16)))", 2))
ext_rule(GLSL, "PackUnorm4x8")(_pack("pack_unorm4x8({0}, {1}, {2}, {3})", 4))
ext_rule(GLSL, "PackSnorm4x8")(_pack("pack_snorm4x8({0}, {1}, {2}, {3})", 4))
ext_rule(GLSL, "PackUnorm2x16")(_pack("pack_unorm2x16({0}, {1})", 2))
ext_rule(GLSL, "PackSnorm2x16")(_pack("pack_snorm2x16({0}, {1})", 2))
ext_rule(GLSL, "PackDouble2x32")(_pack("bits_f64(np.uint64({0}) | (np.uint64({1}) << np.uint64(32)))", 2))


@ext_rule(GLSL, "UnpackHalf2x16")
def _unpack_half(em, ins, args):
    v = em.val(args[0])
    em.define(ins, [f"f16_to_f32(np.uint16(np.uint32({v}) & np.uint32(0xFFFF)))",
                    f"f16_to_f32(np.uint16(np.uint32({v}) >> np.uint32(16)))"])


def _unpack(bits, signed_):
    """Unpack{Unorm,Snorm}{4x8,2x16}: each field of the uint32 scaled to [0, 1] or [-1, 1]."""
    top = (1 << (bits - 1 if signed_ else bits)) - 1

    def lower(em, ins, args):
        v = em.val(args[0])
        out = []
        for i in range(32 // bits):
            field = f"((np.uint32({v}) >> np.uint32({bits * i})) & np.uint32({(1 << bits) - 1}))"
            if signed_:
                out.append(f"np.float32(max(-1.0, np.float64(np.int{bits}(np.uint{bits}({field}))) / {top}.0))")
            else:
                out.append(f"np.float32(np.float64({field}) / {top}.0)")
        em.define(ins, out)
    return lower


ext_rule(GLSL, "UnpackUnorm4x8")(_unpack(8, False))
ext_rule(GLSL, "UnpackSnorm4x8")(_unpack(8, True))
ext_rule(GLSL, "UnpackUnorm2x16")(_unpack(16, False))
ext_rule(GLSL, "UnpackSnorm2x16")(_unpack(16, True))


@ext_rule(GLSL, "UnpackDouble2x32")
def _unpack_double(em, ins, args):
    v = em.val(args[0])
    em.define(ins, [f"np.uint32(f64_bits({v}) & np.uint64(0xFFFFFFFF))", f"np.uint32(f64_bits({v}) >> np.uint64(32))"])


@ext_rule(GLSL, "Determinant")
def _determinant(em, ins, args):
    mt = em.value_type(args[0])
    m = em.vals(args[0])
    n = mt.ncols
    a = lambda c, r: f"np.float64({m[c * n + r]})"
    if n == 2:
        e = f"{a(0,0)} * {a(1,1)} - {a(1,0)} * {a(0,1)}"
    elif n == 3:
        e = (f"{a(0,0)} * ({a(1,1)} * {a(2,2)} - {a(2,1)} * {a(1,2)}) - {a(1,0)} * ({a(0,1)} * {a(2,2)} - {a(2,1)} * {a(0,2)})"
             f" + {a(2,0)} * ({a(0,1)} * {a(1,2)} - {a(1,1)} * {a(0,2)})")
    else:
        raise SpirvError("Determinant of a 4x4 matrix is not supported yet", **ins.where())
    em.define(ins, [round_from64(e, mt.col.elem)])
