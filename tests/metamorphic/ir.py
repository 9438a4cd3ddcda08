"""A SPIR-V module as editable words, for the metamorphic transforms.

jitcoop's reader decodes a module for reading; the transforms need to edit one: split blocks,
insert instructions and blocks, rename uses. Here every instruction keeps its words, and the
grammar walk below records where its result type, result id and id operands sit in them, so a
use can be renamed by overwriting one word. Functions are lists of blocks; `emit` writes the
words back with the new id bound.

Only what the transforms need is modelled: the CFG (successors from terminators, predecessors),
dominators, structured-control-flow headers, and finding or adding the few global declarations
(bool type, constants, OpUndef) that new code uses.
"""
from __future__ import annotations

import struct

from jitcoop import graph
from jitcoop.spirv.grammar import grammar
from jitcoop.spirv.reader import read_words

_ID_KINDS = ("IdRef", "IdScope", "IdMemorySemantics")
TERMINATORS = {"OpBranch", "OpBranchConditional", "OpSwitch", "OpReturn", "OpReturnValue", "OpKill",
               "OpUnreachable", "OpTerminateInvocation"}
MERGES = ("OpSelectionMerge", "OpLoopMerge")
# Instructions that may stand among the phis at a block's start (debug line information).
_PHI_REGION = ("OpPhi", "OpLine", "OpNoLine")


class Inst:
    """One instruction: its words, and the word positions of its type, result and id operands."""

    __slots__ = ("words", "opname", "type_pos", "result_pos", "id_pos")

    def __init__(self, words, opname, type_pos, result_pos, id_pos):
        self.words = list(words)
        self.opname = opname
        self.type_pos = type_pos
        self.result_pos = result_pos
        self.id_pos = id_pos

    @property
    def type_id(self):
        return self.words[self.type_pos] if self.type_pos is not None else None

    @property
    def result(self):
        return self.words[self.result_pos] if self.result_pos is not None else None

    def uses(self):
        """The ids this instruction reads (labels of branch targets included)."""
        return [self.words[p] for p in self.id_pos]

    def replace_use(self, old, new) -> int:
        n = 0
        for p in self.id_pos:
            if self.words[p] == old:
                self.words[p] = new
                n += 1
        return n

    # OpPhi: (value, parent) pairs from word 3 on.
    def phi_pairs(self):
        return list(zip(self.words[3::2], self.words[4::2]))

    def set_phi_parent(self, old, new):
        for p in range(4, len(self.words), 2):
            if self.words[p] == old:
                self.words[p] = new

    def __repr__(self):
        r = f"%{self.result} = " if self.result is not None else ""
        return f"{r}{self.opname} {self.words[1:]}"


def _string_words(words, i):
    j = i
    while j < len(words):
        w = words[j]
        j += 1
        if any(((w >> s) & 0xFF) == 0 for s in (0, 8, 16, 24)):
            return j
    raise ValueError("string operand without a terminating NUL")


class _Walker:
    """Finds the positions of a result type, result and id operands by walking the grammar (as
    jitcoop's decoder does, with the same context: the width of constants and switch selectors)."""

    def __init__(self):
        self.g = grammar()
        self.widths = {}        # type id -> bit width (int and float types)
        self.types = {}         # result id -> type id

    def inst(self, words) -> Inst:
        op = words[0] & 0xFFFF
        spec = self.g.by_opcode[op]
        st = {"type": None, "result": None, "ids": [], "words": words, "op": spec.opname}
        i = self._operands(st, spec.operands, 1)
        if i != len(words):
            raise ValueError(f"{spec.opname}: {len(words)} words, operands use {i}")
        ins = Inst(words, spec.opname, st["type"], st["result"], st["ids"])
        if ins.result is not None and ins.type_id is not None:
            self.types[ins.result] = ins.type_id
        if spec.opname in ("OpTypeInt", "OpTypeFloat"):
            self.widths[ins.result] = words[2]
        return ins

    def _operands(self, st, specs, i):
        words = st["words"]
        for o in specs:
            if o.quantifier == "?":
                if i < len(words):
                    i = self._operand(st, o, i)
            elif o.quantifier == "*":
                while i < len(words):
                    i = self._operand(st, o, i)
            else:
                i = self._operand(st, o, i)
        return i

    def _operand(self, st, o, i):
        k, words = o.kind, st["words"]
        if k == "IdResultType":
            st["type"] = i
            return i + 1
        if k == "IdResult":
            st["result"] = i
            return i + 1
        if k in _ID_KINDS:
            st["ids"].append(i)
            return i + 1
        if k in ("LiteralInteger", "LiteralExtInstInteger", "LiteralFloat"):
            return i + 1
        if k == "LiteralString":
            return _string_words(words, i)
        if k == "LiteralContextDependentNumber":
            t = self.types.get(words[1]) if st["op"] == "OpSwitch" else words[st["type"]]
            return i + (2 if self.widths.get(t, 32) > 32 else 1)
        if k == "LiteralSpecConstantOpInteger":
            spec = self.g.by_opcode[words[i]]
            return self._operands(st, [p for p in spec.operands
                                       if p.kind not in ("IdResultType", "IdResult")], i + 1)
        if k == "PairLiteralIntegerIdRef":       # OpSwitch: the literal is as wide as the selector
            n = 2 if self.widths.get(self.types.get(words[1]), 32) > 32 else 1
            st["ids"].append(i + n)
            return i + n + 1
        if k == "PairIdRefLiteralInteger":
            st["ids"].append(i)
            return i + 2
        if k == "PairIdRefIdRef":
            st["ids"] += [i, i + 1]
            return i + 2
        kind = self.g.kinds[k]
        v = words[i]
        i += 1
        if kind.category == "ValueEnum":
            for p in kind.by_value[v].parameters:
                i = self._operand(st, p, i)
        elif kind.category == "BitEnum":
            bit = 1
            while bit <= v:
                if v & bit:
                    for p in kind.by_value[bit].parameters:
                        i = self._operand(st, p, i)
                bit <<= 1
        return i


