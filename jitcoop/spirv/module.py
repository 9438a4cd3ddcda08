"""The module model: a decoded SPIR-V module indexed for the later passes.

This holds what the binary says and nothing that depends on specialization: types, constants and
array lengths that involve spec constants are resolved by `jitcoop.spirv.specialize`.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from ..errors import SpirvError
from .grammar import grammar
from .reader import Instruction, decode
from .validate import validate


@dataclass
class Block:
    label: int
    instrs: list                     # body instructions (phis first), without merge and terminator
    merge: Instruction | None        # OpSelectionMerge / OpLoopMerge
    term: Instruction                # the terminator
    offset: int = 0

    @property
    def phis(self):
        return [i for i in self.instrs if i.opname == "OpPhi"]


@dataclass
class Function:
    id: int
    result_type: int
    type_id: int
    control: int
    params: list                     # OpFunctionParameter instructions
    blocks: list                     # Block, entry first
    offset: int = 0
    callees: set = field(default_factory=set)

    def block_map(self):
        return {b.label: b for b in self.blocks}


@dataclass
class EntryPoint:
    model: int
    function: int
    name: str
    interface: list
    modes: list = field(default_factory=list)   # (mode name, operands, is_id)
    ins: Instruction | None = None              # the OpEntryPoint


TERMINATORS = {"OpBranch", "OpBranchConditional", "OpSwitch", "OpReturn", "OpReturnValue",
               "OpKill", "OpUnreachable", "OpTerminateInvocation"}
GLOBAL_DECLS = ("OpType", "OpConstant", "OpSpecConstant", "OpVariable", "OpUndef")


class Module:
    """A decoded module. `defs` maps every result id of a global declaration to its instruction."""

    def __init__(self, data: bytes):
        g = grammar()
        self.data = bytes(data)
        self.header, self.instructions = decode(self.data, g)
        self.capabilities: list[str] = []
        self.extensions: list[str] = []
        self.ext_imports: dict[int, str] = {}
        self.entry_points: list[EntryPoint] = []
        self.names: dict[int, str] = {}
        self.member_names: dict[tuple, str] = {}
        self.decorations: dict[int, list] = defaultdict(list)          # id -> [(name, args)]
        self.member_decorations: dict[tuple, list] = defaultdict(list)  # (id, member) -> [(name, args)]
        self.defs: dict[int, Instruction] = {}          # types, constants, global variables, undefs
        self.global_order: list[Instruction] = []
        self.functions: dict[int, Function] = {}
        self.all_defs: dict[int, Instruction] = {}      # every instruction with a result id
        self._build(g)

    @cached_property
    def data_key(self) -> str:
        """A hash of the module's bytes (what a compile process keeps it by: runtime.compilers)."""
        return hashlib.sha256(self.data).hexdigest()

    # -- decoding into the model ------------------------------------------------------------------
    def _build(self, g):
        fn = None
        block = None
        modes = []
        for ins in self.instructions:
            op = ins.opname
            if ins.result is not None:
                if ins.result in self.all_defs:
                    raise ins.error(f"id %{ins.result} is defined twice")
                self.all_defs[ins.result] = ins
            if op == "OpCapability":
                self.capabilities.append(g.enum_name("Capability", ins.operands[0]))
            elif op == "OpExtension":
                self.extensions.append(ins.operands[0])
            elif op == "OpExtInstImport":
                self.ext_imports[ins.result] = ins.operands[0]
            elif op == "OpEntryPoint":
                self.entry_points.append(EntryPoint(ins.operands[0], ins.operands[1], ins.operands[2],
                                                    list(ins.operands[3:]), ins=ins))
            elif op in ("OpExecutionMode", "OpExecutionModeId"):
                modes.append((ins.operands[0], g.enum_name("ExecutionMode", ins.operands[1]),
                              list(ins.operands[2:]), op == "OpExecutionModeId"))
            elif op == "OpName":
                self.names[ins.operands[0]] = ins.operands[1]
            elif op == "OpMemberName":
                self.member_names[(ins.operands[0], ins.operands[1])] = ins.operands[2]
            elif op == "OpDecorate" or op == "OpDecorateId" or op == "OpDecorateString":
                self.decorations[ins.operands[0]].append(
                    (g.enum_name("Decoration", ins.operands[1]), list(ins.operands[2:])))
            elif op in ("OpMemberDecorate", "OpMemberDecorateString"):
                self.member_decorations[(ins.operands[0], ins.operands[1])].append(
                    (g.enum_name("Decoration", ins.operands[2]), list(ins.operands[3:])))
            elif op == "OpFunction":
                if fn is not None:
                    raise ins.error("OpFunction inside a function (missing OpFunctionEnd)")
                fn = Function(ins.result, ins.result_type, ins.operands[1], ins.operands[0], [], [],
                              ins.offset)
            elif op == "OpFunctionParameter":
                if fn is None or fn.blocks:
                    raise ins.error("OpFunctionParameter outside a function header")
                fn.params.append(ins)
            elif op == "OpFunctionEnd":
                if fn is None:
                    raise ins.error("OpFunctionEnd without OpFunction")
                if block is not None:
                    raise ins.error(f"block %{block[0]} has no terminator")
                self.functions[fn.id] = fn
                fn = None
            elif op == "OpLabel":
                if fn is None:
                    raise ins.error("OpLabel outside a function")
                if block is not None:
                    raise ins.error(f"block %{block[0]} has no terminator")
                block = [ins.result, [], None, ins.offset]
            elif fn is not None and block is not None:
                if op in ("OpSelectionMerge", "OpLoopMerge"):
                    block[2] = ins
                elif op in TERMINATORS:
                    fn.blocks.append(Block(block[0], block[1], block[2], ins, block[3]))
                    block = None
                else:
                    if op == "OpFunctionCall":
                        fn.callees.add(ins.operands[0])
                    block[1].append(ins)
            elif fn is not None and (op in ("OpLine", "OpNoLine") or (
                    op == "OpExtInst" and self._non_semantic(ins.operands[0]))):
                # debug information between blocks (spirv-opt puts DebugNoScope after a block's
                # terminator): it carries no semantics, so it is dropped
                continue
            elif fn is not None:
                where = "between two blocks" if fn.blocks else "before the function's first OpLabel"
                raise ins.error(f"{op} {where}: only debug information may stand outside a block")
            elif op.startswith(GLOBAL_DECLS) or op in ("OpTypeForwardPointer", "OpConstantFunctionPointerINTEL"):
                if ins.result is not None:
                    self.defs[ins.result] = ins
                self.global_order.append(ins)
            elif op in ("OpLine", "OpNoLine", "OpSource", "OpSourceExtension", "OpSourceContinued",
                        "OpString", "OpModuleProcessed", "OpMemoryModel", "OpExtInst",
                        "OpDecorationGroup", "OpGroupDecorate", "OpGroupMemberDecorate"):
                if op == "OpExtInst" and ins.result is not None:
                    self.defs[ins.result] = ins      # non-semantic debug info at global scope
            else:
                raise ins.error("instruction is not allowed at module scope")
        if fn is not None:
            raise SpirvError("module ends inside a function (missing OpFunctionEnd)",
                             offset=len(self.data))
        for func_id, mode, args, is_id in modes:
            for ep in self.entry_points:
                if ep.function == func_id:
                    ep.modes.append((mode, args, is_id))
        self._check_ids()
        validate(self)

    _ID_KINDS = ("IdRef", "IdScope", "IdMemorySemantics")
    _NAMING = ("OpName", "OpMemberName", "OpDecorate", "OpMemberDecorate", "OpDecorateId",
               "OpDecorateString", "OpMemberDecorateString", "OpDecorationGroup",
               "OpGroupDecorate", "OpGroupMemberDecorate", "OpTypeForwardPointer")

    def _non_semantic(self, set_id) -> bool:
        """An extended instruction set with no semantics (debug information, debug printf)."""
        name = self.ext_imports.get(set_id, "")
        return name.startswith(("NonSemantic.", "DebugInfo", "OpenCL.DebugInfo"))

    def _check_ids(self):
        """Every id an instruction uses is defined somewhere in the module, and every result type
        is a type: found at load, with the instruction that uses it."""
        defined = self.all_defs
        for ins in self.instructions:
            if ins.opname in self._NAMING or ins.opname.startswith("OpExtInst"):
                continue
            if ins.result_type is not None:
                t = defined.get(ins.result_type)
                if t is None or not t.opname.startswith("OpType"):
                    raise ins.error(f"result type %{ins.result_type} is not a type defined in the module")
            for x, k in zip(ins.operands, ins.kinds):
                if k in self._ID_KINDS and x not in defined:
                    raise ins.error(f"operand %{x} is not defined anywhere in the module")
        for ep in self.entry_points:
            if ep.function not in self.functions:
                raise SpirvError(f"entry point {ep.name!r} names %{ep.function}, which is not a "
                                 "function of this module")

    # -- queries ----------------------------------------------------------------------------------
    def decoration(self, id_: int, name: str, default=None):
        for n, args in self.decorations.get(id_, ()):
            if n == name:
                return args
        return default

    def has_decoration(self, id_: int, name: str) -> bool:
        return any(n == name for n, _ in self.decorations.get(id_, ()))

    def member_decoration(self, id_: int, member: int, name: str, default=None):
        for n, args in self.member_decorations.get((id_, member), ()):
            if n == name:
                return args
        return default

    def entry_point(self, name: str | None) -> EntryPoint:
        eps = [e for e in self.entry_points if e.model == 5]      # GLCompute
        if not eps:
            if self.entry_points:
                e = self.entry_points[0]
                model = grammar().enum_name("ExecutionModel", e.model)
                raise e.ins.error(f"entry point {e.name!r} is a {model} entry point; jitcoop runs GLCompute "
                                  "(compute) entry points, and the module has none")
            raise SpirvError("the module has no entry point")
        if name is None:
            return eps[0]
        for e in eps:
            if e.name == name:
                return e
        raise SpirvError(f"no GLCompute entry point named {name!r}; the module has "
                         f"{', '.join(repr(e.name) for e in eps)}")

    def name_of(self, id_: int) -> str:
        return self.names.get(id_) or f"%{id_}"

    def reachable_functions(self, root: int) -> list[int]:
        seen, stack = [], [root]
        while stack:
            f = stack.pop()
            if f in seen:
                continue
            if f not in self.functions:
                raise SpirvError(f"call of %{f}, which is not a function of this module")
            seen.append(f)
            stack.extend(self.functions[f].callees)
        return seen
