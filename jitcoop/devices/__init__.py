"""Device profiles: subgroup size and the limits a shader is checked against.

This release has the `generic` profile; the cooperative-matrix work adds profiles measured on
real hardware (lane layouts, property tables).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Profile:
    name: str
    subgroup_size: int
    subgroup_sizes: tuple
    description: str = ""
    max_workgroup_invocations: int = 1024
    extra: dict = field(default_factory=dict)


def _generic(subgroup_size):
    s = 32 if subgroup_size is None else int(subgroup_size)
    sizes = (4, 8, 16, 32, 64, 128)
    if s not in sizes:
        raise ValueError(f"the generic profile takes a subgroup size of {', '.join(map(str, sizes))}; got {s}")
    return Profile("generic", s, sizes, "any size, subgroup size 4 to 128 (default 32)")


PROFILES = {"generic": _generic}


def profile(name: str, subgroup_size=None) -> Profile:
    try:
        make = PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown device profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
    return make(subgroup_size)
