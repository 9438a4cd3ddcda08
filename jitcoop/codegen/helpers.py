"""Small LLVM IR functions a generated module defines when its code uses them: exact float16 and
bfloat16 conversions, and the workgroup scheduler's scans over the lane states.

Each is `internal`: `alwaysinline` (the conversions), or `noinline` (the loops over the lanes,
called once per collective: inlined at each of a production kernel's hundreds of call sites, their
loops made LLVM's loop passes take a minute and more over the one large kernel function; kept out
of line, the module compiles in seconds), or left to LLVM (the bounds check). Conversions work on the IEEE bits, so results are exact whatever LLVM does with
floating-point selects: float16 goes through the processor's conversions (F16C) with NaNs rebuilt
bit for bit where a load must keep them; a float16 store writes a NaN as 0x7E00 with its sign, as
every float16 store in jitcoop does.

Lane states (i32, one per invocation of the workgroup): k >= 0 runs from resume point k (0: the
start), -1 has finished, -2 - c waits at collective c.
"""
from __future__ import annotations

HELPERS = {
    "round_f16": """define internal float @jc.round_f16(float %x) alwaysinline {
  %h = fptrunc float %x to half
  %f = fpext half %h to float
  %b = bitcast float %x to i32
  %a = and i32 %b, 2147483647
  %isnan = icmp ugt i32 %a, 2139095040
  %s = and i32 %b, -2147483648
  %n = or i32 %s, 2143289344
  %fb = bitcast float %f to i32
  %r = select i1 %isnan, i32 %n, i32 %fb
  %rf = bitcast i32 %r to float
  ret float %rf
}""",
    "round_bf16": """define internal float @jc.round_bf16(float %x) alwaysinline {
  %h = call i16 @jc.f32_to_bf16(float %x)
  %f = call float @jc.bf16_to_f32(i16 %h)
  ret float %f
}""",
    # A double rounded once to float16 or bfloat16 (as a float holding the value): rounded to odd
    # into a float32 first (truncated toward zero, the last bit set when inexact), then to
    # nearest even: with float32's 13 or 16 bits more than the target, the two roundings give
    # the one rounding of the double. NaN gives the quiet NaN with its sign, as round_f16 does.
    "to_odd_f32": """define internal float @jc.to_odd_f32(double %x) alwaysinline {
  %t = fptrunc double %x to float
  %back = fpext float %t to double
  %exact = fcmp oeq double %back, %x
  %ax = call double @llvm.fabs.f64(double %x)
  %ab = call double @llvm.fabs.f64(double %back)
  %over = fcmp ogt double %ab, %ax
  %tb = bitcast float %t to i32
  %tb1 = sub i32 %tb, 1
  %tz = select i1 %over, i32 %tb1, i32 %tb
  %odd = or i32 %tz, 1
  %isnan = fcmp uno double %x, %x
  %keep = or i1 %exact, %isnan
  %r = select i1 %keep, i32 %tb, i32 %odd
  %rf = bitcast i32 %r to float
  ret float %rf
}""",
    "round_f16_64": """define internal float @jc.round_f16_64(double %x) alwaysinline {
  %o = call float @jc.to_odd_f32(double %x)
  %r = call float @jc.round_f16(float %o)
  ret float %r
}""",
    "round_bf16_64": """define internal float @jc.round_bf16_64(double %x) alwaysinline {
  %o = call float @jc.to_odd_f32(double %x)
  %r = call float @jc.round_bf16(float %o)
  ret float %r
}""",
    # The scheduler's scans of the lane states (_state_scan below, added after this dict).
    # Instances (of inv lanes) waiting at `wait` whose done flag (one byte each) is not set.
    # e^x of a double for results rounded to float32 or float16 (GLSL Exp): within about an ulp of
    # float64, one block of IEEE operations, so a vector form (lanevec.vector_helper) gives the
    # same bits as the scalar one. x = n ln2 + r (Cody-Waite: ln2's high part has 21 trailing
    # zero bits, so n x it is exact), |r| <= ln2 / 2; e^r by Taylor to r^13 / 13! (the next term
    # is under 2^-57 of it), in Horner form with fused multiply-adds (half the dependent steps;
    # each exactly rounded, so every host gives the same bits); x 2^n as two powers of two (each
    # a normal double, for results down to the subnormals). x is clamped to [-746, 710] (0 and
    # inf beyond); NaN passes through.
    "exp_f64": """define internal double @jc.exp_f64(double %x) alwaysinline {
  %nan = fcmp uno double %x, 0.0
  %lo = fcmp olt double %x, -746.0
  %x1 = select i1 %lo, double -746.0, double %x
  %hi = fcmp ogt double %x1, 710.0
  %x2 = select i1 %hi, double 710.0, double %x1
  %xc = select i1 %nan, double 0.0, double %x2
  %t = fmul double %xc, 0x3FF71547652B82FE
  %n = call double @llvm.rint.f64(double %t)
  %a = fmul double %n, 0x3FE62E42FEE00000
  %r1 = fsub double %xc, %a
  %b = fmul double %n, 0x3DEA39EF35793C76
  %r = fsub double %r1, %b
  %p12 = call double @llvm.fma.f64(double 0x3DE6124613A86D09, double %r, double 0x3E21EED8EFF8D898)
  %p11 = call double @llvm.fma.f64(double %p12, double %r, double 0x3E5AE64567F544E4)
  %p10 = call double @llvm.fma.f64(double %p11, double %r, double 0x3E927E4FB7789F5C)
  %p9 = call double @llvm.fma.f64(double %p10, double %r, double 0x3EC71DE3A556C734)
  %p8 = call double @llvm.fma.f64(double %p9, double %r, double 0x3EFA01A01A01A01A)
  %p7 = call double @llvm.fma.f64(double %p8, double %r, double 0x3F2A01A01A01A01A)
  %p6 = call double @llvm.fma.f64(double %p7, double %r, double 0x3F56C16C16C16C17)
  %p5 = call double @llvm.fma.f64(double %p6, double %r, double 0x3F81111111111111)
  %p4 = call double @llvm.fma.f64(double %p5, double %r, double 0x3FA5555555555555)
  %p3 = call double @llvm.fma.f64(double %p4, double %r, double 0x3FC5555555555555)
  %p2 = call double @llvm.fma.f64(double %p3, double %r, double 0x3FE0000000000000)
  %p1 = call double @llvm.fma.f64(double %p2, double %r, double 0x3FF0000000000000)
  %p0 = call double @llvm.fma.f64(double %p1, double %r, double 0x3FF0000000000000)
  %ni = fptosi double %n to i64
  %h = ashr i64 %ni, 1
  %k = sub i64 %ni, %h
  %eh = add i64 %h, 1023
  %ek = add i64 %k, 1023
  %bh = shl i64 %eh, 52
  %bk = shl i64 %ek, 52
  %sh = bitcast i64 %bh to double
  %sk = bitcast i64 %bk to double
  %y1 = fmul double %p0, %sh
  %y = fmul double %y1, %sk
  %res = select i1 %nan, double %x, double %y
  ret double %res
}""",
    "waiting_left": """define internal i64 @jc.waiting_left(ptr %state, i64 %n, i32 %wait, i64 %inv, ptr %flags) {
entry:
  br label %loop
loop:
  %b = phi i64 [ 0, %entry ], [ %b1, %loop ]
  %c = phi i64 [ 0, %entry ], [ %c1, %loop ]
  %p = getelementptr i32, ptr %state, i64 %b
  %s = load i32, ptr %p
  %w = icmp eq i32 %s, %wait
  %q = udiv i64 %b, %inv
  %dp = getelementptr i8, ptr %flags, i64 %q
  %d = load i8, ptr %dp
  %nd = icmp eq i8 %d, 0
  %left = and i1 %w, %nd
  %l64 = zext i1 %left to i64
  %c1 = add i64 %c, %l64
  %b1 = add i64 %b, %inv
  %more = icmp ult i64 %b1, %n
  br i1 %more, label %loop, label %done
done:
  ret i64 %c1
}""",
    # Workgroup barrier: every lane still running must wait here; -1, or the first lane that
    # waits elsewhere (a barrier in non-uniform control flow). Lanes that have returned do not
    # hold a barrier up (as on NVIDIA hardware).
    "barrier": """define internal i64 @jc.barrier(ptr %state, i64 %n, i32 %wait, i32 %to) noinline {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %p = getelementptr i32, ptr %state, i64 %i
  %s = load i32, ptr %p
  %done = icmp eq i32 %s, -1
  %here = icmp eq i32 %s, %wait
  %ok = or i1 %done, %here
  br i1 %ok, label %next, label %bad
next:
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %fine
bad:
  ret i64 %i
fine:
  call void @jc.resume(ptr %state, i64 %n, i32 %wait, i32 %to)
  ret i64 -1
}""",
    # n int64 values of `v` from p on (an operand row of a collective filled with one value)
    "fill_i64": """define internal void @jc.fill_i64(ptr %p, i64 %n, i64 %v) noinline {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %q = getelementptr i64, ptr %p, i64 %i
  store i64 %v, ptr %q
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}""",
    # Whether [p, p + n) lies inside one row of the sorted, disjoint [start, end) range table
    # (every buffer, push constants, scratch memory of the dispatch): a binary search.
    "in_ranges": """define internal i1 @jc.in_ranges(ptr %tab, i64 %rows, i64 %p, i64 %n) {
entry:
  %hi0 = sub i64 %rows, 1
  br label %loop
loop:
  %lo = phi i64 [ 0, %entry ], [ %lo1, %step ]
  %hi = phi i64 [ %hi0, %entry ], [ %hi1, %step ]
  %go = icmp sle i64 %lo, %hi
  br i1 %go, label %step, label %found
step:
  %s = add i64 %lo, %hi
  %mid = ashr i64 %s, 1
  %i = shl i64 %mid, 1
  %ps = getelementptr i64, ptr %tab, i64 %i
  %start = load i64, ptr %ps
  %le = icmp sle i64 %start, %p
  %m1 = add i64 %mid, 1
  %m0 = sub i64 %mid, 1
  %lo1 = select i1 %le, i64 %m1, i64 %lo
  %hi1 = select i1 %le, i64 %hi, i64 %m0
  br label %loop
found:
  %neg = icmp slt i64 %hi, 0
  br i1 %neg, label %no, label %row
row:
  %j = shl i64 %hi, 1
  %ps2 = getelementptr i64, ptr %tab, i64 %j
  %start2 = load i64, ptr %ps2
  %pe = getelementptr i64, ptr %ps2, i64 1
  %end = load i64, ptr %pe
  %q = add i64 %p, %n
  %inside = icmp sle i64 %q, %end
  %after = icmp slt i64 %p, %end
  %ok = and i1 %inside, %after
  ret i1 %ok
no:
  ret i1 false
}""",
    # -1 if every scope instance (inv consecutive lanes) with a lane waiting at `wait` has all its
    # lanes waiting there; otherwise the first lane of such an instance that is not
    "check_scope": """define internal i64 @jc.check_scope(ptr %state, i64 %n, i32 %wait, i64 %inv) noinline {
entry:
  br label %inst
inst:
  %b = phi i64 [ 0, %entry ], [ %b1, %next ]
  %end = add i64 %b, %inv
  br label %scan
scan:
  %l = phi i64 [ %b, %inst ], [ %l1, %scan ]
  %some = phi i1 [ false, %inst ], [ %some1, %scan ]
  %all = phi i1 [ true, %inst ], [ %all1, %scan ]
  %p = getelementptr i32, ptr %state, i64 %l
  %s = load i32, ptr %p
  %w = icmp eq i32 %s, %wait
  %some1 = or i1 %some, %w
  %all1 = and i1 %all, %w
  %l1 = add i64 %l, 1
  %more = icmp ult i64 %l1, %end
  br i1 %more, label %scan, label %judge
judge:
  %partial = xor i1 %some1, %all1
  br i1 %partial, label %find, label %next
find:
  %f = phi i64 [ %b, %judge ], [ %f1, %find.next ]
  %pf = getelementptr i32, ptr %state, i64 %f
  %sf = load i32, ptr %pf
  %wf = icmp ne i32 %sf, %wait
  br i1 %wf, label %found, label %find.next
find.next:
  %f1 = add i64 %f, 1
  br label %find
found:
  ret i64 %f
next:
  %b1 = add i64 %b, %inv
  %more2 = icmp ult i64 %b1, %n
  br i1 %more2, label %inst, label %done
done:
  ret i64 -1
}""",
    # -1, or the first lane whose i64 operand differs from its instance's first lane (operands
    # of cooperative instructions must be dynamically uniform in the scope)
    "check_uniform": """define internal i64 @jc.check_uniform(ptr %state, i64 %n, i32 %wait, i64 %inv, ptr %vals) noinline {
entry:
  br label %inst
inst:
  %b = phi i64 [ 0, %entry ], [ %b1, %next ]
  %p0 = getelementptr i32, ptr %state, i64 %b
  %s0 = load i32, ptr %p0
  %here = icmp eq i32 %s0, %wait
  br i1 %here, label %look, label %next
look:
  %pv = getelementptr i64, ptr %vals, i64 %b
  %v = load i64, ptr %pv
  %end = add i64 %b, %inv
  br label %scan
scan:
  %l = phi i64 [ %b, %look ], [ %l1, %scan ]
  %d = phi i64 [ 0, %look ], [ %d1, %scan ]
  %pl = getelementptr i64, ptr %vals, i64 %l
  %x = load i64, ptr %pl
  %dx = xor i64 %x, %v
  %d1 = or i64 %d, %dx
  %l1 = add i64 %l, 1
  %more = icmp ult i64 %l1, %end
  br i1 %more, label %scan, label %judge
judge:
  %same = icmp eq i64 %d1, 0
  br i1 %same, label %next, label %find
find:
  %f = phi i64 [ %b, %judge ], [ %f1, %find ]
  %pf = getelementptr i64, ptr %vals, i64 %f
  %xf = load i64, ptr %pf
  %f1 = add i64 %f, 1
  %ne = icmp ne i64 %xf, %v
  br i1 %ne, label %found, label %find
found:
  ret i64 %f
next:
  %b1 = add i64 %b, %inv
  %more2 = icmp ult i64 %b1, %n
  br i1 %more2, label %inst, label %done
done:
  ret i64 -1
}""",
    # Lanes waiting at `wait` (profile counters)
    "waiting": """define internal i64 @jc.waiting(ptr %state, i64 %n, i32 %wait) noinline {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %c = phi i64 [ 0, %entry ], [ %c1, %loop ]
  %p = getelementptr i32, ptr %state, i64 %i
  %s = load i32, ptr %p
  %w = icmp eq i32 %s, %wait
  %x = zext i1 %w to i64
  %c1 = add i64 %c, %x
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret i64 %c1
}""",
}


