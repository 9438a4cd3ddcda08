"""jitcoop: SPIR-V compute shaders with cooperative matrices and vectors, on the CPU, fast.

    dev = jitcoop.Device()                      # profile "generic", subgroup size 32
    mod = dev.load("shader.spv")                # a path, bytes, or SPIR-V assembly text
    k = mod.kernel("main", spec={0: 128})       # specialize and compile (cached on disk)
    run = k.dispatch((gx, gy, gz), {0: a, 1: b}, push=push_bytes)
"""
__version__ = "0.1.0"      # before the imports: the disk cache's entries carry it

import importlib
from typing import TYPE_CHECKING

from .errors import BindingError, CacheWarning, ExecutionError, JitcoopError, JitcoopWarning, SpirvError

if TYPE_CHECKING:              # what type checkers and the API reference see
    from .api import Device, DispatchReport, Kernel, Module
    from .devices.coopvec import convert_coopvec_matrix
    from .diagnostics import PortabilityWarning
    from .runtime.memory import Buffer

# The rest is imported on first use (PEP 562): `import jitcoop` (the pytest plugin, the driver's
# instance and property modules) needs neither numpy nor the compiler, which `Device` brings in.
_LAZY = {"Device": ".api", "DispatchReport": ".api", "Kernel": ".api", "Module": ".api",
         "PortabilityWarning": ".diagnostics", "Buffer": ".runtime.memory",
         "convert_coopvec_matrix": ".devices.coopvec"}


def __getattr__(name):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'jitcoop' has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(where, __name__), name)
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["Device", "Module", "Kernel", "Buffer", "DispatchReport", "SpirvError", "BindingError",
           "ExecutionError", "JitcoopError", "JitcoopWarning", "CacheWarning", "PortabilityWarning"]
