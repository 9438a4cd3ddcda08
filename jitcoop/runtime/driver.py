"""What each thread of a dispatch runs, as machine code: zero its scratch memory, copy pieces of the
snapshot, then take chunks of workgroups and call the kernel on them, until none is left, the
dispatch is cancelled or a kernel fails.

In Python this was a loop per thread (jitcoop.runtime.dispatch before): a worker could start only
once it held the GIL, which the dispatching thread kept while it ran Python of its own (its
snapshot pieces, its first chunk's arguments), so the second thread's first kernel started
100-200 us after the first's, and every chunk took the GIL again. Now a thread's whole part of a
dispatch is one ctypes call (the GIL released throughout), and a thread zeroes its own scratch
memory, in parallel with the others and into its own cache, where the dispatching thread zeroed
every thread's before any of them started.

    i64 jc.drive(ptr plan, ptr thread)

`plan` (int64, shared by the dispatch's threads; the PLAN_* indices below): the kernel's address
and its arguments common to all threads, the next workgroup (taken with compare-and-swap: guided
self-scheduling, each chunk a 1/share of what is left and at least `least`), the snapshot's pieces
(taken with an atomic add while the dispatch is not cancelled; each marked copied in `copied`
before it is counted done). `thread` (int64, THREAD_*): its scratch argument, its failure record,
three (address, bytes) pairs to zero, and whether it is the dispatching thread. A kernel that
fails sets the dispatch's cancel flag to FAILED (when nothing set it first), so the other threads
stop at their next chunk or loop back edge. A thread waiting for pieces others copy
yields its CPU between looks and gives up once the dispatch is cancelled (it then runs no kernel).

The dispatching thread's call (THREAD_LAST) returns only once every thread that started has
ended: it closes the dispatch (a bit in PLAN_STARTED, so that a worker starting later does
nothing, not even read the plan past that word) and waits, yielding, for PLAN_ENDED to reach the
number that started. Waiting instead for the workers' Python to end (a lock each, released once
the worker had the GIL back) cost 0.1-0.2 ms a dispatch in wake-ups (jitcoop.runtime.workers:
the pool counts such a worker idle at once).
"""
from __future__ import annotations

import ctypes
import hashlib
import threading

from . import jit
from .cache import cache_dir, read_entry, write_entry
from .watch import FAILED

(PLAN_KERNEL, PLAN_GRID, PLAN_BIND, PLAN_PUSH, PLAN_RANGES, PLAN_NRANGES, PLAN_CANCEL, PLAN_NEXT,
 PLAN_END, PLAN_SHARE, PLAN_LEAST, PLAN_NPIECES, PLAN_PIECES, PLAN_NEXT_PIECE, PLAN_PIECES_DONE,
 PLAN_COPIED, PLAN_STARTED, PLAN_ENDED) = range(18)
PLAN_SIZE = 18
CLOSED = 1 << 32            # in PLAN_STARTED: the dispatch is over; a thread starting now does nothing
# per thread: scratch, err, (address, bytes) x 3 to zero, and whether it is the last to return
(THREAD_SCRATCH, THREAD_ERR, THREAD_ZERO, THREAD_LAST) = (0, 1, 2, 8)
THREAD_SIZE = 9

