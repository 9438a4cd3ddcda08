"""Command pools and buffers: recording, and running what was recorded.

Recording appends (command name, function, arguments) to the buffer, capturing what Vulkan
says is captured at record time (push constant values, dynamic offsets, push descriptors,
update data); descriptor sets are read when the command runs. The queue's worker runs the list
with `execute`, which keeps the bound pipeline, descriptor sets and push constants. The kernels a
command buffer dispatches are compiled when it is submitted (`compile_kernels`), on the submitting
thread: a pipeline that cannot be compiled fails that vkQueueSubmit.

A dispatch binds each (set, binding) the shader declares to a numpy view of the buffer's memory
(offset and range from the descriptor, plus its dynamic offset) and calls
`jitcoop.Kernel.dispatch`; results land in the memory directly. Barriers do nothing: commands
run one after the other, each finished before the next starts.
"""
from __future__ import annotations

import numpy as np

import jitcoop
from jitcoop.runtime import faults as runtime_faults

from . import debug, faults, vk
from .debug import report_error
from .descriptors import DescriptorSet, DescriptorUpdateTemplate, apply_writes
from .device import Device
from .memory import WHOLE_SIZE, Buffer
from .pipelines import Pipeline, PipelineError, PipelineLayout
from .properties import MAX_PUSH_CONSTANTS
from .queue import UINT64_MAX, DeviceLost, Event, set_event, wait
from .vk import VkError, command


class CommandPool(vk.Object):
    kind = "VkCommandPool"

    def __init__(self, device):
        self.device = device
        self.buffers = set()

    def release(self):
        for cb in list(self.buffers):
            cb.release()
        super().release()


class CommandBuffer(vk.Object):
    kind = "VkCommandBuffer"
    dispatchable = True

    def __init__(self, device, pool: CommandPool):
        self.device = device
        self.pool = pool
        self.reset()

    def reset(self):
        self.ops: list = []
        self.bound: Pipeline | None = None     # the pipeline bound last, as recorded
        self.kernels: set = set()              # (pipeline, dispatch base) of every dispatch recorded
        self.secondaries: list = []
        self.waits_events = False              # records vkCmdWaitEvents (the host may set them later)

    def record(self, name, fn, *args):
        self.ops.append((name, fn, args))

    def dispatches(self, base=(0, 0, 0)):
        """Note a dispatch of the pipeline bound now (its kernel is compiled at submit)."""
        if self.bound is not None:
            self.kernels.add((self.bound, base))

    def needed_kernels(self) -> set:
        """(pipeline, base) of every dispatch the command buffer and its secondaries record."""
        out = set(self.kernels)
        for sb in self.secondaries:
            out |= sb.needed_kernels()
        return out

    def waits_for_events(self) -> bool:
        return self.waits_events or any(sb.waits_for_events() for sb in self.secondaries)

    def release(self):
        self.pool.buffers.discard(self)
        super().release()


class State:
    """What a running command buffer has bound."""

    def __init__(self, queue):
        self.queue = queue
        self.device = queue.device
        self.pipeline: Pipeline | None = None
        self.sets: dict = {}             # set index -> (DescriptorSet, {(binding, element): dynamic offset})
        self.push = bytearray(MAX_PUSH_CONSTANTS)


def execute(cb: CommandBuffer, queue):
    """Run a command buffer's commands for the queue (queue.Queue._execute: on its worker thread
    or in vkQueueSubmit), from a fresh state: a command buffer inherits nothing."""
    state = State(queue)
    for i, (name, fn, args) in enumerate(cb.ops):
        try:
            fn(state, *args)
        except VkError as e:
            raise DeviceLost(f"{name} (command {i} of {cb.describe()}): {e.message or e}") from None
        except DeviceLost as e:
            if e.args[0] is None:
                raise
            raise DeviceLost(f"{name} (command {i} of {cb.describe()}): {e.args[0]}") from None