class Block:
    def __init__(self, label: Inst, body: list[Inst]):
        self.label_inst = label
        self.body = body            # phis first, merge and terminator last
        # non-semantic instructions after the terminator (spirv-opt puts DebugNoScope there)
        self.trailer: list[Inst] = []

    @property
    def label(self) -> int:
        return self.label_inst.result

    @property
    def term(self) -> Inst:
        return self.body[-1]

    @property
    def merge(self) -> Inst | None:
        return self.body[-2] if len(self.body) > 1 and self.body[-2].opname in MERGES else None

    def phi_end(self) -> int:
        """Index of the first instruction after the phis (and debug lines among them)."""
        i = 0
        while i < len(self.body) and self.body[i].opname in _PHI_REGION:
            i += 1
        while i > 0 and self.body[i - 1].opname != "OpPhi":     # lines after the last phi stay
            i -= 1
        return i

    def tail_start(self) -> int:
        """Index of the merge instruction, or the terminator when there is none."""
        return len(self.body) - (2 if self.merge is not None else 1)

    def phis(self):
        return [i for i in self.body if i.opname == "OpPhi"]

    def successors(self) -> list[int]:
        t = self.term
        w = t.words
        if t.opname == "OpBranch":
            return [w[1]]
        if t.opname == "OpBranchConditional":
            return [w[2], w[3]]
        if t.opname == "OpSwitch":
            return [t.words[p] for p in t.id_pos[1:]]
        return []


class Function:
    def __init__(self, head: list[Inst], blocks: list[Block], end: Inst):
        self.head = head            # OpFunction, OpFunctionParameter*
        self.blocks = blocks
        self.end = end

    @property
    def id(self):
        return self.head[0].result

    @property
    def return_type(self):
        return self.head[0].type_id

    def block_map(self) -> dict[int, Block]:
        return {b.label: b for b in self.blocks}

    def preds(self) -> dict[int, list[int]]:
        p = {b.label: [] for b in self.blocks}
        for b in self.blocks:
            for s in dict.fromkeys(b.successors()):
                p[s].append(b.label)
        return p

    def reachable(self) -> list[int]:
        """Labels reachable from the entry block, in reverse postorder."""
        bm = self.block_map()
        return graph.reverse_postorder(self.blocks[0].label, lambda label: bm[label].successors())

    def idoms(self) -> dict[int, int]:
        """Immediate dominators of the reachable blocks (the entry maps to itself)."""
        return graph.immediate_dominators(self.reachable(), self.preds())

    def dominators(self) -> dict[int, set[int]]:
        """For each reachable block, the set of blocks dominating it (itself included)."""
        idom = self.idoms()
        out = {}
        for b in idom:
            s, x = {b}, b
            while idom[x] != x:
                x = idom[x]
                s.add(x)
            out[b] = s
        return out

    def loop_headers(self) -> set[int]:
        return {b.label for b in self.blocks if b.merge is not None and b.merge.opname == "OpLoopMerge"}


