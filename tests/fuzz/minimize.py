"""Shrinking a failing module while it keeps failing the same way (the same signature).

First the debug information goes in one step (names, source text, line information,
non-semantic instructions), then instructions are removed by delta debugging: chunks of the
removable ones (declarations, decorations other than those of layout and binding, execution
modes, function-body instructions other than terminators, whole functions other than the entry
point's), halving the chunk size down to one instruction, within a budget of runs. A module the editable model cannot read (a word-level
mutant out of step) is kept as it is.
"""
from __future__ import annotations

from typing import Callable

from jitcoop.spirv.grammar import grammar
from metamorphic.ir import TERMINATORS, Module

_DEBUG = ("OpName", "OpMemberName", "OpSource", "OpSourceContinued", "OpSourceExtension", "OpString",
          "OpLine", "OpNoLine", "OpModuleProcessed")


def _is_debug(m: Module, ins) -> bool:
    if ins.opname in _DEBUG:
        return True
    if ins.opname == "OpExtInst":
        imp = next((g for g in m.globals if g.opname == "OpExtInstImport" and g.result == ins.words[3]), None)
        return imp is not None and b"NonSemantic" in bytes(_u8(imp.words[2:]))
    return False


def _u8(words):
    for w in words:
        yield from (w & 0xFF, (w >> 8) & 0xFF, (w >> 16) & 0xFF, w >> 24)


# Decorations that a valid module needs where they are (a block's layout, a variable's binding):
# removing one makes the module invalid in a new way, not smaller in the old one.
_KEEP_DECORATIONS = {grammar().enum_value("Decoration", n) for n in
                     ("Block", "BufferBlock", "Offset", "ArrayStride", "MatrixStride", "Binding", "DescriptorSet",
                      "BuiltIn", "SpecId", "RowMajor", "ColMajor")}


def _units(m: Module) -> list:
    """Everything that may be removed, as (kind, object): declarations, decorations other than
    layout and binding ones, execution modes, body instructions, functions."""
    def removable(g):
        if g.opname in ("OpDecorate", "OpMemberDecorate"):
            return g.words[2 if g.opname == "OpDecorate" else 3] not in _KEEP_DECORATIONS
        return g.opname in ("OpExecutionMode", "OpExecutionModeId", "OpExtension", "OpCapability") or (
            g.opname.startswith(("OpConstant", "OpSpecConstant", "OpVariable", "OpType"))
            and g.opname != "OpTypeForwardPointer")     # what lets a pointer type come before its pointee
    units = [("global", g) for g in m.globals if removable(g)]
    entry = {g.words[2] for g in m.globals if g.opname == "OpEntryPoint"}
    for f in m.functions:
        if f.id not in entry:
            units.append(("function", f))
        for b in f.blocks:
            for ins in b.body:
                if ins.opname not in TERMINATORS:
                    units.append(("body", (b, ins)))
    return units


def _without(data: bytes, drop: set[int]) -> bytes | None:
    """The module with the units at these indices (of _units of a fresh parse) removed."""
    m = Module(data)
    units = _units(m)
    gone = [units[i] for i in drop]
    for kind, x in gone:
        if kind == "global":
            m.globals.remove(x)
        elif kind == "function":
            m.functions.remove(x)
        else:
            b, ins = x
            if ins in b.body:
                b.body.remove(ins)
    return m.emit()


def minimize(data: bytes, fails: Callable[[bytes], bool], budget: int = 200) -> tuple[bytes, int]:
    """The smallest variant of `data` found for which `fails` holds, and the runs it took."""
    runs = 0
    try:
        m = Module(data)
    except Exception:           # noqa: BLE001 - unreadable for the model: keep it whole
        return data, runs
    debug = [g for g in m.globals if _is_debug(m, g)]
    body_debug = [(b, i) for f in m.functions for b in f.blocks for i in b.body if _is_debug(m, i)]
    if debug or body_debug:
        for g in debug:
            m.globals.remove(g)
        for b, i in body_debug:
            b.body.remove(i)
        smaller = m.emit()
        runs += 1
        if fails(smaller):
            data = smaller
    n = len(_units(Module(data)))
    chunk = max(1, n // 2)
    while chunk >= 1 and runs < budget:
        start, progressed = 0, False
        while start < n and runs < budget:
            drop = set(range(start, min(n, start + chunk)))
            try:
                smaller = _without(data, drop)
            except Exception:   # noqa: BLE001 - the model could not write this cut
                smaller = None
            runs += 1
            if smaller is not None and fails(smaller):
                data, n, progressed = smaller, n - len(drop), True
            else:
                start += chunk
        if not progressed:
            chunk //= 2
    return data, runs
