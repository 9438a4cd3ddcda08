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

import numpy as np
import pytest

import jitcoop

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
