"""Subgroup operations as LLVM IR functions, run by the workgroup scheduler at a collective point.

When the lanes of a workgroup have stopped at a subgroup operation, the scheduler calls one of
these functions on the operand and result slot rows (jitcoop.codegen.collectives): for each
subgroup (S consecutive lanes of the W), it combines or moves the values of the lanes waiting
there (state == wait: the active lanes) and writes the results of those lanes only.

Each function is specialized to what its instruction fixes: the operation, the group operation,
the element type, the cluster, W and S. So its loops have constant bounds and no dispatch on the
operation, and a module defines one per kind of instruction it has (noinline: called once per
collective, kept out of line as the scheduler's other scans are, jitcoop.codegen.helpers).
They are optimized for size (minsize): LLVM would otherwise unroll each one's loops over the
lanes whole, for no speed (a lane's branch on its state keeps them scalar code), and a kernel
with dozens of subgroup operations (tests/shaders/subgroup_scan: 42) took 4.8 s to compile at
the optimized tier where it takes 2.7 s.

The semantics, per subgroup, over its active lanes in lane order:
- arith/logical: a reduction or scan, combined left to right from the operation's identity;
  float16 and bfloat16 values (held in float slots) are rounded after each step, so that every
  partial result is a value of the type, as the hardware's own adds give;
- gather: lane l reads lane j's value, j = the source its mode names; a source outside the
  subgroup gives the lane its own value;
- elect: true for the first active lane;
- vote: All, Any, or AllEqual (NaN equal to NaN) of the active lanes, ANDed into the result for
  the second and later components of a vector;
- ballot: the four 32-bit words of the active lanes' bits.
"""
from __future__ import annotations

from ..kernels import codes as G
from .collectives import _DTYPE_LLVM as _LLVM     # slot rows' LLVM types by dtype tag
from .llvm import Function

_ROUND = {G.ROUND_F16: "round_f16", G.ROUND_BF16: "round_bf16"}


def _define(em, name: str, params: str, build) -> str:
    """@name, defined in the module once: build(f) fills the Function."""
    full = f"@jc.sg.{name}"
    if full not in em.decls:
        f = Function(f"define internal void {full}({params}) noinline minsize optsize")
        f.block("entry")
        build(f)
        em.declare(full, f.render())
    return full


def _subgroups(f, W: int, step: int, body):
    """for lo in range(0, W, step): body(lo, hi) with hi = min(W, lo + step), then return."""
    pre = f.cur
    head, nxt, done = f.label("grp"), f.label("grp.next"), f.label("exit")
    f.br(head)
    f.block(head)
    lo = f.phi("i64", "lo")
    lo.incoming.append(("0", pre))
    end = f.op(f"add i64 {lo.name}, {step}")
    hi = f.op(f"select i1 {f.op(f'icmp ult i64 {end}, {W}')}, i64 {end}, i64 {W}")
    body(lo.name, hi)
    f.br(nxt)
    f.block(nxt)
    lo.incoming.append((end, nxt))
    f.cbr(f.op(f"icmp ult i64 {end}, {W}"), head, done)
    f.block(done)
    f.emit("ret void")


def _lanes(f, lo: str, hi: str, on_active, carried=()):
    """for l in range(lo, hi): on_active(l, values) for the lanes waiting here (state == %wait).
    `carried` [(type, initial)] are loop values: on_active returns their new values (an active
    lane's), and _lanes returns their values after the loop."""
    pre = f.cur
    head, on, nxt, done = f.label("lane"), f.label("lane.on"), f.label("lane.next"), f.label("lanes.done")
    f.br(head)
    f.block(head)
    l = f.phi("i64", "l")
    l.incoming.append((lo, pre))
    vals = []
    for t, init in carried:
        p = f.phi(t, "v")
        p.incoming.append((init, pre))
        vals.append(p)
    st = f.op(f"load i32, ptr {f.op(f'getelementptr i32, ptr %state, i64 {l.name}')}")
    f.cbr(f.op(f"icmp eq i32 {st}, %wait"), on, nxt)
    f.block(on)
    new = on_active(l.name, [p.name for p in vals]) or []
    on_end = f.cur
    f.br(nxt)
    f.block(nxt)
    after = []
    for (t, _), p, v in zip(carried, vals, new):
        a = f.phi(t, "v")
        a.incoming.extend([(p.name, head), (v, on_end)])
        p.incoming.append((a.name, nxt))
        after.append(a.name)
    l1 = f.op(f"add i64 {l.name}, 1")
    l.incoming.append((l1, nxt))
    f.cbr(f.op(f"icmp ult i64 {l1}, {hi}"), head, done)
    f.block(done)
    return after