def _element_types(n: int | None):
    """The types, constants and name suffix of a conversion: on scalars, or on vectors of n of
    them (the same instructions, a vector of elements converted at once)."""
    ty = (lambda t: t) if n is None else (lambda t: f"<{n} x {t}>")
    const = (lambda t, k: str(k)) if n is None else (lambda t, k: f"splat ({t} {k})")
    return ty, const, f".v{n}" if n else ""


def _f16_to_f32(n: int | None = None) -> str:
    """float16 bits -> float32, NaN payloads kept (fpext quiets a signalling NaN)."""
    T, K, v = _element_types(n)
    return f"""define internal {T('float')} @jc.f16_to_f32{v}({T('i16')} %h) alwaysinline {{
  %hh = bitcast {T('i16')} %h to {T('half')}
  %f = fpext {T('half')} %hh to {T('float')}
  %hx = zext {T('i16')} %h to {T('i32')}
  %a = and {T('i32')} %hx, {K('i32', 32767)}
  %isnan = icmp ugt {T('i32')} %a, {K('i32', 31744)}
  %s = and {T('i32')} %hx, {K('i32', 32768)}
  %s1 = shl {T('i32')} %s, {K('i32', 16)}
  %m = and {T('i32')} %hx, {K('i32', 1023)}
  %m1 = shl {T('i32')} %m, {K('i32', 13)}
  %n0 = or {T('i32')} %s1, {K('i32', 2139095040)}
  %n = or {T('i32')} %n0, %m1
  %fb = bitcast {T('float')} %f to {T('i32')}
  %r = select {T('i1')} %isnan, {T('i32')} %n, {T('i32')} %fb
  %rf = bitcast {T('i32')} %r to {T('float')}
  ret {T('float')} %rf
}}"""


