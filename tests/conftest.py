"""Shared test setup: a persistent kernel cache (numba compiles once per shader across runs), the
folder of committed test shaders (GLSL beside its compiled .spv; `shaders/build.sh` rebuilds them)
and a session-wide cache of compiled kernels for the shader tests.

JITCOOP_CACHE_DIR is honoured when the environment sets it; otherwise kernels are cached in the
repository's `.pytest_cache/jitcoop`.
"""
import math
import os
import zlib
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if not os.environ.get("JITCOOP_CACHE_DIR"):
    os.environ["JITCOOP_CACHE_DIR"] = str(ROOT / ".pytest_cache" / "jitcoop")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

SHADERS = Path(__file__).resolve().parent / "shaders"


@pytest.fixture(scope="session")
def shaders():
    return SHADERS


class KernelCache:
    """Devices per subgroup size, loaded modules and compiled kernels, each made once per session:
    `kc("prefix_sum", spec={0: 1}, sg=8)` is the kernel of tests/shaders/prefix_sum.spv."""

    def __init__(self):
        self._devices, self._modules, self._kernels = {}, {}, {}

    def device(self, sg=32):
        import jitcoop
        if sg not in self._devices:
            self._devices[sg] = jitcoop.Device("generic", subgroup_size=sg)
        return self._devices[sg]

    def module(self, name, sg=32):
        if (name, sg) not in self._modules:
            self._modules[name, sg] = self.device(sg).load(SHADERS / f"{name}.spv")
        return self._modules[name, sg]

    def __call__(self, name, spec=None, sg=32, entry="main"):
        key = (name, entry, tuple(sorted((spec or {}).items())), sg)
        if key not in self._kernels:
            self._kernels[key] = self.module(name, sg).kernel(entry, spec=spec or {})
        return self._kernels[key]


@pytest.fixture(scope="session")
def kc():
    return KernelCache()


@pytest.fixture
def rng(request):
    """A numpy generator seeded from the test's id: reproducible, different for every test."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


# -- rebuilding the shaders of tests/shaders/*.comp (tests never need this: the .spv are committed) --
# `python tests/conftest.py [NAME...]` runs `glslang -V --target-env vulkan1.3 X.comp -o X.spv` for
# each top-level shader (tests/shaders/core has its own build.sh) and, for the names in OPTIMIZED,
# also `spirv-opt -O X.spv -o X.opt.spv`. glslang 16 comes from ../shared/tools/get-glslang.
OPTIMIZED = ("divergent",)


def rebuild(names=()):
    import subprocess
    tool = ROOT.parent / "shared" / "tools" / "get-glslang"
    prefix = subprocess.run([str(tool)], check=True, capture_output=True, text=True).stdout
    bin_dir = Path(prefix.strip().splitlines()[-1]) / "bin"
    for comp in sorted(SHADERS.glob("*.comp")):
        if names and comp.stem not in names:
            continue
        spv = comp.with_suffix(".spv")
        subprocess.run([str(bin_dir / "glslang"), "-V", "--target-env", "vulkan1.3", str(comp),
                        "-o", str(spv)], check=True, stdout=subprocess.DEVNULL)
        if comp.stem in OPTIMIZED:
            subprocess.run([str(bin_dir / "spirv-opt"), "-O", str(spv), "-o",
                            str(comp.with_suffix(".opt.spv"))], check=True)


if __name__ == "__main__":
    import sys
    rebuild(sys.argv[1:])


_ARITH_KERNELS = {}


@pytest.fixture(scope="session")
def kernels():
    """`kernels(name)`: the kernel of shaders/arith/<name>.spv, compiled once per session. A
    compile failure is remembered too, so hypothesis does not recompile for every example."""
    import jitcoop
    dev = jitcoop.Device()

    def get(name):
        if name not in _ARITH_KERNELS:
            try:
                _ARITH_KERNELS[name] = dev.load(SHADERS / "arith" / f"{name}.spv").kernel()
            except Exception as e:
                _ARITH_KERNELS[name] = e
        k = _ARITH_KERNELS[name]
        if isinstance(k, Exception):
            raise k
        return k
    return get


def round_exact(q, p=24, emin=-126, emax=127):
    """The exact nonzero value q (Fraction) rounded to nearest-even into the binary format of
    precision p and exponents emin..emax (default float32), as a Python float (inf on overflow).
    Written from IEEE 754 with no float arithmetic on the way: a reference for double rounding."""
    sign = -1.0 if q < 0 else 1.0
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    quantum = max(e, emin) - (p - 1)
    n = round(q / Fraction(2) ** quantum)    # Fraction rounding: half to even
    v = Fraction(n) * Fraction(2) ** quantum
    return sign * (math.inf if v >= Fraction(2) ** (emax + 1) else float(v))
