"""Barriers and subgroup operations.

These are collective: a lane stops before one and the workgroup scheduler runs it for the lanes
that wait there (the active lanes of each subgroup), reading their operands from spill slots and
writing their results to the result's spill slots. Ballot bit queries that only read a uniform
ballot are ordinary per-lane rules.
"""
from __future__ import annotations

from ...errors import SpirvError
from ..emitter import nb_type
from . import collective, rule
from .common import round_to, scalars, unsigned

SCOPE_WORKGROUP, SCOPE_SUBGROUP = 2, 3


def _scope(em, ins, pos=0):
    return int(em.spec.scalar_const(ins.operands[pos]))


def _resume_all(em, wait, resume):
    em.line(f"for l in range({em.W}):")
    em.line(f"    if state[l] == {wait}:")
    em.line(f"        state[l] = {resume}")


def _per_subgroup(em):
    """Open a loop over subgroups with lo/hi lane bounds; caller closes with em.indent -= 1."""
    em.line(f"for sg in range({em.NSG}):")
    em.indent += 1
    em.line(f"lo = sg * {em.sg}; hi = min({em.W}, lo + {em.sg})")


@collective("OpControlBarrier")
def _barrier(em, ins, wait, resume):
    scope = _scope(em, ins)
    if scope == SCOPE_WORKGROUP:
        em.line(f"for l in range({em.W}):")
        em.line(f"    if state[l] != -1 and state[l] != {wait}:")
        em.line("        " + em.fail_group(ins, "barrier reached by only part of the workgroup: lane {d} "
                                              "is waiting elsewhere (barriers must be in uniform "
                                              "control flow)", "l"))
    _resume_all(em, wait, resume)


def _combine(op, s, acc, x):
    T = nb_type(s)
    if op == "IAdd":
        return f"{T}({T}({acc}) + {T}({x}))"
    if op == "IMul":
        return f"{T}({T}({acc}) * {T}({x}))"
    if op == "FAdd":
        return round_to(f"{acc} + {x}", s)
    if op == "FMul":
        return round_to(f"{acc} * {x}", s)
    if op in ("SMin", "UMin"):
        return f"({acc} if {acc} < {x} else {x})"
    if op in ("SMax", "UMax"):
        return f"({acc} if {acc} > {x} else {x})"
    if op == "FMin":
        return f"fmin_gl({acc}, {x})"
    if op == "FMax":
        return f"fmax_gl({acc}, {x})"
    if op == "BitwiseAnd":
        return f"{T}({acc} & {x})"
    if op == "BitwiseOr":
        return f"{T}({acc} | {x})"
    if op == "BitwiseXor":
        return f"{T}({acc} ^ {x})"
    if op == "LogicalAnd":
        return f"({acc} and {x})"
    if op == "LogicalOr":
        return f"({acc} or {x})"
    if op == "LogicalXor":
        return f"({acc} != {x})"
    raise KeyError(op)


def _identity(op, s, em):
    T = nb_type(s)
    if op in ("IAdd", "BitwiseOr", "BitwiseXor"):
        return f"{T}(0)"
    if op == "IMul":
        return f"{T}(1)"
    if op == "FAdd":
        return f"{T}(0.0)"
    if op == "FMul":
        return f"{T}(1.0)"
    if op == "FMin":
        return f"{T}(np.inf)"
    if op == "FMax":
        return f"{T}(-np.inf)"
    if op == "SMin":
        return f"{T}({(1 << (s.width - 1)) - 1})"
    if op == "SMax":
        return f"{T}({-(1 << (s.width - 1))})"
    if op == "UMin":
        return f"{T}({(1 << s.width) - 1})"
    if op == "UMax":
        return f"{T}(0)"
    if op == "BitwiseAnd":
        return f"{T}({(1 << s.width) - 1})" if s.signed is False else f"{T}(-1)"
    if op in ("LogicalAnd",):
        return "True"
    if op in ("LogicalOr", "LogicalXor"):
        return "False"
    raise KeyError(op)


