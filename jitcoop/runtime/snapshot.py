"""Copies of the buffers a dispatch may write, so that a failed or cancelled dispatch leaves them
as they were.

The copy is taken by the dispatch's threads together, before any of them runs a kernel: a 4 MB
output buffer, cold in the cache after the dispatch before, took 0.45-0.55 ms to copy, which the
dispatching thread spent alone while the other threads waited for their first chunk (3% of a
18 ms two-thread GEMM). The buffers are cut into pieces, which the threads take in turn
(jitcoop.runtime.driver: each thread copies pieces until none is left, then waits for the pieces
still being copied by others, at most one each). A piece is marked copied once its copy has
ended; restore() puts back the marked pieces only: a dispatch cancelled before every piece was
copied runs no kernel, so the pieces never copied were never written.
"""
from __future__ import annotations

import numpy as np

# bytes: a piece is copied in 30-70 us
PIECE = 1 << 19


class Snapshot:
    """`views`: the uint8 views of the buffers (each once). `pieces` (int64 rows of destination
    address, source address, bytes) and `copied` (a uint8 flag per piece) are what the dispatch's
    threads work from; restore() after a failure puts the copied bytes back."""

    def __init__(self, views):
        self.views = [v for v in views if v.nbytes]
        self.copies = [np.empty_like(v) for v in self.views]
        self.spans = [(i, s, min(s + PIECE, v.nbytes))
                      for i, v in enumerate(self.views) for s in range(0, v.nbytes, PIECE)]
        addr = [(c.ctypes.data, v.ctypes.data) for c, v in zip(self.copies, self.views)]
        self.pieces = np.array([(addr[i][0] + s, addr[i][1] + s, e - s) for i, s, e in self.spans],
                               np.int64).reshape(-1, 3)
        self.copied = np.zeros(len(self.spans), np.uint8)

    def restore(self):
        """The copied pieces back."""
        for (v, s, e), done in zip(self.spans, self.copied):
            if done:
                self.views[v][s:e] = self.copies[v][s:e]
