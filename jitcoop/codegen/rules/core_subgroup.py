"""Barriers and subgroup operations.

These are collective: a lane stops before one and the workgroup scheduler runs it for the lanes
that wait there (the active lanes of each subgroup). A barrier is a scan of the lane states; a
subgroup operation is one call of an IR function specialized to it (jitcoop.codegen.subgroup_ops)
per result component on the operand and result slot rows. Ballot bit queries on a ballot value
are ordinary per-lane rules.
"""
from __future__ import annotations

from ...errors import SpirvError
from ...kernels import codes as G
from .. import subgroup_ops as sg
from ..llvm import lit
from . import collective, rule
from .common import intrinsic, scalars

SCOPE_WORKGROUP = 2


def _scope(em, ins, pos=0):
    return int(em.spec.scalar_const(ins.operands[pos]))


def _group_op(em, ins):
    from ...spirv.grammar import grammar
    name = grammar().enum_name("GroupOperation", ins.operands[1])
    code = {"Reduce": G.REDUCE, "InclusiveScan": G.INCLUSIVE, "ExclusiveScan": G.EXCLUSIVE,
            "ClusteredReduce": G.CLUSTERED}.get(name)
    if code is None:
        raise SpirvError(f"group operation {name} is not supported", **ins.where())
    cluster = int(em.spec.scalar_const(ins.operands[3])) if code == G.CLUSTERED else 0
    if code == G.CLUSTERED and (cluster < 1 or cluster & (cluster - 1)):
        # clusters then straddle subgroups; SPIR-V's validation rules require a power of 2
        raise SpirvError(f"ClusterSize {cluster} is not a power of 2", **ins.where())
    return code, cluster


@collective("OpControlBarrier")
def _barrier(em, ins, wait, resume):
    if _scope(em, ins) == SCOPE_WORKGROUP:
        bl = em.op(f"call i64 {em.helper('barrier')}(ptr {em.state}, i64 {em.W}, i32 {wait}, i32 {resume})")
        em.fail_if(em.op(f"icmp sge i64 {bl}, 0"), ins,
                   "barrier reached by only part of the workgroup: lane {d} is waiting elsewhere "
                   "(barriers must be in uniform control flow)", lane="-1", details=(bl,), kind="group")
    else:
        em.resume_lanes(wait, resume)


_ARITH = {"IAdd": G.IADD, "IMul": G.IMUL, "SMin": G.SMIN, "UMin": G.UMIN, "FMin": G.FMIN,
          "SMax": G.SMAX, "UMax": G.UMAX, "FMax": G.FMAX, "BitwiseAnd": G.AND, "BitwiseOr": G.OR,
          "BitwiseXor": G.XOR, "FAdd": G.FADD, "FMul": G.FMUL}
_LOGICAL = {"LogicalAnd": G.LAND, "LogicalOr": G.LOR, "LogicalXor": G.LXOR}


def _identity(name, s) -> str:
    if name in ("IAdd", "BitwiseOr", "BitwiseXor", "UMax"):
        return lit(0, s)
    if name in ("IMul", "FMul"):
        return lit(1, s)
    if name == "FAdd":
        return lit(0.0, s)
    if name == "FMin":
        return lit(float("inf"), s)
    if name == "FMax":
        return lit(float("-inf"), s)
    if name == "SMin":
        return lit((1 << (s.width - 1)) - 1, s)
    if name == "SMax":
        return lit(-(1 << (s.width - 1)), s)
    if name in ("UMin", "BitwiseAnd"):
        return lit(-1, s)
    raise KeyError(name)


def _rounding(s):
    if s.kind == "float" and s.width == 16:
        return G.ROUND_BF16 if s.encoding == "bf16" else G.ROUND_F16
    return G.ROUND_NONE


def _call(em, fn, wait, *rows, extra=()):
    """Call a subgroup function on the lane states, the wait code and rows (Arr), with `extra`
    ((type, operand) pairs) after the first row."""
    args = [f"ptr {em.state}", f"i32 {wait}", f"ptr {rows[0].ptr}"] + [f"{t} {v}" for t, v in extra]
    em.emit(f"call void {fn}({', '.join(args + [f'ptr {r.ptr}' for r in rows[1:]])})")


