"""Memory: buffer_reference pointers, std140 vs std430 layouts built by hand, 8/16-bit storage,
row-major matrices, and atomics (64-bit too) from many workgroups on several threads."""
import struct

import numpy as np
import pytest

import jitcoop
from conftest import SHADERS


def _std140_and_430():
    """The same values laid out by the GLSL rules, written byte by byte from the spec."""
    p, w, m, arr = (1.0, 2.0, 3.0), 4.0, ((5.0, 6.0), (7.0, 8.0)), (9.0, 10.0)
    v = [(11.0 + 4 * k, 12.0 + 4 * k, 13.0 + 4 * k, 14.0 + 4 * k) for k in range(3)]
    f = (23.0, 24.0, 25.0)
    u = bytearray(176)
    # std140: struct S at 0 (align 16): vec3 p @0, float w @12, mat2 columns stride 16 @16, @32,
    # float arr[2] stride 16 @48, @64 -> size 80; vec4 v[3] @80; float f[3] stride 16 @128.
    struct.pack_into("<3ff", u, 0, *p, w)
    struct.pack_into("<2f", u, 16, *m[0]); struct.pack_into("<2f", u, 32, *m[1])
    struct.pack_into("<f", u, 48, arr[0]); struct.pack_into("<f", u, 64, arr[1])
    for k in range(3):
        struct.pack_into("<4f", u, 80 + 16 * k, *v[k])
        struct.pack_into("<f", u, 128 + 16 * k, f[k])
    b = bytearray(96)
    # std430: p @0, w @12, mat2 columns stride 8 @16, @24, arr stride 4 @32, @36 -> size 48 (align 16);
    # v[3] @48; f[3] stride 4 @96... rounded: v ends at 96, f @96..108.
    b = bytearray(112)
    struct.pack_into("<3ff", b, 0, *p, w)
    struct.pack_into("<4f", b, 16, *m[0], *m[1])
    struct.pack_into("<2f", b, 32, *arr)
    for k in range(3):
        struct.pack_into("<4f", b, 48 + 16 * k, *v[k])
    struct.pack_into("<3f", b, 96, *f)
    i = np.arange(32)
    ref = p[1] + w + m[1][0] + arr[1] + np.array([v[k][2] for k in i % 3]) + np.array([f[k] for k in i % 3])
    return np.frombuffer(bytes(u), np.uint8).copy(), np.frombuffer(bytes(b), np.uint8).copy(), ref


@pytest.fixture(scope="module")
def memory_kernel():
    dev = jitcoop.Device()
    return dev, dev.load(SHADERS / "core" / "memory.spv").kernel()


def test_linked_list_layouts_and_small_types(memory_kernel):
    dev, k = memory_kernel
    # five nodes {int value; Node next;}: value @0, next @8, 16 bytes each, in one device buffer
    nodes = np.zeros(5 * 16, np.uint8)
    buf = dev.buffer(nodes)
    order = [3, 0, 4, 1, 2]                  # walk the nodes out of memory order
    for n, (cur, nxt) in enumerate(zip(order, order[1:] + [None])):
        struct.pack_into("<i", nodes, 16 * cur, 10 * (n + 1))
        struct.pack_into("<Q", nodes, 16 * cur + 8, 0 if nxt is None else buf.address + 16 * nxt)
    inb = np.zeros(8 + 32 + 64, np.uint8)
    struct.pack_into("<Q", inb, 0, buf.address + 16 * order[0])
    i8 = (np.arange(32) * 9 - 100).astype(np.int8)
    u16 = (np.arange(32) * 2000 + 7).astype(np.uint16)
    inb[8:40] = i8.view(np.uint8)
    inb[40:104] = u16.view(np.uint8)
    u140, b430, ref = _std140_and_430()
    out = np.zeros(24 + 96 * 4, np.uint8)
    struct.pack_into("<qqQ", out, 0, 0, 2 ** 62, 0)
    rows = np.zeros(48, np.float32)
    rows[:6] = [1, 2, 3, 4, 5, 6]            # row_major mat2x3: 3 rows of (c0, c1), stride 8
    k.dispatch(1, {0: u140, 1: b430, 2: out, 3: inb, 4: rows})
    total, mn, orr = struct.unpack_from("<qqQ", out, 0)
    assert total == 32 * 150 * 10 ** 9 + sum(range(32))
    assert mn == int(i8.min()) * 10 ** 12
    assert orr == sum(1 << (i + 20) for i in range(32))
    o = out[24:].view(np.float32)
    np.testing.assert_array_equal(o[:32], ref.astype(np.float32))
    np.testing.assert_array_equal(o[32:64], ref.astype(np.float32))
    np.testing.assert_array_equal(o[64:96], u16.astype(np.float32) + i8.astype(np.float32))
    # row_major mat2x3 in std430: 3 rows, each a vec2, MatrixStride 8
    rm = rows[:6].reshape(3, 2)              # [row][col]
    # column-major at offset 32 (a vec3 column aligns to 16): columns at bytes 32 and 48
    cm = np.stack([rows[8:11], rows[12:15]])
    np.testing.assert_array_equal(cm, np.array([[1, 3, 5], [2, 4, 6]], np.float32))
    assert rm[2, 1] == 99.0


