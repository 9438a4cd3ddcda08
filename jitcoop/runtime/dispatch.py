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

from . import driver, faults, watch, workers
from .memory import merged_ranges
from .snapshot import Snapshot
from .watch import FAILED, INTERRUPTED, SUPERSEDED, TIMEOUT  # noqa: F401 (cancel[0]: why a dispatch stops early)


@dataclass
class Outcome:
    errs: list              # per-thread failure records and profile counters (int64 arrays)
    cancel: int             # 0, or TIMEOUT / FAILED / INTERRUPTED / SUPERSEDED
    seconds: float
    threads: int


class Running:
    """A dispatch in flight, as another thread may stop it so that it runs again on other code:
    a kernel's first dispatch at the fast tier, which the optimized code overtakes
    (jitcoop.api.Kernel._promoted). One handle serves one run of the dispatch."""

    def __init__(self):
        self._lock = threading.Lock()
        self._frame = None
        self._state = "waiting"           # "waiting", "running", "ended"
        self._wanted = False              # superseded before it started

    def _start(self, frame, o_cancel: int, begin: int, end: int):
        with self._lock:
            self._frame, self._at, self._state = frame, (o_cancel, begin, end), "running"
            if self._wanted:
                frame[o_cancel] = SUPERSEDED      # (its threads run nothing)

    def _end(self):
        with self._lock:
            self._frame, self._state = None, "ended"

    def supersede(self, most_done: float = 0.5) -> bool:
        """Stop the dispatch (its outcome's cancel is SUPERSEDED) if its threads have taken at
        most `most_done` of its workgroups and nothing else stopped it, or as it starts if it
        has not yet; whether it is stopped."""
        with self._lock:
            if self._state == "waiting":
                self._wanted = True
                return True
            f = self._frame
            if f is None:
                return False
            o_cancel, begin, end = self._at
            taken = min(int(f[driver.PLAN_NEXT]), end) - begin
            if f[o_cancel] != 0 or taken > most_done * (end - begin):
                return False
            f[o_cancel] = SUPERSEDED
            return True


