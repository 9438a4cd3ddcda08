"""Collective operations, run by the workgroup scheduler over the lanes that wait at one.

Each function takes the lane `state` array, the `wait` code of the lanes taking part (the active
lanes) and the `resume` block they continue at, the operand and result spill arrays, the
workgroup size W and the subgroup size S. Keeping them here, compiled once per dtype and cached,
makes every collective one line of generated code (numba typing time grows fast with the size of
a function, so this is what keeps kernels with many subgroup operations quick to compile).
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .formats import round_bf16, round_f16
from .codes import (IADD, IMUL, SMIN, UMIN, FMIN, SMAX, UMAX, AND, OR, FADD, FMUL, LAND,
    LOR, REDUCE, INCLUSIVE, EXCLUSIVE, CLUSTERED, ROUND_F16, ROUND_BF16, BROADCAST, SHUFFLE,
    SHUFFLE_XOR, SHUFFLE_UP, SHUFFLE_DOWN, QUAD_BROADCAST, QUAD_SWAP, VOTE_ALL, VOTE_ANY)

# No reference counting (coopmat._opts says why); _alloc for the few that allocate scratch.
_opts = dict(cache=True, nogil=True, error_model="numpy", _nrt=False)
_alloc = dict(_opts, _nrt=True)


# The scheduler's scans run once or more per collective point of every workgroup (on the KHR
# GEMM, a few per K step), so they are written without early exits: min/max reductions and
# selects that LLVM turns into vector code over the state array.
_NONE = 1 << 30


def combine(op, a, b, rnd):
    """One step of a reduction; typed per element type (see the overload below)."""
    raise NotImplementedError


@overload(combine)
def _combine_overload(op, a, b, rnd):
    if isinstance(a, types.Float):
        def impl(op, a, b, rnd):
            if op == FADD:
                r = a + b
            elif op == FMUL:
                r = a * b
            elif op == FMIN:      # a NaN operand loses
                r = b if a != a else (a if (b != b or a < b) else b)
            else:
                r = b if a != a else (a if (b != b or a > b) else b)
            if rnd == ROUND_F16:
                return round_f16(np.float32(r))
            if rnd == ROUND_BF16:
                return round_bf16(np.float32(r))
            return r
        return impl

    def impl(op, a, b, rnd):
        if op == IADD:
            return a + b
        if op == IMUL:
            return a * b
        if op == SMIN or op == UMIN:
            return a if a < b else b
        if op == SMAX or op == UMAX:
            return a if a > b else b
        if op == AND:
            return a & b
        if op == OR:
            return a | b
        return a ^ b
    return impl


@njit(**_opts)
def arith(state, wait, op, group_op, cluster, rnd, ident, x, r, S):
    """Reductions and scans of numbers. `ident` is the identity of `op` in x's type; `rnd`
    rounds float16/bfloat16 results after each step."""
    W = state.shape[0]
    for lo in range(0, W, S):
        hi = min(W, lo + S)
        c = cluster if group_op == CLUSTERED else S
        for c0 in range(lo, hi, c):
            c1 = min(hi, c0 + c)
            acc = ident
            for l in range(c0, c1):
                if state[l] == wait:
                    if group_op == EXCLUSIVE:
                        r[l] = acc
                    acc = r.dtype.type(combine(op, acc, x[l], rnd))
                    if group_op == INCLUSIVE:
                        r[l] = acc
            if group_op == REDUCE or group_op == CLUSTERED:
                for l in range(c0, c1):
                    if state[l] == wait:
                        r[l] = acc


@njit(**_opts)
def logical(state, wait, op, group_op, cluster, x, r, S):
    W = state.shape[0]
    for lo in range(0, W, S):
        hi = min(W, lo + S)
        c = cluster if group_op == CLUSTERED else S
        for c0 in range(lo, hi, c):
            c1 = min(hi, c0 + c)
            acc = op == LAND
            for l in range(c0, c1):
                if state[l] == wait:
                    if group_op == EXCLUSIVE:
                        r[l] = acc
                    if op == LAND:
                        acc = acc and x[l]
                    elif op == LOR:
                        acc = acc or x[l]
                    else:
                        acc = acc != x[l]
                    if group_op == INCLUSIVE:
                        r[l] = acc
            if group_op == REDUCE or group_op == CLUSTERED:
                for l in range(c0, c1):
                    if state[l] == wait:
                        r[l] = acc


@njit(**_opts)
def gather(state, wait, mode, idx, idx_const, per_lane, x, r, S):
    """r[l] = x[source(l)]; a source outside the subgroup gives the lane its own value."""
    W = state.shape[0]
    for lo in range(0, W, S):
        hi = min(W, lo + S)
        first = -1
        for l in range(lo, hi):
            if state[l] == wait:
                first = l
                break
        for l in range(lo, hi):
            if state[l] != wait:
                continue
            k = np.int64(idx[l]) if per_lane else np.int64(idx_const)
            i = l - lo
            if mode == BROADCAST or mode == SHUFFLE:
                j = lo + k
            elif mode == SHUFFLE_XOR:
                j = lo + (i ^ k)
            elif mode == SHUFFLE_UP:
                j = l - k
            elif mode == SHUFFLE_DOWN:
                j = l + k
            elif mode == QUAD_BROADCAST:
                j = lo + ((i & ~3) | k)
            elif mode == QUAD_SWAP:
                j = lo + (i ^ (k + 1))
            else:
                j = first
            if j < lo or j >= hi:
                j = l
            r[l] = x[j]


@njit(**_opts)
def elect(state, wait, r, S):
    W = state.shape[0]
    for lo in range(0, W, S):
        first = True
        for l in range(lo, min(W, lo + S)):
            if state[l] == wait:
                r[l] = first
                first = False


@njit(**_opts)
def vote(state, wait, kind, x, r, combine_and, S):
    """All/Any of a bool, or AllEqual of one component; with combine_and the result is ANDed
    into r (AllEqual of a vector, one component at a time)."""
    W = state.shape[0]
    for lo in range(0, W, S):
        hi = min(W, lo + S)
        v = kind != VOTE_ANY
        seen = False
        ref = x[lo]
        for l in range(lo, hi):
            if state[l] != wait:
                continue
            if kind == VOTE_ALL:
                v = v and bool(x[l])
            elif kind == VOTE_ANY:
                v = v or bool(x[l])
            else:
                if not seen:
                    ref = x[l]
                    seen = True
                elif not (x[l] == ref or (x[l] != x[l] and ref != ref)):
                    v = False
        for l in range(lo, hi):
            if state[l] == wait:
                r[l] = (r[l] and v) if combine_and else v


@njit(**_alloc)
def ballot(state, wait, x, r0, r1, r2, r3, S):
    W = state.shape[0]
    for lo in range(0, W, S):
        hi = min(W, lo + S)
        m = np.zeros(4, np.uint32)
        for l in range(lo, hi):
            if state[l] == wait and x[l]:
                i = l - lo
                m[i >> 5] |= np.uint32(1) << np.uint32(i & 31)
        for l in range(lo, hi):
            if state[l] == wait:
                r0[l] = m[0]
                r1[l] = m[1]
                r2[l] = m[2]
                r3[l] = m[3]


