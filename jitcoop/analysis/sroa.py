"""Arrays of cooperative matrices split into one variable per matrix (scalar replacement).

`coopmat<...> acc[2][2]` is one Function variable; once the loops that index it are unrolled
(jitcoop.analysis.unroll) every access names one matrix by constant indices. Each matrix then
becomes a variable of its own, which jitcoop.analysis.ssa turns into SSA values. An array is
split only when every use is such an access chain reaching a whole matrix, with its indices in
range (an access out of range keeps the array, and the run-time bounds check that reports it).
"""
from __future__ import annotations

from ..spirv.types import Array, CoopMat
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
    """The constant indices of an access chain into array type t, reaching a whole matrix."""
    out = []
    for x in chain.operands[1:]:
        i = _int(spec, defs, x)
        if not isinstance(t, Array) or t.length is None or i is None or not 0 <= i < t.length:
            return None
        out.append(i)
        t = t.elem
    return tuple(out) if isinstance(t, CoopMat) else None


def split_matrix_arrays(ff: FlatFunction, spec, ids) -> int:
    """Split every eligible array; returns how many were."""
    users = ff.users()
    defs = {i.result: i for b in ff.blocks for i in b.instrs if i.result is not None}
    split = 0
    for v in list(ff.variables):
        t = spec.type(v.result_type).pointee
        if not isinstance(t, Array) or len(v.operands) > 1:
            continue
        uses = users.get(v.result, ())
        paths = [_indices(spec, defs, t, u) if u.opname in _CHAINS and u.operands[0] == v.result else None
                 for u in uses]
        if not uses or any(p is None for p in paths):
            continue
        parts: dict[tuple, object] = {}
        subst = {}
        for u, path in zip(uses, paths):
            if path not in parts:
                parts[path] = _synth("OpVariable", [FUNCTION], ["StorageClass"], v.offset, ids.fresh(),
                                     u.result_type)
            subst[u.result] = parts[path].result
        gone = {u.result for u in uses}
        for b in ff.blocks:
            b.instrs = [i for i in b.instrs if i.result not in gone]
        at = ff.variables.index(v)
        ff.variables[at:at + 1] = list(parts.values())
        rename(ff, subst)
        split += 1
    return split
