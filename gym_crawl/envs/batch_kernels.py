"""Compiled (numba) step of N crawls at once, over stacked crawl state (the batched vector env's hot path).

:class:`~gym_crawl.envs.vector.WikiCrawlVectorEnv` allocates the N crawls' columns with a leading env axis
(:func:`gym_crawl.crawl.fields.allocate` with ``n_envs``) and gives each sub-env's
:class:`~gym_crawl.crawl.state.CrawlState` its row views, so a sub-env stepped in Python and the batched
kernel work on the same memory. :func:`batch_step` then does, for every stepped sub-env, exactly what
``WikiCrawlEnv.step`` does with the ``topk`` reducer and a compiled feature set — the fetch
(:func:`~gym_crawl.crawl.kernels.fetch_page`), the TopK heap update and selection
(:func:`~gym_crawl.crawl.kernels.topk_update`, :func:`~gym_crawl.crawl.kernels.topk_select`), the K
candidate rows (the feature set's :func:`~gym_crawl.features.kernels.layout_rows` for the layout it hands
over, clipped to [-1, 1]), the state vector and the end-of-episode flags — by calling the same kernels on the
rows, so trajectories are bit-identical to N single envs (``tests/test_vector_env.py``). One call per vector
step replaces N Python ``env.step`` calls. It lives with the envs because it composes the layers below them:
the crawl's fetch and selection, the feature set's rows and the env's state vector.

Per-env scalars live in arrays indexed by env: ``t`` (steps this episode), ``last_reward``, ``ncand``
(filled slots), and the per-step outputs (``rewards``, ``term``, ``trunc``, ``fetched_page``,
``relevant``, ``invalid``, ``n_new``). Nothing here sees anything a single env would not.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, types
from numba.experimental import structref

from gym_crawl.crawl import bundles as CB
from gym_crawl.crawl import kernels as K
from gym_crawl.crawl.bundles import borrowed, borrowed_crawls, borrowed_graph, borrowed_tables, borrowed_work
from gym_crawl.crawl.fetch_ahead import fetch_ahead_first, fetch_ahead_next
from gym_crawl.features import kernels as FR
from gym_crawl.pagemap import find
from gym_crawl.relevance.score_kernels import StoreFill, fill_store_rows

__all__ = ["BATCH_ARRAYS", "BatchArrays", "SLOW_PATH", "STEP_BUFFERS", "StepBuffers", "batch_arrays", "batch_pages",
           "batch_step", "batch_step_resets", "info_arrays", "match_rows", "move_rows", "reset_crawl", "scores_ready",
           "step_buffers", "step_crawl", "vec_step"]


@structref.register
class StepBuffersType(types.StructRef):
    """The numba type of :class:`StepBuffers`."""

    def preprocess_fields(self, fields: Any) -> Any:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class StepBuffers(structref.StructRefProxy):
    """The per-env arrays of the batched step as one kernel argument (:func:`step_buffers`; fields
    :data:`STEP_BUFFERS`): the topic's reward tables, the top-K heaps and selections, the observation buffers, the
    per-env scalars, the step's outputs and the rows' work space. A kernel that received it passes it on as one
    pointer, where the same arrays as tuples were ~270 scalar arguments of every per-crawl call."""


#: the fields of :class:`StepBuffers`, in the groups :func:`batch_step` documents: ``rwt`` (``rw_r``, ``rw_rel``,
#: ``label``), ``counts``, ``topk`` (``hk`` … ``sel_s``), ``obs`` (``feats``, ``mask``, ``svec``, ``ncand``,
#: ``row_dom``), ``env``
#: (``t`` … ``reward_scale``), ``res`` (``rewards`` … ``n_new``) and ``rowc`` (``old_p`` … ``fill_rows``)
STEP_BUFFERS = ("rw_r", "rw_rel", "label", "counts", "hk", "hp", "hsize", "sel_p", "sel_k", "nsel", "sel_s", "feats",
                "mask", "svec", "ncand", "row_dom", "t", "last_reward", "penalty", "reward_scale", "rewards", "term",
                "trunc", "fetched_page", "relevant", "invalid", "n_new", "old_p", "old_k", "src", "fill_idx",
                "fill_pages", "fill_rows")
structref.define_constructor(StepBuffers, StepBuffersType, STEP_BUFFERS)
structref.define_boxing(StepBuffersType, StepBuffers)


@njit(cache=True, nogil=True)
def _buffers(rwt, counts, topk, obs, env, res, rowc):
    """The :class:`StepBuffers` of the groups :func:`batch_step` takes (sharing their arrays)."""
    return StepBuffers(rwt[0], rwt[1], rwt[2], counts, topk[0], topk[1], topk[2], topk[3], topk[4], topk[5], topk[6],
                       obs[0], obs[1], obs[2], obs[3], obs[4], env[0], env[1], env[2], env[3], res[0], res[1], res[2],
                       res[3], res[4], res[5], res[6], rowc[0], rowc[1], rowc[2], rowc[3], rowc[4], rowc[5])


@njit(cache=True, nogil=True)
def _borrowed_groups(rwt, counts, topk, obs, env, res, rowc):
    """:func:`_buffers` with every array :func:`~gym_crawl.crawl.bundles.borrowed` (for the call that received them)."""
    w = borrowed
    return StepBuffers(w(rwt[0]), w(rwt[1]), w(rwt[2]), w(counts), w(topk[0]), w(topk[1]), w(topk[2]), w(topk[3]),
                       w(topk[4]), w(topk[5]), w(topk[6]), w(obs[0]), w(obs[1]), w(obs[2]), w(obs[3]), w(obs[4]),
                       w(env[0]),
                       w(env[1]), w(env[2]), w(env[3]), w(res[0]), w(res[1]), w(res[2]), w(res[3]), w(res[4]),
                       w(res[5]), w(res[6]), w(rowc[0]), w(rowc[1]), w(rowc[2]), w(rowc[3]), w(rowc[4]), w(rowc[5]))


def step_buffers(rwt: tuple, counts: np.ndarray, topk: tuple, obs: tuple, env: tuple, res: tuple,
                 rowc: tuple) -> StepBuffers:
    """The :class:`StepBuffers` of the groups of arrays :func:`batch_step` documents (nothing copied)."""
    return _buffers(rwt, counts, topk, obs, env, res, rowc)


@structref.register
class BatchArraysType(types.StructRef):
    """The numba type of :class:`BatchArrays`."""

    def preprocess_fields(self, fields: Any) -> Any:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class BatchArrays(structref.StructRefProxy):
    """Everything :func:`vec_step` reads and writes besides the actions and ``info``'s new arrays, as one kernel
    argument (:func:`batch_arrays`; fields :data:`BATCH_ARRAYS`): the dispatcher types and unboxes one object per
    call where the bundles and arrays one by one cost ≈ 0.4 µs per bundle."""


#: the fields of :class:`BatchArrays`: the topic's ``scores``, the ``graph``, the N ``crawls``, the fetch's ``work``
#: space, the :class:`StepBuffers` ``buffers``, the feature set's ``layout``; ``rw_done`` (by page row) the pages
#: whose reward is cached; ``auto`` (N,) bool the sub-envs the step resets (read, then the next step's written),
#: ``act`` (N,) bool its negation; ``pages`` (N,) int64 each sub-env's page, ``slots`` (N,) int64 its slot hint,
#: ``miss`` (N,) int64 the pages whose scores are not filled, ``prep`` (5,) int64 what :func:`batch_pages` reports;
#: ``last_page`` (N,) int64; ``fill`` the :class:`~gym_crawl.relevance.score_kernels.StoreFill` that fills ``miss``
#: from the topic's store in the call (not ``on``: Python fills them)
BATCH_ARRAYS = ("scores", "graph", "crawls", "work", "buffers", "layout", "rw_done", "auto", "act", "pages", "slots",
                "miss", "prep", "last_page", "fill")
structref.define_constructor(BatchArrays, BatchArraysType, BATCH_ARRAYS)
structref.define_boxing(BatchArraysType, BatchArrays)


@njit(cache=True)
def _new_batch_arrays(scores, graph, crawls, work, buffers, layout, rw_done, auto, act, pages, slots, miss, prep,
                      last_page, fill):
    return BatchArrays(scores, graph, crawls, work, buffers, layout, rw_done, auto, act, pages, slots, miss, prep,
                       last_page, fill)


def batch_arrays(scores: Any, graph: Any, crawls: Any, work: Any, buffers: StepBuffers, layout: Any,
                 rw_done: np.ndarray, auto: np.ndarray, act: np.ndarray, pages: np.ndarray, slots: np.ndarray,
                 miss: np.ndarray, prep: np.ndarray, last_page: np.ndarray, fill: StoreFill) -> BatchArrays:
    """The :class:`BatchArrays` of the vector env's arrays and bundles (see :data:`BATCH_ARRAYS`; nothing copied)."""
    return _new_batch_arrays(scores, graph, crawls, work, buffers, layout, rw_done, auto, act, pages, slots, miss,
                             prep, last_page, fill)


