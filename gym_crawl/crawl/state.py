"""Crawl state: visited set, a columnar frontier store, parent/path/domain statistics, metrics.

All bookkeeping lives in flat numpy arrays indexed by page id, allocated once
per env from one field table (:mod:`gym_crawl.crawl.fields`: name, dtype, shape,
reset value) and reset from it in O(pages touched by the last episode). A fetch
is one compiled call (:func:`gym_crawl.crawl.kernels.fetch_page`) costing
O(out-degree × categories); page and link scores come from per-topic tables
(:meth:`TopicScorer.page_table` / :meth:`TopicScorer.link_table`) filled once per
topic (corpora up to ``EAGER_SCORING_LINKS`` links) or page by page as fetched (larger corpora and
every live web).
Nothing here is O(frontier).

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

The score tables are internal precomputation: the state copies a
page's own scores into its columns only when it fetches the page, and a link's
text scores only when the link is discovered; the relevance of an unfetched page
never reaches a column, a feature or an observation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from gym_crawl.corpus.core import Corpus
from gym_crawl.corpus.page_source import PageSource
from gym_crawl.crawl import bundles as B
from gym_crawl.crawl import kernels as K
from gym_crawl.crawl.fields import CRAWL_ARRAYS, FIELDS, SLOT_ARRAYS, allocate, reset_domains, reset_pages
from gym_crawl.relevance.rewards import BinaryReward, LabelReward, RewardScheme, ThresholdReward
from gym_crawl.relevance.scorer import LinkTable, PageScores, PageTable, TopicScorer

__all__ = ["CrawlState", "FetchResult", "UNSEEN", "FRONTIER", "VISITED", "BLOCKED", "DIST_CAP"]

UNSEEN, FRONTIER, VISITED, BLOCKED = K.UNSEEN, K.FRONTIER, K.VISITED, K.BLOCKED
DIST_CAP = K.DIST_CAP
"""Han 2018: distance from the last relevant page is capped at 9."""
_NO_PAGES = np.zeros(0, np.int32)
#: corpora with at most this many links score every page and link of a topic at its first reset
#: (about a second per million links); larger ones score pages and link ranges as they are fetched
EAGER_SCORING_LINKS = 2_000_000


def _reward_key(scheme: RewardScheme) -> tuple | None:
    """A key under which a scheme's per-page rewards may be cached (built-in, per-page schemes
    only; ``None``: call the scheme at every fetch)."""
    t = type(scheme)
    if t is ThresholdReward:
        tr = cast(ThresholdReward, scheme)
        return ("threshold", tr.tiers, tr.word_reward, tr.miss)
    if t is BinaryReward:
        return ("binary", cast(BinaryReward, scheme).labelled)
    if t is LabelReward:
        return ("labels",)
    return None


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
        storage: arrays to use instead of allocating (the batched vector env stacks N crawls' columns and
            gives each crawl its row views): every :func:`~gym_crawl.crawl.fields.allocate` column, and
            optionally ``"ctr"`` (N_COUNTERS,) int64, ``"sums"`` (1,) float64, ``"out_new"``,
            ``"out_upd"`` (max out-degree,) int32 and ``"out_rem"`` (n_pages,) int32. The arrays must be
            at their reset values (as :func:`allocate` returns them).
    """

    if TYPE_CHECKING:
        # the columns of :data:`~gym_crawl.crawl.fields.FIELDS` are set as attributes by ``__init__``
        def __getattr__(self, name: str) -> np.ndarray: ...

    def __init__(self, corpus: Corpus, n_categories: int = 4, beta: float = 0.4,
                 storage: dict[str, np.ndarray] | None = None):
        self.corpus = corpus
        self.n_categories = C = n_categories
        self.beta = float(beta)
        n = corpus.n_pages
        #: each page's link range ``link_lo[p]:link_hi[p]`` (views of a static corpus' CSR pointer; a live
        #: web's arrays, filled as pages are fetched)
        self.link_lo = np.asarray(corpus.link_lo)
        self.link_hi = np.asarray(corpus.link_hi)
        self.link_dst = np.asarray(corpus.link_dst)
        self.page_domain = np.asarray(corpus.page_domain)
        deg = corpus.max_out_degree()
        n_dom = corpus.n_domain_slots
        if storage is None:
            own = allocate(n, n_dom, C)
        else:
            want = {f.name: (np.dtype(f.dtype), f.shape(n, n_dom, C)) for f in FIELDS}
            want.update({name: (np.dtype(dt), (n,)) for name, dt in SLOT_ARRAYS})
            own = {}
            for name, (dt, shape) in want.items():
                b = storage.get(name)
                if b is None or b.shape != shape or b.dtype != dt:
                    raise ValueError(f"storage[{name!r}] must be a {dt} array of shape {shape}, got "
                                     f"{None if b is None else (b.dtype, b.shape)}")
                own[name] = b
        storage = storage or {}
        #: every column (fields.FIELDS + slot arrays), also bound as attributes of the same name
        self.arrays = own
        for name, a in self.arrays.items():
            setattr(self, name, a)
        #: scalar counters (kernels update them in place; read them through the properties)
        self._ctr = storage.get("ctr", np.zeros(K.N_COUNTERS, np.int64))
        self._sums = storage.get("sums", np.zeros(1, np.float64))
        # kernel work space: per-target slots (always -1 between calls) and output buffers
        self._tslot = np.full(n, -1, np.int32)
        self._t_best = np.zeros(deg, np.float32)
        self._t_link = np.zeros(deg, np.int64)
        self._t_kwu = np.zeros(deg, bool)
        self._t_kwa = np.zeros(deg, bool)
        self._out_new = storage.get("out_new", np.zeros(deg, np.int32))
        self._out_upd = storage.get("out_upd", np.zeros(deg, np.int32))
        self._out_rem = storage.get("out_rem", np.zeros(n, np.int32))
        self._bind_bundles()
        self.domain_cap: int | None = None
        self.scorer: TopicScorer | None = None
        self.scheme: RewardScheme | None = None

    def _bind_bundles(self) -> None:
        """The fetch kernel's bundles of this crawl's arrays (views: nothing is copied): its
        :class:`~gym_crawl.crawl.bundles.CrawlArrays` (one crawl: each array with a leading axis of 1) and its
        :class:`~gym_crawl.crawl.bundles.FetchWork`."""
        mine = {**self.arrays, "ctr": self._ctr, "sums": self._sums, "out_new": self._out_new,
                "out_upd": self._out_upd, "out_rem": self._out_rem}
        self._crawl = B.crawl_arrays({name: mine[name][None] for name in CRAWL_ARRAYS})
        self._work = B.fetch_work(self._tslot, self._t_best, self._t_link, self._t_kwu, self._t_kwa)

    def __getstate__(self) -> dict[str, Any]:
        # the kernel bundles hold memory pointers: they are rebuilt from the arrays after unpickling
        return {k: v for k, v in self.__dict__.items() if k not in ("_crawl", "_work", "_scores", "_graph")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind_bundles()
        if self.scorer is not None:
            self._bind_tables()

    # ------------------------------------------------------------ counters
    @property
    def fr_size(self) -> int:
        """Pages in the frontier."""
        return int(self._ctr[K.C_FR_SIZE])

    @property
    def n_fetched(self) -> int:
        """Pages fetched this crawl (seeds included)."""
        return int(self._ctr[K.C_N_FETCHED])

    @property
    def step(self) -> int:
        """Counted fetches (seeds fetched with ``count_step=False`` excluded)."""
        return int(self._ctr[K.C_STEP])

    @property
    def relevant_found(self) -> int:
        return int(self._ctr[K.C_RELEVANT_FOUND])

    @property
    def relevant_domains(self) -> int:
        return int(self._ctr[K.C_RELEVANT_DOMAINS])

    @property
    def reward_sum(self) -> float:
        return float(self._sums[0])

    # --------------------------------------------------------------- reset
    def reset(self, scorer: TopicScorer, scheme: RewardScheme, domain_cap: int | None = None) -> None:
        """Clear the previous crawl in O(pages it touched) and bind the topic scorer, reward and
        per-domain cap (``None``: unlimited)."""
        if scorer.n_categories != self.n_categories:
            raise ValueError(f"scorer has {scorer.n_categories} category slots, state {self.n_categories}")
        touched = np.concatenate([self.fetched[: self.n_fetched], self.fr_pages[: self.fr_size],
                                  np.flatnonzero(self.status == BLOCKED) if self._ctr[K.C_ANY_BLOCKED]
                                  else np.zeros(0, np.int64)])
        if domain_cap is not None and domain_cap < 1:
            raise ValueError(f"domain_cap must be >= 1 or None, got {domain_cap}")
        reset_pages(self.arrays, touched)
        reset_domains(self.arrays)
        self._ctr[:] = 0
        self._sums[:] = 0.0
        self.domain_cap = domain_cap
        self.scorer = scorer
        self.scheme = scheme
        bind = getattr(scheme, "bind", None)
        if bind is not None:  # schemes that score the page itself need the corpus and topic (classifier reward)
            bind(scorer)
        self._pages = scorer.page_table()
        self._links = scorer.link_table()
        # one pass per topic at its first reset (a page source's pages are scored as they arrive)
        if len(self.link_dst) <= EAGER_SCORING_LINKS and not isinstance(self.corpus, PageSource):
            self._pages.ensure_all()
            self._links.ensure_all()
        key = _reward_key(scheme)
        self._rw = None if key is None else scorer.reward_table(key)
        if self._rw is not None and self._pages.complete and not self._rw[2].all():
            # every page is scored already (eager tables): fill the per-page reward cache in one vectorized
            # call of the (elementwise) built-in scheme — the values _page_reward would cache page by page
            pt = self._pages
            rws, rls = scheme(PageScores(pt.rel, pt.cat, pt.tfidf, pt.label))
            self._rw[0][:] = rws
            self._rw[1][:] = rls
            self._rw[2][:] = True
        self._eval_label = bool(scorer.topic.label)
        self._bind_tables()

    def _bind_tables(self) -> None:
        """The fetch kernel's bundles of the topic's score tables and of the link graph (for the whole crawl)."""
        pt, lt = self._pages, self._links
        self._scores = B.score_tables(pt.rel, pt.cat, pt.tfidf, lt.rel, lt.cat, lt.kw_url, lt.kw_anchor)
        self._graph = B.link_graph(self.link_lo, self.link_hi, self.link_dst, self.page_domain)

    # ------------------------------------------------------------ frontier
    @property
    def frontier(self) -> np.ndarray:
        """Read-only view (F,) int32 of frontier page ids (order: insertion with swap-removal)."""
        v = self.fr_pages[: self.fr_size]
        v.flags.writeable = False
        return v

    def set_domain_cap(self, cap: int | None) -> np.ndarray:
        """Change the cap mid-crawl (adaptive schedules); returns the frontier pages it dropped.

        Only a crawl that started with a cap can change it, and only to another integer cap."""
        if cap is None or self.domain_cap is None or cap < 1:
            raise ValueError(f"set_domain_cap({cap!r}): only an integer cap >= 1 can replace the crawl's "
                             f"starting cap ({self.domain_cap!r})")
        self.domain_cap = cap
        k = K.block_over_cap(cap, self.dom_fetched, self.status, self.fr_pages, self.fr_pos, self.dom_next,
                             self.dom_prev, self.dom_head, self._ctr, self._out_rem)
        return self._out_rem[:k].copy()

    def _frontier_remove(self, page: int) -> None:
        """Take ``page`` out of the frontier store (slot and domain chain) without changing its status."""
        if self.domain_cap is not None:
            K.chain_remove(page, self.dom_next, self.dom_prev, self.dom_head, self.page_domain)
        K.frontier_remove(page, self.fr_pages, self.fr_pos, self._ctr)

    # --------------------------------------------------------------- fetch
    def _page_reward(self, page: int) -> tuple[float, bool, bool]:
        """Reward, relevant flag and ground-truth relevance of fetching ``page`` (cached per page for
        the built-in schemes; a custom scheme is called on the page's scores)."""
        rw = self._rw
        if rw is not None and rw[2][page]:
            r, relevant = float(rw[0][page]), bool(rw[1][page])
        else:
            pt = self._pages
            ps = PageScores(pt.rel[page:page + 1], pt.cat[page:page + 1], pt.tfidf[page:page + 1],
                            pt.label[page:page + 1], np.array([page], np.int64))
            rws, rls = self.scheme(ps)  # type: ignore[misc]
            r, relevant = float(rws[0]), bool(rls[0])
            if rw is not None:
                rw[0][page], rw[1][page], rw[2][page] = r, relevant, True
        eval_rel = bool(self._pages.label[page]) if self._eval_label else relevant
        return r, relevant, eval_rel

    def page_reward(self, page: int) -> tuple[float, bool, bool]:
        """Reward, relevant flag and ground-truth relevance that fetching ``page`` would give, without
        fetching it (its score-table entries are filled). Raises ``ValueError`` naming the reward scheme and
        the page when the reward is not finite — before anything of the crawl changed."""
        assert self.scorer is not None and self.scheme is not None, "reset() first"
        if not self._pages.done[page]:
            self._pages.ensure(page)
        if not self._links.done[page]:
            self._links.ensure(np.array([page]))
        r, relevant, eval_rel = self._page_reward(page)
        if not math.isfinite(r):
            raise ValueError(f"reward {self.scheme.name!r} returned a non-finite value {r!r} for page {page} "
                             f"({self.corpus.titles[page]!r}); rewards must be finite")
        return r, relevant, eval_rel

    def fetch(self, page: int, count_step: bool = True) -> FetchResult:
        """Fetch ``page`` (a frontier page, or an unseen page when seeding): score it, reward it,
        update statistics, and add its unvisited out-links to the frontier.

        Raises ``ValueError`` — leaving the crawl as it was — if the page was already fetched, is blocked
        or its reward is not finite.
        """
        assert self.scorer is not None and self.scheme is not None, "reset() first"
        page = int(page)
        st = int(self.status[page])
        if st == VISITED:
            raise ValueError(f"page {page} was already fetched")
        if st == BLOCKED:
            raise ValueError(f"page {page} is blocked: its domain reached the cap of {self.domain_cap} pages")
        r, relevant, eval_rel = self.page_reward(page)
        cap = -1 if self.domain_cap is None else int(self.domain_cap)
        nn, nu, nr = K.fetch_page(page, count_step, r, relevant, eval_rel, self.beta, cap, self._scores,
                                  self._graph, self._crawl, 0, self._work)
        return FetchResult(page, r, relevant, eval_rel, self._out_new[:nn].copy(), self._out_upd[:nu].copy(),
                           self._out_rem[:nr].copy() if nr else _NO_PAGES.copy())

    # ------------------------------------------------------------- metrics
    @property
    def harvest_rate(self) -> float:
        """Relevant pages found / pages fetched (0 before any fetch)."""
        return self.relevant_found / self.n_fetched if self.n_fetched else 0.0

    def fetched_pages(self) -> np.ndarray:
        """(n_fetched,) int32 pages in fetch order (read-only copy)."""
        return self.fetched[: self.n_fetched].copy()

    # ------------------------------------------- what the batched vector env shares between crawls
    @property
    def counters(self) -> np.ndarray:
        """(N_COUNTERS,) int64 counters the kernels update in place (indices ``kernels.C_*``)."""
        return self._ctr

    @property
    def sums(self) -> np.ndarray:
        """(1,) float64: the episode's reward sum, updated in place."""
        return self._sums

    def add_reward(self, reward: float) -> None:
        """Count a reward that fetched nothing (an invalid action's penalty) in the episode's reward sum."""
        self._sums[0] += reward

    @property
    def work_arrays(self) -> B.FetchWork:
        """The fetch kernel's work space (:class:`~gym_crawl.crawl.bundles.FetchWork`)."""
        return self._work

    @property
    def page_scores(self) -> PageTable:
        """The topic's page score table bound at the last :meth:`reset`."""
        return self._pages

    @property
    def link_scores(self) -> LinkTable:
        """The topic's link score table bound at the last :meth:`reset`."""
        return self._links

    @property
    def reward_cache(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The per-page (reward, relevant, done) cache of the scheme bound at :meth:`reset`, shared by every
        crawl of the topic and scheme (``None``: the scheme is called at every fetch)."""
        return self._rw

    @property
    def eval_label(self) -> bool:
        """Whether ``relevant_found`` counts the topic's label (else the reward's relevant flag)."""
        return self._eval_label
