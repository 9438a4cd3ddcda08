"""Query pools: timestamps (the only query type a compute driver without statistics has).

A timestamp is time.perf_counter_ns() when the command runs (timestampPeriod 1: nanoseconds;
64 valid bits).
"""
from __future__ import annotations

import struct
import time

import numpy as np

from . import vk
from .commands import CommandBuffer
from .device import Device
from .memory import Buffer
from .queue import UINT64_MAX, wait
from .vk import VkError, command

RESULT_64, RESULT_WAIT, RESULT_WITH_AVAILABILITY, RESULT_PARTIAL = 0x1, 0x2, 0x4, 0x8


class QueryPool(vk.Object):
    kind = "VkQueryPool"

    def __init__(self, device, info):
        self.device = device
        if info.queryType != vk.lib.VK_QUERY_TYPE_TIMESTAMP:
            raise VkError(vk.lib.VK_ERROR_FEATURE_NOT_PRESENT,
                          f"query type {info.queryType} is not supported; jitcoop's driver has timestamp queries")
        self.values = [0] * info.queryCount
        self.available = [False] * info.queryCount

    def check(self, first, count, what):
        if first + count > len(self.values):
            raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"{what}: queries [{first}, {first + count}) of a pool of "
                                                   f"{len(self.values)}")

    def reset(self, first, count):
        self.check(first, count, "reset")
        with self.device.cond:
            for q in range(first, first + count):
                self.available[q] = False
                self.values[q] = 0

    def results(self, first, count, stride, flags) -> tuple:
        """(bytes of the results as vkGetQueryPoolResults lays them out, all available?)"""
        fmt = "<Q" if flags & RESULT_64 else "<I"
        size = struct.calcsize(fmt)
        out = bytearray(stride * (count - 1) + size * (2 if flags & RESULT_WITH_AVAILABILITY else 1))
        ready = True
        for i in range(count):
            q = first + i
            avail = self.available[q]
            ready &= avail
            if avail or flags & RESULT_PARTIAL:
                struct.pack_into(fmt, out, i * stride, self.values[q] & (UINT64_MAX if size == 8 else 0xFFFFFFFF))
            if flags & RESULT_WITH_AVAILABILITY:
                struct.pack_into(fmt, out, i * stride + size, int(avail))
        return bytes(out), ready


@command
def vkCreateQueryPool(device, info, allocator, p_pool):
    p_pool[0] = QueryPool(vk.get(device, Device), info).register().handle


@command
def vkDestroyQueryPool(device, pool, allocator):
    p = vk.get(pool, QueryPool, optional=True)
    if p is not None:
        p.release()


@command
def vkResetQueryPool(device, pool, first, count):
    vk.get(pool, QueryPool).reset(first, count)


@command
def vkGetQueryPoolResults(device, pool, first, count, data_size, data, stride, flags):
    p = vk.get(pool, QueryPool)
    p.check(first, count, "vkGetQueryPoolResults")
    if flags & RESULT_WAIT:
        r = wait(p.device, lambda: all(p.available[first:first + count]), UINT64_MAX)
        if r != vk.lib.VK_SUCCESS:
            return r
    out, ready = p.results(first, count, stride, flags)
    if len(out) > data_size:
        raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"vkGetQueryPoolResults: {len(out)} bytes do not fit dataSize {data_size}")
    vk.ffi.memmove(data, out, len(out))
    return vk.lib.VK_SUCCESS if ready else vk.lib.VK_NOT_READY


def _reset(state, pool, first, count):
    pool.reset(first, count)


def _timestamp(state, pool, query):
    with pool.device.cond:
        pool.values[query] = time.perf_counter_ns()
        pool.available[query] = True
        pool.device.cond.notify_all()


def _copy_results(state, pool, first, count, dst, offset, stride, flags):
    if flags & RESULT_WAIT and not all(pool.available[first:first + count]):
        raise VkError(vk.lib.VK_ERROR_UNKNOWN, "vkCmdCopyQueryPoolResults with VK_QUERY_RESULT_WAIT_BIT: "
                                               "a query was never written")
    out, _ = pool.results(first, count, stride, flags)
    dst.view(offset, len(out), "vkCmdCopyQueryPoolResults")[:] = np.frombuffer(out, np.uint8)


def _cb(handle) -> CommandBuffer:
    return vk.get(handle, CommandBuffer)


@command
def vkCmdResetQueryPool(cmd, pool, first, count):
    p = vk.get(pool, QueryPool)
    p.check(first, count, "vkCmdResetQueryPool")
    _cb(cmd).record("vkCmdResetQueryPool", _reset, p, first, count)


@command
def vkCmdWriteTimestamp(cmd, stage, pool, query):
    p = vk.get(pool, QueryPool)
    p.check(query, 1, "vkCmdWriteTimestamp")
    _cb(cmd).record("vkCmdWriteTimestamp", _timestamp, p, query)


@command
def vkCmdWriteTimestamp2(cmd, stage, pool, query):
    p = vk.get(pool, QueryPool)
    p.check(query, 1, "vkCmdWriteTimestamp2")
    _cb(cmd).record("vkCmdWriteTimestamp2", _timestamp, p, query)


@command
def vkCmdCopyQueryPoolResults(cmd, pool, first, count, dst, offset, stride, flags):
    p = vk.get(pool, QueryPool)
    p.check(first, count, "vkCmdCopyQueryPoolResults")
    _cb(cmd).record("vkCmdCopyQueryPoolResults", _copy_results, p, first, count, vk.get(dst, Buffer), offset,
                    stride, flags)