@njit(cache=True, nogil=True)
def _borrowed_buffers(b):
    """The :class:`StepBuffers` ``b`` with every array :func:`~gym_crawl.crawl.bundles.borrowed` (for the call that
    received ``b``)."""
    w = borrowed
    return StepBuffers(w(b.rw_r), w(b.rw_rel), w(b.label), w(b.counts), w(b.hk), w(b.hp), w(b.hsize), w(b.sel_p),
                       w(b.sel_k), w(b.nsel), w(b.sel_s), w(b.feats), w(b.mask), w(b.svec), w(b.ncand), w(b.row_dom),
                       w(b.t), w(b.last_reward), w(b.penalty), w(b.reward_scale), w(b.rewards), w(b.term), w(b.trunc),
                       w(b.fetched_page), w(b.relevant), w(b.invalid), w(b.n_new), w(b.old_p), w(b.old_k), w(b.src),
                       w(b.fill_idx), w(b.fill_pages), w(b.fill_rows))


@njit(cache=True, nogil=True)
def batch_pages(actions, active, slot_mode, n_actions, ncand, sel_p, sel_s, crawls, scores, rw_r, rw_done, hsize, pages,
                slots, miss, out, graph=None):
    """What the batched step checks before it changes anything, in one pass: the page of each active sub-env's
    action into ``pages`` (-1: a masked slot / a non-frontier page, the step is spent) and its slot, as far as known,
    into ``slots`` (the selection's hint ``sel_s`` in slot mode, which :func:`step_crawl` checks; -1: unknown), the
    pages whose per-topic
    score or reward entries (``scores``, ``rw_done`` by page row) are not filled yet into ``miss``. Writes ``out``
    (5,) int64: how many pages ``miss`` holds (the caller fills them in Python and calls again); the first active
    sub-env whose action is outside ``0..n_actions-1`` (nothing else is done then); when no page is missing, the
    first sub-env whose page's reward (``rw_r``) is not finite; -1 for none of either; and the largest heap size
    (``hsize``) and slot count of the N crawls (what the caller makes room for). The pages' first lines are asked for
    (:func:`~gym_crawl.crawl.fetch_ahead.fetch_ahead_first`) before they are checked when ``graph``, the
    :class:`~gym_crawl.crawl.bundles.LinkGraph`, is given; the fast step asks for the lines found through them
    (:func:`~gym_crawl.crawl.fetch_ahead.fetch_ahead_next`) before its first fetch."""
    out[1] = -1
    out[2] = -1
    for i in range(len(actions)):
        if active[i] and not 0 <= actions[i] < n_actions:
            out[0] = 0
            out[1] = i
            return
    nm = 0
    for i in range(len(actions)):
        pages[i] = -1
        if not active[i]:
            continue
        a = actions[i]
        if slot_mode:
            if a >= ncand[i]:
                continue
            p = np.int64(sel_p[i, a])
            s = np.int64(sel_s[i, a])
        else:
            p = np.int64(a)
            s = find(crawls.map_keys[i], crawls.map_slots[i], p)
            if s < 0 or crawls.status[i][s] != K.FRONTIER:
                continue
        pages[i] = p
        slots[i] = s
    if graph is not None:
        fetch_ahead_first(pages, scores, graph)
    for i in range(len(actions)):
        p = pages[i]
        if p >= 0 and not (K.page_ready(scores, p) and K.links_ready(scores, p) and rw_done[K.page_row(scores, p)]):
            miss[nm] = p
            nm += 1
    out[0] = nm
    if nm == 0:
        for i in range(len(actions)):
            p = pages[i]
            if p >= 0 and not math.isfinite(rw_r[K.page_row(scores, p)]):
                out[2] = i
                break
    hs = 0
    ns = 0
    for i in range(len(actions)):
        hs = max(hs, hsize[i, 0])
        ns = max(ns, crawls.ctr[i, K.C_N_SLOTS])
    out[3] = hs
    out[4] = ns


