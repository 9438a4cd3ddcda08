"""R = C + A x B for one scope instance, as an LLVM function specialized on everything static.

The generator of a MulAdd site (rules.khr_coopmat) describes the shapes and where each operand
lies (jitcoop.kernels.coopmat: DENSE, STRIPED or TABLE placements, mm_spec) and gets back an LLVM
function

    void @<name>(ptr a, ptr b, ptr c, ptr r, ptr tabs, ptr work, i64 base, i64 q)

for one instance (base: its first lane, q: its index), or, for a pair of MulAdds with the same A
and everything else placed alike (pair_wanted),

    void @<name>(ptr a, ptr b, ptr c, ptr r, ptr tabs, ptr work, i64 base, i64 q, ptr b2, ptr c2, ptr r2)

which computes R = C + A x B and R2 = C2 + A x B2 in the same blocks (each row's vectors of both
results held together). The body is explicit vector code of the
host's width: blocks of rows x vectors of columns held in registers over the K loop, as many as
the host's vector registers hold (AVX-512: 6 rows x 4 vectors of 32 registers; AVX2: 6 rows x 2
vectors of 16: a block sized for AVX-512 spilled on AVX2, a third of the speed). Every element gets exactly
the scalar loop's operations in the scalar loop's order (start at C, add the products for
k = 0, 1, ...), so results do not depend on the blocking; `fused` contracts each multiply and add
into one FMA, which gives the same result whenever the products are exact (inputs narrower than
float64). Operands that are not DENSE/STRIPED in the compute type are first copied, converted,
into `work` as dense matrices (a subgroup MulAdd's float A and B usually arrive in float64
already: their loads wrote float64 shadows, rules.khr_coopmat.f64_shadow_wanted); integer results
are combined with C, wrapped or saturated.
"""
from __future__ import annotations

import math

from llvmlite import ir

from ..runtime import jit
from ..kernels.codes import C_F32, C_F64, C_I64, DENSE, NONE, STRIPED, TABLE

PANEL_BYTES = 1 << 16    # the most B a MulAdd packs into panels on its stack

_ELEM = {"f32": ir.FloatType(), "f64": ir.DoubleType(), "i8": ir.IntType(8), "u8": ir.IntType(8),
         "i16": ir.IntType(16), "u16": ir.IntType(16), "i32": ir.IntType(32), "u32": ir.IntType(32),
         "i64": ir.IntType(64), "u64": ir.IntType(64)}


def pair_wanted(n: int, ctype: int) -> bool:
    """Whether two MulAdds of n result columns summing in compute type ctype gain from running as
    a pair (see muladd_function): a row of one result fills at most one vector register, and a
    row of both fits the register block. An 8 x 8 x 8 float32 MulAdd on AVX2 holds 8 rows of one
    vector: a broadcast of an A element for every FMA (80 loads for 64 FMAs) and 8 accumulator
    chains; paired, 6 rows of two vectors, one broadcast for two FMAs."""
    vbits, nregs = jit.vector_registers()
    return n * (64 if ctype != C_F32 else 32) <= vbits and nregs // 8 >= 2


