"""A web that changes over simulated time: page births and Poisson modifications on a static link graph.

:class:`ChangingWeb` is the environment of Palotai, Farkas & Lőrincz's forager fleet ("Selection in
scale-free small world"): a news site whose articles appear over time and whose pages are modified.
Time is in **hours** (float64). Everything is precomputed for ``[-history, horizon]``, so every query
is a binary search (``np.searchsorted``) in a per-page slice of one sorted array.

Semantics (a fixed API: :mod:`gym_crawl.envs.fleet` and :mod:`gym_crawl.crawl.freshness` rely on it)
------------------------------------------------------------------------------------------------------
* ``birth[p]`` — the time page ``p`` is published. Pages of the site before the simulation starts
  have ``birth <= 0`` (the index pages at ``-history``, archive articles spread over
  ``[-history, 0]``), new articles are born in ``(0, horizon]``.
  ``exists(p, t)`` ⇔ ``birth[p] <= t``.
* Links are static (``indptr``/``indices``: a CSR graph over *all* pages, including the not yet
  born), but a link is *visible* only once its target exists: ``out_links(p, t)`` returns the
  targets of ``p`` with ``birth <= t`` (and nothing if ``p`` itself does not exist at ``t``) — an
  index page lists a new article from the moment it is published.
* Modifications: page ``p`` is modified at the times ``mod_times[mod_ptr[p]:mod_ptr[p+1]]``
  (sorted, all ``> birth[p]`` and ``<= horizon``). ``version_at(p, t)`` is the number of
  modifications in ``(birth, t]``: 0 = as born, +1 per modification, **-1 if p is not born at t**.
  ``last_modified(p, t)`` is the latest modification ``<= t`` (``birth`` if none; NaN if not born).
  ``next_modification(p, after)`` is the first modification ``> after`` (``inf`` if none before the
  horizon). Query times past ``horizon`` are an error (nothing is simulated there).
  A *document* in Palotai's sense (their "page index") is a pair ``(page, version)``.
* ``is_new(p, t, window=24)`` ⇔ ``exists(p, t)`` and ``t - last_modified(p, t) <= window`` — Palotai's
  relevance window: a document "not older than 24 hours".
* ``page_state(p)`` — a fixed ``float32[state_dim]`` vector in ``[-1, 1]``: the stand-in for Palotai's
  classifier output ``state(A)`` (see below). It does not change with modifications (their stored
  state vectors did; a modification here changes the *version*, which is what the RA rewards).

The change process (:func:`make_changing_web`)
---------------------------------------------
Cho & Garcia-Molina's model: each page is modified by a Poisson process with its own rate ``λ_p``
(per hour), rates heavy-tailed (lognormal): *index pages* (out-degree ``>= index_out_degree``: the
front page, section pages, long link lists) have median rate ``index_rate`` (default 0.5/h, a change
every two hours; the busiest change every few minutes, capped at ``max_rate``), *articles* median
``article_rate`` (default 1/168 h, once a week; some never in the horizon). On top of that, every
article gets an *update burst* after its publication (stories are corrected and extended in their
first hours): an extra Poisson process with intensity ``update_burst / burst_hours · exp(-(t - birth) /
burst_hours)``, i.e. ``update_burst`` expected extra updates (default 1.0, 0 disables it; the
process stays Poisson, with a time-varying rate). Births: the index pages and a fraction
``initial_fraction`` of the articles exist before ``t = 0``; the other articles are published at
uniformly random times in ``(0, horizon]`` (a homogeneous Poisson publication process given their
number).

The classifier stand-in
-----------------------
Palotai's foragers see each page through a k = 50 dimensional PrTFIDF classifier: posteriors over
k text clusters plus a (k+1)-th "general text" class, tanh-mapped into [-1, 1], the (k+1)-th output
dismissed. Here each section of the site has a profile over the k + 1 classes (a Dirichlet draw,
concentration 0.3: a few clusters dominate); a page's mixture is its section's profile (weight 0.7)
plus a random other section's (0.3); its posterior is ``softmax(log(mixture + 1e-4) + state_noise ·
noise)`` with standard normal per-page noise, and its state is ``tanh(4 · (posterior - 1/(k+1)))``
over the first k classes. Like a real classifier's output, most components are near 0 (slightly
negative) and a few are large (median largest |component| ≈ 0.5, median squared norm ≈ 0.7 at the
defaults); pages of a section look alike (mean cosine ≈ 0.5 within a section, ≈ 0 across).

``make_changing_web(..., rewired=True)`` rewires the links degree-preservingly
(:func:`~gym_crawl.webgen.news_site.rewire_degree_preserving`) and keeps births, modifications and
states identical to ``rewired=False`` with the same seed (rates depend only on out-degrees, which
rewiring keeps), so the two webs differ only in who links to whom.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from gym_crawl.webgen.news_site import (
    NewsSite,
    check_float,
    check_int,
    generate_news_site,
    rewire_degree_preserving,
)

__all__ = ["ChangingWeb", "count_le", "make_changing_web"]


# ---------------------------------------------------------------------------------------------------
# compiled vectorized queries


@njit(cache=True, nogil=True)
def count_le(times, lo, hi, t):
    """Number of ``times[lo:hi]`` that are ``<= t`` (compiled binary search).

    :param times: ``(n,)`` float64, sorted ascending within ``[lo, hi)`` (a page's modification times in the
        CSR columns of :class:`ChangingWeb`).
    :param lo: first index of the slice.
    :param hi: one past its last index.
    :param t: the time, in the web's hours.
    """
    a, b = lo, hi
    while a < b:
        mid = (a + b) // 2
        if times[mid] <= t:
            a = mid + 1
        else:
            b = mid
    return a - lo


@njit(cache=True, nogil=True)
def _versions_at(mod_ptr, mod_times, birth, pages, t):
    out = np.empty(pages.shape[0], np.int64)
    for i in range(pages.shape[0]):
        p = pages[i]
        if birth[p] > t:
            out[i] = -1
        else:
            out[i] = count_le(mod_times, mod_ptr[p], mod_ptr[p + 1], t)
    return out


@njit(cache=True, nogil=True)
def _last_change(mod_ptr, mod_times, birth, p, t):
    """When page ``p`` (born by ``t``) last changed at or before ``t``: its last modification, else its birth."""
    c = count_le(mod_times, mod_ptr[p], mod_ptr[p + 1], t)
    return mod_times[mod_ptr[p] + c - 1] if c > 0 else birth[p]


@njit(cache=True, nogil=True)
def _last_modified_at(mod_ptr, mod_times, birth, pages, t):
    out = np.empty(pages.shape[0], np.float64)
    for i in range(pages.shape[0]):
        p = pages[i]
        if birth[p] > t:
            out[i] = np.nan
        else:
            out[i] = _last_change(mod_ptr, mod_times, birth, p, t)
    return out


@njit(cache=True, nogil=True)
def _next_modification_at(mod_ptr, mod_times, pages, after):
    out = np.empty(pages.shape[0], np.float64)
    for i in range(pages.shape[0]):
        p = pages[i]
        j = mod_ptr[p] + count_le(mod_times, mod_ptr[p], mod_ptr[p + 1], after[i])
        out[i] = mod_times[j] if j < mod_ptr[p + 1] else np.inf
    return out


@njit(cache=True, nogil=True)
def _is_new_many(mod_ptr, mod_times, birth, pages, t, window):
    out = np.zeros(pages.shape[0], np.bool_)
    for i in range(pages.shape[0]):
        p = pages[i]
        if birth[p] <= t:
            out[i] = t - _last_change(mod_ptr, mod_times, birth, p, t) <= window
    return out


@njit(cache=True, nogil=True)
def _n_modifications(mod_ptr, mod_times, pages, t0, t1):
    out = np.empty(pages.shape[0], np.int64)
    for i in range(pages.shape[0]):
        p = pages[i]
        out[i] = (count_le(mod_times, mod_ptr[p], mod_ptr[p + 1], t1)
                  - count_le(mod_times, mod_ptr[p], mod_ptr[p + 1], t0))
    return out


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


# ---------------------------------------------------------------------------------------------------


class ChangingWeb:
    """A link graph whose pages are born and modified over simulated time (hours). See the module
    docstring for the exact semantics of every query.

    Arrays (all read-only): ``indptr`` int64[n+1] / ``indices`` int32 (static CSR over all pages),
    ``birth`` float64[n], ``mod_ptr`` int64[n+1] / ``mod_times`` float64 (modification times, CSR,
    sorted per page), ``states`` float32[n, state_dim], ``rates`` float64[n] (the pages' base
    modification rates per hour, NaN when unknown), ``section`` int32[n] (-1 when unknown),
    ``is_index`` bool[n]; ``home`` is the front page (a natural seed), ``horizon`` the end of the
    precomputed time.
    """

    def __init__(self, indptr, indices, birth, mod_ptr, mod_times, states, horizon: float, *,
                 rates=None, section=None, is_index=None, home: int | None = None, history: float = 0.0,
                 params: dict | None = None) -> None:
        indptr = np.asarray(indptr)
        indices = np.asarray(indices)
        if indptr.ndim != 1 or indptr.shape[0] < 2:
            raise ValueError("indptr must be a 1-D array of length n_pages + 1 >= 2")
        n = indptr.shape[0] - 1
        if int(indptr[0]) != 0 or int(indptr[-1]) != indices.shape[0] or np.any(np.diff(indptr) < 0):
            raise ValueError("indptr must start at 0, be non-decreasing and end at len(indices)")
        if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= n):
            raise ValueError(f"indices must lie in [0, n_pages={n})")
        self.horizon = check_float("horizon", horizon, 0.0, 1e12, lo_open=True)
        self.history = check_float("history", history, 0.0, 1e12)
        birth = np.asarray(birth, dtype=np.float64)
        if birth.shape != (n,):
            raise ValueError(f"birth must have shape ({n},), got {birth.shape}")
        if not np.all(np.isfinite(birth)) or np.any(birth > self.horizon):
            raise ValueError(f"birth times must be finite and <= horizon={self.horizon}")
        mod_ptr = np.asarray(mod_ptr)
        mod_times = np.asarray(mod_times, dtype=np.float64)
        if mod_ptr.shape != (n + 1,) or int(mod_ptr[0]) != 0 or int(mod_ptr[-1]) != mod_times.shape[0] \
                or np.any(np.diff(mod_ptr) < 0):
            raise ValueError(f"mod_ptr must have shape ({n + 1},), start at 0, be non-decreasing and end at "
                             "len(mod_times)")
        if mod_times.size:
            owner = np.repeat(np.arange(n), np.diff(mod_ptr))
            if not np.all(np.isfinite(mod_times)) or np.any(mod_times > self.horizon):
                raise ValueError(f"mod_times must be finite and <= horizon={self.horizon}")
            if np.any(mod_times <= birth[owner]):
                bad = int(owner[np.argmax(mod_times <= birth[owner])])
                raise ValueError(f"mod_times of page {bad} must all be after its birth {birth[bad]}")
            same = owner[1:] == owner[:-1]
            if np.any(same & (np.diff(mod_times) <= 0)):
                raise ValueError("mod_times must be strictly increasing within each page")
        states = np.asarray(states, dtype=np.float32)
        if states.ndim != 2 or states.shape[0] != n or states.shape[1] < 1:
            raise ValueError(f"states must have shape ({n}, state_dim >= 1), got {states.shape}")
        if not np.all(np.isfinite(states)) or np.any(np.abs(states) > 1.0):
            raise ValueError("states must be finite and in [-1, 1]")
        self.n_pages = int(n)
        self.indptr = _readonly(indptr.astype(np.int64, copy=False))
        self.indices = _readonly(indices.astype(np.int32, copy=False))
        self.birth = _readonly(birth)
        self.mod_ptr = _readonly(mod_ptr.astype(np.int64, copy=False))
        self.mod_times = _readonly(mod_times)
        self.states = _readonly(states)
        self.state_dim = int(states.shape[1])
        self.rates = _readonly(np.full(n, np.nan) if rates is None else np.asarray(rates, np.float64))
        self.section = _readonly(np.full(n, -1, np.int32) if section is None else np.asarray(section, np.int32))
        self.is_index = _readonly(np.zeros(n, bool) if is_index is None else np.asarray(is_index, bool))
        for name in ("rates", "section", "is_index"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"{name} must have shape ({n},)")
        out_deg = np.diff(self.indptr)
        self.home = int(np.argmax(out_deg)) if home is None else check_int("home", home, 0, n - 1)
        self.params = dict(params or {})
        self._birth_order = _readonly(np.argsort(self.birth, kind="stable"))
        self._birth_sorted = _readonly(self.birth[self._birth_order])

    # -- construction from plain lists (tests, small hand-made webs) -------------------------------

    @classmethod
    def from_lists(cls, n_pages: int, links, birth, modifications, horizon: float, *, states=None,
                   state_dim: int = 2, **kw) -> ChangingWeb:
        """A web from Python lists: ``links`` = ``[(source, target), ...]``, ``birth`` = one time per
        page, ``modifications`` = one list of times per page. ``states`` defaults to zeros of
        ``state_dim`` columns."""
        n = check_int("n_pages", n_pages, 1)
        links = np.asarray(list(links), dtype=np.int64).reshape(-1, 2)
        if links.size and (links.min() < 0 or links.max() >= n):
            raise ValueError(f"links must name pages in [0, {n})")
        order = np.lexsort((links[:, 1], links[:, 0]))
        links = links[order]
        indptr = np.zeros(n + 1, np.int64)
        np.add.at(indptr, links[:, 0] + 1, 1)
        indptr = np.cumsum(indptr)
        if len(modifications) != n:
            raise ValueError(f"modifications must have one list per page ({n}), got {len(modifications)}")
        mods = [np.sort(np.asarray(m, dtype=np.float64)) for m in modifications]
        mod_ptr = np.concatenate([[0], np.cumsum([m.size for m in mods])]).astype(np.int64)
        mod_times = np.concatenate(mods) if mods else np.empty(0)
        if states is None:
            states = np.zeros((n, state_dim), np.float32)
        return cls(indptr, links[:, 1].astype(np.int32), birth, mod_ptr, mod_times, states, horizon, **kw)

    # -- checks -----------------------------------------------------------------------------------

    def check_page(self, page) -> int:
        """``page`` as an int page id of this web; ``TypeError`` / ``ValueError`` naming the value and the range
        ``[0, n_pages)`` otherwise."""
        try:
            p = int(page)
        except (TypeError, ValueError):
            raise TypeError(f"page must be an int, got {page!r}") from None
        if p != page or not 0 <= p < self.n_pages:
            raise ValueError(f"page must be an int in [0, {self.n_pages}), got {page!r}")
        return p

    def _pages(self, pages) -> np.ndarray:
        a = np.asarray(pages)
        if a.dtype.kind not in "iu":
            raise TypeError(f"pages must be an integer array, got dtype {a.dtype}")
        a = a.astype(np.int64, copy=False).reshape(-1)
        if a.size and (int(a.min()) < 0 or int(a.max()) >= self.n_pages):
            raise ValueError(f"pages must lie in [0, {self.n_pages})")
        return a

    @staticmethod
    def _time(name: str, t) -> float:
        try:
            v = float(t)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a number of hours, got {t!r}") from None
        if math.isnan(v):
            raise ValueError(f"{name} must not be NaN")
        return v

    def check_time(self, name: str, t) -> float:
        """``t`` as a query time in hours: a number (not NaN) <= the horizon (modifications after the horizon are
        not simulated); the error names the argument ``name``, the value and the horizon."""
        v = self._time(name, t)
        if v > self.horizon:
            raise ValueError(f"{name}={v} is past the horizon ({self.horizon} h) of this ChangingWeb; "
                             "make it with a larger horizon")
        return v

    # -- scalar queries (the fixed API) -------------------------------------------------------------

    def exists(self, page, t) -> bool:
        """Whether page ``page`` is published at time ``t`` (``birth <= t``)."""
        return bool(self.birth[self.check_page(page)] <= self.check_time("t", t))

    def out_links(self, page, t) -> np.ndarray:
        """int32 targets of ``page``'s links that exist at ``t`` (empty if ``page`` does not exist)."""
        p = self.check_page(page)
        t = self.check_time("t", t)
        if self.birth[p] > t:
            return np.empty(0, np.int32)
        row = self.indices[self.indptr[p]:self.indptr[p + 1]]
        return row[self.birth[row] <= t]

    def version_at(self, page, t) -> int:
        """Number of modifications in ``(birth, t]`` (0 = as born); -1 if the page is not born at ``t``."""
        p = self.check_page(page)
        t = self.check_time("t", t)
        if self.birth[p] > t:
            return -1
        lo, hi = self.mod_ptr[p], self.mod_ptr[p + 1]
        return int(np.searchsorted(self.mod_times[lo:hi], t, side="right"))

    def last_modified(self, page, t) -> float:
        """Time of the latest modification ``<= t`` (the birth time if none; NaN if not born at ``t``)."""
        p = self.check_page(page)
        t = self.check_time("t", t)
        if self.birth[p] > t:
            return math.nan
        lo, hi = self.mod_ptr[p], self.mod_ptr[p + 1]
        c = int(np.searchsorted(self.mod_times[lo:hi], t, side="right"))
        return float(self.mod_times[lo + c - 1]) if c else float(self.birth[p])

    def next_modification(self, page, after) -> float:
        """First modification time ``> after`` (``inf`` if none up to the horizon)."""
        p = self.check_page(page)
        after = self._time("after", after)
        lo, hi = self.mod_ptr[p], self.mod_ptr[p + 1]
        j = lo + int(np.searchsorted(self.mod_times[lo:hi], after, side="right"))
        return float(self.mod_times[j]) if j < hi else math.inf

    def page_state(self, page) -> np.ndarray:
        """The page's classifier output ``state(A)``: float32[state_dim] in [-1, 1] (read-only view)."""
        return self.states[self.check_page(page)]

    def is_new(self, page, t, window: float = 24.0) -> bool:
        """Whether the page exists at ``t`` and was born or last modified within ``window`` hours
        (``t - last_modified <= window``): Palotai's "not older than 24 hours"."""
        lm = self.last_modified(page, t)
        return bool(not math.isnan(lm) and float(t) - lm <= float(window))

    # -- vectorized twins -------------------------------------------------------------------------------

    def exists_many(self, pages, t) -> np.ndarray:
        """bool array: ``exists(p, t)`` for each of ``pages``."""
        return self.birth[self._pages(pages)] <= self.check_time("t", t)

    def versions_at(self, pages, t) -> np.ndarray:
        """int64 array: ``version_at(p, t)`` for each of ``pages`` (-1 where not born)."""
        return _versions_at(self.mod_ptr, self.mod_times, self.birth, self._pages(pages), self.check_time("t", t))

    def last_modified_at(self, pages, t) -> np.ndarray:
        """float64 array: ``last_modified(p, t)`` for each of ``pages`` (NaN where not born)."""
        return _last_modified_at(self.mod_ptr, self.mod_times, self.birth, self._pages(pages), self.check_time("t", t))

    def next_modification_at(self, pages, after) -> np.ndarray:
        """float64 array: ``next_modification(p, a)`` for each page (``after``: a number or one per page)."""
        pages = self._pages(pages)
        a = np.broadcast_to(np.asarray(after, dtype=np.float64), pages.shape)
        if np.any(np.isnan(a)):
            raise ValueError("after must not be NaN")
        return _next_modification_at(self.mod_ptr, self.mod_times, pages, np.ascontiguousarray(a))

    def is_new_many(self, pages, t, window: float = 24.0) -> np.ndarray:
        """bool array: ``is_new(p, t, window)`` for each of ``pages``."""
        return _is_new_many(self.mod_ptr, self.mod_times, self.birth, self._pages(pages), self.check_time("t", t),
                            float(window))

    def n_modifications(self, pages, t0, t1) -> np.ndarray:
        """int64 array: number of modifications of each page in ``(t0, t1]``."""
        return _n_modifications(self.mod_ptr, self.mod_times, self._pages(pages), self.check_time("t0", t0),
                                self.check_time("t1", t1))

    def born_between(self, t0, t1) -> np.ndarray:
        """int64 pages born in ``(t0, t1]``, in order of birth (new documents of that period)."""
        a = np.searchsorted(self._birth_sorted, self.check_time("t0", t0), side="right")
        b = np.searchsorted(self._birth_sorted, self.check_time("t1", t1), side="right")
        return self._birth_order[a:b]

    def __repr__(self) -> str:
        return (f"ChangingWeb(n_pages={self.n_pages}, links={self.indices.shape[0]}, horizon={self.horizon} h, "
                f"modifications={self.mod_times.shape[0]}, state_dim={self.state_dim})")


