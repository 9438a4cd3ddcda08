"""Queues, fences, semaphores and events.

A submission runs in order on its queue: it waits for the batch's semaphores, runs its command
buffers (`commands.execute`), signals its semaphores, then the fence. A submission of copies,
fills and barriers alone (no dispatch), on an idle queue, that waits for nothing not yet
signalled, runs in vkQueueSubmit itself: an application that moves data and waits for it (ggml
submits about 30 times per test case, most of them copies) pays no hand-over to another thread
and back. Every other submission goes to the queue's worker thread and vkQueueSubmit returns once
it is queued, as on a GPU: a dispatch runs while the application goes on (to wait with a
timeout, to exit), and timeline semaphores signalled later by the host or by another queue
(wait-before-signal) and events set by the host work. Before either, it
compiles the kernels the command buffers dispatch that the device has not compiled yet
(commands.compile_kernels): a pipeline that cannot be compiled loses the device and fails that
submit with VK_ERROR_DEVICE_LOST. Every wait, on the host or on the worker, is on the device's one
condition variable; a lost device wakes them all.

A failure while a submission runs (jitcoop's ExecutionError: an out-of-bounds access, a
divergent cooperative instruction, a timeout; or a dispatch whose bindings do not fit) loses the
device: the error goes to the debug messengers naming the command buffer and the pipeline,
waits return VK_ERROR_DEVICE_LOST, and later submissions are refused with it.
"""
from __future__ import annotations

import threading
import time
import traceback
from collections import deque

from . import vk
from .debug import report_error
from .device import Device
from .vk import VkError, command

UINT64_MAX = (1 << 64) - 1
_LONGEST_WAIT = 3600.0                 # seconds per wait() call (threading's limit is far above)


class DeviceLost(Exception):
    """Raised while a submission runs: the message says what failed, where."""


def wait(device: Device, ready, timeout_ns: int) -> int:
    """Wait until ready() (checked under device.cond): VK_SUCCESS, VK_TIMEOUT or VK_ERROR_DEVICE_LOST."""
    deadline = None if timeout_ns == UINT64_MAX else time.monotonic() + timeout_ns / 1e9
    with device.cond:
        while True:
            if device.lost is not None:
                return vk.lib.VK_ERROR_DEVICE_LOST
            if ready():
                return vk.lib.VK_SUCCESS
            left = _LONGEST_WAIT if deadline is None else deadline - time.monotonic()
            if left <= 0:
                return vk.lib.VK_TIMEOUT
            device.cond.wait(min(left, _LONGEST_WAIT))


class Fence(vk.Object):
    kind = "VkFence"

    def __init__(self, device, signaled: bool):
        self.device = device
        self.signaled = signaled
        self.submitted = False          # a submission not yet finished will signal it


class Semaphore(vk.Object):
    kind = "VkSemaphore"

    def __init__(self, device, timeline: bool, initial: int):
        self.device = device
        self.timeline = timeline
        self.value = initial            # timeline: the counter; binary: 1 signalled, 0 not

    def reached(self, value) -> bool:
        return self.value >= value if self.timeline else self.value == 1


class Event(vk.Object):
    kind = "VkEvent"

    def __init__(self, device):
        self.device = device
        self.set = False


