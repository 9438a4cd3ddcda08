"""jitcoop's Vulkan driver: unmodified Vulkan applications run their compute work on jitcoop.

The Vulkan loader finds the driver through its manifest (`manifest_path()`, printed by
`jitcoop icd`): `VK_DRIVER_FILES=$(jitcoop icd --path) ./app`. The library the manifest names,
libjitcoop_vulkan.so, is built by `pip install` (cffi's embedding mode, `_build.py`); it starts
Python inside the application at the first Vulkan call and runs every command in the modules
of this package. docs/guide/vulkan-driver.md says what it offers.
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "jitcoop_icd.json"
LIBRARY = HERE / "libjitcoop_vulkan.so"
INCLUDE = HERE / "include"          # the Vulkan headers the driver was built with (Khronos, 1.4)


class NotBuilt(RuntimeError):
    pass


def manifest_path() -> Path:
    """The driver's JSON manifest, for VK_DRIVER_FILES (raises NotBuilt without the library)."""
    if not LIBRARY.exists():
        raise NotBuilt(f"the Vulkan driver library {LIBRARY} was not built: pip install jitcoop (or "
                       "`pip install -e .`) builds it and needs a C compiler and Python's shared library; "
                       "`pip install -v` shows why it failed")
    return MANIFEST
