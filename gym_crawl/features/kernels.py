"""Compiled (numba) rows of the built-in feature sets, read from the crawl state's columns.

Each kernel reads crawl ``i`` of a :class:`~gym_crawl.crawl.bundles.CrawlArrays` (the columns by slot: a page's
slot and its best parent's come from the crawl's page map), writes the rows of ``pages`` into
``out[:, col0:...]`` and returns the index (into ``pages``) of the first page without a fetched parent, or -1
(the caller raises). The feature sets of
:mod:`gym_crawl.features.sets`, :mod:`~gym_crawl.features.thesis` and :mod:`~gym_crawl.features.han_index`
call them for one crawl; the batched vector step calls :func:`layout_rows` and :func:`refresh_rows` with the
layout a feature set hands it (:meth:`~gym_crawl.features.sets.FeatureSet.batch_layout`: one of the
``FEAT_*`` kinds), so the arithmetic of every row stays here, with its feature set. The arithmetic
is numpy's for the vectorized code these replace, written out (bit-identical rows):

* ``float32 / int`` and ``int / int`` divide in float64, cast to float32 when stored;
* ``float32 array / 2.0`` divides in float32 (a Python float adopts the array's dtype);
* comparisons of a float32 array with a Python float compare in float32, with a float64
  array (Han's bucket edges) in float64.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from gym_crawl._memory import prefetch
from gym_crawl.crawl.kernels import DIST_CAP
from gym_crawl.pagemap import find

__all__ = ["EDGES5", "EDGES6", "FEAT_COMBINED", "FEAT_HAN", "FEAT_NONE", "FEAT_TRES", "han_index_rows", "han_rows",
           "layout_rows", "refresh_rows", "thesis_rows", "tres_rows"]

EDGES5 = np.array([0.2, 0.4, 0.6, 0.8])
"""Han's 5-bucket edges: [0, .2) → 0, [.2, .4) → 1, …, [.8, 1] → 4 (float64)."""
EDGES6 = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
"""Han's 6-bucket edges: [0, .1) → 0, [.1, .3) → 1, …, [.9, 1] → 5 (float64)."""

#: the row layouts of the batched vector step (:class:`~gym_crawl.features.sets.BatchLayout` ``kind``): no rows
#: (a state-only observation), Han's rows, TRES's, or Han's without its bias then TRES's and one bias column
FEAT_NONE, FEAT_HAN, FEAT_TRES, FEAT_COMBINED = 0, 1, 2, 3


@njit(cache=True, nogil=True, inline="always")
def _han_rel_values(p, s, C, rel, cat, par_mean, relpar_mean, link_rel, link_cat, sum_par_rel, n_par,
                    sum_relpar_rel, n_relpar, buf):
    """The 6 + 2C relevances of Han's (s, a) into ``buf`` (float32); ``p``, ``s``: the slots of the frontier page
    and of its best parent."""
    buf[0] = rel[s]
    for c in range(C):
        buf[1 + c] = cat[s, c]
    buf[1 + C] = par_mean[s]
    buf[2 + C] = relpar_mean[s]
    buf[3 + C] = link_rel[p]
    for c in range(C):
        buf[4 + C + c] = link_cat[p, c]
    buf[4 + 2 * C] = np.float32(np.float64(sum_par_rel[p]) / np.float64(max(n_par[p], 1)))
    nr = n_relpar[p]
    buf[5 + 2 * C] = np.float32(np.float64(sum_relpar_rel[p]) / np.float64(nr)) if nr > 0 else np.float32(0.0)


@njit(cache=True, nogil=True)
def _bucket56(x, edges5, edges6):
    """Han's 5- and 6-bucket indexes of ``x`` (float64): the number of edges ≤ x in each partition."""
    b5 = 0
    while b5 < len(edges5) and edges5[b5] <= x:
        b5 += 1
    b6 = 0
    while b6 < len(edges6) and edges6[b6] <= x:
        b6 += 1
    return b5, b6


@njit(cache=True, nogil=True)
def _change_bucket(ch, d1, d2):
    """Han's relevance-change index (float32 comparisons): 0 stable, 1/2 up by > δ1/δ2, 3/4 down."""
    cb = 0
    if ch > d1 and ch <= d2:
        cb = 1
    if ch > d2:
        cb = 2
    if ch < -d1 and ch >= -d2:
        cb = 3
    if ch < -d2:
        cb = 4
    return cb