def _f32_to_f16(n: int | None = None) -> str:
    """float32 -> float16 bits, round to nearest even; NaN -> 0x7E00 with the sign."""
    T, K, v = _element_types(n)
    return f"""define internal {T('i16')} @jc.f32_to_f16{v}({T('float')} %x) alwaysinline {{
  %h = fptrunc {T('float')} %x to {T('half')}
  %hb = bitcast {T('half')} %h to {T('i16')}
  %b = bitcast {T('float')} %x to {T('i32')}
  %a = and {T('i32')} %b, {K('i32', 2147483647)}
  %isnan = icmp ugt {T('i32')} %a, {K('i32', 2139095040)}
  %s = lshr {T('i32')} %b, {K('i32', 16)}
  %s1 = and {T('i32')} %s, {K('i32', 32768)}
  %n = or {T('i32')} %s1, {K('i32', 32256)}
  %n16 = trunc {T('i32')} %n to {T('i16')}
  %r = select {T('i1')} %isnan, {T('i16')} %n16, {T('i16')} %hb
  ret {T('i16')} %r
}}"""


def _f32_to_bf16(n: int | None = None) -> str:
    """bfloat16: the top half of a float32; round to nearest even, a NaN keeps its sign and top
    payload bits and is quieted (0x0040)."""
    T, K, v = _element_types(n)
    return f"""define internal {T('i16')} @jc.f32_to_bf16{v}({T('float')} %x) alwaysinline {{
  %b = bitcast {T('float')} %x to {T('i32')}
  %a = and {T('i32')} %b, {K('i32', 2147483647)}
  %isnan = icmp ugt {T('i32')} %a, {K('i32', 2139095040)}
  %q = lshr {T('i32')} %b, {K('i32', 16)}
  %qn = or {T('i32')} %q, {K('i32', 64)}
  %odd = and {T('i32')} %q, {K('i32', 1)}
  %r0 = add {T('i32')} %b, {K('i32', 32767)}
  %r1 = add {T('i32')} %r0, %odd
  %r2 = lshr {T('i32')} %r1, {K('i32', 16)}
  %r = select {T('i1')} %isnan, {T('i32')} %qn, {T('i32')} %r2
  %r16 = trunc {T('i32')} %r to {T('i16')}
  ret {T('i16')} %r16
}}"""


