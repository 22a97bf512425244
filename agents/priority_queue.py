"""The thesis' *Updatable and Randomized Priority Queue* (Pertejo 2021, §3.4), done in O(log n).

The thesis builds its frontier on ``heapq`` with lazy deletion: an update marks the
old entry removed and pushes a new one, and a random pop draws from
``list(dict.keys())`` — O(n) per random pop and unbounded garbage in the heap.
:class:`UpdatablePQ` keeps the same interface ideas (update a queued element's
priority, pop the best, pop a uniformly random element) with a binary max-heap
stored in flat arrays plus a position index ``pos[item]``:

=========================  ===============  =========================================
operation                  cost             notes
=========================  ===============  =========================================
``push`` / ``update``      O(log n)         in place: sift up or down from its slot
``pop_max`` / ``peek``     O(log n) / O(1)  highest priority; ties → smallest tie key
``pop_random(rng)``        O(log n)         uniform over queued items (the heap array
                                            is dense, so a random slot is O(1))
``remove(item)``           O(log n)
``push_many``              O(k log n) or    a large batch is merged by one vectorized
                           O((n+k) log)     sort (a sorted array is a valid heap)
``clear``                  O(n)             touches only queued items
=========================  ===============  =========================================

Items are integers in ``[0, capacity)`` (page ids). Priorities are floats; ties are
broken by a *tie key* (smaller first): by default an insertion counter, i.e. first
in, first out among equal priorities — what the thesis' ``(priority, count, task)``
entries do. Callers can pass their own tie keys (e.g. random numbers for an unbiased
tie-break). Updating an item gives it a fresh counter tie key, as the thesis' re-add does.

The heap lives in flat numpy arrays (item, priority, tie key) and every sift runs in a compiled numba kernel,
so a step's batch of found pages costs one call, not a Python loop per link. Nothing is sized by ``capacity``:
an item gets a *local id* when it is first queued (since the last :meth:`UpdatablePQ.clear`), found through
:mod:`gym_crawl.pagemap`'s open-addressing map; the heap holds local ids, the position index is a column of
local ids, and every array grows by doubling — the queue's memory follows the items it was given (≈ 40–60 bytes
each), not the web's pages. Local ids never change the order: the heap compares priorities and tie keys only.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numba import njit

from gym_crawl.pagemap import EMPTY, find, probe, rehash

__all__ = ["UpdatablePQ"]


@njit(cache=True, nogil=True)
def _sift_up(items, prio, tie, pos, i):
    it, p, t = items[i], prio[i], tie[i]
    while i > 0:
        j = (i - 1) >> 1
        pj = prio[j]
        if p > pj or (p == pj and t < tie[j]):
            items[i], prio[i], tie[i] = items[j], pj, tie[j]
            pos[items[i]] = i
            i = j
        else:
            break
    items[i], prio[i], tie[i] = it, p, t
    pos[it] = i


@njit(cache=True, nogil=True)
def _sift_down(items, prio, tie, pos, n, i):
    it, p, t = items[i], prio[i], tie[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        r = c + 1
        if r < n:
            pc, pr = prio[c], prio[r]
            if pr > pc or (pr == pc and tie[r] < tie[c]):
                c = r
        pc = prio[c]
        if pc > p or (pc == p and tie[c] < t):
            items[i], prio[i], tie[i] = items[c], pc, tie[c]
            pos[items[i]] = i
            i = c
        else:
            break
    items[i], prio[i], tie[i] = it, p, t
    pos[it] = i


@njit(cache=True, nogil=True)
def _resift(items, prio, tie, pos, n, i, old_p, old_t):
    """Restore the heap after slot ``i`` (of ``n``) got a new entry in place of one with (old_p, old_t)."""
    if prio[i] > old_p or (prio[i] == old_p and tie[i] < old_t):
        _sift_up(items, prio, tie, pos, i)
    else:
        _sift_down(items, prio, tie, pos, n, i)


@njit(cache=True, nogil=True)
def _push(items, prio, tie, pos, n, item, p, t):
    """Queue ``item`` or update it in place; returns the new size."""
    i = pos[item]
    if i < 0:
        items[n], prio[n], tie[n] = item, p, t
        pos[item] = n
        _sift_up(items, prio, tie, pos, n)
        return n + 1
    old_p, old_t = prio[i], tie[i]
    prio[i], tie[i] = p, t
    _resift(items, prio, tie, pos, n, i, old_p, old_t)
    return n


@njit(cache=True, nogil=True)
def _delete_at(items, prio, tie, pos, n, i):
    """Remove the entry at heap slot ``i``; returns the new size."""
    pos[items[i]] = -1
    last = n - 1
    if i == last:
        return last
    it, p, t = items[last], prio[last], tie[last]
    old_p, old_t = prio[i], tie[i]
    items[i], prio[i], tie[i] = it, p, t
    pos[it] = i
    _resift(items, prio, tie, pos, last, i, old_p, old_t)
    return last


@njit(cache=True, nogil=True)
def _local(keys, slots, page_of, pos, cnt, page):
    """The local id of ``page``, a new one (position -1) for a page not in the map (room reserved by the caller;
    ``cnt[0]``: the count of local ids)."""
    h = probe(keys, page)
    if keys[h] != EMPTY:
        return np.int64(slots[h])
    loc = cnt[0]
    keys[h] = page
    slots[h] = loc
    page_of[loc] = page
    pos[loc] = -1
    cnt[0] = loc + 1
    return loc


@njit(cache=True, nogil=True)
def _locals(keys, slots, page_of, pos, cnt, pages, out):
    """``out[j]`` = :func:`_local` of ``pages[j]``."""
    for j in range(len(pages)):
        out[j] = _local(keys, slots, page_of, pos, cnt, pages[j])


@njit(cache=True, nogil=True)
def _push_page(items, prio, tie, pos, n, keys, slots, page_of, cnt, page, p, t):
    """:func:`_push` of ``page`` by its local id; returns the new size."""
    return _push(items, prio, tie, pos, n, _local(keys, slots, page_of, pos, cnt, page), p, t)


@njit(cache=True, nogil=True)
def _push_pages(items, prio, tie, pos, n, keys, slots, page_of, cnt, pages, ps, ts):
    """:func:`_push_page` of every (page, priority, tie) in order; returns the new size."""
    for k in range(len(pages)):
        n = _push(items, prio, tie, pos, n, _local(keys, slots, page_of, pos, cnt, pages[k]), ps[k], ts[k])
    return n


def _grown(a: np.ndarray, size: int, fill: int = 0) -> np.ndarray:
    """``a`` with at least ``size`` entries (doubling; the new ones ``fill``)."""
    if len(a) >= size:
        return a
    out = np.full(max(size, 2 * len(a)), fill, a.dtype)
    out[: len(a)] = a
    return out


class UpdatablePQ:
    """Indexed binary max-heap over integer items with in-place priority updates and random pops.

    Args:
        capacity: items are ints in ``[0, capacity)`` (at most 2^31: the page map's keys are int32); nothing is
            allocated per possible item (module docstring).
    """

    def __init__(self, capacity: int):
        if capacity < 0:
            raise ValueError(f"capacity must be >= 0, got {capacity}")
        if capacity > 2 ** 31:
            raise ValueError(f"capacity must be <= 2^31, got {capacity}")
        self.capacity = int(capacity)
        self._item = np.zeros(64, np.int64)      # heap of local ids
        self._prio = np.zeros(64, np.float64)
        self._tie = np.zeros(64, np.float64)
        self._n = 0
        self._counter = 0
        # local ids: the page map (item -> local id), the item of each local id, its heap slot (-1: not queued)
        self._keys = np.full(128, EMPTY, np.int32)
        self._slots = np.zeros(128, np.int32)
        self._page_of = np.zeros(64, np.int64)
        self._pos = np.full(64, -1, np.int64)
        self._cnt = np.zeros(1, np.int64)   # local ids handed out
        self._room = 64

    @property
    def n_seen(self) -> int:
        """Items given a local id since the last :meth:`clear` (queued now or before)."""
        return int(self._cnt[0])

    @property
    def nbytes(self) -> int:
        """Bytes of the queue's arrays at their capacity."""
        return int(sum(a.nbytes for a in (self._item, self._prio, self._tie, self._keys, self._slots, self._page_of,
                                          self._pos)))

    def _reserve(self, k: int) -> None:
        """Room for ``k`` more local ids and ``k`` more queued items."""
        n_loc = int(self._cnt[0])
        need = n_loc + k
        if need <= self._room and self._n + k <= len(self._item):
            return
        if need > len(self._page_of):
            self._page_of = _grown(self._page_of, need)
            self._pos = _grown(self._pos, need, -1)
        if 2 * need > len(self._keys):
            size = len(self._keys)
            while 2 * need > size:
                size *= 2
            self._keys, self._slots = np.full(size, EMPTY, np.int32), np.zeros(size, np.int32)
            rehash(self._page_of, n_loc, self._keys, self._slots)
        if self._n + k > len(self._item):
            self._item = _grown(self._item, self._n + k)
            self._prio = _grown(self._prio, self._n + k)
            self._tie = _grown(self._tie, self._n + k)
        self._room = min(len(self._page_of), len(self._keys) // 2)   # local ids that fit without growing

    def _local_ids(self, items: np.ndarray) -> np.ndarray:
        """Local ids of ``items`` (int64), new ones for items not seen since the last clear."""
        self._reserve(len(items))
        out = np.empty(len(items), np.int64)
        _locals(self._keys, self._slots, self._page_of, self._pos, self._cnt, items, out)
        return out

    def _slot(self, item: int) -> int:
        """Heap slot of ``item`` (-1: not queued)."""
        if not 0 <= item < self.capacity:
            return -1
        loc = int(find(self._keys, self._slots, int(item)))
        return int(self._pos[loc]) if loc >= 0 else -1

    # ------------------------------------------------------------ queries
    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def __contains__(self, item: int) -> bool:
        return self._slot(item) >= 0

    def priority(self, item: int) -> float:
        """Current priority of a queued ``item`` (``KeyError`` if not queued)."""
        i = self._slot(item)
        if i < 0:
            raise KeyError(f"item {item} is not queued")
        return float(self._prio[i])

    def peek(self) -> tuple[int, float]:
        """``(item, priority)`` of the best item without removing it (``IndexError`` if empty)."""
        if not self._n:
            raise IndexError("peek at an empty priority queue")
        return int(self._page_of[self._item[0]]), float(self._prio[0])

    def items(self) -> np.ndarray:
        """(n,) int64 queued items in heap-array order (a copy)."""
        return self._page_of[self._item[: self._n]]

    def priorities(self) -> np.ndarray:
        """(n,) float64 priorities aligned with :meth:`items`."""
        return self._prio[: self._n].copy()

    # ------------------------------------------------------------ updates
    def _check(self, item: int) -> int:
        item = int(item)
        if not 0 <= item < self.capacity:
            raise ValueError(f"item {item} outside [0, {self.capacity})")
        return item

    def push(self, item: int, priority: float, tie: float | None = None) -> None:
        """Queue ``item`` with ``priority``, or update its priority in place if already queued."""
        item = self._check(item)
        if tie is None:
            tie = float(self._counter)
            self._counter += 1
        self._reserve(1)
        self._n = _push_page(self._item, self._prio, self._tie, self._pos, self._n, self._keys, self._slots,
                             self._page_of, self._cnt, item, float(priority), float(tie))

    update = push

    def push_many(self, items: Iterable[int] | np.ndarray, priorities: Iterable[float] | np.ndarray,
                  ties: Iterable[float] | np.ndarray | None = None) -> None:
        """Queue or update many items (duplicates in ``items``: the last one wins).

        A batch that is large relative to the queue (``k ≥ n / 8``) is merged with one
        vectorized lexsort — a descending-sorted array is a valid max-heap — in
        O((n + k) log(n + k)) numpy time; a small batch is pushed one by one in O(k log n)
        by one compiled call.
        """
        items = np.asarray(items, dtype=np.int64).reshape(-1)
        prios = np.asarray(priorities, dtype=np.float64).reshape(-1)
        if len(items) != len(prios):
            raise ValueError(f"push_many: {len(items)} items but {len(prios)} priorities")
        k = len(items)
        if k == 0:
            return
        if items.min() < 0 or items.max() >= self.capacity:
            raise ValueError(f"push_many: items outside [0, {self.capacity})")
        if ties is None:
            tie_arr = np.arange(self._counter, self._counter + k, dtype=np.float64)
            self._counter += k
        else:
            tie_arr = np.asarray(ties, dtype=np.float64).reshape(-1)
            if len(tie_arr) != k:
                raise ValueError(f"push_many: {k} items but {len(tie_arr)} tie keys")
        n = self._n
        if k < 16 or 8 * k < n:
            self._reserve(k)
            self._n = _push_pages(self._item, self._prio, self._tie, self._pos, n, self._keys, self._slots,
                                  self._page_of, self._cnt, items, prios, tie_arr)
            return
        # vectorized merge: drop batch duplicates (keep last), drop updated old entries, sort all
        rev = items[::-1]
        _, first = np.unique(rev, return_index=True)
        keep = np.sort(k - 1 - first)
        items, prios, tie_arr = self._local_ids(items[keep]), prios[keep], tie_arr[keep]
        old_items = self._item[:n]
        if n:
            queued = self._pos[items] >= 0
            stay: np.ndarray | slice = slice(None)
            if queued.any():
                stay = np.ones(n, bool)
                stay[self._pos[items[queued]]] = False
            all_items = np.concatenate([old_items[stay], items])
            all_prio = np.concatenate([self._prio[:n][stay], prios])
            all_tie = np.concatenate([self._tie[:n][stay], tie_arr])
        else:
            all_items, all_prio, all_tie = items, prios, tie_arr
        order = np.lexsort((all_tie, -all_prio))
        self._pos[old_items] = -1
        m = len(order)
        self._item[:m] = all_items[order]
        self._prio[:m] = all_prio[order]
        self._tie[:m] = all_tie[order]
        self._pos[self._item[:m]] = np.arange(m, dtype=np.int64)
        self._n = m

    def pop_max(self) -> tuple[int, float]:
        """Remove and return ``(item, priority)`` of the best item (``IndexError`` if empty)."""
        if not self._n:
            raise IndexError("pop from an empty priority queue")
        item, prio = int(self._page_of[self._item[0]]), float(self._prio[0])
        self._n = _delete_at(self._item, self._prio, self._tie, self._pos, self._n, 0)
        return item, prio

    def pop_random(self, rng: np.random.Generator) -> tuple[int, float]:
        """Remove and return a uniformly random queued ``(item, priority)``."""
        if not self._n:
            raise IndexError("pop from an empty priority queue")
        i = int(rng.integers(self._n))
        item, prio = int(self._page_of[self._item[i]]), float(self._prio[i])
        self._n = _delete_at(self._item, self._prio, self._tie, self._pos, self._n, i)
        return item, prio

    def sample_random(self, rng: np.random.Generator) -> int:
        """A uniformly random queued item, left in the queue."""
        if not self._n:
            raise IndexError("sample from an empty priority queue")
        return int(self._page_of[self._item[int(rng.integers(self._n))]])

    def remove(self, item: int) -> float:
        """Remove a queued ``item``; returns its priority (``KeyError`` if not queued)."""
        i = self._slot(item)
        if i < 0:
            raise KeyError(f"item {item} is not queued")
        prio = float(self._prio[i])
        self._n = _delete_at(self._item, self._prio, self._tie, self._pos, self._n, i)
        return prio

    def discard(self, item: int) -> bool:
        """Remove ``item`` if queued; returns whether it was."""
        if item in self:
            self.remove(item)
            return True
        return False

    def clear(self) -> None:
        """Empty the queue and forget the local ids (O(items seen); the arrays keep their capacity)."""
        self._pos[: int(self._cnt[0])] = -1
        self._keys.fill(EMPTY)
        self._cnt[0] = 0
        self._n = 0
        self._counter = 0

    def check_invariants(self) -> None:
        """Assert the heap order and the position index (for tests; O(n))."""
        n = self._n
        for i in range(n):
            assert self._pos[self._item[i]] == i, f"pos[{self._item[i]}] != {i}"
            for c in (2 * i + 1, 2 * i + 2):
                if c < n:
                    assert (self._prio[i] > self._prio[c]
                            or (self._prio[i] == self._prio[c] and self._tie[i] <= self._tie[c])), \
                        f"heap order violated at {i}->{c}"
        n_loc = int(self._cnt[0])
        assert int((self._pos[:n_loc] >= 0).sum()) == n
        assert all(int(find(self._keys, self._slots, int(self._page_of[loc]))) == loc for loc in range(n_loc))
