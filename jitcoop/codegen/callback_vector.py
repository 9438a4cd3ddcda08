"""Callbacks in vector form: a per-element Func run for G elements at once.

A per-element operation calls its Func once per element (jitcoop.codegen.callback): for a
16 x 16 accumulator that is 256 calls of a few instructions each, every one with its own index
arithmetic, loads and checks, none of it in vector registers. The G elements of one fragment
register of G consecutive invocations sit side by side in the operand's block, so the same
Func on G of them at once is the scalar function with every varying value a <G x T> vector.
This module writes that function from the scalar callback's LLVM text:

    { <G x T>, i1 } @cb<fid>.v<G>(<G x ...> per-element parameters, context, <G x i64> %lane)

The second result says whether the G elements completed here. The vector form does the work of
the scalar one only where every element takes the same path: a branch whose condition differs
between them, any way into the callback's failure block (an out-of-bounds read, say), returns
false at once, having written nothing, and the caller runs the scalar callback on each of the G
elements, which does and reports exactly what it always did. So results, failures and their
report (instruction, workgroup, lane) are those of the scalar callback: each element's value
comes from the same instructions on the same operands (the C library's functions are called per
element, on each vector lane; GLSL Exp of float32 is jitcoop's own e^x, helpers.exp_f64, whose
vector form gives the scalar one's bits).

Values the same for all G elements (the context: buffers, push constants, the workgroup) stay
scalars. Only callbacks without effects take this form: a store outside the callback's own
Function variables, an atomic, a call of a function with effects leaves the callback scalar
(`vector_callback` returns None).
"""
from __future__ import annotations

import re

from .lanevec import (_VECTOR_INTRINSICS, PURE_KINDS, SIZES, Unsupported, _const_vec, _intrinsic, _is_name, _mangle,
                      _pure, _vt, intrinsic_vector_call, is_scalar, parse, pure_vector_form, vector_helper)

_DEFINE = re.compile(r"^define internal (\S+) (@[-\w.]+)\((.*)\) alwaysinline \{$")
_PHI = re.compile(r"^(%[-\w.$]+) = phi (\S+) (.*)$")
_INCOMING = re.compile(r"\[\s*([^,\]]+),\s*%([-\w.$]+)\s*\]")
FAIL = "fail"       # the scalar callback's failure block (jitcoop.codegen.callback)


def vector_callback(text: str, G: int, varying: set, declare) -> tuple[str, str] | None:
    """(name, LLVM text) of the G-wide form of the callback whose scalar text is `text`, its
    parameters named in `varying` taking one value per element; None where it has no vector
    form. `declare(name, text)` adds what the vector form calls (intrinsics, helpers)."""
    try:
        return _Vectorizer(text, G, varying, declare).run()
    except Unsupported:
        return None


