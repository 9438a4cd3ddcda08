"""Bad input: truncated and corrupted modules (SpirvError naming the byte offset of the bad
instruction), bindings, buffers, push constants and spec constants that do not fit the shader
(BindingError), and run-time failures (ExecutionError naming the instruction, workgroup and lane).
A failed dispatch must leave every array the caller passed exactly as it was.

Shaders: tests/shaders/bad_index.comp (indices from a buffer, unchecked) and barrier_spin.comp
(a barrier in divergent code; a loop that never ends). The byte offsets the tests expect come from
walking the module's words here, not from jitcoop."""
import struct

import numpy as np
import pytest

import jitcoop
from jitcoop import BindingError, ExecutionError, SpirvError
from conftest import SHADERS

BASE = (SHADERS / "bad_index.spv").read_bytes()
OP_LOAD, OP_STORE, OP_CONTROL_BARRIER, OP_CAPABILITY, OP_NAME = 61, 62, 224, 17, 5
OP_TYPE_VECTOR, OP_FUNCTION, OP_DECORATE = 23, 54, 71


def words(data):
    return list(struct.unpack(f"<{len(data) // 4}I", data[: len(data) // 4 * 4]))


def instructions(data):
    """(byte offset, opcode, word count, operand words) of each instruction after the header."""
    w = words(data)
    out, i = [], 5
    while i < len(w):
        n = w[i] >> 16
        out.append((4 * i, w[i] & 0xFFFF, n, w[i + 1:i + n]))
        i += max(n, 1)
    return out


INS = instructions(BASE)


def first(opcode, pred=lambda ops: True, data=BASE):
    return next(i for i in instructions(data) if i[1] == opcode and pred(i[3]))


def opcode_at(data, offset):
    return words(data)[offset // 4] & 0xFFFF


def patch(data, offset, *new_words):
    b = bytearray(data)
    b[offset:offset + 4 * len(new_words)] = struct.pack(f"<{len(new_words)}I", *new_words)
    return bytes(b)


@pytest.fixture(scope="module")
def device():
    return jitcoop.Device()


def load_error(device, data):
    with pytest.raises(SpirvError) as info:
        device.load(data)
    return info.value


# -- malformed modules -----------------------------------------------------------------------------

def test_reference_module_is_valid(device):
    assert device.load(BASE).entry_points == ["main"]


@pytest.mark.parametrize("n", [0, 4, 19])
def test_truncated_header(device, n):
    e = load_error(device, BASE[:n])
    assert e.offset == 0


def test_size_not_a_multiple_of_four(device):
    e = load_error(device, BASE[:-1])
    assert e.offset == len(BASE) // 4 * 4 - 4      # where the incomplete word starts


def test_bad_magic(device):
    e = load_error(device, patch(BASE, 0, 0x07230204))
    assert e.offset == 0


def test_big_endian_module_is_read(device):
    """SPIR-V may be stored in either byte order; the magic number tells which."""
    w = words(BASE)
    assert device.load(struct.pack(f">{len(w)}I", *w)).entry_points == ["main"]


def _cut_points():
    """Instructions of different sections (capability, debug, decoration, type, function body)."""
    picks = [first(OP_CAPABILITY), first(OP_NAME, lambda o: len(o) > 1), first(OP_DECORATE),
             first(OP_TYPE_VECTOR), first(OP_LOAD), [i for i in INS if i[1] == OP_STORE][-1]]
    return [pytest.param(off, n, id=f"op{op}@{off}") for off, op, n, _ in picks]


@pytest.mark.parametrize("offset, nwords", _cut_points())
def test_truncated_inside_an_instruction(device, offset, nwords):
    """The module ends in the middle of an instruction: the error names that instruction."""
    assert nwords >= 2
    e = load_error(device, BASE[:offset + 4 * (nwords - 1)])
    assert e.offset == offset
    e = load_error(device, BASE[:offset + 4 * (nwords - 1) + 2])        # and mid-word
    assert e.offset is not None and offset <= e.offset <= offset + 4 * nwords


@pytest.mark.parametrize("offset, nwords", _cut_points())
def test_truncated_between_instructions(device, offset, nwords):
    """The module ends cleanly after an instruction but lacks what follows (types, the function
    the entry point names, OpFunctionEnd): a SpirvError from load() or kernel(), never another
    exception; one that names an instruction gives an offset inside the module."""
    cut = BASE[:offset + 4 * nwords]
    with pytest.raises(SpirvError) as info:
        device.load(cut).kernel("main")
    e = info.value
    assert e.offset is None or 0 <= e.offset <= len(cut)


@pytest.mark.parametrize("which", [10, 40, 100])
def test_word_count_zero(device, which):
    off, op, n, _ = INS[which]
    e = load_error(device, patch(BASE, off, op))
    assert e.offset == off


@pytest.mark.parametrize("which", [10, 40, 100])
def test_unknown_opcode(device, which):
    off, op, n, _ = INS[which]
    e = load_error(device, patch(BASE, off, (n << 16) | 0x7FF0))
    assert e.offset == off


def test_word_count_past_the_end(device):
    off, op, n, _ = INS[30]
    e = load_error(device, patch(BASE, off, (0xFFFF << 16) | op))
    assert e.offset == off


def test_result_id_not_below_the_bound(device):
    off, _, _, ops = first(OP_LOAD)
    bound = words(BASE)[3]
    e = load_error(device, patch(BASE, off + 8, bound + 7))
    assert e.offset == off


def test_result_id_defined_twice(device):
    loads = [i for i in INS if i[1] == OP_LOAD]
    off, _, _, ops = loads[-1]
    e = load_error(device, patch(BASE, off + 8, loads[0][3][1]))
    assert e.offset == off


@pytest.mark.parametrize("what, word", [("pointer operand", 3), ("result type", 1)])
def test_undefined_id(device, what, word):
    """An OpLoad whose pointer operand or result type names an id nothing defines (below the id
    bound, which the header raises by 10): a SpirvError naming the load, at load()."""
    off, _, _, ops = [i for i in INS if i[1] == OP_LOAD][-1]
    bound = words(BASE)[3]
    bad = patch(patch(BASE, 12, bound + 10), off + 4 * word, bound + 5)
    e = load_error(device, bad)
    assert e.offset == off


def test_unsupported_capability(device):
    off, _, _, ops = first(OP_CAPABILITY, lambda o: o == [1])          # Shader
    e = load_error(device, patch(BASE, off + 4, 6))                    # -> Kernel
    assert "Kernel" in str(e)


def test_unknown_entry_point(device):
    with pytest.raises(SpirvError, match="nope"):
        device.load(BASE).kernel("nope")


# -- bindings that do not fit -------------------------------------------------------------------

N = 192                  # invocations of a (2, 3, 1) grid of 32


def _arrays(rng):
    data = rng.integers(0, 2**32, N, dtype=np.uint32)
    idx = np.stack([np.arange(N), rng.permutation(N)], 1).astype(np.uint32)     # (ri, wi)
    u = rng.integers(0, 2**32, 16, dtype=np.uint32)
    o = np.full(N, 7, np.uint32)
    return data, idx, u, o


PUSH = np.array([3, 100], np.uint32)


def _expected(data, idx, u, push):
    data2 = (data.astype(np.uint64) * 3 + 1) % 2**32
    o = np.zeros(N, np.uint64)
    g = np.arange(N)
    o[idx[:, 1]] = (data2[idx[:, 0]] * int(push[0]) + int(push[1]) + u.reshape(4, 4)[g & 3, 3]) % 2**32
    return data2.astype(np.uint32), o.astype(np.uint32)


@pytest.fixture(scope="module", params=["optimized", "fast"])
def bad_index(kc, request):
    """The kernel at each compile tier (jitcoop.runtime.tiers): a failure names the same
    instruction, workgroup and lane at both."""
    return kc.module("bad_index").kernel("main", tier=request.param)


def test_valid_dispatch(bad_index, rng):
    data, idx, u, o = _arrays(rng)
    want_data, want_o = _expected(data, idx, u, PUSH)
    bad_index.dispatch((2, 3, 1), {0: data, 1: idx, 2: u, (1, 3): o}, push=PUSH)
    np.testing.assert_array_equal(data, want_data)
    np.testing.assert_array_equal(o, want_o)


def _snap(*arrays):
    return [a.copy() for a in arrays]


def _untouched(arrays, copies):
    for a, c in zip(arrays, copies):
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("case", ["missing", "too_small", "unused", "bad_key", "not_an_array"])
def test_binding_errors(bad_index, rng, case):
    data, idx, u, o = _arrays(rng)
    b = {0: data, 1: idx, 2: u, (1, 3): o}
    if case == "missing":
        del b[(1, 3)]
    elif case == "too_small":
        b[2] = u[:15]                         # the std140 block needs 64 bytes
    elif case == "unused":
        b[(0, 3)] = o.copy()                  # (set 1, binding 3) is used, (set 0, binding 3) not
    elif case == "bad_key":
        b[(0, 1, 2)] = o.copy()
    else:
        b[0] = data.tolist()
    copies = _snap(data, idx, u, o)
    with pytest.raises(BindingError):
        bad_index.dispatch((2, 3, 1), b, push=PUSH)
    _untouched([data, idx, u, o], copies)


@pytest.mark.parametrize("push", [None, b"", np.array([3], np.uint32), b"\0" * 7],
                         ids=["none", "empty", "4_bytes", "7_bytes"])
def test_push_too_small(bad_index, rng, push):
    data, idx, u, o = _arrays(rng)
    copies = _snap(data, o)
    with pytest.raises(BindingError):
        bad_index.dispatch((2, 3, 1), {0: data, 1: idx, 2: u, (1, 3): o}, push=push)
    _untouched([data, o], copies)


def test_unknown_spec_id(kc):
    with pytest.raises(BindingError):
        kc.module("bad_index").kernel("main", spec={7: 1})


# -- run-time errors --------------------------------------------------------------------------------

def _oob_load_offset():
    """Byte offset of the OpLoad of data[ix.x]: the one load in the module whose pointer is an
    access chain on the Data variable (binding 0) indexed by a value that was itself loaded."""
    chains = {i[3][1]: i[3][2:] for i in INS if i[1] == 65}           # OpAccessChain: id -> base, idx
    decos = [(i[3][0], i[3][2]) for i in INS if i[1] == OP_DECORATE and i[3][1] == 33]   # Binding
    data_var = next(v for v, b in decos if b == 0 and any(
        d[3][0] == v and d[3][1] == 34 and d[3][2] == 0 for d in INS if d[1] == OP_DECORATE))
    loaded = {i[3][1] for i in INS if i[1] == OP_LOAD}
    cands = [i for i in INS if i[1] == OP_LOAD and i[3][2] in chains
             and chains[i[3][2]][0] == data_var and chains[i[3][2]][2] in loaded]
    # data[g] (read before the write) is indexed by a loaded `g` too; the OOB one is the last
    return cands[-1][0], cands[-1][3][1]


@pytest.mark.parametrize("wg, lane, threads", [((1, 2, 0), 5, None), ((0, 0, 0), 0, 1),
                                                ((1, 1, 0), 31, None)])
@pytest.mark.parametrize("kind", ["read", "write", "read_huge"])
def test_out_of_bounds(bad_index, rng, kind, wg, lane, threads):
    data, idx, u, o_full = _arrays(rng)
    o_full = np.full(2 * N, 7, np.uint32)
    o = o_full[::2]                            # not contiguous: jitcoop works on a copy
    g = wg[0] * 32 + lane + 64 * wg[1]
    if kind == "read":
        idx[g, 0] = N + 3
    elif kind == "read_huge":
        idx[g, 0] = 0xFFFFFFFF
    else:
        idx[g, 1] = N
    copies = _snap(data, idx, u, o_full)
    with pytest.raises(ExecutionError) as info:
        bad_index.dispatch((2, 3, 1), {0: data, 1: idx, 2: u, (1, 3): o}, push=PUSH,
                           threads=threads)
    e = info.value
    assert e.workgroup == wg and e.lane == lane
    if kind == "write":
        assert e.opname == "OpStore" and opcode_at(BASE, e.offset) == OP_STORE
    else:
        off, rid = _oob_load_offset()
        assert e.opname == "OpLoad" and e.offset == off and e.result_id == rid
    _untouched([data, idx, u, o_full], copies)
    # the kernel still works afterwards
    data, idx, u, o = _arrays(rng)
    want_data, want_o = _expected(data, idx, u, PUSH)
    bad_index.dispatch((2, 3, 1), {0: data, 1: idx, 2: u, (1, 3): o}, push=PUSH)
    np.testing.assert_array_equal(o, want_o)


@pytest.mark.parametrize("bad", [3, 20])
def test_barrier_in_divergent_code(kc, bad):
    k = kc("barrier_spin", spec={0: False})
    flag = np.zeros(32, np.uint32)
    flag[bad] = 1
    copy = flag.copy()
    with pytest.raises(ExecutionError) as info:
        k.dispatch((2, 1, 1), {0: flag})
    e = info.value
    assert e.opname == "OpControlBarrier" and opcode_at((SHADERS / "barrier_spin.spv").read_bytes(),
                                                       e.offset) == OP_CONTROL_BARRIER
    assert e.workgroup == (bad // 16, 0, 0)
    np.testing.assert_array_equal(flag, copy)
    flag = np.zeros(32, np.uint32)                # uniform: every invocation at both barriers
    k.dispatch((2, 1, 1), {0: flag})
    np.testing.assert_array_equal(flag, 11)


def test_timeout_stops_a_spinning_shader(kc):
    k = kc("barrier_spin", spec={0: True})
    flag = np.zeros(64, np.uint32)
    copy = flag.copy()
    with pytest.raises(ExecutionError, match="timeout"):
        k.dispatch((4, 1, 1), {0: flag}, timeout=0.3)
    np.testing.assert_array_equal(flag, copy)
