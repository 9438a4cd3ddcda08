"""A disassembler writing SPIR-V text in the style of SPIRV-Tools' `spirv-dis`.

Ids print as friendly names taken from OpName (when unique) or as `%N`; enumerants by name; masks
as `A|B`; literal numbers as numbers of their type (floats as the shortest decimal that reads back
to the same bits; inf and NaN in spirv-dis's hex-float form, e.g. `0x1p+128`, `-0x1.8p+128`).
The text reassembles with `jitcoop.spirv.asm.assemble`; without friendly names, to the same words.
"""
from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from decimal import Decimal

from ..errors import SpirvError
from .asm import FLOAT_FORMATS, FloatFormat, float_bits, float_value
from .grammar import Grammar, grammar
from .reader import Header, Instruction, _Decoder, read_words

_ID_KINDS = ("IdRef", "IdScope", "IdMemorySemantics")
_EXT_INST_OPS = ("OpExtInst", "OpExtInstWithForwardRefsKHR")
_OP_SPEC_CONSTANT_OP = 52


@functools.lru_cache(maxsize=None)
def generator_names() -> dict[int, str]:
    """Generator tool id -> name as spirv-dis prints it ("Khronos Glslang Reference Front End"),
    from the registry file spir-v.xml that ships beside the grammar."""
    names = {7: "Khronos SPIR-V Tools Assembler", 8: "Khronos Glslang Reference Front End"}
    try:
        from .grammar import _grammar_dir
        root = ET.parse(_grammar_dir().parent / "spir-v.xml").getroot()
    except Exception:          # no registry file: the names above, others print as Unknown(N)
        return names
    for e in root.iter("id"):
        vendor, tool = e.get("vendor"), e.get("tool")
        if e.get("value", "").isdigit() and vendor:
            names[int(e.get("value"))] = f"{vendor} {tool}" if tool else vendor
    return names


@dataclass
class Context:
    """What printing an instruction needs from the rest of its module."""
    names: dict[int, str] = field(default_factory=dict)      # id -> friendly name, without %
    scalars: dict[int, object] = field(default_factory=dict)  # type id -> FloatFormat | (width, signed)
    value_types: dict[int, int] = field(default_factory=dict)  # result id -> its type id
    ext_sets: dict[int, str] = field(default_factory=dict)    # OpExtInstImport id -> set name


def friendly_names(instructions) -> dict[int, str]:
    """id -> name for ids with an OpName whose name, made an identifier, no other id shares.

    Names that are all digits are left out: `%12` would read as a numeric id.
    """
    first: dict[int, str] = {}
    for ins in instructions:
        if ins.opname == "OpName" and ins.operands[0] not in first:
            first[ins.operands[0]] = re.sub(r"[^A-Za-z0-9_]", "_", ins.operands[1]) or "_"
    count: dict[str, int] = {}
    for name in first.values():
        count[name] = count.get(name, 0) + 1
    return {i: n for i, n in first.items() if count[n] == 1 and not n.isdigit()}


def module_context(instructions, names: bool = True) -> Context:
    g = grammar()
    ctx = Context(friendly_names(instructions) if names else {})
    for ins in instructions:
        if ins.result is not None and ins.result_type is not None:
            ctx.value_types[ins.result] = ins.result_type
        if ins.opname == "OpTypeInt":
            ctx.scalars[ins.result] = (ins.operands[0], bool(ins.operands[1]))
        elif ins.opname == "OpTypeFloat":
            enc = g.enum_name("FPEncoding", ins.operands[1]) if len(ins.operands) > 1 else None
            fmt = FLOAT_FORMATS.get((ins.operands[0], enc))
            if fmt is not None:
                ctx.scalars[ins.result] = fmt
        elif ins.opname == "OpExtInstImport":
            ctx.ext_sets[ins.result] = ins.operands[0]
    return ctx


# ---------------------------------------------------------------------------------------------
# Literals

def format_float(bits: int, fmt: FloatFormat) -> str:
    """The shortest decimal that reads back to `bits`; inf and NaN as spirv-dis writes them."""
    sign = "-" if bits & fmt.sign_bit else ""
    mag = bits & (fmt.sign_bit - 1)
    mant_mask = (1 << fmt.mant_bits) - 1
    if not fmt.ieee and mag == fmt.nan & (fmt.sign_bit - 1):
        return sign + "nan"
    if fmt.ieee and mag & fmt.exp_mask == fmt.exp_mask:
        # The fraction bits as hex digits after "1.", with an exponent one past the largest.
        pad = -fmt.mant_bits % 4
        digits = f"{(mag & mant_mask) << pad:0{(fmt.mant_bits + pad) // 4}x}".rstrip("0")
        return f"{sign}0x1{'.' + digits if digits else ''}p+{fmt.emax + 1}"
    x = float(float_value(mag, fmt))              # exact: every format here fits a double
    for text in _decimal_candidates(-x if sign else x):
        if _reads_as(text, fmt, bits):
            # Python's layout of the same value (0.1, 65504.0, 1e-30) where that reads back too.
            pretty = repr(float(text))
            return pretty if _reads_as(pretty, fmt, bits) else str(Decimal(text).normalize()).lower()
    raise AssertionError("17 digits identify every double")