def _arith(op):
    def lower(em, ins, wait, resume):
        from ...spirv.grammar import grammar
        group_op = grammar().enum_name("GroupOperation", ins.operands[1])
        x = em.coll_operand(ins.operands[2])
        r = em.coll_result(ins)
        ss = scalars(em.rtype(ins))
        cluster = None
        if group_op == "ClusteredReduce":
            cluster = int(em.spec.scalar_const(ins.operands[3]))
        elif group_op not in ("Reduce", "InclusiveScan", "ExclusiveScan"):
            raise SpirvError(f"group operation {group_op} is not supported", **ins.where())
        _per_subgroup(em)
        if cluster:
            em.line(f"for c0 in range(lo, hi, {cluster}):")
            em.indent += 1
            rng = f"range(c0, min(hi, c0 + {cluster}))"
        else:
            rng = "range(lo, hi)"
        for i, s in enumerate(ss):
            em.line(f"acc{i} = {_identity(op, s, em)}")
        em.line(f"for l in {rng}:")
        em.line(f"    if state[l] == {wait}:")
        em.indent += 2
        for i, s in enumerate(ss):
            if group_op == "ExclusiveScan":
                em.line(f"{r[i]}[l] = acc{i}")
            em.line(f"acc{i} = {_combine(op, s, f'acc{i}', x[i])}")
            if group_op == "InclusiveScan":
                em.line(f"{r[i]}[l] = acc{i}")
        em.indent -= 2
        if group_op in ("Reduce", "ClusteredReduce"):
            em.line(f"for l in {rng}:")
            em.line(f"    if state[l] == {wait}:")
            for i in range(len(ss)):
                em.line(f"        {r[i]}[l] = acc{i}")
        if cluster:
            em.indent -= 1
        em.indent -= 1
        _resume_all(em, wait, resume)
    return lower


for _op in ("IAdd", "FAdd", "IMul", "FMul", "SMin", "UMin", "FMin", "SMax", "UMax", "FMax",
            "BitwiseAnd", "BitwiseOr", "BitwiseXor", "LogicalAnd", "LogicalOr", "LogicalXor"):
    collective(f"OpGroupNonUniform{_op}")(_arith(_op))


def _gather(em, ins, wait, resume, src_expr, val_pos=1):
    """r[l] = x[src] for each waiting lane, src computed by src_expr (from l, lo, hi)."""
    x = em.coll_operand(ins.operands[val_pos])
    r = em.coll_result(ins)
    _per_subgroup(em)
    em.line("for l in range(lo, hi):")
    em.line(f"    if state[l] == {wait}:")
    em.indent += 2
    em.line(f"j = {src_expr}")
    em.line("if j < lo or j >= hi:")
    em.line("    j = l      # outside the subgroup: undefined; this answers the lane's own value")
    for xi, ri in zip(x, r):
        em.line(f"{ri}[l] = {xi.replace('[l]', '[j]')}")
    em.indent -= 2
    em.indent -= 1
    _resume_all(em, wait, resume)


def _operand_expr(em, vid):
    v = em.coll_operand(vid)[0]
    return f"np.int64({v})"


@collective("OpGroupNonUniformBroadcast", "OpGroupNonUniformShuffle")
def _broadcast(em, ins, wait, resume):
    _gather(em, ins, wait, resume, f"lo + {_operand_expr(em, ins.operands[2])}")


@collective("OpGroupNonUniformShuffleXor")
def _shuffle_xor(em, ins, wait, resume):
    _gather(em, ins, wait, resume, f"lo + ((l - lo) ^ {_operand_expr(em, ins.operands[2])})")


@collective("OpGroupNonUniformShuffleUp")
def _shuffle_up(em, ins, wait, resume):
    _gather(em, ins, wait, resume, f"l - {_operand_expr(em, ins.operands[2])}")


@collective("OpGroupNonUniformShuffleDown")
def _shuffle_down(em, ins, wait, resume):
    _gather(em, ins, wait, resume, f"l + {_operand_expr(em, ins.operands[2])}")