def compile_kernels(device, cbs):
    """Compile the kernels the command buffers dispatch, before they are queued (a pipeline
    compiles once per device: later submits find it compiled). A pipeline that cannot be compiled
    (jitcoop cannot, the compile ran past its limit) loses the device here, and vkQueueSubmit
    returns VK_ERROR_DEVICE_LOST, so the failure is the submit's own."""
    device.check_lost()
    for cb in cbs:
        for p, base in cb.needed_kernels():
            try:
                p.kernel() if base == (0, 0, 0) else p.kernel_with_base(base)
            except PipelineError as e:
                message = f"vkQueueSubmit: {cb.describe()}: {e}"
                report_error(device, f"device lost: {message}")
                device.lose(message)
                raise VkError(vk.lib.VK_ERROR_DEVICE_LOST) from None


def _cb(handle) -> CommandBuffer:
    return vk.get(handle, CommandBuffer)


# -- pools and buffers -------------------------------------------------------------------------------

@command
def vkCreateCommandPool(device, info, allocator, p_pool):
    p_pool[0] = CommandPool(vk.get(device, Device)).register().handle


@command
def vkDestroyCommandPool(device, pool, allocator):
    p = vk.get(pool, CommandPool, optional=True)
    if p is not None:
        p.release()


@command
def vkResetCommandPool(device, pool, flags):
    for cb in vk.get(pool, CommandPool).buffers:
        cb.reset()


@command
def vkTrimCommandPool(device, pool, flags):
    vk.get(pool, CommandPool)


@command
def vkAllocateCommandBuffers(device, info, p_buffers):
    dev = vk.get(device, Device)
    pool = vk.get(info.commandPool, CommandPool)
    for i in range(info.commandBufferCount):
        cb = CommandBuffer(dev, pool).register()
        pool.buffers.add(cb)
        p_buffers[i] = cb.handle


@command
def vkFreeCommandBuffers(device, pool, count, buffers):
    for i in range(count):
        cb = vk.get(buffers[i], CommandBuffer, optional=True)
        if cb is not None:
            cb.release()


@command
def vkBeginCommandBuffer(cmd, info):
    _cb(cmd).reset()


@command
def vkEndCommandBuffer(cmd):
    _cb(cmd)


@command
def vkResetCommandBuffer(cmd, flags):
    _cb(cmd).reset()


@command
def vkCmdExecuteCommands(cmd, count, buffers):
    secondaries = [vk.get(buffers[i], CommandBuffer) for i in range(count)]

    def run(state):
        for sb in secondaries:
            execute(sb, state.queue)
    cb = _cb(cmd)
    cb.secondaries += secondaries
    cb.record("vkCmdExecuteCommands", run)


# -- state -----------------------------------------------------------------------------------------

def _bind_pipeline(state, pipeline):
    state.pipeline = pipeline


@command
def vkCmdBindPipeline(cmd, bind_point, pipeline):
    if bind_point == vk.lib.VK_PIPELINE_BIND_POINT_COMPUTE:
        cb = _cb(cmd)
        cb.bound = vk.get(pipeline, Pipeline)
        cb.record("vkCmdBindPipeline", _bind_pipeline, cb.bound)


def _bind_sets(state, first, sets):
    for i, s in enumerate(sets):
        state.sets[first + i] = s


@command
def vkCmdBindDescriptorSets(cmd, bind_point, layout, first, count, sets, dyn_count, dyn_offsets):
    if bind_point != vk.lib.VK_PIPELINE_BIND_POINT_COMPUTE:
        return
    offsets = [dyn_offsets[i] for i in range(dyn_count)]
    bound = []
    for i in range(count):
        ds = vk.get(sets[i], DescriptorSet, "vkCmdBindDescriptorSets", optional=True)
        dyn = {}
        if ds is not None:
            for slot in ds.layout.dynamic_slots():
                if not offsets:
                    raise VkError(vk.lib.VK_ERROR_UNKNOWN, "vkCmdBindDescriptorSets: fewer dynamic offsets than "
                                                           "dynamic descriptors")
                dyn[slot] = offsets.pop(0)
        bound.append((ds, dyn))
    _cb(cmd).record("vkCmdBindDescriptorSets", _bind_sets, first, bound)


def _push_constants(state, offset, data):
    state.push[offset:offset + len(data)] = data


