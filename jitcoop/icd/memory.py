"""Device memory and buffers.

A VkDeviceMemory is a numpy byte array in host memory, aligned to 256 bytes; mapping returns
its address, so every memory type is host-coherent in fact. A VkBuffer is a range of one, and
a descriptor a range of a buffer: a dispatch binds numpy views of the memory, which the shader
reads and writes in place.

Buffer device addresses come from jitcoop's address space: memory allocated with
VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT is placed in it whole (`jitcoop.Device.buffer`), so the
address of a buffer is its memory's address plus its offset, and every access a shader makes
through a pointer is checked against the memory the application allocated. Memory without the
flag is placed there when an address is first asked of it.

Allocations are counted against the physical device's heap (the host's memory, or
JITCOOP_ICD_HEAP bytes): one that does not fit returns VK_ERROR_OUT_OF_DEVICE_MEMORY before
any memory is taken, and the application goes on (freeing memory makes room again).
"""
from __future__ import annotations

import numpy as np

from . import faults, properties, vk
from .device import Device
from .physical import MEMORY_TYPES
from .vk import VkError, command

ALIGNMENT = properties.MIN_ALIGNMENT
WHOLE_SIZE = (1 << 64) - 1
ALLOCATE_DEVICE_ADDRESS = 0x2
HOST_VISIBLE = 0x2


class DeviceMemory(vk.Object):
    kind = "VkDeviceMemory"
    _heap = None               # the heap its bytes are counted in, until released

    def __init__(self, device: Device, info):
        self.device = device
        size, index = info.allocationSize, info.memoryTypeIndex
        if index >= len(MEMORY_TYPES):
            raise VkError(vk.lib.VK_ERROR_OUT_OF_DEVICE_MEMORY, f"memory type {index} does not exist")
        cfg = device.config
        if cfg.faults and faults.reached(cfg.faults, "alloc"):
            raise VkError(vk.lib.VK_ERROR_OUT_OF_DEVICE_MEMORY,
                          f"{size} bytes: {faults.message('alloc')}")
        heap = device.physical.heap
        if not heap.take(size):
            raise VkError(vk.lib.VK_ERROR_OUT_OF_DEVICE_MEMORY,
                          f"{size} bytes: the heap of {heap.size} bytes has "
                          f"{heap.size - heap.used} left")
        try:
            raw = np.zeros(size + ALIGNMENT, np.uint8)
        except MemoryError:
            heap.give(size)
            raise VkError(vk.lib.VK_ERROR_OUT_OF_DEVICE_MEMORY, f"cannot allocate {size} bytes") from None
        self._heap = heap
        start = -raw.ctypes.data % ALIGNMENT
        self.array = raw[start:start + size]
        self.size = size
        self.host_visible = bool(MEMORY_TYPES[index] & HOST_VISIBLE)
        self._in_address_space = None
        flags = vk.find(info, vk.lib.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO, "VkMemoryAllocateFlagsInfo")
        if flags is not None and flags.flags & ALLOCATE_DEVICE_ADDRESS:
            self.address()

    def has_address(self) -> bool:
        return self._in_address_space is not None

    def address(self) -> int:
        """The device address of the memory's first byte."""
        if self._in_address_space is None:
            self._in_address_space = self.device.jdev().buffer(self.array)
        return self._in_address_space.address

    def release(self):
        self._in_address_space = None          # the address space holds buffers weakly
        if self._heap is not None:
            self._heap.give(self.size)
            self._heap = None
        super().release()


class Buffer(vk.Object):
    kind = "VkBuffer"

    def __init__(self, device: Device, info):
        self.device = device
        self.size = info.size
        self.usage = info.usage
        self.memory: DeviceMemory | None = None
        self.offset = 0

    def view(self, offset: int, size: int, what: str) -> np.ndarray:
        """Bytes [offset, offset + size) of the buffer (size WHOLE_SIZE: to its end), checked."""
        if self.memory is None:
            raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"{what}: {self.describe()} has no memory bound")
        if size == WHOLE_SIZE:
            size = self.size - offset
        if offset + size > self.size:
            raise VkError(vk.lib.VK_ERROR_UNKNOWN,
                          f"{what}: bytes [{offset}, {offset + size}) lie outside {self.describe()} of "
                          f"{self.size} bytes")
        start = self.offset + offset
        return self.memory.array[start:start + size]


