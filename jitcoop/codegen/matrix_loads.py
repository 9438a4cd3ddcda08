"""Cooperative matrix loads (and striped stores) as generated code (OpCooperativeMatrixLoadKHR,
OpCooperativeMatrixStoreKHR).

The kernel library's load (jitcoop.kernels.coopmat.load) serves every layout and format, with the
sizes, the element format and the layout as run-time arguments: it is compiled once for all
kernels, so nothing about a call site is known to it. For the formats whose slots hold them bit
for bit or as float32 from float16, the same work is emitted here as a function specialized on
the call site's constants, in two shapes:

- striped: a row-major load into the striped layout (element k = r * cols + c in lane k % inv of
  fragment row k // inv): LLVM unrolls the runs, each one vector load, conversion and store (in
  a KHR GEMM the loads took four times as long through the library, whose inner loop divided by
  a run-time lane count and tested the format per run);
- transposed: a column-major load into the striped layout: blocks of B x B elements, B memory
  lines (matrix columns) loaded as vectors, transposed in registers by log2(B) rounds of
  interleaves, stored as B vectors of fragment slots (a matrix row's run). About one
  instruction an element, where the table path below moved each element alone (six);
- table: any other layout (the nvidia profile's, column-major memory): the tile's lines are
  copied from memory into a dense tile in the slots' type (vector code again), then each
  fragment element is taken from the tile at the constant index the layout gives it, unrolled
  for tiles of up to 1024 elements (the library looked up the table and converted per element).

Semantics are the library's: instances whose first lane waits at the collective load in order;
the first one whose access leaves its object (or whose Stride is negative) stops the load and
its first lane is returned, with the offset, span and stride in info[0..2]; -1 when all loaded.
"""
from __future__ import annotations

import re
import zlib

import numpy as np

from ..kernels import codes as K
from .collectives import SIZE_OF

# memory format -> (memory element LLVM type, slot LLVM type) for the formats moved bit for bit
_BITS = {K.F32: ("float", "float"), K.F64: ("double", "double"),
         K.S8: ("i8", "i8"), K.U8: ("i8", "i8"), K.S16: ("i16", "i16"), K.U16: ("i16", "i16"),
         K.S32: ("i32", "i32"), K.U32: ("i32", "i32"), K.S64: ("i64", "i64"), K.U64: ("i64", "i64")}
UNROLL = 1024           # elements of a tile whose gather is emitted straight, not as a loop
TILE_BYTES = 1 << 18    # the largest dense tile the table path keeps on the stack (a workgroup
                        # matrix may have 2^22 elements: the library's load serves those)


def function_for(em, t, inv: int, run: int, psize: int, fmt: int, slot: str, col_major: bool,
                 store: bool, shadow: bool = False) -> tuple[str | None, bool]:
    """The name of the function that moves matrix type t between memory of format fmt and slots
    of LLVM type `slot` (run: codes.run_length), or None where the library's general load or
    store serves: formats the slots do not hold bit for bit or as float32 from float16, stores
    other than striped row-major ones, dense tiles too large for the stack. `shadow` asks a load
    into float slots for one that also writes each element as a float64 to a second block of
    the fragments' shape (a MulAdd with exact numerics reads it as it is: see
    rules.khr_coopmat.f64_shadow_wanted); the second value says whether the function does."""
    if not _supported(fmt, slot, store):
        return None, False
    shadow = shadow and not store and slot == "float"
    if run > 0:
        if store:
            return striped_store_helper(em, t.rows, t.cols, inv, run, psize, fmt, slot), False
        return striped_helper(em, t.rows, t.cols, inv, run, psize, fmt, slot, shadow), shadow
    if col_major:
        row_run = K.run_length(np.asarray(t.layout.table), t.rows, t.cols, False)
        B = transpose_block(slot)
        if row_run and t.rows % B == 0 and t.cols % B == 0 and row_run % B == 0:
            if store:
                return transposed_store_helper(em, t.rows, t.cols, inv, psize, fmt, slot, B), False
            return transposed_helper(em, t.rows, t.cols, inv, psize, fmt, slot, B, shadow), shadow
    if store:
        return None, False
    if not _tile_fits(t.rows, t.cols, slot):
        return None, False
    return table_helper(em, t.layout, t.rows, t.cols, inv, psize, fmt, slot, col_major), False