@njit(cache=True, nogil=True)
def scores_ready(pages, scores, rw_done):
    """Whether every page of ``pages`` has its per-topic score and reward entries filled (what
    :func:`batch_pages` checks for the pages about to be fetched)."""
    for j in range(len(pages)):
        p = pages[j]
        if not (K.page_ready(scores, p) and K.links_ready(scores, p) and rw_done[K.page_row(scores, p)]):
            return False
    return True


@njit(cache=True, nogil=True)
def info_arrays(ctr, sums, fetched_page, n_new, t, relevant, invalid, sel_p, ncand, use_cands, ints, floats, flags,
                ids, mask):
    """The numbers the batched env's ``info`` reports, one row per key: ``ints`` (7, N) int64 pages fetched,
    relevant found, relevant domains, frontier size, fetched page, new pages, steps; ``floats`` (2, N) harvest rate
    (relevant found / pages fetched, 0 before a fetch) and reward sum; ``flags`` (2, N) relevant, invalid action;
    ``ids`` (N, K) int64 the candidates (-1 past ``ncand``; all -1 unless ``use_cands``) and ``mask`` (N, K) bool
    where they are."""
    for i in range(len(ncand)):
        c = ctr[i]
        nf = c[K.C_N_FETCHED]
        rf = c[K.C_RELEVANT_FOUND]
        ints[0, i] = nf
        ints[1, i] = rf
        ints[2, i] = c[K.C_RELEVANT_DOMAINS]
        ints[3, i] = c[K.C_FR_SIZE]
        ints[4, i] = fetched_page[i]
        ints[5, i] = n_new[i]
        ints[6, i] = t[i]
        floats[0, i] = np.float64(rf) / np.float64(nf) if nf > 0 else 0.0
        floats[1, i] = sums[i, 0]
        flags[0, i] = relevant[i]
        flags[1, i] = invalid[i]
        n = ncand[i] if use_cands else 0
        for j in range(ids.shape[1]):
            if j < n:
                ids[i, j] = sel_p[i, j]
                mask[i, j] = True
            else:
                ids[i, j] = -1
                mask[i, j] = False


@njit(cache=True, nogil=True)
def _clamp(v):
    return min(1.0, max(-1.0, v))


