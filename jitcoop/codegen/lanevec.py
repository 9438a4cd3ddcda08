"""Lane groups: the lane code of a kernel whose invocations differ, run G invocations at a time.

The lane loop (emitter.py) runs each invocation's control-flow graph from its resume point to its
next collective, one invocation after another: in a loop that stages a tile through shared memory
by invocation index, every invocation repeats the loop's control and address code alone, and
reads memory down a column (at power-of-two row widths, every row in one L1 set). GPU-on-CPU
compilers run the invocations of a group together in vector code instead; this module does that
to the generated scalar IR of the lane region, after the emitter wrote it:

- the *vector copy*: every block of the region again, each instruction on G invocations at once.
  A value the same for all of them (a push constant, a workgroup id, the loop counter of a loop
  all run alike) stays a scalar (`U`); an address or index stepping with the invocation by a
  constant (`A`, lane_strides.py: a slot row, a per-invocation element, a staging loop's
  index, in 32 or 64 bits) is kept as lane 0's scalar, its accesses plain vector loads and
  stores, its bounds checks and branches decided from two invocations; any other (`V`) is a
  vector, its accesses gathers and scatters unless their addresses turn out contiguous at run
  time. Calls, atomics and instructions on aggregates run once per invocation in invocation
  order (`L`).
- *guards*: where the analysis assumes what only the run can tell, the region's block is split
  before the instruction and the vector copy leaves there (a divergence exit, below) unless it
  holds: a 32-bit index widened to 64 bits whose group may wrap around 2^32, and a value loaded
  back from the invocation's slot after a collective, taken as uniform (or affine) where the
  region only ever saves such values there.
- *divergence exits*: a branch whose condition differs between the invocations of the group (or
  that goes to the failure block for any of them) cannot go on in vector code. The group saves
  what is live there (per invocation, in `dslots`), marks its invocations (`dstate`), and each
  invocation continues in the scalar code from that branch: the region's blocks that end in such
  a branch are split before their terminator, and the scalar code gets an entry there (`dres`)
  that reloads what is live; values live there are kept in allocas in the scalar code (LLVM's
  mem2reg makes them registers again).
- the lane loop's head takes the vector copy for G invocations at a G-aligned lane when all of
  them stand at the same resume point; every other case (a partial group, invocations waiting
  at different collectives, the invocations of a group that diverged) runs the scalar code.

Results are those of the scalar code: each invocation executes the same instructions on the same
values; only the interleaving of invocations between collectives changes, which the memory model
leaves open (a data race between invocations of one workgroup can read other values, as on a
GPU). A failure is reported by the scalar code, so with the same instruction, workgroup and lane.

The transformation works on the IR text the emitter wrote, one instruction per line, in the
forms the lowering rules use; a line it does not know leaves the kernel scalar (`vectorize`
returns why).
"""
from __future__ import annotations

import functools
import re
from collections import deque
from dataclasses import dataclass, field

from . import lane_strides as strides
from .llvm import SIZES, Either, Phi


# Instructions without effects: guards of loads with only these (and stores to allocas) between
# them are merged (_LaneGroups._guard_runs, _no_row_writes).
_PURE_KINDS = frozenset({"bin", "un", "cmp", "select", "cast", "gep", "load"})
WIDE_GROUP = 16         # invocations per group where the workgroup is made of whole groups this size
# Loads in loops whose addresses are sorted out at run time (not affine: lane_strides.py) and turn
# out contiguous prefetch what they will read this many iterations on (_stride_prefetch):
# a loop that stages a tile through shared memory reads rows of a matrix a page or more apart,
# where the processor's prefetchers do not follow; measured side by side at 1024^3 on one core,
# the bias_act GEMM 1.07x at 8 iterations (median of 25 rounds, quartiles 1.03-1.11; its L3 stall
# gone from the profile), 0.99x at 2 and 1.02x at 16, the other styles 0.97-1.04x. Since the
# stride analysis those staging loops load through affine addresses, which take no prefetch
# (with one: wg_arrays 0.97x, bias_act 1.03x, arrays_uvec4 0.99x).
PREFETCH_AHEAD = 8


def group_size(lanes: int) -> int:
    """Invocations per group for a workgroup of `lanes`: 16 where they make whole groups of 16,
    else the 32-bit values of one host vector register (AVX2: 8; AVX-512: 16 either way).
    Each group's resume at a collective (its state tested, its live values reloaded, the address
    code up to the next collective) costs about the same at any G, so on AVX2 groups of two
    registers run that code half as often: measured side by side at 1024^3 on 2 threads, the
    arrays_uvec4 GEMM 11-19% faster, bias_act 5-15%, the others within noise. A workgroup of
    other sizes keeps one register's width, since a partial group runs one invocation at a time."""
    from ..runtime import jit
    reg = max(4, jit.vector_registers()[0] // 32)
    wide = max(reg, WIDE_GROUP)
    return wide if lanes % wide == 0 else reg

# -- LLVM IR text ------------------------------------------------------------------------------------

_SCALAR = re.compile(r"^(i\d+|half|bfloat|float|double|ptr)$")
_NAME = re.compile(r"%[-a-zA-Z$._0-9]+")
_LABEL = re.compile(r"label %[-a-zA-Z$._0-9]+")
_TOKEN = re.compile(r'\s*(<|>|\[|\]|\{|\}|\(|\)|,|=|@"[^"]*"|%"[^"]*"|[^\s<>\[\]{}(),=]+)')

BINOPS = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "and", "or", "xor", "shl", "lshr", "ashr",
          "fadd", "fsub", "fmul", "fdiv", "frem"}
CASTS = {"zext", "sext", "trunc", "fpext", "fptrunc", "uitofp", "sitofp", "fptoui", "fptosi", "bitcast",
         "inttoptr", "ptrtoint"}
_FLAGS = {"nuw", "nsw", "exact", "disjoint", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc",
          "fast", "nneg", "samesign", "tail", "musttail", "notail", "volatile", "inbounds"}
# Intrinsics with an elementwise vector form (name.<overloaded types>); arguments named in
# _IMMARG keep their scalar (constant) form.
_VECTOR_INTRINSICS = {"fma", "fmuladd", "fabs", "sqrt", "floor", "ceil", "trunc", "rint", "nearbyint",
                      "round", "roundeven", "minnum", "maxnum", "minimum", "maximum", "minimumnum",
                      "maximumnum", "copysign", "smax", "smin", "umax", "umin", "abs", "ctpop", "ctlz",
                      "cttz", "bitreverse", "bswap", "fshl", "fshr", "fptosi.sat", "fptoui.sat", "exp",
                      "exp2", "log", "log2", "log10", "sin", "cos", "pow"}
_IMMARG = {"ctlz": {1}, "cttz": {1}, "abs": {1}}
# Functions without side effects besides their result: with uniform arguments one call serves
# every invocation of the group.
_PURE_PREFIXES = ("llvm.", "jc.f16_to_f32", "jc.f32_to_f16", "jc.round_", "jc.bf16_to_f32",
                  "jc.f32_to_bf16", "jc.widen", "jc.exp_f64")
# Helpers whose last two arguments are a lane and a count of consecutive lanes from it
# (collectives._lane_run_helper): where the scalar code passes an affine lane of stride 1 and 1,
# with every other argument uniform, the vector copy makes one call for the group.
LANE_RUN_HELPERS = ("jc.lane_copy.", "jc.lane_fill.")
_IMPURE_INTRINSICS = ("llvm.memset", "llvm.memcpy", "llvm.memmove", "llvm.readcyclecounter", "llvm.trap",
                      "llvm.debugtrap")
_LIBM = {"exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
         "cosh", "tanh", "asinh", "acosh", "atanh", "pow", "ldexp", "expf", "logf", "powf", "sqrt", "cbrt"}


# The most lines the vector copy may have per line of the lane code: in a kernel without
# collectives LLVM's loop vectorizer already runs the lane loop several invocations at a time
# (saxpy ran 0.77-0.83x as fast with lane groups); a kernel with collectives has a lane loop
# LLVM cannot vectorize (resume points, a switch), so lane groups pay at larger copies: at 3.0-3.5
# times the lane code, measured side by side on one core, the tiled SGEMM 1.6-1.7x, the
# Hillis-Steele and Blelloch scans 1.4-1.9x, a cooperative-vector MatMul 1.0-1.3x as fast.
VECTOR_SIZE = 2.5
VECTOR_SIZE_SYNC = 4.5
# The most instructions the kernel function may hold with its vector copy beside the scalar
# code. LLVM's passes and code generator take about 0.1 ms of CPU an instruction at the
# optimized tier, so a larger function passes the 3 s a production shader's optimized compile
# aims at: ggml's 64 x 64 f16 matrix product tile (20,100 instructions and a copy of 25,400)
# compiled in 4.8 s of CPU with lane groups and 1.7-2.2 s without, and ran in 42 ms with them
# and 48-49 ms without (M = N = K = 512, one thread).
# A copy is 1.1-9 times its lane code in the test corpus, so a function whose size and lane
# code already pass the budget is turned down before its values' shapes are worked out (most
# of this module's time: 0.15 s of the 64 x 64 tile's generation).
LANE_GROUP_BUDGET = 28_000
COSTLY_SHARE = 0.25     # the share of costly instructions (_LaneGroups.costly), and their number,
COSTLY_MOST = 128       # past which lane groups are left out (each is several blocks of vector
                        # code: a shader of hundreds compiled 3-7 times slower, for little)


class Unsupported(Exception):
    """A line of the lane region this module does not vectorize: the kernel stays scalar."""


