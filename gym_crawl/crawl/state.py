"""Crawl state: visited set, a columnar frontier store, parent/path/domain statistics, metrics.

All bookkeeping lives in flat numpy arrays indexed by page id, allocated once
per env and reset in O(pages touched by the last episode). A fetch costs
O(out-degree × (tokens + categories)); nothing here is O(frontier).

The frontier is deduplicated by URL, as in every real crawler: one entry per
discovered, unfetched page, carrying aggregates over all links that
discovered it so far (Han 2018 §3.1: "parent information is progressively
updated as pages are crawled"):

* ``n_par``, ``sum_par_rel`` — number of fetched parents and the sum of their topic relevance;
* ``n_relpar``, ``sum_relpar_rel`` — the same over relevant parents;
* ``max_par_wrl`` — max exponentially smoothed ancestor relevance over parents (Han's w_rl);
* ``min_par_dist`` — min over parents of their distance from the last relevant page;
* ``link_rel``, ``link_cat`` — topic / category relevance of the best discovering link's text
  (anchor + URL + surrounding text; max over discovering links);
* ``kw_url``, ``kw_anchor`` — a topic keyword appeared in the URL / anchor of some discovering link;
* ``best_parent`` — the most topic-relevant parent; TRES's web-path features follow its path.

Fetched pages keep their own scores (``rel``, ``cat``, ``tfidf``, ``reward``,
``relevant``), Han's state quantities (``wrl``, ``change``, ``dist``, parent means)
and TRES's path statistics (``path_len``, ``path_rel``). Per-domain counters
(``dom_fetched``, ``dom_relevant``) feed the domain features and the
"relevant domains" metric.

Per-domain cap (TRES's b): with ``domain_cap`` set, once a domain has ``cap``
fetched pages its frontier pages are dropped (status ``BLOCKED``, reported in
``FetchResult.removed_pages``) and its newly discovered pages are not added.
Frontier pages are chained per domain (array-backed doubly linked lists, kept
only while a cap is active), so dropping a domain costs O(its frontier pages).

Only the ``eval_relevant`` of a fetched page (ground truth for metrics) and the
relevance of *fetched* pages are ever computed; the relevance of an unfetched
page is unknown to this object.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gym_crawl.corpus.core import Corpus
from gym_crawl.crawl.fields import allocate, reset_domains, reset_pages
from gym_crawl.relevance.rewards import RewardScheme
from gym_crawl.relevance.scorer import LinkScores, TopicScorer

__all__ = ["CrawlState", "FetchResult", "UNSEEN", "FRONTIER", "VISITED", "BLOCKED", "DIST_CAP"]

UNSEEN, FRONTIER, VISITED, BLOCKED = 0, 1, 2, 3
DIST_CAP = 9
"""Han 2018: distance from the last relevant page is capped at 9."""


@dataclass
class FetchResult:
    """What one fetch did. ``new_pages``: pages added to the frontier; ``updated_pages``: frontier
    pages (new or old) whose parent aggregates changed (the fetched page's unvisited out-links)."""

    page: int
    reward: float
    relevant: bool
    eval_relevant: bool
    new_pages: np.ndarray
    updated_pages: np.ndarray
    #: frontier pages dropped because their domain reached the per-domain cap (status BLOCKED)
    removed_pages: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))


