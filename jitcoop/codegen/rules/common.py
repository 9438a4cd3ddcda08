"""Shared pieces of the lowering rules: leaf types, casts, rounding to small float formats."""
from __future__ import annotations

from ...errors import SpirvError
from ...spirv.types import Matrix, Scalar, Struct, Vector, leaves
from ..emitter import nb_type


def scalars(t) -> list:
    return [s for s, _ in leaves(t)]


def elem(t):
    if isinstance(t, Vector):
        return t.elem
    if isinstance(t, Matrix):
        return t.col.elem
    return t


def unsigned(s: Scalar) -> str:
    return f"np.uint{s.width}"


def signed(s: Scalar) -> str:
    return f"np.int{s.width}"


def round_to(expr: str, s: Scalar) -> str:
    """Round a float32/float64 expression to a float leaf of type s (held as float32/float64)."""
    if s.kind != "float":
        raise TypeError(s)
    if s.width == 64:
        return f"np.float64({expr})"
    if s.width == 32:
        return f"np.float32({expr})"
    if s.encoding == "bf16":
        return f"round_bf16(np.float32({expr}))"
    if s.encoding in ("e4m3", "e5m2"):
        return f"{s.encoding}_to_f32(f32_to_{s.encoding}(np.float32({expr}), False))"
    return f"round_f16(np.float32({expr}))"


def round_from64(expr: str, s: Scalar) -> str:
    """Round a float64 expression to s with a single rounding."""
    if s.width == 16 and not s.encoding:
        return f"round_f16_64(np.float64({expr}))"
    if s.width == 64:
        return f"np.float64({expr})"
    if s.width == 32:
        return f"np.float32({expr})"
    return round_to(f"np.float32({expr})", s)


def bits_of(expr: str, s: Scalar) -> str:
    """The bit pattern of a leaf as an np.uint64 expression."""
    if s.kind == "int":
        return f"np.uint64({unsigned(s)}({expr}))"
    if s.kind == "ptr":
        return f"np.uint64({expr})"
    if s.kind == "bool":
        return f"np.uint64(1 if {expr} else 0)"
    if s.width == 64:
        return f"f64_bits({expr})"
    if s.width == 32:
        return f"np.uint64(f32_bits({expr}))"
    if s.width == 16:
        fn = "f32_to_bf16" if s.encoding == "bf16" else "f32_to_f16"
        return f"np.uint64({fn}({expr}))"
    return f"np.uint64(f32_to_{s.encoding}({expr}, False))"


def from_bits(expr: str, s: Scalar) -> str:
    """A leaf of type s from an unsigned bit-pattern expression (excess high bits ignored)."""
    if s.kind == "int":
        return f"{nb_type(s)}({unsigned(s)}({expr}))"
    if s.kind == "ptr":
        return f"np.int64({expr})"
    if s.kind == "bool":
        return f"(({expr}) != 0)"
    if s.width == 64:
        return f"bits_f64(np.uint64({expr}))"
    if s.width == 32:
        return f"bits_f32(np.uint32({expr}))"
    if s.width == 16:
        fn = "bf16_to_f32" if s.encoding == "bf16" else "f16_to_f32"
        return f"{fn}(np.uint16({expr}))"
    return f"{s.encoding}_to_f32(np.uint8({expr}))"


def check_leaves(ins, a, b):
    if len(a) != len(b):
        raise SpirvError(f"operands have {len(a)} and {len(b)} components", **ins.where())