@njit(cache=True, nogil=True)
def _borrow(scores, graph, crawls, work):
    """The step's bundles with every array :func:`~gym_crawl.crawl.bundles.borrowed`: within the call that received
    them, the per-crawl kernels then bind their arrays without reference counting (an atomic call per array variable,
    which numba's pruning leaves in the fetch and the step: about a fifth of the step's time before)."""
    return borrowed_tables(scores), borrowed_graph(graph), borrowed_crawls(crawls), borrowed_work(work)


@njit(cache=True, nogil=True)
def batch_step(pages, active, kk, cap, beta, budget, log_time, use_reducer, layout, eval_label, log_pages, n_domains,
               scores, graph, rwt, crawls, work, counts, topk, obs, env, res, rowc):
    """Step every ``active`` sub-env: fetch ``pages[i]`` (``-1``: spend an invalid step), update its TopK
    heap, propose ``kk`` candidates, write their feature rows, mask and state vector.

    ``scores``: the topic's :class:`~gym_crawl.crawl.bundles.ScoreTables` (shared); ``graph``: the
    :class:`~gym_crawl.crawl.bundles.LinkGraph`; ``rwt``: the reward cache ``(reward, relevant)`` and labels by
    page row (:func:`~gym_crawl.crawl.kernels.page_row`; every fetched page's entries filled); ``crawls``: the N crawls'
    :class:`~gym_crawl.crawl.bundles.CrawlArrays`; ``work``: the shared
    :class:`~gym_crawl.crawl.bundles.FetchWork`; ``counts``: (N, 3) new / updated / removed page counts;
    ``topk``: stacked heap and selection arrays (``hk``, ``hp``, ``hsize``, ``sel_p``, ``sel_k``, ``nsel`` and
    ``sel_s``, the slots of the selected pages as :func:`~gym_crawl.crawl.kernels.topk_select_slots` keeps them,
    hints only); ``obs``: stacked
    observation arrays, ``ncand`` and ``row_dom`` (N, K) int32, the domain of each shown row's page (kept beside the
    row and moved with it, so the rows of the fetched page's domain are found without reading ``graph.page_domain``;
    kept while the layout has TRES's columns, whose domain columns it serves); ``env``: per-env ``t``,
    ``last_reward``, ``penalty``, ``reward_scale``; ``res``: per-step outputs; ``rowc``: row work space (``old_p``
    int32, ``old_k`` float32, ``src``, ``fill_idx`` int64, ``fill_pages`` int32, each (K + 1,), and ``fill_rows``
    (K + 1, d) float32, its last row the row kernels' scratch; the crawl's
    ``tmark`` column marks the pages that gained a parent, False between calls). ``layout``: the
    feature set's :class:`~gym_crawl.features.sets.BatchLayout` (its deltas as float32), whose rows
    :func:`~gym_crawl.features.kernels.layout_rows` writes. ``budget``: every sub-env's own budget
    (truncation; ``-1``: none); ``log_time``: the state vector's first entry is log(1 + t) / ``log_pages``
    (``time_feature="log_steps"``) instead of t / ``budget``. Returns the first sub-env whose reward is not
    finite, or -1."""
    scores, graph, crawls, work = _borrow(scores, graph, crawls, work)
    b = _borrowed_groups(rwt, counts, topk, obs, env, res, rowc)
    for i in range(len(pages)):
        if active[i] and not step_crawl(i, pages[i], -1, kk, cap, beta, budget, log_time, use_reducer, layout,
                                        eval_label, log_pages, n_domains, scores, graph, crawls, work, b):
            return i
    return -1


@njit(cache=True, nogil=True)
def batch_step_resets(pages, slots, active, kk, cap, beta, budget, log_time, use_reducer, layout, eval_label, log_pages,
                      n_domains, scores, graph, crawls, work, buffers, resets, post):
    """:func:`batch_step` with its per-env arrays as one :class:`StepBuffers` (``buffers``), and the sub-envs that
    start a new episode in the same call instead of stepping (:func:`reset_crawl`). ``resets``: ``(resetting,
    seeds)``, which sub-envs reset (their columns are at their reset values already) and the seed pages they fetch; a
    sub-env whose reset fails (a seed whose reward is not finite, or seeds that leave the frontier empty) is cleared
    from ``resetting``, for the caller to reset in Python (which names the error). ``post``: ``(last_page, ended,
    out)``, what the vector env keeps after a step, written here so the caller needs no array operations of its own:
    ``last_page`` (int64) the page each stepped sub-env fetched (unchanged on a spent step) and -1 for each reset one;
    ``ended`` (bool) terminated or truncated, the sub-envs the next step resets; ``out[0]`` how many sub-envs neither
    stepped nor reset here (the caller resets them in Python). Returns the first stepped sub-env whose reward is not
    finite, or -1 (``post`` then not written)."""
    (resetting, seeds) = resets
    (last_page, ended, out) = post
    scores, graph, crawls, work = _borrow(scores, graph, crawls, work)
    b = _borrowed_buffers(buffers)
    fetch_ahead_next(pages, scores, graph, b.rw_r, b.rw_rel, b.label)
    for i in range(len(pages)):
        if resetting[i]:
            if not reset_crawl(i, seeds, kk, cap, beta, budget, log_time, use_reducer, layout, eval_label, log_pages,
                               n_domains, scores, graph, crawls, work, b):
                resetting[i] = False
        elif active[i] and not step_crawl(i, pages[i], slots[i], kk, cap, beta, budget, log_time, use_reducer,
                                          layout, eval_label, log_pages, n_domains, scores, graph, crawls, work, b):
            return i
    term, trunc = b.term, b.trunc
    pending = 0
    for i in range(len(pages)):
        if resetting[i]:
            last_page[i] = -1
        elif active[i]:
            if pages[i] >= 0:
                last_page[i] = pages[i]
        else:
            pending += 1
        ended[i] = term[i] or trunc[i]
    out[0] = pending
    return -1


