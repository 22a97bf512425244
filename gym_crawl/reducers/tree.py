"""Tree-Frontier (TRES, Kontogiannis et al., §2.6): an online binary decision tree over the joint
state-action feature space that groups the frontier into leaves of similar expected reward.

Two kinds of samples live in the leaves (the paper's Algorithms 2–3):

* **experience samples** ``(x, r)`` — the feature row of every fetched candidate and the reward it
  earned; they decide the splits;
* **frontier samples** — one per frontier page, its feature row at routing time; they follow the
  splits and are what gets proposed.

Growth is online and best-first: each new experience sample is routed to its leaf ``P`` and only
``P`` is checked for a split. A split is the ``(feature f, threshold c)`` with the largest weighted
reward-variance reduction (Eq. 3–4)::

    Δ(P, L, R) = V(P) − |L|/|P| · V(L) − |R|/|P| · V(R),   L = {x ∈ P : x[f] < c},  R = P \\ L

with ``V`` the population variance of the experience rewards; no split is made unless some
admissible partition has ``Δ > min_gain · V(P)`` (always ``> 0``). On a split, both the leaf's
experience and its frontier samples are partitioned by the same rule. Sampling
(:meth:`TreeFrontier.propose`) returns one uniformly drawn frontier sample per non-empty leaf.

Cost model (what differs from a list-based implementation):

* a leaf's members (frontier slots, experience ids) live in one flat ``int32`` buffer where each
  leaf owns a contiguous, geometrically grown segment; a member's position is indexed, so removal is
  O(1) swap-remove and one representative per leaf is drawn for *all* leaves in one vectorized
  gather — no Python object per link, no list scans;
* insertion routes a batch of rows down the tree level by level: O(depth) vectorized steps;
* split search sorts the leaf's experience once per feature and scores every threshold with prefix
  sums of the (centred) rewards and squared rewards — O(n_P · d · log n_P), vectorized, no object per
  candidate threshold; a leaf whose last search found no admissible split is searched again only
  after its experience grew by ``recheck_growth`` (amortized O(d log n) per experience sample);
* partitioning on a split moves each member once; a frontier sample is moved at most ``depth``
  times over its life, so insertion is amortized O(depth);
* memory: feature rows of the frontier (a slot pool recycled on removal) and of the experience,
  plus one ``int32`` slot index per corpus page (the crawl state's own columns follow the pages it touched:
  :mod:`gym_crawl.crawl.fields`; this index is still as long as the web).

Nothing here depends on the frontier size per step except the one-off partition of a splitting
leaf's frontier samples (amortized as above) and the O(leaves) sampling.

Routing rules (documented choices):

* A frontier sample is routed **once, with its features at insertion time**, as in TRES. Rows of
  non-``local`` feature sets (``tres``/``combined``/``tres-clf``: domain relevant ratio and
  unknown-domain flag) drift as the crawl fetches other pages of the same domain; the sample is
  *not* re-routed for that drift (doing so would cost O(frontier) per step). Agents evaluate
  ``Q`` on fresh rows of the proposed pages anyway.
* A frontier page that gains another fetched parent (``FetchResult.updated_pages``) is re-routed
  with its new row (``reroute_updated=True``, the default): in TRES every discovering link is a new
  frontier sample; our frontier is deduplicated by URL, so the page's single sample is refreshed
  instead. Cost O(out-degree × depth), like insertion.
* Pages leave the tree when fetched (``FetchResult.page``) or dropped by a domain cap
  (``FetchResult.removed_pages``). Pages that left the frontier unreported are detected when the
  counters disagree with the crawl state and purged (and, as a last resort, when drawn).

When more leaves are non-empty than the ``k`` slots asked for, ``overflow`` chooses which leaves
are shown: ``"mean"`` (default) the ``k`` leaves with the highest smoothed mean experience reward
``(Σr + m·r̄)/(n + m)`` (``m = prior_weight``, ``r̄`` the global mean; ties broken at random), or
``"uniform"`` ``k`` leaves drawn uniformly (Tree-Random's unbiased choice). ``propose(None, rng)``
returns every representative.

All randomness comes from the generator passed to :meth:`propose` (the env's ``np_random``); the
tree itself is a deterministic function of the fetch sequence, so the same seed gives the same tree.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gym_crawl.crawl import kernels as K
from gym_crawl.crawl.state import FRONTIER, CrawlState, FetchResult
from gym_crawl.features.sets import FeatureSet
from gym_crawl.pagemap import EMPTY, add_keys, find_many, rehash
from gym_crawl.reducers.base import Reducer

__all__ = ["TreeFrontier", "best_split"]


def best_split(X: np.ndarray, r: np.ndarray, min_child: int = 1) -> tuple[float, int, float] | None:
    """Best ``(gain, feature, threshold)`` of Eq. 3–4 over all features and thresholds, or ``None``.

    Args:
        X: (n, d) feature rows of the leaf's experience samples.
        r: (n,) rewards.
        min_child: minimum number of samples on each side.

    Returns:
        ``gain`` = V(P) − n_L/n·V(L) − n_R/n·V(R) (population variances, ≥ 0), the feature index and a
        threshold ``c`` (midpoint of two consecutive distinct values) such that ``x[f] < c`` goes left.
        Ties: the lowest feature index, then the lowest threshold. ``None`` when no threshold leaves
        ``min_child`` samples on both sides.
    """
    n, d = X.shape
    min_child = max(1, int(min_child))
    if n < 2 * min_child or d == 0:
        return None
    rc = r.astype(np.float64) - float(np.mean(r))
    order = np.argsort(X, axis=0, kind="stable")                     # (n, d)
    Xs = np.take_along_axis(X, order, axis=0)
    rs = rc[order]
    cs = np.cumsum(rs, axis=0)[:-1]                                   # left sums for n_L = 1..n-1
    cs2 = np.cumsum(rs * rs, axis=0)[:-1]
    S, S2 = cs[-1] + rs[-1], cs2[-1] + rs[-1] * rs[-1]                # (d,) totals (same for every f)
    nl = np.arange(1, n, dtype=np.float64)[:, None]
    nr = n - nl
    sse = (cs2 - cs * cs / nl) + ((S2 - cs2) - (S - cs) ** 2 / nr)    # (n-1, d)
    ok = Xs[1:] > Xs[:-1]
    if min_child > 1:
        k = np.arange(1, n)
        ok &= ((k >= min_child) & (n - k >= min_child))[:, None]
    if not ok.any():
        return None
    var_p = float(S2[0]) / n
    gain = np.where(ok, var_p - sse / n, -np.inf)
    flat = int(np.argmax(gain.T))                                     # lowest feature, then lowest threshold
    f, i = divmod(flat, n - 1)
    g = float(gain[i, f])
    thr = (float(Xs[i, f]) + float(Xs[i + 1, f])) / 2.0
    return max(g, 0.0), int(f), thr


class _PageSlots:
    """The tree's page → row index, keyed by page id (open addressing, :mod:`gym_crawl.pagemap`): an entry per page
    ever inserted this crawl, its row or -1 once removed — memory that follows the crawl's frontier, not the web."""

    def __init__(self) -> None:
        self.n = 0
        self.keys = np.full(128, EMPTY, np.int32)
        self.idx = np.zeros(128, np.int32)  # entry of each key in ``page`` / ``slot``
        self.page = np.zeros(64, np.int32)
        self.slot = np.full(64, -1, np.int32)

    def _entries(self, pages: np.ndarray) -> np.ndarray:
        out = np.empty(len(pages), np.int64)
        find_many(self.keys, self.idx, np.asarray(pages, np.int32), out)
        return out

    def get(self, pages: np.ndarray) -> np.ndarray:
        """int32 row of each of ``pages`` (-1: not in the tree)."""
        e = self._entries(pages)
        out = np.full(len(e), -1, np.int32)
        hit = e >= 0
        out[hit] = self.slot[e[hit]]
        return out

    def set(self, pages: np.ndarray, slots: np.ndarray) -> None:
        """Set the row of each of ``pages`` to ``slots`` (-1: removed)."""
        e = self._entries(pages)
        if np.any(e < 0):
            fresh = np.unique(np.asarray(pages, np.int32)[e < 0])
            k, n = len(fresh), self.n
            if 2 * (n + k) > len(self.keys):
                size = len(self.keys)
                while 2 * (n + k) > size:
                    size *= 2
                self.keys, self.idx = np.full(size, EMPTY, np.int32), np.zeros(size, np.int32)
                rehash(self.page, n, self.keys, self.idx)
            if n + k > len(self.page):
                cap = max(n + k, 2 * len(self.page))
                self.page = np.concatenate([self.page, np.zeros(cap - len(self.page), np.int32)])
                self.slot = np.concatenate([self.slot, np.full(cap - len(self.slot), -1, np.int32)])
            ids = np.arange(n, n + k, dtype=np.int32)
            self.page[n:n + k] = fresh
            add_keys(self.keys, self.idx, fresh, ids)
            self.n = n + k
            e = self._entries(pages)
        self.slot[e] = slots  # a page listed twice: its last row, as a column indexed by page id gave