class _Vectorizer:
    def __init__(self, text: str, G: int, varying: set, declare):
        self.G, self.declare = G, declare
        lines = text.strip().splitlines()
        m = _DEFINE.match(lines[0])
        if not m or lines[-1] != "}":
            raise Unsupported("not a callback's text")
        self.rt, self.name = m.group(1), m.group(2)
        if not is_scalar(self.rt):
            raise Unsupported("a callback returning an aggregate")
        self.params = [p.strip().rsplit(" ", 1) for p in m.group(3).split(",")]
        self.varying = set(varying)
        self.blocks: list[tuple[str, list]] = []        # (label, [Ins | ("phi", res, t, [(v, lab)])])
        self.allocas: dict[str, str] = {}               # alloca name -> element type
        for ln in lines[1:-1]:
            s = ln.strip()
            if not s or s.startswith(";"):
                continue
            if s.endswith(":") and " " not in s:
                self.blocks.append((s[:-1], []))
                continue
            pm = _PHI.match(s)
            if pm:
                self.blocks[-1][1].append(("phi", pm.group(1), pm.group(2), _INCOMING.findall(pm.group(3))))
                continue
            am = re.match(r"^(%[-\w.$]+) = alloca (\S+), align \d+$", s)
            if am:
                if not is_scalar(am.group(2)):
                    raise Unsupported("an aggregate Function variable")
                self.allocas[am.group(1)] = am.group(2)
                continue
            self.blocks[-1][1].append(parse(s))
        self._shapes()

    # -- which values differ between the G elements ---------------------------------------------------
    def _shapes(self):
        v = set(self.varying) | set(self.allocas)
        changed = True
        while changed:
            changed = False
            for _, body in self.blocks:
                for ins in body:
                    if isinstance(ins, tuple):
                        res, names = ins[1], [x for x, _ in ins[3]]
                    else:
                        res, names = ins.res, ins.names()
                    if res and res not in v and any(n in v for n in names):
                        v.add(res)
                        changed = True
        self.v = v

    def is_v(self, x: str) -> bool:
        return x in self.v

    # -- output ----------------------------------------------------------------------------------------
    def run(self) -> tuple[str, str]:
        G = self.G
        self.out: list[tuple[str, list]] = []
        self.n = 0
        self.edge_label: dict[tuple[str, str], str] = {}     # (from, to) -> the block the edge leaves
        phis = []
        for lab, body in self.blocks:
            if lab == FAIL:
                continue
            self.block(lab)
            for ins in body:
                if isinstance(ins, tuple):
                    phis.append((lab, len(self.lines), ins))
                    self.lines.append(None)                 # filled below, once every edge is known
                else:
                    self.instruction(ins, lab)
        for lab, at, (_, res, t, inc) in phis:
            lines = dict(self.out)[lab]
            vec = self.is_v(res)
            parts = []
            for val, src in inc:
                if src == FAIL:
                    continue
                src2 = self.edge_label.get((src, lab), src)
                if vec and not self.is_v(val) and _is_name(val):
                    val = self._splat_at(src2, t, val)
                elif vec and not _is_name(val):
                    val = "poison" if val in ("poison", "undef") else _const_vec(G, t, val)
                parts.append(f"[ {val}, %{src2} ]")
            lines[at] = f"  {res} = phi {_vt(G, t) if vec else t} {', '.join(parts)}"
        self.block("bail")
        self.emit(f"ret {self.ret_t} {{ {_vt(G, self.rt)} poison, i1 false }}")
        vname = f"{self.name}.v{G}"
        params = []
        for t, n in self.params:
            params.append(f"{_vt(G, t) if n in self.varying else t} {n}")
        head = f"define internal {self.ret_t} {vname}({', '.join(params)}) alwaysinline {{"
        body = [head]
        for i, (lab, lines) in enumerate(self.out):
            body.append(f"{lab}:")
            if i == 0:
                body += [f"  {a} = alloca {_vt(G, t)}, align 64" for a, t in self.allocas.items()]
            body += lines
        body.append("}")
        return vname, "\n".join(body)

    @property
    def ret_t(self) -> str:
        return f"{{ {_vt(self.G, self.rt)}, i1 }}"

    def block(self, lab):
        self.lines = []
        self.out.append((lab, self.lines))
        self.cur = lab
        self.splats = {}

    def emit(self, s: str):
        self.lines.append("  " + s)

    def op(self, s: str) -> str:
        self.n += 1
        name = f"%cv.{self.n}"
        self.emit(f"{name} = {s}")
        return name

    def vop(self, t: str, x: str) -> str:
        """An operand as a <G x t> vector."""
        G = self.G
        if self.is_v(x):
            return x
        if not _is_name(x) and not x.startswith("@"):
            return "poison" if x in ("poison", "undef") else _const_vec(G, t, x)
        key = (t, x)
        if key not in self.splats:
            a = self.op(f"insertelement {_vt(G, t)} poison, {t} {x}, i64 0")
            self.splats[key] = self.op(f"shufflevector {_vt(G, t)} {a}, {_vt(G, t)} poison, {_vt(G, 'i32')} zeroinitializer")
        return self.splats[key]

    def _splat_at(self, lab: str, t: str, x: str) -> str:
        """x splat at the end of block lab (before its terminator): a phi's incoming value."""
        lines = dict(self.out)[lab]
        term = lines.pop()
        saved = self.lines, self.splats
        self.lines, self.splats = lines, {}
        v = self.vop(t, x)
        self.lines, self.splats = saved
        lines.append(term)
        return v

    def all_lanes(self, c: str) -> str:
        return self.op(f"icmp eq i{self.G} {self._bits(c)}, -1")

    def any_lane(self, c: str) -> str:
        return self.op(f"icmp ne i{self.G} {self._bits(c)}, 0")

    def _bits(self, c: str) -> str:
        G = self.G
        return self.op(f"bitcast {_vt(G, 'i1')} {c} to i{G}")

    def target(self, lab: str) -> str:
        return "bail" if lab == FAIL else lab

    # -- instructions ----------------------------------------------------------------------------------
    def instruction(self, ins, lab: str):
        G = self.G
        k = ins.kind
        if k in ("br", "cbr", "switch", "end"):
            self.terminator(ins, lab)
            return
        if k == "store":
            (t, val), (_, p) = ins.args
            if p not in self.allocas:
                raise Unsupported("a store to memory")
            self.emit(f"store {_vt(G, t)} {self.vop(t, val)}, ptr {p}, align {SIZES.get(t, 1)}")
            return
        if k == "load" and ins.args[0][1] in self.allocas:
            self.emit(f"{ins.res} = load {_vt(G, ins.rtype)}, ptr {ins.args[0][1]}, align {SIZES.get(ins.rtype, 1)}")
            return
        if k == "atomic":
            raise Unsupported("an atomic")
        if any(n in self.allocas for n in ins.names()):
            raise Unsupported("a Function variable's address used otherwise")
        if k == "call":
            self.call(ins)
            return
        if ins.res is None or not self.is_v(ins.res):
            self.emit(ins.text)                          # the same for every element
            return
        vt = _vt(G, ins.rtype) if ins.rtype else None
        if k in PURE_KINDS:
            scalar_cond = k == "select" and not self.is_v(ins.args[0][1])
            self.emit(f"{ins.res} = {pure_vector_form(ins, G, self.vop, scalar_cond)}")
        elif k == "gep":
            et = ins.extra["et"]
            if not is_scalar(et):
                raise Unsupported("an address into an aggregate")
            args = ", ".join(f"{_vt(G, t)} {self.vop(t, v)}" for t, v in ins.args)
            self.emit(f"{ins.res} = getelementptr {et}, {args}")
        elif k == "load":
            (_, p), = ins.args
            if ins.extra["volatile"]:
                raise Unsupported("a volatile load")
            t = ins.rtype
            if not is_scalar(t):
                raise Unsupported("a load of an aggregate")
            align = ins.extra["align"] or str(SIZES.get(t, 1))
            gname = f"llvm.masked.gather.v{G}{_mangle(t)}.v{G}p0"
            self.declare(f"@{gname}", f"declare {vt} @{gname}({_vt(G, 'ptr')}, i32 immarg, {_vt(G, 'i1')}, {vt})")
            self.emit(f"{ins.res} = call {vt} @{gname}({_vt(G, 'ptr')} {p}, i32 {align}, "
                      f"{_vt(G, 'i1')} {_const_vec(G, 'i1', 'true')}, {vt} poison)")
        else:
            raise Unsupported(f"{ins.op} on values that differ between elements")

    def call(self, ins):
        G = self.G
        callee = ins.extra["callee"]
        varying = any(self.is_v(v) for _, v in ins.args)
        base, _ = _intrinsic(callee)
        if not _pure(callee) or (base or "").startswith(("masked.scatter", "prefetch")):
            raise Unsupported(f"a call of {callee}")
        if not varying:
            self.emit(ins.text)
            return
        if ins.rtype is None or not is_scalar(ins.rtype) or not all(is_scalar(t) for t, _ in ins.args):
            raise Unsupported(f"a call of {callee} on aggregates")
        vt = _vt(G, ins.rtype)
        if base in _VECTOR_INTRINSICS and base not in ("exp", "exp2", "log", "log2", "log10", "sin", "cos", "pow"):
            def immediate(v):
                if self.is_v(v):
                    raise Unsupported(f"a varying immediate of {callee}")
                return v
            self.emit(f"{ins.res} = {intrinsic_vector_call(ins, G, self.vop, immediate, self.declare)}")
            return
        if callee.startswith("jc."):
            name = vector_helper(callee[3:], G, self.declare)
            if name is None:
                raise Unsupported(f"a call of {callee}")
            args = ", ".join(f"{_vt(G, t)} {self.vop(t, v)}" for t, v in ins.args)
            self.emit(f"{ins.res} = call {vt} {name}({args})")
            return
        # the C library's functions and LLVM's transcendental intrinsics: per element, in order
        acc = "poison"
        for i in range(G):
            args = []
            for t, v in ins.args:
                args.append(f"{t} {self.op(f'extractelement {_vt(G, t)} {v}, i64 {i}') if self.is_v(v) else v}")
            r = self.op(f"call {ins.rtype} @{callee}({', '.join(args)})")
            acc = self.op(f"insertelement {vt} {acc}, {ins.rtype} {r}, i64 {i}")
        self.emit(f"{ins.res} = bitcast {vt} {acc} to {vt}")

    def terminator(self, ins, lab: str):
        k = ins.kind
        if k == "br":
            to = ins.text.split("%")[-1]
            self.emit(f"br label %{self.target(to)}")
            self.edge_label[(lab, to)] = self.cur
            return
        if k == "cbr":
            (_, c), = ins.args
            labels = re.findall(r"label %([-\w.$]+)", ins.text)
            t, f = labels
            if not self.is_v(c):
                self.emit(f"br i1 {c}, label %{self.target(t)}, label %{self.target(f)}")
                self.edge_label[(lab, t)] = self.edge_label[(lab, f)] = self.cur
                return
            if t == FAIL or f == FAIL:
                # leaving for the failure block: the scalar callback reports it, element by element
                bad = self.any_lane(c) if t == FAIL else self.any_lane(self.op(f"xor {_vt(self.G, 'i1')} {c}, {_const_vec(self.G, 'i1', 'true')}"))
                good = f if t == FAIL else t
                self.emit(f"br i1 {bad}, label %bail, label %{good}")
                self.edge_label[(lab, good)] = self.cur
                return
            # all to t; some (not all) to t: the elements part ways; none: all to f
            every, some = self.all_lanes(c), self.any_lane(c)
            self.n += 1
            split = f"cv.split.{self.n}"
            self.emit(f"br i1 {every}, label %{t}, label %{split}")
            self.edge_label[(lab, t)] = self.cur
            self.block(split)
            self.emit(f"br i1 {some}, label %bail, label %{f}")
            self.edge_label[(lab, f)] = split
            return
        if k == "switch":
            (_, c), = ins.args
            if self.is_v(c):
                raise Unsupported("a switch on a value that differs between elements")
            self.emit(ins.text)
            for to in re.findall(r"label %([-\w.$]+)", ins.text):
                if to == FAIL:
                    raise Unsupported("a switch into the failure block")
                self.edge_label[(lab, to)] = self.cur
            return
        if ins.op == "unreachable":
            self.emit("unreachable")
            return
        if ins.op == "ret":
            parts = ins.text.split()
            if len(parts) != 3:
                raise Unsupported("a return without a value")
            t, v = parts[1], parts[2]
            r = self.op(f"insertvalue {self.ret_t} poison, {_vt(self.G, t)} {self.vop(t, v)}, 0")
            r = self.op(f"insertvalue {self.ret_t} {r}, i1 true, 1")
            self.emit(f"ret {self.ret_t} {r}")
            return
        raise Unsupported(f"the terminator {ins.text}")

