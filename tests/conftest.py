"""Shared test setup: a persistent kernel cache (numba compiles once per shader across runs), the
folder of committed test shaders (GLSL beside its compiled .spv; `shaders/build.sh` rebuilds them)
and a session-wide cache of compiled kernels for the shader tests.

JITCOOP_CACHE_DIR is honoured when the environment sets it; otherwise kernels are cached in the
repository's `.pytest_cache/jitcoop`.
"""
import math
import os
import signal
import zlib
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if not os.environ.get("JITCOOP_CACHE_DIR"):
    os.environ["JITCOOP_CACHE_DIR"] = str(ROOT / ".pytest_cache" / "jitcoop")
# Tests that inspect a kernel's code and metadata (lane groups, invariance, the IR) mean the
# optimized tier's, and a test run starts no background compiles: kernels compile at the
# optimized tier unless a test asks for another (tests/test_tiers.py checks both tiers write the
# same bytes for every test shader, and the "auto" policy's swap).
os.environ.setdefault("JITCOOP_TIER", "optimized")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

SHADERS = Path(__file__).resolve().parent / "shaders"

# The default run keeps one representative of each family of compile-heavy cooperative matrix
# tests: on a cold cache numba compiles every distinct shader, spec value and profile for 10 to 60
# seconds. The rest run with `-m slow`. {module: (families whose first case stays in the default
# run, tests that are all slow)}
_HEAVY = {
    "test_coopmat2_tensor.py": (
        {"test_clamp_modes_2d", "test_undefined_out_of_range_is_an_error"},
        {"test_load_random_layouts", "test_store_random_layouts", "test_store_load_round_trip", "test_extreme_values_2d",
         "test_other_profiles", "test_clamp_mode_is_a_specialization_constant",
         "test_store_with_block_size_is_an_error", "test_out_of_bounds_names_workgroup",
         "test_span_coordinate_plus_offset_wraps_as_int32", "test_plain_load_with_blocks_reads_one_value_per_block",
         "test_constant_clamp_value_and_clip_object", "test_column_major_view_worked_example",
         "test_state_order_rules"}),
    "test_coopmat2_decode.py": (
        {"test_decode_vector_paths", "test_decode_vector_check_names_disagreement"},
        {"test_decode_func", "test_decode_vector_block_not_multiple_of_v", "test_decode_q4_shared_scales",
         "test_decode_vector_through_views", "test_decode_vector_auto_falls_back_to_scalar",
         "test_decode_pointer_stride_follows_spec_constant"}),
    "test_coopmat_qcom.py": (
        {"test_extract_sub_array", "test_extract_sub_array_out_of_range_at_run_time",
         "test_divergent_conversion_names_the_lane", "test_dequant_bad_start_at_run_time",
         "test_qualcomm_profile_table_and_layouts"},
        {"test_construct", "test_extract_round_trip", "test_conv_implicit_im2col", "test_two_layer_network"}),
    "test_coopvec.py": ((), {"test_f16_every_float_interpretation_divergent"}),
    "test_coopmat_views.py": ((), {"test_convert_f32_to_f16_bf16"}),
    "test_coopmat2_apps.py": (
        {"test_q4_gemm_exact", "test_non_memory_instructions"},
        {"test_flash_attention", "test_q4_gemm_unoptimized_and_spirv_opt_agree",
         "test_q4_gemm_profile_counts_decode_calls", "test_mul_mat_id_gather_and_scatter"}),
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    seen = set()
    for it in items:
        first_only, slow = _HEAVY.get(it.path.name, ((), ()))
        fn = getattr(it, "originalname", it.name)
        if fn in slow or (fn in first_only and (it.path.name, fn) in seen):
            it.add_marker(pytest.mark.slow)
        seen.add((it.path.name, fn))


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
OPTIMIZED = ("divergent", "lane_strides", "aggregate_stores", "long_fragments")


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


def sigint_default():
    """preexec_fn of a program a test sends SIGINT: it starts with SIGINT at its default action,
    as from an interactive shell. A test run started as a background job of a non-interactive
    shell ignores SIGINT, and its children would inherit that (SIG_IGN survives exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
