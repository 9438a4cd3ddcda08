"""Compile processes kept from one compile to the next (jitcoop.runtime.compilers): compiles
under a time limit share one process; a compiler that is killed, crashes or passes the limit is
replaced; a large module gets a compiler forked for it; each compile sees the caller's
environment; compilers end with their process, and a forked process does not use its parent's.

Every kernel these tests compile is dispatched and checked against numpy's saxpy (small
integers: exact)."""
from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop import examples
from jitcoop.errors import SpirvError
from jitcoop.runtime import compilers
from jitcoop.runtime import compile as compile_mod

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="compilers are forked processes")

SHADERS = Path(__file__).parent / "shaders"
N = 200


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch):
    """An empty disk cache and no kernel in memory: every kernel() compiles; no compiler left
    from other tests."""
    monkeypatch.setenv("JITCOOP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(compile_mod, "_memo", {})
    compilers.stop_all()
    yield
    compilers.stop_all()


def _saxpy(wg: int, timeout: float = 60.0, module=None):
    """saxpy compiled with its workgroup size `wg` (a new kernel each time), dispatched, and
    checked against numpy."""
    m = module or jitcoop.Device().load(examples.path("saxpy"))
    k = m.kernel(spec={0: wg}, compile_timeout=timeout, tier="fast")
    x = np.arange(N, dtype=np.float32) - 50
    y = (np.arange(N, dtype=np.float32) % 7) * 3
    want = np.float32(2.0) * x + y
    k.dispatch((-(-N // wg), 1, 1), {0: x, 1: y}, push=struct.pack("<fI", 2.0, N))
    np.testing.assert_array_equal(y, want)
    return k


def _other(letter: str):
    """The saxpy example as another module: its block Y named `letter` (other bytes, one
    more module to send)."""
    data = examples.path("saxpy").read_bytes()
    return jitcoop.Device().load(data.replace(b"Y\0\0\0", letter.encode() + b"\0\0\0"))


def _pids():
    return sorted(c.pid for c in compilers._idle)


def _ended(pid: int, within: float = 10.0) -> bool:
    """Whether process `pid` has ended (a zombie counts) within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_compiles_share_one_compiler():
    _saxpy(32)
    first = _pids()
    assert len(first) == 1
    _saxpy(64)
    _saxpy(96, module=_other("A"))                       # a module it is sent
    assert _pids() == first


def test_a_compiler_killed_while_idle_is_replaced():
    _saxpy(32)
    [pid] = _pids()
    os.kill(pid, signal.SIGKILL)
    assert _ended(pid)
    _saxpy(64)
    assert len(_pids()) == 1 and _pids() != [pid]


def test_a_compiler_that_crashes_fails_its_compile_only(monkeypatch):
    """A compiler that dies in a compile (LLVM aborting, the kernel's out-of-memory killer) is a
    SpirvError naming the signal; the next compile gets a new compiler."""
    _saxpy(32)
    [pid] = _pids()
    with pytest.raises(SpirvError, match=r"compiling entry point 'x': the compiler process was killed by signal 9"):
        compilers.run(_kill_self, jitcoop.Device().load(examples.path("saxpy")).spirv, (), 60, "entry point 'x'")
    assert _ended(pid) and _pids() == []
    _saxpy(64)


def test_a_compile_past_its_limit_stops_its_compiler():
    """The compiler is killed at the limit (nothing left running), and the next compile, in a
    new compiler, is quick."""
    big = jitcoop.Device("nvidia").load(SHADERS / "coopmat2_prod" / "mul_mm_q_O.spv")
    _saxpy(32)
    [pid] = _pids()
    with pytest.raises(SpirvError, match=r"took longer than its limit of 0\.2 s"):
        big.kernel(spec={"BLOCK_SIZE": 128, "BM": 32, "BN": 32, "BK": 32}, compile_timeout=0.2)
    assert _ended(pid)
    t = time.perf_counter()
    _saxpy(64)
    assert time.perf_counter() - t < 30
    assert len(_pids()) == 1 and _pids() != [pid]


def test_a_large_module_gets_a_compiler_of_its_own(monkeypatch):
    """A module over SEND_MAX is not sent: a new compiler, forked with it, compiles it, and
    compiles it again; a module the idle compilers lack and which is small is sent."""
    monkeypatch.setattr(compilers, "SEND_MAX", 0)
    a = jitcoop.Device().load(examples.path("saxpy"))
    b = _other("B")
    _saxpy(32, module=a)
    [first] = _pids()
    _saxpy(32, module=b)
    assert len(_pids()) == 2 and first in _pids()
    _saxpy(64, module=b)
    _saxpy(64, module=a)
    assert len(_pids()) == 2
    monkeypatch.setattr(compilers, "SEND_MAX", 1 << 30)
    _saxpy(96, module=_other("B"))      # a module one of them has: no fork
    assert len(_pids()) == 2


def test_a_compiler_grown_past_its_budget_is_replaced(monkeypatch):
    """A compiler whose heap has grown more than GROWTH since its fork ends after its compile
    (its result still comes back); the next compile forks a new one."""
    monkeypatch.setattr(compilers, "GROWTH", 1 << 40)
    _saxpy(32)
    [pid] = _pids()
    monkeypatch.setattr(compilers, "GROWTH", -1)     # (read by the compiler: forked from here)
    compilers.stop_all()
    _saxpy(64)
    assert _pids() == []
    _saxpy(96)
    assert _pids() == [] and _ended(pid)


def test_idle_compilers_are_few(monkeypatch):
    monkeypatch.setattr(compilers, "SEND_MAX", 0)
    for letter in "ABCD":
        _saxpy(64, module=_other(letter))
    assert len(compilers._idle) <= compilers.IDLE


def test_a_compile_sees_the_callers_environment(monkeypatch):
    module = jitcoop.Device().load(examples.path("saxpy")).spirv
    monkeypatch.setenv("JITCOOP_TEST_VALUE", "one")
    assert compilers.run(_environment, module, ("JITCOOP_TEST_VALUE",), 60, "x") == "one"
    pids = _pids()
    monkeypatch.setenv("JITCOOP_TEST_VALUE", "two")
    assert compilers.run(_environment, module, ("JITCOOP_TEST_VALUE",), 60, "x") == "two"
    monkeypatch.delenv("JITCOOP_TEST_VALUE")
    assert compilers.run(_environment, module, ("JITCOOP_TEST_VALUE",), 60, "x") is None
    assert _pids() == pids


def test_a_compile_error_comes_back_and_keeps_the_compiler():
    module = jitcoop.Device().load(examples.path("saxpy")).spirv
    with pytest.raises(SpirvError, match="an error of the compile"):
        compilers.run(_fail, module, ("an error of the compile",), 60, "x")
    pids = _pids()
    assert len(pids) == 1
    assert compilers.run(_environment, module, ("HOME",), 60, "x") == os.environ.get("HOME")
    assert _pids() == pids


ENDS = """
import os, signal, sys, struct
import numpy as np
import jitcoop
from jitcoop import examples
from jitcoop import examples
from jitcoop.runtime import compilers
k = jitcoop.Device().load(examples.path("saxpy")).kernel(spec={0: 48}, tier="fast")
print(*(c.pid for c in compilers._idle), flush=True)
if sys.argv[1] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("how", ["exits", "killed"])
def test_compilers_end_with_their_process(tmp_path, how):
    """An exit handler kills them; a process killed outright closes their socket, and they end."""
    script = tmp_path / "ends.py"
    script.write_text(ENDS)
    out = subprocess.run([sys.executable, str(script), how], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, JITCOOP_CACHE_DIR=str(tmp_path / "cache2")))
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 1, out.stderr[-2000:]
    assert _ended(pids[0]), f"compiler {pids[0]} outlived its process ({how})"


def test_a_forked_process_uses_compilers_of_its_own():
    _saxpy(32)
    parent = _pids()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                # the child: its own compiler, the parent's untouched
        code = 1
        try:
            os.close(r)
            ok = compilers._idle == [] and not compilers._all
            _saxpy(64)
            ok = ok and len(_pids()) == 1 and _pids() != parent
            os.write(w, b"ok" if ok else b"shared")
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    got = os.read(r, 16)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert (got, os.WEXITSTATUS(status)) == (b"ok", 0)
    assert _pids() == parent
    _saxpy(96)                                  # the parent's compiler still serves it
    assert _pids() == parent


def _kill_self(module):
    os.kill(os.getpid(), signal.SIGKILL)


def _environment(module, name):
    return os.environ.get(name)


def _fail(module, text):
    raise SpirvError(text)
