"""Crawl state: visited set, a columnar frontier store, parent/path/domain statistics, metrics.

All bookkeeping lives in flat numpy arrays indexed by *slot*: a page gets the next slot when the crawl
first touches it (discovers it, or fetches it as a seed), and the crawl's page map
(:mod:`gym_crawl.pagemap`, open addressing) finds it. The columns come from one field table
(:mod:`gym_crawl.crawl.fields`: name, dtype, shape, reset value), start at ``MIN_SLOTS`` slots and double
when a fetch could overflow them, and are reset in O(pages touched by the last episode): a crawl's memory
follows the pages it touched, never the web's size. Python code reads and writes a column by page id
(``state.rel[pages]``, ``state.status[page] = ...``) through a :class:`PageColumn`; compiled code reads the
slots through :attr:`CrawlState.crawl_arrays`. A fetch
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
"relevant domains" metric; they are kept by *domain slot*, one per domain the crawl counted or chained a page of
(read by domain id through :class:`PageColumn`, a domain never counted reading 0), so their memory follows the
crawl too, not the web's domain list.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from gym_crawl.corpus.core import Corpus
from gym_crawl.corpus.page_source import PageSource
from gym_crawl.crawl import bundles as B
from gym_crawl.crawl import kernels as K
from gym_crawl.crawl.fields import (
    CRAWL_ARRAYS,
    FIELDS,
    MAP_ARRAYS,
    MIN_SLOTS,
    SLOT_ARRAYS,
    Field,
    allocate,
    clear_plan,
    clear_rows,
    grow,
    rehash_maps,
    reset_slots,
)
from gym_crawl.pagemap import find, find_many
from gym_crawl.relevance.rewards import BinaryReward, LabelReward, RewardScheme, ThresholdReward
from gym_crawl.relevance.score_kernels import StoreFill
from gym_crawl.relevance.scorer import LinkTable, PageScores, PageTable, TopicScorer

__all__ = ["CrawlState", "FetchResult", "PageColumn", "UNSEEN", "FRONTIER", "VISITED", "BLOCKED", "DIST_CAP"]

UNSEEN, FRONTIER, VISITED, BLOCKED = K.UNSEEN, K.FRONTIER, K.VISITED, K.BLOCKED
DIST_CAP = K.DIST_CAP
"""Han 2018: distance from the last relevant page is capped at 9."""
_NO_PAGES = np.zeros(0, np.int32)
#: the one row of a crawl's own :class:`~gym_crawl.crawl.fields.ClearPlan`
_ROW0 = np.zeros(1, np.int64)
#: corpora with at most this many links score every page and link of a topic at its first reset
#: (about a second per million links); larger ones score pages and link ranges as they are fetched
EAGER_SCORING_LINKS = 2_000_000


class PageColumn:
    """One per-page column of a crawl, read and written by page id (the crawl keeps it by slot); a per-domain
    column (``dom_fetched``, …) the same way by domain id (the crawl keeps it by domain slot).

    ``col[page]`` / ``col[pages]`` give the values of those pages (a page the crawl never touched reads as the
    column's reset value: ``status`` ``UNSEEN``, ``best_parent`` -1, …); ``col[pages] = v`` writes pages the
    crawl touched (``ValueError`` for another); ``np.asarray(col)`` and comparisons (``col == FRONTIER``) give
    the dense (n_pages,) array, O(n_pages) — for page-mode masks and analyses, not for a step.
    """

    __slots__ = ("_state", "field", "_maps")

    def __init__(self, state: CrawlState, f: Field):
        self._state = state
        self.field = f
        #: the map from key (page / domain id) to slot, and the key of each slot
        self._maps = ("dmap_keys", "dmap_slots", "dslot_dom") if f.store == "domain" else (
            "map_keys", "map_slots", "slot_page")

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.field.dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        n = len(self)
        return (n, self._state.n_categories) if self.field.per_category else (n,)

    def __len__(self) -> int:
        st = self._state
        return int(st.n_domain_slots if self.field.store == "domain" else st.corpus.n_pages)

    def _slots(self, keys: np.ndarray) -> np.ndarray:
        a = self._state.arrays
        out = np.empty(len(keys), np.int64)
        if len(keys):
            find_many(a[self._maps[0]], a[self._maps[1]], keys, out)
        return out

    def _n_used(self) -> int:
        st = self._state
        return st.n_domain_slots_used if self.field.store == "domain" else st.n_slots

    def _pages(self, key: Any) -> tuple[np.ndarray, bool]:
        if isinstance(key, (int, np.integer)):
            return np.array([int(key)], np.int64), True
        if isinstance(key, slice):
            return np.arange(len(self))[key], False
        a = np.asarray(key)
        if a.dtype == bool:
            return np.flatnonzero(a), False
        return a.astype(np.int64, copy=False), False

    def __getitem__(self, key: Any) -> Any:
        st = self._state
        if isinstance(key, (int, np.integer)):  # one page: one compiled look-up
            a = st.arrays
            s = find(a[self._maps[0]], a[self._maps[1]], int(key))
            col = a[self.field.name]
            return col[s] if s >= 0 else col.dtype.type(self.field.reset) if col.ndim == 1 else np.full(
                col.shape[1:], self.field.reset, col.dtype)
        pages, scalar = self._pages(key)
        col = st.arrays[self.field.name]
        slots = self._slots(pages.reshape(-1))
        out = np.full((slots.size,) + col.shape[1:], self.field.reset, col.dtype)
        hit = slots >= 0
        out[hit] = col[slots[hit]]
        if scalar:
            return out[0]
        return out.reshape(pages.shape + col.shape[1:])

    def __setitem__(self, key: Any, value: Any) -> None:
        pages, _ = self._pages(key)
        st = self._state
        slots = self._slots(pages.reshape(-1))
        if np.any(slots < 0):
            bad = int(pages.reshape(-1)[int(np.argmax(slots < 0))])
            what = ("domain", "no page of it was counted") if self.field.store == "domain" else (
                "page", "only discovered or fetched pages have a slot")
            raise ValueError(f"{self.field.name}[{bad}] = ...: {what[0]} {bad} was never touched by this crawl "
                             f"({what[1]})")
        st.arrays[self.field.name][slots] = value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        st = self._state
        col = st.arrays[self.field.name]
        out = np.full(self.shape, self.field.reset, col.dtype)
        n = self._n_used()
        out[st.arrays[self._maps[2]][:n]] = col[:n]
        return out if dtype is None else out.astype(dtype)

    def __eq__(self, other: object) -> np.ndarray:  # type: ignore[override]
        return np.asarray(self) == other

    def __ne__(self, other: object) -> np.ndarray:  # type: ignore[override]
        return np.asarray(self) != other

    def __lt__(self, other: Any) -> np.ndarray:
        return np.asarray(self) < other

    def __le__(self, other: Any) -> np.ndarray:
        return np.asarray(self) <= other

    def __gt__(self, other: Any) -> np.ndarray:
        return np.asarray(self) > other

    def __ge__(self, other: Any) -> np.ndarray:
        return np.asarray(self) >= other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        what = "domains" if self.field.store == "domain" else "pages"
        return f"PageColumn({self.field.name!r}, {self._n_used()} of {len(self)} {what} touched)"


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
    """Mutable state of one crawl over a corpus, sized by the pages it touched.

    Args:
        corpus: the web.
        n_categories: category slots C (Han features); columns ``cat``/``link_cat`` are (n, C).
        beta: Han's exponential smoothing factor for ancestor relevance (0.4).
        storage: arrays to use instead of allocating (the batched vector env stacks N crawls' columns and
            gives each crawl its row views): every :func:`~gym_crawl.crawl.fields.allocate` array (of any slot
            capacity, a power of two), and optionally ``"ctr"`` (N_COUNTERS,) int64, ``"sums"`` (1,) float64,
            ``"out_new"``, ``"out_upd"`` (max out-degree,) int32. The arrays must be at their reset values (as
            :func:`allocate` returns them).
        on_full: with ``storage``: called with the slot capacity a fetch needs when the storage's is too small;
            it must hand new storage (the old arrays' contents at the new capacity) to :meth:`adopt`.
            Without it the state grows its own arrays.

    Page-indexed columns (``state.status``, ``state.rel``, … — every field of :data:`~gym_crawl.crawl.fields.FIELDS`)
    are :class:`PageColumn` s, per-domain ones (``dom_fetched``, …) indexed by domain id; ``fr_pages`` and ``fetched``
    are arrays.
    """

    def __init__(self, corpus: Corpus, n_categories: int = 4, beta: float = 0.4,
                 storage: dict[str, np.ndarray] | None = None, on_full: Callable[[int], None] | None = None):
        self.corpus = corpus
        self.n_categories = C = n_categories
        self.beta = float(beta)
        #: each page's link range ``link_lo[p]:link_hi[p]`` (views of a static corpus' CSR pointer; a live
        #: web's arrays, filled as pages are fetched)
        self.link_lo = np.asarray(corpus.link_lo)
        self.link_hi = np.asarray(corpus.link_hi)
        self.link_dst = np.asarray(corpus.link_dst)
        self.page_domain = np.asarray(corpus.page_domain)
        self._live = isinstance(corpus, PageSource)  # once: a protocol check costs microseconds, resets are many
        #: the corpus stores each page's links in ascending target: a fetch walks them as stored
        self.links_by_target = bool(isinstance(corpus, Corpus) and not self._live and corpus.links_by_target)
        if isinstance(corpus, Corpus) and not self._live:
            corpus.populate_crawl_arrays()  # a large web's per-fetch arrays mapped up front (once per corpus)
        deg = max(1, corpus.max_out_degree())
        self.n_domain_slots = max(1, corpus.n_domain_slots)
        storage = dict(storage or {})
        self._ctr = storage.pop("ctr", np.zeros(K.N_COUNTERS, np.int64))
        self._sums = storage.pop("sums", np.zeros(1, np.float64))
        self._out_new = storage.pop("out_new", np.zeros(deg, np.int32))
        self._out_upd = storage.pop("out_upd", np.zeros(deg, np.int32))
        self._on_full = on_full if storage else None
        # kernel work space (per out-link target of the fetched page)
        self._t_ord = np.zeros(deg, np.int32)
        self._t_sl = np.zeros(deg, np.int32)
        self._t_key = np.zeros(deg, np.int64)
        self._work = B.fetch_work(self._t_ord, self._t_sl, self._t_key)
        self._columns = {f.name: PageColumn(self, f) for f in FIELDS}
        self.adopt(storage if storage else allocate(MIN_SLOTS, C))
        self.domain_cap: int | None = None
        self._rw_key: tuple | None = None
        self._rw_form: tuple | None = None
        self.scorer: TopicScorer | None = None
        self.scheme: RewardScheme | None = None

    def __getattr__(self, name: str) -> PageColumn:
        cols = self.__dict__.get("_columns")
        if cols is not None and name in cols:
            return cols[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def adopt(self, arrays: dict[str, np.ndarray]) -> None:
        """Keep the crawl's columns in ``arrays`` (every :func:`~gym_crawl.crawl.fields.allocate` array, of one
        slot capacity; the page map filled for the slots in use, or empty before a crawl)."""
        cap = int(arrays["slot_page"].shape[0]) if "slot_page" in arrays else -1
        C = self.n_categories
        want = {f.name: (np.dtype(f.dtype), f.shape(cap, C)) for f in FIELDS}
        want.update({name: (np.dtype(dt), (cap,)) for name, dt in SLOT_ARRAYS})
        want.update({name: (np.dtype(dt), (2 * cap,)) for name, dt in MAP_ARRAYS})
        for name, (dt, shape) in want.items():
            b = arrays.get(name)
            if b is None or b.shape != shape or b.dtype != dt or cap < 1 or cap & (cap - 1):
                raise ValueError(f"storage[{name!r}] must be a {dt} array of shape {shape} (a slot capacity that is a "
                                 f"power of two), got {None if b is None else (b.dtype, b.shape)}")
        #: every column (fields.FIELDS, slot arrays, page and domain maps), by slot; page and domain columns are
        #: served by page / domain id as :class:`PageColumn` attributes, the slot arrays are bound as attributes of the
        #: same name
        self.arrays = {name: arrays[name] for name in want}
        for name, _ in SLOT_ARRAYS:
            setattr(self, name, self.arrays[name])
        self._reset_plan: Any = False  # the reset's ClearPlan of these arrays, made at the next reset (False: not yet)
        self._bind_bundles()

    def _bind_bundles(self) -> None:
        """The fetch kernel's :class:`~gym_crawl.crawl.bundles.CrawlArrays` of this crawl's arrays (views, a leading
        axis of 1: nothing is copied)."""
        mine = {**self.arrays, "ctr": self._ctr, "sums": self._sums, "out_new": self._out_new,
                "out_upd": self._out_upd}
        self._crawl = B.crawl_arrays({name: mine[name][None] for name in CRAWL_ARRAYS})

    def __getstate__(self) -> dict[str, Any]:
        # the kernel bundles hold memory pointers: they are rebuilt from the arrays after unpickling
        # (the reset's plan holds byte offsets into the arrays' one allocation, which pickling does not keep)
        skip = ("_crawl", "_work", "_scores", "_graph", "_reset_plan")
        return {k: v for k, v in self.__dict__.items() if k not in skip}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset_plan = False
        self._work = B.fetch_work(self._t_ord, self._t_sl, self._t_key)
        self._bind_bundles()
        if self.scorer is not None:
            self._bind_tables()

    # ------------------------------------------------------------ slots
    @property
    def n_slots(self) -> int:
        """Pages this crawl touched (discovered or fetched) since its reset: the slots in use."""
        return int(self._ctr[K.C_N_SLOTS])

    @property
    def n_domain_slots_used(self) -> int:
        """Domains this crawl counted or chained a page of since its reset: the domain slots in use."""
        return int(self._ctr[K.C_N_DSLOTS])

    @property
    def slot_capacity(self) -> int:
        """Slots the columns hold now (they double when a fetch could overflow them)."""
        return int(self.arrays["slot_page"].shape[0])

    def slots(self, pages: np.ndarray) -> np.ndarray:
        """(n,) int64 slot of each of ``pages`` (-1: a page the crawl has not touched)."""
        pages = np.asarray(pages, np.int64).reshape(-1)
        out = np.empty(len(pages), np.int64)
        if len(pages):
            find_many(self.arrays["map_keys"], self.arrays["map_slots"], pages, out)
        return out

    def make_room(self, extra: int) -> None:
        """Grow the columns (doubling) so that ``extra`` more pages can get a slot."""
        need = self.n_slots + int(extra)
        cap = self.slot_capacity
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        if self._on_full is not None:
            self._on_full(cap)
            if self.slot_capacity < need:
                raise RuntimeError(f"the crawl state's storage holds {self.slot_capacity} slots after growing, "
                                   f"{need} needed")
            return
        new = grow(self.arrays, cap, self.n_categories)
        rehash_maps(new, self.n_slots, self.n_domain_slots_used)
        self.adopt(new)

    @property
    def crawl_arrays(self) -> B.CrawlArrays:
        """This crawl's :class:`~gym_crawl.crawl.bundles.CrawlArrays` (one crawl, row 0), what the compiled
        feature rows and reducers read; rebuilt when the columns grow, so read it at every call."""
        return self._crawl

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
        if domain_cap is not None and domain_cap < 1:
            raise ValueError(f"domain_cap must be >= 1 or None, got {domain_cap}")
        if self._reset_plan is False:
            self._reset_plan = clear_plan(self.arrays, stacked=False)
        if self._reset_plan is None:  # a crawl of its own (columns allocated one by one) or arrays laid out elsewhere
            reset_slots(self.arrays, self.n_slots)
        else:  # one compiled call: the page columns over the slots in use, the domain columns over the domain slots
            clear_rows(self._reset_plan, _ROW0, self._ctr[K.C_N_SLOTS:K.C_N_SLOTS + 1],
                       self._ctr[K.C_N_DSLOTS:K.C_N_DSLOTS + 1])
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
        if len(self.link_dst) <= EAGER_SCORING_LINKS and not self._live:
            self._pages.ensure_all()
            self._links.ensure_all()
        self._rw_key = _reward_key(scheme)
        #: the scheme as compiled code caches it (fills from a store reward their pages in the same call)
        self._rw_form = scheme.elementwise() if self._rw_key is not None else None
        rw = self.reward_cache
        if rw is not None and self._pages.complete and not self._pages.keyed and not rw[2].all():
            # every page is scored already (eager tables): fill the per-page reward cache in one vectorized
            # call of the (elementwise) built-in scheme — the values _page_reward would cache page by page
            pt = self._pages
            rws, rls = scheme(PageScores(pt.rel, pt.cat, pt.tfidf, pt.label))
            rw[0][:] = rws
            rw[1][:] = rls
            rw[2][:] = True
        self._eval_label = bool(scorer.topic.label)
        self._bind_tables()

    def _bind_tables(self) -> None:
        """The fetch kernel's bundles of the topic's score tables (rebuilt when the tables grow: see
        :meth:`score_bundle`) and of the link graph (for the whole crawl)."""
        self._scores = B.table_bundle(self._pages, self._links)
        self._graph = B.link_graph(self.link_lo, self.link_hi, self.link_dst, self.page_domain, ordered=not self._live,
                                   by_target=self.links_by_target)

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
        k = K.block_over_cap(cap, self._crawl, 0)
        return self.arrays["out_rem"][:k].copy()

    def _frontier_remove(self, page: int) -> None:
        """Take ``page`` out of the frontier store (slot and domain chain) without changing its status."""
        s = int(self.slots(np.array([page]))[0])
        a = self.arrays
        if self.domain_cap is not None:
            ds = int(K.dom_slot(int(self.page_domain[page]), a["dmap_keys"], a["dmap_slots"]))
            K.chain_remove(s, ds, a["dom_next"], a["dom_prev"], a["dom_head"])
        K.frontier_remove(s, a["fr_pages"], a["fr_slots"], a["fr_pos"], self._ctr)

    # --------------------------------------------------------------- fetch
    def _page_reward(self, page: int) -> tuple[float, bool, bool]:
        """Reward, relevant flag and ground-truth relevance of fetching ``page`` (scored: it has a row; cached per
        page for the built-in schemes; a custom scheme is called on the page's scores)."""
        rw = self.reward_cache
        pt = self._pages
        row = pt.row(page)
        if rw is not None and rw[2][row]:
            r, relevant = float(rw[0][row]), bool(rw[1][row])
        else:
            ps = PageScores(pt.rel[row:row + 1], pt.cat[row:row + 1], pt.tfidf[row:row + 1],
                            pt.label[row:row + 1], np.array([page], np.int64))
            rws, rls = self.scheme(ps)  # type: ignore[misc]
            r, relevant = float(rws[0]), bool(rls[0])
            if rw is not None:
                rw[0][row], rw[1][row], rw[2][row] = r, relevant, True
        eval_rel = bool(pt.label[row]) if self._eval_label else relevant
        return r, relevant, eval_rel

    def fill_scores(self, pages: np.ndarray) -> None:
        """Fill the topic's score tables and the reward cache for ``pages`` (about to be fetched) in one vectorized
        pass: the values :meth:`page_reward` would fill page by page (the built-in schemes are elementwise; a
        scheme without a cache is left to :meth:`page_reward`). A non-finite reward is cached as it is; the caller
        refuses it before fetching."""
        assert self.scorer is not None and self.scheme is not None, "reset() first"
        pages = np.asarray(pages, np.int64).reshape(-1)
        if not len(pages):
            return
        form = self._rw_form
        key = self._rw_key
        rows = self.scorer.fill_from_store(pages, None if form is None or key is None else (key, form))
        if rows is not None and form is not None:  # keyed tables over a store: rows and rewards in one compiled call
            return
        if rows is None:
            pages = np.unique(pages)
            self._pages.ensure_many(pages)
            self._links.ensure(pages)
        rw = self.reward_cache
        if rw is None:
            return
        pt = self._pages
        if rows is None:
            rows = pt.rows(pages)
        new = ~rw[2][rows]
        todo, rows = pages[new], rows[new]
        if len(todo):
            rws, rls = self.scheme(PageScores(pt.rel[rows], pt.cat[rows], pt.tfidf[rows], pt.label[rows], todo))
            rw[0][rows], rw[1][rows], rw[2][rows] = rws, rls, True

    def page_reward(self, page: int) -> tuple[float, bool, bool]:
        """Reward, relevant flag and ground-truth relevance that fetching ``page`` would give, without
        fetching it (its score-table entries are filled). Raises ``ValueError`` naming the reward scheme and
        the page when the reward is not finite — before anything of the crawl changed."""
        assert self.scorer is not None and self.scheme is not None, "reset() first"
        if self._pages.row(page) < 0:
            self._pages.ensure(page)
        if not self._links.has(page):
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
        self.make_room(int(self.link_hi[page] - self.link_lo[page]) + 1)
        self._scores = B.table_bundle(self._pages, self._links)  # the tables may have grown scoring the page
        nn, nu, nr = K.fetch_page(page, -1, count_step, r, relevant, eval_rel, self.beta, cap, self._scores,
                                  self._graph, self._crawl, 0, self._work)
        return FetchResult(page, r, relevant, eval_rel, self._out_new[:nn].copy(), self._out_upd[:nu].copy(),
                           self.arrays["out_rem"][:nr].copy() if nr else _NO_PAGES.copy())

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
    def link_graph(self) -> B.LinkGraph:
        """The fetch kernel's :class:`~gym_crawl.crawl.bundles.LinkGraph` of the corpus' links (bound at reset)."""
        return self._graph

    @property
    def fetch_outputs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The arrays the fetch kernel writes its new, updated and removed pages into (int32; the counts it returns
        say how much of each is valid; the next fetch overwrites them)."""
        return self._out_new, self._out_upd, self.arrays["out_rem"]

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
        crawl of the topic and scheme, indexed by the page table's rows (:meth:`PageTable.rows
        <gym_crawl.relevance.scorer.PageTable.rows>`; ``None``: the scheme is called at every fetch). The arrays
        are replaced when the page table grows: read them again after scoring pages."""
        key = self._rw_key
        return None if key is None else self._pages.reward_rows(key)

    @property
    def score_bundle(self) -> B.ScoreTables:
        """The topic's score tables as the compiled kernels read them (:func:`~gym_crawl.crawl.bundles.table_bundle`,
        current: rebuilt after the tables grew)."""
        self._scores = B.table_bundle(self._pages, self._links)
        return self._scores

    def store_fill(self) -> StoreFill:
        """:meth:`fill_scores` as a compiled call's argument (:meth:`TopicScorer.store_fill
        <gym_crawl.relevance.scorer.TopicScorer.store_fill>` of the topic's tables and the scheme's reward cache; not
        ``on`` where :meth:`fill_scores` does more than copy rows from a store)."""
        assert self.scorer is not None, "reset() first"
        form, key = self._rw_form, self._rw_key
        return self.scorer.store_fill(None if form is None or key is None else (key, form))

    @property
    def eval_label(self) -> bool:
        """Whether ``relevant_found`` counts the topic's label (else the reward's relevant flag)."""
        return self._eval_label