def test_a_pointer_outside_every_buffer_is_an_error(memory_kernel):
    dev, k = memory_kernel
    inb = np.zeros(104, np.uint8)
    struct.pack_into("<Q", inb, 0, 0x1234_5678_9000)      # not an address the device handed out
    u140, b430, _ = _std140_and_430()
    out = np.arange(24 + 96 * 4, dtype=np.uint8)
    before = out.copy()
    with pytest.raises(jitcoop.ExecutionError) as e:
        k.dispatch(1, {0: u140, 1: b430, 2: out, 3: inb, 4: np.zeros(48, np.float32)})
    assert e.value.opname == "OpLoad" and e.value.lane == 0 and e.value.workgroup == (0, 0, 0)
    assert "outside every buffer" in str(e.value)
    np.testing.assert_array_equal(out, before)


def test_atomics_from_many_workgroups_are_exact():
    k = jitcoop.Device().load(SHADERS / "core" / "atomics.spv").kernel()
    n = 64 * 40
    c = np.zeros(64 + 4 * n, np.uint8)
    struct.pack_into("<Qqq", c, 0, 0, 2 ** 62, -2 ** 62)
    struct.pack_into("<i", c, 36, 2 ** 31 - 1)
    k.dispatch(40, {0: c}, threads=2)
    s64, mn, mx, orr = struct.unpack_from("<QqqQ", c, 0)
    g = np.arange(n, dtype=np.uint64)
    assert s64 == int((g * 2 ** 32 + 1).sum()) % 2 ** 64
    assert mn == -(n - 1) * 3000000000 and mx == (n - 1) * 3000000000
    assert orr == 2 ** 64 - 1
    cnt, smin, umax, xr, cas = struct.unpack_from("<IiIII", c, 32)
    fsum = struct.unpack_from("<f", c, 52)[0]
    assert cnt == n and smin == -1000 and umax == 3 * (n - 1)
    assert xr == int(np.bitwise_xor.reduce(np.arange(n)))
    assert 64 <= cas <= n
    assert fsum == 0.5 * n
    slots = c[56:56 + 4 * n].view(np.uint32)
    assert sorted(slots.tolist()) == list(range(1, n + 1))