#: :func:`vec_step`'s answer when the caller must step the slow way (nothing changed)
SLOW_PATH = -2


@njit(cache=True, nogil=True)
def vec_step(actions, slot_mode, n_actions, deg, kk, cap, beta, budget, log_time, use_reducer, eval_label,
             log_pages, n_domains, use_cands, a, i64, f64, b1):
    """The vector env's whole step in one call when nothing needs Python: every sub-env steps with its action
    (``actions`` int64), and the step's outputs go into ``info``'s new arrays. ``a``: the :class:`BatchArrays`.

    First what :func:`batch_pages` checks (``a.pages``, ``a.miss``, ``a.prep`` written); returns :data:`SLOW_PATH`
    with nothing else changed when a sub-env autoresets (``a.auto``), an action is outside the action space, a
    page's scores are not filled or its reward is not finite, or a crawl's slots or heap could overflow (``deg``:
    the corpus' largest out-degree; a fetch adds at most that many slots and ``deg + kk + 2`` heap entries) — the
    caller then steps the slow way, which handles each. Else it steps every sub-env (:func:`step_crawl`), writes
    the next autoresets into ``a.auto`` (``a.act`` the sub-envs that stepped: all), each sub-env's last page, and
    fills ``i64`` (7 N + N K,) int64 with :func:`info_arrays`' ``ints`` then ``ids``, ``f64`` (3 N,) float64 with
    its ``floats`` then the rewards, and ``b1`` ((4 + n) N + N K,) bool with its ``flags``, then terminated and
    truncated, its ``mask``, and ``n`` rows of True (``info``'s ``_key`` arrays). Returns -1, or the first sub-env
    whose reward was not finite."""
    auto, act, pages = a.auto, a.act, a.pages
    n = len(auto)
    for i in range(n):
        if auto[i]:
            return SLOW_PATH
        act[i] = True
    scores, graph, crawls, work = _borrow(a.scores, a.graph, a.crawls, a.work)
    b = _borrowed_buffers(a.buffers)
    o = a.prep
    batch_pages(actions, act, slot_mode, n_actions, b.ncand, b.sel_p, b.sel_s, crawls, scores, b.rw_r,
                a.rw_done, b.hsize, pages, a.slots, a.miss, o, graph)
    if o[0] > 0 and fill_store_rows(a.miss[:o[0]], a.fill):  # first-fetched pages' rows copied from the store
        batch_pages(actions, act, slot_mode, n_actions, b.ncand, b.sel_p, b.sel_s, crawls, scores, b.rw_r,
                    a.rw_done, b.hsize, pages, a.slots, a.miss, o)
    if o[0] > 0 or o[1] >= 0 or o[2] >= 0:
        return SLOW_PATH
    if use_reducer and o[3] + deg + kk + 2 > b.hk.shape[1]:
        return SLOW_PATH
    if o[4] + deg + 1 > crawls.slot_page.shape[1]:
        return SLOW_PATH
    layout = a.layout
    fetch_ahead_next(pages, scores, graph, b.rw_r, b.rw_rel, b.label)
    for i in range(n):
        if not step_crawl(i, pages[i], a.slots[i], kk, cap, beta, budget, log_time, use_reducer, layout, eval_label,
                          log_pages, n_domains, scores, graph, crawls, work, b):
            return i
    last_page = a.last_page
    term, trunc = b.term, b.trunc
    for i in range(n):
        if pages[i] >= 0:
            last_page[i] = pages[i]
        auto[i] = term[i] or trunc[i]
    kc = b.sel_p.shape[1] - 1
    ints = i64[:7 * n].reshape((7, n))
    ids = i64[7 * n:].reshape((n, kc))
    floats = f64[:2 * n].reshape((2, n))
    flags = b1[:2 * n].reshape((2, n))
    mask = b1[4 * n:4 * n + n * kc].reshape((n, kc))
    info_arrays(crawls.ctr, crawls.sums, b.fetched_page, b.n_new, b.t, b.relevant, b.invalid, b.sel_p, b.ncand,
                use_cands, ints, floats, flags, ids, mask)
    rewards = b.rewards
    for i in range(n):
        f64[2 * n + i] = rewards[i]
        b1[2 * n + i] = term[i]
        b1[3 * n + i] = trunc[i]
    for j in range(4 * n + n * kc, len(b1)):
        b1[j] = True
    return -1


