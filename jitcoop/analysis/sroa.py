"""Arrays of cooperative matrices split into one variable per matrix (scalar replacement).

`coopmat<...> acc[2][2]` is one Function variable; once the loops that index it are unrolled
(jitcoop.analysis.unroll) every access names one matrix by constant indices. Each matrix then
becomes a variable of its own (so does each matrix of a struct, `struct Tile { ACC c[2][2]; }`,
whose every access names one, and each scalar or vector member beside them, `struct Tile { uint
row0; ACC c[2][2]; }`), which jitcoop.analysis.ssa turns into SSA values. A variable is split
only when its type holds a matrix and every use is such an access chain reaching a whole matrix,
scalar or vector, with its indices in range (an access out of range keeps the variable, and the
run-time bounds check that reports it).

Whole-array copies come first (split_copies): a function taking `inout ACC acc[2][2]` is called
by glslang as `param = acc; f(param); acc = param`, an OpLoad of the whole array stored whole
into another variable (and an array built by OpCompositeConstruct is stored whole). Each such
store becomes one copy per matrix through constant access chains, so that both arrays split and
the copies become SSA renames: left whole, the array value is a composite holding matrices,
which every lane must hold (analysis/invariance.py) and copy.
"""
from __future__ import annotations

from ..spirv.types import Array, CoopMat, Scalar, Struct, Vector, holds_matrix
from .flatten import FlatFunction, _synth
from .ssa import rename

_CHAINS = ("OpAccessChain", "OpInBoundsAccessChain")
FUNCTION = 7                    # StorageClass Function


# Integer arithmetic an index may be made of (`mb[j / 2]` with j an unrolled counter), on Python
# ints: the index is only compared with the array's length, so widths and wrapping do not matter
# for any index that is in range.
_FOLD = {"OpIAdd": lambda a, b: a + b, "OpISub": lambda a, b: a - b, "OpIMul": lambda a, b: a * b,
         "OpUDiv": lambda a, b: a // b if b > 0 and a >= 0 else None,
         "OpUMod": lambda a, b: a % b if b > 0 and a >= 0 else None,
         "OpShiftLeftLogical": lambda a, b: a << b if 0 <= b < 64 else None,
         "OpShiftRightLogical": lambda a, b: a >> b if a >= 0 and 0 <= b < 64 else None,
         "OpBitwiseAnd": lambda a, b: a & b, "OpBitwiseOr": lambda a, b: a | b}


def _int(spec, defs, vid, depth=0):
    """An integer index's value when it is a constant or constant arithmetic, else None."""
    if spec.is_const(vid):
        return spec.known_int(vid)
    ins = defs.get(vid)
    if ins is None or ins.opname not in _FOLD or depth > 8:
        return None
    a, b = (_int(spec, defs, x, depth + 1) for x in ins.operands[:2])
    return None if a is None or b is None else _FOLD[ins.opname](a, b)


def _indices(spec, defs, t, chain):
    """(the constant indices of an access chain into array or struct type t reaching a whole
    matrix, scalar or vector, the chain's indices past a vector: a component) or None. Those
    leaves are what a split makes variables of: no path is the prefix of another."""
    out = []
    ops = chain.operands[1:]
    for n, x in enumerate(ops):
        if isinstance(t, Vector) and not isinstance(t, CoopMat):
            return tuple(out), list(ops[n:])
        i = _int(spec, defs, x)
        if i is None:
            return None
        if isinstance(t, Array) and t.length is not None and 0 <= i < t.length:
            t = t.elem
        elif isinstance(t, Struct) and 0 <= i < len(t.members):
            t = t.members[i].type
        else:
            return None
        out.append(i)
    return (tuple(out), []) if isinstance(t, (CoopMat, Scalar, Vector)) else None


def _leaf_type(spec, ptr, path):
    """(storage class, the type id at `path`) of pointer type operands ptr (storage class,
    pointee: an array or struct type id): the key of the pointer type a chain to it has."""
    sc, tid = ptr[:2]
    for i in path:
        ins = spec.m.defs[tid]
        tid = ins.operands[0] if ins.opname == "OpTypeArray" else ins.operands[i]
    return sc, tid


def _matrix_array(t) -> bool:
    """A fixed-length array (of arrays) of cooperative matrices."""
    while isinstance(t, Array) and t.length is not None:
        t = t.elem
        if isinstance(t, CoopMat):
            return True
    return False


MOST_LEAVES = 256


def _count_leaves(t) -> int:
    n = 1
    while isinstance(t, Array) and t.length is not None:
        n *= t.length
        t = t.elem
    return n


def _pointer_types(spec) -> dict:
    """(storage class, pointee type id) -> the module's pointer type id."""
    return {(i.operands[0], i.operands[1]): i.result for i in spec.m.defs.values() if i.opname == "OpTypePointer"}


