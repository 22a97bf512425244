"""How pages arrive in a :class:`~gym_crawl.web.live.LiveWeb`: requests, completions in order, robots.txt
holds, refusals, counters, and the record that lets a replay deliver the same arrivals.

:class:`ArrivalFeed` is the live web's side of :class:`~gym_crawl.corpus.page_source.PageSource`. A requested
page becomes a *job* of a backend — the threaded :class:`~gym_crawl.web.scheduler.FetchScheduler` over the
polite fetcher, or :class:`~gym_crawl.web.scheduler.SyncJobs` over a fetch function or an archive — unless its
result is known already (fetched in an earlier episode, or in the fetch cache of a resumed crawl).
:meth:`ArrivalFeed.arrived` drains what completed, on the caller's thread and in completion order: it writes
each fetch (every request/response, then its result) to the WARC, adds the page's text and links to the web
(:meth:`LiveWeb.materialize`), applies robots.txt files that arrived, learns URL shapes that fail, and returns
an :class:`~gym_crawl.corpus.page_source.Arrivals`.

**Robots.txt before offer.** The first URL of an origin (seed or link) starts a robots job; until it arrives
the origin's domain is *held* (:meth:`held_domains`): its discovered pages are not offered. When it arrives,
its rules (:class:`~gym_crawl.web.offer.RobotsRules`) refuse the held pages they disallow and decide every
later link of the origin at discovery. The other discovery rules are :class:`~gym_crawl.web.offer.OfferRules`'.

**The end of a crawl.** Pages still in flight when the web is closed (requested at the last steps, not yet
arrived) are not part of the crawl: the fetcher sends no new page request (``hold_pages``), so a page still
waiting for its host's turn is cancelled before it reaches the wire, and one already on the wire is waited for,
its fetch written to the WARC and kept in the fetch cache (a resumed crawl does not request it again). Both are
counted (``after_last_step:in_flight``, ``after_last_step:fetched``, ``after_last_step:cancelled``) and named in
an ``after_last_step`` metadata record, which the WARC compiler and a replay read to mark those pages.

**Replay.** Each ``arrived`` call that delivered something writes an ``arrivals`` metadata record (the call's
number and its events: ``["page", url]``, ``["robots", origin]``, in order), and closing the web an empty one
for the last call made; each robots.txt that arrived a ``robots`` record (its rules). A web rebuilt from the
WARC (:meth:`LiveWeb.from_warc`, or a resumed crawl) is *scripted*: call ``k`` delivers exactly the events
recorded for call ``k`` (pages from the fetch cache, rules from the records), whatever the wall clock does;
once the script is exhausted, a resumed crawl goes on over the network and a replay delivers what is left from
the archive, one job per blocking call. A WARC without ``arrivals`` records (one page in flight, recorded
before them) replays that way from the start.

Counters (``web.stats``): ``fetches`` (page fetches the fetcher ran), ``requests_wire`` (HTTP requests that
left on a connection, robots.txt included), ``robots_fetches``, ``cache_hits``, ``pages_fetched``,
``fetch_errors`` and ``error:<kind>``, ``refused:<reason>`` (discovered URLs not offered, and held pages
refused), ``robots:<reason>`` (origins by why their robots.txt rules are what they are:
:data:`~gym_crawl.web.fetcher.ROBOTS_REASONS`), and the capacity drops of the web.
"""
from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from gym_crawl.corpus.page_source import NO_ARRIVALS, Arrivals
from gym_crawl.web.offer import LEARNED_ERRORS, OfferRules, RobotsRules, failure_keys, not_html_reason, origin_of
from gym_crawl.web.policy import trap_reason, url_pattern
from gym_crawl.web.scheduler import FetchScheduler, Job

__all__ = ["AFTER_LAST_STEP_KIND", "ARRIVALS_KIND", "ROBOTS_KIND", "ArrivalFeed"]

