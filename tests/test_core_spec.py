"""Specialization constants: LocalSizeId, spec-sized arrays, bool and switch selectors, unknown ids."""
import struct

import numpy as np
import pytest

import jitcoop
from conftest import SHADERS


@pytest.fixture(scope="module")
def module():
    return jitcoop.Device().load(SHADERS / "core" / "spec.spv")


def _reference(wg, k, double, mode, groups, base):
    n = wg * groups
    g = np.arange(n)
    i = g % wg
    v = (i % (k * 4)) * 10 + base + 7
    v = v * 2 if double else v
    v = v + {0: 1000, 1: 2000}.get(mode, 3000)
    return np.concatenate([v, np.full(n, wg + 4 * k)]).astype(np.uint32)


def test_local_size_id_defaults_like_a_driver(module):
    # glslang gives local_size_x_id its own spec constant (default 1) besides `const uint WG = 8`,
    # both with SpecId 0: unspecialized, the workgroup has 1 invocation, as on a real driver.
    assert module.kernel().local_size == (1, 1, 1)


@pytest.mark.parametrize("spec", [{0: 8}, {0: 16, 1: 2, 2: 1, 3: 1}, {0: 12, 1: 3, 2: 0, 3: 7}])
def test_spec_constants(module, spec):
    k = module.kernel(spec=spec)
    wg, kk = spec[0], spec.get(1, 3)
    assert k.local_size == (wg, 1, 1)
    groups = 3
    o = np.zeros(2 * wg * groups, np.uint32)
    k.dispatch(groups, {0: o}, push=struct.pack("<I", 100))
    ref = _reference(wg, kk, bool(spec.get(2, 0)), spec.get(3, 0), groups, 100)
    np.testing.assert_array_equal(o, ref)


def test_unknown_spec_id_is_a_binding_error(module):
    with pytest.raises(jitcoop.BindingError, match="unknown spec id 9"):
        module.kernel(spec={9: 1})


SHARED_ID = """
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %a SpecId 4
               OpDecorate %b SpecId 4
               OpDecorate %flag SpecId 5
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %Buf 0 Offset 0
               OpDecorate %Buf Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
       %bool = OpTypeBool
          %a = OpSpecConstant %uint 1
          %b = OpSpecConstant %int 2
       %flag = OpSpecConstantFalse %bool
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
      %sum = OpSpecConstantOp %uint IAdd %a %a
      %sel = OpSpecConstantOp %uint Select %flag %uint_1 %uint_2
        %arr = OpTypeRuntimeArray %uint
        %Buf = OpTypeStruct %arr
      %p_Buf = OpTypePointer StorageBuffer %Buf
     %p_uint = OpTypePointer StorageBuffer %uint
        %buf = OpVariable %p_Buf StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %p0 = OpAccessChain %p_uint %buf %uint_0 %uint_0
               OpStore %p0 %sum
         %p1 = OpAccessChain %p_uint %buf %uint_0 %uint_1
         %bu = OpBitcast %uint %b
               OpStore %p1 %bu
         %p2 = OpAccessChain %p_uint %buf %uint_0 %uint_2
               OpStore %p2 %sel
               OpReturn
               OpFunctionEnd
"""


def test_one_spec_id_sets_several_constants_and_bools_come_from_4_bytes():
    mod = jitcoop.Device().load(SHARED_ID)
    o = np.zeros(3, np.uint32)
    mod.kernel().dispatch(1, {0: o})
    np.testing.assert_array_equal(o, [2, 2, 2])
    mod.kernel(spec={4: 21, 5: 1}).dispatch(1, {0: o})
    np.testing.assert_array_equal(o, [42, 21, 1])