@njit(cache=True, nogil=True)
def han_rows(pages, crawls, ci, out, col0, discretize, with_bias, d1, d2, edges5, edges6, slots=None, buf=None):
    """Han 2018 rows of crawl ``ci``. Continuous: 6+2C relevances, change / 2, dist / 9 [, bias]. Discretized:
    11 one-hot columns per relevance (5 then 6 buckets), 5 change buckets, 10 distances, bias
    (``out`` rows must be zero). ``d1``, ``d2``: float32 change thresholds. ``slots``: the slot of each of
    ``pages`` when the caller knows them (no page-map probe), else ``None``; ``buf``: float32 scratch of at
    least 6 + 2C entries (``None``: allocated here)."""
    c = crawls
    keys, mslots, bp_slot, rel, cat = c.map_keys[ci], c.map_slots[ci], c.bp_slot[ci], c.rel[ci], c.cat[ci]
    par_mean, relpar_mean, link_rel, link_cat = c.par_mean[ci], c.relpar_mean[ci], c.link_rel[ci], c.link_cat[ci]
    sum_par_rel, n_par, sum_relpar_rel, n_relpar = c.sum_par_rel[ci], c.n_par[ci], c.sum_relpar_rel[ci], c.n_relpar[ci]
    change, dist = c.change[ci], c.dist[ci]
    C = cat.shape[1]
    k = 6 + 2 * C
    if buf is None:
        buf = np.empty(k, np.float32)
    for i in range(len(pages)):
        p = find(keys, mslots, pages[i]) if slots is None else np.int64(slots[i])
        if p < 0 or bp_slot[p] < 0:
            return i
        s = bp_slot[p]
        _han_rel_values(p, s, C, rel, cat, par_mean, relpar_mean, link_rel, link_cat, sum_par_rel, n_par,
                        sum_relpar_rel, n_relpar, buf)
        ch = change[s]
        ds = np.int64(dist[s])
        if not discretize:
            for j in range(k):
                out[i, col0 + j] = buf[j]
            out[i, col0 + k] = ch / np.float32(2.0)
            out[i, col0 + k + 1] = np.float32(np.float64(ds) / DIST_CAP)
            if with_bias:
                out[i, col0 + k + 2] = 1.0
        else:
            for j in range(k):
                b5, b6 = _bucket56(np.float64(buf[j]), edges5, edges6)
                out[i, col0 + 11 * j + b5] = 1.0
                out[i, col0 + 11 * j + 5 + b6] = 1.0
            out[i, col0 + 11 * k + _change_bucket(ch, d1, d2)] = 1.0
            out[i, col0 + 11 * k + 5 + min(ds, DIST_CAP)] = 1.0
            if with_bias:
                out[i, col0 + 11 * k + 15] = 1.0
    return -1


@njit(cache=True, nogil=True)
def han_index_rows(pages, crawls, ci, out, head, tail, d1, d2, edges5, edges6, scale):
    """Han 2018's integer-index rows (``HanIndexFeatures``) of crawl ``ci``: for each relevance of ``head``
    (indexes into the 6+2C relevances of :func:`_han_rel_values`) its 5- and 6-bucket index, then the distance
    (capped) and the change bucket, then the same pairs for ``tail``; every value times ``scale[col]``. Returns
    the first row index without a fetched parent, or -1."""
    c = crawls
    keys, slots, bp_slot, rel, cat = c.map_keys[ci], c.map_slots[ci], c.bp_slot[ci], c.rel[ci], c.cat[ci]
    par_mean, relpar_mean, link_rel, link_cat = c.par_mean[ci], c.relpar_mean[ci], c.link_rel[ci], c.link_cat[ci]
    sum_par_rel, n_par, sum_relpar_rel, n_relpar = c.sum_par_rel[ci], c.n_par[ci], c.sum_relpar_rel[ci], c.n_relpar[ci]
    change, dist = c.change[ci], c.dist[ci]
    C = cat.shape[1]
    buf = np.empty(6 + 2 * C, np.float32)
    for i in range(len(pages)):
        p = find(keys, slots, pages[i])
        if p < 0 or bp_slot[p] < 0:
            return i
        s = bp_slot[p]
        _han_rel_values(p, s, C, rel, cat, par_mean, relpar_mean, link_rel, link_cat, sum_par_rel, n_par,
                        sum_relpar_rel, n_relpar, buf)
        col = 0
        for part in range(2):
            idx = head if part == 0 else tail
            for jj in range(len(idx)):
                b5, b6 = _bucket56(np.float64(buf[idx[jj]]), edges5, edges6)
                out[i, col] = np.float32(b5) * scale[col]
                out[i, col + 1] = np.float32(b6) * scale[col + 1]
                col += 2
            if part == 0:
                out[i, col] = np.float32(min(np.int64(dist[s]), DIST_CAP)) * scale[col]
                out[i, col + 1] = np.float32(_change_bucket(change[s], d1, d2)) * scale[col + 1]
                col += 2
    return -1


