"""Freshness and age of a crawler's collection on a :class:`~gym_crawl.webgen.changing.ChangingWeb`,
and the efficiency ratios of Palotai et al.'s Table 1.

Freshness and age (Cho & Garcia-Molina, "Effective page refresh policies for web crawlers", 2003)
-------------------------------------------------------------------------------------------------
A local copy of page ``p`` fetched at time ``τ`` is *fresh* at ``t >= τ`` iff ``p`` has no
modification in ``(τ, t]``; its *age* at ``t`` is 0 if fresh, else ``t - m`` where ``m`` is the
first modification after ``τ`` (how long the copy has been out of date). The freshness (age) of a
collection is the mean over its pages, each represented by its latest copy.
:class:`CollectionFreshness` keeps one copy per page (``record(page, t_fetch)`` replaces the older
one) and answers

* ``freshness(t)`` / ``age(t)`` — the collection as of ``t`` (``t`` not before the latest record);
* ``mean_freshness(t0, t1)`` / ``mean_age(t0, t1)`` — exact time averages over ``[t0, t1]`` of the
  instantaneous values, the collection growing as records arrive (each record counts from its fetch
  time on; times when the collection is empty are left out of the average);
* ``windowed(t0, t1, window=3.0)`` — the same per window: Palotai's Fig. 3 plots freshness and age
  "in 3 hour time intervals".

``CollectionFreshness(web, retain=24.0)`` is a sliding collection: a copy leaves ``retain`` hours after
its fetch unless a newer copy of its page replaced it (the reinforcing agent's documents of the last
24 hours); the default ``retain=inf`` keeps every page once recorded.

For Palotai's Table 1 the collection is the *found relevant documents* (what the reinforcing agent
accepted): "freshness is the ratio of the number of current found relevant documents and the number
of all found relevant documents ... A stored document is current if its content is exactly the same
as the content of the corresponding URL in the environment". Their age reads "the time since the
last refresh of the page on the Web"; :meth:`CollectionFreshness.age` is Cho & Garcia-Molina's
definition (which they cite), :meth:`CollectionFreshness.age_since_last_change` the literal reading
(``t - last_modified(p, t)`` for stale copies).

Palotai et al.'s Table 1 ratios
-------------------------------
==========================  ===========================================================================
download efficiency         relevant / downloaded documents "in 3 hour time window throughout the
                            simulation"
sent efficiency             relevant / documents sent to the reinforcing agent, likewise
relative found URL          found URLs / downloaded documents "at the end of the simulation"
==========================  ===========================================================================

Their Table 2 reports one number per run, and it equals the ratio of the *totals* (RL: 2419 / 540636
= 0.0045 download efficiency, 2419 / 9747 = 0.248 sent efficiency, 31092 / 540636 = 0.058 relative
found URLs; WL: 3107 / 669673 = 0.0046, 3107 / 6345 = 0.49, 33116 / 669673 = 0.049), so the functions
below return the ratio of sums by default and the per-window ratios with ``per_window=True``
(Fig. 2's curves). Inputs are counts: scalars, or arrays with one count per window (e.g. from
:func:`window_counts`).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from gym_crawl.webgen.changing import ChangingWeb

__all__ = ["CollectionFreshness", "download_efficiency", "relative_found_urls", "sent_efficiency", "table1",
           "window_counts", "window_edges"]


@njit(cache=True, nogil=True)
def _integrate(ev_t, ev_size, ev_fresh, ev_stale, ev_msum, edges):
    """Per window [edges[w], edges[w+1]): ∫ fresh/size dt, ∫ age dt and the time with size > 0.

    Events (sorted by time) change the counters by the given deltas; between events the collection
    has ``size`` copies, ``fresh`` of them fresh, ``stale`` stale whose first modifications after
    their fetch sum to ``msum`` — so the mean age at t is (stale·t − msum)/size."""
    nw = edges.shape[0] - 1
    f_int = np.zeros(nw)
    a_int = np.zeros(nw)
    cov = np.zeros(nw)
    size = 0
    fresh = 0
    stale = 0
    msum = 0.0
    ne = ev_t.shape[0]
    i = 0
    # apply events at or before the first edge
    while i < ne and ev_t[i] <= edges[0]:
        size += ev_size[i]
        fresh += ev_fresh[i]
        stale += ev_stale[i]
        msum += ev_msum[i]
        i += 1
    t = edges[0]
    w = 0
    end = edges[nw]
    while t < end:
        nxt = ev_t[i] if i < ne else np.inf
        seg_end = min(nxt, end)
        # integrate [t, seg_end) across windows
        a = t
        while a < seg_end:
            while w < nw - 1 and edges[w + 1] <= a:
                w += 1
            b = min(seg_end, edges[w + 1])
            if size > 0 and b > a:
                f_int[w] += fresh / size * (b - a)
                a_int[w] += (stale * 0.5 * (b * b - a * a) - msum * (b - a)) / size
                cov[w] += b - a
            if b <= a:
                break
            a = b
        t = seg_end
        if i < ne and nxt <= end:
            # apply all events at this time
            tt = ev_t[i]
            while i < ne and ev_t[i] == tt:
                size += ev_size[i]
                fresh += ev_fresh[i]
                stale += ev_stale[i]
                msum += ev_msum[i]
                i += 1
    return f_int, a_int, cov


class CollectionFreshness:
    """Freshness and age (Cho & Garcia-Molina) of a collection of page copies on a changing web.

    ``record(page, t_fetch)`` stores the copy of ``page`` fetched at ``t_fetch`` (replacing an older
    copy of the same page; the page must exist then). Records may arrive in any global order, but a
    page's copies must come in time order. See the module docstring for every definition.

    ``retain`` (hours, default ``inf``: keep everything) makes a sliding collection: a copy leaves
    ``retain`` hours after its fetch unless a newer copy of the page replaced it before, i.e. the
    collection at ``t`` is the latest copies fetched in ``(t - retain, t]`` — e.g. ``retain=24`` for
    the reinforcing agent's set of documents it accepted within its 24-hour relevance window.
    """

    def __init__(self, web: ChangingWeb, retain: float = math.inf) -> None:
        if not isinstance(web, ChangingWeb):
            raise TypeError(f"web must be a ChangingWeb, got {type(web).__name__}")
        try:
            retain = float(retain)
        except (TypeError, ValueError):
            raise TypeError(f"retain must be a number of hours, got {retain!r}") from None
        if math.isnan(retain) or retain <= 0:
            raise ValueError(f"retain must be a positive number of hours (or inf), got {retain}")
        self.web = web
        self.retain = retain
        n = web.n_pages
        self._tau = np.full(n, np.nan)          # fetch time of the current copy
        self._m = np.full(n, np.nan)            # first modification after it (inf if none)
        self._in = np.zeros(n, np.bool_)
        self._members: list[int] = []
        self._log_p: list[int] = []
        self._log_t: list[float] = []
        self._log_m: list[float] = []
        self._latest = -math.inf

    # -- recording -------------------------------------------------------------------------------------

    def record(self, page, t_fetch) -> None:
        """Store the copy of ``page`` fetched at ``t_fetch`` (hours)."""
        p = self.web.check_page(page)
        t = self.web.check_time("t_fetch", t_fetch)
        if self.web.birth[p] > t:
            raise ValueError(f"page {p} is not born at t_fetch={t} (birth {self.web.birth[p]}): it cannot be fetched")
        if self._in[p] and t < self._tau[p]:
            raise ValueError(f"page {p}: t_fetch={t} is before its recorded copy at {self._tau[p]}")
        m = self.web.next_modification(p, t)
        if not self._in[p]:
            self._in[p] = True
            self._members.append(p)
        self._tau[p] = t
        self._m[p] = m
        self._log_p.append(p)
        self._log_t.append(t)
        self._log_m.append(m)
        self._latest = max(self._latest, t)

    def __len__(self) -> int:
        return len(self._members)

    @property
    def pages(self) -> np.ndarray:
        """int64 pages in the collection, in order of first record."""
        return np.asarray(self._members, dtype=np.int64)

    # -- instantaneous ----------------------------------------------------------------------------------

    def _check_now(self, t) -> float:
        t = self.web.check_time("t", t)
        if t < self._latest:
            raise ValueError(f"t={t} is before the latest record ({self._latest}); use mean_freshness/windowed "
                             "for past times")
        return t

    def live_pages(self, t) -> np.ndarray:
        """int64 pages in the collection at ``t`` (all recorded pages, or with ``retain``: those whose
        latest copy was fetched after ``t - retain``)."""
        t = self._check_now(t)
        pages = self.pages
        return pages if math.isinf(self.retain) else pages[self._tau[pages] > t - self.retain]

    def is_fresh(self, t) -> np.ndarray:
        """bool per page of :meth:`live_pages`: is its copy fresh at ``t``?"""
        return self._m[self.live_pages(t)] > float(t)

    def freshness(self, t) -> float:
        """Fraction of the collection's copies that are fresh at ``t`` (NaN for an empty collection)."""
        pages = self.live_pages(t)
        if not pages.size:
            return math.nan
        return float(np.mean(self._m[pages] > float(t)))

    def age(self, t) -> float:
        """Mean age in hours at ``t``: 0 for fresh copies, ``t - first modification after the fetch`` else."""
        pages = self.live_pages(t)
        if not pages.size:
            return math.nan
        t = float(t)
        m = self._m[pages]
        return float(np.mean(np.where(m > t, 0.0, t - m)))

    def age_since_last_change(self, t) -> float:
        """Mean of ``t - last_modified(p, t)`` over stale copies, 0 over fresh ones (the literal reading
        of Palotai's "time since the last refresh of the page on the Web")."""
        pages = self.live_pages(t)
        if not pages.size:
            return math.nan
        t = float(t)
        m = self._m[pages]
        lm = self.web.last_modified_at(pages, t)
        return float(np.mean(np.where(m > t, 0.0, t - lm)))

    # -- time averages ---------------------------------------------------------------------------------

    def _events(self):
        p = np.asarray(self._log_p, dtype=np.int64)
        tau = np.asarray(self._log_t, dtype=np.float64)
        m = np.asarray(self._log_m, dtype=np.float64)
        k = p.size
        # supersede time of each copy: the next record of the same page
        order = np.lexsort((tau, p))
        sup = np.full(k, np.inf)
        same = p[order][1:] == p[order][:-1]
        sup[order[:-1][same]] = tau[order][1:][same]
        expire = tau + self.retain
        expired = expire < sup                       # leaves the collection before a newer copy comes
        end = np.minimum(sup, expire)
        # a copy that replaces a live older copy of its page does not change the collection's size
        replaces = np.zeros(k, bool)
        replaces[order[1:][same]] = ~expired[order[:-1][same]]
        goes_stale = m < end
        has_end = np.isfinite(end)
        ns = int(goes_stale.sum())
        ev_t = np.concatenate([tau, m[goes_stale], end[has_end]])
        ev_size = np.concatenate([np.where(replaces, 0, 1), np.zeros(ns, np.int64),
                                  -expired[has_end].astype(np.int64)]).astype(np.int64)
        ev_fresh = np.concatenate([np.ones(k, np.int64), -np.ones(ns, np.int64),
                                   np.where(goes_stale, 0, -1)[has_end].astype(np.int64)])
        ev_stale = np.concatenate([np.zeros(k, np.int64), np.ones(ns, np.int64),
                                   np.where(goes_stale, -1, 0)[has_end].astype(np.int64)])
        ev_msum = np.concatenate([np.zeros(k), m[goes_stale], np.where(goes_stale, -m, 0.0)[has_end]])
        o = np.argsort(ev_t, kind="stable")
        return ev_t[o], ev_size[o], ev_fresh[o], ev_stale[o], ev_msum[o]

    def windowed(self, t0, t1, window: float = 3.0) -> dict:
        """Time-averaged freshness and age per window of ``window`` hours over ``[t0, t1]`` (the last
        window may be shorter): ``{"edges", "freshness", "age", "covered"}`` (``covered``: hours with a
        non-empty collection; freshness/age NaN where 0)."""
        edges = window_edges(t0, t1, window)
        return self._windowed(edges)

    def _windowed(self, edges: np.ndarray) -> dict:
        if edges[-1] > self.web.horizon:
            raise ValueError(f"t1={edges[-1]} is past the horizon ({self.web.horizon} h) of the web")
        if not self._log_p:
            nan = np.full(edges.size - 1, np.nan)
            return {"edges": edges, "freshness": nan, "age": nan.copy(), "covered": np.zeros(edges.size - 1)}
        f_int, a_int, cov = _integrate(*self._events(), edges)  # type: ignore[call-arg]  # numba dispatcher
        with np.errstate(invalid="ignore", divide="ignore"):
            fr = np.where(cov > 0, f_int / cov, np.nan)
            ag = np.where(cov > 0, a_int / cov, np.nan)
        return {"edges": edges, "freshness": fr, "age": ag, "covered": cov}

    def mean_freshness(self, t0, t1) -> float:
        """Time average of :meth:`freshness` over ``[t0, t1]`` (exact; empty-collection time left out)."""
        return float(self._windowed(window_edges(t0, t1, None))["freshness"][0])

    def mean_age(self, t0, t1) -> float:
        """Time average of :meth:`age` over ``[t0, t1]`` (exact; empty-collection time left out)."""
        return float(self._windowed(window_edges(t0, t1, None))["age"][0])


