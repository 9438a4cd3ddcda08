"""Compile processes kept from one compile to the next.

A compile under a time limit runs in a child process that can be killed (runtime.limit says why).
A child forked for each compile paid for its fork at every compile: the pages it wrote (its own
allocations, and every object whose reference count it touched) were fresh or copied on write,
about 5,000 page faults, 15 ms on a small kernel's 16 ms fast-tier compile. A compiler kept
for the next compile has those pages already: it is a child forked as runtime.limit forks one,
that then serves compile after compile, each under the caller's time limit.

A compile is `run(fn, module, args, limit, what)`: fn(spirv_module, *args) in a compiler, its
result or exception back here. fn and args are pickled (fn a module-level function). A compiler
keeps the modules it is sent by their key; a compiler has none of the modules made after its
fork, and a large module takes a compiler forked for it rather than being sent. Each compile
also carries this process's environment, which the compiler takes on first: the disk cache's
folder and settings are read from it.

A compiler that passes the limit, crashes or fails to answer is killed and not used again: the
next compile forks a new one, as it does for one whose heap has grown past GROWTH. Up to IDLE
compilers wait for work; they end when this process does (their socket closes; an exit handler
kills them too). A process forked from this one (a background compile, the application's own
children) forgets them.
"""
from __future__ import annotations

import atexit
import gc
import os
import pickle
import signal
import socket
import struct
import threading
import time
import warnings
from collections import OrderedDict

from . import jit
from .limit import delivered, died_error, outcome, read_until, stopped_error

IDLE = 2                # compilers kept waiting for work
MODULES = 64            # modules a compiler keeps (the least recently used go first)
SEND_MAX = 32 << 10     # the largest module sent to a compiler: a larger one takes a new compiler,
                        # which has it from the fork (sending 80 KB of SPIR-V decoded took 35 ms,
                        # a fork's cost twice over)
GROWTH = 8 << 20        # heap a compiler may gain over its fork's before a fresh one replaces it:
                        # LLVM's and the C heap's high-water marks stay with a process (the test
                        # suite's 208 kernels compiled in one process took it from 98 to 358 MB;
                        # with this budget a compiler serves about 10 optimized compiles, and the
                        # largest compile process is the size a process forked per compile was)
COMPILES = 500          # compiles a compiler serves at most (where /proc does not tell its memory)

_HEADER = struct.Struct("<Q")
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_NOSIGNAL = getattr(socket, "MSG_NOSIGNAL", 0)


class _Compiler:
    def __init__(self, pid: int, channel: socket.socket):
        self.pid, self.channel = pid, channel
        self.modules: set = set()       # keys of the modules it has (from the fork, or sent)
        self.served = 0

    def close(self, kill: bool):
        _all.discard(self)
        self.channel.close()
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


_idle: list = []
_all: set = set()               # every compiler of this process, idle or busy
_lock = threading.Lock()


def run(fn, module, args: tuple, limit: float, what: str):
    """fn(module, *args) in a compiler, stopped past `limit` seconds (a SpirvError); its result,
    or its exception raised here."""
    key = module.data_key
    t0 = time.perf_counter()
    for retry in (False, True):
        c = _take(module, key)
        try:
            _send(c.channel, pickle.dumps((fn, key, None if key in c.modules else module, args, dict(os.environ)),
                                            pickle.HIGHEST_PROTOCOL))
            break
        except (BrokenPipeError, ConnectionResetError):     # it ended while idle (killed from outside)
            c.close(kill=True)
            if retry:
                raise
        except BaseException:
            c.close(kill=True)
            raise
    c.modules.add(key)
    try:
        data = read_until(c.channel.fileno(), t0 + limit, framed=True)
    except BaseException:                      # Ctrl-C: the compile stops too
        c.close(kill=True)
        raise
    if data is None:
        c.close(kill=True)
        raise stopped_error(what, limit, t0)
    if not data:
        _, status = _reap(c)
        raise died_error(what, status)
    *got, grown = pickle.loads(data)
    c.served += 1
    _give_back(c, grown)
    return delivered(*got)


