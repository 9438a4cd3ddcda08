"""The VkCooperativeVectorPropertiesNV rows of each device profile (devices/coopvec.py says what
they mean), apart from the conversions: the Vulkan driver lists them when an application
enumerates the device's extensions, long before anything needs numpy."""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=None)
def _load_table(name):
    from . import _data
    rows, on = [], False
    for line in _data(name).splitlines():
        if line.startswith("VkCooperativeVectorPropertiesNV"):
            on = True
            continue
        if on:
            if not line.startswith(" "):
                break
            f = line.split()
            if f[0] == "input":
                continue
            rows.append((f[0], f[1], f[2], f[3], f[4], f[5] == "1"))
    return tuple(rows)       # cached: callers share it


def coopvec_properties(profile_name: str):
    """The VkCooperativeVectorPropertiesNV rows of a profile, or None: every combination."""
    if profile_name == "nvidia":
        return _load_table("props-h100.txt")
    return None
