"""SPV_NV_cooperative_matrix2 shaders in the style of production ones, against numpy references
written from the seed: a 4-bit block-quantized GEMM (decode function, workgroup scope, transposing
view, Constant clamping for ragged edges), the same with per-block scales staged in shared memory,
flash attention (row max / row sum reductions, per-element exponentials, a -inf clamp value for
masking), and the non-memory instructions one by one (reduce modes, per-element op with operands,
transpose, use conversion). Also: profiling counters and a callback's Private variables."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop.cli import main as cli_main

SH = Path(__file__).parent / "shaders" / "coopmat2_apps"

_kernels: dict = {}


def kernel(name, profile="generic", **options):
    key = (name, profile, tuple(sorted(options.items())))
    if key not in _kernels:
        _kernels[key] = jitcoop.Device(profile).load(SH / f"{name}.spv").kernel(**options)
    return _kernels[key]


# -- 4-bit block-quantized GEMM ---------------------------------------------------------------------

def q4_inputs(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
    nb = K // 32
    q = rng.integers(0, 256, (N, nb, 16), dtype=np.uint8)
    d = (rng.random((N, nb)) * 0.1 + 0.01).astype(np.float16)
    blk = np.zeros((N, nb), dtype=[("d", "<f2"), ("qs", "u1", 16)])
    blk["d"] = d
    blk["qs"] = q
    return a, blk, d


def q4_dequant(blk):
    """Q4_0 as the shader's comment defines it: element i < 16 of a block is the low nibble of
    byte i, element i >= 16 the high nibble of byte i - 16; value (q - 8) * d in float16."""
    q, d = blk["qs"], blk["d"]
    vals = np.concatenate([(q & 15), (q >> 4)], axis=2).astype(np.float16) - np.float16(8)
    return (vals * d[:, :, None]).astype(np.float16).reshape(q.shape[0], -1)


def exact_gemm(a, b_t, kstep=32):
    """numerics="exact": each MulAdd adds the exact sum of its K products to C in float64 and
    rounds once to float32."""
    acc = np.zeros((a.shape[0], b_t.shape[0]), np.float32)
    for k0 in range(0, a.shape[1], kstep):
        part = a[:, k0:k0 + kstep].astype(np.float64) @ b_t[:, k0:k0 + kstep].astype(np.float64).T
        acc = (acc.astype(np.float64) + part).astype(np.float32)
    return acc


def run_q4(shader, M, N, K, seed, grid, device="generic", **dispatch):
    """Run a Q4_0 GEMM shader on q4_inputs(M, N, K, seed) and check it against exact_gemm
    (output prefilled with 7.0, so an element never written shows); returns the report."""
    a, blk, d = q4_inputs(M, N, K, seed)
    out = np.full((M, N), 7.0, np.float32)
    rep = kernel(shader, device).dispatch(grid, {0: a, 1: blk, 2: out, 3: d},
                                           push=np.array([M, N, K], np.uint32), **dispatch)
    np.testing.assert_array_equal(out, exact_gemm(a, q4_dequant(blk)))
    return rep


@pytest.mark.parametrize("variant", ["q4_gemm", "q4_gemm_shared"])
def test_q4_gemm_exact(variant):
    run_q4(variant, 200, 160, 128, 0, (2, 2, 1))    # ragged: the edge tiles rely on Constant clamping


@pytest.mark.slow
def test_q4_gemm_nvidia_profile_same_answer():
    run_q4("q4_gemm", 128, 256, 64, 3, (1, 2, 1), "nvidia")


def test_q4_gemm_unoptimized_and_spirv_opt_agree():
    # q4_gemm_O.spv is q4_gemm.spv through `spirv-opt -O` (which keeps the matrix and layout
    # variables: spirv-opt does not promote them)
    run_q4("q4_gemm_O", 128, 128, 64, 5, (1, 1, 1))


def test_q4_gemm_profile_counts_decode_calls():
    M, N, K = 128, 128, 64
    prof = run_q4("q4_gemm", M, N, K, 1, (1, 1, 1), profile=True).profile
    [dec] = [r for r in prof.callbacks if r["role"] == "DecodeFunc"]
    # every element of B (K x N) decoded once, each call reading the 2-byte scale and one byte
    assert dec["function"] == "dequant"
    assert dec["calls"] == dec["elements"] == K * N
    assert dec["bytes_read"] == 3 * K * N
    loads = [r for r in prof.instructions if r["opname"] == "OpCooperativeMatrixLoadTensorNV"]
    assert sorted(r["elements"] for r in loads) == [M * K, K * N]      # A: 128x64, B: 64x128
    assert all(r["runs"] == K // 32 for r in loads)
    muladd = [r for r in prof.instructions if r["opname"] == "OpCooperativeMatrixMulAddKHR"]
    assert muladd[0]["instances"] == K // 32
    text = str(prof)
    assert "dequant" in text and "DecodeFunc / scalar" in text


# -- flash attention ---------------------------------------------------------------------------------

def attention_ref(q, k, v, mask, scale):
    s = q.astype(np.float64) @ k.astype(np.float64).T * scale + mask.astype(np.float64)
    s -= s.max(1, keepdims=True)
    p = np.exp(s)
    return (p @ v.astype(np.float64)) / p.sum(1, keepdims=True)


def flash_attn_inputs(use_mask, Nq=70, N=100, D=64, scale=0.125):
    """q, k, v, mask and the push constants of flash_attn (a -inf mask on a fifth of the scores,
    or all zeros); the defaults are ragged in both: clamped loads, -inf past N, dropped stores."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((n, D)).astype(np.float16) for n in (Nq, N, N))
    mask = np.where(rng.random((Nq, N)) < 0.2, -np.inf,
                    rng.standard_normal((Nq, N)) * 0.5).astype(np.float16)
    if not use_mask:
        mask[:] = 0
    return q, k, v, mask, np.array([Nq, N, np.float32(scale).view(np.uint32), use_mask], np.uint32)


