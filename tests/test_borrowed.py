"""Borrowed views (``gym_crawl.crawl.bundles.borrowed``): inside a kernel, the same memory as the array they view,
without its reference — what the batched step binds its arrays through."""
from __future__ import annotations

import sys

import numpy as np
from numba import njit

from gym_crawl.crawl.bundles import (
    BorrowedArray,
    borrowed,
    borrowed_graph,
    borrowed_row,
    borrowed_work,
    fetch_work,
    link_graph,
)


@njit(cache=False)
def _write_through(a, i, v):
    b = borrowed(a)
    b[i] = v
    return b[i], b.shape[0], b.strides[0]


@njit(cache=False)
def _rows_through(a, i):
    b = borrowed(a)
    r = b[i]
    r[:] = r * 2
    return b.shape, b.strides


@njit(cache=False)
def _graph_sum(g):
    h = borrowed_graph(g)
    return h.link_lo.sum() + h.link_hi.sum() + h.link_dst.sum() + h.page_domain.sum(), h.link_dst.shape[0]


@njit(cache=False)
def _work_write(w):
    v = borrowed_work(w)
    v.t_sl[1] = 7
    v.t_ord[0] = 5
    return v.t_key.shape[0]


def test_a_borrowed_view_reads_and_writes_the_arrays_memory():
    a = np.arange(10, dtype=np.int32)
    assert _write_through(a, 3, 42) == (42, 10, 4)
    assert a[3] == 42
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    want = m.copy()
    want[1] *= 2
    assert _rows_through(m, 1) == ((3, 4), (16, 4))
    np.testing.assert_array_equal(m, want)
    s = m[:, ::2]  # strided
    assert _rows_through(s, 2) == ((3, 2), (16, 8))
    want[2, ::2] *= 2
    np.testing.assert_array_equal(m, want)


def test_borrowing_takes_no_reference_and_bundles_keep_their_arrays():
    a = np.zeros(5, np.int64)
    before = sys.getrefcount(a)
    for _ in range(100):
        _write_through(a, 0, 1)
    assert sys.getrefcount(a) == before
    lo, hi = np.array([0, 2], np.int64), np.array([2, 3], np.int64)
    dst, dom = np.array([1, 0, 1], np.int32), np.array([5, 6], np.int32)
    assert _graph_sum(link_graph(lo, hi, dst, dom)) == (int(lo.sum() + hi.sum() + dst.sum() + dom.sum()), 3)
    sl, order = np.zeros(4, np.int32), np.zeros(4, np.int32)
    w = fetch_work(order, sl, np.zeros(4, np.int64))
    assert _work_write(w) == 4
    assert sl[1] == 7 and order[0] == 5


@njit(cache=False)
def _row_ops(a, i, j, v):
    r = borrowed_row(a, i)
    r[j] = v
    r[:2] += 1  # a slice of a borrowed row is a plain view of the same memory
    return r[j], len(r), r.shape[0], r.strides[0], r.sum()


def test_a_borrowed_row_is_the_rows_memory_without_reference_counting():
    m = np.arange(12, dtype=np.int64).reshape(3, 4)
    want = m.copy()
    want[1, 3] = 99
    want[1, :2] += 1
    assert _row_ops(m, 1, 3, 99) == (99, 4, 4, 8, int(want[1].sum()))
    np.testing.assert_array_equal(m, want)
    before = sys.getrefcount(m)
    for _ in range(100):
        _row_ops(m, 2, 0, 5)
    assert sys.getrefcount(m) == before
    (sig,) = _row_ops.signatures
    ir = _row_ops.inspect_llvm(sig)
    body = ir.split("define ")[1]  # the kernel's own function: its row variable costs no reference counting
    assert "@NRT_incref" not in body.split("\n}\n")[0]
    typ = _row_ops.overloads[sig].type_annotation.typemap["r"]
    assert isinstance(typ, BorrowedArray) and typ.ndim == 1 and typ.layout == "C"
