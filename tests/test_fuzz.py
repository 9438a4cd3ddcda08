"""Robustness under fuzzing (issue 21): broken modules and bad dispatches end with jitcoop's own
errors, naming the instruction, with the user's arrays as they were.

- The corpus (tests/fuzz/corpus): every reproducer the fuzzer kept, each a module that once
  escaped as an internal error, a crash or a hang, run through load -> kernel -> dispatch in a
  worker process; each must now end the way its .json says (a SpirvError naming the instruction,
  a BindingError...).
- Ctrl-C during a long dispatch.
- Slow: a few hundred fresh mutants of the test shaders (`python3 -m tests.fuzz` runs campaigns).
"""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import jitcoop
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
        yield pytest.param(e, id=e.name, marks=marks)


@pytest.mark.parametrize("entry", _corpus_params())
def test_corpus(worker, entry):
    r = worker.run(entry.case())
    assert r["outcome"] == entry.info["expect"], r
    assert re.search(entry.info["match"], r.get("message") or ""), r["message"]
    if r["outcome"] in ("spirv_load", "spirv_kernel", "execution"):
        assert r["located"], f"the error names no instruction: {r['message']}"


# -- Ctrl-C ---------------------------------------------------------------------------------------

SPINNER = """
import sys
import numpy as np
import jitcoop
k = jitcoop.Device().load(sys.argv[1]).kernel(spec={0: True})     # loops while flag[0] == 10
flag = np.zeros(64, np.uint32)
print("dispatching", flush=True)
try:
    k.dispatch(4, {0: flag}, threads=2)
except KeyboardInterrupt as e:
    print("interrupted:", e, "| flag untouched:", not flag.any(), flush=True)
"""


def test_ctrl_c_stops_a_spinning_dispatch(tmp_path):
    """SIGINT during a dispatch that never ends: KeyboardInterrupt, the buffer restored, the
    process free to go on (no hang)."""
    script = tmp_path / "spin.py"
    script.write_text(SPINNER)
    p = subprocess.Popen([sys.executable, str(script), str(Path(__file__).parent / "shaders" / "barrier_spin.spv")],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert p.stdout.readline().strip() == "dispatching"
        time.sleep(1.0)                 # the workgroups are spinning by now
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 0, out
    assert "interrupted: dispatch interrupted; the buffers were restored | flag untouched: True" in out
