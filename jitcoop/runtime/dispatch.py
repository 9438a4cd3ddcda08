"""Running a compiled kernel over a grid: scratch memory per worker thread, the range table of
everything a pointer may reach, worker threads, cancellation, failures.

A kernel (jitcoop.runtime.compile) is called as

    i64 kernel(wg_begin, wg_end, grid, bind, push, scratch, ranges, nranges, err, cancel)

for chunks of workgroups by each thread's driver (jitcoop.runtime.driver: one ctypes call a
thread, the GIL released throughout), the calling thread being the first of them (handing all
the work to other threads cost a thread wake-up, 0.1-0.3 ms of a small dispatch). The
process's watcher (jitcoop.runtime.watch) sets the cancel flag the kernels poll at every loop
back edge on a timeout or Ctrl-C, and keeps the progress bar. A failing thread sets the flag
too, so the others stop. The failure reported is the one of the lowest-numbered failing
workgroup, as a run on one thread would report it: when threads fail out of order, the
workgroups before the first failure are run again, alone, from the restored buffers. Everything
a dispatch allocates is local to the call: two threads may dispatch one kernel at once.
"""
from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from . import driver, watch, workers
from .memory import range_table
from .snapshot import Snapshot
from .watch import FAILED, INTERRUPTED, TIMEOUT  # noqa: F401 (cancel[0]: why a dispatch stops early)


@dataclass
class Outcome:
    errs: list              # per-thread failure records and profile counters (int64 arrays)
    cancel: int             # 0, or TIMEOUT / FAILED / INTERRUPTED
    seconds: float
    threads: int


def run(kernel: int, meta, consts: np.ndarray, grid: tuple, bind: list, push: tuple, physical: list,
        nthreads: int, timeout: float | None, snapshot: Snapshot | None = None) -> Outcome:
    """Run every workgroup of `grid` (kernel: its address). bind: [address, size] per binding;
    push: (address, size); physical: (address, size) of every buffer a device address may point
    into; snapshot: the buffers the dispatch may write, copied by its threads before the first
    kernel (restored here to find the first failure again, and by the caller after a failure)."""
    nwg = grid[0] * grid[1] * grid[2]
    out = _run(kernel, meta, consts, grid, bind, push, physical, nthreads, timeout, 0, nwg, snapshot)
    if out.cancel == FAILED and nthreads > 1 and snapshot is not None:
        first = min(int(e[1]) for e in out.errs if e[0] > 0)
        if first > 0:
            snapshot.restore()
            again = _run(kernel, meta, consts, grid, bind, push, physical, 1, timeout, 0, first, None)
            if any(e[0] > 0 for e in again.errs) or again.cancel:
                again.seconds += out.seconds
                return again
    return out