def _decimal_candidates(x: float):
    """Decimals near x, shortest first: for each number of digits, the nearest one, then the
    next one away from zero (the one that reads back where reading truncates: narrow floats)."""
    for digits in range(1, 18):
        text = "%.*e" % (digits - 1, x)
        yield text
        mant, exp = text.split("e")
        n = int(mant.lstrip("-").replace(".", "")) + 1
        yield f"{'-' if mant.startswith('-') else ''}{n}e{int(exp) - digits + 1}"


def _reads_as(text: str, fmt: FloatFormat, bits: int) -> bool:
    try:
        return float_bits(text, fmt) == bits
    except ValueError:        # a short candidate can round past the largest finite value
        return False


def format_int(value: int, width: int, signed: bool) -> str:
    value &= (1 << width) - 1
    if signed and value >> (width - 1):
        value -= 1 << width
    return str(value)


def format_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _typed_number(value: int, type_id: int | None, ctx: Context) -> str:
    scalar = ctx.scalars.get(type_id)
    if isinstance(scalar, FloatFormat):
        return format_float(value, scalar)
    if scalar is not None:
        return format_int(value, *scalar)
    return str(value)         # a type we cannot tell: the raw bits


def _enum(g: Grammar, kind_name: str, value: int) -> str:
    kind = g.kinds.get(kind_name)
    if kind is None:
        return str(value)
    if kind.category == "ValueEnum":
        en = kind.by_value.get(value)
        return en.name if en else str(value)
    if value == 0:
        en = kind.by_value.get(0)
        return en.name if en else "0"
    parts = []
    for b in range(32):
        if value >> b & 1:
            en = kind.by_value.get(1 << b)
            parts.append(en.name if en else hex(1 << b))
    return "|".join(parts)


# ---------------------------------------------------------------------------------------------
# Instructions

def _decode_operands(g: Grammar, specs, words, start: int, ins: Instruction) -> list[tuple]:
    """(value, kind) pairs for words[start:] read with `specs` (an extended instruction's or an
    OpSpecConstantOp opcode's grammar), using the reader's operand decoding."""
    scratch = Instruction(ins.opcode, ins.opname, ins.offset, None, None, [], [])
    dec = _Decoder(g)
    i = start
    for o in specs:
        if o.quantifier == "*":
            while i < len(words):
                i = dec.operand(scratch, o, words, i)
        elif i < len(words) or o.quantifier != "?":
            i = dec.operand(scratch, o, words, i)
    if i != len(words):
        raise SpirvError(f"{len(words) - i} words left after the operands", offset=ins.offset,
                         opname=ins.opname, result_id=ins.result)
    return list(zip(scratch.operands, scratch.kinds))


def _tail(g: Grammar, specs, ins: Instruction, start: int) -> list[tuple]:
    """The operands after `start` read with `specs`; as plain ids where they do not fit (a
    malformed instruction is still worth printing in an error message)."""
    try:
        return _decode_operands(g, specs, list(ins.words), start, ins)
    except (SpirvError, IndexError):
        return [(w, "IdRef") for w in ins.words[start:]]


def _operand_pairs(g: Grammar, ins: Instruction, ctx: Context) -> list[tuple]:
    """(value or printed text, kind) for each operand after the result type and result."""
    ops, kinds = list(ins.operands), list(ins.kinds)
    if ins.opname in _EXT_INST_OPS and len(ins.words) >= 5:
        set_name = ctx.ext_sets.get(ins.words[3])
        spec = g.extinst.get(set_name, {}).get(ins.words[4])
        if spec is None:
            return [(ins.words[3], "IdRef"), (ins.words[4], "LiteralInteger")] + \
                [(w, "IdRef") for w in ins.words[5:]]
        return [(ins.words[3], "IdRef"), (spec.opname, "text")] + _tail(g, spec.operands, ins, 5)
    if ins.opcode == _OP_SPEC_CONSTANT_OP and len(ins.words) >= 4:
        spec = g.by_opcode.get(ins.words[3])
        if spec is None:
            return [(ins.words[3], "LiteralInteger")] + [(w, "IdRef") for w in ins.words[4:]]
        specs = [o for o in spec.operands if o.kind not in ("IdResultType", "IdResult")]
        return [(spec.opname[2:], "text")] + _tail(g, specs, ins, 4)
    if ins.opname == "OpSwitch" and ops:
        selector_type = ctx.value_types.get(ops[0])
        pairs = [(ops[0], "IdRef"), (ops[1], "IdRef")]
        for value, label in zip(ops[2::2], ops[3::2]):
            pairs += [(_typed_number(value, selector_type, ctx), "text"), (label, "IdRef")]
        return pairs
    return list(zip(ops, kinds))