def muladd_function(name: str, spec: str, dtypes: tuple, in_place: bool = False,
                    pair: bool = False) -> tuple[str, dict]:
    """The LLVM IR text of the MulAdd function `name` for `spec` (kernels.coopmat.mm_spec), with
    A, B, C and R held as arrays of the dtype tags `dtypes`; and the declarations it needs
    ({name: text}, for the module to hold once). `in_place`: every call passes R's rows as C's
    (acc = MulAdd(a, b, acc)), placed alike: R is stored through C's pointer, so LLVM keeps one
    address per row where it kept two and spilled the stores' around the K loop (a hot
    128 x 128 x 32 float32 MulAdd 1.038x, median of 31 side-by-side rounds). `pair`: the
    function of a pair of such MulAdds sharing A (the module's docstring; pair_wanted), whose
    B, C and R are read and written where they lie (B converted as it is read)."""
    v = list(map(int, spec.split()))
    m, n, kk, ctype, fused = v[0:5]
    ops = [list(v[5 + 7 * x:12 + 7 * x]) for x in range(4)]
    for o in ops:
        if o[0] == STRIPED and o[1] > 1 and o[2] == o[1] * o[3]:
            # p rows fill a fragment row (a workgroup matrix over all W lanes): row i starts
            # i * cols on, as in a dense matrix, an offset LLVM folds into one pointer per
            # block, where i // p and i % p kept a pointer per row and spilled them around the
            # K loop
            o[1], o[2] = 1, o[3]
    combine = v[33:36] if len(v) > 33 else None
    i64 = ir.IntType(64)
    et = {C_F64: ir.DoubleType(), C_F32: ir.FloatType(), C_I64: i64}[ctype]
    is_int = ctype == C_I64
    bits = 64 if ctype != C_F32 else 32
    vbits, nregs = jit.vector_registers()
    VW = vbits // bits
    # accumulators for rows x vectors, plus a B row's vectors and one broadcast A element
    ACCS, VMAX = nregs * 3 // 4, nregs // 8
    mod = ir.Module()
    p = ir.PointerType()
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [p] * 6 + [i64, i64] + [p] * (3 if pair else 0)), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")      # inlined into a kernel it competes for registers with lane code
    entry = fn.append_basic_block("entry")
    builder = ir.IRBuilder(entry)

    def entry_alloca(t):
        """An alloca in the entry block (a fixed stack slot), wherever the builder is."""
        here = builder.block
        with builder.goto_block(entry):
            builder.position_at_start(entry)
            a = builder.alloca(t)
        builder.position_at_end(here)
        a.align = 64
        a.type = p                 # an opaque pointer, as the rest of the function uses
        return a
    ptrs = list(fn.args[:4])
    # the second member of a pair: the same A, its own B, C and R (placed as the first's)
    ptrs2 = [None] + list(fn.args[8:11]) if pair else None
    if in_place and ops[2][:4] == ops[3][:4]:
        ptrs[3] = ptrs[2]
        if pair:
            ptrs2[3] = ptrs2[2]
    if pair and (combine is not None or any(ops[x][0] == TABLE for x in (1, 2, 3))):
        raise ValueError("a MulAdd pair reads B and C and writes R where they lie")
    tabs, work, base, q = fn.args[4], fn.args[5], fn.args[6], fn.args[7]
    dts = [_ELEM[d] for d in dtypes]
    float_src = [d.startswith("f") for d in dtypes]
    shapes = [(m, kk), (kk, n), (m, n), (m, n)]

    def const(x):
        return ir.Constant(i64, x)

    offs = [base if o[0] in (STRIPED, TABLE) else builder.mul(q, const(rr * cc))
            for o, (rr, cc) in zip(ops, shapes)]

    def rowoff(x, i):
        kind, pp, s1, s0 = ops[x][:4]
        if pp == 1:
            o = builder.mul(i, const(s1))
        else:
            o = builder.add(builder.mul(builder.udiv(i, const(pp)), const(s1)),
                            builder.mul(builder.urem(i, const(pp)), const(s0)))
        return builder.add(offs[x], o)

    def vty(t, w):
        return ir.VectorType(t, w) if w > 1 else t

    def convert(val, x, w):
        src = dts[x]
        if src == et:
            return val
        to = vty(et, w)
        if float_src[x]:
            return builder.fpext(val, to) if _fwidth(src) < bits else builder.fptrunc(val, to)
        if is_int:
            if src.width == 64:
                return val
            return builder.sext(val, to) if ops[x][4] else builder.zext(val, to)
        return builder.sitofp(val, to) if ops[x][4] else builder.uitofp(val, to)

    def load(x, idx, w, member=0):
        src = dts[x]
        ptr = builder.gep((ptrs2 if member else ptrs)[x], [idx], source_etype=src)
        return convert(builder.load(ptr, typ=vty(src, w), align=_size(src)), x, w)

    def store_ct(ptr, idx, val, w):
        builder.store(val, builder.gep(ptr, [idx], source_etype=et), align=bits // 8)

    def store_r(idx, val, w, member=0):
        dst = dts[3]
        if dst != et:
            to = vty(dst, w)
            if not float_src[3] or is_int:
                raise TypeError(f"MulAdd cannot store {et} into {dst}")
            val = builder.fptrunc(val, to) if _fwidth(dst) < bits else builder.fpext(val, to)
        builder.store(val, builder.gep((ptrs2 if member else ptrs)[3], [idx], source_etype=dst), align=_size(dst))

    def tab_at(i):
        return builder.sext(builder.load(builder.gep(tabs, [i], source_etype=ir.IntType(32)),
                                         typ=ir.IntType(32), align=4), i64)

    def chunks(cols):
        return [(j, min(VW, cols - j)) for j in range(0, cols, VW)]

    def for_range(count, body, start=0, step=1):
        """for i in range(start, count, step): body(i) (count, start, step constants)."""
        pre = builder.block
        loop = fn.append_basic_block("loop")
        done = fn.append_basic_block("loop.end")
        builder.branch(loop)
        builder.position_at_end(loop)
        i = builder.phi(i64)
        i.add_incoming(const(start), pre)
        body(i)
        nxt = builder.add(i, const(step))
        i.add_incoming(nxt, builder.block)
        builder.cbranch(builder.icmp_signed("<", nxt, const(count)), loop, done)
        builder.position_at_end(done)

    def to_work(x):
        """Operand x becomes a DENSE matrix in the compute type in `work`."""
        rows, cols = shapes[x]
        kind, toff, woff = ops[x][0], ops[x][5], ops[x][6]
        buf = builder.gep(work, [const(woff)], source_etype=et)
        if kind == TABLE:
            def body(k):
                store_ct(buf, k, load(x, builder.add(base, tab_at(builder.add(k, const(toff)))), 1), 1)
            for_range(rows * cols, body)
        else:
            def body(i):
                src = rowoff(x, i)
                dst = builder.mul(i, const(cols))
                for j, w in chunks(cols):
                    store_ct(buf, builder.add(dst, const(j)), load(x, builder.add(src, const(j)), w), w)
            for_range(rows, body)
        ptrs[x] = buf
        dts[x] = et
        float_src[x] = not is_int
        offs[x] = const(0)
        ops[x][:4] = [DENSE, 1, cols, 0]

    # Columns: blocks of up to VMAX full vectors (an IR loop when there are several), then the
    # rest (full vectors and one shorter one). Whether B's column blocks are packed into panels
    # is decided on B as the K loop would read it (dense in the compute type after any copy).
    nfull = n // VW
    V = min(VMAX, max(1, nfull))
    nblk = nfull // V if nfull else 0
    packed = (nblk > 1 and nblk * kk * V * VW * (bits // 8) <= PANEL_BYTES
              and not _rows_share_l1(ops[1] if ops[1][0] != TABLE and dts[1] == et else [DENSE, 1, n],
                                     kk, et))
    for x in (0, 1):
        # B in another type but read through panels is converted as it is packed: one pass
        # over it where the copy to work and the packing made two (the workgroup GEMMs with
        # exact numerics, whose float32 B sums in float64: wg_arrays 1.066x, wg_tensor 1.031x,
        # medians of 11 alternating one-thread 1024^3 dispatches)
        if ops[x][0] == TABLE or (dts[x] != et and not (x == 1 and (packed or pair))):
            to_work(x)
    if ops[2][0] == TABLE:
        to_work(2)
    scatter_r = None
    if ops[3][0] == TABLE:
        # the product goes to work (in place over C's copy when C was a table too), then to
        # every position of R's layout
        scatter_r = (ops[3][1], ops[3][5], ptrs[3], dts[3])
        ptrs[3] = builder.gep(work, [const(ops[3][6])], source_etype=et)
        dts[3] = et
        offs[3] = const(0)
        ops[3][:4] = [DENSE, 1, n, 0]

    def bcast(x, w):
        if w == 1:
            return x
        t = vty(et, w)
        u = builder.insert_element(ir.Constant(t, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
        return builder.shuffle_vector(u, ir.Constant(t, ir.Undefined),
                                      ir.Constant(ir.VectorType(ir.IntType(32), w), [0] * w))

    def madd(x, y, acc, w):
        if is_int:
            return builder.add(acc, builder.mul(x, y))
        if fused:
            t = vty(et, w)
            fname = f"llvm.fma.{'v%d' % w if w > 1 else ''}{'f64' if bits == 64 else 'f32'}"
            f = mod.globals.get(fname) or ir.Function(mod, ir.FunctionType(t, [t, t, t]), fname)
            return builder.call(f, [x, y, acc])
        return builder.fadd(acc, builder.fmul(x, y))

    has_c = ops[2][0] != NONE and combine is None

    def finish(idx_c, idx_r, val, w):
        """An integer result: R = C + the exact sum, wrapped or saturated."""
        it = vty(i64, w)
        pv = val if is_int else builder.fptosi(val, it)
        src = dts[2]
        cv = builder.load(builder.gep(ptrs[2], [idx_c], source_etype=src), typ=vty(src, w), align=_size(src))
        if src.width < 64:
            cv = builder.sext(cv, it) if ops[2][4] else builder.zext(cv, it)
        d = builder.add(cv, pv)
        width, rsigned, saturate = combine
        if saturate:
            lo, hi = ((-(1 << (width - 1)), (1 << (width - 1)) - 1) if rsigned else (0, (1 << width) - 1))
            lo_v, hi_v = (ir.Constant(it, x) if w == 1 else ir.Constant(it, [x] * w) for x in (lo, hi))
            d = builder.select(builder.icmp_signed("<", d, lo_v), lo_v, d)
            d = builder.select(builder.icmp_signed(">", d, hi_v), hi_v, d)
        dst = dts[3]
        if dst.width < 64:
            d = builder.trunc(d, vty(dst, w))
        builder.store(d, builder.gep(ptrs[3], [idx_r], source_etype=dst), align=_size(dst))

    def block(i0, rows, j0, widths, panel=None, members=None):
        """rows x sum(widths) accumulators from C at (i0, j0), the K loop, stored to R; B's rows
        from `panel` (the packed panel of this column block) when given. `members`: which member
        of a pair each width is of (its columns then start at j0 again)."""
        members = members or [0] * len(widths)
        cols = [sum(w for w, mb in zip(widths[:u], members[:u]) if mb == members[u]) for u in range(len(widths))]
        accs = {}
        for r in range(rows):
            i = builder.add(i0, const(r))
            for u, w in enumerate(widths):
                if has_c:
                    accs[r, u] = load(2, builder.add(rowoff(2, i), builder.add(j0, const(cols[u]))), w, members[u])
                else:
                    accs[r, u] = ir.Constant(vty(et, w), None)
        pre = builder.block
        loop = fn.append_basic_block("mm.k")
        done = fn.append_basic_block("mm.k.end")
        builder.branch(loop)
        builder.position_at_end(loop)
        k = builder.phi(i64)
        k.add_incoming(const(0), pre)
        phis = {}
        for key, val in accs.items():
            phis[key] = builder.phi(val.type)
            phis[key].add_incoming(val, pre)
        if panel is not None:
            pb = builder.gep(panel, [builder.mul(k, const(sum(widths)))], source_etype=et)
            bv = [builder.load(builder.gep(pb, [const(cols[u])], source_etype=et), typ=vty(et, w),
                               align=bits // 8) for u, w in enumerate(widths)]
        else:
            rb = builder.add(rowoff(1, k), j0)
            bv = [load(1, builder.add(rb, const(cols[u])), w, members[u]) for u, w in enumerate(widths)]
        new = {}
        for r in range(rows):
            x = load(0, builder.add(rowoff(0, builder.add(i0, const(r))), k), 1)
            for u, w in enumerate(widths):
                new[r, u] = madd(bcast(x, w), bv[u], phis[r, u], w)
        k1 = builder.add(k, const(1))
        k.add_incoming(k1, builder.block)
        for key in phis:
            phis[key].add_incoming(new[key], builder.block)
        builder.cbranch(builder.icmp_signed("<", k1, const(kk)), loop, done)
        builder.position_at_end(done)
        for (r, u), val in new.items():
            i = builder.add(i0, const(r))
            j = builder.add(j0, const(cols[u]))
            if combine is not None:
                finish(builder.add(rowoff(2, i), j), builder.add(rowoff(3, i), j), val, widths[u])
            else:
                store_r(builder.add(rowoff(3, i), j), val, widths[u], members[u])

    def rows_loop(j0, widths, panel=None, members=None):
        # Blocks of R rows or one fewer, as many as R-row blocks would take: a short last block
        # (8 = 6 + 2 rows, 2 x 2 accumulators) waits on its FMAs' latency, where 4 + 4 keep
        # the FMA units busy (an 8 x 8 x 8 float64 MulAdd: plain_8 exact 1.044x, median of 41
        # alternating one-thread 512^3 dispatches, quartiles 1.034-1.048)
        R = max(1, min(m, ACCS // len(widths)))
        nb = -(-m // R)
        big = -(-m // nb)
        nbig = m - nb * (big - 1)
        start = 0
        for size, count in ((big, nbig), (big - 1, nb - nbig)):
            if count == 1:
                block(const(start), size, j0, widths, panel, members)
            elif count:
                for_range(start + count * size, lambda i0, size=size: block(i0, size, j0, widths, panel, members),
                          start=start, step=size)
            start += count * size

    if pair:
        if not pair_wanted(n, ctype):
            raise ValueError(f"a MulAdd pair of {n} columns does not fit the register blocks")
        rows_loop(const(0), [n, n], members=[0, 1])
    elif nblk == 1:
        rows_loop(const(0), [VW] * V)
    elif packed:
        # B's column blocks packed into contiguous panels first: a block reads its K rows of
        # V vectors from consecutive lines, where B's own rows (a power-of-two stride apart)
        # share a few L1 sets and evict each other between the blocks that reuse them (rows
        # that reach enough sets are read where they lie: the copy cost more than it saved)
        panels = entry_alloca(ir.ArrayType(et, nblk * kk * V * VW))
        width = V * VW

        def pack(jb):
            def row(k):
                src = builder.add(rowoff(1, k), builder.mul(jb, const(width)))
                dst = builder.gep(panels, [builder.mul(builder.add(builder.mul(jb, const(kk)), k), const(width))],
                                  source_etype=et)
                for u in range(V):
                    v = load(1, builder.add(src, const(u * VW)), VW)
                    builder.store(v, builder.gep(dst, [const(u * VW)], source_etype=et), align=bits // 8)
            for_range(kk, row)
        for_range(nblk, pack)

        def column_block(jb):
            j0 = builder.mul(jb, const(width))
            panel = builder.gep(panels, [builder.mul(jb, const(kk * width))], source_etype=et)
            rows_loop(j0, [VW] * V, panel)
        for_range(nblk, column_block)
    elif nblk > 1:
        for_range(nblk * V * VW, lambda j0: rows_loop(j0, [VW] * V), step=V * VW)
    rest = [VW] * (nfull - nblk * V) + ([n % VW] if n % VW else [])
    if rest and not pair:
        rows_loop(const(nblk * V * VW), rest)

    if scatter_r is not None:
        count, toff, rptr, rdt = scatter_r
        buf = ptrs[3]
        ptrs[3], dts[3], float_src[3] = rptr, rdt, dtypes[3].startswith("f")

        def body(x):
            pos = builder.add(base, tab_at(builder.add(x, const(toff))))
            val = builder.load(builder.gep(buf, [tab_at(builder.add(x, const(toff + count)))], source_etype=et),
                               typ=et, align=bits // 8)
            store_r(pos, val, 1)
        for_range(count, body)
    builder.ret_void()
    body, decls = [], {}
    for ln in str(mod).splitlines():
        if ln.startswith("declare"):
            decls[ln.split("@", 1)[1].split("(", 1)[0].strip('"')] = ln
        elif not ln.startswith(("; ModuleID", "target triple", "target datalayout")):
            body.append(ln)
    return "\n".join(body), decls


def _rows_share_l1(op, rows: int, et) -> bool:
    """Whether `rows` lines of a B operand, one per row (its row stride apart), fit in the L1
    sets that stride reaches with ways to spare, read where they lie: at most 2 of each set's 8
    ways (64 sets of 64-byte lines). A 64 x 64 x 32 MulAdd's B rows 256 bytes apart reach 16
    sets: read in place, 1.067x the packed run (hot MulAdd, median of 31 side-by-side rounds);
    a 128 x 128 x 32's, 512 bytes apart, reach 8: packed, 1.035x the unpacked."""
    kind, pp, s1 = op[:3]
    if kind not in (DENSE, STRIPED) or pp != 1:
        return False
    step = s1 * _size(et)
    if step % 64:
        return True
    sets = 64 // math.gcd(step // 64, 64)
    return rows * 4 <= sets * 8


def _fwidth(t) -> int:
    return 64 if isinstance(t, ir.DoubleType) else 32


def _size(t) -> int:
    if isinstance(t, ir.DoubleType):
        return 8
    if isinstance(t, ir.FloatType):
        return 4
    return t.width // 8