def _arith(name):
    def lower(em, ins, wait, resume):
        gop, cluster = _group_op(em, ins)
        xs = em.coll_arrays(ins.operands[2])
        rs = em.coll_result(ins)
        for x, r, s in zip(xs, rs, scalars(em.rtype(ins))):
            if name in _LOGICAL:
                fn = sg.logical(em, _LOGICAL[name], gop, cluster)
            else:
                fn = sg.arith(em, _ARITH[name], gop, cluster, _rounding(s), x.dtype, _identity(name, s))
            _call(em, fn, wait, x, r)
        em.resume_lanes(wait, resume)
    return lower


for _name in list(_ARITH) + list(_LOGICAL):
    collective(f"OpGroupNonUniform{_name}")(_arith(_name))


def _gather(mode, has_index=True):
    def lower(em, ins, wait, resume):
        xs = em.coll_arrays(ins.operands[1])
        rs = em.coll_result(ins)
        idx, idx_const = em.state_arr(), "0"
        per_lane = False
        if has_index:
            v = ins.operands[2]
            if em.spec.is_const(v) or v in em.hoisted:
                idx_const = em.to_i64(v)
            else:
                idx, per_lane = em.coll_arrays(v)[0], True
        for x, r in zip(xs, rs):
            fn = sg.gather(em, mode, x.dtype, idx.dtype if per_lane else None)
            _call(em, fn, wait, idx, x, r, extra=[("i64", idx_const)])
        em.resume_lanes(wait, resume)
    return lower


collective("OpGroupNonUniformBroadcast")(_gather(G.BROADCAST))
collective("OpGroupNonUniformShuffle")(_gather(G.SHUFFLE))
collective("OpGroupNonUniformShuffleXor")(_gather(G.SHUFFLE_XOR))
collective("OpGroupNonUniformShuffleUp")(_gather(G.SHUFFLE_UP))
collective("OpGroupNonUniformShuffleDown")(_gather(G.SHUFFLE_DOWN))
collective("OpGroupNonUniformQuadBroadcast")(_gather(G.QUAD_BROADCAST))
collective("OpGroupNonUniformQuadSwap")(_gather(G.QUAD_SWAP))
collective("OpGroupNonUniformBroadcastFirst")(_gather(G.FIRST, has_index=False))


@collective("OpGroupNonUniformElect")
def _elect(em, ins, wait, resume):
    _call(em, sg.elect(em), wait, em.coll_result(ins)[0])
    em.resume_lanes(wait, resume)


def _vote(kind):
    def lower(em, ins, wait, resume):
        xs = em.coll_arrays(ins.operands[1])
        r = em.coll_result(ins)[0]
        for i, x in enumerate(xs):
            _call(em, sg.vote(em, kind, x.dtype, combine_and=i > 0), wait, x, r)
        em.resume_lanes(wait, resume)
    return lower


collective("OpGroupNonUniformAll")(_vote(G.VOTE_ALL))
collective("OpGroupNonUniformAny")(_vote(G.VOTE_ANY))
collective("OpGroupNonUniformAllEqual")(_vote(G.VOTE_EQUAL))


@collective("OpGroupNonUniformBallot")
def _ballot(em, ins, wait, resume):
    x = em.coll_arrays(ins.operands[1])[0]
    _call(em, sg.ballot(em), wait, x, *em.coll_result(ins))
    em.resume_lanes(wait, resume)


# -- ballot queries: per lane, on a ballot value ---------------------------------------------------
def _ballot_bit(em, v, idx: str) -> str:
    """Bit idx (an i64 below 128) of the four words of a ballot."""
    w = em.op(f"lshr i64 {idx}, 5")
    word = v[3]
    for k in (2, 1, 0):
        word = em.op(f"select i1 {em.op(f'icmp eq i64 {w}, {k}')}, i32 {v[k]}, i32 {word}")
    sh = em.op(f"trunc i64 {em.op(f'and i64 {idx}, 31')} to i32")
    bit = em.op(f"and i32 {em.op(f'lshr i32 {word}, {sh}')}, 1")
    return em.op(f"icmp ne i32 {bit}, 0")


