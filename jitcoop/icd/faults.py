"""Injected faults: a testing aid that makes the driver fail at chosen points, so that an
application's (and the driver's own) handling of each failure can be tested without a machine
that runs out of memory or a shader that breaks the compiler.

    JITCOOP_ICD_FAULTS=POINT[:N][,POINT[:N]...]

A point with N fails the Nth time the process reaches it (counted from 1, over every instance
and device); without N, every time. The points, and what the application sees:

    alloc            vkAllocateMemory returns VK_ERROR_OUT_OF_DEVICE_MEMORY and allocates nothing
    compile          a pipeline's compile fails: the vkQueueSubmit that first needs it loses the
                     device and returns VK_ERROR_DEVICE_LOST (or, with JITCOOP_ICD_COMPILE=eager,
                     vkCreateComputePipelines returns VK_ERROR_UNKNOWN)
    compile_timeout  a pipeline's compile never ends: it runs in a child process under the
                     compile time limit (JITCOOP_ICD_COMPILE_TIMEOUT, 1 s when none is set),
                     which kills it, and then fails as `compile` does
    worker           a thread of a dispatch raises once it has run its share of the workgroups
                     (jitcoop.runtime.faults): the buffers the dispatch wrote are restored and
                     the device is lost

Every injected fault is reported through VK_EXT_debug_utils (or stderr) as "injected fault".
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

POINTS = ("alloc", "compile", "compile_timeout", "worker")
INJECTED_COMPILE_LIMIT = 1.0          # seconds: the limit of compile_timeout when none is set


class FaultsError(ValueError):
    pass


@dataclass(frozen=True)
class Fault:
    point: str
    nth: int | None           # None: every time


def parse(text: str) -> tuple:
    """The faults of a JITCOOP_ICD_FAULTS value."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        point, sep, n = item.partition(":")
        if point not in POINTS:
            raise FaultsError(f"JITCOOP_ICD_FAULTS: unknown fault point {point!r}; the points are "
                              f"{', '.join(POINTS)}")
        nth = None
        if sep:
            try:
                nth = int(n)
            except ValueError:
                nth = 0
            if nth < 1:
                raise FaultsError(f"JITCOOP_ICD_FAULTS: {item!r}: N must be a whole number from 1")
        out.append(Fault(point, nth))
    return tuple(out)


_lock = threading.Lock()
_reached: dict = {}           # point -> how many times the process has reached it


def reached(faults: tuple, point: str) -> bool:
    """Count one more arrival at `point`; whether a fault of `faults` fails this one."""
    with _lock:
        n = _reached[point] = _reached.get(point, 0) + 1
    return any(f.point == point and (f.nth is None or f.nth == n) for f in faults)


def message(point: str) -> str:
    return f"injected fault ({point}, JITCOOP_ICD_FAULTS)"
