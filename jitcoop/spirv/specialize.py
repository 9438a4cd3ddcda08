"""Specialization: spec constant values fix every type, size and constant of a module.

`Specialization(module, values)` answers `type(id)` and `const(id)` (a constant's leaves as Python
numbers: ints in their type's range, floats rounded to their type, bools). OpSpecConstantOp is
folded here with the same wrapping rules as the generated code.
"""
from __future__ import annotations

import math
import numbers
import struct

import numpy as np

from ..errors import BindingError, SpirvError
from .grammar import grammar
from .module import Module
from .types import (Array, CoopMat, CoopVec, FunctionType, Matrix, Member, Opaque, Pointer, Scalar, Struct,
                    Type, Vector, leaves, n_leaves, tensor_layout, tensor_view)

_STORAGE = None
# The largest cooperative matrix jitcoop lays out: 2048 x 2048, four times the elements of the
# largest the measured devices offer (1024 x 1024 flexible dimensions, shared/oracle).
MAX_COOPMAT_ELEMENTS = 1 << 22
# The most components a cooperative vector may have: Vulkan's maxCooperativeVectorComponents
# (VK_NV_cooperative_vector's runtime rule: a cooperative vector type's Component Count is at most
# that limit), 512 on the measured H100 and in what jitcoop's Vulkan driver reports. Without a bound a count of 2^31 reached the code generator (MemoryError).
MAX_COOPVEC_COMPONENTS = 512


def storage_name(v: int) -> str:
    return grammar().enum_name("StorageClass", v)


def wrap_int(v: int, t: Scalar) -> int:
    v &= (1 << t.width) - 1
    if t.signed and v >> (t.width - 1):
        v -= 1 << t.width
    return v


def round_float(v: float, t: Scalar) -> float:
    if t.width == 64:
        return float(v)
    if t.width == 32:
        return float(np.float32(v))
    if t.width == 16 and not t.encoding:
        return float(np.float64(v).astype(np.float16))
    if t.encoding == "bf16":
        b = struct.unpack("<I", struct.pack("<f", np.float32(v)))[0]
        if math.isnan(v):
            b = (b | 0x400000)
        else:
            b += 0x7FFF + ((b >> 16) & 1)
        return struct.unpack("<f", struct.pack("<I", (b >> 16) << 16 & 0xFFFFFFFF))[0]
    return float(v)


def float_from_bits(bits: int, t: Scalar) -> float:
    if t.width == 64:
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if t.width == 32:
        return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
    if t.encoding == "bf16":
        return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
    if t.width == 16:
        return float(np.array([bits & 0xFFFF], np.uint16).view(np.float16)[0])
    if t.width == 8:
        from ..kernels import formats
        fn = formats.e4m3_to_f32 if t.encoding == "e4m3" else formats.e5m2_to_f32
        return float(fn(np.uint8(bits)))
    raise SpirvError(f"float width {t.width} is not supported")


