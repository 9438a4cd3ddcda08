"""Calls by name (jitcoop.signature): bindings by their GLSL names, push constants packed from a dict
by the block's offsets, spec constants by name, ml_dtypes arrays in and out, and readback views.

The shader (shaders/signature/sig.comp) makes every push constant member and every binding visible
in its outputs; the references are numpy and ml_dtypes (bfloat16 and fp8 conversions written
independently of jitcoop), and the push constant bytes are packed by hand from the std430 offsets
glslang gives the block (written in the shader's comments)."""
import struct

import ml_dtypes
import numpy as np
import pytest

import jitcoop

SIG = "signature/sig.spv"
PUSH = {"scale": (0.25, -2.0), "m": [[1.0, 2.0], [3.0, 4.0]], "bias": -3, "n": 40, "w": [0.0, 0.0, 0.5]}


@pytest.fixture(scope="module")
def k(shaders):
    return jitcoop.Device().load(shaders / SIG).kernel(spec={"SHIFT": 1, "local_size_x": 64})


def _inputs(rng, n=64):
    src = (rng.integers(-64, 64, n) / 8).astype(ml_dtypes.bfloat16)     # exact in every format used
    return dict(src=src, dst=np.full(n, -1.0, np.float32), e4=np.zeros(n, ml_dtypes.float8_e4m3fn),
                e5=np.zeros(n, ml_dtypes.float8_e5m2), stats=np.zeros(2 + 2 * n, np.uint32))


def _expected_dst(src, n, total):
    """y = x * m[0][1] + scale.y + w[2] + bias + (i << SHIFT), with m[0][1] = column 0, row 1 of
    the (rows, columns) array [[1, 2], [3, 4]], i.e. 3."""
    i = np.arange(n)
    out = np.full(total, -1.0, np.float32)
    out[:n] = src[:n].astype(np.float32) * 3 + np.float32(-2.0) + np.float32(0.5) - 3 + (i << 1)
    return out


def test_call_by_name_matches_numpy(k, rng):
    assert k.local_size == (64, 1, 1)                # local_size_x by name
    a = _inputs(rng)
    k(1, **a, push=PUSH)
    n = PUSH["n"]
    np.testing.assert_array_equal(a["dst"], _expected_dst(a["src"], n, 64))
    x = a["src"][:n].astype(np.float32)
    assert a["e4"].dtype == ml_dtypes.float8_e4m3fn
    np.testing.assert_array_equal(a["e4"][:n].view(np.uint8), x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8))
    np.testing.assert_array_equal(a["e5"][:n].view(np.uint8), x.astype(ml_dtypes.float8_e5m2).view(np.uint8))
    assert not a["e4"][n:].view(np.uint8).any()
    stats = k.view("stats", a["stats"])
    assert int(stats["count"]) == n and float(stats["total"]) == 0.0
    pairs = stats["pairs"]
    assert pairs.dtype.names == ("key", "value") and pairs.shape == (64,)     # (4 * (2 + 2 * 64) - 8) // 8
    np.testing.assert_array_equal(pairs["key"][:n], 7 * np.arange(n))
    np.testing.assert_array_equal(pairs["value"][:n], a["dst"][:n])


def test_push_dict_packs_the_std430_offsets(k):
    """The bytes of PUSH laid out by hand: vec2 at 0, mat2 column-major (stride 8) at 8, int at
    24, uint at 28, float[3] (stride 4) at 32; 44 bytes."""
    want = struct.pack("<2f4fiI3f", 0.25, -2.0, 1.0, 3.0, 2.0, 4.0, -3, 40, 0.0, 0.0, 0.5)
    assert k.signature.pack_push(PUSH).tobytes() == want


