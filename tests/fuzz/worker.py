"""The fuzz worker process: runs cases one after another under memory and CPU limits.

    python3 -m tests.fuzz.worker MEMORY_BYTES CPU_SECONDS

Started by tests/fuzz/runner.py with pipes: each request on stdin and each answer on the
protocol descriptor is a length-prefixed pickle (a case dict in, a result dict out). The address
space is limited once (RLIMIT_AS: a compile or dispatch that allocates past it gets MemoryError,
or dies, which the parent reports as `memory`); before each case the CPU limit is moved to what
the process has used plus CPU_SECONDS (RLIMIT_CPU: a case that spins past it is killed by
SIGXCPU, which the parent reports as `timeout`). faulthandler writes the Python stack of a crash
to stderr, which the parent keeps.
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import resource
import struct
import sys


def _read(f, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def main() -> int:
    memory, cpu = int(sys.argv[1]), float(sys.argv[2])
    # Answers go out on a private copy of stdout; stray prints (a library's warnings) go to stderr.
    proto = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    faulthandler.enable(sys.stderr)
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    from .case import run_case
    from .dispatch import run_dispatch_case
    inp = sys.stdin.buffer
    while True:
        try:
            n = struct.unpack("<Q", _read(inp, 8))[0]
        except EOFError:
            return 0
        case = pickle.loads(_read(inp, n))
        used = resource.getrusage(resource.RUSAGE_SELF)
        soft = int(used.ru_utime + used.ru_stime + cpu) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))
        print(f"case {case.get('name', '?')}", file=sys.stderr, flush=True)
        result = run_dispatch_case(case) if case.get("kind") == "dispatch" else run_case(case)
        data = pickle.dumps(result)
        proto.write(struct.pack("<Q", len(data)) + data)
        proto.flush()


if __name__ == "__main__":
    sys.exit(main())
