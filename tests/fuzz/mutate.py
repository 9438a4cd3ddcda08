"""Mutations of SPIR-V modules for fuzzing: structure-aware ones that edit instructions (through
the editable model of tests/metamorphic/ir.py) and word-level ones that edit the binary blindly.

A mutant is named by (shader, seed): `mutant(data, seed)` draws 1 to 3 mutations with that seed
and returns the new bytes and a one-line description of each step. Unlike the metamorphic
transformations these break modules on purpose: operands of the wrong type, missing or duplicated
definitions, branches into other functions, workgroup sizes of 0 or 2^31. jitcoop must answer
every one with its own error classes, naming the instruction, in bounded time.

Each structure-aware mutator takes the model and a `random.Random` and returns what it did, or
None when the module offers it no place; word-level mutators do the same on a list of words.
"""
from __future__ import annotations

import random
import struct

from jitcoop.spirv.grammar import grammar
from metamorphic.ir import TERMINATORS, Inst, Module

# Values that sit on boundaries jitcoop (or LLVM, or numpy) may handle specially.
INTERESTING = (0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256,
               1023, 1024, 1025, 4096, 65535, 65536, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF)

_LITERAL_DECORATIONS = ("Binding", "DescriptorSet", "Offset", "ArrayStride", "MatrixStride",
                        "SpecId", "BuiltIn", "Location", "Alignment", "MaxByteOffset")


