"""Robustness under fuzzing (issue 21): broken modules and bad dispatches end with jitcoop's own
errors, naming the instruction, with the user's arrays as they were.

- The corpus (tests/fuzz/corpus): every reproducer the fuzzer kept, each a module that once
  escaped as an internal error, a crash or a hang, run through load -> kernel -> dispatch in a
  worker process; each must now end the way its .json says (a SpirvError naming the instruction,
  a BindingError...).
- Dispatch fuzzing: bindings missing, too small, misaligned, of the wrong type, huge grids, bad
  push constants, against real shaders.
- Ctrl-C during a long dispatch.
- Slow: a few hundred fresh mutants of the test shaders (`python3 -m tests.fuzz` runs campaigns).
"""
from __future__ import annotations

import collections
import os
import re
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from conftest import sigint_default
from fuzz.corpus import entries
from fuzz.runner import Runner

# Two variables bound to one binding, the first read-only: the buffer is written through the
# second, so a failing dispatch must restore it.
ALIASED = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %ro DescriptorSet 0
OpDecorate %ro Binding 0
OpDecorate %ro NonWritable
OpDecorate %rw DescriptorSet 0
OpDecorate %rw Binding 0
OpDecorate %arr ArrayStride 4
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%arr = OpTypeRuntimeArray %u32
%blk = OpTypeStruct %arr
%pblk = OpTypePointer StorageBuffer %blk
%pu = OpTypePointer StorageBuffer %u32
%ro = OpVariable %pblk StorageBuffer
%rw = OpVariable %pblk StorageBuffer
%c0 = OpConstant %u32 0
%c7 = OpConstant %u32 7
%c1000 = OpConstant %u32 1000
%main = OpFunction %void None %fn
%l = OpLabel
%x = OpAccessChain %pu %ro %c0 %c0
%v = OpLoad %u32 %x
%p0 = OpAccessChain %pu %rw %c0 %c0
OpStore %p0 %c7
%p1 = OpAccessChain %pu %rw %c0 %c1000
OpStore %p1 %c7
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize("read_only", [False, True])
def test_aliased_binding_is_restored_after_a_failure(read_only):
    k = jitcoop.Device().load(ALIASED).kernel()
    a = np.zeros(4, np.uint32)
    a.flags.writeable = not read_only
    with pytest.raises(jitcoop.ExecutionError, match="out-of-bounds access: 4 bytes at byte offset 4000"):
        k.dispatch(1, {0: a})
    assert not a.any()          # the store to element 0 came before the failure and was undone


# -- the corpus of reproducers --------------------------------------------------------------------

CORPUS = entries()


@pytest.fixture(scope="module")
def worker():
    """A fuzz worker process (tests/fuzz/worker.py): a case that crashes or hangs costs it, not
    pytest."""
    with Runner(memory=4 << 30, cpu=150, wall=200) as r:
        yield r


def _corpus_params():
    for e in CORPUS:
        marks = [pytest.mark.xfail(strict=True, reason=e.info["xfail"])] if e.info.get("xfail") else []
        if e.info.get("slow"):
            marks.append(pytest.mark.slow)
        yield pytest.param(e, id=e.name, marks=marks)


@pytest.mark.parametrize("entry", _corpus_params())
def test_corpus(worker, entry):
    if entry.info.get("slow"):
        with Runner(memory=4 << 30, cpu=1200, wall=2400) as slow_worker:
            r = slow_worker.run(entry.case())
    else:
        r = worker.run(entry.case())
    assert r["outcome"] == entry.info["expect"], r
    assert re.search(entry.info["match"], r.get("message") or ""), r["message"]
    if r["outcome"] in ("spirv_load", "spirv_kernel", "execution"):
        assert r["located"], f"the error names no instruction: {r['message']}"


# -- dispatch arguments ---------------------------------------------------------------------------

SAXPY = Path(__file__).parent / "shaders" / "core" / "saxpy.spv"      # y = a * x + y, 256 per group
N = 500
PUSH = struct.pack("<fI", 1.5, N)


@pytest.fixture(scope="module")
def saxpy():
    return jitcoop.Device().load(SAXPY).kernel()


def _xy():
    rng = np.random.default_rng(5)
    return rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)


