"""Cooperative matrices that live in slot rows, and which of them share rows.

A value in slot rows is a block [length, W] of its component type in the workgroup's scratch
memory (element e of lane l at row e, column l), from definition to last use: collective
instructions read and write it in place, lane code reads and writes its own column, and nothing is
spilled or reloaded at collectives. *Resident* are every value a collective instruction produces,
loads of matrix variables, phis and copies of them, every matrix value whose fragment is longer
than `long` components (its instructions run as loops over the components:
codegen/element_loops.py), and Function/Private matrix variables only loaded and stored whole or
a component at a time.

Coalescing gives two values one block where that is safe, so that no copy is made:
- a loop's resident phi and the value it takes on the back edge (the accumulator of a K loop:
  a 128 x 128 accumulator copied per lane through rows costs more than the MulAdd itself);
- a matrix variable (unoptimized SPIR-V keeps accumulators in Function variables) and a load of it
  whose uses all come before the next store, or a value whose one use is a store to it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..spirv.types import CoopMat
from .context import Context
from .flatten import used_ids

# Collectives whose result may share the rows of one operand: each reads an element of that
# operand before it writes that element of the result, or reads all of it before writing any
# (a tensor load keeps the Object's element wherever it loads nothing: the same position).
IN_PLACE = {"OpCooperativeMatrixMulAddKHR": 2, "OpCooperativeMatrixLoadTensorNV": 1}


@dataclass
class Residency:
    resident: set = field(default_factory=set)        # value ids living in slot rows
    resident_vars: set = field(default_factory=set)   # matrix variables living in slot rows
    coalesced: dict = field(default_factory=dict)     # value id -> phi id or ("var", id) it shares rows with


def _kind(t) -> bool:
    return isinstance(t, CoopMat)


def _load_or_store(u, p) -> bool:
    """Whether instruction u loads from pointer p, or stores through it (not p itself)."""
    return (u.opname == "OpLoad" and u.operands[0] == p) or \
        (u.opname == "OpStore" and u.operands[0] == p and u.operands[1] != p)


def whole_vars(ctx: Context, promoted: set, var_types: dict) -> set:
    """The promoted matrix variables only loaded and stored whole: they live in slot rows."""
    return {v for v in promoted if _kind(var_types[v].pointee)
            and all(_load_or_store(u, v) for u in ctx.users.get(v, ()))}


def component_vars(ctx: Context, in_memory: set, var_types: dict) -> set:
    """Matrix variables in memory (an index that is not a constant picks their components, so
    they are not promoted) whose every use is a whole load or store, or an access chain to one
    component that is only loaded and stored: they live in slot rows too, lane code reading and
    writing its own column's component (an accumulator clamped element by element between its
    MulAdds and its store, as ggml's matrix products do, would otherwise be copied through
    memory and per-lane slots at each collective)."""
    def component(u, v) -> bool:
        return (u.opname in ("OpAccessChain", "OpInBoundsAccessChain") and u.operands[0] == v
                and len(u.operands) == 2
                and all(_load_or_store(w, u.result) for w in ctx.users.get(u.result, ())))
    return {v for v in in_memory if _kind(var_types[v].pointee)
            and all(_load_or_store(u, v) or component(u, v) for u in ctx.users.get(v, ()))}


def find(ctx: Context, promoted: set, var_types: dict, collective: set, resident_defs: set,
         every: bool = False, long: int | None = None, in_memory: set = frozenset()) -> Residency:
    """Residency of the flat function; `promoted` loses the matrix variables that become resident.
    `every`: every matrix value lives in slot rows (lane-invariant kernels run lane code on
    matrices over every lane's column: analysis/invariance.py); `long`: so does every matrix value
    of more components per invocation than that. `in_memory`: the Function variables not
    promoted (component_vars)."""
    res = Residency()
    res.resident_vars = whole_vars(ctx, promoted, var_types) | component_vars(ctx, in_memory, var_types)
    promoted -= res.resident_vars
    for b in ctx.ff.blocks:
        for ins in b.instrs:
            if ins.result is None or not _kind(t := ctx.spec.type(ins.result_type)):
                continue
            op = ins.opname
            if (every or (long is not None and t.n > long) or op in collective or op in resident_defs
                    or op in ("OpPhi", "OpCopyObject")
                    or (op == "OpLoad" and ins.operands[0] in res.resident_vars)):
                res.resident.add(ins.result)
    coalesce_phis(ctx, res)
    coalesce_vars(ctx, res, var_types)
    return res


def coalesce_phis(ctx: Context, res: Residency):
    """A loop's resident phi P and the value V it takes on the back edge share rows when V's only
    phi use is P, V's definition reads P at most as an in-place operand, P's old value is dead
    once V is written (no use of P after V's definition in its block, nor in any block V's block
    reaches before it is back at P's block), and V is dead where P's block begins (no use of V
    reachable from there before V's block)."""
    where = {}
    for b in ctx.ff.blocks:
        for i, ins in enumerate(b.instrs):
            if ins.result is not None:
                where[ins.result] = (b, i)
    for pb in ctx.ff.blocks:
        for phi in pb.phis:
            p = phi.result
            if p not in res.resident:
                continue
            for v in _incoming(phi):
                if (v not in res.resident or v in res.coalesced or v == p or v not in where
                        or ctx.value_type(v) is not ctx.value_type(p)):
                    continue
                if _coalescible(ctx, p, pb, v, where):
                    res.coalesced[v] = p
                    break
    _coalesce_merges(ctx, res, where)


def _incoming(phi):
    return [phi.operands[i] for i in range(0, len(phi.operands), 2)]


def _coalesce_merges(ctx: Context, res: Residency, where):
    """A loop's phi P whose back-edge value is itself a phi V merging P with values made in
    V's rows (a matrix carried over the iterations where a guard skips its load or MulAdd:
    `if (inside) ma = load;` makes V = phi(load, P)) shares rows with V, and so with those values:
    no copy on the edge that keeps P, none on the back edge (a guarded GEMM copied its eight
    matrices twice per K step, 12% of its time). Safe when each value X made in V's rows could
    share P's rows itself (the conditions of _coalescible, V allowed as X's phi use: P dead once
    X is written, which covers any phi reading P on an edge X's write reaches) and V's only phi
    use is P. (V takes P and P takes V: the two are on a cycle, where a use of V that P's block
    reaches without passing V's block is a phi's, not a read of the rows.)"""
    phis = {ph.result: ph for b in ctx.ff.blocks for ph in b.phis}
    for pb in ctx.ff.blocks:
        for phi in pb.phis:
            p = phi.result
            if p not in res.resident or p in res.coalesced:
                continue
            for v in _incoming(phi):
                if (v not in phis or v == p or v not in res.resident or v in res.coalesced
                        or ctx.value_type(v) is not ctx.value_type(p)):
                    continue
                vphi = phis[v]
                made = [x for x in _incoming(vphi) if x != p]
                # V's rows hold the values made in them and nothing else (no group of P's
                # shape merged into V before: its members were not checked against P)
                if (not made or any(res.coalesced.get(x) != v or x not in where for x in made)
                        or any(r == v and x not in made for x, r in res.coalesced.items())
                        or any(u.opname == "OpPhi" and u.result != p for u in ctx.users.get(v, ()))):
                    continue
                if all(_coalescible(ctx, p, pb, x, where, also=v) for x in made):
                    res.coalesced[v] = p
                    for x in made:
                        res.coalesced[x] = p
                    break


def _coalescible(ctx: Context, p, pb, v, where, also=None) -> bool:
    """Whether v may share phi p's rows (the conditions coalesce_phis states); `also`: a phi
    that may take v as well (the merge phi sharing the same rows: _coalesce_merges)."""
    bmap, users = ctx.bmap, ctx.users
    vb, vi = where[v]
    vdef = vb.instrs[vi]
    if vdef.opname == "OpPhi":
        return False
    for u in users.get(v, ()):
        if u.opname == "OpPhi" and u.result not in (p, also):
            return False
    reads = used_ids(vdef)
    if p in reads:
        pos = IN_PLACE.get(vdef.opname)
        if pos is None or reads.count(p) != 1 or vdef.operands[pos] != p:
            return False
    # Blocks reached from V's block before P's block comes round again.
    seen = _reached(bmap, vb.succs(), pb.label)
    if vb.label in seen:
        return False
    after = set(id(x) for x in vb.instrs[vi + 1:]) | {id(vb.term)}
    for u in users.get(p, ()):
        if id(u) in after:
            return False
        if u.opname == "OpPhi":
            for i in range(0, len(u.operands), 2):
                if u.operands[i] == p and (u.operands[i + 1] in seen or u.operands[i + 1] == vb.label):
                    return False
    if _used_in(bmap, seen, p):
        return False
    # V dead where P's block begins, but as P: a use of V reachable from P's block without
    # passing V's definition would read the shared rows after P took another incoming value (a
    # merge phi, `if (first) keep = acc;` unrolled: on the edge where keep keeps its old value,
    # that value overwrote acc). A loop's back-edge value is used from P's block on only by the
    # phi: its block is where the walk stops.
    return not _used_in(bmap, _reached(bmap, [pb.label], vb.label), v)


def _reached(bmap, starts, stop) -> set:
    """The labels reached from `starts` (included) without passing block `stop`."""
    seen, todo = set(), list(starts)
    while todo:
        lab = todo.pop()
        if lab in seen or lab == stop or lab not in bmap:
            continue
        seen.add(lab)
        todo.extend(bmap[lab].succs())
    return seen


def _used_in(bmap, labels, x) -> bool:
    """Whether an instruction other than a phi in those blocks uses x."""
    return any(x in used_ids(ins) for lab in labels for ins in bmap[lab].instrs + [bmap[lab].term]
               if ins.opname != "OpPhi")


def coalesce_vars(ctx: Context, res: Residency, var_types: dict):
    """Matrix variables without a row copy per load and store: a load whose uses all come before
    the next store to the variable reads the variable's rows; a value whose one use is a store to
    the variable is made in the variable's rows when nothing reads the variable between (its
    definition may read the old value only as an in-place operand). Positions are compared along
    straight runs of blocks, so a load's uses and a store's value must lie in the run of the
    instruction itself."""
    if not res.resident_vars:
        return
    blocks = ctx.ff.blocks
    preds, bmap, users = ctx.preds, ctx.bmap, ctx.users
    entry = ctx.entry
    nxt = {}
    for b in blocks:
        if b.term.opname == "OpBranch":
            t = b.term.operands[0]
            if preds.get(t) == [b.label] and t != entry and t != b.label:
                nxt[b.label] = t
    where = {}                  # id(instruction) -> (run, position)
    followers = set(nxt.values())
    for b in blocks:
        if b.label in followers:
            continue
        lab, pos, seen = b.label, 0, set()
        while lab is not None and lab in bmap and lab not in seen:
            seen.add(lab)
            for ins in bmap[lab].instrs + [bmap[lab].term]:
                where[id(ins)] = (b.label, pos)
                pos += 1
            lab = nxt.get(lab)
    defs = {}
    acc = {}                    # variable -> [(run, pos, instruction)] of its loads and stores
    component = {ins.result: ins.operands[0] for b in blocks for ins in b.instrs     # component_vars
                 if ins.opname in ("OpAccessChain", "OpInBoundsAccessChain")
                 and ins.operands[0] in res.resident_vars}
    for b in blocks:
        for ins in b.instrs:
            if ins.result is not None:
                defs[ins.result] = ins
            if ins.opname in ("OpLoad", "OpStore"):
                x = component.get(ins.operands[0], ins.operands[0])
                if x in res.resident_vars:
                    acc.setdefault(x, []).append(where.get(id(ins), (None, 0)) + (ins,))

    def uses_in_run(v, run, after):
        out = []
        for u in users.get(v, ()):
            w = where.get(id(u))
            if u.opname == "OpPhi" or w is None or w[0] != run or w[1] <= after:
                return None
            out.append((w[1], u))
        return out

    aliased = {}                # load result -> (run, pos, last use position)
    for x, items in acc.items():
        for run, pos, ins in items:
            if ins.opname != "OpLoad" or run is None or ins.result not in res.resident:
                continue
            if ins.result in res.coalesced:
                continue
            us = uses_in_run(ins.result, run, pos)
            if not us:
                continue
            last = max(p for p, _ in us)
            if any(r == run and op.opname == "OpStore" and pos < p2 <= last
                   and not (p2 == last and op.operands[1] == ins.result)
                   for r, p2, op in items):
                continue
            aliased[ins.result] = (run, pos, last)
            res.coalesced[ins.result] = ("var", x)
    for x, items in acc.items():
        t = var_types[x].pointee
        for run, pos, st in items:
            if st.opname != "OpStore" or run is None:
                continue
            v = st.operands[1]
            d = defs.get(v)
            if (d is None or v not in res.resident or v in res.coalesced or d.opname == "OpPhi"
                    or ctx.value_type(v) is not t or len(users.get(v, ())) != 1):
                continue
            dw = where.get(id(d))
            if dw is None or dw[0] != run or dw[1] >= pos:
                continue
            if any(r == run and dw[1] < p2 < pos for r, p2, _ in items):
                continue        # the variable is read or written between
            ok = True
            for lres, (lr, lp, last) in aliased.items():
                if res.coalesced.get(lres) != ("var", x) or lr != run or lp >= dw[1]:
                    continue
                if last > dw[1]:
                    ok = False
                elif last == dw[1]:
                    at = IN_PLACE.get(d.opname)
                    ok = ok and at is not None and d.operands[at] == lres and used_ids(d).count(lres) == 1
            if ok:
                res.coalesced[v] = ("var", x)
