"""Portability diagnostics: rules the extensions state that real drivers do not enforce.

A CPU stand-in is judged by whether an application behaves as on the GPU it ships to. Where a
specification says "must" (or leaves a result undefined) and the hardware runs the shader anyway,
and applications rely on that, jitcoop runs it as the hardware does and reports it: a
`PortabilityWarning` through the Python API, a VK_EXT_debug_utils message of WARNING severity
and VALIDATION type through the Vulkan driver, once per kernel (pipeline) and instruction,
naming the instruction, the workgroup, the lane and the rule. A strict kernel (`strict=True` on
the kernel or the device, `JITCOOP_ICD_STRICT=1` in the driver) raises the rule's error instead,
as before.

Each rule here says what the specification asks, what an NVIDIA H100 (driver 580.159.04) was
seen to do, and what jitcoop does when not strict. Failures that are real (an access outside every
buffer without robustness, a divergent cooperative instruction) stay errors. The probe shaders
tests/shaders/portability/ and their cases in tools/h100/cases.py (`write build/h100p
portability`, VKRUN_ROBUST for the robust group) record the H100's buffers for each rule into
tests/oracle/h100/, which tests/test_h100_recorded.py compares with jitcoop.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import JitcoopWarning, _located


class PortabilityWarning(JitcoopWarning):
    """A shader relies on something its extension forbids or leaves undefined, which the hardware
    runs (see jitcoop.diagnostics.RULES). `rule` names the rule; `offset`, `opname`, `result_id`,
    `workgroup` and `lane` say where, as ExecutionError does."""

    def __init__(self, message: str, rule: str, offset=None, opname=None, result_id=None, workgroup=None,
                 lane=None):
        self.rule, self.detail = rule, message
        self.offset, self.opname, self.result_id = offset, opname, result_id
        self.workgroup, self.lane = workgroup, lane
        super().__init__(_located(f"[{rule}] {message}", result_id is not None and f"%{result_id}", opname,
                                  offset is not None and f"at byte {offset}",
                                  workgroup is not None and f"workgroup {tuple(workgroup)}",
                                  lane is not None and f"lane {lane}"))


@dataclass(frozen=True)
class Rule:
    name: str
    spec: str          # what the extension says
    hardware: str      # what the H100 was seen to do
    jitcoop: str       # what jitcoop does unless strict


TENSOR_POINTER_ALIGNMENT = Rule(
    "tensor-pointer-alignment",
    "SPV_NV_cooperative_matrix2: the Pointer operand of OpCooperativeMatrixLoadTensorNV and "
    "OpCooperativeMatrixStoreTensorNV must be a multiple of 16 bytes",
    "addresses each element from the Pointer as given where the layout's strides are known only "
    "at run time (ggml's coopmat2 matmul stores result tiles at 4-byte-aligned Pointers and its "
    "flash attention loads 34-byte q8_0 blocks, every result right; the probe's loads at 4, 8 and "
    "20 bytes past alignment read exactly there); a store through a layout of constant 16 x 16 "
    "shape, which its compiler writes in 8-byte pairs, lands at the Pointer rounded down to 8 "
    "bytes (4 bytes early at 4 and 12 bytes past alignment, exact at 24)",
    "addresses every element from the Pointer as given (the hardware's answer wherever it "
    "cannot pair elements)")

TENSOR_CLAMP_UNDEFINED = Rule(
    "tensor-clamp-undefined",
    "SPV_NV_cooperative_matrix2: with clamp mode Undefined, an element whose tensor coordinate is "
    "outside the tensor has an undefined value (a load) or an undefined effect (a store)",
    "addresses the element at its coordinate as it is: a load past the tensor's rows or columns "
    "reads the binding's bytes at that address and a store writes them (ggml's MUL_MAT_ID loads "
    "expert rows past the tensor and never uses them); past the binding's end a load gave zero "
    "and a store wrote nothing, with robust buffer access or without",
    "addresses the element at its coordinate as it is; past the binding it is an out-of-bounds "
    "access like any other (zero and nothing written under robust buffer access, an error "
    "without it)")

RULES = {r.name: r for r in (TENSOR_POINTER_ALIGNMENT, TENSOR_CLAMP_UNDEFINED)}


def rule_of(site, case: int) -> Rule:
    """The rule a diagnostic site reports (a site may report several, by case)."""
    r = site.rule
    return RULES[r.get(case) if isinstance(r, dict) else r]