def _elem(f, t: str, row: str, l: str) -> str:
    return f.op(f"getelementptr {t}, ptr {row}, i64 {l}")


def _load(f, t: str, row: str, l: str) -> str:
    return f.op(f"load {t}, ptr {_elem(f, t, row, l)}")


def _store(f, t: str, v: str, row: str, l: str):
    f.emit(f"store {t} {v}, ptr {_elem(f, t, row, l)}")


def _truth(f, t: str, row: str, l: str) -> str:
    """row[l] != 0, an i1 (a bool slot holds 0 or 1)."""
    return f.op(f"icmp ne {t} {_load(f, t, row, l)}, 0")


# -- reductions and scans ------------------------------------------------------------------------

def _combine(em, f, op: int, t: str, a: str, b: str, rnd: int) -> str:
    """One step of a reduction: a op b in type t (a float16/bfloat16 result rounded)."""
    ints = {G.IADD: "add", G.IMUL: "mul", G.AND: "and", G.OR: "or", G.XOR: "xor"}
    cmps = {G.SMIN: "slt", G.UMIN: "ult", G.SMAX: "sgt", G.UMAX: "ugt"}
    if op in ints:
        return f.op(f"{ints[op]} {t} {a}, {b}")
    if op in cmps:
        return f.op(f"select i1 {f.op(f'icmp {cmps[op]} {t} {a}, {b}')}, {t} {a}, {t} {b}")
    if op in (G.FADD, G.FMUL):
        r = f.op(f"{'fadd' if op == G.FADD else 'fmul'} {t} {a}, {b}")
    else:                       # FMin/FMax: a NaN operand loses (the other is the result)
        better = f.op(f"fcmp {'olt' if op == G.FMIN else 'ogt'} {t} {a}, {b}")
        b_nan = f.op(f"fcmp uno {t} {b}, {b}")
        keep_a = f.op(f"or i1 {b_nan}, {better}")
        r = f.op(f"select i1 {keep_a}, {t} {a}, {t} {b}")
        a_nan = f.op(f"fcmp uno {t} {a}, {a}")
        r = f.op(f"select i1 {a_nan}, {t} {b}, {t} {r}")
    if rnd in _ROUND:
        r = f.op(f"call float {em.helper(_ROUND[rnd])}(float {r})")
    return r


def arith(em, op: int, gop: int, cluster: int, rnd: int, dtype: str, ident: str) -> str:
    """The function (state, wait, x, r) of a reduction or scan of numbers: `op` (codes.IADD...),
    `gop` (codes.REDUCE...), `ident` op's identity as an LLVM literal of the slot type."""
    t = _LLVM[dtype]
    step = min(cluster, em.sg) if gop == G.CLUSTERED else em.sg

    def build(f):
        def run(lo, hi):
            def on(l, acc):
                acc, = acc
                if gop == G.EXCLUSIVE:
                    _store(f, t, acc, "%r", l)
                new = _combine(em, f, op, t, acc, _load(f, t, "%x", l), rnd)
                if gop == G.INCLUSIVE:
                    _store(f, t, new, "%r", l)
                return [new]
            total, = _lanes(f, lo, hi, on, [(t, ident)])
            if gop in (G.REDUCE, G.CLUSTERED):
                _lanes(f, lo, hi, lambda l, _: _store(f, t, total, "%r", l))
        _subgroups(f, em.W, step, run)
    return _define(em, f"arith.{op}.{gop}.{step}.{rnd}.{dtype}.{em.W}.{em.sg}",
                   "ptr %state, i32 %wait, ptr %x, ptr %r", build)


