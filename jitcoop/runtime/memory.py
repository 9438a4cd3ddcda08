"""Device memory: buffers with 64-bit device addresses, and the byte views dispatch works on.

A `Buffer`'s device address is the host address of its bytes, so a pointer a shader reads from
memory is usable as it is; the dispatch checks every access through such a pointer against the
table of ranges it handed out (`ranges`), so a bad pointer is an error, never a stray write.
"""
from __future__ import annotations

import weakref

import numpy as np


class Buffer:
    """A numpy array placed in a device's address space.

    `array` is what shaders read and write (the array passed in when it is C-contiguous, else a
    contiguous copy); `address` is its 64-bit device address.
    """

    def __init__(self, device, arr):
        a = np.asarray(arr)
        self._copied = not a.flags.c_contiguous
        self.array = np.ascontiguousarray(a) if self._copied else a
        if self.array.nbytes == 0:
            self.array = np.zeros(16, np.uint8)
        self.device = device
        self.address = int(self.array.ctypes.data)
        self.nbytes = int(self.array.nbytes)

    @property
    def bytes(self) -> np.ndarray:
        """The buffer's memory as a flat uint8 array (a view: writes reach the buffer)."""
        return self.array.reshape(-1).view(np.uint8)

    def __repr__(self):
        return f"Buffer(address={self.address:#x}, nbytes={self.nbytes}, dtype={self.array.dtype})"


class AddressSpace:
    """The buffers a device has handed addresses to (held weakly: a dropped buffer is unmapped)."""

    def __init__(self):
        self._buffers = weakref.WeakSet()

    def add(self, buf: Buffer):
        self._buffers.add(buf)

    def buffers(self) -> list:
        return [b for b in list(self._buffers)]


def byte_view(arr: np.ndarray) -> np.ndarray:
    return arr.reshape(-1).view(np.uint8)


def merged_ranges(ranges) -> list:
    """Sorted, merged [start, end) pairs of (start, bytes) ranges, for the generated in_ranges()
    checks (one [0, 0] row when there is none)."""
    rs = sorted((s, s + n) for s, n in ranges if n > 0)
    merged = []
    for s, e in rs:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged or [[0, 0]]
