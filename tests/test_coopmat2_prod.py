"""A block-quantized matrix multiplication as llama.cpp's Vulkan backend writes it
(tests/shaders/coopmat2_prod/mul_mm_q.comp, through `spirv-opt -O`: q4_0 or q8_0 weights by a
specialization constant, workgroup-scope matrices, tile sizes and workgroup size by
specialization constants, a fast path and a Constant-clamped ragged edge, batches with
broadcasting, split-K), against numpy.

Convention (ggml_mul_mat's, kept by llama.cpp's shaders): A holds the weights, M rows of K values
in blocks of 32; B the activations, N rows (tokens) of K float16 values; D gets N rows of M
float32 values, D[n][m] = sum_k B[n][k] dequant(A)[m][k], that is D = B dequant(A)^T.

Reference: the weights dequantized by numpy from the formats' definitions (q4_0: a float16 scale
d and 16 bytes, value j = (nibble - 8) * d with the low nibble of byte j for j < 16 and the high
nibble of byte j - 16 above; q8_0: a float16 scale d and 32 int8 q, value j = q[j] * d), each
value rounded to float16, since the decoded matrix holds float16 components; then a float64
matrix product. Tolerance: each MulAdd adds a K step of BK products to a float32 accumulator; the
engine's default numerics add the step's exact sum and round once to float32, a relative error of
at most u = 2^-24 of a partial sum, itself at most S = sum_k |B[n][k] dequant(A)[m][k]|; so every
element must lie within steps x u x S of the float64 product, steps being the K steps of its
range. Memory outside what D's layout covers must keep its value.
The padding of A and B holds NaN: past K in a row and between matrices, which the shader must not
read, and B's rows from N to padded_N, which it reads on the fast path and must drop.

Compile time: a specialization of this module compiles in 3 to 12 s on the 2-core machine with
the default options (the kernel has some 35 decode sites). The default run has two kernels (the
small tile, q4_0 on the generic profile and q8_0 on the H100's) and the dequantizers' hand-worked
blocks, and the module's default specialization (one invocation a workgroup); every other
combination, and the module as glslang writes it, are in the slow set.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import jitcoop

SH = Path(__file__).resolve().parent / "shaders" / "coopmat2_prod"
MODULE = "mul_mm_q_O.spv"
Q4_0, Q8_0 = 0, 1
QK = 32                                       # values per block
BLOCK = {Q4_0: np.dtype([("d", "<f2"), ("qs", "u1", 16)]),
         Q8_0: np.dtype([("d", "<f2"), ("qs", "i1", 32)])}
U = 2.0 ** -24                                # float32's unit roundoff


# -- the weight formats, from their definitions -----------------------------------------------------
def dequantize(blocks, kind):
    """The values of q4_0 / q8_0 blocks (shape ... x nb) as ... x (nb * 32) float16."""
    d = blocks["d"].astype(np.float64)[..., None]
    if kind == Q8_0:
        q = blocks["qs"].astype(np.float64)
    else:
        qs = blocks["qs"]
        q = np.concatenate([qs & 15, qs >> 4], axis=-1).astype(np.float64) - 8
    vals = (q * d).astype(np.float16)        # exact in float64, rounded once
    return vals.reshape(*blocks.shape[:-1], -1)


def random_blocks(rng, shape, kind):
    """Random blocks: scales of every exponent from 2^-9 to 2^-4 with random significands (so the
    products q * d need rounding to float16), quanta over the whole range."""
    b = np.zeros(shape, BLOCK[kind])
    b["d"] = (rng.uniform(1, 2, shape) * 2.0 ** rng.integers(-9, -3, shape)).astype(np.float16)
    if kind == Q8_0:
        b["qs"] = rng.integers(-128, 128, (*shape, 32))
    else:
        b["qs"] = rng.integers(0, 256, (*shape, 16))
    return b


def test_dequantizers_on_hand_worked_blocks():
    b8 = np.zeros(1, BLOCK[Q8_0])
    b8["d"] = 0.5
    b8["qs"][0, :4] = [1, -2, 127, -128]
    assert dequantize(b8, Q8_0)[:4].tolist() == [0.5, -1.0, 63.5, -64.0]
    b4 = np.zeros(1, BLOCK[Q4_0])
    b4["d"] = 2.0
    b4["qs"][0, 0] = 0x9F              # value 0: low nibble 15, value 16: high nibble 9
    b4["qs"][0, 1] = 0x08
    v = dequantize(b4, Q4_0)
    assert (v[0], v[16], v[1], v[17]) == (14.0, 2.0, 0.0, -16.0)
    # rounding to float16: 3 * (1 + 2^-10) = 3 + 3 * 2^-10 needs 12 significant bits; to even: 3 + 2^-8
    b4["d"] = 1 + 2.0 ** -10
    b4["qs"][0, 2] = 11                # nibble 11: q - 8 = 3
    assert dequantize(b4, Q4_0)[2] == 3 + 2.0 ** -8


# -- tiles and problems --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tile:
    name: str
    block_size: int        # invocations
    bm: int
    bn: int
    bk: int
    smaller: bool          # narrower matrices for few activation rows

    def spec(self, kind):
        return {"BLOCK_SIZE": self.block_size, "BM": self.bm, "BN": self.bn, "BK": self.bk,
                "enable_smaller_matrices": self.smaller, "TYPE_A": kind}


# ggml-vulkan's coopmat2 quant tiles are {256, 128, 256, 64, 1}, {256, 128, 128, 64, 1},
# {256, 32, 64, 128, 0}; these are its medium tile and two smaller ones (CPU-sized).
TILES = [Tile("l", 256, 128, 128, 64, True), Tile("m", 256, 64, 64, 32, False), Tile("s", 128, 32, 32, 32, False)]
TILE = {t.name: t for t in TILES}


@dataclass(frozen=True)
class Problem:
    name: str
    m: int
    n: int
    k: int
    padded_n: int = 0      # rows of B the shader may read (0: n)
    ne02: int = 1          # weight matrices
    ne12: int = 1          # activation matrices (batches), a multiple of ne02
    k_split: int = 0       # K values per range (0: no split)
    pad: bool = False      # strides longer than the rows

    @property
    def rows_b(self):
        return self.padded_n or self.n


def problems(t: Tile):
    """The shapes each tile runs, sized by the tile: ragged M, N and K around whole tiles, token
    generation (N = 1 and 8), a batch of 2 with one weight matrix shared and with two, split-K."""
    return [
        # prompt processing: two whole row tiles of A and a ragged one, a whole and a ragged tile
        # of B, K a multiple of 32 that is not one of BK when BK = 64, long strides
        Problem("prompt_ragged", 2 * t.bm + 5, t.bn + 7, 5 * t.bk + 32, pad=True),
        # whole K steps (the unrolled fast loop and its remainder), one weight matrix for two
        # activation matrices
        Problem("prompt_batch2_broadcast", t.bm + 3, t.bn + 1, 6 * t.bk, ne12=2),
        # one token, two weight matrices for two activation matrices
        Problem("tg_n1_batch2", 2 * t.bm, 1, 4 * t.bk, ne02=2, ne12=2),
        # eight tokens, and BN / 4 + 8, in a B padded to a whole tile: the fast path (with
        # enable_smaller_matrices, its BN / 4 and BN / 2 wide matrices)
        Problem("tg_n8_padded", 2 * t.bm, 8, 8 * t.bk, padded_n=t.bn),
        Problem("n_bn4_plus_8_padded", 2 * t.bm, t.bn // 4 + 8, 4 * t.bk, padded_n=t.bn),
        # three K ranges of 2 BK, the last one short
        Problem("split_k", t.bm + 1, 3, 5 * t.bk + 32, k_split=2 * t.bk),
    ]


def layout(p: Problem):
    """Strides (values): rows of A, B, D; matrices of A, B, D. Matrices start 16-byte aligned."""
    sa = p.k + (64 if p.pad else 0)
    sb = p.k + (8 if p.pad else 0)
    sd = p.m + (4 if p.pad else 0)
    return sa, sb, sd, round_up(p.m * sa, 256), round_up(p.rows_b * sb, 8), round_up(p.n * sd + (8 if p.pad else 0), 4)


def ceil_div(x, q):
    return -(-x // q)


def round_up(x, q):
    return ceil_div(x, q) * q


def inputs(p: Problem, kind, seed=0):
    rng = np.random.default_rng(seed)
    sa, sb, sd, bsa, bsb, bsd = layout(p)
    # A: every block NaN-scaled, then the used ones random
    a = np.zeros(p.ne02 * bsa // QK, BLOCK[kind])
    a["d"] = np.nan
    a_used = random_blocks(rng, (p.ne02, p.m, p.k // QK), kind)
    view = a.reshape(p.ne02, bsa // QK)[:, :p.m * sa // QK].reshape(p.ne02, p.m, sa // QK)
    view[:, :, :p.k // QK] = a_used
    # B: NaN everywhere but the n rows of K values; rows n..padded_n are read, and must be dropped
    b = np.full(p.ne12 * bsb, np.nan, np.float16)
    bv = b.reshape(p.ne12, bsb)[:, :p.rows_b * sb].reshape(p.ne12, p.rows_b, sb)
    b_used = rng.standard_normal((p.ne12, p.n, p.k)).astype(np.float16)
    bv[:, :p.n, :p.k] = b_used
    parts = ceil_div(p.k, p.k_split) if p.k_split else 1
    push = struct.pack("<15I", p.m, p.n, p.k, sa, sb, sd, bsa, bsb, bsd, p.k_split or p.k, p.ne02, p.ne12,
                       p.ne12 // p.ne02, 1, p.rows_b)
    return {"a": a, "b": b, "a_vals": dequantize(a_used, kind).astype(np.float64), "b_vals": b_used.astype(np.float64),
            "d": np.full(parts * p.ne12 * bsd, -7.0, np.float32), "parts": parts, "push": push}


def reference(p: Problem, x, t: Tile):
    """Per batch: the float64 product, the bound on |D - product| and the K steps behind it."""
    ranges = [(lo, min(p.k, lo + (p.k_split or p.k))) for lo in range(0, p.k, p.k_split or p.k)]
    want, bound = [], []
    for z in range(p.ne12):
        a = x["a_vals"][z // (p.ne12 // p.ne02)]
        b = x["b_vals"][z]
        want.append(b @ a.T)
        s = np.abs(b) @ np.abs(a).T
        steps = sum(ceil_div(hi - lo, t.bk) for lo, hi in ranges)
        bound.append(steps * U * s)
    return np.array(want), np.array(bound)


_KERNELS: dict = {}


def kernel(t: Tile, kind, profile, module=MODULE):
    """The kernel as a user's kernel() compiles it (default options), once per session."""
    key = (t, kind, profile, module)
    if key not in _KERNELS:
        _KERNELS[key] = jitcoop.Device(profile).load(SH / module).kernel(spec=t.spec(kind))
    return _KERNELS[key]