@njit(cache=True, nogil=True)
def tres_rows(pages, crawls, ci, page_domain, out, col0, with_bias, slots=None, doms=None):
    """TRES rows of crawl ``ci``: parent reward, 1/(1+dist), path relevance ratio, keyword in URL / anchor, domain
    relevant ratio, domain known (1 / 0.5) [, bias]. ``slots``: as for :func:`han_rows`; ``doms``: the domain of each
    of ``pages`` when the caller has them (``page_domain`` not read), or ``None``."""
    c = crawls
    keys, mslots, bp_slot, relevant, dist = c.map_keys[ci], c.map_slots[ci], c.bp_slot[ci], c.relevant[ci], \
        c.dist[ci]
    path_rel, path_len, kw_url, kw_anchor = c.path_rel[ci], c.path_len[ci], c.kw_url[ci], c.kw_anchor[ci]
    dom_fetched, dom_relevant, dmap_keys, dmap_slots = c.dom_fetched[ci], c.dom_relevant[ci], c.dmap_keys[ci], \
        c.dmap_slots[ci]
    for i in range(len(pages)):
        pg = pages[i]
        p = find(keys, mslots, pg) if slots is None else np.int64(slots[i])
        if p < 0 or bp_slot[p] < 0:
            return i
        s = bp_slot[p]
        out[i, col0] = 1.0 if relevant[s] else 0.0
        out[i, col0 + 1] = np.float32(1.0 / (1.0 + np.float64(dist[s])))
        out[i, col0 + 2] = np.float32(np.float64(path_rel[s]) / np.float64(max(path_len[s], 1)))
        out[i, col0 + 3] = 1.0 if kw_url[p] else 0.0
        out[i, col0 + 4] = 1.0 if kw_anchor[p] else 0.0
        dm = page_domain[pg] if doms is None else np.int32(doms[i])
        d = find(dmap_keys, dmap_slots, dm)  # the domain's slot (-1: no page of it counted)
        f = dom_fetched[d] if d >= 0 else 0
        out[i, col0 + 5] = np.float32(np.float64(dom_relevant[d]) / np.float64(f)) if f > 0 else np.float32(0.0)
        out[i, col0 + 6] = 1.0 if f > 0 else 0.5
        if with_bias:
            out[i, col0 + 7] = 1.0
    return -1


@njit(cache=True, nogil=True)
def _disc(x):
    """Thesis §3.3.1: negatives → 0, x ≥ 1 → 9, else int(10 x) (float64 in)."""
    v = np.floor((0.0 if x < 0 else x) * 10.0)
    return min(max(v, 0.0), 9.0)


