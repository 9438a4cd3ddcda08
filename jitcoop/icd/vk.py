"""The C side as Python sees it: cffi's `ffi` and `lib`, handles, pNext chains, VkError.

`install(ffi, lib)` is called once by the library's init code; every other module reads `vk.ffi`
and `vk.lib` at call time.

Handles. A dispatchable handle (VkInstance, VkPhysicalDevice, VkDevice, VkQueue,
VkCommandBuffer) points to C memory whose first word belongs to the loader (it writes its
dispatch table there); the driver allocates that word with cffi and finds its Python object by
the address. A non-dispatchable handle is a number from a counter. Both are looked up in one
table; a handle the driver never gave out, or one of the wrong kind, is a VkError, never a crash.
"""
from __future__ import annotations

import itertools

ffi = None
lib = None

ICD_LOADER_MAGIC = 0x01CDC0DE

_objects: dict[int, "Object"] = {}
_next_id = itertools.count(0x100)


def install(ffi_, lib_):
    global ffi, lib
    ffi, lib = ffi_, lib_


COMMANDS: dict = {}


def command(fn):
    """Registers the implementation of the Vulkan command the function is named after."""
    COMMANDS[fn.__name__] = fn
    return fn


class VkError(Exception):
    """A command's failure: `result` is the VkResult it returns; `message`, when given, is
    reported through VK_EXT_debug_utils (or on stderr when nobody listens)."""

    def __init__(self, result: int, message: str | None = None):
        super().__init__(message or f"VkResult {result}")
        self.result = result
        self.message = message


class Object:
    """A Vulkan object. Subclasses set `kind` (the handle's C type name) and `dispatchable`."""
    kind = "uint64_t"
    dispatchable = False
    name = ""                 # vkSetDebugUtilsObjectNameEXT
    id = None                 # the handle's value, once registered

    def register(self):
        if self.dispatchable:
            self._mem = ffi.new("jc_dispatchable *")
            self._mem.loader_data = ICD_LOADER_MAGIC
            self.id = int(ffi.cast("uintptr_t", self._mem))
        else:
            self.id = next(_next_id)
        _objects[self.id] = self
        return self

    @property
    def handle(self):
        return ffi.cast(self.kind, self.id)

    def release(self):
        if self.id is not None:
            _objects.pop(self.id, None)

    def describe(self) -> str:
        return f"{self.kind} {self.id:#x}" + (f" ({self.name!r})" if self.name else "")


def as_int(handle) -> int:
    return int(ffi.cast("uintptr_t", handle))


def get(handle, cls, what: str = "", optional: bool = False):
    """The object behind a handle, checked to be a `cls`."""
    h = as_int(handle)
    if h == 0 and optional:
        return None
    obj = _objects.get(h)
    if not isinstance(obj, cls):
        raise VkError(lib.VK_ERROR_UNKNOWN, f"{what or cls.kind}: {h:#x} is not a valid {cls.kind} handle")
    return obj


def find_object(h: int):
    return _objects.get(h)


def owned_by(device) -> list:
    """The live objects a device created."""
    return [o for o in list(_objects.values()) if getattr(o, "device", None) is device]


# -- structures ------------------------------------------------------------------------------------

_stype_struct: dict[int, str] | None = None


def struct_of(stype: int) -> str | None:
    """The structure type name of an sType value (VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES
    -> VkPhysicalDeviceVulkan12Features): the names agree once underscores are dropped."""
    global _stype_struct
    if _stype_struct is None:
        by_norm = {}
        for name, value in ffi.typeof("VkStructureType").relements.items():
            by_norm.setdefault(name[len("VK_STRUCTURE_TYPE_"):].replace("_", ""), value)
        _stype_struct = {}
        for name in sorted(ffi.list_types()[0], key=len):        # unsuffixed names first
            value = by_norm.get(name[2:].upper()) if name.startswith("Vk") else None
            if value is not None and value not in _stype_struct:
                _stype_struct[value] = name
    return _stype_struct.get(stype)


def chain(p):
    """(sType, pointer) of each structure of a pNext chain, starting with p's own pNext (p: a
    pointer to a structure, or a structure)."""
    if ffi.typeof(p).kind == "struct":
        p = ffi.addressof(p)
    s = ffi.cast("VkBaseOutStructure *", p).pNext if p != ffi.NULL else ffi.NULL
    while s != ffi.NULL:
        yield s.sType, s
        s = s.pNext


def find(p, stype: int, ctype: str):
    """The structure of type `stype` in p's pNext chain, cast to `ctype *`, or None."""
    for st, s in chain(p):
        if st == stype:
            return ffi.cast(ctype + " *", s)
    return None


def string(p) -> str:
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else ""


def strings(count, pp) -> list:
    return [string(pp[i]) for i in range(count)] if count and pp != ffi.NULL else []


def fill(s, values: dict):
    """Set every field of structure `s` (cdata) that `values` names; the rest stay as they are.
    Arrays take sequences; char arrays take str."""
    t = ffi.typeof(s)
    for name, _ in (t.item if t.kind == "pointer" else t).fields:
        if name in values:
            v = values[name]
            setattr(s, name, v.encode() if isinstance(v, str) else v)


def enumerate_out(p_count, p_items, items, write) -> int:
    """The two-call idiom: with no array, the count; else write min(count, len) items with
    write(cdata, item) and return VK_INCOMPLETE when they did not all fit."""
    if p_items == ffi.NULL:
        p_count[0] = len(items)
        return lib.VK_SUCCESS
    n = min(p_count[0], len(items))
    for i in range(n):
        write(p_items[i], items[i])
    p_count[0] = n
    return lib.VK_INCOMPLETE if n < len(items) else lib.VK_SUCCESS
