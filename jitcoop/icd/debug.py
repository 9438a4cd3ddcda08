"""VK_EXT_debug_utils: messengers, object names and labels, and how the driver reports problems.

A problem (a shader jitcoop cannot run, an out-of-bounds access during a submit, a call with
bad arguments) becomes a message to every messenger of the instance whose severity and type
masks take it: the messengers the application created, and those it chained to
VkInstanceCreateInfo (they hear vkCreateInstance and vkDestroyInstance too). An error nobody
hears goes to stderr, so it is never lost. Messages may come from the queue's worker thread,
as the extension allows.
"""
from __future__ import annotations

import sys

from . import vk
from .vk import command

SEVERITY_INFO, SEVERITY_WARNING, SEVERITY_ERROR = 0x10, 0x100, 0x1000
TYPE_GENERAL, TYPE_VALIDATION = 0x1, 0x2
_SEVERITY_NAME = {SEVERITY_INFO: "info", SEVERITY_WARNING: "warning", SEVERITY_ERROR: "error"}


class Messenger(vk.Object):
    kind = "VkDebugUtilsMessengerEXT"

    def __init__(self, instance, info):
        self.instance = instance
        self.severities = info.messageSeverity
        self.types = info.messageType
        self.callback = info.pfnUserCallback
        self.user_data = info.pUserData


def messengers_of(info_chain_owner, instance) -> list:
    """The messengers chained to a VkInstanceCreateInfo."""
    out = []
    for st, s in vk.chain(info_chain_owner):
        if st == vk.lib.VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT:
            out.append(Messenger(instance, vk.ffi.cast("VkDebugUtilsMessengerCreateInfoEXT *", s)))
    return out


def instance_of(obj):
    """The instance an object belongs to (None for none)."""
    while obj is not None and not hasattr(obj, "messengers"):
        obj = getattr(obj, "instance", None) or getattr(obj, "device", None)
    return obj


def report(owner, severity: int, message: str, objects=(), message_type: int = TYPE_GENERAL,
           message_id: str = "jitcoop") -> bool:
    """Send a message to the messengers of owner's instance; True if one took it."""
    inst = instance_of(owner)
    ms = [m for m in (inst.messengers if inst is not None else [])
          if m.severities & severity and m.types & message_type]
    if not ms:
        return False
    ffi = vk.ffi
    keep = [ffi.new("char[]", message.encode()), ffi.new("char[]", message_id.encode())]
    objs = ffi.new("VkDebugUtilsObjectNameInfoEXT[]", max(1, len(objects)))
    for i, o in enumerate(objects):
        objs[i].sType = vk.lib.VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT
        objs[i].objectType = _object_type(o)
        objs[i].objectHandle = o.id
        if o.name:
            keep.append(ffi.new("char[]", o.name.encode()))
            objs[i].pObjectName = keep[-1]
    data = ffi.new("VkDebugUtilsMessengerCallbackDataEXT *")
    data.sType = vk.lib.VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT
    data.pMessageIdName = keep[1]
    data.pMessage = keep[0]
    data.objectCount = len(objects)
    data.pObjects = objs if objects else ffi.NULL
    for m in ms:
        m.callback(severity, message_type, data, m.user_data)
    return True


def report_error(owner, message: str, details: str | None = None, objects=()):
    """An error: to the messengers, else (and its details always) to stderr."""
    if not report(owner, SEVERITY_ERROR, message, objects, TYPE_VALIDATION if owner is not None else TYPE_GENERAL):
        print(f"jitcoop Vulkan driver: error: {message}", file=sys.stderr, flush=True)
    if details:
        print(details, file=sys.stderr, flush=True)


def warn(owner, message: str, objects=()):
    if not report(owner, SEVERITY_WARNING, message, objects):
        print(f"jitcoop Vulkan driver: warning: {message}", file=sys.stderr, flush=True)


def portability(owner, warning, where: str = "", objects=()):
    """A portability diagnostic (jitcoop.diagnostics.PortabilityWarning) at `where` (the
    pipeline): a WARNING of the VALIDATION type whose message id names the rule; to stderr when
    no messenger takes it."""
    text = f"{where}: {warning}" if where else str(warning)
    if not report(owner, SEVERITY_WARNING, text, objects, TYPE_VALIDATION, f"jitcoop-{warning.rule}"):
        print(f"jitcoop Vulkan driver: warning: {text}", file=sys.stderr, flush=True)


def _object_type(o) -> int:
    name = "VK_OBJECT_TYPE_" + "".join("_" + c if c.isupper() else c.upper()
                                       for c in o.kind[2:]).lstrip("_").replace("_E_X_T", "_EXT")
    return getattr(vk.lib, name, 0)


# -- commands ------------------------------------------------------------------------------------

@command
def vkCreateDebugUtilsMessengerEXT(instance, info, allocator, p_messenger):
    from .instance import Instance
    inst = vk.get(instance, Instance)
    m = Messenger(inst, info).register()
    inst.messengers.append(m)
    p_messenger[0] = m.handle


@command
def vkDestroyDebugUtilsMessengerEXT(instance, messenger, allocator):
    from .instance import Instance
    inst = vk.get(instance, Instance)
    m = vk.get(messenger, Messenger, optional=True)
    if m is not None:
        if m in inst.messengers:
            inst.messengers.remove(m)
        m.release()


@command
def vkSubmitDebugUtilsMessageEXT(instance, severity, types, data):
    from .instance import Instance
    inst = vk.get(instance, Instance)
    for m in inst.messengers:
        if m.severities & severity and m.types & types:
            m.callback(severity, types, data, m.user_data)


@command
def vkSetDebugUtilsObjectNameEXT(device, info):
    obj = vk.find_object(info.objectHandle)
    if obj is not None:
        obj.name = vk.string(info.pObjectName)


@command
def vkSetDebugUtilsObjectTagEXT(device, info):
    pass            # tags carry data for tools; the driver has no use for them


# Labels name regions of queues and command buffers for tools; the driver's messages name the
# objects instead.
@command
def vkQueueBeginDebugUtilsLabelEXT(queue, info):
    pass


@command
def vkQueueEndDebugUtilsLabelEXT(queue):
    pass


@command
def vkQueueInsertDebugUtilsLabelEXT(queue, info):
    pass


@command
def vkCmdBeginDebugUtilsLabelEXT(cmd, info):
    pass


@command
def vkCmdEndDebugUtilsLabelEXT(cmd):
    pass


@command
def vkCmdInsertDebugUtilsLabelEXT(cmd, info):
    pass
