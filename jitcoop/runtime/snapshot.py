"""Copies of the buffers a dispatch may write, so that a failed or cancelled dispatch leaves them
as they were.

The copy is taken by the dispatch's threads together, before any of them runs a kernel: a 4 MB
output buffer, cold in the cache after the dispatch before, took 0.45-0.55 ms to copy, which the
dispatching thread spent alone while the other threads waited for their first chunk (3% of a
18 ms two-thread GEMM). The buffers are cut into pieces; each thread takes pieces until none is
left, then waits for the pieces still being copied by others (at most one piece each: tens of
microseconds). numpy copies with the GIL released, so the threads copy at once. The wait is an
Event, not a spin: a thread spinning in Python holds the GIL, which the copying thread needs back
when its copy returns (CPython hands it over after 5 ms).
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

# bytes: a piece is copied in 30-70 us, against 5 us of Python per piece
PIECE = 1 << 19


class Snapshot:
    """`views`: the uint8 views of the buffers (each once). take() on every thread of the
    dispatch before its first kernel; restore() after a failure puts the bytes back."""

    def __init__(self, views):
        self.views = [v for v in views if v.nbytes]
        self.copies = [np.empty_like(v) for v in self.views]
        self.pieces = [(i, s, min(s + PIECE, v.nbytes))
                       for i, v in enumerate(self.views) for s in range(0, v.nbytes, PIECE)]
        self.copied = [False] * len(self.pieces)
        self._counter = itertools.count()
        self._done = 0
        self._lock = threading.Lock()
        self._all = threading.Event()
        if not self.pieces:
            self._all.set()

    def take(self, cancelled=lambda: False) -> bool:
        """Copy pieces until none is left, then wait for the others' (True), or until
        cancelled() while some piece is not copied (False: run no kernel then). A Ctrl-C may
        leave a piece taken and not counted; the dispatch is cancelled then, so nobody waits for
        it. Pieces are handed out by itertools.count, one C call, so none is taken twice."""
        n = len(self.pieces)
        while True:
            i = next(self._counter)
            if i >= n:
                break
            v, s, e = self.pieces[i]
            try:
                np.copyto(self.copies[v][s:e], self.views[v][s:e])
                self.copied[i] = True
            finally:                # (counted even if it raised: the others must not wait forever)
                with self._lock:
                    self._done += 1
                    if self._done == n:
                        self._all.set()
        while not self._all.wait(0.05):     # pieces other threads copy: a piece's time at most
            if cancelled():
                return False
        return True

    def restore(self):
        """The copied pieces back. A piece not copied was never written: a Ctrl-C on the only
        thread, between its pieces, stops the dispatch before any kernel runs (with several
        threads, the others copy what is left before theirs run)."""
        for (v, s, e), done in zip(self.pieces, self.copied):
            if done:
                self.views[v][s:e] = self.copies[v][s:e]
