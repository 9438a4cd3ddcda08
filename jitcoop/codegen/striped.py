"""Cooperative matrix loads into the striped layout as generated code (OpCooperativeMatrixLoadKHR).

The kernel library's load (jitcoop.kernels.coopmat.load) serves every layout and format, with the
sizes, the element format and the run length as run-time arguments: it is compiled once for all
kernels, so nothing about a call site is known to it. For the common case, a row-major load
into the striped layout (element k = r * cols + c in lane k % inv of fragment row k // inv) of a
format whose slots hold it bit for bit or as float32 from float16, the same work is emitted here
as a function specialized on the call site's constants: LLVM then unrolls the runs and turns
each into one vector load, conversion and store (in a KHR GEMM the loads took four times as long
through the library, whose inner loop divided by a run-time lane count and tested the format per
run).

Semantics are the library's: instances whose first lane waits at the collective load in order;
the first one whose access leaves its object (or whose Stride is negative) stops the load and
its first lane is returned, with the offset, span and stride in info[0..2]; -1 when all loaded.
"""
from __future__ import annotations

from ..kernels import codes as K

# memory format -> (memory element LLVM type, slot LLVM type) for the formats moved here
_BITS = {K.F32: ("float", "float"), K.F64: ("double", "double"),
         K.S8: ("i8", "i8"), K.U8: ("i8", "i8"), K.S16: ("i16", "i16"), K.U16: ("i16", "i16"),
         K.S32: ("i32", "i32"), K.U32: ("i32", "i32"), K.S64: ("i64", "i64"), K.U64: ("i64", "i64")}
_SIZE = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "float": 4, "double": 8}


def supported(fmt: int, slot: str, run: int) -> bool:
    """Whether a load of format fmt into slots of LLVM type `slot` with this run length is
    emitted here (else the library's general load serves)."""
    if run <= 0:
        return False
    if fmt == K.F16:
        return slot == "float"
    return fmt in _BITS and _BITS[fmt][1] == slot