def memory_at(device: Device, address: int, size: int, what: str) -> np.ndarray:
    """The bytes [address, address + size) of one of the device's memory objects."""
    for m in vk.owned_by(device):
        if isinstance(m, DeviceMemory) and m.has_address():
            start = address - m.address()
            if 0 <= start and start + size <= m.size:
                return m.array[start:start + size]
    raise VkError(vk.lib.VK_ERROR_UNKNOWN,
                  f"{what}: device address {address:#x} (+{size} bytes) is not inside memory the device allocated "
                  "with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT")


def _round(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def _requirements(r, size):
    r.size = _round(max(size, 1))
    r.alignment = ALIGNMENT
    r.memoryTypeBits = (1 << len(MEMORY_TYPES)) - 1


def _dedicated(reqs):
    d = vk.find(reqs, vk.lib.VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS, "VkMemoryDedicatedRequirements")
    if d is not None:
        d.prefersDedicatedAllocation = d.requiresDedicatedAllocation = 0


# -- memory ----------------------------------------------------------------------------------------

@command
def vkAllocateMemory(device, info, allocator, p_memory):
    dev = vk.get(device, Device)
    p_memory[0] = DeviceMemory(dev, info).register().handle


@command
def vkFreeMemory(device, memory, allocator):
    m = vk.get(memory, DeviceMemory, optional=True)
    if m is not None:
        m.release()


@command
def vkMapMemory(device, memory, offset, size, flags, pp_data):
    m = vk.get(memory, DeviceMemory)
    if not m.host_visible:
        raise VkError(vk.lib.VK_ERROR_MEMORY_MAP_FAILED, f"{m.describe()} is not host-visible")
    if offset > m.size:
        raise VkError(vk.lib.VK_ERROR_MEMORY_MAP_FAILED, f"offset {offset} is past the end of {m.describe()}")
    pp_data[0] = vk.ffi.cast("void *", m.array.ctypes.data + offset)


@command
def vkUnmapMemory(device, memory):
    vk.get(memory, DeviceMemory)


@command
def vkFlushMappedMemoryRanges(device, count, ranges):
    pass            # the device reads host memory directly


@command
def vkInvalidateMappedMemoryRanges(device, count, ranges):
    pass


@command
def vkGetDeviceMemoryCommitment(device, memory, p_bytes):
    p_bytes[0] = vk.get(memory, DeviceMemory).size


@command
def vkGetDeviceMemoryOpaqueCaptureAddress(device, info):
    return 0        # no capture and replay of addresses


# -- buffers ---------------------------------------------------------------------------------------

@command
def vkCreateBuffer(device, info, allocator, p_buffer):
    dev = vk.get(device, Device)
    p_buffer[0] = Buffer(dev, info).register().handle


@command
def vkDestroyBuffer(device, buffer, allocator):
    b = vk.get(buffer, Buffer, optional=True)
    if b is not None:
        b.release()


@command
def vkGetBufferMemoryRequirements(device, buffer, p_reqs):
    _requirements(p_reqs, vk.get(buffer, Buffer).size)


@command
def vkGetBufferMemoryRequirements2(device, info, p_reqs):
    _requirements(p_reqs.memoryRequirements, vk.get(info.buffer, Buffer).size)
    _dedicated(p_reqs)


@command
def vkGetDeviceBufferMemoryRequirements(device, info, p_reqs):
    _requirements(p_reqs.memoryRequirements, info.pCreateInfo.size)
    _dedicated(p_reqs)


def _bind(buffer, memory, offset):
    b, m = vk.get(buffer, Buffer), vk.get(memory, DeviceMemory)
    if offset % ALIGNMENT or offset + b.size > m.size:
        raise VkError(vk.lib.VK_ERROR_UNKNOWN,
                      f"binding {b.describe()} ({b.size} bytes) at offset {offset} of {m.describe()} "
                      f"({m.size} bytes): the offset must be a multiple of {ALIGNMENT} and the buffer fit")
    b.memory, b.offset = m, offset


@command
def vkBindBufferMemory(device, buffer, memory, offset):
    _bind(buffer, memory, offset)


@command
def vkBindBufferMemory2(device, count, infos):
    for i in range(count):
        _bind(infos[i].buffer, infos[i].memory, infos[i].memoryOffset)


@command
def vkGetBufferDeviceAddress(device, info):
    b = vk.get(info.buffer, Buffer)
    if b.memory is None:
        raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"{b.describe()} has no memory bound")
    return b.memory.address() + b.offset


@command
def vkGetBufferOpaqueCaptureAddress(device, info):
    return 0
