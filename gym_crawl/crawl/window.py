"""The window of pages in flight: a crawl that keeps several requests open at once, politely.

With one page in flight (the MDP of the papers) a step fetches the page it chose before it returns. With a
window of ``W`` pages, a step *dispatches* the page it chose — the page leaves the frontier and is *in
flight* (status :data:`INFLIGHT`) — and returns as soon as fewer than ``W`` pages are in flight, after
*landing* every page that arrived meanwhile (:meth:`FetchWindow.land` puts it back where the fetch kernel
expects a frontier page, and :meth:`~gym_crawl.crawl.state.CrawlState.fetch` does the rest: scores, reward,
statistics, out-links). :class:`FetchWindow` keeps the in-flight set; the env decides when to wait.

**The per-host limit is a mask.** A frontier page whose host (its domain) already has ``per_host`` pages in
flight — or whose host is *held* by the page source (a host whose robots.txt has not arrived yet) — is not
offered: :meth:`FetchWindow.reconcile` *parks* it (status :data:`PARKED`, out of the frontier store, so no
reducer, mask or page-mode agent sees it) and returns it to the frontier when its host is free again. The
rule depends only on the in-flight set and the held hosts, not on a clock, and it spreads the window over
hosts as Scrapy's per-domain slots do. A parked page still collects its parents' aggregates (the fetch
kernel updates every discovered page whose status is below ``VISITED`` and not ``UNSEEN``), and a domain cap
reached while it was parked blocks it when it would return.

**Focus** (:meth:`FetchWindow.may_fill`). A free slot is not always worth filling: when the best pages the crawl
knows wait for hosts that are busy, the best offerable page may rank far below them, and fetching it buys pages per
second with relevance. So, as in Mercator's frontier, a slot takes a page while others are in flight only when the
best offerable page's link score (``link_rel``, best-first's priority) is close to the best of every page the
crawl could fetch, parked ones included: at least ``best − focus_slack × (best − mean)``. Otherwise the env waits
for a page to land, and the slot stays idle. Like the mask, the rule reads the crawl state only, so a crawl stays
deterministic given its arrivals.

Statuses (the fetch kernel's ``UNSEEN``, ``FRONTIER``, ``VISITED``, ``BLOCKED`` plus two):

* :data:`INFLIGHT` (4, above ``VISITED``): the fetch kernel neither re-adds nor updates it;
* :data:`PARKED` (-1, below ``UNSEEN``): the kernel updates its aggregates and does not re-add it.

Everything here is O(pages moved), except that parking a host that just became busy scans the frontier once, and
the focus rule scans the frontier and the parked pages once per decision while pages are in flight (O(frontier),
compiled). The window's own memory follows the pages in flight: pages in flight per host for the hosts that have
some, and the sorted ids of the hosts that are busy or held (a parked page's list hangs off its domain's slot in the
crawl state), never an array as long as the web's domain list.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from gym_crawl.crawl import kernels as K
from gym_crawl.crawl.state import CrawlState
from gym_crawl.pagemap import find

__all__ = ["DEFAULT_FOCUS_SLACK", "INFLIGHT", "PARKED", "FetchWindow", "check_focus_slack"]

INFLIGHT = 4
"""Status of a dispatched page whose content has not been landed yet."""
PARKED = -1
"""Status of a discovered, unfetched page held out of the frontier (its host is busy or held)."""
_FR = K.C_FR_SIZE
_NO_DOMAINS = np.zeros(0, np.int32)

DEFAULT_FOCUS_SLACK = 0.0
"""The default ``focus_slack`` of a window (:meth:`FetchWindow.may_fill`): while pages are in flight, a free slot
takes a page only when its link score is as high as the best page's the crawl knows (ties included), so a crawl's
relevant pages at equal pages are those of one page in flight, and pages in flight add speed only where the best
pages sit on several hosts. Why not more: link scores of pages that are not relevant often sit close to the best
(a best-first crawl fetches them at one page in flight too), and on a loopback web whose topic sits on two of eight
hosts a slack of 0.1 already lost a quarter of the relevant pages at equal pages (``benchmarks/RESULTS.md``,
"Focus under concurrency"); a web whose good pages spread over many hosts gets its pages per second with 0.5."""


def check_focus_slack(slack: object) -> float:
    """``slack`` as a float >= 0 (``math.inf``: no focus rule), else ``ValueError`` naming it and the valid values."""
    if isinstance(slack, bool) or not isinstance(slack, (int, float, np.integer, np.floating)) \
            or math.isnan(slack) or slack < 0:
        raise ValueError(f"focus_slack must be a number >= 0 (0: a free slot takes only a page as good as the best "
                         f"known; larger: more pages per second, less focus; math.inf: fill every free slot), "
                         f"got {slack!r}")
    return float(slack)


@njit(cache=True, nogil=True)
def _flagged(flagged, d):
    """Whether domain id ``d`` is in ``flagged`` (sorted domain ids)."""
    j = np.searchsorted(flagged, d)
    return j < len(flagged) and flagged[j] == d


@njit(cache=True, nogil=True)
def _take(s, d, c, i, chain):
    """Remove the page of slot ``s`` (domain id ``d``) from crawl ``i``'s frontier store (and its domain chain when
    ``chain``); status unchanged."""
    if chain:
        K.chain_remove(s, K.dom_slot(d, c.dmap_keys[i], c.dmap_slots[i]), c.dom_next[i], c.dom_prev[i],
                       c.dom_head[i])
    K.frontier_remove(s, c.fr_pages[i], c.fr_slots[i], c.fr_pos[i], c.ctr[i])


@njit(cache=True, nogil=True)
def _put(s, page, d, c, i, chain):
    """Append ``page`` (slot ``s``, domain id ``d``) to crawl ``i``'s frontier store (prepend it to its domain chain
    when ``chain``), status FRONTIER."""
    K.frontier_add(s, page, c.fr_pages[i], c.fr_slots[i], c.fr_pos[i], c.ctr[i])
    c.status[i][s] = K.FRONTIER
    if chain:
        K.chain_prepend(s, K.dom_claim(d, c.dmap_keys[i], c.dmap_slots[i], c.dslot_dom[i], c.ctr[i]), c.dom_next[i],
                        c.dom_prev[i], c.dom_head[i])


@njit(cache=True, nogil=True)
def _park(s, d, c, i):
    """Park the page of slot ``s`` (domain id ``d``): first in its domain's parked list."""
    c.status[i][s] = PARKED
    park_head = c.park_head[i]
    d = K.dom_claim(d, c.dmap_keys[i], c.dmap_slots[i], c.dslot_dom[i], c.ctr[i])
    c.park_next[i][s] = park_head[d]
    park_head[d] = s