def _bf16_to_f32(n: int | None = None) -> str:
    T, K, v = _element_types(n)
    return f"""define internal {T('float')} @jc.bf16_to_f32{v}({T('i16')} %h) alwaysinline {{
  %x = zext {T('i16')} %h to {T('i32')}
  %b = shl {T('i32')} %x, {K('i32', 16)}
  %f = bitcast {T('i32')} %b to {T('float')}
  ret {T('float')} %f
}}"""


# The conversions between 16-bit floats' memory bits and the float32 registers they are held
# in, for one element and for CONVERT_WIDTH at once: a matrix kept in memory is moved in vectors
# of that many elements (jitcoop.codegen.memory), one conversion each instead of one per
# element, which is most of what LLVM has to compile in a kernel that moves such a matrix often.
CONVERT_WIDTH = 8
CONVERSIONS = {"f16_to_f32": _f16_to_f32, "f32_to_f16": _f32_to_f16, "f32_to_bf16": _f32_to_bf16,
               "bf16_to_f32": _bf16_to_f32}
for _name, _make in CONVERSIONS.items():
    HELPERS[_name] = _make()
    HELPERS[f"{_name}.v{CONVERT_WIDTH}"] = _make(CONVERT_WIDTH)

def _state_scan(sig: str, setup: str, step: str, acc=None, finish: str = "", consts=None) -> str:
    """A helper that walks the n lane states at %state, 8 at a time in explicit vector code, then
    the rest one at a time. `step` is the work on one piece: IR with {T} (<8 x i32> or i32),
    {B} (the matching i1 type), {cNAME} (the constant consts[NAME] of that type) and {p} (a
    prefix for its names: %v. or %s., which `setup` may define values under), reading the states
    in %{p}s; with an accumulator acc = (identity, reduce, fold), step leaves its piece's value in
    %{p}k, `reduce` sums the vector accumulator %c1 and fold(T, a, b) combines two values;
    `finish` turns the total in %total into the function's result."""
    def fill(T, p):
        c = (lambda x: "<" + ", ".join(f"i32 {x}" for _ in range(8)) + ">") if T != "i32" else (lambda x: str(x))
        named = {f"c{k}": c(v) for k, v in (consts or {}).items()}
        return step.format(T=T, B="<8 x i1>" if T != "i32" else "i1", p=p, **named)
    if acc is not None:
        ident, reduce, fold = acc
        vec_acc = f"  %c = phi <8 x i32> [ <{', '.join(f'i32 {ident}' for _ in range(8))}>, %entry ], [ %c1, %vloop ]"
        vec_fold = f"  %c1 = {fold('<8 x i32>', '%c', '%v.k')}"
        sc_acc = "  %d = phi i32 [ %cv, %vdone ], [ %d1, %sloop ]"
        sc_fold = f"  %d1 = {fold('i32', '%d', '%s.k')}"
        vred = f"""vred:
  %cr = {reduce}
  br label %vdone
vdone:
  %cv = phi i32 [ {ident}, %entry ], [ %cr, %vred ]"""
        tail_end = "  %total = phi i32 [ %cv, %vdone ], [ %d1, %sloop ]\n" + finish
    else:
        vec_acc = vec_fold = sc_acc = sc_fold = ""
        vred = "vred:\n  br label %vdone\nvdone:"
        tail_end = "  ret void"
    return f"""define internal {sig} noinline {{
entry:
{setup}
  %nv = and i64 %n, -8
  %anyv = icmp ne i64 %nv, 0
  br i1 %anyv, label %vloop, label %vdone
vloop:
  %i = phi i64 [ 0, %entry ], [ %i1, %vloop ]
{vec_acc}
  %v.p = getelementptr i32, ptr %state, i64 %i
  %v.s = load <8 x i32>, ptr %v.p, align 4
{fill("<8 x i32>", "%v.")}
{vec_fold}
  %i1 = add i64 %i, 8
  %more = icmp ult i64 %i1, %nv
  br i1 %more, label %vloop, label %vred
{vred}
  %tail = icmp ult i64 %nv, %n
  br i1 %tail, label %sloop, label %done
sloop:
  %j = phi i64 [ %nv, %vdone ], [ %j1, %sloop ]
{sc_acc}
  %s.p = getelementptr i32, ptr %state, i64 %j
  %s.s = load i32, ptr %s.p
{fill("i32", "%s.")}
{sc_fold}
  %j1 = add i64 %j, 1
  %smore = icmp ult i64 %j1, %n
  br i1 %smore, label %sloop, label %done
done:
{tail_end}
}}"""


