"""Load-time validation: what a valid module has and the code generator takes for granted.

The reader checks that a module decodes (word counts, operand kinds, ids defined once, result
types that are types). This checks the rest of what code generation relies on, so that a broken
module is refused at `load` with a SpirvError naming the instruction (result id, opcode, byte
offset) instead of failing somewhere inside the compiler:

- declarations: types, constants and variables declared before their use (no type made of
  itself); the integer and float widths and encodings jitcoop has, vectors and matrices of
  scalars and vectors, array lengths that are integer constants, struct members and pointees
  that are types; variables and values only of types jitcoop runs; buffer and push constant
  variables of Block structs with an Offset on every member; runtime arrays only in buffer
  blocks; layout and binding decorations once per target; a workgroup size for every compute
  entry point;
- ids in their roles: what an instruction reads as a value is a value (not a type, a label, a
  function or a void call), branch targets and phi parents are blocks of the same function,
  calls name functions (without recursion) with arguments of the parameters' types;
- SSA: a value is used only in its own function, where its definition dominates the use;
- structured control flow: a merge instruction right before its branch, merge blocks and
  continue targets dominated by their header and merged once, back edges only to loop headers;
- the operand types of the core instructions (arithmetic, bit operations, comparisons,
  conversions, composites, memory access, atomics, subgroup operations, control flow) and of
  GLSL.std.450, as the SPIR-V specification states them.

What depends on specialization constants (array lengths, cooperative matrix shapes) and the
operands of the cooperative instructions are checked at `kernel()`, where their rules lower them.
"""
from __future__ import annotations

from dataclasses import replace

from .. import graph
from ..errors import SpirvError
from .grammar import grammar

_CONSTANTS = ("OpConstant", "OpConstantTrue", "OpConstantFalse", "OpConstantComposite", "OpConstantNull",
              "OpSpecConstant", "OpSpecConstantTrue", "OpSpecConstantFalse", "OpSpecConstantComposite",
              "OpSpecConstantOp", "OpConstantCompositeReplicateEXT", "OpSpecConstantCompositeReplicateEXT")
_VECTORLIKE = ("OpTypeVector", "OpTypeCooperativeMatrixKHR", "OpTypeCooperativeVectorNV")
_SCALARS = ("OpTypeInt", "OpTypeFloat", "OpTypeBool")
# Types a variable or value may have (images, samplers, events... are not run by jitcoop).
_RUNNABLE = _SCALARS + ("OpTypeVoid", "OpTypeVector", "OpTypeMatrix", "OpTypeArray", "OpTypeRuntimeArray",
                        "OpTypeStruct", "OpTypePointer", "OpTypeFunction", "OpTypeCooperativeMatrixKHR",
                        "OpTypeCooperativeVectorNV", "OpTypeTensorLayoutNV", "OpTypeTensorViewNV")
# What GLSL.std.450 works on component by component (cooperative vectors too, by
# SPV_NV_cooperative_vector).
_PER_COMPONENT = _SCALARS + ("OpTypeVector", "OpTypeCooperativeVectorNV")
# Decorations a target takes at most once (a second one would contradict or repeat the first).
_ONCE = ("Offset", "ArrayStride", "MatrixStride", "Binding", "DescriptorSet", "SpecId", "BuiltIn", "Location",
         "RowMajor", "ColMajor", "Block", "BufferBlock")
_ENCODINGS = {None: (16, 32, 64), "BFloat16KHR": (16,), "Float8E4M3EXT": (8,), "Float8E5M2EXT": (8,)}


def validate(m) -> None:
    """Raise SpirvError at the first problem of module `m` (a jitcoop.spirv.module.Module)."""
    v = _Validator(m)
    v.order()
    v.decorations()
    v.types()
    v.globals()
    v.calls()
    for f in m.functions.values():
        v.function(f)


