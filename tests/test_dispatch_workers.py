"""The dispatch's worker threads (jitcoop.runtime.dispatch) outlive a dispatch and are shared by
every dispatch of the process: dispatches from several threads at once must each get all of their
workgroups run, and a forked child, which has none of its parent's threads, must start its own; and a process must
be able to exit while a worker still runs a kernel.

Shader: tests/shaders/prefix_sum.comp (Hillis-Steele inclusive scan of 256 uints per workgroup,
the workgroup's total in sums[w]); the reference is numpy's cumsum. barrier_spin.comp loops
forever with spec constant 0 true."""
import os
import select
import threading

import numpy as np
import pytest

from conftest import SHADERS

N_WG = 24
SPIN = SHADERS / "barrier_spin.spv"


def run_scan(k, seed, threads):
    data = np.random.default_rng(seed).integers(0, 1000, N_WG * 256).astype(np.uint32)
    want = data.reshape(N_WG, 256).cumsum(axis=1, dtype=np.uint64).astype(np.uint32)
    sums = np.zeros(N_WG, np.uint32)
    k.dispatch((N_WG, 1, 1), {0: data, 1: sums}, threads=threads)
    return data.reshape(N_WG, 256), want, sums


def test_dispatches_from_several_threads_at_once(kc):
    k = kc("prefix_sum")
    failures = []

    def one(seed):
        try:
            for r in range(3):
                got, want, sums = run_scan(k, seed * 10 + r, threads=2)
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(sums, want[:, -1])
        except Exception as e:                       # reported by the main thread below
            failures.append(repr(e))

    callers = [threading.Thread(target=one, args=(s,)) for s in range(4)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(120)
    assert not any(t.is_alive() for t in callers), "a dispatch never finished"
    assert not failures, failures


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_dispatches(kc):
    k = kc("prefix_sum")
    got, want, _ = run_scan(k, 1, threads=2)        # the parent's workers exist now
    np.testing.assert_array_equal(got, want)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                     # the child: report through the pipe, no pytest
        ok = b"0"
        try:
            got, want, sums = run_scan(k, 2, threads=2)
            ok = b"1" if (got == want).all() and (sums == want[:, -1]).all() else b"0"
        finally:
            os.write(w, ok)
            os._exit(0)
    os.close(w)
    ready, _, _ = select.select([r], [], [], 60)
    try:
        assert ready, "the forked child's dispatch did not finish in 60 s"
        assert os.read(r, 1) == b"1", "the forked child's dispatch gave a wrong result"
    finally:
        os.close(r)
        if not ready:
            os.kill(pid, 9)
        os.waitpid(pid, 0)


def test_a_process_exits_while_a_worker_runs_a_kernel(tmp_path):
    """Workers are daemon threads: a program whose dispatching thread is a daemon can exit while
    the kernel still spins (barrier_spin.comp with spec 0 true loops forever; no timeout)."""
    import subprocess
    import sys
    import textwrap
    script = tmp_path / "exit_while_spinning.py"
    script.write_text(textwrap.dedent(f"""
        import threading, time
        import numpy as np
        import jitcoop
        k = jitcoop.Device().load({str(SPIN)!r}).kernel(spec={{0: True}})
        flag = np.zeros(64, np.uint32)
        threading.Thread(target=lambda: k.dispatch((4, 1, 1), {{0: flag}}), daemon=True).start()
        time.sleep(1.0)
        print("exiting", flush=True)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "exiting" in out.stdout, out.stderr[-2000:]


def test_a_timeout_stops_a_spinning_dispatch_of_another_thread():
    """A dispatching thread runs kernels itself; the process's watcher cancels at the timeout
    (here a thread that is not the main one, with one worker thread and with two)."""
    import jitcoop
    k = jitcoop.Device().load(SPIN).kernel(spec={0: True})
    outcomes = []

    def one(threads):
        flag = np.zeros(64, np.uint32)
        try:
            k.dispatch((4, 1, 1), {0: flag}, threads=threads, timeout=0.3)
            outcomes.append("ran")
        except jitcoop.ExecutionError as e:
            outcomes.append("timeout" if "timeout" in str(e) and not flag.any() else repr(e))

    callers = [threading.Thread(target=one, args=(t,), daemon=True) for t in (1, 2)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(60)
    assert not any(t.is_alive() for t in callers), "a spinning dispatch was not stopped"
    assert outcomes == ["timeout", "timeout"], outcomes


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("grid", [(1, 1), (3, 1), (8, 1), (127, 1), (1000, 1), (257, 9)])
def test_every_workgroup_runs_once(kc, grid, threads):
    """The guided self-scheduling of a dispatch's chunks (shrinking shares of what is left, down
    to a floor) hands every workgroup of the grid to exactly one thread: each workgroup adds one
    to its own counter (tests/shaders/wg_count.comp), and every counter must be 1."""
    k = kc("wg_count")
    counts = np.zeros(grid[0] * grid[1], np.uint32)
    k.dispatch((*grid, 1), {0: counts}, threads=threads)
    np.testing.assert_array_equal(counts, np.ones_like(counts))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this system")
def test_threads_default_to_the_cores_the_process_may_use():
    """threads=None is one worker per core this process may run on: a CI runner's cpuset or
    `taskset` gives fewer than the host has."""
    import subprocess
    import sys
    one = min(os.sched_getaffinity(0))
    code = (f"import os; os.sched_setaffinity(0, {{{one}}}); from jitcoop import api; "
            "print(api._threads(None, 64), api._threads(3, 64))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "3"]
