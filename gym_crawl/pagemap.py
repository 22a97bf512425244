"""The page → slot map: open addressing over two arrays, compiled (numba).

Two users size their memory by the pages they touched with it: a crawl's state (:mod:`gym_crawl.crawl.fields`)
and a topic's keyed score tables (:class:`~gym_crawl.relevance.scorer.PageTable`,
:class:`~gym_crawl.relevance.scorer.LinkTable`, whose slots are rows). A crawl keeps its per-page columns in
*slots* handed out in the order it touches pages (discovers or fetches them), so its memory follows the pages it
touched, not the web's size. This map finds a page's slot: a table of ``2^k`` entries (``keys``: the page,
int32, ``-1`` for empty; ``slots``: its slot, int32 or int64), linear probing from a multiplicative hash of the
page id, at most half full (the crawl state doubles it with its slot columns). Entries are never deleted during
an episode; a reset empties the table.

A lookup touches one or two cache lines of a table the size of the crawl (≈ 16 bytes per touched page), where a
column indexed by page id touched one cache line per column anywhere in an array as long as the web.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from gym_crawl._memory import prefetch

__all__ = ["EMPTY", "add_keys", "find", "find_many", "insert", "prefetch_entry", "probe", "rehash"]

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