# ---------------------------------------------------------------------------------------------------
# windows and Table 1 ratios


def window_edges(t0, t1, window: float | None = 3.0) -> np.ndarray:
    """Edges ``t0, t0 + window, ..., t1`` (the last window may be shorter); ``window=None``: ``[t0, t1]``."""
    try:
        t0, t1 = float(t0), float(t1)
    except (TypeError, ValueError):
        raise TypeError(f"t0 and t1 must be numbers of hours, got {t0!r}, {t1!r}") from None
    if not (math.isfinite(t0) and math.isfinite(t1)) or t1 <= t0:
        raise ValueError(f"need finite t0 < t1, got t0={t0}, t1={t1}")
    if window is None:
        return np.array([t0, t1])
    window = float(window)
    if not math.isfinite(window) or window <= 0:
        raise ValueError(f"window must be a positive number of hours, got {window}")
    n = math.ceil((t1 - t0) / window - 1e-9)
    edges = t0 + window * np.arange(n + 1, dtype=np.float64)
    edges[-1] = t1
    return edges


def window_counts(times, t0, t1, window: float = 3.0) -> np.ndarray:
    """int64 number of event ``times`` in each window ``[t0 + i·window, t0 + (i+1)·window)`` of ``[t0, t1]``
    (the last window includes ``t1``)."""
    edges = window_edges(t0, t1, window)
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    if np.any(np.isnan(t)):
        raise ValueError("times must not contain NaN")
    idx = np.searchsorted(edges, t, side="right") - 1
    idx[t == edges[-1]] = edges.size - 2
    ok = (idx >= 0) & (idx < edges.size - 1)
    return np.bincount(idx[ok], minlength=edges.size - 1).astype(np.int64)