class CrawlState:
    """Mutable state of one crawl over a corpus.

    Args:
        corpus: the web.
        n_categories: category slots C (Han features); arrays ``cat``/``link_cat`` are (n, C).
        beta: Han's exponential smoothing factor for ancestor relevance (0.4).
    """

    def __init__(self, corpus: Corpus, n_categories: int = 4, beta: float = 0.4):
        self.corpus = corpus
        self.n_categories = C = n_categories
        self.beta = beta
        n = corpus.n_pages
        self.link_ptr = np.asarray(corpus.link_ptr)
        self.link_dst = np.asarray(corpus.link_dst)
        self.page_domain = np.asarray(corpus.page_domain)
        #: every column (fields.FIELDS + slot arrays), also bound as attributes of the same name
        self.arrays = allocate(n, max(1, len(corpus.domains)), C)
        for name, a in self.arrays.items():
            setattr(self, name, a)
        self.fr_size = 0
        self.domain_cap: int | None = None
        self.n_fetched = 0
        self.step = 0
        self.relevant_found = 0
        self.reward_sum = 0.0
        self.relevant_domains = 0
        self.scorer: TopicScorer | None = None
        self.scheme: RewardScheme | None = None
        self._any_blocked = False

    # --------------------------------------------------------------- reset
    def reset(self, scorer: TopicScorer, scheme: RewardScheme, domain_cap: int | None = None) -> None:
        """Clear the previous crawl in O(pages it touched) and bind the topic scorer, reward and
        per-domain cap (``None``: unlimited)."""
        if scorer.n_categories != self.n_categories:
            raise ValueError(f"scorer has {scorer.n_categories} category slots, state {self.n_categories}")
        touched = np.concatenate([self.fetched[: self.n_fetched], self.fr_pages[: self.fr_size],
                                  np.flatnonzero(self.status == BLOCKED) if self._any_blocked else np.zeros(0, np.int64)])
        if domain_cap is not None and domain_cap < 1:
            raise ValueError(f"domain_cap must be >= 1 or None, got {domain_cap}")
        self._any_blocked = False
        reset_pages(self.arrays, touched)
        reset_domains(self.arrays)
        self.domain_cap = domain_cap
        self.fr_size = 0
        self.n_fetched = 0
        self.step = 0
        self.relevant_found = 0
        self.reward_sum = 0.0
        self.relevant_domains = 0
        self.scorer = scorer
        self.scheme = scheme

    # ------------------------------------------------------------ frontier
    @property
    def frontier(self) -> np.ndarray:
        """Read-only view (F,) int32 of frontier page ids (order: insertion with swap-removal)."""
        v = self.fr_pages[: self.fr_size]
        v.flags.writeable = False
        return v

    def in_frontier(self, pages: np.ndarray | int) -> np.ndarray | bool:
        return self.status[pages] == FRONTIER

    def _frontier_add(self, pages: np.ndarray) -> None:
        k = len(pages)
        self.fr_pages[self.fr_size:self.fr_size + k] = pages
        self.fr_pos[pages] = np.arange(self.fr_size, self.fr_size + k, dtype=np.int32)
        self.fr_size += k
        self.status[pages] = FRONTIER
        if self.domain_cap is not None and k:
            self._chain_add(pages)

    def _chain_add(self, pages: np.ndarray) -> None:
        """Prepend ``pages`` to their domains' frontier chains (vectorized per batch)."""
        d = self.page_domain[pages]
        order = np.argsort(d, kind="stable")
        p, ds = pages[order], d[order]
        last = np.ones(len(p), bool)
        last[:-1] = ds[1:] != ds[:-1]
        first = np.ones(len(p), bool)
        first[1:] = ds[1:] != ds[:-1]
        nxt = np.empty(len(p), np.int32)
        nxt[:-1] = p[1:]
        nxt[last] = self.dom_head[ds[last]]
        self.dom_next[p] = nxt
        prv = np.empty(len(p), np.int32)
        prv[1:] = p[:-1]
        prv[first] = -1
        self.dom_prev[p] = prv
        old = self.dom_head[ds[last]]
        has = old >= 0
        self.dom_prev[old[has]] = p[last][has]
        self.dom_head[ds[first]] = p[first]

    def _chain_remove(self, page: int) -> None:
        nx_, pv = int(self.dom_next[page]), int(self.dom_prev[page])
        if pv >= 0:
            self.dom_next[pv] = nx_
        else:
            self.dom_head[self.page_domain[page]] = nx_
        if nx_ >= 0:
            self.dom_prev[nx_] = pv
        self.dom_next[page] = self.dom_prev[page] = -1

    def _block_domain(self, d: int) -> np.ndarray:
        """Drop every frontier page of domain ``d`` (it reached the cap)."""
        out = []
        p = int(self.dom_head[d])
        while p >= 0:
            out.append(p)
            nxt = int(self.dom_next[p])
            self.dom_next[p] = self.dom_prev[p] = -1
            self._frontier_remove_only(p)
            self.status[p] = BLOCKED
            p = nxt
        self.dom_head[d] = -1
        if out:
            self._any_blocked = True
        return np.asarray(out, np.int32)

    def set_domain_cap(self, cap: int | None) -> np.ndarray:
        """Change the cap mid-crawl (adaptive schedules); returns the frontier pages it dropped.

        Only a crawl that started with a cap can change it, and only to another integer cap."""
        if cap is None or self.domain_cap is None or cap < 1:
            raise ValueError(f"set_domain_cap({cap!r}): only an integer cap >= 1 can replace the crawl's "
                             f"starting cap ({self.domain_cap!r})")
        self.domain_cap = cap
        over = np.flatnonzero((self.dom_fetched >= cap) & (self.dom_head >= 0))
        parts = [self._block_domain(int(d)) for d in over]
        return np.concatenate(parts) if parts else np.zeros(0, np.int32)

    def _frontier_remove(self, page: int) -> None:
        if self.domain_cap is not None:
            self._chain_remove(page)
        self._frontier_remove_only(page)

    def _frontier_remove_only(self, page: int) -> None:
        i = int(self.fr_pos[page])
        last = int(self.fr_pages[self.fr_size - 1])
        self.fr_pages[i] = last
        self.fr_pos[last] = i
        self.fr_pos[page] = -1
        self.fr_size -= 1

    # --------------------------------------------------------------- fetch
    def fetch(self, page: int, count_step: bool = True) -> FetchResult:
        """Fetch ``page`` (a frontier page, or an unseen page when seeding): score it, reward it,
        update statistics, and add its unvisited out-links to the frontier.

        Raises ``ValueError`` if the page was already fetched.
        """
        assert self.scorer is not None and self.scheme is not None, "reset() first"
        st = int(self.status[page])
        if st == VISITED:
            raise ValueError(f"page {page} was already fetched")
        if st == BLOCKED:
            raise ValueError(f"page {page} is blocked: its domain reached the cap of {self.domain_cap} pages")
        has_parents = st == FRONTIER and self.n_par[page] > 0
        if st == FRONTIER:
            self._frontier_remove(page)
        self.status[page] = VISITED
        self.fetched[self.n_fetched] = page
        self.n_fetched += 1
        self.fetch_step[page] = self.step
        if count_step:
            self.step += 1

        ps = self.scorer.score_pages(np.array([page]))
        rw, rl = self.scheme(ps)
        r, relevant = float(rw[0]), bool(rl[0])
        eval_rel = bool(ps.label[0]) if self.scorer.topic.label else relevant
        rel = float(ps.rel[0])
        self.rel[page] = rel
        self.cat[page] = ps.cat[0]
        self.tfidf[page] = ps.tfidf[0]
        self.reward[page] = r
        self.relevant[page] = relevant
        if has_parents:
            maxw = float(self.max_par_wrl[page])
            self.wrl[page] = self.beta * rel + (1 - self.beta) * maxw
            self.change[page] = rel - maxw
            self.dist[page] = 0 if relevant else min(int(self.min_par_dist[page]) + 1, DIST_CAP)
            self.par_mean[page] = self.sum_par_rel[page] / self.n_par[page]
            nr = self.n_relpar[page]
            self.relpar_mean[page] = self.sum_relpar_rel[page] / nr if nr else 0.0
            bp = int(self.best_parent[page])
            self.path_len[page] = self.path_len[bp] + 1
            self.path_rel[page] = self.path_rel[bp] + relevant
        else:  # a seed: no ancestors
            self.wrl[page] = rel
            self.change[page] = 0.0
            self.dist[page] = 0 if relevant else DIST_CAP
            self.path_len[page] = 1
            self.path_rel[page] = int(relevant)
        d = int(self.page_domain[page])
        self.dom_fetched[d] += 1
        self.dom_relevant[d] += relevant
        if eval_rel:
            if self.dom_eval_relevant[d] == 0:
                self.relevant_domains += 1
            self.dom_eval_relevant[d] += 1
            self.relevant_found += 1
        self.reward_sum += r

        removed = np.zeros(0, np.int32)
        if self.domain_cap is not None and self.dom_fetched[d] >= self.domain_cap:
            removed = self._block_domain(d)
        new, upd = self._expand(page, rel, relevant)
        return FetchResult(page, r, relevant, eval_rel, new, upd, removed)

    def _expand(self, page: int, rel: float, relevant: bool) -> tuple[np.ndarray, np.ndarray]:
        a, b = int(self.link_ptr[page]), int(self.link_ptr[page + 1])
        dst = self.link_dst[a:b]
        keep = (self.status[dst] < VISITED) & (dst != page)
        if self.domain_cap is not None:
            keep &= self.dom_fetched[self.page_domain[dst]] < self.domain_cap
        if not keep.any():
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        # score the page's whole contiguous link range (slices, no gathers), then keep the unvisited
        ls = self.scorer.score_links(np.arange(a, b))  # type: ignore[union-attr]
        lid = np.arange(a, b, dtype=np.int64)
        if not keep.all():
            ls = LinkScores(ls.rel[keep], ls.cat[keep], ls.kw_url[keep], ls.kw_anchor[keep])
            lid = lid[keep]
        dst = dst[keep]
        # one row per target: the discovering link with the most topic-relevant text
        order = np.lexsort((-ls.rel, dst))
        dsorted = dst[order]
        first = np.ones(len(order), bool)
        first[1:] = dsorted[1:] != dsorted[:-1]
        pick = order[first]
        t = dst[pick].astype(np.int32)
        kwu = np.bincount(np.searchsorted(t, dst), weights=ls.kw_url.astype(np.float64), minlength=len(t)) > 0
        kwa = np.bincount(np.searchsorted(t, dst), weights=ls.kw_anchor.astype(np.float64), minlength=len(t)) > 0
        new = t[self.status[t] == UNSEEN]
        if len(new):
            self._frontier_add(new)
            self.max_par_wrl[new] = -np.inf
            self.min_par_dist[new] = DIST_CAP
            self.link_rel[new] = -np.inf
            self.discovered_step[new] = self.step
        self.n_par[t] += 1
        self.sum_par_rel[t] += rel
        if relevant:
            self.n_relpar[t] += 1
            self.sum_relpar_rel[t] += rel
        self.max_par_wrl[t] = np.maximum(self.max_par_wrl[t], self.wrl[page])
        self.min_par_dist[t] = np.minimum(self.min_par_dist[t], self.dist[page])
        lr = ls.rel[pick]
        better = lr > self.link_rel[t]
        tb = t[better]
        self.link_rel[tb] = lr[better]
        self.link_cat[tb] = ls.cat[pick][better]
        self.best_link[tb] = lid[pick][better]
        self.kw_url[t] |= kwu
        self.kw_anchor[t] |= kwa
        bp = self.best_parent[t]
        take = (bp < 0) | (rel > self.rel[np.maximum(bp, 0)])
        self.best_parent[t[take]] = page
        return new, t

    # ------------------------------------------------------------- metrics
    @property
    def harvest_rate(self) -> float:
        """Relevant pages found / pages fetched (0 before any fetch)."""
        return self.relevant_found / self.n_fetched if self.n_fetched else 0.0

    def fetched_pages(self) -> np.ndarray:
        """(n_fetched,) int32 pages in fetch order (read-only copy)."""
        return self.fetched[: self.n_fetched].copy()
