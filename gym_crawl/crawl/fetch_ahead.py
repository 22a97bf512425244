"""What N fetches read first, asked for before the first of them, compiled (numba).

A batched step knows every crawl's page before it fetches any. On a large web (10^7 pages: the link offsets, link
targets and domains are arrays of 40–170 MB, the topic's keyed score tables a few MB) nearly every one of a fetch's
first reads misses the caches, and each waits for the one before it: the page's link offsets, then its links and its
link score rows (found through the keyed link table), its page score row (found through the keyed page table), its
reward. Asked for for all N pages at once, in two passes (:func:`fetch_ahead_first`: what the page id locates;
:func:`fetch_ahead_next`: what those lines locate), the N pages' misses overlap and each fetch finds its lines
arrived. Prefetches only (:func:`gym_crawl._memory.prefetch`): no value any kernel computes changes.
"""
from __future__ import annotations

from numba import njit

from gym_crawl._memory import prefetch
from gym_crawl.crawl.kernels import link_base, page_row
from gym_crawl.pagemap import prefetch_entry

__all__ = ["fetch_ahead_first", "fetch_ahead_next"]


@njit(cache=True, nogil=True)
def fetch_ahead_first(pages, scores, graph):
    """Ask for the lines the fetches of ``pages`` (-1: none) read first: each page's link offsets and domain in the
    :class:`~gym_crawl.crawl.bundles.LinkGraph` ``graph`` and its entries in the keyed tables of the
    :class:`~gym_crawl.crawl.bundles.ScoreTables` ``scores``. No effect on any value."""
    for i in range(len(pages)):
        q = pages[i]
        if q >= 0:
            prefetch(graph.link_lo, q)
            prefetch(graph.link_hi, q)
            prefetch(graph.page_domain, q)
            if scores.page_keyed:
                prefetch_entry(scores.page_keys, scores.page_rows, q)
            if scores.link_keyed:
                prefetch_entry(scores.link_keys, scores.link_bases, q)


@njit(cache=True, nogil=True)
def fetch_ahead_next(pages, scores, graph, rw_r, rw_rel, label):
    """After :func:`fetch_ahead_first`: ask for the lines the fetches of ``pages`` (-1: none) read through those —
    each page's link targets (first and last line), its page score row and its reward entries (``rw_r``, ``rw_rel``,
    ``label``, by page row), its first link score row. Reads the lines :func:`fetch_ahead_first` asked for. No effect
    on any value."""
    pc, lc, link_dst = scores.page_cat, scores.link_cat, graph.link_dst
    pc_flat, lc_flat = pc.reshape(pc.size), lc.reshape(lc.size)
    for i in range(len(pages)):
        p = pages[i]
        if p < 0:
            continue
        a, e = graph.link_lo[p], graph.link_hi[p]
        prefetch(link_dst, a)
        if e - 1 > a:
            prefetch(link_dst, e - 1)
        row = page_row(scores, p)
        if row >= 0:
            prefetch(scores.page_rel, row)
            prefetch(scores.page_tfidf, row)
            prefetch(pc_flat, row * pc.shape[1])
            prefetch(rw_r, row)
            prefetch(rw_rel, row)
            prefetch(label, row)
        base = link_base(scores, p, a)
        if base >= 0:
            prefetch(scores.link_rel, base)
            prefetch(scores.link_kw_url, base)
            prefetch(scores.link_kw_anchor, base)
            prefetch(lc_flat, base * lc.shape[1])