def _ratio(num, den, per_window: bool, names: tuple[str, str]):
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    if num.shape != den.shape:
        raise ValueError(f"{names[0]} and {names[1]} must have the same shape, got {num.shape} and {den.shape}")
    if np.any(num < 0) or np.any(den < 0):
        raise ValueError(f"{names[0]} and {names[1]} must be non-negative counts")
    if per_window:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    total = float(den.sum())
    return float(num.sum()) / total if total > 0 else math.nan


def download_efficiency(relevant, downloaded, *, per_window: bool = False):
    """Palotai's download efficiency: relevant / downloaded documents (ratio of totals, or per window)."""
    return _ratio(relevant, downloaded, per_window, ("relevant", "downloaded"))


def sent_efficiency(relevant, sent, *, per_window: bool = False):
    """Palotai's sent efficiency: relevant / documents sent to the reinforcing agent."""
    return _ratio(relevant, sent, per_window, ("relevant", "sent"))


def relative_found_urls(found_urls, downloaded) -> float:
    """Palotai's relative found URL: found URLs / downloaded documents at the end of the simulation."""
    return _ratio(np.sum(found_urls), np.sum(downloaded), False, ("found_urls", "downloaded"))


def table1(downloaded, sent, relevant, found_urls, *, freshness: float | None = None,
           age: float | None = None) -> dict:
    """All of Palotai's Table 1 rows from per-run counts (scalars or per-window arrays)."""
    out = {"downloaded": int(np.sum(downloaded)), "sent": int(np.sum(sent)), "relevant": int(np.sum(relevant)),
           "found_urls": int(np.sum(found_urls)),
           "download_efficiency": download_efficiency(relevant, downloaded),
           "sent_efficiency": sent_efficiency(relevant, sent),
           "relative_found_urls": relative_found_urls(found_urls, downloaded)}
    if freshness is not None:
        out["freshness"] = float(freshness)
    if age is not None:
        out["age_hours"] = float(age)
    return out