@pytest.mark.parametrize("use_mask", [1, 0])
def test_flash_attention(use_mask):
    Nq, D, scale = 70, 64, 0.125
    q, k, v, mask, push = flash_attn_inputs(use_mask)
    out = np.zeros((Nq, D), np.float32)
    kernel("flash_attn").dispatch(((Nq + 31) // 32, 1, 1), {0: q, 1: k, 2: v, 3: mask, 4: out}, push=push)
    ref = attention_ref(q, k, v, mask, scale)
    # P is rounded to float16 before P x V: relative error about 2**-11 per term
    np.testing.assert_allclose(out, ref, rtol=0, atol=2e-3 * np.abs(ref).max())


# -- reduce, per-element, transpose, use conversion ------------------------------------------------------

@pytest.mark.parametrize("profile", ["generic", "shuffled"])
def test_non_memory_instructions(profile):
    rng = np.random.default_rng(7)
    A = rng.standard_normal((16, 16)).astype(np.float32)
    o = np.zeros(1600, np.float32)
    hits = np.zeros(16, np.uint32)
    kernel("ops", profile).dispatch((1, 1, 1), {0: A.ravel().copy(), 1: o, 2: hits})
    rowmax = np.repeat(A.max(1)[:, None], 16, 1)
    colsum = np.zeros(16, np.float32)
    for r in range(16):                                   # float32 adds, row by row
        colsum = (colsum + A[r]).astype(np.float32)
    total = np.float32(0)
    for i, x in enumerate(A.ravel()):                     # row-major order
        total = x if i == 0 else np.float32(total + x)
    quad = np.zeros((8, 8), np.float32)
    for i in range(8):                                    # the seed's order: (2r,2c) (2r+1,2c) (2r,2c+1) (2r+1,2c+1)
        for j in range(8):
            s = A[2 * i, 2 * j]
            for x in (A[2 * i + 1, 2 * j], A[2 * i, 2 * j + 1], A[2 * i + 1, 2 * j + 1]):
                s = np.float32(s + x)
            quad[i, j] = s
    rr, cc = np.mgrid[0:16, 0:16]
    pe = ((A * np.float32(3)).astype(np.float32) + rowmax).astype(np.float32) + (rr * 100 + cc).astype(np.float32)
    np.testing.assert_array_equal(o[:256].reshape(16, 16), rowmax)
    np.testing.assert_array_equal(o[256:512].reshape(16, 16), np.repeat(colsum[None], 16, 0))
    np.testing.assert_array_equal(o[512:768], np.full(256, total, np.float32))
    np.testing.assert_array_equal(o[768:832].reshape(8, 8), quad)
    np.testing.assert_array_equal(o[832:1088].reshape(16, 16), pe)
    np.testing.assert_array_equal(hits, np.full(16, 16, np.uint32))      # one call per element
    np.testing.assert_array_equal(o[1088:1344].reshape(16, 16), A.T)
    np.testing.assert_array_equal(o[1344:1600].reshape(16, 16), A)


# -- callbacks and Private variables -----------------------------------------------------------------

def decode_ref(q, sc, mul):
    ref = np.zeros((16, 16), np.float32)
    for r in range(16):
        for c in range(16):
            idx, ci = r * 2 + c // 8, c % 8                      # block (1 x 8), 4 bytes each
            x = q[idx * 4 + (ci >> 1)]
            nib = x & 15 if ci % 2 == 0 else x >> 4
            ref[r, c] = (np.float32(nib) - 8) * sc[idx] * np.float32(mul)
    return ref


def test_decode_reads_private_variable_and_buffer():
    rng = np.random.default_rng(1)
    q = rng.integers(0, 256, 128, dtype=np.uint8)
    sc = rng.random(32).astype(np.float32)
    o = np.zeros(256, np.float32)
    rep = kernel("decode_private").dispatch((1, 1, 1), {0: q, 1: o, 2: sc}, profile=True)
    np.testing.assert_array_equal(o.reshape(16, 16), decode_ref(q, sc, 2.0))
    [row] = rep.profile.callbacks
    # per element: one byte of nibbles, a float scale, the float Private variable
    assert (row["calls"], row["elements"], row["bytes_read"]) == (256, 256, 256 * 9)


def test_nonuniform_private_variable_read_by_callback_is_an_error():
    q = np.zeros(128, np.uint8)
    o = np.full(256, 5.0, np.float32)
    with pytest.raises(jitcoop.ExecutionError, match="scale_mul.*lane 5") as e:
        kernel("decode_private_bad").dispatch((1, 1, 1), {0: q, 1: o, 2: np.ones(32, np.float32)})
    assert "OpCooperativeMatrixLoadTensorNV" in str(e.value) and e.value.lane == 5
    assert (o == 5.0).all()                               # the user's buffer is untouched


def test_cli_profile_compare(tmp_path, capsys):
    rng = np.random.default_rng(1)
    np.save(tmp_path / "q.npy", rng.integers(0, 256, 128, dtype=np.uint8))
    np.save(tmp_path / "o.npy", np.zeros(256, np.float32))
    np.save(tmp_path / "s.npy", rng.random(32).astype(np.float32))
    spv = str(SH / "decode_private.spv")
    args = ["profile", spv, "--grid", "2", "--buffer", f"0={tmp_path / 'q.npy'}",
            "--buffer", f"1={tmp_path / 'o.npy'}", "--buffer", f"2={tmp_path / 's.npy'}"]
    assert cli_main(args + ["--compare", spv]) == 0
    out = capsys.readouterr().out
    assert "DecodeFunc / scalar" in out and "B/A" in out and "dec " in out
    assert (np.load(tmp_path / "o.npy") == 0).all()      # profile writes nothing back


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["vector", "check"])
def test_q4_gemm_vector_decode(mode):
    # DecodeVectorFunc of 8 float16 per call; "check" also runs DecodeFunc and compares
    M, N, K = 128, 128, 64
    a, blk, d = q4_inputs(M, N, K, seed=2)
    out = np.zeros((M, N), np.float32)
    rep = kernel("q4_gemm_vec", decode_vector=mode).dispatch(
        (1, 1, 1), {0: a, 1: blk, 2: out, 3: d}, push=np.array([M, N, K], np.uint32), profile=True)
    np.testing.assert_array_equal(out, exact_gemm(a, q4_dequant(blk)))
    vec = [r for r in rep.profile.callbacks if r["role"] == "DecodeVectorFunc"]
    assert vec[0]["elements"] == K * N and vec[0]["calls"] == K * N // 8


# -- MUL_MAT_ID: gathered rows, scattered results ------------------------------------------------------

def mul_mat_id_inputs(T, N, K, E, seed=0):
    """Tokens a [T, K], experts b [E, N, K], each token routed to one expert: ids[e] lists the
    tokens of expert e (counts[e] of them). Returns a, b, route, ids, counts."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((T, K)).astype(np.float16)
    b = rng.standard_normal((E, N, K)).astype(np.float16)
    route = rng.integers(0, E, T)
    ids = np.zeros((E, T), np.uint32)
    counts = np.zeros(E, np.uint32)
    for t in range(T):
        ids[route[t], counts[route[t]]] = t
        counts[route[t]] += 1
    return a, b, route, ids, counts


def test_mul_mat_id_gather_and_scatter():
    T, N, K, E = 70, 50, 48, 3
    a, b, route, ids, counts = mul_mat_id_inputs(T, N, K, E)
    d = np.full((T, N), -1.0, np.float32)
    kernel("mul_mat_id").dispatch(((T + 31) // 32, (N + 31) // 32, E), {0: a, 1: b, 2: ids, 3: counts, 4: d},
                                  push=np.array([T, N, K], np.uint32))
    ref = np.stack([exact_gemm(a[t:t + 1], b[route[t]], kstep=16)[0] for t in range(T)])
    np.testing.assert_array_equal(d, ref)


# -- per-element operations in vector form ------------------------------------------------------------

def pe_vector_inputs(seed=3):
    """Two 16 x 16 matrices (one per subgroup) and their second operands: rows 0-7 of every
    matrix take the Func's first branch, rows 8-11 the second, rows 12-15 mix them (a vector
    form meets G elements that part ways). Then the matrices the row reduction folds: columns
    1-7 climb so that every row takes the same branch at each of those steps (column 6: the
    first, the others the second), columns 8-15 are random over [-2000, 2000] (rows part ways)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(1, 2, (2, 16, 16)).astype(np.float32)
    x[:, 8:12] *= -4
    x[:, 12:] = rng.uniform(-1, 1, (2, 4, 16)).astype(np.float32)
    y = rng.uniform(-0.25, 0.25, (2, 16, 16)).astype(np.float32)
    bias = rng.uniform(-0.25, 0.25, 512).astype(np.float32)
    z = rng.uniform(-1, 1, (2, 16, 16)).astype(np.float32)
    z[:, :, 1:8] += np.arange(1, 8, dtype=np.float32) * 100
    z[:, :, 8:] *= 2000
    return x, y, bias, z