@njit(cache=True, nogil=True)
def take(page, c, i, chain, page_domain):
    """Take frontier ``page`` out of crawl ``i``'s frontier store (status unchanged)."""
    _take(find(c.map_keys[i], c.map_slots[i], page), page_domain[page], c, i, chain)


@njit(cache=True, nogil=True)
def put(page, c, i, chain, page_domain):
    """Put ``page`` (a page the crawl touched) into crawl ``i``'s frontier store, status FRONTIER."""
    _put(find(c.map_keys[i], c.map_slots[i], page), page, page_domain[page], c, i, chain)


@njit(cache=True, nogil=True)
def park_frontier(flagged, c, i, chain, page_domain, out):
    """Park every frontier page whose domain is in ``flagged`` (sorted domain ids; one pass over the frontier);
    writes them to ``out`` and returns their count."""
    fr_pages, fr_slots, ctr = c.fr_pages[i], c.fr_slots[i], c.ctr[i]
    k = 0
    j = 0
    while j < ctr[_FR]:
        p = fr_pages[j]
        d = page_domain[p]
        if _flagged(flagged, d):
            s = fr_slots[j]
            _take(s, d, c, i, chain)  # the last moves to j
            _park(s, d, c, i)
            out[k] = p
            k += 1
        else:
            j += 1
    return k


@njit(cache=True, nogil=True)
def park_pages(pages, flagged, c, i, chain, page_domain, out, k):
    """Park those of ``pages`` that are in the frontier and whose domain is in ``flagged`` (sorted domain ids);
    appends to ``out[k:]``."""
    keys, slots, status = c.map_keys[i], c.map_slots[i], c.status[i]
    for j in range(len(pages)):
        p = pages[j]
        d = page_domain[p]
        if not _flagged(flagged, d):
            continue
        s = find(keys, slots, p)
        if s >= 0 and status[s] == K.FRONTIER:
            _take(s, d, c, i, chain)
            _park(s, d, c, i)
            out[k] = p
            k += 1
    return k


