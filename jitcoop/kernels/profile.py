"""Counters for `dispatch(..., profile=True)`: a cycle counter and counting helpers.

Profiled kernels keep their counters in the per-thread `err` array after its first 8 words (the
failure record), so profiling changes no kernel signature; jitcoop.profile sums them over threads.
"""
from __future__ import annotations

import time

from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

_opts = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)


@intrinsic
def _readcyclecounter(typingctx):
    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=fnty)
        return builder.call(fn, [])
    return types.int64(), codegen


@njit(**_opts)
def ticks():
    """The CPU's cycle counter (x86: the constant-rate TSC)."""
    return _readcyclecounter()


_rate = []


def seconds_per_tick() -> float:
    """Calibrated once per process against time.perf_counter."""
    if not _rate:
        ticks()
        t0, c0 = time.perf_counter(), ticks()
        time.sleep(0.02)
        t1, c1 = time.perf_counter(), ticks()
        _rate.append((t1 - t0) / max(1, c1 - c0))
    return _rate[0]
