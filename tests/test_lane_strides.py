"""The stride analysis of lane groups (jitcoop/codegen/lane_strides.py) and what lanevec builds
on it: values stepping by a constant from one invocation to the next, kept as lane 0's scalar;
guards where a group's 32-bit values may wrap; per-invocation slots taken as uniform under a
guard.

- each rule against the instruction evaluated invocation by invocation (Python integers, LLVM's
  semantics): where a rule says affine, every invocation's value is lane 0's plus the stride
  times its index and lane 0's is a multiple of the alignment; where it says uniform, all are
  equal; a guarded widening is affine wherever the group's first and last values do not wrap;
- lane_strides.comp against numpy written from its GLSL, at group sizes 8 and 16, scalar code
  too: widenings whose groups wrap (zext near 2^32, sext near 2^31, at aligned and unaligned
  bases), a staged tile divided by row widths the group stays in (48) and may leave (40), and
  two counters crossing barriers, both uniform in one mode and one of them parting ways in
  each other mode (reloaded together under one guard), a branch on a wrapping index whose
  group's first and last values agree while others do not."""
import struct

import numpy as np
import pytest

import jitcoop
from jitcoop.codegen import lane_strides as S
from jitcoop.codegen.lanevec import parse
from conftest import SHADERS

# -- the rules, invocation by invocation -------------------------------------------------------------


def _eval(op, w, a, b):
    """LLVM's integer instruction on w-bit values a, b (unsigned Python ints); None: poison/UB."""
    m = (1 << w) - 1
    sa, sb = S.signed(a, w), S.signed(b, w)
    if op == "add":
        return (a + b) & m
    if op == "sub":
        return (a - b) & m
    if op == "mul":
        return (a * b) & m
    if op == "shl":
        return (a << b) & m if b < w else None
    if op == "lshr":
        return a >> b if b < w else None
    if op == "and":
        return a & b
    if op == "udiv":
        return a // b if b else None
    if op == "urem":
        return a % b if b else None
    preds = {"ult": a < b, "ule": a <= b, "ugt": a > b, "uge": a >= b,
             "slt": sa < sb, "sle": sa <= sb, "sgt": sa > sb, "sge": sa >= sb}
    return int(preds[op])


def _check(shape, vals, w, G):
    """The claim a rule made, against the group's values."""
    if shape == "U":
        assert len(set(vals)) == 1, vals
    elif S.is_affine(shape):
        _, s, m = shape
        assert vals[0] % m == 0, (vals[0], m)
        for i, v in enumerate(vals):
            assert v == (vals[0] + s * i) & ((1 << w) - 1), (i, v, vals[0], s)


def _group(rng, w, G, step, align):
    v0 = int.from_bytes(rng.bytes(8), "little") & ~(align - 1) & ((1 << w) - 1)
    if rng.random() < 0.3:      # near the ends of the range, where groups wrap
        v0 = ((1 << w) - align * int(rng.integers(1, 4))) & ((1 << w) - 1) if rng.random() < 0.5 else \
             ((1 << (w - 1)) - align * int(rng.integers(1, 4)))
    return [(v0 + step * i) & ((1 << w) - 1) for i in range(G)]


@pytest.mark.parametrize("G", [8, 16])
@pytest.mark.parametrize("w", [32, 64])
def test_binary_rules_hold_for_every_invocation(rng, G, w):
    t = f"i{w}"
    ops = ["add", "sub", "mul", "shl", "lshr", "and", "udiv", "urem",
           "ult", "ule", "ugt", "uge", "slt", "sle", "sgt", "sge"]
    claims = {"affine": 0, "U": 0}
    for _ in range(4000):
        op = ops[int(rng.integers(len(ops)))]
        step = int(rng.choice([1, 1, 2, 4, 3, -1, 16, 1000]))
        align = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 256]))
        xs = _group(rng, w, G, step, align)
        c = int(rng.choice([0, 1, 3, 7, 15, 16, 31, 32, 40, 48, 64, 100, 128, 4096, (1 << (w - 1)) - 1]))
        if op in ("shl", "lshr"):
            c %= w
        swapped = op in ("ult", "sgt", "sub") and rng.random() < 0.5
        x, y = ("%c", "%x") if swapped else ("%x", "%c")
        text = (f"%r = icmp {op} {t} {x}, {y}" if op[0] in "us" and op not in ("sub", "shl")
                else f"%r = {op} {t} {x}, {y}")
        ins = parse(text)
        shapes = {"%x": (S.A, S.signed(step, w), align), "%c": "U"}
        consts = {"%c": c}
        got = S.rule(ins, lambda v: shapes.get(v, "U"), lambda v: S.align_of_const(consts[v], w),
                     lambda v: consts.get(v), G, guardable=False)
        if got is None:
            continue
        vals = [_eval(op, w, *((c, xv) if swapped else (xv, c))) for xv in xs]
        if None in vals:
            continue
        _check(got, vals, 1 if ins.kind == "cmp" else w, G)
        claims["U" if got == "U" else "affine"] += 1
    # the rules do claim things (a test of None everywhere would pass)
    assert claims["affine"] > 100 and claims["U"] > 100, claims


