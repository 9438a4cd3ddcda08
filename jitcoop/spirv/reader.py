"""Decoding a SPIR-V binary into instructions, driven by the grammar.

Every problem is a SpirvError naming the byte offset (and, where known, the instruction).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..errors import SpirvError
from .grammar import Grammar, OperandSpec, grammar

MAGIC = 0x07230203


@dataclass
class Instruction:
    opcode: int
    opname: str
    offset: int                    # byte offset in the module
    result_type: int | None
    result: int | None
    operands: list                 # decoded operands after type and result: ints and strs
    kinds: list = field(default_factory=list)   # the operand kind of each entry of `operands`
    words: tuple = ()              # the raw words, opcode word included

    def where(self) -> dict:
        return dict(offset=self.offset, opname=self.opname, result_id=self.result)

    def error(self, message: str) -> SpirvError:
        return SpirvError(message, **self.where())

    def __repr__(self):
        r = f"%{self.result} = " if self.result is not None else ""
        t = f"%{self.result_type} " if self.result_type is not None else ""
        return f"{r}{self.opname} {t}{' '.join(map(str, self.operands))}"


@dataclass
class Header:
    version: tuple
    generator: int
    bound: int


def _string(words, i, off):
    raw = b"".join(struct.pack("<I", w) for w in words[i:])
    end = raw.find(b"\0")
    if end < 0:
        raise SpirvError("string operand without a terminating NUL", offset=off)
    return raw[:end].decode("utf-8", "replace"), i + end // 4 + 1


class _Decoder:
    def __init__(self, g: Grammar):
        self.g = g
        self.id_types: dict[int, int] = {}       # result id -> type id, for context dependent literals
        self.int_widths: dict[int, int] = {}     # type id -> bit width of int/float types

    def decode(self, words, off) -> Instruction:
        op = words[0] & 0xFFFF
        spec = self.g.by_opcode.get(op)
        if spec is None:
            raise SpirvError(f"unknown opcode {op}", offset=off, opname=f"Op#{op}")
        ins = Instruction(op, spec.opname, off, None, None, [], [], tuple(words))
        try:
            i = self.operands(ins, spec.operands, words, 1)
        except IndexError:
            raise SpirvError(f"word count {len(words)} too small for the operands",
                             offset=off, opname=spec.opname, result_id=ins.result) from None
        if i != len(words):
            raise SpirvError(f"word count {len(words)} does not match the operands ({i} words used)",
                             offset=off, opname=spec.opname, result_id=ins.result)
        # Remember what context dependent literals need later.
        if ins.result is not None and ins.result_type is not None:
            self.id_types[ins.result] = ins.result_type
        if spec.opname in ("OpTypeInt", "OpTypeFloat"):
            self.int_widths[ins.result] = ins.operands[0]
        return ins

    def operands(self, ins: Instruction, specs, words, i) -> int:
        """Decode a list of operand specs (with ? and * quantifiers) from words[i:]."""
        for o in specs:
            if o.quantifier == "?":
                if i < len(words):
                    i = self.operand(ins, o, words, i)
            elif o.quantifier == "*":
                while i < len(words):
                    i = self.operand(ins, o, words, i)
            else:
                if i >= len(words):
                    raise SpirvError(f"missing operand '{o.name or o.kind}' (word count {len(words)})",
                                     offset=ins.offset, opname=ins.opname, result_id=ins.result)
                i = self.operand(ins, o, words, i)
        return i

    def operand(self, ins: Instruction, o: OperandSpec, words, i) -> int:
        k = o.kind
        if k == "IdResultType":
            ins.result_type = words[i]
            return i + 1
        if k == "IdResult":
            ins.result = words[i]
            return i + 1
        if k in ("IdRef", "IdScope", "IdMemorySemantics", "LiteralInteger", "LiteralExtInstInteger"):
            ins.operands.append(words[i]); ins.kinds.append(k)
            return i + 1
        if k == "LiteralString":
            s, j = _string(words, i, ins.offset)
            ins.operands.append(s); ins.kinds.append(k)
            return j
        if k == "LiteralFloat":
            ins.operands.append(words[i]); ins.kinds.append(k)
            return i + 1
        if k == "LiteralContextDependentNumber":
            # OpConstant/OpSpecConstant: width of the result type. OpSwitch: width of the selector.
            if ins.opname in ("OpSwitch",):
                t = self.id_types.get(ins.operands[0])
            else:
                t = ins.result_type
            width = self.int_widths.get(t, 32)
            n = 2 if width > 32 else 1
            v = words[i] if n == 1 else words[i] | (words[i + 1] << 32)
            ins.operands.append(v); ins.kinds.append(k)
            return i + n
        if k == "LiteralSpecConstantOpInteger":
            # The opcode of the folded instruction, then that instruction's own operands.
            op = words[i]
            ins.operands.append(op); ins.kinds.append(k)
            i += 1
            spec = self.g.by_opcode.get(op)
            if spec is None:
                raise SpirvError(f"OpSpecConstantOp names unknown opcode {op}", offset=ins.offset,
                                 opname=ins.opname, result_id=ins.result)
            return self.operands(ins, [o for o in spec.operands
                                       if o.kind not in ("IdResultType", "IdResult")], words, i)
        if k == "PairLiteralIntegerIdRef":
            # OpSwitch: the literal is as wide as the selector (two words for 64-bit selectors).
            t = self.id_types.get(ins.operands[0]) if ins.operands else None
            if self.int_widths.get(t, 32) > 32:
                ins.operands.extend((words[i] | (words[i + 1] << 32), words[i + 2]))
                ins.kinds.extend(("LiteralInteger", "IdRef"))
                return i + 3
            ins.operands.extend((words[i], words[i + 1])); ins.kinds.extend(("LiteralInteger", "IdRef"))
            return i + 2
        if k == "PairIdRefLiteralInteger":
            ins.operands.extend((words[i], words[i + 1])); ins.kinds.extend(("IdRef", "LiteralInteger"))
            return i + 2
        if k == "PairIdRefIdRef":
            ins.operands.extend((words[i], words[i + 1])); ins.kinds.extend(("IdRef", "IdRef"))
            return i + 2
        kind = self.g.kinds.get(k)
        if kind is None:
            raise SpirvError(f"operand kind {k} is not known", offset=ins.offset, opname=ins.opname)
        if kind.category == "ValueEnum":
            v = words[i]
            ins.operands.append(v); ins.kinds.append(k)
            i += 1
            en = kind.by_value.get(v)
            if en is None:
                raise SpirvError(f"{v} is not a valid {k}", offset=ins.offset, opname=ins.opname,
                                 result_id=ins.result)
            for p in en.parameters:
                i = self.operand(ins, p, words, i)
            return i
        if kind.category == "BitEnum":
            v = words[i]
            ins.operands.append(v); ins.kinds.append(k)
            i += 1
            bit = 1
            while bit <= v:
                if v & bit:
                    en = kind.by_value.get(bit)
                    if en is None:
                        raise SpirvError(f"bit {bit:#x} is not a valid {k}", offset=ins.offset,
                                         opname=ins.opname, result_id=ins.result)
                    for p in en.parameters:
                        i = self.operand(ins, p, words, i)
                bit <<= 1
            return i
        raise SpirvError(f"operand kind {k} cannot be decoded", offset=ins.offset, opname=ins.opname)


def read_words(data: bytes) -> list[int]:
    if len(data) < 20:
        raise SpirvError(f"a SPIR-V module has at least 20 bytes of header; this one has {len(data)}",
                         offset=0)
    if len(data) % 4:
        raise SpirvError(f"module size {len(data)} is not a multiple of 4 bytes", offset=len(data) & ~3)
    magic = struct.unpack_from("<I", data)[0]
    if magic == MAGIC:
        fmt = "<"
    elif magic == 0x03022307:
        fmt = ">"
    else:
        raise SpirvError(f"bad magic number {magic:#010x} (expected 0x07230203)", offset=0)
    return list(struct.unpack(f"{fmt}{len(data) // 4}I", data))


def decode(data: bytes, g: Grammar | None = None) -> tuple[Header, list[Instruction]]:
    g = g or grammar()
    words = read_words(data)
    version = ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF)
    hdr = Header(version, words[2], words[3])
    dec = _Decoder(g)
    out = []
    i = 5
    while i < len(words):
        wc = words[i] >> 16
        off = 4 * i
        if wc == 0:
            raise SpirvError("instruction with word count 0", offset=off)
        if i + wc > len(words):
            op = words[i] & 0xFFFF
            spec = g.by_opcode.get(op)
            raise SpirvError(f"instruction runs past the end of the module (word count {wc}, "
                             f"{len(words) - i} words left): the module is truncated",
                             offset=off, opname=spec.opname if spec else f"Op#{op}")
        ins = dec.decode(words[i:i + wc], off)
        if ins.result is not None and ins.result >= hdr.bound:
            raise SpirvError(f"result id {ins.result} is not below the id bound {hdr.bound}", **ins.where())
        out.append(ins)
        i += wc
    return hdr, out
