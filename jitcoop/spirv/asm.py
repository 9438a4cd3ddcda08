"""An assembler for SPIR-V text in the syntax of SPIRV-Tools' `spirv-as`, driven by the grammar.

    %name = OpFoo %type %operand Enumerant A|B 42 "string"   ; comment

Ids are written `%name` or `%12`. Numeric ids keep their number (like `spirv-as
--preserve-numeric-ids`); named ids get the lowest numbers not taken by a numeric id, in order of
first appearance, so text without numeric ids assembles exactly as `spirv-as` does. Numeric literals
take their width and signedness from the type they belong to (the result type of OpConstant, the
selector of OpSwitch). Floats read as spirv-as reads them: decimals to nearest for 32 and 64 bits,
and for narrower types (float16, bfloat16, fp8) as a 32-bit float then truncated toward zero; hex
floats (`0x1.8p+3`) truncated toward zero.

Beyond `spirv-as`: enumerants and ext-instruction numbers may be written as numbers (the
disassembler prints unknown values that way); `inf`, `-inf` and `nan` are accepted for floats; the
`; Version:`, `; Generator:` and `; Bound:` header comments that the disassembler writes set the
header words, so disassembled text reassembles to the same module.

Every problem is a SpirvError whose message starts with `line N:`.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import SpirvError
from .grammar import Grammar, InstrSpec, OperandSpec, grammar

MAGIC = 0x07230203
DEFAULT_VERSION = (1, 6)              # what spirv-as targets by default
DEFAULT_GENERATOR = 7 << 16           # Khronos SPIR-V Tools Assembler, version 0

# Spellings that newer grammars give to NV instructions and capabilities (SPV_EXT_long_vector,
# the EXT cooperative matrix renames). The packaged grammar may predate them, and spirv-dis from a
# newer SPIRV-Tools prints them, so they are accepted here when the grammar does not know them.
_RENAMED_OPS = {
    "OpCooperativeMatrixReduceEXT": 5366,
    "OpCooperativeMatrixPerElementOpEXT": 5369,
    "OpCooperativeMatrixConvertUseEXT": 5293,
    "OpTypeVectorIdEXT": 5288,
}
_RENAMED_ENUMERANTS = {
    ("Capability", "CooperativeMatrixReductionsEXT"): 5430,
    ("Capability", "CooperativeMatrixPerElementOperationsEXT"): 5432,
}


# ---------------------------------------------------------------------------------------------
# Tokens

@dataclass
class Token:
    kind: str          # "word", "string" or "="
    text: str          # for strings: the unescaped contents
    line: int


_TOKEN = re.compile(r'(?P<ws>[ \t\r\n]+)|(?P<comment>;[^\n]*)|(?P<eq>=)|(?P<string>")'
                    r'|(?P<word>[^\s;="]+)')


def _error(line: int, message: str, opname: str | None = None) -> SpirvError:
    return SpirvError(f"line {line}: {message}", opname=opname)


def _read_string(text: str, start: int, line: int) -> tuple[str, int, int]:
    """The string literal whose opening quote is at `start`: (contents, end, line after it).

    As in spirv-as, a backslash takes the next character literally (`\\"` is a quote, `\\n` an n).
    """
    out = []
    i, first_line = start + 1, line
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            i += 1
            c = text[i]
        elif c == '"':
            return "".join(out), i + 1, line
        if c == "\n":
            line += 1
        out.append(c)
        i += 1
    raise _error(first_line, "unterminated string literal")


def tokenize(text: str) -> tuple[list[Token], list[str]]:
    """The tokens of `text`, and the comments before the first token (the header block)."""
    tokens: list[Token] = []
    header: list[str] = []
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:   # cannot happen: every character matches one alternative
            raise _error(line, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup
        if kind == "string":
            s, pos, end_line = _read_string(text, pos, line)
            tokens.append(Token("string", s, line))
            line = end_line
            continue
        if kind == "word":
            tokens.append(Token("word", m.group(), line))
        elif kind == "eq":
            tokens.append(Token("=", "=", line))
        elif kind == "comment" and not tokens:
            header.append(m.group())
        line += m.group().count("\n")
        pos = m.end()
    return tokens, header


# ---------------------------------------------------------------------------------------------
# Numbers

_INT = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$")
_DEC_FLOAT = re.compile(r"([+-]?)((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)$")
_HEX_FLOAT = re.compile(r"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?[0-9]+)$")


def parse_int(text: str) -> tuple[int, bool] | None:
    """(value, written in hex) for an integer literal, or None. Like C's strtoull with base 0,
    as spirv-as reads them: `0x` is hex and a leading 0 is octal."""
    m = _INT.match(text)
    if m is None:
        return None
    sign, digits = m.groups()
    value = int(digits, 0) if digits[:2].lower() == "0x" else int(digits, 8 if digits[0] == "0" else 10)
    return (-value if sign == "-" else value), digits[:2].lower() == "0x"


def int_words(text: str, width: int, signed: bool) -> list[int]:
    """The words of an integer literal for an integer type of `width` bits. Raises ValueError.

    Decimal values must fit the type's range; a hex value may give any bit pattern of the width.
    Signed values narrower than 32 bits are sign-extended to the word, as the spec requires.
    """
    parsed = parse_int(text)
    if parsed is None:
        raise ValueError(f"invalid integer literal {text!r}")
    value, is_hex = parsed
    kind = f"{width}-bit {'signed' if signed else 'unsigned'} integer"
    if value < 0:
        if not signed:
            raise ValueError(f"cannot put a negative number in a {kind}")
        if value < -(1 << (width - 1)):
            raise ValueError(f"{text} does not fit in a {kind}")
    elif value >= (1 << (width - (0 if is_hex or not signed else 1))):
        raise ValueError(f"{text} does not fit in a {kind}")
    if signed and value >= 1 << (width - 1):      # a hex bit pattern with the sign bit set
        value -= 1 << width
    bits = value & ((1 << max(width, 32)) - 1)    # two's complement, sign-extended to the word
    return [bits & 0xFFFFFFFF, bits >> 32] if width > 32 else [bits]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format. `ieee`: the all-ones exponent is inf/NaN. Otherwise (the
    E4M3 fp8 format) there is no infinity and only the all-ones pattern is NaN."""
    width: int
    exp_bits: int
    mant_bits: int
    ieee: bool = True

    @property
    def bias(self) -> int:
        return (1 << (self.exp_bits - 1)) - 1

    @property
    def emax(self) -> int:
        return self.bias if self.ieee else self.bias + 1

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @property
    def exp_mask(self) -> int:
        return ((1 << self.exp_bits) - 1) << self.mant_bits

    @property
    def nan(self) -> int:
        """The default NaN: quiet (top fraction bit) for IEEE formats, all ones for E4M3."""
        quiet = 1 << (self.mant_bits - 1) if self.ieee else (1 << self.mant_bits) - 1
        return self.exp_mask | quiet

    @property
    def max_finite(self) -> int:
        """The bits of the largest finite value."""
        return (self.exp_mask if self.ieee else self.nan) - 1