def interesting(rng: random.Random, old: int | None = None) -> int:
    """A boundary value, or (one time in three) a neighbour or multiple of the old one."""
    if old is not None and rng.random() < 0.35:
        return rng.choice((old + 1, old - 1, old * 2, old // 2, old ^ 0x80000000)) & 0xFFFFFFFF
    return rng.choice(INTERESTING)


class Places:
    """What the structure-aware mutators pick from: every instruction with where it stands, the
    value ids by type, labels by function."""

    def __init__(self, m: Module):
        self.m = m
        self.body = []          # (function index, block, index in block.body, inst)
        for fi, f in enumerate(m.functions):
            for b in f.blocks:
                for i, ins in enumerate(b.body):
                    self.body.append((fi, b, i, ins))
        self.values = {}        # result id -> type id (globals and function values)
        for res, t in m.walker.types.items():
            self.values[res] = t
        self.types = [g.result for g in m.globals if g.opname.startswith("OpType")]
        self.labels = [[b.label for b in f.blocks] for f in m.functions]
        self.all_ids = list(self.values) + self.types + [x for ls in self.labels for x in ls] + \
            [f.id for f in m.functions]

    def other_type_value(self, rng, old_type) -> int | None:
        cands = [v for v, t in self.values.items() if t != old_type]
        return rng.choice(cands) if cands else None

    def same_type_value(self, rng, old, old_type) -> int | None:
        cands = [v for v, t in self.values.items() if t == old_type and v != old]
        return rng.choice(cands) if cands else None


# -- structure-aware mutators ---------------------------------------------------------------------

def _with_ids(places: Places):
    return [(fi, b, i, ins) for fi, b, i, ins in places.body if ins.id_pos]


def operand_other_type(m: Module, rng: random.Random, p: Places):
    """Replace an id operand with a value of another type (or, one time in five, any id: a type,
    a label, a function)."""
    sites = _with_ids(p) + [(None, None, None, g) for g in m.globals if g.id_pos
                            and not g.opname.startswith(("OpName", "OpMemberName", "OpDecorate",
                                                         "OpMemberDecorate"))]
    if not sites:
        return None
    *_, ins = rng.choice(sites)
    pos = rng.choice(ins.id_pos)
    old = ins.words[pos]
    new = rng.choice(p.all_ids) if rng.random() < 0.2 else p.other_type_value(rng, p.values.get(old))
    if new is None or new == old:
        return None
    ins.words[pos] = new
    return f"{ins.opname} (%{ins.result}): operand word {pos} %{old} -> %{new}"


def operand_same_type(m: Module, rng: random.Random, p: Places):
    """Replace an id operand with another value of the same type: mostly one the use may read (a
    global, a parameter, a value defined before it in its block), which keeps the module valid and
    changes what it computes; else any (one that does not dominate the use, or of another
    function)."""
    sites = _with_ids(p)
    if not sites:
        return None
    fi, b, i, ins = rng.choice(sites)
    pos = rng.choice(ins.id_pos)
    old = ins.words[pos]
    if old not in p.values:
        return None
    if rng.random() < 0.8:
        f = m.functions[fi]
        visible = {g.result for g in m.globals if g.result is not None} | {x.result for x in f.head[1:]} | \
            {x.result for x in b.body[:i] if x.result is not None}
        cands = [v for v in visible if p.values.get(v) == p.values[old] and v != old]
        new = rng.choice(cands) if cands else None
    else:
        new = p.same_type_value(rng, old, p.values[old])
    if new is None:
        return None
    ins.words[pos] = new
    return f"{ins.opname} (%{ins.result}): operand word {pos} %{old} -> %{new} (same type)"


def result_type(m: Module, rng: random.Random, p: Places):
    """Give an instruction another result type."""
    sites = [(x[3]) for x in p.body if x[3].type_pos is not None] + \
        [g for g in m.globals if g.type_pos is not None]
    if not sites or not p.types:
        return None
    ins = rng.choice(sites)
    old = ins.words[ins.type_pos]
    new = rng.choice(p.types)
    if new == old:
        return None
    ins.words[ins.type_pos] = new
    return f"{ins.opname} (%{ins.result}): result type %{old} -> %{new}"


_SHAPES: dict = {}


def _shape_groups():
    """Opcodes grouped by operand shape (the kinds and quantifiers of their operands)."""
    if not _SHAPES:
        g = grammar()
        for op, spec in g.by_opcode.items():
            key = tuple((o.kind, o.quantifier) for o in spec.operands)
            _SHAPES.setdefault(key, []).append(spec.opname)
    return _SHAPES


def opcode(m: Module, rng: random.Random, p: Places):
    """Change an instruction's opcode: to one with the same operand shape (OpIAdd -> OpFMul,
    OpULessThan -> OpFOrdEqual), or (one time in four) to any opcode."""
    sites = [x[3] for x in p.body] + [g for g in m.globals if g.opname.startswith(("OpType", "OpConstant",
                                                                                 "OpSpecConstant"))]
    if not sites:
        return None
    ins = rng.choice(sites)
    g = grammar()
    if rng.random() < 0.25:
        new = rng.choice(list(g.by_opcode.values())).opname
    else:
        spec = g.by_name[ins.opname]
        group = _shape_groups()[tuple((o.kind, o.quantifier) for o in spec.operands)]
        if len(group) < 2:
            return None
        new = rng.choice([n for n in group if n != ins.opname])
    ins.words[0] = (ins.words[0] & 0xFFFF0000) | g.by_name[new].opcode
    return f"%{ins.result} {ins.opname} -> {new}"


def drop(m: Module, rng: random.Random, p: Places):
    """Remove an instruction: from a function body (a merge or terminator too) or the globals."""
    if p.body and rng.random() < 0.7:
        _, b, i, ins = rng.choice(p.body)
        del b.body[i]
        if not b.body:          # a block needs a terminator to be read at all: keep the mutant readable
            b.body.append(m.inst("OpReturn"))
        return f"dropped {ins.opname} (%{ins.result})"
    cands = [g for g in m.globals if g.opname not in ("OpCapability", "OpMemoryModel")]
    if not cands:
        return None
    ins = rng.choice(cands)
    m.globals.remove(ins)
    return f"dropped global {ins.opname} (%{ins.result})"


def duplicate(m: Module, rng: random.Random, p: Places):
    """Duplicate an instruction, with the same result id (a second definition) or a fresh one,
    next to itself or elsewhere in the function."""
    if not p.body:
        return None
    fi, b, i, ins = rng.choice(p.body)
    copy = Inst(ins.words, ins.opname, ins.type_pos, ins.result_pos, ins.id_pos)
    fresh = ins.result_pos is not None and rng.random() < 0.6
    if fresh:
        copy.words[ins.result_pos] = m.new_id()
    blocks = m.functions[fi].blocks
    dst = rng.choice(blocks) if rng.random() < 0.5 else b
    at = rng.randint(0, max(0, len(dst.body) - 1))
    dst.body.insert(at, copy)
    return f"duplicated {ins.opname} (%{ins.result}){' as %' + str(copy.result) if fresh else ''} " \
           f"into block %{dst.label} at {at}"


def move(m: Module, rng: random.Random, p: Places):
    """Move an instruction to another block (of its function, or of another function)."""
    cands = [x for x in p.body if x[3].opname not in TERMINATORS]
    if not cands:
        return None
    fi, b, i, ins = rng.choice(cands)
    f = m.functions[fi] if rng.random() < 0.85 else rng.choice(m.functions)
    others = [x for x in f.blocks if x is not b]
    if not others:
        return None
    dst = rng.choice(others)
    del b.body[i]
    at = rng.randint(0, max(0, len(dst.body) - 1))
    dst.body.insert(at, ins)
    return f"moved {ins.opname} (%{ins.result}) from block %{b.label} to %{dst.label} at {at}"


def change_type(m: Module, rng: random.Random, p: Places):
    """Edit a type declaration: widths, signedness, float encodings, vector sizes, array lengths,
    pointer storage classes, struct members, cooperative matrix parameters."""
    types = [g for g in m.globals if g.opname.startswith("OpType") and len(g.words) > 2]
    if not types:
        return None
    t = rng.choice(types)
    w = t.words
    op = t.opname
    if op == "OpTypeInt":
        if rng.random() < 0.5:
            w[2] = rng.choice((1, 8, 16, 32, 64, 0, 7, 128))
        else:
            w[3] ^= 1
    elif op == "OpTypeFloat":
        if len(w) > 3 and rng.random() < 0.5:
            w[3] = rng.choice((0, 1, 4214, 4215, 4216, 7))        # FPEncoding: BFloat16KHR, Float8 E4M3/E5M2
        else:
            w[2] = rng.choice((8, 16, 32, 64, 0, 24, 128))
    elif op == "OpTypeVector":
        w[3] = rng.choice((0, 1, 2, 3, 4, 5, 8, 16, 64, 0xFFFFFFFF))
    elif op in ("OpTypePointer", "OpTypeForwardPointer", "OpTypeUntypedPointerKHR"):
        w[2] = rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 9, 12, 5349, 99))   # storage classes, and nonsense
    elif t.id_pos:
        pos = rng.choice(t.id_pos)
        old = w[pos]
        new = rng.choice(p.types + list(p.values)) if rng.random() < 0.5 else \
            p.other_type_value(rng, p.values.get(old))
        if new is None:
            return None
        w[pos] = new
    else:
        return None
    return f"type %{t.result} {op}: words {t.words[2:]}"