def _run(kernel, meta, consts, grid, bind, push, physical, nthreads, timeout, begin: int, end: int,
         snapshot: Snapshot | None) -> Outcome:
    """Run workgroups [begin, end) on nthreads threads (jitcoop.runtime.driver: each zeroes its
    scratch memory and takes its part of the snapshot first)."""
    nwg = end        # workgroups up to (not including) this one
    ranges = [(bind[2 * i], bind[2 * i + 1]) for i in range(len(bind) // 2)] + list(physical)
    ranges.append(push)
    lanes = math.prod(meta.local_size)
    sizes = (max(16, meta.shared_size), max(16, meta.private_frame * lanes), max(64, meta.work_size))
    held = [_scratch.take(sizes) for _ in range(nthreads)]
    psize = meta.profile.size if meta.profile is not None else 0
    errs = np.zeros((nthreads, 8 + psize), np.int64)
    consts_at = consts.ctypes.data
    scratch = np.array([sc.addrs + (consts_at,) for sc in held], np.int64)
    s0, e0, stride = scratch.ctypes.data, errs.ctypes.data, errs.strides[0]
    # per thread (driver.THREAD_*): its scratch argument, its failure record, the memory it
    # zeroes, whether it waits for the others
    threads = np.array([(s0 + 32 * t, e0 + stride * t) + sc.zero() + (0,) for t, sc in enumerate(held)],
                       np.int64)
    for sc in held:
        ranges += [(sc.addrs[0], sizes[0]), (sc.addrs[1], sizes[1])]
    table = range_table(ranges)
    grid_a = np.array(grid, np.int64)
    bind_a = np.array(bind if bind else [0, 0], np.int64)
    push_a = np.array(push, np.int64)
    cancel = np.zeros(1, np.int64)
    plan = [0] * driver.PLAN_SIZE
    plan[driver.PLAN_KERNEL] = kernel
    plan[driver.PLAN_GRID], plan[driver.PLAN_BIND], plan[driver.PLAN_PUSH] = (
        grid_a.ctypes.data, bind_a.ctypes.data, push_a.ctypes.data)
    plan[driver.PLAN_RANGES], plan[driver.PLAN_NRANGES] = table.ctypes.data, table.shape[0]
    plan[driver.PLAN_CANCEL] = cancel.ctypes.data
    # Guided self-scheduling: a thread takes a share of what is left (1 / (4 x threads)), down to
    # 1/128 of the dispatch on two threads, so chunks shrink towards the end and the threads
    # finish together (equal chunks of 1/16 left one thread idle for half a chunk on average, 3%
    # of a two-thread run).
    share = nthreads * 4
    plan[driver.PLAN_NEXT], plan[driver.PLAN_END] = begin, nwg
    plan[driver.PLAN_SHARE], plan[driver.PLAN_LEAST] = share, max(1, (nwg - begin) // (share * 16))
    if snapshot is not None:
        plan[driver.PLAN_NPIECES] = len(snapshot.pieces)
        plan[driver.PLAN_PIECES] = snapshot.pieces.ctypes.data
        plan[driver.PLAN_COPIED] = snapshot.copied.ctypes.data
    plan = np.array(plan, np.int64)
    drive = driver.drive()
    at = plan.ctypes.data
    mine = [threads.ctypes.data + threads.strides[0] * t for t in range(nthreads)]

    t0 = time.perf_counter()
    done = lambda: min(int(plan[driver.PLAN_NEXT]), nwg) - begin      # noqa: E731 (the progress bar's count)
    watched = watch.start(nwg - begin, done, cancel, timeout)
    running = []
    try:
        if watched.inline:
            # this thread's driver returns once every thread that started has ended (a worker
            # that starts later does nothing): waiting here for the workers' tasks cost a wake-up
            # after their Python ended, 0.1-0.2 ms a dispatch
            threads[0, driver.THREAD_LAST] = 1
            for t in range(1, nthreads):
                running.append(workers.submit(drive, at, mine[t], keep=plan))
            drive(at, mine[0])
            for r in running:
                workers.release(r)
        else:
            for t in range(nthreads):       # (appended one by one: a Ctrl-C may come between)
                running.append(workers.submit(drive, at, mine[t], keep=plan))
            for r in running:
                while not r.wait(0.05):     # (a Ctrl-C is raised here)
                    pass
    except KeyboardInterrupt:
        # Cancelled, then closed: a driver call with nothing of its own to do waits for the
        # threads that started (a worker submitted as the interrupt came, not yet in `running`,
        # among them) and keeps any other from starting
        cancel[0] = INTERRUPTED
        closer = np.zeros(driver.THREAD_SIZE, np.int64)
        closer[driver.THREAD_LAST] = 1
        drive(at, closer.ctypes.data)
        for r in running:
            workers.release(r)
    finally:
        watch.stop(watched)
    seconds = time.perf_counter() - t0
    for r in running:
        r.result()          # a worker's own exception (a bug, not a kernel failure) is raised here
    _scratch.give(sizes, held)      # (not before: every thread has ended)
    return Outcome(errs, int(cancel[0]), seconds, nthreads)


class _Scratch:
    """One thread's shared, private and work memory, and whether it must be zeroed before use
    (a kept set holds what its last dispatch left)."""

    def __init__(self, sizes):
        self.arrays = tuple(np.zeros(n, np.uint8) for n in sizes)
        self.addrs = tuple(a.ctypes.data for a in self.arrays)
        self.dirty = False

    def zero(self) -> tuple:
        """(address, bytes) x 3 for the thread to zero (bytes 0 where it is zero already)."""
        return tuple(x for a, n in zip(self.addrs, self.arrays) for x in (a, n.nbytes if self.dirty else 0))


class _ScratchPool:
    """Shared, private and work memory for the threads of dispatches, kept between dispatches:
    fresh arrays (calloc) came as untouched pages, faulted in and zeroed by the kernels while they
    ran (wg_tensor's 768 KB of work memory per thread); a kept one is zeroed again, its pages in
    place, by the thread that runs kernels with it (jitcoop.runtime.driver). Kept by size, up to
    KEEP bytes in all (the most recent)."""
    KEEP = 64 << 20

    def __init__(self):
        self.lock = threading.Lock()
        self.free: dict[tuple, list] = {}
        self.bytes = 0

    def take(self, sizes: tuple) -> _Scratch:
        with self.lock:
            kept = self.free.get(sizes)
            got = kept.pop() if kept else None
            if got is not None:
                self.bytes -= sum(sizes)
        return got if got is not None else _Scratch(sizes)

    def give(self, sizes: tuple, sets: list):
        with self.lock:
            for s in sets:
                if self.bytes + sum(sizes) > self.KEEP:
                    self.free.clear()
                    self.bytes = 0
                s.dirty = True          # (zeroed by the thread that uses it next: driver)
                self.free.setdefault(sizes, []).append(s)
                self.bytes += sum(sizes)


_scratch = _ScratchPool()


def _forget_scratch():
    """A forked child starts a pool of its own (the parent's lock may have been held)."""
    global _scratch
    _scratch = _ScratchPool()


os.register_at_fork(after_in_child=_forget_scratch)

