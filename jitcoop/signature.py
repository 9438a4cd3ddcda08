"""What a kernel takes, by name: its buffers, push constant members and specialization constants.

A `Signature` is read from the module's own reflection (OpName/OpMemberName, the Offset,
ArrayStride and MatrixStride decorations, SpecIds), the same facts `jitcoop info` prints, so a
dispatch can say

    k((gx, gy), a=A, b=B, c=C, push={"M": 1024, "alpha": 1.5})

instead of binding numbers and hand-packed bytes. It turns names into the `{(set, binding): array}`
dictionary and the push constant bytes that `Kernel.dispatch` works on, views a binding's bytes
with the shader's element types (`Kernel.view`), and maps spec constant names to SpecIds
(`spec_ids`). Every mistake is a `BindingError` that lists what the shader expects.

A binding is known by its variable's name (`buffer B { ... } c;` -> "c"), its block's name ("B"),
and, for a block of one member, that member's name (`buffer B { float c[]; };` -> "c", the name
the shader's code uses); an alias that two bindings share is left out.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import BindingError
from .runtime.memory import Buffer
from .spirv.specialize import Specialization
from .spirv.types import (Array, Matrix, Pointer, Scalar, Struct, Vector, array_stride, describe, leaves,
                          member_offsets, size_of)

_FLOAT_DTYPES = {(16, ""): np.dtype(np.float16), (32, ""): np.dtype(np.float32),
                 (64, ""): np.dtype(np.float64)}
# ml_dtypes' types, by name: importing ml_dtypes registers its types with numpy, which takes
# 0.1-0.6 s, more than the rest of jitcoop's import; the driver's processes (one per test
# program) and kernels without such buffers never need it
_ML_DTYPES = {(16, "bf16"): "bfloat16", (8, "e4m3"): "float8_e4m3fn", (8, "e5m2"): "float8_e5m2"}


def scalar_dtype(s: Scalar) -> np.dtype:
    """The numpy dtype of a SPIR-V scalar as memory holds it: bfloat16 and the fp8 formats are
    ml_dtypes types; a bool is a 32-bit word; a physical pointer a uint64."""
    if s.kind == "float":
        name = _ML_DTYPES.get((s.width, s.encoding))
        if name is not None:
            import ml_dtypes
            return np.dtype(getattr(ml_dtypes, name))
        return _FLOAT_DTYPES[s.width, s.encoding]
    if s.kind == "int":
        return np.dtype(f"{'i' if s.signed else 'u'}{s.width // 8}")
    if s.kind == "ptr":
        return np.dtype(np.uint64)
    return np.dtype(np.uint32)


# -- the parts of a signature ---------------------------------------------------------------------
@dataclass
class BindingParam:
    """A buffer binding: its names, where it binds, its block type and what it accepts by name."""
    name: str
    aliases: tuple
    set: int
    binding: int
    block: object                 # the pointee type: a Block struct (or whatever the variable holds)
    min_size: int
    writable: bool
    storage: str
    text: str                     # the block's members, as `info` writes types
    dtype: np.dtype | None        # the one scalar type of every element, None for mixed blocks

    def describe(self) -> str:
        kind = "uniform buffer" if self.storage == "Uniform" and not self.writable else "buffer"
        also = f" (also {', '.join(self.aliases)})" if self.aliases else ""
        return (f"{self.name}{also}: {self.text}  [set {self.set}, binding {self.binding}, {kind}, "
                f"{'writable' if self.writable else 'read-only'}]")


@dataclass
class PushMember:
    name: str
    offset: int
    type: object
    member: object                # the spirv.types.Member (matrix stride and order)
    text: str


@dataclass
class SpecParam:
    name: str
    spec_id: int
    type: str
    default: object
    used_for: list = field(default_factory=list)


def _type_text(m, t) -> str:
    if isinstance(t, Struct):
        return m.names.get(t.id) if t.id is not None and m.names.get(t.id) else describe(t)
    if isinstance(t, Array):
        return f"{_type_text(m, t.elem)}[{'' if t.length is None else t.length}]"
    return describe(t)


def _block_text(m, t) -> str:
    """A block as a call shows it: its member's type for a block of one member (`f32[]`), else
    its members (`{u32 count; Pair[] pairs}`)."""
    if isinstance(t, Struct) and len(t.members) == 1:
        return _type_text(m, t.members[0].type)
    if isinstance(t, Struct) and t.members:
        inner = "; ".join(f"{_type_text(m, mem.type)} {m.member_names.get((t.id, i)) or f'member{i}'}"
                          for i, mem in enumerate(t.members))
        return f"{{{inner}}}"
    return _type_text(m, t)


def _one_dtype(t) -> np.dtype | None:
    """The dtype of every scalar the type holds, if it is one type (runtime arrays included)."""
    kinds = set()

    def walk(x):
        if isinstance(x, Scalar):
            kinds.add(scalar_dtype(x))
        elif isinstance(x, Vector):
            walk(x.elem)
        elif isinstance(x, Matrix):
            walk(x.col.elem)
        elif isinstance(x, Array):
            walk(x.elem)
        elif isinstance(x, Struct):
            for mem in x.members:
                walk(mem.type)
        else:
            kinds.add(None)
    walk(t)
    return kinds.pop() if len(kinds) == 1 else None


# -- spec constants by name -----------------------------------------------------------------------
def spec_constants(spirv) -> list[SpecParam]:
    """The module's specialization constants: name (or "" when unnamed), SpecId, type, default and
    what they size (local_size_x...)."""
    from .info import module_info
    return [SpecParam(s["name"], s["spec_id"], s["type"], s["default"], s["used_for"])
            for s in module_info(spirv)["spec_constants"]]


def _spec_names(params) -> dict:
    """name -> SpecId: OpNames, and local_size_x/y/z for the spec constants that size the
    workgroup (glslang leaves those unnamed)."""
    out, clash = {}, set()
    for p in params:
        for n in [p.name] + [r for r in p.used_for if r.startswith("local_size_")]:
            if n and out.get(n, p.spec_id) != p.spec_id:
                clash.add(n)
            elif n:
                out[n] = p.spec_id
    for n in clash:
        del out[n]
    return out


def spec_ids(spirv, spec: dict) -> dict:
    """`spec` with every name replaced by its SpecId (int keys are kept as they are)."""
    if all(isinstance(k, int) for k in spec):
        return dict(spec)
    params = spec_constants(spirv)
    names = _spec_names(params)
    out = {}
    for k, v in spec.items():
        if isinstance(k, str):
            if k not in names:
                raise BindingError(f"no specialization constant named {k!r}; the module has "
                                   + _spec_list(params))
            k = names[k]
        elif not isinstance(k, int):
            raise BindingError(f"spec constant key {k!r}: use a SpecId (int) or a name (str)")
        if k in out:
            raise BindingError(f"spec constant {k} is given twice (by name and by SpecId)")
        out[k] = v
    return out


def _spec_list(params) -> str:
    if not params:
        return "none"
    return ", ".join(f"{p.name or '(unnamed)'} (SpecId {p.spec_id}, {p.type} = {p.default}"
                     + (f"; {', '.join(p.used_for)}" if p.used_for else "") + ")" for p in params)


# -- the signature --------------------------------------------------------------------------------
class Signature:
    """The named parameters of one kernel (see the module docstring)."""

    def __init__(self, kernel):
        m = kernel.module.spirv
        self.entry = kernel.entry
        self.local_size = tuple(kernel.local_size)
        self.bindings = self._bindings(m, kernel.meta.bindings)
        self.push = self._push(m, Specialization(m, kernel.spec))
        self.push_size = kernel.meta.push_size
        self.spec = spec_constants(m)
        self.spec_values = dict(kernel.spec)
        self._member_names = m.member_names
        self._names = {}
        for p in self.bindings:
            for n in (p.name,) + p.aliases:
                self._names[n] = p

    @staticmethod
    def _bindings(m, meta_bindings) -> list[BindingParam]:
        cands = []
        for b in meta_bindings:
            t = b.type
            var = m.names.get(b.var, "")
            block = m.names.get(t.id, "") if t.id is not None else ""
            member = m.member_names.get((t.id, 0), "") if isinstance(t, Struct) and len(t.members) == 1 else ""
            # An anonymous block's code names its member; a named one's code names the variable.
            names = [var, block, member] if var else [member, block]
            cands.append((b, list(dict.fromkeys(n for n in names if n))))
        count = {}
        for _, names in cands:
            for n in names:
                count[n] = count.get(n, 0) + 1
        out = []
        for b, names in cands:
            names = [n for n in names if count[n] == 1] or [f"binding_{b.set}_{b.binding}"]
            out.append(BindingParam(names[0], tuple(names[1:]), b.set, b.binding, b.type, b.min_size,
                                    b.writable, b.storage, _block_text(m, b.type), _one_dtype(b.type)))
        return sorted(out, key=lambda p: (p.set, p.binding))

    @staticmethod
    def _push(m, sp) -> list[PushMember]:
        for ins in m.global_order:
            if ins.opname != "OpVariable":
                continue
            pt = sp.type(ins.result_type)
            if not (isinstance(pt, Pointer) and pt.storage == "PushConstant"):
                continue
            t = pt.pointee
            if not isinstance(t, Struct):          # assembly may push a bare value
                return [PushMember("value", 0, t, None, describe(t))]
            return [PushMember(_mname(m.member_names, t, i), off, mem.type, mem, _type_text(m, mem.type))
                    for i, (mem, off) in enumerate(zip(t.members, member_offsets(t)))]
        return []

    # -- for people -------------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = [f"kernel {self.entry!r}, local size {self.local_size}"]
        lines.append("bindings:" if self.bindings else "bindings: none")
        lines += [f"  {p.describe()}" for p in self.bindings]
        if self.push:
            lines.append(f"push constants ({self.push_size} bytes):")
            lines += [f"  +{p.offset:<4} {p.name}: {p.text}" for p in self.push]
        if self.spec:
            lines.append("specialization constants:")
            for s in self.spec:
                val = self.spec_values.get(s.spec_id, s.default)
                lines.append(f"  {s.name or '(unnamed)'}: {s.type} = {val}  [SpecId {s.spec_id}"
                             + (f"; {', '.join(s.used_for)}" if s.used_for else "") + "]")
        return "\n".join(lines)

    def call_text(self) -> str:
        """How a call of this kernel reads: `k(grid, a=..., b=..., push={...})`."""
        args = ["grid"] + [f"{p.name}: {p.text}" for p in self.bindings]
        if self.push:
            args.append("push={" + ", ".join(f"{p.name}: {p.text}" for p in self.push) + "}")
        return f"{self.entry}({', '.join(args)})"

    def _expects(self) -> str:
        return "the kernel binds " + ("; ".join(p.describe() for p in self.bindings) or "nothing")

    # -- bindings ---------------------------------------------------------------------------------
    def param(self, name: str) -> BindingParam:
        p = self._names.get(name)
        if p is None:
            raise BindingError(f"the kernel has no binding named {name!r}; {self._expects()}")
        return p

    def bind(self, bindings: dict | None, named: dict) -> dict:
        """Names (in `named` or as str keys of `bindings`) -> the {(set, binding): value} that
        dispatch takes. Values bound by name must be numpy arrays or Buffers whose dtype is the
        buffer's element type, where the buffer has one."""
        out = {}
        for k, v in {**(bindings or {}), **named}.items():
            if isinstance(k, str):
                p = self.param(k)
                self._check_value(p, v)
                key = (p.set, p.binding)
            else:
                key = (0, k) if isinstance(k, int) else k
            if key in out:
                raise BindingError(f"binding (set {key[0]}, binding {key[1]}) is given twice")
            out[key] = v
        return out

    def _check_value(self, p: BindingParam, v):
        arr = v.array if isinstance(v, Buffer) else v
        if not isinstance(arr, np.ndarray):
            raise BindingError(f"binding {p.name!r} takes a numpy array or a Buffer, not "
                               f"{type(v).__name__}; it is {p.describe()}")
        if p.dtype is not None and arr.dtype != p.dtype:
            key = p.binding if p.set == 0 else (p.set, p.binding)
            raise BindingError(f"binding {p.name!r} holds {p.dtype} elements ({p.text}); got an "
                               f"array of {arr.dtype} (bind it by number, {{{key}: arr}}, to pass "
                               "its bytes as they are)")

    # -- push constants ---------------------------------------------------------------------------
    def pack_push(self, values: dict) -> np.ndarray:
        """The push constant bytes from {member name: value}; every member must be given.
        Scalars take Python or numpy numbers (integers in range for an integer member), vectors
        a sequence of their length, matrices an array of shape (rows, columns), arrays a
        sequence of their elements, structs a dict; a pointer member takes an int or a Buffer."""
        if not self.push:
            raise BindingError(f"kernel {self.entry!r} has no push constants; drop push=")
        members = {p.name: p for p in self.push}
        unknown = [n for n in values if n not in members]
        missing = [n for n in members if n not in values]
        if unknown or missing:
            what = []
            if unknown:
                what.append(f"unknown member(s) {', '.join(map(repr, unknown))}")
            if missing:
                what.append(f"missing member(s) {', '.join(map(repr, missing))}")
            raise BindingError(f"push constants: {' and '.join(what)}; the block is "
                               + ", ".join(f"{p.name}: {p.text} at +{p.offset}" for p in self.push))
        out = np.zeros(self.push_size, np.uint8)
        for name, p in members.items():
            flat = _flatten(p.type, values[name], name, self._member_names)
            for (s, off), x in zip(leaves(p.type, p.offset, p.member), flat):
                raw = _scalar_bytes(s, x, name)
                out[off:off + len(raw)] = np.frombuffer(raw, np.uint8)
        return out

    # -- reading buffers back ---------------------------------------------------------------------
    def view(self, name: str, data):
        """The bytes of `data` (a numpy array, a Buffer, or bytes) seen as binding `name`'s
        block: a block of one member gives that member's view (a runtime array as long as the
        bytes allow), a block of several a dict of views by member name. Views share memory with
        `data` where it is a C-contiguous array or a Buffer."""
        t = self.param(name).block
        raw = _bytes_of(data, name)
        names = self._member_names
        if not isinstance(t, Struct):
            return _view(raw, t, 0, None, names)
        views = {_mname(names, t, i): _view(raw, mem.type, off, mem, names)
                 for i, (mem, off) in enumerate(zip(t.members, member_offsets(t)))}
        return next(iter(views.values())) if len(views) == 1 else views