BAD_DISPATCHES = [
    # (what, call(kernel, x, y), error class, message)
    ("missing binding", lambda k, x, y: k.dispatch(2, {0: x}, push=PUSH), jitcoop.BindingError, "has no buffer"),
    ("unused binding", lambda k, x, y: k.dispatch(2, {0: x, 1: y, (1, 0): y}, push=PUSH),
     jitcoop.BindingError, r"\(set 1, binding 0\) is not used"),
    ("too small", lambda k, x, y: k.dispatch(2, {0: x, 1: y[:100]}, push=PUSH), jitcoop.ExecutionError,
     r"out-of-bounds access: 4 bytes at byte offset 400 of binding \(set 0, binding 1\)"),
    ("empty", lambda k, x, y: k.dispatch(2, {0: x[:0], 1: y}, push=PUSH), jitcoop.ExecutionError,
     r"out-of-bounds access: 4 bytes at byte offset 0 of binding \(set 0, binding 0\)"),
    ("list", lambda k, x, y: k.dispatch(2, {0: x, 1: list(y)}, push=PUSH), jitcoop.BindingError,
     "expected a numpy array or Buffer, got list"),
    ("objects", lambda k, x, y: k.dispatch(2, {0: x, 1: y.astype(object)}, push=PUSH), jitcoop.BindingError,
     "array of Python objects"),
    ("wrong dtype by name", lambda k, x, y: k(2, x=x, y=y.astype(np.float64), push=PUSH), jitcoop.BindingError,
     "float32"),
    ("bindings not a dict", lambda k, x, y: k.dispatch(2, [x, y], push=PUSH), jitcoop.BindingError,
     "bindings are a dict"),
    ("binding key", lambda k, x, y: k.dispatch(2, {0: x, 1.0: y}, push=PUSH), jitcoop.BindingError,
     "binding key 1.0"),
    ("no push", lambda k, x, y: k.dispatch(2, {0: x, 1: y}), jitcoop.BindingError, "8 bytes of push constants"),
    ("short push", lambda k, x, y: k.dispatch(2, {0: x, 1: y}, push=PUSH[:5]), jitcoop.BindingError,
     "push constants are 5 bytes"),
    ("push str", lambda k, x, y: k.dispatch(2, {0: x, 1: y}, push="push"), jitcoop.BindingError,
     "push constants are bytes, a numpy array or a dict"),
    ("push list", lambda k, x, y: k.dispatch(2, {0: x, 1: y}, push=[1.5, 500]), jitcoop.BindingError,
     "not list"),
    ("push member", lambda k, x, y: k.dispatch(2, {0: x, 1: y}, push={"a": 1.5, "m": 3}), jitcoop.BindingError,
     "unknown member"),
    ("negative grid", lambda k, x, y: k.dispatch((2, -1), {0: x, 1: y}, push=PUSH), jitcoop.BindingError,
     "must not be negative"),
    ("float grid", lambda k, x, y: k.dispatch(2.5, {0: x, 1: y}, push=PUSH), jitcoop.BindingError,
     "1 to 3 integers"),
    ("4-d grid", lambda k, x, y: k.dispatch((1, 1, 1, 1), {0: x, 1: y}, push=PUSH), jitcoop.BindingError,
     "1 to 3 dimensions"),
    ("huge grid", lambda k, x, y: k.dispatch(2**31, {0: x, 1: y}, push=PUSH), jitcoop.BindingError,
     "maxComputeWorkGroupCount"),
    ("huge grid y", lambda k, x, y: k.dispatch((1, 65536), {0: x, 1: y}, push=PUSH), jitcoop.BindingError,
     "maxComputeWorkGroupCount"),
    ("grid past int64", lambda k, x, y: k.dispatch(2**70, {0: x, 1: y}, push=PUSH), jitcoop.BindingError,
     "maxComputeWorkGroupCount"),
    ("threads", lambda k, x, y: k.dispatch(2, {0: x, 1: y}, push=PUSH, threads=-2), jitcoop.BindingError,
     "threads=-2"),
    ("threads str", lambda k, x, y: k.dispatch(2, {0: x, 1: y}, push=PUSH, threads="2"), jitcoop.BindingError,
     "threads='2'"),
    ("timeout", lambda k, x, y: k.dispatch(2, {0: x, 1: y}, push=PUSH, timeout=0), jitcoop.BindingError,
     "timeout=0"),
    ("timeout nan", lambda k, x, y: k.dispatch(2, {0: x, 1: y}, push=PUSH, timeout=float("nan")),
     jitcoop.BindingError, "timeout=nan"),
]


@pytest.mark.parametrize("what, call, error, message", BAD_DISPATCHES, ids=[b[0] for b in BAD_DISPATCHES])
def test_bad_dispatch(saxpy, what, call, error, message):
    x, y = _xy()
    x0, y0 = x.copy(), y.copy()
    with pytest.raises(error, match=message):
        call(saxpy, x, y)
    assert np.array_equal(x, x0) and np.array_equal(y, y0)


def _unaligned(a, offset):
    raw = np.zeros(a.nbytes + 16, np.uint8)
    v = np.ndarray(a.shape, a.dtype, buffer=raw, offset=offset)
    v[...] = a
    return v