def change_constant(m: Module, rng: random.Random, p: Places):
    """Change a constant's or spec constant's value, or the constituents of a composite."""
    consts = [g for g in m.globals if g.opname in ("OpConstant", "OpSpecConstant", "OpConstantComposite",
                                                   "OpSpecConstantComposite", "OpSpecConstantOp",
                                                   "OpConstantTrue", "OpConstantFalse",
                                                   "OpSpecConstantTrue", "OpSpecConstantFalse")]
    if not consts:
        return None
    c = rng.choice(consts)
    w = c.words
    g = grammar()
    if c.opname in ("OpConstant", "OpSpecConstant"):
        i = rng.randrange(3, len(w))
        w[i] = interesting(rng, w[i])
    elif c.opname.endswith(("True", "False")):
        flip = {"OpConstantTrue": "OpConstantFalse", "OpConstantFalse": "OpConstantTrue",
                "OpSpecConstantTrue": "OpSpecConstantFalse", "OpSpecConstantFalse": "OpSpecConstantTrue"}
        w[0] = (w[0] & 0xFFFF0000) | g.by_name[flip[c.opname]].opcode
    elif c.opname == "OpSpecConstantOp" and rng.random() < 0.5:
        w[3] = rng.choice(list(g.by_opcode))
    elif c.id_pos:
        pos = rng.choice(c.id_pos)
        new = p.other_type_value(rng, p.values.get(w[pos])) if rng.random() < 0.5 else \
            p.same_type_value(rng, w[pos], p.values.get(w[pos]))
        if new is None:
            return None
        w[pos] = new
    else:
        return None
    return f"constant %{c.result} {c.opname}: words {w[3:]}"


