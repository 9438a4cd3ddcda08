"""Barriers and subgroup operations.

These are collective: a lane stops before one and the workgroup scheduler runs it for the lanes
that wait there (the active lanes of each subgroup). Each rule emits one call of a precompiled
helper from jitcoop.kernels.subgroup per result component, on the operand and result spill
slots. Ballot bit queries that only read a uniform ballot are ordinary per-lane rules.
"""
from __future__ import annotations

from ...errors import SpirvError
from ...kernels import subgroup as G
from ..emitter import nb_type
from . import collective, rule
from .common import scalars

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
    return code, cluster


@collective("OpControlBarrier")
def _barrier(em, ins, wait, resume):
    if _scope(em, ins) == SCOPE_WORKGROUP:
        em.line(f"bl = sg_barrier(state, {wait}, {resume})")
        em.line("if bl >= 0:")
        em.line("    " + em.fail_group(ins, "barrier reached by only part of the workgroup: lane {d} "
                                          "is waiting elsewhere (barriers must be in uniform control "
                                          "flow)", "bl"))
    else:
        em.line(f"sg_resume(state, {wait}, {resume})")


_ARITH = {"IAdd": G.IADD, "IMul": G.IMUL, "SMin": G.SMIN, "UMin": G.UMIN, "FMin": G.FMIN,
          "SMax": G.SMAX, "UMax": G.UMAX, "FMax": G.FMAX, "BitwiseAnd": G.AND, "BitwiseOr": G.OR,
          "BitwiseXor": G.XOR, "FAdd": G.FADD, "FMul": G.FMUL}
_LOGICAL = {"LogicalAnd": G.LAND, "LogicalOr": G.LOR, "LogicalXor": G.LXOR}


def _identity(name, s):
    T = nb_type(s)
    if name in ("IAdd", "BitwiseOr", "BitwiseXor", "UMax"):
        return f"{T}(0)"
    if name in ("IMul", "FMul"):
        return f"{T}(1)"
    if name == "FAdd":
        return f"{T}(0.0)"
    if name == "FMin":
        return f"{T}(np.inf)"
    if name == "FMax":
        return f"{T}(-np.inf)"
    if name == "SMin":
        return f"{T}({(1 << (s.width - 1)) - 1})"
    if name == "SMax":
        return f"{T}({-(1 << (s.width - 1))})"
    if name == "UMin":
        return f"{T}({(1 << s.width) - 1})"
    if name == "BitwiseAnd":
        return f"{T}(-1)" if s.signed else f"{T}({(1 << s.width) - 1})"
    raise KeyError(name)


def _rounding(s):
    if s.kind == "float" and s.width == 16:
        return G.ROUND_BF16 if s.encoding == "bf16" else G.ROUND_F16
    return G.ROUND_NONE


def _arith(name):
    def lower(em, ins, wait, resume):
        gop, cluster = _group_op(em, ins)
        xs = em.coll_arrays(ins.operands[2])
        rs = em.coll_result(ins)
        for x, r, s in zip(xs, rs, scalars(em.rtype(ins))):
            if name in _LOGICAL:
                em.line(f"sg_logical(state, {wait}, {_LOGICAL[name]}, {gop}, {cluster}, {x}, {r}, {em.sg})")
            else:
                em.line(f"sg_arith(state, {wait}, {_ARITH[name]}, {gop}, {cluster}, {_rounding(s)}, "
                        f"{_identity(name, s)}, {x}, {r}, {em.sg})")
        em.line(f"sg_resume(state, {wait}, {resume})")
    return lower


for _name in list(_ARITH) + list(_LOGICAL):
    collective(f"OpGroupNonUniform{_name}")(_arith(_name))


def _gather(mode, has_index=True):
    def lower(em, ins, wait, resume):
        xs = em.coll_arrays(ins.operands[1])
        rs = em.coll_result(ins)
        idx_arr, idx_const, per_lane = "state", "0", "False"
        if has_index:
            v = ins.operands[2]
            if em.spec.is_const(v):
                idx_const = str(int(em.spec.scalar_const(v)))
            elif v in em.hoisted:
                idx_const = f"np.int64({em.val(v)})"
            else:
                idx_arr, per_lane = em.coll_arrays(v)[0], "True"
        for x, r in zip(xs, rs):
            em.line(f"sg_gather(state, {wait}, {mode}, {idx_arr}, {idx_const}, {per_lane}, {x}, {r}, {em.sg})")
        em.line(f"sg_resume(state, {wait}, {resume})")
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
    r = em.coll_result(ins)[0]
    em.line(f"sg_elect(state, {wait}, {r}, {em.sg})")
    em.line(f"sg_resume(state, {wait}, {resume})")


