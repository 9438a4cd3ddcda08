"""Logical devices and their queues.

A VkDevice owns one `jitcoop.Device` per subgroup size its pipelines ask for (the profile's
default first); they share one address space, so a buffer device address works in every
pipeline. It also owns the caches that make pipelines cheap: loaded modules by their code,
module facts (bindings, spec ids) and compiled kernels by everything that specializes them.
`cond` is the one condition every fence, semaphore, event and queue of the device waits on.
"""
from __future__ import annotations

import threading

import jitcoop

from . import physical, vk
from .instance import PhysicalDevice
from .vk import VkError, command


class Device(vk.Object):
    kind = "VkDevice"
    dispatchable = True

    def __init__(self, pd: PhysicalDevice, info):
        self.physical = pd
        self.instance = pd.instance
        self.config = pd.instance.config
        self.extensions = set(vk.strings(info.enabledExtensionCount, info.ppEnabledExtensionNames))
        missing = sorted(self.extensions - set(pd.extensions))
        if missing:
            raise VkError(vk.lib.VK_ERROR_EXTENSION_NOT_PRESENT,
                          f"device extension(s) {', '.join(missing)} not offered by {pd.properties['deviceName']}")
        self._check_features(info)
        self.cond = threading.Condition()
        self.lost: str | None = None
        self._jdevs: dict = {}
        self.modules: dict = {}           # (code key, subgroup size) -> jitcoop.Module
        self.module_facts: dict = {}      # code key -> Module.info()
        self.kernels: dict = {}           # specialization key -> jitcoop.Kernel
        self.compile_lock = threading.Lock()
        # jitcoop.Kernel.dispatch is not re-entrant (it keeps the call's push constants on the
        # kernel), and pipelines share kernels: the device's queues dispatch one at a time
        # (each dispatch uses every core anyway)
        self.dispatch_lock = threading.Lock()
        from .queue import Queue
        self.queues = {}
        for i in range(info.queueCreateInfoCount):
            q = info.pQueueCreateInfos[i]
            if q.queueFamilyIndex != 0 or not 1 <= q.queueCount <= physical.QUEUE_COUNT:
                raise VkError(vk.lib.VK_ERROR_INITIALIZATION_FAILED,
                              f"queue family {q.queueFamilyIndex} with {q.queueCount} queues: the device has "
                              f"family 0 with {physical.QUEUE_COUNT} queues")
            for k in range(q.queueCount):
                self.queues[(0, k)] = Queue(self, 0, k).register()

    def _check_features(self, info):
        asked = []
        if info.pEnabledFeatures != vk.ffi.NULL:
            asked.append(info.pEnabledFeatures)
        for st, s in vk.chain(info):
            name = vk.struct_of(st)
            if name == "VkPhysicalDeviceFeatures2":
                asked.append(vk.ffi.addressof(vk.ffi.cast("VkPhysicalDeviceFeatures2 *", s).features))
            elif name is not None and "Features" in name:
                asked.append(vk.ffi.cast(name + " *", s))
        enabled = set()
        for s in asked:
            for field, _ in vk.ffi.typeof(s).item.fields:
                if field not in ("sType", "pNext") and getattr(s, field):
                    if not self.physical.features.get(field):
                        raise VkError(vk.lib.VK_ERROR_FEATURE_NOT_PRESENT,
                                      f"feature {field} is not supported by {self.physical.properties['deviceName']}")
                    enabled.add(field)
        # out-of-bounds accesses through bindings read zeros and write nothing (pipelines.py)
        self.robust_buffers = bool(enabled & {"robustBufferAccess", "robustBufferAccess2"})

    def jdev(self, subgroup_size: int | None = None) -> jitcoop.Device:
        """The jitcoop device for a subgroup size (None: the profile's), sharing one address space."""
        profile = self.physical.profile
        size = subgroup_size or profile.subgroup_size
        d = self._jdevs.get(size)
        if d is None:
            try:
                d = jitcoop.Device(profile.name, size)
            except jitcoop.BindingError as e:
                raise VkError(vk.lib.VK_ERROR_UNKNOWN, str(e)) from None
            if self._jdevs:
                d.memory = next(iter(self._jdevs.values())).memory
            self._jdevs[size] = d
        return d

    def lose(self, message: str):
        with self.cond:
            if self.lost is None:
                self.lost = message
            self.cond.notify_all()

    def check_lost(self):
        if self.lost is not None:
            raise VkError(vk.lib.VK_ERROR_DEVICE_LOST)

    def release(self):
        for q in self.queues.values():
            q.stop()
            q.release()
        for obj in vk.owned_by(self):
            obj.release()
        super().release()


@command
def vkCreateDevice(physical_device, info, allocator, p_device):
    pd = vk.get(physical_device, PhysicalDevice)
    dev = Device(pd, info).register()
    dev.jdev()
    p_device[0] = dev.handle


@command
def vkDestroyDevice(device, allocator):
    dev = vk.get(device, Device, optional=True)
    if dev is not None:
        dev.release()


def _queue(dev, family, index):
    q = dev.queues.get((family, index))
    if q is None:
        raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"the device has no queue {index} of family {family}")
    return q


@command
def vkGetDeviceQueue(device, family, index, p_queue):
    p_queue[0] = _queue(vk.get(device, Device), family, index).handle


@command
def vkGetDeviceQueue2(device, info, p_queue):
    p_queue[0] = _queue(vk.get(device, Device), info.queueFamilyIndex, info.queueIndex).handle


@command
def vkDeviceWaitIdle(device):
    dev = vk.get(device, Device)
    for q in dev.queues.values():
        q.wait_idle()
    dev.check_lost()
