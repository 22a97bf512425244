"""Action-set reducers: which frontier pages become the K candidates an agent chooses among.

========================  ===================================================================
name                      candidates proposed each step
========================  ===================================================================
``full``                  the whole frontier (exact; the custom-agent / continuous interface —
                          with the Discrete(K) observation the top K by link-text relevance
                          are shown)
``topk``                  the K frontier pages whose discovering link text is most relevant to
                          the topic (heap with lazy invalidation: O((out-degree + K) log F))
``outlinks``              the unvisited out-links of the last fetched page (Han's asynchronous
                          view), best K by link-text relevance; when there are none, ``topk``
``random``                K frontier pages drawn uniformly without replacement (``np_random``)
========================  ===================================================================

Reducers see only the crawl state (fair information). A reducer's ``propose``
returns distinct frontier page ids; its ``on_fetch`` receives each fetch's result
and the feature row of the fetched candidate (what Tree-Frontier learns from).
"""
from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from gym_crawl.crawl import kernels as K
from gym_crawl.crawl.state import FRONTIER, CrawlState, FetchResult
from gym_crawl.features.sets import FeatureSet
from gym_crawl.registry import Registry

__all__ = ["Reducer", "FullFrontier", "TopK", "TopKRows", "Outlinks", "RandomSubset", "get_reducer",
           "register_reducer", "REDUCERS"]


