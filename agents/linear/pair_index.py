"""Han's set B for the synchronous LFA crawler: frontier pages grouped by distinct feature-row pairs.

``q̂(s, a) = w_s · x_s + w_a · x_a``, so the exact argmax of ``w`` over the whole frontier is an argmax
over the *active pairs* ``(sid, aid)`` of distinct state-part / action-part rows:
``(S @ w_s)[sid] + (A @ w_a)[aid]`` — one O(n_s d_s + n_a d_a + P) pass per step, with P ≪ frontier.

Everything lives in flat numpy arrays and every per-page operation runs in a compiled numba kernel
(no Python object per link):

* distinct rows: ``S`` / ``A`` (float32) with open-addressing hash tables keyed by the rows' bits
  (two rows are the same row iff their float32 bit patterns are equal);
* pairs: ``pair_s`` / ``pair_a`` and a hash table keyed by ``(sid, aid)``;
* members of a pair: a block of a shared pool (``mem_start`` / ``mem_cap`` / ``mem_cnt``), appended at
  the end and swap-removed, so a pair's member order is exactly that of a Python list with
  ``append`` and "move the last into the hole" removal; a full block moves to the pool's end with
  twice the room;
* active pairs (pairs with members): ``act`` / ``act_s`` / ``act_a`` with swap-removal;
* pages: a *local* id per page, handed out when the index first sees the page (since the last
  :meth:`PairIndex.clear`), found through :mod:`gym_crawl.pagemap`'s open-addressing map; a page's pair and
  its place in the pair's block are columns of local ids, and the member blocks hold local ids. The index's
  memory follows the pages it was given (≈ 28–44 bytes each), not the web's size: nothing is allocated per
  page of the web.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from gym_crawl._arith import row_dots
from gym_crawl.pagemap import EMPTY, find, probe, rehash

__all__ = ["PairIndex", "split_columns"]

_EMPTY = -1
# counters (one int64 array, so kernels update them in place)
_NS, _NA, _NP, _POOL, _NACT, _NPAGES, _NLOC = range(7)


def split_columns(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """State-part and action-part columns of a feature set (action columns are named ``a.*``)."""
    a = np.array([i for i, n in enumerate(names) if n.startswith("a.")], dtype=np.int64)
    s = np.array([i for i, n in enumerate(names) if not n.startswith("a.")], dtype=np.int64)
    return s, a


@njit(cache=True, nogil=True)
def _row_hash(v):
    h = np.uint64(1469598103934665603)
    for j in range(len(v)):
        h ^= np.uint64(np.int64(v[j]) & 0xFFFFFFFF)
        h *= np.uint64(1099511628211)
    return h


@njit(cache=True, nogil=True)
def _pair_hash(sid, aid):
    h = np.uint64(sid) * np.uint64(0x9E3779B97F4A7C15)
    h ^= np.uint64(aid) + np.uint64(0x632BE59BD9B4E019) + (h << np.uint64(6)) + (h >> np.uint64(2))
    return h


@njit(cache=True, nogil=True)
def _rows_equal(M, r, v):
    for j in range(len(v)):  # noqa: SIM110  (numba compiles no generator expression inside all())
        if M[r, j] != v[j]:
            return False
    return True


@njit(cache=True, nogil=True)
def _row_id(M, tab, cnt, which, v):
    """Id of row ``v`` (int32 bits) in ``M``, inserted if new (room guaranteed by the caller)."""
    mask = np.uint64(len(tab) - 1)
    k = np.int64(_row_hash(v) & mask)
    while True:
        r = tab[k]
        if r == _EMPTY:
            n = cnt[which]
            for j in range(len(v)):
                M[n, j] = v[j]
            tab[k] = n
            cnt[which] = n + 1
            return n
        if _rows_equal(M, r, v):
            return r
        k = (k + 1) & np.int64(mask)


@njit(cache=True, nogil=True)
def _rehash_rows(M, n, size):
    tab = np.full(size, _EMPTY, np.int64)
    mask = np.uint64(size - 1)
    for r in range(n):
        k = np.int64(_row_hash(M[r]) & mask)
        while tab[k] != _EMPTY:
            k = (k + 1) & np.int64(mask)
        tab[k] = r
    return tab


@njit(cache=True, nogil=True)
def _rehash_pairs(pair_s, pair_a, n, size):
    tab = np.full(size, _EMPTY, np.int64)
    mask = np.uint64(size - 1)
    for pid in range(n):
        k = np.int64(_pair_hash(pair_s[pid], pair_a[pid]) & mask)
        while tab[k] != _EMPTY:
            k = (k + 1) & np.int64(mask)
        tab[k] = pid
    return tab


@njit(cache=True, nogil=True)
def _activate(pid, pair_s, pair_a, act, act_s, act_a, act_pos, cnt):
    k = cnt[_NACT]
    act[k] = pid
    act_s[k] = pair_s[pid]
    act_a[k] = pair_a[pid]
    act_pos[pid] = k
    cnt[_NACT] = k + 1


@njit(cache=True, nogil=True)
def _deactivate(pid, act, act_s, act_a, act_pos, cnt):
    k = act_pos[pid]
    last = cnt[_NACT] - 1
    if k != last:
        moved = act[last]
        act[k] = moved
        act_s[k] = act_s[last]
        act_a[k] = act_a[last]
        act_pos[moved] = k
    act_pos[pid] = -1
    cnt[_NACT] = last


@njit(cache=True, nogil=True)
def _remove_from(loc, pid, loc_pair, loc_slot, pool, mem_start, mem_cnt, act, act_s, act_a, act_pos, cnt):
    i = loc_slot[loc]
    n = mem_cnt[pid] - 1
    last = pool[mem_start[pid] + n]
    mem_cnt[pid] = n
    if last != loc:
        pool[mem_start[pid] + i] = last
        loc_slot[last] = i
    loc_pair[loc] = -1
    loc_slot[loc] = -1
    if n == 0:
        _deactivate(pid, act, act_s, act_a, act_pos, cnt)


@njit(cache=True, nogil=True)
def _remove(page, pkeys, pslots, loc_pair, loc_slot, pool, mem_start, mem_cnt, act, act_s, act_a, act_pos, cnt):
    loc = find(pkeys, pslots, page)
    if loc < 0:
        return False
    pid = loc_pair[loc]
    if pid < 0:
        return False
    _remove_from(loc, pid, loc_pair, loc_slot, pool, mem_start, mem_cnt, act, act_s, act_a, act_pos, cnt)
    cnt[_NPAGES] -= 1
    return True


@njit(cache=True, nogil=True)
def _assign(pages, Xs, Xa, S, A, s_tab, a_tab, p_tab, pair_s, pair_a, pkeys, pslots, page_of, loc_pair, loc_slot,
            pool, mem_start, mem_cap, mem_cnt, act, act_s, act_a, act_pos, cnt, start):
    """(Re)assign ``pages[start:]`` to the pairs of their rows (int32 bits of ``Xs`` / ``Xa``). A page seen for
    the first time gets the next local id (room in the page map and the local columns reserved by the caller).
    Returns -1 when done, or the index of the first page whose move needs more pool room (nothing of that
    page's membership changed yet; the caller grows the pool and calls again from there)."""
    pmask = np.uint64(len(p_tab) - 1)
    for i in range(start, len(pages)):
        h = probe(pkeys, pages[i])
        if pkeys[h] == EMPTY:
            p = cnt[_NLOC]
            pkeys[h] = pages[i]
            pslots[h] = p
            page_of[p] = pages[i]
            loc_pair[p] = -1
            loc_slot[p] = -1
            cnt[_NLOC] = p + 1
        else:
            p = np.int64(pslots[h])
        sid = _row_id(S, s_tab, cnt, _NS, Xs[i])
        aid = _row_id(A, a_tab, cnt, _NA, Xa[i])
        k = np.int64(_pair_hash(sid, aid) & pmask)
        while True:
            pid = p_tab[k]
            if pid == _EMPTY:
                pid = cnt[_NP]
                p_tab[k] = pid
                pair_s[pid] = sid
                pair_a[pid] = aid
                mem_start[pid] = 0
                mem_cap[pid] = 0
                mem_cnt[pid] = 0
                act_pos[pid] = -1
                cnt[_NP] = pid + 1
                break
            if pair_s[pid] == sid and pair_a[pid] == aid:
                break
            k = (k + 1) & np.int64(pmask)
        old = loc_pair[p]
        if old == pid:
            continue
        n = mem_cnt[pid]
        if n == mem_cap[pid]:   # the block is full: move it to the pool's end with twice the room
            new_cap = max(4, 2 * n)
            at = cnt[_POOL]
            if at + new_cap > len(pool):
                return i
            for j in range(n):
                pool[at + j] = pool[mem_start[pid] + j]
            mem_start[pid] = at
            mem_cap[pid] = new_cap
            cnt[_POOL] = at + new_cap
        if old >= 0:
            _remove_from(p, old, loc_pair, loc_slot, pool, mem_start, mem_cnt, act, act_s, act_a, act_pos, cnt)
        else:
            cnt[_NPAGES] += 1
        n = mem_cnt[pid]
        if n == 0:
            _activate(pid, pair_s, pair_a, act, act_s, act_a, act_pos, cnt)
        pool[mem_start[pid] + n] = p
        loc_slot[p] = n
        mem_cnt[pid] = n + 1
        loc_pair[p] = pid
    return -1


def _pow2(n: int) -> int:
    return 1 << max(6, int(n - 1).bit_length())


class PairIndex:
    """Frontier pages grouped by distinct (state-part, action-part) feature rows — Han's set B.

    Membership changes cost O(1) per moved page (swap-removal inside a pair's member block), all in
    compiled kernels; see the module docstring for the layout.

    Pages are keyed (module docstring): nothing is sized by ``n_pages``, and :attr:`nbytes` follows the pages
    given since the last :meth:`clear`.

    Args:
        n_pages: page ids are in ``[0, n_pages)`` (at most 2^31 − 1: the page map's keys are int32).
        names: the feature set's column names (``a.*`` columns form the action part).
    """

    def __init__(self, n_pages: int, names: list[str]):
        if not 0 <= int(n_pages) < 2 ** 31:
            raise ValueError(f"n_pages must be in [0, 2^31), got {n_pages!r}")
        self.id_bound = int(n_pages)
        self.s_cols, self.a_cols = split_columns(list(names))
        self.d = len(names)
        self._cnt = np.zeros(7, np.int64)
        # the page map (page -> local id) and the local columns: the page of each local id, its pair (-1: none)
        # and its place in the pair's member block
        self._pkeys = np.full(128, EMPTY, np.int32)
        self._pslots = np.zeros(128, np.int32)
        self._page_of = np.zeros(64, np.int32)
        self._loc_pair = np.full(64, -1, np.int32)
        self._loc_slot = np.full(64, -1, np.int32)
        self._drawn = (-1, -1)  # (page, local id) of the page best() drew last: row() finds it without a lookup
        self._S = np.zeros((64, len(self.s_cols)), np.float32)
        self._A = np.zeros((64, len(self.a_cols)), np.float32)
        self._s_tab = np.full(128, _EMPTY, np.int64)
        self._a_tab = np.full(128, _EMPTY, np.int64)
        self._p_tab = np.full(128, _EMPTY, np.int64)
        cap = 64
        self._pair_s, self._pair_a = np.zeros(cap, np.int64), np.zeros(cap, np.int64)
        self._mem_start, self._mem_cap, self._mem_cnt = (np.zeros(cap, np.int64) for _ in range(3))
        self._act, self._act_s, self._act_a = (np.zeros(cap, np.int64) for _ in range(3))
        self._act_pos = np.full(cap, -1, np.int64)
        self._pool = np.zeros(1024, np.int64)

    # ------------------------------------------------------------ sizes
    @property
    def n_s(self) -> int:
        """Distinct state-part rows seen since the last :meth:`clear`."""
        return int(self._cnt[_NS])

    @property
    def n_a(self) -> int:
        """Distinct action-part rows seen since the last :meth:`clear`."""
        return int(self._cnt[_NA])

    @property
    def n_active(self) -> int:
        """Pairs that have member pages."""
        return int(self._cnt[_NACT])

    @property
    def n_pages(self) -> int:
        """Pages indexed now (in a pair)."""
        return int(self._cnt[_NPAGES])

    @property
    def n_seen(self) -> int:
        """Pages given a local id since the last :meth:`clear` (indexed now or before): the rows of the page map."""
        return int(self._cnt[_NLOC])

    @property
    def page_rows(self) -> int:
        """Allocated rows of the local page columns (their capacity, doubling: < 2 · max(64, :attr:`n_seen`))."""
        return len(self._page_of)

    @property
    def nbytes(self) -> int:
        """Bytes of every array of the index at its capacity (page map, rows, pairs, pool)."""
        return int(sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray)))

    def _local(self, page: int) -> int:
        """The local id of ``page`` (-1: never given)."""
        if page == self._drawn[0]:
            return self._drawn[1]
        return int(find(self._pkeys, self._pslots, int(page)))

    def pair_of(self, page: int) -> int:
        """The pair of ``page`` (-1: not indexed)."""
        loc = self._local(page)
        return int(self._loc_pair[loc]) if loc >= 0 else -1

    def __contains__(self, page: int) -> bool:
        return self.pair_of(page) >= 0

    def __len__(self) -> int:
        return self.n_pages

    # ------------------------------------------------------------ building
    def clear(self) -> None:
        """Forget all pages and rows (O(pages seen); the arrays keep their capacity)."""
        c = self._cnt
        c[:] = 0
        self._pkeys.fill(EMPTY)
        self._drawn = (-1, -1)
        self._s_tab.fill(_EMPTY)
        self._a_tab.fill(_EMPTY)
        self._p_tab.fill(_EMPTY)

    def _reserve(self, k: int) -> None:
        """Room for ``k`` more rows of each part and ``k`` more pairs (tables at most half full)."""
        c = self._cnt
        for M, tab, which in (("_S", "_s_tab", _NS), ("_A", "_a_tab", _NA)):
            need = int(c[which]) + k
            arr = getattr(self, M)
            if need > len(arr):
                grown = np.zeros((max(need, 2 * len(arr)), arr.shape[1]), np.float32)
                grown[: c[which]] = arr[: c[which]]
                setattr(self, M, grown)
            if 2 * need > len(getattr(self, tab)):
                setattr(self, tab, _rehash_rows(getattr(self, M).view(np.int32), int(c[which]), _pow2(2 * need)))
        need = int(c[_NP]) + k
        if need > len(self._pair_s):
            size = max(need, 2 * len(self._pair_s))
            for nm in ("_pair_s", "_pair_a", "_mem_start", "_mem_cap", "_mem_cnt", "_act", "_act_s", "_act_a",
                       "_act_pos"):
                arr = getattr(self, nm)
                grown = np.full(size, -1 if nm == "_act_pos" else 0, np.int64)
                grown[: len(arr)] = arr
                setattr(self, nm, grown)
        if 2 * need > len(self._p_tab):
            self._p_tab = _rehash_pairs(self._pair_s, self._pair_a, int(c[_NP]), _pow2(2 * need))
        need = int(c[_NLOC]) + k
        if need > len(self._page_of):
            size = max(need, 2 * len(self._page_of))
            for nm in ("_page_of", "_loc_pair", "_loc_slot"):
                arr = getattr(self, nm)
                grown = np.full(size, 0 if nm == "_page_of" else -1, np.int32)
                grown[: len(arr)] = arr
                setattr(self, nm, grown)
        if 2 * need > len(self._pkeys):
            size = _pow2(2 * need)
            self._pkeys, self._pslots = np.full(size, EMPTY, np.int32), np.zeros(size, np.int32)
            rehash(self._page_of, int(c[_NLOC]), self._pkeys, self._pslots)

    def assign(self, pages: np.ndarray, X: np.ndarray) -> None:
        """(Re)assign frontier ``pages`` to the pair of their current rows ``X`` (len(pages), d)."""
        pages = np.asarray(pages, dtype=np.int64)
        if len(pages) == 0:
            return
        Xs = np.ascontiguousarray(X[:, self.s_cols], dtype=np.float32).view(np.int32)
        Xa = np.ascontiguousarray(X[:, self.a_cols], dtype=np.float32).view(np.int32)
        self._reserve(len(pages))
        start = 0
        while True:
            start = _assign(pages, Xs, Xa, self._S.view(np.int32), self._A.view(np.int32), self._s_tab, self._a_tab,
                            self._p_tab, self._pair_s, self._pair_a, self._pkeys, self._pslots, self._page_of,
                            self._loc_pair, self._loc_slot, self._pool,
                            self._mem_start, self._mem_cap, self._mem_cnt, self._act, self._act_s, self._act_a,
                            self._act_pos, self._cnt, start)
            if start < 0:
                return
            self._pool = np.concatenate([self._pool, np.zeros(len(self._pool), np.int64)])

    def remove(self, page: int) -> bool:
        """Drop ``page`` (fetched or removed from the frontier); returns whether it was indexed."""
        return bool(_remove(int(page), self._pkeys, self._pslots, self._loc_pair, self._loc_slot, self._pool,
                            self._mem_start, self._mem_cnt,
                            self._act, self._act_s, self._act_a, self._act_pos, self._cnt))

    # ------------------------------------------------------------- scoring
    def pair_scores(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(active pair ids (P,), q̂ of each (P,))`` for weights ``w`` (d,).

        Scored in float32 (rows are float32, as ``env.argmax_frontier`` scores them): each part's
        float64 sum in column order (:func:`gym_crawl._arith.row_dots`, the same bits on any CPU) rounded to
        float32, then the two parts added in float32; that can differ from a full-row product in the last
        bit, which only matters between exactly tied pairs, and those are tie-broken at random anyway."""
        w = np.asarray(w, dtype=np.float32)
        qs = row_dots(self._S[: self.n_s], w[self.s_cols]).astype(np.float32)
        qa = row_dots(self._A[: self.n_a], w[self.a_cols]).astype(np.float32) if len(self.a_cols) \
            else np.zeros(max(self.n_a, 1), np.float32)
        n = self.n_active
        return self._act[:n], qs[self._act_s[:n]] + qa[self._act_a[:n]]

    def best(self, w: np.ndarray, rng: np.random.Generator) -> tuple[int, float]:
        """``(page, q̂)``: a page of maximal q̂ — a uniformly random one of the best pairs, then a
        uniformly random member of that pair."""
        if self.n_active == 0:
            raise ValueError("the pair index is empty")
        pids, sc = self.pair_scores(w)
        m = sc.max()
        ties = np.flatnonzero(sc == m)
        k = int(ties[0]) if len(ties) == 1 else int(ties[rng.integers(len(ties))])
        pid = int(pids[k])
        n, at = int(self._mem_cnt[pid]), int(self._mem_start[pid])
        loc = int(self._pool[at] if n == 1 else self._pool[at + int(rng.integers(n))])
        page = int(self._page_of[loc])
        self._drawn = (page, loc)
        return page, float(m)

    def members(self, pid: int) -> list[int]:
        """Pages of pair ``pid`` (a copy, in member order)."""
        at = int(self._mem_start[pid])
        return self._page_of[self._pool[at: at + int(self._mem_cnt[pid])]].tolist()

    def row(self, page: int) -> np.ndarray:
        """(d,) float64 feature row of an indexed ``page``, rebuilt from its pair's parts."""
        pid = self.pair_of(page)
        if pid < 0:
            raise KeyError(f"page {page} is not indexed")
        x = np.zeros(self.d, np.float64)
        x[self.s_cols] = self._S[self._pair_s[pid]]
        if len(self.a_cols):
            x[self.a_cols] = self._A[self._pair_a[pid]]
        return x