def _tokens(s: str) -> list[str]:
    out, pos = [], 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m or m.end() == pos:
            if s[pos:].strip() == "":
                break
            raise Unsupported(f"cannot read {s!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


class _Cur:
    def __init__(self, text: str):
        self.t = _tokens(text)
        self.i = 0

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else None

    def take(self):
        tok = self.peek()
        if tok is None:
            raise Unsupported("line ends early")
        self.i += 1
        return tok

    def expect(self, tok):
        if self.take() != tok:
            raise Unsupported(f"expected {tok!r}")

    def skip_flags(self):
        while self.peek() in _FLAGS:
            self.i += 1

    def done(self):
        return self.i >= len(self.t)

    def type(self) -> str:
        tok = self.take()
        if tok == "<":
            n = self.take()
            self.expect("x")
            el = self.type()
            self.expect(">")
            return f"<{n} x {el}>"
        if tok == "[":
            n = self.take()
            self.expect("x")
            el = self.type()
            self.expect("]")
            return f"[{n} x {el}]"
        if tok == "{":
            els = [self.type()]
            while self.peek() == ",":
                self.take()
                els.append(self.type())
            self.expect("}")
            return "{ " + ", ".join(els) + " }"
        return tok

    def value(self) -> str:
        tok = self.take()
        if tok in ("<", "[", "{"):
            close = {"<": ">", "[": "]", "{": "}"}[tok]
            depth, parts = 1, [tok]
            while depth:
                x = self.take()
                depth += (x == tok) - (x == close)
                parts.append(x)
            return " ".join(parts).replace(" ,", ",")
        if tok == "splat":
            self.expect("(")
            t = self.type()
            v = self.value()
            self.expect(")")
            return f"splat ({t} {v})"
        return tok


@dataclass
class Ins:
    """One instruction line: its result, opcode, form, result type and typed operands."""
    res: str | None
    op: str
    kind: str                 # bin un cmp select cast gep load store call atomic generic br cbr switch end
    rtype: str | None
    args: list                # [(type, value)]
    text: str                 # the line as written (without its indentation)
    extra: dict = field(default_factory=dict)
    _names: list | None = field(default=None, repr=False, compare=False)

    def names(self) -> list[str]:
        """The local value names the instruction uses (not labels)."""
        if self._names is None:
            body = self.text.split("=", 1)[1] if self.res is not None else self.text
            self._names = _NAME.findall(_LABEL.sub("", body))
        return self._names

    def labels(self) -> list[str]:
        return [x[len("label %"):] for x in _LABEL.findall(self.text)]


def parse(text: str) -> Ins:
    """An instruction line in the forms the lowering rules write."""
    s = text.strip()
    res = None
    m = re.match(r"^(%[-a-zA-Z$._0-9]+)\s*=\s*(.*)$", s)
    if m:
        res, body = m.group(1), m.group(2)
    else:
        body = s
    c = _Cur(body)
    op = c.take()
    if op in BINOPS:
        c.skip_flags()
        t = c.type()
        a = c.value()
        c.expect(",")
        b = c.value()
        return Ins(res, op, "bin", t, [(t, a), (t, b)], s)
    if op == "fneg":
        c.skip_flags()
        t = c.type()
        return Ins(res, op, "un", t, [(t, c.value())], s)
    if op in ("icmp", "fcmp"):
        c.skip_flags()
        pred = c.take()
        t = c.type()
        a = c.value()
        c.expect(",")
        b = c.value()
        return Ins(res, op, "cmp", "i1" if _SCALAR.match(t) else None, [(t, a), (t, b)], s, {"pred": pred})
    if op == "select":
        c.skip_flags()
        ct = c.type()
        cv = c.value()
        c.expect(",")
        t = c.type()
        a = c.value()
        c.expect(",")
        c.type()
        b = c.value()
        return Ins(res, op, "select", t, [(ct, cv), (t, a), (t, b)], s)
    if op in CASTS:
        c.skip_flags()
        t = c.type()
        a = c.value()
        c.expect("to")
        u = c.type()
        return Ins(res, op, "cast", u, [(t, a)], s)
    if op == "getelementptr":
        c.skip_flags()
        et = c.type()
        args = []
        while c.peek() == ",":
            c.take()
            t = c.type()
            args.append((t, c.value()))
        return Ins(res, op, "gep", "ptr", args, s, {"et": et, "inbounds": " inbounds" if " inbounds " in f" {body} " else ""})
    if op == "load":
        vol = c.peek() == "volatile"
        c.skip_flags()
        t = c.type()
        c.expect(",")
        pt = c.type()
        p = c.value()
        align = _align(c)
        return Ins(res, op, "load", t, [(pt, p)], s, {"volatile": vol, "align": align})
    if op == "store":
        vol = c.peek() == "volatile"
        c.skip_flags()
        t = c.type()
        v = c.value()
        c.expect(",")
        pt = c.type()
        p = c.value()
        align = _align(c)
        return Ins(res, op, "store", None, [(t, v), (pt, p)], s, {"volatile": vol, "align": align})
    if op == "call" or (op in ("tail", "notail") and c.peek() == "call"):
        if op != "call":
            c.take()
        c.skip_flags()
        rt = c.type()
        callee = c.take()
        if not callee.startswith("@"):
            raise Unsupported(f"an indirect call: {s}")
        c.expect("(")
        args = []
        while c.peek() != ")":
            t = c.type()
            while c.peek() in ("noundef", "immarg", "nonnull", "zeroext", "signext"):
                c.take()
            args.append((t, c.value()))
            if c.peek() == ",":
                c.take()
        c.expect(")")
        name = callee[1:].strip('"')
        return Ins(res, op, "call", None if rt == "void" else rt, args, s, {"callee": name})
    if op in ("atomicrmw", "cmpxchg", "fence"):
        return Ins(res, op, "atomic", _atomic_type(op, body), [], s)
    if op in ("extractvalue", "insertvalue", "extractelement", "insertelement", "shufflevector", "freeze"):
        return Ins(res, op, "generic", _generic_type(op, body), [], s)
    if op == "br":
        if c.peek() == "label":
            return Ins(None, op, "br", None, [], s)
        t = c.type()
        return Ins(None, op, "cbr", None, [(t, c.value())], s)
    if op == "switch":
        t = c.type()
        return Ins(None, op, "switch", None, [(t, c.value())], s)
    if op in ("unreachable", "ret"):
        return Ins(None, op, "end", None, [], s)
    raise Unsupported(f"the instruction {op!r} ({s})")


def _align(c: _Cur) -> str:
    a = ""
    while c.peek() == ",":
        c.take()
        if c.peek() == "align":
            c.take()
            a = c.take()
        else:
            raise Unsupported("load or store metadata")
    return a


def _atomic_type(op, body) -> str | None:
    c = _Cur(body)
    c.take()
    if op == "fence":
        return None
    while c.peek() in ("volatile", "weak"):
        c.take()
    if op == "atomicrmw":
        c.take()                    # the operation
    c.type()
    c.value()
    c.expect(",")
    t = c.type()
    return t if op == "atomicrmw" else "{ " + t + ", i1 }"


def _generic_type(op, body) -> str:
    c = _Cur(body)
    c.take()
    t = c.type()
    if op in ("insertvalue", "insertelement", "freeze"):
        return t
    if op == "extractelement":
        m = re.match(r"<\d+ x (.*)>$", t)
        return m.group(1)
    if op == "shufflevector":
        c.value()
        c.expect(",")
        c.type()
        c.value()
        c.expect(",")
        mt = c.type()
        n = re.match(r"<(\d+) x", mt).group(1)
        el = re.match(r"<\d+ x (.*)>$", t).group(1)
        return f"<{n} x {el}>"
    # extractvalue: index into the aggregate
    c.value()
    while c.peek() == ",":
        c.take()
        k = int(c.take())
        t = _member(t, k)
    return t


def _member(t: str, k: int) -> str:
    if t.startswith("{"):
        c = _Cur(t[1:-1])
        parts = [c.type()]
        while c.peek() == ",":
            c.take()
            parts.append(c.type())
        return parts[k]
    m = re.match(r"^\[\d+ x (.*)\]$", t)
    if m:
        return m.group(1)
    raise Unsupported(f"extractvalue from {t}")


def _size_of(t: str) -> int:
    """Bytes of an alloca's type: scalars and arrays of them."""
    if t in SIZES:
        return SIZES[t]
    m = re.match(r"^\[(\d+) x (.*)\]$", t)
    if m:
        return int(m.group(1)) * _size_of(m.group(2))
    raise Unsupported(f"an alloca of {t}")


def is_scalar(t: str | None) -> bool:
    return t is not None and bool(_SCALAR.match(t))


def _is_name(v: str) -> bool:
    return v.startswith("%")


# -- shapes ------------------------------------------------------------------------------------------
# U: the same in every invocation of the group (a scalar); ("A", s, m): an integer or pointer that
# is lane 0's value + s x the lane's index in the group, lane 0's value a multiple of m
# (lane_strides.py); V: any vector; L: one scalar per invocation (aggregates and vectors of the
# scalar code, kept apart).
U, V, L = "U", "V", "L"


def _join(a, b):
    """The shape of a value that may be either (None: not known yet, the fixed point's start)."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if a == U:
        return b if b in (V, L) else V
    if b == U:
        return a if a in (V, L) else V
    if L in (a, b):
        return L
    if _affine(a) and _affine(b):
        return strides.join(a, b) or V
    return V


_affine = strides.is_affine


# -- the region --------------------------------------------------------------------------------------

@dataclass
class Block:
    label: str
    lines: list               # the Function's line list (str with indentation, Phi, or splice lists)
    phis: list                # Phi objects
    ins: list                 # Ins of the other lines, in order (terminator last)


def _flat_lines(lines) -> list:
    out = []
    for ln in lines:
        if isinstance(ln, list):
            out.extend("  " + x for x in ln)
        elif isinstance(ln, Either):
            out.extend(ln.scalar)
        else:
            out.append(ln)
    return out


def _block(label, lines) -> Block:
    phis, ins = [], []
    for ln in _flat_lines(lines):
        if isinstance(ln, Phi):
            phis.append(ln)
            continue
        s = ln.strip()
        if not s or s.startswith(";"):
            continue
        ins.append(parse(s))
    return Block(label, lines, phis, ins)


def _succs(b: Block) -> list[str]:
    return b.ins[-1].labels() if b.ins else []


@dataclass
class Plan:
    """What `vectorize` was told about the kernel function."""
    G: int                    # invocations per group
    lanes: int                # invocations per workgroup
    latch_false: str          # where the lane latch goes after the last invocation
    state: str | None         # the scheduler's state array (None: a kernel without collectives)
    work_array: object        # KernelGen.work_array
    entry_defs: list          # the entry block's definitions (work area pointers)
    declare: object           # KernelGen.declare(name, text)
    loop_md: object = None    # KernelGen.rolled_loop_md: a new loop's metadata
    force: bool = False       # vectorize even where the cost model says it does not pay (lane_groups=G)


def vectorize(fn, plan: Plan) -> str | None:
    """Add the vector copy of the lane region to `fn` (the kernel function after the emitter
    wrote it). Returns None when done, or why the kernel stays scalar: a line this module does
    not vectorize, or (a bug of this module) an exception, after which `fn` is put back as it
    was, so that the kernel still runs, one invocation at a time."""
    saved = _snapshot(fn)
    try:
        _LaneGroups(fn, plan).run()
    except Unsupported as e:
        _restore(fn, saved)
        return str(e)
    except Exception as e:          # noqa: BLE001 - the scalar code is still right
        _restore(fn, saved)
        return f"internal error in the lane-group vectorizer ({type(e).__name__}: {e})"
    return None


def _snapshot(fn):
    """What vectorize may change in a Function: its blocks' line lists, allocas, phis' edges."""
    phis = [ln for _, lines in fn.blocks for ln in lines if isinstance(ln, Phi)]
    return ([(lab, list(lines), lines) for lab, lines in fn.blocks], list(fn.allocas),
            [(ph, list(ph.incoming)) for ph in phis], dict(fn._by_label))


def _restore(fn, saved):
    blocks, allocas, phis, by_label = saved
    for _, copy, lines in blocks:
        lines[:] = copy
    fn.blocks[:] = [(lab, lines) for lab, _, lines in blocks]
    fn.allocas[:] = allocas
    for ph, inc in phis:
        ph.incoming = inc
    fn._by_label.clear()
    fn._by_label.update(by_label)


class _LaneGroups:
    def __init__(self, fn, plan: Plan):
        self.fn, self.p, self.G = fn, plan, plan.G
        self.guard_at = {}      # block -> the guarded instruction its (split-off) successor begins with
        self.speculated = None  # loads from slot rows taken as uniform or affine under a guard: their shapes

    def _read(self):
        """The function's blocks as they are now (blocks are parsed on first use)."""
        fn = self.fn
        self.raw = {lab: lines for lab, lines in fn.blocks}
        self.order = [lab for lab, _ in fn.blocks]
        self.blocks: dict[str, Block] = {}
        self.align_memo, self.const_memo, self.outside_defs = {}, {}, None

    def parsed(self, lab: str) -> Block:
        """A block of the function, its splices flattened in place, its lines read."""
        b = self.blocks.get(lab)
        if b is None:
            lines = self.raw[lab]
            lines[:] = _flat_lines(lines)
            b = self.blocks[lab] = _block(lab, lines)
        return b

    # -- analysis ----------------------------------------------------------------------------------
    def run(self):
        self._read()
        if "lane.head" not in self.raw or "lane.go" not in self.raw:
            raise Unsupported("no lane loop")
        self._analyse()
        # the cost model reads the shapes, which the guards' splits below keep (the speculated
        # loads and guarded widenings have theirs already): a kernel it turns down is turned
        # down before the splits and a second analysis, most of the time this module takes
        self._worth_it()
        guards = self._unguarded()
        if guards:
            # split the blocks before the guarded instructions, and read the function again
            self._split_before(self._guard_runs(guards))
            self._read()
            self._analyse()
            if self._unguarded():
                raise Unsupported("a widening left unguarded after the split")
        self._liveness()
        self._worth_it()
        self.masked = self._masked_branches()
        # every line was read: now change the function
        self._split_and_demote()
        self._scalar_entries()
        self._vector_copy()
        self._head()

    def _analyse(self):
        self._region()
        if self.speculated is None:     # the first time: no shapes worked out yet
            self.within_budget(sum(len(self.blocks[lab].ins) for lab in self.region))
        self._alloca_types()
        if self.speculated is not None:
            self._shapes()
            return
        self.speculated = {x: U for x in self._row_loads()}
        # the values the region stores to each row (their shapes change as speculation does)
        self.row_stores = {}
        for lab in self.region:
            for ins in self.blocks[lab].ins:
                d = self.defined.get(ins.args[1][1]) if ins.kind == "store" else None
                if d is not None and isinstance(d[1], Ins) and d[1].kind == "gep":
                    self.row_stores.setdefault(d[1].args[0][1], []).append(ins.args[0][1])
        for _ in range(8):
            self._shapes()
            seen = {x: self._row_shape(x) for x in self.speculated}
            if seen == self.speculated:
                return
            self.speculated = {x: s for x, s in seen.items() if s is not None}
        self.speculated = {}        # no fixed point (rows feeding each other): none taken
        self._shapes()

    def _unguarded(self) -> list:
        """The instructions of the region that need a guard and do not begin a split-off block
        yet, in region order: widenings whose affine result needs one (lane_strides), and the
        loads taken as uniform (_row_loads)."""
        have = {x for run in self.guard_at.values() for x in run}
        return [ins.res for lab in self.region for ins in self.blocks[lab].ins
                if ins.res is not None and ins.res not in have
                and (ins.res in self.speculated
                     or (_affine(self.sh.get(ins.res)) and strides.needs_guard(ins, self.shape, self.G)))]

    # Values that cross a collective are saved in a row of per-invocation slots and loaded back
    # when the invocation resumes: a loop counter, a tile's coordinates, the same in every
    # invocation, or the invocation index, come back as a load from the invocation's own slot,
    # which the shapes cannot tell from an invocation's own data; every address made from them
    # would be a vector. A row the region only ever writes with uniform values (or affine ones
    # of one stride) is taken as such where it is read, under a guard: the group's slots hold
    # lane 0's value (plus the stride times the lane), or it leaves the vector copy before the
    # load.
    def _row_load(self, ins):
        """The row (a pointer from outside the region) of a load from it at the invocation's own
        index, or None."""
        if ins.kind != "load" or ins.res is None or ins.extra["volatile"] or not is_scalar(ins.rtype):
            return None
        d = self.defined.get(ins.args[0][1])
        if d is None or not isinstance(d[1], Ins) or d[1].kind != "gep":
            return None
        g = d[1]
        if g.extra["et"] != ins.rtype or len(g.args) != 2 or g.args[1] != ("i64", "%lane") \
                or not _is_name(g.args[0][1]) or g.args[0][1] in self.defined:
            return None
        return g.args[0][1]

    def _row_loads(self) -> set:
        return {ins.res for lab in self.region for ins in self.blocks[lab].ins
                if self._row_load(ins) is not None}

    def _row_shape(self, x: str):
        """The shape of what the region writes to the row load x reads (uniform or affine), or
        None: it writes other values, or nothing."""
        shape = None
        for v in self.row_stores.get(self._row_load(self.defined[x][1]), ()):
            shape = _join(shape, self.shape(v))
        return shape if shape == U or _affine(shape) else None

    def _guard_runs(self, guards: list) -> list:
        """The guarded instructions in runs that share one guard: loads taken as uniform or
        affine that follow one another in a block with nothing between that can write a row
        (_no_row_writes: their rows hold at the first what they hold at the last). A resume
        reloads every live value that way; a guard each, each a divergence exit and a scalar
        entry saving what is live, made the vector copy of a 32-invocation flash attention 12,000
        lines that compiled in 54 s."""
        runs = []
        for x in guards:
            last = runs[-1][-1] if runs else None
            if (last is not None and x in self.speculated and last in self.speculated
                    and self.defined[last][0] == self.defined[x][0] and self._no_row_writes(last, x)):
                runs[-1].append(x)
            else:
                runs.append([x])
        return runs

    def _no_row_writes(self, a: str, b: str) -> bool:
        """Nothing between a and b (in one block) writes memory but into the function's allocas
        (the homes the reloaded values go to), which no slot row is."""
        ins = self.blocks[self.defined[a][0]].ins
        i = next(k for k, y in enumerate(ins) if y.res == a)
        j = next(k for k, y in enumerate(ins) if y.res == b)
        return all((y.kind in _PURE_KINDS and not (y.kind == "load" and y.extra["volatile"]))
                   or (y.kind == "store" and not y.extra["volatile"] and y.args[1][1] in self.alloca_t)
                   for y in ins[i + 1:j])

    def _split_before(self, runs: list):
        """Split the block that defines each run's first instruction before it: its first part
        ends in a branch to the rest, which is where the vector copy tests the guards of the run
        (a divergence exit, _may_diverge). Runs in region order; a later run in the same block
        splits the rest that an earlier one made."""
        fn = self.fn
        firsts = {run[0] for run in runs}
        home = {}                       # a run's first instruction -> the label of its block now

        def place(lab, lines):
            for ln in lines:
                if isinstance(ln, str) and ln.lstrip().partition(" = ")[0] in firsts:
                    home[ln.lstrip().partition(" = ")[0]] = lab
        for lab, lines in fn.blocks:
            place(lab, lines)
        phis = [ph for _, lines in fn.blocks for ph in lines if isinstance(ph, Phi)]
        for run in runs:
            x = run[0]
            lab = home.get(x)
            if lab is None:
                raise Unsupported(f"no definition of {x} to split before")
            lines = fn._by_label[lab]
            k = next(k for k, ln in enumerate(lines) if isinstance(ln, str) and ln.strip().startswith(f"{x} = "))
            rest = fn.label(f"{lab}.nw")
            tail = lines[k:]
            del lines[k:]
            lines.append(f"  br label %{rest}")
            idx = next(i for i, (b, _) in enumerate(fn.blocks) if b == lab)
            fn.blocks.insert(idx + 1, (rest, tail))
            fn._by_label[rest] = tail
            for ph in phis:
                ph.incoming = [(v, rest if b == lab else b) for v, b in ph.incoming]
            place(rest, tail)
            self.guard_at[lab] = tuple(run)

    def _region(self):
        """The blocks an invocation runs from lane.go until it reaches the lane latch (a
        collective, a return) or the failure block."""
        stop = {"lane.latch", "fail", "failed"}
        seen, todo = [], ["lane.go"]
        while todo:
            lab = todo.pop()
            if lab in seen or lab in stop:
                continue
            if lab not in self.raw:
                raise Unsupported(f"a branch to unknown block {lab}")
            if lab.startswith(("sched.", "coll", "wg.", "lane.head")):
                raise Unsupported(f"the lane region reaches {lab}")
            seen.append(lab)
            todo.extend(reversed(_succs(self.parsed(lab))))
        self.region = [lab for lab in self.order if lab in seen]
        rset = set(self.region)
        self.defined = {}        # name -> (block, Ins | Phi)
        for lab in self.region:
            b = self.blocks[lab]
            for ph in b.phis:
                self.defined[ph.name] = (lab, ph)
                for v, src in ph.incoming:
                    if src not in rset:
                        raise Unsupported(f"a phi of {lab} has an edge from {src}")
            for ins in b.ins:
                if ins.res is not None:
                    self.defined[ins.res] = (lab, ins)
        head = self.parsed("lane.head")
        self.head_ins = [i for i in head.ins[:-1]]
        self.head_ids = {id(i) for i in self.head_ins}
        for ins in self.head_ins:
            if ins.res is not None:
                self.defined[ins.res] = ("lane.head", ins)
        self.parsed("fail")
        # the phis' incoming values as the scalar code has them now (demotion changes them)
        self.incoming = {id(ph): list(ph.incoming) for lab in self.region for ph in self.blocks[lab].phis}
        self.fail_incoming = [list(ph.incoming) for ph in self.blocks["fail"].phis]
        # region values must not be used outside it, but for the failure block's phis
        for lab, lines in self.raw.items():
            if lab in rset or lab == "lane.head":
                continue
            for ln in _flat_lines(lines):
                if isinstance(ln, Phi):
                    continue
                for n in _NAME.findall(_LABEL.sub("", ln)):
                    if n in self.defined and self.defined[n][0] != "lane.head":
                        raise Unsupported(f"{n} of the lane region is used in {lab}")

    def _alloca_types(self):
        """Allocas the region uses, with their types: *register* allocas (a scalar only loaded and
        stored whole: homes, promoted variables; registers after mem2reg) and *memory* allocas
        (scratch an invocation addresses: a library call's result slot, an array indexed by
        access chains)."""
        self.alloca_t = {}
        for a in self.fn.allocas:
            m = re.match(r"^\s*(%[-a-zA-Z$._0-9]+) = alloca (.*), align \d+$", a)
            if not m:
                raise Unsupported(f"an alloca {a.strip()!r}")
            self.alloca_t[m.group(1)] = m.group(2)
        uses = {}
        for lab in ["lane.head"] + self.region:
            for ins in (self.head_ins if lab == "lane.head" else self.blocks[lab].ins):
                for n in ins.names():
                    if n in self.alloca_t:
                        uses.setdefault(n, []).append(ins)
        self.used_allocas, self.mem_allocas = set(), {}
        for n, users in uses.items():
            t = self.alloca_t[n]
            whole = is_scalar(t) and all(
                (ins.kind == "load" and ins.args[0][1] == n and ins.rtype == t)
                or (ins.kind == "store" and ins.args[1][1] == n and ins.args[0][1] != n and ins.args[0][0] == t)
                for ins in users)
            if whole:
                self.used_allocas.add(n)
            else:
                self.mem_allocas[n] = _size_of(t)

    def type_of(self, name) -> str:
        lab, d = self.defined[name]
        return d.t if isinstance(d, Phi) else d.rtype

    def _shapes(self):
        """Each region value's shape (and each alloca's), to a fixed point from "not known yet"
        (None), only growing. Control flow in the vector copy is the same for the whole group (a
        branch that is not takes a divergence exit), so a phi is uniform when all its incoming
        values are. A worklist: a phi or instruction is looked at again when a value it uses
        (or the alloca it loads) changes shape, first in region order."""
        # the vector copy starts at a G-aligned lane
        sh = {"%lane": ("A", 1, self.G)}
        ash = {a: None for a in self.used_allocas}
        self.sh, self.ash = sh, ash
        items = [(lab, ins) for lab in ["lane.head"] + self.region
                 for ins in (self.head_ins if lab == "lane.head" else self.blocks[lab].ins)]
        phis = [ph for lab in self.region for ph in self.blocks[lab].phis]
        # work items: phis 0..P-1, then instructions P..; users[name]: the items using the value
        P = len(phis)
        users = {}
        for k, ph in enumerate(phis):
            for v, _ in self.incoming[id(ph)]:
                users.setdefault(v, []).append(k)
        for k, (_, ins) in enumerate(items, P):
            for n in ins.names():
                users.setdefault(n, []).append(k)
        work = deque(range(P + len(items)))
        queued = bytearray(b"\1") * (P + len(items))

        def grew(name):
            for u in users.get(name, ()):
                if not queued[u]:
                    queued[u] = 1
                    work.append(u)

        self.solving = True
        while work:
            k = work.popleft()
            queued[k] = 0
            if k < P:
                ph = phis[k]
                s = None
                for v, _ in self.incoming[id(ph)]:
                    s = _join(s, self.shape(v))
                if s is not None and s != U and not is_scalar(ph.t):
                    raise Unsupported(f"a phi of {ph.t} that differs between invocations")
                new = _join(sh.get(ph.name), s)
                if new != sh.get(ph.name):
                    sh[ph.name] = new
                    grew(ph.name)
                continue
            ins = items[k - P][1]
            if ins.kind == "store" and ins.args[1][1] in ash:
                a = ins.args[1][1]
                v = self.shape(ins.args[0][1])
                if v is None:
                    continue
                new = _join(ash[a], v if v == U or _affine(v) else V)
                if new != ash[a]:
                    ash[a] = new
                    grew(a)
                continue
            if ins.res is None:
                continue
            r = self._rule(ins)
            new = _join(sh.get(ins.res), r)
            if new != sh.get(ins.res):
                sh[ins.res] = new
                grew(ins.res)
        self.solving = False
        # what stayed unknown is never reached: any shape serves
        for lab, ins in items:
            if ins.res is not None and sh.get(ins.res) is None:
                sh[ins.res] = U if ins.kind not in ("atomic", "call") else (V if is_scalar(ins.rtype) else L)
        for ph in phis:
            sh.setdefault(ph.name, U)
            if sh[ph.name] is None:
                sh[ph.name] = U
        for a in ash:
            if ash[a] is None:
                ash[a] = U

    def shape(self, v: str):
        """A value's shape: literals and values from outside the region are uniform; None while
        the fixed point has not reached a region value."""
        if not _is_name(v):
            return U
        if v == "%lane" or v in self.defined:
            return self.sh.get(v)
        if v in self.mem_allocas:
            return ("A", self.mem_allocas[v], 1)
        return U

    def _uniform_def(self, v: str):
        """The instruction defining a uniform value (in the region or before it), or None."""
        d = self.defined.get(v)
        ins = d[1] if d is not None else self._outside(v)
        if not isinstance(ins, Ins) or (d is not None and self.sh.get(v) != U):
            return None
        return ins

    def uconst(self, v: str):
        """A uniform integer's value where it is a constant: a literal, or integer arithmetic,
        comparisons and selects on constants (the rules guard divisors with selects), else None."""
        c = {"true": 1, "false": 0}.get(v, _int(v))
        if c is not None or not _is_name(v):
            return c
        memo = self.const_memo
        if v in memo:
            return memo[v]
        memo[v] = None
        ins = self._uniform_def(v)
        if ins is None or ins.kind not in ("bin", "cmp", "select") or ins.rtype not in ("i1", "i8", "i16", "i32", "i64"):
            return None
        vals = [self.uconst(x) for _, x in ins.args]
        if None in vals:
            return None
        w = SIZES[ins.args[-1][0]] * 8 if ins.args[-1][0] != "i1" else 1
        memo[v] = strides.fold(ins, vals, w)
        return memo[v]

    def ualign(self, v: str) -> int:
        """The largest power of two a uniform value is known to be a multiple of (1: none
        known): constants, and products, shifts, sums and masks of them, in the region or
        before it."""
        c = self.uconst(v)
        if c is not None:
            return strides.align_of_const(c, 64)
        memo = self.align_memo
        if v in memo:
            return memo[v]
        memo[v] = 1             # a cycle through phis: nothing known
        ins = self._uniform_def(v)
        if ins is None:
            return 1
        al = 1
        w = strides.WIDTHS.get(ins.rtype, 64)
        if ins.kind == "bin":
            (_, x), (_, y) = ins.args
            if ins.op == "mul":
                al = self.ualign(x) * self.ualign(y)
            elif ins.op == "shl" and _int(y) is not None and 0 <= _int(y) < w:
                al = self.ualign(x) << _int(y)
            elif ins.op in ("add", "sub"):
                al = min(self.ualign(x), self.ualign(y))
            elif ins.op == "and":
                al = max(self.ualign(x), self.ualign(y))
        elif ins.kind == "cast" and ins.op in ("zext", "sext", "trunc", "inttoptr", "ptrtoint"):
            al = self.ualign(ins.args[0][1])
        al = min(al, strides.MAX_ALIGN, 1 << (w - 1))
        memo[v] = al
        return al

    def _outside(self, v: str):
        """The instruction defining a value of the kernel function outside the region (uniform
        there), or None."""
        if self.outside_defs is None:
            self.outside_defs = {}
            for lab, lines in self.fn.blocks:
                if lab in self.blocks and (lab in self.region or lab == "lane.head"):
                    continue
                for ln in _flat_lines(lines):
                    if isinstance(ln, str):
                        m = re.match(r"^\s*(%[-a-zA-Z$._0-9]+) = ", ln)
                        if m:
                            self.outside_defs[m.group(1)] = ln
        ln = self.outside_defs.get(v)
        if ln is None:
            return None
        try:
            return parse(ln)
        except Unsupported:
            return None

    def _rule(self, ins: Ins):
        ops = [self.shape(n) for n in ins.names()]
        if any(x is None for x in ops):
            return None
        scalar = is_scalar(ins.rtype)
        vary = (lambda: V if scalar else L)
        k = ins.kind
        if k == "atomic":
            return vary()
        if k == "call":
            if _pure(ins.extra["callee"]) and all(s == U for s in ops):
                return U
            return vary()
        if k == "load":
            p = ins.args[0][1]
            if ins.res in self.speculated:
                return self.speculated[ins.res]
            if p in self.ash:
                a = self.ash[p]
                return a if a is None or a == U or _affine(a) else V
            if ins.extra["volatile"] and self.shape(p) != U:
                return vary()
            return U if self.shape(p) == U else vary()
        if all(s == U for s in ops):
            return U
        if k == "generic" or not scalar:
            return vary()
        r = strides.rule(ins, self.shape, self.ualign, self.uconst, self.G, guardable=id(ins) not in self.head_ids)
        return V if r is None else r

    def _liveness(self):
        """Divergence points (blocks of the region ending in a branch the group may not take
        together) and what is live at each, before its terminator, in the scalar code."""
        rset = set(self.region)
        items = {n for n, (lab, _) in self.defined.items() if lab in rset and lab != "lane.go"}
        self.items = items
        gen, kill, phi_use = {}, {}, {lab: set() for lab in self.region}
        # the successors' phis read their operands at the end of the edge's block (the failure
        # block's too: an invocation resumed at a divergence point may fail right there)
        for ph in [p for lab in self.region for p in self.blocks[lab].phis] + self.blocks["fail"].phis:
            for v, src in ph.incoming:
                if v in items and src in phi_use:
                    phi_use[src].add(v)
        term_use = {}
        for lab in self.region:
            b = self.blocks[lab]
            g, k = set(), set()
            for ph in b.phis:
                k.add(ph.name)
            for ins in b.ins[:-1]:
                u, d = self._uses_defs(ins, items)
                g |= {x for x in u if x not in k}
                k |= d
            tu, _ = self._uses_defs(b.ins[-1], items)
            term_use[lab] = tu | phi_use[lab]
            g |= {x for x in term_use[lab] if x not in k}
            gen[lab], kill[lab] = g, k
        live_in = {lab: set() for lab in self.region}
        live_out = {lab: set() for lab in self.region}
        changed = True
        while changed:
            changed = False
            for lab in reversed(self.region):
                out = set()
                for s in _succs(self.blocks[lab]):
                    if s in rset:
                        out |= live_in[s]
                new = gen[lab] | (out - kill[lab])
                if new != live_in[lab] or out != live_out[lab]:
                    live_in[lab], live_out[lab] = new, out
                    changed = True
        self.exits = {}          # block -> items live before its terminator
        for lab in self.region:
            t = self.blocks[lab].ins[-1]
            if self._may_diverge(lab, t):
                # a memory alloca's contents count as live everywhere (they are small)
                self.exits[lab] = sorted(term_use[lab] | live_out[lab] | set(self.mem_allocas))
        self.demoted = sorted({x for live in self.exits.values() for x in live if x in self.defined})
        for x in self.demoted:
            if not is_scalar(self.type_of(x)) and not self.type_of(x).startswith("{"):
                raise Unsupported(f"{x} of type {self.type_of(x)} is live at a divergence point")

    def costly(self, ins: Ins) -> bool:
        """Whether the vector copy of an instruction does the work once per invocation, or
        sorts out its addresses at run time: a memory access through per-invocation addresses
        that do not step by the element size, a call with no vector form, an atomic, an
        instruction on aggregates or LLVM vectors."""
        k = ins.kind
        if k in ("load", "store"):
            p = ins.args[0][1] if k == "load" else ins.args[1][1]
            s = self.shape(p)
            t = ins.rtype if k == "load" else ins.args[0][0]
            return p not in self.ash and s not in (U, None) and not (_affine(s) and s[1] == SIZES.get(t))
        if ins.res is None:
            return k in ("atomic", "call") and not (k == "call" and (_pure(ins.extra["callee"])
                                                                     or self.lane_run(ins)))
        s = self.sh.get(ins.res, U)
        if s == U:
            return False
        if k == "call":
            base, _ = _intrinsic(ins.extra["callee"])
            return not (base in _VECTOR_INTRINSICS or ins.extra["callee"].startswith("jc."))
        return s == L or k in ("atomic", "generic")

    def lane_run(self, ins: Ins) -> bool:
        """Whether a call is one of LANE_RUN_HELPERS the group can make once (see there)."""
        if not ins.extra["callee"].startswith(LANE_RUN_HELPERS) or len(ins.args) < 2:
            return False
        *rest, (_, lane), (_, count) = ins.args
        s = self.shape(lane)
        return (count == "1" and _affine(s) and s[1] == 1 and ins.args[-2][0] == "i64"
                and all(self.shape(v) == U for _, v in rest))

    def within_budget(self, copy: int):
        """Turn down a function that would pass LANE_GROUP_BUDGET with a copy of `copy`
        instructions."""
        total = self.fn.size()[0]
        if not self.p.force and total + copy > LANE_GROUP_BUDGET:
            raise Unsupported(f"too large: {total:,} instructions and a vector copy of {copy:,} or more would pass "
                              f"the {LANE_GROUP_BUDGET:,} the optimized tier compiles in about 3 s")

    def _worth_it(self):
        """Lane groups pay where most of the lane code becomes plain vector instructions; where
        much of it would run once per invocation anyway, or test its addresses at run time, the
        vector copy mostly adds compile time (and can run slower than the scalar code)."""
        ins = [i for lab in self.region for i in self.blocks[lab].ins]
        n = sum(1 for i in ins if i.kind not in ("br", "cbr", "switch", "end"))
        costly = sum(1 for i in ins if self.costly(i))
        if n and not self.p.force and (costly > COSTLY_SHARE * n or costly > COSTLY_MOST):
            raise Unsupported(f"not worth it: {costly} of the lane code's {n} instructions would run once per "
                              f"invocation or sort out their addresses at run time")

    def _uses_defs(self, ins: Ins, items):
        u = {n for n in ins.names() if n in items or n in self.used_allocas}
        d = set()
        if ins.kind == "store" and ins.args[1][1] in self.used_allocas:
            u.discard(ins.args[1][1])
            d.add(ins.args[1][1])
        if ins.res is not None:
            d.add(ins.res)
        return u, d

    # A branch whose condition differs between the group's invocations leaves the vector copy
    # (a divergence exit) and the group runs on one invocation at a time until its next
    # collective. Where one side of it is a short chain of blocks that only computes and stores
    # (`if (gl_SubgroupInvocationID == 0) out[row] = sum;` after a reduction) and comes back to
    # the other side, the group stays in vector code instead: it runs the chain when any of its
    # invocations takes it, with the stores of the others masked off. Everything else the chain
    # does is pure, or a read of the function's allocas, so running it for every invocation
    # changes nothing but the stores; and a bounds check that fails for an invocation taking
    # the chain leaves through the branch's own divergence exit, where the scalar code takes the
    # branch again, one invocation at a time, and reports the failure as before (the chain's
    # stores up to there are made again, of the same values to the same places).
    MASKED_CHAIN_BLOCKS = 4

    def _masked_branches(self) -> dict:
        """{block: (the chain's blocks, the block both sides reach, whether the chain is the
        false side)} of the region's branches the vector copy runs with masked stores."""
        preds: dict = {}
        for lab in self.order:
            last = next((ln for ln in reversed(_flat_lines(self.raw[lab])) if isinstance(ln, str)
                         and ln.strip() and not ln.strip().startswith(";")), "")
            for m in re.finditer(r"label %([-a-zA-Z$._0-9]+)", last):
                preds[m.group(1)] = preds.get(m.group(1), 0) + 1
        out = {}
        for lab in self.region:
            t = self.blocks[lab].ins[-1]
            if t.kind != "cbr" or "fail" in t.labels() or self.shape(t.args[0][1]) == U:
                continue
            tl, fl = t.labels()
            for side, join, false_side in ((tl, fl, False), (fl, tl, True)):
                chain = self._store_chain(side, join, preds)
                if chain:
                    out[lab] = (chain, join, false_side)
                    break
        return out

    def _store_chain(self, start: str, join: str, preds: dict) -> list | None:
        """The blocks from `start` to `join` when they make a chain the vector copy can run
        under a mask (see MASKED_CHAIN_BLOCKS): each the only successor of the one before and
        reached from nowhere else, holding pure instructions, loads from allocas and stores to
        memory, and ending in a branch or a bounds check; `join` without phis."""
        chain, cur = [], start
        while cur != join:
            if (cur not in self.region or cur in chain or len(chain) >= self.MASKED_CHAIN_BLOCKS
                    or preds.get(cur) != 1 or cur in self.guard_at):
                return None
            b = self.blocks[cur]
            if b.phis or not all(self._maskable(ins) for ins in b.ins[:-1]):
                return None
            term = b.ins[-1]
            if term.kind == "br":
                nxt = term.labels()[0]
            elif term.kind == "cbr" and "fail" in term.labels() and not self._cancel_edge(term):
                nxt = next(x for x in term.labels() if x != "fail")
            else:
                return None
            chain.append(cur)
            cur = nxt
        if join not in self.region or self.blocks[join].phis:
            return None
        return chain or None

    def _maskable(self, ins: Ins) -> bool:
        if ins.kind in ("bin", "un", "cmp", "select", "cast", "gep"):
            return ins.res is None or self.sh.get(ins.res, U) != L
        if ins.kind == "load":
            return not ins.extra["volatile"] and ins.args[0][1] in self.alloca_t
        if ins.kind == "store":
            (t, v), (_, ptr) = ins.args
            return (not ins.extra["volatile"] and is_scalar(t) and ptr not in self.alloca_t
                    and self.shape(v) != L and self.shape(ptr) != L)
        return False

    def _may_diverge(self, lab: str, t: Ins) -> bool:
        if t.kind == "br":
            return lab in self.guard_at
        if t.kind == "cbr":
            if "fail" in t.labels() and self._cancel_edge(t):
                return False
            return self.shape(t.args[0][1]) != U or "fail" in t.labels()
        if t.kind == "switch":
            return self.shape(t.args[0][1]) != U
        return False

    def _cancel_edge(self, t: Ins) -> bool:
        """A branch to the failure block that records site -1 (the cancel check: a timeout,
        Ctrl-C or another thread's failure, the same for the whole dispatch)."""
        src = self._edge_source(t)
        return any(b == src and v == "-1" for v, b in self.fail_incoming[0])

    def _edge_source(self, t: Ins) -> str:
        for lab in self.region:
            if self.blocks[lab].ins and self.blocks[lab].ins[-1] is t:
                return lab
        raise Unsupported("a terminator outside the region")

    # -- the scalar code: split, demote, entries ------------------------------------------------------
    def _split_and_demote(self):
        fn = self.fn
        self.term_label = {}
        for lab in self.exits:
            tl = f"{lab}.term"
            self.term_label[lab] = tl
            lines = self.blocks[lab].lines
            # the terminator is the last plain line
            k = len(lines) - 1
            while isinstance(lines[k], (Phi, list)) or not lines[k].strip() or lines[k].strip().startswith(";"):
                k -= 1
            term = lines.pop(k)
            lines.append(f"  br label %{tl}")
            new = [term]
            idx = [x for x, _ in fn.blocks].index(lab)
            fn.blocks.insert(idx + 1, (tl, new))
            fn._by_label[tl] = new
            self._relabel(lab, tl)
        # demotion: every value live at a divergence point lives in an alloca in the scalar code
        self.dm = {}
        for x in self.demoted:
            t = self.type_of(x)
            a = fn.fresh("dm")
            fn.allocas.append(f"  {a} = alloca {t}, align 16")
            self.dm[x] = (a, t)
        if not self.dm:
            return
        for lab, lines in fn.blocks:
            here = self._region_label(lab)
            if here is None and lab != "fail":
                continue
            out = []
            pending_phi_stores = []
            for ln in _flat_lines(lines):
                if isinstance(ln, Phi):
                    out.append(ln)
                    if ln.name in self.dm and here is not None:
                        pending_phi_stores.append(ln)
                    continue
                if pending_phi_stores:
                    for ph in pending_phi_stores:
                        a, t = self.dm[ph.name]
                        out.append(f"  store {t} {ph.name}, ptr {a}")
                    pending_phi_stores = []
                s = ln.strip()
                if here is not None and s and not s.startswith(";"):
                    s = self._reload_uses(s, out)
                    out.append("  " + s)
                    res = re.match(r"^(%[-a-zA-Z$._0-9]+) =", s)
                    if res and res.group(1) in self.dm:
                        a, t = self.dm[res.group(1)]
                        out.append(f"  store {t} {res.group(1)}, ptr {a}")
                else:
                    out.append(ln)
            lines[:] = out
        # phi operands (the failure block's included) come from loads at the end of the edge's block
        for lab, lines in fn.blocks:
            for ln in lines:
                if not isinstance(ln, Phi):
                    continue
                for i, (v, src) in enumerate(ln.incoming):
                    if v in self.dm and self._region_label(src) is not None:
                        a, t = self.dm[v]
                        name = fn.fresh("dml")
                        src_lines = fn._by_label[src]
                        src_lines.insert(len(src_lines) - 1, f"  {name} = load {t}, ptr {a}")
                        ln.incoming[i] = (name, src)

    def _region_label(self, lab):
        """The region block a (possibly split-off) label belongs to, or None."""
        if lab in self.blocks and lab in self.region:
            return lab
        if lab.endswith(".term") and lab[:-5] in self.term_label:
            return lab[:-5]
        return None

    def _relabel(self, old, new):
        for _, lines in self.fn.blocks:
            for ln in lines:
                if isinstance(ln, Phi):
                    ln.incoming = [(v, new if b == old else b) for v, b in ln.incoming]

    def _reload_uses(self, s: str, out: list) -> str:
        """A line whose uses of demoted values read them from their allocas first."""
        body = s.split("=", 1)[1] if re.match(r"^%[-a-zA-Z$._0-9]+ =", s) else s
        used = [n for n in _NAME.findall(_LABEL.sub("", body)) if n in self.dm]
        if not used:
            return s
        sub = {}
        for n in dict.fromkeys(used):
            a, t = self.dm[n]
            ld = self.fn.fresh("dml")
            out.append(f"  {ld} = load {t}, ptr {a}")
            sub[n] = ld
        head, sep, rest = (s.partition("=") if body is not s else ("", "", s))
        rest = re.sub(r"(label )?(%[-a-zA-Z$._0-9]+)",
                      lambda m: m.group(0) if m.group(1) else sub.get(m.group(2), m.group(2)), rest)
        return head + sep + rest

    def _slot(self, x) -> tuple[str, str]:
        """The dslot row of an item (G values of its scalar type; i1 as i8; a memory alloca's
        bytes G times) and that type."""
        if x in self.mem_allocas:
            if x not in self.slots:
                name = f"dslot{len(self.slots)}"
                self.slots[x] = (self.p.work_array(name, "i8", self.G * self.mem_allocas[x]), "i8")
            return self.slots[x]
        t = self.alloca_t[x] if x in self.alloca_t else self.type_of(x)
        st = "i8" if t == "i1" else t
        if st.startswith("{"):
            raise Unsupported(f"an aggregate {x} is live at a divergence point")
        if x not in self.slots:
            name = f"dslot{len(self.slots)}"
            self.slots[x] = (self.p.work_array(name, st if st != "ptr" else "i64", self.G), st)
        return self.slots[x]

    def _scalar_entries(self):
        """dstate and the dres blocks: an invocation whose group left the vector copy at a
        divergence point goes on in the scalar code from that block's terminator."""
        fn, G = self.fn, self.G
        self.slots = {}
        self.dstate = self.p.work_array("dstate", "i32", self.p.lanes)
        self.exit_ids = {lab: j + 1 for j, lab in enumerate(self.exits)}
        go = self.raw["lane.go"]
        # lane.go's terminator (the dispatch on the resume point) moves behind the dstate test
        k = len(go) - 1
        while isinstance(go[k], (Phi, list)) or not go[k].strip() or go[k].strip().startswith(";"):
            k -= 1
        term = go.pop(k)
        go.append("  %dst.p = getelementptr i32, ptr " + self.dstate + ", i64 %lane")
        go.append("  %dst = load i32, ptr %dst.p")
        go.append("  %dst.none = icmp eq i32 %dst, 0")
        go.append("  br i1 %dst.none, label %lane.go.normal, label %lane.go.dres")
        idx = [x for x, _ in fn.blocks].index("lane.go")
        normal = [term]
        cases = " ".join(f"i32 {j}, label %dres.{lab}" for lab, j in self.exit_ids.items())
        dres = ["  store i32 0, ptr %dst.p", f"  switch i32 %dst, label %lane.latch [ {cases} ]"]
        new = [("lane.go.normal", normal), ("lane.go.dres", dres)]
        for lab, live in self.exits.items():
            body = ["  %dres.i." + lab + f" = and i64 %lane, {G - 1}"]
            for x in live:
                row, st = self._slot(x)
                if x in self.mem_allocas:
                    size = self.mem_allocas[x]
                    off, p = fn.fresh("dro"), fn.fresh("drp")
                    body.append(f"  {off} = mul i64 %dres.i.{lab}, {size}")
                    body.append(f"  {p} = getelementptr i8, ptr {row}, i64 {off}")
                    body.append(f"  call void @llvm.memcpy.p0.p0.i64(ptr {x}, ptr {p}, i64 {size}, i1 false)")
                    self._declare_memcpy()
                    continue
                p = fn.fresh("drp")
                v = fn.fresh("drv")
                body.append(f"  {p} = getelementptr {st}, ptr {row}, i64 %dres.i.{lab}")
                body.append(f"  {v} = load {st}, ptr {p}")
                t = self.alloca_t[x] if x in self.alloca_t else self.type_of(x)
                if t == "i1":
                    v2 = fn.fresh("drv")
                    body.append(f"  {v2} = trunc i8 {v} to i1")
                    v = v2
                dst = x if x in self.alloca_t else self.dm[x][0]
                body.append(f"  store {t} {v}, ptr {dst}")
            body.append(f"  br label %{self.term_label[lab]}")
            new.append((f"dres.{lab}", body))
        for off, (lab, lines) in enumerate(new):
            fn.blocks.insert(idx + 1 + off, (lab, lines))
            fn._by_label[lab] = lines

    def _declare_memcpy(self):
        self.p.declare("@llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")

    # -- the vector copy ----------------------------------------------------------------------------
    def _vector_copy(self):
        em = _VecEmitter(self)
        em.emit_all()

    def _head(self):
        """lane.head: a G-aligned lane whose group stands at one resume point (and is not
        finishing a divergence) runs the vector copy."""
        fn, G, p = self.fn, self.G, self.p
        head = self.raw["lane.head"]
        k = len(head) - 1
        while isinstance(head[k], (Phi, list)) or not head[k].strip():
            k -= 1
        term = parse(head[k].strip())
        if term.kind == "cbr":
            t, f = term.labels()
            cond = term.args[0][1]
            head[k] = f"  br i1 {cond}, label %{t}, label %lane.pick"
        else:
            f = term.labels()[0]
            head[k] = "  br label %lane.pick"
        if f != "lane.go":
            raise Unsupported("lane.head does not lead to lane.go")
        pick = ["  %pick.m = and i64 %lane, " + str(G - 1),
                "  %pick.al = icmp eq i64 %pick.m, 0",
                f"  %pick.end = add i64 %lane, {G}",
                f"  %pick.fits = icmp ule i64 %pick.end, {p.lanes}",
                "  %pick.ok = and i1 %pick.al, %pick.fits",
                "  br i1 %pick.ok, label %lane.pick2, label %lane.go"]
        pick2 = [f"  %pick.dp = getelementptr i32, ptr {self.dstate}, i64 %lane",
                 "  %pick.d = load i32, ptr %pick.dp",
                 "  %pick.dz = icmp eq i32 %pick.d, 0"]
        if p.state is not None:
            sv = _vt(G, "i32")
            pick2 += [f"  %pick.sp = getelementptr i32, ptr {p.state}, i64 %lane",
                      f"  %pick.sv = load {sv}, ptr %pick.sp, align 4",
                      "  %pick.s0 = extractelement " + sv + " %pick.sv, i64 0",
                      f"  %pick.ss0 = insertelement {sv} poison, i32 %pick.s0, i64 0",
                      f"  %pick.ss = shufflevector {sv} %pick.ss0, {sv} poison, {_vt(G, 'i32')} zeroinitializer",
                      f"  %pick.eq = icmp eq {sv} %pick.sv, %pick.ss",
                      f"  %pick.eqm = bitcast {_vt(G, 'i1')} %pick.eq to i{G}",
                      f"  %pick.all = icmp eq i{G} %pick.eqm, -1",
                      "  %pick.go = and i1 %pick.all, %pick.dz"]
        else:
            pick2 += ["  %pick.go = and i1 %pick.dz, true"]
        pick2.append("  br i1 %pick.go, label %g.entry, label %lane.go")
        idx = [x for x, _ in fn.blocks].index("lane.head")
        for off, (lab, lines) in enumerate((("lane.pick", pick), ("lane.pick2", pick2))):
            fn.blocks.insert(idx + 1 + off, (lab, lines))
            fn._by_label[lab] = lines


def _int(v: str):
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _pure(callee: str) -> bool:
    if callee.startswith(_IMPURE_INTRINSICS):
        return False
    return callee.startswith(_PURE_PREFIXES) or callee in _LIBM


def _vt(G: int, t: str) -> str:
    return f"<{G} x {t}>"


def _const_vec(G: int, t: str, v: str) -> str:
    return "<" + ", ".join(f"{t} {v}" for _ in range(G)) + ">"


class _VecEmitter:
    """Writes the vector copy: block `b` of the region becomes `g.b`."""

    def __init__(self, lg: _LaneGroups):
        self.lg, self.fn, self.G = lg, lg.fn, lg.G
        self.sh = lg.sh
        self.new_blocks: list = []
        self.twins = {}                 # alloca -> (twin alloca, vector?); an affine one holds lane 0's value
        for a in sorted(lg.used_allocas):
            t = lg.alloca_t[a]
            vec = lg.ash[a] != U and not _affine(lg.ash[a])
            name = self.fn.fresh("gx")
            self.fn.allocas.append(f"  {name} = alloca {_vt(self.G, t) if vec else t}, align 64")
            self.twins[a] = (name, vec)
        self.mem_twins = {}             # memory alloca -> G copies side by side
        for a, size in sorted(lg.mem_allocas.items()):
            name = self.fn.fresh("gm")
            self.fn.allocas.append(f"  {name} = alloca [{self.G * size} x i8], align 64")
            self.mem_twins[a] = name
        self.end_label = {}             # region block -> the label its vector copy ends in
        self.phi_fill = []              # (vector phi, scalar phi, shape)
        self.div_blocks = []            # the divergence exits' blocks (edges into lane.head)
        self.done_early = set()         # loads of the block already emitted with their group
        self.scalar0 = {}               # affine value -> its scalar of lane 0 (the vector made where used)
        self.src = None                 # the region block being copied
        self.chain_masks = {}           # block of a masked chain -> (i<G> mask, <G x i1> mask, exit)

    # -- output -------------------------------------------------------------------------------------
    def block(self, label):
        self.lines = []
        self.cur = label
        self.new_blocks.append((label, self.lines))
        self.splats = {}

    def emit(self, s: str):
        self.lines.append("  " + s)

    def op(self, s: str, hint="g") -> str:
        n = self.fn.fresh(hint)
        self.lines.append(f"  {n} = {s}")
        return n

    # -- names and operands ----------------------------------------------------------------------------
    def vname(self, x: str) -> str:
        return "%vlane" if x == "%lane" else f"{x}.g"

    def is_local(self, x: str) -> bool:
        """A name the vector copy has its own value of."""
        return x in self.lg.defined or x == "%lane" or x in self.mem_twins

    def shape(self, v):
        return self.lg.shape(v)

    def uop(self, v: str) -> str:
        """A uniform operand's scalar text."""
        if not _is_name(v):
            return v
        if v == "%lane":
            return "%lane"
        if v in self.lg.defined:
            if self.shape(v) != U:
                raise Unsupported(f"{v} is not uniform")
            return self.vname(v)
        return v

    def sop(self, v: str) -> str:
        """An operand of an instruction whose result is lane 0's: uniform, or lane 0's value of an
        affine one."""
        if v in self.scalar0:
            return self.scalar0[v]
        if v in self.mem_twins:
            return self.lane_op("ptr", v, 0)
        return self.uop(v)

    def vop(self, t: str, v: str) -> str:
        """An operand as a <G x t> vector."""
        s = self.shape(v)
        if v in self.scalar0:
            key = ("affine", t, v)
            if key not in self.splats:
                self.splats[key] = self._affine_vector(t, self.scalar0[v], s[1])
            return self.splats[key]
        if s == U:
            if not _is_name(v) and not v.startswith("@"):
                if v in ("poison", "undef"):
                    return v
                return _const_vec(self.G, t, v)
            key = (t, v)
            if key not in self.splats:
                vt = _vt(self.G, t)
                a = self.op(f"insertelement {vt} poison, {t} {self.uop(v)}, i64 0")
                self.splats[key] = self.op(f"shufflevector {vt} {a}, {vt} poison, {_vt(self.G, 'i32')} zeroinitializer")
            return self.splats[key]
        if s == L:
            vt = _vt(self.G, t)
            acc = "poison"
            for i in range(self.G):
                acc = self.op(f"insertelement {vt} {acc}, {t} {self.vname(v)}.{i}, i64 {i}")
            return acc
        return self.vname(v)

    def _affine_vector(self, t: str, x0: str, step: int) -> str:
        """Lane 0's value x0 + step x i for lane i, as a vector (modulo 2^width, as the values)."""
        G = self.G
        if t == "ptr":
            offs = "<" + ", ".join(f"i64 {step * i}" for i in range(G)) + ">"
            return self.op(f"getelementptr i8, ptr {x0}, {_vt(G, 'i64')} {offs}")
        w = strides.WIDTHS[t]
        offs = "<" + ", ".join(f"{t} {strides.signed(step * i, w)}" for i in range(G)) + ">"
        return self.op(f"add {_vt(G, t)} {self._splat(t, x0)}, {offs}")

    def lane_op(self, t: str, v: str, i: int) -> str:
        s = self.shape(v)
        if v in self.scalar0:
            if i == 0:
                return self.scalar0[v]
            if t == "ptr":
                return self.op(f"getelementptr i8, ptr {self.scalar0[v]}, i64 {s[1] * i}")
            return self.op(f"add {t} {self.scalar0[v]}, {strides.signed(s[1] * i, strides.WIDTHS[t])}")
        if s == U:
            return self.uop(v)
        if s == L:
            return f"{self.vname(v)}.{i}"
        if v == "%lane":
            return self.op(f"add i64 %lane, {i}")
        return self.op(f"extractelement {_vt(self.G, t)} {self.vname(v)}, i64 {i}")

    def lane0(self, t, v):
        return self.lane_op(t, v, 0)

    def define(self, res: str, value: str):
        """Name the vector copy's result of `res` (a value computed under another name)."""
        self.lines.append(f"  {self.vname(res)} = {value}")

    # -- the copy -------------------------------------------------------------------------------------
    def emit_all(self):
        G, lg = self.G, self.lg
        self.block("g.entry")
        vt = _vt(G, "i64")
        a = self.op(f"insertelement {vt} poison, i64 %lane, i64 0")
        b = self.op(f"shufflevector {vt} {a}, {vt} poison, {_vt(G, 'i32')} zeroinitializer")
        iota = "<" + ", ".join(f"i64 {i}" for i in range(G)) + ">"
        self.emit(f"%vlane = add {vt} {b}, {iota}")
        for a, twin in self.mem_twins.items():
            # invocation i's copy of a memory alloca is bytes [i x size, (i + 1) x size) of the twin
            size = lg.mem_allocas[a]
            offs = "<" + ", ".join(f"i64 {i * size}" for i in range(G)) + ">"
            self.emit(f"{self.vname(a)} = getelementptr i8, ptr {twin}, {vt} {offs}")
        for ins in lg.head_ins:
            self.instruction(ins)
        self.emit("br label %g.lane.go")
        for lab in lg.region:
            b = lg.blocks[lab]
            self.block(f"g.{lab}")
            for ph in b.phis:
                s = self.sh.get(ph.name, U)
                if s == U:
                    node = Phi(self.vname(ph.name), ph.t)
                elif _affine(s):
                    node = Phi(self.fn.fresh("g0"), ph.t)
                    self.scalar0[ph.name] = node.name
                else:
                    node = Phi(self.vname(ph.name), _vt(G, ph.t))
                self.lines.insert(sum(isinstance(x, Phi) for x in self.lines), node)
                self.phi_fill.append((node, ph, s))
            self.done_early = set()
            self.src = lab
            body = b.ins[:-1]
            for n, ins in enumerate(body):
                if id(ins) in self.done_early:
                    continue
                if ins.kind == "load" and ins.res is not None and self.sh.get(ins.res, U) == V \
                        and self._interleaved(ins, body[n + 1:]):
                    continue
                if ins.kind == "store" and lab not in self.chain_masks \
                        and self._interleaved_store(ins, body[n + 1:]):
                    continue
                self.instruction(ins)
            self.terminator(lab, b.ins[-1])
        size = sum(len(lines) for _, lines in self.new_blocks)
        region = sum(len(lg.blocks[lab].ins) for lab in lg.region)
        limit = VECTOR_SIZE_SYNC if lg.p.state is not None else VECTOR_SIZE
        # each side with its helpers as LLVM inlines them: the lane code's float64 exp is one
        # call line but 40 instructions, as is the copy's vector exp, where bounds checks that
        # sort out addresses at run time add the same lines to either
        inlined = (sum(_inlined_extra(i.extra["callee"]) for lab in lg.region for i in lg.blocks[lab].ins
                       if i.kind == "call"),
                   sum(_inlined_extra(m) for _, lines in self.new_blocks for ln in lines
                       if isinstance(ln, str) for m in _HELPER_CALL.findall(ln)))
        if not lg.p.force and size + inlined[1] > limit * (region + inlined[0]):
            raise Unsupported(f"not worth it: the vector copy would be {(size + inlined[1]) / (region + inlined[0]):.1f} "
                              "times the lane code "
                              "(memory accesses sorted out at run time, work run once per invocation)")
        lg.within_budget(size)
        # phis: incoming values are computed at the end of each edge's block
        by_label = {lab: lines for lab, lines in self.new_blocks}
        for node, ph, s in self.phi_fill:
            for v, src in lg.incoming[id(ph)]:
                self.lines = by_label[self.end_label[src]]
                self.splats = {}
                term = self.lines.pop()
                val = self.uop(v) if s == U else self.sop(v) if _affine(s) else self.vop(ph.t, v)
                self.lines.append(term)
                node.incoming.append((val, self.end_label[src]))
        fn = self.fn
        idx = len(fn.blocks)
        for lab, lines in self.new_blocks:
            fn.blocks.insert(idx, (lab, lines))
            idx += 1
            fn._by_label[lab] = lines
        # the vector latch: the next group (or the scheduler)
        lat = [f"  %vnext = add i64 %lane, {G}",
               f"  %vmore = icmp ult i64 %vnext, {lg.p.lanes}",
               f"  br i1 %vmore, label %lane.head, label %{lg.p.latch_false}"]
        fn.blocks.append(("g.latch", lat))
        fn._by_label["g.latch"] = lat
        lane_phi = next(x for x in fn._by_label["lane.head"] if isinstance(x, Phi))
        lane_phi.incoming.append(("%vnext", "g.latch"))
        for lab in self.div_blocks:
            lane_phi.incoming.append(("%lane", lab))

    def instruction(self, ins: Ins):
        k = ins.kind
        if k == "store":
            self.store(ins)
            return
        if k == "atomic" and ins.op == "fence":
            self.emit(ins.text)
            return
        if ins.res is None and k == "call":
            self.call(ins)
            return
        if ins.res is None:
            raise Unsupported(f"{ins.text}")
        s = self.sh.get(ins.res, U)
        if s == U:
            self.uniform(ins)
            return
        if _affine(s) and k in ("bin", "cast", "gep", "select", "load"):
            # lane 0's value only: the vector is made where one is used (vop)
            x0 = self.fn.fresh("g0")
            if k == "load" and ins.args[0][1] in self.twins:
                self.lines.append(f"  {x0} = load {ins.rtype}, ptr {self.twins[ins.args[0][1]][0]}")
            else:
                body = _NAME.sub(lambda m: self.sop(m.group(0)), ins.text.split("=", 1)[1])
                self.lines.append(f"  {x0} ={body}")
            self.scalar0[ins.res] = x0
            return
        if s == L or k in ("atomic", "generic"):
            self.per_lane(ins)
            return
        getattr(self, "v_" + k)(ins)

    def uniform(self, ins: Ins):
        """The instruction as it is, on the uniform copies of its operands (lane 0's values of
        affine ones, where the rules found the result the same for the group)."""
        if ins.kind == "load" and ins.args[0][1] in self.twins:
            tw, vec = self.twins[ins.args[0][1]]
            self.define(ins.res, f"load {ins.rtype}, ptr {tw}")
            return
        body = ins.text.split("=", 1)[1]
        body = _NAME.sub(lambda m: self.sop(m.group(0)), body)
        self.lines.append(f"  {self.vname(ins.res)} ={body}")

    def per_lane(self, ins: Ins, keep_list=False):
        """G copies of the instruction, one per invocation in order; a scalar result becomes a
        vector, any other stays one value per invocation (L)."""
        body = ins.text.split("=", 1)[1] if ins.res is not None else ins.text
        types = self._operand_types(ins)
        outs = []
        for i in range(self.G):
            b = _NAME.sub(lambda m: self.lane_op(types.get(m.group(0), "i64"), m.group(0), i)
                          if self.is_local(m.group(0)) else m.group(0), body)
            if ins.res is None:
                self.lines.append("  " + b.strip())
            else:
                n = f"{self.vname(ins.res)}.{i}"
                self.lines.append(f"  {n} ={b}")
                outs.append(n)
        if ins.res is not None and self.sh.get(ins.res, U) != L:
            vt = _vt(self.G, ins.rtype)
            acc = "poison"
            for i, n in enumerate(outs[:-1]):
                acc = self.op(f"insertelement {vt} {acc}, {ins.rtype} {n}, i64 {i}")
            self.define(ins.res, f"insertelement {vt} {acc}, {ins.rtype} {outs[-1]}, i64 {self.G - 1}")

    def _operand_types(self, ins: Ins) -> dict:
        types = {}
        for t, v in ins.args:
            if _is_name(v):
                types[v] = t
        for n in ins.names():
            if n not in types and n in self.lg.defined:
                types[n] = self.lg.type_of(n)
            elif n not in types and n == "%lane":
                types[n] = "i64"
            elif n not in types and n in self.mem_twins:
                types[n] = "ptr"
        return types

    # -- vector forms ---------------------------------------------------------------------------------
    def v_bin(self, ins: Ins):
        t = ins.rtype
        flags = ins.text.split("=", 1)[1].split()[1:]
        fl = ""
        for f in flags:
            if f in _FLAGS:
                fl += f + " "
            else:
                break
        a, b = (self.vop(t, v) for _, v in ins.args)
        self.define(ins.res, f"{ins.op} {fl}{_vt(self.G, t)} {a}, {b}")

    def v_un(self, ins: Ins):
        t = ins.rtype
        self.define(ins.res, f"fneg {_vt(self.G, t)} {self.vop(t, ins.args[0][1])}")

    def v_cmp(self, ins: Ins):
        t = ins.args[0][0]
        a, b = (self.vop(t, v) for _, v in ins.args)
        self.define(ins.res, f"{ins.op} {ins.extra['pred']} {_vt(self.G, t)} {a}, {b}")

    def v_select(self, ins: Ins):
        (ct, c), (t, a), (_, b) = ins.args
        cc = f"i1 {self.uop(c)}" if self.shape(c) == U else f"{_vt(self.G, 'i1')} {self.vop('i1', c)}"
        vt = _vt(self.G, t)
        self.define(ins.res, f"select {cc}, {vt} {self.vop(t, a)}, {vt} {self.vop(t, b)}")

    def v_cast(self, ins: Ins):
        (t, a), = ins.args
        if not is_scalar(t):
            self.per_lane(ins)
            return
        self.define(ins.res, f"{ins.op} {_vt(self.G, t)} {self.vop(t, a)} to {_vt(self.G, ins.rtype)}")

    def v_gep(self, ins: Ins):
        (pt, base), *idx = ins.args
        parts = []
        if self.shape(base) == U:
            parts.append(f"ptr {self.uop(base)}")
        else:
            parts.append(f"{_vt(self.G, 'ptr')} {self.vop('ptr', base)}")
        for t, v in idx:
            if self.shape(v) == U:
                parts.append(f"{t} {self.uop(v)}")
            else:
                parts.append(f"{_vt(self.G, t)} {self.vop(t, v)}")
        self.define(ins.res, f"getelementptr{ins.extra['inbounds']} {ins.extra['et']}, " + ", ".join(parts))

    def v_load(self, ins: Ins):
        (pt, p), = ins.args
        t = ins.rtype
        G = self.G
        if p in self.twins:
            tw, vec = self.twins[p]
            self.define(ins.res, f"load {_vt(G, t) if vec else t}, ptr {tw}")
            return
        s = self.shape(p)
        align = ins.extra["align"] or str(SIZES.get(t, 1))
        vt = _vt(G, t)
        if _affine(s) and s[1] == SIZES.get(t):
            p0 = self.lane0("ptr", p)
            self.define(ins.res, f"load {vt}, ptr {p0}, align {align}")
            return
        ptrs = self.vop("ptr", p)
        gather = self._gather_decl(t)
        if _affine(s):
            self.define(ins.res, f"call {vt} {gather}({_vt(G, 'ptr')} {ptrs}, i32 {align}, "
                                 f"{_vt(G, 'i1')} {_const_vec(G, 'i1', 'true')}, {vt} poison)")
            return
        self.define(ins.res, self._load_any(t, ptrs, align, as_phi=True, orig=p))

    def _load_any(self, t: str, ptrs: str, align: str, as_phi: bool = False, orig=None) -> str:
        """G values of type t from the group's addresses, sorted out at run time: consecutive
        addresses (one vector load; tested first, the staging loops' case: 1.5-2% of bias_act and
        wg_arrays against testing one address first), one address (a scalar load, broadcast),
        else a gather. Returns the loaded vector's name, or (as_phi) the phi text that merges
        the paths."""
        G = self.G
        vt = _vt(G, t)
        gather = self._gather_decl(t)
        pi, sp = self._addresses_and_first(ptrs)
        contig = self._consecutive(pi, sp, SIZES[t])
        p0 = self.op(f"extractelement {_vt(G, 'ptr')} {ptrs}, i64 0")
        one, yes, no, join = (self.fn.label(x) for x in ("g.ld1", "g.ld", "g.gather", "g.ldj"))
        test = self.fn.label("g.ldc")
        self.emit(f"br i1 {contig}, label %{yes}, label %{test}")
        self.block(yes)
        if orig is not None:
            self._stride_prefetch(orig, t)
        v1 = self.op(f"load {vt}, ptr {p0}, align {align}")
        self.emit(f"br label %{join}")
        self.block(test)
        same = self._all_lanes(self.op(f"icmp eq {_vt(G, 'i64')} {pi}, {sp}"))
        self.emit(f"br i1 {same}, label %{one}, label %{no}")
        self.block(one)
        s0 = self.op(f"load {t}, ptr {p0}, align {align}")
        v0 = self._splat(t, s0)
        one_end = self.cur
        self.emit(f"br label %{join}")
        self.block(no)
        v2 = self.op(f"call {vt} {gather}({_vt(G, 'ptr')} {ptrs}, i32 {align}, "
                     f"{_vt(G, 'i1')} {_const_vec(G, 'i1', 'true')}, {vt} poison)")
        self.emit(f"br label %{join}")
        self.block(join)
        phi = f"phi {vt} [ {v0}, %{one_end} ], [ {v1}, %{yes} ], [ {v2}, %{no} ]"
        return phi if as_phi else self.op(phi)

    def _stride_prefetch(self, p: str, t: str):
        """Prefetch what this contiguous load will read PREFETCH_AHEAD iterations of its loop on
        (_ahead): the lines lane 0's and lane G-1's elements will be in."""
        a = self._ahead(p, PREFETCH_AHEAD)
        if a is None:
            return
        self.lg.p.declare("@llvm.prefetch.p0", "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)")
        ai = self.op(f"ptrtoint ptr {a} to i64")
        for off in (0, self.G * SIZES[t] - 1):
            q = self.op(f"inttoptr i64 {self.op(f'add i64 {ai}, {off}')} to ptr")
            self.emit(f"call void @llvm.prefetch.p0(ptr {q}, i32 0, i32 3, i32 1)")

    def _ahead(self, p: str, n: int) -> str | None:
        """Lane 0's value of address p n iterations of the innermost loop on, or None: the pure
        arithmetic p is made of (adds, multiplies, divisions, casts, selects, comparisons,
        address steps) cloned on scalars, with the loop's counter (a phi stepping by a uniform
        amount) advanced n steps and every other input at its current value. A guess only:
        what the load reads then depends on inputs that may change (a prefetch never faults);
        division stays safe, since the rules guard divisors with selects, which are cloned too."""
        defined = self.lg.defined
        chain, phis, seen, mixed = [], [], set(), []

        def walk(x, depth):
            if x in seen or x not in defined or depth > 40:
                return
            seen.add(x)
            d = defined[x][1]
            if isinstance(d, Phi):
                phis.append(d)
                return
            if d.kind not in ("bin", "cast", "gep", "select", "cmp"):
                return
            if not is_scalar(d.rtype) or not all(is_scalar(t) for t, _ in d.args):
                mixed.append(d)          # vectors of the scalar code (kept apart, L): no clone
                return
            for _, v in d.args:
                if _is_name(v):
                    walk(v, depth + 1)
            chain.append(d)
        walk(p, 0)
        if mixed:
            return None
        step = None
        for ph in phis:
            for v, _ in self.lg.incoming[id(ph)]:
                d = defined.get(v, (None, None))[1]
                if isinstance(d, Ins) and d.kind == "bin" and d.op == "add" and d.args[0][1] == ph.name \
                        and (not _is_name(d.args[1][1]) or self.shape(d.args[1][1]) == U):
                    step = (ph, d.args[1][1])
                    break
            if step:
                break
        if step is None:
            return None
        ph, inc = step
        inc = self.uop(inc) if _is_name(inc) else inc
        clone = {ph.name: self.op(f"add {ph.t} {self.lane0(ph.t, ph.name)}, {self.op(f'mul {ph.t} {inc}, {n}')}")}

        def operand(types, x):
            if x in clone:
                return clone[x]
            return self.lane0(types.get(x, "i64"), x) if x in defined or x == "%lane" else x
        for ins in chain:
            types = {v: t for t, v in ins.args}
            body = _NAME.sub(lambda m: operand(types, m.group(0)), ins.text.split("=", 1)[1])
            clone[ins.res] = self.op(body.strip())
        return clone.get(p)

    def _address_parts(self, p: str):
        """(base, byte offset) of a pointer made as inttoptr(base [+ constant]), else None."""
        d = self.lg.defined.get(p)
        if d is None or not isinstance(d[1], Ins) or d[1].op != "inttoptr":
            return None
        a = d[1].args[0][1]
        e = self.lg.defined.get(a)
        if e is not None and isinstance(e[1], Ins) and e[1].op == "add" and e[1].rtype == "i64":
            c = _int(e[1].args[1][1])
            if c is not None and _is_name(e[1].args[0][1]):
                return e[1].args[0][1], c
        return a, 0

    def _interleaved(self, first: Ins, rest: list) -> bool:
        """Loads of the leaves of one per-invocation aggregate (a vec4 in shared memory, say): k
        loads of one type at base + off, base + off + size, ... in this block with no store or
        call between. When the group's bases are k x size apart at run time, the group's k x G
        elements are one contiguous run: k vector loads and a de-interleave (shuffles) instead of
        k gathers; else each invocation's k elements load as one small vector and go through the
        same de-interleave. Emits the group and returns True, or returns False (nothing
        emitted)."""
        t = first.rtype
        size = SIZES.get(t)
        parts = self._address_parts(first.args[0][1])
        if size is None or parts is None or first.extra["volatile"] or self.shape(parts[0]) in (U, None):
            return False
        base, off0 = parts
        group = {off0: first}
        for ins in rest:
            if ins.kind in ("store", "call", "atomic"):
                break
            if ins.kind == "load" and ins.rtype == t and ins.res is not None and not ins.extra["volatile"] \
                    and self.sh.get(ins.res, U) == V:
                q = self._address_parts(ins.args[0][1])
                if q is not None and q[0] == base and q[1] not in group:
                    group[q[1]] = ins
        members = self._leaf_members(group, off0, size, base)
        if members is None:
            return False
        k, bs, G = len(members), self.shape(base), self.G
        vt, vi = _vt(G, t), _vt(G, "i64")
        if _affine(bs):
            # the bases step by the aggregate's size: one run, known at compile time
            b0 = self.lane0("i64", base)
        else:
            b0, bv, fast, slow, join = self._one_run(base, k * size, "g.ilv")
        # k vectors from lane 0's element on, then element j of invocation i is at i x k + j
        a0 = self.op(f"add i64 {b0}, {off0}")
        p0 = self.op(f"inttoptr i64 {a0} to ptr")
        wide = self.op(f"load <{k * G} x {t}>, ptr {p0}, align {size}")
        got = []
        for j in range(k):
            idx = ", ".join(f"i32 {i * k + j}" for i in range(G))
            leaf = f"shufflevector <{k * G} x {t}> {wide}, <{k * G} x {t}> poison, <{G} x i32> <{idx}>"
            if _affine(bs):
                self.define(members[j].res, leaf)
                self.done_early.add(id(members[j]))
            else:
                got.append(self.op(leaf))
        if _affine(bs):
            return True
        self.emit(f"br label %{join}")
        # slow: each invocation's k leaves as one small vector (they are consecutive in its
        # aggregate), then the same de-interleave: 16 loads of k elements and shuffles where
        # gathering each leaf loaded the k x G elements one by one (arrays_uvec4's staging, 4
        # runs of 4 uvec4s rows apart: 1.03x side by side, quartiles 1.01-1.04)
        self.block(slow)
        parts = []
        for i in range(G):
            bi = self.op(f"extractelement {vi} {bv}, i64 {i}")
            pi = self.op(f"inttoptr i64 {self.op(f'add i64 {bi}, {off0}')} to ptr")
            parts.append(self.op(f"load <{k} x {t}>, ptr {pi}, align {size}"))
        together = self._concat(parts, k, t)
        slow_vals = []
        for j in range(k):
            idx = ", ".join(f"i32 {i * k + j}" for i in range(G))
            slow_vals.append(self.op(f"shufflevector <{k * G} x {t}> {together}, <{k * G} x {t}> poison, "
                                     f"<{G} x i32> <{idx}>"))
        slow_end = self.cur
        self.emit(f"br label %{join}")
        self.block(join)
        for ins, a, b in zip(members, got, slow_vals):
            self.define(ins.res, f"phi {vt} [ {a}, %{fast} ], [ {b}, %{slow_end} ]")
            self.done_early.add(id(ins))
        return True

    def _interleaved_store(self, first: Ins, rest: list) -> bool:
        """Stores of the leaves of one per-invocation aggregate (a uvec4 staged into shared
        memory): k stores of one type to base + off, base + off + size, ... in this block, with
        no other memory access between and every value defined before the first. The group's
        values are interleaved (element j of invocation i at i x k + j) and, where the bases
        are k x size apart (known from the stride analysis, or tested at run time), stored as
        one run; else each invocation's k elements as one small vector. Each leaf went through
        a scatter, on AVX2 G single-element stores (arrays_uvec4's staging: 64 per group and
        uvec4; 1.065x side by side, quartiles 1.04-1.08). A struct's fields stored one by one
        come with a bounds check each, in blocks of their own: they stay scatters. Emits the
        group and returns True, or returns False (nothing emitted)."""
        (t, _), (_, p) = first.args
        size = SIZES.get(t)
        parts = self._address_parts(p)
        if size is None or parts is None or first.extra["volatile"] or p in self.twins \
                or self.shape(parts[0]) in (U, None):
            return False
        base, off0 = parts
        group, later = {off0: first}, set()
        for ins in rest:
            if ins.kind == "store" and ins.args[0][0] == t and not ins.extra["volatile"]:
                q = self._address_parts(ins.args[1][1])
                if q is None or q[0] != base or q[1] in group:
                    break
                group[q[1]] = ins
                continue
            if ins.kind in ("load", "store", "call", "atomic"):
                break
            if ins.res is not None:
                later.add(ins.res)
        # (a store of the base at another offset would move behind the group's: all or none)
        members = self._leaf_members(group, off0, size, base, whole=True)
        if members is None or any(m.args[0][1] in later for m in members):
            return False
        k, G = len(members), self.G
        vi = _vt(G, "i64")
        # the leaves side by side, then one interleaving shuffle
        cat = self._concat([self.vop(t, m.args[0][1]) for m in members], G, t)
        n = G * (1 << (k - 1).bit_length())
        idx = ", ".join(f"i32 {j * G + i}" for i in range(G) for j in range(k))
        wide = self.op(f"shufflevector <{n} x {t}> {cat}, <{n} x {t}> poison, <{k * G} x i32> <{idx}>")
        for m in members:
            self.done_early.add(id(m))
        if _affine(self.shape(base)):
            a0 = self.op(f"add i64 {self.lane0('i64', base)}, {off0}")
            self.emit(f"store <{k * G} x {t}> {wide}, ptr {self.op(f'inttoptr i64 {a0} to ptr')}, align {size}")
            return True
        b0, bv, fast, slow, join = self._one_run(base, k * size, "g.ilst")
        a0 = self.op(f"add i64 {b0}, {off0}")
        self.emit(f"store <{k * G} x {t}> {wide}, ptr {self.op(f'inttoptr i64 {a0} to ptr')}, align {size}")
        self.emit(f"br label %{join}")
        self.block(slow)
        for i in range(G):
            mine = ", ".join(f"i32 {i * k + j}" for j in range(k))
            v = self.op(f"shufflevector <{k * G} x {t}> {wide}, <{k * G} x {t}> poison, <{k} x i32> <{mine}>")
            bi = self.op(f"extractelement {vi} {bv}, i64 {i}")
            pi = self.op(f"inttoptr i64 {self.op(f'add i64 {bi}, {off0}')} to ptr")
            self.emit(f"store <{k} x {t}> {v}, ptr {pi}, align {size}")
        self.emit(f"br label %{join}")
        self.block(join)
        return True

    def _leaf_members(self, group: dict, off0: int, size: int, base: str, whole: bool = False):
        """The accesses of `group` ({byte offset: Ins} from one base) at off0, off0 + size, ...
        while there are; None unless 2 to 4 (and, `whole`, the whole group), or where the bases
        are known to step by other than the aggregate's size."""
        k = 0
        while off0 + k * size in group:
            k += 1
        bs = self.shape(base)
        if k < 2 or k > 4 or (whole and len(group) != k) or (_affine(bs) and bs[1] != k * size):
            return None
        return [group[off0 + j * size] for j in range(k)]

    def _one_run(self, base: str, step: int, tag: str):
        """A branch on whether the group's i64 bases step by `step` bytes (one run): returns lane
        0's base, the bases as a vector, and the labels (run, not, join), emitting in `run`."""
        vi = _vt(self.G, "i64")
        bv = self.vop("i64", base)
        b0 = self.op(f"extractelement {vi} {bv}, i64 0")
        run = self._consecutive(bv, self._splat("i64", b0), step)
        fast, slow, join = (self.fn.label(x) for x in (tag, tag + ".slow", tag + "j"))
        self.emit(f"br i1 {run}, label %{fast}, label %{slow}")
        self.block(fast)
        return b0, bv, fast, slow, join

    def _concat(self, parts: list, n: int, t: str) -> str:
        """The <n x t> vectors `parts` one after the other, padded with poison to a power of two
        of them."""
        parts = list(parts)
        while len(parts) & (len(parts) - 1):
            parts.append("poison")
        while len(parts) > 1:
            idx = ", ".join(f"i32 {x}" for x in range(2 * n))
            parts = [self.op(f"shufflevector <{n} x {t}> {a}, <{n} x {t}> {b}, <{2 * n} x i32> <{idx}>")
                     for a, b in zip(parts[::2], parts[1::2])]
            n *= 2
        return parts[0]

    def _contiguous(self, ptrs: str, size: int) -> str:
        """Whether the group's addresses are consecutive elements of `size` bytes (an i1)."""
        return self._consecutive(*self._addresses_and_first(ptrs), size)

    def _addresses_and_first(self, ptrs: str) -> tuple[str, str]:
        """The group's addresses as <G x i64>, and invocation 0's splat over the group."""
        G = self.G
        vi = _vt(G, "i64")
        pi = self.op(f"ptrtoint {_vt(G, 'ptr')} {ptrs} to {vi}")
        return pi, self._splat("i64", self.op(f"extractelement {vi} {pi}, i64 0"))

    def _consecutive(self, pi: str, sp: str, step: int) -> str:
        """Whether invocation i's address pi[i] is sp[i] + i x step for the whole group."""
        vi = _vt(self.G, "i64")
        steps = "<" + ", ".join(f"i64 {i * step}" for i in range(self.G)) + ">"
        want = self.op(f"add {vi} {sp}, {steps}")
        return self._all_lanes(self.op(f"icmp eq {vi} {pi}, {want}"))

    def _all_lanes(self, cmp: str) -> str:
        """Whether a <G x i1> is true for every invocation of the group (an i1)."""
        G = self.G
        bits = self.op(f"bitcast {_vt(G, 'i1')} {cmp} to i{G}")
        return self.op(f"icmp eq i{G} {bits}, -1")

    def _gather_decl(self, t: str) -> str:
        G = self.G
        name = f"@llvm.masked.gather.v{G}{_mangle(t)}.v{G}p0"
        self.lg.p.declare(name, f"declare {_vt(G, t)} {name}({_vt(G, 'ptr')}, i32, {_vt(G, 'i1')}, {_vt(G, t)})")
        return name

    def _scatter_decl(self, t: str) -> str:
        G = self.G
        name = f"@llvm.masked.scatter.v{G}{_mangle(t)}.v{G}p0"
        self.lg.p.declare(name, f"declare void {name}({_vt(G, t)}, {_vt(G, 'ptr')}, i32, {_vt(G, 'i1')})")
        return name

    def store(self, ins: Ins):
        (t, v), (pt, p) = ins.args
        G = self.G
        if self.src in self.chain_masks:
            self._masked_store(ins)
            return
        if p in self.twins:
            tw, vec = self.twins[p]
            if vec:
                self.emit(f"store {_vt(G, t)} {self.vop(t, v)}, ptr {tw}")
            else:
                self.emit(f"store {t} {self.sop(v)}, ptr {tw}")
            return
        s, sv = self.shape(p), self.shape(v)
        vol = "volatile " if ins.extra["volatile"] else ""
        align = ins.extra["align"] or str(SIZES.get(t, 1))
        if s == U:
            # every invocation stores to one address: the last one's value is what stays
            val = self.uop(v) if sv == U else self.lane_op(t, v, G - 1)
            self.emit(f"store {vol}{t} {val}, ptr {self.uop(p)}, align {align}")
            return
        if not is_scalar(t) or vol:
            self.per_lane(ins)
            return
        vt = _vt(G, t)
        vals = self.vop(t, v)
        if _affine(s) and s[1] == SIZES.get(t):
            p0 = self.lane0("ptr", p)
            self.emit(f"store {vt} {vals}, ptr {p0}, align {align}")
            return
        ptrs = self.vop("ptr", p)
        scatter = self._scatter_decl(t)
        call = (f"call void {scatter}({vt} {vals}, {_vt(G, 'ptr')} {ptrs}, i32 {align}, "
                f"{_vt(G, 'i1')} {_const_vec(G, 'i1', 'true')})")
        if _affine(s):
            self.emit(call)
            return
        contig = self._contiguous(ptrs, SIZES[t])
        yes, no, join = self.fn.label("g.st"), self.fn.label("g.scatter"), self.fn.label("g.stj")
        self.emit(f"br i1 {contig}, label %{yes}, label %{no}")
        self.block(yes)
        p0 = self.op(f"extractelement {_vt(G, 'ptr')} {ptrs}, i64 0")
        self.emit(f"store {vt} {vals}, ptr {p0}, align {align}")
        self.emit(f"br label %{join}")
        self.block(no)
        self.emit(call)
        self.emit(f"br label %{join}")
        self.block(join)

    def _masked_store(self, ins: Ins):
        """A store of a masked chain (_LaneGroups._masked_branches): by the invocations that take
        the chain only; to one address, the last of them's value."""
        (t, v), (_, p) = ins.args
        G = self.G
        bits, mask, _ = self.chain_masks[self.src]
        align = ins.extra["align"] or str(SIZES.get(t, 1))
        s = self.shape(p)
        if s == U:
            if self.shape(v) == U:
                val = self.uop(v)
            else:
                ctlz = f"@llvm.ctlz.i{G}"
                self.lg.p.declare(ctlz, f"declare i{G} {ctlz}(i{G}, i1)")
                lead = self.op(f"call i{G} {ctlz}(i{G} {bits}, i1 true)")
                last = self.op(f"zext i{G} {self.op(f'sub i{G} {G - 1}, {lead}')} to i64")
                val = self.op(f"extractelement {_vt(G, t)} {self.vop(t, v)}, i64 {last}")
            self.emit(f"store {t} {val}, ptr {self.uop(p)}, align {align}")
        elif _affine(s) and s[1] == SIZES.get(t):
            name = f"@llvm.masked.store.v{G}{_mangle(t)}.p0"
            self.lg.p.declare(name, f"declare void {name}({_vt(G, t)}, ptr, i32, {_vt(G, 'i1')})")
            self.emit(f"call void {name}({_vt(G, t)} {self.vop(t, v)}, ptr {self.lane0('ptr', p)}, "
                      f"i32 {align}, {_vt(G, 'i1')} {mask})")
        else:
            self.emit(f"call void {self._scatter_decl(t)}({_vt(G, t)} {self.vop(t, v)}, "
                      f"{_vt(G, 'ptr')} {self.vop('ptr', p)}, i32 {align}, {_vt(G, 'i1')} {mask})")

    def _masked_branch(self, lab: str, c: str):
        """The branch of a masked chain: to the chain when any invocation of the group takes it
        (its mask then guards the chain's stores and bounds checks), else on to the join."""
        chain, join, false_side = self.lg.masked[lab]
        G = self.G
        bits = self._mask(c, not false_side)
        mask = self.op(f"bitcast i{G} {bits} to {_vt(G, 'i1')}")
        div = self._divergence(lab)
        for x in chain:
            self.chain_masks[x] = (bits, mask, div)
        some = self.op(f"icmp ne i{G} {bits}, 0")
        self.emit(f"br i1 {some}, label %{self._target(chain[0])}, label %{self._target(join)}")

    def v_call(self, ins: Ins):
        callee = ins.extra["callee"]
        base, types = _intrinsic(callee)
        if base in _VECTOR_INTRINSICS and is_scalar(ins.rtype) and all(is_scalar(t) for t, _ in ins.args):
            def immediate(v):
                if self.shape(v) != U:
                    raise Unsupported(f"a varying immediate of {callee}")
                return self.uop(v)
            self.define(ins.res, intrinsic_vector_call(ins, self.G, self.vop, immediate, self.lg.p.declare))
            return
        if self._vector_call(ins):
            return
        self.per_lane(ins)

    def _vector_call(self, ins: Ins) -> bool:
        """A call of a straight-line helper (jitcoop.codegen.helpers: the small-float conversions)
        on vectors: its vector version, made once per module (vector_helper). False when there
        is none."""
        callee = ins.extra["callee"]
        if not callee.startswith("jc.") or not is_scalar(ins.rtype):
            return False
        name = vector_helper(callee[3:], self.G, self.lg.p.declare)
        if name is None:
            return False
        G = self.G
        args = ", ".join(f"{_vt(G, t)} {self.vop(t, v)}" for t, v in ins.args)
        self.define(ins.res, f"call {_vt(G, ins.rtype)} {name}({args})")
        return True

    def call(self, ins: Ins):
        """A call without a result: once if pure and uniform, once for a run of lanes
        (LANE_RUN_HELPERS), else per invocation."""
        if _pure(ins.extra["callee"]) and all(self.shape(n) == U for n in ins.names()):
            self.emit(_NAME.sub(lambda m: self.uop(m.group(0)), ins.text))
            return
        if self.lg.lane_run(ins):
            *rest, (_, lane), _ = ins.args
            args = [f"{t} {self.uop(v)}" for t, v in rest] + [f"i64 {self.sop(lane)}", f"i64 {self.G}"]
            self.emit(f"call void @{ins.extra['callee']}({', '.join(args)})")
            return
        self.per_lane(ins)

    # -- control flow ---------------------------------------------------------------------------------
    def _target(self, lab: str) -> str:
        if lab == "lane.latch":
            return "g.latch"
        if lab in ("fail", "failed"):
            return lab
        return f"g.{lab}"

    def terminator(self, lab: str, t: Ins):
        lg, G = self.lg, self.G
        if t.kind == "br" and lab in lg.exits:
            # a guarded instruction follows: a widening (the group goes on where its values do
            # not wrap) or loads taken as uniform (where the group's slots hold one value)
            ok = None
            for x in lg.guard_at[lab]:
                o = self._same_row(x) if x in lg.speculated else self._no_wrap(x)
                ok = o if ok is None else self.op(f"and i1 {ok}, {o}")
            div = self._divergence(lab)
            self.emit(f"br i1 {ok}, label %{self._target(t.labels()[0])}, label %{div}")
        elif t.kind == "br":
            self.emit(f"br label %{self._target(t.labels()[0])}")
        elif t.kind == "end":
            if t.op == "ret":
                raise Unsupported("a return from the lane region")
            self.emit(t.text)
        elif t.kind == "cbr" and lab in lg.masked:
            self._masked_branch(lab, t.args[0][1])
        elif t.kind == "cbr" and lab in self.chain_masks and "fail" in t.labels() and lab in lg.exits:
            # a bounds check in a masked chain: on when no invocation taking the chain fails
            c = t.args[0][1]
            tl, fl = t.labels()
            bits, _, div = self.chain_masks[lab]
            hit = self.op(f"and i{G} {self._mask(c, tl == 'fail')}, {bits}")
            none = self.op(f"icmp eq i{G} {hit}, 0")
            self.emit(f"br i1 {none}, label %{self._target(fl if tl == 'fail' else tl)}, label %{div}")
        elif t.kind == "cbr":
            c = t.args[0][1]
            tl, fl = t.labels()
            if lab not in lg.exits:
                # uniform (or the cancel check, uniform by nature)
                if "fail" in (tl, fl):
                    self._cancel_phis(lab)
                # a loop the generator kept rolled (an element loop, llvm.loop.unroll.disable)
                # stays rolled here: fully unrolled, one of 128 components in vector code made
                # blocks whose instruction scheduling took most of a 55 s compile
                md = (f", !llvm.loop {lg.p.loop_md()}" if "!llvm.loop" in t.text and lg.p.loop_md is not None
                      else "")
                self.emit(f"br i1 {self.uop(c)}, label %{self._target(tl)}, label %{self._target(fl)}{md}")
            elif "fail" in (tl, fl):
                # the group goes on only when no invocation fails here
                ok = fl if tl == "fail" else tl
                ends = self._ends(c)
                if ends is not None:
                    none = ends[1] if tl == "fail" else ends[0]
                else:
                    cv = self._mask(c, tl == "fail")
                    none = self.op(f"icmp eq i{G} {cv}, 0")
                div = self._divergence(lab)
                self.lines.append(f"  br i1 {none}, label %{self._target(ok)}, label %{div}")
            elif self.shape(c) == U:
                self.emit(f"br i1 {self.uop(c)}, label %{self._target(tl)}, label %{self._target(fl)}")
            else:
                ends = self._ends(c)
                if ends is not None:
                    allt, nonet = ends
                else:
                    m = self._mask(c, True)
                    allt = self.op(f"icmp eq i{G} {m}, -1")
                    nonet = self.op(f"icmp eq i{G} {m}, 0")
                rest = self.fn.label("g.mixed")
                self.emit(f"br i1 {allt}, label %{self._target(tl)}, label %{rest}")
                self.block(rest)
                div = self._divergence(lab)
                self.emit(f"br i1 {nonet}, label %{self._target(fl)}, label %{div}")
        elif t.kind == "switch":
            sel_t, sel = t.args[0]
            body = t.text[len("switch "):]
            rest = body.split(",", 1)[1]
            rest = re.sub(r"label %([-a-zA-Z$._0-9]+)", lambda m: f"label %{self._target(m.group(1))}", rest)
            if self.shape(sel) == U:
                self.emit(f"switch {sel_t} {self.uop(sel)},{rest}")
            else:
                vt = _vt(G, sel_t)
                v = self.vop(sel_t, sel)
                s0 = self.lane0(sel_t, sel)
                sp = self._splat(sel_t, s0)
                same = self._all_lanes(self.op(f"icmp eq {vt} {v}, {sp}"))
                go = self.fn.label("g.sw")
                div = self._divergence(lab)
                self.emit(f"br i1 {same}, label %{go}, label %{div}")
                self.block(go)
                self.emit(f"switch {sel_t} {s0},{rest}")
        else:
            raise Unsupported(f"terminator {t.text}")
        self.end_label[lab] = self.cur

    def _first_last(self, t: str, x: str):
        """The least and greatest of lane 0's and lane G-1's values of affine x (the group's
        values lie between them unless they wrap, which the caller tests), or None where the
        group spans half the type's range or more."""
        step = self.shape(x)[1]
        w = strides.WIDTHS[t]
        if abs(step) * (self.G - 1) >= 1 << (w - 1):
            return None
        first = self.lane0(t, x)
        last = self.op(f"add {t} {first}, {strides.signed(step * (self.G - 1), w)}")
        lo, hi = (first, last) if step > 0 else (last, first)
        return lo, hi

    def _no_wrap(self, x: str) -> str:
        """The guard of a widening x (lane_strides.needs_guard): its operand's values in the group
        do not wrap, unsigned for zext, signed for sext."""
        ins = self.lg.defined[x][1]
        (t, v), = ins.args
        lo, hi = self._first_last(t, v)
        return self.op(f"icmp {'s' if ins.op == 'sext' else 'u'}le {t} {lo}, {hi}")

    def _same_row(self, x: str) -> str:
        """The guard of a load taken as uniform or affine (_LaneGroups._row_loads): the group's G
        slots hold lane 0's bits (plus the stride times the lane)."""
        ins = self.lg.defined[x][1]
        t, G = ins.rtype, self.G
        it = f"i{SIZES[t] * 8}" if t != "i1" else "i8"
        # the slot address from its row (defined outside the region): the guard of a run is
        # tested before the later loads' own addresses are computed
        g = self.lg.defined[ins.args[0][1]][1]
        p = self.op(f"getelementptr {g.extra['et']}, ptr {g.args[0][1]}, i64 %lane")
        vec = self.op(f"load {_vt(G, it)}, ptr {p}, align 1")
        first = self.op(f"extractelement {_vt(G, it)} {vec}, i64 0")
        s = self.lg.speculated[x]
        want = self._affine_vector(it, first, s[1]) if _affine(s) else self._splat(it, first)
        return self._all_lanes(self.op(f"icmp eq {_vt(G, it)} {vec}, {want}"))

    def _ends(self, c: str):
        """(all, none): whether condition c is true for every invocation of the group, and for
        none of them (two i1), decided from lane 0 and lane G-1 where c orders an affine value
        against a uniform bound (lane_strides.ordered) and the group's values do not wrap
        between them (a wrap: neither, so that the scalar code decides); None elsewhere."""
        d = self.lg.defined.get(c)
        if d is None or not isinstance(d[1], Ins):
            return None
        o = strides.ordered(d[1], self.shape)
        if o is None:
            return None
        x, bound, pred = o
        t = d[1].args[0][0]
        ends = self._first_last(t, x)
        if ends is None:
            return None
        lo, hi = ends
        sign = "s" if pred[0] == "s" else "u"
        ok = self.op(f"icmp {sign}le {t} {lo}, {hi}")
        b = self.uop(bound)
        inner, outer = (hi, lo) if pred in strides.BELOW else (lo, hi)
        # the predicate holds for all where it holds at the end where it is hardest to hold
        every = self.op(f"icmp {pred} {t} {inner}, {b}")
        some = self.op(f"icmp {pred} {t} {outer}, {b}")
        return (self.op(f"and i1 {ok}, {every}"),
                self.op(f"and i1 {ok}, {self.op(f'xor i1 {some}, true')}"))

    def _splat(self, t, x):
        vt = _vt(self.G, t)
        a = self.op(f"insertelement {vt} poison, {t} {x}, i64 0")
        return self.op(f"shufflevector {vt} {a}, {vt} poison, {_vt(self.G, 'i32')} zeroinitializer")

    def _mask(self, c: str, true_bits: bool) -> str:
        """The group's bits of an i1 operand (bit i: invocation i's value)."""
        G = self.G
        if self.shape(c) == U:
            u = self.uop(c)
            return self.op(f"select i1 {u}, i{G} -1, i{G} 0")
        m = self.op(f"bitcast {_vt(G, 'i1')} {self.vop('i1', c)} to i{G}")
        return m if true_bits else self.op(f"xor i{G} {m}, -1")

    def _cancel_phis(self, lab: str):
        """The failure block's phis get this vector block's edge: the scalar block's values
        (uniform, or lane 0's: the group's first invocation)."""
        here = self.cur
        for ph, inc in zip(self.lg.blocks["fail"].phis, self.lg.fail_incoming):
            for v, src in inc:
                if src == lab:
                    if self.shape(v) == U:
                        val = self.uop(v)
                    else:
                        val = self.lane0("i64", v)
                    ph.incoming.append((val, here))

    def _divergence(self, lab: str) -> str:
        """The block that leaves the vector copy at `lab`'s terminator: what is live there goes to
        the dslots, the group's invocations are marked, and the lane loop runs them from there."""
        lg, G = self.lg, self.G
        name = self.fn.label(f"g.div.{lab}")
        saved_lines, saved_cur, saved_splats = self.lines, self.cur, self.splats
        self.block(name)
        for x in lg.exits[lab]:
            row, st = lg._slot(x)
            if x in self.mem_twins:
                lg._declare_memcpy()
                self.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {row}, ptr {self.mem_twins[x]}, "
                          f"i64 {G * lg.mem_allocas[x]}, i1 false)")
                continue
            if x in self.twins:
                tw, vec = self.twins[x]
                t = lg.alloca_t[x]
                val = self.op(f"load {_vt(G, t) if vec else t}, ptr {tw}")
                a = lg.ash[x]
                if vec:
                    self._store_slot(row, st, t, val, vector=True)
                elif _affine(a):
                    self._store_slot(row, st, t, self._affine_vector(t, val, a[1]), vector=True)
                else:
                    self._store_slot(row, st, t, self._splat(t, val), vector=True)
                continue
            t = lg.type_of(x)
            s = self.shape(x)
            if s == L:
                for i in range(G):
                    p = self.op(f"getelementptr {st}, ptr {row}, i64 {i}")
                    self.emit(f"store {st} {self.vname(x)}.{i}, ptr {p}")
                continue
            self._store_slot(row, st, t, self.vop(t, x), vector=True)
        dp = self.op(f"getelementptr i32, ptr {lg.dstate}, i64 %lane")
        self.emit(f"store {_vt(G, 'i32')} {_const_vec(G, 'i32', str(lg.exit_ids[lab]))}, ptr {dp}, align 4")
        self.emit("br label %lane.head")
        self.div_blocks.append(name)
        self.lines, self.cur, self.splats = saved_lines, saved_cur, saved_splats
        return name

    def _store_slot(self, row, st, t, val, vector):
        G = self.G
        if t == "i1":
            val = self.op(f"zext {_vt(G, 'i1')} {val} to {_vt(G, 'i8')}")
        self.emit(f"store {_vt(G, st)} {val}, ptr {row}, align 1")