class _Validator:
    def __init__(self, m):
        self.m = m
        self.defs = m.all_defs
        self.g = grammar()
        self.fn_of = {}                 # value id defined in a function -> function id
        for f in m.functions.values():
            for p in f.params:
                self.fn_of[p.result] = f.id
            for b in f.blocks:
                for ins in b.instrs:
                    if ins.result is not None:
                        self.fn_of[ins.result] = f.id

    # -- types ------------------------------------------------------------------------------------
    def tdef(self, tid):
        d = self.defs.get(tid)
        return d if d is not None and d.opname.startswith("OpType") else None

    def top(self, tid) -> str | None:
        d = self.tdef(tid)
        return d.opname if d is not None else None

    def comp(self, tid):
        """The component type of a scalar (itself), vector, cooperative matrix or vector."""
        d = self.tdef(tid)
        if d is None:
            return None
        if d.opname in _SCALARS:
            return tid
        if d.opname in _VECTORLIKE:
            return d.operands[0]
        return None

    def kind(self, tid) -> str | None:
        """"int", "float" or "bool" for scalars and vector-like types of them."""
        return {"OpTypeInt": "int", "OpTypeFloat": "float", "OpTypeBool": "bool"}.get(self.top(self.comp(tid)))

    def width(self, tid) -> int | None:
        c = self.tdef(self.comp(tid))
        return c.operands[0] if c is not None and c.opname != "OpTypeBool" else None

    def count(self, tid):
        """Components: 1 for a scalar, n for a vector, the type itself (compared with same())
        for cooperative types, whose length the device decides."""
        d = self.tdef(tid)
        if d is None:
            return None
        if d.opname in _SCALARS:
            return 1
        if d.opname == "OpTypeVector":
            return d.operands[1]
        if d.opname in _VECTORLIKE:
            return ("coop", tid)
        return None

    def same_count(self, a, b) -> bool:
        ca, cb = self.count(a), self.count(b)
        if isinstance(ca, tuple) or isinstance(cb, tuple):
            if not (isinstance(ca, tuple) and isinstance(cb, tuple)):
                return False
            da, db = self.tdef(a), self.tdef(b)
            return da.opname == db.opname and all(self._same_const(x, y) for x, y in
                                                  zip(da.operands[1:], db.operands[1:]))
        return ca is not None and ca == cb

    def same(self, a, b, _seen=None) -> bool:
        """Whether two type ids declare the same type (structurally: a module may declare a
        type twice, and the code generator only sees structure)."""
        if a == b:
            return True
        da, db = self.tdef(a), self.tdef(b)
        if da is None or db is None or da.opname != db.opname or len(da.operands) != len(db.operands):
            return False
        seen = _seen if _seen is not None else set()
        if (a, b) in seen:
            return True
        seen.add((a, b))
        op = da.opname
        if op in _SCALARS or op == "OpTypeVoid":
            return da.operands == db.operands
        if op == "OpTypeVector" or op == "OpTypeMatrix":
            return da.operands[1] == db.operands[1] and self.same(da.operands[0], db.operands[0], seen)
        if op == "OpTypeArray":
            return self._same_const(da.operands[1], db.operands[1]) and \
                self.same(da.operands[0], db.operands[0], seen)
        if op in ("OpTypeRuntimeArray", "OpTypeStruct", "OpTypeFunction"):
            return all(self.same(x, y, seen) for x, y in zip(da.operands, db.operands))
        if op == "OpTypePointer":
            return da.operands[0] == db.operands[0] and self.same(da.operands[1], db.operands[1], seen)
        if op in ("OpTypeCooperativeMatrixKHR", "OpTypeCooperativeVectorNV"):
            return self.same(da.operands[0], db.operands[0], seen) and \
                all(self._same_const(x, y) for x, y in zip(da.operands[1:], db.operands[1:]))
        return False

    def _same_const(self, a, b) -> bool:
        if a == b:
            return True
        da, db = self.defs.get(a), self.defs.get(b)
        return (da is not None and db is not None and da.opname == db.opname == "OpConstant"
                and da.operands == db.operands and self.same(da.result_type, db.result_type))

    def describe(self, tid, depth=0) -> str:
        d = self.tdef(tid)
        if d is None:
            return f"%{tid} (not a type)"
        op, o = d.opname, d.operands
        if op == "OpTypeInt":
            return f"{'i' if o[1] else 'u'}{o[0]}"
        if op == "OpTypeFloat":
            return {"BFloat16KHR": "bf16", "Float8E4M3EXT": "e4m3", "Float8E5M2EXT": "e5m2"}.get(
                self.g.enum_name("FPEncoding", o[1]) if len(o) > 1 else None, f"f{o[0]}")
        if op == "OpTypeBool":
            return "bool"
        if op == "OpTypeVoid":
            return "void"
        if depth > 2:
            return f"%{tid}"
        if op == "OpTypeVector":
            return f"{self.describe(o[0], depth + 1)}vec{o[1]}"
        if op == "OpTypeMatrix":
            return f"{o[1]}-column matrix of {self.describe(o[0], depth + 1)}"
        if op in ("OpTypeArray", "OpTypeRuntimeArray"):
            return f"{self.describe(o[0], depth + 1)}[]"
        if op == "OpTypeStruct":
            return f"struct %{tid}"
        if op == "OpTypePointer":
            return f"pointer to {self.describe(o[1], depth + 1)} ({self.g.enum_name('StorageClass', o[0])})"
        return f"{op[6:]} %{tid}"

    def order(self):
        """Types, constants and variables use only what is declared before them (a pointer type
        announced by OpTypeForwardPointer excepted): no type or constant is made of itself."""
        seen = set()
        for ins in self.m.global_order:
            if ins.opname == "OpTypeForwardPointer":
                seen.add(ins.operands[0])
                continue
            if ins.result_type is not None and ins.result_type not in seen:
                raise ins.error(f"the type %{ins.result_type} is declared after its use")
            for x, k in zip(ins.operands, ins.kinds):
                if k in ("IdRef", "IdScope", "IdMemorySemantics") and x not in seen:
                    raise ins.error(f"%{x} is used before its declaration")
            if ins.result is not None:
                seen.add(ins.result)

    def decorations(self):
        """A layout or binding decoration given once per target (two Offsets of one member, two
        Bindings of one variable: which would hold?), and an Offset on every member of a block."""
        seen = {}
        for ins in self.m.instructions:
            if ins.opname == "OpDecorate":
                key = (ins.operands[0], None, ins.operands[1])
            elif ins.opname == "OpMemberDecorate":
                key = (ins.operands[0], ins.operands[1], ins.operands[2])
            else:
                continue
            name = self.g.enum_name("Decoration", key[2])
            if name in _ONCE:
                if key in seen:
                    raise ins.error(f"%{key[0]}{'' if key[1] is None else f' member {key[1]}'} is decorated "
                                    f"{name} twice")
                seen[key] = ins
        for ins in self.m.global_order:
            if ins.opname == "OpTypeStruct" and (self.m.has_decoration(ins.result, "Block")
                                                 or self.m.has_decoration(ins.result, "BufferBlock")):
                for i in range(len(ins.operands)):
                    if self.m.member_decoration(ins.result, i, "Offset") is None:
                        raise ins.error(f"member {i} of block %{ins.result} has no Offset decoration "
                                        "(a block's layout is explicit)")

    def types(self):
        caps = set(self.m.capabilities)
        for ins in self.m.global_order:
            op, o = ins.opname, ins.operands
            if not op.startswith("OpType"):
                continue
            if op == "OpTypeInt":
                if o[0] not in (8, 16, 32, 64) or o[1] not in (0, 1):
                    raise ins.error(f"integer type of width {o[0]} and signedness {o[1]}: jitcoop has "
                                    "8, 16, 32 and 64-bit integers, signedness 0 or 1")
            elif op == "OpTypeFloat":
                enc = self.g.enum_name("FPEncoding", o[1]) if len(o) > 1 else None
                if enc not in _ENCODINGS or o[0] not in _ENCODINGS[enc]:
                    raise ins.error(f"float type of width {o[0]}{f' and encoding {enc}' if enc else ''}: "
                                    "jitcoop has 16, 32 and 64-bit IEEE floats, 16-bit BFloat16KHR and "
                                    "8-bit Float8E4M3EXT / Float8E5M2EXT")
            elif op == "OpTypeVector":
                most = 256 if "LongVectorEXT" in caps else 16
                if self.top(o[0]) not in _SCALARS or not 2 <= o[1] <= most:
                    raise ins.error(f"a vector has 2 to {most} components of a scalar type; this one has "
                                    f"{o[1]} of {self.describe(o[0])}")
            elif op == "OpTypeMatrix":
                if self.kind(o[0]) != "float" or self.top(o[0]) != "OpTypeVector" or not 2 <= o[1] <= 4:
                    raise ins.error(f"a matrix has 2 to 4 columns of a float vector type; this one has "
                                    f"{o[1]} of {self.describe(o[0])}")
            elif op in ("OpTypeArray", "OpTypeRuntimeArray"):
                self._element(ins, o[0])
                if op == "OpTypeArray":
                    ln = self.defs.get(o[1])
                    if ln is None or not ln.opname.startswith(_CONSTANTS) or self.kind(ln.result_type) != "int" \
                            or self.count(ln.result_type) != 1:
                        raise ins.error(f"the length %{o[1]} of an array type is not an integer constant")
                    if ln.opname == "OpConstant" and not _positive(ln, self):
                        raise ins.error("an array type has at least one element")
            elif op == "OpTypeStruct":
                for i, mt in enumerate(o):
                    self._element(ins, mt, f"member {i}")
                    if self.top(mt) == "OpTypeRuntimeArray" and i != len(o) - 1:
                        raise ins.error(f"member {i} is a runtime array but not the last member")
            elif op == "OpTypePointer":
                if self.tdef(o[1]) is None:
                    raise ins.error(f"a pointer type points to %{o[1]}, which is not a type")
            elif op == "OpTypeFunction":
                if self.tdef(o[0]) is None:
                    raise ins.error(f"the return type %{o[0]} of a function type is not a type")
                for i, p in enumerate(o[1:]):
                    if self.tdef(p) is None or self.top(p) == "OpTypeVoid":
                        raise ins.error(f"parameter {i} of a function type has type %{p}, which is not a "
                                        "type of values")
            elif op in ("OpTypeCooperativeMatrixKHR", "OpTypeCooperativeVectorNV"):
                if self.kind(o[0]) not in ("int", "float") or self.top(o[0]) not in _SCALARS:
                    raise ins.error(f"the component type {self.describe(o[0])} of a cooperative type "
                                    "is not a numerical scalar")
                for x in o[1:]:
                    self._int_constant(ins, x, "a cooperative type's parameter")
            elif op in ("OpTypeTensorLayoutNV", "OpTypeTensorViewNV"):
                for x in o:
                    c = self.defs.get(x)
                    if c is None or not c.opname.startswith(_CONSTANTS) or self.count(c.result_type) != 1:
                        raise ins.error(f"operand %{x} of a tensor type is not a scalar constant")

    def _element(self, ins, t, what="the element type"):
        op = self.top(t)
        if op is None or op in ("OpTypeVoid", "OpTypeFunction") or (op == "OpTypeRuntimeArray"
                                                                       and ins.opname != "OpTypeStruct"):
            raise ins.error(f"{what} %{t} is not a type a composite can hold")

    def _int_constant(self, ins, x, what):
        c = self.defs.get(x)
        if c is None or not c.opname.startswith(_CONSTANTS) or self.kind(c.result_type) != "int" \
                or self.count(c.result_type) != 1:
            raise ins.error(f"{what} %{x} is not an integer scalar constant")

    def unrunnable(self, tid, seen=None):
        """The type inside type tid that jitcoop does not run (an image, a sampler...), or None."""
        d = self.tdef(tid)
        if d is None or d.opname not in _RUNNABLE:
            return tid
        seen = seen if seen is not None else set()
        if tid in seen:
            return None
        seen.add(tid)
        o = d.operands
        if d.opname in ("OpTypeVector", "OpTypeMatrix", "OpTypeArray", "OpTypeRuntimeArray",
                        "OpTypeCooperativeMatrixKHR", "OpTypeCooperativeVectorNV"):
            return self.unrunnable(o[0], seen)
        if d.opname == "OpTypeStruct":
            return next((x for x in (self.unrunnable(m, seen) for m in o) if x is not None), None)
        if d.opname == "OpTypePointer":
            return self.unrunnable(o[1], seen)
        return None

    def runtime_array_in(self, tid, seen=None):
        """A runtime array that type tid holds in place (inside arrays and struct members, not
        behind pointers), or None."""
        d = self.tdef(tid)
        seen = seen if seen is not None else set()
        if d is None or tid in seen:
            return None
        seen.add(tid)
        if d.opname == "OpTypeRuntimeArray":
            return tid
        if d.opname == "OpTypeArray":
            return self.runtime_array_in(d.operands[0], seen)
        if d.opname == "OpTypeStruct":
            return next((x for x in (self.runtime_array_in(m, seen) for m in d.operands) if x is not None), None)
        return None

    def sized_variable(self, ins, sc, pointee):
        """Only a buffer's block may end in a runtime array (Vulkan VUID-StandaloneSpirv-
        OpTypeRuntimeArray-04680: StorageBuffer and PhysicalStorageBuffer Blocks, Uniform
        BufferBlocks, arrays of those and of UniformConstant descriptors); a variable of another
        storage class is allocated at its size (a Private variable of a buffer's block type
        reached the code generator as 'a runtime array has no leaves')."""
        if sc in ("StorageBuffer", "Uniform", "PhysicalStorageBuffer", "UniformConstant"):
            return
        rt = self.runtime_array_in(pointee)
        if rt is not None:
            raise ins.error(f"a {sc} variable of type {self.describe(pointee)} holds a runtime array "
                            f"(%{rt}); only buffer blocks may")

    def runnable_result(self, ins):
        bad = self.unrunnable(ins.result_type) if ins.result_type is not None else None
        if bad is not None:
            inside = "" if bad == ins.result_type else f" (which holds {self.describe(bad)})"
            raise ins.error(f"values of type {self.describe(ins.result_type)}{inside} are not supported")

    # -- module-level instructions ----------------------------------------------------------------
    def globals(self):
        for ins in self.m.global_order:
            op = ins.opname
            if op.startswith("OpType"):
                continue
            self.runnable_result(ins)
            if op != "OpVariable" and ins.result is not None:
                self._builtin_type(ins, ins.result, ins.result_type)      # a WorkgroupSize constant
            if op == "OpVariable":
                t = self.tdef(ins.result_type)
                if t.opname != "OpTypePointer":
                    raise ins.error(f"a variable's type {self.describe(ins.result_type)} is not a pointer")
                sc = self.g.enum_name("StorageClass", t.operands[0])
                if sc in ("StorageBuffer", "Uniform", "PushConstant"):
                    block = t.operands[1]
                    while self.top(block) in ("OpTypeArray", "OpTypeRuntimeArray"):
                        block = self.tdef(block).operands[0]
                    if self.top(block) != "OpTypeStruct" or not (
                            self.m.has_decoration(block, "Block") or self.m.has_decoration(block, "BufferBlock")):
                        raise ins.error(f"a {sc} variable holds a struct decorated Block or BufferBlock; this one "
                                        f"holds {self.describe(t.operands[1])}")
                self.sized_variable(ins, sc, t.operands[1])
                if sc == "Input":
                    self._builtin_type(ins, ins.result, t.operands[1])
                if len(ins.operands) > 1:
                    self._value(ins, ins.operands[1], "initializer")
                    if not self.same(self.vtype(ins.operands[1]), t.operands[1]):
                        raise ins.error("the initializer's type is not the variable's")
            elif op in ("OpConstant", "OpSpecConstant"):
                if self.top(ins.result_type) not in ("OpTypeInt", "OpTypeFloat"):
                    raise ins.error(f"{op} of type {self.describe(ins.result_type)}: a numerical scalar "
                                    "is needed")
                if len(ins.words) - 3 != (2 if self.width(ins.result_type) == 64 else 1):
                    raise ins.error(f"{op} has {len(ins.words) - 3} value words for a "
                                    f"{self.describe(ins.result_type)}")
            elif op in ("OpConstantTrue", "OpConstantFalse", "OpSpecConstantTrue", "OpSpecConstantFalse"):
                if self.top(ins.result_type) != "OpTypeBool":
                    raise ins.error(f"{op} of type {self.describe(ins.result_type)}: bool is needed")
            elif op in ("OpConstantComposite", "OpSpecConstantComposite"):
                for x in ins.operands:
                    d = self.defs.get(x)
                    if d is None or not (d.opname.startswith(_CONSTANTS) or d.opname == "OpUndef"):
                        raise ins.error(f"constituent %{x} of a constant composite is not a constant")
                self._construct(ins)
            elif op in ("OpConstantCompositeReplicateEXT", "OpSpecConstantCompositeReplicateEXT"):
                self._value(ins, ins.operands[0], "constituent")
            elif op == "OpSpecConstantOp":
                for x, k in zip(ins.operands[1:], ins.kinds[1:]):
                    if k == "IdRef":
                        d = self.defs.get(x)
                        if d is None or not (d.opname.startswith(_CONSTANTS) or d.opname == "OpUndef"):
                            raise ins.error(f"operand %{x} of OpSpecConstantOp is not a constant")
                self._folded(ins)
        sized_by_builtin = any(self.g.enum_name("BuiltIn", args[0]) == "WorkgroupSize"
                               for x, decs in self.m.decorations.items() for n, args in decs
                               if n == "BuiltIn" and args and x in self.defs)
        for ep in self.m.entry_points:
            ins = ep.ins
            for x in ep.interface:
                d = self.defs.get(x)
                if d is None or d.opname != "OpVariable" or x in self.fn_of:
                    raise ins.error(f"entry point {ep.name!r} lists %{x} in its interface, which is not a "
                                    "global variable")
            if ep.model != 5:           # GLCompute
                continue
            sizes = [(mode, args) for mode, args, _ in ep.modes if mode in ("LocalSize", "LocalSizeId")]
            if not sizes and not sized_by_builtin:
                raise ins.error(f"compute entry point {ep.name!r} has no workgroup size (no LocalSize, "
                                "LocalSizeId or WorkgroupSize built-in)")
            for mode, args in sizes:
                if len(args) != 3:
                    raise ins.error(f"{mode} of entry point {ep.name!r} has {len(args)} operands, not 3")
                if mode == "LocalSizeId":
                    for x in args:
                        self._int_constant(ins, x, "a LocalSizeId operand")
                elif not sized_by_builtin and (min(args) < 1 or args[0] * args[1] * args[2] > 4096):
                    raise ins.error(f"workgroup size {tuple(args)} of entry point {ep.name!r} is not "
                                    "supported (1 to 4096 invocations)")

    def _builtin_type(self, ins, x, tid):
        """A built-in input has the type the Vulkan specification gives it (its value is made as
        that type: a GlobalInvocationId of 8-bit integers is not one)."""
        for n, args in self.m.decorations.get(x, ()):
            if n != "BuiltIn" or not args:
                continue
            name = self.g.enum_name("BuiltIn", args[0])
            want = _BUILTIN_TYPES.get(name)
            if want is None:
                continue
            count, what = want
            if self.kind(tid) != "int" or self.width(tid) != 32 or self.count(tid) != count \
                    or (count == 1) != (self.top(tid) == "OpTypeInt"):
                raise ins.error(f"built-in {name} is {what}, not {self.describe(tid)}")

    def _folded(self, ins):
        """The operation an OpSpecConstantOp folds has the operand types it has in a function."""
        spec = self.g.by_opcode.get(ins.operands[0])
        rule = _TYPE_RULES.get(spec.opname) if spec is not None else None
        if rule is None:
            return                      # folding says which operations it does
        op = replace(ins, opname=spec.opname, operands=ins.operands[1:], kinds=ins.kinds[1:])
        try:
            rule(self, op, None)
        except SpirvError as e:
            raise ins.error(f"the folded {spec.opname}: {e.detail}") from None

    # -- functions and calls ----------------------------------------------------------------------
    def calls(self):
        """Function types agree with their functions; no function calls itself, even indirectly
        (inlining would not end)."""
        for f in self.m.functions.values():
            d = self.defs[f.id]
            ft = self.tdef(f.type_id)
            if ft is None or ft.opname != "OpTypeFunction":
                raise d.error(f"the function type %{f.type_id} is not an OpTypeFunction")
            if not self.same(ft.operands[0], f.result_type):
                raise d.error("the function's result type is not its function type's return type")
            if len(ft.operands) - 1 != len(f.params):
                raise d.error(f"the function has {len(f.params)} parameters; its type has "
                              f"{len(ft.operands) - 1}")
            for p, t in zip(f.params, ft.operands[1:]):
                if not self.same(p.result_type, t):
                    raise p.error("the parameter's type is not the function type's")
            if not f.blocks:
                raise d.error("a function without blocks (a declaration) cannot run")
        state = {}                      # function -> 1 while its callees are walked, 2 when done
        for root in self.m.functions:
            if root in state:
                continue
            state[root] = 1
            stack = [(root, iter(sorted(self.m.functions[root].callees)))]
            while stack:
                fid, callees = stack[-1]
                c = next(callees, None)
                if c is None:
                    state[fid] = 2
                    stack.pop()
                elif c in self.m.functions:     # a call of something else is reported at the call
                    if state.get(c) == 1:
                        raise self.defs[fid].error(f"recursion: %{fid} calls %{c}, which calls back "
                                                   "(SPIR-V functions may not recurse)")
                    if c not in state:
                        state[c] = 1
                        stack.append((c, iter(sorted(self.m.functions[c].callees))))

    def function(self, f):
        labels = {b.label for b in f.blocks}
        for i, b in enumerate(f.blocks):
            seen_other = False
            for ins in b.instrs + ([b.merge] if b.merge else []) + [b.term]:
                if ins.opname == "OpPhi":
                    if seen_other:
                        raise ins.error("OpPhi after other instructions of its block")
                elif ins.opname not in ("OpLine", "OpNoLine"):
                    seen_other = True
                if ins.opname == "OpVariable" and i > 0:
                    raise ins.error("a function's variables are declared in its first block")
                self.roles(ins, f, labels)
                self.operand_types(ins, f)
        self.dominance(f)

    # -- ids in their roles -----------------------------------------------------------------------
    def vtype(self, x):
        """The type of value x, or None when x is not a value."""
        d = self.defs.get(x)
        if d is None or d.result_type is None or d.opname in ("OpFunction", "OpExtInstImport", "OpString"):
            return None
        if self.top(d.result_type) == "OpTypeVoid":
            return None
        return d.result_type

    def _value(self, ins, x, what="operand"):
        t = self.vtype(x)
        if t is None:
            d = self.defs.get(x)
            is_what = "a void result" if d is not None and d.result_type is not None else \
                f"a {d.opname[2:]}" if d is not None else "undefined"
            raise ins.error(f"{what} %{x} is not a value ({is_what})")
        return t

    def roles(self, ins, f, labels):
        """Labels where the instruction takes blocks, functions where it takes functions, types
        where it takes types, values everywhere else."""
        op, o, kinds = ins.opname, ins.operands, ins.kinds
        if op in ("OpLine", "OpNoLine"):
            return                      # names an OpString
        if op == "OpExtInst":
            if o[0] not in self.m.ext_imports:
                raise ins.error(f"%{o[0]} is not an OpExtInstImport")
            if self.m.ext_imports[o[0]].startswith("NonSemantic."):
                return                  # debug information names types, functions, strings
        self.runnable_result(ins)
        label_at = _label_positions(op, o)
        fn_at = _function_positions(op, o, kinds)
        for i, (x, k) in enumerate(zip(o, kinds)):
            if k not in ("IdRef", "IdScope", "IdMemorySemantics"):
                continue
            if i in label_at:
                if x not in labels:
                    raise ins.error(f"%{x} is not a block of this function")
            elif i in fn_at:
                if x not in self.m.functions:
                    raise ins.error(f"%{x} is not a function")
            elif (op == "OpExtInst" and i == 0) or (op == "OpCooperativeMatrixLengthKHR" and i == 0):
                if op == "OpCooperativeMatrixLengthKHR" and self.tdef(x) is None:
                    raise ins.error(f"%{x} is not a type")
            else:
                self._value(ins, x)
                if k in ("IdScope", "IdMemorySemantics"):
                    d = self.defs.get(x)
                    if not d.opname.startswith(_CONSTANTS) or self.kind(d.result_type) != "int" \
                            or self.count(d.result_type) != 1:
                        raise ins.error(f"the scope or memory semantics %{x} is not an integer constant")

    # -- SSA dominance ----------------------------------------------------------------------------
    def dominance(self, f):
        blocks = f.blocks
        index = {b.label: i for i, b in enumerate(blocks)}
        succ = [[index[t] for t in _targets(b.term)] for b in blocks]
        idom = _idoms(succ)
        where = {p.result: (0, -1) for p in f.params}
        for bi, b in enumerate(blocks):
            for pos, ins in enumerate(b.instrs):
                if ins.result is not None:
                    where[ins.result] = (bi, pos)

        def dominates(a, b):
            return graph.dominates(idom, a, b)

        self.structure(f, index, succ, idom, dominates)
        for bi, b in enumerate(blocks):
            if bi not in idom:
                continue                # unreachable: its uses run never
            for pos, ins in enumerate(b.instrs + ([b.merge] if b.merge else []) + [b.term]):
                if ins.opname == "OpExtInst" and self.m.ext_imports.get(ins.operands[0], "").startswith(
                        "NonSemantic."):
                    continue
                if ins.opname == "OpPhi":
                    pairs = list(zip(ins.operands[0::2], ins.operands[1::2]))
                else:
                    pairs = [(x, None) for x, k in zip(ins.operands, ins.kinds) if k in
                             ("IdRef", "IdScope", "IdMemorySemantics")]
                for x, parent in pairs:
                    owner = self.fn_of.get(x)
                    if owner is None:
                        continue        # a global, a label, a function
                    if owner != f.id:
                        raise ins.error(f"%{x} is a value of another function (%{owner})")
                    db, dp = where[x]
                    if db not in idom:
                        raise ins.error(f"%{x} is defined in a block no path reaches")
                    if parent is not None:
                        pb = index[parent]
                        if pb in idom and not dominates(db, pb):
                            raise ins.error(f"%{x} does not dominate the end of parent block %{parent}")
                    elif not ((db == bi and dp < pos) or (db != bi and dominates(db, bi))):
                        raise ins.error(f"%{x} is used where its definition does not dominate the use")

    def structure(self, f, index, succ, idom, dominates):
        """Structured control flow as the code generator reads it: a merge instruction right
        before a branch, a merge block (and continue target) that its header dominates and no
        other header names, back edges only to loop headers."""
        merged = {}
        for bi, b in enumerate(f.blocks):
            m = b.merge
            if m is None:
                continue
            t = b.term
            want = ("OpBranchConditional", "OpSwitch") if m.opname == "OpSelectionMerge" else \
                ("OpBranch", "OpBranchConditional")
            if m.offset + 4 * len(m.words) != t.offset or t.opname not in want:
                raise m.error(f"{m.opname} must come right before an {' or '.join(want)}")
            if bi not in idom:
                continue
            for target in m.operands[:2 if m.opname == "OpLoopMerge" else 1]:
                ti = index[target]
                if target == b.label and target == m.operands[0]:
                    raise m.error(f"block %{b.label} is its own merge block")
                if ti in idom and not dominates(bi, ti):
                    raise m.error(f"header %{b.label} does not dominate %{target}, its merge block or "
                                  "continue target")
            mb = m.operands[0]
            if mb in merged:
                raise m.error(f"%{mb} is already the merge block of %{merged[mb]}")
            merged[mb] = b.label
        for bi in idom:
            for si in succ[bi]:
                head = f.blocks[si].merge
                if dominates(si, bi) and (head is None or head.opname != "OpLoopMerge"):
                    raise f.blocks[bi].term.error(f"back edge to %{f.blocks[si].label}, which is not a loop "
                                                  "header (no OpLoopMerge)")

    # -- operand types ----------------------------------------------------------------------------
    def operand_types(self, ins, f):
        rule = _TYPE_RULES.get(ins.opname)
        if rule is not None:
            rule(self, ins, f)
        elif ins.opname == "OpExtInst" and self.m.ext_imports.get(ins.operands[0]) == "GLSL.std.450":
            _glsl(self, ins)

    def want(self, ins, ok: bool, message: str):
        if not ok:
            raise ins.error(message)

    def t(self, x):
        return self.vtype(x)

    def numeric(self, ins, x, kinds, what="operand"):
        """Value x is a scalar, vector or cooperative type of one of `kinds`; its type."""
        t = self.t(x)
        self.want(ins, self.kind(t) in kinds and self.count(t) is not None,
                  f"{what} %{x} has type {self.describe(t)}; {ins.opname} takes "
                  f"{' or '.join(kinds)} scalars or vectors here")
        return t

    def like(self, ins, x, t, what="operand"):
        """Value x has type t."""
        self.want(ins, self.same(self.t(x), t),
                  f"{what} %{x} has type {self.describe(self.t(x))}, not {self.describe(t)}")

    def _construct(self, ins):
        r = self.tdef(ins.result_type)
        parts = ins.operands
        types = [self.vtype(x) for x in parts]
        op = r.opname
        if op == "OpTypeVector":
            n = 0
            for x, t in zip(parts, types):
                self.want(ins, t is not None and self.same(self.comp(t), r.operands[0])
                          and self.top(t) in ("OpTypeVector",) + _SCALARS,
                          f"constituent %{x} of a {self.describe(ins.result_type)} has type "
                          f"{self.describe(t)}")
                n += self.count(t)
            self.want(ins, n == r.operands[1], f"{n} components for a {self.describe(ins.result_type)}")
            return
        if op == "OpTypeMatrix":
            expect = [r.operands[0]] * r.operands[1]
        elif op == "OpTypeStruct":
            expect = list(r.operands)
        elif op == "OpTypeArray":
            # (the length compared first: a list of a mutated length's 2^31 types took the
            # host's memory)
            ln = self.defs.get(r.operands[1])
            if ln is not None and ln.opname == "OpConstant":
                self.want(ins, len(parts) == ln.operands[0], f"{len(parts)} constituents for a "
                          f"{self.describe(ins.result_type)}, which has {ln.operands[0]}")
            expect = [r.operands[0]] * len(parts)
        elif op in ("OpTypeCooperativeMatrixKHR", "OpTypeCooperativeVectorNV"):
            expect = [r.operands[0]] * (1 if op == "OpTypeCooperativeMatrixKHR" else len(parts))
        else:
            raise ins.error(f"cannot construct a {self.describe(ins.result_type)}")
        self.want(ins, len(parts) == len(expect),
                  f"{len(parts)} constituents for a {self.describe(ins.result_type)}, which has {len(expect)}")
        for x, t, e in zip(parts, types, expect):
            self.want(ins, t is not None and self.same(t, e),
                      f"constituent %{x} has type {self.describe(t)}, not {self.describe(e)}")

    def walk(self, ins, tid, index):
        """The type of component `index` (a literal) of composite type tid."""
        d = self.tdef(tid)
        op = d.opname if d is not None else None
        if op == "OpTypeStruct":
            self.want(ins, 0 <= index < len(d.operands),
                      f"index {index} of struct %{tid}, which has {len(d.operands)} members")
            return d.operands[index]
        if op in ("OpTypeVector", "OpTypeMatrix"):
            self.want(ins, 0 <= index < d.operands[1], f"index {index} of a {self.describe(tid)}")
            return d.operands[0]
        if op == "OpTypeArray":
            ln = self.defs.get(d.operands[1])
            self.want(ins, ln is None or ln.opname != "OpConstant" or index < ln.operands[0],
                      f"index {index} of an array of {ln.operands[0] if ln else '?'} elements")
            return d.operands[0]
        if op in ("OpTypeCooperativeMatrixKHR", "OpTypeCooperativeVectorNV"):
            return d.operands[0]
        raise ins.error(f"cannot take component {index} of a {self.describe(tid)}")

    def pointer(self, ins, x, what="pointer"):
        """Value x is a pointer; its pointee type (None for an untyped pointer)."""
        t = self.t(x)
        d = self.tdef(t)
        self.want(ins, d is not None and d.opname in ("OpTypePointer", "OpTypeUntypedPointerKHR"),
                  f"{what} %{x} has type {self.describe(t)}, not a pointer")
        return d.operands[1] if d.opname == "OpTypePointer" else None

    def chain(self, ins, pointee, indexes):
        """The type an access chain reaches from `pointee` through index values."""
        t = pointee
        for x in indexes:
            it = self.t(x)
            self.want(ins, self.kind(it) == "int" and self.count(it) == 1,
                      f"index %{x} has type {self.describe(it)}, not an integer scalar")
            d = self.tdef(t)
            op = d.opname if d is not None else None
            if op == "OpTypeStruct":
                c = self.defs.get(x)
                self.want(ins, c is not None and c.opname.startswith(_CONSTANTS),
                          f"index %{x} into struct %{t} is not a constant")
                if c.opname == "OpConstant":
                    self.want(ins, c.operands[0] < len(d.operands),
                              f"index {c.operands[0]} of struct %{t}, which has {len(d.operands)} members")
                    t = d.operands[c.operands[0]]
                else:
                    return None         # a spec constant picks the member: checked at kernel()
            elif op in ("OpTypeVector", "OpTypeMatrix", "OpTypeArray", "OpTypeRuntimeArray",
                        "OpTypeCooperativeMatrixKHR", "OpTypeCooperativeVectorNV"):
                t = d.operands[0]
            else:
                raise ins.error(f"index %{x} goes into a {self.describe(t)}, which has no components")
        return t