# A diagnostic's record (emitter.warn_if: its site, workgroup, lane, four details and case),
# written the first time its rule is broken: out of line, since a production kernel has dozens
# of such sites and each would otherwise be eight address computations and stores
_RECORD = ("site", "wg", "lane", "d0", "d1", "d2", "d3", "case")
HELPERS["warn_record"] = (
    "define internal void @jc.warn_record(ptr %rec, " + ", ".join(f"i64 %{w}" for w in _RECORD)
    + ") noinline cold {\n"
    + "".join(f"  %p{k} = getelementptr i64, ptr %rec, i64 {k}\n  store i64 %{w}, ptr %p{k}\n"
              for k, w in enumerate(_RECORD))
    + "  ret void\n}")

_NONE = 1073741824       # larger than any collective index
# The earliest collective any lane waits at (-1: every lane has finished): a min reduction.
HELPERS["next"] = _state_scan(
    "i32 @jc.next(ptr %state, i64 %n)", "",
    """  {p}w = icmp sle {T} {p}s, {cm2}
  {p}k0 = sub {T} {cm2}, {p}s
  {p}k = select {B} {p}w, {T} {p}k0, {T} {cnone}""",
    acc=(_NONE, "call i32 @llvm.vector.reduce.smin.v8i32(<8 x i32> %c1)",
         lambda T, a, b: f"call {T} @llvm.smin.{'v8i32' if T != 'i32' else 'i32'}({T} {a}, {T} {b})"),
    finish=f"""  %none = icmp eq i32 %total, {_NONE}
  %r = select i1 %none, i32 -1, i32 %total
  ret i32 %r""", consts={"m2": -2, "none": _NONE})