class _Leaves:
    """The leaves of an array type (their index paths and type ids), the pointer types and index
    constants the per-matrix copies need, found in the module or made once."""

    def __init__(self, spec, ids):
        self.spec, self.ids = spec, ids
        self.int_type = next((i.result for i in spec.m.defs.values() if i.opname == "OpTypeInt"
                              and i.operands[0] == 32), None)
        # a copy's chains point where their variable does (a Private one moved among the
        # locals, analysis/private.py, keeps its class)
        self.pointers = _pointer_types(spec)
        self.consts: dict[int, int] = {}

    def paths(self, ptr_type):
        """[(index path, leaf type id)] of the array a variable of pointer type ptr_type holds, or
        None when a leaf has no pointer type of that storage class in the module (no access
        chain could name it) or there are more than MOST_LEAVES (a register tile has a few dozen
        matrices; a copy of more stays whole)."""
        sc, tid = self.spec.m.defs[ptr_type].operands[:2]
        if _count_leaves(self.spec.type(tid)) > MOST_LEAVES:
            return None
        return self._paths(sc, tid, ())

    def _paths(self, sc, tid, prefix):
        ins = self.spec.m.defs.get(tid)
        if ins is None or ins.opname != "OpTypeArray":
            return [(prefix, tid)] if (sc, tid) in self.pointers else None
        out = []
        for i in range(self.spec.type(tid).length):
            sub = self._paths(sc, ins.operands[0], prefix + (i,))
            if sub is None:
                return None
            out += sub
        return out

    def const(self, value):
        if value not in self.consts:
            self.consts[value] = self.ids.fresh()
            self.spec.add_constant(self.consts[value], self.int_type, value)
        return self.consts[value]

    def chain(self, var, path, leaf, offset):
        """An access chain to the matrix at `path` of variable `var` (an OpVariable)."""
        sc = self.spec.m.defs[var.result_type].operands[0]
        return _synth("OpAccessChain", [var.result] + [self.const(i) for i in path],
                      ["IdRef"] * (len(path) + 1), offset, self.ids.fresh(), self.pointers[sc, leaf])


def split_copies(ff: FlatFunction, spec, ids) -> int:
    """Whole arrays of matrices taken apart: a store of one into a Function variable becomes a
    store per matrix, of the matrices the value was made of: loaded whole from another Function
    variable (a load per matrix where the whole load was), built by OpCompositeConstruct or a
    constant, or extracted from such a value; an OpCompositeExtract of a matrix from such a value
    becomes that matrix. A whole load is taken apart only when every use is one of these (else
    it stays whole, with its stores). Returns how many stores were."""
    local = {v.result: v for v in ff.variables}
    defs = {i.result: i for b in ff.blocks for i in b.instrs if i.result is not None}
    users = ff.users()
    leaves = _Leaves(spec, ids)
    if leaves.int_type is None:
        return 0
    loads: dict[int, tuple] = {}        # a whole load's id -> ({path: value}, the instructions replacing it)

    def type_of(val):
        return (defs.get(val) or spec.def_of(val)).result_type

    def taken_apart(val) -> bool:
        """Whether every use of array value val is a store into a Function variable whose
        matrices access chains can name, or an extract of a matrix or of a sub-array taken apart
        in turn (the whole value is then gone)."""
        for u in users.get(val, ()):
            if _stored_whole(u, val, local):
                if leaves.paths(local[u.operands[0]].result_type) is None:
                    return False
                continue
            if u.opname != "OpCompositeExtract" or u.operands[0] != val:
                return False
            t = spec.type(u.result_type)
            if not (isinstance(t, CoopMat) or (_matrix_array(t) and taken_apart(u.result))):
                return False
        return True

    def values_of(val, tid):
        """{path: matrix value} of array value val (of array type tid), else None."""
        d = defs.get(val) or spec.def_of(val)
        if d is None:
            return None
        if d.opname == "OpLoad" and d.operands[0] in local and len(d.operands) == 1:
            if val not in loads:
                src = local[d.operands[0]]
                paths = leaves.paths(src.result_type)
                if paths is None or not taken_apart(val):
                    return None
                values, moves = {}, []
                for path, t in paths:
                    c = leaves.chain(src, path, t, d.offset)
                    values[path] = ids.fresh()
                    moves += [c, _synth("OpLoad", [c.result], ["IdRef"], d.offset, values[path], t)]
                loads[val] = (values, moves)
            return loads[val][0]
        if d.opname == "OpCompositeExtract":
            whole = values_of(d.operands[0], type_of(d.operands[0]))
            if whole is None:
                return None
            at = tuple(d.operands[1:])
            return {path[len(at):]: v for path, v in whole.items() if path[:len(at)] == at}
        if d.opname in ("OpCompositeConstruct", "OpConstantComposite"):
            elem = spec.m.defs[tid].operands[0]
            out = {}
            for i, x in enumerate(d.operands):
                if isinstance(spec.type(elem), CoopMat):
                    out[(i,)] = x
                    continue
                got = values_of(x, elem)
                if got is None:
                    return None
                out.update({(i,) + path: v for path, v in got.items()})
            return out
        return None

    stores: dict[int, list] = {}        # id(store) -> the per-matrix instructions replacing it
    subst: dict[int, int] = {}          # an extracted matrix -> the matrix it is
    for b in ff.blocks:
        for ins in b.instrs:
            if (ins.opname == "OpCompositeExtract" and isinstance(spec.type(ins.result_type), CoopMat)
                    and _matrix_array(spec.type(type_of(ins.operands[0])))):
                whole = values_of(ins.operands[0], type_of(ins.operands[0]))
                if whole is not None and tuple(ins.operands[1:]) in whole:
                    subst[ins.result] = whole[tuple(ins.operands[1:])]
                continue
            if ins.opname != "OpStore" or ins.operands[0] not in local or len(ins.operands) > 2:
                continue
            ptr_type = local[ins.operands[0]].result_type
            if not _matrix_array(spec.type(ptr_type).pointee):
                continue
            paths = leaves.paths(ptr_type)
            values = values_of(ins.operands[1], spec.m.defs[ptr_type].operands[1]) if paths is not None else None
            if values is None or set(values) != {path for path, _ in paths}:
                continue
            moves = []
            for path, t in paths:
                c = leaves.chain(local[ins.operands[0]], path, t, ins.offset)
                moves += [c, _synth("OpStore", [c.result, values[path]], ["IdRef", "IdRef"], ins.offset)]
            stores[id(ins)] = moves
    if not stores and not subst:
        return 0
    for b in ff.blocks:
        body = []
        for ins in b.instrs:
            if ins.result in loads:
                body += loads[ins.result][1]
            elif id(ins) in stores:
                body += stores[id(ins)]
            elif ins.result not in subst:
                body.append(ins)
        b.instrs = body
    rename(ff, subst)
    # what was built or extracted only to be taken apart is no longer used
    while True:
        users = ff.users()
        dead = {i.result for b in ff.blocks for i in b.instrs
                if i.opname in ("OpCompositeConstruct", "OpCompositeExtract") and not users.get(i.result)
                and _matrix_array(spec.type(i.result_type))}
        if not dead:
            return len(stores)
        for b in ff.blocks:
            b.instrs = [i for i in b.instrs if i.result not in dead]


