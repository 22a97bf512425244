"""Compiled (numba) kernels of the crawl step over the columnar crawl state.

One fetch is one call of :func:`fetch_page`: frontier removal, the fetched page's statistics, the per-domain counters
and cap, and the expansion of its out-links into the frontier (per-target aggregation of the discovering links, Han's
parent aggregates, TRES's best parent). Scores are read from per-topic tables (:meth:`TopicScorer.page_table`,
:meth:`TopicScorer.link_table`) that hold exactly what the one-page / one-range numpy calls computed, so trajectories
are bit-identical to those numpy calls; a page's row there is found with :func:`page_row` and :func:`link_base` (keyed
tables, sized by the pages scored, or dense ones indexed by page and link id).

Arithmetic follows numpy's promotion rules, written out: float32 array updates stay float32 (``sum_par_rel += rel``),
Python-float expressions are float64 and cast to float32 when stored (``wrl``, ``change``), ``float32 / int32`` divides
in float64.

The crawl's per-page columns are indexed by *slot* (:mod:`gym_crawl.crawl.fields`): a kernel finds a page's slot in the
crawl's page map (:func:`gym_crawl.pagemap.find`) once and reads every column there, and a page the crawl touches for
the first time gets the next slot (:func:`new_slot`). The per-domain columns are indexed the same way by *domain slot*:
a domain gets the next one when the crawl first counts or chains a page of it (:func:`dom_claim`), found in the crawl's
domain map (:func:`dom_slot`; -1: a domain the crawl has not counted, whose counters read 0); loops over domains visit
the domain slots in ascending domain id (:func:`dom_order`), the order a column indexed by domain id gave.

Scalar counters live in one int64 array (``ctr``, indices ``C_*``) and the reward sum in a float64 array, so kernels can
update them in place; :class:`CrawlState` exposes them as properties.

:func:`fetch_page` takes its arrays in four named bundles (:mod:`gym_crawl.crawl.bundles`): the topic's ``ScoreTables``,
the corpus' ``LinkGraph``, the ``CrawlArrays`` of N crawls with the index of the one that fetches, and the ``FetchWork``
space.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from gym_crawl._memory import prefetch, prefetch_range, prefetch_rows
from gym_crawl.crawl.bundles import borrowed_row as brow
from gym_crawl.crawl.bundles import page_domain_of
from gym_crawl.crawl.link_order import page_link_order, page_targets
from gym_crawl.pagemap import EMPTY, find, insert, probe

__all__ = ["C_FR_SIZE", "C_N_FETCHED", "C_STEP", "C_RELEVANT_FOUND", "C_RELEVANT_DOMAINS", "C_ANY_BLOCKED",
           "C_N_SLOTS", "C_N_DSLOTS", "N_COUNTERS", "dom_claim", "dom_order", "dom_slot", "fetch_page",
           "block_over_cap", "chain_prepend", "chain_remove", "frontier_add",
           "frontier_remove", "link_base", "links_ready", "new_slot", "page_ready", "page_row",
           "slot_of",
           "topk_push", "topk_select", "topk_select_slots", "topk_update",
           "topk_update_slots", "UNSEEN", "FRONTIER",
           "VISITED", "BLOCKED", "DIST_CAP"]

UNSEEN, FRONTIER, VISITED, BLOCKED = 0, 1, 2, 3
DIST_CAP = 9
C_FR_SIZE, C_N_FETCHED, C_STEP, C_RELEVANT_FOUND, C_RELEVANT_DOMAINS, C_ANY_BLOCKED, C_N_SLOTS, C_N_DSLOTS = range(8)
N_COUNTERS = 8


@njit(cache=True, nogil=True)
def dom_slot(d, dmap_keys, dmap_slots):
    """The domain slot of domain ``d`` in a crawl's domain map (-1: the crawl has not claimed it)."""
    return find(dmap_keys, dmap_slots, d)


@njit(cache=True, nogil=True)
def dom_claim(d, dmap_keys, dmap_slots, dslot_dom, ctr):
    """The domain slot of domain ``d``, given the next one (its columns at their reset values) when the crawl has
    not claimed it. A crawl claims a domain only for a page it touched, so its domain slots never outnumber its page
    slots (the capacity both share)."""
    s = find(dmap_keys, dmap_slots, d)
    if s < 0:
        s = ctr[C_N_DSLOTS]
        ctr[C_N_DSLOTS] = s + 1
        dslot_dom[s] = d
        insert(dmap_keys, dmap_slots, d, s)
    return s


