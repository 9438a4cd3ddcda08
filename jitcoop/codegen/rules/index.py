"""The rules' registry as names alone, for the check that every instruction of a module has a
rule (Module load, `jitcoop.api`): that check runs in every process that loads a module, also
where every kernel then comes from the disk cache (a Vulkan application's test programs
through the driver), and importing the rule modules imports the whole code generator (0.15 s
of a 0.6 s warm start). The emitter checks against the registry itself.

    python3 -m jitcoop.codegen.rules.index     # write supported.py from the registry

tests/test_rules_index.py fails when supported.py and the registry differ.
"""
from __future__ import annotations

from pathlib import Path

from . import COLLECTIVE, EXT_RULES, RULES, load_all

HERE = Path(__file__).resolve().parent


def index_text() -> str:
    """supported.py as the loaded registry makes it."""
    load_all()
    ops = sorted(RULES.keys() | COLLECTIVE.keys())
    ext = sorted(EXT_RULES)
    lines = ['"""Every opname and extended instruction a lowering rule registers (written by',
             '`python3 -m jitcoop.codegen.rules.index` from the registry; do not edit)."""',
             "", "OPS = frozenset({"]
    lines += [f"    {op!r}," for op in ops]
    lines += ["})", "", "EXT = frozenset({"]
    lines += [f"    {pair!r}," for pair in ext]
    lines += ["})", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    (HERE / "supported.py").write_text(index_text())
