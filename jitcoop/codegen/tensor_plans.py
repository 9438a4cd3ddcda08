"""The affine plan of a tensor load or store, as generated code (OpCooperativeMatrixLoadTensorNV,
OpCooperativeMatrixStoreTensorNV).

Before generated code moves an instance of a tensor access a line at a time, the kernel library's
`tensor.plan_lines` decides whether it may: every element in bounds, nothing clipped, blocked or
clamped, the lines contiguous. In a GEMM's tile that decision is the library's first branch, an
affine one: with block size 1 in both dimensions, no clip and every coordinate inside the tensor,
element (r, c) is at r0 + c0 + r x rstep + c x cstep. A subgroup GEMM decides that for every
16 x 16 operand it loads, and through the library (a call of some seventy arguments, numba's
array structs among them, and the general code behind it) the decision took as long as moving the
tile (a coopmat2 GEMM at subgroup scope spent 13% of its time in plan_lines, as much as in the
movers).

The function here is that first branch, specialized on the call site's constants (the sizes, the
row's layout dimension, the element size): it answers LINES_ROWS or LINES_COLUMNS with the lines'
first elements written, exactly as plan_lines's affine branch would, or -1 where it is not sure
(misaligned, clipped, blocked, a coordinate outside the tensor, an out-of-bounds line, strides
too large to rule out 64-bit overflow, lines that are not contiguous), and then the library
decides as before. It never answers LINES_NONE: every refusal and every error report stays the
library's. Two of its tests go past plan_lines's and only ever hand a case over: strides from
2^31 up (no sum of the plan can then wrap 64 bits), and the last element's index above 2^32,
which plan_lines tests too (with the lines in bounds it needs a buffer of 16 GiB or more).
tests/test_coopmat2_tensor.py (test_affine_plan_edges) walks each edge against the reference.

    i64 @name(ptr %lay, ptr %view, i64 %base, i64 %p, i64 %lo, i64 %hi, ptr %ranges, i64 %nranges,
              ptr %lines)

%lay and %view are the operands' leaves, int64 [leaves, W] (the instance's first lane's column,
`base`, is read); %p the pointer, [%lo, %hi) the object (or %ranges where it is unknown).
"""
from __future__ import annotations

from ..kernels import codes as K
from .matrix_loads import object_check

_BIG = 1 << 40          # plan_lines's "no clip" size
_I32 = 0x80000000