_VEC3 = (3, "a vector of three 32-bit integers")
_SCALAR = (1, "a 32-bit integer")
_MASK = (4, "a vector of four 32-bit integers")
_BUILTIN_TYPES = {
    "LocalInvocationId": _VEC3, "WorkgroupId": _VEC3, "NumWorkgroups": _VEC3, "GlobalInvocationId": _VEC3,
    "WorkgroupSize": _VEC3, "LocalInvocationIndex": _SCALAR, "SubgroupSize": _SCALAR,
    "SubgroupMaxSize": _SCALAR, "SubgroupLocalInvocationId": _SCALAR, "SubgroupId": _SCALAR,
    "NumSubgroups": _SCALAR, "SubgroupEqMask": _MASK, "SubgroupGeMask": _MASK, "SubgroupGtMask": _MASK,
    "SubgroupLeMask": _MASK, "SubgroupLtMask": _MASK,
}


def _positive(c, v) -> bool:
    bits = c.operands[0]
    d = v.tdef(c.result_type)
    if d.opname == "OpTypeInt" and d.operands[1]:
        w = d.operands[0]
        bits &= (1 << w) - 1
        if bits >> (w - 1):
            return False
    return bits > 0


def _targets(term) -> list:
    o = term.operands
    if term.opname == "OpBranch":
        return [o[0]]
    if term.opname == "OpBranchConditional":
        return [o[1], o[2]]
    if term.opname == "OpSwitch":
        return [o[1]] + list(o[3::2])
    return []