@njit(cache=True, nogil=True)
def thesis_rows(pages, crawls, ci, out, code_bins, sigma1, sigma2, scale, normalize):
    """Pertejo 2021's ordinal rows of crawl ``ci`` (see :mod:`gym_crawl.features.thesis`)."""
    c = crawls
    keys, slots, bp_slot, rel, cat = c.map_keys[ci], c.map_slots[ci], c.bp_slot[ci], c.rel[ci], c.cat[ci]
    par_mean, relpar_mean, link_rel, link_cat = c.par_mean[ci], c.relpar_mean[ci], c.link_rel[ci], c.link_cat[ci]
    sum_par_rel, n_par, sum_relpar_rel, n_relpar = c.sum_par_rel[ci], c.n_par[ci], c.sum_relpar_rel[ci], c.n_relpar[ci]
    change, dist = c.change[ci], c.dist[ci]
    C = cat.shape[1]
    for i in range(len(pages)):
        p = find(keys, slots, pages[i])
        if p < 0 or bp_slot[p] < 0:
            return i
        s = bp_slot[p]
        out[i, 0] = _disc(np.float64(rel[s]))
        out[i, 1] = _disc(np.float64(par_mean[s]))
        out[i, 2] = _disc(np.float64(relpar_mean[s]))
        c = np.float64(change[s])
        if not code_bins:
            out[i, 3] = min(max(np.floor((c + 2.0) / 0.5), 0.0), 7.0)
        else:
            v = 4
            if c >= -sigma2 and c < 0:
                v = 3
            if c >= sigma2:
                v = 2
            if c >= sigma1 and c < sigma2:
                v = 1
            if c >= 0 and c < sigma1:
                v = 0
            out[i, 3] = v
        out[i, 4] = DIST_CAP - min(np.int64(dist[s]), DIST_CAP)
        for j in range(C):
            out[i, 5 + j] = _disc(np.float64(cat[s, j]))
        out[i, 5 + C] = _disc(np.float64(link_rel[p]))
        out[i, 6 + C] = _disc(np.float64(sum_par_rel[p]) / np.float64(max(n_par[p], 1)))
        nr = n_relpar[p]
        out[i, 7 + C] = _disc(np.float64(sum_relpar_rel[p]) / np.float64(nr) if nr > 0 else 0.0)
        for j in range(C):
            out[i, 8 + C + j] = _disc(np.float64(link_cat[p, j]))
        if normalize:
            for j in range(out.shape[1]):
                out[i, j] = out[i, j] * scale[j]
    return -1


@njit(cache=True, nogil=True)
def layout_rows(layout, pages, crawls, i, page_domain, rows, slots=None, buf=None, doms=None):
    """The rows of frontier ``pages`` in a feature set's batched ``layout`` into ``rows`` (zeroed).

    :param layout: what :meth:`~gym_crawl.features.sets.FeatureSet.batch_layout` hands the batched step, with
        ``delta1``, ``delta2`` as float32: ``kind`` :data:`FEAT_HAN` (``han_discretized``: the tilings),
        :data:`FEAT_TRES`, or :data:`FEAT_COMBINED` (Han's without its bias, TRES's from column ``tres_col0``
        without its bias, one bias column last).
    :param pages: (n,) int32 frontier pages.
    :param crawls: :class:`~gym_crawl.crawl.bundles.CrawlArrays`; the rows are crawl ``i``'s.
    :param page_domain: (n_pages,) int32.
    :param rows: (n, d) float32, zeroed.
    :param slots: (n,) the crawl's slots of ``pages`` when the caller has them (no page-map probe), or ``None``.
    :param buf: float32 scratch for Han's relevances (at least 6 + 2C entries), or ``None`` (allocated per call).
    :param doms: the domain of each of ``pages`` when the caller has them (TRES's columns then do not read
        ``page_domain``), or ``None``.
    """
    kind = layout.kind
    if slots is not None:
        _prefetch_rows(crawls, i, slots, kind != FEAT_TRES, kind != FEAT_HAN)
    if kind == FEAT_HAN or kind == FEAT_COMBINED:  # noqa: SIM109  (numba kernel)
        han_rows(pages, crawls, i, rows, 0, layout.han_discretized, kind == FEAT_HAN, layout.delta1, layout.delta2,
                 EDGES5, EDGES6, slots, buf)
    if kind == FEAT_TRES or kind == FEAT_COMBINED:  # noqa: SIM109  (numba kernel)
        tres_rows(pages, crawls, i, page_domain, rows, layout.tres_col0, kind == FEAT_TRES, slots, doms)
    if kind == FEAT_COMBINED:
        d = rows.shape[1]
        for j in range(len(pages)):
            rows[j, d - 1] = 1.0


