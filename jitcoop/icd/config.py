"""The driver's settings, from the environment of the application it runs in.

    JITCOOP_ICD_PROFILES   physical devices, one per device profile: "nvidia" (default),
                           "nvidia,generic", "generic:16" (a profile with a subgroup size)
    JITCOOP_ICD_NUMERICS   float MulAdd arithmetic of every pipeline: exact (default), nvidia, float32
    JITCOOP_ICD_THREADS    worker threads per dispatch (default: one per core the process may use)
    JITCOOP_ICD_TIMEOUT    seconds a dispatch may run before it is cancelled and the device is
                           lost (default: no limit)
    JITCOOP_ICD_COMPILE    lazy (default: a pipeline compiles when a dispatch of it is first
                           submitted, and that vkQueueSubmit fails for a shader jitcoop cannot
                           compile) or eager (at vkCreateComputePipelines, which then fails)
    JITCOOP_ICD_COMPILE_TIMEOUT
                           seconds a pipeline's compile may take before it is stopped and fails as a
                           shader jitcoop cannot compile (default: jitcoop's, KernelOptions.compile_timeout)
    JITCOOP_ICD_HEAP       size of the memory heap that allocations are counted against: bytes, or
                           with a K, M or G suffix (default: the host's memory)
    JITCOOP_ICD_FAULTS     faults to inject, for testing (jitcoop.icd.faults): e.g. "alloc:3,worker"
    JITCOOP_ICD_HIDE       device extensions not to offer, comma-separated (an application's paths
                           for other devices: VK_NV_cooperative_matrix2 hidden leaves KHR cooperative
                           matrices; VK_KHR_cooperative_matrix too leaves neither)
    JITCOOP_ICD_STRICT     1: the rules hardware does not enforce (jitcoop.diagnostics) lose the
                           device, as the specification allows; 0 (default): they run as the
                           H100 runs them, each reported once per pipeline and instruction as a
                           debug-utils message of WARNING severity
    JITCOOP_ICD_TIER       compile tier of every pipeline (jitcoop.runtime.tiers): auto (default: the
                           first dispatch runs code compiled fast, a pipeline dispatched again gets
                           optimized code compiled in the background), fast or optimized
    JITCOOP_ICD_DUMP       a folder every compute pipeline is written to as it is created: its SPIR-V
                           and a JSON description, for the Python API (jitcoop.icd.dump)
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .. import devices
from . import faults as faults_


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Config:
    profiles: tuple            # ((name, subgroup size or None), ...)
    numerics: str | None
    threads: int | None
    timeout: float | None
    eager: bool
    compile_timeout: float | None = None
    heap: int | None = None        # bytes; None: the host's memory
    faults: tuple = ()             # jitcoop.icd.faults.Fault
    strict: bool = False
    hidden: tuple = ()         # device extensions not offered
    tier: str | None = None    # None: the kernel options' default (JITCOOP_TIER, else auto)
    dump: str | None = None    # a folder every pipeline is written to (jitcoop.icd.dump)


def _profiles(text: str) -> tuple:
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, _, sg = item.partition(":")
        if name not in devices.PROFILES:
            raise ConfigError(f"JITCOOP_ICD_PROFILES: unknown device profile {name!r}; known: "
                              f"{', '.join(sorted(devices.PROFILES))}")
        try:
            size = int(sg) if sg else None
            devices.profile(name, size)
        except ValueError as e:
            raise ConfigError(f"JITCOOP_ICD_PROFILES: {item!r}: {e}") from None
        out.append((name, size))
    if not out:
        raise ConfigError("JITCOOP_ICD_PROFILES names no device profile")
    return tuple(out)


def _number(name, cast, positive=True):
    v = os.environ.get(name, "").strip()
    if not v:
        return None
    try:
        x = cast(v)
    except ValueError:
        raise ConfigError(f"{name}={v!r} is not a number") from None
    if positive and x <= 0:
        raise ConfigError(f"{name}={v!r} must be positive")
    return x


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _size(name):
    v = os.environ.get(name, "").strip()
    if not v:
        return None
    unit = v[-1:].upper() if v[-1:].upper() in _UNITS else ""
    try:
        n = int(v[:len(v) - len(unit)]) * _UNITS[unit]
    except ValueError:
        n = 0
    if n <= 0:
        raise ConfigError(f"{name}={v!r}: give a positive number of bytes, or with a K, M or G suffix")
    return n


def load() -> Config:
    """The settings now (read at each vkCreateInstance / vkCreateDevice)."""
    from ..options import NUMERICS
    numerics = os.environ.get("JITCOOP_ICD_NUMERICS", "").strip() or None
    if numerics is not None and numerics not in NUMERICS:
        raise ConfigError(f"JITCOOP_ICD_NUMERICS={numerics!r}: use one of {', '.join(NUMERICS)}")
    compile_mode = os.environ.get("JITCOOP_ICD_COMPILE", "lazy").strip() or "lazy"
    if compile_mode not in ("lazy", "eager"):
        raise ConfigError(f"JITCOOP_ICD_COMPILE={compile_mode!r}: use lazy or eager")
    try:
        faults = faults_.parse(os.environ.get("JITCOOP_ICD_FAULTS", ""))
    except faults_.FaultsError as e:
        raise ConfigError(str(e)) from None
    strict = os.environ.get("JITCOOP_ICD_STRICT", "0").strip() or "0"
    if strict not in ("0", "1"):
        raise ConfigError(f"JITCOOP_ICD_STRICT={strict!r}: use 0 or 1")
    from ..options import TIERS
    tier = os.environ.get("JITCOOP_ICD_TIER", "").strip() or None
    if tier is not None and tier not in TIERS:
        raise ConfigError(f"JITCOOP_ICD_TIER={tier!r}: use one of {', '.join(TIERS)}")
    return Config(_profiles(os.environ.get("JITCOOP_ICD_PROFILES", "nvidia")), numerics,
                  _number("JITCOOP_ICD_THREADS", int), _number("JITCOOP_ICD_TIMEOUT", float),
                  compile_mode == "eager", _number("JITCOOP_ICD_COMPILE_TIMEOUT", float),
                  _size("JITCOOP_ICD_HEAP"), faults, strict == "1", _hidden(os.environ.get("JITCOOP_ICD_HIDE", "")),
                  tier, os.environ.get("JITCOOP_ICD_DUMP", "").strip() or None)


def _hidden(text: str) -> tuple:
    from .extensions import DEVICE, PROFILE_DEVICE
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    unknown = sorted(set(names) - set(DEVICE + PROFILE_DEVICE))
    if unknown:
        raise ConfigError(f"JITCOOP_ICD_HIDE: {', '.join(unknown)} is not a device extension jitcoop offers")
    return names