@command
def vkCmdPushConstants(cmd, layout, stages, offset, size, values):
    if offset + size > MAX_PUSH_CONSTANTS:
        raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"push constants [{offset}, {offset + size}) exceed "
                                               f"maxPushConstantsSize ({MAX_PUSH_CONSTANTS})")
    _cb(cmd).record("vkCmdPushConstants", _push_constants, offset, bytes(vk.ffi.buffer(values, size)))


def _push_set(cmd, layout, set_index) -> DescriptorSet:
    lay = vk.get(layout, PipelineLayout)
    if set_index >= len(lay.set_layouts) or lay.set_layouts[set_index] is None:
        raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"the pipeline layout has no set {set_index}")
    return DescriptorSet(_cb(cmd).device, lay.set_layouts[set_index])


@command
def vkCmdPushDescriptorSetKHR(cmd, bind_point, layout, set_index, count, writes):
    ds = _push_set(cmd, layout, set_index)
    apply_writes(lambda w: ds, count, writes)
    if bind_point == vk.lib.VK_PIPELINE_BIND_POINT_COMPUTE:
        _cb(cmd).record("vkCmdPushDescriptorSetKHR", _bind_sets, set_index, [(ds, {})])


@command
def vkCmdPushDescriptorSetWithTemplateKHR(cmd, template, layout, set_index, data):
    ds = _push_set(cmd, layout, set_index)
    vk.get(template, DescriptorUpdateTemplate).apply(ds, data)
    _cb(cmd).record("vkCmdPushDescriptorSetWithTemplateKHR", _bind_sets, set_index, [(ds, {})])


# -- dispatch --------------------------------------------------------------------------------------

def _bindings(state, p: Pipeline) -> dict:
    out = {}
    for s, b in p.bindings:
        ds, dyn = state.sets.get(s, (None, None))
        if ds is None:
            raise DeviceLost(f"{p.describe()} uses (set {s}, binding {b}) but no descriptor set {s} is bound")
        slots = ds.slots.get(b)
        d = slots[0] if slots else None
        if d is None:
            raise DeviceLost(f"{p.describe()} uses (set {s}, binding {b}), which holds no buffer")
        buf, offset, size = d
        out[(s, b)] = buf.view(offset + dyn.get((b, 0), 0), size, f"descriptor (set {s}, binding {b})")
    return out


def dispatch(state, groups, base=(0, 0, 0)):
    p = state.pipeline
    if p is None:
        raise DeviceLost("no compute pipeline is bound")
    if 0 in groups:
        return
    try:
        k = p.kernel() if base == (0, 0, 0) else p.kernel_with_base(base)
    except PipelineError as e:
        raise DeviceLost(str(e)) from None
    cfg = state.device.config
    inject = bool(cfg.faults) and faults.reached(cfg.faults, "worker")
    try:
        with state.device.dispatch_lock:
            bindings = _bindings(state, p)
            if inject:
                runtime_faults.arm_worker()
            k.dispatch(groups, bindings, push=bytes(state.push), threads=cfg.threads, timeout=cfg.timeout,
                       on_diagnostic=lambda w: debug.portability(state.device, w, p.describe(), (p,)))
    except runtime_faults.WorkerFault as e:
        raise DeviceLost(f"{p.describe()} (entry point {p.entry!r}): {e}; the buffers were restored") from None
    except jitcoop.JitcoopError as e:
        raise DeviceLost(f"{p.describe()} (entry point {p.entry!r}), {groups[0]} x {groups[1]} x {groups[2]} "
                         f"workgroups: {type(e).__name__}: {e}") from None
    finally:
        if inject:
            runtime_faults.take_worker()        # disarmed, should the dispatch not have started


@command
def vkCmdDispatch(cmd, x, y, z):
    cb = _cb(cmd)
    if x and y and z:
        cb.dispatches()
    cb.record("vkCmdDispatch", dispatch, (x, y, z))


