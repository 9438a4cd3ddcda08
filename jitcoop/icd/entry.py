"""Hands every Vulkan command to the library, and answers the loader's proc-address queries.

The library declares an `extern "Python"` function for each command of the sections it was
built with (`lib.jc_commands`: core 1.0-1.3 and the extensions of `extensions.py`). `install`
attaches the implementation registered with `@vk.command` to each; a command of the core API
that a compute driver does not implement (images, graphics) gets a stub that reports the call
through VK_EXT_debug_utils and returns VK_ERROR_FEATURE_NOT_PRESENT, so that an application
calling one sees an error, not a crash. Every implementation runs behind a guard (`_extern`, the
one place that attaches Python to the library): a VkError becomes its result code; any other
exception is reported (with its traceback on stderr) and becomes VK_ERROR_UNKNOWN (or
VK_ERROR_OUT_OF_HOST_MEMORY), so no Python exception ever reaches the application.
"""
from __future__ import annotations

import sys
import traceback

from . import vk
from .vk import VkError

LOADER_ICD_INTERFACE_VERSION = 7

_procs: dict = {}            # name -> PFN_vkVoidFunction cdata
_levels: dict = {}           # name -> "global", "instance", "physical" or "device"
_sections: dict = {}         # name -> the extension (or VK_VERSION_1_x) that defines it


def install(ffi, lib):
    vk.install(ffi, lib)
    # importing the modules registers their commands
    from . import (commands, coopvec, debug, descriptors, device, instance, memory, physical,  # noqa: F401
                   pipelines, queries, queue)
    for i in range(len(lib.jc_commands)):
        c = lib.jc_commands[i]
        name, section = vk.string(c.name), vk.string(c.section)
        _sections[name] = section
        _attach(ffi, lib, name, _implementation(name))
    _extern(ffi, "jc_icd_negotiate", "vk_icdNegotiateLoaderICDInterfaceVersion", _negotiate, "VkResult")
    _extern(ffi, "jc_icd_get_instance_proc_addr", "vk_icdGetInstanceProcAddr",
            lambda inst, name: instance_proc_addr(inst, vk.string(name)), "PFN")
    _extern(ffi, "jc_icd_get_physical_device_proc_addr", "vk_icdGetPhysicalDeviceProcAddr",
            lambda inst, name: physical_device_proc_addr(vk.string(name)), "PFN")


def _implementation(name):
    fn = vk.COMMANDS.get(name)
    if fn is None:                    # vkCmdPipelineBarrier2KHR and the like: the promoted command
        for suffix in ("KHR", "EXT"):
            if name.endswith(suffix) and name[:-len(suffix)] in vk.COMMANDS:
                return vk.COMMANDS[name[:-len(suffix)]]
    return fn


def _attach(ffi, lib, name, fn):
    ctype = ffi.typeof(getattr(lib, "jc_" + name))
    first = ctype.args[0].cname if ctype.args else ""
    _levels[name] = ("global" if not first.startswith("struct Vk") else
                     "instance" if first == "struct VkInstance_T *" else
                     "physical" if first == "struct VkPhysicalDevice_T *" else "device")
    if fn is None:
        fn = _unsupported(name)
    result = ctype.result
    kind = "VkResult" if result is ffi.typeof("VkResult") else "void" if result.kind == "void" else \
        "PFN" if result.kind in ("function", "pointer") else "value"
    _extern(ffi, "jc_" + name, name, fn, kind)
    _procs[name] = ffi.cast("PFN_vkVoidFunction", getattr(lib, "jc_" + name))


def _unsupported(name):
    def fn(*args):
        raise VkError(vk.lib.VK_ERROR_FEATURE_NOT_PRESENT,
                      f"{name} is not supported: jitcoop's Vulkan driver runs compute work only "
                      "(no images, samplers or graphics)")
    return fn