def _mname(names: dict, t, i: int) -> str:
    return names.get((t.id, i)) or f"member{i}"


# -- values to bytes ------------------------------------------------------------------------------
def _shape_text(t) -> str:
    if isinstance(t, Scalar):
        return "a scalar"
    if isinstance(t, Vector):
        return f"{t.n} values"
    if isinstance(t, Matrix):
        return f"an array of shape ({t.col.n}, {t.ncols})"
    if isinstance(t, Array):
        return f"{t.length} elements"
    return describe(t)


def _flatten(t, value, name, names: dict) -> list:
    """The scalars of `value` in the type's leaf order (spirv.types.leaves); a struct's value is
    a dict by member name (`names`: the module's member names)."""
    if isinstance(t, (Scalar, Pointer)):
        if isinstance(value, Buffer):
            return [value.address]
        a = np.asarray(value)
        if a.ndim:
            raise BindingError(f"push constant {name!r} is a {describe(t)}; got an array of shape {a.shape}")
        return [value]
    if isinstance(t, Struct):
        fields = [_mname(names, t, i) for i in range(len(t.members))]
        if not isinstance(value, dict) or set(value) != set(fields):
            raise BindingError(f"push constant {name!r} is a struct; give a dict of its members "
                               f"{', '.join(fields)}")
        return [x for f, mem in zip(fields, t.members)
                for x in _flatten(mem.type, value[f], f"{name}.{f}", names)]
    if isinstance(t, Array) and isinstance(t.elem, Struct):
        if not isinstance(value, (list, tuple)) or len(value) != t.length:
            raise BindingError(f"push constant {name!r} is {describe(t)}; give {t.length} dicts")
        return [x for i, v in enumerate(value) for x in _flatten(t.elem, v, f"{name}[{i}]", names)]
    a = np.asarray(value)
    want = _shape(t)
    if a.shape != want:
        raise BindingError(f"push constant {name!r} is a {describe(t)} and takes {_shape_text(t)}; "
                           f"got shape {a.shape}")
    return list(_leaf_order(t, a).reshape(-1))


