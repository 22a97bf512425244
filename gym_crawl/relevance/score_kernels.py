"""Scoring pages and links into a topic's keyed score tables, compiled (numba): one call per batch of pages.

On a web too large to score at reset, every page a crawl fetches for the first time is scored then. The numpy path
(:meth:`~gym_crawl.relevance.scorer.TopicScorer.score_pages`, :meth:`~.TopicScorer.score_links`) gathers, weighs and
sums in a dozen array calls per batch; these kernels do the same arithmetic page by page and link by link, writing
straight into the table's rows. The bits are the numpy path's: every weight is formed and rounded as numpy forms
it (``count · idf`` in float64, rounded to float32 for the vector sum; the tf-idf sums in float64, unrounded), each
vector is summed term by term in float64 in the numpy path's term order and rounded to float32 once, and the cosines
and norms follow :func:`gym_crawl._arith.cosines` (float64 sums in index order, no fused multiply-add).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["score_links_into", "score_pages_into"]


@njit(cache=True, nogil=True)
def _cosines_into(acc, QT, out_rel, out_cat, r, cacc):
    """The cosines of the float32 rounding of ``acc`` with the unit queries ``QT`` (k, q) float64: query 0 into
    ``out_rel[r]``, the others into ``out_cat[r]`` (0 for a zero vector), as :func:`gym_crawl._arith.cosines`."""
    k, q = QT.shape
    sq = 0.0
    for j in range(q):
        cacc[j] = 0.0
    for l in range(k):  # noqa: E741
        v = np.float64(np.float32(acc[l]))
        sq += v * v
        for j in range(q):
            cacc[j] += v * QT[l, j]
    if sq > 0.0:
        root = math.sqrt(sq)
        out_rel[r] = np.float32(cacc[0] / root)
        for j in range(1, q):
            out_cat[r, j - 1] = np.float32(cacc[j] / root)
    else:
        out_rel[r] = np.float32(0.0)
        for j in range(1, q):
            out_cat[r, j - 1] = np.float32(0.0)


@njit(cache=True, nogil=True)
def score_pages_into(pages, rows, text_lo, text_hi, text_terms, text_counts, idf, vectors, QT, tfidf_query, rel,
                     cat, tfidf):
    """Write the scores of ``pages[i]`` into row ``rows[i]`` of ``rel``, ``cat``, ``tfidf``: what
    ``TopicScorer.score_pages`` gives (``QT``: the scorer's queries transposed, float64)."""
    k = vectors.shape[1]
    acc = np.zeros(k, np.float64)
    cacc = np.zeros(QT.shape[1], np.float64)
    for i in range(len(pages)):
        p = pages[i]
        r = rows[i]
        for l in range(k):  # noqa: E741
            acc[l] = 0.0
        sq = 0.0
        dot = 0.0
        for j in range(text_lo[p], text_hi[p]):
            t = text_terms[j]
            w = np.float64(text_counts[j]) * np.float64(idf[t])  # numpy: int32 · float32 → float64
            w32 = np.float64(np.float32(w))  # the vector sum's weights are rounded to float32
            for l in range(k):  # noqa: E741
                acc[l] += w32 * np.float64(vectors[t, l])
            sq += w * w
            dot += w * np.float64(tfidf_query[t])
        _cosines_into(acc, QT, rel, cat, r, cacc)
        tfidf[r] = np.float32(dot / math.sqrt(sq)) if sq > 0.0 else np.float32(0.0)


@njit(cache=True, nogil=True)
def _add_terms(acc, ptr, terms, a, idf, vectors, keyword_mask):
    """Add the idf-weighted vectors of ``terms[ptr[a]:ptr[a + 1]]`` to ``acc``; whether one is a keyword."""
    k = vectors.shape[1]
    kw = False
    for j in range(ptr[a], ptr[a + 1]):
        t = terms[j]
        w = np.float64(idf[t])
        for l in range(k):  # noqa: E741
            acc[l] += w * np.float64(vectors[t, l])
        if keyword_mask[t]:
            kw = True
    return kw


@njit(cache=True, nogil=True)
def score_links_into(links, rows, anchor_ptr, anchor_terms, title_ptr, title_terms, context_ptr, context_terms,
                     link_dst, idf, vectors, QT, keyword_mask, rel, cat, kw_url, kw_anchor):
    """Write the scores of link ``links[i]`` into row ``rows[i]`` of ``rel``, ``cat``, ``kw_url``, ``kw_anchor``:
    what ``TopicScorer.score_links`` gives (its text: the anchor's tokens, the target's title tokens as the URL's,
    then the surrounding text's, in that order)."""
    k = vectors.shape[1]
    acc = np.zeros(k, np.float64)
    cacc = np.zeros(QT.shape[1], np.float64)
    for i in range(len(links)):
        li = links[i]
        r = rows[i]
        for l in range(k):  # noqa: E741
            acc[l] = 0.0
        kw_anchor[r] = _add_terms(acc, anchor_ptr, anchor_terms, li, idf, vectors, keyword_mask)
        kw_url[r] = _add_terms(acc, title_ptr, title_terms, link_dst[li], idf, vectors, keyword_mask)
        _add_terms(acc, context_ptr, context_terms, li, idf, vectors, keyword_mask)
        _cosines_into(acc, QT, rel, cat, r, cacc)