def _take(module, key: str) -> _Compiler:
    """An idle compiler that has the module; else one to send it to, where the module is small;
    else a new one, which has it from the fork."""
    with _lock:
        have = [c for c in _idle if key in c.modules]
        if have or (_idle and len(module.data) <= SEND_MAX):
            c = (have or _idle)[-1]
            _idle.remove(c)
            return c
    return _fork(module, key)


def _give_back(c: _Compiler, grown: bool):
    """Back among the idle compilers, the most recently used last (unless it has grown past its
    budget); the least recently used of more than IDLE ends."""
    done = []
    with _lock:
        if c.served < COMPILES and not grown:
            _idle.append(c)
        else:
            done.append(c)
        while len(_idle) > IDLE:
            done.append(_idle.pop(0))
    for c in done:
        c.close(kill=True)


def _reap(c: _Compiler):
    _all.discard(c)
    c.channel.close()
    try:
        return os.waitpid(c.pid, 0)
    except ChildProcessError:
        return c.pid, 0


def _fork(module, key: str) -> _Compiler:
    mine, theirs = socket.socketpair()
    with jit.lock(), warnings.catch_warnings():
        # Python 3.12 warns about fork() in a process with threads; runtime/limit.py says why it is safe
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        mine.close()
        _serve(theirs, {key: module})
    theirs.close()
    c = _Compiler(pid, mine)
    c.modules.add(key)
    _all.add(c)
    return c


def _serve(channel: socket.socket, modules: dict):
    """A compiler's life: compile what comes through `channel` until it closes; never return.
    `modules`: the one it has from the fork."""
    code = 0
    try:
        gc.freeze()                     # (runtime/limit.py: the parent's objects are not collected here)
        jit.reset_lock_after_fork()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        modules = OrderedDict(modules)
        start = _resident()
        while True:
            data = read_until(channel.fileno(), float("inf"), framed=True)
            if not data:
                break
            fn, key, module, args, environ = pickle.loads(data)
            if module is not None:
                modules[key] = module
                if len(modules) > MODULES:
                    modules.popitem(last=False)
            modules.move_to_end(key)
            if environ != os.environ:
                os.environ.clear()
                os.environ.update(environ)
            with warnings.catch_warnings():
                warnings.simplefilter("always")        # every warning goes back; the caller's filters decide
                reply = outcome(lambda: fn(modules[key], *args), lambda: (_resident() > start + GROWTH,))
            _send(channel, reply)
            del reply
    except BaseException:                               # noqa: BLE001
        code = 3
    finally:
        os._exit(code)


def _resident() -> int:
    """This process's resident anonymous memory in bytes (its heaps: not the libraries' code it
    maps from files, which a compile touches page by page); 0 where /proc cannot say."""
    try:
        with open("/proc/self/statm", "rb") as f:
            fields = f.read().split()
        return (int(fields[1]) - int(fields[2])) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _send(channel: socket.socket, data: bytes):
    """One message, after its length. MSG_NOSIGNAL: a peer gone is an error here, not SIGPIPE (in
    an application that loads the Vulkan driver, SIGPIPE may still end the process; where the
    flag is missing, as on macOS, Python's own SIGPIPE setting stands)."""
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[channel.send(view, _NOSIGNAL):]


@atexit.register
def stop_all():
    """End every compiler of this process (at exit; a benchmark reading its children's peak
    memory, which counts a child once reaped)."""
    with _lock:
        _idle.clear()
    for c in list(_all):
        c.close(kill=True)


def _forget():
    """In a process forked from this one: the compilers are its parent's (their sockets closed
    here, so that a compiler sees its parent's end close when the parent exits)."""
    for c in list(_all):
        c.channel.close()
    _all.clear()
    _idle.clear()
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)