@pytest.mark.parametrize("G", [8, 16])
@pytest.mark.parametrize("op", ["zext", "sext", "trunc"])
def test_widenings_are_affine_where_their_guard_holds(rng, G, op):
    held = 0
    for _ in range(3000):
        step = int(rng.choice([1, 2, 3, 5, 16]))
        align = int(rng.choice([1, 4, 16, 64]))
        src, dst = ("i64", "i32") if op == "trunc" else ("i32", "i64")
        ws, wd = int(src[1:]), int(dst[1:])
        xs = _group(rng, ws, G, step, align)
        ins = parse(f"%r = {op} {src} %x to {dst}")
        shape = {"%x": (S.A, step, align)}
        got = S.rule(ins, lambda v: shape.get(v, "U"), lambda v: 1, lambda v: None, G, guardable=True)
        assert got is not None
        if op == "zext":
            vals = xs
            guard = xs[0] <= xs[-1]
        elif op == "sext":
            vals = [S.signed(v, 32) & ((1 << 64) - 1) for v in xs]
            guard = S.signed(xs[0], 32) <= S.signed(xs[-1], 32)
        else:
            vals = [v & 0xFFFFFFFF for v in xs]
            guard = True
        needs = S.needs_guard(ins, lambda v: shape.get(v, "U"), G)
        assert needs == (op != "trunc" and not S.nowrap(shape["%x"], G))
        if needs and not guard:
            continue
        _check(got, vals, wd, G)
        held += 1
    assert held > 1000


# -- lane_strides.comp --------------------------------------------------------------------------------

WG = 3


def _expected(base, sbase, n, mode, off, W, src, cut):
    lid = np.arange(64, dtype=np.uint64)
    idx = (np.uint64(base) + lid) & np.uint64(0xFFFFFFFF)
    flags = np.tile(np.where(idx < np.uint64(cut), 1, 2), WG).astype(np.uint32)
    wide = np.empty((WG, 64, 2), np.uint64)
    wide[:, :, 0] = (np.uint64(base) + lid) & np.uint64(0xFFFFFFFF)
    s = ((np.int64(sbase) + lid.astype(np.int64)) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    wide[:, :, 1] = s.astype(np.int64).view(np.uint64)
    staged = np.empty((WG, n, 64), np.uint32)
    for r in range(n):
        e = np.arange(4 * W)
        tile = src[(r + e // W) * (W + off) + e % W].astype(np.uint64)
        acc = np.zeros(64, np.uint64)
        for c in range(4):
            acc = (acc * 31 + tile[c * W + np.arange(64) % W]) & 0xFFFFFFFF
        staged[:, r, :] = acc.astype(np.uint32)
    step = np.where((mode == 1) & (np.arange(64) % 3 == 0), 1, 2)
    step2 = np.where((mode == 2) & (np.arange(64) % 5 == 1), 3, 1)
    count = np.tile(step * n | (step2 * n) << 16, WG).astype(np.uint32)
    return wide.reshape(-1), staged.reshape(-1), count, flags


@pytest.mark.parametrize("variant", ["lane_strides", "lane_strides.opt"])
@pytest.mark.parametrize("G", [8, 16, False])
@pytest.mark.parametrize("W", [48, 40])
@pytest.mark.parametrize("base, sbase", [
    (0, 0),
    (0xFFFFFFF0, 0x7FFFFFF0),    # groups up to the end of the range (aligned: no wrap inside one)
    (0xFFFFFFF5, 0x7FFFFFF9),    # a group wraps between its first and last invocation
    (0xFFFFFFC3, 0x7FFFFFE1),
])
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_lane_strides_shader(rng, variant, G, W, base, sbase, mode):
    k = jitcoop.Device().load(SHADERS / f"{variant}.spv").kernel(spec={0: W}, lane_groups=G)
    if G:
        assert k.meta.lane_group == G, k.meta.lane_group_why
    n, off = 3, int(rng.integers(0, 9))
    src = rng.integers(0, 1 << 32, (n + 4) * (W + off), dtype=np.uint64).astype(np.uint32)
    wide = np.zeros(WG * 64 * 2, np.uint64)
    staged = np.zeros(WG * 64 * n, np.uint32)
    count = np.zeros(WG * 64, np.uint32)
    flags = np.zeros(WG * 64, np.uint32)
    cut = (base + 20) & 0xFFFFFFFF
    k.dispatch((WG, 1, 1), {0: wide, 1: src, 2: staged, 3: count, 4: flags},
               push=struct.pack("<6I", base, sbase, n, mode, off, cut))
    ew, es, ec, ef = _expected(base, sbase, n, mode, off, W, src, cut)
    np.testing.assert_array_equal(flags, ef)
    np.testing.assert_array_equal(wide, ew)
    np.testing.assert_array_equal(staged, es)
    np.testing.assert_array_equal(count, ec)
