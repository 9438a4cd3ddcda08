"""The driver's settings, from the environment of the application it runs in.

    JITCOOP_ICD_PROFILES   physical devices, one per device profile: "nvidia" (default),
                           "nvidia,generic", "generic:16" (a profile with a subgroup size)
    JITCOOP_ICD_NUMERICS   float MulAdd arithmetic of every pipeline: exact (default), nvidia, float32
    JITCOOP_ICD_THREADS    worker threads per dispatch (default: every core)
    JITCOOP_ICD_TIMEOUT    seconds a dispatch may run before it is cancelled and the device is
                           lost (default: no limit)
    JITCOOP_ICD_COMPILE    lazy (default: a pipeline compiles at its first dispatch) or eager (at
                           vkCreateComputePipelines, which then fails for a shader jitcoop cannot run)
    JITCOOP_ICD_TIER       compile tier of every pipeline (jitcoop.runtime.tiers): auto (default: the
                           first dispatch runs code compiled fast, a pipeline dispatched again gets
                           optimized code compiled in the background), fast or optimized
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .. import devices


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Config:
    profiles: tuple            # ((name, subgroup size or None), ...)
    numerics: str | None
    threads: int | None
    timeout: float | None
    eager: bool
    tier: str | None = None    # None: the kernel options' default (JITCOOP_TIER, else auto)


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


def load() -> Config:
    """The settings now (read at each vkCreateInstance / vkCreateDevice)."""
    from ..options import NUMERICS
    numerics = os.environ.get("JITCOOP_ICD_NUMERICS", "").strip() or None
    if numerics is not None and numerics not in NUMERICS:
        raise ConfigError(f"JITCOOP_ICD_NUMERICS={numerics!r}: use one of {', '.join(NUMERICS)}")
    compile_mode = os.environ.get("JITCOOP_ICD_COMPILE", "lazy").strip() or "lazy"
    if compile_mode not in ("lazy", "eager"):
        raise ConfigError(f"JITCOOP_ICD_COMPILE={compile_mode!r}: use lazy or eager")
    from ..options import TIERS
    tier = os.environ.get("JITCOOP_ICD_TIER", "").strip() or None
    if tier is not None and tier not in TIERS:
        raise ConfigError(f"JITCOOP_ICD_TIER={tier!r}: use one of {', '.join(TIERS)}")
    return Config(_profiles(os.environ.get("JITCOOP_ICD_PROFILES", "nvidia")), numerics,
                  _number("JITCOOP_ICD_THREADS", int), _number("JITCOOP_ICD_TIMEOUT", float),
                  compile_mode == "eager", tier)