def _vote(kind):
    def lower(em, ins, wait, resume):
        xs = em.coll_arrays(ins.operands[1])
        r = em.coll_result(ins)[0]
        for i, x in enumerate(xs):
            em.line(f"sg_vote(state, {wait}, {kind}, {x}, {r}, {i > 0}, {em.sg})")
        em.line(f"sg_resume(state, {wait}, {resume})")
    return lower


collective("OpGroupNonUniformAll")(_vote(G.VOTE_ALL))
collective("OpGroupNonUniformAny")(_vote(G.VOTE_ANY))
collective("OpGroupNonUniformAllEqual")(_vote(G.VOTE_EQUAL))


@collective("OpGroupNonUniformBallot")
def _ballot(em, ins, wait, resume):
    x = em.coll_arrays(ins.operands[1])[0]
    r = em.coll_result(ins)
    em.line(f"sg_ballot(state, {wait}, {x}, {r[0]}, {r[1]}, {r[2]}, {r[3]}, {em.sg})")
    em.line(f"sg_resume(state, {wait}, {resume})")


# -- ballot queries: per lane, on a ballot value ---------------------------------------------------
def _ballot_bit(v, idx):
    return (f"((({v[0]} >> np.uint32({idx})) if {idx} < 32 else ({v[1]} >> np.uint32({idx} - 32)) if {idx} < 64 "
            f"else ({v[2]} >> np.uint32({idx} - 64)) if {idx} < 96 else ({v[3]} >> np.uint32({idx} - 96))) "
            f"& np.uint32(1)) != 0")


@rule("OpGroupNonUniformInverseBallot")
def _inverse_ballot(em, ins):
    v = em.vals(ins.operands[1])
    t = em.tmp("i")
    em.line(f"{t} = lane % {em.sg}")
    em.define(ins, [_ballot_bit(v, t)])


@rule("OpGroupNonUniformBallotBitExtract")
def _bit_extract(em, ins):
    v = em.vals(ins.operands[1])
    t = em.tmp("i")
    em.line(f"{t} = np.int64({em.val(ins.operands[2])})")
    em.define(ins, [_ballot_bit(v, t)])


@rule("OpGroupNonUniformBallotBitCount")
def _bit_count(em, ins):
    from ...spirv.grammar import grammar
    group_op = grammar().enum_name("GroupOperation", ins.operands[1])
    v = em.vals(ins.operands[2])
    sub = f"(lane % {em.sg})"
    n = {"Reduce": str(em.sg), "InclusiveScan": f"({sub} + 1)", "ExclusiveScan": sub}.get(group_op)
    if n is None:
        raise SpirvError(f"group operation {group_op} is not supported here", **ins.where())
    t = em.tmp("n")
    em.line(f"{t} = np.int64({n})")
    terms = [f"popcount64(np.uint64({v[w]}) & np.uint64(((1 << max(0, min(32, {t} - {32 * w}))) - 1)))"
             for w in range(4)]
    em.define(ins, [f"np.uint32({' + '.join(terms)})"])


@rule("OpGroupNonUniformBallotFindLSB")
def _find_lsb(em, ins):
    v = em.vals(ins.operands[1])
    e = f"np.uint32(find_lsb(np.uint64({v[0]}) | (np.uint64({v[1]}) << np.uint64(32))) if ({v[0]} | {v[1]}) != 0 " \
        f"else 64 + find_lsb(np.uint64({v[2]}) | (np.uint64({v[3]}) << np.uint64(32))))"
    em.define(ins, [e])


@rule("OpGroupNonUniformBallotFindMSB")
def _find_msb(em, ins):
    v = em.vals(ins.operands[1])
    e = f"np.uint32(64 + find_umsb(np.uint64({v[2]}) | (np.uint64({v[3]}) << np.uint64(32))) if ({v[2]} | {v[3]}) != 0 " \
        f"else find_umsb(np.uint64({v[0]}) | (np.uint64({v[1]}) << np.uint64(32))))"
    em.define(ins, [e])