FLOAT_FORMATS = {
    (16, None): FloatFormat(16, 5, 10),
    (32, None): FloatFormat(32, 8, 23),
    (64, None): FloatFormat(64, 11, 52),
    (16, "BFloat16KHR"): FloatFormat(16, 8, 7),
    (8, "Float8E4M3EXT"): FloatFormat(8, 4, 3, ieee=False),
    (8, "Float8E5M2EXT"): FloatFormat(8, 5, 2),
}


def _floor_log2(v: Fraction) -> int:
    e = v.numerator.bit_length() - v.denominator.bit_length()
    return e if v >= Fraction(2) ** e else e - 1


def round_to_format(v: Fraction, fmt: FloatFormat, truncate: bool = False) -> int | None:
    """The bits of the non-negative value `v` rounded to `fmt` (to nearest even, or toward zero),
    or None when it overflows the largest finite value."""
    if v == 0:
        return 0
    emin = 1 - fmt.bias
    e = max(_floor_log2(v), emin)
    scaled = v / Fraction(2) ** (e - fmt.mant_bits)           # in [2^m, 2^(m+1)) unless subnormal
    n = scaled.numerator // scaled.denominator
    rest = scaled - n
    if not truncate and (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n & 1)):
        n += 1
    if n >> (fmt.mant_bits + 1):                              # rounding carried into a new binade
        n >>= 1
        e += 1
    if n >> fmt.mant_bits == 0:                               # subnormal
        return n
    bits = ((e + fmt.bias) << fmt.mant_bits) | (n & ((1 << fmt.mant_bits) - 1))
    if e > fmt.emax or (not fmt.ieee and bits == fmt.nan):
        return None
    return bits