@njit(cache=True, nogil=True)
def dom_order(dslot_dom, ctr):
    """The crawl's domain slots in ascending domain id (the order of a loop over domain ids)."""
    return np.argsort(dslot_dom[:ctr[C_N_DSLOTS]])


@njit(cache=True, nogil=True)
def page_row(scores, page):
    """The row of a scored ``page`` in the topic's page scores (:class:`~gym_crawl.crawl.bundles.ScoreTables`;
    -1 for a page a keyed table has not scored)."""
    if scores.page_keyed:
        return find(scores.page_keys, scores.page_rows, page)
    return np.int64(page)


@njit(cache=True, nogil=True)
def page_ready(scores, page):
    """Whether ``page``'s own scores are in the topic's page scores."""
    if scores.page_keyed:
        return find(scores.page_keys, scores.page_rows, page) >= 0
    return scores.page_done[page]


@njit(cache=True, nogil=True)
def link_base(scores, page, lo):
    """The row of the first out-link of a scored ``page`` in the topic's link scores (``lo``: its first link id;
    -1 for a page a keyed table has not scored): link ``l`` of the page is at row ``base + l - lo``."""
    if scores.link_keyed:
        return find(scores.link_keys, scores.link_bases, page)
    return np.int64(lo)


@njit(cache=True, nogil=True)
def links_ready(scores, page):
    """Whether ``page``'s out-links are in the topic's link scores."""
    if scores.link_keyed:
        return find(scores.link_keys, scores.link_bases, page) >= 0
    return scores.link_done[page]


@njit(cache=True, nogil=True)
def new_slot(page, map_keys, map_slots, slot_page, ctr):
    """Give ``page`` (untouched) the next slot, whose columns are at their reset values; returns it. The caller
    made room (:meth:`CrawlState.make_room <gym_crawl.crawl.state.CrawlState.make_room>`)."""
    s = ctr[C_N_SLOTS]
    ctr[C_N_SLOTS] = s + 1
    slot_page[s] = page
    insert(map_keys, map_slots, page, s)
    return s


@njit(cache=True, nogil=True)
def slot_of(page, map_keys, map_slots, slot_page, ctr):
    """The slot of ``page``, given the next one when the crawl has not touched it."""
    s = find(map_keys, map_slots, page)
    if s < 0:
        s = new_slot(page, map_keys, map_slots, slot_page, ctr)
    return s


@njit(cache=True, nogil=True)
def frontier_remove(s, fr_pages, fr_slots, fr_pos, ctr):
    """Take the page of slot ``s`` out of the frontier positions (the last position's page moves into its
    position); its status and domain chain are the caller's."""
    i = fr_pos[s]
    n = ctr[C_FR_SIZE] - 1
    last_s = fr_slots[n]
    fr_pages[i] = fr_pages[n]
    fr_slots[i] = last_s
    fr_pos[last_s] = i
    fr_pos[s] = -1
    ctr[C_FR_SIZE] = n


@njit(cache=True, nogil=True)
def frontier_add(s, page, fr_pages, fr_slots, fr_pos, ctr):
    """Append the page of slot ``s`` to the frontier positions (its status is the caller's)."""
    fs = ctr[C_FR_SIZE]
    fr_pages[fs] = page
    fr_slots[fs] = s
    fr_pos[s] = fs
    ctr[C_FR_SIZE] = fs + 1


@njit(cache=True, nogil=True)
def chain_remove(s, d, dom_next, dom_prev, dom_head):
    """Unlink slot ``s`` from the chain of frontier pages of its domain (domain slot ``d``)."""
    nx_ = dom_next[s]
    pv = dom_prev[s]
    if pv >= 0:
        dom_next[pv] = nx_
    else:
        dom_head[d] = nx_
    if nx_ >= 0:
        dom_prev[nx_] = pv
    dom_next[s] = -1
    dom_prev[s] = -1


@njit(cache=True, nogil=True)
def chain_prepend(s, d, dom_next, dom_prev, dom_head):
    """Put slot ``s`` first in the chain of frontier pages of its domain (domain slot ``d``)."""
    h = dom_head[d]
    dom_next[s] = h
    dom_prev[s] = -1
    if h >= 0:
        dom_prev[h] = s
    dom_head[d] = s


@njit(cache=True, nogil=True)
def _block_domain(d, status, slot_page, fr_pages, fr_slots, fr_pos, dom_next, dom_prev, dom_head, ctr, out, k):
    """Drop every frontier page of the domain of domain slot ``d`` (chain order) into ``out[k:]``; returns the new
    k."""
    s = dom_head[d]
    k0 = k
    while s >= 0:
        out[k] = slot_page[s]
        k += 1
        nxt = dom_next[s]
        dom_next[s] = -1
        dom_prev[s] = -1
        frontier_remove(s, fr_pages, fr_slots, fr_pos, ctr)
        status[s] = BLOCKED
        s = nxt
    dom_head[d] = -1
    if k > k0:
        ctr[C_ANY_BLOCKED] = 1
    return k


