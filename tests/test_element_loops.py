"""Element-wise instructions on long fragments (codegen/element_loops.py): past LONG_FRAGMENT
components per invocation an instruction that computes each component from the same component
of its operands runs as a loop over them, and loads and stores of such matrices in Function
variables too; shorter fragments are written out as before.

long_fragments.comp (as glslang wrote it and after spirv-opt -O) against numpy written from its
GLSL, bit for bit (each float32 operation rounds once, in numpy as in the shader): 64 x 64 and
32 x 32 workgroup matrices held by 1, 4, 32 and 64 invocations, so 4096, 1024, 256 and 64
components (loops) and 32 (the limit: written out), and 64 written out with
`element_loops=False`. The shader covers the float and integer
arithmetic, a matrix times a scalar, conversions to float16 and back and to integers, splat
constants and a splat of a push constant, a phi that starts at a splat, and a matrix variable
indexed per component then loaded and stored whole."""
import struct
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop.codegen.element_loops import LONG_FRAGMENT

SHADERS = Path(__file__).resolve().parent / "shaders"     # (benchmarks import this module)

SCALE, STEPS = np.float32(0.75), 5


def expected(a, b):
    """The shader's ten results (eight float, two int matrices), from its GLSL."""
    f = np.float32
    acc = np.zeros_like(a)
    for _ in range(STEPS):
        acc = acc * f(0.5) + a
    v = b * f(2) + f(1)
    q = np.trunc(a * f(8)).astype(np.int32)
    floats = [a + b, a - b * SCALE, (a * b) / (b + f(3)), -a, a.astype(np.float16).astype(f), acc, v,
              SCALE - v]
    ints = [q, q * 3 - q + np.trunc(b).astype(np.int32)]
    return floats, ints


_KERNELS = {}


def _kernel(module, wg, n, loops=True):
    key = (module, wg, n, loops)
    if key not in _KERNELS:
        _KERNELS[key] = jitcoop.Device().load(SHADERS / module).kernel(spec={0: wg, 1: n}, element_loops=loops)
    return _KERNELS[key]


@pytest.mark.parametrize("module", ["long_fragments.spv", "long_fragments.opt.spv"])
@pytest.mark.parametrize("wg,n,loops", [(1, 64, True), (1, 32, True), (4, 32, True), (64, 64, True),
                                        (32, 32, True), (16, 32, False)],
                         ids=["4096", "1024", "256", "64", "32", "64-written-out"])
def test_long_fragments_match_numpy(module, wg, n, loops, rng):
    a = rng.uniform(-4, 4, (n, n)).astype(np.float32)
    b = rng.uniform(0, 1, (n, n)).astype(np.float32)
    o = np.full(8 * n * n, np.nan, np.float32)
    oi = np.full(2 * n * n, -1, np.int32)
    _kernel(module, wg, n, loops).dispatch((1, 1, 1), {0: a, 1: b, 2: o, 3: oi},
                                           push=struct.pack("<fi", SCALE, STEPS))
    floats, ints = expected(a, b)
    for i, want in enumerate(floats):
        np.testing.assert_array_equal(o.reshape(8, n, n)[i], want, err_msg=f"float result {i}")
    for i, want in enumerate(ints):
        np.testing.assert_array_equal(oi.reshape(2, n, n)[i], want, err_msg=f"int result {i}")


def _kernel_lines(src):
    body = src[src.index('define i64 @"kernel'):]
    return body[:body.index("\n}\n")].count("\n")


def test_long_fragments_are_loops():
    """At 4096 components the kernel is shorter than one fragment (written out, each of the
    shader's dozen element-wise instructions is three lines or more per component); at 32
    components, the limit, no instruction loops."""
    assert LONG_FRAGMENT == 32 * 32 // 32
    assert _kernel_lines(_kernel("long_fragments.spv", 1, 64).source) < 64 * 64
    assert "elem.done" not in _kernel("long_fragments.spv", 32, 32).source
    assert "elem.done" in _kernel("long_fragments.spv", 16, 32).source
    assert "elem.done" not in _kernel("long_fragments.spv", 16, 32, loops=False).source


def test_the_option_takes_a_bool():
    with pytest.raises(jitcoop.BindingError, match="element_loops='no': give True or False"):
        jitcoop.Device().load(SHADERS / "long_fragments.spv").kernel(element_loops="no")