_HELPER_CALL = re.compile(r"call [^@]*@(jc\.[-\w]+?)(?:\.v\d+)?\(")


@functools.lru_cache(maxsize=None)
def _inlined_extra(callee: str) -> int:
    """The instructions a call of helper `callee` (jc.NAME, or its vector form jc.NAME.vG: the
    same instructions on vectors) adds once LLVM inlines it: its body's, its own helper calls
    inlined too, less the call's line; 0 for anything else."""
    from .helpers import HELPERS
    text = HELPERS.get(callee[3:]) if callee.startswith("jc.") else None
    if text is None:
        return 0
    body = [ln.strip() for ln in text.strip().splitlines()[1:-1]]
    body = [ln for ln in body if ln and not ln.startswith(";") and not ln.endswith(":")]
    return len(body) - 1 + sum(_inlined_extra(m) for ln in body for m in _HELPER_CALL.findall(ln))


_vector_helpers: dict = {}      # (name, G) -> (its name or None, the declarations it needs)


def vector_helper(name: str, G: int, declare) -> str | None:
    """The G-wide version of helper `name` (a straight-line function of scalars: the float16,
    bfloat16 conversions and roundings), declared in the module through `declare`: each
    instruction on <G x T>, calls of other helpers and of elementwise intrinsics in their vector
    forms. None for a helper with control flow or anything else. Made once per process (a kernel
    calls it at every conversion of its lane code)."""
    key = (name, G)
    if key not in _vector_helpers:
        decls: dict = {}
        _vector_helpers[key] = (_make_vector_helper(name, G, decls.setdefault), decls)
    vname, decls = _vector_helpers[key]
    for d, text in decls.items():
        declare(d, text)
    return vname