def run_and_check(k: jitcoop.Kernel, t: Tile, kind, p: Problem):
    x = inputs(p, kind)
    grid = (ceil_div(p.m, t.bm) * x["parts"], ceil_div(p.n, t.bn), p.ne12)
    k.dispatch(grid, {0: x["a"], 1: x["b"], 2: x["d"]}, push=x["push"])

    _, _, sd, _, _, bsd = layout(p)
    d = x["d"].reshape(x["parts"], p.ne12, bsd)
    inside = d[:, :, :p.n * sd].reshape(x["parts"], p.ne12, p.n, sd)
    got = inside[..., :p.m].astype(np.float64).sum(0)         # the split-K ranges added up
    want, bound = reference(p, x, t)
    err = np.abs(got - want)
    bad = ~(err <= bound)                                       # NaN counts as bad
    if bad.any():
        first = ", ".join(f"D[{z}][{n}][{m}] = {got[z, n, m]!r} (numpy {want[z, n, m]!r}, bound {bound[z, n, m]:.3g})"
                          for z, n, m in np.argwhere(bad)[:5])
        raise AssertionError(f"{bad.sum()} of {bad.size} elements outside the bound: {first}")
    # what D's layout does not cover keeps its value: columns past M, the rows past N
    assert (inside[..., p.m:] == -7.0).all(), "the shader wrote past M"
    assert (d[:, :, p.n * sd:] == -7.0).all(), "the shader wrote past N"