ARRIVALS_KIND = "arrivals"
"""``kind`` of the WARC metadata record of one ``arrived`` call's events."""
ROBOTS_KIND = "robots"
"""``kind`` of the WARC metadata record of one origin's robots.txt rules as the crawl obeyed them."""
DRAIN_SLICE = 0.2
"""Seconds :meth:`ArrivalFeed.close` waits for the next fetch in flight before it looks again."""
AFTER_LAST_STEP_KIND = "after_last_step"
"""``kind`` of the WARC metadata record, written when the web is closed, of the pages still in flight then:
``{"in_flight": n, "fetched": [urls], "cancelled": [urls], "not_in_crawl": [urls]}`` — fetched after the crawl's
last step (their responses are in the WARC, not in the crawl), or cancelled before their request went out;
``not_in_crawl``: every URL of the file fetched after a last step and not landed since (a resumed crawl may land
an earlier run's), so the last such record of a file is the one a reader needs."""


class ArrivalFeed:
    """The arrivals of one live web (see the module docstring).

    :param web: the :class:`~gym_crawl.web.live.LiveWeb` (its ``url``, ``titles``, ``page_state``,
        ``materialize``, ``stats`` and ``max_domains`` are used).
    :param backend: a :class:`~gym_crawl.web.scheduler.FetchScheduler` or
        :class:`~gym_crawl.web.scheduler.SyncJobs`.
    :param rules: the offer rules.
    :param policy: the fetch policy whose URL trap guards and caps apply at discovery (``None``: none).
    :param recorder: the WARC recorder (``None``: nothing is recorded).
    :param robots: hold each origin until its robots.txt arrived.
    :param agent: the User-Agent robots.txt rules are matched against.
    """

    def __init__(self, web: Any, backend: Any, rules: OfferRules, policy: Any, recorder: Any, robots: bool,
                 agent: str):
        self.web = web
        self.backend = backend
        self.rules = rules
        self.policy = policy
        self.recorder = recorder
        self.robots_on = bool(robots)
        self.agent = agent
        self.stats: Counter[str] = web.stats
        #: fetch results by canonical URL (a resumed or replayed crawl's archive, pages fetched)
        self.cache: dict[str, Any] = {}
        self._requested: dict[int, None] = {}
        self._jobs_out: set[int] = set()
        self._stale: set[int] = set()
        self._ready: list[tuple[str, Any, Any]] = []
        self._robots_jobs: set[str] = set()
        self.rules_of: dict[str, RobotsRules] = {}
        self._robots_wait: dict[str, int] = {}
        D = int(web.max_domains)
        self._held = np.zeros(D, bool)
        self._held_n = np.zeros(D, np.int32)
        self._origin_pages: dict[str, list[int]] = {}
        self._shape_pages: dict[str, list[int]] = {}
        self._fails: Counter[str] = Counter()
        self._oks: Counter[str] = Counter()
        self._bad: set[str] = set()
        self._pattern_n: Counter[str] = Counter()
        self._pattern_pages: dict[str, list[int]] = {}
        self._host_n: Counter[str] = Counter()
        #: discovered URLs refused at discovery (url -> reason) and discovered pages refused later (id -> reason)
        self.refused_urls: dict[str, str] = {}
        self.refused_pages: dict[int, str] = {}
        self._resend = False
        self._script: dict[int, list[list[str]]] | None = None
        self._script_end = 0
        self._robots_records: dict[str, RobotsRules] = {}
        #: arrivals records of a resumed crawl that only delivered recorded robots.txt rules, held back until it
        #: records something new (a resumed crawl that ends as it did adds nothing to its WARC)
        self._held_records: list[dict[str, Any]] = []
        self._live_due = False
        self._live_written = False
        self.calls = 0
        self._last_shape: tuple[str, str, tuple[str, ...], str | None] = ("", "", (), None)

    # ------------------------------------------------------------------ replay
    def load_script(self, calls: dict[int, list[list[str]]], robots: dict[str, RobotsRules]) -> None:
        """Deliver the recorded events of ``calls`` (call number -> events) before anything else, with the
        recorded robots.txt ``robots`` (origin -> rules)."""
        self._script = dict(calls)
        self._script_end = max(calls) + 1 if calls else 0
        self._robots_records = dict(robots)

    @property
    def scripted(self) -> bool:
        """Whether the next :meth:`arrived` call is delivered from the recorded script."""
        return self._script is not None and self.calls < self._script_end

    def robots_record(self, url: str) -> tuple[str, str | None, list[Any], str]:
        """The recorded robots.txt rules of ``url``'s origin, shaped as ``PoliteFetcher.robots`` returns them
        (an origin the archive does not hold: allow all)."""
        r = self._robots_records.get(origin_of(url))
        return ("allow", None, [], "ignored") if r is None else (r.kind, r.text, [], r.reason)

    # ------------------------------------------------------------------ discovery
    def refusal(self, url: str) -> str | None:
        """Why the newly discovered ``url`` is not offered (a reason of :mod:`gym_crawl.web.offer`), counted
        once per URL; ``None``: it is offered."""
        r = self.refused_urls.get(url)
        if r is not None:
            return r
        reason = self._judge(url)
        if reason is not None:
            self.refused_urls[url] = reason
            self.stats[f"refused:{reason}"] += 1
        return reason

    def _shape(self, url: str) -> tuple[str, str, tuple[str, ...], str | None]:
        """``(url, origin, failure keys, URL pattern)`` of ``url``, split once (discovery asks twice)."""
        if self._last_shape[0] != url:
            parts = urlsplit(url)
            keys = failure_keys(url, parts) if self.rules.learn_after else ()
            pattern = url_pattern(url) if self.rules.traps and self.policy is not None else None
            self._last_shape = (url, origin_of(url, parts), keys, pattern)
        return self._last_shape

    def _judge(self, url: str) -> str | None:
        R, pol = self.rules, self.policy
        if R.not_html and not_html_reason(url):
            return "not-html"
        _, origin, keys, pattern = self._shape(url)
        if self._bad and any(k in self._bad for k in keys):
            return "learned"
        if pattern is not None:
            t = trap_reason(pol, url)
            if t is not None:
                return t
            if pol.max_pages_per_pattern is not None and self._pattern_n[pattern] >= pol.max_pages_per_pattern:
                return "trap:pattern"
            if pol.max_pages_per_host is not None and self._host_n[origin] >= pol.max_pages_per_host:
                return "host-cap"
        if self.robots_on:
            rules = self.rules_of.get(origin)
            if rules is not None and not rules.allows(url):
                return "robots"
        return None

    def discovered(self, page: int, url: str, domain: int) -> None:
        """``page`` (URL ``url``, domain id ``domain``) got its id: count it, and start the robots job of a new
        origin."""
        _, origin, keys, pattern = self._shape(url)
        pages = self._origin_pages.get(origin)
        if pages is None:
            pages = self._origin_pages[origin] = []
            if self.robots_on and origin not in self.rules_of:
                self._robots_wait[origin] = domain
                self._held_n[domain] += 1
                self._held[domain] = True
                if not self.scripted:
                    self._submit_robots(origin)
        pages.append(page)
        for k in keys:
            self._shape_pages.setdefault(k, []).append(page)
        if pattern is not None:
            self._pattern_n[pattern] += 1
            self._pattern_pages.setdefault(pattern, []).append(page)
            self._host_n[origin] += 1

    def _submit_robots(self, origin: str) -> None:
        if origin not in self._robots_jobs:
            self._robots_jobs.add(origin)
            recorded = None if self.scripted else self._robots_records.get(origin)
            if recorded is not None:  # read by the crawl this one resumes (after its last arrival): not asked again
                self._ready.append(("robots-recorded", origin, recorded))
            else:
                self.backend.submit(Job("robots", origin + "/robots.txt", origin))

    # ------------------------------------------------------------------ the page source
    def request(self, page: int) -> None:
        p = int(page)
        if p in self._requested:
            raise ValueError(f"page {p} was requested already and has not arrived")
        if self.web.page_state[p] == 0 and p in self.refused_pages:
            raise ValueError(f"page {p} ({self.web.url(p)}) was refused ({self.refused_pages[p]}) and is not offered")
        self._requested[p] = None
        if self.web.page_state[p] != 0:  # fetched in an earlier episode: its content is in the arrays
            self._ready.append(("page", p, None))
            return
        if self.scripted:
            return
        self._start(p)

    def _start(self, p: int) -> None:
        url = self.web.url(p)
        res = self.cache.get(url)
        if res is not None:
            self.stats["cache_hits"] += 1
            self._ready.append(("page", p, res))
        elif p in self._stale:  # its job from an earlier episode is still running: it is delivered when done
            self._stale.discard(p)
        else:
            self._jobs_out.add(p)
            self.backend.submit(Job("page", url, p))

    def _go_live(self) -> None:
        """The script is exhausted: what was requested and never delivered goes to the backend."""
        for p in list(self._requested):
            if self.web.page_state[p] != 0:
                self._ready.append(("page", p, None))
            elif p not in self._jobs_out:
                self._start(p)
        for origin in list(self._robots_wait):
            self._submit_robots(origin)

    def arrived(self, block: bool) -> Arrivals:
        if self._live_due:
            self._live_due = False
            self._go_live()
        k = self.calls
        self.calls += 1
        items: list[tuple[str, Any, Any]] = []
        scripted = self._script is not None and k < self._script_end
        if scripted:
            assert self._script is not None
            for kind, key in self._script.get(k, []):
                if kind == "page":
                    p = self.web.titles.get(key)
                    if p < 0 or p not in self._requested:
                        raise ValueError(f"the recorded crawl delivered {key!r} at call {k}, which this crawl has "
                                         f"not requested: the replay diverged (another agent, seed or text model?)")
                    items.append(("page", p, self.cache.get(key)))
                else:
                    items.append(("robots", key, self._robots_records.get(key) or RobotsRules("allow", None,
                                                                                               self.agent)))
        else:
            items, self._ready = self._ready, []
            for job, res in self.backend.completed(block and not items):
                if job.kind == "page":
                    self._jobs_out.discard(job.tag)
                    self._record_fetch(res)
                    if job.tag in self._requested:
                        items.append(("page", job.tag, res))
                    elif getattr(res, "error", None) != "cancelled":  # requested in an episode that ended: kept
                        self.cache.setdefault(self.web.url(job.tag), res)
                else:
                    kind_, text, exchanges, reason = res
                    self._record_exchanges(exchanges, robots=True)
                    items.append(("robots", job.tag, RobotsRules(kind_, text, self.agent, reason)))
        pages: list[int] = []
        refused: list[int] = []
        events: list[list[str]] = []
        for kind, tag, res in items:
            if kind == "page":
                p = tag
                del self._requested[p]
                url = self.web.url(p)
                if self.web.page_state[p] == 0:
                    if res is None:
                        raise ValueError(f"no fetch result for {url!r}: the archive does not hold what its "
                                         f"record of arrivals says")
                    if getattr(res, "error", None) != "cancelled":  # a cancelled fetch is fetched again on resume
                        self.cache.setdefault(url, res)
                    err = self.web.materialize(p, res)
                    self.web.after_last_step.discard(url)  # landed in this crawl
                    refused.extend(self._learn(url, err))
                    refused.extend(self._after_refusal(url, res, err))
                pages.append(p)
                if getattr(res, "error", None) != "cancelled":  # not recorded: a resume requests it again
                    events.append(["page", url])
            else:
                refused.extend(self._robots_arrived(tag, res, record=not scripted and kind == "robots"))
                events.append(["robots", tag])
        if scripted and self.calls == self._script_end:
            self._live_due = True  # at the next call: a resumed crawl that ends here (it had ended) fetches nothing
        if self._resend:
            self._resend = False
            refused.extend(p for p in self.refused_pages if self.web.page_state[p] == 0)
        if events and not scripted and self.recorder is not None:
            self._record_arrivals({"call": k, "events": events},
                                  only_recorded=all(kind == "robots-recorded" for kind, _, _ in items))
        if not pages and not refused:
            return NO_ARRIVALS
        return Arrivals(tuple(pages), tuple(refused))

    def _record_arrivals(self, record: dict[str, Any], only_recorded: bool) -> None:
        """Write one call's arrivals record — held back while a resumed crawl has only delivered robots.txt rules
        its file records already (written with its first new record: a crawl that ends as it did adds nothing)."""
        if only_recorded and not self._live_written:
            self._held_records.append(record)
            return
        for held in self._held_records:
            self.recorder.write_metadata(ARRIVALS_KIND, held)
        self._held_records.clear()
        self.recorder.write_metadata(ARRIVALS_KIND, record)
        self._live_written = True

    def pending(self) -> int:
        return len(self._requested) + len(self._robots_wait)

    def held_domains(self) -> np.ndarray:
        v = self._held.view()
        v.flags.writeable = False
        return v

    def restart(self) -> None:
        for p in self._requested:
            if p in self._jobs_out:
                self._stale.add(p)
        self._requested.clear()
        self._ready = [item for item in self._ready if item[0] != "page"]  # robots.txt rules still arrive
        self._resend = bool(self.refused_pages)

    # ------------------------------------------------------------------ what arrived
    def _robots_arrived(self, origin: str, rules: RobotsRules, record: bool) -> list[int]:
        self.rules_of[origin] = rules
        self.stats[f"robots:{rules.reason or rules.kind}"] += 1
        d = self._robots_wait.pop(origin, None)
        if d is not None:
            self._held_n[d] -= 1
            self._held[d] = self._held_n[d] > 0
        if record and self.recorder is not None:
            self.recorder.write_metadata(ROBOTS_KIND, {"origin": origin, **rules.to_dict()})
        out = []
        if rules.kind != "allow":
            web = self.web
            out = self._refuse_where([p for p in self._origin_pages.get(origin, ()) if not rules.allows(web.url(p))],
                                     "robots")
        return out

    def _refuse_where(self, pages: Any, reason: str) -> list[int]:
        """Refuse those of ``pages`` that are discovered, unfetched, unrequested and not refused yet."""
        out = []
        web = self.web
        for p in pages:
            if web.page_state[p] == 0 and p not in self._requested and p not in self.refused_pages:
                self.refused_pages[p] = reason
                self.stats[f"refused:{reason}"] += 1
                out.append(p)
        return out

    def _after_refusal(self, url: str, res: Any, error: str) -> list[int]:
        """A fetch the fetcher refused for a reason that holds for other URLs too refuses them: the rest of a
        URL pattern past its cap (``trap:pattern``), of a host past its cap (``host-cap``), the other URLs of a
        redirect loop (``redirect-loop``)."""
        if error == "trap:pattern":
            return self._refuse_where(self._pattern_pages.get(url_pattern(url), ()), error)
        if error == "host-cap":
            return self._refuse_where(self._origin_pages.get(origin_of(url), ()), error)
        if error == "redirect-loop":
            web = self.web
            hops = [web.titles.get(u) for u, _ in (getattr(res, "redirects", None) or ())]
            return self._refuse_where([p for p in hops if p >= 0], error)
        return []

    def _learn(self, url: str, error: str) -> list[int]:
        """Count the outcome of ``url`` against its shapes; refuse the unrequested pages of shapes that just
        went bad."""
        n = self.rules.learn_after
        if not n:
            return []
        keys = failure_keys(url)
        if not error:
            for key in keys:
                self._oks[key] += 1
            return []
        if error not in LEARNED_ERRORS:
            return []
        out = []
        for key in keys:
            self._fails[key] += 1
            if self._fails[key] >= n and not self._oks[key] and key not in self._bad:
                self._bad.add(key)
                self.stats["learned_shapes"] += 1
                out.extend(self._refuse_where(self._shape_pages.get(key, ()), "learned"))
        return out

    # ------------------------------------------------------------------ recording
    def _record_exchanges(self, exchanges: list[Any], robots: bool = False) -> None:
        sent = sum(1 for ex in exchanges if getattr(ex, "sent", True))
        self.stats["requests_wire"] += sent
        if robots and exchanges:
            self.stats["robots_fetches"] += 1
        if self.recorder is not None:
            for ex in exchanges:
                self.recorder.write_exchange(ex)
            if robots:
                self.recorder.flush()

    def _record_fetch(self, res: Any) -> None:
        self.stats["fetches"] += 1
        self._record_exchanges(list(getattr(res, "exchanges", ()) or ()))
        if self.recorder is not None and getattr(res, "error", None) != "cancelled":  # fetched again on resume
            self.recorder.write_result(res)

    def fetch_aside(self, url: str) -> Any:
        """Fetch the canonical ``url`` at once, outside the crawl's steps (a judge's example page): the cached
        result when the URL was fetched before (a resumed crawl's archive), else a fetch by the backend's own
        fetcher, recorded and counted as any page fetch (and in ``stats["aside_fetches"]``) and kept in the cache,
        so a step that later reaches the URL gets it without a second request. The page is not added to the web."""
        res = self.cache.get(url)
        if res is not None:
            return res
        res = self.backend.fetch_now(url)
        self.stats["aside_fetches"] += 1
        self._record_fetch(res)
        if getattr(res, "error", None) != "cancelled":
            self.cache.setdefault(url, res)
        return res

    def replay_all(self) -> int:
        """Deliver the whole script without a crawl (every recorded page materialised, every robots.txt
        applied, in the recorded order), then every other cached page; returns the pages materialised."""
        k = 0
        web = self.web
        for call in sorted(self._script or {}):
            for kind, key in (self._script or {})[call]:
                if kind == "page":
                    p = web.titles.get(key)
                    if p >= 0 and web.page_state[p] == 0 and key in self.cache:
                        self._learn(key, web.materialize(p, self.cache[key]))
                        k += 1
                else:
                    self._robots_arrived(key, self._robots_records.get(key) or RobotsRules("allow", None, self.agent),
                                         record=False)
        for url in list(self.cache):
            p = web.titles.get(url)
            if p >= 0 and web.page_state[p] == 0:
                web.materialize(p, self.cache[url])
                k += 1
        self.calls = self._script_end
        return k

    def close(self) -> None:
        """Record how many ``arrived`` calls the crawl made (an empty ``arrivals`` record for the last one, so a
        replay delivers nothing where the crawl got nothing, up to its end), wait for the jobs in flight (their
        fetches are written to the WARC as they complete, their pages kept in the fetch cache, not added to the
        web), stop the backend, and count and record the pages that were in flight (``after_last_step``)."""
        if self.recorder is not None and self.calls > self._script_end and (self._live_written or self._script is None):
            self.recorder.write_metadata(ARRIVALS_KIND, {"call": self.calls - 1, "events": []})
        in_flight = [self.web.url(p) for p in self._requested]
        fetched: list[str] = []
        # each fetch is written as it completes (not after the slowest): a crawl killed meanwhile keeps it
        while isinstance(self.backend, FetchScheduler) and self.backend.running:  # SyncJobs: nothing runs
            fetched += self._keep(self.backend.completed(True, timeout=DRAIN_SLICE))
        fetched += self._keep(self.backend.close(wait=True))
        self._account_after_last_step(in_flight, fetched)

    def _keep(self, done: list[tuple[Job, Any]]) -> list[str]:
        """Record fetches that completed after the crawl's last ``arrived`` call (kept in the fetch cache); returns
        the URLs of the pages fetched (not cancelled)."""
        fetched = []
        for job, res in done:
            if job.kind == "page":
                self._record_fetch(res)
                if getattr(res, "error", None) != "cancelled":  # a cancelled fetch is fetched again on resume
                    url = self.web.url(job.tag)
                    self.cache.setdefault(url, res)
                    fetched.append(url)
            else:  # its rules recorded too: a resumed crawl takes them from the file instead of asking again
                self._record_exchanges(res[2], robots=True)
                if self.recorder is not None and res[0] in ("allow", "disallow", "parse"):
                    rules = RobotsRules(res[0], res[1], self.agent, res[3])
                    self.recorder.write_metadata(ROBOTS_KIND, {"origin": job.tag, **rules.to_dict()})
        return fetched

    def _account_after_last_step(self, in_flight: list[str], drained: list[str]) -> None:
        """Count and record the pages in flight at the close (see "The end of a crawl" in the module docstring):
        fetched when a result is held for them (drained now, or already in the fetch cache: a page from an
        archive, a cache hit not yet delivered), else cancelled before their request went out."""
        done = set(drained)
        fetched = [u for u in in_flight if u in done or u in self.cache]
        fetched += [u for u in drained if u not in set(in_flight)]  # requested in an earlier episode
        got = set(fetched)
        cancelled = [u for u in in_flight if u not in got]
        self.stats["after_last_step:in_flight"] += len(in_flight)
        self.stats["after_last_step:fetched"] += len(fetched)
        self.stats["after_last_step:cancelled"] += len(cancelled)
        # every URL of the WARC fetched after a last step and never landed since (a resumed crawl's archive too)
        self.web.after_last_step.update(fetched)
        record = {"in_flight": len(in_flight), "fetched": fetched, "cancelled": cancelled,
                  "not_in_crawl": sorted(self.web.after_last_step)}
        if self.recorder is not None and (in_flight or fetched or self.web.after_last_step) \
                and record != self.web.recorded_after_last_step:  # a resumed crawl that ended as it did: nothing new
            self.recorder.write_metadata(AFTER_LAST_STEP_KIND, record)
