"""Descriptor set layouts, pools, sets, updates and update templates.

A descriptor set holds, per binding, the (buffer, offset, range) of each array element; a
dispatch reads them when it runs (jitcoop binds one range per (set, binding): element 0).
Storage and uniform buffers, plain or dynamic, are the descriptor types a compute driver
without images offers; writing another type is an error naming it.
"""
from __future__ import annotations

import functools

from . import vk
from .device import Device
from .memory import Buffer
from .vk import VkError, command


@functools.cache
def _types() -> dict:
    lib = vk.lib
    return {"storage": lib.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, "uniform": lib.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
            "storage_dynamic": lib.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC,
            "uniform_dynamic": lib.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC}


def buffer_type(t: int) -> bool:
    return t in _types().values()


def dynamic_type(t: int) -> bool:
    return t in (_types()["storage_dynamic"], _types()["uniform_dynamic"])


def _type_name(t: int) -> str:
    for name, value in vk.ffi.typeof("VkDescriptorType").relements.items():
        if value == t:
            return name
    return str(t)


class DescriptorSetLayout(vk.Object):
    kind = "VkDescriptorSetLayout"

    def __init__(self, device, info):
        self.device = device
        self.bindings = {}                     # binding -> (type, count)
        for i in range(info.bindingCount):
            b = info.pBindings[i]
            if b.descriptorCount and not buffer_type(b.descriptorType):
                raise VkError(vk.lib.VK_ERROR_FEATURE_NOT_PRESENT,
                              f"binding {b.binding}: descriptor type {_type_name(b.descriptorType)} is not "
                              "supported (jitcoop's driver binds storage and uniform buffers)")
            self.bindings[b.binding] = (b.descriptorType, b.descriptorCount)

    def dynamic_slots(self) -> list:
        """(binding, element) of each dynamic descriptor, in the order dynamic offsets take them."""
        return [(b, e) for b, (t, n) in sorted(self.bindings.items()) if dynamic_type(t) for e in range(n)]


class DescriptorPool(vk.Object):
    kind = "VkDescriptorPool"

    def __init__(self, device, info):
        self.device = device
        self.max_sets = info.maxSets
        self.capacity = {}
        for i in range(info.poolSizeCount):
            s = info.pPoolSizes[i]
            self.capacity[s.type] = self.capacity.get(s.type, 0) + s.descriptorCount
        self.sets = set()

    def used(self) -> dict:
        u = {}
        for s in self.sets:
            for t, n in s.layout.bindings.values():
                u[t] = u.get(t, 0) + n
        return u

    def reset(self):
        for s in list(self.sets):
            s.release()
        self.sets.clear()

    def release(self):
        self.reset()
        super().release()


class DescriptorSet(vk.Object):
    kind = "VkDescriptorSet"

    def __init__(self, device, layout: DescriptorSetLayout, pool=None):
        self.device = device
        self.layout = layout
        self.pool = pool
        self.slots = {b: [None] * n for b, (t, n) in layout.bindings.items()}

    def write(self, binding: int, element: int, buffer: Buffer, offset: int, size: int):
        """Write one buffer descriptor; consecutive elements run on into the next binding."""
        while True:
            if binding not in self.slots:
                raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"descriptor set layout has no binding {binding}")
            if element < len(self.slots[binding]):
                break
            element -= len(self.slots[binding])
            binding += 1
        self.slots[binding][element] = (buffer, offset, size)


def _buffer_info(dset, binding, element, info):
    dset.write(binding, element, vk.get(info.buffer, Buffer, "VkDescriptorBufferInfo"), info.offset, info.range)


def apply_writes(dset_of, count, writes):
    """vkUpdateDescriptorSets' writes; dset_of(write) gives the set (push descriptors: the temporary one)."""
    for i in range(count):
        w = writes[i]
        dset = dset_of(w)
        if not buffer_type(w.descriptorType):
            raise VkError(vk.lib.VK_ERROR_FEATURE_NOT_PRESENT,
                          f"descriptor type {_type_name(w.descriptorType)} is not supported "
                          "(jitcoop's driver binds storage and uniform buffers)")
        for k in range(w.descriptorCount):
            _buffer_info(dset, w.dstBinding, w.dstArrayElement + k, w.pBufferInfo[k])


# -- layouts and pools -----------------------------------------------------------------------------

