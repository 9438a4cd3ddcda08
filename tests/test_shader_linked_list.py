"""GL_EXT_buffer_reference (tests/shaders/linked_list.comp): invocations walk linked lists whose
nodes live in one `dev.buffer`, with next pointers computed here from `buf.address`; lists share
tails (atomic visit counts on the nodes), pointers are stored to a binding, converted to and from
integers for array addressing, and come from push constants. Bad pointers are ExecutionErrors
that leave every buffer as it was."""
import numpy as np
import pytest

import jitcoop

NODE = np.dtype([("value", "<i4"), ("hits", "<i4"), ("next", "<u8")])
RESULT = np.dtype([("count", "<i4"), ("sum", "<i4"), ("last", "<u8")])
PUSH = np.dtype([("scale", "<u8"), ("nodes_base", "<u8"), ("n_nodes", "<u4"), ("pad", "<u4")])


def test_host_layouts():
    assert NODE.itemsize == 16 and NODE.fields["next"][1] == 8
    assert RESULT.itemsize == 16 and RESULT.fields["last"][1] == 8


def build(rng, dev, n_nodes, n_inv):
    """Nodes in one buffer; each node's successor is a random node with a larger index (so every
    walk ends) or null. Heads: a random node per invocation, or null."""
    nodes = np.zeros(n_nodes, NODE)
    buf = dev.buffer(nodes)
    nodes = buf.array                            # the array the device reads and writes
    nodes["value"] = rng.integers(-1000, 1000, n_nodes)
    nxt = np.full(n_nodes, -1)
    for i in range(n_nodes - 1):
        if rng.random() < 0.85:
            nxt[i] = rng.integers(i + 1, min(n_nodes, i + 8))
    nodes["next"] = np.where(nxt >= 0, buf.address + NODE.itemsize * nxt, 0)
    head_idx = rng.integers(0, n_nodes, n_inv)
    head_idx[rng.random(n_inv) < 0.1] = -1
    heads = np.where(head_idx >= 0, buf.address + NODE.itemsize * head_idx, 0).astype(np.uint64)
    return buf, nodes, nxt, head_idx, heads


def walk_reference(nodes_value, nxt, head_idx, base):
    n = len(head_idx)
    res = np.zeros(n, RESULT)
    hits = np.zeros(len(nxt), np.int64)
    for g, h in enumerate(head_idx):
        count = s = 0
        last = 0
        p = h
        while p >= 0:
            s += int(nodes_value[p]) * (count + 1)
            hits[p] += 1
            last = base + NODE.itemsize * p
            p = nxt[p]
            count += 1
        res[g] = (count, s, last)                # |s| stays far below 2**31 here
    return res, hits


@pytest.mark.parametrize("threads", [1, 2])
def test_linked_list_walk(kc, rng, threads):
    k = kc("linked_list")
    dev = k.device
    n_nodes, nwg = 300, 6
    n = 32 * nwg
    buf, nodes, nxt, head_idx, heads = build(rng, dev, n_nodes, n)
    values = nodes["value"].copy()
    scale_buf = dev.buffer(rng.standard_normal(n).astype(np.float32))
    scale0 = scale_buf.array.copy()
    results = np.zeros(n, RESULT)
    push = np.zeros(1, PUSH)
    push["scale"], push["nodes_base"], push["n_nodes"] = scale_buf.address, buf.address, n_nodes
    k.dispatch((nwg, 1, 1), {0: heads, 1: results}, push=push, threads=threads)
    want, hits = walk_reference(values, nxt, head_idx, buf.address)
    np.testing.assert_array_equal(results["count"], want["count"])
    np.testing.assert_array_equal(results["sum"], want["sum"])
    np.testing.assert_array_equal(results["last"], want["last"])
    np.testing.assert_array_equal(nodes["hits"], hits)
    np.testing.assert_array_equal(nodes["value"], values)
    g = np.arange(n)
    np.testing.assert_array_equal(scale_buf.array,
                                  values[g % n_nodes].astype(np.float32) * scale0)


@pytest.mark.parametrize("where", ["unmapped", "past_the_end", "misaligned_into_next_buffer"])
def test_bad_next_pointer(kc, rng, where):
    """One list's pointer leads outside every buffer (or runs off the end of the node buffer):
    ExecutionError at an OpLoad/atomic through the pointer, naming the workgroup and lane of the
    first invocation to follow it, and every buffer - device buffers too - restored."""
    k = kc("linked_list")
    dev = k.device
    n_nodes, nwg = 40, 2
    n = 64
    buf, nodes, nxt, head_idx, heads = build(rng, dev, n_nodes, n)
    nxt[:] = -1
    nodes["next"] = 0                          # single-node lists...
    bad = {"unmapped": 16, "past_the_end": buf.address + NODE.itemsize * n_nodes,
           "misaligned_into_next_buffer": buf.address + NODE.itemsize * n_nodes - 8}[where]
    nodes["next"][7] = bad                     # ... except node 7, whose next is bad
    head_idx[:] = 3
    head_idx[37] = 7                           # only invocation 37 (workgroup 1, lane 5) gets there
    heads = (buf.address + NODE.itemsize * head_idx).astype(np.uint64)
    scale_buf = dev.buffer(np.ones(n, np.float32))
    results = np.full(n, 0x55, RESULT)
    before = [a.copy() for a in (nodes, scale_buf.array, results, heads)]
    push = np.zeros(1, PUSH)
    push["scale"], push["nodes_base"], push["n_nodes"] = scale_buf.address, buf.address, n_nodes
    with pytest.raises(jitcoop.ExecutionError) as info:
        k.dispatch((nwg, 1, 1), {0: heads, 1: results}, push=push)
    e = info.value
    assert e.workgroup == (1, 0, 0) and e.lane == 5
    assert e.opname in ("OpLoad", "OpAtomicIAdd")
    for a, b in zip((nodes, scale_buf.array, results, heads), before):
        np.testing.assert_array_equal(a, b)
