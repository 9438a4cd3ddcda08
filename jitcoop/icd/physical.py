"""Physical-device queries: properties, features, queues, memory, formats and the cooperative
matrix / vector tables, written from the values of `properties.py`.

A structure of the application's pNext chain is filled when the driver knows its type
(`vk.struct_of`): feature structures member by member from the feature set, property
structures zeroed first and then given every member the property table names. Structures of
extensions the device does not offer are left as they are.

Memory: one heap, the host's RAM (or JITCOOP_ICD_HEAP bytes), flagged device-local (the CPU is
the device), with three types: device-local only, device-local + host-visible + coherent, and the
same + cached, in the order the spec requires (a type whose flags are a subset of another's comes
first). VK_EXT_memory_budget reports the heap's size as its budget and the bytes the devices
have allocated from it as its usage.
"""
from __future__ import annotations

from . import properties, vk
from .instance import PhysicalDevice
from .vk import VkError, command

QUEUE_COUNT = 4
QUEUE_FLAGS = 0x2 | 0x4            # COMPUTE | TRANSFER

MEMORY_TYPES = (0x1, 0x1 | 0x2 | 0x4, 0x1 | 0x2 | 0x4 | 0x8)   # DEVICE_LOCAL, HOST_VISIBLE, _COHERENT, _CACHED
HEAP_FLAGS = 0x1                                               # VK_MEMORY_HEAP_DEVICE_LOCAL_BIT


def _pd(handle) -> PhysicalDevice:
    return vk.get(handle, PhysicalDevice)


def _fill_properties(s, name, pd):
    """Zero a property structure (keeping sType and pNext) and set what the table names."""
    ffi = vk.ffi
    t = ffi.typeof(name)
    ptr = ffi.cast(name + " *", s)
    stype, pnext = ptr.sType, ptr.pNext
    ffi.memmove(ptr, b"\0" * ffi.sizeof(t), ffi.sizeof(t))
    ptr.sType, ptr.pNext = stype, pnext
    vk.fill(ptr, pd.properties)


def _fill_core_properties(p, pd):
    ffi = vk.ffi
    ffi.memmove(ffi.addressof(p), b"\0" * ffi.sizeof(p), ffi.sizeof(p))
    vk.fill(ffi.addressof(p), pd.properties)
    vk.fill(ffi.addressof(p.limits), pd.limits)


def _fill_features(ptr, pd):
    t = vk.ffi.typeof(ptr).item
    for field, _ in t.fields:
        if field not in ("sType", "pNext"):
            setattr(ptr, field, 1 if pd.features.get(field) else 0)


@command
def vkGetPhysicalDeviceProperties(physical_device, p_props):
    _fill_core_properties(p_props[0], _pd(physical_device))


@command
def vkGetPhysicalDeviceProperties2(physical_device, p_props):
    pd = _pd(physical_device)
    _fill_core_properties(p_props.properties, pd)
    for st, s in vk.chain(p_props):
        name = vk.struct_of(st)
        if name is not None and "Properties" in name:
            _fill_properties(s, name, pd)


@command
def vkGetPhysicalDeviceFeatures(physical_device, p_features):
    _fill_features(p_features, _pd(physical_device))


@command
def vkGetPhysicalDeviceFeatures2(physical_device, p_features):
    pd = _pd(physical_device)
    _fill_features(vk.ffi.addressof(p_features.features), pd)
    for st, s in vk.chain(p_features):
        name = vk.struct_of(st)
        if name is not None and "Features" in name:
            _fill_features(vk.ffi.cast(name + " *", s), pd)


def _queue_family(q):
    q.queueFlags = QUEUE_FLAGS
    q.queueCount = QUEUE_COUNT
    q.timestampValidBits = 64
    q.minImageTransferGranularity.width = q.minImageTransferGranularity.height = 1
    q.minImageTransferGranularity.depth = 1


@command
def vkGetPhysicalDeviceQueueFamilyProperties(physical_device, p_count, p_props):
    _pd(physical_device)
    return vk.enumerate_out(p_count, p_props, [0], lambda q, _: _queue_family(q))


@command
def vkGetPhysicalDeviceQueueFamilyProperties2(physical_device, p_count, p_props):
    _pd(physical_device)
    return vk.enumerate_out(p_count, p_props, [0], lambda q, _: _queue_family(q.queueFamilyProperties))


def _memory_properties(m, pd):
    m.memoryTypeCount = len(MEMORY_TYPES)
    for i, flags in enumerate(MEMORY_TYPES):
        m.memoryTypes[i].propertyFlags = flags
        m.memoryTypes[i].heapIndex = 0
    m.memoryHeapCount = 1
    m.memoryHeaps[0].size = pd.heap.size
    m.memoryHeaps[0].flags = HEAP_FLAGS


@command
def vkGetPhysicalDeviceMemoryProperties(physical_device, p_props):
    _memory_properties(p_props, _pd(physical_device))