@njit(cache=True, nogil=True)
def block_over_cap(cap, crawls, i):
    """Block, in domain order, every domain with ``cap`` or more fetched pages and frontier pages; the blocked
    pages go to ``crawls.out_rem[i]``, their count is returned."""
    c = crawls
    dom_fetched, dom_head = c.dom_fetched[i], c.dom_head[i]
    k = 0
    for d in dom_order(c.dslot_dom[i], c.ctr[i]):
        if dom_fetched[d] >= cap and dom_head[d] >= 0:
            k = _block_domain(d, c.status[i], c.slot_page[i], c.fr_pages[i], c.fr_slots[i], c.fr_pos[i],
                              c.dom_next[i], c.dom_prev[i], dom_head, c.ctr[i], c.out_rem[i], k)
    return k


@njit(cache=True, nogil=True, inline="always")
def _prefetch_target(s, relevant, status, bp_slot, n_par, max_par_wrl, sum_par_rel, link_rel, min_par_dist, kw_url,
                     kw_anchor, n_relpar, sum_relpar_rel):
    """Ask for the lines of slot ``s``'s columns that a fetch's walk reads and writes at a target."""
    prefetch(status, s)
    prefetch(bp_slot, s)
    prefetch(n_par, s)
    prefetch(max_par_wrl, s)
    prefetch(sum_par_rel, s)
    prefetch(link_rel, s)
    prefetch(min_par_dist, s)
    prefetch(kw_url, s)
    prefetch(kw_anchor, s)
    if relevant:
        prefetch(n_relpar, s)
        prefetch(sum_relpar_rel, s)


