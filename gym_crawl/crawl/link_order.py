"""A page's out-links in the order of their targets, compiled (numba): what lets a fetch walk its targets ascending.

:func:`~gym_crawl.crawl.kernels.fetch_page` adds a fetched page's targets to the frontier in ascending page order
and aggregates each target once over all of the page's links to it (its best link is the first most relevant).
Walking the page's links in ascending target, ties in link order, gives both at once: a target's links are adjacent.
That order is a property of the corpus, so :func:`gym_crawl.crawl.bundles.link_graph` keeps it once per corpus in the
process (:func:`fill_link_order`, every page up front, on a web of up to
:data:`~gym_crawl.crawl.bundles.EAGER_ORDER_LINKS` links); on a larger web, or one whose links grow, a fetch sorts
its page's links (:func:`page_link_order`) each time.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from gym_crawl.pagemap import prefetch_entry

__all__ = ["SMALL_SORT", "fill_link_order", "page_link_order", "page_targets", "sort_small"]

#: up to this many keys :func:`sort_small` sorts by insertion (a page's links: 27 on average on the default web),
#: where ``ndarray.sort``'s call costs more than the sort
SMALL_SORT = 32


@njit(cache=True, nogil=True)
def sort_small(a):
    """Sort the int64 array ``a`` in place: insertion sort up to :data:`SMALL_SORT` entries (≈ 5× faster than
    ``a.sort()`` on 27), ``a.sort()`` beyond. The same order as ``a.sort()`` (it is a sort)."""
    n = len(a)
    if n > SMALL_SORT:
        a.sort()
        return
    for j in range(1, n):
        x = a[j]
        k = j - 1
        while k >= 0 and a[k] > x:
            a[k + 1] = a[k]
            k -= 1
        a[k + 1] = x


@njit(cache=True, nogil=True)
def page_link_order(a, b, link_dst, keys, out):
    """``out[:b - a]`` = the offsets from ``a`` of links ``a:b`` in ascending target page, ties in link order
    (``keys``: int64 work space of at least ``b - a``)."""
    n = b - a
    k = keys[:n]
    for j in range(n):
        k[j] = (np.int64(link_dst[a + j]) << 32) | np.int64(j)
    sort_small(k)
    for j in range(n):
        out[j] = np.int32(k[j] & 0xFFFFFFFF)


@njit(cache=True, nogil=True)
def fill_link_order(link_lo, link_hi, link_dst, link_ord, ord_done):
    """Every page's :func:`page_link_order` into its range of ``link_ord``; ``ord_done[p]`` set."""
    deg = 0
    for p in range(len(link_lo)):
        deg = max(deg, link_hi[p] - link_lo[p])
    keys = np.empty(deg, np.int64)
    for p in range(len(link_lo)):
        a, b = link_lo[p], link_hi[p]
        page_link_order(a, b, link_dst, keys, link_ord[a:b])
        ord_done[p] = True


@njit(cache=True, nogil=True)
def page_targets(a, n, direct, order, link_dst, out, keys, slots):
    """The distinct targets of links ``a .. a + n`` walked in target order (``direct``: link ``a + j`` is the j-th;
    else ``a + order[j]``): ``out[k]`` = the k-th target << 32 | the position in the walk of its first link. Each
    target's entry in the page map ``keys`` / ``slots`` is asked for as it is listed (:func:`prefetch_entry`), so the
    entries' loads are in flight together. Returns how many targets."""
    m = 0
    j = 0
    while j < n:
        t = link_dst[a + j if direct else a + order[j]]
        out[m] = (np.int64(t) << 32) | np.int64(j)
        prefetch_entry(keys, slots, t)
        m += 1
        j += 1
        while j < n and link_dst[a + j if direct else a + order[j]] == t:
            j += 1
    return m
