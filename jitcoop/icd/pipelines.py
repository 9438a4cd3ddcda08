"""Shader modules, pipeline layouts, compute pipelines and pipeline caches.

Creating a pipeline is cheap: it loads the module (jitcoop parses it and checks that it can run
every instruction: a SpirvError here fails vkCreateComputePipelines with a message naming the
instruction), keeps the entry point, the specialization constants the module declares (raw
bytes, as VkSpecializationInfo gives them: jitcoop reads them by the constant's type) and the
required subgroup size. The kernel is compiled when a dispatch of the pipeline is first
submitted (JITCOOP_ICD_COMPILE=eager compiles here instead), once per device for every pipeline
with the same code, entry point, constants, subgroup size and numerics; jitcoop's disk cache keeps
it for the next process. A compile runs under a time limit (JITCOOP_ICD_COMPILE_TIMEOUT, else
jitcoop's KernelOptions.compile_timeout); one that fails or runs past it fails the pipeline on
that device, as a shader jitcoop cannot compile does. A pipeline cache therefore holds only its
header: jitcoop's cache (JITCOOP_CACHE_DIR) is the real one.
"""
from __future__ import annotations

import contextlib
import hashlib
import struct
import time
import warnings

import jitcoop
from jitcoop.runtime.limit import run_limited

from . import dispatch_base, dump, faults, vk
from .descriptors import DescriptorSetLayout
from .device import Device
from .vk import VkError, command

_BUFFER_STORAGE = ("StorageBuffer", "Uniform")


class PipelineError(Exception):
    """A pipeline jitcoop cannot compile: raised where it is first compiled (the message says why)."""


class ShaderModule(vk.Object):
    kind = "VkShaderModule"

    def __init__(self, device, info):
        self.device = device
        self.code = _code(info)
        self.key = hashlib.sha256(self.code).hexdigest()


def _code(info) -> bytes:
    if info.codeSize % 4 or info.codeSize < 20:
        raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"SPIR-V code of {info.codeSize} bytes: it must be a multiple "
                                               "of 4 bytes and hold at least the header")
    return bytes(vk.ffi.buffer(info.pCode, info.codeSize))


class PipelineLayout(vk.Object):
    kind = "VkPipelineLayout"

    def __init__(self, device, info):
        self.device = device
        self.set_layouts = [vk.get(info.pSetLayouts[i], DescriptorSetLayout, optional=True)
                            for i in range(info.setLayoutCount)]