def change_decoration(m: Module, rng: random.Random, p: Places):
    """Change a decoration's value, kind, target or member, or drop one."""
    decs = [g for g in m.globals if g.opname in ("OpDecorate", "OpMemberDecorate")]
    if not decs:
        return None
    d = rng.choice(decs)
    w = d.words
    member = d.opname == "OpMemberDecorate"
    kind_at = 3 if member else 2
    g = grammar()
    roll = rng.random()
    if roll < 0.15:
        m.globals.remove(d)
        return f"dropped {d.opname} %{w[1]} {g.enum_name('Decoration', w[kind_at])}"
    if roll < 0.3:
        w[1] = rng.choice(p.all_ids)
        return f"{d.opname} moved to %{w[1]}"
    if roll < 0.4 and member:
        w[2] = interesting(rng, w[2]) if rng.random() < 0.5 else (w[2] + 1) & 0xFFFFFFFF
        return f"OpMemberDecorate %{w[1]} member index -> {w[2]}"
    if len(w) > kind_at + 1 and roll < 0.8:
        i = rng.randrange(kind_at + 1, len(w))
        w[i] = interesting(rng, w[i])
        return f"{d.opname} %{w[1]} {g.enum_name('Decoration', w[kind_at])} value -> {w[i]}"
    # another decoration kind with the same number of literal words
    kinds = [en for en in g.kinds["Decoration"].by_value.values()
             if len(en.parameters) == len(w) - kind_at - 1
             and all(q.kind.startswith("Literal") for q in en.parameters)]
    if not kinds:
        return None
    en = rng.choice(kinds)
    old = g.enum_name("Decoration", w[kind_at])
    w[kind_at] = en.value
    return f"{d.opname} %{w[1]} {old} -> {en.name}"


def change_execution_mode(m: Module, rng: random.Random, p: Places):
    """Change the workgroup size (to 0, 1, 65536...), another execution mode, or the entry
    point's function and interface."""
    modes = [g for g in m.globals if g.opname in ("OpExecutionMode", "OpExecutionModeId")]
    eps = [g for g in m.globals if g.opname == "OpEntryPoint"]
    g = grammar()
    roll = rng.random()
    if eps and roll < 0.2:
        e = rng.choice(eps)
        if e.id_pos and rng.random() < 0.6:
            pos = rng.choice(e.id_pos)
            old = e.words[pos]
            e.words[pos] = rng.choice([f.id for f in m.functions] + p.all_ids)
            return f"OpEntryPoint id %{old} -> %{e.words[pos]}"
        e.words[1] = rng.choice((0, 4, 5, 6, 5267, 5364))
        return f"OpEntryPoint execution model -> {e.words[1]}"
    if not modes:
        return None
    md = rng.choice(modes)
    w = md.words
    if roll < 0.3:
        m.globals.remove(md)
        return f"dropped {md.opname} {g.enum_name('ExecutionMode', w[2])}"
    if roll < 0.4:
        m.globals.insert(m.globals.index(md), Inst(w, md.opname, md.type_pos, md.result_pos, md.id_pos))
        return f"duplicated {md.opname} {g.enum_name('ExecutionMode', w[2])}"
    if len(w) > 3 and roll < 0.85:
        i = rng.randrange(3, len(w))
        if md.opname == "OpExecutionModeId":
            w[i] = rng.choice(list(p.values) or [w[i]])
        else:
            w[i] = interesting(rng, w[i])
        return f"{md.opname} {g.enum_name('ExecutionMode', w[2])} operand -> {w[i]}"
    same = [en for en in g.kinds["ExecutionMode"].by_value.values() if len(en.parameters) == len(w) - 3]
    en = rng.choice(same)
    old = g.enum_name("ExecutionMode", w[2])
    w[2] = en.value
    return f"{md.opname} {old} -> {en.name}"


def retarget(m: Module, rng: random.Random, p: Places):
    """Point a branch, switch case, merge or continue target, or a phi's parent at another
    label (of the same function mostly), or end a block differently."""
    sites = [x for x in p.body if x[3].opname in ("OpBranch", "OpBranchConditional", "OpSwitch",
                                                  "OpSelectionMerge", "OpLoopMerge", "OpPhi")]
    if not sites:
        return None
    fi, b, i, ins = rng.choice(sites)
    labels = p.labels[fi] if rng.random() < 0.9 else [x for ls in p.labels for x in ls]
    w = ins.words
    if ins.opname in ("OpBranch", "OpBranchConditional", "OpSwitch") and rng.random() < 0.15:
        b.body[i] = m.inst(rng.choice(("OpReturn", "OpUnreachable", "OpKill")))
        return f"block %{b.label}: {ins.opname} replaced by {b.body[i].opname}"
    if ins.opname == "OpPhi":
        slots = list(range(4, len(w), 2))
    elif ins.opname == "OpBranchConditional":
        slots = [2, 3]
    elif ins.opname == "OpSwitch":
        slots = [p_ for p_ in ins.id_pos[1:]]
    elif ins.opname == "OpLoopMerge":
        slots = [1, 2]
    else:
        slots = [1]
    if not slots:
        return None
    s = rng.choice(slots)
    old = w[s]
    w[s] = rng.choice(labels)
    return f"{ins.opname} in block %{b.label}: target %{old} -> %{w[s]}"


