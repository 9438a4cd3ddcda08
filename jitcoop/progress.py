"""Progress of long dispatches and compiles on a terminal, through tqdm.

A `Progress` costs nothing until it has run for `DELAY` seconds (2): only then, and only where its
stream is a terminal, does it open a tqdm bar (done / total, elapsed time, rate). Short work, the
common case, never creates a bar; output to a file or a pipe (CI logs) stays clean.

    p = Progress(total, "dispatch", unit="workgroup")
    ...            p.update(done)      # from the one thread that owns p, as often as convenient
    p.close()                          # or `with Progress(...) as p:`

A dispatch has one, driven by the process's watcher thread (jitcoop.runtime.watch) while the
workers run. A compiler reports its steps the same way, e.g. per function compiled:

    with Progress(len(functions), "compile", unit="function") as p:
        for i, f in enumerate(functions, 1):
            compile_one(f)
            p.update(i)

Quiet: `JITCOOP_PROGRESS=0` in the environment or `jitcoop.progress.set_enabled(False)`;
`JITCOOP_PROGRESS=1` or `set_enabled(True)` shows bars even where the stream is not a terminal.
"""
from __future__ import annotations

import os
import sys
import time

DELAY = 2.0                 # seconds before a bar appears
MININTERVAL = 0.25          # seconds between redraws
_enabled: bool | None = None
_tty: tuple = (None, False)        # the last stream _wanted() looked at, and whether it is a terminal


def set_enabled(on: bool | None):
    """True: always show; False: never; None (default): on terminals, unless JITCOOP_PROGRESS
    says otherwise."""
    global _enabled
    _enabled = on


def _wanted(stream) -> bool:
    if _enabled is not None:
        return _enabled
    env = os.environ.get("JITCOOP_PROGRESS", "").strip().lower()
    if env in ("0", "false", "no", "off"):
        return False
    if env in ("1", "true", "yes", "on"):
        return True
    global _tty
    if _tty[0] is not stream:       # (a system call: asked once per stream, not per dispatch)
        isatty = getattr(stream, "isatty", None)
        _tty = (stream, bool(isatty and isatty()))
    return _tty[1]


class Progress:
    """done / total of one piece of work, shown after DELAY seconds on a terminal (see the
    module docstring)."""

    def __init__(self, total: int, desc: str, unit: str = "it", stream=None):
        self.total = int(total)
        self.desc = desc
        self.unit = unit
        self.stream = stream
        self._start = time.perf_counter()
        self._bar = None
        self._done = 0

    def may_show(self) -> bool:
        """Whether a bar would appear once DELAY has passed (a terminal, or bars asked for)."""
        return _wanted(self.stream if self.stream is not None else sys.stderr)

    def update(self, done: int):
        """Set the count done so far (absolute, not an increment)."""
        done = min(int(done), self.total)
        if self._bar is None:
            if time.perf_counter() - self._start < DELAY:
                self._done = done
                return
            stream = self.stream if self.stream is not None else sys.stderr
            if not _wanted(stream):
                self._start = float("inf")       # decided: no bar, no more checks
                return
            from tqdm import tqdm
            self._bar = tqdm(total=self.total, desc=self.desc, unit=self.unit, file=stream,
                             initial=self._done, mininterval=MININTERVAL, miniters=1, dynamic_ncols=True,
                             leave=False)
            self._bar.start_t -= time.perf_counter() - self._start     # the time already spent
        if done > self._done:
            self._bar.update(done - self._done)
            self._done = done

    def close(self):
        """Close the bar, if one was opened."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
