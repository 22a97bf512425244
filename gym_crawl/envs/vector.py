"""``WikiCrawlVectorEnv``: N crawls in one process, as Gymnasium's custom ``VectorEnv``.

``WikiCrawl-v3`` registers it as its ``vector_entry_point``, so Gymnasium builds it the usual way::

    envs = gym.make_vec("WikiCrawl-v3", num_envs=64, vectorization_mode="vector_entry_point")  # or no mode

and, as for Gymnasium's ``CartPoleVectorEnv``, ``gym.make_vec`` hands it ``max_episode_steps`` (the
registered limit, or the one passed to ``make_vec``), at which every crawl truncates itself (a vector env
has no ``TimeLimit``). :func:`make_vector_env` builds it for any registered id (``make_vector_env(id,
num_envs=N, **kwargs)``: the id's registered keyword arguments and budget, updated with ``kwargs``) — the
way to batch ``WikiCrawl-v0``…``-v2``, whose spec registers the wrapper that hands the budget to their
single envs and which ``make_vec`` therefore refuses in this mode (:mod:`gym_crawl.envs.budget`).
Compared with ``SyncVectorEnv`` over N ``gym.make`` envs it

* loads the corpus and the text model **once** and shares them (and the per-topic scorers and score
  tables) between the N crawls; each crawl adds only its own columns, sized by the pages it touched
  (``gym-crawl bench memory``: about 28 MB per extra crawl of 2,000 steps on a 323,000-page web, against
  ~270 MB of private memory per ``AsyncVectorEnv`` worker that fills its own score tables);
* steps the N crawls in **one compiled call** (:func:`gym_crawl.envs.batch_kernels.batch_step_resets`) when
  the configuration allows it (see below): the N crawls' columns are stacked (a leading env axis) and
  every sub-env's crawl state is a row view of the stack, so the kernel and a sub-env stepped in Python
  work on the same memory;
* writes observations straight into preallocated batch arrays and builds ``info`` as one array per key
  per step (no per-sub-env dictionaries, no per-key aggregation); like ``SyncVectorEnv``, ``reset`` and
  ``step`` return a copy of those arrays unless ``copy=False`` (``gym.make_vec(..., copy=False)``), which returns
  the arrays themselves, overwritten by the next step — for a caller that copies them anyway (a rollout buffer);
  rewards, flags and ``info`` are new arrays every step either way;
* implements Gymnasium's **next-step autoreset** (``metadata["autoreset_mode"]``): the step after a
  sub-env terminated or truncated resets it and returns the reset observation, with reward 0 and
  ``terminated = truncated = False`` for that sub-env; the other sub-envs step normally;
* gives every crawl the budget ``max_episode_steps``, at which each truncates itself (no ``TimeLimit``); the
  observation is the sub-envs' (``time_feature``): with ``"log_steps"`` it does not depend on the budget, with
  ``"budget_used"`` it is the fraction of this one;
* gives batched masks: ``action_masks()`` is (N, K) bool in slot mode, (N, n_pages) in page mode.

**Compiled path** (its throughput: ``gym-crawl bench throughput``, ``benchmarks/RESULTS.md``). Used when the
sub-envs propose candidates with the ``topk`` reducer (link-text priority) or observe the state only
(``observation="state"``), with a built-in compiled feature set
(``combined``, ``han2018``, ``han2018-continuous``, ``tres``), a built-in reward (``han2018``,
``thesis``, ``binary``, ``labels``), no adaptive domain cap, and every sub-env on the same topic. Other
configurations (e.g. ``reducer="tree"``/``"random"``, a custom reward, sub-envs whose topics differ after
``reset(options={"topic": ...})`` and autoresets) step the sub-envs one by one in Python — same results,
slower. ``reset()`` runs in Python; the **autoresets** of the compiled path run inside the same compiled call
(:func:`gym_crawl.envs.batch_kernels.reset_crawl`, after the ended crawls' columns are cleared in one vectorized
pass) when every sub-env crawls the topic an autoreset returns to and it has one seed page; otherwise (a topic
given in ``reset(options=...)``, several seeds) the ended sub-envs reset in Python.

Same seeds ⇒ the same trajectories as N single envs (``gym.make`` with the same ``max_episode_steps``)
seeded ``seed + i`` — tested against ``SyncVectorEnv``, bit for bit, on both paths and for every id. ``info`` follows
Gymnasium's vector convention: every key holds an array of N values, with a boolean ``_key`` array
saying which sub-envs set it (every sub-env sets every key).
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gym_crawl._limits import check_fits
from gym_crawl.corpus import load_corpus
from gym_crawl.corpus.page_source import PageSource
from gym_crawl.crawl import kernels as KN
from gym_crawl.crawl.bundles import crawl_arrays, link_graph
from gym_crawl.crawl.fields import MIN_SLOTS, allocate, clear_plan, clear_rows, crawl_bytes, env_rows, grow, rehash_maps
from gym_crawl.crawl.state import FRONTIER
from gym_crawl.envs import batch_kernels as BK
from gym_crawl.envs.wiki_crawl import WikiCrawlEnv
from gym_crawl.envs.world import WORLD_KEYS, CrawlWorld
from gym_crawl.features.kernels import FEAT_NONE
from gym_crawl.features.sets import BatchLayout
from gym_crawl.reducers.base import TopKRows
from gym_crawl.relevance.topic import Topic, resolve_topic, seed_pages

__all__ = ["WikiCrawlVectorEnv", "make_vector_env"]

_EMPTY = np.zeros(0, np.int32)
#: ``info``'s keys in the order the single env's info has them (``action_mask`` last, in slot mode only)
_INFO_KEYS = ("pages_fetched", "relevant_found", "harvest_rate", "relevant_domains", "reward_sum", "frontier_size",
              "candidate_ids", "fetched_page", "relevant", "invalid_action", "n_new_pages", "steps", "topic",
              "fetch_error", "action_mask")


class WikiCrawlVectorEnv(VectorEnv):
    """N :class:`WikiCrawlEnv` crawls sharing one corpus and text model (see the module docstring).

    Args:
        num_envs: N.
        max_episode_steps: the page budget of every crawl, at which it truncates itself (``None``: no
            truncation); ``gym.make_vec`` passes the id's registered limit or its own ``max_episode_steps``.
        copy: as ``SyncVectorEnv``'s: ``True`` (default), ``reset`` and ``step`` return a copy of the
            observation; ``False``, the env's own observation arrays, which the next ``step`` or ``reset`` overwrites.
        **kwargs: :class:`WikiCrawlEnv` keyword arguments, the same for every sub-env.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, max_episode_steps: int | None = 1000, copy: bool = True, **kwargs: Any):
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, numbers.Integral) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        if not isinstance(copy, (bool, np.bool_)):
            raise ValueError(f"copy must be True or False, got {copy!r}")
        #: whether ``reset`` and ``step`` return a copy of the observation (``SyncVectorEnv``'s ``copy``)
        self.copy: bool = bool(copy)
        num_envs = int(num_envs)
        if kwargs.get("render_mode") is not None:
            raise ValueError("WikiCrawlVectorEnv does not render; use single envs with render_mode='ansi'")
        corpus = load_corpus(kwargs.pop("corpus", None), **(kwargs.pop("corpus_kwargs", None) or {}))
        if isinstance(corpus, PageSource):
            raise ValueError(f"WikiCrawlVectorEnv steps N crawls of a static corpus in compiled batches; corpus "
                             f"{corpus.name!r} is a live web (a page source): use single envs (or compile its WARC "
                             f"with replay_corpus first)")
        if kwargs.get("concurrency", 1) != 1 or kwargs.get("timing") is not None:
            raise ValueError("WikiCrawlVectorEnv fetches one page per crawl and step; concurrency > 1 and timing= "
                             "need single envs (gym.make, or make_vec with vectorization_mode='sync')")
        C = kwargs.get("n_categories", 4)
        if isinstance(C, numbers.Integral) and not isinstance(C, bool) and C >= 0:  # else the env names the error
            n = corpus.n_pages
            check_fits(f"num_envs={num_envs} on corpus {corpus.name!r} ({n:,} pages)",
                       num_envs * crawl_bytes(MIN_SLOTS, int(C)),
                       "each crawl's own columns (at their starting size; they grow with the pages a crawl touches)")
        home = (kwargs.get("topic"), kwargs.get("seeds"))
        world_kw = {k: kwargs.pop(k) for k in WORLD_KEYS if k in kwargs and k not in ("corpus", "corpus_kwargs")}
        #: what the N crawls share: corpus, text model, per-topic scorers and score tables, specs
        self.world: CrawlWorld = CrawlWorld(corpus=corpus, **world_kw)
        self.envs: list[WikiCrawlEnv] = [WikiCrawlEnv(world=self.world, max_episode_steps=max_episode_steps, **kwargs)
                     for _ in range(num_envs)]
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        first = self.envs[0]
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._dict_obs: bool = isinstance(self.single_observation_space, gym.spaces.Dict)
        self._slot: bool = first.action_mode == "slot"
        self._K: int = first.K
        self._obs: Any = self._alloc_obs()
        self._rewards: np.ndarray = np.zeros(num_envs, np.float64)
        self._terminated: np.ndarray = np.zeros(num_envs, bool)
        self._truncated: np.ndarray = np.zeros(num_envs, bool)
        self._autoreset: np.ndarray = np.zeros(num_envs, bool)
        self._ended: np.ndarray = np.zeros(num_envs, bool)  # the slow compiled step's next autoresets
        self._act: np.ndarray = np.zeros(num_envs, bool)
        self._post: np.ndarray = np.zeros(1, np.int64)
        # per-env scalars of the compiled path (kept for both paths: infos are built from them)
        self._t: np.ndarray = np.zeros(num_envs, np.int64)
        self._last_reward: np.ndarray = np.zeros(num_envs, np.float64)
        self._last_page: np.ndarray = np.full(num_envs, -1, np.int64)
        self._ncand: np.ndarray = np.zeros(num_envs, np.int64)
        self._fetched_page: np.ndarray = np.full(num_envs, -1, np.int64)
        self._relevant: np.ndarray = np.zeros(num_envs, bool)
        self._invalid: np.ndarray = np.zeros(num_envs, bool)
        self._n_new: np.ndarray = np.zeros(num_envs, np.int64)
        self._topics: list[str] = [""] * num_envs
        self._topic_names: list[str] = []
        self._topic_arr: np.ndarray | None = None
        self._no_error: np.ndarray = np.empty(0, object)
        #: the info keys in order (``action_mask`` in slot mode), each with its ``_key``
        self._info_keys: tuple[tuple[str, str], ...] = tuple(
            (k, "_" + k) for k in (_INFO_KEYS if self._slot else _INFO_KEYS[:-1]))
        self._flat_keys: tuple[str, ...] = tuple(k for pair in self._info_keys for k in pair)
        self._stale: bool = False  # sub-envs' Python-side attributes lag behind the compiled path
        self._uniform: bool = False
        #: the topic and seed pages every autoreset starts from (a reset without options); while every sub-env
        #: crawls that topic and it has one seed, the compiled step does the autoresets itself
        self._home_topic: Topic = resolve_topic(home[0], corpus)
        self._home_seeds: np.ndarray = seed_pages(self._home_topic, corpus,
                                                  None if home[1] is None else list(home[1])).astype(np.int32)
        self._kreset: bool = False
        self._resetting: np.ndarray = np.zeros(num_envs, bool)
        self._fast: bool = self._setup_compiled()

    # ------------------------------------------------------------------ compiled-path storage
    def _setup_compiled(self) -> bool:
        """Stack the crawl state (and the TopK arrays) of the N sub-envs when the compiled step applies."""
        e0 = self.envs[0]
        if self.world.adaptive_cap:
            return False
        if e0.observation_mode == "candidates":
            if not e0.reducer.batchable:
                return False
            layout = e0.features.batch_layout()
            if layout is None:
                return False
        else:
            layout = BatchLayout(FEAT_NONE, False, 0, 0.1, 0.3)
        # the deltas as the float32 thresholds the row kernels compare in
        self._layout = BatchLayout(layout.kind, layout.han_discretized, layout.tres_col0, np.float32(layout.delta1),
                                   np.float32(layout.delta2))
        self._use_reducer = e0.observation_mode == "candidates"
        N, c = self.num_envs, e0.corpus
        C = e0.n_categories
        deg = max(1, c.max_out_degree())
        self._buffers: BK.StepBuffers | None = None  # built with the reward tables (_bind_scores)
        self._bound: tuple = (None,) * 5  # the score bundle, reward cache and labels the bundles were built with
        self._batch: BK.BatchArrays | None = None  # and everything the one-call step takes (_bind_batch)
        self._dims = (C,)
        self._stack = allocate(MIN_SLOTS, C, n_envs=N)
        self._ctr = np.zeros((N, KN.N_COUNTERS), np.int64)
        self._sums = np.zeros((N, 1), np.float64)
        self._out_new = np.zeros((N, deg), np.int32)
        self._out_upd = np.zeros((N, deg), np.int32)
        self._counts = np.zeros((N, 3), np.int64)
        for i, e in enumerate(self.envs):
            store = env_rows(self._stack, i)
            store.update(ctr=self._ctr[i], sums=self._sums[i], out_new=self._out_new[i], out_upd=self._out_upd[i])
            e.adopt_crawl_storage(store, on_full=self._grow_slots)
        s0 = self.envs[0].state
        self._work = s0.work_arrays
        self._bind_crawls()
        self._graph = link_graph(s0.link_lo, s0.link_hi, s0.link_dst, s0.page_domain, by_target=s0.links_by_target)
        self._page_domain = s0.page_domain
        self._deg = deg
        K = self._K
        self._hk = np.zeros((N, 1024), np.float32)
        self._hp = np.zeros((N, 1024), np.int32)
        self._hsize = np.zeros((N, 1), np.int64)
        self._sel_p = np.zeros((N, K + 1), np.int32)
        self._sel_k = np.zeros((N, K + 1), np.float32)
        self._nsel = np.zeros((N, 1), np.int64)
        self._sel_s = np.full((N, K + 1), -1, np.int32)  # the selected pages' slots (hints the kernel checks)
        if self._use_reducer:
            for i, e in enumerate(self.envs):
                e.reducer.bind_rows(self._topk_rows(i))
        self._penalty = np.zeros(N, np.float64)
        self._reward_scale = np.ones(N, np.float64)
        self._pages = np.full(N, -1, np.int64)
        self._slots = np.full(N, -1, np.int64)
        self._miss = np.zeros(N, np.int64)
        self._prep = np.zeros(5, np.int64)
        self._n_actions = int(self.single_action_space.n)  # type: ignore[attr-defined]
        self._n_domains = float(self.world.n_domains)
        self._room_heap = deg + K + 2  # heap entries a step may add beyond the largest heap
        self._topk = (self._hk, self._hp, self._hsize, self._sel_p, self._sel_k, self._nsel, self._sel_s)
        self._envt = (self._t, self._last_reward, self._penalty, self._reward_scale)
        self._res = (self._rewards, self._terminated, self._truncated, self._fetched_page, self._relevant,
                     self._invalid, self._n_new)
        o, z = self._obs, (np.zeros((N, K, 1), np.float32), np.zeros((N, K), bool))
        rows = (o["candidates"], o["mask"], o["state"]) if self._dict_obs else (*z, o)
        self._obs_k = (*rows, self._ncand, np.zeros((N, K), np.int32))  # last: the domain of each shown row's page
        d = self._obs_k[0].shape[2]
        self._rowc = (np.zeros(K + 1, np.int32), np.zeros(K + 1, np.float32), np.zeros(K + 1, np.int64),
                      np.zeros(K + 1, np.int64), np.zeros(K + 1, np.int32), np.zeros((K + 1, d), np.float32))
        return True

    def _bind_crawls(self) -> None:
        """The kernel bundle of the N crawls' stacked arrays."""
        self._crawls = crawl_arrays({**self._stack, "ctr": self._ctr, "sums": self._sums, "out_new": self._out_new,
                                     "out_upd": self._out_upd})
        self._clear_plan = clear_plan(self._stack, stacked=True)  # the stack is one allocation (fields.allocate, grow)
        if self._buffers is not None:
            self._bind_batch()

    def _grow_slots(self, cap: int) -> None:
        """Give every crawl ``cap`` slots (a power of two; a crawl about to fetch needs more than the stack holds):
        new stacked arrays with the old contents, each crawl's page map rebuilt, every sub-env's state re-bound."""
        if cap <= self._stack["slot_page"].shape[1]:
            return
        new = grow(self._stack, cap, *self._dims, n_envs=self.num_envs)
        for i in range(self.num_envs):
            rehash_maps(env_rows(new, i), int(self._ctr[i, KN.C_N_SLOTS]), int(self._ctr[i, KN.C_N_DSLOTS]))
        self._stack = new
        for i, e in enumerate(self.envs):
            e.state.adopt(env_rows(new, i))
        self._bind_crawls()

    def _topk_rows(self, i: int) -> TopKRows:
        """Sub-env ``i``'s rows of the stacked top-K arrays."""
        return TopKRows(self._hk[i], self._hp[i], self._hsize[i], self._nsel[i], self._sel_p[i], self._sel_k[i])

    def _grow_heaps(self, need: int) -> None:
        cap = self._hk.shape[1]
        new = max(need, 2 * cap)
        hk = np.zeros((self.num_envs, new), np.float32)
        hp = np.zeros((self.num_envs, new), np.int32)
        hk[:, :cap] = self._hk
        hp[:, :cap] = self._hp
        self._hk, self._hp = hk, hp
        self._topk = (self._hk, self._hp, self._hsize, self._sel_p, self._sel_k, self._nsel, self._sel_s)
        for i, e in enumerate(self.envs):
            e.reducer.adopt_rows(self._topk_rows(i))
        if self._buffers is not None:
            self._bind_buffers()

    def _adopt(self, i: int) -> None:
        """After sub-env ``i`` ran in Python (reset or step): take its Python-side state into the batch arrays
        (its crawl columns already are rows of the stack)."""
        e = self.envs[i]
        ep = e.episode
        self._t[i] = ep.t
        self._last_reward[i] = ep.last_reward
        self._last_page[i] = ep.last_page
        self._ncand[i] = len(ep.cand)
        self._topics[i] = e.topic.name
        if not self._fast:
            return
        self._penalty[i] = e.invalid_action_penalty
        self._reward_scale[i] = max(abs(e.scheme.max_reward), 1e-9)
        if self._use_reducer:
            r = e.reducer
            if r.heap_capacity > self._hk.shape[1]:  # the heap grew in Python beyond the stack's
                self._grow_heaps(r.heap_capacity)
            r.adopt_rows(self._topk_rows(i))
            self._obs_k[4][i, :self._ncand[i]] = self._page_domain[self._sel_p[i, :self._ncand[i]]]  # rows' domains
        c = ep.changes
        self._counts[i] = (len(c[0]), len(c[1]), len(c[2]))

    def _check_uniform(self) -> None:
        """The compiled path needs every sub-env on the same per-topic tables, reward cache and cap."""
        s0 = self.envs[0].state
        rw = s0.reward_cache
        self._uniform = self._fast and rw is not None and all(
            e.state.page_scores is s0.page_scores and e.state.link_scores is s0.link_scores
            and e.state.reward_cache is rw and e.state.eval_label == s0.eval_label for e in self.envs)
        if self._uniform:
            self._bind_scores()
        # an autoreset reconfigures nothing when every sub-env already crawls the topic it returns to
        self._kreset = self._uniform and len(self._home_seeds) == 1 and all(e.topic == self._home_topic
                                                                           for e in self.envs)

    def _bind_scores(self) -> None:
        """The shared score tables and reward cache as the kernels read them (again after scoring pages: the
        tables may have grown)."""
        s0 = self.envs[0].state
        rw = s0.reward_cache
        assert rw is not None
        bound = (s0.score_bundle, *rw, s0.page_scores.label)
        if all(a is b for a, b in zip(bound, self._bound)):
            return  # the tables kept their arrays (no growth): the bundles bound are current
        self._bound, self._scores, self._rwt, self._rw_done = bound, bound[0], (rw[0], rw[1], bound[4]), rw[2]
        self._fill = s0.store_fill()  # the step fills first-fetched pages from the topic's store itself
        self._bind_buffers()

    def _bind_buffers(self) -> None:
        """The compiled step's per-env arrays as one bundle (again when the reward tables or the heaps are replaced)."""
        self._buffers = BK.step_buffers(self._rwt, self._counts, self._topk, self._obs_k, self._envt, self._res,
                                        self._rowc)
        self._bind_batch()

    def _bind_batch(self) -> None:
        """The bundle of everything the one-call step reads and writes (again when a bundle in it is replaced)."""
        assert self._buffers is not None
        self._batch = BK.batch_arrays(self._scores, self._graph, self._crawls, self._work, self._buffers, self._layout,
                                      self._rw_done, self._autoreset, self._act, self._pages, self._slots, self._miss,
                                      self._prep, self._last_page, self._fill)

    def _sync_envs(self) -> None:
        """Give every sub-env the Python-side attributes the compiled path advanced (before Python uses them)."""
        if not self._stale:
            return
        self._stale = False
        for i, e in enumerate(self.envs):
            ep = e.episode
            ep.t = int(self._t[i])
            ep.last_reward = float(self._last_reward[i])
            ep.last_page = int(self._last_page[i])
            n = int(self._ncand[i])
            ep.cand = self._sel_p[i, :n].copy() if self._use_reducer else _EMPTY
            ep.all_cand = ep.cand
            if self._dict_obs:
                ep.feats = self._obs["candidates"][i].copy()
                ep.mask = self._obs["mask"][i].copy()
                ep.svec = self._obs["state"][i].copy()
            else:
                ep.svec = self._obs[i].copy()
            nn, nu, nr = (int(x) for x in self._counts[i])
            ep.changes = (self._out_new[i, :nn].copy(), self._out_upd[i, :nu].copy(),
                          self._stack["out_rem"][i, :nr].copy())
            if self._terminated[i]:
                ep.over = "terminated: the frontier is empty"
            elif self._truncated[i]:
                ep.over = f"truncated at max_episode_steps={e.budget}"
            else:
                ep.over = None

    # ------------------------------------------------------------------ helpers
    def _alloc_obs(self) -> Any:
        sp = self.single_observation_space
        if isinstance(sp, gym.spaces.Dict):
            return {k: np.zeros((self.num_envs, *(s.shape or ())), s.dtype) for k, s in sp.spaces.items()}
        return np.zeros((self.num_envs, *(sp.shape or ())), sp.dtype)

    def _put_obs(self, i: int, obs: Any) -> None:
        if self._dict_obs:
            for k, v in obs.items():
                self._obs[k][i] = v
        else:
            self._obs[i] = obs

    def _obs_out(self) -> Any:
        if not self.copy:
            return self._obs
        if self._dict_obs:
            return {k: v.copy() for k, v in self._obs.items()}
        return self._obs.copy()

    @staticmethod
    def _seeds(seed: int | Sequence[int] | None, n: int) -> list[int | None]:
        if seed is None:
            return [None] * n
        if isinstance(seed, (int, np.integer)):
            return [int(seed) + i for i in range(n)]
        seeds: list[int | None] = list(seed)
        if len(seeds) != n:
            raise ValueError(f"reset(seed=...) needs {n} seeds (one per sub-env), got {len(seeds)}")
        return seeds

    def _note_python(self, i: int, obs: Any, info: dict) -> None:
        """Record what sub-env ``i`` returned from a Python reset/step."""
        self._put_obs(i, obs)
        self._fetched_page[i] = info["fetched_page"]
        self._relevant[i] = info["relevant"]
        self._invalid[i] = info["invalid_action"]
        self._n_new[i] = info["n_new_pages"]
        self._adopt(i)

    def _infos(self) -> dict[str, Any]:
        """Gymnasium's vector info (what ``VectorEnv._add_info`` builds from the N sub-envs' dicts, in the
        same key order and dtypes), one array per key, from the batch arrays; in three new arrays per step (one
        per dtype, :meth:`_info_buffers`), their numbers written by one compiled call
        (:func:`~gym_crawl.envs.batch_kernels.info_arrays`)."""
        N, K = self.num_envs, self._K
        if self._fast:
            ctr, sums, sel = self._ctr, self._sums, self._sel_p
        else:
            ctr = np.stack([e.state.counters for e in self.envs])
            sums = np.stack([e.state.sums for e in self.envs])
            sel = np.full((N, K), -1, np.int32)
            for i, e in enumerate(self.envs):
                sel[i, :len(e.episode.cand)] = e.episode.cand
        i64, f64, b1 = self._info_buffers()
        BK.info_arrays(ctr, sums, self._fetched_page, self._n_new, self._t, self._relevant, self._invalid, sel,
                       self._ncand, self._use_cands, i64[:7 * N].reshape(7, N), f64[:2 * N].reshape(2, N),
                       b1[:2 * N].reshape(2, N), i64[7 * N:].reshape(N, K), b1[4 * N:4 * N + N * K].reshape(N, K))
        b1[4 * N + N * K:] = True
        return self._info_dict(i64, f64, b1)

    def _info_buffers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``info``'s three new arrays of a step, one per dtype (:func:`~gym_crawl.envs.batch_kernels.vec_step`
        says what each holds); every key's array is a view of one of them."""
        N, K = self.num_envs, self._K
        return (np.empty(7 * N + N * K, np.int64), np.empty(3 * N, np.float64),
                np.empty((4 + len(self._info_keys)) * N + N * K, bool))

    def _info_dict(self, i64: np.ndarray, f64: np.ndarray, b1: np.ndarray) -> dict[str, Any]:
        """``info`` of the arrays :meth:`_info_buffers` gave, filled: each key's array a view of its dtype's, every
        ``_key`` a row of ones of the boolean one, the object arrays copied from ones kept while the topics stay."""
        N, K = self.num_envs, self._K
        if self._topic_arr is None or self._topic_names != self._topics:
            self._topic_names = list(self._topics)
            self._topic_arr = np.empty(N, object)
            self._topic_arr[:] = self._topics
            self._no_error = np.empty(N, object)
            self._no_error[:] = ""  # a static corpus: every chosen page is fetched
        nf, rf, rd, fs, fp, nn, st = i64[:7 * N].reshape(7, N)
        hr, rs = f64[:2 * N].reshape(2, N)
        rel, inv = b1[:2 * N].reshape(2, N)
        flat = [nf, None, rf, None, hr, None, rd, None, rs, None, fs, None, i64[7 * N:].reshape(N, K), None, fp, None,
                rel, None, inv, None, nn, None, st, None, self._topic_arr.copy(), None, self._no_error.copy(), None,
                b1[4 * N:4 * N + N * K].reshape(N, K), None]
        nb = len(self._info_keys)
        del flat[2 * nb:]
        flat[1::2] = b1[4 * N + N * K:].reshape(nb, N)
        return dict(zip(self._flat_keys, flat))

    @property
    def _use_cands(self) -> bool:
        return self.envs[0].observation_mode == "candidates"

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Reset every sub-env (``seed``: an int ⇒ ``seed + i``, or one seed per sub-env)."""
        seeds = self._seeds(seed, self.num_envs)
        self._stale = False
        for i, (e, s) in enumerate(zip(self.envs, seeds)):
            obs, info = e.reset(seed=s, options=options)
            self._note_python(i, obs, info)
        self._check_uniform()
        self._autoreset[:] = False
        self._terminated[:] = False
        self._truncated[:] = False
        return self._obs_out(), self._infos()

    def _check_actions(self, actions: np.ndarray, act: np.ndarray) -> None:
        n = int(self.single_action_space.n)  # type: ignore[attr-defined]
        a = actions[act]
        if not len(a):
            return
        bad = None
        if actions.dtype.kind not in "iu":
            bad = int(np.flatnonzero(act)[0])
        else:
            out = (a < 0) | (a >= n)
            if out.any():
                bad = int(np.flatnonzero(act)[int(np.argmax(out))])
        if bad is not None:
            what = "candidate slot" if self._slot else "page id"
            raise ValueError(f"action {actions[bad]!r} of sub-env {bad} is outside the action space Discrete({n}): "
                             f"valid actions are integers 0..{n - 1} (a {what})")

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every sub-env with its action; sub-envs that ended on the previous step are reset instead."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), one per sub-env; got {actions.shape}")
        if not self._uniform:
            return self._step_python(actions)
        if actions.dtype.kind not in "iu":
            self._check_actions(actions, np.logical_not(self._autoreset, out=self._act))  # raises, naming the sub-env
        e0 = self.envs[0]
        acts = actions.astype(np.int64, copy=False)
        b, dcap = e0.budget, e0.state.domain_cap
        budget, cap = -1 if b is None else int(b), -1 if dcap is None else int(dcap)
        i64, f64, b1 = self._info_buffers()
        bad = BK.vec_step(acts, self._slot, self._n_actions, self._deg, self._K, cap, e0.beta, budget,
                          e0.time_feature == "log_steps", self._use_reducer, e0.state.eval_label, self.world.log_pages,
                          self._n_domains, self._use_reducer, self._batch, i64, f64, b1)
        if bad == BK.SLOW_PATH:
            return self._step_slow(actions, acts, budget, cap)  # cap: the domain cap
        if bad >= 0:
            self._refuse_reward(int(bad))
        self._stale = True
        N = self.num_envs
        return self._obs_out(), f64[2 * N:], b1[2 * N:3 * N], b1[3 * N:4 * N], self._info_dict(i64, f64, b1)

    def _step_slow(self, actions: np.ndarray, acts: np.ndarray, budget: int,
                   dcap: int) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """The compiled step in several calls, with what Python must do between them: fill the pages' scores, name
        a bad action or a non-finite reward, grow the slots or the heaps, clear the crawls that autoreset (and
        reset in Python those the compiled call could not)."""
        e0 = self.envs[0]
        auto = self._autoreset
        act = np.logical_not(auto, out=self._act)
        o = self._prep
        BK.batch_pages(acts, act, self._slot, self._n_actions, self._ncand, self._sel_p, self._sel_s, self._crawls,
                       self._scores, self._rwt[0], self._rw_done, self._hsize, self._pages, self._slots, self._miss, o)
        if o[1] >= 0:
            self._check_actions(actions, act)  # raises, naming the sub-env
        if o[0]:
            self._fill_missing(self._miss[:o[0]])
            self._bind_scores()
            BK.batch_pages(acts, act, self._slot, self._n_actions, self._ncand, self._sel_p, self._sel_s, self._crawls,
                           self._scores, self._rwt[0], self._rw_done, self._hsize, self._pages, self._slots, self._miss,
                           o)
        hs, ns, bad = o[3], o[4], o[2]
        if bad >= 0:  # refuse before any sub-env steps
            self._refuse_reward(int(bad))
        if self._use_reducer and hs + self._room_heap > self._hk.shape[1]:
            self._grow_heaps(int(hs) + self._room_heap)
        need = int(ns) + self._deg + 1  # a fetch gives each out-link at most one slot
        cap = self._stack["slot_page"].shape[1]
        if need > cap:
            while cap < need:
                cap *= 2
            self._grow_slots(cap)
        resetting = self._resetting
        resetting.fill(False)
        if self._kreset and not act.all():  # the autoresets in the same compiled call
            np.copyto(resetting, auto)
            self._clear_crawls(np.flatnonzero(auto))
        ended = self._ended
        bad = BK.batch_step_resets(self._pages, self._slots, act, self._K, dcap, e0.beta, budget,
                                   e0.time_feature == "log_steps", self._use_reducer, self._layout, e0.state.eval_label,
                                   self.world.log_pages, self._n_domains, self._scores, self._graph, self._crawls,
                                   self._work, self._buffers,
                                   (resetting, self._home_seeds), (self._last_page, ended, self._post))
        if bad >= 0:
            self._refuse_reward(int(bad))
        self._stale = True
        if self._post[0]:  # ended sub-envs not reset in the compiled call (a failed reset: Python names the error)
            for i in np.flatnonzero(auto & ~resetting).tolist():
                obs, info = self.envs[i].reset()
                self._note_python(i, obs, info)
                self._rewards[i] = 0.0
                self._terminated[i] = self._truncated[i] = False
                ended[i] = False
            self._check_uniform()
        np.copyto(auto, ended)  # the next step's autoresets
        return (self._obs_out(), self._rewards.copy(), self._terminated.copy(), self._truncated.copy(),
                self._infos())

    def _refuse_reward(self, i: int) -> None:
        """Raise for sub-env ``i``, whose page's reward (cached by page row) is not finite."""
        e0 = self.envs[0]
        p = int(self._pages[i])
        raise ValueError(f"reward {e0.scheme.name!r} returned a non-finite value "
                         f"{float(self._rwt[0][e0.state.page_scores.row(p)])!r} for "
                         f"page {p} ({e0.corpus.titles[p]!r}); rewards must be finite")

    def _clear_crawls(self, rows: np.ndarray) -> None:
        """Before the compiled step resets crawls ``rows``: their columns, page maps and per-domain counters back
        at their reset values (what ``CrawlState.reset`` does for one crawl), and the seeds' scores filled. (Room
        for the one seed's out-links in the slots and the heap: the step made room for any fetch.)"""
        assert self._clear_plan is not None  # one compiled call, each crawl over the slots and domain slots it used
        clear_rows(self._clear_plan, rows, self._ctr[:, KN.C_N_SLOTS], self._ctr[:, KN.C_N_DSLOTS])
        if not BK.scores_ready(self._home_seeds, self._scores, self._rw_done):
            self._fill_missing(self._home_seeds)
            self._bind_scores()

    def _fill_missing(self, pages: np.ndarray) -> None:
        """Fill the shared per-topic score tables and reward cache for pages about to be fetched (raises
        ``ValueError`` for a non-finite reward before any sub-env stepped)."""
        self.envs[0].state.fill_scores(pages)

    def _step_python(self, actions: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step the sub-envs one by one (configurations the compiled step does not cover). Every action and
        every reward about to be collected is checked first, so a refused batch steps no sub-env (a reward
        scheme whose values are not cached per page — a custom callable — is then called twice for the page)."""
        self._sync_envs()
        self._check_actions(actions, ~self._autoreset)
        for i, e in enumerate(self.envs):
            if self._autoreset[i]:
                continue
            ep = e.episode
            if not ep.started or ep.over is not None:
                raise RuntimeError(f"sub-env {i} cannot step ({ep.over or 'not reset'}): call reset()")
            a = int(actions[i])
            page = -1
            if e.action_mode == "slot":
                if a < len(ep.cand):
                    page = int(ep.cand[a])
            elif e.state.status[a] == FRONTIER:
                page = a
            if page >= 0:
                e.state.page_reward(page)
        for i, e in enumerate(self.envs):
            if self._autoreset[i]:
                obs, info = e.reset()
                self._rewards[i] = 0.0
                self._terminated[i] = self._truncated[i] = False
            else:
                obs, r, term, trunc, info = e.step(actions[i])
                self._rewards[i] = r
                self._terminated[i] = term
                self._truncated[i] = trunc
            self._note_python(i, obs, info)
        if self._fast:
            self._check_uniform()
        np.logical_or(self._terminated, self._truncated, out=self._autoreset)
        return (self._obs_out(), self._rewards.copy(), self._terminated.copy(), self._truncated.copy(),
                self._infos())

    def action_masks(self) -> np.ndarray:
        """(N, K) bool in slot mode, (N, n_pages) bool in page mode (sub-envs about to autoreset: their
        reset state's mask is only known after the reset; their row is the ended episode's)."""
        if not self._slot:
            if self._fast:
                return np.stack([np.asarray(e.state.status) == FRONTIER for e in self.envs])
            return np.stack([e.action_masks() for e in self.envs])
        return np.arange(self._K) < self._ncand[:, None]

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call a method (or read an attribute) of every sub-env, like ``SyncVectorEnv.call``."""
        self._sync_envs()
        out = []
        for e in self.envs:
            attr = getattr(e, name)
            out.append(attr(*args, **kwargs) if callable(attr) else attr)
        return tuple(out)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        self._sync_envs()
        return tuple(getattr(e, name) for e in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        for e in self.envs:
            e.close()


def make_vector_env(env_id: str | None = None, num_envs: int = 1, **kwargs: Any) -> WikiCrawlVectorEnv:
    """The batched :class:`WikiCrawlVectorEnv` of a registered ``WikiCrawl`` id (default
    :data:`gym_crawl.DEFAULT_ENV_ID`): ``num_envs`` crawls built with the id's registered keyword arguments updated
    with ``kwargs``, and the budget ``kwargs["max_episode_steps"]`` or else the id's registered
    ``max_episode_steps``. Its ``spec`` is the id's, with those keyword arguments.

    For ``WikiCrawl-v3`` this is ``gym.make_vec(env_id, num_envs, vectorization_mode="vector_entry_point",
    **kwargs)``; for the older ids, whose spec carries an additional wrapper, it is the only way to the
    batched env (``make_vec`` refuses that mode for them)."""
    import copy

    import gym_crawl  # noqa: F401  (registers the ids)
    from gym_crawl.envs import DEFAULT_ENV_ID

    env_id = DEFAULT_ENV_ID if env_id is None else env_id

    spec = gym.spec(env_id)
    if spec.entry_point != "gym_crawl.envs.wiki_crawl:WikiCrawlEnv":
        raise ValueError(f"env_id {env_id!r} is not a WikiCrawl env (entry point {spec.entry_point!r})")
    kw = {**spec.kwargs, **kwargs}
    kw.setdefault("max_episode_steps", spec.max_episode_steps)
    env = WikiCrawlVectorEnv(num_envs=num_envs, **kw)
    vspec = copy.deepcopy(spec)
    vspec.kwargs = {**kw, "num_envs": num_envs}
    env.spec = vspec
    return env
