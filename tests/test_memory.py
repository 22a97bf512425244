"""Memory-mapped arrays mapped up front and prefetched (``gym_crawl._memory``): what is mapped, within which budget,
and that neither changes a value."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from numba import njit

from gym_crawl._memory import _file_backed, populate, populate_budget, prefetch, prefetch_range, prefetch_rows

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise(MADV_POPULATE_READ) is Linux's")


def _minflt() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _mapped(tmp_path, name: str, n: int) -> np.ndarray:
    np.save(tmp_path / f"{name}.npy", np.arange(n, dtype=np.int64))
    return np.asarray(np.load(tmp_path / f"{name}.npy", mmap_mode="r"))


def test_file_backed_follows_views(tmp_path):
    a = _mapped(tmp_path, "a", 1000)
    assert _file_backed(a) and _file_backed(a[1:]) and _file_backed(a[:-1])
    assert not _file_backed(np.arange(1000)) and not _file_backed(np.arange(1000)[1:])


@linux
def test_populate_maps_file_arrays_smallest_first_within_the_budget(tmp_path):
    small, large = _mapped(tmp_path, "small", 1 << 12), _mapped(tmp_path, "large", 1 << 17)  # 32 KB, 1 MB
    heap = np.arange(1 << 16)
    done = populate([large, heap, small], budget=small.nbytes + 8)
    if done == 0:
        pytest.skip("this kernel has no MADV_POPULATE_READ (Linux 5.14 and later)")
    assert done == small.nbytes  # the heap array is no file; the large one does not fit what is left
    assert populate([small, large], budget=10 << 20) == small.nbytes + large.nbytes
    assert populate([small], budget=0) == 0


@linux
def test_populated_pages_read_without_page_faults(tmp_path):
    a = _mapped(tmp_path, "a", 1 << 20)  # 8 MB, in the page cache since np.save wrote it
    if populate([a], budget=a.nbytes) == 0:
        pytest.skip("this kernel has no MADV_POPULATE_READ (Linux 5.14 and later)")
    idx = np.random.default_rng(0).integers(0, len(a), 4000)
    f0 = _minflt()
    total = int(a[idx].sum())
    assert _minflt() - f0 < 50  # 4,000 random reads over 2,048 pages: no fault each (a few for numpy's own buffers)
    assert total == int(idx.sum())  # the values are the file's


def test_populate_budget_is_a_quarter_of_available_memory():
    assert populate_budget() >= 0


@njit(cache=False)
def _gather(a, idx, ahead):
    if ahead:
        for i in range(len(idx)):
            prefetch(a, idx[i])
    s = 0.0
    for i in range(len(idx)):
        s += a[idx[i]]
    return s


def test_prefetch_changes_no_value():
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.int32, np.bool_):
        a = (rng.random(10_000) * 100).astype(dtype)
        idx = rng.integers(0, len(a), 500)
        assert _gather(a, idx, True) == _gather(a, idx, False) == float(a[idx].astype(np.float64).sum())
    from numba.core.errors import TypingError

    with pytest.raises(TypingError):  # a 2-d array is not a prefetch target: a typing error, not a silent no-op
        njit(lambda b: prefetch(b, 0))(np.zeros((2, 2)))


@njit(cache=False)
def _ranges_then_sum(a, rows, lo, hi, ahead):
    if ahead:
        prefetch_range(a, lo, hi)
        prefetch_rows(rows, lo, hi)
    return a[lo:hi].sum() if hi > lo else 0.0


def test_prefetch_range_and_rows_change_no_value_at_any_bounds():
    """Every line of a range asked for (any alignment, empty and reversed ranges, rows of width 0): the arrays are
    unchanged and the loop after it reads what it would have."""
    rng = np.random.default_rng(2)
    for dtype in (np.int8, np.int16, np.float32, np.int64):
        a = (rng.random(300) * 100).astype(dtype)
        for w in (0, 1, 4, 33):
            rows = rng.random((300, w)).astype(np.float32)
            before, rows_before = a.copy(), rows.copy()
            for lo, hi in ((0, 300), (7, 8), (5, 70), (40, 40), (90, 10), (299, 300)):
                assert _ranges_then_sum(a, rows, lo, hi, True) == _ranges_then_sum(a, rows, lo, hi, False)
            np.testing.assert_array_equal(a, before)
            np.testing.assert_array_equal(rows, rows_before)


@linux
def test_corpus_maps_its_crawl_arrays_once_and_only_when_large(tmp_path, monkeypatch):
    from conftest import make_tiny_corpus

    from gym_crawl.corpus import Corpus

    make_tiny_corpus(300).save(tmp_path / "c")
    c = Corpus.load(tmp_path / "c", share=False)
    assert c.populate_crawl_arrays() == 0  # a small web: its few faults are cheap, nothing mapped up front
    assert c.populate_crawl_arrays() == 0  # and once per corpus object
    c2 = Corpus.load(tmp_path / "c", share=False)
    monkeypatch.setattr(Corpus, "POPULATE_MIN_BYTES", 0)
    want = sum(getattr(c2, n).nbytes for n in Corpus.CRAWL_ARRAYS)
    got = c2.populate_crawl_arrays()
    if got == 0:
        pytest.skip("this kernel has no MADV_POPULATE_READ (Linux 5.14 and later)")
    assert got == want
    assert c2.populate_crawl_arrays() == 0
