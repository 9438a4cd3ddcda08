"""analysis/lanes.py: whether a module can tell which invocation holds which element of a
cooperative matrix; when it cannot, the code generator holds matrices in the striped layout on
every profile. Hand-checked cases (each shader's GLSL says what it does), and the layouts the
generator then gives the H100 profile's matrix types: striped for a GEMM that only loads,
multiplies and stores (its results are checked against numpy on the nvidia profile in
test_coopmat_khr.py and test_bench_shaders.py), the H100's own for a shader that reads lane ids
(tests/shaders/coopmat_cli/lane_ids.comp; its outputs are checked against the recordings of a
real H100 in test_h100_recorded.py)."""
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop.analysis import lanes
from jitcoop.codegen.emitter import KernelGen
from jitcoop.devices import layouts as L
from jitcoop.options import KernelOptions
from jitcoop.spirv.module import Module
from jitcoop.spirv.specialize import Specialization

ROOT = Path(__file__).resolve().parents[1]


def module(path):
    return Module((ROOT / path).read_bytes())


@pytest.mark.parametrize("path,looks", [
    ("benchmarks/shaders/gemm_coopmat_f16.spv", None),            # loads, MulAdds, stores
    ("tests/shaders/coopmat2_apps/flash_attn.spv", None),         # reductions, per-element ops
    ("tests/shaders/coopmat/perlane.spv", "OpCooperativeMatrixLengthKHR"),
    ("tests/shaders/coopmat/convert.spv", "OpBitcast"),
    ("tests/shaders/coopmat_qcom/conv.spv", "OpCompositeConstructCoopMatQCOM"),
])
def test_what_looks_into_a_fragment(path, looks):
    got = lanes.observed(module(path))
    assert (got is None) if looks is None else got.startswith(looks + " at byte ")


ASM = """OpCapability Shader
OpCapability VulkanMemoryModel
OpCapability CooperativeMatrixKHR
OpExtension "SPV_KHR_cooperative_matrix"
OpMemoryModel Logical Vulkan
OpEntryPoint GLCompute %main "main" %out
OpExecutionMode %main LocalSize 32 1 1
OpDecorate %ra ArrayStride 4
OpDecorate %st Block
OpMemberDecorate %st 0 Offset 0
OpDecorate %out Binding 0
OpDecorate %out DescriptorSet 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%f32 = OpTypeFloat 32
%u32 = OpTypeInt 32 0
%s32 = OpTypeInt 32 1
%c0 = OpConstant %s32 0
%k0 = OpConstant %u32 0
%k2 = OpConstant %u32 2
%k3 = OpConstant %u32 3
%k16 = OpConstant %u32 16
%one = OpConstant %f32 1
%m = OpTypeCooperativeMatrixKHR %f32 %k3 %k16 %k16 %k2
%ra = OpTypeRuntimeArray %f32
%st = OpTypeStruct %ra
%ps = OpTypePointer StorageBuffer %st
%pe = OpTypePointer StorageBuffer %f32
%pm = OpTypePointer Function %m
%pf = OpTypePointer Function %f32
%out = OpVariable %ps StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
%var = OpVariable %pm Function
%x = OpCompositeConstruct %m %one
LOOK
%p = OpAccessChain %pe %out %c0 %k0
OpStore %p %e
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize("look", [
    "%e = OpCompositeExtract %f32 %x 1",
    "OpStore %var %x\n%pe1 = OpAccessChain %pf %var %k2\n%e = OpLoad %f32 %pe1",
])
def test_an_element_taken_from_a_lane_counts(look):
    """The first component a lane holds, by OpCompositeExtract or through an access chain into a
    matrix variable: which element that is depends on the layout."""
    m = jitcoop.Device().load(ASM.replace("LOOK", look)).spirv
    assert lanes.observed(m).split(" at byte")[0] in ("OpCompositeExtract", "OpAccessChain")


def test_layouts_given_on_the_nvidia_profile():
    m = module("benchmarks/shaders/gemm_coopmat_f16.spv")
    dev = jitcoop.Device("nvidia")
    gen = KernelGen(m, Specialization(m, {}), None, dev.subgroup_size, KernelOptions(), profile=dev.profile)
    assert gen.layouts_unobserved
    t = next(ins for ins in m.global_order if ins.opname == "OpTypeCooperativeMatrixKHR")
    lay = gen.spec.type(t.result).layout
    assert lay.name == "striped"
    np.testing.assert_array_equal(lay.table, L.striped(lay.rows, lay.cols, lay.invocations).table)

    m = module("tests/shaders/coopmat_cli/lane_ids.spv")
    gen = KernelGen(m, Specialization(m, {}), None, dev.subgroup_size, KernelOptions(), profile=dev.profile)
    assert not gen.layouts_unobserved
    t = next(ins for ins in m.global_order if ins.opname == "OpTypeCooperativeMatrixKHR")
    assert gen.spec.type(t.result).layout.name == "nvidia"