def _shape(t) -> tuple:
    if isinstance(t, Vector):
        return (t.n,)
    if isinstance(t, Matrix):
        return (t.col.n, t.ncols)
    if isinstance(t, Array):
        return (t.length,) + _shape(t.elem)
    return ()


def _leaf_order(t, a: np.ndarray) -> np.ndarray:
    """`a` (shaped as _shape(t)) reordered so that a C-order flatten gives the leaf order: a
    matrix's leaves go column by column."""
    if isinstance(t, Matrix):
        return np.swapaxes(a, -1, -2)
    if isinstance(t, Array) and isinstance(t.elem, Matrix):
        return np.swapaxes(a, -1, -2)
    return a


def _scalar_bytes(s, x, name) -> bytes:
    if isinstance(s, Scalar) and s.kind == "float":
        try:
            v = float(x)
        except (TypeError, ValueError):
            raise BindingError(f"push constant {name!r} is {s}; got {x!r}") from None
        return np.array(v, np.float64).astype(scalar_dtype(s)).tobytes()
    dt = scalar_dtype(s) if isinstance(s, Scalar) else np.dtype(np.uint64)
    if isinstance(x, (float, np.floating)) and not float(x).is_integer():
        raise BindingError(f"push constant {name!r} is {describe(s)}, an integer type; got {x!r}")
    try:
        v = int(x)
    except (TypeError, ValueError):
        raise BindingError(f"push constant {name!r} is {describe(s)}; got {x!r}") from None
    if isinstance(s, Scalar) and s.kind == "bool":
        v = int(bool(v))
    info = np.iinfo(dt)
    if not info.min <= v <= info.max:
        raise BindingError(f"push constant {name!r} is {describe(s)}: {v} is outside "
                           f"[{info.min}, {info.max}]")
    return np.array(v, dt).tobytes()


