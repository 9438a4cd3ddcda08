"""A compile under a time limit: in a forked child process that is killed when the limit passes.

A thread cannot be stopped: an abandoned compile went on inside LLVM, held the LLVM lock the next
compile waited for, and aborted the interpreter at exit (LLVM's static destructors ran under it).
A child process can be killed at once, takes its memory with it, and fails alone if LLVM crashes.
fork() copies the process as it is, so the child starts at once with every module imported and
nothing to pickle in; only the result (the object file, the IR and the kernel's metadata) comes
back through a pipe, with the warnings the child issued (issued again in the parent, where the
caller's warning filters and catch_warnings see them) and what the disk cache counted and warned
about (runtime/cache.py: kernel-library variants are looked up while generating code).

Forking a process with threads is safe when no other thread holds a lock the child needs: the
child only runs jitcoop's generator and LLVM, so the fork happens under jit's LLVM lock (no other
jitcoop thread is inside LLVM then) and the child gets a fresh lock of its own.
"""
from __future__ import annotations

import atexit
import gc
import os
import pickle
import selectors
import signal
import time
import warnings

from ..errors import SpirvError
from . import cache, jit


# Children compiling now: killed when the process exits (their result comes back to a caller
# that is gone), but for those that write their own result (a background compile's optimized
# code into the disk cache: runtime.tiers), which finish on their own, within their limit, so
# that the next process finds it.
_running: set = set()
_finish_alone: set = set()


@atexit.register
def _kill_running():
    for pid in list(_running - _finish_alone):
        _kill(pid)


def run_limited(work, limit: float, what: str, finish_alone: bool = False):
    """work() in a child process; its result, or its exception raised here. Past `limit` seconds
    (math.inf: no limit) the child is killed and a SpirvError says so. Without os.fork (not Linux
    or macOS), work() runs here with no limit. finish_alone: work() keeps its own result (writes
    it to the disk cache), so the child is left to finish when this process exits, and stops
    itself at the limit (SIGALRM) rather than being stopped by this process."""
    if not hasattr(os, "fork"):
        return work()
    r, w = os.pipe()
    with jit.lock(), warnings.catch_warnings():
        # Python 3.12 warns about fork() in a process with threads; see the module docstring
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:                                        # the child
        os.close(r)
        if finish_alone:
            _detach(w)
            if limit != float("inf"):
                signal.alarm(int(limit) + 1)           # (the default action ends the process)
        _child(work, w)
    _running.add(pid)
    if finish_alone:
        _finish_alone.add(pid)
    os.close(w)
    t0 = time.perf_counter()
    try:
        data = read_until(r, t0 + limit)
    except BaseException:                              # Ctrl-C: the compile stops too
        _kill(pid)
        raise
    finally:
        os.close(r)
    if data is None:
        _kill(pid)
        raise stopped_error(what, limit, t0)
    _, status = os.waitpid(pid, 0)
    _running.discard(pid)
    _finish_alone.discard(pid)
    if not data:
        raise died_error(what, status)
    return delivered(*pickle.loads(data))


def delivered(ok: bool, value, heard: list, cache_state):
    """A compile process's outcome, here: what its cache counted, its warnings as if issued
    here (where the caller's filters and catch_warnings see them), then its result, or its
    exception raised."""
    cache.merge_child_state(cache_state)
    for message, category, filename, lineno in heard:
        warnings.warn_explicit(message, category, filename, lineno)
    if ok:
        return value
    raise rebuilt(value)


def outcome(work, after=tuple) -> bytes:
    """In a compile process: work()'s outcome pickled for delivered() (its result or exception,
    the warnings it issued that this process's filters let through, what the cache counted
    meanwhile), with the tuple after() gives once it has run after them."""
    state = cache.child_state()
    with warnings.catch_warnings(record=True) as heard:
        try:
            out = (True, work())
        except BaseException as e:                     # noqa: BLE001 - every failure goes back
            out = (False, portable(e))
    back = ([(str(x.message), x.category, x.filename, x.lineno) for x in heard], cache.child_state(state)) + after()
    try:
        return pickle.dumps(out + back, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:                             # noqa: BLE001 - an exception that won't pickle
        text = out[1][3] if not out[0] else f"{type(e).__name__}: {e}"
        return pickle.dumps((False, (RuntimeError, (text,), {}, text)) + back)


def _child(work, w: int):
    """Run work() and write (ok, result or exception) to the pipe; never return."""
    code = 0
    try:
        # The parent's objects are this process's too, copied on write: the collector would walk
        # them all at every collection of the compile's garbage (a fifth of a small kernel's
        # compile, and copies of their pages). Only what the compile makes is collected.
        gc.freeze()
        jit.reset_lock_after_fork()
        signal.signal(signal.SIGINT, signal.SIG_DFL)   # the parent handles Ctrl-C and kills us
        view = memoryview(outcome(work))               # (warnings through the parent's filters)
        while view:
            view = view[os.write(w, view):]
    except BaseException:                              # noqa: BLE001
        code = 3
    finally:
        os._exit(code)                                  # no atexit handlers, no buffers flushed twice


def stopped_error(what: str, limit: float, t0: float) -> SpirvError:
    return SpirvError(f"compiling {what} took longer than its limit of {limit:g} s (kernel option "
                      f"compile_timeout=, CLI --compile-timeout) and was stopped after "
                      f"{time.perf_counter() - t0:.1f} s")


def died_error(what: str, status: int) -> SpirvError:
    how = (f"was killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
           else f"exited with status {os.WEXITSTATUS(status)}")
    return SpirvError(f"compiling {what}: the compiler process {how} (out of memory, or a crash "
                      "in LLVM; please report this with the shader)")


def read_until(fd: int, deadline: float, framed: bool = False):
    """Everything written to fd until EOF, or None when the deadline passes first. framed: one
    message of a stream that carries several, each after its length (8 bytes, little-endian);
    b"" where the stream ends before the message does."""
    chunks, got, want = [], 0, None
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                return None
            if not sel.select(min(left, 0.5)):
                continue
            if want is None and framed:
                chunk = os.read(fd, 8 - got)
            else:
                chunk = os.read(fd, min(1 << 20, want - got) if framed else 1 << 20)
            if not chunk:               # (framed: a message cut short counts as none)
                return b"" if framed else b"".join(chunks)
            chunks.append(chunk)
            got += len(chunk)
            if framed and want is None and got == 8:
                want, chunks, got = int.from_bytes(b"".join(chunks), "little"), [], 0
            if framed and want is not None and got == want:
                return b"".join(chunks)


def _detach(w: int):
    """In a child that may outlive its parent: holds none of the parent's files but the result
    pipe (a caller reading the parent's output or sockets sees them close when the parent exits)."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, w)
    os.closerange(w + 1, os.sysconf("SC_OPEN_MAX"))


def _kill(pid: int):
    _running.discard(pid)
    _finish_alone.discard(pid)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:                          # (reaped by the thread that started it)
        pass


def portable(e: BaseException):
    """An exception as (class, args, attributes), which pickles whatever its constructor takes."""
    return (type(e), e.args, dict(getattr(e, "__dict__", {})), f"{type(e).__name__}: {e}")


def rebuilt(value) -> BaseException:
    cls, args, attrs, text = value
    try:
        e = cls.__new__(cls)
        e.args = args
        e.__dict__.update(attrs)
    except Exception:                                  # noqa: BLE001
        e = RuntimeError(text)
    return e