def _label_positions(op, o) -> set:
    if op == "OpBranch" or op == "OpSelectionMerge":
        return {0}
    if op == "OpBranchConditional":
        return {1, 2}
    if op == "OpLoopMerge":
        return {0, 1}
    if op == "OpSwitch":
        return {1} | set(range(3, len(o), 2))
    if op == "OpPhi":
        return set(range(1, len(o), 2))
    return set()


def _function_positions(op, o, kinds) -> set:
    if op == "OpFunctionCall":
        return {0}
    if op == "OpCooperativeMatrixPerElementOpNV":
        return {1}
    if op == "OpCooperativeMatrixReduceNV":
        return {2}
    out = set()
    for i, k in enumerate(kinds):
        if k == "TensorAddressingOperands":      # its parameters follow: TensorView, DecodeFunc, DecodeVectorFunc
            j = i + 1
            for bit in (1, 2, 4):
                if o[i] & bit:
                    if bit != 1:
                        out.add(j)
                    j += 1
    return out


def _idoms(succ: list) -> dict:
    """Immediate dominators of the blocks reachable from block 0."""
    rpo = graph.reverse_postorder(0, succ.__getitem__)
    preds = {b: [] for b in rpo}
    for b in rpo:
        for s in succ[b]:
            preds[s].append(b)
    return graph.immediate_dominators(rpo, preds)