def affine_plan(em, D: int, rows: int, cols: int, vt, esize: int, store: bool, columns: bool) -> str | None:
    """The plan function of a rows x cols access to a D-dimensional tensor layout through view
    type vt (None: no view), elements of esize bytes, or None where plan_lines's affine branch
    cannot apply (other than 2 dimensions, a view with dimensions). `columns`: column movers
    exist (plan_lines's `columns` argument)."""
    if D != 2:
        return None
    if vt is None:
        V, rdim = 0, 0
    elif vt.dims == 2 and not vt.has_dims:
        V, rdim = 2, vt.perm[0]
    else:
        return None
    cdim = 1 - rdim
    W = em.W
    name = (f"@jc.tplan.{rows}x{cols}.w{W}.v{V}.r{rdim}.e{esize}"
            f"{'.st' if store else ''}{'.c' if columns else ''}")
    if name in em.decls:
        return name
    em.helper("in_ranges")

    def leaf(field, d):
        return (field * D + d) * W

    body = []
    ok = []

    def emit(line):
        body.append("  " + line)

    def need(cond):
        ok.append(cond)

    def lay(nm, field, d):
        emit(f"%{nm}.a = add i64 %base, {leaf(field, d)}")
        emit(f"%{nm}.p = getelementptr i64, ptr %lay, i64 %{nm}.a")
        emit(f"%{nm} = load i64, ptr %{nm}.p")

    def view(nm, k):
        emit(f"%{nm}.a = add i64 %base, {k * W}")
        emit(f"%{nm}.p = getelementptr i64, ptr %view, i64 %{nm}.a")
        emit(f"%{nm} = load i64, ptr %{nm}.p")

    # 16-byte alignment, relative to the object where it is known
    emit("%bounded = icmp ugt i64 %hi, %lo")
    emit("%rel = sub i64 %p, %lo")
    emit("%ab = select i1 %bounded, i64 %rel, i64 %p")
    emit("%am = and i64 %ab, 15")
    emit("%aligned = icmp eq i64 %am, 0")
    need("%aligned")
    # the frame (tensor._frame): the row selects dimension rdim, the columns walk cdim
    lay("span0", K.SPAN, 0)
    lay("span1", K.SPAN, 1)
    emit("%s0nz = icmp ne i64 %span0, 0")
    emit("%s1nz = icmp ne i64 %span1, 0")
    need("%s0nz")
    need("%s1nz")
    if V == 0:
        emit(f"%fwidth = icmp eq i64 %span1, {cols}")
        need("%fwidth")
        for nm, v in (("ro", 0), ("rs", _BIG), ("co", 0), ("cs", _BIG)):
            emit(f"%{nm} = add i64 0, {v}")
    else:
        for nm, k in (("ro", 2 * V), ("rs", 2 * V + 1), ("co", 2 * V + 2), ("cs", 2 * V + 3)):
            view(nm, k)
        emit(f"%cs.lt = icmp slt i64 %cs, {cols}")
        emit(f"%cw = select i1 %cs.lt, i64 %cs, i64 {cols}")
        emit(f"%fwidth = icmp eq i64 %span{cdim}, %cw")
        need("%fwidth")
        # spans are zero-extended uint32: the product fits 64 bits unsigned
        emit("%sprod = mul i64 %span0, %span1")
        emit("%swrap = icmp ule i64 %sprod, 4294967296")
        need("%swrap")

    # tensor._affine for the rows (dimension rdim, span n = span[rdim]) and the columns (no span)
    def affine(tag, count, o, size, d, n):
        emit(f"%{tag}.o0 = icmp eq i64 %{o}, 0")
        need(f"%{tag}.o0")
        emit(f"%{tag}.sz = icmp sge i64 %{size}, {count}")
        need(f"%{tag}.sz")
        if n is not None:
            emit(f"%{tag}.n = icmp sle i64 {count}, %{n}")
            need(f"%{tag}.n")
        lay(f"{tag}.blk", K.BLOCK, d)
        emit(f"%{tag}.b1 = icmp eq i64 %{tag}.blk, 1")
        need(f"%{tag}.b1")
        lay(f"{tag}.off", K.OFFSET, d)
        lay(f"{tag}.dim", K.DIM, d)
        lay(f"{tag}.st", K.STRIDE, d)
        # the offset as int32 must be >= 0 (below 2^31 as the zero-extended leaf), which the
        # int32 bound on offset + count implies
        emit(f"%{tag}.end = add i64 %{tag}.off, {count}")
        emit(f"%{tag}.in = icmp sle i64 %{tag}.end, %{tag}.dim")
        need(f"%{tag}.in")
        emit(f"%{tag}.i32 = icmp sle i64 %{tag}.end, {_I32}")
        need(f"%{tag}.i32")
        # stricter than plan_lines: strides below 2^31 keep every sum below 2^63
        emit(f"%{tag}.sts = icmp ult i64 %{tag}.st, {_I32}")
        need(f"%{tag}.sts")
        emit(f"%{tag}.start = mul i64 %{tag}.off, %{tag}.st")

    affine("r", rows, "ro", "rs", rdim, f"span{rdim}")
    affine("c", cols, "co", "cs", cdim, None)
    emit("%first = add i64 %r.start, %c.start")
    emit(f"%rlast = mul i64 %r.st, {rows - 1}")
    emit(f"%clast = mul i64 %c.st, {cols - 1}")
    emit("%last0 = add i64 %first, %rlast")
    emit("%last = add i64 %last0, %clast")
    emit("%lastok = icmp ule i64 %last, 4294967295")
    need("%lastok")
    emit(f"%from = mul i64 %first, {esize}")
    emit("%start = add i64 %p, %from")
    emit("%count0 = sub i64 %last, %first")
    emit("%count = add i64 %count0, 1")
    emit(f"%len = mul i64 %count, {esize}")
    acc = ok[0]
    for i, c in enumerate(ok[1:]):
        emit(f"%ok{i} = and i1 {acc}, {c}")
        acc = f"%ok{i}"
    emit(f"br i1 {acc}, label %bounds, label %ask")
    text = [f"define internal i64 {name}(ptr %lay, ptr %view, i64 %base, i64 %p, i64 %lo, i64 %hi, "
            f"ptr %ranges, i64 %nranges, ptr %lines) {{", "entry:"] + body
    text.append(f"""bounds:
{object_check("%start", "%len", "bounds")}
  br i1 %inb, label %which, label %ask
which:
  %crow = icmp eq i64 %c.st, 1
  br i1 %crow, label %rows, label %notrows
rows:
{_lines_loop("rw", rows, "%r.st")}
  ret i64 {K.LINES_ROWS}
notrows:""")
    if columns:
        cond = "%rcol"
        extra = ""
        if store:
            extra = f"\n  %cgap = icmp sge i64 %c.st, {rows}\n  %rcol2 = and i1 %rcol, %cgap"
            cond = "%rcol2"
        text.append(f"""  %rcol = icmp eq i64 %r.st, 1{extra}
  br i1 {cond}, label %cols, label %ask
cols:
{_lines_loop("cl", cols, "%c.st")}
  ret i64 {K.LINES_COLUMNS}""")
    else:
        text.append("  br label %ask")
    text.append("""ask:
  ret i64 -1
}""")
    em.decls[name] = "\n".join(text)
    return name


def _lines_loop(tag: str, n: int, step: str) -> str:
    """lines[i] = %first + i x step for i < n, the loop starting in the current block."""
    return f"""  br label %{tag}
{tag}:
  %{tag}.i = phi i64 [ 0, %{'rows' if tag == 'rw' else 'cols'} ], [ %{tag}.i1, %{tag} ]
  %{tag}.off = mul i64 %{tag}.i, {step}
  %{tag}.v = add i64 %first, %{tag}.off
  %{tag}.q = getelementptr i64, ptr %lines, i64 %{tag}.i
  store i64 %{tag}.v, ptr %{tag}.q
  %{tag}.i1 = add i64 %{tag}.i, 1
  %{tag}.more = icmp ult i64 %{tag}.i1, {n}
  br i1 %{tag}.more, label %{tag}, label %{tag}.done
{tag}.done:"""
