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

The heap itself lives in Python lists (scalar sifts on lists are ~3× faster than on
numpy scalars); the position index is a list of length ``capacity``.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

__all__ = ["UpdatablePQ"]


class UpdatablePQ:
    """Indexed binary max-heap over integer items with in-place priority updates and random pops.

    Args:
        capacity: items are ints in ``[0, capacity)``.
    """

    def __init__(self, capacity: int):
        if capacity < 0:
            raise ValueError(f"capacity must be >= 0, got {capacity}")
        self.capacity = int(capacity)
        self._item: list[int] = []
        self._prio: list[float] = []
        self._tie: list[float] = []
        self._pos: list[int] = [-1] * self.capacity
        self._counter = 0

    # ------------------------------------------------------------ queries
    def __len__(self) -> int:
        return len(self._item)

    def __bool__(self) -> bool:
        return bool(self._item)

    def __contains__(self, item: int) -> bool:
        return 0 <= item < self.capacity and self._pos[item] >= 0

    def priority(self, item: int) -> float:
        """Current priority of a queued ``item`` (``KeyError`` if not queued)."""
        i = self._pos[item] if 0 <= item < self.capacity else -1
        if i < 0:
            raise KeyError(f"item {item} is not queued")
        return self._prio[i]

    def peek(self) -> tuple[int, float]:
        """``(item, priority)`` of the best item without removing it (``IndexError`` if empty)."""
        if not self._item:
            raise IndexError("peek at an empty priority queue")
        return self._item[0], self._prio[0]

    def items(self) -> np.ndarray:
        """(n,) int64 queued items in heap-array order (a copy)."""
        return np.asarray(self._item, dtype=np.int64)

    def priorities(self) -> np.ndarray:
        """(n,) float64 priorities aligned with :meth:`items`."""
        return np.asarray(self._prio, dtype=np.float64)

    # ------------------------------------------------------------ updates
    def _check(self, item: int) -> int:
        item = int(item)
        if not 0 <= item < self.capacity:
            raise ValueError(f"item {item} outside [0, {self.capacity})")
        return item

    def push(self, item: int, priority: float, tie: float | None = None) -> None:
        """Queue ``item`` with ``priority``, or update its priority in place if already queued."""
        item = self._check(item)
        priority = float(priority)
        if tie is None:
            tie = float(self._counter)
            self._counter += 1
        i = self._pos[item]
        if i < 0:
            i = len(self._item)
            self._item.append(item)
            self._prio.append(priority)
            self._tie.append(float(tie))
            self._pos[item] = i
            self._sift_up(i)
            return
        old_p, old_t = self._prio[i], self._tie[i]
        self._prio[i] = priority
        self._tie[i] = float(tie)
        if priority > old_p or (priority == old_p and tie < old_t):
            self._sift_up(i)
        else:
            self._sift_down(i)

    update = push

    def push_many(self, items: Iterable[int] | np.ndarray, priorities: Iterable[float] | np.ndarray,
                  ties: Iterable[float] | np.ndarray | None = None) -> None:
        """Queue or update many items (duplicates in ``items``: the last one wins).

        A batch that is large relative to the queue (``k ≥ n / 8``) is merged with one
        vectorized lexsort — a descending-sorted array is a valid max-heap — in
        O((n + k) log(n + k)) numpy time; a small batch is pushed one by one in O(k log n).
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
        n = len(self._item)
        if k < 16 or 8 * k < n:
            # scalar path with the sift-up of new items inlined (the common case: freshly found pages)
            h_item, h_prio, h_tie, pos = self._item, self._prio, self._tie, self._pos
            for it, p, t in zip(items.tolist(), prios.tolist(), tie_arr.tolist()):
                if pos[it] >= 0:
                    self.push(it, p, t)
                    continue
                i = len(h_item)
                h_item.append(it)
                h_prio.append(p)
                h_tie.append(t)
                while i > 0:
                    j = (i - 1) >> 1
                    pj = h_prio[j]
                    if p > pj or (p == pj and t < h_tie[j]):
                        moved = h_item[j]
                        h_item[i], h_prio[i], h_tie[i] = moved, pj, h_tie[j]
                        pos[moved] = i
                        i = j
                    else:
                        break
                h_item[i], h_prio[i], h_tie[i] = it, p, t
                pos[it] = i
            return
        # vectorized merge: drop batch duplicates (keep last), drop updated old entries, sort all
        rev = items[::-1]
        _, first = np.unique(rev, return_index=True)
        keep = np.sort(k - 1 - first)
        items, prios, tie_arr = items[keep], prios[keep], tie_arr[keep]
        old_items = np.asarray(self._item, dtype=np.int64)
        if n:
            pos = np.asarray(self._pos, dtype=np.int64) if n * 4 > self.capacity else None
            queued = (pos[items] >= 0) if pos is not None else np.fromiter(
                (self._pos[i] >= 0 for i in items.tolist()), bool, count=len(items))
            if queued.any():
                stay = np.ones(n, bool)
                idx = (pos[items[queued]] if pos is not None
                       else np.asarray([self._pos[i] for i in items[queued].tolist()], np.int64))
                stay[idx] = False
            else:
                stay = slice(None)
            all_items = np.concatenate([old_items[stay], items])
            all_prio = np.concatenate([np.asarray(self._prio)[stay], prios])
            all_tie = np.concatenate([np.asarray(self._tie)[stay], tie_arr])
        else:
            all_items, all_prio, all_tie = items, prios, tie_arr
        order = np.lexsort((all_tie, -all_prio))
        for it in self._item:
            self._pos[it] = -1
        self._item = all_items[order].tolist()
        self._prio = all_prio[order].tolist()
        self._tie = all_tie[order].tolist()
        pos_list = self._pos
        for i, it in enumerate(self._item):
            pos_list[it] = i

    def pop_max(self) -> tuple[int, float]:
        """Remove and return ``(item, priority)`` of the best item (``IndexError`` if empty)."""
        if not self._item:
            raise IndexError("pop from an empty priority queue")
        item, prio = self._item[0], self._prio[0]
        self._delete_at(0)
        return item, prio

    def pop_random(self, rng: np.random.Generator) -> tuple[int, float]:
        """Remove and return a uniformly random queued ``(item, priority)``."""
        if not self._item:
            raise IndexError("pop from an empty priority queue")
        i = int(rng.integers(len(self._item)))
        item, prio = self._item[i], self._prio[i]
        self._delete_at(i)
        return item, prio

    def sample_random(self, rng: np.random.Generator) -> int:
        """A uniformly random queued item, left in the queue."""
        if not self._item:
            raise IndexError("sample from an empty priority queue")
        return self._item[int(rng.integers(len(self._item)))]

    def remove(self, item: int) -> float:
        """Remove a queued ``item``; returns its priority (``KeyError`` if not queued)."""
        i = self._pos[item] if 0 <= item < self.capacity else -1
        if i < 0:
            raise KeyError(f"item {item} is not queued")
        prio = self._prio[i]
        self._delete_at(i)
        return prio

    def discard(self, item: int) -> bool:
        """Remove ``item`` if queued; returns whether it was."""
        if item in self:
            self.remove(item)
            return True
        return False

    def clear(self) -> None:
        """Empty the queue in O(n) (the position index is reset only where used)."""
        for it in self._item:
            self._pos[it] = -1
        self._item.clear()
        self._prio.clear()
        self._tie.clear()
        self._counter = 0

    # ----------------------------------------------------------- internals
    def _delete_at(self, i: int) -> None:
        items, prio, tie, pos = self._item, self._prio, self._tie, self._pos
        pos[items[i]] = -1
        last = len(items) - 1
        if i == last:
            items.pop()
            prio.pop()
            tie.pop()
            return
        it, p, t = items.pop(), prio.pop(), tie.pop()
        old_p, old_t = prio[i], tie[i]
        items[i], prio[i], tie[i] = it, p, t
        pos[it] = i
        if p > old_p or (p == old_p and t < old_t):
            self._sift_up(i)
        else:
            self._sift_down(i)

    def _sift_up(self, i: int) -> None:
        items, prio, tie, pos = self._item, self._prio, self._tie, self._pos
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

    def _sift_down(self, i: int) -> None:
        items, prio, tie, pos = self._item, self._prio, self._tie, self._pos
        n = len(items)
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

    def check_invariants(self) -> None:
        """Assert the heap order and the position index (for tests; O(n))."""
        n = len(self._item)
        for i in range(n):
            assert self._pos[self._item[i]] == i, f"pos[{self._item[i]}] != {i}"
            for c in (2 * i + 1, 2 * i + 2):
                if c < n:
                    assert (self._prio[i] > self._prio[c]
                            or (self._prio[i] == self._prio[c] and self._tie[i] <= self._tie[c])), \
                        f"heap order violated at {i}->{c}"
        assert sum(1 for p in self._pos if p >= 0) == n