@collective("OpGroupNonUniformQuadBroadcast")
def _quad_broadcast(em, ins, wait, resume):
    _gather(em, ins, wait, resume, f"lo + (((l - lo) & ~3) | {_operand_expr(em, ins.operands[2])})")


@collective("OpGroupNonUniformQuadSwap")
def _quad_swap(em, ins, wait, resume):
    d = int(em.spec.scalar_const(ins.operands[2]))
    _gather(em, ins, wait, resume, f"lo + ((l - lo) ^ {d + 1})")


@collective("OpGroupNonUniformBroadcastFirst")
def _broadcast_first(em, ins, wait, resume):
    x = em.coll_operand(ins.operands[1])
    r = em.coll_result(ins)
    _per_subgroup(em)
    em.line("first = -1")
    em.line("for l in range(lo, hi):")
    em.line(f"    if state[l] == {wait} and first < 0:")
    em.line("        first = l")
    em.line("for l in range(lo, hi):")
    em.line(f"    if state[l] == {wait}:")
    for xi, ri in zip(x, r):
        em.line(f"        {ri}[l] = {xi.replace('[l]', '[first]')}")
    em.indent -= 1
    _resume_all(em, wait, resume)


@collective("OpGroupNonUniformElect")
def _elect(em, ins, wait, resume):
    r = em.coll_result(ins)[0]
    _per_subgroup(em)
    em.line("first = True")
    em.line("for l in range(lo, hi):")
    em.line(f"    if state[l] == {wait}:")
    em.line(f"        {r}[l] = first")
    em.line("        first = False")
    em.indent -= 1
    _resume_all(em, wait, resume)


def _vote(kind):
    def lower(em, ins, wait, resume):
        x = em.coll_operand(ins.operands[1])
        r = em.coll_result(ins)[0]
        _per_subgroup(em)
        if kind == "AllEqual":
            em.line("v = True; seen = False")
            em.line("for l in range(lo, hi):")
            em.line(f"    if state[l] == {wait}:")
            em.line("        if not seen:")
            for i, xi in enumerate(x):
                em.line(f"            f{i} = {xi}")
            em.line("            seen = True")
            cond = " or ".join(f"{xi} != f{i}" for i, xi in enumerate(x))
            em.line(f"        elif {cond}:")
            em.line("            v = False")
        else:
            em.line(f"v = {'True' if kind == 'All' else 'False'}")
            em.line("for l in range(lo, hi):")
            em.line(f"    if state[l] == {wait}:")
            if kind == "All":
                em.line(f"        v = v and {x[0]}")
            else:
                em.line(f"        v = v or {x[0]}")
        em.line("for l in range(lo, hi):")
        em.line(f"    if state[l] == {wait}:")
        em.line(f"        {r}[l] = v")
        em.indent -= 1
        _resume_all(em, wait, resume)
    return lower


collective("OpGroupNonUniformAll")(_vote("All"))
collective("OpGroupNonUniformAny")(_vote("Any"))
collective("OpGroupNonUniformAllEqual")(_vote("AllEqual"))


@collective("OpGroupNonUniformBallot")
def _ballot(em, ins, wait, resume):
    x = em.coll_operand(ins.operands[1])[0]
    r = em.coll_result(ins)
    _per_subgroup(em)
    em.line("m0 = np.uint32(0); m1 = np.uint32(0); m2 = np.uint32(0); m3 = np.uint32(0)")
    em.line("for l in range(lo, hi):")
    em.line(f"    if state[l] == {wait} and {x}:")
    em.line("        i = l - lo")
    for w in range(4):
        em.line(f"        if {32 * w} <= i < {32 * w + 32}:")
        em.line(f"            m{w} = np.uint32(m{w} | np.uint32(1 << (i - {32 * w})))")
    em.line("for l in range(lo, hi):")
    em.line(f"    if state[l] == {wait}:")
    for w in range(4):
        em.line(f"        {r[w]}[l] = m{w}")
    em.indent -= 1
    _resume_all(em, wait, resume)


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