def test_byte_level_call_still_works(k, rng):
    """Binding numbers, (set, binding) tuples and hand-packed push bytes, as before names."""
    a = _inputs(rng)
    push = struct.pack("<2f4fiI3f", 0.25, -2.0, 1.0, 3.0, 2.0, 4.0, -3, 40, 0.0, 0.0, 0.5)
    k.dispatch(1, {0: a["src"], 1: a["dst"], 2: a["e4"], 3: a["e5"], (1, 0): a["stats"]}, push=push)
    np.testing.assert_array_equal(a["dst"], _expected_dst(a["src"], 40, 64))
    # names and numbers together; str keys of the dict are names too
    b = _inputs(rng)
    k.dispatch(1, {0: b["src"], "Dst": b["dst"], 2: b["e4"]}, e5=b["e5"], stats=b["stats"], push=PUSH)
    np.testing.assert_array_equal(b["dst"], _expected_dst(b["src"], 40, 64))


def test_signature_and_repr_list_names_types_and_places(k):
    text = str(k.signature)
    for line in ("src (also Src): bf16[]  [set 0, binding 0, buffer, read-only]",
                 "dst (also Dst): f32[]  [set 0, binding 1, buffer, writable]",
                 "stats (also Stats): {u32 count; f32 total; Pair[] pairs}  [set 1, binding 0",
                 "+8    m: f32mat2x2", "+32   w: f32[3]", "SHIFT: u32 = 1  [SpecId 1]",
                 "(unnamed): u32 = 64  [SpecId 0; local_size_x]"):
        assert line in text, (line, text)
    r = repr(k)
    assert r.startswith("<jitcoop.Kernel main(grid, src: bf16[], dst: f32[], e4: e4m3[], e5: e5m2[], ")
    assert "push={scale: f32vec2, m: f32mat2x2, bias: i32, n: u32, w: f32[3]}" in r


@pytest.mark.parametrize("call, message", [
    (lambda k, a: k(1, **{**a, "dst": a["dst"].astype(np.float64)}, push=PUSH),
     "binding 'dst' holds float32 elements (f32[]); got an array of float64"),
    (lambda k, a: k(1, **{**a, "src": a["src"].astype(np.float32)}, push=PUSH),
     "binding 'src' holds bfloat16 elements"),
    (lambda k, a: k(1, **a, out=a["dst"], push=PUSH),
     "the kernel has no binding named 'out'; the kernel binds src (also Src): bf16[]"),
    (lambda k, a: k(1, **a, push={**PUSH, "scale": (1.0, 2.0, 3.0)}),
     "push constant 'scale' is a f32vec2 and takes 2 values; got shape (3,)"),
    (lambda k, a: k(1, **a, push={**PUSH, "m": [1.0, 2.0, 3.0, 4.0]}),
     "push constant 'm' is a f32mat2x2 and takes an array of shape (2, 2); got shape (4,)"),
    (lambda k, a: k(1, **a, push={kk: v for kk, v in PUSH.items() if kk != "n"} | {"N": 3}),
     "push constants: unknown member(s) 'N' and missing member(s) 'n'; the block is scale: f32vec2 at +0"),
    (lambda k, a: k(1, **a, push={**PUSH, "bias": 2 ** 31}),
     "push constant 'bias' is i32: 2147483648 is outside [-2147483648, 2147483647]"),
    (lambda k, a: k(1, **a, push={**PUSH, "n": 2.5}), "push constant 'n' is u32, an integer type; got 2.5"),
    (lambda k, a: k(1, {1: a["dst"]}, **a, push=PUSH), "binding (set 0, binding 1) is given twice"),
    (lambda k, a: k(1, **{**a, "stats": [0] * 8}, push=PUSH), "binding 'stats' takes a numpy array or a Buffer, not list"),
    (lambda k, a: k.view("nope", a["dst"]), "the kernel has no binding named 'nope'"),
])
def test_mistakes_name_what_the_shader_expects(k, rng, call, message):
    a = _inputs(rng)
    before = {n: v.copy() for n, v in a.items()}
    with pytest.raises(jitcoop.BindingError) as e:
        call(k, a)
    assert message in str(e.value), str(e.value)
    for n, v in a.items():
        np.testing.assert_array_equal(v.view(np.uint8), before[n].view(np.uint8))