_F32 = FLOAT_FORMATS[(32, None)]


def float_value(bits: int, fmt: FloatFormat) -> Fraction:
    """The exact value of finite, non-negative `bits` (no sign bit, not inf or NaN)."""
    exp, frac = bits >> fmt.mant_bits, bits & ((1 << fmt.mant_bits) - 1)
    if exp:
        frac |= 1 << fmt.mant_bits
    return frac * Fraction(2) ** (max(exp, 1) - fmt.bias - fmt.mant_bits)


def _hex_float_bits(m: re.Match, fmt: FloatFormat) -> int:
    """A hex float, as spirv-as reads it: truncated toward zero; an exponent past the largest
    gives the all-ones exponent with the fraction bits kept (how spirv-dis writes inf and NaN)."""
    _, int_digits, frac_digits, exp = m.groups()
    frac_digits = frac_digits or ""
    if not int_digits and not frac_digits:
        raise ValueError("a hex float needs at least one digit")
    mantissa = int(int_digits + frac_digits, 16)
    v = Fraction(mantissa, 16 ** len(frac_digits)) * Fraction(2) ** int(exp)
    out_of_range = ValueError(f"{m.group(0)} is out of range for a {fmt.width}-bit float")
    e = _floor_log2(v) if v else 0
    if e > fmt.emax:
        if not fmt.ieee:
            raise out_of_range
        frac = v / Fraction(2) ** e - 1                         # the bits after the leading 1
        return fmt.exp_mask | (frac.numerator << fmt.mant_bits) // frac.denominator
    bits = round_to_format(v, fmt, truncate=True)
    if bits is None:
        raise out_of_range
    return bits


def float_bits(text: str, fmt: FloatFormat) -> int:
    """The bits of a float literal (decimal, hex float, inf or nan) in `fmt`. Raises ValueError."""
    sign = fmt.sign_bit if text.startswith("-") else 0
    body = text.lstrip("+-")
    if body in ("inf", "nan") and len(text) - len(body) <= 1:
        if body == "nan":
            return sign | fmt.nan
        if not fmt.ieee:
            raise ValueError("this format has no infinity")
        return sign | fmt.exp_mask
    m = _HEX_FLOAT.match(text)
    if m:
        return sign | _hex_float_bits(m, fmt)
    m = _DEC_FLOAT.match(text)
    if m is None:
        raise ValueError(f"invalid float literal {text!r}")
    value = Fraction(m.group(2))
    if fmt.width < 32:
        # As spirv-as does: read as a 32-bit float (to nearest), then truncate that toward zero.
        # A format without infinity (E4M3) takes nothing past its largest value.
        b32 = round_to_format(value, _F32)
        v32 = None if b32 is None else float_value(b32, _F32)
        too_big = v32 is None or (not fmt.ieee and v32 > float_value(fmt.max_finite, fmt))
        bits = None if too_big else round_to_format(v32, fmt, truncate=True)
    else:
        bits = round_to_format(value, fmt)
    if bits is None:
        raise ValueError(f"{text} is out of range for a {fmt.width}-bit float")
    return sign | bits


def float_words(text: str, fmt: FloatFormat) -> list[int]:
    bits = float_bits(text, fmt)
    return [bits & 0xFFFFFFFF, bits >> 32] if fmt.width > 32 else [bits]


