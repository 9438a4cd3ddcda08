"""The benchmark style corpus (benchmarks/corpus.py, benchmarks/shaders/corpus/) stays correct:
each shader at a small size (M = N = K = 128; Q4_0: 64 tokens; attention: 8 heads of 128
queries and keys) against numpy's float64 reference with the tolerance corpus.py states, so the
corpus cannot silently break. Kernels are compiled with the options the benchmarks use (the
disk cache serves both). The default run keeps the issue's named shapes on the generic profile
(the plain GEMM at 16x16x16 and 8x8x8, the arrays / uvec4 / column-major / alpha-beta GEMM, the
workgroup GEMM with matrices in arrays);
every other shader, and all on the nvidia profile, run with `-m slow`."""
import sys
from pathlib import Path

import pytest

import jitcoop

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import corpus  # noqa: E402

SIZE = 128
# wg_arrays: a column-major workgroup-scope load (codegen/matrix_loads.py's table path, its
# gather a loop over a constant table); fn_helper: a helper function's inout array of matrices
# (analysis/sroa.py split_copies); global_acc: matrices in global variables (analysis/private.py);
# sg_tensor: tensor loads of small tiles, moved on the generated affine plan (codegen/tensor_plans.py);
# f16acc: float16 accumulators rounded as they are scattered; fp8: E4M3 loads in generated code
DEFAULT = {"plain_16", "plain_8", "arrays_uvec4", "wg_arrays", "fn_helper", "global_acc", "sg_tensor",
           "f16acc", "fp8"}


def _cases():
    for s in corpus.STYLES:
        for profile in ("generic", "nvidia"):
            if profile == "nvidia" and not s.nvidia:
                continue
            slow = profile != "generic" or s.name not in DEFAULT
            yield pytest.param(s, profile, id=f"{s.name}-{profile}", marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize("style,profile", list(_cases()))
def test_corpus_shader_matches_numpy(style, profile):
    p = style.problem(SIZE)
    dev = jitcoop.Device(profile)
    k = dev.load(style.spv).kernel(spec=style.spec(dev.subgroup_size), numerics="exact")
    k.dispatch(p.grid, p.bindings, push=p.push)
    p.check()


def test_corpus_lists_every_shader():
    """Every .spv in the corpus folder is a benchmarked style and every style's .spv exists."""
    on_disk = {f.stem for f in corpus.CORPUS.glob("*.spv")}
    assert on_disk == set(corpus.BY_NAME)


def test_nvidia_profile_refuses_8x8x8():
    """plain_8 is left out on the nvidia profile because the H100's tables lack 8x8x8: the
    profile says so at kernel()."""
    s = corpus.BY_NAME["plain_8"]
    with pytest.raises(jitcoop.SpirvError, match="no 8 x 8"):
        jitcoop.Device("nvidia").load(s.spv).kernel(spec=s.spec(32), numerics="exact")
