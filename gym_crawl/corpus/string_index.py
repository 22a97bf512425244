"""Finding a string's position in a :class:`~gym_crawl.corpus.core.StringTable` (UTF-8 blob + offsets), compiled.

Two ways, chosen by :meth:`StringTable.index <gym_crawl.corpus.core.StringTable.index>`:

* :func:`scan` — compare the key with every string of its byte length, in order, and return the first equal one.
  Nothing is built or kept: one pass over the offsets (8 bytes a string) and the blob only where the length
  matches. A few lookups in a table of 10^7 titles (a topic's seeds) cost a few tens of milliseconds each and no
  memory, where an index costs 16 bytes a string for as long as the table lives.
* :func:`hashes` + a sorted array — a 64-bit FNV-1a hash of every string, sorted once: a lookup is then a binary
  search and a byte comparison of the few candidates. Built for small tables at their first lookup and for large
  ones once they have been scanned often enough that the index costs less than the scans would.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["hash_bytes", "hashes", "scan", "same_bytes"]

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, nogil=True)
def _fnv(blob, a, b):
    h = _FNV_OFFSET
    for j in range(a, b):
        h = (h ^ np.uint64(blob[j])) * _FNV_PRIME
    return np.int64(h)


@njit(cache=True, nogil=True)
def hashes(blob, offsets):
    """(n,) int64: the FNV-1a hash of each string ``blob[offsets[i]:offsets[i + 1]]``."""
    n = len(offsets) - 1
    out = np.empty(n, np.int64)
    for i in range(n):
        out[i] = _fnv(blob, offsets[i], offsets[i + 1])
    return out


@njit(cache=True, nogil=True)
def hash_bytes(key):
    """The hash :func:`hashes` gives a string of bytes ``key`` (uint8 array)."""
    return _fnv(key, 0, len(key))


@njit(cache=True, nogil=True)
def same_bytes(blob, a, b, key):
    """Whether ``blob[a:b]`` equals ``key`` (uint8 array)."""
    if b - a != len(key):
        return False
    for j in range(len(key)):  # noqa: SIM110  (a loop numba compiles; all() over a generator it does not)
        if blob[a + j] != key[j]:
            return False
    return True


@njit(cache=True, nogil=True)
def scan(blob, offsets, key):
    """Position of the first string equal to ``key`` (uint8 array), or -1."""
    k = len(key)
    for i in range(len(offsets) - 1):
        a = offsets[i]
        if offsets[i + 1] - a == k and same_bytes(blob, a, a + k, key):
            return i
    return -1