def string_words(s: str) -> list[int]:
    """A literal string: UTF-8, NUL-terminated, padded with NULs to whole little-endian words."""
    raw = s.encode("utf-8") + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


# ---------------------------------------------------------------------------------------------
# The assembler

@dataclass
class _Scalar:
    """What a numeric literal of this type looks like."""
    kind: str                          # "int" or "float"
    width: int
    signed: bool = False
    fmt: FloatFormat | None = None


@dataclass
class _Inst:
    """The instruction being assembled."""
    spec: InstrSpec
    line: int
    result_token: Token | None
    words: list = field(default_factory=list)     # operand words (without the opcode word)
    result_type: int | None = None
    result: int | None = None
    first_id: int | None = None                   # the first IdRef operand (OpSwitch's selector)


_ID_KINDS = ("IdRef", "IdScope", "IdMemorySemantics")
_GENERATOR_LINE = re.compile(r";\s*Generator:\s*(.*?);\s*(\d+)\s*$")
_VERSION_LINE = re.compile(r";\s*Version:\s*(\d+)\.(\d+)\s*$")
_BOUND_LINE = re.compile(r";\s*Bound:\s*(\d+)\s*$")
_UNKNOWN_TOOL = re.compile(r"Unknown\((\d+)\)$")


class _Assembler:
    def __init__(self, g: Grammar, tokens: list[Token], preserve_numeric_ids: bool):
        self.g = g
        self.tokens = tokens
        self.pos = 0
        self.names: dict[str, int] = {}        # id text (without %) -> number
        self.preserved: set[int] = set()
        if preserve_numeric_ids:
            self.preserved = {int(t.text[1:]) for t in tokens
                              if t.kind == "word" and re.fullmatch(r"%[0-9]+", t.text)}
        self.next_id = 1
        self.first_use: dict[int, tuple] = {}   # id -> (line, text, opname) where first seen
        self.current_op: str | None = None
        self.defined: dict[int, int] = {}                 # id -> line of its definition
        self.scalars: dict[int, _Scalar] = {}             # type id -> literal shape
        self.value_types: dict[int, int] = {}             # result id -> its type id
        self.ext_sets: dict[int, str] = {}                # OpExtInstImport id -> set name
        self.words: list[int] = []

    # -- token stream ----------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token | None:
        i = self.pos + k
        return self.tokens[i] if i < len(self.tokens) else None

    def take(self, what: str) -> Token:
        t = self.peek()
        if t is None:
            last = self.tokens[-1].line if self.tokens else 1
            raise _error(last, f"expected {what}, found the end of the text")
        self.pos += 1
        return t

    def at_instruction_end(self) -> bool:
        """Whether the next token starts a new instruction (or there is none): optional and
        repeated operands stop there. Opcode names are `Op` and a capital; enumerants such as
        `OpenCL` or `OptNoneEXT` are not."""
        t = self.peek()
        if t is None:
            return True
        if t.kind == "word" and re.match(r"Op[A-Z0-9]", t.text):
            return True
        nxt = self.peek(1)
        return t.kind == "word" and t.text.startswith("%") and nxt is not None and nxt.kind == "="

    # -- ids --------------------------------------------------------------------------------
    def id_number(self, t: Token) -> int:
        if t.kind != "word" or not t.text.startswith("%") or len(t.text) < 2:
            raise _error(t.line, f"expected an id (%name or %number), found {_show(t)}")
        name = t.text[1:]
        if name.isdigit() and int(name) in self.preserved:
            n = int(name)
            if n == 0:
                raise _error(t.line, "id 0 is not a valid id")
        elif name in self.names:
            n = self.names[name]
        else:
            while self.next_id in self.preserved:
                self.next_id += 1
            n = self.names[name] = self.next_id
            self.next_id += 1
        self.first_use.setdefault(n, (t.line, t.text, self.current_op))
        return n

    # -- instructions -----------------------------------------------------------------------
    def run(self) -> None:
        while self.peek() is not None:
            self.instruction()
        for n, (line, text, opname) in sorted(self.first_use.items(), key=lambda kv: kv[1][0]):
            if n not in self.defined:
                raise _error(line, f"{text} is used but never defined", opname)

    def instruction(self) -> None:
        result_token = None
        if self.peek(1) is not None and self.peek(1).kind == "=":
            result_token = self.take("a result id")
            self.take("=")
        t = self.take("an instruction")
        if t.kind != "word" or not t.text.startswith("Op"):
            raise _error(t.line, f"expected an instruction (Op...), found {_show(t)}")
        spec = self.lookup_opcode(t)
        ins = _Inst(spec, t.line, result_token)
        if result_token is not None and not spec.has_result:
            raise _error(t.line, f"has no result id; remove '{result_token.text} ='", spec.opname)
        if result_token is None and spec.has_result:
            raise _error(t.line, f"needs a result id: write %name = {t.text} ...", spec.opname)
        self.current_op = spec.opname
        try:
            self.operands(ins, list(spec.operands))
        except SpirvError as e:
            if e.opname is not None:
                raise
            raise SpirvError(e.detail, opname=spec.opname) from None
        if not self.at_instruction_end():
            extra = self.peek()
            raise _error(extra.line, f"too many operands for {spec.opname}: {_show(extra)}",
                         spec.opname)
        self.finish(ins)

    def lookup_opcode(self, t: Token) -> InstrSpec:
        spec = self.g.by_name.get(t.text)
        if spec is None and t.text in _RENAMED_OPS:
            spec = self.g.by_opcode.get(_RENAMED_OPS[t.text])
        if spec is None:
            raise _error(t.line, f"unknown instruction {t.text}")
        return spec

    def finish(self, ins: _Inst) -> None:
        """Emit the instruction and remember what later literals need (types, ext sets)."""
        words = ins.words
        if len(words) + 1 > 0xFFFF:
            raise _error(ins.line, f"instruction too long ({len(words) + 1} words)", ins.spec.opname)
        self.words.append(((len(words) + 1) << 16) | ins.spec.opcode)
        self.words.extend(words)
        if ins.result is not None:
            if ins.result in self.defined:
                raise _error(ins.line, f"{ins.result_token.text} is already defined on line "
                             f"{self.defined[ins.result]}", ins.spec.opname)
            self.defined[ins.result] = ins.line
            if ins.result_type is not None:
                self.value_types[ins.result] = ins.result_type
        self.remember_type(ins)

    def remember_type(self, ins: _Inst) -> None:
        op, w = ins.spec.opname, ins.words
        if op == "OpTypeInt":
            self.scalars[ins.result] = _Scalar("int", w[1], signed=bool(w[2]))
        elif op == "OpTypeFloat":
            enc = self.g.enum_name("FPEncoding", w[2]) if len(w) > 2 else None
            fmt = FLOAT_FORMATS.get((w[1], enc))
            if fmt is not None:
                self.scalars[ins.result] = _Scalar("float", w[1], fmt=fmt)
        elif op == "OpExtInstImport":
            self.ext_sets[ins.result] = _words_string(w[1:])

    # -- operands ---------------------------------------------------------------------------
    def operands(self, ins: _Inst, specs: list[OperandSpec]) -> None:
        """Assemble operands as `specs` say; optional and repeated ones end at the next
        instruction."""
        i = 0
        while i < len(specs):
            o = specs[i]
            i += 1
            if o.quantifier == "*":
                while not self.at_instruction_end():
                    self.operand(ins, o)
                continue
            if o.quantifier == "?" and self.at_instruction_end():
                continue
            tail = self.operand(ins, o)
            if tail is not None:        # OpExtInst, OpSpecConstantOp: the operands after this one
                specs[i:] = tail        # follow the grammar of the instruction it names

    def operand(self, ins: _Inst, o: OperandSpec):
        """Assemble one operand into ins.words. Returns the operand specs that replace the rest of
        the instruction's, for operands that select another grammar; else None."""
        k = o.kind
        if k == "IdResult":
            ins.result = self.id_number(ins.result_token)
            ins.words.append(ins.result)
            return None
        if self.at_instruction_end():
            raise _error(ins.line, f"missing operand '{o.name or k}'")
        t = self.take(f"operand '{o.name or k}'")
        if k == "IdResultType":
            ins.result_type = self.id_number(t)
            ins.words.append(ins.result_type)
        elif k in _ID_KINDS:
            n = self.id_number(t)
            if ins.first_id is None:
                ins.first_id = n
            ins.words.append(n)
        elif k == "LiteralString":
            if t.kind != "string":
                raise _error(t.line, f"expected a quoted string, found {_show(t)}")
            ins.words.extend(string_words(t.text))
        elif k == "LiteralInteger":
            ins.words.extend(self.literal(t, lambda s: int_words(s, 32, False)))
        elif k == "LiteralFloat":
            ins.words.extend(self.literal(t, lambda s: float_words(s, _F32)))
        elif k == "LiteralContextDependentNumber":
            ins.words.extend(self.typed_number(t, ins.result_type, "result type"))
        elif k == "LiteralExtInstInteger":
            return self.ext_instruction(ins, t)
        elif k == "LiteralSpecConstantOpInteger":
            return self.spec_constant_op(ins, t)
        elif k == "PairLiteralIntegerIdRef":
            ins.words.extend(self.typed_number(t, self.value_types.get(ins.first_id), "selector type"))
            ins.words.append(self.id_number(self.take("a label id")))
        elif k == "PairIdRefLiteralInteger":
            ins.words.append(self.id_number(t))
            literal = self.take("a literal integer")
            ins.words.extend(self.literal(literal, lambda s: int_words(s, 32, False)))
        elif k == "PairIdRefIdRef":
            ins.words.append(self.id_number(t))
            ins.words.append(self.id_number(self.take("an id")))
        else:
            self.enumerant(ins, k, t)
        return None

    def literal(self, t: Token, encode) -> list[int]:
        if t.kind != "word":
            raise _error(t.line, f"expected a number, found {_show(t)}")
        try:
            return encode(t.text)
        except ValueError as e:
            raise _error(t.line, str(e)) from None

    def typed_number(self, t: Token, type_id: int | None, what: str) -> list[int]:
        """A numeric literal shaped by a scalar type (width, signedness, float format)."""
        scalar = self.scalars.get(type_id)
        if scalar is None:
            raise _error(t.line, f"cannot tell the width of literal {t.text}: the {what} is not a "
                         "known integer or float type")
        if scalar.kind == "int":
            return self.literal(t, lambda s: int_words(s, scalar.width, scalar.signed))
        return self.literal(t, lambda s: float_words(s, scalar.fmt))

    def enumerant(self, ins: _Inst, kind_name: str, t: Token) -> None:
        kind = self.g.kinds.get(kind_name)
        if kind is None or kind.category not in ("ValueEnum", "BitEnum"):
            raise _error(t.line, f"operand kind {kind_name} is not supported")
        if t.kind != "word":
            raise _error(t.line, f"expected a {kind_name}, found {_show(t)}")
        parts = t.text.split("|") if kind.category == "BitEnum" else [t.text]
        value = 0
        for part in parts:
            value |= self.enum_value(kind, part, t)
        ins.words.append(value)
        # Parameters follow the enumerant; for a mask, those of each set bit in increasing order.
        if kind.category == "ValueEnum":
            chosen = [kind.by_value.get(value)]
        else:
            chosen = [kind.by_value.get(1 << b) for b in range(32) if value >> b & 1]
        for en in chosen:
            if en is not None:
                self.operands(ins, list(en.parameters))

    def enum_value(self, kind, text: str, t: Token) -> int:
        en = kind.by_name.get(text)
        if en is not None:
            return en.value
        if (kind.kind, text) in _RENAMED_ENUMERANTS:
            return _RENAMED_ENUMERANTS[(kind.kind, text)]
        parsed = parse_int(text)
        if parsed is not None and 0 <= parsed[0] < 1 << 32:
            return parsed[0]
        raise _error(t.line, f"'{text}' is not a {kind.kind}")

    def ext_instruction(self, ins: _Inst, t: Token) -> list[OperandSpec] | None:
        """OpExtInst's instruction, by name in the set imported under the set id (or a number).
        Its operands follow the extended instruction's grammar when the set is known."""
        set_name = self.ext_sets.get(ins.first_id)
        if set_name is None:
            raise _error(t.line, "the set operand of OpExtInst is not an OpExtInstImport result")
        table = self.g.extinst_by_name.get(set_name, {})
        spec = table.get(t.text) if t.kind == "word" else None
        if spec is None:
            parsed = parse_int(t.text) if t.kind == "word" else None
            if parsed is None or not 0 <= parsed[0] < 1 << 32:
                raise _error(t.line, f"'{t.text}' is not an instruction of {set_name}")
            ins.words.append(parsed[0])
            spec = self.g.extinst.get(set_name, {}).get(parsed[0])
        else:
            ins.words.append(spec.opcode)
        return list(spec.operands) if spec is not None else None

    def spec_constant_op(self, ins: _Inst, t: Token) -> list[OperandSpec]:
        """OpSpecConstantOp's opcode, by name without `Op` (or a number); the operands after it
        follow that opcode's grammar, less its result type and result."""
        spec = None
        if t.kind == "word":
            spec = self.g.by_name.get("Op" + t.text)
            parsed = parse_int(t.text)
            if spec is None and parsed is not None:
                spec = self.g.by_opcode.get(parsed[0])
        if spec is None:
            raise _error(t.line, f"'{t.text}' is not an opcode for OpSpecConstantOp")
        ins.words.append(spec.opcode)
        return [o for o in spec.operands if o.kind not in ("IdResultType", "IdResult")]


