"""jitcoop/kernels/codes.py's tables against the walk their docstrings describe, written out as
loops: `source_table` is the last write of a walk over lanes, then elements."""
import numpy as np
import pytest

from jitcoop.kernels import codes


def _walk(tab):
    inv, L = tab.shape
    src = np.full((2, int(tab.max()) + 1), -1, np.int32)
    for l in range(inv):
        for e in range(L):
            src[0, tab[l, e]] = e
            src[1, tab[l, e]] = l
    return src


@pytest.mark.parametrize("inv,L,n", [(32, 8, 256), (256, 64, 16384), (4, 6, 9), (1, 5, 5), (8, 8, 40)])
def test_source_table_is_the_walks_last_write(inv, L, n):
    rng = np.random.default_rng(inv * 1000 + L)
    tabs = [rng.integers(0, n, (inv, L)),                              # repeats and holes
            np.arange(inv * L).reshape(L, inv).T % n]                  # striped, wrapped
    if inv * L == n:
        tabs.append(rng.permutation(n).reshape(inv, L))                # each element once
    for tab in tabs:
        assert np.array_equal(codes.source_table(tab), _walk(tab))


def test_read_table_of_a_replicated_layout():
    """Two lanes hold each element (a 2 x 2 matrix over 4 lanes of 2 elements): the copy read
    is the higher lane's, at e * W + lane."""
    tab = np.array([[0, 1], [2, 3], [0, 1], [2, 3]])
    assert codes.read_table(tab, W=8).tolist() == [0 * 8 + 2, 1 * 8 + 2, 0 * 8 + 3, 1 * 8 + 3]