@njit(cache=True, nogil=True)
def unpark(flagged, cap, c, i, chain, page_domain, out):
    """Return the parked pages of every domain not in ``flagged`` (sorted domain ids) to the frontier, each domain's
    in ascending page order (a domain at its cap blocks them instead). Writes the returned pages to ``out``; returns
    ``(returned, blocked)`` counts (``blocked`` pages left the parked set without returning)."""
    keys, slots, status, slot_page = c.map_keys[i], c.map_slots[i], c.status[i], c.slot_page[i]
    park_next, park_head, dom_fetched, ctr = c.park_next[i], c.park_head[i], c.dom_fetched[i], c.ctr[i]
    dslot_dom = c.dslot_dom[i]
    k = 0
    blocked = 0
    for d in K.dom_order(dslot_dom, ctr):  # domain slots in domain id order
        if park_head[d] < 0 or _flagged(flagged, dslot_dom[d]):
            continue
        s = park_head[d]
        start = k
        while s >= 0:
            nx_ = park_next[s]
            park_next[s] = -1
            if status[s] == PARKED:
                out[k] = slot_page[s]
                k += 1
            s = nx_
        park_head[d] = -1
        seg = out[start:k]
        seg.sort()
        if cap >= 0 and dom_fetched[d] >= cap:
            for j in range(start, k):
                status[find(keys, slots, out[j])] = K.BLOCKED
            ctr[K.C_ANY_BLOCKED] = 1
            blocked += k - start
            k = start
            continue
        for j in range(start, k):
            p = out[j]
            _put(find(keys, slots, p), p, dslot_dom[d], c, i, chain)
    return k, blocked


@njit(cache=True, nogil=True)
def focus_scores(c, i):
    """``(ready, best, mean)`` of crawl ``i``'s link scores: the highest of a frontier (offerable) page, and the
    highest and the mean of every frontier or parked page (non-finite scores aside; ``-inf, -inf, 0`` when none)."""
    prio, fr_slots, status = c.link_rel[i], c.fr_slots[i], c.status[i]
    park_next, park_head = c.park_next[i], c.park_head[i]
    ready = -np.inf
    total = 0.0
    n = 0
    for j in range(c.ctr[i][_FR]):
        v = prio[fr_slots[j]]
        if np.isfinite(v):
            total += v
            n += 1
            if v > ready:
                ready = v
    best = ready
    for d in K.dom_order(c.dslot_dom[i], c.ctr[i]):  # domain id order: the mean's sum in a fixed order
        s = park_head[d]
        while s >= 0:
            if status[s] == PARKED:
                v = prio[s]
                if np.isfinite(v):
                    total += v
                    n += 1
                    if v > best:
                        best = v
            s = park_next[s]
    return ready, best, total / n if n else 0.0


@njit(cache=True, nogil=True)
def refuse(pages, c, i, chain, page_domain, out):
    """Block ``pages`` for good (status BLOCKED): frontier pages leave the store (written to ``out``, count
    returned first), parked ones leave the parked set (counted second); other pages are left alone."""
    keys, slots, status, ctr = c.map_keys[i], c.map_slots[i], c.status[i], c.ctr[i]
    k = 0
    parked = 0
    for j in range(len(pages)):
        p = pages[j]
        s = find(keys, slots, p)
        if s < 0:
            continue
        st = status[s]
        if st == K.FRONTIER:
            _take(s, page_domain[p], c, i, chain)
            out[k] = p
            k += 1
        elif st == PARKED:
            parked += 1
        else:
            continue
        status[s] = K.BLOCKED
        ctr[K.C_ANY_BLOCKED] = 1
    return k, parked