@njit(cache=True, nogil=True)
def fetch_page(page, slot, count_step, r, relevant, eval_rel, beta, cap, scores, graph, crawls, i, work):
    """Crawl ``i`` of ``crawls`` fetches ``page`` (frontier or unseen; the caller checked, and made room for
    the page and its out-links in the crawl's slots). ``slot``: the page's slot when the caller knows it (a
    selected page's), else -1 (found in the page map, or handed out).

    :param r: the reward; ``relevant``: the reward's relevant flag; ``eval_rel``: the ground truth.
    :param count_step: the fetch counts as a step.
    :param beta: Han's smoothing factor of the ancestors' relevance.
    :param cap: the per-domain cap, < 0 for none.
    :param scores: the topic's :class:`~gym_crawl.crawl.bundles.ScoreTables`.
    :param graph: the :class:`~gym_crawl.crawl.bundles.LinkGraph`.
    :param crawls: :class:`~gym_crawl.crawl.bundles.CrawlArrays`; row ``i`` of each is updated in place.
    :param work: the :class:`~gym_crawl.crawl.bundles.FetchWork` space.
    :returns: how many pages it added to the frontier, updated and removed, written into row ``i`` of
        ``crawls.out_new``, ``out_upd`` and ``out_rem`` (new and updated pages ascending; the slot of each updated
        page in ``work.t_sl``).

    The page's out-links are walked in ascending target page (as stored, on a corpus that stores them so:
    ``graph.by_target``; else ``graph.link_ord``, filled once per page for the corpus; sorted here when the graph holds
    no order), so a target's links are adjacent: each target is probed in the page map once (a new one takes its slot
    at the probed entry), and added to the frontier and aggregated in the same pass — no per-slot scratch column."""
    pt_rel, pt_cat, pt_tfidf = scores.page_rel, scores.page_cat, scores.page_tfidf
    l_rel, l_cat, l_kwu, l_kwa = scores.link_rel, scores.link_cat, scores.link_kw_url, scores.link_kw_anchor
    link_lo, link_hi, link_dst = graph.link_lo, graph.link_hi, graph.link_dst
    c = crawls
    status, fr_pages, fr_slots, fr_pos = brow(c.status, i), brow(c.fr_pages, i), brow(c.fr_slots, i), brow(c.fr_pos, i)
    fetched, map_keys, map_slots = brow(c.fetched, i), brow(c.map_keys, i), brow(c.map_slots, i)
    slot_page, dom_next, dom_prev = brow(c.slot_page, i), brow(c.dom_next, i), brow(c.dom_prev, i)
    dom_head, n_par, sum_par_rel = brow(c.dom_head, i), brow(c.n_par, i), brow(c.sum_par_rel, i)
    n_relpar, sum_relpar_rel, max_par_wrl = brow(c.n_relpar, i), brow(c.sum_relpar_rel, i), brow(c.max_par_wrl, i)
    min_par_dist, link_rel, link_cat = brow(c.min_par_dist, i), brow(c.link_rel, i), c.link_cat[i]
    kw_url, kw_anchor, best_parent = brow(c.kw_url, i), brow(c.kw_anchor, i), brow(c.best_parent, i)
    best_link, bp_slot, discovered_step = brow(c.best_link, i), brow(c.bp_slot, i), brow(c.discovered_step, i)
    rel_a, cat_a, tfidf_a, reward_a = brow(c.rel, i), c.cat[i], brow(c.tfidf, i), brow(c.reward, i)
    relevant_a, wrl, change, dist = brow(c.relevant, i), brow(c.wrl, i), brow(c.change, i), brow(c.dist, i)
    par_mean, relpar_mean, path_len = brow(c.par_mean, i), brow(c.relpar_mean, i), brow(c.path_len, i)
    path_rel, fetch_step, dom_fetched = brow(c.path_rel, i), brow(c.fetch_step, i), brow(c.dom_fetched, i)
    dom_relevant, dom_eval_relevant, ctr = brow(c.dom_relevant, i), brow(c.dom_eval_relevant, i), brow(c.ctr, i)
    sums, dmap_keys, dmap_slots = brow(c.sums, i), brow(c.dmap_keys, i), brow(c.dmap_slots, i)
    dslot_dom, out_new, out_upd = brow(c.dslot_dom, i), brow(c.out_new, i), brow(c.out_upd, i)
    out_rem, t_sl, t_key = brow(c.out_rem, i), work.t_sl, work.t_key
    sp = slot if slot >= 0 else slot_of(page, map_keys, map_slots, slot_page, ctr)
    # the page's links and their score rows, asked for now: read after the page's own statistics below
    a, b = link_lo[page], link_hi[page]
    n = b - a
    off = link_base(scores, page, a) - a  # link li's scores are at row li + off
    link_ord, ord_done = graph.link_ord, graph.ord_done
    # every line of them (a page's links span several: 27 on average on the default web, a line per 16 targets and
    # per 4 category rows), not only the first
    prefetch_range(link_dst, a, b)
    prefetch_range(l_rel, a + off, b + off)
    prefetch_range(l_kwu, a + off, b + off)
    prefetch_range(l_kwa, a + off, b + off)
    prefetch_rows(l_cat, a + off, b + off)
    if page < len(ord_done):
        prefetch_range(link_ord, a, b)
    st = status[sp]
    has_parents = st == FRONTIER and n_par[sp] > 0
    # the frontier's lines its removal reads (the page's position, the last position's page and slot), asked for
    # now and read after the page's own statistics
    prefetch(fr_pos, sp)
    nl = ctr[C_FR_SIZE] - 1
    prefetch(fr_pages, nl)
    prefetch(fr_slots, nl)
    status[sp] = VISITED
    fetched[ctr[C_N_FETCHED]] = page
    ctr[C_N_FETCHED] += 1
    fetch_step[sp] = ctr[C_STEP]
    if count_step:
        ctr[C_STEP] += 1
    prow = page_row(scores, page)
    rel = pt_rel[prow]
    rel64 = np.float64(rel)
    rel_a[sp] = rel
    for j in range(cat_a.shape[1]):
        cat_a[sp, j] = pt_cat[prow, j]
    tfidf_a[sp] = pt_tfidf[prow]
    reward_a[sp] = np.float32(r)
    relevant_a[sp] = relevant
    if has_parents:
        maxw = np.float64(max_par_wrl[sp])
        wrl[sp] = np.float32(beta * rel64 + (1.0 - beta) * maxw)
        change[sp] = np.float32(rel64 - maxw)
        if relevant:
            dist[sp] = 0
        else:
            dist[sp] = min(np.int64(min_par_dist[sp]) + 1, DIST_CAP)
        par_mean[sp] = np.float32(np.float64(sum_par_rel[sp]) / np.float64(n_par[sp]))
        nr = n_relpar[sp]
        if nr:
            relpar_mean[sp] = np.float32(np.float64(sum_relpar_rel[sp]) / np.float64(nr))
        else:
            relpar_mean[sp] = 0.0
        bs = bp_slot[sp]
        path_len[sp] = path_len[bs] + 1
        path_rel[sp] = path_rel[bs] + (1 if relevant else 0)
    else:  # a seed: no ancestors
        wrl[sp] = rel
        change[sp] = 0.0
        dist[sp] = 0 if relevant else DIST_CAP
        path_len[sp] = 1
        path_rel[sp] = 1 if relevant else 0
    if st == FRONTIER:
        if cap >= 0:
            chain_remove(sp, dom_slot(page_domain_of(graph, page), dmap_keys, dmap_slots), dom_next, dom_prev, dom_head)
        frontier_remove(sp, fr_pages, fr_slots, fr_pos, ctr)
    d = dom_claim(page_domain_of(graph, page), dmap_keys, dmap_slots, dslot_dom, ctr)
    dom_fetched[d] += 1
    if relevant:
        dom_relevant[d] += 1
    if eval_rel:
        if dom_eval_relevant[d] == 0:
            ctr[C_RELEVANT_DOMAINS] += 1
        dom_eval_relevant[d] += 1
        ctr[C_RELEVANT_FOUND] += 1
    sums[0] += r

    n_rem = 0
    if cap >= 0 and dom_fetched[d] >= cap:
        n_rem = _block_domain(d, status, slot_page, fr_pages, fr_slots, fr_pos, dom_next, dom_prev, dom_head, ctr,
                              out_rem, 0)

    # ---- expand: one entry per unvisited target, from its best (first most relevant) link, in ascending target
    # page: links walked in target order (as stored: ``graph.by_target``; else ``graph.link_ord``, or sorted here), so
    # a target's links are adjacent and each target is probed, added and aggregated once, in one pass
    direct = graph.by_target
    if direct:  # link ``a + j`` is the j-th in target order: no order to read
        order = work.t_ord[:0]
    elif page < len(ord_done):
        if not ord_done[page]:
            page_link_order(a, b, link_dst, t_key, link_ord[a:b])
            ord_done[page] = True
        order = link_ord[a:b]
    else:  # a large web stored in another order, or links of a web that grows: sorted at each fetch
        order = work.t_ord[:n]
        page_link_order(a, b, link_dst, t_key, order)
    w = wrl[sp]
    dp = dist[sp]
    step = ctr[C_STEP]
    nt = 0
    n_new = 0
    m = page_targets(a, n, direct, order, link_dst, t_key, map_keys, map_slots)
    # the slots the untouched targets will take (the next m at most, handed out in turn): their columns' lines, last
    # touched at the episode's reset, asked for together rather than met one by one by the walk below. The walk
    # keeps the two counts (``ns``: slots, ``fs``: frontier positions) in locals, stored back after it: a count read
    # back from ``ctr`` after every store to a column (which might alias it) chained each new target to the last
    ns, fs = ctr[C_N_SLOTS], ctr[C_FR_SIZE]
    for col32 in (n_par, n_relpar, bp_slot, best_parent, fr_pos, slot_page, discovered_step):
        prefetch_range(col32, ns, ns + m)
    for colf in (sum_par_rel, sum_relpar_rel, max_par_wrl, link_rel):
        prefetch_range(colf, ns, ns + m)
    for colb in (kw_url, kw_anchor):
        prefetch_range(colb, ns, ns + m)
    prefetch_range(status, ns, ns + m)
    prefetch_range(min_par_dist, ns, ns + m)
    prefetch_range(best_link, ns, ns + m)
    prefetch_rows(link_cat, ns, ns + m)
    prefetch_range(fr_pages, fs, fs + m)
    prefetch_range(fr_slots, fs, fs + m)
    # while target k is done, target k + 2's entry (asked for above) is probed and the columns its walk reads asked
    # for; its probed position is kept for its own turn (an entry never moves: a target found there stays; an empty
    # one may have been taken by target k or k + 1 since, and the probe then goes on from it)
    mask = len(map_keys) - 1
    h1 = probe(map_keys, t_key[0] >> 32) if m > 0 else 0
    h2 = probe(map_keys, t_key[1] >> 32) if m > 1 else 0
    for q in range(min(m, 2)):
        hq = h1 if q == 0 else h2
        if map_keys[hq] == t_key[q] >> 32:
            _prefetch_target(np.int64(map_slots[hq]), relevant, status, bp_slot, n_par, max_par_wrl, sum_par_rel,
                             link_rel, min_par_dist, kw_url, kw_anchor, n_relpar, sum_relpar_rel)
    for k in range(m):
        j = np.int64(t_key[k] & 0xFFFFFFFF)
        t = t_key[k] >> 32
        h = h1
        h1 = h2
        e = np.int64(t_key[k + 1] & 0xFFFFFFFF) if k + 1 < m else n
        if k + 2 < m:
            tn = t_key[k + 2] >> 32
            h2 = probe(map_keys, tn)
            if map_keys[h2] == tn:
                _prefetch_target(np.int64(map_slots[h2]), relevant, status, bp_slot, n_par, max_par_wrl, sum_par_rel,
                                 link_rel, min_par_dist, kw_url, kw_anchor, n_relpar, sum_relpar_rel)
        li = a + j if direct else a + order[j]
        if map_keys[h] == t:
            ts = np.int64(map_slots[h])
        else:
            ts = np.int64(-1)
            while map_keys[h] != EMPTY:
                h = (h + 1) & mask
        if ts >= 0 and status[ts] >= VISITED:  # the fetched page itself included
            continue
        if cap >= 0:
            td = dom_slot(page_domain_of(graph, t), dmap_keys, dmap_slots)
            if (dom_fetched[td] if td >= 0 else 0) >= cap:
                continue
        if ts < 0:  # the next slot, at the probed entry
            ts = ns
            ns += 1
            slot_page[ts] = t
            map_keys[h] = t
            map_slots[h] = ts
        lr = l_rel[li + off]
        bl = li
        kwu = l_kwu[li + off]
        kwa = l_kwa[li + off]
        for q in range(j + 1, e):  # the target's other links: the first most relevant wins
            lq = a + q if direct else a + order[q]
            x = l_rel[lq + off]
            if x > lr:
                lr = x
                bl = lq
            if l_kwu[lq + off]:
                kwu = True
            if l_kwa[lq + off]:
                kwa = True
        out_upd[nt] = t
        t_sl[nt] = ts
        nt += 1
        if status[ts] == UNSEEN:  # frontier add, in ascending page order
            out_new[n_new] = t
            n_new += 1
            fr_pages[fs] = t  # frontier_add, its count kept in a register until the walk ends
            fr_slots[fs] = ts
            fr_pos[ts] = fs
            fs += 1
            status[ts] = FRONTIER
            max_par_wrl[ts] = -np.inf
            min_par_dist[ts] = DIST_CAP
            link_rel[ts] = -np.inf
            discovered_step[ts] = step
        n_par[ts] += 1
        sum_par_rel[ts] += rel
        if relevant:
            n_relpar[ts] += 1
            sum_relpar_rel[ts] += rel
        if w > max_par_wrl[ts]:
            max_par_wrl[ts] = w
        if dp < min_par_dist[ts]:
            min_par_dist[ts] = dp
        if lr > link_rel[ts]:
            link_rel[ts] = lr
            for cc in range(link_cat.shape[1]):
                link_cat[ts, cc] = l_cat[bl + off, cc]
            best_link[ts] = bl
        if kwu:
            kw_url[ts] = True
        if kwa:
            kw_anchor[ts] = True
        bs = bp_slot[ts]
        if bs < 0 or rel > rel_a[bs]:
            best_parent[ts] = page
            bp_slot[ts] = sp
    ctr[C_N_SLOTS] = ns
    ctr[C_FR_SIZE] = fs
    if cap >= 0:  # chains prepended per domain as one block
        for j in range(n_new - 1, -1, -1):
            t = out_new[j]
            td = dom_claim(page_domain_of(graph, t), dmap_keys, dmap_slots, dslot_dom, ctr)
            chain_prepend(find(map_keys, map_slots, t), td, dom_next, dom_prev, dom_head)
    return n_new, nt, n_rem