@njit(cache=True, nogil=True)
def step_crawl(i, p, sp, kk, cap, beta, budget, log_time, use_reducer, layout, eval_label, log_pages, n_domains,
               scores, graph, crawls, work, b):
    """Step sub-env ``i`` (what :func:`batch_step` does for each active one): fetch page ``p`` (``-1``: spend an
    invalid step) and write the observation; ``sp``: ``p``'s slot if known (a hint, checked here; -1: found in the
    page map); ``b``: the :class:`StepBuffers`. Returns False when ``p``'s reward is
    not finite (its callers refuse such a page before they call)."""
    page_domain = graph.page_domain
    hk, hp, hsize, sel_p, sel_k, nsel, sel_s = b.hk, b.hp, b.hsize, b.sel_p, b.sel_k, b.nsel, b.sel_s
    feats, mask, svec, ncand, row_dom = b.feats, b.mask, b.svec, b.ncand, b.row_dom
    t, last_reward, penalty, reward_scale = b.t, b.last_reward, b.penalty, b.reward_scale
    old_p, old_k, src, fill_idx, fill_pages, fill_rows = b.old_p, b.old_k, b.src, b.fill_idx, b.fill_pages, b.fill_rows
    t_sl = work.t_sl
    counts = b.counts
    rewards, term, trunc, fetched_page, relevant_out, invalid, n_new_out = (b.rewards, b.term, b.trunc, b.fetched_page,
                                                                            b.relevant, b.invalid, b.n_new)
    d = feats.shape[2]
    # crawl i's rows of the arrays this loop reads (one view each, not one per access)
    ctr, out_upd, out_rem = crawls.ctr[i], crawls.out_upd[i], crawls.out_rem[i]
    t[i] += 1
    terminated = False
    if p < 0:  # masked slot / non-frontier page: the step is spent, nothing fetched
        r = penalty[i]
        crawls.sums[i, 0] += r  # reward_sum counts every reward of the episode, penalties included
        counts[i, 0] = 0
        counts[i, 1] = 0
        counts[i, 2] = 0
        fetched_page[i] = -1
        relevant_out[i] = False
        invalid[i] = True
        n_new_out[i] = 0
    else:
        r, rel, ev = _page_reward(scores, b.rw_r, b.rw_rel, b.label, eval_label, p)
        if not math.isfinite(r):
            return False
        if sp < 0 or sp >= ctr[K.C_N_SLOTS] or crawls.slot_page[i][sp] != p:  # not the page's slot
            sp = -1
        nn, nu, nr = K.fetch_page(p, sp, True, r, rel, ev, beta, cap, scores, graph, crawls, i, work)
        if sp < 0:
            sp = find(crawls.map_keys[i], crawls.map_slots[i], p)
        counts[i, 0] = nn
        counts[i, 1] = nu
        counts[i, 2] = nr
        fetched_page[i] = p
        relevant_out[i] = ev
        invalid[i] = False
        n_new_out[i] = nn
        if use_reducer:
            K.topk_update_slots(out_upd[:nu], t_sl[:nu], crawls, i, hk[i], hp[i], hsize[i],
                                sp, out_rem[:nr])
        fr = ctr[K.C_FR_SIZE]
        terminated = fr == 0
        # observation: the K candidates and their rows. The rows shown now are those of the current
        # selection at the pre-fetch state (true after every step and reset, compiled or not); a row
        # changes only if its page gained a parent this step (``out_upd``) — and TRES's two domain
        # columns, refreshed below — so the other rows stay: both selections are sorted by (-score, page)
        # and a page that kept its place keeps its score, so one merge of the two lists finds where each kept
        # row was, and the kept rows move within ``f`` in place (in the order that reads every row before it
        # is overwritten).
        f = feats[i]
        tmark = crawls.tmark[i]
        n_old = ncand[i] if use_reducer else 0
        for j in range(n_old):
            old_p[j] = sel_p[i, j]
            old_k[j] = sel_k[i, j]
        for j in range(nu):  # the fetch left the updated pages' slots in t_sl
            tmark[t_sl[j]] = True
        n = 0
        if use_reducer and fr > 0:
            n = K.topk_select_slots(kk, crawls, i, hk[i], hp[i], hsize[i], sel_p[i], sel_k[i], nsel[i], sel_s[i])
        ncand[i] = n
        nfill = match_rows(sel_p[i], sel_k[i], sel_s[i], n, old_p, old_k, n_old, tmark, src, fill_idx, fill_pages)
        for j in range(nu):
            tmark[t_sl[j]] = False
        doms = row_dom[i]
        keep = _keeps_domains(layout)
        move_rows(f, src, n, doms)
        for j in range(n, f.shape[0]):
            for c in range(d):
                f[j, c] = 0.0
        if nfill > 0:
            cand = fill_pages[:nfill]
            fill_slots = old_p[:nfill]  # the old selection is merged: its pages' space holds the new rows' slots
            for j in range(nfill):
                fill_slots[j] = sel_s[i, fill_idx[j]]
            fill_doms = src[:nfill]  # the rows are moved: their sources' space holds the new rows' domains
            if keep:  # TRES's domain columns: the new rows' domains, from the graph's runs where it keeps them
                for j in range(nfill):
                    fill_doms[j] = CB.page_domain_of(graph, cand[j])
            rows = fill_rows[:nfill]
            rows[:, :] = 0.0
            FR.layout_rows(layout, cand, crawls, i, page_domain, rows, fill_slots, fill_rows[fill_rows.shape[0] - 1],
                           fill_doms)
            _clip_into(rows, nfill, f, fill_idx)  # np.clip(rows, -1, 1) into their slots
            if keep:  # the new rows' domains, beside them
                for j in range(nfill):
                    doms[fill_idx[j]] = fill_doms[j]
        # the columns a fetch changes in the rows of its domain (TRES's per-domain ones), for the copied rows too: every
        # row was up to date with the counters before this fetch, which changed only its own domain's; the rows'
        # domains are the ones kept beside them (no read of the web's page_domain per row)
        if keep:
            FR.refresh_rows(layout, f, doms, n, crawls, i, CB.page_domain_of(graph, p))
        m = mask[i]
        for j in range(kk):
            m[j] = j < n
    last_reward[i] = r
    rewards[i] = r
    truncated = (not terminated) and budget > 0 and t[i] >= budget
    term[i] = terminated
    trunc[i] = truncated
    _state_vector(svec[i], ctr, t[i], r, reward_scale[i], ncand[i], kk, budget, log_time, log_pages, n_domains)
    return True