@command
def vkGetPhysicalDeviceMemoryProperties2(physical_device, p_props):
    pd = _pd(physical_device)
    _memory_properties(vk.ffi.addressof(p_props.memoryProperties), pd)
    budget = vk.find(p_props, vk.lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT,
                     "VkPhysicalDeviceMemoryBudgetPropertiesEXT")
    if budget is not None:               # VK_EXT_memory_budget: the heap's size, and what is allocated
        for i in range(len(budget.heapBudget)):
            budget.heapBudget[i] = budget.heapUsage[i] = 0
        budget.heapBudget[0], budget.heapUsage[0] = pd.heap.size, pd.heap.used


# -- formats and images: a compute driver supports none ---------------------------------------------

def _zero(p, ctype):
    vk.ffi.memmove(p, b"\0" * vk.ffi.sizeof(ctype), vk.ffi.sizeof(ctype))


@command
def vkGetPhysicalDeviceFormatProperties(physical_device, fmt, p_props):
    _pd(physical_device)
    _zero(p_props, "VkFormatProperties")


@command
def vkGetPhysicalDeviceFormatProperties2(physical_device, fmt, p_props):
    _pd(physical_device)
    _zero(vk.ffi.addressof(p_props.formatProperties), "VkFormatProperties")
    p3 = vk.find(p_props, vk.lib.VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_3, "VkFormatProperties3")
    if p3 is not None:
        p3.linearTilingFeatures = p3.optimalTilingFeatures = p3.bufferFeatures = 0


@command
def vkGetPhysicalDeviceImageFormatProperties(physical_device, *args):
    _pd(physical_device)
    return vk.lib.VK_ERROR_FORMAT_NOT_SUPPORTED


@command
def vkGetPhysicalDeviceImageFormatProperties2(physical_device, info, p_props):
    _pd(physical_device)
    return vk.lib.VK_ERROR_FORMAT_NOT_SUPPORTED


@command
def vkGetPhysicalDeviceSparseImageFormatProperties(physical_device, fmt, image_type, samples, usage, tiling,
                                                   p_count, p_props):
    p_count[0] = 0


@command
def vkGetPhysicalDeviceSparseImageFormatProperties2(physical_device, info, p_count, p_props):
    p_count[0] = 0


@command
def vkGetPhysicalDeviceExternalBufferProperties(physical_device, info, p_props):
    _zero(vk.ffi.addressof(p_props.externalMemoryProperties), "VkExternalMemoryProperties")


@command
def vkGetPhysicalDeviceExternalFenceProperties(physical_device, info, p_props):
    p_props.exportFromImportedHandleTypes = p_props.compatibleHandleTypes = 0
    p_props.externalFenceFeatures = 0


@command
def vkGetPhysicalDeviceExternalSemaphoreProperties(physical_device, info, p_props):
    p_props.exportFromImportedHandleTypes = p_props.compatibleHandleTypes = 0
    p_props.externalSemaphoreFeatures = 0


@command
def vkGetPhysicalDeviceToolProperties(physical_device, p_count, p_props):
    _pd(physical_device)
    p_count[0] = 0


# -- extensions and layers ---------------------------------------------------------------------------

@command
def vkEnumerateDeviceExtensionProperties(physical_device, layer_name, p_count, p_props):
    from .instance import _extension_properties
    pd = _pd(physical_device)
    if layer_name != vk.ffi.NULL:
        raise VkError(vk.lib.VK_ERROR_LAYER_NOT_PRESENT)
    return _extension_properties(p_count, p_props, pd.extensions)


@command
def vkEnumerateDeviceLayerProperties(physical_device, p_count, p_props):
    p_count[0] = 0


# -- cooperative matrices and vectors ----------------------------------------------------------------

C = properties.COMPONENT


@command
def vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(physical_device, p_count, p_props):
    pd = _pd(physical_device)

    def write(o, row):
        m, n, k, a, b, c, r, sat, scope = row
        o.MSize, o.NSize, o.KSize = m, n, k
        o.AType, o.BType, o.CType, o.ResultType = C[a], C[b], C[c], C[r]
        o.saturatingAccumulation, o.scope = int(sat), scope
    return vk.enumerate_out(p_count, p_props, properties.coopmat_table(pd.profile), write)


@command
def vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV(physical_device, p_count, p_props):
    pd = _pd(physical_device)

    def write(o, row):
        m, n, k, a, b, c, r, sat, scope, wg = row
        o.MGranularity, o.NGranularity, o.KGranularity = m, n, k
        o.AType, o.BType, o.CType, o.ResultType = C[a], C[b], C[c], C[r]
        o.saturatingAccumulation, o.scope, o.workgroupInvocations = int(sat), scope, wg
    return vk.enumerate_out(p_count, p_props, properties.flexible_table(pd.profile), write)


@command
def vkGetPhysicalDeviceCooperativeVectorPropertiesNV(physical_device, p_count, p_props):
    pd = _pd(physical_device)

    def write(o, row):
        inp, ii, mi, bi, res, tr = row
        o.inputType, o.inputInterpretation, o.matrixInterpretation = C[inp], C[ii], C[mi]
        o.biasInterpretation, o.resultType, o.transpose = C[bi], C[res], int(tr)
    return vk.enumerate_out(p_count, p_props, properties.coopvec_table(pd.profile), write)
