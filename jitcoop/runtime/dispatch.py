"""Running a compiled kernel over a grid: scratch memory per worker thread, the range table of
everything a pointer may reach, worker threads, cancellation, failures.

A kernel (jitcoop.runtime.compile) is called as

    i64 kernel(wg_begin, wg_end, grid, bind, push, scratch, ranges, nranges, err, cancel)

for chunks of workgroups by worker threads (ctypes releases the GIL during the call), the calling
thread being the first of them (handing all the work to other threads cost a thread wake-up,
0.1-0.3 ms of a small dispatch). The process's watcher (jitcoop.runtime.watch) sets the cancel
flag the kernels poll at every loop back edge on a timeout or Ctrl-C, and keeps the progress bar.
A failing worker sets the flag too, so the others stop. The failure reported is the one of
the lowest-numbered failing workgroup, as a run on one thread would report it: when workers fail
out of order, the workgroups before the first failure are run again, alone, from the restored
buffers. Everything a dispatch allocates is local to the call: two threads may dispatch one
kernel at once.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from . import watch, workers
from .memory import range_table
from .snapshot import Snapshot
from .watch import FAILED, INTERRUPTED, TIMEOUT  # noqa: F401 (cancel[0]: why a dispatch stops early)


@dataclass
class Outcome:
    errs: list              # per-thread failure records and profile counters (int64 arrays)
    cancel: int             # 0, or TIMEOUT / FAILED / INTERRUPTED
    seconds: float
    threads: int


def run(fn, meta, consts: np.ndarray, grid: tuple, bind: list, push: tuple, physical: list,
        nthreads: int, timeout: float | None, snapshot: Snapshot | None = None) -> Outcome:
    """Run every workgroup of `grid`. bind: [address, size] per binding; push: (address, size);
    physical: (address, size) of every buffer a device address may point into; snapshot: the
    buffers the dispatch may write, copied by its threads before the first kernel (restored
    here to find the first failure again, and by the caller after a failure)."""
    nwg = grid[0] * grid[1] * grid[2]
    out = _run(fn, meta, consts, grid, bind, push, physical, nthreads, timeout, 0, nwg, snapshot)
    if out.cancel == FAILED and nthreads > 1 and snapshot is not None:
        first = min(int(e[1]) for e in out.errs if e[0] > 0)
        if first > 0:
            snapshot.restore()
            again = _run(fn, meta, consts, grid, bind, push, physical, 1, timeout, 0, first, None)
            if any(e[0] > 0 for e in again.errs) or again.cancel:
                again.seconds += out.seconds
                return again
    return out


def _run(fn, meta, consts, grid, bind, push, physical, nthreads, timeout, begin: int, end: int,
         snapshot: Snapshot | None) -> Outcome:
    """Run workgroups [begin, end) on nthreads worker threads, each taking its part of the
    snapshot first."""
    nwg = end        # workgroups up to (not including) this one
    ranges = [(bind[2 * i], bind[2 * i + 1]) for i in range(len(bind) // 2)] + list(physical)
    ranges.append(push)
    scratch = []
    lanes = int(np.prod(meta.local_size))
    sizes = (max(16, meta.shared_size), max(16, meta.private_frame * lanes), max(64, meta.work_size))
    held = [_scratch.take(sizes) for _ in range(nthreads)]
    for sh, pv, wk in held:
        scratch.append(np.array([sh.ctypes.data, pv.ctypes.data, wk.ctypes.data, consts.ctypes.data], np.int64))
        ranges += [(sh.ctypes.data, sh.nbytes), (pv.ctypes.data, pv.nbytes)]
    table = range_table(ranges)
    grid_a = np.array(grid, np.int64)
    bind_a = np.array(bind if bind else [0, 0], np.int64)
    push_a = np.array(push, np.int64)
    cancel = np.zeros(1, np.int64)
    psize = meta.profile.size if meta.profile is not None else 0
    errs = [np.zeros(8 + psize, np.int64) for _ in range(nthreads)]
    args = (grid_a.ctypes.data, bind_a.ctypes.data, push_a.ctypes.data)
    tail = (table.ctypes.data, table.shape[0])
    # Guided self-scheduling: a worker takes a share of what is left (1 / (4 x threads)), down to
    # 1/128 of the dispatch on two threads, so chunks shrink towards the end and the threads
    # finish together (equal chunks of 1/16 left one thread idle for half a chunk on average, 3%
    # of a two-thread run); about 30 chunks a dispatch (a chunk costs a few us of Python).
    share = nthreads * 4
    least = max(1, (nwg - begin) // (share * 16))
    counter = [begin]
    lock = threading.Lock()
    # addresses taken once (each .ctypes.data makes an object: 1.7 us, three per chunk)
    own = [(sc.ctypes.data, er.ctypes.data) for sc, er in zip(scratch, errs)]
    cancel_at = cancel.ctypes.data

    def work(t):
        scratch_at, err_at = own[t]
        if snapshot is not None and not snapshot.take(lambda: cancel[0]):
            return
        while True:
            with lock:
                s = counter[0]
                e = counter[0] = s + max(least, -(-(nwg - s) // share))
            if s >= nwg or cancel[0]:
                return
            if fn(s, min(nwg, e), *args, scratch_at, *tail, err_at, cancel_at):
                if cancel[0] == 0:
                    cancel[0] = FAILED        # stop the other threads: the dispatch has failed
                return

    t0 = time.perf_counter()
    watched = watch.start(nwg - begin, lambda: counter[0] - begin, cancel, timeout)
    running = []
    try:
        for t in range(1 if watched.inline else 0, nthreads):
            running.append(workers.submit(work, t))
        if watched.inline:
            work(0)
        for r in running:
            while not r.wait(0.05):     # (a Ctrl-C is raised here)
                pass
    except KeyboardInterrupt:
        cancel[0] = INTERRUPTED
        for r in running:
            r.wait()
    finally:
        watch.stop(watched)
    seconds = time.perf_counter() - t0
    for r in running:
        r.result()          # a worker's own exception (a bug, not a kernel failure) is raised here
    _scratch.give(sizes, held)      # (not before: every thread has ended)
    return Outcome(errs, int(cancel[0]), seconds, nthreads)


class _ScratchPool:
    """Shared, private and work memory for the threads of dispatches, kept between dispatches:
    fresh arrays (calloc) came as untouched pages, faulted in and zeroed by the kernels while they
    ran (wg_tensor's 768 KB of work memory per thread); a kept one is zeroed again here, its pages
    in place. Kept by size, up to KEEP bytes in all (the most recent)."""
    KEEP = 64 << 20

    def __init__(self):
        self.lock = threading.Lock()
        self.free: dict[tuple, list] = {}
        self.bytes = 0

    def take(self, sizes: tuple) -> tuple:
        with self.lock:
            kept = self.free.get(sizes)
            got = kept.pop() if kept else None
            if got is not None:
                self.bytes -= sum(sizes)
        if got is None:
            return tuple(np.zeros(n, np.uint8) for n in sizes)
        for a in got:
            a.fill(0)
        return got

    def give(self, sizes: tuple, sets: list):
        with self.lock:
            for s in sets:
                if self.bytes + sum(sizes) > self.KEEP:
                    self.free.clear()
                    self.bytes = 0
                self.free.setdefault(sizes, []).append(s)
                self.bytes += sum(sizes)


_scratch = _ScratchPool()


def _forget_scratch():
    """A forked child starts a pool of its own (the parent's lock may have been held)."""
    global _scratch
    _scratch = _ScratchPool()


os.register_at_fork(after_in_child=_forget_scratch)