def load_helper(em, rows: int, cols: int, inv: int, run: int, psize: int, fmt: int, slot: str) -> str:
    """The name of the load function for these constants, defined in the module once:
    i64 (ptr state, i32 wait, ptr frag, ptr addr, ptr stride, i64 lo, i64 hi, ptr ranges,
    i64 nranges, ptr info)."""
    W = em.W
    name = f"@jc.cmload.{rows}x{cols}.i{inv}.w{W}.r{run}.p{psize}.f{fmt}.{slot}"
    if name in em.decls:
        return name
    em.helper("in_ranges")
    mem = "half" if fmt == K.F16 else _BITS[fmt][0]
    esize = _SIZE[mem]
    ssize = _SIZE[slot]
    span_minor = cols * esize                       # row major: (rows - 1) * stride * psize + this
    vm, vs = f"<{run} x {mem}>", f"<{run} x {slot}>"
    ivm = f"<{run} x i16>"
    if fmt == K.F16:
        # fpext is exact for every float16 but a signalling NaN, which the processor quiets: NaN
        # lanes are rebuilt from their bits (sign, all-ones exponent, payload << 13).
        convert = f"""  %h = load {ivm}, ptr %src, align 1
  %hf = bitcast {ivm} %h to <{run} x half>
  %x = fpext <{run} x half> %hf to {vs}
  %mag = and {ivm} %h, {_splat(run, "i16", 0x7FFF)}
  %isnan = icmp ugt {ivm} %mag, {_splat(run, "i16", 0x7C00)}
  %h32 = zext {ivm} %h to <{run} x i32>
  %sign = and <{run} x i32> %h32, {_splat(run, "i32", 0x8000)}
  %sign16 = shl <{run} x i32> %sign, {_splat(run, "i32", 16)}
  %pay = and <{run} x i32> %h32, {_splat(run, "i32", 0x3FF)}
  %pay13 = shl <{run} x i32> %pay, {_splat(run, "i32", 13)}
  %nb0 = or <{run} x i32> %sign16, %pay13
  %nb = or <{run} x i32> %nb0, {_splat(run, "i32", 0x7F800000)}
  %nf = bitcast <{run} x i32> %nb to {vs}
  %v = select <{run} x i1> %isnan, {vs} %nf, {vs} %x"""
    else:
        convert = f"  %v = load {vm}, ptr %src, align 1"
    em.decls[name] = f"""define internal i64 {name}(ptr %state, i32 %wait, ptr %frag, ptr %addr, ptr %stride, i64 %lo, i64 %hi, ptr %ranges, i64 %nranges, ptr %info) noinline {{
entry:
  %bounded = icmp ugt i64 %hi, %lo
  br label %inst
inst:
  %base = phi i64 [ 0, %entry ], [ %base1, %inst.next ]
  %ps = getelementptr i32, ptr %state, i64 %base
  %st = load i32, ptr %ps
  %here = icmp eq i32 %st, %wait
  br i1 %here, label %check, label %inst.next
check:
  %pa = getelementptr i64, ptr %addr, i64 %base
  %p = load i64, ptr %pa
  %pst = getelementptr i64, ptr %stride, i64 %base
  %s = load i64, ptr %pst
  %neg = icmp slt i64 %s, 0
  %sp = select i1 %neg, i64 0, i64 %s
  %major = mul i64 %sp, {(rows - 1) * psize}
  %span = add i64 %major, {span_minor}
  %end = add i64 %p, %span
  %geq = icmp uge i64 %p, %lo
  %leq = icmp ule i64 %end, %hi
  %inobj = and i1 %geq, %leq
  br i1 %bounded, label %judge, label %ranged
ranged:
  %inr = call i1 @jc.in_ranges(ptr %ranges, i64 %nranges, i64 %p, i64 %span)
  br label %judge
judge:
  %ok0 = phi i1 [ %inobj, %check ], [ %inr, %ranged ]
  %notneg = xor i1 %neg, true
  %ok = and i1 %ok0, %notneg
  br i1 %ok, label %row, label %bad
bad:
  %off = sub i64 %p, %lo
  store i64 %off, ptr %info
  %i1p = getelementptr i64, ptr %info, i64 1
  store i64 %span, ptr %i1p
  %i2p = getelementptr i64, ptr %info, i64 2
  store i64 %s, ptr %i2p
  ret i64 %base
row:
  %r = phi i64 [ 0, %judge ], [ %r1, %row.next ]
  %rs = mul i64 %r, %s
  %rb = mul i64 %rs, {psize}
  %rowp = add i64 %p, %rb
  br label %run
run:
  %c0 = phi i64 [ 0, %row ], [ %c1, %run ]
  %rc = mul i64 %r, {cols}
  %k = add i64 %rc, %c0
  %e = udiv i64 %k, {inv}
  %lane = urem i64 %k, {inv}
  %cb = mul i64 %c0, {esize}
  %srca = add i64 %rowp, %cb
  %src = inttoptr i64 %srca to ptr
{convert}
  %ew = mul i64 %e, {W}
  %j0 = add i64 %ew, %base
  %j = add i64 %j0, %lane
  %dst = getelementptr {slot}, ptr %frag, i64 %j
  store {vs} %v, ptr %dst, align {ssize}
  %c1 = add i64 %c0, {run}
  %more = icmp ult i64 %c1, {cols}
  br i1 %more, label %run, label %row.next
row.next:
  %r1 = add i64 %r, 1
  %rmore = icmp ult i64 %r1, {rows}
  br i1 %rmore, label %row, label %inst.next
inst.next:
  %base1 = add i64 %base, {inv}
  %imore = icmp ult i64 %base1, {W}
  br i1 %imore, label %inst, label %done
done:
  ret i64 -1
}}"""
    return name


def _splat(n: int, t: str, v: int) -> str:
    return "<" + ", ".join(f"{t} {v}" for _ in range(n)) + ">"
