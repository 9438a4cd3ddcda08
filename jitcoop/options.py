"""Kernel options: everything besides the module, entry point, spec constants and device that
changes the compiled code of a kernel (`Module.kernel(entry, spec, **options)`)."""
from __future__ import annotations

import math
import os
import numbers
from dataclasses import asdict, dataclass, fields

from .errors import BindingError

NUMERICS = ("exact", "nvidia", "float32")
DECODE_VECTOR_MODES = ("auto", "scalar", "vector", "check")
TIERS = ("auto", "fast", "optimized")


@dataclass(frozen=True)
class KernelOptions:
    numerics: str = "exact"
    """How float MulAdds sum: "exact" (exact products, float64 sums, one rounding), "nvidia"
    (the H100's tensor-core models), "float32" (float32 fused multiply-adds in K order)."""
    decode_vector: str = "auto"
    """Tensor loads with a DecodeVectorFunc: "auto", "scalar", "vector" or "check" (both, compared)."""
    profile: bool = False
    """Count calls, elements and cycles per callback and collective instruction."""
    unchecked: bool = False
    """Leave out bounds checks of memory accesses (for measuring what they cost; unsafe)."""
    compile_timeout: float = 120.0
    """Seconds a compile may take before it stops with a SpirvError (0: no limit)."""
    opt_level: int = 3
    """LLVM optimization level of the generated code (0 to 3)."""
    invariant_lanes: bool = True
    """Run one invocation's code per workgroup when no invocation can differ from another
    (jitcoop.analysis.invariance); False runs every invocation (to compare)."""
    lane_groups: bool | int = True
    """Run the lane code of invocations that may differ a group at a time in vector code
    (jitcoop.codegen.lanevec): True (the host's group, lanevec.group_size: 16 where the workgroup
    is whole groups of 16, else 32-bit values per vector register; where the vectorizer's cost
    model expects a gain), a group size (4, 8, 16 or 32: wherever it can), or False (one
    invocation after another, to compare)."""
    strict: bool = False
    """Raise an ExecutionError where a shader breaks a rule its extension states that the
    hardware does not enforce (jitcoop.diagnostics: a tensor Pointer that is not 16-byte
    aligned, a coordinate outside the tensor with clamp mode Undefined). False (default) runs
    such code as the H100 does and gives a PortabilityWarning once per kernel and instruction."""
    robust_buffer_access: bool = False
    """Vulkan's robust buffer access (robustBufferAccess2's rules): a load, store or atomic
    through a binding outside the binding's range reads zeros and writes nothing, instead of
    an ExecutionError. Accesses through device addresses stay checked."""
    tier: str = "auto"
    """Which code runs (jitcoop.runtime.tiers): "auto" (the first dispatch runs code compiled fast
    unless the disk cache has the optimized code; a kernel dispatched again or running long gets
    the optimized code compiled in the background and swapped in when ready), "fast" (only the
    fast tier: few LLVM passes, LLVM's -O0 code generator, no lane groups) or "optimized" (only
    the fully optimized code, compiled before the first dispatch). Both tiers write the same
    bytes. The default follows JITCOOP_TIER where that is set."""
    element_loops: bool = True
    """Run an element-wise instruction on a fragment of more than 32 components per invocation
    as a loop over the components (jitcoop.codegen.element_loops); False writes it out
    component by component (to compare: it compiles slowly past a few hundred components)."""

    @classmethod
    def of(cls, options: "KernelOptions | dict | None") -> "KernelOptions":
        """Options from a KernelOptions, a dict of option names or None (the defaults), checked:
        an unknown name or a bad value is a BindingError."""
        if isinstance(options, KernelOptions):
            return options
        options = dict(options or {})
        known = {f.name for f in fields(cls)}
        bad = sorted(set(options) - known)
        if bad:
            raise BindingError(f"unknown kernel option{'s' if len(bad) > 1 else ''} {', '.join(bad)}; "
                               f"the options are {', '.join(sorted(known))}")
        from_env = "tier" not in options and bool(os.environ.get("JITCOOP_TIER", "").strip())
        if from_env:
            options["tier"] = os.environ["JITCOOP_TIER"].strip()
        o = cls(**options)
        if o.tier not in TIERS:
            raise BindingError(f"{'JITCOOP_TIER' if from_env else 'tier'}={o.tier!r}: choose one of "
                               f"{', '.join(TIERS)}")
        if o.numerics not in NUMERICS:
            raise BindingError(f"numerics={o.numerics!r}: choose one of {', '.join(NUMERICS)}")
        if o.decode_vector not in DECODE_VECTOR_MODES:
            raise BindingError(f"decode_vector={o.decode_vector!r}: choose one of "
                               f"{', '.join(DECODE_VECTOR_MODES)}")
        if isinstance(o.opt_level, bool) or not isinstance(o.opt_level, numbers.Integral) \
                or not 0 <= o.opt_level <= 3:
            raise BindingError(f"opt_level={o.opt_level!r}: choose 0 to 3")
        t = o.compile_timeout
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not math.isfinite(t) or t < 0:
            raise BindingError(f"compile_timeout={t!r}: give seconds (0: no limit)")
        for name in ("profile", "unchecked", "invariant_lanes", "element_loops", "strict",
                     "robust_buffer_access"):
            if not isinstance(getattr(o, name), bool):
                raise BindingError(f"{name}={getattr(o, name)!r}: give True or False")
        if not isinstance(o.lane_groups, bool) and o.lane_groups not in (4, 8, 16, 32):
            raise BindingError(f"lane_groups={o.lane_groups!r}: give True, False or a group size of 4, 8, 16 or 32")
        return o

    def replace(self, **changes) -> "KernelOptions":
        """A copy with some options changed, checked as `of` checks them."""
        return KernelOptions.of({**asdict(self), **changes})

    def key(self) -> tuple:
        """What the compiled code depends on (the compile timeout does not change it)."""
        d = asdict(self)
        d.pop("compile_timeout")
        return tuple(sorted(d.items()))
