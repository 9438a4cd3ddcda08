"""The style corpus (issue 18): matrix shaders written the ways real code writes them, with what
one dispatch of each needs at a given size: inputs, grid, push constants, the numpy reference it
is checked against (float64, with a stated tolerance) and numpy's own version of the same work,
timed as the peer. Used by benchmarks/test_bench_styles.py and tests/test_bench_shaders.py.

The shaders are benchmarks/shaders/corpus/*.comp beside their .spv (benchmarks/shaders/build.sh
rebuilds them). Subgroup-scope shaders take their workgroup size from specialization constant 0
(a multiple of the subgroup size), so the same SPIR-V runs with 32-wide subgroups (jitcoop's
generic and nvidia profiles) and 8-wide ones (lavapipe).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import ml_dtypes
import numpy as np

CORPUS = Path(__file__).resolve().parent / "shaders" / "corpus"

# Every size is a multiple of this (the largest tile: the 128 x 128 workgroup GEMMs).
GRANULE = 128


@dataclass
class Problem:
    """One dispatch of a corpus shader at one size, and how to judge its result."""
    grid: tuple
    bindings: dict            # binding -> ndarray; the result's array starts zeroed
    out: int                  # the binding that holds the result
    push: bytes
    flop: int
    reference: np.ndarray     # float64, the result's shape
    rtol: float
    atol: float
    peer: Callable[[], object]    # numpy doing the same computation in float32
    peer_what: str

    def check(self, result=None):
        got = self.bindings[self.out] if result is None else result
        np.testing.assert_allclose(np.asarray(got, np.float64).reshape(self.reference.shape),
                                   self.reference, rtol=self.rtol, atol=self.atol)

    def fresh_output(self):
        """The result's array zeroed again (a check after a second runner must not pass on the
        first runner's values)."""
        self.bindings[self.out][...] = 0


@dataclass(frozen=True)
class Style:
    name: str                 # shaders/corpus/<name>.spv
    scope: str                # "subgroup" or "workgroup"
    kind: str                 # "gemm", "q4" or "attention": what numpy's peer computes
    what: str                 # the style, in a few words
    build: Callable[[int], Problem]
    per_subgroup: int = 0     # > 0: specialization constant 0 = this many subgroups' invocations
    lavapipe: bool = False    # runs on Mesa lavapipe 26.1 (KHR, subgroup scope, 8x8x8 granules)
    nvidia: bool = True       # the H100's tables have its matrix sizes and types

    @property
    def spv(self) -> Path:
        return CORPUS / f"{self.name}.spv"

    def spec(self, subgroup_size: int) -> dict:
        return {0: self.per_subgroup * subgroup_size} if self.per_subgroup else {}

    def problem(self, size: int) -> Problem:
        if size % GRANULE:
            raise ValueError(f"corpus sizes are multiples of {GRANULE}, not {size}")
        return self.build(size)


def _f16(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float16)