_IR = """
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare i32 @sched_yield()

define internal i64 @get(ptr %p, i64 %i) {
  %a = getelementptr i64, ptr %p, i64 %i
  %v = load i64, ptr %a
  ret i64 %v
}

define internal ptr @getp(ptr %p, i64 %i) {
  %v = call i64 @get(ptr %p, i64 %i)
  %q = inttoptr i64 %v to ptr
  ret ptr %q
}

define i64 @jc.drive(ptr %plan, ptr %thread) {
entry:
  %startedp = getelementptr i64, ptr %plan, i64 PLAN_STARTED
  %before = atomicrmw add ptr %startedp, i64 1 seq_cst
  %closed = icmp uge i64 %before, CLOSED
  br i1 %closed, label %late, label %go

late:                                   ; the dispatch ended before this thread started
  ret i64 0

go:
  %ret = call i64 @work(ptr %plan, ptr %thread)
  %endedp = getelementptr i64, ptr %plan, i64 PLAN_ENDED
  %last = call i64 @get(ptr %thread, i64 THREAD_LAST)
  %waits = icmp ne i64 %last, 0
  br i1 %waits, label %close, label %end

close:                                  ; no thread starts from now on; wait for those that did
  %was = atomicrmw or ptr %startedp, i64 CLOSED seq_cst
  %others = sub i64 %was, 1
  br label %wait.others

wait.others:
  %n = load atomic i64, ptr %endedp seq_cst, align 8
  %all.ended = icmp uge i64 %n, %others
  br i1 %all.ended, label %end, label %wait.others.yield

wait.others.yield:
  %y = call i32 @sched_yield()
  br label %wait.others

end:
  %e = atomicrmw add ptr %endedp, i64 1 seq_cst
  ret i64 %ret
}

define internal i64 @work(ptr %plan, ptr %thread) {
entry:
  %cancel = call ptr @getp(ptr %plan, i64 PLAN_CANCEL)
  br label %zero

zero:                                   ; this thread's scratch memory, zeroed by this thread
  %z = phi i64 [0, %entry], [%z1, %zero]
  %zi = mul i64 %z, 2
  %zi0 = add i64 %zi, THREAD_ZERO
  %zp = call ptr @getp(ptr %thread, i64 %zi0)
  %zi1 = add i64 %zi0, 1
  %zn = call i64 @get(ptr %thread, i64 %zi1)
  call void @llvm.memset.p0.i64(ptr %zp, i8 0, i64 %zn, i1 false)
  %z1 = add i64 %z, 1
  %zmore = icmp ult i64 %z1, 3
  br i1 %zmore, label %zero, label %pieces.head

pieces.head:
  %np = call i64 @get(ptr %plan, i64 PLAN_NPIECES)
  %pieces = call ptr @getp(ptr %plan, i64 PLAN_PIECES)
  %copied = call ptr @getp(ptr %plan, i64 PLAN_COPIED)
  %nextp = getelementptr i64, ptr %plan, i64 PLAN_NEXT_PIECE
  %donep = getelementptr i64, ptr %plan, i64 PLAN_PIECES_DONE
  br label %piece

piece:                                  ; copy pieces of the snapshot until none is left
  %cp = load atomic i64, ptr %cancel seq_cst, align 8
  %cpz = icmp eq i64 %cp, 0
  br i1 %cpz, label %piece.take, label %out

piece.take:
  %i = atomicrmw add ptr %nextp, i64 1 seq_cst
  %more = icmp ult i64 %i, %np
  br i1 %more, label %copy, label %wait

copy:
  %i3 = mul i64 %i, 3
  %dst = call ptr @getp(ptr %pieces, i64 %i3)
  %i31 = add i64 %i3, 1
  %src = call ptr @getp(ptr %pieces, i64 %i31)
  %i32 = add i64 %i3, 2
  %n = call i64 @get(ptr %pieces, i64 %i32)
  call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %src, i64 %n, i1 false)
  %flag = getelementptr i8, ptr %copied, i64 %i
  store atomic i8 1, ptr %flag seq_cst, align 1
  %old = atomicrmw add ptr %donep, i64 1 seq_cst
  br label %piece

wait:                                   ; the pieces others are copying
  %done = load atomic i64, ptr %donep seq_cst, align 8
  %all = icmp uge i64 %done, %np
  br i1 %all, label %chunks.head, label %wait.cancel

wait.cancel:
  %c0 = load atomic i64, ptr %cancel seq_cst, align 8
  %c0z = icmp eq i64 %c0, 0
  br i1 %c0z, label %wait.yield, label %out

wait.yield:
  %y = call i32 @sched_yield()
  br label %wait

chunks.head:
  %kernel = call ptr @getp(ptr %plan, i64 PLAN_KERNEL)
  %grid = call ptr @getp(ptr %plan, i64 PLAN_GRID)
  %bind = call ptr @getp(ptr %plan, i64 PLAN_BIND)
  %push = call ptr @getp(ptr %plan, i64 PLAN_PUSH)
  %ranges = call ptr @getp(ptr %plan, i64 PLAN_RANGES)
  %nranges = call i64 @get(ptr %plan, i64 PLAN_NRANGES)
  %end = call i64 @get(ptr %plan, i64 PLAN_END)
  %share = call i64 @get(ptr %plan, i64 PLAN_SHARE)
  %least = call i64 @get(ptr %plan, i64 PLAN_LEAST)
  %scratch = call ptr @getp(ptr %thread, i64 THREAD_SCRATCH)
  %err = call ptr @getp(ptr %thread, i64 THREAD_ERR)
  %nextwg = getelementptr i64, ptr %plan, i64 PLAN_NEXT
  br label %chunk

chunk:                                  ; a 1/share of what is left, at least `least`
  %s = load atomic i64, ptr %nextwg seq_cst, align 8
  %left = icmp slt i64 %s, %end
  br i1 %left, label %chunk.cancel, label %out

chunk.cancel:
  %c1 = load atomic i64, ptr %cancel seq_cst, align 8
  %c1z = icmp eq i64 %c1, 0
  br i1 %c1z, label %chunk.take, label %out

chunk.take:
  %rest = sub i64 %end, %s
  %r1 = add i64 %rest, %share
  %r2 = sub i64 %r1, 1
  %part = sdiv i64 %r2, %share
  %big = icmp sgt i64 %part, %least
  %size = select i1 %big, i64 %part, i64 %least
  %e = add i64 %s, %size
  %got = cmpxchg ptr %nextwg, i64 %s, i64 %e seq_cst seq_cst
  %ok = extractvalue { i64, i1 } %got, 1
  br i1 %ok, label %run, label %chunk

run:
  %past = icmp sgt i64 %e, %end
  %e1 = select i1 %past, i64 %end, i64 %e
  %ret = call i64 %kernel(i64 %s, i64 %e1, ptr %grid, ptr %bind, ptr %push, ptr %scratch, ptr %ranges,
                          i64 %nranges, ptr %err, ptr %cancel)
  %failed = icmp ne i64 %ret, 0
  br i1 %failed, label %fail, label %chunk

fail:                                   ; stop the other threads: the dispatch has failed
  %f = cmpxchg ptr %cancel, i64 0, i64 FAILED seq_cst seq_cst
  ret i64 %ret

out:
  ret i64 0
}
"""