# -- bytes to views -------------------------------------------------------------------------------
def _bytes_of(data, name) -> np.ndarray:
    if isinstance(data, Buffer):
        return data.bytes
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(data, np.uint8)
    if isinstance(data, np.ndarray):
        if not data.flags.c_contiguous:
            data = np.ascontiguousarray(data)
        return data.reshape(-1).view(np.uint8)
    raise BindingError(f"view({name!r}, ...) takes a numpy array, a Buffer or bytes, not {type(data).__name__}")


def _strided(t, member=None):
    """(scalar dtype, shape, strides) of a type built of scalars, vectors, matrices and arrays
    of them; None for anything holding a struct."""
    if isinstance(t, Scalar):
        return scalar_dtype(t), (), ()
    if isinstance(t, Vector):
        return scalar_dtype(t.elem), (t.n,), (t.elem.size,)
    if isinstance(t, Matrix):
        s = t.col.elem.size
        ms = member.matrix_stride if member is not None and member.matrix_stride else t.col.n * s
        if member is not None and member.row_major:
            return scalar_dtype(t.col.elem), (t.col.n, t.ncols), (ms, s)
        return scalar_dtype(t.col.elem), (t.col.n, t.ncols), (s, ms)
    if isinstance(t, Array) and t.length is not None:
        inner = _strided(t.elem)
        if inner is None:
            return None
        return inner[0], (t.length,) + inner[1], (array_stride(t),) + inner[2]
    return None


