"""Shared pieces of the lowering rules: leaf types, casts, rounding to small float formats."""
from __future__ import annotations

from ...errors import SpirvError
from ...spirv.types import Matrix, Scalar, Vector, leaves


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


class LeafFormat:
    """How a leaf of one scalar type sits in memory: the type of the load/store (`mem`, e.g.
    "f32", "u16") and the conversions between the value the code holds and that memory value
    (`encode`/`decode` templates on "{}"; None when they are the same)."""

    def __init__(self, mem, encode=None, decode=None):
        self.mem, self.encode, self.decode = mem, encode, decode

    def to_mem(self, v: str) -> str:
        return self.encode.format(v) if self.encode else v

    def from_mem(self, m: str) -> str:
        return self.decode.format(m) if self.decode else m


def leaf_format(s: Scalar) -> LeafFormat:
    if s.kind == "int":
        return LeafFormat(f"{'i' if s.signed else 'u'}{s.width}")
    if s.kind == "ptr":
        return LeafFormat("i64", "np.int64({})")
    if s.kind == "bool":
        return LeafFormat("u32", "np.uint32(1 if {} else 0)", "({} != 0)")
    if s.width in (32, 64):
        return LeafFormat(f"f{s.width}")
    if s.encoding == "bf16":
        return LeafFormat("u16", "f32_to_bf16({})", "bf16_to_f32({})")
    if s.width == 16:
        return LeafFormat("u16", "f32_to_f16_fast({})", "f16_to_f32_fast({})")
    return LeafFormat("u8", f"f32_to_{s.encoding}({{}}, False)", f"{s.encoding}_to_f32({{}})")


def _mem_bits(m: str, mem: str) -> str:
    """An np.uint64 of the bits of a memory-typed value."""
    if mem == "f32":
        return f"np.uint64(f32_bits({m}))"
    if mem == "f64":
        return f"f64_bits({m})"
    return f"np.uint64(np.uint{mem[1:]}({m}))"


def bits_of(expr: str, s: Scalar) -> str:
    """The bit pattern of a leaf as an np.uint64 expression."""
    f = leaf_format(s)
    return _mem_bits(f.to_mem(expr), f.mem)


def from_bits(expr: str, s: Scalar) -> str:
    """A leaf of type s from an unsigned bit-pattern expression (excess high bits ignored)."""
    f = leaf_format(s)
    w = f.mem[1:]
    if f.mem == "f32":
        m = f"bits_f32(np.uint32({expr}))"
    elif f.mem == "f64":
        m = f"bits_f64(np.uint64({expr}))"
    else:
        m = f"np.{'' if f.mem[0] == 'i' else 'u'}int{w}(np.uint{w}({expr}))"
    return f.from_mem(m)


def check_leaves(ins, a, b):
    if len(a) != len(b):
        raise SpirvError(f"operands have {len(a)} and {len(b)} components", **ins.where())