class Queue(vk.Object):
    kind = "VkQueue"
    dispatchable = True

    def __init__(self, device: Device, family: int, index: int):
        self.device = device
        self.family, self.index = family, index
        self._pending = deque()
        self._busy = 0                   # submissions not finished
        self._stop = False
        self._thread = None

    def submit(self, batches, fence):
        dev = self.device
        with dev.cond:
            dev.check_lost()
            here = not self._busy and _here(batches)
            self._busy += 1
            if fence is not None:
                fence.submitted = True
            if not here:
                self._pending.append((batches, fence))
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, daemon=True,
                                                    name=f"jitcoop queue {self.family}.{self.index}")
                    self._thread.start()
                dev.cond.notify_all()
        if here:
            self._execute(batches, fence)

    def wait_idle(self):
        wait(self.device, lambda: self._busy == 0, UINT64_MAX)

    def stop(self):
        with self.device.cond:
            self._stop = True
            self.device.cond.notify_all()

    def _run(self):
        dev = self.device
        while True:
            with dev.cond:
                while not self._pending and not self._stop:
                    dev.cond.wait(_LONGEST_WAIT)
                if self._stop:
                    return
                batches, fence = self._pending.popleft()
            self._execute(batches, fence)

    def _execute(self, batches, fence):
        """Run one submission (on the worker, or in vkQueueSubmit: `submit`); a failure loses
        the device."""
        from .commands import execute
        dev = self.device
        try:
            if dev.lost is None:
                for waits, cmdbufs, signals in batches:
                    for sem, value in waits:
                        if wait(dev, lambda: sem.reached(value), UINT64_MAX) != vk.lib.VK_SUCCESS:
                            raise DeviceLost(None)
                        if not sem.timeline:
                            with dev.cond:
                                sem.value = 0
                    for cb in cmdbufs:
                        execute(cb, self)
                    with dev.cond:
                        for sem, value in signals:
                            sem.value = value if sem.timeline else 1
                        dev.cond.notify_all()
                with dev.cond:
                    if fence is not None:
                        fence.signaled = True
        except DeviceLost as e:
            if e.args[0] is not None:
                report_error(dev, f"device lost: {e.args[0]}")
                dev.lose(e.args[0])
        except Exception as e:                 # an internal error: the device cannot go on
            report_error(dev, f"device lost: internal error in jitcoop's Vulkan driver: {e}",
                         traceback.format_exc())
            dev.lose(str(e))
        finally:
            with dev.cond:
                self._busy -= 1
                if fence is not None:
                    fence.submitted = False
                dev.cond.notify_all()


def _here(batches) -> bool:
    """Whether a submission runs in vkQueueSubmit (under dev.cond): it dispatches nothing, so it
    ends soon, every semaphore it waits for is signalled and no command buffer waits for an
    event, so it waits for nothing that happens later."""
    cbs = [cb for _, cbs, _ in batches for cb in cbs]
    return all(sem.reached(value) for waits, _, _ in batches for sem, value in waits) and \
        not any(cb.needed_kernels() or cb.waits_for_events() for cb in cbs)


# -- submission ------------------------------------------------------------------------------------

def _queue(handle) -> Queue:
    return vk.get(handle, Queue)


def _fence(handle):
    return vk.get(handle, Fence, optional=True)


@command
def vkQueueSubmit(queue, count, submits, fence):
    from .commands import CommandBuffer, compile_kernels
    q = _queue(queue)
    batches = []
    for i in range(count):
        s = submits[i]
        tl = vk.find(s, vk.lib.VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, "VkTimelineSemaphoreSubmitInfo")
        waits = [(vk.get(s.pWaitSemaphores[k], Semaphore),
                  tl.pWaitSemaphoreValues[k] if tl is not None and tl.pWaitSemaphoreValues != vk.ffi.NULL else 1)
                 for k in range(s.waitSemaphoreCount)]
        signals = [(vk.get(s.pSignalSemaphores[k], Semaphore),
                    tl.pSignalSemaphoreValues[k] if tl is not None and tl.pSignalSemaphoreValues != vk.ffi.NULL
                    else 1) for k in range(s.signalSemaphoreCount)]
        cbs = [vk.get(s.pCommandBuffers[k], CommandBuffer) for k in range(s.commandBufferCount)]
        batches.append((waits, cbs, signals))
    compile_kernels(q.device, [cb for _, cbs, _ in batches for cb in cbs])
    q.submit(batches, _fence(fence))


@command
def vkQueueSubmit2(queue, count, submits, fence):
    from .commands import CommandBuffer, compile_kernels
    q = _queue(queue)
    batches = []
    for i in range(count):
        s = submits[i]
        waits = [(vk.get(s.pWaitSemaphoreInfos[k].semaphore, Semaphore), s.pWaitSemaphoreInfos[k].value)
                 for k in range(s.waitSemaphoreInfoCount)]
        signals = [(vk.get(s.pSignalSemaphoreInfos[k].semaphore, Semaphore), s.pSignalSemaphoreInfos[k].value)
                   for k in range(s.signalSemaphoreInfoCount)]
        cbs = [vk.get(s.pCommandBufferInfos[k].commandBuffer, CommandBuffer)
               for k in range(s.commandBufferInfoCount)]
        batches.append((waits, cbs, signals))
    compile_kernels(q.device, [cb for _, cbs, _ in batches for cb in cbs])
    q.submit(batches, _fence(fence))


