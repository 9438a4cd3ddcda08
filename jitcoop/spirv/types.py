"""SPIR-V types after specialization, with their memory layouts.

A value of any type is handled by the code generator as a flat list of scalar *leaves* (a vec3 is
three leaves, a struct {vec2, float[2]} is four); `leaves()` gives them with their byte offsets in
memory, honouring Offset, ArrayStride, MatrixStride and RowMajor where the type carries them, and a
natural (scalar-aligned) layout where it does not (Function, Private and Workgroup variables).
"""
from __future__ import annotations

from dataclasses import dataclass, field


class Type:
    id: int | None = None


@dataclass(eq=False)
class Void(Type):
    pass


@dataclass(eq=False)
class Scalar(Type):
    kind: str            # "int", "float", "bool", "ptr" (a physical pointer stored as a value)
    width: int
    signed: bool = False
    encoding: str = ""   # "" (IEEE), "bf16", "e4m3", "e5m2"

    @property
    def size(self):
        return 4 if self.kind == "bool" else self.width // 8

    def key(self):
        return (self.kind, self.width, self.signed, self.encoding)

    def __str__(self):
        if self.kind == "int":
            return f"{'i' if self.signed else 'u'}{self.width}"
        if self.kind == "float":
            return self.encoding or f"f{self.width}"
        return self.kind


@dataclass(eq=False)
class Vector(Type):
    elem: Scalar
    n: int


@dataclass(eq=False)
class CoopMat(Vector):
    """A cooperative matrix, as one invocation sees it: a composite of `n` components (its
    fragment, OpCooperativeMatrixLengthKHR) that the device profile's lane layout maps to
    (row, col) of the rows x cols matrix the scope instance holds together. Being a Vector, a
    fragment is handled like any per-lane vector (leaves, spills, phis, composites, memory);
    only the instructions that see the whole matrix are collective."""
    scope: int = 3                # 3 Subgroup, 2 Workgroup
    rows: int = 0
    cols: int = 0
    use: int = 0                  # 0 MatrixA, 1 MatrixB, 2 MatrixAccumulator
    layout: object = None         # jitcoop.devices.layouts.Layout (None: not placed on a device)

    def key(self):
        return (self.elem.key(), self.scope, self.rows, self.cols, self.use)


@dataclass(eq=False)
class CoopVec(Vector):
    """A cooperative vector (SPV_NV_cooperative_vector): per invocation, n components."""


USE_NAMES = ("A", "B", "Accumulator")
SCOPE_NAMES = {2: "Workgroup", 3: "Subgroup"}


@dataclass(eq=False)
class Matrix(Type):
    col: Vector
    ncols: int


@dataclass(eq=False)
class Array(Type):
    elem: Type
    length: int | None           # None: runtime array
    stride: int | None = None    # ArrayStride when decorated


@dataclass(eq=False)
class Member:
    type: Type
    offset: int | None = None
    row_major: bool = False
    matrix_stride: int | None = None
    builtin: str | None = None


@dataclass(eq=False)
class Struct(Type):
    members: list = field(default_factory=list)   # [Member]
    block: bool = False


@dataclass(eq=False)
class TensorLayout(Struct):
    """OpTypeTensorLayoutNV: the addressing state of SPV_NV_tensor_addressing as a struct of
    uint32 leaves, so that a layout is an ordinary SSA value (copies, phis, variables):
    blockSize[D], layoutDimension[D], stride[D], offset[D] (int32 bits), span[D], clampValue.
    One leaf type throughout lets a layout live in one block of slot rows like a matrix."""
    dims: int = 1
    clamp: int = 0               # Tensor Clamp Mode (a spec constant is fixed by specialization)

    BLOCK, DIM, STRIDE, OFFSET, SPAN = range(5)

    def leaf(self, part: int, i: int = 0) -> int:
        """Index of leaf i of one part (BLOCK...SPAN); part 5 is the clamp value."""
        return part * self.dims + i