@command
def vkCmdDispatchBase(cmd, bx, by, bz, x, y, z):
    cb = _cb(cmd)
    if x and y and z:
        cb.dispatches((bx, by, bz))
    cb.record("vkCmdDispatchBase", dispatch, (x, y, z), (bx, by, bz))


def _dispatch_indirect(state, buffer, offset):
    groups = tuple(int(v) for v in buffer.view(offset, 12, "vkCmdDispatchIndirect").view(np.uint32))
    dispatch(state, groups)


@command
def vkCmdDispatchIndirect(cmd, buffer, offset):
    cb = _cb(cmd)
    cb.dispatches()
    cb.record("vkCmdDispatchIndirect", _dispatch_indirect, vk.get(buffer, Buffer), offset)


# -- transfers -------------------------------------------------------------------------------------

def _copy(state, src, dst, regions):
    for s_off, d_off, size in regions:
        dst.view(d_off, size, "copy destination")[:] = src.view(s_off, size, "copy source")


@command
def vkCmdCopyBuffer(cmd, src, dst, count, regions):
    rs = [(regions[i].srcOffset, regions[i].dstOffset, regions[i].size) for i in range(count)]
    _cb(cmd).record("vkCmdCopyBuffer", _copy, vk.get(src, Buffer), vk.get(dst, Buffer), rs)


@command
def vkCmdCopyBuffer2(cmd, info):
    r = info.pRegions
    rs = [(r[i].srcOffset, r[i].dstOffset, r[i].size) for i in range(info.regionCount)]
    _cb(cmd).record("vkCmdCopyBuffer2", _copy, vk.get(info.srcBuffer, Buffer), vk.get(info.dstBuffer, Buffer), rs)


def _fill(state, dst, offset, size, data):
    if size == WHOLE_SIZE:
        size = (dst.size - offset) // 4 * 4
    dst.view(offset, size, "vkCmdFillBuffer").view(np.uint32)[:] = data


@command
def vkCmdFillBuffer(cmd, dst, offset, size, data):
    _cb(cmd).record("vkCmdFillBuffer", _fill, vk.get(dst, Buffer), offset, size, data)


def _update(state, dst, offset, data):
    dst.view(offset, len(data), "vkCmdUpdateBuffer")[:] = np.frombuffer(data, np.uint8)


@command
def vkCmdUpdateBuffer(cmd, dst, offset, size, data):
    _cb(cmd).record("vkCmdUpdateBuffer", _update, vk.get(dst, Buffer), offset, bytes(vk.ffi.buffer(data, size)))


# -- synchronization: commands run in order, so barriers have nothing to do ----------------------------

@command
def vkCmdPipelineBarrier(cmd, *args):
    _cb(cmd)


@command
def vkCmdPipelineBarrier2(cmd, info):
    _cb(cmd)


def _set_event(state, event, value):
    set_event(event, value)


def _wait_events(state, events):
    if wait(state.device, lambda: all(e.set for e in events), UINT64_MAX) != vk.lib.VK_SUCCESS:
        raise DeviceLost(None)


@command
def vkCmdSetEvent(cmd, event, stages):
    _cb(cmd).record("vkCmdSetEvent", _set_event, vk.get(event, Event), True)


@command
def vkCmdSetEvent2(cmd, event, info):
    _cb(cmd).record("vkCmdSetEvent2", _set_event, vk.get(event, Event), True)


@command
def vkCmdResetEvent(cmd, event, stages):
    _cb(cmd).record("vkCmdResetEvent", _set_event, vk.get(event, Event), False)


@command
def vkCmdResetEvent2(cmd, event, stages):
    _cb(cmd).record("vkCmdResetEvent2", _set_event, vk.get(event, Event), False)


@command
def vkCmdWaitEvents(cmd, count, events, *barriers):
    _record_wait(_cb(cmd), "vkCmdWaitEvents", [vk.get(events[i], Event) for i in range(count)])


@command
def vkCmdWaitEvents2(cmd, count, events, infos):
    _record_wait(_cb(cmd), "vkCmdWaitEvents2", [vk.get(events[i], Event) for i in range(count)])


def _record_wait(cb, name, events):
    cb.record(name, _wait_events, events)
    cb.waits_events = True