def _extern(ffi, extern, name, fn, kind):
    """Attach fn, guarded, to the library's extern "Python" function `extern`. cffi itself is the
    last guard: should the guarded result not convert to the C type (an implementation returning
    the wrong kind of value), the C function returns VK_ERROR_UNKNOWN (or 0, NULL) and the
    problem is reported, where cffi would return 0, VK_SUCCESS."""
    def escaped(exc_type, exc, tb):
        _report((), f"{name}: internal error in jitcoop's Vulkan driver: its result cannot be returned: "
                    f"{exc_type.__name__}: {exc}")
    error = {"error": vk.lib.VK_ERROR_UNKNOWN} if kind == "VkResult" else {}
    ffi.def_extern(name=extern, onerror=escaped, **error)(_guard(name, fn, kind))


def _guard(name, fn, kind):
    failure = {"VkResult": None, "void": None, "PFN": vk.ffi.NULL, "value": 0}[kind]

    def call(*args):
        try:
            r = fn(*args)
        except VkError as e:
            if e.message:
                _report(args, f"{name}: {e.message}")
            return e.result if kind == "VkResult" else failure
        except MemoryError:
            _report(args, f"{name}: out of host memory")
            return vk.lib.VK_ERROR_OUT_OF_HOST_MEMORY if kind == "VkResult" else failure
        except BaseException as e:      # an internal error: never let it reach the application
            _report(args, f"{name}: internal error in jitcoop's Vulkan driver: {type(e).__name__}: {e}",
                    traceback.format_exc())
            return vk.lib.VK_ERROR_UNKNOWN if kind == "VkResult" else failure
        if kind == "VkResult":
            return vk.lib.VK_SUCCESS if r is None else r
        if kind == "PFN":
            return vk.ffi.NULL if r is None else r
        return None if kind == "void" else r
    call.__name__ = name
    return call


def _report(args, message, tb=None):
    """Report a command's failure to the messengers of the object it names first (never raising:
    a report that fails goes to stderr)."""
    try:
        from .debug import report_error
        owner = None
        if args and isinstance(args[0], vk.ffi.CData) and vk.ffi.typeof(args[0]).kind == "pointer":
            owner = vk.find_object(vk.as_int(args[0]))
        report_error(owner, message, tb)
    except BaseException as e:          # noqa: BLE001 (the command's result matters more than its report)
        print(f"jitcoop Vulkan driver: error: {message}\n(reporting it failed: {type(e).__name__}: {e})",
              file=sys.stderr, flush=True)


def _negotiate(p_version):
    p_version[0] = min(p_version[0], LOADER_ICD_INTERFACE_VERSION)
    return vk.lib.VK_SUCCESS


# -- proc addresses --------------------------------------------------------------------------------

_GLOBAL = ("vkCreateInstance", "vkEnumerateInstanceVersion", "vkEnumerateInstanceExtensionProperties",
           "vkEnumerateInstanceLayerProperties", "vkGetInstanceProcAddr")
_ICD = {"vk_icdNegotiateLoaderICDInterfaceVersion": "jc_icd_negotiate",
        "vk_icdGetPhysicalDeviceProcAddr": "jc_icd_get_physical_device_proc_addr",
        "vk_icdGetInstanceProcAddr": "jc_icd_get_instance_proc_addr"}


def available(name: str, enabled_extensions=None) -> bool:
    """Whether the command exists for an instance or device that enabled these extensions
    (None: any offered extension)."""
    if name not in _procs:
        return False
    section = _sections[name]
    return section.startswith("VK_VERSION") or enabled_extensions is None or section in enabled_extensions


def instance_proc_addr(instance, name: str):
    if name in _ICD:
        return vk.ffi.cast("PFN_vkVoidFunction", getattr(vk.lib, _ICD[name]))
    if vk.as_int(instance) == 0:
        return _procs.get(name) if name in _GLOBAL else None
    # vkGetInstanceProcAddr answers for device commands too; device extensions are checked
    # at vkGetDeviceProcAddr.
    if name in _procs and _levels[name] in ("instance", "physical"):
        from .instance import Instance
        inst = vk.get(instance, Instance, "vkGetInstanceProcAddr")
        return _procs[name] if available(name, inst.extensions | inst.device_extensions()) else None
    return _procs.get(name)


def physical_device_proc_addr(name: str):
    return _procs.get(name) if _levels.get(name) == "physical" else None


def device_proc_addr(device, name: str):
    if _levels.get(name) != "device" or not available(name, device.extensions | device.instance.extensions):
        return None
    return _procs[name]
