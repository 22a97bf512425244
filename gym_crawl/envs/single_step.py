"""The single env's compiled step: the fetch, the top-K selection, the K candidate rows, the state vector and the
figures ``info`` reports, in one numba call.

:class:`~gym_crawl.envs.wiki_crawl.WikiCrawlEnv` steps through a :class:`CompiledStep` when its configuration is
one the batched vector env's kernel covers (:meth:`CompiledStep.applies`): one page fetched on the spot (no
window of pages in flight), no adaptive domain cap, the ``topk`` reducer with a feature set that hands over a
batch layout (``combined``, ``han2018``, ``han2018-continuous``, ``tres``) or a state-only observation, and a
built-in reward whose values are cached per page. The step is then
:func:`gym_crawl.envs.batch_kernels.batch_step` for one crawl — the same kernels the Python step calls, in the
same order — so trajectories are the Python step's bit for bit (``tests/test_single_step.py`` checks both paths
side by side). What it saves is the Python around them: a step costs one call that unboxes one bundle
(:class:`StepArrays`) instead of five compiled calls, a feature-set and a reducer dispatch, K rows recomputed
where the batched kernel recomputes only the rows whose page gained a parent, and the state vector and ``info``
figures read one by one from the crawl's counters.

Everything the Python side must do before a fetch — fill a page's per-topic scores, refuse a non-finite reward,
grow the crawl's slots or the heap — the kernel detects and hands back (``NEED_*`` codes) before it changes
anything but the scores (a first-fetched page's rows it copies from the topic's stored tables itself, where it can:
:func:`~gym_crawl.relevance.score_kernels.fill_store_rows`); :meth:`CompiledStep.step` does it and calls again.

The env's episode record (``feats``, ``mask``, ``svec``) and the reducer's heap and selection are views of this
object's arrays while it is bound (:meth:`CompiledStep.bind`, after every reset and after a copy of the env), so
the Python side reads what the kernel wrote. Observations handed to the user are copies.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, types
from numba.experimental import structref

from gym_crawl.crawl import kernels as K
from gym_crawl.envs import batch_kernels as BK
from gym_crawl.features.kernels import FEAT_NONE
from gym_crawl.features.sets import BatchLayout
from gym_crawl.pagemap import find
from gym_crawl.reducers.base import TopKRows
from gym_crawl.relevance.score_kernels import fill_store_rows

__all__ = ["CompiledStep", "StepArrays", "NEED_HEAP", "NEED_SCORES", "NEED_SLOTS", "NOT_FINITE", "N_FIGURES"]

#: what :func:`env_step` hands back instead of a page when the Python side must act before the fetch (nothing
#: changed): the page's per-topic scores or reward are not filled, its reward is not finite, the crawl's slots or
#: the top-K heap could overflow
NEED_SCORES, NOT_FINITE, NEED_SLOTS, NEED_HEAP = -2, -3, -4, -5
#: the int64 figures :func:`env_step` writes after a step (``StepArrays.figures``): pages fetched, relevant
#: found, relevant domains, frontier size, new / updated / removed pages of the fetch, env steps, filled slots,
#: the fetched page (-1: none), relevant, invalid, terminated, truncated
N_FIGURES = 14
_I_CAP, _I_SLOT_MODE, _I_LOG_TIME, _I_USE_REDUCER, _I_EVAL_LABEL, _I_KK = range(6)
_F_BETA, _F_LOG_PAGES, _F_N_DOMAINS = range(3)


@structref.register
class StepArraysType(types.StructRef):
    """The numba type of :class:`StepArrays`."""

    def preprocess_fields(self, fields: Any) -> Any:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class StepArrays(structref.StructRefProxy):
    """Everything :func:`env_step` reads and writes, as one kernel argument (built by :meth:`CompiledStep.bind`):
    the crawl's bundles, the topic's score and reward tables, the top-K heap and selection, the observation
    buffers, the per-episode scalars and the step's outputs, each with the leading crawl axis of one crawl that
    :func:`~gym_crawl.envs.batch_kernels.batch_step` indexes; ``store`` the topic's
    :class:`~gym_crawl.relevance.score_kernels.StoreFill` (a first-fetched page's rows copied in the call)."""


_FIELDS = ("crawls", "scores", "graph", "work", "rw_r", "rw_rel", "label", "rw_done",
           "hk", "hp", "hsize", "sel_p", "sel_k", "nsel", "sel_s", "feats", "mask", "svec", "ncand", "row_dom",
           "t", "last_reward", "penalty", "reward_scale",
           "rewards", "term", "trunc", "fetched_page", "relevant", "invalid", "n_new", "counts",
           "old_p", "old_k", "src", "fill_idx", "fill_pages", "fill_rows", "pages", "active",
           "layout", "iparams", "fparams", "ids", "figures", "sums", "store")
structref.define_constructor(StepArrays, StepArraysType, _FIELDS)
structref.define_boxing(StepArraysType, StepArrays)


@njit(cache=True)
def _new_step_arrays(crawls, scores, graph, work, rw_r, rw_rel, label, rw_done, hk, hp, hsize, sel_p, sel_k, nsel,
                     sel_s, feats, mask, svec, ncand, row_dom, t, last_reward, penalty, reward_scale, rewards, term,
                     trunc, fetched_page, relevant, invalid, n_new, counts, old_p, old_k, src, fill_idx, fill_pages,
                     fill_rows, pages, active, layout, iparams, fparams, ids, figures, sums, store):
    return StepArrays(crawls, scores, graph, work, rw_r, rw_rel, label, rw_done, hk, hp, hsize,
                      sel_p, sel_k, nsel, sel_s, feats, mask, svec, ncand, row_dom, t, last_reward, penalty,
                      reward_scale,
                      rewards, term, trunc, fetched_page, relevant, invalid, n_new, counts, old_p, old_k, src,
                      fill_idx, fill_pages, fill_rows, pages, active, layout, iparams, fparams, ids, figures, sums,
                      store)


@njit(cache=True, nogil=True)
def env_step(action, budget, b):
    """Step the crawl of ``b`` (:class:`StepArrays`) with ``action`` (a slot, or a page id in page mode; in the
    action space): the page it names is fetched (a masked slot or a non-frontier page spends the step), then the
    candidates, their rows, the mask and the state vector are written into ``b``'s buffers, ``b.ids`` the
    candidate ids (-1 padded) and ``b.figures`` / ``b.sums`` what ``info`` reports. ``budget``: the env's own
    (truncation; -1: none). Returns the fetched page, -1 for a spent step, or a ``NEED_*`` / :data:`NOT_FINITE`
    code (nothing changed)."""
    ip = b.iparams
    kk = ip[_I_KK]
    use_reducer = ip[_I_USE_REDUCER] != 0
    c = b.crawls
    if ip[_I_SLOT_MODE] != 0:
        p = np.int64(b.sel_p[0, action]) if action < b.ncand[0] else np.int64(-1)
    else:
        s = find(c.map_keys[0], c.map_slots[0], action)
        p = np.int64(action) if s >= 0 and c.status[0][s] == K.FRONTIER else np.int64(-1)
    b.pages[0] = p
    if p >= 0:
        sc = b.scores
        if not (K.page_ready(sc, p) and K.links_ready(sc, p) and b.rw_done[K.page_row(sc, p)]) \
                and not fill_store_rows(b.pages[:1], b.store):  # a first fetch's rows from the topic's store
            return NEED_SCORES
        if not math.isfinite(b.rw_r[K.page_row(sc, p)]):
            return NOT_FINITE
        deg = b.graph.link_hi[p] - b.graph.link_lo[p]
        if c.ctr[0, K.C_N_SLOTS] + deg + 1 > c.slot_page.shape[1]:
            return NEED_SLOTS
        if use_reducer and b.hsize[0, 0] + deg + kk + 2 > b.hk.shape[1]:
            return NEED_HEAP
    fp = b.fparams
    BK.batch_step(b.pages, b.active, kk, ip[_I_CAP], fp[_F_BETA], budget, ip[_I_LOG_TIME] != 0, use_reducer, b.layout,
                  ip[_I_EVAL_LABEL] != 0, fp[_F_LOG_PAGES], fp[_F_N_DOMAINS], b.scores, b.graph,
                  (b.rw_r, b.rw_rel, b.label), c, b.work, b.counts,
                  (b.hk, b.hp, b.hsize, b.sel_p, b.sel_k, b.nsel, b.sel_s),
                  (b.feats, b.mask, b.svec, b.ncand, b.row_dom), (b.t, b.last_reward, b.penalty, b.reward_scale),
                  (b.rewards, b.term, b.trunc, b.fetched_page, b.relevant, b.invalid, b.n_new),
                  (b.old_p, b.old_k, b.src, b.fill_idx, b.fill_pages, b.fill_rows))
    n = b.ncand[0] if use_reducer else 0
    for j in range(len(b.ids)):
        b.ids[j] = b.sel_p[0, j] if j < n else -1
    ctr, f = c.ctr[0], b.figures
    f[0] = ctr[K.C_N_FETCHED]
    f[1] = ctr[K.C_RELEVANT_FOUND]
    f[2] = ctr[K.C_RELEVANT_DOMAINS]
    f[3] = ctr[K.C_FR_SIZE]
    f[4] = b.counts[0, 0]
    f[5] = b.counts[0, 1]
    f[6] = b.counts[0, 2]
    f[7] = b.t[0]
    f[8] = n
    f[9] = b.fetched_page[0]
    f[10] = 1 if b.relevant[0] else 0
    f[11] = 1 if b.invalid[0] else 0
    f[12] = 1 if b.term[0] else 0
    f[13] = 1 if b.trunc[0] else 0
    b.sums[0] = b.rewards[0]
    b.sums[1] = c.sums[0, 0]
    return p


class CompiledStep:
    """The compiled step of one :class:`~gym_crawl.envs.wiki_crawl.WikiCrawlEnv` (see the module docstring).

    Args:
        k: the env's K candidate slots.
        d: the feature dimension (rows of the ``"candidates"`` observation).
        slot_mode: the env acts by slot (else by page id).
        use_reducer: the env proposes candidates (``observation="candidates"``).
        layout: the feature set's :class:`~gym_crawl.features.sets.BatchLayout` (``None`` with a state-only
            observation).
        time_log: the state vector's first entry is ``log_steps`` (else ``budget_used``).
        log_pages, n_domains: the state vector's normalizers (:class:`~gym_crawl.envs.world.CrawlWorld`).
        beta: Han's smoothing factor.
    """

    def __init__(self, k: int, d: int, slot_mode: bool, use_reducer: bool, layout: BatchLayout | None,
                 time_log: bool, log_pages: float, n_domains: int, beta: float):
        self.k = k
        lay = layout if layout is not None else BatchLayout(FEAT_NONE, False, 0, 0.1, 0.3)
        # the deltas as the float32 thresholds the row kernels compare in
        self._layout = BatchLayout(lay.kind, lay.han_discretized, lay.tres_col0, np.float32(lay.delta1),
                                   np.float32(lay.delta2))
        self.use_reducer = use_reducer
        dd = d if use_reducer else 1
        self._iparams = np.array([-1, int(slot_mode), int(time_log), int(use_reducer), 0, k], np.int64)
        self._fparams = np.array([beta, log_pages, float(n_domains)], np.float64)
        self.feats = np.zeros((1, k, dd), np.float32)
        self.mask = np.zeros((1, k), bool)
        self.svec = np.zeros((1, 6), np.float32)
        self._ncand = np.zeros(1, np.int64)
        self._row_dom = np.zeros((1, k), np.int32)  # the domain of each shown row's page (beside the row)
        self._hk = np.zeros((1, 1024), np.float32)
        self._hp = np.zeros((1, 1024), np.int32)
        self._hsize = np.zeros((1, 1), np.int64)
        self._sel_p = np.zeros((1, k + 1), np.int32)
        self._sel_k = np.zeros((1, k + 1), np.float32)
        self._nsel = np.zeros((1, 1), np.int64)
        self._sel_s = np.full((1, k + 1), -1, np.int32)  # the selected pages' slots (hints the kernel checks)
        self._t = np.zeros(1, np.int64)
        self._last_reward = np.zeros(1, np.float64)
        self._penalty = np.zeros(1, np.float64)
        self._reward_scale = np.ones(1, np.float64)
        self._out = (np.zeros(1, np.float64), np.zeros(1, bool), np.zeros(1, bool), np.full(1, -1, np.int64),
                     np.zeros(1, bool), np.zeros(1, bool), np.zeros(1, np.int64))
        self._counts = np.zeros((1, 3), np.int64)
        self._rowc = (np.zeros(k + 1, np.int32), np.zeros(k + 1, np.float32), np.zeros(k + 1, np.int64),
                      np.zeros(k + 1, np.int64), np.zeros(k + 1, np.int32), np.zeros((k + 1, dd), np.float32))
        self._pages = np.full(1, -1, np.int64)
        self._active = np.ones(1, bool)
        self.ids = np.full(k, -1, np.int64)
        #: after a step: the :data:`N_FIGURES` int64 figures and (reward, reward_sum) float64
        self.figures = np.zeros(N_FIGURES, np.int64)
        self.sums = np.zeros(2, np.float64)
        self._b: StepArrays | None = None  # the bundle (kept through unbind(): the next bind() may reuse it)
        self._key: tuple = ()  # the arrays it holds
        self._bound = False
        self._state: Any = None
        self._reducer: Any = None
        self._proposals = 0

    # ------------------------------------------------------------------ binding
    @property
    def bound(self) -> bool:
        """Whether :meth:`bind` holds the env's current crawl (cleared by a copy of the env)."""
        return self._bound

    def unbind(self) -> None:
        """Let go of the crawl (the env's Python step or reset runs next; :meth:`bind` takes its state again)."""
        self._bound = False

    def bind(self, state: Any, reducer: Any, episode: Any, penalty: float, reward_scale: float) -> None:
        """Take the crawl's current state — its columns (``state``, a :class:`~gym_crawl.crawl.state.CrawlState`
        reset for a topic whose reward is cached per page), the reducer's heap and selection, the episode record's
        rows, mask, state vector, steps and last reward — and build the bundle. The reducer's arrays and the
        record's ``feats``, ``mask`` and ``svec`` become views of this object's (what the kernel writes)."""
        rw = state.reward_cache
        assert rw is not None, "the compiled step needs a reward cached per page"
        self._state, self._reducer = state, reducer
        if self.use_reducer:
            self._adopt_reducer()
            self._ncand[0] = len(episode.cand)
            self._keep_row_domains(state)
            self.feats[0] = episode.feats
            self.mask[0] = episode.mask
            episode.feats, episode.mask = self.feats[0], self.mask[0]
        else:
            self._ncand[0] = 0
        self.svec[0] = episode.svec
        episode.svec = self.svec[0]
        self._t[0] = episode.t
        self._last_reward[0] = episode.last_reward
        self._penalty[0] = penalty
        self._reward_scale[0] = reward_scale
        self._iparams[_I_CAP] = -1 if state.domain_cap is None else int(state.domain_cap)
        self._iparams[_I_EVAL_LABEL] = int(state.eval_label)
        self._rebuild()
        self._bound = True

    def _adopt_reducer(self) -> None:
        """Keep the reducer's heap and selection in this object's arrays (copied in when they left them)."""
        r = self._reducer
        if r.heap_capacity > self._hk.shape[1]:
            self._grow_heap(r.heap_capacity)
        r.adopt_rows(self._rows())
        self._proposals = r.proposals

    def _resync_reducer(self) -> None:
        """The reducer proposed outside a step since the last one (a caller asked it for k candidates): its
        selection may hold other than K pages, in arrays it grew itself. Proposing K again (the crawl has not
        changed since the candidates shown, so it gives them again: the selection is the exact top K) and taking
        its arrays back restores what the compiled step relies on."""
        self._reducer.propose(self.k, np.random.default_rng(0))
        self._adopt_reducer()
        self._keep_row_domains(self._state)
        self._rebuild()

    def _keep_row_domains(self, state: Any) -> None:
        """The domains of the shown rows' pages (the selection's), which the kernel keeps beside the rows from here."""
        n = int(self._ncand[0])
        self._row_dom[0, :n] = state.page_domain[self._sel_p[0, :n]]

    def _rows(self) -> TopKRows:
        return TopKRows(self._hk[0], self._hp[0], self._hsize[0], self._nsel[0], self._sel_p[0], self._sel_k[0])

    def _grow_heap(self, need: int) -> None:
        cap = self._hk.shape[1]
        new = max(need, 2 * cap)
        hk = np.zeros((1, new), np.float32)
        hp = np.zeros((1, new), np.int32)
        hk[:, :cap] = self._hk
        hp[:, :cap] = self._hp
        self._hk, self._hp = hk, hp

    def _rebuild(self) -> None:
        st = self._state
        rw = st.reward_cache  # by page row (the tables may have grown since the last bundle)
        scores, label = st.score_bundle, st.page_scores.label
        # the arrays the bundle holds: when none was replaced since the last build (a reset on the same topic, tables
        # that did not grow), the bundle stands
        key = (st.crawl_arrays, st.link_lo, st.link_hi, st.link_dst, st.page_domain, st.work_arrays, scores, label,
               *rw, self._hk, self._hp)
        if self._b is not None and len(key) == len(self._key) and all(a is b for a, b in zip(key, self._key)):
            return
        self._key = key
        self._b = _new_step_arrays(
            st.crawl_arrays, scores, st.link_graph, st.work_arrays, rw[0], rw[1], label, rw[2],
            self._hk, self._hp, self._hsize, self._sel_p, self._sel_k, self._nsel, self._sel_s, self.feats, self.mask,
            self.svec, self._ncand, self._row_dom, self._t, self._last_reward, self._penalty, self._reward_scale,
            *self._out, self._counts,
            *self._rowc, self._pages, self._active, self._layout, self._iparams, self._fparams, self.ids,
            self.figures, self.sums, st.store_fill())

    # ------------------------------------------------------------------ step
    def step(self, action: int, budget: int | None) -> int:
        """One env step with ``action`` (checked to be in the action space); returns the fetched page, or -1 for a
        spent step (a masked slot, a non-frontier page). Afterwards :attr:`figures`, :attr:`sums`, :attr:`ids`
        and the bound buffers hold the step's outcome. ``ValueError`` (nothing changed) when the page's reward is
        not finite."""
        if self.use_reducer and self._reducer.proposals != self._proposals:
            self._resync_reducer()
        b = self._b
        assert b is not None and self._bound, "bind() first"
        bud = -1 if budget is None else budget
        while True:
            p = env_step(action, bud, b)
            if p >= -1:
                return int(p)
            page = int(self._pages[0])
            st = self._state
            if p in (NEED_SCORES, NOT_FINITE):
                st.page_reward(page)  # fills the tables; raises ValueError for a non-finite reward
            elif p == NEED_SLOTS:
                st.make_room(int(st.link_hi[page] - st.link_lo[page]) + 1)
            else:
                self._grow_heap(int(self._hsize[0, 0]) + int(st.link_hi[page] - st.link_lo[page]) + self.k + 2)
                self._adopt_reducer()
            self._rebuild()
            b = self._b

    def candidates(self) -> np.ndarray:
        """A copy of the candidate pages the last step proposed (int32)."""
        return self._sel_p[0, :int(self._ncand[0])].copy()

    def changes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Copies of the last step's new, updated and removed frontier pages (int32)."""
        nn, nu, nr = self._counts[0].tolist()
        new, upd, rem = self._state.fetch_outputs
        return new[:nn].copy(), upd[:nu].copy(), rem[:nr].copy()

    def __getstate__(self) -> dict[str, Any]:
        # the bundle holds memory pointers, and a copy's arrays no longer view one another: bind() again
        return {k: v for k, v in self.__dict__.items() if k not in ("_b", "_key")} | {"_b": None, "_key": (),
                                                                                       "_bound": False}