class Pipeline(vk.Object):
    kind = "VkPipeline"

    def __init__(self, device: Device, info):
        self.device = device
        stage = info.stage
        # the layout is only checked: the shader's own declarations place bindings and push constants
        vk.get(info.layout, PipelineLayout, "VkComputePipelineCreateInfo::layout")
        self.entry = vk.string(stage.pName)
        if stage.module != vk.ffi.NULL:
            sm = vk.get(stage.module, ShaderModule)
            code, key = sm.code, sm.key
        else:                      # maintenance5: the module's create info chained to the stage
            smi = vk.find(stage, vk.lib.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, "VkShaderModuleCreateInfo")
            if smi is None:
                raise VkError(vk.lib.VK_ERROR_UNKNOWN, "the stage has neither a module nor a VkShaderModuleCreateInfo")
            code = _code(smi)
            key = hashlib.sha256(code).hexdigest()
        rs = vk.find(stage, vk.lib.VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
                     "VkPipelineShaderStageRequiredSubgroupSizeCreateInfo")
        self.subgroup_size = rs.requiredSubgroupSize if rs is not None else device.physical.profile.subgroup_size
        self.code = code
        self.module = _module(device, code, key, self.subgroup_size)
        if self.entry not in self.module.entry_points:
            raise VkError(vk.lib.VK_ERROR_UNKNOWN,
                          f"the module has no compute entry point {self.entry!r}; it has "
                          f"{', '.join(map(repr, self.module.entry_points)) or 'none'}")
        facts = _facts(device, key, self.module)
        self.bindings = [(b["set"], b["binding"]) for b in facts["bindings"] if b["storage_class"] in _BUFFER_STORAGE]
        self.spec = _specialization(stage.pSpecializationInfo, {s["spec_id"] for s in facts["spec_constants"]})
        numerics, tier = device.config.numerics, device.config.tier
        self.options = {"numerics": numerics} if numerics else {}
        if device.config.strict:
            self.options["strict"] = True
        if _robust_buffers(info, device):
            self.options["robust_buffer_access"] = True
        if tier:
            self.options["tier"] = tier
        self.key = (key, self.entry, tuple(sorted(self.spec.items())), self.subgroup_size,
                    tuple(sorted(self.options.items())))
        if device.config.dump:
            dump.write(device.config.dump, code, key, self.entry, self.spec, self.subgroup_size,
                       device.physical.profile.name, self.options)

    def kernel(self) -> jitcoop.Kernel:
        """The compiled kernel (compiled now if no pipeline of the device has it yet)."""
        dev = self.device
        k = dev.kernels.get(self.key)
        if k is None:
            with dev.compile_lock:
                k = dev.kernels.get(self.key)
                if k is None:
                    try:
                        with _cache_warnings_to(dev):
                            k = self._compile(self.module)
                    except jitcoop.JitcoopError as e:
                        k = PipelineError(f"{self.describe()} (entry point {self.entry!r}) cannot be compiled: {e}")
                    dev.kernels[self.key] = k
        if isinstance(k, PipelineError):
            raise k
        return k

    def _compile(self, module: jitcoop.Module) -> jitcoop.Kernel:
        """The entry point of `module` compiled, under the device's compile time limit; a fault
        injected here (jitcoop.icd.faults) fails as a compile that went wrong."""
        cfg = self.device.config
        options = dict(self.options)
        if cfg.compile_timeout is not None:
            options["compile_timeout"] = cfg.compile_timeout
        if cfg.faults:
            if faults.reached(cfg.faults, "compile"):
                raise jitcoop.SpirvError(faults.message("compile"))
            if faults.reached(cfg.faults, "compile_timeout"):
                run_limited(_never_ends, cfg.compile_timeout or faults.INJECTED_COMPILE_LIMIT,
                            f"{self.entry!r} ({faults.message('compile_timeout')})")
        return module.kernel(self.entry, spec=self.spec, **options)

    def kernel_with_base(self, base) -> jitcoop.Kernel:
        """The kernel for vkCmdDispatchBase: the module rewritten so workgroup ids start at base."""
        dev = self.device
        key = self.key + (("base",) + tuple(base),)
        k = dev.kernels.get(key)
        if k is None:
            local = self.kernel().local_size
            try:
                code = dispatch_base.with_base(self.code, self.entry, base,
                                               tuple(b * n for b, n in zip(base, local)))
                module = dev.jdev(self.subgroup_size).load(code)
                with dev.compile_lock, _cache_warnings_to(dev):
                    k = self._compile(module)
            except (dispatch_base.RewriteError, jitcoop.JitcoopError) as e:
                k = PipelineError(f"{self.describe()} with dispatch base {tuple(base)}: {e}")
            dev.kernels[key] = k
        if isinstance(k, PipelineError):
            raise k
        return k


# VkPipelineRobustnessBufferBehavior
_ROBUSTNESS_DEVICE_DEFAULT, _ROBUSTNESS_DISABLED = 0, 1


def _robust_buffers(info, device: Device) -> bool:
    """Whether the pipeline's storage and uniform buffer accesses are robust: the device's
    robustBufferAccess or robustBufferAccess2, unless a VkPipelineRobustnessCreateInfo on the
    pipeline or its stage says otherwise (the stage's wins; jitcoop runs robustBufferAccess as
    robustBufferAccess2, which satisfies both)."""
    robust = device.robust_buffers
    for where in (info, info.stage):
        r = vk.find(where, vk.lib.VK_STRUCTURE_TYPE_PIPELINE_ROBUSTNESS_CREATE_INFO,
                    "VkPipelineRobustnessCreateInfo")
        if r is None:
            continue
        behaviours = {r.storageBuffers, r.uniformBuffers} - {_ROBUSTNESS_DEVICE_DEFAULT}
        if behaviours:
            robust = behaviours != {_ROBUSTNESS_DISABLED}
    return robust


def _never_ends():
    while True:
        time.sleep(60)


@contextlib.contextmanager
def _cache_warnings_to(dev):
    """Disk cache warnings while compiling (a damaged entry compiled again, a cache folder that
    cannot be written: jitcoop.CacheWarning) as debug-utils warnings of the device's instance;
    other warnings as they were."""
    from .debug import warn
    heard: list = []
    try:
        with warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always", jitcoop.CacheWarning)
            yield
    finally:
        for w in heard:
            if issubclass(w.category, jitcoop.CacheWarning):
                warn(dev, str(w.message))
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _module(device: Device, code: bytes, key: str, subgroup_size: int) -> jitcoop.Module:
    m = device.modules.get((key, subgroup_size))
    if m is None:
        jdev = device.jdev(subgroup_size)
        try:
            m = jdev.load(code)
        except jitcoop.SpirvError as e:
            raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"the shader cannot run on jitcoop: {e}") from None
        device.modules[(key, subgroup_size)] = m
    return m


