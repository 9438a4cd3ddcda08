"""Shared pieces of the lowering rules: leaf types, rounding to the small float formats, bit
patterns of leaves."""
from __future__ import annotations

from ...errors import SpirvError
from ...spirv.types import Matrix, Scalar, Vector, describe, leaves
from ..llvm import mem_ty, ty


def scalars(t) -> list:
    return [s for s, _ in leaves(t)]


def elem(t):
    if isinstance(t, Vector):
        return t.elem
    if isinstance(t, Matrix):
        return t.col.elem
    return t


def fwidth(v_ty: str) -> int:
    return 64 if v_ty == "double" else 32


def round_to(em, v: str, s: Scalar, src: str = "float") -> str:
    """Round a float value `v` of LLVM type `src` (float or double) to a float leaf of type s
    (held as float or double): one rounding from src."""
    if s.kind != "float":
        raise TypeError(s)
    if s.width == 64:
        return v if src == "double" else em.op(f"fpext float {v} to double")
    if src == "double":
        if s.width == 32:
            return em.op(f"fptrunc double {v} to float")
        return round_from64(em, v, s)
    if s.width == 32:
        return v
    if s.encoding == "bf16":
        return em.op(f"call float {em.helper('round_bf16')}(float {v})")
    if s.encoding in ("e4m3", "e5m2"):
        b = em.lib_scalar(f"jitcoop.kernels.formats:f32_to_{s.encoding}", [("f32", v), ("b", "false")], "i8")
        return em.lib_scalar(f"jitcoop.kernels.formats:{s.encoding}_to_f32", [("u8", b)], "float")
    return em.op(f"call float {em.helper('round_f16')}(float {v})")


def round_from64(em, v: str, s: Scalar) -> str:
    """Round a double to s with a single rounding."""
    if s.width == 64:
        return v
    if s.width == 32:
        return em.op(f"fptrunc double {v} to float")
    if s.width == 16 and not s.encoding:
        return em.op(f"call float {em.helper('round_f16_64')}(double {v})")
    if s.encoding == "bf16":
        return em.op(f"call float {em.helper('round_bf16_64')}(double {v})")
    b = em.lib_scalar(f"jitcoop.kernels.formats:f64_to_{s.encoding}", [("f64", v), ("b", "false")], "i8")
    return em.lib_scalar(f"jitcoop.kernels.formats:{s.encoding}_to_f32", [("u8", b)], "float")


def widen(em, v: str, s: Scalar) -> str:
    """A float leaf as a double (exact)."""
    return v if ty(s) == "double" else em.op(f"fpext float {v} to double")


def bits_of(em, v: str, s: Scalar) -> str:
    """The bit pattern of a leaf (its memory form) zero-extended to i64."""
    m = em.to_mem(v, s)
    mt = mem_ty(s)
    if mt in ("float", "double"):
        it = "i32" if mt == "float" else "i64"
        m = em.op(f"bitcast {mt} {m} to {it}")
        mt = it
    return m if mt == "i64" else em.op(f"zext {mt} {m} to i64")


def from_bits(em, x: str, s: Scalar) -> str:
    """A leaf of type s from the low bits of an i64."""
    mt = mem_ty(s)
    if mt in ("float", "double"):
        it = "i32" if mt == "float" else "i64"
        m = x if it == "i64" else em.op(f"trunc i64 {x} to i32")
        return em.op(f"bitcast {it} {m} to {mt}")
    m = x if mt == "i64" else em.op(f"trunc i64 {x} to {mt}")
    if s.kind == "bool":
        return em.op(f"icmp ne {mt} {m}, 0")
    return em.from_mem(m, s)


def int_operand(em, ins, vid, what: str):
    """An operand that must be an integer scalar (an offset, a stride)."""
    t = em.value_type(vid)
    if not (isinstance(t, Scalar) and t.kind == "int"):
        raise SpirvError(f"the {what} operand %{vid} has type {describe(t)}; an integer scalar is needed",
                         **ins.where())


def check_leaves(ins, a, b):
    if len(a) != len(b):
        raise SpirvError(f"operands have {len(a)} and {len(b)} components", **ins.where())


def intrinsic(em, name: str, ret: str, args: list[str]) -> str:
    """Declare an LLVM intrinsic (args are LLVM types) and return its name."""
    em.declare(f"@{name}", f"declare {ret} @{name}({', '.join(args)})")
    return f"@{name}"
