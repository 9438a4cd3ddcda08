"""A complete example of testing compute shaders with jitcoop's pytest plugin.

Run it from this folder (the plugin comes with `pip install jitcoop`):

    pytest test_example_shader.py                                  # generic profile, subgroup 32
    pytest test_example_shader.py --jitcoop-profiles generic,nvidia --jitcoop-subgroup-sizes 16,32

- `jitcoop_device` is a jitcoop.Device; every test that takes it runs once per profile and
  subgroup size of the command line (ids like `test_saxpy[nvidia-sg32]`).
- `@pytest.mark.jitcoop_profiles(...)` runs a test under the profiles it names, whatever the
  command line says: here the cooperative matrix GEMM runs on the H100's lane layouts and on a
  random one (`shuffled`), so a shader that assumed one layout would fail.
- `assert_ulp_close` / `assert_close` (jitcoop.testing) compare with a tolerance and print the
  worst elements when they fail.

Kernels are compiled once per device (module fixtures over the session-scoped device) and
cached on disk, so a second run starts fast.
"""
import zlib
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop.examples import HERE as BUNDLED
from jitcoop.testing import assert_close, assert_ulp_close

SHADERS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def saxpy(jitcoop_device):
    """y = a * x + y (the bundled example; its workgroup size is spec constant 0)."""
    return jitcoop_device.load(BUNDLED / "saxpy.spv").kernel()


@pytest.fixture(scope="module")
def gemm(jitcoop_device):
    """C = A x B with 16 x 16 float16 cooperative matrices, one subgroup per workgroup."""
    return jitcoop_device.load(SHADERS / "gemm_f16.spv").kernel(
        spec={"local_size_x": jitcoop_device.subgroup_size})


@pytest.fixture
def rng(request):
    """Random numbers seeded from the test's id: the same every run, different per test."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.mark.parametrize("n", [1, 64, 1000])
def test_saxpy(saxpy, rng, n):
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    want = np.float32(2.5) * x + y              # float32 arithmetic, as the shader does it
    groups = -(-n // saxpy.local_size[0])
    saxpy(groups, x=x, y=y, push={"a": 2.5, "n": n})
    assert_ulp_close(y, want, max_ulp=0)        # a multiply and an add, each rounded: exact


def test_saxpy_reads_past_the_end_is_an_error(saxpy):
    x = np.ones(64, np.float32)
    y = np.ones(64, np.float32)
    with pytest.raises(jitcoop.ExecutionError, match="workgroup"):
        saxpy(2, x=x, y=y, push={"a": 1.0, "n": 128})
    assert (y == 1).all()                       # a failed dispatch leaves the buffers as they were


@pytest.mark.jitcoop_profiles("generic", "nvidia", "shuffled")
@pytest.mark.parametrize("m, n, k", [(16, 16, 16), (32, 48, 64)])
def test_gemm_f16(gemm, rng, m, n, k):
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    gemm((n // 16, m // 16), a=a, b=b, c=c, push={"M": m, "N": n, "K": k})
    # float16 products are exact in float32; the sums round: a relative tolerance it is
    assert_close(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)
