"""The page → slot map: open addressing over two arrays, compiled (numba).

Two users size their memory by the pages they touched with it: a crawl's state (:mod:`gym_crawl.crawl.fields`)
and a topic's keyed score tables (:class:`~gym_crawl.relevance.scorer.PageTable`,
:class:`~gym_crawl.relevance.scorer.LinkTable`, whose slots are rows). A crawl keeps its per-page columns in
*slots* handed out in the order it touches pages (discovers or fetches them), so its memory follows the pages it
touched, not the web's size. This map finds a page's slot: a table of ``2^k`` entries (``keys``: the page,
int32, ``-1`` for empty; ``slots``: its slot, int32 or int64), linear probing from a multiplicative hash of the
page id, at most half full (the crawl state doubles it with its slot columns). Entries are never deleted during
an episode; a reset empties the table.

:class:`KeyedRows` is the same map for the Python paths beside the compiled step: columns of values in rows handed
out at an id's first use (the site features' statistics, the content features' vector caches, TRES's classifier
cache, the classifier reward's verdicts), so a cache filled page by page holds the pages asked about.

A lookup touches one or two cache lines of a table the size of the crawl (≈ 16 bytes per touched page), where a
column indexed by page id touched one cache line per column anywhere in an array as long as the web.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from gym_crawl._memory import prefetch

__all__ = ["EMPTY", "KeyedRows", "add_keys", "find", "find_many", "grow_rows", "insert", "prefetch_entry", "probe",
           "rehash"]

EMPTY = -1
"""The key of an empty table entry."""


@njit(cache=True, nogil=True)
def _home(page, mask):
    h = np.int64(page) * np.int64(2654435761)
    return (h ^ (h >> 16)) & mask


@njit(cache=True, nogil=True)
def find(keys, slots, page):
    """The slot of ``page``, or -1 when the crawl has not touched it."""
    mask = len(keys) - 1
    h = _home(page, mask)
    while True:
        k = keys[h]
        if k == page:
            return np.int64(slots[h])
        if k == EMPTY:
            return np.int64(-1)
        h = (h + 1) & mask


@njit(cache=True, nogil=True)
def prefetch_entry(keys, slots, page):
    """Ask for the cache lines of ``page``'s home entry (in ``keys`` and ``slots``) without waiting for them, so a
    :func:`find` or :func:`probe` of ``page`` a little later finds them in cache. No effect on any value."""
    h = _home(page, len(keys) - 1)
    prefetch(keys, h)
    prefetch(slots, h)


@njit(cache=True, nogil=True)
def probe(keys, page):
    """The table position of ``page``, or of the empty entry where :func:`insert` would put it (the table has room):
    ``keys[h] == page`` tells which. A caller that inserts at ``h`` (``keys[h] = page; slots[h] = slot``) before
    any other insert saves :func:`insert`'s second probe."""
    mask = len(keys) - 1
    h = _home(page, mask)
    while True:
        k = keys[h]
        if k == page:
            return h
        if k == EMPTY:
            return h
        h = (h + 1) & mask


@njit(cache=True, nogil=True)
def insert(keys, slots, page, slot):
    """Map ``page`` (not in the table; the table has room) to ``slot``."""
    mask = len(keys) - 1
    h = _home(page, mask)
    while keys[h] != EMPTY:
        h = (h + 1) & mask
    keys[h] = page
    slots[h] = slot


@njit(cache=True, nogil=True)
def find_many(keys, slots, pages, out):
    """``out[j]`` = the slot of ``pages[j]`` (-1: untouched)."""
    for j in range(len(pages)):
        out[j] = find(keys, slots, pages[j])


@njit(cache=True, nogil=True)
def rehash(slot_page, n, keys, slots):
    """Fill the empty table ``keys``/``slots`` with slots ``0..n-1`` of pages ``slot_page[:n]``."""
    for s in range(n):
        insert(keys, slots, slot_page[s], s)


