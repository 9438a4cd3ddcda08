"""Cooperative vectors: a 3-layer MLP per invocation (64 -> 64 -> 64 -> 16, float16 weights and
activations, ReLU) for 2^18 invocations, against the same network in numpy (float32 batched
matmuls) in the same run. The shader is benchmarks/shaders/mlp_coopvec.comp (glslang -V
--target-env vulkan1.3 mlp_coopvec.comp -o mlp_coopvec.spv)."""
import numpy as np
import pytest

import jitcoop
from conftest import SHADERS, best_of

N = 1 << 18


@pytest.mark.parametrize("numerics", ["exact", "nvidia"])
def test_mlp_coopvec_2_18(benchmark, report, numerics):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, 64)).astype(np.float16)
    w1, w2 = [(rng.standard_normal((64, 64)) / 8).astype(np.float16) for _ in range(2)]
    w3 = (rng.standard_normal((16, 64)) / 8).astype(np.float16)
    b1, b2, b3 = [(rng.standard_normal(m) / 4).astype(np.float16) for m in (64, 64, 16)]
    net = np.concatenate([w1.ravel(), w2.ravel(), w3.ravel(), b1, b2, b3]).view(np.uint8)
    out = np.zeros((N, 16), np.float16)
    k = jitcoop.Device().load(SHADERS / "mlp_coopvec.spv").kernel(spec={0: 256}, numerics=numerics)
    run = lambda: k.dispatch((N // 256, 1, 1), {0: x, 1: net, 2: out})
    run()
    # float16 activations: each layer's float64 result rounded once to float16
    h = np.maximum((x.astype(np.float64) @ w1.T.astype(np.float64) + b1).astype(np.float16), 0)
    g = np.maximum((h.astype(np.float64) @ w2.T.astype(np.float64) + b2).astype(np.float16), 0)
    ref = (g.astype(np.float64) @ w3.T.astype(np.float64) + b3).astype(np.float16)
    if numerics == "exact":
        np.testing.assert_array_equal(out, ref)
    else:
        assert np.max(np.abs(out.astype(np.float32) - ref)) < 0.05
    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    t_jc = benchmark.stats.stats.min
    xf = x.astype(np.float32)
    wf = [a.astype(np.float32) for a in (w1, w2, w3, b1, b2, b3)]

    def numpy_net():
        a = np.maximum(xf @ wf[0].T + wf[3], 0)
        a = np.maximum(a @ wf[1].T + wf[4], 0)
        return a @ wf[2].T + wf[5]
    t_np = best_of(numpy_net, 5)
    flop = 2 * N * (64 * 64 + 64 * 64 + 64 * 16)
    benchmark.extra_info.update(seconds=t_jc, numpy_seconds=t_np, ratio_to_numpy=t_np / t_jc,
                                gflops=flop / t_jc / 1e9)
    report(f"MLP 64-64-64-16 f16 x 2^18 ({numerics}): jitcoop {t_jc * 1e3:.0f} ms "
           f"({flop / t_jc / 1e9:.1f} GFLOP/s), numpy float32 {t_np * 1e3:.0f} ms, "
           f"numpy/jitcoop {t_np / t_jc:.2f} (jitcoop takes {t_jc / t_np:.2f}x numpy's time)")
