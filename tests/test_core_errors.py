"""Bad input gets a clear error naming where, and never changes the user's arrays."""
import struct

import numpy as np
import pytest

import jitcoop
from jitcoop.spirv.reader import decode
from conftest import SHADERS

SAXPY = SHADERS / "core" / "saxpy.spv"


@pytest.fixture(scope="module")
def saxpy():
    return jitcoop.Device().load(SAXPY).kernel()


def _word(data, off, w):
    return data[:off] + struct.pack("<I", w) + data[off + 4:]


@pytest.fixture(scope="module")
def spv():
    data = SAXPY.read_bytes()
    return data, decode(data)[1]


def test_truncated_inside_an_instruction(spv):
    data, ins = spv
    cut = data[:ins[-3].offset + 4]
    with pytest.raises(jitcoop.SpirvError, match="truncated") as e:
        jitcoop.Device().load(cut)
    assert e.value.offset == ins[-3].offset


def test_truncated_at_an_instruction_boundary(spv):
    data, ins = spv
    with pytest.raises(jitcoop.SpirvError, match="missing OpFunctionEnd"):
        jitcoop.Device().load(data[:ins[-1].offset])


@pytest.mark.parametrize("what, word, words", [
    ("unknown opcode", lambda w: (w & 0xFFFF0000) | 0x7FFF, "unknown opcode 32767"),
    ("zero word count", lambda w: 0, "word count 0"),
    ("huge word count", lambda w: (900 << 16) | (w & 0xFFFF), "truncated"),
])
def test_corrupted_instruction(spv, what, word, words):
    data, ins = spv
    target = next(i for i in ins if i.opname == "OpConstant")
    w = struct.unpack_from("<I", data, target.offset)[0]
    with pytest.raises(jitcoop.SpirvError, match=words) as e:
        jitcoop.Device().load(_word(data, target.offset, word(w)))
    assert e.value.offset == target.offset


def test_bad_header():
    with pytest.raises(jitcoop.SpirvError, match="magic"):
        jitcoop.Device().load(b"\0" * 24)
    with pytest.raises(jitcoop.SpirvError, match="at least 20 bytes"):
        jitcoop.Device().load(b"\x03\x02\x23\x07")


def test_unsupported_instruction_fails_at_load():
    text = ASM_WITH_DERIVATIVE
    with pytest.raises(jitcoop.SpirvError, match="not supported yet") as e:
        jitcoop.Device().load(text)
    assert e.value.opname == "OpDPdx" and e.value.result_id is not None


# A one-function compute shader: {imports} after the capability, {body} from the entry block on
ASM_MAIN = """
               OpCapability Shader
{imports}
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
    %float_1 = OpConstant %float 1
       %main = OpFunction %void None %fn
      %entry = OpLabel
{body}
               OpFunctionEnd
"""
ASM_WITH_DERIVATIVE = ASM_MAIN.format(imports="", body="""          %d = OpDPdx %float %float_1
               OpReturn""")


def test_missing_binding(saxpy):
    with pytest.raises(jitcoop.BindingError, match="binding 1"):
        saxpy.dispatch(1, {0: np.zeros(256, np.float32)}, push=struct.pack("<fI", 1, 256))


def test_unused_binding(saxpy):
    with pytest.raises(jitcoop.BindingError, match="not used"):
        saxpy.dispatch(1, {0: np.zeros(4, np.float32), 1: np.zeros(4, np.float32), 5: np.zeros(4)},
                       push=struct.pack("<fI", 1, 4))


def test_push_constants_too_short(saxpy):
    with pytest.raises(jitcoop.BindingError, match="push constants are 4 bytes"):
        saxpy.dispatch(1, {0: np.zeros(4, np.float32), 1: np.zeros(4, np.float32)}, push=b"\0" * 4)


def test_out_of_bounds_names_instruction_workgroup_lane_and_leaves_arrays(saxpy):
    x = np.arange(300, dtype=np.float32)          # the shader reads x[i] for i < n = 512
    y = np.arange(512, dtype=np.float32)
    x0, y0 = x.copy(), y.copy()
    with pytest.raises(jitcoop.ExecutionError) as e:
        saxpy.dispatch(2, {0: x, 1: y}, push=struct.pack("<fI", 2, 512), threads=1)
    err = e.value
    assert err.opname == "OpLoad" and err.offset is not None and err.result_id is not None
    assert err.workgroup == (1, 0, 0) and err.lane == 300 - 256
    assert "byte offset 1200" in str(err) and "1200 bytes" in str(err)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)          # the first workgroup's writes were rolled back


def test_divergent_barrier_is_an_error():
    k = jitcoop.Device().load(SHADERS / "core" / "divergent_barrier.spv").kernel()
    o = np.zeros(64, np.uint32)
    with pytest.raises(jitcoop.ExecutionError, match="only part of the workgroup") as e:
        k.dispatch(1, {0: o})
    assert e.value.opname == "OpControlBarrier"
    assert not o.any()


def test_instruction_between_blocks_is_refused_but_debug_information_is_dropped():
    def module(between):
        return ASM_MAIN.format(imports='          %d = OpExtInstImport "NonSemantic.Shader.DebugInfo.100"',
                               body="               OpReturn\n" + between)
    jitcoop.Device().load(module("%s = OpExtInst %void %d DebugNoScope")).kernel().dispatch(1, {})
    with pytest.raises(jitcoop.SpirvError, match="OpCopyObject between two blocks: only debug information") as e:
        jitcoop.Device().load(module("%x = OpCopyObject %float %float_1"))
    assert e.value.opname == "OpCopyObject"