def cases(default_run):
    out = []
    for profile in ("generic", "nvidia"):
        for t in TILES:
            for kind, kname in ((Q4_0, "q4_0"), (Q8_0, "q8_0")):
                out.append(pytest.param(t, kind, profile, id=f"{t.name}-{kname}-{profile}",
                                        marks=() if (t.name, kname, profile) in default_run else pytest.mark.slow))
    return out


# The default run: the small tile, q4_0 on the generic profile and q8_0 on the H100's.
@pytest.mark.parametrize("t,kind,profile", cases({("s", "q4_0", "generic"), ("s", "q8_0", "nvidia")}))
def test_mul_mm_q(t, kind, profile):
    k = kernel(t, kind, profile)
    for p in problems(t):
        run_and_check(k, t, kind, p)


# The module's own specialization constants: BLOCK_SIZE 1, BM = BN = 128, BK = 32, q4_0. One
# invocation holds every 128 x 128 matrix (16,384 components): a one-invocation, lane-invariant
# kernel whose accumulators' zero reached each branch as 16,384 row stores (over 120 s to
# compile, the compile limit; 6-8 s now).
DEFAULT = Tile("default", 1, 128, 128, 32, False)


def test_the_default_specialization():
    k = jitcoop.Device("generic").load(SH / MODULE).kernel()
    assert k.local_size == (1, 1, 1)
    for p in problems(DEFAULT)[:3]:
        run_and_check(k, DEFAULT, Q4_0, p)


