"""LLVM IR text: types and literals of SPIR-V scalars, and a builder for one function.

The code generator writes LLVM IR as text, one instruction per line, so that a dumped kernel
reads like what LLVM compiles (`jitcoop dis --generated`). Every SPIR-V scalar leaf has one LLVM
type: bool i1, integers iN (signedness lives in the instructions), float32 `float`, float64
`double`, physical pointers i64 (a host address), and the 16- and 8-bit float formats `float`
holding a value the format can represent (rounded after each operation).
"""
from __future__ import annotations

import math
import struct
from contextlib import contextmanager

from ..spirv.types import Scalar


# Bytes of each LLVM scalar type the generated code uses (pointers are host addresses).
SIZES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "bfloat": 2, "float": 4, "double": 8,
         "ptr": 8}


def ty(s) -> str:
    """The LLVM type a leaf of scalar type s is held in."""
    if isinstance(s, Scalar):
        if s.kind == "bool":
            return "i1"
        if s.kind == "int":
            return f"i{s.width}"
        if s.kind == "ptr":
            return "i64"
        if s.kind == "float":
            return "double" if s.width == 64 else "float"
    raise TypeError(f"no LLVM type for {s}")


def mem_ty(s) -> str:
    """The LLVM type a leaf is stored in memory as (small floats as their bits, bool as i32)."""
    if s.kind == "bool":
        return "i32"
    if s.kind == "float" and s.width < 32:
        return f"i{s.width}"
    return ty(s)


def f64_hex(x: float) -> str:
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", x))[0]


def f32_hex_of_bits(bits: int) -> str:
    """LLVM writes a `float` literal as the double with the same value: widen the bits exactly
    (NaN payloads included, so no hardware conversion that would quiet a signalling NaN)."""
    bits &= 0xFFFFFFFF
    sign, exp, man = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exp == 0xFF:
        d = (sign << 63) | (0x7FF << 52) | (man << 29)
        return "0x%016X" % d
    return f64_hex(struct.unpack("<f", struct.pack("<I", bits))[0])


def float_lit(v: float, width: int) -> str:
    if width == 64:
        return f64_hex(float(v))
    f = float(v)
    if math.isnan(f):
        return "0x7FF8000000000000"
    return f32_hex_of_bits(struct.unpack("<I", struct.pack("<f", f))[0])


def lit(v, s) -> str:
    """A constant leaf of scalar type s as an LLVM operand."""
    if s.kind == "bool":
        return "true" if v else "false"
    if s.kind == "float":
        return float_lit(v, 64 if s.width == 64 else 32)
    iv = int(v)
    w = 64 if s.kind == "ptr" else s.width
    iv &= (1 << w) - 1
    if iv >> (w - 1):
        iv -= 1 << w          # LLVM prints integers signed; either spelling is the same bits
    return str(iv)


def zero(t: str) -> str:
    if t in ("float", "double"):
        return "0.0"
    if t == "ptr":
        return "null"
    if t == "i1":
        return "false"
    return "0"


def is_lit(op: str) -> bool:
    """Whether an operand is a literal (not an SSA name or a global)."""
    return not op.startswith(("%", "@"))


class Phi:
    """A phi whose incoming values are added as the edges into its block are emitted."""

    def __init__(self, name: str, t: str):
        self.name, self.t = name, t
        self.incoming: list[tuple[str, str]] = []

    def render(self) -> str:
        if not self.incoming:           # a block nothing branches to (a failure block never used)
            return f"  {self.name} = freeze {self.t} poison"
        inc = ", ".join(f"[ {v}, %{b} ]" for v, b in self.incoming)
        return f"  {self.name} = phi {self.t} {inc}"


class Either:
    """Two spellings of the same lines: `vector`, what the function renders (a run of elements
    moved and converted as one LLVM vector), and `scalar`, one element at a time, what the
    lane-group pass reads (its vector copy widens scalars across invocations; an LLVM vector
    there would be work done once per invocation). Both define the same result names."""

    def __init__(self, vector: list[str], scalar: list[str]):
        self.vector, self.scalar = vector, scalar

    def render(self) -> str:
        return "\n".join(self.vector)


