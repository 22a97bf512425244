"""A scale-free small-world *news site* link graph, calibrated to Palotai, Farkas & Lőrincz's web.

Palotai et al. ("Selection in scale-free small world", §4.1) crawled CNN for 18 days and measured on
the link structure of the gathered pages:

==========================  ==========  =============================================================
statistic                   measured    how they measured it (their text)
==========================  ==========  =============================================================
out-degree power law γ_out  1.3         ``P(k) = k^-γ``, a line on the log-log plot of the relative
                                        frequency of out-degrees of "all URLs found" (Fig. 1)
in-degree power law γ_in    2.57        the same for in-degrees
clustering coefficient      0.02        Watts & Strogatz's coefficient (their ref. [31])
"diameter"                  7.2893      not an integer, so a *mean* shortest-path length, not a maximum
rewired clustering          0.003       after "two different random permutations to the origin and to
rewired "diameter"          8.2163      the endpoint of the links" (every in- and out-degree kept)
==========================  ==========  =============================================================

:func:`generate_news_site` builds such a graph; :func:`rewire_degree_preserving` is their control;
:func:`graph_statistics` measures all of the above in one call (and says how).

The model
---------
*Degrees.* Every page draws an in-degree from a discrete power law ``P(k) ∝ k^-γ_in`` on
``[in_min, in_max]``. Out-degrees are drawn from ``P(k) ∝ k^-γ_out`` on ``[1, out_max]`` for pages
until they carry as many links as the in-degrees ask for; the remaining pages are *leaves*
(out-degree 0) — an exact match of the two sums. This is what a crawl of a news site looks like: the
URLs found are mostly articles linked from pages with link lists, and γ_out < 2 puts the link mass in
the long lists. (An out-degree law with exponent 1.3 and an in-degree law with 2.57 cannot both hold
from k = 1 on the same pages: their means differ by an order of magnitude.) In-degrees are capped at
half the number of linking pages (a page cannot be linked more often than there are pages with
links). A Gaussian copula with correlation ``degree_correlation`` pairs each page's in- and
out-degree, so pages with long link lists (home, sections) also tend to be much linked.

*Sections.* Pages belong to ``n_sections`` sections (topics) with lognormal sizes, in a random
reading order. The first ``related_links`` links of each page go to pages *close in its section's
reading order* (the nearest free in-link slots, ``close_window`` on each side: "related stories");
each further link stays inside the section with probability ``p_local`` and goes anywhere
otherwise. Targets are drawn by *stub matching* (a configuration model per block), so every page
keeps exactly the in- and out-degree it drew; self-links and duplicate links are then repaired by
exchanging targets with random other links (degrees kept; counted in :attr:`NewsSite.repaired_links`).

Calibration
-----------
The defaults (``out_max=100, in_max=200, degree_correlation=0.4, p_local=0.7, related_links=2``)
were chosen by a grid search at 20,000 pages against Palotai's numbers (measured by
:func:`graph_statistics`; 3 seeds, mean ± sd; ``python -m gym_crawl.webgen.news_site --n-pages N``
prints them):

=========  =========  ==============  =============  ===============  ===============
pages      γ_out      γ_in            clustering     mean path        rewired C / L
=========  =========  ==============  =============  ===============  ===============
Palotai    1.3        2.57            0.02           7.29             0.003 / 8.22
10,000     1.31       2.56            0.024          7.05 ± 0.25      0.0058 / 7.06
20,000     1.30       2.56            0.022          7.58 ± 0.15      0.0027 / 7.25
30,000     1.30       2.57            0.021          8.02 ± 0.10      0.0019 / 7.93
50,000     1.30       2.57            0.020          8.45 ± 0.25      0.0011 / 8.13
100,000    1.30       2.57            0.021          8.73 ± 0.07      0.0005 / 8.44
=========  =========  ==============  =============  ===============  ===============

(Rewired: ``rewire_degree_preserving(g, seed=seed + 1000)``; mean paths from 500 BFS sources — the
exact all-sources value at 20,000 pages, seed 0, is 7.52, rewired 7.43. The least-squares slope of
the raw in-degree histogram is ≈ 2.0, of the log-binned one ≈ 2.6: the raw histogram's sparse tail
flattens such fits, so Palotai's 2.57 was probably read off a binned or visually fitted line.)

The mean path grows like log N and a random graph's clustering falls like 1/N, so the match is
closest at 20,000 pages. The in-degree cap matters most: with uncapped in-degrees (up to N - 1) the
few linking pages are so densely interlinked that even the rewired graph has clustering ≈ 0.02.
Palotai's rewired graph had a *longer* mean path (8.22 vs 7.29); ours has about the same (their
statement, "the diameter is almost the same", holds in both).

All randomness comes from ``np.random.default_rng(seed)``; the same arguments give identical arrays.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

__all__ = [
    "PALOTAI_TARGETS",
    "NewsSite",
    "check_float",
    "check_int",
    "fit_power_law",
    "generate_news_site",
    "graph_statistics",
    "loglog_slope",
    "rewire_degree_preserving",
]

PALOTAI_TARGETS = {"gamma_out": 1.3, "gamma_in": 2.57, "clustering": 0.02, "mean_path": 7.2893,
                   "rewired_clustering": 0.003, "rewired_mean_path": 8.2163}
"""Palotai et al.'s measured statistics of their CNN crawl (§4.1) and of its rewired control."""