def test_float_copies_move_the_bits():
    """A 16- or 8-bit float loaded only to be stored moves as its bits, as on a GPU: signalling
    NaNs keep their payload and quiet bit, -0 and subnormals stay. Every fp8 code is copied; the
    float16/bfloat16 inputs hold each kind of special value. A converted use of the same values
    (a float32 sum, checked with numpy) still converts."""
    rng = np.random.default_rng(5)
    specials16 = [0x7C01, 0xFC01, 0x7D55, 0x7E00, 0xFE01, 0x7C00, 0xFC00, 0x8000, 0x0000,
                  0x0001, 0x83FF, 0x7BFF]
    specials_bf = [0x7F81, 0xFF81, 0x7FA5, 0x7FC0, 0xFFC1, 0x7F80, 0xFF80, 0x8000, 0x0001,
                   0x807F, 0x7F7F, 0x0080]
    ih = rng.integers(0, 1 << 16, 256).astype(np.uint16)
    ib = rng.integers(0, 1 << 16, 256).astype(np.uint16)
    ih[:len(specials16)] = specials16
    ib[:len(specials_bf)] = specials_bf
    i4 = np.arange(256, dtype=np.uint8)
    i5 = np.arange(256, dtype=np.uint8)[::-1].copy()
    oh, ob = np.zeros(256, np.uint16), np.zeros(256, np.uint16)
    o4, o5 = np.zeros(256, np.uint8), np.zeros(256, np.uint8)
    of = np.zeros(256, np.float32)
    k = jitcoop.Device().load(SHADERS / "core" / "bitcopy.spv").kernel()
    k.dispatch(4, {0: ih, 1: ib, 2: i4, 3: i5, 4: oh, 5: ob, 6: o4, 7: o5, 8: of})
    np.testing.assert_array_equal(oh, ih.reshape(4, 64)[:, ::-1].reshape(-1))
    np.testing.assert_array_equal(ob, ib)
    np.testing.assert_array_equal(o4, i4)
    np.testing.assert_array_equal(o5, i5)
    with np.errstate(invalid="ignore"):      # inf + -inf among the special values
        ref = ih.view(np.float16).astype(np.float32) + (ib.astype(np.uint32) << 16).view(np.float32)
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(of[ok], ref[ok])
    assert np.isnan(of[~ok]).all()


