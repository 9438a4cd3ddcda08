"""Lowering rules: one function per opcode, registered by name, grouped by the extension that
defines the instruction. A rule receives the emitter and the instruction and emits LLVM IR through it.

Collective rules (barriers, subgroup operations) are registered separately: they run in the
workgroup scheduler over the lanes that wait at the instruction, not inside a lane loop.
"""
from __future__ import annotations

RULES: dict = {}            # opname -> rule(em, ins)
EXT_RULES: dict = {}        # (ext set name, instruction name) -> rule(em, ins, args)
COLLECTIVE: dict = {}       # opname -> rule(em, ins, wait_code, resume_label)


def rule(*names):
    def deco(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return deco


def ext_rule(set_name, *names):
    def deco(fn):
        for n in names:
            EXT_RULES[(set_name, n)] = fn
        return fn
    return deco


def collective(*names):
    def deco(fn):
        for n in names:
            COLLECTIVE[n] = fn
        return fn
    return deco


# Instructions without side effects whose result depends only on their operands: the generator
# may compute them once per workgroup when the operands are uniform.
PURE: set = set()
_core_pure: list = []       # set once the core arithmetic/composite rules are in PURE


def pure(*names):
    PURE.update(names)


CALLBACKS: dict = {}        # opname -> fn(em, ins) -> [(function id, role)] it calls per element


def callback_operands(em, ins) -> list:
    fn = CALLBACKS.get(ins.opname)
    return fn(em, ins) if fn is not None else []


RESIDENT_DEFS: set = set()  # opnames whose results always live in slot rows (KernelGen._find_resident)

REWRITES: list = []         # fn(em, ff, ids): rewrites of the flat function before it is split


def rewrite_flat(em, ff, ids):
    for fn in REWRITES:
        fn(em, ff, ids)


def load_all():
    from . import core_arith, core_composite, core_control, core_memory, core_atomic, core_subgroup, glsl_std450  # noqa: F401
    from . import khr_coopmat  # noqa: F401
    from . import nv_coopvec  # noqa: F401
    from . import nv_coopmat2  # noqa: F401
    from . import qcom_coopmat  # noqa: F401
    from . import khr_integer_dot  # noqa: F401
    if not _core_pure:
        _core_pure.append(True)
        # Arithmetic, conversions and composites are pure; OpCopyObject/OpSelect may carry pointers
        # whose metadata the generator tracks where they stand, so they stay in place.
        for name, fn in RULES.items():
            if fn.__module__.endswith((".core_arith", ".core_composite")) and name not in (
                    "OpCopyObject", "OpCopyLogical", "OpSelect", "OpBitcast"):
                PURE.add(name)


def check_supported(ins, ext_imports: dict, index=None):
    """Raise SpirvError if no rule lowers `ins` (a load-time check: never a crash at run time).
    index: the registry's names as (opnames, extended instructions), where the rules are not
    loaded (supported.py: loading them imports the whole code generator)."""
    from ...errors import SpirvError
    op = ins.opname
    if index is None:           # (the emitter's check, once per instruction: no set built per call)
        if op in RULES or op in COLLECTIVE:
            return
        ext = EXT_RULES
    else:
        if op in index[0]:
            return
        ext = index[1]
    if op == "OpExtInst":
        set_name = ext_imports.get(ins.operands[0], "?")
        if set_name.startswith("NonSemantic."):
            return
        from ...spirv.grammar import grammar
        spec = grammar().extinst.get(set_name, {}).get(ins.operands[1])
        name = spec.opname if spec else str(ins.operands[1])
        if (set_name, name) not in ext:
            raise SpirvError(f"extended instruction {set_name} {name} is not supported yet", **ins.where())
        return
    raise SpirvError("instruction is not supported yet", **ins.where())