class Function:
    """One LLVM function under construction: blocks of lines, fresh names, allocas in the entry.

    `block(label)` starts a block and makes it current; `emit` appends to the current block;
    `op(text)` emits `%tN = text` and returns `%tN`. Phis are objects rendered last, when every
    edge into their block has been emitted."""

    def __init__(self, header: str):
        self.header = header
        self.blocks: list[tuple[str, list]] = []
        self._by_label: dict[str, list] = {}
        self.allocas: list[str] = []
        self.cur: str | None = None
        self._lines: list | None = None
        self._n = 0
        self._labels: set[str] = set()

    def fresh(self, hint: str = "t") -> str:
        self._n += 1
        return f"%{hint}.{self._n}"

    def label(self, hint: str) -> str:
        self._n += 1
        lab = f"{hint}.{self._n}"
        self._labels.add(lab)
        return lab

    def block(self, label: str):
        self._lines = []
        self.blocks.append((label, self._lines))
        self._by_label[label] = self._lines
        self.cur = label

    def resume(self, label: str):
        """Go on appending to an earlier block (one not yet terminated)."""
        self._lines = self._by_label[label]
        self.cur = label

    def splice(self) -> list:
        """A list of lines placed at this point of the current block, filled in later (it renders
        where it stands: definitions that must come before the block's terminator)."""
        part: list = []
        self._lines.append(part)
        return part

    @contextmanager
    def capture(self):
        """Lines emitted inside go to the list it yields rather than to the current block."""
        saved = self._lines
        self._lines = part = []
        try:
            yield part
        finally:
            self._lines = saved

    def either(self, vector: list[str], scalar: list[str]):
        """Place two spellings of the same lines here (Either)."""
        self._lines.append(Either(vector, scalar))

    @property
    def terminated(self) -> bool:
        if not self._lines:
            return False
        last = self._lines[-1]
        if isinstance(last, (Phi, list, Either)):
            return False
        s = last.lstrip()
        return s.startswith(("br ", "ret ", "ret\n", "switch ", "unreachable")) or s == "ret void"

    def emit(self, text: str):
        self._lines.append("  " + text)

    def op(self, text: str, hint: str = "t") -> str:
        name = self.fresh(hint)
        self._lines.append(f"  {name} = {text}")
        return name

    def phi(self, t: str, hint: str = "p") -> Phi:
        p = Phi(self.fresh(hint), t)
        # phis go before every other instruction of the block
        k = 0
        while k < len(self._lines) and isinstance(self._lines[k], Phi):
            k += 1
        self._lines.insert(k, p)
        return p

    def alloca(self, t: str, hint: str = "a") -> str:
        name = self.fresh(hint)
        self.allocas.append(f"  {name} = alloca {t}, align 16")
        return name

    def size(self) -> tuple[int, int]:
        """How many instructions, and how many of them loads and stores, the function holds so
        far (one walk)."""
        insns = mem = 0

        def count(lines):
            nonlocal insns, mem
            for x in lines:
                if isinstance(x, list):
                    count(x)
                elif isinstance(x, Either):       # as the lane-group pass would read it
                    count(x.scalar)
                elif isinstance(x, str):
                    s = x.lstrip()
                    if s and not s.startswith(";"):
                        insns += 1
                        mem += s.startswith("store ") or " = load " in s
        for _, lines in self.blocks:
            count(lines)
        return insns, mem

    def br(self, target: str):
        self.emit(f"br label %{target}")

    def cbr(self, cond: str, t: str, f: str):
        self.emit(f"br i1 {cond}, label %{t}, label %{f}")

    def render(self) -> str:
        out = [self.header + " {"]
        first = True
        for label, lines in self.blocks:
            out.append(f"{label}:")
            if first:
                out.extend(self.allocas)
                first = False
            for ln in lines:
                if isinstance(ln, list):
                    out.extend("  " + x for x in ln)
                else:
                    out.append(ln.render() if isinstance(ln, (Phi, Either)) else ln)
        out.append("}")
        return "\n".join(out)