@pytest.mark.parametrize("tier", ["fast", "optimized"])
def test_whole_values_of_16_bit_floats_convert_each_element(tier):
    """A value of sixteen float16 (or bfloat16) elements loaded and stored whole is moved eight
    elements at a time (one vector conversion each): every element widens exactly (NaN payloads
    and signalling bits kept, as numpy's widening keeps them; -0, subnormals, infinities), and
    2x rounds to nearest even on the way back, a NaN staying a NaN."""
    import ml_dtypes
    rng = np.random.default_rng(11)
    n = 128
    ih = rng.integers(0, 1 << 16, (n, 16)).astype(np.uint16)
    ib = rng.integers(0, 1 << 16, (n, 16)).astype(np.uint16)
    ih[0] = [0x7C01, 0xFC01, 0x7D55, 0x7E00, 0xFE01, 0x7C00, 0xFC00, 0x8000,
             0x0000, 0x0001, 0x83FF, 0x7BFF, 0x3C00, 0x3555, 0x0400, 0x7BFE]
    ib[0] = [0x7F81, 0xFF81, 0x7FA5, 0x7FC0, 0xFFC1, 0x7F80, 0xFF80, 0x8000,
             0x0001, 0x807F, 0x7F7F, 0x0080, 0x3F80, 0x3EAB, 0x7F00, 0x7F7E]
    of = np.zeros(32 * n, np.float32)
    oh, ob = np.zeros((n, 16), np.uint16), np.zeros((n, 16), np.uint16)
    k = jitcoop.Device().load(SHADERS / "core" / "half_runs.spv").kernel(tier=tier)
    assert "@jc.f16_to_f32.v8" in k.source and "@jc.f32_to_bf16.v8" in k.source
    k.dispatch(n // 64, {0: ih, 1: ib, 2: of, 3: oh, 4: ob})

    wide_h = ih.view(np.float16).astype(np.float32)            # numpy keeps NaN payloads
    wide_b = (ib.astype(np.uint32) << 16).view(np.float32)
    got = of.reshape(n, 32).view(np.uint32)
    np.testing.assert_array_equal(got[:, :16], wide_h.view(np.uint32))
    np.testing.assert_array_equal(got[:, 16:], wide_b.view(np.uint32))
    with np.errstate(over="ignore", invalid="ignore"):
        want_h = (wide_h * 2).astype(np.float16)
        want_b = (wide_b * 2).astype(ml_dtypes.bfloat16)
    for out, want in ((oh.view(np.float16), want_h), (ob.view(ml_dtypes.bfloat16), want_b)):
        nan = np.isnan(want.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(out.astype(np.float32)), nan)
        np.testing.assert_array_equal(out.view(np.uint16)[~nan], want.view(np.uint16)[~nan])


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("fail_from", [1, 2000, 32767])
def test_a_failed_dispatch_leaves_large_buffers_as_they_were(threads, fail_from):
    """The buffers a dispatch writes are copied before it runs, by all its threads, a piece
    each (runtime.snapshot): 8 MB of `o` are many pieces. Every workgroup writes its slice of `o`;
    workgroups from `fail_from` on store past the end of `s`. The error names the first failing
    workgroup, as on one thread, and both arrays come back as they were, bit for bit; with no
    failing workgroup, `o` holds what each invocation wrote."""
    k = jitcoop.Device().load(SHADERS / "core" / "fail_late.spv").kernel()
    rng = np.random.default_rng(fail_from)
    n_wg = 32768
    o = rng.integers(0, 2 ** 32, 64 * n_wg, dtype=np.uint64).astype(np.uint32)
    s = rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(np.uint32)
    o0, s0 = o.copy(), s.copy()
    with pytest.raises(jitcoop.ExecutionError) as e:
        k.dispatch(n_wg, {0: o, 1: s}, push=np.array([fail_from], np.uint32), threads=threads)
    assert e.value.opname == "OpStore" and e.value.workgroup == (fail_from, 0, 0)
    np.testing.assert_array_equal(o, o0)
    np.testing.assert_array_equal(s, s0)
    k.dispatch(n_wg, {0: o, 1: s}, push=np.array([n_wg], np.uint32), threads=threads)
    i = np.arange(64 * n_wg, dtype=np.uint64)
    np.testing.assert_array_equal(o, (i * 2654435761 % 2 ** 32).astype(np.uint32))
    np.testing.assert_array_equal(s, s0)


def _drive_alone(snapshot=None, zero=(0, 0, 0, 0, 0, 0), next_piece=0, cancel_after=None):
    """One dispatch thread's driver (runtime.driver) with no workgroup to run: it zeroes `zero`
    ((address, bytes) x 3) and copies pieces of `snapshot` from `next_piece` on (the ones before
    taken by a thread that never copies them); the dispatch is cancelled after `cancel_after`
    seconds (0: from the start). Returns its plan and the seconds it took."""
    import threading
    import time
    from jitcoop.runtime import driver, watch
    cancel = np.zeros(1, np.int64)
    plan = np.zeros(driver.PLAN_SIZE, np.int64)
    plan[driver.PLAN_CANCEL] = cancel.ctypes.data         # PLAN_END 0: no kernel is called
    if snapshot is not None:
        plan[driver.PLAN_NPIECES] = len(snapshot.pieces)
        plan[driver.PLAN_PIECES] = snapshot.pieces.ctypes.data
        plan[driver.PLAN_COPIED] = snapshot.copied.ctypes.data
        plan[driver.PLAN_NEXT_PIECE] = next_piece
    thread = np.zeros(driver.THREAD_SIZE, np.int64)
    thread[driver.THREAD_ZERO:driver.THREAD_ZERO + 6] = zero
    timer = None
    if cancel_after == 0:
        cancel[0] = watch.INTERRUPTED
    elif cancel_after is not None:
        timer = threading.Timer(cancel_after, lambda: cancel.__setitem__(0, watch.INTERRUPTED))
        timer.start()
    t0 = time.perf_counter()
    assert driver.drive()(plan.ctypes.data, thread.ctypes.data) == 0
    seconds = time.perf_counter() - t0
    if timer is not None:
        timer.join()
    return plan, seconds


def test_a_cancelled_snapshot_restores_only_what_it_copied():
    """The pieces of the snapshot (runtime.snapshot) are copied by the dispatch's threads
    (runtime.driver). Pieces 0 and 1 taken by a thread that never copied them (a thread
    cancelled first): this thread copies 2-4, waits for the others, gives up once the dispatch
    is cancelled (running no kernel), and restore() puts back the pieces it copied, never the
    uninitialised copies of the others. Cancelled before it starts, a thread copies nothing."""
    from jitcoop.runtime import driver, snapshot as S
    rng = np.random.default_rng(7)
    buf = rng.integers(0, 256, 4 * S.PIECE + 100, dtype=np.uint8)
    before = buf.copy()
    snap = S.Snapshot([buf])
    snap.copies[0].fill(0xEE)               # what a piece's copy holds until it is copied
    assert snap.pieces[:, 2].tolist() == [S.PIECE] * 4 + [100]
    plan, waited = _drive_alone(snap, next_piece=2, cancel_after=0.3)
    assert waited >= 0.25                   # it waited for pieces 0 and 1 until cancelled
    assert snap.copied.tolist() == [0, 0, 1, 1, 1]
    assert plan[driver.PLAN_PIECES_DONE] == 3
    buf[:] = 0
    snap.restore()
    np.testing.assert_array_equal(buf[2 * S.PIECE:], before[2 * S.PIECE:])
    assert not buf[:2 * S.PIECE].any()
    again = S.Snapshot([buf])
    plan, _ = _drive_alone(again, cancel_after=0)
    assert not again.copied.any() and plan[driver.PLAN_NEXT_PIECE] == 0


def test_kept_scratch_memory_is_zeroed_before_use():
    """The generated code relies on zeroed work memory (filled with 0xA5 instead, 288 tests of
    the suite fail), and a dispatch's shared, private and work memory is kept for the next
    dispatch of any kernel of the same sizes (runtime.dispatch._ScratchPool): a kept set comes
    back marked for zeroing, and the thread that uses it zeroes all of it (runtime.driver),
    whatever the last dispatch left in it; a fresh one is zero and not zeroed again."""
    from jitcoop.runtime.dispatch import _ScratchPool
    pool = _ScratchPool()
    sizes = (64, 32, 4096)
    first = pool.take(sizes)
    assert all(not a.any() for a in first.arrays)
    assert first.zero()[1::2] == (0, 0, 0)
    for a in first.arrays:
        a.fill(0xA5)
    pool.give(sizes, [first])
    again = pool.take(sizes)
    assert again is first                       # the same memory, kept
    assert again.zero()[1::2] == sizes
    _drive_alone(zero=again.zero())
    assert all(not a.any() for a in again.arrays)


def test_the_dispatching_thread_returns_after_the_threads_that_started():
    """The dispatching thread's driver (runtime.driver, THREAD_LAST) returns only once every
    thread that started has ended, so the dispatch can return without waiting for the workers'
    Python; a thread that starts after that does nothing at all. Here a worker zeroes 256 MB of
    scratch memory (tens of milliseconds) while the dispatching thread has nothing to do: when
    it returns, the worker has ended."""
    import threading
    import time
    from jitcoop.runtime import driver
    big = np.ones(256 << 20, np.uint8)
    cancel = np.zeros(1, np.int64)
    plan = np.zeros(driver.PLAN_SIZE, np.int64)
    plan[driver.PLAN_CANCEL] = cancel.ctypes.data
    worker, last = np.zeros((2, driver.THREAD_SIZE), np.int64)
    worker[driver.THREAD_ZERO:driver.THREAD_ZERO + 2] = big.ctypes.data, big.nbytes
    last[driver.THREAD_LAST] = 1
    drive = driver.drive()
    w = threading.Thread(target=drive, args=(plan.ctypes.data, worker.ctypes.data))
    w.start()
    while plan[driver.PLAN_STARTED] == 0:            # the worker is in
        time.sleep(0.0002)
    assert drive(plan.ctypes.data, last.ctypes.data) == 0
    ended = int(plan[driver.PLAN_ENDED])
    w.join()
    assert ended == 2                               # the worker's end, then its own
    assert not big[::4096].any()
    assert plan[driver.PLAN_STARTED] == driver.CLOSED + 2
    # a thread starting now returns at once, touching nothing but the count of starts
    big[:] = 1
    assert drive(plan.ctypes.data, worker.ctypes.data) == 0
    assert big[::4096].all() and plan[driver.PLAN_ENDED] == 2 and plan[driver.PLAN_STARTED] == driver.CLOSED + 3
