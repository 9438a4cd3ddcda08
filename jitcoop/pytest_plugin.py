"""The jitcoop pytest plugin (installed with the package: the `pytest11` entry point).

- Fixture `jitcoop_device`: a `jitcoop.Device`, one per device profile and subgroup size chosen on
  the command line (`--jitcoop-profiles generic,nvidia --jitcoop-subgroup-sizes 16,32`; default:
  the generic profile at its default size); a test that takes it runs once per device, with ids
  such as `test_x[nvidia-sg32]`. A size a profile does not have is left out for that profile.
  Devices are session-scoped, so module fixtures can compile kernels once per device.
- Marker `@pytest.mark.jitcoop_profiles("generic", "nvidia", "shuffled")`: the test's
  `jitcoop_device` runs under each profile named (every profile when none is), whatever the
  command line says: a layout-dependence check as a test (`shuffled` gives every matrix type a
  random lane layout).
- Comparisons with tolerances that print the worst elements: `jitcoop.testing.assert_ulp_close`
  and `assert_close`.

examples/pytest/test_example_shader.py is a complete example.
"""
from __future__ import annotations

import pytest

from . import devices

MARKER = "jitcoop_profiles"


def pytest_addoption(parser):
    g = parser.getgroup("jitcoop", "jitcoop: SPIR-V shaders on the CPU")
    g.addoption("--jitcoop-profiles", default="generic", metavar="A,B,...",
                help=f"device profiles the jitcoop_device fixture runs under (default: generic; known: "
                     f"{', '.join(devices.PROFILES)})")
    g.addoption("--jitcoop-subgroup-sizes", default="", metavar="N,M,...",
                help="subgroup sizes for jitcoop_device (default: each profile's own); a size a "
                     "profile lacks is skipped for it")


def pytest_configure(config):
    config.addinivalue_line("markers", f"{MARKER}(*names): run the test's jitcoop_device under each "
                                       "named device profile (every profile when none is named)")


def _names(text: str, what: str) -> list[str]:
    out = [x.strip() for x in text.split(",") if x.strip()]
    if not out:
        raise pytest.UsageError(f"{what} needs at least one value")
    return out


def _devices(profiles, sizes) -> list[tuple]:
    """(profile, subgroup size) pairs: each profile at each size it has (its default when no
    sizes are given)."""
    out = []
    for name in profiles:
        try:
            prof = devices.profile(name)
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None
        for s in sizes or [prof.subgroup_size]:
            if s in prof.subgroup_sizes:
                out.append((name, s))
    if not out:
        raise pytest.UsageError(f"no device profile among {', '.join(profiles)} has a subgroup size "
                                f"in {', '.join(map(str, sizes))}")
    return out


def pytest_generate_tests(metafunc):
    if "jitcoop_device" not in metafunc.fixturenames:
        return
    opt = metafunc.config.getoption
    mark = metafunc.definition.get_closest_marker(MARKER)
    if mark is not None:
        profiles = list(mark.args) or list(devices.PROFILES)
    else:
        profiles = _names(opt("--jitcoop-profiles"), "--jitcoop-profiles")
    sizes_text = opt("--jitcoop-subgroup-sizes")
    try:
        sizes = [int(x) for x in _names(sizes_text, "--jitcoop-subgroup-sizes")] if sizes_text else []
    except ValueError:
        raise pytest.UsageError(f"--jitcoop-subgroup-sizes takes integers, not {sizes_text!r}") from None
    pairs = _devices(profiles, sizes)
    metafunc.parametrize("jitcoop_device", pairs, ids=[f"{n}-sg{s}" for n, s in pairs],
                         indirect=True, scope="session")


@pytest.fixture(scope="session")
def jitcoop_device(request):
    """A jitcoop.Device for one (profile, subgroup size) of the command line or the marker."""
    import jitcoop
    name, size = request.param
    return jitcoop.Device(name, subgroup_size=size)
