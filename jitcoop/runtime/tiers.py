"""Compile tiers: code ready fast for a kernel's first dispatch, fully optimized code for the
dispatches that follow.

A kernel compiles at one of two tiers (KernelOptions.tier picks the policy):

- fast: the generator without lane groups, a few LLVM passes (jit.optimize_fast: SROA, CFG
  simplification, instruction combining) and LLVM's -O0 code generator;
- optimized: the generator with every option as given, LLVM's pipeline at opt_level and its -O3
  code generator.

Both run the same SPIR-V semantics and write the same bytes (tests/test_tiers.py compares every
test shader's outputs on both). Each tier has its own cache key, so the disk cache keeps both.

Under the "auto" policy a kernel starts with the optimized code when this process or the disk cache
has it, else with the fast tier's. A kernel at the fast tier is queued for its optimized compile
when it is dispatched again, or while its first dispatch is still running LONG_RUN seconds after it
started (jitcoop.api.Kernel.dispatch), on one shared background thread (a daemon: it never delays
the process's exit), which compiles in a child process (runtime.limit: the LLVM lock stays free for
the caller's compiles). The child writes the optimized entry to the disk cache itself and finishes
on its own should the process exit first, so that the next process finds it (compiles still queued
then are dropped). When the code is ready the kernel's `Compiled` is replaced in one assignment, so
a dispatch runs either the one tier's code and metadata or the other's, never a mix; a dispatch in
flight finishes on the code it started with, but for a first dispatch that has taken at most half
of its workgroups: it stops, the buffers go back to what they were, and it runs again on the
optimized code (a long first dispatch queues its compile ahead of the others). A failed background
compile is logged once and leaves the fast code in place.
"""
from __future__ import annotations

import logging
import threading
import weakref
from collections import deque

log = logging.getLogger("jitcoop")

# A first dispatch running this long at the fast tier queues its kernel's optimized compile
# without waiting for a second dispatch: a kernel this slow to run at the fast tier pays back
# the compile at its next dispatch (0.25 s: longer than the fast tier's compile of most kernels).
LONG_RUN = 0.25

_jobs: deque = deque()                  # weak references to the kernels to compile, next first
_have_jobs = threading.Condition()
_worker: list = []
_worker_lock = threading.Lock()
_idle = threading.Condition()
_pending = [0]          # jobs queued or compiling


def promote(kernel, urgent: bool = False) -> None:
    """Queue the optimized compile of `kernel` (a jitcoop.Kernel at the fast tier) on the
    background thread; it swaps the code in with kernel._promoted(compiled). urgent: ahead of
    the others (a dispatch is waiting for it)."""
    with _idle:
        _pending[0] += 1
    with _have_jobs:
        (_jobs.appendleft if urgent else _jobs.append)(weakref.ref(kernel))
        _have_jobs.notify()
    with _worker_lock:
        if not _worker:
            t = threading.Thread(target=_work, name="jitcoop-optimize", daemon=True)
            t.start()
            _worker.append(t)


def wait(timeout: float | None = None) -> bool:
    """Block until every queued optimized compile has finished (tests, benchmarks, and programs
    that want optimized code before timing it); False if `timeout` seconds passed first."""
    with _idle:
        return _idle.wait_for(lambda: _pending[0] == 0, timeout)


def _work():
    while True:
        with _have_jobs:
            _have_jobs.wait_for(lambda: _jobs)
            ref = _jobs.popleft()
        try:
            kernel = ref()
            if kernel is not None:          # (a kernel dropped meanwhile needs no optimized code)
                _compile(kernel)
                del kernel
        finally:
            with _idle:
                _pending[0] -= 1
                _idle.notify_all()


def _compile(kernel):
    from ..errors import JitcoopError
    try:
        compiled = kernel._compile_tier("optimized", background=True)
    except (JitcoopError, MemoryError, OSError) as e:
        kernel._promotion_failed(e)
        log.warning("jitcoop: the optimized compile of %s failed; it keeps running its fast-tier code: %s",
                    kernel.describe(), e)
        return
    except Exception as e:                       # noqa: BLE001 - a generator bug: reported, not raised
        kernel._promotion_failed(e)
        log.warning("jitcoop: the optimized compile of %s failed (please report this with the shader); "
                    "it keeps running its fast-tier code: %s: %s", kernel.describe(), type(e).__name__, e)
        return
    kernel._promoted(compiled)