class Module:
    def __init__(self, data: bytes):
        words = read_words(data)
        self.header = words[:5]
        self.walker = _Walker()
        self.globals: list[Inst] = []
        self.functions: list[Function] = []
        i = 5
        fn_head, blocks, cur = None, None, None
        while i < len(words):
            n = words[i] >> 16
            ins = self.walker.inst(words[i:i + n])
            i += n
            op = ins.opname
            if op == "OpFunction":
                fn_head, blocks = [ins], []
            elif op == "OpFunctionParameter":
                fn_head.append(ins)
            elif op == "OpFunctionEnd":
                self.functions.append(Function(fn_head, blocks, ins))
                fn_head = blocks = cur = None
            elif fn_head is None:
                self.globals.append(ins)
            elif op == "OpLabel":
                cur = Block(ins, [])
                blocks.append(cur)
            elif cur.body and cur.body[-1].opname in TERMINATORS:
                cur.trailer.append(ins)
            else:
                cur.body.append(ins)

    # -- ids and declarations ---------------------------------------------------------------------
    @property
    def bound(self) -> int:
        return self.header[3]

    def new_id(self) -> int:
        self.header[3] += 1
        return self.header[3] - 1

    def inst(self, opname: str, *operands, type_id=None, result=None) -> Inst:
        """A new instruction: `inst("OpIAdd", a, b, type_id=t, result=r)`; operands are words."""
        spec = self.walker.g.by_name[opname]
        words = [0]
        if spec.has_type:
            words.append(type_id)
        if spec.has_result:
            words.append(result if result is not None else self.new_id())
        words += list(operands)
        words[0] = (len(words) << 16) | spec.opcode
        return self.walker.inst(words)

    def type_of(self, value_id) -> int | None:
        return self.walker.types.get(value_id)

    def defs(self) -> dict[int, Inst]:
        out = {i.result: i for i in self.globals if i.result is not None}
        for f in self.functions:
            for i in f.head:
                out[i.result] = i
            for b in f.blocks:
                for i in b.body:
                    if i.result is not None:
                        out[i.result] = i
        return out

    def _find_global(self, opname, type_id=None):
        for g in self.globals:
            if g.opname == opname and (type_id is None or g.type_id == type_id):
                return g
        return None

    def add_global(self, ins: Inst) -> int:
        self.globals.append(ins)
        return ins.result

    def bool_type(self) -> int:
        g = self._find_global("OpTypeBool")
        return g.result if g else self.add_global(self.inst("OpTypeBool"))

    def bool_const(self, value: bool) -> int:
        op = "OpConstantTrue" if value else "OpConstantFalse"
        t = self.bool_type()
        g = self._find_global(op, type_id=t)
        return g.result if g else self.add_global(self.inst(op, type_id=t))

    def undef(self, type_id) -> int:
        g = self._find_global("OpUndef", type_id=type_id)
        return g.result if g else self.add_global(self.inst("OpUndef", type_id=type_id))

    _ANNOTATIONS = ("OpDecorate", "OpMemberDecorate", "OpDecorateId", "OpDecorateString",
                    "OpMemberDecorateString", "OpGroupDecorate", "OpGroupMemberDecorate",
                    "OpDecorationGroup")

    def add_decoration(self, ins: Inst):
        """Insert an annotation where the logical layout wants it: after the other annotations,
        or, in a module without any, before the first type, constant or variable."""
        annotations = [j for j, g in enumerate(self.globals) if g.opname in self._ANNOTATIONS]
        if annotations:
            at = annotations[-1] + 1
        else:
            at = next((j for j, g in enumerate(self.globals) if g.opname.startswith(
                ("OpType", "OpConstant", "OpSpecConstant", "OpVariable"))), len(self.globals))
        self.globals.insert(at, ins)

    def unused_spec_id(self) -> int:
        """A SpecId no constant of the module has (dispatches leave it at its default)."""
        spec_id = self.walker.g.enum_value("Decoration", "SpecId")
        used = [g.words[3] for g in self.globals if g.opname == "OpDecorate" and g.words[2] == spec_id]
        return max(used, default=0) + 100

    def type_inst(self, type_id) -> Inst | None:
        for g in self.globals:
            if g.result == type_id:
                return g
        return None

    # -- output -----------------------------------------------------------------------------------
    def emit(self) -> bytes:
        words = list(self.header)
        for g in self.globals:
            words += g.words
        for f in self.functions:
            for i in f.head:
                words += i.words
            for b in f.blocks:
                words += b.label_inst.words
                for i in b.body + b.trailer:
                    words += i.words
            words += f.end.words
        return struct.pack(f"<{len(words)}I", *words)