def _make_vector_helper(name: str, G: int, declare) -> str | None:
    from .helpers import HELPERS
    vname = f"@jc.{name}.v{G}"
    if name not in HELPERS:
        return None
    lines = HELPERS[name].strip().splitlines()
    m = re.match(r"^define internal (\S+) @jc\.[-\w.]+\((.*)\)[^{]*\{$", lines[0])
    if not m or lines[-1] != "}":
        return None
    rt = m.group(1)
    params = [p.strip().split() for p in m.group(2).split(",") if p.strip()]
    if not is_scalar(rt) or any(len(p) != 2 or not is_scalar(p[0]) for p in params):
        return None
    body = [ln.strip() for ln in lines[1:-1] if ln.strip() and not ln.strip().startswith(";")]
    if any(ln.endswith(":") for ln in body):
        return None                     # more than one block
    vt = lambda t: _vt(G, t)

    def vo(t, v):
        return v if _is_name(v) else ("poison" if v in ("poison", "undef") else _const_vec(G, t, v))
    out = []
    for ln in body:
        try:
            ins = parse(ln)
        except Unsupported:
            return None
        r = f"{ins.res} = " if ins.res else ""
        k = ins.kind
        if k in PURE_KINDS:
            try:
                out.append(r + pure_vector_form(ins, G, vo))
            except Unsupported:
                return None
        elif k == "call":
            callee = ins.extra["callee"]
            base, types = _intrinsic(callee)
            args = ", ".join(f"{vt(t)} {vo(t, v)}" for t, v in ins.args)
            if callee.startswith("jc."):
                inner = vector_helper(callee[3:], G, declare)
                if inner is None:
                    return None
                out.append(f"{r}call {vt(ins.rtype)} {inner}({args})")
            elif base in _VECTOR_INTRINSICS and base not in _IMMARG:
                iname = _vector_intrinsic(base, types, G)
                declare(f"@{iname}", f"declare {vt(ins.rtype)} @{iname}({', '.join(vt(t) for t, _ in ins.args)})")
                out.append(f"{r}call {vt(ins.rtype)} @{iname}({args})")
            else:
                return None
        elif k == "end" and ins.op == "ret":
            t, v = ins.text.split()[1], ins.text.split()[2]
            out.append(f"ret {vt(t)} {vo(t, v)}")
        else:
            return None
    header = f"define internal {vt(rt)} {vname}({', '.join(f'{vt(t)} {n}' for t, n in params)}) alwaysinline {{"
    declare(vname, "\n".join([header] + ["  " + x for x in out] + ["}"]))
    return vname