@command
def vkQueueWaitIdle(queue):
    q = _queue(queue)
    q.wait_idle()
    q.device.check_lost()


# -- fences ----------------------------------------------------------------------------------------

@command
def vkCreateFence(device, info, allocator, p_fence):
    dev = vk.get(device, Device)
    p_fence[0] = Fence(dev, bool(info.flags & 0x1)).register().handle     # VK_FENCE_CREATE_SIGNALED_BIT


@command
def vkDestroyFence(device, fence, allocator):
    f = _fence(fence)
    if f is not None:
        f.release()


@command
def vkResetFences(device, count, fences):
    dev = vk.get(device, Device)
    with dev.cond:
        for i in range(count):
            vk.get(fences[i], Fence).signaled = False


# A poll of a fence that a running submission will signal waits for it up to this long. An
# application that waits for a GPU by spinning on vkGetFenceStatus (ggml does, with pause
# instructions between polls) costs a GPU nothing, but here the device is the host's cores: the
# spinning thread takes one from the dispatch (a quarter of the CPU time of ggml's matrix-product
# cases on 2 cores). Waiting on the device's condition sleeps instead and returns as soon as the
# fence is signalled, so a poll adds no latency to the work's end.
_POLL_WAIT_NS = 1_000_000


@command
def vkGetFenceStatus(device, fence):
    f = vk.get(fence, Fence)
    if not f.signaled and f.submitted:
        wait(f.device, lambda: f.signaled or not f.submitted, _POLL_WAIT_NS)
    f.device.check_lost()
    return vk.lib.VK_SUCCESS if f.signaled else vk.lib.VK_NOT_READY


@command
def vkWaitForFences(device, count, fences, wait_all, timeout):
    dev = vk.get(device, Device)
    fs = [vk.get(fences[i], Fence) for i in range(count)]
    test = all if wait_all else any
    return wait(dev, lambda: test(f.signaled for f in fs), timeout)


# -- semaphores ------------------------------------------------------------------------------------

@command
def vkCreateSemaphore(device, info, allocator, p_semaphore):
    dev = vk.get(device, Device)
    t = vk.find(info, vk.lib.VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, "VkSemaphoreTypeCreateInfo")
    timeline = t is not None and t.semaphoreType == vk.lib.VK_SEMAPHORE_TYPE_TIMELINE
    p_semaphore[0] = Semaphore(dev, timeline, t.initialValue if timeline else 0).register().handle


@command
def vkDestroySemaphore(device, semaphore, allocator):
    s = vk.get(semaphore, Semaphore, optional=True)
    if s is not None:
        s.release()


def _timeline(handle) -> Semaphore:
    s = vk.get(handle, Semaphore)
    if not s.timeline:
        raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"{s.describe()} is a binary semaphore, not a timeline one")
    return s


@command
def vkGetSemaphoreCounterValue(device, semaphore, p_value):
    s = _timeline(semaphore)
    s.device.check_lost()
    p_value[0] = s.value


@command
def vkWaitSemaphores(device, info, timeout):
    dev = vk.get(device, Device)
    pairs = [(_timeline(info.pSemaphores[i]), info.pValues[i]) for i in range(info.semaphoreCount)]
    test = any if info.flags & 0x1 else all                           # VK_SEMAPHORE_WAIT_ANY_BIT
    return wait(dev, lambda: test(s.value >= v for s, v in pairs), timeout)


@command
def vkSignalSemaphore(device, info):
    s = _timeline(info.semaphore)
    with s.device.cond:
        s.value = max(s.value, info.value)
        s.device.cond.notify_all()


# -- events ----------------------------------------------------------------------------------------

@command
def vkCreateEvent(device, info, allocator, p_event):
    p_event[0] = Event(vk.get(device, Device)).register().handle


@command
def vkDestroyEvent(device, event, allocator):
    e = vk.get(event, Event, optional=True)
    if e is not None:
        e.release()


@command
def vkGetEventStatus(device, event):
    e = vk.get(event, Event)
    e.device.check_lost()
    return vk.lib.VK_EVENT_SET if e.set else vk.lib.VK_EVENT_RESET


def set_event(e: Event, value: bool):
    with e.device.cond:
        e.set = value
        e.device.cond.notify_all()


@command
def vkSetEvent(device, event):
    set_event(vk.get(event, Event), True)


@command
def vkResetEvent(device, event):
    set_event(vk.get(event, Event), False)