@dataclass(frozen=True)
class NewsSite:
    """A generated news-site link graph (CSR, ``indptr`` int64, ``indices`` int32 sorted per row).

    ``section[p]`` is the section (topic) of page ``p``; ``home`` is the page with the most
    out-links, ties broken by in-links (the front page, a natural seed); ``repaired_links`` counts the target exchanges
    that removed self-links and duplicates after stub matching (degrees are kept); ``dropped_links`` the
    links that could not be repaired and were dropped (0 except on tiny webs).
    """

    indptr: np.ndarray
    indices: np.ndarray
    section: np.ndarray
    n_sections: int
    home: int
    repaired_links: int = 0
    dropped_links: int = 0
    params: dict = field(default_factory=dict)

    @property
    def n_pages(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def n_links(self) -> int:
        return int(self.indices.shape[0])

    def out_degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    def in_degree(self) -> np.ndarray:
        return np.bincount(self.indices, minlength=self.n_pages).astype(np.int64)


# ---------------------------------------------------------------------------------------------------
# argument checks


def check_int(name: str, value, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in ``[lo, hi]`` (``hi=None``: no upper bound) — the generators' argument check.

    :raises TypeError: naming ``name`` when ``value`` is not an int (a bool is not one).
    :raises ValueError: naming ``name``, the range and the value when it is outside the range.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{name} must be {rng}, got {v}")
    return v


def check_float(name: str, value, lo: float, hi: float, *, lo_open: bool = False) -> float:
    """``value`` as a finite float in ``[lo, hi]`` (``(lo, hi]`` when ``lo_open``) — the generators' argument
    check.

    :raises TypeError: naming ``name`` when ``value`` is not a number.
    :raises ValueError: naming ``name``, the range and the value when it is outside the range or not finite.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < lo or v > hi or (lo_open and v == lo):
        left = "(" if lo_open else "["
        raise ValueError(f"{name} must be in {left}{lo}, {hi}], got {value!r}")
    return v


def _graph_arrays(graph) -> tuple[np.ndarray, np.ndarray]:
    """(indptr int64, indices int32) of a NewsSite, a ChangingWeb-like object, or an (indptr, indices) pair."""
    if isinstance(graph, tuple) and len(graph) == 2:
        indptr, indices = graph
    elif hasattr(graph, "indptr") and hasattr(graph, "indices"):
        indptr, indices = graph.indptr, graph.indices
    else:
        raise TypeError("graph must be a NewsSite, an object with CSR 'indptr'/'indices' arrays, or an "
                        f"(indptr, indices) tuple, got {type(graph).__name__}")
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    if indptr.ndim != 1 or indptr.shape[0] < 1 or indices.ndim != 1:
        raise ValueError("graph: indptr and indices must be 1-D arrays (indptr of length n_pages + 1)")
    if int(indptr[0]) != 0 or int(indptr[-1]) != indices.shape[0] or np.any(np.diff(indptr) < 0):
        raise ValueError("graph: indptr must start at 0, be non-decreasing and end at len(indices)")
    n = indptr.shape[0] - 1
    if indices.shape[0] and (int(indices.min()) < 0 or int(indices.max()) >= n):
        raise ValueError(f"graph: indices must lie in [0, {n})")
    return indptr.astype(np.int64, copy=False), indices.astype(np.int32, copy=False)


# ---------------------------------------------------------------------------------------------------
# degree sequences


def _power_law_pmf(gamma: float, kmin: int, kmax: int) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(kmin, kmax + 1, dtype=np.float64)
    w = k ** (-gamma)
    return k, w / w.sum()


def _sample_power_law(rng: np.random.Generator, gamma: float, kmin: int, kmax: int, size: int) -> np.ndarray:
    k, p = _power_law_pmf(gamma, kmin, kmax)
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    return k[np.searchsorted(cdf, rng.random(size), side="right").clip(0, k.size - 1)].astype(np.int64)


def _copula_ranks(rng: np.random.Generator, n: int, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of two standard normals with correlation ``rho`` (a Gaussian copula)."""
    z1 = rng.standard_normal(n)
    z2 = rho * z1 + math.sqrt(max(0.0, 1.0 - rho * rho)) * rng.standard_normal(n)
    r1 = np.empty(n, np.int64)
    r2 = np.empty(n, np.int64)
    r1[np.argsort(z1, kind="stable")] = np.arange(n)
    r2[np.argsort(z2, kind="stable")] = np.arange(n)
    return r1, r2


# ---------------------------------------------------------------------------------------------------
# compiled helpers


@njit(cache=True, nogil=True)
def _csr_from_edges(n, src, dst):
    """CSR (indptr int64, indices int32) of the edges with self-links and duplicates removed; rows sorted."""
    m = src.shape[0]
    cnt = np.zeros(n + 1, np.int64)
    for i in range(m):
        cnt[src[i] + 1] += 1
    for i in range(n):
        cnt[i + 1] += cnt[i]
    pos = cnt[:-1].copy()
    tmp = np.empty(m, np.int32)
    for i in range(m):
        tmp[pos[src[i]]] = dst[i]
        pos[src[i]] += 1
    indptr = np.zeros(n + 1, np.int64)
    out = np.empty(m, np.int32)
    k = 0
    for v in range(n):
        row = np.sort(tmp[cnt[v]:cnt[v + 1]])
        last = -1
        for j in range(row.shape[0]):
            u = row[j]
            if u != v and u != last:
                out[k] = u
                k += 1
            last = u
        indptr[v + 1] = k
    return indptr, out[:k].copy()


@njit(cache=True, nogil=True)
def _find(parent, i):
    r = i
    while parent[r] != r:
        r = parent[r]
    while parent[i] != r:
        nx_ = parent[i]
        parent[i] = r
        i = nx_
    return r


@njit(cache=True, nogil=True)
def _match_close(src_stubs, dst_stubs, order_pos, window, rnd):
    """Pair each out-stub with an in-stub whose page is close in reading order (``order_pos``).

    The in-stubs are sorted by their page's position; each out-stub (in the given, random order)
    takes a random one of the ``window`` nearest free in-stubs on each side of its own position.
    Every in-stub is used exactly once (an exact matching, so in-degrees are kept). Free stubs are
    found with two union-find "next free" structures (right and left), so the whole pass is
    O(m α(m) · window)."""
    m = src_stubs.shape[0]
    dpos = np.empty(m, np.float64)
    for i in range(m):
        dpos[i] = order_pos[dst_stubs[i]]
    o = np.argsort(dpos, kind="mergesort")
    sd = dst_stubs[o]
    sp = dpos[o]
    right = np.arange(m + 1)  # right[i]: i if free else a pointer towards the next free >= i (m = none)
    left = np.arange(m + 1)   # left[i + 1]: i + 1 if stub i free else towards the next free <= i (0 = none)
    out = np.empty(m, np.int64)
    cand = np.empty(2 * window, np.int64)
    for i in range(m):
        p = order_pos[src_stubs[i]]
        lo, hi = 0, m
        while lo < hi:
            mid = (lo + hi) // 2
            if sp[mid] < p:
                lo = mid + 1
            else:
                hi = mid
        c = 0
        r = _find(right, lo)
        while r < m and c < window:
            cand[c] = r
            c += 1
            r = _find(right, r + 1)
        c2 = 0
        q = _find(left, lo)  # free stubs with index < lo are left[.] - 1
        while q > 0 and c2 < window:
            cand[c] = q - 1
            c += 1
            c2 += 1
            q = _find(left, q - 1)
        if c == 0:
            out[i] = -1
            continue
        pick = cand[min(c - 1, int(rnd[i] * c))]
        out[i] = sd[pick]
        right[pick] = pick + 1
        left[pick + 1] = pick
    return out


@njit(cache=True, nogil=True)
def _hash_slot(table, key):
    mask = table.shape[0] - 1
    h = (key * 0x9E3779B97F4A7C15) & 0x7FFFFFFFFFFFFFFF
    i = (h >> 17) & mask
    tomb = -1
    while True:
        k = table[i]
        if k == key:
            return i, True
        if k == -1:
            return (tomb if tomb >= 0 else i), False
        if k == -2 and tomb < 0:
            tomb = i
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def _hash_has(table, key):
    return _hash_slot(table, key)[1]


@njit(cache=True, nogil=True)
def _hash_add(table, key):
    i, found = _hash_slot(table, key)
    if not found:
        table[i] = key


@njit(cache=True, nogil=True)
def _hash_del(table, key):
    i, found = _hash_slot(table, key)
    if found:
        table[i] = -2


@njit(cache=True, nogil=True)
def _new_table(m):
    cap = 1
    while cap < 4 * m + 16:
        cap *= 2
    return np.full(cap, -1, np.int64)


@njit(cache=True, nogil=True)
def _repair(n, src, dst, table):
    """Remove self-links and duplicate links from the edge list in place, keeping every degree: each
    bad link exchanges its target with a random good link, (a→b), (c→d) → (a→d), (c→b), when both
    results are new and not self-links. ``table`` (empty) ends holding every link. Returns the number
    of exchanges, or ``-1 - exchanges`` if some links could not be repaired (a degree sequence too
    dense to be simple; the unrepaired links are still in the arrays)."""
    m = src.shape[0]
    bad = np.empty(m, np.int64)
    good = np.ones(m, np.bool_)
    nb = 0
    for i in range(m):
        key = src[i] * n + dst[i]
        if src[i] == dst[i] or _hash_has(table, key):
            bad[nb] = i
            good[i] = False
            nb += 1
        else:
            _hash_add(table, key)
    if nb == 0:
        return 0
    if nb == m:
        return -1
    attempts = 0
    limit = 1000 * (nb + 1) + 100 * m
    k = 0
    repairs = 0
    while k < nb:
        attempts += 1
        if attempts > limit:
            return -1 - repairs
        i = bad[k]
        j = np.random.randint(0, m)
        if j == i:
            continue
        if not good[j]:  # j must be a placed (good) link
            continue
        kj = src[j] * n + dst[j]
        a, b, c, d = src[i], dst[i], src[j], dst[j]
        if a == d or c == b:
            continue
        k1 = a * n + d
        k2 = c * n + b
        if k1 == k2 or _hash_has(table, k1) or _hash_has(table, k2):
            continue
        _hash_del(table, kj)
        _hash_add(table, k1)
        _hash_add(table, k2)
        dst[i] = d
        dst[j] = b
        good[i] = True
        repairs += 1
        k += 1
    return repairs


@njit(cache=True, nogil=True)
def _repair_kernel(n, src, dst, seed):
    np.random.seed(seed)
    return _repair(n, src, dst, _new_table(src.shape[0]))


@njit(cache=True, nogil=True)
def _rewire_kernel(n, src, dst, n_swaps, permute, seed):
    """Degree-preserving rewiring in place on the edge arrays ``src``/``dst`` (no self-links, no duplicates).

    ``permute``: first pair every out-stub with a uniformly random in-stub (Palotai's random
    permutation of the link endpoints), then :func:`_repair` self-links and duplicates. Then
    ``n_swaps`` Maslov–Sneppen attempts: links (a→b), (c→d) become (a→d), (c→b) unless that makes
    a self-link or a duplicate. Returns (successful swaps, repair exchanges); -1 swaps if the repair
    failed."""
    np.random.seed(seed)
    m = src.shape[0]
    table = _new_table(m)
    repairs = 0
    if permute and m > 1:
        perm = np.random.permutation(m)
        dst[:] = dst[perm]
        repairs = _repair(n, src, dst, table)
        if repairs < 0:
            return -1, 0
    else:
        for i in range(m):
            _hash_add(table, src[i] * n + dst[i])
    done = 0
    rebuild_every = m + 1
    for t in range(n_swaps):
        if m < 2:
            break
        if t > 0 and t % rebuild_every == 0:
            table[:] = -1  # drop the tombstones
            for e in range(m):
                _hash_add(table, src[e] * n + dst[e])
        i = np.random.randint(0, m)
        j = np.random.randint(0, m)
        if i == j:
            continue
        a, b, c, d = src[i], dst[i], src[j], dst[j]
        if a == d or c == b or b == d or a == c:  # noqa: SIM109  (numba kernel: scalar tests, no tuple)
            continue
        k1 = a * n + d
        k2 = c * n + b
        if _hash_has(table, k1) or _hash_has(table, k2):
            continue
        _hash_del(table, a * n + b)
        _hash_del(table, c * n + d)
        _hash_add(table, k1)
        _hash_add(table, k2)
        dst[i] = d
        dst[j] = b
        done += 1
    return done, repairs


# ---------------------------------------------------------------------------------------------------
# the generator


def generate_news_site(n_pages: int = 20_000, *, gamma_out: float = 1.3, gamma_in: float = 2.57,
                       out_max: int = 100, in_min: int = 1, in_max: int = 200,
                       n_sections: int | None = None, p_local: float = 0.7, related_links: int = 2,
                       close_window: int = 3, degree_correlation: float = 0.4, seed: int = 0) -> NewsSite:
    """Generate a news-site link graph (see the module docstring for the model).

    ``out_max`` is clipped to ``max(4, n_pages // 8)`` and ``in_max`` to ``n_pages - 1`` (so small webs can be
    wired without duplicate links; below ~100 pages a few may still be dropped, counted in
    ``dropped_links``); ``n_sections`` defaults to
    ``max(4, n_pages // 400)``. Deterministic under ``seed``.
    """
    n = check_int("n_pages", n_pages, 50, 50_000_000)
    gamma_out = check_float("gamma_out", gamma_out, 0.0, 10.0, lo_open=True)
    gamma_in = check_float("gamma_in", gamma_in, 0.0, 10.0, lo_open=True)
    out_max = min(check_int("out_max", out_max, 1), n - 1, max(4, n // 8))
    in_max = min(check_int("in_max", in_max, 1), n - 1)
    in_min = check_int("in_min", in_min, 1, in_max)
    n_sections = check_int("n_sections", max(4, n // 400) if n_sections is None else n_sections, 1, n)
    p_local = check_float("p_local", p_local, 0.0, 1.0)
    related_links = check_int("related_links", related_links, 0)
    close_window = check_int("close_window", close_window, 1, 1_000_000)
    rho = check_float("degree_correlation", degree_correlation, -1.0, 1.0)
    seed = check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)

    # degrees: in-degrees for every page, out-degrees drawn until the link sums match
    din = _sample_power_law(rng, gamma_in, in_min, in_max, n)
    mean_out = float((_power_law_pmf(gamma_out, 1, out_max)[0] * _power_law_pmf(gamma_out, 1, out_max)[1]).sum())
    draw = _sample_power_law(rng, gamma_out, 1, out_max, int(din.sum() / mean_out * 1.5) + 64)
    cs = np.cumsum(draw)
    # a page cannot have more in-links than there are pages with out-links: cap the in-degrees at half
    # the number of linking pages (so the graph can be wired without duplicates) and re-match the sums
    for _ in range(50):
        total = int(din.sum())
        k = int(np.searchsorted(cs, total, side="left"))
        if k >= min(n, cs.size):  # more link mass than pages can carry at this out-degree law
            raise ValueError(f"in_min={in_min} asks for {total} links, more than {n} pages with out-degrees of "
                             f"exponent {gamma_out} up to out_max={out_max} can carry; lower in_min or raise out_max")
        cap = max(in_min, (k + 1) // 2)
        if din.max() <= cap:
            break
        din = np.minimum(din, cap)
    dout_vals = draw[:k + 1].copy()
    dout_vals[-1] -= int(cs[k] - total)  # exact sum
    dout_vals = dout_vals[dout_vals > 0]
    dout_sorted = np.zeros(n, np.int64)
    dout_sorted[n - dout_vals.size:] = np.sort(dout_vals)
    din_sorted = np.sort(din)
    r_out, r_in = _copula_ranks(rng, n, rho)
    dout = dout_sorted[r_out]
    din = din_sorted[r_in]

    # sections: lognormal sizes, pages shuffled into them; a random reading order inside each
    sizes = rng.lognormal(0.0, 0.8, n_sections)
    sizes = np.maximum(1, np.floor(sizes / sizes.sum() * n)).astype(np.int64)
    sizes[np.argmax(sizes)] += n - int(sizes.sum())
    if sizes.min() < 1:
        sizes = np.full(n_sections, n // n_sections, np.int64)
        sizes[: n % n_sections] += 1
    section = np.repeat(np.arange(n_sections, dtype=np.int32), np.asarray(sizes, np.int64))[rng.permutation(n)]
    order_pos = np.empty(n, np.float64)
    order_pos[rng.permutation(n)] = np.arange(n, dtype=np.float64)  # reading order (sections interleave)
    # positions within a section are compacted so that "close" means close inside the section
    sec_order = np.lexsort((order_pos, section))
    order_pos[sec_order] = np.arange(n, dtype=np.float64)

    # stubs, and their kinds: close (in-section, near in reading order), local (in-section), global
    src_stubs = np.repeat(np.arange(n, dtype=np.int64), dout)
    dst_stubs = np.repeat(np.arange(n, dtype=np.int64), din)
    src_stubs = src_stubs[rng.permutation(src_stubs.size)]
    dst_stubs = dst_stubs[rng.permutation(dst_stubs.size)]
    # the first `related_links` stubs of each page (in the random stub order) are its related stories
    so = np.argsort(src_stubs, kind="stable")
    rank = np.empty(src_stubs.size, np.int64)
    rank[so] = np.arange(src_stubs.size) - np.repeat(np.cumsum(dout) - dout, dout)
    u = rng.random(src_stubs.size)
    kind_src = np.where(rank < related_links, 0, np.where(u < p_local, 1, 2))
    src_parts: list[np.ndarray] = []
    dst_parts: list[np.ndarray] = []
    left_src: list[np.ndarray] = [src_stubs[kind_src == 2]]
    # in-stubs per section: hand out to close and local stubs of that section, the rest go global
    dst_sec = section[dst_stubs]
    d_order = np.argsort(dst_sec, kind="stable")
    d_bounds = np.searchsorted(dst_sec[d_order], np.arange(n_sections + 1))
    loc = src_stubs[kind_src < 2]
    loc_kind = kind_src[kind_src < 2]
    s_sec = section[loc]
    s_order = np.argsort(s_sec, kind="stable")
    s_bounds = np.searchsorted(s_sec[s_order], np.arange(n_sections + 1))
    left_dst: list[np.ndarray] = []
    rnd = rng.random(src_stubs.size)
    for s in range(n_sections):
        ins = dst_stubs[d_order[d_bounds[s]:d_bounds[s + 1]]]
        outs_idx = s_order[s_bounds[s]:s_bounds[s + 1]]
        outs = loc[outs_idx]
        okind = loc_kind[outs_idx]
        m = min(outs.size, ins.size)
        if m < outs.size:  # more local out-stubs than the section's in-stubs: the excess goes global
            left_src.append(outs[m:])
            outs, okind = outs[:m], okind[:m]
        close = outs[okind == 0]
        far = outs[okind == 1]
        n_close = close.size
        if n_close:
            got = _match_close(close, ins[:n_close].copy(), order_pos, close_window, rnd[:n_close])
            src_parts.append(close)
            dst_parts.append(got)
        src_parts.append(far)
        dst_parts.append(ins[n_close:m])
        left_dst.append(ins[m:])
    gsrc = np.concatenate(left_src)
    gdst = np.concatenate(left_dst) if left_dst else np.empty(0, np.int64)
    gdst = gdst[rng.permutation(gdst.size)]
    src_parts.append(gsrc)
    dst_parts.append(gdst)
    src = np.concatenate(src_parts).astype(np.int64)
    dst = np.concatenate(dst_parts).astype(np.int64)
    repaired = int(_repair_kernel(n, src, dst, int(rng.integers(0, 2**31 - 1))))
    if repaired < 0:  # only tiny webs: the links left unrepaired are dropped (counted in dropped_links)
        repaired = -1 - repaired
    indptr, indices = _csr_from_edges(n, src, dst)
    dropped = int(src.size - indices.size)
    # the front page: most out-links, ties broken by most in-links
    home = int(np.lexsort((np.bincount(indices, minlength=n), np.diff(indptr)))[-1])
    params = {"n_pages": n, "gamma_out": gamma_out, "gamma_in": gamma_in, "out_max": out_max, "in_min": in_min,
              "in_max": in_max, "n_sections": n_sections, "p_local": p_local, "related_links": related_links,
              "close_window": close_window, "degree_correlation": rho, "seed": seed}
    return NewsSite(indptr=indptr, indices=indices, section=section.astype(np.int32), n_sections=n_sections,
                    home=home, repaired_links=repaired, dropped_links=dropped, params=params)


# ---------------------------------------------------------------------------------------------------
# rewiring


def rewire_degree_preserving(graph, n_swaps: int | None = None, seed: int = 0):
    """Degree-preserving random rewiring: every page keeps its in- AND out-degree.

    ``n_swaps=None`` (default) is Palotai et al.'s control: a uniformly random permutation of the link
    endpoints (every out-stub paired with a random in-stub — the configuration model of the same
    degree sequences), after which self-links and duplicate links are repaired by exchanging targets
    with random other links, followed by one Maslov–Sneppen swap attempt per link. ``n_swaps=K`` skips
    the permutation and makes ``K`` Maslov–Sneppen swap attempts — (a→b), (c→d) become (a→d), (c→b)
    unless that makes a self-link or a duplicate — a partial rewiring that interpolates between the
    graph and its random control. The graph must be simple (no self-links, no duplicate links). If
    the permutation of a tiny, dense graph cannot be repaired, ``10 × links`` swap attempts are made
    instead.

    Returns the same kind as given: a :class:`NewsSite` (with the same sections; ``home`` kept), or
    an ``(indptr, indices)`` tuple for anything else.
    """
    indptr, indices = _graph_arrays(graph)
    seed = check_int("seed", seed, 0, 2**32 - 1)
    n = indptr.shape[0] - 1
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    dst = indices.astype(np.int64)
    if np.any(src == dst):
        raise ValueError("graph has self-links; rewire_degree_preserving needs a simple graph")
    if src.size and np.unique(src * n + dst).size != src.size:
        raise ValueError("graph has duplicate links; rewire_degree_preserving needs a simple graph")
    permute = n_swaps is None
    swaps = src.size if n_swaps is None else check_int("n_swaps", n_swaps, 0)
    done, _repairs = _rewire_kernel(n, src, dst, swaps, permute, seed)
    if done < 0:  # a tiny, dense graph whose permutation cannot be repaired: swaps only (always simple)
        dst = indices.astype(np.int64)
        done, _repairs = _rewire_kernel(n, src, dst, 10 * src.size, False, seed)
    new_indptr, new_indices = _csr_from_edges(n, src, dst)
    if new_indices.size != indices.size:  # cannot happen: the kernel keeps the graph simple
        raise RuntimeError("rewire_degree_preserving lost links")
    if isinstance(graph, NewsSite):
        return NewsSite(indptr=new_indptr, indices=new_indices, section=graph.section, n_sections=graph.n_sections,
                        home=graph.home, repaired_links=graph.repaired_links,
                        dropped_links=graph.dropped_links,
                        params={**graph.params, "rewired": {"n_swaps": n_swaps, "seed": seed}})
    return new_indptr, new_indices


# ---------------------------------------------------------------------------------------------------
# statistics


def fit_power_law(degrees, kmin: int = 1, kmax: int | None = None) -> float:
    """Maximum-likelihood exponent γ of a discrete power law ``P(k) ∝ k^-γ`` on ``[kmin, kmax]``.

    Uses the degrees ``>= kmin`` (and ``<= kmax``, default the largest observed), with the
    normalisation summed over the truncated support, so exponents below 2 (or 1) are estimated
    without the bias of the untruncated formula.
    """
    from scipy.optimize import minimize_scalar

    d = np.asarray(degrees, dtype=np.int64)
    kmin = check_int("kmin", kmin, 1)
    d = d[d >= kmin]
    if d.size < 2:
        raise ValueError(f"fit_power_law: fewer than 2 degrees >= kmin={kmin}")
    kmax = int(d.max()) if kmax is None else check_int("kmax", kmax, kmin)
    d = d[d <= kmax]
    logk = np.log(np.arange(kmin, kmax + 1, dtype=np.float64))
    s = float(np.log(d).sum())
    m = d.size

    def nll(g: float) -> float:
        a = -g * logk
        mx = a.max()
        return g * s + m * (mx + math.log(np.exp(a - mx).sum()))

    return float(minimize_scalar(nll, bounds=(0.01, 10.0), method="bounded", options={"xatol": 1e-6}).x)


def loglog_slope(degrees, kmin: int = 1, log_bins: bool = False) -> float:
    """−slope of a least-squares line through ``log P(k)`` vs ``log k`` (k >= kmin with P(k) > 0) —
    the kind of fit of Palotai et al.'s Fig. 1. ``log_bins=True`` uses logarithmic bins (density per
    unit k), which removes the flattening of the raw histogram's sparse tail."""
    d = np.asarray(degrees, dtype=np.int64)
    d = d[d >= kmin]
    if d.size < 2:
        raise ValueError(f"loglog_slope: fewer than 2 degrees >= kmin={kmin}")
    if log_bins:
        edges = np.unique(np.floor(np.logspace(np.log10(kmin), np.log10(d.max() + 1), 25)).astype(np.int64))
        cnt, _ = np.histogram(d, bins=edges)
        width = np.diff(edges)
        x = np.sqrt(edges[:-1] * np.maximum(edges[1:] - 1, edges[:-1]))
        y = cnt / width / d.size
    else:
        cnt = np.bincount(d)
        x = np.arange(cnt.size, dtype=np.float64)
        y = cnt / d.size
    ok = (y > 0) & (x >= kmin)
    if ok.sum() < 2:
        raise ValueError("loglog_slope: fewer than 2 non-empty degree bins")
    slope = np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0]
    return float(-slope)


@njit(cache=True, nogil=True)
def _undirected(n, indptr, indices):
    """Simple undirected CSR (sorted rows) of a directed CSR graph."""
    m = indices.shape[0]
    src = np.empty(2 * m, np.int64)
    dst = np.empty(2 * m, np.int64)
    k = 0
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            src[k] = v
            dst[k] = u
            src[k + 1] = u
            dst[k + 1] = v
            k += 2
    return _csr_from_edges(n, src, dst)


@njit(cache=True, nogil=True)
def _local_clustering(n, uptr, uidx, nodes):
    mark = np.zeros(n, np.bool_)
    out = np.zeros(nodes.shape[0], np.float64)
    for t in range(nodes.shape[0]):
        v = nodes[t]
        deg = uptr[v + 1] - uptr[v]
        if deg < 2:
            continue
        for e in range(uptr[v], uptr[v + 1]):
            mark[uidx[e]] = True
        tri = 0
        for e in range(uptr[v], uptr[v + 1]):
            u = uidx[e]
            for f in range(uptr[u], uptr[u + 1]):
                if mark[uidx[f]]:
                    tri += 1
        for e in range(uptr[v], uptr[v + 1]):
            mark[uidx[e]] = False
        out[t] = tri / (deg * (deg - 1.0))  # each triangle counted twice over ordered pairs
    return out


@njit(cache=True, nogil=True)
def _bfs_paths(n, indptr, indices, sources):
    """Sum and count of shortest-path lengths from each source to the nodes it reaches (not itself),
    and the largest distance seen."""
    dist = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    total = 0.0
    count = 0
    ecc = 0
    for s in sources:
        dist[s] = 0
        queue[0] = s
        head, tail = 0, 1
        while head < tail:
            v = queue[head]
            head += 1
            dv = dist[v]
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if dist[u] < 0:
                    dist[u] = dv + 1
                    queue[tail] = u
                    tail += 1
                    total += dv + 1
                    count += 1
                    ecc = max(ecc, dv + 1)
        for i in range(tail):
            dist[queue[i]] = -1
    return total, count, ecc


def graph_statistics(graph, *, n_sources: int | None = 500, n_clustering: int | None = None, seed: int = 0) -> dict:
    """Palotai et al.'s statistics of a link graph, each measured as said here.

    * ``gamma_out`` / ``gamma_in``: truncated discrete maximum-likelihood exponents
      (:func:`fit_power_law`) of the out-degrees >= 1 (pages with links) and in-degrees >= the
      smallest positive in-degree; ``gamma_out_loglog`` / ``gamma_in_loglog``: least-squares slopes
      of the raw log-log histograms (:func:`loglog_slope`, like Palotai's Fig. 1), and
      ``*_loglog_binned`` with logarithmic bins.
    * ``clustering``: Watts–Strogatz average local clustering coefficient of the undirected simple
      graph, over all pages (pages with < 2 neighbours count 0, networkx's convention), from
      ``n_clustering`` sampled pages (None: all pages); ``clustering_deg2``: the average over pages
      with >= 2 neighbours only.
    * ``mean_path``: the mean *directed* shortest-path length over ordered reachable pairs (Palotai's
      non-integer "diameter"), estimated by BFS from ``n_sources`` pages sampled uniformly among the
      pages with out-links (pages without links start no path, so this is the all-pairs mean with
      less variance; None: every such page, exact); ``reach``: the mean fraction of the other pages a
      page with out-links reaches;
      ``max_distance_seen``: the largest distance found (a lower bound of the true diameter);
      ``mean_path_undirected``: the same on the undirected graph (sources sampled among all pages).
    """
    indptr, indices = _graph_arrays(graph)
    n = indptr.shape[0] - 1
    seed = check_int("seed", seed, 0)
    if n_sources is not None:
        n_sources = check_int("n_sources", n_sources, 1)
    if n_clustering is not None:
        n_clustering = check_int("n_clustering", n_clustering, 1)
    rng = np.random.default_rng(seed)
    dout = np.diff(indptr)
    din = np.bincount(indices, minlength=n)
    kin_min = int(din[din > 0].min()) if np.any(din > 0) else 1
    stats: dict = {"n_pages": int(n), "n_links": int(indices.size),
                   "leaf_fraction": float(np.mean(dout == 0)), "mean_out_degree_nonleaf":
                   float(dout[dout > 0].mean()) if np.any(dout > 0) else 0.0}
    stats["gamma_out"] = fit_power_law(dout, 1)
    stats["gamma_in"] = fit_power_law(din, kin_min)
    stats["gamma_out_loglog"] = loglog_slope(dout, 1)
    stats["gamma_in_loglog"] = loglog_slope(din, kin_min)
    stats["gamma_out_loglog_binned"] = loglog_slope(dout, 1, log_bins=True)
    stats["gamma_in_loglog_binned"] = loglog_slope(din, kin_min, log_bins=True)
    uptr, uidx = _undirected(n, indptr, indices)
    nodes = (np.arange(n, dtype=np.int64) if n_clustering is None or n_clustering >= n
             else np.sort(rng.choice(n, n_clustering, replace=False)).astype(np.int64))
    cl = _local_clustering(n, uptr, uidx, nodes)
    udeg = np.diff(uptr)[nodes]
    stats["clustering"] = float(cl.mean())
    stats["clustering_deg2"] = float(cl[udeg >= 2].mean()) if np.any(udeg >= 2) else 0.0
    stats["clustering_nodes"] = int(nodes.size)
    linking = np.flatnonzero(dout > 0).astype(np.int64)  # pages without links start no path
    srcs = (linking if n_sources is None or n_sources >= linking.size
            else np.sort(rng.choice(linking, n_sources, replace=False)).astype(np.int64))
    total, count, ecc = _bfs_paths(n, indptr, indices, srcs)
    stats["mean_path"] = float(total / count) if count else float("nan")
    stats["reach"] = float(count / (max(1, srcs.size) * max(1, n - 1)))
    stats["max_distance_seen"] = int(ecc)
    usrcs = (np.arange(n, dtype=np.int64) if n_sources is None or n_sources >= n
             else np.sort(rng.choice(n, n_sources, replace=False)).astype(np.int64))
    utotal, ucount, _ = _bfs_paths(n, uptr, uidx, usrcs)
    stats["mean_path_undirected"] = float(utotal / ucount) if ucount else float("nan")
    stats["path_sources"] = int(srcs.size)
    stats["method"] = ("gamma: truncated discrete MLE (loglog: LS on log-log histogram); clustering: "
                       "Watts-Strogatz average local, undirected, degree<2 counts 0; mean_path: mean directed "
                       "shortest path over reachable ordered pairs from sampled sources")
    return stats


def _main(argv: list[str] | None = None) -> int:
    """``python -m gym_crawl.webgen.news_site``: the statistics of generated graphs and their rewired
    controls (mean ± sd over seeds) next to Palotai's, as a table (and JSON with ``--json``)."""
    import argparse
    import json
    import time

    ap = argparse.ArgumentParser(prog="python -m gym_crawl.webgen.news_site", description=_main.__doc__)
    ap.add_argument("--n-pages", type=int, nargs="+", default=[20_000])
    ap.add_argument("--seeds", type=int, default=3, help="graphs per size (seeds 0..S-1)")
    ap.add_argument("--n-sources", type=int, default=500, help="BFS sources for the mean path (0: all, exact)")
    ap.add_argument("--json", default=None, help="write the raw statistics to this file")
    args = ap.parse_args(argv)
    keys = ["gamma_out", "gamma_in", "gamma_out_loglog", "gamma_in_loglog", "clustering", "mean_path", "reach"]
    out: dict = {"palotai": PALOTAI_TARGETS, "runs": []}
    print("pages    graph    " + "  ".join(f"{k:>16}" for k in keys) + "   seconds")
    for n in args.n_pages:
        rows: dict[str, list[dict]] = {"original": [], "rewired": []}
        t0 = time.process_time()
        for seed in range(args.seeds):
            g = generate_news_site(n, seed=seed)
            r = rewire_degree_preserving(g, seed=seed + 1000)
            for name, graph in (("original", g), ("rewired", r)):
                st = graph_statistics(graph, n_sources=args.n_sources or None, seed=seed)
                rows[name].append(st)
                out["runs"].append({"n_pages": n, "seed": seed, "graph": name, **st})
        cpu = (time.process_time() - t0) / max(1, args.seeds)
        for name, sts in rows.items():
            cells = []
            for k in keys:
                v = np.array([s[k] for s in sts], dtype=np.float64)
                cells.append(f"{v.mean():9.4f}±{v.std():.4f}")
            print(f"{n:<8} {name:<8} " + "  ".join(f"{c:>16}" for c in cells) + f"   {cpu:6.1f}")
    for name, pre in (("original", ""), ("rewired", "rewired_")):
        vals = {"gamma_out": PALOTAI_TARGETS["gamma_out"], "gamma_in": PALOTAI_TARGETS["gamma_in"],
                "clustering": PALOTAI_TARGETS[pre + "clustering"], "mean_path": PALOTAI_TARGETS[pre + "mean_path"]}
        print(f"{'Palotai':<8} {name:<8} " + "  ".join(f"{vals.get(k, ''):>16}" for k in keys))
    if args.json:
        import os
        import tempfile

        d = os.path.dirname(os.path.abspath(args.json))
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(out, f, indent=1, default=float)
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