def transpose_block(slot: str) -> int:
    """The side of the square blocks a transposing move takes: a vector register of slots."""
    from ..runtime import jit
    return max(4, min(16, jit.vector_registers()[0] // (8 * SIZE_OF[slot])))


def transpose_rounds(B: int, vec: str, names: list[str], fresh) -> tuple[list[str], list[str]]:
    """IR that transposes B vectors of B elements (`names`, type `vec`): log2(B) butterfly rounds,
    round g (1, 2, .., B/2) pairing vectors i and i + g (bit g of i clear) into the interleaves
    of their units of g elements. Below the 16-byte lane size the interleaves stay inside each
    16-byte lane (unpcklps, unpcklpd: one instruction each on x86), the last rounds move whole
    lanes: 24 shuffles for 8 x 8 floats on AVX2, where interleaves across the whole register
    took two to three instructions each (one permute on AVX-512, which has them for two
    sources; in-lane ones are cheaper there too). Returns (lines, the B result names: result j
    holds element j of every input, in input order)."""
    slot = vec.split(" x ")[1].rstrip(">")
    lane = max(1, min(B, 16 // SIZE_OF[slot]))
    lines = []
    cur = list(names)
    # what each vector holds, (input, element) per position: gives the results' order
    held = [[(v, e) for e in range(B)] for v in range(B)]
    g = 1
    while g < B:
        lo, hi = _interleaves(B, lane, g)
        for i in range(B):
            if i & g:
                continue
            a, b = cur[i], cur[i | g]
            for k, m in ((i, lo), (i | g, hi)):
                cur[k] = fresh()
                mask = ", ".join(f"i32 {x}" for x in m)
                lines.append(f"  {cur[k]} = shufflevector {vec} {a}, {vec} {b}, <{B} x i32> <{mask}>")
            pair = held[i] + held[i | g]
            held[i], held[i | g] = [pair[x] for x in lo], [pair[x] for x in hi]
        g *= 2
    where = {h[0][1]: k for k, h in enumerate(held)}
    assert all(h == [(v, h[0][1]) for v in range(B)] for h in held) and len(where) == B
    return lines, [cur[where[j]] for j in range(B)]


def _interleaves(B: int, lane: int, g: int) -> tuple[list[int], list[int]]:
    """The shufflevector masks interleaving units of g elements of two B-element vectors: the
    low and the high halves of each group (a lane of `lane` elements, or the whole vector once
    g reaches a lane), units of the first vector before the second's."""
    group = lane if g < lane else B
    units = group // g
    lo, hi = [], []
    for base in range(0, B, group):
        for u in range(units // 2):
            for out, uu in ((lo, u), (hi, u + units // 2)):
                first = base + uu * g
                out += list(range(first, first + g)) + list(range(B + first, B + first + g))
    return lo, hi


def transposed_helper(em, rows: int, cols: int, inv: int, psize: int, fmt: int, slot: str, B: int,
                      shadow: bool = False) -> str:
    """The load function of a column-major load into the striped layout (see transpose_rounds):
    memory line c (matrix column c) at p + c x Stride x psize, element r of it r elements on."""
    name = f"@jc.cmload.c{rows}x{cols}.i{inv}.w{em.W}.p{psize}.f{fmt}.{slot}.b{B}{'.sh' if shadow else ''}"
    if name not in em.decls:
        em.decls[name] = _function(em, name, inv, cols, rows, psize, SIZE_OF[_mem_type(fmt)], "",
                                   _columns(em.W, rows, cols, inv, fmt, slot, B, stride_lines(psize), False,
                                            shadow), shadow=shadow)
    return name


def _supported(fmt: int, slot: str, store: bool = False) -> bool:
    """Whether generated code moves format fmt to (or, `store`, from) slots of type slot: the
    formats held bit for bit, float16 and bfloat16 in float slots both ways, the 8-bit floats
    (E4M3, E5M2) into float slots (their stores round: the library's)."""
    if fmt in (K.F16, K.BF16):
        return slot == "float"
    if fmt in (K.E4M3, K.E5M2):
        return slot == "float" and not store
    return fmt in _BITS and _BITS[fmt][1] == slot


def _chunk(run: int) -> int:
    """The vector width a run moves in: the largest divisor of the run up to 64 elements (a
    workgroup matrix's run can be a whole row of hundreds)."""
    return max(d for d in range(1, min(run, 64) + 1) if run % d == 0)


def _tile_fits(rows: int, cols: int, slot: str) -> bool:
    """Whether the table path's dense tile of rows x cols slots fits on the stack."""
    return rows * cols * SIZE_OF[slot] <= TILE_BYTES


def _mem_type(fmt: int) -> str:
    if fmt in (K.E4M3, K.E5M2):
        return "i8"
    return "half" if fmt == K.F16 else "i16" if fmt == K.BF16 else _BITS[fmt][0]


def _convert(fmt: int, n: int, slot: str, srcs: list, outs: list, here: str) -> tuple[str, str]:
    """IR that loads n elements of format fmt from each ptr of `srcs` into the <n x slot> value
    of the same place in `outs`, emitted in block `here`; returns the text and the block it ends
    in. float16 -> float32: fpext is exact for every
    float16 but a signalling NaN, which the processor quiets; when a NaN is among the loaded
    elements, the NaN lanes are rebuilt from their bits (sign, all-ones exponent, payload << 13)
    in a block of its own that ordinary data never enters. Several loads share one test (the
    largest magnitude of them all against infinity's): a transposed block's 8 lines took a
    test and a branch each."""
    vs = f"<{n} x {slot}>"
    if fmt == K.BF16:
        # the top half of a float32: every bit kept, NaN payloads included
        text = []
        for src, out in zip(srcs, outs):
            p = out[1:] + "."
            text.append(f"""  %{p}h = load <{n} x i16>, ptr {src}, align 1
  %{p}w = zext <{n} x i16> %{p}h to <{n} x i32>
  %{p}b = shl <{n} x i32> %{p}w, {_splat(n, "i32", 16)}
  {out} = bitcast <{n} x i32> %{p}b to {vs}""")
        return "\n".join(text), here
    if fmt == K.E4M3:
        return "\n".join(_e4m3(n, src, out) for src, out in zip(srcs, outs)), here
    if fmt not in (K.F16, K.E5M2):
        return "\n".join(f"  {out} = load <{n} x {_mem_type(fmt)}>, ptr {src}, align 1"
                         for src, out in zip(srcs, outs)), here
    iv, i32 = f"<{n} x i16>", f"<{n} x i32>"
    q = outs[0][1:] + "."
    text, mag = [], None
    for src, out in zip(srcs, outs):
        p = out[1:] + "."
        if fmt == K.E5M2:
            # E5M2 is the top byte of a float16: from here on the same (its NaNs included)
            text.append(f"""  %{p}b8 = load <{n} x i8>, ptr {src}, align 1
  %{p}b16 = zext <{n} x i8> %{p}b8 to {iv}
  %{p}h = shl {iv} %{p}b16, {_splat(n, "i16", 8)}""")
        else:
            text.append(f"  %{p}h = load {iv}, ptr {src}, align 1")
        text.append(f"""  %{p}hf = bitcast {iv} %{p}h to <{n} x half>
  %{p}x = fpext <{n} x half> %{p}hf to {vs}
  %{p}mag = and {iv} %{p}h, {_splat(n, "i16", 0x7FFF)}""")
        if mag is None:
            mag = f"%{p}mag"
        else:
            text.append(f"""  %{p}mgt = icmp ugt {iv} {mag}, %{p}mag
  %{p}mmax = select <{n} x i1> %{p}mgt, {iv} {mag}, {iv} %{p}mag""")
            mag = f"%{p}mmax"
    text.append(f"""  %{q}isnan = icmp ugt {iv} {mag}, {_splat(n, "i16", 0x7C00)}
  %{q}anyb = bitcast <{n} x i1> %{q}isnan to i{n}
  %{q}any = icmp ne i{n} %{q}anyb, 0
  br i1 %{q}any, label %{q}nan, label %{q}put
{q}nan:""")
    for out in outs:
        p = out[1:] + "."
        text.append(f"""  %{p}h32 = zext {iv} %{p}h to {i32}
  %{p}sign = and {i32} %{p}h32, {_splat(n, "i32", 0x8000)}
  %{p}sign16 = shl {i32} %{p}sign, {_splat(n, "i32", 16)}
  %{p}pay = and {i32} %{p}h32, {_splat(n, "i32", 0x3FF)}
  %{p}pay13 = shl {i32} %{p}pay, {_splat(n, "i32", 13)}
  %{p}nb0 = or {i32} %{p}sign16, %{p}pay13
  %{p}nb = or {i32} %{p}nb0, {_splat(n, "i32", 0x7F800000)}
  %{p}nf = bitcast {i32} %{p}nb to {vs}
  %{p}lnan = icmp ugt {iv} %{p}mag, {_splat(n, "i16", 0x7C00)}
  %{p}fixed = select <{n} x i1> %{p}lnan, {vs} %{p}nf, {vs} %{p}x""")
    text.append(f"""  br label %{q}put
{q}put:""")
    for out in outs:
        p = out[1:] + "."
        text.append(f"  {out} = phi {vs} [ %{p}x, %{here} ], [ %{p}fixed, %{q}nan ]")
    return "\n".join(text), f"{q}put"


def _e4m3(n: int, src: str, out: str) -> str:
    """IR loading n E4M3 bytes from src as the <n x float> out, exactly, as the library's
    e4m3_to_f32: normal codes by moving the exponent and mantissa bits into place (bias 7 ->
    127), subnormal ones (exponent 0) as the integer mantissa times 2^-9, both NaN codes
    (S.1111.111) as the quiet NaN with their sign."""
    p = out[1:] + "."
    i32 = f"<{n} x i32>"
    return f"""  %{p}q = load <{n} x i8>, ptr {src}, align 1
  %{p}w = zext <{n} x i8> %{p}q to {i32}
  %{p}s = and {i32} %{p}w, {_splat(n, "i32", 0x80)}
  %{p}sign = shl {i32} %{p}s, {_splat(n, "i32", 24)}
  %{p}a = and {i32} %{p}w, {_splat(n, "i32", 0x7F)}
  %{p}n0 = shl {i32} %{p}a, {_splat(n, "i32", 20)}
  %{p}nb = add {i32} %{p}n0, {_splat(n, "i32", 120 << 23)}
  %{p}af = uitofp {i32} %{p}a to <{n} x float>
  %{p}sf = fmul <{n} x float> %{p}af, {_splat(n, "float", "0x3F60000000000000")}
  %{p}sb = bitcast <{n} x float> %{p}sf to {i32}
  %{p}sub = icmp ult {i32} %{p}a, {_splat(n, "i32", 8)}
  %{p}nan = icmp eq {i32} %{p}a, {_splat(n, "i32", 0x7F)}
  %{p}m0 = select <{n} x i1> %{p}sub, {i32} %{p}sb, {i32} %{p}nb
  %{p}m1 = select <{n} x i1> %{p}nan, {i32} {_splat(n, "i32", 0x7FC00000)}, {i32} %{p}m0
  %{p}r = or {i32} %{p}m1, %{p}sign
  {out} = bitcast {i32} %{p}r to <{n} x float>"""


def _f16_nan(n: int, h: str, p: str) -> str:
    """IR setting {p}isnan to which lanes of the <n x i16> float16 bits h are NaNs."""
    return f"""  {p}mag = and <{n} x i16> {h}, {_splat(n, "i16", 0x7FFF)}
  {p}isnan = icmp ugt <{n} x i16> {p}mag, {_splat(n, "i16", 0x7C00)}"""


def stride_lines(psize: int):
    """Line i of a KHR load or store starts i x Stride elements of psize bytes after %p."""
    def line(i: str, out: str) -> str:
        return f"""  {out}.s = mul i64 {i}, %s
  {out}.b = mul i64 {out}.s, {psize}
  {out} = add i64 %p, {out}.b"""
    return line


def table_lines(esize: int):
    """Line i of a tensor load or store starts at element %lines[i] after %p (the plan's table)."""
    def line(i: str, out: str) -> str:
        return f"""  {out}.q = getelementptr i64, ptr %lines, i64 {i}
  {out}.e = load i64, ptr {out}.q
  {out}.b = mul i64 {out}.e, {esize}
  {out} = add i64 %p, {out}.b"""
    return line


def _striped_runs(W, rows, cols, inv, step, line, esize, move: str, last: str, start: str = "copy",
                  end: str = "inst.next") -> str:
    """The loops over one instance's rows and their runs in the striped layout, `step` elements at
    a time (a divisor of the run: the elements stay in one fragment row), around `move`,
    which finds the run's memory at %mem (a ptr) and the index of its first fragment slot at %j,
    and ends in block `last`; `line` gives the address of a row (stride_lines, table_lines).
    Entered from block `start`, going on to block `end`."""
    return f"""  br label %row
row:
  %r = phi i64 [ 0, %{start} ], [ %r1, %row.next ]
{line("%r", "%rowp")}
  br label %run
run:
  %c0 = phi i64 [ 0, %row ], [ %c1, %{last} ]
  %rc = mul i64 %r, {cols}
  %k = add i64 %rc, %c0
  %e = udiv i64 %k, {inv}
  %lane = urem i64 %k, {inv}
  %ew = mul i64 %e, {W}
  %j0 = add i64 %ew, %base
  %j = add i64 %j0, %lane
  %cb = mul i64 %c0, {esize}
  %mema = add i64 %rowp, %cb
  %mem = inttoptr i64 %mema to ptr
{move}
  %c1 = add i64 %c0, {step}
  %more = icmp ult i64 %c1, {cols}
  br i1 %more, label %run, label %row.next
row.next:
  %r1 = add i64 %r, 1
  %rmore = icmp ult i64 %r1, {rows}
  br i1 %rmore, label %row, label %{end}"""


def _rows_in(W, rows, cols, inv, run, fmt, slot, line, shadow=False) -> str:
    """The body that loads rows (at `line`) into the striped layout's fragments, a run at a time
    (and, `shadow`, as float64 into %shadow, slot for slot). float16 goes in two passes: the
    processor's conversion of every run, noting whether any held a NaN, and only then, where one
    did, the runs again as _convert mends NaNs (their payloads must survive): a branch on every
    run cost more than the conversion (side by side at 512^3 on one core, the 8 x 8 GEMM of
    benchmarks/shaders/corpus/plain.comp 1.085x as fast in two passes with float32 numerics,
    1.05x exact). The first pass notes NaNs in the i64 its function allocates as %nanacc."""
    esize, ssize = SIZE_OF[_mem_type(fmt)], SIZE_OF[slot]
    step = _chunk(run)
    conv, last = _convert(fmt, step, slot, ["%mem"], ["%v"], "run")
    store = f"""  %dst = getelementptr {slot}, ptr %frag, i64 %j
  store <{step} x {slot}> %v, ptr %dst, align {ssize}"""
    if shadow:
        store += "\n" + _shadow_store(step, "%v", "%j", "%sh")
    if fmt != K.F16 or slot != "float":
        return _striped_runs(W, rows, cols, inv, step, line, esize, conv + "\n" + store, last)
    iv = f"<{step} x i16>"
    fast = f"""  %h = load {iv}, ptr %mem, align 1
  %hf = bitcast {iv} %h to <{step} x half>
  %v = fpext <{step} x half> %hf to <{step} x float>
{_f16_nan(step, "%h", "%")}
  %nb = bitcast <{step} x i1> %isnan to i{step}
  %nany = icmp ne i{step} %nb, 0
  %nw = zext i1 %nany to i64
  %acc0 = load i64, ptr %nanacc
  %acc1 = or i64 %acc0, %nw
  store i64 %acc1, ptr %nanacc
{store}"""
    first = _local_names(_striped_runs(W, rows, cols, inv, step, line, esize, fast, "run", end="nan.check"),
                         "f.")
    second = _striped_runs(W, rows, cols, inv, step, line, esize, conv + "\n" + store, last, start="nan.mend")
    return f"""  store i64 0, ptr %nanacc
{first}
nan.check:
  %anyn = load i64, ptr %nanacc
  %nonan = icmp eq i64 %anyn, 0
  br i1 %nonan, label %inst.next, label %nan.mend
nan.mend:
{second}"""


def _local_names(text: str, prefix: str) -> str:
    """IR text with the values and blocks it defines renamed `prefix` + name (a second copy of
    generated loops in one function)."""
    names = set(re.findall(r"^\s*%([-\w.$]+) =", text, re.M)) | set(re.findall(r"^([-\w.$]+):", text, re.M))
    return re.sub(r"%([-\w.$]+)", lambda m: f"%{prefix}{m.group(1)}" if m.group(1) in names else m.group(0),
                  re.sub(r"^([-\w.$]+):", lambda m: f"{prefix}{m.group(1)}:" if m.group(1) in names else m.group(0),
                         text, flags=re.M))


def _prefetch(addr: str, ahead: int, p: str) -> str:
    """IR that prefetches (for reading, into L2) the memory `ahead` bytes past i64 address addr."""
    return f"""  {p}.a = add i64 {addr}, {ahead}
  {p}.p = inttoptr i64 {p}.a to ptr
  call void @llvm.prefetch.p0(ptr {p}.p, i32 0, i32 2, i32 1)"""


def _shadow_store(n: int, v: str, j: str, p: str) -> str:
    """IR that stores the <n x float> value v as float64 to %shadow from slot j (names prefixed p)."""
    return f"""  {p}.d = getelementptr double, ptr %shadow, i64 {j}
  {p}.w = fpext <{n} x float> {v} to <{n} x double>
  store <{n} x double> {p}.w, ptr {p}.d, align 8"""


def _bits_type(fmt: int) -> str:
    """The LLVM type _to_mem's result stores as (16-bit floats as their bits)."""
    return "i16" if fmt in (K.F16, K.BF16) else _mem_type(fmt)


def _to_mem(fmt: int, n: int, slot: str, v: str, p: str) -> tuple[str, str]:
    """IR that converts the <n x slot> value v to its memory form (names prefixed p): float32 ->
    float16 rounds to nearest even (fptrunc), a NaN becomes the quiet 0x7E00 with its sign, as
    the library's conversion writes it; float32 -> bfloat16 rounds to nearest even, a NaN keeps
    its sign and top payload bits, quieted (as helpers.f32_to_bf16 and the library write it).
    Returns (text, the value's name)."""
    vs = f"<{n} x {slot}>"
    if fmt == K.F16:
        iv = f"<{n} x i16>"
        return f"""  {p}h = fptrunc {vs} {v} to <{n} x half>
  {p}hb = bitcast <{n} x half> {p}h to {iv}
  {p}isnan = fcmp uno {vs} {v}, {v}
  {p}sign = and {iv} {p}hb, {_splat(n, "i16", 0x8000)}
  {p}qn = or {iv} {p}sign, {_splat(n, "i16", 0x7E00)}
  {p}out = select <{n} x i1> {p}isnan, {iv} {p}qn, {iv} {p}hb""", f"{p}out"
    if fmt == K.BF16:
        iv, i32 = f"<{n} x i16>", f"<{n} x i32>"
        return f"""  {p}b = bitcast {vs} {v} to {i32}
  {p}a = and {i32} {p}b, {_splat(n, "i32", 0x7FFFFFFF)}
  {p}isnan = icmp ugt {i32} {p}a, {_splat(n, "i32", 0x7F800000)}
  {p}q = lshr {i32} {p}b, {_splat(n, "i32", 16)}
  {p}qn = or {i32} {p}q, {_splat(n, "i32", 64)}
  {p}odd = and {i32} {p}q, {_splat(n, "i32", 1)}
  {p}r0 = add {i32} {p}b, {_splat(n, "i32", 0x7FFF)}
  {p}r1 = add {i32} {p}r0, {p}odd
  {p}r2 = lshr {i32} {p}r1, {_splat(n, "i32", 16)}
  {p}r = select <{n} x i1> {p}isnan, {i32} {p}qn, {i32} {p}r2
  {p}out = trunc {i32} {p}r to {iv}""", f"{p}out"
    return "", v


def _rows_out(W, rows, cols, inv, run, fmt, slot, line) -> str:
    """The body that stores the striped layout's fragments to rows (at `line`): rows in order and
    runs in order within a row, as the library writes them (_to_mem's conversions)."""
    esize, ssize = SIZE_OF[_mem_type(fmt)], SIZE_OF[slot]
    step = _chunk(run)
    conv, m = _to_mem(fmt, step, slot, "%v", "%cv.")
    move = f"""  %fp = getelementptr {slot}, ptr %frag, i64 %j
  %v = load <{step} x {slot}>, ptr %fp, align {ssize}
{conv}
  store <{step} x {_bits_type(fmt)}> {m}, ptr %mem, align 1"""
    return _striped_runs(W, rows, cols, inv, step, line, esize, move, "run")


def _columns(W, rows, cols, inv, fmt, slot, B, line, store: bool, shadow: bool = False, ahead: int = 0) -> str:
    """The body that moves the striped layout's fragments from (or, `store`, to) columns: memory
    lines at `line` (non-overlapping, for a store), B x B blocks through a register transpose.
    Block (r0, c0): B column pieces of B elements, and B row pieces of B slots (consecutive:
    B divides the run), transposed one into the other."""
    esize, ssize = SIZE_OF[_mem_type(fmt)], SIZE_OF[slot]
    vec = f"<{B} x {slot}>"
    body = [f"""  br label %cb
cb:
  %c0 = phi i64 [ 0, %copy ], [ %c1, %rb.end ]
  br label %rb
rb:
  %r0 = phi i64 [ 0, %cb ], [ %r1, %blk ]
  %r0b = mul i64 %r0, {esize}"""]
    last = "rb"

    def column(i):          # the address of column c0 + i at row r0
        return f"""  %l{i}.c = add i64 %c0, {i}
{line(f"%l{i}.c", f"%l{i}.a0")}
  %l{i}.a = add i64 %l{i}.a0, %r0b
  %l{i}.ptr = inttoptr i64 %l{i}.a to ptr"""

    def row(j):             # the slot of row r0 + j at column c0
        return f"""  %s{j}.r = add i64 %r0, {j}
  %s{j}.rc = mul i64 %s{j}.r, {cols}
  %s{j}.k = add i64 %s{j}.rc, %c0
  %s{j}.e = udiv i64 %s{j}.k, {inv}
  %s{j}.l = urem i64 %s{j}.k, {inv}
  %s{j}.ew = mul i64 %s{j}.e, {W}
  %s{j}.j0 = add i64 %s{j}.ew, %base
  %s{j}.j = add i64 %s{j}.j0, %s{j}.l
  %s{j}.d = getelementptr {slot}, ptr %frag, i64 %s{j}.j"""
    if store:
        pieces = [f"%s{i}.v" for i in range(B)]
        body += [row(i) + f"\n  %s{i}.v = load {vec}, ptr %s{i}.d, align {ssize}" for i in range(B)]
    else:
        pieces = [f"%l{i}.v" for i in range(B)]
        for i in range(B):
            pf = "\n" + _prefetch(f"%l{i}.a", ahead * esize, f"%l{i}.pf") if ahead else ""
            body.append(column(i) + pf)
        conv, last = _convert(fmt, B, slot, [f"%l{i}.ptr" for i in range(B)], pieces, last)
        body.append(conv)
    n = [0]

    def fresh():
        n[0] += 1
        return f"%tr{n[0]}"
    tr, moved = transpose_rounds(B, vec, pieces, fresh)
    body += tr
    for j in range(B):
        if store:
            conv, m = _to_mem(fmt, B, slot, moved[j], f"%l{j}.m.")
            body += [column(j), conv, f"  store <{B} x {_bits_type(fmt)}> {m}, ptr %l{j}.ptr, align 1"]
        else:
            body += [row(j), f"  store {vec} {moved[j]}, ptr %s{j}.d, align {ssize}"]
            if shadow:
                body.append(_shadow_store(B, moved[j], f"%s{j}.j", f"%s{j}.sh"))
    body.append(f"""  br label %blk
blk:
  %r1 = add i64 %r0, {B}
  %rmore = icmp ult i64 %r1, {rows}
  br i1 %rmore, label %rb, label %rb.end
rb.end:
  %c1 = add i64 %c0, {B}
  %cmore = icmp ult i64 %c1, {cols}
  br i1 %cmore, label %cb, label %inst.next""")
    return "\n".join(body)


def transposed_store_helper(em, rows: int, cols: int, inv: int, psize: int, fmt: int, slot: str,
                            B: int) -> str:
    """The store function of a column-major store from the striped layout: the inverse of
    transposed_helper. Where columns overlap (Stride below the column's length) the elements
    land in another order than the library's element loop wrote them: the spec leaves that
    order open (on a GPU those invocations race). A KHR GEMM storing C column-major spent 12% of
    its time at 512^3 in the library's store, element by element (a hold-out with every tile
    under an edge guard: 1.42-1.44x plain_16's time float32, 1.18-1.26x with this)."""
    name = f"@jc.cmstore.c{rows}x{cols}.i{inv}.w{em.W}.p{psize}.f{fmt}.{slot}.b{B}"
    if name not in em.decls:
        em.decls[name] = _function(em, name, inv, cols, rows, psize, SIZE_OF[_mem_type(fmt)], "",
                                   _columns(em.W, rows, cols, inv, fmt, slot, B, stride_lines(psize), True),
                                   store=True)
    return name


def striped_helper(em, rows: int, cols: int, inv: int, run: int, psize: int, fmt: int, slot: str,
                   shadow: bool = False) -> str:
    """The load function of a row-major load into the striped layout (run: codes.run_length)."""
    name = f"@jc.cmload.s{rows}x{cols}.i{inv}.w{em.W}.r{run}.p{psize}.f{fmt}.{slot}{'.sh' if shadow else ''}"
    if name not in em.decls:
        em.decls[name] = _function(em, name, inv, rows, cols, psize, SIZE_OF[_mem_type(fmt)],
                                   "  %nanacc = alloca i64",
                                   _rows_in(em.W, rows, cols, inv, run, fmt, slot, stride_lines(psize), shadow),
                                   shadow=shadow)
    return name


def striped_store_helper(em, rows: int, cols: int, inv: int, run: int, psize: int, fmt: int,
                         slot: str) -> str:
    """The store function of a row-major store from the striped layout (OpCooperativeMatrixStoreKHR):
    the inverse of striped_helper."""
    name = f"@jc.cmstore.s{rows}x{cols}.i{inv}.w{em.W}.r{run}.p{psize}.f{fmt}.{slot}"
    if name not in em.decls:
        em.decls[name] = _function(em, name, inv, rows, cols, psize, SIZE_OF[_mem_type(fmt)], "",
                                   _rows_out(em.W, rows, cols, inv, run, fmt, slot, stride_lines(psize)),
                                   store=True)
    return name


def table_helper(em, layout, rows: int, cols: int, inv: int, psize: int, fmt: int, slot: str,
                 col_major: bool) -> str:
    """The load function of a load into any layout: lines into a dense tile, then the gather."""
    W = em.W
    tab = np.asarray(layout.table)
    lines, width = (cols, rows) if col_major else (rows, cols)
    # tile index of each fragment element: the tile holds memory's lines one after another
    idx = tab if not col_major else (tab % cols) * rows + tab // cols
    key = zlib.crc32(idx.astype(np.int32).tobytes())
    name = f"@jc.cmload.t{rows}x{cols}.{int(col_major)}.i{inv}.w{W}.p{psize}.f{fmt}.{slot}.{key:x}"
    if name in em.decls:
        return name
    esize, ssize = SIZE_OF[_mem_type(fmt)], SIZE_OF[slot]
    n = rows * cols
    length = tab.shape[1]
    alloca = f"  %tile = alloca [{n} x {slot}], align 64"
    step = _chunk(width)
    conv, last = _convert(fmt, step, slot, ["%src"], ["%v"], "piece")
    copy = f"""  br label %line
line:
  %r = phi i64 [ 0, %copy ], [ %r1, %line.next ]
  %rs = mul i64 %r, %s
  %rb = mul i64 %rs, {psize}
  %linea = add i64 %p, %rb
  %to = mul i64 %r, {width}
  br label %piece
piece:
  %c0 = phi i64 [ 0, %line ], [ %c1, %{last} ]
  %cb = mul i64 %c0, {esize}
  %srca = add i64 %linea, %cb
  %src = inttoptr i64 %srca to ptr
{conv}
  %toc = add i64 %to, %c0
  %dst = getelementptr {slot}, ptr %tile, i64 %toc
  store <{step} x {slot}> %v, ptr %dst, align {ssize}
  %c1 = add i64 %c0, {step}
  %cmore = icmp ult i64 %c1, {width}
  br i1 %cmore, label %piece, label %line.next
line.next:
  %r1 = add i64 %r, 1
  %rmore = icmp ult i64 %r1, {lines}
  br i1 %rmore, label %line, label %gather
gather:"""
    if tab.size <= UNROLL:
        out = []
        for lane in range(inv):
            for e in range(length):
                q = f"%g{lane}.{e}"
                out.append(f"  {q}.s = getelementptr {slot}, ptr %tile, i64 {int(idx[lane, e])}")
                out.append(f"  {q} = load {slot}, ptr {q}.s, align {ssize}")
                out.append(f"  {q}.j = add i64 %base, {e * W + lane}")
                out.append(f"  {q}.d = getelementptr {slot}, ptr %frag, i64 {q}.j")
                out.append(f"  store {slot} {q}, ptr {q}.d, align {ssize}")
        gather = "\n".join(out) + "\n  br label %inst.next"
        table_global = ""
    else:
        gname = name.replace("@jc.cmload.", "@jc.cmidx.")
        flat = idx.astype(np.int32).reshape(-1)
        table_global = (f"{gname} = internal unnamed_addr constant [{flat.size} x i32] ["
                        + ", ".join(f"i32 {int(v)}" for v in flat) + "]\n")
        gather = f"""  br label %g
g:
  %gi = phi i64 [ 0, %gather ], [ %gi1, %g ]
  %gl = udiv i64 %gi, {length}
  %ge = urem i64 %gi, {length}
  %gp = getelementptr i32, ptr {gname}, i64 %gi
  %gx32 = load i32, ptr %gp
  %gx = zext i32 %gx32 to i64
  %gs = getelementptr {slot}, ptr %tile, i64 %gx
  %gv = load {slot}, ptr %gs, align {ssize}
  %gew = mul i64 %ge, {W}
  %gj0 = add i64 %gew, %base
  %gj = add i64 %gj0, %gl
  %gd = getelementptr {slot}, ptr %frag, i64 %gj
  store {slot} %gv, ptr %gd, align {ssize}
  %gi1 = add i64 %gi, 1
  %gmore = icmp ult i64 %gi1, {tab.size}
  br i1 %gmore, label %g, label %inst.next"""
    em.decls[name] = table_global + _function(em, name, inv, lines, width, psize, esize, alloca,
                                              copy + "\n" + gather)
    return name


def tensor_mover(em, kind: str, rows: int, cols: int, inv: int, fmt: int, slot: str, ahead: int = 0) -> str | None:
    """The function that moves one instance of a tensor load or store whose plan is clean, its
    lines in bounds (kernels.tensor.plan_lines checked): `rows` loads rows whose first elements
    the plan's table gives, `columns` loads columns (a transposing view); `store` and
    `store_columns` store them. `ahead` (columns): prefetch each line that many elements past
    the tile, where a K loop reads next (rules.nv_coopmat2._line_moves says when).

        void @name(ptr %frag, i64 %base, i64 %p, ptr %lines)

    None where the slots do not hold the format, or the block transpose does not fit."""
    if not _supported(fmt, slot, kind.startswith("store")):
        return None
    W = em.W
    esize = SIZE_OF[_mem_type(fmt)]
    run = _run(rows, cols, inv)
    if not run:
        return None
    line = table_lines(esize)
    if kind in ("columns", "store_columns"):
        B = transpose_block(slot)
        if rows % B or cols % B or run % B:
            return None
        body = _columns(W, rows, cols, inv, fmt, slot, B, line, kind == "store_columns", ahead=ahead)
    elif kind == "rows":
        body = "  %nanacc = alloca i64\n" + _rows_in(W, rows, cols, inv, run, fmt, slot, line)
    else:
        body = _rows_out(W, rows, cols, inv, run, fmt, slot, line)
    name = f"@jc.tmove.{kind}.{rows}x{cols}.i{inv}.w{W}.f{fmt}.{slot}{f'.pf{ahead}' if ahead else ''}"
    if ahead:
        em.declare("@llvm.prefetch.p0", "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)")
    if name not in em.decls:
        em.decls[name] = f"""define internal void {name}(ptr %frag, i64 %base, i64 %p, ptr %lines) noinline {{
copy:
{body}
inst.next:
  ret void
}}"""
    return name


def _run(rows: int, cols: int, inv: int) -> int:
    """codes.run_length of the striped layout of rows x cols on inv invocations."""
    if inv % cols == 0:
        return cols
    if cols % inv == 0:
        return inv
    return 0


# Loads and stores of at most this many elements are inlined into the kernel, larger ones stay
# functions of their own (one copy per shape, not per call site). A small tile's copy is about
# as short as the call's own work (saving registers, the instance loop, the bounds check), which
# inlined LLVM optimizes with the call site: the 8 x 8 tiles of plain_8
# 1.26x float32 and 1.11x exact side by side on one core at 1024^3 (its cold compile 0.33 ->
# 0.5 s); at 256 (16 x 16 tiles) plain_16 1.02x, arrays_uvec4 1.07x, bias_act 0.96x: left out.
INLINE_ELEMENTS = 64


def _function(em, name, inv, lines, width, psize, esize, alloca, body, store=False, shadow=False) -> str:
    """The load (or store) function around `body` (which starts in block %copy with the
    instance's %p, %s and %base, and ends branching to %inst.next): the loop over waiting
    instances and the bounds check of each (lines x width elements, lines Stride x psize bytes
    apart; a load's Stride must not be negative, a store's must be positive)."""
    em.helper("in_ranges")
    stride_rule = "icmp sle i64 %s, 0" if store else "icmp slt i64 %s, 0"
    extra = ", ptr %shadow" if shadow else ""
    inl = "alwaysinline" if lines * width <= INLINE_ELEMENTS else "noinline"
    return f"""define internal i64 {name}(ptr %state, i32 %wait, ptr %frag, ptr %addr, ptr %stride, i64 %lo, i64 %hi, ptr %ranges, i64 %nranges, ptr %info{extra}) {inl} {{
entry:
{alloca}
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
  %neg = {stride_rule}
  %sp = select i1 %neg, i64 0, i64 %s
  %major = mul i64 %sp, {(lines - 1) * psize}
  %span = add i64 %major, {width * esize}
{object_check("%p", "%span", "check")}
  %notneg = xor i1 %neg, true
  %ok = and i1 %inb, %notneg
  br i1 %ok, label %copy, label %bad
bad:
  %off = sub i64 %p, %lo
  store i64 %off, ptr %info
  %i1p = getelementptr i64, ptr %info, i64 1
  store i64 %span, ptr %i1p
  %i2p = getelementptr i64, ptr %info, i64 2
  store i64 %s, ptr %i2p
  ret i64 %base
copy:
{body}
inst.next:
  %base1 = add i64 %base, {inv}
  %imore = icmp ult i64 %base1, {em.W}
  br i1 %imore, label %inst, label %done
done:
  ret i64 -1
}}"""


def object_check(start: str, span: str, here: str) -> str:
    """IR setting %inb to whether the bytes [start, start + span) lie in the object [%lo, %hi),
    or, where %bounded is false (the object is not known), in one of the %nranges %ranges;
    emitted in block `here`, ending in block %judge."""
    return f"""  %end = add i64 {start}, {span}
  %geq = icmp uge i64 {start}, %lo
  %leq = icmp ule i64 %end, %hi
  %inobj = and i1 %geq, %leq
  br i1 %bounded, label %judge, label %ranged
ranged:
  %inr = call i1 @jc.in_ranges(ptr %ranges, i64 %nranges, i64 {start}, i64 {span})
  br label %judge
judge:
  %inb = phi i1 [ %inobj, %{here} ], [ %inr, %ranged ]"""


def _splat(n: int, t: str, v: int) -> str:
    return "<" + ", ".join(f"{t} {v}" for _ in range(n)) + ">"