class _Buckets:
    """Disjoint sets of integer items, one set per bucket, in one flat int32 buffer.

    Bucket ``b`` owns ``buf[start[b] : start[b] + cap[b]]`` and uses its first ``count[b]`` cells.
    ``where[item]``/``pos[item]`` index every item, so removal is an O(1) swap-remove. Segments grow
    geometrically by relocation to the end of the buffer; the abandoned cells are reclaimed by a
    vectorized compaction when they outnumber the live capacity.
    """

    def __init__(self, n_items: int = 64, n_buckets: int = 16):
        self.buf = np.zeros(256, np.int32)
        self.end = 0
        self.garbage = 0
        self.start = np.zeros(n_buckets, np.int64)
        self.cap = np.zeros(n_buckets, np.int64)
        self.count = np.zeros(n_buckets, np.int64)
        self.where = np.full(n_items, -1, np.int32)
        self.pos = np.full(n_items, -1, np.int64)

    # ---------------------------------------------------------------- sizing
    def ensure_buckets(self, n: int) -> None:
        if n > len(self.start):
            m = max(n, 2 * len(self.start))
            for name in ("start", "cap", "count"):
                a = getattr(self, name)
                b = np.zeros(m, a.dtype)
                b[: len(a)] = a
                setattr(self, name, b)

    def ensure_items(self, n: int) -> None:
        if n > len(self.where):
            m = max(n, 2 * len(self.where))
            w = np.full(m, -1, np.int32)
            w[: len(self.where)] = self.where
            p = np.full(m, -1, np.int64)
            p[: len(self.pos)] = self.pos
            self.where, self.pos = w, p

    def _alloc(self, size: int) -> int:
        self._make_room(size)
        s = self.end
        self.end += size
        return s

    def _compact(self) -> None:
        b = np.flatnonzero(self.cap > 0)
        caps = self.cap[b]
        new_start = np.concatenate([[0], np.cumsum(caps)[:-1]]).astype(np.int64)
        cnt = self.count[b]
        total = int(cnt.sum())
        nb = np.zeros(max(256, int(caps.sum()) * 2), np.int32)
        if total:
            rep = np.repeat(np.arange(len(b)), cnt)
            off = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            nb[new_start[rep] + off] = self.buf[self.start[b][rep] + off]
        self.start[b] = new_start
        self.end = int(caps.sum())
        self.buf = nb
        self.garbage = 0

    # ------------------------------------------------------------ operations
    def add_grouped(self, items: np.ndarray, bucket: np.ndarray) -> None:
        """Append ``items`` to their buckets: as ``add(b, items[bucket == b])`` for each bucket ``b``
        in increasing order (compiled; the buffer is compacted or grown first when short of room)."""
        if len(items) == 0:
            return
        items = np.ascontiguousarray(items, np.int32)
        bucket = np.ascontiguousarray(bucket, np.int32)
        meta = np.array([self.end, self.garbage], np.int64)
        while True:
            r = K.buckets_add_grouped(items, bucket, self.buf, self.start, self.cap, self.count, self.where,
                                      self.pos, meta)
            if r == 0:
                break
            self._make_room(-r)
            meta[:] = (self.end, self.garbage)
        self.end, self.garbage = int(meta[0]), int(meta[1])

    def _make_room(self, size: int) -> None:
        """Room for ``size`` more entries at the buffer's end: compacted when more is garbage than live, else (or
        still short) grown."""
        if self.end + size > len(self.buf):
            if self.garbage > int(self.cap.sum()):
                self._compact()
            if self.end + size > len(self.buf):
                nb = np.zeros(max(2 * len(self.buf), self.end + size), np.int32)
                nb[: self.end] = self.buf[: self.end]
                self.buf = nb

    def remove_many(self, items: np.ndarray) -> None:
        """``remove(item)`` for each item, in order (compiled)."""
        if len(items):
            K.buckets_remove_many(np.ascontiguousarray(items, np.int32), self.buf, self.start, self.count,
                                  self.where, self.pos)

    def add(self, b: int, items: np.ndarray) -> None:
        """Append ``items`` (not currently in any bucket) to bucket ``b``."""
        k = len(items)
        if k == 0:
            return
        c = int(self.count[b])
        need = c + k
        if need > self.cap[b]:
            new_cap = max(8, 1 << int(np.ceil(np.log2(need))))
            s = self._alloc(new_cap)
            old = int(self.start[b])
            self.buf[s:s + c] = self.buf[old:old + c]
            self.garbage += int(self.cap[b])
            self.start[b], self.cap[b] = s, new_cap
        s = int(self.start[b])
        self.buf[s + c:s + need] = items
        self.where[items] = b
        self.pos[items] = np.arange(c, need)
        self.count[b] = need

    def remove(self, item: int) -> int:
        """Swap-remove ``item``; returns its bucket."""
        b = int(self.where[item])
        i = int(self.pos[item])
        s = int(self.start[b])
        last_i = int(self.count[b]) - 1
        last = int(self.buf[s + last_i])
        self.buf[s + i] = last
        self.pos[last] = i
        self.count[b] = last_i
        self.where[item] = -1
        self.pos[item] = -1
        return b

    def items(self, b: int) -> np.ndarray:
        s = int(self.start[b])
        return self.buf[s:s + int(self.count[b])]

    def release(self, b: int) -> None:
        """Forget bucket ``b``'s segment (its items must have been re-assigned or dropped)."""
        self.garbage += int(self.cap[b])
        self.cap[b] = self.count[b] = 0

    def draw(self, bs: np.ndarray, u: np.ndarray) -> np.ndarray:
        """One item per bucket of ``bs`` (all non-empty), item index ``floor(u · count)``."""
        cnt = self.count[bs]
        idx = np.minimum((u * cnt).astype(np.int64), cnt - 1)
        return self.buf[self.start[bs] + idx]