def test_spec_constant_names(shaders):
    mod = jitcoop.Device().load(shaders / SIG)
    with pytest.raises(jitcoop.BindingError, match=r"no specialization constant named 'TILE'; the module has "
                       r"\(unnamed\) \(SpecId 0, u32 = 32; local_size_x\), SHIFT \(SpecId 1, u32 = 0\)"):
        mod.kernel(spec={"TILE": 4})
    with pytest.raises(jitcoop.BindingError, match="spec constant 1 is given twice"):
        mod.kernel(spec={"SHIFT": 1, 1: 2})


def test_view_of_buffers_and_bytes(k, rng):
    """Views have the shader's types and share memory with what they view."""
    dev = k.device
    src = dev.buffer((rng.integers(-8, 8, 16) / 4).astype(ml_dtypes.bfloat16))
    v = k.view("src", src)
    assert v.dtype == ml_dtypes.bfloat16 and v.shape == (16,)
    np.testing.assert_array_equal(v.astype(np.float32), src.array.astype(np.float32))
    raw = np.zeros(8 + 3 * 8, np.uint8)                  # a Stats block with 3 pairs, as bytes
    stats = k.view("Stats", raw)
    stats["count"][...] = 5
    stats["pairs"]["value"][2] = 1.5
    assert raw[:4].tobytes() == struct.pack("<I", 5)
    assert raw[8 + 2 * 8 + 4:8 + 3 * 8].tobytes() == struct.pack("<f", 1.5)
    assert k.view("e5", bytes(4)).dtype == ml_dtypes.float8_e5m2


def test_sgemm_by_name_as_the_readme_shows(rng):
    """The README's call: k(grid, a=A, b=B, c=C, push={...}) on the bundled SGEMM."""
    from jitcoop.examples import HERE
    k = jitcoop.Device().load(HERE / "sgemm.spv").kernel()
    M, N, K = 20, 36, 12
    A = rng.standard_normal((M, K), dtype=np.float32)
    B = rng.standard_normal((K, N), dtype=np.float32)
    C = rng.standard_normal((M, N), dtype=np.float32)
    want = 1.5 * (A.astype(np.float64) @ B) + 0.5 * C
    k((3, 2), a=A, b=B, c=C, push={"M": M, "N": N, "K": K, "alpha": 1.5, "beta": 0.5})
    np.testing.assert_allclose(C, want, rtol=1e-5, atol=1e-5)


def test_push_structs_arrays_of_structs_and_pointers(shaders):
    """Members that are an array of structs (dicts by member name) and a buffer reference (a
    Buffer or its address): r[0] at +0, r[1] at +8 (uint first, int step), src at +16."""
    dev = jitcoop.Device()
    k = dev.load(shaders / "signature" / "push_struct.spv").kernel()
    src = dev.buffer(np.arange(32, dtype=np.float32))
    push = {"r": [{"first": 2, "step": 3}, {"first": 20, "step": -1}], "src": src}
    assert k.signature.pack_push(push).tobytes() == struct.pack("<IiIiQ", 2, 3, 20, -1, src.address)
    o = np.zeros(8, np.float32)
    k(1, o=o, push=push)
    np.testing.assert_array_equal(o, [2, 5, 8, 11, 20, 19, 18, 17])
    with pytest.raises(jitcoop.BindingError, match=r"push constant 'r\[1\]' is a struct; give a dict of "
                                                    r"its members first, step"):
        k.signature.pack_push({"r": [{"first": 2, "step": 3}, {"first": 1}], "src": src.address})


def test_float32_kernels_do_not_import_ml_dtypes(shaders):
    """ml_dtypes is imported only for a kernel with bfloat16 or fp8 data: its import (registering
    its types with numpy) cost more than the rest of jitcoop's in every process the driver
    starts. A float32 kernel's signature is read and called by name without it."""
    import subprocess
    import sys
    code = (f"import sys, numpy as np, jitcoop\n"
            f"k = jitcoop.Device().load({str(shaders / 'atomics.spv')!r}).kernel()\n"
            f"print(k.signature is not None, 'ml_dtypes' in sys.modules)\n"
            f"k2 = jitcoop.Device().load({str(shaders / SIG)!r}).kernel(spec={{'SHIFT': 1}})\n"
            f"print(str(k2.signature.bindings[0].dtype), 'ml_dtypes' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "False", "bfloat16", "True"]