@dataclass(eq=False)
class TensorView(Struct):
    """OpTypeTensorViewNV: viewDimension[D], viewStride[D], clipRowOffset, clipRowSpan,
    clipColOffset, clipColSpan as 32-bit leaves; HasDimensions and the permutation are static."""
    dims: int = 1
    has_dims: bool = False
    perm: tuple = ()


def tensor_layout(dims: int, clamp: int) -> TensorLayout:
    u32 = Scalar("int", 32, False)
    parts = [Array(u32, dims) for _ in range(5)]
    return TensorLayout([Member(t) for t in parts] + [Member(u32)], False, dims, clamp)


def tensor_view(dims: int, has_dims: bool, perm: tuple) -> TensorView:
    u32 = Scalar("int", 32, False)
    return TensorView([Member(Array(u32, dims)), Member(Array(u32, dims))] + [Member(u32)] * 4,
                      False, dims, has_dims, perm)


@dataclass(eq=False)
class Pointer(Type):
    storage: str
    pointee: Type | None = None                   # filled in after creation (recursive types)
    array_stride: int | None = None               # for OpPtrAccessChain on physical pointers

    @property
    def physical(self):
        return self.storage == "PhysicalStorageBuffer"


@dataclass(eq=False)
class FunctionType(Type):
    ret: Type
    params: list


@dataclass(eq=False)
class Opaque(Type):
    """A type the generic code generator does not look into (cooperative types, images...)."""
    opname: str
    operands: tuple = ()


PTR64 = Scalar("ptr", 64)


def holds_matrix(t: Type) -> bool:
    """An array or struct with a cooperative matrix among its leaves (whose fragments each lane
    holds). Other aggregates are LLVM's to split, in its allocas."""
    if isinstance(t, Array):
        return isinstance(t.elem, CoopMat) or holds_matrix(t.elem)
    if isinstance(t, Struct):
        return any(isinstance(m.type, CoopMat) or holds_matrix(m.type) for m in t.members)
    return False


def align_of(t: Type) -> int:
    if isinstance(t, Scalar):
        return t.size
    if isinstance(t, Vector):
        return t.elem.size
    if isinstance(t, Matrix):
        return t.col.elem.size
    if isinstance(t, Array):
        return align_of(t.elem)
    if isinstance(t, Struct):
        return max([align_of(m.type) for m in t.members] or [1])
    if isinstance(t, Pointer):
        return 8
    return 1


