"""How a crawl gets its pages: the :class:`PageSource` interface, and :class:`SimulatedFetches`, the source
of a static corpus crawled with several pages in flight.

A crawl *requests* a page and later *absorbs* it. On a static :class:`~gym_crawl.corpus.core.Corpus` the
page is already in the arrays, so a crawl with one page in flight needs no source at all: it fetches the page
it chose at once. A web discovered while it is crawled (:class:`gym_crawl.web.LiveWeb`) implements
:class:`PageSource` itself: :meth:`~PageSource.request` starts the fetch, and :meth:`~PageSource.arrived`
returns the pages whose content has been added to the web's arrays since the last call, in the order it was
added. The env calls these few methods without knowing what is behind them: it never does I/O itself.

A static corpus crawled with a window of several pages in flight (``WikiCrawlEnv(concurrency=W)``) gets a
:class:`SimulatedFetches`: a deterministic virtual clock with a per-host delay and a response latency
(:class:`FetchTiming`), so that the order in which pages complete — and so what the crawler knows when it
decides — is the one a polite deployed crawler would see, reproducibly.

An :class:`Arrivals` is what one :meth:`~PageSource.arrived` call returns: the pages that arrived (content in
the arrays, or a fetch error), and pages that must not be offered after all (a robots.txt that arrived and
disallows them, a URL pattern learned to fail). :meth:`~PageSource.held_domains` names the domains whose
pages may not be offered yet (a host whose robots.txt is still on its way).
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

__all__ = ["Arrivals", "FetchTiming", "NO_ARRIVALS", "PageSource", "SimulatedFetches", "check_timing"]


class Arrivals(NamedTuple):
    """What one :meth:`PageSource.arrived` call returns.

    :param pages: page ids whose fetch completed (their text and out-links are now in the corpus' arrays, or
        :meth:`PageSource.fetch_error` names why there are none), in completion order.
    :param refused: page ids that must no longer be offered (already discovered, not yet requested).
    """

    pages: tuple[int, ...]
    refused: tuple[int, ...] = ()


NO_ARRIVALS = Arrivals(())


@runtime_checkable
class PageSource(Protocol):
    """A web whose pages' content arrives some time after the crawl requests them (see the module docstring).

    The corpus-shaped arrays (``link_lo``, ``link_hi``, ``text_lo`` …) change only inside :meth:`arrived`, so
    everything a crawl reads between two calls is fixed; a source that records what each call returned can be
    replayed bit for bit.
    """

    def request(self, page: int) -> None:
        """Start fetching ``page`` (a discovered page not yet requested in this episode)."""

    def arrived(self, block: bool) -> Arrivals:
        """The pages that arrived since the last call; with ``block``, wait until at least one event (a page,
        a refusal or a host cleared) happened when :meth:`pending` is not 0."""

    def pending(self) -> int:
        """Requests (and robots.txt checks) not yet delivered by :meth:`arrived`."""

    def held_domains(self) -> np.ndarray:
        """bool by domain id: the domains whose pages may not be offered yet (read-only); it may be shorter than the
        web's domain list (the domains past its end are not held), e.g. empty for a source that never holds one."""

    def fetch_error(self, page: int) -> str:
        """Why ``page`` has no content (``""`` when it was fetched)."""

    def restart(self) -> None:
        """A new episode starts: requests still in flight are no longer waited for."""


@dataclass(frozen=True)
class FetchTiming:
    """The virtual clock of :class:`SimulatedFetches`.

    :param latency: seconds from a request's start to its response (> 0).
    :param delay: seconds a host waits after a response before its next request starts (>= 0; the polite
        per-host delay).
    """

    latency: float = 0.1
    delay: float = 1.0

    def __post_init__(self) -> None:
        for name, low, strict in (("latency", 0.0, True), ("delay", 0.0, False)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or \
                    (v <= low if strict else v < low):
                raise ValueError(f"FetchTiming.{name} must be a finite number {'>' if strict else '>='} {low} "
                                 f"seconds, got {v!r}")


def check_timing(timing: Any) -> FetchTiming | None:
    """``timing`` as a :class:`FetchTiming`: ``None``, a FetchTiming, or a dict of its fields."""
    if timing is None or isinstance(timing, FetchTiming):
        return timing
    if isinstance(timing, dict):
        unknown = sorted(set(timing) - {"latency", "delay"})
        if unknown:
            raise ValueError(f"timing: unknown field(s) {unknown}; expected 'latency' and/or 'delay' (seconds)")
        return FetchTiming(**timing)
    raise ValueError(f"timing must be None, a FetchTiming or a dict {{'latency': s, 'delay': s}}, got {timing!r}")


_NONE_HELD = np.zeros(0, bool)
_NONE_HELD.flags.writeable = False


class SimulatedFetches:
    """The :class:`PageSource` of a static corpus crawled with several pages in flight: every page is in the
    corpus already; what is simulated is *when* each request completes.

    A request of page ``p`` on host ``d = page_domain[p]`` starts at ``max(now, free[d])`` — hosts are fetched
    one request at a time, the next starting ``delay`` seconds after the previous response —, completes
    ``latency`` seconds later, and frees its host at ``completion + delay``. :meth:`arrived` returns the
    requests completed by the virtual time ``now``; with ``block`` it first advances ``now`` to the next
    completion. Ties complete in request order. Deciding costs no virtual time. Nothing depends on the wall
    clock, so a crawl is deterministic. The clock keeps a time only for the hosts the crawl requested a page of
    (its memory follows the crawl, not the web's domain list); it never holds a host.

    :param corpus: the static corpus (its ``page_domain`` gives each page's host).
    :param timing: the virtual clock's latency and per-host delay.
    """

    def __init__(self, corpus: Any, timing: FetchTiming | None = None):
        self.timing = timing or FetchTiming()
        self._domain = np.asarray(corpus.page_domain)
        #: when each host the crawl requested a page of is free again (a host never requested: -inf)
        self._free: dict[int, float] = {}
        self._heap: list[tuple[float, int, int]] = []
        self._seq = 0
        self.now = 0.0

    def request(self, page: int) -> None:
        d = int(self._domain[page])
        start = max(self.now, self._free.get(d, -math.inf))
        end = start + self.timing.latency
        self._free[d] = end + self.timing.delay
        heapq.heappush(self._heap, (end, self._seq, int(page)))
        self._seq += 1

    def arrived(self, block: bool) -> Arrivals:
        h = self._heap
        if block and h and h[0][0] > self.now:
            self.now = h[0][0]
        out = []
        while h and h[0][0] <= self.now:
            out.append(heapq.heappop(h)[2])
        return Arrivals(tuple(out)) if out else NO_ARRIVALS

    def pending(self) -> int:
        return len(self._heap)

    def held_domains(self) -> np.ndarray:
        return _NONE_HELD

    def fetch_error(self, page: int) -> str:
        return ""

    def restart(self) -> None:
        self._heap.clear()
        self._free.clear()
        self.now = 0.0
        self._seq = 0