def _gemm(tile, a_col=False, b_col=False, out16=False, epilogue=None, c_col=False, acc16=False,
          fp8=False):
    """A GEMM shader's problem at M = N = K = size: A (M x K) and B (K x N) float16 (E4M3 with
    fp8), stored
    transposed where the shader reads them column-major; the result C (M x N) float32 or float16,
    stored transposed where the shader writes it column-major (c_col), summed in float16
    accumulators (acc16: K x K-step roundings);
    epilogue "alpha_beta" (D = 1.5 AB - 0.5 C, C a binding before D) or "bias_silu" (D =
    silu(AB + bias[col]), bias a binding before D). The grid covers C in tile x tile blocks (or
    rows x columns blocks for a (rows, columns) tile)."""
    tm, tn = tile if isinstance(tile, tuple) else (tile, tile)

    def build(n):
        rng = np.random.default_rng(n)
        if fp8:
            a, b = (rng.standard_normal((n, n)).astype(ml_dtypes.float8_e4m3fn) for _ in range(2))
        else:
            a, b = _f16(rng, (n, n)), _f16(rng, (n, n))
        exact = a.astype(np.float64) @ b.astype(np.float64)
        bindings = {0: a.T.copy() if a_col else a, 1: b.T.copy() if b_col else b}
        push = struct.pack("<3I", n, n, n)
        if epilogue == "alpha_beta":
            c = rng.standard_normal((n, n)).astype(np.float32)
            bindings[2] = c
            push += struct.pack("<2f", 1.5, -0.5)
            ref = 1.5 * exact - 0.5 * c.astype(np.float64)
        elif epilogue == "bias_silu":
            bias = rng.standard_normal(n).astype(np.float32)
            bindings[2] = bias
            y = exact + bias.astype(np.float64)
            ref = y / (1 + np.exp(-y))
        else:
            ref = exact
        out = len(bindings)
        bindings[out] = np.zeros((n, n), np.float16 if out16 else np.float32)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        # float32 results: each K chunk's sum is rounded into a float32 accumulator, so within a
        # few float32 ulps of the largest partial sum; float16 results: one float16 rounding more.
        atol = 1e-4 * np.abs(ref).max()
        if acc16:
            # float16 accumulators: each of the n / 16 roundings is off by at most half a float16
            # ulp of the partial sum, which sum |a| |b| bounds
            atol = n / 16 * 2.0 ** -11 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))).max()
        return Problem(grid=(n // tn, n // tm), bindings=bindings, out=out, push=push,
                       flop=2 * n ** 3, reference=ref.T.copy() if c_col else ref, rtol=2.0 ** -10 if out16 else 0.0,
                       atol=atol, peer=lambda: a32 @ b32,
                       peer_what="numpy float32 matmul")
    return build


def q4_dequant(blocks):
    """Q4_0 as the shader's comment defines it, in float16 arithmetic as the shader does it:
    (q - 8) * d, rows of blocks to rows of values."""
    q, d = blocks["qs"], blocks["d"]
    vals = np.concatenate([q & 15, q >> 4], axis=-1).astype(np.float16) - np.float16(8)
    return (vals * d[..., None]).reshape(blocks.shape[0], -1)


def _q4_n64(n):
    """The token-generation shape: M = K = size weights in Q4_0, N = 64 activation rows."""
    m, tokens, k = n, 64, n
    rng = np.random.default_rng(n)
    blocks = np.zeros((m, k // 32), dtype=[("d", "<f2"), ("qs", "u1", 16)])
    blocks["d"] = (rng.random(blocks.shape) * 0.1 + 0.01).astype(np.float16)
    blocks["qs"] = rng.integers(0, 256, (*blocks.shape, 16), dtype=np.uint8)
    x = _f16(rng, (tokens, k), 0.5)
    ref = x.astype(np.float64) @ q4_dequant(blocks).astype(np.float64).T
    x32 = x.astype(np.float32)
    return Problem(grid=(m // 64, tokens // 64), bindings={0: blocks, 1: x, 2: np.zeros((tokens, m), np.float32)},
                   out=2, push=struct.pack("<3I", m, tokens, k), flop=2 * m * tokens * k,
                   reference=ref, rtol=0.0, atol=1e-4 * np.abs(ref).max(),
                   peer=lambda: x32 @ q4_dequant(blocks).astype(np.float32).T,
                   peer_what="numpy Q4_0 dequantize + float32 matmul")


HEADS, HEAD_DIM = 8, 64


def attention(q, k, v, scale):
    """softmax(scale q k^T) v per head, in the inputs' float type (float64 for the reference)."""
    s = q @ k.transpose(0, 2, 1) * scale
    s -= s.max(-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(-1, keepdims=True)
    return s @ v


def _flash_attn(n):
    """HEADS heads of n queries over n keys, head dimension HEAD_DIM."""
    rng = np.random.default_rng(n)
    q, k, v = (_f16(rng, (HEADS, n, HEAD_DIM)) for _ in range(3))
    scale = HEAD_DIM ** -0.5
    ref = attention(*(t.astype(np.float64) for t in (q, k, v)), scale)
    q32, k32, v32 = (t.astype(np.float32) for t in (q, k, v))
    # P is rounded to float16 before P x V: a relative error of about 2**-11 per term
    return Problem(grid=(n // 64, HEADS), bindings={0: q, 1: k, 2: v, 3: np.zeros((HEADS, n, HEAD_DIM), np.float32)},
                   out=3, push=struct.pack("<2If", n, n, scale), flop=4 * HEADS * n * n * HEAD_DIM,
                   reference=ref, rtol=0.0, atol=2e-3 * np.abs(ref).max(),
                   peer=lambda: attention(q32, k32, v32, np.float32(scale)),
                   peer_what="numpy float32 attention")


STYLES = [
    Style("plain_16", "subgroup", "gemm", "acc[2][2], ma[2], mb[2] in loops; row-major loads from storage; 16x16x16",
          _gemm(32), per_subgroup=1, lavapipe=True),
    Style("plain_16_O", "subgroup", "gemm", "plain_16 through spirv-opt -O",
          _gemm(32), per_subgroup=1, lavapipe=True),
    Style("plain_8", "subgroup", "gemm", "plain_16 at 8x8x8 (lavapipe's size; not on the H100)",
          _gemm(16), per_subgroup=1, lavapipe=True, nvidia=False),
    Style("arrays_uvec4", "subgroup", "gemm", "arrays in loops; A staged through uvec4 shared; B column-major; alpha/beta with C",
          _gemm(64, b_col=True, epilogue="alpha_beta"), per_subgroup=4, lavapipe=True),
    Style("unrolled_u32", "subgroup", "gemm", "unrolled; A column-major; B staged through u32 shared; f16 result",
          _gemm(64, a_col=True, out16=True), per_subgroup=4, lavapipe=True),
    Style("bias_act", "subgroup", "gemm", "arrays in loops; B staged through f16 shared; bias + SiLU per-element op",
          _gemm(64, epilogue="bias_silu"), per_subgroup=4, lavapipe=True),
    Style("fn_helper", "subgroup", "gemm", "the K step a helper function taking acc[2][2] inout (copied in and out); 16x16x16",
          _gemm(32), per_subgroup=1),
    Style("global_acc", "subgroup", "gemm", "acc[2][2], ma[2], mb[2] as global variables used by helper functions; 16x16x16",
          _gemm(32), per_subgroup=1),
    Style("struct_acc", "subgroup", "gemm", "acc[2][2] in a struct, walked by loops; 16x16x16",
          _gemm(32), per_subgroup=1),
    Style("row_1x4", "subgroup", "gemm", "four named accumulators in a row (16x64), K unrolled by hand; B column-major",
          _gemm((16, 64), b_col=True), per_subgroup=1),
    Style("dbuf", "subgroup", "gemm", "A and B double-buffered through f16 shared; 4 subgroups, acc[2][2] each",
          _gemm(64), per_subgroup=4),
    Style("sg_tensor", "subgroup", "gemm", "coopmat2 tensor loads and stores at subgroup scope: acc[2][2], ma[2], mb[2] in loops; 16x16x16",
          _gemm(32), per_subgroup=1),
    Style("guarded", "subgroup", "gemm", "every load, MulAdd and store under an edge guard (operands carried over when one fails); C column-major",
          _gemm(32, c_col=True), per_subgroup=1),
    Style("f16acc", "subgroup", "gemm", "plain_16 with float16 accumulators (each K step's sum rounded to float16)",
          _gemm(32, out16=True, acc16=True), per_subgroup=1),
    Style("fp8", "subgroup", "gemm", "plain_16's loops in 8-bit floats: E4M3 A and B, 16x16x32 MulAdds, f32 result (not on the H100)",
          _gemm(32, fp8=True), per_subgroup=1, nvidia=False),
    Style("wg_arrays", "workgroup", "gemm", "KHR loads, acc[2][2] of 64x64 in loops; A column-major; B staged through f16 shared",
          _gemm(128, a_col=True)),
    Style("wg_direct", "workgroup", "gemm", "KHR loads straight from storage, one 128x128 accumulator, K steps of 32",
          _gemm(128)),
    Style("wg_tensor", "workgroup", "gemm", "tensor loads, one 128x128 accumulator; B through a transposed view; f16 result",
          _gemm(128, b_col=True, out16=True)),
    Style("wg_tensor_O", "workgroup", "gemm", "wg_tensor through spirv-opt -O",
          _gemm(128, b_col=True, out16=True)),
    Style("q4_n64", "workgroup", "q4", "Q4_0 DecodeFunc tensor loads, N = 64 tokens, transposed store",
          _q4_n64),
    Style("flash_attn", "workgroup", "attention", "flash attention, 8 heads of dimension 64: reductions, per-element ops",
          _flash_attn),
]
BY_NAME = {s.name: s for s in STYLES}