# ---------------------------------------------------------------------------------------------------
# the generator


def _section_states(rng: np.random.Generator, section: np.ndarray, n_sections: int, k: int,
                    noise: float) -> np.ndarray:
    n = section.shape[0]
    profiles = rng.dirichlet(np.full(k + 1, 0.3), size=n_sections)   # k clusters + "general text"
    other = rng.integers(0, n_sections, n)
    mix = 0.7 * profiles[section] + 0.3 * profiles[other]
    logits = np.log(mix + 1e-4) + noise * rng.standard_normal((n, k + 1))
    logits -= logits.max(axis=1, keepdims=True)
    post = np.exp(logits)
    post /= post.sum(axis=1, keepdims=True)                          # the classifier's posterior
    return np.tanh(4.0 * (post[:, :k] - 1.0 / (k + 1))).astype(np.float32)  # the (k+1)-th is dismissed


def _modification_times(rng: np.random.Generator, birth: np.ndarray, rates: np.ndarray, burst: np.ndarray,
                        burst_hours: float, horizon: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-page sorted modification times in (birth, horizon]: a homogeneous Poisson process of rate
    ``rates`` plus a decaying burst of intensity ``burst / burst_hours * exp(-(t - birth) / burst_hours)``."""
    n = birth.shape[0]
    span = horizon - birth
    n_base = rng.poisson(rates * span)
    frac = -np.expm1(-span / burst_hours)  # burst mass inside the horizon
    n_burst = rng.poisson(burst * frac)
    counts = n_base + n_burst
    owner_b = np.repeat(np.arange(n), n_base)
    owner_u = np.repeat(np.arange(n), n_burst)
    t_base = birth[owner_b] + span[owner_b] * (1.0 - rng.random(owner_b.size))   # (birth, horizon]
    u = rng.random(owner_u.size)
    t_burst = birth[owner_u] - burst_hours * np.log1p(-u * frac[owner_u])       # truncated exponential
    t_burst = np.minimum(t_burst, horizon)
    owner = np.concatenate([owner_b, owner_u])
    times = np.concatenate([t_base, t_burst])
    order = np.lexsort((times, owner))
    owner, times = owner[order], times[order]
    # strictly after birth and strictly increasing (ties have probability ~0; nudge them)
    times = np.maximum(times, np.nextafter(birth[owner], np.inf))
    for _ in range(3):
        dup = np.flatnonzero((owner[1:] == owner[:-1]) & (times[1:] <= times[:-1])) + 1
        if dup.size == 0:
            break
        times[dup] = np.nextafter(times[dup - 1], np.inf)
    keep = times <= horizon
    if not np.all(keep):
        owner, times = owner[keep], times[keep]
        counts = np.bincount(owner, minlength=n)
    mod_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=mod_ptr[1:])
    return mod_ptr, times


def make_changing_web(n_pages: int = 20_000, horizon: float = 18 * 24.0, seed: int = 0, rewired: bool = False, *,
                      state_dim: int = 50, history: float = 30 * 24.0, initial_fraction: float = 0.5,
                      index_out_degree: int = 30, index_rate: float = 0.5, article_rate: float = 1.0 / 168.0,
                      rate_sigma: float = 1.0, max_rate: float = 12.0, update_burst: float = 1.0,
                      burst_hours: float = 6.0, state_noise: float = 0.75, rewire_swaps: int | None = None,
                      **generator_kw) -> ChangingWeb:
    """A changing news site: :func:`~gym_crawl.webgen.news_site.generate_news_site` links (``generator_kw``
    go there), births, Poisson modifications and classifier states as described in the module docstring.

    ``horizon`` (hours, default 18 days: Palotai's crawl) is the end of simulated time; pages older
    than ``t = 0`` are spread over ``history`` hours before it. ``rewired=True`` applies
    :func:`~gym_crawl.webgen.news_site.rewire_degree_preserving` (``rewire_swaps`` passed as its
    ``n_swaps``) and keeps everything else identical. Deterministic under ``seed``.
    """
    n = check_int("n_pages", n_pages, 50)
    horizon = check_float("horizon", horizon, 0.0, 1e9, lo_open=True)
    seed = check_int("seed", seed, 0)
    if not isinstance(rewired, (bool, np.bool_)):
        raise TypeError(f"rewired must be a bool, got {rewired!r}")
    state_dim = check_int("state_dim", state_dim, 1, 100_000)
    history = check_float("history", history, 0.0, 1e9)
    initial_fraction = check_float("initial_fraction", initial_fraction, 0.0, 1.0)
    index_out_degree = check_int("index_out_degree", index_out_degree, 1)
    index_rate = check_float("index_rate", index_rate, 0.0, 1e6)
    article_rate = check_float("article_rate", article_rate, 0.0, 1e6)
    rate_sigma = check_float("rate_sigma", rate_sigma, 0.0, 10.0)
    max_rate = check_float("max_rate", max_rate, 0.0, 1e6, lo_open=True)
    update_burst = check_float("update_burst", update_burst, 0.0, 1e6)
    burst_hours = check_float("burst_hours", burst_hours, 0.0, 1e9, lo_open=True)
    state_noise = check_float("state_noise", state_noise, 0.0, 100.0)
    if "seed" in generator_kw:
        raise TypeError("pass seed to make_changing_web itself, not as a generator keyword")
    ss = np.random.SeedSequence(seed)
    s_graph, s_rewire, s_births, s_mods, s_states = (int(c.generate_state(1)[0]) for c in ss.spawn(5))
    site: NewsSite = generate_news_site(n, seed=s_graph, **generator_kw)
    if rewired:
        site = rewire_degree_preserving(site, n_swaps=rewire_swaps, seed=s_rewire)

    out_deg = np.diff(site.indptr)
    is_index = out_deg >= index_out_degree
    is_index[site.home] = True
    # births: index pages at -history, a fraction of the articles spread over [-history, 0], the rest in (0, T]
    rng_b = np.random.default_rng(s_births)
    birth = np.full(n, -history)
    articles = np.flatnonzero(~is_index)
    late = rng_b.random(articles.size) >= initial_fraction
    n_late = int(late.sum())
    birth[articles[~late]] = -history * rng_b.random(articles.size - n_late)
    birth[articles[late]] = horizon * (1.0 - rng_b.random(n_late))  # (0, horizon]
    # rates: lognormal around the kind's median, capped
    rng_m = np.random.default_rng(s_mods)
    med = np.where(is_index, index_rate, article_rate)
    rates = np.minimum(med * np.exp(rate_sigma * rng_m.standard_normal(n)), max_rate)
    burst = np.where(is_index, 0.0, update_burst)
    mod_ptr, mod_times = _modification_times(rng_m, birth, rates, burst, burst_hours, horizon)
    states = _section_states(np.random.default_rng(s_states), site.section, site.n_sections, state_dim,
                             state_noise)
    params = {"n_pages": n, "horizon": horizon, "seed": seed, "rewired": bool(rewired), "state_dim": state_dim,
              "history": history, "initial_fraction": initial_fraction, "index_out_degree": index_out_degree,
              "index_rate": index_rate, "article_rate": article_rate, "rate_sigma": rate_sigma, "max_rate": max_rate,
              "update_burst": update_burst, "burst_hours": burst_hours, "state_noise": state_noise,
              "rewire_swaps": rewire_swaps,
              "generator": site.params}
    return ChangingWeb(site.indptr, site.indices, birth, mod_ptr, mod_times, states, horizon, rates=rates,
                       section=site.section, is_index=is_index, home=site.home, history=history, params=params)