@command
def vkCreateDescriptorSetLayout(device, info, allocator, p_layout):
    p_layout[0] = DescriptorSetLayout(vk.get(device, Device), info).register().handle


@command
def vkDestroyDescriptorSetLayout(device, layout, allocator):
    obj = vk.get(layout, DescriptorSetLayout, optional=True)
    if obj is not None:
        obj.release()


@command
def vkGetDescriptorSetLayoutSupport(device, info, p_support):
    p_support.supported = int(all(not info.pBindings[i].descriptorCount or buffer_type(info.pBindings[i].descriptorType)
                                  for i in range(info.bindingCount)))


@command
def vkCreateDescriptorPool(device, info, allocator, p_pool):
    p_pool[0] = DescriptorPool(vk.get(device, Device), info).register().handle


@command
def vkDestroyDescriptorPool(device, pool, allocator):
    p = vk.get(pool, DescriptorPool, optional=True)
    if p is not None:
        p.release()


@command
def vkResetDescriptorPool(device, pool, flags):
    vk.get(pool, DescriptorPool).reset()


@command
def vkAllocateDescriptorSets(device, info, p_sets):
    dev = vk.get(device, Device)
    pool = vk.get(info.descriptorPool, DescriptorPool)
    layouts = [vk.get(info.pSetLayouts[i], DescriptorSetLayout) for i in range(info.descriptorSetCount)]
    used = pool.used()
    for lay in layouts:
        for t, n in lay.bindings.values():
            used[t] = used.get(t, 0) + n
    if len(pool.sets) + len(layouts) > pool.max_sets or any(n > pool.capacity.get(t, 0) for t, n in used.items()):
        for i in range(len(layouts)):
            p_sets[i] = vk.ffi.NULL
        return vk.lib.VK_ERROR_OUT_OF_POOL_MEMORY
    for i, lay in enumerate(layouts):
        s = DescriptorSet(dev, lay, pool).register()
        pool.sets.add(s)
        p_sets[i] = s.handle


@command
def vkFreeDescriptorSets(device, pool, count, sets):
    p = vk.get(pool, DescriptorPool)
    for i in range(count):
        s = vk.get(sets[i], DescriptorSet, optional=True)
        if s is not None:
            p.sets.discard(s)
            s.release()


@command
def vkUpdateDescriptorSets(device, write_count, writes, copy_count, copies):
    apply_writes(lambda w: vk.get(w.dstSet, DescriptorSet), write_count, writes)
    for i in range(copy_count):
        c = copies[i]
        src, dst = vk.get(c.srcSet, DescriptorSet), vk.get(c.dstSet, DescriptorSet)
        for k in range(c.descriptorCount):
            d = src.slots[c.srcBinding][c.srcArrayElement + k]
            dst.slots[c.dstBinding][c.dstArrayElement + k] = d


# -- update templates ------------------------------------------------------------------------------

class DescriptorUpdateTemplate(vk.Object):
    kind = "VkDescriptorUpdateTemplate"

    def __init__(self, device, info):
        self.device = device
        self.entries = []            # (binding, element, count, offset, stride)
        for i in range(info.descriptorUpdateEntryCount):
            e = info.pDescriptorUpdateEntries[i]
            if not buffer_type(e.descriptorType):
                raise VkError(vk.lib.VK_ERROR_FEATURE_NOT_PRESENT,
                              f"descriptor type {_type_name(e.descriptorType)} is not supported")
            self.entries.append((e.dstBinding, e.dstArrayElement, e.descriptorCount, e.offset, e.stride))

    def apply(self, dset: DescriptorSet, data):
        base = vk.ffi.cast("char *", data)
        for binding, element, count, offset, stride in self.entries:
            for k in range(count):
                _buffer_info(dset, binding, element + k,
                             vk.ffi.cast("VkDescriptorBufferInfo *", base + offset + k * stride))


@command
def vkCreateDescriptorUpdateTemplate(device, info, allocator, p_template):
    p_template[0] = DescriptorUpdateTemplate(vk.get(device, Device), info).register().handle


@command
def vkDestroyDescriptorUpdateTemplate(device, template, allocator):
    t = vk.get(template, DescriptorUpdateTemplate, optional=True)
    if t is not None:
        t.release()


@command
def vkUpdateDescriptorSetWithTemplate(device, dset, template, data):
    vk.get(template, DescriptorUpdateTemplate).apply(vk.get(dset, DescriptorSet), data)