# -- operand type rules of the core instructions --------------------------------------------------

def _same_shape_op(kinds, nargs, result_kinds=None, same_width=True):
    """Result and operands: scalars or vectors of `kinds`, as many components as the result (and
    the result's width unless same_width is False)."""
    def check(v, ins, f):
        r = ins.result_type
        v.want(ins, v.kind(r) in (result_kinds or kinds) and v.count(r) is not None,
               f"result type {v.describe(r)}: {ins.opname} gives {' or '.join(result_kinds or kinds)} "
               "scalars or vectors")
        for x in ins.operands[:nargs]:
            t = v.numeric(ins, x, kinds)
            v.want(ins, v.same_count(t, r), f"operand %{x} has type {v.describe(t)}; the result has "
                   f"type {v.describe(r)} (as many components are needed)")
            if same_width and kinds == (result_kinds or kinds):
                v.want(ins, v.width(t) == v.width(r) and v.kind(t) == v.kind(r),
                       f"operand %{x} has type {v.describe(t)}; the result has type {v.describe(r)}")
    return check


def _compare(kinds):
    def check(v, ins, f):
        r = ins.result_type
        v.want(ins, v.kind(r) == "bool" and v.count(r) is not None,
               f"result type {v.describe(r)}: a comparison gives bool scalars or vectors")
        a, b = ins.operands[:2]
        ta, tb = v.numeric(ins, a, kinds), v.numeric(ins, b, kinds)
        v.want(ins, v.same_count(ta, r) and v.same_count(tb, r),
               f"operands of types {v.describe(ta)} and {v.describe(tb)} for a {v.describe(r)} result")
        v.want(ins, v.width(ta) == v.width(tb) and v.kind(ta) == v.kind(tb),
               f"operands of types {v.describe(ta)} and {v.describe(tb)}: the same width is needed")
    return check


def _convert(src, dst, same=False):
    def check(v, ins, f):
        r = ins.result_type
        v.want(ins, v.kind(r) in dst and v.count(r) is not None,
               f"result type {v.describe(r)}: {ins.opname} gives {' or '.join(dst)} scalars or vectors")
        t = v.numeric(ins, ins.operands[0], src)
        v.want(ins, v.same_count(t, r) or (v.top(t) == v.top(r) == "OpTypeCooperativeMatrixKHR"),
               f"operand of type {v.describe(t)} for a {v.describe(r)} result")
        if same:
            v.want(ins, v.same(t, r), f"operand of type {v.describe(t)} for a {v.describe(r)} result")
    return check


def _unary_bool(v, ins, f):
    r = ins.result_type
    v.want(ins, v.kind(r) == "bool" and v.count(r) is not None, f"result type {v.describe(r)}: bool is needed")
    t = v.numeric(ins, ins.operands[0], ("float",) if ins.opname.startswith("OpIs") else ("bool",))
    v.want(ins, v.same_count(t, r), f"operand of type {v.describe(t)} for a {v.describe(r)} result")


def _any_all(v, ins, f):
    v.want(ins, v.top(ins.result_type) == "OpTypeBool", "the result of OpAny/OpAll is a bool")
    t = v.numeric(ins, ins.operands[0], ("bool",))
    v.want(ins, v.top(t) == "OpTypeVector", f"operand of type {v.describe(t)}: a bool vector is needed")


def _shift(v, ins, f):
    r = ins.result_type
    v.want(ins, v.kind(r) == "int" and v.count(r) is not None, f"result type {v.describe(r)}: integers needed")
    base, n = ins.operands[:2]
    tb = v.numeric(ins, base, ("int",), "base")
    tn = v.numeric(ins, n, ("int",), "shift")
    v.want(ins, v.same_count(tb, r) and v.same_count(tn, r) and v.width(tb) == v.width(r),
           f"base {v.describe(tb)} and shift {v.describe(tn)} for a {v.describe(r)} result")


def _select(v, ins, f):
    r = ins.result_type
    c, a, b = ins.operands[:3]
    tc = v.numeric(ins, c, ("bool",), "condition")
    v.want(ins, v.count(tc) == 1 or v.same_count(tc, r),
           f"condition of type {v.describe(tc)} for a {v.describe(r)} result")
    v.like(ins, a, r)
    v.like(ins, b, r)


def _bitcast(v, ins, f):
    r = ins.result_type
    t = v.t(ins.operands[0])

    def bits(x):
        d = v.tdef(x)
        if d is None:
            return None
        if d.opname == "OpTypePointer":
            return 64
        if d.opname in ("OpTypeInt", "OpTypeFloat"):
            return d.operands[0]
        if d.opname == "OpTypeVector" and v.top(d.operands[0]) in ("OpTypeInt", "OpTypeFloat"):
            return d.operands[1] * v.width(x)
        return None
    if v.top(r) == v.top(t) and v.top(r) in ("OpTypeCooperativeMatrixKHR", "OpTypeCooperativeVectorNV"):
        return                  # lengths the device or specialization decides: checked at kernel()
    br, bt = bits(r), bits(t)
    v.want(ins, br is not None and br == bt,
           f"cannot reinterpret {v.describe(t)} as {v.describe(r)} (the bit counts must agree)")


def _bitfield(v, ins, f):
    r = ins.result_type
    v.want(ins, v.kind(r) == "int" and v.count(r) is not None, f"result type {v.describe(r)}: integers needed")
    nvals = 2 if ins.opname == "OpBitFieldInsert" else 1
    for x in ins.operands[:nvals]:
        v.like(ins, x, r)
    for x in ins.operands[nvals:nvals + 2]:
        t = v.numeric(ins, x, ("int",), "offset or count")
        v.want(ins, v.count(t) == 1, f"offset or count %{x} is not an integer scalar")


def _bitcount(v, ins, f):
    r = ins.result_type
    v.want(ins, v.kind(r) == "int" and v.count(r) is not None, f"result type {v.describe(r)}: integers needed")
    t = v.numeric(ins, ins.operands[0], ("int",))
    v.want(ins, v.same_count(t, r), f"operand of type {v.describe(t)} for a {v.describe(r)} result")
    if ins.opname == "OpBitReverse":
        v.like(ins, ins.operands[0], r)


def _extended(v, ins, f):
    r = v.tdef(ins.result_type)
    v.want(ins, r.opname == "OpTypeStruct" and len(r.operands) == 2 and v.same(r.operands[0], r.operands[1]),
           f"the result of {ins.opname} is a struct of two members of one type")
    t = r.operands[0]
    v.want(ins, v.kind(t) == "int", f"the members of the result are {v.describe(t)}, not integers")
    for x in ins.operands[:2]:
        v.like(ins, x, t)


def _dot(v, ins, f):
    r = ins.result_type
    a, b = ins.operands[:2]
    ta = v.numeric(ins, a, ("float",))
    v.want(ins, v.top(ta) == "OpTypeVector", f"operand of type {v.describe(ta)}: a float vector is needed")
    v.like(ins, b, ta)
    v.want(ins, v.same(v.comp(ta), r), f"result type {v.describe(r)} for vectors of {v.describe(ta)}")