def pick_row_ref(z):
    """The combine function folded along each row, left to right, in float32."""
    out = np.zeros(z.shape[:2], np.float32)
    for sg in range(z.shape[0]):
        for r in range(16):
            acc = z[sg, r, 0]
            for c in range(1, 16):
                b = z[sg, r, c]
                acc = np.float32(acc - np.float32(b * np.float32(0.5))) if acc > b else \
                    np.float32(b + np.float32(acc * np.float32(0.25)))
            out[sg, r] = acc
    return out


def pe_vector_ref(x, y, bias, s):
    v = ((x * s).astype(np.float32) + bias.reshape(2, 16, 16)).astype(np.float32) + y
    with np.errstate(over="ignore"):
        e = (np.exp(v.astype(np.float64)).astype(np.float32) - np.float32(1)).astype(np.float32)
    return np.where(v > 0, v, e)


@pytest.mark.parametrize("profile", ["generic", "shuffled"])
@pytest.mark.parametrize("profiled", [False, True])
def test_per_element_func_on_every_operand_kind(profile, profiled):
    # Unprofiled, the Func runs 16 elements at a time where they take one path (callback_vector);
    # profiled, one element at a time. The row reduction's combine takes one branch or the other,
    # in the order docs/extensions/coopmat2.md gives (each row left to right). Against numpy doing what the GLSL
    # says, in float32.
    x, y, bias, z = pe_vector_inputs()
    s = np.float32(2.0)
    o, red = np.zeros(512, np.float32), np.zeros(512, np.float32)
    assert (x[:, 12:] > 0).any() and (x[:, 12:] < 0).any()
    kernel("pe_vector", profile).dispatch((1, 1, 1), {0: np.concatenate([x.ravel(), y.ravel(), z.ravel()]), 1: bias,
                                                      2: o, 3: red}, push=np.array([s], np.float32), profile=profiled)
    want = pe_vector_ref(x, y, bias, s)
    # exp of float32 is jitcoop's own, rounded once to float32: within an ulp of numpy's
    np.testing.assert_allclose(o.reshape(2, 16, 16), want, rtol=2 ** -23, atol=0)
    np.testing.assert_array_equal(o.reshape(2, 16, 16)[want > 0], want[want > 0])
    np.testing.assert_array_equal(red.reshape(2, 16, 16), np.repeat(pick_row_ref(z)[:, :, None], 16, 2))


def test_per_element_func_failure_names_the_element_lane():
    # The bias is one float short: only element (15, 15) of subgroup 1's matrix reads past it.
    # Generic's striped layout puts it in element 7 of that subgroup's lane 31 (element e of
    # lane l is row-major index e x 32 + l): invocation 63 of the workgroup.
    x, y, bias, z = pe_vector_inputs()
    o = np.full(512, 7.0, np.float32)
    with pytest.raises(jitcoop.ExecutionError, match=r"OpLoad at byte \d+ workgroup \(0, 0, 0\) lane 63: "
                       r"out-of-bounds access: 4 bytes at byte offset 2044 of binding \(set 0, binding 1\)") as e:
        kernel("pe_vector").dispatch((1, 1, 1), {0: np.concatenate([x.ravel(), y.ravel(), z.ravel()]), 1: bias[:511],
                                              2: o, 3: np.zeros(512, np.float32)}, push=np.array([2.0], np.float32))
    assert e.value.lane == 63 and e.value.workgroup == (0, 0, 0)
    assert (o == 7.0).all()