# (mutator, weight): the weights favour mutations that often leave a module valid enough to load
# (a module that fails validation says little about the code generator); every kind keeps a share.
STRUCTURED = {
    "operand_other_type": (operand_other_type, 2),
    "operand_same_type": (operand_same_type, 4),
    "result_type": (result_type, 1),
    "opcode": (opcode, 2),
    "drop": (drop, 2),
    "duplicate": (duplicate, 1),
    "move": (move, 1),
    "type": (change_type, 2),
    "constant": (change_constant, 4),
    "decoration": (change_decoration, 4),
    "execution_mode": (change_execution_mode, 2),
    "control_flow": (retarget, 2),
}


# -- word-level mutators --------------------------------------------------------------------------

def bit_flip(words: list, rng: random.Random):
    i = rng.randrange(5, len(words))
    bit = rng.randrange(32)
    words[i] ^= 1 << bit
    return f"word {i}: flipped bit {bit}"


def word_value(words: list, rng: random.Random):
    """Replace a word with a boundary value, or with a small id of the module."""
    i = rng.randrange(5, len(words))
    old = words[i]
    if rng.random() < 0.5:
        words[i] = rng.randrange(1, max(2, words[3]))
    else:
        words[i] = interesting(rng, old)
    return f"word {i}: {old:#x} -> {words[i]:#x}"


def word_swap(words: list, rng: random.Random):
    i, j = rng.randrange(5, len(words)), rng.randrange(5, len(words))
    words[i], words[j] = words[j], words[i]
    return f"swapped words {i} and {j}"


def word_splice(words: list, rng: random.Random):
    """Delete or insert a word (the instruction stream goes out of step)."""
    i = rng.randrange(5, len(words))
    if rng.random() < 0.5 and len(words) > 6:
        del words[i]
        return f"deleted word {i}"
    words.insert(i, interesting(rng))
    return f"inserted word {words[i]:#x} at {i}"


def header(words: list, rng: random.Random):
    """The header's version or id bound."""
    i = rng.choice((1, 3))
    words[i] = interesting(rng, words[i])
    return f"header word {i} -> {words[i]:#x}"


WORDS = {"bit_flip": (bit_flip, 3), "word_value": (word_value, 3), "word_swap": (word_swap, 2),
         "word_splice": (word_splice, 1), "header": (header, 1)}


def _pick(table: dict, rng: random.Random):
    names = list(table)
    name = rng.choices(names, weights=[table[n][1] for n in names])[0]
    return name, table[name][0]


def mutant(data: bytes, seed: int, steps: int | None = None, word_share: float = 0.1):
    """(mutated bytes, [description of each step]) for a seed; `steps` mutations (default 1 to 3,
    fewer more often)."""
    rng = random.Random(seed)
    n = steps if steps is not None else rng.choices((1, 2, 3), weights=(5, 3, 2))[0]
    done = []
    for _ in range(n):
        for _attempt in range(8):           # a mutator may find no place in this module
            if rng.random() < word_share:
                name, fn = _pick(WORDS, rng)
                words = list(struct.unpack(f"<{len(data) // 4}I", data))
                what = fn(words, rng)
                data = struct.pack(f"<{len(words)}I", *(w & 0xFFFFFFFF for w in words))
            else:
                try:
                    m = Module(data)
                    places = Places(m)
                except Exception:           # an earlier step made it unreadable for the model (an
                    continue                # OpFunctionEnd outside a function: a function of no blocks)
                name, fn = _pick(STRUCTURED, rng)
                what = fn(m, rng, places)
                if what is None:
                    continue
                try:
                    data = m.emit()
                except struct.error:        # a value past 32 bits: draw again
                    continue
            done.append(f"{name}: {what}")
            break
    return data, done
