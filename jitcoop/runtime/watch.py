"""The watcher of running dispatches: progress bars, timeouts and Ctrl-C, on one thread for the
whole process.

A dispatching thread runs kernels itself (jitcoop.runtime.dispatch), so something else must set
a dispatch's cancel flag (polled by the kernels at every loop back edge) when its timeout passes,
and must keep its progress bar. Ctrl-C: Python runs its SIGINT handler in the main thread only,
between bytecodes, never while that thread is inside a kernel. While a dispatch of the main thread
runs, Python's signal wakeup fd (signal.set_wakeup_fd: the C-level handler writes the signal
number there at once) is a pipe of the watcher's, which cancels that dispatch on SIGINT and passes
what it reads on to a wakeup fd set before. Where SIGINT has a handler of the program's own, its
say is kept: the main thread then waits while workers run the kernels, as it always did, and the
handler runs there.

One thread rather than one per dispatch: a watcher per dispatch, woken at the dispatch's end, cost
the wake-up the dispatching thread saves by running kernels; left to end on its own, it lagged
behind back-to-back dispatches and the worker pool grew by a thread each time it did.
"""
from __future__ import annotations

import _signal      # getsignal without signal's enum wrapper (a ValueError raised inside: 4 us a dispatch)
import os
import selectors
import signal
import socket
import threading
import time

from ..progress import Progress

# cancel[0]: why a dispatch stops early (SUPERSEDED: its kernel's optimized code came, and it
# runs again on that: jitcoop.runtime.dispatch.Running)
TIMEOUT, FAILED, INTERRUPTED, SUPERSEDED = 1, 2, 3, 4
POLL = 0.05             # seconds between the watcher's looks at running dispatches


class Watched:
    """One running dispatch, as the watcher sees it. `ctrl_c`: its dispatching thread is the main
    thread and runs kernels itself (inline), so a Ctrl-C reaches the dispatch through the watcher."""

    def __init__(self, total: int, done, cancel, timeout: float | None):
        self.bar = Progress(total, "dispatch", unit="workgroup")      # shown after 2 s, on a terminal
        self.done, self.cancel = done, cancel
        self.deadline = None if timeout is None else time.perf_counter() + timeout
        self.ctrl_c = threading.current_thread() is threading.main_thread() and inline()
        # whether the watcher must look at it every POLL seconds (a Ctrl-C wakes it anyway)
        self.polled = self.deadline is not None or self.bar.may_show()


def inline() -> bool:
    """Whether a dispatch of the calling thread may run kernels in it: not where it is the main
    thread and SIGINT has a handler of the program's own, which must run there."""
    return (threading.current_thread() is not threading.main_thread()
            or _signal.getsignal(signal.SIGINT) is signal.default_int_handler)


class _Watcher:
    def __init__(self):
        self.lock = threading.Lock()
        self.active: list[Watched] = []
        # socket pairs, not pipes: a wakeup fd and select() both take sockets on every platform
        self.ctl_r, self.ctl_w = socket.socketpair()
        self.sig_r, self.sig_w = socket.socketpair()
        for sock in (self.ctl_r, self.ctl_w, self.sig_r, self.sig_w):
            sock.setblocking(False)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.ctl_r, selectors.EVENT_READ)
        self.sel.register(self.sig_r, selectors.EVENT_READ)
        self.old_wakeup = -1
        self.sleeping = False       # in select() with no time limit: nothing to poll
        threading.Thread(target=self._loop, name="jitcoop-watch", daemon=True).start()

    def add(self, w: Watched):
        with self.lock:
            if w.ctrl_c:
                try:
                    self.old_wakeup = signal.set_wakeup_fd(self.sig_w.fileno(), warn_on_full_buffer=False)
                except ValueError:          # this interpreter handles no signals
                    w.ctrl_c = False
            self.active.append(w)
            wake = w.polled and self.sleeping
            if wake:
                self.sleeping = False
        if wake:
            # (only then: waking it for every dispatch cost a context switch, 15-30 us each)
            try:
                self.ctl_w.send(b"x")
            except BlockingIOError:         # bytes already waiting wake it as well
                pass

    def remove(self, w: Watched):
        with self.lock:
            self.active.remove(w)
            if w.ctrl_c:
                signal.set_wakeup_fd(self.old_wakeup)
            w.bar.close()

    def _loop(self):
        while True:
            with self.lock:
                busy = any(w.polled for w in self.active)
                self.sleeping = not busy
            ready = {key.fileobj for key, _ in self.sel.select(POLL if busy else None)}
            got = b""
            for sock in ready:
                try:
                    data = sock.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                if sock is self.sig_r:
                    got += data
            now = time.perf_counter()
            with self.lock:
                if got and self.old_wakeup >= 0:
                    try:
                        os.write(self.old_wakeup, got)
                    except OSError:
                        pass
                for w in self.active:
                    if w.cancel[0] == 0:
                        if w.ctrl_c and signal.SIGINT in got:
                            w.cancel[0] = INTERRUPTED
                        elif w.deadline is not None and now > w.deadline:
                            w.cancel[0] = TIMEOUT
                    w.bar.update(w.done())


_watcher: _Watcher | None = None
_start_lock = threading.Lock()


def start(total: int, done, cancel, timeout: float | None) -> Watched:
    """Watch a dispatch from now to stop(): `done()` gives the workgroups done so far, cancel is
    its cancel flag (an int64 array), timeout in seconds or None."""
    global _watcher
    w = Watched(total, done, cancel, timeout)
    with _start_lock:
        if _watcher is None:
            _watcher = _Watcher()
    _watcher.add(w)
    return w


def stop(w: Watched):
    _watcher.remove(w)


def _forget():
    global _watcher, _start_lock
    _watcher, _start_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget)