class TreeFrontier(Reducer):
    """Tree-Frontier action-set reducer (see the module docstring).

    Args:
        min_samples_split: a leaf needs this many experience samples before it may split.
        max_depth: leaves at this depth never split (root depth 0).
        min_child_fraction: each child of a split keeps at least this fraction of the leaf's
            experience samples (and at least ``min_samples_leaf``).
        min_samples_leaf: absolute minimum of experience samples per child.
        max_leaves: stop splitting once the tree has this many leaves (``None``: unbounded).
        min_gain: a split must reduce the weighted variance by more than ``min_gain × V(P)``.
        overflow: which leaves to show when more than ``k`` are non-empty: ``"mean"`` or ``"uniform"``.
        prior_weight: pseudo-count ``m`` of the smoothed leaf mean used by ``overflow="mean"``.
        reroute_updated: re-route frontier pages that gained a parent with their new feature row.
        recheck_growth: after a fruitless split search, search that leaf again only once its
            experience count exceeds the count at that search by this fraction (0: every time).

    Attributes (read-only diagnostics): ``n_leaves``, ``n_nonempty_leaves``, ``n_frontier``,
    ``n_experience``, ``max_leaf_depth``, ``n_splits``, ``last_leaves`` (leaves of the last proposal,
    aligned with its pages).
    """

    name = "tree"
    needs_experience = True  # learns splits from the fetched candidate's feature row

    def __init__(self, min_samples_split: int = 8, max_depth: int = 32, min_child_fraction: float = 0.0,
                 min_samples_leaf: int = 2, max_leaves: int | None = None, min_gain: float = 0.0,
                 overflow: str = "mean", prior_weight: float = 2.0, reroute_updated: bool = True,
                 recheck_growth: float = 0.05):
        if min_samples_split < 2:
            raise ValueError(f"min_samples_split must be >= 2, got {min_samples_split}")
        if max_depth < 0:
            raise ValueError(f"max_depth must be >= 0, got {max_depth}")
        if not 0.0 <= min_child_fraction < 0.5:
            raise ValueError(f"min_child_fraction must be in [0, 0.5), got {min_child_fraction}")
        if min_samples_leaf < 1:
            raise ValueError(f"min_samples_leaf must be >= 1, got {min_samples_leaf}")
        if max_leaves is not None and max_leaves < 1:
            raise ValueError(f"max_leaves must be >= 1 or None, got {max_leaves}")
        if min_gain < 0:
            raise ValueError(f"min_gain must be >= 0, got {min_gain}")
        if overflow not in ("mean", "uniform"):
            raise ValueError(f"overflow must be 'mean' or 'uniform', got {overflow!r}")
        if recheck_growth < 0:
            raise ValueError(f"recheck_growth must be >= 0, got {recheck_growth}")
        self.min_samples_split = int(min_samples_split)
        self.max_depth = int(max_depth)
        self.min_child_fraction = float(min_child_fraction)
        self.min_samples_leaf = int(min_samples_leaf)
        self.max_leaves = max_leaves
        self.min_gain = float(min_gain)
        self.overflow = overflow
        self.prior_weight = float(prior_weight)
        self.reroute_updated = bool(reroute_updated)
        self.recheck_growth = float(recheck_growth)
        self.state: CrawlState | None = None  # type: ignore[assignment]
        self.reset_storage(0, 0)

    def config(self) -> dict[str, Any]:
        """Constructor arguments (JSON-serializable)."""
        return {k: getattr(self, k) for k in ("min_samples_split", "max_depth", "min_child_fraction",
                                              "min_samples_leaf", "max_leaves", "min_gain", "overflow",
                                              "prior_weight", "reroute_updated", "recheck_growth")}

    # ================================================================ storage
    def reset_storage(self, n_pages: int, dim: int) -> None:
        """Empty the tree for a crawl over ``n_pages`` pages with ``dim``-dimensional rows (its page index follows the
        pages inserted, whatever ``n_pages``).

        Called by :meth:`reset`; call it directly to use the tree without an env (then feed it
        with :meth:`insert`, :meth:`remove` and :meth:`add_experience`)."""
        self.dim = int(dim)
        # nodes
        cap = 64
        self._feat = np.full(cap, -1, np.int32)
        self._thr = np.zeros(cap, np.float64)
        self._left = np.full(cap, -1, np.int32)
        self._right = np.full(cap, -1, np.int32)
        self._depth = np.zeros(cap, np.int32)
        self._ecount = np.zeros(cap, np.int64)
        self._esum = np.zeros(cap, np.float64)
        self._esum2 = np.zeros(cap, np.float64)
        self._checked = np.zeros(cap, np.int64)
        self.n_nodes = 1
        self.n_leaves = 1
        self.n_splits = 0
        self.max_leaf_depth = 0
        # frontier samples: slot pool of rows
        self._page_slot = _PageSlots()
        self._slot_page = np.full(64, -1, np.int32)
        self._fx = np.zeros((64, self.dim), np.float32)
        self._free = np.arange(63, -1, -1, dtype=np.int32)  # stack of free slots (top = end)
        self._n_free = 64
        self._fr = _Buckets(64, cap)
        self.n_frontier = 0
        # experience samples
        self._ex = np.zeros((64, self.dim), np.float32)
        self._er = np.zeros(64, np.float64)
        self._ek = _Buckets(64, cap)
        self.n_experience = 0
        self._rsum = 0.0
        self.last_leaves = np.zeros(0, np.int32)

    def _grow_nodes(self, need: int) -> None:
        cap = len(self._feat)
        if need <= cap:
            return
        m = max(need, 2 * cap)
        for name, fill in (("_feat", -1), ("_thr", 0), ("_left", -1), ("_right", -1), ("_depth", 0),
                           ("_ecount", 0), ("_esum", 0), ("_esum2", 0), ("_checked", 0)):
            a = getattr(self, name)
            b = np.full(m, fill, a.dtype)
            b[:cap] = a
            setattr(self, name, b)
        self._fr.ensure_buckets(m)
        self._ek.ensure_buckets(m)

    def _alloc_slots(self, k: int) -> np.ndarray:
        if k > self._n_free:
            old = len(self._slot_page)
            m = max(old + k, 2 * old)
            sp = np.full(m, -1, np.int32)
            sp[:old] = self._slot_page
            fx = np.zeros((m, self.dim), np.float32)
            fx[:old] = self._fx
            self._slot_page, self._fx = sp, fx
            fresh = np.arange(m - 1, old - 1, -1, dtype=np.int32)
            free = np.zeros(m, np.int32)
            free[: self._n_free] = self._free[: self._n_free]
            free[self._n_free:self._n_free + len(fresh)] = fresh
            self._free = free
            self._n_free += len(fresh)
            self._fr.ensure_items(m)
        s = self._free[self._n_free - k:self._n_free][::-1].copy()
        self._n_free -= k
        return s

    def _release_slot(self, slot: int) -> None:
        self._free[self._n_free] = slot
        self._n_free += 1

    # ============================================================ env hooks
    def reset(self, state: CrawlState, features: FeatureSet, rng: np.random.Generator) -> None:
        super().reset(state, features, rng)
        self.reset_storage(state.corpus.n_pages, features.dim)

    def on_fetch(self, result: FetchResult, x: np.ndarray | None) -> None:
        """Algorithm 3: drop the fetched (and domain-capped) pages, add the experience sample
        ``(x, result.reward)`` and check its leaf for a split, then route the new frontier samples."""
        self.remove(np.asarray([result.page]))
        removed = getattr(result, "removed_pages", None)
        if removed is not None and len(removed):
            self.remove(removed)
        if x is not None:
            self.add_experience(np.asarray(x, np.float32), float(result.reward))
        st = self.state
        assert st is not None, "on_fetch before reset"
        pages = np.asarray(result.updated_pages if self.reroute_updated else result.new_pages, np.int64)
        if len(pages):
            pages = pages[(st.status[pages] == FRONTIER) & (st.fr_pos[pages] >= 0)]
        if len(pages):
            X = self.features.compute(st, pages)
            known = self._page_slot.get(pages) >= 0
            if known.any():
                self.reroute(pages[known], X[known])
            if not known.all():
                self.insert(pages[~known], X[~known])
        if self.n_frontier != st.fr_size:  # something left the frontier unreported: purge it
            self._purge_stale()

    def on_frontier_change(self, left: np.ndarray, returned: np.ndarray) -> None:
        """Drop the pages that left the frontier from their leaves; route the pages that came back."""
        if len(left):
            self.remove(left)
        st = self.state
        assert st is not None, "on_frontier_change before reset"
        pages = np.asarray(returned, np.int64)
        if len(pages):
            pages = pages[(st.status[pages] == FRONTIER) & (st.fr_pos[pages] >= 0) & (self._page_slot.get(pages) < 0)]
        if len(pages):
            self.insert(pages, self.features.compute(st, pages))

    def propose(self, k: int | None, rng: np.random.Generator) -> np.ndarray:
        """Algorithm 2: one uniformly drawn frontier page per non-empty leaf (all of them when
        ``k`` is None or there are at most ``k``; else ``k`` leaves chosen by ``overflow``).

        Returns (m,) int32 page ids in leaf-id order; ``last_leaves`` holds their leaves."""
        if self.state is not None and self.n_frontier != self.state.fr_size:
            self._purge_stale()
        nn = self.n_nodes
        leaves = np.flatnonzero((self._left[:nn] < 0) & (self._fr.count[:nn] > 0)).astype(np.int32)
        if k is not None and len(leaves) > k:
            if self.overflow == "uniform":
                pick = np.sort(rng.choice(len(leaves), size=k, replace=False))
            else:
                score = self.leaf_means(leaves)
                pick = np.sort(np.lexsort((rng.random(len(leaves)), -score))[:k])
            leaves = leaves[pick]
        u = rng.random(len(leaves))
        slots = self._fr.draw(leaves, u)
        pages = self._slot_page[slots]
        if self.state is not None and len(pages):
            bad = ~((self.state.status[pages] == FRONTIER) & (self.state.fr_pos[pages] >= 0))
            if bad.any():  # unreported departures (not produced by WikiCrawlEnv): purge and redraw
                self._purge_stale()
                return self.propose(k, rng)
        self.last_leaves = leaves
        return pages.astype(np.int32)

    # ====================================================== low-level API
    def insert(self, pages: np.ndarray, X: np.ndarray) -> None:
        """Route frontier pages with feature rows ``X`` (len(pages), dim) to their leaves.
        Pages already in the tree must be removed first."""
        pages = np.asarray(pages, np.int64)
        if len(pages) == 0:
            return
        X = np.asarray(X, np.float32)
        if X.shape != (len(pages), self.dim):
            raise ValueError(f"insert: X has shape {X.shape}, expected ({len(pages)}, {self.dim})")
        if np.any(self._page_slot.get(pages) >= 0):
            raise ValueError("insert: some pages are already in the tree")
        slots = self._alloc_slots(len(pages))
        self._slot_page[slots] = pages
        self._page_slot.set(pages, slots)
        self._fx[slots] = X
        self._add_grouped(slots, self.route(X))
        self.n_frontier += len(pages)

    def remove(self, pages: np.ndarray) -> int:
        """Remove the given pages from the tree (pages not in it are ignored). Returns how many left."""
        pages = np.asarray(pages, np.int64)
        if len(pages) == 0:
            return 0
        slots = self._page_slot.get(pages)
        slots = slots[slots >= 0]
        self._fr.remove_many(slots)
        self._page_slot.set(self._slot_page[slots].astype(np.int64), np.full(len(slots), -1, np.int32))
        for s in slots.tolist():
            self._slot_page[s] = -1
            self._release_slot(s)
        self.n_frontier -= len(slots)
        return len(slots)

    def reroute(self, pages: np.ndarray, X: np.ndarray) -> int:
        """Replace the feature rows of pages already in the tree and move those whose leaf changed.
        Returns how many moved. O(len(pages) × depth)."""
        pages = np.asarray(pages, np.int64)
        if len(pages) == 0:
            return 0
        slots = self._page_slot.get(pages)
        if np.any(slots < 0):
            raise ValueError("reroute: some pages are not in the tree")
        X = np.asarray(X, np.float32)
        self._fx[slots] = X
        leaf = self.route(X)
        moved = np.flatnonzero(leaf != self._fr.where[slots])
        self._fr.remove_many(slots[moved])
        self._add_grouped(slots[moved], leaf[moved])
        return len(moved)

    def _add_grouped(self, slots: np.ndarray, leaf: np.ndarray) -> None:
        self._fr.add_grouped(slots, leaf)

    def add_experience(self, x: np.ndarray, reward: float) -> int:
        """Add the experience sample ``(x, reward)`` and check its leaf for a split.
        Returns the leaf the sample ended in (a new child if the leaf split)."""
        x = np.asarray(x, np.float32).reshape(-1)
        if len(x) != self.dim:
            raise ValueError(f"add_experience: x has {len(x)} features, expected {self.dim}")
        e = self.n_experience
        if e == len(self._er):
            m = 2 * e
            ex = np.zeros((m, self.dim), np.float32)
            ex[:e] = self._ex
            er = np.zeros(m, np.float64)
            er[:e] = self._er
            self._ex, self._er = ex, er
            self._ek.ensure_items(m)
        self._ex[e] = x
        self._er[e] = reward
        self.n_experience += 1
        self._rsum += reward
        leaf = self.route_one(x)
        self._ek.add_grouped(np.asarray([e], np.int32), np.asarray([leaf], np.int32))
        self._ecount[leaf] += 1
        self._esum[leaf] += reward
        self._esum2[leaf] += reward * reward
        if self._try_split(leaf):
            leaf = self.route_one(x)
        return leaf

    # ============================================================= routing
    def route(self, X: np.ndarray) -> np.ndarray:
        """(m,) leaf node of each row of ``X`` (m, dim)."""
        X = np.asarray(X, np.float32)
        node = np.zeros(len(X), np.int32)
        K.tree_route(X, self._left, self._right, self._feat, self._thr, node)  # compiled, O(m × depth)
        return node

    def route_one(self, x: np.ndarray) -> int:
        out = np.zeros(1, np.int32)
        K.tree_route(np.asarray(x, np.float32).reshape(1, -1), self._left, self._right, self._feat, self._thr, out)
        return int(out[0])

    # ============================================================== splits
    def _try_split(self, leaf: int) -> bool:
        n = int(self._ecount[leaf])
        if n < self.min_samples_split or self._depth[leaf] >= self.max_depth:
            return False
        if self.max_leaves is not None and self.n_leaves >= self.max_leaves:
            return False
        if self._checked[leaf] and n <= self._checked[leaf] * (1.0 + self.recheck_growth):
            return False
        mean = self._esum[leaf] / n
        var = self._esum2[leaf] / n - mean * mean
        if var <= 1e-12 * max(1.0, mean * mean):
            return False
        E = self._ek.items(leaf).copy()
        min_child = max(self.min_samples_leaf, int(np.ceil(self.min_child_fraction * n)))
        res = best_split(self._ex[E], self._er[E], min_child)
        if res is None or res[0] <= max(self.min_gain * var, 1e-9 * var):
            self._checked[leaf] = n
            return False
        _, f, thr = res
        self._split(leaf, f, thr, E)
        return True

    def _split(self, leaf: int, f: int, thr: float, E: np.ndarray) -> None:
        L, R = self.n_nodes, self.n_nodes + 1
        self._grow_nodes(self.n_nodes + 2)
        self.n_nodes += 2
        self.n_leaves += 1
        self.n_splits += 1
        self._feat[leaf], self._thr[leaf] = f, thr
        self._left[leaf], self._right[leaf] = L, R
        d = int(self._depth[leaf]) + 1
        self._depth[L] = self._depth[R] = d
        self.max_leaf_depth = max(self.max_leaf_depth, d)
        # experience
        go_r = self._ex[E, f] >= thr
        for child, part in ((L, E[~go_r]), (R, E[go_r])):
            r = self._er[part]
            self._ecount[child] = len(part)
            self._esum[child] = r.sum()
            self._esum2[child] = (r * r).sum()
            self._checked[child] = 0
        self._ek.release(leaf)
        self._ek.add(L, E[~go_r])
        self._ek.add(R, E[go_r])
        self._ecount[leaf] = 0
        # frontier samples follow the same rule
        S = self._fr.items(leaf).copy()
        self._fr.release(leaf)
        if len(S):
            go_r = self._fx[S, f] >= thr
            self._fr.add(L, S[~go_r])
            self._fr.add(R, S[go_r])

    # ========================================================= maintenance
    def _purge_stale(self) -> None:
        """Drop tree pages that are no longer in the crawl's frontier (O(tree frontier), only when
        a departure was not reported through ``FetchResult``)."""
        st = self.state
        assert st is not None, "called before reset"
        used = np.flatnonzero(self._slot_page >= 0)
        pages = self._slot_page[used]
        bad = ~((st.status[pages] == FRONTIER) & (st.fr_pos[pages] >= 0))
        if bad.any():
            self.remove(pages[bad])

    # ========================================================= diagnostics
    @property
    def n_nonempty_leaves(self) -> int:
        nn = self.n_nodes
        return int(np.count_nonzero((self._left[:nn] < 0) & (self._fr.count[:nn] > 0)))

    def leaves(self) -> np.ndarray:
        """(n_leaves,) int32 node ids of all leaves."""
        return np.flatnonzero(self._left[: self.n_nodes] < 0).astype(np.int32)

    def leaf_means(self, leaves: np.ndarray) -> np.ndarray:
        """Smoothed mean experience reward of ``leaves``: (Σr + m·r̄)/(n + m), r̄ the global mean."""
        g = self._rsum / self.n_experience if self.n_experience else 0.0
        m = self.prior_weight
        return (self._esum[leaves] + m * g) / (self._ecount[leaves] + m)

    def leaf_sizes(self, leaves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(frontier samples, experience samples)`` per leaf of ``leaves``."""
        return self._fr.count[leaves].copy(), self._ecount[leaves].copy()

    def leaf_of(self, pages: np.ndarray) -> np.ndarray:
        """Leaf node of each page (-1 when the page is not in the tree)."""
        slots = self._page_slot.get(np.asarray(pages, np.int64))
        out = np.full(len(slots), -1, np.int32)
        ok = slots >= 0
        out[ok] = self._fr.where[slots[ok]]
        return out

    def frontier_pages(self) -> np.ndarray:
        """All pages in the tree (order: slot order)."""
        return self._slot_page[self._slot_page >= 0].copy()

    def rules(self, node: int) -> list[tuple[int, str, float]]:
        """The path of ``(feature, "<" or ">=", threshold)`` tests from the root to ``node``."""
        parent = {}
        for p in np.flatnonzero(self._left[: self.n_nodes] >= 0).tolist():
            parent[int(self._left[p])] = (p, "<")
            parent[int(self._right[p])] = (p, ">=")
        out = []
        while node in parent:
            p, op = parent[node]
            out.append((int(self._feat[p]), op, float(self._thr[p])))
            node = p
        return out[::-1]

    def describe(self) -> dict[str, Any]:
        """Summary counters (JSON-serializable)."""
        return {"leaves": self.n_leaves, "nonempty_leaves": self.n_nonempty_leaves,
                "frontier": self.n_frontier, "experience": self.n_experience, "splits": self.n_splits,
                "max_depth": self.max_leaf_depth}

    def check_invariants(self) -> None:
        """Full O(frontier + experience) consistency check (for tests); raises AssertionError.

        Every frontier sample is in exactly one leaf and routes to it; every experience sample is in
        exactly one leaf and routes to it; counters match; with a crawl state, the tree holds exactly
        the crawl's frontier."""
        nn = self.n_nodes
        is_leaf = self._left[:nn] < 0
        assert int(is_leaf.sum()) == self.n_leaves, "leaf counter"
        assert not np.any(self._fr.count[:nn][~is_leaf]), "internal node holds frontier samples"
        assert not np.any(self._ecount[:nn][~is_leaf]), "internal node holds experience"
        used = np.flatnonzero(self._slot_page >= 0)
        assert len(used) == self.n_frontier == int(self._fr.count[:nn].sum()), "frontier counters"
        assert np.array_equal(self._page_slot.get(self._slot_page[used].astype(np.int64)), used), "page/slot index"
        where = self._fr.where[used]
        assert np.all(where >= 0) and np.all(is_leaf[where]), "frontier sample outside a leaf"
        assert np.array_equal(self._fr.buf[self._fr.start[where] + self._fr.pos[used]], used), "position index"
        assert np.array_equal(self.route(self._fx[used]), where), "frontier sample in the wrong leaf"
        ne = self.n_experience
        ew = self._ek.where[:ne]
        assert np.all(ew >= 0) and np.all(is_leaf[ew]), "experience outside a leaf"
        assert np.array_equal(self.route(self._ex[:ne]), ew), "experience in the wrong leaf"
        assert np.array_equal(np.bincount(ew, minlength=nn)[:nn], self._ecount[:nn]), "experience counters"
        if self.state is not None:
            st = self.state
            assert self.n_frontier == st.fr_size, f"tree holds {self.n_frontier} pages, frontier {st.fr_size}"
            assert np.array_equal(np.sort(self._slot_page[used]), np.sort(st.frontier)), "tree != frontier"