@pytest.mark.parametrize("layout", ["unaligned", "strided", "read-only x"])
def test_arrays_of_any_layout_give_numpys_result(saxpy, layout):
    x, y = _xy()
    want = (np.float32(1.5) * x + y).astype(np.float32)     # one rounding each, as the shader
    if layout == "unaligned":
        x, y = _unaligned(x, 1), _unaligned(y, 3)
    elif layout == "strided":
        x, y = np.repeat(x, 2)[::2], np.repeat(y, 2)[::2]
    else:
        x.flags.writeable = False
    saxpy.dispatch(2, {0: x, 1: y}, push=PUSH)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("kwargs, message", [
    ({"spec": {0: "x"}}, "takes a number"), ({"spec": {0: 2**40}}, "out of its range"),
    ({"spec": [1]}, "spec constants are a dict"), ({"entry": 5}, "entry point is named by a str"),
    ({"compile_timeout": -1}, "compile_timeout=-1"), ({"opt_level": "3"}, "opt_level='3'"),
    ({"unchecked": 1}, "unchecked=1"), ({"no_such_option": 1}, "unknown kernel option")])
def test_bad_kernel_arguments(kwargs, message):
    mod = jitcoop.Device().load(Path(__file__).parent / "shaders" / "core" / "spec.spv")
    with pytest.raises(jitcoop.BindingError, match=message):
        mod.kernel(**kwargs)


def test_buffer_of_objects_is_refused():
    with pytest.raises(jitcoop.BindingError, match="Python objects"):
        jitcoop.Device().buffer(np.array([object()] * 4))


# Shaders whose recipes the random spoilings start from: plain buffers and push constants,
# physical pointers into device buffers, atomics, workgroup memory, subgroup scans.
DISPATCH_RECIPES = ["tests/shaders/core/saxpy.spv", "tests/shaders/core/memory.spv", "tests/shaders/core/atomics.spv",
                    "tests/shaders/core/scan256.spv", "tests/shaders/linked_list.spv"]


def test_random_dispatch_spoilings(worker):
    """60 random spoilings of real dispatches (tests/fuzz/dispatch.py): every one ends with a
    BindingError, an ExecutionError or a run, with the arrays untouched after a failure."""
    seen = collections.Counter()
    for i in range(60):
        r = worker.run({"kind": "dispatch", "recipe": DISPATCH_RECIPES[i % len(DISPATCH_RECIPES)], "seed": i})
        assert r["outcome"] in ("binding", "execution", "success"), (i, r)
        seen[r["outcome"]] += 1
    assert seen["binding"] > 10 and seen["success"] > 5, seen


# -- Ctrl-C ---------------------------------------------------------------------------------------

SPINNER = """
import sys
import numpy as np
import jitcoop
k = jitcoop.Device().load(sys.argv[1]).kernel(spec={0: True})     # loops while flag[0] == 10
flag = np.zeros(64, np.uint32)
if sys.argv[3] == "own-handler":
    import signal
    signal.signal(signal.SIGINT, lambda *a: print("own handler ran", flush=True))
if sys.argv[3] == "own-handler-raises":
    import signal
    def stop(*a):
        raise RuntimeError("the program's own handler")
    signal.signal(signal.SIGINT, stop)
print("dispatching", flush=True)
try:
    k.dispatch(4, {0: flag}, threads=int(sys.argv[2]), timeout=None if sys.argv[3] == "default" else 4)
except KeyboardInterrupt as e:
    print("interrupted:", e, "| flag untouched:", not flag.any(), flush=True)
except jitcoop.ExecutionError as e:
    print("stopped:", e, "| flag untouched:", not flag.any(), flush=True)
except RuntimeError as e:
    print("raised:", e, "| flag untouched:", not flag.any(), flush=True)
print("went on", flush=True)
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_a_spinning_dispatch(tmp_path, threads):
    """SIGINT during a dispatch that never ends: KeyboardInterrupt, the buffer restored, the
    process free to go on (no hang). The dispatching main thread runs kernels itself: the
    signal reaches the dispatch through the wakeup fd while that thread is inside one."""
    out = _spin(tmp_path, threads, "default")
    assert "interrupted: dispatch interrupted; the buffers were restored | flag untouched: True" in out


def test_ctrl_c_with_a_handler_of_the_programs_own(tmp_path):
    """A program's own SIGINT handler (here one that does not raise) keeps the say: the dispatch
    goes on until its timeout."""
    out = _spin(tmp_path, 2, "own-handler")
    assert "own handler ran" in out
    assert "stopped: the dispatch ran longer than its timeout of 4 s" in out and "flag untouched: True" in out


def test_an_exception_from_the_programs_own_handler_stops_the_dispatch(tmp_path):
    """A program's own SIGINT handler that raises (the dispatching thread waits in Python while
    workers run the kernels): the exception comes out of dispatch() once every thread that
    started has stopped, with the buffer restored, and the program goes on."""
    out = _spin(tmp_path, 2, "own-handler-raises")
    assert "raised: the program's own handler | flag untouched: True" in out and "went on" in out


def _spin(tmp_path, threads, mode):
    script = tmp_path / "spin.py"
    script.write_text(SPINNER)
    p = subprocess.Popen([sys.executable, str(script), str(Path(__file__).parent / "shaders" / "barrier_spin.spv"),
                          str(threads), mode],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=sigint_default)
    try:
        assert p.stdout.readline().strip() == "dispatching"
        time.sleep(1.0)                 # the workgroups are spinning by now
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 0, out
    return out


# -- the compile time limit from the command line -------------------------------------------------

@pytest.mark.parametrize("command", ["run", "profile"])
def test_cli_compile_timeout(command, tmp_path, monkeypatch, capsys):
    """--compile-timeout reaches kernel(): a compile past it is one error line, status 2. (A cold
    cache and a workgroup size no other test uses make sure there is a compile to stop.)"""
    from jitcoop.cli import main
    from jitcoop.examples import path
    monkeypatch.setenv("JITCOOP_CACHE_DIR", str(tmp_path / "cache"))
    np.save(tmp_path / "x.npy", np.ones(N, np.float32))
    np.save(tmp_path / "y.npy", np.ones(N, np.float32))
    rc = main([command, str(path("saxpy")), "--grid", "2", "--spec", "0=96", "--buffer", f"0={tmp_path / 'x.npy'}",
               "--buffer", f"1={tmp_path / 'y.npy'}", "--push-values", "f32:1.5,u32:500",
               "--compile-timeout", "0.001"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("jitcoop: error: compiling entry point 'main' took longer than its limit of 0.001 s")
    assert err.count("\n") == 1


STOPPED_COMPILE = """
import os, sys, time, jitcoop
big = jitcoop.Device("nvidia").load(sys.argv[1])
try:
    big.kernel(spec={"BLOCK_SIZE": 128, "BM": 32, "BN": 32, "BK": 32}, compile_timeout=0.2)
