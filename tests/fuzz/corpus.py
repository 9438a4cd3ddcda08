"""The committed reproducers (tests/fuzz/corpus): modules the fuzzer found jitcoop failing on, each
with what it must do now.

An entry is NAME.spv (or NAME.spvasm, assembled when read) and NAME.json:

    {"recipe": "tests/shaders/...spv" or null,   the seed shader whose recipe dispatches it
     "fit": true,                                 adapt the recipe's bindings to the kernel (case.py)
     "expect": "spirv_load",                      the outcome it must have (tests/fuzz/case.py)
     "match": "regular expression",               searched in the error message
     "found": "...",                              what it did when found, and how it was made
     "xfail": "reason",                           only for an engine bug not fixed yet
     "slow": true, "compile_timeout": 900}        a module that takes minutes to compile

`python3 -m tests.fuzz keep REPRO.json NAME` copies a campaign's reproducer here with its
current outcome and message, to be edited into a precise expectation.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .campaign import case_for

CORPUS = Path(__file__).resolve().parent / "corpus"


@dataclass
class Entry:
    name: str
    data: bytes
    info: dict

    def case(self) -> dict:
        c = case_for(self.info.get("shader") or self.name, self.info.get("recipe"), 0, data=self.data,
                     compile_timeout=self.info.get("compile_timeout", 60.0))
        c["fit"] = self.info.get("fit", True)
        return c


def entries() -> list[Entry]:
    out = []
    for j in sorted(CORPUS.glob("*.json")):
        spv, asm = j.with_suffix(".spv"), j.with_suffix(".spvasm")
        if spv.exists():
            data = spv.read_bytes()
        else:
            from jitcoop.spirv.asm import assemble
            data = assemble(asm.read_text())
        out.append(Entry(j.stem, data, json.loads(j.read_text())))
    return out