def _struct_dtype(t, names: dict) -> np.dtype:
    """A numpy structured dtype for a struct (names, offsets, size); members that are not a
    scalar, a vector or a tight array of those stay raw bytes."""
    fields, formats, offsets = [], [], []
    for i, (mem, off) in enumerate(zip(t.members, member_offsets(t))):
        fields.append(_mname(names, t, i))
        st = _strided(mem.type, mem)
        if isinstance(mem.type, Struct):
            formats.append(_struct_dtype(mem.type, names))
        elif st is not None and _tight(st):
            formats.append((st[0], st[1]) if st[1] else st[0])
        else:
            formats.append(np.dtype((np.void, size_of(mem.type, mem))))
        offsets.append(off)
    return np.dtype({"names": fields, "formats": formats, "offsets": offsets, "itemsize": size_of(t)})


def _tight(st) -> bool:
    dt, shape, strides = st
    want = dt.itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if s != want:
            return False
        want *= n
    return True


def _view(raw: np.ndarray, t, off: int, member, names: dict):
    if isinstance(t, Array) and t.length is None:          # a runtime array: as long as the bytes allow
        stride = array_stride(t)
        count = max(0, (raw.nbytes - off) // stride) if stride else 0
        inner = _strided(t.elem)
        if inner is None:                                  # structs: records of the array's stride
            dt = _struct_dtype(t.elem, names) if isinstance(t.elem, Struct) else np.dtype((np.void, stride))
            if dt.names:
                dt = np.dtype({"names": dt.names, "formats": [dt.fields[n][0] for n in dt.names],
                               "offsets": [dt.fields[n][1] for n in dt.names], "itemsize": stride})
            return np.ndarray((count,), dt, raw, off, (stride,))
        return np.ndarray((count,) + inner[1], inner[0], raw, off, (stride,) + inner[2])
    st = _strided(t, member)
    if st is None:
        dt = _struct_dtype(t, names) if isinstance(t, Struct) else np.dtype((np.void, size_of(t, member)))
        return np.ndarray((), dt, raw, off)
    return np.ndarray(st[1], st[0], raw, off, st[2])
