"""Instances and their physical devices (one per device profile of JITCOOP_ICD_PROFILES)."""
from __future__ import annotations

import threading

from .. import devices
from . import config, debug, entry, extensions, properties, vk
from .vk import VkError, command


class Heap:
    """The one memory heap of a physical device: its size, and the bytes its devices hold. An
    allocation that does not fit fails before any memory is taken."""

    def __init__(self, size: int):
        self.size = size
        self.used = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        with self._lock:
            if self.used + n > self.size:
                return False
            self.used += n
            return True

    def give(self, n: int):
        with self._lock:
            self.used -= n


class PhysicalDevice(vk.Object):
    kind = "VkPhysicalDevice"
    dispatchable = True

    def __init__(self, instance, profile_name: str, subgroup_size, hidden=()):
        self.instance = instance
        self.profile = devices.profile(profile_name, subgroup_size)
        self.extensions = properties.device_extensions(self.profile, hidden)
        self.features = properties.features(self.profile, hidden)
        self.properties = properties.properties(self.profile)
        if subgroup_size is not None:
            self.properties["deviceName"] += f", subgroup size {subgroup_size}"
        self.limits = properties.limits(self.profile)
        self.heap = Heap(instance.config.heap or properties.host_memory_bytes())


class Instance(vk.Object):
    kind = "VkInstance"
    dispatchable = True

    def __init__(self, info):
        self.extensions = set(vk.strings(info.enabledExtensionCount, info.ppEnabledExtensionNames))
        self.messengers = debug.messengers_of(info, self)
        unknown = sorted(self.extensions - set(extensions.INSTANCE))
        if unknown:
            self._fail(vk.lib.VK_ERROR_EXTENSION_NOT_PRESENT,
                       f"instance extension(s) {', '.join(unknown)} not offered; jitcoop offers "
                       f"{', '.join(extensions.INSTANCE)}")
        try:
            cfg = config.load()
        except config.ConfigError as e:
            self._fail(vk.lib.VK_ERROR_INITIALIZATION_FAILED, str(e))
        self.config = cfg
        self.physical_devices = [PhysicalDevice(self, name, sg, cfg.hidden).register() for name, sg in cfg.profiles]

    def _fail(self, result, message):
        """vkCreateInstance fails: the messengers chained to its create info hear why."""
        debug.report_error(self, f"vkCreateInstance: {message}")
        raise VkError(result)

    def device_extensions(self) -> set:
        return {e for pd in self.physical_devices for e in pd.extensions}

    def release(self):
        for pd in self.physical_devices:
            pd.release()
        for m in self.messengers:
            m.release()
        super().release()


def _extension_properties(p_count, p_props, names):
    versions = {vk.string(e.name): e.spec_version for e in vk.lib.jc_extensions}

    def write(out, name):
        out.extensionName = name.encode()
        out.specVersion = versions[name]
    return vk.enumerate_out(p_count, p_props, list(names), write)


@command
def vkEnumerateInstanceVersion(p_version):
    p_version[0] = properties.API_VERSION


@command
def vkEnumerateInstanceExtensionProperties(layer_name, p_count, p_props):
    if layer_name != vk.ffi.NULL:
        raise VkError(vk.lib.VK_ERROR_LAYER_NOT_PRESENT)
    return _extension_properties(p_count, p_props, extensions.INSTANCE)


@command
def vkEnumerateInstanceLayerProperties(p_count, p_props):
    p_count[0] = 0


@command
def vkCreateInstance(info, allocator, p_instance):
    inst = Instance(info).register()
    p_instance[0] = inst.handle


@command
def vkDestroyInstance(instance, allocator):
    inst = vk.get(instance, Instance, optional=True)
    if inst is not None:
        inst.release()


@command
def vkEnumeratePhysicalDevices(instance, p_count, p_devices):
    pds = vk.get(instance, Instance).physical_devices
    if p_devices == vk.ffi.NULL:
        p_count[0] = len(pds)
        return vk.lib.VK_SUCCESS
    n = min(p_count[0], len(pds))
    for i in range(n):
        p_devices[i] = pds[i].handle
    p_count[0] = n
    return vk.lib.VK_INCOMPLETE if n < len(pds) else vk.lib.VK_SUCCESS


@command
def vkEnumeratePhysicalDeviceGroups(instance, p_count, p_groups):
    inst = vk.get(instance, Instance)

    def write(g, pd):
        g.physicalDeviceCount = 1
        g.physicalDevices[0] = pd.handle
        g.subsetAllocation = 0
    return vk.enumerate_out(p_count, p_groups, inst.physical_devices, write)


@command
def vkGetInstanceProcAddr(instance, name):
    return entry.instance_proc_addr(instance, vk.string(name))


@command
def vkGetDeviceProcAddr(device, name):
    from .device import Device
    return entry.device_proc_addr(vk.get(device, Device), vk.string(name))