@rule("OpGroupNonUniformInverseBallot")
def _inverse_ballot(em, ins):
    v = em.vals(ins.operands[1])
    em.define(ins, [_ballot_bit(em, v, em.op(f"urem i64 {em.lane_reg}, {em.sg}"))])


@rule("OpGroupNonUniformBallotBitExtract")
def _bit_extract(em, ins):
    v = em.vals(ins.operands[1])
    idx = em.to_i64(ins.operands[2])
    em.define(ins, [_ballot_bit(em, v, em.op(f"and i64 {idx}, 127"))])


@rule("OpGroupNonUniformBallotBitCount")
def _bit_count(em, ins):
    from ...spirv.grammar import grammar
    group_op = grammar().enum_name("GroupOperation", ins.operands[1])
    v = em.vals(ins.operands[2])
    i = em.op(f"urem i64 {em.lane_reg}, {em.sg}")
    n = {"Reduce": str(em.sg), "InclusiveScan": None, "ExclusiveScan": i}.get(group_op, "?")
    if n == "?":
        raise SpirvError(f"group operation {group_op} is not supported here", **ins.where())
    if n is None:
        n = em.op(f"add i64 {i}, 1")
    pop = intrinsic(em, "llvm.ctpop.i32", "i32", ["i32"])
    total = "0"
    for w in range(4):
        k = em.op(f"sub i64 {n}, {32 * w}")
        lo = em.op(f"icmp slt i64 {k}, 0")
        k = em.op(f"select i1 {lo}, i64 0, i64 {k}")
        hi = em.op(f"icmp sgt i64 {k}, 32")
        k = em.op(f"select i1 {hi}, i64 32, i64 {k}")
        m = em.op(f"sub i64 {em.op(f'shl i64 1, {k}')}, 1")
        masked = em.op(f"and i32 {v[w]}, {em.op(f'trunc i64 {m} to i32')}")
        total = em.op(f"add i32 {total}, {em.op(f'call i32 {pop}(i32 {masked})')}")
    em.define(ins, [total])


def _ballot64(em, lo: str, hi: str) -> str:
    a = em.op(f"zext i32 {lo} to i64")
    b = em.op(f"shl i64 {em.op(f'zext i32 {hi} to i64')}, 32")
    return em.op(f"or i64 {a}, {b}")


@rule("OpGroupNonUniformBallotFindLSB")
def _find_lsb(em, ins):
    v = em.vals(ins.operands[1])
    cttz = intrinsic(em, "llvm.cttz.i64", "i64", ["i64", "i1"])
    lo, hi = _ballot64(em, v[0], v[1]), _ballot64(em, v[2], v[3])
    a = em.op(f"call i64 {cttz}(i64 {lo}, i1 false)")
    b = em.op(f"add i64 {em.op(f'call i64 {cttz}(i64 {hi}, i1 false)')}, 64")
    r = em.op(f"select i1 {em.op(f'icmp ne i64 {lo}, 0')}, i64 {a}, i64 {b}")
    em.define(ins, [em.op(f"trunc i64 {r} to i32")])


@rule("OpGroupNonUniformBallotFindMSB")
def _find_msb(em, ins):
    v = em.vals(ins.operands[1])
    ctlz = intrinsic(em, "llvm.ctlz.i64", "i64", ["i64", "i1"])
    lo, hi = _ballot64(em, v[0], v[1]), _ballot64(em, v[2], v[3])
    a = em.op(f"sub i64 63, {em.op(f'call i64 {ctlz}(i64 {lo}, i1 false)')}")
    b = em.op(f"sub i64 127, {em.op(f'call i64 {ctlz}(i64 {hi}, i1 false)')}")
    r = em.op(f"select i1 {em.op(f'icmp ne i64 {hi}, 0')}, i64 {b}, i64 {a}")
    em.define(ins, [em.op(f"trunc i64 {r} to i32")])