class FetchWindow:
    """The in-flight pages of one crawl and the per-host mask (see the module docstring).

    :param state: the crawl state (its frontier store and statuses are what the window moves pages in and out
        of).
    :param concurrency: W, the most pages in flight.
    :param per_host: the most pages in flight per host (domain); pages of a host at the limit are parked.
    :param focus_slack: how far below the best page the crawl knows a free slot may reach while pages are in
        flight, as a fraction of the gap between the best and the mean link score (:meth:`may_fill`);
        ``math.inf``: every free slot is filled.
    """

    def __init__(self, state: CrawlState, concurrency: int, per_host: int, focus_slack: float = math.inf):
        self.state = state
        self.concurrency = int(concurrency)
        self.per_host = int(per_host)
        self.focus_slack = check_focus_slack(focus_slack)
        #: pages in flight per domain id, for the domains that have some
        self.in_domain: dict[int, int] = {}
        #: sorted ids of the domains whose frontier pages are parked: at ``per_host`` pages in flight, or held
        self.flagged = _NO_DOMAINS
        self._out = np.zeros(1024, np.int32)
        #: pages in flight, in dispatch order → what the env keeps for the landing (the candidate's row)
        self.in_flight: dict[int, Any] = {}
        self.n_parked = 0

    # ------------------------------------------------------------------ the frontier arrays
    def _args(self) -> tuple[Any, ...]:
        """The crawl's kernel bundle, row, whether domain chains are kept, page domains; an output buffer that can
        hold every page the crawl touched."""
        st = self.state
        if len(self._out) < st.slot_capacity:
            self._out = np.zeros(st.slot_capacity, np.int32)
        return st.crawl_arrays, 0, st.domain_cap is not None, st.page_domain

    @property
    def size(self) -> int:
        """Pages in flight."""
        return len(self.in_flight)

    @property
    def full(self) -> bool:
        """Whether ``concurrency`` pages are in flight."""
        return len(self.in_flight) >= self.concurrency

    # ------------------------------------------------------------------ dispatch and landing
    def dispatch(self, page: int, row: Any = None) -> None:
        """``page`` (a frontier page) leaves the frontier and is in flight; ``row`` is kept for :meth:`land`."""
        st = self.state
        if st.status[page] != K.FRONTIER:
            raise ValueError(f"page {page} is not in the frontier (status {int(st.status[page])})")
        c, i, chain, pd = self._args()
        take(page, c, i, chain, pd)
        st.status[page] = INFLIGHT
        d = int(pd[page])
        self.in_domain[d] = self.in_domain.get(d, 0) + 1
        self.in_flight[int(page)] = row

    def land(self, page: int) -> Any:
        """Put an arrived in-flight ``page`` back in the frontier store, where
        :meth:`CrawlState.fetch <gym_crawl.crawl.state.CrawlState.fetch>` takes it (call that next); returns the
        row given to :meth:`dispatch`."""
        page = int(page)
        if page not in self.in_flight:
            raise ValueError(f"page {page} is not in flight")
        row = self.in_flight.pop(page)
        c, i, chain, pd = self._args()
        put(page, c, i, chain, pd)
        d = int(pd[page])
        if self.in_domain[d] > 1:
            self.in_domain[d] -= 1
        else:
            del self.in_domain[d]
        return row

    # ------------------------------------------------------------------ focus
    def may_fill(self) -> bool:
        """Whether a free slot may take a page now (call it when the frontier is not empty): always when nothing is
        in flight or the rule is off (``focus_slack`` infinite); otherwise only when the best offerable page's link
        score is at least ``best − focus_slack × (best − mean)``, where ``best`` and ``mean`` are the highest and the
        mean link score of every page the crawl could fetch — offerable, or parked because its host is busy (or
        held). With the default 0, only a page as good as the best one known (ties included)."""
        if not self.in_flight or self.focus_slack == math.inf:
            return True
        c, i, _, _ = self._args()
        ready, best, mean = focus_scores(c, i)
        return bool(ready >= best - self.focus_slack * (best - mean))

    # ------------------------------------------------------------------ the mask
    def reconcile(self, held: np.ndarray | None, new_pages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Park the frontier pages of hosts at their limit or ``held`` (bool by domain id, possibly shorter than the
        domain list: :meth:`PageSource.held_domains <gym_crawl.corpus.page_source.PageSource.held_domains>`; or
        ``None``) and return the parked pages of the hosts that are free again. ``new_pages``: pages added to the
        frontier since the last call (only they need checking when no host became busy). Returns ``(parked,
        returned)`` int32 page arrays."""
        busy = np.array(sorted(d for d, k in self.in_domain.items() if k >= self.per_host), np.int32)
        flag = busy if held is None or not len(held) else np.union1d(busy, np.flatnonzero(held)).astype(np.int32)
        grew = bool(len(np.setdiff1d(flag, self.flagged, assume_unique=True)))
        self.flagged = flag
        st = self.state
        c, i, chain, pd = self._args()
        out = self._out
        if grew:
            k = park_frontier(flag, c, i, chain, pd, out)
        elif len(new_pages) and len(flag):
            k = park_pages(np.asarray(new_pages, np.int32), flag, c, i, chain, pd, out, 0)
        else:
            k = 0
        parked = out[:k].copy()
        self.n_parked += k
        returned = np.zeros(0, np.int32)
        if self.n_parked:  # pages parked now are on flagged hosts: unpark leaves them
            cap = -1 if st.domain_cap is None else int(st.domain_cap)
            r, blocked = unpark(flag, cap, c, i, chain, pd, out)
            returned = out[:r].copy()
            self.n_parked -= r + blocked
        return parked, returned

    def refuse(self, pages: np.ndarray) -> np.ndarray:
        """Block ``pages`` for good (a robots.txt disallows them, a learned pattern refuses them); returns those
        that were in the frontier (the others were parked, in flight, fetched or unseen)."""
        if not len(pages):
            return np.zeros(0, np.int32)
        c, i, chain, pd = self._args()
        k, parked = refuse(np.asarray(pages, np.int32), c, i, chain, pd, self._out)
        self.n_parked -= parked
        return self._out[:k].copy()

    def clear(self) -> None:
        """Return every in-flight and parked page to the frontier store (before the crawl state's reset, which
        then clears them with the rest of the episode)."""
        c, i, chain, pd = self._args()
        for p in self.in_flight:
            put(p, c, i, chain, pd)
        self.in_flight.clear()
        self.in_domain.clear()
        self.flagged = _NO_DOMAINS
        if self.n_parked or np.any(self.state.arrays["park_head"] >= 0):
            unpark(self.flagged, -1, c, i, chain, pd, self._out)
        self.n_parked = 0