# ---------------------------------------------------------------------------- top-K selection
# A binary min-heap of (key = -score, page) with lazy invalidation: an entry is live while its page
# is in the frontier and ``cur[page]`` still holds its score (``has[page]``).

@njit(cache=True, nogil=True)
def _less(k1, p1, k2, p2):
    return k1 < k2 or (k1 == k2 and p1 < p2)


@njit(cache=True, nogil=True)
def _heap_push(hk, hp, size, key, page):
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if _less(key, page, hk[parent], hp[parent]):
            hk[i] = hk[parent]
            hp[i] = hp[parent]
            i = parent
        else:
            break
    hk[i] = key
    hp[i] = page
    return size + 1


@njit(cache=True, nogil=True)
def _heap_pop(hk, hp, size):
    """Remove the root; returns the new size (the root must be read before)."""
    size -= 1
    if size == 0:
        return 0
    key, page = hk[size], hp[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _less(hk[c + 1], hp[c + 1], hk[c], hp[c]):
            c += 1
        if _less(hk[c], hp[c], key, page):
            hk[i] = hk[c]
            hp[i] = hp[c]
            i = c
        else:
            break
    hk[i] = key
    hp[i] = page
    return size


@njit(cache=True, nogil=True)
def topk_update(pages, crawls, i, hk, hp, hsize, fetched_page, removed):
    """Record the link-text scores (``link_rel``) of crawl ``i``'s frontier ``pages`` (push those that changed);
    forget the fetched and removed pages. (:func:`topk_update_slots` with the pages' slots looked up.)"""
    c = crawls
    map_keys, map_slots = c.map_keys[i], c.map_slots[i]
    slots = np.empty(len(pages), np.int32)
    for j in range(len(pages)):
        slots[j] = find(map_keys, map_slots, pages[j])
    topk_update_slots(pages, slots, crawls, i, hk, hp, hsize, find(map_keys, map_slots, fetched_page), removed)


@njit(cache=True, nogil=True)
def topk_update_slots(pages, slots, crawls, i, hk, hp, hsize, fetched_slot, removed):
    """:func:`topk_update` given the slot of each of ``pages`` (``slots[j]``, as :func:`fetch_page` leaves them in
    ``work.t_sl``) and of the fetched page: no page-map probe for them."""
    c = crawls
    link_rel, cur, has = c.link_rel[i], c.tk_cur[i], c.tk_has[i]
    # every page's flag and score asked for first: the loop below branches on them (a push or not, unpredictable),
    # and a branch mispredicted on a line still on its way would leave the next pages' lines unasked for
    for j in range(len(pages)):
        s = slots[j]
        prefetch(has, s)
        prefetch(cur, s)
    size = hsize[0]
    for j in range(len(pages)):
        s = slots[j]
        sc = link_rel[s]
        if not has[s] or cur[s] != sc:
            cur[s] = sc
            has[s] = True
            size = _heap_push(hk, hp, size, -sc, pages[j])
    hsize[0] = size
    has[fetched_slot] = False
    if len(removed):
        map_keys, map_slots = c.map_keys[i], c.map_slots[i]
        for j in range(len(removed)):
            has[find(map_keys, map_slots, removed[j])] = False


@njit(cache=True, nogil=True)
def topk_push(pages, crawls, i, hk, hp, hsize):
    """Push crawl ``i``'s ``pages`` with their link-text scores (pages that came back to the frontier: their old
    heap entries were dropped as stale)."""
    c = crawls
    map_keys, map_slots, link_rel, cur, has = c.map_keys[i], c.map_slots[i], c.link_rel[i], c.tk_cur[i], c.tk_has[i]
    size = hsize[0]
    for j in range(len(pages)):
        p = pages[j]
        s = find(map_keys, map_slots, p)
        sc = link_rel[s]
        cur[s] = sc
        has[s] = True
        size = _heap_push(hk, hp, size, -sc, p)
    hsize[0] = size


@njit(cache=True, nogil=True)
def topk_select(k, crawls, i, hk, hp, hsize, sel_p, sel_k, nsel):
    """The ``k`` live entries of crawl ``i`` with the smallest (-score, page), in that order.

    Two tiers, as a sorted selection of at most ``k`` entries (``sel_*[:nsel[0]]``, kept between
    calls) over the heap of everything else: the selection drops entries that went stale, then the
    heap gives up only what beats the selection's worst or refills it (the worst evicted back), so
    a step costs O((changes + 1) log H) rather than O(k log H). Stale and duplicate heap entries met
    on the way are dropped. Returns the selection's size; ``sel_p`` must hold ``k + 1`` entries.
    (:func:`topk_select_slots` with no slot hints.)"""
    sel_s = np.full(len(sel_p), -1, np.int32)
    return topk_select_slots(k, crawls, i, hk, hp, hsize, sel_p, sel_k, nsel, sel_s)


@njit(cache=True, nogil=True)
def topk_select_slots(k, crawls, i, hk, hp, hsize, sel_p, sel_k, nsel, sel_s):
    """:func:`topk_select`, keeping the slot of each selected page in ``sel_s`` (int32, as long as ``sel_p``): on
    entry ``sel_s[j]`` is a hint for the slot of ``sel_p[j]`` (used when ``slot_page`` confirms it, a slot handed out
    this episode that holds the page — one read where the page map costs a probe of two arrays —; looked up
    otherwise, so a stale or arbitrary hint only costs the look-up); on return ``sel_s[:n]`` holds the slots of the
    selection. Same selection as without hints."""
    c = crawls
    map_keys, map_slots, status, slot_page = c.map_keys[i], c.map_slots[i], c.status[i], c.slot_page[i]
    cur, has, mark = c.tk_cur[i], c.tk_has[i], c.tk_mark[i]
    n_slots = c.ctr[i, C_N_SLOTS]
    n = 0
    for j in range(nsel[0]):
        p = sel_p[j]
        s = np.int64(sel_s[j])
        if s < 0 or s >= n_slots or slot_page[s] != p:  # a hint not confirmed: looked up
            s = find(map_keys, map_slots, p)
        if status[s] == FRONTIER and has[s] and -cur[s] == sel_k[j]:
            sel_p[n] = p
            sel_k[n] = sel_k[j]
            sel_s[n] = s
            mark[s] = True
            n += 1
    size = hsize[0]
    while n > k:  # k shrank since the last call
        n -= 1
        mark[sel_s[n]] = False
        size = _heap_push(hk, hp, size, sel_k[n], sel_p[n])
    while size > 0:
        key, p = hk[0], hp[0]
        if n >= k and (k == 0 or not _less(key, p, sel_k[n - 1], sel_p[n - 1])):
            break
        size = _heap_pop(hk, hp, size)
        s = find(map_keys, map_slots, p)
        if status[s] != FRONTIER or not has[s] or -cur[s] != key or mark[s]:
            continue
        j = n  # insertion sort into the selection
        while j > 0 and _less(key, p, sel_k[j - 1], sel_p[j - 1]):
            sel_k[j] = sel_k[j - 1]
            sel_p[j] = sel_p[j - 1]
            sel_s[j] = sel_s[j - 1]
            j -= 1
        sel_k[j] = key
        sel_p[j] = p
        sel_s[j] = s
        mark[s] = True
        n += 1
        if n > k:
            n -= 1
            mark[sel_s[n]] = False
            size = _heap_push(hk, hp, size, sel_k[n], sel_p[n])
    for j in range(n):
        mark[sel_s[j]] = False
    hsize[0] = size
    nsel[0] = n
    return n


# ------------------------------------------------------------------------ Tree-Frontier routing
@njit(cache=True, nogil=True)
def tree_route(X, left, right, feat, thr, out):
    """Leaf of each row of ``X`` in a binary tree (``left[n] < 0``: leaf; go right when
    ``X[i, feat[n]] >= thr[n]``, compared in float64 as numpy compares a float32 row with float64
    thresholds)."""
    for i in range(X.shape[0]):
        n = 0
        while left[n] >= 0:
            n = right[n] if np.float64(X[i, feat[n]]) >= thr[n] else left[n]
        out[i] = n


# ------------------------------------------------------ Tree-Frontier buckets (reducers/tree.py _Buckets)
@njit(cache=True, nogil=True)
def buckets_add_grouped(items, bucket, buf, start, cap, count, where, pos, meta):
    """Append ``items`` to their ``bucket`` s, grouped by bucket in increasing bucket order and, within
    a bucket, in the given order (a stable sort). A bucket whose segment is too small moves to the
    end of ``buf`` with the next power-of-two capacity (>= 8). ``meta = [end, garbage]``.

    Nothing is changed when ``buf`` lacks room for the moved segments: returns ``-room_needed`` so
    the caller can compact or grow the buffer and call again; else 0."""
    order = np.argsort(bucket, kind="mergesort")
    n = len(order)
    need_room = 0
    i = 0
    while i < n:  # phase 1: room check, no mutation
        b = bucket[order[i]]
        j = i
        while j < n and bucket[order[j]] == b:
            j += 1
        need = count[b] + (j - i)
        if need > cap[b]:
            nc = 8
            while nc < need:
                nc *= 2
            need_room += nc
        i = j
    if meta[0] + need_room > len(buf):
        return -need_room
    i = 0
    while i < n:
        b = bucket[order[i]]
        j = i
        while j < n and bucket[order[j]] == b:
            j += 1
        c = count[b]
        need = c + (j - i)
        if need > cap[b]:
            nc = 8
            while nc < need:
                nc *= 2
            s = meta[0]
            meta[0] += nc
            old = start[b]
            for t in range(c):
                buf[s + t] = buf[old + t]
            meta[1] += cap[b]
            start[b] = s
            cap[b] = nc
        s = start[b]
        for t in range(i, j):
            it = items[order[t]]
            buf[s + c] = it
            where[it] = b
            pos[it] = c
            c += 1
        count[b] = c
        i = j
    return 0


@njit(cache=True, nogil=True)
def buckets_remove_many(items, buf, start, count, where, pos):
    """Swap-remove each of ``items`` (in order) from its bucket."""
    for k in range(len(items)):
        item = items[k]
        b = where[item]
        i = pos[item]
        s = start[b]
        last_i = count[b] - 1
        last = buf[s + last_i]
        buf[s + i] = last
        pos[last] = i
        count[b] = last_i
        where[item] = -1
        pos[item] = -1