# Whether every lane waits at the same collective (the workgroup is converged there).
HELPERS["converged"] = _state_scan(
    "i1 @jc.converged(ptr %state, i64 %n)",
    """  %s0 = load i32, ptr %state
  %s0a = insertelement <8 x i32> poison, i32 %s0, i64 0
  %v.s0 = shufflevector <8 x i32> %s0a, <8 x i32> poison, <8 x i32> zeroinitializer
  %s.s0 = add i32 %s0, 0""",
    "  {p}k = xor {T} {p}s, {p}s0",
    acc=(0, "call i32 @llvm.vector.reduce.or.v8i32(<8 x i32> %c1)", lambda T, a, b: f"or {T} {a}, {b}"),
    finish="""  %same = icmp eq i32 %total, 0
  %w = icmp sle i32 %s0, -2
  %r = and i1 %same, %w
  ret i1 %r""")
# Lanes waiting at `wait` continue at resume point `to`: every state rewritten (a blend, stored
# whole; volatile, so that LLVM does not make it a masked store of `to`, which is microcoded on
# AMD processors: 80 ns for 128 lanes).
HELPERS["resume"] = _state_scan(
    "void @jc.resume(ptr %state, i64 %n, i32 %wait, i32 %to)",
    """  %wa = insertelement <8 x i32> poison, i32 %wait, i64 0
  %v.wait = shufflevector <8 x i32> %wa, <8 x i32> poison, <8 x i32> zeroinitializer
  %ta = insertelement <8 x i32> poison, i32 %to, i64 0
  %v.to = shufflevector <8 x i32> %ta, <8 x i32> poison, <8 x i32> zeroinitializer
  %s.wait = add i32 %wait, 0
  %s.to = add i32 %to, 0""",
    """  {p}w = icmp eq {T} {p}s, {p}wait
  {p}v = select {B} {p}w, {T} {p}to, {T} {p}s
  store volatile {T} {p}v, ptr {p}p, align 4""")

# Intrinsics a helper calls (declared once per module, with every other declaration).
INTRINSICS = {
    "next": {"@llvm.smin.v8i32": "declare <8 x i32> @llvm.smin.v8i32(<8 x i32>, <8 x i32>)",
             "@llvm.smin.i32": "declare i32 @llvm.smin.i32(i32, i32)",
             "@llvm.vector.reduce.smin.v8i32": "declare i32 @llvm.vector.reduce.smin.v8i32(<8 x i32>)"},
    "converged": {"@llvm.vector.reduce.or.v8i32": "declare i32 @llvm.vector.reduce.or.v8i32(<8 x i32>)"},
    "to_odd_f32": {"@llvm.fabs.f64": "declare double @llvm.fabs.f64(double)"},
    "exp_f64": {"@llvm.rint.f64": "declare double @llvm.rint.f64(double)",
                "@llvm.fma.f64": "declare double @llvm.fma.f64(double, double, double)"},
}
DEPENDS = {"round_f16_64": ("to_odd_f32", "round_f16"), "round_bf16_64": ("to_odd_f32", "round_bf16"),
           "round_bf16": ("f32_to_bf16", "bf16_to_f32"), "barrier": ("resume",)}