def _integer_dot(v, ins, f):
    """SPV_KHR_integer_dot_product: two integer vectors of one component count and width, or two
    32-bit integer scalars with PackedVectorFormat4x8Bit; an integer scalar result at least as
    wide as their components; the AccSat forms' accumulator of the result's type."""
    o, r = ins.operands, ins.result_type
    n = 3 if "AccSat" in ins.opname else 2
    v.want(ins, len(o) in (n, n + 1), f"{ins.opname} takes {n} operands and an optional packed vector format")
    v.want(ins, v.kind(r) == "int" and v.count(r) == 1, f"result type {v.describe(r)}, not an integer scalar")
    a, b = (v.numeric(ins, x, ("int",)) for x in o[:2])
    if len(o) > n:              # (PackedVectorFormat4x8Bit: the loader refuses other values)
        for t in (a, b):
            v.want(ins, v.count(t) == 1 and v.width(t) == 32,
                   f"a packed operand of type {v.describe(t)}: a 32-bit integer scalar is needed")
        cw = 8
    else:
        v.want(ins, v.top(a) == "OpTypeVector" and v.count(a) == v.count(b) and v.width(a) == v.width(b),
               f"operands of types {v.describe(a)} and {v.describe(b)}: integer vectors of one count and "
               "width are needed (or 32-bit scalars with PackedVectorFormat4x8Bit)")
        cw = v.width(a)
    v.want(ins, v.width(r) >= cw, f"a {v.width(r)}-bit result for {cw}-bit components")
    if n == 3:
        v.like(ins, o[2], r, "accumulator")


def _times_scalar(v, ins, f):
    r = ins.result_type
    a, s = ins.operands[:2]
    v.like(ins, a, r)
    ts = v.t(s)
    want = v.tdef(r).operands[0] if v.top(r) == "OpTypeMatrix" else v.comp(r)
    if v.top(r) == "OpTypeMatrix":
        want = v.comp(want)
    v.want(ins, want is not None and v.same(ts, want), f"scalar %{s} has type {v.describe(ts)}, not "
           f"{v.describe(want)}")


def _matrix_dims(v, tid):
    d = v.tdef(tid)
    if d is None or d.opname != "OpTypeMatrix":
        return None
    col = v.tdef(d.operands[0])
    return col.operands[1], d.operands[1], col.operands[0]       # rows, columns, component type


def _vec(v, tid):
    d = v.tdef(tid)
    return (d.operands[1], d.operands[0]) if d is not None and d.opname == "OpTypeVector" else None


def _matrix_op(v, ins, f):
    op, o, r = ins.opname, ins.operands, ins.result_type
    bad = f"operand types {', '.join(v.describe(v.t(x)) for x in o[:2])} do not fit a {v.describe(r)} result"
    if op == "OpTranspose":
        m, rm = _matrix_dims(v, v.t(o[0])), _matrix_dims(v, r)
        v.want(ins, m is not None and rm is not None and (m[0], m[1]) == (rm[1], rm[0]) and
               v.same(m[2], rm[2]), bad)
        return
    if op == "OpOuterProduct":
        a, b, rm = _vec(v, v.t(o[0])), _vec(v, v.t(o[1])), _matrix_dims(v, r)
        v.want(ins, None not in (a, b, rm) and rm[0] == a[0] and rm[1] == b[0] and
               v.same(a[1], rm[2]) and v.same(b[1], rm[2]), bad)
        return
    if op == "OpMatrixTimesVector":
        m, x, rv = _matrix_dims(v, v.t(o[0])), _vec(v, v.t(o[1])), _vec(v, r)
        v.want(ins, None not in (m, x, rv) and x[0] == m[1] and rv[0] == m[0] and
               v.same(x[1], m[2]) and v.same(rv[1], m[2]), bad)
        return
    if op == "OpVectorTimesMatrix":
        x, m, rv = _vec(v, v.t(o[0])), _matrix_dims(v, v.t(o[1])), _vec(v, r)
        v.want(ins, None not in (m, x, rv) and x[0] == m[0] and rv[0] == m[1] and
               v.same(x[1], m[2]) and v.same(rv[1], m[2]), bad)
        return
    a, b, rm = _matrix_dims(v, v.t(o[0])), _matrix_dims(v, v.t(o[1])), _matrix_dims(v, r)  # MatrixTimesMatrix
    v.want(ins, None not in (a, b, rm) and a[1] == b[0] and rm[0] == a[0] and rm[1] == b[1] and
           v.same(a[2], rm[2]) and v.same(b[2], rm[2]), bad)


def _composite_construct(v, ins, f):
    v._construct(ins)


def _replicate(v, ins, f):
    r = v.tdef(ins.result_type)
    t = v.t(ins.operands[0])
    want = v.comp(ins.result_type) if r.opname in _VECTORLIKE else \
        (r.operands[0] if r.opname in ("OpTypeArray", "OpTypeMatrix") else None)
    v.want(ins, want is not None and v.same(t, want),
           f"constituent of type {v.describe(t)} for a {v.describe(ins.result_type)}")


def _extract(v, ins, f):
    t = v.t(ins.operands[0])
    for i in ins.operands[1:]:
        t = v.walk(ins, t, i)
    v.want(ins, v.same(t, ins.result_type), f"component type {v.describe(t)} is not the result type "
           f"{v.describe(ins.result_type)}")


def _insert(v, ins, f):
    obj, comp = ins.operands[:2]
    v.like(ins, comp, ins.result_type, "composite")
    t = ins.result_type
    for i in ins.operands[2:]:
        t = v.walk(ins, t, i)
    v.like(ins, obj, t, "object")


def _shuffle(v, ins, f):
    r = _vec(v, ins.result_type)
    a, b = _vec(v, v.t(ins.operands[0])), _vec(v, v.t(ins.operands[1]))
    v.want(ins, None not in (r, a, b) and v.same(a[1], r[1]) and v.same(b[1], r[1]),
           "OpVectorShuffle takes and gives vectors of one component type")
    comps = ins.operands[2:]
    v.want(ins, len(comps) == r[0], f"{len(comps)} components for a {v.describe(ins.result_type)}")
    for c in comps:
        v.want(ins, c == 0xFFFFFFFF or c < a[0] + b[0], f"component {c} of vectors of {a[0]} and {b[0]}")


def _extract_dynamic(v, ins, f):
    vec = _vec(v, v.t(ins.operands[0]))
    v.want(ins, vec is not None and v.same(vec[1], ins.result_type),
           f"vector of type {v.describe(v.t(ins.operands[0]))} for a {v.describe(ins.result_type)} result")
    t = v.numeric(ins, ins.operands[1], ("int",), "index")
    v.want(ins, v.count(t) == 1, "the index is not an integer scalar")


def _insert_dynamic(v, ins, f):
    r = _vec(v, ins.result_type)
    v.want(ins, r is not None, f"result type {v.describe(ins.result_type)} is not a vector")
    v.like(ins, ins.operands[0], ins.result_type, "vector")
    v.like(ins, ins.operands[1], r[1], "component")
    t = v.numeric(ins, ins.operands[2], ("int",), "index")
    v.want(ins, v.count(t) == 1, "the index is not an integer scalar")


def _copy(v, ins, f):
    v.like(ins, ins.operands[0], ins.result_type)


def _variable(v, ins, f):
    d = v.tdef(ins.result_type)
    v.want(ins, d.opname == "OpTypePointer" and v.g.enum_name("StorageClass", d.operands[0]) == "Function",
           f"a variable in a function has type {v.describe(ins.result_type)}, not a Function pointer")
    v.sized_variable(ins, "Function", d.operands[1])
    if len(ins.operands) > 1:
        v.like(ins, ins.operands[1], d.operands[1], "initializer")


def _load(v, ins, f):
    pt = v.pointer(ins, ins.operands[0])
    if pt is not None:
        v.want(ins, v.same(pt, ins.result_type), f"loads a {v.describe(pt)} as a {v.describe(ins.result_type)}")


def _store(v, ins, f):
    pt = v.pointer(ins, ins.operands[0])
    if pt is not None:
        v.like(ins, ins.operands[1], pt, "object")


def _access_chain(v, ins, f):
    o = ins.operands
    pt = v.pointer(ins, o[0], "base")
    r = v.tdef(ins.result_type)
    v.want(ins, r.opname == "OpTypePointer", f"result type {v.describe(ins.result_type)} is not a pointer")
    bd = v.tdef(v.t(o[0]))
    v.want(ins, bd.opname != "OpTypePointer" or bd.operands[0] == r.operands[0],
           "the result points into another storage class than the base")
    idx = o[1:]
    if ins.opname in ("OpPtrAccessChain", "OpInBoundsPtrAccessChain"):
        t = v.numeric(ins, idx[0], ("int",), "element")
        v.want(ins, v.count(t) == 1, "the element index is not an integer scalar")
        idx = idx[1:]
    if pt is None:
        return
    t = v.chain(ins, pt, idx)
    if t is not None:
        v.want(ins, v.same(t, r.operands[1]), f"the chain reaches a {v.describe(t)}; the result points to a "
               f"{v.describe(r.operands[1])}")


def _array_length(v, ins, f):
    pt = v.pointer(ins, ins.operands[0], "structure")
    d = v.tdef(pt)
    m = ins.operands[1]
    v.want(ins, d is not None and d.opname == "OpTypeStruct" and m == len(d.operands) - 1
           and v.top(d.operands[m]) == "OpTypeRuntimeArray",
           f"member {m} of {v.describe(pt)} is not its last member, a runtime array")
    v.want(ins, v.top(ins.result_type) == "OpTypeInt" and v.width(ins.result_type) == 32,
           "the result of OpArrayLength is a 32-bit integer")


def _copy_memory(v, ins, f):
    a = v.pointer(ins, ins.operands[0], "target")
    b = v.pointer(ins, ins.operands[1], "source")
    if ins.opname == "OpCopyMemory":
        v.want(ins, a is None or b is None or v.same(a, b),
               f"copies a {v.describe(b)} into a {v.describe(a)}")
    else:
        t = v.numeric(ins, ins.operands[2], ("int",), "size")
        v.want(ins, v.count(t) == 1, "the size is not an integer scalar")


def _ptr_to_u(v, ins, f):
    v.pointer(ins, ins.operands[0])
    v.want(ins, v.top(ins.result_type) == "OpTypeInt", "the result is not an integer scalar")