@pytest.mark.slow
def test_the_module_as_glslang_writes_it():
    """Before spirv-opt: variables for every local, the spec-constant branches unfolded."""
    t, kind = TILE["s"], Q8_0
    k = kernel(t, kind, "generic", "mul_mm_q.spv")
    for p in problems(t):
        run_and_check(k, t, kind, p)


@pytest.mark.parametrize("spec,message", [
    # at 256 invocations the H100's flexible dimensions go in steps of 32 in M and N
    # (tests/oracle: props-h100.txt): BN / 4 = 16 of a 64-wide tile is not offered
    ({"BM": 64, "BN": 64, "enable_smaller_matrices": True},
     "OpTypeCooperativeMatrixKHR at byte 5156: the nvidia profile has no 64 x 16 f32 accumulator matrix"),
    ({"BM": 48}, "OpTypeCooperativeMatrixKHR at byte 3912: the nvidia profile has no 48 x 32 f16 A matrix"),
    ({"BLOCK_SIZE": 512}, "workgroup-scope matrices need at most 256 invocations on nvidia; this workgroup has 512"),
], ids=["bn_over_4_is_16", "bm_48", "512_invocations"])
def test_tiles_the_h100_does_not_offer_are_refused(spec, message):
    mod = jitcoop.Device("nvidia").load(SH / MODULE)
    with pytest.raises(jitcoop.SpirvError, match=message):
        mod.kernel(spec={**TILE["m"].spec(Q4_0), **spec})


@pytest.mark.parametrize("kind,decoder", [(Q4_0, "dequantFuncQ4_0"), (Q8_0, "dequantFuncQ8_0")])
def test_the_weight_type_not_chosen_is_not_compiled(kind, decoder):
    """TYPE_A picks one of two decode functions by branches on a specialization constant; the
    dead arms are dropped before code generation (jitcoop/analysis/prune.py), so the kernel's
    LLVM IR defines the chosen decode function's callback and not the other's."""
    mod = jitcoop.Device("nvidia").load(SH / MODULE)
    ids = {v.split("(")[0]: k for k, v in mod.spirv.names.items()}
    ir = mod.kernel(spec=TILE["s"].spec(kind)).source
    defined = set(re.findall(r"define internal \w+ @cb(\d+)\(", ir))
    assert defined == {str(ids[decoder])}