def logical(em, op: int, gop: int, cluster: int) -> str:
    """The function (state, wait, x, r) of a reduction or scan of bools (LogicalAnd/Or/Xor)."""
    step = min(cluster, em.sg) if gop == G.CLUSTERED else em.sg
    ins = {G.LAND: "and", G.LOR: "or", G.LXOR: "xor"}[op]

    def build(f):
        def put(v, l):
            _store(f, "i8", f.op(f"zext i1 {v} to i8"), "%r", l)

        def run(lo, hi):
            def on(l, acc):
                acc, = acc
                if gop == G.EXCLUSIVE:
                    put(acc, l)
                new = f.op(f"{ins} i1 {acc}, {_truth(f, 'i8', '%x', l)}")
                if gop == G.INCLUSIVE:
                    put(new, l)
                return [new]
            total, = _lanes(f, lo, hi, on, [("i1", "true" if op == G.LAND else "false")])
            if gop in (G.REDUCE, G.CLUSTERED):
                _lanes(f, lo, hi, lambda l, _: put(total, l))
        _subgroups(f, em.W, step, run)
    return _define(em, f"logical.{op}.{gop}.{step}.{em.W}.{em.sg}", "ptr %state, i32 %wait, ptr %x, ptr %r", build)


# -- data movement -------------------------------------------------------------------------------

def gather(em, mode: int, dtype: str, idx_dtype: str | None) -> str:
    """The function (state, wait, idx, k, x, r): r[l] = x[j] for each active lane l, j the
    source lane `mode` (codes.BROADCAST...) names with the index idx[l] (a per-lane index row of
    idx_dtype) or k (idx_dtype None: one index for every lane)."""
    t = _LLVM[dtype]

    def build(f):
        def run(lo, hi):
            first = None
            if mode == G.FIRST:
                first, = _lanes(f, lo, hi, lambda l, v: [f.op(f"select i1 {f.op(f'icmp slt i64 {v[0]}, 0')}, "
                                                              f"i64 {l}, i64 {v[0]}")], [("i64", "-1")])

            def on(l, _):
                if idx_dtype is None:
                    k = "%k"
                else:
                    it = _LLVM[idx_dtype]
                    k = _load(f, it, "%idx", l)
                    if it != "i64":
                        k = f.op(f"{'zext' if idx_dtype.startswith('u') else 'sext'} {it} {k} to i64")
                i = f.op(f"sub i64 {l}, {lo}")
                if mode in (G.BROADCAST, G.SHUFFLE):
                    j = f.op(f"add i64 {lo}, {k}")
                elif mode == G.SHUFFLE_XOR:
                    j = f.op(f"add i64 {lo}, {f.op(f'xor i64 {i}, {k}')}")
                elif mode == G.SHUFFLE_UP:
                    j = f.op(f"sub i64 {l}, {k}")
                elif mode == G.SHUFFLE_DOWN:
                    j = f.op(f"add i64 {l}, {k}")
                elif mode == G.QUAD_BROADCAST:
                    quad = f.op(f"and i64 {i}, -4")
                    j = f.op(f"add i64 {lo}, {f.op(f'or i64 {quad}, {k}')}")
                elif mode == G.QUAD_SWAP:
                    mask = f.op(f"add i64 {k}, 1")
                    j = f.op(f"add i64 {lo}, {f.op(f'xor i64 {i}, {mask}')}")
                else:
                    j = first
                below, above = f.op(f"icmp slt i64 {j}, {lo}"), f.op(f"icmp sge i64 {j}, {hi}")
                outside = f.op(f"or i1 {below}, {above}")
                j = f.op(f"select i1 {outside}, i64 {l}, i64 {j}")
                _store(f, t, _load(f, t, "%x", j), "%r", l)
            _lanes(f, lo, hi, on)
        _subgroups(f, em.W, em.sg, run)
    return _define(em, f"gather.{mode}.{dtype}.{idx_dtype}.{em.W}.{em.sg}",
                   "ptr %state, i32 %wait, ptr %idx, i64 %k, ptr %x, ptr %r", build)


# -- votes ---------------------------------------------------------------------------------------