def _show(t: Token) -> str:
    return f'"{t.text}"' if t.kind == "string" else f"'{t.text}'"


def _words_string(words: list[int]) -> str:
    raw = struct.pack(f"<{len(words)}I", *words)
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _header_fields(comments: list[str]) -> tuple[tuple | None, int | None, int]:
    """The version, generator and bound written in a disassembler's header comments (None, None
    and 0 where absent)."""
    version = generator = None
    bound = 0
    for c in comments:
        if m := _VERSION_LINE.match(c):
            version = (int(m.group(1)), int(m.group(2)))
        elif m := _GENERATOR_LINE.match(c):
            tool = _generator_tool(m.group(1))
            if tool is not None:
                generator = (tool << 16) | int(m.group(2))
        elif m := _BOUND_LINE.match(c):
            bound = int(m.group(1))
    return version, generator, bound


def _generator_tool(name: str) -> int | None:
    m = _UNKNOWN_TOOL.match(name)
    if m:
        return int(m.group(1))
    from .disasm import generator_names      # the table the disassembler prints names from
    for tool, tool_name in generator_names().items():
        if tool_name == name:
            return tool
    return None


def assemble(text: str, *, version: tuple[int, int] | None = None, generator: int | None = None,
             preserve_numeric_ids: bool = True) -> bytes:
    """Assemble SPIR-V text into a module (little-endian bytes).

    `version` (major, minor) and `generator` set the header; by default they come from the
    `; Version:` / `; Generator:` comments at the top of the text, else SPIR-V 1.6 and the
    SPIRV-Tools assembler's id. The id bound is one more than the largest id, or the `; Bound:`
    of the header comments if that is larger (a module whose bound has room to spare then
    reassembles to the same words).
    """
    g = grammar()
    tokens, header = tokenize(text)
    head_version, head_generator, head_bound = _header_fields(header)
    version = version or head_version or DEFAULT_VERSION
    generator = generator if generator is not None else (
        head_generator if head_generator is not None else DEFAULT_GENERATOR)
    a = _Assembler(g, tokens, preserve_numeric_ids)
    a.run()
    bound = max(max(a.defined, default=0) + 1, head_bound)
    header_words = [MAGIC, (version[0] << 16) | (version[1] << 8), generator, bound, 0]
    return struct.pack(f"<{5 + len(a.words)}I", *header_words, *a.words)
