"""jitcoop: SPIR-V compute shaders with cooperative matrices and vectors, on the CPU, fast.

    dev = jitcoop.Device()                      # profile "generic", subgroup size 32
    mod = dev.load("shader.spv")                # a path, bytes, or SPIR-V assembly text
    k = mod.kernel("main", spec={0: 128})       # specialize and compile (cached on disk)
    run = k.dispatch((gx, gy, gz), {0: a, 1: b}, push=push_bytes)
"""
__version__ = "0.1.0"      # before the imports: the disk cache's entries carry it

from .api import Device, DispatchReport, Kernel, Module
from .errors import BindingError, CacheWarning, ExecutionError, JitcoopError, JitcoopWarning, SpirvError
from .diagnostics import PortabilityWarning
from .runtime.memory import Buffer
from .devices.coopvec import convert_coopvec_matrix  # noqa: F401

__all__ = ["Device", "Module", "Kernel", "Buffer", "DispatchReport", "SpirvError", "BindingError",
           "ExecutionError", "JitcoopError", "JitcoopWarning", "CacheWarning", "PortabilityWarning"]