def array_stride(t: Array) -> int:
    if t.stride is not None:
        return t.stride
    a = align_of(t.elem)
    return -(-size_of(t.elem) // a) * a


def member_offsets(t: Struct) -> list[int]:
    offs, pos = [], 0
    for m in t.members:
        if m.offset is not None:
            pos = m.offset
        else:
            a = align_of(m.type)
            pos = -(-pos // a) * a
        offs.append(pos)
        pos += size_of(m.type, m)
    return offs


def size_of(t: Type, member: Member | None = None) -> int:
    """Bytes the type occupies (a runtime array counts as 0)."""
    if isinstance(t, Scalar):
        return t.size
    if isinstance(t, Vector):
        return t.n * t.elem.size
    if isinstance(t, Matrix):
        ms = member.matrix_stride if member and member.matrix_stride else None
        if ms is None:
            return t.ncols * t.col.n * t.col.elem.size
        if member.row_major:
            return ms * (t.col.n - 1) + t.ncols * t.col.elem.size
        return ms * (t.ncols - 1) + t.col.n * t.col.elem.size
    if isinstance(t, Array):
        if t.length is None:
            return 0
        return array_stride(t) * t.length
    if isinstance(t, Struct):
        if not t.members:
            return 0
        offs = member_offsets(t)
        end = max(o + size_of(m.type, m) for o, m in zip(offs, t.members))
        a = align_of(t)
        return -(-end // a) * a
    if isinstance(t, Pointer):
        return 8
    raise TypeError(f"type {t} has no size")


def leaves(t: Type, base: int = 0, member: Member | None = None) -> list:
    """[(Scalar, byte offset)] for every scalar of the type, in value order."""
    if isinstance(t, Scalar):
        return [(t, base)]
    if isinstance(t, Pointer):
        return [(PTR64, base)]
    if isinstance(t, Vector):
        s = t.elem.size
        return [(t.elem, base + i * s) for i in range(t.n)]
    if isinstance(t, Matrix):
        s = t.col.elem.size
        ms = member.matrix_stride if member and member.matrix_stride else None
        row_major = bool(member and member.row_major)
        out = []
        for c in range(t.ncols):
            for r in range(t.col.n):
                if ms is None:
                    off = (c * t.col.n + r) * s
                elif row_major:
                    off = r * ms + c * s
                else:
                    off = c * ms + r * s
                out.append((t.col.elem, base + off))
        return out
    if isinstance(t, Array):
        if t.length is None:
            raise TypeError("a runtime array has no leaves")
        st = array_stride(t)
        out = []
        for i in range(t.length):
            out.extend(leaves(t.elem, base + i * st))
        return out
    if isinstance(t, Struct):
        out = []
        for m, off in zip(t.members, member_offsets(t)):
            out.extend(leaves(m.type, base + off, m))
        return out
    if isinstance(t, Opaque):
        return [(t, base)]
    raise TypeError(f"type {t} has no leaves")


def n_leaves(t: Type) -> int:
    if isinstance(t, (Scalar, Pointer, Opaque)):
        return 1
    if isinstance(t, Vector):
        return t.n
    if isinstance(t, Matrix):
        return t.ncols * t.col.n
    if isinstance(t, Array):
        return (t.length or 0) * n_leaves(t.elem)
    if isinstance(t, Struct):
        return sum(n_leaves(m.type) for m in t.members)
    return 0


def child(t: Type, index: int) -> tuple[Type, int]:
    """The type of component `index` of a composite and the position of its first leaf."""
    if isinstance(t, Vector):
        return t.elem, index
    if isinstance(t, Matrix):
        return t.col, index * t.col.n
    if isinstance(t, Array):
        return t.elem, index * n_leaves(t.elem)
    if isinstance(t, Struct):
        return t.members[index].type, sum(n_leaves(m.type) for m in t.members[:index])
    raise TypeError(f"{t} is not a composite")


def describe(t: Type) -> str:
    if isinstance(t, Scalar):
        return str(t)
    if isinstance(t, CoopMat):
        return (f"coopmat<{t.elem}, {SCOPE_NAMES.get(t.scope, t.scope)}, {t.rows}x{t.cols}, "
                f"{USE_NAMES[t.use] if 0 <= t.use < 3 else t.use}>")
    if isinstance(t, CoopVec):
        return f"coopvec<{t.elem}, {t.n}>"
    if isinstance(t, TensorLayout):
        return f"tensorLayoutNV<{t.dims}, clamp mode {t.clamp}>"
    if isinstance(t, TensorView):
        return f"tensorViewNV<{t.dims}, {str(t.has_dims).lower()}{''.join(f', {p}' for p in t.perm)}>"
    if isinstance(t, Vector):
        return f"{t.elem}vec{t.n}"
    if isinstance(t, Matrix):
        return f"{t.col.elem}mat{t.ncols}x{t.col.n}"
    if isinstance(t, Array):
        return f"{describe(t.elem)}[{'' if t.length is None else t.length}]"
    if isinstance(t, Struct):
        return "struct{" + ", ".join(describe(m.type) for m in t.members) + "}"
    if isinstance(t, Pointer):
        return f"ptr<{t.storage}>"
    if isinstance(t, Opaque):
        return t.opname
    return type(t).__name__