@njit(cache=True, nogil=True)
def _prefetch_rows(crawls, i, slots, han, tres):
    """Ask for the lines the rows of the pages at ``slots`` read (Han's columns with ``han``, TRES's with ``tres``):
    the pages' own, then their best parents'. Rows of pages the step did not touch find them cold, and the row
    kernels' loads of one row wait on its best parent's slot; asked for together, they arrive together."""
    c = crawls
    bp_slot = c.bp_slot[i]
    link_rel, sum_par_rel, n_par, sum_relpar_rel, n_relpar = c.link_rel[i], c.sum_par_rel[i], c.n_par[i], \
        c.sum_relpar_rel[i], c.n_relpar[i]
    kw_url, kw_anchor = c.kw_url[i], c.kw_anchor[i]
    rel, par_mean, relpar_mean, change, dist = c.rel[i], c.par_mean[i], c.relpar_mean[i], c.change[i], c.dist[i]
    relevant, path_rel, path_len = c.relevant[i], c.path_rel[i], c.path_len[i]
    cat, link_cat = c.cat[i], c.link_cat[i]
    C = cat.shape[1]
    cat_flat, link_cat_flat = cat.reshape(cat.size), link_cat.reshape(link_cat.size)
    n = len(slots)
    for j in range(n):
        p = np.int64(slots[j])
        prefetch(bp_slot, p)
        if han:
            prefetch(link_rel, p)
            prefetch(link_cat_flat, p * C)
            prefetch(sum_par_rel, p)
            prefetch(n_par, p)
            prefetch(sum_relpar_rel, p)
            prefetch(n_relpar, p)
        if tres:
            prefetch(kw_url, p)
            prefetch(kw_anchor, p)
    for j in range(n):
        b = np.int64(bp_slot[slots[j]])
        if b < 0:
            continue
        prefetch(dist, b)
        if han:
            prefetch(rel, b)
            prefetch(cat_flat, b * C)
            prefetch(par_mean, b)
            prefetch(relpar_mean, b)
            prefetch(change, b)
        if tres:
            prefetch(relevant, b)
            prefetch(path_rel, b)
            prefetch(path_len, b)


@njit(cache=True, nogil=True)
def refresh_rows(layout, rows, doms, n, crawls, ci, domain=-1):
    """Bring ``rows[:n]``, the rows of pages of domains ``doms[:n]`` (the rows' domain ids, kept beside them by the
    caller: no read of the web's ``page_domain`` per row) in a feature set's batched ``layout``, up to date in place
    after a fetch: TRES's domain relevant ratio and domain-known columns (from ``layout.tres_col0 + 5``) change
    with every fetch in a page's domain (crawl ``ci``'s per-domain counters in ``crawls``);
    Han's columns do not. ``domain`` >= 0: only the rows of pages of that domain (the fetched page's: the only
    counters the fetch changed, when every row was up to date before it). A row written since is left as it is
    (the same values)."""
    if layout.kind == FEAT_TRES or layout.kind == FEAT_COMBINED:  # noqa: SIM109  (numba kernel)
        c0 = layout.tres_col0 + 5
        dom_fetched, dom_relevant = crawls.dom_fetched[ci], crawls.dom_relevant[ci]
        dmap_keys, dmap_slots = crawls.dmap_keys[ci], crawls.dmap_slots[ci]
        if domain >= 0:  # one domain: its two values once, written into the rows of its pages
            ratio, known = _domain_columns(domain, dom_fetched, dom_relevant, dmap_keys, dmap_slots)
            for j in range(n):
                if doms[j] == domain:
                    rows[j, c0] = ratio
                    rows[j, c0 + 1] = known
            return
        for j in range(n):
            ratio, known = _domain_columns(doms[j], dom_fetched, dom_relevant, dmap_keys, dmap_slots)
            rows[j, c0] = ratio
            rows[j, c0 + 1] = known


@njit(cache=True, nogil=True)
def _domain_columns(dm, dom_fetched, dom_relevant, dmap_keys, dmap_slots):
    """TRES's domain relevant ratio and domain-known values (float32) of domain ``dm``."""
    ds = find(dmap_keys, dmap_slots, dm)  # the domain's slot (-1: no page of it counted)
    fd = dom_fetched[ds] if ds >= 0 else 0
    ratio = np.float32(np.float64(dom_relevant[ds]) / np.float64(fd)) if fd > 0 else np.float32(0.0)
    return ratio, np.float32(1.0) if fd > 0 else np.float32(0.5)
