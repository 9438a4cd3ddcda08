"""The parent side: a worker process (tests/fuzz/worker.py) that runs cases, restarted when it
dies, hangs, has abandoned a compile, or has run many cases (its execution engine only grows).

`Runner.run(case)` always returns a result dict (see tests/fuzz/case.py); a worker that dies
during a case gives `crash` (or `memory`, when its last words say it ran out of memory, or
`timeout` for SIGXCPU), one that does not answer within the wall-clock limit is killed: `timeout`.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_MEMORY_WORDS = ("MemoryError", "bad_alloc", "out of memory", "Cannot allocate memory", "LLVM ERROR: out of")


class Runner:
    def __init__(self, memory: int = 4 << 30, cpu: float = 120.0, wall: float = 180.0,
                 cache_dir: str | None = None, restart_every: int = 250, nice: int = 0):
        self.memory, self.cpu, self.wall = memory, cpu, wall
        self.cache_dir = cache_dir
        self.restart_every = restart_every
        self.nice = nice
        self.proc = None
        self.log = None
        self.done_here = 0

    # -- the worker process -----------------------------------------------------------------------
    def _start(self):
        env = dict(os.environ, JITCOOP_PROGRESS="0", PYTHONFAULTHANDLER="1")
        if self.cache_dir:
            env["JITCOOP_CACHE_DIR"] = self.cache_dir
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fuzz.worker", str(self.memory), str(self.cpu)],
            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            preexec_fn=(lambda: os.nice(self.nice)) if self.nice else None)
        self.done_here = 0

    def close(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _last_words(self) -> str:
        self.log.seek(0)
        text = self.log.read().decode(errors="replace")
        cut = text.rfind("\ncase ")
        return text[cut + 1:] if cut >= 0 else text[-6000:]

    # -- one case ---------------------------------------------------------------------------------
    def run(self, case: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None or self.done_here >= self.restart_every:
            self.close()
            self._start()
        data = pickle.dumps(case)
        t0 = time.perf_counter()
        try:
            self.proc.stdin.write(struct.pack("<Q", len(data)) + data)
            self.proc.stdin.flush()
            result = self._answer(t0)
        except (BrokenPipeError, EOFError):
            result = self._death()
        result["wall_s"] = time.perf_counter() - t0
        self.done_here += 1
        if result["outcome"] in ("crash", "timeout", "memory", "compile_timeout"):
            # a dead worker, or one with an abandoned compile thread still running: start afresh
            self.close()
        return result

    def _answer(self, t0) -> dict:
        fd = self.proc.stdout.fileno()
        buf = b""
        need = 8
        while True:
            left = self.wall - (time.perf_counter() - t0)
            if left <= 0:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait()
                return {"outcome": "timeout", "stage": "?", "detail": f"no answer in {self.wall:g} s",
                        "signature": "timeout:wall", "last_words": self._last_words()[-3000:]}
            r, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not r:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise EOFError
            buf += chunk
            if len(buf) >= 8:
                need = 8 + struct.unpack("<Q", buf[:8])[0]
                if len(buf) >= need:
                    return pickle.loads(buf[8:need])

    def _death(self) -> dict:
        rc = self.proc.wait()
        words = self._last_words()
        if rc == -signal.SIGXCPU:
            outcome, detail = "timeout", "SIGXCPU (the CPU limit)"
        elif any(w in words for w in _MEMORY_WORDS):
            outcome, detail = "memory", f"died with status {rc} out of memory"
        else:
            outcome = "crash"
            detail = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
        stage = _stage_of(words)
        return {"outcome": outcome, "stage": stage, "detail": detail,
                "signature": f"{outcome}:{stage}:{detail}", "last_words": words[-6000:]}


def _stage_of(words: str) -> str:
    """Which step a dead worker was in, from faulthandler's stack."""
    for marker, stage in (("in dispatch", "dispatch"), ("runtime/dispatch.py", "dispatch"),
                          ("compile_kernel", "kernel"), ("in kernel", "kernel"), ("in load", "load")):
        if marker in words:
            return stage
    return "?"
