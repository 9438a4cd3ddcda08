"""Element loops: an instruction on each component of a long fragment, as a loop over them.

A fragment holds a matrix's elements over the invocations that share it: a 16 x 16 subgroup
matrix is 8 components per invocation, a 128 x 128 workgroup matrix 64 at 256 invocations, but
a workgroup of one invocation holds a 32 x 64 matrix in 2048. The rules lower an instruction on a
fragment component by component, each component its own instructions: straight-line code that
LLVM schedules freely, the fastest form for the usual lengths. Past LONG_FRAGMENT components that
code is what the compile spends its time on: the production flash attention with its default
specialization constants (one invocation per workgroup) made 139,000 instructions of it, and
LLVM's optimizer took 105 of the compile's 109 s.

So a matrix value longer than that lives in slot rows (analysis/matrices.py: `long`), and an
instruction that computes each component from the same component of its operands (ELEMENTWISE,
and OpLoad / OpStore between such a value and memory) runs its own rule once, in a loop over the
components: within the loop the rule sees the instruction's matrix types as one-component
matrices, each matrix operand as its component e (loaded from its rows, or a splat constant's
value), pointers into memory advanced to component e, scalars as they are; what it defines is
stored to component e of the result's rows (`Collectives.resident_store`). One rule per
instruction still says what an instruction computes; this module only says how often it runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..analysis.flatten import used_ids
from ..errors import SpirvError
from ..spirv.types import CoopMat, leaves

# The most components per invocation an instruction on a fragment is written out for; longer
# ones loop. Measured on tests/shaders/long_fragments.comp (a dozen element-wise instructions)
# at 32 to 1024 components, cold compiles and dispatches on one thread, loops against
# written-out code: from 64 components on the loops compile 1.4-50x and run 1.1-6.6x faster;
# at 32 they compile 1.7-2.4x faster but ran 0.74-0.82x as fast in three of four runs
# (docs/design/element-loops.md).
LONG_FRAGMENT = 32

# Instructions whose component i is a function of component i of each matrix operand (and of
# scalar operands): the arithmetic and conversions cooperative matrices allow, the bitwise ones
# a module may use on integer matrices, and a matrix built from one value (a splat). Copies of
# matrices are block copies already (Collectives.resident_copy).
ELEMENTWISE = frozenset({
    "OpFNegate", "OpSNegate", "OpFAdd", "OpFSub", "OpFMul", "OpFDiv", "OpFRem", "OpFMod",
    "OpIAdd", "OpISub", "OpIMul", "OpUDiv", "OpSDiv", "OpUMod", "OpSRem", "OpSMod",
    "OpMatrixTimesScalar", "OpVectorTimesScalar", "OpFConvert", "OpSConvert", "OpUConvert",
    "OpConvertFToS", "OpConvertFToU", "OpConvertSToF", "OpConvertUToF", "OpQuantizeToF16",
    "OpBitwiseAnd", "OpBitwiseOr", "OpBitwiseXor", "OpNot", "OpShiftLeftLogical",
    "OpShiftRightLogical", "OpShiftRightArithmetic", "OpSelect", "OpCompositeConstruct",
})
MEMORY = frozenset({"OpLoad", "OpStore"})


@dataclass
class ElementLoop:
    """What the rule running inside an element loop sees instead of whole fragments."""
    e: str                                  # the component index (an i64 register)
    result: int | None                      # the value whose component the rule defines
    one: dict = field(default_factory=dict)  # id() of a matrix type -> its one-component copy

    def component_type(self, t):
        if not isinstance(t, CoopMat):
            return t
        c = self.one.get(id(t))
        if c is None:
            c = self.one[id(t)] = replace(t, n=1)
        return c


def _matrix(em, x) -> CoopMat | None:
    try:
        t = em.value_type(x)
    except SpirvError:
        return None             # a label, a type, an extended instruction set
    return t if isinstance(t, CoopMat) else None


def _splat(em, x) -> str | None:
    """A constant matrix's one value when every component has it."""
    if not em.spec.is_const(x):
        return None
    v = em.const_leaves(x)
    return v[0] if len(set(v)) == 1 else None