def run(kernel: int, meta, consts: np.ndarray, grid: tuple, bind: list, push: tuple, physical: list,
        nthreads: int, timeout: float | None, snapshot: Snapshot | None = None,
        handle: Running | None = None) -> Outcome:
    """Run every workgroup of `grid` (kernel: its address). bind: [address, size] per binding;
    push: (address, size); physical: (address, size) of every buffer a device address may point
    into; snapshot: the buffers the dispatch may write, copied by its threads before the first
    kernel (restored here to find the first failure again, and by the caller after a failure);
    handle: through it another thread may supersede the dispatch."""
    nwg = grid[0] * grid[1] * grid[2]
    out = _run(kernel, meta, consts, grid, bind, push, physical, nthreads, timeout, 0, nwg, snapshot, handle)
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
         snapshot: Snapshot | None, handle: Running | None = None) -> Outcome:
    """Run workgroups [begin, end) on nthreads threads (jitcoop.runtime.driver: each zeroes its
    scratch memory and takes its part of the snapshot first)."""
    nwg = end        # workgroups up to (not including) this one
    lanes = math.prod(meta.local_size)
    sizes = (max(16, meta.shared_size), max(16, meta.private_frame * lanes), max(64, meta.work_size))
    held = [_scratch.take(sizes) for _ in range(nthreads)]
    ranges = [(bind[i], bind[i + 1]) for i in range(0, len(bind), 2)] + physical + [push]
    for sc in held:
        ranges += [(sc.addrs[0], sizes[0]), (sc.addrs[1], sizes[1])]
    table = merged_ranges(ranges)
    # The frame: everything the dispatch's threads read and write, in one int64 array (one
    # allocation and one address, where a dozen small arrays and their addresses took a third of
    # a small dispatch's Python): the driver's plan, the kernel's grid, push range and cancel
    # flag, the bindings, each thread's scratch argument and driver row, the range table, and
    # each thread's failure record (zero, last).
    ew = 8 + (meta.profile.size if meta.profile is not None else 0)
    bind = bind or [0, 0]
    o_grid = driver.PLAN_SIZE
    o_push, o_cancel, o_bind = o_grid + 3, o_grid + 5, o_grid + 6
    o_scratch = o_bind + len(bind)
    o_threads = o_scratch + 4 * nthreads
    o_table = o_threads + driver.THREAD_SIZE * nthreads
    o_errs = o_table + 2 * len(table)
    frame = np.zeros(o_errs + ew * nthreads, np.int64)
    at = frame.ctypes.data
    plan = [0] * driver.PLAN_SIZE
    plan[driver.PLAN_KERNEL] = kernel
    plan[driver.PLAN_GRID], plan[driver.PLAN_BIND], plan[driver.PLAN_PUSH] = (
        at + 8 * o_grid, at + 8 * o_bind, at + 8 * o_push)
    plan[driver.PLAN_RANGES], plan[driver.PLAN_NRANGES] = at + 8 * o_table, len(table)
    plan[driver.PLAN_CANCEL] = at + 8 * o_cancel
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
    values = plan + list(grid) + list(push) + [0] + bind
    consts_at = consts.ctypes.data
    for sc in held:
        values += sc.addrs + (consts_at,)
    # per thread (driver.THREAD_*): its scratch argument, its failure record, the memory it
    # zeroes, whether it waits for the others (inline, this thread's driver returns once every
    # thread that started has ended, and a worker that starts later does nothing: waiting here
    # for the workers' tasks cost a wake-up after their Python ended, 0.1-0.2 ms a dispatch)
    inline = watch.inline()
    for t, sc in enumerate(held):
        last = int(inline and t == 0)
        values += (at + 8 * (o_scratch + 4 * t), at + 8 * (o_errs + ew * t)) + sc.zero() + (last,)
    for r in table:
        values += r
    frame[:o_errs] = values
    cancel = frame[o_cancel:o_cancel + 1]
    errs = frame[o_errs:].reshape(nthreads, ew)
    mine = [at + 8 * (o_threads + driver.THREAD_SIZE * t) for t in range(nthreads)]
    drive = driver.drive()
    fail = faults.take_worker()          # (testing: one thread raises, jitcoop.runtime.faults)

    t0 = time.perf_counter()
    if handle is not None:
        handle._start(frame, o_cancel, begin, nwg)
    running = []
    watched = None
    try:
        # The workers first, so that their wake-up overlaps the watcher's Python below (a woken
        # worker needs the GIL for the call into its driver: it gets it when this thread calls
        # its own, at the latest).
        for t in range(1 if inline else 0, nthreads):      # (one by one: a Ctrl-C may come between)
            fn = faults.failing(drive) if fail and t == nthreads - 1 else drive
            running.append(workers.submit(fn, at, mine[t], keep=frame))
        done = lambda: min(int(frame[driver.PLAN_NEXT]), nwg) - begin     # noqa: E731 (the progress bar's count)
        watched = watch.start(nwg - begin, done, cancel, timeout)
        if inline:
            (faults.failing(drive) if fail and nthreads == 1 else drive)(at, mine[0])
            for r in running:
                if fail and r is running[-1]:
                    r.wait()        # (the failing worker raises even if it starts after the work is done)
                else:
                    workers.release(r)
        else:
            for r in running:
                while not r.wait(0.05):     # (a Ctrl-C is raised here)
                    pass
    except BaseException as e:
        # A Ctrl-C, or what a program's own signal handler raised: cancelled, then closed (a
        # driver call with nothing of its own to do waits for the threads that started, a worker
        # submitted as the exception came among them, and keeps any other from starting), so
        # that nothing runs on once this returns. A Ctrl-C is the dispatch's outcome; anything
        # else goes on up.
        cancel[0] = INTERRUPTED
        closer = np.zeros(driver.THREAD_SIZE, np.int64)
        closer[driver.THREAD_LAST] = 1
        drive(at, closer.ctypes.data)
        for r in running:
            workers.release(r)
        if not isinstance(e, KeyboardInterrupt):
            raise
    finally:
        if watched is not None:
            watch.stop(watched)
        if handle is not None:
            handle._end()
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
        return tuple(x for at, arr in zip(self.addrs, self.arrays) for x in (at, arr.nbytes if self.dirty else 0))


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