def _u_to_ptr(v, ins, f):
    v.want(ins, v.top(ins.result_type) == "OpTypePointer", "the result is not a pointer")
    t = v.numeric(ins, ins.operands[0], ("int",))
    v.want(ins, v.count(t) == 1, "the operand is not an integer scalar")


def _ptr_compare(v, ins, f):
    a = v.pointer(ins, ins.operands[0])
    b = v.pointer(ins, ins.operands[1])
    v.want(ins, v.same(v.t(ins.operands[0]), v.t(ins.operands[1])), "the pointers have different types")
    want = "OpTypeInt" if ins.opname == "OpPtrDiff" else "OpTypeBool"
    v.want(ins, v.top(ins.result_type) == want, f"the result type is not {want[6:].lower()}")
    del a, b


def _atomic(v, ins, f):
    op, o = ins.opname, ins.operands
    pt = v.pointer(ins, o[0])
    kinds = ("float",) if op.startswith("OpAtomicF") else ("int",) if op not in (
        "OpAtomicLoad", "OpAtomicStore", "OpAtomicExchange") else ("int", "float")
    v.want(ins, pt is None or (v.kind(pt) in kinds and v.count(pt) == 1),
           f"the pointer points to a {v.describe(pt)}; {op} works on {' or '.join(kinds)} scalars")
    if ins.result_type is not None and pt is not None:
        v.want(ins, v.same(ins.result_type, pt), f"result type {v.describe(ins.result_type)} for a "
               f"{v.describe(pt)} in memory")
    values = {"OpAtomicStore": o[3:4], "OpAtomicCompareExchange": o[4:6], "OpAtomicLoad": [],
              "OpAtomicIIncrement": [], "OpAtomicIDecrement": []}.get(op, o[3:4])
    for x in values:
        if pt is not None:
            v.like(ins, x, pt, "value")


def _phi(v, ins, f):
    for x in ins.operands[0::2]:
        v.like(ins, x, ins.result_type, "incoming value")


def _branch_conditional(v, ins, f):
    t = v.t(ins.operands[0])
    v.want(ins, v.top(t) == "OpTypeBool", f"the condition has type {v.describe(t)}, not bool")


def _switch(v, ins, f):
    t = v.t(ins.operands[0])
    v.want(ins, v.top(t) == "OpTypeInt", f"the selector has type {v.describe(t)}, not an integer scalar")


def _return_value(v, ins, f):
    v.like(ins, ins.operands[0], f.result_type, "returned value")


def _return(v, ins, f):
    v.want(ins, v.top(f.result_type) == "OpTypeVoid", "OpReturn in a function that returns a value")


def _call(v, ins, f):
    callee = v.m.functions[ins.operands[0]]
    args = ins.operands[1:]
    v.want(ins, len(args) == len(callee.params),
           f"{len(args)} arguments for %{callee.id}, which has {len(callee.params)} parameters")
    for x, p in zip(args, callee.params):
        v.like(ins, x, p.result_type, "argument")
    v.want(ins, v.same(ins.result_type, callee.result_type),
           f"result type {v.describe(ins.result_type)}; %{callee.id} returns {v.describe(callee.result_type)}")


def _group(value_at, kinds=None, index_at=None, result_same=True, bool_result=False):
    """Subgroup operations: the value operand has the result's type (a scalar or vector of
    `kinds`); an index or id operand is an integer scalar."""
    def check(v, ins, f):
        o, r = ins.operands, ins.result_type
        if bool_result:
            v.want(ins, v.top(r) == "OpTypeBool", f"result type {v.describe(r)}, not bool")
        if value_at is not None:
            x = o[value_at]
            t = v.t(x)
            if kinds:
                v.numeric(ins, x, kinds, "value")
            if result_same:
                v.like(ins, x, r, "value")
            elif v.count(t) is None and v.top(t) not in ("OpTypePointer",):
                raise ins.error(f"value %{x} has type {v.describe(t)}; a scalar or vector is needed")
        if index_at is not None:
            t = v.numeric(ins, o[index_at], ("int",), "index")
            v.want(ins, v.count(t) == 1, "the index is not an integer scalar")
    return check


def _ballot(v, ins, f):
    r = _vec(v, ins.result_type)
    v.want(ins, r is not None and r[0] == 4 and v.kind(ins.result_type) == "int" and v.width(ins.result_type) == 32,
           "the result of a ballot is a vector of 4 32-bit integers")
    t = v.t(ins.operands[1])
    v.want(ins, v.top(t) == "OpTypeBool", "the predicate is not a bool")


def _ballot_value(value_at, result, index_at=None):
    def check(v, ins, f):
        t = _vec(v, v.t(ins.operands[value_at]))
        v.want(ins, t is not None and t[0] == 4 and v.kind(v.t(ins.operands[value_at])) == "int",
               "the ballot value is not a vector of 4 integers")
        v.want(ins, v.top(ins.result_type) == result, f"the result is not {result[6:].lower()}")
        if index_at is not None:
            it = v.numeric(ins, ins.operands[index_at], ("int",), "index")
            v.want(ins, v.count(it) == 1, "the index is not an integer scalar")
    return check


_I, _F, _B = ("int",), ("float",), ("bool",)
_TYPE_RULES = {
    **{op: _same_shape_op(_I, 2) for op in ("OpIAdd", "OpISub", "OpIMul", "OpSDiv", "OpUDiv", "OpSRem",
                                            "OpSMod", "OpUMod", "OpBitwiseAnd", "OpBitwiseOr", "OpBitwiseXor")},
    **{op: _same_shape_op(_I, 1) for op in ("OpSNegate", "OpNot")},
    **{op: _same_shape_op(_F, 2) for op in ("OpFAdd", "OpFSub", "OpFMul", "OpFDiv", "OpFRem", "OpFMod")},
    "OpFNegate": _same_shape_op(_F, 1),
    **{op: _same_shape_op(_B, 2) for op in ("OpLogicalAnd", "OpLogicalOr", "OpLogicalEqual",
                                            "OpLogicalNotEqual")},
    "OpLogicalNot": _same_shape_op(_B, 1),
    **{op: _compare(_I) for op in ("OpIEqual", "OpINotEqual", "OpUGreaterThan", "OpSGreaterThan",
                                   "OpUGreaterThanEqual", "OpSGreaterThanEqual", "OpULessThan", "OpSLessThan",
                                   "OpULessThanEqual", "OpSLessThanEqual")},
    **{op: _compare(_F) for op in ("OpFOrdEqual", "OpFUnordEqual", "OpFOrdNotEqual", "OpFUnordNotEqual",
                                   "OpFOrdLessThan", "OpFUnordLessThan", "OpFOrdGreaterThan",
                                   "OpFUnordGreaterThan", "OpFOrdLessThanEqual", "OpFUnordLessThanEqual",
                                   "OpFOrdGreaterThanEqual", "OpFUnordGreaterThanEqual")},
    **{op: _unary_bool for op in ("OpIsNan", "OpIsInf", "OpIsFinite", "OpIsNormal")},
    "OpAny": _any_all, "OpAll": _any_all,
    **{op: _shift for op in ("OpShiftLeftLogical", "OpShiftRightLogical", "OpShiftRightArithmetic")},
    "OpSelect": _select,
    "OpConvertFToU": _convert(_F, _I), "OpConvertFToS": _convert(_F, _I),
    "OpConvertSToF": _convert(_I, _F), "OpConvertUToF": _convert(_I, _F),
    "OpUConvert": _convert(_I, _I), "OpSConvert": _convert(_I, _I), "OpFConvert": _convert(_F, _F),
    "OpQuantizeToF16": _convert(_F, _F, same=True),
    "OpBitcast": _bitcast,
    "OpBitFieldInsert": _bitfield, "OpBitFieldSExtract": _bitfield, "OpBitFieldUExtract": _bitfield,
    "OpBitCount": _bitcount, "OpBitReverse": _bitcount,
    **{op: _extended for op in ("OpIAddCarry", "OpISubBorrow", "OpUMulExtended", "OpSMulExtended")},
    **{op + suffix: _integer_dot for op in ("OpSDot", "OpUDot", "OpSUDot", "OpSDotAccSat", "OpUDotAccSat",
                                            "OpSUDotAccSat") for suffix in ("", "KHR")},
    "OpDot": _dot, "OpVectorTimesScalar": _times_scalar, "OpMatrixTimesScalar": _times_scalar,
    **{op: _matrix_op for op in ("OpMatrixTimesVector", "OpVectorTimesMatrix", "OpMatrixTimesMatrix",
                                 "OpOuterProduct", "OpTranspose")},
    "OpCompositeConstruct": _composite_construct, "OpCompositeConstructReplicateEXT": _replicate,
    "OpCompositeExtract": _extract, "OpCompositeInsert": _insert, "OpVectorShuffle": _shuffle,
    "OpVectorExtractDynamic": _extract_dynamic, "OpVectorInsertDynamic": _insert_dynamic,
    # OpCopyLogical's Result Type logically matches the operand's type: the same structure, the
    # decorations aside (a copy of an int into a float reached LLVM as a type mismatch)
    "OpCopyObject": _copy, "OpCopyLogical": _copy,
    "OpVariable": _variable, "OpLoad": _load, "OpStore": _store,
    **{op: _access_chain for op in ("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain",
                                    "OpInBoundsPtrAccessChain")},
    "OpArrayLength": _array_length, "OpCopyMemory": _copy_memory, "OpCopyMemorySized": _copy_memory,
    "OpConvertPtrToU": _ptr_to_u, "OpConvertUToPtr": _u_to_ptr,
    "OpPtrEqual": _ptr_compare, "OpPtrNotEqual": _ptr_compare, "OpPtrDiff": _ptr_compare,
    **{op: _atomic for op in ("OpAtomicLoad", "OpAtomicStore", "OpAtomicExchange", "OpAtomicCompareExchange",
                              "OpAtomicIIncrement", "OpAtomicIDecrement", "OpAtomicIAdd", "OpAtomicISub",
                              "OpAtomicSMin", "OpAtomicUMin", "OpAtomicSMax", "OpAtomicUMax", "OpAtomicAnd",
                              "OpAtomicOr", "OpAtomicXor", "OpAtomicFAddEXT", "OpAtomicFMinEXT",
                              "OpAtomicFMaxEXT")},
    "OpPhi": _phi, "OpBranchConditional": _branch_conditional, "OpSwitch": _switch,
    "OpReturnValue": _return_value, "OpReturn": _return, "OpFunctionCall": _call,
    "OpAssumeTrueKHR": lambda v, ins, f: _branch_conditional(v, ins, f),
    "OpGroupNonUniformElect": _group(None, bool_result=True),
    "OpGroupNonUniformAll": _group(1, _B, result_same=False, bool_result=True),
    "OpGroupNonUniformAny": _group(1, _B, result_same=False, bool_result=True),
    "OpGroupNonUniformAllEqual": _group(1, result_same=False, bool_result=True),
    "OpGroupNonUniformBroadcast": _group(1, index_at=2),
    "OpGroupNonUniformBroadcastFirst": _group(1),
    "OpGroupNonUniformBallot": _ballot,
    "OpGroupNonUniformInverseBallot": _ballot_value(1, "OpTypeBool"),
    "OpGroupNonUniformBallotBitExtract": _ballot_value(1, "OpTypeBool", index_at=2),
    "OpGroupNonUniformBallotBitCount": _ballot_value(2, "OpTypeInt"),
    "OpGroupNonUniformBallotFindLSB": _ballot_value(1, "OpTypeInt"),
    "OpGroupNonUniformBallotFindMSB": _ballot_value(1, "OpTypeInt"),
    **{op: _group(1, index_at=2) for op in ("OpGroupNonUniformShuffle", "OpGroupNonUniformShuffleXor",
                                            "OpGroupNonUniformShuffleUp", "OpGroupNonUniformShuffleDown",
                                            "OpGroupNonUniformQuadBroadcast", "OpGroupNonUniformQuadSwap")},
    **{op: _group(2, _I) for op in ("OpGroupNonUniformIAdd", "OpGroupNonUniformIMul", "OpGroupNonUniformSMin",
                                    "OpGroupNonUniformUMin", "OpGroupNonUniformSMax", "OpGroupNonUniformUMax",
                                    "OpGroupNonUniformBitwiseAnd", "OpGroupNonUniformBitwiseOr",
                                    "OpGroupNonUniformBitwiseXor")},
    **{op: _group(2, _F) for op in ("OpGroupNonUniformFAdd", "OpGroupNonUniformFMul", "OpGroupNonUniformFMin",
                                    "OpGroupNonUniformFMax")},
    **{op: _group(2, _B) for op in ("OpGroupNonUniformLogicalAnd", "OpGroupNonUniformLogicalOr",
                                    "OpGroupNonUniformLogicalXor")},
}