def _stored_whole(ins, val, local) -> bool:
    """Whether instruction ins stores val (and nothing else reads it) into a Function variable."""
    return (ins.opname == "OpStore" and ins.operands[0] in local and ins.operands[1] == val
            and len(ins.operands) == 2)


def split_matrix_arrays(ff: FlatFunction, spec, ids) -> int:
    """Split every eligible array (after split_copies); returns how many were."""
    split_copies(ff, spec, ids)
    users = ff.users()
    defs = {i.result: i for b in ff.blocks for i in b.instrs if i.result is not None}
    pointers = _pointer_types(spec)
    split = 0
    for v in list(ff.variables):
        t = spec.type(v.result_type).pointee
        if not isinstance(t, (Array, Struct)) or len(v.operands) > 1 or not holds_matrix(t):
            continue
        uses = users.get(v.result, ())
        found = [_indices(spec, defs, t, u) if u.opname in _CHAINS and u.operands[0] == v.result else None
                 for u in uses]
        if not uses or any(f is None for f in found):
            continue
        # each leaf's pointer type: a chain's own, or for a vector whose every chain reaches a
        # component, the module's pointer to that vector (none: the variable stays whole)
        ptr_of = {path: u.result_type for u, (path, rest) in zip(uses, found) if not rest}
        for path, rest in found:
            if path not in ptr_of:
                ptr_of[path] = pointers.get(_leaf_type(spec, spec.m.defs[v.result_type].operands, path))
        if None in ptr_of.values():
            continue
        parts = {path: _synth("OpVariable", [FUNCTION], ["StorageClass"], v.offset, ids.fresh(), ptr)
                 for path, ptr in ptr_of.items()}
        subst, gone = {}, set()
        for u, (path, rest) in zip(uses, found):
            if rest:
                # a component of a vector member: the same chain from the vector's variable
                u.operands, u.kinds, u.words = [parts[path].result] + rest, ["IdRef"] * (1 + len(rest)), ()
            else:
                subst[u.result] = parts[path].result
                gone.add(u.result)
        for b in ff.blocks:
            b.instrs = [i for i in b.instrs if i.result not in gone]
        at = ff.variables.index(v)
        ff.variables[at:at + 1] = list(parts.values())
        for part in parts.values():         # (one reached through chains stays a variable)
            ff.defs[part.result] = part
        rename(ff, subst)
        split += 1
    return split