def length(em, ins) -> int:
    """The components per invocation an element loop would run `ins` over, or 0 where it runs
    as written: not an element-wise instruction, a fragment of at most LONG_FRAGMENT
    components, or an operand the loop cannot take one component of."""
    op = ins.opname
    if (op not in ELEMENTWISE and op not in MEMORY) or not em.options.element_loops:
        return 0
    if op == "OpCompositeConstruct" and len(ins.operands) != 1:
        return 0                # components listed one by one (not a valid matrix, but read)
    if op in MEMORY and ins.operands[0] in em.homes:
        return 0                # its address reloaded at each use: not one the loop can advance
    if op == "OpStore":
        t = _matrix(em, ins.operands[1])
        if t is None or t.n <= LONG_FRAGMENT or em.ptr(ins.operands[0], ins).kind != "mem":
            return 0
    else:
        if ins.result is None or ins.result not in em.resident or ins.result in em.hoisted:
            return 0
        t = em.rtype(ins)
        if not isinstance(t, CoopMat) or t.n <= LONG_FRAGMENT:
            return 0
        if op == "OpLoad":
            return t.n if em.ptr(ins.operands[0], ins).kind == "mem" and _uniform_stride(t) else 0
    for x in _matrix_operands(em, ins):
        if _matrix(em, x).n != t.n or (x not in em.resident and _splat(em, x) is None):
            return 0
    if op == "OpStore" and not _uniform_stride(t):
        return 0
    return t.n


def _matrix_operands(em, ins) -> list:
    """The matrix values an element loop takes component e of: a store's value, else every
    matrix operand (once each)."""
    if ins.opname == "OpStore":
        return [ins.operands[1]]
    return [x for x in dict.fromkeys(used_ids(ins)) if _matrix(em, x) is not None]


def _uniform_stride(t: CoopMat) -> bool:
    return all(off == i * t.elem.size for i, (_, off) in enumerate(leaves(t)))


def lower(em, ins, rule, n: int):
    """Run `rule` for `ins` once per component, in a loop of n iterations."""
    op = ins.opname
    mats = _matrix_operands(em, ins)
    ptr_id = ins.operands[0] if op in MEMORY else None
    result = None if op == "OpStore" else ins.result
    if result is not None:
        em.resident_block(result)            # its rows, sized from the whole type
    p = em.ptr(ptr_id, ins) if ptr_id is not None else None
    if p is not None:
        # the whole access checked once, so that a failure names the instruction's extent and
        # nothing is stored before it
        p = replace(p, addr=em.check_range(ins, p, p.addr, n * p.pointee.elem.size, write=op == "OpStore"))
    with em.rolled_loop("elem", n) as e:
        loop = ElementLoop(e, result)
        saved = {x: em.names.get(x) for x in mats}
        for x in mats:
            em.names[x] = [_component(em, x, e)]
        if p is not None:
            size = p.pointee.elem.size
            off = em.op(f"mul i64 {e}, {size}")
            # in bounds (checked above): static_off 0 within root_min makes the rule's check none
            em.ptrs[ptr_id] = replace(p, pointee=loop.component_type(p.pointee), static_off=0, root_min=size,
                                      addr=em.op(f"add i64 {p.addr}, {off}"))
        em.elem_loop = loop
        try:
            rule(em, ins)
        finally:
            em.elem_loop = None
            for x, v in saved.items():
                if v is None:
                    em.names.pop(x, None)
                else:
                    em.names[x] = v
            if p is not None:
                em.ptrs[ptr_id] = p


def _component(em, x, e: str) -> str:
    return em.resident_component(x, e) if x in em.resident else _splat(em, x)