# -- GLSL.std.450 ---------------------------------------------------------------------------------
_GLSL_SAME_F = {1: ("Round", "RoundEven", "Trunc", "FAbs", "FSign", "Floor", "Ceil", "Fract", "Radians",
                    "Degrees", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tanh", "Asinh",
                    "Acosh", "Atanh", "Exp", "Log", "Exp2", "Log2", "Sqrt", "InverseSqrt", "Normalize"),
                2: ("Atan2", "Pow", "FMin", "FMax", "NMin", "NMax", "Step", "Reflect", "Cross"),
                3: ("FClamp", "NClamp", "FMix", "SmoothStep", "Fma", "FaceForward")}
_GLSL_SAME_I = {1: ("SAbs", "SSign"), 2: ("SMin", "SMax", "UMin", "UMax"), 3: ("SClamp", "UClamp", "IMix")}
# name -> (result: (kind, components, width or None), operands: [(kind, components, width)])
_GLSL_PACK = {
    "PackSnorm4x8": (("int", 1, 32), [("float", 4, 32)]), "PackUnorm4x8": (("int", 1, 32), [("float", 4, 32)]),
    "PackSnorm2x16": (("int", 1, 32), [("float", 2, 32)]), "PackUnorm2x16": (("int", 1, 32), [("float", 2, 32)]),
    "PackHalf2x16": (("int", 1, 32), [("float", 2, 32)]), "PackDouble2x32": (("float", 1, 64), [("int", 2, 32)]),
    "UnpackSnorm2x16": (("float", 2, 32), [("int", 1, 32)]), "UnpackUnorm2x16": (("float", 2, 32), [("int", 1, 32)]),
    "UnpackHalf2x16": (("float", 2, 32), [("int", 1, 32)]), "UnpackSnorm4x8": (("float", 4, 32), [("int", 1, 32)]),
    "UnpackUnorm4x8": (("float", 4, 32), [("int", 1, 32)]), "UnpackDouble2x32": (("int", 2, 32), [("float", 1, 64)]),
}


def _glsl(v, ins):
    spec = v.g.extinst.get("GLSL.std.450", {}).get(ins.operands[1])
    if spec is None:
        raise ins.error(f"GLSL.std.450 has no instruction {ins.operands[1]}")
    name = spec.opname
    args = ins.operands[2:]
    want = sum(1 for o in spec.operands if o.kind == "IdRef")
    v.want(ins, len(args) == want, f"GLSL.std.450 {name} takes {want} operands; it has {len(args)}")
    r = ins.result_type
    for x in args:
        v._value(ins, x)
    for kinds, table in ((_F, _GLSL_SAME_F), (_I, _GLSL_SAME_I)):
        for n, names in table.items():
            if name in names:
                v.want(ins, v.kind(r) in kinds and v.count(r) is not None and v.top(r) in _PER_COMPONENT,
                       f"GLSL.std.450 {name} gives {kinds[0]} scalars or vectors, not {v.describe(r)}")
                for x in args:
                    v.like(ins, x, r)
                if name == "Cross":
                    v.want(ins, v.count(r) == 3, "GLSL.std.450 Cross takes 3-component vectors")
                return
    if name in _GLSL_PACK:
        res, ops = _GLSL_PACK[name]
        for x, (k, n, w) in [(None, res)] + list(zip(args, ops)):
            t = r if x is None else v.t(x)
            v.want(ins, v.kind(t) == k and v.count(t) == n and v.width(t) == w,
                   f"GLSL.std.450 {name}: {'the result' if x is None else f'operand %{x}'} has type "
                   f"{v.describe(t)}; {n} x {k}{w} is needed")
        return
    if name in ("Length", "Distance"):
        t = v.numeric(ins, args[0], _F)
        for x in args[1:]:
            v.like(ins, x, t)
        v.want(ins, v.same(v.comp(t), r), f"the result has type {v.describe(r)}, not {v.describe(v.comp(t))}")
    elif name == "Determinant":
        m = _matrix_dims(v, v.t(args[0]))
        v.want(ins, m is not None and m[0] == m[1] and v.same(m[2], r),
               "GLSL.std.450 Determinant takes a square matrix and gives its component type")
    elif name == "MatrixInverse":
        m = _matrix_dims(v, r)
        v.want(ins, m is not None and m[0] == m[1], "GLSL.std.450 MatrixInverse gives a square matrix")
        v.like(ins, args[0], r)
    elif name == "Refract":
        v.want(ins, v.kind(r) == "float" and v.top(r) in _PER_COMPONENT, "Refract gives floats")
        v.like(ins, args[0], r)
        v.like(ins, args[1], r)
        t = v.numeric(ins, args[2], _F, "eta")
        v.want(ins, v.count(t) == 1, "eta is not a float scalar")
    elif name == "Ldexp":
        v.want(ins, v.kind(r) == "float" and v.top(r) in _PER_COMPONENT, "Ldexp gives floats")
        v.like(ins, args[0], r)
        t = v.numeric(ins, args[1], _I, "exponent")
        v.want(ins, v.same_count(t, r), "the exponent has another number of components than the result")
    elif name in ("FindILsb", "FindSMsb", "FindUMsb"):
        v.want(ins, v.kind(r) == "int" and v.top(r) in _PER_COMPONENT, f"{name} gives integers")
        t = v.numeric(ins, args[0], _I)
        v.want(ins, v.same_count(t, r) and v.width(t) == v.width(r),
               f"operand of type {v.describe(t)} for a {v.describe(r)} result")
    elif name in ("Modf", "Frexp"):
        v.want(ins, v.kind(r) == "float" and v.top(r) in _PER_COMPONENT, f"{name} gives floats")
        v.like(ins, args[0], r)
        pt = v.pointer(ins, args[1])
        if name == "Modf":
            v.want(ins, pt is None or v.same(pt, r), "the pointer does not point to the result type")
        else:
            v.want(ins, pt is None or (v.kind(pt) == "int" and v.same_count(pt, r)),
                   "the pointer does not point to integers of the result's shape")
    elif name in ("ModfStruct", "FrexpStruct"):
        d = v.tdef(r)
        v.want(ins, d is not None and d.opname == "OpTypeStruct" and len(d.operands) == 2,
               f"{name} gives a struct of two members")
        v.like(ins, args[0], d.operands[0])
        v.want(ins, v.kind(d.operands[0]) == "float", f"{name}: the first member is not a float")
        if name == "ModfStruct":
            v.want(ins, v.same(d.operands[0], d.operands[1]), "ModfStruct: the members differ in type")
        else:
            v.want(ins, v.kind(d.operands[1]) == "int" and v.same_count(d.operands[1], d.operands[0]),
                   "FrexpStruct: the second member is not integers of the first member's shape")