def intrinsic_vector_call(ins: Ins, G: int, vop, immediate, declare) -> str:
    """The G-wide call of an elementwise intrinsic (base name in _VECTOR_INTRINSICS), as the text
    after `res = `: vop(t, v) gives an operand as a <G x t> vector, immediate(v) an immediate
    argument's scalar text (raising Unsupported where it differs between invocations)."""
    base, types = _intrinsic(ins.extra["callee"])
    imm = _IMMARG.get(base, set())
    args, arg_types = [], []
    for k, (t, v) in enumerate(ins.args):
        vt = t if k in imm else _vt(G, t)
        args.append(f"{vt} {immediate(v) if k in imm else vop(t, v)}")
        arg_types.append(vt)
    vname = _vector_intrinsic(base, types, G)
    declare(f"@{vname}", f"declare {_vt(G, ins.rtype)} @{vname}({', '.join(arg_types)})")
    return f"call {_vt(G, ins.rtype)} @{vname}({', '.join(args)})"


PURE_KINDS = ("bin", "un", "cmp", "select", "cast")


def pure_vector_form(ins: Ins, G: int, vop, scalar_cond: bool = False) -> str:
    """The G-wide form of a pure instruction (kinds PURE_KINDS), as the text after `res = `:
    vop(t, v) gives an operand as a <G x t> vector; scalar_cond: a select's condition stays an
    i1 (the same for all G). Unsupported for a cast of an aggregate."""
    vt = lambda t: _vt(G, t)
    k = ins.kind
    if k == "bin":
        (t, a), (_, b) = ins.args
        flags = " ".join(f for f in ins.text.split("=", 1)[1].split()[1:] if f in _FLAGS)
        return f"{ins.op} {flags + ' ' if flags else ''}{vt(t)} {vop(t, a)}, {vop(t, b)}"
    if k == "un":
        (t, a), = ins.args
        return f"fneg {vt(t)} {vop(t, a)}"
    if k == "cmp":
        (t, a), (_, b) = ins.args
        return f"{ins.op} {ins.extra['pred']} {vt(t)} {vop(t, a)}, {vop(t, b)}"
    if k == "select":
        (_, c), (t, a), (_, b) = ins.args
        cond = f"i1 {c}" if scalar_cond else f"{vt('i1')} {vop('i1', c)}"
        return f"select {cond}, {vt(t)} {vop(t, a)}, {vt(t)} {vop(t, b)}"
    (t, a), = ins.args
    if not is_scalar(t) or not is_scalar(ins.rtype):
        raise Unsupported("a cast of an aggregate")
    return f"{ins.op} {vt(t)} {vop(t, a)} to {vt(ins.rtype)}"


def _vector_intrinsic(base: str, types, G: int) -> str:
    """The name of an overloaded intrinsic's G-wide form (llvm.fabs.f32 -> llvm.fabs.v8f32)."""
    return "llvm." + base + "".join(f".v{G}{x}" for x in types)


def _mangle(t: str) -> str:
    return {"float": "f32", "double": "f64", "half": "f16", "bfloat": "bf16", "ptr": "p0"}.get(t, t)


def _intrinsic(callee: str):
    """(base name, overloaded type suffixes) of an llvm.* intrinsic name, else (None, [])."""
    if not callee.startswith("llvm."):
        return None, []
    parts = callee[len("llvm."):].split(".")
    types = []
    while parts and re.match(r"^(i\d+|f16|f32|f64|bf16|p0)$", parts[-1]):
        types.insert(0, parts.pop())
    return ".".join(parts), types