@njit(cache=True, nogil=True)
def _page_reward(scores, rw_r, rw_rel, label, eval_label, p):
    """The reward of fetching ``p`` (not yet checked finite), its relevance, and the relevance the crawl counts
    (the label when ``eval_label``), read from the topic's reward tables (by page row)."""
    row = K.page_row(scores, p)
    rel = rw_rel[row]
    return np.float64(rw_r[row]), rel, (label[row] if eval_label else rel)


@njit(cache=True, nogil=True)
def _state_vector(v, ctr, t, r, reward_scale, ncand, kk, budget, log_time, log_pages, n_domains):
    """The env's state vector (its ``state_names``) into ``v``: float64 arithmetic clamped to [-1, 1], stored as
    float32."""
    nf = ctr[K.C_N_FETCHED]
    if log_time:
        v[0] = np.float32(_clamp(math.log1p(np.float64(t)) / log_pages))
    else:
        v[0] = np.float32(_clamp(np.float64(t) / np.float64(budget) if budget > 0 else 0.0))
    v[1] = np.float32(_clamp(np.float64(ctr[K.C_RELEVANT_FOUND]) / np.float64(nf) if nf else 0.0))
    v[2] = np.float32(_clamp(math.log1p(np.float64(ctr[K.C_FR_SIZE])) / log_pages))
    v[3] = np.float32(_clamp(r / reward_scale))
    v[4] = np.float32(_clamp(np.float64(ctr[K.C_RELEVANT_DOMAINS]) / n_domains))
    v[5] = np.float32(_clamp(np.float64(ncand) / np.float64(kk)))


@njit(cache=True, nogil=True)
def _clip_into(rows, n, f, idx):
    """``f[idx[j]] = np.clip(rows[j], -1, 1)`` for ``j < n`` (NaN stays NaN); ``idx`` None: ``f[j]``."""
    d = f.shape[1]
    for j in range(n):
        fj = j if idx is None else idx[j]
        for c in range(d):
            x = rows[j, c]
            if x < -1.0:
                x = np.float32(-1.0)
            elif x > 1.0:
                x = np.float32(1.0)
            f[fj, c] = x


@njit(cache=True, nogil=True)
def match_rows(sel_p, sel_k, sel_s, n, old_p, old_k, n_old, tmark, src, fill_idx, fill_pages):
    """Where each of the new selection's ``n`` rows was in the old one (``old_*[:n_old]``): ``src[j]`` the old
    position of entry ``j`` when the same (key, page) was there and its page did not gain a parent this step
    (``tmark`` by slot ``sel_s[j]``), else -1, and then ``j`` and its page listed in ``fill_idx`` / ``fill_pages``
    for the feature kernels; returns how many are listed. Both lists are sorted by (key, page), so one merge finds
    every kept row and the positions it gives increase with ``j`` (what :func:`move_rows` needs); an entry the
    merge misses is only recomputed (the same row)."""
    o = 0
    nfill = 0
    for j in range(n):
        kj, pj = sel_k[j], sel_p[j]
        while o < n_old and (old_k[o] < kj or (old_k[o] == kj and old_p[o] < pj)):  # (key, page) order
            o += 1
        if o < n_old and old_p[o] == pj and old_k[o] == kj and not tmark[sel_s[j]]:
            src[j] = o
            o += 1
        else:
            src[j] = -1
            fill_idx[nfill] = j
            fill_pages[nfill] = pj
            nfill += 1
    return nfill