class Reducer:
    """Base class. Subclasses override :meth:`propose`; the hooks default to no-ops."""

    name = "reducer"
    #: True when :meth:`on_fetch` needs the fetched candidate's feature row ``x`` (Tree-Frontier);
    #: otherwise the env may pass ``None`` for fetches made through ``step_page``.
    needs_experience = False

    def reset(self, state: CrawlState, features: FeatureSet, rng: np.random.Generator) -> None:
        """Called at every env reset, before the seeds are fetched."""
        self.state = state
        self.features = features

    def on_fetch(self, result: FetchResult, x: np.ndarray | None) -> None:
        """Called after every fetch with its result and the fetched candidate's (d,) features
        (``None`` for seeds, and for ``step_page`` fetches unless ``needs_experience``)."""

    def on_frontier_change(self, left: np.ndarray, returned: np.ndarray) -> None:
        """Called when pages leave the frontier without a fetch and come back to it (a crawl with several
        pages in flight: :mod:`gym_crawl.crawl.window` parks the pages of a busy host and returns them when it
        is free); ``left`` and ``returned`` are int32 page ids. Reducers that read the frontier store itself
        (``full``, ``random``) need nothing; those that keep their own structure over it override this."""

    def propose(self, k: int | None, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    @property
    def batchable(self) -> bool:
        """True when the batched vector env's compiled step can propose for this reducer (its state then lives
        in :class:`TopKRows` the vector env stacks: :meth:`bind_rows`, :meth:`adopt_rows`)."""
        return False

    def bind_rows(self, rows: TopKRows) -> None:
        """Keep the compiled state in ``rows`` (batchable reducers only)."""
        raise TypeError(f"reducer {self.name!r} is not batchable")

    def adopt_rows(self, rows: TopKRows) -> None:
        """Move the compiled state into ``rows`` (batchable reducers only)."""
        raise TypeError(f"reducer {self.name!r} is not batchable")

    @property
    def heap_capacity(self) -> int:
        """Length of the compiled heap (batchable reducers only)."""
        raise TypeError(f"reducer {self.name!r} is not batchable")


class TopKRows(NamedTuple):
    """One crawl's rows of the compiled top-K arrays (views into the batched vector env's (N, ...) stacks): the
    heap keys/pages ``hk``/``hp``, the heap size ``hsize`` (1,), the selection size ``nsel`` (1,) and the
    selection's pages/keys ``sel_p``/``sel_k`` (K + 1,). The score of each page's live heap entry and its flags
    are crawl-state columns (``tk_cur``, ``tk_has``, ``tk_mark``), sized by the crawl."""

    hk: np.ndarray
    hp: np.ndarray
    hsize: np.ndarray
    nsel: np.ndarray
    sel_p: np.ndarray
    sel_k: np.ndarray


def _in(a: np.ndarray, row: np.ndarray) -> bool:
    """Whether ``a`` is a view into the same stack as ``row``."""
    return a.base is not None and a.base is row.base


class FullFrontier(Reducer):
    name = "full"

    def propose(self, k: int | None, rng: np.random.Generator) -> np.ndarray:
        return self.state.frontier.copy()


def link_text_score(state: CrawlState, pages: np.ndarray) -> np.ndarray:
    """The papers' no-learning priority: topic relevance of the best discovering link's text.
    (A module-level function, not a lambda, so reducers and envs pickle.)"""
    return state.link_rel[pages]


class TopK(Reducer):
    """Best K by ``score(state, pages)`` (default: link-text topic relevance, the papers'
    no-learning priority).

    Two tiers: the current selection (a sorted list of ≤ K ``(-score, page)`` items) and a
    lazily invalidated heap of everything else. A step pushes the updated pages (O(out-degree
    log F)) and pops only what beats the selection's worst or refills it, so the cost does
    not grow with the frontier.
    """

    name = "topk"
    #: calls of :meth:`propose` so far: a compiled step that keeps the selection in its own arrays
    #: (:class:`~gym_crawl.envs.single_step.CompiledStep`) sees that someone proposed since it last looked
    proposals = 0
    # the compiled path's arrays (set at reset, or bound to the batched vector env's rows); the per-page scores and
    # flags are the crawl state's columns tk_cur, tk_has, tk_mark
    _hk: np.ndarray
    _hp: np.ndarray
    _hsize: np.ndarray
    _nsel: np.ndarray
    _sel_p: np.ndarray
    _sel_k: np.ndarray

    def __init__(self, score: Callable[[CrawlState, np.ndarray], np.ndarray] | None = None):
        self.score = score or link_text_score

    @property
    def _compiled(self) -> bool:
        """The default score (link-text relevance, float32) runs in compiled heap kernels."""
        return self.score is link_text_score

    @property
    def batchable(self) -> bool:
        return type(self) is TopK and self._compiled

    def bind_rows(self, rows: TopKRows) -> None:
        """Keep the heap in ``rows`` (before the first reset; the batched vector env)."""
        self._hk, self._hp = rows.hk, rows.hp

    @property
    def heap_capacity(self) -> int:
        """Length of the compiled heap (it grows by doubling when a crawl's frontier outgrows it)."""
        return len(self._hk)

    def adopt_rows(self, rows: TopKRows) -> None:
        """Copy whatever of the compiled state left ``rows`` (a reset's fresh counters and selection, a heap
        that grew in Python) back into them and keep it there; ``rows.hk`` must hold :attr:`heap_capacity`."""
        if not _in(self._hk, rows.hk):
            if len(self._hk) > len(rows.hk):
                raise ValueError(f"adopt_rows: the heap holds {len(self._hk)} entries, the rows {len(rows.hk)}")
            hs = int(self._hsize[0])
            rows.hk[:hs] = self._hk[:hs]
            rows.hp[:hs] = self._hp[:hs]
            self._hk, self._hp = rows.hk, rows.hp
        if not _in(self._hsize, rows.hsize):
            rows.hsize[:] = self._hsize
            self._hsize = rows.hsize
        if not _in(self._nsel, rows.nsel):
            rows.nsel[:] = self._nsel
            self._nsel = rows.nsel
        if not _in(self._sel_p, rows.sel_p):
            m = min(len(self._sel_p), len(rows.sel_p))
            rows.sel_p[:m] = self._sel_p[:m]
            rows.sel_k[:m] = self._sel_k[:m]
            self._sel_p, self._sel_k = rows.sel_p, rows.sel_k

    def reset(self, state: CrawlState, features: FeatureSet, rng: np.random.Generator) -> None:
        super().reset(state, features, rng)
        if self._compiled:
            if getattr(self, "_hk", None) is None:
                self._hk = np.zeros(1024, np.float32)
                self._hp = np.zeros(1024, np.int32)
            self._hsize = np.zeros(1, np.int64)
            self._nsel = np.zeros(1, np.int64)
            self._sel_p = np.zeros(0, np.int32)
            self._sel_k = np.zeros(0, np.float32)
            return
        self._heap: list[tuple[float, int]] = []
        self._sel: list[tuple[float, int]] = []
        self._cur: dict[int, float] = {}

    def on_fetch(self, result: FetchResult, x: np.ndarray | None) -> None:
        pages = result.updated_pages
        if self._compiled:
            need = int(self._hsize[0]) + len(pages)
            if need > len(self._hk):  # grow the heap (amortized doubling)
                cap = max(need, 2 * len(self._hk))
                self._hk = np.concatenate([self._hk, np.zeros(cap - len(self._hk), np.float32)])
                self._hp = np.concatenate([self._hp, np.zeros(cap - len(self._hp), np.int32)])
            K.topk_update(np.asarray(pages, np.int32), self.state.crawl_arrays, 0, self._hk, self._hp, self._hsize,
                          int(result.page), np.asarray(result.removed_pages, np.int32))
            return
        if len(pages):
            sc = self.score(self.state, pages)
            cur = self._cur
            for p, s in zip(pages.tolist(), sc.tolist()):
                if cur.get(p) != s:
                    cur[p] = s
                    heapq.heappush(self._heap, (-s, p))
        self._cur.pop(result.page, None)
        for p in result.removed_pages.tolist():
            self._cur.pop(p, None)

    def on_frontier_change(self, left: np.ndarray, returned: np.ndarray) -> None:
        """Forget the pages that left; push the pages that returned with their current scores."""
        if self._compiled:
            if len(left):
                self.state.tk_has[left] = False
            if len(returned):
                need = int(self._hsize[0]) + len(returned)
                if need > len(self._hk):
                    cap = max(need, 2 * len(self._hk))
                    self._hk = np.concatenate([self._hk, np.zeros(cap - len(self._hk), np.float32)])
                    self._hp = np.concatenate([self._hp, np.zeros(cap - len(self._hp), np.int32)])
                K.topk_push(np.asarray(returned, np.int32), self.state.crawl_arrays, 0, self._hk, self._hp,
                            self._hsize)
            return
        for p in left.tolist():
            self._cur.pop(p, None)
        if len(returned):
            for p, sc in zip(returned.tolist(), self.score(self.state, returned).tolist()):
                self._cur[p] = sc
                heapq.heappush(self._heap, (-sc, p))

    def propose(self, k: int | None, rng: np.random.Generator) -> np.ndarray:
        self.proposals += 1
        if k is None:
            k = self.state.fr_size
        if self._compiled:
            k = int(k)
            if len(self._sel_p) < k + 1:  # room for k + 1 (the insertion before an eviction)
                keep = int(self._nsel[0])
                self._sel_p = np.concatenate([self._sel_p[:keep], np.zeros(k + 1 - keep, np.int32)])
                self._sel_k = np.concatenate([self._sel_k[:keep], np.zeros(k + 1 - keep, np.float32)])
            need = int(self._hsize[0]) + int(self._nsel[0]) + 1  # evictions go back to the heap
            if need > len(self._hk):
                cap = max(need, 2 * len(self._hk))
                self._hk = np.concatenate([self._hk, np.zeros(cap - len(self._hk), np.float32)])
                self._hp = np.concatenate([self._hp, np.zeros(cap - len(self._hp), np.int32)])
            n = K.topk_select(k, self.state.crawl_arrays, 0, self._hk, self._hp, self._hsize, self._sel_p,
                              self._sel_k, self._nsel)
            return self._sel_p[:n].copy()
        status, cur, h = self.state.status, self._cur, self._heap
        sel = [it for it in self._sel if status[it[1]] == FRONTIER and cur.get(it[1]) == -it[0]]
        seen = {p for _, p in sel}
        while h and (len(sel) < k or h[0] < sel[-1]):
            it = heapq.heappop(h)
            p = it[1]
            if status[p] != FRONTIER or cur.get(p) != -it[0] or p in seen:
                continue
            bisect.insort(sel, it)
            seen.add(p)
            if len(sel) > k:
                out = sel.pop()
                seen.discard(out[1])
                heapq.heappush(h, out)
        self._sel = sel
        return np.asarray([p for _, p in sel], dtype=np.int32)


class Outlinks(TopK):
    """Unvisited out-links of the last fetched page (best K by link text); ``topk`` when none."""

    name = "outlinks"

    def reset(self, state: CrawlState, features: FeatureSet, rng: np.random.Generator) -> None:
        super().reset(state, features, rng)
        self._last = np.zeros(0, np.int32)

    def on_fetch(self, result: FetchResult, x: np.ndarray | None) -> None:
        super().on_fetch(result, x)
        self._last = result.updated_pages

    def propose(self, k: int | None, rng: np.random.Generator) -> np.ndarray:
        last = self._last[self.state.status[self._last] == FRONTIER]
        if len(last) == 0:
            return super().propose(k, rng)
        if k is not None and len(last) > k:
            sc = self.score(self.state, last)
            last = last[np.argsort(-sc, kind="stable")[:k]]
        return last.astype(np.int32)


class RandomSubset(Reducer):
    name = "random"

    def propose(self, k: int | None, rng: np.random.Generator) -> np.ndarray:
        F = self.state.fr_size
        if k is None or k >= F:
            return self.state.frontier.copy()
        idx = rng.choice(F, size=k, replace=False)
        return self.state.fr_pages[np.sort(idx)].copy()


#: name -> factory() -> Reducer (lazy "module:attribute" entries allowed)
REDUCERS: Registry[Reducer] = Registry("reducer", "a Reducer instance")
REDUCERS.register("full", FullFrontier, "the whole frontier (exact; Discrete(K) shows the best K by link text)")
REDUCERS.register("topk", TopK, "the K frontier pages with the most topic-relevant link text")
REDUCERS.register("outlinks", Outlinks, "unvisited out-links of the last fetched page (Han's asynchronous view)")
REDUCERS.register("random", RandomSubset, "K frontier pages drawn uniformly without replacement")
REDUCERS.register("tree", "gym_crawl.reducers.tree:TreeFrontier", "TRES's Tree-Frontier leaf representatives")


def register_reducer(name: str, factory: Callable[[], Reducer] | str, description: str = "") -> None:
    """Make ``reducer=name`` build ``factory()`` (a callable or a lazy ``"module:attribute"``)."""
    REDUCERS.register(name, factory, description)


def get_reducer(spec: str | Reducer) -> Reducer:
    """Resolve a reducer name or return a :class:`Reducer` instance as is."""
    if isinstance(spec, Reducer):
        return spec
    return REDUCERS.build(spec)
