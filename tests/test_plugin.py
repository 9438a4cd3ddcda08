"""The pytest plugin (jitcoop.pytest_plugin, installed as a pytest11 entry point) and the comparison
helpers of jitcoop.testing.

The example test file (examples/pytest/test_example_shader.py) runs in a pytester session as a
user would run it; the fixture's parametrization is checked from collected test ids; the ULP
helper against hand-worked spacings of float32, float16, bfloat16 and float8."""
import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from jitcoop import devices
from jitcoop.testing import assert_close, assert_ulp_close, ulp_error

pytest_plugins = ["pytester"]
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pytest"

PROBE = """
import pytest

def test_probe(jitcoop_device):
    print("DEVICE", jitcoop_device.profile.name, jitcoop_device.subgroup_size)

@pytest.mark.jitcoop_profiles()
def test_every_profile(jitcoop_device):
    pass

@pytest.mark.jitcoop_profiles("nvidia", "shuffled")
def test_two(jitcoop_device):
    pass
"""


def _ids(result, name):
    return [line.split("[", 1)[1].rstrip("]") for line in result.outlines
            if line.startswith(f"test_probe.py::{name}[")]


def test_example_file_runs_as_a_user_runs_it(pytester):
    for f in ("test_example_shader.py", "gemm_f16.spv"):
        shutil.copy(EXAMPLE / f, pytester.path / f)
    result = pytester.runpytest("-v", "-p", "no:randomly")
    result.assert_outcomes(passed=10)
    result.stdout.fnmatch_lines(["*test_saxpy[[]generic-sg32-1000[]] PASSED*",
                                 "*test_gemm_f16[[]nvidia-sg32-16-16-16[]] PASSED*",
                                 "*test_gemm_f16[[]shuffled-sg32-32-48-64[]] PASSED*"])


def test_profiles_and_sizes_from_the_command_line(pytester):
    pytester.makepyfile(test_probe=PROBE)
    r = pytester.runpytest("--collect-only", "-q", "--jitcoop-profiles", "generic,nvidia,amd-rdna3",
                           "--jitcoop-subgroup-sizes", "16,32")
    # nvidia has only 32, amd-rdna3 32 and 64: a size a profile lacks is left out for it
    assert _ids(r, "test_probe") == ["generic-sg16", "generic-sg32", "nvidia-sg32", "amd-rdna3-sg32"]
    # the marker overrides the profiles, not the sizes
    assert _ids(r, "test_two") == ["nvidia-sg32", "shuffled-sg16", "shuffled-sg32"]


def test_defaults_and_the_every_profile_marker(pytester):
    pytester.makepyfile(test_probe=PROBE)
    r = pytester.runpytest("--collect-only", "-q")
    assert _ids(r, "test_probe") == ["generic-sg32"]
    want = [f"{n}-sg{devices.profile(n).subgroup_size}" for n in devices.PROFILES]
    assert _ids(r, "test_every_profile") == want and len(want) == 6
    r = pytester.runpytest("-s", "test_probe.py::test_probe", "--jitcoop-profiles", "lavapipe")
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["*DEVICE lavapipe 8*"])


@pytest.mark.parametrize("args, message", [
    (("--jitcoop-profiles", "gneric"), "unknown device profile 'gneric'"),
    (("--jitcoop-profiles", "nvidia", "--jitcoop-subgroup-sizes", "8"),
     "no device profile among nvidia has a subgroup size in 8"),
    (("--jitcoop-subgroup-sizes", "x"), "--jitcoop-subgroup-sizes takes integers, not 'x'"),
])
def test_bad_options_are_usage_errors(pytester, args, message):
    pytester.makepyfile(test_probe=PROBE)
    r = pytester.runpytest("--collect-only", "-q", *args)
    assert r.ret != 0
    assert message in "\n".join(r.outlines + r.errlines)


# -- comparisons -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype, actual, expected, ulps", [
    (np.float32, np.nextafter(np.float32(1), np.float32(2)), 1.0, 1.0),
    (np.float32, np.float32(1.0), 1.0 + 2.0 ** -24, 0.5),            # float64 reference: half an ulp
    (np.float32, np.float32(-3.0), -3.0 - 2 * 2.0 ** -22, 2.0),       # spacing 2^-22 in [2, 4)
    (np.float16, np.float16(1.0), 1.0 + 2 * 2.0 ** -10, 2.0),         # 10 mantissa bits
    (np.float16, np.float16(2.0 ** -24), 0.0, 1.0),                   # smallest subnormal
    (np.float16, np.float16(3 * 2.0 ** -24), 2.0 ** -24, 2.0),        # subnormal spacing 2^-24
    (ml_dtypes.bfloat16, 1.0078125, 1.0, 1.0),                        # 7 mantissa bits
    (ml_dtypes.float8_e4m3fn, 1.125, 1.0, 1.0),                       # 3 mantissa bits
    (ml_dtypes.float8_e5m2, 0.75, 1.0, 1.0),                          # counted at 1 (spacing 0.25), not 0.75
    (np.float32, np.float32(np.inf), np.inf, 0.0),
    (np.float32, np.float32(np.nan), np.nan, 0.0),
    (np.float32, np.float32(np.nan), 1.0, np.inf),
    (np.float32, np.float32(np.inf), 3.0e38, np.inf),
])
def test_ulp_error_hand_worked(dtype, actual, expected, ulps):
    a = np.array([actual], dtype=dtype)
    assert ulp_error(a, np.array([expected]))[0] == ulps


def test_assert_ulp_close_names_the_worst_elements():
    want = np.linspace(1, 2, 12, dtype=np.float32).reshape(3, 4)
    got = want.copy()
    one = np.float32(2.0 ** -23)                          # an ulp in [1, 2)
    got[0, 1] += 2 * one
    got[2, 3] -= 10 * one                                 # counted at 2.0, in [2, 4): spacing 2^-22
    got[1, 0] += one
    assert_ulp_close(got, want, max_ulp=5)
    with pytest.raises(AssertionError) as e:
        assert_ulp_close(got, want, max_ulp=1)
    lines = str(e.value).splitlines()
    assert lines[0] == "2 of 12 elements differ by more than 1 ulp (float32); worst:"
    assert lines[1].startswith("  [2, 3]: actual 1.9999988079071045, expected 2.0, 5 ulp")
    assert lines[2].startswith("  [0, 1]: actual ") and lines[2].endswith(", 2 ulp")


def test_assert_close_relative_and_absolute():
    want = np.array([1.0, 100.0, 0.0, np.nan])
    assert_close(np.array([1.0 + 1e-7, 100.0001, 1e-9, np.nan]), want, rtol=1e-6, atol=1e-8)
    with pytest.raises(AssertionError) as e:
        assert_close(np.array([1.1, 100.0, 0.5, 1.0]), want, rtol=1e-3)
    text = str(e.value)
    assert text.startswith("3 of 4 elements differ by more than atol=0.0 + rtol=0.001 * |expected|; worst:")
    # 1.0 against NaN is worst; then 0.5 against 0 with no atol (no tolerance at all), then 1.1
    lines = text.splitlines()
    assert lines[1].startswith("  [3]: actual 1.0, expected nan") and lines[2].startswith("  [2]: actual 0.5, ")
    assert "[0]: actual 1.1, expected 1.0, abs error 0.1, rel error 0.1" in text
    with pytest.raises(AssertionError, match=r"shapes differ: actual \(2,\), expected \(3,\)"):
        assert_close(np.zeros(2), np.zeros(3))