@njit(cache=True, nogil=True)
def move_rows(f, src, n, doms=None):
    """``f[j] = f[src[j]]`` for every ``j < n`` with ``src[j] >= 0``, in place, ``src`` increasing where it is set:
    the rows moving forward in increasing ``j``, then the rows moving back in decreasing ``j`` — no row is
    overwritten before it is read. ``doms``: the rows' domains (one entry per row of ``f``), moved with them; or
    ``None``."""
    d = f.shape[1]
    for j in range(n):
        o = src[j]
        if o > j:
            for c in range(d):
                f[j, c] = f[o, c]
            if doms is not None:
                doms[j] = doms[o]
    for j in range(n - 1, -1, -1):
        o = src[j]
        if 0 <= o < j:
            for c in range(d):
                f[j, c] = f[o, c]
            if doms is not None:
                doms[j] = doms[o]


@njit(cache=True, nogil=True)
def _keeps_domains(layout):
    """Whether the rows of ``layout`` have TRES's domain columns (the only rows whose domains are kept beside them)."""
    return layout.kind == FR.FEAT_TRES or layout.kind == FR.FEAT_COMBINED  # noqa: SIM109  (numba kernel)


@njit(cache=True, nogil=True)
def reset_crawl(i, seeds, kk, cap, beta, budget, log_time, use_reducer, layout, eval_label, log_pages, n_domains,
                scores, graph, crawls, work, b):
    """Start sub-env ``i``'s next episode as ``WikiCrawlEnv.reset()`` does without options (its default topic and
    ``seeds``): counters, reward sum and top-K heap emptied, every seed fetched (uncounted steps; a seed fetched
    already is skipped), the first K candidates, their rows, mask and state vector; per-step outputs as a reset
    returns them (reward 0, not ended, nothing fetched, the last seed's new and updated pages counted: the
    frontier changes of a reset with one seed). The crawl's columns, page map and
    per-domain counters must be at their reset values (:func:`gym_crawl.crawl.fields.reset_rows`). Returns False
    when the reset fails (a seed's reward is not finite, or the frontier is empty after the seeds), the crawl then
    half reset; ``b``: the :class:`StepBuffers`."""
    hk, hp, hsize, sel_p, sel_k, nsel, sel_s = b.hk, b.hp, b.hsize, b.sel_p, b.sel_k, b.nsel, b.sel_s
    feats, mask, svec, ncand = b.feats, b.mask, b.svec, b.ncand
    t, last_reward, reward_scale, counts, fill_rows = b.t, b.last_reward, b.reward_scale, b.counts, b.fill_rows
    rewards, term, trunc, fetched_page, relevant_out, invalid, n_new_out = (b.rewards, b.term, b.trunc, b.fetched_page,
                                                                            b.relevant, b.invalid, b.n_new)
    ctr = crawls.ctr[i]
    ctr[:] = 0
    crawls.sums[i, 0] = 0.0
    hsize[i, 0] = 0
    nsel[i, 0] = 0
    t[i] = 0
    last_reward[i] = 0.0
    keys, slots, status = crawls.map_keys[i], crawls.map_slots[i], crawls.status[i]
    nn = 0
    nu = 0
    for k in range(len(seeds)):
        p = seeds[k]
        s = find(keys, slots, p)
        if s >= 0 and status[s] == K.VISITED:
            continue
        r, rel, ev = _page_reward(scores, b.rw_r, b.rw_rel, b.label, eval_label, p)
        if not math.isfinite(r):
            return False
        nn, nu, nr = K.fetch_page(p, -1, False, r, rel, ev, beta, cap, scores, graph, crawls, i, work)
        if use_reducer:
            K.topk_update(crawls.out_upd[i][:nu], crawls, i, hk[i], hp[i], hsize[i], p, crawls.out_rem[i][:nr])
    fr = ctr[K.C_FR_SIZE]
    if fr == 0:
        return False
    n = 0
    if use_reducer:
        n = K.topk_select_slots(kk, crawls, i, hk[i], hp[i], hsize[i], sel_p[i], sel_k[i], nsel[i], sel_s[i])
    ncand[i] = n
    f = feats[i]
    f[:, :] = 0.0
    if n > 0:
        doms = b.src[:n]  # the rows' domains (kept beside them with TRES's columns)
        if _keeps_domains(layout):
            for j in range(n):
                doms[j] = CB.page_domain_of(graph, sel_p[i, j])
                b.row_dom[i, j] = doms[j]
        rows = fill_rows[:n]
        rows[:, :] = 0.0
        FR.layout_rows(layout, sel_p[i, :n], crawls, i, graph.page_domain, rows, sel_s[i, :n],
                       fill_rows[fill_rows.shape[0] - 1], doms)
        _clip_into(rows, n, f, None)
    m = mask[i]
    for j in range(kk):
        m[j] = j < n
    counts[i, 0] = nn
    counts[i, 1] = nu
    counts[i, 2] = 0
    rewards[i] = 0.0
    term[i] = False
    trunc[i] = False
    fetched_page[i] = -1
    relevant_out[i] = False
    invalid[i] = False
    n_new_out[i] = nn
    _state_vector(svec[i], ctr, 0, 0.0, reward_scale[i], n, kk, budget, log_time, log_pages, n_domains)
    return True