@njit(cache=True, nogil=True)
def add_keys(keys, slots, pages, values):
    """Map each of ``pages`` (none in the table; the table has room) to ``values[j]``."""
    for j in range(len(pages)):
        insert(keys, slots, pages[j], values[j])


def grow_rows(a: np.ndarray, size: int) -> np.ndarray:
    """``a`` with at least ``size`` rows (doubling; the new rows zero)."""
    if len(a) >= size:
        return a
    out = np.zeros((max(size, 2 * len(a)), *a.shape[1:]), a.dtype)
    out[:len(a)] = a
    return out


class KeyedRows:
    """Columns of values keyed by id (a page, a link or a domain), in rows handed out when an id is first added:
    their memory follows the ids added, not the web's size. The map is this module's (int32 ids, at most half
    full); the columns start at 64 rows and double. An id never added has no row (:meth:`rows` gives -1;
    :meth:`get` reads 0 for it).

    ``columns``: ``(name, dtype)`` or ``(name, dtype, width)`` (a row of ``width`` values); ``cols[name]`` is the
    column (replaced when it grows: read it again after :meth:`add`)."""

    def __init__(self, *columns: tuple[Any, ...]):
        self.n = 0
        self.keys = np.full(128, EMPTY, np.int32)
        self.slots = np.zeros(128, np.int32)
        self.key_of = np.zeros(64, np.int32)
        self.cols: dict[str, np.ndarray] = {c[0]: np.zeros((64, *c[2:]), c[1]) for c in columns}

    @property
    def nbytes(self) -> int:
        """Bytes of the map and the columns (at their capacity)."""
        cols = sum(c.nbytes for c in self.cols.values())
        return int(self.keys.nbytes + self.slots.nbytes + self.key_of.nbytes + cols)

    def copy(self) -> KeyedRows:
        """An independent copy (the map and the columns copied)."""
        out = KeyedRows()
        out.n, out.keys, out.slots, out.key_of = self.n, self.keys.copy(), self.slots.copy(), self.key_of.copy()
        out.cols = {name: c.copy() for name, c in self.cols.items()}
        return out

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """int64 row of each of ``ids`` (-1: not added)."""
        out = np.empty(len(ids), np.int64)
        find_many(self.keys, self.slots, np.asarray(ids, np.int32), out)
        return out

    def add(self, new: np.ndarray) -> np.ndarray:
        """Give each of ``new`` (distinct ids, none added yet) the next row; returns the rows (int64)."""
        k = len(new)
        if 2 * (self.n + k) > len(self.keys):
            size = len(self.keys)
            while 2 * (self.n + k) > size:
                size *= 2
            self.keys, self.slots = np.full(size, EMPTY, np.int32), np.zeros(size, np.int32)
            rehash(self.key_of, self.n, self.keys, self.slots)
        if self.n + k > len(self.key_of):
            cap = max(self.n + k, 2 * len(self.key_of))
            self.key_of = grow_rows(self.key_of, cap)
            self.cols = {name: grow_rows(c, cap) for name, c in self.cols.items()}
        rows = np.arange(self.n, self.n + k, dtype=np.int32)
        self.key_of[self.n:self.n + k] = new
        add_keys(self.keys, self.slots, np.asarray(new, np.int32), rows)
        self.n += k
        return rows.astype(np.int64)

    def ensure(self, ids: np.ndarray) -> np.ndarray:
        """The rows of ``ids`` (int64; repeats allowed), adding those not added yet (their columns zero)."""
        ids = np.asarray(ids, np.int64)
        r = self.rows(ids)
        miss = r < 0
        if miss.any():
            self.add(np.unique(ids[miss]))
            r = self.rows(ids)
        return r

    def get(self, name: str, ids: np.ndarray) -> np.ndarray:
        """Column ``name`` at ``ids`` (0 for an id not added)."""
        col = self.cols[name]
        r = self.rows(ids)
        out = np.zeros((len(r), *col.shape[1:]), col.dtype)
        hit = r >= 0
        out[hit] = col[r[hit]]
        return out