def _facts(device: Device, key: str, module: jitcoop.Module) -> dict:
    f = device.module_facts.get(key)
    if f is None:
        f = device.module_facts[key] = module.info()
    return f


def _specialization(info, declared: set) -> dict:
    """{spec id: raw bytes} for the map entries whose constant the module declares (Vulkan
    ignores the others)."""
    if info == vk.ffi.NULL or not info.mapEntryCount:
        return {}
    data = bytes(vk.ffi.buffer(info.pData, info.dataSize)) if info.dataSize else b""
    out = {}
    for i in range(info.mapEntryCount):
        e = info.pMapEntries[i]
        if e.offset + e.size > len(data):
            raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"specialization constant {e.constantID}: bytes "
                                                   f"[{e.offset}, {e.offset + e.size}) lie outside pData "
                                                   f"({len(data)} bytes)")
        if e.constantID in declared:
            out[e.constantID] = data[e.offset:e.offset + e.size]
    return out


# -- commands --------------------------------------------------------------------------------------

@command
def vkCreateShaderModule(device, info, allocator, p_module):
    p_module[0] = ShaderModule(vk.get(device, Device), info).register().handle


@command
def vkDestroyShaderModule(device, module, allocator):
    m = vk.get(module, ShaderModule, optional=True)
    if m is not None:
        m.release()


@command
def vkCreatePipelineLayout(device, info, allocator, p_layout):
    p_layout[0] = PipelineLayout(vk.get(device, Device), info).register().handle


@command
def vkDestroyPipelineLayout(device, layout, allocator):
    obj = vk.get(layout, PipelineLayout, optional=True)
    if obj is not None:
        obj.release()


@command
def vkCreateComputePipelines(device, cache, count, infos, allocator, p_pipelines):
    from .debug import report_error
    dev = vk.get(device, Device)
    result = vk.lib.VK_SUCCESS
    for i in range(count):
        p_pipelines[i] = vk.ffi.NULL
    for i in range(count):
        try:
            p = Pipeline(dev, infos[i]).register()
        except VkError as e:
            if e.message:
                report_error(dev, f"vkCreateComputePipelines (pipeline {i}): {e.message}")
            result = e.result
            continue
        if dev.config.eager:
            try:
                p.kernel()
            except PipelineError as e:
                report_error(dev, f"vkCreateComputePipelines (pipeline {i}): {e}")
                p.release()
                result = vk.lib.VK_ERROR_UNKNOWN
                continue
        p_pipelines[i] = p.handle
    return result


@command
def vkCreateGraphicsPipelines(device, cache, count, infos, allocator, p_pipelines):
    for i in range(count):
        p_pipelines[i] = vk.ffi.NULL
    raise VkError(vk.lib.VK_ERROR_FEATURE_NOT_PRESENT,
                  "graphics pipelines are not supported: jitcoop's Vulkan driver runs compute work only")


@command
def vkDestroyPipeline(device, pipeline, allocator):
    p = vk.get(pipeline, Pipeline, optional=True)
    if p is not None:
        p.release()


# -- pipeline caches: the header only ----------------------------------------------------------------

class PipelineCache(vk.Object):
    kind = "VkPipelineCache"

    def __init__(self, device):
        self.device = device


def cache_header(device: Device) -> bytes:
    """VkPipelineCacheHeaderVersionOne: size, version 1, vendor, device, pipelineCacheUUID."""
    p = device.physical.properties
    return struct.pack("<IIII16B", 32, 1, p["vendorID"], p["deviceID"], *p["pipelineCacheUUID"])


@command
def vkCreatePipelineCache(device, info, allocator, p_cache):
    p_cache[0] = PipelineCache(vk.get(device, Device)).register().handle


@command
def vkDestroyPipelineCache(device, cache, allocator):
    c = vk.get(cache, PipelineCache, optional=True)
    if c is not None:
        c.release()


@command
def vkGetPipelineCacheData(device, cache, p_size, p_data):
    header = cache_header(vk.get(device, Device))
    vk.get(cache, PipelineCache)
    if p_data == vk.ffi.NULL:
        p_size[0] = len(header)
        return vk.lib.VK_SUCCESS
    if p_size[0] < len(header):
        p_size[0] = 0
        return vk.lib.VK_INCOMPLETE
    vk.ffi.memmove(p_data, header, len(header))
    p_size[0] = len(header)


@command
def vkMergePipelineCaches(device, dst, count, srcs):
    vk.get(dst, PipelineCache)
