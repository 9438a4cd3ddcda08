"""SPV_KHR_integer_dot_product (tests/shaders/integer_dot.comp) against Python integers, from the
extension's definitions: the products and their sum are exact; OpSDot/OpUDot/OpSUDot give the
low bits of that sum at the result's width, the AccSat forms the sum plus the accumulator clamped
to the result type (signed for S and SU, unsigned for U); PackedVectorFormat4x8Bit reads a 32-bit
word as four 8-bit components, component 0 in the low byte. Bit for bit."""
import numpy as np
import pytest

import jitcoop
from conftest import SHADERS

N = 256


def u(x, n):
    return x % (1 << n)


def s(x, n):
    x = u(x, n)
    return x - (1 << n) if x >> (n - 1) else x


def parts(x, width, signed):
    """The components of a word: 32 / width of them, component 0 in the low bits."""
    f = s if signed else u
    return [f(x >> (width * i), width) for i in range(32 // width)]


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def sat(x, n, signed):
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed else (0, (1 << n) - 1)
    return min(max(x, lo), hi)


def expected(x, y, z):
    """r[0..14], s, l of one invocation (tests/shaders/integer_dot.comp, line by line)."""
    u8x, u8y, s8x, s8y = parts(x, 8, False), parts(y, 8, False), parts(x, 8, True), parts(y, 8, True)
    s16x, s16y, u16x, u16y = parts(x, 16, True), parts(y, 16, True), parts(x, 16, False), parts(y, 16, False)
    r = [dot(u8x, u8y), dot(s8x, s8y), dot(s8x, u8y),
         sat(dot(u8x, u8y) + z, 32, False), sat(dot(s8x, s8y) + s(z, 32), 32, True),
         sat(dot(s8x, u8y) + s(z, 32), 32, True),
         dot(s8x, s8y), dot(u8x, u8y), sat(dot(s8x, s8y) + s(z, 32), 32, True),
         dot(s16x, s16y), sat(dot(u16x, u16y) + z, 32, False),
         dot([s(x, 32), s(z, 32)], [s(y, 32), s(x, 32)]), dot([x, y, z], [z, x, y]),
         sat(dot([s(x, 32), s(z, 32)], [s(y, 32), s(x, 32)]) + s(z, 32), 32, True),
         sat(x * y + y * z + z, 32, False)]
    sh = sat(dot(s16x, s16y) + s(z, 16), 32, True)          # an int16 accumulator, an int result
    lo = sat(x * z + y * x + (z << 32), 64, False)
    return [u(v, 32) for v in r], u(sh, 16), lo


@pytest.mark.parametrize("threads", [1, 2])
def test_integer_dot_products(kc, rng, threads):
    k = kc("integer_dot")
    a, b, c = (rng.integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    # the ends of every range: saturation both ways, the largest products
    edge = np.array([0, 1, 0x7F7F7F7F, 0x80808080, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x00FF00FF], np.uint32)
    m = len(edge)
    a[:m * m], b[:m * m] = np.repeat(edge, m), np.tile(edge, m)
    c[:m * m] = np.tile(np.roll(edge, 3), m)
    r = np.zeros(N * 16, np.uint32)
    sh = np.zeros(N, np.uint16)
    lo = np.zeros(N, np.uint64)
    k.dispatch(N // 64, {0: a, 1: b, 2: c, 3: r, 4: sh, 5: lo}, threads=threads)
    r = r.reshape(N, 16)
    for i in range(N):
        want_r, want_s, want_l = expected(int(a[i]), int(b[i]), int(c[i]))
        assert r[i, :15].tolist() == want_r, (i, hex(a[i]), hex(b[i]), hex(c[i]))
        assert int(sh[i]) == want_s and int(lo[i]) == want_l, i


def test_hand_worked(kc):
    """Two hand-worked words: x = 0x80FF0102 holds bytes 2, 1, -1 (255), -128 (128); y = 0x7F020304
    holds 4, 3, 2, 127. Signed: 2*4 + 1*3 + (-1)*2 + (-128)*127 = -16247; unsigned: 8 + 3 + 510 +
    16256 = 16777; signed x unsigned y is the signed sum here (y's bytes are all below 128)."""
    x, y = 0x80FF0102, 0x7F020304
    r, _, _ = expected(x, y, 0)
    assert r[0] == 16777 and r[1] == (-16247) % 2 ** 32 and r[2] == r[1]
    # the engine on the same words
    k = kc("integer_dot")
    a = np.full(64, x, np.uint32)
    b = np.full(64, y, np.uint32)
    out = np.zeros(64 * 16, np.uint32)
    k.dispatch(1, {0: a, 1: b, 2: np.zeros(64, np.uint32), 3: out, 4: np.zeros(64, np.uint16),
                   5: np.zeros(64, np.uint64)})
    assert out[:3].tolist() == [16777, 2 ** 32 - 16247, 2 ** 32 - 16247]


def _module():
    from jitcoop.spirv.module import Module
    return Module((SHADERS / "integer_dot.spv").read_bytes())


def _patched(opname, word, value, nth=0):
    """integer_dot.spv with word `word` of its nth `opname` instruction set to `value` (word 1:
    the result type, 2: the result id, 3 on: the operands), and that instruction's byte offset."""
    at = [i.offset for i in _module().instructions if i.opname == opname][nth]
    words = np.frombuffer((SHADERS / "integer_dot.spv").read_bytes(), np.uint32).copy()
    words[at // 4 + word] = value
    return words.tobytes(), at


def _type_id(opname, *operands):
    return next(i.result for i in _module().instructions if i.opname == opname and list(i.operands) == list(operands))


@pytest.mark.parametrize("case,message", [
    ("format", "5 is not a valid PackedVectorFormat"),
    ("not_a_value", "operand %7 is not a value"),
    ("narrow_result", "a 16-bit result for 32-bit components"),
    ("mixed_vectors", "integer vectors of one count and width are needed"),
])
def test_malformed_dot_products_are_refused(case, message):
    """Dot products no compiler writes: an unknown packed format, a type id for a value, a
    result narrower than the components (the vector OpSDot of ivec4s given an int16 result),
    vectors of two widths (its second operand swapped for the packed form's int word)."""
    if case == "format":
        module, offset, op = *_patched("OpUDot", 5, 5), "OpUDot"
    elif case == "not_a_value":
        module, offset, op = *_patched("OpUDot", 4, 7), "OpUDot"
    elif case == "narrow_result":
        module, offset, op = *_patched("OpSDot", 1, _type_id("OpTypeInt", 16, 1), nth=1), "OpSDot"
    else:
        packed = next(i for i in _module().instructions if i.opname == "OpSDot")
        module, offset, op = *_patched("OpSDot", 4, packed.operands[0], nth=1), "OpSDot"
    with pytest.raises(jitcoop.SpirvError) as e:
        jitcoop.Device().load(module).kernel()
    assert e.value.opname == op and e.value.offset == offset and message in str(e.value), str(e.value)