class Specialization:
    def __init__(self, module: Module, values: dict | None = None):
        self.m = module
        self.values = dict(values or {})
        self._types: dict[int, Type] = {}
        self._consts: dict[int, list] = {}
        self.synthetic: dict = {}          # id -> Instruction: constants made by analysis passes
        # Places a cooperative matrix type on a device: (CoopMat) -> Layout. Set by the kernel
        # generator; without it a matrix type has no fragment length (enough for `check`/`info`).
        self.coop_layout = None
        spec_ids = set()
        for ins in module.global_order:
            if ins.opname.startswith("OpSpecConstant") and ins.opname != "OpSpecConstantOp":
                sid = module.decoration(ins.result, "SpecId")
                if sid is not None:
                    spec_ids.add(sid[0])
        self.spec_ids = spec_ids
        for k in self.values:
            if k not in spec_ids:
                raise BindingError(f"unknown spec id {k}: the module declares "
                                   f"{sorted(spec_ids) if spec_ids else 'no spec ids'}")

    # -- types ------------------------------------------------------------------------------------
    def type(self, tid: int) -> Type:
        t = self._types.get(tid)
        if t is None:
            t = self._make_type(tid)
        return t

    def _make_type(self, tid: int) -> Type:
        ins = self.m.defs.get(tid)
        if ins is None or not ins.opname.startswith("OpType"):
            raise SpirvError(f"%{tid} is used as a type but is not one")
        op, o = ins.opname, ins.operands
        if op == "OpTypeVoid":
            t = Scalar("void", 0) if False else Opaque("OpTypeVoid")
        elif op == "OpTypeBool":
            t = Scalar("bool", 32)
        elif op == "OpTypeInt":
            t = Scalar("int", o[0], bool(o[1]))
            if o[0] not in (8, 16, 32, 64):
                raise ins.error(f"integer width {o[0]} is not supported")
        elif op == "OpTypeFloat":
            enc = ""
            if len(o) > 1:
                enc = {"BFloat16KHR": "bf16", "Float8E4M3EXT": "e4m3", "Float8E5M2EXT": "e5m2"}.get(
                    grammar().enum_name("FPEncoding", o[1]), "?")
                if enc == "?":
                    raise ins.error("unsupported floating-point encoding")
            t = Scalar("float", o[0], True, enc)
        elif op == "OpTypeVector":
            t = Vector(self.type(o[0]), o[1])
        elif op == "OpTypeMatrix":
            t = Matrix(self.type(o[0]), o[1])
        elif op == "OpTypeArray":
            length = self.scalar_const(o[1])
            t = Array(self.type(o[0]), int(length), self._stride(tid))
        elif op == "OpTypeRuntimeArray":
            t = Array(self.type(o[0]), None, self._stride(tid))
        elif op == "OpTypeStruct":
            t = Struct([], block=self.m.has_decoration(tid, "Block") or self.m.has_decoration(tid, "BufferBlock"))
            t.id = tid
            self._types[tid] = t           # before members: pointers may refer back
            for i, mid in enumerate(o):
                off = self.m.member_decoration(tid, i, "Offset")
                ms = self.m.member_decoration(tid, i, "MatrixStride")
                bi = self.m.member_decoration(tid, i, "BuiltIn")
                t.members.append(Member(self.type(mid), off[0] if off else None,
                                        self.m.member_decoration(tid, i, "RowMajor") is not None,
                                        ms[0] if ms else None,
                                        grammar().enum_name("BuiltIn", bi[0]) if bi else None))
            return t
        elif op == "OpTypePointer" or op == "OpTypeUntypedPointerKHR":
            t = Pointer(storage_name(o[0]), None, self._stride(tid))
            t.id = tid
            self._types[tid] = t
            t.pointee = self.type(o[1])
            return t
        elif op == "OpTypeCooperativeMatrixKHR":
            elem = self.type(o[0])
            if not isinstance(elem, Scalar) or elem.kind not in ("int", "float"):
                raise ins.error("the component type of a cooperative matrix must be a numerical scalar")
            scope, rows, cols, use = (int(self.scalar_const(x)) for x in o[1:5])
            if scope not in (2, 3):
                raise ins.error(f"cooperative matrix scope {scope} is not supported "
                                "(Workgroup = 2 or Subgroup = 3)")
            if rows < 1 or cols < 1 or rows * cols > MAX_COOPMAT_ELEMENTS:
                raise ins.error(f"cooperative matrix of {rows} x {cols} elements (jitcoop holds 1 to "
                                f"{MAX_COOPMAT_ELEMENTS} elements)")
            if use not in (0, 1, 2):
                raise ins.error(f"cooperative matrix Use {use} is not MatrixA (0), MatrixB (1) or "
                                "MatrixAccumulator (2)")
            t = CoopMat(elem, 0, scope, rows, cols, use)
            t.id = tid
            if self.coop_layout is not None:
                t.layout = self.coop_layout(t, ins)
                t.n = t.layout.length
        elif op == "OpTypeCooperativeVectorNV":
            elem = self.type(o[0])
            n = int(self.scalar_const(o[1]))
            if not isinstance(elem, Scalar) or elem.kind not in ("int", "float") or n < 1:
                raise ins.error("a cooperative vector needs a numerical component type and at "
                                "least one component")
            if n > MAX_COOPVEC_COMPONENTS:
                raise ins.error(f"a cooperative vector of {n} components (at most "
                                f"maxCooperativeVectorComponents = {MAX_COOPVEC_COMPONENTS})")
            t = CoopVec(elem, n)
        elif op == "OpTypeTensorLayoutNV":
            dims, clamp = int(self.scalar_const(o[0])), int(self.scalar_const(o[1]))
            if not 1 <= dims <= 5:
                raise ins.error(f"a tensor layout has 1 to 5 dimensions, not {dims}")
            if not 0 <= clamp <= 4:
                raise ins.error(f"Tensor Clamp Mode {clamp} is not one of Undefined (0), Constant (1), "
                                "ClampToEdge (2), Repeat (3), RepeatMirrored (4)")
            t = tensor_layout(dims, clamp)
        elif op == "OpTypeTensorViewNV":
            dims = int(self.scalar_const(o[0]))
            if not 1 <= dims <= 5 or len(o) != 2 + dims:
                raise ins.error(f"a tensor view has 1 to 5 dimensions and one permutation entry "
                                f"per dimension (Dim {dims}, {len(o) - 2} entries)")
            perm = tuple(int(self.scalar_const(x)) for x in o[2:])
            if sorted(perm) != list(range(dims)):
                raise ins.error(f"the permutation {perm} of a tensor view is not a permutation of "
                                f"0..{dims - 1}")
            t = tensor_view(dims, bool(self.scalar_const(o[1])), perm)
        elif op == "OpTypeFunction":
            t = FunctionType(self.type(o[0]), [self.type(p) for p in o[1:]])
        else:
            t = Opaque(op, tuple(o))
        t.id = tid
        self._types[tid] = t
        return t

    def _stride(self, tid):
        s = self.m.decoration(tid, "ArrayStride")
        return s[0] if s else None

    def local_size(self, ep) -> tuple | None:
        """The workgroup size of entry point `ep`: LocalSize, LocalSizeId, or a constant decorated
        BuiltIn WorkgroupSize (which wins); None if the module gives none."""
        size = None
        for mode, args, _ in ep.modes:
            if mode == "LocalSize":
                size = tuple(args)
            elif mode == "LocalSizeId":
                size = tuple(int(self.scalar_const(a)) for a in args)
        for ins in self.m.global_order:
            bi = self.m.decoration(ins.result, "BuiltIn") if ins.result is not None else None
            if bi and grammar().enum_name("BuiltIn", bi[0]) == "WorkgroupSize" and self.is_const(ins.result):
                size = tuple(int(v) for v in self.const(ins.result))
        return size

    # -- constants --------------------------------------------------------------------------------
    def def_of(self, cid: int):
        """The instruction defining a module-level id, or a constant a code generator pass made."""
        return self.m.defs.get(cid) or self.synthetic.get(cid)

    def is_const(self, cid: int) -> bool:
        ins = self.def_of(cid)
        return ins is not None and (ins.opname.startswith(("OpConstant", "OpSpecConstant"))
                                    or ins.opname == "OpUndef")

    def add_constant(self, cid: int, type_id: int, value):
        """A scalar constant made by a pass (jitcoop.analysis.unroll: an unrolled loop's counter),
        with an id the pass chose: known to this specialization only, never to the module."""
        from .reader import Instruction
        self.synthetic[cid] = Instruction(43, "OpConstant", 0, type_id, cid, [], [])
        self._consts[cid] = [value]

    def add_undef(self, cid: int, type_id: int):
        """An undefined value of a type (jitcoop.analysis.ssa: a variable read before it is written)."""
        from .reader import Instruction
        self.synthetic[cid] = Instruction(1, "OpUndef", 0, type_id, cid, [], [])

    def const(self, cid: int) -> list:
        v = self._consts.get(cid)
        if v is None:
            v = self._make_const(cid)
            self._consts[cid] = v
        return v

    def scalar_const(self, cid: int):
        v = self.const(cid)
        if len(v) != 1:
            raise SpirvError(f"%{cid} is used as a scalar constant but has {len(v)} components")
        return v[0]

    def known(self, cid: int) -> list | None:
        """A constant's components when its value is known (not OpUndef), else None: what the
        rewriting passes may fold."""
        if not self.is_const(cid) or self.def_of(cid).opname == "OpUndef":
            return None
        return self.const(cid)

    def known_int(self, cid: int) -> int | None:
        """An integer scalar constant's known value, else None (booleans, floats, OpUndef)."""
        v = self.known(cid)
        if v is None or len(v) != 1 or isinstance(v[0], bool) or not isinstance(v[0], int):
            return None
        return v[0]

    def _make_const(self, cid: int) -> list:
        ins = self.def_of(cid)
        if ins is None or not self.is_const(cid):
            raise SpirvError(f"%{cid} is used as a constant but is not one")
        op, o = ins.opname, ins.operands
        t = self.type(ins.result_type)
        if op in ("OpConstantTrue", "OpConstantFalse", "OpSpecConstantTrue", "OpSpecConstantFalse"):
            val = op.endswith("True")
            sid = self.m.decoration(cid, "SpecId") if op.startswith("OpSpec") else None
            if sid and sid[0] in self.values:
                val = self._host_value(self.values[sid[0]], t, ins)
            return [val]
        if op in ("OpConstant", "OpSpecConstant"):
            bits = o[0]
            sid = self.m.decoration(cid, "SpecId") if op == "OpSpecConstant" else None
            if sid and sid[0] in self.values:
                return [self._host_value(self.values[sid[0]], t, ins)]
            if not isinstance(t, Scalar):
                raise ins.error("OpConstant of a non-scalar type")
            if t.kind == "int":
                return [wrap_int(bits, t)]
            return [float_from_bits(bits, t)]
        if op in ("OpConstantComposite", "OpSpecConstantComposite", "OpConstantCompositeReplicateEXT",
                  "OpSpecConstantCompositeReplicateEXT"):
            if op.endswith("ReplicateEXT") or (isinstance(t, CoopMat) and len(o) == 1):
                return self._replicate(t, self.const(o[0]))
            out = []
            for c in o:
                out.extend(self.const(c))
            return out
        if op in ("OpConstantNull", "OpUndef"):
            return [False if (isinstance(s, Scalar) and s.kind == "bool") else
                    (0.0 if isinstance(s, Scalar) and s.kind == "float" else 0)
                    for s, _ in leaves(t)] if not isinstance(t, Opaque) else [0]
        if op == "OpSpecConstantOp":
            return self._fold(ins, t)
        raise ins.error("constant instruction not supported")

    def _replicate(self, t, v):
        n = n_leaves(t) // max(1, len(v))
        return v * n

    def _host_value(self, v, t: Type, ins):
        if not isinstance(t, Scalar):
            raise ins.error("spec constant of a non-scalar type")
        if isinstance(v, (bytes, bytearray, memoryview)):
            # Raw specialization data, as vkSpecializationInfo gives it: little-endian, 4 bytes
            # for bools (VkBool32) and the type's width otherwise.
            v = bytes(v)
            size = 4 if t.kind == "bool" else t.width // 8
            if len(v) != size:
                raise BindingError(f"spec constant {self.m.name_of(ins.result)} takes {size} bytes; "
                                   f"got {len(v)}")
            bits = int.from_bytes(v, "little")
            if t.kind == "bool":
                return bits != 0
            if t.kind == "int":
                return wrap_int(bits, t)
            return float_from_bits(bits, t)
        name = self.m.name_of(ins.result)
        if not isinstance(v, (numbers.Real, np.bool_)):
            raise BindingError(f"spec constant {name} takes a number, a bool or its raw bytes; got "
                               f"{type(v).__name__}")
        if t.kind == "bool":
            return bool(v)
        if t.kind == "int":
            if isinstance(v, (float, np.floating)) and not float(v).is_integer():
                raise BindingError(f"spec constant {name} is an integer; got {v}")
            # either reading of the bits is accepted: -1 for a u32 is all ones
            if not -(1 << (t.width - 1)) <= int(v) < (1 << t.width):
                raise BindingError(f"spec constant {name} is a {t}; {v} is out of its range")
            return wrap_int(int(v), t)
        try:
            return round_float(float(v), t)
        except OverflowError:
            raise BindingError(f"spec constant {name} is a {t}; {v} is out of its range") from None

    def _fold(self, ins, t) -> list:
        o = ins.operands
        spec = grammar().by_opcode.get(o[0])
        if spec is None:
            raise ins.error(f"OpSpecConstantOp of unknown opcode {o[0]}")
        opname = spec.opname[2:]            # fold() names operations without the "Op"
        args = o[1:]
        from .fold import fold
        try:
            return fold(self, opname, t, args)
        except KeyError:
            raise ins.error(f"OpSpecConstantOp Op{opname} is not supported") from None