def _format_operand(g: Grammar, value, kind: str, ins: Instruction, ctx: Context) -> str:
    if kind == "text":
        return value
    if kind in _ID_KINDS or kind in ("IdResultType", "IdResult"):
        return _ref(value, ctx)
    if kind == "LiteralString":
        return format_string(value)
    if kind == "LiteralFloat":
        return format_float(value, FLOAT_FORMATS[(32, None)])
    if kind == "LiteralContextDependentNumber":
        return _typed_number(value, ins.result_type, ctx)
    if kind.startswith("Literal"):
        return str(value)
    return _enum(g, kind, value)


def _ref(i: int, ctx: Context) -> str:
    return f"%{ctx.names.get(i, i)}"


def _format_parts(ins: Instruction, ctx: Context) -> tuple[str | None, str]:
    """(the result id's text or None, the rest of the line)."""
    g = grammar()
    parts = [ins.opname]
    if ins.result_type is not None:
        parts.append(_ref(ins.result_type, ctx))
    parts += [_format_operand(g, v, k, ins, ctx) for v, k in _operand_pairs(g, ins, ctx)]
    result = _ref(ins.result, ctx) if ins.result is not None else None
    return result, " ".join(parts)


def format_instruction(ins: Instruction, names: dict[int, str] | None = None,
                       context: Context | None = None) -> str:
    """One instruction as a line of text, e.g. `%5 = OpIAdd %uint %3 %4`.

    `names` maps ids to friendly names (without %); `context` (from `module_context`) says how
    to print literals that depend on types and ext-instruction names. Without it, constants
    print as their raw bits.
    """
    ctx = context or Context()
    if names is not None:
        ctx = Context(names, ctx.scalars, ctx.value_types, ctx.ext_sets)
    result, rest = _format_parts(ins, ctx)
    return f"{result} = {rest}" if result else rest


# ---------------------------------------------------------------------------------------------
# Modules

def decode_module(data: bytes) -> tuple[Header, list[Instruction]]:
    """The header and instructions of a module, for printing.

    This walks the module like reader.decode, except that OpSpecConstantOp keeps its operands
    after the opcode undecoded in `words` (the grammar lists none, so the reader rejects them;
    they are printed with the grammar of the opcode they name).
    """
    g = grammar()
    words = read_words(data)
    hdr = Header(((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF), words[2], words[3])
    dec = _Decoder(g)
    out = []
    i = 5
    while i < len(words):
        wc, op, off = words[i] >> 16, words[i] & 0xFFFF, 4 * i
        if wc == 0 or i + wc > len(words):
            raise SpirvError(f"bad word count {wc} ({len(words) - i} words left)", offset=off)
        w = words[i:i + wc]
        if op == _OP_SPEC_CONSTANT_OP and wc >= 4:
            ins = Instruction(op, "OpSpecConstantOp", off, w[1], w[2], [w[3]],
                              ["LiteralSpecConstantOpInteger"], tuple(w))
            dec.id_types[w[2]] = w[1]
        else:
            ins = dec.decode(w, off)
        out.append(ins)
        i += wc
    return hdr, out


def _header_lines(hdr: Header) -> list[str]:
    tool, tool_version = hdr.generator >> 16, hdr.generator & 0xFFFF
    tool_name = generator_names().get(tool, f"Unknown({tool})")
    return ["; SPIR-V",
            f"; Version: {hdr.version[0]}.{hdr.version[1]}",
            f"; Generator: {tool_name}; {tool_version}",
            f"; Bound: {hdr.bound}",
            "; Schema: 0"]


def disassemble(data: bytes, names: bool = True) -> str:
    """The module as text, one instruction a line, results right-aligned as spirv-dis does."""
    hdr, instructions = decode_module(data)
    ctx = module_context(instructions, names)
    lines = _header_lines(hdr)
    for ins in instructions:
        result, rest = _format_parts(ins, ctx)
        lines.append(f"{result:>12} = {rest}" if result else " " * 15 + rest)
    return "\n".join(lines) + "\n"