def elect(em) -> str:
    """The function (state, wait, r): r[l] = whether l is its subgroup's first active lane."""
    def build(f):
        def run(lo, hi):
            def on(l, first):
                _store(f, "i8", f.op(f"zext i1 {first[0]} to i8"), "%r", l)
                return ["false"]
            _lanes(f, lo, hi, on, [("i1", "true")])
        _subgroups(f, em.W, em.sg, run)
    return _define(em, f"elect.{em.W}.{em.sg}", "ptr %state, i32 %wait, ptr %r", build)


def vote(em, kind: int, dtype: str, combine_and: bool) -> str:
    """The function (state, wait, x, r) of All/Any of a bool or AllEqual of one component
    (`combine_and`: ANDed into r, for the later components of a vector)."""
    t = _LLVM[dtype]
    is_float = t in ("float", "double")

    def build(f):
        def run(lo, hi):
            if kind == G.VOTE_EQUAL:
                # the first active lane's value, then whether every active lane's equals it
                def on(l, v):
                    ref, seen, same = v
                    x = _load(f, t, "%x", l)
                    if is_float:
                        nans = f.op(f"and i1 {f.op(f'fcmp uno {t} {x}, {x}')}, {f.op(f'fcmp uno {t} {ref}, {ref}')}")
                        eq = f.op(f"or i1 {f.op(f'fcmp oeq {t} {x}, {ref}')}, {nans}")
                    else:
                        eq = f.op(f"icmp eq {t} {x}, {ref}")
                    ok = f.op(f"or i1 {f.op(f'xor i1 {seen}, true')}, {eq}")
                    return [f.op(f"select i1 {seen}, {t} {ref}, {t} {x}"), "true", f.op(f"and i1 {same}, {ok}")]
                zero = "0.0" if is_float else "0"
                *_, v = _lanes(f, lo, hi, on, [(t, zero), ("i1", "false"), ("i1", "true")])
            else:
                ins = "and" if kind == G.VOTE_ALL else "or"
                v, = _lanes(f, lo, hi, lambda l, a: [f.op(f"{ins} i1 {a[0]}, {_truth(f, t, '%x', l)}")],
                            [("i1", "true" if kind == G.VOTE_ALL else "false")])

            def put(l, _):
                r = v
                if combine_and:
                    r = f.op(f"and i1 {r}, {_truth(f, 'i8', '%r', l)}")
                _store(f, "i8", f.op(f"zext i1 {r} to i8"), "%r", l)
            _lanes(f, lo, hi, put)
        _subgroups(f, em.W, em.sg, run)
    return _define(em, f"vote.{kind}.{dtype}.{int(combine_and)}.{em.W}.{em.sg}",
                   "ptr %state, i32 %wait, ptr %x, ptr %r", build)


def ballot(em) -> str:
    """The function (state, wait, x, r0, r1, r2, r3): the four 32-bit words of the subgroup's
    active lanes whose bool x is true (bit i of the ballot: the subgroup's i-th lane)."""
    def build(f):
        def run(lo, hi):
            def on(l, words):
                x = _truth(f, "i8", "%x", l)
                i = f.op(f"sub i64 {l}, {lo}")
                sh = f.op(f"trunc i64 {f.op(f'and i64 {i}, 31')} to i32")
                bit = f.op(f"select i1 {x}, i32 {f.op(f'shl i32 1, {sh}')}, i32 0")
                w = f.op(f"lshr i64 {i}, 5")
                out = []
                for k, m in enumerate(words):
                    here = f.op(f"icmp eq i64 {w}, {k}")
                    out.append(f.op(f"or i32 {m}, {f.op(f'select i1 {here}, i32 {bit}, i32 0')}"))
                return out
            words = _lanes(f, lo, hi, on, [("i32", "0")] * 4)

            def put(l, _):
                for k, m in enumerate(words):
                    _store(f, "i32", m, f"%r{k}", l)
            _lanes(f, lo, hi, put)
        _subgroups(f, em.W, em.sg, run)
    return _define(em, f"ballot.{em.W}.{em.sg}",
                   "ptr %state, i32 %wait, ptr %x, ptr %r0, ptr %r1, ptr %r2, ptr %r3", build)