_fn: list = []
_lock = threading.Lock()


def _ir() -> str:
    text = _IR.replace("FAILED", str(FAILED)).replace("CLOSED", str(CLOSED))
    names = [n for n in globals() if n.startswith(("PLAN_", "THREAD_")) and not n.endswith("_SIZE")]
    for name in sorted(names, key=len, reverse=True):      # PLAN_NEXT_PIECE before PLAN_NEXT
        text = text.replace(name, str(globals()[name]))
    return text


_DESCRIBED = {"symbol": "jc.drive"}      # the driver's cache entry's metadata


def _described(meta):
    if meta != _DESCRIBED:
        raise ValueError("not the driver's description")
    return meta


def drive():
    """The ctypes function jc.drive(plan, thread) -> i64 (compiled once, kept on disk)."""
    if _fn:
        return _fn[0]
    with _lock:
        if not _fn:
            text = _ir()
            key = hashlib.sha256((text + jit.host_key()).encode()).hexdigest()[:20]
            path = cache_dir() / f"drive_{key}.entry"
            got = read_entry(path, "driver", key, _described)
            if got is not None:
                obj = got[1]
            else:
                obj = jit.compile_ir(text, level=2)
                write_entry(path, "driver", key, _DESCRIBED, obj)
            addr = jit.load_object(f"drive_{key}", obj, ["jc.drive"])["jc.drive"]
            _fn.append(jit.c_function(addr, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p))
    return _fn[0]