except jitcoop.SpirvError as e:
    print("stopped:", e)
try:
    os.waitpid(-1, os.WNOHANG)
    print("a compiler process is left")
except ChildProcessError:
    print("no compiler process left")
t = time.perf_counter()
jitcoop.Device().load(sys.argv[2]).kernel(spec={0: 80}, compile_timeout=60)
print("next compile", "quick" if time.perf_counter() - t < 30 else "slow")
"""


def test_a_stopped_compile_leaves_nothing_running(tmp_path):
    """A compile past its limit is killed (its child process), not abandoned: the next compile
    does not wait behind it and the interpreter exits cleanly (an abandoned LLVM thread aborted
    the process at exit)."""
    from jitcoop.examples import path
    script = tmp_path / "stop.py"
    script.write_text(STOPPED_COMPILE)
    shader = Path(__file__).parent / "shaders" / "coopmat2_prod" / "mul_mm_q_O.spv"
    out = subprocess.run([sys.executable, str(script), str(shader), str(path("saxpy"))], capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, JITCOOP_CACHE_DIR=str(tmp_path / "cache")))
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert lines[0].startswith("stopped: compiling entry point 'main' took longer than its limit of 0.2 s")
    assert lines[1:] == ["no compiler process left", "next compile quick"]


# -- fresh mutants --------------------------------------------------------------------------------

@pytest.mark.slow
def test_fresh_mutants(tmp_path):
    """300 new mutants of the test and benchmark shaders (tests/fuzz), drawn from
    JITCOOP_FUZZ_SEED or the clock: every one ends with one of jitcoop's errors or a run, never
    an internal error, another exception, a crash or a hang; after a failed dispatch the arrays
    are as they were. `python3 -m tests.fuzz run --count 300 --seed SEED` replays the campaign."""
    from fuzz.campaign import Campaign, seed_shaders
    from fuzz.case import FAILURES
    from jitcoop.runtime.cache import cache_dir
    seed = int(os.environ.get("JITCOOP_FUZZ_SEED") or time.time()) % 100_000
    cached = set(cache_dir().glob("k_*"))
    try:
        with Runner(memory=4 << 30, cpu=400, wall=700) as worker:
            camp = Campaign(tmp_path, worker, minimize_budget=0, log=lambda s: None)
            camp.run(seed_shaders(), 300, seed, compile_timeout=300)
    finally:
        for p in set(cache_dir().glob("k_*")) - cached:      # the mutants' kernels: never needed again
            p.unlink(missing_ok=True)
    failed = [r for r in camp.rows if r["outcome"] in FAILURES]
    assert not failed, f"seed {seed}: " + "; ".join(f"{r['shader']} seed {r['seed']}: {r['signature']}: "
                                                    f"{r['message'][:200]}" for r in failed[:5])
